//! A recorded program's file I/O, as data: the trace format
//! (docs/replay.md). A trace is a header (what was recorded: the command,
//! the system, the files with their sizes, what the backend could not see)
//! and a stream of [`Event`]s, one per system call or page fault, in the
//! order they were recorded. [`codec::TraceReader`] reads it as a stream
//! (an iterator over events, memory bounded whatever the file's size);
//! [`codec::TraceWriter`] writes one. [`iolog`] reads and writes fio's
//! iolog (v2 and v3); [`summary`] computes what `iopath trace show` says,
//! as numbers.
//!
//! Invariants: event timestamps are nanoseconds since the trace's start and
//! never decrease; an event's `file` is an index into the header's `files`;
//! a reader never panics and names the byte offset of what it could not
//! read.

pub mod codec;
pub mod filter;
pub mod iolog;
pub mod replay;
pub mod spool;
pub mod summary;

use serde::{Deserialize, Serialize};

/// The format's version, written after the magic bytes. A reader refuses
/// any other.
pub const VERSION: u16 = 1;

/// The first bytes of every trace.
pub const MAGIC: &[u8; 8] = b"IOPTRACE";

/// What an event did. The numbers are the format's op codes: never reuse
/// or renumber one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Op {
    Read = 1,
    Write = 2,
    Pread = 3,
    Pwrite = 4,
    Readv = 5,
    Writev = 6,
    Preadv = 7,
    Pwritev = 8,
    /// `flags`: the call's RWF_* flags.
    Preadv2 = 9,
    /// `flags`: the call's RWF_* flags.
    Pwritev2 = 10,
    /// An io_uring read submitted (`flags`: the io_uring opcode).
    UringRead = 11,
    /// An io_uring write submitted (`flags`: the io_uring opcode).
    UringWrite = 12,
    /// A libaio read submitted (`io_submit`).
    AioRead = 13,
    /// A libaio write submitted.
    AioWrite = 14,
    /// A page fault on a file-backed mapping that read (`flags` bit 0:
    /// major, the page was read from the device).
    FaultRead = 15,
    /// A page fault on a file-backed mapping that wrote.
    FaultWrite = 16,
    Fsync = 17,
    Fdatasync = 18,
    SyncFileRange = 19,
    /// `offset` and `len`: the range; `flags`: the mode.
    Fallocate = 20,
    /// `len`: the new size.
    Ftruncate = 21,
    /// `flags`: the open flags (O_DIRECT, O_SYNC ...); `result`: the fd.
    Open = 22,
    Close = 23,
    /// statx, stat, fstat.
    Stat = 24,
    Unlink = 25,
    /// `file`: the old name; `offset`: the new name's file id.
    Rename = 26,
    /// A file mapped: `offset`, `len` of the mapping; `flags`: its prot
    /// (low byte) and map flags (next bytes).
    Mmap = 27,
}

/// Every op, in code order.
pub const OPS: [Op; 27] = [
    Op::Read,
    Op::Write,
    Op::Pread,
    Op::Pwrite,
    Op::Readv,
    Op::Writev,
    Op::Preadv,
    Op::Pwritev,
    Op::Preadv2,
    Op::Pwritev2,
    Op::UringRead,
    Op::UringWrite,
    Op::AioRead,
    Op::AioWrite,
    Op::FaultRead,
    Op::FaultWrite,
    Op::Fsync,
    Op::Fdatasync,
    Op::SyncFileRange,
    Op::Fallocate,
    Op::Ftruncate,
    Op::Open,
    Op::Close,
    Op::Stat,
    Op::Unlink,
    Op::Rename,
    Op::Mmap,
];

/// The major-fault bit of a fault's `flags`.
pub const FAULT_MAJOR: u64 = 1;

impl Op {
    /// The op of a format code, if any.
    pub fn from_code(code: u8) -> Option<Op> {
        OPS.get(usize::from(code).checked_sub(1)?).copied()
    }

    /// Its code in the format.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Its name (the JSON spelling).
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Pread => "pread",
            Op::Pwrite => "pwrite",
            Op::Readv => "readv",
            Op::Writev => "writev",
            Op::Preadv => "preadv",
            Op::Pwritev => "pwritev",
            Op::Preadv2 => "preadv2",
            Op::Pwritev2 => "pwritev2",
            Op::UringRead => "uring_read",
            Op::UringWrite => "uring_write",
            Op::AioRead => "aio_read",
            Op::AioWrite => "aio_write",
            Op::FaultRead => "fault_read",
            Op::FaultWrite => "fault_write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
            Op::SyncFileRange => "sync_file_range",
            Op::Fallocate => "fallocate",
            Op::Ftruncate => "ftruncate",
            Op::Open => "open",
            Op::Close => "close",
            Op::Stat => "stat",
            Op::Unlink => "unlink",
            Op::Rename => "rename",
            Op::Mmap => "mmap",
        }
    }

    /// Moves data from the file into memory.
    pub fn reads(self) -> bool {
        matches!(
            self,
            Op::Read
                | Op::Pread
                | Op::Readv
                | Op::Preadv
                | Op::Preadv2
                | Op::UringRead
                | Op::AioRead
                | Op::FaultRead
        )
    }

    /// Moves data from memory into the file.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Op::Write
                | Op::Pwrite
                | Op::Writev
                | Op::Pwritev
                | Op::Pwritev2
                | Op::UringWrite
                | Op::AioWrite
                | Op::FaultWrite
        )
    }

    /// Makes written data durable.
    pub fn syncs(self) -> bool {
        matches!(self, Op::Fsync | Op::Fdatasync | Op::SyncFileRange)
    }
}

/// One recorded operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Event {
    /// When it started, in ns since the trace's start.
    pub ts_ns: u64,
    /// How long it took (0 where the backend cannot tell: faults,
    /// submissions).
    pub dur_ns: u64,
    /// The thread that did it (the kernel's thread id).
    pub tid: u32,
    pub op: Option<Op>,
    /// Index into [`Header::files`]; `None` for an op on no named file.
    pub file: Option<u32>,
    /// The file offset (for a read or write without one, the position the
    /// file had).
    pub offset: u64,
    /// Bytes asked for.
    pub len: u64,
    /// What the call returned: bytes, an fd, 0, or `-errno`.
    pub result: i64,
    /// Op-specific flags ([`Op`]'s docs).
    pub flags: u64,
}

impl Event {
    /// The event's op (events read from a trace always have one).
    pub fn op(&self) -> Op {
        self.op.unwrap_or(Op::Read)
    }

    /// The bytes it moved: the result of a read or write that succeeded,
    /// the length asked for a fault or a submission.
    pub fn moved_bytes(&self) -> u64 {
        let op = self.op();
        if !(op.reads() || op.writes()) {
            return 0;
        }
        match op {
            Op::FaultRead | Op::FaultWrite | Op::UringRead | Op::UringWrite => self.len,
            Op::AioRead | Op::AioWrite => self.len,
            _ => u64::try_from(self.result).unwrap_or(0),
        }
    }
}

/// What a file was when the recording ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    #[default]
    Regular,
    Directory,
    BlockDevice,
    CharDevice,
    /// A pipe, socket or other special file.
    Other,
    /// Gone by the end (unlinked, renamed away) or never created.
    Missing,
}

/// One file the trace names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FileEntry {
    /// Its path as the program named it (absolute where it could be
    /// resolved), or a stable hash under `--anonymize`.
    pub path: String,
    /// Its size: the larger of its size when the recording ended and the
    /// furthest byte an event reached.
    pub size_bytes: u64,
    pub kind: FileKind,
}

/// How the recording ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Ending {
    /// The command exited (with this status) or `--duration` ran out.
    #[default]
    Complete,
    /// The command exited with a failure status: the trace is what it did.
    CommandFailed { exit_code: i32 },
    /// The command was killed by a signal.
    CommandKilled { signal: i32 },
    /// The recording stopped before the command did (Ctrl-C, or the
    /// tracer failed): the trace ends early.
    EndedEarly { reason: String },
    /// Converted from another format (fio iolog).
    Imported,
}

/// What the backend could not see, stated in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlindSpot {
    /// Page faults on file-backed mappings (strace sees system calls only).
    MmapFaults,
    /// The reads and writes of io_uring (strace sees `io_uring_enter`, not
    /// the submissions).
    IoUringOps,
    /// libaio's submissions' offsets and lengths.
    AioOps,
    /// Writes to a page first read through a mapping (no tracepoint maps
    /// an address to a file without kprobes).
    FaultUpgrades,
    /// Page faults on files in tmpfs (shmem has no filemap tracepoint).
    TmpfsFaults,
    /// When each op happened (a fio iolog v2 has no timestamps).
    Timestamps,
}

/// The trace's header: everything but the events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Header {
    /// The command recorded, one argument per entry (`--pid`: its command
    /// line as /proc showed it).
    pub command: Vec<String>,
    /// Which backend recorded it: `ebpf`, `strace`, `fio-iolog`.
    pub backend: String,
    /// Wall-clock start, ns since the Unix epoch.
    pub started_unix_ns: u64,
    /// How long the recording ran, in ns.
    pub duration_ns: u64,
    /// The machine it was recorded on (iopath's system record, as JSON).
    #[serde(default)]
    pub system: serde_json::Value,
    pub files: Vec<FileEntry>,
    /// Events in the stream (checked by the reader at the end).
    pub events: u64,
    /// Events the kernel dropped (the tracer's buffers were full).
    pub lost_events: u64,
    /// Reads and writes on descriptors not opened by a path the recorder
    /// saw (pipes, sockets, inherited ones): counted, not recorded.
    #[serde(default)]
    pub unresolved_events: u64,
    pub blind_spots: Vec<BlindSpot>,
    pub ending: Ending,
    /// The paths are hashes (`--anonymize`).
    #[serde(default)]
    pub anonymized: bool,
}

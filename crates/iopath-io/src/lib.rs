//! Access methods behind one safe [`Engine`] trait.
//!
//! Every way iopath moves bytes between memory and storage lives here: buffered
//! and O_DIRECT `pread`/`pwrite`, `mmap`, io_uring (plain, buffered, SQPOLL,
//! IOPOLL), Linux native AIO and `null`. All of iopath's `unsafe` code is in this
//! crate, and every block carries a `// SAFETY:` comment.
//!
//! # Invariants of the [`Engine`] API
//! - An engine owns its I/O buffers: one *slot* of `block_size` bytes per unit of
//!   queue depth. Requests name a slot, never a pointer, so no caller can free or
//!   touch memory the kernel is still reading or writing.
//! - A slot is *in flight* from the [`Engine::submit`] that accepted it until the
//!   [`Completion`] for it has been handed out. [`Engine::buf_mut`] returns `None`
//!   for an in-flight slot; submitting an in-flight slot is an error.
//! - Dropping an engine with requests in flight waits for them (or cancels the
//!   ring) before its buffers are freed.
//! - `submit` returns how many requests it accepted. Synchronous engines
//!   complete them before returning (their completions are pushed to `done`);
//!   asynchronous engines queue them and report completions from `reap`.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod buf;
pub mod copy;
pub mod data;
pub mod engines;
pub mod hint;
pub mod loopdev;
pub mod neighbour;
pub mod numa;
pub mod probe;
pub mod sys;
pub mod verify;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

pub use buf::BufferBacking;
pub use hint::Hint;
pub use probe::{probe_method, probe_method_with, MethodStatus};

/// One access method: a way for a program to read and write a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// No I/O at all: measures iopath's own per-I/O cost.
    Null,
    /// `pread`/`pwrite` through the page cache.
    Buffered,
    /// `pread`/`pwrite` with `O_DIRECT` and aligned buffers.
    Direct,
    /// `memcpy` from/to a shared file mapping.
    Mmap,
    /// `memcpy` from/to a `MAP_SHARED_VALIDATE | MAP_SYNC` mapping (DAX
    /// only), made durable with CPU cache-line write-backs.
    MmapDax,
    /// io_uring with `O_DIRECT`, registered buffers and a registered file.
    Uring,
    /// io_uring through the page cache (no `O_DIRECT`).
    UringBuffered,
    /// io_uring with `O_DIRECT` and a kernel submission-queue polling thread.
    UringSqpoll,
    /// io_uring with `O_DIRECT`, submitting and reaping in batches: one
    /// `io_uring_enter` hands over every request the last wait freed and
    /// waits for a quarter of the queue depth (t/io_uring's `-s`/`-c`,
    /// fio's `iodepth_batch_submit`/`iodepth_batch_complete_min`).
    UringBatch,
    /// io_uring with `O_DIRECT` and polled completions (`IORING_SETUP_IOPOLL`).
    UringIopoll,
    /// Linux native AIO (`io_submit`/`io_getevents`) with `O_DIRECT`.
    Aio,
    /// `copy_file_range(2)`: copies only (the copy pattern).
    CopyFileRange,
    /// `sendfile(2)`: copies only (the copy pattern).
    Sendfile,
    /// An application-level page cache over `O_DIRECT`: a fixed memory
    /// budget of pages, CLOCK eviction, write-back of dirty pages
    /// ([`engines::ucache`]).
    Ucache,
    /// `memcpy` from/to an anonymous region whose page faults a
    /// userfaultfd thread fills with `O_DIRECT` reads, a bounded resident
    /// set, every resident page written back ([`engines::uffd`]).
    Uffd,
    /// As [`Method::Uffd`], with userfaultfd write-protection: only pages
    /// actually stored to are written back.
    UffdWp,
    /// `preadv2`/`pwritev2` with `RWF_DONTCACHE` (Linux 6.14+): buffered
    /// semantics, the pages dropped from the cache once done with.
    Dontcache,
    /// io_uring through the page cache with `RWF_DONTCACHE` on every read
    /// and write.
    UringDontcache,
    /// A pool of threads serving a queue with `pread`/`pwrite`, the way
    /// runtimes (tokio's blocking pool, libuv, Java's
    /// AsynchronousFileChannel) do file I/O ([`engines::threadpool`]).
    Threadpool,
    /// `tokio::fs::File` (seek, then read or write, each a blocking-pool
    /// task) on a tokio runtime; only in a build with the `tokio` cargo
    /// feature ([`Method::compiled_in`]).
    Tokio,
}

impl Method {
    /// Every method, in the order tables list them.
    pub const ALL: [Method; 20] = [
        Method::Buffered,
        Method::Dontcache,
        Method::Direct,
        Method::Mmap,
        Method::MmapDax,
        Method::Uring,
        Method::UringBatch,
        Method::UringBuffered,
        Method::UringDontcache,
        Method::UringSqpoll,
        Method::UringIopoll,
        Method::Aio,
        Method::Threadpool,
        Method::Tokio,
        Method::CopyFileRange,
        Method::Sendfile,
        Method::Ucache,
        Method::Uffd,
        Method::UffdWp,
        Method::Null,
    ];

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Method::Null => "null",
            Method::Buffered => "buffered",
            Method::Direct => "direct",
            Method::Mmap => "mmap",
            Method::MmapDax => "mmap-dax",
            Method::Uring => "uring",
            Method::UringBuffered => "uring-buffered",
            Method::UringSqpoll => "uring-sqpoll",
            Method::UringBatch => "uring-batch",
            Method::UringIopoll => "uring-iopoll",
            Method::Aio => "aio",
            Method::CopyFileRange => "copy-file-range",
            Method::Sendfile => "sendfile",
            Method::Ucache => "ucache",
            Method::Uffd => "uffd",
            Method::UffdWp => "uffd-wp",
            Method::Dontcache => "dontcache",
            Method::UringDontcache => "uring-dontcache",
            Method::Threadpool => "threadpool",
            Method::Tokio => "tokio",
        }
    }

    /// True for the methods that only copy a file (`copy-file-range`,
    /// `sendfile`): the kernel moves the data, there are no requests to
    /// issue.
    pub fn copy_only(self) -> bool {
        matches!(self, Method::CopyFileRange | Method::Sendfile)
    }

    /// Parse a method name as written by [`Method::name`].
    pub fn from_name(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == s)
    }

    /// True when requests bypass the page cache (`O_DIRECT`).
    pub fn is_direct(self) -> bool {
        matches!(
            self,
            Method::Direct
                | Method::Uring
                | Method::UringBatch
                | Method::UringSqpoll
                | Method::UringIopoll
                | Method::Aio
        )
    }

    /// True for the user-space caches (`ucache`, `uffd`, `uffd-wp`): a cache
    /// of their own, of `--ucache-size`, filled a page per miss with
    /// `O_DIRECT`, never the page cache.
    pub fn is_user_space_cache(self) -> bool {
        matches!(self, Method::Ucache | Method::Uffd | Method::UffdWp)
    }

    /// True when the method keeps several requests in flight from one thread.
    pub fn is_async(self) -> bool {
        matches!(
            self,
            Method::Uring
                | Method::UringBatch
                | Method::UringBuffered
                | Method::UringSqpoll
                | Method::UringIopoll
                | Method::Aio
                | Method::UringDontcache
                | Method::Threadpool
                | Method::Tokio
        )
    }

    /// False for a method this build leaves out: `tokio` without the
    /// `tokio` cargo feature. Such a method is still named, listed and
    /// read from results; opening it says how to build it in
    /// ([`Method::not_compiled_in`]).
    pub fn compiled_in(self) -> bool {
        self != Method::Tokio || cfg!(feature = "tokio")
    }

    /// Why a method is missing from this build and how to get it; `None`
    /// when it is built in.
    pub fn not_compiled_in(self) -> Option<String> {
        (!self.compiled_in()).then(|| {
            format!("built without the {self} feature: cargo build --release --features {self}")
        })
    }

    /// True when the method touches no file at all.
    pub fn is_null(self) -> bool {
        self == Method::Null
    }

    /// True when a run without `--methods` includes the method. `null` is a
    /// reference, `mmap-dax` works only on persistent memory, and the
    /// user-space caches are opt-in.
    pub fn in_default_run(self) -> bool {
        // The user-space caches (ucache, uffd) are opt-in: they answer a
        // question of their own (a bounded cache: --cache-limit, the hmmap
        // preset), and the default run must stay under a minute.
        !matches!(
            self,
            Method::Null
                | Method::MmapDax
                | Method::Ucache
                | Method::Uffd
                | Method::UffdWp
                // Opt-in: a runtime's figure and the io_uring variant of
                // dontcache answer questions of their own. (`threadpool`,
                // a pool of N threads of pread, is in: it is how programs
                // without io_uring keep N requests in flight.)
                | Method::UringDontcache
                | Method::Tokio
                // Opt-in: a submission strategy of uring, compared with it.
                | Method::UringBatch
        ) && !self.copy_only()
    }

    /// One sentence: what the method does.
    pub fn summary(self) -> &'static str {
        match self {
            Method::Null => "no I/O: the harness alone, to measure iopath's own cost per I/O",
            Method::Buffered => "pread/pwrite through the page cache (what most programs do)",
            Method::Direct => {
                "pread/pwrite with O_DIRECT: no page cache, aligned buffers, one request at a time"
            }
            Method::Mmap => "memcpy from/to a shared file mapping; page faults bring data in",
            Method::MmapDax => {
                "memcpy from/to a MAP_SYNC mapping on DAX; CPU cache flushes (clwb) instead of msync"
            }
            Method::Uring => {
                "io_uring + O_DIRECT, N requests in flight, registered buffers and file"
            }
            Method::UringBatch => {
                "as uring, submitting and reaping in batches: one io_uring_enter hands over the requests the last wait freed and waits for a quarter of N"
            }
            Method::UringBuffered => "io_uring through the page cache, N requests in flight",
            Method::UringSqpoll => {
                "io_uring + O_DIRECT with a kernel thread polling the submission queue"
            }
            Method::UringIopoll => {
                "io_uring + O_DIRECT with polled completions (needs device poll queues)"
            }
            Method::Aio => {
                "Linux native AIO (io_submit/io_getevents) + O_DIRECT, N requests in flight"
            }
            Method::CopyFileRange => {
                "copy pattern only: copy_file_range, the kernel copies (or shares extents) without a user buffer"
            }
            Method::Sendfile => {
                "copy pattern only: sendfile, an in-kernel splice from the source's page cache"
            }
            Method::Ucache => {
                "a user-space page cache over O_DIRECT: fixed budget, CLOCK eviction, dirty pages written back"
            }
            Method::Uffd => {
                "memcpy from/to a region whose page faults a userfaultfd thread fills with O_DIRECT reads; bounded resident pages, all written back"
            }
            Method::UffdWp => {
                "as uffd, with userfaultfd write-protect faults: only pages actually written are written back"
            }
            Method::Dontcache => {
                "preadv2/pwritev2 with RWF_DONTCACHE (Linux 6.14+): through the page cache, pages dropped once read or written back"
            }
            Method::UringDontcache => {
                "io_uring through the page cache with RWF_DONTCACHE on each request, N requests in flight"
            }
            Method::Threadpool => {
                "N threads (--pool-threads, default 4 as libuv) serving a queue with pread/pwrite: what tokio::fs, libuv and Java's async file channel do"
            }
            Method::Tokio => {
                "real tokio::fs::File (seek, then read or write_all+flush), N requests in flight as N tasks; each step is a task on tokio's blocking pool"
            }
        }
    }

    /// One sentence: when a program should use it.
    pub fn when_to_use(self) -> &'static str {
        match self {
            Method::Null => "compare against it to see how much of a result is the harness",
            Method::Buffered => "data reused soon, small working sets, or code you cannot change",
            Method::Direct => "large streaming I/O where the cache would only waste memory",
            Method::Mmap => "read-mostly data that fits in memory, random access with pointers",
            Method::MmapDax => {
                "persistent memory (a file system mounted -o dax): load/store access, no page cache"
            }
            Method::Uring => "fast SSDs/NVMe: deep queues with little CPU per I/O",
            Method::UringBatch => {
                "deep queues where CPU per I/O matters more than starting each request at once"
            }
            Method::UringBuffered => {
                "cached data with many outstanding requests, no alignment rules"
            }
            Method::UringSqpoll => "very high IOPS when a spare core can spin for submissions",
            Method::UringIopoll => "lowest latency on NVMe with poll queues (nvme.poll_queues=N)",
            Method::Aio => "kernels or programs without io_uring; direct I/O only",
            Method::CopyFileRange => {
                "copying files: least CPU, and instant on reflink file systems"
            }
            Method::Sendfile => "copying a file into a file or socket without a user buffer",
            Method::Ucache => {
                "reused data under a memory cap you set, with small or unaligned requests (databases)"
            }
            Method::Uffd => {
                "pointer access to a file larger than the memory you allow, without the page cache's read-ahead"
            }
            Method::UffdWp => {
                "as uffd when few of the touched pages are written: write-back only of what changed"
            }
            Method::Dontcache => {
                "streaming or one-pass data (backups, scans, logs) beside a service whose hot set must stay cached; unaligned I/O where O_DIRECT cannot go"
            }
            Method::UringDontcache => {
                "as dontcache with many requests in flight from one thread"
            }
            Method::Threadpool => {
                "to know what a runtime's file I/O costs against io_uring (Rust, Node, Java users)"
            }
            Method::Tokio => {
                "a Rust program on tokio: what its file I/O really costs, beside threadpool and uring"
            }
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Direction of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Read from the file into the slot.
    Read,
    /// Write the slot's contents to the file.
    Write,
}

/// One request: read or write `len` bytes at `offset`, using buffer `slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoReq {
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub slot: u32,
}

/// The outcome of one request: bytes transferred, or the OS error number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: Result<u32, i32>,
}

/// When written data is made durable. Orthogonal to the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SyncPolicy {
    /// Never flush: writes may end in the page cache.
    None,
    /// `fsync` (mmap: `msync`) once at the end, inside the timed interval.
    #[default]
    End,
    /// Open with `O_DSYNC`: every write is durable when it completes
    /// (mmap: `msync` of the written range after each write).
    Dsync,
    /// `fsync` after every write, counted in that write's latency
    /// (io_uring: a linked fsync request).
    Each,
    /// Open with `O_SYNC`: as `Dsync`, and the file's metadata (size,
    /// times) is durable too when a write completes (NIOBench's "sync"
    /// modes; mmap: `msync` after each write).
    Osync,
}

impl SyncPolicy {
    /// The extra `open` flag the policy needs (`O_DSYNC`, `O_SYNC`), or 0.
    pub fn open_flags(self) -> i32 {
        match self {
            SyncPolicy::Dsync => libc::O_DSYNC,
            SyncPolicy::Osync => libc::O_SYNC,
            _ => 0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SyncPolicy::None => "none",
            SyncPolicy::End => "end",
            SyncPolicy::Dsync => "dsync",
            SyncPolicy::Each => "each",
            SyncPolicy::Osync => "osync",
        }
    }

    pub fn from_name(s: &str) -> Option<SyncPolicy> {
        [
            SyncPolicy::None,
            SyncPolicy::End,
            SyncPolicy::Dsync,
            SyncPolicy::Each,
            SyncPolicy::Osync,
        ]
        .into_iter()
        .find(|p| p.name() == s)
    }
}

impl fmt::Display for SyncPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The call that makes written data durable in the middle of a run
/// ([`Engine::sync_now`]; fio's `fsync=N`, `fdatasync=N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SyncCall {
    /// `fsync(2)`: the data and every piece of metadata (times too).
    #[default]
    Fsync,
    /// `fdatasync(2)`: the data and only the metadata needed to read it
    /// back (the size, not the times).
    Fdatasync,
}

impl SyncCall {
    pub fn name(self) -> &'static str {
        match self {
            SyncCall::Fsync => "fsync",
            SyncCall::Fdatasync => "fdatasync",
        }
    }

    pub fn from_name(s: &str) -> Option<SyncCall> {
        [SyncCall::Fsync, SyncCall::Fdatasync]
            .into_iter()
            .find(|c| c.name() == s)
    }
}

/// A sync every `writes` writes of a worker: after the last of them the
/// worker issues nothing more, waits for what is in flight, and makes the
/// data durable with `call` before it goes on (an ordering point). Beside
/// the [`SyncPolicy`], which says how the engine opens and ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SyncEvery {
    /// Writes between two syncs, at least 1.
    pub writes: u32,
    pub call: SyncCall,
}

/// How an engine is opened. One engine serves one worker thread.
#[derive(Debug, Clone)]
pub struct OpenSpec {
    /// The target file (unused by `null`).
    pub path: PathBuf,
    /// Open for writing too (otherwise read-only).
    pub write: bool,
    /// Size of each buffer slot, and the largest request.
    pub block_size: usize,
    /// Requested queue depth; synchronous engines run at 1 (see [`Caps`]).
    pub queue_depth: usize,
    pub sync: SyncPolicy,
    /// Bytes of the file the engine may touch (mmap maps this much).
    pub span_bytes: u64,
    /// CPU for the SQPOLL thread, if any.
    pub sqpoll_cpu: Option<u32>,
    /// NUMA memory policy of the engine's I/O buffers, set before their
    /// first touch ([`buf::SlotPool::new_placed`]); `None`: the kernel's
    /// default (the node of the CPU that touches them, at open). A node
    /// that does not exist or has no memory makes `open` fail with
    /// [`EngineError::Invalid`]; a kernel without NUMA policies, with
    /// [`EngineError::Unsupported`].
    pub mem_policy: Option<numa::MemPolicy>,
    /// What the I/O buffers are made of: base pages (what programs get,
    /// the default) or transparent huge pages ([`buf::BufferBacking`]).
    pub buffers: buf::BufferBacking,
    /// Open the target with `O_NOATIME`: reads do not update its access
    /// time, and the kernel skips checking whether they should (a few
    /// percent of a 4 KiB O_DIRECT read's CPU). A program's plain `open`
    /// does not (the default); t/io_uring always does, fio on block and
    /// character devices. Refused (EPERM) unless the caller owns the file
    /// or is root: `open` then fails with [`EngineError::Unsupported`].
    pub noatime: bool,
}

/// What an opened engine actually does; may differ from what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caps {
    /// Several requests can be in flight at once.
    pub is_async: bool,
    /// Effective queue depth (number of buffer slots).
    pub queue_depth: usize,
    /// Required alignment of offsets and lengths (1 when none).
    pub offset_align: usize,
    /// Alignment of the engine's buffers.
    pub mem_align: usize,
    /// Departures from the request, said plainly ("registered buffers
    /// unavailable: ...; using plain buffers"). Empty when none.
    pub notes: Vec<String>,
    /// Where the engine's I/O buffers are: `(node, pages)` ascending by
    /// node, in base pages ([`numa::pages_per_node`]), measured at open
    /// after every page was touched; empty when the kernel does not say.
    pub buffer_nodes: Vec<(u32, u64)>,
}

/// Errors of the engine layer. Each says what failed, where, and what to do.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The method cannot work here; the run skips it with this reason.
    #[error("{method} is not usable here: {reason}")]
    Unsupported { method: Method, reason: String },
    /// A system call failed.
    #[error("{op} failed on {path}: {source}{hint}", hint = hint_suffix(.hint))]
    Os {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
        hint: Option<String>,
    },
    /// A request broke the engine's alignment rule (O_DIRECT).
    #[error("request at offset {offset} of {len} bytes is not aligned to {align} bytes, which O_DIRECT on {path} requires; use a block size and offsets that are multiples of {align}")]
    Misaligned {
        path: PathBuf,
        offset: u64,
        len: u32,
        align: usize,
    },
    /// The caller broke the API contract (bad slot, oversized request).
    #[error("invalid request: {0}")]
    Invalid(String),
}

fn hint_suffix(hint: &Option<String>) -> String {
    match hint {
        Some(h) => format!(" ({h})"),
        None => String::new(),
    }
}

impl EngineError {
    pub(crate) fn os(op: &'static str, path: &Path, source: io::Error) -> Self {
        let hint = sys::errno_hint(op, &source);
        EngineError::Os {
            op,
            path: path.to_path_buf(),
            source,
            hint,
        }
    }
}

/// An access method, opened on one file for one worker thread.
pub trait Engine: Send {
    /// What this engine does, as opened.
    fn caps(&self) -> &Caps;

    /// The buffer of `slot` for filling before a write or checking after a
    /// read; `None` while the slot is in flight or out of range.
    fn buf_mut(&mut self, slot: u32) -> Option<&mut [u8]>;

    /// Start `reqs`. Returns how many were accepted (the rest: try again after
    /// `reap`). Completions known at once are pushed to `done`. After an
    /// `Err`, requests accepted earlier in the batch may still be in flight:
    /// reap them or drop the engine (which waits for them).
    fn submit(&mut self, reqs: &[IoReq], done: &mut Vec<Completion>) -> Result<usize, EngineError>;

    /// Wait until at least `min` more completions have been pushed to `done`
    /// (fewer if fewer are in flight).
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> Result<(), EngineError>;

    /// Make written data durable as `how` asks (`End`: fsync/msync now). Must be
    /// called with nothing in flight.
    fn flush(&mut self, how: SyncPolicy) -> Result<(), EngineError>;

    /// Make the data written so far durable now with `call`, in the middle
    /// of a run ([`SyncEvery`]); with nothing in flight. A mapping is
    /// written back with `msync`, which on Linux syncs data only whichever
    /// call is asked. The default (an engine with no file: `null`, test
    /// engines) is what `flush(End)` does.
    fn sync_now(&mut self, call: SyncCall) -> Result<(), EngineError> {
        let _ = call;
        self.flush(SyncPolicy::End)
    }

    /// Requests in flight now.
    fn in_flight(&self) -> usize;

    /// Apply an access hint ([`Hint`]) over the span the engine may touch.
    /// Called once, after open, with nothing in flight. Engines that take
    /// no hint refuse with [`EngineError::Unsupported`] and the reason.
    fn advise(&mut self, hint: Hint) -> Result<(), EngineError> {
        Err(hint::refused(self.method(), hint))
    }

    /// The method this engine implements (for messages).
    fn method(&self) -> Method {
        Method::Null
    }
}

/// What a method may be given beyond [`OpenSpec`]: kept apart so that
/// adding an option changes no caller of [`open`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MethodOptions {
    /// An access hint: [`open_with`] applies it right after open
    /// ([`Engine::advise`]); [`open_unadvised`] only checks that the method
    /// takes it, for a caller that applies it inside its timed interval.
    pub hint: Option<Hint>,
    /// `threadpool`: threads serving the queue (`None`:
    /// [`engines::threadpool::DEFAULT_THREADS`]).
    pub pool_threads: Option<usize>,
}

/// [`open`] with `opts`: the pool size of `threadpool`, then the hint, if
/// any (refused with [`EngineError::Unsupported`] where it means nothing).
pub fn open_with(
    method: Method,
    spec: &OpenSpec,
    opts: &MethodOptions,
) -> Result<Box<dyn Engine>, EngineError> {
    let mut eng = open_unadvised(method, spec, opts)?;
    if let Some(h) = opts.hint {
        eng.advise(h)?;
    }
    Ok(eng)
}

/// [`open_with`] without applying the hint: it is refused here where it
/// means nothing for the method, and the caller applies it with
/// [`Engine::advise`] where its cost belongs. A benchmark calls it inside
/// the timed interval: `populate` and `willneed` read the file in, and
/// that reading is the method's work, not set-up.
pub fn open_unadvised(
    method: Method,
    spec: &OpenSpec,
    opts: &MethodOptions,
) -> Result<Box<dyn Engine>, EngineError> {
    if let Some(h) = opts.hint {
        // Refuse before opening: the reason does not depend on the file.
        if let Err(reason) = h.call_for(method) {
            return Err(EngineError::Unsupported { method, reason });
        }
    }
    let eng: Box<dyn Engine> = if method == Method::Threadpool {
        Box::new(engines::threadpool::ThreadPoolEngine::open(
            spec,
            opts.pool_threads
                .unwrap_or(engines::threadpool::DEFAULT_THREADS),
        )?)
    } else if method == Method::Tokio {
        open_tokio(spec, opts.pool_threads)?
    } else {
        open(method, spec)?
    };
    Ok(eng)
}

/// Open `method` as `spec` asks.
///
/// Errors with [`EngineError::Unsupported`] when the method cannot work on this
/// kernel, file system or device, with the reason.
pub fn open(method: Method, spec: &OpenSpec) -> Result<Box<dyn Engine>, EngineError> {
    if spec.block_size == 0 || spec.block_size > u32::MAX as usize {
        return Err(EngineError::Invalid(format!(
            "block size {} is out of range (1 byte to 4 GiB)",
            spec.block_size
        )));
    }
    match method {
        Method::Null => Ok(Box::new(engines::null::NullEngine::new(spec)?)),
        Method::Buffered => Ok(Box::new(engines::psync::PsyncEngine::open(spec, false)?)),
        Method::Dontcache => Ok(Box::new(engines::psync::PsyncEngine::open_dontcache(spec)?)),
        Method::Threadpool => Ok(Box::new(engines::threadpool::ThreadPoolEngine::open(
            spec,
            engines::threadpool::DEFAULT_THREADS,
        )?)),
        Method::Direct => Ok(Box::new(engines::psync::PsyncEngine::open(spec, true)?)),
        Method::Mmap => Ok(Box::new(engines::mmap::MmapEngine::open(spec)?)),
        Method::MmapDax => Ok(Box::new(engines::mmap::MmapEngine::open_dax(spec)?)),
        Method::CopyFileRange | Method::Sendfile => Err(EngineError::Unsupported {
            method,
            reason: format!("{method} only copies files: use it with the copy pattern"),
        }),
        Method::Uring
        | Method::UringBatch
        | Method::UringBuffered
        | Method::UringDontcache
        | Method::UringSqpoll
        | Method::UringIopoll => Ok(Box::new(engines::uring::UringEngine::open(method, spec)?)),
        Method::Aio => Ok(Box::new(engines::aio::AioEngine::open(spec)?)),
        Method::Ucache => Ok(Box::new(engines::ucache::UcacheEngine::open(spec)?)),
        Method::Uffd | Method::UffdWp => {
            Ok(Box::new(engines::uffd::UffdEngine::open(method, spec)?))
        }
        Method::Tokio => open_tokio(spec, None),
    }
}

/// `tokio` with at most `blocking_threads` threads in its blocking pool
/// (`None`: tokio's own default, 512).
#[cfg(feature = "tokio")]
fn open_tokio(
    spec: &OpenSpec,
    blocking_threads: Option<usize>,
) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(engines::tokio::TokioEngine::open(
        spec,
        blocking_threads,
    )?))
}

/// `tokio` in a build without the feature: refused with how to build it.
#[cfg(not(feature = "tokio"))]
fn open_tokio(
    _spec: &OpenSpec,
    _blocking_threads: Option<usize>,
) -> Result<Box<dyn Engine>, EngineError> {
    Err(EngineError::Unsupported {
        method: Method::Tokio,
        reason: Method::Tokio.not_compiled_in().unwrap_or_default(),
    })
}

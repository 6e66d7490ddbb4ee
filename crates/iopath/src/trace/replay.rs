//! What a replay of a trace does, as data (docs/replay.md, "Replay"): one
//! streaming pass over a trace ([`Survey::of`]) says what a replay needs
//! (the files and their sizes, the threads, the ops, the largest request,
//! how many requests each alignment would refuse), and a second
//! ([`split`]) writes each thread's ops to a file of its own as fixed-size
//! [`ReplayOp`] records, which a replay thread reads back as a stream
//! ([`OpReader`]). Memory stays bounded whatever the trace's size: one
//! event at a time, one small buffer per thread.
//!
//! What replays: reads and writes of every kind (page faults on mappings
//! as reads or writes of the faulted range, submissions of io_uring and
//! libaio as reads and writes), `fsync`/`fdatasync`/`sync_file_range` as
//! syncs, `open` and `close` as ordering points. Failed calls, and calls
//! that move no data and order nothing (`stat`, `unlink`, `rename`,
//! `mmap`, `fallocate`, `ftruncate`), are counted and left out.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::codec::{open_file, TraceError};
use super::{Event, FileEntry, FileKind, Op};

/// The most threads a replay runs (each one a thread and a stream file).
pub const MAX_THREADS: usize = 1024;

/// The most files one thread of a replay touches (an engine each).
pub const MAX_FILES_PER_THREAD: usize = 4096;

/// The alignments [`Survey::unaligned`] counts requests against: 512 B to
/// 64 KiB.
pub const ALIGNMENTS: [u64; 8] = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];

/// What one replayed op does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayKind {
    Read,
    Write,
    /// `fsync` (data: false) or `fdatasync`/`sync_file_range` (true).
    Sync {
        data: bool,
    },
    Open,
    Close,
}

impl ReplayKind {
    fn code(self) -> u8 {
        match self {
            ReplayKind::Read => 1,
            ReplayKind::Write => 2,
            ReplayKind::Sync { data: false } => 3,
            ReplayKind::Sync { data: true } => 4,
            ReplayKind::Open => 5,
            ReplayKind::Close => 6,
        }
    }

    fn from_code(c: u8) -> Option<ReplayKind> {
        Some(match c {
            1 => ReplayKind::Read,
            2 => ReplayKind::Write,
            3 => ReplayKind::Sync { data: false },
            4 => ReplayKind::Sync { data: true },
            5 => ReplayKind::Open,
            6 => ReplayKind::Close,
            _ => return None,
        })
    }

    /// Must wait for everything before it and hold back what follows.
    pub fn orders(self) -> bool {
        !matches!(self, ReplayKind::Read | ReplayKind::Write)
    }
}

/// One op of one thread, as a replay thread reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayOp {
    pub kind: ReplayKind,
    /// Index into the trace's files.
    pub file: u32,
    pub offset: u64,
    pub len: u64,
    /// When it started, ns since the trace's start (`--replay-timing`).
    pub ts_ns: u64,
}

/// Bytes of one [`ReplayOp`] in a stream file.
const RECORD: usize = 32;

impl ReplayOp {
    /// What `e` replays as, if anything.
    pub fn of(e: &Event) -> Option<ReplayOp> {
        let op = e.op();
        let kind = if op.reads() {
            ReplayKind::Read
        } else if op.writes() {
            ReplayKind::Write
        } else {
            match op {
                Op::Fsync => ReplayKind::Sync { data: false },
                Op::Fdatasync | Op::SyncFileRange => ReplayKind::Sync { data: true },
                Op::Open => ReplayKind::Open,
                Op::Close => ReplayKind::Close,
                _ => return None,
            }
        };
        let file = e.file?;
        if e.result < 0 || (kind == ReplayKind::Read || kind == ReplayKind::Write) && e.len == 0 {
            return None;
        }
        Some(ReplayOp {
            kind,
            file,
            offset: e.offset,
            len: e.len,
            ts_ns: e.ts_ns,
        })
    }

    /// What `e` replays as on the trace's `files`: nothing on a file that
    /// is not a regular one (a device, a pipe, a directory), nor a read or
    /// write that starts past the file's recorded size.
    pub fn on(e: &Event, files: &[FileEntry]) -> Option<ReplayOp> {
        let op = ReplayOp::of(e)?;
        let f = files.get(op.file as usize)?;
        if !matches!(f.kind, FileKind::Regular | FileKind::Missing) {
            return None;
        }
        if op.moves_data() && op.offset >= f.size_bytes {
            return None;
        }
        Some(op)
    }

    /// Moves data (a read or a write).
    pub fn moves_data(&self) -> bool {
        matches!(self.kind, ReplayKind::Read | ReplayKind::Write)
    }

    fn encode(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0] = self.kind.code();
        b[4..8].copy_from_slice(&self.file.to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_le_bytes());
        b[16..24].copy_from_slice(&self.len.to_le_bytes());
        b[24..32].copy_from_slice(&self.ts_ns.to_le_bytes());
        b
    }

    fn decode(b: &[u8; RECORD]) -> Option<ReplayOp> {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        Some(ReplayOp {
            kind: ReplayKind::from_code(b[0])?,
            file: u32::from_le_bytes(b[4..8].try_into().ok()?),
            offset: u64_at(8),
            len: u64_at(16),
            ts_ns: u64_at(24),
        })
    }
}

/// One recorded thread, as the survey saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SurveyThread {
    pub tid: u32,
    /// Ops it replays (data ops, syncs, opens and closes).
    pub ops: u64,
    /// Of which reads and writes.
    pub data_ops: u64,
    /// The files it touches, ascending.
    pub files: Vec<u32>,
    /// The most reads and writes it had in flight at once (0 without
    /// any): 1 for a thread of synchronous calls, more where its io_uring
    /// or libaio submissions overlapped ([`InFlight`]).
    pub depth: u32,
}

/// What a replay of a trace needs, from one pass over it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Survey {
    /// Each file's size (the header's), by file id.
    pub file_sizes: Vec<u64>,
    /// Some thread writes it, by file id.
    pub file_written: Vec<bool>,
    /// Some thread replays an op on it, by file id.
    pub file_used: Vec<bool>,
    pub threads: Vec<SurveyThread>,
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// The largest read or write, in bytes.
    pub max_len: u64,
    /// Reads and writes whose offset or length is not a multiple of
    /// [`ALIGNMENTS`]`[i]`.
    pub unaligned: [u64; ALIGNMENTS.len()],
    /// Events left out: failed calls, and calls a replay has no use for.
    pub left_out: u64,
    /// The trace's length (ns), for the recorded timing.
    pub duration_ns: u64,
}

impl Survey {
    /// One pass over the trace at `path`.
    pub fn of(path: &Path) -> Result<Survey, TraceError> {
        let mut reader = open_file(path)?;
        let h = reader.header();
        let mut s = Survey {
            file_sizes: h.files.iter().map(|f| f.size_bytes).collect(),
            file_written: vec![false; h.files.len()],
            file_used: vec![false; h.files.len()],
            duration_ns: h.duration_ns,
            ..Survey::default()
        };
        let files = reader.header().files.clone();
        let mut in_flight: Vec<InFlight> = Vec::new();
        loop {
            // The offset of the event about to be read, for an error.
            let at = reader.offset();
            let Some(e) = reader.next() else { break };
            let e = e?;
            match ReplayOp::on(&e, &files) {
                Some(op) => {
                    let i = s.add(e.tid, &op, at)?;
                    if op.moves_data() {
                        in_flight.resize_with(s.threads.len(), InFlight::default);
                        let t = &mut s.threads[i];
                        t.depth = t.depth.max(in_flight[i].add(&e));
                    }
                }
                None => s.left_out += 1,
            }
        }
        s.threads.sort_by_key(|t| t.tid);
        Ok(s)
    }

    /// The most reads and writes any thread of the program had in flight
    /// at once (at least 1).
    pub fn depth(&self) -> u32 {
        self.threads
            .iter()
            .map(|t| t.depth)
            .max()
            .unwrap_or(0)
            .max(1)
    }

    /// Counts `op` of thread `tid`; returns the thread's index.
    fn add(&mut self, tid: u32, op: &ReplayOp, at: u64) -> Result<usize, TraceError> {
        let i = match self.threads.iter().position(|t| t.tid == tid) {
            Some(i) => i,
            None if self.threads.len() < MAX_THREADS => {
                self.threads.push(SurveyThread {
                    tid,
                    ..SurveyThread::default()
                });
                self.threads.len() - 1
            }
            None => {
                return Err(TraceError::Limit {
                    offset: at,
                    what: format!(
                        "thread {tid} is one more than the {MAX_THREADS} threads a replay runs; record a shorter stretch of the program (--pid PID --duration TIME)"
                    ),
                })
            }
        };
        let t = &mut self.threads[i];
        t.ops += 1;
        if let Err(i) = t.files.binary_search(&op.file) {
            if t.files.len() >= MAX_FILES_PER_THREAD {
                return Err(TraceError::Limit {
                    offset: at,
                    what: format!(
                        "thread {tid} touches more than {MAX_FILES_PER_THREAD} files, the most a replay opens engines on for one thread; record a shorter stretch of the program (--pid PID --duration TIME)"
                    ),
                });
            }
            t.files.insert(i, op.file);
        }
        if let Some(u) = self.file_used.get_mut(op.file as usize) {
            *u = true;
        }
        match op.kind {
            ReplayKind::Read | ReplayKind::Write => {
                t.data_ops += 1;
                self.max_len = self.max_len.max(op.len);
                for (n, a) in self.unaligned.iter_mut().zip(ALIGNMENTS) {
                    *n += u64::from(op.offset % a != 0 || op.len % a != 0);
                }
                if op.kind == ReplayKind::Read {
                    self.reads += 1;
                    self.read_bytes += op.len;
                } else {
                    self.writes += 1;
                    self.write_bytes += op.len;
                    if let Some(w) = self.file_written.get_mut(op.file as usize) {
                        *w = true;
                    }
                }
            }
            ReplayKind::Sync { .. } => self.syncs += 1,
            ReplayKind::Open | ReplayKind::Close => {}
        }
        Ok(i)
    }

    /// Reads and writes in the trace.
    pub fn data_ops(&self) -> u64 {
        self.reads + self.writes
    }

    /// Bytes the files take, recreated.
    pub fn file_bytes(&self) -> u64 {
        self.file_sizes.iter().sum()
    }

    /// Some thread replays ops on file `id`.
    pub fn is_used(&self, id: u32) -> bool {
        self.file_used.get(id as usize).copied().unwrap_or(false)
    }

    /// Bytes the files some thread replays on take, recreated.
    pub fn file_bytes_used(&self) -> u64 {
        self.file_sizes
            .iter()
            .zip(&self.file_used)
            .filter(|(_, &used)| used)
            .map(|(size, _)| size)
            .sum()
    }

    /// Bytes the threads' stream files take.
    pub fn stream_bytes(&self) -> u64 {
        self.threads.iter().map(|t| t.ops * RECORD as u64).sum()
    }

    /// Reads and writes a method with alignment `align` cannot issue
    /// (`None`: an alignment not counted, larger than 64 KiB).
    pub fn unaligned_for(&self, align: u64) -> Option<u64> {
        if align <= 1 {
            return Some(0);
        }
        let i = ALIGNMENTS.iter().position(|&a| a >= align)?;
        (ALIGNMENTS[i] == align).then_some(self.unaligned[i])
    }
}

/// The most ops in flight at once a survey tells apart: a deeper program
/// counts as this deep (the tally stays bounded).
pub const MAX_DEPTH: u32 = 1024;

/// One thread's asynchronous reads and writes in flight, as the survey
/// walks its events: each holds from its submission to its completion (the
/// submission's instant where the recorder could not tell). A synchronous
/// call holds the thread itself, so it counts once beside what is in
/// flight, never beside another call.
#[derive(Debug, Default)]
struct InFlight {
    /// When each op in flight ends, soonest first.
    ends: BinaryHeap<Reverse<u64>>,
}

impl InFlight {
    /// Adds the data op `e`; returns how many of the thread's ops were in
    /// flight as it started, itself included.
    fn add(&mut self, e: &Event) -> u32 {
        while self.ends.peek().is_some_and(|Reverse(end)| *end <= e.ts_ns) {
            self.ends.pop();
        }
        let submitted = matches!(
            e.op(),
            Op::UringRead | Op::UringWrite | Op::AioRead | Op::AioWrite
        );
        if !submitted {
            return (self.ends.len() as u32 + 1).min(MAX_DEPTH);
        }
        if self.ends.len() >= MAX_DEPTH as usize {
            self.ends.pop();
        }
        self.ends
            .push(Reverse(e.ts_ns.saturating_add(e.dur_ns.max(1))));
        self.ends.len() as u32
    }
}

/// The stream file of thread `tid` in `dir`.
pub fn stream_path(dir: &Path, tid: u32) -> PathBuf {
    dir.join(format!("thread-{tid}.ops"))
}

/// Writes each thread's ops of the trace at `trace` to its stream file in
/// `dir` ([`stream_path`]): one more pass, one small buffer per thread.
pub fn split(trace: &Path, survey: &Survey, dir: &Path) -> Result<(), TraceError> {
    let mut outs: Vec<(u32, BufWriter<File>)> = Vec::with_capacity(survey.threads.len());
    for t in &survey.threads {
        let f = File::options()
            .write(true)
            .create_new(true)
            .open(stream_path(dir, t.tid))?;
        outs.push((t.tid, BufWriter::with_capacity(8 << 10, f)));
    }
    let reader = open_file(trace)?;
    let files = reader.header().files.clone();
    for e in reader {
        let e = e?;
        let Some(op) = ReplayOp::on(&e, &files) else {
            continue;
        };
        if let Ok(i) = outs.binary_search_by_key(&e.tid, |(t, _)| *t) {
            outs[i].1.write_all(&op.encode())?;
        }
    }
    for (_, mut w) in outs {
        w.flush()?;
    }
    Ok(())
}

/// Reads one thread's stream file back, op by op.
#[derive(Debug)]
pub struct OpReader {
    input: BufReader<File>,
}

impl OpReader {
    pub fn open(path: &Path) -> std::io::Result<OpReader> {
        Ok(OpReader {
            input: BufReader::with_capacity(64 << 10, File::open(path)?),
        })
    }

    /// The next op; `None` at the end (or at a record this module did not
    /// write, which [`split`] never makes).
    pub fn next_op(&mut self) -> std::io::Result<Option<ReplayOp>> {
        let mut b = [0u8; RECORD];
        match self.input.read_exact(&mut b) {
            Ok(()) => Ok(ReplayOp::decode(&b)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests;

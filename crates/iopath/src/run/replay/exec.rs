//! One replay thread: its stream of ops ([`OpReader`]) through one engine
//! per file it touches, in order. A synchronous engine completes each
//! request as it is submitted; an asynchronous one keeps up to its depth
//! in flight between two ordering points: an `fsync`/`fdatasync` (the
//! engine's flush, with nothing in flight), an `open` or `close`, and a
//! read of a range this thread wrote since the last ordering point. A read
//! or write longer than the engine's buffer goes in pieces; it counts as
//! one op when its last piece completes.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use iopath_io::{Completion, Engine, IoReq, Op, SyncCall};

use crate::plan::replay::ReplayTiming;
use crate::run::failure::WorkerError;
use crate::run::worker::{WorkerOut, MAX_LAT_NS};
use crate::system::metrics::procfs::ProcessIo;
use crate::trace::replay::{OpReader, ReplayKind, ReplayOp};

/// Writes since the last ordering point kept to check reads against; one
/// more is an ordering point of its own (memory stays bounded).
const MAX_WRITTEN: usize = 4096;

/// How long an engine may refuse every request with none in flight (aio's
/// EAGAIN) before the replay fails, as the workers do.
const STALL: Duration = Duration::from_secs(5);

/// One file a thread replays on: its engine, and what its slots hold.
pub struct Lane {
    pub file: u32,
    pub path: PathBuf,
    pub size: u64,
    pub engine: Box<dyn Engine>,
    /// The largest piece the engine takes (its buffers' size).
    bs: u64,
    /// Per slot, while in flight: its request and when it was submitted.
    slots: Vec<Option<InFlight>>,
    free: Vec<u32>,
}

/// A request in flight: when it went, where, and whether it is its op's
/// last piece.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    sent: Instant,
    op: Op,
    offset: u64,
    len: u32,
    last: bool,
}

impl Lane {
    pub fn new(file: u32, path: PathBuf, size: u64, bs: u64, engine: Box<dyn Engine>) -> Lane {
        let depth = engine.caps().queue_depth.max(1);
        Lane {
            file,
            path,
            size,
            engine,
            bs: bs.max(1),
            slots: vec![None; depth],
            free: (0..depth as u32).rev().collect(),
        }
    }
}

/// What a thread counts as it replays.
struct Books {
    hist: Histogram<u64>,
    read_ios: u64,
    write_ios: u64,
    read_bytes: u64,
    write_bytes: u64,
    flushes: u64,
    interval_ns: u64,
    edge_ns: u64,
    cur: (u64, u64),
    series_bytes: Vec<u64>,
    series_ios: Vec<u64>,
}

impl Books {
    fn new(interval_ns: u64) -> Books {
        Books {
            hist: Histogram::new_with_bounds(1, MAX_LAT_NS, 3).expect("valid bounds"),
            read_ios: 0,
            write_ios: 0,
            read_bytes: 0,
            write_bytes: 0,
            flushes: 0,
            interval_ns: interval_ns.max(1),
            edge_ns: interval_ns.max(1),
            cur: (0, 0),
            series_bytes: Vec::new(),
            series_ios: Vec::new(),
        }
    }

    /// Closes the intervals up to `now_ns` since the start.
    fn tick(&mut self, now_ns: u64) {
        while now_ns >= self.edge_ns {
            self.series_bytes.push(self.cur.0);
            self.series_ios.push(self.cur.1);
            self.cur = (0, 0);
            self.edge_ns += self.interval_ns;
        }
    }
}

/// What a replay thread is given.
pub struct ThreadRun<'a> {
    pub ops: OpReader,
    pub lanes: Vec<Lane>,
    pub timing: ReplayTiming,
    pub interval_ns: u64,
    pub stop: &'a std::sync::atomic::AtomicBool,
    /// How long the thread may replay (`--budget`'s share of a
    /// repetition): past it, no further op starts (the first always does),
    /// what is in flight completes, and the thread's figures are of the
    /// ops it reached, marked `timed_out`. `None`: the whole stream.
    pub limit: Option<Duration>,
}

/// The thread's replay, timed from `start`'s release to its last
/// completion: its figures as a worker's, and the flushes it made.
pub fn replay_thread(
    mut run: ThreadRun<'_>,
    start: &std::sync::Barrier,
) -> Result<(WorkerOut, u64), (PathBuf, WorkerError)> {
    let mut books = Books::new(run.interval_ns);
    start.wait();
    let cpu0 = iopath_io::sys::thread_usage();
    let io0 = ProcessIo::read_thread();
    let t0 = Instant::now();
    let mut written: Vec<(u32, u64, u64)> = Vec::new();
    let mut done = Vec::new();
    let (mut interrupted, mut timed_out, mut started) = (false, false, false);
    loop {
        let op = match run.ops.next_op() {
            Ok(Some(op)) => op,
            Ok(None) => break,
            Err(e) => return Err((PathBuf::new(), WorkerError::Other(e.to_string()))),
        };
        if run.stop.load(std::sync::atomic::Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        // The first op always starts, whatever the limit.
        if !wait_turn(run.timing, t0, &op, run.limit.filter(|_| started)) {
            timed_out = true;
            break;
        }
        started = true;
        let Some(li) = run.lanes.iter().position(|l| l.file == op.file) else {
            continue;
        };
        if orders(&op, &written) {
            drain(&mut run.lanes, &mut books, &mut done, t0)?;
            written.clear();
        }
        match op.kind {
            ReplayKind::Sync { data } => {
                // The call the program made: fdatasync (and
                // sync_file_range) data-only, fsync in full; a mapping's
                // msync first (the engine's own sync).
                let call = if data {
                    SyncCall::Fdatasync
                } else {
                    SyncCall::Fsync
                };
                let lane = &mut run.lanes[li];
                lane.engine
                    .sync_now(call)
                    .map_err(|e| (lane.path.clone(), WorkerError::Engine(e)))?;
                books.flushes += 1;
            }
            ReplayKind::Open | ReplayKind::Close => {}
            ReplayKind::Read | ReplayKind::Write => {
                issue(&mut run.lanes[li], &op, &mut books, &mut done, t0)?;
                if op.kind == ReplayKind::Write {
                    if written.len() >= MAX_WRITTEN {
                        drain(&mut run.lanes, &mut books, &mut done, t0)?;
                        written.clear();
                    }
                    written.push((op.file, op.offset, op.offset.saturating_add(op.len)));
                }
            }
        }
    }
    drain(&mut run.lanes, &mut books, &mut done, t0)?;
    let end = Instant::now();
    books.tick(end.duration_since(t0).as_nanos() as u64);
    books.series_bytes.push(books.cur.0);
    books.series_ios.push(books.cur.1);
    let io = io0.and_then(|a| ProcessIo::read_thread().map(|b| b.since(&a)));
    let flushes = books.flushes;
    let mut out = out_of(books, t0, end, cpu0, io, interrupted);
    out.timed_out = timed_out;
    Ok((out, flushes))
}

/// `op` must wait for everything in flight: an ordering op, or a read of
/// a range written since the last ordering point.
fn orders(op: &ReplayOp, written: &[(u32, u64, u64)]) -> bool {
    if op.kind.orders() {
        return true;
    }
    op.kind == ReplayKind::Read && {
        let end = op.offset.saturating_add(op.len);
        written
            .iter()
            .any(|&(f, a, b)| f == op.file && op.offset < b && a < end)
    }
}

/// Waits for `op`'s turn: under `--replay-timing recorded`, its recorded
/// time (scaled) since the start (an op already late goes at once). False,
/// without waiting, when its turn comes at or past `limit`.
fn wait_turn(timing: ReplayTiming, t0: Instant, op: &ReplayOp, limit: Option<Duration>) -> bool {
    let due = match timing {
        ReplayTiming::Recorded { scale } => Duration::from_nanos((op.ts_ns as f64 * scale) as u64),
        // No clock read where nothing waits.
        ReplayTiming::Fast if limit.is_none() => return true,
        ReplayTiming::Fast => Duration::ZERO,
    };
    let now = t0.elapsed();
    if limit.is_some_and(|l| due.max(now) >= l) {
        return false;
    }
    if let Some(left) = due.checked_sub(now) {
        std::thread::sleep(left);
    }
    true
}

/// Submits `op` on `lane` in pieces of at most the engine's buffer,
/// reaping when every slot is in flight.
fn issue(
    lane: &mut Lane,
    op: &ReplayOp,
    books: &mut Books,
    done: &mut Vec<Completion>,
    t0: Instant,
) -> Result<(), (PathBuf, WorkerError)> {
    let dir = if op.kind == ReplayKind::Write {
        Op::Write
    } else {
        Op::Read
    };
    let end = op.offset.saturating_add(op.len).min(lane.size);
    let bs = lane.bs;
    let mut at = op.offset.min(end);
    // Since when the engine has refused requests with none in flight.
    let mut refused_since: Option<Instant> = None;
    while at < end {
        let len = (end - at).min(bs) as u32;
        let last = at + u64::from(len) >= end;
        while lane.free.is_empty() {
            reap(lane, 1, books, done, t0)?;
        }
        let slot = lane.free.pop().unwrap_or(0);
        lane.slots[slot as usize] = Some(InFlight {
            sent: Instant::now(),
            op: dir,
            offset: at,
            len,
            last,
        });
        let req = IoReq {
            op: dir,
            offset: at,
            len,
            slot,
        };
        let accepted = lane
            .engine
            .submit(&[req], done)
            .map_err(|e| (lane.path.clone(), WorkerError::Engine(e)))?;
        if accepted == 0 {
            lane.slots[slot as usize] = None;
            lane.free.push(slot);
            if lane.engine.in_flight() == 0 {
                let since = *refused_since.get_or_insert_with(Instant::now);
                if since.elapsed() > STALL {
                    let ns = since.elapsed().as_nanos() as u64;
                    return Err((lane.path.clone(), WorkerError::Stalled { ns }));
                }
                std::thread::yield_now();
            }
            reap(lane, 1, books, done, t0)?;
            continue;
        }
        refused_since = None;
        settle(lane, books, done, t0)?;
        at += u64::from(len);
    }
    Ok(())
}

/// Waits for `min` completions on `lane` and books them.
fn reap(
    lane: &mut Lane,
    min: usize,
    books: &mut Books,
    done: &mut Vec<Completion>,
    t0: Instant,
) -> Result<(), (PathBuf, WorkerError)> {
    lane.engine
        .reap(min, done)
        .map_err(|e| (lane.path.clone(), WorkerError::Engine(e)))?;
    settle(lane, books, done, t0)
}

/// Books the completions in `done` (of `lane`), freeing their slots.
fn settle(
    lane: &mut Lane,
    books: &mut Books,
    done: &mut Vec<Completion>,
    t0: Instant,
) -> Result<(), (PathBuf, WorkerError)> {
    let now = Instant::now();
    books.tick(now.duration_since(t0).as_nanos() as u64);
    for c in done.drain(..) {
        let Some(f) = lane.slots.get_mut(c.slot as usize).and_then(Option::take) else {
            continue;
        };
        lane.free.push(c.slot);
        let n = match c.result {
            Ok(n) => u64::from(n),
            Err(errno) => {
                return Err((
                    lane.path.clone(),
                    WorkerError::Request {
                        op: f.op,
                        len: f.len,
                        offset: f.offset,
                        errno,
                    },
                ))
            }
        };
        books
            .hist
            .saturating_record(now.duration_since(f.sent).as_nanos().max(1) as u64);
        let ios = u64::from(f.last);
        if f.op == Op::Read {
            (books.read_ios, books.read_bytes) = (books.read_ios + ios, books.read_bytes + n);
        } else {
            (books.write_ios, books.write_bytes) = (books.write_ios + ios, books.write_bytes + n);
        }
        books.cur = (books.cur.0 + n, books.cur.1 + ios);
    }
    Ok(())
}

/// Waits for everything in flight on every lane.
fn drain(
    lanes: &mut [Lane],
    books: &mut Books,
    done: &mut Vec<Completion>,
    t0: Instant,
) -> Result<(), (PathBuf, WorkerError)> {
    for lane in lanes {
        while lane.engine.in_flight() > 0 {
            let n = lane.engine.in_flight();
            reap(lane, n, books, done, t0)?;
        }
    }
    Ok(())
}

fn out_of(
    b: Books,
    start: Instant,
    end: Instant,
    cpu0: iopath_io::sys::ThreadUsage,
    io: Option<ProcessIo>,
    interrupted: bool,
) -> WorkerOut {
    WorkerOut {
        hist: b.hist,
        read_ios: b.read_ios,
        write_ios: b.write_ios,
        read_bytes: b.read_bytes,
        write_bytes: b.write_bytes,
        stamps: Default::default(),
        start,
        end,
        interrupted,
        timed_out: false,
        flush_ns: 0,
        syncs: None,
        series_bytes: b.series_bytes,
        series_ios: b.series_ios,
        cpu: iopath_io::sys::thread_usage().since(&cpu0),
        io,
        verified_bytes: 0,
        verify_ns: 0,
        written: Vec::new(),
    }
}

#[cfg(test)]
mod tests;

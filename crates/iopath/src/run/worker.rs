//! One worker thread: keeps `queue_depth` requests in flight on its own
//! engine until its time or byte budget is spent, then flushes and closes
//! the engine inside the timed interval.
//!
//! Latency is per request, submit to completion (fio's `lat`): each batch
//! of requests is stamped by a clock read right before the call that hands
//! it to the engine (after its write buffers are prepared), and each
//! completion by a clock read right after the call that returned it. The
//! loop's own bookkeeping between a completion and the next submission
//! (histogram, series, copying a read to the user's buffer) is in no
//! request's latency. Requests handed over in one call share its stamp, as
//! completions returned by one call share theirs: a request's latency
//! includes the kernel's work on the requests ahead of it in the same
//! submit call (one io_uring_enter, or several when an engine submits
//! eagerly), and nothing of the loop.
//!
//! Hot-loop rules: no allocation (every Vec is sized before the start
//! barrier), no lock, two clock reads per loop turn (one before a submit,
//! one after a reap), latencies into a per-thread histogram merged after
//! the run. With the progress display shown, the
//! running totals are also published for the live line (`super::live`):
//! two `Relaxed` stores into the worker's own cache line, at most every
//! 5 ms of the clock the loop reads anyway; when it is hidden, a compare
//! against a deadline that never comes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use iopath_io::data::{DataMode, Rng};
use iopath_io::{Completion, Engine, IoReq, Op, SyncPolicy};

pub use super::failure::WorkerError;
use super::live::{LiveSlot, PUBLISH_EVERY_NS};
use crate::plan::Pattern;

/// Highest latency the histogram holds (longer ones saturate): one hour.
pub const MAX_LAT_NS: u64 = 3_600_000_000_000;

/// The loop's clock: nanoseconds since the repetition's start. The real one
/// is monotonic time; tests give a fake one whose time moves only when a
/// fake engine says so, to check which interval each latency covers.
pub trait Clock {
    fn ns(&self) -> u64;
}

/// Monotonic time since `0`.
#[derive(Debug, Clone, Copy)]
pub struct Mono(pub Instant);

impl Clock for Mono {
    #[inline]
    fn ns(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

/// What one worker does in one repetition.
#[derive(Debug, Clone)]
pub struct WorkerJob {
    pub pattern: Pattern,
    pub block_size: u32,
    /// Byte range this worker addresses: `[start, start + len)`, a whole
    /// number of blocks.
    pub start: u64,
    pub len: u64,
    /// Stop issuing after this many bytes.
    pub byte_budget: Option<u64>,
    /// Stop issuing after this long.
    pub time_budget: Option<Duration>,
    pub sync: SyncPolicy,
    pub rwmix_read_pct: u8,
    pub seed: u64,
    pub stream: u64,
    /// What written data looks like.
    pub data: DataMode,
    /// Length of the time-series intervals, ns.
    pub interval_ns: u64,
    /// Copy every read from the engine's buffer into a user buffer (what
    /// reading into the caller's memory costs, against reading in place).
    pub copy_to_user: bool,
    /// `--verify`: stamp every written block, check every read one.
    pub verify: Option<VerifyJob>,
    /// An access hint the engine was opened without: applied first thing
    /// in the timed interval, so that what it costs (`populate` faults the
    /// whole span in, `willneed` starts reading it) is the case's time, as
    /// the device bytes it moves are the case's bytes.
    pub hint: Option<iopath_io::Hint>,
    /// `--layout shared-strided` (ranks, this rank): block b of the range
    /// is the file's block `b * ranks + rank`; (1, 0) otherwise.
    pub stride: (u64, u64),
}

/// What `--verify` asks of one worker in one repetition.
#[derive(Debug, Clone, Copy)]
pub struct VerifyJob {
    /// Bytes of one verified unit (each starts with a header).
    pub unit: usize,
    /// The run's seed, in every header.
    pub seed: u64,
    /// This repetition's pass: written blocks carry it.
    pub pass: u32,
    /// Latest pass a block read may carry: this one on iopath's own file;
    /// any on a file an earlier run wrote.
    pub max_pass: u32,
    /// Check the blocks this worker reads (read patterns; not a mixed
    /// pattern, whose reads may race with another request's write).
    pub check_reads: bool,
}

/// What one worker measured.
#[derive(Debug)]
pub struct WorkerOut {
    pub hist: Histogram<u64>,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub start: Instant,
    pub end: Instant,
    pub interrupted: bool,
    /// The time budget ran out before the byte budget was spent (a
    /// repetition bounded by bytes stopped by its time: part of its work).
    pub timed_out: bool,
    /// A write case's final flush and close (inside the timed interval,
    /// which no time budget can interrupt), ns of the worker's clock.
    pub flush_ns: u64,
    /// Bytes and requests completed in each `interval_ns` from `start`;
    /// the last entry is the partial interval up to `end`.
    pub series_bytes: Vec<u64>,
    pub series_ios: Vec<u64>,
    /// This thread's CPU time from the start to the end of the timed interval.
    pub cpu: iopath_io::sys::ThreadUsage,
    /// `--verify`: bytes this worker checked on reads, and the time spent
    /// stamping and checking blocks (in the repetition's wall time, in no
    /// request's latency).
    pub verified_bytes: u64,
    pub verify_ns: u64,
    /// `--verify` on a write pattern: one bit per block of the worker's
    /// range, set when a write to it completed (what to read back).
    pub written: Vec<u64>,
}

/// Offsets and directions of the requests, in order.
#[derive(Debug)]
pub struct IoGen {
    pattern: Pattern,
    bs: u64,
    start: u64,
    blocks: u64,
    next_block: u64,
    rwmix: u64,
    rng: Rng,
    stride: (u64, u64),
}

impl IoGen {
    pub fn new(job: &WorkerJob) -> IoGen {
        let bs = u64::from(job.block_size);
        IoGen {
            pattern: job.pattern,
            bs,
            start: job.start,
            blocks: (job.len / bs).max(1),
            next_block: 0,
            rwmix: u64::from(job.rwmix_read_pct),
            rng: Rng::stream(job.seed, job.stream),
            stride: (job.stride.0.max(1), job.stride.1),
        }
    }

    /// The offset of the range's block `b`. Strided (`--layout
    /// shared-strided`, (ranks, rank)), `start` and `b` count in the rank's
    /// own blocks: its k-th is the file's block k*ranks+rank, so the
    /// threads' ranges (each from its own `start`) and the ranks together
    /// cover the file's blocks once each.
    #[inline]
    fn at(&self, b: u64) -> u64 {
        self.start * self.stride.0 + (b * self.stride.0 + self.stride.1) * self.bs
    }

    /// A uniform, block-aligned offset of the range (a random pattern's).
    #[inline]
    pub fn random_offset(&mut self) -> u64 {
        let b = self.rng.below(self.blocks);
        self.at(b)
    }

    /// The next request: direction and offset. Sequential patterns wrap at
    /// the end of the range; random offsets are uniform and block-aligned.
    #[inline]
    pub fn next_req(&mut self) -> (Op, u64) {
        let block = if self.pattern.is_random() {
            self.rng.below(self.blocks)
        } else {
            let b = self.next_block;
            self.next_block = if b + 1 == self.blocks { 0 } else { b + 1 };
            b
        };
        let op = match self.pattern {
            // Copies do not run through workers; a read is what they do
            // to the test file.
            Pattern::Read | Pattern::RandRead | Pattern::Copy => Op::Read,
            Pattern::Write | Pattern::RandWrite => Op::Write,
            Pattern::RandRw => {
                if self.rng.below(100) < self.rwmix {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        (op, self.at(block))
    }
}

/// Run one repetition on `engine`. Every worker waits at `barrier` so that
/// all start together. The engine is dropped (closed) inside the timed
/// interval, after the flush `job.sync` asks for. `live`, when the progress
/// display is shown, receives the running totals.
pub fn run(
    engine: Box<dyn Engine>,
    job: &WorkerJob,
    barrier: &Barrier,
    stop: &AtomicBool,
    live: Option<LiveSlot<'_>>,
) -> Result<WorkerOut, WorkerError> {
    run_clocked(engine, job, barrier, stop, live, Mono)
}

/// [`run`] with the clock made from the start instant by `clock`.
pub fn run_clocked<C: Clock>(
    mut engine: Box<dyn Engine>,
    job: &WorkerJob,
    barrier: &Barrier,
    stop: &AtomicBool,
    live: Option<LiveSlot<'_>>,
    clock: impl FnOnce(Instant) -> C,
) -> Result<WorkerOut, WorkerError> {
    let qd = engine.caps().queue_depth.max(1);
    let bs = job.block_size;
    let mut gen = IoGen::new(job);
    let mut data_rng = Rng::stream(job.seed ^ 0xda7a, job.stream);
    // Fill every slot before timing, for reads too: buffers then hold
    // random data for writes, and every page is backed before the first
    // request (on a VM whose balloon reports free pages, the host would
    // otherwise fault pages in while the device writes into them).
    for slot in 0..qd as u32 {
        if let Some(b) = engine.buf_mut(slot) {
            data_rng.fill_as(b, job.data);
        }
    }
    let mut hist = Histogram::<u64>::new_with_bounds(1, MAX_LAT_NS, 3)
        .map_err(|e| WorkerError::Other(format!("histogram: {e}")))?;
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut submit_ns = vec![0u64; qd];
    let mut slot_op = vec![Op::Read; qd];
    let mut slot_off = vec![0u64; qd];
    let mut reqs: Vec<IoReq> = Vec::with_capacity(qd);
    let mut done: Vec<Completion> = Vec::with_capacity(qd * 2);
    let byte_budget = job.byte_budget.unwrap_or(u64::MAX);
    let time_budget_ns = job.time_budget.map_or(u64::MAX, |d| d.as_nanos() as u64);
    let (mut issued, mut in_flight) = (0u64, 0usize);
    let (mut read_ios, mut write_ios, mut read_bytes, mut write_bytes) = (0u64, 0u64, 0u64, 0u64);
    let mut interrupted = false;
    let mut timed_out = false;
    // Time series: counts of the current interval, flushed into the
    // vectors when a completion lands past its end. Sized for the time
    // budget so that the hot loop does not allocate; without one (a
    // byte budget alone), for 8192 intervals (82 s at the default 10 ms,
    // 128 KiB), past which a vector doubles inside the loop.
    let interval_ns = job.interval_ns.max(1);
    let expect = job
        .time_budget
        .map_or(8192, |d| (d.as_nanos() as u64 / interval_ns) as usize + 4)
        .min(1 << 20);
    let mut series_bytes: Vec<u64> = Vec::with_capacity(expect);
    let mut series_ios: Vec<u64> = Vec::with_capacity(expect);
    let (mut cur_bytes, mut cur_ios, mut edge_ns) = (0u64, 0u64, interval_ns);
    // Next time the totals are published for the live line; never when
    // nobody shows them.
    let mut live_edge_ns = if live.is_some() { 0 } else { u64::MAX };
    // The caller's buffer for `copy_to_user`, touched now so that the
    // timed copies do not fault its pages in.
    let mut user_buf = vec![1u8; if job.copy_to_user { bs as usize } else { 0 }];
    // `--verify`: the blocks written (one bit each), which slots are in
    // flight (a random writer draws again rather than overlap its own
    // in-flight write), and the requests written so far (each header's
    // sequence).
    let verify = job.verify;
    let range_blocks = (job.len / u64::from(bs)).max(1);
    let mut written = vec![
        0u64;
        if verify.is_some() && job.pattern.writes() {
            range_blocks.div_ceil(64) as usize
        } else {
            0
        }
    ];
    let mut busy = vec![false; if verify.is_some() { qd } else { 0 }];
    let (mut verified_bytes, mut verify_ns, mut write_seq) = (0u64, 0u64, 0u32);
    // `--verify`: a request drawn while its block had a write in flight,
    // issued once a completion has freed it.
    let mut held: Option<(Op, u64)> = None;

    barrier.wait();
    let cpu0 = iopath_io::sys::thread_usage();
    let start = Instant::now();
    let clock = clock(start);
    if let Some(h) = job.hint {
        engine.advise(h).map_err(WorkerError::Engine)?;
    }
    if let Some(l) = &live {
        l.started(start);
    }
    let mut now_ns = 0u64;
    let mut issuing = true;
    // Since when the engine has accepted nothing with nothing in flight.
    let mut stalled_since: Option<u64> = None;
    loop {
        if issuing && (now_ns >= time_budget_ns || issued >= byte_budget) {
            issuing = false;
            timed_out = issued < byte_budget && byte_budget != u64::MAX;
        }
        if issuing && stop.load(Ordering::Relaxed) {
            issuing = false;
            interrupted = true;
        }
        reqs.clear();
        while issuing && issued < byte_budget {
            let Some(slot) = free.pop() else { break };
            let (op, offset) = if let Some(v) = verify {
                let drawn = held.take().unwrap_or_else(|| gen.next_req());
                let ready = verify_prepare(
                    &mut *engine,
                    &mut gen,
                    drawn,
                    slot,
                    &v,
                    (&slot_op, &slot_off, &mut busy),
                    (&mut data_rng, job.data),
                    &mut write_seq,
                    &mut verify_ns,
                );
                match ready {
                    Some(r) => r,
                    None => {
                        // Its block has a write in flight (and no other
                        // block is free to take instead): wait for a
                        // completion, then issue it.
                        held = Some(drawn);
                        free.push(slot);
                        break;
                    }
                }
            } else {
                let (op, offset) = gen.next_req();
                if op == Op::Write {
                    if let Some(b) = engine.buf_mut(slot) {
                        data_rng.scramble_as(b, job.data);
                    }
                }
                (op, offset)
            };
            reqs.push(IoReq {
                op,
                offset,
                len: bs,
                slot,
            });
            slot_op[slot as usize] = op;
            slot_off[slot as usize] = offset;
            issued += u64::from(bs);
        }
        if !reqs.is_empty() {
            // Latency starts when the requests are handed over: now, after
            // their buffers were prepared, not when the last batch came back.
            let submit_at = clock.ns();
            for r in &reqs {
                submit_ns[r.slot as usize] = submit_at;
            }
            let accepted = engine
                .submit(&reqs, &mut done)
                .map_err(WorkerError::Engine)?;
            in_flight += accepted;
            if accepted > 0 {
                stalled_since = None;
            }
            for r in reqs[accepted..].iter().rev() {
                free.push(r.slot);
                issued -= u64::from(bs);
                // Not in flight: no longer a block to keep clear of.
                if let Some(b) = busy.get_mut(r.slot as usize) {
                    *b = false;
                }
            }
        }
        if done.is_empty() {
            if in_flight == 0 {
                if issuing && issued < byte_budget {
                    // The engine took nothing and has nothing in flight
                    // (aio's EAGAIN): read the clock, so that the time
                    // budget still ends the loop, and back off.
                    now_ns = clock.ns();
                    stalled_since = Some(stalled(stalled_since, now_ns)?);
                    continue;
                }
                break;
            }
            engine.reap(1, &mut done).map_err(WorkerError::Engine)?;
        }
        now_ns = clock.ns();
        while now_ns >= edge_ns {
            series_bytes.push(cur_bytes);
            series_ios.push(cur_ios);
            (cur_bytes, cur_ios) = (0, 0);
            edge_ns += interval_ns;
        }
        for c in done.drain(..) {
            let s = c.slot as usize;
            in_flight -= 1;
            free.push(c.slot);
            let n = match c.result {
                Ok(n) => n,
                Err(errno) => {
                    return Err(WorkerError::Request {
                        op: slot_op[s],
                        len: bs,
                        offset: slot_off[s],
                        errno,
                    })
                }
            };
            if n == 0 {
                return Err(WorkerError::Eof {
                    op: slot_op[s],
                    len: bs,
                    offset: slot_off[s],
                });
            }
            hist.saturating_record(now_ns.saturating_sub(submit_ns[s]).max(1));
            cur_bytes += u64::from(n);
            cur_ios += 1;
            if let Some(v) = verify {
                busy[s] = false;
                let off = slot_off[s];
                match slot_op[s] {
                    Op::Read if v.check_reads => {
                        if let Some(b) = engine.buf_mut(c.slot) {
                            let t0 = Instant::now();
                            let b = &b[..(n as usize).min(b.len())];
                            let e = iopath_io::verify::Expect {
                                offset: off,
                                seed: v.seed,
                                max_pass: v.max_pass,
                                exact_pass: None,
                            };
                            iopath_io::verify::check_all(b, v.unit, off, &e)
                                .map_err(|m| WorkerError::Verify(m.to_string()))?;
                            verified_bytes += (b.len() / v.unit * v.unit) as u64;
                            verify_ns += t0.elapsed().as_nanos() as u64;
                        }
                    }
                    Op::Write if n == bs => {
                        let i = (off - job.start) / u64::from(bs);
                        if let Some(w) = written.get_mut((i / 64) as usize) {
                            *w |= 1 << (i % 64);
                        }
                    }
                    _ => {}
                }
            }
            match slot_op[s] {
                Op::Read => {
                    read_ios += 1;
                    read_bytes += u64::from(n);
                    if job.copy_to_user {
                        if let Some(b) = engine.buf_mut(c.slot) {
                            let n = (n as usize).min(b.len());
                            user_buf[..n].copy_from_slice(&b[..n]);
                            std::hint::black_box(&mut user_buf);
                        }
                    }
                }
                Op::Write => {
                    write_ios += 1;
                    write_bytes += u64::from(n);
                }
            }
        }
        if now_ns >= live_edge_ns {
            live_edge_ns = now_ns + PUBLISH_EVERY_NS;
            if let Some(l) = &live {
                l.publish(read_bytes + write_bytes, read_ios + write_ios);
            }
        }
    }
    if let Some(l) = &live {
        l.publish(read_bytes + write_bytes, read_ios + write_ios);
    }
    // A write case is timed until its data is durable and the file closed
    // (the work moves from write() to fsync() and close()); a read case
    // ends with its last completion, and closing (io_destroy, ring
    // teardown, munmap) is not its cost.
    let flush_from = clock.ns();
    let (end, cpu) = if job.pattern.writes() {
        if let Some(l) = &live {
            l.flushing(true);
        }
        if job.sync == SyncPolicy::End && write_ios > 0 {
            engine.flush(SyncPolicy::End).map_err(WorkerError::Engine)?;
        }
        drop(engine);
        if let Some(l) = &live {
            l.flushing(false);
        }
        (Instant::now(), iopath_io::sys::thread_usage())
    } else {
        let at_end = (Instant::now(), iopath_io::sys::thread_usage());
        drop(engine);
        at_end
    };
    let flush_ns = if job.pattern.writes() {
        clock.ns().saturating_sub(flush_from)
    } else {
        0
    };
    let cpu = cpu.since(&cpu0);
    // Close the series at `end`: intervals with nothing completed (a long
    // fsync) stay as zeros, the last one is partial.
    let end_ns = end.duration_since(start).as_nanos() as u64;
    while end_ns > edge_ns {
        series_bytes.push(cur_bytes);
        series_ios.push(cur_ios);
        (cur_bytes, cur_ios) = (0, 0);
        edge_ns += interval_ns;
    }
    series_bytes.push(cur_bytes);
    series_ios.push(cur_ios);
    Ok(WorkerOut {
        series_bytes,
        series_ios,
        cpu,
        hist,
        read_ios,
        write_ios,
        read_bytes,
        write_bytes,
        start,
        end,
        interrupted,
        timed_out,
        flush_ns,
        verified_bytes,
        verify_ns,
        written,
    })
}

/// `--verify`, before a request is handed over: a write never goes to a
/// block that one of this worker's writes in flight goes to (two writes
/// of one block in flight at once may interleave, and the read-back would
/// find a block torn between them: a false report). A random write whose
/// block is busy draws again (a few times, keeping offsets uniform), then
/// takes the next free block of its range; a sequential one, or a random
/// one whose whole range is in flight, is `None`: the caller waits for a
/// completion and offers it again. Nothing is capped, so no clash can
/// slip through. A write's buffer gets fresh data and a header in each
/// unit. Returns the request to issue.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn verify_prepare(
    engine: &mut dyn Engine,
    gen: &mut IoGen,
    (op, mut offset): (Op, u64),
    slot: u32,
    v: &VerifyJob,
    (slot_op, slot_off, busy): (&[Op], &[u64], &mut [bool]),
    (rng, mode): (&mut Rng, DataMode),
    seq: &mut u32,
    ns: &mut u64,
) -> Option<(Op, u64)> {
    let t0 = Instant::now();
    // Only writes race: a read in flight of the block (never checked in a
    // mixed pattern) does not stop a write to it.
    let clash = |op: Op, offset: u64, busy: &[bool]| {
        op == Op::Write
            && busy
                .iter()
                .zip(slot_off)
                .zip(slot_op)
                .any(|((&b, &o), &w)| b && o == offset && w == Op::Write)
    };
    if clash(op, offset, busy) {
        if !gen.pattern.is_random() {
            *ns += t0.elapsed().as_nanos() as u64;
            return None;
        }
        // Another block, the same direction (a mixed pattern keeps its
        // share of writes).
        for _ in 0..REDRAWS {
            offset = gen.random_offset();
            if !clash(op, offset, busy) {
                break;
            }
        }
        if clash(op, offset, busy) {
            // At most `busy.len()` blocks are taken: a scan of one more
            // than that finds a free one, if the range has one.
            let block =
                ((offset - gen.start * gen.stride.0) / gen.bs - gen.stride.1) / gen.stride.0;
            let free = (1..gen.blocks.min(busy.len() as u64 + 1))
                .map(|k| gen.at((block + k) % gen.blocks))
                .find(|&o| !clash(op, o, busy));
            match free {
                Some(o) => offset = o,
                None => {
                    *ns += t0.elapsed().as_nanos() as u64;
                    return None;
                }
            }
        }
    }
    busy[slot as usize] = true;
    if op == Op::Write {
        if let Some(b) = engine.buf_mut(slot) {
            rng.scramble_as(b, mode);
            iopath_io::verify::stamp_all(b, v.unit, offset, v.seed, v.pass, *seq);
        }
        *seq = seq.wrapping_add(1);
    }
    *ns += t0.elapsed().as_nanos() as u64;
    Some((op, offset))
}

/// How long the engine may accept no request, with none in flight, before
/// the worker gives up (as io_uring's EAGAIN does).
pub const STALL_GIVE_UP_NS: u64 = 5_000_000_000;

/// A loop turn in which the engine accepted nothing and has nothing in
/// flight, at `now_ns`, stalled since `since` (`None`: this is the first):
/// waits a little (a yield, then 1 ms) so that the loop does not spin, and
/// returns since when it is stalled; [`WorkerError::Stalled`] once that is
/// [`STALL_GIVE_UP_NS`] ago.
#[cold]
fn stalled(since: Option<u64>, now_ns: u64) -> Result<u64, WorkerError> {
    let Some(since) = since else {
        std::thread::yield_now();
        return Ok(now_ns);
    };
    let waited = now_ns.saturating_sub(since);
    if waited >= STALL_GIVE_UP_NS {
        return Err(WorkerError::Stalled { ns: waited });
    }
    std::thread::sleep(Duration::from_millis(1));
    Ok(since)
}

/// `--verify`: how many times a random write whose block is busy draws
/// again before it takes the next free block.
const REDRAWS: usize = 8;

#[cfg(test)]
mod clash_tests;
#[cfg(test)]
mod stall_tests;

#[cfg(test)]
mod tests;

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
//! the run (recorded a batch at a time: `books::Latencies`). With the
//! progress display shown, the running totals are also published for the
//! live line (`super::live`):
//! two `Relaxed` stores into the worker's own cache line, at most every
//! 5 ms of the clock the loop reads anyway; when it is hidden, a compare
//! against a deadline that never comes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use iopath_io::data::{DataMode, Rng};
use iopath_io::{Completion, Engine, IoReq, Op, SyncPolicy};

mod books;

pub use super::failure::WorkerError;
use super::live::{LiveSlot, PUBLISH_EVERY_NS};
use crate::plan::Pattern;
use crate::system::metrics::procfs::ProcessIo;
use books::{Books, Slots};

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
    /// A time budget iopath chose (from `--budget`) is a soft one: past it,
    /// issuing goes on until every slot has had its requests.
    pub at_least: Option<AtLeast>,
    pub sync: SyncPolicy,
    /// A sync every N writes (`--sync-every`): an ordering point.
    pub sync_every: Option<iopath_io::SyncEvery>,
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

/// The fewest requests of a repetition whose length iopath chose: its time
/// budget ends it only once `per_slot` requests per slot (request in
/// flight: the engine's queue depth) were issued, or at `until` whatever
/// was issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtLeast {
    pub per_slot: u32,
    pub until: Duration,
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
    /// Every completed request's submit and reap stamps, summed (for
    /// `--latency-split`'s time in an io_uring ring).
    pub stamps: super::latency_split::Stamps,
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
    /// This thread's I/O accounting over the same interval (its read and
    /// write calls and the bytes they moved); `None` where the kernel
    /// keeps none.
    pub io: Option<ProcessIo>,
    /// `--verify`: bytes this worker checked on reads, and the time spent
    /// stamping and checking blocks (in the repetition's wall time, in no
    /// request's latency).
    pub verified_bytes: u64,
    pub verify_ns: u64,
    /// `--verify` on a write pattern: one bit per block of the worker's
    /// range, set when a write to it completed (what to read back).
    pub written: Vec<u64>,
    /// `--sync-every`: the syncs made and their time (in the wall time,
    /// in no request's latency); `None` without it.
    pub syncs: Option<crate::result::Syncs>,
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
            // Copies and replays do not run through workers; a read is
            // what a copy does to the test file.
            Pattern::Read | Pattern::RandRead | Pattern::Copy | Pattern::Replay => Op::Read,
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
    let mut lp = Loop::new(&mut *engine, job, qd)?;
    barrier.wait();
    let cpu0 = iopath_io::sys::thread_usage();
    let io0 = ProcessIo::read_thread();
    let start = Instant::now();
    let clock = clock(start);
    if let Some(h) = job.hint {
        engine.advise(h).map_err(WorkerError::Engine)?;
    }
    if let Some(l) = &live {
        l.started(start);
    }
    let ended = lp.turns(&mut *engine, job, stop, live.as_ref(), &clock)?;
    if let Some(l) = &live {
        l.publish(lp.books.totals.bytes(), lp.books.totals.ios());
    }
    let write_ios = lp.books.totals.write_ios;
    let mut closed = close(engine, job, live.as_ref(), &clock, write_ios)?;
    closed.cpu = closed.cpu.since(&cpu0);
    closed.io = closed.io.zip(io0).map(|(end, start)| end.since(&start));
    let syncs = lp.syncs.map(|s| s.done);
    let mut out = lp.books.into_out(start, closed, ended);
    out.syncs = syncs;
    Ok(out)
}

/// How the loop stopped issuing.
#[derive(Debug, Clone, Copy, Default)]
struct Ended {
    /// Stopped (Ctrl-C, another rank's failure).
    interrupted: bool,
    /// The time budget ran out before the byte budget was spent.
    timed_out: bool,
}

/// The end of the timed interval: when, the thread's CPU then, and a
/// write's final flush and close, ns.
struct Closed {
    at: Instant,
    cpu: iopath_io::sys::ThreadUsage,
    io: Option<ProcessIo>,
    flush_ns: u64,
}

/// Everything the timed loop changes: where requests come from, the
/// requests in hand and in flight, the engine's slots, the books.
struct Loop {
    gen: IoGen,
    /// Fills write buffers.
    data_rng: Rng,
    /// `--verify`: a request drawn while its block had a write in flight,
    /// issued once a completion has freed it.
    held: Option<(Op, u64)>,
    reqs: Vec<IoReq>,
    done: Vec<Completion>,
    /// Bytes issued (handed over and not refused).
    issued: u64,
    in_flight: usize,
    slots: Slots,
    books: Books,
    /// `--sync-every`: where the worker is between two syncs.
    syncs: Option<SyncPoints>,
}

/// `--sync-every`: the writes drawn since the last sync and the syncs
/// made.
#[derive(Debug, Clone, Copy)]
struct SyncPoints {
    every: iopath_io::SyncEvery,
    since: u32,
    done: crate::result::Syncs,
}

impl SyncPoints {
    /// A write drawn (`+1`) or handed back by the engine (`-1`).
    #[inline(always)]
    fn count(&mut self, delta: i32) {
        self.since = self.since.saturating_add_signed(delta);
    }

    /// The next sync is due: nothing more is drawn until it is made.
    #[inline(always)]
    fn due(&self) -> bool {
        self.since >= self.every.writes
    }
}

impl Loop {
    /// Sized before the start barrier, with every slot's buffer filled:
    /// for reads too, so that buffers hold random data for writes and every
    /// page is backed before the first request (on a VM whose balloon
    /// reports free pages, the host would otherwise fault pages in while
    /// the device writes into them).
    fn new(engine: &mut dyn Engine, job: &WorkerJob, qd: usize) -> Result<Loop, WorkerError> {
        let mut data_rng = Rng::stream(job.seed ^ 0xda7a, job.stream);
        for slot in 0..qd as u32 {
            if let Some(b) = engine.buf_mut(slot) {
                data_rng.fill_as(b, job.data);
            }
        }
        Ok(Loop {
            gen: IoGen::new(job),
            data_rng,
            held: None,
            reqs: Vec::with_capacity(qd),
            done: Vec::with_capacity(qd * 2),
            issued: 0,
            in_flight: 0,
            slots: Slots::new(qd, job.verify.is_some()),
            books: Books::new(job)?,
            syncs: job.sync_every.map(|every| SyncPoints {
                every,
                since: 0,
                done: Default::default(),
            }),
        })
    }

    /// The timed loop: keeps the engine's slots busy until the budget is
    /// spent or `stop` is set, then reaps what is in flight. Two clock
    /// reads per turn: right before a submit, right after a reap.
    #[inline(always)]
    fn turns<C: Clock>(
        &mut self,
        engine: &mut dyn Engine,
        job: &WorkerJob,
        stop: &AtomicBool,
        live: Option<&LiveSlot<'_>>,
        clock: &C,
    ) -> Result<Ended, WorkerError> {
        let byte_budget = job.byte_budget.unwrap_or(u64::MAX);
        let time_budget_ns = job.time_budget.map_or(u64::MAX, |d| d.as_nanos() as u64);
        // Past the time budget, issuing goes on until `min_issue` bytes
        // were issued (the requests every slot is given), up to `hard_ns`.
        let (min_issue, hard_ns) = job.at_least.map_or((0, u64::MAX), |a| {
            let slots = self.slots.op.len() as u64;
            let bs = u64::from(job.block_size);
            let per_slot = u64::from(a.per_slot);
            (per_slot * slots * bs, a.until.as_nanos() as u64)
        });
        let mut ended = Ended::default();
        // Next time the totals are published for the live line; never when
        // nobody shows them.
        let mut live_edge_ns = if live.is_some() { 0 } else { u64::MAX };
        let mut now_ns = 0u64;
        let mut issuing = true;
        // Since when the engine has accepted nothing with nothing in flight.
        let mut stalled_since: Option<u64> = None;
        loop {
            let timed = now_ns >= time_budget_ns && (self.issued >= min_issue || now_ns >= hard_ns);
            if issuing && (timed || self.issued >= byte_budget) {
                issuing = false;
                ended.timed_out = self.issued < byte_budget && byte_budget != u64::MAX;
            }
            if issuing && stop.load(Ordering::Relaxed) {
                issuing = false;
                ended.interrupted = true;
            }
            self.reqs.clear();
            if issuing {
                self.draw(engine, job, byte_budget);
            }
            // Latency starts when the requests are handed over: now, after
            // their buffers were prepared, not when the last batch came back.
            if !self.reqs.is_empty() && self.hand_over(engine, job.block_size, clock.ns())? > 0 {
                stalled_since = None;
            }
            if self.done.is_empty() {
                if self.in_flight == 0 {
                    if self.syncs.is_some_and(|s| s.due()) {
                        now_ns = self.sync_point(engine, clock)?;
                        continue;
                    }
                    if issuing && self.issued < byte_budget {
                        // The engine took nothing and has nothing in flight
                        // (aio's EAGAIN): read the clock, so that the time
                        // budget still ends the loop, and back off.
                        now_ns = clock.ns();
                        stalled_since = Some(stalled(stalled_since, now_ns)?);
                        continue;
                    }
                    break;
                }
                engine
                    .reap(1, &mut self.done)
                    .map_err(WorkerError::Engine)?;
            }
            now_ns = clock.ns();
            self.books.series.advance(now_ns);
            self.complete_all(engine, job, now_ns)?;
            if now_ns >= live_edge_ns {
                live_edge_ns = now_ns + PUBLISH_EVERY_NS;
                if let Some(l) = live {
                    l.publish(self.books.totals.bytes(), self.books.totals.ios());
                }
            }
        }
        // The last latencies are recorded inside the timed interval, as
        // the others were.
        self.books.lat.flush();
        Ok(ended)
    }

    /// Requests for the free slots, up to the byte budget, into `reqs`
    /// (their write buffers prepared).
    #[inline(always)]
    fn draw(&mut self, engine: &mut dyn Engine, job: &WorkerJob, byte_budget: u64) {
        let bs = job.block_size;
        while self.issued < byte_budget && !self.syncs.is_some_and(|s| s.due()) {
            let Some(slot) = self.slots.free.pop() else {
                break;
            };
            let Some((op, offset)) = self.request(engine, job, slot) else {
                // Its block has a write in flight (and no other block is
                // free to take instead): wait for a completion.
                self.slots.free.push(slot);
                break;
            };
            self.reqs.push(IoReq {
                op,
                offset,
                len: bs,
                slot,
            });
            self.slots.op[slot as usize] = op;
            self.slots.off[slot as usize] = offset;
            self.issued += u64::from(bs);
            if let (Op::Write, Some(s)) = (op, &mut self.syncs) {
                s.count(1);
            }
        }
    }

    /// `--sync-every`, with nothing in flight: the sync the last writes
    /// asked for, timed on its own (no request's latency holds it); the
    /// clock after it.
    #[cold]
    #[inline(never)]
    fn sync_point<C: Clock>(
        &mut self,
        engine: &mut dyn Engine,
        clock: &C,
    ) -> Result<u64, WorkerError> {
        let Some(s) = &mut self.syncs else {
            return Ok(clock.ns());
        };
        let from = clock.ns();
        engine.sync_now(s.every.call).map_err(WorkerError::Engine)?;
        let to = clock.ns();
        s.done = crate::result::Syncs::new(s.done.count + 1, s.done.total_ns + (to - from));
        s.since = 0;
        Ok(to)
    }

    /// The next request, in `slot`, its write buffer prepared; `None`
    /// (`--verify`) when it must wait for a write in flight to its block
    /// (it is held, and issued once a completion has freed it).
    #[inline(always)]
    fn request(
        &mut self,
        engine: &mut dyn Engine,
        job: &WorkerJob,
        slot: u32,
    ) -> Option<(Op, u64)> {
        let Some(v) = job.verify else {
            let (op, offset) = self.gen.next_req();
            if op == Op::Write {
                if let Some(b) = engine.buf_mut(slot) {
                    self.data_rng.scramble_as(b, job.data);
                }
            }
            return Some((op, offset));
        };
        let drawn = self.held.take().unwrap_or_else(|| self.gen.next_req());
        let checks = &mut self.books.checks;
        let ready = verify_prepare(
            engine,
            &mut self.gen,
            drawn,
            slot,
            &v,
            (&self.slots.op, &self.slots.off, &mut self.slots.busy),
            (&mut self.data_rng, job.data),
            &mut checks.write_seq,
            &mut checks.ns,
        );
        if ready.is_none() {
            self.held = Some(drawn);
        }
        ready
    }

    /// `reqs` handed to the engine, stamped `submit_at`: how many it
    /// accepted. The slots of those it refused are free again.
    #[inline(always)]
    fn hand_over(
        &mut self,
        engine: &mut dyn Engine,
        bs: u32,
        submit_at: u64,
    ) -> Result<usize, WorkerError> {
        for r in &self.reqs {
            self.slots.submit_ns[r.slot as usize] = submit_at;
        }
        let accepted = engine
            .submit(&self.reqs, &mut self.done)
            .map_err(WorkerError::Engine)?;
        self.in_flight += accepted;
        for r in self.reqs[accepted..].iter().rev() {
            if let (Op::Write, Some(s)) = (r.op, &mut self.syncs) {
                s.count(-1);
            }
            self.slots.free.push(r.slot);
            self.issued -= u64::from(bs);
            // Not in flight: no longer a block to keep clear of.
            if let Some(b) = self.slots.busy.get_mut(r.slot as usize) {
                *b = false;
            }
        }
        Ok(accepted)
    }

    /// Every completion in `done`, booked at `now_ns`.
    #[inline(always)]
    fn complete_all(
        &mut self,
        engine: &mut dyn Engine,
        job: &WorkerJob,
        now_ns: u64,
    ) -> Result<(), WorkerError> {
        for c in self.done.drain(..) {
            self.in_flight -= 1;
            self.books
                .complete(&mut self.slots, engine, job, c, now_ns)?;
        }
        Ok(())
    }
}

/// The end of a repetition. A write case is timed until its data is
/// durable and the file closed (the work moves from write() to fsync() and
/// close()); a read case ends with its last completion, and closing
/// (io_destroy, ring teardown, munmap) is not its cost. The CPU returned
/// is the thread's total then.
fn close<C: Clock>(
    mut engine: Box<dyn Engine>,
    job: &WorkerJob,
    live: Option<&LiveSlot<'_>>,
    clock: &C,
    write_ios: u64,
) -> Result<Closed, WorkerError> {
    let flush_from = clock.ns();
    if !job.pattern.writes() {
        let (at, io, cpu) = ended_now();
        drop(engine);
        return Ok(Closed {
            at,
            cpu,
            io,
            flush_ns: 0,
        });
    }
    if let Some(l) = live {
        l.flushing(true);
    }
    if job.sync == SyncPolicy::End && write_ios > 0 {
        engine.flush(SyncPolicy::End).map_err(WorkerError::Engine)?;
    }
    drop(engine);
    if let Some(l) = live {
        l.flushing(false);
    }
    let (at, io, cpu) = ended_now();
    Ok(Closed {
        at,
        cpu,
        io,
        flush_ns: clock.ns().saturating_sub(flush_from),
    })
}

/// The end of the timed interval: the time, the thread's I/O accounting
/// (read first: the CPU's reading of `schedstat` is not in it) and CPU.
fn ended_now() -> (Instant, Option<ProcessIo>, iopath_io::sys::ThreadUsage) {
    let at = Instant::now();
    let io = ProcessIo::read_thread();
    (at, io, iopath_io::sys::thread_usage())
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
mod lat_tests;
#[cfg(test)]
mod stall_tests;
#[cfg(test)]
mod sync_tests;

#[cfg(test)]
mod tests;

//! Live figures of the running repetition on the progress line.
//!
//! Workers publish their running totals (bytes and requests completed in
//! this repetition) into [`Live`]; a ticker thread samples them about every
//! [`TICK`] and sets the bar's message. All of it exists only when the
//! progress display is shown: with `--quiet`, a pipe or CI there is no
//! `Live`, no ticker thread, and the workers' hot loop never publishes.
//!
//! Design of the shared counters: one slot per worker, each alone on its
//! own 128-byte-aligned block, written only by its worker with plain
//! `Relaxed` stores of its totals (no read-modify-write, no lock prefix: an
//! ordinary store on x86-64 and aarch64). A single shared counter would
//! need an atomic add from every worker on one cache line that bounces
//! between their cores; with a slot each, a worker's line stays in its own
//! core's cache and leaves it only when the ticker reads it, about five
//! times a second. (128, not 64: x86's adjacent-line prefetcher pairs
//! 64-byte lines, and some ARM cores have 128-byte lines.) The worker
//! publishes at most every [`PUBLISH_EVERY_NS`] of its own clock, which
//! its loop reads once per turn anyway (see `worker::run`): no extra clock
//! read, no syscall, no allocation, a compare per turn. The time-series
//! buckets are not used for this, as `--interval` may be a second or more.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use crate::run::progress::{LiveRate, ProgressWords, RepLine, RepTag};

/// How often the ticker samples the totals and redraws. It sleeps in
/// between: five wake-ups a second of a thread that does a few loads and
/// formats a line, which does not disturb a measurement even on a 2-core
/// machine (and the line is drawn at most this often, too).
pub const TICK: Duration = Duration::from_millis(200);

/// A worker publishes its totals at most this often (its own clock). The
/// staleness of what it published bounds the error of a live rate over a
/// [`TICK`] to a few percent.
pub const PUBLISH_EVERY_NS: u64 = 5_000_000;

/// One worker's totals in the running repetition.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct WorkerSlot {
    bytes: AtomicU64,
    ios: AtomicU64,
    /// In the final flush and close of a write repetition.
    flushing: AtomicBool,
}

/// What the line shows now.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Phase {
    /// Counts [`Live::begin`] calls, to tell repetitions (and retries)
    /// apart.
    seq: u64,
    /// The running repetition; `None` between repetitions, when the
    /// runner's message (the last repetition's figures) stands.
    running: Option<RepTag>,
}

/// Live state of one case, shared by the runner, its workers and the ticker.
#[derive(Debug)]
pub struct Live {
    slots: Box<[WorkerSlot]>,
    /// Origin of the ns times below.
    epoch: Instant,
    /// When the running repetition's first worker started (ns from
    /// `epoch`); `u64::MAX` until then.
    started_ns: AtomicU64,
    /// Taken by the runner thread and the ticker, never by a worker: the
    /// ticker sets the message only while a repetition runs, under it.
    phase: Mutex<Phase>,
    bar: ProgressBar,
    case: String,
    /// The run's time left during the running repetition, and when that
    /// began: the ticker runs it down on the line's prefix.
    left: Mutex<Option<(super::estimate::LeftClock, Instant)>>,
    /// How the line is worded ([`Live::with_words`]; none by default).
    words: ProgressWords,
}

/// A worker's handle on its slot.
#[derive(Debug, Clone, Copy)]
pub struct LiveSlot<'a> {
    live: &'a Live,
    slot: &'a WorkerSlot,
}

impl LiveSlot<'_> {
    /// The worker passed the start barrier at `at` (outside the hot loop).
    pub fn started(&self, at: Instant) {
        let ns = at.saturating_duration_since(self.live.epoch).as_nanos() as u64;
        self.live.started_ns.fetch_min(ns, Ordering::Relaxed);
    }

    /// This repetition's totals so far, this worker's own.
    #[inline]
    pub fn publish(&self, bytes: u64, ios: u64) {
        self.slot.bytes.store(bytes, Ordering::Relaxed);
        self.slot.ios.store(ios, Ordering::Relaxed);
    }

    /// Entering or leaving the final flush and close.
    pub fn flushing(&self, on: bool) {
        self.slot.flushing.store(on, Ordering::Relaxed);
    }
}

impl Live {
    /// `threads` workers per repetition; `case` names the case on the line.
    pub fn new(threads: usize, bar: ProgressBar, case: String) -> Live {
        Live {
            slots: (0..threads.max(1)).map(|_| WorkerSlot::default()).collect(),
            epoch: Instant::now(),
            started_ns: AtomicU64::new(u64::MAX),
            phase: Mutex::new(Phase::default()),
            bar,
            case,
            left: Mutex::new(None),
            words: ProgressWords::NONE,
        }
    }

    /// The line worded with `words` (the progress line's own).
    pub fn with_words(mut self, words: ProgressWords) -> Live {
        self.words = words;
        self
    }

    /// The run's time left as the next repetition starts (its set-up
    /// included): from now on the ticker counts it down.
    pub fn set_left(&self, clock: super::estimate::LeftClock) {
        *self.left.lock().unwrap_or_else(|e| e.into_inner()) = Some((clock, Instant::now()));
    }

    /// The line's prefix: the time left, run down to now.
    fn tick_left(&self) {
        let left = *self.left.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((clock, from)) = left {
            let into = from.elapsed().as_secs_f64();
            self.bar.set_prefix((self.words.left)(clock.at(into)));
        }
    }

    /// Worker `i`'s slot (`None` past the count given to [`Live::new`]).
    pub fn slot(&self, i: usize) -> Option<LiveSlot<'_>> {
        self.slots.get(i).map(|slot| LiveSlot { live: self, slot })
    }

    /// A repetition is about to start (no worker of it runs yet).
    pub fn begin(&self, tag: RepTag) {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        for s in self.slots.iter() {
            s.bytes.store(0, Ordering::Relaxed);
            s.ios.store(0, Ordering::Relaxed);
            s.flushing.store(false, Ordering::Relaxed);
        }
        self.started_ns.store(u64::MAX, Ordering::Relaxed);
        phase.seq += 1;
        phase.running = Some(tag);
    }

    /// The repetition is over (its workers are joined): the ticker leaves
    /// the line to the runner until the next [`Live::begin`].
    pub fn end(&self) {
        self.phase.lock().unwrap_or_else(|e| e.into_inner()).running = None;
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// What the workers published: bytes, requests, whether one flushes.
    pub(crate) fn published(&self) -> (u64, u64, bool) {
        self.slots.iter().fold((0, 0, false), |(b, i, f), s| {
            (
                b + s.bytes.load(Ordering::Relaxed),
                i + s.ios.load(Ordering::Relaxed),
                f || s.flushing.load(Ordering::Relaxed),
            )
        })
    }

    /// One sample at `now_ns` (from the epoch): while a repetition runs,
    /// its rate over the last window on the line. `seen` is the ticker's
    /// memory of which repetition `rate` belongs to.
    fn tick_at(&self, rate: &mut LiveRate, seen: &mut Option<u64>, now_ns: u64) {
        let phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        let Phase {
            seq,
            running: Some(tag),
        } = *phase
        else {
            rate.clear();
            *seen = None;
            return;
        };
        if *seen != Some(seq) {
            rate.clear();
            *seen = Some(seq);
        }
        if !rate.has_baseline() {
            // The window of a new repetition runs from its workers' start,
            // with nothing completed then.
            let started = self.started_ns.load(Ordering::Relaxed);
            if started == u64::MAX {
                return; // still opening engines: the last figures stand
            }
            rate.reset(0, 0, started);
        }
        let (bytes, ios, flushing) = self.published();
        if let Some((mib_s, iops)) = rate.sample(bytes, ios, now_ns) {
            self.bar.set_message((self.words.rep)(&RepLine {
                case: &self.case,
                tag,
                mib_s,
                iops,
                flushing,
            }));
        }
    }
}

/// Run `f` (a case) with a ticker thread updating the line, stopped and
/// joined when `f` returns (or unwinds). Without `live`, just `f`.
pub fn with_ticker<R>(live: Option<&Live>, f: impl FnOnce() -> R) -> R {
    let Some(live) = live else { return f() };
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let ticker = std::thread::Builder::new()
            .name("iopath-progress".into())
            .spawn_scoped(s, || ticker(live, &done));
        // No thread (resource limits): no live figures, the run goes on.
        let Ok(ticker) = ticker else { return f() };
        struct Stop<'a>(&'a AtomicBool, &'a std::thread::Thread);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
                self.1.unpark();
            }
        }
        let _stop = Stop(&done, ticker.thread());
        f()
    })
}

fn ticker(live: &Live, done: &AtomicBool) {
    let mut rate = LiveRate::new();
    let mut seen = None;
    let mut next = Instant::now() + TICK;
    while !done.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            // Woken early by `with_ticker` to stop, or spuriously.
            std::thread::park_timeout(next - now);
            continue;
        }
        next = now + TICK;
        live.tick_at(&mut rate, &mut seen, live.now_ns());
        live.tick_left();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn tag(n: u32) -> RepTag {
        RepTag {
            warmup: false,
            n,
            of: Some(2),
        }
    }

    fn live(threads: usize) -> Live {
        Live::new(threads, ProgressBar::hidden(), "null read 1M Q8T2".into())
            .with_words(crate::report::text::progress::WORDS)
    }

    #[test]
    fn slots_do_not_share_cache_lines() {
        assert!(std::mem::align_of::<WorkerSlot>() >= 128);
        assert_eq!(std::mem::size_of::<WorkerSlot>() % 128, 0);
    }

    #[test]
    fn the_line_follows_the_running_repetition_only() {
        let l = live(2);
        l.bar.set_message("case start".to_string());
        let (mut rate, mut seen) = (LiveRate::new(), None);
        let (a, b) = (l.slot(0).unwrap(), l.slot(1).unwrap());
        assert!(l.slot(2).is_none());

        // Between repetitions, the runner's message stands.
        l.tick_at(&mut rate, &mut seen, 50 * MS);
        assert_eq!(l.bar.message(), "case start");

        l.begin(tag(1));
        // Engines still opening: nothing to say yet.
        l.tick_at(&mut rate, &mut seen, 100 * MS);
        assert_eq!(l.bar.message(), "case start");
        l.started_ns.store(100 * MS, Ordering::Relaxed);
        // 30 MiB and 100 MiB in the 200 ms since the start.
        a.publish(30 << 20, 30);
        b.publish(70 << 20, 70);
        l.tick_at(&mut rate, &mut seen, 300 * MS);
        assert_eq!(
            l.bar.message(),
            "null read 1M Q8T2 · rep 1/2 · 500.0 MiB/s · 500 IOPS"
        );
        // Nothing more completes: the flush shows as such.
        a.flushing(true);
        l.tick_at(&mut rate, &mut seen, 500 * MS);
        assert_eq!(
            l.bar.message(),
            "null read 1M Q8T2 · rep 1/2 · 0.0 MiB/s · 0 IOPS · flushing"
        );

        l.end();
        l.bar.set_message("rep 1 final".to_string());
        l.tick_at(&mut rate, &mut seen, 700 * MS);
        assert_eq!(l.bar.message(), "rep 1 final");

        // The next repetition starts from zero, at its own start.
        l.begin(tag(2));
        assert_eq!(l.published(), (0, 0, false));
        a.started(l.epoch + Duration::from_millis(800));
        b.started(l.epoch + Duration::from_millis(801));
        a.publish(10 << 20, 10);
        l.tick_at(&mut rate, &mut seen, 900 * MS);
        assert_eq!(
            l.bar.message(),
            "null read 1M Q8T2 · rep 2/2 · 100.0 MiB/s · 100 IOPS"
        );
    }

    #[test]
    fn the_ticker_stops_with_the_case() {
        let l = live(1);
        // Returns (rather than waiting on a ticker that never ends).
        assert_eq!(with_ticker(Some(&l), || 7), 7);
        assert_eq!(with_ticker(None, || 8), 8);
    }
}

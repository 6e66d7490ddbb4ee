//! The loop when the engine makes no progress: an engine that accepts no
//! request and has none in flight (aio's EAGAIN) must not make the worker
//! spin past its time budget or for ever (issue 26, item 15).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Duration;

use iopath_io::{Completion, Engine, IoReq, SyncPolicy};

use super::tests::{job, FakeTime};
use super::{run_clocked, WorkerError, WorkerJob, WorkerOut, STALL_GIVE_UP_NS};
use crate::plan::Pattern;

/// An engine that never accepts a request and has none in flight (as
/// aio under EAGAIN): each submit moves the fake time by `step_ns`.
/// Past 100 000 submits it panics: the loop spins.
#[derive(Debug)]
struct StuckEngine {
    time: FakeTime,
    step_ns: u64,
    caps: iopath_io::Caps,
    submits: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Engine for StuckEngine {
    fn caps(&self) -> &iopath_io::Caps {
        &self.caps
    }
    fn buf_mut(&mut self, _slot: u32) -> Option<&mut [u8]> {
        None
    }
    fn submit(
        &mut self,
        _reqs: &[IoReq],
        _done: &mut Vec<Completion>,
    ) -> Result<usize, iopath_io::EngineError> {
        let n = self.submits.fetch_add(1, Ordering::SeqCst);
        assert!(
            n < 100_000,
            "the worker spins on an engine that takes nothing"
        );
        self.time.add(self.step_ns);
        Ok(0)
    }
    fn reap(
        &mut self,
        _min: usize,
        _done: &mut Vec<Completion>,
    ) -> Result<(), iopath_io::EngineError> {
        Ok(())
    }
    fn flush(&mut self, _how: SyncPolicy) -> Result<(), iopath_io::EngineError> {
        Ok(())
    }
    fn in_flight(&self) -> usize {
        0
    }
}

/// Runs `j` on a [`StuckEngine`] moving the clock `step_ns` a submit:
/// the outcome and how many submits it took.
fn run_stuck(j: &WorkerJob, step_ns: u64, stop: bool) -> (Result<WorkerOut, WorkerError>, u64) {
    let time = FakeTime::default();
    let submits = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let eng = StuckEngine {
        time: time.clone(),
        step_ns,
        caps: iopath_io::Caps {
            is_async: true,
            queue_depth: 4,
            offset_align: 1,
            mem_align: 1,
            notes: Vec::new(),
            buffer_nodes: Vec::new(),
        },
        submits: submits.clone(),
    };
    let (barrier, stop) = (Barrier::new(1), AtomicBool::new(stop));
    let out = run_clocked(Box::new(eng), j, &barrier, &stop, None, |_| time.clone());
    (out, submits.load(Ordering::SeqCst))
}

/// Regression (issue 26, item 15): an engine that accepts nothing with
/// nothing in flight (aio returns Ok(0) on EAGAIN) made the loop
/// `continue` without reading the clock: it spun past `--time`
/// forever. Now each such turn reads the clock, and the time budget
/// ends the repetition (an empty one) when it is spent.
#[test]
fn a_worker_whose_engine_takes_nothing_ends_at_its_time_budget() {
    let mut j = job(Pattern::RandWrite);
    j.time_budget = Some(Duration::from_millis(100));
    let (out, submits) = run_stuck(&j, 1_000_000, false);
    let out = out.unwrap();
    assert_eq!(
        (out.write_ios, out.read_ios, out.interrupted),
        (0, 0, false)
    );
    // One submit a fake millisecond: the budget's 100, not more.
    assert_eq!(submits, 100);
}

/// Without a time budget (a byte budget alone), the stalled engine is
/// given up on after [`STALL_GIVE_UP_NS`] of its clock, with an error
/// that says so, rather than spun on for ever.
#[test]
fn a_worker_whose_engine_takes_nothing_gives_up_with_an_error() {
    let mut j = job(Pattern::RandRead);
    j.byte_budget = Some(4096 * 100);
    let step = 100_000_000;
    let (out, submits) = run_stuck(&j, step, false);
    let Err(e @ WorkerError::Stalled { ns }) = out else {
        panic!("{out:?}")
    };
    assert!(ns >= STALL_GIVE_UP_NS, "{ns}");
    assert_eq!(submits, STALL_GIVE_UP_NS / step + 1);
    let m = e.message(std::path::Path::new("/mnt/x/f"));
    assert!(
        m.contains("accepted no request on /mnt/x/f for 5.0 s") && m.contains("aio-max-nr"),
        "{m}"
    );
}

/// The interrupt flag ends such a loop too.
#[test]
fn a_worker_whose_engine_takes_nothing_stops_when_interrupted() {
    let (out, submits) = run_stuck(&job(Pattern::RandWrite), 1, true);
    assert!(out.unwrap().interrupted);
    assert_eq!(submits, 0, "nothing issued once stopped");
}

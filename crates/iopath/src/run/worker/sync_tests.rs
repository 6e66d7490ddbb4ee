//! `--sync-every`: the worker's ordering point, on a fake asynchronous
//! engine that logs what it is asked, in order.

use super::tests::{job, FakeTime};
use super::*;
use iopath_io::{SyncCall, SyncEvery};

/// What the fake engine was asked, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Submit(Op),
    /// A sync, with the requests in flight when it was called.
    Sync(SyncCall, usize),
}

/// Latency of every request, and what a sync takes: far apart, so that a
/// sync inside a request's latency would show.
const REQ_NS: u64 = 10_000;
const SYNC_NS: u64 = 1_000_000_000;

/// Keeps up to `caps.queue_depth` requests in flight, accepts at most
/// three per submit (the rest are handed back), completes the oldest one
/// per reap.
struct AsyncFake {
    time: FakeTime,
    caps: iopath_io::Caps,
    buf: Vec<u8>,
    flight: std::collections::VecDeque<u32>,
    log: std::sync::Arc<std::sync::Mutex<Vec<Event>>>,
}

impl Engine for AsyncFake {
    fn caps(&self) -> &iopath_io::Caps {
        &self.caps
    }
    fn buf_mut(&mut self, _slot: u32) -> Option<&mut [u8]> {
        Some(&mut self.buf)
    }
    fn submit(
        &mut self,
        reqs: &[IoReq],
        _: &mut Vec<Completion>,
    ) -> Result<usize, iopath_io::EngineError> {
        let room = self.caps.queue_depth - self.flight.len();
        let n = reqs.len().min(room).min(3);
        for r in &reqs[..n] {
            self.flight.push_back(r.slot);
            self.log.lock().unwrap().push(Event::Submit(r.op));
        }
        Ok(n)
    }
    fn reap(
        &mut self,
        _min: usize,
        done: &mut Vec<Completion>,
    ) -> Result<(), iopath_io::EngineError> {
        if let Some(slot) = self.flight.pop_front() {
            self.time.add(REQ_NS);
            done.push(Completion {
                slot,
                result: Ok(4096),
            });
        }
        Ok(())
    }
    fn flush(&mut self, _how: SyncPolicy) -> Result<(), iopath_io::EngineError> {
        Ok(())
    }
    fn sync_now(&mut self, call: SyncCall) -> Result<(), iopath_io::EngineError> {
        self.time.add(SYNC_NS);
        self.log
            .lock()
            .unwrap()
            .push(Event::Sync(call, self.flight.len()));
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.flight.len()
    }
}

/// Runs `pattern` for `ios` requests at depth 8 with a sync every `every`
/// writes: what the worker measured, and the engine's log.
fn run_synced(pattern: Pattern, ios: u64, every: SyncEvery) -> (WorkerOut, Vec<Event>) {
    let time = FakeTime::default();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let eng = AsyncFake {
        time: time.clone(),
        caps: iopath_io::Caps {
            is_async: true,
            queue_depth: 8,
            offset_align: 1,
            mem_align: 1,
            notes: Vec::new(),
            buffer_nodes: Vec::new(),
        },
        buf: vec![0; 4096],
        flight: Default::default(),
        log: log.clone(),
    };
    let mut j = job(pattern);
    j.len = 4096 * 64;
    j.byte_budget = Some(4096 * ios);
    j.sync_every = Some(every);
    let (barrier, stop) = (Barrier::new(1), AtomicBool::new(false));
    let out = run_clocked(Box::new(eng), &j, &barrier, &stop, None, |_| time.clone()).unwrap();
    let log = log.lock().unwrap().clone();
    (out, log)
}

/// Writes submitted between two syncs (and after the last one).
fn writes_between_syncs(log: &[Event]) -> Vec<u64> {
    let mut runs = vec![0u64];
    for e in log {
        match e {
            Event::Submit(Op::Write) => *runs.last_mut().unwrap() += 1,
            Event::Submit(Op::Read) => {}
            Event::Sync(..) => runs.push(0),
        }
    }
    runs
}

#[test]
fn sync_every_n_writes_waits_for_nothing_in_flight_then_syncs() {
    let every = SyncEvery {
        writes: 5,
        call: SyncCall::Fdatasync,
    };
    let (out, log) = run_synced(Pattern::RandWrite, 103, every);
    assert_eq!(out.write_ios, 103);
    let syncs: Vec<&Event> = log
        .iter()
        .filter(|e| matches!(e, Event::Sync(..)))
        .collect();
    // floor(103 / 5): each after exactly five writes, none in flight, with
    // the call asked for.
    assert_eq!(syncs.len(), 20);
    assert!(
        syncs
            .iter()
            .all(|e| **e == Event::Sync(SyncCall::Fdatasync, 0)),
        "{log:?}"
    );
    let runs = writes_between_syncs(&log);
    assert_eq!(runs[..20], [5; 20]);
    assert_eq!(runs[20], 3);
    let s = out.syncs.expect("a worker asked to sync counts its syncs");
    assert_eq!(
        (s.count, s.total_ns, s.mean_ns),
        (20, 20 * SYNC_NS, SYNC_NS)
    );
    // The syncs' time is in no request's latency.
    assert!(out.hist.max() < SYNC_NS, "max latency {}", out.hist.max());
}

#[test]
fn sync_every_counts_writes_only_and_syncs_after_the_last_due() {
    let every = SyncEvery {
        writes: 4,
        call: SyncCall::Fsync,
    };
    let (out, log) = run_synced(Pattern::RandRw, 400, every);
    let runs = writes_between_syncs(&log);
    let syncs = runs.len() as u64 - 1;
    // Every sync after four writes, with nothing in flight; the budget
    // ending on a due sync still makes it.
    assert_eq!(syncs, out.write_ios / 4, "{runs:?}");
    assert!(runs[..runs.len() - 1].iter().all(|&w| w == 4), "{runs:?}");
    assert!(runs[runs.len() - 1] < 4);
    assert!(log
        .iter()
        .all(|e| !matches!(e, Event::Sync(c, n) if *c != SyncCall::Fsync || *n != 0)));
    assert_eq!(out.syncs.map(|s| s.count), Some(syncs));
}

#[test]
fn a_worker_asked_for_no_sync_counts_none() {
    let mut j = job(Pattern::Write);
    j.byte_budget = Some(4096 * 10);
    let spec = iopath_io::OpenSpec {
        path: Default::default(),
        write: true,
        block_size: 4096,
        queue_depth: 4,
        sync: SyncPolicy::None,
        span_bytes: 4096 * 4,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    };
    let eng = iopath_io::open(iopath_io::Method::Null, &spec).unwrap();
    let (barrier, stop) = (Barrier::new(1), AtomicBool::new(false));
    let out = run(eng, &j, &barrier, &stop, None).unwrap();
    assert_eq!(out.write_ios, 10);
    assert!(out.syncs.is_none());
}

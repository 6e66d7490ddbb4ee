use std::path::Path;
use std::sync::{Arc, Mutex};

use super::*;
use crate::trace::codec::TraceWriter;
use crate::trace::replay::{split, stream_path, Survey};
use crate::trace::{Event, FileEntry, Header, Op as TOp};

/// What the fake engine saw: each submit's offset and the requests in
/// flight before it, and each sync call with the requests in flight then.
#[derive(Debug, Default)]
struct Log {
    submits: Vec<(u64, usize)>,
    flushes: Vec<(SyncCall, usize)>,
}

/// An asynchronous engine of depth 4 whose requests complete only when
/// reaped, oldest first.
struct Fake {
    caps: iopath_io::Caps,
    bufs: Vec<Vec<u8>>,
    flight: std::collections::VecDeque<IoReq>,
    log: Arc<Mutex<Log>>,
}

impl Engine for Fake {
    fn caps(&self) -> &iopath_io::Caps {
        &self.caps
    }
    fn buf_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.bufs.get_mut(slot as usize).map(|b| b.as_mut_slice())
    }
    fn submit(
        &mut self,
        reqs: &[IoReq],
        _done: &mut Vec<Completion>,
    ) -> Result<usize, iopath_io::EngineError> {
        for r in reqs {
            self.log
                .lock()
                .unwrap()
                .submits
                .push((r.offset, self.flight.len()));
            assert!(self.flight.len() < 4, "more in flight than the depth");
            self.flight.push_back(*r);
        }
        Ok(reqs.len())
    }
    fn reap(
        &mut self,
        min: usize,
        done: &mut Vec<Completion>,
    ) -> Result<(), iopath_io::EngineError> {
        for _ in 0..min.max(1) {
            let Some(r) = self.flight.pop_front() else {
                break;
            };
            done.push(Completion {
                slot: r.slot,
                result: Ok(r.len),
            });
        }
        Ok(())
    }
    fn flush(&mut self, _how: iopath_io::SyncPolicy) -> Result<(), iopath_io::EngineError> {
        panic!("a replay syncs as the program did (sync_now), never by the end flush");
    }
    fn sync_now(&mut self, call: SyncCall) -> Result<(), iopath_io::EngineError> {
        self.log
            .lock()
            .unwrap()
            .flushes
            .push((call, self.flight.len()));
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.flight.len()
    }
}

fn ev(ts_ns: u64, op: TOp, offset: u64, len: u64) -> Event {
    Event {
        ts_ns,
        tid: 1,
        op: Some(op),
        file: Some(0),
        offset,
        len,
        result: len as i64,
        ..Event::default()
    }
}

/// Three writes, a read of the first (an ordering point), an fsync, an
/// fdatasync, then six reads of ranges never written.
fn stream(dir: &Path) -> OpReader {
    let mut events = vec![
        ev(0, TOp::Pwrite, 0, 4096),
        ev(1, TOp::Pwrite, 4096, 4096),
        ev(2, TOp::Pwrite, 8192, 4096),
        ev(3, TOp::Pread, 0, 4096),
        ev(4, TOp::Fsync, 0, 0),
        ev(5, TOp::Fdatasync, 0, 0),
    ];
    events.extend((0..6).map(|i| ev(10 + i, TOp::Pread, (16 + i) * 4096, 4096)));
    let header = Header {
        files: vec![FileEntry {
            path: "/x".into(),
            size_bytes: 1 << 20,
            ..FileEntry::default()
        }],
        events: events.len() as u64,
        ..Header::default()
    };
    let trace = dir.join("t.trace");
    let mut w = TraceWriter::new(std::fs::File::create(&trace).unwrap(), &header).unwrap();
    for e in &events {
        w.event(e).unwrap();
    }
    w.finish().unwrap();
    let s = Survey::of(&trace).unwrap();
    split(&trace, &s, dir).unwrap();
    OpReader::open(&stream_path(dir, 1)).unwrap()
}

/// An asynchronous fake engine at depth 4 logging into `log`.
fn async_fake(log: Arc<Mutex<Log>>) -> Fake {
    Fake {
        caps: iopath_io::Caps {
            is_async: true,
            queue_depth: 4,
            offset_align: 1,
            mem_align: 1,
            notes: Vec::new(),
            buffer_nodes: Vec::new(),
        },
        bufs: vec![vec![0; 4096]; 4],
        flight: Default::default(),
        log,
    }
}

#[test]
fn ordering_points_wait_for_what_is_in_flight_and_syncs_flush() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let fake = async_fake(log.clone());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let run = ThreadRun {
        ops: stream(dir.path()),
        lanes: vec![Lane::new(0, "/x".into(), 1 << 20, 4096, Box::new(fake))],
        timing: ReplayTiming::Fast,
        interval_ns: 1_000_000,
        stop: &stop,
        limit: None,
    };
    let (out, flushes) = replay_thread(run, &std::sync::Barrier::new(1)).unwrap();
    assert_eq!((out.read_ios, out.write_ios, flushes), (7, 3, 2));
    let log = log.lock().unwrap();
    // The writes overlap; the read of the first waits for all three.
    let before: Vec<usize> = log.submits.iter().map(|&(_, n)| n).collect();
    assert_eq!(&before[..4], &[0, 1, 2, 0]);
    // fsync and fdatasync: each the call the program made, nothing in
    // flight.
    assert_eq!(
        log.flushes,
        vec![(SyncCall::Fsync, 0), (SyncCall::Fdatasync, 0)]
    );
    // The six reads after them overlap up to the depth.
    assert_eq!(before[4..].iter().max(), Some(&3));
}

/// A replay thread with a time limit (`--budget`'s share of a repetition)
/// starts no op past it: with a limit already spent, only the first op
/// (always issued) runs, and the thread says it was cut; without one, the
/// whole stream runs.
#[test]
fn a_replay_thread_stops_at_its_limit_and_says_it_was_cut() {
    let run_with = |limit: Option<Duration>| {
        let dir = tempfile::tempdir().unwrap();
        let fake = async_fake(Arc::new(Mutex::new(Log::default())));
        let stop = std::sync::atomic::AtomicBool::new(false);
        let run = ThreadRun {
            ops: stream(dir.path()),
            lanes: vec![Lane::new(0, "/x".into(), 1 << 20, 4096, Box::new(fake))],
            timing: ReplayTiming::Fast,
            interval_ns: 1_000_000,
            stop: &stop,
            limit,
        };
        let (out, _) = replay_thread(run, &std::sync::Barrier::new(1)).unwrap();
        (out.read_ios, out.write_ios, out.timed_out)
    };
    assert_eq!(run_with(Some(Duration::ZERO)), (0, 1, true));
    assert_eq!(run_with(None), (7, 3, false));
}

use super::*;
use crate::trace::codec::TraceWriter;
use crate::trace::{FileEntry, Header};

fn ev(ts_ns: u64, tid: u32, op: Op, offset: u64, len: u64, result: i64) -> Event {
    Event {
        ts_ns,
        tid,
        op: Some(op),
        file: Some(0),
        offset,
        len,
        result,
        ..Event::default()
    }
}

/// Two threads: reads, writes, a fault, an fsync, a failed read and a stat.
fn events() -> Vec<Event> {
    vec![
        ev(0, 7, Op::Open, 0, 0, 3),
        ev(10, 7, Op::Pread, 0, 4096, 4096),
        ev(20, 8, Op::Pwrite, 8192, 512, 512),
        ev(30, 7, Op::FaultRead, 4096, 4096, 0),
        ev(40, 8, Op::Fsync, 0, 0, 0),
        ev(50, 7, Op::Pread, 0, 4096, -9),
        ev(60, 8, Op::Stat, 0, 0, 0),
        ev(70, 7, Op::Close, 0, 0, 0),
    ]
}

fn write_trace(dir: &Path) -> PathBuf {
    let events = events();
    let header = Header {
        files: vec![FileEntry {
            path: "/data/x".into(),
            size_bytes: 1 << 20,
            ..FileEntry::default()
        }],
        events: events.len() as u64,
        duration_ns: 80,
        ..Header::default()
    };
    let path = dir.join("t.trace");
    let mut w = TraceWriter::new(File::create(&path).unwrap(), &header).unwrap();
    for e in &events {
        w.event(e).unwrap();
    }
    w.finish().unwrap();
    path
}

#[test]
fn survey_counts_what_a_replay_runs_and_leaves_out_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let s = Survey::of(&write_trace(dir.path())).unwrap();
    assert_eq!((s.reads, s.writes, s.syncs, s.left_out), (2, 1, 1, 2));
    assert_eq!((s.read_bytes, s.write_bytes, s.max_len), (8192, 512, 4096));
    assert_eq!(s.file_sizes, vec![1 << 20]);
    assert_eq!(s.file_written, vec![true]);
    let tids: Vec<(u32, u64, u64)> = s
        .threads
        .iter()
        .map(|t| (t.tid, t.ops, t.data_ops))
        .collect();
    assert_eq!(tids, vec![(7, 4, 2), (8, 2, 1)]);
    // The 512-byte write is unaligned for 4 KiB, aligned for 512 bytes.
    assert_eq!(s.unaligned_for(512), Some(0));
    assert_eq!(s.unaligned_for(4096), Some(1));
    assert_eq!(s.unaligned_for(1), Some(0));
}

#[test]
fn split_gives_each_thread_its_ops_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path());
    let s = Survey::of(&trace).unwrap();
    let streams = dir.path().join("streams");
    std::fs::create_dir(&streams).unwrap();
    split(&trace, &s, &streams).unwrap();
    let mut r = OpReader::open(&stream_path(&streams, 7)).unwrap();
    let mut kinds = Vec::new();
    while let Some(op) = r.next_op().unwrap() {
        kinds.push((op.kind, op.offset, op.ts_ns));
    }
    assert_eq!(
        kinds,
        vec![
            (ReplayKind::Open, 0, 0),
            (ReplayKind::Read, 0, 10),
            (ReplayKind::Read, 4096, 30),
            (ReplayKind::Close, 0, 70),
        ]
    );
    let mut r = OpReader::open(&stream_path(&streams, 8)).unwrap();
    assert_eq!(
        r.next_op().unwrap().map(|o| o.kind),
        Some(ReplayKind::Write)
    );
    assert_eq!(
        r.next_op().unwrap().map(|o| o.kind),
        Some(ReplayKind::Sync { data: false })
    );
    assert_eq!(r.next_op().unwrap(), None);
}

#[test]
fn a_truncated_trace_fails_the_survey_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path());
    let len = std::fs::metadata(&trace).unwrap().len();
    let f = File::options().write(true).open(&trace).unwrap();
    f.set_len(len - 3).unwrap();
    let err = Survey::of(&trace).unwrap_err();
    assert!(err.is_bad_input());
    assert!(matches!(err, TraceError::Truncated { .. }), "{err}");
}

#[test]
fn records_round_trip() {
    for kind in [
        ReplayKind::Read,
        ReplayKind::Write,
        ReplayKind::Sync { data: true },
        ReplayKind::Sync { data: false },
        ReplayKind::Open,
        ReplayKind::Close,
    ] {
        let op = ReplayOp {
            kind,
            file: 3,
            offset: u64::MAX - 1,
            len: 1 << 40,
            ts_ns: 12345,
        };
        assert_eq!(ReplayOp::decode(&op.encode()), Some(op));
    }
}

#[test]
fn a_thread_touching_too_many_files_is_refused_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let n = MAX_FILES_PER_THREAD as u32 + 1;
    let events: Vec<Event> = (0..n)
        .map(|f| Event {
            file: Some(f),
            ..ev(u64::from(f), 1, Op::Pread, 0, 512, 512)
        })
        .collect();
    let header = Header {
        files: (0..n)
            .map(|i| FileEntry {
                path: format!("/f{i}"),
                size_bytes: 4096,
                ..FileEntry::default()
            })
            .collect(),
        events: u64::from(n),
        ..Header::default()
    };
    let path = dir.path().join("many.trace");
    let mut w = TraceWriter::new(File::create(&path).unwrap(), &header).unwrap();
    for e in &events {
        w.event(e).unwrap();
    }
    w.finish().unwrap();
    match Survey::of(&path).unwrap_err() {
        TraceError::Limit { offset, what } => {
            assert!(offset > 14, "{offset}");
            assert!(what.contains("more than 4096 files"), "{what}");
        }
        e => panic!("{e}"),
    }
}

fn survey_of(events: &[Event]) -> Survey {
    let dir = tempfile::tempdir().unwrap();
    let header = Header {
        files: vec![FileEntry {
            path: "/data/x".into(),
            size_bytes: 1 << 20,
            ..FileEntry::default()
        }],
        events: events.len() as u64,
        duration_ns: 1_000_000,
        ..Header::default()
    };
    let path = dir.path().join("d.trace");
    let mut w = TraceWriter::new(File::create(&path).unwrap(), &header).unwrap();
    for e in events {
        w.event(e).unwrap();
    }
    w.finish().unwrap();
    Survey::of(&path).unwrap()
}

/// Thread 1: synchronous reads whose recorded times overlap (a clock's
/// rounding) count once each; thread 2: io_uring reads all submitted before
/// the first completes (20 in all); thread 3: io_uring reads each done before the next.
#[test]
fn survey_counts_each_threads_own_depth() {
    let timed = |ts: u64, tid: u32, op: Op, dur_ns: u64| Event {
        dur_ns,
        ..ev(ts, tid, op, 0, 4096, 4096)
    };
    let mut events = Vec::new();
    for i in 0..20 {
        events.push(timed(i * 100, 1, Op::Pread, 150));
        events.push(timed(i * 100 + 1, 2, Op::UringRead, 10_000));
        events.push(timed(i * 1000 + 2, 3, Op::UringWrite, 500));
    }
    // Thread 2's reads go in 100 ns apart and take 10 us: all 20 at once.
    events.sort_by_key(|e| e.ts_ns);
    let s = survey_of(&events);
    let depth = |tid| s.threads.iter().find(|t| t.tid == tid).unwrap().depth;
    assert_eq!(depth(1), 1);
    assert_eq!(depth(2), 20);
    assert_eq!(depth(3), 1);
    assert_eq!(s.depth(), 20);
}

/// A trace of one synchronous thread replays at depth 1; a trace with no
/// read or write counts as depth 1.
#[test]
fn a_synchronous_program_has_depth_one() {
    let s = survey_of(&events());
    assert!(s.threads.iter().all(|t| t.depth <= 1), "{:?}", s.threads);
    assert_eq!(s.depth(), 1);
    assert_eq!(Survey::default().depth(), 1);
}

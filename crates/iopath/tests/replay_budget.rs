//! `--budget` bounds a replay as it bounds any run: a repetition of a
//! replay case runs for its share of the budget, the ops it reached are
//! its figures, and a replay longer than that share does not hold the run.

mod common;

use std::path::Path;
use std::time::Duration;

use iopath::trace::codec::TraceWriter;
use iopath::trace::{Event, FileEntry, Header, Op};

/// `n` 4 KiB reads of one thread, `gap_ms` apart.
fn paced_trace(path: &Path, n: u64, gap_ms: u64) {
    let events: Vec<Event> = (0..n)
        .map(|i| Event {
            ts_ns: i * gap_ms * 1_000_000,
            tid: 1,
            op: Some(Op::Pread),
            file: Some(0),
            offset: i * 4096,
            len: 4096,
            result: 4096,
            ..Event::default()
        })
        .collect();
    let header = Header {
        files: vec![FileEntry {
            path: "/x".into(),
            size_bytes: 1 << 20,
            ..FileEntry::default()
        }],
        events: n,
        duration_ns: n * gap_ms * 1_000_000,
        ..Header::default()
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for e in &events {
        w.event(e).unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

/// A trace whose replay lasts 20 s (`--replay-timing recorded`, 41 reads
/// 500 ms apart) under `--budget 3s`: every repetition stops at its share
/// of the budget with part of the trace replayed, and the run ends (before
/// the fix each repetition replayed the whole 20 s).
#[test]
fn a_budget_cuts_a_replay_longer_than_its_share() {
    let dir = common::scratch();
    let trace = dir.path().join("slow.trace");
    paced_trace(&trace, 41, 500);
    // A generous deadline: 12 whole replays would take 4 minutes.
    let out = common::iopath()
        .args(["run", "--json", "-", "--budget", "3s"])
        .args([
            "--methods",
            "buffered,direct",
            "--replay-timing",
            "recorded",
        ])
        .arg("--replay")
        .arg(&trace)
        .arg("--dir")
        .arg(dir.path())
        .timeout(Duration::from_secs(90))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "--budget 3s did not bound a replay of 20 s a repetition, or failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = common::json_of(&out.stdout);
    let cases = r["cases"].as_array().unwrap();
    let reps: Vec<&serde_json::Value> = cases
        .iter()
        .flat_map(|c| c["repetitions"].as_array().unwrap())
        .collect();
    assert!(!reps.is_empty(), "{r}");
    for rep in reps {
        let reads = rep["read_ios"].as_u64().unwrap();
        assert!((1..41).contains(&reads), "{rep}");
    }
    assert_eq!(r["replay"]["ops"], 41);
    // Each case says its repetitions were cut, and at what limit.
    for c in cases
        .iter()
        .filter(|c| c["repetitions"].as_array().is_some_and(|a| !a.is_empty()))
    {
        let cut = c["facts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "replay_cut")
            .unwrap_or_else(|| panic!("no replay_cut fact: {}", c["facts"]));
        assert!(cut["limit_ns"].as_u64().unwrap() > 0, "{cut}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("iopath"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

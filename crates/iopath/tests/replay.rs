//! `iopath run --replay TRACE`: a trace's threads and ops through each
//! method, on its files recreated in --dir and removed afterwards; a bad
//! trace, or one that needs more room than the directory has, exits 2
//! before anything is written.

mod common;

use std::path::Path;
use std::time::Duration;

use iopath::trace::codec::TraceWriter;
use iopath::trace::{Event, FileEntry, Header, Op};

/// Two threads on two files: 4 KiB reads and writes, an fsync, a read of a
/// range written just before (an ordering point), an 8 KiB read; a failed
/// read and a stat that a replay leaves out. Returns the reads and writes
/// a replay issues.
fn write_trace(path: &Path, file_size: u64) -> (u64, u64) {
    let ev = |ts_ns: u64, tid: u32, op: Op, file: u32, offset: u64, len: u64, result: i64| Event {
        ts_ns,
        dur_ns: 1000,
        tid,
        op: Some(op),
        file: Some(file),
        offset,
        len,
        result,
        flags: 0,
    };
    let mut events = vec![ev(0, 7, Op::Open, 0, 0, 0, 3)];
    let (mut reads, mut writes) = (0, 0);
    for i in 0..40u64 {
        let ts = 1000 + i * 10_000;
        let (tid, file) = if i % 2 == 0 { (7, 0) } else { (8, 1) };
        let off = (i * 7919 % 200) * 4096;
        if i % 3 == 0 {
            events.push(ev(ts, tid, Op::Pwrite, file, off, 4096, 4096));
            events.push(ev(ts + 10, tid, Op::Pread, file, off, 4096, 4096));
            (reads, writes) = (reads + 1, writes + 1);
        } else {
            events.push(ev(ts, tid, Op::Pread, file, off, 8192, 8192));
            reads += 1;
        }
        if i % 10 == 9 {
            events.push(ev(ts + 20, tid, Op::Fsync, file, 0, 0, 0));
        }
    }
    events.push(ev(500_000, 7, Op::Pread, 0, 0, 4096, -9));
    events.push(ev(500_010, 8, Op::Stat, 1, 0, 0, 0));
    events.push(ev(500_020, 7, Op::Close, 0, 0, 0, 0));
    let file = |p: &str| FileEntry {
        path: p.into(),
        size_bytes: file_size,
        ..FileEntry::default()
    };
    let header = Header {
        command: vec!["app".into()],
        backend: "ebpf".into(),
        duration_ns: 600_000,
        files: vec![file("/data/a.db"), file("/data/a.log")],
        events: events.len() as u64,
        ..Header::default()
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for e in &events {
        w.event(e).unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
    (reads, writes)
}

fn replay(trace: &Path, dir: &Path, methods: &str) -> std::process::Output {
    common::iopath()
        .args(["run", "--json", "-", "--repeat", "2", "--methods", methods])
        .arg("--replay")
        .arg(trace)
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap()
}

/// Nothing of the replay's is left in `dir`.
fn nothing_left(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("iopath"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_replay_runs_every_op_of_the_trace_through_each_method() {
    let dir = common::scratch();
    let trace = dir.path().join("app.trace");
    let (reads, writes) = write_trace(&trace, 1 << 20);
    let out = replay(&trace, dir.path(), "buffered,direct,uring");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = common::json_of(&out.stdout);
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for c in cases {
        assert_eq!(c["pattern"], "replay", "{c}");
        if c["skip"].is_object() {
            // direct where the file system takes no O_DIRECT (tmpfs).
            assert_eq!(c["method"], "direct", "{c}");
            continue;
        }
        let reps = c["repetitions"].as_array().unwrap();
        assert_eq!(reps.len(), 2, "{c}");
        for rep in reps {
            assert_eq!(rep["read_ios"].as_u64(), Some(reads), "{rep}");
            assert_eq!(rep["write_ios"].as_u64(), Some(writes), "{rep}");
        }
    }
    assert!(!r["verdicts"].as_array().unwrap().is_empty(), "{r}");
    // Synchronous methods replay one op at a time by design: no warning
    // that their depth was capped (--threads does not apply).
    let codes: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert!(!codes.contains(&"depth_capped"), "{codes:?}");
    // The answer's facts: the trace's size, and the pick against buffered.
    let replay = &r["replay"];
    assert_eq!(replay["trace"], "app.trace");
    assert_eq!(replay["ops"].as_u64(), Some(reads + writes + 4), "{replay}");
    assert_eq!(replay["threads"], 2);
    assert_eq!(replay["left_out"], 2);
    let answer = &replay["answer"];
    assert!(answer["pick_ns"].as_u64().unwrap() > 0, "{replay}");
    assert!(answer["against_ns"].as_u64().unwrap() > 0, "{replay}");
    nothing_left(dir.path());
}

#[test]
fn unaligned_ops_keep_direct_out_with_their_count() {
    let dir = common::scratch();
    let trace = dir.path().join("odd.trace");
    // 4 KiB reads at multiples of 1000 bytes: all but the first off any
    // alignment O_DIRECT has.
    let ev = |i: u64| Event {
        ts_ns: i,
        tid: 1,
        op: Some(Op::Pread),
        file: Some(0),
        offset: i * 1000,
        len: 4096,
        result: 4096,
        ..Event::default()
    };
    let events: Vec<Event> = (0..10).map(ev).collect();
    let header = Header {
        files: vec![FileEntry {
            path: "/x".into(),
            size_bytes: 1 << 20,
            ..FileEntry::default()
        }],
        events: events.len() as u64,
        ..Header::default()
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for e in &events {
        w.event(e).unwrap();
    }
    std::fs::write(&trace, w.finish().unwrap()).unwrap();
    let out = replay(&trace, dir.path(), "buffered,direct");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = common::json_of(&out.stdout);
    let direct = &r["cases"][1];
    assert_eq!(direct["method"], "direct");
    let skip = &direct["skip"];
    if skip["code"] == "replay_unaligned" {
        assert_eq!(skip["unaligned_ops"], 9, "{skip}");
        assert_eq!(skip["data_ops"], 10, "{skip}");
    } else {
        // No O_DIRECT on this file system at all.
        assert_eq!(skip["code"], "unusable", "{skip}");
    }
    assert_eq!(r["cases"][0]["repetitions"][0]["read_ios"], 10);
    nothing_left(dir.path());
}

#[test]
fn a_truncated_trace_exits_2_naming_the_byte_offset() {
    let dir = common::scratch();
    let trace = dir.path().join("cut.trace");
    write_trace(&trace, 1 << 20);
    let len = std::fs::metadata(&trace).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&trace)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let out = replay(&trace, dir.path(), "buffered");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cut.trace: byte "), "{err}");
    assert!(err.contains("truncated"), "{err}");
    nothing_left(dir.path());
}

#[test]
fn a_trace_larger_than_the_dir_exits_2_naming_what_it_needs() {
    let dir = common::scratch();
    let trace = dir.path().join("big.trace");
    // Two files of 1 PiB each: no directory here has that room.
    write_trace(&trace, 1 << 50);
    let out = replay(&trace, dir.path(), "buffered");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("replaying big.trace needs 2048.0 TiB"),
        "{err}"
    );
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
    nothing_left(dir.path());
}

/// A trace of `n` 4 KiB reads of one thread, `gap_ms` apart.
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

/// `--replay-timing recorded` keeps the recorded gaps (a replay lasts at
/// least the trace's span from its first op to its last); a factor scales
/// them.
#[test]
fn recorded_timing_keeps_the_gaps_and_a_factor_scales_them() {
    let dir = common::scratch();
    let trace = dir.path().join("paced.trace");
    // 11 reads 20 ms apart: the last starts 200 ms after the first.
    paced_trace(&trace, 11, 20);
    for (timing, at_least_ms) in [("recorded", 200), ("0.5", 100)] {
        let out = common::iopath()
            .args([
                "run",
                "--json",
                "-",
                "--repeat",
                "1",
                "--methods",
                "buffered",
            ])
            .args(["--replay-timing", timing, "--replay"])
            .arg(&trace)
            .arg("--dir")
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = common::json_of(&out.stdout);
        let rep = &r["cases"][0]["repetitions"][0];
        assert_eq!(rep["read_ios"], 11, "{rep}");
        let ns = rep["duration_ns"].as_u64().unwrap();
        assert!(ns >= at_least_ms * 1_000_000, "{timing}: {ns} ns");
        assert_eq!(
            r["replay"]["timing"],
            if timing == "0.5" { "0.5" } else { "recorded" }
        );
    }
    nothing_left(dir.path());
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

/// `iopath record` (strace: no compile wait) of dd copying a file with an
/// fsync, then `run --replay` of that trace: each method issues every read
/// and write the trace holds on a regular file.
#[test]
fn a_recorded_program_replays_with_its_op_counts() {
    if !on_path("strace") || !on_path("dd") {
        common::skip_anyway("strace or dd is not installed (apt-get install strace coreutils)");
        return;
    }
    let dir = common::scratch();
    let src = dir.path().join("in.bin");
    std::fs::write(&src, vec![7u8; 256 << 10]).unwrap();
    let trace = dir.path().join("dd.trace");
    let rec = common::iopath()
        .args(["record", "--backend", "strace", "-o"])
        .arg(&trace)
        .args(["--", "dd"])
        .arg(format!("if={}", src.display()))
        .arg(format!("of={}", dir.path().join("out.bin").display()))
        .args(["bs=16384", "conv=fsync", "status=none"])
        .output()
        .unwrap();
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let survey = iopath::trace::replay::Survey::of(&trace).unwrap();
    assert!(survey.reads >= 16 && survey.writes >= 16, "{survey:?}");
    assert!(survey.syncs >= 1, "{survey:?}");
    let out = replay(&trace, dir.path(), "buffered,uring");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = common::json_of(&out.stdout);
    for c in r["cases"].as_array().unwrap() {
        for rep in c["repetitions"].as_array().unwrap() {
            assert_eq!(rep["read_ios"].as_u64(), Some(survey.reads), "{c}");
            assert_eq!(rep["write_ios"].as_u64(), Some(survey.writes), "{c}");
        }
    }
    nothing_left(dir.path());
}

/// The program's answer is in every report: the terminal's summary, the
/// Markdown and the HTML.
#[test]
fn the_replay_answer_is_in_the_terminal_markdown_and_html() {
    let dir = common::scratch();
    let trace = dir.path().join("app.trace");
    write_trace(&trace, 1 << 20);
    let md = dir.path().join("r.md");
    let html = dir.path().join("r.html");
    let out = common::iopath()
        .args(["run", "--repeat", "2", "--methods", "buffered,uring"])
        .arg("--replay")
        .arg(&trace)
        .arg("--dir")
        .arg(dir.path())
        .arg("--markdown")
        .arg(&md)
        .arg("--html")
        .arg(&html)
        .env("COLUMNS", "400")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = "replaying app.trace (";
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(said), "{stdout}");
    for f in [&md, &html] {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.contains(said), "{}: {text}", f.display());
    }
}

/// io_uring's SQPOLL thread works for the replay: its CPU is the case's,
/// as in any run (`cpu.sqpoll_ns`), not left out of the CPU per op.
#[test]
fn a_replays_sqpoll_thread_cpu_is_counted() {
    let dir = common::scratch();
    let trace = dir.path().join("app.trace");
    write_trace(&trace, 1 << 20);
    let out = replay(&trace, dir.path(), "uring-sqpoll");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = common::json_of(&out.stdout);
    let c = &r["cases"][0];
    if c["skip"].is_object() {
        common::skip_anyway(format!("uring-sqpoll cannot run here: {}", c["skip"]));
        return;
    }
    for rep in c["repetitions"].as_array().unwrap() {
        let ns = rep["cpu"]["sqpoll_ns"].as_u64().unwrap_or(0);
        assert!(ns > 0, "{rep}");
    }
    nothing_left(dir.path());
}

/// A program of synchronous calls (every thread of the trace: one op at a
/// time) replays at its own depth, 1, through an asynchronous method too:
/// the comparison is of paths, not of depths. --qd asks for another depth,
/// and the result says the program's beside it.
#[test]
fn a_synchronous_program_replays_at_its_own_depth_unless_qd_is_given() {
    let dir = common::scratch();
    let trace = dir.path().join("app.trace");
    write_trace(&trace, 1 << 20);
    for (extra, qd, depth) in [
        (None, 1, serde_json::json!({"code": "own", "program": 1})),
        (
            Some("8"),
            8,
            serde_json::json!({"code": "asked", "qd": 8, "program": 1}),
        ),
    ] {
        let mut cmd = common::iopath();
        cmd.args(["run", "--json", "-", "--repeat", "1", "--methods", "uring"])
            .arg("--replay")
            .arg(&trace)
            .arg("--dir")
            .arg(dir.path());
        if let Some(n) = extra {
            cmd.args(["--qd", n]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = common::json_of(&out.stdout);
        assert_eq!(r["replay"]["depth"], depth, "{}", r["replay"]);
        for c in r["cases"].as_array().unwrap() {
            assert_eq!(c["queue_depth"].as_u64(), Some(qd), "{c}");
        }
    }
    nothing_left(dir.path());
}

/// `--budget` bounds a replay as it bounds any run: a repetition of a
/// replay case runs for its share of the budget, the ops it reached are
/// its figures, and a replay longer than that share does not hold the run.
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

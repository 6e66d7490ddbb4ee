//! A real program through every path (docs/replay.md, "SQLite"): Debian's
//! `sqlite3` runs inserts in transactions and indexed selects on a small
//! database, recorded by `iopath record` (eBPF), cut to the database's
//! files by `iopath trace filter`, and replayed by `iopath run --replay`
//! through several methods. The test skips, saying why, without root,
//! bpftrace or sqlite3, and fails instead under
//! IOPATH_REQUIRE_SQLITE_TEST=1.

mod common;

use std::path::Path;

use iopath::trace::codec::open_file;
use iopath::trace::Op;

const REQUIRE_ENV: &str = "IOPATH_REQUIRE_SQLITE_TEST";

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

/// Why the test cannot run here, if it cannot.
fn missing() -> Option<&'static str> {
    if !rustix::process::geteuid().is_root() {
        return Some("recording through eBPF needs root");
    }
    if !on_path("bpftrace") {
        return Some("bpftrace is not installed (apt-get install bpftrace)");
    }
    if !on_path("sqlite3") {
        return Some("sqlite3 is not installed (apt-get install sqlite3)");
    }
    None
}

fn sqlite(db: &Path, script: &Path) {
    let out = std::process::Command::new("sqlite3")
        .args(["-batch"])
        .arg(db)
        .arg(format!(".read {}", script.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The workload: 10 transactions of 50 inserts, then 200 selects through
/// the index; keys from a fixed sequence (the same script every run).
fn workload(path: &Path) {
    let mut s = String::from("PRAGMA cache_size=-256;\n");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut key = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % 1_000_000
    };
    for _ in 0..10 {
        s.push_str("BEGIN;\n");
        for _ in 0..50 {
            s.push_str(&format!(
                "INSERT INTO t(k, v) VALUES ({}, randomblob(300));\n",
                key()
            ));
        }
        s.push_str("COMMIT;\n");
    }
    for _ in 0..200 {
        s.push_str(&format!("SELECT length(v) FROM t WHERE k = {};\n", key()));
    }
    std::fs::write(path, s).unwrap();
}

/// Reads, writes and syncs of `db` in the trace at `trace`.
fn db_ops(trace: &Path, db: &Path) -> (u64, u64, u64) {
    let r = open_file(trace).unwrap();
    let want = db.to_string_lossy().into_owned();
    let id = r
        .header()
        .files
        .iter()
        .position(|f| f.path == want)
        .unwrap_or_else(|| panic!("{want} not among {:?}", r.header().files)) as u32;
    let (mut reads, mut writes, mut syncs) = (0, 0, 0);
    for e in r {
        let e = e.unwrap();
        if e.file != Some(id) || e.result < 0 {
            continue;
        }
        let op = e.op();
        reads += u64::from(op.reads());
        writes += u64::from(op.writes());
        syncs += u64::from(matches!(op, Op::Fsync | Op::Fdatasync));
    }
    (reads, writes, syncs)
}

#[test]
fn a_recorded_sqlite_workload_replays_the_same_ops_through_every_method() {
    if let Some(why) = missing() {
        if std::env::var_os(REQUIRE_ENV).is_some_and(|v| v == "1") {
            panic!("the SQLite replay test cannot run ({why}) but {REQUIRE_ENV}=1 requires it");
        }
        common::skip_anyway(why);
        return;
    }
    let dir = common::scratch();
    let data = dir.path().join("db");
    std::fs::create_dir(&data).unwrap();
    let db = data.join("t.db");
    let setup = dir.path().join("setup.sql");
    std::fs::write(
        &setup,
        "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v BLOB);\n\
         WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 5000)\n\
         INSERT INTO t(k, v) SELECT abs(random()) % 1000000, randomblob(300) FROM c;\n\
         CREATE INDEX t_k ON t(k);\n",
    )
    .unwrap();
    sqlite(&db, &setup);
    let work = dir.path().join("work.sql");
    workload(&work);

    let full = dir.path().join("sqlite.trace");
    let rec = common::iopath()
        .args(["record", "--backend", "ebpf", "-o"])
        .arg(&full)
        .args(["--", "sqlite3", "-batch"])
        .arg(&db)
        .arg(format!(".read {}", work.display()))
        .output()
        .unwrap();
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let trace = dir.path().join("db.trace");
    let cut = common::iopath()
        .args(["trace", "filter"])
        .arg(&full)
        .arg("-o")
        .arg(&trace)
        .arg("--path")
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        cut.status.success(),
        "{}",
        String::from_utf8_lossy(&cut.stderr)
    );
    // The trace has the database's reads, writes and syncs (the cut one
    // as the full one).
    let (reads, writes, syncs) = db_ops(&trace, &db);
    assert!(
        reads > 0 && writes > 0 && syncs > 0,
        "{reads} {writes} {syncs}"
    );
    assert_eq!(db_ops(&full, &db), (reads, writes, syncs));

    let survey = iopath::trace::replay::Survey::of(&trace).unwrap();
    let r = common::run_json(
        dir.path(),
        &[
            "--replay",
            trace.to_str().unwrap(),
            "--methods",
            "buffered,mmap,uring-buffered,direct",
        ],
    );
    let mut ran = 0;
    for c in r["cases"].as_array().unwrap() {
        let reps = c["repetitions"].as_array().unwrap();
        if reps.is_empty() {
            // O_DIRECT cannot issue SQLite's 4- and 16-byte reads and
            // writes (journal headers, the change counter).
            assert_eq!(c["method"], "direct", "{c}");
            assert_eq!(c["skip"]["code"], "replay_unaligned", "{c}");
            continue;
        }
        ran += 1;
        for rep in reps {
            assert_eq!(rep["read_ios"].as_u64(), Some(survey.reads), "{c}");
            assert_eq!(rep["write_ios"].as_u64(), Some(survey.writes), "{c}");
        }
    }
    assert!(ran >= 3, "{r}");
    let answer = &r["replay"]["answer"];
    assert!(answer["pick_ns"].as_u64().is_some_and(|n| n > 0), "{r}");
    assert!(answer["against_ns"].as_u64().is_some_and(|n| n > 0), "{r}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("iopath"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `iopath trace filter` keeps the events on the files under a path (a
/// program's data, not its libraries), renumbered; nothing under the path
/// exits 2 and leaves no file.
#[test]
fn trace_filter_keeps_only_the_events_on_files_under_the_path() {
    use iopath::trace::codec::TraceWriter;
    use iopath::trace::{Event, FileEntry, FileKind, Header};
    let dir = common::scratch();
    let file = |path: &str| FileEntry {
        path: path.into(),
        size_bytes: 1 << 20,
        kind: FileKind::Regular,
    };
    let ev = |op, file, ts_ns| Event {
        ts_ns,
        tid: 1,
        op: Some(op),
        file,
        len: 4096,
        result: 4096,
        ..Event::default()
    };
    let events = [
        ev(Op::FaultRead, Some(0), 1),
        ev(Op::Pread, Some(1), 2),
        ev(Op::Open, None, 3),
        ev(Op::Pwrite, Some(2), 4),
        ev(Op::Fsync, Some(1), 5),
    ];
    let header = Header {
        files: vec![
            file("/usr/lib/libc.so.6"),
            file("/srv/db/a.db"),
            file("/srv/dbx"),
        ],
        events: events.len() as u64,
        ..Header::default()
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for e in &events {
        w.event(e).unwrap();
    }
    let full = dir.path().join("full.trace");
    std::fs::write(&full, w.finish().unwrap()).unwrap();

    let cut = dir.path().join("cut.trace");
    let filter = |out: &Path, path: &str| {
        common::iopath()
            .args(["trace", "filter"])
            .arg(&full)
            .arg("-o")
            .arg(out)
            .args(["--path", path])
            .output()
            .unwrap()
    };
    // `..` is resolved as a name (the recorded paths need not exist here).
    let ok = filter(&cut, "/srv/x/../db");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stderr).contains("kept 1 of 3 files and 2 of 5 events"));
    let r = open_file(&cut).unwrap();
    let paths: Vec<String> = r.header().files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(paths, ["/srv/db/a.db"]);
    assert_eq!(r.header().events, 2);
    let kept: Vec<(Option<Op>, Option<u32>)> =
        r.map(|e| e.unwrap()).map(|e| (e.op, e.file)).collect();
    assert_eq!(
        kept,
        [(Some(Op::Pread), Some(0)), (Some(Op::Fsync), Some(0))]
    );

    let none = dir.path().join("none.trace");
    let refused = filter(&none, "/nowhere");
    assert_eq!(refused.status.code(), Some(2));
    assert!(!none.exists());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

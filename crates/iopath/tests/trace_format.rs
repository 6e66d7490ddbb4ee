//! `iopath trace`: a trace's bad bytes are refused with exit 2 naming the
//! byte offset and what was expected; fio's iolog goes in and comes back
//! out in a form fio's `read_iolog` replays.

mod common;

use std::path::Path;

use iopath::trace::codec::TraceWriter;
use iopath::trace::{Event, FileEntry, Header, Op};

/// A small valid trace: one file, reads and a write.
fn write_trace(path: &Path, file: &Path) {
    let events: Vec<Event> = (0..6u64)
        .map(|i| Event {
            ts_ns: i * 2_000_000,
            dur_ns: 1000,
            tid: 7,
            op: Some(if i == 5 { Op::Pwrite } else { Op::Pread }),
            file: Some(0),
            offset: i * 4096,
            len: 4096,
            result: 4096,
            flags: 0,
        })
        .collect();
    let header = Header {
        command: vec!["app".into()],
        backend: "ebpf".into(),
        duration_ns: 12_000_000,
        files: vec![FileEntry {
            path: file.to_string_lossy().into_owned(),
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
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

fn show(path: &Path) -> std::process::Output {
    common::iopath()
        .args(["trace", "show"])
        .arg(path)
        .output()
        .unwrap()
}

#[test]
fn trace_show_summarises_ops_files_and_threads() {
    let dir = common::scratch();
    let t = dir.path().join("a.trace");
    write_trace(&t, &dir.path().join("data.bin"));
    let out = show(&t);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("pread") && text.contains("pwrite") && text.contains("data.bin"),
        "{text}"
    );
    assert!(text.contains("threads (1)"), "{text}");
}

#[test]
fn a_truncated_trace_exits_2_naming_the_byte_offset() {
    let dir = common::scratch();
    let t = dir.path().join("a.trace");
    write_trace(&t, &dir.path().join("data.bin"));
    let bytes = std::fs::read(&t).unwrap();
    let cut = bytes.len() - 5;
    std::fs::write(&t, &bytes[..cut]).unwrap();
    let out = show(&t);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("truncated") && err.contains("expected"),
        "{err}"
    );
    let offset: u64 = err
        .split("byte ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no byte offset in {err}"));
    assert!(offset <= cut as u64, "{err}");
}

#[test]
fn an_unknown_trace_version_exits_2() {
    let dir = common::scratch();
    let t = dir.path().join("a.trace");
    write_trace(&t, &dir.path().join("data.bin"));
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[8] = 42;
    std::fs::write(&t, &bytes).unwrap();
    let out = show(&t);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("version 42"));
}

#[test]
fn a_file_that_is_not_a_trace_exits_2() {
    let dir = common::scratch();
    let t = dir.path().join("a.trace");
    std::fs::write(&t, b"fio version 2 iolog\n").unwrap();
    let out = show(&t);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("byte 0: expected the magic"));
}

#[test]
fn a_bad_iolog_line_exits_2_naming_the_line_and_leaves_no_trace() {
    let dir = common::scratch();
    let log = dir.path().join("bad.log");
    std::fs::write(&log, "fio version 2 iolog\n/x add\n/x read 0\n").unwrap();
    let t = dir.path().join("x.trace");
    let out = common::iopath()
        .args(["trace", "import-fio"])
        .arg(&log)
        .arg("-o")
        .arg(&t)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3") && err.contains("a length"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the log"
    );
}

/// fio's own `write_iolog` imports; the export replays under fio's
/// `read_iolog` with the same reads and writes.
#[test]
fn a_fio_iolog_round_trips_through_a_trace_and_fio_replays_it() {
    let has_fio = std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok();
    if !has_fio {
        common::skip("fio is not installed (apt-get install fio)");
        return;
    }
    let dir = common::scratch();
    let data = dir.path().join("f.bin");
    let log = dir.path().join("w.log");
    let fio = |args: &[&str]| {
        let out = std::process::Command::new("fio")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "fio {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    fio(&[
        "--name=w",
        &format!("--filename={}", data.display()),
        "--size=1M",
        "--rw=randrw",
        "--bs=4k",
        "--ioengine=psync",
        "--number_ios=40",
        &format!("--write_iolog={}", log.display()),
        "--output=/dev/null",
    ]);
    let t = dir.path().join("w.trace");
    let back = dir.path().join("back.log");
    for (args, out) in [
        (["trace", "import-fio"], &t),
        (["trace", "export-fio"], &back),
    ] {
        let src = if out == &t { &log } else { &t };
        let res = common::iopath()
            .args(args)
            .arg(src)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap();
        assert!(
            res.status.success(),
            "{}",
            String::from_utf8_lossy(&res.stderr)
        );
    }
    let count = |p: &Path, what: &str| {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| l.split_whitespace().nth(2) == Some(what))
            .count()
    };
    assert_eq!(count(&back, "read"), count(&log, "read"));
    assert_eq!(count(&back, "write"), count(&log, "write"));
    let json = fio(&[
        "--name=r",
        &format!("--read_iolog={}", back.display()),
        "--ioengine=psync",
        "--output-format=json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let ios = |d: &str| v["jobs"][0][d]["total_ios"].as_u64().unwrap() as usize;
    assert_eq!(ios("read"), count(&log, "read"));
    assert_eq!(ios("write"), count(&log, "write"));
}

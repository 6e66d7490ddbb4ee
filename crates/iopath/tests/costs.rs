//! Costs per I/O and the kernel's deferred work (issue 29, items 2 and 3):
//! a case's own device bytes are told apart from another process's
//! traffic on the same disk, and a buffered write is charged its
//! write-back (the kernel threads' CPU beyond an idle baseline).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// Another process reading `file` with O_DIRECT, over and over, until
/// dropped (killed and reaped).
struct Reader(Child);

impl Reader {
    /// Start the reader and wait until it has read `file` once: the shell
    /// says `started` on its stdout after its first `dd` (a real signal,
    /// with a generous deadline).
    fn start(file: &std::path::Path) -> Reader {
        let dd = format!(
            "dd if={} of=/dev/null bs=1M iflag=direct status=none",
            file.display()
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{dd} || exit 1; echo started; while :; do {dd} || exit 1; done"
            ))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let reader = Reader(child);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the other reader never said it started");
        assert_eq!(line.trim(), "started", "the other reader failed");
        reader
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn summary<'a>(v: &'a Value, method: &str, pattern: &str) -> &'a Value {
    &common::case(v, method, pattern)["summary"]
}

fn measured(v: &Value, method: &str, pattern: &str) -> Vec<Value> {
    common::case(v, method, pattern)["repetitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["warmup"] != true)
        .cloned()
        .collect()
}

/// The done-when of item 2: a cold buffered read beside a second process
/// reading another file on the same disk reports its own device bytes at
/// about 1.0x what it asked, the other process's apart, and no read-ahead
/// blame.
#[test]
fn a_cold_buffered_read_beside_another_reader_has_its_own_bytes_apart() {
    let dir = common::scratch();
    let other = dir.path().join("other.bin");
    let status = Command::new("dd")
        .args(["if=/dev/urandom", "bs=1M", "count=64", "status=none"])
        .arg(format!("of={}", other.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let reader = Reader::start(&other);
    let v = common::run_json(
        dir.path(),
        &[
            "--methods",
            "buffered",
            "--patterns",
            "read",
            "--size",
            "64M",
            "--cache",
            "cold",
            // Each repetition reads the whole file: one cut short by the
            // time limit on a busy machine has read ahead past where it
            // stopped (its own bytes, rightly above 1.0x).
            "--time",
            "pass",
            "--repeat",
            "3",
        ],
    );
    drop(reader);
    let s = summary(&v, "buffered", "read");
    if s["device"].is_null() || s["process_io"].is_null() {
        common::skip_anyway("no block device or no task I/O accounting under the test directory");
        return;
    }
    let costs = &s["costs"];
    let own = costs["own_device_per_byte"].as_f64().unwrap();
    let other_share = costs["other_device_per_byte"].as_f64().unwrap();
    assert!((0.95..=1.1).contains(&own), "own {own}: {costs}");
    // The reader read all along with O_DIRECT: the disk moved its bytes too,
    // and they are the other figure, not the case's.
    assert!(other_share > 0.0, "no other traffic seen: {s}");
    let device = s["device_fraction"].as_f64().unwrap();
    assert!(
        (device - (own + other_share)).abs() < 0.2,
        "device {device} vs own {own} + other {other_share}"
    );
    let blamed = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "read_amplification");
    assert!(!blamed, "{}", v["warnings"]);
}

/// The done-when of item 3: a buffered write reports the kernel's
/// deferred work (write-back, the journal) and is charged it in its CPU
/// per I/O where it exceeds the idle baseline's spread; a direct write has
/// no write-back and keeps its own CPU (the estimate shown beside, as a
/// read's share is).
#[test]
fn a_page_cache_write_is_charged_its_write_back_and_a_direct_write_or_read_is_not() {
    let dir = common::scratch();
    let v = common::run_json(
        dir.path(),
        &[
            "--methods",
            "buffered,direct",
            "--patterns",
            "write,read",
            "--size",
            "32M",
            "--repeat",
            "3",
        ],
    );
    if summary(&v, "buffered", "write")["deferred"].is_null() {
        common::skip_anyway("the kernel threads' CPU cannot be read here (/proc/PID/schedstat)");
        return;
    }
    for (method, pattern) in [
        ("buffered", "write"),
        ("direct", "write"),
        ("buffered", "read"),
    ] {
        for m in &measured(&v, method, pattern) {
            let d = &m["deferred"];
            let estimate = d["estimate_ns"].as_f64().unwrap();
            let spread = d["baseline_spread_ns"].as_f64().unwrap();
            let charged = method == "buffered" && pattern == "write" && estimate > spread;
            assert_eq!(d["charged"], charged, "{method} {pattern}: {d}");
            let ios = m["ios"].as_f64().unwrap();
            let own = m["cpu"]["own_ns_per_io"].as_f64().unwrap();
            let shown = m["cpu"]["ns_per_io"].as_f64().unwrap();
            let expected = own + if charged { estimate / ios } else { 0.0 };
            assert!(
                (shown - expected).abs() <= 1e-6 * shown.max(1.0),
                "{method} {pattern}: ns_per_io {shown}, own {own}, {estimate} ns / {ios} ios"
            );
            let per_io = m["costs"]["deferred_ns_per_io"].as_f64().unwrap();
            assert!((per_io - estimate / ios).abs() <= 1e-6 * per_io.max(1.0));
        }
    }
    // Writing back 32 MiB and committing the journal is kernel threads'
    // work on a real disk: some repetition of the buffered write saw it.
    if !summary(&v, "buffered", "write")["device"].is_null() {
        let reps = measured(&v, "buffered", "write");
        assert!(
            reps.iter()
                .any(|m| m["deferred"]["kernel_threads_ns"].as_u64().unwrap() > 0),
            "{reps:?}"
        );
    }
}

/// Costs per I/O in the result: faults and switches for every case, read
/// and write calls and copies where the kernel counts them.
#[test]
fn the_costs_per_io_say_what_each_method_copies_and_calls() {
    let dir = common::scratch();
    let v = common::run_json(
        dir.path(),
        &[
            // One thread: a worker's own counters cost it one read per
            // repetition, which 32 threads of 8 requests each would show.
            "--concurrency",
            "1",
            "--methods",
            "buffered,mmap,uring-buffered",
            "--patterns",
            "read",
            "--size",
            "16M",
            "--bs",
            "64k",
            "--repeat",
            "2",
        ],
    );
    let costs = |m: &str| summary(&v, m, "read")["costs"].clone();
    let b = costs("buffered");
    if b["copied_per_byte"].is_null() {
        common::skip_anyway("no task I/O accounting here (/proc/thread-self/io)");
        return;
    }
    // pread through the page cache: one call and one copy per byte.
    let copied = b["copied_per_byte"].as_f64().unwrap();
    assert!((0.99..1.05).contains(&copied), "{b}");
    let calls = b["rw_calls_per_io"].as_f64().unwrap();
    assert!((1.0..1.1).contains(&calls), "{b}");
    // mmap: no copy by the kernel, the pages are faulted in.
    let m = costs("mmap");
    assert_eq!(m["copied_per_byte"].as_f64(), Some(0.0), "{m}");
    assert!(m["minflt_per_io"].as_f64().unwrap() + m["majflt_per_io"].as_f64().unwrap() > 0.0);
    // io_uring's calls are not counted: no figure rather than a wrong one.
    let u = costs("uring-buffered");
    assert!(u.get("rw_calls_per_io").is_none(), "{u}");
    let text = common::iopath()
        .args(["report", "--explain"])
        .arg({
            let p = dir.path().join("r.json");
            std::fs::write(&p, v.to_string()).unwrap();
            p
        })
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("costs per I/O:"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
}

//! Each request's time taken apart (issue 29, item 1): with
//! `--latency-split`, as root with bpftrace, the parts (submission,
//! block-layer queue, device, completion) measured on a loop device over
//! /dev/shm add up to the measured mean latency at one request in flight;
//! without the tracer the `/sys/block` averages stand, and say why.

mod common;

use std::path::Path;
use std::process::Command;

use common::block::{Loop, Mount};
use serde_json::Value;

/// An ext4 file system on a loop device over a file in /dev/shm (a steady
/// device), mounted in a scratch directory; all undone when dropped
/// (the mount before the loop device, the image last).
struct ShmDisk {
    _mount: Mount,
    _loop: Loop,
    image: tempfile::NamedTempFile,
    dir: tempfile::TempDir,
}

impl ShmDisk {
    fn new() -> Option<ShmDisk> {
        let image = tempfile::Builder::new()
            .prefix("iopath-split-")
            .tempfile_in("/dev/shm")
            .ok()?;
        image.as_file().set_len(160 << 20).ok()?;
        let lo = Loop::attach(image.path(), false)?;
        let ok = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(lo.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            common::skip("mkfs.ext4 failed on the loop device");
            return None;
        }
        let dir = common::scratch();
        let mount = Mount::new(lo.path(), dir.path(), &[])?;
        Some(ShmDisk {
            _mount: mount,
            _loop: lo,
            image,
            dir,
        })
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }
}

fn summary<'a>(v: &'a Value, method: &str) -> &'a Value {
    &common::case(v, method, "randread")["summary"]
}

/// The done-when of item 1 at depth 1: for `direct` (psync, O_DIRECT
/// pread), the parts measured through the tracepoints, with each call's
/// way in and out (`entry_ns`, measured by calls that move nothing), add
/// up to the measured mean latency within 10%. (`buffered`'s page-cache
/// hits of a few microseconds are checked by bench/latency-split-check.sh
/// and docs/methodology.md 6c: on a busy 2-CPU machine they vary more.)
#[test]
fn the_parts_of_a_direct_read_add_up_to_the_mean_at_depth_1() {
    if !can_trace() {
        return;
    }
    let Some(disk) = ShmDisk::new() else { return };
    let v = common::run_json(
        disk.dir(),
        &[
            "--methods",
            "direct",
            "--patterns",
            "randread",
            "--bs",
            "4k",
            "--qd",
            "1",
            "--size",
            "64M",
            "--cache",
            "cold",
            "--time",
            "1s",
            "--repeat",
            "3",
            "--latency-split",
        ],
    );
    let s = summary(&v, "direct");
    let split = &s["latency_split"];
    assert_eq!(split["source"], "tracepoints", "{split}");
    let part = |name: &str| {
        split[name]
            .as_f64()
            .unwrap_or_else(|| panic!("no {name} in {split}"))
    };
    let parts =
        part("submission_ns") + part("queue_ns") + part("device_ns") + part("completion_ns");
    // A call that saw no request of its own (rare for O_DIRECT) is timed
    // whole, apart.
    let (calls, served) = (part("calls"), part("calls_without_request"));
    let whole = |ns: &str, n: &str| split[ns].as_f64().unwrap_or(0.0) * part(n);
    let all = calls + served + part("calls_unmatched");
    let parts = (calls * parts
        + whole("cached_ns", "calls_without_request")
        + whole("unmatched_ns", "calls_unmatched"))
        / all;
    // Every call's way in and out, measured apart (a few hundred ns).
    let entry = part("entry_ns");
    assert!(entry > 0.0 && entry < parts / 4.0, "{split}");
    assert!(part("entry_calls") >= 1000.0, "{split}");
    let parts = parts + entry;
    let mean = s["lat_ns"]["mean"].as_f64().unwrap();
    let off = (parts - mean).abs() / mean;
    assert!(
        off <= 0.10,
        "parts {parts:.0} ns vs mean {mean:.0} ns ({:.1}% apart): {split}",
        off * 100.0
    );
    assert!(split["requests"].as_u64().unwrap() > 0, "{split}");
    drop(disk);
}

/// True where the tracer can run (root, bpftrace); says why not.
fn can_trace() -> bool {
    if !rustix::process::geteuid().is_root() {
        common::skip("not root: the tracepoints need it");
        return false;
    }
    if Command::new("bpftrace").arg("--version").output().is_err() {
        common::skip_anyway("bpftrace is not installed (apt-get install bpftrace)");
        return false;
    }
    true
}

/// Field `k` of a latency split, a number.
fn num(split: &Value, k: &str) -> f64 {
    split[k]
        .as_f64()
        .unwrap_or_else(|| panic!("no {k} in {split}"))
}

/// The traced block time per read within 10% of the `/sys/block` average,
/// and `slack_ns` more.
fn assert_block_agrees(split: &Value, slack_ns: f64) {
    let (block, sys) = (num(split, "block_ns"), num(split, "disk_stat_ns"));
    let off = (block - sys).abs();
    assert!(
        off <= 0.10 * sys + slack_ns,
        "{off:.0} ns ({:.1}%) apart: {split}",
        off / sys * 100.0
    );
}

/// One traced case on `disk`: the summary of `method` on `pattern`.
fn traced(disk: &ShmDisk, method: &str, pattern: &str, qd: &str) -> Value {
    let v = common::run_json(
        disk.dir(),
        &[
            "--methods",
            method,
            "--patterns",
            pattern,
            "--bs",
            "4k",
            "--qd",
            qd,
            "--size",
            "64M",
            "--cache",
            "cold",
            "--time",
            "1s",
            "--repeat",
            "3",
            "--latency-split",
        ],
    );
    common::case(&v, method, pattern)["summary"].clone()
}

/// `uring` at depth 32 (one thread): the traced block time per read
/// request (`block_ns`, every read on the disk; on Linux 6.5+ between the
/// block layer's accounting tracepoints, else bio queued to completed) is what
/// `/sys/block`'s ticks average over the same repetitions, within 10%;
/// and the parts stay within the mean.
#[test]
fn at_depth_32_the_traced_block_time_agrees_with_sys_block() {
    if !can_trace() {
        return;
    }
    let Some(disk) = ShmDisk::new() else { return };
    let s = traced(&disk, "uring", "randread", "32");
    let split = &s["latency_split"];
    assert_eq!(split["source"], "tracepoints", "{split}");
    let f = |k: &str| num(split, k);
    assert_block_agrees(split, 0.0);
    assert!(split["withheld"].is_null(), "{split}");
    let mean = s["lat_ns"]["mean"].as_f64().unwrap();
    assert!(f("queue_ns") + f("device_ns") <= mean * 1.1, "{split}");
}

/// `direct` at depth 1 on the loop device: the block time per read is
/// traced over the interval `/sys/block` counts (the block layer's own
/// accounting tracepoints, Linux 6.5+: `block_timing` says so) and
/// agrees with it within 10% and the probes' own cost. Timed from the bio
/// queued to the request completed, as before, it read 0.82-0.88 in some
/// runs of `bench/latency-split-check.sh` and 0.97-1.01 in others (the
/// completion's callbacks, which `/sys/block` counts and that timing
/// does not, vary with load), so this test cannot tell the two timings
/// apart by the ratio alone: it checks which one was used, and fails if
/// the accounting's requests go unpaired.
#[test]
fn a_direct_reads_block_time_agrees_with_sys_block() {
    if !can_trace() {
        return;
    }
    let release = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    let mut v = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    if (v.next(), v.next()) < (Some(6), Some(5)) {
        common::skip_anyway(format!("Linux {release}: block_io_done came in 6.5"));
        return;
    }
    let Some(disk) = ShmDisk::new() else { return };
    let s = traced(&disk, "direct", "randread", "1");
    let split = &s["latency_split"];
    assert_eq!(split["block_timing"], "accounting", "{split}");
    // 10%, and 1 us for the probes' own cost per request (about half).
    assert_block_agrees(split, 1000.0);
    drop(disk);
}

/// `uring` at depth 32 (one thread): each request is timed from iopath
/// handing it over to reaping it, through the ring (the kernel's
/// io_uring tracepoints against iopath's own stamps), so the parts add up
/// to the measured mean within 10% at depth N too: the waits in the ring
/// are measured parts (submission, completion), not unaccounted time
/// (before: 0.52-0.67 of the mean).
#[test]
fn at_depth_32_the_ring_parts_add_up_to_the_mean() {
    if !can_trace() {
        return;
    }
    let Some(disk) = ShmDisk::new() else { return };
    let s = traced(&disk, "uring", "randread", "32");
    let split = &s["latency_split"];
    let f = |k: &str| num(split, k);
    let ring = &split["ring"];
    assert_eq!(ring["requests"], s["lat_ns"]["count"], "{split}");
    assert!(ring["sq_ns"].as_f64().unwrap() >= 0.0, "{split}");
    // Every request in one bucket: tied to its block request, or not.
    let buckets = f("calls") + f("calls_without_request") + f("calls_unmatched");
    assert_eq!(buckets, f("ios"), "{split}");
    let four = f("submission_ns") + f("queue_ns") + f("device_ns") + f("completion_ns");
    let whole = |k: &str, n: &str| split[k].as_f64().unwrap_or(0.0) * f(n);
    let parts = (four * f("calls")
        + whole("cached_ns", "calls_without_request")
        + whole("unmatched_ns", "calls_unmatched"))
        / buckets;
    let mean = s["lat_ns"]["mean"].as_f64().unwrap();
    let off = (parts - mean).abs() / mean;
    assert!(
        off <= 0.10,
        "parts {parts:.0} ns vs mean {mean:.0} ns ({:.1}% apart): {split}",
        off * 100.0
    );
    drop(disk);
}

/// A cold sequential `buffered` read: read-ahead makes fewer requests
/// than calls, and every call is in one bucket (a request of its own,
/// served by the cache, or unmatched): the buckets are the calls made.
#[test]
fn a_cold_buffered_read_has_device_time_and_cached_calls_for_the_calls_made() {
    if !can_trace() {
        return;
    }
    let Some(disk) = ShmDisk::new() else { return };
    let s = traced(&disk, "buffered", "read", "1");
    let split = &s["latency_split"];
    let n = |k: &str| {
        split[k]
            .as_u64()
            .unwrap_or_else(|| panic!("no {k} in {split}"))
    };
    let calls = n("calls") + n("calls_without_request") + n("calls_unmatched");
    assert_eq!(calls, s["lat_ns"]["count"].as_u64().unwrap(), "{split}");
    assert_eq!(calls, n("ios"), "{split}");
    // Read-ahead: a request serves many calls, most calls find the cache.
    assert!(n("requests") > 0 && n("requests") < calls / 4, "{split}");
    assert!(n("calls_without_request") > calls / 2, "{split}");
    assert!(split["device_ns"].as_f64().unwrap() > 0.0, "{split}");
    assert!(split["runnable_total_ns"].as_f64().is_some(), "{split}");
}

/// A cold sequential `buffered` read: read-ahead's bios are larger than
/// the loop device takes, so most of its requests are split off a bio
/// and queue none of their own. Paired at their allocation (on Linux 6.5+
/// each request is timed between the block layer's accounting
/// tracepoints, whatever bio it came from), the traced block time per
/// read is what `/sys/block` averages, within 10% (before: 0.86).
#[test]
fn a_cold_sequential_reads_block_time_agrees_with_sys_block() {
    if !can_trace() {
        return;
    }
    let Some(disk) = ShmDisk::new() else { return };
    let s = traced(&disk, "buffered", "read", "1");
    let split = &s["latency_split"];
    assert_block_agrees(split, 0.0);
    drop(disk);
}

/// Without `--latency-split` the averages of `/sys/block/*/stat` are the
/// split: the block layer and the device together, the rest unmeasured
/// (never a remainder shown as a part), and no fallback said (none was
/// asked for).
#[test]
fn without_the_tracer_the_split_is_the_disk_stat_average_and_says_nothing_else() {
    let Some(disk) = ShmDisk::new() else { return };
    let v = common::run_json(
        disk.dir(),
        &[
            "--methods",
            "direct",
            "--patterns",
            "randread",
            "--qd",
            "1",
            "--size",
            "16M",
            "--time",
            "300ms",
        ],
    );
    let split = &summary(&v, "direct")["latency_split"];
    assert_eq!(split["source"], "disk_stat", "{split}");
    assert!(split["device_ns"].as_f64().unwrap() > 0.0, "{split}");
    for absent in ["submission_ns", "queue_ns", "completion_ns", "fallback"] {
        assert!(split[absent].is_null(), "{absent} in {split}");
    }
    let _ = &disk.image;
}

/// `--latency-split` where bpftrace cannot be found: the run goes on, and
/// each case's split is the averages with the reason (`no_bpftrace`, or
/// `not_root` when not root) said as a fact.
#[test]
fn without_bpftrace_the_split_falls_back_to_the_averages_and_says_why() {
    let Some(disk) = ShmDisk::new() else { return };
    let out = common::iopath()
        .env("PATH", "/nonexistent")
        .args(["run", "--dir"])
        .arg(disk.dir())
        .args([
            "--methods",
            "direct",
            "--patterns",
            "randread",
            "--qd",
            "1",
            "--size",
            "16M",
            "--time",
            "300ms",
            "--repeat",
            "1",
            "--latency-split",
            "--json",
            "-",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::json_of(&out.stdout);
    let split = &summary(&v, "direct")["latency_split"];
    assert_eq!(split["source"], "disk_stat", "{split}");
    let why = if rustix::process::geteuid().is_root() {
        "no_bpftrace"
    } else {
        "not_root"
    };
    assert_eq!(split["fallback"], why, "{split}");
}

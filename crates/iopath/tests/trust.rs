//! Do the numbers describe the device? Cold direct reads must be seen by the
//! disk, warm buffered reads must not, and the page cache a method leaves
//! behind must show. These tests read system-wide disk counters, so they
//! run one at a time (a lock) in their own test binary, away from the
//! other suites' I/O. No timing assertions.

use std::path::{Path, PathBuf};
use std::process::Command as Std;
use std::sync::Mutex;

use serde_json::Value;

mod common;
use common::*;

static SERIAL: Mutex<()> = Mutex::new(());

fn summary<'a>(v: &'a Value, method: &str, pattern: &str) -> &'a Value {
    let c = case(v, method, pattern);
    assert!(c["error"].is_null() && c["skipped"].is_null(), "{c}");
    &c["summary"]
}

#[test]
fn cold_direct_read_is_served_by_the_device() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "64M",
            "--methods",
            "direct",
            "--patterns",
            "read",
            "--bs",
            "1M",
        ],
    );
    if v["system"]["device_stack"].is_null() {
        eprintln!("skipped: no block device under {}", dir.path().display());
        return;
    }
    let s = summary(&v, "direct", "read");
    let asked = s["io_bytes"].as_u64().unwrap();
    let dev = s["device"]["read_bytes"].as_u64().unwrap();
    // O_DIRECT keeps no cache: the repetition ran its whole time limit,
    // starting over at the end of the file, and every pass read the device.
    assert!(asked >= 64 << 20 && asked % (1 << 20) == 0, "{asked}");
    assert!(
        dev as f64 >= 0.95 * asked as f64,
        "device read {dev} of {asked}"
    );
    assert!(s["device_fraction"].as_f64().unwrap() >= 0.95);
    assert_eq!(
        s["memory"]["page_cache_bytes"], 0,
        "direct I/O leaves no pages"
    );
    assert!(s["cpu"]["user_ns"].as_u64().unwrap() + s["cpu"]["sys_ns"].as_u64().unwrap() > 0);
}

#[test]
fn warm_buffered_read_comes_from_memory_and_says_so() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    // Disk counters are system-wide: another process's burst can land in
    // one attempt, so one clean attempt in three is required.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let v = run_json(
            dir.path(),
            &[
                "--size",
                "64M",
                "--methods",
                "buffered",
                "--patterns",
                "read",
                "--bs",
                "1M",
                "--cache",
                "warm",
            ],
        );
        let s = summary(&v, "buffered", "read");
        assert!(
            codes(&v).contains(&"file_fits_in_memory".to_string()),
            "{:?}",
            codes(&v)
        );
        assert!(
            s["memory"]["page_cache_bytes"].as_u64().unwrap() >= 60 << 20,
            "{s}"
        );
        let asked = s["io_bytes"].as_u64().unwrap();
        let Some(dev) = s["device"]["read_bytes"].as_u64() else {
            eprintln!("no block device: the device side is not checked");
            return;
        };
        if (dev as f64) < 0.10 * asked as f64 {
            return;
        }
        seen.push(dev);
    }
    panic!(
        "a warm buffered read of 64 MiB read {seen:?} bytes from the device in each of 3 attempts"
    );
}

#[test]
fn buffered_read_fills_the_page_cache_and_direct_read_does_not() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "32M",
            "--methods",
            "buffered,direct",
            "--patterns",
            "read",
            "--bs",
            "1M",
        ],
    );
    let b = summary(&v, "buffered", "read");
    let d = summary(&v, "direct", "read");
    // Cold before each repetition; one pass afterwards.
    assert_eq!(b["memory"]["page_cache_before_bytes"], 0, "{b}");
    assert_eq!(d["memory"]["page_cache_before_bytes"], 0, "{d}");
    assert!(
        b["memory"]["page_cache_bytes"].as_u64().unwrap() >= 30 << 20,
        "{b}"
    );
    assert_eq!(d["memory"]["page_cache_bytes"], 0, "{d}");
}

/// Detaches the loop device and unmounts on drop, also when an assertion fails.
struct LoopMount {
    dev: String,
    mnt: PathBuf,
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let _ = Std::new("umount").arg(&self.mnt).status();
        let _ = Std::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// Set up an ext4 file system on a loop device over a file in `dir`;
/// `None` (skipped, with the reason) where that cannot be done.
fn loop_mount(dir: &Path, direct_io: bool) -> Option<LoopMount> {
    let have = |t: &str| {
        Std::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !rustix::process::geteuid().is_root() || !have("losetup") || !have("mkfs.ext4") {
        eprintln!("skipped: needs root, losetup and mkfs.ext4");
        return None;
    }
    let img = dir.join(format!("disk-{direct_io}.img"));
    std::fs::File::create(&img)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let dio = format!("--direct-io={}", if direct_io { "on" } else { "off" });
    let out = Std::new("losetup")
        .args(["--find", "--show", &dio])
        .arg(&img)
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!(
            "skipped: losetup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let mnt = dir.join(format!("mnt-{direct_io}"));
    std::fs::create_dir(&mnt).unwrap();
    let guard = LoopMount {
        dev: dev.clone(),
        mnt: mnt.clone(),
    };
    assert!(Std::new("mkfs.ext4")
        .args(["-q", "-F", &dev])
        .status()
        .unwrap()
        .success());
    assert!(Std::new("mount")
        .arg(&dev)
        .arg(&mnt)
        .status()
        .unwrap()
        .success());
    Some(guard)
}

#[test]
fn the_walk_finds_the_disk_under_a_loop_mount() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch();
    for direct_io in [false, true] {
        let Some(m) = loop_mount(dir.path(), direct_io) else {
            return;
        };
        let v = run_json(
            &m.mnt,
            &[
                "--size",
                "32M",
                "--methods",
                "direct",
                "--patterns",
                "read",
                "--bs",
                "1M",
            ],
        );
        let stack = &v["system"]["device_stack"];
        let loop_name = m.dev.trim_start_matches("/dev/");
        assert_eq!(stack["top"], loop_name, "{stack}");
        let path: Vec<&str> = stack["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert_eq!(path[0], loop_name);
        assert!(
            path.len() >= 2,
            "the walk went below the loop device: {path:?}"
        );
        let leaves = stack["leaves"].as_array().unwrap();
        assert!(
            !leaves.is_empty() && leaves.iter().all(|l| l != loop_name),
            "{stack}"
        );
        let buffered = stack["buffered_loops"].as_array().unwrap();
        let dio =
            std::fs::read_to_string(format!("/sys/block/{loop_name}/loop/dio")).unwrap_or_default();
        let s = summary(&v, "direct", "read");
        let codes = codes(&v);
        if dio.trim() == "1" {
            // The loop device reads its file with O_DIRECT: the disk sees it all.
            assert!(buffered.is_empty(), "{stack}");
            assert!(s["device_fraction"].as_f64().unwrap() >= 0.95, "{s}");
        } else {
            // Buffered loop: the page cache below may serve the reads, and
            // iopath must say so.
            assert_eq!(buffered.len(), 1, "{stack}");
            assert!(codes.contains(&"loop_buffered".to_string()), "{codes:?}");
        }
        drop(m);
    }
}

//! EIO mid-run: a small FUSE file system written for these tests
//! (tests/common/fuse.rs) serves one file that starts failing every read
//! and write with EIO when told to, once the first job of a run is
//! measured. Used directly (`--file MNT/data.bin`) and as the backing file
//! of a loop device (`--file /dev/loopN`). Either way the failed cases say
//! EIO, name the target, the offset where known and the next step; the
//! cases measured before are kept in `--json FILE`; nothing is left; the
//! run exits 1.
//!
//! Skipped, with the reason printed, where the machine has no FUSE or
//! refuses the mount or the loop device.

mod common;
#[path = "common/fuse.rs"]
mod fuse;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::block::Loop;
use common::{leftovers, scratch};
use fuse::FuseFile;
use serde_json::Value;

/// Start `iopath run ARGS --repeat 1 --quiet --json JSON`.
fn spawn(args: &[&str], json: &Path) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("iopath"))
        .arg("run")
        .args(args)
        .args(["--repeat", "1", "--quiet", "--json"])
        .arg(json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The saved JSON once a case holds a repetition: the first job is
/// measured and the next one starts.
fn first_job_saved(json: &Path) -> bool {
    std::fs::read(json)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| {
            v["cases"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["repetitions"].as_array().is_some_and(|r| !r.is_empty()))
            })
        })
}

/// Run, and once the first job is saved make the file system fail after
/// `after` more bytes; the output, and whether it was made to fail while
/// the run went on.
fn run_failing(fs: &FuseFile, after: u64, args: &[&str], json: &Path) -> (Output, bool) {
    let mut child = spawn(args, json);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut armed = false;
    while Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        if first_job_saved(json) {
            fs.fail_after(after);
            armed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    (child.wait_with_output().unwrap(), armed)
}

/// What every test checks: exit 1, each case after the first job
/// (`randread`, `randwrite`) failed with EIO naming `target` and the next
/// step (and the offset when a request failed), each `read` case measured
/// and kept. The JSON.
fn assert_eio_kept(out: &Output, json: &Path, target: &str) -> Value {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let all = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(stderr.contains("some cases failed"), "{all}");
    let v: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let mut failed = 0;
    for c in v["cases"].as_array().unwrap() {
        if c["skipped"].is_string() {
            eprintln!("note: {} was skipped here: {}", c["method"], c["skipped"]);
            continue;
        }
        if c["pattern"] == "read" {
            assert!(c["error"].is_null(), "{c}");
            assert!(!c["repetitions"].as_array().unwrap().is_empty(), "{c}");
            continue;
        }
        let e = c["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{} {} did not fail: {all}", c["method"], c["pattern"]));
        eprintln!("{} {}: {e}", c["method"], c["pattern"]);
        assert!(e.contains("Input/output error"), "{e}");
        assert!(e.contains(target), "the target is not named: {e}");
        assert!(e.contains("dmesg"), "no next step: {e}");
        if e.contains(" bytes at offset ") {
            assert!(e.contains(&format!("of {target} failed")), "{e}");
        }
        assert!(stdout.contains("failed:"), "{all}");
        failed += 1;
    }
    assert!(failed > 0, "no write case failed: {all}");
    v
}

#[test]
fn eio_from_a_fuse_file_fails_the_case_and_keeps_the_rest() {
    let (dir, out_dir) = (scratch(), scratch());
    let Some(fs) = FuseFile::mount(dir.path(), 32 << 20) else {
        return;
    };
    let file = fs.file();
    let json = out_dir.path().join("r.json");
    // Reads and writes both fail, 1 MiB after the first job.
    let (out, armed) = run_failing(
        &fs,
        1 << 20,
        &[
            "--file",
            file.to_str().unwrap(),
            "--allow-write",
            "--methods",
            "buffered,direct",
            "--patterns",
            "read,randread,randwrite",
            "--time",
            "1s",
        ],
        &json,
    );
    assert!(armed, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(fs.failed() > 0, "the file system failed no request");
    let v = assert_eio_kept(&out, &json, &file.display().to_string());
    assert_eq!(v["target"]["created"], false);
    // The file system holds its file and nothing else.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [fuse::NAME]);
    assert!(leftovers(out_dir.path()).is_empty());
}

#[test]
fn eio_under_a_loop_device_fails_the_case_and_keeps_the_rest() {
    let (dir, out_dir) = (scratch(), scratch());
    let Some(fs) = FuseFile::mount(dir.path(), 32 << 20) else {
        return;
    };
    // Dropped before the file system (declared after it).
    let Some(lo) = Loop::attach(&fs.file(), false) else {
        return;
    };
    let dev = lo.path().display().to_string();
    let json = out_dir.path().join("r.json");
    let (out, armed) = run_failing(
        &fs,
        0,
        &[
            "--file",
            &dev,
            "--allow-write",
            "--methods",
            "direct,buffered",
            "--patterns",
            "read,randwrite",
            "--time",
            "1s",
        ],
        &json,
    );
    assert!(armed, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(fs.failed() > 0, "the file system failed no request");
    let v = assert_eio_kept(&out, &json, &dev);
    assert_eq!(v["target"]["kind"], "block-device");
    assert!(
        v["system"]["device"]["name"] == lo.name().as_str(),
        "{}",
        v["system"]["device"]
    );
    drop(lo);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

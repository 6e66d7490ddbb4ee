//! How runs end when something goes wrong, beyond tests/faults.rs: a run
//! that measured nothing fails; I/O errors name the target, the offset
//! and the next step; a `--cache-limit` too small for the pages a case
//! adds to a file system in memory is skipped rather than OOM-killed, and
//! a run the OOM killer did kill is named by the next one; a `--file`
//! iopath creates has no name, so SIGKILL leaves nothing; the copy's
//! destination is locked while it exists.
//!
//! Every mount, image and loop device here is made by the test and undone
//! by a guard's `Drop`. Tests that need root, tmpfs, loop devices or a
//! memory cgroup skip with the reason printed where the machine refuses.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::block::{Loop, Mount};
use common::{holds_file_in, iopath, json_of, leftovers, scratch};
use iopath::system::metrics::procfs::MemCgroup;
use serde_json::Value;

fn root() -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    crate::common::skip("needs root (mounts, loop devices, cgroups)");
    false
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Regression (review of issue 14): a run whose every case was skipped
/// exited 0, as if it had measured something.
#[test]
fn a_run_that_measured_nothing_fails() {
    let (dir, out_dir) = (scratch(), scratch());
    let json = out_dir.path().join("r.json");
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "1M",
            "--concurrency",
            "1",
            "--methods",
            "copy-file-range,sendfile",
            "--patterns",
            "read",
            "--time",
            "20ms",
            "--repeat",
            "1",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("nothing was measured: all 2 cases that do I/O were skipped"),
        "{stderr}"
    );
    assert!(
        stdout.contains("only copies"),
        "the reasons are shown: {stdout}"
    );
    // The result is kept all the same, saying why.
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for c in v["cases"].as_array().unwrap() {
        assert!(c["skipped"].is_string(), "{c}");
    }
    assert!(leftovers(dir.path()).is_empty());
    // `null` running beside them measures no storage: still a failure.
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "1M",
            "--concurrency",
            "1",
            "--methods",
            "null,sendfile",
            "--patterns",
            "read",
            "--time",
            "20ms",
            "--repeat",
            "1",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("only `null`"), "{stderr}");
    // `null` alone is what was asked: it measured iopath's own cost.
    iopath()
        .args([
            "run",
            "--concurrency",
            "1",
            "--methods",
            "null",
            "--patterns",
            "read",
        ])
        .args(["--time", "20ms", "--repeat", "1", "--quiet"])
        .assert()
        .success();
}

/// Regression (review of issue 14): direct's I/O errors said `write of N
/// bytes at offset X failed: ...`, naming no target and no next step. A
/// loop device over a sparse file on a small tmpfs fails its writes once
/// the tmpfs is full.
#[test]
fn an_io_error_names_the_target_the_offset_and_the_next_step() {
    if !root() {
        return;
    }
    let (dir, out_dir) = (scratch(), scratch());
    let Some(_fs) = Mount::tmpfs(dir.path(), "4M") else {
        return;
    };
    let img = dir.path().join("dev.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let json = out_dir.path().join("r.json");
    let out = iopath()
        .args(["run", "--file"])
        .arg(lo.path())
        .args([
            "--allow-write",
            "--methods",
            "direct,buffered",
            "--patterns",
            "write",
            "--bs",
            "1M",
            "--time",
            "1s",
            "--repeat",
            "1",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let dev = lo.path().display().to_string();
    for c in v["cases"].as_array().unwrap() {
        let e = c["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{} did not fail: {c}", c["method"]));
        // ENOSPC from the block layer, or EIO on some kernels; a
        // buffered write may only fail at its fsync.
        let named = e.contains(&format!("of {dev} failed:")) || e.contains(&dev);
        assert!(named, "{e}");
        assert!(
            e.contains("use a smaller --size or another --dir") || e.contains("dmesg"),
            "no next step: {e}"
        );
        if c["method"] == "direct" {
            assert!(e.contains(" at offset "), "{e}");
        }
    }
    assert!(stdout.contains(&format!("of {dev}")), "{stdout}");
}

/// Held by the tests that run `--cache-limit`: each such run removes the
/// stale cgroups it finds, the one another test staged among them.
static CGROUPS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The process's memory cgroup when iopath may make cgroups in it.
fn cgroup_parent() -> Option<PathBuf> {
    let Some(cg) = MemCgroup::current() else {
        crate::common::skip("no memory cgroup controller here");
        return None;
    };
    let probe = cg
        .dir
        .join(format!("iopath-test-probe-{}", std::process::id()));
    if std::fs::create_dir(&probe).is_err() {
        crate::common::skip(format!("cannot make cgroups in {}", cg.dir.display()));
        return None;
    }
    let _ = std::fs::remove_dir(&probe);
    Some(cg.dir)
}

fn iopath_cgroups(parent: &Path) -> Vec<String> {
    std::fs::read_dir(parent)
        .map(|rd| {
            rd.filter_map(|e| {
                let n = e.ok()?.file_name().to_string_lossy().into_owned();
                n.starts_with("iopath-").then_some(n)
            })
            .collect()
        })
        .unwrap_or_default()
}

/// Regression (review of issue 14): a copy on tmpfs under a small
/// `--cache-limit` had the kernel OOM-kill iopath (exit 137, no message,
/// the copy and the cgroup left): the copy's pages on tmpfs are memory the
/// cap cannot reclaim. Now the case is skipped with the reason, the rest
/// runs, nothing is left.
#[test]
fn a_copy_on_tmpfs_the_cache_limit_cannot_hold_is_skipped_not_oom_killed() {
    if !root() {
        return;
    }
    let _one = CGROUPS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(parent) = cgroup_parent() else {
        return;
    };
    let before = iopath_cgroups(&parent);
    let (dir, out_dir) = (scratch(), scratch());
    let Some(_fs) = Mount::tmpfs(dir.path(), "256M") else {
        return;
    };
    let json = out_dir.path().join("r.json");
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "96M",
            "--cache-limit",
            "32M",
            // One thread for the read (8 in flight would be 8 threads, which
            // the cap cannot hold); the copy pattern has no depth to match.
            "--qd",
            "1",
            "--methods",
            "buffered",
            "--patterns",
            "read,copy",
            "--time",
            "200ms",
            "--repeat",
            "1",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let by = |p: &str| {
        v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["pattern"] == p)
            .unwrap()
            .clone()
    };
    let why = by("copy")["skipped"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        why.contains("what this case writes to a file system in memory")
            && why.contains("96 MiB of new copy pages on tmpfs")
            && why.contains("OOM-kill"),
        "{why}\n{stdout}"
    );
    assert!(!by("read")["repetitions"].as_array().unwrap().is_empty());
    let new: Vec<String> = iopath_cgroups(&parent)
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect();
    assert!(new.is_empty(), "cgroups left behind: {new:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A run the OOM killer killed cannot say so itself (SIGKILL): the next
/// `--cache-limit` run, removing its cgroup, says it. Here the killed run
/// is a stand-in: a `dd` into a tmpfs, in a cgroup named as a killed
/// iopath run's (its pid cannot exist) and capped at 8 MiB, killed by
/// the kernel for real.
#[test]
fn a_run_the_oom_killer_killed_is_named_by_the_next_run() {
    if !root() {
        return;
    }
    let _one = CGROUPS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(parent) = cgroup_parent() else {
        return;
    };
    let (dir, fill) = (scratch(), scratch());
    let Some(_fs) = Mount::tmpfs(fill.path(), "64M") else {
        return;
    };
    let stale = parent.join("iopath-4194303-0");
    let _ = std::fs::remove_dir(&stale);
    std::fs::create_dir(&stale).unwrap();
    let v2 = stale.join("memory.max").exists();
    let cap = if v2 {
        "memory.max"
    } else {
        "memory.limit_in_bytes"
    };
    std::fs::write(stale.join(cap), (8u64 << 20).to_string()).unwrap();
    let st = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec dd if=/dev/zero of={}/f bs=1M count=48",
            stale.display(),
            fill.path().display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    if st.signal() != Some(9) {
        crate::common::skip(format!("the stand-in was not OOM-killed ({st:?})"));
        let _ = std::fs::remove_dir(&stale);
        return;
    }
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "4M",
            "--cache-limit",
            "64M",
            "--methods",
            "buffered",
            "--patterns",
            "read",
            "--time",
            "20ms",
            "--repeat",
            "1",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("removed 1 stale cgroup "), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the run that made {} was killed by the kernel's OOM killer",
            stale.display()
        )) && stderr.contains("give a larger --cache-limit"),
        "{stderr}"
    );
    assert!(!stale.exists());
}

/// Wait (at most a minute) for `found`, polling; `None` when `child`
/// ended first or time ran out.
fn poll<T>(child: &mut std::process::Child, mut found: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Some(t) = found() {
            return Some(t);
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// `iopath run --file FILE` of 64 MiB, each case for `time`.
fn file_run(file: &Path, no_tmpfile: bool, time: &str) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("iopath"));
    cmd.args(["run", "--file"])
        .arg(file)
        .args([
            "--size",
            "64M",
            "--time",
            time,
            "--repeat",
            "1",
            "--methods",
            "buffered,direct",
            "--patterns",
            "randread,randwrite",
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if no_tmpfile {
        cmd.env("IOPATH_NO_TMPFILE", "1");
    } else {
        cmd.env_remove("IOPATH_NO_TMPFILE");
    }
    cmd
}

/// Regression (review of issue 14): `--file NEW`, which iopath creates
/// for the run and removes after it, was created under that name, so a
/// run killed with SIGKILL left it. It is now made without a name in its
/// directory (where the file system can), and nothing is left.
#[test]
fn sigkill_leaves_no_file_iopath_created_under_a_given_name() {
    let dir = scratch();
    let tmpfile = rustix::fs::open(
        dir.path(),
        rustix::fs::OFlags::TMPFILE | rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::from_raw_mode(0o600),
    );
    if tmpfile.is_err() {
        crate::common::skip(format!(
            "the file system of {} makes no unnamed files",
            dir.path().display()
        ));
        return;
    }
    drop(tmpfile);
    let file = dir.path().join("new.dat");
    let mut child = file_run(&file, false, "2s").spawn().unwrap();
    let pid = child.id();
    let link = poll(&mut child, || holds_file_in(pid, dir.path()));
    // Prefilled and measuring: a worker issued I/O.
    let measuring = poll(&mut child, || common::measuring(pid).then_some(())).is_some();
    let running = measuring && child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    let link = link.expect("the run never held a file in its directory");
    assert!(
        running,
        "iopath was not seen measuring before it ended (or within a minute)"
    );
    let named = file.exists();
    let _ = std::fs::remove_file(&file);
    assert!(
        link.ends_with("(deleted)") && !named,
        "the file had a name ({link}) and was left after SIGKILL"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // A run that ends: it records the name asked for, and leaves nothing.
    let out = iopath()
        .args(["run", "--file"])
        .arg(&file)
        .args([
            "--size",
            "4M",
            "--methods",
            "buffered",
            "--patterns",
            "read",
        ])
        .args(["--time", "20ms", "--repeat", "1", "--quiet", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = json_of(&out.stdout);
    assert_eq!(v["target"]["path"], file.display().to_string());
    assert_eq!(v["target"]["created"], true);
    assert_eq!(v["target"]["unnamed"], true);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Where it must be named, it is removed at the end all the same.
    let st = file_run(&file, true, "20ms").status().unwrap();
    assert!(st.success());
    assert!(!file.exists());
}

/// Regression (review of issue 14): the copy pattern's destination was
/// not locked, so a reaper that cannot see the run's pid (another pid
/// namespace sharing the directory) could take a live copy. It holds the
/// same `flock` as a named test file, from its creation to its removal.
#[test]
fn the_copy_destination_is_locked_while_it_exists() {
    let dir = scratch();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("iopath"))
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "64M",
            "--methods",
            "buffered",
            "--patterns",
            "copy",
            "--bs",
            "4k",
            "--sync",
            "each",
            "--repeat",
            "1",
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let copy = poll(&mut child, || {
        std::fs::read_dir(dir.path())
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().contains("-copy-"))
    });
    let locked = copy.as_ref().and_then(|p| {
        let f = std::fs::File::open(p).ok()?;
        Some(rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err())
    });
    // SIGTERM: the run stops in order and removes what it made.
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    );
    let out = child.wait_with_output().unwrap();
    let copy = copy.unwrap_or_else(|| panic!("no copy destination seen: {}", text(&out.stderr)));
    match locked {
        Some(l) => assert!(l, "{} was not locked", copy.display()),
        // The copy finished (and went) between seeing it and opening it.
        None => eprintln!(
            "skipped: {} went before it could be checked",
            copy.display()
        ),
    }
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

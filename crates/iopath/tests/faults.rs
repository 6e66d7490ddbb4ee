//! Faults lose nothing: storage that fails under a run (a full file
//! system, a device whose writes fail, a target truncated by someone else,
//! a file system forced read-only, a `--cache-limit` too small for a case)
//! ends the failed case with a message naming it and the cause, keeps the
//! cases measured before it in `--json FILE`, leaves no `iopath-*` file
//! or cgroup, and exits 1. SIGKILL is tests/cleanup.rs's.
//!
//! Every file system, image and loop device here is made by the test and
//! unmounted or detached by a guard's `Drop`, on failure too. Tests that
//! need root, tmpfs mounts, loop devices or ext4 skip with the reason
//! printed where the machine refuses them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::block::{Loop, Mount};
use common::{iopath, leftovers, scratch};
use serde_json::Value;

fn root() -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    crate::common::skip("needs root (mounts, loop devices)");
    false
}

/// A sparse file of `mib` MiB.
fn sparse(path: &Path, mib: u64) {
    std::fs::File::create(path)
        .unwrap()
        .set_len(mib << 20)
        .unwrap();
}

/// Start `iopath run ARGS --repeat 1 --quiet --json JSON`, output piped.
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

/// Wait (at most a minute) for `done`, polling; false on time-out or when
/// the child ended first.
fn wait_for(child: &mut Child, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// The saved JSON once it holds a case with a repetition: the first job
/// is measured and the next one starts.
fn first_job_saved(json: &Path) -> bool {
    std::fs::read(json)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| {
            v["cases"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| reps(c) > 0))
        })
}

fn reps(c: &Value) -> usize {
    c["repetitions"].as_array().map_or(0, Vec::len)
}

/// The report's words, its wrapping undone.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// True when a note under a table says `method`'s case failed
/// (`- buffered 1M Q1T1 failed: ...`).
fn names_failed(stdout: &str, method: &str) -> bool {
    flat(stdout)
        .split(" - ")
        .any(|n| n.starts_with(&format!("{method} ")) && n.contains(" failed: "))
}

/// What a failed run must show: exit 1, "METHOD failed" on stdout's table
/// with `cause`, the case's `error` in the saved JSON naming `cause`, and
/// the `kept` pattern's cases measured. The JSON.
fn assert_failed_kept(out: &Output, json: &Path, failed: &str, cause: &str, kept: &str) -> Value {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let all = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(stderr.contains("some cases failed"), "{all}");
    // The report wraps its lines to 120 columns: compare words.
    let flat = flat(&stdout);
    assert!(flat.contains("failed:") && flat.contains(cause), "{all}");
    let v: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let cases = v["cases"].as_array().unwrap();
    let bad: Vec<&Value> = cases.iter().filter(|c| c["pattern"] == failed).collect();
    assert!(!bad.is_empty(), "no {failed} case: {all}");
    for c in &bad {
        let e = c["error"].as_str().unwrap_or_else(|| panic!("{c}"));
        assert!(e.contains(cause), "{e}");
    }
    let good: Vec<&Value> = cases.iter().filter(|c| c["pattern"] == kept).collect();
    assert!(!good.is_empty(), "no {kept} case kept: {all}");
    for c in good {
        assert!(c["error"].is_null(), "{c}");
        assert!(reps(c) >= 1, "the {kept} case lost its repetition: {c}");
    }
    v
}

/// Fault 1: ENOSPC in the middle of a write case: a 40 MiB tmpfs holds the
/// 16 MiB test file and its copy when the run starts (iopath checks), and
/// another writer fills it while the read job runs; the copy fails.
#[test]
fn enospc_mid_run_fails_the_case_and_keeps_the_rest() {
    if !root() {
        return;
    }
    let (dir, out_dir) = (scratch(), scratch());
    let Some(_fs) = Mount::tmpfs(dir.path(), "40M") else {
        return;
    };
    let json = out_dir.path().join("r.json");
    let mut child = spawn(
        &[
            "--dir",
            dir.path().to_str().unwrap(),
            "--size",
            "16M",
            "--methods",
            "buffered",
            "--patterns",
            "read,copy",
            "--time",
            "1s",
        ],
        &json,
    );
    // Once the 16 MiB prefill is in, fill the rest (the read job runs for
    // a second before the copy starts).
    let used = || {
        let s = rustix::fs::statvfs(dir.path()).unwrap();
        (s.f_blocks - s.f_bfree) * s.f_frsize
    };
    let prefilled = wait_for(&mut child, || used() >= 16 << 20);
    let filler = dir.path().join("filler");
    if prefilled {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0x5a_u8; 1 << 20];
        while f.write_all(&chunk).is_ok() {}
    }
    let out = child.wait_with_output().unwrap();
    assert!(prefilled, "{}", String::from_utf8_lossy(&out.stderr));
    let v = assert_failed_kept(&out, &json, "copy", "No space left on device", "read");
    let e = case_error(&v, "copy");
    assert!(e.contains(&dir.path().display().to_string()), "{e}");
    assert!(e.contains("use a smaller --size or another --dir"), "{e}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

fn case_error(v: &Value, pattern: &str) -> String {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["pattern"] == pattern)
        .and_then(|c| c["error"].as_str())
        .unwrap()
        .to_string()
}

/// Fault 2: A device that fails writes: a 64 MiB loop device over a sparse file
/// on a 4 MiB tmpfs; its direct writes fail at the block level once the
/// tmpfs is full.
#[test]
fn a_device_that_fails_writes_fails_the_case_and_keeps_the_rest() {
    if !root() {
        return;
    }
    let (dir, out_dir) = (scratch(), scratch());
    let Some(_fs) = Mount::tmpfs(dir.path(), "4M") else {
        return;
    };
    let img = dir.path().join("dev.img");
    sparse(&img, 64);
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let json = out_dir.path().join("r.json");
    let out = spawn(
        &[
            "--file",
            lo.0.to_str().unwrap(),
            "--allow-write",
            "--methods",
            "direct",
            "--patterns",
            "read,write",
            "--time",
            "1s",
        ],
        &json,
    )
    .wait_with_output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // ENOSPC from the block layer (tmpfs full below the loop device); a
    // kernel may report it as EIO.
    let cause = if flat(&stdout).contains("No space left on device") {
        "No space left on device"
    } else {
        "Input/output error"
    };
    let v = assert_failed_kept(&out, &json, "write", cause, "read");
    assert!(
        v["target"].to_string().contains(&lo.name()),
        "{}",
        v["target"]
    );
    // The note names the case: method and job.
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("  - direct ") && l.contains(" failed: write of")),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the image is left"
    );
}

/// Fault 3: The target truncated by someone else while a method reads it
/// through `read`/`pread` (buffered, direct): the case fails on the short
/// read, the earlier job is kept, the file (given with --file) is left as
/// it is.
#[test]
fn a_target_truncated_mid_run_fails_the_case_and_keeps_the_rest() {
    for method in ["buffered", "direct"] {
        truncated_mid_run(method);
    }
}

/// The same with mmap: a read of a page past the new end of the file is
/// SIGBUS, which iopath used to die of (exit 135, no message, the case in
/// flight lost). Its handler turns it into the case's error ("truncated
/// while mapped (SIGBUS at offset N ...): unexpected end of file"), as the
/// other methods fail. The file is cut only once the randread case has
/// mapped it (its mapping is in the child's /proc/PID/maps; the read
/// case's mapping went with its engine before its result was saved), and
/// the case holds that mapping for its whole 2 s: the cut lands mid-case,
/// so the error must be SIGBUS's, not the short read a case that opened
/// the file already cut would give.
#[test]
fn an_mmap_target_truncated_mid_run_fails_the_case_and_keeps_the_rest() {
    truncated_mid_run("mmap");
}

/// Whether process `pid` maps `file` now.
fn maps(pid: u32, file: &Path) -> bool {
    let name = file.display().to_string();
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .is_ok_and(|m| m.lines().any(|l| l.ends_with(&name)))
}

fn truncated_mid_run(method: &str) {
    let (dir, out_dir) = (scratch(), scratch());
    let file = dir.path().join("target.dat");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&file).unwrap();
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let chunk: Vec<u8> = (0..1 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for _ in 0..64 {
            f.write_all(&chunk).unwrap();
        }
    }
    let json = out_dir.path().join("r.json");
    let mut child = spawn(
        &[
            "--file",
            file.to_str().unwrap(),
            "--allow-write",
            "--methods",
            method,
            "--patterns",
            "read,randread",
            "--time",
            "2s",
        ],
        &json,
    );
    let mmap = method == "mmap";
    let canon = std::fs::canonicalize(&file).unwrap();
    let pid = child.id();
    let read_done = wait_for(&mut child, || first_job_saved(&json));
    // Into the randread repetition, past its set-up: a worker is
    // measuring (mmap: once it has mapped the file).
    let under_way = read_done
        && wait_for(&mut child, || {
            (!mmap || maps(pid, &canon)) && common::measuring(pid)
        });
    if under_way {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(0)
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(read_done, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        under_way,
        "the randread case never mapped or read the file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Wherever the cut lands (before the repetition, or during it: a
    // 0-byte read, or mmap's SIGBUS, recovered), the runner's check of the
    // file names it (tests/truncation.rs), then the error the read met,
    // if it met one (mmap's SIGBUS path is tested deterministically in
    // iopath-io: `reads_of_a_file_truncated_while_mapped_fail_cleanly`).
    let cut = format!("another process truncated {} from", file.display());
    let v = assert_failed_kept(&out, &json, "randread", &cut, "read");
    let e = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|c| c["error"].as_str().filter(|_| c["pattern"] == "randread"))
        .unwrap();
    // What the read met: a short read or SIGBUS, both "unexpected end of
    // file".
    if let Some(met) = e.split("the repetition failed: ").nth(1) {
        assert!(met.contains("unexpected end of file"), "{e}");
    }
    // The file named with --file stays, as the other process left it.
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 0);
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

/// Fault 4: The file system forced read-only mid-run: ext4 on a loop device,
/// `errors=remount-ro`. `mount -o remount,ro` is refused while iopath holds
/// its test file open for writing (busy), so an ext4 error is raised
/// (`/sys/fs/ext4/DEV/trigger_fs_error`), as a failing disk would: the
/// kernel remounts it read-only under the run.
#[test]
fn a_file_system_gone_read_only_fails_the_write_cases_and_keeps_the_rest() {
    if !root() {
        return;
    }
    let (dir, out_dir) = (scratch(), scratch());
    let img = dir.path().join("fs.img");
    sparse(&img, 128);
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let trigger = PathBuf::from(format!("/sys/fs/ext4/{}/trigger_fs_error", lo.name()));
    match Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&lo.0)
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            crate::common::skip(format!(
                "mkfs.ext4 failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
            return;
        }
        Err(e) => {
            crate::common::skip(format!("cannot run mkfs.ext4: {e}"));
            return;
        }
    }
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let Some(_m) = Mount::new(&lo.0, &mnt, &["-o", "errors=remount-ro"]) else {
        return;
    };
    if !trigger.exists() {
        crate::common::skip(format!("{} does not exist", trigger.display()));
        return;
    }
    let json = out_dir.path().join("r.json");
    let mut child = spawn(
        &[
            "--dir",
            mnt.to_str().unwrap(),
            "--size",
            "16M",
            "--methods",
            "buffered,direct",
            "--patterns",
            "randread,randwrite",
            "--time",
            "2s",
        ],
        &json,
    );
    let read_done = wait_for(&mut child, || first_job_saved(&json));
    // Into the next job's repetition: a worker has made I/O calls.
    let pid = child.id();
    let measuring = read_done && wait_for(&mut child, || common::measuring(pid));
    if measuring {
        let remount = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&mnt)
            .output()
            .unwrap();
        if !remount.status.success() {
            std::fs::write(&trigger, "1").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(read_done, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        measuring,
        "the second job never issued I/O: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ext4 marks a forced read-only mount `emergency_ro` (6.x) or `ro`.
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    let at = format!(" {} ", std::fs::canonicalize(&mnt).unwrap().display());
    let opts = mounts
        .lines()
        .find(|l| l.contains(&at))
        .and_then(|l| l.split(' ').nth(3))
        .unwrap_or_default()
        .to_string();
    assert!(
        opts.starts_with("ro,") || opts.contains("emergency_ro"),
        "the file system did not go read-only: {opts}"
    );
    assert_failed_kept(
        &out,
        &json,
        "randwrite",
        "Read-only file system",
        "randread",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(names_failed(&stdout, "buffered"), "{stdout}");
    assert!(names_failed(&stdout, "direct"), "{stdout}");
    // Only ext4's own directory is left: the unnamed test file went with
    // its last descriptor.
    let names: Vec<String> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["lost+found"]);
}

// Fault 5, SIGKILL: tests/cleanup.rs (nothing left where O_TMPFILE works; the
// next run reaps named files, copies and cgroups otherwise).

/// Fault 6: A memory-cgroup OOM under --cache-limit: a case whose own memory
/// (threads × depth × block size) cannot fit under the limit is not run
/// (the kernel would OOM-kill iopath): skipped with the reason, the cases
/// that fit run, no cgroup is left.
#[test]
fn a_case_the_cache_limit_cannot_hold_is_skipped_not_oom_killed() {
    use iopath::system::metrics::procfs::MemCgroup;
    let Some(cg) = MemCgroup::current() else {
        crate::common::skip("no memory cgroup controller here");
        return;
    };
    let ours = || -> Vec<String> {
        std::fs::read_dir(&cg.dir)
            .map(|rd| {
                rd.filter_map(|e| {
                    let n = e.ok()?.file_name().to_string_lossy().into_owned();
                    n.starts_with("iopath-").then_some(n)
                })
                .collect()
            })
            .unwrap_or_default()
    };
    let before = ours();
    let (dir, out_dir) = (scratch(), scratch());
    let json = out_dir.path().join("r.json");
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "64M",
            "--cache-limit",
            "128M",
            "--methods",
            "buffered,uring",
            "--patterns",
            "randread",
            "--threads",
            "8",
            "--qd",
            "32",
            "--bs",
            "4M",
            "--time",
            "200ms",
            "--repeat",
            "1",
            "--quiet",
            // The reasons under "not run": the whole report.
            "--explain",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    if stderr.contains("memory cgroup controller") || stderr.contains("not root") {
        crate::common::skip(format!("{stderr}"));
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let uring = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["method"] == "uring")
        .unwrap();
    let why = uring["skipped"]
        .as_str()
        .unwrap_or_else(|| panic!("{uring}"));
    assert!(
        why.contains("--cache-limit 128 MiB cannot hold this case's own memory")
            && why.contains("give a larger --cache-limit"),
        "{why}"
    );
    assert_eq!(reps(uring), 0);
    let buffered = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["method"] == "buffered")
        .unwrap();
    assert!(
        reps(buffered) >= 1,
        "the case that fits did not run: {buffered}"
    );
    assert!(flat(&stdout).contains(why), "{stdout}");
    let new: Vec<String> = ours().into_iter().filter(|n| !before.contains(n)).collect();
    assert!(new.is_empty(), "cgroups left behind: {new:?}");
    assert!(leftovers(dir.path()).is_empty());
}

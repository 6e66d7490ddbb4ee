//! Nothing left behind, even on SIGKILL: the temporary test file has no
//! name where the file system can make one without (`O_TMPFILE`), so a
//! killed run leaves nothing; where it cannot (forced here with
//! `IOPATH_NO_TMPFILE=1`), the next run removes what a killed run left and
//! says so, and never removes a file a live process may own.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

mod common;
use common::{
    holds_file_in, iopath, leftovers, measuring, poll_child, scratch, wait_while_running,
};

/// Whether `dir`'s file system makes unnamed files.
fn tmpfile_works(dir: &Path) -> bool {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(
        dir,
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .is_ok()
}

/// Start a 2-second-per-case run in `dir` with a 64 MiB file.
fn start_run(dir: &Path, no_tmpfile: bool) -> Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("iopath"));
    cmd.args(["run", "--dir"])
        .arg(dir)
        .args([
            "--size",
            "64M",
            "--time",
            "2s",
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
    cmd.spawn().unwrap()
}

/// Wait until `child` holds its test file in `dir` and is measuring (a
/// worker is in its timed loop: the prefill is done), then SIGKILL it;
/// the file's link as the process saw it.
fn kill_while_measuring(mut child: Child, dir: &Path) -> String {
    let pid = child.id();
    let link = poll_child(&mut child, || holds_file_in(pid, dir))
        .expect("iopath ended, or a minute passed, before its test file was seen");
    wait_while_running(&mut child, "a worker issued I/O", || measuring(pid));
    assert!(
        child.try_wait().unwrap().is_none(),
        "iopath ended before it was killed"
    );
    child.kill().unwrap(); // SIGKILL
    let st = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&st),
        Some(9),
        "{st:?}"
    );
    link
}

#[test]
fn sigkill_leaves_nothing_where_the_file_system_makes_unnamed_files() {
    let dir = scratch();
    if !tmpfile_works(dir.path()) {
        crate::common::skip(format!(
            "the file system of {} makes no O_TMPFILE files",
            dir.path().display()
        ));
        return;
    }
    let link = kill_while_measuring(start_run(dir.path(), false), dir.path());
    assert!(
        link.ends_with("(deleted)") && link.contains("/#"),
        "the test file had a name: {link}"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "left after SIGKILL: {:?}",
        leftovers(dir.path())
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing at all is left"
    );
}

/// A short run in `dir` with a 4 MiB test file: its stderr.
fn short_run(dir: &Path, no_tmpfile: bool) -> String {
    let mut cmd = iopath();
    cmd.args(["run", "--dir"]).arg(dir).args([
        "--size",
        "4M",
        "--time",
        "200ms",
        "--repeat",
        "1",
        "--methods",
        "buffered",
        "--patterns",
        "randread",
        "--quiet",
    ]);
    if no_tmpfile {
        cmd.env("IOPATH_NO_TMPFILE", "1");
    } else {
        cmd.env_remove("IOPATH_NO_TMPFILE");
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

#[test]
fn a_named_file_left_by_sigkill_is_removed_by_the_next_run() {
    let dir = scratch();
    let child = start_run(dir.path(), true);
    let pid = child.id();
    let link = kill_while_measuring(child, dir.path());
    let left = leftovers(dir.path());
    assert_eq!(left.len(), 1, "{left:?}");
    let name = left[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("iopath-{pid}-")) && name.ends_with(".dat"),
        "{name}"
    );
    assert!(link.ends_with(&name), "{link} vs {name}");
    // A copy destination the killed run could have left too.
    let copy = dir.path().join(format!("iopath-{pid}-copy-1a2b.dat"));
    std::fs::write(&copy, b"half a copy").unwrap();
    common::mark_as_iopaths(&copy, pid, 0);
    // Not ours: never touched.
    let other = dir.path().join("iopath-notes.dat");
    std::fs::write(&other, b"x").unwrap();

    let err = short_run(dir.path(), false);
    assert!(
        err.contains("removed 2 stale test files of killed runs"),
        "{err}"
    );
    assert!(err.contains(&name) && err.contains("copy-1a2b"), "{err}");
    assert!(!left[0].exists() && !copy.exists());
    assert!(other.exists(), "a file that is not iopath's was removed");
    // Nothing more to say the next time.
    let err = short_run(dir.path(), true);
    assert!(!err.contains("stale"), "{err}");
    assert_eq!(leftovers(dir.path()), vec![other]);
}

/// An iopath-like file for `pid` in `dir`, marked as made by the run of
/// that pid that started at clock tick `start`.
fn fake(dir: &Path, pid: u32, tag: &str, start: u64) -> PathBuf {
    let p = dir.join(format!("iopath-{pid}-{tag}.dat"));
    std::fs::File::create(&p).unwrap();
    common::mark_as_iopaths(&p, pid, start);
    p
}

#[test]
fn the_reaper_leaves_files_a_live_process_may_own() {
    let dir = scratch();
    // A live process, marked as its file's maker: it may own it.
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let started = iopath::run::target::reap::start_ticks(sleeper.id()).unwrap();
    let live = fake(dir.path(), sleeper.id(), "0000beef", started);
    let live_copy = fake(dir.path(), sleeper.id(), "copy-7", started);
    // The same live pid, marked by a run that started at another tick:
    // the pid was reused, the file's maker is gone.
    let reused = fake(dir.path(), sleeper.id(), "0000dead", started + 1);
    // A pid no process has, but the file is locked: a live run in another
    // pid namespace holds it.
    let locked = fake(dir.path(), 4_194_304, "0000f00d", 0);
    let held = std::fs::File::open(&locked).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();

    let err = short_run(dir.path(), true);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(
        err.contains("removed 1 stale test file of killed runs"),
        "{err}"
    );
    assert!(!reused.exists(), "the file of a reused pid was kept");
    assert!(live.exists(), "a live process's file was removed");
    assert!(live_copy.exists(), "a live process's copy was removed");
    assert!(locked.exists(), "a locked file was removed");
    drop(held);
    // Once the lock is gone (its run ended), the next run takes it.
    let err = short_run(dir.path(), true);
    assert!(err.contains("0000f00d"), "{err}");
    assert!(!locked.exists());
}

/// Messages name an unnamed test file as the target, not by the
/// `/proc/<pid>/fd/<n>` link engines open it by (review of issue 14).
#[test]
fn messages_name_the_unnamed_file_as_the_target() {
    let dir = scratch();
    let v = common::run_json(
        dir.path(),
        &[
            "--size",
            "8M",
            "--methods",
            "mmap-dax,direct",
            "--patterns",
            "read",
            "--time",
            "20ms",
        ],
    );
    let text = v["cases"].to_string();
    assert!(!text.contains("/proc/"), "{text}");
    if v["target"]["unnamed"] == true {
        assert!(text.contains("(unnamed O_TMPFILE)"), "{text}");
    }
}

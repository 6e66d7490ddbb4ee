//! Issue 26, item 9: the reaper of killed runs' files removes only what it
//! can prove a killed run's own (one link, iopath's mark naming a run that
//! is gone), says what it removed and why, and leaves everything else: a
//! user's file named like iopath's and restored with `cp -p` (old times),
//! a copy that kept the mark (`cp -a`), a leftover given a second name.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

mod common;
use common::{holds_file_in, scratch};

/// A named test file left in `dir` by an iopath run killed with SIGKILL
/// (`IOPATH_NO_TMPFILE=1`: the fallback of file systems without
/// `O_TMPFILE`), once iopath has marked it; with the run's pid.
fn killed_runs_file(dir: &Path) -> (PathBuf, u32) {
    killed_runs_file_with(dir, false)
}

/// Whether `p` is proven iopath's: its mark, or its name's tag.
fn proven(p: &Path) -> bool {
    use iopath::run::target::reap::{birth, mark_of, name_tag};
    let Ok(f) = std::fs::File::open(p) else {
        return false;
    };
    let ino = std::os::unix::fs::MetadataExt::ino(&f.metadata().unwrap());
    let name = p.file_name().unwrap().to_string_lossy().into_owned();
    let tagged = |pid: u32, b| name.ends_with(&format!("-{:08x}.dat", name_tag(pid, ino, b)));
    let pid = iopath::run::target::reap::pid_of_name(&name, true);
    mark_of(&f).is_some() || pid.zip(birth(&f)).is_some_and(|(pid, b)| tagged(pid, b))
}

/// [`killed_runs_file`], with `no_xattr`: as on a file system without
/// user extended attributes (`IOPATH_NO_XATTR=1`), where the file is
/// proven by its name's tag instead of a mark.
fn killed_runs_file_with(dir: &Path, no_xattr: bool) -> (PathBuf, u32) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("iopath"))
        .args(["run", "--dir"])
        .arg(dir)
        .args([
            "--size",
            "16M",
            "--time",
            "30s",
            "--methods",
            "buffered",
            "--patterns",
            "randread",
            "--quiet",
        ])
        .env("IOPATH_NO_TMPFILE", "1")
        .env("IOPATH_NO_XATTR", if no_xattr { "1" } else { "0" })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let path = loop {
        if let Some(l) = holds_file_in(child.id(), dir) {
            let p = PathBuf::from(l);
            if proven(&p) {
                break p;
            }
        }
        assert!(child.try_wait().unwrap().is_none(), "iopath ended early");
        assert!(Instant::now() < deadline, "no marked test file appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    let pid = child.id();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(path.exists(), "the killed run left {}", path.display());
    (path, pid)
}

/// A short run in `dir` (unnamed test file); its stderr.
fn short_run(dir: &Path) -> String {
    short_run_with(dir, false)
}

fn short_run_with(dir: &Path, no_xattr: bool) -> String {
    let out = common::iopath()
        .args(["run", "--dir"])
        .arg(dir)
        .args([
            "--size",
            "1M",
            "--time",
            "20ms",
            "--methods",
            "buffered",
            "--patterns",
            "read",
            "--repeat",
            "1",
            "--quiet",
        ])
        .env_remove("IOPATH_NO_TMPFILE")
        .env("IOPATH_NO_XATTR", if no_xattr { "1" } else { "0" })
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

/// `cp ARGS FROM TO`, then its times set back to 2001.
fn cp(args: &[&str], from: &Path, to: &Path) {
    let st = Command::new("cp")
        .args(args)
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success());
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let f = std::fs::File::options().write(true).open(to).unwrap();
    f.set_modified(old).unwrap();
}

#[test]
fn a_cp_p_copy_named_like_iopaths_file_is_not_removed() {
    let dir = scratch();
    // The case: a user's file, restored with cp -p, older than
    // pid 1 (which "made" it, by its name).
    let mine = dir.path().join("notes");
    std::fs::write(&mine, b"a user's data").unwrap();
    let restored = dir.path().join("iopath-1-0badcafe.dat");
    cp(&["-p"], &mine, &restored);
    // Copies of a killed run's real file, under its very name elsewhere:
    // cp -p drops the mark; cp -a keeps it, on another inode.
    let left = scratch();
    let (real, _) = killed_runs_file(left.path());
    let name = real.file_name().unwrap();
    let copy_p = dir.path().join(name);
    cp(&["-p"], &real, &copy_p);
    let elsewhere = scratch();
    let copy_a = elsewhere.path().join(name);
    cp(&["-a"], &real, &copy_a);

    let err = short_run(dir.path());
    let err_a = short_run(elsewhere.path());
    assert!(
        !err.contains("stale") && !err_a.contains("stale"),
        "{err}{err_a}"
    );
    assert!(restored.exists(), "a cp -p restored file was removed");
    assert!(copy_p.exists(), "a cp -p copy of a leftover was removed");
    assert!(copy_a.exists(), "a cp -a copy of a leftover was removed");
    // The original is the killed run's, and goes.
    let err = short_run(left.path());
    assert!(err.contains(&real.display().to_string()), "{err}");
    assert!(!real.exists());
}

#[test]
fn a_hard_linked_name_of_a_leftover_is_not_removed() {
    let dir = scratch();
    let (real, _) = killed_runs_file(dir.path());
    let kept = dir.path().join("kept-results.dat");
    std::fs::hard_link(&real, &kept).unwrap();
    let err = short_run(dir.path());
    assert!(!err.contains("stale"), "{err}");
    assert!(
        real.exists() && kept.exists(),
        "a file with two names was removed"
    );
    // Its only name again: the killed run's, removed.
    std::fs::remove_file(&kept).unwrap();
    let err = short_run(dir.path());
    assert!(err.contains("removed 1 stale test file"), "{err}");
    assert!(!real.exists());
}

#[test]
fn a_killed_runs_file_is_removed_and_the_proof_is_said() {
    let dir = scratch();
    let (real, pid) = killed_runs_file(dir.path());
    let err = short_run(dir.path());
    assert!(
        err.contains("removed 1 stale test file of killed runs")
            && err.contains(&real.display().to_string())
            && err.contains(&format!("by iopath pid {pid} which has exited"))
            && err.contains("its only link"),
        "{err}"
    );
    assert!(!real.exists());
    assert!(common::leftovers(dir.path()).is_empty());
}

/// Where no mark can be set (`IOPATH_NO_XATTR=1` stands in for vfat or a
/// FUSE mount), the file's name carries a tag of its inode and birth time:
/// the killed run's file is proven by it and removed, a `cp -p` copy under
/// the same name (another inode, a later birth) is left alone.
#[test]
fn without_extended_attributes_the_name_tag_proves_the_file() {
    let dir = scratch();
    let (real, pid) = killed_runs_file_with(dir.path(), true);
    let elsewhere = scratch();
    let copy = elsewhere.path().join(real.file_name().unwrap());
    cp(&["-p"], &real, &copy);
    let err = short_run_with(elsewhere.path(), true);
    assert!(!err.contains("stale") && copy.exists(), "{err}");
    let err = short_run_with(dir.path(), true);
    assert!(
        err.contains(&real.display().to_string())
            && err.contains(&format!(
                "named for its inode and birth time by iopath pid {pid} which has exited"
            )),
        "{err}"
    );
    assert!(!real.exists());
}

/// A run's named file is locked before it is marked: a reaper that sees
/// the mark (one in another pid namespace, to which the live run's pid
/// looks gone) always finds the lock held, and leaves the file.
#[test]
fn a_runs_file_is_locked_before_it_is_marked() {
    use iopath::run::target::reap::{claim, mark, try_lock};
    let dir = scratch();
    let path = dir.path().join("iopath-1-00000000.dat");
    let file = std::fs::File::create_new(&path).unwrap();
    let locked_when_marked = claim(&file, |f| {
        // What a reaper does: its own open of the file, then the lock.
        let reaper = std::fs::File::open(&path).unwrap();
        let locked = !try_lock(&reaper);
        mark(f);
        locked
    });
    assert!(locked_when_marked, "the mark was set before the lock");
    assert!(!try_lock(&std::fs::File::open(&path).unwrap()));
}

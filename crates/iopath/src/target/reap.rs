//! Files and cgroups left by a run that was killed (SIGKILL, a crash, the
//! machine losing power) and could not clean up: found by their names
//! (`iopath-<pid>-...`) and removed by the next run, which says so.
//!
//! A name's pid alone does not prove its owner is gone: pids are reused,
//! and a run in another pid namespace (a container sharing the directory)
//! has pids this one cannot see. So a file is removed only when
//! - no one holds an `flock` on it (a live run holds one on its named test
//!   file for as long as it runs, and on a copy destination from the moment
//!   the copy creates it until it is removed; the lock goes with the
//!   process), and
//! - its pid is not ours, and either no process has that pid, or the
//!   process that has it started after the file was last modified (so it
//!   cannot be the one that made it: a reused pid).
//!
//! A cgroup is removed when its pid is gone in the same sense and it holds
//! no process (`rmdir` refuses a cgroup that does).

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Slack on the comparison of a process's start with a file's time: the
/// boot time `/proc/stat` gives is in whole seconds.
const SLACK: Duration = Duration::from_secs(2);

/// The pid in an iopath name: `iopath-<pid>-<rest>`; for a file exactly
/// the names iopath gives (`iopath-<pid>-<8 hex digits>.dat`, the copy
/// pattern's `iopath-<pid>-copy-<hex>.dat`), so that a user's
/// `iopath-1-notes.dat` is never taken for one. `None` for any other name.
pub fn pid_of_name(name: &str, dat: bool) -> Option<u32> {
    let rest = name.strip_prefix("iopath-")?;
    let (pid, tail) = rest.split_once('-')?;
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    if tail.is_empty() {
        return None;
    }
    if dat {
        let stem = tail.strip_suffix(".dat")?;
        let ours = match stem.strip_prefix("copy-") {
            Some(n) => hex(n),
            None => stem.len() == 8 && hex(stem),
        };
        if !ours {
            return None;
        }
    }
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// When the process `pid` started (wall clock), `None` when there is no
/// such process (or it vanished while looking).
pub fn process_start(pid: u32) -> Option<SystemTime> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields count from
    // after the last ')'. `starttime` is field 22, the 20th after it.
    let after = &stat[stat.rfind(')')? + 1..];
    let ticks: u64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let hz = rustix::param::clock_ticks_per_second().max(1);
    let btime: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    Some(UNIX_EPOCH + Duration::from_secs(btime) + Duration::from_nanos(ticks * 1_000_000_000 / hz))
}

/// True when the process named by `pid` cannot be the one that made a
/// thing last modified at `modified`: no such process, or one that
/// started after it (the pid was reused).
pub fn owner_gone(pid: u32, modified: SystemTime) -> bool {
    if pid == std::process::id() {
        return false;
    }
    match process_start(pid) {
        None => !Path::new(&format!("/proc/{pid}")).exists(),
        Some(start) => start > modified + SLACK,
    }
}

/// Take an exclusive `flock` on `f` without waiting: false when another
/// open file holds one (a live run).
pub fn try_lock(f: &File) -> bool {
    rustix::fs::flock(f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
}

/// Remove the stale test files (`iopath-<pid>-*.dat`, the copy pattern's
/// `iopath-<pid>-copy-*.dat` among them) of killed runs in `dir`; the
/// paths removed.
pub fn stale_files(dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return removed;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = pid_of_name(&name, true) else {
            continue;
        };
        let path = e.path();
        // Regular files only, never through a symbolic link.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        // Ours only: a file of another user is never iopath's to remove.
        if !meta.file_type().is_file()
            || std::os::unix::fs::MetadataExt::uid(&meta) != rustix::process::geteuid().as_raw()
        {
            continue;
        }
        let Ok(modified) = meta.modified() else {
            continue;
        };
        if !owner_gone(pid, modified) {
            continue;
        }
        let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
        else {
            continue;
        };
        if !try_lock(&f) {
            continue;
        }
        if std::fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// The stderr line for what was reaped, `None` when nothing was.
pub fn message(what: (&str, &str), removed: &[PathBuf]) -> Option<String> {
    (!removed.is_empty()).then(|| {
        format!(
            "iopath: removed {} stale {} of killed runs: {}",
            removed.len(),
            if removed.len() == 1 { what.0 } else { what.1 },
            removed
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_iopath_files_and_cgroups() {
        assert_eq!(pid_of_name("iopath-123-0badcafe.dat", true), Some(123));
        assert_eq!(pid_of_name("iopath-77-copy-1f2.dat", true), Some(77));
        assert_eq!(pid_of_name("iopath-77-copy-1f2.txt", true), None);
        // A user's files that only look like ours (review of issue 14).
        assert_eq!(pid_of_name("iopath-99999-notes.dat", true), None);
        assert_eq!(pid_of_name("iopath-1-backup.dat", true), None);
        assert_eq!(pid_of_name("iopath-1-0badcafe1.dat", true), None);
        assert_eq!(pid_of_name("iopath-1-copy-.dat", true), None);
        assert_eq!(pid_of_name("iopath-test-probe-5", false), None);
        assert_eq!(pid_of_name("iopath--1.dat", true), None);
        assert_eq!(pid_of_name("iopath-12-3", false), Some(12));
        assert_eq!(pid_of_name("other-12-3.dat", true), None);
    }

    #[test]
    fn a_live_process_owns_what_it_made_after_it_started() {
        let me = std::process::id();
        let start = process_start(me).expect("our own start");
        assert!(start <= SystemTime::now() + SLACK);
        // Our own pid is never gone; pid 1 started long before now.
        assert!(!owner_gone(me, SystemTime::now()));
        assert!(!owner_gone(1, SystemTime::now()));
        // A file older than pid 1's start: pid 1 cannot have made it.
        assert!(owner_gone(1, UNIX_EPOCH));
        // A pid that cannot exist (above the kernel's pid_max limit).
        assert!(owner_gone(4_194_305, SystemTime::now()));
    }
}

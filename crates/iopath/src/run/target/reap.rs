//! Files and cgroups left by a run that was killed (SIGKILL, a crash, the
//! machine losing power) and could not clean up: found by their names
//! (`iopath-<pid>-...`) and removed by the next run, which says so
//! (`run::Event::StaleFiles`, `run::Event::StaleCgroups`).
//!
//! A name proves nothing: a user's `iopath-1-0badcafe.dat`, restored with
//! `cp -p` (old times and all), or a hard link a user made to keep a
//! leftover's data, looks the same. So iopath marks every named file it
//! makes, as it makes it ([`mark`]): the extended attribute
//! `user.iopath.owner` = `<pid>:<start>:<boot id>:<inode>` (the run's pid,
//! its start in clock ticks after boot as `/proc/<pid>/stat` gives it, the
//! kernel's boot id, the file's inode number). A file is removed only when
//! all of these hold:
//! - its name is one iopath gives, and it is a regular file of this user
//!   with one link (a second name is someone keeping it);
//! - it carries the mark, naming the name's pid and its own inode (`cp -p`
//!   drops extended attributes; `cp -a`, a restore or a move to another
//!   file system copies them onto another inode);
//! - the marked run is gone: the boot id is another boot's, or no process
//!   has the pid, or the one that has it started at another tick (a
//!   reused pid);
//! - no one holds an `flock` on it (a live run holds one on its named test
//!   file for as long as it runs, and on a copy destination from the moment
//!   the copy creates it until it is removed; the lock goes with the
//!   process): a run in another pid namespace has pids this one cannot
//!   see.
//!
//! A file system without user extended attributes (vfat, some FUSE and NFS
//! mounts) keeps no mark. There the named test file is renamed as soon as
//! it is made to carry a tag of its pid, inode and birth time (`statx`
//! btime, which no one can set): [`mark_or_tag`]. Such a file is proven by
//! one link, its tag matching its own inode and birth, and its run gone
//! (no process with the pid, or one started after the file was born). A
//! file with neither mark nor tag (no birth time either; a copy
//! destination there) is left alone, never guessed at from name and times.
//!
//! A cgroup is removed when its pid is gone (no process, or one that
//! started after the cgroup was made) and it holds no process (`rmdir`
//! refuses a cgroup that does).

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

/// When the process `pid` started, in clock ticks after boot (field 22 of
/// `/proc/<pid>/stat`); `None` when there is no such process (or it
/// vanished while looking).
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields count from
    // after the last ')'. `starttime` is field 22, the 20th after it.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// When the process `pid` started (wall clock), `None` when there is no
/// such process (or it vanished while looking).
pub fn process_start(pid: u32) -> Option<SystemTime> {
    let ticks = start_ticks(pid)?;
    let hz = rustix::param::clock_ticks_per_second().max(1);
    let btime: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    Some(UNIX_EPOCH + Duration::from_secs(btime) + Duration::from_nanos(ticks * 1_000_000_000 / hz))
}

/// The kernel's boot id (`/proc/sys/kernel/random/boot_id`), `-` when it
/// cannot be read.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty() && !s.contains(':'))
        .unwrap_or_else(|| "-".into())
}

/// The extended attribute that marks a file as made by an iopath run.
pub const MARK_XATTR: &str = "user.iopath.owner";

/// What [`MARK_XATTR`] says: the run that made the file, and the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub pid: u32,
    /// The run's start, in clock ticks after boot.
    pub start: u64,
    /// The boot it ran in (`-`: unknown).
    pub boot: String,
    /// The inode number of the file marked.
    pub ino: u64,
}

impl Mark {
    /// The value stored: `<pid>:<start>:<boot id>:<inode>`.
    pub fn value(&self) -> String {
        format!("{}:{}:{}:{}", self.pid, self.start, self.boot, self.ino)
    }

    pub fn parse(s: &str) -> Option<Mark> {
        let mut it = s.trim().split(':');
        let m = Mark {
            pid: it.next()?.parse().ok()?,
            start: it.next()?.parse().ok()?,
            boot: it.next()?.to_string(),
            ino: it.next()?.parse().ok()?,
        };
        it.next().is_none().then_some(m)
    }

    /// Whether the run it names is gone, and how it is known.
    pub fn owner_gone(&self) -> Option<Gone> {
        let boot = boot_id();
        if self.boot != "-" && boot != "-" && self.boot != boot {
            return Some(Gone::Rebooted);
        }
        match start_ticks(self.pid) {
            Some(t) if t == self.start => None,
            Some(_) => Some(Gone::PidReused),
            None if Path::new(&format!("/proc/{}", self.pid)).exists() => None,
            None => Some(Gone::Exited),
        }
    }
}

/// How the reaper knows a file's run is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// No process has its pid.
    Exited,
    /// The process with its pid started at another time.
    PidReused,
    /// It ran before the machine last booted.
    Rebooted,
}

/// Mark `file`, just created by this run, as iopath's ([`MARK_XATTR`]),
/// so that the reaper can tell it from a user's file of the same name once
/// this run is gone. False where the file system keeps no user extended
/// attributes: the file is then never reaped.
pub fn mark(file: &File) -> bool {
    if xattrs_off() {
        return false;
    }
    let Ok(meta) = file.metadata() else {
        return false;
    };
    let pid = std::process::id();
    let Some(start) = start_ticks(pid) else {
        return false;
    };
    let m = Mark {
        pid,
        start,
        boot: boot_id(),
        ino: std::os::unix::fs::MetadataExt::ino(&meta),
    };
    rustix::fs::fsetxattr(
        file,
        MARK_XATTR,
        m.value().as_bytes(),
        rustix::fs::XattrFlags::empty(),
    )
    .is_ok()
}

/// The mark on `file`, if it carries one.
pub fn mark_of(file: &File) -> Option<Mark> {
    if xattrs_off() {
        return None;
    }
    let mut buf = [0u8; 128];
    let n = rustix::fs::fgetxattr(file, MARK_XATTR, &mut buf[..]).ok()?;
    Mark::parse(std::str::from_utf8(&buf[..n]).ok()?)
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

/// Claim `file`, just made by this run, as a live run's: lock it
/// ([`try_lock`]), then mark it with `mark` ([`mark`], [`mark_or_tag`]),
/// in that order. A reaper that sees the mark must find the lock already
/// held: one in another pid namespace (where this run's pid looks gone)
/// would otherwise remove the file of a live run between the two steps.
pub fn claim<T>(file: &File, mark: impl FnOnce(&File) -> T) -> T {
    try_lock(file);
    mark(file)
}

/// Set to `1` (tests only), iopath behaves as on a file system without
/// user extended attributes: no mark is set or read, and a named test file
/// is proven by its name's tag ([`mark_or_tag`]).
pub const NO_XATTR_ENV: &str = "IOPATH_NO_XATTR";

fn xattrs_off() -> bool {
    std::env::var_os(NO_XATTR_ENV).is_some_and(|v| v == "1")
}

/// The birth time of `file` (`statx` btime: seconds, nanoseconds), where
/// the file system keeps one. Unlike the other times, no one can set it.
pub fn birth(file: &File) -> Option<(i64, u32)> {
    use rustix::fs::{AtFlags, StatxFlags};
    let st = rustix::fs::statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::BTIME).ok()?;
    (st.stx_mask & StatxFlags::BTIME.bits() != 0)
        .then_some((st.stx_btime.tv_sec, st.stx_btime.tv_nsec))
}

/// The 8 hex digits of a named test file that carries no mark: FNV-1a of
/// its maker's pid, its inode and its birth time, so that only that very
/// file (not a copy, not a restore: another inode, another birth) has it.
pub fn name_tag(pid: u32, ino: u64, birth: (i64, u32)) -> u32 {
    let bytes = [
        &pid.to_le_bytes()[..],
        &ino.to_le_bytes(),
        &birth.0.to_le_bytes(),
        &birth.1.to_le_bytes(),
    ];
    let h = bytes
        .concat()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    (h ^ (h >> 32)) as u32
}

/// Mark the named test file `file`, just made at `path` ([`mark`]); where
/// the file system keeps no user extended attributes, rename it (never
/// over another) to `iopath-<pid>-<tag>.dat`, its [`name_tag`]: the path
/// it has now. A file that gets neither (no birth time either, as on some
/// FUSE and NFS mounts) is never reaped.
pub fn mark_or_tag(file: &File, path: &Path) -> PathBuf {
    if mark(file) {
        return path.to_path_buf();
    }
    let (Some(b), Ok(meta)) = (birth(file), file.metadata()) else {
        return path.to_path_buf();
    };
    let pid = std::process::id();
    let tag = name_tag(pid, std::os::unix::fs::MetadataExt::ino(&meta), b);
    let tagged = path.with_file_name(format!("iopath-{pid}-{tag:08x}.dat"));
    let cwd = rustix::fs::CWD;
    match rustix::fs::renameat_with(cwd, path, cwd, &tagged, rustix::fs::RenameFlags::NOREPLACE) {
        Ok(()) => tagged,
        Err(_) => path.to_path_buf(),
    }
}

/// For a file with no mark: whether its name carries its [`name_tag`], and
/// then whether its maker `pid` is gone (no such process, or one started
/// after the file was born: a reused pid, or a later boot).
fn tag_proof(f: &File, path: &Path, pid: u32) -> Option<Gone> {
    let name = path.file_name()?.to_str()?;
    let hex = name
        .strip_prefix(&format!("iopath-{pid}-"))?
        .strip_suffix(".dat")?;
    let tag = u32::from_str_radix(hex, 16)
        .ok()
        .filter(|_| hex.len() == 8)?;
    let b = birth(f)?;
    let ino = std::os::unix::fs::MetadataExt::ino(&f.metadata().ok()?);
    if tag != name_tag(pid, ino, b) {
        return None;
    }
    let born = UNIX_EPOCH + Duration::new(u64::try_from(b.0).ok()?, b.1);
    match process_start(pid) {
        None if Path::new(&format!("/proc/{pid}")).exists() => None,
        None => Some(Gone::Exited),
        Some(start) if start > born + SLACK => Some(Gone::PidReused),
        Some(_) => None,
    }
}

/// A file the reaper removed, and what proved it a killed run's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaped {
    pub path: PathBuf,
    /// The pid of the run that made it (its name's and its mark's).
    pub pid: u32,
    pub gone: Gone,
    /// Proven by its mark, or (no extended attributes) by its name's tag.
    pub by_tag: bool,
}

/// Remove the stale test files (`iopath-<pid>-*.dat`, the copy pattern's
/// `iopath-<pid>-copy-*.dat` among them) of killed runs in `dir`, each only
/// when it is proven iopath's and its run gone (the module's rules); what
/// was removed. Anything not proven is left alone.
pub fn stale_files(dir: &Path) -> Vec<Reaped> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = pid_of_name(&e.file_name().to_string_lossy(), true)?;
            let path = e.path();
            let (gone, by_tag, _held) = proven_stale(&path, pid)?;
            std::fs::remove_file(&path).ok()?;
            Some(Reaped {
                path,
                pid,
                gone,
                by_tag,
            })
        })
        .collect()
}

/// Whether `path` (named for `pid`) is proven a killed run's file: how its
/// run is known gone, and the file opened and `flock`ed (to hold until it
/// is removed).
fn proven_stale(path: &Path, pid: u32) -> Option<(Gone, bool, File)> {
    use std::os::unix::fs::MetadataExt;
    // Opened without following a symbolic link, then checked as opened.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    // A regular file of this user's, with no other name.
    if !meta.file_type().is_file()
        || meta.uid() != rustix::process::geteuid().as_raw()
        || meta.nlink() != 1
    {
        return None;
    }
    if pid == std::process::id() {
        return None;
    }
    let (gone, by_tag) = match mark_of(&f) {
        Some(mark) if mark.pid == pid && mark.ino == meta.ino() => (mark.owner_gone()?, false),
        Some(_) => return None,
        None => (tag_proof(&f, path, pid)?, true),
    };
    // Not locked by a live run (in another pid namespace, say), and still
    // the file the name gives.
    if !try_lock(&f) {
        return None;
    }
    let now = std::fs::symlink_metadata(path).ok()?;
    (now.ino() == meta.ino() && now.dev() == meta.dev() && now.nlink() == 1)
        .then_some((gone, by_tag, f))
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
    fn a_mark_proves_its_file_and_its_runs_end() {
        let me = std::process::id();
        let start = start_ticks(me).unwrap();
        let m = Mark {
            pid: me,
            start,
            boot: boot_id(),
            ino: 42,
        };
        assert_eq!(Mark::parse(&m.value()), Some(m.clone()));
        assert_eq!(Mark::parse("1:2:x"), None);
        assert_eq!(Mark::parse("1:2:x:4:5"), None);
        // This very process: alive.
        assert_eq!(m.owner_gone(), None);
        let reused = Mark {
            start: start + 1,
            ..m.clone()
        };
        assert_eq!(reused.owner_gone(), Some(Gone::PidReused));
        let other_boot = Mark {
            boot: "00000000-0000-0000-0000-000000000000".into(),
            ..m.clone()
        };
        assert_eq!(other_boot.owner_gone(), Some(Gone::Rebooted));
        let exited = Mark {
            pid: 4_194_305,
            ..m
        };
        assert_eq!(exited.owner_gone(), Some(Gone::Exited));
    }

    #[test]
    fn a_name_tag_is_the_files_alone() {
        let t = name_tag(42, 1000, (1_700_000_000, 5));
        assert_eq!(t, name_tag(42, 1000, (1_700_000_000, 5)));
        assert_ne!(t, name_tag(43, 1000, (1_700_000_000, 5)));
        assert_ne!(t, name_tag(42, 1001, (1_700_000_000, 5)));
        assert_ne!(t, name_tag(42, 1000, (1_700_000_000, 6)));
    }

    #[test]
    fn a_file_marked_here_reads_back_its_mark() {
        let d = tempfile::tempdir().unwrap();
        let f = File::create(d.path().join("x")).unwrap();
        if !mark(&f) {
            return; // no user xattrs on this file system
        }
        let m = mark_of(&f).unwrap();
        assert_eq!(m.pid, std::process::id());
        assert_eq!(
            m.ino,
            std::os::unix::fs::MetadataExt::ino(&f.metadata().unwrap())
        );
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

//! Small system helpers: O_DIRECT alignment, memlock limits, file-system
//! names, cache eviction, and the hints that turn an errno into a next step.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

mod residency;
pub use residency::{cachestat_pages, residency, residency_mincore, Residency};

/// CPU affinity of the calling thread; they live with the NUMA helpers.
pub use crate::numa::{current_affinity, current_cpu, pin_current_thread};

/// Alignment O_DIRECT requires for a file, and where the figure came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DioAlign {
    /// Buffer address alignment.
    pub mem: usize,
    /// File offset and length alignment.
    pub offset: usize,
    /// `"statx DIOALIGN"`, `"sysfs logical_block_size"` or `"assumed"`.
    pub source: &'static str,
}

/// O_DIRECT alignment of `path`: `statx(STATX_DIOALIGN)` (Linux 6.1+), else the
/// logical block size of the device under it, else 4096 (safe everywhere).
pub fn dio_alignment(path: &Path) -> DioAlign {
    use rustix::fs::{statx, AtFlags, StatxFlags, CWD};
    if let Ok(st) = statx(CWD, path, AtFlags::empty(), StatxFlags::DIOALIGN) {
        if st.stx_mask & StatxFlags::DIOALIGN.bits() != 0 && st.stx_dio_offset_align != 0 {
            return DioAlign {
                mem: st.stx_dio_mem_align as usize,
                offset: st.stx_dio_offset_align as usize,
                source: "statx DIOALIGN",
            };
        }
    }
    if let Some(dir) = block_device_sysfs(path) {
        let lbs = std::fs::read_to_string(whole_disk(&dir).join("queue/logical_block_size"))
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        if let Some(lbs) = lbs.filter(|&v| v > 0) {
            return DioAlign {
                mem: lbs,
                offset: lbs,
                source: "sysfs logical_block_size",
            };
        }
    }
    DioAlign {
        mem: 4096,
        offset: 4096,
        source: "assumed",
    }
}

/// Where an alignment came from, as messages say it, from
/// [`DioAlign::source`]: `from statx DIOALIGN`, `from the device's logical
/// block size (sysfs)`, or for `assumed` why nothing better was known.
pub fn dio_provenance(source: &str) -> String {
    match source {
        "assumed" => "assumed: neither statx DIOALIGN nor a block device under the file gives \
                      one, and 4096 B suits every device"
            .to_string(),
        "sysfs logical_block_size" => "from the device's logical block size in sysfs".to_string(),
        other => format!("from {other}"),
    }
}

/// `/sys/dev/block/MAJ:MIN` of the device that holds `path` (a file on it, or
/// the block device node itself), when there is one.
pub fn block_device_sysfs(path: &Path) -> Option<PathBuf> {
    let (maj, min) = dev_numbers(path)?;
    let p = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let canon = std::fs::canonicalize(&p).ok()?;
    canon.exists().then_some(canon)
}

/// Device number (major, minor) of the device holding `path`, or of `path`
/// itself when it is a block device node.
pub fn dev_numbers(path: &Path) -> Option<(u32, u32)> {
    let st = rustix::fs::stat(path).ok()?;
    let is_blk =
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::BlockDevice;
    let dev = if is_blk { st.st_rdev } else { st.st_dev };
    Some((rustix::fs::major(dev), rustix::fs::minor(dev)))
}

/// The whole disk of a sysfs block device directory (a partition's parent).
pub fn whole_disk(dir: &Path) -> PathBuf {
    if dir.join("partition").exists() {
        if let Some(parent) = dir.parent() {
            return parent.to_path_buf();
        }
    }
    dir.to_path_buf()
}

/// RLIMIT_MEMLOCK (soft, hard); `None` means unlimited.
pub fn memlock_limit() -> (Option<u64>, Option<u64>) {
    let r = rustix::process::getrlimit(rustix::process::Resource::Memlock);
    (r.current, r.maximum)
}

/// Make sure at least `needed` bytes may be locked, raising the soft limit up
/// to the hard one when that is enough. Returns the new soft limit, or why it
/// cannot be done.
pub fn ensure_memlock(needed: u64) -> Result<Option<u64>, String> {
    let (soft, hard) = memlock_limit();
    if soft.is_none_or(|s| s >= needed) {
        return Ok(soft);
    }
    if hard.is_some_and(|h| h < needed) {
        return Err(format!(
            "RLIMIT_MEMLOCK hard limit is {} bytes, {} needed; raise it (ulimit -l, limits.conf, or systemd LimitMEMLOCK=) or run as root",
            hard.unwrap_or(0),
            needed
        ));
    }
    rustix::process::setrlimit(
        rustix::process::Resource::Memlock,
        rustix::process::Rlimit {
            current: hard,
            maximum: hard,
        },
    )
    .map_err(|e| format!("raising RLIMIT_MEMLOCK to {needed} bytes failed: {e}"))?;
    Ok(hard)
}

/// Name of a file system from its `statfs` magic number.
pub fn fs_type_name(magic: u64) -> &'static str {
    match magic {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x794C_7630 => "overlayfs",
        0xF2F5_2010 => "f2fs",
        0x2FC1_2FC1 => "zfs",
        0x6969 => "nfs",
        0xFF53_4D42 => "cifs",
        0x6573_5546 => "fuse",
        0x4d44 => "vfat",
        0x5346_544e => "ntfs",
        0x7366_746e => "ntfs3",
        0x9fa0 => "proc",
        0x6265_6572 => "sysfs",
        0x1373 => "devtmpfs",
        0x858458f6 => "ramfs",
        0xCA451A4E => "bcachefs",
        0x2011_BAB0 => "exfat",
        0x0BD0_0BD0 => "lustre",
        0x4750_4653 => "gpfs",
        0x6a656a63 => "fakeowner",
        0x01021997 => "v9fs",
        _ => "unknown",
    }
}

/// Open `path` read-only as a run's engines do: with `O_NOATIME` where
/// `noatime` (`--noatime`), so that iopath's own looks at the file (its
/// page-cache residency through a mapping, a warm read) leave the access
/// time alone as the engines' reads do. `EPERM` where the caller is not
/// the file's owner and lacks `CAP_FOWNER`.
pub fn open_read(path: &Path, noatime: bool) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(if noatime { libc::O_NOATIME } else { 0 })
        .open(path)
}

/// Whether the kernel refuses to open `path` with `O_NOATIME` for this
/// process (`EPERM`: neither its owner nor `CAP_FOWNER`). Any other
/// outcome (opened, missing, no read permission) is not this refusal.
pub fn noatime_refused(path: &Path) -> bool {
    matches!(open_read(path, true), Err(e) if e.raw_os_error() == Some(libc::EPERM))
}

/// File-system type of the file or directory at `path`.
pub fn fs_type_of(path: &Path) -> io::Result<&'static str> {
    let st = rustix::fs::statfs(path)?;
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    let magic = st.f_type as u64;
    Ok(fs_type_name(magic))
}

/// Bytes available to an unprivileged writer on the file system of `path`.
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(path)?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Length of an open file or block device. `fstat` gives 0 for a block
/// device; its size comes from seeking to its end.
pub fn file_len(file: &File) -> io::Result<u64> {
    let meta = file.metadata()?;
    if std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()) {
        Ok(rustix::fs::seek(file, rustix::fs::SeekFrom::End(0))?)
    } else {
        Ok(meta.len())
    }
}

/// True when the file system holding `path` is mounted read-only.
pub fn is_read_only(path: &Path) -> io::Result<bool> {
    let st = rustix::fs::statvfs(path)?;
    Ok(st.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
}

/// Write back dirty pages of `file`, then ask the kernel to drop its cached
/// pages (`posix_fadvise(POSIX_FADV_DONTNEED)`), so the next read goes to the
/// device.
pub fn evict_file(file: &File) -> io::Result<()> {
    rustix::fs::fsync(file.as_fd())?;
    rustix::fs::fadvise(file.as_fd(), 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

/// `kernel.io_uring_disabled` (0 allowed, 1 only for a group, 2 disabled);
/// `None` when the sysctl does not exist.
pub fn io_uring_disabled() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// What to do next after `op` failed with `err`, when iopath knows.
pub fn errno_hint(op: &str, err: &io::Error) -> Option<String> {
    let code = err.raw_os_error()?;
    let s = match (op, code) {
        ("open O_DIRECT", libc::EINVAL) => {
            "this file system does not support O_DIRECT; use --methods buffered,mmap,uring-buffered or a directory on ext4/xfs".to_string()
        }
        ("io_uring_setup", libc::EPERM) => match io_uring_disabled() {
            Some(v) if v > 0 => format!(
                "io_uring is disabled by sysctl kernel.io_uring_disabled={v}; set it to 0 to allow it"
            ),
            _ => "io_uring is not permitted (a seccomp filter or container policy blocks it)".to_string(),
        },
        ("io_uring_setup", libc::ENOSYS) => {
            "this kernel has no io_uring (Linux 5.1+ with CONFIG_IO_URING)".to_string()
        }
        ("io_uring_setup", libc::ENOMEM) | ("io_uring_register_buffers", libc::ENOMEM) => {
            let (soft, _) = memlock_limit();
            format!(
                "locked memory exhausted (RLIMIT_MEMLOCK {}; it is shared by all processes of this user): raise it with ulimit -l, or lower --qd/--bs",
                soft.map_or("unlimited".to_string(), |b| format!("{b} bytes"))
            )
        }
        ("io_setup", libc::EAGAIN) => {
            "the system-wide AIO context limit is reached: raise fs.aio-max-nr or lower --qd/--threads".to_string()
        }
        ("io_setup", libc::ENOSYS) => "this kernel was built without AIO (CONFIG_AIO)".to_string(),
        (_, libc::EOPNOTSUPP) => "the device or file system does not support this operation".to_string(),
        (_, libc::ENOSPC) => "no space left on the device: use a smaller --size or another --dir".to_string(),
        (_, libc::EACCES) | (_, libc::EPERM) => {
            "permission denied: check the file's permissions or run as a user who may write it".to_string()
        }
        (_, libc::EROFS) => "the file system is read-only: use read patterns only or another --dir".to_string(),
        (_, libc::EMFILE) | (_, libc::ENFILE) | (_, libc::ENOMEM) => return limit_hint(code),
        (_, libc::ENOENT) => {
            "the path named, or a directory on it, does not exist (removed meanwhile?): check that it exists, then run again".to_string()
        }
        _ => return None,
    };
    Some(s)
}

/// RLIMIT_NOFILE (soft, hard); `None` means unlimited.
pub fn nofile_limit() -> (Option<u64>, Option<u64>) {
    let r = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    (r.current, r.maximum)
}

/// True for the errors of a limit of this process or of the system (open
/// files, memory) rather than of the file or its file system: `EMFILE`,
/// `ENFILE`, `ENOMEM`.
pub fn is_limit_error(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOMEM)
    )
}

/// The limit behind `EMFILE`, `ENFILE` or `ENOMEM` (`code`), with its value
/// and the next step; `None` for another error.
pub fn limit_hint(code: i32) -> Option<String> {
    let show = |l: Option<u64>| l.map_or("unlimited".to_string(), |b| b.to_string());
    Some(match code {
        libc::EMFILE => {
            let (soft, hard) = nofile_limit();
            format!(
                "this process may have only {} files open (ulimit -n {}, hard limit {}): raise it with `ulimit -n 1024` or more, or lower --threads/--qd",
                show(soft),
                show(soft),
                show(hard)
            )
        }
        libc::ENFILE => "the system's table of open files is full (fs.file-max): close other programs or raise fs.file-max".to_string(),
        libc::ENOMEM => {
            let (soft, _) = memlock_limit();
            let bytes = |l: Option<u64>| l.map_or("unlimited".to_string(), |b| format!("{b} bytes"));
            // An address-space limit (ulimit -v) fails mappings with ENOMEM
            // too: name it where one is set.
            let space = rustix::process::getrlimit(rustix::process::Resource::As).current;
            format!(
                "out of memory, or of locked memory (ulimit -l: {}){}: free memory, raise {}, or lower --threads, --qd, --bs or --ucache-size",
                bytes(soft),
                space.map_or(String::new(), |_| format!(", or of address space (ulimit -v: {})", bytes(space))),
                if space.is_some() { "`ulimit -l` or `ulimit -v`" } else { "`ulimit -l`" }
            )
        }
        _ => return None,
    })
}

/// CPU use of a thread or process, from `getrusage(2)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadUsage {
    /// CPU time from the scheduler's precise clock
    /// (`CLOCK_THREAD_CPUTIME_ID` / `CLOCK_PROCESS_CPUTIME_ID`). The
    /// user/sys split below comes from `getrusage`, which is only brought
    /// up to date at scheduler ticks: over short intervals use this.
    pub cpu_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Voluntary context switches (the thread waited).
    pub ctx_vol: u64,
    /// Involuntary context switches (the thread was preempted).
    pub ctx_invol: u64,
    pub minflt: u64,
    pub majflt: u64,
    /// Time the thread was runnable but waiting for a CPU (the scheduler's
    /// `run_delay`, the second field of `/proc/thread-self/schedstat`);
    /// 0 for a process, and where the kernel does not say
    /// (`CONFIG_SCHED_INFO` off).
    pub run_delay_ns: u64,
}

impl ThreadUsage {
    /// `other` added to `self`, field by field (several threads' usage).
    pub fn add(&mut self, other: &ThreadUsage) {
        self.cpu_ns += other.cpu_ns;
        self.user_ns += other.user_ns;
        self.sys_ns += other.sys_ns;
        self.ctx_vol += other.ctx_vol;
        self.ctx_invol += other.ctx_invol;
        self.minflt += other.minflt;
        self.majflt += other.majflt;
        self.run_delay_ns += other.run_delay_ns;
    }

    /// What happened between `before` and `self`.
    pub fn since(&self, before: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu_ns: self.cpu_ns.saturating_sub(before.cpu_ns),
            user_ns: self.user_ns.saturating_sub(before.user_ns),
            sys_ns: self.sys_ns.saturating_sub(before.sys_ns),
            ctx_vol: self.ctx_vol.saturating_sub(before.ctx_vol),
            ctx_invol: self.ctx_invol.saturating_sub(before.ctx_invol),
            minflt: self.minflt.saturating_sub(before.minflt),
            majflt: self.majflt.saturating_sub(before.majflt),
            run_delay_ns: self.run_delay_ns.saturating_sub(before.run_delay_ns),
        }
    }
}

/// The calling thread's `run_delay` (ns spent runnable, waiting for a
/// CPU): the second of the three numbers of `/proc/thread-self/schedstat`.
fn thread_run_delay_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// CPU time so far (ns) of each thread of this process whose name
/// (`/proc/self/task/TID/comm`, at most 15 bytes) starts with one of
/// `prefixes`, by thread id. Read with the thread's own CPU clock (the
/// clock id the kernel makes from a thread id, as `pthread_getcpuclockid`
/// does), so it is as exact as `CLOCK_THREAD_CPUTIME_ID`. A thread that
/// exits meanwhile is left out.
pub fn named_threads_cpu_ns(prefixes: &[&str]) -> Vec<(i32, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|t| t.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(comm) = std::fs::read_to_string(e.path().join("comm")) else {
            continue;
        };
        let comm = comm.trim_end();
        if !prefixes.iter().any(|p| comm.starts_with(p)) {
            continue;
        }
        // CPUCLOCK_SCHED (2) | CPUCLOCK_PERTHREAD_MASK (4), the id in the
        // bits above: the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED).
        let clock = ((!tid) << 3) | 6;
        // SAFETY: ts is a valid, writable timespec; clock_gettime writes
        // only it, and fails (EINVAL) for a thread that has exited or is
        // not of this process.
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: as above: a valid pointer to a timespec of ours.
        let rc = unsafe { libc::clock_gettime(clock as libc::clockid_t, &mut ts) };
        if rc == 0 {
            out.push((tid, ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64));
        }
    }
    out
}

/// CPU use of the calling thread so far, with its wait for a CPU.
pub fn thread_usage() -> ThreadUsage {
    ThreadUsage {
        run_delay_ns: thread_run_delay_ns().unwrap_or(0),
        ..rusage(libc::RUSAGE_THREAD, rustix::time::ClockId::ThreadCPUTime)
    }
}

/// CPU use of the whole process so far, threads that have exited included
/// (io_uring's SQPOLL and io-wq kernel threads are threads of the process).
pub fn process_usage() -> ThreadUsage {
    rusage(libc::RUSAGE_SELF, rustix::time::ClockId::ProcessCPUTime)
}

fn rusage(who: libc::c_int, clock: rustix::time::ClockId) -> ThreadUsage {
    let t = rustix::time::clock_gettime(clock);
    let cpu_ns = t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid, writable rusage; RUSAGE_THREAD (Linux 2.6.26+)
    // and RUSAGE_SELF fill it and have no other effect.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return ThreadUsage {
            cpu_ns,
            ..ThreadUsage::default()
        };
    }
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
    ThreadUsage {
        cpu_ns,
        user_ns: ns(ru.ru_utime),
        sys_ns: ns(ru.ru_stime),
        ctx_vol: ru.ru_nvcsw as u64,
        ctx_invol: ru.ru_nivcsw as u64,
        minflt: ru.ru_minflt as u64,
        majflt: ru.ru_majflt as u64,
        run_delay_ns: 0,
    }
}

/// The mount that holds a path: one line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// Where it is mounted (`/`, `/mnt/pmem`).
    pub mount_point: PathBuf,
    /// File-system type (`ext4`, `xfs`, `tmpfs`).
    pub fs_type: String,
    /// What is mounted (`/dev/pmem0`, `tmpfs`).
    pub source: String,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// The file system's own options (`rw,dax=always`): where `dax` shows.
    pub super_options: String,
}

impl MountEntry {
    /// Mount and file-system options together, each once, as `findmnt`
    /// shows them (`rw,relatime,dax=always`).
    pub fn options(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for o in self
            .mount_options
            .split(',')
            .chain(self.super_options.split(','))
        {
            if !o.is_empty() && !seen.contains(&o) {
                seen.push(o);
            }
        }
        seen.join(",")
    }

    /// The DAX mode the options ask for: `Some("always")` for `dax` or
    /// `dax=always`, `Some("inode")`, `Some("never")`, or `None` when no
    /// option mentions DAX.
    pub fn dax_option(&self) -> Option<&str> {
        self.mount_options
            .split(',')
            .chain(self.super_options.split(','))
            .find_map(|o| match o {
                "dax" => Some("always"),
                _ => o.strip_prefix("dax="),
            })
    }
}

/// The mount holding `path` (which must exist), from `/proc/self/mountinfo`.
pub fn mount_of(path: &Path) -> Option<MountEntry> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let abs = std::fs::canonicalize(path).ok()?;
    parse_mountinfo(&text, &abs, dev_numbers(&abs))
}

/// The entry of `mountinfo` text that holds the absolute path `abs`: the
/// longest mount point above it; of several on that point, one of its
/// device `(major, minor)`, else the last (a later mount hides an earlier
/// one on the same point).
pub fn parse_mountinfo(text: &str, abs: &Path, dev: Option<(u32, u32)>) -> Option<MountEntry> {
    let mut best: Option<((usize, bool), MountEntry)> = None;
    for line in text.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 6 || r.len() < 3 {
            continue;
        }
        let mount_point = PathBuf::from(unescape_mountinfo(l[4]));
        if !abs.starts_with(&mount_point) {
            continue;
        }
        let same_dev = dev.is_some_and(|(ma, mi)| l[2] == format!("{ma}:{mi}"));
        let rank = (mount_point.components().count(), same_dev);
        if best.as_ref().is_some_and(|(b, _)| *b > rank) {
            continue;
        }
        let entry = MountEntry {
            mount_point,
            fs_type: unescape_mountinfo(r[0]),
            source: unescape_mountinfo(r[1]),
            mount_options: l[5].to_string(),
            super_options: r[2].to_string(),
        };
        best = Some((rank, entry));
    }
    best.map(|(_, e)| e)
}

/// Undo mountinfo's octal escapes (`\040` is a space).
fn unescape_mountinfo(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let (b'\\', Some(d)) = (b[i], oct) {
            let v = d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
            if let Ok(v) = u8::try_from(v) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the kernel accesses `path` with DAX (`statx` attribute
/// `STATX_ATTR_DAX`, Linux 5.8+); `None` when the kernel does not say.
pub fn is_dax_file(path: &Path) -> Option<bool> {
    use rustix::fs::{statx, AtFlags, StatxAttributes, StatxFlags, CWD};
    let st = statx(CWD, path, AtFlags::empty(), StatxFlags::BASIC_STATS).ok()?;
    let dax = StatxAttributes::DAX;
    st.stx_attributes_mask
        .contains(dax)
        .then_some(st.stx_attributes.contains(dax))
}

#[cfg(test)]
mod tests {

    #[test]
    fn usages_add_up_field_by_field_run_delay_too() {
        let one = ThreadUsage {
            cpu_ns: 1,
            user_ns: 2,
            sys_ns: 3,
            ctx_vol: 4,
            ctx_invol: 5,
            minflt: 6,
            majflt: 7,
            run_delay_ns: 8,
        };
        let mut sum = one;
        sum.add(&one);
        assert_eq!(sum.since(&one), one);
        assert_eq!(sum.run_delay_ns, 16);
    }

    /// Another thread's CPU clock, read by its id, is the thread's own
    /// clock: at least what the thread read itself before it stopped.
    #[test]
    fn a_named_threads_cpu_is_read_by_its_id() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::Builder::new()
            .name("iopath-cputest".into())
            .spawn(move || {
                let mut x = 0u64;
                for i in 0..2_000_000u64 {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
                }
                tx.send(thread_usage().cpu_ns).unwrap();
                let _ = done_rx.recv();
                x
            })
            .unwrap();
        let own = rx.recv().unwrap();
        let seen = named_threads_cpu_ns(&["iopath-cputest"]);
        done_tx.send(()).unwrap();
        h.join().unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(own > 0 && seen[0].1 >= own, "{own} {seen:?}");
        assert!(named_threads_cpu_ns(&["no-such-thread-name"]).is_empty());
    }
    use super::*;

    #[test]
    fn fs_names() {
        assert_eq!(fs_type_name(0xEF53), "ext4");
        assert_eq!(fs_type_name(0x0102_1994), "tmpfs");
        assert_eq!(fs_type_name(1), "unknown");
    }

    #[test]
    fn alignment_is_a_power_of_two_here() {
        let dir = tempfile::tempdir().unwrap();
        let a = dio_alignment(dir.path());
        assert!(
            a.offset.is_power_of_two() && a.mem.is_power_of_two(),
            "{a:?}"
        );
    }

    #[test]
    fn hints_name_the_next_step() {
        let e = io::Error::from_raw_os_error(libc::EINVAL);
        assert!(errno_hint("open O_DIRECT", &e)
            .unwrap()
            .contains("--methods"));
        let e = io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(errno_hint("pwrite", &e).unwrap().contains("--size"));
        let e = io::Error::from_raw_os_error(libc::EINTR);
        assert!(errno_hint("pwrite", &e).is_none());
    }

    #[test]
    fn thread_usage_moves_forward() {
        let a = thread_usage();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x != 1);
        let d = thread_usage().since(&a);
        assert!(d.cpu_ns > 0, "{d:?}");
    }

    #[test]
    fn memlock_request_below_limit_is_ok() {
        assert!(ensure_memlock(1).is_ok());
    }

    #[test]
    fn mountinfo_finds_the_mount_of_a_path() {
        let text = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=100k
40 27 259:0 / /mnt/pm\\040em rw,relatime shared:1 - xfs /dev/pmem0 rw,attr2,dax=always
41 27 259:1 / /mnt/pm rw - ext4 /dev/pmem1 rw,dax
";
        let m = |p: &str, dev| parse_mountinfo(text, Path::new(p), dev).unwrap();
        let root = m("/work/x.dat", None);
        assert_eq!(
            (root.fs_type.as_str(), root.source.as_str()),
            ("ext4", "/dev/vda")
        );
        assert_eq!(root.options(), "rw,relatime,discard");
        assert_eq!(root.dax_option(), None);
        assert_eq!(m("/dev/shm/a", None).fs_type, "tmpfs");
        let pm = m("/mnt/pm em/f", None);
        assert_eq!(pm.mount_point, Path::new("/mnt/pm em"));
        assert_eq!(pm.dax_option(), Some("always"));
        assert_eq!(
            m("/mnt/pm/f", None).dax_option(),
            Some("always"),
            "bare dax"
        );
        // Not a prefix by characters: /mnt/pmx is on /.
        assert_eq!(m("/mnt/pmx", None).fs_type, "ext4");
        // Of two mounts on one point, the later one, unless the other is
        // the path's device.
        let stacked = format!("{text}50 27 0:40 / /mnt/pm rw - tmpfs tmpfs rw\n");
        let on = |dev| parse_mountinfo(&stacked, Path::new("/mnt/pm/f"), dev).unwrap();
        assert_eq!(on(None).fs_type, "tmpfs");
        assert_eq!(on(Some((259, 1))).fs_type, "ext4");
    }

    #[test]
    fn mount_of_this_directory() {
        let dir = tempfile::tempdir().unwrap();
        let m = mount_of(dir.path()).expect("a mount");
        assert!(dir
            .path()
            .canonicalize()
            .unwrap()
            .starts_with(&m.mount_point));
        assert!(!m.fs_type.is_empty() && !m.options().is_empty(), "{m:?}");
    }
}

//! Small system helpers: O_DIRECT alignment, memlock limits, file-system
//! names, cache eviction, and the hints that turn an errno into a next step.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

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

/// `/sys/dev/block/MAJ:MIN` of the device that holds `path` (a file on it, or
/// the block device node itself), when there is one.
pub fn block_device_sysfs(path: &Path) -> Option<PathBuf> {
    let st = rustix::fs::stat(path).ok()?;
    let is_blk =
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::BlockDevice;
    let dev = if is_blk { st.st_rdev } else { st.st_dev };
    let (maj, min) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let p = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let canon = std::fs::canonicalize(&p).ok()?;
    canon.exists().then_some(canon)
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
    // map_or, not is_none_or: the MSRV is 1.80 and is_none_or is 1.82.
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
            "locked memory exhausted: raise RLIMIT_MEMLOCK (ulimit -l) or lower --qd/--bs".to_string()
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
        _ => return None,
    };
    Some(s)
}

#[cfg(test)]
mod tests {
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
    fn memlock_request_below_limit_is_ok() {
        assert!(ensure_memlock(1).is_ok());
    }
}

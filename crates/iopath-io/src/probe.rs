//! Probe, don't assume: a method is usable on a file only after it has opened
//! the file and completed a real read there. IOPOLL in particular is only
//! proven by a completion: a device without poll queues accepts the ring and
//! the request, then fails the completion with EOPNOTSUPP.

use std::path::Path;

use crate::{open, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

/// Whether a method works on a given file, and what to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodStatus {
    pub method: Method,
    /// `None` when usable; otherwise why not and what to do.
    pub unusable: Option<String>,
    /// Things worth saying even when usable (fallbacks, tmpfs caveats).
    pub notes: Vec<String>,
}

impl MethodStatus {
    pub fn usable(&self) -> bool {
        self.unusable.is_none()
    }
}

/// Open `method` on `path` (an existing file of at least `len` bytes) and read
/// `len` bytes at offset 0. `len` should be a multiple of the O_DIRECT
/// alignment. Never writes.
pub fn probe_method(method: Method, path: &Path, len: usize) -> MethodStatus {
    probe_method_with(method, path, len, false)
}

/// [`probe_method`], opening as the run will: with `O_NOATIME` when
/// `noatime` ([`OpenSpec::noatime`]), so that a file the caller may not
/// open so is found unusable here, and the probe's read leaves the access
/// time alone.
pub fn probe_method_with(method: Method, path: &Path, len: usize, noatime: bool) -> MethodStatus {
    let mut st = MethodStatus {
        method,
        unusable: None,
        notes: Vec::new(),
    };
    if method.copy_only() {
        // Nothing to open: the copy itself tells (EXDEV, ENOSYS), and a
        // refusal skips the copy case with the reason.
        st.notes.push(format!(
            "{method} only copies files: it runs with the copy pattern"
        ));
        return st;
    }
    let spec = OpenSpec {
        path: path.to_path_buf(),
        write: false,
        block_size: len.max(1),
        queue_depth: if method.is_async() { 2 } else { 1 },
        sync: SyncPolicy::None,
        span_bytes: len as u64,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime,
    };
    let mut eng = match open(method, &spec) {
        Ok(e) => e,
        Err(EngineError::Unsupported { reason, .. }) => {
            st.unusable = Some(reason);
            return st;
        }
        Err(e) => {
            st.unusable = Some(e.to_string());
            return st;
        }
    };
    st.notes.extend(eng.caps().notes.iter().cloned());
    let req = IoReq {
        op: Op::Read,
        offset: 0,
        len: len as u32,
        slot: 0,
    };
    let mut done = Vec::with_capacity(2);
    let outcome = eng.submit(&[req], &mut done).and_then(|_| {
        if done.is_empty() {
            eng.reap(1, &mut done)
        } else {
            Ok(())
        }
    });
    match (outcome, done.first()) {
        (Err(e), _) => st.unusable = Some(e.to_string()),
        (Ok(()), None) => st.unusable = Some("no completion arrived for a probe read".into()),
        (Ok(()), Some(c)) => match c.result {
            Ok(n) if n as usize == len => {}
            Ok(n) => {
                st.unusable = Some(format!(
                    "a probe read of {len} bytes at offset 0 of {} returned {n}: the method cannot read this file",
                    path.display()
                ))
            }
            Err(errno) => st.unusable = Some(explain_completion_error(method, path, errno)),
        },
    }
    // A block-device node's own file system (devtmpfs, which says tmpfs)
    // is not where its data lives.
    let is_block_node = std::fs::metadata(path)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    if st.usable() && method.is_direct() && !is_block_node {
        if let Ok("tmpfs") = crate::sys::fs_type_of(path) {
            st.notes.push(
                "tmpfs accepts O_DIRECT but the file lives in memory: no device is measured".into(),
            );
        }
    }
    st
}

/// The device polled for `path`: a block device itself, or the one under a
/// file's directory.
fn polled_device(path: &Path) -> String {
    let is_block = std::fs::metadata(path)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    if is_block {
        format!("the device {}", path.display())
    } else {
        format!("the device under {}", parent_dir(path))
    }
}

fn parent_dir(path: &Path) -> String {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    abs.parent().unwrap_or(&abs).display().to_string()
}

/// Why `RWF_DONTCACHE` was refused (EOPNOTSUPP): a kernel before 6.14
/// knows no such flag; a newer one refuses it on a file system without
/// `FOP_DONTCACHE` (or on DAX).
pub(crate) fn dontcache_refused(path: &Path) -> String {
    let fs = crate::sys::fs_type_of(path).unwrap_or("unknown");
    let release = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    let new_enough = kernel_at_least(&release, 6, 14);
    let is_block = std::fs::metadata(path)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    let why = if new_enough && is_block {
        format!(
            "the kernel ({release}) has RWF_DONTCACHE, but not for a block device node such as {}: it works on files of a file system that supports it",
            path.display()
        )
    } else if new_enough {
        format!(
            "the kernel ({release}) has RWF_DONTCACHE, but the file system of {} ({fs}) does not support uncached buffered I/O",
            parent_dir(path)
        )
    } else {
        format!("RWF_DONTCACHE needs Linux 6.14 or later; this kernel is {release}")
    };
    format!(
        "{why} (EOPNOTSUPP); use a directory on ext4 or xfs (on Linux 6.18 tmpfs, btrfs and block device nodes refuse it), or --methods buffered,direct"
    )
}

/// `release` (`6.18.0-foo`) is at least `major.minor`; false when unreadable.
pub(crate) fn kernel_at_least(release: &str, major: u32, minor: u32) -> bool {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().unwrap_or(0));
    match (it.next(), it.next()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => false,
    }
}

fn explain_completion_error(method: Method, path: &Path, errno: i32) -> String {
    let e = std::io::Error::from_raw_os_error(errno);
    match (method, errno) {
        // On tmpfs there is no device at all, let alone poll queues.
        (Method::UringIopoll, libc::EOPNOTSUPP)
            if crate::sys::fs_type_of(path).ok() == Some("tmpfs")
                && !std::fs::metadata(path).is_ok_and(|m| {
                    std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type())
                }) =>
        {
            format!(
                "polled completions fail with EOPNOTSUPP: {} is on tmpfs, memory with no device \
                 to poll; use uring, or a directory on an NVMe device with poll queues",
                parent_dir(path)
            )
        }
        (Method::UringIopoll, libc::EOPNOTSUPP) => format!(
            "polled completions fail with EOPNOTSUPP: {} has no poll queues \
             (SATA and loop devices cannot be polled, nor NVMe or virtio-blk without nvme.poll_queues=N or virtio_blk.poll_queues=N); use uring",
            polled_device(path)
        ),
        (Method::Dontcache | Method::UringDontcache, libc::EOPNOTSUPP) => dontcache_refused(path),
        (_, libc::EINVAL) if method.is_direct() => format!(
            "a probe read with O_DIRECT failed with EINVAL on {}: the file system or device \
             refuses this alignment or direct I/O altogether; use a buffered method",
            path.display()
        ),
        _ => format!("a probe read failed on {}: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: &str = "tmpfs accepts O_DIRECT";

    /// Issue 18 (output): on tmpfs uring-iopoll's reason spoke of "the
    /// device under /dev/shm"; there is none.
    #[test]
    fn polling_on_tmpfs_names_no_device() {
        let shm = Path::new("/dev/shm");
        if crate::sys::fs_type_of(shm).ok() != Some("tmpfs") {
            eprintln!("skipped: /dev/shm is not tmpfs here");
            return;
        }
        let f = tempfile::NamedTempFile::new_in(shm).unwrap();
        let why = explain_completion_error(Method::UringIopoll, f.path(), libc::EOPNOTSUPP);
        assert!(why.contains("is on tmpfs, memory with no device"), "{why}");
        assert!(!why.contains("the device under"), "{why}");
    }

    /// A block-device node sits in devtmpfs, which statfs calls tmpfs; its
    /// data does not live there. A loop device over a file in /dev/shm
    /// (as root; skipped when losetup fails).
    #[test]
    fn a_block_device_node_gets_no_tmpfs_note() {
        let shm = Path::new("/dev/shm");
        if crate::sys::fs_type_of(shm).ok() != Some("tmpfs") {
            eprintln!("skipped: /dev/shm is not tmpfs here");
            return;
        }
        let f = tempfile::NamedTempFile::new_in(shm).unwrap();
        f.as_file().set_len(1 << 20).unwrap();
        let on_tmpfs = probe_method(Method::Direct, f.path(), 4096);
        // Older kernels refuse O_DIRECT on tmpfs; newer ones get the note.
        if on_tmpfs.usable() {
            assert!(
                on_tmpfs.notes.iter().any(|n| n.contains(NOTE)),
                "{on_tmpfs:?}"
            );
        }
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(f.path())
            .output();
        let dev = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            other => {
                eprintln!("skipped: losetup failed: {other:?}");
                return;
            }
        };
        let st = probe_method(Method::Direct, Path::new(&dev), 4096);
        let _ = std::process::Command::new("losetup")
            .args(["-d", &dev])
            .status();
        assert!(st.usable(), "{dev}: {st:?}");
        assert!(!st.notes.iter().any(|n| n.contains(NOTE)), "{dev}: {st:?}");
    }
}

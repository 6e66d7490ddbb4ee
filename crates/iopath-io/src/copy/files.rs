//! The system calls under every copy method: opening the source (O_DIRECT
//! when asked), creating the destination (never over an existing file),
//! toggling O_DIRECT on an open file, reading and writing whole buffers,
//! closing with the error `close` reports, and the errors all of these
//! name.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

use rustix::fs::OFlags;

use super::CopyMethod;
use crate::{EngineError, SyncPolicy};

/// Open the source read-only, with O_DIRECT when `direct`.
pub(super) fn open_src(method: CopyMethod, path: &Path, direct: bool) -> Result<File, EngineError> {
    let flags = if direct { libc::O_DIRECT } else { 0 };
    match OpenOptions::new().read(true).custom_flags(flags).open(path) {
        Ok(f) => Ok(f),
        Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
            Err(method.unsupported(refuses_direct(path)))
        }
        Err(e) => Err(EngineError::os(
            if direct { "open O_DIRECT" } else { "open" },
            path,
            e,
        )),
    }
}

pub(super) fn refuses_direct(path: &Path) -> String {
    format!(
        "the file system of {} refuses O_DIRECT (EINVAL); use read-write, copy-file-range, sendfile or mmap-write there, or a directory on ext4/xfs",
        path.display()
    )
}

/// Create the destination, never over an existing file, write-only, with the
/// sync policy's open flag (`O_DSYNC`/`O_SYNC`).
pub(super) fn create_dst(path: &Path, sync: SyncPolicy) -> Result<File, EngineError> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(sync.open_flags())
        .open(path)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                EngineError::Os {
                    op: "create",
                    path: path.to_path_buf(),
                    source: e,
                    hint: Some(
                        "the copy destination already exists and copy never overwrites a file: remove it or name another"
                            .into(),
                    ),
                }
            } else {
                EngineError::os("create", path, e)
            }
        })
}

/// Set or clear O_DIRECT on an open file. Setting it fails with EINVAL where
/// the file system cannot do direct I/O.
pub(super) fn set_direct(fd: BorrowedFd<'_>, on: bool) -> io::Result<()> {
    let fl = rustix::fs::fcntl_getfl(fd)?;
    let fl = if on {
        fl | OFlags::DIRECT
    } else {
        fl - OFlags::DIRECT
    };
    rustix::fs::fcntl_setfl(fd, fl)?;
    Ok(())
}

/// Nanoseconds since `t`.
#[inline]
pub(super) fn ns_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The source ended at `at` before `len` bytes.
pub(super) fn short_source(path: &Path, at: u64, len: u64) -> EngineError {
    EngineError::Os {
        op: "read",
        path: path.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the source ended at byte {at}, before the {len} bytes to copy"),
        ),
        hint: Some("was it truncated during the copy?".into()),
    }
}

/// Read exactly `buf.len()` bytes at `off`; end of file is an error.
pub(super) fn pread_full(
    fd: BorrowedFd<'_>,
    buf: &mut [u8],
    off: u64,
    path: &Path,
    len: u64,
) -> Result<(), EngineError> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(fd, &mut buf[done..], off + done as u64) {
            Ok(0) => return Err(short_source(path, off + done as u64, len)),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(EngineError::os("pread", path, e.into())),
        }
    }
    Ok(())
}

/// Write all of `buf` at `off`.
pub(super) fn pwrite_full(
    fd: BorrowedFd<'_>,
    buf: &[u8],
    off: u64,
    path: &Path,
) -> Result<(), EngineError> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pwrite(fd, &buf[done..], off + done as u64) {
            Ok(0) => return Err(write_zero(path)),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(EngineError::os("pwrite", path, e.into())),
        }
    }
    Ok(())
}

pub(super) fn write_zero(path: &Path) -> EngineError {
    EngineError::os(
        "write",
        path,
        io::Error::new(io::ErrorKind::WriteZero, "the write moved no bytes"),
    )
}

/// Close `file`, reporting the error `close` returns (NFS reports deferred
/// write errors there); EINTR still closes the descriptor on Linux.
pub(super) fn close(file: File, path: &Path) -> Result<(), EngineError> {
    let fd = file.into_raw_fd();
    // SAFETY: `fd` was just released from a `File` we owned, so it is open,
    // owned by nobody else, and closed exactly once, here.
    let rc = unsafe { libc::close(fd) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(EngineError::os("close", path, e));
        }
    }
    Ok(())
}

pub(super) fn fs_name(path: &Path) -> &'static str {
    crate::sys::fs_type_of(path).unwrap_or("unknown")
}

/// Why `copy_file_range` into `dst` may move no data, when it may.
pub(super) fn shares_extents(dst: &Path) -> Option<String> {
    let fs = fs_name(dst);
    match fs {
        "btrfs" | "xfs" | "bcachefs" | "zfs" => Some(format!(
            "{fs}: copy_file_range may share extents (reflink, block cloning) instead of copying data"
        )),
        "nfs" | "cifs" => Some(format!(
            "{fs}: copy_file_range may copy on the server (server-side copy)"
        )),
        _ => None,
    }
}

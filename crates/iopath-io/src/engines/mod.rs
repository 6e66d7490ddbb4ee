//! One file per access method. Shared here: opening the target with the
//! right flags, and the alignment check O_DIRECT engines make before the
//! kernel would answer EINVAL.

pub mod aio;
pub mod mmap;
pub mod null;
pub mod psync;
pub mod uring;

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::{EngineError, IoReq, Method};

/// Open the target. `direct` adds `O_DIRECT` (EINVAL becomes
/// [`EngineError::Unsupported`] for `method`), `dsync` adds `O_DSYNC`.
pub(crate) fn open_target(
    method: Method,
    path: &Path,
    write: bool,
    direct: bool,
    dsync: bool,
) -> Result<File, EngineError> {
    let mut flags = 0;
    if direct {
        flags |= libc::O_DIRECT;
    }
    if dsync {
        flags |= libc::O_DSYNC;
    }
    let res = std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(path);
    match res {
        Ok(f) => Ok(f),
        Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => Err(EngineError::Unsupported {
            method,
            reason: format!(
                "the file system of {} refuses O_DIRECT (EINVAL); use --methods buffered,mmap,uring-buffered or a directory on ext4/xfs",
                path.display()
            ),
        }),
        Err(e) => Err(EngineError::os(
            if direct { "open O_DIRECT" } else { "open" },
            path,
            e,
        )),
    }
}

/// Reject a request O_DIRECT would refuse, with a message that names the rule.
#[inline]
pub(crate) fn check_aligned(path: &Path, req: &IoReq, align: usize) -> Result<(), EngineError> {
    let a = align as u64;
    if a > 1 && (req.offset % a != 0 || u64::from(req.len) % a != 0) {
        return Err(EngineError::Misaligned {
            path: path.to_path_buf(),
            offset: req.offset,
            len: req.len,
            align,
        });
    }
    Ok(())
}

/// Buffer alignment for an engine: at least a page, so buffers never share
/// a page with other data (DMA and registration pin whole pages).
pub(crate) fn buffer_align(dio_mem_align: usize) -> usize {
    dio_mem_align.max(4096)
}

//! One file per access method. Shared here: opening the target with the
//! right flags, and the alignment check O_DIRECT engines make before the
//! kernel would answer EINVAL.

pub mod aio;
pub mod mmap;
pub mod null;
pub mod psync;
pub mod threadpool;
#[cfg(feature = "tokio")]
pub mod tokio;
pub mod ucache;
pub mod uffd;
pub mod uring;

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::buf::SlotPool;
use crate::{Caps, Completion, Engine, EngineError, IoReq, Method, OpenSpec, SyncCall, SyncPolicy};

/// `RWF_DONTCACHE` (linux/fs.h, Linux 6.14+): uncached buffered I/O.
pub(crate) const RWF_DONTCACHE: i32 = 0x80;

/// [`open_target`] as `spec` asks (its path, access, sync policy and
/// `noatime`), with or without `O_DIRECT`.
pub(crate) fn open_spec(
    method: Method,
    spec: &OpenSpec,
    direct: bool,
) -> Result<File, EngineError> {
    open_target(
        method,
        &spec.path,
        spec.write,
        direct,
        spec.sync,
        spec.noatime,
    )
}

/// Open the target. `direct` adds `O_DIRECT` (EINVAL becomes
/// [`EngineError::Unsupported`] for `method`), `sync` adds `O_DSYNC` or
/// `O_SYNC` ([`SyncPolicy::open_flags`]), `noatime` adds `O_NOATIME`
/// ([`OpenSpec::noatime`]; EPERM, not the file's owner, becomes
/// [`EngineError::Unsupported`]: the condition is never dropped quietly).
pub(crate) fn open_target(
    method: Method,
    path: &Path,
    write: bool,
    direct: bool,
    sync: SyncPolicy,
    noatime: bool,
) -> Result<File, EngineError> {
    let mut flags = sync.open_flags();
    if direct {
        flags |= libc::O_DIRECT;
    }
    if noatime {
        flags |= libc::O_NOATIME;
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
        Err(e) if noatime && e.raw_os_error() == Some(libc::EPERM) => Err(EngineError::Unsupported {
            method,
            reason: format!(
                "opening {} with O_NOATIME (--noatime) was refused (EPERM): only the file's owner or root may; run as its owner or drop --noatime",
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
/// A power of two (every alignment the kernel reports) is checked with a
/// mask: the two 64-bit divisions by a value known only at run time were
/// 8% of `uring`'s submit, once per request.
#[inline]
pub(crate) fn check_aligned(path: &Path, req: &IoReq, align: usize) -> Result<(), EngineError> {
    let a = align as u64;
    let misaligned = if a.is_power_of_two() {
        (req.offset | u64::from(req.len)) & (a - 1) != 0
    } else {
        a > 1 && (req.offset % a != 0 || u64::from(req.len) % a != 0)
    };
    if misaligned {
        return Err(misaligned_error(path, req, align));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn misaligned_error(path: &Path, req: &IoReq, align: usize) -> EngineError {
    EngineError::Misaligned {
        path: path.to_path_buf(),
        offset: req.offset,
        len: req.len,
        align,
    }
}

/// Buffer alignment for an engine: at least a page, so buffers never share
/// a page with other data (DMA and registration pin whole pages).
pub(crate) fn buffer_align(dio_mem_align: usize) -> usize {
    dio_mem_align.max(4096)
}

/// (offset alignment, buffer alignment) of an engine on `path`: the file's
/// O_DIRECT rules when `direct`, else none beyond page-aligned buffers.
pub(crate) fn layout(path: &Path, direct: bool) -> (usize, usize) {
    if direct {
        let a = crate::sys::dio_alignment(path);
        (a.offset, buffer_align(a.mem))
    } else {
        (1, 4096)
    }
}

/// The I/O buffers of `method`: `slots` slots of `spec.block_size` bytes
/// aligned to `align`, of `spec.buffers`' backing, placed by
/// `spec.mem_policy` and touched
/// ([`SlotPool::new_placed`]), with where their pages are (empty when the
/// kernel does not say). A policy the caller got wrong (a node that does not
/// exist) is [`EngineError::Invalid`]; one this kernel cannot apply,
/// [`EngineError::Unsupported`].
pub(crate) fn slot_pool(
    method: Method,
    spec: &OpenSpec,
    slots: usize,
    align: usize,
) -> Result<(SlotPool, Vec<(u32, u64)>), EngineError> {
    let pool = SlotPool::new_placed(
        slots,
        spec.block_size,
        align,
        spec.mem_policy.as_ref(),
        spec.buffers,
    )
    .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => EngineError::Invalid(e.to_string()),
            _ if e.raw_os_error() == Some(libc::ENOMEM) => EngineError::Unsupported {
                method,
                reason: format!(
                    "its buffers ({slots} x {}) could not be allocated ({e}); lower --threads, --qd or --bs",
                    human_bytes(spec.block_size as u64)
                ),
            },
            _ => EngineError::Unsupported {
                method,
                reason: e.to_string(),
            },
        })?;
    let nodes = pool.buffer_nodes().unwrap_or_default();
    Ok((pool, nodes))
}

/// `flush(how)` of an engine whose end-of-run flush is one `fsync`.
pub(crate) fn flush_fsync(how: SyncPolicy, file: &File, path: &Path) -> Result<(), EngineError> {
    if how == SyncPolicy::End {
        fsync(file, path)?;
    }
    Ok(())
}

/// [`Engine::sync_now`] of an engine whose data lives in one file.
pub(crate) fn sync_file(call: SyncCall, file: &File, path: &Path) -> Result<(), EngineError> {
    match call {
        SyncCall::Fsync => fsync(file, path),
        SyncCall::Fdatasync => {
            rustix::fs::fdatasync(file).map_err(|e| EngineError::os("fdatasync", path, e.into()))
        }
    }
}

/// A synchronous method: each request completes inside `submit`, one at a
/// time. Implementing this gives the [`Engine`] impl.
pub(crate) trait SyncIo: Send {
    fn sync_caps(&self) -> &Caps;
    fn pool_mut(&mut self) -> &mut SlotPool;
    /// Perform one request: `Ok(Err(errno))` when the request itself failed,
    /// `Err` when it broke the API contract (bad slot, misaligned).
    fn one(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError>;
    /// What `flush(SyncPolicy::End)` does (`call`: `Fsync`), and
    /// `sync_now(call)`.
    fn flush_end(&mut self, call: SyncCall) -> Result<(), EngineError>;
    /// [`Engine::advise`]; by default the hint is refused.
    fn advise_sync(&mut self, hint: crate::Hint) -> Result<(), EngineError> {
        Err(crate::hint::refused(self.sync_method(), hint))
    }
    /// [`Engine::method`].
    fn sync_method(&self) -> Method {
        Method::Null
    }
}

impl<T: SyncIo> Engine for T {
    fn caps(&self) -> &Caps {
        self.sync_caps()
    }

    fn buf_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.pool_mut().get_mut(slot)
    }

    fn submit(&mut self, reqs: &[IoReq], done: &mut Vec<Completion>) -> Result<usize, EngineError> {
        for r in reqs {
            let result = self.one(r)?;
            done.push(Completion {
                slot: r.slot,
                result,
            });
        }
        Ok(reqs.len())
    }

    fn reap(&mut self, _min: usize, _done: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }

    fn flush(&mut self, how: SyncPolicy) -> Result<(), EngineError> {
        if how == SyncPolicy::End {
            self.flush_end(SyncCall::Fsync)?;
        }
        Ok(())
    }

    fn sync_now(&mut self, call: SyncCall) -> Result<(), EngineError> {
        self.flush_end(call)
    }

    fn in_flight(&self) -> usize {
        0
    }

    fn advise(&mut self, hint: crate::Hint) -> Result<(), EngineError> {
        self.advise_sync(hint)
    }

    fn method(&self) -> Method {
        self.sync_method()
    }
}

/// The idle buffer of `r.slot`, cut to `r.len`, or why the request is invalid.
pub(crate) fn request_buf<'a>(
    pool: &'a mut SlotPool,
    r: &IoReq,
) -> Result<&'a mut [u8], EngineError> {
    let slot_size = pool.slot_size();
    let Some(buf) = pool.get_mut(r.slot) else {
        return Err(EngineError::Invalid(format!(
            "slot {} does not exist or is in flight",
            r.slot
        )));
    };
    if r.len == 0 || r.len as usize > slot_size {
        return Err(EngineError::Invalid(format!(
            "request of {} bytes does not fit a {slot_size}-byte buffer slot",
            r.len
        )));
    }
    Ok(&mut buf[..r.len as usize])
}

/// `100 MiB`, `9.8 KiB`, `512 B`: what engines' notes say of sizes.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    while unit + 1 < UNITS.len() && n >= 1u64 << (10 * (unit + 1)) {
        unit += 1;
    }
    let size = 1u64 << (10 * unit);
    if n % size == 0 {
        format!("{} {}", n / size, UNITS[unit])
    } else {
        format!("{:.1} {}", n as f64 / size as f64, UNITS[unit])
    }
}

/// `fsync(file)`, with the path in the error.
pub(crate) fn fsync(file: &File, path: &Path) -> Result<(), EngineError> {
    rustix::fs::fsync(file).map_err(|e| EngineError::os("fsync", path, e.into()))
}

#[cfg(test)]
mod align_tests {
    use super::*;
    use crate::Op;

    /// The mask for power-of-two alignments refuses exactly what the
    /// division refused, and other alignments are still divided.
    #[test]
    fn aligned_check_refuses_exactly_what_division_refuses() {
        let path = Path::new("/x");
        for align in [0usize, 1, 2, 512, 1536, 4096, 65536] {
            for offset in [
                0u64,
                1,
                511,
                512,
                1536,
                3072,
                4096,
                4097,
                1 << 40,
                (1 << 40) + 512,
            ] {
                for len in [1u32, 512, 1536, 4096, 4608, 65536] {
                    let req = IoReq {
                        op: Op::Read,
                        offset,
                        len,
                        slot: 0,
                    };
                    let a = align as u64;
                    let want = a > 1 && (offset % a != 0 || u64::from(len) % a != 0);
                    let got = check_aligned(path, &req, align);
                    assert_eq!(
                        got.is_err(),
                        want,
                        "align {align} offset {offset} len {len}"
                    );
                    if let Err(e) = got {
                        assert!(
                            matches!(e, EngineError::Misaligned { offset: o, len: l, align: al, .. } if o == offset && l == len && al == align)
                        );
                    }
                }
            }
        }
    }
}

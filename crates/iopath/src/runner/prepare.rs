//! Before any repetition: checks that refuse a plan this target cannot
//! run (exit 2, with the fix), and the page-cache state each repetition
//! starts from.

use anyhow::{Context, Result};
use iopath_io::MethodStatus;

use crate::plan::{CacheState, Plan, UsageError};
use crate::target::Target;
use crate::units::fmt_bytes;

/// Put the target's pages in the page-cache state the plan asks for.
pub(super) fn set_cache_state(t: &Target, state: CacheState, drop_all: bool) -> Result<()> {
    let open =
        || std::fs::File::open(t.path()).with_context(|| format!("open {}", t.path().display()));
    match state {
        CacheState::AsIs => Ok(()),
        CacheState::Cold => {
            iopath_io::sys::evict_file(&open()?)
                .with_context(|| format!("fsync/fadvise {}", t.path().display()))?;
            if drop_all {
                drop_system_caches()?;
            }
            Ok(())
        }
        CacheState::Warm => {
            let f = open()?;
            let mut buf = vec![0u8; 1 << 20];
            let mut off = 0u64;
            while off < t.size() {
                let want = (t.size() - off).min(buf.len() as u64) as usize;
                let n = std::os::unix::fs::FileExt::read_at(&f, &mut buf[..want], off)
                    .with_context(|| format!("warming {}", t.path().display()))?;
                if n == 0 {
                    break;
                }
                off += n as u64;
            }
            Ok(())
        }
    }
}

/// `sync`, then drop clean page cache, dentries and inodes system-wide.
fn drop_system_caches() -> Result<()> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| {
        anyhow::anyhow!(
            "--drop-caches: writing /proc/sys/vm/drop_caches failed ({e}); it needs root outside a container that forbids it; the file's own pages were still dropped"
        )
    })
}

/// Each thread of a case must be able to address at least one block of the
/// target (checked in the plan only when --size was given).
pub(super) fn check_fits(plan: &Plan, t: &Target) -> Result<()> {
    for c in &plan.cases {
        let per_thread = t.size() / u64::from(c.threads.max(1));
        if !c.method.is_null() && per_thread < c.block_size {
            return Err(UsageError(format!(
                "{} ({}) gives each of {} thread(s) {}, less than one {} block; use a smaller --bs or fewer --threads",
                t.path().display(),
                fmt_bytes(t.size()),
                c.threads,
                fmt_bytes(per_thread),
                fmt_bytes(c.block_size)
            ))
            .into());
        }
    }
    Ok(())
}

/// The engines' buffers (threads x depth x block size) must fit in memory:
/// refuse more than half of what is available instead of aborting.
pub(super) fn check_buffer_memory(plan: &Plan, available: Option<u64>) -> Result<()> {
    let Some(avail) = available else {
        return Ok(());
    };
    for c in &plan.cases {
        let need = u64::from(c.threads) * u64::from(c.queue_depth_requested) * c.block_size;
        if need > avail / 2 {
            return Err(UsageError(format!(
                "{} threads x queue depth {} x {} blocks need {} of buffers, and only {} of memory is available; lower --threads, --qd or --bs",
                c.threads,
                c.queue_depth_requested,
                fmt_bytes(c.block_size),
                fmt_bytes(need),
                fmt_bytes(avail)
            ))
            .into());
        }
    }
    Ok(())
}

/// Every usable O_DIRECT method needs block sizes that are multiples of the
/// file's DIO alignment: say so up front (exit 2) rather than fail with EINVAL.
pub(super) fn check_alignment(plan: &Plan, probes: &[MethodStatus], t: &Target) -> Result<()> {
    let align = iopath_io::sys::dio_alignment(t.path());
    for case in &plan.cases {
        let usable = probes.iter().any(|p| p.method == case.method && p.usable());
        if usable && case.method.is_direct() && case.block_size % align.offset as u64 != 0 {
            let up = case.block_size.div_ceil(align.offset as u64) * align.offset as u64;
            return Err(UsageError(format!(
                "--bs {} is not a multiple of the O_DIRECT alignment of {} ({} bytes, from {}), which {} requires; use --bs {} or a buffered method",
                case.block_size,
                t.path().display(),
                align.offset,
                align.source,
                case.method,
                fmt_bytes(up).replace(' ', "")
            ))
            .into());
        }
    }
    Ok(())
}

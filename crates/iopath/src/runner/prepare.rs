//! Before any repetition: checks that refuse a plan this target cannot
//! run (exit 2, with the fix), and the page-cache state each repetition
//! starts from.

use anyhow::{Context, Result};
use iopath_io::{Method, MethodStatus};

use crate::plan::{CacheState, Case, Plan, UsageError};
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
/// target (checked in the plan only when --size was given). `ranks`: how
/// many ranks share the file (a shared layout), each addressing its part:
/// every rank's threads need a block each of their part.
pub(super) fn check_fits(plan: &Plan, t: &Target, ranks: u64) -> Result<()> {
    let ranks = ranks.max(1);
    for c in &plan.cases {
        let threads = u64::from(c.threads.max(1));
        let span = c.span.map_or(t.size(), |s| s.min(t.size()));
        let per_thread = span / ranks / threads;
        if !c.method.is_null() && per_thread < c.block_size {
            let who = if ranks > 1 {
                format!("{ranks} ranks x {threads} thread(s)")
            } else {
                format!("{threads} thread(s)")
            };
            return Err(UsageError(format!(
                "{} ({}) gives each of {who} {}, less than one {} block; use a smaller --bs, fewer --threads{}",
                t.info.path.display(),
                fmt_bytes(span),
                fmt_bytes(per_thread),
                fmt_bytes(c.block_size),
                if ranks > 1 { ", fewer ranks or a larger --size" } else { "" }
            ))
            .into());
        }
    }
    Ok(())
}

/// The tail of a shared file that its ranks' equal parts leave out (when
/// block size x ranks does not divide it): a note per block size.
pub(super) fn unused_tail(plan: &Plan, t: &Target, ranks: u64) -> Option<String> {
    let c = plan
        .cases
        .iter()
        .find(|c| !c.method.is_null() && t.size() % (c.block_size * ranks.max(1)) != 0)?;
    let unit = c.block_size * ranks;
    Some(format!(
        "{} ({}) is not a multiple of {} ({} ranks x {} blocks): its last {} is addressed by no rank",
        t.info.path.display(),
        fmt_bytes(t.size()),
        fmt_bytes(unit),
        ranks,
        fmt_bytes(c.block_size),
        fmt_bytes(t.size() % unit)
    ))
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

/// Why `null` is skipped under `--verify`: it moves no data, so there is
/// nothing to check (and a read-back after it would find what an earlier
/// case wrote, not a corruption).
pub(super) const NULL_UNDER_VERIFY: &str =
    "null moves no data, so --verify has nothing to check in it: skipped under --verify (run it without --verify to measure the overhead floor)";

/// The end of [`misaligned`]'s advice.
const FOR_THEM: &str = " for them";

/// Why an O_DIRECT case cannot run on this target at its block size: not
/// a multiple of the file's DIO alignment (the kernel would answer
/// EINVAL). `None` for a case that can. The words do not name the method,
/// so that the "not run" list gives the methods it concerns one line.
pub(super) fn misaligned(case: &Case, t: &Target) -> Option<String> {
    if !case.method.is_direct() {
        return None;
    }
    let align = iopath_io::sys::dio_alignment(t.path());
    let unit = align.offset as u64;
    (case.block_size % unit != 0).then(|| {
        let up = case.block_size.div_ceil(unit) * unit;
        format!(
            "--bs {} is not a multiple of the O_DIRECT alignment of {} ({} bytes, {}), which every O_DIRECT method requires; use --bs {}{FOR_THEM}",
            case.block_size,
            t.info.path.display(),
            align.offset,
            iopath_io::sys::dio_provenance(align.source),
            fmt_bytes(up).replace(' ', "")
        )
    })
}

/// An O_DIRECT case at a block size the file's DIO alignment does not
/// divide is skipped with the reason ([`misaligned`]), the other methods
/// run; only a plan of which nothing could run is refused up front
/// (exit 2) rather than failing with EINVAL.
pub(super) fn check_alignment(plan: &Plan, probes: &[MethodStatus], t: &Target) -> Result<()> {
    let mut why = None;
    for case in &plan.cases {
        let usable = probes.iter().any(|p| p.method == case.method && p.usable());
        if !usable {
            continue;
        }
        match misaligned(case, t) {
            None => return Ok(()),
            Some(w) => why = why.or(Some(w)),
        }
    }
    match why {
        Some(w) => Err(UsageError(format!(
            "{}, or a buffered method (no case of this run could run)",
            w.trim_end_matches(FOR_THEM)
        ))
        .into()),
        None => Ok(()),
    }
}

/// Probe `method` on the target (a real read of `len` bytes,
/// [`iopath_io::probe_method`]), its words freed of the probe's own
/// artefacts: an unnamed file's `/proc/<pid>/fd/<n>` link is named as the
/// run names the file (`DIR/(unnamed O_TMPFILE)`, and `/proc/<pid>/fd`
/// as its directory), and mmap's note of the probe's mapping (its file
/// descriptor and addresses) is left out. A case's own mapping note is
/// kept: daxbench's grid reads it.
pub fn probe(method: Method, t: &Target, len: usize) -> MethodStatus {
    let mut st = iopath_io::probe_method(method, t.path(), len);
    let opened = t.path().display().to_string();
    let shown = t.info.path.display().to_string();
    let dir = t.dir().display().to_string();
    let proc_dir = t
        .path()
        .parent()
        .map(|p| p.display().to_string())
        .filter(|p| p.starts_with("/proc/"));
    let tidy = |s: &str| {
        let mut s = s.replace(&opened, &shown);
        if let Some(d) = &proc_dir {
            s = s.replace(d.as_str(), &dir);
        }
        s
    };
    st.unusable = st.unusable.as_deref().map(tidy);
    st.notes = st
        .notes
        .iter()
        .filter(|n| !n.starts_with(iopath_io::engines::mmap::MAPPING_NOTE_PREFIX))
        .map(|n| tidy(n))
        .collect();
    st
}

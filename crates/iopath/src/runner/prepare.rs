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

/// What a case allocates in memory, by the flags that size it (known
/// before any file is made).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MemoryNeed {
    /// The engines' buffers: threads x queue depth x block size.
    pub buffers: u64,
    /// A user-space cache's pages (`--ucache-size`): `ucache` allocates
    /// its whole budget up front, `uffd` keeps at most its budget (and at
    /// most the file) resident.
    pub cache: u64,
    /// The test file itself when it is made in memory (tmpfs, ramfs).
    pub file: u64,
}

impl MemoryNeed {
    pub fn of(case: &Case, ucache_size: u64, file_size: u64, file_in_memory: bool) -> MemoryNeed {
        let buffers = u64::from(case.threads.max(1))
            .saturating_mul(u64::from(case.queue_depth_requested.max(1)))
            .saturating_mul(case.block_size);
        let cache = match case.method {
            Method::Ucache => ucache_size,
            Method::Uffd | Method::UffdWp => ucache_size.min(file_size),
            _ => 0,
        };
        MemoryNeed {
            buffers,
            cache,
            file: if file_in_memory && !case.method.is_null() {
                file_size
            } else {
                0
            },
        }
    }

    pub fn total(&self) -> u64 {
        self.buffers
            .saturating_add(self.cache)
            .saturating_add(self.file)
    }
}

/// The test file iopath would create, when it would be made in memory
/// (tmpfs, ramfs): its size. `None` for a file on a disk, or an existing
/// file (its memory is already in use).
fn file_in_memory(plan: &Plan) -> Option<u64> {
    use crate::plan::TargetSpec;
    let dir = match &plan.target {
        TargetSpec::TempIn(dir) => dir.as_path(),
        TargetSpec::File { path, .. } if !path.exists() => path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new(".")),
        TargetSpec::File { .. } => return None,
    };
    let fs = iopath_io::sys::fs_type_of(dir).ok()?;
    matches!(fs, "tmpfs" | "ramfs").then(|| plan.size.unwrap_or(crate::plan::DEFAULT_SIZE))
}

/// Everything a flag sizes in memory (buffers, user-space caches, a test
/// file on tmpfs) must fit in what is `available`, checked before any file
/// is made: a usage error (exit 2) naming the flag, the amount, the memory
/// available and the way out, instead of an allocation abort later. What
/// is allocated may take at most half of it; with a file in memory, all
/// of it together at most nine tenths.
pub(super) fn check_memory(plan: &Plan, available: Option<u64>) -> Result<()> {
    let Some(avail) = available else {
        return Ok(());
    };
    let in_memory = file_in_memory(plan);
    let file_size = plan.size.unwrap_or(crate::plan::DEFAULT_SIZE);
    for c in &plan.cases {
        let need = MemoryNeed::of(c, plan.ucache_size, file_size, in_memory.is_some());
        if let Some(why) = memory_refusal(c, &need, plan.ucache_size, avail) {
            return Err(UsageError(why).into());
        }
    }
    Ok(())
}

/// Why `need` (of `case`) does not fit in `avail` bytes of memory, naming
/// the flag that asked for it; `None` when it fits.
pub(super) fn memory_refusal(
    case: &Case,
    need: &MemoryNeed,
    ucache_size: u64,
    avail: u64,
) -> Option<String> {
    let half = avail / 2;
    let avail_s = fmt_bytes(avail);
    if need.buffers > half {
        return Some(format!(
            "{} threads x queue depth {} x {} blocks need {} of buffers, and only {avail_s} of memory is available; lower --threads, --qd or --bs",
            case.threads,
            case.queue_depth_requested,
            fmt_bytes(case.block_size),
            fmt_bytes(need.buffers),
        ));
    }
    if need.buffers.saturating_add(need.cache) > half {
        return Some(format!(
            "--ucache-size {}: {} would hold {} of memory for its cache (with {} of buffers), and only {avail_s} is available; give --ucache-size {} or less, or leave {} out of --methods",
            fmt_bytes(ucache_size),
            case.method,
            fmt_bytes(need.cache),
            fmt_bytes(need.buffers),
            fmt_bytes(half.saturating_sub(need.buffers)),
            case.method
        ));
    }
    if need.total() > avail / 10 * 9 {
        return Some(format!(
            "--size {}: the test file would be made in memory (tmpfs), and with {} of buffers and caches it needs {}, but only {avail_s} of memory is available and iopath leaves a tenth of it free; use a smaller --size, or --dir on a disk",
            fmt_bytes(need.file),
            fmt_bytes(need.buffers + need.cache),
            fmt_bytes(need.total()),
        ));
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Pattern;

    const GIB: u64 = 1 << 30;

    /// Regression (issue 26, item 3): `--ucache-size 1T` passed every
    /// check and aborted at the allocation. A user-space cache's budget
    /// now counts against memory, naming the flag.
    #[test]
    fn a_ucache_budget_beyond_memory_is_refused_naming_the_flag() {
        let case = Case::new(Method::Ucache, Pattern::Read, 1 << 20, 1, 1);
        let need = MemoryNeed::of(&case, 1 << 40, GIB, false);
        assert_eq!(need.cache, 1 << 40);
        let why = memory_refusal(&case, &need, 1 << 40, 16 * GIB).unwrap();
        assert!(why.starts_with("--ucache-size 1 TiB"), "{why}");
        assert!(why.contains("only 16 GiB is available"), "{why}");
        // uffd keeps at most the file resident.
        let uffd = Case::new(Method::Uffd, Pattern::Read, 1 << 20, 1, 1);
        let need = MemoryNeed::of(&uffd, 1 << 40, GIB, false);
        assert_eq!(need.cache, GIB);
        assert_eq!(memory_refusal(&uffd, &need, 1 << 40, 16 * GIB), None);
        // Other methods hold no cache.
        let direct = Case::new(Method::Direct, Pattern::Read, 1 << 20, 1, 1);
        assert_eq!(MemoryNeed::of(&direct, 1 << 40, GIB, false).cache, 0);
    }

    /// A test file made on tmpfs is memory too: with the buffers, it must
    /// leave a tenth of what is available.
    #[test]
    fn a_test_file_in_memory_counts_against_memory() {
        let case = Case::new(Method::Buffered, Pattern::Read, 1 << 20, 1, 1);
        let need = MemoryNeed::of(&case, 64 << 20, 15 * GIB, true);
        assert_eq!(need.file, 15 * GIB);
        let why = memory_refusal(&case, &need, 64 << 20, 16 * GIB).unwrap();
        assert!(why.starts_with("--size 15 GiB"), "{why}");
        let on_disk = MemoryNeed::of(&case, 64 << 20, 15 * GIB, false);
        assert_eq!(memory_refusal(&case, &on_disk, 64 << 20, 16 * GIB), None);
    }

    /// Buffers still name --threads, --qd and --bs.
    #[test]
    fn buffers_beyond_memory_name_threads_qd_and_bs() {
        let case = Case::new(Method::Uring, Pattern::Read, 64 << 20, 4096, 1);
        let need = MemoryNeed::of(&case, 0, GIB, false);
        let why = memory_refusal(&case, &need, 0, 16 * GIB).unwrap();
        assert!(why.contains("lower --threads, --qd or --bs"), "{why}");
    }
}

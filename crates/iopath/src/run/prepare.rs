//! Before any repetition: checks that refuse a plan this target cannot
//! run (exit 2, with the fix), and the page-cache state each repetition
//! starts from.

use anyhow::{Context, Result};
use iopath_io::Method;

use crate::model::units::fmt_bytes;
use crate::plan::{CacheState, Case, Plan, UsageError};
use crate::result::mpi::MpiNote;
use crate::result::skip::Skip;
use crate::run::target::Target;
use crate::system::metrics::procfs::{CgroupRoom, MemCgroup};

/// Put the target's pages in the page-cache state the plan asks for,
/// opening it as the engines do (`noatime`: `--noatime`'s `O_NOATIME`).
pub(super) fn set_cache_state(
    t: &Target,
    state: CacheState,
    drop_all: bool,
    noatime: bool,
) -> Result<()> {
    let open = || {
        iopath_io::sys::open_read(t.path(), noatime)
            .with_context(|| format!("open {}", t.path().display()))
    };
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
pub(super) fn unused_tail(plan: &Plan, t: &Target, ranks: u64) -> Option<MpiNote> {
    let c = plan
        .cases
        .iter()
        .find(|c| !c.method.is_null() && t.size() % (c.block_size * ranks.max(1)) != 0)?;
    Some(MpiNote::UnusedTail {
        path: t.info.path.display().to_string(),
        file_bytes: t.size(),
        ranks,
        block_size: c.block_size,
    })
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
    /// The test file itself when it is made in memory (tmpfs, ramfs),
    /// and for the copy pattern its copy beside it, as large.
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
            file: match (file_in_memory && !case.method.is_null(), case.pattern) {
                (false, _) => 0,
                (true, crate::plan::Pattern::Copy) => file_size.saturating_mul(2),
                (true, _) => file_size,
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

/// The memory this process may still take, from every limit on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Room {
    /// The system's `MemAvailable`.
    pub meminfo: Option<u64>,
    /// The tightest of the process's memory cgroup and its ancestors.
    pub cgroup: Option<CgroupRoom>,
    /// `ulimit -v` (RLIMIT_AS) where set: its limit, and what the
    /// process's address space (`VmSize`) leaves of it.
    pub address_space: Option<(u64, u64)>,
}

impl Room {
    /// The limits on this process now.
    pub fn now() -> Room {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let kb =
            |text: &str, key: &str| crate::system::sysinfo::meminfo_kb(text, key).map(|k| k * 1024);
        let address_space = rustix::process::getrlimit(rustix::process::Resource::As)
            .current
            .map(|limit| {
                let size = kb(&read("/proc/self/status"), "VmSize").unwrap_or(0);
                (limit, limit.saturating_sub(size))
            });
        Room {
            meminfo: kb(&read("/proc/meminfo"), "MemAvailable"),
            cgroup: MemCgroup::current().and_then(|c| c.room()),
            address_space,
        }
    }

    /// The memory available: the least of the system's and the cgroup's.
    pub fn available(&self) -> Option<u64> {
        let cgroup = self.cgroup.as_ref().map(|c| c.left);
        match (self.meminfo, cgroup) {
            (Some(m), Some(c)) => Some(m.min(c)),
            (m, c) => m.or(c),
        }
    }

    /// The cgroup, when its limit is what leaves the least.
    fn binding_cgroup(&self) -> Option<&CgroupRoom> {
        self.cgroup
            .as_ref()
            .filter(|c| self.meminfo.is_none_or(|m| c.left < m))
    }
}

/// Everything a flag sizes in memory (buffers, user-space caches, a test
/// file on tmpfs and its copy) must fit in what `room` leaves (the least
/// of the system's available memory and the process's memory cgroup's),
/// checked before any file is made: a usage error (exit 2) naming the
/// flag, the amount, the memory available and the way out, instead of an
/// allocation abort or an OOM kill later. What is allocated may take at
/// most half of it; with a file in memory, all of it together at most nine
/// tenths. Buffers and caches must also fit in half of what `ulimit -v`
/// leaves.
pub(super) fn check_memory(plan: &Plan, room: &Room) -> Result<()> {
    let in_memory = file_in_memory(plan);
    let file_size = plan.size.unwrap_or(crate::plan::DEFAULT_SIZE);
    for c in &plan.cases {
        let need = MemoryNeed::of(c, plan.ucache_size, file_size, in_memory.is_some());
        let why = room
            .available()
            .and_then(|avail| memory_refusal(c, &need, plan.ucache_size, avail))
            .map(|why| match room.binding_cgroup() {
                Some(cg) => format!("{why}; {}", cgroup_words(cg)),
                None => why,
            })
            .or_else(|| {
                let (limit, left) = room.address_space?;
                address_space_refusal(c, &need, limit, left)
            });
        if let Some(why) = why {
            return Err(UsageError(why).into());
        }
    }
    Ok(())
}

/// Whose limit the memory available is, and how to lift it.
fn cgroup_words(cg: &CgroupRoom) -> String {
    format!(
        "that is what the memory cgroup {} leaves (its limit {}, {} in use): raise its limit (memory.max, or memory.limit_in_bytes in cgroup v1) or run iopath outside it",
        cg.dir.display(),
        fmt_bytes(cg.limit),
        fmt_bytes(cg.used)
    )
}

/// Why the buffers and caches of `need` (of `case`) do not fit in half of
/// the `left` bytes of address space that `ulimit -v` (`limit`) leaves.
fn address_space_refusal(case: &Case, need: &MemoryNeed, limit: u64, left: u64) -> Option<String> {
    let wants = need.buffers.saturating_add(need.cache);
    (wants > left / 2).then(|| {
        format!(
            "{} needs {} of buffers and caches, and ulimit -v (RLIMIT_AS) of {} leaves this process {} of address space; lower --threads, --qd, --bs or --ucache-size, or raise ulimit -v",
            case.method,
            fmt_bytes(wants),
            fmt_bytes(limit),
            fmt_bytes(left)
        )
    })
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

/// Why an O_DIRECT case cannot run on this target at its block size: not
/// a multiple of the file's DIO alignment (the kernel would answer
/// EINVAL). `None` for a case that can. The words do not name the method,
/// so that the "not run" list gives the methods it concerns one line.
pub(super) fn misaligned(case: &Case, t: &Target) -> Option<Skip> {
    if !case.method.is_direct() {
        return None;
    }
    let align = iopath_io::sys::dio_alignment(t.path());
    let unit = align.offset as u64;
    // A case of streams is skipped when one of them cannot run.
    let w = case.workloads().iter().find(|w| w.block_size % unit != 0)?;
    Some(Skip::Misaligned {
        block_size: w.block_size,
        path: t.info.path.display().to_string(),
        align_bytes: unit,
        align_source: align.source.to_string(),
    })
}

/// An O_DIRECT case at a block size the file's DIO alignment does not
/// divide is skipped with the reason ([`misaligned`]), the other methods
/// run; only a plan of which nothing could run is refused up front
/// (exit 2) rather than failing with EINVAL.
pub(super) fn check_alignment(plan: &Plan, probes: &[Probed], t: &Target) -> Result<()> {
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
        Some(Skip::Misaligned {
            block_size,
            path,
            align_bytes,
            align_source,
        }) => Err(UsageError(format!(
            "--bs {block_size} is not a multiple of the O_DIRECT alignment of {path} ({align_bytes} bytes, {}), which every O_DIRECT method requires; use --bs {}, or a buffered method (no case of this run could run)",
            iopath_io::sys::dio_provenance(&align_source),
            fmt_bytes(block_size.div_ceil(align_bytes) * align_bytes).replace(' ', "")
        ))
        .into()),
        _ => Ok(()),
    }
}

/// Probe `method` on the target (a real read of `len` bytes,
/// [`iopath_io::probe_method`]), its words freed of the probe's own
/// artefacts: an unnamed file's `/proc/<pid>/fd/<n>` link is named as the
/// run names the file (`DIR/(unnamed O_TMPFILE)`, and `/proc/<pid>/fd`
/// as its directory), and mmap's note of the probe's mapping (its file
/// descriptor and addresses) is left out. A case's own mapping note is
/// kept: daxbench's grid reads it. `noatime`: open as `--noatime` runs do.
pub fn probe(method: Method, t: &Target, len: usize, noatime: bool) -> Probed {
    let st = iopath_io::probe_method_with(method, t.path(), len, noatime);
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
    Probed {
        method,
        unusable: st
            .unusable
            .as_deref()
            .map(|r| Skip::Unusable { reason: tidy(r) }),
        notes: st
            .notes
            .iter()
            .filter(|n| !n.starts_with(iopath_io::engines::mmap::MAPPING_NOTE_PREFIX))
            .map(|n| tidy(n))
            .collect(),
    }
}

/// A method probed on the target: usable, or why not.
#[derive(Debug, Clone, PartialEq)]
pub struct Probed {
    pub method: Method,
    pub unusable: Option<Skip>,
    /// The probe's notes, in the engine's words.
    pub notes: Vec<String>,
}

impl Probed {
    pub fn usable(&self) -> bool {
        self.unusable.is_none()
    }
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

    /// Regression: inside a 200 MiB memory cgroup, 400 x 1 MiB of aio
    /// buffers passed the check (the system's MemAvailable) and the
    /// kernel OOM-killed the run. The memory available is the least of
    /// the system's and the cgroup's, and the refusal names the cgroup.
    #[test]
    fn a_memory_cgroup_limit_below_memavailable_is_what_is_available() {
        let cg = CgroupRoom {
            dir: "/sys/fs/cgroup/memory/X".into(),
            limit: 200 << 20,
            used: 8 << 20,
            left: 192 << 20,
        };
        let room = Room {
            meminfo: Some(16 * GIB),
            cgroup: Some(cg.clone()),
            address_space: None,
        };
        assert_eq!(room.available(), Some(192 << 20));
        assert_eq!(room.binding_cgroup(), Some(&cg));
        let args = "iopath run --file /nonexistent/f --size 400M --bs 1M --qd 400 --methods aio --patterns randwrite";
        let Some(crate::cli::Command::Run(r)) =
            crate::cli::parse_from(args.split(' ')).unwrap().command
        else {
            unreachable!()
        };
        let plan = crate::cli::commands::plan_of(&r).unwrap();
        let why = check_memory(&plan, &room).unwrap_err().to_string();
        assert!(why.contains("lower --threads, --qd or --bs"), "{why}");
        assert!(
            why.contains("the memory cgroup /sys/fs/cgroup/memory/X leaves (its limit 200 MiB"),
            "{why}"
        );
        assert!(why.contains("or run iopath outside it"), "{why}");
        // The system is tighter: its words alone.
        let loose = Room {
            meminfo: Some(128 << 20),
            ..room
        };
        assert_eq!(loose.available(), Some(128 << 20));
        let why = check_memory(&plan, &loose).unwrap_err().to_string();
        assert!(!why.contains("cgroup"), "{why}");
    }

    /// `ulimit -v`: buffers and caches must fit in half of what it leaves.
    #[test]
    fn buffers_beyond_ulimit_v_are_refused_naming_it() {
        let case = Case::new(Method::Uring, Pattern::Read, 1 << 20, 64, 1);
        let need = MemoryNeed::of(&case, 0, GIB, false);
        let why = address_space_refusal(&case, &need, GIB, 100 << 20).unwrap();
        assert!(why.contains("ulimit -v (RLIMIT_AS) of 1 GiB"), "{why}");
        assert!(why.contains("raise ulimit -v"), "{why}");
        assert_eq!(address_space_refusal(&case, &need, GIB, 512 << 20), None);
    }

    /// The copy pattern on tmpfs makes a second file as large.
    #[test]
    fn a_copy_in_memory_counts_the_file_twice() {
        let copy = Case::new(Method::Buffered, Pattern::Copy, 1 << 20, 1, 1);
        assert_eq!(MemoryNeed::of(&copy, 0, GIB, true).file, 2 * GIB);
        assert_eq!(MemoryNeed::of(&copy, 0, GIB, false).file, 0);
        let read = Case::new(Method::Buffered, Pattern::Read, 1 << 20, 1, 1);
        assert_eq!(MemoryNeed::of(&read, 0, GIB, true).file, GIB);
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

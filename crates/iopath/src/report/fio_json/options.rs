//! fio's option maps: the run's `global options` (target, size, time
//! limit) and each job's `job options` (pattern, block size, depth,
//! threads, the fio engine and flags of the method, cache and sync), with
//! sizes and durations written as fio reads them.

use crate::model::{CacheState, Pattern};
use crate::result::{CaseResult, RunResult};
use iopath_io::SyncPolicy;

use super::{jobname, Options};

/// What holds for the whole run: the target, its size, the time limit.
pub(super) fn global_options(r: &RunResult) -> Options {
    let mut o = Options::default();
    if let Some(t) = &r.target {
        // An unnamed test file has no name fio could open: its directory
        // (fio makes its own file there).
        match t.path.parent().filter(|_| t.unnamed) {
            Some(dir) => o.set("directory", dir.to_string_lossy()),
            None => o.set("filename", t.path.to_string_lossy()),
        }
        o.set("size", fio_size(t.size_bytes));
    }
    if let Some(ns) = r.config.time_limit_ns.filter(|_| !r.config.whole_pass) {
        o.set("runtime", fio_time(ns));
    }
    o
}

/// fio's options for what the case ran.
pub(super) fn job_options(r: &RunResult, c: &CaseResult) -> Options {
    let mut o = Options::default();
    o.set("name", jobname(c));
    o.set("rw", c.pattern.name());
    if let Some(p) = c.rwmix_read_pct {
        o.set("rwmixread", p.to_string());
    }
    o.set("bs", fio_size(c.block_size));
    o.set("iodepth", c.queue_depth.to_string());
    o.set("numjobs", c.threads.to_string());
    if c.threads > 1 {
        o.set("group_reporting", "1");
    }
    if let Some(span) = c.span_bytes {
        o.set("size", fio_size(span));
    }
    let (engine, direct, extra) = fio_engine(&c.method.to_string());
    if let Some(e) = engine {
        o.set("ioengine", e);
    }
    if let Some(d) = direct {
        o.set("direct", d);
    }
    for (k, v) in extra {
        o.set(k, v);
    }
    if engine.is_some() && c.method.base() == Some(iopath_io::Method::UringBatch) {
        // uring-batch waits for a quarter of the depth and submits what
        // the wait freed, as fio does with these two.
        let batch = (c.queue_depth / 4).max(1).to_string();
        o.set("iodepth_batch_submit", batch.clone());
        o.set("iodepth_batch_complete_min", batch);
    }
    match c.cache.unwrap_or(r.config.cache) {
        CacheState::Cold => o.set("invalidate", "1"),
        CacheState::Warm | CacheState::AsIs => o.set("invalidate", "0"),
    }
    if matches!(
        c.pattern,
        Pattern::Write | Pattern::RandWrite | Pattern::RandRw | Pattern::Copy
    ) {
        match c.sync {
            SyncPolicy::End => o.set("end_fsync", "1"),
            SyncPolicy::Dsync => o.set("sync", "dsync"),
            SyncPolicy::Osync => o.set("sync", "sync"),
            SyncPolicy::Each => o.set("fsync", "1"),
            SyncPolicy::None => {}
        }
        // fio's `fsync=N` / `fdatasync=N` (a case with it has no policy
        // `each`, which is fio's N = 1).
        if let Some(e) = c.sync_every {
            o.set(e.call.name(), e.writes.to_string());
        }
    }
    o
}

/// fio's engine, `direct` and further options for a result's method name,
/// read back into its method and hint (`mmap+random` is fio's mmap engine
/// with `fadvise_hint=random`; `mmap+hugepage` is its `thp=1`). No engine
/// where fio has nothing that does the same: mmap-dax, ucache, uffd,
/// uffd-wp, threadpool and tokio (a queue served by a pool of pread
/// threads; fio's `numjobs` are separate jobs, not a pool), and the hints
/// `willneed`, `populate` and `noreuse` (fio 3.33's `fadvise_hint` takes
/// 0, 1, random and sequential only): an engine without the hint would be
/// another run.
/// Page-cache methods without a hint get `fadvise_hint=0`: fio's default
/// (1) advises random or sequential by the pattern, which iopath's plain
/// methods do not. `dontcache` is `RWF_DONTCACHE` on `preadv2`/`pwritev2`:
/// fio's pvsync2 engine with `uncached=1` (psync's pread takes no flags);
/// `uring-dontcache` is io_uring with `uncached=1`. fio 3.33 has the option
/// but sends the flag value of the unmerged RWF_UNCACHED patches (its job
/// fails with EOPNOTSUPP on Linux 6.18, measured): it takes a fio that
/// sends RWF_DONTCACHE.
type Engine = (
    Option<&'static str>,
    Option<&'static str>,
    Vec<(&'static str, &'static str)>,
);

fn fio_engine(name: &str) -> Engine {
    use iopath_io::{Hint, Method as M};
    let Some(choice) = crate::model::choice::parse_result_method(name) else {
        return (None, None, Vec::new());
    };
    let (engine, direct, mut extra): Engine = match choice.method {
        M::Buffered => (Some("psync"), Some("0"), Vec::new()),
        M::Direct => (Some("psync"), Some("1"), Vec::new()),
        M::Mmap => (Some("mmap"), Some("0"), Vec::new()),
        M::Uring | M::UringBatch => (Some("io_uring"), Some("1"), URING.to_vec()),
        M::UringBuffered => (Some("io_uring"), Some("0"), URING.to_vec()),
        M::UringSqpoll => (Some("io_uring"), Some("1"), URING_SQPOLL.to_vec()),
        M::UringIopoll => (Some("io_uring"), Some("1"), URING_IOPOLL.to_vec()),
        M::Aio => (Some("libaio"), Some("1"), Vec::new()),
        M::Dontcache => (Some("pvsync2"), Some("0"), vec![("uncached", "1")]),
        M::UringDontcache => {
            let mut e = URING.to_vec();
            e.push(("uncached", "1"));
            (Some("io_uring"), Some("0"), e)
        }
        M::Null => (Some("null"), None, Vec::new()),
        _ => (None, None, Vec::new()),
    };
    if engine.is_none() || direct != Some("0") {
        return (engine, direct, extra);
    }
    match choice.hint {
        None => extra.push(("fadvise_hint", "0")),
        Some(Hint::Random) => extra.push(("fadvise_hint", "random")),
        Some(Hint::Sequential) => extra.push(("fadvise_hint", "sequential")),
        Some(Hint::Hugepage) if choice.method == M::Mmap => {
            extra.extend([("fadvise_hint", "0"), ("thp", "1")])
        }
        Some(_) => return (None, None, Vec::new()),
    }
    (engine, direct, extra)
}

const URING: [(&str, &str); 2] = [("fixedbufs", "1"), ("registerfiles", "1")];
const URING_SQPOLL: [(&str, &str); 3] = [
    ("fixedbufs", "1"),
    ("registerfiles", "1"),
    ("sqthread_poll", "1"),
];
const URING_IOPOLL: [(&str, &str); 3] =
    [("fixedbufs", "1"), ("registerfiles", "1"), ("hipri", "1")];

/// A size as fio reads one: `4k`, `1M`, `2G` (binary), else bytes.
pub(super) fn fio_size(b: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "k")] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// A duration as fio reads one: seconds by default, else `ms` or `us`.
pub(super) fn fio_time(ns: u64) -> String {
    if ns % 1_000_000_000 == 0 {
        (ns / 1_000_000_000).to_string()
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", ns.saturating_add(500) / 1000)
    }
}

#[cfg(test)]
mod engine_tests {
    use super::fio_engine;

    fn opts(name: &str) -> (Option<&'static str>, Vec<(&'static str, &'static str)>) {
        let (e, _, x) = fio_engine(name);
        (e, x)
    }

    /// Hinted methods, dontcache and uring-dontcache have a fio engine
    /// (before the fix they matched no name and got none); what fio cannot
    /// ask for gets none rather than an engine that runs something else.
    #[test]
    fn hinted_and_uncached_methods_map_to_fio() {
        assert_eq!(
            opts("mmap+random"),
            (Some("mmap"), vec![("fadvise_hint", "random")])
        );
        assert_eq!(opts("mmap"), (Some("mmap"), vec![("fadvise_hint", "0")]));
        assert_eq!(
            opts("buffered+random"),
            (Some("psync"), vec![("fadvise_hint", "random")])
        );
        assert_eq!(
            opts("dontcache"),
            (
                Some("pvsync2"),
                vec![("uncached", "1"), ("fadvise_hint", "0")]
            )
        );
        let (e, x) = opts("uring-dontcache+sequential");
        assert_eq!(e, Some("io_uring"));
        assert!(x.contains(&("uncached", "1")) && x.contains(&("fadvise_hint", "sequential")));
        assert_eq!(
            opts("mmap+hugepage").1,
            vec![("fadvise_hint", "0"), ("thp", "1")]
        );
        for none in [
            "mmap+populate",
            "buffered+willneed",
            "buffered+noreuse",
            "threadpool",
            "tokio",
        ] {
            assert_eq!(opts(none).0, None, "{none}");
        }
        // O_DIRECT methods are not given a page-cache hint.
        assert_eq!(fio_engine("direct"), (Some("psync"), Some("1"), vec![]));
    }
}

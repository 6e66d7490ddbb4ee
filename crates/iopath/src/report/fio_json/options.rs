//! fio's option maps: the run's `global options` (target, size, time
//! limit) and each job's `job options` (pattern, block size, depth,
//! threads, the fio engine and flags of the method, cache and sync), with
//! sizes and durations written as fio reads them.

use crate::result::{CaseResult, RunResult};

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
    o.set("rw", c.pattern.clone());
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
    let (engine, direct, extra): (Option<&str>, Option<&str>, &[(&str, &str)]) =
        match c.method.as_str() {
            "buffered" => (Some("psync"), Some("0"), &[]),
            "direct" => (Some("psync"), Some("1"), &[]),
            "mmap" => (Some("mmap"), Some("0"), &[]),
            "uring" => (Some("io_uring"), Some("1"), &URING),
            "uring-buffered" => (Some("io_uring"), Some("0"), &URING),
            "uring-sqpoll" => (Some("io_uring"), Some("1"), &URING_SQPOLL),
            "uring-iopoll" => (Some("io_uring"), Some("1"), &URING_IOPOLL),
            "aio" => (Some("libaio"), Some("1"), &[]),
            "null" => (Some("null"), None, &[]),
            // mmap-dax, ucache, uffd, uffd-wp: no fio engine does the same.
            _ => (None, None, &[]),
        };
    if let Some(e) = engine {
        o.set("ioengine", e);
    }
    if let Some(d) = direct {
        o.set("direct", d);
    }
    for (k, v) in extra {
        o.set(k, *v);
    }
    match c.cache.as_deref().unwrap_or(&r.config.cache) {
        "cold" => o.set("invalidate", "1"),
        "warm" | "as-is" => o.set("invalidate", "0"),
        _ => {}
    }
    if matches!(
        c.pattern.as_str(),
        "write" | "randwrite" | "randrw" | "copy"
    ) {
        match c.sync.as_str() {
            "end" => o.set("end_fsync", "1"),
            "dsync" => o.set("sync", "dsync"),
            "osync" => o.set("sync", "sync"),
            "each" => o.set("fsync", "1"),
            _ => {}
        }
    }
    o
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

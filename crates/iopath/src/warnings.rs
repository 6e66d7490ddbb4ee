//! Warnings: what in a result may not be what it seems. Computed from the
//! result alone (pure functions), printed under the tables and recorded in
//! JSON `warnings[]` with a stable `code`.

use serde::{Deserialize, Serialize};

use crate::result::{CaseResult, RunResult};
use crate::units::fmt_bytes;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// Stable identifier for scripts (`low_device_fraction`, ...).
    pub code: String,
    pub message: String,
    /// The cases it concerns, as `method/pattern`, with a preset's label
    /// when there is one (`buffered/read (sync write)`).
    pub cases: Vec<String>,
}

fn label(c: &CaseResult) -> String {
    match &c.label {
        Some(l) => format!("{}/{} ({l})", c.method, c.pattern),
        None => format!("{}/{}", c.method, c.pattern),
    }
}

/// Methods that keep pages in a cache (the kernel's or their own) and so
/// serve re-reads from memory and read whole pages for small requests.
fn is_cached_method(m: &str) -> bool {
    matches!(
        m,
        "buffered" | "mmap" | "uring-buffered" | "ucache" | "uffd" | "uffd-wp"
    )
}

/// Patterns with reads, whose device fraction is about reads.
fn is_read(p: &str) -> bool {
    matches!(p, "read" | "randread" | "randrw")
}

fn is_write(p: &str) -> bool {
    matches!(p, "write" | "randwrite" | "randrw")
}

/// `cases` in order, each once (cases of one job at two block sizes read
/// alike).
fn dedup(cases: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(cases.len());
    for c in cases {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Every warning that applies to `r`.
pub fn collect(r: &RunResult) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut push = |code: &str, message: String, cases: Vec<String>| {
        let cases = dedup(cases);
        if !cases.is_empty() {
            out.push(Warning {
                code: code.into(),
                message,
                cases,
            });
        }
    };
    let measured: Vec<&CaseResult> = r.cases.iter().filter(|c| c.summary.is_some()).collect();
    // A case's own cache state (presets) wins over the run's.
    let cache_of = |c: &CaseResult| c.cache.clone().unwrap_or_else(|| r.config.cache.clone());
    let cold = measured.iter().all(|c| cache_of(c) == "cold");

    if let (Some(t), Some(avail)) = (&r.target, r.system.memory_available_bytes) {
        if t.size_bytes <= avail {
            let cases: Vec<String> = measured
                .iter()
                .filter(|c| is_cached_method(&c.method) && is_read(&c.pattern))
                .map(|c| label(c))
                .collect();
            push(
                "file_fits_in_memory",
                format!(
                    "the {} file fits in the {} of available memory: cached methods (buffered, mmap, uring-buffered) serve re-read pages from memory within a repetition{}",
                    fmt_bytes(t.size_bytes),
                    fmt_bytes(avail),
                    if cold { "" } else { ", and --cache warm/as-is starts them from memory" }
                ),
                cases,
            );
        }
        if t.sparse {
            push(
                "sparse_target",
                "--sparse: the file is truncated before every repetition, so reads of holes return zeros without touching the device and writes allocate blocks (file-system allocation is part of the result)".into(),
                vec!["all".into()],
            );
        } else if !t.created
            && t.kind == "file"
            && t.allocated_bytes.is_some_and(|a| a < t.size_bytes)
        {
            push(
                "sparse_file",
                format!(
                    "{} has holes ({} allocated of {}): reads of holes return zeros without touching the device",
                    t.path.display(),
                    fmt_bytes(t.allocated_bytes.unwrap_or(0)),
                    fmt_bytes(t.size_bytes)
                ),
                vec!["all".into()],
            );
        }
    }
    push(
        "drop_caches_denied",
        "--drop-caches was not permitted (it needs root): only the test file's own pages were dropped".into(),
        r.cases
            .iter()
            .filter(|c| c.notes.iter().any(|n| n.contains("drop_caches")))
            .map(label)
            .collect(),
    );
    if let Some(stack) = &r.system.device_stack {
        if !stack.buffered_loops.is_empty() {
            push(
                "loop_buffered",
                format!(
                    "{} uses buffered I/O on its backing file: even O_DIRECT reads may be served from the page cache of the file system below (losetup --direct-io=on avoids it)",
                    stack.buffered_loops.join(", ")
                ),
                vec!["all".into()],
            );
        }
    }
    if r.config.data != "random" {
        push(
            "compressible_data",
            format!(
                "written data is '{}': storage that compresses or deduplicates (some SSDs, ZFS, btrfs with compression, VDO) may write far less than asked",
                r.config.data
            ),
            measured
                .iter()
                .filter(|c| is_write(&c.pattern))
                .map(|c| label(c))
                .collect(),
        );
    }
    if r.target.is_some()
        && r.system.device.is_none()
        && measured.iter().any(|c| c.method != "null")
    {
        push(
            "no_block_device",
            "no block device is under the target (tmpfs, overlay or a network file system): no result here measured a device".into(),
            vec!["all".into()],
        );
    }
    {
        let low: Vec<String> = measured
            .iter()
            .filter(|c| is_read(&c.pattern) && cache_of(c) == "cold")
            .filter(|c| {
                c.summary
                    .as_ref()
                    .and_then(|s| s.device_fraction)
                    .is_some_and(|f| f < 0.9)
            })
            .map(|c| label(c))
            .collect();
        push(
            "low_device_fraction",
            "less than 90% of the bytes these cold read cases asked for came from the device: the rest was served from memory".into(),
            low,
        );
    }
    let excess: Vec<String> = measured
        .iter()
        .filter(|c| !is_cached_method(&c.method) && c.method != "null" && is_read(&c.pattern))
        .filter(|c| {
            c.summary
                .as_ref()
                .and_then(|s| s.device_fraction)
                .is_some_and(|f| f > 1.2)
        })
        .map(|c| label(c))
        .collect();
    let amplified: Vec<String> = measured
        .iter()
        .filter(|c| is_cached_method(&c.method) && is_read(&c.pattern))
        .filter(|c| {
            c.summary
                .as_ref()
                .and_then(|s| s.device_fraction)
                .is_some_and(|f| f > 2.0)
        })
        .map(|c| {
            let f = c
                .summary
                .as_ref()
                .and_then(|s| s.device_fraction)
                .unwrap_or(0.0);
            format!("{} ({f:.1}x)", label(c))
        })
        .collect();
    let ra = r
        .system
        .device
        .as_ref()
        .and_then(|d| d.read_ahead_kb)
        .map(|kb| format!(" (read_ahead_kb={kb})"))
        .unwrap_or_default();
    push(
        "read_amplification",
        format!(
            "these cases read more than twice the bytes they asked for from the device: read-ahead and fault-around{ra} fetch pages nobody reads{}",
            if excess.is_empty() { "" } else { " (or other traffic on the disk: see other_disk_traffic)" }
        ),
        amplified,
    );
    push(
        "other_disk_traffic",
        "the disk read over 20% more than these direct-I/O cases asked for: other processes used the disk at the same time (device counters are system-wide)".into(),
        excess.clone(),
    );
    push(
        "sync_none",
        "writes with --sync none may end in the page cache: these figures measure memory, not the device".into(),
        measured
            .iter()
            .filter(|c| (is_write(&c.pattern) || c.pattern == "copy") && c.sync == "none")
            .map(|c| label(c))
            .collect(),
    );
    push(
        "depth_capped",
        "synchronous methods ran at queue depth 1 though more was asked (use --threads for parallelism)".into(),
        measured
            .iter()
            .filter(|c| c.queue_depth < c.queue_depth_requested)
            .map(|c| label(c))
            .collect(),
    );
    if let Some(t) = &r.target {
        if let Some(file_len) = t.file_bytes.filter(|&l| l > t.size_bytes) {
            push(
                "span_smaller_than_file",
                format!(
                    "cases address the first {} of a {} file: the rest is never touched",
                    fmt_bytes(t.size_bytes),
                    fmt_bytes(file_len)
                ),
                vec!["all".into()],
            );
        }
    }
    let shares: Vec<String> = measured
        .iter()
        .filter(|c| c.method == "uring-sqpoll" && (c.threads as usize) + 1 >= r.system.cpus)
        .map(|c| label(c))
        .collect();
    push(
        "sqpoll_shares_core",
        format!(
            "the SQPOLL kernel thread spins on a core of its own, but {} CPU(s) serve it, the worker thread(s) and everything else: they compete (its CPU time is counted in cpu.sqpoll_ns)",
            r.system.cpus
        ),
        shares,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Measurement, RunConfig, Tool};
    use crate::sysinfo::System;
    use crate::target::TargetInfo;

    fn case(
        method: &str,
        pattern: &str,
        frac: Option<f64>,
        qd: (u32, u32),
        sync: &str,
    ) -> CaseResult {
        CaseResult {
            method: method.into(),
            pattern: pattern.into(),
            block_size: 4096,
            queue_depth: qd.0,
            queue_depth_requested: qd.1,
            threads: 1,
            sync: sync.into(),
            summary: Some(Measurement {
                io_bytes: 1 << 20,
                ios: 256,
                read_ios: 256,
                read_bytes: 1 << 20,
                duration_ns: 1_000_000,
                bw_bytes_per_s: 1.0,
                iops: 1.0,
                device_fraction: frac,
                ..Measurement::default()
            }),
            ..CaseResult::default()
        }
    }

    fn run(cases: Vec<CaseResult>, cache: &str, cpus: usize) -> RunResult {
        RunResult {
            schema_version: 1,
            tool: Tool {
                name: "iopath".into(),
                version: "0".into(),
            },
            started_at: String::new(),
            finished_at: None,
            command: String::new(),
            interrupted: false,
            system: System {
                cpus,
                memory_available_bytes: Some(8 << 30),
                device: Some(Default::default()),
                ..System::default()
            },
            target: Some(TargetInfo {
                path: "/x/iopath-1.dat".into(),
                kind: "temporary".into(),
                size_bytes: 1 << 30,
                file_bytes: Some(1 << 30),
                created: true,
                writable: true,
                prefilled: true,
                sparse: false,
                prefill_ns: None,
                allocated_bytes: Some(1 << 30),
            }),
            config: RunConfig {
                preset: None,
                whole_pass: false,
                cache_limit: None,
                time_limit_ns: None,
                io_size_bytes: None,
                repeat: Some(1),
                ci_target: None,
                max_time_ns: None,
                warmup: 0,
                schedule: None,
                interval_ns: 100_000_000,
                seed: 1,
                cache: cache.into(),
                data: "random".into(),
            },
            probe: vec![],
            cases,
            warnings: vec![],
            verdicts: vec![],
        }
    }

    fn codes(w: &[Warning]) -> Vec<&str> {
        w.iter().map(|w| w.code.as_str()).collect()
    }

    #[test]
    fn warm_buffered_read_is_flagged_as_memory() {
        let r = run(
            vec![case("buffered", "randread", Some(0.01), (1, 32), "end")],
            "cold",
            2,
        );
        let w = collect(&r);
        let c = codes(&w);
        assert!(c.contains(&"low_device_fraction"), "{c:?}");
        assert!(c.contains(&"file_fits_in_memory"), "{c:?}");
        assert!(c.contains(&"depth_capped"), "{c:?}");
        let low = w.iter().find(|w| w.code == "low_device_fraction").unwrap();
        assert_eq!(low.cases, vec!["buffered/randread"]);
    }

    #[test]
    fn preset_cases_are_named_with_their_label_and_copies_count_as_writes() {
        let mut a = case("buffered", "read", Some(0.01), (1, 1), "end");
        a.label = Some("sync write".into());
        let mut b = a.clone();
        b.label = Some("sync+sparse".into());
        let twin = a.clone();
        let copy = case("buffered", "copy", Some(1.0), (1, 1), "none");
        // A case with its own as-is cache is not a cold read case.
        let mut warm = case("buffered", "read", Some(0.0), (1, 1), "end");
        warm.label = Some("asynchronous".into());
        warm.cache = Some("as-is".into());
        let r = run(vec![a, b, twin, copy, warm], "cold", 2);
        let w = collect(&r);
        let low = w.iter().find(|w| w.code == "low_device_fraction").unwrap();
        assert_eq!(
            low.cases,
            vec!["buffered/read (sync write)", "buffered/read (sync+sparse)"],
            "labelled, each once"
        );
        let none = w.iter().find(|w| w.code == "sync_none").unwrap();
        assert_eq!(none.cases, vec!["buffered/copy"]);
    }

    #[test]
    fn honest_direct_read_raises_nothing_about_the_device() {
        let r = run(
            vec![case("uring", "randread", Some(1.0), (32, 32), "end")],
            "cold",
            4,
        );
        assert!(collect(&r).is_empty(), "{:?}", collect(&r));
    }

    #[test]
    fn amplification_traffic_sync_none_and_sqpoll() {
        let r = run(
            vec![
                case("mmap", "randread", Some(35.0), (1, 1), "end"),
                case("direct", "read", Some(1.6), (1, 1), "end"),
                // Journal and fsync traffic: a direct write moving twice its
                // bytes is not another process.
                case("uring", "write", Some(2.0), (8, 8), "end"),
                case("buffered", "write", Some(1.0), (1, 1), "none"),
                case("uring-sqpoll", "randread", Some(1.0), (32, 32), "end"),
            ],
            "as-is",
            2,
        );
        let w = collect(&r);
        let c = codes(&w);
        for code in [
            "read_amplification",
            "other_disk_traffic",
            "sync_none",
            "sqpoll_shares_core",
        ] {
            assert!(c.contains(&code), "{code} missing from {c:?}");
        }
        assert!(!c.contains(&"low_device_fraction"), "not a cold run");
        assert!(!c.contains(&"compressible_data"), "random data");
        let other = w.iter().find(|w| w.code == "other_disk_traffic").unwrap();
        assert_eq!(other.cases, vec!["direct/read"]);
        let amp = w.iter().find(|w| w.code == "read_amplification").unwrap();
        assert_eq!(amp.cases, vec!["mmap/randread (35.0x)"]);
    }

    #[test]
    fn compressible_data_is_flagged_on_writes_only() {
        let mut r = run(
            vec![
                case("uring", "write", Some(1.0), (8, 8), "end"),
                case("uring", "read", Some(1.0), (8, 8), "end"),
            ],
            "cold",
            4,
        );
        r.config.data = "zeros".into();
        let w = collect(&r);
        let z = w.iter().find(|w| w.code == "compressible_data").unwrap();
        assert_eq!(z.cases, vec!["uring/write"]);
        assert!(z.message.contains("'zeros'"));
    }

    #[test]
    fn tmpfs_and_partial_span_are_said() {
        let mut r = run(
            vec![case("buffered", "read", None, (1, 1), "end")],
            "cold",
            2,
        );
        r.system.device = None;
        if let Some(t) = r.target.as_mut() {
            t.file_bytes = Some(4 << 30);
        }
        let c: Vec<String> = collect(&r).into_iter().map(|w| w.code).collect();
        assert!(c.contains(&"no_block_device".to_string()), "{c:?}");
        assert!(c.contains(&"span_smaller_than_file".to_string()), "{c:?}");
    }
}

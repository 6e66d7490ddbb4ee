use super::*;
use crate::result::warning::CaseBytes;
use crate::result::{Measurement, RunConfig, Tool};
use crate::run::target::TargetInfo;
use crate::system::sysinfo::System;

fn case(method: &str, pattern: &str, frac: Option<f64>, qd: (u32, u32), sync: &str) -> CaseResult {
    CaseResult {
        method: method.into(),
        pattern: crate::model::Pattern::from_name(pattern).unwrap(),
        block_size: 4096,
        queue_depth: qd.0,
        queue_depth_requested: qd.1,
        threads: 1,
        sync: iopath_io::SyncPolicy::from_name(sync).unwrap(),
        summary: Some(Measurement {
            io_bytes: 1 << 20,
            ios: 256,
            read_ios: 256,
            read_bytes: 1 << 20,
            duration_ns: 1_000_000,
            bw_bytes_per_s: 1.0,
            iops: 1.0,
            device_fraction: frac,
            // The whole 1 GiB file of `run` left cached.
            memory: crate::result::Memory {
                page_cache_bytes: 1 << 30,
                ..Default::default()
            },
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
            kind: crate::result::TargetKind::Temporary,
            size_bytes: 1 << 30,
            file_bytes: Some(1 << 30),
            created: true,
            unnamed: false,
            writable: true,
            prefilled: true,
            sparse: false,
            prefill_ns: None,
            allocated_bytes: Some(1 << 30),
        }),
        config: RunConfig {
            preset: None,
            job_file: None,
            layout: None,
            ignored_options: Vec::new(),
            whole_pass: false,
            cache_limit: None,
            latency_split_fallback: None,
            time_limit_ns: None,
            io_size_bytes: None,
            repeat: Some(1),
            ci_target: None,
            max_time_ns: None,
            case_timeout_ns: None,
            estimated_ns: None,
            warmup: 0,
            schedule: None,
            order_seed: None,
            interval_ns: 100_000_000,
            seed: 1,
            cache: crate::model::CacheState::from_name(cache).unwrap(),
            data: "random".into(),
            conditions: None,
        },
        probe: vec![],
        cases,
        warnings: vec![],
        verdicts: vec![],
        mpi: None,
        replay: None,
    }
}

fn codes(w: &[Warning]) -> Vec<&str> {
    w.iter().map(|w| w.code.as_str()).collect()
}

/// The warnings of `r` with their words written: the cases as labels
/// (`mmap/randread (35x)`), figures included. (Test code, marked so for
/// tests/layers.rs, which reads this file apart from its `mod tests;`: it
/// reaches up to the text layer for the labels.)
#[cfg(test)]
fn worded(r: &RunResult) -> Vec<Warning> {
    let mut r = r.clone();
    r.warnings = collect(&r);
    crate::report::text::warnings::word(&mut r);
    r.warnings
}

/// The facts of the warning `code` of `r`.
fn fact(r: &RunResult, code: &str) -> Fact {
    facts(r)
        .into_iter()
        .find(|f| f.code() == code)
        .unwrap_or_else(|| panic!("no {code} in {:?}", facts(r)))
}

#[test]
fn warm_buffered_read_is_flagged_as_memory() {
    let r = run(
        vec![case("buffered", "randread", Some(0.01), (1, 32), "end")],
        "cold",
        2,
    );
    let w = worded(&r);
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
    warm.cache = Some(crate::model::CacheState::AsIs);
    let r = run(vec![a, b, twin, copy, warm], "cold", 2);
    let w = worded(&r);
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
    assert!(worded(&r).is_empty(), "{:?}", worded(&r));
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
    let w = worded(&r);
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
    assert_eq!(amp.cases, vec!["mmap/randread (35x)"]);
}

/// dontcache reads through the page cache, read-ahead included: its
/// excess is read amplification, never called direct I/O; the
/// thread-pool methods are buffered.
#[test]
fn dontcache_and_pool_methods_read_through_the_cache() {
    let r = run(
        vec![
            case("dontcache", "randread", Some(3.0), (1, 1), "end"),
            case("uring-dontcache", "read", Some(1.5), (8, 8), "end"),
            case("threadpool", "randread", Some(4.0), (32, 32), "end"),
            case("direct", "read", Some(1.6), (1, 1), "end"),
            case("dontcache", "write", Some(1.0), (1, 1), "none"),
            case("tokio", "write", Some(1.0), (8, 8), "none"),
        ],
        "cold",
        2,
    );
    let w = worded(&r);
    let other = w.iter().find(|w| w.code == "other_disk_traffic").unwrap();
    assert_eq!(other.cases, vec!["direct/read"]);
    // Without the process's accounting: only what bypasses the page
    // cache can be told from read-ahead, by its 60% over what it asked.
    match fact(&r, "other_disk_traffic") {
        Fact::OtherDiskTraffic {
            cases,
            own_accounting,
        } => {
            assert!(!own_accounting);
            assert_eq!(cases.len(), 1);
            assert_eq!(cases[0].case, 3);
            assert!((cases[0].fraction - 0.6).abs() < 1e-9, "{cases:?}");
        }
        f => panic!("{f:?}"),
    }
    let amp = w.iter().find(|w| w.code == "read_amplification").unwrap();
    assert_eq!(
        amp.cases,
        vec!["dontcache/randread (3.0x)", "threadpool/randread (4.0x)"]
    );
    let none = w.iter().find(|w| w.code == "sync_none").unwrap();
    assert_eq!(none.cases, vec!["dontcache/write", "tokio/write"]);
}

/// A hinted method is its method: `mmap+random` reads through the page
/// cache (never "bypasses" it), is cached, and may keep writes in
/// memory. Before the fix its name matched none of the lists.
#[test]
fn hinted_methods_are_classified_by_their_method() {
    let r = run(
        vec![
            case("mmap+random", "randread", Some(9.0), (1, 1), "end"),
            case("buffered+noreuse", "randread", Some(1.5), (1, 1), "end"),
            case("mmap+populate", "write", Some(1.0), (1, 1), "none"),
            case("uring-dontcache+random", "write", Some(1.0), (1, 1), "none"),
        ],
        "cold",
        4,
    );
    let w = worded(&r);
    let c = codes(&w);
    assert!(!c.contains(&"other_disk_traffic"), "{c:?}");
    let amp = w.iter().find(|w| w.code == "read_amplification").unwrap();
    assert_eq!(amp.cases, vec!["mmap+random/randread (9.0x)"]);
    let fits = w.iter().find(|w| w.code == "file_fits_in_memory").unwrap();
    assert_eq!(
        fits.cases,
        vec!["mmap+random/randread", "buffered+noreuse/randread"]
    );
    let none = w.iter().find(|w| w.code == "sync_none").unwrap();
    assert_eq!(
        none.cases,
        vec!["mmap+populate/write", "uring-dontcache+random/write"]
    );
}

#[test]
fn dontcache_writes_that_left_pages_cached_are_explained() {
    let mut cases = vec![
        case("dontcache", "write", Some(1.0), (1, 1), "end"),
        case("uring-dontcache", "write", Some(1.0), (8, 8), "end"),
        case("buffered", "write", Some(1.0), (1, 1), "end"),
        case("dontcache", "read", Some(1.0), (1, 1), "end"),
    ];
    for c in &mut cases {
        let m = &mut c.summary.as_mut().unwrap().memory;
        m.page_cache_before_bytes = 1 << 20;
        m.page_cache_bytes = 121 << 20;
    }
    // Dropped as they should be: nothing to say.
    cases[1].summary.as_mut().unwrap().memory.page_cache_bytes = 2 << 20;
    let r = run(cases, "cold", 2);
    let w = worded(&r);
    let k = w.iter().find(|w| w.code == "dontcache_pages_kept").unwrap();
    assert_eq!(k.cases, vec!["dontcache/write"]);
    // 121 MiB cached after, 1 MiB before: 120 MiB kept.
    assert_eq!(
        fact(&r, "dontcache_pages_kept"),
        Fact::DontcachePagesKept {
            cases: vec![CaseBytes {
                case: 0,
                bytes: 120 << 20
            }]
        }
    );
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
    let w = worded(&r);
    let z = w.iter().find(|w| w.code == "compressible_data").unwrap();
    assert_eq!(z.cases, vec!["uring/write"]);
    assert_eq!(
        fact(&r, "compressible_data"),
        Fact::CompressibleData {
            cases: vec![0],
            data: "zeros".into()
        }
    );
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
    let c: Vec<String> = worded(&r).into_iter().map(|w| w.code).collect();
    assert!(c.contains(&"no_block_device".to_string()), "{c:?}");
    assert!(c.contains(&"span_smaller_than_file".to_string()), "{c:?}");
}
#[test]
fn a_sparse_loop_device_warns_of_unwritten_ranges_until_prefilled() {
    let mut r = run(
        vec![
            case("direct", "read", Some(1.0), (1, 1), "end"),
            case("direct", "write", Some(1.0), (1, 1), "end"),
        ],
        "cold",
        2,
    );
    let t = r.target.as_mut().unwrap();
    (t.path, t.kind, t.created) = (
        "/dev/loop3".into(),
        crate::result::TargetKind::BlockDevice,
        false,
    );
    (t.prefilled, t.allocated_bytes) = (false, Some(1 << 20));
    let w = worded(&r);
    let u = w
        .iter()
        .find(|w| w.code == "unwritten_device_ranges")
        .unwrap();
    assert_eq!(u.cases, ["direct/read"]);
    assert_eq!(
        fact(&r, "unwritten_device_ranges"),
        Fact::UnwrittenDeviceRanges {
            cases: vec![0],
            device: "/dev/loop3".into(),
            allocated_bytes: 1 << 20,
            file_bytes: 1 << 30,
        }
    );
    assert!(!w.iter().any(|w| w.code == "sparse_file"));
    // Fully allocated, or prefilled by iopath: nothing to say.
    r.target.as_mut().unwrap().allocated_bytes = Some(1 << 30);
    assert!(!codes(&worded(&r)).contains(&"unwritten_device_ranges"));
    let t = r.target.as_mut().unwrap();
    (t.prefilled, t.allocated_bytes) = (true, Some(0));
    assert!(!codes(&worded(&r)).contains(&"unwritten_device_ranges"));
}

/// Issue 18 (output): the warning says what fitting in memory means
/// and what to do, and leaves out a cold sequential pass, which reads
/// each page once.
#[test]
fn file_fits_in_memory_says_what_it_means_and_skips_one_cold_pass() {
    let cases = vec![
        case("buffered", "read", Some(1.0), (1, 1), "end"),
        // Half of what it asked came from memory.
        case("mmap", "randread", Some(0.5), (1, 1), "end"),
    ];
    let r = run(cases.clone(), "cold", 2);
    let w = worded(&r);
    let fits = w.iter().find(|w| w.code == "file_fits_in_memory").unwrap();
    assert_eq!(fits.cases, ["mmap/randread"]);
    // The 1 GiB file in 8 GiB; a cap of a quarter of it suggested.
    let memory = |cases: Vec<usize>, cold: bool| Fact::FileFitsInMemory {
        cases,
        file_bytes: 1 << 30,
        memory_available_bytes: 8 << 30,
        cold,
        suggested_cache_limit_bytes: 256 << 20,
    };
    assert_eq!(fact(&r, "file_fits_in_memory"), memory(vec![1], true));
    // Warm, the pass starts from memory: flagged, and said so.
    let r = run(cases, "warm", 2);
    let w = worded(&r);
    let fits = w.iter().find(|w| w.code == "file_fits_in_memory").unwrap();
    assert_eq!(fits.cases, ["buffered/read", "mmap/randread"]);
    assert_eq!(fact(&r, "file_fits_in_memory"), memory(vec![0, 1], false));
}

#[test]
fn file_fits_in_memory_considers_the_cache_limit() {
    use crate::result::CacheLimitInfo;
    let cases = vec![
        case("buffered", "randread", Some(0.5), (1, 1), "end"),
        case("mmap", "randread", Some(0.5), (1, 1), "end"),
    ];
    let limit = |bytes: u64| CacheLimitInfo {
        limit_bytes: bytes,
        cgroup_version: 2,
        dir: "/sys/fs/cgroup/iopath-1-1".into(),
        peak_bytes: None,
        limit_hits: None,
    };
    let fits = |r: &RunResult| {
        worded(r)
            .into_iter()
            .find(|w| w.code == "file_fits_in_memory")
            .map(|w| w.cases)
    };
    let mut r = run(cases, "cold", 2);
    assert_eq!(
        fits(&r),
        Some(vec!["buffered/randread".into(), "mmap/randread".into()])
    );
    // 1 GiB file, 64 MiB cap: those cases never had room for it.
    r.config.cache_limit = Some(limit(64 << 20));
    assert_eq!(fits(&r), None);
    // A cap larger than the file leaves the warning as it was.
    r.config.cache_limit = Some(limit(2 << 30));
    assert_eq!(fits(&r).map(|c| c.len()), Some(2));
    // hmmap limits only its mmap cases: buffered (not in the preset's
    // cgroup) still has the machine's memory.
    r.config.cache_limit = Some(limit(64 << 20));
    r.config.preset = Some("hmmap".into());
    for c in &mut r.cases {
        c.label = Some("R".into());
    }
    assert_eq!(fits(&r), Some(vec!["buffered/randread (R)".into()]));
    // A preset that marks no case runs every case under the cap: none
    // had the machine's memory (review of issue 16).
    r.config.preset = Some("glommio-scan".into());
    assert_eq!(fits(&r), None);
    // What a case records wins: one that ran outside says so.
    r.cases[0].cache_limited = Some(false);
    assert_eq!(fits(&r).map(|c| c.len()), Some(1));
}

#[test]
fn sync_none_lists_only_writes_that_may_stay_in_memory() {
    let r = run(
        vec![
            case("buffered", "write", Some(1.0), (1, 1), "none"),
            case("direct", "write", Some(1.0), (1, 1), "none"),
            case("uring", "randwrite", Some(1.0), (8, 8), "none"),
            case("null", "write", None, (8, 8), "none"),
            case("mmap", "randrw", Some(1.0), (1, 1), "none"),
            case("buffered", "read", Some(1.0), (1, 1), "none"),
        ],
        "cold",
        4,
    );
    let w = worded(&r);
    let none = w.iter().find(|w| w.code == "sync_none").unwrap();
    assert_eq!(none.cases, vec!["buffered/write", "mmap/randrw"]);
}

#[test]
fn read_amplification_is_a_ratio_and_arms_are_named() {
    let mut second = case("mmap", "randread", Some(1878.65), (1, 1), "end");
    second.arm = Some(2);
    let r = run(
        vec![case("mmap", "randread", Some(2.5), (1, 1), "end"), second],
        "as-is",
        4,
    );
    let w = worded(&r);
    let amp = w.iter().find(|w| w.code == "read_amplification").unwrap();
    assert_eq!(
        amp.cases,
        vec!["mmap/randread (2.5x)", "mmap#2/randread (1879x)"]
    );
}

/// Issue 18 (hmmap at defaults): a preset's grid has cases that read
/// alike (`uffd/randread (RR)` at 1 to 16 threads); the warnings name
/// their jobs, and name the user-space caches' page-per-miss, not the
/// page cache's read-ahead, as what amplifies their reads.
#[test]
fn cases_that_read_alike_are_named_by_their_job() {
    let rr = |m: &str, threads: u32, frac: f64| {
        let mut c = case(m, "randread", Some(frac), (1, 1), "end");
        c.block_size = 8;
        c.threads = threads;
        c.label = Some("RR".into());
        c
    };
    let r = run(
        vec![
            rr("uffd", 1, 509.0),
            rr("uffd", 4, 506.0),
            case("direct", "randread", Some(1.0), (1, 1), "end"),
        ],
        "cold",
        4,
    );
    let w = worded(&r);
    let amp = w.iter().find(|w| w.code == "read_amplification").unwrap();
    assert_eq!(
        amp.cases,
        vec![
            "uffd/randread 8 Q1T1 (RR) (509x)",
            "uffd/randread 8 Q1T4 (RR) (506x)"
        ]
    );
    let cause = |r: &RunResult| match fact(r, "read_amplification") {
        Fact::ReadAmplification { cause, .. } => cause,
        f => panic!("{f:?}"),
    };
    assert_eq!(cause(&r), AmplificationCause::UserSpaceCache);
    // The user-space caches read with O_DIRECT into a cache of their
    // own: whether the file fits in memory does not enter into it.
    assert!(!w.iter().any(|w| w.code == "file_fits_in_memory"), "{w:?}");
    // A case alone of its kind keeps the short name, and mmap's
    // amplification is read-ahead's.
    let r = run(
        vec![
            case("mmap", "randread", Some(40.0), (1, 1), "end"),
            rr("ucache", 1, 509.0),
        ],
        "cold",
        4,
    );
    let w = worded(&r);
    let amp = w.iter().find(|w| w.code == "read_amplification").unwrap();
    assert_eq!(
        amp.cases,
        vec!["mmap/randread (40x)", "ucache/randread (RR) (509x)"]
    );
    assert_eq!(cause(&r), AmplificationCause::Both);
    let fits = w.iter().find(|w| w.code == "file_fits_in_memory").unwrap();
    assert_eq!(fits.cases, vec!["mmap/randread"]);
}

/// Acceptance of issue 18 (the default run): file_fits_in_memory
/// listed random reads that left 1-3% of the 1 GiB file cached, whose
/// reads came almost all from the device; from a cold cache only a
/// case that cached a tenth of the file or more is listed.
#[test]
fn file_fits_in_memory_lists_only_cases_that_cached_enough_to_matter() {
    let with_cached = |m: &str, bytes: u64| {
        let mut c = case(m, "randread", None, (1, 1), "end");
        c.summary.as_mut().unwrap().memory.page_cache_bytes = bytes;
        c
    };
    // Without device counters: by what each left cached.
    let r = run(
        vec![
            with_cached("buffered", 9 << 20),
            with_cached("mmap", 142 << 20),
        ],
        "cold",
        4,
    );
    let w = worded(&r);
    let fits = w.iter().find(|w| w.code == "file_fits_in_memory").unwrap();
    assert_eq!(fits.cases, vec!["mmap/randread"]);
    // With them: by the share of what it asked that the device did
    // not read; past 110% (read-ahead) by what it left cached.
    let with = |m: &str, bytes: u64, f: f64| {
        let mut c = with_cached(m, bytes);
        c.summary.as_mut().unwrap().device_fraction = Some(f);
        c
    };
    let w = worded(&run(
        vec![
            with("buffered", 9 << 20, 0.6),
            with("mmap", 1 << 30, 1.0),
            with("mmap+random", 142 << 20, 1858.0),
            with("uring-buffered", 9 << 20, 1858.0),
        ],
        "cold",
        4,
    ));
    let fits = w.iter().find(|w| w.code == "file_fits_in_memory").unwrap();
    assert_eq!(
        fits.cases,
        vec!["buffered/randread", "mmap+random/randread"]
    );
    // A warm cache starts them in memory, whatever they left.
    let r = run(
        vec![
            with_cached("buffered", 9 << 20),
            with_cached("mmap", 142 << 20),
        ],
        "warm",
        4,
    );
    let w = worded(&r);
    let fits = w.iter().find(|w| w.code == "file_fits_in_memory").unwrap();
    assert_eq!(fits.cases.len(), 2, "{fits:?}");
}

/// `--latency-split` asked for and not traced (not root): one run-level
/// warning saying why; a run that did not ask has none.
#[test]
fn a_latency_split_asked_for_and_not_traced_is_a_run_warning() {
    use crate::result::latency_split::SplitFallback;
    let mut r = run(
        vec![case("direct", "randread", Some(1.0), (1, 1), "end")],
        "cold",
        2,
    );
    assert!(!codes(&collect(&r)).contains(&"latency_split_fallback"));
    r.config.latency_split_fallback = Some(SplitFallback::NotRoot);
    assert_eq!(
        fact(&r, "latency_split_fallback"),
        Fact::LatencySplitFallback {
            reason: SplitFallback::NotRoot
        }
    );
    let w = worded(&r);
    let said = w.iter().filter(|w| w.code == "latency_split_fallback");
    assert_eq!(said.count(), 1);
}

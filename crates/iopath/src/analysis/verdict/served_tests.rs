//! What served each case, and verdicts that rank like with like: synthetic
//! results, 8 interleaved rounds each.

use super::*;
use crate::analysis::verdict::dirty::tests::limits;
use crate::model::Pattern;
use crate::result::{Entrant, ProcessIo, RepetitionControl};

const MIB: u64 = 1 << 20;

/// A measured case of `method` that moved `bytes` a repetition in
/// `duration_ns` (8 rounds, each a little faster than the last), its
/// device moving `fraction` of them.
fn case(method: &str, pattern: Pattern, bytes: u64, duration_ns: u64, fraction: f64) -> CaseResult {
    let writes = pattern.writes();
    let reps: Vec<Measurement> = (0..8u32)
        .map(|i| Measurement {
            io_bytes: bytes,
            read_bytes: if writes { 0 } else { bytes },
            write_bytes: if writes { bytes } else { 0 },
            ios: bytes / 4096,
            duration_ns,
            bw_bytes_per_s: bytes as f64 * 1e9 / duration_ns as f64 * (1.0 + f64::from(i) * 1e-3),
            device_fraction: Some(fraction),
            round: Some(i + 1),
            ..Default::default()
        })
        .collect();
    CaseResult {
        method: method.into(),
        pattern,
        block_size: 4096,
        queue_depth: 32,
        queue_depth_requested: 32,
        threads: 1,
        sync: SyncPolicy::End,
        summary: Measurement::median_of(&reps.iter().collect::<Vec<_>>()),
        repetitions: reps,
        repetition_control: Some(RepetitionControl {
            stopped_by: crate::stats::StopReason::Fixed,
            measured: 8,
            warmup: 0,
            ci_rel: None,
            ci_level: 0.95,
            elapsed_ns: 0,
            measured_ios: None,
            budget_ns: None,
            stretch_until_ns: None,
        }),
        ..Default::default()
    }
}

/// A run of `cases` on ext4 with a cold cache, the dirty limit `dirty`.
fn run(cases: Vec<CaseResult>, dirty: Option<u64>) -> RunResult {
    // The report tests' fixture, read here (analysis is below report).
    let mut r: RunResult =
        serde_json::from_str(include_str!("../../../tests/fixtures/report/run.json")).unwrap();
    r.cases = cases;
    r.system.fs_type = Some("ext4".into());
    r.system.dirty_limits = dirty.map(limits);
    r.config.cache = CacheState::Cold;
    r
}

/// A cached file read by buffered and mmap beside direct and uring, the
/// cache cold: 100 MiB in 20-50 ms from memory (device 3-5%), 100 MiB in
/// about 1 s from the device.
fn cached_reads() -> Vec<CaseResult> {
    vec![
        case("direct", Pattern::RandRead, 100 * MIB, 1_000_000_000, 1.0),
        case("uring", Pattern::RandRead, 100 * MIB, 800_000_000, 1.0),
        case("buffered", Pattern::RandRead, 100 * MIB, 50_000_000, 0.05),
        case("mmap", Pattern::RandRead, 100 * MIB, 20_000_000, 0.03),
    ]
}

fn served_codes(r: &RunResult) -> Vec<(String, Option<&'static str>)> {
    r.cases
        .iter()
        .map(|c| (c.name(), c.served.as_ref().map(Served::code)))
        .collect()
}

fn fact_codes(v: &Verdict) -> Vec<&'static str> {
    v.facts.iter().map(VerdictFact::code).collect()
}

#[test]
fn cached_reads_beside_direct_are_set_apart_and_never_lead() {
    let mut r = run(cached_reads(), None);
    mark(&mut r);
    assert_eq!(
        served_codes(&r),
        [
            ("direct".into(), Some("device")),
            ("uring".into(), Some("device")),
            ("buffered".into(), Some("memory")),
            ("mmap".into(), Some("memory")),
        ]
    );
    let v = crate::analysis::verdict::of_run(&r).remove(0);
    // The device's methods ranked among themselves: uring leads.
    assert_eq!(v.pick, "uring");
    assert_eq!(v.fastest, vec![Entrant::from("uring")]);
    let ranked: Vec<String> = v.ranking.iter().map(|m| m.method.to_string()).collect();
    assert_eq!(ranked, ["uring", "direct"]);
    // The others shown apart, fastest first, as what they are.
    let apart: Vec<(String, &str)> = v
        .set_apart
        .iter()
        .map(|a| (a.method.to_string(), a.served.code()))
        .collect();
    assert_eq!(
        apart,
        [("mmap".into(), "memory"), ("buffered".into(), "memory")]
    );
    assert_eq!(fact_codes(&v), ["fastest", "served_from_memory", "use"]);
    let Some(VerdictFact::ServedFromMemory { methods }) = v.facts.get(1) else {
        panic!("{:?}", v.facts);
    };
    assert_eq!(methods[0].device_fraction, Some(0.03));
}

#[test]
fn a_warm_cache_asked_for_is_ranked_as_before() {
    for warm in [true, false] {
        let mut r = run(cached_reads(), None);
        if warm {
            r.config.cache = CacheState::Warm;
        } else {
            // The case's own warm cache (a preset's) counts the same.
            r.cases
                .iter_mut()
                .for_each(|c| c.cache = Some(CacheState::Warm));
        }
        mark(&mut r);
        let mmap = r.cases[3].served.as_ref().unwrap();
        assert!(
            matches!(mmap, Served::Memory { asked: true, .. }),
            "{mmap:?}"
        );
        let v = crate::analysis::verdict::of_run(&r).remove(0);
        assert_eq!(v.pick, "mmap");
        assert_eq!(v.ranking.len(), 4);
        assert!(v.set_apart.is_empty());
    }
}

/// Other traffic on the disk fills the system's counters (device 120%),
/// but the process's own device reads say memory served the read.
#[test]
fn the_process_own_device_reads_tell_memory_from_other_traffic() {
    let mut mmap = case("mmap", Pattern::RandRead, 100 * MIB, 20_000_000, 1.2);
    for m in mmap.repetitions.iter_mut().chain(mmap.summary.as_mut()) {
        m.process_io = Some(ProcessIo {
            read_bytes: 2 * MIB,
            ..Default::default()
        });
    }
    let mut r = run(vec![mmap], None);
    mark(&mut r);
    let Some(Served::Memory {
        device_fraction,
        own_fraction,
        asked: false,
        rereads: false,
    }) = r.cases[0].served
    else {
        panic!("{:?}", r.cases[0].served);
    };
    assert_eq!((device_fraction, own_fraction), (1.2, Some(0.02)));
}

/// Buffered and mmap wrote under the dirty limit, their flush not timed
/// (`--sync none`); direct and uring reached the device: the page-cache
/// writers are set apart with their burst and the device's speed behind it
/// (uring's), and the verdict picks among the device's.
#[test]
fn a_write_burst_the_page_cache_absorbed_is_set_apart_with_the_devices_speed() {
    let mut cases = vec![
        case("buffered", Pattern::RandWrite, 120 * MIB, 150_000_000, 0.96),
        case("mmap", Pattern::RandWrite, 20 * MIB, 150_000_000, 1.0),
        case("direct", Pattern::RandWrite, 30 * MIB, 150_000_000, 1.0),
        case("uring", Pattern::RandWrite, 60 * MIB, 150_000_000, 1.0),
    ];
    cases.iter_mut().for_each(|c| c.sync = SyncPolicy::None);
    let mut r = run(cases, Some(4 << 30));
    mark(&mut r);
    let Some(Served::Absorbed(b)) = &r.cases[0].served else {
        panic!("{:?}", r.cases[0].served);
    };
    assert_eq!((b.written_bytes, b.limit_bytes), (120 * MIB, Some(4 << 30)));
    let device = b.device.as_ref().expect("the device's speed");
    assert_eq!(device.method, "uring");
    assert!((device.bytes_per_s / (400.0 * MIB as f64) - 1.0).abs() < 0.01);
    assert!((b.burst_bytes_per_s / (800.0 * MIB as f64) - 1.0).abs() < 0.01);
    let v = crate::analysis::verdict::of_run(&r).remove(0);
    assert_eq!(v.pick, "uring");
    assert!(v.dirty_burst.is_none());
    assert_eq!(fact_codes(&v), ["fastest", "absorbed_by_page_cache", "use"]);
    let Some(VerdictFact::AbsorbedByPageCache {
        methods,
        limit_bytes,
        suggested_size_bytes,
        ..
    }) = v.facts.get(1)
    else {
        panic!("{:?}", v.facts);
    };
    let names: Vec<String> = methods.iter().map(|m| m.method.to_string()).collect();
    assert_eq!(names, ["buffered", "mmap"]);
    assert_eq!(
        (limit_bytes.to_owned(), suggested_size_bytes.to_owned()),
        (Some(4 << 30), Some(8 << 30))
    );
}

/// `--sync end` (the default): the flush is timed and the device moved all
/// the bytes, so buffered and dontcache (both page-cache writers) are the
/// device's under the dirty limit as direct is, and ranked with it; a
/// writer whose device moved little of it is still absorbed.
#[test]
fn timed_flush_writes_the_device_moved_are_the_devices_under_the_dirty_limit() {
    let cases = vec![
        case("buffered", Pattern::Write, 120 * MIB, 100_000_000, 1.0),
        case("dontcache", Pattern::Write, 120 * MIB, 150_000_000, 1.0),
        case("direct", Pattern::Write, 120 * MIB, 200_000_000, 1.0),
        case("mmap", Pattern::Write, 120 * MIB, 20_000_000, 0.1),
    ];
    let mut r = run(cases, Some(4 << 30));
    mark(&mut r);
    let codes: Vec<Option<&str>> = served_codes(&r).into_iter().map(|(_, c)| c).collect();
    assert_eq!(
        codes,
        [
            Some("device"),
            Some("device"),
            Some("device"),
            Some("absorbed")
        ]
    );
    let v = crate::analysis::verdict::of_run(&r).remove(0);
    assert_eq!(v.pick, "buffered");
    let ranked: Vec<String> = v.ranking.iter().map(|m| m.method.to_string()).collect();
    assert_eq!(ranked, ["buffered", "dontcache", "direct"]);
}

/// `--sync none` under the dirty limit: buffered's pages stay dirty, so
/// its speed is a burst the page cache absorbed. dontcache starts
/// write-back as it writes: where the device moved its bytes in the timed
/// interval (measured: all of a 1 GiB write, at 1.4 GiB/s beside direct's
/// 1.6) it served them, and it is ranked with direct; where it moved
/// little, absorbed.
#[test]
fn untimed_flush_dontcache_writes_the_device_moved_are_the_devices_under_the_limit() {
    let mut cases = vec![
        case("buffered", Pattern::Write, 120 * MIB, 100_000_000, 1.0),
        case("dontcache", Pattern::Write, 120 * MIB, 150_000_000, 1.0),
        case("direct", Pattern::Write, 120 * MIB, 200_000_000, 1.0),
        case(
            "uring-dontcache",
            Pattern::Write,
            120 * MIB,
            150_000_000,
            0.1,
        ),
    ];
    cases.iter_mut().for_each(|c| c.sync = SyncPolicy::None);
    let mut r = run(cases, Some(4 << 30));
    mark(&mut r);
    let codes: Vec<Option<&str>> = served_codes(&r).into_iter().map(|(_, c)| c).collect();
    assert_eq!(
        codes,
        [
            Some("absorbed"),
            Some("device"),
            Some("device"),
            Some("absorbed")
        ]
    );
}

/// `--sync none` and no dirty limit known: the device moved nothing of
/// what buffered wrote, and no write of the job reached the device to say
/// its speed (the fact says it is not known rather than inventing it).
#[test]
fn writes_the_device_never_saw_are_absorbed_and_an_unknown_device_speed_stays_unknown() {
    let mut w = case("buffered", Pattern::Write, 1 << 30, 100_000_000, 0.0);
    w.sync = SyncPolicy::None;
    let mut r = run(vec![w], None);
    mark(&mut r);
    let Some(Served::Absorbed(b)) = &r.cases[0].served else {
        panic!("{:?}", r.cases[0].served);
    };
    assert_eq!((b.limit_bytes, b.device.as_ref()), (None, None));
    assert_eq!(b.device_fraction, Some(0.0));
}

/// O_DSYNC waits for the device on every write; past the dirty limit the
/// writer waited for write-back: neither is absorbed.
#[test]
fn synced_writes_and_writes_past_the_limit_are_the_devices() {
    let mut dsync = case("buffered", Pattern::Write, 120 * MIB, 150_000_000, 1.0);
    dsync.sync = SyncPolicy::Dsync;
    let past = case(
        "buffered",
        Pattern::RandWrite,
        600 * MIB,
        1_000_000_000,
        1.0,
    );
    let mut r = run(vec![dsync, past], Some(512 * MIB));
    mark(&mut r);
    let codes: Vec<Option<&str>> = served_codes(&r).into_iter().map(|(_, c)| c).collect();
    assert_eq!(codes, [Some("device"), Some("device")]);
}

/// On tmpfs the file is memory: nothing is set apart.
#[test]
fn on_tmpfs_nothing_is_set_apart() {
    let mut r = run(cached_reads(), Some(4 << 30));
    r.system.fs_type = Some("tmpfs".into());
    mark(&mut r);
    assert!(r.cases.iter().all(|c| c.served.is_none()));
    assert_eq!(crate::analysis::verdict::of_run(&r)[0].pick, "mmap");
}

/// One method the device served beside one served from memory: nothing to
/// rank like with like, so no verdict (as with one method alone).
#[test]
fn one_device_method_beside_memory_gets_no_verdict() {
    let mut cases = cached_reads();
    cases.remove(1);
    cases.remove(1);
    let mut r = run(cases, None);
    mark(&mut r);
    assert!(crate::analysis::verdict::of_run(&r).is_empty());
}

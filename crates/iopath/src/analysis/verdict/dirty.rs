//! The write verdict's caveat: a method that writes through the page cache
//! (buffered, mmap, uring-buffered) and wrote no more in a repetition than
//! the kernel's dirty limit was never made to wait for the device. Its
//! writes went to memory; the flush at the end (or none, with `--sync
//! none`) moved them at once, sorted and merged. That is a burst, often
//! faster than the device takes writes for long, and the default run's
//! randwrite verdict used to pick buffered on 150 ms of it. The verdict
//! keeps its figures and says so, with a `--size` beyond the limit (and a
//! `--time` that writes past it) to measure sustained writes. Since
//! `served.rs` sets such writers apart (`absorbed`), a verdict ranks none
//! of them and this caveat applies to results analysed before it.

use super::Verdict;
use crate::model::Pattern;
use crate::result::records::{DirtyBurst, WriteRate};
use crate::result::{CacheLimitInfo, CaseResult, Entrant};
use crate::system::metrics::dirty::DirtyLimits;
use iopath_io::SyncPolicy;

/// Methods whose writes land in the page cache first (and stay there until
/// write-back), hinted or not (`mmap+random` is `mmap`): classified by the
/// method the result's name reads back to. `dontcache` starts write-back at
/// once, so it is not among them.
pub(crate) fn through_page_cache(method: &crate::result::MethodName) -> bool {
    use iopath_io::Method as M;
    matches!(
        method.base(),
        Some(M::Buffered | M::Mmap | M::UringBuffered | M::Threadpool | M::Tokio)
    )
}

/// The dirty limit of cases that ran in the `--cache-limit` cgroup: the
/// page cache cannot hold more than the cap, whatever the machine's limit.
/// A ratio applies to the cap (as v2 applies it to a cgroup's memory;
/// on v1 iopath starts write-back at a tenth of it, `cgroup.rs`), a
/// `vm.dirty_bytes` is bounded by it.
fn under_cap(d: &DirtyLimits, cap: u64) -> DirtyLimits {
    let limit = match d.ratio_pct {
        Some(r) => cap / 100 * r,
        None => d.limit_bytes.min(cap),
    };
    DirtyLimits {
        limit_bytes: limit.min(d.limit_bytes),
        background_bytes: d.background_bytes.min(limit / 2),
        base_bytes: cap,
        base_is_cgroup: true,
        ..*d
    }
}

/// On tmpfs (or ramfs) the file is the page cache: no write-back, no
/// device, no burst to tell from sustained writing, nothing served from
/// memory rather than the device (the no_block_device warning says what
/// was measured).
pub(crate) fn in_memory(r: &crate::result::RunResult) -> bool {
    matches!(r.system.fs_type.as_deref(), Some("tmpfs" | "ramfs"))
        && r.target
            .as_ref()
            .is_some_and(|t| t.kind != crate::result::TargetKind::BlockDevice)
}

/// The dirty limit case `c` of `r` wrote under: the machine's, or the
/// `--cache-limit` cgroup's where the case ran in it ([`under_cap`]);
/// `None` where the system's is not known.
pub(crate) fn limit_of(r: &crate::result::RunResult, c: &CaseResult) -> Option<u64> {
    let d = r.system.dirty_limits.as_ref()?;
    let cap = r
        .config
        .cache_limit
        .as_ref()
        .filter(|_| c.cache_limited != Some(false));
    Some(cap.map_or(d.limit_bytes, |cap| {
        under_cap(d, cap.limit_bytes).limit_bytes
    }))
}

/// A writer through the page cache and its median write rate.
struct Writer {
    method: Entrant,
    bytes_per_s: f64,
}

/// The most any of the group's page-cache writers wrote in a repetition,
/// and each writer (named as the verdict ranks it), when every one of
/// their measured repetitions stayed under `d`'s limit.
struct Absorbed {
    written: u64,
    writers: Vec<Writer>,
}

impl Absorbed {
    fn of(
        v: &Verdict,
        cases: &[CaseResult],
        in_group: &dyn Fn(&CaseResult) -> bool,
        d: &DirtyLimits,
    ) -> Absorbed {
        let mut written = 0u64;
        let mut writers: Vec<Writer> = Vec::new();
        // Each case named as the verdict ranks it: a variant by what
        // differs, a job's case by its method.
        let group: Vec<&CaseResult> = cases.iter().filter(|c| in_group(c)).collect();
        let names: Vec<Entrant> = if v.job.group.is_some() {
            super::variant_names(&group)
                .into_iter()
                .map(Entrant::from)
                .collect()
        } else {
            group.iter().map(|c| c.entrant()).collect()
        };
        for (c, name) in group
            .iter()
            .zip(names)
            .filter(|(c, _)| through_page_cache(&c.method))
        {
            let Some(s) = c.summary.as_ref().filter(|s| s.write_bytes > 0) else {
                continue;
            };
            // A burst only when every measured repetition stayed under the
            // limit: "at most" is then the largest of them.
            let measured = c.measured();
            let most = measured
                .iter()
                .map(|m| m.write_bytes)
                .max()
                .unwrap_or(s.write_bytes)
                .max(s.write_bytes);
            if most > d.limit_bytes {
                continue;
            }
            written = written.max(most);
            // Its write rate, the median over its repetitions (as the
            // table's MiB/s is the median of theirs).
            let mut per_rep: Vec<f64> = measured
                .iter()
                .filter(|m| m.duration_ns > 0)
                .map(|m| m.write_bytes as f64 * 1e9 / m.duration_ns as f64)
                .collect();
            let bytes_per_s = if per_rep.is_empty() {
                s.write_bytes as f64 * 1e9 / s.duration_ns.max(1) as f64
            } else {
                crate::result::median(&mut per_rep)
            };
            // A writer the verdict does not rank is left out.
            if let Some(r) = v.ranking.iter().find(|r| r.method == name) {
                writers.push(Writer {
                    method: r.method.clone(),
                    bytes_per_s,
                });
            }
        }
        Absorbed { written, writers }
    }
}

/// The burst of `v`, when its page-cache writers stayed under the limit.
/// `cases` are the run's; `file` the bytes the cases address; `cap` the
/// run's `--cache-limit` cgroup, when it had one.
pub fn burst(
    v: &Verdict,
    cases: &[CaseResult],
    d: &DirtyLimits,
    file: Option<u64>,
    cap: Option<&CacheLimitInfo>,
) -> Option<DirtyBurst> {
    let writes = v.job.pattern.writes();
    // O_SYNC/O_DSYNC and fsync-per-write wait for the device on every write.
    if !writes || !matches!(v.job.sync, SyncPolicy::End | SyncPolicy::None) || d.limit_bytes == 0 {
        return None;
    }
    // A sync every N writes waits for the device as it goes: no burst.
    if v.job.sync_every.is_some() {
        return None;
    }
    let in_group = |c: &CaseResult| match &v.job.group {
        Some(g) => c.group.as_ref() == Some(g) && c.pattern == v.job.pattern,
        None => c.group.is_none() && c.job() == v.job,
    };
    // Cases in the cgroup: its cap, not the machine's memory, bounds what
    // the page cache absorbs.
    let capped = cap.filter(|_| {
        cases
            .iter()
            .any(|c| in_group(c) && c.cache_limited != Some(false))
    });
    let d = capped.map_or(*d, |c| under_cap(d, c.limit_bytes));
    let Absorbed { written, writers } = Absorbed::of(v, cases, &in_group, &d);
    if writers.is_empty() {
        return None;
    }
    // Twice the limit, so that most of a repetition is past it: how long
    // that takes each writer at its own median rate.
    let twice = 2.0 * d.limit_bytes as f64;
    let mut rates: Vec<WriteRate> = writers
        .iter()
        .filter(|w| w.bytes_per_s > 0.0)
        .map(|w| WriteRate {
            method: w.method.clone(),
            bytes_per_s: w.bytes_per_s,
            seconds_past_limit: (twice / w.bytes_per_s).ceil().max(1.0),
        })
        .collect();
    rates.sort_by(|a, b| a.bytes_per_s.total_cmp(&b.bytes_per_s));
    Some(DirtyBurst {
        methods: writers.into_iter().map(|w| w.method).collect(),
        written_bytes: written,
        limit_bytes: d.limit_bytes,
        suggested_size_bytes: (d.limit_bytes.saturating_add(d.limit_bytes / 4)).next_power_of_two(),
        file_bytes: file.filter(|&f| v.job.pattern != Pattern::Write && f <= d.limit_bytes),
        limits: d,
        cgroup: capped.is_some(),
        cap_hits: capped.and_then(|c| c.limit_hits).filter(|&n| n > 0),
        unsynced: v.job.sync == SyncPolicy::None,
        past_limit_bytes: twice as u64,
        rates,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::result::{Measurement, RepetitionControl};

    pub(crate) fn case(method: &str, written: u64, duration_ns: u64, round: u32) -> CaseResult {
        let m = |bw: f64| Measurement {
            write_bytes: written,
            io_bytes: written,
            write_ios: written / 4096,
            ios: written / 4096,
            duration_ns,
            bw_bytes_per_s: bw,
            round: Some(round),
            ..Default::default()
        };
        let reps: Vec<Measurement> = (0..8)
            .map(|i| {
                let mut r = m(written as f64 * 1e9 / duration_ns as f64 * (1.0 + i as f64 * 1e-3));
                r.round = Some(i + 1);
                r
            })
            .collect();
        CaseResult {
            method: method.into(),
            pattern: crate::model::Pattern::RandWrite,
            block_size: 4096,
            queue_depth: 32,
            queue_depth_requested: 32,
            threads: 1,
            sync: iopath_io::SyncPolicy::End,
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

    /// buffered (150 MiB a repetition, one of 170 MiB), mmap and direct,
    /// each repetition 500 ms.
    pub(crate) fn three_writers() -> Vec<CaseResult> {
        let mut buffered = case("buffered", 150 << 20, 500_000_000, 1);
        // One repetition wrote more than the median.
        buffered.repetitions[3].write_bytes = 170 << 20;
        vec![
            buffered,
            case("mmap", 20 << 20, 500_000_000, 1),
            case("direct", 30 << 20, 500_000_000, 1),
        ]
    }

    pub(crate) fn limits(limit: u64) -> DirtyLimits {
        DirtyLimits {
            limit_bytes: limit,
            background_bytes: limit / 2,
            ratio_pct: Some(20),
            background_ratio_pct: Some(10),
            base_bytes: limit * 5,
            base_is_cgroup: false,
        }
    }

    const MIB: f64 = (1 << 20) as f64;

    #[test]
    fn buffered_writes_under_the_dirty_limit_are_called_a_burst() {
        // buffered wrote 120 MiB in 150 ms (800 MiB/s), direct 30 MiB: the
        // verdict picks buffered, and must say it measured a burst.
        let cases = vec![
            case("buffered", 120 << 20, 150_000_000, 1),
            case("direct", 30 << 20, 150_000_000, 1),
        ];
        let v = crate::analysis::verdict::all(&cases).remove(0);
        assert_eq!(v.pick, "buffered");
        let b = burst(&v, &cases, &limits(4 << 30), Some(1 << 30), None).expect("a burst");
        assert_eq!(b.methods, vec!["buffered".to_string()]);
        assert_eq!((b.written_bytes, b.limit_bytes), (120 << 20, 4 << 30));
        assert_eq!(b.suggested_size_bytes, 8 << 30);
        // The machine's limit: vm.dirty_ratio 20% of 20 GiB available.
        assert_eq!(
            (b.limits.ratio_pct, b.limits.base_bytes),
            (Some(20), 20 << 30)
        );
        assert!(!b.cgroup && !b.unsynced && b.cap_hits.is_none());
        // Random writes to a 1 GiB file under the limit never pass it.
        assert_eq!(b.file_bytes, Some(1 << 30));
        // 8 GiB, twice the limit, takes 11 s at buffered's 800 MiB/s.
        assert_eq!(b.past_limit_bytes, 8 << 30);
        assert_eq!(b.rates.len(), 1);
        assert_eq!(b.rates[0].method, "buffered");
        assert!((b.rates[0].bytes_per_s - 800.0 * MIB).abs() < 1.0);
        assert_eq!(b.rates[0].seconds_past_limit, 11.0);
        // Just above a power of two: the next one.
        let odd = burst(&v, &cases, &limits(4_600_000_000), Some(1 << 30), None);
        assert_eq!(odd.unwrap().suggested_size_bytes, 8 << 30);
        // The run's verdict says it before what to do.
        let mut r = crate::report::testdata::fixture();
        r.cases = cases;
        r.system.fs_type = Some("ext4".into());
        r.system.dirty_limits = Some(limits(4 << 30));
        let v = crate::analysis::verdict::of_run(&r).remove(0);
        let codes: Vec<&str> = v.facts.iter().map(|f| f.code()).collect();
        assert_eq!(codes, ["fastest", "dirty_burst", "use"]);
        assert_eq!(
            v.dirty_burst.as_ref().map(|b| b.written_bytes),
            Some(120 << 20)
        );
    }

    #[test]
    fn writes_past_the_limit_or_direct_only_get_no_caveat() {
        let cases = vec![
            case("buffered", 600 << 20, 1_000_000_000, 1),
            case("direct", 300 << 20, 1_000_000_000, 1),
        ];
        let v = crate::analysis::verdict::all(&cases).remove(0);
        assert!(burst(&v, &cases, &limits(512 << 20), Some(8 << 30), None).is_none());
        let direct = vec![
            case("direct", 30 << 20, 150_000_000, 1),
            case("aio", 30 << 20, 150_000_000, 1),
        ];
        let v = crate::analysis::verdict::all(&direct).remove(0);
        assert!(burst(&v, &direct, &limits(4 << 30), Some(1 << 30), None).is_none());
    }

    /// A hinted page-cache writer (`mmap+random`) and the thread-pool
    /// methods are page-cache writers: before the fix only the exact names
    /// `buffered`, `mmap`, `uring-buffered` were.
    #[test]
    fn hinted_and_pool_writers_get_the_caveat() {
        let cases = vec![
            case("mmap+random", 120 << 20, 150_000_000, 1),
            case("direct", 30 << 20, 150_000_000, 1),
        ];
        let v = crate::analysis::verdict::all(&cases).remove(0);
        let b = burst(&v, &cases, &limits(4 << 30), Some(1 << 30), None).expect("a burst");
        assert_eq!(b.methods, vec!["mmap+random".to_string()]);
        let pool = vec![
            case("threadpool", 120 << 20, 150_000_000, 1),
            case("direct", 30 << 20, 150_000_000, 1),
        ];
        let v = crate::analysis::verdict::all(&pool).remove(0);
        assert!(burst(&v, &pool, &limits(4 << 30), Some(1 << 30), None).is_some());
    }

    pub(crate) fn cap(limit: u64, hits: u64) -> CacheLimitInfo {
        CacheLimitInfo {
            limit_bytes: limit,
            cgroup_version: 1,
            dir: "/sys/fs/cgroup/memory/iopath-1-0".into(),
            peak_bytes: Some(limit),
            limit_hits: Some(hits),
        }
    }

    /// Under a 48 MiB --cache-limit the page cache held at most 48 MiB:
    /// 120 MiB a repetition was not absorbed under the machine's 4 GiB
    /// dirty limit (the review's case), so no caveat.
    #[test]
    fn writes_past_a_cache_limit_are_not_called_absorbed() {
        let cases = vec![
            case("buffered", 120 << 20, 150_000_000, 1),
            case("direct", 30 << 20, 150_000_000, 1),
        ];
        let v = crate::analysis::verdict::all(&cases).remove(0);
        let cap = cap(48 << 20, 7);
        let b = burst(&v, &cases, &limits(4 << 30), Some(1 << 30), Some(&cap));
        assert!(b.is_none());
    }

    /// Writes that fit under the cap's dirty limit are still a burst, said
    /// against the cap (20% of 1 GiB), with the cap's hits.
    #[test]
    fn writes_under_a_cache_limit_are_measured_against_the_cap() {
        let cases = vec![
            case("buffered", 100 << 20, 150_000_000, 1),
            case("direct", 30 << 20, 150_000_000, 1),
        ];
        let v = crate::analysis::verdict::all(&cases).remove(0);
        let b = burst(
            &v,
            &cases,
            &limits(4 << 30),
            Some(1 << 30),
            Some(&cap(1 << 30, 3)),
        )
        .expect("a burst");
        // 204.8 MiB: 20% of the memory cgroup's 1 GiB.
        assert_eq!(b.limit_bytes, (1u64 << 30) / 100 * 20);
        assert!(b.cgroup && b.limits.base_is_cgroup);
        assert_eq!((b.limits.base_bytes, b.cap_hits), (1 << 30, Some(3)));
        // A case marked outside the cgroup keeps the machine's limit.
        let outside: Vec<CaseResult> = cases
            .iter()
            .cloned()
            .map(|mut c| {
                c.cache_limited = Some(false);
                c
            })
            .collect();
        let v = crate::analysis::verdict::all(&outside).remove(0);
        let cap = cap(48 << 20, 3);
        let b = burst(&v, &outside, &limits(4 << 30), Some(1 << 30), Some(&cap));
        let b = b.expect("a burst");
        assert_eq!((b.limit_bytes, b.cgroup), (4 << 30, false));
    }

    /// Acceptance of issue 18 (the default run's randwrite verdict): the
    /// time to write past the limit was given at the median of the
    /// writers' medians (a rate no method had) for twice the bytes it
    /// named, and "at most" was the largest median, not the largest
    /// repetition.
    #[test]
    fn the_time_past_the_limit_names_each_writers_rate_and_at_most_is_every_repetitions() {
        let cases = three_writers();
        let v = crate::analysis::verdict::all(&cases).remove(0);
        let b = burst(&v, &cases, &limits(1 << 30), None, None).expect("a burst");
        assert_eq!(b.written_bytes, 170 << 20);
        // 2 GiB at buffered's 300 MiB/s is 6.8 s, at mmap's 40 MiB/s 51.2 s:
        // the slowest first.
        assert_eq!(b.past_limit_bytes, 2 << 30);
        let at: Vec<(String, f64, f64)> = b
            .rates
            .iter()
            .map(|r| {
                (
                    r.method.to_string(),
                    (r.bytes_per_s / MIB).round(),
                    r.seconds_past_limit,
                )
            })
            .collect();
        assert_eq!(
            at,
            [("mmap".into(), 40.0, 52.0), ("buffered".into(), 300.0, 7.0)]
        );
    }

    /// Review of issue 27: writers were found in the ranking by a prefix
    /// of its names, so two variants of one method (`buffered 4k`,
    /// `buffered 64k`) both took the first such name and its rate was
    /// said twice. Each is now named as the verdict names it.
    #[test]
    fn variants_of_one_method_are_each_their_own_writer() {
        let mut small = case("buffered", 120 << 20, 150_000_000, 1);
        let mut large = case("buffered", 60 << 20, 150_000_000, 1);
        large.block_size = 64 << 10;
        for c in [&mut small, &mut large] {
            c.group = Some("sizes".into());
        }
        let cases = vec![small, large];
        let v = crate::analysis::verdict::all(&cases).remove(0);
        let b = burst(&v, &cases, &limits(4 << 30), Some(1 << 30), None).expect("a burst");
        let named: Vec<String> = b.methods.iter().map(|m| m.to_string()).collect();
        assert_eq!(named, ["buffered 4k Q32T1", "buffered 64k Q32T1"]);
        // Each at its own rate (400 and 800 MiB/s), slowest first.
        let rates: Vec<(String, f64)> = b
            .rates
            .iter()
            .map(|r| (r.method.to_string(), (r.bytes_per_s / MIB).round()))
            .collect();
        assert_eq!(
            rates,
            [
                ("buffered 64k Q32T1".to_string(), 400.0),
                ("buffered 4k Q32T1".to_string(), 800.0)
            ]
        );
    }
}

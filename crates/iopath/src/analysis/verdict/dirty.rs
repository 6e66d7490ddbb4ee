//! The write verdict's caveat: a method that writes through the page cache
//! (buffered, mmap, uring-buffered) and wrote no more in a repetition than
//! the kernel's dirty limit was never made to wait for the device. Its
//! writes went to memory; the flush at the end (or none, with `--sync
//! none`) moved them at once, sorted and merged. That is a burst, often
//! faster than the device takes writes for long, and the default run's
//! randwrite verdict used to pick buffered on 150 ms of it. The verdict
//! keeps its figures and says so, with a `--size` beyond the limit (and a
//! `--time` that writes past it) to measure sustained writes.

use super::{list, Verdict};
use crate::model::units::{fmt_bytes, fmt_size_flag};
use crate::model::Pattern;
use crate::result::records::DirtyBurst;
use crate::result::{CacheLimitInfo, CaseResult, Entrant};
use crate::system::metrics::dirty::DirtyLimits;
use iopath_io::SyncPolicy;

/// Methods whose writes land in the page cache first (and stay there until
/// write-back), hinted or not (`mmap+random` is `mmap`): classified by the
/// method the result's name reads back to. `dontcache` starts write-back at
/// once, so it is not among them.
fn through_page_cache(method: &crate::result::MethodName) -> bool {
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

/// Add the caveat to `v` when its page-cache writers stayed under the
/// limit. `cases` are the run's; `file` the bytes the cases address;
/// `cap` the run's `--cache-limit` cgroup, when it had one.
pub fn caveat(
    v: &mut Verdict,
    cases: &[CaseResult],
    d: &DirtyLimits,
    file: Option<u64>,
    cap: Option<&CacheLimitInfo>,
) {
    let writes = v.job.pattern.writes();
    // O_SYNC/O_DSYNC and fsync-per-write wait for the device on every write.
    if !writes || !matches!(v.job.sync, SyncPolicy::End | SyncPolicy::None) || d.limit_bytes == 0 {
        return;
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
    let limits = capped.map_or(*d, |c| under_cap(d, c.limit_bytes));
    let d = &limits;
    let mut written = 0u64;
    // Each writer's median rate, as the table gives it.
    let mut rates: Vec<(String, f64)> = Vec::new();
    for c in cases
        .iter()
        .filter(|c| in_group(c) && through_page_cache(&c.method))
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
        // Its write rate, the median over its repetitions (as the table's
        // MiB/s is the median of theirs).
        let mut per_rep: Vec<f64> = measured
            .iter()
            .filter(|m| m.duration_ns > 0)
            .map(|m| m.write_bytes as f64 * 1e9 / m.duration_ns as f64)
            .collect();
        let rate = if per_rep.is_empty() {
            s.write_bytes as f64 * 1e9 / s.duration_ns.max(1) as f64
        } else {
            crate::result::median(&mut per_rep)
        };
        rates.push((c.name(), rate));
    }
    // Variants of a group are named as the verdict names them; a writer
    // the verdict does not rank is left out.
    let mut rates: Vec<(Entrant, f64)> = rates
        .into_iter()
        .filter_map(|(m, rate)| {
            v.ranking
                .iter()
                .find(|r| {
                    let n = r.method.to_string();
                    n == m || n.starts_with(&format!("{m} "))
                })
                .map(|r| (r.method.clone(), rate))
        })
        .collect();
    let named: Vec<Entrant> = rates.iter().map(|(m, _)| m.clone()).collect();
    if named.is_empty() {
        return;
    }
    let suggested = (d.limit_bytes.saturating_add(d.limit_bytes / 4)).next_power_of_two();
    let span = file.filter(|&f| v.job.pattern != Pattern::Write && f <= d.limit_bytes);
    let how = if v.job.sync == SyncPolicy::None {
        "and nothing waited for the device"
    } else {
        "and the timed fsync flushed them in one sorted burst"
    };
    // Twice the limit, so that most of a repetition is past it: how long
    // that takes each writer at its own median rate (the slowest and the
    // fastest when there are several).
    let twice = 2.0 * d.limit_bytes as f64;
    let secs_at = |(name, rate): &(Entrant, f64)| {
        let secs = (twice / rate).ceil().max(1.0);
        format!(
            "{} at {name}'s {}/s",
            crate::model::units::fmt_wall(std::time::Duration::from_secs_f64(secs)),
            fmt_bytes(*rate as u64)
        )
    };
    rates.retain(|(_, r)| *r > 0.0);
    rates.sort_by(|a, b| a.1.total_cmp(&b.1));
    let time = match (rates.first(), rates.last()) {
        (Some(slow), Some(fast)) => Some(format!(
            " and a --time long enough to write {}, twice the limit (about {})",
            fmt_bytes(twice as u64),
            if rates.len() == 1 {
                secs_at(slow)
            } else {
                format!("{} to {}", secs_at(fast), secs_at(slow))
            }
        )),
        _ => None,
    };
    let names: Vec<&Entrant> = named.iter().collect();
    let whose = match capped {
        Some(_) => "the --cache-limit cgroup's dirty limit".to_string(),
        None => "this machine's dirty limit".to_string(),
    };
    let hits = match capped.and_then(|c| c.limit_hits) {
        Some(n) if n > 0 => format!("; the cgroup's cap was hit {n} times"),
        _ => String::new(),
    };
    let sentence = format!(
        "Writes: {} wrote at most {} a repetition{}, under {whose} of {} ({}{hits}): the page cache absorbed them {how}, so their speed is a burst's, not sustained writing{}. For sustained writes: --size {} or more{}.",
        list(&names),
        fmt_bytes(written),
        span.map_or(String::new(), |f| format!(" to a {} file", fmt_bytes(f))),
        fmt_bytes(d.limit_bytes),
        d.source(),
        if span.is_some() {
            " (random writes to a file under the limit never pass it)"
        } else {
            ""
        },
        fmt_size_flag(suggested),
        time.unwrap_or_default()
    );
    let at = v
        .text
        .iter()
        .position(|t| t.starts_with('→'))
        .unwrap_or(v.text.len());
    v.text.insert(at, sentence);
    if named.contains(&v.pick) {
        if let Some(last) = v.text.last_mut().filter(|t| t.starts_with('→')) {
            if let Some(stem) = last.strip_suffix('.') {
                *last = format!("{stem} (for bursts under the dirty limit: see above).");
            }
        }
    }
    v.dirty_burst = Some(DirtyBurst {
        methods: named,
        written_bytes: written,
        limit_bytes: d.limit_bytes,
        suggested_size_bytes: suggested,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Measurement, RepetitionControl};

    fn case(method: &str, written: u64, duration_ns: u64, round: u32) -> CaseResult {
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
            }),
            ..Default::default()
        }
    }

    fn limits(limit: u64) -> DirtyLimits {
        DirtyLimits {
            limit_bytes: limit,
            background_bytes: limit / 2,
            ratio_pct: Some(20),
            background_ratio_pct: Some(10),
            base_bytes: limit * 5,
            base_is_cgroup: false,
        }
    }

    #[test]
    fn buffered_writes_under_the_dirty_limit_are_called_a_burst() {
        // buffered wrote 120 MiB in 150 ms (800 MiB/s), direct 30 MiB: the
        // verdict picks buffered, and must say it measured a burst.
        let cases = vec![
            case("buffered", 120 << 20, 150_000_000, 1),
            case("direct", 30 << 20, 150_000_000, 1),
        ];
        let mut v = crate::analysis::verdict::all(&cases).remove(0);
        assert_eq!(v.pick, "buffered");
        caveat(&mut v, &cases, &limits(4 << 30), Some(1 << 30), None);
        let b = v.dirty_burst.as_ref().expect("a burst");
        assert_eq!(b.methods, vec!["buffered".to_string()]);
        assert_eq!((b.written_bytes, b.limit_bytes), (120 << 20, 4 << 30));
        assert_eq!(b.suggested_size_bytes, 8 << 30);
        // Just above a power of two: the next one.
        let mut odd = crate::analysis::verdict::all(&cases).remove(0);
        caveat(
            &mut odd,
            &cases,
            &limits(4_600_000_000),
            Some(1 << 30),
            None,
        );
        assert_eq!(odd.dirty_burst.unwrap().suggested_size_bytes, 8 << 30);
        let text = v.text.join("\n");
        assert!(
            text.contains("dirty limit of 4 GiB (vm.dirty_ratio 20% of 20 GiB available)"),
            "{text}"
        );
        assert!(text.contains("--size 8G or more"), "{text}");
        assert!(
            text.contains("to a 1 GiB file") && text.contains("never pass it"),
            "{text}"
        );
        assert!(
            text.contains(
                "a --time long enough to write 8 GiB, twice the limit (about 11 s at buffered's 800 MiB/s)"
            ),
            "{text}"
        );
        let last = v.text.last().unwrap();
        assert!(
            last.starts_with("→ use buffered") && last.contains("for bursts under the dirty limit"),
            "{last}"
        );
    }

    #[test]
    fn writes_past_the_limit_or_direct_only_get_no_caveat() {
        let cases = vec![
            case("buffered", 600 << 20, 1_000_000_000, 1),
            case("direct", 300 << 20, 1_000_000_000, 1),
        ];
        let mut v = crate::analysis::verdict::all(&cases).remove(0);
        let before = v.text.clone();
        caveat(&mut v, &cases, &limits(512 << 20), Some(8 << 30), None);
        assert_eq!((v.dirty_burst.is_none(), &v.text), (true, &before));
        let direct = vec![
            case("direct", 30 << 20, 150_000_000, 1),
            case("aio", 30 << 20, 150_000_000, 1),
        ];
        let mut v = crate::analysis::verdict::all(&direct).remove(0);
        caveat(&mut v, &direct, &limits(4 << 30), Some(1 << 30), None);
        assert!(v.dirty_burst.is_none());
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
        let mut v = crate::analysis::verdict::all(&cases).remove(0);
        caveat(&mut v, &cases, &limits(4 << 30), Some(1 << 30), None);
        let b = v.dirty_burst.as_ref().expect("a burst");
        assert_eq!(b.methods, vec!["mmap+random".to_string()]);
        let pool = vec![
            case("threadpool", 120 << 20, 150_000_000, 1),
            case("direct", 30 << 20, 150_000_000, 1),
        ];
        let mut v = crate::analysis::verdict::all(&pool).remove(0);
        caveat(&mut v, &pool, &limits(4 << 30), Some(1 << 30), None);
        assert!(v.dirty_burst.is_some());
    }

    fn cap(limit: u64, hits: u64) -> CacheLimitInfo {
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
        let mut v = crate::analysis::verdict::all(&cases).remove(0);
        let before = v.text.clone();
        caveat(
            &mut v,
            &cases,
            &limits(4 << 30),
            Some(1 << 30),
            Some(&cap(48 << 20, 7)),
        );
        assert_eq!((v.dirty_burst.is_none(), &v.text), (true, &before));
        let text = v.text.join("\n");
        assert!(!text.contains("4 GiB"), "{text}");
    }

    /// Writes that fit under the cap's dirty limit are still a burst, said
    /// against the cap (20% of 1 GiB), with the cap's hits.
    #[test]
    fn writes_under_a_cache_limit_are_measured_against_the_cap() {
        let cases = vec![
            case("buffered", 100 << 20, 150_000_000, 1),
            case("direct", 30 << 20, 150_000_000, 1),
        ];
        let mut v = crate::analysis::verdict::all(&cases).remove(0);
        caveat(
            &mut v,
            &cases,
            &limits(4 << 30),
            Some(1 << 30),
            Some(&cap(1 << 30, 3)),
        );
        let b = v.dirty_burst.as_ref().expect("a burst");
        assert_eq!(b.limit_bytes, (1u64 << 30) / 100 * 20);
        let text = v.text.join("\n");
        assert!(
            text.contains("under the --cache-limit cgroup's dirty limit of 204.8 MiB"),
            "{text}"
        );
        assert!(text.contains("(the memory cgroup's limit)"), "{text}");
        assert!(text.contains("cap was hit 3 times"), "{text}");
        assert!(!text.contains("this machine's dirty limit"), "{text}");
        // A case marked outside the cgroup keeps the machine's limit.
        let outside: Vec<CaseResult> = cases
            .iter()
            .cloned()
            .map(|mut c| {
                c.cache_limited = Some(false);
                c
            })
            .collect();
        let mut v = crate::analysis::verdict::all(&outside).remove(0);
        caveat(
            &mut v,
            &outside,
            &limits(4 << 30),
            Some(1 << 30),
            Some(&cap(48 << 20, 3)),
        );
        assert_eq!(v.dirty_burst.as_ref().unwrap().limit_bytes, 4 << 30);
    }

    /// Acceptance of issue 18 (the default run's randwrite verdict): the
    /// time to write past the limit was given at the median of the
    /// writers' medians (a rate no method had) for twice the bytes it
    /// named, and "at most" was the largest median, not the largest
    /// repetition.
    #[test]
    fn the_time_past_the_limit_names_each_writers_rate_and_at_most_is_every_repetitions() {
        let mut buffered = case("buffered", 150 << 20, 500_000_000, 1);
        // One repetition wrote more than the median.
        buffered.repetitions[3].write_bytes = 170 << 20;
        let cases = vec![
            buffered,
            case("mmap", 20 << 20, 500_000_000, 1),
            case("direct", 30 << 20, 500_000_000, 1),
        ];
        let mut v = crate::analysis::verdict::all(&cases).remove(0);
        caveat(&mut v, &cases, &limits(1 << 30), None, None);
        let text = v.text.join("\n");
        assert!(
            text.contains("wrote at most 170 MiB a repetition"),
            "{text}"
        );
        assert_eq!(v.dirty_burst.as_ref().unwrap().written_bytes, 170 << 20);
        // 2 GiB at buffered's 300 MiB/s is 6.8 s, at mmap's 40 MiB/s 51.2 s.
        assert!(
            text.contains(
                "a --time long enough to write 2 GiB, twice the limit (about 7 s at buffered's 300 MiB/s to 52 s at mmap's 40 MiB/s)"
            ),
            "{text}"
        );
    }
}

//! `--neighbour`: what each method did to the reader next to it, per job:
//! the neighbour's p50/p99 and hit ratio alone (before) and beside the
//! method (during), medians over the measured repetitions, and the
//! gentlest and the harshest method (`report::text::verdict` words them).
//!
//! The neighbour's p99 moves between windows even alone, so a method is
//! said to hurt it only when its during/before ratio exceeds the noise:
//! the spread (max over min) of the "before" p99 across every repetition
//! of every case of the job. Hit ratios are unknown (`?`) where the file
//! system refuses `RWF_NOWAIT` (tmpfs).

use crate::result::neighbour::NeighbourWindow;
use crate::result::CaseResult;
use crate::stats::median_sorted;

/// Median of `xs` (0 when empty).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    median_sorted(&xs)
}

/// One method's effect on the neighbour.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub method: String,
    pub before_p50: f64,
    pub before_p99: f64,
    /// `None` when any window's hits are unknown.
    pub before_hit: Option<f64>,
    pub during_p50: f64,
    pub during_p99: f64,
    pub during_hit: Option<f64>,
}

impl Effect {
    pub fn of(c: &CaseResult) -> Option<Effect> {
        if c.neighbour.is_empty() {
            return None;
        }
        let window = |during: bool| {
            c.neighbour
                .iter()
                .map(move |r| if during { r.during } else { r.before })
        };
        let m = |f: &dyn Fn(&NeighbourWindow) -> f64, during: bool| {
            median(window(during).map(|w| f(&w)).collect())
        };
        let hit = |during: bool| {
            window(during)
                .map(|w| w.hit_ratio())
                .collect::<Option<Vec<f64>>>()
                .map(median)
        };
        Some(Effect {
            method: c.name(),
            before_p50: m(&|w| w.p50_ns as f64, false),
            before_p99: m(&|w| w.p99_ns as f64, false),
            before_hit: hit(false),
            during_p50: m(&|w| w.p50_ns as f64, true),
            during_p99: m(&|w| w.p99_ns as f64, true),
            during_hit: hit(true),
        })
    }

    /// During over before, of the p99.
    pub fn p99_ratio(&self) -> f64 {
        self.during_p99 / self.before_p99.max(1.0)
    }
}

/// The noise floor of `cases` (one job's): the largest "before" p99 over
/// the smallest, across all their repetitions; 1 when there is none.
pub fn noise(cases: &[&CaseResult]) -> f64 {
    let p99s = cases
        .iter()
        .flat_map(|c| c.neighbour.iter().map(|r| r.before.p99_ns as f64));
    let (lo, hi) = p99s.fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p), hi.max(p))
    });
    if hi <= 0.0 || !lo.is_finite() {
        1.0
    } else {
        hi / lo.max(1.0)
    }
}

/// The neighbour beside one job: each method's effect, the noise floor
/// ([`noise`]), and the gentlest and harshest methods by p99.
#[derive(Debug, Clone, PartialEq)]
pub struct NeighbourJob {
    /// The job's label, as the cases group by it.
    pub job: String,
    pub effects: Vec<Effect>,
    pub noise: f64,
}

impl NeighbourJob {
    /// The method that hurt the neighbour least, and the one that hurt it
    /// most when there is another.
    pub fn extremes(&self) -> Option<(&Effect, Option<&Effect>)> {
        let by = |a: &&Effect, b: &&Effect| a.p99_ratio().total_cmp(&b.p99_ratio());
        let least = self.effects.iter().min_by(by)?;
        let most = self.effects.iter().max_by(by)?;
        let other = (self.effects.len() >= 2 && least.method != most.method).then_some(most);
        Some((least, other))
    }
}

impl Effect {
    /// True when its p99 ratio is within the job's `noise`.
    pub fn within(&self, noise: f64) -> bool {
        self.p99_ratio() <= noise
    }
}

/// The jobs measured with a neighbour, in the order they first come
/// (none without).
pub fn jobs(cases: &[CaseResult]) -> Vec<NeighbourJob> {
    let mut jobs: Vec<String> = Vec::new();
    for c in cases.iter().filter(|c| !c.neighbour.is_empty()) {
        let j = c.job().label();
        if !jobs.contains(&j) {
            jobs.push(j);
        }
    }
    jobs.into_iter()
        .map(|job| {
            let of_job: Vec<&CaseResult> =
                cases.iter().filter(|c| c.job().label() == job).collect();
            NeighbourJob {
                effects: of_job.iter().copied().filter_map(Effect::of).collect(),
                noise: noise(&of_job),
                job,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::result::neighbour::NeighbourRep;

    fn w(p99: u64, hits: Option<u64>) -> NeighbourWindow {
        NeighbourWindow {
            reads: 100,
            hits,
            p50_ns: p99 / 4,
            p99_ns: p99,
        }
    }

    /// A case whose repetitions saw these (before p99, during p99, during
    /// hits) windows.
    pub(crate) fn case(method: &str, reps: &[(u64, u64, Option<u64>)]) -> CaseResult {
        CaseResult {
            method: method.into(),
            pattern: crate::model::Pattern::Write,
            block_size: 1 << 20,
            neighbour: reps
                .iter()
                .map(|&(b, d, h)| NeighbourRep {
                    before: w(b, h.map(|_| 100)),
                    during: w(d, h),
                })
                .collect(),
            ..CaseResult::default()
        }
    }

    /// The p99 ratio of each extreme, and whether it is within noise.
    fn extremes(cases: &[CaseResult]) -> Vec<(String, f64, bool)> {
        let j = jobs(cases).remove(0);
        let (least, most) = j.extremes().unwrap();
        std::iter::once(least)
            .chain(most)
            .map(|e| {
                (
                    e.method.clone(),
                    (e.p99_ratio() * 100.0).round() / 100.0,
                    e.within(j.noise),
                )
            })
            .collect()
    }

    #[test]
    fn the_gentlest_and_the_harshest_method_are_named() {
        let cases = [
            case("buffered", &[(10_000, 80_000, Some(60))]),
            case("dontcache", &[(10_000, 10_300, Some(100))]),
        ];
        // Before p99s all alike: the noise floor is 1x, 1.03x is over it.
        let j = jobs(&cases);
        assert_eq!(j.len(), 1);
        assert!(j[0].job.starts_with("write 1M"), "{}", j[0].job);
        assert_eq!(j[0].noise, 1.0);
        assert_eq!(
            extremes(&cases),
            [
                ("dontcache".to_string(), 1.03, false),
                ("buffered".to_string(), 8.0, false)
            ]
        );
        let buffered = &j[0].effects[0];
        assert_eq!(
            (buffered.before_hit, buffered.during_hit),
            (Some(1.0), Some(0.6))
        );
    }

    /// Review of issue 17: the verdict ranked by the ratio of median p99s
    /// with no noise floor, so a method could "hurt" the neighbour by less
    /// than the neighbour's own p99 moves alone.
    #[test]
    fn a_ratio_within_the_before_spread_is_within_noise() {
        let cases = [
            // Before p99 ranges 10 us..15 us across all repetitions: 1.5x.
            case(
                "direct",
                &[(10_000, 13_000, Some(100)), (15_000, 17_000, Some(100))],
            ),
            case(
                "buffered",
                &[(12_000, 60_000, Some(40)), (12_000, 66_000, Some(50))],
            ),
        ];
        let refs: Vec<&CaseResult> = cases.iter().collect();
        assert!((noise(&refs) - 1.5).abs() < 1e-9);
        // direct: median during 15 us over median before 12.5 us = 1.2x.
        assert_eq!(
            extremes(&cases),
            [
                ("direct".to_string(), 1.2, true),
                ("buffered".to_string(), 5.25, false)
            ]
        );
        let b = Effect::of(&cases[1]).unwrap();
        assert_eq!((b.before_hit, b.during_hit), (Some(1.0), Some(0.45)));
    }

    #[test]
    fn unknown_hits_are_none() {
        let cases = [case("buffered", &[(10_000, 30_000, None)])];
        let e = Effect::of(&cases[0]).unwrap();
        assert_eq!((e.before_hit, e.during_hit), (None, None));
        assert_eq!(extremes(&cases).len(), 1);
    }

    #[test]
    fn no_neighbour_no_job() {
        let mut c = case("buffered", &[(1, 1, Some(1))]);
        c.neighbour.clear();
        assert!(jobs(&[c]).is_empty());
    }
}

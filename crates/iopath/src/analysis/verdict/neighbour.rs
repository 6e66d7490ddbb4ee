//! `--neighbour`: what each method did to the reader next to it, per job:
//! the neighbour's p50/p99 and hit ratio alone (before) and beside the
//! method (during), medians over the measured repetitions, and one
//! sentence naming the gentlest and the harshest method.
//!
//! The neighbour's p99 moves between windows even alone, so a method is
//! said to hurt it only when its during/before ratio exceeds the noise:
//! the spread (max over min) of the "before" p99 across every repetition
//! of every case of the job. Hit ratios are unknown (`?`) where the file
//! system refuses `RWF_NOWAIT` (tmpfs).

use crate::model::units::fmt_ns;
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

/// A hit ratio as a percentage, `?` when unknown.
fn pct(h: Option<f64>) -> String {
    h.map_or("?".into(), |h| format!("{:.0}%", h * 100.0))
}

/// The sentence: the method that hurt the neighbour least and the one
/// that hurt it most, each judged against `noise` ([`noise`]), with their
/// hit ratios before and during.
pub fn sentence(effects: &[Effect], noise: f64) -> Option<String> {
    let least = effects
        .iter()
        .min_by(|a, b| a.p99_ratio().total_cmp(&b.p99_ratio()))?;
    let most = effects
        .iter()
        .max_by(|a, b| a.p99_ratio().total_cmp(&b.p99_ratio()))?;
    let judge = |e: &Effect| {
        let r = e.p99_ratio();
        let what = if r <= noise {
            format!("keeps the neighbour's p99 within noise ({r:.2}x)")
        } else {
            format!("raises the neighbour's p99 {r:.2}x")
        };
        format!(
            "{} {what} (hit ratio {} → {})",
            e.method,
            pct(e.before_hit),
            pct(e.during_hit)
        )
    };
    let floor = format!("noise: the neighbour's p99 alone varied {noise:.2}x across repetitions");
    if effects.len() < 2 || least.method == most.method {
        return Some(format!("{}; {floor}.", judge(least)));
    }
    Some(format!("{}; {}; {floor}.", judge(least), judge(most)))
}

/// The text block for cases measured with a neighbour (empty without).
pub fn text(cases: &[CaseResult]) -> String {
    let mut out = String::new();
    let mut jobs: Vec<String> = Vec::new();
    for c in cases.iter().filter(|c| !c.neighbour.is_empty()) {
        let j = c.job().label();
        if !jobs.contains(&j) {
            jobs.push(j);
        }
    }
    for j in jobs {
        let of_job: Vec<&CaseResult> = cases.iter().filter(|c| c.job().label() == j).collect();
        let effects: Vec<Effect> = of_job.iter().copied().filter_map(Effect::of).collect();
        out.push_str(&format!(
            "\nneighbour (random 4 KiB cached reads) beside {j}:\n"
        ));
        for e in &effects {
            out.push_str(&format!(
                "  {:<18} before p50 {} p99 {} hit {}   during p50 {} p99 {} ({:.1}x) hit {}\n",
                e.method,
                fmt_ns(e.before_p50 as u64),
                fmt_ns(e.before_p99 as u64),
                pct(e.before_hit),
                fmt_ns(e.during_p50 as u64),
                fmt_ns(e.during_p99 as u64),
                e.p99_ratio(),
                pct(e.during_hit)
            ));
        }
        if let Some(s) = sentence(&effects, noise(&of_job)) {
            out.push_str(&format!("  → {s}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
    fn case(method: &str, reps: &[(u64, u64, Option<u64>)]) -> CaseResult {
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

    #[test]
    fn the_sentence_names_the_gentlest_and_the_harshest_method() {
        let cases = [
            case("buffered", &[(10_000, 80_000, Some(60))]),
            case("dontcache", &[(10_000, 10_300, Some(100))]),
        ];
        // Before p99s all alike: the noise floor is 1x, 1.03x is over it.
        let t = text(&cases);
        assert!(
            t.contains("neighbour (random 4 KiB cached reads) beside write 1M"),
            "{t}"
        );
        let s = t.lines().find(|l| l.contains('→')).unwrap();
        assert!(
            s.contains("dontcache raises the neighbour's p99 1.03x (hit ratio 100% → 100%)"),
            "{s}"
        );
        assert!(
            s.contains("buffered raises the neighbour's p99 8.00x (hit ratio 100% → 60%)"),
            "{s}"
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
        let t = text(&cases);
        let s = t.lines().find(|l| l.contains('→')).unwrap();
        // direct: median during 15 us over median before 12.5 us = 1.2x.
        assert!(
            s.contains("direct keeps the neighbour's p99 within noise (1.20x)"),
            "{s}"
        );
        assert!(
            s.contains("buffered raises the neighbour's p99 5.25x"),
            "{s}"
        );
        assert!(s.contains("(hit ratio 100% → 45%)"), "{s}");
        assert!(s.contains("varied 1.50x"), "{s}");
    }

    #[test]
    fn unknown_hits_show_as_a_question_mark() {
        let cases = [case("buffered", &[(10_000, 30_000, None)])];
        let e = Effect::of(&cases[0]).unwrap();
        assert_eq!((e.before_hit, e.during_hit), (None, None));
        let t = text(&cases);
        assert!(t.contains("hit ?   during"), "{t}");
        assert!(t.contains("(hit ratio ? → ?)"), "{t}");
    }

    #[test]
    fn no_neighbour_no_text() {
        let mut c = case("buffered", &[(1, 1, Some(1))]);
        c.neighbour.clear();
        assert_eq!(text(&[c]), "");
    }
}

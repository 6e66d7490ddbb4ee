//! The statistics of `iopath compare`: how B's throughput compares with
//! A's, as a ratio B/A with a 95% interval, and what that interval says.
//!
//! Two tests, chosen by how many runs each side has (docs/compare.md):
//!
//! - **Between runs** ([`between_runs`]): several runs on at least one side.
//!   Each run's median throughput of a case is one observation; the
//!   interval is Welch's t interval on the logarithms of those medians,
//!   exponentiated: an interval for the ratio of the geometric means B/A.
//!   Run-to-run drift (other disk traffic, device state, the host) is in
//!   the spread of the observations, so it is in the interval. With one run
//!   on one side, the spread comes from the other side alone (pooled, `n-1`
//!   degrees of freedom).
//! - **Within one run, widened by a drift allowance** ([`within_run`]): one
//!   run per side. The repetitions of one run say nothing about drift
//!   between runs, so the repetitions' bootstrap interval is widened by
//!   the allowance `d` on the log scale: `[lo / (1 + d), hi * (1 + d)]`, and
//!   the label still needs the repetitions' own test (`stats::compare`'s
//!   `distinct`).
//!
//! Either way a change is `slower` only when the whole interval is below
//! 1 and `faster` only when it is above 1. An interval that holds 1 is
//! `no change` only when it also rules out a change of the equivalence
//! margin both ways (inside `[1 - m, 1 / (1 - m)]`, `m` = `--fail-above`,
//! else [`super::DEFAULT_NO_CHANGE_PCT`]); otherwise it is `inconclusive`:
//! the data hold both a change and none. `--fail-above PCT` needs the
//! interval's upper bound (the side nearest to no change) below
//! `1 - PCT/100`.

use serde::{Deserialize, Serialize};

use crate::stats;

/// Which test a compared case got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Several runs on a side: each run's median is one observation.
    BetweenRuns,
    /// One run per side: the repetitions' interval widened by the drift
    /// allowance.
    WithinRun,
}

/// Whether B is faster, slower, not really different, or cannot be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Label {
    #[serde(rename = "faster")]
    Faster,
    #[serde(rename = "slower")]
    Slower,
    /// The interval holds 1 and lies within the equivalence margin both
    /// ways.
    #[serde(rename = "no change")]
    NoChange,
    /// The interval holds 1 but reaches past the equivalence margin: a
    /// change of that size is not ruled out.
    #[serde(rename = "inconclusive")]
    Inconclusive,
}

/// The outcome of either test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub test: Test,
    /// B/A: the ratio of the geometric means of the run medians (between
    /// runs), or median(B) / median(A) of the repetitions (within a run).
    pub ratio: f64,
    /// The 95% interval the label and `--fail-above` use (widened by the
    /// drift allowance within a run).
    pub ci95: [f64; 2],
    pub label: Label,
    /// Within a run: the repetitions are apart but too few to count
    /// (`stats::Comparison::undersampled`).
    pub undersampled: bool,
}

/// The 97.5% quantile of Student's t at a real number of degrees of
/// freedom (Welch's are fractional): [`stats::t975`] at the integers on
/// either side, its logarithm interpolated linearly in 1/df (within 3% of
/// the exact quantile between 1 and 2, within 0.5% from 2 up, on the
/// high, conservative side). Below 1, df 1.
pub fn t975_real(df: f64) -> f64 {
    if df.is_nan() {
        return f64::INFINITY;
    }
    let df = df.max(1.0);
    let lo = df.floor();
    if df - lo < 1e-9 || lo >= 1e6 {
        return stats::t975(lo as usize);
    }
    let hi = lo + 1.0;
    let w = (1.0 / lo - 1.0 / df) / (1.0 / lo - 1.0 / hi);
    let (tl, th) = (stats::t975(lo as usize).ln(), stats::t975(hi as usize).ln());
    (tl + (th - tl) * w).exp()
}

/// Label of an interval of B/A: slower when all of it is below 1, faster
/// when all of it is above 1; otherwise no change when it lies within the
/// equivalence margin `margin` (a fraction: 0.05 for 5%) both ways, and
/// inconclusive when it does not.
fn label_of(ci: [f64; 2], margin: f64) -> Label {
    if ci[1] < 1.0 {
        Label::Slower
    } else if ci[0] > 1.0 {
        Label::Faster
    } else {
        unchanged_or_inconclusive(ci, margin)
    }
}

/// An interval that holds 1 (or a test that found no difference): `no
/// change` only when the interval rules out a change of `margin` either
/// way (`[1 - margin, 1 / (1 - margin)]`, symmetric on the log scale).
fn unchanged_or_inconclusive(ci: [f64; 2], margin: f64) -> Label {
    let lo = 1.0 - margin;
    if ci[0] >= lo && ci[1] <= 1.0 / lo {
        Label::NoChange
    } else {
        Label::Inconclusive
    }
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = if x.len() > 1 {
        x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

/// Welch's t interval for the difference of the means of two samples (of
/// logarithms); with one observation on a side, the other side's variance
/// stands for both (`n - 1` degrees of freedom). `(difference, half-width,
/// df)`; `None` with fewer than two observations on both sides.
pub fn welch(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.is_empty() || b.is_empty() || (a.len() < 2 && b.len() < 2) {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let d = mb - ma;
    let (se2, df) = if a.len() >= 2 && b.len() >= 2 {
        let (qa, qb) = (va / na, vb / nb);
        let se2 = qa + qb;
        let df = if se2 > 0.0 {
            se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0))
        } else {
            na + nb - 2.0
        };
        (se2, df)
    } else {
        // One run on one side: its variance is unknown; the other side's
        // runs measure the drift of the same machine.
        let (v, n_multi) = if a.len() >= 2 { (va, na) } else { (vb, nb) };
        (v * (1.0 / na + 1.0 / nb), n_multi - 1.0)
    };
    Some((d, t975_real(df) * se2.sqrt(), df))
}

/// Between runs: `a` and `b` are the run medians of one case (positive),
/// at least two on one side and one on the other; `margin` is the
/// equivalence margin of `no change` (a fraction).
pub fn between_runs(a: &[f64], b: &[f64], margin: f64) -> Option<Outcome> {
    if a.iter().chain(b).any(|&x| x <= 0.0 || !x.is_finite()) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let (d, half, _) = welch(&la, &lb)?;
    let ci95 = [(d - half).exp(), (d + half).exp()];
    Some(Outcome {
        test: Test::BetweenRuns,
        ratio: d.exp(),
        ci95,
        label: label_of(ci95, margin),
        undersampled: false,
    })
}

/// Widen an interval of a ratio by a drift allowance `drift` (a fraction:
/// 0.08 for 8%) on the log scale: `[lo / (1 + drift), hi * (1 + drift)]`.
pub fn widen(ci: [f64; 2], drift: f64) -> [f64; 2] {
    [ci[0] / (1.0 + drift), ci[1] * (1.0 + drift)]
}

/// Within one run per side: `a` and `b` are the repetitions' throughputs.
/// The bootstrap interval of `stats::compare` widened by `drift`; faster
/// or slower needs both the widened interval clear of 1 and the
/// repetitions' own test (`distinct`); otherwise `no change` only when
/// the widened interval lies within `margin` both ways, else
/// `inconclusive`.
pub fn within_run(a: &[f64], b: &[f64], drift: f64, margin: f64) -> Option<Outcome> {
    let c = stats::compare(a, b)?;
    let ci95 = widen(c.ratio_ci95, drift);
    let label = if c.distinct {
        label_of(ci95, margin)
    } else {
        unchanged_or_inconclusive(ci95, margin)
    };
    Some(Outcome {
        test: Test::WithinRun,
        ratio: c.ratio,
        ci95,
        label,
        undersampled: c.undersampled,
    })
}

/// The `--fail-above PCT` rule on an outcome's figures: labelled slower,
/// and the interval's upper bound (the side nearest to no change) is more
/// than PCT% below 1.
pub fn beyond(label: Label, ci95: [f64; 2], pct: f64) -> bool {
    label == Label::Slower && ci95[1] < 1.0 - pct / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_io::data::Rng;

    /// The default equivalence margin, as a fraction.
    const M: f64 = crate::analysis::compare::DEFAULT_NO_CHANGE_PCT / 100.0;

    /// A call: faster or slower (not no change, not inconclusive).
    fn called(o: Outcome) -> bool {
        matches!(o.label, Label::Faster | Label::Slower)
    }

    /// A standard normal draw (Box-Muller).
    fn normal(rng: &mut Rng) -> f64 {
        let u = |r: &mut Rng| ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (u1, u2) = (u(rng), u(rng));
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    #[test]
    fn t_quantiles_at_real_degrees_of_freedom() {
        assert_eq!(t975_real(1.0), 12.706);
        assert_eq!(t975_real(4.0), 2.776);
        assert_eq!(t975_real(0.3), 12.706, "below 1: df 1");
        assert!(t975_real(f64::NAN).is_infinite());
        // Exact quantiles (qt(0.975, df), from the t density integrated
        // numerically): within 3%, never below.
        for (df, exact) in [(1.5, 6.0167), (2.5, 3.5747), (4.7, 2.6207), (9.3, 2.2511)] {
            let got = t975_real(df);
            assert!(
                got >= exact - 1e-3 && (got - exact) / exact < 0.03,
                "df {df}: {got} vs {exact}"
            );
        }
        // Monotone between the table's integers.
        let mut last = f64::INFINITY;
        for i in 10..400 {
            let t = t975_real(i as f64 / 10.0);
            assert!(t <= last, "df {}", i as f64 / 10.0);
            last = t;
        }
    }

    #[test]
    fn welch_matches_a_hand_computed_example() {
        // a: mean 2, var 1; b: mean 5, var 4; n 3 each.
        let (d, half, df) = welch(&[1.0, 2.0, 3.0], &[3.0, 5.0, 7.0]).unwrap();
        assert!((d - 3.0).abs() < 1e-12);
        // se^2 = 1/3 + 4/3 = 5/3; df = (5/3)^2 / ((1/9)/2 + (16/9)/2) = 2.941
        assert!((df - 2.941_176).abs() < 1e-5, "{df}");
        let se = (5.0f64 / 3.0).sqrt();
        assert!((half - t975_real(df) * se).abs() < 1e-12);
        // One observation on a side: the other side's variance, n - 1 df.
        let (d, half, df) = welch(&[1.0, 2.0, 3.0], &[5.0]).unwrap();
        assert!((d - 3.0).abs() < 1e-12);
        assert_eq!(df, 2.0);
        assert!((half - 4.303 * (1.0f64 * (1.0 / 3.0 + 1.0)).sqrt()).abs() < 1e-9);
        assert!(welch(&[1.0], &[2.0]).is_none());
        assert!(welch(&[], &[2.0, 3.0]).is_none());
    }

    #[test]
    fn between_runs_gives_a_ratio_interval_and_a_label() {
        let a = [100.0, 104.0, 97.0];
        let slower = between_runs(&a, &[70.0, 72.0, 69.0], M).unwrap();
        assert_eq!(slower.test, Test::BetweenRuns);
        assert_eq!(slower.label, Label::Slower);
        assert!(slower.ci95[0] < slower.ratio && slower.ratio < slower.ci95[1]);
        assert!(slower.ci95[1] < 0.8, "{:?}", slower.ci95);
        assert!(beyond(slower.label, slower.ci95, 20.0));
        assert!(
            !beyond(slower.label, slower.ci95, 25.0),
            "{:?}",
            slower.ci95
        );
        // Within a few percent, but three runs a side cannot rule out 5%:
        // inconclusive; a margin of 20% it does rule out.
        let same = between_runs(&a, &[101.0, 99.0, 103.0], M).unwrap();
        assert_eq!(same.label, Label::Inconclusive, "{:?}", same.ci95);
        let same = between_runs(&a, &[101.0, 99.0, 103.0], 0.2).unwrap();
        assert_eq!(same.label, Label::NoChange, "{:?}", same.ci95);
        let faster = between_runs(&a, &[150.0, 155.0], M).unwrap();
        assert_eq!(faster.label, Label::Faster);
        assert!(!beyond(faster.label, faster.ci95, 1.0));
        // Two runs a side 3% apart in drift: the interval is wide (df ~ 1-2)
        // and holds changes far past 5% either way: it cannot tell.
        let wide = between_runs(&[100.0, 103.0], &[95.0, 98.0], M).unwrap();
        assert_eq!(wide.label, Label::Inconclusive, "{:?}", wide.ci95);
        assert!(between_runs(&[100.0], &[90.0], M).is_none());
        assert!(between_runs(&[100.0, 0.0], &[90.0], M).is_none());
    }

    #[test]
    fn within_run_widens_by_the_drift_allowance() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.4];
        let b: Vec<f64> = a.iter().map(|x| x * 0.9).collect();
        let bare = within_run(&a, &b, 0.0, M).unwrap();
        assert_eq!(bare.label, Label::Slower);
        let w = within_run(&a, &b, 0.08, M).unwrap();
        assert!((w.ci95[0] - bare.ci95[0] / 1.08).abs() < 1e-12);
        assert!((w.ci95[1] - bare.ci95[1] * 1.08).abs() < 1e-12);
        assert_eq!(w.ratio, bare.ratio);
        assert_eq!(w.label, Label::Slower, "10% beyond 8% of drift");
        let w = within_run(&a, &b, 0.12, M).unwrap();
        assert_eq!(
            w.label,
            Label::Inconclusive,
            "10% is within 12% of drift: neither a call nor no change"
        );
        // Apart but too few repetitions: never a call, and never no change.
        let few = within_run(&[100.0, 101.0], &[50.0, 51.0], 0.0, M).unwrap();
        assert_eq!(few.label, Label::Inconclusive);
        assert!(few.undersampled);
    }

    /// Simulated runs of one case: each run's log median is the true log
    /// ratio (on B) plus a random per-run offset (drift) and the noise of
    /// a median of repetitions. Returns (coverage of the true ratio, share
    /// labelled slower, share failing `--fail-above 5`).
    fn simulate(
        seed: u64,
        na: usize,
        nb: usize,
        true_ratio: f64,
        drift_sd: [f64; 2],
    ) -> (f64, f64, f64) {
        const TRIALS: usize = 4000;
        let mut rng = Rng::new(seed);
        let (mut covered, mut slower, mut fail) = (0, 0, 0);
        for _ in 0..TRIALS {
            let mut side = |n: usize, sd: f64, f: f64| -> Vec<f64> {
                (0..n)
                    .map(|_| 1000.0 * f * (sd * normal(&mut rng)).exp())
                    .collect()
            };
            let a = side(na, drift_sd[0], 1.0);
            let b = side(nb, drift_sd[1], true_ratio);
            let o = between_runs(&a, &b, M).unwrap();
            if o.ci95[0] <= true_ratio && true_ratio <= o.ci95[1] {
                covered += 1;
            }
            slower += usize::from(o.label == Label::Slower);
            fail += usize::from(beyond(o.label, o.ci95, 5.0));
        }
        let share = |k: usize| k as f64 / TRIALS as f64;
        (share(covered), share(slower), share(fail))
    }

    #[test]
    fn between_runs_covers_the_true_ratio_about_95_percent_of_the_time() {
        // 3.5% run-to-run drift (per-run sd of the log median), equal on
        // both sides, 2 to 10 runs a side; and unequal drift (2% vs 6%).
        for (i, &(na, nb, sd)) in [
            (2, 2, [0.035, 0.035]),
            (3, 3, [0.035, 0.035]),
            (4, 4, [0.035, 0.035]),
            (6, 6, [0.035, 0.035]),
            (10, 10, [0.035, 0.035]),
            (3, 5, [0.02, 0.06]),
            (6, 2, [0.06, 0.02]),
            (5, 1, [0.035, 0.035]),
        ]
        .iter()
        .enumerate()
        {
            for (j, &r) in [1.0, 0.9, 0.6].iter().enumerate() {
                let (cov, slower, fail) = simulate(42 + (i * 10 + j) as u64, na, nb, r, sd);
                // Welch is exact for normal data with equal variances and
                // slightly conservative otherwise: about 95%, never much less.
                assert!(
                    (0.935..=0.995).contains(&cov),
                    "{na} vs {nb} runs, sd {sd:?}, ratio {r}: coverage {cov}"
                );
                if r == 1.0 {
                    // Identical configurations: called slower at most 2.5%
                    // (one tail), failing --fail-above 5 even less.
                    assert!(slower <= 0.035, "{na} vs {nb}: slower {slower}");
                    assert!(fail <= slower, "{na} vs {nb}: fail {fail}");
                }
            }
        }
        // A 40% slowdown with 3 runs a side is caught every time.
        let (_, slower, fail) = simulate(7, 3, 3, 0.6, [0.035, 0.035]);
        assert!(slower > 0.999 && fail > 0.99, "{slower} {fail}");
    }

    #[test]
    fn within_a_run_drift_is_credited_to_the_change_unless_allowed_for() {
        // One run per side, 10 repetitions each with 2% noise, and a 3%
        // per-run offset: identical configurations. Without an allowance the
        // repetitions' test calls a change far more often than 5% (the
        // review's finding); with the allowance sized to the drift (the
        // 95th percentile of |log ratio| between two runs: 1.96 * sqrt(2) *
        // 3% = 8.3%) it calls one at most about 5% of the time.
        const TRIALS: usize = 400;
        let mut rng = Rng::new(2026);
        let (mut bare, mut allowed) = (0, 0);
        for _ in 0..TRIALS {
            let mut run = || -> Vec<f64> {
                let offset = 0.03 * normal(&mut rng);
                (0..10)
                    .map(|_| 1000.0 * (offset + 0.02 * normal(&mut rng)).exp())
                    .collect()
            };
            let (a, b) = (run(), run());
            bare += usize::from(called(within_run(&a, &b, 0.0, M).unwrap()));
            allowed += usize::from(called(within_run(&a, &b, 0.083, M).unwrap()));
        }
        let share = |k: usize| k as f64 / TRIALS as f64;
        assert!(share(bare) > 0.2, "without allowance: {}", share(bare));
        assert!(share(allowed) <= 0.05, "with allowance: {}", share(allowed));
    }

    #[test]
    fn no_change_only_where_the_interval_rules_out_the_margin_both_ways() {
        // Inside [0.95, 1/0.95]: no change.
        assert_eq!(label_of([0.97, 1.04], 0.05), Label::NoChange);
        assert_eq!(label_of([0.95, 1.0 / 0.95], 0.05), Label::NoChange);
        // Holds 1 but reaches past the margin on either side: inconclusive.
        assert_eq!(label_of([0.58, 1.2], 0.05), Label::Inconclusive);
        assert_eq!(label_of([0.99, 1.06], 0.05), Label::Inconclusive);
        assert_eq!(label_of([0.94, 1.01], 0.05), Label::Inconclusive);
        // A wider margin (--fail-above 50) rules the same interval unchanged.
        assert_eq!(label_of([0.58, 1.2], 0.5), Label::NoChange);
        // Clear of 1: a call, whatever the margin.
        assert_eq!(label_of([0.5, 0.9], 0.05), Label::Slower);
        assert_eq!(label_of([1.01, 1.3], 0.5), Label::Faster);
    }

    #[test]
    fn a_one_run_slowdown_inside_the_drift_allowance_is_inconclusive_not_no_change() {
        // The review's case: a 42% slowdown (a blkio throttle) between one
        // run a side, inside the 38% drift allowance: the widened interval
        // holds 1, but it does not rule the slowdown out.
        let a = [100.0, 98.0, 103.0, 101.0, 99.0, 102.0, 100.5, 99.5, 101.5];
        let b: Vec<f64> = a.iter().map(|x| x * 0.7).collect();
        let o = within_run(&a, &b, 0.38 * 2.0, M).unwrap();
        assert!(o.ci95[0] < 1.0 && o.ci95[1] > 1.0, "{:?}", o.ci95);
        assert_eq!(o.label, Label::Inconclusive);
        let o = within_run(&a, &b, 0.38, M).unwrap();
        assert_ne!(o.label, Label::NoChange, "{:?}", o.ci95);
    }
}

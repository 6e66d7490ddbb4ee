//! Statistics over repetitions: pure functions, no I/O.
//!
//! - Descriptive: min, median, mean, max, sample standard deviation (n - 1),
//!   coefficient of variation.
//! - 95% confidence interval of the **mean**: Student's t.
//! - 95% confidence interval of the **median**: distribution-free, from
//!   order statistics (the binomial(n, 1/2) ranks). With fewer than 6
//!   samples no pair of order statistics reaches 95%; the interval is then
//!   the whole range and `ci95_median_level` says what it covers.
//! - Outliers: modified z-score |x - median| / (1.4826 MAD) > 3.5 (Iglewicz
//!   and Hoaglin), flagged and kept.

use serde::{Deserialize, Serialize};

pub mod leader;
pub use leader::{verdict_rounds, Standing, DROP_SPEND, VERDICT_ALPHA};

/// Reads an interval `[lo, hi]` written by this module: JSON has no
/// infinity, so an unbounded side was written as `null`; it reads back as
/// -inf (lo) or +inf (hi).
pub fn interval<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
    let [lo, hi] = <[Option<f64>; 2]>::deserialize(d)?;
    Ok([lo.unwrap_or(f64::NEG_INFINITY), hi.unwrap_or(f64::INFINITY)])
}

/// Summary statistics of one metric over repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1); 0 for one sample.
    pub stddev: f64,
    /// stddev / mean; 0 when the mean is 0.
    pub cv: f64,
    /// 95% interval of the mean (Student's t).
    #[serde(deserialize_with = "interval")]
    pub ci95: [f64; 2],
    /// Interval of the median from order statistics.
    #[serde(deserialize_with = "interval")]
    pub ci95_median: [f64; 2],
    /// Confidence the median interval really has (>= 0.95 from n = 6 on).
    pub ci95_median_level: f64,
    /// Indices of the samples flagged as outliers (kept in every figure).
    pub outliers: Vec<usize>,
}

/// Statistics of a case's main metrics over its repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseStats {
    pub bw_bytes_per_s: Stats,
    pub iops: Stats,
    #[serde(default)]
    pub lat_mean_ns: Option<Stats>,
    pub lat_p50_ns: Stats,
    #[serde(default)]
    pub lat_p90_ns: Option<Stats>,
    pub lat_p99_ns: Stats,
    pub lat_p999_ns: Stats,
    pub cpu_ns_per_io: Stats,
}

/// Median of a sorted slice (0 when empty).
pub fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            // Cornish-Fisher expansion around the normal quantile.
            let z: f64 = 1.959_963_985;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// Ranks (1-based) `(j, k)` of the order statistics bounding the median at
/// 95% or more, and the confidence they give. For n < 6 the best is
/// `(1, n)`, below 95%.
pub fn median_ci_ranks(n: usize) -> (usize, usize, f64) {
    if n == 0 {
        return (0, 0, 0.0);
    }
    // P(Bin(n, 1/2) <= i) for i = 0..n, computed in floating point.
    let mut cdf = Vec::with_capacity(n + 1);
    let mut p = 0.5f64.powi(n as i32); // P(X = 0)
    let mut acc = 0.0;
    for i in 0..=n {
        acc += p;
        cdf.push(acc);
        p = p * (n - i) as f64 / (i + 1) as f64;
    }
    // Largest j with P(X <= j - 1) <= 0.025; interval [X(j), X(n+1-j)].
    let mut j = 1;
    while j < n / 2 + 1 && cdf[j] <= 0.025 {
        j += 1;
    }
    let k = n + 1 - j;
    let level = 1.0 - 2.0 * cdf[j - 1];
    (j, k, level)
}

/// Statistics of `xs` (any order). `None` when empty.
pub fn describe(xs: &[f64]) -> Option<Stats> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len();
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let mean = s.iter().sum::<f64>() / n as f64;
    let median = median_sorted(&s);
    let stddev = if n > 1 {
        (s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let half = if n > 1 {
        t975(n - 1) * stddev / (n as f64).sqrt()
    } else {
        f64::INFINITY
    };
    let (j, k, level) = median_ci_ranks(n);
    let mut dev: Vec<f64> = s.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(|a, b| a.total_cmp(b));
    let mad = median_sorted(&dev);
    let outliers = if mad > 0.0 {
        xs.iter()
            .enumerate()
            .filter(|(_, &x)| (x - median).abs() / (1.4826 * mad) > 3.5)
            .map(|(i, _)| i)
            .collect()
    } else {
        Vec::new()
    };
    Some(Stats {
        n,
        min: s[0],
        median,
        mean,
        max: s[n - 1],
        stddev,
        cv: if mean != 0.0 { stddev / mean } else { 0.0 },
        ci95: [mean - half, mean + half],
        ci95_median: [s[j - 1], s[k - 1]],
        ci95_median_level: level,
        outliers,
    })
}

/// Half-width of the median's interval relative to the median:
/// `max(median - lo, hi - median) / median` (infinite when the median is 0).
pub fn median_ci_rel(s: &Stats) -> f64 {
    if s.median <= 0.0 {
        return f64::INFINITY;
    }
    (s.median - s.ci95_median[0]).max(s.ci95_median[1] - s.median) / s.median
}

/// How far past its budget a job may go to reach the rounds its verdict
/// needs: when all of those rounds are expected to fit within this many
/// times the budget, the job runs them (and the interval target does not
/// stop it before); when they are not, it stops at its budget, and the
/// estimate and the verdict say what would give a call.
pub const VERDICT_GRACE: f64 = 2.0;

/// The `--max-time` that lets a job whose repetitions take `rep_s` on
/// average run `rounds` rounds (and `warmup` warm-ups) within
/// [`VERDICT_GRACE`] times its budget, rounded up to the
/// half second.
pub fn max_time_for(rounds: usize, warmup: u32, rep_s: f64) -> std::time::Duration {
    let s = (rounds as f64 + f64::from(warmup)) * rep_s / VERDICT_GRACE;
    std::time::Duration::from_secs_f64((s * 2.0).ceil().max(1.0) / 2.0)
}

/// How adaptive repetition decides to stop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StopRule {
    /// Stop once the median's 95% interval is within this fraction of the
    /// median (0.03 = 3%).
    pub ci_target: f64,
    /// Never fewer measured repetitions than this, even past the time
    /// budget.
    pub min_reps: usize,
    /// Rounds a verdict needs to make a call (interleaved jobs of several
    /// methods): run, past the interval target and the budget, whenever all
    /// of them are expected to fit within [`VERDICT_GRACE`] times the
    /// budget ([`StopRule::reaches_wanted`]).
    pub wanted_reps: usize,
    /// Never more.
    pub max_reps: usize,
    /// The case's time budget, nanoseconds (warm-up repetitions included).
    pub max_time_ns: u64,
    /// Warm-up rounds run before the measured ones: their time is in the
    /// job's elapsed time, so a round's expected time counts them too.
    pub warmup_rounds: usize,
}

/// Why a case stopped repeating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// `--repeat N` was given and N repetitions ran.
    Fixed,
    /// The median's 95% interval reached the target.
    CiTarget,
    /// The next repetition would not fit in `--max-time`.
    MaxTime,
    /// The repetition limit was reached.
    MaxReps,
    /// Ctrl-C, an error or a skip ended the case.
    Stopped,
    /// `--case-timeout`: the case's wall-clock cap was reached.
    CaseTimeout,
    /// Under a budget: the method was settled against the job's leader
    /// (behind it, or tied within the margin), or, for the job, every
    /// other method was.
    Settled,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Fixed => "fixed count",
            StopReason::CiTarget => "interval within target",
            StopReason::MaxTime => "time budget spent",
            StopReason::MaxReps => "repetition limit",
            StopReason::Stopped => "stopped",
            StopReason::CaseTimeout => "case timeout",
            StopReason::Settled => "settled against the leader",
        }
    }
}

impl StopRule {
    /// True when `samples` have a real 95% interval of their median (6 or
    /// more) within the target.
    pub fn met(&self, samples: &[f64]) -> bool {
        describe(samples)
            .is_some_and(|s| s.ci95_median_level >= 0.95 && median_ci_rel(&s) <= self.ci_target)
    }

    /// Decide after a repetition: `None` to go on, or why to stop.
    /// `samples` are the measured (non-warm-up) throughputs so far,
    /// `elapsed_ns` the case's time so far, `last_rep_ns` how long the
    /// slowest repetition took (the next one is assumed to take as long).
    ///
    /// The target counts only as a real 95% interval: the distribution-free
    /// interval of a median needs at least 6 samples, so the rule never
    /// stops on the target before 6 repetitions, whatever `min_reps` says.
    pub fn decide(&self, samples: &[f64], elapsed_ns: u64, last_rep_ns: u64) -> Option<StopReason> {
        self.decide_job(&[samples], samples.len(), elapsed_ns, last_rep_ns)
    }

    /// [`StopRule::decide`] for a job of interleaved arms, after a round:
    /// `samples` holds each running arm's throughputs, `rounds` the rounds
    /// run, `elapsed_ns` the running arms' time so far and `next_ns` the
    /// next round's expected time. The budget is each running arm's
    /// (`max_time_ns` times their number).
    ///
    /// - Never more than `max_reps` rounds.
    /// - Short of `wanted_reps` (the rounds a verdict needs to make a
    ///   call), while all of them are expected to fit within
    ///   [`VERDICT_GRACE`] times the budget: go on, whatever the interval
    ///   and the budget say.
    /// - Else stop once every arm's interval is within the target, or when
    ///   the next round would end past the budget; never before
    ///   `min_reps` rounds.
    pub fn decide_job(
        &self,
        samples: &[&[f64]],
        rounds: usize,
        elapsed_ns: u64,
        next_ns: u64,
    ) -> Option<StopReason> {
        let n = rounds;
        if n >= self.max_reps {
            return Some(StopReason::MaxReps);
        }
        if n < self.min_reps || self.reaches_wanted(samples.len(), rounds, elapsed_ns, next_ns) {
            return None;
        }
        if samples.iter().all(|s| self.met(s)) {
            return Some(StopReason::CiTarget);
        }
        let budget = self.max_time_ns.saturating_mul(samples.len() as u64);
        (elapsed_ns.saturating_add(next_ns) > budget).then_some(StopReason::MaxTime)
    }

    /// True when a job of `arms` running arms, `rounds` rounds in after
    /// `elapsed_ns`, is short of `wanted_reps` and the rounds missing are
    /// expected to end within [`VERDICT_GRACE`] times its budget. A missing
    /// round is expected to take what the rounds so far (warm-up rounds
    /// included, as `elapsed_ns` includes them) took on average (`next_ns`,
    /// the slowest repetitions, before the first): one slow repetition on a
    /// shared disk does not cancel the rounds. The same test as the
    /// estimate's: `(wanted + warm-ups) × round <= VERDICT_GRACE × budget`.
    pub fn reaches_wanted(
        &self,
        arms: usize,
        rounds: usize,
        elapsed_ns: u64,
        next_ns: u64,
    ) -> bool {
        if rounds >= self.wanted_reps.min(self.max_reps) {
            return false;
        }
        let missing = (self.wanted_reps - rounds) as f64;
        let done = rounds + self.warmup_rounds;
        let per_round = if done > 0 {
            elapsed_ns as f64 / done as f64
        } else {
            next_ns as f64
        };
        let budget = self.max_time_ns.saturating_mul(arms as u64) as f64;
        elapsed_ns as f64 + missing * per_round <= budget * VERDICT_GRACE
    }
}

/// How a sample `b` compares with a sample `a`, on their medians.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// median(b) / median(a).
    pub ratio: f64,
    /// 95% percentile-bootstrap interval of that ratio (deterministic seed).
    #[serde(deserialize_with = "interval")]
    pub ratio_ci95: [f64; 2],
    /// True when the two medians' 95% intervals do not overlap: the
    /// difference is real. Overlapping intervals are a tie.
    pub distinct: bool,
    /// True when the samples do not overlap at all but are too small for
    /// that to count: more repetitions could show a real difference.
    #[serde(default)]
    pub undersampled: bool,
}

/// Probability that two samples of sizes `n` and `m` from one distribution
/// do not overlap at all (either way round): 2 / C(n + m, n).
pub fn separation_p(n: usize, m: usize) -> f64 {
    // C(n + m, n) as a running product, in floating point.
    let mut c = 1.0f64;
    for i in 1..=n {
        c = c * (m + i) as f64 / i as f64;
    }
    (2.0 / c).min(1.0)
}

/// Resamples drawn by [`compare`]'s bootstrap.
const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Compare sample `b` with sample `a`. `None` when either is empty or the
/// median of `a` is not positive.
pub fn compare(a: &[f64], b: &[f64]) -> Option<Comparison> {
    let (sa, sb) = (describe(a)?, describe(b)?);
    if sa.median <= 0.0 {
        return None;
    }
    let apart = |x: [f64; 2], y: [f64; 2]| x[0] > y[1] || x[1] < y[0];
    let few = sa.ci95_median_level < 0.95 || sb.ci95_median_level < 0.95;
    let ranges_apart = apart([sa.min, sa.max], [sb.min, sb.max]);
    let distinct = if few {
        // Too few repetitions for a 95% interval of a median: the samples
        // must not overlap at all, and that must be unlikely by chance
        // (exact permutation probability of a complete separation).
        ranges_apart && separation_p(sa.n, sb.n) < 0.05
    } else {
        apart(sa.ci95_median, sb.ci95_median)
    };
    // Percentile bootstrap of median(b*) / median(a*), resampling each
    // sample on its own, with a fixed seed so that a result always reads
    // the same.
    let mut rng = iopath_io::data::Rng::new(0x5eed_b007);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for x in ra.iter_mut() {
            *x = a[rng.below(a.len() as u64) as usize];
        }
        for x in rb.iter_mut() {
            *x = b[rng.below(b.len() as u64) as usize];
        }
        ra.sort_by(|x, y| x.total_cmp(y));
        rb.sort_by(|x, y| x.total_cmp(y));
        let ma = median_sorted(&ra);
        if ma > 0.0 {
            ratios.push(median_sorted(&rb) / ma);
        }
    }
    ratios.sort_by(|x, y| x.total_cmp(y));
    let q = |p: f64| {
        if ratios.is_empty() {
            f64::NAN
        } else {
            ratios[((ratios.len() - 1) as f64 * p).round() as usize]
        }
    };
    Some(Comparison {
        ratio: sb.median / sa.median,
        ratio_ci95: [q(0.025), q(0.975)],
        distinct,
        undersampled: few && ranges_apart && !distinct,
    })
}

/// Differences smaller than this (a ratio within 1/1.03 to 1.03) are not
/// called real even when precisely measured: a tie is called when the
/// interval includes 1 or lies inside this margin.
pub const EQUIVALENCE_MARGIN: f64 = 0.03;

/// Below this many repetitions a side, an interval of the median (or of a
/// ratio) is the min-max range, not one at 95% (see [`describe`]); a
/// verdict calls nothing on fewer.
pub const MIN_REPETITIONS_FOR_CI: usize = 6;

/// True when the interval `ci` of a ratio lies inside the equivalence
/// margin.
pub fn within_margin(ci: [f64; 2]) -> bool {
    ci[0] >= 1.0 / (1.0 + EQUIVALENCE_MARGIN) && ci[1] <= 1.0 + EQUIVALENCE_MARGIN
}

/// True when the interval `ci` of a ratio lies entirely outside the margin
/// `margin` (0.03: 1/1.03 to 1.03): the difference is at least the margin,
/// at the interval's confidence. An interval that excludes 1 but reaches
/// into the margin is not enough.
pub fn beyond_margin(ci: [f64; 2], margin: f64) -> bool {
    ci[0] > 1.0 + margin || ci[1] < 1.0 / (1.0 + margin)
}

/// Exact rounds up to which the signed-rank distribution is computed; the
/// normal approximation (with continuity correction) beyond.
const SIGNED_RANK_EXACT: usize = 60;

/// For `n` paired observations, the rank `k` (1-based) of the Walsh
/// averages bounding the Hodges-Lehmann interval at 95% or more, and the
/// confidence it gives: the largest `k` with P(T <= k - 1) <= 0.025, T the
/// Wilcoxon signed-rank statistic under no difference (each sign a fair
/// coin). For n < 6 the best is `k = 1` (all Walsh averages), below 95%.
pub fn signed_rank_ci_rank(n: usize) -> (usize, f64) {
    signed_rank_ci_rank_at(n, 0.05)
}

/// The upper `p` quantile of the standard normal (`p` in (0, 0.5]):
/// Abramowitz and Stegun 26.2.23, error below 4.5e-4.
pub fn normal_upper(p: f64) -> f64 {
    let t = (-2.0 * p.clamp(1e-300, 0.5).ln()).sqrt();
    t - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
        / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t)
}

/// [`signed_rank_ci_rank`] for a `1 - alpha` interval (each tail
/// `alpha / 2`): the largest `k` with P(T <= k - 1) <= alpha / 2, and the
/// coverage it gives.
pub fn signed_rank_ci_rank_at(n: usize, alpha: f64) -> (usize, f64) {
    if n == 0 {
        return (0, 0.0);
    }
    let tail = alpha / 2.0;
    let max = n * (n + 1) / 2;
    if n <= SIGNED_RANK_EXACT {
        // P(T = t) by dynamic programming over the ranks 1..n.
        let mut p = vec![0.0f64; max + 1];
        p[0] = 1.0;
        for r in 1..=n {
            for t in (0..=max).rev() {
                let with = if t >= r { p[t - r] } else { 0.0 };
                p[t] = 0.5 * (p[t] + with);
            }
        }
        // below = P(T <= k - 1); move to k + 1 while P(T <= k) allows it.
        let (mut k, mut below) = (1, p[0]);
        while k < max / 2 && below + p[k] <= tail {
            below += p[k];
            k += 1;
        }
        // The interval [W(k), W(M + 1 - k)] has coverage 1 - 2 P(T <= k - 1).
        (k, 1.0 - 2.0 * below)
    } else {
        let nf = n as f64;
        let mean = nf * (nf + 1.0) / 4.0;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        // At or one below the exact rank (checked to n = 200): a little
        // conservative.
        let k = (mean - normal_upper(tail) * sd + 0.5).floor().max(1.0) as usize;
        (k, 1.0 - alpha)
    }
}

/// The fewest rounds whose signed-rank interval reaches `1 - alpha`: a
/// paired difference can be called real from this many on (6 at 5%; 8 at
/// 5% shared among 6 comparisons).
pub fn min_rounds(alpha: f64) -> usize {
    (1..=SIGNED_RANK_EXACT)
        .find(|&n| signed_rank_ci_rank_at(n, alpha).1 >= 1.0 - alpha - 1e-12)
        .unwrap_or(SIGNED_RANK_EXACT)
}

/// How `b` compares with `a` on observations made side by side: `pairs`
/// holds `(a_i, b_i)` from the same round of an interleaved schedule, and
/// the comparison is on the per-round log ratios `ln(b_i / a_i)`.
///
/// - `ratio`: the Hodges-Lehmann estimate, exp of the median of the Walsh
///   averages (every mean of two per-round log ratios, each with itself
///   included): a median that one wild round cannot move far.
/// - `ratio_ci95`: the interval of the Wilcoxon signed-rank test, read off
///   the sorted Walsh averages at the ranks [`signed_rank_ci_rank`] gives;
///   with fewer than 6 rounds no interval reaches 95% and it is the range.
/// - `distinct`: the interval is a real 95% one and lies entirely outside
///   the [`EQUIVALENCE_MARGIN`] (a minimum-effect test: the difference is
///   at least 3% with 95% confidence). An interval that excludes 1 but
///   reaches into the margin is a tie: at a 95% level, 1 such call in 20
///   would otherwise be made between identical methods.
/// - `undersampled`: fewer than 6 rounds, and the range lies beyond the
///   margin: more rounds could show a real difference.
///
/// Why this holds on a drifting machine: whatever changes between rounds
/// (other traffic, device state) multiplies both sides of a round alike and
/// cancels in its ratio; the order inside a round is shuffled, so when the
/// two sides do not differ, `(a_i, b_i)` is as likely as `(b_i, a_i)` and
/// the log ratio is symmetric about 0 — exactly what the signed-rank test
/// assumes, so its false-call rate is at most 5%. `None` without a usable
/// pair.
pub fn compare_paired(pairs: &[(f64, f64)]) -> Option<Comparison> {
    compare_paired_with(pairs, EQUIVALENCE_MARGIN, 0.05)
}

/// [`compare_paired`] with another margin (CPU per I/O: 10%) and level:
/// a `1 - alpha` interval, "real" only when it reaches that coverage (a
/// verdict comparing k methods with the fastest uses alpha = 0.05 / (k - 1),
/// so that the whole verdict errs at most 5% of the time).
pub fn compare_paired_with(pairs: &[(f64, f64)], margin: f64, alpha: f64) -> Option<Comparison> {
    let logs: Vec<f64> = pairs
        .iter()
        .filter(|(a, b)| *a > 0.0 && *b > 0.0 && b.is_finite())
        .map(|(a, b)| (b / a).ln())
        .collect();
    let n = logs.len();
    if n == 0 {
        return None;
    }
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((logs[i] + logs[j]) / 2.0);
        }
    }
    walsh.sort_by(|x, y| x.total_cmp(y));
    let m = walsh.len();
    let (k, level) = signed_rank_ci_rank_at(n, alpha);
    let ci = [walsh[k - 1].exp(), walsh[m - k].exp()];
    let real = level >= 1.0 - alpha - 1e-12;
    let beyond = beyond_margin(ci, margin);
    Some(Comparison {
        ratio: median_sorted(&walsh).exp(),
        ratio_ci95: ci,
        distinct: real && beyond,
        undersampled: !real && beyond,
    })
}

#[cfg(test)]
mod tests;

/// The paired interval against simulations with a known answer.
#[cfg(test)]
mod paired_sim {
    #[test]
    fn signed_rank_ranks_match_published_critical_values() {
        // Two-sided 5% critical values of the Wilcoxon signed-rank test
        // (reject when T <= c): n=6: 0, n=7: 2, n=8: 3, n=10: 8, n=20: 52,
        // n=30: 137. The interval's rank is c + 1.
        for (n, c) in [(6, 0), (7, 2), (8, 3), (10, 8), (20, 52), (30, 137)] {
            let (k, level) = super::signed_rank_ci_rank(n);
            assert_eq!(k, c + 1, "n = {n}");
            assert!(level >= 0.95, "n = {n}: {level}");
        }
        // At 0.05 / 6 (seven methods against the fastest): n = 8 is the
        // first with an interval (2 / 256 <= 0.0083), n = 7 has none.
        assert!(super::signed_rank_ci_rank_at(7, 0.05 / 6.0).1 < 1.0 - 0.05 / 6.0);
        let (k, level) = super::signed_rank_ci_rank_at(8, 0.05 / 6.0);
        assert_eq!(k, 1);
        assert!(level >= 1.0 - 0.05 / 6.0);
        assert!((super::normal_upper(0.025) - 1.96).abs() < 1e-3);
        assert_eq!(super::min_rounds(0.05), 6);
        assert_eq!(super::min_rounds(0.05 / 6.0), 8);
        assert_eq!(super::verdict_rounds(), 6);
        assert!((super::normal_upper(0.005) - 2.5758).abs() < 1e-3);
        // Below 6 no interval reaches 95%.
        assert!(super::signed_rank_ci_rank(5).1 < 0.95);
        // Past the exact table: the normal approximation, at or one below
        // the exact rank (exact: n=61: 673, n=100: 1956, n=200: 8445).
        for (n, exact) in [(61, 673), (100, 1956), (200, 8445)] {
            let (k, _) = super::signed_rank_ci_rank(n);
            assert!(k <= exact && k + 2 >= exact, "n = {n}: {k}");
        }
    }

    use super::*;
    use iopath_io::data::Rng;

    /// A standard normal deviate (Box-Muller).
    fn normal(rng: &mut Rng) -> f64 {
        let u = |r: &mut Rng| ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (a, b) = (u(rng), u(rng));
        (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
    }

    /// One interleaved job of two arms on a drifting machine: every round
    /// has its own level (5% spread, other traffic), throughput also drifts
    /// by 1% per slot within a round, the order of the two arms is shuffled
    /// per round, and every repetition has 2% noise of its own. Arm B is
    /// `true_ratio` times arm A. Returns the `(a, b)` pairs.
    fn interleaved(rng: &mut Rng, rounds: usize, true_ratio: f64) -> Vec<(f64, f64)> {
        (0..rounds)
            .map(|_| {
                let level = 100.0 * (0.05 * normal(rng)).exp();
                let b_first = rng.below(2) == 1;
                let slot = |first: bool| if first { 1.0 } else { 0.99 };
                let a = level * slot(!b_first) * (0.02 * normal(rng)).exp();
                let b = true_ratio * level * slot(b_first) * (0.02 * normal(rng)).exp();
                (a, b)
            })
            .collect()
    }

    fn rate(jobs: usize, mut f: impl FnMut() -> bool) -> f64 {
        (0..jobs).filter(|_| f()).count() as f64 / jobs as f64
    }

    #[test]
    fn aa_jobs_are_called_different_at_most_one_time_in_twenty() {
        let mut rng = Rng::new(13);
        for rounds in [6, 10, 20] {
            let false_calls = rate(2000, || {
                compare_paired(&interleaved(&mut rng, rounds, 1.0))
                    .unwrap()
                    .distinct
            });
            // The signed-rank level: at most 3.1% (n = 6), 4.9% (10),
            // 4.8% (20), less after the margin.
            assert!(false_calls <= 0.05, "{rounds} rounds: {false_calls}");
        }
    }

    #[test]
    fn the_unpaired_rule_on_drifting_cases_is_what_went_wrong() {
        // The same machine, cases run one after another (each case its own
        // level): the old rule credits the drift to the method.
        let mut rng = Rng::new(14);
        let false_calls = rate(300, || {
            let (ka, kb) = (
                (0.05 * normal(&mut rng)).exp(),
                (0.05 * normal(&mut rng)).exp(),
            );
            let a: Vec<f64> = (0..10)
                .map(|_| 100.0 * ka * (0.02 * normal(&mut rng)).exp())
                .collect();
            let b: Vec<f64> = (0..10)
                .map(|_| 100.0 * kb * (0.02 * normal(&mut rng)).exp())
                .collect();
            compare(&a, &b).unwrap().distinct
        });
        assert!(false_calls > 0.3, "{false_calls}");
    }

    #[test]
    fn a_real_difference_is_found_and_covered() {
        let mut rng = Rng::new(15);
        let (mut found, mut covered) = (0, 0);
        let jobs = 2000;
        for _ in 0..jobs {
            let c = compare_paired(&interleaved(&mut rng, 10, 1.10)).unwrap();
            found += usize::from(c.distinct && c.ratio > 1.0);
            covered += usize::from(c.ratio_ci95[0] <= 1.10 && 1.10 <= c.ratio_ci95[1]);
        }
        let (found, covered) = (found as f64 / jobs as f64, covered as f64 / jobs as f64);
        // 10% apart with 3% noise per ratio: found nearly always; the
        // interval holds the true ratio at least 95% of the time (97.9% by
        // construction at n = 10, less the 1% slot drift's bias).
        assert!(found >= 0.95, "found {found}");
        assert!(covered >= 0.93, "covered {covered}");
    }

    #[test]
    fn differences_inside_the_margin_are_ties_and_few_rounds_never_call() {
        // A steady 2% difference, measured exactly: real, but inside the
        // margin.
        let pairs: Vec<(f64, f64)> = (0..20)
            .map(|i| (100.0 + i as f64, (100.0 + i as f64) * 1.02))
            .collect();
        let c = compare_paired(&pairs).unwrap();
        assert!((c.ratio - 1.02).abs() < 1e-9);
        assert!(!c.distinct && !c.undersampled, "{c:?}");
        // 5% apart on 5 rounds: all on one side, but 5 rounds cannot give a
        // 95% interval of a median.
        let few: Vec<(f64, f64)> = (0..5)
            .map(|i| (100.0 + i as f64, 105.0 + i as f64))
            .collect();
        let c = compare_paired(&few).unwrap();
        assert!(!c.distinct && c.undersampled, "{c:?}");
        // The same on 6 rounds is real.
        let six: Vec<(f64, f64)> = (0..6)
            .map(|i| (100.0 + i as f64, 105.0 + i as f64))
            .collect();
        assert!(compare_paired(&six).unwrap().distinct);
        assert!(compare_paired(&[]).is_none());
    }
}

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
    pub ci95: [f64; 2],
    /// Interval of the median from order statistics.
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
    pub lat_p50_ns: Stats,
    pub lat_p99_ns: Stats,
    pub lat_p999_ns: Stats,
    pub cpu_ns_per_io: Stats,
}

impl CaseStats {
    /// `None` when no repetition completed.
    pub fn of(reps: &[crate::result::Measurement]) -> Option<CaseStats> {
        let d = |f: &dyn Fn(&crate::result::Measurement) -> f64| {
            describe(&reps.iter().map(f).collect::<Vec<f64>>())
        };
        Some(CaseStats {
            bw_bytes_per_s: d(&|m| m.bw_bytes_per_s)?,
            iops: d(&|m| m.iops)?,
            lat_p50_ns: d(&|m| m.lat_ns.p50 as f64)?,
            lat_p99_ns: d(&|m| m.lat_ns.p99 as f64)?,
            lat_p999_ns: d(&|m| m.lat_ns.p999 as f64)?,
            cpu_ns_per_io: d(&|m| m.cpu.ns_per_io)?,
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn descriptive_statistics_of_a_hand_computed_sample() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
        let s = describe(&[9.0, 2.0, 4.0, 4.0, 5.0, 4.0, 5.0, 7.0]).unwrap();
        assert_eq!(
            (s.n, s.min, s.max, s.median, s.mean),
            (8, 2.0, 9.0, 4.5, 5.0)
        );
        assert!(close(s.stddev, (32.0f64 / 7.0).sqrt(), 1e-12));
        assert!(close(s.cv, (32.0f64 / 7.0).sqrt() / 5.0, 1e-12));
        // t(0.975, 7) = 2.365: half-width 2.365 * 2.138 / sqrt(8) = 1.7877.
        assert!(close(s.ci95[0], 5.0 - 1.7877, 1e-3), "{:?}", s.ci95);
        assert!(close(s.ci95[1], 5.0 + 1.7877, 1e-3), "{:?}", s.ci95);
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(10), 2.228);
        assert_eq!(t975(30), 2.042);
        assert!(close(t975(40), 2.021, 2e-3), "{}", t975(40));
        assert!(close(t975(120), 1.980, 2e-3), "{}", t975(120));
        assert!(close(t975(100_000), 1.960, 1e-3));
    }

    #[test]
    fn median_interval_ranks_follow_the_binomial() {
        // Published distribution-free ranks for a 95% median interval:
        // n=6: (1,6) 96.9%; n=10: (2,9) 97.9%; n=20: (6,15) 95.9%.
        let (j, k, l) = median_ci_ranks(6);
        assert_eq!((j, k), (1, 6));
        assert!(close(l, 0.96875, 1e-9));
        let (j, k, l) = median_ci_ranks(10);
        assert_eq!((j, k), (2, 9));
        assert!(close(l, 0.97852, 1e-4));
        let (j, k, l) = median_ci_ranks(20);
        assert_eq!((j, k), (6, 15));
        assert!(close(l, 0.95861, 1e-4));
        // Too few samples for 95%: the whole range, and its real level.
        let (j, k, l) = median_ci_ranks(3);
        assert_eq!((j, k), (1, 3));
        assert!(close(l, 0.75, 1e-9));
    }

    #[test]
    fn outliers_are_flagged_by_mad_and_kept() {
        let xs = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 60.0];
        let s = describe(&xs).unwrap();
        assert_eq!(s.outliers, vec![6]);
        assert_eq!(s.min, 60.0, "outliers stay in the figures");
        assert!(
            describe(&[5.0, 5.0, 5.0]).unwrap().outliers.is_empty(),
            "MAD 0: none"
        );
    }

    #[test]
    fn one_sample_and_none() {
        let s = describe(&[3.0]).unwrap();
        assert_eq!((s.median, s.stddev, s.cv), (3.0, 0.0, 0.0));
        assert!(s.ci95[1].is_infinite());
        assert!(describe(&[]).is_none());
    }
}

//! The timeline chart: the throughput per interval within each method's
//! median repetition.

use super::axis::Fmt;
use super::{Figure, Line, Lines, Plot, MIB};
use crate::result::{CaseResult, Measurement};

/// The measured repetition whose throughput is the median (the lower
/// middle one for an even count), with its 1-based place among all
/// repetitions.
pub fn median_repetition(c: &CaseResult) -> Option<(usize, &Measurement)> {
    let mut counted: Vec<(usize, &Measurement)> = c
        .repetitions
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.warmup && !m.interrupted)
        .map(|(i, m)| (i + 1, m))
        .collect();
    if counted.is_empty() {
        // Only a repetition cut short by Ctrl-C: the summary is made of it.
        counted = c
            .repetitions
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.warmup)
            .map(|(i, m)| (i + 1, m))
            .collect();
    }
    if counted.is_empty() {
        return None;
    }
    counted.sort_by(|a, b| a.1.bw_bytes_per_s.total_cmp(&b.1.bw_bytes_per_s));
    Some(counted[(counted.len() - 1) / 2])
}

pub(super) fn within(id: &str, label: &str, cases: &[&CaseResult]) -> Option<Figure> {
    let mut picked = Vec::new();
    let series: Vec<Line> = cases
        .iter()
        .filter_map(|c| {
            let (place, m) = median_repetition(c)?;
            let s = m.series.as_ref()?;
            picked.push(format!("{} #{place}", c.name()));
            Some(Line {
                method: c.name(),
                points: timeline(s),
            })
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(Figure {
        id: format!("{id}-timeline"),
        title: format!("{label}: throughput within a repetition"),
        caption: format!(
            "Throughput per interval within each method's median repetition ({}), \
             plotted at the end of each interval (a last partial interval under a quarter \
             of the others is merged into the one before). Writes run through the final \
             flush: a long fsync shows as intervals near 0 at the end.",
            picked.join(", ")
        ),
        width: 900,
        height: 360,
        plot: Plot::Lines(Lines {
            x_axis: "time within the repetition (ms)".into(),
            y_axis: "MiB/s".into(),
            x_categories: Vec::new(),
            x_fmt: Fmt::Ms,
            y_fmt: Fmt::MiBs,
            log_y: false,
            series,
        }),
    })
}

/// (end of interval in ms, MiB/s) for each interval of a repetition. A
/// last partial interval shorter than a quarter of the others is merged
/// into the one before: a handful of completions over a fraction of a
/// millisecond would otherwise read as a spike of many GiB/s.
fn timeline(s: &crate::result::Series) -> Vec<(f64, f64, bool)> {
    let step = s.interval_ns as f64 / 1e6;
    let last = s.last_interval_ns as f64 / 1e6;
    let mut bw: Vec<f64> = s.bw_bytes_per_s.clone();
    let mut lens: Vec<f64> = vec![step; bw.len()];
    if let Some(l) = lens.last_mut() {
        *l = last;
    }
    let n = bw.len();
    if n >= 2 && last < step / 4.0 {
        let merged = (bw[n - 2] * step + bw[n - 1] * last) / (step + last);
        bw.truncate(n - 1);
        bw[n - 2] = merged;
        lens.truncate(n - 1);
        lens[n - 2] = step + last;
    }
    let mut t = 0.0;
    let points: Vec<(f64, f64, bool)> = bw
        .iter()
        .zip(&lens)
        .map(|(&b, &len)| {
            t += len;
            (t, b / MIB, false)
        })
        .collect();
    thin(points, MAX_TIMELINE_POINTS)
}

/// More points than a chart can show add only bytes: a long repetition is
/// drawn from the lowest and highest interval of each stretch, so stalls
/// and bursts stay visible.
const MAX_TIMELINE_POINTS: usize = 2000;

fn thin(points: Vec<(f64, f64, bool)>, max: usize) -> Vec<(f64, f64, bool)> {
    if points.len() <= max {
        return points;
    }
    let per = points.len().div_ceil(max / 2);
    let mut out = Vec::with_capacity(max);
    for chunk in points.chunks(per) {
        let lo = chunk.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = chunk.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(&lo), Some(&hi)) = (lo, hi) {
            if lo.0 <= hi.0 {
                out.extend([lo, hi]);
            } else {
                out.extend([hi, lo]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::testdata::fixture;

    #[test]
    fn the_median_repetition_skips_warmups() {
        let r = fixture();
        let c = r
            .cases
            .iter()
            .find(|c| c.method == iopath_io::Method::Uring)
            .unwrap();
        let (place, m) = median_repetition(c).unwrap();
        assert!(!c.repetitions[place - 1].warmup);
        let mut bw = c.samples(|m| m.bw_bytes_per_s);
        bw.sort_by(f64::total_cmp);
        // Four measured: the lower middle one.
        assert_eq!(m.bw_bytes_per_s, bw[1]);
    }

    #[test]
    fn a_short_last_interval_is_merged_not_drawn_as_a_spike() {
        // 10 ms intervals; the last lasted 0.5 ms with 1 MiB: 2000 MiB/s.
        let s = crate::result::Series::from_counts(
            10_000_000,
            500_000,
            &[10 << 20, 10 << 20, 1 << 20],
            &[10, 10, 1],
        );
        let pts = timeline(&s);
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[0], (10.0, 1000.0, false));
        assert!((pts[1].0 - 20.5).abs() < 1e-9);
        // 11 MiB over 10.5 ms.
        assert!((pts[1].1 - 11.0 / 0.0105).abs() < 0.01, "{}", pts[1].1);
        // A last interval of half the length is drawn as it is.
        let s = crate::result::Series::from_counts(10_000_000, 5_000_000, &[0, 1 << 20], &[0, 1]);
        assert_eq!(timeline(&s), vec![(10.0, 0.0, false), (15.0, 200.0, false)]);
    }

    #[test]
    fn long_timelines_keep_their_extremes_within_the_point_budget() {
        let pts: Vec<(f64, f64, bool)> = (0..100_000)
            .map(|i| {
                (
                    i as f64,
                    if i == 54_321 {
                        0.0
                    } else {
                        100.0 + (i % 7) as f64
                    },
                    false,
                )
            })
            .collect();
        let thin = thin(pts, 2000);
        assert!(thin.len() <= 2000, "{}", thin.len());
        assert!(thin.iter().any(|p| p.1 == 0.0), "the stall survives");
        assert!(thin.iter().any(|p| p.1 == 106.0), "so does the peak");
        assert!(thin.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
    }
}

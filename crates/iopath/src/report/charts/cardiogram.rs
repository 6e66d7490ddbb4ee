//! The "cardiogram": the throughput of every repetition in the order they
//! ran, relative to the method's median.

use super::axis::Fmt;
use super::{Figure, Line, Lines, Plot};
use crate::result::CaseResult;

pub(super) fn cardiogram(id: &str, label: &str, cases: &[&CaseResult]) -> Figure {
    let series = cases
        .iter()
        .map(|c| {
            let median = c.summary.as_ref().map_or(0.0, |s| s.bw_bytes_per_s);
            Line {
                method: c.name(),
                points: c
                    .repetitions
                    .iter()
                    .enumerate()
                    .filter(|_| median > 0.0)
                    .map(|(i, m)| ((i + 1) as f64, m.bw_bytes_per_s / median * 100.0, m.warmup))
                    .collect(),
            }
        })
        .collect();
    Figure {
        id: format!("{id}-repetitions"),
        title: format!("{label}: every repetition, relative to its median"),
        caption: "Throughput of each repetition in the order they ran, as a percentage of \
                  the method's median (hollow: warm-up, not counted), so that methods of very \
                  different speeds share one scale. A trend up or down means the system was \
                  still settling or drifting; a lone point far from 100% is an outlier the \
                  median ignores."
            .into(),
        width: 900,
        height: 360,
        plot: Plot::Lines(Lines {
            x_axis: "repetition".into(),
            y_axis: "% of the median".into(),
            x_categories: Vec::new(),
            x_fmt: Fmt::Int,
            y_fmt: Fmt::Pct,
            log_y: false,
            series,
        }),
    }
}

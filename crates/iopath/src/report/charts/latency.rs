//! The latency chart: each method's percentiles of single requests, on a
//! log scale.

use super::axis::Fmt;
use super::{Figure, Line, Lines, Plot};
use crate::result::CaseResult;

pub(super) fn latency(id: &str, label: &str, cases: &[&CaseResult]) -> Figure {
    let names = ["p50", "p90", "p99", "p99.9", "max"];
    let series = cases
        .iter()
        .map(|c| {
            let l = &c
                .summary
                .as_ref()
                .expect("drawn cases have a summary")
                .lat_ns;
            let vals = [l.p50, l.p90, l.p99, l.p999, l.max];
            // Hollow: a percentile with too few requests behind it (the max
            // is no percentile: never hollow).
            let ps = [0.5, 0.9, 0.99, 0.999];
            Line {
                method: c.name(),
                points: vals
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| v > 0)
                    .map(|(i, &v)| {
                        let few = ps
                            .get(i)
                            .is_some_and(|&p| crate::model::units::too_few_requests(p, l.count));
                        (i as f64, v as f64, few)
                    })
                    .collect(),
            }
        })
        .collect();
    Figure {
        id: format!("{id}-latency"),
        title: format!("{label}: latency percentiles"),
        caption: "Latency of single requests, submission to completion (the summary's \
                  percentiles), on a log scale: a line that rises steeply to the \
                  right has a long tail. Hollow: too few requests behind that percentile \
                  to trust it (p99 needs 1,000, p99.9 10,000)."
            .into(),
        width: 900,
        height: 380,
        plot: Plot::Lines(Lines {
            x_axis: "percentile".into(),
            y_axis: "latency".into(),
            x_categories: names.iter().map(|s| s.to_string()).collect(),
            x_fmt: Fmt::Int,
            y_fmt: Fmt::Ns,
            log_y: true,
            series,
        }),
    }
}

//! The throughput chart: the median of each method as a bar, with the
//! 95% interval of the median (or the range, below 6 repetitions) as
//! whiskers.

use super::axis::Fmt;
use super::{bar_height, finite, Bar, Bars, Figure, Plot, MIB};
use crate::model::units::fmt_count;
use crate::result::CaseResult;

pub(super) fn throughput(id: &str, label: &str, cases: &[&CaseResult]) -> Figure {
    let rows: Vec<Bar> = cases
        .iter()
        .map(|c| {
            let s = c.summary.as_ref().expect("drawn cases have a summary");
            let ci = c
                .stats
                .as_ref()
                .and_then(|st| finite(st.bw_bytes_per_s.ci95_median))
                .map(|[a, b]| [a / MIB, b / MIB]);
            let n = c.measured().len();
            Bar {
                method: c.name(),
                value: s.bw_bytes_per_s / MIB,
                ci,
                label: format!(
                    "{} MiB/s · {} IOPS · n={n}{}",
                    Fmt::MiBs.show(s.bw_bytes_per_s / MIB),
                    fmt_count(s.iops),
                    if n < 6 && ci.is_some() {
                        ", whiskers = range"
                    } else {
                        ""
                    }
                ),
            }
        })
        .collect();
    Figure {
        id: format!("{id}-throughput"),
        title: format!("{label}: throughput"),
        caption: "Median throughput of the measured repetitions (n). Whiskers: the 95% \
                  interval of the median when n is 6 or more; below 6 no 95% interval of a \
                  median exists, and the whiskers are the range of the samples, from the \
                  slowest to the fastest (marked \"whiskers = range\")."
            .into(),
        width: 900,
        height: bar_height(rows.len()),
        plot: Plot::Bars(Bars {
            title: String::new(),
            axis: "MiB/s".into(),
            fmt: Fmt::MiBs,
            log: false,
            rows,
            reference: None,
            empty: String::new(),
        }),
    }
}

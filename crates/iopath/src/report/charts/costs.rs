//! The costs chart: CPU time per I/O, memory held and the device fraction,
//! three bar panels side by side.

use super::axis::Fmt;
use super::{bar_height, finite, Bar, Bars, Figure, Plot};
use crate::result::{CaseResult, Measurement};

pub(super) fn costs(id: &str, label: &str, cases: &[&CaseResult]) -> Figure {
    let n = cases.len();
    Figure {
        id: format!("{id}-costs"),
        title: format!("{label}: costs"),
        caption: "CPU time per I/O (workers, kernel and SQPOLL threads; whiskers: the 95% \
                  interval of the median, or the range of the samples below 6 repetitions), memory the case held (the file's pages in the page cache plus \
                  the I/O buffers), and the device fraction (bytes the disk moved / bytes \
                  asked: near 100% means the device was measured, near 0% the page cache, \
                  far above 100% read-ahead or fault-around fetching pages nobody asked \
                  for). All three on log scales (a device fraction below 0.1% sits at the \
                  axis' start)."
            .into(),
        width: 1100,
        height: bar_height(n),
        plot: Plot::Row(vec![cpu(cases), memory(cases), device(cases)]),
    }
}

fn summary(c: &CaseResult) -> Measurement {
    c.summary.clone().expect("drawn cases have a summary")
}

/// CPU time per I/O, with the 95% interval of its median.
fn cpu(cases: &[&CaseResult]) -> Bars {
    let rows = cases
        .iter()
        .map(|c| {
            let v = summary(c).cpu.ns_per_io;
            Bar {
                method: c.name(),
                value: v,
                ci: c
                    .stats
                    .as_ref()
                    .and_then(|s| finite(s.cpu_ns_per_io.ci95_median)),
                label: Fmt::Ns.show(v),
            }
        })
        .collect();
    Bars {
        title: "CPU per I/O".into(),
        axis: "CPU time per I/O".into(),
        fmt: Fmt::Ns,
        log: true,
        rows,
        reference: None,
        empty: String::new(),
    }
}

/// The memory each case held: the file's pages in the page cache and the
/// I/O buffers.
fn memory(cases: &[&CaseResult]) -> Bars {
    let rows = cases
        .iter()
        .map(|c| {
            let m = summary(c).memory;
            let v = m.total_bytes.max(m.page_cache_bytes + m.buffers_bytes) as f64;
            Bar {
                method: c.name(),
                value: v,
                ci: None,
                label: Fmt::Bytes.show(v),
            }
        })
        .collect();
    Bars {
        title: "memory held".into(),
        axis: "bytes".into(),
        fmt: Fmt::Bytes,
        log: true,
        rows,
        reference: None,
        empty: String::new(),
    }
}

/// Bytes the disk moved over bytes asked, against 100%.
fn device(cases: &[&CaseResult]) -> Bars {
    let rows = cases
        .iter()
        .filter_map(|c| {
            let f = summary(c).device_fraction?;
            Some(Bar {
                method: c.name(),
                value: f,
                ci: None,
                label: crate::model::units::fmt_device_fraction(f),
            })
        })
        .collect();
    Bars {
        title: "device fraction".into(),
        axis: "bytes moved / bytes asked".into(),
        fmt: Fmt::Fraction,
        log: true,
        rows,
        reference: Some(1.0),
        empty: "no block device under the target".into(),
    }
}

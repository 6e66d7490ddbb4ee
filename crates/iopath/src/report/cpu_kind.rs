//! CPU per I/O by kind in the HTML report: a stacked bar per method
//! ([`crate::result::costs::cpu_by_kind`]): the workers in user space and
//! in the kernel, the process's helper threads (io_uring's, a pool's), and
//! the kernel's deferred work charged to the case (an estimate), each
//! share pooled over the repetitions. The words are `report::text::why`'s.

use std::fmt::Write as _;

use crate::model::units::fmt_ns;
use crate::report::stacked;
use crate::report::text::why;
use crate::result::costs::{cpu_by_kind, CpuKind};
use crate::result::{CaseResult, RunResult};

/// The bar's parts in [`CpuKind`]'s order, with their colours.
const PARTS: [(&str, &str); 5] = [
    ("user", "#4e79a7"),
    ("system", "#e15759"),
    ("workers", "#9c755f"),
    ("helper threads", "#f28e2b"),
    ("write-back (estimate)", "#bab0ac"),
];

fn part(k: CpuKind) -> (&'static str, &'static str) {
    let i = match k {
        CpuKind::User => 0,
        CpuKind::System => 1,
        CpuKind::Workers => 2,
        CpuKind::HelperThreads => 3,
        CpuKind::Deferred => 4,
    };
    PARTS[i]
}

/// A case's bar; `None` without CPU measured.
fn row(c: &CaseResult) -> Option<stacked::Row> {
    let summary = c.summary.as_ref()?;
    let cpu = &summary.cpu;
    let kinds = cpu_by_kind(summary, &c.repetitions)?;
    Some(stacked::Row {
        name: c.name(),
        segments: kinds
            .iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|&(k, v)| {
                let (name, colour) = part(k);
                (name, v, colour)
            })
            .collect(),
        end: fmt_ns(cpu.ns_per_io.round() as u64),
    })
}

/// The HTML section: per job, a bar per method; empty when no case has
/// CPU measured.
pub fn html(r: &RunResult) -> String {
    let esc = super::html::escape;
    let mut body = String::new();
    for (job, cases) in super::groups(r) {
        let rows: Vec<stacked::Row> = cases.iter().filter_map(|c| row(c)).collect();
        // The legend names the parts some bar has.
        let parts: Vec<(&str, &str)> = PARTS
            .into_iter()
            .filter(|(name, _)| rows.iter().any(|r| r.segments.iter().any(|s| s.0 == *name)))
            .collect();
        if let Some(svg) = stacked::svg("cpu-kind", &parts, &rows) {
            let _ = write!(body, "<h3>{}</h3>\n{svg}", esc(&job.label()));
        }
    }
    if body.is_empty() {
        return body;
    }
    format!(
        "<section id=\"cpu-kind\">\n<h2>CPU per I/O by kind</h2>\n{body}<p class=\"legend\">{}</p>\n</section>\n",
        esc(why::CPU_KIND_LEGEND)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Cpu, Measurement};

    fn case(method: &str, cpu: Cpu) -> CaseResult {
        let m = Measurement {
            cpu,
            ios: 100_000,
            ..Measurement::default()
        };
        CaseResult {
            method: method.into(),
            summary: Some(m),
            ..CaseResult::default()
        }
    }

    /// A bar per method with CPU measured, a segment per kind it spent
    /// (a buffered write's write-back beside its own; a pool's or
    /// io_uring's helper threads beside the workers'), each titled in its
    /// own bar; the legend names only the kinds drawn; none without CPU.
    #[test]
    fn the_html_section_draws_cpu_per_io_by_kind_per_method() {
        let ms = 1_000_000;
        let buffered = Cpu {
            cpu_ns: 200 * ms,
            user_ns: 50 * ms,
            sys_ns: 150 * ms,
            ns_per_io: 3_000.0,
            own_ns_per_io: Some(2_000.0),
            ..Cpu::default()
        };
        let pool = Cpu {
            cpu_ns: 100 * ms,
            sqpoll_ns: 100 * ms,
            user_ns: 50 * ms,
            sys_ns: 50 * ms,
            ns_per_io: 2_000.0,
            ..Cpu::default()
        };
        let mut r = crate::report::testdata::fixture();
        r.cases = vec![
            case("buffered", buffered),
            case("threadpool", pool),
            case("direct", Cpu::default()),
        ];
        let h = html(&r);
        let bars: Vec<&str> = h.split("<g class=\"bar\">").skip(1).collect();
        assert_eq!(bars.len(), 2, "{h}");
        assert!(bars[0].contains(">buffered</text>"), "{h}");
        assert!(bars[0].contains("<title>user: 500 ns</title>"), "{h}");
        assert!(bars[0].contains("<title>system: 1.5 us</title>"), "{h}");
        assert!(
            bars[0].contains("<title>write-back (estimate): 1.0 us</title>"),
            "{h}"
        );
        assert!(bars[1].contains(">threadpool</text>"), "{h}");
        assert!(
            bars[1].contains("<title>helper threads: 1.0 us</title>"),
            "{h}"
        );
        assert!(bars[1].contains("<title>user: 500 ns</title>"), "{h}");
        assert!(!h.contains(">workers</text>"), "a kind no bar has: {h}");
        r.cases.truncate(0);
        assert_eq!(html(&r), "");
    }
}

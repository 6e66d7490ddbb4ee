//! `iopath compare` as text: a header that says which test the intervals
//! come from, the table, the cases not compared, the notes and a count.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::{CaseComparison, Label, Report, Side, Status, Test, MIB};
use crate::model::units::fmt_ns;

/// `+12.4%`, `-3.0%`, `0.0%`.
pub(super) fn pct(ratio: f64) -> String {
    if !ratio.is_finite() {
        return "?".into();
    }
    let v = (ratio - 1.0) * 100.0;
    if v.abs() < 0.05 {
        "0.0%".into()
    } else {
        format!("{v:+.1}%")
    }
}

/// `-15.0% to -9.8%`.
fn pct_interval(ci: [f64; 2]) -> String {
    format!("{} to {}", pct(ci[0]), pct(ci[1]))
}

/// The change of a compared case in words: `-12.4% (95% CI -15.0% to
/// -9.8%)`, with `, ±8% drift allowed` within one run.
pub fn change_text(c: &CaseComparison) -> String {
    match (c.ratio, c.ratio_ci95) {
        (Some(r), Some(ci)) => {
            let how = match (c.test, c.drift_allowance_pct) {
                (Some(Test::WithinRun), Some(d)) if d > 0.0 => {
                    format!(", ×/÷{:.2} drift allowed", 1.0 + d / 100.0)
                }
                (Some(Test::BetweenRuns), _) => {
                    format!(", between {} and {} runs", c.a_runs, c.b_runs)
                }
                _ => String::new(),
            };
            format!("{} (95% CI {}{how})", pct(r), pct_interval(ci))
        }
        _ => "-".into(),
    }
}

/// The equivalence margin as the interval it allows: `-5% and +5.3%`.
fn margin_text(pct: f64) -> String {
    let lo = 1.0 - pct / 100.0;
    format!("{} and {}", self::pct(lo), self::pct(1.0 / lo))
}

fn side_line(letter: &str, s: &Side) -> String {
    if s.paths.len() > 1 {
        format!(
            "{letter}: {} ({} runs: {}; first started {})\n",
            s.name,
            s.paths.len(),
            s.paths.join(", "),
            s.started_at
        )
    } else {
        format!("{letter}: {} (started {})\n", s.name, s.started_at)
    }
}

/// The comparison as text: a header, the table, the cases not compared,
/// the notes and a count.
pub fn render(r: &Report) -> String {
    let mut out = side_line("A", &r.a);
    out.push_str(&side_line("B", &r.b));
    let between = r.cases.iter().any(|c| c.test == Some(Test::BetweenRuns));
    if between {
        out.push_str(
            "With several runs a side, each run's median is one observation: MiB/s = geometric mean of the runs' medians, \
             n = runs x repetitions, and the 95% interval is Welch's t on the log medians, so run-to-run drift is in it.\n",
        );
    }
    if r.one_run_per_side() {
        if r.drift_allowance_pct > 0.0 {
            out.push_str(&format!(
                "One run per side cannot separate a change from run-to-run drift: the 95% interval of the repetitions is widened by \
                 the drift allowance of {}% (--drift: its ends divided and multiplied by 1 + that), and a change counts only beyond it. Give several runs per side \
                 (A1.json A2.json -- B1.json B2.json) to measure the drift instead.\n",
                r.drift_allowance_pct
            ));
        } else {
            out.push_str(
                "One run per side cannot separate a change from run-to-run drift, and --drift 0 allows for none: \
                 a change called here may be drift. Give several runs per side (A1.json A2.json -- B1.json B2.json).\n",
            );
        }
    }
    out.push_str(&format!(
        "change = B/A - 1 with its 95% interval; faster/slower only when the whole interval is on one side of 0, \
         no change only when it lies within {} both ways, else inconclusive (docs/compare.md); \
         p99 = median p99 latency, for information\n\n",
        margin_text(r.no_change_margin_pct)
    ));
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec![
            "method",
            "job",
            "A MiB/s",
            "n",
            "B MiB/s",
            "n",
            "change",
            "95% CI",
            "result",
            "p99 A → B",
        ]);
    let show_sync = r.cases.iter().any(|c| c.job.sync != r.cases[0].job.sync);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    let mib = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1}", v / MIB));
    let n = |present: bool, runs: usize, n: usize| {
        if !present {
            "-".into()
        } else if runs > 1 {
            format!("{runs}x{}", n / runs)
        } else {
            n.to_string()
        }
    };
    let lat = |v: Option<u64>| v.map_or("-".into(), fmt_ns);
    let mut not_compared = Vec::new();
    for c in &r.cases {
        let mut job = c.job();
        if show_sync {
            job.push_str(&format!(" sync={}", c.job.sync));
        }
        let result = match c.status {
            Status::Compared => c.label.map_or("-", Label::name).to_string(),
            Status::OnlyInA => "only in A".into(),
            Status::OnlyInB => "only in B".into(),
            Status::NotMeasured => {
                not_compared.push(format!(
                    "{} {job}: {}",
                    c.name,
                    c.reason.as_deref().unwrap_or("")
                ));
                match (c.a_n, c.b_n) {
                    (0, 0) => "not measured in A or B",
                    (0, _) => "not measured in A",
                    _ => "not measured in B",
                }
                .into()
            }
        };
        // One repetition a side within a run: the bootstrap has nothing to
        // resample.
        let ci = match c.ratio_ci95 {
            Some(ci) if c.test == Some(Test::BetweenRuns) || (c.a_n >= 2 && c.b_n >= 2) => {
                pct_interval(ci)
            }
            _ => "-".into(),
        };
        t.add_row(vec![
            Cell::new(&c.name),
            Cell::new(job),
            right(mib(c.a_median_bw_bytes_per_s)),
            right(n(c.status != Status::OnlyInB, c.a_runs, c.a_n)),
            right(mib(c.b_median_bw_bytes_per_s)),
            right(n(c.status != Status::OnlyInA, c.b_runs, c.b_n)),
            right(c.ratio.map_or("-".into(), pct)),
            right(ci),
            Cell::new(result),
            right(format!("{} → {}", lat(c.a_p99_ns), lat(c.b_p99_ns))),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    if !not_compared.is_empty() {
        out.push_str("\nnot compared:\n");
        for s in not_compared {
            out.push_str(&format!("  - {s}\n"));
        }
    }
    if !r.notes.is_empty() {
        out.push('\n');
        for note in &r.notes {
            out.push_str(&format!("note: {note}\n"));
        }
    }
    let count = |l: Label| r.cases.iter().filter(|c| c.label == Some(l)).count();
    let unsure = count(Label::Inconclusive);
    if unsure > 0 {
        out.push_str(&format!(
            "\ninconclusive: {unsure} case{} whose 95% interval holds both no change and a change beyond {}: \
             the data cannot tell; {}\n",
            if unsure == 1 { "" } else { "s" },
            margin_text(r.no_change_margin_pct),
            if r.one_run_per_side() {
                "give several runs a side (A1.json A2.json -- B1.json B2.json)"
            } else {
                "give more runs a side, or more repetitions (--repeat)"
            }
        ));
    }
    let compared = r
        .cases
        .iter()
        .filter(|c| c.status == Status::Compared)
        .count();
    out.push_str(&format!(
        "\n{} faster, {} slower, {} no change, {unsure} inconclusive; {} not compared\n",
        count(Label::Faster),
        count(Label::Slower),
        count(Label::NoChange),
        r.cases.len() - compared
    ));
    out
}

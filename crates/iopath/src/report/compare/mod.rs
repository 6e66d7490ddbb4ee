//! `iopath compare` on paper: the text (sides, how to read it, the table,
//! what follows it), kept to a width, and the JSON (the facts of
//! `analysis::compare` with the words of `report::text::compare` beside
//! them).
//!
//! The table takes the first layout that fits the width: one line per
//! case; the same without the p99 column (information only); two lines
//! per case (the job under the method, B under A, the interval under the
//! change), with p99 and then without; and last, that one with its cells
//! wrapped to the width.

use comfy_table::presets::{UTF8_FULL, UTF8_FULL_CONDENSED};
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use serde::Serialize;

use crate::analysis::compare::{CaseComparison, Note, Report, Side, Status, Test};
use crate::model::units::fmt_ns;
use crate::report::prose;
use crate::report::text::compare as words;

/// How the table lays a case out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// One line per case, ten columns.
    Wide,
    /// Two lines per case, six columns (five without p99).
    Stacked,
}

/// A table's shape: its layout, whether it shows p99, and whether its
/// cells wrap to fit a width (the last resort).
#[derive(Debug, Clone, Copy)]
struct Shape {
    layout: Layout,
    p99: bool,
    wrap_to: Option<usize>,
}

/// The shapes tried, in order of preference, for `width` columns.
fn shapes(width: usize) -> [Shape; 5] {
    let s = |layout, p99, wrap_to| Shape {
        layout,
        p99,
        wrap_to,
    };
    [
        s(Layout::Wide, true, None),
        s(Layout::Wide, false, None),
        s(Layout::Stacked, true, None),
        s(Layout::Stacked, false, None),
        s(Layout::Stacked, false, Some(width)),
    ]
}

/// The widest line of `text`, in characters (every character the table
/// and the words use is one column wide).
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The figures of one case as the table shows them.
struct Row {
    name: String,
    job: String,
    a_mib: String,
    a_n: String,
    b_mib: String,
    b_n: String,
    change: String,
    ci: String,
    result: &'static str,
    a_p99: String,
    b_p99: String,
}

/// `8` repetitions, `3x8` runs x repetitions, `-` where absent.
fn count(present: bool, runs: usize, n: usize) -> String {
    if !present {
        "-".into()
    } else if runs > 1 {
        format!("{runs}x{}", n / runs)
    } else {
        n.to_string()
    }
}

fn row(c: &CaseComparison, show_sync: bool) -> Row {
    let mut job = c.job();
    if show_sync {
        job.push_str(&format!(" sync={}", c.job.sync));
    }
    // One repetition a side within a run: the bootstrap has nothing to
    // resample.
    let ci = match c.ratio_ci95 {
        Some(ci) if c.test == Some(Test::BetweenRuns) || (c.a_n >= 2 && c.b_n >= 2) => {
            words::pct_interval(ci)
        }
        _ => "-".into(),
    };
    let lat = |v: Option<u64>| v.map_or("-".into(), fmt_ns);
    Row {
        name: c.name.clone(),
        job,
        a_mib: words::mib(c.a_median_bw_bytes_per_s),
        a_n: count(c.status != Status::OnlyInB, c.a_runs, c.a_n),
        b_mib: words::mib(c.b_median_bw_bytes_per_s),
        b_n: count(c.status != Status::OnlyInA, c.b_runs, c.b_n),
        change: c.ratio.map_or("-".into(), words::pct),
        ci,
        result: words::result(c),
        a_p99: lat(c.a_p99_ns),
        b_p99: lat(c.b_p99_ns),
    }
}

fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}

/// The header and the cells of one row in `layout`.
fn header(layout: Layout, p99: bool) -> Vec<&'static str> {
    let mut h = match layout {
        Layout::Wide => vec![
            "method", "job", "A MiB/s", "n", "B MiB/s", "n", "change", "95% CI", "result",
        ],
        Layout::Stacked => vec![
            "method\njob",
            "A MiB/s\nB MiB/s",
            "n A\nn B",
            "change\n95% CI",
            "result",
        ],
    };
    if p99 {
        h.push(match layout {
            Layout::Wide => "p99 A → B",
            Layout::Stacked => "p99 A\np99 B",
        });
    }
    h
}

fn cells(r: Row, layout: Layout, p99: bool) -> Vec<Cell> {
    let mut cells = match layout {
        Layout::Wide => vec![
            Cell::new(r.name),
            Cell::new(r.job),
            right(r.a_mib),
            right(r.a_n),
            right(r.b_mib),
            right(r.b_n),
            right(r.change),
            right(r.ci),
            Cell::new(r.result),
        ],
        Layout::Stacked => vec![
            Cell::new(format!("{}\n{}", r.name, r.job)),
            right(format!("{}\n{}", r.a_mib, r.b_mib)),
            right(format!("{}\n{}", r.a_n, r.b_n)),
            right(format!("{}\n{}", r.change, r.ci)),
            Cell::new(r.result.replacen("not measured ", "not measured\n", 1)),
        ],
    };
    if p99 {
        cells.push(match layout {
            Layout::Wide => right(format!("{} → {}", r.a_p99, r.b_p99)),
            Layout::Stacked => right(format!("{}\n{}", r.a_p99, r.b_p99)),
        });
    }
    cells
}

/// The table in `shape`.
fn table(r: &Report, shape: Shape) -> String {
    let mut t = Table::new();
    t.load_preset(match shape.layout {
        Layout::Wide => UTF8_FULL_CONDENSED,
        Layout::Stacked => UTF8_FULL,
    });
    match shape.wrap_to {
        Some(w) => t
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(w).unwrap_or(u16::MAX)),
        None => t.set_content_arrangement(ContentArrangement::Disabled),
    };
    t.set_header(header(shape.layout, shape.p99));
    let show_sync = words::shows_sync(r);
    for c in &r.cases {
        t.add_row(cells(row(c, show_sync), shape.layout, shape.p99));
    }
    t.to_string()
}

/// The table of the cases in the first shape that fits `width` columns,
/// and whether it shows p99.
fn fitted_table(r: &Report, width: usize) -> (String, bool) {
    let shapes = shapes(width);
    for shape in &shapes[..shapes.len() - 1] {
        let t = table(r, *shape);
        if widest(&t) <= width {
            return (t, shape.p99);
        }
    }
    let last = shapes[shapes.len() - 1];
    (table(r, last), last.p99)
}

/// The comparison as text in `width` columns: the sides, how to read the
/// table, the table, the cases not compared, the notes and the counts.
pub fn render(r: &Report, width: usize) -> String {
    let mut out = words::side_line("A", &r.a);
    out.push_str(&words::side_line("B", &r.b));
    out.push_str(&words::preamble(r));
    out.push('\n');
    let (t, p99) = fitted_table(r, width);
    out.push_str(&t);
    out.push('\n');
    if !p99 {
        out.push_str(&words::p99_left_out(width));
    }
    out.push_str(&words::closing(r));
    prose::fit(&out, width)
}

/// A case in the JSON: its facts, and why it is not compared in words.
#[derive(Serialize)]
struct CaseJson<'a> {
    #[serde(flatten)]
    case: &'a CaseComparison,
    reason: Option<String>,
}

/// A note in the JSON: its code and fields, and its words.
#[derive(Serialize)]
struct NoteJson<'a> {
    #[serde(flatten)]
    note: &'a Note,
    text: String,
}

/// The JSON document of `iopath compare --json` (docs/compare.md).
#[derive(Serialize)]
struct ReportJson<'a> {
    a: &'a Side,
    b: &'a Side,
    fail_above_pct: Option<f64>,
    drift_allowance_pct: f64,
    no_change_margin_pct: f64,
    cases: Vec<CaseJson<'a>>,
    notes: Vec<NoteJson<'a>>,
    regressions: usize,
}

/// The comparison as `--json` prints it: pretty JSON, a line feed last.
pub fn to_json(r: &Report) -> serde_json::Result<String> {
    let doc = ReportJson {
        a: &r.a,
        b: &r.b,
        fail_above_pct: r.fail_above_pct,
        drift_allowance_pct: r.drift_allowance_pct,
        no_change_margin_pct: r.no_change_margin_pct,
        cases: r
            .cases
            .iter()
            .map(|case| CaseJson {
                case,
                reason: words::reason(case),
            })
            .collect(),
        notes: r
            .notes
            .iter()
            .map(|note| NoteJson {
                note,
                text: words::note(r, note),
            })
            .collect(),
        regressions: r.regressions,
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

#[cfg(test)]
mod tests;

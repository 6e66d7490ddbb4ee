//! The terminal report: one table per pattern, methods as rows, each
//! compared with the best method of that pattern, notes under the table.
//! By default the tables keep to [`WIDTH`] columns (method, job, MiB/s,
//! ±95%, IOPS, p99, device, CPU/IO, cache, vs best); `--wide` adds n,
//! p50, p99.9 and the notes column.

use crate::report::text::framing;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table};

use super::heading::{run_notes, target_line};
use super::prose::wrap;

use crate::model::units::{
    fmt_bs, fmt_bytes, fmt_count, fmt_device_fraction, fmt_ns, fmt_percentile,
};
use crate::model::Pattern;
use crate::result::{CaseResult, Measurement, RunResult, TargetKind};

const MIB: f64 = 1024.0 * 1024.0;

/// The width the default report keeps to: tables, legend and warnings.
pub const WIDTH: usize = 120;

/// Render the whole report as text: the tables in [`WIDTH`] columns, or
/// with every column when `wide`.
pub fn render(r: &RunResult, wide: bool) -> String {
    // The result's strings go into lines of this text: each kept to its
    // line (a line feed in a value is shown, `\x0a`).
    let r = &*crate::model::untrusted::one_line(r);
    let mut out = head(r, wide);
    let caveat = patterns(r, wide, &mut out);
    out.push_str(&crate::report::text::verdict::neighbour(&r.cases));
    let skipped = not_run(r);
    if !skipped.is_empty() {
        out.push_str("\nnot run:\n");
        for s in skipped {
            out.push_str(&format!("  - {s}\n"));
        }
    }
    out.push_str(&super::costs::text(r, WIDTH));
    out.push_str(&super::latency_split::text(r, WIDTH));
    out.push_str(&warnings(r));
    if r.interrupted {
        // What was interrupted, where no verdict said it already.
        match caveat {
            Some(c) => out.push_str(&format!("\n{c}\n")),
            None => out.push_str(&format!(
                "\ninterrupted ({}): the tables hold the repetitions finished before it\n",
                crate::stop_cause()
            )),
        }
    }
    // Every sentence in WIDTH columns, wide or not: only a --wide table is
    // wider.
    super::prose::fit(&out, WIDTH)
}

/// What comes before the tables: the target, the legend, the run's notes
/// and the grids.
fn head(r: &RunResult, wide: bool) -> String {
    let mut out = String::new();
    if let Some(t) = &r.target {
        out.push_str(&target_line(r, t));
        out.push('\n');
        let in_memory = t.kind != TargetKind::BlockDevice
            && matches!(r.system.fs_type.as_deref(), Some("tmpfs" | "ramfs"));
        let matched = r.cases.iter().any(|c| c.concurrency.is_some());
        let mut l = legend(wide, in_memory, matched);
        // Only where a case was set apart: the cells it explains.
        if r.cases.iter().any(crate::result::served::is_set_apart) {
            l.push_str("; ");
            l.push_str(crate::report::text::served::LEGEND);
        }
        out.push_str(&wrap(&l, WIDTH, "", ""));
    }
    for line in run_notes(r) {
        out.push_str(&line);
        out.push('\n');
    }
    let conditions = r
        .config
        .conditions
        .as_ref()
        .map(super::text::conditions::lines);
    out.extend(conditions.into_iter().flatten().map(|l| l + "\n"));
    for g in super::grids::all(r) {
        out.push('\n');
        out.push_str(&super::grids::text(&g, wide));
    }
    out
}

/// Each pattern's table and its verdicts, in the order the cases ran,
/// onto `out`; the interruption's caveat when no verdict said it (it goes
/// under the first verdict).
fn patterns(r: &RunResult, wide: bool, out: &mut String) -> Option<String> {
    let mut patterns: Vec<Pattern> = Vec::new();
    for c in &r.cases {
        if !patterns.contains(&c.pattern) {
            patterns.push(c.pattern);
        }
    }
    let mut caveat = super::interrupted_caveat(r);
    for pattern in patterns {
        let p = pattern.name();
        let cases: Vec<&CaseResult> = r.cases.iter().filter(|c| c.pattern == pattern).collect();
        out.push('\n');
        if cases.iter().all(|c| c.not_reached()) {
            // A table of dashes says less than this line.
            out.push_str(&not_reached_line(p, cases.len()));
            out.push('\n');
            continue;
        }
        out.push_str(&render_pattern(p, &cases, show_placement(r), wide));
        for v in r.verdicts.iter().filter(|v| v.job.pattern == pattern) {
            out.push_str("verdict:\n");
            if let Some(caveat) = caveat.take() {
                out.push_str(&format!("  {caveat}\n"));
            }
            for line in crate::report::text::verdict::lines(v) {
                out.push_str(&format!("  {line}\n"));
            }
        }
    }
    caveat
}

/// The warnings section, each with the cases it concerns; empty when the
/// run has none.
fn warnings(r: &RunResult) -> String {
    let mut out = String::new();
    if !r.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &r.warnings {
            let mut line = format!("[{}] {}", w.code, super::text::warnings::message(w));
            let cases = super::text::warnings::case_groups(w, r);
            if !cases.is_empty() {
                line.push_str(&format!(": {cases}"));
            }
            out.push_str(&wrap(&line, WIDTH, "  - ", "    "));
        }
    }
    out
}

/// A pattern the run never reached, in one line instead of a table.
pub fn not_reached_line(p: &str, cases: usize) -> String {
    format!(
        "{} ({p}): not reached before the interruption ({}, listed under \"not run\")",
        pattern_title(p),
        crate::model::units::n_of(cases as u64, "case", "cases")
    )
}

/// The cases that did not run, one line per reason: the cases it
/// concerns by method and job as the verdicts name them (`uring-iopoll on
/// read 1M Q8T1, randread 4k Q32T1`), counted when more than three
/// (`... (20 cases)`), then the reason.
fn not_run(r: &RunResult) -> Vec<String> {
    let mut by_reason: Vec<(&str, Vec<(String, String)>)> = Vec::new();
    for c in &r.cases {
        let Some(why) = c.skipped.as_deref() else {
            continue;
        };
        let case = (c.name(), job_shown(c));
        match by_reason.iter_mut().find(|(w, _)| *w == why) {
            Some((_, v)) => v.push(case),
            None => by_reason.push((why, vec![case])),
        }
    }
    by_reason
        .into_iter()
        .map(|(why, cases)| {
            let pairs: Vec<(&str, &str)> = cases
                .iter()
                .map(|(m, j)| (m.as_str(), j.as_str()))
                .collect();
            let who = super::prose::by_method(&pairs, " ").join("; ");
            if cases.len() > 3 {
                format!("{who} ({} cases): {why}", cases.len())
            } else {
                format!("{who}: {why}")
            }
        })
        .collect()
}

/// Whether the tables show where each case ran: when the run placed its
/// workers or buffers, or the machine has more than one NUMA node.
pub fn show_placement(r: &RunResult) -> bool {
    r.cases.iter().any(|c| {
        c.pair.is_some()
            || c.placement.as_ref().is_some_and(|p| {
                !p.cpus.is_empty() || p.mem_policy.is_some() || p.sqpoll_cpu.is_some()
            })
    }) || r
        .system
        .topology
        .as_ref()
        .is_some_and(|t| t.nodes.len() > 1)
}

/// The legend of the tables' columns, one paragraph; `in_memory` for a
/// file on tmpfs.
fn legend(wide: bool, in_memory: bool, matched: bool) -> String {
    let mut s = String::from(if wide {
        "MiB/s = median of n repetitions, "
    } else {
        "MiB/s = median of the repetitions, "
    });
    s.push_str(&format!(
        "±95% = how far the median's 95% interval reaches from it, relative to it ({}); {}; ",
        framing::tilde_spread("~"),
        framing::tilde_percentiles(
            "~",
            if wide {
                &["p50", "p99", "p99.9"]
            } else {
                &["p99"]
            }
        )
    ));
    s.push_str(
        "device = bytes the disk moved / bytes asked; CPU/IO includes kernel and SQPOLL time; \
         cache = the file's pages left in the page cache",
    );
    if in_memory {
        s.push_str(" (on tmpfs the whole file: it lives there)");
    }
    if matched {
        s.push_str(
            "; job = block size, then N and the requests in flight its methods are compared \
             at, and how each kept them: threads x depth (1x32: one thread at depth 32, as \
             io_uring; 32x1: 32 threads of one request each, as pread)",
        );
    }
    s.push_str(
        "; vs best = MiB/s over the highest median in the table (the verdict ranks a job by \
         its paired per-round ratios once it can make a call, else by its medians too)",
    );
    if !wide {
        s.push_str(
            "; --wide adds the columns n, p50, p99.9 and notes (the depth a synchronous method \
             ran at; longer notes stay under the table)",
        );
    }
    s
}

/// A column of a pattern's table: its header, and whether the default
/// (not `--wide`) view shows it.
#[derive(Clone, Copy)]
struct Column {
    header: &'static str,
    default: bool,
}

/// The columns of a pattern's table, every one (`--wide` shows them all),
/// with `placement` before the notes when the tables show where cases ran.
fn columns(placement: bool) -> Vec<Column> {
    let col = |header, default| Column { header, default };
    let mut columns = vec![
        col("method", true),
        col("job", true),
        col("MiB/s", true),
        col("±95%", true),
        col("n", false),
        col("IOPS", true),
        col("p50", false),
        col("p99", true),
        col("p99.9", false),
        col("device", true),
        col("CPU/IO", true),
        col("cache", true),
        col("vs best", true),
        col("notes", false),
    ];
    if placement {
        columns.insert(columns.len() - 1, col("placement", true));
    }
    columns
}

/// A note said under a table rather than in its row, with the case it
/// concerns as the row names it.
struct Footnote {
    method: String,
    job: String,
    note: String,
}

impl Footnote {
    fn of(c: &CaseResult, note: String) -> Footnote {
        Footnote {
            method: c.name(),
            job: job(c),
            note,
        }
    }
}

fn render_pattern(pattern: &str, cases: &[&CaseResult], placement: bool, wide: bool) -> String {
    // The reference method `null` does no I/O: the best is the best real
    // method, and null's own cell says what it is.
    let best_bw = cases
        .iter()
        .filter(|c| c.method != iopath_io::Method::Null)
        .filter(|c| !crate::result::served::is_set_apart(c))
        .filter_map(|c| c.summary.as_ref())
        .map(|s| s.bw_bytes_per_s)
        .fold(0.0f64, f64::max);
    let columns = columns(placement);
    let shown: Vec<bool> = columns.iter().map(|c| wide || c.default).collect();
    let pick = |row: Vec<Cell>| -> Vec<Cell> {
        row.into_iter()
            .zip(&shown)
            .filter(|(_, &s)| s)
            .map(|(c, _)| c)
            .collect()
    };
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(
        columns
            .iter()
            .zip(&shown)
            .filter(|(_, &s)| s)
            .map(|(c, _)| c.header),
    );
    // The cases with one note are named together.
    let mut footnotes: Vec<Footnote> = Vec::new();
    for c in cases {
        let mut row = case_row(c, best_bw, wide, &mut footnotes);
        if placement {
            let cell = c.placement.as_ref().map_or("-".into(), |p| p.short());
            row.insert(row.len() - 1, Cell::new(cell));
        }
        let width = row.len();
        t.add_row(pick(row));
        // A case of streams: each stream's own figures under it.
        for cells in crate::report::streams::explain_rows(c) {
            let right = |t: String| Cell::new(t).set_alignment(CellAlignment::Right);
            let mut row: Vec<Cell> = cells
                .into_iter()
                .enumerate()
                .map(|(i, t)| if i < 2 { Cell::new(t) } else { right(t) })
                .collect();
            row.resize_with(width, || Cell::new(""));
            t.add_row(pick(row));
        }
    }
    arrange(&mut t, &columns, wide);
    let mut s = format!("{} ({pattern})\n{t}\n", pattern_title(pattern));
    for f in notes_by_case(&footnotes) {
        s.push_str(&format!("  - {f}\n"));
    }
    s
}

/// A case's row, every column but placement; the notes said under the
/// table go to `footnotes`.
fn case_row(c: &CaseResult, best_bw: f64, wide: bool, footnotes: &mut Vec<Footnote>) -> Vec<Cell> {
    let mut notes: Vec<String> = depth_note(c).into_iter().collect();
    for n in other_notes(c) {
        footnotes.push(Footnote::of(c, n.clone()));
        notes.push("see below".to_string());
    }
    match (&c.summary, &c.skipped, &c.error) {
        // Never reached is not refused: it could run here.
        (_, Some(_), _) if c.not_reached() => {
            dash_row(c, "not reached", framing::NOT_REACHED_NOTE, wide)
        }
        (_, Some(_), _) => dash_row(c, "not run", "skipped (see the end)", wide),
        (_, _, Some(err)) => {
            footnotes.push(Footnote::of(c, format!("failed: {err}")));
            dash_row(c, "FAILED", "FAILED", wide)
        }
        (Some(s), _, _) => measured_row(c, s, best_bw, &notes),
        (None, None, None) => dash_row(c, "no data", "no data", wide),
    }
}

/// The row of a case with a summary: its figures, and how it compares
/// with the best throughput of the table.
fn measured_row(c: &CaseResult, s: &Measurement, best_bw: f64, notes: &[String]) -> Vec<Cell> {
    let right = |t: String| Cell::new(t).set_alignment(CellAlignment::Right);
    let rel = if best_bw > 0.0 {
        s.bw_bytes_per_s / best_bw
    } else {
        0.0
    };
    vec![
        Cell::new(c.name()),
        Cell::new(job(c)),
        right(format!("{:.1}", s.bw_bytes_per_s / MIB)),
        right(spread(c)),
        right(measured_n(c).to_string()),
        right(fmt_count(s.iops)),
        right(fmt_percentile(s.lat_ns.p50, 0.5, s.lat_ns.count)),
        right(fmt_percentile(s.lat_ns.p99, 0.99, s.lat_ns.count)),
        right(fmt_percentile(s.lat_ns.p999, 0.999, s.lat_ns.count)),
        right(s.device_fraction.map_or("-".into(), fmt_device_fraction)),
        right(fmt_ns(s.cpu.ns_per_io.round() as u64)),
        right(fmt_bytes(s.memory.page_cache_bytes)),
        right(if c.method == iopath_io::Method::Null {
            "ceiling".to_string()
        } else if let Some(apart) = crate::report::text::served::cell(c) {
            apart.to_string()
        } else if rel >= 0.9995 {
            "best".to_string()
        } else {
            format!("{rel:.2}x")
        }),
        Cell::new(dedup_join(notes)),
    ]
}

/// How the table fits: as wide as it needs with `--wide`; else numbers
/// keep their width and the method, job and placement wrap if a table
/// would be wider than the report.
fn arrange(t: &mut Table, columns: &[Column], wide: bool) {
    if wide {
        t.set_content_arrangement(ContentArrangement::Disabled);
        return;
    }
    t.set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(WIDTH as u16);
    for (i, c) in columns.iter().filter(|c| c.default).enumerate() {
        if !matches!(c.header, "method" | "job" | "placement") {
            if let Some(col) = t.column_mut(i) {
                col.set_constraint(ColumnConstraint::ContentWidth);
            }
        }
    }
}

/// Notes under a table, each once, after the cases it concerns (method
/// and job, as the rows name them: `uring 1M Q8T1 (SEQ1M Q8T1): ...`,
/// `direct 1M Q1T1, uring 1M Q8T1: tmpfs accepts O_DIRECT ...`).
fn notes_by_case(notes: &[Footnote]) -> Vec<String> {
    let mut by_note: Vec<(&str, Vec<(&str, &str)>)> = Vec::new();
    for f in notes {
        let case = (f.method.as_str(), f.job.as_str());
        match by_note.iter_mut().find(|(x, _)| *x == f.note) {
            Some((_, v)) => v.push(case),
            None => by_note.push((&f.note, vec![case])),
        }
    }
    by_note
        .into_iter()
        .map(|(n, cases)| {
            let who = super::prose::by_method(&cases, " ").join("; ");
            if n.starts_with("failed: ") {
                format!("{who} {n}")
            } else {
                format!("{who}: {n}")
            }
        })
        .collect()
}

/// The row of a case with nothing measured: dashes, and what happened in
/// the last column (`vs best` by default, the notes when wide).
fn dash_row(c: &CaseResult, short: &str, long: &str, wide: bool) -> Vec<Cell> {
    let dash = || Cell::new("-").set_alignment(CellAlignment::Right);
    let mut v = vec![Cell::new(c.name()), Cell::new(job(c))];
    v.extend((0..10).map(|_| dash()));
    if wide {
        v.extend([dash(), Cell::new(long)]);
    } else {
        v.extend([
            Cell::new(short).set_alignment(CellAlignment::Right),
            Cell::new(""),
        ]);
    }
    v
}

fn dedup_join(v: &[String]) -> String {
    dedup_vec(v.to_vec()).join("; ")
}

/// Measured repetitions: `repetition_control.measured`, or for a schema-1
/// result (which has none) the repetitions the summary is made of.
pub fn measured_n(c: &CaseResult) -> usize {
    c.repetition_control
        .as_ref()
        .map_or_else(|| c.measured().len(), |rc| rc.measured as usize)
}

/// The `±95%` column: how far the median throughput's 95% interval
/// reaches from the median, on its farther side, relative to the median
/// (`stats::median_ci_rel`: the interval lies within ± this), `~` below 95%
/// confidence (fewer than 6 repetitions: the interval is then the min-max
/// range of the samples). Schema-1 results have no
/// `repetition_control`: the same figure comes from `stats`.
pub fn spread(c: &CaseResult) -> String {
    let (rel, level) = match (&c.repetition_control, &c.stats) {
        (Some(rc), _) => (rc.ci_rel, rc.ci_level),
        (None, Some(st)) => {
            let bw = &st.bw_bytes_per_s;
            (
                (bw.n >= 2).then(|| crate::stats::median_ci_rel(bw)),
                bw.ci95_median_level,
            )
        }
        (None, None) => (None, 0.0),
    };
    match rel {
        Some(rel) if rel.is_finite() => {
            format!("{}{:.1}%", if level < 0.95 { "~" } else { "" }, rel * 100.0)
        }
        _ => "-".into(),
    }
}

/// The job as the tables show it: block size, depth it ran at, threads
/// (`4k Q32T1`).
pub fn job(c: &CaseResult) -> String {
    job_at(c, c.queue_depth)
}

fn job_at(c: &CaseResult, depth: u32) -> String {
    let mut s = match c.concurrency {
        Some(n) => format!("{} N{n} {}", fmt_bs(c.block_size), way(c)),
        None => format!("{} Q{depth}T{}", fmt_bs(c.block_size), c.threads),
    };
    match (&c.label, &c.pair) {
        (Some(l), Some(p)) => s.push_str(&format!(" ({l}; {p})")),
        (Some(l), None) => s.push_str(&format!(" ({l})")),
        (None, Some(p)) => s.push_str(&format!(" ({p})")),
        (None, None) => {}
    }
    s
}

/// How a case kept its requests in flight: threads x depth per thread
/// (`1x32`: one thread at depth 32; `32x1`: 32 threads of one request),
/// or a thread pool's size (`pool 8`: a pool of 8 threads serving one
/// submitter).
pub fn way(c: &CaseResult) -> String {
    match c.pool_threads {
        Some(p) => format!("pool {p}"),
        None => format!("{}x{}", c.threads, c.queue_depth),
    }
}

/// The job as a case's table row names it, with its pattern: the depth
/// it ran at (`read 1M Q1T1` for a synchronous method asked for Q8; for a
/// case that never ran, the depth its row shows), and its label or
/// placement (`read 1M Q8T1 (SEQ1M Q8T1)`).
pub fn job_shown(c: &CaseResult) -> String {
    format!("{} {}", c.pattern, job(c))
}

/// The heading of a pattern's table.
pub fn pattern_title(p: &str) -> &str {
    match p {
        "read" => "sequential read",
        "write" => "sequential write",
        "randread" => "random read",
        "randwrite" => "random write",
        "randrw" => "random read/write",
        other => other,
    }
}

pub fn dedup_vec(v: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// The depth note of a synchronous method given a deeper queue
/// (`qd 32→1 (sync method)`), if it applies.
pub fn depth_note(c: &CaseResult) -> Option<String> {
    (c.queue_depth < c.queue_depth_requested).then(|| {
        format!(
            "qd {}→{} (sync method)",
            c.queue_depth_requested, c.queue_depth
        )
    })
}

/// The case's notes but the engine's "is synchronous" one, which
/// [`depth_note`] says in short, and the mapping's address (in the JSON,
/// and in daxbench's grid).
pub fn other_notes(c: &CaseResult) -> impl Iterator<Item = &String> {
    c.notes.iter().filter(|n| {
        !n.contains("is synchronous")
            && !n.starts_with(iopath_io::engines::mmap::MAPPING_NOTE_PREFIX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testdata::fixture;

    /// A thread pool's depth cell says the pool, not one thread at depth N.
    #[test]
    fn a_thread_pools_depth_cell_names_its_pool() {
        let mut c = fixture().cases[0].clone();
        (c.threads, c.queue_depth, c.concurrency) = (1, 8, Some(8));
        assert_eq!(way(&c), "1x8");
        c.pool_threads = Some(8);
        assert_eq!(way(&c), "pool 8");
    }

    #[test]
    fn the_spread_column_is_the_farther_side_of_the_interval_and_says_so() {
        let r = fixture();
        let mut c = r.cases[1].clone();
        // Schema 1 (no repetition_control): from the stats. 6 repetitions,
        // interval [90, 130] around a median of 100: 30% on its farther
        // side (a half-width (hi - lo) / 2 would say 20%).
        c.repetition_control = None;
        let bw = |xs: &[f64]| crate::stats::describe(xs).unwrap();
        c.stats.as_mut().unwrap().bw_bytes_per_s = bw(&[90.0, 98.0, 100.0, 100.0, 102.0, 130.0]);
        assert_eq!(spread(&c), "30.0%");
        // 5 repetitions: the min-max range, below 95%: marked.
        c.stats.as_mut().unwrap().bw_bytes_per_s = bw(&[90.0, 98.0, 100.0, 102.0, 130.0]);
        assert_eq!(spread(&c), "~30.0%");
        // The legend says what the figure is, and that `~` is a range.
        let text = render(&r, false);
        let unwrapped = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            unwrapped.contains(&format!(
                "±95% = how far the median's 95% interval reaches from it, relative to it ({})",
                framing::tilde_spread("~")
            )),
            "{text}"
        );
    }

    #[test]
    fn a_run_that_finished_has_no_caveat_and_an_interrupted_one_lists_its_cases() {
        let mut r = fixture();
        assert_eq!(crate::report::interrupted_caveat(&r), None);
        r.interrupted = true;
        r.cases[3].repetitions[4].interrupted = true;
        r.cases[4].repetitions.clear();
        r.cases[4].summary = None;
        let caveat = crate::report::interrupted_caveat(&r).unwrap();
        assert_eq!(
            caveat,
            "Interrupted (Ctrl-C or SIGTERM) during read 1M Q8T1: the verdicts cover the \
             repetitions that finished before it; cut short (measured over the repetitions it \
             completed): uring read 1M Q8T1; not run: aio read 1M Q8T1."
        );
        // A case the run never reached counts as not run, under its name.
        r.cases[2].skipped = Some(format!(
            "{} (Ctrl-C or SIGTERM) before this case",
            crate::result::NOT_REACHED
        ));
        let caveat = crate::report::interrupted_caveat(&r).unwrap();
        assert!(
            caveat.ends_with("; not run: aio read 1M Q8T1; never reached: 1 case."),
            "{caveat}"
        );
    }

    /// Review of issue 18: Ctrl-C between two repetitions ends a case
    /// with no repetition marked interrupted; the caveat still names the
    /// job it cut and the case cut short.
    #[test]
    fn a_case_stopped_between_repetitions_counts_as_cut_short() {
        let never = |r: &mut RunResult, from: usize| {
            for c in &mut r.cases[from..] {
                c.skipped = Some(format!(
                    "{} (Ctrl-C or SIGTERM) before this case",
                    crate::result::NOT_REACHED
                ));
                c.summary = None;
                c.repetitions.clear();
            }
        };
        // A case of an earlier job that stopped early (refused after good
        // repetitions) was not cut by the interruption (second review).
        let mut r = fixture();
        r.interrupted = true;
        never(&mut r, 12);
        let rc = r.cases[3].repetition_control.as_mut().unwrap();
        rc.stopped_by = crate::stats::StopReason::Stopped;
        let caveat = crate::report::interrupted_caveat(&r).unwrap();
        assert!(!caveat.contains("uring read 1M Q8T1"), "{caveat}");
        // Stopped in the read job, the job the signal came in.
        let mut r = fixture();
        r.interrupted = true;
        never(&mut r, 6);
        let rc = r.cases[3].repetition_control.as_mut().unwrap();
        rc.stopped_by = crate::stats::StopReason::Stopped;
        assert!(r.cases[3].repetitions.iter().all(|m| !m.interrupted));
        let caveat = crate::report::interrupted_caveat(&r).unwrap();
        assert!(
            caveat.starts_with("Interrupted (Ctrl-C or SIGTERM) during read 1M Q8T1: "),
            "{caveat}"
        );
        assert!(
            caveat.contains(
                "cut short (measured over the repetitions it completed): uring read 1M Q8T1"
            ),
            "{caveat}"
        );
    }

    /// Issue 18 (output): an interrupted run reads like a finished one:
    /// what was interrupted, the cases it never reached counted and
    /// grouped, no table of dashes for a pattern it never reached, and
    /// nothing wider than the report.
    #[test]
    fn an_interrupted_run_says_what_it_cut_and_groups_what_it_never_reached() {
        let mut r = fixture();
        r.interrupted = true;
        // Stopped in the randread job's last round; write never started.
        r.cases[9].repetitions[4].interrupted = true;
        for c in &mut r.cases[12..] {
            // As the runner records a case it never reached: at the depth
            // asked, for it never ran at another.
            c.queue_depth = c.queue_depth_requested;
            c.skipped = Some(format!(
                "{} (Ctrl-C or SIGTERM) before this case",
                crate::result::NOT_REACHED
            ));
            c.summary = None;
            c.repetitions.clear();
        }
        let caveat = crate::report::interrupted_caveat(&r).unwrap();
        assert!(
            caveat.starts_with("Interrupted (Ctrl-C or SIGTERM) during randread 4k Q32T1: "),
            "{caveat}"
        );
        // The cases it never reached are counted here and named once,
        // under "not run" (an interrupted run named them three times).
        assert!(caveat.ends_with("; never reached: 6 cases."), "{caveat}");
        let text = render(&r, false);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= WIDTH, "{widest} columns:\n{text}");
        assert!(
            text.contains("sequential write (write): not reached before the interruption (6 cases"),
            "{text}"
        );
        assert!(!text.contains("│ buffered     ┆ 1M Q8T1"), "{text}");
        // The reasons once each, with the cases they concern.
        let not_run = text.split("\nnot run:\n").nth(1).unwrap();
        let unwrapped = not_run.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            unwrapped.contains(
                "- buffered, direct, mmap, uring, aio, uring-iopoll on write 1M Q8T1 (6 cases): the run was interrupted (Ctrl-C or SIGTERM) before this case"
            ),
            "{not_run}"
        );
        assert_eq!(
            not_run.matches("the run was interrupted").count(),
            1,
            "{not_run}"
        );
        assert!(
            unwrapped.contains("- uring-iopoll on read 1M Q8T1, randread 4k Q32T1: "),
            "{not_run}"
        );
    }

    /// Issue 18 (output): on tmpfs the file is memory: no write verdict
    /// speaks of write-back bursts and dirty limits, and the legend says
    /// what the cache column holds there.
    #[test]
    fn on_tmpfs_nothing_speaks_of_write_back_or_a_device() {
        let mut r = fixture();
        r.system.dirty_limits = Some(crate::system::metrics::dirty::DirtyLimits {
            limit_bytes: 4 << 30,
            background_bytes: 2 << 30,
            ratio_pct: Some(20),
            background_ratio_pct: Some(10),
            base_bytes: 20 << 30,
            base_is_cgroup: false,
        });
        r.verdicts = crate::analysis::verdict::of_run(&r);
        let ext4 = render(&r, false);
        assert!(ext4.contains("Writes: "), "{ext4}");
        assert!(!ext4.contains("on tmpfs"), "{ext4}");
        r.system.fs_type = Some("tmpfs".into());
        r.system.device = None;
        r.verdicts = crate::analysis::verdict::of_run(&r);
        let tmpfs = render(&r, false);
        assert!(!tmpfs.contains("Writes: "), "{tmpfs}");
        assert!(!tmpfs.contains("dirty limit"), "{tmpfs}");
        let unwrapped = tmpfs.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            unwrapped.contains("cache = the file's pages left in the page cache (on tmpfs the whole file: it lives there)"),
            "{tmpfs}"
        );
    }

    /// The header cells of the first table of a report.
    fn header(text: &str) -> Vec<String> {
        let line = text.lines().find(|l| l.starts_with("│ method ")).unwrap();
        line.trim_matches('│')
            .split('┆')
            .map(|c| c.trim().to_string())
            .collect()
    }

    #[test]
    fn the_default_report_keeps_to_120_columns_and_wide_shows_every_column() {
        let mut r = fixture();
        // A preset's long label and a long note: they wrap, the numbers
        // do not.
        r.cases[0].label =
            Some("sequential 1 MiB reads at depth 8, one thread (SEQ1M Q8T1)".into());
        r.cases[1].notes.push(
            "span 8 GiB capped at the file size, 32 MiB (use a larger --size), which is a long note"
                .into(),
        );
        let text = render(&r, false);
        // Every line: tables, legend, notes, verdicts, not run, warnings.
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= WIDTH, "{widest} columns:\n{text}");
        assert!(text.lines().filter(|l| l.starts_with('│')).count() >= 18);
        assert_eq!(
            header(&text),
            [
                "method", "job", "MiB/s", "±95%", "IOPS", "p99", "device", "CPU/IO", "cache",
                "vs best"
            ]
        );
        // A case that did not run says so in its last cell.
        let skipped = text
            .lines()
            .find(|l| l.starts_with("│ uring-iopoll "))
            .unwrap();
        assert!(
            skipped
                .trim_end_matches('│')
                .trim_end()
                .ends_with("not run"),
            "{skipped}"
        );
        // The note is under the table.
        assert!(text.contains("which is a long note"), "{text}");
        let unwrapped = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            unwrapped.contains("--wide adds the columns n, p50, p99.9 and notes"),
            "{text}"
        );

        let wide = render(&r, true);
        assert_eq!(
            header(&wide),
            [
                "method", "job", "MiB/s", "±95%", "n", "IOPS", "p50", "p99", "p99.9", "device",
                "CPU/IO", "cache", "vs best", "notes"
            ]
        );
        assert!(wide.lines().any(|l| l.chars().count() > WIDTH));
        // Only its tables are wider: the sentences keep to WIDTH.
        assert!(
            wide.lines()
                .filter(|l| !l.starts_with(['┌', '│', '╞', '└']))
                .all(|l| l.chars().count() <= WIDTH),
            "{wide}"
        );
        assert!(wide.contains("skipped (see the end)"));
        assert!(!wide.contains("--wide adds"));
    }
}

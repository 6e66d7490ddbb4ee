//! The terminal report: one table per pattern, methods as rows, each
//! compared with the best method of that pattern, notes under the table.
//! By default the tables keep to [`WIDTH`] columns (method, job, MiB/s,
//! ±95%, IOPS, p99, device, CPU/IO, cache, vs best); `--wide` adds n,
//! p50, p99.9 and the notes column.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table};

use super::prose::{case_groups, wrap};
use crate::result::{CaseResult, RunResult};
use crate::units::{fmt_bs, fmt_bytes, fmt_count, fmt_device_fraction, fmt_ns, fmt_percentile};

const MIB: f64 = 1024.0 * 1024.0;

/// The width the default report keeps to: tables, legend and warnings.
pub const WIDTH: usize = 120;

/// How the target line describes a block device: its block sizes, kind,
/// queue and the stack below it (`512 B blocks, non-rotational, scheduler
/// none, nr_requests 128, read-ahead 128 KiB, loop0 -> vda`).
fn block_device_words(r: &RunResult) -> String {
    let mut w = vec!["block device".to_string()];
    if let Some(d) = &r.system.device {
        match (d.logical_block_size, d.physical_block_size) {
            (Some(l), Some(p)) if l != p => w.push(format!("{l}/{p} B blocks")),
            (Some(l), _) => w.push(format!("{l} B blocks")),
            _ => {}
        }
        if let Some(rot) = d.rotational {
            w.push(if rot { "rotational" } else { "non-rotational" }.into());
        }
        if let Some(s) = &d.scheduler {
            w.push(format!("scheduler {s}"));
        }
        if let Some(n) = d.nr_requests {
            w.push(format!("nr_requests {n}"));
        }
        if let Some(ra) = d.read_ahead_kb {
            w.push(format!("read-ahead {ra} KiB"));
        }
    }
    if let Some(st) = &r.system.device_stack {
        if st.path.len() > 1 {
            w.push(st.path.join(" -> "));
        }
    }
    w.join(", ")
}

/// Render the whole report as text: the tables in [`WIDTH`] columns, or
/// with every column when `wide`.
pub fn render(r: &RunResult, wide: bool) -> String {
    let mut out = String::new();
    if let Some(t) = &r.target {
        let dev = r
            .system
            .device
            .as_ref()
            .map(|d| {
                // A partition named as the target is the device measured.
                let name = match (&d.partition, d.disk_size_bytes) {
                    (Some(p), Some(_)) => format!("{p}, a partition of {}", d.name),
                    _ => d.name.clone(),
                };
                let above = if d.holders.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", held by {}",
                        d.holders
                            .iter()
                            .map(|h| format!("{} (on {})", h.name, h.over))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                format!(
                    ", device {name}{}{above}",
                    d.model
                        .as_ref()
                        .map(|m| format!(" ({m})"))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "target: {} ({}, {}{}{}), cache: {}\n",
            t.path.display(),
            fmt_bytes(t.size_bytes),
            if t.kind == "block-device" {
                block_device_words(r)
            } else {
                r.system
                    .fs_type
                    .as_deref()
                    .unwrap_or("unknown fs")
                    .to_string()
            },
            dev,
            if t.created {
                ", removed after the run"
            } else {
                ""
            },
            r.config.cache
        ));
        out.push_str(&wrap(&legend(wide), WIDTH, "", ""));
    }
    if let Some(l) = &r.config.cache_limit {
        out.push_str(&format!(
            "cache limit: {} (memory cgroup v{}, peak {}, cap hit {} times): cached methods held at most that much of the file\n",
            fmt_bytes(l.limit_bytes),
            l.cgroup_version,
            l.peak_bytes.map_or("?".into(), fmt_bytes),
            l.limit_hits.map_or("?".into(), |n| n.to_string())
        ));
    }
    if let Some(p) = &r.config.preset {
        out.push_str(&format!("preset: {p} (docs/presets.md)\n"));
    }
    for g in super::grids::all(r) {
        out.push('\n');
        out.push_str(&super::grids::text(&g));
    }
    let mut patterns: Vec<&str> = Vec::new();
    for c in &r.cases {
        if !patterns.contains(&c.pattern.as_str()) {
            patterns.push(&c.pattern);
        }
    }
    let mut caveat = super::interrupted_caveat(r);
    for p in patterns {
        let cases: Vec<&CaseResult> = r.cases.iter().filter(|c| c.pattern == p).collect();
        out.push('\n');
        out.push_str(&render_pattern(p, &cases, show_placement(r), wide));
        for v in r.verdicts.iter().filter(|v| v.job.pattern == p) {
            out.push_str("verdict:\n");
            if let Some(caveat) = caveat.take() {
                out.push_str(&format!("  {caveat}\n"));
            }
            for line in &v.text {
                out.push_str(&format!("  {line}\n"));
            }
        }
    }
    out.push_str(&crate::verdict::neighbour::text(&r.cases));
    let skipped: Vec<String> = dedup_vec(
        r.cases
            .iter()
            .filter_map(|c| c.skipped.as_ref().map(|why| format!("{}: {why}", c.name())))
            .collect(),
    );
    if !skipped.is_empty() {
        out.push_str("\nnot run:\n");
        for s in skipped {
            out.push_str(&format!("  - {s}\n"));
        }
    }
    if !r.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &r.warnings {
            let mut line = format!("[{}] {}", w.code, w.message);
            if !w.cases.is_empty() {
                line.push_str(&format!(": {}", case_groups(&w.cases)));
            }
            out.push_str(&wrap(&line, WIDTH, "  - ", "    "));
        }
    }
    if r.interrupted {
        out.push_str("\ninterrupted: results above are the cases finished before Ctrl-C/SIGTERM\n");
    }
    out
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

/// The legend of the tables' columns, one paragraph.
fn legend(wide: bool) -> String {
    let mut s = String::from(if wide {
        "MiB/s = median of n repetitions, "
    } else {
        "MiB/s = median of the repetitions, "
    });
    s.push_str(
        "±95% = how far the median's 95% interval reaches from it, relative to it \
         (~: n < 6, the min-max range, below 95%); ",
    );
    s.push_str(if wide {
        "p50/p99/p99.9 with ~: too few requests behind them; "
    } else {
        "p99 with ~: too few requests behind it; "
    });
    s.push_str(
        "device = bytes the disk moved / bytes asked; CPU/IO includes kernel and SQPOLL time; \
         cache = the file's pages left in the page cache; vs best = MiB/s over the highest \
         median in the table (the verdict ranks a job by its paired per-round ratios)",
    );
    if !wide {
        s.push_str("; --wide adds n, p50, p99.9 and the notes");
    }
    s
}

fn render_pattern(pattern: &str, cases: &[&CaseResult], placement: bool, wide: bool) -> String {
    // The reference method `null` does no I/O: the best is the best real
    // method, and null's own cell says what it is.
    let best_bw = cases
        .iter()
        .filter(|c| c.method != "null")
        .filter_map(|c| c.summary.as_ref())
        .map(|s| s.bw_bytes_per_s)
        .fold(0.0f64, f64::max);
    // (header, in the default view too)
    let mut columns = vec![
        ("method", true),
        ("job", true),
        ("MiB/s", true),
        ("±95%", true),
        ("n", false),
        ("IOPS", true),
        ("p50", false),
        ("p99", true),
        ("p99.9", false),
        ("device", true),
        ("CPU/IO", true),
        ("cache", true),
        ("vs best", true),
        ("notes", false),
    ];
    if placement {
        columns.insert(columns.len() - 1, ("placement", true));
    }
    let shown: Vec<bool> = columns.iter().map(|&(_, d)| wide || d).collect();
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
            .map(|((h, _), _)| *h),
    );
    let mut footnotes = Vec::new();
    for c in cases {
        let mut notes: Vec<String> = depth_note(c).into_iter().collect();
        for n in other_notes(c) {
            footnotes.push(format!("{}: {n}", c.name()));
            notes.push("see below".to_string());
        }
        let right = |t: String| Cell::new(t).set_alignment(CellAlignment::Right);
        let row: Vec<Cell> = match (&c.summary, &c.skipped, &c.error) {
            (_, Some(_), _) => dash_row(c, "not run", "skipped (see the end)", wide),
            (_, _, Some(err)) => {
                footnotes.push(format!("{} failed: {err}", c.name()));
                dash_row(c, "FAILED", "FAILED", wide)
            }
            (Some(s), _, _) => {
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
                    right(if c.method == "null" {
                        "ceiling".to_string()
                    } else if rel >= 0.9995 {
                        "best".to_string()
                    } else {
                        format!("{rel:.2}x")
                    }),
                    Cell::new(dedup_join(&notes)),
                ]
            }
            (None, None, None) => dash_row(c, "no data", "no data", wide),
        };
        let mut row = row;
        if placement {
            let cell = c.placement.as_ref().map_or("-".into(), |p| p.short());
            row.insert(row.len() - 1, Cell::new(cell));
        }
        t.add_row(pick(row));
    }
    if wide {
        t.set_content_arrangement(ContentArrangement::Disabled);
    } else {
        // Numbers keep their width; the method, job and placement wrap
        // if a table would be wider than the report.
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(WIDTH as u16);
        for (i, (h, _)) in columns.iter().filter(|(_, d)| *d).enumerate() {
            if !matches!(*h, "method" | "job" | "placement") {
                if let Some(col) = t.column_mut(i) {
                    col.set_constraint(ColumnConstraint::ContentWidth);
                }
            }
        }
    }
    let mut s = format!("{} ({pattern})\n{t}\n", pattern_title(pattern));
    for f in dedup_vec(footnotes) {
        s.push_str(&format!("  - {f}\n"));
    }
    s
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
    let mut s = format!("{} Q{}T{}", fmt_bs(c.block_size), c.queue_depth, c.threads);
    match (&c.label, &c.pair) {
        (Some(l), Some(p)) => s.push_str(&format!(" ({l}; {p})")),
        (Some(l), None) => s.push_str(&format!(" ({l})")),
        (None, Some(p)) => s.push_str(&format!(" ({p})")),
        (None, None) => {}
    }
    s
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
            unwrapped.contains("±95% = how far the median's 95% interval reaches from it, relative to it (~: n < 6, the min-max range, below 95%)"),
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
            "Interrupted: these verdicts cover only the cases that finished; 1 case(s) cut short, \
             measured over the repetitions they completed: uring read 1M Q8T1; 1 case(s) did not \
             run: aio read 1M Q8T1."
        );
        // A case the run never reached counts as not run, under its name.
        r.cases[2].skipped = Some(format!(
            "{} (Ctrl-C) before this case",
            crate::result::NOT_REACHED
        ));
        let caveat = crate::report::interrupted_caveat(&r).unwrap();
        assert!(caveat.contains("2 case(s) did not run: "), "{caveat}");
        assert!(
            caveat.contains(&format!("{} {}", r.cases[2].name(), r.cases[2].ran_label())),
            "{caveat}"
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
        // The tables, the legend and the warnings (verdicts and notes are
        // sentences the terminal wraps).
        let laid_out = |l: &&str| {
            l.starts_with(['┌', '│', '╞', '└'])
                || l.starts_with("  - [")
                || l.starts_with("    ")
                || text
                    .lines()
                    .skip(1)
                    .take_while(|h| !h.is_empty())
                    .any(|h| h == *l)
        };
        let widest = text
            .lines()
            .filter(laid_out)
            .map(|l| l.chars().count())
            .max()
            .unwrap();
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
        assert!(text.contains("--wide adds n, p50, p99.9"), "{text}");

        let wide = render(&r, true);
        assert_eq!(
            header(&wide),
            [
                "method", "job", "MiB/s", "±95%", "n", "IOPS", "p50", "p99", "p99.9", "device",
                "CPU/IO", "cache", "vs best", "notes"
            ]
        );
        assert!(wide.lines().any(|l| l.chars().count() > WIDTH));
        assert!(wide.contains("skipped (see the end)"));
        assert!(!wide.contains("--wide adds"));
    }
}

//! The terminal report: one table per pattern, methods as rows, each
//! compared with the best method of that pattern, notes under the table.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use crate::result::{CaseResult, RunResult};
use crate::units::{fmt_bs, fmt_bytes, fmt_count, fmt_device_fraction, fmt_ns, fmt_percentile};

const MIB: f64 = 1024.0 * 1024.0;

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

/// Render the whole report as text.
pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    if let Some(t) = &r.target {
        let dev = r
            .system
            .device
            .as_ref()
            .map(|d| {
                format!(
                    ", device {}{}",
                    d.name,
                    d.model
                        .as_ref()
                        .map(|m| format!(" ({m})"))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "target: {} ({}, {}{}{}), cache: {}\n\
             MiB/s = median of n repetitions, ±95% = how far the median's 95% interval reaches from it, relative to it (~: n < 6, the min-max range, below 95%); p50/p99/p99.9 with ~: too few requests behind them; device = bytes the disk moved / bytes asked; CPU/IO includes kernel and SQPOLL time; cache = the file's pages left in the page cache; vs best = MiB/s over the highest median in the table (the verdict ranks a job by its paired per-round ratios)\n",
            t.path.display(),
            fmt_bytes(t.size_bytes),
            if t.kind == "block-device" {
                block_device_words(r)
            } else {
                r.system.fs_type.as_deref().unwrap_or("unknown fs").to_string()
            },
            dev,
            if t.created {
                ", removed after the run"
            } else {
                ""
            },
            r.config.cache
        ));
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
        out.push_str(&render_pattern(p, &cases, show_placement(r)));
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
            if w.cases.is_empty() {
                out.push_str(&format!("  - [{}] {}\n", w.code, w.message));
            } else {
                out.push_str(&format!(
                    "  - [{}] {}: {}\n",
                    w.code,
                    w.message,
                    w.cases.join(", ")
                ));
            }
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

fn render_pattern(pattern: &str, cases: &[&CaseResult], placement: bool) -> String {
    // The reference method `null` does no I/O: the best is the best real
    // method, and null's own cell says what it is.
    let best_bw = cases
        .iter()
        .filter(|c| c.method != "null")
        .filter_map(|c| c.summary.as_ref())
        .map(|s| s.bw_bytes_per_s)
        .fold(0.0f64, f64::max);
    let mut header = vec![
        "method", "job", "MiB/s", "±95%", "n", "IOPS", "p50", "p99", "p99.9", "device", "CPU/IO",
        "cache", "vs best", "notes",
    ];
    if placement {
        header.insert(header.len() - 1, "placement");
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    let mut footnotes = Vec::new();
    for c in cases {
        let mut notes: Vec<String> = depth_note(c).into_iter().collect();
        for n in other_notes(c) {
            footnotes.push(format!("{}: {n}", c.name()));
            notes.push("see below".to_string());
        }
        let row: Vec<Cell> = match (&c.summary, &c.skipped, &c.error) {
            (_, Some(_), _) => dash_row(c, "skipped (see the end)"),
            (_, _, Some(err)) => {
                footnotes.push(format!("{} failed: {err}", c.name()));
                dash_row(c, "FAILED")
            }
            (Some(s), _, _) => {
                let rel = if best_bw > 0.0 {
                    s.bw_bytes_per_s / best_bw
                } else {
                    0.0
                };
                let right = |t: String| Cell::new(t).set_alignment(CellAlignment::Right);
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
            (None, None, None) => dash_row(c, "no data"),
        };
        let mut row = row;
        if placement {
            let cell = c.placement.as_ref().map_or("-".into(), |p| p.short());
            row.insert(row.len() - 1, Cell::new(cell));
        }
        t.add_row(row);
    }
    let mut s = format!("{} ({pattern})\n{t}\n", pattern_title(pattern));
    for f in dedup_vec(footnotes) {
        s.push_str(&format!("  - {f}\n"));
    }
    s
}

fn dash_row(c: &CaseResult, what: &str) -> Vec<Cell> {
    let mut v = vec![Cell::new(c.name()), Cell::new(job(c))];
    v.extend((0..11).map(|_| Cell::new("-").set_alignment(CellAlignment::Right)));
    v.push(Cell::new(what));
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
        let text = render(&r);
        assert!(
            text.contains("±95% = how far the median's 95% interval reaches from it, relative to it (~: n < 6, the min-max range, below 95%)"),
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
}

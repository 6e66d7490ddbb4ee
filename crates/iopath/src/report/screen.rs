//! The terminal report a run prints by default: one screen. What was
//! measured on, then per pattern one compact table (methods as rows, the
//! figures a person reads: IOPS or MiB/s, `vs best`, p99, CPU per I/O, and
//! the device fraction where it is low) with one line of verdict under it,
//! then a closing summary of one line per verdict and a pointer to
//! `--explain`, which prints the whole report ([`super::table::render`]):
//! the legend, every column, the notes, the full verdicts and the warnings.

use super::table::{self, pattern_title};
use super::text::served;
use super::text::summary::{self, Answer};
use crate::model::units::{fmt_count, fmt_device_fraction, fmt_ns, fmt_percentile, wrap};
use crate::result::served::is_set_apart;
use std::collections::HashMap;

use crate::model::Pattern;
use crate::result::records::Verdict;
use crate::result::{CaseResult, Entrant, Job, RunResult};

const MIB: f64 = 1024.0 * 1024.0;

/// A device fraction below this is worth a column and a word: the
/// `low_device_fraction` warning's threshold.
const LOW_DEVICE: f64 = 0.9;

/// How the terminal report is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    /// Everything ([`table::render`]): legend, notes, full verdicts,
    /// warnings.
    pub explain: bool,
    /// Everything, with every column of the tables (implies `explain`).
    pub wide: bool,
    /// The width the one-screen view keeps to
    /// ([`super::width::stdout_width`]).
    pub width: usize,
}

/// The terminal report of `r` as `view` asks.
pub fn render(r: &RunResult, view: &View) -> String {
    if view.explain || view.wide {
        // Everything, then the answer the one screen closes with.
        let r1 = &*crate::model::untrusted::one_line(r);
        table::render(r, view.wide) + &summary_section(r1, view.width.max(120))
    } else {
        one_screen(r, view.width)
    }
}

/// The one-screen view of `r` in `width` columns (a table wider than
/// that, such as a preset's grid, is printed whole).
pub fn one_screen(r: &RunResult, width: usize) -> String {
    let r = &*crate::model::untrusted::one_line(r);
    let para = |s: &str| wrap(s, width, "", "  ");
    let mut out = String::new();
    if let Some(t) = &r.target {
        out.push_str(&para(&target(r, t)));
    }
    for line in super::heading::run_notes(r) {
        out.push_str(&para(&line));
    }
    for g in super::grids::all(r) {
        out.push('\n');
        out.push_str(&super::grids::text(&g, false));
    }
    match super::overview::grid(r, width) {
        Some(grid) => {
            out.push('\n');
            out.push_str(&grid);
            out.push_str(&failures(r, width));
        }
        None => out.push_str(&pattern_tables(r, width)),
    }
    // Asked for (--neighbour, a preset): what each method did to it.
    out.push_str(&crate::report::text::verdict::neighbour(&r.cases));
    if let Some(c) = super::interrupted_caveat(r) {
        out.push('\n');
        out.push_str(&para(&c));
    }
    out.push_str(&summary_section(r, width));
    let not_run = r
        .cases
        .iter()
        .filter(|c| c.skipped.is_some() || c.error.is_some())
        .count();
    out.push('\n');
    // Asked for and not had: said here, not only behind --explain.
    if let Some(reason) = split_fallback(r) {
        out.push_str(&para(&crate::report::text::why::fallback_line(reason)));
    }
    out.push_str(&para(&summary::pointer(r.warnings.len(), not_run)));
    out
}

/// Why `--latency-split` was not traced, from the run's warning.
fn split_fallback(r: &RunResult) -> Option<crate::result::latency_split::SplitFallback> {
    use crate::result::warning::Fact;
    r.warnings.iter().find_map(|w| match w.facts.as_ref()? {
        Fact::LatencySplitFallback { reason } => Some(*reason),
        _ => None,
    })
}

/// The failures of the cases that ran: never only behind --explain.
fn failures(r: &RunResult, width: usize) -> String {
    let mut out = String::new();
    for c in r.cases.iter().filter(|c| c.skipped.is_none()) {
        if let Some(e) = &c.error {
            let what = format!("{} {} {}", c.name(), c.pattern, table::job(c));
            out.push_str(&wrap(
                &summary::failed_line(&what, e),
                width,
                "  - ",
                "    ",
            ));
        }
    }
    out
}

/// Per pattern its compact table, its failures and a line per verdict.
fn pattern_tables(r: &RunResult, width: usize) -> String {
    let para = |s: &str| wrap(s, width, "", "  ");
    let mut out = String::new();
    for p in patterns(r) {
        let cases: Vec<&CaseResult> = r.cases.iter().filter(|c| c.pattern == p).collect();
        out.push('\n');
        if cases.iter().all(|c| c.not_reached()) {
            out.push_str(&para(&table::not_reached_line(p.name(), cases.len())));
            continue;
        }
        out.push_str(&pattern_table(p.name(), &cases));
        // A failure is never only behind --explain.
        for c in cases.iter().filter(|c| c.skipped.is_none()) {
            if let Some(e) = &c.error {
                let what = format!("{} {}", c.name(), table::job(c));
                out.push_str(&wrap(
                    &summary::failed_line(&what, e),
                    width,
                    "  - ",
                    "    ",
                ));
            }
        }
        let verdicts: Vec<&Verdict> = r.verdicts.iter().filter(|v| v.job.pattern == p).collect();
        let several = verdicts.len() > 1;
        let index = Index::of(&cases);
        for v in verdicts {
            let Some(a) = Answer::of(v) else { continue };
            let device = pick_device(r, &index, v, &a);
            let job = several.then(|| short_job(&v.job));
            out.push_str(&para(&summary::verdict_line(&a, device, job.as_deref())));
        }
    }
    out
}

/// The closing summary: a line per verdict, the path it names for its
/// pattern (nothing when no verdict has an answer).
fn summary_section(r: &RunResult, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    for p in patterns(r) {
        let cases: Vec<&CaseResult> = r.cases.iter().filter(|c| c.pattern == p).collect();
        if cases.iter().all(|c| c.not_reached()) {
            continue;
        }
        let verdicts: Vec<&Verdict> = r.verdicts.iter().filter(|v| v.job.pattern == p).collect();
        let several = verdicts.len() > 1;
        let index = Index::of(&cases);
        for v in verdicts {
            let Some(a) = Answer::of(v) else { continue };
            let device = pick_device(r, &index, v, &a);
            let streams = cases
                .iter()
                .find(|c| !c.streams.is_empty() && c.job() == v.job);
            let what = match (v.job.concurrency, several.then(|| short_job(&v.job))) {
                _ if streams.is_some() => streams
                    .map(|c| super::streams::title(c))
                    .unwrap_or_default(),
                (Some(n), _) if v.job.group.is_none() => summary::at_concurrency(p.name(), n),
                (_, Some(j)) => format!("{} ({j})", summary::pattern_words(p.name())),
                (_, None) => summary::pattern_words(p.name()),
            };
            lines.push(summary::summary_line(&what, &a, device));
        }
    }
    lines.extend(crate::report::text::replay::line(r));
    let mut out = String::new();
    if !lines.is_empty() {
        out.push('\n');
        out.push_str(summary::SUMMARY);
        out.push('\n');
        for l in lines {
            out.push_str(&wrap(&l, width, "  ", "    "));
        }
    }
    out
}

/// What the run measured on, in a line.
fn target(r: &RunResult, t: &crate::result::TargetInfo) -> String {
    let place = if t.unnamed {
        let dir = t.path.parent().unwrap_or(&t.path);
        summary::Place::TemporaryIn(dir.display().to_string())
    } else {
        summary::Place::Of(t.path.display().to_string())
    };
    let on = if t.kind == crate::result::names::TargetKind::BlockDevice {
        "block device".to_string()
    } else {
        r.system
            .fs_type
            .clone()
            .unwrap_or_else(|| "unknown fs".into())
    };
    summary::target_line(&summary::Target {
        size: t.size_bytes,
        place,
        on,
        device: r.system.device.as_ref().map(|d| d.name.clone()),
        cache: r.config.cache.name().to_string(),
    })
}

/// The patterns of a run, in the order they first appear.
fn patterns(r: &RunResult) -> Vec<Pattern> {
    let mut out: Vec<Pattern> = Vec::new();
    for c in &r.cases {
        if !out.contains(&c.pattern) {
            out.push(c.pattern);
        }
    }
    out
}

/// A job as the one-screen view names it, without its pattern (the
/// table's title says it): `4k Q32T1`, with its label.
fn short_job(j: &Job) -> String {
    match &j.group {
        Some(_) => j.label(),
        None => j.label_after_pattern(),
    }
}

/// A pattern's cases by method name and job, and by name alone (the
/// first of each), to find a verdict's pick in constant time.
struct Index<'a> {
    by_job: HashMap<(Entrant, Job), &'a CaseResult>,
    by_name: HashMap<Entrant, &'a CaseResult>,
}

impl<'a> Index<'a> {
    fn of(cases: &[&'a CaseResult]) -> Index<'a> {
        let mut i = Index {
            by_job: HashMap::new(),
            by_name: HashMap::new(),
        };
        for c in cases {
            i.by_job.entry((c.entrant(), c.job())).or_insert(c);
            i.by_name.entry(c.entrant()).or_insert(c);
        }
        i
    }
}

/// The pick's device fraction, when it read with a cold cache and the
/// device served too little of it for its speed to be the device's.
fn pick_device(r: &RunResult, cases: &Index, v: &Verdict, a: &Answer) -> Option<f64> {
    if r.config.cache != crate::model::CacheState::Cold
        || !matches!(v.job.pattern, Pattern::Read | Pattern::RandRead)
    {
        return None;
    }
    let case = if v.job.group.is_some() {
        cases.by_name.get(&a.pick)
    } else {
        cases.by_job.get(&(a.pick.clone(), v.job.clone()))
    };
    case.and_then(|c| c.summary.as_ref()?.device_fraction)
        .filter(|&f| f < LOW_DEVICE)
}

/// Random patterns are read in IOPS, sequential ones in MiB/s.
fn in_iops(pattern: &str) -> bool {
    pattern.starts_with("rand")
}

/// A pattern's compact table, its title in the first column's header:
/// one row per method that ran, fastest first; when the pattern holds
/// two or three jobs (block sizes, depths asked), a grid of methods by
/// jobs; more, a table each. The cases that did not run are counted in
/// [`summary::pointer`]; a pattern where none ran says why under its title.
fn pattern_table(p: &str, cases: &[&CaseResult]) -> String {
    let ran: Vec<&CaseResult> = cases
        .iter()
        .copied()
        .filter(|c| c.skipped.is_none())
        .collect();
    let jobs = by_job(&ran);
    let title = |j: &Job| format!("{} {}", pattern_title(p), short_job(j));
    match jobs.as_slice() {
        [] => {
            let mut s = format!("{}: no case ran\n", pattern_title(p));
            for c in cases {
                let why = c.skipped.as_deref().unwrap_or_default();
                let line = format!("{} {}: {why}", c.name(), table::job(c));
                s.push_str(&wrap(&line, WIDE_ENOUGH, "  - ", "    "));
            }
            s
        }
        [(job, cases)] if !has_streams(cases) => one_job(&title(job), p, cases),
        several if several.len() <= 3 && !several.iter().any(|(_, c)| has_streams(c)) => {
            grid(p, several)
        }
        several => several
            .iter()
            .map(|(job, cases)| match has_streams(cases) {
                true => streams_job(cases),
                false => one_job(&title(job), p, cases),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// A line the caller wraps again to its width.
const WIDE_ENOUGH: usize = usize::MAX;

/// Cases by job, the jobs in the order they first appear (linear in the
/// cases, however many).
pub(super) fn by_job<'a>(cases: &[&'a CaseResult]) -> Vec<(Job, Vec<&'a CaseResult>)> {
    let mut at: HashMap<Job, usize> = HashMap::new();
    let mut out: Vec<(Job, Vec<&CaseResult>)> = Vec::new();
    for c in cases {
        let j = c.job();
        match at.get(&j) {
            Some(&i) => out[i].1.push(c),
            None => {
                at.insert(j.clone(), out.len());
                out.push((j, vec![c]));
            }
        }
    }
    out
}

/// The highest median throughput of the real methods among `cases`.
fn best_bw(cases: &[&CaseResult]) -> f64 {
    cases
        .iter()
        .filter(|c| c.method != iopath_io::Method::Null && !is_set_apart(c))
        .filter_map(|c| c.summary.as_ref())
        .map(|s| s.bw_bytes_per_s)
        .fold(0.0, f64::max)
}

/// The `vs best` cell, or what happened to a case with no figures.
fn vs_best(c: &CaseResult, best: f64) -> String {
    match (&c.summary, &c.skipped, &c.error) {
        (_, Some(_), _) if c.not_reached() => "not reached".into(),
        (_, Some(_), _) => "not run".into(),
        (_, _, Some(_)) => "FAILED".into(),
        (None, _, _) => "-".into(),
        (Some(_), _, _) if c.method == iopath_io::Method::Null => "ceiling".into(),
        // Not ranked against the device: what served it instead.
        (Some(_), _, _) if served::cell(c).is_some() => served::cell(c).unwrap_or("-").into(),
        (Some(s), _, _) => {
            let rel = if best > 0.0 {
                s.bw_bytes_per_s / best
            } else {
                0.0
            };
            if rel >= 0.9995 {
                "best".into()
            } else {
                format!("{rel:.2}x")
            }
        }
    }
}

/// The throughput cell: IOPS or MiB/s.
fn figure(c: &CaseResult, iops: bool) -> String {
    match &c.summary {
        Some(s) if iops => fmt_count(s.iops),
        Some(s) => format!("{:.1}", s.bw_bytes_per_s / MIB),
        None => "-".into(),
    }
}

/// Fastest first, then those set apart (served from memory, absorbed by
/// the page cache), then the reference (`null`), then the cases with no
/// figures, each group fastest first.
fn by_speed<'a>(cases: &[&'a CaseResult]) -> Vec<&'a CaseResult> {
    let mut v = cases.to_vec();
    let rank = |c: &CaseResult| match (&c.summary, c.method == iopath_io::Method::Null) {
        (Some(_), false) if is_set_apart(c) => 1,
        (Some(_), false) => 0,
        (Some(_), true) => 2,
        (None, _) => 3,
    };
    let bw = |c: &CaseResult| c.summary.as_ref().map_or(0.0, |s| s.bw_bytes_per_s);
    v.sort_by(|a, b| rank(a).cmp(&rank(b)).then(bw(b).total_cmp(&bw(a))));
    v
}

/// True when the job's cases run streams at the same time.
fn has_streams(cases: &[&CaseResult]) -> bool {
    cases.iter().any(|c| !c.streams.is_empty())
}

/// A job of streams run at the same time: each method's row, its
/// streams' rows under it.
fn streams_job(cases: &[&CaseResult]) -> String {
    let best = best_bw(cases);
    let header = super::streams::header(&super::streams::title(cases[0]));
    let rows: Vec<Vec<String>> = by_speed(cases)
        .into_iter()
        .flat_map(|c| super::streams::rows(c, vs_best(c, best)))
        .collect();
    align(
        &header.iter().map(String::as_str).collect::<Vec<_>>(),
        &rows,
    )
}

fn one_job(title: &str, p: &str, cases: &[&CaseResult]) -> String {
    let best = best_bw(cases);
    let iops = in_iops(p);
    let device = cases
        .iter()
        .filter_map(|c| c.summary.as_ref()?.device_fraction)
        .any(|f| f < LOW_DEVICE);
    let mut header = vec![title, "depth", if iops { "IOPS" } else { "MiB/s" }];
    header.extend(["vs best", "p99", "CPU/IO"]);
    if device {
        header.push("device");
    }
    let rows: Vec<Vec<String>> = by_speed(cases)
        .into_iter()
        .map(|c| {
            let s = c.summary.as_ref();
            let mut row = vec![
                c.name(),
                format!("Q{}T{}", c.queue_depth, c.threads),
                figure(c, iops),
                vs_best(c, best),
                s.map_or("-".into(), |s| {
                    fmt_percentile(s.lat_ns.p99, 0.99, s.lat_ns.count)
                }),
                s.map_or("-".into(), |s| fmt_ns(s.cpu.ns_per_io.round() as u64)),
            ];
            if device {
                row.push(
                    s.and_then(|s| s.device_fraction)
                        .map_or("-".into(), fmt_device_fraction),
                );
            }
            row
        })
        .collect();
    align(&header, &rows)
}

/// Methods by jobs: each job's throughput and `vs best` (within the job).
fn grid(p: &str, jobs: &[(Job, Vec<&CaseResult>)]) -> String {
    let iops = in_iops(p);
    let all: Vec<&CaseResult> = jobs.iter().flat_map(|(_, c)| c.iter().copied()).collect();
    let mut methods: Vec<String> = Vec::new();
    for c in by_speed(&all) {
        if !methods.contains(&c.name()) {
            methods.push(c.name());
        }
    }
    let names: Vec<String> = jobs.iter().map(|(j, _)| short_job(j)).collect();
    let title = format!(
        "{} ({})",
        pattern_title(p),
        if iops { "IOPS" } else { "MiB/s" }
    );
    let mut header: Vec<&str> = vec![&title];
    for n in &names {
        header.extend([n.as_str(), "vs best"]);
    }
    let rows: Vec<Vec<String>> = methods
        .iter()
        .map(|m| {
            let mut row = vec![m.clone()];
            for (_, of_job) in jobs {
                match of_job.iter().find(|c| c.name() == *m) {
                    Some(c) => row.extend([figure(c, iops), vs_best(c, best_bw(of_job))]),
                    None => row.extend(["".into(), "".into()]),
                }
            }
            row
        })
        .collect();
    align(&header, &rows)
}

/// Columns two spaces apart, the first left-aligned and the others
/// right-aligned, under a header whose first cell is the table's title.
fn align(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = " ".repeat(w[i] - c.chars().count());
            match i {
                0 => s.push_str(&format!("{c}{pad}")),
                _ => s.push_str(&format!("  {pad}{c}")),
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testdata::fixture;

    #[test]
    fn the_one_screen_view_of_the_fixture() {
        insta::assert_snapshot!(one_screen(&fixture(), 80));
    }

    /// The fixture as analysis sees it today: its randread mmap (device 6%,
    /// the cache cold) was served from memory, so its `vs best` says so, it
    /// is listed after the device's methods, and the verdict ranks the
    /// others (it used to pick mmap).
    #[test]
    fn a_read_served_from_memory_is_set_apart_on_one_screen() {
        let mut r = fixture();
        crate::analysis::analyse(&mut r);
        crate::report::text::word(&mut r);
        let v = r
            .verdicts
            .iter()
            .find(|v| v.job.pattern == Pattern::RandRead);
        assert_ne!(v.map(|v| v.pick.to_string()).as_deref(), Some("mmap"));
        insta::assert_snapshot!(one_screen(&r, 80));
        // The whole report: the legend of `memory`, the verdict's sentence.
        insta::assert_snapshot!("explained", table::render(&r, false));
    }

    /// `--latency-split` asked for as a user who is not root: the one
    /// screen says it was not traced and what to do, in one line (not
    /// only as a warning's code under --explain), and the warning names
    /// no cases (it ended with ": all").
    #[test]
    fn a_latency_split_that_fell_back_is_said_on_one_screen() {
        use crate::result::latency_split::SplitFallback;
        let mut r = fixture();
        r.config.latency_split_fallback = Some(SplitFallback::NotRoot);
        crate::analysis::analyse(&mut r);
        crate::report::text::word(&mut r);
        assert_eq!(split_fallback(&r), Some(SplitFallback::NotRoot));
        let screen = one_screen(&r, 80);
        let said: Vec<&str> = screen
            .lines()
            .filter(|l| l.contains("--latency-split"))
            .collect();
        assert_eq!(said.len(), 1, "{screen}");
        let w = r
            .warnings
            .iter()
            .find(|w| w.code == "latency_split_fallback");
        assert_eq!(
            crate::report::text::warnings::case_groups(w.unwrap(), &r),
            ""
        );
        insta::assert_snapshot!(screen);
    }

    /// A job named without its pattern, from its fields (not by cutting
    /// its label at a space); a group's keeps its whole name.
    #[test]
    fn a_short_job_is_its_label_after_the_pattern() {
        let mut j = fixture().cases[0].job();
        j.label = Some("my label".into());
        j.rwmix_read_pct = Some(70);
        assert_eq!(
            format!("{} {}", j.pattern, short_job(&j)),
            j.label(),
            "{j:?}"
        );
        assert!(!short_job(&j).starts_with(j.pattern.name()));
        j.group = Some("sizes".into());
        assert_eq!(short_job(&j), j.label());
    }

    /// The pick's case is found by its typed name and job: the fixture's
    /// cold reads name a device fraction only for a case that has one.
    #[test]
    fn the_pick_is_found_by_entrant_and_job() {
        let r = fixture();
        let cases: Vec<&CaseResult> = r.cases.iter().collect();
        let index = Index::of(&cases);
        for c in &r.cases {
            assert!(std::ptr::eq(
                *index.by_job.get(&(c.entrant(), c.job())).unwrap(),
                r.cases
                    .iter()
                    .find(|d| d.entrant() == c.entrant() && d.job() == c.job())
                    .unwrap()
            ));
            assert_eq!(c.entrant().to_string(), c.name());
        }
    }
}

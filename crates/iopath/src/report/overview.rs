//! The one-screen grid of a run whose methods were compared at matched
//! concurrency (the default run): CrystalDiskMark's layout, one row per
//! method and one column per job (`read` `1M N8`, `randread` `4k N32`),
//! MiB/s for sequential patterns and IOPS for random ones, the highest
//! median of each column marked. Six jobs of ten methods would not fit one
//! screen as a table each; `--explain` keeps those.

use super::text::summary;
use crate::model::units::fmt_count;
use crate::result::served::is_set_apart;
use crate::result::{CaseResult, Entrant, Job, RunResult};

const MIB: f64 = 1024.0 * 1024.0;

/// The mark of a column's highest median.
const BEST: &str = "*";

/// The mark of a column's pick where it is not the highest median: tied
/// with it and chosen for its cost, as the summary says.
const PICKED: &str = "+";

/// The grid of `r` if its jobs are matched ones and it fits in `width`
/// columns; `None` otherwise (the caller shows a table per pattern).
pub fn grid(r: &RunResult, width: usize) -> Option<String> {
    // Nothing measured: the tables per pattern, which say why.
    if r.cases.iter().all(|c| c.summary.is_none())
        || r.cases.iter().any(|c| c.concurrency.is_none())
    {
        return None;
    }
    let jobs = jobs(&r.cases);
    // Methods in run order: one a job adds (mmap+random) after the one
    // before it in that job.
    let mut methods: Vec<String> = Vec::new();
    for (_, cases) in &jobs {
        let mut after: Option<usize> = None;
        for c in cases {
            let name = c.name();
            let at = match methods.iter().position(|m| *m == name) {
                Some(i) => i,
                None => {
                    let i = after.map_or(methods.len(), |a| a + 1);
                    methods.insert(i, name);
                    i
                }
            };
            after = Some(at);
        }
    }
    let mut rows: Vec<Vec<String>> = vec![
        // Header cells end with a space, as the figures do (or the mark).
        std::iter::once("method".to_string())
            .chain(jobs.iter().map(|(j, _)| format!("{} ", j.pattern.name())))
            .collect(),
        std::iter::once(String::new())
            .chain(jobs.iter().map(|(j, _)| format!("{} ", short(j))))
            .collect(),
    ];
    let picks: Vec<Option<Entrant>> = jobs.iter().map(|(j, _)| cheaper_pick(r, j)).collect();
    for m in &methods {
        let mut row = vec![m.clone()];
        for ((j, cases), pick) in jobs.iter().zip(&picks) {
            let best = best_of(cases);
            row.push(match cases.iter().find(|c| c.name() == *m) {
                Some(c) => {
                    let picked = pick.as_ref().is_some_and(|p| *p == c.entrant());
                    cell(c, j.pattern.is_random(), best, picked)
                }
                None => String::new(),
            });
        }
        rows.push(row);
    }
    let text = align(&rows);
    let picked = picks.iter().any(Option::is_some).then_some(PICKED);
    let key = summary::grid_key(BEST, r.cases.iter().any(is_set_apart), picked);
    let fits = text
        .lines()
        .chain(key.lines())
        .all(|l| l.chars().count() <= width);
    fits.then(|| format!("{text}{key}\n"))
}

/// The run's jobs in the order their first case appears, each with its
/// cases.
fn jobs(cases: &[CaseResult]) -> Vec<(Job, Vec<&CaseResult>)> {
    let refs: Vec<&CaseResult> = cases.iter().collect();
    super::screen::by_job(&refs)
}

/// A job without its pattern (the header's first line says it): `4k N32`;
/// a group's whole name.
fn short(j: &Job) -> String {
    if j.group.is_some() {
        j.label()
    } else {
        j.label_after_pattern()
    }
}

/// The pick of the verdict on `job` where it is not the highest median
/// but tied with it and cheaper: marked apart, so that the mark of the
/// best never reads as the answer the summary contradicts.
fn cheaper_pick(r: &RunResult, job: &Job) -> Option<Entrant> {
    let v = r.verdicts.iter().find(|v| v.job == *job)?;
    let a = summary::Answer::of(v)?;
    a.fastest.is_some().then_some(a.pick)
}

/// The highest median throughput of the real methods of a job that the
/// device served (a case set apart as served from memory is never best).
fn best_of(cases: &[&CaseResult]) -> f64 {
    cases
        .iter()
        .filter(|c| c.method != iopath_io::Method::Null && !is_set_apart(c))
        .filter_map(|c| c.summary.as_ref())
        .map(|s| s.bw_bytes_per_s)
        .fold(0.0, f64::max)
}

/// A case's cell: IOPS or MiB/s, marked when it is the column's best or
/// (`picked`) the cheaper pick tied with it, in parentheses when memory
/// served it (set apart, never ranked); a case with no figures says why in
/// a word.
fn cell(c: &CaseResult, iops: bool, best: f64, picked: bool) -> String {
    let Some(s) = &c.summary else {
        return summary::grid_gap(c.not_reached(), c.error.is_some()).to_string();
    };
    let figure = if iops {
        fmt_count(s.iops)
    } else if s.bw_bytes_per_s >= 1000.0 * MIB {
        format!("{:.0}", s.bw_bytes_per_s / MIB)
    } else {
        format!("{:.1}", s.bw_bytes_per_s / MIB)
    };
    let top = c.method != iopath_io::Method::Null && best > 0.0 && s.bw_bytes_per_s >= best;
    if is_set_apart(c) {
        format!("({figure})")
    } else if top {
        format!("{figure}{BEST}")
    } else if picked {
        format!("{figure}{PICKED}")
    } else {
        format!("{figure} ")
    }
}

/// Columns two spaces apart, the first left-aligned, the others
/// right-aligned.
fn align(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut w = vec![0; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            let pad = " ".repeat(w[i] - c.chars().count());
            if i == 0 {
                line.push_str(&format!("{c}{pad}"));
            } else {
                line.push_str(&format!("  {pad}{c}"));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testdata::fixture;

    /// The report fixture as a matched run: sequential jobs at 8 requests
    /// in flight, random reads at 32 and (its figures a tenth) at 1, each
    /// synchronous method on that many threads; its verdicts made again.
    fn matched() -> RunResult {
        let mut r = fixture();
        let mut ones = Vec::new();
        for c in &mut r.cases {
            let n = if c.pattern.is_random() { 32 } else { 8 };
            let sync = c.queue_depth_requested == 1 || c.queue_depth == 1;
            c.concurrency = Some(n);
            (c.threads, c.queue_depth, c.queue_depth_requested) =
                if sync { (n, 1, 1) } else { (1, n, n) };
            if c.pattern.is_random() {
                let mut one = c.clone();
                one.concurrency = Some(1);
                (one.threads, one.queue_depth, one.queue_depth_requested) = (1, 1, 1);
                for m in &mut one.repetitions {
                    m.bw_bytes_per_s /= 10.0;
                    m.iops /= 10.0;
                }
                if let Some(s) = &mut one.summary {
                    s.bw_bytes_per_s /= 10.0;
                    s.iops /= 10.0;
                }
                ones.push(one);
            }
        }
        r.cases.extend(ones);
        r.verdicts.clear();
        r.warnings.clear();
        crate::analysis::analyse(&mut r);
        r
    }

    #[test]
    fn a_matched_run_is_one_grid_of_methods_by_jobs_then_the_summary() {
        let r = matched();
        let text = crate::report::screen::one_screen(&r, 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        insta::assert_snapshot!(text);
    }

    #[test]
    fn a_grid_wider_than_the_screen_leaves_the_tables_per_pattern() {
        assert!(grid(&matched(), 40).is_none());
        // Not matched: no grid.
        assert!(grid(&fixture(), 200).is_none());
    }

    /// The grid starred aio, the fastest median, while the summary said
    /// "use uring" (tied with it, less CPU) without a word why: the pick
    /// gets its own mark, the answer names the fastest it is tied with.
    #[test]
    fn a_cheaper_pick_tied_with_the_fastest_is_marked_and_named_beside_it() {
        use crate::result::verdict_facts::{CheaperBy, VerdictFact};
        let mut r = matched();
        let v = r
            .verdicts
            .iter_mut()
            .find(|v| v.job.pattern == crate::model::Pattern::Read)
            .unwrap();
        // The verdict as it is when uring ties with aio for less CPU.
        v.called = true;
        v.pick = "uring".into();
        v.equally_good.clear();
        v.facts
            .retain(|f| !matches!(f, VerdictFact::TooCloseToCall { .. }));
        for m in &mut v.ranking {
            m.tied_with_fastest = m.method == "aio" || m.method == "uring";
            m.too_few_repetitions = false;
        }
        let a = summary::Answer::of(v).unwrap();
        assert_eq!(
            a.decision,
            summary::Decision::Cheaper {
                with: vec!["aio".into()],
                by: CheaperBy::CpuPerIo
            }
        );
        assert_eq!(a.fastest.as_deref(), Some("aio"));
        let job = v.job.clone();
        assert_eq!(cheaper_pick(&r, &job), Some("uring".into()));
        let text = grid(&r, 80).unwrap();
        let row = |m: &str| text.lines().find(|l| l.starts_with(m)).unwrap().to_string();
        // read is the first column.
        assert!(
            row("aio ")
                .split_whitespace()
                .nth(1)
                .unwrap()
                .ends_with(BEST),
            "{text}"
        );
        assert!(
            row("uring ")
                .split_whitespace()
                .nth(1)
                .unwrap()
                .ends_with(PICKED),
            "{text}"
        );
        // A pick that is the fastest gets no other mark.
        assert_eq!(cheaper_pick(&matched(), &job), None);
    }
}

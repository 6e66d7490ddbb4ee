//! `iopath compare A.json B.json` or `iopath compare A1.json A2.json --
//! B1.json B2.json`: match the cases of results of `iopath run --json`,
//! and say for each whether B is faster or slower than A (the baseline), by
//! how much, and whether that is real.
//!
//! - Cases match on method, arm and job ([`Key`]: everything in
//!   [`crate::result::Job`], a preset's label included); a key that occurs
//!   more than once in a file matches in order.
//! - With several runs on a side, each run's median throughput of a case is
//!   one observation and the test is between runs ([`test::between_runs`]):
//!   run-to-run drift is in the interval. With one run per side, the
//!   repetitions' interval is widened by a drift allowance
//!   ([`test::within_run`], `--drift`, default [`DEFAULT_DRIFT_PCT`]).
//! - `--fail-above PCT`: a case is a regression when it is labelled
//!   `slower` and its interval's upper bound is more than PCT% below 1.
//! - Differences between the first runs of the two sides that make
//!   comparing them questionable become notes.
//!
//! docs/compare.md is the user's description of all of this.

mod load;
mod matching;
mod render;
mod report;
pub mod test;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::result::{median, CaseResult, RunResult};
use crate::units::{fmt_bytes, fmt_ns};

use load::default_names;
pub use load::{load, parse, sides};
pub use matching::{match_runs, Key, Matched};
pub use render::{change_text, render};
pub use report::{CaseComparison, Report, Side, Status};
pub use test::{Label, Test};

const MIB: f64 = 1024.0 * 1024.0;

/// The drift allowance of a comparison with one run per side, in percent:
/// measured on this project's test machine with bench/compare-drift.sh
/// (docs/compare.md, "The drift allowance").
pub const DEFAULT_DRIFT_PCT: f64 = 38.0;

/// A run whose device moved more than this many times the bytes a case
/// asked for (`device_fraction`) shared the disk with other traffic: with
/// one run a side, a slowdown measured then cannot be told from that
/// traffic (bench/compare-drift.sh found 10-30x in the runs that collapsed,
/// 1-2x otherwise).
pub const OTHER_TRAFFIC: f64 = 3.0;

/// `5`, `5%` or `2.5`: a percentage above 0 and below 100, in percent.
pub fn parse_fail_above(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim_end();
    match t.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a percentage above 0 and below 100 (e.g. 5 or 5%)"
        )),
    }
}

/// `--drift`: `8`, `8%`, `0`: a percentage from 0 to below 100.
pub fn parse_drift(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim_end();
    match t.parse::<f64>() {
        Ok(v) if (0.0..100.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a percentage from 0 to below 100 (e.g. 8 or 8%; 0 for no allowance)"
        )),
    }
}

/// A case's measured throughput and p99 samples in one run, or why there
/// are none.
struct Measured {
    bw: Vec<f64>,
    p99: Vec<f64>,
    /// Median `device_fraction`; `None` without a block device.
    device_fraction: Option<f64>,
}

fn measured(c: &CaseResult) -> Result<Measured, String> {
    if let Some(why) = &c.skipped {
        return Err(format!("skipped: {why}"));
    }
    if let Some(err) = &c.error {
        return Err(format!("failed: {err}"));
    }
    let bw = c.samples(|m| m.bw_bytes_per_s);
    if bw.is_empty() {
        return Err("no measured repetitions".into());
    }
    if median(&mut bw.clone()) <= 0.0 {
        return Err("no throughput (median 0 B/s)".into());
    }
    let p99 = c.samples(|m| m.lat_ns.p99 as f64);
    let mut fractions: Vec<f64> = c
        .measured()
        .iter()
        .filter_map(|m| m.device_fraction)
        .collect();
    let device_fraction = (!fractions.is_empty()).then(|| median(&mut fractions));
    Ok(Measured {
        bw,
        p99,
        device_fraction,
    })
}

/// One side of one case: the runs where it was measured, or why none.
struct SideCase {
    present: bool,
    runs: Vec<Measured>,
    why: Option<String>,
}

impl SideCase {
    fn of(cases: &[&CaseResult]) -> SideCase {
        let mut runs = Vec::new();
        let mut why = None;
        for c in cases {
            match measured(c) {
                Ok(m) => runs.push(m),
                Err(e) => {
                    why.get_or_insert(e);
                }
            }
        }
        SideCase {
            present: !cases.is_empty(),
            runs,
            why,
        }
    }

    fn run_medians(&self) -> Vec<f64> {
        self.runs
            .iter()
            .map(|m| median(&mut m.bw.clone()))
            .collect()
    }

    /// The one run's median, or the geometric mean of the runs' medians.
    fn center(&self) -> Option<f64> {
        let m = self.run_medians();
        match m.len() {
            0 => None,
            1 => Some(m[0]),
            n => Some((m.iter().map(|x| x.ln()).sum::<f64>() / n as f64).exp()),
        }
    }

    fn n(&self) -> usize {
        self.runs.iter().map(|m| m.bw.len()).sum()
    }

    fn device_fraction(&self) -> Option<f64> {
        self.runs
            .iter()
            .filter_map(|m| m.device_fraction)
            .reduce(f64::max)
    }

    fn p99(&self) -> Option<u64> {
        let mut all: Vec<f64> = self.runs.iter().flat_map(|m| m.p99.clone()).collect();
        (!all.is_empty()).then(|| median(&mut all).round() as u64)
    }
}

fn compare_case(m: &Matched, drift_pct: f64) -> CaseComparison {
    let c = m.a.first().or(m.b.first()).expect("a case is in some run");
    let (sa, sb) = (SideCase::of(&m.a), SideCase::of(&m.b));
    let mut out = CaseComparison {
        method: c.method.clone(),
        arm: m.key.arm,
        name: c.name(),
        job: c.job(),
        queue_depth_effective: c.queue_depth,
        status: Status::NotMeasured,
        label: None,
        test: None,
        ratio: None,
        ratio_ci95: None,
        drift_allowance_pct: None,
        a_median_bw_bytes_per_s: sa.center(),
        b_median_bw_bytes_per_s: sb.center(),
        a_runs: sa.runs.len(),
        b_runs: sb.runs.len(),
        a_n: sa.n(),
        b_n: sb.n(),
        a_p99_ns: sa.p99(),
        b_p99_ns: sb.p99(),
        a_device_fraction: sa.device_fraction(),
        b_device_fraction: sb.device_fraction(),
        reason: None,
        undersampled: false,
    };
    if !sb.present {
        out.status = Status::OnlyInA;
        out.reason = Some("only in A".into());
        return out;
    }
    if !sa.present {
        out.status = Status::OnlyInB;
        out.reason = Some("only in B".into());
        return out;
    }
    let (ra, rb) = (sa.runs.len(), sb.runs.len());
    if ra == 0 || rb == 0 {
        let (x, y) = (sa.why.unwrap_or_default(), sb.why.unwrap_or_default());
        out.reason = Some(match (ra, rb) {
            (0, 0) if x == y => format!("not measured in A or B: {x}"),
            (0, 0) => format!("not measured in A: {x}; not measured in B: {y}"),
            (0, _) => format!("not measured in A: {x}"),
            _ => format!("not measured in B: {y}"),
        });
        return out;
    }
    let outcome = if ra == 1 && rb == 1 {
        test::within_run(&sa.runs[0].bw, &sb.runs[0].bw, drift_pct / 100.0)
    } else {
        test::between_runs(&sa.run_medians(), &sb.run_medians())
    };
    match outcome {
        Some(o) => {
            out.status = Status::Compared;
            out.label = Some(o.label);
            out.test = Some(o.test);
            out.ratio = Some(o.ratio);
            out.ratio_ci95 = Some(o.ci95);
            out.undersampled = o.undersampled;
            if o.test == Test::WithinRun {
                out.drift_allowance_pct = Some(drift_pct);
            }
        }
        // Not reached: every run measured has a positive median.
        None => out.reason = Some("not comparable".into()),
    }
    out
}

/// Compare the runs `b` with the baseline runs `a` (one or more each).
pub fn compare(
    a: &[RunResult],
    b: &[RunResult],
    side_a: Side,
    side_b: Side,
    fail_above_pct: Option<f64>,
    drift_pct: f64,
) -> Report {
    let cases: Vec<CaseComparison> = match_runs(a, b)
        .iter()
        .map(|m| compare_case(m, drift_pct))
        .collect();
    let regressions = cases
        .iter()
        .filter(|c| match fail_above_pct {
            Some(p) => c.regressed(p),
            None => c.label == Some(Label::Slower),
        })
        .count();
    let notes = notes(a, b, &side_a.name, &side_b.name, &cases);
    Report {
        a: side_a,
        b: side_b,
        fail_above_pct,
        drift_allowance_pct: drift_pct,
        cases,
        notes,
        regressions,
    }
}

/// What differs between the runs that makes comparing them questionable,
/// one sentence each: the first run of A against the first of B, and
/// every interrupted run.
fn notes(
    a: &[RunResult],
    b: &[RunResult],
    na: &str,
    nb: &str,
    cases: &[CaseComparison],
) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(a0), Some(b0)) = (a.first(), b.first()) {
        let mut differ = |what: &str, f: &dyn Fn(&RunResult) -> String| {
            let (va, vb) = (f(a0), f(b0));
            if va != vb {
                out.push(format!("{what} differs: {na} {va}, {nb} {vb}"));
            }
        };
        differ("target size", &|r| {
            r.target
                .as_ref()
                .map_or("none (no file)".into(), |t| fmt_bytes(t.size_bytes))
        });
        differ("file system", &|r| {
            r.system.fs_type.clone().unwrap_or_else(|| "unknown".into())
        });
        differ("device", &|r| match &r.system.device {
            Some(d) => match &d.model {
                Some(m) => format!("{} ({m})", d.name),
                None => d.name.clone(),
            },
            None => "none".into(),
        });
        differ("cache state", &|r| r.config.cache.clone());
        differ("data", &|r| {
            let sparse = r.target.as_ref().is_some_and(|t| t.sparse);
            format!(
                "{}{}",
                r.config.data,
                if sparse { " (sparse file)" } else { "" }
            )
        });
        differ("time per repetition", &|r| {
            r.config.time_limit_ns.map_or("unlimited".into(), fmt_ns)
        });
        differ("bytes per repetition", &|r| {
            r.config.io_size_bytes.map_or("not set".into(), fmt_bytes)
        });
        differ("tool version", &|r| {
            format!(
                "{} {} (result schema {})",
                r.tool.name, r.tool.version, r.schema_version
            )
        });
    }
    for (runs, name) in [(a, na), (b, nb)] {
        for (i, r) in runs.iter().enumerate() {
            if r.interrupted {
                let which = if runs.len() > 1 {
                    format!("{name} (run {})", i + 1)
                } else {
                    name.to_string()
                };
                out.push(format!(
                    "{which} was interrupted (Ctrl-C): its last case may be cut short"
                ));
            }
        }
    }
    if !cases.is_empty()
        && cases
            .iter()
            .all(|c| matches!(c.status, Status::OnlyInA | Status::OnlyInB))
    {
        out.push(format!(
            "no case of {na} matches one of {nb} (same method and arm, pattern, block size, queue depth asked for, threads, sync, rwmix and the rest of the job, docs/compare.md): nothing was compared"
        ));
    }
    for c in cases.iter().filter(|c| c.status == Status::Compared) {
        for (f, name) in [(c.a_device_fraction, na), (c.b_device_fraction, nb)] {
            if let Some(f) = f.filter(|&f| f > OTHER_TRAFFIC) {
                out.push(format!(
                    "other traffic shared the disk during {name}'s {} {}: the device moved {f:.1}x the bytes the case asked for, so its figures are partly that traffic's{}",
                    c.name,
                    c.job(),
                    if c.test == Some(Test::WithinRun) {
                        " (with one run a side, a slowdown of B then exits 3, not 1)"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    // Below 6 repetitions `distinct` needs a complete separation that
    // chance alone would give less than 5% of the time: a case whose
    // samples are apart but too few (`undersampled`), or so few that no
    // outcome could count, reads "no change" for lack of repetitions.
    let blind: Vec<&CaseComparison> = cases.iter().filter(|c| c.blind()).collect();
    if let Some(first) = blind.first() {
        out.push(format!(
            "{} compared case{} had too few repetitions to call a change real ({} {}: {} in {na}, {} in {nb}): run both with --repeat 6 or more",
            blind.len(),
            if blind.len() == 1 { "" } else { "s" },
            first.name,
            first.job(),
            first.a_n,
            first.b_n
        ));
    }
    out
}

/// What `iopath compare` was asked (from `cli::CompareArgs`).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The files before `--` (or all of them).
    pub a: Vec<PathBuf>,
    /// The files after `--`.
    pub b: Vec<PathBuf>,
    pub fail_above: Option<f64>,
    /// `--drift`; `None`: [`DEFAULT_DRIFT_PCT`].
    pub drift: Option<f64>,
    pub json: bool,
    pub name_a: Option<String>,
    pub name_b: Option<String>,
}

/// Write `s` on stdout; a reader that went away (`| head`) is not an error.
fn print_stdout(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `iopath compare`: 0, or 1 when `--fail-above` finds a regression, or 3
/// when it finds a slowdown beyond the limit that too few repetitions
/// cannot confirm; bad input is a [`UsageError`] (exit 2).
pub fn run(args: &Options) -> anyhow::Result<ExitCode> {
    let (pa, pb) = sides(&args.a, &args.b)?;
    let ra = pa.iter().map(|p| load(p)).collect::<Result<Vec<_>, _>>()?;
    let rb = pb.iter().map(|p| load(p)).collect::<Result<Vec<_>, _>>()?;
    let (name_a, name_b) = default_names(&pa, &pb);
    let side = |paths: &[PathBuf], name: Option<&String>, default: String, r: &RunResult| Side {
        path: paths[0].display().to_string(),
        name: name.cloned().unwrap_or(default),
        started_at: r.started_at.clone(),
        command: r.command.clone(),
        paths: paths.iter().map(|p| p.display().to_string()).collect(),
    };
    let drift = args.drift.unwrap_or(DEFAULT_DRIFT_PCT);
    let report = compare(
        &ra,
        &rb,
        side(&pa, args.name_a.as_ref(), name_a, &ra[0]),
        side(&pb, args.name_b.as_ref(), name_b, &rb[0]),
        args.fail_above,
        drift,
    );
    if args.json {
        let mut s = serde_json::to_string_pretty(&report)?;
        s.push('\n');
        print_stdout(&s)?;
    } else {
        print_stdout(&render(&report))?;
    }
    let Some(limit) = args.fail_above else {
        return Ok(ExitCode::SUCCESS);
    };
    let bad: Vec<&CaseComparison> = report.cases.iter().filter(|c| c.regressed(limit)).collect();
    if bad.is_empty() {
        // A gate must not pass for lack of data: a slowdown beyond the
        // limit that too few repetitions cannot confirm is exit 3.
        let unsure: Vec<&CaseComparison> = report
            .cases
            .iter()
            .filter(|c| c.inconclusive(limit))
            .collect();
        if unsure.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
        for c in &unsure {
            if c.beyond(limit) && c.b_disturbed() {
                eprintln!(
                    "inconclusive: {} {}: {}, but the device moved {:.1}x the bytes the case asked for during {}'s run (other traffic on the disk); rerun, or give several runs a side (A1.json A2.json -- B1.json B2.json)",
                    c.name,
                    c.job(),
                    change_text(c),
                    c.b_device_fraction.unwrap_or(0.0),
                    report.b.name
                );
            } else {
                eprintln!(
                    "inconclusive: {} {}: median {} with {} and {} repetitions, too few to tell; rerun both with --repeat 6 or more",
                    c.name,
                    c.job(),
                    change_text(c),
                    c.a_n,
                    c.b_n
                );
            }
        }
        eprintln!(
            "iopath: {} case{} of {} may be slower than {} by more than {limit}%, but it cannot be told (exit 3)",
            unsure.len(),
            if unsure.len() == 1 { "" } else { "s" },
            report.b.name,
            report.a.name
        );
        return Ok(ExitCode::from(3));
    }
    for c in &bad {
        eprintln!(
            "regression: {} {}: {} from {} to {}, slower by more than --fail-above {limit}% at the interval's bound",
            c.name,
            c.job(),
            change_text(c),
            c.a_median_bw_bytes_per_s
                .map_or("-".into(), |v| format!("{:.1} MiB/s", v / MIB)),
            c.b_median_bw_bytes_per_s
                .map_or("-".into(), |v| format!("{:.1} MiB/s", v / MIB)),
        );
    }
    eprintln!(
        "iopath: {} case{} of {} got slower than {} by more than {limit}% (exit 1)",
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        report.b.name,
        report.a.name
    );
    Ok(ExitCode::from(1))
}

#[cfg(test)]
mod tests;

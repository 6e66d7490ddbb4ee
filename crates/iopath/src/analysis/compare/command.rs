//! `iopath compare` as a command: its options and how they parse, what it
//! prints, and its exit status.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::load::{default_names, load, sides};
use super::{change_text, compare, render, CaseComparison, Label, Side, DEFAULT_DRIFT_PCT, MIB};
use crate::result::RunResult;

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

/// A line on stderr; the names and labels it quotes come from the results
/// and paths compared, so their control characters are shown, not sent.
fn say(line: String) {
    crate::say!("{}", crate::model::untrusted::visible(&line));
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
        let s = serde_json::to_string_pretty(&report)? + "\n";
        print_stdout(&crate::model::untrusted::json_escaped(s))?;
    } else {
        let report = crate::model::untrusted::one_line(&report);
        print_stdout(&crate::model::untrusted::visible(&render(&report)))?;
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
            let open = report
                .cases
                .iter()
                .filter(|c| c.label == Some(Label::Inconclusive))
                .count();
            if open > 0 {
                say(format!(
                    "iopath: no case of {} is slower than {} beyond {limit}% at its interval's bound, but {open} case{} inconclusive: \
                     {} data cannot rule out a change of {limit}% either way (give several runs a side)",
                    report.b.name,
                    report.a.name,
                    if open == 1 { " is" } else { "s are" },
                    if open == 1 { "its" } else { "their" },
                ));
            }
            return Ok(ExitCode::SUCCESS);
        }
        for c in &unsure {
            if c.few_to_tell(limit) {
                say(format!(
                    "inconclusive: {} {}: median {} with {} and {} repetitions, too few to tell; rerun both with --repeat 6 or more",
                    c.name,
                    c.job(),
                    change_text(c),
                    c.a_n,
                    c.b_n
                ));
            } else {
                say(format!(
                    "inconclusive: {} {}: median {}: slower than the limit, but the interval reaches back within {limit}%; give several runs a side (A1.json A2.json -- B1.json B2.json)",
                    c.name,
                    c.job(),
                    change_text(c),
                ));
            }
        }
        say(format!(
            "iopath: {} case{} of {} may be slower than {} by more than {limit}%, but it cannot be told (exit 3)",
            unsure.len(),
            if unsure.len() == 1 { "" } else { "s" },
            report.b.name,
            report.a.name
        ));
        return Ok(ExitCode::from(3));
    }
    for c in &bad {
        say(format!(
            "regression: {} {}: {} from {} to {}, slower by more than --fail-above {limit}% at the interval's bound",
            c.name,
            c.job(),
            change_text(c),
            c.a_median_bw_bytes_per_s
                .map_or("-".into(), |v| format!("{:.1} MiB/s", v / MIB)),
            c.b_median_bw_bytes_per_s
                .map_or("-".into(), |v| format!("{:.1} MiB/s", v / MIB)),
        ));
    }
    say(format!(
        "iopath: {} case{} of {} got slower than {} by more than {limit}% (exit 1)",
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        report.b.name,
        report.a.name
    ));
    Ok(ExitCode::from(1))
}

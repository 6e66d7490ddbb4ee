//! What `iopath compare` is asked: its options, how they parse, and the
//! comparison of the files they name (`cli::compare` prints it).

use std::path::PathBuf;

use super::load::{default_names, load, sides};
use super::{compare, Report, Side, DEFAULT_DRIFT_PCT};
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

/// Load the files `args` names and compare them: the [`Report`] of
/// `iopath compare`. Bad input is a [`crate::plan::UsageError`] (exit 2).
pub fn compare_files(args: &Options) -> anyhow::Result<Report> {
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
    Ok(compare(
        &ra,
        &rb,
        side(&pa, args.name_a.as_ref(), name_a, &ra[0]),
        side(&pb, args.name_b.as_ref(), name_b, &rb[0]),
        args.fail_above,
        args.drift.unwrap_or(DEFAULT_DRIFT_PCT),
    ))
}

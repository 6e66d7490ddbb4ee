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
//!   comparing them questionable become notes ([`Note`]).
//! - `--fail-above` decides a [`Gate`]: pass, regression (exit 1) or
//!   cannot tell (exit 3).
//!
//! All of it is facts: `report::compare` draws the table and
//! `report::text::compare` words them. docs/compare.md is the user's
//! description of all of this.

mod case;
mod gate;
mod load;
mod matching;
mod notes;
mod options;
mod report;
pub mod test;

use crate::result::RunResult;

use case::compare_case;
pub use gate::{gate, Gate, Unsure};
pub use load::{load, parse, sides};
pub use matching::{match_runs, Key, Matched};
pub use notes::{DataSource, DeviceId, Note, ToolId, Which};
pub use options::{compare_files, parse_drift, parse_fail_above, Options};
pub use report::{CaseComparison, Report, Side, Status, Unmeasured};
pub use test::{Label, Test};

/// The drift allowance of a comparison with one run per side, in percent:
/// measured on this project's test machine with bench/compare-drift.sh
/// (docs/compare.md, "The drift allowance").
pub const DEFAULT_DRIFT_PCT: f64 = 38.0;

/// The equivalence margin of `no change` without `--fail-above`, in
/// percent: an interval that holds 1 is `no change` only when it lies
/// within `[1 - m, 1 / (1 - m)]`, else `inconclusive`. With `--fail-above
/// PCT` the margin is PCT: `no change` then means the interval rules out
/// the threshold both ways.
pub const DEFAULT_NO_CHANGE_PCT: f64 = 5.0;

/// A run whose device moved more than this many times the bytes a case
/// asked for (`device_fraction`) shared the disk with other traffic: with
/// one run a side, a slowdown measured then cannot be told from that
/// traffic (bench/compare-drift.sh found 10-30x in the runs that collapsed,
/// 1-2x otherwise).
pub const OTHER_TRAFFIC: f64 = 3.0;

/// Compare the runs `b` with the baseline runs `a` (one or more each).
pub fn compare(
    a: &[RunResult],
    b: &[RunResult],
    side_a: Side,
    side_b: Side,
    fail_above_pct: Option<f64>,
    drift_pct: f64,
) -> Report {
    let margin_pct = fail_above_pct.unwrap_or(DEFAULT_NO_CHANGE_PCT);
    let cases: Vec<CaseComparison> = match_runs(a, b)
        .iter()
        .map(|m| compare_case(m, drift_pct, margin_pct))
        .collect();
    let regressions = cases
        .iter()
        .filter(|c| match fail_above_pct {
            Some(p) => c.regressed(p),
            None => c.label == Some(Label::Slower),
        })
        .count();
    let notes = notes::notes(a, b, &cases);
    Report {
        a: side_a,
        b: side_b,
        fail_above_pct,
        drift_allowance_pct: drift_pct,
        no_change_margin_pct: margin_pct,
        cases,
        notes,
        regressions,
    }
}

#[cfg(test)]
pub(crate) mod tests;

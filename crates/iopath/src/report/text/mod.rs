//! The text layer: the sentences that word the typed facts of analysis
//! and of the runner (verdicts, warnings, comparisons, run events, the
//! closing summary) live here, and the terminal, Markdown and HTML
//! exporters all call these functions, so a wording change to a fact
//! touches this folder and its snapshots, nothing else. (Each exporter
//! keeps its own headings, legends and column names; what they share is
//! in [`framing`].)
//!
//! - [`verdict`]: verdicts (which method to use, and why);
//! - [`warnings`]: what may mislead in a run;
//! - [`compare`]: what changed between saved runs;
//! - [`events`]: what the runner reports while it runs (estimates, notes);
//! - [`framing`]: what the exporters' tables share (`~`, not reached);
//! - [`progress`]: the progress lines while it runs;
//! - [`skips`]: why cases did not run, and notes on an MPI run's ranks;
//! - [`summary`]: the closing answer of a run, a few lines;
//! - [`served`]: the cases set apart from the device's ranking;
//! - [`replay`]: what a replay (`--replay`) says of the program;
//! - [`conditions`]: the conditions a run's figures depend on;
//! - [`why`]: where the time goes (the verdict's cause, the latency split).

pub mod compare;
pub mod conditions;
pub mod events;
pub mod framing;
pub mod progress;
pub mod replay;
pub mod served;
pub mod skips;
pub mod summary;
pub mod verdict;
pub mod warnings;
pub mod why;

/// Word a result's facts in place: each verdict's `text` and each
/// warning's `message`, as the JSON carries them for convenience. Called
/// after [`crate::analysis::analyse`], before a result is written.
pub fn word(result: &mut crate::result::RunResult) {
    word_verdicts(result);
    warnings::word(result);
}

/// Word each verdict's `text` from its facts (one saved before facts
/// keeps its words).
pub fn word_verdicts(result: &mut crate::result::RunResult) {
    for v in &mut result.verdicts {
        v.text = verdict::lines(v);
    }
}

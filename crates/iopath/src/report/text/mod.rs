//! The text layer: the sentences that word the typed facts of analysis
//! and of the runner (verdicts, warnings, comparisons, run events, the
//! closing summary) live here, and the terminal, Markdown and HTML
//! exporters all call these functions, so a wording change to a fact
//! touches this folder and its snapshots, nothing else. (Each exporter
//! keeps its own framing: headings, legends, column names.)
//!
//! - [`verdict`]: verdicts (which method to use, and why);
//! - [`warnings`]: what may mislead in a run;
//! - [`compare`]: what changed between saved runs;
//! - [`events`]: what the runner reports while it runs (estimates, notes);
//! - [`summary`]: the closing answer of a run, a few lines;
//! - [`conditions`]: the conditions a run's figures depend on.

pub mod compare;
pub mod conditions;
pub mod events;
pub mod summary;
pub mod verdict;
pub mod warnings;

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

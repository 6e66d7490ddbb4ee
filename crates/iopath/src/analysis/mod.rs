//! What a finished run means: verdicts ([`verdict`]), warnings
//! ([`warnings`]) and comparisons of saved runs ([`compare`]). Analysis
//! reads results and computes typed facts; it writes no sentences (the text
//! layer under `report` words them).

pub mod compare;
pub mod replay;
pub mod verdict;
pub mod warnings;

/// Compute a result's warnings and verdicts from its cases (again, after
/// every round the runner hands over: they replace the previous ones).
pub fn analyse(result: &mut crate::result::RunResult) {
    // What served each case first: the verdicts rank like with like.
    verdict::served::mark(result);
    result.warnings = warnings::collect(result);
    result.verdicts = verdict::of_run(result);
    replay::answer(result);
}

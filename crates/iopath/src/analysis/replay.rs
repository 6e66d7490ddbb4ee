//! `--replay`: what the replay says of the program, as a fact
//! ([`crate::result::replay::ReplayAnswer`]): the verdict's pick against
//! `buffered` (what a program does unless told otherwise), or against the
//! slowest method ranked, each by the median time of a whole replay, and
//! their CPU per op. No words: `report::text::replay` says it.

use crate::model::Pattern;
use crate::result::names::Entrant;
use crate::result::replay::ReplayAnswer;
use crate::result::{CaseResult, RunResult};

/// Fills `r.replay`'s answer from the replay's verdict (none without one).
pub fn answer(r: &mut RunResult) {
    let found = of_run(r);
    if let Some(replay) = r.replay.as_mut() {
        replay.answer = found;
    }
}

fn of_run(r: &RunResult) -> Option<ReplayAnswer> {
    r.replay.as_ref()?;
    let v = r
        .verdicts
        .iter()
        .find(|v| v.job.pattern == Pattern::Replay)?;
    let case = |e: &Entrant| {
        r.cases
            .iter()
            .find(|c| c.pattern == Pattern::Replay && c.entrant() == *e && c.summary.is_some())
    };
    let pick = case(&v.pick)?;
    let buffered = v
        .ranking
        .iter()
        .find(|k| k.method == iopath_io::Method::Buffered && k.method != v.pick);
    let against = buffered.or_else(|| {
        v.ranking
            .iter()
            .rev()
            .find(|k| k.method != v.pick && !k.reference)
    })?;
    let other = case(&against.method)?;
    Some(ReplayAnswer {
        pick: v.pick.clone(),
        pick_ns: duration(pick)?,
        against: against.method.clone(),
        against_ns: duration(other)?,
        cpu_ratio: cpu_per_op(pick)
            .zip(cpu_per_op(other))
            .filter(|(_, b)| *b > 0.0)
            .map(|(a, b)| a / b),
        called: v.called,
    })
}

/// The median time of a whole replay.
fn duration(c: &CaseResult) -> Option<u64> {
    c.summary.as_ref().map(|s| s.duration_ns).filter(|&n| n > 0)
}

/// CPU per op (ns), the verdicts' figure.
fn cpu_per_op(c: &CaseResult) -> Option<f64> {
    c.summary
        .as_ref()
        .map(|s| s.cpu.ns_per_io)
        .filter(|n| n.is_finite() && *n > 0.0)
}

//! `--replay`: what the replay says of the program, as a fact
//! ([`crate::result::replay::ReplayAnswer`]): the verdict's pick against
//! `buffered` (what a program does unless told otherwise), or against the
//! slowest method ranked, each by the median time of a whole replay, and
//! their CPU per op. No words: `report::text::replay` says it.

use crate::model::Pattern;
use crate::result::facts::CaseNote;
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
    let bytes = r.replay.as_ref().map_or(0, |t| t.bytes);
    let (pick_ns, pick_cut) = duration(pick, bytes)?;
    let (against_ns, against_cut) = duration(other, bytes)?;
    Some(ReplayAnswer {
        pick: v.pick.clone(),
        pick_ns,
        against: against.method.clone(),
        against_ns,
        estimated: pick_cut || against_cut,
        cpu_ratio: cpu_per_op(pick)
            .zip(cpu_per_op(other))
            .filter(|(_, b)| *b > 0.0)
            .map(|(a, b)| a / b),
        called: v.called,
    })
}

/// The median time of a whole replay, and whether it is an estimate: a
/// case whose repetitions stopped at their share of the budget
/// ([`CaseNote::ReplayCut`]) moved part of the trace's `bytes`; the whole
/// trace at the pace it reached is its time scaled by what was left.
fn duration(c: &CaseResult, bytes: u64) -> Option<(u64, bool)> {
    let s = c.summary.as_ref().filter(|s| s.duration_ns > 0)?;
    let cut = c
        .facts
        .iter()
        .any(|f| matches!(f, CaseNote::ReplayCut { .. }));
    if !cut || s.io_bytes == 0 || s.io_bytes >= bytes {
        return Some((s.duration_ns, false));
    }
    let whole = s.duration_ns as f64 * bytes as f64 / s.io_bytes as f64;
    Some((whole.round() as u64, true))
}

/// CPU per op (ns), the verdicts' figure.
fn cpu_per_op(c: &CaseResult) -> Option<f64> {
    c.summary
        .as_ref()
        .map(|s| s.cpu.ns_per_io)
        .filter(|n| n.is_finite() && *n > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Measurement;

    fn case(duration_ns: u64, io_bytes: u64, cut: bool) -> CaseResult {
        CaseResult {
            summary: Some(Measurement {
                duration_ns,
                io_bytes,
                ..Measurement::default()
            }),
            facts: if cut {
                vec![CaseNote::ReplayCut {
                    limit_ns: duration_ns,
                }]
            } else {
                Vec::new()
            },
            ..CaseResult::default()
        }
    }

    /// A replay cut at its share of the budget moved part of the trace:
    /// the answer's time is the whole trace's at the pace reached, marked
    /// an estimate; a whole replay's is its own.
    #[test]
    fn a_cut_replays_time_is_the_whole_traces_estimated() {
        // A quarter of 400 MiB in 0.5 s: the whole in about 2 s.
        assert_eq!(
            duration(&case(500_000_000, 100 << 20, true), 400 << 20),
            Some((2_000_000_000, true))
        );
        assert_eq!(
            duration(&case(500_000_000, 400 << 20, false), 400 << 20),
            Some((500_000_000, false))
        );
    }
}

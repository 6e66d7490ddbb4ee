//! `--replay`: what the replay says of the program, as a fact
//! ([`crate::result::replay::ReplayAnswer`]): the verdict's pick against
//! `buffered` (what a program does unless told otherwise), or where the
//! pick is buffered against the runner-up, each by the median time of a
//! whole replay, and their CPU per op. No words: `report::text::replay`
//! says it.

use crate::model::Pattern;
use crate::result::facts::CaseNote;
use crate::result::names::Entrant;
use crate::result::records::Ranked;
use crate::result::replay::{Against, ReplayAnswer};
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
    let (against, against_is) = against(v)?;
    let other = case(&against.method)?;
    let bytes = r.replay.as_ref().map_or(0, |t| t.bytes);
    let (pick_ns, pick_cut) = duration(pick, bytes)?;
    let (against_ns, against_cut) = duration(other, bytes)?;
    Some(ReplayAnswer {
        pick: v.pick.clone(),
        pick_ns,
        against: against.method.clone(),
        against_ns,
        against_is: Some(against_is),
        estimated: pick_cut || against_cut,
        cpu_ratio: cpu_per_op(pick)
            .zip(cpu_per_op(other))
            .filter(|(_, b)| *b > 0.0)
            .map(|(a, b)| a / b),
        called: v.called,
    })
}

/// The method the pick is set against, and why: `buffered` where it ran
/// and is not the pick; else the runner-up (the method ranked after the
/// pick), or the fastest where the pick is not first (tied with it,
/// cheaper). Never the slowest: a far slower path says little of the
/// choice.
fn against(v: &crate::result::records::Verdict) -> Option<(&Ranked, Against)> {
    let others = || {
        v.ranking
            .iter()
            .filter(|k| k.method != v.pick && !k.reference)
    };
    if let Some(b) = others().find(|k| k.method == iopath_io::Method::Buffered) {
        return Some((b, Against::DefaultPath));
    }
    let at = v.ranking.iter().position(|k| k.method == v.pick);
    let before =
        |k: &&Ranked| at.is_some_and(|at| v.ranking[..at].iter().any(|b| std::ptr::eq(b, *k)));
    match others().find(before) {
        Some(first) => Some((first, Against::Fastest)),
        None => others().next().map(|k| (k, Against::RunnerUp)),
    }
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
    use crate::result::replay::Replay;
    use crate::result::Measurement;

    /// The report fixture's write job as a replay's: its cases (uring,
    /// direct, buffered, mmap, aio, fastest first) and its verdict.
    fn replayed() -> RunResult {
        let mut r: RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/report/run.json")).unwrap();
        r.verdicts.retain(|v| v.job.pattern == Pattern::Write);
        r.cases.retain(|c| c.pattern == Pattern::Write);
        for c in &mut r.cases {
            c.pattern = Pattern::Replay;
        }
        r.verdicts[0].job.pattern = Pattern::Replay;
        r.replay = Some(Replay {
            trace: "app.trace".into(),
            ops: 10,
            bytes: 4096,
            threads: 1,
            timing: "fast".into(),
            left_out: 0,
            depth: None,
            answer: None,
        });
        r
    }

    fn against_of(r: &RunResult) -> (String, Option<Against>) {
        let a = of_run(r).unwrap();
        (a.against.to_string(), a.against_is)
    }

    /// Without buffered in the ranking the answer set the pick against
    /// the slowest method (aio, far behind), not the one a user weighs it
    /// against: buffered as the default path, else the runner-up, and it
    /// says which.
    #[test]
    fn a_replays_answer_is_against_buffered_or_the_runner_up_never_the_slowest() {
        let mut r = replayed();
        let order: Vec<String> = r.verdicts[0]
            .ranking
            .iter()
            .map(|k| k.method.to_string())
            .collect();
        assert_eq!(order, ["uring", "direct", "buffered", "mmap", "aio"]);
        assert_eq!(
            against_of(&r),
            ("buffered".into(), Some(Against::DefaultPath))
        );
        r.verdicts[0].ranking.retain(|k| k.method != "buffered");
        assert_eq!(against_of(&r), ("direct".into(), Some(Against::RunnerUp)));
        // The pick buffered, ranked after uring (tied, cheaper): uring.
        let mut r = replayed();
        r.verdicts[0].pick = "buffered".into();
        assert_eq!(against_of(&r), ("uring".into(), Some(Against::Fastest)));
        // The pick buffered and first: the runner-up.
        let mut r = replayed();
        r.verdicts[0].ranking.swap(0, 2);
        r.verdicts[0].pick = "buffered".into();
        assert_eq!(against_of(&r), ("direct".into(), Some(Against::RunnerUp)));
    }

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

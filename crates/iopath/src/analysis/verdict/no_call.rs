//! What a verdict without a call says: what the leader measured against
//! every other method, why there is no call and what gives one.

use super::{Ranked, Verdict};
use crate::result::verdict_facts::{Measured, MedianRatio, NoCallAdvice};
use crate::result::CaseResult;
use crate::stats::{self, StopReason};

/// Of a job's real methods (`cases`): whether every one was stopped (an
/// interrupt; [`super::of_run`] keeps it only when the run says it was
/// interrupted), and, for an adaptive paired job short of a call
/// (`called_or_unpaired` false) that stopped at its budget, the
/// `--max-time` that gives it the rounds, from its repetitions' mean time
/// (warm-ups and set-up included, as the estimate counts them).
pub(super) fn shortfall(
    cases: &[&CaseResult],
    called_or_unpaired: bool,
    alpha: f64,
) -> (bool, Option<String>) {
    let stopped_by = |c: &CaseResult, why: StopReason| {
        c.repetition_control
            .as_ref()
            .is_some_and(|r| r.stopped_by == why)
    };
    let interrupted = cases.iter().all(|c| stopped_by(c, StopReason::Stopped));
    if interrupted
        || called_or_unpaired
        || !cases.iter().all(|c| stopped_by(c, StopReason::MaxTime))
    {
        return (interrupted, None);
    }
    let per_rep: Vec<(f64, u32)> = cases
        .iter()
        .filter_map(|c| c.repetition_control.as_ref())
        .filter(|r| r.measured + r.warmup > 0)
        .map(|r| {
            (
                r.elapsed_ns as f64 / 1e9 / f64::from(r.measured + r.warmup),
                r.warmup,
            )
        })
        .collect();
    let mean = per_rep.iter().map(|p| p.0).sum::<f64>() / per_rep.len().max(1) as f64;
    let warmup = per_rep.iter().map(|p| p.1).max().unwrap_or(0);
    let needed = stats::min_rounds(alpha);
    (
        false,
        Some(crate::model::units::fmt_duration(stats::max_time_for(
            needed, warmup, mean,
        ))),
    )
}

/// The budget a job of `cases` (its real methods) stopped at: the time it
/// was given, when one of them ran until that was spent and none was cut
/// short otherwise (an interrupt, `--case-timeout`).
pub(super) fn budget(cases: &[&CaseResult]) -> Option<u64> {
    let controls: Vec<&crate::result::RepetitionControl> = cases
        .iter()
        .filter_map(|c| c.repetition_control.as_ref())
        .collect();
    let cut = controls
        .iter()
        .any(|r| matches!(r.stopped_by, StopReason::Stopped | StopReason::CaseTimeout));
    let spent = controls.iter().any(|r| r.stopped_by == StopReason::MaxTime);
    if cut || !spent {
        return None;
    }
    controls.iter().filter_map(|r| r.budget_ns).max()
}

/// What gives a call: the `needed` rounds, by the flag that fits why the
/// job has fewer.
pub(super) fn advice(v: &Verdict, needed: usize) -> NoCallAdvice {
    if !v.capped.is_empty() {
        NoCallAdvice::CaseTimeout {
            methods: v.capped.clone(),
            repeat: needed,
        }
    } else if v.interrupted {
        NoCallAdvice::Interrupted
    } else if let Some(t) = &v.max_time_for_call {
        NoCallAdvice::MaxTime {
            max_time: t.clone(),
            repeat: needed,
        }
    } else {
        NoCallAdvice::RunLonger { repeat: needed }
    }
}

/// How many of the others a verdict without a call lists: all up to this
/// many, else one fewer and "N others".
const LISTED: usize = 5;

/// Without a call, what the leader measured against every other method
/// (`r`: the real methods, the leader first), the closest first: all of
/// them up to five, else the closest four and how many more. The ratios
/// are those of the statistic that put the leader first: the paired
/// estimates (`fastest_ratio`) where they rank it ahead of every other
/// method (a paired ranking), else the medians' (the table's "vs best",
/// the ranking without a call), so that the leader never "measured" less
/// than another.
pub(super) fn others_measured(r: &[&Ranked]) -> Measured {
    let Some(top) = r.first() else {
        return Measured {
            ratios: Vec::new(),
            others: 0,
        };
    };
    let paired = r
        .iter()
        .skip(1)
        .all(|m| m.fastest_ratio.is_finite() && m.fastest_ratio >= 1.0);
    let mut ratios: Vec<MedianRatio> = r
        .iter()
        .skip(1)
        .map(|m| MedianRatio {
            method: m.method.clone(),
            ratio: if paired || m.bw_bytes_per_s <= 0.0 {
                m.fastest_ratio
            } else {
                top.bw_bytes_per_s / m.bw_bytes_per_s
            },
        })
        .collect();
    if ratios.len() <= LISTED {
        return Measured { ratios, others: 0 };
    }
    let others = ratios.len() - (LISTED - 1);
    ratios.truncate(LISTED - 1);
    Measured { ratios, others }
}

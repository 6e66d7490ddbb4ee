//! What a verdict without a call says: what the leader measured against
//! every other method, why there is no call and what gives one.

use super::{list, x, Ranked, Verdict};
use crate::result::{CaseResult, Entrant};
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

/// What gives a call: the `needed` rounds, by the flag that fits why the
/// job has fewer.
pub(super) fn advice(v: &Verdict, needed: usize) -> String {
    if v.capped.is_empty() {
        if v.interrupted {
            format!(
                "the run was interrupted ({}) before it had them: run it again to the end",
                crate::stop_cause()
            )
        } else if let Some(t) = &v.max_time_for_call {
            format!("--max-time {t} or --repeat {needed} gives them")
        } else {
            format!("run longer (--max-time) or --repeat {needed}")
        }
    } else {
        let names: Vec<&Entrant> = v.capped.iter().collect();
        format!(
            "--case-timeout stopped {} early: give a larger --case-timeout (0 for none) with --repeat {needed}, or less work per repetition (a smaller --size or --io-size)",
            list(&names)
        )
    }
}

/// Without a call, what the leader measured against every other method
/// (`r`: the real methods, the leader first), the closest first: all of
/// them up to five, else the closest four "and N others". The ratios are
/// the medians' (the table's "vs best"), the order the leader's is on.
pub(super) fn others_measured(r: &[&Ranked]) -> String {
    let Some(top) = r.first() else {
        return String::new();
    };
    let all: Vec<String> = r
        .iter()
        .skip(1)
        .map(|m| {
            let ratio = if m.bw_bytes_per_s > 0.0 {
                top.bw_bytes_per_s / m.bw_bytes_per_s
            } else {
                m.fastest_ratio
            };
            format!("{} {}", x(ratio), m.method)
        })
        .collect();
    if all.len() <= 5 {
        return list(&all.iter().map(String::as_str).collect::<Vec<_>>());
    }
    format!("{} and {} others", all[..4].join(", "), all.len() - 4)
}

//! How many repetitions a case runs: a fixed count (`--repeat N`), or
//! adaptively until the median throughput's 95% interval is narrow enough
//! ([`StopRule`]), within the case's time budget. Warm-up repetitions come
//! first and are not counted.
//!
//! The loop only sees what each repetition reports (throughput and wall
//! time), so it is tested with a deterministic fake in place of the engines.

use crate::stats::{StopReason, StopRule};

/// What one repetition reported to the loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RepOutcome {
    /// A repetition completed: its throughput and the wall time it took,
    /// set-up included.
    Done { bw: f64, wall_ns: u64 },
    /// The case cannot go on (Ctrl-C, an error, a skip).
    Stop,
}

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopEnd {
    pub stopped_by: StopReason,
    pub measured: u32,
    pub warmup: u32,
    pub elapsed_ns: u64,
}

/// Run `warmup` uncounted repetitions, then measured ones until `fixed`
/// repetitions ran, or, without `fixed`, until `rule` says stop. `one` is
/// called with `true` for a warm-up.
pub fn repeat_case(
    fixed: Option<u32>,
    rule: Option<StopRule>,
    warmup: u32,
    mut one: impl FnMut(bool) -> RepOutcome,
) -> LoopEnd {
    let mut end = LoopEnd {
        stopped_by: StopReason::Stopped,
        measured: 0,
        warmup: 0,
        elapsed_ns: 0,
    };
    let mut samples: Vec<f64> = Vec::new();
    let mut slowest = 0u64;
    loop {
        let is_warmup = end.warmup < warmup;
        match one(is_warmup) {
            RepOutcome::Stop => {
                end.stopped_by = StopReason::Stopped;
                return end;
            }
            RepOutcome::Done { bw, wall_ns } => {
                end.elapsed_ns = end.elapsed_ns.saturating_add(wall_ns);
                slowest = slowest.max(wall_ns);
                if is_warmup {
                    end.warmup += 1;
                } else {
                    end.measured += 1;
                    samples.push(bw);
                }
            }
        }
        if let Some(n) = fixed {
            if end.measured >= n {
                end.stopped_by = StopReason::Fixed;
                return end;
            }
            continue;
        }
        let Some(rule) = rule else {
            // Neither a count nor a rule: one measured repetition.
            if end.measured >= 1 {
                end.stopped_by = StopReason::Fixed;
                return end;
            }
            continue;
        };
        if samples.is_empty() {
            // Warm-ups also spend the budget; a case with none measured
            // yet still gets one.
            continue;
        }
        if let Some(why) = rule.decide(&samples, end.elapsed_ns, slowest) {
            end.stopped_by = why;
            return end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn rule(ci: f64, max_time_ms: u64) -> StopRule {
        StopRule {
            ci_target: ci,
            min_reps: 3,
            max_reps: 1000,
            max_time_ns: max_time_ms * MS,
        }
    }

    /// A fake engine: throughputs from a fixed list (cycled), each
    /// repetition taking `wall_ms`.
    fn fake(bws: &'static [f64], wall_ms: u64) -> impl FnMut(bool) -> RepOutcome {
        let mut i = 0;
        move |_| {
            let bw = bws[i % bws.len()];
            i += 1;
            RepOutcome::Done {
                bw,
                wall_ns: wall_ms * MS,
            }
        }
    }

    #[test]
    fn steady_engine_stops_at_six_on_the_target() {
        let e = repeat_case(
            None,
            Some(rule(0.03, 10_000)),
            0,
            fake(&[100.0, 101.0, 99.0], 10),
        );
        assert_eq!(e.stopped_by, StopReason::CiTarget);
        assert_eq!(e.measured, 6);
        assert_eq!(e.elapsed_ns, 60 * MS);
    }

    #[test]
    fn noisy_engine_runs_until_the_interval_narrows() {
        // One repetition in four 10% faster: the order-statistic interval
        // [X(j), X(n+1-j)] tightens as n grows (n = 10 uses the 2nd and 9th
        // values) and leaves the fast quarter out only after many more than
        // the 6 a steady engine needs.
        static BW: [f64; 4] = [100.0, 100.0, 110.0, 100.0];
        let e = repeat_case(None, Some(rule(0.03, 100_000)), 0, fake(&BW, 10));
        assert_eq!(e.stopped_by, StopReason::CiTarget);
        assert!(e.measured > 6, "{e:?}");
        // Deterministic: the same fake gives the same count.
        let again = repeat_case(None, Some(rule(0.03, 100_000)), 0, fake(&BW, 10));
        assert_eq!(e, again);
    }

    #[test]
    fn hopeless_engine_stops_on_the_time_budget() {
        static BW: [f64; 2] = [50.0, 150.0];
        let e = repeat_case(None, Some(rule(0.03, 1000)), 0, fake(&BW, 300));
        assert_eq!(e.stopped_by, StopReason::MaxTime);
        // 3 x 300 ms fit in 1 s; a 4th would end at 1.2 s.
        assert_eq!(e.measured, 3);
        assert!(e.elapsed_ns <= 1000 * MS);
    }

    #[test]
    fn warmups_come_first_and_are_not_counted() {
        let mut seen = Vec::new();
        let e = repeat_case(Some(4), None, 2, |w| {
            seen.push(w);
            RepOutcome::Done {
                bw: 1.0,
                wall_ns: MS,
            }
        });
        assert_eq!(seen, vec![true, true, false, false, false, false]);
        assert_eq!(
            (e.measured, e.warmup, e.stopped_by),
            (4, 2, StopReason::Fixed)
        );
    }

    #[test]
    fn the_floor_of_three_holds_past_the_budget() {
        // A warm-up alone spends the 100 ms budget: three measured
        // repetitions still run, no more.
        let e = repeat_case(None, Some(rule(0.03, 100)), 1, fake(&[1.0], 500));
        assert_eq!((e.warmup, e.measured), (1, 3));
        assert_eq!(e.stopped_by, StopReason::MaxTime);
    }

    #[test]
    fn stop_ends_the_loop_at_once() {
        let mut n = 0;
        let e = repeat_case(None, Some(rule(0.03, 10_000)), 0, |_| {
            n += 1;
            if n == 3 {
                RepOutcome::Stop
            } else {
                RepOutcome::Done {
                    bw: 1.0,
                    wall_ns: MS,
                }
            }
        });
        assert_eq!((e.measured, e.stopped_by), (2, StopReason::Stopped));
    }
}

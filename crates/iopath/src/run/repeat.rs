//! The order repetitions run in, and when they stop.
//!
//! A **job** is a set of **arms** (cases that differ only by method, or by
//! the arm of one method named twice). Warm-up repetitions of every arm come
//! first, themselves in rounds (one warm-up of every arm per warm-up round,
//! so that no arm's warm-up is separated from its first measured repetition
//! by all the others'). Then the arms take turns in **rounds**: one measured
//! repetition of every arm still running per round, in an order shuffled
//! afresh every round from the order seed. Independent shuffles make the
//! order of two arms in one round a fair coin, independent of every other
//! round, whatever runs before or after them (position and carry-over
//! effects become symmetric noise): the paired test's assumption. Anything that drifts between cases (other traffic on
//! a shared disk, device state, the host) then falls on every arm alike
//! instead of being credited to one method, and repetitions of one round can
//! be paired (the verdict's ratios come from them).
//!
//! When to stop is decided after each round: after a fixed number of rounds
//! (`--repeat N`), or adaptively ([`StopRule`]) once every running arm's
//! median throughput has a 95% interval within the target, or when the next
//! round would not fit in the running arms' budget (the rule's per-case
//! budget for each arm still running, against the time those arms spent),
//! never before the rule's floor of rounds.
//!
//! **The case timeout** (`--case-timeout`) is per arm: the wall time of an
//! arm's repetitions (warm-ups included) may not pass it. Each repetition
//! is given what is left of it ([`RepCall::budget_ns`]) and stops there
//! (the runner keeps the part it did, [`RepOutcome::Capped`]); a repetition
//! that would not fit (the arm's slowest so far, against what is left) is
//! not started. Either way the arm leaves the job, stopped by
//! [`StopReason::CaseTimeout`], keeping what it measured, and the others
//! go on. The first repetition of an arm always starts.
//!
//! `--schedule sequential` is the same loop with a job of one arm per case.
//!
//! The loop sees only what each repetition reports (throughput and wall
//! time), so it is tested with a deterministic fake in place of the engines.

use crate::stats::{StopReason, StopRule};

mod budget;

/// What one repetition reported to the loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RepOutcome {
    /// A repetition completed: its throughput and the wall time it took,
    /// set-up included.
    Done { bw: f64, wall_ns: u64 },
    /// The repetition reached the arm's case timeout part-way and stopped
    /// there (its part is kept, marked); the arm leaves the job.
    Capped { bw: f64, wall_ns: u64 },
    /// This arm cannot go on (an error, a skip); the others can.
    Stop,
    /// The whole run must end now (Ctrl-C).
    Abort,
}

/// The repetition the loop asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepCall {
    /// Which arm (index into the job's arms).
    pub arm: usize,
    pub warmup: bool,
    /// 0 for warm-ups, else 1, 2, ...
    pub round: u32,
    /// With a case timeout: what is left of it for this arm, ns (the
    /// repetition must stop there).
    pub budget_ns: Option<u64>,
}

/// How the job ended.
#[derive(Debug, Clone, PartialEq)]
pub struct JobEnd {
    /// Why the job stopped repeating (for arms still running at the end).
    pub stopped_by: StopReason,
    /// Measured rounds begun.
    pub rounds: u32,
    /// Per arm, in arm order.
    pub arms: Vec<ArmEnd>,
    /// True when an `Abort` ended the job.
    pub aborted: bool,
}

/// How one arm ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArmEnd {
    pub stopped_by: StopReason,
    pub measured: u32,
    pub warmup: u32,
    /// Sum of its repetitions' wall times.
    pub elapsed_ns: u64,
}

/// What decides the order and the end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// `--repeat N`: exactly N rounds.
    pub fixed: Option<u32>,
    /// Adaptive stopping, when not fixed.
    pub rule: Option<StopRule>,
    /// Warm-up repetitions per arm.
    pub warmup: u32,
    /// Seeds the per-round shuffles.
    pub seed: u64,
    /// Added to every measured round's number, so that rounds are unique
    /// across the jobs of a run (repetitions pair only within a job).
    pub round_base: u32,
    /// `--case-timeout`, ns: each arm's wall-clock cap.
    pub case_timeout_ns: Option<u64>,
    /// The job's share of `--budget` (or a fio job's `runtime`), ns, set-up
    /// and warm-ups included: adaptive rounds are then spent where the
    /// verdict needs them ([`Job::budgeted`]) instead of per arm.
    pub budget_ns: Option<u64>,
}

/// Run a job of `arms` arms. `one` runs the repetition it is given.
pub fn run_job(arms: usize, s: &Schedule, mut one: impl FnMut(RepCall) -> RepOutcome) -> JobEnd {
    let mut job = Job::new(arms, s.case_timeout_ns);
    let mut rng = iopath_io::data::Rng::stream(s.seed ^ ORDER_MIX, 0);
    let mut order: Vec<usize> = Vec::with_capacity(arms);
    for _ in 0..s.warmup {
        job.shuffled(&mut order, &mut rng);
        if !job.round(&order, true, 0, &mut one) {
            return job.finish(StopReason::Stopped);
        }
    }
    loop {
        if !job.alive.iter().any(|&a| a) {
            return job.finish(StopReason::Stopped);
        }
        job.end.rounds += 1;
        job.shuffled(&mut order, &mut rng);
        let round = s.round_base + job.end.rounds;
        if !job.round(&order, false, round, &mut one) {
            return job.finish(StopReason::Stopped);
        }
        if let (None, Some(rule), Some(budget)) = (s.fixed, s.rule, s.budget_ns) {
            if let Some(why) = job.budgeted(&rule, budget) {
                return job.finish(why);
            }
            continue;
        }
        let spent: u64 = (0..arms)
            .filter(|&a| job.alive[a])
            .map(|a| job.end.arms[a].elapsed_ns)
            .sum();
        let b = &job.b;
        if let Some(why) = decide(s, &job.alive, &b.samples, &b.slowest, spent, job.end.rounds) {
            return job.finish(why);
        }
    }
}

/// A job under way: how it ends so far, which arms still run, the books,
/// and the case timeout (ns) each arm is held to.
struct Job {
    end: JobEnd,
    alive: Vec<bool>,
    b: Books,
    cap: Option<u64>,
}

/// A repetition that ran, as the loop books it.
#[derive(Debug, Clone, Copy)]
struct Ran {
    bw: f64,
    wall_ns: u64,
    /// Cut by the case timeout: its arm leaves.
    capped: bool,
}

impl Job {
    fn new(arms: usize, cap: Option<u64>) -> Job {
        let arm = ArmEnd {
            stopped_by: StopReason::Stopped,
            measured: 0,
            warmup: 0,
            elapsed_ns: 0,
        };
        Job {
            end: JobEnd {
                stopped_by: StopReason::Stopped,
                rounds: 0,
                arms: vec![arm; arms],
                aborted: false,
            },
            alive: vec![true; arms],
            b: Books {
                samples: vec![Vec::new(); arms],
                rounds: vec![Vec::new(); arms],
                slowest: vec![0; arms],
                gone: vec![StopReason::Stopped; arms],
            },
            cap,
        }
    }

    /// The arms still running, in a fresh shuffle, into `order`.
    fn shuffled(&self, order: &mut Vec<usize>, rng: &mut iopath_io::data::Rng) {
        order.clear();
        order.extend((0..self.alive.len()).filter(|&a| self.alive[a]));
        shuffle(order, rng);
    }

    /// Runs the arms of `order` once each as `warmup`/`round` and books
    /// them; false when the job must end.
    fn round(
        &mut self,
        order: &[usize],
        warmup: bool,
        round: u32,
        one: &mut impl FnMut(RepCall) -> RepOutcome,
    ) -> bool {
        for &arm in order {
            let done = &self.end.arms[arm];
            let budget_ns = self.cap.map(|c| c.saturating_sub(done.elapsed_ns));
            let started = done.measured + done.warmup > 0;
            if budget_ns.is_some_and(|left| started && (left == 0 || self.b.slowest[arm] > left)) {
                // The next repetition would not fit in what is left.
                self.alive[arm] = false;
                self.b.gone[arm] = StopReason::CaseTimeout;
                continue;
            }
            let c = RepCall {
                arm,
                warmup,
                round,
                budget_ns,
            };
            let ran = match one(c) {
                RepOutcome::Abort => {
                    self.end.aborted = true;
                    return false;
                }
                RepOutcome::Stop => {
                    self.alive[arm] = false;
                    continue;
                }
                RepOutcome::Done { bw, wall_ns } => Ran {
                    bw,
                    wall_ns,
                    capped: false,
                },
                RepOutcome::Capped { bw, wall_ns } => Ran {
                    bw,
                    wall_ns,
                    capped: true,
                },
            };
            self.book(arm, warmup, round, ran);
        }
        true
    }

    /// A repetition of `arm` that ran, booked.
    fn book(&mut self, arm: usize, warmup: bool, round: u32, ran: Ran) {
        let a = &mut self.end.arms[arm];
        a.elapsed_ns = a.elapsed_ns.saturating_add(ran.wall_ns);
        self.b.slowest[arm] = self.b.slowest[arm].max(ran.wall_ns);
        if warmup {
            a.warmup += 1;
        } else {
            a.measured += 1;
            self.b.samples[arm].push(ran.bw);
            self.b.rounds[arm].push(round);
        }
        if ran.capped {
            self.alive[arm] = false;
            self.b.gone[arm] = StopReason::CaseTimeout;
        }
    }

    fn finish(self, why: StopReason) -> JobEnd {
        finish(self.end, &self.alive, &self.b.gone, why)
    }
}

/// The seed's mix for the shuffles (any constant; fixed so that a seed
/// always gives the same orders).
const ORDER_MIX: u64 = 0x5eed_0bde;

/// What the loop keeps per arm: measured throughputs, the slowest
/// repetition's wall time, and why an arm that left did.
struct Books {
    samples: Vec<Vec<f64>>,
    /// The round of each sample (paired by it).
    rounds: Vec<Vec<u32>>,
    slowest: Vec<u64>,
    gone: Vec<StopReason>,
}

/// Decide after a round: `None` to go on.
fn decide(
    s: &Schedule,
    alive: &[bool],
    samples: &[Vec<f64>],
    slowest: &[u64],
    elapsed: u64,
    rounds: u32,
) -> Option<StopReason> {
    if let Some(n) = s.fixed {
        return (rounds >= n).then_some(StopReason::Fixed);
    }
    let Some(rule) = s.rule else {
        // Neither a count nor a rule: one round.
        return Some(StopReason::Fixed);
    };
    // An arm that left takes its share of the budget and its time with it.
    let running: Vec<usize> = (0..alive.len()).filter(|&a| alive[a]).collect();
    let samples: Vec<&[f64]> = running.iter().map(|&a| samples[a].as_slice()).collect();
    let next: u64 = running.iter().map(|&a| slowest[a]).sum();
    // The warm-ups ran are the schedule's: their time is in `elapsed`.
    let rule = StopRule {
        warmup_rounds: s.warmup as usize,
        ..rule
    };
    rule.decide_job(&samples, rounds as usize, elapsed, next)
}

fn finish(mut end: JobEnd, alive: &[bool], gone: &[StopReason], why: StopReason) -> JobEnd {
    end.stopped_by = why;
    for ((a, &live), &left) in end.arms.iter_mut().zip(alive).zip(gone) {
        a.stopped_by = if live { why } else { left };
    }
    end
}

/// Fisher-Yates, from the run's own generator.
fn shuffle(v: &mut [usize], rng: &mut iopath_io::data::Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
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
            wanted_reps: 3,
            max_reps: 1000,
            max_time_ns: max_time_ms * MS,
            warmup_rounds: 0,
        }
    }

    fn adaptive(ci: f64, max_time_ms: u64, warmup: u32) -> Schedule {
        Schedule {
            fixed: None,
            rule: Some(rule(ci, max_time_ms)),
            warmup,
            seed: 1,
            round_base: 0,
            case_timeout_ns: None,
            budget_ns: None,
        }
    }

    fn fixed(n: u32, warmup: u32, seed: u64) -> Schedule {
        Schedule {
            fixed: Some(n),
            rule: None,
            warmup,
            seed,
            round_base: 0,
            case_timeout_ns: None,
            budget_ns: None,
        }
    }

    /// A fake engine per arm: throughputs from a fixed list (cycled), each
    /// repetition taking `wall_ms`; it logs every call.
    fn fake<'a>(
        bws: &'a [&'a [f64]],
        wall_ms: u64,
        log: &'a mut Vec<RepCall>,
    ) -> impl FnMut(RepCall) -> RepOutcome + 'a {
        let mut i = vec![0usize; bws.len()];
        move |c| {
            log.push(c);
            let list = bws[c.arm];
            let bw = list[i[c.arm] % list.len()];
            i[c.arm] += 1;
            RepOutcome::Done {
                bw,
                wall_ns: wall_ms * MS,
            }
        }
    }

    #[test]
    fn every_round_runs_each_arm_once_in_a_shuffled_order() {
        let mut log = Vec::new();
        let arms: [&[f64]; 4] = [&[1.0], &[2.0], &[3.0], &[4.0]];
        let e = run_job(4, &fixed(12, 0, 7), fake(&arms, 1, &mut log));
        assert_eq!((e.rounds, e.stopped_by), (12, StopReason::Fixed));
        assert_eq!(log.len(), 48);
        let rounds: Vec<Vec<usize>> = log
            .chunks(4)
            .enumerate()
            .map(|(r, c)| {
                assert!(c.iter().all(|x| x.round == r as u32 + 1 && !x.warmup));
                c.iter().map(|x| x.arm).collect()
            })
            .collect();
        for r in &rounds {
            let mut s = r.clone();
            s.sort_unstable();
            assert_eq!(s, vec![0, 1, 2, 3], "each arm once per round: {r:?}");
        }
        // Shuffled: not always the same order, and every arm gets to go
        // first at some point in 12 rounds of 4.
        assert!(rounds.iter().any(|r| r != &rounds[0]), "{rounds:?}");
        let firsts: std::collections::BTreeSet<usize> = rounds.iter().map(|r| r[0]).collect();
        assert_eq!(firsts.len(), 4, "{rounds:?}");
        // The seed decides the orders: the same seed, the same log.
        let mut again = Vec::new();
        run_job(4, &fixed(12, 0, 7), fake(&arms, 1, &mut again));
        assert_eq!(log, again);
        let mut other = Vec::new();
        run_job(4, &fixed(12, 0, 8), fake(&arms, 1, &mut other));
        assert_ne!(log, other);
    }

    #[test]
    fn the_order_of_two_arms_is_a_fresh_coin_every_round() {
        // Over many rounds each arm goes first about half the time, and
        // whether it does is independent of the round before (a rotation
        // would make every second round the reverse of the first).
        let mut log = Vec::new();
        let arms: [&[f64]; 2] = [&[1.0], &[1.0]];
        run_job(2, &fixed(400, 0, 11), fake(&arms, 1, &mut log));
        let first: Vec<bool> = log.chunks(2).map(|r| r[0].arm == 0).collect();
        let ones = first.iter().filter(|&&f| f).count();
        assert!((160..=240).contains(&ones), "{ones} of 400");
        let same = first.windows(2).filter(|w| w[0] == w[1]).count();
        assert!(
            (160..=240).contains(&same),
            "{same} of 399 repeat the last order"
        );
    }

    #[test]
    fn warmups_of_every_arm_come_first_and_are_not_counted() {
        // Warm-ups come in rounds too, shuffled: one of each arm, then
        // again.
        let mut log = Vec::new();
        let arms: [&[f64]; 2] = [&[1.0], &[1.0]];
        let e = run_job(2, &fixed(3, 2, 1), fake(&arms, 1, &mut log));
        let head: Vec<(usize, bool, u32)> = log
            .iter()
            .take(4)
            .map(|c| (c.arm, c.warmup, c.round))
            .collect();
        let mut first: Vec<usize> = head[..2].iter().map(|h| h.0).collect();
        let mut second: Vec<usize> = head[2..].iter().map(|h| h.0).collect();
        first.sort_unstable();
        second.sort_unstable();
        assert_eq!((first, second), (vec![0, 1], vec![0, 1]), "{head:?}");
        assert!(head.iter().all(|h| h.1 && h.2 == 0), "{head:?}");
        assert!(log[4..].iter().all(|c| !c.warmup && c.round >= 1));
        for a in &e.arms {
            assert_eq!(
                (a.measured, a.warmup, a.stopped_by),
                (3, 2, StopReason::Fixed)
            );
        }
    }

    #[test]
    fn adaptive_stop_waits_for_every_arm() {
        // Arm 0 is steady (meets 3% at 6 rounds); arm 1 alternates by 10%
        // and needs more: the job goes on for both, so that rounds stay
        // paired, and stops when arm 1 meets the target too.
        let mut log = Vec::new();
        let arms: [&[f64]; 2] = [&[100.0, 101.0, 99.0], &[100.0, 100.0, 110.0, 100.0]];
        let e = run_job(2, &adaptive(0.03, 100_000, 0), fake(&arms, 10, &mut log));
        assert_eq!(e.stopped_by, StopReason::CiTarget);
        assert!(e.rounds > 6, "{e:?}");
        assert_eq!(e.arms[0].measured, e.rounds);
        assert_eq!(e.arms[1].measured, e.rounds);
        // One arm alone stops at 6, as a steady case always did.
        let mut one = Vec::new();
        let e1 = run_job(
            1,
            &adaptive(0.03, 100_000, 0),
            fake(&arms[..1], 10, &mut one),
        );
        assert_eq!((e1.rounds, e1.stopped_by), (6, StopReason::CiTarget));
    }

    #[test]
    fn the_budget_is_per_arm_and_decided_per_round() {
        // 2 arms x 300 ms per repetition, 1 s per arm: rounds of 600 ms
        // in a 2 s budget. Three rounds (1.8 s) fit; a fourth would not.
        static BW: [f64; 2] = [50.0, 150.0];
        let arms: [&[f64]; 2] = [&BW, &BW];
        let mut log = Vec::new();
        let e = run_job(2, &adaptive(0.03, 1000, 0), fake(&arms, 300, &mut log));
        assert_eq!((e.rounds, e.stopped_by), (3, StopReason::MaxTime));
        assert_eq!(e.arms[0].elapsed_ns + e.arms[1].elapsed_ns, 1800 * MS);
    }

    #[test]
    fn an_arm_that_leaves_takes_its_share_of_the_budget() {
        // Three arms of 300 ms, 1 s each; arm 2 fails at once. The two
        // left have 2 s: three rounds of 600 ms, not the five that the
        // third arm's share would have paid for.
        let e = run_job(3, &adaptive(0.0001, 1000, 0), |c| {
            if c.arm == 2 {
                RepOutcome::Stop
            } else {
                RepOutcome::Done {
                    bw: if c.round % 2 == 0 { 1.0 } else { 2.0 },
                    wall_ns: 300 * MS,
                }
            }
        });
        assert_eq!((e.rounds, e.stopped_by), (3, StopReason::MaxTime));
        assert_eq!(e.arms[2].stopped_by, StopReason::Stopped);
    }

    #[test]
    fn rounds_are_numbered_from_the_base() {
        let mut log = Vec::new();
        let arms: [&[f64]; 2] = [&[1.0], &[1.0]];
        let mut s = fixed(2, 1, 1);
        s.round_base = 40;
        run_job(2, &s, fake(&arms, 1, &mut log));
        let rounds: Vec<u32> = log.iter().map(|c| c.round).collect();
        assert_eq!(rounds, vec![0, 0, 41, 41, 42, 42]);
    }

    #[test]
    fn a_job_runs_the_rounds_its_verdict_needs_when_they_fit_in_twice_its_budget() {
        // 2 arms x 100 ms, 1 s each: 10 rounds fit in 2 s; wanting 12 (2.4
        // s, within twice the budget) the job runs 12; wanting 30 (6 s) it
        // cannot afford them and stops at its budget, 10.
        let arms: [&[f64]; 2] = [&[1.0, 2.0], &[2.0, 1.0]];
        let mut r = rule(0.0001, 1000);
        let run = |r: StopRule, arms: &[&[f64]]| {
            let mut log = Vec::new();
            let s = Schedule {
                fixed: None,
                rule: Some(r),
                warmup: 0,
                seed: 1,
                round_base: 0,
                case_timeout_ns: None,
                budget_ns: None,
            };
            run_job(2, &s, fake(arms, 100, &mut log)).rounds
        };
        assert_eq!(run(r, &arms), 10);
        r.wanted_reps = 12;
        assert_eq!(run(r, &arms), 12);
        r.wanted_reps = 30;
        assert_eq!(run(r, &arms), 10);
        // Steady arms meet a loose target at 6 rounds, but a verdict that
        // needs 9 gets them.
        let steady: [&[f64]; 2] = [&[100.0], &[100.0]];
        let (mut loose, mut wanting) = (rule(0.5, 1000), rule(0.5, 1000));
        wanting.wanted_reps = 9;
        loose.wanted_reps = 3;
        assert_eq!(run(loose, &steady), 6);
        assert_eq!(run(wanting, &steady), 9);
    }

    #[test]
    fn the_floor_of_three_rounds_holds_past_the_budget() {
        let arms: [&[f64]; 1] = [&[1.0]];
        let mut log = Vec::new();
        let e = run_job(1, &adaptive(0.03, 100, 1), fake(&arms, 500, &mut log));
        assert_eq!((e.arms[0].warmup, e.arms[0].measured), (1, 3));
        assert_eq!(e.stopped_by, StopReason::MaxTime);
    }

    #[test]
    fn a_stopped_arm_leaves_and_the_others_go_on() {
        let mut calls = Vec::new();
        let e = run_job(3, &fixed(5, 0, 3), |c| {
            calls.push(c);
            // Arm 1 fails in its third round.
            if c.arm == 1 && c.round == 3 {
                RepOutcome::Stop
            } else {
                RepOutcome::Done {
                    bw: 1.0,
                    wall_ns: MS,
                }
            }
        });
        assert_eq!(e.rounds, 5);
        assert_eq!(
            (e.arms[1].measured, e.arms[1].stopped_by),
            (2, StopReason::Stopped)
        );
        assert_eq!(
            (e.arms[0].measured, e.arms[0].stopped_by),
            (5, StopReason::Fixed)
        );
        assert_eq!(e.arms[2].measured, 5);
        assert!(!calls.iter().any(|c| c.arm == 1 && c.round > 3));
    }

    #[test]
    fn the_case_timeout_stops_an_arm_whose_next_repetition_would_not_fit() {
        // Arm 0 takes 400 ms a repetition, arm 1 10 ms; a 1 s cap each.
        // Arm 0 runs at 1 s and 600 ms left, then (200 ms left, 400 needed)
        // leaves; arm 1 runs its 5 rounds.
        let mut calls = Vec::new();
        let mut s = fixed(5, 0, 1);
        s.case_timeout_ns = Some(1000 * MS);
        let e = run_job(2, &s, |c| {
            calls.push(c);
            RepOutcome::Done {
                bw: 1.0,
                wall_ns: if c.arm == 0 { 400 * MS } else { 10 * MS },
            }
        });
        assert_eq!(
            (e.arms[0].measured, e.arms[0].stopped_by),
            (2, StopReason::CaseTimeout)
        );
        assert_eq!(
            (e.arms[1].measured, e.arms[1].stopped_by),
            (5, StopReason::Fixed)
        );
        let budgets: Vec<Option<u64>> = calls
            .iter()
            .filter(|c| c.arm == 0)
            .map(|c| c.budget_ns)
            .collect();
        assert_eq!(budgets, vec![Some(1000 * MS), Some(600 * MS)]);
        assert_eq!(calls.iter().filter(|c| c.arm == 1).count(), 5);
        // Without a cap nothing is given or cut.
        let mut free = Vec::new();
        let e = run_job(2, &fixed(5, 0, 1), fake(&[&[1.0], &[1.0]], 400, &mut free));
        assert!(free.iter().all(|c| c.budget_ns.is_none()));
        assert_eq!(e.arms[0].measured, 5);
    }

    #[test]
    fn a_repetition_cut_by_the_case_timeout_counts_and_ends_its_arm() {
        // The first repetition always starts, with the whole cap; one that
        // reports itself cut is booked as measured, and its arm leaves
        // with adaptive rounds still to go.
        let mut s = adaptive(0.03, 100_000, 0);
        s.case_timeout_ns = Some(50 * MS);
        let e = run_job(1, &s, |c| {
            assert_eq!(c.budget_ns, Some(50 * MS));
            RepOutcome::Capped {
                bw: 2.0,
                wall_ns: 51 * MS,
            }
        });
        assert_eq!(
            (e.rounds, e.arms[0].measured, e.arms[0].stopped_by),
            (1, 1, StopReason::CaseTimeout)
        );
        assert_eq!(e.arms[0].elapsed_ns, 51 * MS);
    }

    #[test]
    fn abort_ends_the_job_at_once() {
        let mut n = 0;
        let e = run_job(2, &adaptive(0.03, 10_000, 0), |_| {
            n += 1;
            if n == 3 {
                RepOutcome::Abort
            } else {
                RepOutcome::Done {
                    bw: 1.0,
                    wall_ns: MS,
                }
            }
        });
        assert!(e.aborted);
        assert_eq!(n, 3);
        assert_eq!(e.arms.iter().map(|a| a.measured).sum::<u32>(), 2);
    }
}

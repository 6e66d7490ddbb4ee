//! `cpu_starved`: cases whose workers spent much of the time they could
//! run waiting for a CPU (the scheduler's run-queue delay,
//! `cpu.run_delay_ns`), so that their figures measure the CPU share iopath
//! was given (other processes, SQPOLL's spinning thread, too many workers
//! for the cores), not the I/O path.
//!
//! The fact is the share of the repetition's time the workers spent
//! runnable but waiting for a CPU: `run_delay / (duration x threads)`, the
//! median over a case's repetitions. A worker blocked on I/O is asleep, not
//! runnable, so an I/O-bound case waits little however slow its device; a
//! worker kept off its CPU a quarter of the time or more handled its
//! completions and issued its requests that much later. (Measured against
//! the elapsed time, not the worker's own CPU time: a worker that mostly
//! sleeps would otherwise read as starved for a short wait at each
//! wake-up.)

use super::{some, Fact, Run};
use crate::result::warning::CaseStarved;
use crate::result::{CaseResult, Measurement};

/// The share of the repetition's time the workers spent waiting for a CPU
/// at and above which a case is flagged.
pub const STARVED_WAIT_SHARE: f64 = 0.25;

/// The share of one repetition's time its `threads` workers spent waiting
/// for a CPU; `None` when the kernel recorded no delay (older results, or
/// no `schedstat`) or the repetition took no time.
pub fn wait_share(m: &Measurement, threads: u32) -> Option<f64> {
    let wait = m.cpu.run_delay_ns as f64;
    let span = m.duration_ns as f64 * f64::from(threads.max(1));
    (wait > 0.0 && span > 0.0).then(|| wait / span)
}

/// The cases (with their index) whose median wait share is at least
/// [`STARVED_WAIT_SHARE`], with their preemptions.
pub fn starved(cases: &[(usize, &CaseResult)]) -> Vec<CaseStarved> {
    let mut out = Vec::new();
    for &(case, c) in cases {
        let mut shares: Vec<f64> = c
            .repetitions
            .iter()
            .filter_map(|m| wait_share(m, c.threads))
            .collect();
        if shares.is_empty() {
            continue;
        }
        let share = crate::result::median(&mut shares);
        if share >= STARVED_WAIT_SHARE {
            out.push(CaseStarved {
                case,
                wait_share: share,
                preemptions: c.summary.as_ref().map_or(0, |s| s.cpu.ctx_invol),
            });
        }
    }
    out
}

/// `cpu_starved`: the measured cases that waited for a CPU.
pub fn cpu_starved(run: &Run<'_>) -> Option<Fact> {
    Some(Fact::CpuStarved {
        cases: some(starved(&run.measured))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case of one worker whose repetitions of 1.5 s spent `waits[i]` ns
    /// waiting, beside 1 s of CPU each.
    fn case(waits: &[u64]) -> CaseResult {
        let rep = |w: u64| {
            let mut m = Measurement {
                duration_ns: 1_500_000_000,
                ..Measurement::default()
            };
            m.cpu.cpu_ns = 1_000_000_000;
            m.cpu.run_delay_ns = w;
            m.cpu.ctx_invol = 500;
            m
        };
        CaseResult {
            method: "buffered".into(),
            pattern: crate::model::Pattern::RandRead,
            threads: 1,
            repetitions: waits.iter().map(|&w| rep(w)).collect(),
            summary: Some(rep(waits[waits.len() / 2])),
            ..CaseResult::default()
        }
    }

    #[test]
    fn a_case_that_waited_a_third_of_its_time_is_starved() {
        // 0.5 s waiting in a 1.5 s repetition: a third.
        let hog = case(&[500_000_000, 450_000_000, 520_000_000]);
        // 10 ms of 1.5 s: an ordinary busy machine.
        let quiet = case(&[10_000_000, 12_000_000, 9_000_000]);
        let found = starved(&[(0, &hog), (1, &quiet)]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].case, 0);
        assert!((found[0].wait_share - 1.0 / 3.0).abs() < 0.01, "{found:?}");
        assert_eq!(found[0].preemptions, 500);
    }

    #[test]
    fn the_median_repetition_decides_not_one_outlier() {
        let once = case(&[2_000_000_000, 1_000_000, 2_000_000]);
        assert!(starved(&[(0, &once)]).is_empty());
    }

    #[test]
    fn results_without_a_run_queue_delay_are_never_starved() {
        // Written before run_delay_ns, or a kernel without schedstat.
        let old = case(&[0, 0, 0]);
        assert!(starved(&[(0, &old)]).is_empty());
        assert_eq!(wait_share(&old.repetitions[0], 1), None);
    }

    /// Review of issue 29's warning: a worker that mostly sleeps (io_uring
    /// at depth) waits a little at each wake-up; against its own CPU time
    /// that read as 95% starved. Against the repetition's time it is what
    /// it is.
    #[test]
    fn a_mostly_sleeping_worker_is_judged_by_the_time_it_ran() {
        let mut c = case(&[100_000_000, 100_000_000, 100_000_000]);
        for m in &mut c.repetitions {
            m.cpu.cpu_ns = 5_000_000;
        }
        assert!(starved(&[(0, &c)]).is_empty());
        // Four workers share the repetition's time four ways.
        let mut four = case(&[1_000_000_000, 1_000_000_000, 1_000_000_000]);
        four.threads = 4;
        assert!(
            starved(&[(0, &four)]).is_empty(),
            "1 s of 4 x 1.5 s: a sixth"
        );
        four.threads = 1;
        assert_eq!(starved(&[(0, &four)]).len(), 1);
    }
}

//! `cpu_starved`: cases whose workers spent much of the time they could
//! run waiting for a CPU (the scheduler's run-queue delay,
//! `cpu.run_delay_ns`), so that their figures measure the CPU share iopath
//! was given (other processes, SQPOLL's spinning thread, too many workers
//! for the cores), not the I/O path.
//!
//! The fact is the share of the workers' runnable time spent waiting:
//! `run_delay / (run_delay + cpu)`, the median over a case's repetitions.
//! A worker blocked on I/O is asleep, not runnable, so an I/O-bound case
//! waits little however slow its device; a case that waited for a CPU a
//! quarter of its runnable time or more ran at most three quarters of the
//! speed its CPU work allowed.

use crate::result::{CaseResult, Measurement};

/// The share of the workers' runnable time spent waiting for a CPU at and
/// above which a case is flagged.
pub const STARVED_WAIT_SHARE: f64 = 0.25;

/// One starved case: how its workers shared the CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Starved<'a> {
    pub case: &'a CaseResult,
    /// Median over the repetitions of run-queue delay / (delay + CPU).
    pub wait_share: f64,
    /// Median involuntary context switches per repetition (preemptions).
    pub ctx_invol: u64,
}

/// The share of runnable time one repetition's workers spent waiting;
/// `None` when the kernel recorded no delay and no CPU (older results, or
/// no `schedstat`).
pub fn wait_share(m: &Measurement) -> Option<f64> {
    let (wait, cpu) = (m.cpu.run_delay_ns as f64, m.cpu.cpu_ns as f64);
    (wait > 0.0 && wait + cpu > 0.0).then(|| wait / (wait + cpu))
}

/// The measured cases whose median wait share is at least
/// [`STARVED_WAIT_SHARE`].
pub fn starved<'a>(cases: &[&'a CaseResult]) -> Vec<Starved<'a>> {
    let mut out = Vec::new();
    for &c in cases {
        let mut shares: Vec<f64> = c.repetitions.iter().filter_map(wait_share).collect();
        if shares.is_empty() {
            continue;
        }
        let share = crate::result::median(&mut shares);
        if share >= STARVED_WAIT_SHARE {
            out.push(Starved {
                case: c,
                wait_share: share,
                ctx_invol: c.summary.as_ref().map_or(0, |s| s.cpu.ctx_invol),
            });
        }
    }
    out
}

/// The warning's sentence and its cases (`label (41% waiting, 1,204
/// preemptions)`).
pub fn words(
    found: &[Starved<'_>],
    label: &dyn Fn(&CaseResult) -> String,
) -> (String, Vec<String>) {
    let message = format!(
        "these cases' workers waited for a CPU for {:.0}% or more of the time they could run (run-queue delay): their speed and latency measure the CPU share iopath was given, not the I/O path, and a difference between them and other methods may be that share; run on an idle machine, or give the workers CPUs of their own (--cpus)",
        STARVED_WAIT_SHARE * 100.0
    );
    let cases = found
        .iter()
        .map(|s| {
            format!(
                "{} ({:.0}% waiting, {} preemptions)",
                label(s.case),
                s.wait_share * 100.0,
                s.ctx_invol
            )
        })
        .collect();
    (message, cases)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case whose repetitions spent `waits[i]` ns waiting beside 1 s of
    /// CPU each.
    fn case(waits: &[u64]) -> CaseResult {
        let rep = |w: u64| {
            let mut m = Measurement::default();
            m.cpu.cpu_ns = 1_000_000_000;
            m.cpu.run_delay_ns = w;
            m.cpu.ctx_invol = 500;
            m
        };
        CaseResult {
            method: "buffered".into(),
            pattern: "randread".into(),
            repetitions: waits.iter().map(|&w| rep(w)).collect(),
            summary: Some(rep(waits[waits.len() / 2])),
            ..CaseResult::default()
        }
    }

    #[test]
    fn a_case_that_waited_a_third_of_its_runnable_time_is_starved() {
        // 0.5 s waiting beside 1 s of CPU: a third of 1.5 s runnable.
        let hog = case(&[500_000_000, 450_000_000, 520_000_000]);
        // 10 ms beside 1 s: an ordinary busy machine.
        let quiet = case(&[10_000_000, 12_000_000, 9_000_000]);
        let found = starved(&[&hog, &quiet]);
        assert_eq!(found.len(), 1);
        assert!(std::ptr::eq(found[0].case, &hog));
        assert!((found[0].wait_share - 1.0 / 3.0).abs() < 0.01, "{found:?}");
        assert_eq!(found[0].ctx_invol, 500);
    }

    #[test]
    fn the_median_repetition_decides_not_one_outlier() {
        let once = case(&[2_000_000_000, 1_000_000, 2_000_000]);
        assert!(starved(&[&once]).is_empty());
    }

    #[test]
    fn results_without_a_run_queue_delay_are_never_starved() {
        // Written before run_delay_ns, or a kernel without schedstat.
        let old = case(&[0, 0, 0]);
        assert!(starved(&[&old]).is_empty());
        assert_eq!(wait_share(&old.repetitions[0]), None);
    }

    #[test]
    fn the_threshold_is_said_and_each_case_has_its_share() {
        let hog = case(&[500_000_000]);
        let (message, cases) = words(&starved(&[&hog]), &|c| {
            format!("{}/{}", c.method, c.pattern)
        });
        assert!(message.contains(&format!("{:.0}%", STARVED_WAIT_SHARE * 100.0)));
        assert_eq!(cases, ["buffered/randread (33% waiting, 500 preemptions)"]);
    }
}

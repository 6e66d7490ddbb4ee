//! How long a run will take: before any I/O, from the plan (cases,
//! repetitions, the time or bytes of each repetition), and while it runs,
//! from what it has measured.
//!
//! A repetition bounded by time lasts its limit. One bounded by bytes (a
//! sequential pass of a caching method, a touch, a whole pass, a copy)
//! lasts its bytes over the speed of its case: until something like it
//! has run, an assumed speed ([`assumed_speed`]: 500 MB/s for large
//! requests, 20,000 requests a second per request in flight, up to 8, for
//! small ones); after that, the median speed measured for the same method
//! and pattern, else for the same pattern. Adaptive repetition runs a job
//! until its budget (`--max-time` per method) is spent or its interval is
//! reached: the estimate takes the budget, at least 3 rounds, and up to the
//! quarter over it that a verdict's rounds may take. `--case-timeout` caps
//! every case's share, and makes the whole run bounded.
//!
//! Pure: the plan, the file size and the speeds known so far go in, seconds
//! come out; the runner prints the estimate and puts the time left on the
//! progress line.

use std::time::Duration;

use crate::model::words::Until;
use crate::plan::{Case, Pattern, Plan};

/// Set-up per repetition that the time limit does not count (cache state,
/// engines opened, workers started): a guess, small beside a repetition.
const SETUP_S: f64 = 0.02;

/// What one case is expected to take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CaseTime {
    /// One repetition, set-up included.
    pub rep_s: f64,
    /// Repetitions (warm-ups included).
    pub reps: f64,
    /// The whole case: `rep_s × reps`, capped by the case timeout.
    pub total_s: f64,
    /// A repetition bounded by bytes whose speed is assumed, not measured.
    pub assumed: bool,
    /// Bounded by bytes alone, with no case timeout: its time is only as
    /// good as its speed.
    pub open_ended: bool,
}

/// The speed assumed for a case nothing like has run yet, bytes per second.
pub fn assumed_speed(case: &Case) -> f64 {
    if case.block_size >= 64 << 10 {
        500e6
    } else {
        let depth = if case.method.is_async() {
            case.queue_depth_requested
        } else {
            1
        };
        let inflight = (depth * case.threads.max(1)).clamp(1, 8);
        case.block_size as f64 * 20_000.0 * f64::from(inflight)
    }
}

/// Bytes one repetition of `case` moves when bytes bound it (`None`: its
/// time limit alone), as the runner's workers count them.
pub fn rep_bytes(plan: &Plan, case: &Case, file_size: u64) -> Option<u64> {
    let span = case.span.map_or(file_size, |s| s.min(file_size));
    if case.pattern == Pattern::Copy {
        return Some(span);
    }
    let bs = case.block_size.max(1);
    let threads = u64::from(case.threads.max(1));
    match (case.io_size.or(plan.io_size), case.until) {
        (Some(total), _) => Some(total),
        (None, Some(Until::Time)) => None,
        (None, Some(Until::Pass)) => Some(span),
        (None, _) if plan.wraps(case) => None,
        (None, _) if !case.pattern.is_random() => Some(span / threads / bs * bs * threads),
        (None, _) if plan.whole_pass => Some(span),
        (None, _) => None,
    }
}

/// What `case` will take, one of a job of `arms` arms; `speed` is its
/// measured speed when known (bytes per second).
pub fn case_time(
    plan: &Plan,
    case: &Case,
    arms: usize,
    file_size: u64,
    speed: Option<f64>,
) -> CaseTime {
    let limit = (case.pattern != Pattern::Copy)
        .then(|| plan.case_time_limit(case))
        .flatten()
        .map(|d| d.as_secs_f64());
    let bytes = rep_bytes(plan, case, file_size);
    let assumed = bytes.is_some() && speed.is_none();
    let speed = speed
        .filter(|s| *s > 0.0)
        .unwrap_or_else(|| assumed_speed(case));
    let work = match (bytes, limit) {
        (Some(b), Some(l)) => (b as f64 / speed).min(l),
        (Some(b), None) => b as f64 / speed,
        (None, Some(l)) => l,
        (None, None) => 0.0,
    };
    let rep_s = work + SETUP_S;
    let warmup = f64::from(plan.warmup);
    let measured = match plan.repeat {
        Some(n) => f64::from(n),
        None => {
            let budget = plan.max_time.as_secs_f64();
            let wanted = if arms >= 2 && plan.schedule == crate::plan::Schedule::Interleaved {
                crate::stats::min_rounds(crate::stats::verdict_alpha(arms)) as f64
            } else {
                crate::plan::MIN_ADAPTIVE_REPS as f64
            };
            let fit = (budget / rep_s).floor();
            let grace = (budget * crate::stats::VERDICT_GRACE / rep_s).floor();
            fit.max(wanted.min(grace))
                .max(crate::plan::MIN_ADAPTIVE_REPS as f64)
                .min(crate::plan::MAX_ADAPTIVE_REPS as f64)
        }
    };
    let reps = measured + warmup;
    let cap = plan.case_timeout.map(|d| d.as_secs_f64());
    let total_s = cap.map_or(rep_s * reps, |c| (rep_s * reps).min(c + SETUP_S));
    CaseTime {
        rep_s,
        reps,
        total_s,
        assumed,
        open_ended: bytes.is_some() && limit.is_none() && cap.is_none(),
    }
}

/// The run's estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Per case of the plan, in its order.
    pub cases: Vec<CaseTime>,
    /// Filling the test file first (none when it exists or is sparse).
    pub prefill_s: f64,
}

impl Estimate {
    /// The estimate of `plan` on a file of `file_size` bytes (`prefill`:
    /// iopath fills it first), with `speed` the speeds measured so far and
    /// `arms` the arms of each case's job.
    pub fn of(
        plan: &Plan,
        file_size: u64,
        prefill: bool,
        arms: &[usize],
        speed: &dyn Fn(&Case) -> Option<f64>,
    ) -> Estimate {
        Estimate {
            cases: plan
                .cases
                .iter()
                .zip(arms)
                .map(|(c, &a)| case_time(plan, c, a, file_size, speed(c)))
                .collect(),
            prefill_s: if prefill && plan.needs_file() {
                file_size as f64 / 500e6
            } else {
                0.0
            },
        }
    }

    pub fn total(&self) -> Duration {
        Duration::from_secs_f64(self.prefill_s + self.cases.iter().map(|c| c.total_s).sum::<f64>())
    }

    /// What is left when the cases `done` are done and the others have
    /// run for `spent` seconds each so far.
    pub fn left(&self, done: &[bool], spent: &[f64]) -> Duration {
        let s: f64 = self
            .cases
            .iter()
            .enumerate()
            .filter(|(i, _)| !done.get(*i).copied().unwrap_or(false))
            .map(|(i, c)| (c.total_s - spent.get(i).copied().unwrap_or(0.0)).max(0.0))
            .sum();
        Duration::from_secs_f64(s)
    }

    /// The line printed before any I/O: `estimated duration: about 52 s
    /// (32 cases; ...)`.
    pub fn describe(&self, plan: &Plan) -> String {
        let n = self.cases.len();
        let mut parts = vec![format!("{n} case{}", if n == 1 { "" } else { "s" })];
        parts.push(match (plan.repeat, plan.time_limit(), plan.whole_pass) {
            (Some(r), Some(t), _) => format!(
                "{r} repetition{} of up to {} each",
                if r == 1 { "" } else { "s" },
                crate::units::fmt_duration(t)
            ),
            (Some(r), None, _) => format!("{r} repetition{}", if r == 1 { "" } else { "s" }),
            (None, t, _) => format!(
                "adaptive repetitions{}, up to about {} per method of a job",
                t.map_or(String::new(), |t| format!(
                    " of up to {}",
                    crate::units::fmt_duration(t)
                )),
                crate::units::fmt_duration(plan.max_time)
            ),
        });
        if let Some(c) = plan.case_timeout {
            parts.push(format!(
                "each case capped at {} (--case-timeout)",
                crate::units::fmt_duration(c)
            ));
        }
        let assumed = self.cases.iter().filter(|c| c.assumed).count();
        if assumed > 0 {
            parts.push(format!(
                "{assumed} case{} bounded by bytes at an assumed speed until measured",
                if assumed == 1 { "" } else { "s" }
            ));
        }
        let open = self.cases.iter().filter(|c| c.open_ended).count();
        let total = self.total();
        let mut line = format!(
            "estimated duration: about {}",
            crate::units::fmt_wall(total)
        );
        if let Some(c) = plan.case_timeout {
            // Every case within its cap: the run is bounded.
            let most = self.prefill_s + n as f64 * (c.as_secs_f64() + SETUP_S);
            line = if most <= 1.05 * total.as_secs_f64() {
                format!(
                    "estimated duration: at most about {}",
                    crate::units::fmt_wall(total)
                )
            } else {
                format!(
                    "{line}, at most about {}",
                    crate::units::fmt_wall(Duration::from_secs_f64(most))
                )
            };
        }
        line.push_str(&format!(" ({})", parts.join("; ")));
        if open > 0 {
            line.push_str(&format!(
                "; {open} case{} end only when {} bytes are done, however long that takes: --case-timeout DURATION caps each case",
                if open == 1 { "" } else { "s" },
                if open == 1 { "its" } else { "their" }
            ));
        }
        line
    }
}

/// The time left while a run goes: the estimate, refined as cases finish
/// (their speeds stand in for the assumed ones of cases like them) and as
/// the running ones spend their time.
#[derive(Debug, Clone)]
pub struct Eta {
    est: Estimate,
    file_size: u64,
    prefill: bool,
    arms: Vec<usize>,
    done: Vec<bool>,
    spent: Vec<f64>,
    /// Measured speed of each finished case, bytes per second.
    speed: Vec<Option<f64>>,
}

impl Eta {
    pub fn new(plan: &Plan, file_size: u64, prefill: bool, arms: Vec<usize>) -> Eta {
        let n = plan.cases.len();
        Eta {
            est: Estimate::of(plan, file_size, prefill, &arms, &|_| None),
            file_size,
            prefill,
            arms,
            done: vec![false; n],
            spent: vec![0.0; n],
            speed: vec![None; n],
        }
    }

    pub fn estimate(&self) -> &Estimate {
        &self.est
    }

    /// Case `i` has run for `secs` so far.
    pub fn spent(&mut self, i: usize, secs: f64) {
        if let Some(s) = self.spent.get_mut(i) {
            *s = secs;
        }
    }

    /// Case `i` is done, at `bw` bytes per second when it measured any;
    /// the cases not run yet are estimated again.
    pub fn finished(&mut self, plan: &Plan, i: usize, bw: Option<f64>) {
        if i >= self.done.len() {
            return;
        }
        self.done[i] = true;
        self.speed[i] = bw.filter(|b| *b > 0.0);
        let known = |c: &Case| {
            let like = |same: &dyn Fn(&Case) -> bool| {
                let mut v: Vec<f64> = plan
                    .cases
                    .iter()
                    .zip(&self.speed)
                    .filter(|(o, _)| same(o))
                    .filter_map(|(_, s)| *s)
                    .collect();
                (!v.is_empty()).then(|| crate::result::median(&mut v))
            };
            like(&|o| o.method == c.method && o.pattern == c.pattern)
                .or_else(|| like(&|o| o.pattern == c.pattern))
        };
        let fresh = Estimate::of(plan, self.file_size, self.prefill, &self.arms, &known);
        for (j, c) in fresh.cases.into_iter().enumerate() {
            if !self.done[j] {
                self.est.cases[j] = c;
            }
        }
    }

    /// Time left: the cases not done, less what the running ones spent.
    pub fn left(&self) -> Duration {
        self.est.left(&self.done, &self.spent)
    }
}

/// The size of the file the run will address, and whether iopath fills
/// it first, as far as the plan says before anything is opened.
pub(super) fn planned_file(plan: &Plan) -> (u64, bool) {
    use crate::plan::TargetSpec;
    let existing = match &plan.target {
        TargetSpec::File { path, .. } => std::fs::metadata(path).ok().map(|m| m.len()),
        TargetSpec::TempIn(_) => None,
    };
    let prefill = match &plan.target {
        TargetSpec::File { prefill, .. } if existing.is_some() => *prefill,
        _ => !plan.sparse,
    };
    let size = plan
        .size
        .or(existing.filter(|&l| l > 0))
        .unwrap_or(crate::plan::DEFAULT_SIZE);
    (size, prefill)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_io::Method;

    fn plan(args: &[&str]) -> Plan {
        let mut v = vec!["iopath", "run"];
        v.extend_from_slice(args);
        let Some(crate::cli::Command::Run(r)) = crate::cli::parse_from(v).unwrap().command else {
            unreachable!()
        };
        crate::commands::plan_of(&r).unwrap()
    }

    fn arms(p: &Plan) -> Vec<usize> {
        let mut a = vec![0; p.cases.len()];
        for j in super::super::job::jobs(&p.cases, p.schedule) {
            for &i in &j {
                a[i] = j.len();
            }
        }
        a
    }

    fn none(_: &Case) -> Option<f64> {
        None
    }

    #[test]
    fn time_bound_repetitions_last_their_limit_and_fixed_counts_multiply() {
        let p = plan(&[
            "--methods",
            "direct,uring",
            "--patterns",
            "randread",
            "--time",
            "2s",
            "--repeat",
            "5",
            "--size",
            "64M",
        ]);
        let e = Estimate::of(&p, 64 << 20, true, &arms(&p), &none);
        for c in &e.cases {
            assert!((c.rep_s - 2.02).abs() < 1e-9, "{c:?}");
            assert_eq!(c.reps, 5.0);
            assert!(!c.assumed && !c.open_ended);
        }
        let total = e.total().as_secs_f64();
        assert!((total - (2.0 * 5.0 * 2.02 + 64.0 * 1048576.0 / 500e6)).abs() < 1e-6);
        let line = e.describe(&p);
        assert!(
            line.starts_with(
                "estimated duration: about 20 s (2 cases; 5 repetitions of up to 2s each)"
            ),
            "{line}"
        );
    }

    #[test]
    fn the_default_run_is_estimated_from_its_budgets() {
        // 32 cases, each within about its 1.5 s budget: the run's "under a
        // minute" is in the plan.
        let p = plan(&[]);
        let e = Estimate::of(&p, 1 << 30, true, &arms(&p), &none);
        let total = e.total().as_secs_f64();
        assert!((40.0..70.0).contains(&total), "{total}");
        assert!(e
            .describe(&p)
            .contains("adaptive repetitions of up to 150ms"));
    }

    #[test]
    fn bytes_bound_cases_use_the_measured_speed_once_known() {
        // One pass of 1 GiB, buffered (caches: no wrap), no time limit.
        let p = plan(&[
            "--methods",
            "buffered",
            "--patterns",
            "read",
            "--io-size",
            "1G",
            "--repeat",
            "2",
        ]);
        let guess = Estimate::of(&p, 1 << 30, false, &arms(&p), &none);
        assert!(guess.cases[0].assumed && guess.cases[0].open_ended);
        assert!((guess.cases[0].rep_s - ((1u64 << 30) as f64 / 500e6 + SETUP_S)).abs() < 1e-9);
        assert!(guess
            .describe(&p)
            .contains("--case-timeout DURATION caps each case"));
        let measured = Estimate::of(&p, 1 << 30, false, &arms(&p), &|_| Some(100.0 * 1048576.0));
        assert!(!measured.cases[0].assumed);
        assert!((measured.cases[0].rep_s - (10.24 + SETUP_S)).abs() < 1e-9);
        assert!((measured.total().as_secs_f64() - 2.0 * (10.24 + SETUP_S)).abs() < 1e-6);
        // Half of it spent, nothing done: half of it left.
        let left = measured.left(&[false], &[10.26]).as_secs_f64();
        assert!((left - 10.26).abs() < 1e-6, "{left}");
        assert_eq!(measured.left(&[true], &[0.0]), Duration::ZERO);
    }

    #[test]
    fn a_finished_case_lends_its_speed_to_cases_like_it() {
        // Two one-pass buffered reads: after the first ran at 100 MiB/s,
        // the second is estimated at that speed, not the assumed one.
        let p = plan(&[
            "--methods",
            "buffered,mmap",
            "--patterns",
            "read",
            "--io-size",
            "1G",
            "--repeat",
            "1",
        ]);
        let mut eta = Eta::new(&p, 1 << 30, false, arms(&p));
        let before = eta.left().as_secs_f64();
        assert!((before - 2.0 * ((1u64 << 30) as f64 / 500e6 + SETUP_S)).abs() < 1e-6);
        eta.spent(0, 3.0);
        eta.finished(&p, 0, Some(100.0 * 1048576.0));
        // mmap has no speed of its own: the pattern's stands in.
        let after = eta.left().as_secs_f64();
        assert!((after - (10.24 + SETUP_S)).abs() < 1e-6, "{after}");
        eta.spent(1, 4.0);
        assert!((eta.left().as_secs_f64() - (6.24 + SETUP_S)).abs() < 1e-6);
    }

    #[test]
    fn the_case_timeout_bounds_every_case_and_the_run() {
        let p = crate::plan::Plan::from_spec(
            &crate::preset::find("hmmap").unwrap().job,
            &crate::plan::Origin {
                preset: Some("hmmap".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.case_timeout, Some(Duration::from_secs(10)));
        let e = Estimate::of(&p, 4 << 30, true, &arms(&p), &none);
        assert!(e
            .cases
            .iter()
            .all(|c| c.total_s <= 10.0 + SETUP_S + 1e-9 && !c.open_ended));
        // mmap's RR: 1,048,576 reads of 8 bytes at the assumed 160 kB/s
        // would be 52 s a repetition; the cap makes it 10 s.
        let rr = p
            .cases
            .iter()
            .position(|c| c.method == Method::Mmap && c.pattern == Pattern::RandRead)
            .unwrap();
        assert!(e.cases[rr].rep_s > 50.0, "{:?}", e.cases[rr]);
        let most = p.cases.len() as f64 * (10.0 + SETUP_S) + e.prefill_s;
        assert!(e.total().as_secs_f64() <= most + 1e-6);
        // Within the 20 minutes a preset may take.
        assert!(most < 20.0 * 60.0, "{most}");
        let line = e.describe(&p);
        assert!(line.contains("at most about"), "{line}");
        assert!(line.contains("capped at 10s"), "{line}");
    }

    #[test]
    fn sequential_cases_of_methods_that_do_not_cache_wrap_and_take_their_time() {
        let p = plan(&[
            "--methods",
            "direct,buffered",
            "--patterns",
            "read",
            "--time",
            "2s",
            "--size",
            "256M",
            "--repeat",
            "1",
        ]);
        let direct = &p.cases[0];
        let buffered = &p.cases[1];
        assert!(p.wraps(direct) && !p.wraps(buffered));
        assert_eq!(rep_bytes(&p, direct, 256 << 20), None);
        assert_eq!(rep_bytes(&p, buffered, 256 << 20), Some(256 << 20));
        // Verified writes stay one pass (two writes of one block in flight
        // at once could interleave); verified reads still wrap.
        let v = plan(&[
            "--methods",
            "direct",
            "--patterns",
            "read,write",
            "--time",
            "2s",
            "--verify",
        ]);
        assert!(p.wraps(direct) && v.wraps(&v.cases[0]) && !v.wraps(&v.cases[1]));
        let e = Estimate::of(&p, 256 << 20, false, &arms(&p), &|_| Some(2e9));
        assert!((e.cases[0].rep_s - 2.02).abs() < 1e-9);
        // One pass of 256 MiB at 2 GB/s: 0.13 s, not 2 s.
        assert!(e.cases[1].rep_s < 0.2, "{:?}", e.cases[1]);
    }
}

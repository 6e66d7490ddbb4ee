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
//! reached: the estimate takes the budget, at least 3 rounds, and the
//! rounds a verdict needs when they fit within twice the budget
//! ([`crate::stats::VERDICT_GRACE`]). `--case-timeout` caps
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

/// A write that the page cache takes for `t` seconds (buffered, mmap,
/// uring-buffered: dirty pages kept, flushed at the end of the repetition,
/// inside it) leaves about this many times `t` of flush: memory takes
/// writes faster than a disk drains them (1.7x to 2.1x on this project's
/// virtual disk for the default run's 150 ms writes).
const FLUSH_PER_CACHED_WRITE: f64 = 2.0;

/// True when `case`'s repetitions end with a flush of dirty pages that its
/// time limit does not bound (a time-limited write by a method that leaves
/// them in the page cache, flushed at the end).
fn flushes_after_limit(case: &Case) -> bool {
    use iopath_io::{Method, SyncPolicy};
    case.pattern.writes()
        && case.sync == SyncPolicy::End
        && crate::model::method_caches(case.method)
        && !matches!(case.method, Method::Dontcache | Method::UringDontcache)
}

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
    /// The rounds its job's verdict needs to make a call, when the job is
    /// not expected to reach them (too few `--repeat`, or more than
    /// [`crate::stats::VERDICT_GRACE`] times the budget).
    pub short_of: Option<usize>,
    /// The `--max-time` that would give them, for an adaptive job.
    pub max_time_for_call: Option<Duration>,
    /// Short of them because `--case-timeout` ends its job's slowest case
    /// first.
    pub short_by_timeout: bool,
}

/// The size of the file the run will address, and whether iopath fills
/// it first, as far as the plan says before anything is opened.
pub fn planned_file(plan: &Plan) -> (u64, bool) {
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

/// One repetition of `case`, set-up included, seconds; `speed` is its
/// measured speed when known (bytes per second). Also: whether bytes bound
/// it at an assumed speed, and whether bytes alone bound it.
fn rep_time(plan: &Plan, case: &Case, file_size: u64, speed: Option<f64>) -> (f64, bool, bool) {
    let limit = (case.pattern != Pattern::Copy)
        .then(|| plan.case_time_limit(case))
        .flatten()
        .map(|d| d.as_secs_f64());
    let bytes = rep_bytes(plan, case, file_size);
    let measured = speed.is_some();
    let speed = speed
        .filter(|s| *s > 0.0)
        .unwrap_or_else(|| assumed_speed(case));
    // The assumed speed matters only where it, not the time limit, ends
    // the repetition (one pass of 1 GiB at 500 MB/s outlasts 150 ms).
    let assumed = !measured && bytes.is_some_and(|b| limit.is_none_or(|l| (b as f64 / speed) < l));
    let work = match (bytes, limit) {
        (Some(b), Some(l)) => (b as f64 / speed).min(l),
        (Some(b), None) => b as f64 / speed,
        (None, Some(l)) => l,
        (None, None) => 0.0,
    };
    // The flush of what the page cache took in the limit's time.
    let work = match limit {
        Some(l) if flushes_after_limit(case) => work + FLUSH_PER_CACHED_WRITE * work.min(l),
        _ => work,
    };
    (work + SETUP_S, assumed, bytes.is_some() && limit.is_none())
}

/// What the cases of one job take (`cases`, with their measured speeds
/// when known), run in rounds by [`crate::stats::StopRule::decide_job`]:
/// `--repeat` rounds, or as many as the job's budget (`--max-time` per
/// case) pays for, and the rounds its verdict needs when they fit in
/// [`crate::stats::VERDICT_GRACE`] times it (warm-ups count against both).
pub fn job_times(
    plan: &Plan,
    cases: &[&Case],
    file_size: u64,
    speeds: &[Option<f64>],
) -> Vec<CaseTime> {
    let reps: Vec<(f64, bool, bool)> = cases
        .iter()
        .zip(speeds)
        .map(|(c, &s)| rep_time(plan, c, file_size, s))
        .collect();
    let round_s: f64 = reps.iter().map(|r| r.0).sum();
    let k = cases.len().max(1);
    let warmup = f64::from(plan.warmup);
    let wanted = wanted_rounds(plan, cases.len());
    let (measured, short_of, max_time) = match plan.repeat {
        Some(n) => (f64::from(n), wanted.filter(|w| (n as usize) < *w), None),
        None => {
            let budget = plan.max_time.as_secs_f64() * k as f64;
            let floor = crate::plan::MIN_ADAPTIVE_REPS as f64;
            let fit = ((budget / round_s).floor() - warmup).max(floor);
            let reach = wanted
                .filter(|&w| (w as f64 + warmup) * round_s <= budget * crate::stats::VERDICT_GRACE);
            let measured = reach
                .map_or(fit, |w| fit.max(w as f64))
                .min(crate::plan::MAX_ADAPTIVE_REPS as f64);
            let short = wanted.filter(|&w| (measured as usize) < w);
            let per_case = round_s / k as f64;
            (
                measured,
                short,
                short.map(|w| max_time_for(w, plan.warmup, per_case)),
            )
        }
    };
    let cap = plan.case_timeout.map(|d| d.as_secs_f64());
    // The case timeout ends an arm whose next repetition would not fit:
    // those of a job that cannot run its rounds within it leave short.
    let capped = cap.is_some_and(|c| {
        let most = reps.iter().map(|r| r.0).fold(0.0, f64::max);
        wanted.is_some_and(|w| (w as f64 + warmup) * most > c)
    });
    reps.into_iter()
        .map(|(rep_s, assumed, bytes_only)| {
            let reps = measured + warmup;
            CaseTime {
                rep_s,
                reps,
                total_s: cap.map_or(rep_s * reps, |c| (rep_s * reps).min(c + SETUP_S)),
                assumed,
                open_ended: bytes_only && cap.is_none(),
                short_of: if capped { wanted } else { short_of },
                max_time_for_call: max_time.filter(|_| !capped),
                short_by_timeout: capped,
            }
        })
        .collect()
}

/// The rounds a verdict over a job of `arms` cases needs to make a call
/// (its comparisons share 5%): `None` for a job of one case, or run
/// sequentially (no paired verdict).
pub fn wanted_rounds(plan: &Plan, arms: usize) -> Option<usize> {
    (arms >= 2 && plan.schedule == crate::plan::Schedule::Interleaved)
        .then(|| crate::stats::min_rounds(crate::stats::verdict_alpha(arms)))
}

pub use crate::stats::max_time_for;

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
    /// `jobs` the plan's jobs (lists of its cases' indices).
    pub fn of(
        plan: &Plan,
        file_size: u64,
        prefill: bool,
        jobs: &[Vec<usize>],
        speed: &dyn Fn(&Case) -> Option<f64>,
    ) -> Estimate {
        let mut cases: Vec<Option<CaseTime>> = vec![None; plan.cases.len()];
        for job in jobs {
            let members: Vec<&Case> = job.iter().map(|&i| &plan.cases[i]).collect();
            let speeds: Vec<Option<f64>> = members.iter().map(|c| speed(c)).collect();
            for (&i, t) in job
                .iter()
                .zip(job_times(plan, &members, file_size, &speeds))
            {
                cases[i] = Some(t);
            }
        }
        Estimate {
            cases: cases
                .into_iter()
                .zip(&plan.cases)
                .map(|(t, c)| t.unwrap_or_else(|| job_times(plan, &[c], file_size, &[speed(c)])[0]))
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

    /// With `--case-timeout`: the most the run can take, every case at
    /// its cap.
    pub fn most(&self, plan: &Plan) -> Option<Duration> {
        let c = plan.case_timeout?;
        let n = self.cases.len() as f64;
        Some(Duration::from_secs_f64(
            self.prefill_s + n * (c.as_secs_f64() + SETUP_S),
        ))
    }

    /// Cases bounded by bytes whose time comes from an assumed speed.
    pub fn assumed(&self) -> usize {
        self.cases.iter().filter(|c| c.assumed).count()
    }

    /// Cases that end only when their bytes are done, with no cap.
    pub fn open_ended(&self) -> usize {
        self.cases.iter().filter(|c| c.open_ended).count()
    }

    /// The cases whose verdicts will not get the rounds they need, and the
    /// flag that gives them; `None` when every case gets them.
    pub fn short(&self, plan: &Plan) -> Option<Short> {
        let short: Vec<(&CaseTime, usize)> = self
            .cases
            .iter()
            .filter_map(|c| c.short_of.map(|w| (c, w)))
            .collect();
        let most = short.iter().map(|(_, w)| *w).max()?;
        let least = short.iter().map(|(_, w)| *w).min().unwrap_or(most);
        let remedy = match short.iter().filter_map(|(c, _)| c.max_time_for_call).max() {
            _ if short.iter().any(|(c, _)| c.short_by_timeout) => Remedy::CaseTimeout {
                repeat: plan.repeat.is_some_and(|r| (r as usize) < most),
            },
            Some(t) => Remedy::MaxTime(t),
            None => Remedy::Repeat,
        };
        Some(Short {
            cases: short.len(),
            least,
            most,
            remedy,
        })
    }
}

/// Cases that will not run the rounds their verdicts need to make a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Short {
    pub cases: usize,
    /// The fewest and most rounds among them.
    pub least: usize,
    pub most: usize,
    pub remedy: Remedy,
}

/// What gives them those rounds (besides `--repeat`, named with `most`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// A larger `--case-timeout` or a smaller `--size` (`repeat`: with
    /// `--repeat` at least the rounds, when fewer are asked).
    CaseTimeout { repeat: bool },
    /// `--max-time` at least this, or `--repeat`.
    MaxTime(Duration),
    /// `--repeat`.
    Repeat,
}

/// True when some write of `plan` ends with a flush in its timed
/// interval: a first repetition (no flush seen yet to keep room for) may
/// end past the case timeout by it.
pub fn flushes_past_cap(plan: &Plan) -> bool {
    plan.cases
        .iter()
        .any(|c| c.pattern.writes() && c.sync == iopath_io::SyncPolicy::End)
}

/// The time left while a run goes: the estimate, refined as cases finish
/// (their speeds stand in for the assumed ones of cases like them) and as
/// the running ones spend their time.
#[derive(Debug, Clone)]
pub struct Eta {
    est: Estimate,
    file_size: u64,
    prefill: bool,
    jobs: Vec<Vec<usize>>,
    done: Vec<bool>,
    spent: Vec<f64>,
    /// Measured speed of each finished case, bytes per second.
    speed: Vec<Option<f64>>,
    /// How many of them are known.
    known: usize,
    /// The methods and patterns with a speed known.
    kinds: std::collections::HashSet<(iopath_io::Method, Pattern)>,
}

impl Eta {
    pub fn new(plan: &Plan, file_size: u64, prefill: bool, jobs: Vec<Vec<usize>>) -> Eta {
        let n = plan.cases.len();
        Eta {
            est: Estimate::of(plan, file_size, prefill, &jobs, &|_| None),
            file_size,
            prefill,
            jobs,
            done: vec![false; n],
            spent: vec![0.0; n],
            speed: vec![None; n],
            known: 0,
            kinds: Default::default(),
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
    /// the cases not run yet are estimated again when that speed says
    /// something new: the first of its method and pattern, or the count of
    /// speeds known doubled. Each estimate is one pass over the plan, so a
    /// run of n cases makes O(n log n) work of them, not O(n^2) or worse.
    pub fn finished(&mut self, plan: &Plan, i: usize, bw: Option<f64>) {
        if i >= self.done.len() {
            return;
        }
        self.done[i] = true;
        let bw = bw.filter(|b| *b > 0.0);
        self.speed[i] = bw;
        let Some(case) = plan.cases.get(i).filter(|_| bw.is_some()) else {
            return;
        };
        self.known += 1;
        let new_kind = self.kinds.insert((case.method, case.pattern));
        if new_kind || self.known.is_power_of_two() {
            self.estimate_again(plan);
        }
    }

    /// The cases not done, estimated with the median speed measured for
    /// their method and pattern, else for their pattern.
    fn estimate_again(&mut self, plan: &Plan) {
        use std::collections::HashMap;
        let mut by_kind: HashMap<(iopath_io::Method, Pattern), Vec<f64>> = HashMap::new();
        let mut by_pattern: HashMap<Pattern, Vec<f64>> = HashMap::new();
        for (c, s) in plan.cases.iter().zip(&self.speed) {
            if let Some(s) = *s {
                by_kind.entry((c.method, c.pattern)).or_default().push(s);
                by_pattern.entry(c.pattern).or_default().push(s);
            }
        }
        let by_kind: HashMap<_, f64> = by_kind
            .into_iter()
            .map(|(k, mut v)| (k, crate::result::median(&mut v)))
            .collect();
        let by_pattern: HashMap<_, f64> = by_pattern
            .into_iter()
            .map(|(k, mut v)| (k, crate::result::median(&mut v)))
            .collect();
        let known = |c: &Case| {
            by_kind
                .get(&(c.method, c.pattern))
                .or_else(|| by_pattern.get(&c.pattern))
                .copied()
        };
        let fresh = Estimate::of(plan, self.file_size, self.prefill, &self.jobs, &known);
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

    /// The time left as it runs down while case `i` runs a repetition:
    /// [`LeftClock::at`] the time into it.
    pub fn clock(&self, i: usize) -> LeftClock {
        let left = self.left().as_secs_f64();
        let case_s = match (self.est.cases.get(i), self.done.get(i)) {
            (Some(c), Some(false)) => (c.total_s - self.spent[i]).max(0.0),
            _ => 0.0,
        };
        LeftClock {
            others_s: (left - case_s).max(0.0),
            case_s,
        }
    }
}

/// The time left during one repetition, taken when it starts: the other
/// cases' share stands, the running case's runs down with the time into
/// the repetition and stops at 0 (a case that runs over its estimate does
/// not make the rest longer, nor shorter). Never increases as time passes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeftClock {
    /// What the cases other than the running one have left, seconds.
    pub others_s: f64,
    /// What the running case had left when the repetition started.
    pub case_s: f64,
}

impl LeftClock {
    /// The time left `into_s` seconds into the repetition.
    pub fn at(&self, into_s: f64) -> Duration {
        let case = (self.case_s - into_s.max(0.0)).max(0.0);
        Duration::from_secs_f64(self.others_s + case)
    }
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
        crate::cli::commands::plan_of(&r).unwrap()
    }

    fn arms(p: &Plan) -> Vec<Vec<usize>> {
        super::super::job::jobs(&p.cases, p.schedule)
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
        // Its words: `report::text::events` (snapshot `estimate_lines`).
        let short = e.short(&p).map(|s| (s.cases, s.most, s.remedy));
        assert_eq!(short, Some((2, 6, Remedy::Repeat)));
        assert_eq!((e.assumed(), e.open_ended()), (0, 0));
        assert_eq!(e.most(&p), None);
    }

    #[test]
    fn the_default_run_is_estimated_from_its_budgets() {
        // 38 cases in 4 jobs of 9 or 10 methods; each job within twice its
        // budget (1.5 s per method) runs the 9 rounds its verdict needs,
        // the page-cache writers' flushes included.
        let p = plan(&[]);
        let e = Estimate::of(&p, 1 << 30, true, &arms(&p), &none);
        let total = e.total().as_secs_f64();
        assert!((60.0..100.0).contains(&total), "{total}");
        assert!(e
            .cases
            .iter()
            .all(|c| c.short_of.is_none() && c.reps >= 9.0));
        assert_eq!(
            (p.repeat, p.time_limit()),
            (None, Some(Duration::from_millis(150)))
        );
        assert_eq!(e.short(&p), None);
        // Its sequential passes of caching methods end at 150 ms at any
        // assumed speed: none bounded by bytes at an assumed speed.
        assert_eq!(e.assumed(), 0);
        // A buffered write's flush is in its repetition.
        let w = p
            .cases
            .iter()
            .position(|c| c.method == Method::Buffered && c.pattern == Pattern::Write)
            .unwrap();
        assert!((e.cases[w].rep_s - (0.15 * 3.0 + SETUP_S)).abs() < 1e-9);
    }

    /// Regression (issue 18, "runs" item 1): when a job cannot afford the
    /// rounds its verdict needs, the estimate says so before the run, and
    /// which flag gives them.
    #[test]
    fn jobs_short_of_their_verdicts_rounds_say_what_gives_them() {
        let p = plan(&["--max-time", "500ms"]);
        let e = Estimate::of(&p, 1 << 30, true, &arms(&p), &none);
        assert!(e.cases.iter().all(|c| c.short_of == Some(9)), "{e:?}");
        // The --max-time it names is enough.
        let t = e
            .cases
            .iter()
            .filter_map(|c| c.max_time_for_call)
            .max()
            .unwrap();
        assert_eq!(
            e.short(&p),
            Some(Short {
                cases: 38,
                least: 9,
                most: 9,
                remedy: Remedy::MaxTime(t)
            })
        );
        let more = plan(&["--max-time", &crate::model::units::fmt_duration(t)]);
        let e2 = Estimate::of(&more, 1 << 30, true, &arms(&more), &none);
        assert!(e2.cases.iter().all(|c| c.short_of.is_none()), "{t:?}");
        // A fixed count below the rounds: --repeat.
        let few = plan(&[
            "--repeat",
            "5",
            "--methods",
            "direct,uring",
            "--patterns",
            "read",
        ]);
        let e3 = Estimate::of(&few, 1 << 30, true, &arms(&few), &none);
        assert_eq!(e3.cases[0].short_of, Some(6));
        assert_eq!(
            e3.short(&few),
            Some(Short {
                cases: 2,
                least: 6,
                most: 6,
                remedy: Remedy::Repeat
            })
        );
        // A case timeout that ends the job first, and too few --repeat: both.
        let capped = plan(&[
            "--repeat",
            "3",
            "--case-timeout",
            "1s",
            "--methods",
            "direct,buffered",
            "--patterns",
            "read",
            "--io-size",
            "1G",
        ]);
        let e5 = Estimate::of(&capped, 1 << 30, true, &arms(&capped), &none);
        assert!(e5.cases.iter().all(|c| c.short_by_timeout), "{e5:?}");
        assert_eq!(
            e5.short(&capped),
            Some(Short {
                cases: 2,
                least: 6,
                most: 6,
                remedy: Remedy::CaseTimeout { repeat: true }
            })
        );
        // One method: no verdict to wait for.
        let one = plan(&["--repeat", "2", "--methods", "direct", "--patterns", "read"]);
        let e4 = Estimate::of(&one, 1 << 30, true, &arms(&one), &none);
        assert_eq!(e4.cases[0].short_of, None);
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
        assert_eq!(guess.open_ended(), 1);
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

    /// Regression (issue 18, "runs" item 3): the time left froze during a
    /// long repetition (the case's time spent was booked only when it
    /// ended). A synthetic clock: seconds into the repetition go in.
    #[test]
    fn the_time_left_runs_down_during_a_repetition_and_never_goes_up() {
        // Two one-pass reads of 1 GiB at 100 MiB/s: 10.26 s each.
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
        let eta = Eta::new(&p, 1 << 30, false, arms(&p));
        let speed = 100.0 * 1048576.0;
        let mut eta2 = Eta::new(&p, 1 << 30, false, arms(&p));
        eta2.est = Estimate::of(&p, 1 << 30, false, &arms(&p), &|_| Some(speed));
        let each = 10.24 + SETUP_S;
        // 3 s into case 0 (booked), a repetition starting now.
        eta2.spent(0, 3.0);
        let clock = eta2.clock(0);
        assert!((clock.at(0.0).as_secs_f64() - eta2.left().as_secs_f64()).abs() < 1e-9);
        assert!((clock.others_s - each).abs() < 1e-9);
        assert!((clock.case_s - (each - 3.0)).abs() < 1e-9);
        // It ticks: 2.5 s in, 2.5 s less.
        assert!((clock.at(2.5).as_secs_f64() - (2.0 * each - 5.5)).abs() < 1e-9);
        // Past the case's estimate, the other case's time stands.
        assert!((clock.at(100.0).as_secs_f64() - each).abs() < 1e-9);
        // Never up as time passes, whatever the steps.
        let mut last = f64::INFINITY;
        for k in 0..200 {
            let now = clock.at(k as f64 * 0.1).as_secs_f64();
            assert!(now <= last + 1e-12, "{k}: {now} > {last}");
            last = now;
        }
        // When the repetition ends and its time is booked, the clock it
        // ran down and the booked time agree.
        eta2.spent(0, 3.0 + 4.0);
        assert!((eta2.left().as_secs_f64() - clock.at(4.0).as_secs_f64()).abs() < 1e-9);
        // A finished case has nothing left to run down.
        eta2.finished(&p, 0, Some(speed));
        assert_eq!(eta2.clock(0).case_s, 0.0);
        assert_eq!(eta2.clock(0).at(1.0), eta2.left());
        assert_eq!(
            eta.clock(7),
            LeftClock {
                others_s: eta.left().as_secs_f64(),
                case_s: 0.0
            }
        );
    }

    /// Regression (issue 18, "runs" item 2): presets ran 3 repetitions of
    /// 5 methods, where no call is possible. Every built-in preset's jobs
    /// get the rounds their verdicts need, except where hmmap's case
    /// timeout ends its slowest cases first (and the estimate says so),
    /// and every preset is estimated within 20 minutes.
    #[test]
    fn every_preset_runs_the_rounds_its_verdicts_need() {
        for preset in crate::import::preset::all() {
            let p = crate::plan::Plan::from_spec(
                &preset.job,
                &crate::plan::Origin {
                    preset: Some(preset.name.to_string()),
                    ..Default::default()
                },
            )
            .unwrap();
            let size = p.size.unwrap_or(crate::plan::DEFAULT_SIZE);
            let e = Estimate::of(&p, size, true, &arms(&p), &none);
            for (c, t) in p.cases.iter().zip(&e.cases) {
                assert!(
                    t.short_of.is_none() || t.short_by_timeout,
                    "{}: {} {}: {t:?}",
                    preset.name,
                    c.method.name(),
                    c.pattern.name()
                );
            }
            if e.cases.iter().any(|t| t.short_by_timeout) {
                // hmmap: W and R jobs of 5 methods need 8, RR's of 4 need 7.
                let short = e.short(&p).unwrap();
                assert_eq!((short.least, short.most), (7, 8), "{short:?}");
                assert!(
                    matches!(short.remedy, Remedy::CaseTimeout { .. }),
                    "{short:?}"
                );
            }
            let total = e.total().as_secs_f64();
            assert!(total < 20.0 * 60.0, "{}: {total}", preset.name);
        }
    }

    #[test]
    fn the_case_timeout_bounds_every_case_and_the_run() {
        // hmmap with --time pass: whole operations, as the seed ran them.
        let p = plan(&["--preset", "hmmap", "--time", "pass"]);
        assert_eq!(p.case_timeout, Some(Duration::from_secs(45)));
        let e = Estimate::of(&p, 4 << 30, true, &arms(&p), &none);
        assert!(e
            .cases
            .iter()
            .all(|c| c.total_s <= 45.0 + SETUP_S + 1e-9 && !c.open_ended));
        // mmap's RR: 1,048,576 reads of 8 bytes at the assumed 160 kB/s
        // would be 52 s a repetition; the cap makes it 45 s.
        let rr = p
            .cases
            .iter()
            .position(|c| c.method == Method::Mmap && c.pattern == Pattern::RandRead)
            .unwrap();
        assert!(e.cases[rr].rep_s > 50.0, "{:?}", e.cases[rr]);
        assert!(e.cases[rr].total_s > 44.0, "{:?}", e.cases[rr]);
        let most = p.cases.len() as f64 * (45.0 + SETUP_S) + e.prefill_s;
        assert!(e.total().as_secs_f64() <= most + 1e-6);
        // Every case within its cap: "at most about" the total.
        let at_most = e.most(&p).unwrap().as_secs_f64();
        assert!((at_most - most).abs() < 1e-6, "{at_most}");
        assert!(at_most <= 1.05 * e.total().as_secs_f64(), "{at_most}");
        // Its W cases' flushes may pass the cap (ucache's write-back at
        // close took 3 to 6 s past it here): the estimate says so.
        assert!(flushes_past_cap(&p));
    }

    /// hmmap as shipped: 1 s slices (with a write's flush and the cold-cache
    /// set-up around each), 8 of them per case, each case within its 45 s cap, and the run within the 20 minutes a preset may take.
    #[test]
    fn hmmap_slices_fit_the_case_timeout_and_the_run_fits_twenty_minutes() {
        let p = plan(&["--preset", "hmmap"]);
        let e = Estimate::of(&p, 4 << 30, true, &arms(&p), &none);
        for (c, t) in p.cases.iter().zip(&e.cases) {
            assert!(
                t.total_s < 45.0,
                "{} {}: {t:?}",
                c.method.name(),
                c.pattern.name()
            );
            assert!(
                t.short_of.is_none(),
                "{} {}: {t:?}",
                c.method.name(),
                c.pattern.name()
            );
        }
        assert!(e.total().as_secs_f64() < 20.0 * 60.0, "{:?}", e.total());
    }

    /// Regression (issue 28, item 4): `--cache warm --time 3s` measured one
    /// ~50 ms pass of a cached file for the caching methods, 2.3x fio's
    /// time-based figure. With a warm cache memory is what was asked for:
    /// every method's sequential repetition lasts its time limit.
    #[test]
    fn a_warm_cache_sequential_case_of_a_caching_method_wraps_for_its_time() {
        let args = |cache: &str| -> Vec<String> {
            [
                "--methods",
                "buffered,mmap,direct",
                "--patterns",
                "read",
                "--time",
                "3s",
                "--cache",
                cache,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        };
        let warm = plan(&args("warm").iter().map(String::as_str).collect::<Vec<_>>());
        assert!(warm.cases.iter().all(|c| warm.wraps(c)), "{:?}", warm.cases);
        let cold = plan(&args("cold").iter().map(String::as_str).collect::<Vec<_>>());
        let wrapped: Vec<bool> = cold.cases.iter().map(|c| cold.wraps(c)).collect();
        assert_eq!(wrapped, [false, false, true], "only direct wraps from cold");
        let e = Estimate::of(&warm, 256 << 20, false, &arms(&warm), &|_| Some(2e9));
        assert!(e.cases.iter().all(|c| c.rep_s >= 3.0), "{:?}", e.cases);
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

    /// Regression (issue 18, fix item 1): warm-ups did not cancel the
    /// rounds a verdict needs in the estimate but did in the run (the
    /// run divided the job's time, warm-ups included, by its measured
    /// rounds only). The job loop, given the estimate's repetition times,
    /// runs the rounds the estimate counts, with and without warm-ups.
    #[test]
    fn the_job_loop_runs_the_rounds_the_estimate_counts() {
        use super::super::repeat::{run_job, RepOutcome, Schedule};
        for warmup in ["0", "1", "2"] {
            let p = plan(&[
                "--methods",
                "direct,uring",
                "--patterns",
                "randread",
                "--time",
                "100ms",
                "--max-time",
                "450ms",
                "--size",
                "64M",
                "--warmup",
                warmup,
            ]);
            let jobs = arms(&p);
            assert_eq!(jobs.len(), 1);
            let e = Estimate::of(&p, 64 << 20, true, &jobs, &none);
            let rule = p.stop_rule().map(|mut r| {
                r.wanted_reps = r.min_reps.max(wanted_rounds(&p, 2).unwrap());
                r
            });
            let s = Schedule {
                fixed: None,
                rule,
                warmup: p.warmup,
                seed: 1,
                round_base: 0,
                case_timeout_ns: None,
            };
            // Throughputs too spread for the interval target to stop it.
            let bws = [50.0, 150.0, 100.0, 80.0];
            let mut i = 0;
            let end = run_job(2, &s, |c| {
                i += 1;
                RepOutcome::Done {
                    bw: bws[i % bws.len()],
                    wall_ns: (e.cases[c.arm].rep_s * 1e9) as u64,
                }
            });
            let expected = e.cases[0].reps - f64::from(p.warmup);
            assert_eq!(
                f64::from(end.rounds),
                expected,
                "--warmup {warmup}: {end:?}"
            );
            // With up to one warm-up the verdict's 6 rounds fit in twice
            // the budget (8 rounds of 0.24 s do not).
            assert_eq!(e.cases[0].short_of.is_none(), warmup != "2", "{warmup}");
            assert_eq!(end.arms[0].warmup, p.warmup);
        }
    }
}

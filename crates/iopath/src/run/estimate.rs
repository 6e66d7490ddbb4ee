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
use crate::plan::replay::{ReplaySource, ReplayTiming};
use crate::plan::{Case, Pattern, Plan};

/// Set-up per repetition that the time limit does not count (cache state,
/// engines opened, workers started and joined, the figures read), assumed
/// until the run has measured its own ([`Eta::set_up`]): the default run's
/// median here was 34 ms at a load average of 7 (2026-11-27), once the
/// residency and the kernel threads were read without scanning the file's
/// pages and every process.
pub const SETUP_S: f64 = 0.04;

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
    case.workloads()
        .iter()
        .any(|w| w.pattern.writes() && w.sync == SyncPolicy::End)
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
    /// The least it takes: under a budget, the rounds every arm runs
    /// whatever they cost ([`crate::plan::MIN_ADAPTIVE_REPS`], warm-ups
    /// too); else `total_s`.
    pub floor_s: f64,
    /// How many times its chosen length a repetition may run on for the
    /// requests every slot is given ([`stretch`]); 1 when it may not.
    pub stretch: f64,
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
/// measured speed when known (bytes per second); `stretch` how far a
/// length iopath chose may run on ([`stretch`]). Also: whether bytes bound
/// it at an assumed speed, and whether bytes alone bound it.
fn rep_time(
    plan: &Plan,
    case: &Case,
    (file_size, setup_s): (u64, f64),
    speed: Option<f64>,
    stretch: Stretch,
) -> (f64, bool, bool) {
    if let Some(source) = plan
        .replay
        .as_ref()
        .filter(|_| case.pattern == Pattern::Replay)
    {
        // Under a budget, no longer than a repetition's share of it.
        let budget = plan.budget.filter(|_| plan.repeat.is_none());
        let limit =
            crate::plan::replay::repetition_limit(plan, budget.map(|b| b.as_nanos() as u64));
        return (
            replay_time(source, case, speed).min(limit.map_or(f64::INFINITY, |l| l.as_secs_f64()))
                + setup_s,
            speed.is_none(),
            false,
        );
    }
    let limit = (case.pattern != Pattern::Copy)
        .then(|| plan.case_time_limit(case))
        .flatten()
        .map(|d| d.as_secs_f64());
    let bytes = rep_bytes(plan, case, file_size);
    let measured = speed.is_some();
    let speed = speed
        .filter(|s| *s > 0.0)
        .unwrap_or_else(|| assumed_speed(case));
    let limit = limit.map(|l| stretched(plan, case, l, speed, stretch));
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
    (work + setup_s, assumed, bytes.is_some() && limit.is_none())
}

/// One whole replay of `source` through `case`, seconds: a replay is
/// never cut by the time limit, so its reads and writes decide it, at the
/// measured speed (bytes per second) when known, else at one op per
/// [`ASSUMED_REPLAY_OP_S`] per request in flight (the assumed speed where
/// that is faster: large requests); under `--replay-timing recorded` (or a
/// factor), no shorter than the recorded span scaled.
pub fn replay_time(source: &ReplaySource, case: &Case, speed: Option<f64>) -> f64 {
    let s = &source.survey;
    let bytes = (s.read_bytes + s.write_bytes) as f64;
    let work = match speed.filter(|v| *v > 0.0) {
        Some(v) => bytes / v,
        None => {
            let depth = if case.method.is_async() {
                source.depth()
            } else {
                1
            };
            let per_op = s.data_ops() as f64 * ASSUMED_REPLAY_OP_S / f64::from(depth.clamp(1, 8));
            per_op.max(bytes / assumed_speed(case))
        }
    };
    match source.timing {
        ReplayTiming::Fast => work,
        ReplayTiming::Recorded { scale } => work.max(s.duration_ns as f64 / 1e9 * scale),
    }
}

/// The time assumed for one replayed read or write before any has run
/// (20,000 a second, as [`assumed_speed`] assumes of small requests).
pub const ASSUMED_REPLAY_OP_S: f64 = 50e-6;

/// How far a repetition of a length iopath chose runs on past it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stretch {
    /// Until every slot had its requests at the speed given, for at most
    /// this many times the length (as the workers do).
    AsNeeded(f64),
    /// This many times the length, whatever the speed: the most it can
    /// cost, which [`stretch`] budgets for.
    Whole(f64),
}

/// The time limit `l` (seconds) of a repetition of `case` at `speed`
/// (bytes per second), run on as `stretch` says when iopath chose it.
fn stretched(plan: &Plan, case: &Case, l: f64, speed: f64, stretch: Stretch) -> f64 {
    if plan.chosen_length(case).is_none() {
        return l;
    }
    match stretch {
        Stretch::Whole(s) => l * s,
        Stretch::AsNeeded(s) => {
            let need = f64::from(crate::plan::MIN_REQUESTS_PER_SLOT)
                * slots(case) as f64
                * case.block_size as f64
                / speed;
            need.clamp(l, l * s.max(1.0))
        }
    }
}

/// Requests in flight of one repetition of `case`, all its threads
/// together: each thread's depth for an asynchronous method, one for a
/// synchronous one.
fn slots(case: &Case) -> u64 {
    let depth = if case.method.is_async() {
        case.queue_depth_requested.max(1)
    } else {
        1
    };
    u64::from(depth) * u64::from(case.threads.max(1))
}

/// The share of a job's budget that the rounds its verdict needs may take
/// at their stretched length: the rest is kept for what the cost model
/// misses and goes to the methods still close to their leader.
const STRETCH_SHARE: f64 = 0.75;

/// How many times its chosen length ([`Plan::chosen_length`]) a
/// repetition of the job of `cases` may run on, under a job budget of
/// `budget_s` seconds, to give every slot its requests
/// ([`crate::plan::MIN_REQUESTS_PER_SLOT`]). The rounds the job's verdict
/// needs come first, at the chosen length; the stretch takes only what is
/// left of [`STRETCH_SHARE`] of the budget once they are paid for, counted
/// as though every arm ran its whole stretched length (the speeds are not
/// known before the job runs) after a set-up of `setup_s` (the run's
/// measured set-up per repetition, [`SETUP_S`] before it has one), and
/// is at most
/// [`crate::plan::MAX_STRETCH`]. 1 when those rounds take it all, with
/// `--repeat`, or when a length was given. The runner gives each job this
/// stretch from its share of the budget; the estimate, from the share it
/// expects the job to get.
pub fn stretch(
    plan: &Plan,
    cases: &[&Case],
    (file_size, setup_s): (u64, f64),
    budget_s: f64,
) -> f64 {
    if plan.repeat.is_some() || cases.iter().any(|c| plan.chosen_length(c).is_none()) {
        return 1.0;
    }
    let rounds = wanted_rounds(plan, cases.len()).unwrap_or(crate::plan::MIN_ADAPTIVE_REPS) as f64
        + f64::from(plan.warmup);
    let cost = |s: f64| -> f64 {
        let rep = |c: &&Case| rep_time(plan, c, (file_size, setup_s), None, Stretch::Whole(s)).0;
        rounds * cases.iter().map(rep).sum::<f64>()
    };
    let room = STRETCH_SHARE * budget_s;
    let most = crate::plan::MAX_STRETCH;
    if cost(1.0) >= room {
        return 1.0;
    }
    if cost(most) <= room {
        return most;
    }
    // The cost grows with the stretch: the largest that fits, to 1/1000.
    let (mut lo, mut hi) = (1.0, most);
    while hi - lo > 1e-3 {
        let mid = (lo + hi) / 2.0;
        if cost(mid) <= room {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The budget the runner will give the job of `cases` (seconds): its own
/// (a fio job's `runtime`), else its cases' share of the run's budget
/// less the file's fill (`RunBudget::share`: every job before it spends
/// its share); `None` without a budget.
fn expected_share(plan: &Plan, cases: &[&Case], prefill_s: f64) -> Option<f64> {
    if let Some(own) = cases.iter().find_map(|c| c.budget) {
        return Some(own.as_secs_f64());
    }
    let all = plan.cases.iter().filter(|c| c.budget.is_none()).count();
    let left = plan.budget?.as_secs_f64() - prefill_s;
    Some(left.max(0.0) * cases.len() as f64 / all.max(1) as f64)
}

/// What the cases of one job take (`cases`, with their measured speeds
/// when known), run in rounds by [`crate::stats::StopRule::decide_job`]:
/// `--repeat` rounds, or as many as the job's budget (`--max-time` per
/// case) pays for, and the rounds its verdict needs when they fit in
/// [`crate::stats::VERDICT_GRACE`] times it (warm-ups count against both).
/// `share_s`: the job's budget, which decides its [`stretch`].
pub fn job_times(
    plan: &Plan,
    cases: &[&Case],
    (file_size, setup_s): (u64, f64),
    speeds: &[Option<f64>],
    share_s: Option<f64>,
) -> Vec<CaseTime> {
    let size = (file_size, setup_s);
    let stretch = share_s.map_or(1.0, |b| self::stretch(plan, cases, size, b));
    let reps: Vec<(f64, bool, bool)> = cases
        .iter()
        .zip(speeds)
        .map(|(c, &s)| rep_time(plan, c, size, s, Stretch::AsNeeded(stretch)))
        .collect();
    let round_s: f64 = reps.iter().map(|r| r.0).sum();
    let k = cases.len().max(1);
    let warmup = f64::from(plan.warmup);
    let wanted = wanted_rounds(plan, cases.len());
    let budgeted = plan.budget.is_some() || cases.iter().any(|c| c.budget.is_some());
    let floor_rounds = (budgeted && plan.repeat.is_none())
        .then_some(crate::plan::MIN_ADAPTIVE_REPS as f64 + warmup);
    let (measured, short_of, max_time) = match plan.repeat {
        Some(n) => (f64::from(n), wanted.filter(|w| (n as usize) < *w), None),
        // Under a budget: the floor of rounds every method gets (the rest
        // of the budget goes where the verdict needs it, or is not spent).
        None if budgeted => (
            wanted.unwrap_or(crate::plan::MIN_ADAPTIVE_REPS) as f64,
            None,
            None,
        ),
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
            let total_s = cap.map_or(rep_s * reps, |c| (rep_s * reps).min(c + setup_s));
            CaseTime {
                rep_s,
                reps,
                total_s,
                floor_s: floor_rounds.map_or(total_s, |f| (rep_s * f).min(total_s)),
                assumed,
                open_ended: bytes_only && cap.is_none(),
                short_of: if capped { wanted } else { short_of },
                max_time_for_call: max_time.filter(|_| !capped),
                short_by_timeout: capped,
                stretch,
            }
        })
        .collect()
}

/// The rounds a verdict over a job of `arms` cases needs to make a call
/// (its comparisons share 5%): `None` for a job of one case, or run
/// sequentially (no paired verdict).
pub fn wanted_rounds(plan: &Plan, arms: usize) -> Option<usize> {
    (arms >= 2 && plan.schedule == crate::plan::Schedule::Interleaved)
        .then(crate::stats::verdict_rounds)
}

pub use crate::stats::max_time_for;

/// The run's estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Per case of the plan, in its order.
    pub cases: Vec<CaseTime>,
    /// Filling the test file first (none when it exists or is sparse).
    pub prefill_s: f64,
    /// The set-up per repetition counted (seconds).
    pub setup_s: f64,
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
        Self::with_set_up(plan, (file_size, SETUP_S), prefill, jobs, speed)
    }

    /// [`Estimate::of`] with a set-up of `setup_s` seconds per repetition.
    pub fn with_set_up(
        plan: &Plan,
        (file_size, setup_s): (u64, f64),
        prefill: bool,
        jobs: &[Vec<usize>],
        speed: &dyn Fn(&Case) -> Option<f64>,
    ) -> Estimate {
        let prefill_s = if prefill && plan.needs_file() {
            file_size as f64 / 500e6
        } else {
            0.0
        };
        let mut cases: Vec<Option<CaseTime>> = vec![None; plan.cases.len()];
        let times = |members: &[&Case]| {
            let speeds: Vec<Option<f64>> = members.iter().map(|c| speed(c)).collect();
            let share = expected_share(plan, members, prefill_s).filter(|_| plan.repeat.is_none());
            job_times(plan, members, (file_size, setup_s), &speeds, share)
        };
        for job in jobs {
            let members: Vec<&Case> = job.iter().map(|&i| &plan.cases[i]).collect();
            for (&i, t) in job.iter().zip(times(&members)) {
                cases[i] = Some(t);
            }
        }
        Estimate {
            cases: cases
                .into_iter()
                .zip(&plan.cases)
                .map(|(t, c)| t.unwrap_or_else(|| times(&[c])[0]))
                .collect(),
            prefill_s,
            setup_s,
        }
    }

    /// Under a budget: the run's whole budget (`--budget` for the jobs
    /// without their own, plus each fio job's `runtime`), else `None`.
    pub fn budget(plan: &Plan) -> Option<Duration> {
        let mut own: Vec<(&Option<String>, Duration)> = Vec::new();
        for c in &plan.cases {
            if let Some(b) = c.budget {
                if !own.iter().any(|(l, _)| *l == &c.label) {
                    own.push((&c.label, b));
                }
            }
        }
        let run = plan
            .budget
            .filter(|_| plan.cases.iter().any(|c| c.budget.is_none()));
        if run.is_none() && own.is_empty() {
            return None;
        }
        Some(run.unwrap_or_default() + own.iter().map(|o| o.1).sum::<Duration>())
    }

    /// Under a budget (not `--repeat`), how the run's time stands against
    /// it; `None` without one.
    pub fn bound(&self, plan: &Plan) -> Option<Bound> {
        let budget = Self::budget(plan).filter(|_| plan.repeat.is_none())?;
        let floor = Duration::from_secs_f64(
            self.prefill_s + self.cases.iter().map(|c| c.floor_s).sum::<f64>(),
        );
        let rounds = self.total();
        Some(if floor > budget {
            Bound::AtLeast { budget, floor }
        } else if rounds > budget {
            Bound::ShortOfRounds { budget, rounds }
        } else {
            Bound::Holds { budget, rounds }
        })
    }

    /// The latest a repetition of a length iopath chose may end, running
    /// on for the requests every slot is given ([`stretch`]): the longest
    /// over the cases whose jobs' budgets let them; `None` when none may.
    pub fn stretch_until(&self, plan: &Plan) -> Option<Duration> {
        self.cases
            .iter()
            .zip(&plan.cases)
            .filter(|(t, _)| t.stretch > 1.0)
            .filter_map(|(t, c)| plan.chosen_length(c).map(|l| l.mul_f64(t.stretch)))
            .max()
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
            self.prefill_s + n * (c.as_secs_f64() + self.setup_s),
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

/// A run under a budget against it ([`Estimate::bound`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The rounds every verdict needs (`rounds`: their time) fit in it.
    Holds { budget: Duration, rounds: Duration },
    /// They do not, but the rounds every arm runs whatever they cost do:
    /// the run ends near its budget, some verdicts short of their rounds.
    ShortOfRounds { budget: Duration, rounds: Duration },
    /// Even those take longer (`floor`): the budget cannot be held, and
    /// the run takes at least about `floor`.
    AtLeast { budget: Duration, floor: Duration },
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
        .flat_map(|c| c.workloads())
        .any(|c| c.pattern.writes() && c.sync == iopath_io::SyncPolicy::End)
}

/// The plan of `iopath run ARGS`, for the tests (which may reach up to the
/// command line for it: this item is test code).
#[cfg(test)]
pub(crate) fn plan_of_args(args: &[&str]) -> Plan {
    let mut v = vec!["iopath", "run"];
    v.extend_from_slice(args);
    let Some(crate::cli::Command::Run(r)) = crate::cli::parse_from(v).unwrap().command else {
        unreachable!()
    };
    crate::cli::commands::plan_of(&r).unwrap()
}

mod eta;
pub use eta::{Eta, LeftClock};

#[cfg(test)]
mod tests;

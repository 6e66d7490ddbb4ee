//! One job: the cases that differ only by method (or by the arm of one
//! method named twice), run as the arms of [`repeat::run_job`]: warm-ups of
//! each arm first, then rounds of one repetition per arm in a shuffled
//! order (or, with `--schedule sequential`, a job of one case).
//!
//! Per repetition: the cgroup of `--cache-limit` entered (and left after),
//! a sparse file truncated again, the cache state made, with `--neighbour`
//! the neighbour measured alone and started, the engines run
//! (`run_repetition`), and the measurement booked into the case with its
//! round and its place in the run's order. The JSON is rewritten after every
//! round, so that a killed run keeps every round it finished. Latency
//! summaries come from the merged histograms of the measured repetitions.

mod case;
mod rep;

pub use case::new_pages_in_memory;
pub use rep::cap_for_work;
use rep::Book;

use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::Result;
use hdrhistogram::Histogram;

use super::case_notes::{pass_bytes, passes_note, passes_of, timeout_note, RankFiles};
use super::live::Live;
use super::observe::Observer;
use super::repeat::{self, ArmEnd, RepOutcome};
use super::{case_result, Runner};
use crate::plan::{Case, Schedule};
use crate::result::facts::CaseNote;
use crate::result::skip::Skip;
use crate::result::{
    CacheLimitInfo, CaseResult, Latency, Measurement, RepetitionControl, RunResult,
};
use crate::run::cgroup::CacheLimit;
use crate::run::target::Target;
use crate::stats::StopReason;

/// The jobs of a plan, as lists of its cases' indices: the cases that
/// differ only by method (the verdict's groups), wherever they stand in the
/// plan, in the order their first case appears (interleaved); or each case
/// alone (sequential).
pub fn jobs(cases: &[Case], schedule: Schedule) -> Vec<Vec<usize>> {
    if schedule == Schedule::Sequential {
        return (0..cases.len()).map(|i| vec![i]).collect();
    }
    // Each key's job, in the order keys first come: linear in the cases.
    let mut at: std::collections::HashMap<crate::result::JobKey, usize> = Default::default();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let j = *at.entry(case_result(c).job_key()).or_insert_with(|| {
            out.push(Vec::new());
            out.len() - 1
        });
        out[j].push(i);
    }
    out
}

/// How the progress line names a case: `direct randread 4k Q1T1`, the
/// job as the method will run it (synchronous methods at depth 1); a
/// matched case with its threads x depth: `direct randread 4k N32 32x1`.
pub fn progress_name(case: &Case) -> String {
    let mut c = case_result(case);
    if !case.method.is_async() {
        c.queue_depth = 1;
    }
    // A job file's label: shown, not obeyed, on the progress line.
    let mut name = format!("{} {}", c.name(), c.ran_label());
    if c.concurrency.is_some() {
        name.push_str(&format!(" {}x{}", c.threads, c.queue_depth));
    }
    crate::model::untrusted::visible(&name).into_owned()
}

/// What a run carries from job to job.
#[derive(Debug)]
pub struct Shared<'r> {
    pub target: Option<&'r Target>,
    pub probes: &'r [crate::run::prepare::Probed],
    pub obs: &'r Observer,
    pub limit: &'r mut Option<CacheLimit>,
    /// Repetitions run so far in the whole run (the next one's `seq` - 1).
    pub seq: u32,
    /// Measured rounds run so far in the whole run: the next job's rounds
    /// are numbered after them, so that rounds pair only within a job.
    pub rounds: u32,
    /// `--neighbour`: its hot set, made on first use (inside the
    /// `--cache-limit` cgroup, so that its pages are charged there).
    pub hot: Option<iopath_io::neighbour::HotSet>,
    /// The time left, for the progress line.
    pub eta: super::estimate::Eta,
    /// What is left of `--budget` to share among the jobs to come.
    pub budget: RunBudget,
    /// `--replay`: the trace's files and op streams.
    pub replay: Option<&'r super::replay::Scratch>,
}

/// `--budget` shared among a run's jobs: each job, when it starts, gets what
/// is left of it (set-up and the jobs before it spent the rest) in
/// proportion to its cases' weight among those still to run (a write
/// counts twice: its fsync). A job with its own budget (a fio job's
/// `runtime`) takes that instead.
#[derive(Debug)]
pub struct RunBudget {
    budget: Option<std::time::Duration>,
    started: Instant,
    weight_left: f64,
}

impl RunBudget {
    pub fn new(plan: &crate::plan::Plan, started: Instant) -> RunBudget {
        RunBudget {
            budget: plan.budget.filter(|_| plan.repeat.is_none()),
            started,
            weight_left: plan
                .cases
                .iter()
                .filter(|c| c.budget.is_none())
                .map(weight)
                .sum(),
        }
    }

    /// The budget of the job of `cases`, ns, now; `later_floor_s`: what
    /// the jobs after it take whatever their budgets (the rounds every arm
    /// runs, [`super::estimate::Eta::floor_left`]), which its share leaves
    /// them.
    fn share(&mut self, cases: &[&Case], later_floor_s: f64) -> Option<u64> {
        if let Some(own) = cases.iter().find_map(|c| c.budget) {
            return Some(own.as_nanos() as u64);
        }
        let budget = self.budget?;
        let left = budget.saturating_sub(self.started.elapsed()).as_secs_f64();
        Some((self.share_of(cases, left, later_floor_s) * 1e9) as u64)
    }

    /// The share of `left` seconds of the job of `cases`: its cases' weight
    /// among those still to run, no more than what the later jobs' floor
    /// (`later_floor_s`) leaves.
    fn share_of(&mut self, cases: &[&Case], left: f64, later_floor_s: f64) -> f64 {
        let w: f64 = cases.iter().map(|c| weight(c)).sum();
        let fair = left * (w / self.weight_left.max(w).max(1e-9)).min(1.0);
        self.weight_left = (self.weight_left - w).max(0.0);
        fair.min(left - later_floor_s.max(0.0)).max(0.0)
    }
}

/// A case's weight in the budget's shares: one each. A round costs about
/// as much whatever the pattern (the default run here, per round of ten
/// methods: 0.7-1.2 s, reads' cache drops against writes' flushes);
/// writes counted twice left the first jobs, the reads, short of the
/// rounds a verdict needs (4 of 6) while the writes after them ran 8-17.
fn weight(_: &Case) -> f64 {
    1.0
}

/// One arm of the job being run.
struct Arm<'c> {
    case: &'c Case,
    /// Its index in the plan.
    at: usize,
    /// Its index in `RunResult::cases`.
    idx: usize,
    /// How the progress line names it.
    name: String,
    live: Option<Live>,
    /// Merged latency of the measured repetitions: complete ones, and
    /// those cut short by Ctrl-C (counted only when nothing else is there,
    /// as [`CaseResult::measured`] does). Made at the first repetition
    /// that has one, and only as wide as the longest latency recorded
    /// (docs/performance.md, "Memory"): a case waiting for its turn holds
    /// none.
    complete: Option<Histogram<u64>>,
    cut: Option<Histogram<u64>>,
    /// Each stream's merged latency over its complete measured
    /// repetitions (a case of streams).
    streams: Vec<Histogram<u64>>,
    /// Wall time of its repetitions so far, set-up included.
    elapsed_ns: u64,
    /// The longest final flush of its write repetitions so far: the room
    /// the case timeout keeps for the next one's.
    flush_ns: u64,
    end: Option<ArmEnd>,
    /// The job's budget, ns, when it has one.
    budget_ns: Option<u64>,
    /// How many times its chosen length a repetition may run on for the
    /// requests every slot is given ([`super::estimate::stretch`]).
    stretch: f64,
    /// The latest its repetitions may then end, ns, when they may run on.
    stretch_until_ns: Option<u64>,
}

/// After a Ctrl-C, the time a job's end may spend merging its cases'
/// latencies before the exit.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// The worker threads a repetition of `case` runs: every stream's.
fn workers_of(case: &Case) -> usize {
    case.workloads()
        .iter()
        .map(|w| w.threads.max(1) as usize)
        .sum()
}

/// A merged latency histogram: the workers' precision (3 significant
/// digits from 1 ns), growing to the longest latency added to it.
fn histogram() -> Histogram<u64> {
    Histogram::<u64>::new(3).expect("valid precision")
}

pub fn limit_info(l: &CacheLimit) -> CacheLimitInfo {
    CacheLimitInfo {
        limit_bytes: l.limit,
        cgroup_version: l.version,
        dir: l.dir.display().to_string(),
        peak_bytes: l.peak_bytes(),
        limit_hits: l.limit_hits(),
    }
}

impl Runner<'_> {
    /// Run the job `cases` (number `job_no` of the run) into `result`,
    /// rewriting it through `on_case` after every round. Returns true when
    /// the run was interrupted.
    pub(super) fn run_job(
        &self,
        job_no: usize,
        cases: &[&Case],
        sh: &mut Shared<'_>,
        result: &mut RunResult,
        on_case: &mut dyn FnMut(&mut RunResult) -> Result<()>,
        bar: &indicatif::ProgressBar,
    ) -> Result<bool> {
        let target = sh.target;
        let mut arms = self.arms(cases, sh, result, bar);
        let interleaved = self.plan.schedule == Schedule::Interleaved;
        let mut sched = self.schedule(job_no, &arms, sh.rounds);
        sched.budget_ns = self.job_budget(cases, &arms, sh, sched.rule.is_some());
        let setup_s = sh.eta.setup_s();
        self.stretch_arms(cases, (target, setup_s), sched.budget_ns, &mut arms);
        let mut fatal: Option<anyhow::Error> = None;
        let mut last_round = 0;
        let end = repeat::run_job(arms.len(), &sched, |call| {
            if call.round > 1 && call.round != last_round {
                // A round is over: the JSON gets it now.
                if let Err(e) = self.round_over(&arms, result, target, on_case) {
                    fatal = e;
                    return RepOutcome::Abort;
                }
            }
            last_round = call.round;
            if self.stop.load(Ordering::Relaxed) {
                return RepOutcome::Abort;
            }
            sh.seq += 1;
            let arm = &mut arms[call.arm];
            let book = Book {
                round: interleaved.then_some(call.round),
                seq: sh.seq,
                budget: call.budget_ns.map(std::time::Duration::from_nanos),
            };
            let out = match self.one_repetition(arm, call.warmup, book, sh, result, bar) {
                Ok(o) => o,
                Err(e) => {
                    fatal = Some(e);
                    RepOutcome::Abort
                }
            };
            sh.eta.spent(arm.at, arm.elapsed_ns as f64 / 1e9);
            bar.set_prefix(self.progress.left(sh.eta.left()));
            out
        });
        for (a, e) in arms.iter_mut().zip(&end.arms) {
            a.end = Some(*e);
        }
        sh.rounds += end.rounds;
        // After a Ctrl-C, the merged latencies of a large job's cases would
        // hold the exit back (a pass over each case's histogram): past
        // STOP_GRACE, the cases left take their repetitions' medians.
        let t_end = Instant::now();
        for a in &arms {
            let merge = !self.stop.load(Ordering::Relaxed) || t_end.elapsed() < STOP_GRACE;
            self.close_case(a, result, merge, target);
        }
        if let Some(e) = fatal {
            return Err(e);
        }
        let interrupted = end.aborted
            || self.stop.load(Ordering::Relaxed)
            || arms.iter().any(|a| {
                result.cases[a.idx]
                    .repetitions
                    .iter()
                    .any(|r| r.interrupted)
            });
        name_paths(result, target);
        self.ranks.agree(on_case(result))?;
        self.job_done(cases, sh, result, bar);
        Ok(interrupted)
    }

    /// The job's share of the run's budget, leaving the later jobs their
    /// floor of rounds; rank 0's on every rank: each derived it from its
    /// own clock and its own set-ups, and the ranks run the same rounds.
    fn job_budget(
        &self,
        cases: &[&Case],
        arms: &[Arm<'_>],
        sh: &mut Shared<'_>,
        adaptive: bool,
    ) -> Option<u64> {
        let members: Vec<usize> = arms.iter().map(|a| a.at).collect();
        let later_floor_s = sh.eta.floor_left(&members);
        (sh.budget)
            .share(cases, later_floor_s)
            .filter(|_| adaptive)
            .map(|b| self.ranks.agree_f64(b as f64) as u64)
    }

    /// The rounds a job's verdict needs first, then a stretch of what is
    /// left of its budget (`budget_ns`) for its arms' repetitions; rank
    /// 0's on every rank, which run the same repetitions.
    fn stretch_arms(
        &self,
        cases: &[&Case],
        (target, setup_s): (Option<&Target>, f64),
        budget_ns: Option<u64>,
        arms: &mut [Arm<'_>],
    ) {
        let stretch = budget_ns.map_or(1.0, |b| {
            let size = target.map_or(self.plan.size.unwrap_or(crate::plan::DEFAULT_SIZE), |t| {
                t.size()
            });
            super::estimate::stretch(self.plan, cases, (size, setup_s), b as f64 / 1e9)
        });
        let stretch = self.ranks.agree_f64(stretch);
        for a in arms {
            a.budget_ns = budget_ns;
            a.stretch = stretch;
            a.stretch_until_ns = (self.plan.chosen_length(a.case))
                .filter(|_| stretch > 1.0)
                .map(|t| t.mul_f64(stretch).as_nanos() as u64);
        }
    }

    /// The job's cases into `result`, prepared; the arms of those that run.
    fn arms<'c>(
        &self,
        cases: &[&'c Case],
        sh: &Shared<'_>,
        result: &mut RunResult,
        bar: &indicatif::ProgressBar,
    ) -> Vec<Arm<'c>> {
        let mut arms = Vec::new();
        for &case in cases {
            let mut cr = self.prepare_case(case, sh);
            cr.skip = self.ranks.agree_skip(cr.skip);
            let idx = result.cases.len();
            let runs = cr.skip.is_none();
            result.cases.push(cr);
            if runs {
                // `direct randread 4k Q1T1`: the job as this method runs it.
                let name = progress_name(case);
                let live = self
                    .progress
                    .is_enabled()
                    .then(|| Live::new(workers_of(case), bar.clone(), name.clone()))
                    .map(|l| l.with_words(self.progress.words()));
                arms.push(Arm {
                    case,
                    at: self.plan_index(case),
                    idx,
                    name,
                    live,
                    complete: None,
                    cut: None,
                    streams: Vec::new(),
                    elapsed_ns: 0,
                    flush_ns: 0,
                    end: None,
                    budget_ns: None,
                    stretch: 1.0,
                    stretch_until_ns: None,
                });
            }
        }
        arms
    }

    /// How the job's arms repeat. Adaptive jobs try to reach the rounds a
    /// verdict among their real methods needs to make a call (6 for two, 8
    /// for seven), when they fit within twice their budget
    /// (`VERDICT_GRACE`).
    fn schedule(&self, job_no: usize, arms: &[Arm<'_>], round_base: u32) -> repeat::Schedule {
        let interleaved = self.plan.schedule == Schedule::Interleaved;
        let real = arms.iter().filter(|a| !a.case.method.is_null()).count();
        let rule = self.plan.stop_rule().map(|mut r| {
            if real >= 2 && interleaved {
                r.wanted_reps = r.min_reps.max(crate::stats::verdict_rounds());
            }
            r
        });
        repeat::Schedule {
            fixed: self.plan.repeat,
            rule,
            warmup: self.plan.warmup,
            seed: self.plan.order_seed ^ (job_no as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            round_base,
            case_timeout_ns: self.plan.case_timeout.map(|d| d.as_nanos() as u64),
            budget_ns: None,
        }
    }

    /// A round is over: every arm summarized and the JSON rewritten (a
    /// Ctrl-C skips it: the job's end summarizes every case anyway).
    /// `Err(None)`: stopped; `Err(Some(e))`: the write failed.
    fn round_over(
        &self,
        arms: &[Arm<'_>],
        result: &mut RunResult,
        target: Option<&Target>,
        on_case: &mut dyn FnMut(&mut RunResult) -> Result<()>,
    ) -> Result<(), Option<anyhow::Error>> {
        for a in arms {
            if self.stop.load(Ordering::Relaxed) {
                return Err(None);
            }
            summarize(&mut result.cases[a.idx], a, true);
        }
        name_paths(result, target);
        // Rank 0 alone writes: its failure is every rank's.
        self.ranks.agree(on_case(result)).map_err(Some)
    }

    /// An arm's case at the job's end: summarized, with its facts (the
    /// case timeout, its passes, what was verified) and where it ran.
    fn close_case(
        &self,
        a: &Arm<'_>,
        result: &mut RunResult,
        merge: bool,
        target: Option<&Target>,
    ) {
        let cr = &mut result.cases[a.idx];
        summarize(cr, a, merge);
        if a.end
            .is_some_and(|e| e.stopped_by == StopReason::CaseTimeout)
        {
            cr.facts.push(timeout_note(cr, self.plan));
        }
        let size = target.map_or(self.plan.size.unwrap_or(crate::plan::DEFAULT_SIZE), |t| {
            t.size()
        });
        let ranks = RankFiles {
            ranks: self.ranks.count() as u64,
            sharing: self.ranks.sharing(),
        };
        cr.pass_bytes = pass_bytes(a.case, self.plan, size, ranks);
        if let Some(p) = passes_of(cr, a.case, self.plan, size, ranks) {
            if let Some(n) = passes_note(&p, cr, a.case, self.plan) {
                cr.facts.push(n);
            }
            cr.passes = Some(p);
        }
        if let (Some(b), Some(ns)) = (cr.verified_bytes, cr.verify_ns) {
            // The table's notes: what --verify checked.
            cr.facts.push(CaseNote::Verified {
                bytes: b,
                checking_ns: ns,
            });
        }
        if let Some(p) = &mut cr.placement {
            if let Some(topo) = &result.system.topology {
                p.cpu_nodes = p
                    .affinity
                    .iter()
                    .filter_map(|&c| topo.node_of_cpu(c))
                    .collect();
                p.cpu_nodes.sort_unstable();
                p.cpu_nodes.dedup();
            }
            p.device_node = result
                .system
                .device
                .as_ref()
                .and_then(|d| d.numa_node)
                .and_then(|n| u32::try_from(n).ok());
        }
    }

    /// The time left, with what this job measured.
    fn job_done(
        &self,
        cases: &[&Case],
        sh: &mut Shared<'_>,
        result: &RunResult,
        bar: &indicatif::ProgressBar,
    ) {
        let first = result.cases.len() - cases.len();
        for (k, &case) in cases.iter().enumerate() {
            let bw = result.cases[first + k]
                .summary
                .as_ref()
                .map(|s| s.bw_bytes_per_s);
            sh.eta.finished(self.plan, self.plan_index(case), bw);
        }
        bar.set_prefix(self.progress.left(sh.eta.left()));
        bar.inc(cases.len() as u64);
    }

    /// Where `case` stands in the plan.
    fn plan_index(&self, case: &Case) -> usize {
        // Its offset in the plan's cases, checked: constant time, where a
        // search made a job's end quadratic in its cases.
        let cases = &self.plan.cases;
        let size = std::mem::size_of::<Case>().max(1);
        let at = (case as *const Case as usize).wrapping_sub(cases.as_ptr() as usize) / size;
        match cases.get(at) {
            Some(c) if std::ptr::eq(c, case) => at,
            _ => cases
                .iter()
                .position(|c| std::ptr::eq(c, case))
                .unwrap_or(usize::MAX),
        }
    }
}

/// A case's summary, statistics and repetition control from what it has
/// measured so far. Latency percentiles come from the merged histograms of
/// the measured repetitions, not from medians of per-repetition figures.
fn summarize(cr: &mut CaseResult, arm: &Arm<'_>, merge: bool) {
    // Summaries leave out warm-ups, and a repetition cut short by Ctrl-C
    // unless it is all there is.
    let basis = cr.measured();
    let measured = basis.len() as u32;
    let measured_ios: u64 = basis.iter().map(|m| m.ios).sum();
    let mut summary = Measurement::median_of(&basis);
    let hist = [&arm.complete, &arm.cut]
        .into_iter()
        .flatten()
        .find(|h| merge && !h.is_empty());
    if let (Some(s), Some(hist)) = (&mut summary, hist) {
        s.lat_ns = Latency::from_hist(hist);
        // The split was checked against the median of the repetitions'
        // means: check it against the mean shown.
        s.latency_split = s.latency_split.map(|l| l.rechecked(s.lat_ns.mean));
    }
    let stats = crate::stats::CaseStats::of(&basis);
    let streams: Vec<_> = (0..cr.streams.len())
        .map(|i| {
            let merged = arm
                .streams
                .get(i)
                .filter(|h| merge && !h.is_empty())
                .map(Latency::from_hist);
            crate::result::streams::StreamSummary::of(&basis, i, merged)
        })
        .collect();
    for (s, summary) in cr.streams.iter_mut().zip(streams) {
        s.summary = summary;
    }
    (cr.summary, cr.stats) = (summary, stats);
    if cr.repetitions.is_empty() {
        return;
    }
    let bw = cr.stats.as_ref().map(|s| &s.bw_bytes_per_s);
    cr.repetition_control = Some(RepetitionControl {
        // Still running (the JSON of a round in progress), or stopped.
        stopped_by: arm.end.map_or(StopReason::Stopped, |e| e.stopped_by),
        measured,
        warmup: cr.repetitions.iter().filter(|m| m.warmup).count() as u32,
        ci_rel: bw.filter(|s| s.n >= 2).map(crate::stats::median_ci_rel),
        ci_level: bw.map_or(0.0, |s| s.ci95_median_level),
        elapsed_ns: arm.elapsed_ns,
        measured_ios: Some(measured_ios),
        budget_ns: arm.budget_ns,
        stretch_until_ns: arm.stretch_until_ns,
    });
}

/// Messages as a person reads them: the `/proc/<pid>/fd/<n>` engines open
/// (an unnamed test file, or an existing file or device pinned) named as
/// the target (`DIR/(unnamed O_TMPFILE)`, or the name given).
fn name_paths(result: &mut RunResult, target: Option<&crate::run::target::Target>) {
    let Some(t) = target.filter(|t| t.path() != t.info.path.as_path()) else {
        return;
    };
    let (from, to) = (
        t.path().display().to_string(),
        t.info.path.display().to_string(),
    );
    for c in &mut result.cases {
        for m in c
            .error
            .iter_mut()
            .chain(c.skipped.iter_mut())
            .chain(c.skip.iter_mut().flat_map(Skip::texts_mut))
            .chain(c.facts.iter_mut().flat_map(CaseNote::texts_mut))
        {
            if m.contains(&from) {
                *m = m.replace(&from, &to);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Pattern;
    use iopath_io::Method;

    /// Regression (review of issue 13): a preset that lists cases of one
    /// job apart (hmmap's mmap before uffd, ucache and direct) ran them as
    /// separate jobs, and the verdict paired their rounds as if they had run
    /// side by side. Jobs now gather a key's cases wherever they stand.
    #[test]
    fn a_jobs_cases_gather_wherever_they_stand_in_the_plan() {
        let c = |m: Method, p: Pattern| Case::new(m, p, 4096, 32, 1);
        let cases = vec![
            c(Method::Mmap, Pattern::Write),
            c(Method::Direct, Pattern::Read),
            c(Method::Ucache, Pattern::Write),
            c(Method::Direct, Pattern::Write),
        ];
        assert_eq!(
            jobs(&cases, Schedule::Interleaved),
            vec![vec![0, 2, 3], vec![1]]
        );
        assert_eq!(
            jobs(&cases, Schedule::Sequential),
            vec![vec![0], vec![1], vec![2], vec![3]]
        );
    }

    /// Issue 28: the first jobs took their share of the budget as though
    /// the later ones could run in what was left, but each arm runs 3
    /// rounds whatever they cost: under load the run passed its budget by
    /// the later jobs' floors. A job's share now leaves them their floor.
    #[test]
    fn a_jobs_share_leaves_the_later_jobs_their_floor_of_rounds() {
        let c = Case::new(Method::Direct, Pattern::RandRead, 4096, 1, 1);
        let mut b = RunBudget {
            budget: Some(std::time::Duration::from_secs(30)),
            started: Instant::now(),
            weight_left: 3.0,
        };
        // 30 s for 3 jobs, the two after this one needing 24 s whatever.
        let share = b.share_of(&[&c], 30.0, 24.0);
        assert!((share - 6.0).abs() < 1e-9, "{share}");
        // Floors that fit leave the even share.
        let share = b.share_of(&[&c], 24.0, 2.0);
        assert!((share - 12.0).abs() < 1e-9, "{share}");
        // Floors past what is left: nothing beyond the job's own floor.
        assert_eq!(b.share_of(&[&c], 12.0, 20.0), 0.0);
    }
}

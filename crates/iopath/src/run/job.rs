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

use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use iopath_io::{Method, MethodStatus};

use super::case_notes::{pass_bytes, passes_note, passes_of, timeout_note, RankFiles};
use super::live::{self, Live};
use super::observe::Observer;
use super::repeat::{self, ArmEnd, RepOutcome};
use super::{case_result, set_cache_state, RepError, Runner, SKIP_RETRIES, SKIP_RETRY_WAIT};
use crate::model::units::fmt_bytes;
use crate::plan::{Case, Pattern, Schedule};
use crate::result::facts::CaseNote;
use crate::result::{
    CacheLimitInfo, CaseResult, Latency, Measurement, RepetitionControl, RunResult,
};
use crate::run::cgroup::CacheLimit;
use crate::run::progress::{rep_line, RepTag};
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
/// job as the method will run it (synchronous methods at depth 1).
pub fn progress_name(case: &Case) -> String {
    let mut c = case_result(case);
    if !case.method.is_async() {
        c.queue_depth = 1;
    }
    // A job file's label: shown, not obeyed, on the progress line.
    let name = format!("{} {}", c.name(), c.ran_label());
    crate::model::untrusted::visible(&name).into_owned()
}

/// What a run carries from job to job.
#[derive(Debug)]
pub struct Shared<'r> {
    pub target: Option<&'r Target>,
    pub probes: &'r [MethodStatus],
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
}

/// The progress line's time left: `, about 2 min 10 s left`.
pub fn left_text(left: std::time::Duration) -> String {
    format!(", about {} left", crate::model::units::fmt_wall(left))
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
    /// Wall time of its repetitions so far, set-up included.
    elapsed_ns: u64,
    /// The longest final flush of its write repetitions so far: the room
    /// the case timeout keeps for the next one's.
    flush_ns: u64,
    end: Option<ArmEnd>,
}

/// After a Ctrl-C, the time a job's end may spend merging its cases'
/// latencies before the exit.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

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
        let mut arms: Vec<Arm> = Vec::new();
        for &case in cases {
            let mut cr = self.prepare_case(case, sh);
            cr.skipped = self.ranks.agree_skip(cr.skipped);
            let idx = result.cases.len();
            let runs = cr.skipped.is_none();
            result.cases.push(cr);
            if runs {
                // `direct randread 4k Q1T1`: the job as this method runs it.
                let name = progress_name(case);
                let live = self
                    .progress
                    .is_enabled()
                    .then(|| Live::new(case.threads.max(1) as usize, bar.clone(), name.clone()));
                arms.push(Arm {
                    case,
                    at: self.plan_index(case),
                    idx,
                    name,
                    live,
                    complete: None,
                    cut: None,
                    elapsed_ns: 0,
                    flush_ns: 0,
                    end: None,
                });
            }
        }
        let interleaved = self.plan.schedule == Schedule::Interleaved;
        // Adaptive jobs try to reach the rounds a verdict among their real
        // methods needs to make a call (6 for two, 8 for seven), when they
        // fit within twice their budget (`VERDICT_GRACE`).
        let real = arms.iter().filter(|a| !a.case.method.is_null()).count();
        let rule = self.plan.stop_rule().map(|mut r| {
            if real >= 2 && interleaved {
                let alpha = crate::stats::verdict_alpha(real);
                r.wanted_reps = r.min_reps.max(crate::stats::min_rounds(alpha));
            }
            r
        });
        let sched = repeat::Schedule {
            fixed: self.plan.repeat,
            rule,
            warmup: self.plan.warmup,
            seed: self.plan.order_seed ^ (job_no as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            round_base: sh.rounds,
            case_timeout_ns: self.plan.case_timeout.map(|d| d.as_nanos() as u64),
        };
        let mut fatal: Option<anyhow::Error> = None;
        let mut last_round = 0;
        let end = repeat::run_job(arms.len(), &sched, |call| {
            if call.round > 1 && call.round != last_round {
                // A round is over: the JSON gets it now (a Ctrl-C skips
                // it: the job's end summarizes every case anyway).
                for a in &arms {
                    if self.stop.load(Ordering::Relaxed) {
                        return RepOutcome::Abort;
                    }
                    summarize(&mut result.cases[a.idx], a, true);
                }
                name_paths(result, target);
                // Rank 0 alone writes: its failure is every rank's.
                if let Err(e) = self.ranks.agree(on_case(result)) {
                    fatal = Some(e);
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
            bar.set_prefix(left_text(sh.eta.left()));
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
            let cr = &mut result.cases[a.idx];
            let merge = !self.stop.load(Ordering::Relaxed) || t_end.elapsed() < STOP_GRACE;
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
        // The time left, with what this job measured.
        let first = result.cases.len() - cases.len();
        for (k, &case) in cases.iter().enumerate() {
            let bw = result.cases[first + k]
                .summary
                .as_ref()
                .map(|s| s.bw_bytes_per_s);
            sh.eta.finished(self.plan, self.plan_index(case), bw);
        }
        bar.set_prefix(left_text(sh.eta.left()));
        bar.inc(cases.len() as u64);
        Ok(interrupted)
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

    /// A case's result before its first repetition, skipped already when
    /// it cannot run (its method unusable here, or a cache limit too small
    /// for its own memory).
    pub(super) fn prepare_case(&self, case: &Case, sh: &Shared<'_>) -> CaseResult {
        let plan = self.plan;
        let mut cr = case_result(case);
        if let (Some(span), Some(t)) = (case.span, sh.target) {
            // What the case really addressed: capped at the file, and for
            // requests whole blocks of it (a copy copies the bytes).
            let capped = span.min(t.size());
            cr.span_bytes = Some(if case.pattern == Pattern::Copy {
                capped
            } else {
                capped / case.block_size * case.block_size
            });
            if capped < span {
                cr.facts.push(CaseNote::SpanCapped {
                    span_bytes: span,
                    file_bytes: capped,
                });
            }
        }
        // Under the cap, the process's own memory (thread stacks, I/O
        // buffers, iopath itself) is charged too: a cap that cannot hold
        // it would have the kernel kill iopath mid-run, so such a case is
        // skipped with the reason instead.
        let depth = if case.method.is_async() {
            u64::from(case.queue_depth_requested.max(1))
        } else {
            1
        };
        let threads = u64::from(case.threads.max(1));
        // The user-space caches are memory the process holds, and
        // without swap the kernel cannot take it back: count them.
        let span = sh.target.map_or(0, |t| t.size());
        let caches = match case.method {
            Method::Ucache => plan.ucache_size,
            // uffd: one region per file, its page tables and books.
            Method::Uffd | Method::UffdWp => plan.ucache_size + span / 512,
            _ => 0,
        };
        // On a file system in memory (tmpfs, ramfs) the pages a case adds
        // to a file are memory the cap cannot reclaim (no swap to push
        // them to): the copy's destination, the holes a write fills in a
        // sparse file. Under a cap too small for them the kernel's OOM
        // killer takes iopath (SIGKILL: no message, the case in flight
        // lost): skipped instead, like the case's own memory.
        let in_memory = sh
            .target
            .map_or(0, |t| new_pages_in_memory(t, case, memory_fs(t.place())));
        let own = threads * (depth * case.block_size * 2 + (2 << 20)) + caches + (24 << 20);
        if let Some(l) = sh
            .limit
            .as_ref()
            .filter(|l| case.cache_limited && l.limit < own + in_memory)
        {
            cr.skipped = Some(if in_memory > 0 {
                format!(
                    "--cache-limit {} cannot hold what this case writes to a file system in memory ({} of new {} pages on {}, which cannot be reclaimed, plus about {} of its own): the kernel would OOM-kill the run: give a larger --cache-limit, or a --dir on a disk",
                    fmt_bytes(l.limit),
                    fmt_bytes(in_memory),
                    if case.pattern == Pattern::Copy {
                        "copy"
                    } else {
                        "file"
                    },
                    sh.target
                        .and_then(|t| iopath_io::sys::fs_type_of(t.place()).ok())
                        .unwrap_or("tmpfs"),
                    fmt_bytes(own)
                )
            } else {
                format!(
                    "--cache-limit {} cannot hold this case's own memory (about {}: {}, their buffers{} and iopath itself); the kernel would kill the run: give a larger --cache-limit{}",
                    fmt_bytes(l.limit),
                    fmt_bytes(own),
                    crate::model::units::n_of(case.threads, "thread", "threads"),
                    if caches > 0 { ", its cache" } else { "" },
                    if caches > 0 { " or a smaller --ucache-size" } else { "" }
                )
            });
            return cr;
        }
        let status = sh.probes.iter().find(|p| p.method == case.method);
        if let Some(reason) = status.and_then(|s| s.unusable.clone()) {
            cr.skipped = Some(reason);
            return cr;
        }
        if let Some(why) = sh.target.and_then(|t| super::prepare::misaligned(case, t)) {
            cr.skipped = Some(why);
            return cr;
        }
        if let Some(s) = status {
            cr.facts.extend(
                s.notes
                    .iter()
                    .filter(|n| n.contains("tmpfs"))
                    .map(|n| CaseNote::Engine { text: n.clone() }),
            );
        }
        cr
    }

    /// One repetition of one arm, booked into its case.
    fn one_repetition(
        &self,
        arm: &mut Arm<'_>,
        warmup: bool,
        book: Book,
        sh: &mut Shared<'_>,
        result: &mut RunResult,
        bar: &indicatif::ProgressBar,
    ) -> Result<RepOutcome> {
        let (plan, case) = (self.plan, arm.case);
        let t0 = Instant::now();
        if let Some(l) = &arm.live {
            // The time left ticks down during the repetition.
            l.set_left(sh.eta.clock(arm.at));
        }
        // uffd's workers share one region per file, as ucache's share one
        // cache: the case's budget is the region's.
        iopath_io::engines::uffd::configure(plan.ucache_size.max(4096));
        let limited = case.cache_limited;
        if let Some(l) = sh.limit.as_mut().filter(|_| limited) {
            self.ranks.agree(l.enter().with_context(|| {
                format!("--cache-limit: cannot move iopath into {}", l.dir.display())
            }))?;
        }
        let neighbour = plan.neighbour && !warmup;
        let (rep, prep_notes, beside) = self.prepared_repetition(
            arm,
            warmup,
            neighbour,
            book.budget,
            sh,
            &result.cases[arm.idx],
        );
        let rep = match (super::failure::lost_writes(), rep) {
            (None, rep) => rep,
            (Some(lost), Err(RepError::Fail(e))) => Err(RepError::Fail(format!("{e}; {lost}"))),
            (Some(lost), _) => Err(RepError::Fail(lost)),
        };
        let rep = self.ranks.combine(rep, result, &arm.name, book.seq, warmup);
        if let Some(t) = sh.target.filter(|_| case.pattern.writes()) {
            // Every rank's writes are done (`combine`): the file as they
            // left it is what the checks compare with.
            t.settle();
        }
        if rep.is_ok() {
            result.cases[arm.idx].neighbour.extend(beside);
        }
        if let Some(l) = sh.limit.as_mut() {
            // Left in the cgroup, later cases would run capped unseen.
            self.ranks.agree(l.leave().with_context(|| {
                format!(
                    "--cache-limit: cannot move iopath back out of {}",
                    l.dir.display()
                )
            }))?;
            result.config.cache_limit = Some(limit_info(l));
        }
        let cr = &mut result.cases[arm.idx];
        let done = cr.repetitions.len();
        for n in prep_notes {
            if !cr.facts.contains(&n) {
                cr.facts.push(n);
            }
        }
        let outcome = match rep {
            Ok(super::RepOk {
                measurement: mut m,
                engine_notes,
                facts,
                queue_depth: qd,
                placement: placed,
                hist,
                verified,
            }) => {
                cr.queue_depth = qd;
                arm.flush_ns = arm.flush_ns.max(verified.flush_ns);
                if self.plan.verify {
                    *cr.verified_bytes.get_or_insert(0) += verified.bytes;
                    *cr.verify_ns.get_or_insert(0) += verified.ns;
                }
                if cr.placement.is_none() {
                    cr.placement = Some(placed);
                }
                add_notes(cr, engine_notes, facts);
                m.warmup = warmup;
                (m.round, m.seq) = (book.round, Some(book.seq));
                if !warmup {
                    let into = if m.interrupted {
                        &mut arm.cut
                    } else {
                        &mut arm.complete
                    };
                    let _ = into.get_or_insert_with(histogram).add(&hist);
                }
                let (stop, bw, capped) = (m.interrupted, m.bw_bytes_per_s, m.capped.is_some());
                let mut tag = rep_tag(&cr.repetitions, warmup, self.plan);
                tag.n += 1;
                bar.set_message(rep_line(
                    &arm.name,
                    tag,
                    m.bw_bytes_per_s / (1024.0 * 1024.0),
                    m.iops,
                    false,
                ));
                cr.repetitions.push(m);
                let wall_ns = t0.elapsed().as_nanos() as u64;
                if stop {
                    RepOutcome::Abort
                } else if capped {
                    RepOutcome::Capped { bw, wall_ns }
                } else {
                    RepOutcome::Done { bw, wall_ns }
                }
            }
            // After good repetitions, a refusal ends the case but keeps
            // what it measured, and says why. (A failure is an error
            // whenever it comes: the run exits 1, and the repetitions
            // before it stay in the JSON.)
            Err(RepError::Skip(reason)) if done > 0 => {
                cr.facts.push(CaseNote::RepetitionRefused {
                    repetition: done as u32 + 1,
                    reason,
                    earlier: done as u32,
                });
                RepOutcome::Stop
            }
            Err(RepError::Skip(reason)) => {
                cr.skipped = Some(reason);
                RepOutcome::Stop
            }
            Err(RepError::Fail(e)) => {
                cr.error = Some(e);
                RepOutcome::Stop
            }
        };
        arm.elapsed_ns += t0.elapsed().as_nanos() as u64;
        if outcome == RepOutcome::Stop && self.stop.load(Ordering::Relaxed) {
            return Ok(RepOutcome::Abort);
        }
        Ok(self.ranks.agree_outcome(outcome))
    }

    /// Set-up (sparse truncation, cache state) and the repetition itself,
    /// retried for a while when a method that worked is refused. With
    /// `neighbour`, the neighbour is measured alone after the set-up and
    /// runs beside the repetition only ([`super::neighbour::Beside`]).
    /// Returns notes for the case beside the outcome.
    fn prepared_repetition(
        &self,
        arm: &Arm<'_>,
        warmup: bool,
        neighbour: bool,
        budget: Option<std::time::Duration>,
        sh: &mut Shared<'_>,
        cr: &CaseResult,
    ) -> (
        Result<super::RepOk, RepError>,
        Vec<CaseNote>,
        Option<crate::result::neighbour::NeighbourRep>,
    ) {
        let (case, target) = (arm.case, sh.target);
        let t0 = Instant::now();
        let mut notes = Vec::new();
        // Another process changed the file since the last repetition: none
        // starts (the sparse truncation below would hide a truncation).
        if let Some(e) = super::changed::before(target, &progress_name(case)) {
            self.ranks.barrier();
            return (Err(e), notes, None);
        }
        if let Some(t) = target.filter(|t| t.info.sparse || case.sparse) {
            if let Err(e) = t.retruncate() {
                self.ranks.barrier();
                return (Err(RepError::Fail(format!("{e:#}"))), notes, None);
            }
        }
        if let Some(t) = target {
            let cache = case.cache.unwrap_or(self.plan.cache);
            if let Err(e) = set_cache_state(t, cache, self.plan.drop_caches) {
                notes.push(CaseNote::CacheNotMade {
                    cache: cache.name().into(),
                    error: format!("{e:#}"),
                });
            }
        }
        let beside = neighbour
            .then(|| super::neighbour::Beside::start(self.plan, sh, &mut notes))
            .flatten();
        // Every rank made its cache state: all start together.
        self.ranks.barrier();
        if let Some(t) = target.filter(|t| t.info.sparse || case.sparse) {
            // Every rank's truncation is done: the file as they left it is
            // what the checks compare with.
            t.settle();
        }
        // A method that worked in earlier repetitions and is now refused
        // (io_uring_setup's ENOMEM while the kernel still holds closed
        // rings' memory against the user's RLIMIT_MEMLOCK) is retried for
        // up to a second.
        let mut attempt = 0;
        let mut tag = rep_tag(&cr.repetitions, warmup, self.plan);
        tag.n += 1;
        loop {
            if let Some(l) = &arm.live {
                l.begin(tag);
            }
            // Set-up (cache state, retries) comes out of the case's budget,
            // and a write keeps room for its flush, as long as the longest
            // so far (a flush cannot be cut).
            let cap = budget.map(|b| {
                cap_for_work(
                    b,
                    t0.elapsed(),
                    std::time::Duration::from_nanos(arm.flush_ns),
                )
            });
            let rep = live::with_ticker(arm.live.as_ref(), || {
                self.run_repetition(case, target, sh.obs, arm.live.as_ref(), sh.seq, cap)
            });
            if let Some(l) = &arm.live {
                l.end();
            }
            match rep {
                Err(RepError::Skip(_))
                    if !cr.repetitions.is_empty()
                        && attempt < SKIP_RETRIES
                        && !self.stop.load(Ordering::Relaxed) =>
                {
                    attempt += 1;
                    std::thread::sleep(SKIP_RETRY_WAIT);
                }
                other => return (other, notes, beside.map(super::neighbour::Beside::stop)),
            }
        }
    }
}

/// What is left of a case timeout's `budget` for a repetition's work,
/// `spent` into it (its set-up), keeping `flush` for its final flush: never
/// less than 1 ms (the first request is always issued).
pub fn cap_for_work(
    budget: std::time::Duration,
    spent: std::time::Duration,
    flush: std::time::Duration,
) -> std::time::Duration {
    budget
        .saturating_sub(spent)
        .saturating_sub(flush)
        .max(std::time::Duration::from_millis(1))
}

/// True when the file system of `at` keeps its files in memory (tmpfs,
/// ramfs): their pages are charged to the memory cgroup of whoever adds
/// them, and without swap never reclaimed.
fn memory_fs(at: &std::path::Path) -> bool {
    matches!(iopath_io::sys::fs_type_of(at), Ok("tmpfs" | "ramfs"))
}

/// Bytes of new pages `case` adds to files beside or in the target when
/// they are in memory (`in_memory`): the copy's destination (the bytes
/// copied), or for writes to a sparse file the span they may fill. 0 on a
/// disk, and for writes over a prefilled file (its pages exist already).
pub fn new_pages_in_memory(t: &Target, case: &Case, in_memory: bool) -> u64 {
    if !in_memory || t.info.kind == "block-device" {
        return 0;
    }
    let span = case.span.map_or(t.size(), |s| s.min(t.size()));
    let adds =
        case.pattern == Pattern::Copy || (case.pattern.writes() && (t.info.sparse || case.sparse));
    if adds {
        span
    } else {
        0
    }
}

/// Where a repetition stands in the run.
#[derive(Debug, Clone, Copy)]
struct Book {
    round: Option<u32>,
    seq: u32,
    /// What is left of the case timeout for this arm.
    budget: Option<std::time::Duration>,
}

/// How many repetitions of its kind (warm-up or measured) are done, for
/// the progress line.
fn rep_tag(done: &[Measurement], warmup: bool, plan: &crate::plan::Plan) -> RepTag {
    let n = done.iter().filter(|m| m.warmup == warmup).count() as u32;
    RepTag {
        warmup,
        n,
        of: if warmup {
            Some(plan.warmup)
        } else {
            plan.repeat
        },
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
    }
    let stats = crate::stats::CaseStats::of(&basis);
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
    });
}

/// A repetition's notes into its case's, each once: the engines' own
/// (the mapping's address changes every repetition: the first one stands
/// for them) and the runner's facts.
fn add_notes(cr: &mut CaseResult, engine_notes: Vec<String>, facts: Vec<CaseNote>) {
    let mapping = iopath_io::engines::mmap::MAPPING_NOTE_PREFIX;
    for text in engine_notes {
        let again = text.starts_with(mapping)
            && cr
                .facts
                .iter()
                .any(|o| matches!(o, CaseNote::Engine { text } if text.starts_with(mapping)));
        let n = CaseNote::Engine { text };
        if !again && !cr.facts.contains(&n) {
            cr.facts.push(n);
        }
    }
    for n in facts {
        if !cr.facts.contains(&n) {
            cr.facts.push(n);
        }
    }
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
    use iopath_io::Method;

    /// Regression (issue 18, "runs" item 4): `--case-timeout` stopped a
    /// write's issuing at the cap, and its flush (inside the timed
    /// interval) then ran past it. The work now gets the cap less its
    /// set-up and the longest flush seen so far, so that the whole timed
    /// interval fits.
    #[test]
    fn the_case_timeout_keeps_room_for_a_writes_flush() {
        use std::time::Duration;
        let ms = Duration::from_millis;
        assert_eq!(cap_for_work(ms(10_000), ms(200), ms(0)), ms(9_800));
        assert_eq!(cap_for_work(ms(10_000), ms(200), ms(1_500)), ms(8_300));
        // A flush longer than what is left: the first request still goes.
        assert_eq!(cap_for_work(ms(1_000), ms(200), ms(5_000)), ms(1));
        assert_eq!(cap_for_work(ms(1_000), ms(2_000), ms(0)), ms(1));
    }

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
}

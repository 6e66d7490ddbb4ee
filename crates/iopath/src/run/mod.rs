//! Runs a [`Plan`]: prepare the target, probe every method on it, then run
//! each case's repetitions and hand each finished case to the caller (which
//! rewrites the JSON), so nothing measured is lost if a later case fails or
//! the user presses Ctrl-C.
//!
//! Per repetition: write back and drop the target's cached pages (cold
//! cache), open one engine per worker thread (outside the timed interval),
//! start all workers together, and time from the first start to the last
//! close.
//!
//! While a case runs with the progress display shown, a ticker thread puts
//! the running repetition's live MiB/s and IOPS on its line ([`live`]).

mod case_notes;
pub mod cgroup;
mod changed;
pub mod copy;
mod costs;
mod cpu_share;
pub mod estimate;
pub mod event;
pub mod failure;
pub mod guard;
pub mod job;
pub mod latency_split;
pub mod live;
mod merge;
pub mod mpi;
mod neighbour;
pub mod observe;
pub mod peers;
mod prepare;
pub mod progress;
pub mod ranks;
mod ranks_file;
mod ranks_sum;
pub mod repeat;
mod repetition;
pub mod replay;
pub mod target;
pub mod verify;
pub mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Result;
use iopath_io::Method;

use crate::plan::{Case, Pattern, Plan};
use crate::result::mpi::MpiNote;
use crate::result::skip::Skip;
use crate::result::{CaseResult, ProbeEntry, RunConfig, RunResult, Tool, SCHEMA_VERSION};
use crate::run::cgroup::CacheLimit;
use crate::run::progress::Progress;
use crate::run::target::Target;
use crate::system::sysinfo::{self, System};

pub use event::{Event, Events};
use merge::merge;
use observe::Observer;
pub use prepare::probe;
use prepare::{check_alignment, check_fits, check_memory, set_cache_state};
pub use repetition::{RepError, RepOk, Verified};

/// Everything a run needs besides the plan.
#[derive(Debug)]
pub struct Runner<'a> {
    pub plan: &'a Plan,
    pub command: String,
    pub stop: &'a AtomicBool,
    pub progress: Progress,
    /// The other ranks of an MPI run ([`ranks::Ranks::alone`] without).
    pub ranks: &'a ranks::Ranks<'a>,
    /// Where the run's events go ([`Event`]): the caller words them.
    pub events: Events<'a>,
}

/// What a run sets up on its target before the first case.
struct SetUp {
    system: System,
    probes: Vec<prepare::Probed>,
    obs: Observer,
    limit: Option<CacheLimit>,
    /// What differs between ranks (`mpi.facts`).
    mpi_notes: Vec<MpiNote>,
}

impl Runner<'_> {
    /// Run the plan. `on_case` sees the result after every case (to rewrite
    /// the JSON). Returns the result even when interrupted.
    pub fn run(&self, on_case: &mut dyn FnMut(&mut RunResult) -> Result<()>) -> Result<RunResult> {
        let plan = self.plan;
        let t_run = Instant::now();
        // Before any I/O: how long this will take.
        let (file_size, prefill) = estimate::planned_file(plan);
        let eta = estimate::Eta::new(
            plan,
            file_size,
            prefill,
            job::jobs(&plan.cases, plan.schedule),
        );
        let estimated = eta.estimate().total();
        // Bad input is said before the estimate: a run that cannot start
        // promises no duration.
        self.check_before_start()?;
        self.events.emit(Event::Estimate {
            estimate: eta.estimate(),
            plan,
        });
        let started_at = sysinfo::now_rfc3339();
        let (target, shared_file) = self.ranks.agree(self.prepare_target())?;
        let scratch = self.replay_scratch()?;
        let SetUp {
            system,
            probes,
            obs,
            mut limit,
            mpi_notes,
        } = self.set_up(target.as_ref(), scratch.as_ref())?;
        let mut result = self.new_result(started_at, system, target.as_ref(), &probes);
        result.config.cache_limit = limit.as_ref().map(job::limit_info);
        result.config.latency_split_fallback = obs.split.fallback();
        result.config.estimated_ns = Some(estimated.as_nanos() as u64);
        if let Some(i) = result.mpi.as_mut() {
            i.facts = mpi_notes;
            for n in &i.facts {
                self.events.emit(Event::RankNote(n));
            }
        }
        let mut shared = job::Shared {
            target: target.as_ref(),
            probes: &probes,
            obs: &obs,
            limit: &mut limit,
            seq: 0,
            rounds: 0,
            hot: None,
            eta,
            budget: job::RunBudget::new(plan, t_run),
            replay: scratch.as_ref(),
        };
        let first = Started {
            at: t_run,
            estimated,
        };
        self.run_jobs(&mut shared, &mut result, on_case, first)?;
        result.finished_at = Some(sysinfo::now_rfc3339());
        self.ranks.agree(on_case(&mut result))?;
        drop(target);
        drop(shared_file);
        Ok(result)
    }

    /// `--replay`: the trace's files made in the run's directory (after
    /// checking the room for them).
    fn replay_scratch(&self) -> Result<Option<replay::Scratch>> {
        let Some(source) = &self.plan.replay else {
            return Ok(None);
        };
        let dir = match &self.plan.target {
            crate::plan::TargetSpec::TempIn(d) => d.clone(),
            crate::plan::TargetSpec::File { path, .. } => {
                return Err(crate::plan::UsageError(format!(
                    "--replay makes the trace's files in a directory (--dir), not at {}",
                    path.display()
                ))
                .into())
            }
        };
        replay::Scratch::create(source.clone(), &dir, self.plan.seed, self.stop).map(Some)
    }

    /// What can refuse the run before any I/O: memory, room for the file,
    /// an existing file that would be written.
    fn check_before_start(&self) -> Result<()> {
        let plan = self.plan;
        self.ranks
            .agree(check_memory(plan, &prepare::Room::now()))?;
        if let (Some(r), crate::plan::TargetSpec::TempIn(dir)) = (&plan.replay, &plan.target) {
            self.ranks.agree(replay::check_room(r, dir))?;
        }
        if plan.needs_file() {
            let copies = plan.cases.iter().any(|c| c.pattern == Pattern::Copy);
            self.ranks.agree(crate::run::target::check_room(
                &plan.target,
                plan.size,
                copies,
                self.events,
            ))?;
            self.ranks.agree(crate::run::target::check_existing(
                &plan.target,
                plan.writes(),
            ))?;
        }
        Ok(())
    }

    /// The system described, the methods probed on the target, the
    /// observer and `--cache-limit`'s cgroup made, the target checked for
    /// the plan.
    fn set_up(&self, target: Option<&Target>, scratch: Option<&replay::Scratch>) -> Result<SetUp> {
        let plan = self.plan;
        let at = match (target, &plan.target) {
            (Some(t), _) => t.place().to_path_buf(),
            (None, crate::plan::TargetSpec::TempIn(d)) => d.clone(),
            (None, crate::plan::TargetSpec::File { path, .. }) => path.clone(),
        };
        let mut system = sysinfo::collect(&at);
        if target.is_none() && scratch.is_none() {
            // No file: no disk is counted (as before any walk).
            system.device_stack = None;
        }
        // Ranks whose targets differ (rank 1 on tmpfs): said in the result.
        let mut mpi_notes: Vec<MpiNote> = self
            .ranks
            .differences(&system.target_text())
            .into_iter()
            .collect();
        let probes = self.ranks.agree_probes(self.probe_all(target, scratch));
        // The user-space caches' budgets (ucache pages, uffd resident pages).
        iopath_io::engines::ucache::configure(plan.ucache_size, plan.ucache_page as usize);
        // The disks to count: the walk `collect` made.
        let stack = system.device_stack.clone().unwrap_or_default();
        let mut obs = Observer::new(target, stack);
        obs.open_noatime(plan.noatime);
        // The split's disks: the walk's top too, which a loop device over
        // tmpfs has without a leaf to count.
        let walked = target.map(|_| {
            crate::system::metrics::blockdev::DeviceStack::of(&at, std::path::Path::new("/sys"))
        });
        obs.split = latency_split::Split::start(plan.latency_split, &walked.unwrap_or_default());
        // `--cache-limit`: a cgroup of its own, removed when `run` returns
        // (its Drop), whatever the way out. Only when some case runs under
        // it (a preset marks its cases).
        let limit = plan
            .cache_limit
            .filter(|_| plan.cases.iter().any(|c| c.cache_limited))
            .map(|l| CacheLimit::create(l, self.events))
            .transpose();
        let mut limit = self.ranks.agree(limit.map_err(anyhow::Error::from))?;
        if let Some(l) = &mut limit {
            l.write_back_in(&at);
            obs.use_cgroup(l.as_mem_cgroup());
        }
        let sharing = self.ranks.sharing();
        if let Some(t) = target {
            self.ranks.agree(
                check_alignment(plan, &probes, t).and_then(|()| check_fits(plan, t, sharing)),
            )?;
            mpi_notes.extend(
                (sharing > 1)
                    .then(|| prepare::unused_tail(plan, t, sharing))
                    .flatten(),
            );
        }
        Ok(SetUp {
            system,
            probes,
            obs,
            limit,
            mpi_notes,
        })
    }

    /// The run's result before its first case: what ran where, how.
    fn new_result(
        &self,
        started_at: String,
        system: System,
        target: Option<&Target>,
        probes: &[prepare::Probed],
    ) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "iopath".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            started_at,
            finished_at: None,
            command: self.command.clone(),
            interrupted: false,
            system,
            target: target.map(|t| t.info.clone()),
            config: run_config(self.plan),
            probe: probes
                .iter()
                .map(|p| ProbeEntry {
                    method: p.method.name().into(),
                    usable: p.usable(),
                    reason: None,
                    skip: p.unusable.clone(),
                    notes: p.notes.clone(),
                })
                .collect(),
            cases: Vec::new(),
            warnings: Vec::new(),
            verdicts: Vec::new(),
            mpi: self.ranks.info(),
            replay: self.plan.replay.as_deref().map(replay::info),
        }
    }

    /// Every job of the plan in turn, into `result`; cases never reached
    /// after a stop stay in it, saying so. The result lists the cases in
    /// the plan's order.
    fn run_jobs(
        &self,
        shared: &mut job::Shared<'_>,
        result: &mut RunResult,
        on_case: &mut dyn FnMut(&mut RunResult) -> Result<()>,
        first: Started,
    ) -> Result<()> {
        let plan = self.plan;
        let bar = self.progress.cases(plan.cases.len() as u64);
        self.book_refused(shared);
        bar.set_prefix(self.progress.left(shared.eta.left()));
        // The plan index of every case result, in the order they are added.
        let mut placed: Vec<usize> = Vec::with_capacity(plan.cases.len());
        for (job_no, members) in job::jobs(&plan.cases, plan.schedule)
            .into_iter()
            .enumerate()
        {
            placed.extend(&members);
            if self.stop.load(Ordering::Relaxed) {
                result.interrupted = true;
            }
            let cases: Vec<&Case> = members.iter().map(|&i| &plan.cases[i]).collect();
            if result.interrupted {
                // Cases never reached stay in the result, saying so, so that
                // an interrupted run's verdicts can name what is missing.
                for c in cases {
                    result.cases.push(self.not_reached(c, shared));
                }
                continue;
            }
            bar.set_message(job::progress_name(cases[0]));
            if self.run_job(job_no, &cases, shared, result, on_case, &bar)? {
                result.interrupted = true;
            }
            if job_no == 0 && !self.progress.is_enabled() {
                self.revise(&first, shared.eta.left());
            }
        }
        bar.finish_and_clear();
        in_plan_order(result, placed);
        Ok(())
    }

    /// Cases refused before any I/O (the probe's refusals, O_DIRECT
    /// alignment, the cache limit) take no time: the estimate, made
    /// before the target existed, counted them.
    fn book_refused(&self, shared: &mut job::Shared<'_>) {
        let plan = self.plan;
        let refused: Vec<usize> = (0..plan.cases.len())
            .filter(|&i| self.prepare_case(&plan.cases[i], shared).skip.is_some())
            .collect();
        if refused.is_empty() {
            return;
        }
        for &i in &refused {
            shared.eta.finished(plan, i, None);
        }
        self.events.emit(Event::Refused {
            cases: refused.len(),
            left: shared.eta.left(),
        });
    }

    /// A case the run did not reach: a case refused before any I/O keeps
    /// its own reason (it would not have run either way).
    fn not_reached(&self, c: &Case, shared: &job::Shared<'_>) -> CaseResult {
        let refused = self.prepare_case(c, shared);
        if refused.skip.is_some() {
            return refused;
        }
        let mut cr = case_result(c);
        cr.not_reached = true;
        cr.skip = Some(Skip::NotReached {
            cause: crate::stop_cause().to_string(),
        });
        cr
    }

    /// Without a progress line, say once what the first measurements
    /// changed, when they changed it much (nothing to say when the first
    /// job was the run).
    fn revise(&self, first: &Started, left: std::time::Duration) {
        let spent = first.at.elapsed();
        let again = (spent + left).as_secs_f64();
        let was = first.estimated.as_secs_f64();
        let far = (again - was).abs() > 0.25 * was && (again - was).abs() > 10.0;
        if far && left.as_secs_f64() >= 1.0 {
            self.events.emit(Event::Revised { left, spent });
        }
    }

    fn probe_all(
        &self,
        target: Option<&Target>,
        scratch: Option<&replay::Scratch>,
    ) -> Vec<prepare::Probed> {
        self.plan
            .methods()
            .into_iter()
            .map(|m| match (m, target) {
                (Method::Null, _) => prepare::Probed {
                    method: m,
                    unusable: self.plan.verify.then_some(Skip::NullUnderVerify),
                    notes: Vec::new(),
                },
                (_, None) => match scratch {
                    // A replay: probed on the largest of its files.
                    Some(s) => s.probe(m),
                    None => prepare::Probed {
                        method: m,
                        unusable: Some(Skip::NoTargetFile),
                        notes: Vec::new(),
                    },
                },
                (_, Some(t)) => {
                    let align = iopath_io::sys::dio_alignment(t.path());
                    let len = align.offset.max(4096) as u64;
                    if t.size() < len {
                        return prepare::Probed {
                            method: m,
                            unusable: Some(Skip::SmallerThanProbe { probe_bytes: len }),
                            notes: Vec::new(),
                        };
                    }
                    probe(m, t, len as usize, self.plan.noatime)
                }
            })
            .collect()
    }
}

/// When the run started, and the estimate it started with.
struct Started {
    at: Instant,
    estimated: std::time::Duration,
}

/// Jobs gather cases from all over the plan (a preset's groups, the
/// methods of one job listed apart): the result lists them in the plan's
/// order, as `presets show` and the job file do. `placed`: the plan index
/// of every case result, in the order they were added.
fn in_plan_order(result: &mut RunResult, placed: Vec<usize>) {
    if placed.len() == result.cases.len() {
        let mut by_plan: Vec<(usize, CaseResult)> =
            placed.into_iter().zip(result.cases.drain(..)).collect();
        by_plan.sort_by_key(|(i, _)| *i);
        result.cases = by_plan.into_iter().map(|(_, c)| c).collect();
    }
}

/// The run's configuration as the result records it (the cache limit
/// and the estimate are added once known).
fn run_config(plan: &Plan) -> RunConfig {
    RunConfig {
        preset: plan.preset.clone(),
        job_file: plan.job_file.as_ref().map(|p| p.display().to_string()),
        layout: (plan.layout != crate::model::job::Layout::Table).then_some(plan.layout),
        ignored_options: plan.ignored_options.clone(),
        whole_pass: plan.whole_pass && plan.time.is_none(),
        cache_limit: None,
        latency_split_fallback: None,
        time_limit_ns: time_limit(plan).map(|d| d.as_nanos() as u64),
        io_size_bytes: plan.io_size,
        repeat: plan.repeat,
        ci_target: plan.repeat.is_none().then_some(plan.ci_target),
        max_time_ns: plan
            .repeat
            .is_none()
            .then_some(plan.max_time.as_nanos() as u64),
        case_timeout_ns: plan.case_timeout.map(|d| d.as_nanos() as u64),
        estimated_ns: None,
        warmup: plan.warmup,
        schedule: Some(plan.schedule.name().into()),
        order_seed: (plan.schedule == crate::plan::Schedule::Interleaved)
            .then_some(plan.order_seed),
        interval_ns: plan.interval.as_nanos() as u64,
        seed: plan.seed,
        cache: plan.cache,
        data: plan.data.name(),
        conditions: Some(conditions(plan)),
    }
}

/// The conditions the plan's cases run under ([`Conditions`]).
///
/// [`Conditions`]: crate::result::conditions::Conditions
fn conditions(plan: &Plan) -> crate::result::conditions::Conditions {
    use crate::result::conditions::{CachedPasses, Conditions, RandomOffsets};
    let mut buffers: Vec<iopath_io::BufferBacking> = plan.cases.iter().map(|c| c.buffers).collect();
    buffers.sort();
    buffers.dedup();
    // A caching method's sequential case under a time limit: does it start
    // over ([`Plan::wraps`])? The first such case says; with none, the
    // run's cache state would.
    let cached = plan.cases.iter().find(|c| {
        crate::model::method_caches(c.method)
            && !c.pattern.is_random()
            && plan.case_time_limit(c).is_some()
    });
    let cached_passes = match cached {
        Some(c) if plan.wraps(c) => CachedPasses::Repeated,
        Some(_) => CachedPasses::One,
        None if plan.time_limit().is_none() => CachedPasses::NoTimeLimit,
        None if plan.cache == crate::model::CacheState::Warm => CachedPasses::Repeated,
        None => CachedPasses::One,
    };
    let mut sync_every: Vec<String> = Vec::new();
    for e in plan.cases.iter().filter_map(|c| c.sync_every) {
        let w = crate::model::words::Word::word(&e);
        if !sync_every.contains(&w) {
            sync_every.push(w);
        }
    }
    Conditions {
        buffers: buffers.iter().map(|b| b.name().to_string()).collect(),
        uring_registered: true,
        cached_passes,
        random_offsets: RandomOffsets::WithReplacement,
        sync_every,
        noatime: plan.noatime,
    }
}

/// How often, and how long apart, a repetition refused after earlier ones
/// worked is tried again.
const SKIP_RETRIES: u32 = 20;
const SKIP_RETRY_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// The time limit of a repetition ([`Plan::time_limit`]).
pub fn time_limit(plan: &Plan) -> Option<std::time::Duration> {
    plan.time_limit()
}

/// A case's result before it runs: what it is, nothing measured.
fn case_result(case: &Case) -> CaseResult {
    CaseResult {
        method: case.method_name().into(),
        arm: (case.arm > 1).then_some(case.arm),
        pattern: case.pattern,
        block_size: case.block_size,
        queue_depth: case.queue_depth_requested,
        queue_depth_requested: case.queue_depth_requested,
        threads: case.threads,
        concurrency: case.concurrency,
        pool_threads: case.pool_threads,
        sync: case.sync,
        sync_every: case.sync_every,
        rwmix_read_pct: (case.pattern == Pattern::RandRw).then_some(case.rwmix_read_pct),
        label: case.label.clone(),
        span_bytes: case.span,
        copy_to_user: case.copy_to_user,
        sparse: case.sparse,
        buffers: Some(case.buffers),
        cache: case.cache,
        cache_limited: (!case.cache_limited).then_some(false),
        published: case.published.clone(),
        pair: case.pair.clone(),
        group: case.group.clone(),
        streams: case.streams.iter().map(stream_result).collect(),
        ..CaseResult::default()
    }
}

/// A stream's result before it ran: its workload.
fn stream_result(s: &Case) -> crate::result::streams::StreamResult {
    crate::result::streams::StreamResult {
        name: s.label.clone().unwrap_or_default(),
        pattern: s.pattern,
        block_size: s.block_size,
        queue_depth_requested: s.queue_depth_requested,
        threads: s.threads,
        sync: s.sync,
        sync_every: s.sync_every,
        rwmix_read_pct: (s.pattern == Pattern::RandRw).then_some(s.rwmix_read_pct),
        span_bytes: s.span,
        summary: None,
    }
}

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
mod cpu_share;
pub mod estimate;
pub mod failure;
pub mod guard;
pub mod job;
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
pub mod target;
pub mod verify;
pub mod worker;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use anyhow::Result;
use hdrhistogram::Histogram;
use iopath_io::{EngineError, Method, MethodStatus, OpenSpec};

use crate::plan::{Case, Pattern, Plan};
use crate::result::{
    CaseResult, Measurement, ProbeEntry, RunConfig, RunResult, Tool, SCHEMA_VERSION,
};
use crate::run::progress::Progress;
use crate::run::target::Target;
use crate::system::placement::PlacementResult;
use crate::system::sysinfo;

use live::Live;
use merge::merge;
use observe::{Observer, WorkerCost};
pub use prepare::probe;
use prepare::{check_alignment, check_fits, check_memory, set_cache_state};
use worker::WorkerJob;

/// Everything a run needs besides the plan.
#[derive(Debug)]
pub struct Runner<'a> {
    pub plan: &'a Plan,
    pub command: String,
    pub stop: &'a AtomicBool,
    pub progress: Progress,
    /// The other ranks of an MPI run ([`ranks::Ranks::alone`] without).
    pub ranks: &'a ranks::Ranks<'a>,
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
        self.ranks
            .agree(check_memory(plan, &prepare::Room::now()))?;
        if plan.needs_file() {
            let copies = plan.cases.iter().any(|c| c.pattern == Pattern::Copy);
            self.ranks.agree(crate::run::target::check_room(
                &plan.target,
                plan.size,
                copies,
            ))?;
            self.ranks.agree(crate::run::target::check_existing(
                &plan.target,
                plan.writes(),
            ))?;
        }
        if !self.progress.is_quiet() {
            // The plan's paths and labels come from a job file: shown, not
            // obeyed (`untrusted`).
            let line = format!("iopath: {}", eta.estimate().describe(plan));
            let line = crate::model::untrusted::visible(&line);
            crate::model::untrusted::to_stderr(crate::model::units::wrap(&line, 120, "", "  "));
        }
        let started_at = sysinfo::now_rfc3339();
        let (target, shared_file) = self.ranks.agree(self.prepare_target())?;
        let at = match (&target, &plan.target) {
            (Some(t), _) => t.place().to_path_buf(),
            (None, crate::plan::TargetSpec::TempIn(d)) => d.clone(),
            (None, crate::plan::TargetSpec::File { path, .. }) => path.clone(),
        };
        let mut system = sysinfo::collect(&at);
        if target.is_none() {
            // No file: no disk is counted (as before any walk).
            system.device_stack = None;
        }
        // Ranks whose targets differ (rank 1 on tmpfs): said in the result.
        let mut mpi_notes: Vec<String> = self
            .ranks
            .differences(&system.target_text())
            .into_iter()
            .collect();
        let probes = self.ranks.agree_probes(self.probe_all(target.as_ref()));
        // The user-space caches' budgets (ucache pages, uffd resident pages).
        iopath_io::engines::ucache::configure(plan.ucache_size, plan.ucache_page as usize);
        // The disks to count: the walk `collect` made.
        let stack = system.device_stack.clone().unwrap_or_default();
        let mut obs = Observer::new(target.as_ref(), stack);
        // `--cache-limit`: a cgroup of its own, removed when this function
        // returns (its Drop), whatever the way out.
        // Only when some case runs under it (a preset marks its cases).
        let limit = plan
            .cache_limit
            .filter(|_| plan.cases.iter().any(|c| c.cache_limited))
            .map(crate::run::cgroup::CacheLimit::create)
            .transpose();
        let mut limit = self.ranks.agree(limit.map_err(anyhow::Error::from))?;
        if let Some(l) = &mut limit {
            l.write_back_in(&at);
            obs.use_cgroup(l.as_mem_cgroup());
        }
        let sharing = self.ranks.sharing();
        if let Some(t) = &target {
            self.ranks.agree(
                check_alignment(plan, &probes, t).and_then(|()| check_fits(plan, t, sharing)),
            )?;
            mpi_notes.extend(
                (sharing > 1)
                    .then(|| prepare::unused_tail(plan, t, sharing))
                    .flatten(),
            );
        }

        let mut result = RunResult {
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
            target: target.as_ref().map(|t| t.info.clone()),
            config: RunConfig {
                preset: plan.preset.clone(),
                job_file: plan.job_file.as_ref().map(|p| p.display().to_string()),
                layout: (plan.layout != crate::model::job::Layout::Table).then_some(plan.layout),
                ignored_options: plan.ignored_options.clone(),
                whole_pass: plan.whole_pass && plan.time.is_none(),
                cache_limit: limit.as_ref().map(job::limit_info),
                time_limit_ns: time_limit(plan).map(|d| d.as_nanos() as u64),
                io_size_bytes: plan.io_size,
                repeat: plan.repeat,
                ci_target: plan.repeat.is_none().then_some(plan.ci_target),
                max_time_ns: plan
                    .repeat
                    .is_none()
                    .then_some(plan.max_time.as_nanos() as u64),
                case_timeout_ns: plan.case_timeout.map(|d| d.as_nanos() as u64),
                estimated_ns: Some(estimated.as_nanos() as u64),
                warmup: plan.warmup,
                schedule: Some(plan.schedule.name().into()),
                order_seed: (plan.schedule == crate::plan::Schedule::Interleaved)
                    .then_some(plan.order_seed),
                interval_ns: plan.interval.as_nanos() as u64,
                seed: plan.seed,
                cache: plan.cache,
                data: plan.data.name(),
            },
            probe: probes
                .iter()
                .map(|p| ProbeEntry {
                    method: p.method.name().into(),
                    usable: p.usable(),
                    reason: p.unusable.clone(),
                    notes: p.notes.clone(),
                })
                .collect(),
            cases: Vec::new(),
            warnings: Vec::new(),
            verdicts: Vec::new(),
            mpi: self.ranks.info().map(|mut i| {
                i.notes = mpi_notes;
                i
            }),
        };
        if let Some(i) = result.mpi.as_ref().filter(|_| !self.progress.is_quiet()) {
            for n in &i.notes {
                crate::say!("iopath: note: {}", crate::model::untrusted::Visible(n));
            }
        }

        let bar = self.progress.cases(plan.cases.len() as u64);
        let mut shared = job::Shared {
            target: target.as_ref(),
            probes: &probes,
            obs: &obs,
            limit: &mut limit,
            seq: 0,
            rounds: 0,
            hot: None,
            eta,
        };
        // Cases refused before any I/O (the probe's refusals, O_DIRECT
        // alignment, the cache limit) take no time: the estimate, made
        // before the target existed, counted them.
        let refused: Vec<usize> = (0..plan.cases.len())
            .filter(|&i| self.prepare_case(&plan.cases[i], &shared).skipped.is_some())
            .collect();
        if !refused.is_empty() {
            for &i in &refused {
                shared.eta.finished(plan, i, None);
            }
            if !self.progress.is_quiet() {
                let line = format!(
                    "iopath: {} cannot run here (the reasons come under \"not run\"): about {} now",
                    crate::model::units::n_of(refused.len() as u64, "case", "cases"),
                    crate::model::units::fmt_wall(shared.eta.left())
                );
                crate::model::untrusted::to_stderr(crate::model::units::wrap(&line, 120, "", "  "));
            }
        }
        bar.set_prefix(job::left_text(shared.eta.left()));
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
                // A case refused before any I/O keeps its own reason: it
                // would not have run either way.
                for c in cases {
                    let refused = self.prepare_case(c, &shared);
                    let cr = if refused.skipped.is_some() {
                        refused
                    } else {
                        let mut cr = case_result(c);
                        cr.not_reached = true;
                        cr.skipped = Some(format!(
                            "{} ({}) before this case",
                            crate::result::NOT_REACHED,
                            crate::stop_cause()
                        ));
                        cr
                    };
                    result.cases.push(cr);
                }
                continue;
            }
            bar.set_message(job::progress_name(cases[0]));
            if self.run_job(job_no, &cases, &mut shared, &mut result, on_case, &bar)? {
                result.interrupted = true;
            }
            if job_no == 0 && !self.progress.is_enabled() && !self.progress.is_quiet() {
                // Without a progress line, say once what the first
                // measurements changed, when they changed it much.
                let (spent, left) = (t_run.elapsed(), shared.eta.left());
                let again = (spent + left).as_secs_f64();
                let first = estimated.as_secs_f64();
                // (Nothing to say when the first job was the run.)
                let far = (again - first).abs() > 0.25 * first && (again - first).abs() > 10.0;
                if far && left.as_secs_f64() >= 1.0 {
                    crate::say!(
                        "iopath: measured speeds change the estimate: about {} left ({} so far)",
                        crate::model::units::fmt_wall(left),
                        crate::model::units::fmt_wall(spent)
                    );
                }
            }
        }
        bar.finish_and_clear();
        // Jobs gather cases from all over the plan (a preset's groups, the
        // methods of one job listed apart): the result lists them in the
        // plan's order, as `presets show` and the job file do.
        if placed.len() == result.cases.len() {
            let mut by_plan: Vec<(usize, CaseResult)> =
                placed.into_iter().zip(result.cases.drain(..)).collect();
            by_plan.sort_by_key(|(i, _)| *i);
            result.cases = by_plan.into_iter().map(|(_, c)| c).collect();
        }
        result.finished_at = Some(sysinfo::now_rfc3339());
        self.ranks.agree(on_case(&mut result))?;
        drop(target);
        drop(shared_file);
        Ok(result)
    }

    fn probe_all(&self, target: Option<&Target>) -> Vec<MethodStatus> {
        self.plan
            .methods()
            .into_iter()
            .map(|m| match (m, target) {
                (Method::Null, _) => MethodStatus {
                    method: m,
                    unusable: self.plan.verify.then(|| prepare::NULL_UNDER_VERIFY.into()),
                    notes: Vec::new(),
                },
                (_, None) => MethodStatus {
                    method: m,
                    unusable: Some("no target file".into()),
                    notes: Vec::new(),
                },
                (_, Some(t)) => {
                    let align = iopath_io::sys::dio_alignment(t.path());
                    let len = align.offset.max(4096) as u64;
                    if t.size() < len {
                        return MethodStatus {
                            method: m,
                            unusable: Some(format!(
                                "the file is smaller than one {len}-byte probe read"
                            )),
                            notes: Vec::new(),
                        };
                    }
                    probe(m, t, len as usize)
                }
            })
            .collect()
    }

    fn run_repetition(
        &self,
        case: &Case,
        target: Option<&Target>,
        obs: &Observer,
        live: Option<&Live>,
        pass: u32,
        cap: Option<std::time::Duration>,
    ) -> Result<RepOk, RepError> {
        if case.pattern == Pattern::Copy {
            // A copy is not cut part-way: the case timeout only keeps
            // later repetitions from starting.
            let rep = self.run_copy_repetition(case, target, obs, pass);
            let sees = changed::sees(case, self.plan.data);
            return changed::after(target, None, &job::progress_name(case), sees, rep);
        }
        let plan = self.plan;
        let threads = case.threads.max(1) as u64;
        let bs = case.block_size;
        let size = target.map_or(plan.size.unwrap_or(crate::plan::DEFAULT_SIZE), |t| t.size());
        let span = case.span.map_or(size, |s| s.min(size)) / bs * bs;
        // `--layout shared-segmented`: this rank's part of the file.
        let (base, span) = self.ranks.segment(span, bs);
        let per_thread = span / threads / bs * bs;
        let limit = plan.case_time_limit(case);
        let wraps = plan.wraps(case);
        // The case timeout's rest, when it ends the repetition sooner.
        let cut_at = cap.filter(|c| limit.is_none_or(|t| *c < t));
        let time = cut_at.or(limit);
        let jobs: Vec<WorkerJob> = (0..threads)
            .map(|i| {
                // Verified writes of several threads each go to a slice of
                // their own: two writes of one block at once may interleave.
                let shared_range =
                    case.pattern.is_random() && !(plan.verify && case.pattern.writes());
                let (start, len) = if shared_range {
                    (base, span)
                } else {
                    ranks::Ranks::slice(base, span, bs, threads, i)
                };
                use crate::model::words::Until;
                let byte_budget = match (case.io_size.or(plan.io_size), case.until) {
                    (Some(total), _) => Some((total / threads).max(bs)),
                    (None, Some(Until::Time)) => None,
                    (None, Some(Until::Pass)) if case.pattern.is_random() => {
                        Some((span / threads).max(bs))
                    }
                    // Sequential: the time limit alone, starting over at
                    // the end of the range, or one pass.
                    (None, _) if wraps => None,
                    (None, _) if !case.pattern.is_random() => Some(per_thread),
                    (None, _) if plan.whole_pass => Some((span / threads).max(bs)),
                    (None, _) => None,
                };
                WorkerJob {
                    pattern: case.pattern,
                    block_size: bs as u32,
                    start,
                    len,
                    byte_budget,
                    time_budget: time,
                    sync: case.sync,
                    rwmix_read_pct: case.rwmix_read_pct,
                    seed: plan.seed,
                    stream: i,
                    data: plan.data,
                    interval_ns: plan.interval.as_nanos() as u64,
                    copy_to_user: case.copy_to_user && !case.pattern.writes(),
                    verify: plan.verify_unit().map(|unit| worker::VerifyJob {
                        unit: unit as usize,
                        seed: plan.seed,
                        pass,
                        max_pass: if target.is_some_and(|t| t.info.created) {
                            pass
                        } else {
                            u32::MAX
                        },
                        check_reads: !case.pattern.writes(),
                    }),
                    hint: case.hint,
                    stride: self.ranks.stride().unwrap_or((1, 0)),
                }
            })
            .collect();
        let spec = OpenSpec {
            path: target.map(|t| t.path().to_path_buf()).unwrap_or_default(),
            write: case.pattern.writes(),
            block_size: bs as usize,
            queue_depth: case.queue_depth_requested as usize,
            sync: case.sync,
            span_bytes: span,
            sqpoll_cpu: case.placement.sqpoll_cpu,
            mem_policy: case.placement.mem.clone(),
        };
        // How messages name the target: as the user knows it.
        let shown = target.map_or(Path::new(""), |t| t.info.path.as_path());
        let opened = Barrier::new(jobs.len());
        // Where the workers really ran and the buffers really are.
        #[allow(clippy::type_complexity)]
        let placed: Mutex<(
            Vec<u32>,
            std::collections::BTreeMap<u32, u64>,
            Vec<(u64, Vec<u32>)>,
        )> = Mutex::new((Vec::new(), Default::default(), Vec::new()));
        let start = Barrier::new(jobs.len());
        let open_failed = AtomicBool::new(false);
        let caps_out: Mutex<Option<(Vec<String>, usize)>> = Mutex::new(None);
        let locked_out = Mutex::new(0u64);
        // Rings of earlier cases may still be torn down in the background:
        // count only what this case's engines add.
        let locked_before = observe::locked_now();
        let before = obs.before();
        let (self0, main0) = (
            iopath_io::sys::process_usage(),
            iopath_io::sys::thread_usage(),
        );
        let bystanders0 = iopath_io::sys::named_threads_cpu_ns(&cpu_share::BYSTANDERS);
        // Woken by each worker as it ends, the runner checks the file
        // meanwhile (another process cutting it).
        let runner = &std::thread::current();
        #[allow(clippy::type_complexity)]
        let (outs, seen): (
            Vec<Result<(worker::WorkerOut, iopath_io::sys::ThreadUsage), RepError>>,
            _,
        ) = std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .iter()
                .map(|job| {
                    let (spec, opened, start, open_failed, caps_out, locked_out, placed) = (
                        &spec,
                        &opened,
                        &start,
                        &open_failed,
                        &caps_out,
                        &locked_out,
                        &placed,
                    );
                    s.spawn(move || {
                        let _wake = changed::Wake(runner);
                        // Pinned before the engine is opened, so that its
                        // buffers are first touched from where it runs.
                        let pinned = match case.placement.cpus_of_worker(job.stream as usize) {
                            Some(cpus) => iopath_io::numa::pin_current_thread(&cpus).map_err(|e| {
                                EngineError::Invalid(format!(
                                    "cannot pin worker {} to CPU(s) {}: {e}",
                                    job.stream,
                                    crate::system::topology::format_cpulist(&cpus)
                                ))
                            }),
                            None => Ok(()),
                        };
                        let opts = iopath_io::MethodOptions {
                            hint: case.hint,
                            pool_threads: plan.pool_threads.map(|n| n as usize),
                        };
                        // The hint is checked here and applied by the
                        // worker inside the timed interval (what
                        // populate and willneed read is the case's).
                        let eng = pinned
                            .and_then(|()| iopath_io::open_unadvised(case.method, spec, &opts));
                        if eng.is_err() {
                            open_failed.store(true, Ordering::SeqCst);
                        }
                        opened.wait();
                        let eng = match eng {
                            Ok(e) => e,
                            Err(EngineError::Unsupported { reason, .. }) => {
                                return Err(RepError::Skip(reason))
                            }
                            Err(e) => {
                                return Err(RepError::Fail(
                                    worker::WorkerError::Engine(e).message(shown),
                                ))
                            }
                        };
                        if open_failed.load(Ordering::SeqCst) {
                            return Err(RepError::Fail(
                                "another worker could not open the engine".into(),
                            ));
                        }
                        if let Ok(mut c) = caps_out.lock() {
                            c.get_or_insert_with(|| {
                                (eng.caps().notes.clone(), eng.caps().queue_depth)
                            });
                        }
                        if let Ok(mut p) = placed.lock() {
                            let mine = iopath_io::numa::current_affinity().unwrap_or_default();
                            for &cpu in &mine {
                                if !p.0.contains(&cpu) {
                                    p.0.push(cpu);
                                }
                            }
                            p.2.push((job.stream, mine));
                            for &(node, pages) in &eng.caps().buffer_nodes {
                                *p.1.entry(node).or_default() += pages;
                            }
                        }
                        if job.stream == 0 {
                            // Every engine is open now (all passed `opened`).
                            if let Ok(mut l) = locked_out.lock() {
                                *l = observe::locked_now().saturating_sub(locked_before);
                            }
                        }
                        let slot = live.and_then(|l| l.slot(job.stream as usize));
                        let out = worker::run(eng, job, start, self.ranks.cut(self.stop), slot)
                            .map_err(|e| RepError::Fail(e.message(shown)))?;
                        // The thread's whole life, to tell its CPU from that
                        // of io_uring's kernel threads.
                        Ok((out, iopath_io::sys::thread_usage()))
                    })
                })
                .collect();
            let sees = changed::sees(case, plan.data);
            let seen = changed::watch(&handles, || changed::while_running(target, sees));
            let outs = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(RepError::Fail("a worker thread panicked".into())))
                })
                .collect();
            (outs, seen)
        });
        // Prefer the first real failure over "another worker could not open".
        let mut ok = Vec::with_capacity(outs.len());
        let mut first_err = None;
        for o in outs {
            match o {
                Ok(w) => ok.push(w),
                Err(e) => {
                    let secondary =
                        matches!(&e, RepError::Fail(m) if m.starts_with("another worker"));
                    if first_err.is_none()
                        || (!secondary
                            && matches!(&first_err, Some(RepError::Fail(m)) if m.starts_with("another worker")))
                    {
                        first_err = Some(e);
                    }
                }
            }
        }
        // A change of the file seen during the repetition, or after it,
        // is the error (a worker's own error, its consequence, in it).
        let rep = first_err.map_or(Ok(()), Err);
        let sees = changed::sees(case, plan.data);
        changed::after(target, seen, &job::progress_name(case), sees, rep)?;
        let (mut notes, qd) = caps_out.into_inner().ok().flatten().unwrap_or_default();
        if case.placement.sqpoll_cpu.is_some() && case.method != iopath_io::Method::UringSqpoll {
            notes.push(format!(
                "--sqpoll-cpu applies to uring-sqpoll only; {} has no SQPOLL thread",
                case.method
            ));
        }
        // io_uring kernel threads (SQPOLL, io-wq) are threads of this
        // process: what the process used beyond this thread and the
        // workers (whole lives) is theirs. RUSAGE_SELF keeps threads that
        // have exited, as rings closed with their engines.
        let cpu_ns = |u: &iopath_io::sys::ThreadUsage| u.cpu_ns;
        let self_ns = cpu_ns(&iopath_io::sys::process_usage().since(&self0));
        let main_ns = cpu_ns(&iopath_io::sys::thread_usage().since(&main0));
        let bystanders_ns = cpu_share::bystanders_ns(
            &bystanders0,
            &iopath_io::sys::named_threads_cpu_ns(&cpu_share::BYSTANDERS),
        );
        let workers_ns: u64 = ok.iter().map(|(_, life)| cpu_ns(life)).sum();
        // The user-space caches hold their budget (one cache, or one uffd
        // region, for the case): memory the case holds.
        let own_cache = if case.method.is_user_space_cache() {
            plan.ucache_size
        } else {
            0
        };
        let mut cost = WorkerCost {
            locked_bytes: locked_out.into_inner().unwrap_or(0),
            buffers_bytes: threads * qd as u64 * bs + own_cache,
            // Only io_uring methods have kernel threads, and threadpool and
            // tokio pool threads (which make the system calls); elsewhere
            // the difference is thread start-up and exit, not I/O.
            kernel_threads_ns: if case.method.name().starts_with("uring")
                || matches!(case.method, Method::Threadpool | Method::Tokio)
            {
                cpu_share::helper_threads_ns(self_ns, main_ns, workers_ns, bystanders_ns)
            } else {
                0
            },
            ..WorkerCost::default()
        };
        for (w, _) in &ok {
            let u = &w.cpu;
            cost.cpu.cpu_ns += u.cpu_ns;
            cost.cpu.user_ns += u.user_ns;
            cost.cpu.sys_ns += u.sys_ns;
            cost.cpu.ctx_vol += u.ctx_vol;
            cost.cpu.ctx_invol += u.ctx_invol;
            cost.cpu.minflt += u.minflt;
            cost.cpu.majflt += u.majflt;
            cost.cpu.run_delay_ns += u.run_delay_ns;
        }
        let outs: Vec<worker::WorkerOut> = ok.into_iter().map(|(w, _)| w).collect();
        let (mut m, hist) = merge(&outs, plan.interval.as_nanos() as u64);
        let span_of = |f: fn(&worker::WorkerOut) -> Instant| outs.iter().map(f);
        self.ranks
            .timed(span_of(|o| o.start).min(), span_of(|o| o.end).max());
        if let (Some(c), false) = (cut_at, m.interrupted) {
            // Stopped by the case timeout, not by its own end: the share of
            // its work it did, and the whole repetition's time from it.
            let budgets: Vec<u64> = jobs.iter().filter_map(|j| j.byte_budget).collect();
            let fraction = if budgets.len() == jobs.len() {
                outs.iter()
                    .any(|o| o.timed_out)
                    .then(|| m.io_bytes as f64 / budgets.iter().sum::<u64>().max(1) as f64)
            } else {
                // Bounded by time alone: its time over the limit it had.
                limit.map(|t| m.duration_ns as f64 / t.as_nanos().max(1) as f64)
            };
            if let Some(f) = fraction.filter(|f| *f < 1.0) {
                let f = f.max(1e-9);
                m.capped = Some(crate::result::Capped {
                    case_timeout_ns: plan
                        .case_timeout
                        .map_or(c.as_nanos() as u64, |t| t.as_nanos() as u64),
                    fraction_done: f,
                    extrapolated_ns: (m.duration_ns as f64 / f).round() as u64,
                    flush_ns: outs.iter().map(|o| o.flush_ns).max().filter(|&n| n > 0),
                });
            }
        }
        let mut verified = Verified {
            bytes: outs.iter().map(|o| o.verified_bytes).sum(),
            ns: outs.iter().map(|o| o.verify_ns).sum(),
            flush_ns: outs.iter().map(|o| o.flush_ns).max().unwrap_or(0),
        };
        if let (Some(unit), Some(t), true) = (plan.verify_unit(), target, case.pattern.writes()) {
            // After the timing: read back what the workers wrote.
            let t0 = Instant::now();
            let ranges: Vec<(u64, u64, &[u64])> = jobs
                .iter()
                .zip(&outs)
                .map(|(j, o)| (j.start, j.len, &o.written[..]))
                .collect();
            let readback = verify::read_back(t.path(), bs, unit, plan.seed, pass, &ranges)
                .map_err(RepError::Fail)?;
            verified.bytes += readback;
            verified.ns += t0.elapsed().as_nanos() as u64;
        }
        self.ranks.disk(obs.finish(&before, &mut m, case, &cost));
        // Outside the timed interval: let the kernel unpin what this
        // repetition's rings pinned, so the next one's locked_bytes starts
        // from the baseline.
        observe::wait_locked_release(locked_before, std::time::Duration::from_secs(1));
        let (mut affinity, buffer_nodes, mut per_worker) = placed.into_inner().unwrap_or_default();
        affinity.sort_unstable();
        per_worker.sort_by_key(|(i, _)| *i);
        let mut placed = self.placement_result(case, affinity, buffer_nodes.into_iter().collect());
        placed.worker_affinity = per_worker.into_iter().map(|(_, a)| a).collect();
        Ok((m, notes, qd as u32, placed, hist, verified))
    }
}

impl Runner<'_> {
    /// What a case's placement was: asked for, and read back.
    fn placement_result(
        &self,
        case: &Case,
        affinity: Vec<u32>,
        buffer_nodes: Vec<(u32, u64)>,
    ) -> PlacementResult {
        // cpu_nodes and device_node are filled in by `run`, which has the
        // system's topology.
        PlacementResult {
            cpus: case.placement.cpus.clone().unwrap_or_default(),
            affinity,
            mem_policy: case
                .placement
                .mem
                .as_ref()
                .map(crate::system::placement::policy_name),
            buffer_nodes,
            sqpoll_cpu: case.placement.sqpoll_cpu,
            ..PlacementResult::default()
        }
    }
}

/// How often, and how long apart, a repetition refused after earlier ones
/// worked is tried again.
const SKIP_RETRIES: u32 = 20;
const SKIP_RETRY_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// A repetition that ran: its measurement, notes for the case, the depth
/// it ran at, where it ran, and its requests' latency histogram.
pub type RepOk = (
    Measurement,
    Vec<String>,
    u32,
    PlacementResult,
    Histogram<u64>,
    Verified,
);

/// `--verify`: what one repetition checked, and the time it took; and a
/// write's final flush and close (the slowest worker's, inside its timed
/// interval), which the case timeout keeps room for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Verified {
    pub bytes: u64,
    pub ns: u64,
    pub flush_ns: u64,
}

/// Why a repetition did not run: refused (the case is skipped) or failed.
#[derive(Debug)]
pub enum RepError {
    Skip(String),
    Fail(String),
}

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
        sync: case.sync,
        rwmix_read_pct: (case.pattern == Pattern::RandRw).then_some(case.rwmix_read_pct),
        label: case.label.clone(),
        span_bytes: case.span,
        copy_to_user: case.copy_to_user,
        sparse: case.sparse,
        cache: case.cache,
        cache_limited: (!case.cache_limited).then_some(false),
        published: case.published.clone(),
        pair: case.pair.clone(),
        group: case.group.clone(),
        ..CaseResult::default()
    }
}

//! One repetition of a case: its workers' jobs, the engines opened on
//! threads of their own (pinned first), all started together, the file
//! watched while they run, and their figures merged into one measurement
//! with its cost, its cut by the case timeout, its verification and where
//! it ran.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use iopath_io::sys::ThreadUsage;
use iopath_io::{EngineError, Method, OpenSpec};

use crate::plan::{Case, Pattern};
use crate::result::facts::CaseNote;
use crate::result::skip::Skip;
use crate::result::{Capped, Measurement};
use crate::run::target::Target;
use crate::system::metrics::kthreads;
use crate::system::metrics::procfs::ProcessIo;
use crate::system::placement::PlacementResult;

use super::live::Live;
use super::merge::merge;
use super::observe::{self, Observer, WorkerCost};
use super::worker::{self, AtLeast, WorkerJob, WorkerOut};
use super::{changed, cpu_share, job, ranks, verify, Runner};

/// A repetition that ran.
#[derive(Debug)]
pub struct RepOk {
    pub measurement: Measurement,
    /// The engines' own notes (their words, from `iopath_io`).
    pub engine_notes: Vec<String>,
    /// The runner's notes on it, as facts.
    pub facts: Vec<CaseNote>,
    /// The depth it ran at.
    pub queue_depth: u32,
    /// Where it ran.
    pub placement: PlacementResult,
    /// Its requests' latency.
    pub hist: Histogram<u64>,
    /// Each stream's (a case of streams; empty otherwise).
    pub stream_hists: Vec<Histogram<u64>>,
    pub verified: Verified,
}

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
    Skip(crate::result::skip::Skip),
    Fail(String),
}

/// The part of the file a repetition's workers share.
#[derive(Debug, Clone, Copy)]
struct Range {
    threads: u64,
    bs: u64,
    /// This rank's part of the file (`--layout shared-segmented`).
    base: u64,
    span: u64,
}

/// One workload of a repetition: its range, its engines' open spec, and
/// its workers among the repetition's.
struct Part<'c> {
    case: &'c Case,
    range: Range,
    spec: OpenSpec,
    workers: std::ops::Range<usize>,
}

/// Each worker's open spec: its workload's.
fn specs_of<'p>(parts: &'p [Part<'_>]) -> Vec<&'p OpenSpec> {
    parts
        .iter()
        .flat_map(|p| p.workers.clone().map(move |_| &p.spec))
        .collect()
}

/// A case of streams: each stream's figures into `m`, and its latency
/// histogram; nothing for a case of one workload.
fn merge_streams(
    case: &Case,
    parts: &[Part<'_>],
    outs: &[WorkerOut],
    interval_ns: u64,
    m: &mut Measurement,
) -> Vec<Histogram<u64>> {
    if case.streams.is_empty() {
        return Vec::new();
    }
    parts
        .iter()
        .map(|p| {
            let (rep, h) = super::merge::stream_rep(&outs[p.workers.clone()], interval_ns);
            m.streams.push(rep);
            h
        })
        .collect()
}

/// The I/O buffers the workers hold: per workload, threads x depth x
/// block size (the engine's depth for a case of one workload; a stream's
/// asked depth, 1 for a synchronous method).
fn buffers_bytes(case: &Case, parts: &[Part<'_>], qd: usize) -> u64 {
    parts
        .iter()
        .map(|p| {
            let depth = match (case.streams.is_empty(), case.method.is_async()) {
                (true, _) => qd as u64,
                (false, true) => u64::from(p.case.queue_depth_requested.max(1)),
                (false, false) => 1,
            };
            p.range.threads * depth * p.range.bs
        })
        .sum()
}

/// Where the workers really ran and their buffers really are.
#[derive(Debug, Default)]
struct Placed {
    /// Every CPU some worker may run on, once each.
    affinity: Vec<u32>,
    /// Pages of the engines' buffers per NUMA node.
    buffer_nodes: std::collections::BTreeMap<u32, u64>,
    /// Each worker's own CPUs, by stream.
    per_worker: Vec<(u64, Vec<u32>)>,
}

/// What the first engine opened says of itself.
#[derive(Debug, Default)]
struct Caps {
    notes: Vec<String>,
    queue_depth: usize,
}

/// What the workers of one repetition share while they start.
struct Gate {
    /// Every engine opened (or failed to).
    opened: Barrier,
    /// Every worker starts its timed interval together.
    start: Barrier,
    open_failed: AtomicBool,
    placed: Mutex<Placed>,
    caps: Mutex<Option<Caps>>,
    /// Locked memory with every engine open, beyond `locked_before`.
    locked: Mutex<u64>,
    locked_before: u64,
    /// The workers of the first workload (whose depth the case reports).
    first_workload: u64,
}

/// The process's figures before a repetition, for its cost.
struct Before {
    process: ThreadUsage,
    main: ThreadUsage,
    bystanders: Vec<(i32, u64)>,
    /// The system's kernel threads' CPU (none for `null`), and when.
    kernel: Option<(Vec<(i32, u64)>, Instant)>,
}

impl Before {
    fn now(case: &Case) -> Before {
        let kernel = (!case.method.is_null())
            .then(|| (kthreads::cpu_ns(Path::new("/proc")), Instant::now()));
        Before {
            process: iopath_io::sys::process_usage(),
            main: iopath_io::sys::thread_usage(),
            bystanders: iopath_io::sys::named_threads_cpu_ns(&cpu_share::BYSTANDERS),
            kernel,
        }
    }

    /// The system's kernel threads' CPU since [`Before::now`], and the
    /// window's length (ns).
    fn kernel_since(&self) -> Option<(u64, u64)> {
        let (before, t0) = self.kernel.as_ref()?;
        let after = kthreads::cpu_ns(Path::new("/proc"));
        let window = t0.elapsed().as_nanos() as u64;
        Some((kthreads::used_ns(before, &after), window))
    }
}

/// The sum of the workers' I/O accounting; `None` when one has none.
fn sum_io(each: impl Iterator<Item = Option<ProcessIo>>) -> Option<ProcessIo> {
    each.collect::<Option<Vec<_>>>()
        .map(|all| all.iter().fold(ProcessIo::default(), |a, b| a.plus(b)))
}

/// A worker's figures and its thread's whole life (to tell its CPU from
/// that of io_uring's kernel threads).
/// (Its I/O accounting likewise, to tell its read and write calls from
/// those of a method's pool threads.)
type WorkerRun = (WorkerOut, ThreadUsage, Option<ProcessIo>);

/// "another worker could not open the engine": a consequence of the
/// first real failure, which is preferred to it.
const ANOTHER_WORKER: &str = "another worker could not open the engine";

impl Runner<'_> {
    pub(super) fn run_repetition(
        &self,
        case: &Case,
        target: Option<&Target>,
        obs: &Observer,
        live: Option<&Live>,
        pass: u32,
        (cap, stretch): (Option<Duration>, f64),
    ) -> Result<RepOk, RepError> {
        if case.pattern == Pattern::Copy {
            // A copy is not cut part-way: the case timeout only keeps
            // later repetitions from starting.
            let rep = self.run_copy_repetition(case, target, obs, pass);
            let sees = changed::sees(case, self.plan.data);
            return changed::after(target, None, &job::progress_name(case), sees, rep);
        }
        let plan = self.plan;
        let (limit, cut_at, at_least) = self.lengths(case, cap, stretch);
        let (parts, jobs) = self.parts(case, target, (cut_at.or(limit), at_least), pass);
        let specs = specs_of(&parts);
        // Rings of earlier cases may still be torn down in the background:
        // count only what this case's engines add.
        let gate = Gate::new(jobs.len(), parts[0].workers.len());
        if !case.method.is_null() {
            // Measured once, before the first repetition that does I/O.
            obs.baseline();
        }
        let before = obs.before();
        let usage0 = Before::now(case);
        let (outs, seen) = self.run_workers(case, target, &specs, &jobs, &gate, live);
        // A change of the file seen during the repetition, or after it,
        // is the error (a worker's own error, its consequence, in it).
        let (ok, first_err) = first_failure(outs);
        let sees = changed::sees(case, plan.data);
        changed::after(
            target,
            seen,
            &job::progress_name(case),
            sees,
            first_err.map_or(Ok(()), Err),
        )?;
        let caps = gate.caps.into_inner().ok().flatten().unwrap_or_default();
        let facts = super::case_notes::sqpoll_facts(case);
        let locked = gate.locked.into_inner().unwrap_or(0);
        let buffers = buffers_bytes(case, &parts, caps.queue_depth);
        let cost = self.worker_cost(case, buffers, &ok, &usage0, locked);
        let outs: Vec<WorkerOut> = ok.into_iter().map(|(w, ..)| w).collect();
        let interval_ns = plan.interval.as_nanos() as u64;
        let (mut m, hist) = merge(&outs, interval_ns);
        let stream_hists = merge_streams(case, &parts, &outs, interval_ns, &mut m);
        let span_of = |f: fn(&WorkerOut) -> Instant| outs.iter().map(f);
        self.ranks
            .timed(span_of(|o| o.start).min(), span_of(|o| o.end).max());
        if let (Some(c), false) = (cut_at, m.interrupted) {
            m.capped = self.capped(&m, c, limit, &jobs, &outs);
        }
        let verified = self.verified(case, target, parts[0].range.bs, pass, &jobs, &outs)?;
        self.ranks.disk(obs.finish(&before, &mut m, case, &cost));
        // Outside the timed interval: let the kernel unpin what this
        // repetition's rings pinned, so the next one's locked_bytes starts
        // from the baseline.
        observe::wait_locked_release(gate.locked_before, Duration::from_secs(1));
        let placed = gate.placed.into_inner().unwrap_or_default();
        Ok(RepOk {
            measurement: m,
            engine_notes: caps.notes,
            facts,
            queue_depth: caps.queue_depth as u32,
            placement: self.placed(case, placed),
            hist,
            stream_hists,
            verified,
        })
    }

    /// A repetition's lengths: the case's time limit (streams run for the
    /// group's one), the case timeout's rest when it ends the repetition
    /// sooner, and how far a length iopath chose runs on for the requests
    /// every slot is given, as far as its job's stretch allows, never past
    /// the case timeout.
    fn lengths(
        &self,
        case: &Case,
        cap: Option<Duration>,
        stretch: f64,
    ) -> (Option<Duration>, Option<Duration>, Option<AtLeast>) {
        let plan = self.plan;
        let limit = plan.case_time_limit(case);
        let cut_at = cap.filter(|c| limit.is_none_or(|t| *c < t));
        let at_least = plan
            .chosen_length(case)
            .filter(|_| cut_at.is_none() && stretch > 1.0)
            .map(|t| AtLeast {
                per_slot: crate::plan::MIN_REQUESTS_PER_SLOT,
                until: cap.map_or(t.mul_f64(stretch), |c| c.min(t.mul_f64(stretch))),
            });
        (limit, cut_at, at_least)
    }

    /// The workloads of a repetition (the case's streams, or the case
    /// itself), each with its range, open spec and workers; and every
    /// worker's job, numbered across the workloads.
    fn parts<'c>(
        &self,
        case: &'c Case,
        target: Option<&Target>,
        time: (Option<Duration>, Option<AtLeast>),
        pass: u32,
    ) -> (Vec<Part<'c>>, Vec<WorkerJob>) {
        let mut jobs: Vec<WorkerJob> = Vec::new();
        let parts = case
            .workloads()
            .iter()
            .map(|w| {
                let range = self.range(w, target);
                let first = jobs.len();
                for mut j in self.worker_jobs(w, target, range, time, pass) {
                    j.stream = jobs.len() as u64;
                    jobs.push(j);
                }
                Part {
                    case: w,
                    range,
                    spec: open_spec(w, target, range, self.plan.noatime),
                    workers: first..jobs.len(),
                }
            })
            .collect();
        (parts, jobs)
    }

    /// The range a case's workers address: capped at the file, whole
    /// blocks, this rank's part of it.
    fn range(&self, case: &Case, target: Option<&Target>) -> Range {
        let plan = self.plan;
        let bs = case.block_size;
        let size = target.map_or(plan.size.unwrap_or(crate::plan::DEFAULT_SIZE), |t| t.size());
        // A stream's own part of the file starts at its offset.
        let room = size.saturating_sub(case.offset);
        let span = case.span.map_or(room, |s| s.min(room)) / bs * bs;
        // `--layout shared-segmented`: this rank's part of the file.
        let (base, span) = self.ranks.segment(span, bs);
        let base = base + case.offset;
        Range {
            threads: case.threads.max(1) as u64,
            bs,
            base,
            span,
        }
    }

    /// Each worker's job: its part of the range, its byte and time budgets.
    fn worker_jobs(
        &self,
        case: &Case,
        target: Option<&Target>,
        r: Range,
        (time, at_least): (Option<Duration>, Option<AtLeast>),
        pass: u32,
    ) -> Vec<WorkerJob> {
        let plan = self.plan;
        let Range {
            threads,
            bs,
            base,
            span,
        } = r;
        let per_thread = span / threads / bs * bs;
        let wraps = plan.wraps(case);
        // Verified writes of several threads each go to a slice of their
        // own: two writes of one block at once may interleave.
        let shared_range = case.pattern.is_random() && !(plan.verify && case.pattern.writes());
        use crate::model::words::Until;
        let byte_budget = match (case.io_size.or(plan.io_size), case.until) {
            (Some(total), _) => Some((total / threads).max(bs)),
            (None, Some(Until::Time)) => None,
            (None, Some(Until::Pass)) if case.pattern.is_random() => Some((span / threads).max(bs)),
            // Sequential: the time limit alone, starting over at the end
            // of the range, or one pass.
            (None, _) if wraps => None,
            (None, _) if !case.pattern.is_random() => Some(per_thread),
            (None, _) if plan.whole_pass => Some((span / threads).max(bs)),
            (None, _) => None,
        };
        let verify = plan.verify_unit().map(|unit| worker::VerifyJob {
            unit: unit as usize,
            seed: plan.seed,
            pass,
            max_pass: if target.is_some_and(|t| t.info.created) {
                pass
            } else {
                u32::MAX
            },
            check_reads: !case.pattern.writes(),
        });
        (0..threads)
            .map(|i| {
                let (start, len) = if shared_range {
                    (base, span)
                } else {
                    ranks::Ranks::slice(base, span, bs, threads, i)
                };
                WorkerJob {
                    pattern: case.pattern,
                    block_size: bs as u32,
                    start,
                    len,
                    byte_budget,
                    time_budget: time,
                    at_least,
                    sync: case.sync,
                    sync_every: case.sync_every,
                    rwmix_read_pct: case.rwmix_read_pct,
                    seed: plan.seed,
                    stream: i,
                    data: plan.data,
                    interval_ns: plan.interval.as_nanos() as u64,
                    copy_to_user: case.copy_to_user && !case.pattern.writes(),
                    verify,
                    hint: case.hint,
                    stride: self.ranks.stride().unwrap_or((1, 0)),
                }
            })
            .collect()
    }

    /// The workers on threads of their own, the file watched meanwhile:
    /// each worker's outcome, and the change to the file seen while they
    /// ran.
    fn run_workers(
        &self,
        case: &Case,
        target: Option<&Target>,
        specs: &[&OpenSpec],
        jobs: &[WorkerJob],
        gate: &Gate,
        live: Option<&Live>,
    ) -> (
        Vec<Result<WorkerRun, RepError>>,
        Option<crate::run::target::watch::Change>,
    ) {
        // Woken by each worker as it ends, the runner checks the file
        // meanwhile (another process cutting it).
        let runner = &std::thread::current();
        std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .iter()
                .zip(specs)
                .map(|(job, &spec)| {
                    s.spawn(move || {
                        let _wake = changed::Wake(runner);
                        self.worker_thread(case, target, spec, job, gate, live)
                    })
                })
                .collect();
            let sees = changed::sees(case, self.plan.data);
            let seen = changed::watch(&handles, || changed::while_running(target, sees));
            let outs = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(RepError::Fail("a worker thread panicked".into())))
                })
                .collect();
            (outs, seen)
        })
    }

    /// One worker's thread: pinned, its engine opened, then (once every
    /// engine is open) its timed run.
    fn worker_thread(
        &self,
        case: &Case,
        target: Option<&Target>,
        spec: &OpenSpec,
        job: &WorkerJob,
        gate: &Gate,
        live: Option<&Live>,
    ) -> Result<WorkerRun, RepError> {
        // How messages name the target: as the user knows it.
        let shown = target.map_or(Path::new(""), |t| t.info.path.as_path());
        // Pinned before the engine is opened, so that its buffers are
        // first touched from where it runs.
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
            // --pool-threads, else a matched case's pool (its concurrency).
            pool_threads: self
                .plan
                .pool_threads
                .or(case.pool_threads)
                .map(|n| n as usize),
        };
        // The hint is checked here and applied by the worker inside the
        // timed interval (what populate and willneed read is the case's).
        let eng = pinned.and_then(|()| iopath_io::open_unadvised(case.method, spec, &opts));
        if eng.is_err() {
            gate.open_failed.store(true, Ordering::SeqCst);
        }
        gate.opened.wait();
        let eng = match eng {
            Ok(e) => e,
            Err(EngineError::Unsupported { reason, .. }) => {
                return Err(RepError::Skip(Skip::Unusable { reason }))
            }
            Err(e) => {
                return Err(RepError::Fail(
                    worker::WorkerError::Engine(e).message(shown),
                ))
            }
        };
        if gate.open_failed.load(Ordering::SeqCst) {
            return Err(RepError::Fail(ANOTHER_WORKER.into()));
        }
        gate.book(job.stream, eng.caps());
        let slot = live.and_then(|l| l.slot(job.stream as usize));
        let out = worker::run(eng, job, &gate.start, self.ranks.cut(self.stop), slot)
            .map_err(|e| RepError::Fail(e.message(shown)))?;
        // The thread's whole life, to tell its CPU from that of io_uring's
        // kernel threads.
        let life_io = ProcessIo::read_thread();
        Ok((out, iopath_io::sys::thread_usage(), life_io))
    }

    /// What the workers cost: their CPU, the memory locked and buffered,
    /// and the CPU of the kernel's and pools' threads that worked for them.
    fn worker_cost(
        &self,
        case: &Case,
        buffers_bytes: u64,
        ok: &[WorkerRun],
        usage0: &Before,
        locked_bytes: u64,
    ) -> WorkerCost {
        // io_uring kernel threads (SQPOLL, io-wq) are threads of this
        // process: what the process used beyond this thread and the
        // workers (whole lives) is theirs. RUSAGE_SELF keeps threads that
        // have exited, as rings closed with their engines.
        let cpu_ns = |u: &ThreadUsage| u.cpu_ns;
        let self_ns = cpu_ns(&iopath_io::sys::process_usage().since(&usage0.process));
        let main_ns = cpu_ns(&iopath_io::sys::thread_usage().since(&usage0.main));
        let bystanders_ns = cpu_share::bystanders_ns(
            &usage0.bystanders,
            &iopath_io::sys::named_threads_cpu_ns(&cpu_share::BYSTANDERS),
        );
        let workers_ns: u64 = ok.iter().map(|(_, life, _)| cpu_ns(life)).sum();
        let system_kernel = usage0.kernel_since();
        // The user-space caches hold their budget (one cache, or one uffd
        // region, for the case): memory the case holds.
        let own_cache = if case.method.is_user_space_cache() {
            self.plan.ucache_size
        } else {
            0
        };
        let mut cost = WorkerCost {
            locked_bytes,
            buffers_bytes: buffers_bytes + own_cache,
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
            system_kernel,
            ..WorkerCost::default()
        };
        cost.workers_io = sum_io(ok.iter().map(|(w, ..)| w.io));
        cost.workers_life_io = sum_io(ok.iter().map(|(_, _, life)| *life));
        for (w, ..) in ok {
            cost.cpu.add(&w.cpu);
            cost.stamps.add(&w.stamps);
        }
        cost
    }

    /// A repetition stopped by the case timeout (`cut_at`), not by its
    /// own end: the share of its work it did, and the whole repetition's
    /// time from it. `None` when it did all its work.
    fn capped(
        &self,
        m: &Measurement,
        cut_at: Duration,
        limit: Option<Duration>,
        jobs: &[WorkerJob],
        outs: &[WorkerOut],
    ) -> Option<Capped> {
        let budgets: Vec<u64> = jobs.iter().filter_map(|j| j.byte_budget).collect();
        let fraction = if budgets.len() == jobs.len() {
            outs.iter()
                .any(|o| o.timed_out)
                .then(|| m.io_bytes as f64 / budgets.iter().sum::<u64>().max(1) as f64)
        } else {
            // Bounded by time alone: its time over the limit it had.
            limit.map(|t| m.duration_ns as f64 / t.as_nanos().max(1) as f64)
        };
        let f = fraction.filter(|f| *f < 1.0)?.max(1e-9);
        Some(Capped {
            case_timeout_ns: self
                .plan
                .case_timeout
                .map_or(cut_at.as_nanos() as u64, |t| t.as_nanos() as u64),
            fraction_done: f,
            extrapolated_ns: (m.duration_ns as f64 / f).round() as u64,
            flush_ns: outs.iter().map(|o| o.flush_ns).max().filter(|&n| n > 0),
        })
    }

    /// `--verify`: what the workers checked, and after the timing, what a
    /// write wrote read back.
    fn verified(
        &self,
        case: &Case,
        target: Option<&Target>,
        bs: u64,
        pass: u32,
        jobs: &[WorkerJob],
        outs: &[WorkerOut],
    ) -> Result<Verified, RepError> {
        let plan = self.plan;
        let mut verified = Verified {
            bytes: outs.iter().map(|o| o.verified_bytes).sum(),
            ns: outs.iter().map(|o| o.verify_ns).sum(),
            flush_ns: outs.iter().map(|o| o.flush_ns).max().unwrap_or(0),
        };
        if let (Some(unit), Some(t), true) = (plan.verify_unit(), target, case.pattern.writes()) {
            let t0 = Instant::now();
            let ranges: Vec<(u64, u64, &[u64])> = jobs
                .iter()
                .zip(outs)
                .map(|(j, o)| (j.start, j.len, &o.written[..]))
                .collect();
            let readback = verify::read_back(t.path(), bs, unit, plan.seed, pass, &ranges)
                .map_err(RepError::Fail)?;
            verified.bytes += readback;
            verified.ns += t0.elapsed().as_nanos() as u64;
        }
        Ok(verified)
    }

    /// Where the repetition ran, from what its workers read back.
    fn placed(&self, case: &Case, p: Placed) -> PlacementResult {
        let Placed {
            mut affinity,
            buffer_nodes,
            mut per_worker,
        } = p;
        affinity.sort_unstable();
        per_worker.sort_by_key(|(i, _)| *i);
        let mut placed = self.placement_result(case, affinity, buffer_nodes.into_iter().collect());
        placed.worker_affinity = per_worker.into_iter().map(|(_, a)| a).collect();
        placed
    }

    /// What a case's placement was: asked for, and read back.
    pub(super) fn placement_result(
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

impl Gate {
    /// For `workers` workers; the memory locked now is the baseline (rings
    /// of earlier cases may still be torn down in the background).
    fn new(workers: usize, first_workload: usize) -> Gate {
        Gate {
            opened: Barrier::new(workers),
            start: Barrier::new(workers),
            open_failed: AtomicBool::new(false),
            placed: Mutex::new(Placed::default()),
            caps: Mutex::new(None),
            locked: Mutex::new(0),
            locked_before: observe::locked_now(),
            first_workload: first_workload as u64,
        }
    }

    /// A worker's engine is open: its notes and depth (the first's), where
    /// it runs and its buffers are, and with every engine open (stream 0,
    /// past `opened`) the memory locked.
    fn book(&self, stream: u64, caps: &iopath_io::Caps) {
        // A case of streams: its first stream's.
        if let Ok(mut c) = self
            .caps
            .lock()
            .map_err(drop)
            .and_then(|c| (stream < self.first_workload).then_some(c).ok_or(()))
        {
            c.get_or_insert_with(|| Caps {
                notes: caps.notes.clone(),
                queue_depth: caps.queue_depth,
            });
        }
        if let Ok(mut p) = self.placed.lock() {
            let mine = iopath_io::numa::current_affinity().unwrap_or_default();
            for &cpu in &mine {
                if !p.affinity.contains(&cpu) {
                    p.affinity.push(cpu);
                }
            }
            p.per_worker.push((stream, mine));
            for &(node, pages) in &caps.buffer_nodes {
                *p.buffer_nodes.entry(node).or_default() += pages;
            }
        }
        if stream == 0 {
            if let Ok(mut l) = self.locked.lock() {
                *l = observe::locked_now().saturating_sub(self.locked_before);
            }
        }
    }
}

/// The engine's open spec for a case; `noatime`: the plan's `--noatime`.
fn open_spec(case: &Case, target: Option<&Target>, r: Range, noatime: bool) -> OpenSpec {
    OpenSpec {
        path: target.map(|t| t.path().to_path_buf()).unwrap_or_default(),
        write: case.pattern.writes(),
        block_size: r.bs as usize,
        queue_depth: case.queue_depth_requested as usize,
        sync: case.sync,
        // Engines map or address from the file's start: a stream's part
        // ends at its offset plus its span.
        span_bytes: case.offset + r.span,
        sqpoll_cpu: case.placement.sqpoll_cpu,
        mem_policy: case.placement.mem.clone(),
        buffers: case.buffers,
        noatime,
    }
}

/// The workers that ran, and the first real failure among the others
/// (preferred over "another worker could not open", its consequence).
fn first_failure(outs: Vec<Result<WorkerRun, RepError>>) -> (Vec<WorkerRun>, Option<RepError>) {
    let secondary = |e: &RepError| matches!(e, RepError::Fail(m) if m.starts_with(ANOTHER_WORKER));
    let mut ok = Vec::with_capacity(outs.len());
    let mut first_err: Option<RepError> = None;
    for o in outs {
        match o {
            Ok(w) => ok.push(w),
            Err(e) => {
                if first_err.is_none()
                    || (!secondary(&e) && first_err.as_ref().is_some_and(secondary))
                {
                    first_err = Some(e);
                }
            }
        }
    }
    (ok, first_err)
}

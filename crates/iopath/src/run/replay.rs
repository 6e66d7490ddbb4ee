//! `iopath run --replay TRACE` (docs/replay.md, "Replay"): the trace's
//! files recreated in `--dir` ([`Scratch`]: the recorded sizes,
//! incompressible data, each thread's ops split to a stream file of its
//! own; all removed when the run ends), and one repetition of a replay
//! case ([`Runner::run_replay_repetition`]): every recorded thread a thread
//! of its own, through one engine per file it touches ([`exec`]), its
//! figures merged, observed and costed as any repetition's.

mod exec;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

use anyhow::{Context, Result};
use iopath_io::{OpenSpec, SyncPolicy};

use crate::plan::replay::ReplaySource;
use crate::plan::{CacheState, Case, UsageError};
use crate::result::facts::CaseNote;
use crate::result::replay::ReplayDepth;
use crate::result::skip::Skip;
use crate::trace::replay::{split, stream_path, OpReader, SurveyThread};

use super::observe::{Observer, WorkerCost};
use super::worker::WorkerOut;
use super::{merge, RepError, RepOk, Runner, Verified};
use exec::{replay_thread, Lane, ThreadRun};

/// A replay's files in `--dir`: a directory of iopath's own holding the
/// trace's files (`file-N.dat`) and the threads' op streams; removed,
/// with everything in it, when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
    streams: PathBuf,
    source: std::sync::Arc<ReplaySource>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Scratch {
    /// Checks the room in `parent` (exit 2 naming what is needed), then
    /// makes the files (prefilled as a test file is) and the streams.
    pub fn create(
        source: std::sync::Arc<ReplaySource>,
        parent: &Path,
        seed: u64,
        stop: &AtomicBool,
    ) -> Result<Scratch> {
        check_room(&source, parent)?;
        let s = &source.survey;
        let dir = parent.join(format!(".iopath-{}-replay", std::process::id()));
        std::fs::create_dir(&dir)
            .with_context(|| format!("cannot create {} for the replay's files", dir.display()))?;
        let scratch = Scratch {
            streams: dir.join("streams"),
            dir,
            source: source.clone(),
        };
        std::fs::create_dir(&scratch.streams)?;
        for (id, &size) in s.file_sizes.iter().enumerate() {
            if s.is_used(id as u32) {
                prefill(&scratch.file(id as u32), size, seed ^ id as u64, stop)?;
            }
        }
        split(&source.trace, s, &scratch.streams)
            .map_err(|e| anyhow::anyhow!("{}: {e}", source.trace.display()))?;
        Ok(scratch)
    }

    /// Where file `id` of the trace is recreated.
    pub fn file(&self, id: u32) -> PathBuf {
        self.dir.join(format!("file-{id}.dat"))
    }

    /// `m` probed on the largest of the files (usable without a probe
    /// when none holds 4 KiB: its engines' opens will tell).
    pub(super) fn probe(&self, m: iopath_io::Method) -> super::prepare::Probed {
        let s = &self.source.survey;
        let largest = (0..s.file_sizes.len() as u32)
            .filter(|&id| s.is_used(id))
            .max_by_key(|&id| s.file_sizes[id as usize])
            .filter(|&id| s.file_sizes[id as usize] >= 4096);
        let st = largest.map(|id| iopath_io::probe_method(m, &self.file(id), 4096));
        super::prepare::Probed {
            method: m,
            unusable: st
                .as_ref()
                .and_then(|st| st.unusable.clone())
                .map(|reason| Skip::Unusable { reason }),
            notes: st.map(|st| st.notes).unwrap_or_default(),
        }
    }

    /// Writes back and drops the files' cached pages (`--cache cold`).
    fn evict(&self) -> std::io::Result<()> {
        let s = &self.source.survey;
        for id in 0..s.file_sizes.len() as u32 {
            if s.is_used(id) {
                iopath_io::sys::evict_file(&std::fs::File::open(self.file(id))?)?;
            }
        }
        Ok(())
    }
}

/// The room the replay of `source` needs in `parent` (its files and the
/// threads' op streams), with the margin a test file leaves: exit 2
/// naming both when it is not there.
pub fn check_room(source: &ReplaySource, parent: &Path) -> Result<()> {
    let s = &source.survey;
    let need = s.file_bytes_used().saturating_add(s.stream_bytes());
    let free = iopath_io::sys::free_bytes(parent)
        .with_context(|| format!("cannot read free space of {}", parent.display()))?;
    let margin = (free / 10).min(crate::run::target::FREE_MARGIN);
    if need.saturating_add(margin) > free {
        return Err(UsageError(format!(
            "replaying {} needs {} in {} (its files at their recorded sizes and its threads' op streams): {} is available and iopath leaves {} free; use another --dir",
            source.name,
            crate::model::units::fmt_bytes(need),
            parent.display(),
            crate::model::units::fmt_bytes(free),
            crate::model::units::fmt_bytes(margin),
        ))
        .into());
    }
    Ok(())
}

/// Makes `path` `size` bytes of incompressible data, durable.
fn prefill(path: &Path, size: u64, seed: u64, stop: &AtomicBool) -> Result<()> {
    use std::io::Write;
    let f = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, &f);
    let mut rng = iopath_io::data::Rng::new(seed);
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        if stop.load(Ordering::Relaxed) {
            anyhow::bail!("interrupted while making the replay's files");
        }
        let n = left.min(buf.len() as u64) as usize;
        rng.fill(&mut buf[..n]);
        out.write_all(&buf[..n])
            .with_context(|| format!("cannot write {}", path.display()))?;
        left -= n as u64;
    }
    out.flush()?;
    drop(out);
    f.sync_all()
        .with_context(|| format!("cannot sync {}", path.display()))?;
    Ok(())
}

/// What a run replays, for its result.
pub fn info(source: &ReplaySource) -> crate::result::replay::Replay {
    let s = &source.survey;
    crate::result::replay::Replay {
        trace: source.name.clone(),
        ops: s.data_ops() + s.syncs,
        bytes: s.read_bytes + s.write_bytes,
        threads: s.threads.len() as u32,
        timing: match source.timing {
            crate::plan::replay::ReplayTiming::Fast => "fast".into(),
            crate::plan::replay::ReplayTiming::Recorded { scale: 1.0 } => "recorded".into(),
            crate::plan::replay::ReplayTiming::Recorded { scale } => format!("{scale}"),
        },
        left_out: s.left_out,
        depth: Some(match source.qd {
            None => ReplayDepth::Own { program: s.depth() },
            Some(qd) => ReplayDepth::Asked {
                qd,
                program: s.depth(),
            },
        }),
        answer: None,
    }
}

/// The process's CPU before a repetition, to tell what the methods'
/// helper threads (io_uring's io-wq and SQPOLL, a pool's threads) used.
struct Usage {
    process: iopath_io::sys::ThreadUsage,
    main: iopath_io::sys::ThreadUsage,
    bystanders: Vec<(i32, u64)>,
}

impl Usage {
    fn now() -> Usage {
        Usage {
            process: iopath_io::sys::process_usage(),
            main: iopath_io::sys::thread_usage(),
            bystanders: iopath_io::sys::named_threads_cpu_ns(&super::cpu_share::BYSTANDERS),
        }
    }

    /// The helper threads' CPU since [`Usage::now`], the replay threads'
    /// whole lives (`lives`) set apart, for the methods that have them (as
    /// a normal repetition counts it).
    fn helpers_ns(&self, case: &Case, lives: u64) -> u64 {
        let helped = case.method.name().starts_with("uring")
            || matches!(
                case.method,
                iopath_io::Method::Threadpool | iopath_io::Method::Tokio
            );
        if !helped {
            return 0;
        }
        let process = iopath_io::sys::process_usage().since(&self.process).cpu_ns;
        let main = iopath_io::sys::thread_usage().since(&self.main).cpu_ns;
        let bystanders = super::cpu_share::bystanders_ns(
            &self.bystanders,
            &iopath_io::sys::named_threads_cpu_ns(&super::cpu_share::BYSTANDERS),
        );
        super::cpu_share::helper_threads_ns(process, main, lives, bystanders)
    }
}

/// What the threads of one repetition share while they open.
struct Gate {
    opened: Barrier,
    start: Barrier,
    failed: AtomicBool,
}

/// A thread's figures, its flushes, its first engine's caps (none when it
/// touched no file with bytes), and its whole life's CPU (ns).
type ThreadOut = Result<(WorkerOut, u64, Option<iopath_io::Caps>, u64), RepError>;

impl Runner<'_> {
    /// One repetition of a replay case: every thread of the trace at
    /// once, timed from their common start to the last one's end; with a
    /// `limit` ([`crate::plan::replay::repetition_limit`]), no op starts
    /// past it.
    pub(super) fn run_replay_repetition(
        &self,
        case: &Case,
        scratch: Option<&Scratch>,
        obs: &Observer,
        limit: Option<std::time::Duration>,
    ) -> Result<RepOk, RepError> {
        let scratch = scratch.ok_or_else(|| RepError::Fail("no replay files".into()))?;
        let survey = &scratch.source.survey;
        if self.plan.cache == CacheState::Cold {
            scratch
                .evict()
                .map_err(|e| RepError::Fail(format!("cannot drop the replay files' cache: {e}")))?;
        }
        if !case.method.is_null() {
            obs.baseline();
        }
        let gate = Gate {
            opened: Barrier::new(survey.threads.len()),
            start: Barrier::new(survey.threads.len()),
            failed: AtomicBool::new(false),
        };
        let before = obs.before();
        let usage0 = Usage::now();
        let outs: Vec<ThreadOut> = std::thread::scope(|s| {
            let handles: Vec<_> = survey
                .threads
                .iter()
                .map(|t| s.spawn(|| self.replay_one(case, scratch, t, &gate, limit)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(RepError::Fail("a replay thread panicked".into())))
                })
                .collect()
        });
        self.replay_result(case, outs, obs, (&before, &usage0), limit)
    }

    /// The threads' outcomes as one repetition.
    fn replay_result(
        &self,
        case: &Case,
        outs: Vec<ThreadOut>,
        obs: &Observer,
        (before, usage0): (&super::observe::Before, &Usage),
        limit: Option<std::time::Duration>,
    ) -> Result<RepOk, RepError> {
        let mut ok = Vec::with_capacity(outs.len());
        let mut first_err = None;
        for o in outs {
            match o {
                Ok(x) => ok.push(x),
                Err(e) => {
                    let secondary = |e: &RepError| matches!(e, RepError::Fail(m) if m == ANOTHER);
                    if first_err.is_none()
                        || !secondary(&e) && first_err.as_ref().is_some_and(secondary)
                    {
                        first_err = Some(e);
                    }
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        let cut = ok.iter().any(|(w, ..)| w.timed_out);
        let caps = ok.iter().find_map(|(_, _, c, _)| c.clone());
        let lives: u64 = ok.iter().map(|(.., life)| life).sum();
        let mut cost = WorkerCost {
            buffers_bytes: case.block_size * u64::from(case.queue_depth_requested),
            kernel_threads_ns: usage0.helpers_ns(case, lives),
            ..WorkerCost::default()
        };
        for (w, ..) in &ok {
            cost.cpu.add(&w.cpu);
        }
        let workers: Vec<WorkerOut> = ok.into_iter().map(|(w, ..)| w).collect();
        let (mut m, hist) = merge(&workers, self.plan.interval.as_nanos() as u64);
        self.ranks.disk(obs.finish(before, &mut m, case, &cost));
        let affinity = iopath_io::numa::current_affinity().unwrap_or_default();
        let caps = caps.unwrap_or_else(|| iopath_io::Caps {
            is_async: false,
            queue_depth: 1,
            offset_align: 1,
            mem_align: 1,
            notes: Vec::new(),
            buffer_nodes: Vec::new(),
        });
        Ok(RepOk {
            measurement: m,
            engine_notes: caps.notes,
            facts: limit
                .filter(|_| cut)
                .map(|l| CaseNote::ReplayCut {
                    limit_ns: l.as_nanos() as u64,
                })
                .into_iter()
                .collect(),
            queue_depth: caps.queue_depth as u32,
            placement: self.placement_result(case, affinity, Vec::new()),
            hist,
            stream_hists: Vec::new(),
            verified: Verified::default(),
        })
    }

    /// One recorded thread: its engines opened, then (with every thread's
    /// open) its ops replayed.
    fn replay_one(
        &self,
        case: &Case,
        scratch: &Scratch,
        t: &SurveyThread,
        gate: &Gate,
        limit: Option<std::time::Duration>,
    ) -> ThreadOut {
        let opened = self.open_lanes(case, scratch, t);
        let ops = OpReader::open(&stream_path(&scratch.streams, t.tid));
        let ready = match (opened, ops) {
            (Ok(lanes), Ok(ops)) => Ok((lanes, ops)),
            (Err(e), _) => Err(e),
            (_, Err(e)) => Err(RepError::Fail(format!(
                "cannot read the replay's op stream: {e}"
            ))),
        };
        if ready.is_err() {
            gate.failed.store(true, Ordering::SeqCst);
        }
        gate.opened.wait();
        let (lanes, ops) = ready?;
        if gate.failed.load(Ordering::SeqCst) {
            return Err(RepError::Fail(ANOTHER.into()));
        }
        let caps = lanes.first().map(|l| l.engine.caps().clone());
        let run = ThreadRun {
            ops,
            lanes,
            timing: scratch.source.timing,
            interval_ns: self.plan.interval.as_nanos() as u64,
            stop: self.ranks.cut(self.stop),
            limit,
        };
        let (out, flushes) = replay_thread(run, &gate.start)
            .map_err(|(path, e)| RepError::Fail(e.message(&path)))?;
        Ok((out, flushes, caps, iopath_io::sys::thread_usage().cpu_ns))
    }

    /// An engine on each file thread `t` touches, its buffers filled; a
    /// method whose alignment the trace breaks is refused.
    fn open_lanes(
        &self,
        case: &Case,
        scratch: &Scratch,
        t: &SurveyThread,
    ) -> Result<Vec<Lane>, RepError> {
        let survey = &scratch.source.survey;
        let opts = iopath_io::MethodOptions {
            hint: case.hint,
            pool_threads: self.plan.pool_threads.map(|n| n as usize),
        };
        // This thread's own depth (or --qd's), within the case's.
        let depth = scratch
            .source
            .thread_depth(t)
            .min(case.queue_depth_requested) as usize;
        let mut lanes = Vec::with_capacity(t.files.len());
        for &id in &t.files {
            let size = survey.file_sizes.get(id as usize).copied().unwrap_or(0);
            if size == 0 {
                continue;
            }
            let path = scratch.file(id);
            let spec = OpenSpec {
                path: path.clone(),
                write: survey
                    .file_written
                    .get(id as usize)
                    .copied()
                    .unwrap_or(false),
                block_size: case.block_size as usize,
                queue_depth: depth,
                sync: SyncPolicy::None,
                span_bytes: size,
                sqpoll_cpu: case.placement.sqpoll_cpu,
                mem_policy: case.placement.mem.clone(),
                buffers: case.buffers,
                noatime: self.plan.noatime,
            };
            let mut eng = iopath_io::open_with(case.method, &spec, &opts).map_err(|e| match e {
                iopath_io::EngineError::Unsupported { reason, .. } => {
                    RepError::Skip(Skip::Unusable { reason })
                }
                e => RepError::Fail(super::worker::WorkerError::Engine(e).message(&path)),
            })?;
            let align = eng.caps().offset_align as u64;
            let unaligned = survey.unaligned_for(align).unwrap_or(survey.data_ops());
            if unaligned > 0 {
                return Err(RepError::Skip(Skip::ReplayUnaligned {
                    method: case.method.into(),
                    unaligned_ops: unaligned,
                    data_ops: survey.data_ops(),
                    align_bytes: align,
                }));
            }
            fill_buffers(eng.as_mut(), id);
            lanes.push(Lane::new(id, path, size, case.block_size, eng));
        }
        Ok(lanes)
    }
}

/// Each buffer slot of `eng` filled with incompressible data (what the
/// replay's writes write).
fn fill_buffers(eng: &mut dyn iopath_io::Engine, seed: u32) {
    let mut rng = iopath_io::data::Rng::stream(u64::from(seed), 7);
    let depth = eng.caps().queue_depth as u32;
    for slot in 0..depth {
        if let Some(b) = eng.buf_mut(slot) {
            rng.fill(b);
        }
    }
}

/// A thread's failure caused by another's.
const ANOTHER: &str = "another replay thread could not open its engine";

//! The copy pattern: NIOBench's copy of the test file to a new file beside
//! it, by one copy method (`iopath_io::copy`), timed through the
//! destination's flush and close. One thread copies; its figures take the
//! shape of a worker's, so a copy repetition is summarised, observed and
//! reported like any other: `read_bytes` are the bytes copied (each read
//! once and written once), `read_ios` the chunks.
//!
//! Here: the copy itself (`run`), and the runner's copy repetition
//! (`Runner::run_copy_repetition`): the destination made and removed, the
//! copy's cost, its notes and placement.

use std::path::{Path, PathBuf};
use std::time::Instant;

use hdrhistogram::Histogram;
use iopath_io::copy::{CopyMethod, CopySpec};
use iopath_io::{EngineError, Method};

use crate::plan::Case;
use crate::result::facts::CaseNote;
use crate::result::skip::Skip;
use crate::result::MethodName;
use crate::run::target::Target;

use super::observe::{Observer, WorkerCost};
use super::worker::{WorkerOut, MAX_LAT_NS};
use super::{merge, RepError, RepOk, Runner, Verified};

pub use crate::model::copy_method;

/// The methods that can copy.
pub fn copy_methods() -> Vec<MethodName> {
    Method::ALL
        .into_iter()
        .filter(|m| copy_method(*m).is_some())
        .map(MethodName::from)
        .collect()
}

/// A destination name in `dir` (the test file's) that no file has:
/// `iopath-<pid>-copy-<n>.dat` (the `iopath-` prefix marks it as iopath's
/// own, like the test file; a run killed during a copy leaves it, and the
/// next run in that directory removes it: `crate::run::target::reap`; while the
/// run lives it holds the file's `flock`, as it does the named test file's).
pub fn destination(dir: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    dir.join(format!(
        "iopath-{}-copy-{:x}{:x}.dat",
        std::process::id(),
        nanos,
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Copy as `spec` says and measure it: per-chunk latency, per-interval
/// bytes, the thread's CPU. The destination is left for the caller to
/// check and remove (`copy` removes it itself on error).
///
/// The destination is `flock`ed from the moment it is created: `held`
/// receives a handle of it that holds the lock until the caller drops it
/// (after removing the file), so that [`crate::run::target::reap`] never takes
/// the copy of a live run, even one in another pid namespace.
pub fn run(
    method: CopyMethod,
    spec: &CopySpec,
    interval_ns: u64,
    stop: &std::sync::atomic::AtomicBool,
    held: &mut Option<std::fs::File>,
) -> Result<(WorkerOut, Vec<String>), EngineError> {
    let mut hist = Histogram::<u64>::new_with_bounds(1, MAX_LAT_NS, 3).expect("valid bounds");
    let chunks_expected = spec.len / spec.chunk.max(1) as u64 + 2;
    let mut series = Series::new(interval_ns);
    let cpu0 = iopath_io::sys::thread_usage();
    let start = Instant::now();
    let mut lock = |dst: &std::fs::File| {
        if let Ok(f) = dst.try_clone() {
            crate::run::target::reap::claim(&f, crate::run::target::reap::mark);
            *held = Some(f);
        }
    };
    let out = iopath_io::copy::copy_with(
        method,
        spec,
        &mut |bytes, ns| {
            series.add(start.elapsed().as_nanos() as u64, bytes);
            hist.saturating_record(ns.max(1));
            // Ctrl-C ends the copy after this chunk (`iopath_io::copy::STOPPED`).
            !stop.load(std::sync::atomic::Ordering::Relaxed)
        },
        &mut lock,
    )?;
    let end = Instant::now();
    let cpu = iopath_io::sys::thread_usage().since(&cpu0);
    // Close the series at the end (the flush and close come after the last
    // chunk: intervals with nothing copied).
    let (series_bytes, series_ios) = series.close(end.duration_since(start).as_nanos() as u64);
    debug_assert!(out.chunks <= chunks_expected);
    Ok((
        WorkerOut {
            hist,
            read_ios: out.chunks,
            write_ios: 0,
            read_bytes: out.bytes,
            write_bytes: 0,
            stamps: Default::default(),
            start,
            end,
            interrupted: false,
            timed_out: false,
            // Not cut by the case timeout: no room to keep.
            flush_ns: 0,
            verified_bytes: 0,
            verify_ns: 0,
            written: Vec::new(),
            syncs: None,
            series_bytes,
            series_ios,
            cpu,
            // A copy runs on the main thread: its calls are in the case's
            // own I/O, not apart.
            io: None,
        },
        out.notes,
    ))
}

/// A copy's bytes and chunks per interval, as the chunks arrive.
struct Series {
    bytes: Vec<u64>,
    ios: Vec<u64>,
    cur_bytes: u64,
    cur_ios: u64,
    /// The end of the current interval, ns since the start.
    edge_ns: u64,
    interval_ns: u64,
}

impl Series {
    fn new(interval_ns: u64) -> Series {
        let interval_ns = interval_ns.max(1);
        Series {
            bytes: Vec::with_capacity(4096),
            ios: Vec::with_capacity(4096),
            cur_bytes: 0,
            cur_ios: 0,
            edge_ns: interval_ns,
            interval_ns,
        }
    }

    /// Closes every interval that ended before `now_ns`.
    fn advance(&mut self, now_ns: u64) {
        while now_ns >= self.edge_ns {
            self.bytes.push(self.cur_bytes);
            self.ios.push(self.cur_ios);
            (self.cur_bytes, self.cur_ios) = (0, 0);
            self.edge_ns += self.interval_ns;
        }
    }

    /// A chunk of `bytes` copied at `now_ns`.
    fn add(&mut self, now_ns: u64, bytes: u64) {
        self.advance(now_ns);
        self.cur_bytes += bytes;
        self.cur_ios += 1;
    }

    /// The series, its intervals closed up to `end_ns` and the last one
    /// kept: (bytes, chunks) per interval.
    fn close(mut self, end_ns: u64) -> (Vec<u64>, Vec<u64>) {
        // The loop closes intervals ending strictly before the end.
        self.advance(end_ns.saturating_sub(1));
        self.bytes.push(self.cur_bytes);
        self.ios.push(self.cur_ios);
        (self.bytes, self.ios)
    }
}

impl Runner<'_> {
    /// `--verify`, after the timing: the copy at `dst` holds the source's
    /// blocks. What was checked, and the check's outcome.
    fn verify_copy(
        &self,
        t: &Target,
        dst: &Path,
        len: u64,
        pass: u32,
    ) -> (Verified, Result<(), String>) {
        let Some(unit) = self.plan.verify_unit() else {
            return (Verified::default(), Ok(()));
        };
        let t0 = Instant::now();
        let expect = iopath_io::verify::Expect {
            offset: 0,
            seed: self.plan.seed,
            max_pass: if t.info.created { pass } else { u32::MAX },
            exact_pass: None,
        };
        let r = super::verify::check_file(dst, len, unit, expect);
        let verified = Verified {
            bytes: *r.as_ref().unwrap_or(&0),
            ns: t0.elapsed().as_nanos() as u64,
            flush_ns: 0,
        };
        (verified, r.map(|_| ()))
    }

    /// One repetition of the copy pattern: the test file to a new file
    /// beside it, removed afterwards whatever happened.
    pub(super) fn run_copy_repetition(
        &self,
        case: &Case,
        target: Option<&Target>,
        obs: &Observer,
        pass: u32,
    ) -> Result<RepOk, RepError> {
        let t = target.ok_or(RepError::Skip(Skip::CopyNeedsFile))?;
        let job = copy_job(case, t)?;
        let before = obs.before();
        let (self0, main0) = (
            iopath_io::sys::process_usage(),
            iopath_io::sys::thread_usage(),
        );
        let Copied {
            out,
            engine_notes,
            verified,
        } = self.copied(t, &job, pass)?;
        let cost = copy_cost(
            job.method,
            case,
            &out,
            job.spec.len,
            job.depth,
            (&self0, &main0),
        );
        let facts = self.copy_facts(case);
        let (mut m, hist) = merge(&[out], self.plan.interval.as_nanos() as u64);
        self.ranks.disk(obs.finish(&before, &mut m, case, &cost));
        // One thread copies: this one (not pinned; the copy methods own
        // their buffers, so no buffer nodes are read back).
        let affinity = iopath_io::numa::current_affinity().unwrap_or_default();
        let mut placed = self.placement_result(case, affinity, Vec::new());
        (placed.cpus, placed.mem_policy, placed.sqpoll_cpu) = (Vec::new(), None, None);
        Ok(RepOk {
            measurement: m,
            engine_notes,
            facts,
            queue_depth: job.depth,
            placement: placed,
            hist,
            stream_hists: Vec::new(),
            verified,
        })
    }

    /// The copy run, checked (`--verify`) and its destination removed:
    /// its figures, or why it did not run.
    fn copied(&self, t: &Target, job: &CopyJob, pass: u32) -> Result<Copied, RepError> {
        let spec = &job.spec;
        // A handle of the destination holding its `flock` until it is gone.
        let mut held = None;
        let res = run(
            job.method,
            spec,
            self.plan.interval.as_nanos() as u64,
            self.ranks.cut(self.stop),
            &mut held,
        );
        // `--verify`, after the timing: the copy holds the source's blocks.
        let (verified, check) = match &res {
            Ok(_) => self.verify_copy(t, &spec.dst, spec.len, pass),
            Err(_) => (Verified::default(), Ok(())),
        };
        // The destination is iopath's own: gone before anything else.
        let _ = std::fs::remove_file(&spec.dst);
        drop(held);
        check.map_err(RepError::Fail)?;
        match res {
            Ok((out, engine_notes)) => Ok(Copied {
                out,
                engine_notes,
                verified,
            }),
            Err(EngineError::Unsupported { reason, .. }) => {
                Err(RepError::Skip(Skip::Unusable { reason }))
            }
            Err(EngineError::Invalid(why)) if why == iopath_io::copy::STOPPED => {
                Err(RepError::Skip(Skip::CopyInterrupted {
                    cause: crate::stop_cause().to_string(),
                }))
            }
            Err(e) => Err(RepError::Fail(
                super::worker::WorkerError::Engine(e).message(&t.info.path),
            )),
        }
    }

    /// The runner's notes on a copy case: one thread copies, the whole
    /// file, unplaced.
    fn copy_facts(&self, case: &Case) -> Vec<CaseNote> {
        let mut facts = Vec::new();
        if case.threads > 1 {
            facts.push(CaseNote::CopyOneThread {
                threads: case.threads,
            });
        }
        if self.plan.io_size.is_some() {
            facts.push(CaseNote::CopyWhole {
                span: case.span.is_some(),
            });
        }
        if !case.placement.is_default() {
            facts.push(CaseNote::CopyUnplaced);
        }
        facts
    }
}

/// What a copy repetition runs: the copy method, its spec (source,
/// destination, length, chunk), and its depth.
struct CopyJob {
    method: CopyMethod,
    spec: CopySpec,
    depth: u32,
}

/// A copy that ran: its figures as a worker's, the engine's notes, and
/// what `--verify` checked.
struct Copied {
    out: WorkerOut,
    engine_notes: Vec<String>,
    verified: Verified,
}

/// The copy a case asks of target `t`: refused when its method cannot copy.
fn copy_job(case: &Case, t: &Target) -> Result<CopyJob, RepError> {
    let cm = copy_method(case.method).ok_or_else(|| {
        RepError::Skip(Skip::NoCopyMethod {
            method: case.method.into(),
            methods: copy_methods(),
        })
    })?;
    let len = case.span.map_or(t.size(), |s| s.min(t.size()));
    let depth = if cm == iopath_io::copy::CopyMethod::Uring {
        case.queue_depth_requested.max(1)
    } else {
        1
    };
    let spec = CopySpec {
        src: t.path().to_path_buf(),
        dst: destination(t.dir()),
        len,
        chunk: case.block_size as usize,
        depth: depth as usize,
        sync: case.sync,
    };
    Ok(CopyJob {
        method: cm,
        spec,
        depth,
    })
}

/// What a copy cost: its thread's CPU, its buffers, and for io_uring the
/// CPU of its kernel threads (what the process used beyond this thread,
/// from `usage0`).
fn copy_cost(
    cm: CopyMethod,
    case: &Case,
    out: &WorkerOut,
    len: u64,
    depth: u32,
    usage0: (&iopath_io::sys::ThreadUsage, &iopath_io::sys::ThreadUsage),
) -> WorkerCost {
    let (self0, main0) = usage0;
    let self_ns = iopath_io::sys::process_usage().since(self0).cpu_ns;
    let main_ns = iopath_io::sys::thread_usage().since(main0).cpu_ns;
    WorkerCost {
        cpu: out.cpu,
        // The copy's own buffers: none for the kernel's copies and the
        // mapped source, one chunk for the loops, a chunk per slot in
        // flight for io_uring.
        buffers_bytes: match cm {
            iopath_io::copy::CopyMethod::CopyFileRange
            | iopath_io::copy::CopyMethod::Sendfile
            | iopath_io::copy::CopyMethod::MmapWrite => 0,
            iopath_io::copy::CopyMethod::Uring => {
                u64::from(depth).min(len.div_ceil(case.block_size).max(1)) * case.block_size
            }
            _ => case.block_size,
        },
        kernel_threads_ns: if cm == iopath_io::copy::CopyMethod::Uring {
            self_ns.saturating_sub(main_ns)
        } else {
            0
        },
        ..WorkerCost::default()
    }
}

#[cfg(test)]
mod tests {
    use super::Series;

    /// Each interval a chunk passes closes with what it held, empty ones
    /// too; the close fills the intervals up to the end and keeps the last.
    #[test]
    fn copy_series_closes_each_interval_and_keeps_the_last() {
        let mut s = Series::new(10);
        s.add(5, 100);
        s.add(25, 50);
        s.add(29, 1);
        assert_eq!(s.close(31), (vec![100, 0, 51, 0], vec![1, 0, 2, 0]));
        let mut s = Series::new(10);
        s.add(5, 7);
        assert_eq!(s.close(10), (vec![7], vec![1]));
        assert_eq!(Series::new(0).close(0), (vec![0], vec![0]));
    }
}

//! Each request's time taken apart ([`LatencySplit`]): one bpftrace
//! program for the whole run (`--latency-split`, as root), started once
//! before the first case through the recorder's runner
//! ([`crate::record::bpftrace`]), and `/sys/block/*/stat` averages without
//! it.
//!
//! The program (`latency_split.bt`) attaches the block tracepoints of the
//! target's disks (`block_bio_queue`, `block_rq_issue`,
//! `block_rq_complete`) and the `pread`/`pwrite`-family system call
//! tracepoints of iopath's threads. In the kernel it sums, per thread that
//! queued the request (0 for another process's): the queueing time (bio
//! queued to request issued), the service time (issued to completed) and
//! the requests; per thread that made a call: the submission (call entry
//! to its first bio queued) and the completion (its thread's last request
//! completed to the call's return), over the calls that made a request,
//! and the calls that made none. iopath asks for the sums at the end of
//! each repetition with a `getppid` call (the program's trigger): the
//! program prints and clears them, then a numbered end line. The case's
//! own threads are all of iopath's but the main thread and the
//! bystanders (`--neighbour`'s reader): workers, pool threads, io-wq.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::record::bpftrace::{self, Bpftrace, BpftraceError, Message};
use crate::result::latency_split::{LatencySplit, SplitFallback, SplitSource};
use crate::system::metrics::blockdev::{DeviceStack, DiskCounters};

/// The program, its filters to be filled in ([`program`]).
const PROGRAM: &str = include_str!("latency_split.bt");

/// The printf line that ends a repetition's sums.
const END_LINE: &str = "iopath-split-end ";

/// How long the sums of a repetition may take to come back.
const FLUSH_DEADLINE: Duration = Duration::from_secs(10);

/// The split's source for a run: the request-based disks where the case's
/// requests are queued ([`request_disks`]), their counters at the start
/// of the repetition, and the tracer or why there is none.
#[derive(Debug)]
pub struct Split {
    mode: Mode,
    disks: DeviceStack,
    before: Mutex<Option<DiskCounters>>,
}

#[derive(Debug)]
enum Mode {
    /// Not asked for: the `/sys/block` averages, no fallback said.
    Averages,
    Tracing(Tracer),
    Fallback(SplitFallback),
}

/// bpftrace attached to the target's disks, and the number of the last
/// sums asked for.
#[derive(Debug)]
pub struct Tracer {
    inner: Mutex<(Bpftrace, u64)>,
    pid: i32,
    /// Set once bpftrace has not answered in time (or has exited): it is
    /// not asked again, so that a hung tracer costs one deadline, not one
    /// per repetition.
    silent: AtomicBool,
    /// tracefs where this run mounted it: unmounted when dropped, after
    /// `inner`'s bpftrace has stopped.
    _tracefs: Option<bpftrace::TracefsMount>,
}

/// One repetition's sums, by map name and thread id.
type Sums = BTreeMap<String, BTreeMap<i64, u64>>;

impl Split {
    /// No split (no target, before [`Split::start`]).
    pub fn none() -> Split {
        Split {
            mode: Mode::Averages,
            disks: DeviceStack::default(),
            before: Mutex::new(None),
        }
    }

    /// The split for a run on `stack`: tracing when `asked`, as root, with
    /// bpftrace; else the averages, with the reason when asked.
    pub fn start(asked: bool, stack: &DeviceStack) -> Split {
        let sys = Path::new("/sys/class/block");
        let disks = request_disks(stack, sys);
        let mode = if asked {
            trace(&disks, sys)
        } else {
            Mode::Averages
        };
        Split {
            mode,
            disks: DeviceStack {
                leaves: disks,
                ..DeviceStack::default()
            },
            before: Mutex::new(None),
        }
    }

    /// Why the tracepoints asked for are not used; `None` when tracing or
    /// not asked.
    pub fn fallback(&self) -> Option<SplitFallback> {
        match self.mode {
            Mode::Fallback(why) => Some(why),
            _ => None,
        }
    }

    /// At the start of a repetition: the disks' counters, and the sums the
    /// program made since the last repetition dropped (the preparation).
    pub fn before(&self) {
        if let Ok(mut b) = self.before.lock() {
            *b = self.disks.snapshot(Path::new("/sys"));
        }
        if let Mode::Tracing(t) = &self.mode {
            let _ = t.flush();
        }
    }

    /// The split of the repetition since [`Split::before`] (`m`'s requests
    /// and the sums); `None` without a request-based disk or requests.
    /// `direct`: the method bypasses the page cache (a call of its that
    /// made no request was no cache hit).
    pub fn of(&self, direct: bool) -> Option<LatencySplit> {
        let averages = |fallback| {
            let before = (*self.before.lock().ok()?)?;
            let d = self.disks.snapshot(Path::new("/sys"))?.delta(&before);
            let t = d.time?;
            LatencySplit::from_disk_stat(
                t.read_ticks_ms + t.write_ticks_ms,
                d.reads + d.writes,
                fallback,
            )
        };
        match &self.mode {
            Mode::Averages => averages(None),
            Mode::Fallback(why) => averages(Some(*why)),
            Mode::Tracing(t) => match t.flush() {
                // The averages kept beside, to check the traced against.
                Some(sums) => of_sums(&sums, &own_filter(t.pid), direct).map(|s| LatencySplit {
                    disk_stat_ns: self.read_average(),
                    ..s
                }),
                None => averages(Some(SplitFallback::TracerSilent)),
            },
        }
    }
}

impl Split {
    /// The disks' read ticks over reads completed since
    /// [`Split::before`], ns; `None` without reads.
    fn read_average(&self) -> Option<f64> {
        let before = (*self.before.lock().ok()?)?;
        let d = self.disks.snapshot(Path::new("/sys"))?.delta(&before);
        let ticks = d.time?.read_ticks_ms;
        (d.reads > 0).then(|| ticks as f64 * 1e6 / d.reads as f64)
    }
}

/// bpftrace on `disks`, or why not.
fn trace(disks: &[String], sys: &Path) -> Mode {
    if !rustix::process::geteuid().is_root() {
        return Mode::Fallback(SplitFallback::NotRoot);
    }
    let Some((bio, rq)) = devices(disks, sys) else {
        return Mode::Fallback(SplitFallback::NoBlockDevice);
    };
    // Unmounted with the tracer (or now, if bpftrace does not start).
    let Ok(tracefs) = bpftrace::ensure_tracefs("run without --latency-split") else {
        return Mode::Fallback(SplitFallback::TracerFailed);
    };
    let pid = std::process::id();
    // Map keys: one per request in flight and per thread.
    let env = [("BPFTRACE_MAP_KEYS_MAX", "65536")];
    match Bpftrace::start(&program(&bio, &rq), &[pid.to_string()], &env) {
        Ok(bt) => Mode::Tracing(Tracer {
            inner: Mutex::new((bt, 0)),
            pid: pid as i32,
            silent: AtomicBool::new(false),
            _tracefs: tracefs,
        }),
        Err(BpftraceError::Missing) => Mode::Fallback(SplitFallback::NoBpftrace),
        Err(_) => Mode::Fallback(SplitFallback::TracerFailed),
    }
}

/// The disks where the case's own requests are queued: the whole disk the
/// file system sits on when it is request-based (a loop device, a disk;
/// what it does below, a loop device's reads of its backing file, is its
/// worker's), else (device-mapper, md) the walk's leaves that are.
fn request_disks(stack: &DeviceStack, sys: &Path) -> Vec<String> {
    let disk_of = |name: &str| -> Option<PathBuf> {
        let dir = sys.join(name).canonicalize().ok()?;
        let disk = if dir.join("partition").exists() {
            dir.parent()?.to_path_buf()
        } else {
            dir
        };
        disk.join("mq").exists().then_some(disk)
    };
    let name = |p: PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned());
    if let Some(top) = stack.top.as_deref().and_then(disk_of) {
        return name(top).into_iter().collect();
    }
    let mut out: Vec<String> = stack
        .leaves
        .iter()
        .filter_map(|l| disk_of(l).and_then(name))
        .collect();
    out.dedup();
    out
}

impl Tracer {
    /// Asks the program for its sums and waits for them; `None` (and no
    /// more asking) when they do not come.
    fn flush(&self) -> Option<Sums> {
        if self.silent.load(Ordering::Relaxed) {
            return None;
        }
        let sums = self.ask();
        if sums.is_none() {
            self.silent.store(true, Ordering::Relaxed);
        }
        sums
    }

    fn ask(&self) -> Option<Sums> {
        let mut g = self.inner.lock().ok()?;
        let (bt, seq) = &mut *g;
        *seq += 1;
        let want = *seq;
        // The program's trigger (it prints and clears its sums).
        let _ = rustix::process::getppid();
        let deadline = Instant::now() + FLUSH_DEADLINE;
        let mut sums = Sums::new();
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match bt.messages.recv_timeout(left).ok()? {
                Message::Printf(line) => {
                    let Some(n) = line.strip_prefix(END_LINE) else {
                        continue;
                    };
                    if n.trim().parse::<u64>().ok()? >= want {
                        return Some(sums);
                    }
                    // A late answer to an earlier request: start again.
                    sums.clear();
                }
                Message::Other(v) => add_map(&mut sums, &v),
            }
        }
    }
}

/// The thread ids that are not the case's: 0 (another process), the main
/// thread, the bystanders.
fn own_filter(pid: i32) -> Vec<i64> {
    let mut not_own = vec![0, i64::from(pid)];
    not_own.extend(
        iopath_io::sys::named_threads_cpu_ns(&super::cpu_share::BYSTANDERS)
            .into_iter()
            .map(|(tid, _)| i64::from(tid)),
    );
    not_own
}

/// Adds a `{"type": "map", "data": {"@name": {"tid": n}}}` line to `sums`.
fn add_map(sums: &mut Sums, v: &serde_json::Value) {
    if v.get("type").and_then(|t| t.as_str()) != Some("map") {
        return;
    }
    let Some(data) = v.get("data").and_then(|d| d.as_object()) else {
        return;
    };
    for (name, map) in data {
        let entry = sums
            .entry(name.trim_start_matches('@').to_string())
            .or_default();
        for (k, n) in map.as_object().into_iter().flatten() {
            if let (Ok(tid), Some(n)) = (k.parse::<i64>(), n.as_u64()) {
                *entry.entry(tid).or_default() += n;
            }
        }
    }
}

/// The split from one repetition's sums, the threads in `not_own` counted
/// as other traffic; `None` when the case's threads made no request. A
/// call whose request was not tied to it is `unmatched`; one that queued
/// none is `cached`, but for a method that bypasses the page cache
/// (`direct`), where it is `unmatched` too.
pub fn of_sums(sums: &Sums, not_own: &[i64], direct: bool) -> Option<LatencySplit> {
    let total = |name: &str, own: bool| -> u64 {
        sums.get(name).map_or(0, |m| {
            m.iter()
                .filter(|(tid, _)| not_own.contains(tid) != own)
                .map(|(_, n)| n)
                .sum()
        })
    };
    let requests = total("requests", true);
    if requests == 0 {
        return None;
    }
    let calls = total("calls", true);
    let per = |sum: u64, n: u64| (n > 0).then(|| sum as f64 / n as f64);
    let (mut bare, mut cached) = (total("bare", true), total("cached", true));
    let (mut lost, mut lost_ns) = (total("unmatched", true), total("unmatched_ns", true));
    if direct {
        (lost, lost_ns) = (lost + bare, lost_ns + cached);
        (bare, cached) = (0, 0);
    }
    // The calls' own queue and device parts where there are calls (a
    // buffered read's read-ahead requests overlap inside them), else the
    // requests'.
    // Every read request paired with its bio, the case's and others':
    // the block layer's time per read, as /sys/block's read ticks over
    // reads average it.
    let both = |name: &str| total(name, true) + total(name, false);
    let block_ns = per(both("rblock"), both("reads"));
    let (queue, device, n) = if calls > 0 {
        (total("cqueue", true), total("cdevice", true), calls)
    } else {
        (total("queue", true), total("service", true), requests)
    };
    Some(LatencySplit {
        source: SplitSource::Tracepoints,
        fallback: None,
        submission_ns: per(total("submission", true), calls),
        queue_ns: per(queue, n),
        device_ns: device as f64 / n as f64,
        completion_ns: per(total("completion", true), calls),
        cached_ns: per(cached, bare),
        unmatched_ns: per(lost_ns, lost),
        withheld: None,
        runnable_total_ns: Some(total("runnable", true) as f64),
        block_ns,
        disk_stat_ns: None,
        requests,
        calls,
        calls_without_request: bare,
        calls_unmatched: lost,
        other_requests: total("requests", false) + total("unpaired", false),
        ios: 0,
    })
}

/// The program with its filters: bios on `bio`'s devices, requests on
/// `rq`'s (kernel device numbers).
fn program(bio: &[u64], rq: &[u64]) -> String {
    let filter = |devs: &[u64]| {
        devs.iter()
            .map(|d| format!("args->dev == {d}"))
            .collect::<Vec<_>>()
            .join(" || ")
    };
    PROGRAM
        .replace("BIO_FILTER", &filter(bio))
        .replace("RQ_FILTER", &filter(rq))
}

/// The kernel device numbers (`major << 20 | minor`) of the disks under
/// `leaves` (a partition's disk) and, for bios, of their partitions too;
/// `None` when there is none.
fn devices(leaves: &[String], sys: &Path) -> Option<(Vec<u64>, Vec<u64>)> {
    let (mut bio, mut rq) = (Vec::new(), Vec::new());
    for leaf in leaves {
        let dir = sys.join(leaf).canonicalize().ok()?;
        let disk = if dir.join("partition").exists() {
            dir.parent()?.to_path_buf()
        } else {
            dir
        };
        let d = dev_of(&disk)?;
        rq.push(d);
        bio.push(d);
        for e in std::fs::read_dir(&disk).ok()?.flatten() {
            if e.path().join("partition").exists() {
                bio.extend(dev_of(&e.path()));
            }
        }
    }
    (!rq.is_empty()).then_some((bio, rq))
}

/// A block device's `dev` file (`7:0`) as the tracepoints number it.
fn dev_of(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("dev")).ok()?;
    let (maj, min) = text.trim().split_once(':')?;
    Some((maj.parse::<u64>().ok()? << 20) | min.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(lines: &[&str]) -> Sums {
        let mut s = Sums::new();
        for l in lines {
            add_map(&mut s, &serde_json::from_str(l).unwrap());
        }
        s
    }

    /// bpftrace's own lines (from a run on a loop device): the worker's
    /// requests are the case's, another process's (0) and the main
    /// thread's are other traffic.
    #[test]
    fn each_part_is_the_case_threads_sum_over_its_requests_or_calls() {
        let s = sums(&[
            r#"{"type": "map", "data": {"@queue": {"3356": 9000, "0": 777, "10": 5}}}"#,
            r#"{"type": "map", "data": {"@service": {"3356": 600000, "0": 1}}}"#,
            r#"{"type": "map", "data": {"@requests": {"3356": 50, "0": 7, "10": 1}}}"#,
            r#"{"type": "map", "data": {"@submission": {"3356": 12000}}}"#,
            r#"{"type": "map", "data": {"@completion": {"3356": 40000}}}"#,
            r#"{"type": "map", "data": {"@calls": {"3356": 40}}}"#,
            r#"{"type": "map", "data": {"@bare": {"3356": 10}}}"#,
            r#"{"type": "map", "data": {"@cached": {"3356": 25000}}}"#,
            r#"{"type": "map", "data": {"@cqueue": {"3356": 8000}}}"#,
            r#"{"type": "map", "data": {"@cdevice": {"3356": 480000}}}"#,
            r#"{"type": "map", "data": {"@unpaired": {"0": 3}}}"#,
            r#"{"type": "map", "data": {"@runnable": {"3356": 70000, "10": 5}}}"#,
            r#"{"type": "map", "data": {"@rblock": {"3356": 500000, "0": 700}}}"#,
            r#"{"type": "map", "data": {"@reads": {"3356": 40, "0": 2}}}"#,
            r#"{"type": "attached_probes", "data": {"probes": 19}}"#,
        ]);
        let split = of_sums(&s, &[0, 10], false).unwrap();
        assert_eq!(split.source, SplitSource::Tracepoints);
        // Per call (the calls' own queue and device times).
        assert_eq!(split.queue_ns, Some(200.0));
        assert_eq!(split.device_ns, 12_000.0);
        assert_eq!(split.cached_ns, Some(2500.0));
        assert_eq!(split.submission_ns, Some(300.0));
        assert_eq!(split.completion_ns, Some(1000.0));
        assert_eq!((split.requests, split.other_requests), (50, 11));
        // The block layer's time per read, as /sys/block averages it:
        // every read paired with its bio, the case's and others' (not the
        // writes, nor the 3 unpaired, untimed).
        assert_eq!(split.block_ns, Some(500_700.0 / 42.0));
        // The case's threads' wait for a CPU outside the calls, in all.
        assert_eq!(split.runnable_total_ns, Some(70_000.0));
        assert_eq!((split.calls, split.calls_without_request), (40, 10));
        // An async method: no call traced, the two ends unknown; the
        // queue and device parts are the requests'.
        let s = sums(&[
            r#"{"type": "map", "data": {"@requests": {"5": 4}}}"#,
            r#"{"type": "map", "data": {"@service": {"5": 400}}}"#,
            r#"{"type": "map", "data": {"@queue": {"5": 40}}}"#,
        ]);
        let split = of_sums(&s, &[0], false).unwrap();
        assert_eq!((split.submission_ns, split.completion_ns), (None, None));
        assert_eq!((split.queue_ns, split.device_ns), (Some(10.0), 100.0));
        assert_eq!(of_sums(&Sums::new(), &[0], false), None);
    }

    /// An O_DIRECT call that the tracer did not tie to a request, or
    /// that queued none, is no cache hit: `unmatched`, and the sums
    /// still close (every call in one bucket).
    #[test]
    fn a_direct_calls_unmatched_request_is_not_a_cache_hit() {
        let s = sums(&[
            r#"{"type": "map", "data": {"@requests": {"7": 50}}}"#,
            r#"{"type": "map", "data": {"@calls": {"7": 40}}}"#,
            r#"{"type": "map", "data": {"@cdevice": {"7": 400000}}}"#,
            r#"{"type": "map", "data": {"@bare": {"7": 2}}}"#,
            r#"{"type": "map", "data": {"@cached": {"7": 4000}}}"#,
            r#"{"type": "map", "data": {"@unmatched": {"7": 8}}}"#,
            r#"{"type": "map", "data": {"@unmatched_ns": {"7": 96000}}}"#,
        ]);
        let direct = of_sums(&s, &[0], true).unwrap();
        assert_eq!((direct.cached_ns, direct.calls_without_request), (None, 0));
        assert_eq!(direct.calls_unmatched, 10);
        assert_eq!(direct.unmatched_ns, Some(10_000.0));
        let buffered = of_sums(&s, &[0], false).unwrap();
        assert_eq!(buffered.cached_ns, Some(2000.0));
        assert_eq!(buffered.unmatched_ns, Some(12_000.0));
        for x in [direct, buffered] {
            assert_eq!(x.calls + x.calls_without_request + x.calls_unmatched, 50);
        }
        // The program files a call that queued no bio apart from one whose
        // request it lost.
        assert!(PROGRAM.contains("@unmatched[tid] = count()"));
    }

    #[test]
    fn the_program_filters_bios_and_requests_on_the_targets_devices() {
        let p = program(&[7 << 20, (254 << 20) | 1], &[7 << 20]);
        assert!(p.contains("/args->dev == 7340032 || args->dev == 266338305/"));
        assert!(p.contains("/args->dev == 7340032/"));
        assert!(!p.contains("BIO_FILTER") && !p.contains("RQ_FILTER"));
    }
}

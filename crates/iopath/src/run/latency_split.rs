//! Each request's time taken apart ([`LatencySplit`]): one bpftrace
//! program for the whole run (`--latency-split`, as root), started once
//! before the first case through the recorder's runner
//! ([`crate::record::bpftrace`]), and `/sys/block/*/stat` averages without
//! it.
//!
//! The program (`latency_split.bt`) attaches the block tracepoints of the
//! target's disks (`block_bio_queue`, `block_getrq`, `block_rq_issue`,
//! `block_rq_complete`) and the `pread`/`pwrite`-family system call
//! tracepoints of iopath's threads. In the kernel it sums, per thread that
//! queued the request (0 for another process's): the queueing time (bio
//! queued to request issued; a request split off a larger bio, which
//! queues no bio of its own, from its allocation), the service time
//! (issued to completed) and the requests; the reads' block time
//! (`block_ns`, to check against `/sys/block`: where the kernel has the
//! block accounting tracepoints, `latency_split_io.bt`, between them, else
//! queued to completed); per thread that made a call: the submission (call entry
//! to its first bio queued) and the completion (its thread's last request
//! completed to the call's return), over the calls that made a request,
//! and the calls that made none. iopath asks for the sums at the end of
//! each repetition with a `getppid` call (the program's trigger): the
//! program prints and clears them, then a numbered end line. The case's
//! own threads are all of iopath's but the main thread and the
//! bystanders (`--neighbour`'s reader): workers, pool threads, io-wq.
//!
//! Where the kernel has the io_uring tracepoints the program has a second
//! part (`latency_split_ring.bt`): each request of iopath's rings from the
//! kernel taking its SQE to its CQE posted, tied to the block request of
//! the bio its thread queued issuing it. The kernel's times are summed
//! from the last flush (the base line the program prints with the sums);
//! iopath's workers sum their own submit and reap stamps ([`Stamps`]) on
//! the same clock, and where both count the same requests, the
//! differences of the sums are the requests' mean time in the ring before
//! the kernel took them and after it posted them ([`RingWait`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::record::bpftrace::{self, Bpftrace, BpftraceError, Message};
use crate::result::latency_split::{
    BlockTiming, LatencySplit, RingWait, SplitFallback, SplitSource,
};
use crate::system::metrics::blockdev::{DeviceStack, DiskCounters};

mod calibration;
pub use calibration::Calibration;

/// The program, its filters to be filled in ([`program`]).
const PROGRAM: &str = include_str!("latency_split.bt");

/// The program's io_uring part: its probes, then (after `// @@ flush`
/// and `// @@ end` lines) what the flush and the end add ([`program`]).
const RING_PROGRAM: &str = include_str!("latency_split_ring.bt");

/// Where the kernel's io_uring tracepoints are listed when it has them.
const RING_EVENTS: &str = "/sys/kernel/tracing/events/io_uring/io_uring_complete";

/// The program's block-time part where the kernel has the block layer's
/// accounting tracepoints (after `// @@ flush` and `// @@ end` lines,
/// what the flush and the end add, as in [`RING_PROGRAM`]).
const IO_PROGRAM: &str = include_str!("latency_split_io.bt");

/// Where the kernel's block accounting tracepoints are listed (6.5+).
const IO_EVENTS: &str = "/sys/kernel/tracing/events/block/block_io_done";

/// Which optional tracepoints the kernel has, so which parts the program
/// takes ([`program`]).
#[derive(Clone, Copy, Debug, Default)]
struct Kernel {
    /// io_uring's (`latency_split_ring.bt`).
    ring: bool,
    /// The block layer's accounting (`latency_split_io.bt`).
    accounting: bool,
}

/// The printf line that ends a repetition's sums.
const END_LINE: &str = "iopath-split-end ";

/// The printf line with the time the io_uring sums count from.
const BASE_LINE: &str = "iopath-split-base ";

/// The map the base line is kept in, under thread 0.
const BASE_MAP: &str = "rbase";

/// iopath's own stamps of the requests its workers completed in a
/// repetition: how many, and the sums of the clock read right before the
/// call that handed each over and right after the one that reaped it, on
/// CLOCK_MONOTONIC (bpftrace's `nsecs`), ns. The sums wrap: only their
/// differences from the kernel's count.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stamps {
    pub requests: u64,
    pub submit_sum: u64,
    pub reap_sum: u64,
}

impl Stamps {
    /// A worker's `requests`, with their submit and reap stamps summed in
    /// ns since its `start`.
    pub fn since(start: Instant, requests: u64, submit: u64, reap: u64) -> Stamps {
        let shift = requests.wrapping_mul(mono_ns(start));
        Stamps {
            requests,
            submit_sum: submit.wrapping_add(shift),
            reap_sum: reap.wrapping_add(shift),
        }
    }

    /// Another worker's stamps added.
    pub fn add(&mut self, o: &Stamps) {
        self.requests += o.requests;
        self.submit_sum = self.submit_sum.wrapping_add(o.submit_sum);
        self.reap_sum = self.reap_sum.wrapping_add(o.reap_sum);
    }
}

/// `at` on CLOCK_MONOTONIC, ns (`Instant` reads that clock on Linux):
/// to within half the time between two reads of the clock.
fn mono_ns(at: Instant) -> u64 {
    let before = Instant::now();
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let now = (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64);
    let after = Instant::now();
    let ago = (before.duration_since(at) + after.duration_since(at)) / 2;
    now.saturating_sub(ago.as_nanos() as u64)
}

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
    /// How the program times a read's block time (which parts it took).
    block_timing: BlockTiming,
    /// Set once bpftrace has not answered in time (or has exited): it is
    /// not asked again, so that a hung tracer costs one deadline, not one
    /// per repetition.
    silent: AtomicBool,
    /// `/dev/null`, read 0 bytes at a time to measure a traced call's way
    /// in and out ([`Calibration`]); `None` where it does not open.
    null: Option<std::fs::File>,
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
    /// made no request was no cache hit); `stamps`: the workers' own.
    pub fn of(&self, direct: bool, stamps: &Stamps) -> Option<LatencySplit> {
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
            Mode::Tracing(t) => match (t.calibrate(), t.flush()) {
                // (A silent tracer is not calibrated: `calibrate` checks.)
                // The averages kept beside, to check the traced against.
                (cal, Some(sums)) => {
                    of_sums(&sums, &own_filter(t.pid), direct, stamps, &cal).map(|s| LatencySplit {
                        disk_stat_ns: self.read_average(),
                        block_timing: s.block_ns.map(|_| t.block_timing),
                        ..s
                    })
                }
                (_, None) => averages(Some(SplitFallback::TracerSilent)),
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
    let Some(devs) = devices(disks, sys) else {
        return Mode::Fallback(SplitFallback::NoBlockDevice);
    };
    // Unmounted with the tracer (or now, if bpftrace does not start).
    let Ok(tracefs) = bpftrace::ensure_tracefs("run without --latency-split") else {
        return Mode::Fallback(SplitFallback::TracerFailed);
    };
    let pid = std::process::id();
    // Map keys: one per request in flight and per thread.
    let env = [("BPFTRACE_MAP_KEYS_MAX", "65536")];
    let kernel = Kernel {
        ring: Path::new(RING_EVENTS).exists(),
        accounting: Path::new(IO_EVENTS).exists(),
    };
    match Bpftrace::start(&program(&devs, kernel), &[pid.to_string()], &env) {
        Ok(bt) => Mode::Tracing(Tracer {
            inner: Mutex::new((bt, 0)),
            pid: pid as i32,
            block_timing: if kernel.accounting {
                BlockTiming::Accounting
            } else {
                BlockTiming::BioQueued
            },
            silent: AtomicBool::new(false),
            null: std::fs::File::open("/dev/null").ok(),
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
    /// The calls that move nothing, timed ([`Calibration::measure`]);
    /// none off the main thread, without `/dev/null`, once the tracer is
    /// silent, or where a call fails.
    fn calibrate(&self) -> Calibration {
        // The program takes the main thread's calls alone as these.
        if rustix::thread::gettid() != rustix::process::getpid() {
            return Calibration::default();
        }
        let Some(null) = self
            .null
            .as_ref()
            .filter(|_| !self.silent.load(Ordering::Relaxed))
        else {
            return Calibration::default();
        };
        Calibration::measure(std::os::fd::AsFd::as_fd(null))
    }

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
                    if let Some(base) = line.strip_prefix(BASE_LINE) {
                        let base = base.trim().parse::<u64>().ok()?;
                        sums.entry(BASE_MAP.into()).or_default().insert(0, base);
                        continue;
                    }
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
        let name = name.trim_start_matches('@');
        let by_cpu = BY_CPU.contains(&name);
        let mut on = Vec::new();
        for (k, n) in map.as_object().into_iter().flatten() {
            let (Ok(key), Some(n)) = (k.parse::<i64>(), n.as_u64()) else {
                continue;
            };
            // A call count's key is its thread and the CPU it left the
            // kernel on: the thread's sum, and the CPU's apart.
            let tid = if by_cpu { key / CPU_KEYS } else { key };
            *entry.entry(tid).or_default() += n;
            if by_cpu {
                on.push(((key % CPU_KEYS) as u32, tid, n));
            }
        }
        for (cpu, tid, n) in on {
            let m = sums.entry(on_cpu(name, cpu)).or_default();
            *m.entry(tid).or_default() += n;
        }
    }
}

/// The program's call counts, keyed by thread * [`CPU_KEYS`] + the CPU
/// the call left the kernel on.
const BY_CPU: [&str; 3] = ["calls", "bare", "unmatched"];

/// The CPUs a count's key has room for ([`BY_CPU`]).
const CPU_KEYS: i64 = 65536;

/// The name under which [`add_map`] keeps a call count's CPU `cpu`:
/// map `name`'s counts per thread on that CPU.
fn on_cpu(name: &str, cpu: u32) -> String {
    format!("{name}{CPU_SEP}{cpu}")
}

/// What separates a count's name from its CPU in [`on_cpu`].
const CPU_SEP: &str = "@cpu";

/// The case's traced calls (`calls`, `bare`, `unmatched`) per CPU they
/// left the kernel on.
fn own_calls_by_cpu(sums: &Sums, not_own: &[i64]) -> BTreeMap<u32, u64> {
    let mut by = BTreeMap::new();
    for (name, m) in sums {
        let Some((base, cpu)) = name.split_once(CPU_SEP) else {
            continue;
        };
        let Ok(cpu) = cpu.parse::<u32>() else {
            continue;
        };
        if !BY_CPU.contains(&base) {
            continue;
        }
        let n: u64 = m
            .iter()
            .filter(|(tid, _)| !not_own.contains(tid))
            .map(|(_, n)| n)
            .sum();
        if n > 0 {
            *by.entry(cpu).or_default() += n;
        }
    }
    by
}

/// The split from one repetition's sums, the threads in `not_own` counted
/// as other traffic; `None` when the case's threads made no request. A
/// call whose request was not tied to it is `unmatched`; one that queued
/// none is `cached`, but for a method that bypasses the page cache
/// (`direct`), where it is `unmatched` too. Where the case's io_uring
/// requests were traced and match `stamps`, their ring's parts
/// ([`with_ring`]). `cal`: the calls that measured a traced call's way in
/// and out, each the program's `cal` map has by its number.
pub fn of_sums(
    sums: &Sums,
    not_own: &[i64],
    direct: bool,
    stamps: &Stamps,
    cal: &Calibration,
) -> Option<LatencySplit> {
    let split = of_calls(sums, not_own, direct, cal)?;
    Some(with_ring(split, sums, not_own, direct, stamps).unwrap_or(split))
}

/// The sum of map `name` over the case's threads (`own`) or the others'.
fn total(sums: &Sums, name: &str, not_own: &[i64], own: bool) -> u64 {
    sums.get(name).map_or(0, |m| {
        m.iter()
            .filter(|(tid, _)| not_own.contains(tid) != own)
            .map(|(_, n)| n)
            .sum()
    })
}

/// [`of_sums`] from the block requests and the traced calls alone.
fn of_calls(sums: &Sums, not_own: &[i64], direct: bool, cal: &Calibration) -> Option<LatencySplit> {
    let total = |name: &str, own: bool| total(sums, name, not_own, own);
    let requests = total("requests", true);
    if requests == 0 {
        return None;
    }
    let calls = total("calls", true);
    let per = |sum: u64, n: u64| (n > 0).then(|| sum as f64 / n as f64);
    let (mut bare, mut cached) = (total("bare", true), total("cached", true));
    let (mut lost, mut lost_ns) = (total("unmatched", true), total("unmatched_ns", true));
    let entry_ns = cal
        .entry_ns(sums.get("cal"), &own_calls_by_cpu(sums, not_own))
        .filter(|_| calls + bare + lost > 0);
    if direct {
        (lost, lost_ns) = (lost + bare, lost_ns + cached);
        (bare, cached) = (0, 0);
    }
    // The calls' own queue and device parts where there are calls (a
    // buffered read's read-ahead requests overlap inside them), else the
    // requests'.
    // Every read request paired, the case's and others': the block
    // layer's time per read, as /sys/block's read ticks over reads
    // average it.
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
        entry_ns,
        entry_calls: if entry_ns.is_some() {
            cal.user_ns.len() as u64
        } else {
            0
        },
        withheld: None,
        ring: None,
        runnable_total_ns: Some(total("runnable", true) as f64),
        block_ns,
        block_timing: None,
        disk_stat_ns: None,
        requests,
        calls,
        calls_without_request: bare,
        calls_unmatched: lost,
        other_requests: total("requests", false) + total("unpaired", false),
        ios: 0,
    })
}

/// `split` with its io_uring requests' parts: each request from iopath
/// handing it over to its CQE reaped, in the buckets of the calls (tied
/// to its block request, no bio queued, or not tied); `None` where the
/// kernel's requests of the case's threads are not iopath's (another
/// number, or a sum that puts a stamp of iopath's after the kernel's).
/// iopath's stamps are sums, so the waits before the kernel took a
/// request and after it posted one are the same mean in every bucket.
fn with_ring(
    split: LatencySplit,
    sums: &Sums,
    not_own: &[i64],
    direct: bool,
    stamps: &Stamps,
) -> Option<LatencySplit> {
    let total = |name: &str| total(sums, name, not_own, true);
    let n = total("rreqs");
    if n == 0 || n != stamps.requests {
        return None;
    }
    // iopath's sums from the kernel's base, as the kernel's are.
    let base = *sums.get(BASE_MAP)?.get(&0)?;
    let from_base = |sum: u64| sum.wrapping_sub(n.wrapping_mul(base));
    let sq = total("rsub").wrapping_sub(from_base(stamps.submit_sum)) as i64;
    let cq = from_base(stamps.reap_sum).wrapping_sub(total("rcqe")) as i64;
    if sq < 0 || cq < 0 {
        return None;
    }
    let ring = RingWait {
        sq_ns: sq as f64 / n as f64,
        cq_ns: cq as f64 / n as f64,
        requests: n,
    };
    let waits = ring.sq_ns + ring.cq_ns;
    let per = |sum: u64, k: u64| (k > 0).then(|| sum as f64 / k as f64);
    let tied = total("rtied");
    let (mut bare, mut bare_ns) = (total("rbare"), total("rbare_ns"));
    let (mut lost, mut lost_ns) = (total("rlost"), total("rlost_ns"));
    if direct {
        (lost, lost_ns) = (lost + bare, lost_ns + bare_ns);
        (bare, bare_ns) = (0, 0);
    }
    Some(LatencySplit {
        submission_ns: per(total("rtoblock"), tied).map(|x| x + ring.sq_ns),
        queue_ns: per(total("rqueue"), tied),
        device_ns: per(total("rdevice"), tied).unwrap_or(0.0),
        completion_ns: per(total("rpost"), tied).map(|x| x + ring.cq_ns),
        cached_ns: per(bare_ns, bare).map(|x| x + waits),
        unmatched_ns: per(lost_ns, lost).map(|x| x + waits),
        calls: tied,
        calls_without_request: bare,
        calls_unmatched: lost,
        ring: Some(ring),
        // The ring's requests are timed from iopath's own stamps.
        entry_ns: None,
        entry_calls: 0,
        ..split
    })
}

/// The program with its filters: bios on `disks` and their partitions,
/// requests on `disks`, each keyed by its disk and sector; with the
/// optional parts the kernel has tracepoints for.
fn program(disks: &[Disk], kernel: Kernel) -> String {
    let any = |devs: &mut dyn Iterator<Item = u64>| {
        devs.map(|d| format!("args->dev == {d}"))
            .collect::<Vec<_>>()
            .join(" || ")
    };
    let bio_filter = any(&mut disks
        .iter()
        .flat_map(|d| std::iter::once(d.dev).chain(d.partitions.iter().copied())));
    let rq_filter = any(&mut disks.iter().map(|d| d.dev));
    // A bio's disk: a partition's bio is keyed as its disk's requests are
    // (its sector is the disk's already).
    let bio_disk = disks
        .iter()
        .filter(|d| !d.partitions.is_empty())
        .rev()
        .fold("args->dev".to_string(), |rest, d| {
            let parts = any(&mut d.partitions.iter().copied());
            format!("(({parts}) ? {} : {rest})", d.dev)
        });
    let parts = [(kernel.ring, RING_PROGRAM), (kernel.accounting, IO_PROGRAM)];
    let (mut probes, mut flush, mut end) = (String::new(), String::new(), String::new());
    for (_, part) in parts.iter().filter(|(has, _)| *has) {
        let (p, rest) = part.split_once("// @@ flush\n").unwrap_or((part, ""));
        let (f, e) = rest.split_once("// @@ end\n").unwrap_or((rest, ""));
        probes.push_str(p);
        flush.push_str(f);
        end.push_str(e);
    }
    let rq_block_time = if kernel.accounting { "0" } else { "1" };
    format!("{PROGRAM}\n{probes}")
        .replace("PARTS_FLUSH\n", &flush)
        .replace("PARTS_END\n", &end)
        .replace("RQ_BLOCK_TIME", rq_block_time)
        .replace("BIO_FILTER", &bio_filter)
        .replace("RQ_FILTER", &rq_filter)
        .replace("BIO_DISK", &bio_disk)
}

/// A disk under the target, as the tracepoints number it (`major << 20 |
/// minor`): requests carry the disk's number, bios the partition's.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Disk {
    dev: u64,
    partitions: Vec<u64>,
}

/// The disks under `leaves` (a partition's disk), each with its
/// partitions; `None` when there is none.
fn devices(leaves: &[String], sys: &Path) -> Option<Vec<Disk>> {
    let mut disks: Vec<Disk> = Vec::new();
    for leaf in leaves {
        let dir = sys.join(leaf).canonicalize().ok()?;
        let disk = if dir.join("partition").exists() {
            dir.parent()?.to_path_buf()
        } else {
            dir
        };
        let dev = dev_of(&disk)?;
        if disks.iter().any(|d| d.dev == dev) {
            continue;
        }
        let mut partitions = Vec::new();
        for e in std::fs::read_dir(&disk).ok()?.flatten() {
            if e.path().join("partition").exists() {
                partitions.extend(dev_of(&e.path()));
            }
        }
        disks.push(Disk { dev, partitions });
    }
    (!disks.is_empty()).then_some(disks)
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

    /// The program's line for call count `name`: (thread, CPU, calls),
    /// keyed as the program keys them.
    fn counts(name: &str, by: &[(i64, i64, u64)]) -> String {
        let keys: Vec<String> = by
            .iter()
            .map(|(tid, cpu, n)| format!("\"{}\": {n}", tid * CPU_KEYS + cpu))
            .collect();
        format!(
            r#"{{"type": "map", "data": {{"@{name}": {{{}}}}}}}"#,
            keys.join(", ")
        )
    }

    fn sums(lines: &[&str]) -> Sums {
        let mut s = Sums::new();
        for l in lines {
            add_map(&mut s, &serde_json::from_str(l).unwrap());
        }
        s
    }

    /// The calls that move nothing measure a traced call's way in and out:
    /// call by call, iopath's time less the program's, the median of
    /// them (a call preempted on its way is left out, not spread over
    /// all); where the program did not see each call, nothing.
    #[test]
    fn the_way_in_and_out_is_iopaths_time_less_the_tracepoints_call_by_call() {
        let cal = Calibration {
            user_ns: vec![1_100, 1_150, 9_000_000, 1_080, 1_120],
            cpus: Vec::new(),
        };
        let program = r#"{"type": "map", "data": {"@cal": {"0": 500, "1": 520, "2": 510, "3": 480, "4": 530}}}"#;
        let s = sums(&[
            r#"{"type": "map", "data": {"@requests": {"3356": 5}}}"#,
            r#"{"type": "map", "data": {"@service": {"3356": 50000}}}"#,
            &counts("calls", &[(3356, 0, 5)]),
            program,
        ]);
        let split = of_sums(&s, &[0, 10], false, &Stamps::default(), &cal).unwrap();
        // 600, 630, 8,999,490, 600, 590: the median.
        assert_eq!(split.entry_ns, Some(600.0));
        assert_eq!(split.entry_calls, 5);
        // Every call weighs one way in and out into the mean I/O.
        assert_eq!(split.entry_per_io(), Some(600.0));
        // One call the program did not see: nothing measured.
        let more = Calibration {
            user_ns: [cal.user_ns.clone(), vec![1_000]].concat(),
            cpus: Vec::new(),
        };
        let split = of_sums(&s, &[0, 10], false, &Stamps::default(), &more).unwrap();
        assert_eq!(split.entry_ns, None);
        // Slower by the tracepoints than by iopath's clock: no part.
        let under = Calibration {
            user_ns: vec![400; 5],
            cpus: Vec::new(),
        };
        let split = of_sums(&s, &[0, 10], false, &Stamps::default(), &under).unwrap();
        assert_eq!(split.entry_ns, None);
        // Without the calibration, none either.
        let none = of_sums(
            &s,
            &[0, 10],
            false,
            &Stamps::default(),
            &Calibration::default(),
        );
        assert_eq!(none.unwrap().entry_ns, None);
    }

    /// The way in and out differs between CPUs: each CPU's median, weighed
    /// by the case's calls that left the kernel there (the program counts
    /// them by thread and CPU; another thread's calls weigh nothing); a
    /// CPU with calls but no calibration weighs the median over all.
    #[test]
    fn the_way_in_and_out_is_weighed_by_the_cases_calls_on_each_cpu() {
        // Less the program's 500 each: CPU 0 400, 500, 600; CPU 1 200, 300,
        // 8,999,500 (one call preempted).
        let cal = Calibration {
            user_ns: vec![900, 1_000, 1_100, 700, 800, 9_000_000],
            cpus: vec![0, 0, 0, 1, 1, 1],
        };
        let program = r#"{"type": "map", "data": {"@cal": {"0": 500, "1": 500, "2": 500, "3": 500, "4": 500, "5": 500}}}"#;
        let with = |counts: &str| {
            let s = sums(&[
                r#"{"type": "map", "data": {"@requests": {"3356": 4}}}"#,
                r#"{"type": "map", "data": {"@service": {"3356": 40000}}}"#,
                counts,
                program,
            ]);
            of_sums(&s, &[0, 10], false, &Stamps::default(), &cal).unwrap()
        };
        // Medians 500 (CPU 0) and 300 (CPU 1); 1 call on CPU 0, 3 on CPU 1
        // (thread 10's 50 on CPU 0 are not the case's).
        let split = with(&counts("calls", &[(3356, 0, 1), (3356, 1, 3), (10, 0, 50)]));
        assert_eq!(split.entry_ns, Some((500.0 + 3.0 * 300.0) / 4.0));
        // Every call on CPU 0: its median alone.
        let split = with(&counts("bare", &[(3356, 0, 4)]));
        assert_eq!(split.entry_ns, Some(500.0));
        // Calls on CPU 2, never calibrated: the median over all six (450).
        let split = with(&counts("unmatched", &[(3356, 2, 2), (3356, 1, 2)]));
        assert_eq!(split.entry_ns, Some((2.0 * 450.0 + 2.0 * 300.0) / 4.0));
        // A calibration made where the thread ran (no CPU could be
        // pinned): the median over all, whatever CPUs the calls were on.
        let unpinned = Calibration {
            cpus: Vec::new(),
            ..cal.clone()
        };
        let s = sums(&[
            r#"{"type": "map", "data": {"@requests": {"3356": 4}}}"#,
            r#"{"type": "map", "data": {"@service": {"3356": 40000}}}"#,
            &counts("calls", &[(3356, 0, 1), (3356, 1, 3)]),
            program,
        ]);
        let split = of_sums(&s, &[0, 10], false, &Stamps::default(), &unpinned).unwrap();
        assert_eq!(split.entry_ns, Some(450.0));
        // A CPU whose median is below 0 (the program's time longer than
        // iopath's): nothing measured.
        let under = Calibration {
            user_ns: vec![900, 1_000, 1_100, 300, 400, 450],
            ..cal.clone()
        };
        let split = of_sums(&s, &[0, 10], false, &Stamps::default(), &under).unwrap();
        assert_eq!(split.entry_ns, None);
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
            &counts("calls", &[(3356, 0, 30), (3356, 1, 10)]),
            &counts("bare", &[(3356, 1, 10)]),
            r#"{"type": "map", "data": {"@cached": {"3356": 25000}}}"#,
            r#"{"type": "map", "data": {"@cqueue": {"3356": 8000}}}"#,
            r#"{"type": "map", "data": {"@cdevice": {"3356": 480000}}}"#,
            r#"{"type": "map", "data": {"@unpaired": {"0": 3}}}"#,
            r#"{"type": "map", "data": {"@runnable": {"3356": 70000, "10": 5}}}"#,
            r#"{"type": "map", "data": {"@rblock": {"3356": 500000, "0": 700}}}"#,
            r#"{"type": "map", "data": {"@reads": {"3356": 40, "0": 2}}}"#,
            r#"{"type": "attached_probes", "data": {"probes": 19}}"#,
        ]);
        let split = of_sums(
            &s,
            &[0, 10],
            false,
            &Stamps::default(),
            &Calibration::default(),
        )
        .unwrap();
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
        let split = of_sums(&s, &[0], false, &Stamps::default(), &Calibration::default()).unwrap();
        assert_eq!((split.submission_ns, split.completion_ns), (None, None));
        assert_eq!((split.queue_ns, split.device_ns), (Some(10.0), 100.0));
        assert_eq!(
            of_sums(
                &Sums::new(),
                &[0],
                false,
                &Stamps::default(),
                &Calibration::default()
            ),
            None
        );
    }

    /// An O_DIRECT call that the tracer did not tie to a request, or
    /// that queued none, is no cache hit: `unmatched`, and the sums
    /// still close (every call in one bucket).
    #[test]
    fn a_direct_calls_unmatched_request_is_not_a_cache_hit() {
        let s = sums(&[
            r#"{"type": "map", "data": {"@requests": {"7": 50}}}"#,
            &counts("calls", &[(7, 0, 40)]),
            r#"{"type": "map", "data": {"@cdevice": {"7": 400000}}}"#,
            &counts("bare", &[(7, 1, 2)]),
            r#"{"type": "map", "data": {"@cached": {"7": 4000}}}"#,
            &counts("unmatched", &[(7, 0, 8)]),
            r#"{"type": "map", "data": {"@unmatched_ns": {"7": 96000}}}"#,
        ]);
        let direct = of_sums(&s, &[0], true, &Stamps::default(), &Calibration::default()).unwrap();
        assert_eq!((direct.cached_ns, direct.calls_without_request), (None, 0));
        assert_eq!(direct.calls_unmatched, 10);
        assert_eq!(direct.unmatched_ns, Some(10_000.0));
        let buffered =
            of_sums(&s, &[0], false, &Stamps::default(), &Calibration::default()).unwrap();
        assert_eq!(buffered.cached_ns, Some(2000.0));
        assert_eq!(buffered.unmatched_ns, Some(12_000.0));
        for x in [direct, buffered] {
            assert_eq!(x.calls + x.calls_without_request + x.calls_unmatched, 50);
        }
        // The program files a call that queued no bio apart from one whose
        // request it lost.
        for name in BY_CPU {
            // Keyed as add_map decodes them, in 64 bits.
            let line = format!("@{name}[(uint64)tid * {CPU_KEYS} + cpu] = count()");
            assert!(PROGRAM.contains(&line), "{line}");
        }
    }

    /// io_uring at depth N: the kernel's times of each ring request
    /// (taken from the base it prints) against iopath's own stamps of the
    /// same requests: the wait before the kernel took the SQE joins the
    /// submission, the CQE's wait to be reaped the completion, and the
    /// parts add up to the mean iopath measured.
    #[test]
    fn io_uring_requests_are_timed_through_the_ring_against_iopaths_stamps() {
        // 4 requests of thread 7: the kernel took them at base + 10, 20,
        // 30, 40 us and posted them at base + 500, 510, 520, 530 us; 3
        // tied to their block request, 1 not (merged).
        let base: u64 = 9_000_000_000_000;
        let mut s = sums(&[
            r#"{"type": "map", "data": {"@requests": {"7": 3}}}"#,
            r#"{"type": "map", "data": {"@rreqs": {"7": 4}}}"#,
            r#"{"type": "map", "data": {"@rsub": {"7": 100000}}}"#,
            r#"{"type": "map", "data": {"@rcqe": {"7": 2060000}}}"#,
            r#"{"type": "map", "data": {"@rtied": {"7": 3}}}"#,
            r#"{"type": "map", "data": {"@rtoblock": {"7": 6000}}}"#,
            r#"{"type": "map", "data": {"@rqueue": {"7": 3000}}}"#,
            r#"{"type": "map", "data": {"@rdevice": {"7": 900000}}}"#,
            r#"{"type": "map", "data": {"@rpost": {"7": 561000}}}"#,
            r#"{"type": "map", "data": {"@rlost": {"7": 1}}}"#,
            r#"{"type": "map", "data": {"@rlost_ns": {"7": 490000}}}"#,
            r#"{"type": "map", "data": {"@runnable": {"7": 50000}}}"#,
        ]);
        s.entry(BASE_MAP.into()).or_default().insert(0, base);
        // iopath stamped them 4 us before the kernel took each, on
        // average, and reaped them 20 us after each was posted.
        let stamps = Stamps {
            requests: 4,
            submit_sum: 4 * base + 100_000 - 16_000,
            reap_sum: 4 * base + 2_060_000 + 80_000,
        };
        let split = of_sums(&s, &[0], true, &stamps, &Calibration::default()).unwrap();
        let ring = split.ring.unwrap();
        assert_eq!(
            (ring.sq_ns, ring.cq_ns, ring.requests),
            (4_000.0, 20_000.0, 4)
        );
        assert_eq!(split.submission_ns, Some(2_000.0 + 4_000.0));
        assert_eq!(split.queue_ns, Some(1_000.0));
        assert_eq!(split.device_ns, 300_000.0);
        assert_eq!(split.completion_ns, Some(187_000.0 + 20_000.0));
        assert_eq!((split.calls, split.calls_unmatched), (3, 1));
        assert_eq!(split.unmatched_ns, Some(490_000.0 + 24_000.0));
        // Every request in one bucket; the mean is iopath's own.
        let mean = (2_060_000.0 + 80_000.0 - 100_000.0 + 16_000.0) / 4.0;
        let split = LatencySplit { ios: 4, ..split };
        assert!((split.mean_ns() - mean).abs() < 1e-6, "{split:?}");
        // Not the same requests (a fsync linked behind each write, a
        // request of another ring): no ring, the requests' parts alone.
        let other = Stamps {
            requests: 5,
            ..stamps
        };
        let alone = of_sums(&s, &[0], true, &other, &Calibration::default()).unwrap();
        assert_eq!(
            (alone.ring, alone.submission_ns, alone.calls),
            (None, None, 0)
        );
        // A stamp of iopath's after the kernel's: not these requests.
        let late = Stamps {
            submit_sum: stamps.submit_sum + 20_000,
            ..stamps
        };
        assert_eq!(
            of_sums(&s, &[0], true, &late, &Calibration::default())
                .unwrap()
                .ring,
            None
        );
    }

    /// A worker's stamps since its start, on the kernel's clock: the
    /// start's CLOCK_MONOTONIC time for each request, added.
    #[test]
    fn a_workers_stamps_are_moved_onto_the_kernels_clock() {
        let start = Instant::now();
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        let mono = t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
        let s = Stamps::since(start, 2, 10, 30);
        let at = (s.submit_sum - 10) / 2;
        assert_eq!(s.submit_sum - 10, s.reap_sum - 30);
        assert!(at <= mono && mono - at < 1_000_000, "{at} vs {mono}");
        let mut sum = s;
        sum.add(&s);
        assert_eq!(sum.requests, 4);
        assert_eq!(sum.submit_sum, 2 * s.submit_sum);
    }

    /// The io_uring part is added where the kernel has its tracepoints:
    /// its probes, and its sums printed and cleared at each flush, before
    /// the end line.
    #[test]
    fn the_ring_part_is_added_with_its_flush_before_the_end_line() {
        let ring = Kernel {
            ring: true,
            accounting: false,
        };
        let p = program(&[loop0()], ring);
        assert!(p.contains("tracepoint:io_uring:io_uring_complete"));
        let flush = p.find("print(@rsub);").unwrap();
        assert!(flush < p.find("printf(\"iopath-split-end").unwrap());
        assert!(p.find("printf(\"iopath-split-base").unwrap() < flush);
        assert!(!p.contains("PARTS_FLUSH") && !p.contains("PARTS_END"));
        assert!(!p.contains("// @@"));
        let plain = program(&[loop0()], Kernel::default());
        assert!(!plain.contains("io_uring") && !plain.contains("PARTS_"));
    }

    /// Where the kernel has `block_io_start`/`block_io_done`, reads' block
    /// time is timed by them (the interval /sys/block sums) and not at the
    /// request's completion; without them, at the completion.
    #[test]
    fn reads_block_time_is_the_accountings_where_the_kernel_has_it() {
        let both = Kernel {
            ring: true,
            accounting: true,
        };
        let p = program(&[loop0()], both);
        assert!(p.contains("tracepoint:block:block_io_done"));
        assert!(p.contains("if (0 && strncmp(args->rwbs"));
        assert!(p.contains("clear(@as);") && p.contains("print(@rsub);"));
        // A front merge moves the stamp; a request merged away drops it.
        assert!(p.contains("tracepoint:block:block_rq_merge"));
        assert!(p.contains("@as[$d, args->sector] = @as[$d, $old];"));
        assert!(!p.contains("RQ_BLOCK_TIME") && !p.contains("RQ_FILTER"));
        let plain = program(&[loop0()], Kernel::default());
        assert!(plain.contains("if (1 && strncmp(args->rwbs"));
        assert!(!plain.contains("block_io_done") && !plain.contains("@as["));
    }

    /// A disk as the tests number it: loop0, no partitions.
    fn loop0() -> Disk {
        Disk {
            dev: 7 << 20,
            partitions: vec![],
        }
    }

    #[test]
    fn the_program_filters_bios_and_requests_on_the_targets_devices() {
        let vda = Disk {
            dev: 254 << 20,
            partitions: vec![(254 << 20) | 1, (254 << 20) | 2],
        };
        let p = program(&[loop0(), vda], Kernel::default());
        assert!(p.contains(
            "/args->dev == 7340032 || args->dev == 266338304 || args->dev == 266338305 || args->dev == 266338306/"
        ));
        assert!(p.contains("/args->dev == 7340032 || args->dev == 266338304/"));
        // A partition's bio is keyed by its disk, as the disk's requests.
        assert!(p.contains(
            "$d = ((args->dev == 266338305 || args->dev == 266338306) ? 266338304 : args->dev);"
        ));
        assert!(p.contains("@qt[$d, args->sector] = nsecs;"));
        assert!(p.contains("$q = @qt[args->dev, args->sector];"));
        for token in ["BIO_FILTER", "RQ_FILTER", "BIO_DISK"] {
            assert!(!p.contains(token), "{token} left in the program");
        }
        let plain = program(&[loop0()], Kernel::default());
        assert!(plain.contains("$d = args->dev;"));
    }
}

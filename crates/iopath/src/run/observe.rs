//! What a repetition really did and cost: snapshots taken just before the
//! workers start and just after they have all closed their engines.
//!
//! - Device bytes: counters of the disks under the target (see
//!   [`crate::system::metrics::blockdev`]); system-wide, so other traffic counts too.
//!   Beside them the case's own I/O accounting (`/proc/self/io` less the
//!   main thread's and the bystander threads'), which other processes'
//!   traffic does not enter.
//! - Page cache: the target's residency (cachestat, else mincore) before
//!   and after, the system's `Cached`/`Dirty`/`Writeback`, the memory
//!   cgroup's file pages.
//! - Process memory: peak RSS (reset before each repetition), locked and
//!   pinned memory while the engines are open.
//! - CPU: the workers' own `RUSAGE_THREAD` deltas (summed by the caller)
//!   plus the CPU time of io_uring SQPOLL threads.
//! - The kernel's deferred work: the system's kernel threads' CPU over the
//!   repetition less an idle baseline measured once, before the first
//!   repetition that does I/O ([`Observer::baseline`]): an estimate,
//!   charged to the CPU per I/O of cases that write.
//! - Costs per I/O ([`crate::result::Costs`], `run::costs`) from all of
//!   the above.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use iopath_io::sys::ThreadUsage;

use crate::plan::{Case, Pattern};
use crate::result::costs::Baseline;
use crate::result::{Cpu, Deferred, LatencySplit, Measurement, Memory};
use crate::run::target::Target;
use crate::system::metrics::blockdev::{DeviceStack, DiskCounters};
use crate::system::metrics::kthreads;
use crate::system::metrics::procfs::{self, MemCgroup, PageCache, ProcMem, ProcessIo};

/// The idle baseline of the kernel threads' CPU is measured over this
/// many windows of [`BASELINE_WINDOW`] (250 ms in all).
const BASELINE_WINDOWS: usize = 5;
const BASELINE_WINDOW: Duration = Duration::from_millis(50);

/// Where the kernel has no cachestat, files up to this size have every
/// page's residency checked with mincore; larger ones are sampled.
const RESIDENCY_FULL_SCAN: u64 = 4 << 30;

/// Where the snapshots come from, found once per run.
#[derive(Debug)]
pub struct Observer {
    target: Option<PathBuf>,
    /// `--noatime`: the target is opened with `O_NOATIME`.
    noatime: bool,
    pub stack: DeviceStack,
    cgroup: Option<MemCgroup>,
    sys: PathBuf,
    /// The kernel threads' CPU with nothing of iopath's running, measured
    /// once ([`Observer::baseline`]); `None` inside when it could not be.
    baseline: OnceLock<Option<Baseline>>,
    /// Where each request's time goes (`--latency-split`'s tracer, or
    /// the `/sys/block` averages).
    pub split: super::latency_split::Split,
}

/// State just before a repetition.
#[derive(Debug)]
pub struct Before {
    disk: Option<DiskCounters>,
    io: Option<ProcessIo>,
    /// The main thread's and the bystander threads' I/O, to take out.
    main_io: Option<ProcessIo>,
    bystanders_io: Vec<(i32, ProcessIo)>,
    cache: PageCache,
    resident: u64,
}

/// What the workers report besides their measurements.
#[derive(Debug, Default, Clone, Copy)]
pub struct WorkerCost {
    /// Sum of the workers' thread CPU deltas.
    pub cpu: ThreadUsage,
    /// Locked + pinned process memory while all engines were open.
    pub locked_bytes: u64,
    /// The engines' I/O buffers, all threads.
    pub buffers_bytes: u64,
    /// CPU of io_uring's kernel threads (SQPOLL, io-wq) during the case.
    pub kernel_threads_ns: u64,
    /// The system's kernel threads' CPU over the window the CPU was
    /// measured in, and that window; `None` when not measured.
    pub system_kernel: Option<(u64, u64)>,
    /// The workers' I/O accounting over their timed intervals, and over
    /// their threads' whole lives; `None` where the kernel keeps none.
    pub workers_io: Option<ProcessIo>,
    pub workers_life_io: Option<ProcessIo>,
    /// The workers' submit and reap stamps of their requests, summed.
    pub stamps: super::latency_split::Stamps,
}

impl Observer {
    /// Observe `target`, counting the disks of `stack` (the system
    /// description's, from the one device walk of the run).
    pub fn new(target: Option<&Target>, stack: DeviceStack) -> Observer {
        let sys = PathBuf::from("/sys");
        Observer {
            noatime: false,
            target: target.map(|t| t.path().to_path_buf()),
            stack,
            cgroup: MemCgroup::current(),
            sys,
            baseline: OnceLock::new(),
            split: super::latency_split::Split::none(),
        }
    }

    /// Read the page-cache figures of `cg` (the run's `--cache-limit`
    /// cgroup) instead of the cgroup the process started in.
    pub fn use_cgroup(&mut self, cg: MemCgroup) {
        self.cgroup = Some(cg);
    }

    /// Look at the target as the engines open it: with `O_NOATIME` under
    /// `--noatime` (residency maps the file where `cachestat` cannot
    /// count it, and a mapping updates the access time).
    pub fn open_noatime(&mut self, on: bool) {
        self.noatime = on;
    }

    fn residency(&self) -> u64 {
        let Some(p) = &self.target else { return 0 };
        iopath_io::sys::open_read(p, self.noatime)
            .and_then(|f| iopath_io::sys::residency(&f, RESIDENCY_FULL_SCAN))
            .map_or(0, |r| r.estimated_bytes())
    }

    /// Snapshot before the workers start; resets the peak RSS.
    pub fn before(&self) -> Before {
        procfs::reset_peak_rss();
        self.split.before();
        Before {
            resident: self.residency(),
            cache: PageCache::read(),
            disk: self.stack.snapshot(&self.sys),
            io: ProcessIo::read_self(),
            main_io: ProcessIo::read_thread(),
            bystanders_io: super::cpu_share::bystanders_io_now(),
        }
    }

    /// The idle baseline of the kernel threads' CPU: measured the first
    /// time it is asked for (before the first repetition that does I/O,
    /// iopath's workers not yet started), over [`BASELINE_WINDOWS`] windows
    /// of [`BASELINE_WINDOW`]; the median window's, so that one burst of
    /// another tenant's kernel work does not set it, with the windows'
    /// spread (below which a case's estimate is not charged).
    pub fn baseline(&self) -> Option<Baseline> {
        *self.baseline.get_or_init(|| {
            let proc = Path::new("/proc");
            let mut before = kthreads::cpu_ns(proc);
            if before.is_empty() {
                return None;
            }
            let mut windows: Vec<Baseline> = (0..BASELINE_WINDOWS)
                .map(|_| {
                    let t0 = std::time::Instant::now();
                    std::thread::sleep(BASELINE_WINDOW);
                    let after = kthreads::cpu_ns(proc);
                    let used = kthreads::used_ns(&before, &after);
                    before = after;
                    Baseline {
                        kernel_threads_ns: used,
                        window_ns: t0.elapsed().as_nanos() as u64,
                        spread_ns: 0,
                    }
                })
                .collect();
            Baseline::median(&mut windows)
        })
    }

    /// The case's own I/O between `b` and now. A copy runs on the main
    /// thread, whose I/O is then the case's (its `--verify` included).
    fn own_io(&self, b: &Before, case: &Case) -> Option<ProcessIo> {
        let process = ProcessIo::read_self()?.since(&b.io?);
        let main = if case.pattern == Pattern::Copy {
            ProcessIo::default()
        } else {
            ProcessIo::read_thread()?.since(&b.main_io?)
        };
        let bystanders = super::cpu_share::bystanders_io(
            &b.bystanders_io,
            &super::cpu_share::bystanders_io_now(),
        );
        Some(super::cpu_share::own_io(&process, &main, &bystanders))
    }

    /// Fill in device, CPU and memory figures of `m` after the workers
    /// ended. Returns the raw device counters before and after (with the
    /// disks they count), which the ranks of one host combine
    /// ([`super::ranks_sum::RawDisk`]).
    pub fn finish(
        &self,
        b: &Before,
        m: &mut Measurement,
        case: &Case,
        cost: &WorkerCost,
    ) -> Option<super::ranks_sum::RawDisk> {
        let disk_after = self.stack.snapshot(&self.sys);
        m.process_io = self.own_io(b, case);
        let cache = PageCache::read();
        let mem = ProcMem::read();
        m.device = match (b.disk, disk_after) {
            (Some(x), Some(y)) => Some(y.delta(&x)),
            _ => None,
        };
        m.device_fraction = m.device.and_then(|d| device_fraction(case.pattern, m, &d));
        m.latency_split = self
            .split
            .of(case.method.is_direct(), &cost.stamps)
            .map(|s| LatencySplit { ios: m.ios, ..s });
        m.deferred = self.deferred(case, cost);
        m.cpu = cpu(m, cost);
        // The calls and copies: the workers' timed intervals, and the
        // method's pool threads (the own I/O beyond the workers' lives).
        let calls = match (cost.workers_io, cost.workers_life_io, m.process_io) {
            (Some(timed), Some(life), Some(own)) => Some(timed.plus(&own.since(&life))),
            _ => None,
        };
        m.costs = Some(super::costs::of(
            case.method,
            case.pattern,
            m,
            calls.as_ref(),
        ));
        // The averages are the case's only where the disk's traffic was
        // (the parts against the mean: the summary's, pooled).
        let other = m.costs.as_ref().and_then(|c| c.other_device_per_byte);
        m.latency_split = m.latency_split.map(|s| s.own_only(other));
        let page_cache_bytes = self.residency();
        m.memory = Memory {
            page_cache_bytes,
            total_bytes: page_cache_bytes + cost.buffers_bytes,
            page_cache_before_bytes: b.resident,
            buffers_bytes: cost.buffers_bytes,
            rss_peak_bytes: mem.rss_peak,
            locked_bytes: cost.locked_bytes,
            cached_delta_bytes: cache.cached as i64 - b.cache.cached as i64,
            dirty_after_bytes: cache.dirty + cache.writeback,
            cgroup_file_bytes: self.cgroup.as_ref().and_then(|c| c.file_bytes()),
        };
        match (b.disk, disk_after) {
            (Some(before), Some(after)) => Some(super::ranks_sum::RawDisk {
                disks: self.stack.leaves.join(","),
                before,
                after,
            }),
            _ => None,
        }
    }
}

impl Observer {
    /// The kernel's deferred work of a repetition whose CPU `cost` holds,
    /// against the idle baseline; `None` for `null` (no I/O, no baseline
    /// measured for it) and where the kernel threads cannot be read.
    fn deferred(&self, case: &Case, cost: &WorkerCost) -> Option<Deferred> {
        if case.method.is_null() {
            return None;
        }
        let (used, window) = cost.system_kernel?;
        let charged = super::costs::charged(case.method, case.pattern);
        Some(Deferred::estimate(used, window, &self.baseline()?, charged))
    }
}

/// The CPU figures of `m` from the workers' cost and its deferred work:
/// `ns_per_io` is the own CPU per I/O plus the deferred estimate per I/O
/// where it is charged to the case.
fn cpu(m: &Measurement, cost: &WorkerCost) -> Cpu {
    let cpu_ns = cost.cpu.cpu_ns + cost.kernel_threads_ns;
    let per_io = |ns: u64| {
        if m.ios > 0 {
            ns as f64 / m.ios as f64
        } else {
            0.0
        }
    };
    let charged = m
        .deferred
        .filter(|d| d.charged)
        .map_or(0, |d| d.estimate_ns);
    Cpu {
        cpu_ns: cost.cpu.cpu_ns,
        user_ns: cost.cpu.user_ns,
        sys_ns: cost.cpu.sys_ns,
        sqpoll_ns: cost.kernel_threads_ns,
        ctx_vol: cost.cpu.ctx_vol,
        ctx_invol: cost.cpu.ctx_invol,
        minflt: cost.cpu.minflt,
        majflt: cost.cpu.majflt,
        run_delay_ns: cost.cpu.run_delay_ns,
        ns_per_io: per_io(cpu_ns + charged),
        own_ns_per_io: Some(per_io(cpu_ns)),
        utilization: cpu_ns as f64 / m.duration_ns.max(1) as f64,
    }
}

/// Device bytes over requested bytes: reads for read patterns and randrw
/// (writes would hide cache hits), writes for write patterns.
pub fn device_fraction(pattern: Pattern, m: &Measurement, d: &DiskCounters) -> Option<f64> {
    let (dev, asked) = match pattern {
        // A copy's source must come from the device for the copy to be
        // measured (its writes go to a new file).
        Pattern::Read | Pattern::RandRead | Pattern::RandRw | Pattern::Copy => {
            (d.read_bytes, m.read_bytes)
        }
        Pattern::Write | Pattern::RandWrite => (d.write_bytes, m.write_bytes),
        // A replay's reads and writes together.
        Pattern::Replay => (d.read_bytes + d.write_bytes, m.read_bytes + m.write_bytes),
    };
    (asked > 0).then(|| dev as f64 / asked as f64)
}

/// Locked and pinned memory of the process now.
pub fn locked_now() -> u64 {
    let m = ProcMem::read();
    m.locked + m.pinned
}

/// Wait (up to `limit`) until the process's locked and pinned memory is
/// back to `baseline`. io_uring unpins a closed ring's registered buffers
/// in a kernel work item: without this wait the next repetition starts
/// with them still pinned, and its `locked_bytes` (measured from that
/// starting point) comes out too low. The user-wide RLIMIT_MEMLOCK charge
/// is released on its own schedule, which this cannot see; a repetition
/// refused for it is retried by the runner. Returns false on time-out.
pub fn wait_locked_release(baseline: u64, limit: std::time::Duration) -> bool {
    let t0 = std::time::Instant::now();
    loop {
        if locked_now() <= baseline {
            return true;
        }
        if t0.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

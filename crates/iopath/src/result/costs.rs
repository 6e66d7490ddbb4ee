//! What a repetition cost besides its own CPU time, per I/O: page faults,
//! context switches, read/write calls, bytes copied between the kernel and
//! the program, device bytes of its own and of others per byte asked, and
//! the kernel's deferred work (an estimate). Plain data: the runner fills
//! it in from counters (`run::costs`), the summary takes each figure's
//! median over the repetitions, the reports show it.
//!
//! Where a figure has no honest source for a method it is `None`, never a
//! guess shown as a count (docs/methodology.md, "Costs per I/O", says what
//! each figure holds for each method).

use serde::{Deserialize, Serialize};

/// The costs of one repetition (or, in a summary, each figure's median).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Costs {
    /// Minor page faults of the workers (`RUSAGE_THREAD`) per I/O.
    pub minflt_per_io: f64,
    /// Major page faults (the page had to be read) per I/O.
    pub majflt_per_io: f64,
    /// Voluntary context switches (the worker waited) per I/O.
    pub ctx_vol_per_io: f64,
    /// Involuntary context switches (the worker was preempted) per I/O.
    pub ctx_invol_per_io: f64,
    /// `read`- and `write`-family system calls per I/O (`syscr` + `syscw`
    /// of the process's own threads). `None` for the io_uring methods and
    /// `aio`, whose calls (`io_uring_enter`, `io_submit`) the kernel does
    /// not count there. Other system calls (`fsync`, `mmap`, `madvise`,
    /// ...) are counted nowhere without tracing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rw_calls_per_io: Option<f64>,
    /// Bytes copied between the kernel and the program per byte moved;
    /// `None` where no source says (the user-space caches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied_per_byte: Option<f64>,
    /// Device bytes the process's own threads caused, per byte asked, in
    /// the direction of `device_fraction` (reads for read patterns and
    /// randrw, writes for write patterns): read-ahead and whole-page waste
    /// of its own, nothing of other processes'. `None` without the
    /// kernel's task I/O accounting or the bytes asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_device_per_byte: Option<f64>,
    /// What the device moved beyond that, per byte asked: other
    /// processes' traffic, and for writes the file system's journal.
    /// `None` without a block device or the process's accounting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_device_per_byte: Option<f64>,
    /// The kernel's deferred work per I/O, ns (the estimate in
    /// [`Deferred::estimate_ns`]); `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_ns_per_io: Option<f64>,
}

/// The kernel's work done away from the workers during a repetition:
/// write-back, the loop device's worker, the journal, soft interrupts in
/// `ksoftirqd`. Measured as the CPU time of the system's kernel threads
/// over the repetition less what they use over as long with nothing of
/// iopath's running (the idle baseline measured before the run): an
/// estimate, as other tenants' kernel work counts too.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Deferred {
    /// The kernel threads' CPU time over the repetition, ns.
    pub kernel_threads_ns: u64,
    /// The idle baseline over as long, ns.
    pub baseline_ns: u64,
    /// `kernel_threads_ns` less `baseline_ns`, at least 0: the estimate.
    pub estimate_ns: u64,
    /// The idle baseline's spread over as long, ns
    /// ([`Baseline::spread_ns`]): an estimate within it is noise. 0 in
    /// results written before it was recorded.
    #[serde(default)]
    pub baseline_spread_ns: u64,
    /// True when the estimate is in the case's `cpu.ns_per_io`: a case
    /// that writes through the page cache (its write-back and journal are
    /// its own; `run::costs::charged`), its estimate above the baseline's
    /// spread. `O_DIRECT` writers keep their own CPU.
    pub charged: bool,
}

/// The idle baseline: the kernel threads' CPU over a window with nothing
/// of iopath's running, and how much it varied between windows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Baseline {
    pub kernel_threads_ns: u64,
    pub window_ns: u64,
    /// The spread of the windows' rates (the middle ones', so one burst
    /// does not set it), over `window_ns`.
    pub spread_ns: u64,
}

impl Baseline {
    /// The window of median rate among `windows`, with the spread of the
    /// middle windows' rates (all but the lowest and the highest where
    /// there are 5 or more: one burst sets neither); `None` when there is
    /// none.
    pub fn median(windows: &mut [Baseline]) -> Option<Baseline> {
        let rate = |b: &Baseline| b.kernel_threads_ns as f64 / b.window_ns.max(1) as f64;
        windows.sort_by(|a, b| rate(a).total_cmp(&rate(b)));
        let mid = *windows.get(windows.len() / 2)?;
        let trim = usize::from(windows.len() >= 5);
        let middle = &windows[trim..windows.len() - trim];
        let spread = rate(&middle[middle.len() - 1]) - rate(&middle[0]);
        Some(Baseline {
            spread_ns: (spread * mid.window_ns as f64) as u64,
            ..mid
        })
    }

    /// The baseline scaled to a window of `window_ns`.
    pub fn over(&self, window_ns: u64) -> u64 {
        if self.window_ns == 0 {
            return 0;
        }
        (self.kernel_threads_ns as u128 * window_ns as u128 / self.window_ns as u128) as u64
    }

    /// The baseline's spread scaled to a window of `window_ns`.
    pub fn spread_over(&self, window_ns: u64) -> u64 {
        if self.window_ns == 0 {
            return 0;
        }
        (self.spread_ns as u128 * window_ns as u128 / self.window_ns as u128) as u64
    }
}

impl Deferred {
    /// The deferred work of a window of `window_ns` in which the kernel
    /// threads used `kernel_threads_ns`, against `baseline`; charged to
    /// the case when `chargeable` (`run::costs::charged`) and the estimate
    /// exceeds the baseline's spread over the window.
    pub fn estimate(
        kernel_threads_ns: u64,
        window_ns: u64,
        baseline: &Baseline,
        chargeable: bool,
    ) -> Deferred {
        let baseline_ns = baseline.over(window_ns);
        let baseline_spread_ns = baseline.spread_over(window_ns);
        let estimate_ns = kernel_threads_ns.saturating_sub(baseline_ns);
        Deferred {
            kernel_threads_ns,
            baseline_ns,
            estimate_ns,
            baseline_spread_ns,
            charged: chargeable && estimate_ns > baseline_spread_ns,
        }
    }
}

/// A kind of CPU time per I/O ([`cpu_by_kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuKind {
    /// The workers in user space.
    User,
    /// The workers in the kernel.
    System,
    /// The workers, where `getrusage`'s ticks are too few to split them
    /// ([`SPLIT_TICKS_NS`]).
    Workers,
    /// The process's helper threads (`cpu.sqpoll_ns`): io_uring's SQPOLL
    /// and io-wq threads, `threadpool`'s and `tokio`'s pool threads.
    HelperThreads,
    /// The kernel's deferred work charged to the case (its write-back:
    /// [`Deferred::charged`]), an estimate.
    Deferred,
}

/// How much of the workers' time `getrusage` must have counted, in all
/// the repetitions, before its split into user and system is drawn: its
/// ticks are 4 ms here, so about 25 of them.
pub const SPLIT_TICKS_NS: u64 = 100_000_000;

/// The case's CPU per I/O (`summary.cpu.ns_per_io`, the tables') by
/// kind, in [`CpuKind`]'s order, adding up to it. Each share is pooled
/// over the repetitions (`reps`; the summary itself without them), as
/// sums: the workers' and helper threads' by their CPU times, user and
/// system by `getrusage`'s times (the workers whole below
/// [`SPLIT_TICKS_NS`]), and the deferred work charged by its ns over all
/// the case's CPU ns. `None` without CPU measured.
pub fn cpu_by_kind(
    summary: &super::Measurement,
    reps: &[super::Measurement],
) -> Option<[(CpuKind, f64); 5]> {
    let total = summary.cpu.ns_per_io;
    if !(total.is_finite() && total > 0.0) {
        return None;
    }
    let reps = if reps.is_empty() {
        std::slice::from_ref(summary)
    } else {
        reps
    };
    let sum = |f: &dyn Fn(&super::Measurement) -> f64| reps.iter().map(f).sum::<f64>();
    let share = |part: f64, of: f64| {
        if of > 0.0 {
            (part / of).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let all_ns = sum(&|m| m.cpu.ns_per_io * m.ios as f64);
    let charged_ns = sum(&|m| {
        let own = m.cpu.own_ns_per_io.unwrap_or(m.cpu.ns_per_io);
        (m.cpu.ns_per_io - own).max(0.0) * m.ios as f64
    });
    let deferred = total * share(charged_ns, all_ns);
    let own = total - deferred;
    let helpers = own
        * share(
            sum(&|m| m.cpu.sqpoll_ns as f64),
            sum(&|m| (m.cpu.cpu_ns + m.cpu.sqpoll_ns) as f64),
        );
    let workers = own - helpers;
    let (user, sys) = (
        sum(&|m| m.cpu.user_ns as f64),
        sum(&|m| m.cpu.sys_ns as f64),
    );
    let split = user + sys >= SPLIT_TICKS_NS as f64;
    let user = if split {
        workers * share(user, user + sys)
    } else {
        0.0
    };
    let system = if split { workers - user } else { 0.0 };
    Some([
        (CpuKind::User, user),
        (CpuKind::System, system),
        (CpuKind::Workers, if split { 0.0 } else { workers }),
        (CpuKind::HelperThreads, helpers),
        (CpuKind::Deferred, deferred),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(cpu: crate::result::Cpu, ios: u64) -> crate::result::Measurement {
        crate::result::Measurement {
            cpu,
            ios,
            ..Default::default()
        }
    }

    /// The kinds add up to the tables' CPU per I/O, each share pooled over
    /// the repetitions: a repetition whose few ticks all fell in one of
    /// user or system (aio's here: 3.2 ms user, then none) does not make
    /// the summary's median user 0; helper threads by CPU time; the
    /// write-back charged by its ns; below 25 ticks, the workers whole.
    #[test]
    fn cpu_by_kind_pools_its_shares_over_the_repetitions() {
        let ms = 1_000_000;
        let cpu = |user: u64, sys: u64, helpers: u64, total: f64, own: f64| crate::result::Cpu {
            cpu_ns: user + sys,
            sqpoll_ns: helpers,
            user_ns: user,
            sys_ns: sys,
            ns_per_io: total,
            own_ns_per_io: Some(own),
            ..Default::default()
        };
        let reps = [
            rep(cpu(40 * ms, 0, 20 * ms, 900.0, 600.0), 100_000),
            rep(cpu(0, 60 * ms, 20 * ms, 1_000.0, 800.0), 100_000),
            rep(cpu(0, 100 * ms, 20 * ms, 1_100.0, 1_100.0), 100_000),
        ];
        // The summary's medians: user 0, yet 40 of 200 ms were user.
        let summary = rep(cpu(0, 60 * ms, 20 * ms, 1_000.0, 800.0), 100_000);
        let k = cpu_by_kind(&summary, &reps).unwrap();
        let of = |kind| k.iter().find(|(x, _)| *x == kind).unwrap().1;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        // Charged: 300 + 200 + 0 of 3,000 ns per I/O: a sixth.
        let own = 1_000.0 * 5.0 / 6.0;
        assert!(close(of(CpuKind::Deferred), 1_000.0 - own), "{k:?}");
        // Helpers: 60 of 260 ms.
        assert!(
            close(of(CpuKind::HelperThreads), own * 60.0 / 260.0),
            "{k:?}"
        );
        let workers = own * 200.0 / 260.0;
        assert!(close(of(CpuKind::User), workers * 0.2), "{k:?}");
        assert!(close(of(CpuKind::System), workers * 0.8), "{k:?}");
        assert_eq!(of(CpuKind::Workers), 0.0);
        assert!(close(k.iter().map(|x| x.1).sum::<f64>(), 1_000.0));
        // Too few ticks: the workers whole; no repetitions: the summary's.
        let short = rep(cpu(4 * ms, 8 * ms, 0, 500.0, 500.0), 1_000);
        let k = cpu_by_kind(&short, &[]).unwrap();
        assert_eq!(k[2], (CpuKind::Workers, 500.0));
        assert_eq!((k[0].1, k[1].1, k[4].1), (0.0, 0.0, 0.0));
        assert_eq!(cpu_by_kind(&rep(Default::default(), 0), &[]), None);
    }

    #[test]
    fn the_baseline_is_scaled_to_the_window_and_the_estimate_never_negative() {
        let idle = Baseline {
            kernel_threads_ns: 2_000_000,
            window_ns: 250_000_000,
            spread_ns: 0,
        };
        // 1 s: four times the baseline's window.
        let d = Deferred::estimate(30_000_000, 1_000_000_000, &idle, true);
        assert_eq!(d.baseline_ns, 8_000_000);
        assert_eq!(d.estimate_ns, 22_000_000);
        let quiet = Deferred::estimate(1_000_000, 1_000_000_000, &idle, false);
        assert_eq!(quiet.estimate_ns, 0);
        assert_eq!(Baseline::default().over(5), 0);
    }

    /// One burst of another tenant's kernel work in one window of five
    /// does not set the baseline.
    #[test]
    fn the_baseline_is_the_median_window_not_a_burst() {
        let w = |ns| Baseline {
            kernel_threads_ns: ns,
            window_ns: 50_000_000,
            spread_ns: 0,
        };
        let mut windows = [w(100_000), w(9_000_000), w(120_000), w(90_000), w(110_000)];
        let b = Baseline::median(&mut windows).unwrap();
        assert_eq!((b.kernel_threads_ns, b.window_ns), (110_000, 50_000_000));
        // The middle three windows' spread (100k to 120k), the burst apart.
        assert!(b.spread_ns.abs_diff(20_000) <= 1, "{}", b.spread_ns);
        assert_eq!(Baseline::median(&mut []), None);
    }

    /// An estimate within the idle baseline's spread is noise: not charged
    /// even to a page-cache writer; above it, charged where chargeable.
    #[test]
    fn an_estimate_within_the_baselines_spread_is_not_charged() {
        let idle = Baseline {
            kernel_threads_ns: 2_000_000,
            window_ns: 250_000_000,
            spread_ns: 1_000_000,
        };
        // 1 s: baseline 8 ms, spread 4 ms.
        let noise = Deferred::estimate(11_000_000, 1_000_000_000, &idle, true);
        assert_eq!(
            (noise.estimate_ns, noise.baseline_spread_ns),
            (3_000_000, 4_000_000)
        );
        assert!(!noise.charged);
        let work = Deferred::estimate(30_000_000, 1_000_000_000, &idle, true);
        assert!(work.charged);
        let direct = Deferred::estimate(30_000_000, 1_000_000_000, &idle, false);
        assert!(!direct.charged);
        assert_eq!(direct.estimate_ns, 22_000_000);
    }

    /// Results written before the costs have none, and read back as such.
    #[test]
    fn a_measurement_without_costs_reads_back_without_them() {
        let m: super::super::Measurement = serde_json::from_str(
            r#"{"io_bytes":0,"ios":0,"read_ios":0,"write_ios":0,"duration_ns":0,
            "bw_bytes_per_s":0,"iops":0,"lat_ns":{"min":0,"mean":0,"p50":0,"p90":0,
            "p99":0,"p999":0,"max":0}}"#,
        )
        .unwrap();
        assert_eq!(m.costs, None);
        assert_eq!(m.deferred, None);
        assert_eq!(m.cpu.own_ns_per_io, None);
    }
}

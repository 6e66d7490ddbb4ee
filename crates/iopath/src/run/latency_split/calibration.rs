//! The calibration of a traced call's way into the kernel and back out
//! (the split's `entry` part): calls that move nothing, made on each CPU
//! in turn, timed by iopath's clock and by the program at once.

use std::collections::BTreeMap;
use std::os::fd::BorrowedFd;
use std::time::Instant;

/// How many calls measure a traced call's way in and out after each
/// repetition (about 2 us each traced: a few ms), shared out over the
/// CPUs, [`CALIBRATION_CALLS_PER_CPU`] at least on each.
const CALIBRATION_CALLS: usize = 2000;

/// The fewest calls measuring the way in and out on one CPU.
const CALIBRATION_CALLS_PER_CPU: usize = 250;

/// Calls that move nothing (a `pread` of 0 bytes of `/dev/null`), made
/// on iopath's main thread after a repetition, on each CPU it may run on
/// in turn, each timed by iopath's clock as a worker times its calls (a
/// clock read right before and right after), ns, in the order made, with
/// the CPU each was made on. The program times the same calls between
/// their tracepoints, each by its number (its `cal` map): the difference,
/// call by call, is the part of a traced call neither clock pair shares
/// ([`crate::result::latency_split::LatencySplit::entry_ns`]). It is
/// measured per CPU because it differs between them: on the 2-CPU machine
/// this was built on, a traced call's way in and out took 0.96-1.41 us on
/// one CPU and 0.78-1.28 us on the other in the same repetitions
/// (docs/methodology.md 6c).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Calibration {
    pub user_ns: Vec<u64>,
    /// The CPU of each call in `user_ns`; empty where the calls were made
    /// wherever the main thread ran.
    pub cpus: Vec<u32>,
}

impl Calibration {
    /// [`CALIBRATION_CALLS`] calls of 0 bytes of `null`, made on each CPU
    /// the calling thread may run on in turn (the workers run on these or
    /// fewer), the thread pinned there and put back after; where no CPU
    /// can be pinned, where the thread runs. Nothing where a call fails.
    pub(super) fn measure(null: BorrowedFd<'_>) -> Calibration {
        let allowed = iopath_io::numa::current_affinity().unwrap_or_default();
        let per_cpu = (CALIBRATION_CALLS / allowed.len().max(1)).max(CALIBRATION_CALLS_PER_CPU);
        let mut cal = Calibration::default();
        let timed = |cal: &mut Calibration, cpu: Option<u32>, calls: usize| {
            for _ in 0..calls {
                let t0 = Instant::now();
                let read = rustix::io::pread(null, &mut [0u8; 0][..], 0);
                let ns = t0.elapsed().as_nanos() as u64;
                read.ok()?;
                cal.user_ns.push(ns);
                cal.cpus.extend(cpu);
            }
            Some(())
        };
        let mut made = Some(());
        for &cpu in &allowed {
            if iopath_io::numa::pin_current_thread(&[cpu]).is_ok() {
                made = timed(&mut cal, Some(cpu), per_cpu);
                if made.is_none() {
                    break;
                }
            }
        }
        if !allowed.is_empty() {
            // Back to the CPUs it had.
            let _ = iopath_io::numa::pin_current_thread(&allowed);
        }
        if made.is_some() && cal.user_ns.is_empty() {
            // No CPU could be pinned: the calls where the thread runs.
            made = timed(&mut cal, None, CALIBRATION_CALLS);
        }
        match made {
            Some(()) => cal,
            None => Calibration::default(),
        }
    }

    /// The way in and out of a call: on each CPU, the median over its
    /// calls of iopath's time less the program's for the same call (a
    /// call preempted on its way in or out is no typical call: the median
    /// leaves it out, where a mean would count one preemption's
    /// milliseconds into every call); the CPUs' medians weighed by the
    /// case's calls on each (`by_cpu`: the CPU a call left the kernel
    /// on). A CPU with calls but no calibration of its own is weighed at
    /// the median over all calibration calls, as is every call where the
    /// calls per CPU are not known. `None` where the program did not see
    /// each call made (`traced`: its times by call number), or a median
    /// is below 0.
    pub(super) fn entry_ns(
        &self,
        traced: Option<&BTreeMap<i64, u64>>,
        by_cpu: &BTreeMap<u32, u64>,
    ) -> Option<f64> {
        let traced = traced?;
        let n = self.user_ns.len();
        if n == 0 || traced.len() != n {
            return None;
        }
        let d: Vec<f64> = self
            .user_ns
            .iter()
            .enumerate()
            .map(|(i, &u)| Some(u as f64 - *traced.get(&(i as i64))? as f64))
            .collect::<Option<_>>()?;
        let median_of = |mut v: Vec<f64>| {
            let m = crate::result::median(&mut v);
            (m >= 0.0).then_some(m)
        };
        let all = median_of(d.clone())?;
        let weight: u64 = by_cpu.values().sum();
        if weight == 0 || self.cpus.len() != n {
            return Some(all);
        }
        let mut sum = 0.0;
        for (&cpu, &calls) in by_cpu {
            let on: Vec<f64> = d
                .iter()
                .zip(&self.cpus)
                .filter(|(_, &c)| c == cpu)
                .map(|(v, _)| *v)
                .collect();
            let m = if on.is_empty() { all } else { median_of(on)? };
            sum += m * calls as f64;
        }
        Some(sum / weight as f64)
    }
}

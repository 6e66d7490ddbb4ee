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

/// The fewest calls measuring the way in and out on one CPU (but for
/// more CPUs than [`CALIBRATION_CALLS_MAX`] has room for at that).
const CALIBRATION_CALLS_PER_CPU: usize = 250;

/// The most calls after a repetition, whatever the CPUs: the program keeps
/// each by its number in a map of 65,536 keys at most (`run::latency_split`).
const CALIBRATION_CALLS_MAX: usize = 16_384;

/// `calls(cpu, n)` with the calling thread pinned to each CPU of `allowed`
/// in turn (through `pin`), the thread put back on `allowed` after (or,
/// where that fails, on those of them still `online`); where no CPU can
/// be pinned, `calls(None, CALIBRATION_CALLS)` where the thread runs.
/// [`CALIBRATION_CALLS`] shared out, [`CALIBRATION_CALLS_PER_CPU`] at
/// least a CPU, [`CALIBRATION_CALLS_MAX`] at most in all. `None` where a
/// call failed (the thread put back all the same).
fn each_cpu(
    allowed: &[u32],
    pin: &mut dyn FnMut(&[u32]) -> std::io::Result<()>,
    online: &dyn Fn() -> Option<Vec<u32>>,
    calls: &mut dyn FnMut(Option<u32>, usize) -> Option<()>,
) -> Option<()> {
    let n = allowed.len().max(1);
    // (At least one a CPU: above 16,384 CPUs, more than the cap, but the
    // kernel has no more than 8,192.)
    let per_cpu = (CALIBRATION_CALLS / n)
        .max(CALIBRATION_CALLS_PER_CPU)
        .min(CALIBRATION_CALLS_MAX / n)
        .max(1);
    let mut pinned = false;
    let mut made = Some(());
    for &cpu in allowed {
        if pin(&[cpu]).is_ok() {
            pinned = true;
            made = calls(Some(cpu), per_cpu);
            if made.is_none() {
                break;
            }
        }
    }
    if !pinned {
        return calls(None, CALIBRATION_CALLS);
    }
    if pin(allowed).is_err() {
        // A CPU went offline meanwhile: the others (the mask
        // sched_getaffinity would now give; none of them online is a
        // state the kernel does not leave a running thread in).
        let still: Vec<u32> = match online() {
            Some(on) => allowed.iter().copied().filter(|c| on.contains(c)).collect(),
            None => Vec::new(),
        };
        let _ = pin(&still);
    }
    made
}

/// Calls that move nothing (a `pread` of 0 bytes of `/dev/null`), made
/// on iopath's main thread after a repetition, on each CPU it may run on
/// in turn, each timed by iopath's clock as a worker times its calls (a
/// clock read right before and right after), ns, in the order made, with
/// the CPU each was made on. The program times the same calls between
/// their tracepoints, each by its number (its `cal` map): the difference,
/// call by call, is the part of a traced call neither clock pair shares
/// ([`crate::result::latency_split::LatencySplit::entry_ns`]), measured
/// per CPU because it differs between them (docs/methodology.md 6c).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Calibration {
    pub user_ns: Vec<u64>,
    /// The CPU of each call in `user_ns`; empty where the calls were made
    /// wherever the main thread ran.
    pub cpus: Vec<u32>,
}

impl Calibration {
    /// [`CALIBRATION_CALLS`] calls of 0 bytes of `null`, made on each CPU
    /// the calling thread may run on in turn ([`each_cpu`]). Nothing where
    /// a call fails.
    pub(super) fn measure(null: BorrowedFd<'_>) -> Calibration {
        let allowed = iopath_io::numa::current_affinity().unwrap_or_default();
        let mut cal = Calibration::default();
        let made = each_cpu(
            &allowed,
            &mut iopath_io::numa::pin_current_thread,
            &iopath_io::numa::online_cpus,
            &mut |cpu, calls| {
                for _ in 0..calls {
                    let t0 = Instant::now();
                    let read = rustix::io::pread(null, &mut [0u8; 0][..], 0);
                    let ns = t0.elapsed().as_nanos() as u64;
                    read.ok()?;
                    cal.user_ns.push(ns);
                    cal.cpus.extend(cpu);
                }
                Some(())
            },
        );
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`each_cpu`] did: the masks pinned, the calls asked for.
    #[derive(Debug, Default)]
    struct Seen {
        pins: Vec<Vec<u32>>,
        calls: Vec<(Option<u32>, usize)>,
    }

    /// [`each_cpu`] with `pin` refusing the masks `refused` and the call
    /// batch on CPU `fails_on` failing.
    fn run(
        allowed: &[u32],
        refused: &[&[u32]],
        online: &[u32],
        fails_on: Option<u32>,
    ) -> (Option<()>, Seen) {
        let mut seen = Seen::default();
        let pins = std::cell::RefCell::new(Vec::new());
        let mut pin = |cpus: &[u32]| {
            pins.borrow_mut().push(cpus.to_vec());
            if refused.contains(&cpus) {
                Err(std::io::Error::other("refused"))
            } else {
                Ok(())
            }
        };
        let on = online.to_vec();
        let online = move || Some(on.clone());
        let mut calls = |cpu: Option<u32>, n: usize| {
            seen.calls.push((cpu, n));
            (cpu != fails_on || cpu.is_none()).then_some(())
        };
        let made = each_cpu(allowed, &mut pin, &online, &mut calls);
        seen.pins = pins.into_inner();
        (made, seen)
    }

    /// Each CPU in turn, 2,000 calls shared out (250 at least a CPU), the
    /// thread put back on all of them after.
    #[test]
    fn each_cpu_in_turn_then_back_on_all_of_them() {
        let (made, seen) = run(&[0, 1, 2, 3], &[], &[0, 1, 2, 3], None);
        assert_eq!(made, Some(()));
        assert_eq!(
            seen.pins,
            vec![vec![0], vec![1], vec![2], vec![3], vec![0, 1, 2, 3]]
        );
        assert_eq!(
            seen.calls,
            vec![
                (Some(0), 500),
                (Some(1), 500),
                (Some(2), 500),
                (Some(3), 500)
            ]
        );
        // 16 CPUs: 250 each, not 125.
        let sixteen: Vec<u32> = (0..16).collect();
        let (_, seen) = run(&sixteen, &[], &sixteen, None);
        assert!(seen.calls.iter().all(|&(_, n)| n == 250));
        // 200 CPUs: no more than the program's map holds in all.
        let many: Vec<u32> = (0..200).collect();
        let (_, seen) = run(&many, &[], &many, None);
        let all: usize = seen.calls.iter().map(|&(_, n)| n).sum();
        assert!(
            all <= CALIBRATION_CALLS_MAX && seen.calls[0].1 == 81,
            "{all}"
        );
    }

    /// A CPU that cannot be pinned is left out; none at all: the calls
    /// where the thread runs, and nothing to put back.
    #[test]
    fn cpus_that_cannot_be_pinned_are_left_out() {
        let (_, seen) = run(&[0, 1], &[&[1]], &[0, 1], None);
        assert_eq!(seen.calls, vec![(Some(0), 1000)]);
        assert_eq!(seen.pins.last(), Some(&vec![0, 1]));
        let (made, seen) = run(&[0, 1], &[&[0], &[1]], &[0, 1], None);
        assert_eq!(made, Some(()));
        assert_eq!(seen.calls, vec![(None, CALIBRATION_CALLS)]);
        assert_eq!(seen.pins, vec![vec![0], vec![1]]);
    }

    /// Put back even where a call failed; where the whole mask is refused
    /// (a CPU gone offline meanwhile), on the CPUs of it still online.
    #[test]
    fn the_thread_is_put_back_whatever_happened() {
        let (made, seen) = run(&[0, 1, 2], &[], &[0, 1, 2], Some(1));
        assert_eq!(made, None);
        assert_eq!(seen.calls.len(), 2);
        assert_eq!(seen.pins.last(), Some(&vec![0, 1, 2]));
        let (made, seen) = run(&[0, 1, 2], &[&[0, 1, 2]], &[0, 2], None);
        assert_eq!(made, Some(()));
        assert_eq!(seen.pins[3..], [vec![0, 1, 2], vec![0, 2]]);
    }
}

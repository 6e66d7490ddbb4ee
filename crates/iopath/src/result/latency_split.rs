//! Where a request's time goes: the mean latency of a repetition taken
//! apart into submission, queueing in the block layer, the device's
//! service and completion back to the program. Plain data: the runner
//! fills it in (`run::latency_split`), the summary takes each part's
//! median over the repetitions, the text layer words it.
//!
//! Two sources (docs/methodology.md, "Where the time goes"):
//! - [`SplitSource::Tracepoints`] (`--latency-split`, as root with
//!   bpftrace): the block tracepoints of the target's disks, each request
//!   attributed to the thread that queued it, and the system call
//!   tracepoints of the process's threads. Every part is measured.
//! - [`SplitSource::DiskStat`]: `/sys/block/*/stat` ticks, an average of
//!   the block layer and the device together (`device_ns`), other traffic
//!   included; the other parts are `None`, never a remainder.

use serde::{Deserialize, Serialize};

use super::cause::SplitPart;

/// Where the figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitSource {
    Tracepoints,
    DiskStat,
}

/// How [`LatencySplit::block_ns`] timed a read request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockTiming {
    /// Between the block layer's accounting tracepoints (`block_io_start`
    /// to `block_io_done`, Linux 6.5+): the interval `/sys/block` counts,
    /// plus the probes' own cost (about half a microsecond a request).
    Accounting,
    /// From its bio queued (a request split off a larger bio: its
    /// allocation) to `block_rq_complete`: without the completion's
    /// callbacks, which `/sys/block` counts.
    BioQueued,
}

/// Why the tracepoints were asked for and not used: the figures are the
/// `/sys/block` averages instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitFallback {
    /// Not root: eBPF needs it.
    NotRoot,
    /// `bpftrace` is not installed.
    NoBpftrace,
    /// bpftrace did not start or attach (its message went to the events).
    TracerFailed,
    /// The target is on no block device (tmpfs, no file).
    NoBlockDevice,
    /// bpftrace did not hand back this repetition's sums in time.
    TracerSilent,
}

/// Why a split's figures are not shown as the case's: they are kept in
/// the result as measured, and no part is said or blamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitWithheld {
    /// `/sys/block` averages over a disk others used too (beyond
    /// [`OWN_TRAFFIC_SHARE`] of the bytes asked): the ticks and requests
    /// are everyone's, not the case's.
    OtherTraffic,
    /// `/sys/block` averages where the process's own I/O accounting is
    /// missing: whose requests they hold is not known.
    OwnTrafficUnknown,
    /// The parts weighed into the mean I/O exceed the measured mean by
    /// more than [`PARTS_TOLERANCE`]: they are not the case's own time.
    ExceedsMean,
}

/// How far the parts may add up above the measured mean before the split
/// is withheld: the parts and the mean are pooled differently (per
/// request or call, against the merged histogram), and the issue's
/// check is that they agree within 10%.
pub const PARTS_TOLERANCE: f64 = 0.10;

/// Other processes' device bytes per byte asked up to which the
/// `/sys/block` averages are taken as the case's own (a little metadata).
pub const OWN_TRAFFIC_SHARE: f64 = 0.05;

/// One repetition's (or, in a summary, each figure's median) mean time per
/// request in each part, ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencySplit {
    pub source: SplitSource,
    /// Set when the tracepoints were asked for and the figures are the
    /// `/sys/block` averages instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<SplitFallback>,
    /// From a `read`/`write`-family call's entry to its first block
    /// request being queued, per call that made one; for io_uring
    /// requests timed in the ring ([`Self::ring`]), from iopath handing
    /// the request over to the first bio the kernel queued issuing it.
    /// `None` without tracepoints or where the method makes no such call
    /// per request (AIO, mmap; io_uring without its tracepoints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission_ns: Option<f64>,
    /// Queueing in the block layer (plugging, the scheduler, waiting for
    /// a tag): for traced calls, from the call's first bio queued to its
    /// first request issued to the driver, per call that made a request;
    /// without calls (io_uring, AIO, mmap), bio queued to request issued,
    /// per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ns: Option<f64>,
    /// The device: for traced calls, from the call's first request issued
    /// to its last one completed, per call (read-ahead requests issued
    /// with it overlap inside); without calls, issue to completion, per
    /// request. For [`SplitSource::DiskStat`], the block layer's and the
    /// device's time together (the ticks over the requests, everyone's).
    pub device_ns: f64,
    /// From the call's last request's completion to the call's return, per
    /// call that made one; for io_uring requests timed in the ring, from
    /// the block request's completion to iopath reaping the request's
    /// CQE. `None` as `submission_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_ns: Option<f64>,
    /// A traced call that made no request (the page cache served it),
    /// entry to return, per such call. `None` where there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_ns: Option<f64>,
    /// A traced call that made a block request the tracer could not tie
    /// to it (a request merged into another's, taken by another thread
    /// reading the same sectors), or, for a method that bypasses the page
    /// cache, a call that made none: entry to return, per such call. Not
    /// a cache hit. `None` where there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmatched_ns: Option<f64>,
    /// Traced calls: the way into the kernel and back out of a call that
    /// its tracepoints do not see (the switch into the kernel and back,
    /// and the tracer's own work before its entry clock read and after
    /// its exit one), per call: measured at the end of the repetition by
    /// [`Self::entry_calls`] calls that move nothing (a `pread` of 0
    /// bytes) timed by iopath's clock and by the tracepoints' at once, the
    /// median over the calls of the difference (in a summary, the median
    /// repetition's). Not a remainder of the mean. `None`
    /// without traced calls, and for io_uring requests timed in the ring
    /// (iopath's own stamps hold their way in and out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_ns: Option<f64>,
    /// The calls that measured [`Self::entry_ns`].
    #[serde(default)]
    pub entry_calls: u64,
    /// Traced io_uring requests: their time in the ring, set against
    /// iopath's own submit and reap stamps ([`RingWait`]); the calls
    /// above are then the ring's requests. `None` for other methods, and
    /// where the kernel's and iopath's requests did not match one for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring: Option<RingWait>,
    /// Traced: the time the case's threads waited for a CPU after being
    /// preempted outside a traced call (most often on a call's return,
    /// after its exit tracepoint: a CPU-bound page-cache read on a busy
    /// machine), in all, ns; per I/O in [`Self::runnable_ns`]. Time in no
    /// part above. `None` for `DiskStat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runnable_total_ns: Option<f64>,
    /// Set when the figures are not the case's ([`SplitWithheld`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<SplitWithheld>,
    /// Traced: the block layer's time per read request, over every read
    /// on the disks the tracer paired, the case's and others' alike, as
    /// [`Self::block_timing`] says: what the `/sys/block` read ticks
    /// average ([`Self::disk_stat_ns`]). `None` for `DiskStat` or without
    /// reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_ns: Option<f64>,
    /// How [`Self::block_ns`] was timed; `None` without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_timing: Option<BlockTiming>,
    /// Traced: the `/sys/block/*/stat` read ticks over reads completed in
    /// the same repetition (everyone's), kept beside [`Self::block_ns`]
    /// to check one against the other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_stat_ns: Option<f64>,
    /// The case's own requests behind `queue_ns` and `device_ns`
    /// (everyone's for `DiskStat`).
    pub requests: u64,
    /// The traced calls that made a request (behind `submission_ns`,
    /// `completion_ns`), and those that made none (served by the page
    /// cache); for io_uring requests timed in the ring, the ring's
    /// requests tied to their block request, and those that queued no
    /// bio. The other buckets' parts include the ring's waits.
    #[serde(default)]
    pub calls: u64,
    #[serde(default)]
    pub calls_without_request: u64,
    /// The traced calls behind `unmatched_ns`.
    #[serde(default)]
    pub calls_unmatched: u64,
    /// Requests of other processes (and iopath's own bystanders) on the
    /// same disks over the repetition, apart from the case's.
    #[serde(default)]
    pub other_requests: u64,
    /// The repetition's I/Os (summed in a summary): where no call is
    /// traced, the block layer's time per I/O is the parts' per request
    /// times requests over I/Os (an mmap read the page cache served makes
    /// none).
    #[serde(default)]
    pub ios: u64,
}

impl LatencySplit {
    /// The sum of the parts measured, ns.
    pub fn parts_ns(&self) -> f64 {
        self.submission_ns.unwrap_or(0.0)
            + self.queue_ns.unwrap_or(0.0)
            + self.device_ns
            + self.completion_ns.unwrap_or(0.0)
    }

    /// True when every part was measured (the parts should add up to the
    /// mean latency at one request in flight).
    pub fn complete(&self) -> bool {
        self.submission_ns.is_some() && self.queue_ns.is_some() && self.completion_ns.is_some()
    }

    /// The weights of the parts, of `cached_ns` and of `unmatched_ns` in
    /// the mean I/O: the shares of the traced calls that made a request
    /// tied to them, that made none, and the rest; without calls
    /// (io_uring, AIO, mmap, the averages), requests per I/O, 0 and 0 (1
    /// where the I/Os are not known).
    pub fn weights(&self) -> Weights {
        let all = (self.calls + self.calls_without_request + self.calls_unmatched) as f64;
        if all > 0.0 {
            Weights {
                parts: self.calls as f64 / all,
                cached: self.calls_without_request as f64 / all,
                unmatched: self.calls_unmatched as f64 / all,
            }
        } else {
            let parts = if self.ios > 0 {
                self.requests as f64 / self.ios as f64
            } else {
                1.0
            };
            Weights {
                parts,
                cached: 0.0,
                unmatched: 0.0,
            }
        }
    }

    /// The wait for a CPU outside the calls per I/O
    /// ([`Self::runnable_total_ns`]); `None` where not traced or the I/Os
    /// are not known, and for io_uring requests timed in the ring
    /// ([`Self::ring`]): their threads' waits for a CPU are inside their
    /// parts already (a request waits in the ring meanwhile).
    pub fn runnable_ns(&self) -> Option<f64> {
        if self.ring.is_some() {
            return None;
        }
        let total = self.runnable_total_ns?;
        (self.ios > 0).then(|| total / self.ios as f64)
    }

    /// A traced call's way in and out ([`Self::entry_ns`]) per I/O: every
    /// traced call's, where the calls are system calls, times calls per
    /// I/O (one for the methods that make a call per request; fewer
    /// where a cache of iopath's serves some I/Os without a call); `None`
    /// for a ring split, without calls or without the calibration.
    pub fn entry_per_io(&self) -> Option<f64> {
        let calls = self.calls + self.calls_without_request + self.calls_unmatched;
        if self.ring.is_some() || calls == 0 {
            return None;
        }
        let per_io = if self.ios > 0 {
            calls as f64 / self.ios as f64
        } else {
            1.0
        };
        self.entry_ns.map(|e| e * per_io)
    }

    /// Each part's time per I/O, in the mean I/O as [`Self::weights`]
    /// weighs them (a part per call that made a request times the share
    /// of such calls; without calls, per request times requests per I/O),
    /// the way in and out of a call first, the wait for a CPU last; `None`
    /// for a part not measured.
    pub fn per_io(&self) -> [(SplitPart, Option<f64>); 8] {
        let w = self.weights();
        let by = |v: Option<f64>, w: f64| v.map(|v| v * w);
        [
            (SplitPart::Entry, self.entry_per_io()),
            (SplitPart::Submission, by(self.submission_ns, w.parts)),
            (SplitPart::Queue, by(self.queue_ns, w.parts)),
            (SplitPart::Device, Some(self.device_ns * w.parts)),
            (SplitPart::Completion, by(self.completion_ns, w.parts)),
            (SplitPart::Cached, by(self.cached_ns, w.cached)),
            (SplitPart::Unmatched, by(self.unmatched_ns, w.unmatched)),
            (SplitPart::Runnable, self.runnable_ns()),
        ]
    }

    /// The mean time per I/O the parts say ([`Self::per_io`]): the calls'
    /// way in and out, the parts, the page cache's and unmatched calls,
    /// and the wait for a CPU outside the calls.
    pub fn mean_ns(&self) -> f64 {
        self.per_io().iter().filter_map(|(_, v)| *v).sum()
    }

    /// The measured mean latency `mean_ns` less the parts: what no part
    /// holds ("unaccounted"; the program's own loop, and for the averages
    /// everything outside the block layer). `None` where the split is
    /// withheld or the parts exceed the mean (never a negative part).
    pub fn unaccounted_ns(&self, mean_ns: f64) -> Option<f64> {
        let left = mean_ns - self.mean_ns();
        (self.withheld.is_none() && left >= 0.0).then_some(left)
    }

    /// The split as the case's where it is: `/sys/block` averages are
    /// withheld where others' traffic shared the disk
    /// (`other_device_per_byte`, [`OWN_TRAFFIC_SHARE`]) or whose it was
    /// is unknown; the averages of the case's own traffic stand.
    pub fn own_only(self, other_device_per_byte: Option<f64>) -> LatencySplit {
        if self.source != SplitSource::DiskStat || self.withheld.is_some() {
            return self;
        }
        let withheld = match other_device_per_byte {
            Some(x) if x <= OWN_TRAFFIC_SHARE => return self,
            Some(_) => SplitWithheld::OtherTraffic,
            None => SplitWithheld::OwnTrafficUnknown,
        };
        LatencySplit {
            withheld: Some(withheld),
            ..self
        }
    }

    /// The split withheld ([`SplitWithheld::ExceedsMean`]) where its parts
    /// weighed into the mean I/O exceed the measured mean `mean_ns`.
    pub fn within(self, mean_ns: f64) -> LatencySplit {
        if self.withheld.is_none() && self.mean_ns() > mean_ns * (1.0 + PARTS_TOLERANCE) {
            return LatencySplit {
                withheld: Some(SplitWithheld::ExceedsMean),
                ..self
            };
        }
        self
    }

    /// [`Self::within`] again against `mean_ns`, a split withheld for
    /// exceeding another mean first put back (the summary's mean becomes
    /// the merged histogram's after the median of the repetitions').
    pub fn rechecked(self, mean_ns: f64) -> LatencySplit {
        let back = if self.withheld == Some(SplitWithheld::ExceedsMean) {
            LatencySplit {
                withheld: None,
                ..self
            }
        } else {
            self
        };
        back.within(mean_ns)
    }

    /// The pooled split of `reps` (as the summary's latency pools the
    /// repetitions' requests): each part weighed by the requests or calls
    /// behind it; the source and fallback of the first.
    pub fn pooled(reps: &[LatencySplit]) -> Option<LatencySplit> {
        let first = *reps.first()?;
        let weighed = |f: fn(&LatencySplit) -> Option<f64>, w: fn(&LatencySplit) -> u64| {
            let (sum, n) = reps.iter().fold((0.0, 0u64), |(s, n), r| match f(r) {
                Some(v) => (s + v * w(r) as f64, n + w(r)),
                None => (s, n),
            });
            (n > 0).then(|| sum / n as f64)
        };
        let total = |w: fn(&LatencySplit) -> u64| reps.iter().map(w).sum::<u64>();
        // The queue and device parts are per call that made a request
        // where calls were traced, per request where none were
        // (`run::latency_split`, [`Self::weights`]): each repetition's
        // weighs by what it is per (a repetition whose traced calls all
        // hit the page cache weighs its requests' parts by nothing, as its
        // own mean does).
        let behind = |r: &LatencySplit| {
            if r.calls + r.calls_without_request + r.calls_unmatched > 0 {
                r.calls
            } else {
                r.requests
            }
        };
        let traced = |r: &LatencySplit| r.calls + r.calls_without_request + r.calls_unmatched;
        Some(LatencySplit {
            submission_ns: weighed(|r| r.submission_ns, |r| r.calls),
            queue_ns: weighed(|r| r.queue_ns, behind),
            // (Every traced call a cache hit: the requests' parts weigh
            // nothing; by requests, as one such repetition's stand.)
            device_ns: weighed(|r| Some(r.device_ns), behind)
                .or_else(|| weighed(|r| Some(r.device_ns), |r| r.requests))?,
            completion_ns: weighed(|r| r.completion_ns, |r| r.calls),
            cached_ns: weighed(|r| r.cached_ns, |r| r.calls_without_request),
            unmatched_ns: weighed(|r| r.unmatched_ns, |r| r.calls_unmatched),
            // Each repetition's (a median call per CPU already, the CPUs
            // weighed by its calls) weighed by its traced calls, as the
            // mean I/O pools them.
            entry_ns: weighed(|r| r.entry_ns, traced),
            entry_calls: total(|r| r.entry_calls),
            withheld: reps.iter().find_map(|r| r.withheld),
            ring: RingWait::pooled(reps.iter().filter_map(|r| r.ring)),
            runnable_total_ns: reps
                .iter()
                .filter_map(|r| r.runnable_total_ns)
                .reduce(|a, b| a + b),
            block_ns: weighed(|r| r.block_ns, |r| r.requests + r.other_requests),
            block_timing: reps.iter().find_map(|r| r.block_timing),
            disk_stat_ns: weighed(|r| r.disk_stat_ns, |r| r.requests + r.other_requests),
            requests: total(|r| r.requests),
            calls: total(|r| r.calls),
            calls_without_request: total(|r| r.calls_without_request),
            calls_unmatched: total(|r| r.calls_unmatched),
            other_requests: total(|r| r.other_requests),
            ios: total(|r| r.ios),
            ..first
        })
    }

    /// The `/sys/block` averages: `ticks_ms` over `requests` (the stat
    /// file's read and write ticks and requests of the repetition);
    /// `None` without requests.
    pub fn from_disk_stat(
        ticks_ms: u64,
        requests: u64,
        fallback: Option<SplitFallback>,
    ) -> Option<LatencySplit> {
        (requests > 0).then(|| LatencySplit {
            source: SplitSource::DiskStat,
            fallback,
            submission_ns: None,
            queue_ns: None,
            device_ns: ticks_ms as f64 * 1e6 / requests as f64,
            completion_ns: None,
            cached_ns: None,
            unmatched_ns: None,
            entry_ns: None,
            entry_calls: 0,
            withheld: None,
            ring: None,
            runnable_total_ns: None,
            block_ns: None,
            block_timing: None,
            disk_stat_ns: None,
            requests,
            calls: 0,
            calls_without_request: 0,
            calls_unmatched: 0,
            other_requests: 0,
            ios: 0,
        })
    }
}

/// An io_uring request's time in the ring, per request (the means over
/// the ring's requests of the repetition): the part of
/// [`LatencySplit::submission_ns`] before the kernel took the SQE, and
/// the part of [`LatencySplit::completion_ns`] after it posted the CQE.
/// From the kernel's `io_uring_submit_req` and `io_uring_complete` times
/// set against iopath's own stamps (the clock read right before the call
/// that hands the request over, right after the one that reaps it), as
/// sums over the same requests: known per request on average, not one by
/// one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RingWait {
    /// iopath's stamp before handing the request over to the kernel
    /// taking its SQE, ns.
    pub sq_ns: f64,
    /// The kernel posting its CQE to iopath's stamp after reaping it, ns.
    pub cq_ns: f64,
    /// The requests behind them: every request the case's rings
    /// completed, as many as iopath reaped.
    pub requests: u64,
}

impl RingWait {
    /// The waits of `reps` weighed by their requests; `None` for none.
    pub fn pooled(reps: impl Iterator<Item = RingWait>) -> Option<RingWait> {
        let (sq, cq, n) = reps.fold((0.0, 0.0, 0u64), |(sq, cq, n), r| {
            let w = r.requests as f64;
            (sq + r.sq_ns * w, cq + r.cq_ns * w, n + r.requests)
        });
        (n > 0).then(|| RingWait {
            sq_ns: sq / n as f64,
            cq_ns: cq / n as f64,
            requests: n,
        })
    }
}

/// The weights of [`LatencySplit::weights`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub parts: f64,
    pub cached: f64,
    pub unmatched: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_stat_averages_hold_only_the_device_part_and_leave_the_rest_unaccounted() {
        let s = LatencySplit::from_disk_stat(30, 1000, Some(SplitFallback::NotRoot)).unwrap();
        assert_eq!(s.device_ns, 30_000.0);
        assert!(!s.complete());
        assert_eq!(s.unaccounted_ns(32_000.0), Some(2_000.0));
        assert_eq!(LatencySplit::from_disk_stat(5, 0, None), None);
        // mmap: 10 requests of 400 us for 1000 I/Os, the rest hits: 4 us
        // of block time per I/O, not 400.
        let mmap = LatencySplit {
            source: SplitSource::Tracepoints,
            queue_ns: Some(100_000.0),
            device_ns: 300_000.0,
            requests: 10,
            ios: 1000,
            ..s
        };
        assert_eq!(mmap.mean_ns(), 4_000.0);
    }

    /// The review's run: others' requests on the disk weighed into a
    /// direct read's I/Os made the device part exceed the mean.
    #[test]
    fn disk_stat_averages_over_others_traffic_are_withheld_never_negative() {
        let s = LatencySplit {
            ios: 1711,
            ..LatencySplit::from_disk_stat(551, 2646, Some(SplitFallback::NotRoot)).unwrap()
        };
        assert!(s.mean_ns() > 121_900.0);
        let shared = s.own_only(Some(0.55));
        assert_eq!(shared.withheld, Some(SplitWithheld::OtherTraffic));
        assert_eq!(shared.unaccounted_ns(121_900.0), None);
        assert_eq!(
            s.own_only(None).withheld,
            Some(SplitWithheld::OwnTrafficUnknown)
        );
        // Own traffic only: the averages stand.
        let own = LatencySplit { ios: 2646, ..s }.own_only(Some(0.0));
        assert_eq!(own.withheld, None);
        // Parts beyond the mean, whatever the source: withheld.
        let over = s.own_only(Some(0.01)).within(121_900.0);
        assert_eq!(over.withheld, Some(SplitWithheld::ExceedsMean));
        assert_eq!(over.unaccounted_ns(121_900.0), None);
        assert_eq!(s.unaccounted_ns(121_900.0), None);
        // Within the tolerance of the mean: kept; a split withheld
        // against one mean is checked again against the mean shown.
        let m = s.mean_ns();
        assert_eq!(s.within(m / (1.0 + PARTS_TOLERANCE / 2.0)).withheld, None);
        let against_median = s.within(m / 1.5);
        assert_eq!(against_median.withheld, Some(SplitWithheld::ExceedsMean));
        assert_eq!(against_median.rechecked(m * 1.01).withheld, None);
        assert_eq!(
            shared.rechecked(m * 2.0).withheld,
            Some(SplitWithheld::OtherTraffic)
        );
        // A withheld repetition withholds the pooled split.
        let pooled = LatencySplit::pooled(&[own, shared]).unwrap();
        assert_eq!(pooled.withheld, Some(SplitWithheld::OtherTraffic));
    }

    #[test]
    fn unmatched_calls_are_weighed_apart_from_cache_hits() {
        let s = LatencySplit {
            source: SplitSource::Tracepoints,
            fallback: None,
            submission_ns: Some(1_000.0),
            queue_ns: Some(1_000.0),
            device_ns: 8_000.0,
            completion_ns: Some(0.0),
            cached_ns: None,
            unmatched_ns: Some(20_000.0),
            entry_ns: None,
            entry_calls: 0,
            withheld: None,
            ring: None,
            runnable_total_ns: None,
            block_ns: None,
            block_timing: None,
            disk_stat_ns: None,
            requests: 4,
            calls: 3,
            calls_without_request: 0,
            calls_unmatched: 1,
            other_requests: 0,
            ios: 4,
        };
        let w = s.weights();
        assert_eq!((w.parts, w.cached, w.unmatched), (0.75, 0.0, 0.25));
        assert_eq!(s.mean_ns(), 12_500.0);
        assert_eq!(s.unaccounted_ns(13_000.0), Some(500.0));
    }

    /// io_uring requests timed in the ring: their thread's waits for a
    /// CPU are inside their parts (the requests wait in the ring
    /// meanwhile), so they are not added again; pooled, the ring's waits
    /// are weighed by their requests.
    #[test]
    fn a_ring_requests_waits_for_a_cpu_are_inside_its_parts_not_added_again() {
        let ring = RingWait {
            sq_ns: 1_000.0,
            cq_ns: 3_000.0,
            requests: 10,
        };
        let s = LatencySplit {
            source: SplitSource::Tracepoints,
            submission_ns: Some(2_000.0),
            queue_ns: Some(0.0),
            device_ns: 10_000.0,
            completion_ns: Some(4_000.0),
            calls: 10,
            ring: Some(ring),
            runnable_total_ns: Some(50_000.0),
            ios: 10,
            ..LatencySplit::from_disk_stat(1, 10, None).unwrap()
        };
        assert_eq!(s.runnable_ns(), None);
        assert_eq!(s.mean_ns(), 16_000.0);
        // Nor a call's way in and out: iopath's stamps bound the parts.
        let calibrated = LatencySplit {
            entry_ns: Some(500.0),
            ..s
        };
        assert_eq!(calibrated.entry_per_io(), None);
        assert_eq!(calibrated.mean_ns(), 16_000.0);
        // Without the ring, once per call, calls per I/O (a cache of
        // iopath's serving half the I/Os without one: half).
        let calls = LatencySplit {
            ring: None,
            ..calibrated
        };
        assert_eq!(calls.entry_per_io(), Some(500.0));
        assert_eq!(
            LatencySplit { ios: 20, ..calls }.entry_per_io(),
            Some(250.0)
        );
        // Pooled: each repetition's weighed by its traced calls (a
        // repetition of three times the calls counts three times; neither
        // the median, 900, nor the plain mean, 900).
        let at = |e: f64, n: u64| LatencySplit {
            entry_ns: Some(e),
            calls: n,
            ..calls
        };
        let p = LatencySplit::pooled(&[at(600.0, 10), at(900.0, 10), at(1_200.0, 30)]).unwrap();
        assert_eq!(p.entry_ns, Some(1_020.0));
        let other = RingWait {
            sq_ns: 3_000.0,
            requests: 30,
            ..ring
        };
        let p = LatencySplit::pooled(&[
            s,
            LatencySplit {
                ring: Some(other),
                ..s
            },
        ])
        .unwrap();
        assert_eq!(
            p.ring.map(|r| (r.sq_ns, r.cq_ns, r.requests)),
            Some((2_500.0, 3_000.0, 40))
        );
        assert_eq!(
            LatencySplit { ring: None, ..s }.runnable_ns(),
            Some(5_000.0)
        );
    }

    /// A cold sequential read's repetitions differ in how many calls
    /// waited for a request (22, 3 and 1 of 32,768 in one run here): the
    /// queue and device parts are per such call, and pooled weighed by
    /// those calls, so that the pooled split says the pooled mean. (Weighed
    /// by requests, as they were, the pooled device part read half the
    /// calls' own, and the summary's parts / mean 0.84-1.00 where each
    /// repetition's read 0.93-0.98.)
    #[test]
    fn per_call_parts_pool_by_the_calls_behind_them() {
        let rep = |calls: u64, device_ns: f64| LatencySplit {
            source: SplitSource::Tracepoints,
            submission_ns: Some(10_000.0),
            queue_ns: Some(device_ns / 10.0),
            device_ns,
            completion_ns: Some(20_000.0),
            cached_ns: Some(2_000.0),
            calls,
            calls_without_request: 32_768 - calls,
            requests: 114,
            ios: 32_768,
            ..LatencySplit::from_disk_stat(1, 1, None).unwrap()
        };
        let reps = [rep(22, 3_278_000.0), rep(3, 1_376_000.0), rep(1, 42_000.0)];
        let p = LatencySplit::pooled(&reps).unwrap();
        let by_calls = (22.0 * 3_278_000.0 + 3.0 * 1_376_000.0 + 42_000.0) / 26.0;
        assert!((p.device_ns - by_calls).abs() < 1e-6, "{}", p.device_ns);
        assert!((p.queue_ns.unwrap() - by_calls / 10.0).abs() < 1e-6);
        // The pooled parts say the mean over all I/Os of the repetitions'.
        let mean = reps.iter().map(|r| r.mean_ns()).sum::<f64>() / 3.0;
        assert!((p.mean_ns() - mean).abs() < 1e-6, "{} {mean}", p.mean_ns());
        // Without calls the parts are per request and pool by requests.
        let req = |requests: u64, device_ns: f64| LatencySplit {
            calls: 0,
            calls_without_request: 0,
            requests,
            ..rep(0, device_ns)
        };
        let p = LatencySplit::pooled(&[req(10, 1_000.0), req(30, 3_000.0)]).unwrap();
        assert_eq!(p.device_ns, 2_500.0);
        // A repetition whose traced calls all hit the page cache: its
        // requests' parts weigh nothing in its own mean, and nothing
        // pooled either (review: weighed by its requests, 114 of them
        // outweighed the other repetitions' 25 calls).
        let all_cached = LatencySplit {
            calls: 0,
            calls_without_request: 32_768,
            ..rep(0, 500_000.0)
        };
        let mixed = [reps[0], reps[1], all_cached];
        let p = LatencySplit::pooled(&mixed).unwrap();
        let by_calls = (22.0 * 3_278_000.0 + 3.0 * 1_376_000.0) / 25.0;
        assert!((p.device_ns - by_calls).abs() < 1e-6, "{}", p.device_ns);
        let mean = mixed.iter().map(|r| r.mean_ns()).sum::<f64>() / 3.0;
        assert!((p.mean_ns() - mean).abs() < 1e-6, "{} {mean}", p.mean_ns());
        // Every repetition's traced calls all cache hits: the requests'
        // parts, weighing nothing in the mean, pool by requests (and the
        // summary keeps its split).
        let cached = |requests: u64, device_ns: f64| LatencySplit {
            requests,
            ..LatencySplit {
                device_ns,
                ..all_cached
            }
        };
        let p = LatencySplit::pooled(&[cached(10, 1_000.0), cached(30, 3_000.0)]).unwrap();
        assert_eq!(p.device_ns, 2_500.0);
        assert_eq!(p.mean_ns(), 2_000.0);
    }

    /// A page-cache read on a busy machine: preempted on the call's
    /// return, after its exit tracepoint. That wait, per I/O, is in the
    /// mean the parts say, not left unaccounted.
    #[test]
    fn the_wait_for_a_cpu_outside_the_calls_is_weighed_per_io() {
        let s = LatencySplit {
            source: SplitSource::Tracepoints,
            submission_ns: None,
            queue_ns: None,
            device_ns: 0.0,
            completion_ns: None,
            cached_ns: Some(3_000.0),
            calls: 0,
            calls_without_request: 1000,
            runnable_total_ns: Some(6_000_000.0),
            ios: 1000,
            ..LatencySplit::from_disk_stat(1, 1, None).unwrap()
        };
        assert_eq!(s.runnable_ns(), Some(6_000.0));
        assert_eq!(s.mean_ns(), 9_000.0);
        assert_eq!(s.unaccounted_ns(10_000.0), Some(1_000.0));
        // Pooled: the totals and the I/Os summed.
        let p = LatencySplit::pooled(&[
            s,
            LatencySplit {
                runnable_total_ns: Some(0.0),
                ..s
            },
        ]);
        assert_eq!(p.unwrap().runnable_ns(), Some(3_000.0));
        assert_eq!(LatencySplit { ios: 0, ..s }.runnable_ns(), None);
    }
}

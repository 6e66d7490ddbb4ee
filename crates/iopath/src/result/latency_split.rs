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

/// Where the figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitSource {
    Tracepoints,
    DiskStat,
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
    /// request being queued, per call that made one. `None` without
    /// tracepoints or where the method makes no such call per request
    /// (io_uring, AIO, mmap).
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
    /// call that made one. `None` as `submission_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_ns: Option<f64>,
    /// A traced call that made no request (the page cache served it),
    /// entry to return, per such call. `None` where there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_ns: Option<f64>,
    /// The case's own requests behind `queue_ns` and `device_ns`
    /// (everyone's for `DiskStat`).
    pub requests: u64,
    /// The traced calls that made a request (behind `submission_ns`,
    /// `completion_ns`), and those that made none (served by the page
    /// cache).
    #[serde(default)]
    pub calls: u64,
    #[serde(default)]
    pub calls_without_request: u64,
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

    /// The weights of the parts and of `cached_ns` in the mean I/O: the
    /// shares of the traced calls that made a request and that made none;
    /// without calls (io_uring, AIO, mmap, the averages), requests per
    /// I/O and 0 (1 and 0 where the I/Os are not known).
    pub fn weights(&self) -> (f64, f64) {
        let all = (self.calls + self.calls_without_request) as f64;
        if all > 0.0 {
            (
                self.calls as f64 / all,
                self.calls_without_request as f64 / all,
            )
        } else if self.ios > 0 {
            (self.requests as f64 / self.ios as f64, 0.0)
        } else {
            (1.0, 0.0)
        }
    }

    /// The mean time per I/O the parts say ([`LatencySplit::weights`]).
    pub fn mean_ns(&self) -> f64 {
        let (w, wc) = self.weights();
        w * self.parts_ns() + wc * self.cached_ns.unwrap_or(0.0)
    }

    /// The measured mean latency `mean_ns` less the parts: what no part
    /// holds ("unaccounted"; the program's own loop, and for the averages
    /// everything outside the block layer).
    pub fn unaccounted_ns(&self, mean_ns: f64) -> f64 {
        mean_ns - self.mean_ns()
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
        Some(LatencySplit {
            submission_ns: weighed(|r| r.submission_ns, |r| r.calls),
            queue_ns: weighed(|r| r.queue_ns, |r| r.requests),
            device_ns: weighed(|r| Some(r.device_ns), |r| r.requests)?,
            completion_ns: weighed(|r| r.completion_ns, |r| r.calls),
            cached_ns: weighed(|r| r.cached_ns, |r| r.calls_without_request),
            requests: total(|r| r.requests),
            calls: total(|r| r.calls),
            calls_without_request: total(|r| r.calls_without_request),
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
            requests,
            calls: 0,
            calls_without_request: 0,
            other_requests: 0,
            ios: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_stat_averages_hold_only_the_device_part_and_leave_the_rest_unaccounted() {
        let s = LatencySplit::from_disk_stat(30, 1000, Some(SplitFallback::NotRoot)).unwrap();
        assert_eq!(s.device_ns, 30_000.0);
        assert!(!s.complete());
        assert_eq!(s.unaccounted_ns(32_000.0), 2_000.0);
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
}

//! Why one method is behind another: the cause a verdict names for the
//! difference between its leader and its runner-up ([`Cause`], in the
//! verdict fact `why`), chosen by `analysis::verdict::why` from the costs
//! per I/O and the latency split, worded by `report::text::why`.

use serde::{Deserialize, Serialize};

/// A part of a request's time ([`super::LatencySplit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitPart {
    /// A system call's way into the kernel and back out, outside its
    /// tracepoints (the switch, the tracer's own work).
    Entry,
    Submission,
    Queue,
    Device,
    Completion,
    /// A call the page cache served, whole.
    Cached,
    /// A call whose block request the tracer could not tie to it, or an
    /// O_DIRECT call that made none, whole (not a cache hit).
    Unmatched,
    /// The wait for a CPU outside the calls.
    Runnable,
}

impl SplitPart {
    /// The parts a verdict may name as the cause of a difference: the
    /// request's own, not the way in and out of a call (mostly the
    /// tracer's work) nor the wait for a CPU (the machine's).
    pub fn is_the_requests(self) -> bool {
        !matches!(self, SplitPart::Entry | SplitPart::Runnable)
    }
}

/// The cause, with the slower method's figure and the leader's beside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// Most of the difference in mean latency is in one part of the
    /// split: each one's ns per I/O in that part.
    Part {
        part: SplitPart,
        slower_ns: f64,
        leader_ns: f64,
    },
    /// Major page faults (a page read from the device in the fault) per
    /// 4 KiB moved.
    MajorFaults { slower: f64, leader: f64 },
    /// The device moved this many bytes of the case's own per byte asked
    /// (read-ahead, whole pages).
    ReadAhead { slower: f64, leader: f64 },
    /// Bytes copied between the kernel and the program per byte moved.
    Copies { slower: f64, leader: f64 },
    /// Voluntary context switches (the worker waited) per I/O.
    ContextSwitches { slower: f64, leader: f64 },
    /// `read`/`write`-family system calls per I/O.
    SystemCalls { slower: f64, leader: f64 },
    /// The two kept different numbers of requests in flight (a
    /// synchronous method at one per thread against a queue).
    InFlight { slower: u64, leader: u64 },
    /// CPU per I/O, ns, where no cost above says more.
    Cpu { slower: f64, leader: f64 },
}

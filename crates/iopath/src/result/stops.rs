//! How a case's repetitions ended short of their plan: one pass where a
//! caching method would re-read memory ([`Passes`]), a `--case-timeout`
//! cut ([`Capped`]); and the memory cgroup of `--cache-limit`
//! ([`CacheLimitInfo`]).

use serde::{Deserialize, Serialize};

/// How a sequential case's repetitions used their time limit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Passes {
    /// `wrapped`: the method does not cache, so its repetitions ran for the
    /// whole time limit, starting over at the end of their range;
    /// `one_pass`: the method caches (a second pass would read memory), so
    /// each repetition stopped after one pass, before its time limit.
    pub kind: PassKind,
    /// Passes over the range in the median repetition.
    pub passes: f64,
    /// `one_pass`: a `--size` at which one pass would last the time limit
    /// at the speed measured (rounded up to a power of two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_size_bytes: Option<u64>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PassKind {
    Wrapped,
    OnePass,
}

/// A repetition that `--case-timeout` stopped part-way.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Capped {
    /// The case's cap (`--case-timeout`).
    pub case_timeout_ns: u64,
    /// Share of the repetition's work done when it stopped (bytes done /
    /// bytes it would have moved; for a time-limited repetition, its time
    /// over its limit).
    pub fraction_done: f64,
    /// The whole repetition's time, extrapolated: `duration_ns` /
    /// `fraction_done`. An estimate, marked as such in every report.
    pub extrapolated_ns: u64,
    /// For a write, its final flush and close: inside `duration_ns` (the
    /// timed interval of a write includes them), where no cap can cut
    /// them, so the repetition may end past the cap by up to this much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_ns: Option<u64>,
}

/// The memory cgroup of `--cache-limit`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CacheLimitInfo {
    pub limit_bytes: u64,
    /// 1 (`memory.limit_in_bytes`) or 2 (`memory.max`).
    pub cgroup_version: u8,
    /// Where it was (removed after the run).
    pub dir: String,
    /// The cgroup's peak memory charge over the run.
    pub peak_bytes: Option<u64>,
    /// Times the cap was hit (v1 failcnt, v2 `max` events).
    pub limit_hits: Option<u64>,
}

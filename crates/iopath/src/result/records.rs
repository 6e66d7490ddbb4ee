//! The records that the layers above the result compute and the result
//! holds: the target as measured on, the verdicts (the verdict module makes
//! them) and the warnings (the warnings module). Plain data, kept here so
//! that the result needs nothing from the layers that read it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::names::{Entrant, TargetKind};
use super::Job;
use crate::stats::{self, Comparison};
use crate::system::metrics::dirty::DirtyLimits;

/// A path as a JSON string, its bytes that are not UTF-8 replaced.
fn lossy_path<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn yes() -> bool {
    true
}

fn level_95() -> f64 {
    0.95
}

/// The target as recorded in results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetInfo {
    /// Written lossily (a name that is not UTF-8, such as a `--dir` with
    /// byte 0xff, gets U+FFFD in its place): JSON strings are UTF-8.
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    /// `temporary`, `file` or `block-device`.
    pub kind: TargetKind,
    pub size_bytes: u64,
    /// Length of the whole file (or device); cases address `size_bytes` of it.
    #[serde(default)]
    pub file_bytes: Option<u64>,
    /// True when iopath created it (and removes it).
    pub created: bool,
    /// Created without a name (`O_TMPFILE`): nothing is left behind even if
    /// the run is killed; `path` is then `<dir>/(unnamed O_TMPFILE)` (or,
    /// for a `--file` that did not exist, the name asked for, which never
    /// appears in the directory).
    #[serde(default)]
    pub unnamed: bool,
    pub writable: bool,
    /// Prefilled with incompressible data by iopath.
    pub prefilled: bool,
    /// Left sparse (--sparse): truncated again before every repetition.
    #[serde(default)]
    pub sparse: bool,
    pub prefill_ns: Option<u64>,
    /// Bytes allocated on disk (st_blocks x 512), to spot sparse files; for
    /// a loop device, those of its backing file.
    pub allocated_bytes: Option<u64>,
}

/// A warning: its facts, and the words written for them
/// (`report::text::warnings`); in JSON `{code, message, cases, facts}`
/// (see [`super::warning`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    from = "super::warning::WarningDoc",
    into = "super::warning::WarningDoc"
)]
pub struct Warning {
    /// Stable identifier for scripts (`low_device_fraction`, ...).
    pub code: String,
    /// The words, as rendered when the result was written (empty until
    /// then); the renderer words the facts again where there are some.
    pub message: String,
    /// The cases it concerns, as `method/pattern`, with a preset's label
    /// when there is one (`buffered/read (sync write)`), as rendered when
    /// the result was written (empty until then).
    pub cases: Vec<String>,
    /// What was found; `None` in results written before warnings had facts.
    pub facts: Option<super::warning::Fact>,
}

/// The verdict on one group of cases.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    /// The group: pattern, block size, requested depth, threads, sync,
    /// read share.
    #[serde(flatten)]
    pub job: Job,
    /// The methods tied for fastest, highest median first (never a
    /// reference method).
    pub fastest: Vec<Entrant>,
    /// Every measured method: the pick first (`ranking[0]` is `pick`),
    /// then the other real ones, highest median throughput first, then the
    /// reference ones (`null`), flagged. Each ratio is the fastest's
    /// (`fastest[0]`) over the method's.
    pub ranking: Vec<Ranked>,
    /// Least CPU per I/O (median ns) of the real methods.
    pub cheapest_cpu: Option<Cost>,
    /// Least memory held of the real methods: the file's page cache plus
    /// the engine's buffers (median bytes).
    pub least_memory: Option<Cost>,
    /// The real method holding the least memory beside the one holding the
    /// most, when the difference is worth a sentence.
    pub memory_trade: Option<MemoryTrade>,
    /// The method to use: of those tied for fastest, the one really
    /// cheaper in CPU per I/O (or, failing that, really smaller in memory)
    /// than the others; when none is, the first of them in the run's order
    /// (never a reference method).
    pub pick: Entrant,
    /// Methods as good as the pick: tied for fastest and not really
    /// different from it in CPU per I/O or memory (the pick first); empty
    /// when the pick stands alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub equally_good: Vec<Entrant>,
    /// Why the pick beat the others tied with it, as the choice found it
    /// (CPU, or memory where CPU did not separate them); absent when it
    /// stands alone or ties, and in results before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cheaper_by: Option<crate::result::verdict_facts::CheaperBy>,
    /// True when the ratios come from repetitions of the same rounds (an
    /// interleaved run); false for the unpaired rule.
    #[serde(default)]
    pub paired: bool,
    /// False when some method is apart from the fastest by too few
    /// rounds to call it ("no call yet"): `pick` is then only the leader.
    #[serde(default = "yes")]
    pub called: bool,
    /// The confidence of each ratio's interval: 95% shared among the
    /// comparisons with the fastest (0.975 for three methods, 0.99 for
    /// six); 0.95 for two methods and in older results.
    #[serde(default = "level_95")]
    pub ci_level: f64,
    /// Methods whose case `--case-timeout` stopped (fewer repetitions than
    /// asked, or a part of one); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capped: Vec<Entrant>,
    /// True when the run was interrupted (Ctrl-C or SIGTERM) while this
    /// job ran: its methods stopped short of the rounds they would have
    /// run. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Without a call, for an adaptive job that stopped at its budget: the
    /// `--max-time` (as typed) that would give it the rounds a call needs,
    /// from its repetitions' measured times. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_for_call: Option<String>,
    /// For a job that stopped at its budget (its share of `--budget`, or a
    /// fio job's `runtime`): that budget, ns, which a verdict without a
    /// call, or too close to call, says. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ns: Option<u64>,
    /// A write verdict whose page-cache writers wrote no more in a
    /// repetition than the kernel's dirty limit: their speed is a burst the
    /// cache absorbed (the text says so and how to measure past it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_burst: Option<DirtyBurst>,
    /// The group's cases left out of the ranking: served from memory with
    /// the cache cold, or writes the page cache absorbed
    /// (`cases[].served`); absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_apart: Vec<super::served::Apart>,
    /// What the verdict says, as facts (a `code` each, and the numbers),
    /// in the order it says them; empty in results written before them.
    #[serde(default)]
    pub facts: Vec<super::verdict_facts::VerdictFact>,
    /// The verdict in words, as printed under the table when the file was
    /// written (`report::text::verdict` words the facts; empty until then).
    #[serde(default)]
    pub text: Vec<String>,
}

/// Writes that stayed under the dirty limit ([`Verdict::dirty_burst`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirtyBurst {
    /// The methods that wrote through the page cache, within the limit.
    pub methods: Vec<Entrant>,
    /// The most any of them wrote in one repetition (median repetition).
    pub written_bytes: u64,
    /// The dirty limit (`system.dirty_limits.limit_bytes`).
    pub limit_bytes: u64,
    /// A `--size` above the limit, to measure sustained writes.
    pub suggested_size_bytes: u64,
    /// The file the random writes addressed, when it is under the limit
    /// (they never pass it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_bytes: Option<u64>,
    /// The limit and where it comes from (the `--cache-limit` cgroup's
    /// when `cgroup`).
    #[serde(default)]
    pub limits: DirtyLimits,
    #[serde(default)]
    pub cgroup: bool,
    /// How often the cgroup's cap was hit, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_hits: Option<u64>,
    /// `--sync none`: nothing waited for the device (else the timed fsync
    /// flushed the writes).
    #[serde(default)]
    pub unsynced: bool,
    /// Twice the limit: what a `--time` should let the writers write.
    #[serde(default)]
    pub past_limit_bytes: u64,
    /// Each writer's median write rate and the time it takes to write
    /// `past_limit_bytes` at it, the slowest first.
    #[serde(default)]
    pub rates: Vec<WriteRate>,
}

/// A page-cache writer's rate ([`DirtyBurst::rates`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WriteRate {
    pub method: Entrant,
    pub bytes_per_s: f64,
    /// Whole seconds to write `past_limit_bytes` at that rate (at least 1).
    pub seconds_past_limit: f64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One method's place in a group.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ranked {
    pub method: Entrant,
    /// Median throughput and its 95% interval (order statistics).
    pub bw_bytes_per_s: f64,
    #[serde(deserialize_with = "stats::interval")]
    pub bw_ci95_median: [f64; 2],
    /// Measured repetitions.
    pub n: usize,
    /// Depth it ran at (synchronous methods: 1, whatever was asked).
    #[serde(default)]
    pub queue_depth: u32,
    /// Threads it ran on (a matched job's synchronous methods: its
    /// concurrency); absent (0) in older results.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub threads: u32,
    /// `threadpool`, `tokio` in a matched job: the pool's threads serving
    /// its one submitter (`CaseResult::pool_threads`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_threads: Option<u32>,
    /// Median throughput ratio of the fastest real method to this one
    /// (paired: Hodges-Lehmann of the per-round ratios), with its 95% interval (1
    /// for the fastest itself; below 1 for a reference method faster than
    /// every real one).
    pub fastest_ratio: f64,
    #[serde(deserialize_with = "stats::interval")]
    pub fastest_ratio_ci95: [f64; 2],
    /// True when its difference from the fastest is not real (see the
    /// module's docs; never for a reference method).
    pub tied_with_fastest: bool,
    /// True when it is not separated from the fastest only because there
    /// were too few repetitions.
    #[serde(default)]
    pub too_few_repetitions: bool,
    /// Behind the fastest beyond the margin, but not behind a method tied
    /// with it (ties do not chain): its place is not settled. Neither tied
    /// nor called slower; the verdict still calls the leading group.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unranked: bool,
    pub cpu_ns_per_io: f64,
    /// The case's block size: in a group of variants whose block sizes
    /// differ, CPU is compared per MiB moved, not per I/O; absent (0) in
    /// older results.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub block_size: u64,
    pub memory_bytes: u64,
    /// True for a method that does no I/O (`null`): measured for reference,
    /// iopath's own ceiling, and left out of every judgement.
    #[serde(default)]
    pub reference: bool,
}

/// What holding less memory costs in speed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemoryTrade {
    pub least: Entrant,
    pub least_bytes: u64,
    pub most: Entrant,
    pub most_bytes: u64,
    /// Median throughput of `least` / that of `most`, its 95% interval,
    /// and whether the difference is real.
    pub speed: Comparison,
}

/// A method and one of its costs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cost {
    pub method: Entrant,
    pub value: f64,
}

//! The result document: what a run measured, as written to JSON.
//!
//! Field names carry their units (`_ns`, `_bytes`, `_per_s`). The schema is
//! described in `docs/json-schema.md`; bump [`SCHEMA_VERSION`] on any change
//! that would break a reader.

pub mod cause;
pub mod conditions;
pub mod costs;
pub mod facts;
pub mod latency;
pub mod latency_split;
pub mod mpi;
pub mod names;
pub mod neighbour;
pub mod records;
pub mod replay;
mod series;
pub mod served;
pub mod skip;
mod stops;
pub mod streams;
mod summary;
mod syncs;
pub mod verdict_facts;
pub mod warning;

use serde::{Deserialize, Serialize};

use crate::system::metrics::blockdev::DiskCounters;
pub use crate::system::metrics::procfs::ProcessIo;
use crate::system::sysinfo::System;
pub use costs::{Costs, Deferred};
pub use latency::{Latency, LatencyBins};
pub use latency_split::{LatencySplit, RingWait};
pub use names::{Entrant, MethodName, TargetKind};
pub use records::{TargetInfo, Warning};
pub use series::Series;
pub use stops::{CacheLimitInfo, Capped, PassKind, Passes};

/// 2: adaptive repetition (`config.repeat` null), warm-up repetitions,
/// per-interval series, `cases[].repetition_control`, `verdicts[]`.
/// 3: interleaved rounds (`config.schedule`, `repetitions[].round` and
/// `.seq`), A/A arms (`cases[].arm`), latency per request with the number
/// of requests behind it (`lat_ns.count`), summary percentiles from the
/// merged histograms, paired verdict ratios.
pub const SCHEMA_VERSION: u32 = 3;

/// The start of `skipped` for a case an interrupted run never reached:
/// its words. The fact is `CaseResult::not_reached` (older results have only
/// these words, and are read by them).
pub const NOT_REACHED: &str = "the run was interrupted";

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// One run: its configuration, the system, and every case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub schema_version: u32,
    pub tool: Tool,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    /// The command line, shell-quoted.
    pub command: String,
    /// True when Ctrl-C/SIGTERM stopped the run early.
    pub interrupted: bool,
    pub system: System,
    pub target: Option<TargetInfo>,
    pub config: RunConfig,
    /// Every method the run used, probed on the target.
    pub probe: Vec<ProbeEntry>,
    pub cases: Vec<CaseResult>,
    /// What in these results may not be what it seems (docs/methodology.md).
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// For each group of cases that differ only by method: the fastest,
    /// by how much, and the costs (docs/statistics.md).
    #[serde(default)]
    pub verdicts: Vec<records::Verdict>,
    /// A run of many MPI ranks: ranks, hosts, layout and every rank's part
    /// (the cases hold the aggregate); absent for one process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<mpi::MpiInfo>,
    /// `--replay`: the trace replayed, and what it says of the program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<replay::Replay>,
}

/// The effective settings of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunConfig {
    /// The preset the cases come from (`iopath run --preset NAME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// How the results are laid out under the tables (a job's `layout`:
    /// `crystal`, `niobench`, ...); absent: the usual tables, or the
    /// preset's layout for results before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<crate::model::job::Layout>,
    /// The job file (TOML, or fio's with `--fio`) the cases come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_file: Option<String>,
    /// Options of a fio job file left out with `--ignore-unknown`, as
    /// `key=value (file:line)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_options: Vec<String>,
    /// Null `time_limit_ns` because every repetition is one whole pass (a
    /// preset's `time = "pass"`); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole_pass: bool,
    /// `--latency-split` was asked for and the tracepoints were not used:
    /// why (the splits are the `/sys/block` averages, or none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_split_fallback: Option<latency_split::SplitFallback>,
    /// `--cache-limit`: the memory cgroup the cases ran in; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_limit: Option<CacheLimitInfo>,
    pub time_limit_ns: Option<u64>,
    pub io_size_bytes: Option<u64>,
    /// `--repeat N`; null: adaptive (see `ci_target`, `max_time_ns`).
    pub repeat: Option<u32>,
    /// Adaptive repetition stops once the median throughput's 95% interval
    /// is within this fraction of the median (0.03 = 3%).
    #[serde(default)]
    pub ci_target: Option<f64>,
    /// Adaptive repetition's time budget per case, warm-up included.
    #[serde(default)]
    pub max_time_ns: Option<u64>,
    /// `--case-timeout`: the wall-clock cap of one case, all its
    /// repetitions together; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_timeout_ns: Option<u64>,
    /// How long the run was expected to take before any I/O (the line
    /// iopath printed); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_ns: Option<u64>,
    /// Warm-up repetitions per case: run and recorded, not counted.
    #[serde(default)]
    pub warmup: u32,
    /// `interleaved`: the methods of a job take turns, one repetition each
    /// per round, in an order shuffled per round from `seed`;
    /// `sequential`: each case runs all its repetitions back to back.
    /// Absent in results older than schema 3 (sequential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Seed of the rounds' shuffled orders (`--order-seed`; drawn at random
    /// when not given, so that identical runs do not all share one order);
    /// absent for sequential runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// Length of the intervals of each repetition's time series.
    #[serde(default)]
    pub interval_ns: u64,
    pub seed: u64,
    /// `cold`: dirty pages written back and the file's cached pages dropped
    /// (posix_fadvise DONTNEED) before every repetition.
    pub cache: crate::model::CacheState,
    /// `random`: incompressible data from a seeded generator.
    pub data: String,
    /// The conditions that move a figure as much as the path does (buffer
    /// backing, registered buffers, passes, offsets); absent in results
    /// that did not record them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<conditions::Conditions>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeEntry {
    pub method: MethodName,
    pub usable: bool,
    /// Why not, in words as they were when the result was written.
    pub reason: Option<String>,
    /// The same as a typed fact; absent in results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<skip::Skip>,
    pub notes: Vec<String>,
}

/// One case: a method on a pattern at one block size, depth and thread count.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CaseResult {
    pub method: MethodName,
    pub pattern: crate::model::Pattern,
    pub block_size: u64,
    /// Effective depth per thread (1 for synchronous methods).
    pub queue_depth: u32,
    pub queue_depth_requested: u32,
    pub threads: u32,
    /// The requests in flight its job compares the methods at, which this
    /// case reached with `threads` x `queue_depth` (concurrency matching);
    /// absent for a case run at the depth and threads asked, and in older
    /// results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// `threadpool`, `tokio` in a matched job: the pool's threads, serving
    /// the one submitting thread (`threads`) that keeps `queue_depth` in
    /// flight; absent otherwise and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_threads: Option<u32>,
    #[serde(with = "names::sync_name")]
    pub sync: iopath_io::SyncPolicy,
    /// A sync every N writes of each worker (`"16:fdatasync"`), if any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::model::words::opt"
    )]
    pub sync_every: Option<iopath_io::SyncEvery>,
    /// Read share of randrw, in percent; null for other patterns.
    pub rwmix_read_pct: Option<u8>,
    /// The arm of a method named more than once (`--methods direct,direct`
    /// runs `direct` and `direct#2`: an A/A check); absent for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<u32>,
    /// What the preset calls the case (`SEQ1M Q8T1`, `sync write`); absent
    /// outside presets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Random offsets within the first `span_bytes` of the file; absent:
    /// the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_bytes: Option<u64>,
    /// Reads copied from the engine's buffer into a user buffer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub copy_to_user: bool,
    /// The file truncated before every repetition (writes allocate).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sparse: bool,
    /// What the case's I/O buffers were made of (`pages`, `huge`:
    /// `--buffers`); absent in results of versions that did not record it
    /// (their buffers were huge pages where a request spans over 4 KiB).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::model::words::opt"
    )]
    pub buffers: Option<iopath_io::BufferBacking>,
    /// The case's own cache state, when not the run's (`config.cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<crate::model::CacheState>,
    /// `false`: the case ran outside the run's `--cache-limit` cgroup (a
    /// job that limits only the cases it marks); absent: inside it, when
    /// the run has one (older results never say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_limited: Option<bool>,
    /// What the preset's source published for this case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<crate::model::job::Published>,
    /// The job's group: cases of one pattern with the same group ran as
    /// one job and have one verdict over their variants; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// How a sequential case with a time limit filled it: wrapped around
    /// its range, or capped at one pass (a caching method); absent for
    /// other cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<Passes>,
    /// Bytes of one whole repetition without a time limit: the case's byte
    /// count (a preset's `touch`, `--io-size`), else one pass over its
    /// range; absent for copies and in older results. A grid that shows
    /// the seconds of the whole operation (hmmap's) divides it by the rate
    /// measured when a repetition moved other than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_bytes: Option<u64>,
    /// The placement study's (CPU node, memory node) pair, relative to the
    /// device (`cpu n0 local / mem n1 remote`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<String>,
    /// Where the workers ran and the I/O buffers lived, as read back (CPU
    /// affinity inside each worker, buffer pages per node); null for a case
    /// that did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::system::placement::PlacementResult>,
    /// Null, or why the case did not run, in words as they were when the
    /// result was written.
    pub skipped: Option<String>,
    /// The same as a typed fact ([`skip::Skip`]); absent in results
    /// written before it, and for a case that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<skip::Skip>,
    /// True for a case an interrupted run never reached (`skipped` then
    /// says so in words): it could have run here, it was not refused.
    /// Absent (false) otherwise, and in results before it was recorded,
    /// where [`CaseResult::not_reached()`] reads `skipped`'s words instead.
    #[serde(default, skip_serializing_if = "is_false")]
    pub not_reached: bool,
    /// Null, or the error that stopped the case.
    pub error: Option<String>,
    /// `--verify`: bytes whose headers and checksums were checked, over all
    /// repetitions (blocks read by read patterns; blocks read back after
    /// each repetition of a write pattern); absent without `--verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_bytes: Option<u64>,
    /// `--verify`: time spent stamping and checking blocks, over all
    /// repetitions, ns. Reads' checks and writes' stamping run inside the
    /// repetition's wall time (in no request's latency); a write
    /// repetition's read-back runs after its timing and is counted here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_ns: Option<u64>,
    /// `--neighbour`: what the neighbour saw before and during each
    /// measured repetition; absent without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub neighbour: Vec<neighbour::NeighbourRep>,
    /// Departures from what was asked (capped depth, fallbacks), in words
    /// as they were when the result was written.
    pub notes: Vec<String>,
    /// The same notes as typed facts ([`facts::CaseNote`]); absent in
    /// results written before them, and when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<facts::CaseNote>,
    /// What served it: the device, memory (`memory`), or the page cache
    /// absorbing its writes (`absorbed`), from its figures
    /// ([`served::Served`]); absent for a case not measured, where the
    /// figures cannot tell, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<served::Served>,
    /// Its streams, run at the same time ([`streams`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<streams::StreamResult>,
    /// Every repetition in order, warm-ups (`"warmup": true`) included:
    /// the per-iteration series ("cardiogram").
    pub repetitions: Vec<Repetition>,
    /// How many repetitions ran and why they stopped; null for a case that
    /// did not run.
    #[serde(default)]
    pub repetition_control: Option<RepetitionControl>,
    /// Medians over the measured repetitions (warm-ups and repetitions cut
    /// by Ctrl-C left out); null when none completed.
    pub summary: Option<Measurement>,
    /// Spread of the main metrics over the repetitions (min, median, mean,
    /// max, stddev, cv, 95% intervals, outliers); null when none completed.
    #[serde(default)]
    pub stats: Option<crate::stats::CaseStats>,
}

/// What a case ran, apart from its method: cases with the same job differ
/// only by method (a verdict's group); with the method, it identifies a
/// case across runs (`iopath compare`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Job {
    pub pattern: crate::model::Pattern,
    pub block_size: u64,
    /// The depth asked for (synchronous methods ran at 1 either way); of a
    /// matched job, its concurrency.
    pub queue_depth: u32,
    /// Of a matched job: 1 (each method's own threads are in its case).
    pub threads: u32,
    /// The requests in flight a matched job compares its methods at, each
    /// reaching them its own way; absent for a job run at the depth and
    /// threads asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    #[serde(with = "names::sync_name")]
    pub sync: iopath_io::SyncPolicy,
    /// A sync every N writes of each worker (`"16:fdatasync"`), if any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::model::words::opt"
    )]
    pub sync_every: Option<iopath_io::SyncEvery>,
    pub rwmix_read_pct: Option<u8>,
    /// A preset's name for the case; cases of a preset group by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub copy_to_user: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sparse: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<String>,
    /// In a verdict over a group of variants (a preset's `group`): its
    /// name; the other fields are then those of its first case. Never set
    /// in a case's own job, so that `compare` matches cases as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// What makes cases one job (run in rounds together, judged by one
/// verdict): the same [`Job`], or the same group and pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JobKey {
    Job(Job),
    Group {
        group: String,
        pattern: crate::model::Pattern,
    },
}

impl Job {
    /// [`Job::label`] at the depth the job ran at (`randread 4k Q1T1` for a
    /// synchronous method asked for Q32); `depth` 0: the depth asked.
    pub fn label_at(&self, depth: u32) -> String {
        let mut j = self.clone();
        if depth > 0 && j.concurrency.is_none() {
            j.queue_depth = depth;
        }
        j.label()
    }

    /// CrystalDiskMark's way of naming a job, with the pattern and the
    /// requested depth: `randread 4k Q32T1`, `randrw 4k Q32T1 70% read`;
    /// a matched job with its requests in flight: `randread 4k N32`.
    pub fn label(&self) -> String {
        if let Some(g) = &self.group {
            return format!("{}, {g}", self.pattern);
        }
        format!("{} {}", self.pattern, self.label_after_pattern())
    }

    /// [`Job::label`] after its pattern, for a job not of a group: `4k
    /// N32` for a job matched by concurrency, else `4k Q32T1`; with its
    /// mix, label or pair, span, `+copy`, `sparse`.
    pub fn label_after_pattern(&self) -> String {
        let bs = crate::model::units::fmt_bs(self.block_size);
        let mut s = match self.concurrency {
            Some(n) => format!("{bs} N{n}"),
            None => format!("{bs} Q{}T{}", self.queue_depth, self.threads),
        };
        if let Some(r) = self.rwmix_read_pct {
            s.push_str(&format!(" {r}% read"));
        }
        if let Some(e) = self.sync_every {
            // fio's spelling: `fdatasync=16`.
            s.push_str(&format!(" {}={}", e.call.name(), e.writes));
        }
        match (&self.label, &self.pair) {
            (Some(l), Some(p)) => s.push_str(&format!(" ({l}; {p})")),
            (Some(l), None) => s.push_str(&format!(" ({l})")),
            (None, Some(p)) => s.push_str(&format!(" ({p})")),
            (None, None) => {
                if let Some(span) = self.span_bytes {
                    s.push_str(&format!(" span {}", crate::model::units::fmt_bytes(span)));
                }
                if self.copy_to_user {
                    s.push_str(" +copy");
                }
                if self.sparse {
                    s.push_str(" sparse");
                }
            }
        }
        s
    }
}

/// How a case's repetitions went.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepetitionControl {
    pub stopped_by: crate::stats::StopReason,
    /// Repetitions counted in `summary` and `stats`.
    pub measured: u32,
    /// Warm-up repetitions run first (recorded, not counted).
    pub warmup: u32,
    /// Half-width of the median throughput's interval over its median at
    /// the end (`stats.bw_bytes_per_s.ci95_median`); null with fewer than
    /// two measured repetitions.
    pub ci_rel: Option<f64>,
    /// The interval's real confidence (below 0.95 with fewer than 6).
    pub ci_level: f64,
    /// Wall time of the whole case, warm-ups and set-up included.
    pub elapsed_ns: u64,
    /// Requests of the measured repetitions together: what the summary's
    /// `lat_ns.count` counts, not its `ios` (the median repetition's).
    /// Absent in results before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_ios: Option<u64>,
    /// The time its job was given, ns, when it had a budget (its share of
    /// `--budget`, or a fio job's `runtime`); absent without one and in
    /// results before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ns: Option<u64>,
    /// When its repetitions' length was iopath's and its job's budget let
    /// them run on past it: the latest one may end, ns, unless every
    /// request in flight has had its 32 requests before
    /// (`plan::MIN_REQUESTS_PER_SLOT`, docs/statistics.md); absent
    /// otherwise and in results before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stretch_until_ns: Option<u64>,
}

impl CaseResult {
    /// True for a case an interrupted run never reached: not refused, not
    /// failed, only not run before the interruption ([`NOT_REACHED`]).
    pub fn not_reached(&self) -> bool {
        self.not_reached
            || self
                .skipped
                .as_deref()
                .is_some_and(|s| s.starts_with(NOT_REACHED))
    }

    /// The method as tables, verdicts and `compare` name it: `direct`, or
    /// `direct#2` for the second arm of an A/A check.
    pub fn name(&self) -> String {
        match self.arm {
            Some(a) if a > 1 => format!("{}#{a}", self.method),
            _ => self.method.to_string(),
        }
    }

    /// The case as a verdict ranks it in a job ([`Entrant`]): its method,
    /// with its arm from the second on (`direct#2`, as [`Self::name`]).
    pub fn entrant(&self) -> Entrant {
        match &self.method {
            MethodName::Known(method) => Entrant::Method {
                method: *method,
                arm: self.arm.filter(|&a| a > 1),
            },
            MethodName::Other(_) => Entrant::from(self.name()),
        }
    }

    /// The job as this case ran it: its label with the depth it really ran
    /// at (`randread 4k Q1T1` for a synchronous method asked for Q32).
    pub fn ran_label(&self) -> String {
        self.job().label_at(self.queue_depth)
    }

    /// What the case ran, apart from its method.
    pub fn job(&self) -> Job {
        // A matched job is the same for every method, whatever threads and
        // depth each reached its concurrency with.
        let (queue_depth, threads) = match self.concurrency {
            Some(n) => (n, 1),
            None => (self.queue_depth_requested, self.threads),
        };
        Job {
            pattern: self.pattern,
            block_size: self.block_size,
            queue_depth,
            threads,
            concurrency: self.concurrency,
            sync: self.sync,
            sync_every: self.sync_every,
            rwmix_read_pct: self.rwmix_read_pct,
            label: self.label.clone(),
            span_bytes: self.span_bytes,
            copy_to_user: self.copy_to_user,
            sparse: self.sparse,
            pair: self.pair.clone(),
            group: None,
        }
    }

    /// The job this case runs in and is judged with: its group's (a
    /// preset's variants of one pattern), else its own [`Job`].
    pub fn job_key(&self) -> JobKey {
        match &self.group {
            Some(g) => JobKey::Group {
                group: g.clone(),
                pattern: self.pattern,
            },
            None => JobKey::Job(self.job()),
        }
    }

    /// The repetitions summaries are made of: not warm-ups, and not cut
    /// short by Ctrl-C or `--case-timeout` (unless nothing else is there).
    pub fn measured(&self) -> Vec<&Measurement> {
        let counted: Vec<&Measurement> = self.repetitions.iter().filter(|m| !m.warmup).collect();
        let complete: Vec<&Measurement> = counted
            .iter()
            .copied()
            .filter(|m| !m.interrupted && m.capped.is_none())
            .collect();
        if complete.is_empty() {
            counted
        } else {
            complete
        }
    }

    /// One metric over [`CaseResult::measured`].
    pub fn samples(&self, f: impl Fn(&Measurement) -> f64) -> Vec<f64> {
        self.measured().into_iter().map(f).collect()
    }
}

/// One measured repetition (or, in `summary`, medians of repetitions).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Measurement {
    pub io_bytes: u64,
    pub ios: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    /// Bytes read and written (`io_bytes` = the two together).
    #[serde(default)]
    pub read_bytes: u64,
    #[serde(default)]
    pub write_bytes: u64,
    /// From the first worker's start to its end: for write cases the last
    /// worker's flush and close, for read cases the last completion.
    pub duration_ns: u64,
    pub bw_bytes_per_s: f64,
    pub iops: f64,
    pub lat_ns: Latency,
    /// What the block devices under the target moved during the repetition
    /// (system-wide counters: other traffic on the disk counts too); null
    /// when no block device is under the target.
    #[serde(default)]
    pub device: Option<DiskCounters>,
    /// Device bytes / bytes the case asked for, in the direction that says
    /// whether the device did the work: device reads / bytes read for read
    /// patterns and randrw (whose writes would hide cache hits), device
    /// writes / bytes written for write patterns; null without a block
    /// device.
    #[serde(default)]
    pub device_fraction: Option<f64>,
    /// What this process's own threads made the block layer move during
    /// the repetition, and their read/write calls (`/proc/self/io`, less
    /// the main thread's and iopath's bystander threads', each from
    /// `/proc/self/task/TID/io`): the case's own share of `device`, which
    /// other processes' traffic does not enter; null where the kernel
    /// keeps no I/O accounting, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_io: Option<ProcessIo>,
    /// The costs per I/O beside the CPU ([`Costs`]); null in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<Costs>,
    /// The kernel's deferred work over the repetition, an estimate
    /// ([`Deferred`]); null when not measured (`null`, older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred: Option<Deferred>,
    /// Where the mean latency went: submission, queueing in the block
    /// layer, the device, completion ([`LatencySplit`]); null without a
    /// block device, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_split: Option<LatencySplit>,
    #[serde(default)]
    pub cpu: Cpu,
    #[serde(default)]
    pub memory: Memory,
    /// True when Ctrl-C cut this repetition short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// True for a warm-up repetition (recorded, not counted).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
    /// Throughput per interval within the repetition; absent in summaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// The interleaved round this repetition ran in (1-based; warm-ups
    /// are round 0); absent in summaries and sequential runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// Its place in the whole run's order of repetitions (1-based, warm-ups
    /// included): with `round`, the order every round really ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    /// `--case-timeout` stopped this repetition part-way: the share done
    /// and the whole repetition's extrapolated time. In a summary: every
    /// repetition behind it was capped (medians of theirs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capped: Option<Capped>,
    /// The syncs a case with a sync every N writes made in the repetition
    /// (inside its wall time, so in its bandwidth and IOPS; in no
    /// request's latency); absent for other cases. In a summary: medians.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syncs: Option<Syncs>,
    /// Each stream's figures (a case of streams; not in a summary).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<streams::StreamRep>,
}

pub use syncs::Syncs;

pub type Repetition = Measurement;

/// CPU time the case cost, all workers together, ns.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Cpu {
    /// The workers' CPU time, from the scheduler's precise per-thread clock.
    #[serde(default)]
    pub cpu_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    /// io_uring's kernel threads of this process (SQPOLL, io-wq workers):
    /// not in user/sys, which are the workers' own.
    pub sqpoll_ns: u64,
    pub ctx_vol: u64,
    pub ctx_invol: u64,
    pub minflt: u64,
    pub majflt: u64,
    /// Time the workers were runnable but waiting for a CPU, summed over
    /// the workers (the scheduler's `run_delay`,
    /// `/proc/thread-self/schedstat`); 0 where the kernel does not say,
    /// and in results written before it.
    #[serde(default)]
    pub run_delay_ns: u64,
    /// The CPU per I/O the verdicts and tables use: `own_ns_per_io`, plus
    /// the kernel's deferred work per I/O where it is charged to the case
    /// (cases that write: their write-back; `deferred.charged`).
    /// Elsewhere (and in results written before `own_ns_per_io`) the same
    /// as `own_ns_per_io`.
    pub ns_per_io: f64,
    /// (workers' CPU + sqpoll) / ios: the process's own CPU per I/O,
    /// measured, no estimate in it. Workers' CPU is the scheduler's precise
    /// per-thread clock over the timed interval; user/sys above are its
    /// split as getrusage reports it (tick-grained). Null in older results,
    /// whose `ns_per_io` is this figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_ns_per_io: Option<f64>,
    /// (workers' CPU + sqpoll) / duration: CPUs kept busy (1.0 = one core).
    pub utilization: f64,
}

/// Memory the case held, bytes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Memory {
    /// The target's pages in the page cache after the repetition (mincore;
    /// estimated from samples for large files).
    pub page_cache_bytes: u64,
    /// The same, before the repetition.
    pub page_cache_before_bytes: u64,
    /// The engines' own I/O buffers (threads x depth x block size).
    pub buffers_bytes: u64,
    /// What this case holds: `page_cache_bytes` + `buffers_bytes`.
    #[serde(default)]
    pub total_bytes: u64,
    /// Peak resident memory of the process during the repetition.
    pub rss_peak_bytes: u64,
    /// Locked and pinned memory while the engines were open (io_uring
    /// registered buffers).
    pub locked_bytes: u64,
    /// Change of the system-wide `Cached` (/proc/meminfo).
    pub cached_delta_bytes: i64,
    /// `Dirty` + `Writeback` after the repetition, system-wide.
    pub dirty_after_bytes: u64,
    /// Page cache charged to the process's memory cgroup after the
    /// repetition; null outside a memory cgroup.
    pub cgroup_file_bytes: Option<u64>,
}

/// Median of `v` (mean of the middle two for even lengths); 0 when empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    crate::stats::median_sorted(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }

    #[test]
    fn summary_is_fieldwise_median() {
        let rep = |bw: f64, p99: u64| Measurement {
            io_bytes: 10,
            ios: 1,
            read_ios: 1,
            write_ios: 0,
            read_bytes: 10,
            write_bytes: 0,
            duration_ns: 5,
            bw_bytes_per_s: bw,
            iops: bw / 2.0,
            lat_ns: Latency {
                count: 1,
                min: 1,
                mean: 1.0,
                p50: 1,
                p90: 1,
                p99,
                p999: 1,
                max: 1,
                stddev: Some(p99 as f64),
                bins: Some(LatencyBins([p99; LatencyBins::LEN])),
            },
            device: None,
            device_fraction: None,
            cpu: Cpu::default(),
            memory: Memory::default(),
            interrupted: false,
            warmup: false,
            series: None,
            ..Default::default()
        };
        let s = Measurement::median_of(&[&rep(1.0, 30), &rep(9.0, 10), &rep(5.0, 20)]).unwrap();
        assert_eq!(s.bw_bytes_per_s, 5.0);
        assert_eq!(s.lat_ns.p99, 20);
        // Counts add up; the stddev is a median like the rest.
        assert_eq!(s.lat_ns.count, 3);
        assert_eq!(s.lat_ns.bins, Some(LatencyBins([60; LatencyBins::LEN])));
        assert_eq!(s.lat_ns.stddev, Some(20.0));
        // One repetition without them: none in the summary.
        let mut old = rep(5.0, 20);
        old.lat_ns.stddev = None;
        old.lat_ns.bins = None;
        let s = Measurement::median_of(&[&rep(1.0, 30), &old]).unwrap();
        assert_eq!((s.lat_ns.stddev, s.lat_ns.bins), (None, None));
        assert!(Measurement::median_of(&[]).is_none());
    }

    #[test]
    fn series_rates_use_the_real_length_of_the_last_interval() {
        let s = Series::from_counts(100_000_000, 50_000_000, &[1000, 0, 500], &[10, 0, 5]);
        assert_eq!(s.bw_bytes_per_s, vec![10_000.0, 0.0, 10_000.0]);
        assert_eq!(s.iops, vec![100.0, 0.0, 100.0]);
    }
}

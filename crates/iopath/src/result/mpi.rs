//! The record of a run of many ranks (`mpirun -n N iopath run ...`, built
//! with the cargo feature `mpi`): how many ranks and hosts, the file layout,
//! and every rank's part of every repetition. The cases' measurements are
//! the aggregate of all ranks (docs/mpi.md); this says how they were made.

use serde::{Deserialize, Serialize};

use crate::system::metrics::blockdev::DiskCounters;

/// How the ranks share the test file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileLayout {
    /// Each rank its own file in `--dir` (IOR's file per process).
    PerRank,
    /// One file; rank r addresses the r-th contiguous part of it.
    SharedSegmented,
    /// One file; blocks interleaved by rank (block i is rank i mod N's).
    SharedStrided,
}

impl FileLayout {
    pub const NAMES: &'static str = "per-rank, shared (= shared-segmented), shared-strided";

    pub fn name(self) -> &'static str {
        match self {
            FileLayout::PerRank => "per-rank",
            FileLayout::SharedSegmented => "shared-segmented",
            FileLayout::SharedStrided => "shared-strided",
        }
    }

    pub fn parse(s: &str) -> Option<FileLayout> {
        match s {
            "per-rank" | "file-per-process" | "fpp" => Some(FileLayout::PerRank),
            "shared" | "shared-segmented" | "segmented" => Some(FileLayout::SharedSegmented),
            "shared-strided" | "strided" => Some(FileLayout::SharedStrided),
            _ => None,
        }
    }

    /// `--layout`'s parser.
    pub fn parse_arg(s: &str) -> Result<FileLayout, String> {
        FileLayout::parse(s).ok_or_else(|| format!("expected one of {}", FileLayout::NAMES))
    }

    pub fn shared(self) -> bool {
        self != FileLayout::PerRank
    }
}

/// The `mpi` object of a result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MpiInfo {
    pub ranks: u32,
    /// Distinct hosts (by host name) and the ranks on each.
    pub hosts: Vec<HostRanks>,
    pub layout: Option<FileLayout>,
    /// What ranks sharing a host share (page cache, device, counters).
    pub note: String,
    /// What differs between ranks or is left out (a shared file's tail
    /// that no rank addresses; ranks on different file systems).
    /// In words as they were when the result was written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The same notes as typed facts ([`MpiNote`]); absent in results
    /// written before them, and when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<MpiNote>,
    /// Per case: every rank's part over the measured repetitions, the
    /// slowest rank and the spread.
    pub cases: Vec<MpiCase>,
    /// Every repetition (warm-ups included), every rank's row.
    pub repetitions: Vec<MpiRep>,
}

/// What differs between the ranks of a run, or what they leave out
/// (`mpi.facts`), worded by `report::text::skips`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum MpiNote {
    /// The ranks' targets differ: each target (its file system and
    /// device) with the ranks on it. The result records rank 0's.
    TargetsDiffer { groups: Vec<RankTargets> },
    /// A shared file's tail that the ranks' equal parts leave out: the
    /// file is not a multiple of `ranks` x `block_size`.
    UnusedTail {
        path: String,
        file_bytes: u64,
        ranks: u64,
        block_size: u64,
    },
}

/// Ranks whose targets are alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankTargets {
    pub target: String,
    pub ranks: Vec<RankHost>,
}

/// A rank and its host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankHost {
    pub rank: u32,
    pub host: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostRanks {
    pub host: String,
    pub ranks: Vec<u32>,
}

/// One repetition of one case across the ranks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MpiRep {
    /// The case, as the tables name it (`direct read 1M Q8T1`).
    pub case: String,
    pub seq: u32,
    pub warmup: bool,
    /// Ctrl-C cut it short on some rank.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// First start to last end over all ranks (IOR's interval), ns.
    pub common_ns: u64,
    /// Bytes of all ranks: the aggregate is `io_bytes / common_ns`.
    pub io_bytes: u64,
    pub ios: u64,
    pub bw_bytes_per_s: f64,
    /// When the first rank finished (from the first start), the bytes all
    /// ranks had done by then, and their rate over that time.
    pub stonewall_ns: u64,
    pub stonewall_bytes: u64,
    pub stonewall_bw_bytes_per_s: f64,
    pub ranks: Vec<RankRow>,
    pub hosts: Vec<HostRow>,
}

/// One rank's part of one repetition. Times are from the release of the
/// barrier before the repetition, on the rank's own monotonic clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    pub rank: u32,
    pub host: String,
    /// The case this rank ran in this slot (the same on every rank: the
    /// runner checks it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub case: String,
    /// This rank's own notes on the repetition (its cache state, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub io_bytes: u64,
    pub ios: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Its own bytes over its own interval.
    pub bw_bytes_per_s: f64,
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
    pub cpu_ns: u64,
    /// The host's block-device counters as this rank saw them (system
    /// wide: every rank of the host counts the same device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DiskCounters>,
}

/// One host's part of one repetition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostRow {
    pub host: String,
    pub ranks: Vec<u32>,
    pub io_bytes: u64,
    /// Its ranks' first start to their last end, ns, and its bytes over
    /// that (not a sum of its ranks' rates over different intervals).
    #[serde(default)]
    pub common_ns: u64,
    #[serde(default)]
    pub bw_bytes_per_s: f64,
    /// The host's devices, counted once (from its first rank's counters
    /// before to its last rank's after), not once per rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DiskCounters>,
}

/// One case over its measured repetitions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MpiCase {
    pub case: String,
    pub measured: u32,
    /// Per rank: median of its own rate, median of its end time.
    pub ranks: Vec<RankSummary>,
    pub hosts: Vec<HostSummary>,
    /// The rank whose median end came last (the straggler).
    pub slowest_rank: Option<u32>,
    /// Fastest rank's median rate / slowest rank's (1.0: all alike).
    pub spread: Option<f64>,
    /// Median of the stonewall rate over the measured repetitions.
    pub stonewall_bw_bytes_per_s: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    pub rank: u32,
    pub host: String,
    pub io_bytes: u64,
    pub bw_bytes_per_s: f64,
    pub end_ns: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostSummary {
    pub host: String,
    pub ranks: Vec<u32>,
    /// Median over repetitions of the host's bytes.
    pub io_bytes: u64,
    /// Median over repetitions of the host's bytes over its common
    /// interval (its first rank's start to its last rank's end).
    pub bw_bytes_per_s: f64,
    /// Median device bytes read and written per repetition.
    pub device_read_bytes: Option<u64>,
    pub device_write_bytes: Option<u64>,
}

/// What ranks on one host share, said in every result of many ranks.
pub const SHARED_HOST_NOTE: &str = "ranks on one host share its page cache, its devices and their counters: device bytes are counted once per host (not per rank), and one rank's cached pages may serve another's reads when they read the same file";

/// Facts for the tests of the layers above.
#[cfg(test)]
pub(crate) mod examples {
    use super::*;

    /// Ranks 0 and 1 (on h0) on ext4, rank 2 (on h1) on tmpfs.
    pub(crate) fn targets_differ() -> MpiNote {
        let who = |rank: u32, host: &str| RankHost {
            rank,
            host: host.into(),
        };
        MpiNote::TargetsDiffer {
            groups: vec![
                RankTargets {
                    target: "ext4 on vda".into(),
                    ranks: vec![who(0, "h0"), who(1, "h0")],
                },
                RankTargets {
                    target: "tmpfs, no block device".into(),
                    ranks: vec![who(2, "h1")],
                },
            ],
        }
    }
}

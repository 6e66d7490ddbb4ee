//! The conditions of a run that move its figures as much as the path does
//! (`config.conditions`): what the I/O buffers were made of, whether
//! io_uring's buffers and file were registered, whether a caching method
//! given a time limit starts over when it reaches the end of the file, and
//! how random offsets are drawn. Plain facts; `report::text::conditions`
//! words them for `--explain`, and docs/methodology.md (rule 9) names the
//! fio option that makes each the same.

use serde::{Deserialize, Serialize};

/// The conditions the run's cases ran under.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Conditions {
    /// What the cases' I/O buffers were made of, each backing once
    /// (`pages`; `pages`, `huge` with `--buffers pages,huge`).
    pub buffers: Vec<String>,
    /// io_uring methods register their buffers (`IORING_REGISTER_BUFFERS`,
    /// fixed reads and writes) where `RLIMIT_MEMLOCK` allows, and their
    /// file; a case whose registration failed says so in its notes.
    pub uring_registered: bool,
    /// What a sequential case of a caching method does at the end of the
    /// file before its time limit is up.
    pub cached_passes: CachedPasses,
    /// How random offsets are drawn.
    pub random_offsets: RandomOffsets,
    /// The syncs every N writes the cases made (`--sync-every`, fio's
    /// `fsync=N`, `fdatasync=N`), each setting once; empty (absent) when
    /// none did. Each as `--sync-every` spells it (`16:fdatasync`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sync_every: Vec<String>,
    /// The target was opened with `O_NOATIME` (`--noatime`): reads did
    /// not update its access time, nor did the kernel check whether they
    /// should. False (and absent in older results): a plain open, whose
    /// reads do.
    #[serde(default)]
    pub noatime: bool,
}

/// What a caching method's sequential case does at the end of the file
/// under a time limit.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CachedPasses {
    /// It starts over and runs the whole time (a warm cache, or a case
    /// that asked for it): fio's `time_based`.
    Repeated,
    /// It stops after one pass (a cold cache: a second pass would read
    /// from memory what the first cached); fio without `time_based`.
    One,
    /// No time limit: every case stops at its byte count or one pass.
    NoTimeLimit,
}

/// How a random pattern draws its offsets.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RandomOffsets {
    /// Each offset uniform over the range, independent of the others, so
    /// a block may be read twice before another once (fio's
    /// `norandommap`; fio's default visits each block once per pass).
    WithReplacement,
}

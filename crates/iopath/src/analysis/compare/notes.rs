//! The notes of a comparison: what differs between the runs, or happened
//! in them, that makes comparing them questionable. Each note is a fact
//! ([`Note`]) with a stable code; `report::text::compare` words it.

use serde::{Deserialize, Serialize};

use super::{CaseComparison, Status, OTHER_TRAFFIC};
use crate::model::CacheState;
use crate::result::RunResult;

/// A side of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Which {
    A,
    B,
}

/// The disk under a run's target: its kernel name and model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceId {
    pub name: String,
    pub model: Option<String>,
}

/// What a run's file held: `config.data`, and whether it was sparse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataSource {
    pub data: String,
    pub sparse: bool,
}

/// The tool that wrote a result, and its schema version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolId {
    pub name: String,
    pub version: String,
    pub schema_version: u32,
}

/// One thing that makes comparing the runs questionable. The settings
/// compared are those of the first run of A (`a`) and the first of B
/// (`b`); `case` is an index into [`super::Report::cases`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Note {
    /// `target.size_bytes`; null for a run without a file.
    TargetSizeDiffers { a: Option<u64>, b: Option<u64> },
    /// `system.fs_type`; null when unknown.
    FileSystemDiffers {
        a: Option<String>,
        b: Option<String>,
    },
    /// `system.device`; null without a block device.
    DeviceDiffers {
        a: Option<DeviceId>,
        b: Option<DeviceId>,
    },
    /// `config.cache`.
    CacheStateDiffers { a: CacheState, b: CacheState },
    /// `config.data`, and whether the file was sparse.
    DataDiffers { a: DataSource, b: DataSource },
    /// `config.time_limit_ns`; null when unlimited.
    TimePerRepetitionDiffers { a: Option<u64>, b: Option<u64> },
    /// `config.io_size_bytes`; null when not set.
    BytesPerRepetitionDiffers { a: Option<u64>, b: Option<u64> },
    /// The tool's name and version, or the result's schema version.
    ToolVersionDiffers { a: ToolId, b: ToolId },
    /// A run was stopped by Ctrl-C: its last case may be cut short. `run`
    /// (from 1) when its side has several runs.
    Interrupted { side: Which, run: Option<usize> },
    /// Every case is only in A or only in B: nothing was compared.
    NothingMatched,
    /// A compared case whose device moved more than [`OTHER_TRAFFIC`]
    /// times the bytes it asked for in `side`.
    OtherTraffic {
        side: Which,
        case: usize,
        device_fraction: f64,
    },
    /// `cases` compared cases had too few repetitions for a change to
    /// count ([`CaseComparison::blind`]); `first` is the first of them.
    TooFewRepetitions { cases: usize, first: usize },
}

/// The settings of the first run of A and of B that differ.
fn differences(a0: &RunResult, b0: &RunResult) -> Vec<Note> {
    fn pair<T: PartialEq>(
        a0: &RunResult,
        b0: &RunResult,
        f: impl Fn(&RunResult) -> T,
    ) -> Option<(T, T)> {
        let (a, b) = (f(a0), f(b0));
        (a != b).then_some((a, b))
    }
    let device = |r: &RunResult| {
        r.system.device.as_ref().map(|d| DeviceId {
            name: d.name.clone(),
            model: d.model.clone(),
        })
    };
    let data = |r: &RunResult| DataSource {
        data: r.config.data.clone(),
        sparse: r.target.as_ref().is_some_and(|t| t.sparse),
    };
    let tool = |r: &RunResult| ToolId {
        name: r.tool.name.clone(),
        version: r.tool.version.clone(),
        schema_version: r.schema_version,
    };
    let size = |r: &RunResult| r.target.as_ref().map(|t| t.size_bytes);
    [
        pair(a0, b0, size).map(|(a, b)| Note::TargetSizeDiffers { a, b }),
        pair(a0, b0, |r| r.system.fs_type.clone()).map(|(a, b)| Note::FileSystemDiffers { a, b }),
        pair(a0, b0, device).map(|(a, b)| Note::DeviceDiffers { a, b }),
        pair(a0, b0, |r| r.config.cache).map(|(a, b)| Note::CacheStateDiffers { a, b }),
        pair(a0, b0, data).map(|(a, b)| Note::DataDiffers { a, b }),
        pair(a0, b0, |r| r.config.time_limit_ns)
            .map(|(a, b)| Note::TimePerRepetitionDiffers { a, b }),
        pair(a0, b0, |r| r.config.io_size_bytes)
            .map(|(a, b)| Note::BytesPerRepetitionDiffers { a, b }),
        pair(a0, b0, tool).map(|(a, b)| Note::ToolVersionDiffers { a, b }),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Every interrupted run, by side.
fn interrupted(a: &[RunResult], b: &[RunResult]) -> Vec<Note> {
    let mut out = Vec::new();
    for (runs, side) in [(a, Which::A), (b, Which::B)] {
        for (i, _) in runs.iter().enumerate().filter(|(_, r)| r.interrupted) {
            let run = (runs.len() > 1).then_some(i + 1);
            out.push(Note::Interrupted { side, run });
        }
    }
    out
}

/// Compared cases whose device moved more than [`OTHER_TRAFFIC`] times
/// the bytes asked for, on either side.
fn other_traffic(cases: &[CaseComparison]) -> Vec<Note> {
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if c.status != Status::Compared {
            continue;
        }
        for (f, side) in [
            (c.a_device_fraction, Which::A),
            (c.b_device_fraction, Which::B),
        ] {
            if let Some(f) = f.filter(|&f| f > OTHER_TRAFFIC) {
                out.push(Note::OtherTraffic {
                    side,
                    case: i,
                    device_fraction: f,
                });
            }
        }
    }
    out
}

/// What differs between the runs that makes comparing them questionable:
/// the first run of A against the first of B, every interrupted run,
/// nothing matched, other traffic, too few repetitions.
pub(super) fn notes(a: &[RunResult], b: &[RunResult], cases: &[CaseComparison]) -> Vec<Note> {
    let mut out = match (a.first(), b.first()) {
        (Some(a0), Some(b0)) => differences(a0, b0),
        _ => Vec::new(),
    };
    out.extend(interrupted(a, b));
    if !cases.is_empty()
        && cases
            .iter()
            .all(|c| matches!(c.status, Status::OnlyInA | Status::OnlyInB))
    {
        out.push(Note::NothingMatched);
    }
    out.extend(other_traffic(cases));
    // Below 6 repetitions `distinct` needs a complete separation that
    // chance alone would give less than 5% of the time: a case whose
    // samples are apart but too few (`undersampled`), or so few that no
    // outcome could count, reads "inconclusive" for lack of repetitions.
    let blind: Vec<usize> = (0..cases.len()).filter(|&i| cases[i].blind()).collect();
    if let Some(&first) = blind.first() {
        out.push(Note::TooFewRepetitions {
            cases: blind.len(),
            first,
        });
    }
    out
}

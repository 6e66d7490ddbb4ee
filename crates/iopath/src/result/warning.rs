//! The facts behind a warning: what `analysis::warnings` found, with the
//! numbers it rests on and the cases it concerns (indexes into the result's
//! `cases`). No words: `report::text::warnings` renders them. In JSON a
//! warning is `{code, message, cases, facts}`; `facts` is the variant's
//! fields, its `code` the variant's name (docs/json-schema.md).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A path as a JSON string, its bytes that are not UTF-8 replaced.
fn lossy_path<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// A case with the fraction that raised it (a share of the bytes it asked
/// for: the device's, its own reads', other processes').
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CaseFraction {
    /// Index into the result's `cases`.
    pub case: usize,
    pub fraction: f64,
}

/// A case that ran shallower than asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseDepth {
    pub case: usize,
    /// The depth it ran at.
    pub queue_depth: u32,
    pub queue_depth_requested: u32,
}

/// A case and a number of bytes (what it left in the page cache).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseBytes {
    pub case: usize,
    pub bytes: u64,
}

/// A case whose workers waited for a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CaseStarved {
    pub case: usize,
    /// Median over the repetitions of run-queue delay / (duration x
    /// threads).
    pub wait_share: f64,
    /// Involuntary context switches of the summary (preemptions).
    pub preemptions: u64,
}

/// What made reads fetch more than they asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AmplificationCause {
    /// The page cache's read-ahead and fault-around.
    ReadAhead,
    /// A user-space cache's whole page per miss.
    UserSpaceCache,
    Both,
}

/// Which cases a warning concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The run as a whole (listed as `all`).
    Run,
    /// None in particular (the job file's options).
    Job,
    /// These cases (indexes into the result's `cases`), in order.
    Cases(Vec<usize>),
}

/// One warning's facts; the variant names the `code`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", content = "facts", rename_all = "snake_case")]
pub enum Fact {
    /// fio options left out with `--ignore-unknown`.
    IgnoredOptions { options: Vec<String> },
    /// The file fits in the memory these cached reads had.
    FileFitsInMemory {
        cases: Vec<usize>,
        file_bytes: u64,
        memory_available_bytes: u64,
        /// Every measured case started from a cold cache.
        cold: bool,
        /// A `--cache-limit` that would hold a quarter of the file.
        suggested_cache_limit_bytes: u64,
    },
    /// `--sparse`: the file is truncated before every repetition.
    SparseTarget {},
    /// A loop device over a sparse backing file, not prefilled.
    UnwrittenDeviceRanges {
        cases: Vec<usize>,
        #[serde(serialize_with = "lossy_path")]
        device: PathBuf,
        allocated_bytes: u64,
        file_bytes: u64,
    },
    /// An existing file with holes.
    SparseFile {
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        allocated_bytes: u64,
        size_bytes: u64,
    },
    /// `--drop-caches` was not permitted.
    DropCachesDenied { cases: Vec<usize> },
    /// Loop devices reading their backing file through the page cache.
    LoopBuffered { loops: Vec<String> },
    /// Written data that storage may compress (`--data`).
    CompressibleData { cases: Vec<usize>, data: String },
    /// No block device under the target.
    NoBlockDevice {},
    /// Cold reads the device served less than `LOW_DEVICE_FRACTION` of.
    LowDeviceFraction { cases: Vec<CaseFraction> },
    /// Reads that fetched more than `AMPLIFIED_READS` times their bytes:
    /// each case's own read fraction.
    ReadAmplification {
        cases: Vec<CaseFraction>,
        cause: AmplificationCause,
        /// The device's read-ahead, when known.
        #[serde(default)]
        read_ahead_kb: Option<u64>,
        /// Some read case's disk moved more than it can explain, and no
        /// process accounting tells that from read-ahead.
        #[serde(default)]
        other_traffic_unaccounted: bool,
    },
    /// The disk read more than these cases did: others used it. Each
    /// case's fraction is the share of its bytes beyond its own reads
    /// (with `own_accounting`) or beyond what it asked.
    OtherDiskTraffic {
        cases: Vec<CaseFraction>,
        own_accounting: bool,
    },
    /// `--latency-split` was asked for and the tracepoints were not used:
    /// why (the run's, or a tracer that fell silent during it).
    LatencySplitFallback {
        reason: super::latency_split::SplitFallback,
    },
    /// Writes with `--sync none` that may stay in memory.
    SyncNone { cases: Vec<usize> },
    /// Synchronous methods that ran at depth 1 though more was asked.
    DepthCapped { cases: Vec<CaseDepth> },
    /// The cases address only part of the file.
    SpanSmallerThanFile { span_bytes: u64, file_bytes: u64 },
    /// RWF_DONTCACHE writes that left pages cached (each case's bytes).
    DontcachePagesKept { cases: Vec<CaseBytes> },
    /// SQPOLL cases on a machine of `cpus` CPUs.
    SqpollSharesCore { cases: Vec<usize>, cpus: usize },
    /// Workers that waited for a CPU.
    CpuStarved { cases: Vec<CaseStarved> },
}

impl Fact {
    /// The warning's stable code (the variant's name in snake case).
    pub fn code(&self) -> &'static str {
        match self {
            Fact::IgnoredOptions { .. } => "ignored_options",
            Fact::FileFitsInMemory { .. } => "file_fits_in_memory",
            Fact::SparseTarget {} => "sparse_target",
            Fact::UnwrittenDeviceRanges { .. } => "unwritten_device_ranges",
            Fact::SparseFile { .. } => "sparse_file",
            Fact::DropCachesDenied { .. } => "drop_caches_denied",
            Fact::LoopBuffered { .. } => "loop_buffered",
            Fact::CompressibleData { .. } => "compressible_data",
            Fact::NoBlockDevice {} => "no_block_device",
            Fact::LowDeviceFraction { .. } => "low_device_fraction",
            Fact::ReadAmplification { .. } => "read_amplification",
            Fact::OtherDiskTraffic { .. } => "other_disk_traffic",
            Fact::LatencySplitFallback { .. } => "latency_split_fallback",
            Fact::SyncNone { .. } => "sync_none",
            Fact::DepthCapped { .. } => "depth_capped",
            Fact::SpanSmallerThanFile { .. } => "span_smaller_than_file",
            Fact::DontcachePagesKept { .. } => "dontcache_pages_kept",
            Fact::SqpollSharesCore { .. } => "sqpoll_shares_core",
            Fact::CpuStarved { .. } => "cpu_starved",
        }
    }

    /// The cases it concerns.
    pub fn scope(&self) -> Scope {
        let of = |v: &[usize]| Scope::Cases(v.to_vec());
        let each = |v: &[CaseFraction]| Scope::Cases(v.iter().map(|c| c.case).collect());
        match self {
            Fact::IgnoredOptions { .. } => Scope::Job,
            Fact::SparseTarget {}
            | Fact::SparseFile { .. }
            | Fact::LoopBuffered { .. }
            | Fact::NoBlockDevice {}
            | Fact::LatencySplitFallback { .. }
            | Fact::SpanSmallerThanFile { .. } => Scope::Run,
            Fact::FileFitsInMemory { cases, .. }
            | Fact::UnwrittenDeviceRanges { cases, .. }
            | Fact::DropCachesDenied { cases }
            | Fact::CompressibleData { cases, .. }
            | Fact::SyncNone { cases }
            | Fact::SqpollSharesCore { cases, .. } => of(cases),
            Fact::LowDeviceFraction { cases }
            | Fact::ReadAmplification { cases, .. }
            | Fact::OtherDiskTraffic { cases, .. } => each(cases),
            Fact::DepthCapped { cases } => Scope::Cases(cases.iter().map(|c| c.case).collect()),
            Fact::DontcachePagesKept { cases } => {
                Scope::Cases(cases.iter().map(|c| c.case).collect())
            }
            Fact::CpuStarved { cases } => Scope::Cases(cases.iter().map(|c| c.case).collect()),
        }
    }

    /// Its facts as the JSON object written under `facts`.
    fn to_json(&self) -> serde_json::Value {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(mut m)) => {
                m.remove("facts").unwrap_or(serde_json::Value::Null)
            }
            _ => serde_json::Value::Null,
        }
    }

    /// The facts of a warning `code` read from its JSON `facts`; `None`
    /// for a code this version does not know or facts it cannot read (a
    /// later version's): the warning's stored words then stand.
    fn from_json(code: &str, facts: serde_json::Value) -> Option<Fact> {
        serde_json::from_value(serde_json::json!({ "code": code, "facts": facts })).ok()
    }
}

/// A warning as written in JSON: its facts apart from its code.
#[derive(Serialize, Deserialize)]
pub(crate) struct WarningDoc {
    code: String,
    message: String,
    cases: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    facts: Option<serde_json::Value>,
}

impl From<super::Warning> for WarningDoc {
    fn from(w: super::Warning) -> Self {
        WarningDoc {
            facts: w.facts.as_ref().map(Fact::to_json),
            code: w.code,
            message: w.message,
            cases: w.cases,
        }
    }
}

impl From<WarningDoc> for super::Warning {
    fn from(d: WarningDoc) -> Self {
        let facts = d.facts.and_then(|f| Fact::from_json(&d.code, f));
        super::Warning {
            code: d.code,
            message: d.message,
            cases: d.cases,
            facts,
        }
    }
}

impl super::Warning {
    /// A warning of `fact`, its words (`message`, `cases`) not yet written:
    /// `report::text::warnings::word` writes them.
    pub fn of(fact: Fact) -> Self {
        super::Warning {
            code: fact.code().to_string(),
            message: String::new(),
            cases: Vec::new(),
            facts: Some(fact),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Warning;

    #[test]
    fn facts_are_written_beside_the_code_and_read_back() {
        let w = Warning::of(Fact::CpuStarved {
            cases: vec![CaseStarved {
                case: 2,
                wait_share: 0.5,
                preemptions: 7,
            }],
        });
        let json = serde_json::to_value(&w).unwrap();
        assert_eq!(json["code"], "cpu_starved");
        assert_eq!(json["facts"]["cases"][0]["case"], 2);
        assert_eq!(json["facts"]["cases"][0]["preemptions"], 7);
        assert!(json["facts"].get("code").is_none(), "{json}");
        let back: Warning = serde_json::from_value(json).unwrap();
        assert_eq!(back, w);
    }

    /// Written before facts, or by a later version with a code this one
    /// does not know: the stored words stand.
    #[test]
    fn a_warning_without_readable_facts_keeps_its_words() {
        let old = serde_json::json!({"code": "depth_capped", "message": "m", "cases": ["a/b"]});
        let w: Warning = serde_json::from_value(old).unwrap();
        assert_eq!((&w.facts, w.message.as_str()), (&None, "m"));
        let new =
            serde_json::json!({"code": "future", "message": "m", "cases": [], "facts": {"x": 1}});
        let w: Warning = serde_json::from_value(new).unwrap();
        assert_eq!((w.code.as_str(), &w.facts), ("future", &None));
        assert_eq!(
            serde_json::to_value(&w).unwrap().get("facts"),
            None,
            "unread facts are not written back as null"
        );
    }
}

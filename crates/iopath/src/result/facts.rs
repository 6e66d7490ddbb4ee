//! A case's notes as typed facts: what the runner saw about how a case
//! used its time or departed from what was asked, with the numbers they
//! rest on and a stable `code`. The text layer (`report::text::events`)
//! words them; the result keeps both the facts (`cases[].facts`) and, for
//! older readers, the words as they were when it was written
//! (`cases[].notes`).

use serde::{Deserialize, Serialize};

/// One fact about a case, for its notes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum CaseNote {
    /// `--case-timeout` stopped repetition `repetition` part-way.
    TimeoutCut {
        /// The cap (`--case-timeout`); absent when none was given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        case_timeout_ns: Option<u64>,
        repetition: u32,
        fraction_done: f64,
        duration_ns: u64,
        /// Its final flush, when worth naming (10 ms and 1% of its time).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flush_ns: Option<u64>,
        extrapolated_ns: u64,
    },
    /// `--case-timeout` kept the next repetition from starting.
    TimeoutStopped {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        case_timeout_ns: Option<u64>,
        repetitions: u32,
        /// `--repeat`: the repetitions asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        asked: Option<u32>,
    },
    /// How a sequential case used its time limit (`passes` in the result).
    Passes {
        kind: PassNote,
        limit_ns: u64,
        passes: f64,
        /// The method as the result names it.
        method: crate::result::names::MethodName,
        /// What keeps the method's pages (for why it stops after one pass).
        keeps: Keeper,
        writes: bool,
        duration_ns: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggested_size_bytes: Option<u64>,
    },
    /// `--verify`: what was checked, and the time it took.
    Verified { bytes: u64, checking_ns: u64 },
    /// The case's span was capped at the file's size.
    SpanCapped { span_bytes: u64, file_bytes: u64 },
    /// The cache state could not be made before a repetition.
    CacheNotMade { cache: String, error: String },
    /// `--neighbour` could not start.
    NeighbourFailed { error: String },
    /// After earlier repetitions, one was refused: the case keeps those.
    RepetitionRefused {
        repetition: u32,
        /// Why (in results written before refusals were facts, its words).
        #[serde(deserialize_with = "crate::result::skip::fact_or_words")]
        reason: crate::result::skip::Skip,
        earlier: u32,
    },
    /// `--sqpoll-cpu` given to a method without an SQPOLL thread.
    SqpollCpuUnused {
        method: crate::result::names::MethodName,
    },
    /// A copy runs on one thread whatever `--threads` says.
    CopyOneThread { threads: u32 },
    /// A copy moves its whole span (or file), whatever `--io-size` says.
    CopyWhole { span: bool },
    /// A copy runs unplaced.
    CopyUnplaced,
    /// An engine's or the probe's own note, in its words.
    Engine { text: String },
    /// A replay's repetitions ran for at most `limit_ns` (their share of
    /// the budget) and one or more stopped there, short of the trace's end:
    /// its figures are of the ops reached.
    ReplayCut { limit_ns: u64 },
}

/// Which way a sequential case used its time limit.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PassNote {
    /// Started over at the end of its range: the method keeps no cache.
    WrappedUncached,
    /// Started over from a warm cache, as `--cache warm` asks.
    WrappedWarm,
    /// Started over because its job asks (`until = "time"`).
    WrappedAsAsked,
    /// Stopped after one pass, short of the limit.
    OnePass,
}

/// What keeps a caching method's pages.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Keeper {
    /// RWF_DONTCACHE: dropped after the I/O, but not those cached before
    /// it nor, on ext4, those of overwrites.
    DropsAfter,
    /// A user-space cache of its own.
    OwnCache,
    PageCache,
}

impl CaseNote {
    /// The texts a fact carries from elsewhere (errors, engines' notes),
    /// to name paths in them as the user knows them.
    pub fn texts_mut(&mut self) -> Box<dyn Iterator<Item = &mut String> + '_> {
        match self {
            CaseNote::CacheNotMade { error, .. } | CaseNote::NeighbourFailed { error } => {
                Box::new(std::iter::once(error))
            }
            CaseNote::RepetitionRefused { reason, .. } => reason.texts_mut(),
            CaseNote::Engine { text } => Box::new(std::iter::once(text)),
            _ => Box::new(std::iter::empty()),
        }
    }
}

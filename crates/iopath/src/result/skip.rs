//! Why a case did not run, or a method cannot run here, as typed facts
//! with the figures they rest on and a stable `code`. The text layer
//! (`report::text::skips`) words them; the result keeps both the fact
//! (`cases[].skip`, `probes[].skip`) and, for older readers, the words as
//! they were when it was written (`cases[].skipped`, `probes[].reason`).

use serde::{Deserialize, Serialize};

use crate::result::names::MethodName;

/// Why a case was not run (or a method is unusable on the target).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Skip {
    /// The probe (or an engine, as a repetition started) refused the
    /// method, in its own words (an OS error, a missing feature).
    Unusable { reason: String },
    /// `null` under `--verify`: it moves no data, nothing to check.
    NullUnderVerify,
    /// The run has no target file (no method but `null` can run).
    NoTargetFile,
    /// The file is smaller than one probe read.
    SmallerThanProbe { probe_bytes: u64 },
    /// An O_DIRECT case whose block size is not a multiple of the file's
    /// DIO alignment (the kernel would answer EINVAL).
    Misaligned {
        block_size: u64,
        /// The target as the user named it.
        path: String,
        align_bytes: u64,
        /// Where the alignment came from (`iopath_io::sys::DioAlign`'s
        /// source).
        align_source: String,
    },
    /// `--cache-limit` cannot hold the case's own memory.
    CacheLimitOwn {
        limit_bytes: u64,
        own_bytes: u64,
        threads: u32,
        /// The case holds a user-space cache (`--ucache-size`).
        cache: bool,
    },
    /// `--cache-limit` cannot hold the pages the case adds to a file
    /// system in memory (never reclaimed without swap).
    CacheLimitInMemory {
        limit_bytes: u64,
        new_bytes: u64,
        /// The pages are the copy's (else the file's).
        copy: bool,
        /// The file system (`tmpfs`, `ramfs`).
        fs: String,
        own_bytes: u64,
    },
    /// The copy pattern with no file to copy.
    CopyNeedsFile,
    /// A replay through a method with an alignment rule (O_DIRECT) that
    /// reads or writes of the trace break.
    ReplayUnaligned {
        method: MethodName,
        /// Reads and writes not on `align_bytes` boundaries (offset or
        /// length), of `data_ops`.
        unaligned_ops: u64,
        data_ops: u64,
        align_bytes: u64,
    },
    /// The copy pattern with a method that cannot copy.
    NoCopyMethod {
        method: MethodName,
        /// The methods that can, as their names.
        methods: Vec<MethodName>,
    },
    /// The run was stopped during the copy (its destination removed).
    CopyInterrupted { cause: String },
    /// The run was stopped before this case (`cases[].not_reached`).
    NotReached { cause: String },
    /// Another rank of an MPI run refused it.
    OnRank {
        rank: u32,
        host: String,
        skip: Box<Skip>,
    },
}

impl Skip {
    /// The texts a fact carries from elsewhere (the probe's, an engine's),
    /// to name paths in them as the user knows them.
    pub fn texts_mut(&mut self) -> Box<dyn Iterator<Item = &mut String> + '_> {
        match self {
            Skip::Unusable { reason } => Box::new(std::iter::once(reason)),
            Skip::OnRank { skip, .. } => skip.texts_mut(),
            _ => Box::new(std::iter::empty()),
        }
    }
}

/// Reads a refusal saved either way: as a fact, or (results written before
/// refusals were facts) as its words, kept as [`Skip::Unusable`].
pub fn fact_or_words<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Fact(Skip),
        Words(String),
    }
    Ok(match Either::deserialize(d)? {
        Either::Fact(s) => s,
        Either::Words(reason) => Skip::Unusable { reason },
    })
}

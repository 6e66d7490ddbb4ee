//! The bottom layer: plain types every other layer may use and none of
//! them owns — access patterns, page-cache states, what a run measures on,
//! the usage error (exit code 2), and the job model ([`job::JobSpec`]) that
//! flags, presets, TOML job files and fio job files all become. Nothing
//! here reads the system or imports another module of this crate except
//! [`crate::model::units`] and [`crate::model::schedule`].

pub mod choice;
pub mod job;
pub mod limits;
pub mod published;
pub mod schedule;
pub mod units;
pub mod untrusted;
pub mod words;

use std::path::PathBuf;

use iopath_io::copy::CopyMethod;
use iopath_io::Method;
use serde::{Deserialize, Serialize};

/// A mistake in what the user asked for: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// An access pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    #[default]
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    /// Copy the test file to a new file beside it (NIOBench's copy), timed
    /// through the destination's flush and close.
    Copy,
    /// A recorded program's I/O replayed (`--replay TRACE`): the trace's
    /// threads and ops, on files of the trace's sizes (docs/replay.md).
    /// Not a pattern to ask for by name: `--replay` makes its cases.
    Replay,
}

impl Pattern {
    pub const DEFAULT: [Pattern; 4] = [
        Pattern::Read,
        Pattern::Write,
        Pattern::RandRead,
        Pattern::RandWrite,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::RandRw => "randrw",
            Pattern::Copy => "copy",
            Pattern::Replay => "replay",
        }
    }

    pub fn from_name(s: &str) -> Option<Pattern> {
        Some(match s {
            "read" | "seqread" => Pattern::Read,
            "write" | "seqwrite" => Pattern::Write,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "randrw" => Pattern::RandRw,
            "copy" => Pattern::Copy,
            _ => return None,
        })
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            Pattern::RandRead | Pattern::RandWrite | Pattern::RandRw
        )
    }

    /// True when the pattern writes the test file (a copy writes a new
    /// file of its own and only reads the test file).
    pub fn writes(self) -> bool {
        matches!(self, Pattern::Write | Pattern::RandWrite | Pattern::RandRw)
    }

    pub fn default_block_size(self) -> u64 {
        if self.is_random() {
            4096
        } else {
            1 << 20
        }
    }

    pub fn default_queue_depth(self) -> u32 {
        if self.is_random() {
            32
        } else {
            8
        }
    }
}

/// Page-cache state of the target before each repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheState {
    /// Dirty pages written back and the file's cached pages dropped
    /// (`posix_fadvise(DONTNEED)`): reads must come from the device.
    #[default]
    Cold,
    /// The file read once through the page cache before timing.
    Warm,
    /// Left as the previous case left it.
    AsIs,
}

impl CacheState {
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Cold => "cold",
            CacheState::Warm => "warm",
            CacheState::AsIs => "as-is",
        }
    }

    pub fn from_name(s: &str) -> Option<CacheState> {
        [CacheState::Cold, CacheState::Warm, CacheState::AsIs]
            .into_iter()
            .find(|c| c.name() == s)
    }
}

/// Written as its name (`cold`, `warm`, `as-is`), as results record it.
impl Serialize for CacheState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for CacheState {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CacheState, D::Error> {
        let s = String::deserialize(d)?;
        CacheState::from_name(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown cache state '{s}' (expected cold, warm or as-is)"
            ))
        })
    }
}

impl std::fmt::Display for CacheState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the run measures on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A temporary file created in this directory, removed at the end.
    TempIn(PathBuf),
    /// A file the user named.
    File {
        path: PathBuf,
        allow_write: bool,
        /// `--force-signature`: write to a block device even when it
        /// carries a file-system, RAID or partition-table signature.
        force_signature: bool,
        /// `--prefill`: fill an existing file or device with incompressible
        /// data before the run (needs `allow_write`).
        prefill: bool,
    },
}

/// The copy method a case's method names for the copy pattern.
pub fn copy_method(m: Method) -> Option<CopyMethod> {
    Some(match m {
        Method::Buffered => CopyMethod::ReadWrite,
        Method::Direct => CopyMethod::ReadWriteDirect,
        Method::Mmap => CopyMethod::MmapWrite,
        Method::Uring => CopyMethod::Uring,
        Method::CopyFileRange => CopyMethod::CopyFileRange,
        Method::Sendfile => CopyMethod::Sendfile,
        _ => return None,
    })
}

/// True when the method keeps data in a cache that a second pass over the
/// same range would read instead of the device (the page cache: buffered,
/// mmap, uring-buffered, the copy methods; the user-space caches: ucache,
/// uffd, uffd-wp). False for the O_DIRECT methods, mmap-dax (DAX has no
/// page cache) and null (no I/O): their sequential repetitions may start
/// over at the end of the file and still measure what they measured.
pub fn method_caches(m: Method) -> bool {
    !(m.is_direct() || m == Method::MmapDax || m.is_null())
}

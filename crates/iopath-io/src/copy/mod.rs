//! NIOBench's "copy" operation: copy the first `len` bytes of a source file
//! to a new destination file by one of several copy methods.
//!
//! The caller times the whole [`copy`] call, so everything a program pays to
//! copy a file happens inside it: opening both files, the copy itself, the
//! destination's flush as the [`SyncPolicy`] asks, and closing the
//! destination (its `close` error, if any, is reported).
//!
//! Rules every method follows:
//! - The destination is created with `O_CREAT|O_EXCL`: an existing file is
//!   never overwritten (the error names it). On any error after it was
//!   created, the half-written destination is removed (also if `on_chunk`
//!   panics). On success it is left for the caller.
//! - The source must hold at least `len` bytes (checked before the
//!   destination is created); a source that ends early during the copy (a
//!   read or copy call that returns 0) is an error too.
//! - Sync policy of the destination: `None` no flush; `End` one `fsync`
//!   before the close; `Dsync`/`Osync` open it with `O_DSYNC`/`O_SYNC`; `Each`
//!   `fsync` after every chunk, counted in that chunk's latency.
//! - `on_chunk(bytes, ns)` is called once per chunk copied, with its length
//!   and latency; the bytes of all calls add up to `len`. No allocation
//!   happens between chunks. It answers whether to go on: `false` (Ctrl-C)
//!   ends the copy with an error whose reason is [`STOPPED`], after the
//!   requests in flight completed, and removes the destination.
//!
//! O_DIRECT methods (`read-write-direct`, `uring`) move the largest multiple
//! of the O_DIRECT alignment of `len` (the larger of the two files'
//! [`crate::sys::dio_alignment`] offset rules) with O_DIRECT and aligned
//! buffers; the tail beyond it (`len % align` bytes, if any) is copied
//! through the page cache after `fcntl(F_SETFL)` clears O_DIRECT on both
//! descriptors, as GNU dd does, and [`CopyOut::notes`] says so. `chunk` must be a
//! multiple of that alignment ([`EngineError::Invalid`] otherwise). A file
//! system that refuses O_DIRECT gives [`EngineError::Unsupported`].
//!
//! [`EngineError::Unsupported`] carries a [`Method`]: the copy method's
//! closest access method ([`CopyMethod::engine_method`]); its reason starts
//! with the copy method's name.
//!
//! # Layout
//! - `files`: opening the source, creating and closing the destination,
//!   toggling O_DIRECT, whole-buffer reads and writes, and the errors they
//!   give.
//! - `job`: one copy in progress (the shared chunk loop, flushes and
//!   reports) and the synchronous methods (`read-write`,
//!   `read-write-direct`, `copy-file-range`, `sendfile`, `mmap-write`).
//! - `uring`: the `uring` method, an io_uring pipeline of chunks.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{EngineError, Method, SyncPolicy};

mod files;
mod job;
mod uring;

use files::{create_dst, open_src};
use job::Job;

/// Largest chunk: one read or write call moves at most 2 GiB - 4 KiB on
/// Linux, and io_uring lengths are 32-bit.
pub const MAX_CHUNK: usize = 1 << 30;

/// The reason of the error a copy stopped by its caller ends with.
pub const STOPPED: &str = "the copy was stopped by its caller";

/// Largest `depth` (chunks in flight) of the `uring` method.
pub const MAX_DEPTH: usize = 4096;

/// One way to copy a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CopyMethod {
    /// `pread` a chunk into a buffer, `pwrite` it, through the page cache.
    ReadWrite,
    /// `pread`/`pwrite` with O_DIRECT on both files and an aligned buffer.
    ReadWriteDirect,
    /// `copy_file_range(2)`: the kernel copies, no user buffer. On file
    /// systems with reflinks or block cloning (btrfs, xfs with reflink,
    /// bcachefs, OpenZFS 2.2+) it may share extents instead, and NFS/SMB may
    /// copy on the server: then no data moves through this machine at all.
    /// On ext4 and tmpfs it copies in the kernel (page cache to page cache).
    CopyFileRange,
    /// `sendfile(2)`: an in-kernel splice from the source's page cache to the
    /// destination.
    Sendfile,
    /// Map the source read-only (`mmap`, `MADV_SEQUENTIAL`) and `pwrite`
    /// chunks from the mapping; page faults read the source.
    MmapWrite,
    /// An io_uring pipeline with O_DIRECT and registered buffers: up to
    /// `depth` chunks in flight, each read into its buffer and, when the
    /// read completes, written from it to the same offset.
    Uring,
}

impl CopyMethod {
    /// Every copy method, in the order tables list them.
    pub const ALL: [CopyMethod; 6] = [
        CopyMethod::ReadWrite,
        CopyMethod::ReadWriteDirect,
        CopyMethod::CopyFileRange,
        CopyMethod::Sendfile,
        CopyMethod::MmapWrite,
        CopyMethod::Uring,
    ];

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            CopyMethod::ReadWrite => "read-write",
            CopyMethod::ReadWriteDirect => "read-write-direct",
            CopyMethod::CopyFileRange => "copy-file-range",
            CopyMethod::Sendfile => "sendfile",
            CopyMethod::MmapWrite => "mmap-write",
            CopyMethod::Uring => "uring",
        }
    }

    /// Parse a name as written by [`CopyMethod::name`].
    pub fn from_name(s: &str) -> Option<CopyMethod> {
        CopyMethod::ALL.into_iter().find(|m| m.name() == s)
    }

    /// One sentence: what the method does.
    pub fn summary(self) -> &'static str {
        match self {
            CopyMethod::ReadWrite => {
                "pread a chunk into a buffer and pwrite it, one chunk at a time, through the page cache"
            }
            CopyMethod::ReadWriteDirect => {
                "pread/pwrite with O_DIRECT on both files and an aligned buffer; a tail past the alignment goes through the page cache"
            }
            CopyMethod::CopyFileRange => {
                "copy_file_range: the kernel copies without a user buffer; on btrfs, xfs (reflink) or NFS it may share extents or copy on the server, so no data moves"
            }
            CopyMethod::Sendfile => {
                "sendfile: an in-kernel splice from the source's page cache to the destination"
            }
            CopyMethod::MmapWrite => {
                "map the source read-only and pwrite chunks from the mapping; page faults read the source"
            }
            CopyMethod::Uring => {
                "io_uring + O_DIRECT with registered buffers: depth chunks in flight, each read then written"
            }
        }
    }

    /// True when the method bypasses the page cache (O_DIRECT).
    pub fn is_direct(self) -> bool {
        matches!(self, CopyMethod::ReadWriteDirect | CopyMethod::Uring)
    }

    /// The access method closest to this copy method, named by its
    /// [`EngineError::Unsupported`] errors.
    pub fn engine_method(self) -> Method {
        match self {
            CopyMethod::ReadWrite => Method::Buffered,
            CopyMethod::CopyFileRange => Method::CopyFileRange,
            CopyMethod::Sendfile => Method::Sendfile,
            CopyMethod::ReadWriteDirect => Method::Direct,
            CopyMethod::MmapWrite => Method::Mmap,
            CopyMethod::Uring => Method::Uring,
        }
    }

    fn unsupported(self, why: String) -> EngineError {
        EngineError::Unsupported {
            method: self.engine_method(),
            reason: format!("copy method {}: {why}", self.name()),
        }
    }
}

impl fmt::Display for CopyMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What to copy, and how.
#[derive(Debug, Clone)]
pub struct CopySpec {
    /// The source file; it must hold at least `len` bytes.
    pub src: PathBuf,
    /// The destination; it must not exist.
    pub dst: PathBuf,
    /// Bytes to copy, from offset 0.
    pub len: u64,
    /// Bytes per chunk (per read/write pair or per copy call), 1 to
    /// [`MAX_CHUNK`]; a multiple of the O_DIRECT alignment for direct methods.
    pub chunk: usize,
    /// Chunks in flight (`uring`), at least 1; `uring` runs at most
    /// [`MAX_DEPTH`], the other methods at 1, and the notes say so when more
    /// was asked.
    pub depth: usize,
    /// When the destination's data is made durable.
    pub sync: SyncPolicy,
}

/// What a copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyOut {
    /// Bytes copied (the spec's `len`).
    pub bytes: u64,
    /// Chunks copied (calls of `on_chunk`).
    pub chunks: u64,
    /// Departures from the request, said plainly. Empty when none.
    pub notes: Vec<String>,
}

/// Copy `spec.len` bytes of `spec.src` to the new file `spec.dst` by `method`.
///
/// Returns once the destination is flushed (as `spec.sync` asks) and closed.
/// On error no destination is left behind (unless it existed before, when it
/// is left untouched). See the module documentation for the rules.
pub fn copy(
    method: CopyMethod,
    spec: &CopySpec,
    on_chunk: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<CopyOut, EngineError> {
    copy_with(method, spec, on_chunk, &mut |_| {})
}

/// [`copy`], calling `created` with the destination right after it is
/// created, before a byte is copied: the caller may keep a handle of its
/// own to it (`File::try_clone`), e.g. to hold an `flock` on it from its
/// first moment until it removes it.
pub fn copy_with(
    method: CopyMethod,
    spec: &CopySpec,
    on_chunk: &mut dyn FnMut(u64, u64) -> bool,
    created: &mut dyn FnMut(&std::fs::File),
) -> Result<CopyOut, EngineError> {
    if spec.chunk == 0 || spec.chunk > MAX_CHUNK {
        return Err(EngineError::Invalid(format!(
            "copy chunk of {} bytes is out of range (1 byte to {MAX_CHUNK})",
            spec.chunk
        )));
    }
    if spec.depth == 0 {
        return Err(EngineError::Invalid(
            "copy depth 0: at least one chunk must be in flight".into(),
        ));
    }
    let direct = method.is_direct();
    let src = open_src(method, &spec.src, direct)?;
    let src_len = crate::sys::file_len(&src).map_err(|e| EngineError::os("fstat", &spec.src, e))?;
    if src_len < spec.len {
        return Err(EngineError::Invalid(format!(
            "source {} holds {src_len} bytes, fewer than the {} to copy",
            spec.src.display(),
            spec.len
        )));
    }
    let mut notes = Vec::new();
    if method != CopyMethod::Uring && spec.depth > 1 {
        notes.push(format!(
            "{method} is synchronous: depth {} requested, ran at 1",
            spec.depth
        ));
    } else if spec.depth > MAX_DEPTH {
        notes.push(format!(
            "depth {} requested, ran at {MAX_DEPTH} (the most io_uring copies keep in flight)",
            spec.depth
        ));
    }
    let dst = create_dst(&spec.dst, spec.sync)?;
    // From here on the destination is ours: the guard removes it unless the
    // copy succeeds (also when a callback panics).
    let mut guard = RemoveOnDrop(Some(&spec.dst));
    created(&dst);
    let job = Job {
        method,
        spec,
        src: &src,
        on_chunk,
        notes,
        chunks: 0,
    };
    let out = job.run(dst)?;
    guard.0 = None;
    Ok(out)
}

/// Removes a destination this module created unless defused.
struct RemoveOnDrop<'a>(Option<&'a Path>);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests;

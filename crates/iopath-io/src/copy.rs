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

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, IntoRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use io_uring::{opcode, squeue, types, IoUring};
use rustix::fs::OFlags;

use crate::buf::{AlignedBuf, SlotPool};
use crate::{EngineError, Method, SyncPolicy};

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

/// Open the source read-only, with O_DIRECT when `direct`.
fn open_src(method: CopyMethod, path: &Path, direct: bool) -> Result<File, EngineError> {
    let flags = if direct { libc::O_DIRECT } else { 0 };
    match OpenOptions::new().read(true).custom_flags(flags).open(path) {
        Ok(f) => Ok(f),
        Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
            Err(method.unsupported(refuses_direct(path)))
        }
        Err(e) => Err(EngineError::os(
            if direct { "open O_DIRECT" } else { "open" },
            path,
            e,
        )),
    }
}

fn refuses_direct(path: &Path) -> String {
    format!(
        "the file system of {} refuses O_DIRECT (EINVAL); use read-write, copy-file-range, sendfile or mmap-write there, or a directory on ext4/xfs",
        path.display()
    )
}

/// Create the destination, never over an existing file, write-only, with the
/// sync policy's open flag (`O_DSYNC`/`O_SYNC`).
fn create_dst(path: &Path, sync: SyncPolicy) -> Result<File, EngineError> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(sync.open_flags())
        .open(path)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                EngineError::Os {
                    op: "create",
                    path: path.to_path_buf(),
                    source: e,
                    hint: Some(
                        "the copy destination already exists and copy never overwrites a file: remove it or name another"
                            .into(),
                    ),
                }
            } else {
                EngineError::os("create", path, e)
            }
        })
}

/// Set or clear O_DIRECT on an open file. Setting it fails with EINVAL where
/// the file system cannot do direct I/O.
fn set_direct(fd: BorrowedFd<'_>, on: bool) -> io::Result<()> {
    let fl = rustix::fs::fcntl_getfl(fd)?;
    let fl = if on {
        fl | OFlags::DIRECT
    } else {
        fl - OFlags::DIRECT
    };
    rustix::fs::fcntl_setfl(fd, fl)?;
    Ok(())
}

/// Nanoseconds since `t`.
#[inline]
fn ns_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The source ended at `at` before `len` bytes.
fn short_source(path: &Path, at: u64, len: u64) -> EngineError {
    EngineError::Os {
        op: "read",
        path: path.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the source ended at byte {at}, before the {len} bytes to copy"),
        ),
        hint: Some("was it truncated during the copy?".into()),
    }
}

/// Read exactly `buf.len()` bytes at `off`; end of file is an error.
fn pread_full(
    fd: BorrowedFd<'_>,
    buf: &mut [u8],
    off: u64,
    path: &Path,
    len: u64,
) -> Result<(), EngineError> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(fd, &mut buf[done..], off + done as u64) {
            Ok(0) => return Err(short_source(path, off + done as u64, len)),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(EngineError::os("pread", path, e.into())),
        }
    }
    Ok(())
}

/// Write all of `buf` at `off`.
fn pwrite_full(fd: BorrowedFd<'_>, buf: &[u8], off: u64, path: &Path) -> Result<(), EngineError> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pwrite(fd, &buf[done..], off + done as u64) {
            Ok(0) => return Err(write_zero(path)),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(EngineError::os("pwrite", path, e.into())),
        }
    }
    Ok(())
}

fn write_zero(path: &Path) -> EngineError {
    EngineError::os(
        "write",
        path,
        io::Error::new(io::ErrorKind::WriteZero, "the write moved no bytes"),
    )
}

/// One copy in progress: the source is open, the destination created.
struct Job<'a> {
    method: CopyMethod,
    spec: &'a CopySpec,
    src: &'a File,
    on_chunk: &'a mut dyn FnMut(u64, u64) -> bool,
    notes: Vec<String>,
    chunks: u64,
}

impl Job<'_> {
    fn run(mut self, dst: File) -> Result<CopyOut, EngineError> {
        match self.method {
            CopyMethod::ReadWrite => self.read_write(&dst)?,
            CopyMethod::ReadWriteDirect => self.read_write_direct(&dst)?,
            CopyMethod::CopyFileRange => self.copy_file_range(&dst)?,
            CopyMethod::Sendfile => self.sendfile(&dst)?,
            CopyMethod::MmapWrite => self.mmap_write(&dst)?,
            CopyMethod::Uring => self.uring(&dst)?,
        }
        if self.spec.sync == SyncPolicy::End {
            crate::engines::fsync(&dst, &self.spec.dst)?;
        }
        close(dst, &self.spec.dst)?;
        Ok(CopyOut {
            bytes: self.spec.len,
            chunks: self.chunks,
            notes: self.notes,
        })
    }

    /// `fsync` the destination when the policy is `Each`.
    #[inline]
    fn sync_each(&self, dst: &File) -> Result<(), EngineError> {
        if self.spec.sync == SyncPolicy::Each {
            crate::engines::fsync(dst, &self.spec.dst)?;
        }
        Ok(())
    }

    /// Report a chunk; `on_chunk` answering `false` stops the copy (Ctrl-C):
    /// an [`EngineError::Invalid`] ends it, and the destination is removed.
    #[inline]
    fn chunk_done(&mut self, bytes: u64, t0: Instant) -> Result<(), EngineError> {
        let go_on = (self.on_chunk)(bytes, ns_since(t0));
        self.chunks += 1;
        if go_on {
            Ok(())
        } else {
            Err(EngineError::Invalid(STOPPED.into()))
        }
    }

    /// Length of chunk buffers: a chunk, or less when the copy is shorter,
    /// rounded up to `align`.
    fn buf_len(&self, align: usize) -> usize {
        let len = usize::try_from(self.spec.len).unwrap_or(usize::MAX);
        self.spec
            .chunk
            .min(len.max(1).next_multiple_of(align.max(1)))
    }

    /// `pread`/`pwrite` chunks of `[from, to)` with `buf`.
    fn rw_loop(
        &mut self,
        dst: &File,
        buf: &mut [u8],
        from: u64,
        to: u64,
    ) -> Result<(), EngineError> {
        let (s, d) = (self.src.as_fd(), dst.as_fd());
        let mut off = from;
        while off < to {
            let n = (to - off).min(buf.len() as u64) as usize;
            let t0 = Instant::now();
            pread_full(s, &mut buf[..n], off, &self.spec.src, self.spec.len)?;
            pwrite_full(d, &buf[..n], off, &self.spec.dst)?;
            self.sync_each(dst)?;
            self.chunk_done(n as u64, t0)?;
            off += n as u64;
        }
        Ok(())
    }

    fn read_write(&mut self, dst: &File) -> Result<(), EngineError> {
        let mut buf = new_buf(self.buf_len(1), 4096);
        self.rw_loop(dst, buf.as_mut_slice(), 0, self.spec.len)
    }

    /// Turn on O_DIRECT for the destination and work out the alignment both
    /// files need: (offset/length alignment, buffer alignment).
    fn direct_layout(&mut self, dst: &File) -> Result<(usize, usize), EngineError> {
        match set_direct(dst.as_fd(), true) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(self.method.unsupported(refuses_direct(&self.spec.dst)));
            }
            Err(e) => {
                return Err(EngineError::os(
                    "fcntl(F_SETFL, O_DIRECT)",
                    &self.spec.dst,
                    e,
                ))
            }
        }
        let a = crate::sys::dio_alignment(&self.spec.src);
        let b = crate::sys::dio_alignment(&self.spec.dst);
        let align = a.offset.max(b.offset).max(1);
        let mem = crate::engines::buffer_align(a.mem.max(b.mem));
        if self.spec.chunk % align != 0 {
            return Err(EngineError::Invalid(format!(
                "copy chunk of {} bytes is not a multiple of {align} bytes, the O_DIRECT alignment of {} and {} ({}, {}); use a multiple of {align}",
                self.spec.chunk,
                self.spec.src.display(),
                self.spec.dst.display(),
                a.source,
                b.source
            )));
        }
        Ok((align, mem))
    }

    /// Copy `[from, len)`, shorter than the O_DIRECT alignment, through the
    /// page cache: clear O_DIRECT on both files, then `pread`/`pwrite`.
    fn buffered_tail(
        &mut self,
        dst: &File,
        buf: &mut [u8],
        from: u64,
        align: usize,
    ) -> Result<(), EngineError> {
        let len = self.spec.len;
        if from >= len {
            return Ok(());
        }
        set_direct(self.src.as_fd(), false)
            .map_err(|e| EngineError::os("fcntl(F_SETFL, ~O_DIRECT)", &self.spec.src, e))?;
        set_direct(dst.as_fd(), false)
            .map_err(|e| EngineError::os("fcntl(F_SETFL, ~O_DIRECT)", &self.spec.dst, e))?;
        self.notes.push(format!(
            "the last {} bytes ({len} is not a multiple of the {align}-byte O_DIRECT alignment) were copied through the page cache (O_DIRECT cleared with fcntl)",
            len - from
        ));
        self.rw_loop(dst, buf, from, len)
    }

    fn read_write_direct(&mut self, dst: &File) -> Result<(), EngineError> {
        let (align, mem) = self.direct_layout(dst)?;
        let mut buf = new_buf(self.buf_len(align), mem);
        let prefix = self.spec.len / align as u64 * align as u64;
        self.rw_loop(dst, buf.as_mut_slice(), 0, prefix)?;
        self.buffered_tail(dst, buf.as_mut_slice(), prefix, align)
    }

    fn copy_file_range(&mut self, dst: &File) -> Result<(), EngineError> {
        if let Some(why) = shares_extents(&self.spec.dst) {
            self.notes.push(why);
        }
        let (s, d) = (self.src.as_fd(), dst.as_fd());
        let len = self.spec.len;
        let mut pos = 0u64;
        while pos < len {
            let n = (len - pos).min(self.spec.chunk as u64);
            let end = pos + n;
            let t0 = Instant::now();
            while pos < end {
                let (mut a, mut b) = (pos, pos);
                let want = (end - pos) as usize;
                match rustix::fs::copy_file_range(s, Some(&mut a), d, Some(&mut b), want) {
                    Ok(0) => return Err(short_source(&self.spec.src, pos, len)),
                    Ok(k) => pos += k as u64,
                    Err(rustix::io::Errno::INTR) => {}
                    Err(
                        e @ (rustix::io::Errno::XDEV
                        | rustix::io::Errno::NOSYS
                        | rustix::io::Errno::OPNOTSUPP),
                    ) => {
                        return Err(self.method.unsupported(format!(
                            "copy_file_range from {} to {} fails with {e} on this kernel ({} to {}); use read-write or sendfile",
                            self.spec.src.display(),
                            self.spec.dst.display(),
                            fs_name(&self.spec.src),
                            fs_name(&self.spec.dst)
                        )));
                    }
                    Err(e) => {
                        return Err(EngineError::os("copy_file_range", &self.spec.dst, e.into()))
                    }
                }
            }
            self.sync_each(dst)?;
            self.chunk_done(n, t0)?;
        }
        Ok(())
    }

    fn sendfile(&mut self, dst: &File) -> Result<(), EngineError> {
        // sendfile writes at the destination's file position, which starts at
        // 0 (just created) and advances with every call; the source offset
        // is passed explicitly.
        let (s, d) = (self.src.as_fd(), dst.as_fd());
        let len = self.spec.len;
        let mut pos = 0u64;
        while pos < len {
            let n = (len - pos).min(self.spec.chunk as u64);
            let end = pos + n;
            let t0 = Instant::now();
            while pos < end {
                let mut a = pos;
                match rustix::fs::sendfile(d, s, Some(&mut a), (end - pos) as usize) {
                    Ok(0) => return Err(short_source(&self.spec.src, pos, len)),
                    Ok(k) => pos += k as u64,
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e @ rustix::io::Errno::NOSYS) => {
                        return Err(self.method.unsupported(format!(
                            "sendfile fails with {e} on this kernel; use read-write"
                        )));
                    }
                    Err(e) => return Err(EngineError::os("sendfile", &self.spec.dst, e.into())),
                }
            }
            self.sync_each(dst)?;
            self.chunk_done(n, t0)?;
        }
        Ok(())
    }

    fn mmap_write(&mut self, dst: &File) -> Result<(), EngineError> {
        let len = self.spec.len;
        if len == 0 {
            return Ok(()); // nothing to map (an empty mapping is EINVAL)
        }
        let map_len = usize::try_from(len).map_err(|_| {
            EngineError::Invalid(format!("{len} bytes cannot be mapped on this machine"))
        })?;
        // SAFETY: a read-only private view of a file we hold open, `len`
        // bytes long, and `copy` checked that the file holds at least `len`
        // bytes, so no page of the mapping lies past end of file. The
        // mapping lives in `map` until the end of this function and is only
        // read through `&map`. If another process truncates the source
        // during the copy, touching the lost pages raises SIGBUS (the
        // process dies; no memory is misused); a concurrent writer can only
        // change the bytes copied. A benchmark of files the user chose
        // accepts that, as the mmap engine does.
        let map = unsafe { memmap2::MmapOptions::new().len(map_len).map(self.src) }
            .map_err(|e| EngineError::os("mmap", &self.spec.src, e))?;
        // Advice only: read-ahead ahead of the faults, as a copy wants.
        let _ = map.advise(memmap2::Advice::Sequential);
        let d = dst.as_fd();
        let mut off = 0usize;
        while off < map_len {
            let n = (map_len - off).min(self.spec.chunk);
            let t0 = Instant::now();
            pwrite_full(d, &map[off..off + n], off as u64, &self.spec.dst)?;
            self.sync_each(dst)?;
            self.chunk_done(n as u64, t0)?;
            off += n;
        }
        drop(map);
        Ok(())
    }

    fn uring(&mut self, dst: &File) -> Result<(), EngineError> {
        let (align, mem) = self.direct_layout(dst)?;
        let len = self.spec.len;
        let prefix = len / align as u64 * align as u64;
        let slot_size = self.buf_len(align);
        let chunks_in_prefix = prefix.div_ceil(slot_size as u64);
        let depth = self.spec.depth.min(MAX_DEPTH) as u64;
        let slots = depth.min(chunks_in_prefix).max(1) as usize;
        let src = self.src;
        let mut p = Pipeline::new(
            self.method,
            src.as_fd(),
            dst.as_fd(),
            slots,
            slot_size,
            mem,
            self.spec.sync == SyncPolicy::Each,
            &mut self.notes,
            &self.spec.dst,
        )?;
        p.run(prefix, self)?;
        debug_assert_eq!(p.active, 0);
        // The ring is idle now (every chunk completed): its slot 0 serves
        // the tail.
        let Some(buf) = p.pool.get_mut(0) else {
            return Err(EngineError::Invalid(
                "io_uring slot 0 still in flight".into(),
            ));
        };
        self.buffered_tail(dst, buf, prefix, align)?;
        drop(p);
        Ok(())
    }
}

/// A zeroed buffer for one chunk, on huge pages when it spans more than one
/// page (as [`SlotPool`] does).
fn new_buf(len: usize, align: usize) -> AlignedBuf {
    if len > 4096 {
        AlignedBuf::new_huge(len, align)
    } else {
        AlignedBuf::new(len, align)
    }
}

/// Close `file`, reporting the error `close` returns (NFS reports deferred
/// write errors there); EINTR still closes the descriptor on Linux.
fn close(file: File, path: &Path) -> Result<(), EngineError> {
    let fd = file.into_raw_fd();
    // SAFETY: `fd` was just released from a `File` we owned, so it is open,
    // owned by nobody else, and closed exactly once, here.
    let rc = unsafe { libc::close(fd) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(EngineError::os("close", path, e));
        }
    }
    Ok(())
}

fn fs_name(path: &Path) -> &'static str {
    crate::sys::fs_type_of(path).unwrap_or("unknown")
}

/// Why `copy_file_range` into `dst` may move no data, when it may.
fn shares_extents(dst: &Path) -> Option<String> {
    let fs = fs_name(dst);
    match fs {
        "btrfs" | "xfs" | "bcachefs" | "zfs" => Some(format!(
            "{fs}: copy_file_range may share extents (reflink, block cloning) instead of copying data"
        )),
        "nfs" | "cifs" => Some(format!(
            "{fs}: copy_file_range may copy on the server (server-side copy)"
        )),
        _ => None,
    }
}

/// What a `uring` slot's request is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Reading,
    Writing,
    Syncing,
}

/// One chunk in flight in a slot.
#[derive(Debug, Clone, Copy)]
struct Slot {
    phase: Phase,
    /// File offset of the chunk.
    off: u64,
    /// Chunk length.
    len: u32,
    /// Bytes of the current phase done (short reads/writes resume here).
    done: u32,
    /// When the chunk's read was queued.
    t0: Instant,
}

/// The `uring` copy pipeline.
///
/// Invariants:
/// - Every slot has at most one request queued or in flight (a read, a
///   write or an fsync), whose user_data is the slot index; `active` counts
///   them. Only the CQE of that request moves the slot on.
/// - Requests point into `pool`, which lives as long as the pipeline; the
///   files are borrowed for the pipeline's lifetime, so they stay open.
/// - Drop waits until `active` is 0 before `pool` is freed (the ring field
///   is declared first, so it is also closed before the pool is freed); if
///   waiting fails, the pool is leaked rather than freed under the kernel.
struct Pipeline<'f> {
    ring: IoUring,
    pool: SlotPool,
    /// Address of each slot's buffer (from `pool`).
    bases: Vec<*mut u8>,
    slots: Vec<Slot>,
    active: usize,
    src: BorrowedFd<'f>,
    dst: BorrowedFd<'f>,
    fixed_bufs: bool,
    fixed_files: bool,
    fsync_each: bool,
}

impl<'f> Pipeline<'f> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        method: CopyMethod,
        src: BorrowedFd<'f>,
        dst: BorrowedFd<'f>,
        slots: usize,
        slot_size: usize,
        mem_align: usize,
        fsync_each: bool,
        notes: &mut Vec<String>,
        dst_path: &Path,
    ) -> Result<Pipeline<'f>, EngineError> {
        let ring = new_ring(method, slots, dst_path)?;
        let mut pool = SlotPool::new(slots, slot_size, mem_align);
        let bases: Vec<*mut u8> = pool.iovecs().iter().map(|v| v.iov_base.cast()).collect();
        // SAFETY: `pool` stays at a fixed address for as long as the ring:
        // both live in the pipeline, whose Drop waits for every request
        // before the ring and then the pool are dropped.
        let fixed_bufs = unsafe {
            crate::engines::uring::register_pool(&ring, &mut pool, notes, "the depth or chunk")
        };
        let fixed_files = ring
            .submitter()
            .register_files(&[src.as_raw_fd(), dst.as_raw_fd()])
            .is_ok();
        if !fixed_files {
            notes.push("registering the files failed; using their plain descriptors".into());
        }
        let idle = Slot {
            phase: Phase::Idle,
            off: 0,
            len: 0,
            done: 0,
            t0: Instant::now(),
        };
        Ok(Pipeline {
            ring,
            pool,
            bases,
            slots: vec![idle; slots],
            active: 0,
            src,
            dst,
            fixed_bufs,
            fixed_files,
            fsync_each,
        })
    }

    /// The request slot `s` needs next: the rest of its read or write, or
    /// its fsync.
    fn entry(&self, s: usize) -> squeue::Entry {
        let st = self.slots[s];
        let fd = |i: u32, f: BorrowedFd<'_>| -> (types::Fixed, types::Fd) {
            (types::Fixed(i), types::Fd(f.as_raw_fd()))
        };
        let (fixed, plain) = match st.phase {
            Phase::Reading => fd(0, self.src),
            _ => fd(1, self.dst),
        };
        let ptr = self.bases[s].wrapping_add(st.done as usize);
        let len = st.len - st.done;
        let off = st.off + u64::from(st.done);
        let idx = s as u16;
        macro_rules! op {
            ($fd:expr) => {
                match (st.phase, self.fixed_bufs) {
                    (Phase::Reading, true) => opcode::ReadFixed::new($fd, ptr, len, idx)
                        .offset(off)
                        .build(),
                    (Phase::Reading, false) => opcode::Read::new($fd, ptr, len).offset(off).build(),
                    (Phase::Writing, true) => opcode::WriteFixed::new($fd, ptr, len, idx)
                        .offset(off)
                        .build(),
                    (Phase::Writing, false) => {
                        opcode::Write::new($fd, ptr, len).offset(off).build()
                    }
                    (Phase::Syncing | Phase::Idle, _) => opcode::Fsync::new($fd).build(),
                }
            };
        }
        let e = if self.fixed_files {
            op!(fixed)
        } else {
            op!(plain)
        };
        e.user_data(s as u64)
    }

    /// Queue slot `s`'s next request.
    fn push(&mut self, s: usize) -> Result<(), EngineError> {
        let e = self.entry(s);
        // SAFETY: the entry points at slot `s` of `self.pool` (within its
        // `slot_size` bytes: `done <= len <= slot_size`), which stays
        // allocated until the request completes (Drop waits for every one
        // counted in `active`); no Rust reference to that slot exists while
        // it is in flight (the pool is only borrowed when `active` is 0).
        // The files are borrowed for the pipeline's lifetime, and the
        // registered buffer and file indices are valid for this ring.
        let pushed = unsafe { self.ring.submission().push(&e) }.is_ok();
        if !pushed {
            // Cannot happen: the SQ has an entry per slot and each slot has
            // at most one request queued.
            self.slots[s].phase = Phase::Idle;
            return Err(EngineError::Invalid(
                "io_uring submission queue full".into(),
            ));
        }
        self.active += 1;
        Ok(())
    }

    /// Start reading the chunk at `off` of `len` bytes into slot `s`.
    fn start_read(&mut self, s: usize, off: u64, len: u32) -> Result<(), EngineError> {
        self.slots[s] = Slot {
            phase: Phase::Reading,
            off,
            len,
            done: 0,
            t0: Instant::now(),
        };
        self.push(s)
    }

    /// The next completion (user_data, result), if one is there.
    #[inline]
    fn next_cqe(&mut self) -> Option<(u64, i32)> {
        self.ring
            .completion()
            .next()
            .map(|c| (c.user_data(), c.result()))
    }

    /// Submit what is queued and wait for at least `want` completions.
    fn enter(&mut self, want: usize, path: &Path) -> Result<(), EngineError> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // CQ overflow backlog: the caller drains and comes back.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Ok(()),
                Err(e) => return Err(EngineError::os("io_uring_enter", path, e)),
            }
        }
    }

    /// Copy `[0, prefix)` with up to one chunk per slot in flight.
    fn run(&mut self, prefix: u64, job: &mut Job<'_>) -> Result<(), EngineError> {
        let chunk = self.pool.slot_size() as u64;
        let mut next = 0u64;
        for s in 0..self.slots.len() {
            if next >= prefix {
                break;
            }
            let n = (prefix - next).min(chunk);
            self.start_read(s, next, n as u32)?;
            next += n;
        }
        while self.active > 0 {
            self.enter(1, &job.spec.dst)?;
            while let Some((user_data, res)) = self.next_cqe() {
                // The request of this slot is over, whatever its result.
                self.active -= 1;
                let s = user_data as usize;
                let Some(st) = self.slots.get(s).copied() else {
                    continue; // not ours (cannot happen)
                };
                let path = if st.phase == Phase::Reading {
                    &job.spec.src
                } else {
                    &job.spec.dst
                };
                if res < 0 {
                    self.slots[s].phase = Phase::Idle;
                    let op = match st.phase {
                        Phase::Reading => "io_uring read",
                        Phase::Writing => "io_uring write",
                        _ => "io_uring fsync",
                    };
                    return Err(EngineError::os(
                        op,
                        path,
                        io::Error::from_raw_os_error(-res),
                    ));
                }
                let res = res as u32;
                match st.phase {
                    Phase::Reading | Phase::Writing if res == 0 => {
                        self.slots[s].phase = Phase::Idle;
                        return Err(if st.phase == Phase::Reading {
                            short_source(path, st.off + u64::from(st.done), job.spec.len)
                        } else {
                            write_zero(path)
                        });
                    }
                    Phase::Reading | Phase::Writing if st.done + res < st.len => {
                        // Short: queue the rest.
                        self.slots[s].done += res;
                        self.push(s)?;
                        continue;
                    }
                    Phase::Reading => {
                        self.slots[s].phase = Phase::Writing;
                        self.slots[s].done = 0;
                        self.push(s)?;
                        continue;
                    }
                    Phase::Writing if self.fsync_each => {
                        self.slots[s].phase = Phase::Syncing;
                        self.push(s)?;
                        continue;
                    }
                    Phase::Writing | Phase::Syncing => {}
                    Phase::Idle => continue, // cannot happen
                }
                // The chunk is copied: report it and start the next one in
                // this slot.
                job.chunk_done(u64::from(st.len), st.t0)?;
                self.slots[s].phase = Phase::Idle;
                if next < prefix {
                    let n = (prefix - next).min(chunk);
                    self.start_read(s, next, n as u32)?;
                    next += n;
                }
            }
        }
        Ok(())
    }
}

impl Drop for Pipeline<'_> {
    fn drop(&mut self) {
        // Wait for every request still queued or in flight: they point into
        // the pool, which is freed after this.
        let mut failures = 0;
        while self.active > 0 && failures < 10 {
            match self.ring.submit_and_wait(self.active) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(_) => failures += 1,
            }
            while self.ring.completion().next().is_some() {
                self.active = self.active.saturating_sub(1);
            }
        }
        if self.active > 0 {
            // The kernel may still write into the buffers: leak them rather
            // than free memory it owns.
            let pool = std::mem::replace(&mut self.pool, SlotPool::new(1, 1, 1));
            std::mem::forget(pool);
            return;
        }
        // Drop the ring's references to the files now, so that closing the
        // destination really closes it (the ring's own teardown is
        // asynchronous).
        if self.fixed_files {
            let _ = self.ring.submitter().unregister_files();
        }
    }
}

/// A ring with an entry per slot. Prefers DEFER_TASKRUN (completions
/// processed when this thread waits; needs SINGLE_ISSUER, Linux 6.1+), else
/// COOP_TASKRUN (5.19+), else a plain ring, as the uring engine does.
fn new_ring(method: CopyMethod, slots: usize, path: &Path) -> Result<IoUring, EngineError> {
    let entries = slots.next_power_of_two() as u32;
    let mut defer = IoUring::builder();
    defer
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun();
    let mut coop = IoUring::builder();
    coop.setup_coop_taskrun();
    let built = match defer.build(entries) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => match coop.build(entries) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::new(entries),
            other => other,
        },
        other => other,
    };
    built.map_err(|e| {
        let hint = crate::sys::errno_hint("io_uring_setup", &e);
        match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::ENOSYS) | Some(libc::EINVAL) | Some(libc::ENOMEM) => {
                method.unsupported(format!(
                    "io_uring_setup failed: {e}{}",
                    hint.map(|h| format!(" ({h})")).unwrap_or_default()
                ))
            }
            _ => EngineError::os("io_uring_setup", path, e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_distinct() {
        for m in CopyMethod::ALL {
            assert_eq!(CopyMethod::from_name(m.name()), Some(m));
            assert_eq!(m.to_string(), m.name());
            assert!(!m.summary().is_empty());
        }
        assert_eq!(CopyMethod::from_name("nope"), None);
        let mut names: Vec<_> = CopyMethod::ALL.iter().map(|m| m.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CopyMethod::ALL.len());
        assert!(CopyMethod::Uring.is_direct() && CopyMethod::Uring.engine_method().is_direct());
        assert!(!CopyMethod::Sendfile.is_direct());
    }

    #[test]
    fn unsupported_names_the_copy_method() {
        let e = CopyMethod::CopyFileRange.unsupported("why".into());
        let s = e.to_string();
        assert!(s.contains("copy method copy-file-range: why"), "{s}");
    }

    #[test]
    fn chunk_and_depth_are_checked_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("s");
        std::fs::write(&src, [1u8; 10]).unwrap();
        let dst = dir.path().join("d");
        for (chunk, depth) in [(0, 1), (MAX_CHUNK + 1, 1), (4096, 0)] {
            let spec = CopySpec {
                src: src.clone(),
                dst: dst.clone(),
                len: 10,
                chunk,
                depth,
                sync: SyncPolicy::None,
            };
            let r = copy(CopyMethod::ReadWrite, &spec, &mut |_, _| true);
            assert!(matches!(r, Err(EngineError::Invalid(_))), "{r:?}");
            assert!(!dst.exists());
        }
    }

    #[test]
    fn buffers_shrink_to_short_copies() {
        let spec = CopySpec {
            src: PathBuf::from("s"),
            dst: PathBuf::from("d"),
            len: 5000,
            chunk: 1 << 20,
            depth: 1,
            sync: SyncPolicy::None,
        };
        let f = tempfile::tempfile().unwrap();
        let mut cb = |_: u64, _: u64| true;
        let job = Job {
            method: CopyMethod::ReadWrite,
            spec: &spec,
            src: &f,
            on_chunk: &mut cb,
            notes: Vec::new(),
            chunks: 0,
        };
        assert_eq!(job.buf_len(1), 5000);
        assert_eq!(job.buf_len(4096), 8192);
    }
}

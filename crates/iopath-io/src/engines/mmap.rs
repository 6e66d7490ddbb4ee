//! `mmap` and `mmap-dax`: `memcpy` between the engine's buffer and a shared
//! mapping of the file, as DAXBench64 measures it.
//!
//! `mmap` maps the file `MAP_SHARED`. Reads fault pages in (with the
//! kernel's fault-around and read-ahead); writes dirty pages that `msync`
//! writes back.
//!
//! `mmap-dax` maps it `MAP_SHARED_VALIDATE | MAP_SYNC`. The kernel accepts that only for a file on a DAX
//! file system (ext4 or xfs mounted `-o dax` on persistent memory): loads and
//! stores then reach the medium without the page cache, and the file's
//! metadata is durable whenever a write fault completes, so written data is
//! made durable by writing the CPU cache lines back (`clwb`, else
//! `clflushopt`, else `clflush`, then `sfence`) instead of `msync`. Anywhere
//! else the kernel refuses the mapping (EOPNOTSUPP) and `open` returns
//! [`EngineError::Unsupported`] saying why: the file system, its mount
//! options, and what DAX needs. Cache-line write-back is implemented for
//! x86_64 only; elsewhere `mmap-dax` is unsupported.
//!
//! Both map `span_bytes` of the file, or the whole file when it is shorter
//! (pages past end of file would raise SIGBUS). A request past the end of the
//! mapping transfers what lies inside it (a short read or write), as a file
//! would at end of file.
//!
//! The mapped bytes are only ever reached through raw pointers, never
//! through a Rust reference: the workers of a case map the same file and
//! write it at once, and other processes may ([`map`]'s docs).
//!
//! If another process truncates the file while it is mapped, touching a
//! page past its new end raises SIGBUS, which would kill iopath without a
//! word. A process-wide handler ([`guard`]) recognises the engines'
//! mappings, puts a zero page in place of the lost one so the copy can
//! finish, and the request fails instead, with an error naming the file
//! and the offset; so does every later request of that engine, and its
//! flush. The same holds for a page the kernel cannot read in or allocate
//! (an I/O error, no space for a page written into a hole).
//!
//! Sync policies. `mmap`: `end` msyncs (and fsyncs) the whole mapping at the
//! end; `dsync`, `osync` and `each` msync the written pages after every
//! write. `mmap-dax`: `end` writes back the cache lines of the written range
//! (lowest to highest offset written) at the end; `dsync`, `osync` and `each`
//! write back each write's lines right after it; `none` writes back nothing.
//!
//! Every engine reports its mapping in [`Caps::notes`] as DAXBench64 prints
//! it (file descriptor, length, first and last address), in the stable format
//! of [`MappingInfo`]'s `Display`; [`parse_mapping_note`] reads it back.

use std::fmt;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::buf::SlotPool;
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncCall, SyncPolicy};

mod guard;
mod map;

use map::FileMap;

/// What every mapping note starts with.
pub const MAPPING_NOTE_PREFIX: &str = "mapping: ";

/// A file mapping as DAXBench64 prints it: the file descriptor, the length,
/// and the first and last virtual address of the mapped range.
///
/// As a note (its `Display`, one line):
/// `mapping: fd 7, length 0x6400000 (100 MiB), start 0x7f3a2c000000, last byte 0x7f3a323fffff`.
/// Numbers are lower-case hex with `0x`, except the fd (decimal); `end` is the
/// address of the last mapped byte, so `end - start + 1 == len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappingInfo {
    /// The file descriptor the mapping was made from.
    pub fd: i32,
    /// Bytes mapped (what requests may touch; the kernel rounds the mapping
    /// itself up to whole pages).
    pub len: u64,
    /// Virtual address of the first mapped byte.
    pub start: u64,
    /// Virtual address of the last mapped byte (inclusive).
    pub end: u64,
}

impl MappingInfo {
    /// The mapping of `len` (> 0) bytes at `start`, made from `fd`.
    pub fn new(fd: i32, start: usize, len: usize) -> MappingInfo {
        let (start, len) = (start as u64, len as u64);
        MappingInfo {
            fd,
            len,
            start,
            end: start + len.max(1) - 1,
        }
    }
}

impl fmt::Display for MappingInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{MAPPING_NOTE_PREFIX}fd {}, length {:#x} ({}), start {:#x}, last byte {:#x}",
            self.fd,
            self.len,
            super::human_bytes(self.len),
            self.start,
            self.end
        )
    }
}

/// Read back a note written by [`MappingInfo`]'s `Display`; `None` for any
/// other note, or one whose numbers disagree (`end != start + len - 1`).
pub fn parse_mapping_note(s: &str) -> Option<MappingInfo> {
    let hex = |h: &str| u64::from_str_radix(h, 16).ok();
    let rest = s.trim().strip_prefix(MAPPING_NOTE_PREFIX)?;
    let (fd, rest) = rest.strip_prefix("fd ")?.split_once(", length 0x")?;
    let (len, rest) = rest.split_once(' ')?;
    let (_, rest) = rest.split_once(", start 0x")?;
    let (start, end) = rest.split_once(", last byte 0x")?;
    let m = MappingInfo {
        fd: fd.parse().ok()?,
        len: hex(len)?,
        start: hex(start)?,
        end: hex(end)?,
    };
    let consistent = m.fd >= 0 && m.len > 0 && m.start.checked_add(m.len - 1) == Some(m.end);
    consistent.then_some(m)
}

/// Cache-line write-back for `mmap-dax`: the instruction, and what each
/// write-back covers.
mod dax {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) enum Insn {
        Clwb,
        Clflushopt,
        Clflush,
    }

    impl Insn {
        pub(super) fn name(self) -> &'static str {
            match self {
                Insn::Clwb => "clwb",
                Insn::Clflushopt => "clflushopt",
                Insn::Clflush => "clflush",
            }
        }
    }

    /// How this CPU writes a cache line back to memory.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Writeback {
        pub(super) insn: Insn,
        /// Cache line size in bytes (a power of two).
        pub(super) line: usize,
    }

    #[cfg(target_arch = "x86_64")]
    impl Writeback {
        /// The best instruction this CPU has: `clwb` (keeps the line
        /// cached), else `clflushopt`, else `clflush` (both evict it). CPUID
        /// is read directly: std's feature detection does not know the first
        /// two.
        pub(super) fn detect() -> Option<Writeback> {
            use core::arch::x86_64::{__cpuid, __cpuid_count};
            let leaf1 = __cpuid(1);
            let leaf7_ebx = if __cpuid(0).eax >= 7 {
                __cpuid_count(7, 0).ebx
            } else {
                0
            };
            let insn = if leaf7_ebx & (1 << 24) != 0 {
                Insn::Clwb
            } else if leaf7_ebx & (1 << 23) != 0 {
                Insn::Clflushopt
            } else if leaf1.edx & (1 << 19) != 0 {
                Insn::Clflush
            } else {
                return None;
            };
            // CPUID.1:EBX[15:8] is the CLFLUSH line size in 8-byte units.
            let line = (((leaf1.ebx >> 8) & 0xff) as usize) * 8;
            let line = if line.is_power_of_two() && line >= 32 {
                line
            } else {
                64
            };
            Some(Writeback { insn, line })
        }

        /// Write back the cache lines of `[p, p + len)`, then `sfence`: the
        /// stores before this call are durable when it returns (on
        /// persistent memory under MAP_SYNC).
        ///
        /// # Safety
        /// `[p, p + len)` must lie inside one live mapping whose start is
        /// page-aligned (so the lines around it are mapped too).
        pub(super) unsafe fn range(&self, p: *const u8, len: usize) {
            use core::arch::asm;
            let first = p as usize & !(self.line - 1);
            let end = p as usize + len;
            for a in (first..end).step_by(self.line) {
                let a = a as *const u8;
                // No `nomem`/`readonly` options: each asm may touch memory, so
                // the compiler keeps the stores to the line before it.
                match self.insn {
                    // SAFETY: a is inside the mapping, or in the same
                    // page-aligned line as its first byte (caller's contract):
                    // mapped, so the instruction cannot fault. It changes no
                    // register, flag or stack; the CPU has it (CPUID above).
                    Insn::Clwb => unsafe {
                        asm!("clwb [{0}]", in(reg) a, options(nostack, preserves_flags))
                    },
                    // SAFETY: as for clwb.
                    Insn::Clflushopt => unsafe {
                        asm!("clflushopt [{0}]", in(reg) a, options(nostack, preserves_flags))
                    },
                    // SAFETY: as for clwb; clflush is baseline x86_64 (SSE2).
                    Insn::Clflush => unsafe { core::arch::x86_64::_mm_clflush(a) },
                }
            }
            // SAFETY: sfence is baseline x86_64 (SSE) and touches no memory;
            // it orders the write-backs before any later store.
            unsafe { core::arch::x86_64::_mm_sfence() }
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    impl Writeback {
        pub(super) fn detect() -> Option<Writeback> {
            None
        }

        /// # Safety
        /// Never called: `detect` gives no `Writeback` here.
        pub(super) unsafe fn range(&self, _p: *const u8, _len: usize) {}
    }
}

#[derive(Debug)]
pub struct MmapEngine {
    /// `None`: nothing to map (an empty file or span).
    map: Option<FileMap>,
    file: File,
    path: PathBuf,
    pool: SlotPool,
    caps: Caps,
    /// Make each write durable right after it (dsync, osync, each).
    sync_each: bool,
    /// mmap-dax: the cache-line write-back.
    writeback: Option<dax::Writeback>,
    /// mmap-dax: the byte range written since the last write-back.
    dirty: Option<(usize, usize)>,
}

impl MmapEngine {
    /// `mmap`: a `MAP_SHARED` mapping through the page cache.
    pub fn open(spec: &OpenSpec) -> Result<MmapEngine, EngineError> {
        Self::open_as(Method::Mmap, spec, false)
    }

    /// `mmap-dax`: a `MAP_SHARED_VALIDATE | MAP_SYNC` mapping, or
    /// [`EngineError::Unsupported`] when the file is not on DAX.
    pub fn open_dax(spec: &OpenSpec) -> Result<MmapEngine, EngineError> {
        Self::open_as(Method::MmapDax, spec, true)
    }

    /// `map_sync` is false only in tests, to run mmap-dax off DAX.
    fn open_as(method: Method, spec: &OpenSpec, map_sync: bool) -> Result<MmapEngine, EngineError> {
        let is_dax = method == Method::MmapDax;
        let writeback = if is_dax {
            dax::Writeback::detect()
        } else {
            None
        };
        if is_dax && writeback.is_none() {
            return Err(EngineError::Unsupported {
                method,
                reason: format!(
                    "mmap-dax makes writes durable by writing CPU cache lines back (clwb, clflushopt or clflush), which iopath implements on x86_64 only; this is {}",
                    std::env::consts::ARCH
                ),
            });
        }
        let file = super::open_target(
            method,
            &spec.path,
            spec.write,
            false,
            SyncPolicy::None,
            spec.noatime,
        )?;
        // Map no further than the file ends. Touching a mapped page wholly
        // past end of file raises SIGBUS, so a span longer than the file let
        // safe code kill the process with a read past EOF. Requests past the
        // mapping come back short instead, as at end of file.
        let file_len =
            crate::sys::file_len(&file).map_err(|e| EngineError::os("fstat", &spec.path, e))?;
        let span = spec.span_bytes.min(file_len);
        let len = usize::try_from(span)
            .map_err(|_| EngineError::Invalid(format!("span of {span} bytes cannot be mapped")))?;
        let map = if is_dax {
            // An empty span maps one page only to learn whether MAP_SYNC is
            // accepted here; nothing touches it, and it is unmapped at once.
            let map_len = if len == 0 {
                rustix::param::page_size()
            } else {
                len
            };
            let flags = libc::MAP_SHARED_VALIDATE | if map_sync { map::MAP_SYNC } else { 0 };
            match FileMap::new(&file, map_len, spec.write, flags) {
                Ok(m) if len > 0 => Some(m),
                Ok(_) => None,
                Err(e) => return Err(map_sync_refused(&spec.path, e)),
            }
        } else if len == 0 {
            None
        } else {
            let m = FileMap::new(&file, len, spec.write, libc::MAP_SHARED);
            Some(m.map_err(|e| EngineError::os("mmap", &spec.path, e))?)
        };
        let name = method.name();
        let mut notes = Vec::new();
        if let Some(m) = &map {
            notes.push(MappingInfo::new(file.as_raw_fd(), m.addr(), len).to_string());
            if !m.guarded() {
                notes.push(format!(
                    "{name}: this mapping is not guarded against SIGBUS (more than {} at once, or the handler could not be installed): if another process truncates the file meanwhile, iopath dies of it",
                    guard::ENTRIES
                ));
            }
        }
        if let (true, Some(wb)) = (is_dax, writeback) {
            notes.push(format!(
                "MAP_SYNC mapping on DAX: writes are made durable with {} + sfence per {}-byte cache line, not msync",
                wb.insn.name(),
                wb.line
            ));
        }
        if span < spec.span_bytes {
            notes.push(format!(
                "{name} maps {span} bytes, the file's length, not the {} asked: pages past end of file cannot be mapped",
                spec.span_bytes
            ));
        }
        if spec.queue_depth > 1 {
            notes.push(format!(
                "{name} is synchronous: queue depth {} requested, ran at 1 (use --threads for parallel faults)",
                spec.queue_depth
            ));
        }
        let (pool, buffer_nodes) = super::slot_pool(method, spec, 1, 4096)?;
        Ok(MmapEngine {
            map,
            file,
            path: spec.path.clone(),
            pool,
            caps: Caps {
                is_async: false,
                queue_depth: 1,
                offset_align: 1,
                mem_align: 4096,
                notes,
                buffer_nodes,
            },
            sync_each: matches!(
                spec.sync,
                SyncPolicy::Dsync | SyncPolicy::Osync | SyncPolicy::Each
            ),
            writeback,
            dirty: None,
        })
    }

    fn map_len(&self) -> usize {
        self.map.as_ref().map_or(0, |m| m.len)
    }

    /// The error of a request (`op`: "read", "write", "flush") in a mapping
    /// that took SIGBUS: the file truncated under it (it now ends at or
    /// before the page), or a page the kernel could not read in or
    /// allocate.
    fn fault_error(&self, op: &'static str, f: guard::Fault) -> EngineError {
        let now = crate::sys::file_len(&self.file).ok();
        let (kind, what) = match now {
            Some(n) if n <= f.offset as u64 => (
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "the file was truncated while mapped (SIGBUS at offset {}; it is {n} bytes long now): unexpected end of file",
                    f.offset
                ),
            ),
            _ => (
                std::io::ErrorKind::Other,
                format!(
                    "the page at offset {} could not be read in or written (SIGBUS, si_code {}): an I/O error, no space left for it, or a memory error",
                    f.offset, f.code
                ),
            ),
        };
        EngineError::Os {
            op: match op {
                "read" => "mmap read",
                "write" => "mmap write",
                _ => "mmap flush",
            },
            path: self.path.clone(),
            source: std::io::Error::new(kind, what),
            hint: Some(
                "another process changed the file during the run, or its storage failed; the mapping is unusable, so the case stops here".into(),
            ),
        }
    }

    fn request(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        let map_len = self.map_len();
        let buf = super::request_buf(&mut self.pool, r)?;
        let start = usize::try_from(r.offset).unwrap_or(usize::MAX).min(map_len);
        let end = start.saturating_add(r.len as usize).min(map_len);
        let n = end - start;
        let Some(m) = self.map.as_mut() else {
            return Ok(Ok(0));
        };
        let op = if r.op == Op::Read { "read" } else { "write" };
        if let Some(f) = m.fault() {
            // An earlier request met SIGBUS: the mapping holds zeros there.
            return Err(self.fault_error(op, f));
        }
        match r.op {
            Op::Read => m.read(start, &mut buf[..n]),
            Op::Write if !m.writable => return Ok(Err(libc::EBADF)),
            Op::Write => m.write(start, &buf[..n]),
        }
        if let Some(f) = m.fault() {
            return Err(self.fault_error(op, f));
        }
        if r.op == Op::Write && n > 0 {
            match (&self.writeback, self.sync_each) {
                (None, true) => {
                    if let Err(e) = m.flush_range(start, n) {
                        return Ok(Err(e.raw_os_error().unwrap_or(libc::EIO)));
                    }
                }
                (None, false) => {}
                // SAFETY: [start, end) is inside the mapping, which starts
                // page-aligned and is alive (&mut self holds it). A line of
                // a page truncated meanwhile faults like a load: guarded.
                (Some(wb), true) => m.access(|| unsafe { wb.range(m.ptr_at(start), n) }),
                (Some(_), false) => {
                    let (lo, hi) = self.dirty.unwrap_or((start, end));
                    self.dirty = Some((lo.min(start), hi.max(end)));
                }
            }
            if let Some(f) = m.fault() {
                return Err(self.fault_error(op, f));
            }
        }
        Ok(Ok(n as u32))
    }
}

/// Why MAP_SYNC was refused for `path`, as an [`EngineError`]: Unsupported,
/// naming the file system and its mount options, for the refusals that mean
/// "not DAX" (EOPNOTSUPP) or "no MAP_SYNC in this kernel" (EINVAL).
fn map_sync_refused(path: &Path, e: std::io::Error) -> EngineError {
    let method = Method::MmapDax;
    const NEEDS: &str = "mmap-dax needs persistent memory (or an emulated pmem device, kernel parameter memmap=4G!12G) and a file system mounted with -o dax; use mmap for a mapping through the page cache";
    let reason = match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            let mount = crate::sys::mount_of(path);
            let fs = mount.as_ref().map(|m| m.fs_type.clone()).unwrap_or_else(|| {
                crate::sys::fs_type_of(path)
                    .unwrap_or("an unknown file system")
                    .to_string()
            });
            let on = match &mount {
                Some(m) => format!(
                    "{fs} ({} mounted at {}, options {})",
                    m.source,
                    m.mount_point.display(),
                    m.options()
                ),
                None => fs.clone(),
            };
            let why = match (fs.as_str(), mount.as_ref().and_then(|m| m.dax_option())) {
                ("ext4" | "xfs", None | Some("never")) => " without DAX".to_string(),
                ("ext4" | "xfs", Some("inode")) => {
                    let file = match crate::sys::is_dax_file(path) {
                        Some(false) => "this file is not DAX (statx)",
                        _ => "this file may not be DAX",
                    };
                    format!(", mounted dax=inode, and {file}: set the DAX flag on its directory (xfs_io -c 'chattr +x' DIR) before creating files there")
                }
                ("ext4" | "xfs", Some(_)) => ", mounted with DAX, but its device cannot guarantee synchronous DAX (virtio-pmem, or pmem without a persistence domain), so only msync makes writes durable there".to_string(),
                _ => ", which cannot map files with MAP_SYNC (only ext4 and xfs on a DAX device can)".to_string(),
            };
            format!(
                "MAP_SYNC refused (EOPNOTSUPP): {} is on {on}{why}; {NEEDS}",
                path.display()
            )
        }
        Some(libc::EINVAL) => format!(
            "MAP_SYNC refused (EINVAL): this kernel has no MAP_SHARED_VALIDATE | MAP_SYNC (Linux 4.15+ needed) for {}; {NEEDS}",
            path.display()
        ),
        _ => return EngineError::os("mmap MAP_SYNC", path, e),
    };
    EngineError::Unsupported { method, reason }
}

impl super::SyncIo for MmapEngine {
    fn sync_caps(&self) -> &Caps {
        &self.caps
    }

    fn sync_method(&self) -> Method {
        if self.writeback.is_some() {
            Method::MmapDax
        } else {
            Method::Mmap
        }
    }

    fn advise_sync(&mut self, hint: crate::Hint) -> Result<(), EngineError> {
        use crate::Hint;
        let method = self.sync_method();
        let Some(m) = &self.map else {
            // Nothing mapped (an empty file or span): nothing to advise.
            return Ok(());
        };
        let advice = match hint {
            Hint::Random => libc::MADV_RANDOM,
            Hint::Sequential => libc::MADV_SEQUENTIAL,
            Hint::Willneed => libc::MADV_WILLNEED,
            Hint::Hugepage => libc::MADV_HUGEPAGE,
            Hint::Populate if m.writable => libc::MADV_POPULATE_WRITE,
            Hint::Populate => libc::MADV_POPULATE_READ,
            Hint::Noreuse => return Err(crate::hint::refused(method, hint)),
        };
        m.advise(advice).map_err(|e| match e.raw_os_error() {
            // Older kernels: no MADV_POPULATE_* (5.14+), no THP for files.
            Some(libc::EINVAL) => EngineError::Unsupported {
                method,
                reason: format!(
                    "the kernel refuses madvise for +{hint} on a mapping of {} (EINVAL): MADV_POPULATE_* needs Linux 5.14+, MADV_HUGEPAGE a kernel with transparent huge pages",
                    self.path.display()
                ),
            },
            _ => EngineError::os("madvise", &self.path, e),
        })
    }

    fn pool_mut(&mut self) -> &mut SlotPool {
        &mut self.pool
    }

    fn one(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        self.request(r)
    }

    fn flush_end(&mut self, call: SyncCall) -> Result<(), EngineError> {
        let Some(m) = &self.map else {
            // Nothing mapped: mmap-dax has nothing to do, mmap fsyncs.
            if self.writeback.is_some() {
                return Ok(());
            }
            return super::sync_file(call, &self.file, &self.path);
        };
        if let Some(f) = m.fault() {
            return Err(self.fault_error("flush", f));
        }
        if let Some(wb) = &self.writeback {
            if let Some((lo, hi)) = self.dirty.take() {
                // SAFETY: [lo, hi) was written through this mapping, so
                // it lies inside it; the mapping starts page-aligned and
                // is alive (&mut self holds it). Guarded as a copy is.
                m.access(|| unsafe { wb.range(m.ptr_at(lo), hi - lo) });
                if let Some(f) = m.fault() {
                    return Err(self.fault_error("flush", f));
                }
            }
            // MAP_SYNC: the metadata is durable already; no msync/fsync.
            return Ok(());
        }
        if m.writable {
            m.flush()
                .map_err(|e| EngineError::os("msync", &self.path, e))?;
        }
        super::sync_file(call, &self.file, &self.path)
    }
}

#[cfg(test)]
mod tests;

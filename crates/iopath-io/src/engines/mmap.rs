//! `mmap` and `mmap-dax`: `memcpy` between the engine's buffer and a shared
//! mapping of the file, as DAXBench64 measures it.
//!
//! `mmap` maps the file `MAP_SHARED` (memmap2). Reads fault pages in (with
//! the kernel's fault-around and read-ahead); writes dirty pages that
//! `msync` writes back.
//!
//! `mmap-dax` maps it `MAP_SHARED_VALIDATE | MAP_SYNC` (`libc::mmap`; memmap2
//! cannot pass MAP_SYNC). The kernel accepts that only for a file on a DAX
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
//! would at end of file. If another process truncates the file while it is
//! mapped, the kernel raises SIGBUS: iopath only maps files it created or
//! was told to use.
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
use std::ptr::NonNull;

use memmap2::{Mmap, MmapMut, MmapOptions};

use crate::buf::SlotPool;
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

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

#[derive(Debug)]
enum Map {
    Ro(Mmap),
    Rw(MmapMut),
    /// `MAP_SHARED_VALIDATE | MAP_SYNC` (mmap-dax).
    Dax(SyncMap),
    Empty,
}

/// A `MAP_SHARED_VALIDATE | MAP_SYNC` mapping, unmapped on drop.
#[derive(Debug)]
struct SyncMap {
    ptr: NonNull<u8>,
    len: usize,
    writable: bool,
}

// SAFETY: SyncMap owns its mapping (nothing else unmaps it) and is only read
// or written through &self/&mut self, like memmap2's MmapMut, which is Send.
// A mapping is not tied to the thread that made it.
unsafe impl Send for SyncMap {}

impl SyncMap {
    /// Map `len` (> 0) bytes of `file` from offset 0 with
    /// `MAP_SHARED_VALIDATE`, and `MAP_SYNC` when `map_sync` (always, but in
    /// this module's tests, which run the engine off DAX), or the OS error
    /// (EOPNOTSUPP: not DAX; EINVAL: a kernel without MAP_SYNC).
    fn new(file: &File, len: usize, writable: bool, map_sync: bool) -> std::io::Result<SyncMap> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        let flags = libc::MAP_SHARED_VALIDATE | if map_sync { dax::MAP_SYNC } else { 0 };
        // SAFETY: a fresh mapping at an address the kernel picks (NULL hint,
        // no MAP_FIXED), so no existing memory is replaced; the fd is open
        // for the call. The result is checked for MAP_FAILED before use.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, file.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| std::io::Error::other("mmap gave NULL"))?;
        Ok(SyncMap { ptr, len, writable })
    }

    fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    fn read(&self, start: usize, dst: &mut [u8]) {
        assert!(start.checked_add(dst.len()).is_some_and(|e| e <= self.len));
        // SAFETY: [start, start + dst.len()) lies inside the mapping (checked
        // above), which stays mapped while &self lives and never extends past
        // end of file (see open), so every byte is readable; dst is a
        // distinct Rust buffer, so the ranges do not overlap. Another process
        // writing the file meanwhile can only change the bytes copied.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(start), dst.as_mut_ptr(), dst.len())
        }
    }

    fn write(&mut self, start: usize, src: &[u8]) {
        assert!(self.writable && start.checked_add(src.len()).is_some_and(|e| e <= self.len));
        // SAFETY: as in read, and the mapping is PROT_WRITE (checked above).
        // No Rust reference to the mapped bytes exists (they are only
        // reached through this raw pointer), so writing them aliases nothing.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.as_ptr().add(start), src.len())
        }
    }
}

impl Drop for SyncMap {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned and was given; the
        // mapping is unmapped once, here, and no slice into it outlives self.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// Cache-line write-back for `mmap-dax`: the instruction, and what each
/// write-back covers.
mod dax {
    /// `MAP_SYNC` (Linux 4.15+): 0x80000 on every architecture that has it.
    pub(super) const MAP_SYNC: libc::c_int = 0x80000;

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
    map: Map,
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
        let file = super::open_target(method, &spec.path, spec.write, false, SyncPolicy::None)?;
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
            match SyncMap::new(&file, map_len, spec.write, map_sync) {
                Ok(m) if len > 0 => Map::Dax(m),
                Ok(_) => Map::Empty,
                Err(e) => return Err(map_sync_refused(&spec.path, e)),
            }
        } else if len == 0 {
            Map::Empty
        } else if spec.write {
            // SAFETY: the mapping is shared with the file and never extends
            // past its end. iopath maps its own test file, or one the user
            // named; another process that truncates or rewrites that file
            // while it is mapped can change the bytes read or raise SIGBUS,
            // which a benchmark of a file the user chose accepts, but it
            // cannot make Rust reference freed memory: the mapping lives as
            // long as the engine, and slices are only taken through &self
            // or &mut self.
            let m = unsafe { MmapOptions::new().len(len).map_mut(&file) };
            Map::Rw(m.map_err(|e| EngineError::os("mmap", &spec.path, e))?)
        } else {
            // SAFETY: as above, read-only mapping.
            let m = unsafe { MmapOptions::new().len(len).map(&file) };
            Map::Ro(m.map_err(|e| EngineError::os("mmap", &spec.path, e))?)
        };
        let name = method.name();
        let mut notes = Vec::new();
        let start = match &map {
            Map::Ro(m) => Some(m.as_ptr() as usize),
            Map::Rw(m) => Some(m.as_ptr() as usize),
            Map::Dax(m) => Some(m.addr()),
            Map::Empty => None,
        };
        if let Some(start) = start {
            notes.push(MappingInfo::new(file.as_raw_fd(), start, len).to_string());
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
        match &self.map {
            Map::Ro(m) => m.len(),
            Map::Rw(m) => m.len(),
            Map::Dax(m) => m.len,
            Map::Empty => 0,
        }
    }

    fn request(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        let map_len = self.map_len();
        let buf = super::request_buf(&mut self.pool, r)?;
        let start = usize::try_from(r.offset).unwrap_or(usize::MAX).min(map_len);
        let end = start.saturating_add(r.len as usize).min(map_len);
        let n = end - start;
        match (r.op, &mut self.map) {
            (Op::Read, Map::Ro(m)) => buf[..n].copy_from_slice(&m[start..end]),
            (Op::Read, Map::Rw(m)) => buf[..n].copy_from_slice(&m[start..end]),
            (Op::Read, Map::Dax(m)) => m.read(start, &mut buf[..n]),
            (Op::Write, Map::Rw(m)) => {
                m[start..end].copy_from_slice(&buf[..n]);
                if self.sync_each && n > 0 {
                    if let Err(e) = m.flush_range(start, n) {
                        return Ok(Err(e.raw_os_error().unwrap_or(libc::EIO)));
                    }
                }
            }
            (Op::Write, Map::Dax(m)) if m.writable => {
                m.write(start, &buf[..n]);
                if n > 0 {
                    if self.sync_each {
                        if let Some(wb) = &self.writeback {
                            // SAFETY: [start, end) is inside the mapping,
                            // which starts page-aligned and is alive (&mut
                            // self holds it).
                            unsafe { wb.range(m.ptr.as_ptr().add(start), n) }
                        }
                    } else {
                        let (lo, hi) = self.dirty.unwrap_or((start, end));
                        self.dirty = Some((lo.min(start), hi.max(end)));
                    }
                }
            }
            (Op::Write, Map::Ro(_) | Map::Dax(_)) => return Ok(Err(libc::EBADF)),
            (_, Map::Empty) => {}
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

    fn pool_mut(&mut self) -> &mut SlotPool {
        &mut self.pool
    }

    fn one(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        self.request(r)
    }

    fn flush_end(&mut self) -> Result<(), EngineError> {
        match &self.map {
            Map::Dax(m) => {
                if let (Some((lo, hi)), Some(wb)) = (self.dirty.take(), &self.writeback) {
                    // SAFETY: [lo, hi) was written through this mapping, so
                    // it lies inside it; the mapping starts page-aligned and
                    // is alive (&mut self holds it).
                    unsafe { wb.range(m.ptr.as_ptr().add(lo), hi - lo) }
                }
                // MAP_SYNC: the metadata is durable already; no msync/fsync.
                Ok(())
            }
            // mmap-dax with nothing mapped, or a read-only mapping: nothing to do.
            _ if self.writeback.is_some() => Ok(()),
            Map::Rw(m) => {
                m.flush()
                    .map_err(|e| EngineError::os("msync", &self.path, e))?;
                super::fsync(&self.file, &self.path)
            }
            Map::Ro(_) | Map::Empty => super::fsync(&self.file, &self.path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_note_round_trips() {
        let m = MappingInfo::new(7, 0x7f3a_2c00_0000, 100 << 20);
        let note = m.to_string();
        assert_eq!(
            note,
            "mapping: fd 7, length 0x6400000 (100 MiB), start 0x7f3a2c000000, last byte 0x7f3a323fffff"
        );
        assert_eq!(parse_mapping_note(&note), Some(m));
        let odd = MappingInfo::new(3, 0x1000, 10_000);
        assert!(odd.to_string().contains("(9.8 KiB)"), "{odd}");
        assert_eq!(parse_mapping_note(&odd.to_string()), Some(odd));
    }

    #[test]
    fn other_notes_do_not_parse() {
        for s in [
            "",
            "mmap is synchronous: queue depth 8 requested, ran at 1",
            "mapping: fd 7, length 0x10 (16 B), start 0x1000, last byte 0x1010",
            "mapping: fd -1, length 0x10 (16 B), start 0x1000, last byte 0x100f",
            "mapping: fd 7, length 0x0 (0 B), start 0x1000, last byte 0xfff",
            "mapping: fd 7, length 0xzz (16 B), start 0x1000, last byte 0x100f",
        ] {
            assert_eq!(parse_mapping_note(s), None, "{s}");
        }
    }

    #[test]
    fn sizes_read_like_sizes() {
        assert_eq!(crate::engines::human_bytes(512), "512 B");
        assert_eq!(crate::engines::human_bytes(4096), "4 KiB");
        assert_eq!(crate::engines::human_bytes(1 << 30), "1 GiB");
        assert_eq!(crate::engines::human_bytes(3 << 29), "1.5 GiB");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn cache_line_writeback_runs_here() {
        let wb = dax::Writeback::detect().expect("x86_64 has clflush");
        assert!(wb.line.is_power_of_two(), "{wb:?}");
        let v = vec![1u8; 3 * 4096];
        // Unaligned start and length: the lines around them are in v's pages.
        let p = v.as_ptr();
        let base = (p as usize).next_multiple_of(4096) as *const u8;
        // SAFETY: [base + 5, base + 5 + 4000) is inside v, and the lines
        // around it are inside base's page, which is inside v.
        unsafe { wb.range(base.add(5), 4000) };
        // clflush is baseline x86_64: its path runs on every CPU.
        let clflush = dax::Writeback {
            insn: dax::Insn::Clflush,
            ..wb
        };
        // SAFETY: as above.
        unsafe { clflush.range(base.add(4096), 64) };
        assert!(v.iter().all(|&b| b == 1));
    }

    /// mmap-dax's engine, mapped without MAP_SYNC (no DAX here): every
    /// sync policy writes what std::fs reads back, `end` writes back the
    /// dirty range, and reads see the file.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn dax_engine_round_trips_without_map_sync() {
        use crate::engines::SyncIo;
        const BS: usize = 4096;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.dat");
        std::fs::write(&path, vec![0u8; 12 * BS]).unwrap();
        let spec = |write, sync| OpenSpec {
            path: path.clone(),
            write,
            block_size: BS,
            queue_depth: 4,
            sync,
            span_bytes: 1 << 20,
            sqpoll_cpu: None,
            mem_policy: None,
        };
        let policies = [
            SyncPolicy::None,
            SyncPolicy::End,
            SyncPolicy::Dsync,
            SyncPolicy::Each,
            SyncPolicy::Osync,
        ];
        let mut want = vec![0u8; 12 * BS];
        for (i, policy) in policies.into_iter().enumerate() {
            let mut eng = MmapEngine::open_as(Method::MmapDax, &spec(true, policy), false).unwrap();
            let notes = eng.caps.notes.join("; ");
            let m = eng.caps.notes.iter().find_map(|n| parse_mapping_note(n));
            assert_eq!(m.map(|m| m.len), Some(12 * BS as u64), "{notes}");
            assert!(notes.contains("mmap-dax maps") && notes.contains("mmap-dax is synchronous"));
            assert!(notes.contains("sfence"), "{notes}");
            // Two writes, the second unaligned and short.
            for (k, (off, len)) in [(2 * i * BS, BS), ((2 * i + 1) * BS + 7, 100)]
                .into_iter()
                .enumerate()
            {
                let byte = (10 * i + k + 1) as u8;
                eng.pool.get_mut(0).unwrap().fill(byte);
                let r = IoReq {
                    op: Op::Write,
                    offset: off as u64,
                    len: len as u32,
                    slot: 0,
                };
                assert_eq!(eng.one(&r).unwrap(), Ok(len as u32));
                want[off..off + len].fill(byte);
            }
            let each = !matches!(policy, SyncPolicy::None | SyncPolicy::End);
            let dirty = Some((2 * i * BS, (2 * i + 1) * BS + 107));
            assert_eq!(eng.dirty, if each { None } else { dirty }, "{policy:?}");
            eng.flush_end().unwrap();
            assert_eq!(eng.dirty, None);
            drop(eng);
            assert!(std::fs::read(&path).unwrap() == want, "{policy:?}");
        }
        // Read back, including across the end of the mapping.
        let mut eng =
            MmapEngine::open_as(Method::MmapDax, &spec(false, SyncPolicy::None), false).unwrap();
        for off in [0, 3 * BS + 1, 11 * BS + 100] {
            let r = IoReq {
                op: Op::Read,
                offset: off as u64,
                len: BS as u32,
                slot: 0,
            };
            let n = (12 * BS - off).min(BS);
            assert_eq!(eng.one(&r).unwrap(), Ok(n as u32));
            assert!(
                eng.pool.get_mut(0).unwrap()[..n] == want[off..off + n],
                "at {off}"
            );
        }
        // A read-only mapping refuses writes with EBADF.
        let w = IoReq {
            op: Op::Write,
            offset: 0,
            len: 1,
            slot: 0,
        };
        assert_eq!(eng.one(&w).unwrap(), Err(libc::EBADF));
    }
}

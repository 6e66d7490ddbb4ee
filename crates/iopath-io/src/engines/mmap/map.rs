//! [`FileMap`]: a shared mapping of the target, reached only through raw
//! pointers, and guarded against SIGBUS ([`super::guard`]).
//!
//! Several workers of one case map the same file and write it at the same
//! time (randrw with threads > 1); other processes may too. Each worker has
//! a mapping of its own, at its own virtual addresses, over the same
//! page-cache pages, and one mapping is used by one thread at a time
//! (`FileMap` is `Send`, not `Sync`). So in Rust's model no two threads
//! access the same memory locations: another worker's store through its
//! own mapping, or another process's, changes these bytes from outside
//! what the model sees, as another process changes shared memory. What
//! must not be claimed is that the bytes stay unchanged: a `&[u8]` or
//! `&mut [u8]` over them would promise exactly that while it lives (and
//! let the compiler rely on it), which is false. So no reference to the
//! mapped bytes is ever made: `read` and `write` copy with
//! `ptr::copy_nonoverlapping` between a raw pointer into the mapping and
//! the engine's own buffer, which assumes nothing about the bytes before or
//! after the copy. A copy concurrent with another writer of the same bytes
//! may see, or leave, a mix of old and new bytes (torn), as `pread` and
//! `pwrite` on the page cache do; iopath accepts that.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use super::guard::{Fault, Guard};

/// `MAP_SYNC` (Linux 4.15+): 0x80000 on every architecture that has it.
pub(super) const MAP_SYNC: libc::c_int = 0x80000;

/// A shared mapping of `len` bytes of a file from offset 0, unmapped on
/// drop.
#[derive(Debug)]
pub(super) struct FileMap {
    ptr: NonNull<u8>,
    pub(super) len: usize,
    pub(super) writable: bool,
    /// Registered with the SIGBUS handler (`None`: the table was full).
    guard: Option<Guard>,
}

// SAFETY: FileMap owns its mapping (nothing else unmaps it) and reaches it
// only through &self/&mut self, like memmap2's MmapMut, which is Send. A
// mapping is not tied to the thread that made it, and neither is its guard
// (a table entry, checked by whichever thread copies).
unsafe impl Send for FileMap {}

impl FileMap {
    /// Map `len` (> 0) bytes of `file` from offset 0, `MAP_SHARED`, or
    /// with `extra_flags` (`MAP_SHARED_VALIDATE | MAP_SYNC` for mmap-dax)
    /// instead; the OS error if the kernel refuses.
    pub(super) fn new(
        file: &File,
        len: usize,
        writable: bool,
        flags: libc::c_int,
    ) -> std::io::Result<FileMap> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a fresh mapping at an address the kernel picks (NULL hint,
        // no MAP_FIXED), so no existing memory is replaced; the fd is open
        // for the call. The result is checked for MAP_FAILED before use.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, file.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| std::io::Error::other("mmap gave NULL"))?;
        let guard = Guard::register(ptr.as_ptr() as usize, len);
        Ok(FileMap {
            ptr,
            len,
            writable,
            guard,
        })
    }

    pub(super) fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Whether a SIGBUS in this mapping becomes an error (else it kills
    /// the process).
    pub(super) fn guarded(&self) -> bool {
        self.guard.is_some()
    }

    /// The first page of the mapping that raised SIGBUS, if any: since
    /// then, the mapping holds zeros where the file's page was, and every
    /// request must fail.
    pub(super) fn fault(&self) -> Option<Fault> {
        self.guard.as_ref().and_then(Guard::fault)
    }

    /// Run `f`, an access of this thread to the mapping: a SIGBUS it
    /// takes in the mapping becomes a zero page and a [`Fault`] (when the
    /// mapping is guarded).
    pub(super) fn access<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.guard {
            Some(g) => g.access(f),
            None => f(),
        }
    }

    /// A raw pointer to byte `start` (`start <= len`).
    fn at(&self, start: usize) -> *mut u8 {
        assert!(start <= self.len);
        // SAFETY: start <= len, so the result is inside the mapping or one
        // past its end.
        unsafe { self.ptr.as_ptr().add(start) }
    }

    /// Copy `dst.len()` bytes from offset `start` into `dst`.
    pub(super) fn read(&self, start: usize, dst: &mut [u8]) {
        assert!(start.checked_add(dst.len()).is_some_and(|e| e <= self.len));
        let src = self.at(start);
        // SAFETY: [start, start + dst.len()) lies inside the mapping (checked
        // above), which stays mapped while &self lives and never extends
        // past end of file at open (see the engine), so every byte is
        // readable; a page whose file page went away since (truncation)
        // raises SIGBUS, which the guard answers with a zero page (the
        // access, run inside `access`, completes, and `fault` reports it). dst is the engine's own
        // buffer, not part of the mapping, so the ranges do not overlap.
        // Only this thread uses this mapping now (&self, and FileMap is
        // not Sync), and only raw pointers reach its bytes (no reference
        // claims they are unchanging): other workers' mappings of the same
        // file, at other addresses, or other processes, storing to the
        // same file bytes meanwhile can only change which bytes are copied
        // (possibly a mix of old and new), and every byte value is a valid
        // u8.
        self.access(|| unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) })
    }

    /// Copy `src` to offset `start`.
    pub(super) fn write(&mut self, start: usize, src: &[u8]) {
        assert!(self.writable && start.checked_add(src.len()).is_some_and(|e| e <= self.len));
        let dst = self.at(start);
        // SAFETY: as in read, and the mapping is PROT_WRITE (checked
        // above). No Rust reference to the mapped bytes exists anywhere
        // (they are only reached through raw pointers), so writing them
        // invalidates no reference. Other writers of the same file bytes
        // (other workers through their own mappings, other processes)
        // store to the same page-cache page at the same time: the file may
        // then hold a mix of both writes, as with concurrent pwrite(2)
        // calls; no Rust value lives there. src is the engine's own
        // buffer, distinct from the mapping.
        self.access(|| unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) })
    }

    /// `msync(MS_SYNC)` of `[start, start + len)`, from its page on.
    pub(super) fn flush_range(&self, start: usize, len: usize) -> std::io::Result<()> {
        let ps = rustix::param::page_size();
        let first = start - start % ps;
        let p = self.at(first);
        // SAFETY: [first, start + len) lies inside the mapping (callers
        // pass a range they copied), first is page-aligned; msync reads no
        // memory through the pointer, it only names the range.
        let rc = unsafe { libc::msync(p.cast(), len + (start - first), libc::MS_SYNC) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// `msync(MS_SYNC)` of the whole mapping.
    pub(super) fn flush(&self) -> std::io::Result<()> {
        self.flush_range(0, self.len)
    }

    /// `madvise(advice)` over the whole mapping.
    pub(super) fn advise(&self, advice: libc::c_int) -> std::io::Result<()> {
        // SAFETY: ptr/len are exactly the mapping this FileMap owns (page-
        // aligned, alive while &self lives). The advice values callers
        // pass (RANDOM, SEQUENTIAL, WILLNEED, HUGEPAGE, POPULATE_READ/
        // WRITE) change read-ahead, page size or residency only, never the
        // mapping's contents or extent (no MADV_DONTNEED/REMOVE/FREE), so
        // no memory the program holds is invalidated; POPULATE_WRITE is
        // passed only for a writable mapping, and it faults pages in
        // without changing their bytes.
        let rc = unsafe { libc::madvise(self.ptr.as_ptr().cast(), self.len, advice) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// A raw pointer to byte `start` for cache-line write-back (mmap-dax).
    pub(super) fn ptr_at(&self, start: usize) -> *const u8 {
        self.at(start)
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        // Unregister first: once unmapped, the addresses may be reused by
        // a mapping that is not ours.
        self.guard = None;
        // SAFETY: ptr/len are exactly what mmap returned and was given; the
        // mapping is unmapped once, here (pages the SIGBUS guard replaced
        // are part of the range and go with it), and no pointer into it
        // outlives self.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

//! The pager: the anonymous region registered with the userfaultfd, the
//! books of which pages are resident, dirty or poisoned (FIFO eviction
//! within the budget, write-back of dirty pages in runs of neighbours), and
//! the fault-handling thread that serves missing-page and write-protect
//! faults. [`Shared`] is what the engine and that thread share.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::abi::{self, ioctl};
use super::WRITEBACK_PAGES;
use crate::buf::AlignedBuf;

/// An anonymous private mapping, unmapped on drop.
#[derive(Debug)]
pub(super) struct Region {
    pub(super) base: usize,
    /// Bytes mapped: whole pages.
    pub(super) len: usize,
}

impl Region {
    pub(super) fn new(len: usize) -> io::Result<Region> {
        // SAFETY: a fresh anonymous mapping at an address the kernel picks
        // (NULL hint, no MAP_FIXED), so no existing memory is replaced. The
        // result is checked for MAP_FAILED before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let region = Region {
            base: p as usize,
            len,
        };
        for advice in [libc::MADV_NOHUGEPAGE, libc::MADV_DONTFORK] {
            // SAFETY: advice on the whole of our own fresh mapping; neither
            // changes its contents (it has none yet). Failure only loses the
            // advice.
            unsafe { libc::madvise(p, len, advice) };
        }
        Ok(region)
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: base/len are what mmap returned and was given; the region
        // is unmapped once, here, when its last user (the engine and the
        // handler thread share it through an Arc) is gone.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

const RESIDENT: u8 = 1;
const DIRTY: u8 = 2;
/// Filled with zeros because its read failed: never written back, dropped
/// after the request that touched it.
const POISONED: u8 = 4;

/// The pager's bookkeeping, behind the mutex.
#[derive(Debug)]
pub(super) struct Pager {
    /// The file, `O_DIRECT` (and `O_DSYNC`/`O_SYNC` as the policy asks).
    pub(super) file: File,
    /// The same file without `O_DIRECT`, for the page that holds end of file
    /// when it is not on a page boundary (engines open for writing only).
    pub(super) tail: Option<File>,
    pub(super) file_len: u64,
    pub(super) budget: usize,
    /// Per page: RESIDENT | DIRTY | POISONED.
    pub(super) state: Vec<u8>,
    /// Per page: how many times it was filled, to tell stale FIFO entries.
    pub(super) generation: Vec<u32>,
    /// Resident pages, oldest first: (page, generation when filled).
    pub(super) fifo: VecDeque<(u32, u32)>,
    pub(super) resident: usize,
    /// Bounce buffer: [`WRITEBACK_PAGES`] pages, page-aligned.
    pub(super) buf: AlignedBuf,
}

/// What the engine and its handler thread share.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) uffd: OwnedFd,
    /// eventfd that wakes the handler to stop.
    pub(super) stop_fd: OwnedFd,
    pub(super) stop: AtomicBool,
    pub(super) region: Region,
    pub(super) page: usize,
    pub(super) pages: usize,
    pub(super) wp: bool,
    pub(super) write: bool,
    pub(super) path: PathBuf,
    /// errno of a pread/pwrite that failed inside the handler since the
    /// engine last looked; 0 when none.
    pub(super) io_error: AtomicI32,
    /// errno with which the handler thread ended on its own; 0 while it runs.
    pub(super) broken: AtomicI32,
    pub(super) faults: AtomicU64,
    pub(super) wp_faults: AtomicU64,
    pub(super) evictions: AtomicU64,
    pub(super) writebacks: AtomicU64,
    pub(super) resident: AtomicU64,
    pub(super) max_resident: AtomicU64,
    pub(super) pager: Mutex<Pager>,
}

pub(super) fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Pager> {
        self.pager.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn addr(&self, p: usize) -> usize {
        self.region.base + p * self.page
    }

    fn range(&self, first: usize, count: usize) -> abi::UffdioRange {
        abi::UffdioRange {
            start: self.addr(first) as u64,
            len: (count * self.page) as u64,
        }
    }

    fn note_io_error(&self, e: &io::Error) {
        let _ = self
            .io_error
            .compare_exchange(0, errno_of(e), Ordering::AcqRel, Ordering::Acquire);
    }

    /// Install the bounce buffer's first page as page `p` (waking whoever
    /// waits for it), write-protected when `protect`.
    /// Copy page `p` in without waking its toucher ([`Shared::wake`] does,
    /// once the books are done: a woken toucher may read them at once).
    fn copy_in(&self, p: usize, src: *const u8, protect: bool) -> io::Result<()> {
        for _ in 0..1000 {
            let mut c = abi::UffdioCopy {
                dst: self.addr(p) as u64,
                src: src as u64,
                len: self.page as u64,
                mode: abi::UFFDIO_COPY_MODE_DONTWAKE
                    | if protect { abi::UFFDIO_COPY_MODE_WP } else { 0 },
                copy: 0,
            };
            // SAFETY: dst is one page of our registered region, which is not
            // resident (so no byte of it is seen by anyone), and no Rust
            // reference points into the region; src is one page of the
            // bounce buffer, which the pager lock keeps ours.
            match unsafe { ioctl(self.uffd.as_raw_fd(), abi::UFFDIO_COPY, &mut c) } {
                Ok(()) => return Ok(()),
                Err(e) => match e.raw_os_error() {
                    // Already there (a duplicate fault): just wake.
                    Some(libc::EEXIST) => return self.wake(p),
                    // The toucher is gone (its mm exited).
                    Some(libc::ESRCH) => return Ok(()),
                    // The address space is changing (or a partial copy):
                    // retry what is left.
                    Some(libc::EAGAIN) | Some(libc::ENOENT) if c.copy <= 0 => continue,
                    Some(libc::EAGAIN) | Some(libc::ENOENT) => return Ok(()),
                    _ => return Err(e),
                },
            }
        }
        Err(io::Error::from_raw_os_error(libc::EAGAIN))
    }

    fn wake(&self, p: usize) -> io::Result<()> {
        let mut r = self.range(p, 1);
        // SAFETY: UFFDIO_WAKE reads one uffdio_range and changes no memory.
        unsafe { ioctl(self.uffd.as_raw_fd(), abi::UFFDIO_WAKE, &mut r) }
    }

    /// Write-protect pages `[first, first + count)` (`on`), or lift the
    /// protection, which also wakes a toucher waiting on them.
    fn protect(&self, first: usize, count: usize, on: bool) -> io::Result<()> {
        for _ in 0..1000 {
            let mut w = abi::UffdioWriteprotect {
                range: self.range(first, count),
                mode: if on {
                    abi::UFFDIO_WRITEPROTECT_MODE_WP
                } else {
                    0
                },
            };
            // SAFETY: UFFDIO_WRITEPROTECT reads one uffdio_writeprotect and
            // changes page protections inside our region, not its bytes.
            match unsafe { ioctl(self.uffd.as_raw_fd(), abi::UFFDIO_WRITEPROTECT, &mut w) } {
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => continue,
                r => return r,
            }
        }
        Err(io::Error::from_raw_os_error(libc::EAGAIN))
    }

    /// Whether page `p` is mapped in now (`mincore`); `true` when the
    /// kernel does not say, so that a toucher is woken rather than refilled.
    pub(super) fn present(&self, p: usize) -> bool {
        let mut v = 0u8;
        // SAFETY: one page of our region, page-aligned; mincore writes one
        // byte per page into v and changes no memory of the region.
        let rc = unsafe { libc::mincore(self.addr(p) as *mut libc::c_void, self.page, &mut v) };
        rc != 0 || v & 1 != 0
    }

    /// Drop pages `[first, first + count)`: their next touch faults again.
    pub(super) fn discard(&self, first: usize, count: usize) -> io::Result<()> {
        // SAFETY: the range is inside our region, no Rust reference points
        // into it, and every caller has written back whatever of it must be
        // kept; MADV_DONTNEED of private anonymous memory only zaps it.
        let rc = unsafe {
            libc::madvise(
                self.addr(first) as *mut libc::c_void,
                count * self.page,
                libc::MADV_DONTNEED,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn set_resident(&self, st: &Pager) {
        let n = st.resident as u64;
        self.resident.store(n, Ordering::Relaxed);
        self.max_resident.fetch_max(n, Ordering::Relaxed);
    }

    /// Read page `p` of the file into the bounce buffer's first page, zeros
    /// past end of file.
    fn read_page(&self, st: &mut Pager, p: usize) -> io::Result<()> {
        let page = self.page;
        let off = (p * page) as u64;
        let want = st.file_len.saturating_sub(off).min(page as u64) as usize;
        let buf = &mut st.buf.as_mut_slice()[..page];
        let mut got = 0;
        while got < want {
            match st.file.read_at(&mut buf[got..], off + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    buf.fill(0);
                    return Err(e);
                }
            }
        }
        buf[got..].fill(0);
        Ok(())
    }

    /// Serve a missing-page fault on page `p`.
    pub(super) fn fill(&self, st: &mut Pager, p: usize, write_fault: bool) -> io::Result<()> {
        if st.state[p] & RESIDENT != 0 {
            if self.present(p) {
                // A second message for a fault already served (the toucher
                // was interrupted by a signal and touched again): wake it.
                return self.wake(p);
            }
            // Dropped although the books say resident (a madvise that
            // failed half-way): forget it and fill it again.
            st.state[p] = 0;
            st.resident -= 1;
        }
        while st.resident >= st.budget {
            match self.evict_batch(st) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    // Kept resident: over budget until a write-back works.
                    self.note_io_error(&e);
                    break;
                }
            }
        }
        let state = match self.read_page(st, p) {
            Ok(()) if self.wp => RESIDENT | if write_fault { DIRTY } else { 0 },
            Ok(()) => RESIDENT | if self.write { DIRTY } else { 0 },
            Err(e) => {
                self.note_io_error(&e);
                RESIDENT | POISONED
            }
        };
        let protect = self.wp && state & DIRTY == 0;
        self.copy_in(p, st.buf.as_ptr(), protect)?;
        st.state[p] = state;
        st.generation[p] = st.generation[p].wrapping_add(1);
        st.fifo.push_back((p as u32, st.generation[p]));
        st.resident += 1;
        if st.fifo.len() > 2 * st.budget + 1024 {
            let (state, generation) = (&st.state, &st.generation);
            st.fifo
                .retain(|&(q, g)| state[q as usize] & RESIDENT != 0 && generation[q as usize] == g);
        }
        self.set_resident(st);
        self.faults.fetch_add(1, Ordering::Relaxed);
        // Only now the toucher may go on (and read these books).
        self.wake(p)
    }

    /// Serve a write-protect fault on page `p`: it is dirty from now on.
    fn unprotect(&self, st: &mut Pager, p: usize) -> io::Result<()> {
        if st.state[p] & RESIDENT != 0 {
            st.state[p] |= DIRTY;
        }
        self.wp_faults.fetch_add(1, Ordering::Relaxed);
        self.protect(p, 1, false)
    }

    /// Evict the oldest resident pages: one, or a batch of up to 1/16 of
    /// the budget (at most [`WRITEBACK_PAGES`]) so that neighbours leave
    /// together, with one `pwrite` for each run of dirty neighbours and one
    /// `madvise` for each run of neighbours. `false` when none is resident.
    fn evict_batch(&self, st: &mut Pager) -> io::Result<bool> {
        let want = (st.budget / 16).clamp(1, WRITEBACK_PAGES);
        let mut victims: Vec<(u32, u32)> = Vec::with_capacity(want);
        while victims.len() < want {
            let Some((q, g)) = st.fifo.pop_front() else {
                break;
            };
            let p = q as usize;
            // Stale entries (dropped since, or filled again later) go.
            if st.state[p] & RESIDENT != 0 && st.generation[p] == g {
                victims.push((q, g));
            }
        }
        if victims.is_empty() {
            return Ok(false);
        }
        let mut pages: Vec<usize> = victims.iter().map(|&(q, _)| q as usize).collect();
        pages.sort_unstable();
        let dirty = |s: u8| s & (DIRTY | POISONED) == DIRTY;
        let done = runs(&pages, |p| dirty(st.state[p]))
            .into_iter()
            .try_for_each(|(first, count)| self.write_run(st, first, count, false))
            .and_then(|()| {
                runs(&pages, |_| true)
                    .into_iter()
                    .try_for_each(|(first, count)| self.discard(first, count))
            });
        if let Err(e) = done {
            // Still resident (a write-back may be repeated): the oldest again.
            for v in victims.into_iter().rev() {
                st.fifo.push_front(v);
            }
            return Err(e);
        }
        for &p in &pages {
            st.state[p] = 0;
        }
        st.resident -= pages.len();
        self.set_resident(st);
        self.evictions
            .fetch_add(pages.len() as u64, Ordering::Relaxed);
        Ok(true)
    }

    /// Write resident pages `[first, first + count)` (at most
    /// [`WRITEBACK_PAGES`]) to the file, from a copy; `reprotect` protects
    /// them first (`uffd-wp`), so a store after the copy faults again.
    fn write_run(
        &self,
        st: &mut Pager,
        first: usize,
        count: usize,
        reprotect: bool,
    ) -> io::Result<()> {
        let page = self.page;
        let len = count * page;
        if reprotect {
            self.protect(first, count, true)?;
        }
        let buf = &mut st.buf.as_mut_slice()[..len];
        // SAFETY: the pages are inside our region and resident (the pager's
        // state says so, and only this lock's holder drops pages), so reading
        // them cannot fault; whoever stores to the region is stopped (in a
        // fault, or not in a request: the engine holds this lock only between
        // requests). buf is the pager's own bounce buffer, distinct from the
        // region.
        unsafe {
            std::ptr::copy_nonoverlapping(self.addr(first) as *const u8, buf.as_mut_ptr(), len)
        };
        let off = (first * page) as u64;
        let n = st.file_len.saturating_sub(off).min(len as u64) as usize;
        let whole = n / page * page;
        if whole > 0 {
            st.file.write_all_at(&buf[..whole], off)?;
        }
        if whole < n {
            let tail = st
                .tail
                .as_ref()
                .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))?;
            tail.write_all_at(&buf[whole..n], off + whole as u64)?;
        }
        self.writebacks.fetch_add(count as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Write back the dirty pages of `[lo, hi)`, neighbours together.
    /// `uffd-wp`: they stay resident, protected and clean; `uffd`: they are
    /// dropped, the only way to know them clean.
    pub(super) fn write_back(&self, st: &mut Pager, lo: usize, hi: usize) -> io::Result<()> {
        let wanted = |s: u8| s & (RESIDENT | DIRTY | POISONED) == RESIDENT | DIRTY;
        let mut p = lo;
        while p < hi {
            if !wanted(st.state[p]) {
                p += 1;
                continue;
            }
            let mut q = p + 1;
            while q < hi && q - p < WRITEBACK_PAGES && wanted(st.state[q]) {
                q += 1;
            }
            self.write_run(st, p, q - p, self.wp)?;
            if self.wp {
                st.state[p..q].iter_mut().for_each(|s| *s &= !DIRTY);
            } else {
                self.discard(p, q - p)?;
                st.state[p..q].fill(0);
                st.resident -= q - p;
                self.set_resident(st);
            }
            p = q;
        }
        Ok(())
    }

    /// Drop the pages whose read failed (after the request that met it).
    pub(super) fn drop_poisoned(&self) {
        let mut st = self.lock();
        for p in 0..self.pages {
            if st.state[p] & POISONED != 0 && self.discard(p, 1).is_ok() {
                st.state[p] = 0;
                st.resident -= 1;
            }
        }
        self.set_resident(&st);
    }

    fn unregister(&self) {
        let mut r = self.range(0, self.pages);
        // SAFETY: UFFDIO_UNREGISTER reads one uffdio_range; the range is our
        // region. Unregistering wakes any toucher, whose fault the kernel
        // then serves itself.
        let _ = unsafe { ioctl(self.uffd.as_raw_fd(), abi::UFFDIO_UNREGISTER, &mut r) };
        let mut r = self.range(0, self.pages);
        // SAFETY: UFFDIO_WAKE reads one uffdio_range and changes no memory.
        let _ = unsafe { ioctl(self.uffd.as_raw_fd(), abi::UFFDIO_WAKE, &mut r) };
    }

    fn handle(&self, msg: &[u8]) -> io::Result<()> {
        if msg[0] != abi::UFFD_EVENT_PAGEFAULT {
            return Ok(()); // no other event was asked for
        }
        let word = |at: usize| u64::from_ne_bytes(msg[at..at + 8].try_into().expect("8 bytes"));
        let (flags, addr) = (word(8), word(16) as usize);
        let Some(p) = addr
            .checked_sub(self.region.base)
            .map(|o| o / self.page)
            .filter(|&p| p < self.pages)
        else {
            return Ok(());
        };
        let mut st = self.lock();
        if flags & abi::UFFD_PAGEFAULT_FLAG_WP != 0 {
            self.unprotect(&mut st, p)
        } else {
            self.fill(&mut st, p, flags & abi::UFFD_PAGEFAULT_FLAG_WRITE != 0)
        }
    }

    /// The handler thread: serve faults until asked to stop.
    pub(super) fn serve(&self) {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.serve_loop()));
        let errno = match run {
            Ok(Ok(())) => return,
            Ok(Err(e)) => errno_of(&e),
            // A bug, not an I/O error; the toucher must not wait forever.
            Err(_) => libc::EIO,
        };
        self.broken.store(errno, Ordering::Release);
        self.unregister();
    }

    fn serve_loop(&self) -> io::Result<()> {
        let mut msgs = [0u8; abi::MSG_SIZE * 16];
        loop {
            if self.stop.load(Ordering::Acquire) {
                return Ok(());
            }
            let mut fds = [
                libc::pollfd {
                    fd: self.uffd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.stop_fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: fds is a live array of two pollfds, and its length is
            // passed with it.
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if fds[1].revents != 0 {
                return Ok(());
            }
            if fds[0].revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                return Err(io::Error::from_raw_os_error(libc::EBADF));
            }
            if fds[0].revents & libc::POLLIN == 0 {
                continue;
            }
            loop {
                // SAFETY: msgs is a live buffer of msgs.len() bytes that the
                // kernel fills with whole uffd_msg records.
                let n = unsafe {
                    libc::read(self.uffd.as_raw_fd(), msgs.as_mut_ptr().cast(), msgs.len())
                };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    match e.raw_os_error() {
                        Some(libc::EAGAIN) => break,
                        Some(libc::EINTR) => continue,
                        _ => return Err(e),
                    }
                }
                if n == 0 {
                    break;
                }
                for msg in msgs[..n as usize].chunks_exact(abi::MSG_SIZE) {
                    self.handle(msg)?;
                }
            }
        }
    }
}

/// Runs of consecutive pages of the sorted `pages` for which `keep` holds:
/// `(first, count)`, each at most [`WRITEBACK_PAGES`] long.
pub(super) fn runs(pages: &[usize], keep: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &p in pages.iter().filter(|&&p| keep(p)) {
        match out.last_mut() {
            Some((first, count)) if *first + *count == p && *count < WRITEBACK_PAGES => *count += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

//! The pager: the anonymous region registered with the userfaultfd, and
//! what is done to its pages: filling one on a fault (the file read with
//! no lock held, so that the handlers of a region fill pages at the same
//! time), FIFO eviction within the budget, write-back of dirty pages in runs
//! of neighbours, and dropping pages whose read failed. [`Shared`] is what
//! the engines of a region and its handler threads share; the books it
//! keeps are in `books`.

use std::fs::File;
use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

use rustix::io::ReadWriteFlags;

use super::abi::{self, ioctl};
use super::books::{evict, runs, Books, Fill, PageWords};
use super::WRITEBACK_PAGES;
use crate::buf::AlignedBuf;
use crate::SyncPolicy;

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
        // is unmapped once, here, when its last user (the engines and the
        // handler threads share it through an Arc) is gone.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

/// The pager's state behind the mutex.
#[derive(Debug)]
pub(super) struct Pager {
    pub(super) books: Books,
    /// Bounce buffer of write-backs: [`WRITEBACK_PAGES`] pages, page-aligned.
    pub(super) buf: AlignedBuf,
}

/// What the engines of a region and its handler threads share.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) uffd: OwnedFd,
    /// eventfd that wakes the handlers to stop.
    pub(super) stop_fd: OwnedFd,
    pub(super) stop: AtomicBool,
    pub(super) region: Region,
    pub(super) page: usize,
    pub(super) pages: usize,
    pub(super) wp: bool,
    /// The file is open for writing (engines may write).
    pub(super) writable: bool,
    pub(super) path: PathBuf,
    /// The file, `O_DIRECT`.
    pub(super) file: File,
    /// The same file without `O_DIRECT`, for the page that holds end of file
    /// when it is not on a page boundary (writable regions only).
    pub(super) tail: Option<File>,
    pub(super) file_len: u64,
    /// The strongest write policy of the engines so far: 0 none, 1
    /// `RWF_DSYNC`, 2 `RWF_SYNC`, for every write-back.
    pub(super) sync_rank: AtomicU8,
    pub(super) words: PageWords,
    /// errno of an eviction write-back that failed, for the next request
    /// of any engine; 0 when none.
    pub(super) io_error: AtomicI32,
    /// errno with which a handler thread ended on its own; 0 while they run.
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

/// The rank of `sync` in [`Shared::sync_rank`].
pub(super) fn sync_rank(sync: SyncPolicy) -> u8 {
    match sync {
        SyncPolicy::Dsync => 1,
        SyncPolicy::Osync => 2,
        _ => 0,
    }
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Pager> {
        self.pager.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn addr(&self, p: usize) -> usize {
        self.region.base + p * self.page
    }

    pub(super) fn range(&self, first: usize, count: usize) -> abi::UffdioRange {
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

    /// Copy page `p` in from `src` without waking its touchers
    /// ([`Shared::wake`] does, once the books are done: a woken toucher may
    /// read them at once), write-protected when `protect`.
    fn copy_in(&self, p: usize, src: *const u8, protect: bool) -> io::Result<Copied> {
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
            // mapped (so no byte of it is seen by anyone; if it is, the
            // kernel refuses with EEXIST and changes nothing), and no Rust
            // reference points into the region; src is one page of the
            // calling handler's own bounce buffer.
            match unsafe { ioctl(self.uffd.as_raw_fd(), abi::UFFDIO_COPY, &mut c) } {
                Ok(()) => return Ok(Copied::Installed),
                Err(e) => match e.raw_os_error() {
                    // Mapped already: its bytes are not these.
                    Some(libc::EEXIST) => return Ok(Copied::Exists),
                    // The toucher is gone (its mm exited): nothing mapped.
                    Some(libc::ESRCH) => return Ok(Copied::Gone),
                    // The address space is changing (or a partial copy):
                    // retry what is left.
                    Some(libc::EAGAIN) | Some(libc::ENOENT) if c.copy <= 0 => continue,
                    Some(libc::EAGAIN) | Some(libc::ENOENT) => return Ok(Copied::Installed),
                    _ => return Err(e),
                },
            }
        }
        Err(io::Error::from_raw_os_error(libc::EAGAIN))
    }

    pub(super) fn wake(&self, p: usize) -> io::Result<()> {
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

    /// Whether page `p` is in the region now: a page there or swapped out,
    /// either of which a touch reaches without a userfault. Read from
    /// `/proc/self/pagemap` (present and swapped bits, readable without
    /// privilege); where it cannot be read, `mincore`, which sees pages in
    /// memory only (on a machine with swap it says a swapped-out page of
    /// anonymous memory is gone). `true` when neither says, so that a
    /// toucher is woken rather than refilled.
    pub(super) fn present(&self, p: usize) -> bool {
        #[cfg(test)]
        if hooks::ABSENT_ONCE.with(|a| a.get() == Some(p) && a.take().is_some()) {
            return false;
        }
        let addr = self.addr(p);
        if let Some(entry) = pagemap_entry(addr, self.page) {
            return entry & (PM_PRESENT | PM_SWAP) != 0;
        }
        let mut v = 0u8;
        // SAFETY: one page of our region, page-aligned; mincore writes one
        // byte per page into v and changes no memory of the region.
        let rc = unsafe { libc::mincore(addr as *mut libc::c_void, self.page, &mut v) };
        rc != 0 || v & 1 != 0
    }

    /// Drop pages `[first, first + count)`: their next touch faults again.
    /// The caller has written back what of them must be kept, and no
    /// request copies them (claimed, or no engine is left).
    pub(super) fn discard(&self, first: usize, count: usize) -> io::Result<()> {
        // SAFETY: the range is inside our region, no Rust reference points
        // into it, and no request copies it now (see above);
        // MADV_DONTNEED of private anonymous memory only zaps it.
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

    pub(super) fn set_resident(&self, books: &Books) {
        let n = books.resident() as u64;
        self.resident.store(n, Ordering::Relaxed);
        self.max_resident.fetch_max(n, Ordering::Relaxed);
    }

    /// Read page `p` of the file into the first page of `buf`, zeros past
    /// end of file. No lock needed: the file is only read here.
    fn read_page(&self, p: usize, buf: &mut AlignedBuf) -> io::Result<()> {
        let page = self.page;
        let off = (p * page) as u64;
        let want = self.file_len.saturating_sub(off).min(page as u64) as usize;
        let buf = &mut buf.as_mut_slice()[..page];
        let mut got = 0;
        while got < want {
            match self.file.read_at(&mut buf[got..], off + got as u64) {
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

    /// Serve a missing-page fault on page `p`, reading it into `bounce`
    /// (the calling handler's own page).
    pub(super) fn fill(
        &self,
        p: usize,
        write_fault: bool,
        bounce: &mut AlignedBuf,
    ) -> io::Result<()> {
        let mut st = self.lock();
        // What the page's word says of its bytes, kept for a copy that finds
        // the page mapped after all (EEXIST): it then holds the same bytes
        // as before this fill, dirty ones included.
        let mut before = None;
        loop {
            match st.books.begin_fill(p) {
                Fill::Start => break,
                Fill::Busy => return Ok(()),
                Fill::Resident if self.present(p) => {
                    // A second message for a fault already served (the
                    // toucher was interrupted by a signal and touched
                    // again): wake it.
                    return self.wake(p);
                }
                Fill::Resident => {
                    // Dropped although the books say resident (which they
                    // should never): forget it and fill it again.
                    before = Some(self.words.flags(p));
                    st.books.forget(p);
                    self.words.clear(p);
                }
            }
        }
        let before = before.unwrap_or_else(|| self.words.flags(p));
        while st.books.over_budget() {
            match self.evict_batch(&mut st) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    // Kept resident: over budget until a write-back works.
                    self.note_io_error(&e);
                    break;
                }
            }
        }
        drop(st);
        let read = self.read_page(p, bounce);
        let mut st = self.lock();
        let protect = match &read {
            Ok(()) if self.wp && write_fault => {
                self.words.set_dirty(p);
                false
            }
            Ok(()) => self.wp,
            Err(e) => {
                self.words.poison(p, errno_of(e));
                self.wp
            }
        };
        match self.copy_in(p, bounce.as_ptr(), protect) {
            Ok(Copied::Installed) => st.books.installed(p),
            Ok(Copied::Exists) => {
                // Mapped after all (a residency test that was wrong): not
                // this read's bytes, nor its flags; the page's own stay.
                self.words.set_flags(p, before);
                st.books.installed(p);
            }
            Ok(Copied::Gone) => {
                // Not mapped: the books must not say it is. Its touchers
                // fault again, if any is left.
                st.books.abort_fill(p);
                self.words.clear(p);
                return self.wake(p);
            }
            Err(e) => {
                st.books.abort_fill(p);
                self.words.clear(p);
                return Err(e);
            }
        }
        self.set_resident(&st.books);
        self.faults.fetch_add(1, Ordering::Relaxed);
        // Only now the touchers may go on (and read the page's word).
        self.wake(p)
    }

    /// Serve a write-protect fault on page `p`: it is dirty from now on.
    pub(super) fn unprotect(&self, st: &mut Pager, p: usize) -> io::Result<()> {
        if st.books.is_resident(p) {
            self.words.set_dirty(p);
        }
        self.wp_faults.fetch_add(1, Ordering::Relaxed);
        self.protect(p, 1, false)
    }

    /// Evict the oldest resident pages nobody copies now: one, or a batch of
    /// up to 1/16 of the budget (at most [`WRITEBACK_PAGES`]) so that
    /// neighbours leave together, with one `pwrite` for each run of dirty
    /// neighbours and one `madvise` for each run of neighbours. `false`
    /// when no page could be taken.
    fn evict_batch(&self, st: &mut Pager) -> io::Result<bool> {
        let want = (st.books.budget() / 16).clamp(1, WRITEBACK_PAGES);
        let victims = st.books.victims(want, |p| self.words.try_claim(p));
        if victims.is_empty() {
            return Ok(false);
        }
        let Pager { books, buf } = st;
        let done = evict(
            books,
            &self.words,
            &victims,
            |first, count| self.write_run(buf, first, count, false),
            |first, count| self.discard(first, count),
            |p| self.present(p),
        );
        self.set_resident(books);
        let n = done?;
        self.evictions.fetch_add(n as u64, Ordering::Relaxed);
        Ok(true)
    }

    /// Write resident pages `[first, first + count)` (at most
    /// [`WRITEBACK_PAGES`]) to the file, from a copy in `buf`; `reprotect`
    /// protects them first (`uffd-wp`), so a store after the copy faults
    /// again.
    fn write_run(
        &self,
        buf: &mut AlignedBuf,
        first: usize,
        count: usize,
        reprotect: bool,
    ) -> io::Result<()> {
        #[cfg(test)]
        if hooks::FAIL_WRITE_BACK.with(|f| f.get()) {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        let page = self.page;
        let len = count * page;
        if reprotect {
            self.protect(first, count, true)?;
        }
        let buf = &mut buf.as_mut_slice()[..len];
        // SAFETY: the pages are inside our region and mapped (the books say
        // resident, and they are true: only the pager lock's holder drops
        // pages), so reading them cannot fault. No store reaches them during
        // the copy: the pager claimed them (no request copies a claimed
        // page), or they are write-protected (a store stops in a fault that
        // waits for the pager lock, which the caller holds). buf is the
        // pager's own bounce buffer, distinct from the region.
        unsafe {
            std::ptr::copy_nonoverlapping(self.addr(first) as *const u8, buf.as_mut_ptr(), len)
        };
        let off = (first * page) as u64;
        let n = self.file_len.saturating_sub(off).min(len as u64) as usize;
        let whole = n / page * page;
        let flags = match self.sync_rank.load(Ordering::Acquire) {
            0 => ReadWriteFlags::empty(),
            1 => ReadWriteFlags::DSYNC,
            _ => ReadWriteFlags::SYNC,
        };
        if whole > 0 {
            write_all_at(&self.file, &buf[..whole], off, flags)?;
        }
        if whole < n {
            let tail = self
                .tail
                .as_ref()
                .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))?;
            write_all_at(tail, &buf[whole..n], off + whole as u64, flags)?;
        }
        self.writebacks.fetch_add(count as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Write back the dirty pages of `[lo, hi)`, neighbours together; they
    /// stay resident and clean. Each write completed before the call is in
    /// the file when it returns.
    ///
    /// `uffd-wp` protects the pages before copying them (a store then waits
    /// in a fault). `uffd` claims them: a page a request copies now is left
    /// for another pass, with the lock released between passes so that the
    /// request's faults are served (the writer sleeps until those pages are
    /// unpinned, rather than spinning). After a handler ended on its own
    /// (`broken`: the region is unregistered, so write protection is gone
    /// with it), `uffd-wp` claims them too: resident pages are still
    /// mapped, and a request that meets `broken` copies nothing.
    pub(super) fn write_back(&self, lo: usize, hi: usize) -> io::Result<()> {
        let mut st = self.lock();
        if self.wp && self.broken.load(Ordering::Acquire) == 0 {
            let Pager { books, buf } = &mut *st;
            let wanted = |p: usize| books.is_resident(p) && self.words.dirty(p);
            let mut p = lo;
            while p < hi {
                if !wanted(p) {
                    p += 1;
                    continue;
                }
                let mut q = p + 1;
                while q < hi && q - p < WRITEBACK_PAGES && wanted(q) {
                    q += 1;
                }
                self.write_run(buf, p, q - p, true)?;
                (p..q).for_each(|p| self.words.clean(p));
                p = q;
            }
            return Ok(());
        }
        let mut busy: Option<Vec<usize>> = None;
        loop {
            let Pager { books, buf } = &mut *st;
            let mut claimed = Vec::new();
            let mut again = Vec::new();
            let mut look = |p: usize| {
                if !(books.is_resident(p) && self.words.dirty(p)) {
                    return;
                }
                if !self.words.try_claim(p) {
                    again.push(p);
                } else if self.words.dirty(p) {
                    claimed.push(p);
                } else {
                    self.words.release(p);
                }
            };
            match &busy {
                None => (lo..hi).for_each(&mut look),
                Some(pages) => pages.iter().copied().for_each(&mut look),
            }
            let mut done = Ok(());
            for (first, count) in runs(&claimed, |_| true) {
                done = self.write_run(buf, first, count, false);
                if done.is_err() {
                    break;
                }
                (first..first + count).for_each(|p| self.words.clean(p));
            }
            claimed.iter().for_each(|&p| self.words.release(p));
            done?;
            if again.is_empty() {
                return Ok(());
            }
            // The pinners may need a fault served (the pager's lock): wait
            // for their copies unlocked, sleeping rather than spinning.
            drop(st);
            again.iter().for_each(|&p| self.words.wait_unpinned(p));
            busy = Some(again);
            st = self.lock();
        }
    }

    /// Drop the pages whose read failed and that nobody copies now (after
    /// a request met one).
    pub(super) fn drop_poisoned(&self) {
        let mut st = self.lock();
        for p in 0..self.pages {
            if st.books.is_resident(p) && self.words.poisoned(p) && self.words.try_claim(p) {
                if self.discard(p, 1).is_ok() || !self.present(p) {
                    st.books.forget(p);
                    self.words.clear(p);
                } else {
                    self.words.release(p);
                }
            }
        }
        self.set_resident(&st.books);
    }
}

/// What `UFFDIO_COPY` did with a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copied {
    /// Copied in: the page holds the bytes given.
    Installed,
    /// It was mapped already (EEXIST): it holds what it held.
    Exists,
    /// Nothing mapped (the toucher's address space is gone).
    Gone,
}

/// `/proc/self/pagemap`: the page is in memory.
const PM_PRESENT: u64 = 1 << 63;
/// `/proc/self/pagemap`: the page is swapped out.
const PM_SWAP: u64 = 1 << 62;

/// The `/proc/self/pagemap` entry of the page at `addr`, or `None` where
/// the file cannot be read.
fn pagemap_entry(addr: usize, page: usize) -> Option<u64> {
    static PAGEMAP: std::sync::OnceLock<Option<File>> = std::sync::OnceLock::new();
    let f = PAGEMAP
        .get_or_init(|| File::open("/proc/self/pagemap").ok())
        .as_ref()?;
    let mut e = [0u8; 8];
    f.read_exact_at(&mut e, (addr / page * 8) as u64).ok()?;
    Some(u64::from_ne_bytes(e))
}

/// Write all of `buf` at `offset` (`pwritev2` with `flags` when any).
fn write_all_at(file: &File, buf: &[u8], offset: u64, flags: ReadWriteFlags) -> io::Result<()> {
    if flags.is_empty() {
        return file.write_all_at(buf, offset);
    }
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        match rustix::io::pwritev2(
            file.as_fd(),
            &[IoSlice::new(rest)],
            offset + done as u64,
            flags,
        ) {
            Ok(0) => return Err(io::Error::from_raw_os_error(libc::EIO)),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Fault hooks for the unit tests, per thread.
#[cfg(test)]
pub(super) mod hooks {
    use std::cell::Cell;

    thread_local! {
        /// `present` of this page says it is gone, once.
        pub(in super::super) static ABSENT_ONCE: Cell<Option<usize>> = const { Cell::new(None) };
        /// Every write-back of this thread fails with EIO.
        pub(in super::super) static FAIL_WRITE_BACK: Cell<bool> = const { Cell::new(false) };
    }
}

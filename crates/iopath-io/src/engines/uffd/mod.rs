//! `uffd` and `uffd-wp`: a user-space page cache built on userfaultfd(2).
//!
//! A file's engines share one *region*: an anonymous private mapping as long
//! as the span (cut at end of file, as `mmap` cuts it), `MAP_NORESERVE`,
//! registered with a userfaultfd. The application side is plain loads and
//! stores: a read request is a `memcpy` from the region into the slot
//! buffer, a write request a `memcpy` the other way, as with `mmap`. What
//! differs is who fills the pages: fault-handling threads of the region's
//! own.
//!
//! # One region per file
//! Every engine of one file, method, budget and length (the workers of a
//! case) uses the same region, found in a registry of live regions keyed by
//! the file (its device and inode; a block device by its device number, so
//! that two nodes of one disk are one file) and that geometry, which holds
//! `Weak` references: the first engine makes it, the others join it, and
//! the last one to drop writes its dirty pages back, stops and joins its
//! handlers and unmaps it, then removes its entry (as `ucache` shares its
//! cache). An engine that opens while a region of the same file is being
//! dropped (its entry there, its last `Arc` gone, also when that happens
//! between looking and upgrading) waits until that drop has removed the
//! entry, so that its pages are written first. A region opens its file
//! again (read-write for a reader's region, without `O_DIRECT` for the page
//! at end of file) through `/proc/self/fd`, so it is the inode it is keyed
//! by even if the path names another file by then; without `/proc` it
//! opens the path and refuses a file that is not that inode. So there is
//! one copy of each page in the process, and every
//! completed write is in it: a page written by two engines is written back
//! once, with both writes, and a page one engine only read is never written
//! back over another's flushed write. (Engines of the same file with another
//! method, budget or span get a region of their own, and are not coherent
//! with it: do not write one file through two of them at once.)
//!
//! - **Missing pages.** Touching a page that is not mapped stops the toucher
//!   in the kernel and queues a `UFFD_EVENT_PAGEFAULT` message. A handler
//!   thread (`poll` + `read` on the userfaultfd) reads that page of the file
//!   with an `O_DIRECT` `pread` into its own aligned bounce page and installs
//!   it with `UFFDIO_COPY` (`UFFDIO_COPY_MODE_DONTWAKE`, then `UFFDIO_WAKE`
//!   once the books are done, so that a woken toucher never sees them
//!   half-done). There is no read-ahead and no fault-around: one fault, one
//!   page, one read. A region has one handler per engine attached at once;
//!   each takes one message at a time and reads the file without holding
//!   the pager's lock, so the faults of different engines are served side by
//!   side. A page being filled is marked so; a second fault on it waits for
//!   that fill's wake-up.
//! - **A bounded resident set.** At most `resident pages` pages (64 MiB
//!   worth by default, [`configure`]) of the region are resident or being
//!   filled. Before a fault would exceed that, the oldest resident pages are
//!   evicted (FIFO): written back first if dirty (`O_DIRECT` `pwrite` from a
//!   copy), then dropped with `madvise(MADV_DONTNEED)`, so their next touch
//!   faults again.
//! - **Pins and claims.** A request *pins* each page while it copies to or
//!   from it (an atomic count per page). Eviction and `uffd`'s write-back
//!   *claim* a page before copying it out, and only a page nobody pins
//!   (pinned ones stay, the budget is exceeded for a while); a request that
//!   finds a page claimed waits until the pager is done with it. So no page
//!   is dropped under a copy, and no write lands in a page after its bytes
//!   were taken for a write-back that then marks it clean.
//! - **Dirty pages.** `uffd` cannot see stores, but the engine does the
//!   copy: a write request marks each page it copied into dirty (before
//!   unpinning it). Pages only read are never written back. `uffd-wp`
//!   registers the region for write-protect faults too
//!   (`UFFD_FEATURE_PAGEFAULT_FLAG_WP`, `UFFDIO_REGISTER_MODE_WP`): pages
//!   filled by a read fault are installed write-protected
//!   (`UFFDIO_COPY_MODE_WP`); the first store to one raises a write-protect
//!   fault, on which the handler marks the page dirty and lifts the
//!   protection (`UFFDIO_WRITEPROTECT`, mode 0), and a store to a missing
//!   page installs it writable and dirty at once. In both, a write-back
//!   leaves the page resident and clean: `uffd-wp` protects it again before
//!   copying it (a store then waits in a fault until the copy is written),
//!   `uffd` claims it.
//! - **The books stay true.** A page is marked resident exactly while it
//!   is mapped: an eviction forgets each run of pages as soon as its
//!   `madvise` returns, and one that fails forgets the pages shown gone and
//!   keeps the rest (written ones clean). Copying out a page the books call
//!   resident must never fault: the copier may be the handler itself, or
//!   hold the lock the handler needs. Whether a page is there is read from
//!   `/proc/self/pagemap` (in memory or swapped out: either way a touch
//!   reaches it without a userfault), else from `mincore`, which calls a
//!   swapped-out page gone; and a fill that finds the page mapped after all
//!   (`UFFDIO_COPY` says EEXIST) leaves it and its flags, dirty ones
//!   included, as they were.
//!
//! Write-backs of neighbouring dirty pages are joined into one `pwrite` of up
//! to [`WRITEBACK_PAGES`] pages. The page that holds end of file, when the file
//! does not end on a page boundary, is written back up to end of file only,
//! through a second descriptor without `O_DIRECT` (an `O_DIRECT` write must
//! cover whole blocks and would grow the file).
//!
//! Sync policies. `end` writes back every dirty page of the region (other
//! engines' too), then `fsync`s. `dsync` and `osync` write back the pages a
//! write request dirtied right after it, and every write-back of the region
//! (evictions included) uses `pwritev2(RWF_DSYNC)` / `pwritev2(RWF_SYNC)`
//! from then on (the file is shared, so the policy goes with each write, the
//! strongest an engine asked); `each` writes back like `dsync` without the
//! flag, then `fsync`s. `none` writes back only on eviction and when the
//! region's last engine drops (without `fsync`, so no store is lost). An
//! engine opened read-only refuses writes with EBADF, as `mmap` does; the
//! region's file is opened read-write where allowed, so that a writer can
//! join a region a reader made.
//!
//! The userfaultfd comes from the userfaultfd(2) system call with
//! `UFFD_USER_MODE_ONLY` (Linux 5.11+; without it on older kernels), or, when
//! the system call is refused (`vm.unprivileged_userfaultfd=0` for a
//! process without `CAP_SYS_PTRACE`, or a seccomp filter), from
//! `/dev/userfaultfd` (`USERFAULTFD_IOC_NEW`, Linux 6.1+). When neither works,
//! when `uffd-wp` finds no write-protect support for anonymous memory, or when
//! the file system refuses `O_DIRECT`, `open` returns
//! [`EngineError::Unsupported`](crate::EngineError::Unsupported) with the
//! reason, which the probe reports.
//!
//! Opening makes the engine's slot buffer first (placing it, `mbind`, may be
//! refused), and starting a handler is the last thing that can fail; a
//! region that an error leaves without engines is dropped like any other
//! (handlers stopped and joined, descriptors closed, region unmapped), so a
//! failed open leaves nothing behind. The handlers are stopped through an
//! eventfd. If one ever ends on its own (an ioctl failing in a way it cannot
//! handle), it unregisters the region first, so that a store or load never
//! waits for a handler that is gone; every later request then fails with the
//! error it met. The pages the books call resident stay mapped, so a flush
//! and the last drop still write back the writes completed before (claiming
//! the pages, as `uffd` does; write protection went with the
//! registration). A write-back that fails at the last drop, where no
//! request or flush is left to fail, is kept for [`take_drop_errors`] (the
//! caller says it). A `pread` that fails inside a handler installs the page
//! zero-filled and *poisoned*: every request that copies it fails with that
//! errno, it is never written back, and it is dropped after the request. A
//! `pwrite` that fails during an eviction keeps its pages resident and
//! dirty, and fails the next request of any engine of the region.
//!
//! The region is advised `MADV_NOHUGEPAGE` (pages are 4 KiB units of I/O) and
//! `MADV_DONTFORK` (a child process never inherits it).
//!
//! # Layout
//! - `abi`: the kernel's userfaultfd ABI (`<linux/userfaultfd.h>`) and the
//!   ioctl wrapper.
//! - `fd`: getting a userfaultfd (system call or `/dev/userfaultfd`), the
//!   `UFFDIO_API` handshake, and why it is unavailable when it is.
//! - `books`: the pager's bookkeeping with no system call in it: resident
//!   and filling pages and their FIFO, the per-page words (pins, claim,
//!   dirty, poisoned), runs of neighbours, eviction with its I/O passed in.
//! - `pager`: the region and what is done to its pages (fill, evict, write
//!   back, drop poisoned pages), `Shared` by its engines
//!   and handlers.
//! - `handler`: the fault-handling threads.
//! - `registry`: one region per file, its handlers, its last drop.
//! - `engine`: [`UffdEngine`], the [`crate::Engine`] the runner drives:
//!   opening, requests as `memcpy`s with each page pinned, flush and drop.

use std::sync::atomic::{AtomicU64, Ordering};

mod abi;
mod books;
mod engine;
mod fd;
mod handler;
mod pager;
mod registry;

pub use engine::UffdEngine;
pub use registry::take_drop_errors;

/// Resident-set budget of a region when [`configure`] was never called.
pub const DEFAULT_RESIDENT_BYTES: u64 = 64 << 20;

/// Most pages one write-back `pwrite` carries.
pub const WRITEBACK_PAGES: usize = 64;

static RESIDENT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_RESIDENT_BYTES);

/// Set the resident-set budget (bytes, per region: shared by the engines of
/// one file) of `uffd` and `uffd-wp` engines opened from now on by
/// [`crate::open`]; rounded down to whole pages, at least one. `OpenSpec`
/// does not carry it, so the runner sets it before opening engines.
pub fn configure(resident_bytes: u64) {
    RESIDENT_BYTES.store(resident_bytes.max(1), Ordering::Relaxed);
}

/// The budget [`configure`] set (or [`DEFAULT_RESIDENT_BYTES`]).
pub fn configured_resident_bytes() -> u64 {
    RESIDENT_BYTES.load(Ordering::Relaxed)
}

/// What the fault handlers of a region (all its engines) have done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UffdStats {
    /// Missing-page faults served (each one `pread` and one `UFFDIO_COPY`).
    pub faults: u64,
    /// Write-protect faults served (`uffd-wp`: first store to a clean page).
    pub wp_faults: u64,
    /// Pages evicted to stay within the budget.
    pub evictions: u64,
    /// Pages written back to the file (on eviction, flush, sync or drop).
    pub writebacks: u64,
    /// Pages resident now.
    pub resident_pages: u64,
    /// The most pages resident at once.
    pub max_resident_pages: u64,
}

#[cfg(test)]
mod tests;

//! `uffd` and `uffd-wp`: a user-space page cache built on userfaultfd(2).
//!
//! The engine maps an anonymous private region as long as the span (cut at
//! end of file, as `mmap` cuts it), `MAP_NORESERVE`, and registers it with a
//! userfaultfd. The application side is plain loads and stores: a read
//! request is a `memcpy` from the region into the slot buffer, a write
//! request a `memcpy` the other way, as with `mmap`. What differs is who
//! fills the pages: a fault-handling thread of the engine's own.
//!
//! - **Missing pages.** Touching a page that is not resident stops the
//!   toucher in the kernel and queues a `UFFD_EVENT_PAGEFAULT` message. The
//!   handler thread (`poll` + `read` on the userfaultfd) reads that page of
//!   the file with an `O_DIRECT` `pread` into an aligned bounce buffer and
//!   installs it with `UFFDIO_COPY`, which wakes the toucher. There is no
//!   read-ahead and no fault-around: one fault, one page, one read.
//! - **A bounded resident set.** At most `resident pages` pages (64 MiB
//!   worth by default, [`configure`]) are resident per engine. Before a fault
//!   would exceed that, the oldest resident page is evicted (FIFO): written
//!   back first if dirty (`O_DIRECT` `pwrite` from a copy), then dropped with
//!   `madvise(MADV_DONTNEED)`, so its next touch faults again.
//! - **Dirty pages.** `uffd` cannot see stores, so in an engine opened for
//!   writing every resident page counts as dirty: every evicted page is
//!   written back, and a write-back (flush, or after each write under
//!   `dsync`/`osync`/`each`) drops the pages it wrote, since only a page
//!   that is not resident is known to be clean. `uffd-wp` registers the
//!   region for write-protect faults too (`UFFD_FEATURE_PAGEFAULT_FLAG_WP`,
//!   `UFFDIO_REGISTER_MODE_WP`): pages filled by a read fault are installed
//!   write-protected (`UFFDIO_COPY_MODE_WP`); the first store to one raises a
//!   write-protect fault, on which the handler marks the page dirty and lifts
//!   the protection (`UFFDIO_WRITEPROTECT`, mode 0), and a store to a missing
//!   page installs it writable and dirty at once. Only dirty pages are
//!   written back, and they are protected again first, so they stay resident
//!   and clean.
//!
//! Write-backs of neighbouring dirty pages are joined into one `pwrite` of up
//! to [`WRITEBACK_PAGES`] pages. The page that holds end of file, when the file
//! does not end on a page boundary, is written back up to end of file only,
//! through a second descriptor without `O_DIRECT` (an `O_DIRECT` write must
//! cover whole blocks and would grow the file).
//!
//! Sync policies. `end` writes back every dirty page, then `fsync`s. `dsync`
//! and `osync` open the file `O_DSYNC`/`O_SYNC` and write back the pages a
//! write request dirtied right after it; `each` does the same and `fsync`s.
//! `none` writes back only on eviction and when the engine is dropped (an
//! engine opened for writing writes back every dirty page on drop, without
//! `fsync`, so no store is lost). A read-only engine refuses writes with
//! EBADF, as `mmap` does, and never writes back.
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
//! The handler thread is stopped through an eventfd and joined when the
//! engine is dropped. If it ever ends on its own (an ioctl failing in a way
//! it cannot handle), it unregisters the region first, so that a store or load
//! never waits for a handler that is gone; every later request then fails
//! with the error it met. A `pread` or `pwrite` that fails inside the handler
//! fails the request that caused it with that errno (the page is installed
//! zero-filled, so the toucher can go on, and dropped after the request).
//!
//! The region is advised `MADV_NOHUGEPAGE` (pages are 4 KiB units of I/O) and
//! `MADV_DONTFORK` (a child process never inherits it).
//!
//! # Layout
//! - `abi`: the kernel's userfaultfd ABI (`<linux/userfaultfd.h>`) and the
//!   ioctl wrapper.
//! - `fd`: getting a userfaultfd (system call or `/dev/userfaultfd`), the
//!   `UFFDIO_API` handshake, and why it is unavailable when it is.
//! - `pager`: the region, the page bookkeeping and the fault-handling
//!   thread (fill, evict, write back).
//! - `engine`: [`UffdEngine`], the [`crate::Engine`] the runner drives:
//!   opening (registering the region, starting the handler), requests as
//!   `memcpy`s, flush and drop.

use std::sync::atomic::{AtomicU64, Ordering};

mod abi;
mod engine;
mod fd;
mod pager;

pub use engine::UffdEngine;

/// Resident-set budget of an engine when [`configure`] was never called.
pub const DEFAULT_RESIDENT_BYTES: u64 = 64 << 20;

/// Most pages one write-back `pwrite` carries.
pub const WRITEBACK_PAGES: usize = 64;

static RESIDENT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_RESIDENT_BYTES);

/// Set the resident-set budget (bytes, per engine) of `uffd` and `uffd-wp`
/// engines opened from now on by [`crate::open`]; rounded down to whole pages,
/// at least one. `OpenSpec` does not carry it, so the runner sets it before
/// opening engines.
pub fn configure(resident_bytes: u64) {
    RESIDENT_BYTES.store(resident_bytes.max(1), Ordering::Relaxed);
}

/// The budget [`configure`] set (or [`DEFAULT_RESIDENT_BYTES`]).
pub fn configured_resident_bytes() -> u64 {
    RESIDENT_BYTES.load(Ordering::Relaxed)
}

/// What an engine's fault handler has done so far.
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

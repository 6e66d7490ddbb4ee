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
//! [`EngineError::Unsupported`] with the reason, which the probe reports.
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

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::buf::{AlignedBuf, SlotPool};
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

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

/// The kernel's userfaultfd ABI (`<linux/userfaultfd.h>`).
mod abi {
    /// `UFFDIO`, the ioctl type, and `UFFD_API`, the API version.
    pub(super) const UFFDIO: u32 = 0xAA;
    pub(super) const UFFD_API: u64 = 0xAA;
    pub(super) const UFFD_USER_MODE_ONLY: libc::c_int = 1;
    pub(super) const UFFD_FEATURE_PAGEFAULT_FLAG_WP: u64 = 1 << 0;
    pub(super) const UFFD_EVENT_PAGEFAULT: u8 = 0x12;
    pub(super) const UFFD_PAGEFAULT_FLAG_WRITE: u64 = 1 << 0;
    pub(super) const UFFD_PAGEFAULT_FLAG_WP: u64 = 1 << 1;
    pub(super) const UFFDIO_REGISTER_MODE_MISSING: u64 = 1 << 0;
    pub(super) const UFFDIO_REGISTER_MODE_WP: u64 = 1 << 1;
    pub(super) const UFFDIO_COPY_MODE_WP: u64 = 1 << 1;
    pub(super) const UFFDIO_WRITEPROTECT_MODE_WP: u64 = 1 << 0;
    /// Bit numbers of `uffdio_register.ioctls`.
    pub(super) const NR_COPY: u32 = 0x03;
    pub(super) const NR_WRITEPROTECT: u32 = 0x06;
    /// Size of one `struct uffd_msg`.
    pub(super) const MSG_SIZE: usize = 32;

    #[repr(C)]
    #[derive(Debug, Default)]
    pub(super) struct UffdioApi {
        pub(super) api: u64,
        pub(super) features: u64,
        pub(super) ioctls: u64,
    }

    #[repr(C)]
    #[derive(Debug, Default, Clone, Copy)]
    pub(super) struct UffdioRange {
        pub(super) start: u64,
        pub(super) len: u64,
    }

    #[repr(C)]
    #[derive(Debug, Default)]
    pub(super) struct UffdioRegister {
        pub(super) range: UffdioRange,
        pub(super) mode: u64,
        pub(super) ioctls: u64,
    }

    #[repr(C)]
    #[derive(Debug, Default)]
    pub(super) struct UffdioCopy {
        pub(super) dst: u64,
        pub(super) src: u64,
        pub(super) len: u64,
        pub(super) mode: u64,
        pub(super) copy: i64,
    }

    #[repr(C)]
    #[derive(Debug, Default)]
    pub(super) struct UffdioWriteprotect {
        pub(super) range: UffdioRange,
        pub(super) mode: u64,
    }

    pub(super) const UFFDIO_API: libc::Ioctl = libc::_IOWR::<UffdioApi>(UFFDIO, 0x3F);
    pub(super) const UFFDIO_REGISTER: libc::Ioctl = libc::_IOWR::<UffdioRegister>(UFFDIO, 0x00);
    pub(super) const UFFDIO_UNREGISTER: libc::Ioctl = libc::_IOR::<UffdioRange>(UFFDIO, 0x01);
    pub(super) const UFFDIO_WAKE: libc::Ioctl = libc::_IOR::<UffdioRange>(UFFDIO, 0x02);
    pub(super) const UFFDIO_COPY: libc::Ioctl = libc::_IOWR::<UffdioCopy>(UFFDIO, NR_COPY);
    pub(super) const UFFDIO_WRITEPROTECT: libc::Ioctl =
        libc::_IOWR::<UffdioWriteprotect>(UFFDIO, NR_WRITEPROTECT);
    /// `/dev/userfaultfd`: a new userfaultfd, flags as the argument.
    pub(super) const USERFAULTFD_IOC_NEW: libc::Ioctl = libc::_IO(UFFDIO, 0x00);
}

/// `ioctl(fd, req, arg)` with a pointer argument.
///
/// # Safety
/// `req` must be an ioctl that reads and writes at most one `T` at `arg`,
/// and any other memory it touches (the destination of `UFFDIO_COPY`) must
/// be memory the caller owns and no Rust reference points into.
unsafe fn ioctl<T>(fd: RawFd, req: libc::Ioctl, arg: &mut T) -> io::Result<()> {
    // SAFETY: arg is a valid, exclusive T for the call; the rest is the
    // caller's contract.
    let rc = unsafe { libc::ioctl(fd, req, arg as *mut T) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Where the userfaultfd came from, for the notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// userfaultfd(2); `true` with `UFFD_USER_MODE_ONLY`.
    Syscall(bool),
    /// `/dev/userfaultfd`.
    Device(bool),
}

impl Source {
    fn describe(self) -> &'static str {
        match self {
            Source::Syscall(true) => "userfaultfd(2), user-mode faults only",
            Source::Syscall(false) => "userfaultfd(2)",
            Source::Device(true) => "/dev/userfaultfd, user-mode faults only",
            Source::Device(false) => "/dev/userfaultfd",
        }
    }
}

const UFFD_FLAGS: libc::c_int = libc::O_CLOEXEC | libc::O_NONBLOCK;

/// A userfaultfd from the system call, with `UFFD_USER_MODE_ONLY` first and
/// without it when the kernel predates it (EINVAL).
fn uffd_from_syscall() -> io::Result<(OwnedFd, Source)> {
    let mut last = io::Error::from_raw_os_error(libc::ENOSYS);
    for user_only in [true, false] {
        let flags = UFFD_FLAGS
            | if user_only {
                abi::UFFD_USER_MODE_ONLY
            } else {
                0
            };
        // SAFETY: userfaultfd(2) takes one int of flags and returns a new
        // descriptor or -1; it touches no memory of ours.
        let fd = unsafe { libc::syscall(libc::SYS_userfaultfd, flags) };
        if fd >= 0 {
            // SAFETY: fd is a fresh descriptor that nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
            return Ok((fd, Source::Syscall(user_only)));
        }
        last = io::Error::last_os_error();
        if last.raw_os_error() != Some(libc::EINVAL) {
            break;
        }
    }
    Err(last)
}

/// A userfaultfd from `/dev/userfaultfd` (`USERFAULTFD_IOC_NEW`).
fn uffd_from_device() -> io::Result<(OwnedFd, Source)> {
    // Opening it read-write is how the kernel hands userfaultfds out; nothing
    // is ever written to it.
    let dev = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open("/dev/userfaultfd")?;
    let mut last = io::Error::from_raw_os_error(libc::EINVAL);
    for user_only in [true, false] {
        let flags = UFFD_FLAGS
            | if user_only {
                abi::UFFD_USER_MODE_ONLY
            } else {
                0
            };
        // SAFETY: USERFAULTFD_IOC_NEW takes its flags by value, not a
        // pointer, and returns a new descriptor or -1.
        let fd = unsafe {
            libc::ioctl(
                dev.as_raw_fd(),
                abi::USERFAULTFD_IOC_NEW,
                flags as libc::c_ulong,
            )
        };
        if fd >= 0 {
            // SAFETY: fd is a fresh descriptor that nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            return Ok((fd, Source::Device(user_only)));
        }
        last = io::Error::last_os_error();
        if last.raw_os_error() != Some(libc::EINVAL) {
            break;
        }
    }
    Err(last)
}

/// A userfaultfd, or why this process cannot have one.
fn new_uffd(method: Method) -> Result<(OwnedFd, Source), EngineError> {
    let sys = match uffd_from_syscall() {
        Ok(u) => return Ok(u),
        Err(e) => e,
    };
    let dev = match uffd_from_device() {
        Ok(u) => return Ok(u),
        Err(e) => e,
    };
    Err(EngineError::Unsupported {
        method,
        reason: unavailable_reason(&sys, &dev, unprivileged_sysctl()),
    })
}

/// `vm.unprivileged_userfaultfd`, when the sysctl exists.
fn unprivileged_sysctl() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/vm/unprivileged_userfaultfd")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Why neither the system call (`sys`) nor `/dev/userfaultfd` (`dev`) gave a
/// userfaultfd, and what to do.
fn unavailable_reason(sys: &io::Error, dev: &io::Error, sysctl: Option<u32>) -> String {
    let sys_part = match sys.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no userfaultfd(2) (ENOSYS: built without CONFIG_USERFAULTFD, or a seccomp filter hides it)".to_string(),
        Some(libc::EPERM) => {
            let knob = match sysctl {
                Some(v) => format!("vm.unprivileged_userfaultfd is {v}"),
                None => "vm.unprivileged_userfaultfd is unknown".to_string(),
            };
            format!("userfaultfd(2) refused (EPERM): {knob} and this process lacks CAP_SYS_PTRACE, or a seccomp filter (a container's default profile) blocks it")
        }
        _ => format!("userfaultfd(2) failed: {sys}"),
    };
    let dev_part = match dev.raw_os_error() {
        Some(libc::ENOENT) => "there is no /dev/userfaultfd (Linux 6.1+)".to_string(),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "/dev/userfaultfd is not accessible to this user".to_string()
        }
        _ => format!("/dev/userfaultfd: {dev}"),
    };
    let fix = if sys.raw_os_error() == Some(libc::ENOSYS)
        && dev.raw_os_error() == Some(libc::ENOENT)
    {
        "use a kernel with CONFIG_USERFAULTFD"
    } else {
        "allow it with sysctl vm.unprivileged_userfaultfd=1, give this user read-write access to /dev/userfaultfd, or run as root (outside a seccomp profile that blocks userfaultfd)"
    };
    format!("{sys_part}; {dev_part}; {fix}")
}

/// The `UFFDIO_API` handshake, asking for write-protect faults when `wp`.
fn handshake(method: Method, uffd: RawFd, path: &Path, wp: bool) -> Result<(), EngineError> {
    let mut api = abi::UffdioApi {
        api: abi::UFFD_API,
        features: if wp {
            abi::UFFD_FEATURE_PAGEFAULT_FLAG_WP
        } else {
            0
        },
        ioctls: 0,
    };
    // SAFETY: UFFDIO_API reads and writes one uffdio_api and touches nothing
    // else.
    match unsafe { ioctl(uffd, abi::UFFDIO_API, &mut api) } {
        Ok(()) => Ok(()),
        Err(e) if wp && e.raw_os_error() == Some(libc::EINVAL) => Err(no_wp(
            method,
            "UFFDIO_API refused UFFD_FEATURE_PAGEFAULT_FLAG_WP (EINVAL)",
        )),
        Err(e) => Err(EngineError::os("ioctl UFFDIO_API", path, e)),
    }
}

fn no_wp(method: Method, what: &str) -> EngineError {
    EngineError::Unsupported {
        method,
        reason: format!(
            "this kernel's userfaultfd cannot write-protect anonymous memory: {what}; it needs Linux 5.7+ on x86_64 (later elsewhere) with CONFIG_HAVE_ARCH_USERFAULTFD_WP; use uffd"
        ),
    }
}

/// An anonymous private mapping, unmapped on drop.
#[derive(Debug)]
struct Region {
    base: usize,
    /// Bytes mapped: whole pages.
    len: usize,
}

impl Region {
    fn new(len: usize) -> io::Result<Region> {
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
struct Pager {
    /// The file, `O_DIRECT` (and `O_DSYNC`/`O_SYNC` as the policy asks).
    file: File,
    /// The same file without `O_DIRECT`, for the page that holds end of file
    /// when it is not on a page boundary (engines open for writing only).
    tail: Option<File>,
    file_len: u64,
    budget: usize,
    /// Per page: RESIDENT | DIRTY | POISONED.
    state: Vec<u8>,
    /// Per page: how many times it was filled, to tell stale FIFO entries.
    generation: Vec<u32>,
    /// Resident pages, oldest first: (page, generation when filled).
    fifo: VecDeque<(u32, u32)>,
    resident: usize,
    /// Bounce buffer: [`WRITEBACK_PAGES`] pages, page-aligned.
    buf: AlignedBuf,
}

/// What the engine and its handler thread share.
#[derive(Debug)]
struct Shared {
    uffd: OwnedFd,
    /// eventfd that wakes the handler to stop.
    stop_fd: OwnedFd,
    stop: AtomicBool,
    region: Region,
    page: usize,
    pages: usize,
    wp: bool,
    write: bool,
    path: PathBuf,
    /// errno of a pread/pwrite that failed inside the handler since the
    /// engine last looked; 0 when none.
    io_error: AtomicI32,
    /// errno with which the handler thread ended on its own; 0 while it runs.
    broken: AtomicI32,
    faults: AtomicU64,
    wp_faults: AtomicU64,
    evictions: AtomicU64,
    writebacks: AtomicU64,
    resident: AtomicU64,
    max_resident: AtomicU64,
    pager: Mutex<Pager>,
}

fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pager> {
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
    fn copy_in(&self, p: usize, src: *const u8, protect: bool) -> io::Result<()> {
        for _ in 0..1000 {
            let mut c = abi::UffdioCopy {
                dst: self.addr(p) as u64,
                src: src as u64,
                len: self.page as u64,
                mode: if protect { abi::UFFDIO_COPY_MODE_WP } else { 0 },
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
    fn present(&self, p: usize) -> bool {
        let mut v = 0u8;
        // SAFETY: one page of our region, page-aligned; mincore writes one
        // byte per page into v and changes no memory of the region.
        let rc = unsafe { libc::mincore(self.addr(p) as *mut libc::c_void, self.page, &mut v) };
        rc != 0 || v & 1 != 0
    }

    /// Drop pages `[first, first + count)`: their next touch faults again.
    fn discard(&self, first: usize, count: usize) -> io::Result<()> {
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
    fn fill(&self, st: &mut Pager, p: usize, write_fault: bool) -> io::Result<()> {
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
        Ok(())
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
    fn write_back(&self, st: &mut Pager, lo: usize, hi: usize) -> io::Result<()> {
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
    fn drop_poisoned(&self) {
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
    fn serve(&self) {
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

/// `uffd` / `uffd-wp`: see the module documentation.
#[derive(Debug)]
pub struct UffdEngine {
    method: Method,
    /// `None` when the span is empty: nothing mapped, no handler.
    shared: Option<Arc<Shared>>,
    thread: Option<JoinHandle<()>>,
    /// Bytes requests may touch (the span, cut at end of file).
    len: usize,
    write: bool,
    /// Write back after each write (dsync, osync, each).
    sync_each: bool,
    /// And fsync (each).
    fsync_each: bool,
    /// The file, when nothing is mapped (flush still fsyncs).
    file: Option<File>,
    path: PathBuf,
    pool: SlotPool,
    caps: Caps,
}

impl UffdEngine {
    /// Open `method` (`uffd` or `uffd-wp`) with the budget [`configure`] set.
    pub fn open(method: Method, spec: &OpenSpec) -> Result<UffdEngine, EngineError> {
        Self::open_with(method, spec, configured_resident_bytes())
    }

    /// Open `method` (`uffd` or `uffd-wp`) with a budget of `resident_bytes`
    /// (rounded down to whole pages, at least one page).
    pub fn open_with(
        method: Method,
        spec: &OpenSpec,
        resident_bytes: u64,
    ) -> Result<UffdEngine, EngineError> {
        let wp = match method {
            Method::Uffd => false,
            Method::UffdWp => true,
            _ => {
                return Err(EngineError::Invalid(format!(
                    "{method} is not a userfaultfd method"
                )))
            }
        };
        let page = rustix::param::page_size();
        let file = super::open_target(method, &spec.path, spec.write, true, spec.sync)?;
        let dio = crate::sys::dio_alignment(&spec.path);
        if dio.offset > page || page % dio.offset != 0 || dio.mem > page {
            return Err(EngineError::Unsupported {
                method,
                reason: format!(
                    "{} needs O_DIRECT in {page}-byte pages, but {} requires {}-byte offsets and {}-byte aligned buffers ({})",
                    method,
                    spec.path.display(),
                    dio.offset,
                    dio.mem,
                    dio.source
                ),
            });
        }
        let file_len =
            crate::sys::file_len(&file).map_err(|e| EngineError::os("fstat", &spec.path, e))?;
        let span = spec.span_bytes.min(file_len);
        let len = usize::try_from(span)
            .ok()
            .filter(|l| l.checked_next_multiple_of(page).is_some())
            .ok_or_else(|| {
                EngineError::Invalid(format!("span of {span} bytes cannot be mapped"))
            })?;
        let pages = len.div_ceil(page);
        let budget = usize::try_from(resident_bytes / page as u64)
            .unwrap_or(usize::MAX)
            .max(1);

        let (uffd, source) = new_uffd(method)?;
        handshake(method, uffd.as_raw_fd(), &spec.path, wp)?;

        let (shared, thread, file) = if pages == 0 {
            (None, None, Some(file))
        } else {
            let region = Region::new(pages * page)
                .map_err(|e| EngineError::os("mmap MAP_ANONYMOUS", &spec.path, e))?;
            let mut reg = abi::UffdioRegister {
                range: abi::UffdioRange {
                    start: region.base as u64,
                    len: region.len as u64,
                },
                mode: abi::UFFDIO_REGISTER_MODE_MISSING
                    | if wp { abi::UFFDIO_REGISTER_MODE_WP } else { 0 },
                ioctls: 0,
            };
            // SAFETY: UFFDIO_REGISTER reads and writes one uffdio_register;
            // the range is our own fresh mapping, which nothing has touched.
            match unsafe { ioctl(uffd.as_raw_fd(), abi::UFFDIO_REGISTER, &mut reg) } {
                Ok(()) => {}
                Err(e) if wp && e.raw_os_error() == Some(libc::EINVAL) => {
                    return Err(no_wp(method, "UFFDIO_REGISTER_MODE_WP refused (EINVAL)"))
                }
                Err(e) => return Err(EngineError::os("ioctl UFFDIO_REGISTER", &spec.path, e)),
            }
            if reg.ioctls & (1 << abi::NR_COPY) == 0 {
                return Err(EngineError::Unsupported {
                    method,
                    reason: "userfaultfd offers no UFFDIO_COPY for anonymous memory here".into(),
                });
            }
            if wp && reg.ioctls & (1 << abi::NR_WRITEPROTECT) == 0 {
                return Err(no_wp(
                    method,
                    "UFFDIO_WRITEPROTECT is not offered for the region",
                ));
            }
            // The page holding end of file, when it is not on a page
            // boundary, is written back without O_DIRECT.
            let tail = if spec.write && (pages * page) as u64 > file_len {
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(spec.sync.open_flags())
                    .open(&spec.path)
                    .map_err(|e| EngineError::os("open", &spec.path, e))?;
                Some(f)
            } else {
                None
            };
            // SAFETY: eventfd takes an initial value and flags, touches no
            // memory of ours, and returns a new descriptor or -1.
            let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if efd < 0 {
                let e = io::Error::last_os_error();
                return Err(EngineError::os("eventfd", &spec.path, e));
            }
            // SAFETY: efd is a fresh descriptor that nothing else owns.
            let stop_fd = unsafe { OwnedFd::from_raw_fd(efd) };
            let shared = Arc::new(Shared {
                uffd,
                stop_fd,
                stop: AtomicBool::new(false),
                region,
                page,
                pages,
                wp,
                write: spec.write,
                path: spec.path.clone(),
                io_error: AtomicI32::new(0),
                broken: AtomicI32::new(0),
                faults: AtomicU64::new(0),
                wp_faults: AtomicU64::new(0),
                evictions: AtomicU64::new(0),
                writebacks: AtomicU64::new(0),
                resident: AtomicU64::new(0),
                max_resident: AtomicU64::new(0),
                pager: Mutex::new(Pager {
                    file,
                    tail,
                    file_len,
                    budget,
                    state: vec![0; pages],
                    generation: vec![0; pages],
                    fifo: VecDeque::new(),
                    resident: 0,
                    buf: AlignedBuf::new(WRITEBACK_PAGES * page, page),
                }),
            });
            let handler = Arc::clone(&shared);
            let thread = std::thread::Builder::new()
                .name(format!("{method}-faults"))
                .spawn(move || handler.serve())
                .map_err(|e| EngineError::os("spawn fault handler", &spec.path, e))?;
            (Some(shared), Some(thread), None)
        };

        let name = method.name();
        let mut notes = vec![format!(
            "{name}: region of {}, at most {budget} resident pages ({}), write-protect: {}",
            super::human_bytes(len as u64),
            super::human_bytes(budget as u64 * page as u64),
            if wp { "on" } else { "off" }
        )];
        notes.push(format!(
            "one fault-handling thread fills {page}-byte pages with O_DIRECT preads (no read-ahead); {}; userfaultfd from {}",
            match (wp, spec.write) {
                (_, false) => "opened read-only, nothing is written back",
                (true, true) => "only pages stored to are written back (write-protect faults)",
                (false, true) => "every resident page counts as dirty and is written back",
            },
            source.describe()
        ));
        if span < spec.span_bytes {
            notes.push(format!(
                "{name} maps {span} bytes, the file's length, not the {} asked",
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
        Ok(UffdEngine {
            method,
            shared,
            thread,
            len,
            write: spec.write,
            sync_each: matches!(
                spec.sync,
                SyncPolicy::Dsync | SyncPolicy::Osync | SyncPolicy::Each
            ),
            fsync_each: spec.sync == SyncPolicy::Each,
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
        })
    }

    /// The method this engine was opened as.
    pub fn method(&self) -> Method {
        self.method
    }

    /// What the fault handler has done so far (all zero when nothing is
    /// mapped).
    pub fn stats(&self) -> UffdStats {
        let Some(s) = &self.shared else {
            return UffdStats::default();
        };
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        UffdStats {
            faults: get(&s.faults),
            wp_faults: get(&s.wp_faults),
            evictions: get(&s.evictions),
            writebacks: get(&s.writebacks),
            resident_pages: get(&s.resident),
            max_resident_pages: get(&s.max_resident),
        }
    }

    fn request(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        let buf = super::request_buf(&mut self.pool, r)?;
        let start = usize::try_from(r.offset)
            .unwrap_or(usize::MAX)
            .min(self.len);
        let end = start.saturating_add(r.len as usize).min(self.len);
        let n = end - start;
        if r.op == Op::Write && !self.write {
            return Ok(Err(libc::EBADF));
        }
        let Some(s) = &self.shared else {
            return Ok(Ok(0)); // nothing mapped: n is 0
        };
        let broken = s.broken.load(Ordering::Acquire);
        if broken != 0 {
            return Ok(Err(broken));
        }
        // One page at a time: no single copy needs two pages resident.
        let mut at = start;
        while at < end {
            let chunk = (end - at).min(s.page - at % s.page);
            let b = &mut buf[at - start..at - start + chunk];
            let p = (s.region.base + at) as *mut u8;
            // SAFETY: [at, at + chunk) lies inside the region (end <= len <=
            // its length), which lives as long as `s`; no Rust reference
            // points into it, and the handler thread only touches it while
            // this thread waits in a fault or holds no request. b is the
            // slot buffer, distinct from the region. A page that is not
            // resident faults and is filled by the handler before the copy
            // goes on.
            unsafe {
                match r.op {
                    Op::Read => std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), chunk),
                    Op::Write => std::ptr::copy_nonoverlapping(b.as_ptr(), p, chunk),
                }
            }
            at += chunk;
        }
        let err = s.io_error.swap(0, Ordering::AcqRel);
        if err != 0 {
            s.drop_poisoned();
            return Ok(Err(err));
        }
        let broken = s.broken.load(Ordering::Acquire);
        if broken != 0 {
            return Ok(Err(broken));
        }
        if r.op == Op::Write && self.sync_each && n > 0 {
            let mut st = s.lock();
            let (lo, hi) = (start / s.page, end.div_ceil(s.page));
            if let Err(e) = s.write_back(&mut st, lo, hi) {
                return Ok(Err(errno_of(&e)));
            }
            if self.fsync_each {
                if let Err(e) = rustix::fs::fsync(&st.file) {
                    return Ok(Err(e.raw_os_error()));
                }
            }
        }
        Ok(Ok(n as u32))
    }
}

impl super::SyncIo for UffdEngine {
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
        match &self.shared {
            None => match &self.file {
                Some(f) => super::fsync(f, &self.path),
                None => Ok(()),
            },
            Some(s) => {
                let mut st = s.lock();
                if self.write {
                    s.write_back(&mut st, 0, s.pages)
                        .map_err(|e| EngineError::os("pwrite (write-back)", &s.path, e))?;
                }
                super::fsync(&st.file, &s.path)
            }
        }
    }
}

impl Drop for UffdEngine {
    fn drop(&mut self) {
        let Some(s) = &self.shared else { return };
        if self.write && s.broken.load(Ordering::Acquire) == 0 {
            // No store may be lost; errors have nobody to go to.
            let mut st = s.lock();
            let _ = s.write_back(&mut st, 0, s.pages);
        }
        s.stop.store(true, Ordering::Release);
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live local array to our own eventfd.
        unsafe {
            libc::write(s.stop_fd.as_raw_fd(), one.as_ptr().cast(), one.len());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // The region is unmapped when the last Arc (now ours) goes.
    }
}

/// Runs of consecutive pages of the sorted `pages` for which `keep` holds:
/// `(first, count)`, each at most [`WRITEBACK_PAGES`] long.
fn runs(pages: &[usize], keep: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &p in pages.iter().filter(|&&p| keep(p)) {
        match out.last_mut() {
            Some((first, count)) if *first + *count == p && *count < WRITEBACK_PAGES => *count += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unnecessary_cast)] // Ioctl is c_ulong on glibc, c_int on musl
    fn ioctl_numbers_match_the_kernel_headers() {
        // From <linux/userfaultfd.h> on x86_64 / arm64 (asm-generic ioctl).
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert_eq!(abi::UFFDIO_API as u64, 0xc018_aa3f);
            assert_eq!(abi::UFFDIO_REGISTER as u64, 0xc020_aa00);
            assert_eq!(abi::UFFDIO_UNREGISTER as u64, 0x8010_aa01);
            assert_eq!(abi::UFFDIO_WAKE as u64, 0x8010_aa02);
            assert_eq!(abi::UFFDIO_COPY as u64, 0xc028_aa03);
            assert_eq!(abi::UFFDIO_WRITEPROTECT as u64, 0xc018_aa06);
            assert_eq!(abi::USERFAULTFD_IOC_NEW as u64, 0xaa00);
        }
    }

    /// A page dropped without the books knowing is filled again when
    /// touched (no endless wake-and-fault), and a second message for a page
    /// already filled only wakes.
    #[test]
    fn the_books_and_the_page_tables_agree() {
        use crate::engines::SyncIo;
        const PAGE: usize = 4096;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.dat");
        let data: Vec<u8> = (0..4 * PAGE).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let spec = OpenSpec {
            path,
            write: false,
            block_size: PAGE,
            queue_depth: 1,
            sync: SyncPolicy::None,
            span_bytes: data.len() as u64,
            sqpoll_cpu: None,
            mem_policy: None,
        };
        let mut eng = match UffdEngine::open_with(Method::Uffd, &spec, 4 * PAGE as u64) {
            Err(EngineError::Unsupported { reason, .. }) => {
                eprintln!("skipped: {reason}");
                return;
            }
            other => other.unwrap(),
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let read = IoReq {
                op: Op::Read,
                offset: PAGE as u64,
                len: PAGE as u32,
                slot: 0,
            };
            assert_eq!(eng.one(&read).unwrap(), Ok(PAGE as u32));
            let s = Arc::clone(eng.shared.as_ref().unwrap());
            assert!(s.present(1) && !s.present(2));
            s.discard(1, 1).unwrap();
            assert!(!s.present(1));
            assert_eq!(eng.one(&read).unwrap(), Ok(PAGE as u32));
            assert_eq!(eng.pool.get_mut(0).unwrap(), &data[PAGE..2 * PAGE]);
            assert_eq!((eng.stats().faults, eng.stats().resident_pages), (2, 1));
            {
                let mut st = s.lock();
                s.fill(&mut st, 1, false).unwrap();
            }
            assert_eq!(eng.stats().faults, 2, "a duplicate only wakes");
            tx.send(()).unwrap();
        });
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("reads finish within 10 s");
    }

    #[test]
    fn runs_join_neighbours() {
        let pages = [1, 2, 3, 5, 6, 9];
        assert_eq!(runs(&pages, |_| true), vec![(1, 3), (5, 2), (9, 1)]);
        assert_eq!(
            runs(&pages, |p| p != 2),
            vec![(1, 1), (3, 1), (5, 2), (9, 1)]
        );
        let long: Vec<usize> = (0..WRITEBACK_PAGES + 3).collect();
        assert_eq!(
            runs(&long, |_| true),
            vec![(0, WRITEBACK_PAGES), (WRITEBACK_PAGES, 3)]
        );
        assert!(runs(&[], |_| true).is_empty());
    }

    #[test]
    fn reasons_name_the_cause_and_the_fix() {
        let e = |n| io::Error::from_raw_os_error(n);
        let r = unavailable_reason(&e(libc::EPERM), &e(libc::EACCES), Some(0));
        assert!(r.contains("vm.unprivileged_userfaultfd is 0"), "{r}");
        assert!(r.contains("/dev/userfaultfd is not accessible"), "{r}");
        assert!(r.contains("sysctl vm.unprivileged_userfaultfd=1"), "{r}");
        let r = unavailable_reason(&e(libc::ENOSYS), &e(libc::ENOENT), None);
        assert!(
            r.contains("ENOSYS") && r.contains("CONFIG_USERFAULTFD"),
            "{r}"
        );
        assert!(r.contains("no /dev/userfaultfd"), "{r}");
        let r = no_wp(Method::UffdWp, "x").to_string();
        assert!(
            r.contains("uffd-wp is not usable") && r.contains("use uffd"),
            "{r}"
        );
    }

    /// Both ways to a userfaultfd work here when either does, and the
    /// handshake accepts write-protect where the kernel has it.
    #[test]
    fn both_sources_give_a_userfaultfd() {
        let sys = uffd_from_syscall();
        let dev = uffd_from_device();
        eprintln!(
            "syscall: {:?}, /dev/userfaultfd: {:?}",
            sys.as_ref().map(|s| s.1),
            dev.as_ref().map(|s| s.1)
        );
        for (fd, _) in [sys, dev].into_iter().flatten() {
            handshake(Method::Uffd, fd.as_raw_fd(), Path::new("-"), false).unwrap();
        }
    }
}

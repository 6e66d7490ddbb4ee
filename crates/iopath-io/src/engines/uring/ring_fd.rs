//! The ring's own descriptor, registered (`IORING_REGISTER_RING_FDS`,
//! Linux 5.18+, t/io_uring's `-X`): enters then pass its index with
//! `IORING_ENTER_REGISTERED_RING` and the kernel skips the descriptor
//! lookup (`fget`/`fput`) of every call. A registration belongs to the
//! thread that made it (at most 16 per thread): only that thread may use
//! the index, and it must unregister it, or the ring lives as long as the
//! thread.

use std::os::fd::AsRawFd;

use io_uring::IoUring;

/// `IORING_ENTER_GETEVENTS`, `IORING_ENTER_REGISTERED_RING` and the
/// `IORING_(UN)REGISTER_RING_FDS` opcodes of `<linux/io_uring.h>`.
const ENTER_GETEVENTS: u32 = 1 << 0;
const ENTER_REGISTERED_RING: u32 = 1 << 4;
const REGISTER_RING_FDS: u32 = 20;
const UNREGISTER_RING_FDS: u32 = 21;

/// `struct io_uring_rsrc_update` of `<linux/io_uring.h>`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// Register `ring`'s descriptor for the calling thread (Linux 5.18+);
/// its index, or `None` where the kernel refuses (the plain descriptor
/// then serves, as before).
pub(super) fn register(ring: &IoUring) -> Option<u32> {
    let mut up = RsrcUpdate {
        offset: u32::MAX, // any free index
        resv: 0,
        data: ring.as_raw_fd() as u64,
    };
    // SAFETY: `up` is a valid io_uring_rsrc_update for the one entry the
    // call reads and writes back (the index it chose), alive for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring.as_raw_fd() as libc::c_long,
            REGISTER_RING_FDS as libc::c_long,
            &mut up as *mut RsrcUpdate,
            1 as libc::c_long,
        )
    };
    (r == 1).then_some(up.offset)
}

/// Undo [`register`] on the thread that made it.
pub(super) fn unregister(ring: &IoUring, index: u32) {
    let up = RsrcUpdate {
        offset: index,
        resv: 0,
        data: 0,
    };
    // SAFETY: `up` names the index this thread registered; the kernel only
    // reads it during the call.
    unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring.as_raw_fd() as libc::c_long,
            UNREGISTER_RING_FDS as libc::c_long,
            &up as *const RsrcUpdate,
            1 as libc::c_long,
        );
    }
}

/// `IoUring::submit_and_wait` through the registered `index`: submit what
/// the SQ holds, wait for `want` completions. As in the crate's own,
/// GETEVENTS is passed when waiting, on an IOPOLL ring, and when the
/// kernel asks for it (a CQ overflow backlog, deferred task work to run).
/// Not for SQPOLL rings (whose enters depend on the kernel thread's state).
///
/// # Safety
///
/// `index` was returned by [`register`] on the calling thread and not yet
/// unregistered, and every SQE in the SQ points at memory that stays valid
/// until its completion is reaped.
#[inline(always)]
pub(super) unsafe fn submit_and_wait(
    ring: &mut IoUring,
    index: u32,
    want: usize,
) -> std::io::Result<usize> {
    let iopoll = ring.params().is_setup_iopoll();
    let sq = ring.submission();
    let get = want > 0 || iopoll || sq.cq_overflow() || sq.taskrun();
    let len = sq.len();
    drop(sq);
    let flags = ENTER_REGISTERED_RING | if get { ENTER_GETEVENTS } else { 0 };
    // SAFETY: the caller vouches for the index (this thread's registration
    // of this ring) and for the memory of the SQEs submitted; no argument
    // pointer is passed (NULL, size 0).
    unsafe { enter_raw(index, len as u32, want as u32, flags) }
}

/// `io_uring_enter(fd, to_submit, min_complete, flags, NULL, 0)`, the
/// `syscall` instruction inline (as t/io_uring issues it) rather than
/// libc's `syscall()`, whose return after a wait mispredicted.
///
/// # Safety
///
/// As for the system call: `fd` names this thread's ring (registered
/// index with `ENTER_REGISTERED_RING`), and the SQEs submitted point at
/// memory that stays valid until their completions are reaped.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn enter_raw(
    fd: u32,
    to_submit: u32,
    want: u32,
    flags: u32,
) -> std::io::Result<usize> {
    let r: isize;
    // SAFETY: the Linux x86_64 system call convention: number in rax,
    // arguments in rdi, rsi, rdx, r10, r8, r9; the kernel returns in rax
    // and clobbers rcx and r11, nothing else, and touches no user stack.
    // The arguments are plain integers and a NULL pointer with size 0;
    // what the kernel reads through the ring the caller vouches for.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") libc::SYS_io_uring_enter as isize => r,
            in("rdi") fd as usize,
            in("rsi") to_submit as usize,
            in("rdx") want as usize,
            in("r10") flags as usize,
            in("r8") 0usize,
            in("r9") 0usize,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    // -4095..=-1 is an errno; anything else the call's result.
    if (-4095..0).contains(&r) {
        Err(std::io::Error::from_raw_os_error(-r as i32))
    } else {
        Ok(r as usize)
    }
}

/// Elsewhere, libc's `syscall()`.
///
/// # Safety
///
/// As for the x86_64 version.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) unsafe fn enter_raw(
    fd: u32,
    to_submit: u32,
    want: u32,
    flags: u32,
) -> std::io::Result<usize> {
    // SAFETY: the caller vouches for the descriptor and the SQEs' memory;
    // no argument pointer is passed (NULL, size 0).
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd as libc::c_long,
            to_submit as libc::c_long,
            want as libc::c_long,
            flags as libc::c_long,
            std::ptr::null::<libc::c_void>(),
            0 as libc::c_long,
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

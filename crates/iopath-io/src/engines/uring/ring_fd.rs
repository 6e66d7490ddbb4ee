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
#[inline]
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
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            index as libc::c_long,
            len as libc::c_long,
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

//! The kernel's userfaultfd ABI (`<linux/userfaultfd.h>`): constants, the
//! ioctl argument structs and request numbers, and a typed `ioctl` wrapper.

use std::io;
use std::os::fd::RawFd;

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
/// Copy without waking the toucher: the pager wakes it once its books say
/// the page is there.
pub(super) const UFFDIO_COPY_MODE_DONTWAKE: u64 = 1 << 0;
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

/// `ioctl(fd, req, arg)` with a pointer argument.
///
/// # Safety
/// `req` must be an ioctl that reads and writes at most one `T` at `arg`,
/// and any other memory it touches (the destination of `UFFDIO_COPY`) must
/// be memory the caller owns and no Rust reference points into.
pub(super) unsafe fn ioctl<T>(fd: RawFd, req: libc::Ioctl, arg: &mut T) -> io::Result<()> {
    // SAFETY: arg is a valid, exclusive T for the call; the rest is the
    // caller's contract.
    let rc = unsafe { libc::ioctl(fd, req, arg as *mut T) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

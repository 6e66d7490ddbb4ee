//! Getting a userfaultfd: from userfaultfd(2), or from `/dev/userfaultfd`
//! when the system call is refused; the `UFFDIO_API` handshake; and, when
//! neither source works, a reason that names the cause and the fix.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::abi::{self, ioctl};
use crate::{EngineError, Method};

/// Where the userfaultfd came from, for the notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// userfaultfd(2); `true` with `UFFD_USER_MODE_ONLY`.
    Syscall(bool),
    /// `/dev/userfaultfd`.
    Device(bool),
}

impl Source {
    pub(super) fn describe(self) -> &'static str {
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
pub(super) fn uffd_from_syscall() -> io::Result<(OwnedFd, Source)> {
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
pub(super) fn uffd_from_device() -> io::Result<(OwnedFd, Source)> {
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
pub(super) fn new_uffd(method: Method) -> Result<(OwnedFd, Source), EngineError> {
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
pub(super) fn unavailable_reason(sys: &io::Error, dev: &io::Error, sysctl: Option<u32>) -> String {
    // Out of descriptors or memory: the limit is the cause, not a
    // permission (both ways fail alike).
    if let Some(hint) = sys
        .raw_os_error()
        .filter(|_| crate::sys::is_limit_error(sys))
        .and_then(crate::sys::limit_hint)
    {
        return format!("userfaultfd(2) failed: {sys}: {hint}");
    }
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
pub(super) fn handshake(
    method: Method,
    uffd: RawFd,
    path: &Path,
    wp: bool,
) -> Result<(), EngineError> {
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

pub(super) fn no_wp(method: Method, what: &str) -> EngineError {
    EngineError::Unsupported {
        method,
        reason: format!(
            "this kernel's userfaultfd cannot write-protect anonymous memory: {what}; it needs Linux 5.7+ on x86_64 (later elsewhere) with CONFIG_HAVE_ARCH_USERFAULTFD_WP; use uffd"
        ),
    }
}

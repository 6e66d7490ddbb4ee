//! The fault-handling threads of a region: each polls the userfaultfd and
//! the stop eventfd, reads fault messages, and serves them (a missing page
//! is filled, a write-protect fault lifts the protection). A region has one
//! per engine attached at once; they read the same userfaultfd, so each
//! message goes to one of them, and they fill different pages at the same
//! time (each with its own bounce page).

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use super::abi::{self, ioctl};
use super::pager::{errno_of, Shared};
use crate::buf::AlignedBuf;

impl Shared {
    /// Unregister the region (and wake every toucher, whose faults the
    /// kernel then serves itself with zeros): a handler is ending on its
    /// own, and no load or store may wait for it.
    pub(super) fn unregister(&self) {
        let mut r = self.range(0, self.pages);
        // SAFETY: UFFDIO_UNREGISTER reads one uffdio_range; the range is our
        // region. Unregistering wakes any toucher, whose fault the kernel
        // then serves itself.
        let _ = unsafe { ioctl(self.uffd.as_raw_fd(), abi::UFFDIO_UNREGISTER, &mut r) };
        let mut r = self.range(0, self.pages);
        // SAFETY: UFFDIO_WAKE reads one uffdio_range and changes no memory.
        let _ = unsafe { ioctl(self.uffd.as_raw_fd(), abi::UFFDIO_WAKE, &mut r) };
    }

    fn handle(&self, msg: &[u8], bounce: &mut AlignedBuf) -> io::Result<()> {
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
        if flags & abi::UFFD_PAGEFAULT_FLAG_WP != 0 {
            let mut st = self.lock();
            self.unprotect(&mut st, p)
        } else {
            self.fill(p, flags & abi::UFFD_PAGEFAULT_FLAG_WRITE != 0, bounce)
        }
    }

    /// A handler thread: serve faults until asked to stop.
    pub(super) fn serve(&self) {
        let mut bounce = AlignedBuf::new(self.page, self.page);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.serve_loop(&mut bounce)
        }));
        let errno = match run {
            Ok(Ok(())) => return,
            Ok(Err(e)) => errno_of(&e),
            // A bug, not an I/O error; the toucher must not wait forever.
            Err(_) => libc::EIO,
        };
        self.broken.store(errno, Ordering::Release);
        self.unregister();
    }

    fn serve_loop(&self, bounce: &mut AlignedBuf) -> io::Result<()> {
        // One message at a time: the other handlers take the next ones.
        let mut msg = [0u8; abi::MSG_SIZE];
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
            // The stop eventfd is never read: it stays readable, and stops
            // every handler of the region.
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
                // SAFETY: msg is a live buffer of msg.len() bytes that the
                // kernel fills with one whole uffd_msg record.
                let n = unsafe {
                    libc::read(self.uffd.as_raw_fd(), msg.as_mut_ptr().cast(), msg.len())
                };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    match e.raw_os_error() {
                        // Another handler took the messages.
                        Some(libc::EAGAIN) => break,
                        Some(libc::EINTR) => continue,
                        _ => return Err(e),
                    }
                }
                if n as usize != abi::MSG_SIZE {
                    break;
                }
                self.handle(&msg, bounce)?;
            }
        }
    }
}

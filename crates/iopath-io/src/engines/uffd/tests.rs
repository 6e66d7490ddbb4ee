//! Unit tests of the userfaultfd engine: the ioctl numbers, the pager's
//! books against the page tables, runs of write-back, the reasons given
//! when userfaultfd is unavailable.

use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Arc;

use super::abi;
use super::fd::{handshake, no_wp, uffd_from_device, uffd_from_syscall, unavailable_reason};
use super::pager::runs;
use super::{UffdEngine, WRITEBACK_PAGES};
use crate::{EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

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

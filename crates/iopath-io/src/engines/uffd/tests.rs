//! Unit tests of the userfaultfd engine: the ioctl numbers, the pager's
//! books against the page tables, runs of write-back, the reasons given
//! when userfaultfd is unavailable.

use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Arc;

use super::abi;
use super::books::runs;
use super::fd::{handshake, no_wp, uffd_from_device, uffd_from_syscall, unavailable_reason};
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
        let s = Arc::clone(eng.shared().unwrap());
        assert!(s.present(1) && !s.present(2));
        s.discard(1, 1).unwrap();
        assert!(!s.present(1));
        assert_eq!(eng.one(&read).unwrap(), Ok(PAGE as u32));
        assert_eq!(eng.pool.get_mut(0).unwrap(), &data[PAGE..2 * PAGE]);
        assert_eq!((eng.stats().faults, eng.stats().resident_pages), (2, 1));
        let mut bounce = crate::buf::AlignedBuf::new(PAGE, PAGE);
        s.fill(1, false, &mut bounce).unwrap();
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

/// Issue 15, item 5: an eviction that fails half-way leaves the books true.
/// The victims are pages 0-2 and 4-6 (3 is pinned, so refused); 1, 2 and 5
/// are dirty. The write-backs work, the first `madvise` (0-2) works, the
/// second (4-6) fails after dropping page 4. The books must say that 0, 1,
/// 2 and 4 are gone (a copy from a page the books call resident must never
/// fault: the copier may be the fault handler itself), that 5 and 6 are
/// still there, the oldest again, 5 clean now; and no page may stay claimed.
#[test]
fn issue15_a_failed_eviction_leaves_the_books_true() {
    use super::books::{evict, Books, Fill, PageWords, DIRTY, EVICTING};
    let words = PageWords::new(16);
    let mut books = Books::new(16, 8);
    for p in 0..8 {
        assert_eq!(books.begin_fill(p), Fill::Start);
        books.installed(p);
    }
    for p in [1, 2, 5] {
        words.set_dirty(p);
    }
    books.check().unwrap();
    words.pin(3);
    let victims = books.victims(6, |p| words.try_claim(p));
    let pages: Vec<u32> = victims.iter().map(|v| v.0).collect();
    assert_eq!(pages, [0, 1, 2, 4, 5, 6], "3 is pinned");
    assert!(!words.try_claim(3), "a pinned page cannot be claimed");
    let mut written = Vec::new();
    let r = evict(
        &mut books,
        &words,
        &victims,
        |first, count| {
            written.push((first, count));
            Ok(())
        },
        |first, _| match first {
            0 => Ok(()),
            _ => Err(io::Error::from_raw_os_error(libc::EAGAIN)),
        },
        |p| p != 4,
    );
    assert_eq!(r.unwrap_err().raw_os_error(), Some(libc::EAGAIN));
    assert_eq!(written, [(1, 2), (5, 1)], "dirty runs written first");
    books.check().unwrap();
    for p in [0, 1, 2, 4] {
        assert!(!books.is_resident(p), "page {p} was dropped");
        assert_eq!(words.word(p), 0, "page {p}: no flag left");
    }
    for p in [3, 5, 6, 7] {
        assert!(books.is_resident(p), "page {p} is still mapped");
    }
    assert_eq!(books.resident(), 4);
    assert_eq!(
        words.word(5) & (DIRTY | EVICTING),
        0,
        "5: written, released"
    );
    assert_eq!(words.word(6) & EVICTING, 0, "6: released");
    assert_eq!(words.unpin(3, false), None);
    let next = books.victims(8, |p| words.try_claim(p));
    let pages: Vec<u32> = next.iter().map(|v| v.0).collect();
    assert_eq!(pages, [5, 6, 7, 3], "the victims left are the oldest again");
}

/// A write-back that fails drops nothing: every victim stays resident and
/// as dirty as it was, claims released, in its place in the FIFO.
#[test]
fn a_failed_write_back_keeps_every_victim() {
    use super::books::{evict, Books, Fill, PageWords, EVICTING};
    let words = PageWords::new(8);
    let mut books = Books::new(8, 4);
    for p in 0..4 {
        assert_eq!(books.begin_fill(p), Fill::Start);
        books.installed(p);
        words.set_dirty(p);
    }
    let victims = books.victims(2, |p| words.try_claim(p));
    let r = evict(
        &mut books,
        &words,
        &victims,
        |_, _| Err(io::Error::from_raw_os_error(libc::ENOSPC)),
        |_, _| panic!("nothing is dropped before it is written"),
        |_| true,
    );
    assert_eq!(r.unwrap_err().raw_os_error(), Some(libc::ENOSPC));
    books.check().unwrap();
    assert_eq!(books.resident(), 4);
    for p in 0..4 {
        assert!(words.dirty(p), "page {p} still dirty");
        assert_eq!(words.word(p) & EVICTING, 0, "page {p} released");
    }
    let next = books.victims(4, |p| words.try_claim(p));
    let pages: Vec<u32> = next.iter().map(|v| v.0).collect();
    assert_eq!(pages, [0, 1, 2, 3]);
}

/// The per-page word: a claim excludes pins and a pin excludes claims; a
/// write's unpin marks the page dirty; a poisoned page reports its errno to
/// every copier until it is dropped; dropping keeps the pins of copiers
/// waiting on a refill.
#[test]
fn page_words_pins_claims_and_flags() {
    use super::books::{PageWords, DIRTY, POISONED};
    let w = PageWords::new(2);
    w.pin(0);
    assert!(!w.try_claim(0));
    assert_eq!(w.unpin(0, true), None);
    assert!(w.dirty(0));
    assert!(w.try_claim(0));
    assert!(!w.try_claim(0), "one claim at a time");
    // A pin waits for the claim's release (whenever the pinner comes).
    let w = std::sync::Arc::new(w);
    let pinner = std::thread::spawn({
        let w = std::sync::Arc::clone(&w);
        move || {
            w.pin(0);
            w.unpin(0, false)
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    w.clean(0);
    w.release(0);
    assert_eq!(pinner.join().unwrap(), None);
    assert_eq!(w.word(0) & DIRTY, 0);
    w.pin(1);
    w.poison(1, libc::EIO);
    assert!(!w.dirty(1) && w.poisoned(1));
    w.pin(1);
    assert_eq!(w.unpin(1, true), Some(libc::EIO));
    assert!(!w.dirty(1), "a poisoned page is never written back");
    w.clear(1);
    assert_eq!(w.word(1) & (POISONED | DIRTY), 0);
    assert_eq!(w.unpin(1, false), None, "the pin survived the clear");
    assert_eq!(w.word(1), 0);
}

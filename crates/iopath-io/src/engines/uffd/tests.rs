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
        buffers: Default::default(),
        noatime: false,
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

/// Review of issue 26: out of descriptors (`ulimit -n 5`), root was told to
/// allow userfaultfd with a sysctl or to run as root.
#[test]
fn a_limit_is_named_as_the_cause_not_a_permission() {
    let e = |n| io::Error::from_raw_os_error(n);
    let r = unavailable_reason(&e(libc::EMFILE), &e(libc::EMFILE), Some(1));
    assert!(r.contains("ulimit -n"), "{r}");
    assert!(!r.contains("sysctl") && !r.contains("run as root"), "{r}");
    let r = unavailable_reason(&e(libc::ENOMEM), &e(libc::ENOENT), Some(1));
    assert!(r.contains("out of memory"), "{r}");
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
    // A pin waits for the claim's release: seen asleep (WAITING in the
    // word) before the release.
    let w = std::sync::Arc::new(w);
    let pinner = std::thread::spawn({
        let w = std::sync::Arc::clone(&w);
        move || {
            w.pin(0);
            w.unpin(0, false)
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while w.word(0) & super::books::WAITING == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the pinner never waited on the claim"
        );
        std::thread::yield_now();
    }
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

// ---- The registry and the last drop (review of issue 15) ----

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;

use super::registry::hooks::{Point, HOOK};
use super::registry::FileId;
use crate::engines::SyncIo;

const PG: usize = 4096;

/// One test at a time sets the registry's hook.
static HOOKED: Mutex<()> = Mutex::new(());

/// Clears the registry's hook when dropped (on a failed assertion too).
struct Hooked(#[allow(dead_code)] std::sync::MutexGuard<'static, ()>);

impl Hooked {
    fn set(h: super::registry::hooks::Hook) -> Hooked {
        let g = HOOKED.lock().unwrap_or_else(|e| e.into_inner());
        *HOOK.lock().unwrap() = Some(h);
        Hooked(g)
    }
}

impl Drop for Hooked {
    fn drop(&mut self) {
        *HOOK.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

fn spec_of(path: &Path, write: bool, len: usize, sync: SyncPolicy) -> OpenSpec {
    OpenSpec {
        path: path.to_path_buf(),
        write,
        // The slot holds any request of these tests.
        block_size: 64 * PG,
        queue_depth: 1,
        sync,
        span_bytes: len as u64,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    }
}

/// An engine, or `None` (the reason on stderr) where `m` cannot run here.
fn open(m: Method, spec: &OpenSpec, pages: u64) -> Option<UffdEngine> {
    match UffdEngine::open_with(m, spec, pages * PG as u64) {
        Err(EngineError::Unsupported { reason, .. }) => {
            eprintln!("skipped {m}: {reason}");
            None
        }
        other => Some(other.unwrap()),
    }
}

/// One request of `data.len()` bytes at `offset`: a write of `data`, or a
/// read (`data` is only its length); the bytes read.
fn req(eng: &mut UffdEngine, op: Op, offset: usize, data: &[u8]) -> Result<Vec<u8>, i32> {
    if op == Op::Write {
        eng.pool.get_mut(0).unwrap()[..data.len()].copy_from_slice(data);
    }
    let r = IoReq {
        op,
        offset: offset as u64,
        len: data.len() as u32,
        slot: 0,
    };
    let n = eng.one(&r).unwrap()?;
    assert_eq!(n as usize, data.len(), "{op:?} at {offset}");
    Ok(eng.pool.get_mut(0).unwrap()[..data.len()].to_vec())
}

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| 0x80 | ((i / 7) as u8).wrapping_mul(29) ^ seed)
        .collect()
}

/// Review of issue 15, item 1: the last `Arc` of a region can go between
/// `attach`'s look for a dying region of the file and its upgrade of the
/// entry (`Arc`'s drop takes no lock). The upgrade then fails; `attach`
/// used to make a new region at once, which read the file while the old
/// one's drop had not written its dirty pages yet (and overwrote its
/// entry). The hook drops engine A, the region's only one, on another
/// thread right in that window, and holds A's drop before its write-back
/// until `attach` waits (or, as before the fix, never did and B has read):
/// B must read every byte A wrote, and B's flushed writes must stay.
#[test]
#[cfg_attr(miri, ignore = "userfaultfd, files and processes")]
fn a_region_dropped_while_another_engine_opens_loses_no_write() {
    for m in [Method::Uffd, Method::UffdWp] {
        region_dropped_while_opening(m);
    }
}

fn region_dropped_while_opening(m: Method) {
    const PAGES: usize = 64;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.dat");
    std::fs::write(&path, vec![0x11; PAGES * PG]).unwrap();
    let id = FileId::of(&std::fs::metadata(&path).unwrap());
    let spec = spec_of(&path, true, PAGES * PG, SyncPolicy::End);
    let Some(mut a) = open(m, &spec, PAGES as u64) else {
        return;
    };
    let a_bytes = pattern(0x5a, PAGES * PG);
    for p in 0..PAGES {
        req(&mut a, Op::Write, p * PG, &a_bytes[p * PG..(p + 1) * PG]).unwrap();
    }
    let (go_drop, go_drop_rx) = mpsc::channel::<()>();
    let (dropping, dropping_rx) = mpsc::channel::<()>();
    let (proceed, proceed_rx) = mpsc::channel::<()>();
    let looked = AtomicBool::new(false);
    let held = AtomicBool::new(false);
    let waited = Arc::new(AtomicBool::new(false));
    let hook = {
        let (go_drop, dropping_rx) = (Mutex::new(go_drop), Mutex::new(dropping_rx));
        let (dropping, proceed) = (Mutex::new(dropping), Mutex::new(proceed.clone()));
        let proceed_rx = Mutex::new(proceed_rx);
        let waited = Arc::clone(&waited);
        Arc::new(
            move |point: Point, key: &super::registry::Key, _: Option<&_>| {
                if key.0 != id {
                    return;
                }
                match point {
                    // B's open: A's last Arc goes now, and its drop starts.
                    Point::Looked if !looked.swap(true, Ordering::SeqCst) => {
                        go_drop.lock().unwrap().send(()).unwrap();
                        dropping_rx.lock().unwrap().recv().unwrap();
                    }
                    Point::Waiting => {
                        waited.store(true, Ordering::SeqCst);
                        let _ = proceed.lock().unwrap().send(());
                    }
                    // A's drop waits, before writing back, for B to wait.
                    Point::Dropping if !held.swap(true, Ordering::SeqCst) => {
                        dropping.lock().unwrap().send(()).unwrap();
                        proceed_rx.lock().unwrap().recv().unwrap();
                    }
                    _ => {}
                }
            },
        ) as super::registry::hooks::Hook
    };
    let hooked = Hooked::set(hook);
    let dropper = std::thread::spawn(move || {
        go_drop_rx.recv().unwrap();
        drop(a);
    });
    let b = open(m, &spec, PAGES as u64);
    // Before the fix A's drop is still held here: let it go (B has read
    // or not, what follows shows it), and never leave it hanging.
    let read = b.map(|mut b| {
        let got: Vec<u8> = (0..PAGES)
            .flat_map(|p| req(&mut b, Op::Read, p * PG, &[0; PG]).unwrap())
            .collect();
        (b, got)
    });
    let _ = proceed.send(());
    dropper.join().unwrap();
    drop(hooked);
    let (mut b, got) = read.expect("B opens where A did");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != a_bytes[i]) {
        panic!(
            "{m}: B read {:#x} at byte {i} (page {}), not A's {:#x}: the new region read the file before the old one wrote it back",
            got[i],
            i / PG,
            a_bytes[i]
        );
    }
    assert!(waited.load(Ordering::SeqCst), "{m}: B waited for A's drop");
    let b_bytes = pattern(0xc3, PAGES / 2 * PG);
    req(&mut b, Op::Write, 0, &b_bytes).unwrap();
    b.flush_end(crate::SyncCall::Fsync).unwrap();
    drop(b);
    let disk = std::fs::read(&path).unwrap();
    assert!(
        disk[..PAGES / 2 * PG] == b_bytes[..],
        "{m}: B's flushed write"
    );
    assert!(
        disk[PAGES / 2 * PG..] == a_bytes[PAGES / 2 * PG..],
        "{m}: A's writes B did not overwrite"
    );
}

/// Review of issue 15, item 5: after a handler ended on its own (the
/// region unregistered, `broken` set), the last drop used to skip the
/// write-back, dropping every completed write not flushed yet. The pages
/// the books call resident are still mapped: they are written back.
#[test]
#[cfg_attr(miri, ignore = "userfaultfd, files and processes")]
fn a_region_whose_handler_ended_still_writes_back_at_its_last_drop() {
    for m in [Method::Uffd, Method::UffdWp] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.dat");
        std::fs::write(&path, vec![0x11; 8 * PG]).unwrap();
        let spec = spec_of(&path, true, 8 * PG, SyncPolicy::None);
        let Some(mut a) = open(m, &spec, 16) else {
            return;
        };
        let data = pattern(0x21, 4 * PG);
        req(&mut a, Op::Write, PG, &data).unwrap();
        let s = Arc::clone(a.shared().unwrap());
        s.broken.store(libc::EIO, Ordering::Release);
        s.unregister();
        assert_eq!(req(&mut a, Op::Read, 0, &[0; 16]), Err(libc::EIO));
        drop(s);
        drop(a);
        let disk = std::fs::read(&path).unwrap();
        assert!(disk[..PG].iter().all(|&b| b == 0x11), "{m}: page 0");
        assert!(
            disk[PG..5 * PG] == data[..],
            "{m}: the writes completed before"
        );
        assert!(disk[5 * PG..].iter().all(|&b| b == 0x11), "{m}: the rest");
    }
}

/// A write-back that fails at the last drop (`--sync none`: no flush
/// reports it) is not silent: its message, naming the file, is kept for
/// `take_drop_errors`, for the caller to say.
#[test]
#[cfg_attr(miri, ignore = "userfaultfd, files and processes")]
fn a_write_back_that_fails_at_the_last_drop_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.dat");
    std::fs::write(&path, vec![0x11; 4 * PG]).unwrap();
    let spec = spec_of(&path, true, 4 * PG, SyncPolicy::None);
    let Some(mut a) = open(Method::Uffd, &spec, 16) else {
        return;
    };
    req(&mut a, Op::Write, 0, &[0x22; 100]).unwrap();
    super::pager::hooks::FAIL_WRITE_BACK.with(|f| f.set(true));
    drop(a);
    super::pager::hooks::FAIL_WRITE_BACK.with(|f| f.set(false));
    let errors = super::take_drop_errors();
    let name = path.display().to_string();
    assert!(
        errors
            .iter()
            .any(|e| e.contains(&name) && e.contains("Input/output error")),
        "{errors:?}"
    );
}

/// Review of issue 15, item 8: a new region opens its file again (the
/// end-of-file page is written without O_DIRECT; a reader's region opens
/// it read-write). That used to go by the path, which may name another
/// file by then (renamed and replaced), and the region's writes went
/// there. Now it goes through /proc/self/fd, to the inode the engine
/// opened, which is what the region is keyed by.
#[test]
#[cfg_attr(miri, ignore = "userfaultfd, files and processes")]
fn a_region_writes_to_the_file_opened_even_when_its_path_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.dat");
    let len = 2 * PG + 1000;
    std::fs::write(&path, vec![0x11; len]).unwrap();
    let original = std::fs::File::open(&path).unwrap();
    let id = FileId::of(&original.metadata().unwrap());
    let moved = dir.path().join("p.old");
    let hook = {
        let (path, moved) = (path.clone(), moved.clone());
        Arc::new(
            move |point: Point, key: &super::registry::Key, _: Option<&_>| {
                if point == Point::Reopening && key.0 == id {
                    std::fs::rename(&path, &moved).unwrap();
                    std::fs::write(&path, vec![0x33; len]).unwrap();
                }
            },
        ) as super::registry::hooks::Hook
    };
    let hooked = Hooked::set(hook);
    let spec = spec_of(&path, true, len, SyncPolicy::End);
    let eng = open(Method::Uffd, &spec, 16);
    drop(hooked);
    let Some(mut eng) = eng else {
        return;
    };
    req(&mut eng, Op::Write, 0, &[0x44; 100]).unwrap();
    req(&mut eng, Op::Write, 2 * PG, &[0x55; 1000]).unwrap();
    eng.flush_end(crate::SyncCall::Fsync).unwrap();
    drop(eng);
    let mut want = vec![0x11; len];
    want[..100].fill(0x44);
    want[2 * PG..].fill(0x55);
    let got = std::fs::read(&moved).unwrap();
    if let Some(i) = (0..len).find(|&i| got[i] != want[i]) {
        panic!(
            "the file opened: byte {i} is {:#x}, not {:#x}",
            got[i], want[i]
        );
    }
    assert!(
        std::fs::read(&path).unwrap().iter().all(|&b| b == 0x33),
        "the file now at the path was written"
    );
}

/// Two device nodes of one block device are one file to the registry
/// (keyed by the device number, not by each node's inode).
#[test]
#[cfg_attr(miri, ignore = "userfaultfd, files and processes")]
fn block_devices_are_keyed_by_their_device_number() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for p in [&a, &b] {
        match std::process::Command::new("mknod")
            .arg(p)
            .args(["b", "7", "200"])
            .output()
        {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                eprintln!(
                    "skipped: mknod refused: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                return;
            }
            Err(e) => {
                eprintln!("skipped: cannot run mknod: {e}");
                return;
            }
        }
    }
    let (ma, mb) = (
        std::fs::metadata(&a).unwrap(),
        std::fs::metadata(&b).unwrap(),
    );
    use std::os::unix::fs::MetadataExt;
    assert_ne!(ma.ino(), mb.ino());
    assert_eq!(FileId::of(&ma), FileId::of(&mb));
    let f = dir.path().join("f");
    std::fs::write(&f, b"x").unwrap();
    assert!(matches!(
        FileId::of(&std::fs::metadata(&f).unwrap()),
        FileId::Inode { .. }
    ));
}

/// Review of issue 15, item 9: a pin that finds the page claimed, and a
/// write-back that finds it pinned, sleep (the word marked WAITING) rather
/// than spin for as long as the other side takes, and the release of the
/// claim, or the last unpin, wakes them.
#[test]
fn waits_on_a_busy_page_sleep_and_are_woken() {
    use super::books::{PageWords, EVICTING, WAITING};
    let w = Arc::new(PageWords::new(1));
    // Seen asleep: WAITING in the word (set just before sleeping).
    let asleep = |w: &PageWords| {
        while w.word(0) & WAITING == 0 {
            std::thread::yield_now();
        }
    };
    // A pinner sleeps on a claim; the release wakes it.
    assert!(w.try_claim(0));
    let (tx, rx) = mpsc::channel();
    let pinner = std::thread::spawn({
        let w = Arc::clone(&w);
        move || {
            w.pin(0);
            tx.send(()).unwrap();
        }
    });
    asleep(&w);
    w.release(0);
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("the release wakes the pinner");
    pinner.join().unwrap();
    assert_eq!(w.word(0) & (EVICTING | WAITING), 0);
    // A write-back sleeps on the pin; the last unpin wakes it.
    w.pin(0); // two pins now
    let (tx, rx) = mpsc::channel();
    let writer = std::thread::spawn({
        let w = Arc::clone(&w);
        move || {
            w.wait_unpinned(0);
            tx.send(()).unwrap();
        }
    });
    asleep(&w);
    assert_eq!(w.unpin(0, false), None);
    assert!(w.word(0) & WAITING != 0, "one pin left: still asleep");
    assert_eq!(w.unpin(0, false), None);
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("the last unpin wakes the write-back");
    writer.join().unwrap();
    assert_eq!(w.word(0), 0);
    assert!(w.try_claim(0));
}

/// Review of issue 15, item 7: when the residency test says a page the
/// books call resident is gone, the fault is served as a new fill, which
/// used to clear the page's word first; if the page was there after all
/// (`mincore` says a swapped-out anonymous page is not in memory), the
/// copy finds it (EEXIST) and the page kept its written bytes but lost its
/// DIRTY flag: the write was never written back. Now its flags stay. (The
/// residency test itself reads /proc/self/pagemap, which counts a swapped
/// page as there; the hook makes it wrong once, as mincore was with swap.)
#[test]
#[cfg_attr(miri, ignore = "userfaultfd and files")]
fn a_page_wrongly_thought_gone_keeps_its_dirty_bytes() {
    for m in [Method::Uffd, Method::UffdWp] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.dat");
        std::fs::write(&path, vec![0x11; 4 * PG]).unwrap();
        let spec = spec_of(&path, true, 4 * PG, SyncPolicy::End);
        let Some(mut eng) = open(m, &spec, 16) else {
            return;
        };
        req(&mut eng, Op::Write, PG, &[0x77; PG]).unwrap();
        let s = Arc::clone(eng.shared().unwrap());
        assert!(s.present(1) && s.words.dirty(1), "{m}");
        super::pager::hooks::ABSENT_ONCE.with(|a| a.set(Some(1)));
        let mut bounce = crate::buf::AlignedBuf::new(PG, PG);
        s.fill(1, false, &mut bounce).unwrap();
        super::pager::hooks::ABSENT_ONCE.with(|a| a.set(None));
        assert!(
            s.words.dirty(1),
            "{m}: the written page lost its DIRTY flag"
        );
        assert!(s.lock().books.is_resident(1), "{m}");
        assert_eq!(req(&mut eng, Op::Read, PG, &[0; PG]).unwrap(), [0x77; PG]);
        eng.flush_end(crate::SyncCall::Fsync).unwrap();
        drop(s);
        drop(eng);
        let disk = std::fs::read(&path).unwrap();
        assert!(
            disk[PG..2 * PG].iter().all(|&b| b == 0x77),
            "{m}: written back"
        );
    }
}

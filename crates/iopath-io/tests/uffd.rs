//! `uffd` and `uffd-wp`: a region served by a userfaultfd thread.
//!
//! Every test first checks that the method can open here (a userfaultfd,
//! O_DIRECT on the target directory); where it cannot, the test says why on
//! stderr and passes, as the conformance suite does.

mod uffd_common;

use iopath_io::data::Rng;
use iopath_io::engines::uffd::{self, UffdStats};
use iopath_io::{probe_method, Engine, IoReq, Method, Op, SyncPolicy};
use uffd_common::*;

/// Reads through a region larger than the budget equal the file: pages are
/// evicted and faulted in again, never more than the budget resident.
#[test]
fn reads_equal_the_file_with_evictions() {
    for m in METHODS {
        // 100 pages and a partial one.
        let t = Target::new(1, 100 * PAGE + 1234);
        let Some(mut eng) = engine(m, &t, false, SyncPolicy::None, PAGE, 8) else {
            return;
        };
        let len = t.data.len();
        for off in (0..len).step_by(PAGE) {
            let got = read_at(&mut eng, off, PAGE);
            same(&got, &t.data[off..(off + PAGE).min(len)], "sequential read");
        }
        let mut rng = Rng::new(7);
        for _ in 0..500 {
            let off = rng.below(len as u64) as usize;
            let n = 1 + rng.below(PAGE as u64) as usize;
            let got = read_at(&mut eng, off, n);
            same(&got, &t.data[off..(off + n).min(len)], "random read");
        }
        // Past the end: nothing.
        assert!(read_at(&mut eng, len, PAGE).is_empty());
        let s = eng.stats();
        eprintln!("{m}: {s:?}");
        assert!(s.faults >= 101, "every page faulted at least once: {s:?}");
        assert!(s.evictions >= 93 && s.evictions + 8 >= s.faults, "{s:?}");
        assert!(s.max_resident_pages <= 8 && s.resident_pages <= 8, "{s:?}");
        assert_eq!((s.writebacks, s.wp_faults), (0, 0), "read-only: {s:?}");
    }
}

/// A request spanning several pages works with a budget of one page: the
/// engine copies page by page, so no copy needs two pages at once.
#[test]
fn one_resident_page_is_enough() {
    for m in METHODS {
        within_10s("requests with a budget of one page", move || {
            let t = Target::new(2, 40 * PAGE);
            let bs = 5 * PAGE + 100;
            let Some(mut eng) = engine(m, &t, true, SyncPolicy::End, bs, 1) else {
                return;
            };
            let mut want = t.data.clone();
            let new = vec![0x5C; bs];
            assert_eq!(write_at(&mut eng, 3 * PAGE + 7, &new), bs as u32);
            want[3 * PAGE + 7..3 * PAGE + 7 + bs].copy_from_slice(&new);
            let got = read_at(&mut eng, 2 * PAGE + 1, bs);
            same(&got, &want[2 * PAGE + 1..2 * PAGE + 1 + bs], "read back");
            assert!(eng.stats().max_resident_pages <= 1, "{:?}", eng.stats());
            eng.flush(SyncPolicy::End).unwrap();
            same(&t.on_disk(), &want, "file after flush");
        });
    }
}

/// Random writes of any offset and length reach the file, byte for byte,
/// after flush(End), and the file keeps its length (the page holding end of
/// file is written back only up to it).
#[test]
fn writes_reach_the_file_after_flush() {
    for m in METHODS {
        let t = Target::new(3, 64 * PAGE + 777);
        let len = t.data.len();
        let Some(mut eng) = engine(m, &t, true, SyncPolicy::End, PAGE, 8) else {
            return;
        };
        let mut want = t.data.clone();
        let mut rng = Rng::new(11);
        let mut data = vec![0u8; PAGE];
        for i in 0..400 {
            let off = rng.below(len as u64) as usize;
            let n = 1 + rng.below(PAGE as u64) as usize;
            rng.fill(&mut data[..n]);
            let wrote = write_at(&mut eng, off, &data[..n]) as usize;
            assert_eq!(
                wrote,
                n.min(len - off),
                "write {i}: short only at end of file"
            );
            want[off..off + wrote].copy_from_slice(&data[..wrote]);
        }
        // A write across end of file: short, the file does not grow.
        assert_eq!(write_at(&mut eng, len - 10, &[0xEE; 100]), 10);
        want[len - 10..].fill(0xEE);
        // Reads through the region see the writes before any write-back.
        for off in (0..len).step_by(PAGE) {
            let got = read_at(&mut eng, off, PAGE);
            same(&got, &want[off..(off + PAGE).min(len)], "read after write");
        }
        eng.flush(SyncPolicy::End).expect("flush");
        same(&t.on_disk(), &want, &format!("{m}: file after flush"));
        let s = eng.stats();
        eprintln!("{m}: {s:?}");
        assert!(s.evictions > 0 && s.writebacks > 0, "{s:?}");
        within_10s("drop", move || drop(eng));
        same(&t.on_disk(), &want, &format!("{m}: file after drop"));
    }
}

/// With a larger budget pages leave in batches (1/16 of the budget), dirty
/// neighbours in one write: the data stays right, the budget holds.
#[test]
fn batched_eviction_keeps_the_data() {
    for m in METHODS {
        let t = Target::new(14, 300 * PAGE);
        let len = t.data.len();
        let Some(mut eng) = engine(m, &t, true, SyncPolicy::End, 3 * PAGE, 64) else {
            return;
        };
        let mut want = t.data.clone();
        // Sequential stores over every page, then random ones.
        let mut rng = Rng::new(15);
        let mut data = vec![0u8; 3 * PAGE];
        for off in (0..len).step_by(3 * PAGE) {
            rng.fill(&mut data);
            assert_eq!(write_at(&mut eng, off, &data), data.len() as u32);
            want[off..off + data.len()].copy_from_slice(&data);
        }
        for _ in 0..300 {
            let off = rng.below(len as u64) as usize;
            let n = (1 + rng.below(3 * PAGE as u64) as usize).min(len - off);
            rng.fill(&mut data[..n]);
            write_at(&mut eng, off, &data[..n]);
            want[off..off + n].copy_from_slice(&data[..n]);
            let r = rng.below(len as u64) as usize;
            let got = read_at(&mut eng, r, 3 * PAGE);
            same(&got, &want[r..(r + 3 * PAGE).min(len)], "read among writes");
        }
        let s = eng.stats();
        eprintln!("{m}: {s:?}");
        assert!(s.max_resident_pages <= 64, "{s:?}");
        assert_eq!(s.evictions % 4, 0, "batches of 64 / 16 pages: {s:?}");
        eng.flush(SyncPolicy::End).unwrap();
        same(&t.on_disk(), &want, &format!("{m}: file after flush"));
    }
}

/// uffd-wp writes back only the pages that were stored to: write to 3 of
/// 100 pages with a budget of 8, and 3 pages are written back. Pages that
/// were only read are never written: bytes changed in the file behind the
/// engine's back stay as they were changed.
#[test]
fn write_protect_writes_back_only_written_pages() {
    let t = Target::new(4, 100 * PAGE);
    let Some(mut eng) = engine(Method::UffdWp, &t, true, SyncPolicy::End, PAGE, 8) else {
        return;
    };
    // Fault every page in (read), so pages 92..99 are resident and clean.
    for p in 0..100 {
        read_at(&mut eng, p * PAGE, PAGE);
    }
    let s = eng.stats();
    assert_eq!(
        (s.evictions, s.writebacks),
        (92, 0),
        "clean evictions: {s:?}"
    );
    // Change a resident clean page (95) and an evicted one (20) in the file
    // directly: only a write-back of a page never written would undo that.
    t.poke(95 * PAGE, 0xA5, PAGE);
    t.poke(20 * PAGE + 100, 0x5A, 50);
    let mut want = t.data.clone();
    want[95 * PAGE..96 * PAGE].fill(0xA5);
    want[20 * PAGE + 100..20 * PAGE + 150].fill(0x5A);
    // Store to 3 pages: two not resident (10, 50), one resident and
    // write-protected (99, a write-protect fault).
    for (p, at, n) in [(10, 0, PAGE), (50, 123, 1000), (99, 4000, 96)] {
        let bytes = vec![p as u8; n];
        assert_eq!(write_at(&mut eng, p * PAGE + at, &bytes), n as u32);
        want[p * PAGE + at..p * PAGE + at + n].copy_from_slice(&bytes);
    }
    let s = eng.stats();
    assert_eq!(s.writebacks, 0, "nothing written back before flush: {s:?}");
    assert!(s.wp_faults >= 1, "the store to page 99 faulted: {s:?}");
    eng.flush(SyncPolicy::End).expect("flush");
    let s = eng.stats();
    eprintln!("uffd-wp after flush: {s:?}");
    assert_eq!(s.writebacks, 3, "exactly the 3 written pages: {s:?}");
    same(&t.on_disk(), &want, "file after flush");
    // Flushed pages are clean again: a second flush writes nothing, and
    // a store to one faults again and is written again.
    eng.flush(SyncPolicy::End).expect("flush");
    assert_eq!(eng.stats().writebacks, 3);
    let wp = eng.stats().wp_faults;
    assert_eq!(write_at(&mut eng, 99 * PAGE, &[1, 2, 3]), 3);
    want[99 * PAGE..99 * PAGE + 3].copy_from_slice(&[1, 2, 3]);
    assert_eq!(
        eng.stats().wp_faults,
        wp + 1,
        "re-protected after write-back"
    );
    eng.flush(SyncPolicy::End).expect("flush");
    assert_eq!(eng.stats().writebacks, 4);
    same(&t.on_disk(), &want, "file after the second store");
    drop(eng);
    same(&t.on_disk(), &want, "file after drop");
}

/// uffd-wp: dirty pages evicted to make room are written back then, once.
#[test]
fn write_protect_writes_back_dirty_pages_on_eviction() {
    let t = Target::new(5, 100 * PAGE);
    let Some(mut eng) = engine(Method::UffdWp, &t, true, SyncPolicy::End, PAGE, 8) else {
        return;
    };
    let mut want = t.data.clone();
    for p in [3, 40, 77] {
        assert_eq!(write_at(&mut eng, p * PAGE + 1, &[9; 10]), 10);
        want[p * PAGE + 1..p * PAGE + 11].fill(9);
    }
    for p in 0..100 {
        let got = read_at(&mut eng, p * PAGE, PAGE);
        same(&got, &want[p * PAGE..(p + 1) * PAGE], "read");
    }
    let s = eng.stats();
    assert_eq!(s.writebacks, 3, "written back on eviction: {s:?}");
    eng.flush(SyncPolicy::End).unwrap();
    assert_eq!(eng.stats().writebacks, 3, "nothing dirty left");
    same(&t.on_disk(), &want, "file after flush");
}

/// uffd cannot see stores, but a write request marks the pages it copied
/// into dirty. Pages only read are never written back: a page changed in
/// the file behind the engine's back stays as it was changed. Written pages
/// are written back on eviction and at flush, and stay resident and clean
/// after a flush. A read-only engine writes nothing back.
#[test]
fn plain_mode_writes_back_only_written_pages() {
    let t = Target::new(6, 100 * PAGE);
    let Some(mut eng) = engine(Method::Uffd, &t, true, SyncPolicy::End, PAGE, 8) else {
        return;
    };
    for p in 0..100 {
        read_at(&mut eng, p * PAGE, PAGE);
    }
    let s = eng.stats();
    assert_eq!(
        (s.evictions, s.writebacks),
        (92, 0),
        "clean evictions: {s:?}"
    );
    t.poke(95 * PAGE, 0xA5, PAGE); // resident in the engine, only read
    let mut want = t.data.clone();
    want[95 * PAGE..96 * PAGE].fill(0xA5);
    eng.flush(SyncPolicy::End).unwrap();
    let s = eng.stats();
    assert_eq!((s.writebacks, s.resident_pages), (0, 8), "{s:?}");
    same(&t.on_disk(), &want, "page 95 as changed behind the engine");
    // Two pages not resident (10, 50) and one resident (99).
    for (p, at, n) in [(10, 0, PAGE), (50, 123, 1000), (99, 4000, 96)] {
        let bytes = vec![p as u8; n];
        assert_eq!(write_at(&mut eng, p * PAGE + at, &bytes), n as u32);
        want[p * PAGE + at..p * PAGE + at + n].copy_from_slice(&bytes);
    }
    assert_eq!(
        eng.stats().writebacks,
        0,
        "nothing written back before flush"
    );
    eng.flush(SyncPolicy::End).unwrap();
    let s = eng.stats();
    assert_eq!(
        (s.writebacks, s.resident_pages),
        (3, 8),
        "the 3 written pages: {s:?}"
    );
    same(&t.on_disk(), &want, "file after flush");
    eng.flush(SyncPolicy::End).unwrap();
    assert_eq!(eng.stats().writebacks, 3, "clean after a flush");
    // A dirty page evicted to make room is written back then, once.
    assert_eq!(write_at(&mut eng, 20 * PAGE + 5, &[7; 10]), 10);
    want[20 * PAGE + 5..20 * PAGE + 15].fill(7);
    for p in 60..70 {
        read_at(&mut eng, p * PAGE, PAGE);
    }
    assert_eq!(
        eng.stats().writebacks,
        4,
        "page 20 on eviction: {:?}",
        eng.stats()
    );
    same(&t.on_disk(), &want, "file after the eviction");
    eng.flush(SyncPolicy::End).unwrap();
    assert_eq!(eng.stats().writebacks, 4, "nothing dirty left");
    drop(eng);
    same(&t.on_disk(), &want, "file after drop");

    let Some(mut ro) = engine(Method::Uffd, &t, false, SyncPolicy::End, PAGE, 8) else {
        return;
    };
    for p in 0..100 {
        read_at(&mut ro, p * PAGE, PAGE);
    }
    ro.flush(SyncPolicy::End).unwrap();
    let s = ro.stats();
    assert_eq!((s.evictions, s.writebacks), (92, 0), "{s:?}");
    // A read-only engine refuses writes, as mmap does.
    ro.buf_mut(0).unwrap()[..10].fill(1);
    let mut done = Vec::new();
    let w = IoReq {
        op: Op::Write,
        offset: 0,
        len: 10,
        slot: 0,
    };
    ro.submit(&[w], &mut done).unwrap();
    assert_eq!(done[0].result, Err(libc::EBADF));
}

/// dsync/osync/each write back what each write dirtied before it completes.
#[test]
fn sync_policies_write_back_per_request() {
    for m in METHODS {
        for policy in [SyncPolicy::Dsync, SyncPolicy::Each, SyncPolicy::Osync] {
            let t = Target::new(8, 20 * PAGE);
            let Some(mut eng) = engine(m, &t, true, policy, PAGE, 4) else {
                return;
            };
            let mut want = t.data.clone();
            for (k, p) in [2usize, 9, 15].into_iter().enumerate() {
                let off = p * PAGE + 2000; // spans pages p and p + 1
                assert_eq!(write_at(&mut eng, off, &[k as u8; PAGE]), PAGE as u32);
                want[off..off + PAGE].fill(k as u8);
                same(
                    &t.on_disk(),
                    &want,
                    &format!("{m} {policy:?}: after write {k}"),
                );
            }
            assert_eq!(
                eng.stats().writebacks,
                6,
                "{m} {policy:?}: 2 pages per write"
            );
        }
    }
}

/// Dropping an engine stops and joins its fault thread, whatever it was
/// doing, and an engine open for writing writes its dirty pages back.
#[test]
fn drop_joins_the_fault_thread() {
    for m in METHODS {
        let t = Target::new(9, 32 * PAGE);
        let Some(eng) = engine(m, &t, false, SyncPolicy::None, PAGE, 4) else {
            return;
        };
        within_10s("drop right after open", move || drop(eng));
        for round in 0..10 {
            let mut eng = engine(m, &t, true, SyncPolicy::None, PAGE, 4).unwrap();
            for p in 0..(round + 3) {
                write_at(&mut eng, p * PAGE + round, &[round as u8; 64]);
            }
            within_10s("drop with dirty pages", move || drop(eng));
        }
        let disk = t.on_disk();
        let mut want = t.data.clone();
        for round in 0..10 {
            for p in 0..(round + 3) {
                want[p * PAGE + round..p * PAGE + round + 64].fill(round as u8);
            }
        }
        same(&disk, &want, "file after dropped writes");
    }
}

/// Several engines, each with its own region and handler, in parallel.
#[test]
fn engines_in_parallel_threads() {
    let t = std::sync::Arc::new(Target::new(10, 64 * PAGE));
    if engine(Method::UffdWp, &t, false, SyncPolicy::None, PAGE, 4).is_none() {
        return;
    }
    let workers: Vec<_> = (0..4u64)
        .map(|w| {
            let t = t.clone();
            std::thread::spawn(move || {
                let m = METHODS[w as usize % 2];
                let mut eng = engine(m, &t, false, SyncPolicy::None, PAGE, 4).unwrap();
                let mut rng = Rng::new(w);
                for _ in 0..300 {
                    let off = rng.below(t.data.len() as u64) as usize;
                    let got = read_at(&mut eng, off, 512);
                    same(&got, &t.data[off..(off + 512).min(t.data.len())], "read");
                }
            })
        })
        .collect();
    within_10s("parallel engines", move || {
        for w in workers {
            w.join().unwrap();
        }
    });
}

/// The probe opens both methods and reads; the notes say what the engine is.
#[test]
fn probe_and_notes() {
    let t = Target::new(11, 10 * PAGE);
    for m in METHODS {
        let st = probe_method(m, &t.path, PAGE);
        if let Some(why) = &st.unusable {
            eprintln!("skipped {m}: {why}");
            continue;
        }
        let notes = st.notes.join("; ");
        let wp = if m == Method::UffdWp { "on" } else { "off" };
        assert!(notes.contains(&format!("write-protect: {wp}")), "{notes}");
        let eng = engine(m, &t, true, SyncPolicy::End, PAGE, 8).unwrap();
        let first = &eng.caps().notes[0];
        assert_eq!(
            first,
            &format!(
                "{m}: region of 40 KiB, at most 8 resident pages (32 KiB), write-protect: {wp}"
            )
        );
        let caps = eng.caps();
        assert!(!caps.is_async && caps.queue_depth == 1 && caps.offset_align == 1);
        assert_eq!(eng.stats(), UffdStats::default(), "nothing touched yet");
    }
}

/// `configure` sets the budget of engines opened through `iopath_io::open`.
#[test]
fn configure_sets_the_budget() {
    let t = Target::new(12, 10 * PAGE);
    if engine(Method::Uffd, &t, false, SyncPolicy::None, PAGE, 1).is_none() {
        return;
    }
    let before = uffd::configured_resident_bytes();
    uffd::configure(16 * PAGE as u64);
    let eng = iopath_io::open(Method::Uffd, &t.spec(false, SyncPolicy::None, PAGE));
    uffd::configure(before);
    let notes = eng.expect("open").caps().notes.join("; ");
    assert!(
        notes.contains("at most 16 resident pages (64 KiB)"),
        "{notes}"
    );
}

/// An empty file maps nothing: reads return 0 bytes, flush works.
#[test]
fn empty_span_maps_nothing() {
    let t = Target::new(13, 0);
    for m in METHODS {
        let Some(mut eng) = engine(m, &t, true, SyncPolicy::End, PAGE, 8) else {
            return;
        };
        assert!(read_at(&mut eng, 0, PAGE).is_empty());
        assert_eq!(write_at(&mut eng, 0, &[1; 10]), 0);
        eng.flush(SyncPolicy::End).unwrap();
        assert_eq!(eng.stats(), UffdStats::default());
    }
    assert!(t.on_disk().is_empty());
}

//! Issue 15, item 1: several `uffd` / `uffd-wp` engines on one file (the
//! workers of one case) keep every completed write.
//!
//! Each engine used to keep a copy of each page of its own and write back
//! whole pages; plain `uffd` counted every resident page as dirty. A page
//! only read by one engine was written back over another engine's flushed
//! write, and two engines writing different bytes of one page each wrote
//! back their own copy, so the second flush undid the first. These tests
//! open two or four engines on one file, interleave writes and flushes, and
//! check every byte of the file.
//!
//! Where the method cannot work here, each test says why on stderr and
//! passes, as the conformance suite does. No test measures time.

mod uffd_common;

use std::sync::{Arc, Barrier};

use iopath_io::data::Rng;
use iopath_io::engines::uffd::UffdEngine;
use iopath_io::{Engine, Method, SyncPolicy};
use uffd_common::*;

/// `NAME` as two tests, `NAME::uffd` and `NAME::uffd_wp`, so that each
/// method passes or fails on its own.
macro_rules! both_methods {
    ($name:ident) => {
        mod $name {
            #[test]
            fn uffd() {
                super::$name(iopath_io::Method::Uffd);
            }
            #[test]
            fn uffd_wp() {
                super::$name(iopath_io::Method::UffdWp);
            }
        }
    };
}

both_methods!(issue15_a_page_only_read_never_undoes_a_flushed_write);
both_methods!(issue15_two_engines_writing_one_page_both_keep_their_bytes);
both_methods!(issue15_dsync_writes_of_two_engines_on_one_page);
both_methods!(issue15_four_engines_in_threads_keep_every_write);

/// Two engines of `m` on `t`, opened for writing (as the workers of a
/// randrw case are), with a budget of `pages` pages.
fn pair(m: Method, t: &Target, sync: SyncPolicy, pages: u64) -> Option<(UffdEngine, UffdEngine)> {
    let a = engine(m, t, true, sync, PAGE, pages)?;
    let b = engine(m, t, true, sync, PAGE, pages)?;
    Some((a, b))
}

/// Engine A reads page 0; B writes 0xBB there and flushes. Neither A's
/// drop nor A's flush may bring the old byte back.
fn issue15_a_page_only_read_never_undoes_a_flushed_write(m: Method) {
    for a_flushes in [false, true] {
        let t = Target::with(vec![0x11; 8 * PAGE]);
        let Some((mut a, mut b)) = pair(m, &t, SyncPolicy::End, 16) else {
            return;
        };
        same(&read_at(&mut a, 0, PAGE), &t.data[..PAGE], "A reads page 0");
        assert_eq!(write_at(&mut b, 0, &[0xBB; 100]), 100);
        b.flush(SyncPolicy::End).expect("flush B");
        let mut want = t.data.clone();
        want[..100].fill(0xBB);
        same(&t.on_disk(), &want, &format!("{m}: after B's flush"));
        if a_flushes {
            a.flush(SyncPolicy::End).expect("flush A");
            same(&t.on_disk(), &want, &format!("{m}: after A's flush"));
        }
        within_10s("drop A", move || drop(a));
        same(&t.on_disk(), &want, &format!("{m}: after A's drop"));
        within_10s("drop B", move || drop(b));
        same(&t.on_disk(), &want, &format!("{m}: after B's drop"));
    }
}

/// A writes bytes 0..512 of page 0, B bytes 512..1024; both flush, in
/// either order, with writes between the flushes too. Every byte of both
/// is in the file after the flushes and after the drops.
fn issue15_two_engines_writing_one_page_both_keep_their_bytes(m: Method) {
    for a_first in [true, false] {
        let t = Target::with(vec![0x11; 8 * PAGE]);
        let Some((mut a, mut b)) = pair(m, &t, SyncPolicy::End, 16) else {
            return;
        };
        let mut want = t.data.clone();
        assert_eq!(write_at(&mut a, 0, &[0xAA; 512]), 512);
        want[..512].fill(0xAA);
        assert_eq!(write_at(&mut b, 512, &[0xBB; 512]), 512);
        want[512..1024].fill(0xBB);
        let (first, second) = if a_first {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        first.flush(SyncPolicy::End).expect("first flush");
        // A write after the first flush, by the engine that flushes
        // second, to a byte of the other engine's half's page.
        assert_eq!(write_at(second, 2000, &[0xCC; 10]), 10);
        want[2000..2010].fill(0xCC);
        second.flush(SyncPolicy::End).expect("second flush");
        same(&t.on_disk(), &want, &format!("{m}: after both flushes"));
        // And each engine reads what the other wrote.
        same(&read_at(&mut a, 0, PAGE), &want[..PAGE], "A reads page 0");
        same(&read_at(&mut b, 0, PAGE), &want[..PAGE], "B reads page 0");
        a.flush(SyncPolicy::End).expect("flush A again");
        same(&t.on_disk(), &want, &format!("{m}: after A's second flush"));
        within_10s("drop both", move || {
            drop(a);
            drop(b);
        });
        same(&t.on_disk(), &want, &format!("{m}: after the drops"));
    }
}

/// Under `dsync`, each write is in the file when it completes, whichever
/// engine wrote the page before.
fn issue15_dsync_writes_of_two_engines_on_one_page(m: Method) {
    let t = Target::with(vec![0x11; 8 * PAGE]);
    let Some((mut a, mut b)) = pair(m, &t, SyncPolicy::Dsync, 16) else {
        return;
    };
    let mut want = t.data.clone();
    for k in 0..8usize {
        let (eng, byte) = if k % 2 == 0 {
            (&mut a, 0xA0 + k as u8)
        } else {
            (&mut b, 0xB0 + k as u8)
        };
        let off = k * 300;
        assert_eq!(write_at(eng, off, &[byte; 300]), 300);
        want[off..off + 300].fill(byte);
        same(&t.on_disk(), &want, &format!("{m}: after write {k}"));
    }
    within_10s("drop both", move || {
        drop(a);
        drop(b);
    });
    same(&t.on_disk(), &want, &format!("{m}: after the drops"));
}

/// Four engines in four threads, as `--threads 4` runs them, with a budget
/// small enough that pages are evicted all the time. The file is cut in
/// 64-byte stripes, stripe `s` belonging to engine `s % 4`: every page is
/// written by all four, yet every byte has one writer, so the file's final
/// contents are known. Each engine writes random pieces of its stripes,
/// reads its stripes back (they must hold what it wrote, whatever the
/// others did meanwhile) and flushes now and then. After the flushes and
/// after the drops, every byte of the file is checked.
fn issue15_four_engines_in_threads_keep_every_write(m: Method) {
    const STRIPE: usize = 64;
    const ENGINES: usize = 4;
    const LEN: usize = 48 * PAGE + 1000; // and a partial page at the end
    let t = Arc::new(Target::new(20, LEN));
    if engine(m, &t, false, SyncPolicy::None, PAGE, 8).is_none() {
        return;
    }
    let opened = Arc::new(Barrier::new(ENGINES));
    let flushed = Arc::new(Barrier::new(ENGINES));
    let checked = Arc::new(Barrier::new(ENGINES));
    let workers: Vec<_> = (0..ENGINES)
        .map(|w| {
            let (t, opened, flushed, checked) =
                (t.clone(), opened.clone(), flushed.clone(), checked.clone());
            std::thread::spawn(move || {
                let mut eng = engine(m, &t, true, SyncPolicy::End, PAGE, 8).unwrap();
                opened.wait();
                // This engine's view of the file: only its own stripes
                // are known (the others change under it).
                let mut mine = t.data.clone();
                let mut rng = Rng::new(100 + w as u64);
                let stripes = LEN.div_ceil(STRIPE);
                let mut buf = [0u8; STRIPE];
                for i in 0..1500 {
                    let s = rng.below((stripes / ENGINES) as u64) as usize * ENGINES + w;
                    let start = s * STRIPE;
                    if start >= LEN {
                        continue;
                    }
                    let end = (start + STRIPE).min(LEN);
                    let off = start + rng.below((end - start) as u64) as usize;
                    let n = 1 + rng.below((end - off) as u64) as usize;
                    rng.fill(&mut buf[..n]);
                    assert_eq!(write_at(&mut eng, off, &buf[..n]), n as u32);
                    mine[off..off + n].copy_from_slice(&buf[..n]);
                    let got = read_at(&mut eng, start, end - start);
                    same(
                        &got,
                        &mine[start..end],
                        &format!("{m} engine {w}: read back"),
                    );
                    if i % 300 == 299 {
                        eng.flush(SyncPolicy::End).expect("flush");
                    }
                }
                eng.flush(SyncPolicy::End).expect("last flush");
                flushed.wait();
                // Every engine has flushed: this engine's stripes are in
                // the file, whatever the others wrote back.
                let disk = t.on_disk();
                for s in (w..stripes).step_by(ENGINES) {
                    let (a, b) = (s * STRIPE, ((s + 1) * STRIPE).min(LEN));
                    same(
                        &disk[a..b],
                        &mine[a..b],
                        &format!("{m} engine {w}: file after the flushes, stripe {s}"),
                    );
                }
                checked.wait();
                drop(eng);
                mine
            })
        })
        .collect();
    let views = within(120, "four engines", move || {
        workers
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect::<Vec<_>>()
    });
    let mut want = t.data.clone();
    for (s, chunk) in want.chunks_mut(STRIPE).enumerate() {
        let view = &views[s % ENGINES];
        chunk.copy_from_slice(&view[s * STRIPE..s * STRIPE + chunk.len()]);
    }
    same(&t.on_disk(), &want, &format!("{m}: file after the drops"));
}

//! Unit tests of the user-space cache: CLOCK, the shard split, the
//! geometry, write modes, node lists.

use std::path::Path;

use rustix::io::ReadWriteFlags;

use super::cache::{hooks, merge_nodes, shared_with, UcacheShared};
use super::clock::{frames_in_shard, shard_of, Clock, FrameState};
use super::config::fmt_size;
use super::{UcacheConfig, WriteMode};
use crate::sys::DioAlign;
use crate::SyncPolicy;

#[test]
fn clock_gives_a_second_chance_in_hand_order() {
    let mut c = Clock::new(3);
    // Free frames first, in order.
    for (page, want) in [(10, 0), (11, 1), (12, 2)] {
        let f = c.victim();
        assert_eq!(f, want);
        c.install(f, page);
    }
    assert_eq!(c.lookup(11), Some(1));
    assert_eq!(c.lookup(99), None);
    // All referenced: the hand clears 0, 1, 2 and comes back to 0.
    let f = c.victim();
    assert_eq!(f, 0);
    c.install(f, 13);
    assert!(!c.frames[1].referenced && !c.frames[2].referenced);
    assert_eq!(c.lookup(10), None, "page 10 was evicted");
    // Page 11 used again: its bit saves it, 12 (unreferenced) goes.
    c.lookup(11);
    let f = c.victim();
    assert_eq!(f, 2, "11 passed over, 12 evicted");
    assert!(!c.frames[1].referenced, "second chance spent");
    c.install(f, 14);
    // Next: the hand is at 0 (page 13, referenced at install): cleared;
    // 1 (page 11, bit spent) goes.
    assert_eq!(c.victim(), 1);
    assert_eq!(
        c.frames.iter().map(|s| s.page).collect::<Vec<_>>(),
        [Some(13), Some(11), Some(14)]
    );
}

#[test]
fn clock_table_follows_installs_and_drops() {
    let mut c = Clock::new(2);
    c.install(0, 5);
    c.frames[0].dirty = true;
    c.install(0, 6); // replaces 5
    assert_eq!(c.lookup(5), None);
    assert_eq!(c.lookup(6), Some(0));
    assert!(!c.frames[0].dirty, "a new page is clean");
    c.drop_frame(0);
    assert_eq!(c.lookup(6), None);
    assert_eq!(c.frames[0], FrameState::default());
    // A free frame is taken before a referenced one.
    c.install(1, 7);
    c.hand = 1;
    assert_eq!(c.victim(), 0);
}

#[test]
fn pages_map_to_shards_round_robin() {
    assert_eq!(
        (0..10).map(|p| shard_of(p, 4)).collect::<Vec<_>>(),
        [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    );
    assert_eq!(shard_of(u64::MAX, 8), 7);
    assert_eq!(shard_of(12345, 1), 0);
    // 10 frames over 4 shards: 3, 3, 2, 2.
    let split: Vec<usize> = (0..4).map(|i| frames_in_shard(10, 4, i)).collect();
    assert_eq!(split, [3, 3, 2, 2]);
    assert_eq!(split.iter().sum::<usize>(), 10);
    assert_eq!(frames_in_shard(8, 8, 7), 1);
}

#[test]
fn geometry_is_described_and_checked() {
    assert_eq!(
        UcacheConfig::DEFAULT.describe(),
        "64 MiB in 4 KiB pages, 8 shards"
    );
    let tiny = UcacheConfig::new(3 * 4096 + 100, 4096);
    assert_eq!(tiny.pages(), 3);
    assert_eq!(tiny.effective_shards(), 3);
    assert_eq!(tiny.describe(), "12 KiB in 4 KiB pages, 3 shards");
    assert_eq!(
        UcacheConfig::new(4096, 4096).describe(),
        "4 KiB in 4 KiB pages, 1 shard"
    );
    let dio = DioAlign {
        mem: 512,
        offset: 512,
        source: "statx DIOALIGN",
    };
    let p = Path::new("/x/f.dat");
    assert_eq!(UcacheConfig::new(1 << 20, 1536).check(p, &dio), None);
    let why = UcacheConfig::new(1 << 20, 1000).check(p, &dio).unwrap();
    assert!(
        why.contains("not a multiple of the O_DIRECT alignment of /x/f.dat (512 bytes")
            && why.contains("1024"),
        "{why}"
    );
    let why = UcacheConfig::new(100, 4096).check(p, &dio).unwrap();
    assert!(why.contains("holds no page"), "{why}");
    assert!(UcacheConfig::new(1 << 20, 0).check(p, &dio).is_some());
    let none = UcacheConfig::new(1 << 20, 4096).with_shards(0);
    assert!(none.check(p, &dio).is_some());
}

#[test]
fn sizes_read_plainly() {
    assert_eq!(fmt_size(64 << 20), "64 MiB");
    assert_eq!(fmt_size(4096), "4 KiB");
    assert_eq!(fmt_size(1 << 30), "1 GiB");
    assert_eq!(fmt_size(1536), "1536 B");
    assert_eq!(fmt_size(0), "0 B");
}

#[test]
fn write_modes_follow_the_sync_policy() {
    assert_eq!(WriteMode::for_sync(SyncPolicy::End), WriteMode::Back);
    assert_eq!(WriteMode::for_sync(SyncPolicy::None), WriteMode::Back);
    assert_eq!(
        WriteMode::for_sync(SyncPolicy::Dsync),
        WriteMode::Through(ReadWriteFlags::DSYNC)
    );
    assert_eq!(
        WriteMode::for_sync(SyncPolicy::Osync),
        WriteMode::Through(ReadWriteFlags::SYNC)
    );
    assert_eq!(
        WriteMode::for_sync(SyncPolicy::Each),
        WriteMode::ThroughFsync
    );
}

#[test]
fn node_lists_merge_in_order() {
    let mut a = vec![(0, 3), (2, 1)];
    merge_nodes(&mut a, &[(1, 5), (2, 2), (3, 1)]);
    assert_eq!(a, [(0, 3), (1, 5), (2, 3), (3, 1)]);
}

const PAGE: usize = 4096;

/// A file of `data` and a writable cache of it, `pages` pages in one shard.
fn cache_of(data: &[u8], pages: u64) -> (tempfile::TempDir, std::sync::Arc<UcacheShared>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.dat");
    std::fs::write(&path, data).unwrap();
    let cfg = UcacheConfig::new(pages * PAGE as u64, PAGE).with_shards(1);
    let (cache, _) = shared_with(&path, cfg, true, false, None).unwrap();
    (dir, cache)
}

fn bytes(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

fn read(cache: &UcacheShared, offset: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0xee; len];
    let n = cache.read(offset, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

/// A reader running while a write past the end is between its pages sees
/// the old end, never the new size with zeros where the data has not been
/// copied yet. (The size used to be published first.)
#[test]
fn a_reader_never_sees_an_extension_before_its_data() {
    let old = bytes(1, 2 * PAGE);
    let (_dir, cache) = cache_of(&old, 16);
    let new = bytes(2, 3 * PAGE);
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let (c, s) = (cache.clone(), seen.clone());
    hooks::BETWEEN_PAGES.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            s.borrow_mut()
                .push((c.len(), read(&c, 2 * PAGE as u64, 3 * PAGE)));
        }))
    });
    let n = cache.write(2 * PAGE as u64, &new, WriteMode::Back);
    hooks::BETWEEN_PAGES.with(|h| h.borrow_mut().take());
    assert_eq!(n, Ok(3 * PAGE));
    let seen = seen.take();
    assert_eq!(seen.len(), 2, "the hook ran between the three pages");
    for (len, got) in &seen {
        assert_eq!(*len, 2 * PAGE as u64, "size published before the data");
        let prefix = &new[..got.len()];
        assert!(
            got == prefix,
            "read {} bytes past the old end that are not the data written",
            got.len()
        );
    }
    assert_eq!(cache.len(), 5 * PAGE as u64);
    assert!(read(&cache, 2 * PAGE as u64, 3 * PAGE) == new);
    assert!(read(&cache, 0, 2 * PAGE) == old);
}

/// A write past the end that fails (its second page's write-through gets
/// EIO) leaves the size, the file's length and what reads past the old end
/// give as they were; a later write past both ends reads zeros in between,
/// not the failed write's bytes. (The size used to stay extended.)
#[test]
fn a_failed_write_past_the_end_does_not_extend_the_file() {
    let old_len = 2 * PAGE + 100;
    let old = bytes(3, old_len);
    let (dir, cache) = cache_of(&old, 16);
    let file = dir.path().join("c.dat");
    let new = bytes(4, 2 * PAGE);
    // The first page written through (the short page at 8192) succeeds,
    // and extends the file; the second fails.
    hooks::FAIL_PWRITE_AFTER.with(|c| c.set(Some(1)));
    let res = cache.write(
        old_len as u64,
        &new,
        WriteMode::Through(ReadWriteFlags::DSYNC),
    );
    hooks::FAIL_PWRITE_AFTER.with(|c| c.set(None));
    assert_eq!(res, Err(rustix::io::Errno::IO));
    assert_eq!(
        cache.len(),
        old_len as u64,
        "a failed write extended the size"
    );
    assert_eq!(std::fs::metadata(&file).unwrap().len(), old_len as u64);
    assert!(read(&cache, old_len as u64, PAGE).is_empty());
    assert!(read(&cache, 0, 4 * PAGE) == old);
    // Extend past where the failed write went: zeros in between.
    let tail = bytes(5, 100);
    let at = 5 * PAGE as u64;
    assert_eq!(cache.write(at, &tail, WriteMode::Back), Ok(100));
    assert_eq!(cache.len(), at + 100);
    let gap = read(&cache, old_len as u64, at as usize - old_len);
    assert!(
        gap.iter().all(|&b| b == 0),
        "the failed write's bytes came back"
    );
    cache.flush(crate::SyncCall::Fsync).unwrap();
    let on_disk = std::fs::read(&file).unwrap();
    assert_eq!(on_disk.len(), at as usize + 100);
    assert!(on_disk[..old_len] == old[..]);
    assert!(on_disk[old_len..at as usize].iter().all(|&b| b == 0));
    assert!(on_disk[at as usize..] == tail[..]);
}

/// While a write past the end is in progress, a page of it evicted (the
/// cache holds one page) is written back whole: write-back counts the end
/// being written, not the old one, or the new bytes would be cut off.
#[test]
fn pages_of_a_write_past_the_end_evicted_meanwhile_are_written_whole() {
    let old = bytes(6, PAGE + 10);
    let (dir, cache) = cache_of(&old, 1);
    let new = bytes(7, 3 * PAGE);
    let at = PAGE as u64 + 10;
    assert_eq!(cache.write(at, &new, WriteMode::Back), Ok(3 * PAGE));
    cache.flush(crate::SyncCall::Fsync).unwrap();
    let mut want = old.clone();
    want.extend_from_slice(&new);
    let on_disk = std::fs::read(dir.path().join("c.dat")).unwrap();
    assert_eq!(on_disk.len(), want.len());
    assert!(on_disk == want, "new bytes lost at eviction");
    assert!(read(&cache, 0, want.len()) == want);
}

/// Review of issue 15, item 6: a write past the end fails after one of its
/// pages was evicted by another thread. The eviction's write-back used to
/// read the end being written without the size lock and pwrite afterwards,
/// so its pwrite could land after the failed write's rollback and grow
/// the file again, with bytes of the failed write. Here the cache has one
/// frame per shard (two shards); the file is 3 pages, page 0 dirty. T1
/// writes pages 3 and 4 past the end; between them T2 reads page 1, which
/// evicts page 3 (same shard) and writes it back; T1's page 4 evicts page
/// 0, whose write-back fails, so T1's write fails and rolls back. Before
/// the fix T2's write-back took the whole-page path with the end it had
/// read and the hook held its pwrite until T1 had rolled back; now it
/// takes the size lock, so T1's rollback comes after it and cuts it off.
#[test]
fn an_eviction_never_grows_the_file_after_a_failed_write_rolled_back() {
    use std::sync::mpsc;
    let old = bytes(8, 3 * PAGE);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.dat");
    std::fs::write(&path, &old).unwrap();
    let cfg = UcacheConfig::new(2 * PAGE as u64, PAGE).with_shards(2);
    let (cache, _) = shared_with(&path, cfg, true, false, None).unwrap();
    let zero = bytes(9, PAGE);
    assert_eq!(cache.write(0, &zero, WriteMode::Back), Ok(PAGE));
    let (go, go_rx) = mpsc::channel::<()>();
    let (reached, reached_rx) = mpsc::channel::<&str>();
    let (rolled, rolled_rx) = mpsc::channel::<()>();
    let t2 = std::thread::spawn({
        let (cache, old) = (cache.clone(), old.clone());
        move || {
            let held = reached.clone();
            hooks::BEFORE_PAGE_WRITE.with(|h| {
                *h.borrow_mut() = Some(Box::new(move || {
                    // Before the fix only: hold the pwrite until T1 rolled
                    // back.
                    held.send("held").unwrap();
                    let _ = rolled_rx.recv();
                }))
            });
            go_rx.recv().unwrap();
            let got = read(&cache, PAGE as u64, PAGE);
            assert!(got == old[PAGE..2 * PAGE]);
            let _ = reached.send("done");
        }
    });
    hooks::BETWEEN_PAGES.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            go.send(()).unwrap();
            reached_rx.recv().unwrap();
        }))
    });
    hooks::AFTER_ROLLBACK.with(|h| {
        *h.borrow_mut() = Some(Box::new(move || {
            let _ = rolled.send(());
        }))
    });
    // T1's first pwrite, the write-back of page 0 as page 4 evicts it, fails.
    hooks::FAIL_PWRITE_AFTER.with(|c| c.set(Some(0)));
    let res = cache.write(3 * PAGE as u64, &bytes(10, 2 * PAGE), WriteMode::Back);
    hooks::FAIL_PWRITE_AFTER.with(|c| c.set(None));
    hooks::BETWEEN_PAGES.with(|h| h.borrow_mut().take());
    hooks::AFTER_ROLLBACK.with(|h| h.borrow_mut().take());
    t2.join().unwrap();
    assert_eq!(res, Err(rustix::io::Errno::IO));
    assert_eq!(cache.len(), 3 * PAGE as u64);
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        3 * PAGE as u64,
        "the file grew after the failed write was rolled back"
    );
    cache.flush(crate::SyncCall::Fsync).unwrap();
    let mut want = old.clone();
    want[..PAGE].copy_from_slice(&zero);
    assert!(std::fs::read(&path).unwrap() == want);
}

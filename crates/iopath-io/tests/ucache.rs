//! `ucache`, the user-space page cache over O_DIRECT: random reads and
//! writes of any size at any offset against a model of the file, with a
//! budget so small that dirty pages are evicted all the time; many threads
//! sharing one cache; write-back at eviction, at flush and at the last drop;
//! write-through for the sync policies; and the refusals (a page size
//! O_DIRECT cannot use, a file system without O_DIRECT).
//!
//! Files live under the target directory (a real disk, not a tmpfs /tmp).
//! No test measures time.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use iopath_io::data::Rng;
use iopath_io::engines::ucache::{self, UcacheConfig, UcacheEngine, UcacheShared};
use iopath_io::{Completion, Engine, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};
use proptest::prelude::*;
use tempfile::TempDir;

/// O_DIRECT offset alignment under the target directory.
fn dio_align() -> usize {
    let dir = tempdir();
    iopath_io::sys::dio_alignment(dir.path()).offset
}

fn tempdir() -> TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0; len];
    Rng::new(seed).fill(&mut v);
    v
}

/// A file of `data` in a fresh directory.
fn file_with(data: &[u8]) -> (TempDir, PathBuf) {
    let dir = tempdir();
    let path = dir.path().join("ucache.dat");
    std::fs::write(&path, data).expect("prefill");
    (dir, path)
}

fn spec(path: &Path, write: bool, block_size: usize, sync: SyncPolicy) -> OpenSpec {
    OpenSpec {
        path: path.to_path_buf(),
        write,
        block_size,
        queue_depth: 1,
        sync,
        span_bytes: 0,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    }
}

fn open_with(path: &Path, bs: usize, sync: SyncPolicy, cfg: UcacheConfig) -> UcacheEngine {
    UcacheEngine::open_with(&spec(path, true, bs, sync), cfg)
        .unwrap_or_else(|e| panic!("open ucache {cfg:?}: {e}"))
}

/// Compare bytes, naming the first difference instead of dumping buffers.
fn same(got: &[u8], want: &[u8], what: &str) {
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: first difference at byte {i} (got {:#04x}, want {:#04x})",
            got[i], want[i]
        );
    }
    assert_eq!(got.len(), want.len(), "{what}: length");
}

/// One request through the engine; its result.
fn one(eng: &mut dyn Engine, op: Op, offset: u64, len: usize) -> Result<u32, i32> {
    let mut done: Vec<Completion> = Vec::new();
    let r = IoReq {
        op,
        offset,
        len: len as u32,
        slot: 0,
    };
    assert_eq!(eng.submit(&[r], &mut done).expect("submit"), 1);
    assert_eq!(done.len(), 1, "a synchronous engine completes in submit");
    done[0].result
}

/// Write `bytes` at `offset`.
fn write_at(eng: &mut dyn Engine, offset: u64, bytes: &[u8]) {
    eng.buf_mut(0).expect("idle slot")[..bytes.len()].copy_from_slice(bytes);
    let res = one(eng, Op::Write, offset, bytes.len());
    assert_eq!(
        res,
        Ok(bytes.len() as u32),
        "write {} at {offset}",
        bytes.len()
    );
}

/// Read up to `len` bytes at `offset`: the bytes the completion says.
fn read_at(eng: &mut dyn Engine, offset: u64, len: usize) -> Vec<u8> {
    eng.buf_mut(0).expect("idle slot").fill(0xAA);
    let n = one(eng, Op::Read, offset, len).expect("read (errno)") as usize;
    assert!(n <= len, "read {n} of {len}");
    eng.buf_mut(0).unwrap()[..n].to_vec()
}

/// What a read of `len` at `offset` returns from `model`.
fn model_read(model: &[u8], offset: usize, len: usize) -> &[u8] {
    let start = offset.min(model.len());
    &model[start..(offset + len).min(model.len())]
}

/// Apply a write to `model`, extending it with zeros as a file would.
fn model_write(model: &mut Vec<u8>, offset: usize, bytes: &[u8]) {
    if model.len() < offset + bytes.len() {
        model.resize(offset + bytes.len(), 0);
    }
    model[offset..offset + bytes.len()].copy_from_slice(bytes);
}

#[derive(Debug, Clone)]
enum Step {
    Read {
        offset: usize,
        len: usize,
    },
    Write {
        offset: usize,
        len: usize,
        seed: u64,
    },
    /// A write `gap` bytes past the current end of the file.
    Append {
        gap: usize,
        len: usize,
        seed: u64,
    },
    Flush,
}

/// Requests anywhere in (and a little past the end of) a file of `len`
/// bytes, of 8 bytes to 3 pages: most cross a page boundary. Some append
/// past the end, leaving a hole.
fn steps(len: usize, page: usize) -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        5 => (0..len + page, 8..=3 * page).prop_map(|(offset, len)| Step::Read { offset, len }),
        5 => (0..len + 100, 8..=3 * page, any::<u64>())
            .prop_map(|(offset, len, seed)| Step::Write { offset, len, seed }),
        1 => (0..page, 8..=page, any::<u64>())
            .prop_map(|(gap, len, seed)| Step::Append { gap, len, seed }),
        1 => Just(Step::Flush),
    ];
    proptest::collection::vec(step, 1..80)
}

fn run_model(page: usize, initial: usize, plan: &[Step]) -> Result<(), TestCaseError> {
    let init = pattern(7, initial);
    let (_dir, path) = file_with(&init);
    let cfg = UcacheConfig::new(4 * page as u64, page).with_shards(2);
    let mut eng = open_with(&path, 3 * page, SyncPolicy::End, cfg);
    let mut model = init;
    for (i, step) in plan.iter().enumerate() {
        match *step {
            Step::Read { offset, len } => {
                let got = read_at(&mut eng, offset as u64, len);
                let want = model_read(&model, offset, len);
                prop_assert!(
                    got == want,
                    "step {i} {step:?}: read differs from the model"
                );
            }
            Step::Write { offset, len, seed } => {
                let bytes = pattern(seed, len);
                write_at(&mut eng, offset as u64, &bytes);
                model_write(&mut model, offset, &bytes);
            }
            Step::Append { gap, len, seed } => {
                let bytes = pattern(seed, len);
                let offset = model.len() + gap;
                write_at(&mut eng, offset as u64, &bytes);
                model_write(&mut model, offset, &bytes);
            }
            Step::Flush => {
                eng.flush(SyncPolicy::End).expect("flush");
                prop_assert_eq!(eng.cache().dirty_pages(), 0);
                let disk = std::fs::read(&path).unwrap();
                prop_assert!(disk == model, "step {i}: file after flush differs");
            }
        }
    }
    let stats = eng.cache().stats();
    drop(eng);
    let disk = std::fs::read(&path).unwrap();
    prop_assert_eq!(disk.len(), model.len(), "file length after the last drop");
    prop_assert!(
        disk == model,
        "file after the last drop differs ({stats:?})"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random reads and writes against a model, 4 pages of budget in 2
    /// shards: dirty pages are evicted constantly. The file ends in a
    /// short page, and writes past its end extend it.
    #[test]
    fn matches_a_model_under_constant_eviction(
        (page, initial, plan) in (1usize..=2, 3usize..12, 1usize..4000)
            .prop_flat_map(|(k, pages, tail)| {
                let page = k * dio_align();
                let initial = pages * page + tail % page;
                (Just(page), Just(initial), steps(initial, page))
            })
    ) {
        run_model(page, initial, &plan)?;
    }
}

/// 4 threads, each with its own engine on one file, share one cache of 8
/// pages: random reads and writes to 4 disjoint regions whose boundaries
/// fall inside pages, so neighbours share pages.
#[test]
fn threads_share_one_cache() {
    const THREADS: usize = 4;
    let page = 4096.max(dio_align());
    let region = 5 * page + 777;
    let init = pattern(11, THREADS * region + 100);
    let (_dir, path) = file_with(&init);
    let cfg = UcacheConfig::new(8 * page as u64, page).with_shards(4);
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (path, barrier) = (path.clone(), barrier.clone());
            let mut model = init[t * region..(t + 1) * region].to_vec();
            std::thread::spawn(move || {
                let mut eng = open_with(&path, 2 * page, SyncPolicy::None, cfg);
                let cache = Arc::as_ptr(eng.cache()) as usize;
                barrier.wait(); // every engine open: one cache for all
                let base = t * region;
                let mut rng = Rng::new(100 + t as u64);
                // A failure must not leave the others waiting at the barrier.
                let work = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    for i in 0..3000 {
                        let off = rng.below(region as u64 - 8) as usize;
                        let len = (8 + rng.below(2 * page as u64 - 8) as usize).min(region - off);
                        if rng.below(2) == 0 {
                            let bytes = pattern(rng.next_u64(), len);
                            write_at(&mut eng, (base + off) as u64, &bytes);
                            model[off..off + len].copy_from_slice(&bytes);
                        } else {
                            let got = read_at(&mut eng, (base + off) as u64, len);
                            same(
                                &got,
                                &model[off..off + len],
                                &format!("thread {t} read {i}"),
                            );
                        }
                    }
                }));
                barrier.wait(); // nobody drops before all are done
                if let Err(panic) = work {
                    std::panic::resume_unwind(panic);
                }
                (cache, model, eng.cache().stats())
            })
        })
        .collect();
    let mut want = Vec::new();
    let mut caches = Vec::new();
    let mut stats = None;
    for h in handles {
        let (cache, model, s) = h.join().expect("worker panicked");
        caches.push(cache);
        want.extend(model);
        stats = Some(s);
    }
    want.extend_from_slice(&init[THREADS * region..]);
    assert!(
        caches.iter().all(|&c| c == caches[0]),
        "engines share one cache"
    );
    let s = ucache::closed_stats(&path).expect("the cache closed");
    assert!(s.evictions > 0 && s.writebacks > 0, "{s:?} ({stats:?})");
    same(
        &std::fs::read(&path).unwrap(),
        &want,
        "file after all engines dropped",
    );
}

/// Dirty pages reach the file when evicted, and at flush; with `none` at
/// the last drop; with dsync/osync/each at once.
#[test]
fn dirty_pages_are_written_back_at_eviction() {
    let page = 4096.max(dio_align());
    let init = pattern(20, 32 * page);
    let (_dir, path) = file_with(&init);
    let cfg = UcacheConfig::new(4 * page as u64, page).with_shards(2);
    let mut eng = open_with(&path, page, SyncPolicy::End, cfg);
    let mut want = init.clone();
    // 16 pages written, 100 bytes each, into a cache of 4.
    for p in 0..16 {
        let bytes = pattern(100 + p as u64, 100);
        write_at(&mut eng, (p * page + 50) as u64, &bytes);
        model_write(&mut want, p * page + 50, &bytes);
    }
    let s = eng.cache().stats();
    assert!(s.evictions >= 12 && s.writebacks >= 12, "{s:?}");
    assert_eq!(s.misses, 16, "{s:?}");
    assert_eq!(
        eng.cache().dirty_pages(),
        4,
        "the last 4 still in the cache"
    );
    eng.flush(SyncPolicy::End).expect("flush");
    assert_eq!(eng.cache().stats().writebacks, 16);
    assert_eq!(eng.cache().dirty_pages(), 0);
    same(&std::fs::read(&path).unwrap(), &want, "file after flush");
}

#[test]
fn dirty_pages_are_written_back_at_flush_only() {
    let page = 4096.max(dio_align());
    let init = pattern(30, 8 * page);
    let (_dir, path) = file_with(&init);
    let cfg = UcacheConfig::new(16 * page as u64, page);
    let mut eng = open_with(&path, 2 * page, SyncPolicy::End, cfg);
    let mut want = init.clone();
    // Three pages touched: one write across pages 1 and 2, one in page 5.
    for (off, len) in [(page + 10, page), (5 * page + 1, 8)] {
        let bytes = pattern(off as u64, len);
        write_at(&mut eng, off as u64, &bytes);
        model_write(&mut want, off, &bytes);
    }
    // A read of what was just written comes from the cache.
    same(
        &read_at(&mut eng, (page + 10) as u64, 8),
        &want[page + 10..page + 18],
        "read back",
    );
    assert_eq!(eng.cache().dirty_pages(), 3);
    assert_eq!(eng.cache().stats().writebacks, 0);
    same(
        &std::fs::read(&path).unwrap(),
        &init,
        "nothing written before the flush",
    );
    eng.flush(SyncPolicy::None)
        .expect("flush(None) does nothing");
    assert_eq!(eng.cache().dirty_pages(), 3);
    eng.flush(SyncPolicy::End).expect("flush(End)");
    assert_eq!(eng.cache().stats().writebacks, 3);
    same(&std::fs::read(&path).unwrap(), &want, "file after flush");
}

#[test]
fn sync_none_writes_back_at_the_last_drop() {
    let page = 4096.max(dio_align());
    let init = pattern(40, 6 * page + 1000); // ends in a short page
    let (_dir, path) = file_with(&init);
    let cfg = UcacheConfig::new(16 * page as u64, page);
    let mut a = open_with(&path, page, SyncPolicy::None, cfg);
    let mut b = open_with(&path, page, SyncPolicy::None, cfg);
    assert!(
        Arc::ptr_eq(a.cache(), b.cache()),
        "one cache per file and geometry"
    );
    let same_geometry: Arc<UcacheShared> = ucache::shared(&path, 16 * page as u64, page).unwrap();
    assert!(Arc::ptr_eq(a.cache(), &same_geometry), "shared() finds it");
    let other = ucache::shared(&path, 8 * page as u64, page).unwrap();
    assert!(
        !Arc::ptr_eq(a.cache(), &other),
        "another budget, another cache"
    );
    drop((same_geometry, other));
    let mut want = init.clone();
    for (eng, off) in [(&mut a, 3), (&mut b, 6 * page + 900)] {
        let bytes = pattern(off as u64, 300); // b's extends the file by 200
        write_at(eng, off as u64, &bytes);
        model_write(&mut want, off, &bytes);
    }
    a.flush(SyncPolicy::None).expect("flush");
    drop(a);
    same(
        &std::fs::read(&path).unwrap(),
        &init,
        "b still holds the cache",
    );
    drop(b);
    same(&std::fs::read(&path).unwrap(), &want, "after the last drop");
    let s = ucache::closed_stats(&path).expect("closed");
    assert_eq!(s.writebacks, 2, "{s:?}");
}

#[test]
fn sync_policies_write_through() {
    let page = 4096.max(dio_align());
    let init = pattern(50, 4 * page + 123);
    let (_dir, path) = file_with(&init);
    let cfg = UcacheConfig::new(8 * page as u64, page);
    let mut want = init.clone();
    for (i, sync) in [SyncPolicy::Dsync, SyncPolicy::Osync, SyncPolicy::Each]
        .into_iter()
        .enumerate()
    {
        let mut eng = open_with(&path, 2 * page, sync, cfg);
        // Across pages, and into the short last page.
        for off in [i * 1000 + 7, 4 * page + 100 - i * 10] {
            let bytes = pattern(off as u64, 40 + page / 2);
            write_at(&mut eng, off as u64, &bytes);
            model_write(&mut want, off, &bytes);
            assert_eq!(
                eng.cache().dirty_pages(),
                0,
                "{}: written through",
                sync.name()
            );
            same(&std::fs::read(&path).unwrap(), &want, sync.name());
        }
    }
}

/// A page size that is not a multiple of the O_DIRECT alignment, or a
/// budget below one page, is refused at open, naming the rule.
#[test]
fn a_page_size_o_direct_cannot_use_is_refused() {
    let align = dio_align();
    let (_dir, path) = file_with(&pattern(60, 16 * 4096));
    let bad = align + align / 2;
    let cfg = UcacheConfig::new(1 << 20, bad);
    match UcacheEngine::open_with(&spec(&path, false, 4096, SyncPolicy::None), cfg) {
        Err(EngineError::Invalid(why)) => {
            let rule =
                format!("ucache page size {bad} is not a multiple of the O_DIRECT alignment");
            assert!(
                why.contains(&rule) && why.contains(&format!("{align} bytes")),
                "{why}"
            );
        }
        Err(e) => panic!("page {bad}: {e}"),
        Ok(_) => panic!("page {bad} accepted with alignment {align}"),
    }
    let cfg = UcacheConfig::new(100, 4096);
    match UcacheEngine::open_with(&spec(&path, false, 4096, SyncPolicy::None), cfg) {
        Err(EngineError::Invalid(why)) => assert!(why.contains("holds no page"), "{why}"),
        other => panic!("budget 100: {:?}", other.map(|_| ())),
    }
}

/// `configure` sets what `open(Method::Ucache)` uses: the notes say so. The
/// only test here that opens through `open`, as `configure` is global.
#[test]
fn configure_sets_the_geometry_of_open() {
    let align = dio_align();
    let (_dir, path) = file_with(&pattern(70, 16 * 4096));
    assert_eq!(ucache::configured(), UcacheConfig::DEFAULT);
    let mut s = spec(&path, false, 4096, SyncPolicy::None);
    s.queue_depth = 8;
    let page = 2 * align.max(4096);
    ucache::configure(8 * page as u64, page);
    let eng = iopath_io::open(Method::Ucache, &s).expect("open");
    let notes = eng.caps().notes.join("; ");
    let want = format!(
        "ucache: {} KiB in {} KiB pages, 8 shards",
        8 * page / 1024,
        page / 1024
    );
    assert!(notes.contains(&want), "{notes}");
    assert!(
        notes.contains("synchronous") && notes.contains('8'),
        "{notes}"
    );
    let caps = eng.caps();
    assert!(
        !caps.is_async && caps.queue_depth == 1 && caps.offset_align == 1,
        "{caps:?}"
    );
    drop(eng);
    ucache::configure(1 << 20, align + align / 2);
    let e = iopath_io::open(Method::Ucache, &s)
        .err()
        .expect("bad page accepted");
    ucache::configure(ucache::DEFAULT_BUDGET, ucache::DEFAULT_PAGE);
    assert!(matches!(e, EngineError::Invalid(_)), "{e}");
    let eng = iopath_io::open(Method::Ucache, &s).expect("open");
    let notes = eng.caps().notes.join("; ");
    assert!(
        notes.contains("ucache: 64 MiB in 4 KiB pages, 8 shards"),
        "{notes}"
    );
}

/// The frames are counted in `buffer_nodes` once, by the engine that made
/// the cache; the others count their slot only.
#[test]
fn frames_are_counted_once() {
    if iopath_io::numa::nodes_with_memory().is_none_or(|n| n.is_empty()) {
        eprintln!("skipped: this kernel lists no NUMA nodes");
        return;
    }
    let page = 4096.max(dio_align());
    let (_dir, path) = file_with(&pattern(80, 16 * page));
    let cfg = UcacheConfig::new(64 * page as u64, page);
    let base = rustix::param::page_size() as u64;
    let slot = (page as u64).div_ceil(base);
    let total = |e: &UcacheEngine| e.caps().buffer_nodes.iter().map(|(_, p)| p).sum::<u64>();
    let a = open_with(&path, page, SyncPolicy::None, cfg);
    let b = open_with(&path, page, SyncPolicy::None, cfg);
    assert_eq!(total(&a), slot + 64 * page as u64 / base, "{:?}", a.caps());
    assert_eq!(total(&b), slot, "{:?}", b.caps());
}

/// Where `open(O_DIRECT)` fails with EINVAL, the method is unusable
/// (Unsupported, naming O_DIRECT), and the probe says so. procfs refuses
/// O_DIRECT everywhere; the file is only opened, never written.
#[test]
fn a_file_system_without_o_direct_is_unsupported() {
    let path = Path::new("/proc/self/status");
    let cfg = UcacheConfig::new(1 << 20, 4096);
    match UcacheEngine::open_with(&spec(path, false, 4096, SyncPolicy::None), cfg) {
        Err(EngineError::Unsupported { method, reason }) => {
            assert_eq!(method, Method::Ucache);
            assert!(reason.contains("O_DIRECT"), "{reason}");
        }
        Err(e) => panic!("procfs: {e}"),
        Ok(_) => {
            eprintln!("skipped: this kernel opens procfs files with O_DIRECT");
            return;
        }
    }
    let st = iopath_io::probe_method(Method::Ucache, path, 4096);
    assert!(
        st.unusable
            .as_deref()
            .is_some_and(|r| r.contains("O_DIRECT")),
        "{st:?}"
    );
}

/// A writable tmpfs outside /dev (none: skipped): with O_DIRECT (Linux 6.6+)
/// the cache works there; without, it is Unsupported.
#[test]
fn tmpfs_works_or_is_unsupported() {
    let Some(dir) = writable_tmpfs() else {
        eprintln!("skipped: no writable tmpfs outside /dev here");
        return;
    };
    let path = dir.path().join("t.dat");
    let init = pattern(90, 3 * 4096 + 5);
    std::fs::write(&path, &init).unwrap();
    let cfg = UcacheConfig::new(2 * 4096, 4096);
    match UcacheEngine::open_with(&spec(&path, true, 4096, SyncPolicy::End), cfg) {
        Err(EngineError::Unsupported { reason, .. }) => {
            assert!(reason.contains("O_DIRECT"), "{reason}")
        }
        Err(e) => panic!("tmpfs: {e}"),
        Ok(mut eng) => {
            let mut want = init.clone();
            write_at(&mut eng, 4000, &[9; 300]);
            model_write(&mut want, 4000, &[9; 300]);
            same(&read_at(&mut eng, 0, 4096), &want[..4096], "tmpfs read");
            drop(eng);
            same(&std::fs::read(&path).unwrap(), &want, "tmpfs file");
        }
    }
}

/// A temporary directory on a writable tmpfs that is not under /dev, /proc
/// or /sys, if there is one.
fn writable_tmpfs() -> Option<TempDir> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    for line in text.lines() {
        let (left, right) = line.split_once(" - ")?;
        let l: Vec<&str> = left.split(' ').collect();
        if !right.starts_with("tmpfs ") || l.len() < 6 || !l[5].split(',').any(|o| o == "rw") {
            continue;
        }
        let mp = Path::new(l[4]);
        if ["/dev", "/proc", "/sys"].iter().any(|p| mp.starts_with(p)) {
            continue;
        }
        if let Ok(d) = tempfile::Builder::new()
            .prefix("iopath-ucache-")
            .tempdir_in(mp)
        {
            return Some(d);
        }
    }
    None
}

/// Reads past the end of the file are short, then empty; a write past the
/// end leaves a hole of zeros, and the file ends where the data does.
#[test]
fn end_of_file_and_holes() {
    let page = 4096.max(dio_align());
    let init = pattern(95, 2 * page + 10);
    let (_dir, path) = file_with(&init);
    let cfg = UcacheConfig::new(2 * page as u64, page).with_shards(1);
    let mut eng = open_with(&path, 2 * page, SyncPolicy::End, cfg);
    same(
        &read_at(&mut eng, (2 * page) as u64, page),
        &init[2 * page..],
        "short read",
    );
    assert!(
        read_at(&mut eng, (3 * page) as u64, 8).is_empty(),
        "past the end"
    );
    let mut want = init.clone();
    let at = 4 * page + 3;
    write_at(&mut eng, at as u64, &[5; 20]);
    model_write(&mut want, at, &[5; 20]);
    same(
        &read_at(&mut eng, (2 * page) as u64, 2 * page),
        &want[2 * page..4 * page],
        "hole",
    );
    assert_eq!(eng.cache().len(), want.len() as u64);
    eng.flush(SyncPolicy::End).expect("flush");
    same(&std::fs::read(&path).unwrap(), &want, "file with a hole");
}

/// A cache opened while the last engine of the previous one is dropping
/// waits for its write-back: it never reads stale pages from the file.
#[test]
fn a_new_cache_waits_for_the_old_ones_write_back() {
    let page = 4096.max(dio_align());
    const PAGES: usize = 256;
    let (_dir, path) = file_with(&pattern(200, PAGES * page));
    let cfg = UcacheConfig::new((PAGES * page) as u64, page);
    for round in 0..8u64 {
        let new = pattern(300 + round, PAGES * page);
        let mut a = open_with(&path, page, SyncPolicy::None, cfg);
        for (p, bytes) in new.chunks(page).enumerate() {
            write_at(&mut a, (p * page) as u64, bytes);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let dropper = std::thread::spawn(move || {
            tx.send(()).unwrap();
            drop(a); // writes PAGES dirty pages back
        });
        rx.recv().unwrap();
        // Into the drop's write-back, most rounds (no timing is asserted:
        // it only makes the race likely without the wait).
        std::thread::sleep(std::time::Duration::from_micros(500 * round));
        let mut b = open_with(&path, page, SyncPolicy::None, cfg);
        for p in 0..PAGES {
            let got = read_at(&mut b, (p * page) as u64, page);
            same(
                &got,
                &new[p * page..(p + 1) * page],
                &format!("round {round} page {p}"),
            );
        }
        drop(b);
        dropper.join().unwrap();
    }
}

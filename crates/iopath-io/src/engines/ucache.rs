//! `ucache`: an application-level page cache over `O_DIRECT`.
//!
//! What a database buffer pool does, in small: the file is opened with
//! `O_DIRECT` (so the kernel's page cache holds none of it), and a fixed
//! memory *budget* is split into frames of one cache *page* each (4 KiB by
//! default). Requests of any size, down to a few bytes, at any offset, are
//! copied between the engine's slot and the cached pages; a miss reads the
//! whole page with one aligned `pread`, and a page is evicted by CLOCK
//! (second chance), a dirty one written back with one aligned `pwrite` first.
//!
//! # Design
//! - One cache per file and geometry, shared by every engine (worker thread)
//!   of a run: [`shared`] keeps a registry of live caches keyed by (file,
//!   budget, page size, shards) holding [`Weak`] references, so the workers
//!   of one case share one [`UcacheShared`], and it is freed when the last
//!   engine drops. Its last drop writes every dirty page back.
//! - The frames are split into shards (`page index % shards`), each a
//!   [`Mutex`] over its frame table (page -> frame), per-frame state (page,
//!   referenced bit, dirty bit), the frames' memory (one aligned buffer) and
//!   its CLOCK hand. A request locks one shard at a time, page by page, so
//!   threads touching different shards never wait for each other; a miss or
//!   an eviction holds its shard for the duration of the device I/O (the
//!   shard count bounds how many misses proceed at once).
//! - A request is atomic per page, not across pages (as with `pread` and
//!   `pwrite` on the page cache).
//! - The cache keeps the file's logical size: reads stop at it (a short read
//!   at end of file), writes past it extend it. The last page of a file that
//!   is not a multiple of the page size is a *short page*: it is read whole
//!   (`O_DIRECT` returns what exists, the rest of the frame is zeros) and
//!   written back rounded up to the `O_DIRECT` alignment, after which the
//!   file is cut back to its logical size (`ftruncate`).
//! - A write covering a whole page does not read it first.
//!
//! # Sync policies
//! - `end` (the default): writes dirty pages in the cache; `flush(End)` writes
//!   every dirty page of the cache back, then `fsync`s.
//! - `dsync`, `osync`: write-through: each write's pages are written at once
//!   with `pwritev2(RWF_DSYNC)` / `pwritev2(RWF_SYNC)`, so the data is durable
//!   when the request completes (the file is not opened `O_DSYNC`, because the
//!   cache is shared and the policy belongs to each engine).
//! - `each`: write-through, then `fsync` after every write.
//! - `none`: dirty data stays in the cache, and reaches the file only when a
//!   page is evicted or when the last engine of the cache drops (outside the
//!   timed interval); nothing is ever `fsync`ed.
//!
//! Errors of the write-back at the last drop cannot be reported: call
//! `flush(SyncPolicy::End)` to see them.
//!
//! # Configuration
//! [`Method::Ucache`] through [`crate::open`] uses the geometry set with
//! [`configure`] (process-wide; 64 MiB in 4 KiB pages, 8 shards when never
//! called): the runner calls it before opening. [`UcacheEngine::open_with`]
//! takes one explicitly. The page size must be a multiple of the file's
//! `O_DIRECT` alignment ([`crate::sys::dio_alignment`]), else opening fails
//! with [`EngineError::Invalid`]; a file system that refuses `O_DIRECT`
//! makes it fail with [`EngineError::Unsupported`].

use std::collections::HashMap;
use std::fs::File;
use std::io::IoSlice;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard, Weak};

use rustix::io::{Errno, ReadWriteFlags};

use crate::buf::{AlignedBuf, SlotPool, HUGE_PAGE};
use crate::numa::MemPolicy;
use crate::sys::DioAlign;
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

/// Budget of a cache when [`configure`] was never called: 64 MiB.
pub const DEFAULT_BUDGET: u64 = 64 << 20;
/// Page size of a cache when [`configure`] was never called: 4 KiB.
pub const DEFAULT_PAGE: usize = 4096;
/// Shards of a cache (fewer when the budget holds fewer pages).
pub const DEFAULT_SHARDS: usize = 8;

/// The geometry of a cache: how much memory, in pages of what size, split
/// into how many shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UcacheConfig {
    /// Bytes of frame memory: `budget / page_size` pages (rounded down).
    pub budget: u64,
    /// Bytes per cache page; a multiple of the file's `O_DIRECT` alignment.
    pub page_size: usize,
    /// Shards (at most one per page).
    pub shards: usize,
}

impl UcacheConfig {
    /// 64 MiB in 4 KiB pages, 8 shards.
    pub const DEFAULT: UcacheConfig = UcacheConfig {
        budget: DEFAULT_BUDGET,
        page_size: DEFAULT_PAGE,
        shards: DEFAULT_SHARDS,
    };

    /// `budget` bytes in pages of `page_size`, [`DEFAULT_SHARDS`] shards.
    pub fn new(budget: u64, page_size: usize) -> UcacheConfig {
        UcacheConfig {
            budget,
            page_size,
            shards: DEFAULT_SHARDS,
        }
    }

    /// The same, with `shards` shards.
    pub fn with_shards(self, shards: usize) -> UcacheConfig {
        UcacheConfig { shards, ..self }
    }

    /// Pages the budget holds.
    pub fn pages(&self) -> u64 {
        if self.page_size == 0 {
            0
        } else {
            self.budget / self.page_size as u64
        }
    }

    /// Shards actually used: at most one per page, at least one.
    pub fn effective_shards(&self) -> usize {
        let pages = usize::try_from(self.pages()).unwrap_or(usize::MAX);
        self.shards.min(pages).max(1)
    }

    /// "64 MiB in 4 KiB pages, 8 shards": what [`Caps::notes`] says after
    /// `ucache: `.
    pub fn describe(&self) -> String {
        let shards = self.effective_shards();
        format!(
            "{} in {} pages, {shards} shard{}",
            fmt_size(self.pages() * self.page_size as u64),
            fmt_size(self.page_size as u64),
            if shards == 1 { "" } else { "s" }
        )
    }

    /// Why this geometry cannot serve a file with O_DIRECT alignment `dio`
    /// (`path` names the file in the message), or `None`.
    pub fn check(&self, path: &Path, dio: &DioAlign) -> Option<String> {
        if self.page_size == 0 || self.page_size > 1 << 30 {
            return Some(format!(
                "ucache page size {} is out of range (the O_DIRECT alignment of {}, {} bytes, up to 1 GiB)",
                self.page_size,
                path.display(),
                dio.offset
            ));
        }
        if self.page_size % dio.offset.max(1) != 0 {
            let up = self.page_size.next_multiple_of(dio.offset);
            return Some(format!(
                "ucache page size {} is not a multiple of the O_DIRECT alignment of {} ({} bytes, from {}): \
                 cache pages are read and written with O_DIRECT; use a page size of {up} or another multiple of {}",
                self.page_size,
                path.display(),
                dio.offset,
                dio.source,
                dio.offset
            ));
        }
        if self.pages() == 0 {
            return Some(format!(
                "a ucache budget of {} bytes holds no page of {} bytes; give it at least one page",
                self.budget, self.page_size
            ));
        }
        if self.shards == 0 {
            return Some("a ucache needs at least one shard".into());
        }
        None
    }
}

impl Default for UcacheConfig {
    fn default() -> Self {
        UcacheConfig::DEFAULT
    }
}

/// `64 MiB`, `4 KiB`, `1536 B`: exact sizes in the largest unit that
/// divides them.
fn fmt_size(b: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if b >= unit && b % unit == 0 {
            return format!("{} {name}", b / unit);
        }
    }
    format!("{b} B")
}

static CONFIG: Mutex<UcacheConfig> = Mutex::new(UcacheConfig::DEFAULT);

/// Set the budget (bytes) and page size (bytes) of the caches that
/// [`Method::Ucache`] opens from now on, in this process (shards stay
/// [`DEFAULT_SHARDS`]). The runner calls it before opening the engines of a
/// case; engines already open keep their cache. Checked at open: a page size
/// that is not a multiple of the file's `O_DIRECT` alignment, or a budget
/// smaller than one page, makes `open` fail with [`EngineError::Invalid`].
pub fn configure(budget: u64, page: usize) {
    *lock(&CONFIG) = UcacheConfig::new(budget, page);
}

/// The geometry [`Method::Ucache`] opens with now ([`configure`]).
pub fn configured() -> UcacheConfig {
    *lock(&CONFIG)
}

/// A lock, also when another thread panicked holding it: every guarded
/// state here is consistent between statements.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counters of one cache, over its whole life (all its engines).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UcacheStats {
    /// Page accesses served from the cache.
    pub hits: u64,
    /// Page accesses that had to bring the page in (a read, or none for a
    /// write of the whole page).
    pub misses: u64,
    /// Pages dropped to make room for another.
    pub evictions: u64,
    /// Page writes to the file: dirty pages written back at eviction or at
    /// a flush, and write-through writes.
    pub writebacks: u64,
}

impl UcacheStats {
    /// Hits over page accesses (0 when none).
    pub fn hit_ratio(&self) -> f64 {
        let all = self.hits + self.misses;
        if all == 0 {
            0.0
        } else {
            self.hits as f64 / all as f64
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    writebacks: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// State of one frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct FrameState {
    /// The page it holds (`None`: free).
    page: Option<u64>,
    /// Used since the CLOCK hand last passed.
    referenced: bool,
    /// Changed since it was read or last written back.
    dirty: bool,
}

/// The CLOCK replacement state of one shard: which page each frame holds,
/// and where the hand is. Pure bookkeeping, no I/O.
#[derive(Debug)]
struct Clock {
    frames: Vec<FrameState>,
    table: HashMap<u64, usize>,
    hand: usize,
}

impl Clock {
    fn new(frames: usize) -> Clock {
        Clock {
            frames: vec![FrameState::default(); frames.max(1)],
            table: HashMap::with_capacity(frames),
            hand: 0,
        }
    }

    /// The frame holding `page`, marked referenced.
    fn lookup(&mut self, page: u64) -> Option<usize> {
        let f = *self.table.get(&page)?;
        self.frames[f].referenced = true;
        Some(f)
    }

    /// The frame to (re)use: from the hand on, the first free or
    /// unreferenced frame; referenced frames passed on the way lose their bit
    /// (their second chance). The hand moves past the frame returned. Does not
    /// change the frame: the caller writes it back if dirty, then
    /// [`Clock::install`]s.
    fn victim(&mut self) -> usize {
        loop {
            let f = self.hand;
            self.hand = (self.hand + 1) % self.frames.len();
            let st = &mut self.frames[f];
            if st.page.is_none() || !st.referenced {
                return f;
            }
            st.referenced = false;
        }
    }

    /// Make `f` hold `page`, clean and referenced (dropping what it held).
    fn install(&mut self, f: usize, page: u64) {
        self.drop_frame(f);
        self.frames[f] = FrameState {
            page: Some(page),
            referenced: true,
            dirty: false,
        };
        self.table.insert(page, f);
    }

    /// Make `f` free.
    fn drop_frame(&mut self, f: usize) {
        if let Some(old) = self.frames[f].page.take() {
            self.table.remove(&old);
        }
        self.frames[f] = FrameState::default();
    }
}

/// The shard of `page`.
fn shard_of(page: u64, shards: usize) -> usize {
    (page % shards as u64) as usize
}

/// Frames of shard `i` when `frames` are split over `shards`: as even as can
/// be, the first `frames % shards` shards one more.
fn frames_in_shard(frames: usize, shards: usize, i: usize) -> usize {
    frames / shards + usize::from(i < frames % shards)
}

/// One shard: its replacement state and its frames' memory.
#[derive(Debug)]
struct Shard {
    clock: Clock,
    /// `frames * stride` bytes; frame `f` starts at `f * stride`.
    mem: AlignedBuf,
}

/// How a write reaches the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Into the cache; written back at eviction or flush.
    Back,
    /// Into the cache and at once to the file, with these `pwritev2` flags.
    Through(ReadWriteFlags),
    /// Into the cache, at once to the file, then `fsync`.
    ThroughFsync,
}

impl WriteMode {
    /// What `sync` asks of writes.
    pub fn for_sync(sync: SyncPolicy) -> WriteMode {
        match sync {
            SyncPolicy::None | SyncPolicy::End => WriteMode::Back,
            SyncPolicy::Dsync => WriteMode::Through(ReadWriteFlags::DSYNC),
            SyncPolicy::Osync => WriteMode::Through(ReadWriteFlags::SYNC),
            SyncPolicy::Each => WriteMode::ThroughFsync,
        }
    }
}

type Key = (PathBuf, UcacheConfig);

/// Live caches, by file and geometry.
///
/// An entry stays until its cache's last drop has written its dirty pages
/// back; then the drop removes it and signals `closed`. Whoever finds an
/// entry whose cache is already gone (being dropped) waits for that, so that
/// a new cache of the same file never reads pages from the file before the
/// old one has written them.
#[derive(Debug, Default)]
struct Registry {
    caches: Mutex<HashMap<Key, Weak<UcacheShared>>>,
    closed: Condvar,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::default);

/// Counters of the caches closed last, by file.
static CLOSED: LazyLock<Mutex<HashMap<PathBuf, UcacheStats>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The cache of one file, shared by all the engines (threads) of a run.
#[derive(Debug)]
pub struct UcacheShared {
    key: Key,
    /// The path as the first engine named it.
    path: PathBuf,
    file: File,
    writable: bool,
    page_size: usize,
    stride: usize,
    /// O_DIRECT offset/length alignment: short pages are written rounded up
    /// to it.
    dio_offset: usize,
    shards: Box<[Mutex<Shard>]>,
    /// The file's logical size. Changed only with `size_lock` held.
    size: AtomicU64,
    size_lock: Mutex<()>,
    counters: Counters,
    /// Where the frames' pages are, `(node, pages)` (empty when unknown).
    frame_nodes: Vec<(u32, u64)>,
}

/// The cache of `path` with `budget` bytes in pages of `page_size` bytes
/// ([`DEFAULT_SHARDS`] shards): the live one if an engine holds it, else a
/// new one. The file is opened with `O_DIRECT`, read-write where allowed.
/// Dropping the last [`Arc`] (engines hold one each) writes dirty pages
/// back.
pub fn shared(
    path: &Path,
    budget: u64,
    page_size: usize,
) -> Result<Arc<UcacheShared>, EngineError> {
    let cfg = UcacheConfig::new(budget, page_size);
    shared_with(path, cfg, false, None).map(|(c, _)| c)
}

/// As [`shared`], with the full geometry; `write` requires a writable
/// cache, and `policy` places the frames of a new cache. Also says whether
/// the cache is new.
fn shared_with(
    path: &Path,
    cfg: UcacheConfig,
    write: bool,
    policy: Option<&MemPolicy>,
) -> Result<(Arc<UcacheShared>, bool), EngineError> {
    let canon = std::fs::canonicalize(path).map_err(|e| EngineError::os("open", path, e))?;
    let key = (canon, cfg.with_shards(cfg.effective_shards()));
    let mut reg = lock(&REGISTRY.caches);
    while let Some(weak) = reg.get(&key) {
        let Some(cache) = weak.upgrade() else {
            // Its last drop is writing it back: wait until it is gone.
            reg = REGISTRY.closed.wait(reg).unwrap_or_else(|e| e.into_inner());
            continue;
        };
        if write && !cache.writable {
            // Unlocked first: dropping the last Arc locks the registry.
            drop(reg);
            drop(cache);
            return Err(EngineError::Os {
                op: "open for writing",
                path: path.to_path_buf(),
                source: std::io::Error::from_raw_os_error(libc::EACCES),
                hint: Some(
                    "the ucache of this file was opened read-only by an earlier engine, \
                     as the file could not be opened for writing"
                        .into(),
                ),
            });
        }
        return Ok((cache, false));
    }
    let cache = UcacheShared::create(key.clone(), path, write, policy)?;
    reg.insert(key, Arc::downgrade(&cache));
    Ok((cache, true))
}

impl UcacheShared {
    fn create(
        key: Key,
        path: &Path,
        write: bool,
        policy: Option<&MemPolicy>,
    ) -> Result<Arc<UcacheShared>, EngineError> {
        let cfg = key.1;
        let (file, writable) = open_direct(path, write)?;
        let dio = crate::sys::dio_alignment(path);
        if let Some(why) = cfg.check(path, &dio) {
            return Err(EngineError::Invalid(why));
        }
        let len = file
            .metadata()
            .map_err(|e| EngineError::os("fstat", path, e))?
            .len();
        let frames = usize::try_from(cfg.pages()).map_err(|_| {
            EngineError::Invalid(format!("a ucache of {} bytes is too large", cfg.budget))
        })?;
        let nshards = cfg.effective_shards();
        let mem_align = dio.mem.max(1).next_power_of_two();
        let stride = cfg.page_size.next_multiple_of(mem_align);
        let align = super::buffer_align(mem_align);
        let mut shards = Vec::with_capacity(nshards);
        let mut frame_nodes: Vec<(u32, u64)> = Vec::new();
        for i in 0..nshards {
            let n = frames_in_shard(frames, nshards, i);
            let bytes = n.checked_mul(stride).ok_or_else(|| {
                EngineError::Invalid(format!("a ucache of {} bytes is too large", cfg.budget))
            })?;
            let mem = frame_memory(bytes, align, policy)?;
            if let Ok(nodes) = crate::numa::pages_per_node(mem.as_ptr(), mem.len()) {
                merge_nodes(&mut frame_nodes, &nodes);
            }
            shards.push(Mutex::new(Shard {
                clock: Clock::new(n),
                mem,
            }));
        }
        Ok(Arc::new(UcacheShared {
            key,
            path: path.to_path_buf(),
            file,
            writable,
            page_size: cfg.page_size,
            stride,
            dio_offset: dio.offset.max(1),
            shards: shards.into_boxed_slice(),
            size: AtomicU64::new(len),
            size_lock: Mutex::new(()),
            counters: Counters::default(),
            frame_nodes,
        }))
    }

    /// The file, as the engine that made the cache named it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The geometry of this cache.
    pub fn config(&self) -> UcacheConfig {
        self.key.1
    }

    /// Counters so far.
    pub fn stats(&self) -> UcacheStats {
        let c = &self.counters;
        UcacheStats {
            hits: c.hits.load(Ordering::Relaxed),
            misses: c.misses.load(Ordering::Relaxed),
            evictions: c.evictions.load(Ordering::Relaxed),
            writebacks: c.writebacks.load(Ordering::Relaxed),
        }
    }

    /// Pages held now.
    pub fn resident_pages(&self) -> usize {
        self.count(|st| st.page.is_some())
    }

    /// Dirty pages held now.
    pub fn dirty_pages(&self) -> usize {
        self.count(|st| st.dirty)
    }

    fn count(&self, f: impl Fn(&FrameState) -> bool) -> usize {
        self.shards
            .iter()
            .map(|s| lock(s).clock.frames.iter().filter(|st| f(st)).count())
            .sum()
    }

    /// The file's logical size (what the cache holds included).
    pub fn len(&self) -> u64 {
        self.size.load(Ordering::Acquire)
    }

    /// True when the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the cache's file descriptor is open for writing.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Where the frames' memory is, `(node, pages)` ascending by node; empty
    /// when the kernel does not say.
    pub fn frame_nodes(&self) -> &[(u32, u64)] {
        &self.frame_nodes
    }

    /// Read up to `buf.len()` bytes at `offset`; fewer at end of file.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> Result<usize, Errno> {
        let size = self.len();
        if offset >= size {
            return Ok(0);
        }
        let len = buf
            .len()
            .min(usize::try_from(size - offset).unwrap_or(usize::MAX));
        self.each_page(offset, len, false, |this, sh, f, in_page, at, n| {
            let start = f * this.stride + in_page;
            buf[at..at + n].copy_from_slice(&sh.mem.as_slice()[start..start + n]);
            Ok(())
        })?;
        Ok(len)
    }

    /// Write `buf` at `offset` (extending the file when past its end), as
    /// `mode` says.
    pub fn write(&self, offset: u64, buf: &[u8], mode: WriteMode) -> Result<usize, Errno> {
        if !self.writable {
            return Err(Errno::BADF);
        }
        let end = offset.checked_add(buf.len() as u64).ok_or(Errno::FBIG)?;
        if end > self.len() {
            let _g = lock(&self.size_lock);
            if end > self.size.load(Ordering::Acquire) {
                self.size.store(end, Ordering::Release);
            }
        }
        let flags = match mode {
            WriteMode::Through(flags) => Some(flags),
            WriteMode::ThroughFsync => Some(ReadWriteFlags::empty()),
            WriteMode::Back => None,
        };
        self.each_page(offset, buf.len(), true, |this, sh, f, in_page, at, n| {
            let start = f * this.stride + in_page;
            sh.mem.as_mut_slice()[start..start + n].copy_from_slice(&buf[at..at + n]);
            sh.clock.frames[f].dirty = true;
            match flags {
                Some(flags) => this.write_back(sh, f, flags),
                None => Ok(()),
            }
        })?;
        if mode == WriteMode::ThroughFsync {
            retry(|| rustix::fs::fsync(&self.file))?;
        }
        Ok(buf.len())
    }

    /// Call `f(self, shard, frame, offset in page, offset in the request,
    /// bytes)` for each page of `len` bytes at `offset`, with the page's
    /// shard locked and the page in `frame`. When `writing`, a piece that
    /// covers a whole page is not read first: `f` overwrites it all.
    fn each_page(
        &self,
        offset: u64,
        len: usize,
        writing: bool,
        mut f: impl FnMut(&Self, &mut Shard, usize, usize, usize, usize) -> Result<(), Errno>,
    ) -> Result<(), Errno> {
        let ps = self.page_size as u64;
        let mut at = 0usize;
        while at < len {
            let pos = offset + at as u64;
            let page = pos / ps;
            let in_page = (pos % ps) as usize;
            let n = (self.page_size - in_page).min(len - at);
            let mut sh = lock(&self.shards[shard_of(page, self.shards.len())]);
            let whole = writing && in_page == 0 && n == self.page_size;
            let frame = self.frame_for(&mut sh, page, whole)?;
            f(self, &mut sh, frame, in_page, at, n)?;
            at += n;
        }
        Ok(())
    }

    /// The frame holding `page` in the locked shard `sh`, brought in on a
    /// miss (evicting by CLOCK, writing a dirty victim back first). With
    /// `overwrite`, the page's old contents are not read: the caller
    /// overwrites the whole frame.
    fn frame_for(&self, sh: &mut Shard, page: u64, overwrite: bool) -> Result<usize, Errno> {
        if let Some(f) = sh.clock.lookup(page) {
            bump(&self.counters.hits);
            return Ok(f);
        }
        bump(&self.counters.misses);
        let f = sh.clock.victim();
        if sh.clock.frames[f].page.is_some() {
            if sh.clock.frames[f].dirty {
                self.write_back(sh, f, ReadWriteFlags::empty())?;
            }
            sh.clock.drop_frame(f);
            bump(&self.counters.evictions);
        }
        if !overwrite {
            let start = f * self.stride;
            let frame = &mut sh.mem.as_mut_slice()[start..start + self.page_size];
            let got = self.load(frame, page * self.page_size as u64)?;
            // Past end of file (a short page): zeros, as the file reads.
            frame[got..].fill(0);
        }
        sh.clock.install(f, page);
        Ok(f)
    }

    /// Read the page at `offset` into `frame` with one O_DIRECT `pread`;
    /// the bytes read (fewer at end of file).
    fn load(&self, frame: &mut [u8], offset: u64) -> Result<usize, Errno> {
        let n = retry(|| rustix::io::pread(&self.file, &mut *frame, offset))?;
        Ok(n)
    }

    /// Write frame `f` of the locked shard `sh` to the file and mark it
    /// clean: the whole page, or for the short page at end of file the
    /// bytes up to the logical size rounded up to the O_DIRECT alignment,
    /// then the file is cut back to its logical size. `flags` go to
    /// `pwritev2` (`RWF_DSYNC`, `RWF_SYNC`).
    fn write_back(&self, sh: &mut Shard, f: usize, flags: ReadWriteFlags) -> Result<(), Errno> {
        let Some(page) = sh.clock.frames[f].page else {
            return Ok(());
        };
        let ps = self.page_size as u64;
        let offset = page * ps;
        let start = f * self.stride;
        let frame = &sh.mem.as_slice()[start..start + self.page_size];
        if offset + ps <= self.len() {
            pwrite_all(&self.file, frame, offset, flags)?;
        } else {
            // The short last page: the size cannot change meanwhile.
            let _g = lock(&self.size_lock);
            let size = self.size.load(Ordering::Acquire);
            let valid = size.saturating_sub(offset).min(ps) as usize;
            let n = valid.next_multiple_of(self.dio_offset).min(self.page_size);
            pwrite_all(&self.file, &frame[..n], offset, flags)?;
            if offset + n as u64 > size {
                retry(|| rustix::fs::ftruncate(&self.file, size))?;
                if !flags.is_empty() {
                    retry(|| rustix::fs::fdatasync(&self.file))?;
                }
            }
        }
        sh.clock.frames[f].dirty = false;
        bump(&self.counters.writebacks);
        Ok(())
    }

    /// Write every dirty page back (not `fsync`).
    pub fn write_back_all(&self) -> Result<(), Errno> {
        for shard in self.shards.iter() {
            let mut sh = lock(shard);
            for f in 0..sh.clock.frames.len() {
                if sh.clock.frames[f].dirty {
                    self.write_back(&mut sh, f, ReadWriteFlags::empty())?;
                }
            }
        }
        Ok(())
    }

    /// Write every dirty page back, then `fsync` the file.
    pub fn flush(&self) -> Result<(), Errno> {
        self.write_back_all()?;
        retry(|| rustix::fs::fsync(&self.file))
    }
}

impl Drop for UcacheShared {
    fn drop(&mut self) {
        // A new cache of this key waits until the entry is gone.
        let _ = self.write_back_all();
        lock(&CLOSED).insert(self.key.0.clone(), self.stats());
        let mut reg = lock(&REGISTRY.caches);
        if reg.get(&self.key).is_some_and(|w| w.strong_count() == 0) {
            reg.remove(&self.key);
        }
        drop(reg);
        REGISTRY.closed.notify_all();
    }
}

/// The counters of the last cache of `path` that closed (its last engine
/// dropped), for a report after a repetition; `None` if none has.
pub fn closed_stats(path: &Path) -> Option<UcacheStats> {
    let canon = std::fs::canonicalize(path).ok()?;
    lock(&CLOSED).get(&canon).copied()
}

/// Open `path` with O_DIRECT: read-write when `write`, else read-write
/// where allowed (so that a later writer can share the cache) and read-only
/// otherwise. Returns the file and whether it is writable.
fn open_direct(path: &Path, write: bool) -> Result<(File, bool), EngineError> {
    if !write {
        let rw = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path);
        if let Ok(f) = rw {
            return Ok((f, true));
        }
    }
    let f = super::open_target(Method::Ucache, path, write, true, SyncPolicy::None)?;
    Ok((f, write))
}

/// Zeroed, touched memory for one shard's frames, aligned to `align`,
/// placed by `policy` when given.
fn frame_memory(
    bytes: usize,
    align: usize,
    policy: Option<&MemPolicy>,
) -> Result<AlignedBuf, EngineError> {
    let huge = bytes >= HUGE_PAGE;
    if let Some(policy) = policy {
        return AlignedBuf::new_placed(bytes, align, huge, policy).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => EngineError::Invalid(e.to_string()),
            _ => EngineError::Unsupported {
                method: Method::Ucache,
                reason: e.to_string(),
            },
        });
    }
    let mut mem = if huge {
        AlignedBuf::new_huge(bytes, align)
    } else {
        AlignedBuf::new(bytes, align)
    };
    mem.touch();
    Ok(mem)
}

/// Add `more` to `into`, both `(node, pages)` ascending by node.
fn merge_nodes(into: &mut Vec<(u32, u64)>, more: &[(u32, u64)]) {
    for &(node, pages) in more {
        match into.binary_search_by_key(&node, |&(n, _)| n) {
            Ok(i) => into[i].1 += pages,
            Err(i) => into.insert(i, (node, pages)),
        }
    }
}

/// `op`, again while it fails with EINTR.
fn retry<T>(mut op: impl FnMut() -> Result<T, Errno>) -> Result<T, Errno> {
    loop {
        match op() {
            Err(Errno::INTR) => continue,
            other => return other,
        }
    }
}

/// Write all of `buf` at `offset` (`pwritev2` with `flags` when any).
fn pwrite_all(file: &File, buf: &[u8], offset: u64, flags: ReadWriteFlags) -> Result<(), Errno> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        let at = offset + done as u64;
        let n = retry(|| {
            if flags.is_empty() {
                rustix::io::pwrite(file.as_fd(), rest, at)
            } else {
                rustix::io::pwritev2(file.as_fd(), &[IoSlice::new(rest)], at, flags)
            }
        })?;
        if n == 0 {
            return Err(Errno::IO);
        }
        done += n;
    }
    Ok(())
}

/// One worker's engine: a slot of `block_size` bytes, and the shared cache.
#[derive(Debug)]
pub struct UcacheEngine {
    cache: Arc<UcacheShared>,
    pool: SlotPool,
    caps: Caps,
    path: PathBuf,
    write: bool,
    mode: WriteMode,
}

impl UcacheEngine {
    /// Open with the geometry of [`configure`].
    pub fn open(spec: &OpenSpec) -> Result<UcacheEngine, EngineError> {
        UcacheEngine::open_with(spec, configured())
    }

    /// Open with the geometry `cfg`: the live cache of this file and
    /// geometry if there is one, else a new one.
    pub fn open_with(spec: &OpenSpec, cfg: UcacheConfig) -> Result<UcacheEngine, EngineError> {
        let method = Method::Ucache;
        let (cache, created) = shared_with(&spec.path, cfg, spec.write, spec.mem_policy.as_ref())?;
        let (pool, slot_nodes) = super::slot_pool(method, spec, 1, 4096)?;
        let mut notes = Vec::new();
        if spec.queue_depth > 1 {
            notes.push(format!(
                "{method} is synchronous: queue depth {} requested, ran at 1 (use --threads)",
                spec.queue_depth
            ));
        }
        notes.push(format!("ucache: {}", cache.config().describe()));
        if spec.write && spec.sync == SyncPolicy::None {
            notes.push(
                "ucache with sync none: dirty pages stay in the cache until evicted or until the last engine closes"
                    .into(),
            );
        }
        // The frames are counted once, by the engine that made them: the
        // runner adds up the pages of every engine.
        let mut buffer_nodes = slot_nodes;
        if created {
            merge_nodes(&mut buffer_nodes, cache.frame_nodes());
        }
        let mem_align = pool.align();
        Ok(UcacheEngine {
            cache,
            pool,
            caps: Caps {
                is_async: false,
                queue_depth: 1,
                offset_align: 1,
                mem_align,
                notes,
                buffer_nodes,
            },
            path: spec.path.clone(),
            write: spec.write,
            mode: WriteMode::for_sync(spec.sync),
        })
    }

    /// The cache this engine shares.
    pub fn cache(&self) -> &Arc<UcacheShared> {
        &self.cache
    }
}

impl super::SyncIo for UcacheEngine {
    fn sync_caps(&self) -> &Caps {
        &self.caps
    }

    fn pool_mut(&mut self) -> &mut SlotPool {
        &mut self.pool
    }

    fn one(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        let buf = super::request_buf(&mut self.pool, r)?;
        let res = match r.op {
            Op::Read => self.cache.read(r.offset, buf),
            // As pwrite on a descriptor opened read-only.
            Op::Write if !self.write => Err(Errno::BADF),
            Op::Write => self.cache.write(r.offset, buf, self.mode),
        };
        Ok(res.map(|n| n as u32).map_err(|e| e.raw_os_error()))
    }

    fn flush_end(&mut self) -> Result<(), EngineError> {
        self.cache
            .flush()
            .map_err(|e| EngineError::os("ucache write-back and fsync", &self.path, e.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

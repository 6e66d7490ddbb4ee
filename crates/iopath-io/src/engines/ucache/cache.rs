//! [`UcacheShared`]: the cache of one file, shared by every engine of a run.
//! The registry of live caches (one per file and geometry, freed with its
//! last engine after its dirty pages are written back), the shards of
//! frames, page-by-page reads and writes, eviction and write-back, and the
//! `O_DIRECT` I/O under them.

use std::collections::HashMap;
use std::fs::File;
use std::io::IoSlice;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, Weak};

use rustix::io::{Errno, ReadWriteFlags};

use super::clock::{frames_in_shard, shard_of, Clock, FrameState};
use super::{lock, UcacheConfig, UcacheStats, WriteMode};
use crate::buf::{AlignedBuf, HUGE_PAGE};
use crate::engines;
use crate::numa::MemPolicy;
use crate::{EngineError, Method, SyncPolicy};

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

/// One shard: its replacement state and its frames' memory.
#[derive(Debug)]
struct Shard {
    clock: Clock,
    /// `frames * stride` bytes; frame `f` starts at `f * stride`.
    mem: AlignedBuf,
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
    /// The file's logical size, as readers see it: a write past the end
    /// raises it only once its data is in the cache, and not at all when
    /// it fails. Changed only with `size_lock` held.
    size: AtomicU64,
    /// `size`, or the end of the write past it in progress (at most one:
    /// `extend_lock`): what write-back keeps of a short page, so that the
    /// new bytes of that write are written, not cut off. Changed only with
    /// `size_lock` held; never below `size`.
    extent: AtomicU64,
    /// Held by a write past the end for its whole length.
    extend_lock: Mutex<()>,
    /// A block device: its size is fixed; nothing extends or cuts it.
    device: bool,
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
///
/// [`DEFAULT_SHARDS`]: super::DEFAULT_SHARDS
pub fn shared(
    path: &Path,
    budget: u64,
    page_size: usize,
) -> Result<Arc<UcacheShared>, EngineError> {
    let cfg = UcacheConfig::new(budget, page_size);
    shared_with(path, cfg, false, false, None).map(|(c, _)| c)
}

/// As [`shared`], with the full geometry; `write` requires a writable
/// cache, `noatime` opens a new cache's file with `O_NOATIME`
/// ([`crate::OpenSpec::noatime`]), and `policy` places the frames of a new
/// cache. Also says whether the cache is new.
pub(super) fn shared_with(
    path: &Path,
    cfg: UcacheConfig,
    write: bool,
    noatime: bool,
    policy: Option<&MemPolicy>,
) -> Result<(Arc<UcacheShared>, bool), EngineError> {
    let canon = key_path(path).map_err(|e| EngineError::os("open", path, e))?;
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
    let cache = UcacheShared::create(key.clone(), path, write, noatime, policy)?;
    reg.insert(key, Arc::downgrade(&cache));
    Ok((cache, true))
}

impl UcacheShared {
    fn create(
        key: Key,
        path: &Path,
        write: bool,
        noatime: bool,
        policy: Option<&MemPolicy>,
    ) -> Result<Arc<UcacheShared>, EngineError> {
        let cfg = key.1;
        let (file, writable) = open_direct(path, write, noatime)?;
        let dio = crate::sys::dio_alignment(path);
        if let Some(why) = cfg.check(path, &dio) {
            return Err(EngineError::Invalid(why));
        }
        // A block device's size is its end, not fstat's 0.
        let len = crate::sys::file_len(&file).map_err(|e| EngineError::os("fstat", path, e))?;
        let device = file
            .metadata()
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
        let frames = usize::try_from(cfg.pages()).map_err(|_| {
            EngineError::Invalid(format!("a ucache of {} bytes is too large", cfg.budget))
        })?;
        let nshards = cfg.effective_shards();
        let mem_align = dio.mem.max(1).next_power_of_two();
        let stride = cfg.page_size.next_multiple_of(mem_align);
        let align = engines::buffer_align(mem_align);
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
            extent: AtomicU64::new(len),
            extend_lock: Mutex::new(()),
            device,
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
    ///
    /// A write past the end publishes the new size only once its data is in
    /// the cache (and written through, as `mode` says): until then readers
    /// see the old end, never zeros where its data is going. If it fails,
    /// the size stays, the file is cut back to it if write-back had already
    /// extended it, and the bytes past it that the write left in cached
    /// pages are zeroed again (what the file holds there).
    pub fn write(&self, offset: u64, buf: &[u8], mode: WriteMode) -> Result<usize, Errno> {
        if !self.writable {
            return Err(Errno::BADF);
        }
        let end = offset.checked_add(buf.len() as u64).ok_or(Errno::FBIG)?;
        if self.device && end > self.len() {
            // Past a device's end: as pwrite(2) on the device says.
            return Err(Errno::NOSPC);
        }
        if end <= self.len() {
            return self.write_pages(offset, buf, mode);
        }
        let _one_at_a_time = lock(&self.extend_lock);
        let old = self.len();
        if end <= old {
            // A write that ended there meanwhile extended the file.
            return self.write_pages(offset, buf, mode);
        }
        {
            let _g = lock(&self.size_lock);
            self.extent.store(end, Ordering::Release);
        }
        let res = self.write_pages(offset, buf, mode);
        let g = lock(&self.size_lock);
        match res {
            Ok(n) => {
                self.size.store(end, Ordering::Release);
                Ok(n)
            }
            Err(e) => {
                self.extent.store(old, Ordering::Release);
                // Write-back may have extended the file: cut it back (the
                // file never holds more than the logical size).
                if crate::sys::file_len(&self.file).is_ok_and(|n| n > old) {
                    let _ = retry(|| rustix::fs::ftruncate(&self.file, old));
                }
                drop(g);
                #[cfg(test)]
                hooks::after_rollback();
                self.forget_past(old, end);
                Err(e)
            }
        }
    }

    /// Zero the bytes of `[from, to)` in the cached pages that hold them:
    /// past the logical end `from`, they must read as the file does, zeros,
    /// if a later write extends the file past them.
    fn forget_past(&self, from: u64, to: u64) {
        let ps = self.page_size as u64;
        for page in from / ps..to.div_ceil(ps) {
            let mut sh = lock(&self.shards[shard_of(page, self.shards.len())]);
            if let Some(f) = sh.clock.lookup(page) {
                let in_page = from.saturating_sub(page * ps) as usize;
                let start = f * self.stride;
                sh.mem.as_mut_slice()[start + in_page..start + self.page_size].fill(0);
            }
        }
    }

    /// The pages of a write, each copied into the cache and written
    /// through as `mode` says; then `fsync` for [`WriteMode::ThroughFsync`].
    fn write_pages(&self, offset: u64, buf: &[u8], mode: WriteMode) -> Result<usize, Errno> {
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
            #[cfg(test)]
            if at > 0 {
                hooks::between_pages();
            }
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
        if offset + ps <= self.size.load(Ordering::Acquire) {
            // Wholly below the published size, which never goes down (a
            // failed write past the end rolls back to it, not below): no
            // lock needed.
            #[cfg(test)]
            hooks::before_page_write();
            pwrite_all(&self.file, frame, offset, flags)?;
        } else {
            // A page of a write past the end in progress, or the short last
            // page. The end that write is extending the file to counts: its
            // bytes are in the frame, and this may be their only write-back.
            // Under the size lock, so that a failed write's rollback (its
            // end taken back, the file cut back) comes wholly before or
            // after this pwrite, never between reading the end and the
            // pwrite landing, which would grow the file again.
            let _g = lock(&self.size_lock);
            let end = self.extent.load(Ordering::Acquire);
            let valid = end.saturating_sub(offset).min(ps) as usize;
            let n = valid.next_multiple_of(self.dio_offset).min(self.page_size);
            if n > 0 {
                pwrite_all(&self.file, &frame[..n], offset, flags)?;
                if offset + n as u64 > end && !self.device {
                    retry(|| rustix::fs::ftruncate(&self.file, end))?;
                    if !flags.is_empty() {
                        retry(|| rustix::fs::fdatasync(&self.file))?;
                    }
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

    /// Write every dirty page back, then make the file durable with `call`.
    pub fn flush(&self, call: crate::SyncCall) -> Result<(), Errno> {
        self.write_back_all()?;
        match call {
            crate::SyncCall::Fsync => retry(|| rustix::fs::fsync(&self.file)),
            crate::SyncCall::Fdatasync => retry(|| rustix::fs::fdatasync(&self.file)),
        }
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
    let canon = key_path(path).ok()?;
    lock(&CLOSED).get(&canon).copied()
}

/// The path a cache is known by: `path` made canonical, or as given when
/// it names a file that has no name to resolve to (a `/proc/<pid>/fd/<n>`
/// link to an unnamed `O_TMPFILE` file).
fn key_path(path: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(path).or_else(|e| match std::fs::metadata(path) {
        Ok(_) => Ok(path.to_path_buf()),
        Err(_) => Err(e),
    })
}

/// Open `path` with O_DIRECT: read-write when `write`, else read-only. A
/// case that only reads never holds its target open for writing: a
/// device the user did not let iopath write (no `--allow-write`) is not
/// opened read-write behind the write guard's back (nor a read-only
/// device or mount taken for writable). Returns the file and whether it
/// is writable. `noatime` adds `O_NOATIME`.
fn open_direct(path: &Path, write: bool, noatime: bool) -> Result<(File, bool), EngineError> {
    let f = engines::open_target(Method::Ucache, path, write, true, SyncPolicy::None, noatime)?;
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
    let mem = if huge {
        AlignedBuf::try_new_huge(bytes, align)
    } else {
        AlignedBuf::try_new(bytes, align)
    };
    // The budget comes from a flag: memory it cannot have is a clean
    // refusal, not an allocation abort.
    let mut mem = mem.map_err(|e| EngineError::Unsupported {
        method: Method::Ucache,
        reason: format!(
            "its cache of {} could not be allocated ({e}); give a smaller --ucache-size",
            engines::human_bytes(bytes as u64)
        ),
    })?;
    mem.touch();
    Ok(mem)
}

/// Add `more` to `into`, both `(node, pages)` ascending by node.
pub(super) fn merge_nodes(into: &mut Vec<(u32, u64)>, more: &[(u32, u64)]) {
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
    #[cfg(test)]
    if hooks::fail_pwrite() {
        return Err(Errno::IO);
    }
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

/// Fault and interleaving hooks for the unit tests, per thread.
#[cfg(test)]
pub(super) mod hooks {
    use std::cell::{Cell, RefCell};

    thread_local! {
        /// Page writes to let through before one fails with EIO (`None`:
        /// none fails).
        pub(in super::super) static FAIL_PWRITE_AFTER: Cell<Option<u32>> = const { Cell::new(None) };
        /// Called between two pages of a request, with no lock held.
        pub(in super::super) static BETWEEN_PAGES: RefCell<Option<Box<dyn FnMut()>>> = RefCell::new(None);
        /// Called before the lock-free write-back of a whole page (below
        /// the published size), its shard locked.
        pub(in super::super) static BEFORE_PAGE_WRITE: RefCell<Option<Box<dyn FnMut()>>> = RefCell::new(None);
        /// Called when a failed write past the end has rolled the size
        /// back (the size lock released), before it zeroes the cached bytes.
        pub(in super::super) static AFTER_ROLLBACK: RefCell<Option<Box<dyn FnMut()>>> = RefCell::new(None);
    }

    /// True when this page write is the one to fail.
    pub(super) fn fail_pwrite() -> bool {
        FAIL_PWRITE_AFTER.with(|c| match c.get() {
            Some(0) => {
                c.set(None);
                true
            }
            Some(n) => {
                c.set(Some(n - 1));
                false
            }
            None => false,
        })
    }

    type Hook = RefCell<Option<Box<dyn FnMut()>>>;

    /// Run a hook (not recursively: a request it makes runs none).
    fn run(key: &'static std::thread::LocalKey<Hook>) {
        let hook = key.with(|h| h.borrow_mut().take());
        if let Some(mut hook) = hook {
            hook();
            key.with(|h| *h.borrow_mut() = Some(hook));
        }
    }

    pub(super) fn between_pages() {
        run(&BETWEEN_PAGES);
    }

    pub(super) fn before_page_write() {
        run(&BEFORE_PAGE_WRITE);
    }

    pub(super) fn after_rollback() {
        run(&AFTER_ROLLBACK);
    }
}

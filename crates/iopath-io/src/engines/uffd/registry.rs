//! One region per file: [`FileRegion`], the region of a file and its
//! handler threads, shared by every engine of that file and geometry, and
//! the registry that finds the live one. Its last engine's drop writes the
//! dirty pages back, stops and joins the handlers, and unmaps the region.

use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;

use super::abi::{self, ioctl};
use super::books::{Books, PageWords};
use super::fd::{handshake, new_uffd, no_wp, Source};
use super::pager::{sync_rank, Pager, Region, Shared};
use super::WRITEBACK_PAGES;
use crate::buf::AlignedBuf;
use crate::{EngineError, Method, OpenSpec};

/// The file a region is of: its inode, or, for a block device, the device
/// itself (two device nodes of one disk, such as `/dev/sdb` and a copy
/// made with `mknod`, have two inodes but one set of blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum FileId {
    Inode { dev: u64, ino: u64 },
    Block { rdev: u64 },
}

impl FileId {
    pub(super) fn of(meta: &Metadata) -> FileId {
        if meta.file_type().is_block_device() {
            FileId::Block { rdev: meta.rdev() }
        } else {
            FileId::Inode {
                dev: meta.dev(),
                ino: meta.ino(),
            }
        }
    }
}

/// A region's identity: the file, the method, the budget (pages) and the
/// length mapped.
pub(super) type Key = (FileId, Method, usize, usize);

/// Live regions, by key.
///
/// An entry stays until its region's last drop has written its dirty pages
/// back; then the drop removes it and signals `closed`. Whoever finds an
/// entry of the same file whose region is already gone (being dropped)
/// waits for that, so that a new region never reads pages from the file
/// before the old one has written them.
#[derive(Debug, Default)]
struct Registry {
    regions: Mutex<HashMap<Key, Weak<FileRegion>>>,
    closed: Condvar,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::default);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Default)]
struct Handlers {
    threads: Vec<JoinHandle<()>>,
    /// Engines attached now.
    engines: usize,
}

/// The region of one file, shared by the engines that use it; one handler
/// thread per engine attached at once.
#[derive(Debug)]
pub(super) struct FileRegion {
    key: Key,
    method: Method,
    pub(super) shared: Arc<Shared>,
    pub(super) source: Source,
    handlers: Mutex<Handlers>,
}

/// What an engine asks of its file's region.
pub(super) struct Want<'a> {
    pub(super) method: Method,
    pub(super) spec: &'a OpenSpec,
    /// The file, as the engine opened it (`O_DIRECT`).
    pub(super) file: File,
    pub(super) file_len: u64,
    /// Bytes to map (not 0).
    pub(super) len: usize,
    /// Resident pages at most.
    pub(super) budget: usize,
}

/// The live region of `want`'s file and geometry, or a new one, with one
/// more engine attached (and a handler for it).
///
/// A region whose last `Arc` is gone is being dropped (its dirty pages
/// written back) until its drop removes its entry: whoever finds such an
/// entry of the same file, also as an upgrade that fails because the last
/// `Arc` went after the entry was looked at (`Arc`'s drop takes no lock),
/// waits for the removal, so that a new region never reads a page from the
/// file before the old one has written it. An entry is inserted only where
/// there is none, so the drop always finds and removes its own.
pub(super) fn attach(want: Want<'_>) -> Result<Arc<FileRegion>, EngineError> {
    let (path, write) = (&want.spec.path, want.spec.write);
    let meta = want
        .file
        .metadata()
        .map_err(|e| EngineError::os("fstat", path, e))?;
    let id = FileId::of(&meta);
    let key = (id, want.method, want.budget, want.len);
    let mut reg = lock(&REGISTRY.regions);
    let region = loop {
        let dying = reg.iter().any(|(k, w)| k.0 == id && w.strong_count() == 0);
        #[cfg(test)]
        hooks::at(hooks::Point::Looked, &key, reg.get(&key));
        if !dying {
            match reg.get(&key).map(Weak::upgrade) {
                Some(Some(r)) => break r,
                None => {
                    let r = FileRegion::create(key, want)?;
                    reg.insert(key, Arc::downgrade(&r));
                    break r;
                }
                // Its last Arc went since: being dropped, as above.
                Some(None) => {}
            }
        }
        #[cfg(test)]
        hooks::at(hooks::Point::Waiting, &key, None);
        reg = REGISTRY.closed.wait(reg).unwrap_or_else(|e| e.into_inner());
    };
    // Unlocked first: dropping the last Arc (on an error below) locks it.
    drop(reg);
    if write && !region.shared.writable {
        return Err(EngineError::Os {
            op: "open for writing",
            path: path.clone(),
            source: std::io::Error::from_raw_os_error(libc::EACCES),
            hint: Some(
                "the uffd region of this file was made by an engine that could only read it, \
                 as the file could not be opened for writing"
                    .into(),
            ),
        });
    }
    region.attach_engine()?;
    Ok(region)
}

/// Why [`reopen`] failed.
enum Reopen {
    /// The system call's error (not writable here, ...).
    Os(std::io::Error),
    /// The file opened by the path is not the engine's.
    Replaced,
}

/// `file` (which is `id`) opened again, read-write, with `O_DIRECT` when
/// `direct`: through `/proc/self/fd`, which reaches the same inode even if
/// its path now names another file (renamed, replaced, unlinked), or by
/// `path` where `/proc` is not mounted; then the file opened must be `id`.
fn reopen(file: &File, path: &Path, id: FileId, direct: bool) -> Result<File, Reopen> {
    let open = |p: &Path| {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(p)
    };
    let by_fd = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    let f = match open(&by_fd) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => open(path),
        other => other,
    }
    .map_err(Reopen::Os)?;
    let meta = f.metadata().map_err(Reopen::Os)?;
    if FileId::of(&meta) != id {
        return Err(Reopen::Replaced);
    }
    Ok(f)
}

/// An error of [`reopen`] as the engine's.
fn reopen_error(path: &Path, e: Reopen) -> EngineError {
    match e {
        Reopen::Os(e) => EngineError::os("open", path, e),
        Reopen::Replaced => EngineError::Os {
            op: "open again",
            path: path.to_path_buf(),
            source: std::io::Error::other(
                "the path names another file than the one the engine opened (replaced meanwhile, and /proc, which reaches the file opened, is not mounted)",
            ),
            hint: Some("leave the file in place while iopath runs, then run again".into()),
        },
    }
}

impl FileRegion {
    /// A new region: the userfaultfd, the mapping and its registration, the
    /// file (read-write where allowed, so that a later writer can share
    /// it). No handler yet.
    fn create(key: Key, want: Want<'_>) -> Result<Arc<FileRegion>, EngineError> {
        let Want {
            method,
            spec,
            file,
            file_len,
            len,
            budget,
        } = want;
        let path = &spec.path;
        let wp = method == Method::UffdWp;
        let page = rustix::param::page_size();
        let pages = len.div_ceil(page);
        let (uffd, source) = new_uffd(method)?;
        handshake(method, uffd.as_raw_fd(), path, wp)?;
        let region = Region::new(pages * page)
            .map_err(|e| EngineError::os("mmap MAP_ANONYMOUS", path, e))?;
        let mut reg = abi::UffdioRegister {
            range: abi::UffdioRange {
                start: region.base as u64,
                len: region.len as u64,
            },
            mode: abi::UFFDIO_REGISTER_MODE_MISSING
                | if wp { abi::UFFDIO_REGISTER_MODE_WP } else { 0 },
            ioctls: 0,
        };
        // SAFETY: UFFDIO_REGISTER reads and writes one uffdio_register; the
        // range is our own fresh mapping, which nothing has touched.
        match unsafe { ioctl(uffd.as_raw_fd(), abi::UFFDIO_REGISTER, &mut reg) } {
            Ok(()) => {}
            Err(e) if wp && e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(no_wp(method, "UFFDIO_REGISTER_MODE_WP refused (EINVAL)"))
            }
            Err(e) => return Err(EngineError::os("ioctl UFFDIO_REGISTER", path, e)),
        }
        if reg.ioctls & (1 << abi::NR_COPY) == 0 {
            return Err(EngineError::Unsupported {
                method,
                reason: "userfaultfd offers no UFFDIO_COPY for anonymous memory here".into(),
            });
        }
        if wp && reg.ioctls & (1 << abi::NR_WRITEPROTECT) == 0 {
            return Err(no_wp(
                method,
                "UFFDIO_WRITEPROTECT is not offered for the region",
            ));
        }
        #[cfg(test)]
        hooks::at(hooks::Point::Reopening, &key, None);
        let id = key.0;
        // A region made for reading keeps the engine's read-only file: a
        // case that only reads never holds its target open for writing (a
        // device without --allow-write, a read-only device or mount).
        let writable = spec.write;
        // The page holding end of file, when it is not on a page boundary,
        // is written back without O_DIRECT.
        let tail = if writable && (pages * page) as u64 > file_len {
            Some(reopen(&file, path, id, false).map_err(|e| reopen_error(path, e))?)
        } else {
            None
        };
        // SAFETY: eventfd takes an initial value and flags, touches no
        // memory of ours, and returns a new descriptor or -1.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if efd < 0 {
            let e = std::io::Error::last_os_error();
            return Err(EngineError::os("eventfd", path, e));
        }
        // SAFETY: efd is a fresh descriptor that nothing else owns.
        let stop_fd = unsafe { OwnedFd::from_raw_fd(efd) };
        let shared = Shared {
            uffd,
            stop_fd,
            stop: AtomicBool::new(false),
            region,
            page,
            pages,
            wp,
            writable,
            path: path.clone(),
            file,
            tail,
            file_len,
            sync_rank: AtomicU8::new(0),
            words: PageWords::new(pages),
            io_error: AtomicI32::new(0),
            broken: AtomicI32::new(0),
            faults: AtomicU64::new(0),
            wp_faults: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            writebacks: AtomicU64::new(0),
            resident: AtomicU64::new(0),
            max_resident: AtomicU64::new(0),
            pager: Mutex::new(Pager {
                books: Books::new(pages, budget),
                buf: AlignedBuf::new(WRITEBACK_PAGES * page, page),
            }),
        };
        Ok(Arc::new(FileRegion {
            key,
            method,
            shared: Arc::new(shared),
            source,
            handlers: Mutex::new(Handlers::default()),
        }))
    }

    /// One more engine: one more handler thread unless the region has as
    /// many as engines already.
    fn attach_engine(&self) -> Result<(), EngineError> {
        let mut h = lock(&self.handlers);
        if h.threads.len() <= h.engines {
            let s = Arc::clone(&self.shared);
            let t = std::thread::Builder::new()
                .name(format!("{}-faults", self.method))
                .spawn(move || s.serve())
                .map_err(|e| EngineError::os("spawn fault handler", &self.shared.path, e))?;
            h.threads.push(t);
        }
        h.engines += 1;
        Ok(())
    }

    /// An engine is gone (its `Arc` goes next).
    pub(super) fn detach_engine(&self) {
        let mut h = lock(&self.handlers);
        h.engines = h.engines.saturating_sub(1);
    }

    /// Raise the write policy of every write-back to at least `sync`'s.
    pub(super) fn sync_at_least(&self, sync: crate::SyncPolicy) {
        self.shared
            .sync_rank
            .fetch_max(sync_rank(sync), Ordering::AcqRel);
    }
}

impl Drop for FileRegion {
    fn drop(&mut self) {
        #[cfg(test)]
        hooks::at(hooks::Point::Dropping, &self.key, None);
        let s = &self.shared;
        if s.writable {
            // No completed write may be lost. Also after a handler ended on
            // its own (`broken`, the region unregistered): the pages the
            // books call resident are still mapped and hold the writes
            // completed before, and write_back then copies them out under
            // claims (no engine is left to store to them).
            if let Err(e) = s.write_back(0, s.pages) {
                lost_at_drop(&s.path, &e);
            }
        }
        s.stop.store(true, Ordering::Release);
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live local array to our own eventfd.
        unsafe {
            libc::write(s.stop_fd.as_raw_fd(), one.as_ptr().cast(), one.len());
        }
        let threads = std::mem::take(&mut lock(&self.handlers).threads);
        for t in threads {
            let _ = t.join();
        }
        // The region is unmapped when the last Arc of `shared` (now ours)
        // goes. A new region of this file waits until the entry is gone;
        // it is this region's own (an entry is only inserted where none
        // is).
        let mut reg = lock(&REGISTRY.regions);
        if reg
            .get(&self.key)
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), self))
        {
            reg.remove(&self.key);
        }
        drop(reg);
        REGISTRY.closed.notify_all();
    }
}

/// Write-backs that failed at a region's last drop, where no engine is
/// left to fail a request or a flush: kept for [`take_drop_errors`], whose
/// caller says them (naming the file as its user knows it, once), so that
/// a lost write is never silent.
static DROP_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn lost_at_drop(path: &Path, e: &std::io::Error) {
    let msg = format!(
        "uffd: writing back the dirty pages of {} when its last engine closed failed: {e}; writes not flushed before may be lost (with --sync end, the flush at the end of each case reports such an error in the case)",
        path.display()
    );
    let mut errors = lock(&DROP_ERRORS);
    if !errors.contains(&msg) {
        errors.push(msg);
    }
}

/// The write-backs that failed at the last drop of a region (one message
/// each, naming the file), oldest first, since the last call.
pub fn take_drop_errors() -> Vec<String> {
    std::mem::take(&mut *lock(&DROP_ERRORS))
}

/// Hooks for the unit tests: called at the points of the registry's
/// protocol, by every thread (the hook picks its own file by the key).
#[cfg(test)]
pub(super) mod hooks {
    use std::sync::{Arc, Mutex, Weak};

    use super::{FileRegion, Key};

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(in super::super) enum Point {
        /// `attach` has looked for a dying region of the file (none seen
        /// is what it decides on) and is about to upgrade the entry of its
        /// key (given), the registry locked.
        Looked,
        /// `attach` is about to wait for a dying region, the registry
        /// locked.
        Waiting,
        /// A new region is about to open the file again.
        Reopening,
        /// A region's last drop begins (before its write-back).
        Dropping,
    }

    pub(in super::super) type Hook =
        Arc<dyn Fn(Point, &Key, Option<&Weak<FileRegion>>) + Send + Sync>;

    pub(in super::super) static HOOK: Mutex<Option<Hook>> = Mutex::new(None);

    pub(super) fn at(point: Point, key: &Key, entry: Option<&Weak<FileRegion>>) {
        let hook = HOOK.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(h) = hook {
            h(point, key, entry);
        }
    }
}

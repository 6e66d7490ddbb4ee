//! [`UffdEngine`]: opening (the userfaultfd, the region and its
//! registration, the handler thread), requests as `memcpy`s to and from the
//! region, write-back as the sync policy asks, and the orderly stop on drop.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::abi::{self, ioctl};
use super::fd::{handshake, new_uffd, no_wp};
use super::pager::{errno_of, Pager, Region, Shared};
use super::{configured_resident_bytes, UffdStats, WRITEBACK_PAGES};
use crate::buf::{AlignedBuf, SlotPool};
use crate::engines::{self, SyncIo};
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

/// `uffd` / `uffd-wp`: see the module documentation.
#[derive(Debug)]
pub struct UffdEngine {
    method: Method,
    /// `None` when the span is empty: nothing mapped, no handler.
    pub(super) shared: Option<Arc<Shared>>,
    thread: Option<JoinHandle<()>>,
    /// Bytes requests may touch (the span, cut at end of file).
    len: usize,
    write: bool,
    /// Write back after each write (dsync, osync, each).
    sync_each: bool,
    /// And fsync (each).
    fsync_each: bool,
    /// The file, when nothing is mapped (flush still fsyncs).
    file: Option<File>,
    path: PathBuf,
    pub(super) pool: SlotPool,
    caps: Caps,
}

impl UffdEngine {
    /// Open `method` (`uffd` or `uffd-wp`) with the budget
    /// [`configure`](super::configure) set.
    pub fn open(method: Method, spec: &OpenSpec) -> Result<UffdEngine, EngineError> {
        Self::open_with(method, spec, configured_resident_bytes())
    }

    /// Open `method` (`uffd` or `uffd-wp`) with a budget of `resident_bytes`
    /// (rounded down to whole pages, at least one page).
    pub fn open_with(
        method: Method,
        spec: &OpenSpec,
        resident_bytes: u64,
    ) -> Result<UffdEngine, EngineError> {
        let wp = match method {
            Method::Uffd => false,
            Method::UffdWp => true,
            _ => {
                return Err(EngineError::Invalid(format!(
                    "{method} is not a userfaultfd method"
                )))
            }
        };
        let page = rustix::param::page_size();
        let file = engines::open_target(method, &spec.path, spec.write, true, spec.sync)?;
        let dio = crate::sys::dio_alignment(&spec.path);
        if dio.offset > page || page % dio.offset != 0 || dio.mem > page {
            return Err(EngineError::Unsupported {
                method,
                reason: format!(
                    "{} needs O_DIRECT in {page}-byte pages, but {} requires {}-byte offsets and {}-byte aligned buffers ({})",
                    method,
                    spec.path.display(),
                    dio.offset,
                    dio.mem,
                    dio.source
                ),
            });
        }
        let file_len =
            crate::sys::file_len(&file).map_err(|e| EngineError::os("fstat", &spec.path, e))?;
        let span = spec.span_bytes.min(file_len);
        let len = usize::try_from(span)
            .ok()
            .filter(|l| l.checked_next_multiple_of(page).is_some())
            .ok_or_else(|| {
                EngineError::Invalid(format!("span of {span} bytes cannot be mapped"))
            })?;
        let pages = len.div_ceil(page);
        let budget = usize::try_from(resident_bytes / page as u64)
            .unwrap_or(usize::MAX)
            .max(1);

        let (uffd, source) = new_uffd(method)?;
        handshake(method, uffd.as_raw_fd(), &spec.path, wp)?;

        let (shared, thread, file) = if pages == 0 {
            (None, None, Some(file))
        } else {
            let region = Region::new(pages * page)
                .map_err(|e| EngineError::os("mmap MAP_ANONYMOUS", &spec.path, e))?;
            let mut reg = abi::UffdioRegister {
                range: abi::UffdioRange {
                    start: region.base as u64,
                    len: region.len as u64,
                },
                mode: abi::UFFDIO_REGISTER_MODE_MISSING
                    | if wp { abi::UFFDIO_REGISTER_MODE_WP } else { 0 },
                ioctls: 0,
            };
            // SAFETY: UFFDIO_REGISTER reads and writes one uffdio_register;
            // the range is our own fresh mapping, which nothing has touched.
            match unsafe { ioctl(uffd.as_raw_fd(), abi::UFFDIO_REGISTER, &mut reg) } {
                Ok(()) => {}
                Err(e) if wp && e.raw_os_error() == Some(libc::EINVAL) => {
                    return Err(no_wp(method, "UFFDIO_REGISTER_MODE_WP refused (EINVAL)"))
                }
                Err(e) => return Err(EngineError::os("ioctl UFFDIO_REGISTER", &spec.path, e)),
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
            // The page holding end of file, when it is not on a page
            // boundary, is written back without O_DIRECT.
            let tail = if spec.write && (pages * page) as u64 > file_len {
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(spec.sync.open_flags())
                    .open(&spec.path)
                    .map_err(|e| EngineError::os("open", &spec.path, e))?;
                Some(f)
            } else {
                None
            };
            // SAFETY: eventfd takes an initial value and flags, touches no
            // memory of ours, and returns a new descriptor or -1.
            let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
            if efd < 0 {
                let e = io::Error::last_os_error();
                return Err(EngineError::os("eventfd", &spec.path, e));
            }
            // SAFETY: efd is a fresh descriptor that nothing else owns.
            let stop_fd = unsafe { OwnedFd::from_raw_fd(efd) };
            let shared = Arc::new(Shared {
                uffd,
                stop_fd,
                stop: AtomicBool::new(false),
                region,
                page,
                pages,
                wp,
                write: spec.write,
                path: spec.path.clone(),
                io_error: AtomicI32::new(0),
                broken: AtomicI32::new(0),
                faults: AtomicU64::new(0),
                wp_faults: AtomicU64::new(0),
                evictions: AtomicU64::new(0),
                writebacks: AtomicU64::new(0),
                resident: AtomicU64::new(0),
                max_resident: AtomicU64::new(0),
                pager: Mutex::new(Pager {
                    file,
                    tail,
                    file_len,
                    budget,
                    state: vec![0; pages],
                    generation: vec![0; pages],
                    fifo: VecDeque::new(),
                    resident: 0,
                    buf: AlignedBuf::new(WRITEBACK_PAGES * page, page),
                }),
            });
            let handler = Arc::clone(&shared);
            let thread = std::thread::Builder::new()
                .name(format!("{method}-faults"))
                .spawn(move || handler.serve())
                .map_err(|e| EngineError::os("spawn fault handler", &spec.path, e))?;
            (Some(shared), Some(thread), None)
        };

        let name = method.name();
        let mut notes = vec![format!(
            "{name}: region of {}, at most {budget} resident pages ({}), write-protect: {}",
            engines::human_bytes(len as u64),
            engines::human_bytes(budget as u64 * page as u64),
            if wp { "on" } else { "off" }
        )];
        notes.push(format!(
            "one fault-handling thread fills {page}-byte pages with O_DIRECT preads (no read-ahead); {}; userfaultfd from {}",
            match (wp, spec.write) {
                (_, false) => "opened read-only, nothing is written back",
                (true, true) => "only pages stored to are written back (write-protect faults)",
                (false, true) => "every resident page counts as dirty and is written back",
            },
            source.describe()
        ));
        if span < spec.span_bytes {
            notes.push(format!(
                "{name} maps {span} bytes, the file's length, not the {} asked",
                spec.span_bytes
            ));
        }
        if spec.queue_depth > 1 {
            notes.push(format!(
                "{name} is synchronous: queue depth {} requested, ran at 1 (use --threads for parallel faults)",
                spec.queue_depth
            ));
        }
        let (pool, buffer_nodes) = engines::slot_pool(method, spec, 1, 4096)?;
        Ok(UffdEngine {
            method,
            shared,
            thread,
            len,
            write: spec.write,
            sync_each: matches!(
                spec.sync,
                SyncPolicy::Dsync | SyncPolicy::Osync | SyncPolicy::Each
            ),
            fsync_each: spec.sync == SyncPolicy::Each,
            file,
            path: spec.path.clone(),
            pool,
            caps: Caps {
                is_async: false,
                queue_depth: 1,
                offset_align: 1,
                mem_align: 4096,
                notes,
                buffer_nodes,
            },
        })
    }

    /// The method this engine was opened as.
    pub fn method(&self) -> Method {
        self.method
    }

    /// What the fault handler has done so far (all zero when nothing is
    /// mapped).
    pub fn stats(&self) -> UffdStats {
        let Some(s) = &self.shared else {
            return UffdStats::default();
        };
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        UffdStats {
            faults: get(&s.faults),
            wp_faults: get(&s.wp_faults),
            evictions: get(&s.evictions),
            writebacks: get(&s.writebacks),
            resident_pages: get(&s.resident),
            max_resident_pages: get(&s.max_resident),
        }
    }

    fn request(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        let buf = engines::request_buf(&mut self.pool, r)?;
        let start = usize::try_from(r.offset)
            .unwrap_or(usize::MAX)
            .min(self.len);
        let end = start.saturating_add(r.len as usize).min(self.len);
        let n = end - start;
        if r.op == Op::Write && !self.write {
            return Ok(Err(libc::EBADF));
        }
        let Some(s) = &self.shared else {
            return Ok(Ok(0)); // nothing mapped: n is 0
        };
        let broken = s.broken.load(Ordering::Acquire);
        if broken != 0 {
            return Ok(Err(broken));
        }
        // One page at a time: no single copy needs two pages resident.
        let mut at = start;
        while at < end {
            let chunk = (end - at).min(s.page - at % s.page);
            let b = &mut buf[at - start..at - start + chunk];
            let p = (s.region.base + at) as *mut u8;
            // SAFETY: [at, at + chunk) lies inside the region (end <= len <=
            // its length), which lives as long as `s`; no Rust reference
            // points into it, and the handler thread only touches it while
            // this thread waits in a fault or holds no request. b is the
            // slot buffer, distinct from the region. A page that is not
            // resident faults and is filled by the handler before the copy
            // goes on.
            unsafe {
                match r.op {
                    Op::Read => std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), chunk),
                    Op::Write => std::ptr::copy_nonoverlapping(b.as_ptr(), p, chunk),
                }
            }
            at += chunk;
        }
        let err = s.io_error.swap(0, Ordering::AcqRel);
        if err != 0 {
            s.drop_poisoned();
            return Ok(Err(err));
        }
        let broken = s.broken.load(Ordering::Acquire);
        if broken != 0 {
            return Ok(Err(broken));
        }
        if r.op == Op::Write && self.sync_each && n > 0 {
            let mut st = s.lock();
            let (lo, hi) = (start / s.page, end.div_ceil(s.page));
            if let Err(e) = s.write_back(&mut st, lo, hi) {
                return Ok(Err(errno_of(&e)));
            }
            if self.fsync_each {
                if let Err(e) = rustix::fs::fsync(&st.file) {
                    return Ok(Err(e.raw_os_error()));
                }
            }
        }
        Ok(Ok(n as u32))
    }
}

impl SyncIo for UffdEngine {
    fn sync_caps(&self) -> &Caps {
        &self.caps
    }

    fn pool_mut(&mut self) -> &mut SlotPool {
        &mut self.pool
    }

    fn one(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        self.request(r)
    }

    fn flush_end(&mut self) -> Result<(), EngineError> {
        match &self.shared {
            None => match &self.file {
                Some(f) => engines::fsync(f, &self.path),
                None => Ok(()),
            },
            Some(s) => {
                let mut st = s.lock();
                if self.write {
                    s.write_back(&mut st, 0, s.pages)
                        .map_err(|e| EngineError::os("pwrite (write-back)", &s.path, e))?;
                }
                engines::fsync(&st.file, &s.path)
            }
        }
    }
}

impl Drop for UffdEngine {
    fn drop(&mut self) {
        let Some(s) = &self.shared else { return };
        if self.write && s.broken.load(Ordering::Acquire) == 0 {
            // No store may be lost; errors have nobody to go to.
            let mut st = s.lock();
            let _ = s.write_back(&mut st, 0, s.pages);
        }
        s.stop.store(true, Ordering::Release);
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live local array to our own eventfd.
        unsafe {
            libc::write(s.stop_fd.as_raw_fd(), one.as_ptr().cast(), one.len());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // The region is unmapped when the last Arc (now ours) goes.
    }
}

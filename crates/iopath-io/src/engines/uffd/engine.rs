//! [`UffdEngine`]: opening (the slot buffer first, then the file's region,
//! shared with the other engines of the file, see `registry`), requests as
//! `memcpy`s to and from the region with each page pinned during its copy,
//! write-back as the sync policy asks, and leaving the region on drop.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::pager::{errno_of, Shared};
use super::registry::{attach, FileRegion, Want};
use super::{configured_resident_bytes, UffdStats};
use crate::buf::SlotPool;
use crate::engines::{self, SyncIo};
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncCall, SyncPolicy};

/// `uffd` / `uffd-wp`: see the module documentation.
#[derive(Debug)]
pub struct UffdEngine {
    method: Method,
    /// `None` when the span is empty: nothing mapped, no handler.
    region: Option<Arc<FileRegion>>,
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
    /// (rounded down to whole pages, at least one page) for the file's
    /// region: the live region of this file, method, budget and length if
    /// an engine holds one, else a new one.
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
        // The slot buffer first: placing it may fail (mbind refused, a node
        // that is not there), and nothing else is made yet.
        let (pool, buffer_nodes) = engines::slot_pool(method, spec, 1, 4096)?;
        let page = rustix::param::page_size();
        let file = engines::open_target(
            method,
            &spec.path,
            spec.write,
            true,
            SyncPolicy::None,
            spec.noatime,
        )?;
        check_pages(method, spec, page)?;
        let file_len =
            crate::sys::file_len(&file).map_err(|e| EngineError::os("fstat", &spec.path, e))?;
        let span = spec.span_bytes.min(file_len);
        let len = usize::try_from(span)
            .ok()
            .filter(|l| l.checked_next_multiple_of(page).is_some())
            .ok_or_else(|| {
                EngineError::Invalid(format!("span of {span} bytes cannot be mapped"))
            })?;
        let budget = usize::try_from(resident_bytes / page as u64)
            .unwrap_or(usize::MAX)
            .max(1);

        let (region, file) = if len == 0 {
            (None, Some(file))
        } else {
            // From here on, an error drops the region, which stops and
            // joins its handlers and unmaps it when no engine is left.
            let region = attach(Want {
                method,
                spec,
                file,
                file_len,
                len,
                budget,
            })?;
            region.sync_at_least(spec.sync);
            (Some(region), None)
        };

        let source = region.as_ref().map(|r| r.source.describe());
        let notes = open_notes(
            method,
            spec,
            Layout {
                wp,
                len,
                budget,
                span,
                page,
            },
            source,
        );
        Ok(UffdEngine {
            method,
            region,
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

    /// What the engines and handlers of this engine's region share.
    pub(super) fn shared(&self) -> Option<&Arc<Shared>> {
        self.region.as_ref().map(|r| &r.shared)
    }

    /// The method this engine was opened as.
    pub fn method(&self) -> Method {
        self.method
    }

    /// What the fault handlers of this engine's region have done so far,
    /// for all the engines sharing it (all zero when nothing is mapped).
    pub fn stats(&self) -> UffdStats {
        let Some(s) = self.shared() else {
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
        let Some(s) = self.region.as_ref().map(|r| &r.shared) else {
            return Ok(Ok(0)); // nothing mapped: n is 0
        };
        let broken = s.broken.load(Ordering::Acquire);
        if broken != 0 {
            return Ok(Err(broken));
        }
        // uffd cannot see stores: a write marks its pages dirty itself.
        // uffd-wp's handler marks them on the write faults.
        let dirties = r.op == Op::Write && !s.wp;
        let mut poisoned = None;
        // One page at a time: no single copy needs two pages resident.
        let mut at = start;
        while at < end {
            let chunk = (end - at).min(s.page - at % s.page);
            let pg = at / s.page;
            let b = &mut buf[at - start..at - start + chunk];
            let p = (s.region.base + at) as *mut u8;
            s.words.pin(pg);
            // SAFETY: [at, at + chunk) lies inside the region (end <= len <=
            // its length), which stays mapped while `s` lives; a page that
            // is not mapped faults and is filled by a handler before the
            // copy goes on, so every byte is readable and writable. b is
            // the slot buffer, distinct from the region. The page is
            // pinned: the pager neither drops it nor copies it out
            // unprotected until it is unpinned (uffd-wp write-protects it
            // before copying it out, and a store then waits in a fault).
            // No Rust reference to the region exists anywhere: it is only
            // reached through raw pointers with ptr::copy_nonoverlapping.
            //
            // What is not excluded: every engine of the file shares this
            // one region, so another engine (another worker thread) may
            // copy to or from the same bytes at the same time (randrw,
            // threads > 1). Rust's memory model calls concurrent
            // non-atomic accesses to the same bytes, one of them a write,
            // a data race (undefined behaviour in that model), with or
            // without references, and this code does not avoid it: it is
            // accepted knowingly, as the workload asks for exactly that.
            // It is what two threads calling pread and pwrite on
            // overlapping ranges of one file do, which the kernel serves
            // with memcpy over the same page-cache page. What iopath relies
            // on is only what that memcpy gives on the hardware: a read
            // concurrent with a write of the same bytes may see any mix of
            // old and new bytes, and two writes of the same bytes at the
            // same time may leave a mix of both (torn, as the page cache
            // leaves them). The copies are opaque calls on memory no Rust
            // value lives in, every byte value is a valid u8, and nothing
            // reads these bytes as another type; the workers of one case
            // never depend on the bytes of each other's concurrent writes.
            unsafe {
                match r.op {
                    Op::Read => std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), chunk),
                    Op::Write => std::ptr::copy_nonoverlapping(b.as_ptr(), p, chunk),
                }
            }
            if let Some(e) = s.words.unpin(pg, dirties) {
                // Its read failed: zeros, not the file's bytes.
                poisoned = Some(e);
                break;
            }
            at += chunk;
        }
        if let Some(e) = poisoned {
            s.drop_poisoned();
            return Ok(Err(e));
        }
        let err = s.io_error.swap(0, Ordering::AcqRel);
        if err != 0 {
            return Ok(Err(err));
        }
        let broken = s.broken.load(Ordering::Acquire);
        if broken != 0 {
            return Ok(Err(broken));
        }
        if r.op == Op::Write && self.sync_each && n > 0 {
            let (lo, hi) = (start / s.page, end.div_ceil(s.page));
            if let Err(e) = s.write_back(lo, hi) {
                return Ok(Err(errno_of(&e)));
            }
            if self.fsync_each {
                if let Err(e) = rustix::fs::fsync(&s.file) {
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

    /// Every dirty page of the region (other engines' too), then `call`.
    fn flush_end(&mut self, call: SyncCall) -> Result<(), EngineError> {
        match self.shared() {
            None => match &self.file {
                Some(f) => engines::sync_file(call, f, &self.path),
                None => Ok(()),
            },
            Some(s) => {
                if self.write {
                    s.write_back(0, s.pages)
                        .map_err(|e| EngineError::os("pwrite (write-back)", &s.path, e))?;
                }
                engines::sync_file(call, &s.file, &s.path)
            }
        }
    }
}

impl Drop for UffdEngine {
    fn drop(&mut self) {
        // The region's last engine writes its dirty pages back and stops
        // its handlers when its Arc goes, right after this.
        if let Some(r) = &self.region {
            r.detach_engine();
        }
    }
}

/// O_DIRECT in whole pages: the file's alignment must divide the page.
fn check_pages(method: Method, spec: &OpenSpec, page: usize) -> Result<(), EngineError> {
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
    Ok(())
}

/// What [`open_notes`] says of a region.
struct Layout {
    wp: bool,
    len: usize,
    budget: usize,
    span: u64,
    page: usize,
}

/// The engine's notes: its region, how it is filled, what it maps and
/// the depth it runs at. `source`: where userfaultfd came from, with a
/// region.
fn open_notes(method: Method, spec: &OpenSpec, l: Layout, source: Option<&str>) -> Vec<String> {
    let Layout {
        wp,
        len,
        budget,
        span,
        page,
    } = l;
    let name = method.name();
    let mut notes = vec![format!(
        "{name}: region of {}, at most {budget} resident pages ({}), write-protect: {}",
        engines::human_bytes(len as u64),
        engines::human_bytes(budget as u64 * page as u64),
        if wp { "on" } else { "off" }
    )];
    if let Some(source) = source {
        notes.push(format!(
            "one region per file, shared by the engines of the file; one fault-handling thread per engine fills {page}-byte pages with O_DIRECT preads (no read-ahead); {}; userfaultfd from {}",
            match (wp, spec.write) {
                (_, false) => "opened read-only, this engine writes nothing",
                (true, true) => "only pages stored to are written back (write-protect faults)",
                (false, true) => "only pages written through the engines are written back",
            },
            source
        ));
    }
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
    notes
}

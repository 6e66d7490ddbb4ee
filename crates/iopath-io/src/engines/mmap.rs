//! `mmap`: `memcpy` between the engine's buffer and a shared mapping of the
//! file, as DAXBench64 measures it. Reads fault pages in (with the kernel's
//! fault-around and read-ahead); writes dirty pages that `msync` writes back.
//!
//! The mapping covers `span_bytes` of the file, or the whole file when it is
//! shorter (pages past end of file would raise SIGBUS). A request past the
//! end of the mapping transfers what lies inside it (a short read or write),
//! as a file would at end of file. Sync policy: `end` msyncs (and fsyncs) the
//! whole mapping at the end; `dsync` and `each` msync the written pages
//! after every write. If another process truncates the file while it is
//! mapped, the kernel raises SIGBUS: iopath only maps files it created or
//! was told to use.

use std::fs::File;
use std::path::PathBuf;

use memmap2::{Mmap, MmapMut, MmapOptions};

use crate::buf::SlotPool;
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

#[derive(Debug)]
enum Map {
    Ro(Mmap),
    Rw(MmapMut),
    Empty,
}

#[derive(Debug)]
pub struct MmapEngine {
    map: Map,
    file: File,
    path: PathBuf,
    pool: SlotPool,
    caps: Caps,
    msync_each: bool,
}

impl MmapEngine {
    pub fn open(spec: &OpenSpec) -> Result<MmapEngine, EngineError> {
        let file = super::open_target(Method::Mmap, &spec.path, spec.write, false, SyncPolicy::None)?;
        // Map no further than the file ends. Touching a mapped page wholly
        // past end of file raises SIGBUS, so a span longer than the file let
        // safe code kill the process with a read past EOF. Requests past the
        // mapping come back short instead, as at end of file.
        let file_len =
            crate::sys::file_len(&file).map_err(|e| EngineError::os("fstat", &spec.path, e))?;
        let span = spec.span_bytes.min(file_len);
        let len = usize::try_from(span)
            .map_err(|_| EngineError::Invalid(format!("span of {span} bytes cannot be mapped")))?;
        let map = if len == 0 {
            Map::Empty
        } else if spec.write {
            // SAFETY: the mapping is shared with the file and never extends
            // past its end. iopath maps its own test file, or one the user
            // named; another process that truncates or rewrites that file
            // while it is mapped can change the bytes read or raise SIGBUS,
            // which a benchmark of a file the user chose accepts, but it
            // cannot make Rust reference freed memory: the mapping lives as
            // long as the engine, and slices are only taken through &self
            // or &mut self.
            let m = unsafe { MmapOptions::new().len(len).map_mut(&file) };
            Map::Rw(m.map_err(|e| EngineError::os("mmap", &spec.path, e))?)
        } else {
            // SAFETY: as above, read-only mapping.
            let m = unsafe { MmapOptions::new().len(len).map(&file) };
            Map::Ro(m.map_err(|e| EngineError::os("mmap", &spec.path, e))?)
        };
        let mut notes = Vec::new();
        if span < spec.span_bytes {
            notes.push(format!(
                "mmap maps {span} bytes, the file's length, not the {} asked: pages past end of file cannot be mapped",
                spec.span_bytes
            ));
        }
        if spec.queue_depth > 1 {
            notes.push(format!(
                "mmap is synchronous: queue depth {} requested, ran at 1 (use --threads for parallel faults)",
                spec.queue_depth
            ));
        }
        Ok(MmapEngine {
            map,
            file,
            path: spec.path.clone(),
            pool: SlotPool::new(1, spec.block_size, 4096),
            caps: Caps {
                is_async: false,
                queue_depth: 1,
                offset_align: 1,
                mem_align: 4096,
                notes,
            },
            msync_each: matches!(
                spec.sync,
                SyncPolicy::Dsync | SyncPolicy::Osync | SyncPolicy::Each
            ),
        })
    }

    fn map_len(&self) -> usize {
        match &self.map {
            Map::Ro(m) => m.len(),
            Map::Rw(m) => m.len(),
            Map::Empty => 0,
        }
    }

    fn request(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        let map_len = self.map_len();
        let buf = super::request_buf(&mut self.pool, r)?;
        let start = usize::try_from(r.offset).unwrap_or(usize::MAX).min(map_len);
        let end = start.saturating_add(r.len as usize).min(map_len);
        let n = end - start;
        match (r.op, &mut self.map) {
            (Op::Read, Map::Ro(m)) => buf[..n].copy_from_slice(&m[start..end]),
            (Op::Read, Map::Rw(m)) => buf[..n].copy_from_slice(&m[start..end]),
            (Op::Write, Map::Rw(m)) => {
                m[start..end].copy_from_slice(&buf[..n]);
                if self.msync_each && n > 0 {
                    if let Err(e) = m.flush_range(start, n) {
                        return Ok(Err(e.raw_os_error().unwrap_or(libc::EIO)));
                    }
                }
            }
            (Op::Write, Map::Ro(_)) => return Ok(Err(libc::EBADF)),
            (_, Map::Empty) => {}
        }
        Ok(Ok(n as u32))
    }
}

impl super::SyncIo for MmapEngine {
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
        if let Map::Rw(m) = &self.map {
            m.flush()
                .map_err(|e| EngineError::os("msync", &self.path, e))?;
        }
        super::fsync(&self.file, &self.path)
    }
}

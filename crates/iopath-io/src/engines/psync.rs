//! `buffered` and `direct`: one `pread`/`pwrite` at a time.
//!
//! `direct` opens with `O_DIRECT`, uses buffers aligned to the file's DIO
//! memory alignment (at least a page) and rejects misaligned requests before
//! the kernel would. Both run at queue depth 1: a synchronous call cannot
//! have more than one request in flight per thread, and [`Caps::notes`]
//! says so when more was asked.
//!
//! `dontcache` is `buffered` with `RWF_DONTCACHE` on every call
//! (`preadv2`/`pwritev2`, Linux 6.14+): the data goes through the page
//! cache, and the kernel drops its pages once a read is done with them or a
//! write's pages are written back (it starts that write-back itself). A
//! kernel or file system without it answers each call with EOPNOTSUPP,
//! which the probe explains ([`crate::probe`]).

use std::fs::File;
use std::os::fd::AsFd;
use std::path::PathBuf;

use crate::buf::SlotPool;
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncCall, SyncPolicy};

#[derive(Debug)]
pub struct PsyncEngine {
    file: File,
    path: PathBuf,
    pool: SlotPool,
    caps: Caps,
    fsync_each: bool,
    /// `RWF_*` flags of every call (0: plain pread/pwrite).
    rwf: i32,
    method: Method,
    /// Bytes the engine may touch (the span hints apply to).
    span: u64,
}

impl PsyncEngine {
    pub fn open(spec: &OpenSpec, direct: bool) -> Result<PsyncEngine, EngineError> {
        let method = if direct {
            Method::Direct
        } else {
            Method::Buffered
        };
        Self::open_as(method, spec, direct, 0)
    }

    /// `dontcache`: buffered, every call with `RWF_DONTCACHE`.
    pub fn open_dontcache(spec: &OpenSpec) -> Result<PsyncEngine, EngineError> {
        Self::open_as(Method::Dontcache, spec, false, super::RWF_DONTCACHE)
    }

    fn open_as(
        method: Method,
        spec: &OpenSpec,
        direct: bool,
        rwf: i32,
    ) -> Result<PsyncEngine, EngineError> {
        let file = super::open_spec(method, spec, direct)?;
        let (offset_align, mem_align) = super::layout(&spec.path, direct);
        let mut notes = Vec::new();
        if spec.queue_depth > 1 {
            notes.push(format!(
                "{method} is synchronous: queue depth {} requested, ran at 1 (use --threads, or an async method such as uring)",
                spec.queue_depth
            ));
        }
        let (pool, buffer_nodes) = super::slot_pool(method, spec, 1, mem_align)?;
        Ok(PsyncEngine {
            file,
            path: spec.path.clone(),
            pool,
            caps: Caps {
                is_async: false,
                queue_depth: 1,
                offset_align,
                mem_align,
                notes,
                buffer_nodes,
            },
            fsync_each: spec.sync == SyncPolicy::Each,
            rwf,
            method,
            span: spec.span_bytes,
        })
    }

    fn request(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        super::check_aligned(&self.path, r, self.caps.offset_align)?;
        let buf = super::request_buf(&mut self.pool, r)?;
        let fd = self.file.as_fd();
        let res = loop {
            let res = match (r.op, self.rwf) {
                (Op::Read, 0) => rustix::io::pread(fd, &mut *buf, r.offset),
                (Op::Write, 0) => rustix::io::pwrite(fd, buf, r.offset),
                (Op::Read, f) => rustix::io::preadv2(
                    fd,
                    &mut [std::io::IoSliceMut::new(&mut *buf)],
                    r.offset,
                    rustix::io::ReadWriteFlags::from_bits_retain(f as u32),
                ),
                (Op::Write, f) => rustix::io::pwritev2(
                    fd,
                    &[std::io::IoSlice::new(buf)],
                    r.offset,
                    rustix::io::ReadWriteFlags::from_bits_retain(f as u32),
                ),
            };
            match res {
                Err(rustix::io::Errno::INTR) => continue,
                other => break other,
            }
        };
        let res = match res {
            Ok(n) => {
                if r.op == Op::Write && self.fsync_each {
                    if let Err(e) = rustix::fs::fsync(fd) {
                        return Ok(Err(e.raw_os_error()));
                    }
                }
                Ok(n as u32)
            }
            Err(e) => Err(e.raw_os_error()),
        };
        Ok(res)
    }
}

impl super::SyncIo for PsyncEngine {
    fn sync_caps(&self) -> &Caps {
        &self.caps
    }

    fn pool_mut(&mut self) -> &mut SlotPool {
        &mut self.pool
    }

    fn one(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        self.request(r)
    }

    fn flush_end(&mut self, call: SyncCall) -> Result<(), EngineError> {
        super::sync_file(call, &self.file, &self.path)
    }

    fn advise_sync(&mut self, hint: crate::Hint) -> Result<(), EngineError> {
        if self.method == Method::Direct {
            return Err(crate::hint::refused(self.method, hint));
        }
        crate::hint::fadvise(self.method, &self.file, &self.path, hint, self.span)
    }

    fn sync_method(&self) -> Method {
        self.method
    }
}

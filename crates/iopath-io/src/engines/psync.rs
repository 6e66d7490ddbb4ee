//! `buffered` and `direct`: one `pread`/`pwrite` at a time.
//!
//! `direct` opens with `O_DIRECT`, uses buffers aligned to the file's DIO
//! memory alignment (at least a page) and rejects misaligned requests before
//! the kernel would. Both run at queue depth 1: a synchronous call cannot
//! have more than one request in flight per thread, and [`Caps::notes`]
//! says so when more was asked.

use std::fs::File;
use std::os::fd::AsFd;
use std::path::PathBuf;

use crate::buf::SlotPool;
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

#[derive(Debug)]
pub struct PsyncEngine {
    file: File,
    path: PathBuf,
    pool: SlotPool,
    caps: Caps,
    fsync_each: bool,
}

impl PsyncEngine {
    pub fn open(spec: &OpenSpec, direct: bool) -> Result<PsyncEngine, EngineError> {
        let method = if direct {
            Method::Direct
        } else {
            Method::Buffered
        };
        let file = super::open_target(method, &spec.path, spec.write, direct, spec.sync)?;
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
        })
    }

    fn request(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        super::check_aligned(&self.path, r, self.caps.offset_align)?;
        let buf = super::request_buf(&mut self.pool, r)?;
        let fd = self.file.as_fd();
        let res = loop {
            let res = match r.op {
                Op::Read => rustix::io::pread(fd, &mut *buf, r.offset),
                Op::Write => rustix::io::pwrite(fd, buf, r.offset),
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

    fn flush_end(&mut self) -> Result<(), EngineError> {
        super::fsync(&self.file, &self.path)
    }
}

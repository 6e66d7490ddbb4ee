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
use crate::sys::dio_alignment;
use crate::{Caps, Completion, Engine, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

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
        let file = super::open_target(
            method,
            &spec.path,
            spec.write,
            direct,
            spec.sync == SyncPolicy::Dsync,
        )?;
        let (offset_align, mem_align) = if direct {
            let a = dio_alignment(&spec.path);
            (a.offset, super::buffer_align(a.mem))
        } else {
            (1, 4096)
        };
        let mut notes = Vec::new();
        if spec.queue_depth > 1 {
            notes.push(format!(
                "{method} is synchronous: queue depth {} requested, ran at 1 (use --threads, or an async method such as uring)",
                spec.queue_depth
            ));
        }
        Ok(PsyncEngine {
            file,
            path: spec.path.clone(),
            pool: SlotPool::new(1, spec.block_size, mem_align),
            caps: Caps {
                is_async: false,
                queue_depth: 1,
                offset_align,
                mem_align,
                notes,
            },
            fsync_each: spec.sync == SyncPolicy::Each,
        })
    }

    fn one(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        super::check_aligned(&self.path, r, self.caps.offset_align)?;
        let slot_size = self.pool.slot_size();
        let Some(buf) = self.pool.get_mut(r.slot) else {
            return Err(EngineError::Invalid(format!(
                "slot {} does not exist",
                r.slot
            )));
        };
        if r.len == 0 || r.len as usize > slot_size {
            return Err(EngineError::Invalid(format!(
                "request of {} bytes does not fit a {slot_size}-byte buffer slot",
                r.len
            )));
        }
        let buf = &mut buf[..r.len as usize];
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

impl Engine for PsyncEngine {
    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn buf_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.pool.get_mut(slot)
    }

    fn submit(&mut self, reqs: &[IoReq], done: &mut Vec<Completion>) -> Result<usize, EngineError> {
        for r in reqs {
            let result = self.one(r)?;
            done.push(Completion {
                slot: r.slot,
                result,
            });
        }
        Ok(reqs.len())
    }

    fn reap(&mut self, _min: usize, _done: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }

    fn flush(&mut self, how: SyncPolicy) -> Result<(), EngineError> {
        if how == SyncPolicy::End {
            rustix::fs::fsync(self.file.as_fd())
                .map_err(|e| EngineError::os("fsync", &self.path, e.into()))?;
        }
        Ok(())
    }

    fn in_flight(&self) -> usize {
        0
    }
}

//! `aio`: Linux native AIO (`io_setup`, `io_submit`, `io_getevents`) with
//! `O_DIRECT`, called through raw system calls (no libaio needed).
//!
//! Invariants:
//! - One `iocb` per slot, in a boxed slice that never moves, so the kernel
//!   may keep the pointer from `io_submit` until the event is reaped.
//! - Each request gets its own `io_submit` (no plugging, so the device
//!   starts on it at once). A request `io_submit` did not accept is released
//!   at once; the caller learns how many were accepted.
//! - Dropping the engine reaps every request in flight before `io_destroy`
//!   and before the buffers are freed; if reaping fails, buffers are leaked.
//! - `--sync each`: after a write completes, the engine runs `fsync` before
//!   handing the completion out, so the write's latency includes it (AIO has
//!   no linked requests).

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;

use crate::buf::SlotPool;
use crate::{Caps, Completion, Engine, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// `struct iocb` from `<linux/aio_abi.h>` (little-endian layout).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` from `<linux/aio_abi.h>`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);

#[derive(Debug)]
pub struct AioEngine {
    ctx: libc::c_ulong,
    file: File,
    path: PathBuf,
    pool: SlotPool,
    iocbs: Box<[Iocb]>,
    ptrs: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    caps: Caps,
    fsync_each: bool,
}

// SAFETY: the raw pointers in `ptrs` only ever point into `self.iocbs`, which
// the engine owns; moving the engine to another thread moves that ownership.
unsafe impl Send for AioEngine {}

impl AioEngine {
    pub fn open(spec: &OpenSpec) -> Result<AioEngine, EngineError> {
        let qd = spec.queue_depth.clamp(1, 65536);
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes one aio_context_t to the pointer we pass,
        // which is a valid, aligned local.
        let rc = unsafe { libc::syscall(libc::SYS_io_setup, qd as libc::c_long, &mut ctx) };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOSYS) | Some(libc::EPERM) => EngineError::Unsupported {
                    method: Method::Aio,
                    reason: format!(
                        "io_setup failed: {e}{}",
                        crate::sys::errno_hint("io_setup", &e)
                            .map(|h| format!(" ({h})"))
                            .unwrap_or_default()
                    ),
                },
                _ => EngineError::os("io_setup", &spec.path, e),
            });
        }
        let file = match super::open_target(Method::Aio, &spec.path, spec.write, true, spec.sync) {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: ctx came from a successful io_setup and has no
                // requests in flight.
                unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
                return Err(e);
            }
        };
        let (offset_align, mem_align) = super::layout(&spec.path, true);
        let (pool, buffer_nodes) = match super::slot_pool(Method::Aio, spec, qd, mem_align) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: ctx came from a successful io_setup and has no
                // requests in flight.
                unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
                return Err(e);
            }
        };
        Ok(AioEngine {
            ctx,
            file,
            path: spec.path.clone(),
            pool,
            iocbs: vec![Iocb::default(); qd].into_boxed_slice(),
            ptrs: Vec::with_capacity(qd),
            events: vec![IoEvent::default(); qd],
            caps: Caps {
                is_async: true,
                queue_depth: qd,
                offset_align,
                mem_align,
                notes: Vec::new(),
                buffer_nodes,
            },
            fsync_each: spec.sync == SyncPolicy::Each,
        })
    }

    /// Wait for between `min` and `qd` events; returns how many arrived.
    fn getevents(&mut self, min: usize) -> Result<usize, EngineError> {
        loop {
            // SAFETY: events has room for events.len() entries, which the
            // kernel fills; ctx is live; a null timeout waits indefinitely.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    self.events.len() as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if rc >= 0 {
                return Ok(rc as usize);
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(EngineError::os("io_getevents", &self.path, e));
            }
        }
    }

    fn complete(&mut self, n: usize, done: &mut Vec<Completion>) {
        for k in 0..n {
            let ev = self.events[k];
            let slot = ev.data as u32;
            let was_write = self
                .iocbs
                .get(slot as usize)
                .is_some_and(|c| c.aio_lio_opcode == IOCB_CMD_PWRITE);
            let mut res = ev.res;
            if res >= 0 && was_write && self.fsync_each {
                if let Err(e) = rustix::fs::fsync(self.file.as_fd()) {
                    res = -(e.raw_os_error() as i64);
                }
            }
            self.pool.release(slot);
            done.push(Completion {
                slot,
                result: if res < 0 {
                    Err((-res) as i32)
                } else {
                    Ok(res as u32)
                },
            });
        }
    }
}

impl Engine for AioEngine {
    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn buf_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.pool.get_mut(slot)
    }

    fn submit(
        &mut self,
        reqs: &[IoReq],
        _done: &mut Vec<Completion>,
    ) -> Result<usize, EngineError> {
        self.ptrs.clear();
        for (k, r) in reqs.iter().enumerate() {
            // On a bad request (misaligned, bad slot or length), hand back the
            // slots this batch already acquired: none has reached the kernel,
            // so no event will ever release them. (A misaligned request used to
            // return early and leave them busy forever, and `reap` or `Drop`
            // then waited in io_getevents for events that never come.)
            let checked = super::check_aligned(&self.path, r, self.caps.offset_align)
                .and_then(|()| self.pool.acquire(r.slot, r.len));
            let ptr = match checked {
                Ok(p) => p,
                Err(e) => {
                    // Each of reqs[..k] acquired its slot above.
                    for earlier in &reqs[..k] {
                        self.pool.release(earlier.slot);
                    }
                    return Err(e);
                }
            };
            let cb = &mut self.iocbs[r.slot as usize];
            *cb = Iocb {
                aio_data: r.slot as u64,
                aio_lio_opcode: match r.op {
                    Op::Read => IOCB_CMD_PREAD,
                    Op::Write => IOCB_CMD_PWRITE,
                },
                aio_fildes: self.file.as_raw_fd() as u32,
                aio_buf: ptr as u64,
                aio_nbytes: r.len as u64,
                aio_offset: r.offset as i64,
                ..Iocb::default()
            };
            self.ptrs.push(cb as *mut Iocb);
        }
        if self.ptrs.is_empty() {
            return Ok(0);
        }
        // One io_submit per iocb, as fio does by default: handed several at
        // once, the kernel plugs them and starts the first only after the
        // last is built (see the io_uring engine).
        let mut accepted = 0;
        let mut failure = None;
        while accepted < self.ptrs.len() {
            // SAFETY: accepted < ptrs.len(), so the pointer stays inside ptrs;
            // ptrs[accepted] is a valid iocb pointer into self.iocbs, whose
            // buffer is a slot marked in flight; both stay alive and
            // unmoved until the event is reaped (or Drop waits for it).
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    1 as libc::c_long,
                    self.ptrs.as_mut_ptr().add(accepted),
                )
            };
            if rc == 1 {
                accepted += 1;
                continue;
            }
            let e = std::io::Error::last_os_error();
            if rc < 0 && e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if rc < 0 && e.raw_os_error() != Some(libc::EAGAIN) {
                failure = Some(e);
            }
            break;
        }
        if accepted == 0 {
            if let Some(e) = failure {
                for r in reqs {
                    self.pool.release(r.slot);
                }
                return Err(EngineError::os("io_submit", &self.path, e));
            }
        }
        // Requests after a refusal are handed back; an error after some were
        // accepted comes back from the next submit if it persists.
        for r in &reqs[accepted..] {
            self.pool.release(r.slot);
        }
        Ok(accepted)
    }

    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> Result<(), EngineError> {
        let min = min.min(self.pool.in_flight());
        let mut got = 0;
        loop {
            let want = min.saturating_sub(got);
            if want == 0 && got > 0 {
                break;
            }
            let n = self.getevents(want)?;
            self.complete(n, done);
            got += n;
            if got >= min {
                break;
            }
        }
        Ok(())
    }

    fn flush(&mut self, how: SyncPolicy) -> Result<(), EngineError> {
        super::flush_fsync(how, &self.file, &self.path)
    }

    fn in_flight(&self) -> usize {
        self.pool.in_flight()
    }
}

impl Drop for AioEngine {
    fn drop(&mut self) {
        let mut sink = Vec::new();
        let mut tries = 0;
        while self.pool.in_flight() > 0 && tries < 100 {
            match self.getevents(1) {
                Ok(n) => self.complete(n, &mut sink),
                Err(_) => tries += 10,
            }
            sink.clear();
            tries += 1;
        }
        // SAFETY: ctx came from io_setup; io_destroy also waits for (or
        // cancels) anything still in flight before returning.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
        if self.pool.in_flight() > 0 {
            let pool = std::mem::replace(&mut self.pool, SlotPool::new(1, 1, 1));
            std::mem::forget(pool);
        }
    }
}

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
//!   and before the buffers are freed. Only waits that bring nothing count
//!   against it: after 30 s without a completion (or as many failed waits)
//!   it gives up and leaks the buffers rather than free memory the kernel
//!   may still write into.
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
        let file = match super::open_spec(Method::Aio, spec, true) {
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

    /// Wait for between `min` and `qd` events, at most `timeout` (`None`:
    /// as long as it takes); returns how many arrived.
    fn getevents(
        &mut self,
        min: usize,
        timeout: Option<std::time::Duration>,
    ) -> Result<usize, EngineError> {
        let mut ts = timeout.map(|t| libc::timespec {
            tv_sec: t.as_secs() as libc::time_t,
            tv_nsec: t.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts
            .as_mut()
            .map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
        loop {
            // SAFETY: events has room for events.len() entries, which the
            // kernel fills; ctx is live; ts_ptr is null (wait indefinitely)
            // or points to the local timespec `ts`, alive for the call.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    self.events.len() as libc::c_long,
                    self.events.as_mut_ptr(),
                    ts_ptr,
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

/// Fill the iocb of each request's slot in `iocbs` and put a pointer to it
/// in `ptrs` (cleared first), for `io_submit`. `acquire` checks a request
/// and lends its slot's buffer. On an error, returns how many requests
/// acquired their slot before it (the caller hands them back).
///
/// The pointers all come from one raw pointer to `iocbs`, taken once, and
/// nothing else touches `iocbs` until `io_submit` has read each iocb (and
/// written its `aio_key`) through them. Any access that reborrows the whole
/// slice between two requests (`iocbs.get_mut(slot)`, or `&mut v[slot]` on
/// a `Vec`, whose `IndexMut` goes through `&mut [T]`) would, in Rust's
/// aliasing model, invalidate the pointers pushed before it (Miri reports
/// undefined behaviour). The `&mut self.iocbs[slot]` on a `Box<[Iocb]>`
/// this replaced borrowed only the element (built-in indexing), so it was
/// sound, but only as long as nobody changed the container or the call.
fn build_batch(
    iocbs: &mut [Iocb],
    ptrs: &mut Vec<*mut Iocb>,
    reqs: &[IoReq],
    fd: u32,
    mut acquire: impl FnMut(&IoReq) -> Result<*mut u8, EngineError>,
) -> Result<(), (usize, EngineError)> {
    ptrs.clear();
    let (base, len) = (iocbs.as_mut_ptr(), iocbs.len());
    for (k, r) in reqs.iter().enumerate() {
        let i = r.slot as usize;
        if i >= len {
            return Err((
                k,
                EngineError::Invalid(format!(
                    "slot {} does not exist (queue depth {len})",
                    r.slot
                )),
            ));
        }
        let buf = acquire(r).map_err(|e| (k, e))?;
        // SAFETY: i < len, so the pointer stays inside `iocbs`, which the
        // caller lends mutably for this call and nothing else reaches
        // meanwhile (every access goes through `base`).
        let cb = unsafe { base.add(i) };
        // SAFETY: cb points to a valid, aligned Iocb inside `iocbs` (above);
        // Iocb is Copy, so overwriting it drops nothing.
        unsafe {
            cb.write(Iocb {
                aio_data: r.slot as u64,
                aio_lio_opcode: match r.op {
                    Op::Read => IOCB_CMD_PREAD,
                    Op::Write => IOCB_CMD_PWRITE,
                },
                aio_fildes: fd,
                aio_buf: buf as u64,
                aio_nbytes: r.len as u64,
                aio_offset: r.offset as i64,
                ..Iocb::default()
            })
        };
        ptrs.push(cb);
    }
    Ok(())
}

/// How long `Drop` waits for one completion before counting a stall.
const DROP_WAIT: std::time::Duration = std::time::Duration::from_millis(100);
/// Consecutive stalls after which `Drop` gives up (30 s without any
/// completion: longer than a SCSI command's default time-out).
const DROP_MAX_STALLS: u32 = 300;

/// Reap until nothing is in flight: `reap` returns `Ok(None)` when nothing
/// is, else how many requests it reaped (0 when its wait timed out), or an
/// error. Only reaps that bring nothing count toward `max_stalls`
/// consecutive ones, after which it gives up: a slow but moving drain of a
/// deep queue always finishes. True when everything came back.
fn drain_in_flight<E>(max_stalls: u32, mut reap: impl FnMut() -> Result<Option<usize>, E>) -> bool {
    let mut stalls = 0;
    loop {
        match reap() {
            Ok(None) => return true,
            Ok(Some(n)) if n > 0 => stalls = 0,
            Ok(Some(_)) | Err(_) => {
                stalls += 1;
                if stalls >= max_stalls {
                    return false;
                }
            }
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
        let fd = self.file.as_raw_fd() as u32;
        let (path, align, pool) = (&self.path, self.caps.offset_align, &mut self.pool);
        build_batch(&mut self.iocbs, &mut self.ptrs, reqs, fd, |r| {
            super::check_aligned(path, r, align).and_then(|()| pool.acquire(r.slot, r.len))
        })
        .map_err(|(acquired, e)| {
            // On a bad request (misaligned, bad slot or length), hand back the
            // slots this batch already acquired: none has reached the kernel,
            // so no event will ever release them. (A misaligned request used to
            // return early and leave them busy forever, and `reap` or `Drop`
            // then waited in io_getevents for events that never come.)
            for earlier in &reqs[..acquired] {
                self.pool.release(earlier.slot);
            }
            e
        })?;
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
            // ptrs[accepted] is a valid iocb pointer into self.iocbs (made by
            // build_batch from one base pointer; self.iocbs is not touched
            // between there and here), whose buffer is a slot marked in
            // flight; both stay alive and
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
            let n = self.getevents(want, None)?;
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

    fn sync_now(&mut self, call: crate::SyncCall) -> Result<(), EngineError> {
        super::sync_file(call, &self.file, &self.path)
    }

    fn in_flight(&self) -> usize {
        self.pool.in_flight()
    }
}

impl AioEngine {
    /// Reap every request in flight, giving up only after [`DROP_MAX_STALLS`]
    /// waits of [`DROP_WAIT`] in a row bring nothing; true when none is left.
    fn reap_all(&mut self) -> bool {
        let mut sink = Vec::new();
        drain_in_flight(DROP_MAX_STALLS, || {
            if self.pool.in_flight() == 0 {
                return Ok(None);
            }
            let n = self.getevents(1, Some(DROP_WAIT))?;
            self.complete(n, &mut sink);
            sink.clear();
            Ok::<_, EngineError>(Some(n))
        })
    }
}

impl Drop for AioEngine {
    fn drop(&mut self) {
        self.reap_all();
        // SAFETY: ctx came from io_setup; io_destroy also waits for (or
        // cancels) anything still in flight before returning.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
        if self.pool.in_flight() > 0 {
            let pool = std::mem::replace(&mut self.pool, SlotPool::new(1, 1, 1));
            std::mem::forget(pool);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: Op, slot: u32, offset: u64) -> IoReq {
        IoReq {
            op,
            offset,
            len: 512,
            slot,
        }
    }

    /// Every pointer of a batch stays usable for reads and writes after the
    /// later ones were made, as io_submit uses them (it writes `aio_key`).
    /// Under Miri (`cargo +nightly miri test -p iopath-io --lib aio`), a
    /// `build_batch` that reborrowed the whole slice per request
    /// (`iocbs.get_mut(slot)`, or indexing a `Vec`) fails here with
    /// undefined behaviour: the reborrow invalidates the earlier pointers.
    #[test]
    fn batch_pointers_stay_valid_for_the_kernel() {
        let mut iocbs = vec![Iocb::default(); 4].into_boxed_slice();
        let mut ptrs = Vec::new();
        let mut bufs = [[0u8; 8]; 4];
        let addrs: Vec<*mut u8> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
        let reqs = [
            req(Op::Read, 2, 0),
            req(Op::Write, 0, 4096),
            req(Op::Read, 3, 8192),
        ];
        build_batch(&mut iocbs, &mut ptrs, &reqs, 7, |r| {
            Ok(addrs[r.slot as usize])
        })
        .unwrap();
        assert_eq!(ptrs.len(), 3);
        // What the kernel does with each, in order: read it, write aio_key.
        for (p, r) in ptrs.iter().zip(&reqs) {
            // SAFETY: p points into iocbs, alive and not otherwise borrowed.
            let cb = unsafe { p.read() };
            assert_eq!(cb.aio_data, u64::from(r.slot));
            assert_eq!(cb.aio_fildes, 7);
            assert_eq!(cb.aio_offset, r.offset as i64);
            assert_eq!(cb.aio_buf, addrs[r.slot as usize] as u64);
            let opcode = if r.op == Op::Write {
                IOCB_CMD_PWRITE
            } else {
                IOCB_CMD_PREAD
            };
            assert_eq!(cb.aio_lio_opcode, opcode);
            // SAFETY: as above; aio_key is a plain u32 field of it.
            unsafe { (*p.cast::<Iocb>()).aio_key = 0xa10 };
        }
        assert_eq!(iocbs.iter().filter(|c| c.aio_key == 0xa10).count(), 3);
        assert_eq!(iocbs[1].aio_key, 0, "slot 1 was not in the batch");
    }

    #[test]
    fn a_bad_request_says_how_many_slots_were_acquired() {
        let mut iocbs = vec![Iocb::default(); 2].into_boxed_slice();
        let mut ptrs = vec![std::ptr::null_mut()];
        let mut buf = [0u8; 8];
        let p = buf.as_mut_ptr();
        let reqs = [
            req(Op::Read, 0, 0),
            req(Op::Read, 1, 0),
            req(Op::Read, 5, 0),
        ];
        let (acquired, e) = build_batch(&mut iocbs, &mut ptrs, &reqs, 3, |_| Ok(p)).unwrap_err();
        assert_eq!(acquired, 2);
        assert!(e.to_string().contains("slot 5 does not exist"), "{e}");
        let (acquired, _) = build_batch(&mut iocbs, &mut ptrs, &reqs, 3, |r| match r.slot {
            1 => Err(EngineError::Invalid("busy".into())),
            _ => Ok(p),
        })
        .unwrap_err();
        assert_eq!(acquired, 1);
    }

    /// Drop's drain: a deep queue that comes back one completion per wait
    /// is reaped whole, however many waits that takes (the old loop counted
    /// every wait, successful or not, toward 100 and leaked the buffers of
    /// the 101st request on); only waits that bring nothing count, and
    /// enough of them in a row give up.
    #[test]
    fn drop_drains_a_slow_deep_queue_and_gives_up_only_when_stalled() {
        // 1000 requests, one per wait, with a stall before every tenth.
        let (mut left, mut calls) = (1000usize, 0usize);
        let all_back = drain_in_flight(3, || {
            calls += 1;
            if left == 0 {
                return Ok::<_, ()>(None);
            }
            if calls % 10 == 0 {
                return Ok(Some(0));
            }
            left -= 1;
            Ok(Some(1))
        });
        assert!(all_back);
        assert_eq!(left, 0);
        assert!(calls > 1000, "{calls}");
        // Errors and timeouts alike count as stalls; a completion resets them.
        let mut script = vec![
            Err(()),
            Ok(Some(0)),
            Ok(Some(2)),
            Err(()),
            Ok(Some(0)),
            Err(()),
        ];
        script.reverse();
        let mut calls = 0;
        let all_back = drain_in_flight(3, || {
            calls += 1;
            script.pop().unwrap_or(Ok(Some(0)))
        });
        assert!(!all_back);
        assert_eq!(calls, 6, "gave up at the third stall in a row");
    }

    /// A real engine with a full queue in flight reaps it all as Drop
    /// does: none is left to leak.
    #[test]
    #[cfg_attr(miri, ignore = "io_setup is a system call")]
    fn a_full_queue_in_flight_is_reaped_whole_before_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("aio.dat");
        std::fs::write(&path, vec![0x5a; 1 << 20]).unwrap();
        let spec = OpenSpec {
            path: path.clone(),
            write: false,
            block_size: 4096,
            queue_depth: 128,
            sync: SyncPolicy::None,
            span_bytes: 1 << 20,
            sqpoll_cpu: None,
            mem_policy: None,
            buffers: Default::default(),
            noatime: false,
        };
        let mut eng = match AioEngine::open(&spec) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("skipped: aio cannot run here: {e}");
                return;
            }
        };
        let reqs: Vec<IoReq> = (0..128u32)
            .map(|s| IoReq {
                op: Op::Read,
                offset: u64::from(s) * 4096,
                len: 4096,
                slot: s,
            })
            .collect();
        let mut done = Vec::new();
        let accepted = eng.submit(&reqs, &mut done).unwrap();
        assert!(accepted > 0 && done.is_empty());
        assert_eq!(eng.in_flight(), accepted);
        assert!(eng.reap_all());
        assert_eq!(eng.in_flight(), 0);
    }
}

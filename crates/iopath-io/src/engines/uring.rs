//! io_uring: `uring` (O_DIRECT), `uring-batch`, `uring-buffered`,
//! `uring-sqpoll`, `uring-iopoll`.
//!
//! Invariants:
//! - The ring is sized for two entries per slot (a write and its linked
//!   fsync under `--sync each`), so pushing never finds the SQ full while
//!   at most `queue_depth` slots are in flight.
//! - Buffers are registered (fixed) when RLIMIT_MEMLOCK allows it (the soft
//!   limit is raised up to the hard one if needed); otherwise plain buffers
//!   are used and [`Caps::notes`] says why.
//! - Dropping the engine first waits for every request in flight, so the
//!   kernel never writes into freed memory; if waiting fails, the buffers are
//!   leaked rather than freed.
//! - O_DIRECT requests reach the kernel each in its own `io_uring_enter` as
//!   soon as [`Engine::submit`] has them (as fio does by default), except
//!   the last of each call, which stays in the SQ for the enter of the
//!   [`Engine::reap`] that follows, which submits it and waits in one
//!   system call (t/io_uring's `-s1 -c1`; one enter per request, not two,
//!   when one wait frees one slot); handed
//!   several per enter, the kernel plugs them and the device starts on the
//!   first only after the last is built, which on a virtio disk cost about
//!   15% of 4 KiB QD32 IOPS against fio (docs/performance.md).
//!   `uring-buffered` requests, mostly served from the page cache without
//!   a device, are deferred to [`Engine::reap`] instead (one enter submits
//!   the batch and waits), which spares a system call per request and gave
//!   about 25% more cached IOPS. With SQPOLL, `submit` wakes the kernel
//!   thread only when it sleeps. `uring-batch` defers its O_DIRECT
//!   requests the same way, and each wait asks for a quarter of the queue
//!   depth (at least 1, never more than are in flight), so one enter hands
//!   over the requests the last wait freed and waits for the next batch
//!   (t/io_uring `-s8 -c8` at depth 32).
//! - On a single-issuer ring the ring's own descriptor is registered
//!   (`IORING_REGISTER_RING_FDS`, t/io_uring's `-X`) by the issuing thread,
//!   and its enters pass the registered index: the kernel skips looking the
//!   descriptor up on every call. Registrations belong to the thread, so
//!   only the single issuer (which `bind` enforces) uses it, and Drop on
//!   that thread unregisters it.
//! - Where the kernel has DEFER_TASKRUN (6.1+), the ring is built with
//!   SINGLE_ISSUER and disabled, and enabled by the first `submit` or
//!   `reap`: from then on the engine belongs to that thread (the runner
//!   opens, uses and drops each engine on one worker thread). Completions
//!   then appear only when that thread enters the kernel to wait, which
//!   `reap` does whenever the CQ lacks what it needs.
//! - IOPOLL is proven by a real completion (see [`crate::probe`]): a device
//!   without poll queues completes every request with EOPNOTSUPP.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use io_uring::{opcode, squeue, types, IoUring};

use crate::buf::SlotPool;

mod ring_fd;
use crate::sys::ensure_memlock;
use crate::{Caps, Completion, Engine, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

/// user_data bit marking the fsync linked behind a write.
const FSYNC_TAG: u64 = 1 << 32;

pub struct UringEngine {
    ring: IoUring,
    file: File,
    path: PathBuf,
    pool: SlotPool,
    caps: Caps,
    fixed_bufs: bool,
    fixed_file: bool,
    sqpoll: bool,
    /// Enter the kernel for every request in `submit` but the last
    /// (O_DIRECT, no SQPOLL, not `uring-batch`).
    eager: bool,
    /// Completions each wait of `reap` asks for at least (a quarter of the
    /// queue depth for `uring-batch`, else 1).
    wait_batch: usize,
    /// The ring's descriptor as registered by its single issuer.
    ring_index: Option<u32>,
    fsync_each: bool,
    /// The ring was built disabled (DEFER_TASKRUN) and not yet enabled.
    disabled: bool,
    /// The thread that enabled it, its single issuer.
    owner: Option<std::thread::ThreadId>,
    /// CQEs still expected per slot (2 for a write with a linked fsync).
    pending: Vec<u8>,
    /// Result of each slot's read/write, and of its linked fsync.
    rw_res: Vec<i32>,
    fsync_res: Vec<i32>,
    method: Method,
    /// `RWF_*` flags of every read and write (`uring-dontcache`).
    rw_flags: i32,
    /// Bytes the engine may touch (the span hints apply to).
    span: u64,
}

impl UringEngine {
    pub fn open(method: Method, spec: &OpenSpec) -> Result<UringEngine, EngineError> {
        let direct = !matches!(method, Method::UringBuffered | Method::UringDontcache);
        let sqpoll = method == Method::UringSqpoll;
        let iopoll = method == Method::UringIopoll;
        let fsync_each = spec.sync == SyncPolicy::Each;
        if iopoll && fsync_each {
            return Err(EngineError::Unsupported {
                method,
                reason: "IOPOLL rings cannot run fsync; use --sync end or dsync".into(),
            });
        }
        let qd = spec.queue_depth.clamp(1, 4096);
        let entries = (qd * 2).next_power_of_two() as u32;

        let (ring, deferred) = build_ring(method, spec, entries, sqpoll, iopoll)?;

        let file = super::open_spec(method, spec, direct)?;
        let (offset_align, mem_align) = super::layout(&spec.path, direct);
        let (mut pool, buffer_nodes) = super::slot_pool(method, spec, qd, mem_align)?;
        let mut notes = Vec::new();

        // Registered buffers: pinned memory, counted against RLIMIT_MEMLOCK
        // unless the process has CAP_IPC_LOCK. Try first; on ENOMEM/EPERM
        // raise the soft limit if the hard one allows, try again, and fall
        // back to plain buffers with the reason.
        let fixed_bufs = if pool.slots() > u16::MAX as usize {
            notes.push("more slots than registered buffers allow; using plain buffers".into());
            false
        } else {
            // SAFETY: `pool` lives in this engine at a fixed address until
            // the ring is dropped (Drop waits for in-flight requests, and the
            // ring is declared, hence dropped, before the pool).
            unsafe { register_pool(&ring, &mut pool, &mut notes, "--qd/--bs") }
        };
        let fixed_file = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        if !fixed_file {
            notes.push("registering the file failed; using its plain descriptor".into());
        }

        Ok(UringEngine {
            ring,
            file,
            path: spec.path.clone(),
            pool,
            caps: Caps {
                is_async: true,
                queue_depth: qd,
                offset_align,
                mem_align,
                notes,
                buffer_nodes,
            },
            fixed_bufs,
            fixed_file,
            sqpoll,
            eager: direct && !sqpoll && method != Method::UringBatch,
            wait_batch: if method == Method::UringBatch {
                (qd / 4).max(1)
            } else {
                1
            },
            ring_index: None,
            fsync_each,
            disabled: deferred,
            owner: None,
            pending: vec![0; qd],
            rw_res: vec![0; qd],
            fsync_res: vec![0; qd],
            method,
            rw_flags: if method == Method::UringDontcache {
                super::RWF_DONTCACHE
            } else {
                0
            },
            span: spec.span_bytes,
        })
    }

    fn build_rw(&self, r: &IoReq, ptr: *mut u8) -> squeue::Entry {
        let user_data = r.slot as u64;
        macro_rules! rw {
            ($fd:expr) => {
                match (r.op, self.fixed_bufs) {
                    (Op::Read, true) => opcode::ReadFixed::new($fd, ptr, r.len, r.slot as u16)
                        .offset(r.offset)
                        .rw_flags(self.rw_flags)
                        .build(),
                    (Op::Write, true) => opcode::WriteFixed::new($fd, ptr, r.len, r.slot as u16)
                        .offset(r.offset)
                        .rw_flags(self.rw_flags)
                        .build(),
                    (Op::Read, false) => opcode::Read::new($fd, ptr, r.len)
                        .offset(r.offset)
                        .rw_flags(self.rw_flags)
                        .build(),
                    (Op::Write, false) => opcode::Write::new($fd, ptr, r.len)
                        .offset(r.offset)
                        .rw_flags(self.rw_flags)
                        .build(),
                }
            };
        }
        let e = if self.fixed_file {
            rw!(types::Fixed(0))
        } else {
            rw!(types::Fd(self.file.as_raw_fd()))
        };
        e.user_data(user_data)
    }

    fn build_fsync(&self, slot: u32) -> squeue::Entry {
        let e = if self.fixed_file {
            opcode::Fsync::new(types::Fixed(0)).build()
        } else {
            opcode::Fsync::new(types::Fd(self.file.as_raw_fd())).build()
        };
        e.user_data(FSYNC_TAG | slot as u64)
    }

    /// Move every available CQE into `done`. Returns how many completions
    /// (slots finished) were produced.
    fn drain(&mut self, done: &mut Vec<Completion>) -> usize {
        let mut produced = 0;
        let mut cq = self.ring.completion();
        cq.sync();
        for cqe in &mut cq {
            let ud = cqe.user_data();
            let slot = (ud & 0xffff_ffff) as u32;
            let i = slot as usize;
            if i >= self.pending.len() || self.pending[i] == 0 {
                continue; // not ours (cannot happen); never underflow
            }
            if ud & FSYNC_TAG != 0 {
                self.fsync_res[i] = cqe.result();
            } else {
                self.rw_res[i] = cqe.result();
            }
            self.pending[i] -= 1;
            if self.pending[i] > 0 {
                continue; // the write's linked fsync is still running
            }
            let (w, f) = (self.rw_res[i], self.fsync_res[i]);
            let outcome = if w < 0 {
                w
            } else if f < 0 && f != -libc::ECANCELED {
                f
            } else {
                w
            };
            self.pool.release(slot);
            done.push(Completion {
                slot,
                result: if outcome < 0 {
                    Err(-outcome)
                } else {
                    Ok(outcome as u32)
                },
            });
            produced += 1;
        }
        produced
    }

    /// Enable a ring built disabled, which makes the calling thread its
    /// single issuer; refuse calls from any other thread afterwards (the
    /// kernel would answer EEXIST, leaving requests stranded in the SQ).
    #[inline]
    fn bind(&mut self) -> Result<(), EngineError> {
        let me = this_thread();
        if self.disabled {
            self.ring
                .submitter()
                .register_enable_rings()
                .map_err(|e| EngineError::os("io_uring_register(ENABLE_RINGS)", &self.path, e))?;
            self.disabled = false;
            self.owner = Some(me);
            self.ring_index = ring_fd::register(&self.ring);
        } else if self.owner.is_some_and(|o| o != me) {
            return Err(EngineError::Invalid(
                "this io_uring engine belongs to the thread that first used it (IORING_SETUP_SINGLE_ISSUER); submit, reap and drop it on that thread".into(),
            ));
        }
        Ok(())
    }

    /// Submit what the SQ holds and wait for `want` completions. Transient
    /// refusals are not errors ([`on_enter_error`]): EINTR enters again,
    /// EBUSY (a CQ overflow backlog) and EAGAIN with completions to drain
    /// return so the caller drains them, EAGAIN with requests in the kernel
    /// waits for one of them without submitting, and EAGAIN with nothing to
    /// wait for sleeps and tries again, for [`EAGAIN_GIVE_UP`] at most.
    ///
    /// The call that succeeds is inlined into `submit` and `reap`: after a
    /// wait (a context switch) the CPU's return predictions are gone, and
    /// each function return between the system call and the worker's loop
    /// mispredicted (the instructions after those returns held about 3% of
    /// the worker's samples at 4 KiB QD32).
    #[inline(always)]
    fn enter(&mut self, want: usize) -> Result<(), EngineError> {
        match self.submit_and_wait(want) {
            Ok(_) => Ok(()),
            Err(e) => self.enter_failed(want, e),
        }
    }

    /// [`Self::enter`] after `io_uring_enter` failed with `first`.
    #[cold]
    #[inline(never)]
    fn enter_failed(&mut self, want: usize, first: std::io::Error) -> Result<(), EngineError> {
        let mut slept = std::time::Duration::ZERO;
        let mut failed = Some(first);
        loop {
            let e = match failed.take() {
                Some(e) => e,
                None => match self.submit_and_wait(want) {
                    Ok(_) => return Ok(()),
                    Err(e) => e,
                },
            };
            let cq_ready = !self.ring.completion().is_empty();
            match on_enter_error(e.raw_os_error(), cq_ready, self.in_kernel() > 0, slept) {
                OnEnterError::Again => continue,
                OnEnterError::Drain => return Ok(()),
                OnEnterError::WaitOne => return self.wait_one(),
                OnEnterError::Sleep(d) => {
                    std::thread::sleep(d);
                    slept += d;
                }
                OnEnterError::Fail if e.raw_os_error() == Some(libc::EAGAIN) => {
                    return Err(EngineError::Os {
                        op: "io_uring_enter",
                        path: self.path.clone(),
                        source: e,
                        hint: Some(format!(
                            "the kernel could not get memory for new requests for {} s in a row: free memory, or lower --qd or --threads",
                            EAGAIN_GIVE_UP.as_secs()
                        )),
                    })
                }
                OnEnterError::Fail => {
                    return Err(EngineError::os("io_uring_enter", &self.path, e))
                }
            }
        }
    }

    /// `IoUring::submit_and_wait`, through the registered ring descriptor
    /// when there is one (the crate forgets a registration with the
    /// `Submitter` that made it).
    #[inline(always)]
    fn submit_and_wait(&mut self, want: usize) -> std::io::Result<usize> {
        match self.ring_index {
            // SAFETY: the index was registered by this thread, the ring's
            // single issuer (`bind` refuses any other), and stays so until
            // Drop; the SQEs it submits point at slots of `self.pool` marked
            // in flight until their completion is drained.
            Some(index) => unsafe { ring_fd::submit_and_wait(&mut self.ring, index, want) },
            None => self.ring.submit_and_wait(want),
        }
    }

    /// Requests the kernel has taken from the SQ and not yet completed
    /// (entries, a write and its linked fsync counting two).
    fn in_kernel(&mut self) -> usize {
        let expected: usize = self.pending.iter().map(|&p| usize::from(p)).sum();
        expected.saturating_sub(self.ring.submission().len())
    }

    /// Wait for one completion without submitting (`io_uring_enter(0, 1,
    /// GETEVENTS)`); only called with requests in the kernel, so one comes.
    fn wait_one(&mut self) -> Result<(), EngineError> {
        /// `IORING_ENTER_GETEVENTS` of `<linux/io_uring.h>`.
        const GETEVENTS: u32 = 1;
        loop {
            // SAFETY: submits nothing (to_submit 0, so no SQE the kernel
            // could read is involved) and passes no argument; the ring is
            // alive. GETEVENTS waits for a completion of a request already
            // in the kernel (the caller checked one is), whose buffer is a
            // slot marked in flight.
            let r = unsafe {
                self.ring
                    .submitter()
                    .enter::<libc::sigset_t>(0, 1, GETEVENTS, None)
            };
            match r {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(EngineError::os("io_uring_enter", &self.path, e)),
            }
        }
    }
}

/// The calling thread's id: one Rust never hands out again (a `pthread_t`
/// is reused once its thread is joined). Kept per thread, so that the check
/// `bind` makes on every submit and reap is a thread-local load, not the
/// clone and drop of a `Thread` handle (two atomic read-modify-writes of a
/// shared count, four per request).
#[inline]
fn this_thread() -> std::thread::ThreadId {
    thread_local! {
        static ME: std::thread::ThreadId = std::thread::current().id();
    }
    ME.with(|me| *me)
}

/// How long `enter` keeps trying while the kernel answers EAGAIN with
/// nothing to drain or wait for.
const EAGAIN_GIVE_UP: std::time::Duration = std::time::Duration::from_secs(5);

/// What `enter` does when `io_uring_enter` failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnEnterError {
    /// Enter again at once (EINTR: a signal interrupted it).
    Again,
    /// Return: the caller drains the CQ and enters again (EBUSY: a CQ
    /// overflow backlog; EAGAIN with completions waiting, whose draining
    /// frees what the kernel lacked).
    Drain,
    /// Wait for a completion without submitting, then return (EAGAIN with
    /// requests in the kernel: one finishing frees what it lacked).
    WaitOne,
    /// Sleep this long, then enter again (EAGAIN with nothing in the
    /// kernel: short of memory for a moment).
    Sleep(std::time::Duration),
    /// Report the error.
    Fail,
}

/// The decision for an `io_uring_enter` that failed with `errno`, when
/// completions are waiting in the CQ (`cq_ready`), requests are in the
/// kernel (`in_kernel`), and after sleeping `slept` in all already. EAGAIN
/// ("the kernel was unable to allocate memory for the request, or
/// otherwise ran out of resources": try again once some complete) is
/// transient, as is EINTR. Sleeps back off (each as long as all before
/// it: 10 µs, 10, 20, 40 ... up to 1 ms each), and the error is reported
/// once they add up to [`EAGAIN_GIVE_UP`].
fn on_enter_error(
    errno: Option<i32>,
    cq_ready: bool,
    in_kernel: bool,
    slept: std::time::Duration,
) -> OnEnterError {
    use std::time::Duration;
    match errno {
        Some(libc::EINTR) => OnEnterError::Again,
        Some(libc::EBUSY) => OnEnterError::Drain,
        Some(libc::EAGAIN) if cq_ready => OnEnterError::Drain,
        Some(libc::EAGAIN) if in_kernel => OnEnterError::WaitOne,
        Some(libc::EAGAIN) if slept < EAGAIN_GIVE_UP => {
            OnEnterError::Sleep(slept.clamp(Duration::from_micros(10), Duration::from_millis(1)))
        }
        _ => OnEnterError::Fail,
    }
}

impl std::fmt::Debug for UringEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringEngine")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("caps", &self.caps)
            .field("fixed_bufs", &self.fixed_bufs)
            .field("fixed_file", &self.fixed_file)
            .finish_non_exhaustive()
    }
}

impl Engine for UringEngine {
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
        self.bind()?;
        for (k, r) in reqs.iter().enumerate() {
            super::check_aligned(&self.path, r, self.caps.offset_align)?;
            let ptr = self.pool.acquire(r.slot, r.len)?;
            let rw = self.build_rw(r, ptr);
            let linked_fsync = self.fsync_each && r.op == Op::Write;
            let rw = if linked_fsync {
                rw.flags(squeue::Flags::IO_LINK)
            } else {
                rw
            };
            let fsync = linked_fsync.then(|| self.build_fsync(r.slot));
            let i = r.slot as usize;
            self.pending[i] = if linked_fsync { 2 } else { 1 };
            self.fsync_res[i] = 0;
            let mut sq = self.ring.submission();
            // SAFETY: the entry points at slot `r.slot` of `self.pool`, which
            // stays allocated and is not lent out (it is marked in flight)
            // until its completion is drained; registered buffer and file
            // indices are valid for this ring.
            let pushed = unsafe {
                match &fsync {
                    Some(f) => sq.push_multiple(&[rw, f.clone()]).is_ok(),
                    None => sq.push(&rw).is_ok(),
                }
            };
            drop(sq);
            if !pushed {
                // Cannot happen with the ring sized at 2 entries per slot; be
                // safe anyway and hand the slot back.
                self.pending[i] = 0;
                self.pool.release(r.slot);
                return Err(EngineError::Invalid(
                    "io_uring submission queue full".into(),
                ));
            }
            if self.eager && k + 1 < reqs.len() && self.enter(0).is_err() {
                // The requests pushed so far are in the SQ, hence accepted:
                // the next enter (in `reap` or Drop) submits them, and
                // reports the error again if it persists.
                return Ok(k + 1);
            }
        }
        if self.sqpoll {
            self.enter(0)?;
        }
        Ok(reqs.len())
    }

    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.bind()?;
        let mut got = self.drain(done);
        let want = if min == 0 {
            0
        } else {
            min.max(self.wait_batch)
        };
        let target = want.min(self.pool.in_flight() + got);
        if got >= target {
            // Completions were already waiting. Requests still in the SQ
            // (deferred ones, or an enter in `submit` failed or met a CQ
            // backlog) must reach the kernel now, or the effective queue
            // depth would sag (SQPOLL's kernel thread picks them up itself).
            if !self.sqpoll && !self.ring.submission().is_empty() {
                self.enter(0)?;
            }
            return Ok(());
        }
        while got < target {
            self.enter(target - got)?;
            got += self.drain(done);
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

    fn advise(&mut self, hint: crate::Hint) -> Result<(), EngineError> {
        if !matches!(self.method, Method::UringBuffered | Method::UringDontcache) {
            return Err(crate::hint::refused(self.method, hint));
        }
        crate::hint::fadvise(self.method, &self.file, &self.path, hint, self.span)
    }

    fn method(&self) -> Method {
        self.method
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        let mut sink = Vec::new();
        // On a thread other than the single issuer no enter can wait: skip
        // straight to leaking the buffers if requests are in flight.
        let mut tries = if self.pool.in_flight() == 0 || self.bind().is_ok() {
            0
        } else {
            1000
        };
        while self.pool.in_flight() > 0 && tries < 1000 {
            let want = self.pool.in_flight();
            if self.enter(want).is_err() {
                tries += 100;
            }
            self.drain(&mut sink);
            sink.clear();
            tries += 1;
        }
        if let Some(index) = self.ring_index.take() {
            if self.owner == Some(this_thread()) {
                ring_fd::unregister(&self.ring, index);
            }
        }
        if self.pool.in_flight() > 0 {
            // The kernel may still write into the buffers: leak them rather
            // than free memory it owns.
            let pool = std::mem::replace(&mut self.pool, SlotPool::new(1, 1, 1));
            std::mem::forget(pool);
        }
    }
}

/// What io_uring offers on this kernel: feature flags and whether the opcodes
/// iopath uses are supported. `Err` says why io_uring cannot be used.
pub fn features() -> Result<Vec<String>, String> {
    let ring = IoUring::new(8).map_err(|e| {
        let hint = crate::sys::errno_hint("io_uring_setup", &e);
        format!("{e}{}", hint.map(|h| format!(": {h}")).unwrap_or_default())
    })?;
    let p = ring.params();
    let mut out = Vec::new();
    let flags = [
        ("single_mmap", p.is_feature_single_mmap()),
        ("nodrop", p.is_feature_nodrop()),
        ("submit_stable", p.is_feature_submit_stable()),
        ("rw_cur_pos", p.is_feature_rw_cur_pos()),
        ("fast_poll", p.is_feature_fast_poll()),
        ("sqpoll_nonfixed", p.is_feature_sqpoll_nonfixed()),
        ("ext_arg", p.is_feature_ext_arg()),
        ("native_workers", p.is_feature_native_workers()),
        ("resource_tagging", p.is_feature_resource_tagging()),
        ("skip_cqe_on_success", p.is_feature_skip_cqe_on_success()),
        ("linked_file", p.is_feature_linked_file()),
    ];
    out.extend(flags.iter().filter(|f| f.1).map(|f| f.0.to_string()));
    let mut probe = io_uring::Probe::new();
    if ring.submitter().register_probe(&mut probe).is_ok() {
        for (name, code) in [
            ("op:read_fixed", opcode::ReadFixed::CODE),
            ("op:write_fixed", opcode::WriteFixed::CODE),
            ("op:read", opcode::Read::CODE),
            ("op:write", opcode::Write::CODE),
            ("op:fsync", opcode::Fsync::CODE),
        ] {
            if probe.is_supported(code) {
                out.push(name.to_string());
            }
        }
    }
    Ok(out)
}

/// Register `pool`'s buffers with `ring`. Registered buffers are pinned
/// memory charged to RLIMIT_MEMLOCK (unless CAP_IPC_LOCK): on ENOMEM/EPERM
/// raise the soft limit up to the hard one and try again; when they still
/// cannot be registered, say why in `notes` (naming `smaller`, the options
/// that shrink them) and answer false: the caller uses plain buffers.
///
/// # Safety
/// `pool` must stay at its address and alive until `ring` is dropped, and
/// the ring dropped only once no request using the buffers is in flight.
pub(crate) unsafe fn register_pool(
    ring: &IoUring,
    pool: &mut SlotPool,
    notes: &mut Vec<String>,
    smaller: &str,
) -> bool {
    let iovecs = pool.iovecs();
    // SAFETY: every iovec points into `pool`'s allocation, which the caller
    // keeps in place and alive for as long as the ring (this fn's contract).
    let register = || unsafe { ring.submitter().register_buffers(&iovecs) };
    match register() {
        Ok(()) => true,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOMEM) | Some(libc::EPERM)) => {
            match ensure_memlock(pool.bytes() as u64) {
                Err(why) => {
                    notes.push(format!(
                        "registered buffers unavailable ({why}); using plain buffers"
                    ));
                    false
                }
                Ok(_) => match register() {
                    Ok(()) => {
                        notes.push(
                            "raised the RLIMIT_MEMLOCK soft limit to register buffers".into(),
                        );
                        true
                    }
                    Err(e) => {
                        notes.push(format!(
                            "registering {} bytes of buffers failed ({e}: raise RLIMIT_MEMLOCK with ulimit -l, or lower {smaller}); using plain buffers",
                            pool.bytes()
                        ));
                        false
                    }
                },
            }
        }
        Err(e) => {
            notes.push(format!(
                "registering buffers failed ({e}); using plain buffers"
            ));
            false
        }
    }
}

/// The ring for `method`: SQPOLL or IOPOLL as the method asks; else, best
/// first, DEFER_TASKRUN (started disabled: see `bind`), COOP_TASKRUN, or
/// neither. Whether the ring was built deferred (and so disabled).
fn build_ring(
    method: Method,
    spec: &OpenSpec,
    entries: u32,
    sqpoll: bool,
    iopoll: bool,
) -> Result<(IoUring, bool), EngineError> {
    let mut builder = IoUring::builder();
    if sqpoll {
        builder.setup_sqpoll(1000);
        if let Some(cpu) = spec.sqpoll_cpu {
            builder.setup_sqpoll_cpu(cpu);
        }
    }
    if iopoll {
        builder.setup_iopoll();
    }
    // Completions are processed when the worker next enters the kernel
    // (it is about to, to wait) instead of interrupting it. Best:
    // DEFER_TASKRUN (Linux 6.1+; needs SINGLE_ISSUER), which also wakes
    // the waiting worker only once enough completions are there; fio
    // uses it, and it gave about 5% more 4 KiB QD32 IOPS here. The ring
    // starts disabled so that the thread which first submits, not the
    // one which opens, becomes its single issuer (see `bind`). Else
    // COOP_TASKRUN (5.19+), else nothing. Neither is valid with SQPOLL;
    // kernels without them answer EINVAL.
    // NO_SQARRAY (6.6+) drops the SQ's index array: the kernel takes
    // SQEs in ring order, one indirection less per request (t/io_uring
    // sets it; the crate then fills no array).
    let mut deferred = false;
    let built = if !sqpoll {
        let mut defer = builder.clone();
        defer
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_r_disabled();
        let mut flat = defer.clone();
        flat.setup_no_sqarray();
        let mut coop = builder.clone();
        coop.setup_coop_taskrun();
        let einval = |r: &std::io::Result<IoUring>| matches!(r, Err(e) if e.raw_os_error() == Some(libc::EINVAL));
        let mut r = flat.build(entries);
        if einval(&r) {
            r = defer.build(entries);
        }
        deferred = r.is_ok();
        if einval(&r) {
            r = coop.build(entries);
        }
        if einval(&r) {
            r = builder.build(entries);
        }
        r
    } else {
        builder.build(entries)
    };
    let ring = match built {
        Ok(r) => r,
        Err(e) => {
            let hint = crate::sys::errno_hint("io_uring_setup", &e);
            return Err(match e.raw_os_error() {
                // Refused by policy or kernel, or (ENOMEM) the user's
                // locked-memory budget is spent: io_uring charges ring
                // memory to the user, shared by all of its processes.
                Some(libc::EPERM) | Some(libc::ENOSYS) | Some(libc::EINVAL)
                | Some(libc::ENOMEM) => EngineError::Unsupported {
                    method,
                    reason: format!(
                        "io_uring_setup failed: {e}{}",
                        hint.map(|h| format!(" ({h})")).unwrap_or_default()
                    ),
                },
                _ => EngineError::os("io_uring_setup", &spec.path, e),
            });
        }
    };
    Ok((ring, deferred))
}

#[cfg(test)]
mod batch_tests;

#[cfg(test)]
mod tests;

//! The `uring` copy method: an io_uring pipeline with O_DIRECT and
//! registered buffers, up to `depth` chunks in flight, each read into its
//! slot and then written from it (and `fsync`ed under `each`); the tail
//! past the O_DIRECT alignment goes through the page cache as in
//! `read-write-direct`.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::Path;
use std::time::Instant;

use io_uring::{opcode, squeue, types, IoUring};

use super::files::{short_source, write_zero};
use super::job::Job;
use super::{CopyMethod, MAX_DEPTH};
use crate::buf::SlotPool;
use crate::{EngineError, SyncPolicy};

impl Job<'_> {
    pub(super) fn uring(&mut self, dst: &File) -> Result<(), EngineError> {
        let (align, mem) = self.direct_layout(dst)?;
        let len = self.spec.len;
        let prefix = len / align as u64 * align as u64;
        let slot_size = self.buf_len(align);
        let chunks_in_prefix = prefix.div_ceil(slot_size as u64);
        let depth = self.spec.depth.min(MAX_DEPTH) as u64;
        let slots = depth.min(chunks_in_prefix).max(1) as usize;
        let src = self.src;
        let mut p = Pipeline::new(
            self.method,
            src.as_fd(),
            dst.as_fd(),
            slots,
            slot_size,
            mem,
            self.spec.sync == SyncPolicy::Each,
            &mut self.notes,
            &self.spec.dst,
        )?;
        p.run(prefix, self)?;
        debug_assert_eq!(p.active, 0);
        // The ring is idle now (every chunk completed): its slot 0 serves
        // the tail.
        let Some(buf) = p.pool.get_mut(0) else {
            return Err(EngineError::Invalid(
                "io_uring slot 0 still in flight".into(),
            ));
        };
        self.buffered_tail(dst, buf, prefix, align)?;
        drop(p);
        Ok(())
    }
}

/// What a `uring` slot's request is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Reading,
    Writing,
    Syncing,
}

/// One chunk in flight in a slot.
#[derive(Debug, Clone, Copy)]
struct Slot {
    phase: Phase,
    /// File offset of the chunk.
    off: u64,
    /// Chunk length.
    len: u32,
    /// Bytes of the current phase done (short reads/writes resume here).
    done: u32,
    /// When the chunk's read was queued.
    t0: Instant,
}

/// The `uring` copy pipeline.
///
/// Invariants:
/// - Every slot has at most one request queued or in flight (a read, a
///   write or an fsync), whose user_data is the slot index; `active` counts
///   them. Only the CQE of that request moves the slot on.
/// - Requests point into `pool`, which lives as long as the pipeline; the
///   files are borrowed for the pipeline's lifetime, so they stay open.
/// - Drop waits until `active` is 0 before `pool` is freed (the ring field
///   is declared first, so it is also closed before the pool is freed); if
///   waiting fails, the pool is leaked rather than freed under the kernel.
struct Pipeline<'f> {
    ring: IoUring,
    pool: SlotPool,
    /// Address of each slot's buffer (from `pool`).
    bases: Vec<*mut u8>,
    slots: Vec<Slot>,
    active: usize,
    src: BorrowedFd<'f>,
    dst: BorrowedFd<'f>,
    fixed_bufs: bool,
    fixed_files: bool,
    fsync_each: bool,
}

impl<'f> Pipeline<'f> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        method: CopyMethod,
        src: BorrowedFd<'f>,
        dst: BorrowedFd<'f>,
        slots: usize,
        slot_size: usize,
        mem_align: usize,
        fsync_each: bool,
        notes: &mut Vec<String>,
        dst_path: &Path,
    ) -> Result<Pipeline<'f>, EngineError> {
        let ring = new_ring(method, slots, dst_path)?;
        let mut pool = SlotPool::new(slots, slot_size, mem_align);
        let bases: Vec<*mut u8> = pool.iovecs().iter().map(|v| v.iov_base.cast()).collect();
        // SAFETY: `pool` stays at a fixed address for as long as the ring:
        // both live in the pipeline, whose Drop waits for every request
        // before the ring and then the pool are dropped.
        let fixed_bufs = unsafe {
            crate::engines::uring::register_pool(&ring, &mut pool, notes, "the depth or chunk")
        };
        let fixed_files = ring
            .submitter()
            .register_files(&[src.as_raw_fd(), dst.as_raw_fd()])
            .is_ok();
        if !fixed_files {
            notes.push("registering the files failed; using their plain descriptors".into());
        }
        let idle = Slot {
            phase: Phase::Idle,
            off: 0,
            len: 0,
            done: 0,
            t0: Instant::now(),
        };
        Ok(Pipeline {
            ring,
            pool,
            bases,
            slots: vec![idle; slots],
            active: 0,
            src,
            dst,
            fixed_bufs,
            fixed_files,
            fsync_each,
        })
    }

    /// The request slot `s` needs next: the rest of its read or write, or
    /// its fsync.
    fn entry(&self, s: usize) -> squeue::Entry {
        let st = self.slots[s];
        let fd = |i: u32, f: BorrowedFd<'_>| -> (types::Fixed, types::Fd) {
            (types::Fixed(i), types::Fd(f.as_raw_fd()))
        };
        let (fixed, plain) = match st.phase {
            Phase::Reading => fd(0, self.src),
            _ => fd(1, self.dst),
        };
        let ptr = self.bases[s].wrapping_add(st.done as usize);
        let len = st.len - st.done;
        let off = st.off + u64::from(st.done);
        let idx = s as u16;
        macro_rules! op {
            ($fd:expr) => {
                match (st.phase, self.fixed_bufs) {
                    (Phase::Reading, true) => opcode::ReadFixed::new($fd, ptr, len, idx)
                        .offset(off)
                        .build(),
                    (Phase::Reading, false) => opcode::Read::new($fd, ptr, len).offset(off).build(),
                    (Phase::Writing, true) => opcode::WriteFixed::new($fd, ptr, len, idx)
                        .offset(off)
                        .build(),
                    (Phase::Writing, false) => {
                        opcode::Write::new($fd, ptr, len).offset(off).build()
                    }
                    (Phase::Syncing | Phase::Idle, _) => opcode::Fsync::new($fd).build(),
                }
            };
        }
        let e = if self.fixed_files {
            op!(fixed)
        } else {
            op!(plain)
        };
        e.user_data(s as u64)
    }

    /// Queue slot `s`'s next request.
    fn push(&mut self, s: usize) -> Result<(), EngineError> {
        let e = self.entry(s);
        // SAFETY: the entry points at slot `s` of `self.pool` (within its
        // `slot_size` bytes: `done <= len <= slot_size`), which stays
        // allocated until the request completes (Drop waits for every one
        // counted in `active`); no Rust reference to that slot exists while
        // it is in flight (the pool is only borrowed when `active` is 0).
        // The files are borrowed for the pipeline's lifetime, and the
        // registered buffer and file indices are valid for this ring.
        let pushed = unsafe { self.ring.submission().push(&e) }.is_ok();
        if !pushed {
            // Cannot happen: the SQ has an entry per slot and each slot has
            // at most one request queued.
            self.slots[s].phase = Phase::Idle;
            return Err(EngineError::Invalid(
                "io_uring submission queue full".into(),
            ));
        }
        self.active += 1;
        Ok(())
    }

    /// Start reading the chunk at `off` of `len` bytes into slot `s`.
    fn start_read(&mut self, s: usize, off: u64, len: u32) -> Result<(), EngineError> {
        self.slots[s] = Slot {
            phase: Phase::Reading,
            off,
            len,
            done: 0,
            t0: Instant::now(),
        };
        self.push(s)
    }

    /// The next completion (user_data, result), if one is there.
    #[inline]
    fn next_cqe(&mut self) -> Option<(u64, i32)> {
        self.ring
            .completion()
            .next()
            .map(|c| (c.user_data(), c.result()))
    }

    /// Submit what is queued and wait for at least `want` completions.
    fn enter(&mut self, want: usize, path: &Path) -> Result<(), EngineError> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // CQ overflow backlog: the caller drains and comes back.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Ok(()),
                Err(e) => return Err(EngineError::os("io_uring_enter", path, e)),
            }
        }
    }

    /// Copy `[0, prefix)` with up to one chunk per slot in flight.
    fn run(&mut self, prefix: u64, job: &mut Job<'_>) -> Result<(), EngineError> {
        let chunk = self.pool.slot_size() as u64;
        let mut next = 0u64;
        for s in 0..self.slots.len() {
            if next >= prefix {
                break;
            }
            let n = (prefix - next).min(chunk);
            self.start_read(s, next, n as u32)?;
            next += n;
        }
        while self.active > 0 {
            self.enter(1, &job.spec.dst)?;
            while let Some((user_data, res)) = self.next_cqe() {
                // The request of this slot is over, whatever its result.
                self.active -= 1;
                let s = user_data as usize;
                let Some(st) = self.slots.get(s).copied() else {
                    continue; // not ours (cannot happen)
                };
                let path = if st.phase == Phase::Reading {
                    &job.spec.src
                } else {
                    &job.spec.dst
                };
                if res < 0 {
                    self.slots[s].phase = Phase::Idle;
                    let op = match st.phase {
                        Phase::Reading => "io_uring read",
                        Phase::Writing => "io_uring write",
                        _ => "io_uring fsync",
                    };
                    return Err(EngineError::os(
                        op,
                        path,
                        io::Error::from_raw_os_error(-res),
                    ));
                }
                let res = res as u32;
                match st.phase {
                    Phase::Reading | Phase::Writing if res == 0 => {
                        self.slots[s].phase = Phase::Idle;
                        return Err(if st.phase == Phase::Reading {
                            short_source(path, st.off + u64::from(st.done), job.spec.len)
                        } else {
                            write_zero(path)
                        });
                    }
                    Phase::Reading | Phase::Writing if st.done + res < st.len => {
                        // Short: queue the rest.
                        self.slots[s].done += res;
                        self.push(s)?;
                        continue;
                    }
                    Phase::Reading => {
                        self.slots[s].phase = Phase::Writing;
                        self.slots[s].done = 0;
                        self.push(s)?;
                        continue;
                    }
                    Phase::Writing if self.fsync_each => {
                        self.slots[s].phase = Phase::Syncing;
                        self.push(s)?;
                        continue;
                    }
                    Phase::Writing | Phase::Syncing => {}
                    Phase::Idle => continue, // cannot happen
                }
                // The chunk is copied: report it and start the next one in
                // this slot.
                job.chunk_done(u64::from(st.len), st.t0)?;
                self.slots[s].phase = Phase::Idle;
                if next < prefix {
                    let n = (prefix - next).min(chunk);
                    self.start_read(s, next, n as u32)?;
                    next += n;
                }
            }
        }
        Ok(())
    }
}

impl Drop for Pipeline<'_> {
    fn drop(&mut self) {
        // Wait for every request still queued or in flight: they point into
        // the pool, which is freed after this.
        let mut failures = 0;
        while self.active > 0 && failures < 10 {
            match self.ring.submit_and_wait(self.active) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(_) => failures += 1,
            }
            while self.ring.completion().next().is_some() {
                self.active = self.active.saturating_sub(1);
            }
        }
        if self.active > 0 {
            // The kernel may still write into the buffers: leak them rather
            // than free memory it owns.
            let pool = std::mem::replace(&mut self.pool, SlotPool::new(1, 1, 1));
            std::mem::forget(pool);
            return;
        }
        // Drop the ring's references to the files now, so that closing the
        // destination really closes it (the ring's own teardown is
        // asynchronous).
        if self.fixed_files {
            let _ = self.ring.submitter().unregister_files();
        }
    }
}

/// A ring with an entry per slot. Prefers DEFER_TASKRUN (completions
/// processed when this thread waits; needs SINGLE_ISSUER, Linux 6.1+), else
/// COOP_TASKRUN (5.19+), else a plain ring, as the uring engine does.
fn new_ring(method: CopyMethod, slots: usize, path: &Path) -> Result<IoUring, EngineError> {
    let entries = slots.next_power_of_two() as u32;
    let mut defer = IoUring::builder();
    defer
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun();
    let mut coop = IoUring::builder();
    coop.setup_coop_taskrun();
    let built = match defer.build(entries) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => match coop.build(entries) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::new(entries),
            other => other,
        },
        other => other,
    };
    built.map_err(|e| {
        let hint = crate::sys::errno_hint("io_uring_setup", &e);
        match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::ENOSYS) | Some(libc::EINVAL) | Some(libc::ENOMEM) => {
                method.unsupported(format!(
                    "io_uring_setup failed: {e}{}",
                    hint.map(|h| format!(" ({h})")).unwrap_or_default()
                ))
            }
            _ => EngineError::os("io_uring_setup", path, e),
        }
    })
}

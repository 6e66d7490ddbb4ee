//! `threadpool`: N threads serving a queue with `pread`/`pwrite`, the way
//! runtimes do file I/O. tokio's `tokio::fs` hands each call to its
//! blocking pool (`spawn_blocking`, up to 512 threads spawned on demand),
//! libuv runs `uv_fs_*` on its pool of 4 threads (`UV_THREADPOOL_SIZE`),
//! Java's `AsynchronousFileChannel` on an executor's threads. The engine
//! is asynchronous to its caller (queue depth N slots, completions from
//! `reap`) and synchronous inside: each request costs a queue hand-off, a
//! wake-up of a pool thread, a system call and a completion hand-off back.
//!
//! The default pool is [`DEFAULT_THREADS`] (libuv's 4): a fixed pool is
//! what libuv and a sized Java executor do. `--pool-threads` equal to the
//! queue depth gives tokio's behaviour (one blocking thread per request in
//! flight, as tokio spawns until its 512-thread cap).
//!
//! Buffers: the engine's slots, marked in flight ([`SlotPool::acquire`])
//! from `submit` until `reap` hands the completion out; a pool thread
//! reaches a slot only through the raw pointer the job carries, and only
//! while the slot is in flight. Drop waits for every job before the
//! buffers are freed.

use std::collections::VecDeque;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::buf::SlotPool;
use crate::{Caps, Completion, Engine, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};

/// Pool threads when `--pool-threads` is not given: libuv's
/// `UV_THREADPOOL_SIZE` default.
pub const DEFAULT_THREADS: usize = 4;

/// One request handed to a pool thread.
#[derive(Debug, Clone, Copy)]
struct Job {
    op: Op,
    offset: u64,
    len: u32,
    slot: u32,
    /// The slot's address (in flight: only this job touches it).
    ptr: usize,
}

#[derive(Debug, Default)]
struct Queue {
    jobs: VecDeque<Job>,
    closed: bool,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

#[derive(Debug)]
pub struct ThreadPoolEngine {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    done_rx: Receiver<Completion>,
    file: Arc<File>,
    path: PathBuf,
    pool: SlotPool,
    caps: Caps,
    span: u64,
}

impl ThreadPoolEngine {
    /// Open the target through the page cache and start `threads` (>= 1)
    /// pool threads.
    pub fn open(spec: &OpenSpec, threads: usize) -> Result<ThreadPoolEngine, EngineError> {
        let method = Method::Threadpool;
        if threads == 0 || threads > 1024 {
            return Err(EngineError::Invalid(format!(
                "--pool-threads {threads}: give 1 to 1024 threads"
            )));
        }
        let file = Arc::new(super::open_spec(method, spec, false)?);
        let qd = spec.queue_depth.clamp(1, 4096);
        let (pool, buffer_nodes) = super::slot_pool(method, spec, qd, 4096)?;
        let mut notes = Vec::new();
        if threads > qd {
            notes.push(format!(
                "{threads} pool threads for {qd} requests in flight: at most {qd} are ever busy"
            ));
        }
        let shared = Arc::new(Shared::default());
        let (done_tx, done_rx) = channel();
        let fsync_each = spec.sync == SyncPolicy::Each;
        let handles = start_threads(&shared, threads, |i| {
            let (shared, file, tx) = (Arc::clone(&shared), Arc::clone(&file), done_tx.clone());
            std::thread::Builder::new()
                .name(format!("iopath-pool-{i}"))
                .spawn(move || serve(&shared, &file, &tx, fsync_each))
        })
        .map_err(|e| EngineError::os("spawn a pool thread", &spec.path, e))?;
        Ok(ThreadPoolEngine {
            shared,
            threads: handles,
            done_rx,
            file,
            path: spec.path.clone(),
            pool,
            caps: Caps {
                is_async: true,
                queue_depth: qd,
                offset_align: 1,
                mem_align: 4096,
                notes,
                buffer_nodes,
            },
            span: spec.span_bytes,
        })
    }

    /// Hand a completion out: its slot is idle again.
    fn complete(&mut self, c: Completion, done: &mut Vec<Completion>) {
        self.pool.release(c.slot);
        done.push(c);
    }
}

/// Start `threads` pool threads with `spawn`. Where one cannot be spawned,
/// those already started are stopped and joined before the error is
/// returned: none is left waiting on a queue no engine will close.
fn start_threads(
    shared: &Shared,
    threads: usize,
    mut spawn: impl FnMut(usize) -> std::io::Result<JoinHandle<()>>,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    let mut handles = Vec::with_capacity(threads);
    for i in 0..threads {
        match spawn(i) {
            Ok(h) => handles.push(h),
            Err(e) => {
                close_and_join(shared, &mut handles);
                return Err(e);
            }
        }
    }
    Ok(handles)
}

/// Close the queue and join `handles`: threads finish the jobs queued and
/// stop.
fn close_and_join(shared: &Shared, handles: &mut Vec<JoinHandle<()>>) {
    {
        let mut q = shared.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.closed = true;
    }
    shared.ready.notify_all();
    for h in handles.drain(..) {
        let _ = h.join();
    }
}

/// A pool thread: take jobs until the queue is closed and empty.
fn serve(shared: &Shared, file: &File, tx: &Sender<Completion>, fsync_each: bool) {
    loop {
        let job = {
            let mut q = shared.queue.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if let Some(j) = q.jobs.pop_front() {
                    break j;
                }
                if q.closed {
                    return;
                }
                q = shared.ready.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        let result = run(file, &job, fsync_each);
        // The engine is gone only after every thread was joined, so the
        // receiver outlives every send; a failed send changes nothing.
        let _ = tx.send(Completion {
            slot: job.slot,
            result,
        });
    }
}

fn run(file: &File, job: &Job, fsync_each: bool) -> Result<u32, i32> {
    let fd = file.as_fd();
    let len = job.len as usize;
    loop {
        let res = match job.op {
            Op::Read => {
                // SAFETY: job.ptr is the address of an in-flight slot of at
                // least job.len bytes (SlotPool::acquire checked the length);
                // the engine hands no reference to an in-flight slot out
                // (buf_mut answers None), and no other job carries the same
                // slot until this one's completion has been reaped, so this
                // is the only access to those bytes. Drop joins this thread
                // before the pool is freed.
                let buf = unsafe { std::slice::from_raw_parts_mut(job.ptr as *mut u8, len) };
                rustix::io::pread(fd, buf, job.offset)
            }
            Op::Write => {
                // SAFETY: as for reads; the bytes are only read here.
                let buf = unsafe { std::slice::from_raw_parts(job.ptr as *const u8, len) };
                rustix::io::pwrite(fd, buf, job.offset)
            }
        };
        match res {
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.raw_os_error()),
            Ok(n) => {
                if job.op == Op::Write && fsync_each {
                    if let Err(e) = rustix::fs::fsync(fd) {
                        return Err(e.raw_os_error());
                    }
                }
                return Ok(n as u32);
            }
        }
    }
}

impl Engine for ThreadPoolEngine {
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
        let mut jobs = Vec::with_capacity(reqs.len());
        let mut refused = None;
        for r in reqs {
            match self.pool.acquire(r.slot, r.len) {
                Ok(ptr) => jobs.push(Job {
                    op: r.op,
                    offset: r.offset,
                    len: r.len,
                    slot: r.slot,
                    ptr: ptr as usize,
                }),
                Err(e) => {
                    // The requests accepted before it are queued all the
                    // same (the Engine contract): reap completes them.
                    refused = Some(e);
                    break;
                }
            }
        }
        let n = jobs.len();
        {
            let mut q = self.shared.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.jobs.extend(jobs);
        }
        if n == 1 {
            self.shared.ready.notify_one();
        } else if n > 1 {
            self.shared.ready.notify_all();
        }
        // Completions are handed out by reap only: a request accepted here
        // stays in flight (its slot withheld) until then.
        match refused {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }

    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut got = 0;
        while let Ok(c) = self.done_rx.try_recv() {
            self.complete(c, done);
            got += 1;
        }
        let want = min.min(self.pool.in_flight() + got);
        while got < want {
            match self.done_rx.recv() {
                Ok(c) => {
                    self.complete(c, done);
                    got += 1;
                }
                Err(_) => {
                    return Err(EngineError::Invalid(format!(
                        "every pool thread of {} has stopped with requests in flight",
                        self.path.display()
                    )))
                }
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

    fn advise(&mut self, hint: crate::Hint) -> Result<(), EngineError> {
        crate::hint::fadvise(Method::Threadpool, &self.file, &self.path, hint, self.span)
    }

    fn method(&self) -> Method {
        Method::Threadpool
    }
}

impl Drop for ThreadPoolEngine {
    fn drop(&mut self) {
        // Close the queue: threads finish the jobs queued (their slots are
        // still in flight) and stop; joining them before the pool is freed
        // is what keeps every job's pointer valid.
        close_and_join(&self.shared, &mut self.threads);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &std::path::Path, qd: usize) -> OpenSpec {
        OpenSpec {
            path: path.to_path_buf(),
            write: true,
            block_size: 4096,
            queue_depth: qd,
            sync: SyncPolicy::None,
            span_bytes: 1 << 20,
            sqpoll_cpu: None,
            mem_policy: None,
            buffers: Default::default(),
            noatime: false,
        }
    }

    /// Every slot in flight at once over two threads: all complete, with
    /// the bytes each request wrote read back by another.
    #[test]
    fn more_requests_than_threads_all_complete_with_their_own_bytes() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(1 << 20).unwrap();
        let mut e = ThreadPoolEngine::open(&spec(f.path(), 8), 2).unwrap();
        let mut done = Vec::new();
        for s in 0..8u32 {
            e.buf_mut(s).unwrap().fill(s as u8 + 1);
        }
        let w: Vec<IoReq> = (0..8u32)
            .map(|s| IoReq {
                op: Op::Write,
                offset: u64::from(s) * 4096,
                len: 4096,
                slot: s,
            })
            .collect();
        assert_eq!(e.submit(&w, &mut done).unwrap(), 8);
        assert!(e.buf_mut(0).is_none() || done.iter().any(|c| c.slot == 0));
        e.reap(8, &mut done).unwrap();
        assert_eq!(done.len(), 8);
        assert!(done.iter().all(|c| c.result == Ok(4096)), "{done:?}");
        done.clear();
        let r: Vec<IoReq> = w
            .iter()
            .map(|q| IoReq {
                op: Op::Read,
                slot: 7 - q.slot,
                ..*q
            })
            .collect();
        e.submit(&r, &mut done).unwrap();
        e.reap(8, &mut done).unwrap();
        for s in 0..8u32 {
            let expect = (7 - s) as u8 + 1;
            assert!(
                e.buf_mut(s).unwrap().iter().all(|&b| b == expect),
                "slot {s}"
            );
        }
    }

    /// Review of issue 17: a spawn failing part-way returned the error and
    /// left the threads already started blocked on the queue forever.
    #[test]
    fn a_spawn_failing_part_way_stops_the_threads_started() {
        let shared = Arc::new(Shared::default());
        let stopped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let r = start_threads(&shared, 4, |i| {
            if i == 2 {
                return Err(std::io::Error::from_raw_os_error(libc::EAGAIN));
            }
            let (shared, stopped) = (Arc::clone(&shared), Arc::clone(&stopped));
            std::thread::Builder::new().spawn(move || {
                let (tx, _rx) = channel();
                serve(&shared, &tempfile::tempfile().unwrap(), &tx, false);
                stopped.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            })
        });
        assert_eq!(r.unwrap_err().raw_os_error(), Some(libc::EAGAIN));
        // Both started threads returned from serve and were joined.
        assert_eq!(stopped.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert_eq!(Arc::strong_count(&shared), 1);
    }

    #[test]
    fn zero_threads_is_refused() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let err = ThreadPoolEngine::open(&spec(f.path(), 1), 0).unwrap_err();
        assert!(err.to_string().contains("--pool-threads 0"), "{err}");
    }
}

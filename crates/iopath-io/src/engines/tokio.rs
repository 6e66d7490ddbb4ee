//! `tokio`: file I/O as a Rust program on tokio does it, through the real
//! `tokio::fs::File` (cargo feature `tokio`).
//!
//! What `tokio::fs` does (tokio 1.x, `src/fs/file.rs`): the file is a
//! `std::fs::File` behind a state machine; every operation is handed to
//! the runtime's **blocking pool** with `spawn_blocking` and awaited. A
//! `File` serves one operation at a time (`read`/`write` need `&mut`), and
//! it has no positional read or write: a request at an offset is a `seek`
//! (one blocking-pool task), then a `read` (another; the bytes land in the
//! `File`'s own buffer and are copied into the caller's) or a `write`
//! (the caller's bytes are copied into the `File`'s buffer, the write runs
//! in the pool, and `write` returns before it is done: `flush` waits for
//! it and reports its error). So one request costs two or three pool
//! hand-offs, a wake-up of the task each time, and one extra copy.
//!
//! The engine: a tokio runtime of its own, and one `tokio::fs::File` per
//! queue slot (each opened on its own, so each has its own file position:
//! `try_clone` would share one). `submit` spawns one task per request (the
//! queue depth is the number of tasks in flight); the task seeks, reads to
//! the request's length or end of file (or `write_all`s and `flush`es, and
//! `sync_all`s under `--sync each`), and sends its completion back.
//!
//! The runtime is tokio's `current_thread` flavour, driven by the worker
//! thread itself from `reap` (`block_on`): iopath's worker is the
//! program's async thread, as in `#[tokio::main(flavor = "current_thread")]`,
//! so no hand-off is added that a real program would not have. The flavour
//! changes where tasks are polled, not where the I/O runs: both flavours
//! run every `tokio::fs` call on the same blocking pool. The pool's size
//! is tokio's default (up to 512 threads, spawned on demand: one per
//! request in flight) unless `--pool-threads` caps it
//! (`Builder::max_blocking_threads`).
//!
//! Buffers: the engine's slots, marked in flight ([`SlotPool::acquire`])
//! from `submit` until `reap` hands the completion out. A task reaches its
//! slot only through the raw address it carries, and only while it is
//! being polled: `tokio::fs::File` copies between the slot and its own
//! buffer inside `poll_read`/`poll_write`, never from a pool thread. Each
//! task sends exactly one completion, also when it is dropped unfinished
//! ([`Reply`]), and `Drop` waits for all of them before the slots are
//! freed.

use std::io::SeekFrom;
use std::path::{Path, PathBuf};

use ::tokio::fs::File;
use ::tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use ::tokio::runtime::Runtime;
use ::tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::buf::SlotPool;
use crate::{Caps, Completion, Engine, EngineError, Hint, IoReq, Method, Op, OpenSpec, SyncPolicy};

/// One request, as a task carries it.
#[derive(Debug, Clone, Copy)]
struct Job {
    op: Op,
    offset: u64,
    len: u32,
    /// The slot's address (in flight: only this task touches it).
    ptr: usize,
}

/// A finished request, and the slot's file back (`None` when the task was
/// dropped before it finished: the slot gets a new file).
#[derive(Debug)]
struct Done {
    slot: u32,
    result: Result<u32, i32>,
    file: Option<File>,
}

/// Sends a task's completion exactly once: when the task finishes, or, if
/// the task is dropped first (a panic, the runtime shut down), when it is
/// dropped, as `ECANCELED`. `reap` and `Drop` count on one completion per
/// accepted request.
#[derive(Debug)]
struct Reply {
    tx: UnboundedSender<Done>,
    slot: u32,
    sent: bool,
}

impl Reply {
    fn send(mut self, result: Result<u32, i32>, file: File) {
        self.sent = true;
        // The engine holds a sender and the receiver until every task has
        // replied, so the send succeeds; a failed one changes nothing.
        let _ = self.tx.send(Done {
            slot: self.slot,
            result,
            file: Some(file),
        });
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if !self.sent {
            let _ = self.tx.send(Done {
                slot: self.slot,
                result: Err(libc::ECANCELED),
                file: None,
            });
        }
    }
}

#[derive(Debug)]
pub struct TokioEngine {
    rt: Runtime,
    tx: UnboundedSender<Done>,
    rx: UnboundedReceiver<Done>,
    /// One `tokio::fs::File` per slot; `None` while the slot's task has it.
    files: Vec<Option<File>>,
    /// For `flush` (fsync) and hints that act on the file, not the handle.
    file: std::fs::File,
    path: PathBuf,
    write: bool,
    sync: SyncPolicy,
    /// Open each file with `O_NOATIME` ([`OpenSpec::noatime`]).
    noatime: bool,
    pool: SlotPool,
    caps: Caps,
    span: u64,
}

fn errno(e: std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// One request on `file`, as a program using `tokio::fs` writes it.
async fn run(file: &mut File, job: Job, fsync_each: bool) -> Result<u32, i32> {
    file.seek(SeekFrom::Start(job.offset))
        .await
        .map_err(errno)?;
    let len = job.len as usize;
    match job.op {
        Op::Read => {
            // SAFETY: job.ptr is the address of an in-flight slot of at
            // least job.len bytes (SlotPool::acquire checked the length);
            // the engine lends no reference to an in-flight slot (buf_mut
            // answers None) and no other task carries this slot until this
            // one's completion has been reaped, so this is the only access
            // to those bytes. tokio::fs::File writes into it only while
            // this task is polled, and Drop waits for every task's reply
            // before the pool is freed.
            let buf = unsafe { std::slice::from_raw_parts_mut(job.ptr as *mut u8, len) };
            let mut got = 0;
            while got < len {
                match file.read(&mut buf[got..]).await {
                    Ok(0) => break, // end of file: a short read, as pread's
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(errno(e)),
                }
            }
            Ok(got as u32)
        }
        Op::Write => {
            // SAFETY: as for reads; the bytes are only read here.
            let buf = unsafe { std::slice::from_raw_parts(job.ptr as *const u8, len) };
            file.write_all(buf).await.map_err(errno)?;
            // write_all returns once the last bytes are handed to the
            // pool; flush waits for that write and reports its error.
            file.flush().await.map_err(errno)?;
            if fsync_each {
                file.sync_all().await.map_err(errno)?;
            }
            Ok(len as u32)
        }
    }
}

fn open_file(
    spec_path: &Path,
    write: bool,
    sync: SyncPolicy,
    noatime: bool,
) -> Result<File, EngineError> {
    match super::open_target(Method::Tokio, spec_path, write, false, sync, noatime) {
        Ok(f) => Ok(File::from_std(f)),
        Err(EngineError::Os { source, .. }) if source.raw_os_error() == Some(libc::EMFILE) => {
            Err(EngineError::Unsupported {
                method: Method::Tokio,
                reason: format!(
                    "out of file descriptors opening {}: tokio opens one tokio::fs::File per request in flight (a File serves one operation at a time); lower --qd or --threads, or raise the limit (ulimit -n)",
                    spec_path.display()
                ),
            })
        }
        Err(e) => Err(e),
    }
}

impl TokioEngine {
    /// Open the target through the page cache, once per slot, and start a
    /// runtime whose blocking pool has at most `blocking_threads` threads
    /// (`None`: tokio's default).
    pub fn open(
        spec: &OpenSpec,
        blocking_threads: Option<usize>,
    ) -> Result<TokioEngine, EngineError> {
        let method = Method::Tokio;
        if spec.block_size == 0 || spec.block_size > u32::MAX as usize {
            return Err(EngineError::Invalid(format!(
                "block size {} is out of range (1 byte to 4 GiB)",
                spec.block_size
            )));
        }
        if let Some(n) = blocking_threads.filter(|&n| n == 0 || n > 1024) {
            return Err(EngineError::Invalid(format!(
                "--pool-threads {n}: give 1 to 1024 threads"
            )));
        }
        let file = super::open_spec(method, spec, false)?;
        let qd = spec.queue_depth.clamp(1, 4096);
        let (pool, buffer_nodes) = super::slot_pool(method, spec, qd, 4096)?;
        let files = (0..qd)
            .map(|_| open_file(&spec.path, spec.write, spec.sync, spec.noatime).map(Some))
            .collect::<Result<Vec<_>, _>>()?;
        let mut builder = ::tokio::runtime::Builder::new_current_thread();
        builder.thread_name("iopath-tokio-blocking");
        let mut notes = Vec::new();
        if let Some(n) = blocking_threads {
            builder.max_blocking_threads(n);
            if n < qd {
                notes.push(format!(
                    "tokio's blocking pool capped at {n} threads (--pool-threads) for {qd} requests in flight: the rest wait in its queue"
                ));
            }
        }
        let rt = builder
            .build()
            .map_err(|e| EngineError::os("start a tokio runtime", &spec.path, e))?;
        let (tx, rx) = unbounded_channel();
        Ok(TokioEngine {
            rt,
            tx,
            rx,
            files,
            file,
            path: spec.path.clone(),
            write: spec.write,
            sync: spec.sync,
            noatime: spec.noatime,
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

    /// Hand a completion out: its slot is idle again, with its file.
    fn complete(&mut self, d: Done, done: &mut Vec<Completion>) {
        if let Some(f) = self.files.get_mut(d.slot as usize) {
            *f = d.file;
        }
        self.pool.release(d.slot);
        done.push(Completion {
            slot: d.slot,
            result: d.result,
        });
    }

    /// Wait, driving the runtime, until `n` more completions have arrived.
    fn wait(&mut self, n: usize) -> Vec<Done> {
        let (rt, rx) = (&self.rt, &mut self.rx);
        rt.block_on(async {
            let mut got = Vec::with_capacity(n);
            while got.len() < n {
                // The engine holds a sender: recv ends only with a reply.
                match rx.recv().await {
                    Some(d) => got.push(d),
                    None => break,
                }
            }
            got
        })
    }
}

impl Engine for TokioEngine {
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
        let fsync_each = self.sync == SyncPolicy::Each;
        for r in reqs {
            let ptr = self.pool.acquire(r.slot, r.len)?;
            let file = match self.files[r.slot as usize].take() {
                Some(f) => f,
                // The slot's last task was dropped unfinished.
                None => match open_file(&self.path, self.write, self.sync, self.noatime) {
                    Ok(f) => f,
                    Err(e) => {
                        // The requests before it stay in flight (the
                        // Engine contract): reap completes them.
                        self.pool.release(r.slot);
                        return Err(e);
                    }
                },
            };
            let job = Job {
                op: r.op,
                offset: r.offset,
                len: r.len,
                ptr: ptr as usize,
            };
            let reply = Reply {
                tx: self.tx.clone(),
                slot: r.slot,
                sent: false,
            };
            // Accepted: the task runs when reap drives the runtime, and
            // replies once whatever happens (Reply).
            self.rt.spawn(async move {
                let mut file = file;
                let result = run(&mut file, job, fsync_each).await;
                reply.send(result, file);
            });
        }
        Ok(reqs.len())
    }

    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> Result<(), EngineError> {
        let mut got = 0;
        while let Ok(d) = self.rx.try_recv() {
            self.complete(d, done);
            got += 1;
        }
        let want = min.min(self.pool.in_flight() + got);
        if got < want {
            for d in self.wait(want - got) {
                self.complete(d, done);
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

    fn advise(&mut self, hint: Hint) -> Result<(), EngineError> {
        let m = Method::Tokio;
        // WILLNEED reads the file's pages in: once is enough. The others
        // set the read-ahead of an open file, each slot's its own.
        crate::hint::fadvise(m, &self.file, &self.path, hint, self.span)?;
        if hint != Hint::Willneed {
            for f in self.files.iter().flatten() {
                crate::hint::fadvise(m, f, &self.path, hint, self.span)?;
            }
        }
        Ok(())
    }

    fn method(&self) -> Method {
        Method::Tokio
    }
}

impl Drop for TokioEngine {
    fn drop(&mut self) {
        // Every accepted request replies once (Reply), so this ends; only
        // then may the slots be freed. The runtime is dropped after this,
        // which waits for its blocking-pool threads.
        let left = self.pool.in_flight();
        if left > 0 {
            for d in self.wait(left) {
                self.pool.release(d.slot);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &Path, qd: usize) -> OpenSpec {
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

    /// Eight requests in flight at once, each a task with its own file
    /// position: every one lands at its own offset and reads back into
    /// another slot.
    #[test]
    fn requests_in_flight_keep_their_own_offsets() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(1 << 20).unwrap();
        let mut e = TokioEngine::open(&spec(f.path(), 8), None).unwrap();
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
        assert_eq!(e.in_flight(), 8);
        e.reap(8, &mut done).unwrap();
        assert_eq!(done.len(), 8);
        assert!(done.iter().all(|c| c.result == Ok(4096)), "{done:?}");
        let on_disk = std::fs::read(f.path()).unwrap();
        for s in 0..8usize {
            let want = s as u8 + 1;
            assert!(on_disk[s * 4096..(s + 1) * 4096].iter().all(|&b| b == want));
        }
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

    /// A task dropped before it finished still replies, as ECANCELED, and
    /// its slot gets a new file.
    #[test]
    fn a_dropped_task_replies_cancelled_and_its_slot_works_again() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(1 << 20).unwrap();
        let mut e = TokioEngine::open(&spec(f.path(), 2), None).unwrap();
        e.pool.acquire(0, 4096).unwrap();
        e.files[0] = None;
        drop(Reply {
            tx: e.tx.clone(),
            slot: 0,
            sent: false,
        });
        let mut done = Vec::new();
        e.reap(1, &mut done).unwrap();
        assert_eq!(done[0].result, Err(libc::ECANCELED));
        assert!(e.buf_mut(0).is_some());
        let r = IoReq {
            op: Op::Read,
            offset: 0,
            len: 4096,
            slot: 0,
        };
        e.submit(&[r], &mut done).unwrap();
        e.reap(1, &mut done).unwrap();
        assert_eq!(done[1].result, Ok(4096));
    }

    #[test]
    fn a_pool_of_zero_threads_is_refused() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let err = TokioEngine::open(&spec(f.path(), 1), Some(0)).unwrap_err();
        assert!(err.to_string().contains("--pool-threads 0"), "{err}");
    }
}

//! What the `uffd` test binaries share: a prefilled target file, opening an
//! engine (or saying on stderr why the method cannot work here), requests
//! one at a time, byte comparisons that name the first difference, and a
//! hang guard.
//!
//! Each binary uses part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use iopath_io::data::Rng;
use iopath_io::engines::uffd::UffdEngine;
use iopath_io::{Engine, EngineError, IoReq, Method, Op, OpenSpec, SyncPolicy};
use tempfile::TempDir;

pub const PAGE: usize = 4096;

pub const METHODS: [Method; 2] = [Method::Uffd, Method::UffdWp];

/// A file of known bytes under the target directory (a real disk, not a
/// tmpfs /tmp: the engines need O_DIRECT).
pub struct Target {
    _dir: TempDir,
    pub path: PathBuf,
    pub data: Vec<u8>,
}

impl Target {
    /// `len` bytes of the pattern of `seed`.
    pub fn new(seed: u64, len: usize) -> Target {
        let mut data = vec![0; len];
        Rng::new(seed).fill(&mut data);
        Target::with(data)
    }

    /// A file of `data`.
    pub fn with(data: Vec<u8>) -> Target {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
        let path = dir.path().join("uffd.dat");
        std::fs::write(&path, &data).expect("prefill");
        Target {
            _dir: dir,
            path,
            data,
        }
    }

    pub fn spec(&self, write: bool, sync: SyncPolicy, block_size: usize) -> OpenSpec {
        OpenSpec {
            path: self.path.clone(),
            write,
            block_size,
            queue_depth: 1,
            sync,
            span_bytes: self.data.len() as u64,
            sqpoll_cpu: None,
            mem_policy: None,
            buffers: Default::default(),
            noatime: false,
        }
    }

    pub fn on_disk(&self) -> Vec<u8> {
        std::fs::read(&self.path).expect("read target with std::fs")
    }

    /// Overwrite `[off, off + len)` of the file behind the engine's back.
    pub fn poke(&self, off: usize, byte: u8, len: usize) {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.path)
            .unwrap();
        f.write_all_at(&vec![byte; len], off as u64).unwrap();
        f.sync_all().unwrap();
    }
}

/// An engine on `t` with a budget of `pages` resident pages, or `None`
/// (reason on stderr) when the method cannot work here.
pub fn engine(
    m: Method,
    t: &Target,
    write: bool,
    sync: SyncPolicy,
    bs: usize,
    pages: u64,
) -> Option<UffdEngine> {
    match UffdEngine::open_with(m, &t.spec(write, sync, bs), pages * PAGE as u64) {
        Ok(e) => Some(e),
        Err(EngineError::Unsupported { reason, .. }) => {
            eprintln!("skipped {m}: {reason}");
            None
        }
        Err(e) => panic!("open {m}: {e}"),
    }
}

/// One request through the engine; the bytes read, or the count written.
pub fn io(eng: &mut UffdEngine, op: Op, offset: usize, data: &[u8], len: usize) -> (u32, Vec<u8>) {
    if op == Op::Write {
        eng.buf_mut(0).unwrap()[..len].copy_from_slice(&data[..len]);
    } else {
        eng.buf_mut(0).unwrap().fill(0xAA);
    }
    let r = IoReq {
        op,
        offset: offset as u64,
        len: len as u32,
        slot: 0,
    };
    let mut done = Vec::new();
    assert_eq!(eng.submit(&[r], &mut done).expect("submit"), 1);
    assert_eq!(done.len(), 1, "a synchronous engine completes in submit");
    let n = done[0]
        .result
        .unwrap_or_else(|e| panic!("{op:?} at {offset}: errno {e}"));
    let got = eng.buf_mut(0).unwrap()[..n as usize].to_vec();
    (n, got)
}

pub fn read_at(eng: &mut UffdEngine, offset: usize, len: usize) -> Vec<u8> {
    io(eng, Op::Read, offset, &[], len).1
}

pub fn write_at(eng: &mut UffdEngine, offset: usize, data: &[u8]) -> u32 {
    io(eng, Op::Write, offset, data, data.len()).0
}

/// Compare bytes, naming the first difference instead of dumping buffers.
pub fn same(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: first difference at byte {i} (page {}): {:#04x}, not {:#04x}",
            i / PAGE,
            got[i],
            want[i]
        );
    }
}

/// Run `f` on another thread; panic if it has not finished in `secs` s (a
/// hang guard, not a timing assertion).
pub fn within<T: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(v)) => v,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(e) => panic!("{what} did not finish within {secs} s: {e}"),
    }
}

/// [`within`] 10 s.
pub fn within_10s<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    within(10, what, f)
}

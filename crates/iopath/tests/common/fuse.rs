//! A small FUSE file system for fault tests: one file, `data.bin`, held in
//! memory, that serves reads and writes until it is told to fail, and
//! then fails every read and write with EIO once a given number of bytes
//! more has been served, as a device that starts failing does.
//!
//! Served by a thread of the test process (the `fuser` crate, without
//! libfuse: root mounts `/dev/fuse` directly) and unmounted when dropped.
//! `None`, with the reason printed, where the machine refuses it (no
//! `/dev/fuse`, not root, the mount refused).
//!
//! Only one binary uses it (`#[path]` in tests/eio.rs), so the others do
//! not build it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, LockOwner, OpenFlags,
    ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request,
    WriteFlags,
};

/// The file's name in the mount.
pub const NAME: &str = "data.bin";

const FILE: INodeNo = INodeNo(2);
const TTL: Duration = Duration::from_secs(1);

/// What the test and the file system share.
#[derive(Debug, Default)]
struct State {
    /// Bytes read or written so far.
    served: AtomicU64,
    /// Fail every request once `served` reaches this (`u64::MAX`: never).
    fail_at: AtomicU64,
    /// Requests failed with EIO.
    failed: AtomicU64,
}

struct FailFs {
    data: RwLock<Vec<u8>>,
    state: Arc<State>,
}

impl FailFs {
    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, size, perm, nlink) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0, 0o755, 2),
            FILE => (
                FileType::RegularFile,
                self.data.read().ok()?.len() as u64,
                0o644,
                1,
            ),
            _ => return None,
        };
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink,
            uid: 0,
            gid: 0,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        })
    }

    /// Count `n` bytes served; false (and counted as a failure) once the
    /// file system is failing.
    fn serve(&self, n: usize) -> bool {
        let s = &self.state;
        if s.served.load(Ordering::SeqCst) >= s.fail_at.load(Ordering::SeqCst) {
            s.failed.fetch_add(1, Ordering::SeqCst);
            return false;
        }
        s.served.fetch_add(n as u64, Ordering::SeqCst);
        true
    }
}

impl Filesystem for FailFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.attr(FILE) {
            Some(a) if parent == INodeNo::ROOT && name == NAME => {
                reply.entry(&TTL, &a, fuser::Generation(0))
            }
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // The file keeps its size: iopath never truncates a file it did
        // not create.
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino == FILE {
            reply.opened(FileHandle(0), FopenFlags::empty());
        } else {
            reply.error(Errno::EISDIR);
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let Ok(data) = self.data.read() else {
            return reply.error(Errno::EIO);
        };
        let from = (offset as usize).min(data.len());
        let to = (from + size as usize).min(data.len());
        if !self.serve(to - from) {
            return reply.error(Errno::EIO);
        }
        reply.data(&data[from..to]);
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        bytes: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let Ok(mut data) = self.data.write() else {
            return reply.error(Errno::EIO);
        };
        let from = offset as usize;
        // A fixed-size file, as a device is: no write past its end.
        if from + bytes.len() > data.len() {
            return reply.error(Errno::ENOSPC);
        }
        if !self.serve(bytes.len()) {
            return reply.error(Errno::EIO);
        }
        data[from..from + bytes.len()].copy_from_slice(bytes);
        reply.written(bytes.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (FILE, FileType::RegularFile, NAME),
        ];
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(ino, (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

/// The mounted file system; unmounted when dropped.
pub struct FuseFile {
    session: Option<fuser::BackgroundSession>,
    dir: PathBuf,
    state: Arc<State>,
}

impl FuseFile {
    /// Mount at `at` (an empty directory) a file system holding one file of
    /// `size` bytes of random data, served until [`FuseFile::fail_after`].
    pub fn mount(at: &Path, size: usize) -> Option<FuseFile> {
        if !Path::new("/dev/fuse").exists() {
            crate::common::skip("no /dev/fuse (the fuse module is not loaded)");
            return None;
        }
        if !rustix::process::geteuid().is_root() {
            crate::common::skip("mounting FUSE without fusermount needs root");
            return None;
        }
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let data: Vec<u8> = (0..size)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let state = Arc::new(State {
            fail_at: AtomicU64::new(u64::MAX),
            ..State::default()
        });
        let fs = FailFs {
            data: RwLock::new(data),
            state: state.clone(),
        };
        let mut cfg = fuser::Config::default();
        cfg.mount_options = vec![
            fuser::MountOption::FSName("iopath-failfs".into()),
            fuser::MountOption::DefaultPermissions,
        ];
        cfg.n_threads = Some(2);
        let session = match fuser::Session::new(fs, at, &cfg).and_then(|s| s.spawn()) {
            Ok(s) => s,
            Err(e) => {
                crate::common::skip(format!(
                    "cannot mount a FUSE file system on {}: {e}",
                    at.display()
                ));
                return None;
            }
        };
        Some(FuseFile {
            session: Some(session),
            dir: at.to_path_buf(),
            state,
        })
    }

    /// The file's path.
    pub fn file(&self) -> PathBuf {
        self.dir.join(NAME)
    }

    /// From now, fail every read and write once `n` more bytes have been
    /// served.
    pub fn fail_after(&self, n: u64) {
        let s = &self.state;
        s.fail_at.store(
            s.served.load(Ordering::SeqCst).saturating_add(n),
            Ordering::SeqCst,
        );
    }

    /// Requests failed so far.
    pub fn failed(&self) -> u64 {
        self.state.failed.load(Ordering::SeqCst)
    }
}

impl Drop for FuseFile {
    fn drop(&mut self) {
        let Some(s) = self.session.take() else { return };
        if let Err(e) = s.umount_and_join() {
            // Still in use (a loop device not yet detached): detach the
            // mount lazily; the serving thread ends with the connection.
            eprintln!(
                "unmounting {}: {e}; detaching it lazily",
                self.dir.display()
            );
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.dir)
                .status();
        }
    }
}

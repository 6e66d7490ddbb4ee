//! Why a worker stopped short, and how the runner says it: every I/O
//! error a case reports names the target (as a person knows it, not the
//! `/proc/<pid>/fd/<n>` link engines open an unnamed file by), the
//! request's offset when one failed, and what to do next.

use std::path::Path;

use iopath_io::{EngineError, Op};

/// Why a worker stopped before its budget was spent.
#[derive(Debug)]
pub enum WorkerError {
    /// A request completed with an error (`errno`).
    Request {
        op: Op,
        len: u32,
        offset: u64,
        errno: i32,
    },
    /// A request moved no bytes: the target ends before `offset`.
    Eof { op: Op, len: u32, offset: u64 },
    /// The engine's submit, reap or flush failed.
    Engine(EngineError),
    /// The engine accepted no request, with none in flight, for `ns`
    /// (the kernel kept refusing them: aio's EAGAIN).
    Stalled { ns: u64 },
    /// `--verify` found a bad block (the mismatch, with its offset).
    Verify(String),
    /// Anything else (the worker's own set-up).
    Other(String),
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
    }
}

/// What to do about an error `err` of an I/O request (`op`: read or write),
/// when iopath knows: [`iopath_io::sys::errno_hint`], and for the errors a
/// failing device gives, where to look.
pub fn next_step(op: &str, err: &std::io::Error) -> String {
    if let Some(h) = iopath_io::sys::errno_hint(op, err) {
        return h;
    }
    use rustix::io::Errno;
    match err.raw_os_error().map(Errno::from_raw_os_error) {
        Some(Errno::IO) | Some(Errno::NODATA) | Some(Errno::REMOTEIO) => {
            "the device, or the layer under the file system, reported the error: see the kernel log (dmesg) for it and check the device's health (what backs a loop, network or FUSE device)".into()
        }
        Some(Errno::NXIO) | Some(Errno::NODEV) => {
            "the device went away during the run: check that it is still attached".into()
        }
        Some(Errno::STALE) => {
            "the file was replaced or removed on the server: run on a file nothing else changes".into()
        }
        _ => "check the target and the kernel log (dmesg), then run again".into(),
    }
}

/// The write-backs of a user-space cache that failed when its last engine
/// closed (after a repetition, where no request or flush was left to
/// fail: its writes may be lost), each said once, as the repetition's
/// failure; `None` when none failed.
pub(super) fn lost_writes() -> Option<String> {
    let lost = iopath_io::engines::uffd::take_drop_errors();
    (!lost.is_empty()).then(|| lost.join("; "))
}

impl WorkerError {
    /// The message: what failed, on `target`, at which offset, and what to
    /// do next.
    pub fn message(&self, target: &Path) -> String {
        let t = target.display();
        match self {
            WorkerError::Request {
                op,
                len,
                offset,
                errno,
            } => {
                let err = std::io::Error::from_raw_os_error(*errno);
                format!(
                    "{} of {len} bytes at offset {offset} of {t} failed: {err} ({})",
                    op_name(*op),
                    next_step(op_name(*op), &err)
                )
            }
            WorkerError::Eof { op, len, offset } => format!(
                "{} of {len} bytes at offset {offset} of {t}: a request transferred 0 bytes (unexpected end of file): {t} is shorter than when the run started (truncated or replaced by another process?); run on a file nothing else changes",
                op_name(*op)
            ),
            WorkerError::Stalled { ns } => format!(
                "the engine accepted no request on {t} for {:.1} s with none in flight (the kernel kept answering EAGAIN): for aio, other programs may hold the system's AIO contexts (compare /proc/sys/fs/aio-nr with aio-max-nr); run again when they are free, or with another method",
                *ns as f64 / 1e9
            ),
            WorkerError::Engine(e) => {
                let m = e.to_string();
                // An engine's own errors name what it opened (and the next
                // step where the engine knows one); the rest (a broken
                // request) get the target.
                match e {
                    EngineError::Os {
                        op,
                        source,
                        hint: None,
                        ..
                    } => format!("{m} ({})", next_step(op, source)),
                    EngineError::Os { .. } | EngineError::Misaligned { .. } => m,
                    _ => format!("{m} (on {t})"),
                }
            }
            // A case without a file (`null`) has no target to name.
            WorkerError::Verify(m) if target.as_os_str().is_empty() => format!(
                "{m} (what was read is not what iopath wrote: a lost, misdirected or corrupted write, or another writer)"
            ),
            WorkerError::Verify(m) => format!(
                "{m} (in {t}: what was read is not what iopath wrote there: a lost, misdirected or corrupted write, or another writer)"
            ),
            WorkerError::Other(m) if target.as_os_str().is_empty() => m.clone(),
            WorkerError::Other(m) => format!("{m} (on {t})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 26, item 10): a missing path and an exhausted
    /// open-file limit were sent to the kernel log (dmesg); they now name
    /// their cause and the next step.
    #[test]
    fn enoent_and_emfile_name_their_cause_not_dmesg() {
        let step = |op: &str, errno: i32| next_step(op, &std::io::Error::from_raw_os_error(errno));
        let steps = [
            step("read", libc_errno::ENOENT),
            step("open", libc_errno::ENFILE),
        ];
        // The open-file limit it names is this process's: not in the
        // snapshot.
        let emfile = step("open", libc_errno::EMFILE);
        assert!(emfile.contains("ulimit -n"), "{emfile}");
        for m in steps.iter().chain([&emfile]) {
            assert!(!m.contains("dmesg"), "{m}");
        }
        // Their words: the cause ("does not exist", "fs.file-max") and the
        // next step.
        insta::assert_snapshot!(steps.join("\n"));
    }

    /// The errno values the test uses (iopath has no libc dependency).
    mod libc_errno {
        pub const ENOENT: i32 = rustix::io::Errno::NOENT.raw_os_error();
        pub const EMFILE: i32 = rustix::io::Errno::MFILE.raw_os_error();
        pub const ENFILE: i32 = rustix::io::Errno::NFILE.raw_os_error();
    }

    /// Each message names the target, the request's length and offset,
    /// the error and the next step (the snapshot holds them).
    #[test]
    fn messages_name_the_target_the_offset_and_the_next_step() {
        let t = Path::new("/mnt/x/data.bin");
        let request = |op, len, offset, errno: rustix::io::Errno| WorkerError::Request {
            op,
            len,
            offset,
            errno: errno.raw_os_error(),
        };
        let messages = [
            request(Op::Read, 4096, 8192, rustix::io::Errno::IO),
            request(Op::Write, 1 << 20, 0, rustix::io::Errno::NOSPC),
            WorkerError::Eof {
                op: Op::Read,
                len: 4096,
                offset: 4096,
            },
            WorkerError::Verify("verify failed at offset 0: bad checksum".into()),
            WorkerError::Engine(EngineError::Os {
                op: "fsync",
                path: "/dev/loop7".into(),
                source: std::io::Error::from_raw_os_error(rustix::io::Errno::IO.raw_os_error()),
                hint: None,
            }),
            WorkerError::Engine(EngineError::Invalid("slot 9".into())),
            WorkerError::Stalled { ns: 2_500_000_000 },
        ]
        .map(|e| e.message(t));
        insta::assert_snapshot!(messages.join("\n"));
    }

    #[test]
    fn without_a_target_no_empty_path_is_named() {
        let none = Path::new("");
        let v = WorkerError::Verify("verify failed at offset 0: bad checksum".into()).message(none);
        assert_eq!(
            v,
            "verify failed at offset 0: bad checksum (what was read is not what iopath wrote: a lost, misdirected or corrupted write, or another writer)"
        );
        let o = WorkerError::Other("no buffer".into()).message(none);
        assert_eq!(o, "no buffer");
    }
}

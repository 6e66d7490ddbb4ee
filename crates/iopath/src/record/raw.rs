//! What a backend saw, before file identities are resolved: a system call
//! with its descriptor or path, a page fault with its inode, an io_uring or
//! libaio submission. Both backends (eBPF, strace) produce these;
//! [`super::resolve::Resolver`] turns them into trace events.

/// A call on a descriptor: [`crate::trace::Op`]'s code, or one of the
/// codes below that only the resolver uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FdCall {
    pub code: u8,
    pub pid: u32,
    pub tid: u32,
    pub ts_ns: u64,
    pub dur_ns: u64,
    pub fd: i64,
    /// The offset, or -1: the descriptor's position.
    pub offset: i64,
    /// The length asked for, or [`LEN_FROM_RESULT`] (vectored calls).
    pub len: u64,
    pub ret: i64,
    pub flags: u64,
}

/// `lseek`: `ret` is the new position.
pub const LSEEK: u8 = 100;
/// `dup`, `dup2`, `dup3`, `fcntl(F_DUPFD)`: `fd` copied to `ret`.
pub const DUP: u8 = 101;
/// The length of a vectored call: its result (the iovecs are not read).
pub const LEN_FROM_RESULT: u64 = u64::MAX;

/// A call on a path (open, stat, unlink, rename).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathCall {
    pub code: u8,
    pub pid: u32,
    pub tid: u32,
    pub ts_ns: u64,
    pub dur_ns: u64,
    /// The directory descriptor relative paths start from (-100: the
    /// working directory).
    pub dirfd: i64,
    pub flags: u64,
    pub ret: i64,
    pub path: String,
    /// Rename's new name.
    pub path2: Option<String>,
}

/// What a backend saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Raw {
    Fd(FdCall),
    Path(PathCall),
    /// A page fault that reached the file (`pages` from `index`).
    Fault {
        pid: u32,
        tid: u32,
        ts_ns: u64,
        dev: u64,
        ino: u64,
        index: u64,
        pages: u64,
        write: bool,
        /// Set by the `Major` that follows it.
        major: bool,
    },
    /// The last fault of `tid` read a page from the device.
    Major {
        tid: u32,
        ino: u64,
        ts_ns: u64,
    },
    /// An io_uring read, write or fsync submitted.
    UringSubmit {
        pid: u32,
        tid: u32,
        ts_ns: u64,
        req: u64,
        code: u8,
        fd: i64,
        fixed_file: bool,
        offset: u64,
        len: u64,
        vectored: bool,
        /// Set by its completion: (result, when).
        done: Option<(i64, u64)>,
    },
    UringComplete {
        ts_ns: u64,
        req: u64,
        res: i64,
    },
    /// `pid` forked `child` (its descriptors copied).
    Fork {
        parent: u32,
        child: u32,
        ts_ns: u64,
    },
    /// `pid` exited.
    Exit {
        pid: u32,
        ts_ns: u64,
    },
}

impl Raw {
    /// When it happened (CLOCK_MONOTONIC ns).
    pub fn ts_ns(&self) -> u64 {
        match self {
            Raw::Fd(c) => c.ts_ns,
            Raw::Path(p) => p.ts_ns,
            Raw::Fault { ts_ns, .. }
            | Raw::Major { ts_ns, .. }
            | Raw::UringSubmit { ts_ns, .. }
            | Raw::UringComplete { ts_ns, .. }
            | Raw::Fork { ts_ns, .. }
            | Raw::Exit { ts_ns, .. } => *ts_ns,
        }
    }
}

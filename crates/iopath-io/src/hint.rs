//! Access hints: a method option, not a method of its own. `mmap+random` is
//! `mmap` with `MADV_RANDOM` on its mapping; `buffered+noreuse` is
//! `buffered` with `POSIX_FADV_NOREUSE` on its file. A hint is applied once,
//! right after the engine opens ([`crate::Engine::advise`]), over the span
//! the engine may touch; a hint that means nothing for a method (a
//! page-cache hint on an `O_DIRECT` method, `populate` on `pread`) is
//! refused with [`crate::EngineError::Unsupported`] saying why.

use std::fmt;
use std::path::Path;

use crate::{EngineError, Method};

/// One access hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hint {
    /// `MADV_RANDOM` / `POSIX_FADV_RANDOM`: no read-ahead.
    Random,
    /// `MADV_SEQUENTIAL` / `POSIX_FADV_SEQUENTIAL`: aggressive read-ahead
    /// (and, for a mapping, early reclaim of pages behind).
    Sequential,
    /// `MADV_WILLNEED` / `POSIX_FADV_WILLNEED`: start reading the span now.
    Willneed,
    /// `POSIX_FADV_NOREUSE`: the data is used once (Linux 6.3+ keeps such
    /// pages off the active list). File methods only.
    Noreuse,
    /// `MADV_HUGEPAGE`: back the mapping with huge pages where the file
    /// system can (large folios). Mapped methods only.
    Hugepage,
    /// `MADV_POPULATE_READ` (`_WRITE` when writable), the after-the-fact
    /// `MAP_POPULATE`: fault the whole span in at open. Mapped methods only.
    Populate,
}

impl Hint {
    /// Every hint, in the order help lists them.
    pub const ALL: [Hint; 6] = [
        Hint::Random,
        Hint::Sequential,
        Hint::Willneed,
        Hint::Noreuse,
        Hint::Hugepage,
        Hint::Populate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Hint::Random => "random",
            Hint::Sequential => "sequential",
            Hint::Willneed => "willneed",
            Hint::Noreuse => "noreuse",
            Hint::Hugepage => "hugepage",
            Hint::Populate => "populate",
        }
    }

    pub fn from_name(s: &str) -> Option<Hint> {
        Hint::ALL.into_iter().find(|h| h.name() == s)
    }

    /// One sentence: what the hint asks of the kernel (for `iopath methods`).
    pub fn summary(self) -> &'static str {
        match self {
            Hint::Random => "no read-ahead: madvise(MADV_RANDOM) on a mapping, posix_fadvise(POSIX_FADV_RANDOM) on a file",
            Hint::Sequential => "aggressive read-ahead (and, for a mapping, early reclaim of pages behind): MADV_SEQUENTIAL / POSIX_FADV_SEQUENTIAL",
            Hint::Willneed => "start reading the whole span in at open: MADV_WILLNEED / POSIX_FADV_WILLNEED",
            Hint::Noreuse => "the data is used once: POSIX_FADV_NOREUSE (Linux 6.3+ keeps such pages off the active list); read/write methods only",
            Hint::Hugepage => "back the mapping with huge pages where the file system can (large folios): MADV_HUGEPAGE; mapped methods only",
            Hint::Populate => "fault the whole span in at open, as MAP_POPULATE would: MADV_POPULATE_READ (_WRITE when writable); mapped methods only",
        }
    }

    /// The hints `method` takes (empty: none), in [`Hint::ALL`]'s order.
    pub fn accepted_by(method: Method) -> Vec<Hint> {
        Hint::ALL
            .into_iter()
            .filter(|h| h.call_for(method).is_ok())
            .collect()
    }

    /// What the hint becomes for `method`: the call, or why it is refused.
    pub fn call_for(self, method: Method) -> Result<&'static str, String> {
        let mapped = matches!(method, Method::Mmap | Method::MmapDax);
        let cached_file = matches!(
            method,
            Method::Buffered
                | Method::UringBuffered
                | Method::Dontcache
                | Method::UringDontcache
                | Method::Threadpool
                | Method::Tokio
        );
        if method == Method::MmapDax
            && matches!(self, Hint::Random | Hint::Sequential | Hint::Willneed)
        {
            return Err(format!(
                "{method} maps the device's memory directly (DAX): there is no page cache and no read-ahead for +{self} to act on (use mmap+{self}, or {method}+populate to fault the mapping in)"
            ));
        }
        if mapped {
            return match self {
                Hint::Random => Ok("madvise(MADV_RANDOM)"),
                Hint::Sequential => Ok("madvise(MADV_SEQUENTIAL)"),
                Hint::Willneed => Ok("madvise(MADV_WILLNEED)"),
                Hint::Hugepage => Ok("madvise(MADV_HUGEPAGE)"),
                Hint::Populate => Ok("madvise(MADV_POPULATE_READ/WRITE)"),
                Hint::Noreuse => Err(format!(
                    "+noreuse is a posix_fadvise hint for read/write methods; a mapping has no equivalent (use {method}+random, or buffered+noreuse)"
                )),
            };
        }
        if cached_file {
            return match self {
                Hint::Random => Ok("posix_fadvise(POSIX_FADV_RANDOM)"),
                Hint::Sequential => Ok("posix_fadvise(POSIX_FADV_SEQUENTIAL)"),
                Hint::Willneed => Ok("posix_fadvise(POSIX_FADV_WILLNEED)"),
                Hint::Noreuse => Ok("posix_fadvise(POSIX_FADV_NOREUSE)"),
                Hint::Hugepage | Hint::Populate => Err(format!(
                    "+{self} changes how a mapping is faulted in; {method} reads with system calls and has no mapping (use mmap+{self})"
                )),
            };
        }
        if method.is_direct() {
            return Err(format!(
                "{method} bypasses the page cache (O_DIRECT): a +{self} hint has nothing to act on (hints apply to buffered, uring-buffered, dontcache, uring-dontcache, threadpool, tokio and mmap)"
            ));
        }
        Err(format!(
            "{method} takes no access hint (hints apply to buffered, uring-buffered, dontcache, uring-dontcache, threadpool, tokio and mmap)"
        ))
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The refusal of `hint` for `method`, as an engine error.
pub(crate) fn refused(method: Method, hint: Hint) -> EngineError {
    EngineError::Unsupported {
        method,
        reason: hint
            .call_for(method)
            .err()
            .unwrap_or_else(|| format!("{method} cannot apply +{hint} here")),
    }
}

/// `posix_fadvise` of `hint` over `[0, len)` of `file` (len 0: the whole
/// file), for a read/write method.
pub(crate) fn fadvise(
    method: Method,
    file: &impl std::os::fd::AsFd,
    path: &Path,
    hint: Hint,
    len: u64,
) -> Result<(), EngineError> {
    use rustix::fs::Advice;
    let advice = match hint {
        Hint::Random => Advice::Random,
        Hint::Sequential => Advice::Sequential,
        Hint::Willneed => Advice::WillNeed,
        Hint::Noreuse => Advice::NoReuse,
        Hint::Hugepage | Hint::Populate => return Err(refused(method, hint)),
    };
    let len = std::num::NonZeroU64::new(len);
    rustix::fs::fadvise(file, 0, len, advice)
        .map_err(|e| EngineError::os("posix_fadvise", path, e.into()))
}

//! The geometry of a cache ([`UcacheConfig`]: budget, page size, shards),
//! how it is described and checked against a file's `O_DIRECT` alignment,
//! and the process-wide geometry that [`Method::Ucache`] opens with
//! ([`configure`]).
//!
//! [`Method::Ucache`]: crate::Method::Ucache

use std::path::Path;
use std::sync::Mutex;

use super::lock;
use crate::sys::DioAlign;

/// Budget of a cache when [`configure`] was never called: 64 MiB.
pub const DEFAULT_BUDGET: u64 = 64 << 20;
/// Page size of a cache when [`configure`] was never called: 4 KiB.
pub const DEFAULT_PAGE: usize = 4096;
/// Shards of a cache (fewer when the budget holds fewer pages).
pub const DEFAULT_SHARDS: usize = 8;

/// The geometry of a cache: how much memory, in pages of what size, split
/// into how many shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UcacheConfig {
    /// Bytes of frame memory: `budget / page_size` pages (rounded down).
    pub budget: u64,
    /// Bytes per cache page; a multiple of the file's `O_DIRECT` alignment.
    pub page_size: usize,
    /// Shards (at most one per page).
    pub shards: usize,
}

impl UcacheConfig {
    /// 64 MiB in 4 KiB pages, 8 shards.
    pub const DEFAULT: UcacheConfig = UcacheConfig {
        budget: DEFAULT_BUDGET,
        page_size: DEFAULT_PAGE,
        shards: DEFAULT_SHARDS,
    };

    /// `budget` bytes in pages of `page_size`, [`DEFAULT_SHARDS`] shards.
    pub fn new(budget: u64, page_size: usize) -> UcacheConfig {
        UcacheConfig {
            budget,
            page_size,
            shards: DEFAULT_SHARDS,
        }
    }

    /// The same, with `shards` shards.
    pub fn with_shards(self, shards: usize) -> UcacheConfig {
        UcacheConfig { shards, ..self }
    }

    /// Pages the budget holds.
    pub fn pages(&self) -> u64 {
        if self.page_size == 0 {
            0
        } else {
            self.budget / self.page_size as u64
        }
    }

    /// Shards actually used: at most one per page, at least one.
    pub fn effective_shards(&self) -> usize {
        let pages = usize::try_from(self.pages()).unwrap_or(usize::MAX);
        self.shards.min(pages).max(1)
    }

    /// "64 MiB in 4 KiB pages, 8 shards": what [`Caps::notes`] says after
    /// `ucache: `.
    ///
    /// [`Caps::notes`]: crate::Caps::notes
    pub fn describe(&self) -> String {
        let shards = self.effective_shards();
        format!(
            "{} in {} pages, {shards} shard{}",
            fmt_size(self.pages() * self.page_size as u64),
            fmt_size(self.page_size as u64),
            if shards == 1 { "" } else { "s" }
        )
    }

    /// Why this geometry cannot serve a file with O_DIRECT alignment `dio`
    /// (`path` names the file in the message), or `None`.
    pub fn check(&self, path: &Path, dio: &DioAlign) -> Option<String> {
        if self.page_size == 0 || self.page_size > 1 << 30 {
            return Some(format!(
                "ucache page size {} is out of range (the O_DIRECT alignment of {}, {} bytes, up to 1 GiB)",
                self.page_size,
                path.display(),
                dio.offset
            ));
        }
        if self.page_size % dio.offset.max(1) != 0 {
            let up = self.page_size.next_multiple_of(dio.offset);
            return Some(format!(
                "ucache page size {} is not a multiple of the O_DIRECT alignment of {} ({} bytes, from {}): \
                 cache pages are read and written with O_DIRECT; use a page size of {up} or another multiple of {}",
                self.page_size,
                path.display(),
                dio.offset,
                dio.source,
                dio.offset
            ));
        }
        if self.pages() == 0 {
            return Some(format!(
                "a ucache budget of {} bytes holds no page of {} bytes; give it at least one page",
                self.budget, self.page_size
            ));
        }
        if self.shards == 0 {
            return Some("a ucache needs at least one shard".into());
        }
        None
    }
}

impl Default for UcacheConfig {
    fn default() -> Self {
        UcacheConfig::DEFAULT
    }
}

/// `64 MiB`, `4 KiB`, `1536 B`: exact sizes in the largest unit that
/// divides them.
pub(super) fn fmt_size(b: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if b >= unit && b % unit == 0 {
            return format!("{} {name}", b / unit);
        }
    }
    format!("{b} B")
}

static CONFIG: Mutex<UcacheConfig> = Mutex::new(UcacheConfig::DEFAULT);

/// Set the budget (bytes) and page size (bytes) of the caches that
/// [`Method::Ucache`] opens from now on, in this process (shards stay
/// [`DEFAULT_SHARDS`]). The runner calls it before opening the engines of a
/// case; engines already open keep their cache. Checked at open: a page size
/// that is not a multiple of the file's `O_DIRECT` alignment, or a budget
/// smaller than one page, makes `open` fail with [`EngineError::Invalid`].
///
/// [`Method::Ucache`]: crate::Method::Ucache
/// [`EngineError::Invalid`]: crate::EngineError::Invalid
pub fn configure(budget: u64, page: usize) {
    *lock(&CONFIG) = UcacheConfig::new(budget, page);
}

/// The geometry [`Method::Ucache`] opens with now ([`configure`]).
///
/// [`Method::Ucache`]: crate::Method::Ucache
pub fn configured() -> UcacheConfig {
    *lock(&CONFIG)
}

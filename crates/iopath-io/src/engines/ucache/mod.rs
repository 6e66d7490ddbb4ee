//! `ucache`: an application-level page cache over `O_DIRECT`.
//!
//! What a database buffer pool does, in small: the file is opened with
//! `O_DIRECT` (so the kernel's page cache holds none of it), and a fixed
//! memory *budget* is split into frames of one cache *page* each (4 KiB by
//! default). Requests of any size, down to a few bytes, at any offset, are
//! copied between the engine's slot and the cached pages; a miss reads the
//! whole page with one aligned `pread`, and a page is evicted by CLOCK
//! (second chance), a dirty one written back with one aligned `pwrite` first.
//!
//! # Design
//! - One cache per file and geometry, shared by every engine (worker thread)
//!   of a run: [`shared`] keeps a registry of live caches keyed by (file,
//!   budget, page size, shards) holding [`Weak`] references, so the workers
//!   of one case share one [`UcacheShared`], and it is freed when the last
//!   engine drops. Its last drop writes every dirty page back.
//! - The frames are split into shards (`page index % shards`), each a
//!   [`Mutex`] over its frame table (page -> frame), per-frame state (page,
//!   referenced bit, dirty bit), the frames' memory (one aligned buffer) and
//!   its CLOCK hand. A request locks one shard at a time, page by page, so
//!   threads touching different shards never wait for each other; a miss or
//!   an eviction holds its shard for the duration of the device I/O (the
//!   shard count bounds how many misses proceed at once).
//! - A request is atomic per page, not across pages (as with `pread` and
//!   `pwrite` on the page cache).
//! - The cache keeps the file's logical size: reads stop at it (a short read
//!   at end of file), writes past it extend it, one at a time, once their
//!   data is in the cache (readers never see the new size before the data;
//!   a failed one extends nothing). The last page of a file that
//!   is not a multiple of the page size is a *short page*: it is read whole
//!   (`O_DIRECT` returns what exists, the rest of the frame is zeros) and
//!   written back rounded up to the `O_DIRECT` alignment, after which the
//!   file is cut back to its logical size (`ftruncate`).
//! - A write covering a whole page does not read it first.
//!
//! # Sync policies
//! - `end` (the default): writes dirty pages in the cache; `flush(End)` writes
//!   every dirty page of the cache back, then `fsync`s.
//! - `dsync`, `osync`: write-through: each write's pages are written at once
//!   with `pwritev2(RWF_DSYNC)` / `pwritev2(RWF_SYNC)`, so the data is durable
//!   when the request completes (the file is not opened `O_DSYNC`, because the
//!   cache is shared and the policy belongs to each engine).
//! - `each`: write-through, then `fsync` after every write.
//! - `none`: dirty data stays in the cache, and reaches the file only when a
//!   page is evicted or when the last engine of the cache drops (outside the
//!   timed interval); nothing is ever `fsync`ed.
//!
//! Errors of the write-back at the last drop cannot be reported: call
//! `flush(SyncPolicy::End)` to see them.
//!
//! # Configuration
//! [`Method::Ucache`] through [`crate::open`] uses the geometry set with
//! [`configure`] (process-wide; 64 MiB in 4 KiB pages, 8 shards when never
//! called): the runner calls it before opening. [`UcacheEngine::open_with`]
//! takes one explicitly. The page size must be a multiple of the file's
//! `O_DIRECT` alignment ([`crate::sys::dio_alignment`]), else opening fails
//! with [`EngineError::Invalid`]; a file system that refuses `O_DIRECT`
//! makes it fail with [`EngineError::Unsupported`].
//!
//! # Layout
//! - `config`: the geometry ([`UcacheConfig`]) and the process-wide
//!   setting [`configure`].
//! - `clock`: the CLOCK replacement state of a shard (which page each frame
//!   holds, the hand), pure bookkeeping.
//! - `cache`: [`UcacheShared`], the shared cache itself (the registry of
//!   live caches, the shards, reads, writes, write-back), and its `O_DIRECT`
//!   I/O.
//! - `engine`: [`UcacheEngine`], one worker's [`crate::Engine`] over the
//!   shared cache.
//!
//! [`Weak`]: std::sync::Weak
//! [`Method::Ucache`]: crate::Method::Ucache
//! [`EngineError::Invalid`]: crate::EngineError::Invalid
//! [`EngineError::Unsupported`]: crate::EngineError::Unsupported

use std::sync::{Mutex, MutexGuard};

use rustix::io::ReadWriteFlags;

use crate::SyncPolicy;

mod cache;
mod clock;
mod config;
mod engine;

pub use cache::{closed_stats, shared, UcacheShared};
pub use config::{
    configure, configured, UcacheConfig, DEFAULT_BUDGET, DEFAULT_PAGE, DEFAULT_SHARDS,
};
pub use engine::UcacheEngine;

/// A lock, also when another thread panicked holding it: every guarded
/// state here is consistent between statements.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counters of one cache, over its whole life (all its engines).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UcacheStats {
    /// Page accesses served from the cache.
    pub hits: u64,
    /// Page accesses that had to bring the page in (a read, or none for a
    /// write of the whole page).
    pub misses: u64,
    /// Pages dropped to make room for another.
    pub evictions: u64,
    /// Page writes to the file: dirty pages written back at eviction or at
    /// a flush, and write-through writes.
    pub writebacks: u64,
}

impl UcacheStats {
    /// Hits over page accesses (0 when none).
    pub fn hit_ratio(&self) -> f64 {
        let all = self.hits + self.misses;
        if all == 0 {
            0.0
        } else {
            self.hits as f64 / all as f64
        }
    }
}

/// How a write reaches the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Into the cache; written back at eviction or flush.
    Back,
    /// Into the cache and at once to the file, with these `pwritev2` flags.
    Through(ReadWriteFlags),
    /// Into the cache, at once to the file, then `fsync`.
    ThroughFsync,
}

impl WriteMode {
    /// What `sync` asks of writes.
    pub fn for_sync(sync: SyncPolicy) -> WriteMode {
        match sync {
            SyncPolicy::None | SyncPolicy::End => WriteMode::Back,
            SyncPolicy::Dsync => WriteMode::Through(ReadWriteFlags::DSYNC),
            SyncPolicy::Osync => WriteMode::Through(ReadWriteFlags::SYNC),
            SyncPolicy::Each => WriteMode::ThroughFsync,
        }
    }
}

#[cfg(test)]
mod tests;

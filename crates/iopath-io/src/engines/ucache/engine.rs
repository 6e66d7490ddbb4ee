//! [`UcacheEngine`]: one worker's engine over the shared cache. Its slot
//! buffer is the only memory of its own; requests are copies between the
//! slot and the cache's pages, writes reach the file as the sync policy
//! says ([`WriteMode`]).

use std::path::PathBuf;
use std::sync::Arc;

use rustix::io::Errno;

use super::cache::{merge_nodes, shared_with};
use super::{configured, UcacheConfig, UcacheShared, WriteMode};
use crate::buf::SlotPool;
use crate::engines::{self, SyncIo};
use crate::{Caps, EngineError, IoReq, Method, Op, OpenSpec, SyncCall, SyncPolicy};

/// One worker's engine: a slot of `block_size` bytes, and the shared cache.
#[derive(Debug)]
pub struct UcacheEngine {
    cache: Arc<UcacheShared>,
    pool: SlotPool,
    caps: Caps,
    path: PathBuf,
    write: bool,
    mode: WriteMode,
}

impl UcacheEngine {
    /// Open with the geometry of [`configure`].
    ///
    /// [`configure`]: super::configure
    pub fn open(spec: &OpenSpec) -> Result<UcacheEngine, EngineError> {
        UcacheEngine::open_with(spec, configured())
    }

    /// Open with the geometry `cfg`: the live cache of this file and
    /// geometry if there is one, else a new one.
    pub fn open_with(spec: &OpenSpec, cfg: UcacheConfig) -> Result<UcacheEngine, EngineError> {
        let method = Method::Ucache;
        let (cache, created) = shared_with(
            &spec.path,
            cfg,
            spec.write,
            spec.noatime,
            spec.mem_policy.as_ref(),
        )?;
        let (pool, slot_nodes) = engines::slot_pool(method, spec, 1, 4096)?;
        let mut notes = Vec::new();
        if spec.queue_depth > 1 {
            notes.push(format!(
                "{method} is synchronous: queue depth {} requested, ran at 1 (use --threads)",
                spec.queue_depth
            ));
        }
        notes.push(format!("ucache: {}", cache.config().describe()));
        if spec.write && spec.sync == SyncPolicy::None {
            notes.push(
                "ucache with sync none: dirty pages stay in the cache until evicted or until the last engine closes"
                    .into(),
            );
        }
        // The frames are counted once, by the engine that made them: the
        // runner adds up the pages of every engine.
        let mut buffer_nodes = slot_nodes;
        if created {
            merge_nodes(&mut buffer_nodes, cache.frame_nodes());
        }
        let mem_align = pool.align();
        Ok(UcacheEngine {
            cache,
            pool,
            caps: Caps {
                is_async: false,
                queue_depth: 1,
                offset_align: 1,
                mem_align,
                notes,
                buffer_nodes,
            },
            path: spec.path.clone(),
            write: spec.write,
            mode: WriteMode::for_sync(spec.sync),
        })
    }

    /// The cache this engine shares.
    pub fn cache(&self) -> &Arc<UcacheShared> {
        &self.cache
    }
}

impl SyncIo for UcacheEngine {
    fn sync_caps(&self) -> &Caps {
        &self.caps
    }

    fn pool_mut(&mut self) -> &mut SlotPool {
        &mut self.pool
    }

    fn one(&mut self, r: &IoReq) -> Result<Result<u32, i32>, EngineError> {
        let buf = engines::request_buf(&mut self.pool, r)?;
        let res = match r.op {
            Op::Read => self.cache.read(r.offset, buf),
            // As pwrite on a descriptor opened read-only.
            Op::Write if !self.write => Err(Errno::BADF),
            Op::Write => self.cache.write(r.offset, buf, self.mode),
        };
        Ok(res.map(|n| n as u32).map_err(|e| e.raw_os_error()))
    }

    fn flush_end(&mut self, call: SyncCall) -> Result<(), EngineError> {
        self.cache
            .flush(call)
            .map_err(|e| EngineError::os("ucache write-back and fsync", &self.path, e.into()))
    }
}

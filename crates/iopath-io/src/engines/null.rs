//! `null`: completes every request at once without touching any file.
//!
//! It runs the worker loop, clocks and histograms exactly as a real method
//! does, so its result is iopath's own cost per I/O. It honours the queue
//! depth, like fio's null engine.

use crate::buf::SlotPool;
use crate::{Caps, Completion, Engine, EngineError, IoReq, Method, OpenSpec, SyncPolicy};

#[derive(Debug)]
pub struct NullEngine {
    pool: SlotPool,
    caps: Caps,
}

impl NullEngine {
    /// Fails only when `spec.mem_policy` cannot be applied.
    pub fn new(spec: &OpenSpec) -> Result<NullEngine, EngineError> {
        let qd = spec.queue_depth.max(1);
        let (pool, buffer_nodes) = super::slot_pool(Method::Null, spec, qd, 4096)?;
        Ok(NullEngine {
            pool,
            caps: Caps {
                is_async: true,
                queue_depth: qd,
                offset_align: 1,
                mem_align: 4096,
                notes: Vec::new(),
                buffer_nodes,
            },
        })
    }
}

impl Engine for NullEngine {
    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn buf_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.pool.get_mut(slot)
    }

    #[inline]
    fn submit(&mut self, reqs: &[IoReq], done: &mut Vec<Completion>) -> Result<usize, EngineError> {
        for r in reqs {
            let slots = self.pool.slots() as u32;
            if r.slot >= slots || r.len as usize > self.pool.slot_size() || r.len == 0 {
                return Err(EngineError::Invalid(format!(
                    "slot {} / length {} outside the pool ({} slots of {} bytes)",
                    r.slot,
                    r.len,
                    slots,
                    self.pool.slot_size()
                )));
            }
            done.push(Completion {
                slot: r.slot,
                result: Ok(r.len),
            });
        }
        Ok(reqs.len())
    }

    fn reap(&mut self, _min: usize, _done: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }

    fn flush(&mut self, _how: SyncPolicy) -> Result<(), EngineError> {
        Ok(())
    }

    fn in_flight(&self) -> usize {
        0
    }
}

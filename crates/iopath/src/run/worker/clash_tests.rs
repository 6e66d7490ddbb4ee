//! `--verify` never has two writes of one block in flight at once: a
//! fake asynchronous engine holds every request until reaped and counts
//! the times a write arrived for a block with a write still in flight.

use super::*;

#[derive(Debug)]
struct HoldingEngine {
    caps: iopath_io::Caps,
    bufs: Vec<Vec<u8>>,
    /// (slot, op, offset) of the requests in flight, oldest first.
    in_flight: std::collections::VecDeque<(u32, Op, u64)>,
    clashes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    writes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Engine for HoldingEngine {
    fn caps(&self) -> &iopath_io::Caps {
        &self.caps
    }
    fn buf_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.bufs.get_mut(slot as usize).map(|b| &mut b[..])
    }
    fn submit(
        &mut self,
        reqs: &[IoReq],
        _done: &mut Vec<Completion>,
    ) -> Result<usize, iopath_io::EngineError> {
        for r in reqs {
            if r.op == Op::Write {
                self.writes.fetch_add(1, Ordering::SeqCst);
                if self
                    .in_flight
                    .iter()
                    .any(|&(_, op, o)| op == Op::Write && o == r.offset)
                {
                    self.clashes.fetch_add(1, Ordering::SeqCst);
                }
            }
            self.in_flight.push_back((r.slot, r.op, r.offset));
        }
        Ok(reqs.len())
    }
    fn reap(
        &mut self,
        min: usize,
        done: &mut Vec<Completion>,
    ) -> Result<(), iopath_io::EngineError> {
        for _ in 0..min.max(1) {
            if let Some((slot, _, _)) = self.in_flight.pop_front() {
                done.push(Completion {
                    slot,
                    result: Ok(4096),
                });
            }
        }
        Ok(())
    }
    fn flush(&mut self, _how: SyncPolicy) -> Result<(), iopath_io::EngineError> {
        Ok(())
    }
    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

/// Writes of `pattern` over a range of `blocks` blocks at depth 8: how
/// many were issued, and how many went to a block with a write in flight.
fn run_writes(pattern: Pattern, blocks: u64) -> (usize, usize, WorkerOut) {
    let clashes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let eng = HoldingEngine {
        caps: iopath_io::Caps {
            is_async: true,
            queue_depth: 8,
            offset_align: 1,
            mem_align: 1,
            notes: Vec::new(),
            buffer_nodes: Vec::new(),
        },
        bufs: vec![vec![0; 4096]; 8],
        in_flight: Default::default(),
        clashes: clashes.clone(),
        writes: writes.clone(),
    };
    let j = WorkerJob {
        pattern,
        block_size: 4096,
        start: 0,
        len: 4096 * blocks,
        byte_budget: Some(4096 * 400),
        time_budget: None,
        at_least: None,
        sync: SyncPolicy::None,
        sync_every: None,
        rwmix_read_pct: 50,
        seed: 3,
        stream: 0,
        data: DataMode::Random,
        interval_ns: 100_000_000,
        copy_to_user: false,
        verify: Some(VerifyJob {
            unit: 4096,
            seed: 3,
            pass: 1,
            max_pass: 1,
            check_reads: false,
        }),
        stride: (1, 0),
        hint: None,
    };
    let (barrier, stop) = (Barrier::new(1), AtomicBool::new(false));
    let out = run(Box::new(eng), &j, &barrier, &stop, None).unwrap();
    (
        writes.load(Ordering::SeqCst),
        clashes.load(Ordering::SeqCst),
        out,
    )
}

/// Regression (review of issue 14): a random writer drew again at most 64
/// times, then kept a block with a write in flight; with fewer blocks than
/// the depth that was every write past the first few, and two writes of a
/// block in flight may interleave (a torn block, reported as corruption).
#[test]
fn verified_writes_never_overlap_one_in_flight() {
    for pattern in [Pattern::RandWrite, Pattern::Write, Pattern::RandRw] {
        for blocks in [1, 2, 7, 64] {
            let (writes, clashes, out) = run_writes(pattern, blocks);
            assert!(writes > 0, "{pattern:?} over {blocks}");
            assert_eq!(
                clashes, 0,
                "{pattern:?} over {blocks} blocks: {writes} writes"
            );
            // Every request asked for was issued: waiting lost none.
            assert_eq!(
                out.read_bytes + out.write_bytes,
                4096 * 400,
                "{pattern:?} {blocks}"
            );
            let marked: u32 = out.written.iter().map(|w| w.count_ones()).sum();
            // What the read-back will check: every block a write reached
            // (400 random draws may miss one of 64).
            assert!(
                marked > 0 && u64::from(marked) <= blocks,
                "{pattern:?} {blocks}"
            );
            if blocks < 8 {
                assert_eq!(u64::from(marked), blocks, "{pattern:?} {blocks}");
            }
        }
    }
}

//! What `iopath trace show` says, as numbers: per op, per file, per
//! thread, request sizes and operations in flight over time. Computed in
//! one pass over the stream; memory bounded by the header's files and at
//! most [`MAX_THREADS`] threads (the rest are counted together).

use std::collections::BTreeMap;

use super::{Event, Header, Op};

/// Threads tracked one by one; beyond, in [`Summary::other_threads`].
pub const MAX_THREADS: usize = 4096;

/// Time slices of [`Summary::in_flight`].
pub const SLICES: usize = 10;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub ops: u64,
    pub bytes: u64,
    /// Calls that returned an error.
    pub errors: u64,
}

impl Tally {
    fn add(&mut self, e: &Event) {
        self.ops += 1;
        self.bytes += e.moved_bytes();
        if e.result < 0 {
            self.errors += 1;
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub events: u64,
    pub duration_ns: u64,
    pub by_op: BTreeMap<Op, Tally>,
    /// Per file of the header: reads and writes (faults included).
    pub file_reads: Vec<Tally>,
    pub file_writes: Vec<Tally>,
    /// Data ops by size: (the power of two at or above the size, count).
    pub sizes: BTreeMap<u64, u64>,
    /// Per thread id: its ops.
    pub threads: BTreeMap<u32, Tally>,
    /// Ops of threads past [`MAX_THREADS`].
    pub other_threads: Tally,
    /// Mean operations in flight in each tenth of the trace's time
    /// (from each op's start and duration).
    pub in_flight: [f64; SLICES],
}

impl Summary {
    pub fn new(header: &Header) -> Summary {
        Summary {
            duration_ns: header.duration_ns,
            file_reads: vec![Tally::default(); header.files.len()],
            file_writes: vec![Tally::default(); header.files.len()],
            ..Summary::default()
        }
    }

    pub fn add(&mut self, e: &Event) {
        let op = e.op();
        self.events += 1;
        self.by_op.entry(op).or_default().add(e);
        if let Some(f) = e.file.map(|f| f as usize) {
            if op.reads() {
                if let Some(t) = self.file_reads.get_mut(f) {
                    t.add(e);
                }
            } else if op.writes() {
                if let Some(t) = self.file_writes.get_mut(f) {
                    t.add(e);
                }
            }
        }
        if (op.reads() || op.writes()) && e.len > 0 {
            *self.sizes.entry(e.len.next_power_of_two()).or_default() += 1;
        }
        if self.threads.len() < MAX_THREADS || self.threads.contains_key(&e.tid) {
            self.threads.entry(e.tid).or_default().add(e);
        } else {
            self.other_threads.add(e);
        }
        self.spread(e);
    }

    /// Adds the op's time in flight to the slices it overlaps.
    fn spread(&mut self, e: &Event) {
        if self.duration_ns == 0 || e.dur_ns == 0 {
            return;
        }
        let width = (self.duration_ns / SLICES as u64).max(1);
        let (start, end) = (e.ts_ns, e.ts_ns.saturating_add(e.dur_ns));
        let first = ((start / width) as usize).min(SLICES - 1);
        let last = ((end / width) as usize).min(SLICES - 1);
        for i in first..=last {
            let lo = (i as u64 * width).max(start);
            let hi = if i == SLICES - 1 {
                end
            } else {
                ((i as u64 + 1) * width).min(end)
            };
            self.in_flight[i] += hi.saturating_sub(lo) as f64 / width as f64;
        }
    }

    /// Bytes read and written in all.
    pub fn bytes(&self) -> (u64, u64) {
        let sum = |ts: &[Tally]| ts.iter().map(|t| t.bytes).sum();
        (sum(&self.file_reads), sum(&self.file_writes))
    }
}

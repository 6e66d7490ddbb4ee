//! What the neighbour (`--neighbour`, [`iopath_io::neighbour`]) saw around
//! one repetition of a case: alone just before it, and during it.

use serde::{Deserialize, Serialize};

/// One window of the neighbour's reads.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct NeighbourWindow {
    pub reads: u64,
    /// Reads the page cache served; `null` (unknown) where the file
    /// system refuses `RWF_NOWAIT` (tmpfs), which is how hits are told.
    pub hits: Option<u64>,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

impl NeighbourWindow {
    /// Hits over reads (1 when nothing was read); `None` when unknown.
    pub fn hit_ratio(&self) -> Option<f64> {
        let hits = self.hits?;
        Some(if self.reads == 0 {
            1.0
        } else {
            hits as f64 / self.reads as f64
        })
    }
}

impl From<iopath_io::neighbour::NeighbourStats> for NeighbourWindow {
    fn from(s: iopath_io::neighbour::NeighbourStats) -> Self {
        NeighbourWindow {
            reads: s.reads,
            hits: s.hits,
            p50_ns: s.p50_ns,
            p99_ns: s.p99_ns,
        }
    }
}

/// The neighbour around one measured repetition.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct NeighbourRep {
    /// Alone, its hot set just re-read, right before the repetition.
    pub before: NeighbourWindow,
    /// While the repetition ran.
    pub during: NeighbourWindow,
}

//! The syncs a repetition made every N writes (`--sync-every`).

use serde::{Deserialize, Serialize};

/// The syncs of a repetition (`--sync-every`), all workers together.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Syncs {
    /// Sync calls made.
    pub count: u64,
    /// Their time, each from the call to its return, summed over the
    /// workers (a worker waits for its writes in flight before, not in it).
    pub total_ns: u64,
    /// `total_ns` / `count` (0 without a call).
    pub mean_ns: u64,
}

impl Syncs {
    pub fn new(count: u64, total_ns: u64) -> Syncs {
        Syncs {
            count,
            total_ns,
            mean_ns: total_ns.checked_div(count).unwrap_or(0),
        }
    }
}

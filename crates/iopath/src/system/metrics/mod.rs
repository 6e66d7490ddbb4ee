//! What a case really did and cost, beyond bytes and latencies: device
//! counters under the target, page-cache and process memory, CPU time.

pub mod blockdev;
pub mod dirty;
pub mod kthreads;
pub mod procfs;

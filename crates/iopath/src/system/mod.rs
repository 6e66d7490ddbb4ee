//! The machine, read: its CPUs and NUMA nodes ([`topology`]), its block
//! devices and kernel counters ([`metrics`]), what a result records about
//! it ([`sysinfo`]), and where each worker and buffer goes ([`placement`]).
//! Nothing here changes the system; the `run` layer does that.

pub mod metrics;
pub mod placement;
pub mod sysinfo;
pub mod topology;

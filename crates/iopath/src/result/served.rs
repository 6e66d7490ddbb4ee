//! What served a case: the device, memory (a read the page cache served
//! with the cache cold), or the page cache absorbing writes under the dirty
//! limit. `analysis::verdict::served` computes it from the figures iopath
//! measures (the device fraction, the process's own device reads, the
//! cache state, the dirty limit); the verdict ranks only the cases the
//! device served against each other and sets the others apart
//! ([`Apart`]); `report::text` words it. Plain data (`cases[].served`,
//! `verdicts[].set_apart`), a stable `code` each.

use serde::{Deserialize, Serialize};

use super::names::{Entrant, MethodName};

/// What served a measured case (`cases[].served`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Served {
    /// The device did the work: a read whose device moved about what it
    /// asked (or more: read-ahead), a write that was not absorbed.
    Device {
        /// `summary.device_fraction`; absent without a block device.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device_fraction: Option<f64>,
    },
    /// A read the device moved far less than it asked of: memory served
    /// the rest.
    Memory {
        /// `summary.device_fraction`.
        device_fraction: f64,
        /// The process's own device reads (`/proc/self/io`) over the bytes
        /// it read, where recorded: other traffic on the disk does not
        /// enter it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        own_fraction: Option<f64>,
        /// The user asked for it (`--cache warm`, or the case's own warm
        /// cache): ranked as any other case.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        asked: bool,
        /// The case read more bytes than the span it reads over (an
        /// explicit `--span`, a hot set): memory served pages it had read
        /// itself, the reuse the workload asked about; ranked.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        rereads: bool,
    },
    /// Writes the page cache absorbed: under the dirty limit (every
    /// measured repetition), or the device moved far less than was
    /// written.
    Absorbed(Absorbed),
}

/// A write absorbed by the page cache ([`Served::Absorbed`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Absorbed {
    /// Its median throughput: the burst's speed, until the dirty limit.
    pub burst_bytes_per_s: f64,
    /// The most it wrote in a measured repetition.
    pub written_bytes: u64,
    /// The dirty limit it stayed under (the `--cache-limit` cgroup's where
    /// the case ran in it); absent when it was not under one (the device
    /// moved far less than written) or the limit is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<u64>,
    /// `summary.device_fraction`; absent without a block device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_fraction: Option<f64>,
    /// The device's speed behind the burst: the fastest write of the same
    /// job the device served; absent when none was measured (the text then
    /// says it is not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceRate>,
}

/// The device's write speed in a job: its fastest device-served case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceRate {
    pub method: MethodName,
    /// Its median throughput.
    pub bytes_per_s: f64,
}

impl Served {
    /// The stable code, as the JSON writes it.
    pub fn code(&self) -> &'static str {
        match self {
            Served::Device { .. } => "device",
            Served::Memory { .. } => "memory",
            Served::Absorbed(_) => "absorbed",
        }
    }

    /// True when the case is not ranked against those the device served:
    /// memory served it unasked, or the page cache absorbed its writes.
    pub fn set_apart(&self) -> bool {
        match self {
            Served::Device { .. } => false,
            Served::Memory { asked, rereads, .. } => !asked && !rereads,
            Served::Absorbed(_) => true,
        }
    }
}

/// True when `c` is set apart from the device's ranking
/// ([`Served::set_apart`]).
pub fn is_set_apart(c: &super::CaseResult) -> bool {
    c.served.as_ref().is_some_and(Served::set_apart)
}

/// A case a verdict left out of its ranking (`verdicts[].set_apart`), as
/// the verdict names it, with its median throughput and what served it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Apart {
    pub method: Entrant,
    pub bw_bytes_per_s: f64,
    pub served: Served,
}

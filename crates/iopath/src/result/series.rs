//! A repetition's throughput over time ([`Series`]), re-exported as
//! `result::Series`.

use serde::{Deserialize, Serialize};

/// Throughput over time within one repetition: bytes and requests completed
/// in consecutive intervals from the start (all workers together). Every
/// interval is `interval_ns` long but the last, which is `last_interval_ns`
/// (for write cases it runs through the final flush and close, so a long
/// fsync shows as intervals with nothing completed).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Series {
    pub interval_ns: u64,
    pub last_interval_ns: u64,
    pub bw_bytes_per_s: Vec<f64>,
    pub iops: Vec<f64>,
}

impl Series {
    /// From per-interval counts (`bytes[i]`, `ios[i]`).
    pub fn from_counts(
        interval_ns: u64,
        last_interval_ns: u64,
        bytes: &[u64],
        ios: &[u64],
    ) -> Series {
        let n = bytes.len();
        let secs = |i: usize| {
            if i + 1 == n {
                last_interval_ns.max(1) as f64 / 1e9
            } else {
                interval_ns.max(1) as f64 / 1e9
            }
        };
        Series {
            interval_ns,
            last_interval_ns,
            bw_bytes_per_s: bytes
                .iter()
                .enumerate()
                .map(|(i, &b)| (b as f64 / secs(i)).round())
                .collect(),
            iops: ios
                .iter()
                .enumerate()
                .map(|(i, &k)| (k as f64 / secs(i) * 10.0).round() / 10.0)
                .collect(),
        }
    }
}

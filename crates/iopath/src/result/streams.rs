//! The streams of a case that ran several workloads at the same time (fio
//! jobs with no `stonewall` between them): each stream's own figures, per
//! repetition ([`StreamRep`] in `repetitions[].streams`) and over the
//! measured repetitions ([`StreamResult`] in `cases[].streams`). The
//! case's own figures are the streams together; what iopath measures per
//! case (CPU, device counters, costs) the streams share.

use serde::{Deserialize, Serialize};

use super::Latency;

/// One stream's figures in one repetition.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamRep {
    pub ios: u64,
    pub io_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    #[serde(default)]
    pub read_bytes: u64,
    #[serde(default)]
    pub write_bytes: u64,
    /// From its first worker's start to its last worker's end.
    pub duration_ns: u64,
    pub bw_bytes_per_s: f64,
    pub iops: f64,
    pub lat_ns: Latency,
}

/// One stream of a case: its workload, and its figures over the measured
/// repetitions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StreamResult {
    /// Its name (the fio job's).
    pub name: String,
    pub pattern: crate::model::Pattern,
    pub block_size: u64,
    /// The depth asked per thread (a synchronous method runs at 1).
    pub queue_depth_requested: u32,
    pub threads: u32,
    #[serde(with = "super::names::sync_name")]
    pub sync: iopath_io::SyncPolicy,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::model::words::opt"
    )]
    pub sync_every: Option<iopath_io::SyncEvery>,
    pub rwmix_read_pct: Option<u8>,
    /// Random offsets within its first `span_bytes` of the file; absent:
    /// the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_bytes: Option<u64>,
    /// Its figures over the measured repetitions; null before one ran.
    pub summary: Option<StreamSummary>,
}

/// A stream's figures over the measured repetitions: requests and bytes
/// summed, rates those of the repetition whose streams together had the
/// median rate (so the streams' rows add up to the case's where they ran
/// the whole interval; a stream that ended sooner shows its own rate over
/// its own time, as fio's per-job figures do), latency from its requests'
/// merged histogram.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamSummary {
    /// Measured repetitions behind the figures.
    pub repetitions: u32,
    /// Requests and bytes over those repetitions.
    pub ios: u64,
    pub io_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    /// In the repetition whose streams together had the median rate.
    pub bw_bytes_per_s: f64,
    pub iops: f64,
    pub lat_ns: Latency,
    /// Its share of the bytes the case moved in those repetitions, 0 to 1.
    pub share_of_bytes: f64,
}

impl StreamSummary {
    /// The summary of stream `i` over `reps` (each with its streams), its
    /// latency from `merged` when there is one (else the median
    /// repetition's); `None` when no repetition has the stream.
    pub fn of(
        reps: &[&super::Measurement],
        i: usize,
        merged: Option<Latency>,
    ) -> Option<StreamSummary> {
        // Its repetitions, by the rate of all streams together: the one in
        // the middle (the lower of an even count) gives the rates, as the
        // case's row is a median.
        let mut by_rate: Vec<(f64, &StreamRep)> = reps
            .iter()
            .filter_map(|m| Some((m.bw_bytes_per_s, m.streams.get(i)?)))
            .collect();
        if by_rate.is_empty() {
            return None;
        }
        by_rate.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mid = by_rate[(by_rate.len() - 1) / 2].1;
        let mine: Vec<&StreamRep> = by_rate.iter().map(|(_, s)| *s).collect();
        let io_bytes: u64 = mine.iter().map(|s| s.io_bytes).sum();
        let all: u64 = reps.iter().map(|m| m.io_bytes).sum();
        let lat_ns = merged.unwrap_or_else(|| {
            let mut by_p50: Vec<&&StreamRep> = mine.iter().collect();
            by_p50.sort_by_key(|s| s.lat_ns.p50);
            by_p50[by_p50.len() / 2].lat_ns.clone()
        });
        Some(StreamSummary {
            repetitions: mine.len() as u32,
            ios: mine.iter().map(|s| s.ios).sum(),
            io_bytes,
            read_ios: mine.iter().map(|s| s.read_ios).sum(),
            write_ios: mine.iter().map(|s| s.write_ios).sum(),
            bw_bytes_per_s: mid.bw_bytes_per_s,
            iops: mid.iops,
            lat_ns,
            share_of_bytes: if all > 0 {
                io_bytes as f64 / all as f64
            } else {
                0.0
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Measurement;

    fn rep(a: f64, b: f64) -> Measurement {
        let s = |bw: f64| StreamRep {
            io_bytes: bw as u64,
            bw_bytes_per_s: bw,
            iops: bw / 4096.0,
            ..StreamRep::default()
        };
        Measurement {
            io_bytes: (a + b) as u64,
            bw_bytes_per_s: a + b,
            streams: vec![s(a), s(b)],
            ..Measurement::default()
        }
    }

    /// Each stream's median alone came from different repetitions and
    /// could exceed the whole case's row; the rows now come from the
    /// repetition with the median total, so they add up to it.
    #[test]
    fn the_streams_rows_are_the_median_repetitions_and_add_up_to_it() {
        // Alone, a's median is 200 and b's 150: 350 beside a case of 650.
        let reps = [rep(100.0, 900.0), rep(500.0, 150.0), rep(200.0, 100.0)];
        let refs: Vec<&Measurement> = reps.iter().collect();
        let a = StreamSummary::of(&refs, 0, None).unwrap();
        let b = StreamSummary::of(&refs, 1, None).unwrap();
        assert_eq!((a.bw_bytes_per_s, b.bw_bytes_per_s), (500.0, 150.0));
        assert_eq!(a.io_bytes + b.io_bytes, 1950);
    }
}

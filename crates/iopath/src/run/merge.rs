//! The workers' measurements of one repetition merged into one: raw counts
//! summed, the interval from the first start to the last end, histograms
//! and over-time series added.

use std::time::Instant;

use hdrhistogram::Histogram;

use super::worker;
use crate::result::{Latency, Measurement, Series, Syncs};

/// The workers' measurements as one, with their merged latency histogram.
pub(super) fn merge(outs: &[worker::WorkerOut], interval_ns: u64) -> (Measurement, Histogram<u64>) {
    let mut hist =
        Histogram::<u64>::new_with_bounds(1, worker::MAX_LAT_NS, 3).expect("valid bounds");
    let (mut rio, mut wio, mut rb, mut wb) = (0, 0, 0, 0);
    let mut start: Option<Instant> = None;
    let mut end: Option<Instant> = None;
    for o in outs {
        let _ = hist.add(&o.hist);
        rio += o.read_ios;
        wio += o.write_ios;
        rb += o.read_bytes;
        wb += o.write_bytes;
        start = Some(start.map_or(o.start, |s| s.min(o.start)));
        end = Some(end.map_or(o.end, |e| e.max(o.end)));
    }
    let duration_ns = match (start, end) {
        (Some(s), Some(e)) => e.duration_since(s).as_nanos().max(1) as u64,
        _ => 1,
    };
    let secs = duration_ns as f64 / 1e9;
    // Workers start within microseconds of each other (a barrier): their
    // intervals are summed by index.
    let len = outs.iter().map(|o| o.series_bytes.len()).max().unwrap_or(0);
    let (mut sb, mut si) = (vec![0u64; len], vec![0u64; len]);
    for o in outs {
        for (i, (b, k)) in o.series_bytes.iter().zip(&o.series_ios).enumerate() {
            sb[i] += b;
            si[i] += k;
        }
    }
    let last_ns = duration_ns
        .saturating_sub(interval_ns * len.saturating_sub(1) as u64)
        .clamp(1, interval_ns.max(1));
    let series = (len > 0).then(|| Series::from_counts(interval_ns, last_ns, &sb, &si));
    let io_bytes = rb + wb;
    let ios = rio + wio;
    let m = Measurement {
        io_bytes,
        ios,
        read_ios: rio,
        read_bytes: rb,
        write_bytes: wb,
        write_ios: wio,
        duration_ns,
        bw_bytes_per_s: io_bytes as f64 / secs,
        iops: ios as f64 / secs,
        lat_ns: Latency::from_hist(&hist),
        device: None,
        device_fraction: None,
        process_io: None,
        costs: None,
        deferred: None,
        latency_split: None,
        cpu: Default::default(),
        memory: Default::default(),
        interrupted: outs.iter().any(|o| o.interrupted),
        warmup: false,
        series,
        round: None,
        seq: None,
        capped: None,
        syncs: syncs(outs),
        streams: Vec::new(),
    };
    (m, hist)
}

/// The workers' syncs together (`--sync-every`); `None` when they made
/// none because they were asked for none.
fn syncs(outs: &[worker::WorkerOut]) -> Option<Syncs> {
    let each: Vec<Syncs> = outs.iter().filter_map(|o| o.syncs).collect();
    (!each.is_empty()).then(|| {
        Syncs::new(
            each.iter().map(|s| s.count).sum(),
            each.iter().map(|s| s.total_ns).sum(),
        )
    })
}

/// One stream's workers merged: its figures for the repetition's streams.
pub(super) fn stream_rep(
    outs: &[worker::WorkerOut],
    interval_ns: u64,
) -> (crate::result::streams::StreamRep, Histogram<u64>) {
    let (m, hist) = merge(outs, interval_ns);
    let rep = crate::result::streams::StreamRep {
        ios: m.ios,
        io_bytes: m.io_bytes,
        read_ios: m.read_ios,
        write_ios: m.write_ios,
        read_bytes: m.read_bytes,
        write_bytes: m.write_bytes,
        duration_ns: m.duration_ns,
        bw_bytes_per_s: m.bw_bytes_per_s,
        iops: m.iops,
        lat_ns: m.lat_ns,
    };
    (rep, hist)
}

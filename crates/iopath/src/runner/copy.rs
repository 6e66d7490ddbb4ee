//! The copy pattern: NIOBench's copy of the test file to a new file beside
//! it, by one copy method (`iopath_io::copy`), timed through the
//! destination's flush and close. One thread copies; its figures take the
//! shape of a worker's, so a copy repetition is summarised, observed and
//! reported like any other: `read_bytes` are the bytes copied (each read
//! once and written once), `read_ios` the chunks.

use std::path::{Path, PathBuf};
use std::time::Instant;

use hdrhistogram::Histogram;
use iopath_io::copy::{CopyMethod, CopySpec};
use iopath_io::{EngineError, Method};

use super::worker::{WorkerOut, MAX_LAT_NS};

pub use crate::model::copy_method;

/// The methods that can copy, for messages.
pub fn copy_methods() -> String {
    Method::ALL
        .into_iter()
        .filter(|m| copy_method(*m).is_some())
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A destination name beside `src` that no file has: `iopath-<pid>-copy-<n>.dat`
/// (the `iopath-` prefix marks it as iopath's own, like the test file).
pub fn destination(src: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    src.with_file_name(format!(
        "iopath-{}-copy-{:x}{:x}.dat",
        std::process::id(),
        nanos,
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Copy as `spec` says and measure it: per-chunk latency, per-interval
/// bytes, the thread's CPU. The destination is left for the caller to
/// check and remove (`copy` removes it itself on error).
pub fn run(
    method: CopyMethod,
    spec: &CopySpec,
    interval_ns: u64,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<(WorkerOut, Vec<String>), EngineError> {
    let interval_ns = interval_ns.max(1);
    let mut hist = Histogram::<u64>::new_with_bounds(1, MAX_LAT_NS, 3).expect("valid bounds");
    let chunks_expected = spec.len / spec.chunk.max(1) as u64 + 2;
    let mut series_bytes: Vec<u64> = Vec::with_capacity(4096);
    let mut series_ios: Vec<u64> = Vec::with_capacity(4096);
    let (mut cur_bytes, mut cur_ios, mut edge_ns) = (0u64, 0u64, interval_ns);
    let cpu0 = iopath_io::sys::thread_usage();
    let start = Instant::now();
    let out = iopath_io::copy::copy(method, spec, &mut |bytes, ns| {
        let now = start.elapsed().as_nanos() as u64;
        while now >= edge_ns {
            series_bytes.push(cur_bytes);
            series_ios.push(cur_ios);
            (cur_bytes, cur_ios) = (0, 0);
            edge_ns += interval_ns;
        }
        cur_bytes += bytes;
        cur_ios += 1;
        hist.saturating_record(ns.max(1));
        // Ctrl-C ends the copy after this chunk (`iopath_io::copy::STOPPED`).
        !stop.load(std::sync::atomic::Ordering::Relaxed)
    })?;
    let end = Instant::now();
    let cpu = iopath_io::sys::thread_usage().since(&cpu0);
    // Close the series at the end (the flush and close come after the last
    // chunk: intervals with nothing copied).
    let end_ns = end.duration_since(start).as_nanos() as u64;
    while edge_ns < end_ns {
        series_bytes.push(cur_bytes);
        series_ios.push(cur_ios);
        (cur_bytes, cur_ios) = (0, 0);
        edge_ns += interval_ns;
    }
    series_bytes.push(cur_bytes);
    series_ios.push(cur_ios);
    debug_assert!(out.chunks <= chunks_expected);
    Ok((
        WorkerOut {
            hist,
            read_ios: out.chunks,
            write_ios: 0,
            read_bytes: out.bytes,
            write_bytes: 0,
            start,
            end,
            interrupted: false,
            series_bytes,
            series_ios,
            cpu,
        },
        out.notes,
    ))
}

//! A case of streams (fio jobs run at the same time) on the terminal: one
//! row per method with the streams together, and under it one row per
//! stream with its own figures. Bandwidth is the group's measure (what the
//! verdict ranks by); IOPS and p99 are each row's own.

use crate::model::units::{fmt_count, fmt_ns, fmt_percentile};
use crate::result::streams::StreamResult;
use crate::result::CaseResult;

const MIB: f64 = 1024.0 * 1024.0;

/// The title of a job of streams: its name (the jobs' names joined).
pub fn title(c: &CaseResult) -> String {
    format!("{} (at once)", c.label.as_deref().unwrap_or("streams"))
}

/// The header of a table of streams.
pub fn header(title: &str) -> Vec<String> {
    [title, "depth", "MiB/s", "IOPS", "vs best", "p99", "CPU/IO"]
        .map(String::from)
        .to_vec()
}

/// A method's row (the streams together) and its streams' rows; `vs` is
/// its `vs best` cell.
pub fn rows(c: &CaseResult, vs: String) -> Vec<Vec<String>> {
    let s = c.summary.as_ref();
    let mut out = vec![vec![
        c.name(),
        String::new(),
        s.map_or("-".into(), |s| format!("{:.1}", s.bw_bytes_per_s / MIB)),
        s.map_or("-".into(), |s| fmt_count(s.iops)),
        vs,
        s.map_or("-".into(), |s| {
            fmt_percentile(s.lat_ns.p99, 0.99, s.lat_ns.count)
        }),
        s.map_or("-".into(), |s| fmt_ns(s.cpu.ns_per_io.round() as u64)),
    ]];
    if s.is_some() {
        out.extend(c.streams.iter().map(|st| stream_row(c, st)));
    }
    out
}

/// One stream's row: its name indented, its depth as its method ran it,
/// its own throughput, IOPS and p99.
fn stream_row(c: &CaseResult, st: &StreamResult) -> Vec<String> {
    let qd = depth(c, st);
    let s = st.summary.as_ref();
    vec![
        format!("  {}", st.name),
        format!("Q{qd}T{}", st.threads),
        s.map_or("-".into(), |s| format!("{:.1}", s.bw_bytes_per_s / MIB)),
        s.map_or("-".into(), |s| fmt_count(s.iops)),
        String::new(),
        s.map_or("-".into(), |s| {
            fmt_percentile(s.lat_ns.p99, 0.99, s.lat_ns.count)
        }),
        String::new(),
    ]
}

/// The `--explain` table's rows for a case's streams, a cell per column
/// up to its p99.9 (method, job, MiB/s, spread, n, IOPS, p50, p99,
/// p99.9); none for a case of one workload or without figures.
pub fn explain_rows(c: &CaseResult) -> Vec<Vec<String>> {
    if c.summary.is_none() {
        return Vec::new();
    }
    c.streams
        .iter()
        .filter_map(|st| {
            let s = st.summary.as_ref()?;
            let l = &s.lat_ns;
            let pct = |ns, p| fmt_percentile(ns, p, l.count);
            let job = format!(
                "{} {} Q{}T{}",
                st.pattern,
                crate::model::units::fmt_bs(st.block_size),
                depth(c, st),
                st.threads
            );
            Some(vec![
                format!("  {}", st.name),
                job,
                format!("{:.1}", s.bw_bytes_per_s / MIB),
                String::new(),
                s.repetitions.to_string(),
                fmt_count(s.iops),
                pct(l.p50, 0.5),
                pct(l.p99, 0.99),
                pct(l.p999, 0.999),
            ])
        })
        .collect()
}

/// A stream's depth as its method ran it: a synchronous method runs every
/// stream at depth 1, as it did the first.
fn depth(c: &CaseResult, st: &StreamResult) -> u32 {
    if c.queue_depth < c.queue_depth_requested {
        c.queue_depth.min(st.queue_depth_requested)
    } else {
        st.queue_depth_requested
    }
}

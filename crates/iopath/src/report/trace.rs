//! The words of traces: `iopath trace show` (a trace's summary), and what
//! `iopath record` says when it has written one. Numbers come from
//! [`crate::trace::summary::Summary`] and the header; only the wording is
//! here. Paths and commands from a trace are shown through
//! [`crate::model::untrusted::visible`] (a trace is input).

use std::fmt::Write;
use std::time::Duration;

use crate::model::units::{fmt_bs, fmt_bytes, fmt_duration};
use crate::model::untrusted::visible;
use crate::trace::summary::{Summary, SLICES};
use crate::trace::{BlindSpot, Ending, Header};

/// The most files listed (the busiest first).
const FILES_SHOWN: usize = 20;
/// The most threads listed.
const THREADS_SHOWN: usize = 16;

/// What the backend could not see, in words.
pub fn blind_spot(b: BlindSpot) -> &'static str {
    match b {
        BlindSpot::MmapFaults => "page faults on file mappings (mmap reads and writes)",
        BlindSpot::IoUringOps => "io_uring reads and writes (only io_uring_enter calls)",
        BlindSpot::AioOps => "libaio submissions' offsets and sizes",
        BlindSpot::FaultUpgrades => {
            "a write to a mapped page that was first read (no fault reaches the file)"
        }
        BlindSpot::TmpfsFaults => "page faults on tmpfs files",
        BlindSpot::Timestamps => "when each operation happened",
    }
}

fn ending(e: &Ending) -> String {
    match e {
        Ending::Complete => "complete".into(),
        Ending::CommandFailed { exit_code } => format!("the command failed (exit {exit_code})"),
        Ending::CommandKilled { signal } => format!("the command was killed (signal {signal})"),
        Ending::EndedEarly { reason } => format!("ended early: {}", visible(reason)),
        Ending::Imported => "imported".into(),
    }
}

fn command(h: &Header) -> String {
    let quoted: Vec<String> = h.command.iter().map(|a| crate::shell_quote(a)).collect();
    visible(&quoted.join(" ")).into_owned()
}

/// What `iopath record` says once the trace is written (stderr).
pub fn recorded(h: &Header, path: &str) -> String {
    let mut s = format!(
        "recorded {} events on {} files in {} ({}, {}) into {}\n",
        h.events,
        h.files.len(),
        fmt_duration(Duration::from_nanos(h.duration_ns)),
        h.backend,
        ending(&h.ending),
        visible(path)
    );
    if h.lost_events > 0 {
        let _ = writeln!(
            s,
            "warning: the kernel dropped {} events (the tracer's buffers were full): \
             the trace misses them",
            h.lost_events
        );
    }
    if h.unresolved_events > 0 {
        let _ = writeln!(
            s,
            "note: {} reads and writes on pipes, sockets or descriptors opened before the \
             recording were not recorded",
            h.unresolved_events
        );
    }
    if !h.blind_spots.is_empty() {
        let seen: Vec<&str> = h.blind_spots.iter().map(|b| blind_spot(*b)).collect();
        let _ = writeln!(s, "not seen by {}: {}", h.backend, seen.join("; "));
    }
    s
}

/// `iopath trace show`.
pub fn show(h: &Header, sum: &Summary) -> String {
    let mut s = String::new();
    let (read, written) = sum.bytes();
    let _ = writeln!(s, "command   {}", command(h));
    let _ = writeln!(
        s,
        "recorded  {} by {}, {}; {} events over {}",
        if h.anonymized {
            "anonymized"
        } else {
            "paths kept"
        },
        h.backend,
        ending(&h.ending),
        sum.events,
        fmt_duration(Duration::from_nanos(h.duration_ns))
    );
    let _ = writeln!(
        s,
        "bytes     {} read, {} written",
        fmt_bytes(read),
        fmt_bytes(written)
    );
    if h.lost_events > 0 || h.unresolved_events > 0 {
        let _ = writeln!(
            s,
            "missing   {} events dropped by the kernel, {} on descriptors with no file",
            h.lost_events, h.unresolved_events
        );
    }
    for b in &h.blind_spots {
        let _ = writeln!(s, "not seen  {}", blind_spot(*b));
    }
    ops(&mut s, sum);
    sizes(&mut s, sum);
    files(&mut s, h, sum);
    threads(&mut s, sum);
    in_flight(&mut s, sum);
    s
}

fn ops(s: &mut String, sum: &Summary) {
    let _ = writeln!(s, "\nops");
    for (op, t) in &sum.by_op {
        let errors = if t.errors > 0 {
            format!("  ({} failed)", t.errors)
        } else {
            String::new()
        };
        let bytes = if t.bytes > 0 {
            fmt_bytes(t.bytes)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "  {:<16} {:>10}  {:>10}{errors}",
            op.name(),
            t.ops,
            bytes
        );
    }
}

fn sizes(s: &mut String, sum: &Summary) {
    if sum.sizes.is_empty() {
        return;
    }
    let total: u64 = sum.sizes.values().sum();
    let _ = writeln!(s, "\nsizes (reads and writes, up to)");
    for (size, n) in &sum.sizes {
        let pct = *n as f64 * 100.0 / total.max(1) as f64;
        let _ = writeln!(s, "  {:>8}  {:>10}  {:>5.1}%", fmt_bs(*size), n, pct);
    }
}

fn files(s: &mut String, h: &Header, sum: &Summary) {
    let mut order: Vec<usize> = (0..h.files.len()).collect();
    let moved = |i: &usize| sum.file_reads[*i].bytes + sum.file_writes[*i].bytes;
    order.sort_by_key(|i| std::cmp::Reverse(moved(i)));
    let _ = writeln!(s, "\nfiles ({}, the busiest first)", h.files.len());
    for &i in order.iter().take(FILES_SHOWN) {
        let f = &h.files[i];
        let _ = writeln!(
            s,
            "  {:>10} read  {:>10} written  size {:>10}  {}",
            fmt_bytes(sum.file_reads[i].bytes),
            fmt_bytes(sum.file_writes[i].bytes),
            fmt_bytes(f.size_bytes),
            visible(&f.path)
        );
    }
    if h.files.len() > FILES_SHOWN {
        let _ = writeln!(s, "  ... and {} more", h.files.len() - FILES_SHOWN);
    }
}

fn threads(s: &mut String, sum: &Summary) {
    let n = sum.threads.len() + usize::from(sum.other_threads.ops > 0);
    let _ = writeln!(s, "\nthreads ({n})");
    let mut order: Vec<_> = sum.threads.iter().collect();
    order.sort_by_key(|(_, t)| std::cmp::Reverse(t.ops));
    for (tid, t) in order.iter().take(THREADS_SHOWN) {
        let _ = writeln!(
            s,
            "  {tid:>8}  {:>10} ops  {:>10}",
            t.ops,
            fmt_bytes(t.bytes)
        );
    }
    if order.len() > THREADS_SHOWN {
        let _ = writeln!(s, "  ... and {} more", order.len() - THREADS_SHOWN);
    }
}

fn in_flight(s: &mut String, sum: &Summary) {
    if sum.in_flight.iter().all(|v| *v == 0.0) {
        return;
    }
    let _ = writeln!(s, "\nops in flight over time (mean per tenth of the trace)");
    let cells: Vec<String> = sum.in_flight.iter().map(|v| format!("{v:.1}")).collect();
    let _ = writeln!(s, "  {}", cells.join("  "));
    let _ = SLICES;
}

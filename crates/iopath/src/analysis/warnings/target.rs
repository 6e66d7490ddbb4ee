//! What the target and the set-up are: options left out of a fio job,
//! holes (`sparse_target`, `unwritten_device_ranges`, `sparse_file`), caches
//! that could not be dropped, a buffered loop device, no block device, a
//! span smaller than the file.

use super::{is_read, some, Fact, Run};
use crate::result::TargetKind;

/// The fio job file's options left out (`--ignore-unknown`).
pub fn ignored_options(run: &Run<'_>) -> Option<Fact> {
    let options = &run.result.config.ignored_options;
    (!options.is_empty()).then(|| Fact::IgnoredOptions {
        options: options.clone(),
    })
}

/// Reads of holes that touch no device: `--sparse`; else a loop device
/// over a sparse backing file, not prefilled; else an existing file with
/// holes (the first that applies).
pub fn holes(run: &Run<'_>) -> Option<Fact> {
    let r = run.result;
    let t = r.target.as_ref()?;
    r.system.memory_available_bytes?;
    let whole = t.file_bytes.unwrap_or(t.size_bytes);
    if t.sparse {
        return Some(Fact::SparseTarget {});
    }
    if t.kind == TargetKind::BlockDevice
        && !t.prefilled
        && t.allocated_bytes.is_some_and(|a| a < whole)
    {
        let cases = run.cases(|c| is_read(&c.pattern));
        return Some(Fact::UnwrittenDeviceRanges {
            cases: some(cases)?,
            device: t.path.clone(),
            allocated_bytes: t.allocated_bytes.unwrap_or(0),
            file_bytes: whole,
        });
    }
    if !t.created
        && t.kind == TargetKind::File
        && t.allocated_bytes.is_some_and(|a| a < t.size_bytes)
    {
        return Some(Fact::SparseFile {
            path: t.path.clone(),
            allocated_bytes: t.allocated_bytes.unwrap_or(0),
            size_bytes: t.size_bytes,
        });
    }
    None
}

/// Cases whose `--drop-caches` was refused (the runner's note says so).
pub fn drop_caches_denied(run: &Run<'_>) -> Option<Fact> {
    let cases: Vec<usize> = run
        .result
        .cases
        .iter()
        .enumerate()
        .filter(|(_, c)| c.notes.iter().any(|n| n.contains("drop_caches")))
        .map(|(i, _)| i)
        .collect();
    Some(Fact::DropCachesDenied {
        cases: some(cases)?,
    })
}

/// Loop devices under the target that read their backing file through
/// the page cache.
pub fn loop_buffered(run: &Run<'_>) -> Option<Fact> {
    let stack = run.result.system.device_stack.as_ref()?;
    (!stack.buffered_loops.is_empty()).then(|| Fact::LoopBuffered {
        loops: stack.buffered_loops.clone(),
    })
}

/// A target with no block device under it, where some case did I/O.
pub fn no_block_device(run: &Run<'_>) -> Option<Fact> {
    let r = run.result;
    (r.target.is_some()
        && r.system.device.is_none()
        && run
            .measured
            .iter()
            .any(|(_, c)| c.method != iopath_io::Method::Null))
    .then_some(Fact::NoBlockDevice {})
}

/// Cases that address only the start of a longer file.
pub fn span_smaller_than_file(run: &Run<'_>) -> Option<Fact> {
    let t = run.result.target.as_ref()?;
    let file_bytes = t.file_bytes.filter(|&l| l > t.size_bytes)?;
    Some(Fact::SpanSmallerThanFile {
        span_bytes: t.size_bytes,
        file_bytes,
    })
}

/// `--latency-split` asked for and the tracepoints not used: the run's
/// reason, or a tracer that fell silent during it.
pub fn latency_split_fallback(run: &Run<'_>) -> Option<Fact> {
    let silent = || {
        run.measured
            .iter()
            .find_map(|(_, c)| c.summary.as_ref()?.latency_split?.fallback)
    };
    let reason = run.result.config.latency_split_fallback.or_else(silent)?;
    Some(Fact::LatencySplitFallback { reason })
}

//! Writes and how cases ran: compressible data, `--sync none` writes that
//! may stay in memory, depth capped at 1, RWF_DONTCACHE pages kept, and an
//! SQPOLL thread without a core of its own.

use super::{is_write, method_is, some, writes_may_stay_in_memory, Fact, Run};
use crate::model::Pattern;
use crate::result::warning::{CaseBytes, CaseDepth};
use crate::result::CaseResult;
use iopath_io::{Method, SyncPolicy};

/// A RWF_DONTCACHE write that left at least this much more of the file in
/// the page cache kept its pages.
pub const DONTCACHE_KEPT_BYTES: u64 = 4 << 20;

/// Written data other than random, on the cases that wrote.
pub fn compressible_data(run: &Run<'_>) -> Option<Fact> {
    let data = &run.result.config.data;
    if data == "random" {
        return None;
    }
    Some(Fact::CompressibleData {
        cases: some(run.cases(|c| is_write(&c.pattern)))?,
        data: data.clone(),
    })
}

/// Writes (and copies) with `--sync none` of methods whose writes may end
/// in memory.
pub fn sync_none(run: &Run<'_>) -> Option<Fact> {
    let cases = run.cases(|c| {
        (is_write(&c.pattern) || c.pattern == Pattern::Copy)
            && c.sync == SyncPolicy::None
            && c.sync_every.is_none()
            && writes_may_stay_in_memory(&c.method)
    });
    Some(Fact::SyncNone {
        cases: some(cases)?,
    })
}

/// Cases that ran at a smaller depth than asked (synchronous methods).
pub fn depth_capped(run: &Run<'_>) -> Option<Fact> {
    let cases: Vec<CaseDepth> = run
        .measured
        .iter()
        // A replay's synchronous methods issue one op at a time by
        // design: the trace's threads are its parallelism.
        .filter(|(_, c)| c.queue_depth < c.queue_depth_requested && c.pattern != Pattern::Replay)
        .map(|&(case, c)| CaseDepth {
            case,
            queue_depth: c.queue_depth,
            queue_depth_requested: c.queue_depth_requested,
        })
        .collect();
    Some(Fact::DepthCapped {
        cases: some(cases)?,
    })
}

/// The page cache a case's writes left behind: its median repetition's
/// cached bytes over those before it.
fn kept(c: &CaseResult) -> u64 {
    c.summary.as_ref().map_or(0, |s| {
        s.memory
            .page_cache_bytes
            .saturating_sub(s.memory.page_cache_before_bytes)
    })
}

/// RWF_DONTCACHE writes whose pages stayed (measured on ext4, Linux 6.18:
/// overwrites keep them, allocating writes do not; docs/methods.md).
pub fn dontcache_pages_kept(run: &Run<'_>) -> Option<Fact> {
    let cases: Vec<CaseBytes> = run
        .measured
        .iter()
        .filter(|(_, c)| {
            (method_is(c, Method::Dontcache) || method_is(c, Method::UringDontcache))
                && is_write(&c.pattern)
        })
        .map(|&(case, c)| CaseBytes {
            case,
            bytes: kept(c),
        })
        .filter(|k| k.bytes >= DONTCACHE_KEPT_BYTES)
        .collect();
    Some(Fact::DontcachePagesKept {
        cases: some(cases)?,
    })
}

/// SQPOLL cases whose workers and kernel thread need more cores than the
/// machine has to spare.
pub fn sqpoll_shares_core(run: &Run<'_>) -> Option<Fact> {
    let cpus = run.result.system.cpus;
    let cases =
        run.cases(|c| method_is(c, Method::UringSqpoll) && (c.threads as usize) + 1 >= cpus);
    Some(Fact::SqpollSharesCore {
        cases: some(cases)?,
        cpus,
    })
}

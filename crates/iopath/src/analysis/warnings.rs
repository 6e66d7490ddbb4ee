//! Warnings: what in a result may not be what it seems. Computed from the
//! result alone (pure functions), each rule its own function returning its
//! [`Fact`] (the numbers it rests on, the cases by index) or nothing;
//! `report::text::warnings` words them under the tables and in JSON
//! `warnings[]`, each with a stable `code`.

use crate::model::{CacheState, Pattern};
use crate::result::{CaseResult, MethodName, RunResult};

pub use crate::result::records::Warning;
pub use crate::result::warning::{
    AmplificationCause, CaseBytes, CaseDepth, CaseFraction, CaseStarved, Fact, Scope,
};

pub mod memory;
pub mod starved;
pub mod target;
pub mod traffic;
pub mod writes;

#[cfg(test)]
mod tests;

/// A run as the rules read it: the result, and its measured cases with
/// their index in `cases`.
#[derive(Debug)]
pub struct Run<'a> {
    pub result: &'a RunResult,
    pub measured: Vec<(usize, &'a CaseResult)>,
}

impl<'a> Run<'a> {
    pub fn of(result: &'a RunResult) -> Self {
        let measured = result
            .cases
            .iter()
            .enumerate()
            .filter(|(_, c)| c.summary.is_some())
            .collect();
        Run { result, measured }
    }

    /// A case's cache state: its own (presets) wins over the run's.
    pub fn cache_of(&self, c: &CaseResult) -> CacheState {
        c.cache.unwrap_or(self.result.config.cache)
    }

    /// True when every measured case started from a cold cache.
    pub fn all_cold(&self) -> bool {
        self.measured
            .iter()
            .all(|(_, c)| self.cache_of(c) == CacheState::Cold)
    }

    /// The indexes of the measured cases that `keep` keeps, in order.
    pub fn cases(&self, keep: impl Fn(&CaseResult) -> bool) -> Vec<usize> {
        self.measured
            .iter()
            .filter(|(_, c)| keep(c))
            .map(|&(i, _)| i)
            .collect()
    }
}

/// `Some(cases)` when there are some.
fn some<T>(cases: Vec<T>) -> Option<Vec<T>> {
    (!cases.is_empty()).then_some(cases)
}

/// Methods that keep pages in a cache (the kernel's or their own) and so
/// serve re-reads from memory and read whole pages for small requests.
/// `threadpool` and `tokio` are `pread`/`pwrite` through the page cache, as
/// `buffered`. Classified by the method a result's name reads back to, so
/// `mmap+random` is `mmap` here (a hint changes read-ahead, not whether
/// pages are cached).
fn is_cached_method(m: &MethodName) -> bool {
    use iopath_io::Method as M;
    matches!(
        m.base(),
        Some(
            M::Buffered
                | M::Mmap
                | M::UringBuffered
                | M::Ucache
                | M::Uffd
                | M::UffdWp
                | M::Threadpool
                | M::Tokio
        )
    )
}

/// A case of a user-space cache ([`iopath_io::Method::is_user_space_cache`]).
fn is_user_space_cache(c: &CaseResult) -> bool {
    c.method
        .base()
        .is_some_and(iopath_io::Method::is_user_space_cache)
}

/// Methods whose reads go through the page cache, read-ahead included,
/// whether or not they keep the pages: the cached methods, and `dontcache`
/// and `uring-dontcache` (`RWF_DONTCACHE` drops the pages once read, but
/// reads them, read-ahead and all, as `buffered` does).
fn reads_through_page_cache(m: &MethodName) -> bool {
    use iopath_io::Method as M;
    is_cached_method(m) || matches!(m.base(), Some(M::Dontcache | M::UringDontcache))
}

/// Methods whose writes, with `--sync none`, may end in memory (the page
/// cache, their own cache, or the CPU cache for `mmap-dax`) rather than on
/// the device. `dontcache` starts write-back of its pages but does not wait
/// for it. O_DIRECT methods (`direct`, `uring*` but `uring-buffered` and
/// `uring-dontcache`, `aio`) hand their writes to the device, and `null`
/// writes nothing.
fn writes_may_stay_in_memory(m: &MethodName) -> bool {
    reads_through_page_cache(m) || m.base() == Some(iopath_io::Method::MmapDax)
}

/// The method of a result's case, its hint left aside.
fn method_is(c: &CaseResult, m: iopath_io::Method) -> bool {
    c.method.base() == Some(m)
}

/// Patterns with reads, whose device fraction is about reads.
fn is_read(p: &Pattern) -> bool {
    matches!(p, Pattern::Read | Pattern::RandRead | Pattern::RandRw)
}

fn is_write(p: &Pattern) -> bool {
    matches!(p, Pattern::Write | Pattern::RandWrite | Pattern::RandRw)
}

/// A rule: the fact it finds in a run, if any.
type Rule = fn(&Run<'_>) -> Option<Fact>;

/// Every rule, in the order their warnings are listed.
const RULES: &[Rule] = &[
    target::ignored_options,
    memory::file_fits_in_memory,
    target::holes,
    target::drop_caches_denied,
    target::loop_buffered,
    writes::compressible_data,
    target::no_block_device,
    memory::low_device_fraction,
    traffic::read_amplification,
    traffic::other_disk_traffic,
    target::latency_split_fallback,
    writes::sync_none,
    writes::depth_capped,
    target::span_smaller_than_file,
    writes::dontcache_pages_kept,
    writes::sqpoll_shares_core,
    starved::cpu_starved,
];

/// The facts of every warning that applies to `r`, in order.
pub fn facts(r: &RunResult) -> Vec<Fact> {
    let run = Run::of(r);
    RULES.iter().filter_map(|rule| rule(&run)).collect()
}

/// Every warning that applies to `r`, its words not yet written
/// (`report::text::warnings::word` writes them).
pub fn collect(r: &RunResult) -> Vec<Warning> {
    facts(r).into_iter().map(Warning::of).collect()
}

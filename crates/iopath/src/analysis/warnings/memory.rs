//! Reads served from memory: `file_fits_in_memory` (the file fits in the
//! page cache these cached reads had) and `low_device_fraction` (the device
//! served too little of a cold read).

use super::{is_cached_method, is_read, is_user_space_cache, some, Fact, Run};
use crate::model::{CacheState, Pattern};
use crate::result::warning::CaseFraction;
use crate::result::{CaseResult, MethodName, RunResult};

/// A cold read case whose device served less than this share of the bytes
/// it asked for got the rest from memory.
pub const LOW_DEVICE_FRACTION: f64 = 0.9;

/// Up to this device share (from [`LOW_DEVICE_FRACTION`]) the device did a
/// cold read's work; past it, read-ahead hides how much memory served.
pub const DEVICE_SERVED_FRACTION: f64 = 1.1;

/// A cold read that left at least 1/this of its range cached may have
/// re-read some of it from memory.
pub const CACHED_RANGE_DIVISOR: u64 = 10;

/// The suggested `--cache-limit` holds 1/this of the file (whole MiB, at
/// least one).
pub const SUGGESTED_LIMIT_DIVISOR: u64 = 4;

/// Which cases ran inside the `--cache-limit` cgroup: what the case
/// records (`cache_limited: false` outside it); for results that do not
/// record it, every case of a run from flags, and in a built-in preset the
/// cases it marks `cache_limited` (matched by label and method); none
/// without a cache limit, or in a preset this version does not know.
fn cache_limited(r: &RunResult) -> impl Fn(&CaseResult) -> bool {
    let limited: Option<Vec<(Option<String>, MethodName)>> =
        match (&r.config.cache_limit, &r.config.preset) {
            (None, _) => Some(Vec::new()),
            (Some(_), None) => None,
            (Some(_), Some(name)) => Some(
                crate::import::preset::find(name)
                    .map(|p| {
                        p.job
                            .cases
                            .iter()
                            .filter(|pc| pc.cache_limited)
                            .flat_map(|pc| {
                                pc.method
                                    .iter()
                                    .flat_map(|l| l.0.iter())
                                    .map(|m| (pc.label.clone(), m.name().into()))
                                    .collect::<Vec<_>>()
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
        };
    let any = r.config.cache_limit.is_some();
    move |c: &CaseResult| match (&limited, c.cache_limited) {
        (_, Some(recorded)) => any && recorded,
        (None, None) => true,
        // A preset that marks no case runs every case under the limit.
        (Some(v), None) => v.is_empty() || v.iter().any(|(l, m)| *l == c.label && *m == c.method),
    }
}

/// From a cold cache a read can find in memory only what the repetition
/// itself brought in. The device's share says how much: under
/// [`LOW_DEVICE_FRACTION`] of what was asked, a tenth or more came from
/// memory; up to [`DEVICE_SERVED_FRACTION`], the device did the work (a
/// 150 ms random read of a 1 GiB file). Read-ahead past that hides it
/// (pages read, maybe never used): then, as without device counters,
/// listed when the case left a tenth of its range cached.
fn cold_read_found_memory(c: &CaseResult, file_bytes: u64) -> bool {
    c.summary.as_ref().is_some_and(|s| {
        let range = c.span_bytes.unwrap_or(file_bytes).min(file_bytes);
        let cached = s.memory.page_cache_bytes * CACHED_RANGE_DIVISOR >= range;
        match s.device_fraction {
            Some(f) if f < LOW_DEVICE_FRACTION => true,
            Some(f) if f <= DEVICE_SERVED_FRACTION => false,
            _ => cached,
        }
    })
}

/// The file fits in the memory available, and cached methods read it.
pub fn file_fits_in_memory(run: &Run<'_>) -> Option<Fact> {
    let r = run.result;
    let (t, avail) = (r.target.as_ref()?, r.system.memory_available_bytes?);
    if t.size_bytes > avail {
        return None;
    }
    // Cases held under a cap smaller than the file did not have the
    // memory to hold it, however much the machine had.
    let limited = cache_limited(r);
    let capped = |c: &CaseResult| {
        r.config
            .cache_limit
            .as_ref()
            .is_some_and(|l| l.limit_bytes < t.size_bytes)
            && limited(c)
    };
    // A cold sequential pass reads each page once: nothing in it is re-read
    // from memory, however much memory there is.
    let one_cold_pass = |c: &CaseResult| {
        c.pattern == Pattern::Read
            && run.cache_of(c) == CacheState::Cold
            && c.measured().iter().all(|m| m.io_bytes <= t.size_bytes)
    };
    let cases = run.cases(|c| {
        is_cached_method(&c.method)
            && is_read(&c.pattern)
            // ucache, uffd, uffd-wp read with O_DIRECT into a cache of their
            // own, of --ucache-size: the page cache and the machine's memory
            // do not enter into it.
            && !is_user_space_cache(c)
            && !capped(c)
            && !one_cold_pass(c)
            && (run.cache_of(c) != CacheState::Cold || cold_read_found_memory(c, t.size_bytes))
    });
    Some(Fact::FileFitsInMemory {
        cases: some(cases)?,
        file_bytes: t.size_bytes,
        memory_available_bytes: avail,
        cold: run.all_cold(),
        suggested_cache_limit_bytes: ((t.size_bytes / SUGGESTED_LIMIT_DIVISOR) >> 20 << 20)
            .max(1 << 20),
    })
}

/// Cold read cases whose device served less than [`LOW_DEVICE_FRACTION`]
/// of what they asked.
pub fn low_device_fraction(run: &Run<'_>) -> Option<Fact> {
    let cases: Vec<CaseFraction> = run
        .measured
        .iter()
        .filter(|(_, c)| is_read(&c.pattern) && run.cache_of(c) == CacheState::Cold)
        .filter_map(|&(case, c)| {
            let fraction = c.summary.as_ref()?.device_fraction?;
            (fraction < LOW_DEVICE_FRACTION).then_some(CaseFraction { case, fraction })
        })
        .collect();
    Some(Fact::LowDeviceFraction {
        cases: some(cases)?,
    })
}

//! The device apart from memory: what served each measured case
//! ([`Served`]), from figures iopath already measures, so that a verdict
//! ranks like with like.
//!
//! - A read (`read`, `randread`, `randrw`: its device fraction is about
//!   reads) whose device moved less than [`MEMORY_SERVED_FRACTION`] of what
//!   it asked, by the system's counters or by the process's own device
//!   reads (`/proc/self/io`, which other traffic does not enter), got most
//!   of its bytes from memory: `memory`. With a cold cache (or one left as
//!   it was) that is not what was asked, and the case is set apart; with a
//!   warm cache (`--cache warm`, or the case's own) it is: ranked as any.
//! - A write (`write`, `randwrite`; `--sync end` or `none`) through the
//!   page cache (buffered, mmap, uring-buffered, the thread pools,
//!   dontcache alike) whose device moved less than
//!   [`ABSORBED_DEVICE_FRACTION`] of what it wrote, or, with its flush not
//!   timed (`--sync none`) and the pages left dirty (not dontcache, which
//!   starts write-back as it writes), whose every measured repetition
//!   stayed under the dirty limit (the `--cache-limit` cgroup's where it ran in one, as
//!   [`super::dirty`] reads it), was absorbed by the page cache:
//!   `absorbed`, set apart, with its burst speed and the device's behind
//!   it (the fastest write of its job the device served). With
//!   `--sync end` the flush is timed, and a device that moved at least
//!   half of the bytes served the write: `device`.
//!   A cache state is about what reads find: it does not change this.
//! - Any other case with device counters: `device`. Without them (no block
//!   device under the target), nothing is said of a read; on tmpfs the
//!   file is memory, and nothing is said at all.

use super::{dirty, is_reference, Verdict};
use crate::model::{CacheState, Pattern};
use crate::result::served::{is_set_apart, Absorbed, Apart, DeviceRate, Served};
use crate::result::verdict_facts::{ApartMethod, VerdictFact};
use crate::result::{CaseResult, Measurement, RunResult};
use iopath_io::SyncPolicy;

/// A read whose device moved less than half of what it asked got most of
/// it from memory: its speed is memory's more than the device's. The
/// one-screen caveat calls the same reads "mostly from memory"; between
/// this and the `low_device_fraction` warning's 90% a read stays ranked,
/// with that caveat ("partly").
pub const MEMORY_SERVED_FRACTION: f64 = 0.5;

/// A write whose device moved less than half of what it wrote left most of
/// it in memory (`--sync none`, or overwrites of the same pages that
/// write-back wrote once), whatever the dirty limit.
pub const ABSORBED_DEVICE_FRACTION: f64 = 0.5;

/// Fill `cases[].served` of `r` ([`classify`]).
pub fn mark(r: &mut RunResult) {
    let served = classify(r);
    for (c, s) in r.cases.iter_mut().zip(served) {
        c.served = s;
    }
}

/// What served each case of `r`, in order (see the module's docs).
pub fn classify(r: &RunResult) -> Vec<Option<Served>> {
    if dirty::in_memory(r) {
        return vec![None; r.cases.len()];
    }
    let mut out: Vec<Option<Served>> = r.cases.iter().map(|c| of_case(r, c)).collect();
    let rates: Vec<Option<DeviceRate>> = (0..out.len())
        .map(|i| match out[i] {
            Some(Served::Absorbed(_)) => device_rate(&r.cases, &out, i),
            _ => None,
        })
        .collect();
    for (s, rate) in out.iter_mut().zip(rates) {
        if let Some(Served::Absorbed(a)) = s {
            a.device = rate;
        }
    }
    out
}

/// What served `c`, from its figures.
fn of_case(r: &RunResult, c: &CaseResult) -> Option<Served> {
    if c.skipped.is_some() || c.error.is_some() || is_reference(&c.method) {
        return None;
    }
    let s = c.summary.as_ref()?;
    match c.pattern {
        Pattern::Read | Pattern::RandRead | Pattern::RandRw => read(r, c, s),
        Pattern::Write | Pattern::RandWrite => write(r, c, s),
        // A replay is the program's own mix: what served it is its own.
        Pattern::Copy | Pattern::Replay => None,
    }
}

/// A read: `memory` when the device (or the process's own device reads)
/// moved less than [`MEMORY_SERVED_FRACTION`] of it.
fn read(r: &RunResult, c: &CaseResult, s: &Measurement) -> Option<Served> {
    let device_fraction = s.device_fraction?;
    let own_fraction = s
        .process_io
        .filter(|_| s.read_bytes > 0)
        .map(|p| p.read_bytes as f64 / s.read_bytes as f64);
    let least = own_fraction.map_or(device_fraction, |o| o.min(device_fraction));
    if least >= MEMORY_SERVED_FRACTION {
        return Some(Served::Device {
            device_fraction: Some(device_fraction),
        });
    }
    Some(Served::Memory {
        device_fraction,
        own_fraction,
        asked: c.cache.unwrap_or(r.config.cache) == CacheState::Warm,
        // Over an explicit span, reads past its size are the workload's own
        // reuse of a hot set (the glommio preset's question), not pages
        // left behind by someone else.
        rereads: c.span_bytes.is_some_and(|span| s.read_bytes > span),
    })
}

/// A write by a page-cache writer: `absorbed` when the device moved less
/// than [`ABSORBED_DEVICE_FRACTION`] of it, or, its flush not timed
/// (`--sync none`, a fio job without `end_fsync`), when it stayed under the
/// dirty limit. With `--sync end` the flush is in the timed interval: a
/// device that moved most of the bytes served the write.
fn write(r: &RunResult, c: &CaseResult, s: &Measurement) -> Option<Served> {
    let device_fraction = s.device_fraction;
    let device = device_fraction.map(|f| Served::Device {
        device_fraction: Some(f),
    });
    // O_SYNC/O_DSYNC and fsync-per-write wait for the device on every write.
    if !matches!(c.sync, SyncPolicy::End | SyncPolicy::None) || !may_keep_writes(c) {
        return device;
    }
    let written = c
        .measured()
        .iter()
        .map(|m| m.write_bytes)
        .max()
        .unwrap_or(0)
        .max(s.write_bytes);
    let limit = dirty::limit_of(r, c).filter(|&l| l > 0);
    let under = limit.is_some_and(|l| written <= l);
    let little = device_fraction.is_some_and(|f| f < ABSORBED_DEVICE_FRACTION);
    // With the flush timed (`--sync end`) the device's share says who
    // served the write: staying under the dirty limit is not enough.
    // A sync every N writes (`--sync-every`) is timed too.
    let absorbed = match c.sync {
        SyncPolicy::End => little,
        _ if c.sync_every.is_some() => little,
        // dontcache starts write-back as it writes: what the device moved
        // in the timed interval says who served it, not the dirty limit
        // (measured: the device moved all of a 1 GiB write, 3 of 3).
        _ if !dirty::through_page_cache(&c.method) => little,
        _ => under || little,
    };
    if !absorbed {
        return device;
    }
    Some(Served::Absorbed(Absorbed {
        burst_bytes_per_s: s.bw_bytes_per_s,
        written_bytes: written,
        limit_bytes: limit.filter(|_| under),
        device_fraction,
        device: None,
    }))
}

/// Methods whose writes may stay in memory for a while: the page-cache
/// writers, and `dontcache` (it starts write-back, it does not wait).
fn may_keep_writes(c: &CaseResult) -> bool {
    use iopath_io::Method as M;
    dirty::through_page_cache(&c.method)
        || matches!(c.method.base(), Some(M::Dontcache | M::UringDontcache))
}

/// The device's speed behind the absorbed case `i`: the fastest case of
/// its job the device served.
fn device_rate(cases: &[CaseResult], served: &[Option<Served>], i: usize) -> Option<DeviceRate> {
    let key = cases[i].job_key();
    cases
        .iter()
        .zip(served)
        .filter(|(c, s)| matches!(s, Some(Served::Device { .. })) && c.job_key() == key)
        .filter_map(|(c, _)| Some((c, c.summary.as_ref()?.bw_bytes_per_s)))
        .filter(|&(_, bw)| bw > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, bw)| DeviceRate {
            method: c.method.clone(),
            bytes_per_s: bw,
        })
}

/// The group's cases set apart, named as the verdict names them
/// (`name_of`), fastest first.
pub(super) fn apart(group: &[&CaseResult], name_of: &dyn Fn(&CaseResult) -> String) -> Vec<Apart> {
    let mut out: Vec<Apart> = group
        .iter()
        .filter(|c| is_set_apart(c))
        .filter_map(|c| {
            Some(Apart {
                method: name_of(c).into(),
                bw_bytes_per_s: c.summary.as_ref()?.bw_bytes_per_s,
                served: c.served.clone()?,
            })
        })
        .collect();
    out.sort_by(|a, b| b.bw_bytes_per_s.total_cmp(&a.bw_bytes_per_s));
    out
}

/// The verdict's facts about the cases it set apart: those served from
/// memory, those whose writes the page cache absorbed.
pub(super) fn facts(v: &Verdict) -> Vec<VerdictFact> {
    let method = |a: &Apart, device_fraction: Option<f64>| ApartMethod {
        method: a.method.clone(),
        bw_bytes_per_s: a.bw_bytes_per_s,
        device_fraction,
    };
    let memory: Vec<ApartMethod> = v
        .set_apart
        .iter()
        .filter_map(|a| match &a.served {
            Served::Memory {
                device_fraction, ..
            } => Some(method(a, Some(*device_fraction))),
            _ => None,
        })
        .collect();
    let absorbed: Vec<(&Apart, &Absorbed)> = v
        .set_apart
        .iter()
        .filter_map(|a| match &a.served {
            Served::Absorbed(b) => Some((a, b)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    if !memory.is_empty() {
        out.push(VerdictFact::ServedFromMemory { methods: memory });
    }
    if !absorbed.is_empty() {
        let limit = absorbed.iter().filter_map(|(_, b)| b.limit_bytes).max();
        out.push(VerdictFact::AbsorbedByPageCache {
            methods: absorbed
                .iter()
                .map(|(a, b)| method(a, b.device_fraction))
                .collect(),
            limit_bytes: limit,
            device: absorbed.iter().find_map(|(_, b)| b.device.clone()),
            suggested_size_bytes: limit.map(|l| l.saturating_add(l / 4).next_power_of_two()),
        });
    }
    out
}

#[cfg(test)]
#[path = "served_tests.rs"]
mod tests;

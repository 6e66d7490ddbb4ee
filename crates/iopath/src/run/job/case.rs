//! A case before its first repetition: its result, skipped already when
//! it cannot run here (its method unusable, O_DIRECT misaligned, or a
//! `--cache-limit` too small for what it holds).

use iopath_io::Method;

use super::Shared;
use crate::plan::{Case, Pattern};
use crate::result::facts::CaseNote;
use crate::result::skip::Skip;
use crate::result::CaseResult;
use crate::run::target::Target;
use crate::run::{case_result, Runner};

impl Runner<'_> {
    /// A case's result before its first repetition, skipped already when
    /// it cannot run (its method unusable here, or a cache limit too small
    /// for its own memory).
    pub(in crate::run) fn prepare_case(&self, case: &Case, sh: &Shared<'_>) -> CaseResult {
        let mut cr = case_result(case);
        if let (Some(span), Some(t)) = (case.span, sh.target) {
            // What the case really addressed: capped at the file, and for
            // requests whole blocks of it (a copy copies the bytes).
            let capped = span.min(t.size());
            cr.span_bytes = Some(if case.pattern == Pattern::Copy {
                capped
            } else {
                capped / case.block_size * case.block_size
            });
            if capped < span {
                cr.facts.push(CaseNote::SpanCapped {
                    span_bytes: span,
                    file_bytes: capped,
                });
            }
        }
        if let Some(why) = self.over_cache_limit(case, sh) {
            cr.skip = Some(why);
            return cr;
        }
        let status = sh.probes.iter().find(|p| p.method == case.method);
        if let Some(reason) = status.and_then(|s| s.unusable.clone()) {
            cr.skip = Some(reason);
            return cr;
        }
        if let Some(why) = sh
            .target
            .and_then(|t| crate::run::prepare::misaligned(case, t))
        {
            cr.skip = Some(why);
            return cr;
        }
        if let Some(s) = status {
            cr.facts.extend(
                s.notes
                    .iter()
                    .filter(|n| n.contains("tmpfs"))
                    .map(|n| CaseNote::Engine { text: n.clone() }),
            );
        }
        cr
    }

    /// Why `case` cannot run under `--cache-limit`, when it cannot: under
    /// the cap, the process's own memory (thread stacks, I/O buffers,
    /// iopath itself) is charged too, and a cap that cannot hold it would
    /// have the kernel kill iopath mid-run, so such a case is skipped with
    /// the reason instead.
    fn over_cache_limit(&self, case: &Case, sh: &Shared<'_>) -> Option<Skip> {
        let plan = self.plan;
        // Every stream's workers at once.
        let depth = |w: &Case| {
            if case.method.is_async() {
                u64::from(w.queue_depth_requested.max(1))
            } else {
                1
            }
        };
        let threads: u64 = case
            .workloads()
            .iter()
            .map(|w| u64::from(w.threads.max(1)))
            .sum();
        let buffers: u64 = case
            .workloads()
            .iter()
            .map(|w| u64::from(w.threads.max(1)) * depth(w) * w.block_size * 2)
            .sum();
        // The user-space caches are memory the process holds, and
        // without swap the kernel cannot take it back: count them.
        let span = sh.target.map_or(0, |t| t.size());
        let caches = match case.method {
            Method::Ucache => plan.ucache_size,
            // uffd: one region per file, its page tables and books.
            Method::Uffd | Method::UffdWp => plan.ucache_size + span / 512,
            _ => 0,
        };
        // On a file system in memory (tmpfs, ramfs) the pages a case adds
        // to a file are memory the cap cannot reclaim (no swap to push
        // them to): the copy's destination, the holes a write fills in a
        // sparse file. Under a cap too small for them the kernel's OOM
        // killer takes iopath (SIGKILL: no message, the case in flight
        // lost): skipped instead, like the case's own memory.
        let in_memory = sh
            .target
            .map_or(0, |t| new_pages_in_memory(t, case, memory_fs(t.place())));
        let own = buffers + threads * (2 << 20) + caches + (24 << 20);
        let l = sh
            .limit
            .as_ref()
            .filter(|l| case.cache_limited && l.limit < own + in_memory)?;
        Some(if in_memory > 0 {
            Skip::CacheLimitInMemory {
                limit_bytes: l.limit,
                new_bytes: in_memory,
                copy: case.pattern == Pattern::Copy,
                fs: sh
                    .target
                    .and_then(|t| iopath_io::sys::fs_type_of(t.place()).ok())
                    .unwrap_or("tmpfs")
                    .to_string(),
                own_bytes: own,
            }
        } else {
            Skip::CacheLimitOwn {
                limit_bytes: l.limit,
                own_bytes: own,
                threads: threads as u32,
                cache: caches > 0,
            }
        })
    }
}

/// True when the file system of `at` keeps its files in memory (tmpfs,
/// ramfs): their pages are charged to the memory cgroup of whoever adds
/// them, and without swap never reclaimed.
fn memory_fs(at: &std::path::Path) -> bool {
    matches!(iopath_io::sys::fs_type_of(at), Ok("tmpfs" | "ramfs"))
}

/// Bytes of new pages `case` adds to files beside or in the target when
/// they are in memory (`in_memory`): the copy's destination (the bytes
/// copied), or for writes to a sparse file the span they may fill. 0 on a
/// disk, and for writes over a prefilled file (its pages exist already).
pub fn new_pages_in_memory(t: &Target, case: &Case, in_memory: bool) -> u64 {
    if !in_memory || t.info.kind == crate::result::TargetKind::BlockDevice {
        return 0;
    }
    let span = case.span.map_or(t.size(), |s| s.min(t.size()));
    let adds = case.pattern == Pattern::Copy || (case.writes() && (t.info.sparse || case.sparse));
    if adds {
        span
    } else {
        0
    }
}

//! A case's notes on how it used its time: what `--case-timeout` did to
//! it, and how a sequential case used its time limit (wrapped around its
//! range, or one pass short of the limit).

use crate::plan::{CacheState, Case, Pattern};
use crate::result::facts::{CaseNote, Keeper, PassNote};
use crate::result::CaseResult;

/// What `--case-timeout` did to a case, for its notes: a repetition cut
/// part-way (the share done, the whole repetition extrapolated), or
/// repetitions not started because they would not have fit.
pub(super) fn timeout_note(cr: &CaseResult, plan: &crate::plan::Plan) -> CaseNote {
    let case_timeout_ns = plan.case_timeout.map(|d| d.as_nanos() as u64);
    let measured = cr.repetitions.iter().filter(|m| !m.warmup).count() as u32;
    match cr
        .repetitions
        .iter()
        .rev()
        .find_map(|m| m.capped.map(|c| (m, c)))
    {
        Some((m, c)) => CaseNote::TimeoutCut {
            case_timeout_ns,
            repetition: measured,
            fraction_done: c.fraction_done,
            duration_ns: m.duration_ns,
            // A flush worth naming: 10 ms and 1% of the time, or more.
            flush_ns: c
                .flush_ns
                .filter(|&f| f >= 10_000_000 && f * 100 >= m.duration_ns),
            extrapolated_ns: c.extrapolated_ns,
        },
        None => CaseNote::TimeoutStopped {
            case_timeout_ns,
            repetitions: measured,
            asked: plan.repeat,
        },
    }
}

/// How a sequential case used its time limit ([`Passes`]): wrapped around
/// its range (a method that does not cache), or stopped after one pass short
/// of the limit (a caching method). `None` when neither says anything: no
/// time limit, a byte count, a random pattern, or a pass that the limit cut.
/// Under MPI `cr` sums every rank's bytes: one pass is every rank's part
/// ([`RankFiles`]).
pub(super) fn passes_of(
    cr: &CaseResult,
    case: &Case,
    plan: &crate::plan::Plan,
    file_size: u64,
    ranks: RankFiles,
) -> Option<crate::result::Passes> {
    use crate::result::{PassKind, Passes};
    let limit = plan.case_time_limit(case)?;
    let sequential = !case.pattern.is_random() && case.pattern != Pattern::Copy;
    if !sequential || case.io_size.or(plan.io_size).is_some() {
        return None;
    }
    let threads = u64::from(case.threads.max(1));
    let span =
        case.span.map_or(file_size, |s| s.min(file_size)) / case.block_size * case.block_size;
    let bs = case.block_size.max(1);
    let pass = ranks.rank_span(span, bs) / threads / bs * bs * threads * ranks.ranks;
    let s = cr.summary.as_ref().filter(|_| pass > 0)?;
    let passes = s.io_bytes as f64 / pass as f64;
    if plan.wraps(case) {
        return (passes > 1.0).then_some(Passes {
            kind: PassKind::Wrapped,
            passes,
            suggested_size_bytes: None,
        });
    }
    let limit_ns = limit.as_nanos() as f64;
    if !crate::model::method_caches(case.method)
        || passes < 0.99
        || s.duration_ns as f64 >= 0.9 * limit_ns
        || s.duration_ns == 0
    {
        return None;
    }
    // One pass lasting the limit at this speed, as a power of two.
    let want = (pass as f64 * limit_ns / s.duration_ns as f64) as u64;
    Some(Passes {
        kind: PassKind::OnePass,
        passes,
        suggested_size_bytes: Some(want.max(pass * 2).next_power_of_two()),
    })
}

/// Bytes of one whole repetition of `case` without a time limit
/// ([`CaseResult::pass_bytes`]): its byte count (a preset's `touch`,
/// `--io-size`), else one pass over its range, each thread's part whole
/// blocks; under MPI, every rank's together ([`RankFiles`]). `None` for a
/// copy.
pub(super) fn pass_bytes(
    case: &Case,
    plan: &crate::plan::Plan,
    file_size: u64,
    ranks: RankFiles,
) -> Option<u64> {
    if case.pattern == Pattern::Copy {
        return None;
    }
    let threads = u64::from(case.threads.max(1));
    let bs = case.block_size.max(1);
    // As the workers share it: each thread's budget at least one block,
    // spent in whole blocks.
    let shared = |total: u64| (total / threads).max(bs).div_ceil(bs) * bs * threads;
    if let Some(total) = case.io_size.or(plan.io_size) {
        // Every rank moves its own byte count, whatever the layout.
        return Some(shared(total) * ranks.ranks);
    }
    let span = case.span.map_or(file_size, |s| s.min(file_size)) / bs * bs;
    // What one rank addresses, rounded as its workers round it.
    let span = ranks.rank_span(span, bs);
    Some(
        if case.pattern.is_random() {
            shared(span)
        } else {
            span / threads / bs * bs * threads
        } * ranks.ranks,
    )
}

/// The ranks of a run and how many of them share one file, for what one
/// pass of a case means when their bytes are summed: with per-rank files
/// every rank's file is a pass of its own; with a shared layout the ranks
/// together make one pass over the one file. One process: 1 and 1.
#[derive(Debug, Clone, Copy)]
pub(super) struct RankFiles {
    pub ranks: u64,
    pub sharing: u64,
}

impl RankFiles {
    #[cfg(test)]
    pub const ALONE: RankFiles = RankFiles {
        ranks: 1,
        sharing: 1,
    };

    /// The range one rank addresses of a case's `span`: with a shared
    /// layout its part of the one file, rounded to whole blocks as
    /// `Ranks::segment` rounds it; else all of its own file.
    fn rank_span(self, span: u64, bs: u64) -> u64 {
        if self.sharing > 1 {
            span / bs / self.sharing * bs
        } else {
            span
        }
    }
}

/// What keeps a caching method's pages, for why its sequential case stops
/// after one pass.
fn keeper(m: iopath_io::Method) -> Keeper {
    use iopath_io::Method as M;
    match m {
        // RWF_DONTCACHE drops a page once its I/O is done, but not one
        // that was cached before, and on ext4 not an overwrite's
        // (warning dontcache_pages_kept).
        M::Dontcache | M::UringDontcache => Keeper::DropsAfter,
        M::Ucache | M::Uffd | M::UffdWp => Keeper::OwnCache,
        _ => Keeper::PageCache,
    }
}

/// The fact for the table's notes: how the case used its time limit.
pub(super) fn passes_note(
    p: &crate::result::Passes,
    cr: &CaseResult,
    case: &Case,
    plan: &crate::plan::Plan,
) -> Option<CaseNote> {
    use crate::result::PassKind;
    let limit = plan.case_time_limit(case)?;
    let s = cr.summary.as_ref()?;
    let kind = match p.kind {
        // The file itself: the device's blocks, or on tmpfs its memory.
        PassKind::Wrapped if !crate::model::method_caches(case.method) => PassNote::WrappedUncached,
        // A caching method started over from a warm cache: memory is what
        // was asked for.
        PassKind::Wrapped
            if case.until.is_none() && case.cache.unwrap_or(plan.cache) == CacheState::Warm =>
        {
            PassNote::WrappedWarm
        }
        // A caching method started over because its case asked for it
        // (`until = "time"`, fio's `time_based`).
        PassKind::Wrapped => PassNote::WrappedAsAsked,
        PassKind::OnePass => PassNote::OnePass,
    };
    Some(CaseNote::Passes {
        kind,
        limit_ns: limit.as_nanos() as u64,
        passes: p.passes,
        method: cr.method.clone(),
        keeps: keeper(case.method),
        writes: cr.pattern == crate::model::Pattern::Write,
        duration_ns: s.duration_ns,
        suggested_size_bytes: p.suggested_size_bytes,
    })
}

/// `--sqpoll-cpu` with a method that has no SQPOLL thread: a note.
pub(super) fn sqpoll_facts(case: &Case) -> Vec<CaseNote> {
    let mut facts = Vec::new();
    if case.placement.sqpoll_cpu.is_some() && case.method != iopath_io::Method::UringSqpoll {
        facts.push(CaseNote::SqpollCpuUnused {
            method: case.method.name().into(),
        });
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_io::Method;

    /// Issue 18 (output): RWF_DONTCACHE drops pages after the I/O; the
    /// note says why its cases still stop after one pass, truthfully (the
    /// words: `report::text::events`).
    #[test]
    fn why_one_pass_is_true_of_each_method() {
        assert_eq!(keeper(Method::Dontcache), Keeper::DropsAfter);
        assert_eq!(keeper(Method::UringDontcache), Keeper::DropsAfter);
        assert_eq!(keeper(Method::Buffered), Keeper::PageCache);
        assert_eq!(keeper(Method::Ucache), Keeper::OwnCache);
    }

    /// Issue 26 item 11: a caching method told to run its whole time
    /// (fio's `time_based`) starts over too; its note must not say it
    /// keeps no cache beside a device share of 0%.
    #[test]
    fn wrapped_note_of_a_caching_method_says_it_caches() {
        let mut p = plan(&[
            "--methods",
            "buffered,direct",
            "--patterns",
            "write",
            "--time",
            "2s",
        ]);
        for c in &mut p.cases {
            c.until = Some(crate::model::words::Until::Time);
        }
        let passes = crate::result::Passes {
            kind: crate::result::PassKind::Wrapped,
            passes: 3.0,
            suggested_size_bytes: None,
        };
        let note = |case: &Case| {
            let cr = CaseResult {
                method: case.method.into(),
                pattern: Pattern::Write,
                summary: Some(crate::result::Measurement::default()),
                ..Default::default()
            };
            match passes_note(&passes, &cr, case, &p) {
                Some(CaseNote::Passes {
                    kind,
                    keeps,
                    passes,
                    limit_ns,
                    ..
                }) => (kind, keeps, passes, limit_ns),
                other => panic!("{other:?}"),
            }
        };
        let (buffered, direct) = (note(&p.cases[0]), note(&p.cases[1]));
        assert_eq!(
            buffered,
            (
                PassNote::WrappedAsAsked,
                Keeper::PageCache,
                3.0,
                2_000_000_000
            )
        );
        assert_eq!(direct.0, PassNote::WrappedUncached);
    }

    fn plan(args: &[&str]) -> crate::plan::Plan {
        let mut v = vec!["iopath", "run"];
        v.extend_from_slice(args);
        let Some(crate::cli::Command::Run(r)) = crate::cli::parse_from(v).unwrap().command else {
            unreachable!()
        };
        crate::cli::commands::plan_of(&r).unwrap()
    }

    /// Review of issue 19 (S1): under MPI a case's bytes are every rank's;
    /// with per-rank files one pass is every rank's file, with a shared
    /// layout the ranks' parts make one pass of the one file.
    #[test]
    fn a_pass_under_mpi_counts_every_ranks_file_once() {
        let p = plan(&["--methods", "direct", "--patterns", "read", "--time", "2s"]);
        let case = &p.cases[0];
        let mib = 1u64 << 20;
        let alone = pass_bytes(case, &p, 64 * mib, RankFiles::ALONE).unwrap();
        assert_eq!(alone, 64 * mib);
        let per_rank = RankFiles {
            ranks: 4,
            sharing: 1,
        };
        let shared = RankFiles {
            ranks: 4,
            sharing: 4,
        };
        assert_eq!(pass_bytes(case, &p, 64 * mib, per_rank), Some(4 * alone));
        assert_eq!(pass_bytes(case, &p, 64 * mib, shared), Some(alone));
        // Each rank rounds its own part: 3 threads of a 16 MiB segment
        // move 15 MiB each, 60 MiB in all (63 MiB for one process).
        let t = plan(&[
            "--methods",
            "direct",
            "--patterns",
            "read",
            "--time",
            "2s",
            "--threads",
            "3",
        ]);
        let one = pass_bytes(&t.cases[0], &t, 64 * mib, RankFiles::ALONE);
        assert_eq!(one, Some(63 * mib));
        assert_eq!(
            pass_bytes(&t.cases[0], &t, 64 * mib, shared),
            Some(60 * mib)
        );
        assert_eq!(
            pass_bytes(&t.cases[0], &t, 64 * mib, per_rank),
            Some(4 * 63 * mib)
        );
        // A byte count is each rank's own, whatever the layout.
        let q = plan(&[
            "--methods",
            "direct",
            "--patterns",
            "randread",
            "--io-size",
            "8M",
        ]);
        let one = pass_bytes(&q.cases[0], &q, 64 * mib, RankFiles::ALONE).unwrap();
        assert_eq!(pass_bytes(&q.cases[0], &q, 64 * mib, shared), Some(4 * one));
        // Four ranks that each read their 64 MiB file 1.5 times: 1.5
        // passes, not 6 (the sum of the bytes over one rank's file).
        let cr = CaseResult {
            summary: Some(crate::result::Measurement {
                io_bytes: 4 * 96 * mib,
                duration_ns: 2_000_000_000,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(p.wraps(case), "direct's timed sequential read wraps");
        let w = passes_of(&cr, case, &p, 64 * mib, per_rank).unwrap();
        assert!((w.passes - 1.5).abs() < 1e-9, "{w:?}");
        let s = passes_of(&cr, case, &p, 64 * mib, shared).unwrap();
        assert!((s.passes - 6.0).abs() < 1e-9, "{s:?}");
    }
}

//! One repetition of one arm: set up (the cgroup entered, a sparse file
//! truncated again, the cache state made, the neighbour started), run
//! (retried a while when a method that worked is refused), and booked into
//! its case with its round and its place in the run's order.

use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::{Context, Result};

use super::{histogram, limit_info, progress_name, Arm, Shared};
use crate::result::facts::CaseNote;
use crate::result::{CaseResult, Measurement, RunResult};
use crate::run::live;
use crate::run::progress::{RepLine, RepTag};
use crate::run::repeat::RepOutcome;
use crate::run::{set_cache_state, RepError, Runner, SKIP_RETRIES, SKIP_RETRY_WAIT};

impl Runner<'_> {
    /// One repetition of one arm, booked into its case.
    pub(super) fn one_repetition(
        &self,
        arm: &mut Arm<'_>,
        warmup: bool,
        book: Book,
        sh: &mut Shared<'_>,
        result: &mut RunResult,
        bar: &indicatif::ProgressBar,
    ) -> Result<RepOutcome> {
        let (plan, case) = (self.plan, arm.case);
        let t0 = Instant::now();
        if let Some(l) = &arm.live {
            // The time left ticks down during the repetition.
            l.set_left(sh.eta.clock(arm.at));
        }
        // uffd's workers share one region per file, as ucache's share one
        // cache: the case's budget is the region's.
        iopath_io::engines::uffd::configure(plan.ucache_size.max(4096));
        let limited = case.cache_limited;
        if let Some(l) = sh.limit.as_mut().filter(|_| limited) {
            self.ranks.agree(l.enter().with_context(|| {
                format!("--cache-limit: cannot move iopath into {}", l.dir.display())
            }))?;
        }
        let neighbour = plan.neighbour && !warmup;
        let Prepared {
            rep,
            notes: prep_notes,
            beside,
        } = self.prepared_repetition(
            arm,
            warmup,
            neighbour,
            book.budget,
            sh,
            &result.cases[arm.idx],
        );
        let rep = match (crate::run::failure::lost_writes(), rep) {
            (None, rep) => rep,
            (Some(lost), Err(RepError::Fail(e))) => Err(RepError::Fail(format!("{e}; {lost}"))),
            (Some(lost), _) => Err(RepError::Fail(lost)),
        };
        let rep = self.ranks.combine(rep, result, &arm.name, book.seq, warmup);
        if let Some(t) = sh.target.filter(|_| case.writes()) {
            // Every rank's writes are done (`combine`): the file as they
            // left it is what the checks compare with.
            t.settle();
        }
        if rep.is_ok() {
            result.cases[arm.idx].neighbour.extend(beside);
        }
        self.leave_cache_limit(sh, result)?;
        let cr = &mut result.cases[arm.idx];
        for n in prep_notes {
            if !cr.facts.contains(&n) {
                cr.facts.push(n);
            }
        }
        let timed_ns = rep.as_ref().ok().map(|ok| ok.measurement.duration_ns);
        let outcome = match rep {
            Ok(ok) => self.book_ok(arm, cr, ok, warmup, book, bar, t0),
            Err(e) => book_err(cr, e),
        };
        let wall_ns = t0.elapsed().as_nanos() as u64;
        arm.elapsed_ns += wall_ns;
        if let Some(timed) = timed_ns {
            // Its set-up: what the estimate counts besides the work.
            sh.eta
                .set_up(plan, wall_ns.saturating_sub(timed) as f64 / 1e9);
        }
        if outcome == RepOutcome::Stop && self.stop.load(Ordering::Relaxed) {
            return Ok(RepOutcome::Abort);
        }
        Ok(self.ranks.agree_outcome(outcome))
    }

    /// Out of the `--cache-limit` cgroup after a repetition, its figures
    /// in the run's config. Left in it, later cases would run capped unseen.
    fn leave_cache_limit(&self, sh: &mut Shared<'_>, result: &mut RunResult) -> Result<()> {
        if let Some(l) = sh.limit.as_mut() {
            self.ranks.agree(l.leave().with_context(|| {
                format!(
                    "--cache-limit: cannot move iopath back out of {}",
                    l.dir.display()
                )
            }))?;
            result.config.cache_limit = Some(limit_info(l));
        }
        Ok(())
    }

    /// A repetition that ran, booked into its case: its figures, notes,
    /// depth, placement and latency; the progress line says it.
    #[allow(clippy::too_many_arguments)]
    fn book_ok(
        &self,
        arm: &mut Arm<'_>,
        cr: &mut CaseResult,
        ok: crate::run::RepOk,
        warmup: bool,
        book: Book,
        bar: &indicatif::ProgressBar,
        t0: Instant,
    ) -> RepOutcome {
        let crate::run::RepOk {
            measurement: mut m,
            engine_notes,
            facts,
            queue_depth: qd,
            placement: placed,
            hist,
            stream_hists,
            verified,
        } = ok;
        cr.queue_depth = qd;
        arm.flush_ns = arm.flush_ns.max(verified.flush_ns);
        if self.plan.verify {
            *cr.verified_bytes.get_or_insert(0) += verified.bytes;
            *cr.verify_ns.get_or_insert(0) += verified.ns;
        }
        if cr.placement.is_none() {
            cr.placement = Some(placed);
        }
        add_notes(cr, engine_notes, facts);
        m.warmup = warmup;
        (m.round, m.seq) = (book.round, Some(book.seq));
        if !warmup {
            let into = if m.interrupted {
                &mut arm.cut
            } else {
                &mut arm.complete
            };
            let _ = into.get_or_insert_with(histogram).add(&hist);
            if !m.interrupted {
                arm.streams.resize_with(stream_hists.len(), histogram);
                for (into, h) in arm.streams.iter_mut().zip(&stream_hists) {
                    let _ = into.add(h);
                }
            }
        }
        let (stop, bw, capped) = (m.interrupted, m.bw_bytes_per_s, m.capped.is_some());
        let mut tag = rep_tag(&cr.repetitions, warmup, self.plan);
        tag.n += 1;
        bar.set_message((self.progress.words().rep)(&RepLine {
            case: &arm.name,
            tag,
            mib_s: m.bw_bytes_per_s / (1024.0 * 1024.0),
            iops: m.iops,
            flushing: false,
        }));
        cr.repetitions.push(m);
        let wall_ns = t0.elapsed().as_nanos() as u64;
        if stop {
            RepOutcome::Abort
        } else if capped {
            RepOutcome::Capped { bw, wall_ns }
        } else {
            RepOutcome::Done { bw, wall_ns }
        }
    }

    /// Set-up (sparse truncation, cache state) and the repetition itself,
    /// retried for a while when a method that worked is refused. With
    /// `neighbour`, the neighbour is measured alone after the set-up and
    /// runs beside the repetition only ([`crate::run::neighbour::Beside`]).
    fn prepared_repetition(
        &self,
        arm: &Arm<'_>,
        warmup: bool,
        neighbour: bool,
        budget: Option<std::time::Duration>,
        sh: &mut Shared<'_>,
        cr: &CaseResult,
    ) -> Prepared {
        let t0 = Instant::now();
        let mut notes = Vec::new();
        let beside = match self.rep_set_up(arm, neighbour, sh, &mut notes) {
            Ok(beside) => beside,
            Err(e) => {
                return Prepared {
                    rep: Err(e),
                    notes,
                    beside: None,
                }
            }
        };
        let rep = self.retried(arm, warmup, budget, t0, sh, cr);
        Prepared {
            rep,
            notes,
            beside: beside.map(crate::run::neighbour::Beside::stop),
        }
    }

    /// A repetition's set-up, every rank together: the file checked for
    /// another process's change, a sparse file truncated again, the cache
    /// state made (a failure is a note), the neighbour started.
    fn rep_set_up(
        &self,
        arm: &Arm<'_>,
        neighbour: bool,
        sh: &mut Shared<'_>,
        notes: &mut Vec<CaseNote>,
    ) -> Result<Option<crate::run::neighbour::Beside>, RepError> {
        let (case, target) = (arm.case, sh.target);
        // Another process changed the file since the last repetition: none
        // starts (the sparse truncation below would hide a truncation).
        if let Some(e) = crate::run::changed::before(target, &progress_name(case)) {
            self.ranks.barrier();
            return Err(e);
        }
        if let Some(t) = target.filter(|t| t.info.sparse || case.sparse) {
            if let Err(e) = t.retruncate() {
                self.ranks.barrier();
                return Err(RepError::Fail(format!("{e:#}")));
            }
        }
        if let Some(t) = target {
            let cache = case.cache.unwrap_or(self.plan.cache);
            if let Err(e) = set_cache_state(t, cache, self.plan.drop_caches, self.plan.noatime) {
                notes.push(CaseNote::CacheNotMade {
                    cache: cache.name().into(),
                    error: format!("{e:#}"),
                });
            }
        }
        let beside = neighbour
            .then(|| crate::run::neighbour::Beside::start(self.plan, sh, notes))
            .flatten();
        // Every rank made its cache state: all start together.
        self.ranks.barrier();
        if let Some(t) = target.filter(|t| t.info.sparse || case.sparse) {
            // Every rank's truncation is done: the file as they left it is
            // what the checks compare with.
            t.settle();
        }
        Ok(beside)
    }

    /// The repetition, set up since `t0`. A method that worked in earlier
    /// repetitions and is now refused (io_uring_setup's ENOMEM while the
    /// kernel still holds closed rings' memory against the user's
    /// RLIMIT_MEMLOCK) is retried for up to a second.
    fn retried(
        &self,
        arm: &Arm<'_>,
        warmup: bool,
        budget: Option<std::time::Duration>,
        t0: Instant,
        sh: &Shared<'_>,
        cr: &CaseResult,
    ) -> Result<crate::run::RepOk, RepError> {
        let (case, target) = (arm.case, sh.target);
        let mut attempt = 0;
        let mut tag = rep_tag(&cr.repetitions, warmup, self.plan);
        tag.n += 1;
        loop {
            if let Some(l) = &arm.live {
                l.begin(tag);
            }
            // Set-up (cache state, retries) comes out of the case's budget,
            // and a write keeps room for its flush, as long as the longest
            // so far (a flush cannot be cut).
            let cap = budget.map(|b| {
                cap_for_work(
                    b,
                    t0.elapsed(),
                    std::time::Duration::from_nanos(arm.flush_ns),
                )
            });
            let rep = live::with_ticker(arm.live.as_ref(), || {
                if case.pattern == crate::plan::Pattern::Replay {
                    // A whole replay, or under a budget as much of it as a
                    // repetition's share allows; not cut by the case timeout.
                    let limit = crate::plan::replay::repetition_limit(self.plan, arm.budget_ns);
                    return self.run_replay_repetition(case, sh.replay, sh.obs, limit);
                }
                let limits = (cap, arm.stretch);
                self.run_repetition(case, target, sh.obs, arm.live.as_ref(), sh.seq, limits)
            });
            if let Some(l) = &arm.live {
                l.end();
            }
            match rep {
                Err(RepError::Skip(_))
                    if !cr.repetitions.is_empty()
                        && attempt < SKIP_RETRIES
                        && !self.stop.load(Ordering::Relaxed) =>
                {
                    attempt += 1;
                    std::thread::sleep(SKIP_RETRY_WAIT);
                }
                other => return other,
            }
        }
    }
}

/// A repetition after its set-up: its outcome, the notes for its case, and
/// the neighbour measured beside it.
struct Prepared {
    rep: Result<crate::run::RepOk, RepError>,
    notes: Vec<CaseNote>,
    beside: Option<crate::result::neighbour::NeighbourRep>,
}

/// A repetition that did not run, booked into its case. After good
/// repetitions, a refusal ends the case but keeps what it measured, and
/// says why. (A failure is an error whenever it comes: the run exits 1,
/// and the repetitions before it stay in the JSON.)
fn book_err(cr: &mut CaseResult, e: RepError) -> RepOutcome {
    let done = cr.repetitions.len();
    match e {
        RepError::Skip(reason) if done > 0 => cr.facts.push(CaseNote::RepetitionRefused {
            repetition: done as u32 + 1,
            reason,
            earlier: done as u32,
        }),
        RepError::Skip(reason) => cr.skip = Some(reason),
        RepError::Fail(e) => cr.error = Some(e),
    }
    RepOutcome::Stop
}

/// What is left of a case timeout's `budget` for a repetition's work,
/// `spent` into it (its set-up), keeping `flush` for its final flush: never
/// less than 1 ms (the first request is always issued).
pub fn cap_for_work(
    budget: std::time::Duration,
    spent: std::time::Duration,
    flush: std::time::Duration,
) -> std::time::Duration {
    budget
        .saturating_sub(spent)
        .saturating_sub(flush)
        .max(std::time::Duration::from_millis(1))
}

/// Where a repetition stands in the run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Book {
    pub round: Option<u32>,
    pub seq: u32,
    /// What is left of the case timeout for this arm.
    pub budget: Option<std::time::Duration>,
}

/// How many repetitions of its kind (warm-up or measured) are done, for
/// the progress line.
fn rep_tag(done: &[Measurement], warmup: bool, plan: &crate::plan::Plan) -> RepTag {
    let n = done.iter().filter(|m| m.warmup == warmup).count() as u32;
    RepTag {
        warmup,
        n,
        of: if warmup {
            Some(plan.warmup)
        } else {
            plan.repeat
        },
    }
}

/// A repetition's notes into its case's, each once: the engines' own
/// (the mapping's address changes every repetition: the first one stands
/// for them) and the runner's facts.
fn add_notes(cr: &mut CaseResult, engine_notes: Vec<String>, facts: Vec<CaseNote>) {
    let mapping = iopath_io::engines::mmap::MAPPING_NOTE_PREFIX;
    for text in engine_notes {
        let again = text.starts_with(mapping)
            && cr
                .facts
                .iter()
                .any(|o| matches!(o, CaseNote::Engine { text } if text.starts_with(mapping)));
        let n = CaseNote::Engine { text };
        if !again && !cr.facts.contains(&n) {
            cr.facts.push(n);
        }
    }
    for n in facts {
        if !cr.facts.contains(&n) {
            cr.facts.push(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 18, "runs" item 4): `--case-timeout` stopped a
    /// write's issuing at the cap, and its flush (inside the timed
    /// interval) then ran past it. The work now gets the cap less its
    /// set-up and the longest flush seen so far, so that the whole timed
    /// interval fits.
    #[test]
    fn the_case_timeout_keeps_room_for_a_writes_flush() {
        use std::time::Duration;
        let ms = Duration::from_millis;
        assert_eq!(cap_for_work(ms(10_000), ms(200), ms(0)), ms(9_800));
        assert_eq!(cap_for_work(ms(10_000), ms(200), ms(1_500)), ms(8_300));
        // A flush longer than what is left: the first request still goes.
        assert_eq!(cap_for_work(ms(1_000), ms(200), ms(5_000)), ms(1));
        assert_eq!(cap_for_work(ms(1_000), ms(2_000), ms(0)), ms(1));
    }
}

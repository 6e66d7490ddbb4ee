//! `--replay TRACE`: a plan whose cases replay a recorded trace, one per
//! method (docs/replay.md, "Replay"). The trace is surveyed here in one
//! streaming pass ([`crate::trace::replay::Survey`]): what it needs (files,
//! threads, the largest request) decides each case's buffers, and a bad
//! trace is refused before anything runs, naming the byte offset.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use iopath_io::SyncPolicy;

use super::methods::default_methods;
use super::{Case, Pattern, Plan, UsageError};
use crate::model::choice::MethodChoice;
use crate::trace::replay::{Survey, SurveyThread};

/// The largest request a replay issues: a longer read or write of the
/// trace is issued in pieces of this size.
pub const MAX_REQUEST: u64 = 1 << 20;

/// When each op of a replay starts (`--replay-timing`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ReplayTiming {
    /// As soon as the ops before it allow: the path's capacity.
    #[default]
    Fast,
    /// At its recorded time since the start, times `scale` (1: as
    /// recorded; 0.5: twice as fast), or later when the path lags.
    Recorded { scale: f64 },
}

impl ReplayTiming {
    /// `fast`, `recorded`, or a scale factor (`0.5`, `2x`).
    pub fn parse(s: &str) -> Result<ReplayTiming, String> {
        match s {
            "fast" => Ok(ReplayTiming::Fast),
            "recorded" => Ok(ReplayTiming::Recorded { scale: 1.0 }),
            _ => s
                .trim_end_matches('x')
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1000.0)
                .map(|scale| ReplayTiming::Recorded { scale })
                .ok_or_else(|| {
                    format!("'{s}': give fast, recorded, or a scale factor of the recorded gaps above 0 and at most 1000 (0.5: twice as fast)")
                }),
        }
    }
}

/// The trace a plan replays and what it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplaySource {
    pub trace: PathBuf,
    /// Its file name, as the result names the job.
    pub name: String,
    pub survey: Survey,
    pub timing: ReplayTiming,
    /// `--qd`: every thread of an asynchronous method at this depth;
    /// without it, each thread at the depth the program kept in flight.
    pub qd: Option<u32>,
}

impl ReplaySource {
    /// Surveys the trace at `trace`: exit 2 naming the byte offset where it
    /// is bad.
    pub fn read(trace: &Path, timing: ReplayTiming) -> Result<ReplaySource, UsageError> {
        let survey = Survey::of(trace).map_err(|e| {
            UsageError(format!(
                "{}: {e}{}",
                trace.display(),
                if e.is_bad_input() {
                    ""
                } else {
                    " (check the path, or record one with iopath record)"
                }
            ))
        })?;
        if survey.data_ops() == 0 {
            return Err(UsageError(format!(
                "{}: the trace has no read or write of a named file to replay (iopath trace show says what it holds)",
                trace.display()
            )));
        }
        let name = trace
            .file_name()
            .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
        Ok(ReplaySource {
            trace: trace.to_path_buf(),
            name,
            survey,
            timing,
            qd: None,
        })
    }

    /// The depth the replay's cases run at: `--qd`, else the deepest
    /// thread's own.
    pub fn depth(&self) -> u32 {
        self.qd.unwrap_or_else(|| self.survey.depth())
    }

    /// The depth thread `t` replays at through an asynchronous method:
    /// `--qd`, else the most it had in flight.
    pub fn thread_depth(&self, t: &SurveyThread) -> u32 {
        self.qd.unwrap_or(t.depth).max(1)
    }

    /// Each request's buffer: the largest read or write, in whole 4 KiB,
    /// at most [`MAX_REQUEST`].
    pub fn block_size(&self) -> u64 {
        self.survey
            .max_len
            .div_ceil(4096)
            .max(1)
            .saturating_mul(4096)
            .min(MAX_REQUEST)
    }
}

/// The most engines a replay opens at once (one per thread and file it
/// touches).
pub const MAX_ENGINES: u64 = 4096;

/// The most memory a replay's buffers take at once (every engine's slots).
pub const MAX_BUFFERS: u64 = 4 << 30;

/// A replay opens an engine per thread and file, each with `qd` buffers of
/// `bs`: refused (exit 2) beyond [`MAX_ENGINES`] or [`MAX_BUFFERS`].
fn check_engines(source: &ReplaySource, bs: u64, qd: u32) -> Result<(), UsageError> {
    let engines: u64 = source
        .survey
        .threads
        .iter()
        .map(|t| t.files.len() as u64)
        .sum();
    if engines > MAX_ENGINES {
        return Err(UsageError(format!(
            "{}: its threads touch {engines} files between them, and a replay opens one engine per thread and file, at most {MAX_ENGINES}",
            source.trace.display()
        )));
    }
    let bytes = engines.saturating_mul(bs).saturating_mul(u64::from(qd));
    if bytes > MAX_BUFFERS {
        return Err(UsageError(format!(
            "{}: {engines} engines (one per thread and file) with {qd} buffers of {} each would take {} of memory, more than the {} a replay allows; give a smaller --qd",
            source.trace.display(),
            crate::model::units::fmt_bytes(bs),
            crate::model::units::fmt_bytes(bytes),
            crate::model::units::fmt_bytes(MAX_BUFFERS),
        )));
    }
    Ok(())
}

/// Under a budget the user gave (`--budget`, a job file's; not the
/// default run's, which would cut the user's program without being asked:
/// a replay runs whole unless told; none with `--repeat`), how long one
/// repetition of a replay case may run: the
/// job's budget (`job_budget_ns`, what was left of it when the job
/// started) shared as [`Plan::budget_time`] shares it among the floor of
/// rounds of every case, but not held to the default 150 ms: a replay that
/// fits runs whole, a longer one is replayed from its start up to this
/// limit (each method as far as it gets: a prefix of the trace that
/// differs between methods, so their rates compare only as far as the
/// trace is alike along its length). `None` without a budget the user gave.
pub fn repetition_limit(plan: &Plan, job_budget_ns: Option<u64>) -> Option<Duration> {
    let budget = Duration::from_nanos(job_budget_ns.filter(|_| plan.budget_given)?);
    let arms = plan
        .cases
        .iter()
        .filter(|c| c.pattern == Pattern::Replay)
        .count()
        .max(1);
    let reps = arms as f64 * (crate::stats::verdict_rounds() as f64 + f64::from(plan.warmup));
    let t = budget.as_secs_f64() * super::FLOOR_SHARE / reps - super::REP_SETUP.as_secs_f64();
    Some(Duration::from_secs_f64(
        t.max(super::MIN_BUDGET_TIME.as_secs_f64()),
    ))
}

/// Makes `plan` a replay of `source`: one case per method (`methods`, else
/// the default run's); the asynchronous ones at depth `qd` where given,
/// else at the program's own (the depth each thread kept in flight).
pub fn apply(
    plan: &mut Plan,
    mut source: ReplaySource,
    methods: &[MethodChoice],
    qd: Option<u32>,
) -> Result<(), UsageError> {
    let methods = if methods.is_empty() {
        default_methods(Pattern::RandRw)
    } else {
        methods.to_vec()
    };
    if let Some(m) = methods.iter().find(|m| m.method.copy_only()) {
        return Err(UsageError(format!(
            "--replay: {} only copies files; name methods that read and write (--methods buffered,direct,uring)",
            m.method
        )));
    }
    let bs = source.block_size();
    source.qd = qd;
    let qd = source.depth();
    check_engines(&source, bs, qd)?;
    plan.cases = methods
        .iter()
        .map(|choice| {
            let mut c = Case::new(choice.method, Pattern::Replay, bs, qd, 1);
            c.hint = choice.hint;
            c.buffers = choice.buffers;
            c.sync = SyncPolicy::None;
            c.label = Some(source.name.clone());
            c.concurrency = None;
            c
        })
        .collect();
    super::case::number_arms(&mut plan.cases);
    plan.replay = Some(Arc::new(source));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::replay::SurveyThread;

    fn source(threads: u32, files_each: u32, max_len: u64) -> ReplaySource {
        ReplaySource {
            trace: "/t/app.trace".into(),
            name: "app.trace".into(),
            survey: Survey {
                threads: (0..threads)
                    .map(|tid| SurveyThread {
                        tid,
                        files: (0..files_each).collect(),
                        ..SurveyThread::default()
                    })
                    .collect(),
                max_len,
                reads: 1,
                ..Survey::default()
            },
            timing: ReplayTiming::Fast,
            qd: None,
        }
    }

    /// Without --qd a replay runs at the program's own depth (a program of
    /// synchronous calls at 1, not 32), each thread at its own; --qd sets
    /// every thread's.
    #[test]
    fn a_replay_runs_at_the_programs_depth_unless_qd_is_given() {
        let mut s = source(2, 1, 4096);
        s.survey.threads[0].depth = 1;
        s.survey.threads[1].depth = 4;
        let mut plan = Plan::from_spec(
            &super::super::JobSpec::default(),
            &super::super::Origin::default(),
        )
        .unwrap();
        let methods = [MethodChoice::from(iopath_io::Method::Uring)];
        apply(&mut plan, s.clone(), &methods, None).unwrap();
        assert_eq!(plan.cases[0].queue_depth_requested, 4);
        let r = plan.replay.as_ref().unwrap();
        assert_eq!(r.qd, None);
        assert_eq!(r.thread_depth(&r.survey.threads[0]), 1);
        assert_eq!(r.thread_depth(&r.survey.threads[1]), 4);
        apply(&mut plan, s, &methods, Some(32)).unwrap();
        assert_eq!(plan.cases[0].queue_depth_requested, 32);
        let r = plan.replay.as_ref().unwrap();
        assert_eq!(r.qd, Some(32));
        assert_eq!(r.thread_depth(&r.survey.threads[0]), 32);
    }

    /// `--budget` bounds a replay: each repetition of each method gets a
    /// share of the job's budget (the floor of rounds of every case), not
    /// the default 150 ms, never below the shortest limit; no budget
    /// (`--repeat`), no limit.
    #[test]
    fn a_budget_limits_each_replay_repetition_to_its_share() {
        let mut plan = Plan::from_spec(
            &super::super::JobSpec::default(),
            &super::super::Origin::default(),
        )
        .unwrap();
        let methods: Vec<MethodChoice> = [iopath_io::Method::Buffered, iopath_io::Method::Direct]
            .into_iter()
            .map(MethodChoice::from)
            .collect();
        apply(&mut plan, source(1, 1, 4096), &methods, None).unwrap();
        plan.warmup = 0;
        assert_eq!(repetition_limit(&plan, None), None);
        // The default run's budget does not cut the user's program.
        assert!(plan.budget.is_some() && !plan.budget_given);
        assert_eq!(repetition_limit(&plan, Some(20_000_000_000)), None);
        plan.budget_given = true;
        let rounds = crate::stats::verdict_rounds() as f64;
        let budget = 20e9;
        let limit = repetition_limit(&plan, Some(budget as u64)).unwrap();
        let share = budget / 1e9 * super::super::FLOOR_SHARE / (2.0 * rounds)
            - super::super::REP_SETUP.as_secs_f64();
        assert!((limit.as_secs_f64() - share).abs() < 1e-6, "{limit:?}");
        assert!(limit > super::super::DEFAULT_TIME, "{limit:?}");
        assert_eq!(
            repetition_limit(&plan, Some(1)),
            Some(super::super::MIN_BUDGET_TIME)
        );
    }

    #[test]
    fn replay_timing_reads_fast_recorded_and_a_factor() {
        assert_eq!(ReplayTiming::parse("fast"), Ok(ReplayTiming::Fast));
        assert_eq!(
            ReplayTiming::parse("recorded"),
            Ok(ReplayTiming::Recorded { scale: 1.0 })
        );
        assert_eq!(
            ReplayTiming::parse("2x"),
            Ok(ReplayTiming::Recorded { scale: 2.0 })
        );
        for bad in ["0", "-1", "nan", "inf", "slow", "1001"] {
            assert!(ReplayTiming::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn block_size_is_the_largest_request_in_4k_at_most_1m() {
        assert_eq!(source(1, 1, 1).block_size(), 4096);
        assert_eq!(source(1, 1, 4097).block_size(), 8192);
        assert_eq!(source(1, 1, 64 << 20).block_size(), MAX_REQUEST);
    }

    #[test]
    fn engines_and_buffers_of_a_replay_are_bounded() {
        assert!(check_engines(&source(8, 4, 4096), 4096, 32).is_ok());
        let many = check_engines(&source(64, 65, 4096), 4096, 1).unwrap_err();
        assert!(many.0.contains("4160 files"), "{}", many.0);
        // 64 engines x 32 x 4 MiB = 8 GiB of buffers.
        let big = check_engines(&source(8, 8, 1 << 20), 4 << 20, 32).unwrap_err();
        assert!(big.0.contains("--qd"), "{}", big.0);
    }
}

//! The comparison as `--json` prints it: a [`Report`] of one
//! [`CaseComparison`] per case, and the rules read from a compared case
//! (too few repetitions to tell, beyond `--fail-above`, B disturbed by
//! other traffic).

use serde::{Deserialize, Serialize};

use super::test::{self, Label, Test};
use super::Note;
use crate::result::Job;
use crate::stats;

/// What became of a case in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured in both: compared.
    Compared,
    OnlyInA,
    OnlyInB,
    /// In both, but skipped, failed or without measured repetitions in
    /// every run of at least one side.
    NotMeasured,
}

/// Why a side has no measurement of a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Unmeasured {
    /// The case was skipped (`skipped` in the result).
    Skipped { why: String },
    /// The case failed (`error` in the result).
    Failed { error: String },
    /// No measured repetition (warm-ups only, or none).
    NoRepetitions,
    /// A median throughput of 0 B/s.
    NoThroughput,
}

/// One side of the comparison: one run or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// The first file, as given.
    pub path: String,
    /// The display name (`--name-a`/`--name-b`, else the file name; with
    /// several runs, the first file's name and how many more).
    pub name: String,
    /// The first run's start and command.
    pub started_at: String,
    pub command: String,
    /// Every file of the side, as given (one per run).
    pub paths: Vec<String>,
}

/// One case of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseComparison {
    pub method: crate::result::MethodName,
    /// The arm of a method named twice in a run (2 for `direct#2`); absent
    /// for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<u32>,
    /// The method as shown: `direct`, `direct#2`.
    pub name: String,
    /// Pattern, block size, the depth asked for (`queue_depth_requested`
    /// in the results), threads, sync, read share, and the rest of the job.
    #[serde(flatten)]
    pub job: Job,
    /// The depth the case ran at (1 for a synchronous method).
    pub queue_depth_effective: u32,
    pub status: Status,
    /// Null unless `compared`.
    pub label: Option<Label>,
    /// Which test: `between_runs` or `within_run`; null unless `compared`.
    pub test: Option<Test>,
    /// B/A of the throughput; null unless `compared`.
    pub ratio: Option<f64>,
    /// 95% interval of `ratio` (within a run: widened by the drift
    /// allowance); null unless `compared`.
    pub ratio_ci95: Option<[f64; 2]>,
    /// The drift allowance applied (within a run), in percent; null
    /// otherwise.
    pub drift_allowance_pct: Option<f64>,
    /// Median throughput of the measured repetitions (one run), or the
    /// geometric mean of the runs' medians (several); null when not
    /// measured in that side (or not in it).
    pub a_median_bw_bytes_per_s: Option<f64>,
    pub b_median_bw_bytes_per_s: Option<f64>,
    /// Runs in which the case was measured.
    pub a_runs: usize,
    pub b_runs: usize,
    /// Measured repetitions counted, all runs together (0 when not
    /// measured).
    pub a_n: usize,
    pub b_n: usize,
    /// Median over the measured repetitions (all runs) of their p99
    /// latency, for information (no label).
    pub a_p99_ns: Option<u64>,
    pub b_p99_ns: Option<u64>,
    /// The largest over the runs of the median `device_fraction` (device
    /// bytes / bytes the case asked for); null without a block device.
    pub a_device_fraction: Option<f64>,
    pub b_device_fraction: Option<f64>,
    /// Why A has no measurement of the case (every run of A that holds
    /// it skipped, failed or empty: the first run's reason); null
    /// otherwise.
    pub a_not_measured: Option<Unmeasured>,
    pub b_not_measured: Option<Unmeasured>,
    /// The samples do not overlap but are too few for that to count
    /// ([`stats::Comparison::undersampled`]); said in a note.
    #[serde(skip)]
    pub undersampled: bool,
}

impl CaseComparison {
    /// The job that ran: `randread 4k Q1T1` for a synchronous method even
    /// when Q32 was asked for.
    pub fn job(&self) -> String {
        self.job.label_at(self.queue_depth_effective)
    }

    /// True when the case was compared within one run per side but had too
    /// few repetitions for a change to count (see [`stats::compare`]).
    pub fn blind(&self) -> bool {
        self.status == Status::Compared
            && self.test == Some(Test::WithinRun)
            && (self.undersampled
                || ((self.a_n < 6 || self.b_n < 6)
                    && stats::separation_p(self.a_n, self.b_n) >= 0.05))
    }

    /// True when the `--fail-above PCT` rule cannot be decided (exit 3, a
    /// gate must not pass for lack of data): not a regression, and either
    /// too few repetitions to tell while the median slowdown exceeds PCT%
    /// even after allowing for drift ([`CaseComparison::few_to_tell`]), or
    /// the median is more than PCT% slower while the interval reaches back
    /// within PCT% (labelled `inconclusive`, or `slower` by less than PCT
    /// at its bound): a slowdown the data neither confirm nor rule out.
    /// (Other traffic on B's disk is a note: it never changes what the
    /// interval says, nor the exit code.)
    pub fn inconclusive(&self, pct: f64) -> bool {
        if self.status != Status::Compared || self.regressed(pct) {
            return false;
        }
        let open = self.label != Some(Label::NoChange)
            && self.ratio.is_some_and(|r| r < 1.0 - pct / 100.0);
        self.few_to_tell(pct) || open
    }

    /// Too few repetitions to tell, and the median slowdown exceeds PCT%
    /// even after allowing for drift.
    pub fn few_to_tell(&self, pct: f64) -> bool {
        let drift = self.drift_allowance_pct.unwrap_or(0.0) / 100.0;
        self.blind()
            && self
                .ratio
                .is_some_and(|r| r * (1.0 + drift) < 1.0 - pct / 100.0)
    }

    /// True when the interval breaks the `--fail-above PCT` rule: labelled
    /// slower, and its upper bound is more than PCT% below 1.
    pub fn beyond(&self, pct: f64) -> bool {
        match (self.label, self.ratio_ci95) {
            (Some(l), Some(ci)) => test::beyond(l, ci, pct),
            _ => false,
        }
    }

    /// True when the case breaks the `--fail-above PCT` rule (exit 1):
    /// [`CaseComparison::beyond`]. Other traffic on B's disk is said in a
    /// note and does not change the exit code.
    pub fn regressed(&self, pct: f64) -> bool {
        self.beyond(pct)
    }
}

/// The whole comparison, as printed by `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub a: Side,
    pub b: Side,
    /// `--fail-above`, in percent; null when not given.
    pub fail_above_pct: Option<f64>,
    /// The drift allowance for cases with one run per side, in percent.
    pub drift_allowance_pct: f64,
    /// The equivalence margin of `no change`, in percent: `--fail-above`
    /// when given, else [`super::DEFAULT_NO_CHANGE_PCT`]. A case is `no
    /// change` only when its interval lies within it both ways, else
    /// `inconclusive`. Absent in reports written before it (read as 0).
    #[serde(default)]
    pub no_change_margin_pct: f64,
    pub cases: Vec<CaseComparison>,
    /// What differs between the runs that makes comparing them
    /// questionable.
    pub notes: Vec<Note>,
    /// Cases that break the `--fail-above` rule; without it, cases labelled
    /// slower.
    pub regressions: usize,
}

impl Report {
    /// True when some case was compared within one run per side.
    pub fn one_run_per_side(&self) -> bool {
        self.cases.iter().any(|c| c.test == Some(Test::WithinRun))
    }
}

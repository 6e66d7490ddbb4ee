//! `--fail-above PCT` as a decision: whether the comparison passes the
//! gate, breaks it, or cannot tell, and the exit code that says so.

use super::{Label, Report};

/// A case the gate cannot decide (exit 3), and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsure {
    /// Index into [`Report::cases`].
    pub case: usize,
    /// True when it had too few repetitions to tell
    /// ([`super::CaseComparison::few_to_tell`]); false when its median is
    /// beyond the limit but its interval reaches back within it.
    pub few_repetitions: bool,
}

/// What `--fail-above` decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// No `--fail-above`: exit 0.
    NotAsked,
    /// No case broke the rule or may have: exit 0. `open` cases are
    /// `inconclusive` all the same (said on stderr).
    Passed { limit: f64, open: usize },
    /// No case broke the rule, but these may have: exit 3.
    Unsure { limit: f64, cases: Vec<Unsure> },
    /// These cases (indices into [`Report::cases`]) broke the rule:
    /// exit 1.
    Regressed { limit: f64, cases: Vec<usize> },
}

impl Gate {
    /// 0, 1 (a regression) or 3 (a slowdown beyond the limit that the data
    /// cannot confirm: a gate must not pass for lack of data).
    pub fn exit_code(&self) -> u8 {
        match self {
            Gate::NotAsked | Gate::Passed { .. } => 0,
            Gate::Regressed { .. } => 1,
            Gate::Unsure { .. } => 3,
        }
    }
}

/// The gate of `--fail-above` (`report.fail_above_pct`) on `report`.
pub fn gate(report: &Report) -> Gate {
    let Some(limit) = report.fail_above_pct else {
        return Gate::NotAsked;
    };
    let indices = |f: &dyn Fn(&super::CaseComparison) -> bool| -> Vec<usize> {
        (0..report.cases.len())
            .filter(|&i| f(&report.cases[i]))
            .collect()
    };
    let bad = indices(&|c| c.regressed(limit));
    if !bad.is_empty() {
        return Gate::Regressed { limit, cases: bad };
    }
    let unsure: Vec<Unsure> = indices(&|c| c.inconclusive(limit))
        .into_iter()
        .map(|case| Unsure {
            case,
            few_repetitions: report.cases[case].few_to_tell(limit),
        })
        .collect();
    if !unsure.is_empty() {
        return Gate::Unsure {
            limit,
            cases: unsure,
        };
    }
    let open = report
        .cases
        .iter()
        .filter(|c| c.label == Some(Label::Inconclusive))
        .count();
    Gate::Passed { limit, open }
}

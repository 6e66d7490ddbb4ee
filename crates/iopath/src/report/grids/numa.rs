//! The placement study's grid (the `numa` preset): every (CPU node, memory
//! node) pair of a label and pattern against local/local.

use super::Grid;
use crate::result::{CaseResult, RunResult};
use crate::stats::Comparison;

/// The placement study: every (CPU node, memory node) pair of a label and
/// pattern against local/local (the first pair), with the nodes the
/// workers and buffers were really on, and a sentence on whether placement
/// mattered.
pub(super) fn numa(r: &RunResult) -> Option<Grid> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for cases in pair_groups(r) {
        let Some(base) = cases.first().copied() else {
            continue;
        };
        let group = compared(base, &cases);
        rows.extend(group.rows);
        notes.push(words(base, &group.finding));
    }
    if let Some(n) = device_node_note(r) {
        notes.push(n);
    }
    (!rows.is_empty()).then(|| Grid {
        title: "placement: each (CPU node, memory node) pair against local/local".into(),
        header: [
            "case",
            "pattern",
            "pair",
            "MiB/s",
            "vs local/local (95% CI)",
            "real?",
            "placed (read back)",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, false, false, true, true, false, false],
        rows,
        notes,
    })
}

/// The placed cases by label and pattern, in the order they first
/// appear, each group's first (local/local) its baseline.
fn pair_groups(r: &RunResult) -> Vec<Vec<&CaseResult>> {
    let paired = || r.cases.iter().filter(|c| c.pair.is_some());
    let same = |a: &CaseResult, b: &CaseResult| a.label == b.label && a.pattern == b.pattern;
    let mut firsts: Vec<&CaseResult> = Vec::new();
    for c in paired() {
        if !firsts.iter().any(|f| same(f, c)) {
            firsts.push(c);
        }
    }
    firsts
        .iter()
        .map(|f| paired().filter(|c| same(f, c)).collect())
        .collect()
}

/// One pair against local/local.
struct PairVsBase {
    pair: String,
    k: Comparison,
}

/// A group of pairs against its baseline: their rows, and what they say.
struct Compared {
    rows: Vec<Vec<String>>,
    finding: Finding,
}

/// What a group's pairs say about placement.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Finding {
    /// local/local did not run, so nothing is compared.
    NoBaseline,
    /// Only one pair ran (one NUMA node with CPUs and memory).
    OnePair,
    /// The slowest pair whose difference from local/local is real.
    Matters {
        pair: String,
        k: Comparison,
    },
    /// The slowest pair measured, with too few repetitions to call it real.
    Undersampled {
        pair: String,
        k: Comparison,
    },
    /// Every pair's interval overlaps local/local's.
    NoDifference,
    NotMeasured,
}

/// Every pair of a group against its baseline (`base`, the first).
fn compared(base: &CaseResult, cases: &[&CaseResult]) -> Compared {
    let base_bw = base.samples(|m| m.bw_bytes_per_s);
    let mut rows = Vec::new();
    let mut pairs: Vec<PairVsBase> = Vec::new();
    for c in cases {
        let is_base = std::ptr::eq(*c, base);
        let cmp = against(&base_bw, c);
        rows.push(pair_row(c, is_base, cmp.as_ref()));
        if let (Some(k), false) = (cmp, is_base) {
            pairs.push(PairVsBase {
                pair: c.pair.clone().unwrap_or_default(),
                k,
            });
        }
    }
    Compared {
        rows,
        finding: finding(base, cases.len(), &pairs),
    }
}

/// The groups' findings, in order (what their notes say).
#[cfg(test)]
pub(super) fn findings(r: &RunResult) -> Vec<Finding> {
    pair_groups(r)
        .iter()
        .filter_map(|cases| Some(compared(cases.first()?, cases).finding))
        .collect()
}

/// `c`'s throughput against the baseline's, with the verdict's margin:
/// differences inside 3% are not real.
fn against(base_bw: &[f64], c: &CaseResult) -> Option<Comparison> {
    let bw = c.samples(|m| m.bw_bytes_per_s);
    crate::stats::compare(base_bw, &bw).map(|mut k| {
        if crate::stats::within_margin(k.ratio_ci95) {
            k.distinct = false;
        }
        k
    })
}

/// A pair's row: its MiB/s, its ratio to local/local with the interval,
/// whether the difference is real, where it ran.
fn pair_row(c: &CaseResult, is_base: bool, cmp: Option<&Comparison>) -> Vec<String> {
    let (vs, real) = match (cmp, is_base) {
        (_, true) => ("baseline".to_string(), String::new()),
        (Some(k), false) => (
            format!(
                "{:.2}x ({:.2}-{:.2}x)",
                k.ratio, k.ratio_ci95[0], k.ratio_ci95[1]
            ),
            if k.distinct {
                "yes".into()
            } else if k.undersampled {
                "too few repetitions".into()
            } else {
                "no (intervals overlap)".into()
            },
        ),
        (None, false) => ("-".into(), "-".into()),
    };
    vec![
        c.label.clone().unwrap_or_default(),
        c.pattern.to_string(),
        c.pair.clone().unwrap_or_default(),
        c.summary.as_ref().map_or("-".into(), |s| {
            format!("{:.1}", s.bw_bytes_per_s / 1048576.0)
        }),
        vs,
        real,
        c.placement.as_ref().map_or("-".into(), |p| p.short()),
    ]
}

/// What the pairs of a group of `n` say: the verdict names the slowest
/// pair whose difference is real, else the slowest measured.
fn finding(base: &CaseResult, n: usize, compared: &[PairVsBase]) -> Finding {
    let slowest = |real_only: bool| {
        compared
            .iter()
            .filter(|p| !real_only || p.k.distinct)
            .min_by(|a, b| a.k.ratio.total_cmp(&b.k.ratio))
    };
    if base.summary.is_none() {
        return Finding::NoBaseline;
    }
    match (n, slowest(true).or(slowest(false))) {
        (1, _) => Finding::OnePair,
        (_, Some(PairVsBase { pair, k })) if k.distinct => Finding::Matters {
            pair: pair.clone(),
            k: *k,
        },
        (_, Some(PairVsBase { pair, k })) if k.undersampled => Finding::Undersampled {
            pair: pair.clone(),
            k: *k,
        },
        (_, Some(_)) => Finding::NoDifference,
        (_, None) => Finding::NotMeasured,
    }
}

/// The sentence under a group: whether placement mattered.
fn words(base: &CaseResult, finding: &Finding) -> String {
    let what = format!(
        "{}{}",
        base.label
            .as_ref()
            .map(|l| format!("{l}, "))
            .unwrap_or_default(),
        base.pattern
    );
    match finding {
        Finding::NoBaseline => {
            format!("{what}: local/local did not run, so nothing is compared.")
        }
        Finding::OnePair => format!(
            "{what}: one NUMA node here (or one with CPUs and memory): nothing to compare; the case ran {}.",
            base.placement.as_ref().map_or("where the scheduler put it".into(), |p| p.short())
        ),
        Finding::Matters { pair, k } => format!(
            "{what}: placement matters here: {pair} ran at {:.2}x local/local (95% CI {:.2}-{:.2}x).",
            k.ratio, k.ratio_ci95[0], k.ratio_ci95[1]
        ),
        Finding::Undersampled { pair, k } => format!(
            "{what}: {pair} measured {:.2}x local/local, too few repetitions to call that real (--repeat 6 or more).",
            k.ratio
        ),
        Finding::NoDifference => format!(
            "{what}: placement made no measurable difference here (every pair's interval overlaps local/local's)."
        ),
        Finding::NotMeasured => format!("{what}: not measured."),
    }
}

/// On a machine of several nodes whose kernel does not say which one the
/// device is on, "local" is only the first node with CPUs.
fn device_node_note(r: &RunResult) -> Option<String> {
    let unknown_device = r
        .cases
        .iter()
        .filter(|c| c.pair.is_some())
        .filter_map(|c| c.placement.as_ref())
        .any(|p| p.device_node.is_none());
    let several = r
        .system
        .topology
        .as_ref()
        .is_some_and(|t| t.nodes.len() > 1);
    (unknown_device && several).then(|| {
        "The kernel does not say which NUMA node the device is on: \"local\" is the first node with CPUs, not necessarily the device's.".into()
    })
}

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
        let base_bw = base.samples(|m| m.bw_bytes_per_s);
        // Every pair against the baseline: the verdict names the slowest
        // pair whose difference is real, else the slowest measured.
        let mut compared: Vec<PairVsBase> = Vec::new();
        for c in &cases {
            let is_base = std::ptr::eq(*c, base);
            let cmp = against(&base_bw, c);
            rows.push(pair_row(c, is_base, cmp.as_ref()));
            if let (Some(k), false) = (cmp, is_base) {
                compared.push(PairVsBase {
                    pair: c.pair.clone().unwrap_or_default(),
                    k,
                });
            }
        }
        notes.push(note(base, cases.len(), &compared));
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

/// The sentence under a group: whether placement mattered, naming the
/// slowest pair whose difference is real, else the slowest measured.
fn note(base: &CaseResult, n: usize, compared: &[PairVsBase]) -> String {
    let what = format!(
        "{}{}",
        base.label
            .as_ref()
            .map(|l| format!("{l}, "))
            .unwrap_or_default(),
        base.pattern
    );
    let slowest = |real_only: bool| {
        compared
            .iter()
            .filter(|p| !real_only || p.k.distinct)
            .min_by(|a, b| a.k.ratio.total_cmp(&b.k.ratio))
    };
    let worst = slowest(true).or(slowest(false));
    if base.summary.is_none() {
        return format!("{what}: local/local did not run, so nothing is compared.");
    }
    match (n, worst) {
        (1, _) => format!(
            "{what}: one NUMA node here (or one with CPUs and memory): nothing to compare; the case ran {}.",
            base.placement.as_ref().map_or("where the scheduler put it".into(), |p| p.short())
        ),
        (_, Some(PairVsBase { pair, k })) if k.distinct => format!(
            "{what}: placement matters here: {pair} ran at {:.2}x local/local (95% CI {:.2}-{:.2}x).",
            k.ratio, k.ratio_ci95[0], k.ratio_ci95[1]
        ),
        (_, Some(PairVsBase { pair, k })) if k.undersampled => format!(
            "{what}: {pair} measured {:.2}x local/local, too few repetitions to call that real (--repeat 6 or more).",
            k.ratio
        ),
        (_, Some(_)) => format!(
            "{what}: placement made no measurable difference here (every pair's interval overlaps local/local's)."
        ),
        (_, None) => format!("{what}: not measured."),
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

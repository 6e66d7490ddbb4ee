//! One case of the comparison: its measured samples in each run of each
//! side, and the test applied to them ([`test::within_run`] with one run
//! a side, [`test::between_runs`] otherwise).

use super::test::{self, Test};
use super::{CaseComparison, Matched, Status, Unmeasured};
use crate::result::{median, CaseResult};

/// A case's measured throughput and p99 samples in one run, or why there
/// are none.
struct Measured {
    bw: Vec<f64>,
    p99: Vec<f64>,
    /// Median `device_fraction`; `None` without a block device.
    device_fraction: Option<f64>,
}

fn measured(c: &CaseResult) -> Result<Measured, Unmeasured> {
    if let Some(why) = &c.skipped {
        return Err(Unmeasured::Skipped { why: why.clone() });
    }
    if let Some(err) = &c.error {
        return Err(Unmeasured::Failed { error: err.clone() });
    }
    let bw = c.samples(|m| m.bw_bytes_per_s);
    if bw.is_empty() {
        return Err(Unmeasured::NoRepetitions);
    }
    if median(&mut bw.clone()) <= 0.0 {
        return Err(Unmeasured::NoThroughput);
    }
    let p99 = c.samples(|m| m.lat_ns.p99 as f64);
    let mut fractions: Vec<f64> = c
        .measured()
        .iter()
        .filter_map(|m| m.device_fraction)
        .collect();
    let device_fraction = (!fractions.is_empty()).then(|| median(&mut fractions));
    Ok(Measured {
        bw,
        p99,
        device_fraction,
    })
}

/// One side of one case: the runs where it was measured, or why none.
struct SideCase {
    present: bool,
    runs: Vec<Measured>,
    why: Option<Unmeasured>,
}

impl SideCase {
    fn of(cases: &[&CaseResult]) -> SideCase {
        let mut runs = Vec::new();
        let mut why = None;
        for c in cases {
            match measured(c) {
                Ok(m) => runs.push(m),
                Err(e) => {
                    why.get_or_insert(e);
                }
            }
        }
        SideCase {
            present: !cases.is_empty(),
            runs,
            why,
        }
    }

    fn run_medians(&self) -> Vec<f64> {
        self.runs
            .iter()
            .map(|m| median(&mut m.bw.clone()))
            .collect()
    }

    /// The one run's median, or the geometric mean of the runs' medians.
    fn center(&self) -> Option<f64> {
        let m = self.run_medians();
        match m.len() {
            0 => None,
            1 => Some(m[0]),
            n => Some((m.iter().map(|x| x.ln()).sum::<f64>() / n as f64).exp()),
        }
    }

    fn n(&self) -> usize {
        self.runs.iter().map(|m| m.bw.len()).sum()
    }

    fn device_fraction(&self) -> Option<f64> {
        self.runs
            .iter()
            .filter_map(|m| m.device_fraction)
            .reduce(f64::max)
    }

    fn p99(&self) -> Option<u64> {
        let mut all: Vec<f64> = self.runs.iter().flat_map(|m| m.p99.clone()).collect();
        (!all.is_empty()).then(|| median(&mut all).round() as u64)
    }
}

/// A case's figures on each side, not yet compared.
fn figures(m: &Matched, sa: &SideCase, sb: &SideCase) -> CaseComparison {
    let c = m.a.first().or(m.b.first()).expect("a case is in some run");
    CaseComparison {
        method: c.method.clone(),
        arm: m.key.arm,
        name: c.name(),
        job: c.job(),
        queue_depth_effective: c.queue_depth,
        status: Status::NotMeasured,
        label: None,
        test: None,
        ratio: None,
        ratio_ci95: None,
        drift_allowance_pct: None,
        a_median_bw_bytes_per_s: sa.center(),
        b_median_bw_bytes_per_s: sb.center(),
        a_runs: sa.runs.len(),
        b_runs: sb.runs.len(),
        a_n: sa.n(),
        b_n: sb.n(),
        a_p99_ns: sa.p99(),
        b_p99_ns: sb.p99(),
        a_device_fraction: sa.device_fraction(),
        b_device_fraction: sb.device_fraction(),
        a_not_measured: None,
        b_not_measured: None,
        undersampled: false,
    }
}

pub(super) fn compare_case(m: &Matched, drift_pct: f64, margin_pct: f64) -> CaseComparison {
    let (sa, sb) = (SideCase::of(&m.a), SideCase::of(&m.b));
    let mut out = figures(m, &sa, &sb);
    if !sb.present {
        out.status = Status::OnlyInA;
        return out;
    }
    if !sa.present {
        out.status = Status::OnlyInB;
        return out;
    }
    let (ra, rb) = (sa.runs.len(), sb.runs.len());
    if ra == 0 || rb == 0 {
        // Each side's first reason, where that side has no measured run.
        out.a_not_measured = sa.why.filter(|_| ra == 0);
        out.b_not_measured = sb.why.filter(|_| rb == 0);
        return out;
    }
    let margin = margin_pct / 100.0;
    let outcome = if ra == 1 && rb == 1 {
        test::within_run(&sa.runs[0].bw, &sb.runs[0].bw, drift_pct / 100.0, margin)
    } else {
        test::between_runs(&sa.run_medians(), &sb.run_medians(), margin)
    };
    // `None` is not reached (every run measured has a positive median);
    // the case would stay `not_measured`, with no reason on either side.
    if let Some(o) = outcome {
        out.status = Status::Compared;
        out.label = Some(o.label);
        out.test = Some(o.test);
        out.ratio = Some(o.ratio);
        out.ratio_ci95 = Some(o.ci95);
        out.undersampled = o.undersampled;
        if o.test == Test::WithinRun {
            out.drift_allowance_pct = Some(drift_pct);
        }
    }
    out
}

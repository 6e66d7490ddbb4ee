//! Unit tests of loading, matching, labels, the fail rule and the text.

use super::load::default_names;
use super::render::pct;
use super::*;
use crate::result::{CaseResult, Latency, Measurement, RunConfig, Tool, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

const MB: f64 = 1024.0 * 1024.0;

/// A measured case with these throughputs (MiB/s) and p99 100 us.
fn case(method: &str, pattern: &str, rwmix: Option<u8>, mibs: &[f64]) -> CaseResult {
    CaseResult {
        method: method.into(),
        pattern: pattern.into(),
        block_size: 4096,
        queue_depth: 32,
        queue_depth_requested: 32,
        threads: 1,
        sync: "end".into(),
        rwmix_read_pct: rwmix,
        repetitions: mibs
            .iter()
            .map(|&m| Measurement {
                bw_bytes_per_s: m * MB,
                lat_ns: Latency {
                    p99: 100_000,
                    ..Latency::default()
                },
                ..Measurement::default()
            })
            .collect(),
        ..CaseResult::default()
    }
}

fn run(cases: Vec<CaseResult>) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "iopath".into(),
            version: "0.1.0".into(),
        },
        started_at: "2026-01-01T00:00:00Z".into(),
        finished_at: None,
        command: "iopath run".into(),
        interrupted: false,
        system: crate::sysinfo::System::default(),
        target: None,
        config: RunConfig {
            preset: None,
            whole_pass: false,
            cache_limit: None,
            time_limit_ns: Some(150_000_000),
            io_size_bytes: None,
            repeat: Some(8),
            ci_target: None,
            max_time_ns: None,
            warmup: 0,
            schedule: None,
            order_seed: None,
            interval_ns: 100_000_000,
            seed: 1,
            cache: "cold".into(),
            data: "random".into(),
        },
        probe: Vec::new(),
        cases,
        warnings: Vec::new(),
        verdicts: Vec::new(),
    }
}

fn side(name: &str) -> Side {
    Side {
        path: name.into(),
        name: name.into(),
        started_at: String::new(),
        command: String::new(),
        paths: vec![name.into()],
    }
}

/// One run a side, drift allowance 0 (the repetitions' own test).
fn report(a: Vec<CaseResult>, b: Vec<CaseResult>, fail: Option<f64>) -> Report {
    compare(&[run(a)], &[run(b)], side("A"), side("B"), fail, 0.0)
}

const BASE: [f64; 8] = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.4];

fn times(f: f64) -> Vec<f64> {
    BASE.iter().map(|x| x * f).collect()
}

/// The keys of the matched pairs of two single runs.
fn keys(a: Vec<CaseResult>, b: Vec<CaseResult>) -> Vec<(Option<Key>, Option<Key>)> {
    let (ra, rb) = ([run(a)], [run(b)]);
    match_runs(&ra, &rb)
        .iter()
        .map(|m| {
            (
                m.a.first().map(|c| Key::of(c)),
                m.b.first().map(|c| Key::of(c)),
            )
        })
        .collect()
}

#[test]
fn cases_match_on_every_part_of_the_key_including_rwmix() {
    let a = vec![
        case("uring", "randrw", Some(50), &BASE),
        case("uring", "randrw", Some(70), &BASE),
        case("uring", "randread", None, &BASE),
    ];
    let mut other_bs = case("uring", "randread", None, &BASE);
    other_bs.block_size = 8192;
    let b = vec![
        case("uring", "randrw", Some(70), &BASE),
        other_bs,
        case("direct", "randrw", Some(50), &BASE),
    ];
    let keys = keys(a.clone(), b.clone());
    assert_eq!(keys.len(), 5, "{keys:?}");
    // A's order first: rwmix 50 has no match (B's is another method),
    // rwmix 70 matches rwmix 70, randread 4k finds no 4k in B.
    assert!(keys[0].1.is_none());
    assert_eq!(keys[1].0, keys[1].1);
    assert_eq!(keys[1].1.as_ref().unwrap().job.rwmix_read_pct, Some(70));
    assert!(keys[2].1.is_none());
    // Then B's unmatched cases, in B's order.
    assert!(keys[3].0.is_none() && keys[3].1.as_ref().unwrap().job.block_size == 8192);
    assert!(keys[4].0.is_none() && keys[4].1.as_ref().unwrap().method == "direct");

    let r = report(a, b, None);
    let st: Vec<Status> = r.cases.iter().map(|c| c.status).collect();
    use Status::*;
    assert_eq!(st, [OnlyInA, Compared, OnlyInA, OnlyInB, OnlyInB]);
    assert_eq!(r.cases[1].job.rwmix_read_pct, Some(70));
    assert_eq!(r.cases[0].reason.as_deref(), Some("only in A"));
    assert_eq!(r.cases[3].reason.as_deref(), Some("only in B"));
}

#[test]
fn matching_uses_the_requested_depth_and_sync() {
    // A synchronous method asked for 32 ran at 1: still the same case.
    let mut a = case("buffered", "randread", None, &BASE);
    a.queue_depth = 1;
    let mut b_depth = case("buffered", "randread", None, &BASE);
    b_depth.queue_depth_requested = 8;
    b_depth.queue_depth = 1;
    let mut b_sync = case("buffered", "randread", None, &BASE);
    b_sync.sync = "dsync".into();
    let b_same = case("buffered", "randread", None, &BASE);
    let (ra, rb) = (
        [run(vec![a])],
        [run(vec![b_depth.clone(), b_sync.clone(), b_same.clone()])],
    );
    let m = match_runs(&ra, &rb);
    assert_eq!(m.len(), 3);
    assert_eq!(m[0].b, [&rb[0].cases[2]]);
    assert_eq!(m[1].a.len(), 0);
    assert_eq!(m[1].b, [&rb[0].cases[0]]);
    assert_eq!(m[2].b, [&rb[0].cases[1]]);
}

#[test]
fn arms_and_preset_labels_are_part_of_the_key() {
    // `--methods direct,direct`: `direct` and `direct#2` are two cases.
    let mut arm2 = case("direct", "randread", None, &times(0.5));
    arm2.arm = Some(2);
    let mut arm1 = case("direct", "randread", None, &BASE);
    arm1.arm = Some(1);
    let a = vec![case("direct", "randread", None, &BASE), arm2.clone()];
    // B lists the second arm first, and names the first arm explicitly.
    let b = vec![arm2, arm1];
    let r = report(a, b, None);
    assert_eq!(r.cases.len(), 2, "{:?}", r.cases);
    assert_eq!(r.cases[0].name, "direct");
    assert_eq!(r.cases[0].arm, None);
    assert_eq!(r.cases[1].name, "direct#2");
    assert_eq!(r.cases[1].arm, Some(2));
    assert!(r.cases.iter().all(|c| c.label == Some(Label::NoChange)));
    // A preset's label is part of the job: same figures, other label.
    let mut seq = case("uring", "read", None, &BASE);
    seq.label = Some("SEQ1M Q8T1".into());
    let mut other = seq.clone();
    other.label = Some("SEQ1M Q1T1".into());
    let r = report(vec![seq.clone()], vec![other], None);
    let st: Vec<Status> = r.cases.iter().map(|c| c.status).collect();
    assert_eq!(st, [Status::OnlyInA, Status::OnlyInB]);
    assert_eq!(report(vec![seq.clone()], vec![seq], None).cases.len(), 1);
}

#[test]
fn the_job_shown_is_the_one_that_ran() {
    let mut direct = case("direct", "randread", None, &BASE);
    direct.queue_depth = 1;
    let r = report(vec![direct.clone()], vec![direct], None);
    let c = &r.cases[0];
    assert_eq!(c.job(), "randread 4k Q1T1");
    assert_eq!(c.job.queue_depth, 32, "the key keeps the depth asked for");
    assert_eq!(c.queue_depth_effective, 1);
    assert!(
        render(&r).contains("│ direct ┆ randread 4k Q1T1 "),
        "{}",
        render(&r)
    );
    let j = serde_json::to_value(c).unwrap();
    assert_eq!(
        (
            j["queue_depth"].as_u64(),
            j["queue_depth_effective"].as_u64()
        ),
        (Some(32), Some(1))
    );
}

#[test]
fn a_key_twice_in_a_file_matches_in_order() {
    let a = [
        case("null", "read", None, &[1.0]),
        case("null", "read", None, &[2.0]),
    ];
    let b = [
        case("null", "read", None, &[3.0]),
        case("null", "read", None, &[4.0]),
    ];
    let (ra, rb) = ([run(a.to_vec())], [run(b.to_vec())]);
    let m = match_runs(&ra, &rb);
    assert_eq!(m.len(), 2);
    assert!(std::ptr::eq(m[0].b[0], &rb[0].cases[0]));
    assert!(std::ptr::eq(m[1].b[0], &rb[0].cases[1]));
}

fn one(a: &[f64], b: &[f64]) -> CaseComparison {
    let r = report(
        vec![case("uring", "randread", None, a)],
        vec![case("uring", "randread", None, b)],
        None,
    );
    assert_eq!(r.cases.len(), 1);
    r.cases[0].clone()
}

#[test]
fn one_run_a_side_labels_follow_the_repetitions_test() {
    let faster = one(&BASE, &times(1.2));
    assert_eq!(faster.status, Status::Compared);
    assert_eq!(faster.test, Some(Test::WithinRun));
    assert_eq!(faster.label, Some(Label::Faster));
    assert!((faster.ratio.unwrap() - 1.2).abs() < 1e-9);
    let ci = faster.ratio_ci95.unwrap();
    assert!(
        ci[0] > 1.15 && ci[0] <= 1.2 && ci[1] >= 1.2 && ci[1] < 1.25,
        "{ci:?}"
    );
    let slower = one(&BASE, &times(0.8));
    assert_eq!(slower.label, Some(Label::Slower));
    // 5% apart in the medians but overlapping: no change.
    let wide_a = [80.0, 90.0, 100.0, 110.0, 120.0, 95.0, 105.0, 100.0];
    let wide_b: Vec<f64> = wide_a.iter().map(|x| x * 0.95).collect();
    assert_eq!(one(&wide_a, &wide_b).label, Some(Label::NoChange));
    // One repetition each: never real, however far apart.
    let few = one(&[100.0], &[50.0]);
    assert_eq!(few.label, Some(Label::NoChange));
    assert_eq!((few.a_n, few.b_n), (1, 1));
}

#[test]
fn one_run_a_side_is_widened_by_the_drift_allowance() {
    let a = run(vec![case("uring", "randread", None, &BASE)]);
    let b = run(vec![case("uring", "randread", None, &times(0.85))]);
    let at = |drift: f64, fail: Option<f64>| {
        compare(
            std::slice::from_ref(&a),
            std::slice::from_ref(&b),
            side("A"),
            side("B"),
            fail,
            drift,
        )
    };
    let bare = at(0.0, None).cases[0].clone();
    let wide = at(10.0, None).cases[0].clone();
    assert_eq!(wide.drift_allowance_pct, Some(10.0));
    let (c0, c1) = (bare.ratio_ci95.unwrap(), wide.ratio_ci95.unwrap());
    assert!((c1[0] - c0[0] / 1.1).abs() < 1e-12 && (c1[1] - c0[1] * 1.1).abs() < 1e-12);
    assert_eq!(
        wide.label,
        Some(Label::Slower),
        "15% is beyond 10% of drift"
    );
    assert_eq!(at(20.0, None).cases[0].label, Some(Label::NoChange));
    // The fail rule uses the widened bound: 0.85 * 1.1 ~ 0.94.
    assert_eq!(at(0.0, Some(10.0)).regressions, 1);
    assert_eq!(at(10.0, Some(10.0)).regressions, 0);
    assert_eq!(at(10.0, Some(5.0)).regressions, 1);
    let r = at(10.0, None);
    assert!(r.one_run_per_side());
    let text = render(&r);
    assert!(
        text.contains("One run per side cannot separate a change from run-to-run drift")
            && text.contains(
                "allowance of 10% (--drift: its ends divided and multiplied by 1 + that)"
            ),
        "{text}"
    );
    assert!(change_text(&r.cases[0]).contains("×/÷1.10 drift allowed"));
}

#[test]
fn several_runs_a_side_are_compared_between_runs() {
    // Each run is tight inside, but the runs drift by several percent: the
    // repetitions alone would call every pair different.
    let runs = |scales: &[f64]| -> Vec<RunResult> {
        scales
            .iter()
            .map(|&s| run(vec![case("uring", "randread", None, &times(s))]))
            .collect()
    };
    let a = runs(&[1.0, 1.06, 0.95]);
    let same = runs(&[1.03, 0.97, 1.01]);
    let r = compare(&a, &same, side("A"), side("B"), Some(5.0), 10.0);
    let c = &r.cases[0];
    assert_eq!(c.test, Some(Test::BetweenRuns));
    assert_eq!((c.a_runs, c.b_runs, c.a_n, c.b_n), (3, 3, 24, 24));
    assert_eq!(c.label, Some(Label::NoChange), "{:?}", c.ratio_ci95);
    assert_eq!(
        c.drift_allowance_pct, None,
        "drift is measured, not allowed"
    );
    assert_eq!(r.regressions, 0);
    assert!(!r.one_run_per_side());
    // The geometric mean of the run medians.
    let gm = (1.0f64 * 1.06 * 0.95).powf(1.0 / 3.0) * 100.1 * MB;
    assert!((c.a_median_bw_bytes_per_s.unwrap() - gm).abs() < 1.0);
    // But run 1 of A alone against run 3 of A alone is a "change".
    let pair = compare(&a[..1], &a[2..], side("A"), side("B"), None, 0.0);
    assert_eq!(pair.cases[0].label, Some(Label::Slower));

    let slow = runs(&[0.6, 0.63, 0.58]);
    let r = compare(&a, &slow, side("A"), side("B"), Some(5.0), 10.0);
    assert_eq!(r.cases[0].label, Some(Label::Slower));
    assert_eq!(r.regressions, 1);
    let text = render(&r);
    assert!(text.contains("Welch"), "{text}");
    assert!(text.contains("3x8"), "{text}");
    assert!(!text.contains("One run per side"), "{text}");
    assert!(change_text(&r.cases[0]).contains("between 3 and 3 runs"));
    // Several against one: the several give the spread.
    let r = compare(&a, &slow[..1], side("A"), side("B"), Some(5.0), 10.0);
    assert_eq!(r.cases[0].test, Some(Test::BetweenRuns));
    assert_eq!(r.regressions, 1);
}

#[test]
fn a_case_measured_in_some_runs_only_uses_those() {
    let mut failed = case("uring", "randread", None, &BASE);
    failed.error = Some("EIO".into());
    let a = [
        run(vec![case("uring", "randread", None, &BASE)]),
        run(vec![failed.clone()]),
    ];
    let b = [
        run(vec![failed.clone()]),
        run(vec![case("uring", "randread", None, &times(0.5))]),
    ];
    let r = compare(&a, &b, side("A"), side("B"), None, 0.0);
    let c = &r.cases[0];
    assert_eq!((c.a_runs, c.b_runs), (1, 1));
    assert_eq!(c.test, Some(Test::WithinRun));
    assert_eq!(c.label, Some(Label::Slower));
    let r = compare(&a[1..], &b[..1], side("A"), side("B"), None, 0.0);
    assert_eq!(
        r.cases[0].reason.as_deref(),
        Some("not measured in A or B: failed: EIO")
    );
}

#[test]
fn other_traffic_on_bs_disk_makes_a_one_run_slowdown_inconclusive() {
    let with_fraction = |f: f64, scale: f64| {
        let mut c = case("direct", "randread", None, &times(scale));
        for m in &mut c.repetitions {
            m.device_fraction = Some(f);
        }
        c
    };
    let busy = compare(
        &[run(vec![with_fraction(1.0, 1.0)])],
        &[run(vec![with_fraction(12.0, 0.5)])],
        side("A"),
        side("B"),
        Some(5.0),
        0.0,
    );
    let c = &busy.cases[0];
    assert_eq!(c.b_device_fraction, Some(12.0));
    assert!(c.beyond(5.0) && c.b_disturbed());
    assert!(!c.regressed(5.0) && c.inconclusive(5.0));
    assert_eq!(busy.regressions, 0);
    assert!(
        busy.notes.iter().any(
            |n| n.starts_with("other traffic shared the disk during B's direct")
                && n.contains("12.0x")
        ),
        "{:?}",
        busy.notes
    );
    // A quiet disk (2x: read-ahead, metadata): an ordinary regression.
    let quiet = compare(
        &[run(vec![with_fraction(1.0, 1.0)])],
        &[run(vec![with_fraction(2.0, 0.5)])],
        side("A"),
        side("B"),
        Some(5.0),
        0.0,
    );
    assert!(quiet.cases[0].regressed(5.0) && !quiet.cases[0].inconclusive(5.0));
    assert!(quiet.notes.is_empty(), "{:?}", quiet.notes);
    // Between runs the drift is in the interval: still exit 1.
    let a = [
        run(vec![with_fraction(1.0, 1.0)]),
        run(vec![with_fraction(1.0, 1.02)]),
    ];
    let b = [
        run(vec![with_fraction(12.0, 0.5)]),
        run(vec![with_fraction(12.0, 0.51)]),
    ];
    let r = compare(&a, &b, side("A"), side("B"), Some(5.0), 0.0);
    assert!(r.cases[0].regressed(5.0));
    assert_eq!(r.regressions, 1);
}

#[test]
fn medians_counts_and_p99_are_reported() {
    let mut b = case("uring", "randread", None, &times(0.5));
    for m in &mut b.repetitions {
        m.lat_ns.p99 = 250_000;
    }
    // A warm-up is recorded, not counted.
    b.repetitions.push(Measurement {
        bw_bytes_per_s: 1.0,
        warmup: true,
        ..Measurement::default()
    });
    let r = report(vec![case("uring", "randread", None, &BASE)], vec![b], None);
    let c = &r.cases[0];
    assert_eq!((c.a_n, c.b_n), (8, 8));
    assert_eq!(c.a_p99_ns, Some(100_000));
    assert_eq!(c.b_p99_ns, Some(250_000));
    assert!((c.a_median_bw_bytes_per_s.unwrap() - 100.1 * MB).abs() < 1.0);
    assert!((c.b_median_bw_bytes_per_s.unwrap() - 50.05 * MB).abs() < 1.0);
}

#[test]
fn skipped_failed_and_empty_cases_are_not_measured_with_the_reason() {
    let mut skipped = case("uring-iopoll", "randread", None, &[]);
    skipped.skipped = Some("no poll queues".into());
    let mut failed = case("aio", "randread", None, &BASE);
    failed.error = Some("EIO".into());
    let empty = case("mmap", "randread", None, &[]);
    let mut zero = case("null", "randread", None, &[0.0, 0.0]);
    zero.repetitions[0].lat_ns.p99 = 5;
    let a = vec![
        skipped.clone(),
        case("aio", "randread", None, &BASE),
        empty.clone(),
        zero,
    ];
    let b = vec![
        skipped,
        failed,
        case("mmap", "randread", None, &BASE),
        case("null", "randread", None, &BASE),
    ];
    let r = report(a, b, Some(1.0));
    assert!(r.cases.iter().all(|c| c.status == Status::NotMeasured));
    assert!(r
        .cases
        .iter()
        .all(|c| c.label.is_none() && c.ratio.is_none()));
    let why: Vec<&str> = r
        .cases
        .iter()
        .map(|c| c.reason.as_deref().unwrap())
        .collect();
    assert_eq!(why[0], "not measured in A or B: skipped: no poll queues");
    assert_eq!(why[1], "not measured in B: failed: EIO");
    assert_eq!(why[2], "not measured in A: no measured repetitions");
    assert_eq!(why[3], "not measured in A: no throughput (median 0 B/s)");
    // The measured side still shows its figures.
    assert_eq!(r.cases[1].a_n, 8);
    assert!(r.cases[1].a_median_bw_bytes_per_s.is_some());
    assert_eq!(r.cases[1].b_n, 0);
    assert!(r.cases[1].b_median_bw_bytes_per_s.is_none());
    assert_eq!(r.regressions, 0);
    let text = render(&r);
    assert!(text.contains("not measured in B"), "{text}");
    assert!(text.contains("failed: EIO"), "{text}");
}

#[test]
fn the_fail_rule_needs_the_intervals_bound_beyond_the_limit() {
    let slower = one(&BASE, &times(0.8));
    let hi = slower.ratio_ci95.unwrap()[1];
    assert!(hi > 0.8 && hi < 0.81, "{hi}");
    assert!(slower.regressed(10.0));
    assert!(slower.regressed((1.0 - hi) * 100.0 - 0.1));
    // The median is 20% down, but the bound is not: no regression at 19.5%.
    assert!(!slower.regressed((1.0 - hi) * 100.0 + 0.1));
    assert!(!slower.regressed(21.0));
    assert!(!one(&BASE, &times(1.5)).regressed(10.0), "faster");
    // A 50% drop that is not statistically real is not a regression.
    let noisy = one(&[100.0], &[50.0]);
    assert!(noisy.ratio.unwrap() < 0.6);
    assert!(!noisy.regressed(10.0));
    // ... but with too few repetitions to tell it is inconclusive, not a
    // pass: 3 against 3, every B below every A, 40% down.
    let few = one(&[100.0, 101.0, 99.0], &[60.0, 61.0, 59.0]);
    assert!(!few.regressed(10.0));
    assert!(few.inconclusive(10.0));
    assert!(!few.inconclusive(50.0), "within the limit");
    assert!(!slower.inconclusive(10.0), "enough repetitions: decided");
    // With a drift allowance, the median must be beyond the limit after it.
    let mut drifted = few.clone();
    drifted.drift_allowance_pct = Some(30.0);
    assert!(!drifted.inconclusive(25.0), "0.6 * 1.3 = 0.78: within 25%");
    assert!(drifted.inconclusive(10.0));
    // The count: with the limit, cases over it; without, every slower one.
    let a = vec![
        case("uring", "randread", None, &BASE),
        case("aio", "randread", None, &BASE),
        case("mmap", "randread", None, &BASE),
    ];
    let b = vec![
        case("uring", "randread", None, &times(0.8)),
        case("aio", "randread", None, &times(0.95)),
        case("mmap", "randread", None, &times(1.3)),
    ];
    assert_eq!(report(a.clone(), b.clone(), Some(10.0)).regressions, 1);
    assert_eq!(report(a.clone(), b.clone(), Some(3.0)).regressions, 2);
    assert_eq!(report(a.clone(), b.clone(), Some(30.0)).regressions, 0);
    assert_eq!(report(a, b, None).regressions, 2);
}

#[test]
fn percentages_parse_with_their_bounds() {
    assert_eq!(parse_fail_above("5"), Ok(5.0));
    assert_eq!(parse_fail_above("5%"), Ok(5.0));
    assert_eq!(parse_fail_above(" 2.5 % "), Ok(2.5));
    for bad in [
        "0", "0%", "100", "100%", "-5", "abc", "", "%", "nan", "inf", "5%%",
    ] {
        assert!(parse_fail_above(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_drift("0"), Ok(0.0));
    assert_eq!(parse_drift("8%"), Ok(8.0));
    for bad in ["-1", "100", "nan", "x", ""] {
        assert!(parse_drift(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_sides_split_at_the_double_dash() {
    let p = |s: &[&str]| s.iter().map(PathBuf::from).collect::<Vec<_>>();
    assert_eq!(sides(&p(&["a", "b"]), &[]).unwrap(), (p(&["a"]), p(&["b"])));
    assert_eq!(
        sides(&p(&["a1", "a2"]), &p(&["b1"])).unwrap(),
        (p(&["a1", "a2"]), p(&["b1"]))
    );
    assert!(sides(&p(&["a"]), &[])
        .unwrap_err()
        .0
        .contains("a result for each side"));
    let e = sides(&p(&["a", "b", "c"]), &[]).unwrap_err().0;
    assert!(e.contains("3 files and no `--`"), "{e}");
    let e = sides(&p(&["a"]), &p(&["b", "--fail-above", "5"]))
        .unwrap_err()
        .0;
    assert!(e.starts_with("--fail-above comes after `--`"), "{e}");
}

#[test]
fn percentages_and_intervals_read_as_changes() {
    assert_eq!(pct(0.876), "-12.4%");
    assert_eq!(pct(1.5), "+50.0%");
    assert_eq!(pct(1.0004), "0.0%");
    assert_eq!(pct(f64::NAN), "?");
    let c = CaseComparison {
        ratio: Some(0.876),
        ratio_ci95: Some([0.85, 0.902]),
        ..one(&BASE, &BASE)
    };
    assert_eq!(change_text(&c), "-12.4% (95% CI -15.0% to -9.8%)");
}

#[test]
fn differences_between_the_runs_become_notes() {
    let a = run(vec![case("null", "read", None, &BASE)]);
    let same = report(
        vec![case("null", "read", None, &BASE)],
        vec![case("null", "read", None, &BASE)],
        None,
    );
    assert!(same.notes.is_empty(), "{:?}", same.notes);

    let mut b = a.clone();
    b.system.fs_type = Some("xfs".into());
    b.system.device = Some(crate::sysinfo::Device {
        name: "nvme0n1".into(),
        ..Default::default()
    });
    b.config.cache = "warm".into();
    b.config.data = "zeros".into();
    b.tool.version = "0.2.0".into();
    b.interrupted = true;
    let r = compare(
        std::slice::from_ref(&a),
        std::slice::from_ref(&b),
        side("old"),
        side("new"),
        None,
        0.0,
    );
    let all = r.notes.join("\n");
    for want in [
        "file system differs: old unknown, new xfs",
        "device differs: old none, new nvme0n1",
        "cache state differs: old cold, new warm",
        "data differs: old random, new zeros",
        "tool version differs: old iopath 0.1.0 (result schema 3), new iopath 0.2.0 (result schema 3)",
        "new was interrupted",
    ] {
        assert!(all.contains(want), "missing {want:?} in:\n{all}");
    }
    assert_eq!(r.notes.len(), 6, "{all}");
    // Several runs: an interrupted one is named by its place.
    let r = compare(
        std::slice::from_ref(&a),
        &[a.clone(), b],
        side("old"),
        side("new"),
        None,
        0.0,
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("new (run 2) was interrupted")),
        "{:?}",
        r.notes
    );
}

#[test]
fn nothing_matched_and_too_few_repetitions_are_noted() {
    let r = report(
        vec![case("null", "read", None, &BASE)],
        vec![case("null", "write", None, &BASE)],
        None,
    );
    assert!(
        r.notes.iter().any(|n| n.contains("nothing was compared")),
        "{:?}",
        r.notes
    );
    let r = report(
        vec![case("null", "read", None, &[100.0, 101.0])],
        vec![case("null", "read", None, &[50.0, 51.0])],
        None,
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("too few repetitions") && n.contains("2 in A, 2 in B")),
        "{:?}",
        r.notes
    );
    // Four against four can be real (2/70 < 5%): no note.
    let r = report(
        vec![case("null", "read", None, &BASE[..4])],
        vec![case("null", "read", None, &times(0.5)[..4])],
        None,
    );
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(r.cases[0].label, Some(Label::Slower));
}

#[test]
fn bad_input_names_the_file_and_what_to_do() {
    let e = parse(b"not json", "x.json").unwrap_err().0;
    assert!(
        e.contains("x.json is not JSON") && e.contains("iopath run --json"),
        "{e}"
    );
    let e = parse(br#"{"jobs": []}"#, "fio.json").unwrap_err().0;
    assert!(e.contains("fio.json is not an iopath result"), "{e}");
    let e = parse(br#"[1, 2]"#, "list.json").unwrap_err().0;
    assert!(e.contains("list.json is not an iopath result"), "{e}");
    let e = parse(
        br#"{"schema_version": 7, "tool": {"name": "iopath", "version": "3.0.0"}}"#,
        "new.json",
    )
    .unwrap_err()
    .0;
    assert!(
        e.contains("new.json has result schema version 7") && e.contains("3.0.0"),
        "{e}"
    );
    let e = parse(
        br#"{"schema_version": 2, "tool": {"name": "iopath", "version": "0.1.0"}}"#,
        "cut.json",
    )
    .unwrap_err()
    .0;
    assert!(
        e.contains("cut.json is not a complete iopath result"),
        "{e}"
    );
    let e = load(Path::new("/nonexistent/iopath-compare.json"))
        .unwrap_err()
        .0;
    assert!(
        e.contains("cannot read /nonexistent/iopath-compare.json"),
        "{e}"
    );
    // A result serialized by this build reads back.
    let r = run(vec![case("null", "read", None, &BASE)]);
    assert_eq!(
        parse(&serde_json::to_vec(&r).unwrap(), "ok.json").unwrap(),
        r
    );
}

#[test]
fn file_names_are_the_default_names_unless_they_clash() {
    let p = |s: &str| vec![PathBuf::from(s)];
    assert_eq!(
        default_names(&p("ci/base.json"), &p("out/new.json")),
        ("base.json".into(), "new.json".into())
    );
    assert_eq!(
        default_names(&p("a/r.json"), &p("b/r.json")),
        ("a/r.json".into(), "b/r.json".into())
    );
    let several = [PathBuf::from("r1.json"), PathBuf::from("r2.json")];
    assert_eq!(
        default_names(&several, &p("new.json")),
        ("r1.json + 1 more".into(), "new.json".into())
    );
}

#[test]
fn the_text_shows_labels_changes_and_sync_when_it_varies() {
    let mut dsync = case("aio", "randwrite", None, &BASE);
    dsync.sync = "dsync".into();
    let r = report(
        vec![
            case("uring", "randread", None, &BASE),
            case("direct", "randrw", Some(70), &BASE),
            dsync,
        ],
        vec![
            case("uring", "randread", None, &times(0.8)),
            case("direct", "randrw", Some(70), &BASE),
        ],
        None,
    );
    let text = render(&r);
    assert!(text.contains("randread 4k Q32T1 sync=end"), "{text}");
    assert!(text.contains("randrw 4k Q32T1 70% read sync=end"), "{text}");
    assert!(text.contains("randwrite 4k Q32T1 sync=dsync"), "{text}");
    assert!(text.contains("-20.0%"), "{text}");
    assert!(text.contains("slower"), "{text}");
    assert!(text.contains("no change"), "{text}");
    assert!(text.contains("only in A"), "{text}");
    assert!(text.contains("100.0 us → 100.0 us"), "{text}");
    assert!(
        text.contains("--drift 0 allows for none"),
        "drift 0 is said: {text}"
    );
    assert!(
        text.contains("0 faster, 1 slower, 1 no change; 1 not compared"),
        "{text}"
    );
    let uring = text.lines().find(|l| l.starts_with("│ uring")).unwrap();
    assert!(
        uring.contains("-20.0%") && uring.contains(" to -19."),
        "{uring}"
    );
    let single = render(&report(
        vec![case("null", "read", None, &[100.0])],
        vec![case("null", "read", None, &[80.0])],
        None,
    ));
    let row = single.lines().find(|l| l.starts_with("│ null")).unwrap();
    assert!(row.contains("-20.0%") && !row.contains(" to "), "{row}");
}

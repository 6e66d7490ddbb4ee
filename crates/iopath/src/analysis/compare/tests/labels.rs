//! The tests applied to a case, their labels and intervals, what is
//! reported of each side, and the `--fail-above` rule.

use super::*;

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
    // 5% apart in the medians but overlapping: neither a call nor no
    // change (the interval reaches past 5% both ways).
    let wide_a = [80.0, 90.0, 100.0, 110.0, 120.0, 95.0, 105.0, 100.0];
    let wide_b: Vec<f64> = wide_a.iter().map(|x| x * 0.95).collect();
    assert_eq!(one(&wide_a, &wide_b).label, Some(Label::Inconclusive));
    // One repetition each: never a call, however far apart, and never no
    // change either.
    let few = one(&[100.0], &[50.0]);
    assert_eq!(few.label, Some(Label::Inconclusive));
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
    assert_eq!(
        at(20.0, None).cases[0].label,
        Some(Label::Inconclusive),
        "15% inside 20% of drift: not ruled out, not called"
    );
    // The fail rule uses the widened bound: 0.85 * 1.1 ~ 0.94.
    assert_eq!(at(0.0, Some(10.0)).regressions, 1);
    assert_eq!(at(10.0, Some(10.0)).regressions, 0);
    assert_eq!(at(10.0, Some(5.0)).regressions, 1);
    let r = at(10.0, None);
    assert!(r.one_run_per_side());
    assert_eq!(r.drift_allowance_pct, 10.0);
    assert_eq!(r.cases[0].drift_allowance_pct, Some(10.0));
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
    // -11% to +12%: holds no change and a change past 5% both ways.
    assert_eq!(c.label, Some(Label::Inconclusive), "{:?}", c.ratio_ci95);
    // Against a 15% threshold the same interval is no change.
    let r15 = compare(&a, &same, side("A"), side("B"), Some(15.0), 10.0);
    assert_eq!(r15.cases[0].label, Some(Label::NoChange));
    assert_eq!(r15.no_change_margin_pct, 15.0);
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
    let c = &r.cases[0];
    assert_eq!(c.test, Some(Test::BetweenRuns));
    assert_eq!((c.a_runs, c.b_runs, c.a_n, c.b_n), (3, 3, 24, 24));
    assert!(!r.one_run_per_side());
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
    let eio = Some(Unmeasured::Failed {
        error: "EIO".into(),
    });
    let c = &r.cases[0];
    assert_eq!(c.status, Status::NotMeasured);
    assert_eq!((&c.a_not_measured, &c.b_not_measured), (&eio, &eio));
}

#[test]
fn other_traffic_on_bs_disk_is_a_note_and_keeps_a_slowdowns_exit_code() {
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
    assert!(c.beyond(5.0));
    // The note says it; the slowdown is still a regression (exit 1), not
    // turned into another exit code.
    assert!(c.regressed(5.0) && !c.inconclusive(5.0));
    assert_eq!(busy.regressions, 1);
    assert_eq!(
        busy.notes,
        [Note::OtherTraffic {
            side: Which::B,
            case: 0,
            device_fraction: 12.0
        }]
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
    let why: Vec<(Option<Unmeasured>, Option<Unmeasured>)> = r
        .cases
        .iter()
        .map(|c| (c.a_not_measured.clone(), c.b_not_measured.clone()))
        .collect();
    let skipped = Unmeasured::Skipped {
        why: "no poll queues".into(),
    };
    let eio = Unmeasured::Failed {
        error: "EIO".into(),
    };
    assert_eq!(why[0], (Some(skipped.clone()), Some(skipped)));
    assert_eq!(why[1], (None, Some(eio)));
    assert_eq!(why[2], (Some(Unmeasured::NoRepetitions), None));
    assert_eq!(why[3], (Some(Unmeasured::NoThroughput), None));
    // The measured side still shows its figures.
    assert_eq!(r.cases[1].a_n, 8);
    assert!(r.cases[1].a_median_bw_bytes_per_s.is_some());
    assert_eq!(r.cases[1].b_n, 0);
    assert!(r.cases[1].b_median_bw_bytes_per_s.is_none());
    assert_eq!(r.regressions, 0);
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
    assert!(drifted.few_to_tell(10.0));
    assert!(!drifted.few_to_tell(25.0), "0.6 * 1.3 = 0.78: within 25%");
    // ... but a median 40% down against a 25% gate, with an interval that
    // reaches back within it, is not a pass either.
    assert!(drifted.inconclusive(25.0));
    assert!(!drifted.inconclusive(45.0), "the median is within 45%");
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

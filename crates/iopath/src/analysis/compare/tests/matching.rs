//! Which case of A goes with which of B.

use super::*;

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
    assert!(keys[4].0.is_none() && keys[4].1.as_ref().unwrap().method == iopath_io::Method::Direct);

    let r = report(a, b, None);
    let st: Vec<Status> = r.cases.iter().map(|c| c.status).collect();
    use Status::*;
    assert_eq!(st, [OnlyInA, Compared, OnlyInA, OnlyInB, OnlyInB]);
    assert_eq!(r.cases[1].job.rwmix_read_pct, Some(70));
    assert!(r
        .cases
        .iter()
        .all(|c| c.a_not_measured.is_none() && c.b_not_measured.is_none()));
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
    b_sync.sync = iopath_io::SyncPolicy::Dsync;
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

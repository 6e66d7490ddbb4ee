//! "Equally good" only from an interval (issue 28, item b): methods the
//! leader test could not separate are equally good when each one's
//! ratio to the fastest lies within the equivalence margin both ways;
//! else they are too close to call. And a job without a call says the
//! time it was given (item f).

use super::tests::{rounds, stopped};
use super::*;
use crate::result::verdict_facts::*;

/// `base` scaled round by round by `k`.
fn scaled(base: &[f64], k: &[f64]) -> Vec<f64> {
    base.iter().zip(k).map(|(b, k)| b * k).collect()
}

const BASE: [f64; 8] = [100.0, 104.0, 97.0, 101.0, 99.0, 103.0, 98.0, 102.0];

/// The action of the verdict over `a` and `b`, the same CPU in every
/// round (nothing but speed to weigh).
fn action_of(a: &[f64], b: &[f64]) -> (Verdict, VerdictFact) {
    let cpu = [1000.0; 8];
    let v = all(&[rounds("uring", None, a, &cpu), rounds("aio", None, b, &cpu)]).remove(0);
    let last = v.facts.last().cloned().expect("an action");
    (v, last)
}

#[test]
fn a_tight_interval_inside_the_margin_is_equally_good() {
    // Within 1% of each other in every round.
    let k = [1.005, 0.995, 1.01, 0.99, 1.0, 1.005, 0.995, 1.0];
    let (v, last) = action_of(&BASE, &scaled(&BASE, &k));
    assert!(v.called, "{:#?}", v.facts);
    let VerdictFact::EquallyGood {
        methods, ratios, ..
    } = &last
    else {
        panic!("{:#?}", v.facts)
    };
    assert_eq!(methods, &v.equally_good);
    assert_eq!(ratios.len(), 1, "{ratios:#?}");
    let r = &ratios[0];
    assert!(r.equivalent(), "{r:#?}");
    assert!(stats::within_margin(r.ratio_ci), "{r:#?}");
}

#[test]
fn a_wide_interval_straddling_even_is_too_close_to_call() {
    // Up to 10% either way, round by round: not shown to differ, nor
    // shown alike.
    let k = [1.10, 0.91, 1.08, 0.93, 1.05, 0.95, 1.09, 0.92];
    let (v, last) = action_of(&BASE, &scaled(&BASE, &k));
    assert!(v.called, "{:#?}", v.facts);
    assert!(
        v.ranking.iter().all(|r| r.tied_with_fastest),
        "{:#?}",
        v.ranking
    );
    let VerdictFact::TooCloseToCall {
        methods,
        leader,
        ratios,
        margin,
        ..
    } = &last
    else {
        panic!("{:#?}", v.facts)
    };
    assert_eq!(methods, &v.equally_good);
    assert_eq!(leader, &v.fastest[0]);
    assert_eq!(*margin, stats::EQUIVALENCE_MARGIN);
    let r = &ratios[0];
    assert!(r.ratio_ci[0] < 1.0 && r.ratio_ci[1] > 1.0, "{r:#?}");
    assert!(!r.equivalent(), "{r:#?}");
    assert!(!v.facts.iter().any(|f| f.code() == "equally_good"));
}

#[test]
fn a_job_without_a_call_that_spent_its_budget_says_the_budget() {
    let one = [1.0; 4];
    let given = 2_000_000_000;
    let job = |why| {
        [
            rounds("direct", None, &[100.0, 101.0, 102.0, 99.0], &one),
            rounds("buffered", None, &[60.0, 70.0, 65.0, 90.0], &one),
        ]
        .map(|c| {
            let mut c = stopped(c, why, 0.25);
            if let Some(r) = c.repetition_control.as_mut() {
                r.budget_ns = Some(given);
            }
            c
        })
    };
    let v = &all(&job(stats::StopReason::MaxTime))[0];
    assert!(!v.called, "{:#?}", v.facts);
    assert_eq!(v.budget_ns, Some(given));
    let budget = match &v.facts[0] {
        VerdictFact::NoCallRounds { budget_ns, .. }
        | VerdictFact::NoCallRepetitions { budget_ns, .. } => *budget_ns,
        f => panic!("{f:#?}"),
    };
    assert_eq!(budget, Some(given));
    // Cut short by an interrupt, the budget is not why.
    let v = &all(&job(stats::StopReason::Stopped))[0];
    assert_eq!(v.budget_ns, None);
}

#[test]
fn a_method_only_the_leader_beats_is_unsettled_and_does_not_block_the_call() {
    // aio ties with uring (up to 17% apart, both ways); psync runs at 0.9x
    // uring in every round, so uring beats it, but aio does not: ties do
    // not chain. psync's place is not settled, but it is not in the
    // leading group, so the verdict still calls uring and aio (it said
    // "no call (8 of 6 rounds)" and advised --repeat 6).
    let cpu = [1000.0; 8];
    let k = [1.0, 0.85, 1.05, 0.83, 1.0, 0.86, 1.04, 0.84];
    let v = all(&[
        rounds("uring", None, &BASE, &cpu),
        rounds("aio", None, &scaled(&BASE, &k), &cpu),
        rounds("psync", None, &scaled(&BASE, &[0.9; 8]), &cpu),
    ])
    .remove(0);
    assert!(v.called, "{:#?}", v.facts);
    let psync = v.ranking.iter().find(|r| r.method == "psync").unwrap();
    assert!(psync.unranked, "{psync:#?}");
    assert!(!psync.tied_with_fastest && !psync.too_few_repetitions);
    let Some(VerdictFact::Unsettled {
        leader,
        methods,
        tied,
    }) = v.facts.iter().find(|f| f.code() == "unsettled")
    else {
        panic!("{:#?}", v.facts)
    };
    assert_eq!(leader.to_string(), "uring");
    assert_eq!(methods.len(), 1);
    assert_eq!(methods[0].to_string(), "psync");
    assert_eq!(tied.len(), 1);
    assert_eq!(tied[0].to_string(), "aio");
    // Not called slower: no other fact names psync.
    for f in v.facts.iter().filter(|f| f.code() != "unsettled") {
        let said = serde_json::to_string(f).unwrap();
        assert!(!said.contains("psync"), "{said}");
    }
    assert!(!v.facts.iter().any(|f| f.code().starts_with("no_call")));
}

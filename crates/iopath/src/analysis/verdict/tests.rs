pub(crate) use super::fixtures::{seven_apart, stopped, with_null};
use super::*;
use crate::result::verdict_facts::*;
use crate::result::{Cpu, Measurement, Memory};

fn rep(bw: f64, cpu_ns: f64, mem: u64) -> Measurement {
    Measurement {
        bw_bytes_per_s: bw,
        iops: bw / 4096.0,
        cpu: Cpu {
            ns_per_io: cpu_ns,
            ..Cpu::default()
        },
        memory: Memory {
            total_bytes: mem,
            ..Memory::default()
        },
        ..Measurement::default()
    }
}

/// A case of `method` whose repetitions ran at `mibs` MiB/s; the
/// synchronous methods at depth 1, as the runner caps them.
pub fn case(method: &str, pattern: &str, mibs: &[f64], cpu_ns: f64, mem: u64) -> CaseResult {
    let sync = ["buffered", "direct", "mmap"].contains(&method);
    CaseResult {
        method: method.into(),
        pattern: crate::model::Pattern::from_name(pattern).unwrap(),
        block_size: 4096,
        queue_depth: if sync { 1 } else { 32 },
        queue_depth_requested: 32,
        threads: 1,
        sync: iopath_io::SyncPolicy::End,
        repetitions: mibs
            .iter()
            .map(|b| rep(b * 1048576.0, cpu_ns, mem))
            .collect(),
        ..CaseResult::default()
    }
}

#[test]
fn a_clear_winner_is_named_with_its_ratio() {
    let cases = vec![
        case(
            "buffered",
            "randread",
            &[100.0, 102.0, 98.0, 101.0, 99.0, 100.0],
            11_700.0,
            1_700_000_000,
        ),
        case(
            "uring",
            "randread",
            &[231.0, 233.0, 229.0, 232.0, 230.0, 231.0],
            3_200.0,
            131_072,
        ),
    ];
    let v = &all(&cases)[0];
    assert_eq!(v.fastest, vec!["uring"]);
    assert_eq!(v.pick, "uring");
    let b = &v.ranking[1];
    assert!((b.fastest_ratio - 2.31).abs() < 1e-9, "{}", b.fastest_ratio);
    assert!(b.fastest_ratio_ci95[0] > 2.2 && b.fastest_ratio_ci95[1] < 2.4);
    let VerdictFact::Fastest { leader, slower } = &v.facts[0] else {
        panic!("{:#?}", v.facts)
    };
    assert_eq!(
        (leader.to_string(), slower[0].method.to_string()),
        ("uring".to_string(), "buffered".to_string())
    );
    assert_eq!(slower[0].ratio, b.fastest_ratio);
    assert_eq!(codes(v), ["fastest", "cpu_cheapest", "memory_trade", "use"]);
}

#[test]
fn overlapping_intervals_are_a_tie() {
    let cases = vec![
        case(
            "aio",
            "randread",
            &[100.0, 104.0, 97.0, 101.0, 99.0, 103.0],
            3_000.0,
            131_072,
        ),
        case(
            "uring",
            "randread",
            &[102.0, 98.0, 100.0, 105.0, 101.0, 99.0],
            2_500.0,
            131_072,
        ),
    ];
    let v = &all(&cases)[0];
    assert_eq!(v.fastest.len(), 2);
    assert!(v.ranking.iter().all(|r| r.tied_with_fastest));
    assert_eq!(v.pick, "uring", "cheaper CPU breaks the tie");
    assert_eq!(codes(v), ["all_tie", "cpu_cheapest", "use_cheaper"]);
}

#[test]
fn groups_need_two_measured_methods() {
    let mut skipped = case("uring-iopoll", "randread", &[], 0.0, 0);
    skipped.skipped = Some("no poll queues".into());
    let cases = vec![
        case("direct", "randread", &[10.0, 11.0], 1.0, 1),
        skipped,
        case("direct", "read", &[10.0, 11.0], 1.0, 1),
    ];
    assert!(all(&cases).is_empty());
}

#[test]
fn warmups_are_left_out_of_the_verdict() {
    let mut a = case(
        "aio",
        "randread",
        &[1000.0, 100.0, 101.0, 99.0, 100.0, 100.0, 100.0],
        1.0,
        1,
    );
    a.repetitions[0].warmup = true;
    let b = case(
        "uring",
        "randread",
        &[150.0, 151.0, 149.0, 150.0, 150.0, 150.0],
        1.0,
        1,
    );
    let v = &all(&[a, b])[0];
    assert_eq!(v.fastest, vec!["uring"]);
    assert_eq!(v.ranking[1].n, 6);
}

/// Six repetitions around `m` MiB/s, spread +-`pct`%.
pub(crate) fn around(m: f64, pct: f64) -> Vec<f64> {
    [0.0, 1.0, -1.0, 0.5, -0.5, 0.2]
        .iter()
        .map(|k| m * (1.0 + k * pct / 100.0))
        .collect()
}

/// The fact of `v` with this `code`.
pub(crate) fn fact<'a>(v: &'a Verdict, code: &str) -> &'a VerdictFact {
    v.facts
        .iter()
        .find(|f| f.code() == code)
        .unwrap_or_else(|| panic!("no {code} in {:#?}", v.facts))
}

/// The codes of `v`'s facts, in order.
pub(crate) fn codes(v: &Verdict) -> Vec<&'static str> {
    v.facts.iter().map(|f| f.code()).collect()
}

/// `case`, run in rounds: repetition i in round i + 1, with its own
/// throughput and CPU per I/O.
pub fn rounds(method: &str, arm: Option<u32>, mibs: &[f64], cpu: &[f64]) -> CaseResult {
    let mut c = case(method, "randread", mibs, 0.0, 1 << 20);
    c.arm = arm;
    for (i, (m, &ns)) in c.repetitions.iter_mut().zip(cpu).enumerate() {
        m.round = Some(i as u32 + 1);
        m.seq = Some(i as u32 * 2 + arm.unwrap_or(1));
        m.cpu.ns_per_io = ns;
    }
    c
}

/// Regression (issue 13): two arms of one method whose rounds drift
/// together by 40% but agree within each round tie, and are named as
/// arms; the unpaired rule would have called this drift.
#[test]
fn aa_arms_that_drift_together_tie() {
    let drift = [100.0, 140.0, 100.0, 140.0, 100.0, 140.0, 100.0, 140.0];
    let a: Vec<f64> = drift
        .iter()
        .enumerate()
        .map(|(i, d)| d * if i % 3 == 0 { 1.01 } else { 0.995 })
        .collect();
    let b: Vec<f64> = drift
        .iter()
        .enumerate()
        .map(|(i, d)| d * if i % 3 == 1 { 1.01 } else { 0.995 })
        .collect();
    let cpu = [20_000.0; 8];
    let v = all(&[
        rounds("direct", None, &a, &cpu),
        rounds("direct", Some(2), &b, &cpu),
    ]);
    assert_eq!(v.len(), 1);
    assert!(v[0].paired);
    assert_eq!(v[0].fastest.len(), 2, "{:#?}", v[0].facts);
    let names: Vec<String> = v[0].ranking.iter().map(|r| r.method.to_string()).collect();
    assert!(
        names.contains(&"direct".into()) && names.contains(&"direct#2".into()),
        "{names:?}"
    );
    // Both ran at depth 1 (the job as it ran), tied.
    assert!(v[0].ranking.iter().all(|r| r.queue_depth == 1));
    assert_eq!(fact(&v[0], "all_tie").code(), "all_tie");
    // The same samples without rounds: the unpaired rule sees no
    // difference either (the drift is symmetric), but the ratio's
    // interval is far wider than the paired one.
    let mut ua = rounds("direct", None, &a, &cpu);
    let mut ub = rounds("direct", Some(2), &b, &cpu);
    for m in ua.repetitions.iter_mut().chain(ub.repetitions.iter_mut()) {
        m.round = None;
    }
    let u = all(&[ua, ub]);
    assert!(!u[0].paired);
    let width =
        |v: &Verdict| v.ranking[1].fastest_ratio_ci95[1] - v.ranking[1].fastest_ratio_ci95[0];
    assert!(
        width(&u[0]) > 3.0 * width(&v[0]),
        "{} vs {}",
        width(&u[0]),
        width(&v[0])
    );
}

/// Regression (issue 13): the pick flipped between identical runs on
/// CPU-per-I/O differences that carry no interval (aio vs uring at 4.3
/// vs 4.7 us). CPU that crosses over between rounds is not a real
/// difference: both are equally good, and the pick is the first in the
/// run's order, whichever median is lower.
#[test]
fn cpu_noise_does_not_decide_the_pick() {
    let bw = [300.0, 310.0, 305.0, 298.0, 302.0, 307.0];
    let flip = |lo_first: bool| {
        let (x, y) = if lo_first {
            (4300.0, 4700.0)
        } else {
            (4700.0, 4300.0)
        };
        [x, y, x, y, x, y]
    };
    for lo_first in [true, false] {
        let v = all(&[
            rounds("uring", None, &bw, &flip(lo_first)),
            rounds("aio", None, &bw, &flip(!lo_first)),
        ]);
        assert_eq!(v[0].pick, "uring", "{:#?}", v[0].facts);
        assert_eq!(v[0].equally_good, vec!["uring", "aio"]);
        assert!(
            matches!(v[0].facts.last(), Some(VerdictFact::EquallyGood { methods, .. }) if methods == &v[0].equally_good),
            "{:#?}",
            v[0].facts
        );
    }
    // Even a steady 9% (4.7 against 4.3 us in every round) is inside
    // the 10% a CPU difference needs to decide the pick.
    let v = all(&[
        rounds("uring", None, &bw, &[4700.0; 6]),
        rounds("aio", None, &bw, &[4300.0; 6]),
    ]);
    assert_eq!(v[0].pick, "uring");
    assert_eq!(v[0].equally_good, vec!["uring", "aio"]);
    // 20% in every round is real: the cheaper one wins, whatever the
    // order.
    let v = all(&[
        rounds("uring", None, &bw, &[5200.0; 6]),
        rounds("aio", None, &bw, &[4300.0; 6]),
    ]);
    assert_eq!(v[0].pick, "aio");
    assert!(v[0].equally_good.is_empty());
}

/// Regression (review of issue 13): rounds of different jobs (numbered
/// alike before) were paired. Cases whose rounds do not meet are
/// compared unpaired, and the verdict says so.
#[test]
fn rounds_that_never_met_are_not_paired() {
    let bw = [100.0, 101.0, 99.0, 100.0, 102.0, 98.0];
    let a = rounds("direct", None, &bw, &[1.0; 6]);
    let mut b = rounds("uring", None, &bw.map(|x| x * 3.0), &[1.0; 6]);
    for m in &mut b.repetitions {
        m.round = m.round.map(|r| r + 6);
    }
    let v = all(&[a, b]);
    assert!(!v[0].paired);
    assert_eq!(v[0].fastest, vec!["uring"]);
}

/// Regression (review of issue 13): a result whose shared rounds each
/// have a zero on one side made `iopath report` panic ("medians are
/// positive"); it is a tie with an unbounded interval now.
#[test]
fn rounds_with_nothing_to_pair_do_not_panic() {
    let a = rounds("direct", None, &[0.0, 5.0, 0.0, 5.0, 0.0, 5.0], &[1.0; 6]);
    let b = rounds("uring", None, &[5.0, 0.0, 5.0, 0.0, 5.0, 0.0], &[1.0; 6]);
    let v = all(&[a, b]);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].fastest.len(), 2, "{:#?}", v[0].facts);
}

/// Regression (review of issue 13): every method was tested against
/// the best of the sample at 5% each, so several identical methods were
/// called different far more often than one job in twenty. With the
/// level divided among the comparisons, a whole verdict errs at most 5%
/// of the time. Noisy repetitions (10%) make wide intervals, where the
/// margin does not hide the effect of picking the best of seven.
#[test]
fn seven_identical_methods_are_never_called_apart_nineteen_times_in_twenty() {
    let mut rng = iopath_io::data::Rng::new(21);
    let mut normal = move || {
        let mut u = || ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (a, b) = (u(), u());
        (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
    };
    let names = [
        "buffered",
        "direct",
        "mmap",
        "uring",
        "aio",
        "uring-sqpoll",
        "uring-buffered",
    ];
    let jobs = 300;
    let mut wrong = 0;
    for _ in 0..jobs {
        let levels: Vec<f64> = (0..12).map(|_| 100.0 * (0.05 * normal()).exp()).collect();
        let cases: Vec<CaseResult> = names
            .iter()
            .map(|m| {
                let bw: Vec<f64> = levels.iter().map(|l| l * (0.10 * normal()).exp()).collect();
                rounds(m, None, &bw, &[1.0; 12])
            })
            .collect();
        let v = all(&cases);
        // A false call is a method called slower than the leader; one left
        // uncalled (too few rounds to tell) is no call at all. Ties do not
        // chain: a method the leader beats on a chance 5% is left uncalled,
        // not made "equally good" through another tied method.
        let called_apart =
            v[0].ranking.iter().skip(1).any(|r| {
                !r.tied_with_fastest && !r.too_few_repetitions && !r.unranked && !r.reference
            });
        wrong += usize::from(called_apart);
    }
    assert!(wrong as f64 / jobs as f64 <= 0.05, "{wrong} of {jobs}");
}

/// Seven methods, every difference plain: six rounds name the leader
/// (each comparison of the step-down at 5%: the Bonferroni level took 8),
/// five are too few for any 95% interval, and the verdict says so, with
/// the numbers, instead of an empty list.
#[test]
fn seven_methods_apart_are_called_on_six_rounds_not_on_five() {
    let apart = seven_apart;
    let v = all(&apart(5));
    assert!(
        matches!(
            &v[0].facts[0],
            VerdictFact::NoCallRepetitions {
                short: ShortOf::Each { n: 5 },
                advice: NoCallAdvice::RunLonger { repeat: 6 },
                ..
            }
        ),
        "{:#?}",
        v[0].facts
    );
    // The JSON says the same: no call; the leader alone, not a tie of
    // all seven, and no pick weighed on costs.
    assert!(!v[0].called);
    assert_eq!(v[0].fastest, vec!["uring-buffered"]);
    assert_eq!(v[0].pick, "uring-buffered");
    assert!(v[0].equally_good.is_empty());
    assert!(v[0].ranking[1..]
        .iter()
        .all(|r| !r.tied_with_fastest && r.too_few_repetitions));
    // With 6 rounds the same differences are called.
    let v = all(&apart(6));
    assert_eq!(v[0].fastest, vec!["uring-buffered"], "{:#?}", v[0].facts);
    assert!(v[0].called);
    // Every comparison at 95%, whatever the number of methods.
    assert!((v[0].ci_level - 0.95).abs() < 1e-12);
    assert_eq!(fact(&v[0], "fastest").code(), "fastest");
}

#[test]
fn null_is_a_reference_never_the_pick() {
    let v = &all(&with_null())[0];
    assert_eq!(v.pick, "uring");
    assert_eq!(v.fastest, vec!["uring"]);
    let methods: Vec<String> = v.ranking.iter().map(|r| r.method.to_string()).collect();
    assert_eq!(methods, ["uring", "buffered", "direct", "null"]);
    let null = &v.ranking[3];
    assert!(null.reference && !null.tied_with_fastest && !null.too_few_repetitions);
    assert!(null.fastest_ratio < 1.0, "{}", null.fastest_ratio);
    assert!(v.ranking[..3].iter().all(|r| !r.reference));
    let b = v.ranking[1].fastest_ratio;
    assert!((b - 2.31).abs() < 1e-9, "judged against uring: {b}");
    assert_eq!(v.cheapest_cpu.as_ref().unwrap().method, "uring");
    assert_eq!(v.least_memory.as_ref().unwrap().method, "direct");
    let t = v.memory_trade.as_ref().unwrap();
    assert_eq!(
        (t.least.to_string(), t.most.to_string()),
        ("direct".to_string(), "buffered".to_string())
    );
    assert!(matches!(&v.facts[0], VerdictFact::Fastest { leader, .. } if leader == "uring"));
    // null is named once, as the ceiling.
    assert_eq!(
        codes(v),
        ["fastest", "ceiling", "cpu_cheapest", "memory_trade", "use"]
    );
    assert!(
        matches!(fact(v, "ceiling"), VerdictFact::Ceiling { method, .. } if *method == iopath_io::Method::Null)
    );
    assert!(
        matches!(fact(v, "use"), VerdictFact::Use { method } if *method == iopath_io::Method::Uring)
    );
}

#[test]
fn the_reference_flag_reads_as_false_from_older_files() {
    let v = &all(&with_null())[0];
    let mut json = serde_json::to_value(v).unwrap();
    for r in json["ranking"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("reference");
    }
    let back: Verdict = serde_json::from_value(json).unwrap();
    assert!(back.ranking.iter().all(|r| !r.reference));
}

#[test]
fn null_alone_or_beside_one_method_gets_no_verdict() {
    let null = || case("null", "randread", &around(5_000.0, 2.0), 60.0, 4096);
    assert!(all(&[null()]).is_empty());
    assert!(all(&[
        null(),
        case("direct", "randread", &around(82.0, 2.0), 1.0, 1)
    ])
    .is_empty());
}

#[test]
fn the_fastest_methods_cpu_is_named_even_when_a_longer_name_shares_its_prefix() {
    let v = &all(&[
        case("uring", "randread", &around(300.0, 1.0), 4_000.0, 131_072),
        case("aio", "randread", &around(200.0, 1.0), 2_000.0, 131_072),
        case(
            "uring-sqpoll",
            "randread",
            &around(150.0, 1.0),
            3_000.0,
            131_072,
        ),
    ])[0];
    let VerdictFact::CpuCheapest {
        cheapest, others, ..
    } = fact(v, "cpu_cheapest")
    else {
        unreachable!()
    };
    assert_eq!(cheapest.method, "aio");
    let fastest = CpuCost {
        method: "uring".into(),
        ns: 4_000.0,
        fastest: true,
    };
    assert!(others.contains(&fastest), "{others:?}");
}

/// Regression (issue 18): glommio-scan's variants (one label each, and
/// two methods under one label) had no verdict at all, each being a job of
/// one method. Given one group they are judged together, each named by
/// what tells it apart.
#[test]
fn the_variants_of_a_group_get_one_verdict_named_by_what_differs() {
    let mk = |method: &str, bs: u64, qd: u32, copy: bool, label: &str, mibs: &[f64]| {
        let mut c = case(method, "read", mibs, 2_000.0, 1 << 20);
        c.block_size = bs;
        c.queue_depth = qd;
        c.queue_depth_requested = qd;
        c.copy_to_user = copy;
        c.label = Some(label.into());
        c.group = Some("ways to scan".into());
        for (i, r) in c.repetitions.iter_mut().enumerate() {
            r.round = Some(i as u32 + 1);
        }
        c
    };
    let steady = |x: f64| {
        [
            x,
            x * 1.01,
            x * 0.99,
            x * 1.005,
            x * 0.995,
            x,
            x * 1.002,
            x * 0.998,
        ]
    };
    let cases = vec![
        mk("buffered", 4096, 1, false, "buffered", &steady(900.0)),
        mk(
            "direct",
            4096,
            1,
            false,
            "direct one in flight",
            &steady(170.0),
        ),
        mk("uring", 4096, 8, true, "read-ahead, copied", &steady(500.0)),
        mk("uring", 512 << 10, 5, false, "512 KiB x5", &steady(4000.0)),
        mk(
            "uring-iopoll",
            512 << 10,
            5,
            false,
            "512 KiB x5",
            &steady(4600.0),
        ),
    ];
    // Without the group: every label its own job, and none has two methods
    // but the last.
    let ungrouped: Vec<CaseResult> = cases
        .iter()
        .cloned()
        .map(|mut c| {
            c.group = None;
            c
        })
        .collect();
    assert_eq!(all(&ungrouped).len(), 1);
    let v = all(&cases);
    assert_eq!(v.len(), 1, "{v:#?}");
    let v = &v[0];
    let names: Vec<String> = v.ranking.iter().map(|r| r.method.to_string()).collect();
    assert_eq!(
        names,
        vec![
            "uring-iopoll 512k Q5T1",
            "uring 512k Q5T1",
            "buffered 4k Q1T1",
            "uring 4k Q8T1 +copy",
            "direct 4k Q1T1"
        ]
    );
    assert!(
        v.called,
        "8 paired rounds call it among five: {:#?}",
        v.facts
    );
    assert_eq!(v.job.group.as_deref(), Some("ways to scan"));
    // Issue 18 (output): a group's speed fact names every variant it
    // ran, the copy and the polled ones included, not only the next and
    // buffered.
    let VerdictFact::Fastest { leader, slower } = &v.facts[0] else {
        panic!("{:#?}", v.facts)
    };
    assert_eq!(leader, "uring-iopoll 512k Q5T1");
    let shown: Vec<String> = slower.iter().map(|s| s.method.to_string()).collect();
    assert_eq!(
        shown,
        [
            "uring 512k Q5T1",
            "buffered 4k Q1T1",
            "uring 4k Q8T1 +copy",
            "direct 4k Q1T1"
        ]
    );
    // Variants of different block sizes are compared on CPU per MiB moved,
    // not per I/O (a 512 KiB request costs more than a 4 KiB one).
    assert!(matches!(
        fact(v, "cpu_cheapest"),
        VerdictFact::CpuCheapest { unit: CpuUnit::PerMib, cheapest, .. } if cheapest.method == Entrant::Variant("uring-iopoll 512k Q5T1".into())
    ));
    assert_eq!(
        v.cheapest_cpu.as_ref().unwrap().method,
        "uring-iopoll 512k Q5T1"
    );
    // Labels name the variants when they tell them all apart.
    let crystal: Vec<CaseResult> = [("SEQ1M Q8T1", 8), ("SEQ1M Q1T1", 1)]
        .iter()
        .map(|&(l, qd)| mk("uring", 1 << 20, qd, false, l, &steady(3000.0)))
        .collect();
    assert_eq!(
        variant_names(&crystal.iter().collect::<Vec<_>>()),
        ["SEQ1M Q8T1", "SEQ1M Q1T1"]
    );
}

#[test]
fn a_verdict_on_cases_the_case_timeout_stopped_says_so_in_its_advice() {
    let mut cases = vec![
        case("uffd", "read", &[100.0], 2_000.0, 1 << 20),
        case(
            "direct",
            "read",
            &[4000.0, 4100.0, 3900.0],
            2_000.0,
            1 << 20,
        ),
    ];
    cases[0].repetition_control = Some(crate::result::RepetitionControl {
        stopped_by: stats::StopReason::CaseTimeout,
        measured: 1,
        warmup: 0,
        ci_rel: None,
        ci_level: 0.0,
        elapsed_ns: 10_000_000_000,
        measured_ios: None,
        budget_ns: None,
        stretch_until_ns: None,
    });
    let v = &all(&cases)[0];
    assert_eq!(v.capped, vec!["uffd".to_string()]);
    assert!(!v.called);
    assert!(
        matches!(
            &v.facts[0],
            VerdictFact::NoCallRepetitions { advice: NoCallAdvice::CaseTimeout { methods, repeat: 6 }, .. } if methods == &["uffd"]
        ),
        "{:#?}",
        v.facts
    );
}

/// Issue 18 (output): with no call on speed, the memory sentence states
/// what each held, and no winner or ratio the speed sentence withheld.
#[test]
fn with_no_call_the_memory_sentence_is_an_observation() {
    let v = &all(&[
        case(
            "buffered",
            "randwrite",
            &[100.0, 90.0, 120.0],
            6_000.0,
            150 << 20,
        ),
        case("direct", "randwrite", &[10.0, 30.0, 12.0], 21_000.0, 4096),
        case("uring", "randwrite", &[80.0, 95.0, 60.0], 6_000.0, 1 << 20),
    ])[0];
    assert!(!v.called, "{:#?}", v.facts);
    assert_eq!(fact(v, "no_call_repetitions").code(), "no_call_repetitions");
    assert_eq!(
        fact(v, "memory_held"),
        &VerdictFact::MemoryHeld {
            least: "direct".into(),
            least_bytes: 4096,
            most: "buffered".into(),
            most_bytes: 150 << 20,
            why: MemoryNoCall::NoCall,
        }
    );
    assert!(!codes(v).contains(&"memory_trade"));
}

/// Issue 18 (output): methods that all ran as many repetitions are said
/// once (`each ran 5 repetitions`), not one by one.
#[test]
fn few_repetitions_alike_are_said_once() {
    let v = &all(&[
        case(
            "buffered",
            "randwrite",
            &[100.0, 101.0, 99.0],
            6_000.0,
            4096,
        ),
        case("direct", "randwrite", &[60.0, 61.0, 59.0], 21_000.0, 4096),
        case("aio", "randwrite", &[40.0, 41.0, 39.0], 6_000.0, 4096),
    ])[0];
    assert!(
        matches!(
            &v.facts[0],
            VerdictFact::NoCallRepetitions {
                short: ShortOf::Each { n: 3 },
                ..
            }
        ),
        "{:#?}",
        v.facts
    );
}

/// Issue 26 item 13: the tie broken for uring (less CPU) left aio, of
/// the same median and first in the run, at `ranking[0]`: a JSON reader
/// took the wrong method. The pick is `ranking[0]`; the words still read
/// the ranking fastest first.
#[test]
fn ranking_puts_the_pick_first() {
    let cases = vec![
        case(
            "aio",
            "randread",
            &[100.0, 104.0, 97.0, 101.0, 99.0, 103.0],
            3_000.0,
            131_072,
        ),
        case(
            "uring",
            "randread",
            &[102.0, 98.0, 100.0, 105.0, 101.0, 99.0],
            2_500.0,
            131_072,
        ),
        case(
            "buffered",
            "randread",
            &[50.0, 51.0, 49.0, 50.0, 52.0, 48.0],
            9_000.0,
            1 << 30,
        ),
    ];
    let v = &all(&cases)[0];
    assert_eq!(v.pick, "uring");
    assert_eq!(v.fastest[0], "aio");
    let order: Vec<String> = v.ranking.iter().map(|r| r.method.to_string()).collect();
    assert_eq!(order, ["uring", "aio", "buffered"]);
    // The ratios stay the fastest's over each; the facts are the same
    // from the stored ranking as when the verdict was made.
    assert_eq!(v.ranking[1].fastest_ratio, 1.0);
    assert_eq!(facts::of(v), v.facts);
}

/// Review of issue 27: `UseCheaper.by` was read from the medians (the
/// pick's CPU the lowest, so "CPU"), not from what the choice weighed.
/// Here CPU does not separate the two (9%, inside the 10% it needs), so
/// the smaller memory decides, and the fact says memory.
#[test]
fn cheaper_by_is_the_reason_the_choice_used() {
    let bw = [300.0, 310.0, 305.0, 298.0, 302.0, 307.0];
    let mut aio = rounds("aio", None, &bw, &[4700.0; 6]);
    for m in &mut aio.repetitions {
        m.memory.total_bytes = 512 << 20;
    }
    let v = all(&[aio, rounds("uring", None, &bw, &[4300.0; 6])]);
    assert_eq!(v[0].pick, "uring");
    assert_eq!(v[0].cheaper_by, Some(CheaperBy::Memory));
    assert!(
        matches!(
            v[0].facts.last(),
            Some(VerdictFact::UseCheaper {
                by: CheaperBy::Memory,
                ..
            })
        ),
        "{:#?}",
        v[0].facts
    );
    // 20% less CPU in every round decides on CPU.
    let v = all(&[
        rounds("uring", None, &bw, &[5200.0; 6]),
        rounds("aio", None, &bw, &[4300.0; 6]),
    ]);
    assert_eq!(v[0].cheaper_by, Some(CheaperBy::CpuPerIo));
}

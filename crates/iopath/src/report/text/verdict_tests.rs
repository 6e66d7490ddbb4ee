//! The verdict's wording, by snapshot: each scenario's verdict as it is
//! printed (the facts are checked in `analysis::verdict`'s tests).

use super::*;
use crate::analysis::verdict::dirty::tests::{cap, case as writer, limits, three_writers};
use crate::analysis::verdict::tests::{around, case, rounds, seven_apart, stopped};
use crate::analysis::verdict::{self, all};
use crate::result::CaseResult;
use crate::stats::StopReason;

const GIB: u64 = 1 << 30;

/// The verdict as printed.
fn say(v: &Verdict) -> String {
    lines(v).join("\n")
}

/// Every verdict of `cases`, one blank line apart.
fn text(cases: &[CaseResult]) -> String {
    all(cases).iter().map(say).collect::<Vec<_>>().join("\n\n")
}

#[test]
fn wording_clear_winner_with_costs() {
    insta::assert_snapshot!(text(&[
        case(
            "buffered",
            "randread",
            &around(100.0, 2.0),
            11_700.0,
            1_717_986_918
        ),
        case("direct", "randread", &around(82.0, 2.0), 8_900.0, 98_304),
        case("uring", "randread", &around(231.0, 2.0), 3_200.0, 131_072),
        case("aio", "randread", &around(190.0, 2.0), 3_400.0, 131_072),
    ]));
}

#[test]
fn wording_tie_for_fastest() {
    insta::assert_snapshot!(text(&[
        case("aio", "randread", &around(100.0, 4.0), 3_000.0, 131_072),
        case("uring", "randread", &around(102.0, 4.0), 2_500.0, 131_072),
        case(
            "buffered",
            "randread",
            &around(40.0, 4.0),
            11_000.0,
            2 * GIB
        ),
    ]));
}

#[test]
fn wording_everything_ties() {
    insta::assert_snapshot!(text(&[
        case("direct", "write", &around(500.0, 5.0), 20_000.0, 1 << 20),
        case("uring", "write", &around(505.0, 5.0), 19_000.0, 1 << 20),
    ]));
}

#[test]
fn wording_frugal_method_as_fast_as_the_greedy_one() {
    insta::assert_snapshot!(text(&[
        case("buffered", "read", &around(1000.0, 3.0), 30_000.0, GIB),
        case("direct", "read", &around(1010.0, 3.0), 20_000.0, 8 << 20),
    ]));
}

#[test]
fn wording_too_few_repetitions_to_separate() {
    insta::assert_snapshot!(text(&[
        case("buffered", "randwrite", &[454.0, 457.0], 3_700.0, 200 << 20),
        case(
            "uring-buffered",
            "randwrite",
            &[524.0, 532.0],
            4_800.0,
            230 << 20
        ),
    ]));
}

#[test]
fn wording_few_repetitions_never_claim_a_tie_or_an_interval() {
    insta::assert_snapshot!(text(&[
        case(
            "buffered",
            "randread",
            &[100.0, 101.0, 99.0],
            11_000.0,
            1_717_986_918
        ),
        case("direct", "randread", &[60.0, 61.0, 59.0], 9_000.0, 131_072),
    ]));
}

#[test]
fn wording_null_is_a_ceiling_not_a_candidate() {
    let t = text(&crate::analysis::verdict::tests::with_null());
    assert_eq!(t.matches("null").count(), 1, "{t}");
    insta::assert_snapshot!(t);
}

#[test]
fn wording_memory_with_few_repetitions() {
    // 4 against 4, apart: real (1 in 35 by chance), but no 95% interval.
    insta::assert_snapshot!(text(&[
        case(
            "buffered",
            "randread",
            &[100.0, 101.0, 99.0, 102.0],
            11_000.0,
            1_717_986_918,
        ),
        case(
            "direct",
            "randread",
            &[173.0, 175.0, 171.0, 174.0],
            9_000.0,
            131_072,
        ),
    ]));
}

#[test]
fn wording_frugal_method_much_slower() {
    // The speed sentence's ratio and the memory sentence's percentage
    // are one figure: 33.3x is 97% slower.
    insta::assert_snapshot!(text(&[
        case("mmap", "read", &around(2_000.0, 2.0), 2_000.0, 32 << 20),
        case("direct", "read", &around(60.0, 2.0), 9_000.0, 4096),
    ]));
}

/// Two arms of one method in rounds, at depth 1: the job as it ran.
#[test]
fn wording_arms_tie_at_the_depth_they_ran() {
    let drift = [100.0, 140.0, 100.0, 140.0, 100.0, 140.0, 100.0, 140.0];
    let wobble = |k: usize| -> Vec<f64> {
        drift
            .iter()
            .enumerate()
            .map(|(i, d)| d * if i % 3 == k { 1.01 } else { 0.995 })
            .collect()
    };
    let cpu = [20_000.0; 8];
    insta::assert_snapshot!(text(&[
        rounds("direct", None, &wobble(0), &cpu),
        rounds("direct", Some(2), &wobble(1), &cpu),
    ]));
}

/// CPU noise: equally good; a real CPU difference: the cheaper one.
#[test]
fn wording_equally_good_and_cheaper_by_cpu() {
    let bw = [300.0, 310.0, 305.0, 298.0, 302.0, 307.0];
    let flip = [4300.0, 4700.0, 4300.0, 4700.0, 4300.0, 4700.0];
    let flop = [4700.0, 4300.0, 4700.0, 4300.0, 4700.0, 4300.0];
    let noise = text(&[
        rounds("uring", None, &bw, &flip),
        rounds("aio", None, &bw, &flop),
    ]);
    let real = text(&[
        rounds("uring", None, &bw, &[5200.0; 6]),
        rounds("aio", None, &bw, &[4300.0; 6]),
    ]);
    insta::assert_snapshot!(format!("{noise}\n\n{real}"));
}

/// Seven methods apart in every round: 7 rounds are too few among them,
/// 8 make the call, each interval at the shared level (99.2%).
#[test]
fn wording_rounds_too_few_among_seven_then_enough() {
    let apart = seven_apart;
    insta::assert_snapshot!(format!("{}\n\n{}", text(&apart(7)), text(&apart(8))));
}

/// The fastest's CPU is named when it is neither the cheapest nor next.
#[test]
fn wording_the_fastest_methods_cpu() {
    insta::assert_snapshot!(text(&[
        case("uring", "randread", &around(300.0, 1.0), 4_000.0, 131_072),
        case("aio", "randread", &around(200.0, 1.0), 2_000.0, 131_072),
        case(
            "uring-sqpoll",
            "randread",
            &around(150.0, 1.0),
            3_000.0,
            131_072,
        ),
    ]));
}

/// A group's variants: each named, CPU per MiB moved.
#[test]
fn wording_the_variants_of_a_group() {
    let mk = |method: &str, bs: u64, qd: u32, copy: bool, label: &str, x: f64| {
        let steady = [
            x,
            x * 1.01,
            x * 0.99,
            x * 1.005,
            x * 0.995,
            x,
            x * 1.002,
            x * 0.998,
        ];
        let mut c = case(method, "read", &steady, 2_000.0, 1 << 20);
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
    insta::assert_snapshot!(text(&[
        mk("buffered", 4096, 1, false, "buffered", 900.0),
        mk("direct", 4096, 1, false, "direct one in flight", 170.0),
        mk("uring", 4096, 8, true, "read-ahead, copied", 500.0),
        mk("uring", 512 << 10, 5, false, "512 KiB x5", 4000.0),
        mk("uring-iopoll", 512 << 10, 5, false, "512 KiB x5", 4600.0),
    ]));
}

/// Without a call: each ran as many (said once), the case timeout, an
/// interrupt, the budget's --max-time, and the memory observation.
#[test]
fn wording_no_call_advice() {
    let mut capped = vec![
        case("uffd", "read", &[100.0], 2_000.0, 1 << 20),
        case(
            "direct",
            "read",
            &[4000.0, 4100.0, 3900.0],
            2_000.0,
            1 << 20,
        ),
    ];
    capped[0] = stopped(capped[0].clone(), StopReason::CaseTimeout, 10.0);
    let alike = [
        case(
            "buffered",
            "randwrite",
            &[100.0, 90.0, 120.0],
            6_000.0,
            150 << 20,
        ),
        case("direct", "randwrite", &[10.0, 30.0, 12.0], 21_000.0, 4096),
        case("uring", "randwrite", &[80.0, 95.0, 60.0], 6_000.0, 1 << 20),
    ];
    let one = [1.0; 3];
    let pair = |why| {
        [
            stopped(
                rounds("direct", None, &[100.0, 101.0, 102.0], &one),
                why,
                0.5,
            ),
            stopped(
                rounds("buffered", None, &[30.0, 31.0, 32.0], &one),
                why,
                0.5,
            ),
        ]
    };
    let medians = [
        rounds("direct", None, &[100.0, 100.0, 100.0], &one),
        rounds("uring", None, &[99.0, 99.0, 500.0], &one),
        rounds("mmap", None, &[10.0, 11.0, 12.0], &one),
    ];
    let five = [1.0; 5];
    let many: Vec<CaseResult> = (0..8)
        .map(|i| {
            let bw: Vec<f64> = (0..5)
                .map(|r| (100.0 + r as f64) * (1.0 + i as f64))
                .collect();
            rounds(&format!("a{}", i + 1), None, &bw, &five)
        })
        .collect();
    insta::assert_snapshot!([
        text(&capped),
        text(&alike),
        text(&pair(StopReason::Stopped)),
        text(&pair(StopReason::MaxTime)),
        text(&medians),
        text(&many),
    ]
    .join("\n\n"));
}

/// Far medians not shown to differ; tied methods that cost more; the
/// memory sentence's reason without rounds to pair.
#[test]
fn wording_far_ties_dearer_ties_and_unpaired_memory() {
    let n = 10;
    let one = vec![1.0; n];
    let base: Vec<f64> = (0..n).map(|r| 100.0 + r as f64).collect();
    let spread = [0.2, 0.3, 0.5, 0.5, 0.4, 1.5, 2.0, 0.45, 0.35, 1.8];
    let scaled = |k: f64| base.iter().map(|b| b * k).collect::<Vec<_>>();
    let far = [
        rounds("aio", None, &base, &one),
        rounds("uring", None, &scaled(1.005), &one),
        rounds(
            "mmap",
            None,
            &base
                .iter()
                .zip(spread)
                .map(|(b, s)| b * s)
                .collect::<Vec<_>>(),
            &one,
        ),
        rounds("buffered", None, &scaled(0.1), &one),
    ];
    let bw = [100.0, 103.0, 98.0, 101.0, 99.0, 102.0, 100.0, 97.0];
    let shift = |k: f64| bw.map(|x| x * k);
    let dearer = [
        rounds("ucache", None, &shift(1.01), &[20_300.0; 8]),
        rounds("uffd-wp", None, &shift(1.0), &[8_800.0; 8]),
        rounds("uffd", None, &shift(0.995), &[8_900.0; 8]),
    ];
    let a: Vec<f64> = (0..10).map(|i| 90.0 + 2.0 * i as f64).collect();
    let b: Vec<f64> = a.iter().map(|x| x * 1.14).collect();
    let unpaired = [
        case("direct", "randread", &a, 1_000.0, 1 << 20),
        case("buffered", "randread", &b, 1_000.0, 1 << 30),
    ];
    insta::assert_snapshot!([text(&far), text(&dearer), text(&unpaired)].join("\n\n"));
}

/// A run's verdicts with the dirty-limit caveat: the machine's limit, a
/// cgroup's cap, several writers' times past the limit.
#[test]
fn wording_writes_under_the_dirty_limit() {
    let run = |cases: Vec<CaseResult>, limit: u64, file: u64, cap_of: Option<(u64, u64)>| {
        let mut r = crate::report::testdata::fixture();
        r.interrupted = false;
        r.cases = cases;
        r.system.fs_type = Some("ext4".into());
        r.system.dirty_limits = Some(limits(limit));
        if let Some(t) = r.target.as_mut() {
            t.size_bytes = file;
            t.kind = crate::result::TargetKind::File;
        }
        r.config.cache_limit = cap_of.map(|(l, h)| cap(l, h));
        verdict::of_run(&r)
            .iter()
            .map(say)
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let pair = |b: u64| {
        vec![
            writer("buffered", b, 150_000_000, 1),
            writer("direct", 30 << 20, 150_000_000, 1),
        ]
    };
    let three = three_writers();
    let mut unsynced = pair(120 << 20);
    for c in &mut unsynced {
        c.sync = iopath_io::SyncPolicy::None;
    }
    insta::assert_snapshot!([
        run(pair(120 << 20), 4 << 30, 1 << 30, None),
        run(pair(100 << 20), 4 << 30, 1 << 30, Some((1 << 30, 3))),
        run(three, 1 << 30, 8 << 30, None),
        run(unsynced, 4 << 30, 8 << 30, None),
    ]
    .join("\n\n"));
}

/// The saved result of the last version before verdict facts renders its
/// saved words: today's facts where today's analysis makes the same call,
/// else the words it saved (the step-down test calls jobs that the shared
/// level of that version left without a call).
#[test]
fn a_result_before_facts_renders_its_saved_words() {
    let mut r: crate::result::RunResult = serde_json::from_str(include_str!(
        "../../../tests/fixtures/report/pre-facts.json"
    ))
    .unwrap();
    let saved: Vec<Vec<String>> = r.verdicts.iter().map(|v| v.text.clone()).collect();
    verdict::add_facts(&mut r);
    for (v, old) in r.verdicts.iter().zip(&saved) {
        assert_eq!(&lines(v), old);
    }
}

#[test]
fn percentages_slower_never_round_to_all_or_nothing() {
    assert_eq!(pct_slower(0.82), "18%");
    assert_eq!(pct_slower(1.0 / 33.3), "97%");
    assert_eq!(pct_slower(0.02), "98%");
    assert_eq!(pct_slower(0.004), "99.6%");
    assert_eq!(pct_slower(0.0001), "over 99.9%");
    assert_eq!(pct_slower(0.996), "0.4%");
}

/// What each method did to a `--neighbour` reader, and the gentlest and
/// harshest of them against the noise floor.
#[test]
fn wording_the_neighbour() {
    use crate::analysis::verdict::neighbour::tests::case;
    let apart = neighbour(&[
        case("buffered", &[(10_000, 80_000, Some(60))]),
        case("dontcache", &[(10_000, 10_300, Some(100))]),
    ]);
    let noisy = neighbour(&[
        case(
            "direct",
            &[(10_000, 13_000, Some(100)), (15_000, 17_000, Some(100))],
        ),
        case(
            "buffered",
            &[(12_000, 60_000, Some(40)), (12_000, 66_000, Some(50))],
        ),
    ]);
    let unknown = neighbour(&[case("buffered", &[(10_000, 30_000, None)])]);
    assert!(unknown.contains("(hit ratio ? → ?)"), "{unknown}");
    assert_eq!(neighbour(&[case("buffered", &[])]), "");
    insta::assert_snapshot!([apart, noisy, unknown].join("\n"));
}

/// Issue 28 item 4: with `--buffers pages,huge` the verdict says what the
/// buffers alone are worth, each method's huge arm against its pages arm.
#[test]
fn wording_huge_page_buffers_beside_base_pages() {
    let run = |pairs: &[(&str, f64)]| {
        let mut r = crate::report::testdata::fixture();
        r.interrupted = false;
        r.cases = pairs
            .iter()
            .map(|&(m, mib)| {
                let mut c = rounds(m, None, &around(mib, 2.0), &[9_000.0; 6]);
                c.block_size = 64 << 10;
                c.queue_depth = 4;
                c.queue_depth_requested = 4;
                c
            })
            .collect();
        verdict::of_run(&r)
            .iter()
            .map(say)
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    insta::assert_snapshot!([
        run(&[("uring", 900.0), ("uring+hugebuf", 1350.0)]),
        run(&[("direct", 900.0), ("direct+hugebuf", 905.0)]),
    ]
    .join("\n\n"));
}

/// A thread pool is worded as the pool of threads it is, beside the ways
/// of the other methods.
#[test]
fn a_thread_pool_is_worded_as_a_pool_of_threads() {
    let way = |m: &str, threads, depth, pool| Way {
        method: m.into(),
        threads,
        depth,
        pool,
    };
    let said = in_flight(
        8,
        &[
            way("direct", 8, 1, None),
            way("uring", 1, 8, None),
            way("threadpool", 1, 8, Some(8)),
        ],
    );
    assert_eq!(
        said,
        "At 8 requests in flight: direct on 8 threads of 1 request each; \
         uring on 1 thread at depth 8; threadpool on a pool of 8 threads."
    );
}

/// Not separated but not shown alike either (a wide interval straddling
/// even): too close to call, not "equally good"; and a job without a
/// call that spent the 2 s it was given: too close to call in 2 s. Each
/// verdict in full, then its one-line forms.
#[test]
fn wording_too_close_to_call_in_speed_and_in_its_budget() {
    use super::super::summary::{summary_line, verdict_line, Answer};
    let base = [100.0, 104.0, 97.0, 101.0, 99.0, 103.0, 98.0, 102.0];
    let k = [1.10, 0.91, 1.08, 0.93, 1.05, 0.95, 1.09, 0.92];
    let wide: Vec<f64> = base.iter().zip(k).map(|(b, k)| b * k).collect();
    let tie = all(&[
        rounds("uring", None, &base, &[1000.0; 8]),
        rounds("aio", None, &wide, &[1000.0; 8]),
    ]);
    let one = [1.0; 4];
    let short = all(&[
        rounds("direct", None, &[100.0, 101.0, 102.0, 99.0], &one),
        rounds("buffered", None, &[60.0, 70.0, 65.0, 90.0], &one),
    ]
    .map(|c| {
        let mut c = stopped(c, StopReason::MaxTime, 0.25);
        if let Some(r) = c.repetition_control.as_mut() {
            r.budget_ns = Some(2_000_000_000);
        }
        c
    }));
    let out: Vec<String> = tie
        .iter()
        .chain(&short)
        .map(|v| {
            let a = Answer::of(v).unwrap();
            format!(
                "{}\n{}\n{}",
                say(v),
                verdict_line(&a, None, Some("randread 4k")),
                summary_line("random reads", &a, None)
            )
        })
        .collect();
    insta::assert_snapshot!(out.join("\n\n"));
}

/// A method the leader beats but a method tied with it does not, after
/// enough rounds: its place is not settled (no "8 of 6 rounds").
#[test]
fn wording_a_place_not_settled_does_not_block_the_call() {
    use super::super::summary::{summary_line, verdict_line, Answer};
    let base = [100.0, 104.0, 97.0, 101.0, 99.0, 103.0, 98.0, 102.0];
    let k = [1.0, 0.85, 1.05, 0.83, 1.0, 0.86, 1.04, 0.84];
    let tied: Vec<f64> = base.iter().zip(k).map(|(b, k)| b * k).collect();
    let behind: Vec<f64> = base.iter().map(|b| b * 0.9).collect();
    let v = all(&[
        rounds("uring", None, &base, &[1000.0; 8]),
        rounds("aio", None, &tied, &[1000.0; 8]),
        rounds("psync", None, &behind, &[1000.0; 8]),
    ])
    .remove(0);
    let a = Answer::of(&v).unwrap();
    insta::assert_snapshot!(format!(
        "{}\n{}\n{}",
        say(&v),
        verdict_line(&a, None, Some("randread 4k")),
        summary_line("random reads", &a, None)
    ));
}

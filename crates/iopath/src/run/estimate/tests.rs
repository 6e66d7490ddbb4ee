//! Tests of [`super`].

use super::eta::SET_UPS_KEPT;
use super::*;
use iopath_io::Method;

fn plan(args: &[&str]) -> Plan {
    super::plan_of_args(args)
}

fn arms(p: &Plan) -> Vec<Vec<usize>> {
    super::super::job::jobs(&p.cases, p.schedule)
}

fn none(_: &Case) -> Option<f64> {
    None
}

#[test]
fn time_bound_repetitions_last_their_limit_and_fixed_counts_multiply() {
    let p = plan(&[
        "--methods",
        "direct,uring",
        "--patterns",
        "randread",
        "--qd",
        "32",
        "--time",
        "2s",
        "--repeat",
        "5",
        "--size",
        "64M",
    ]);
    let e = Estimate::of(&p, 64 << 20, true, &arms(&p), &none);
    for c in &e.cases {
        assert!((c.rep_s - (2.0 + SETUP_S)).abs() < 1e-9, "{c:?}");
        assert_eq!(c.reps, 5.0);
        assert!(!c.assumed && !c.open_ended);
    }
    let total = e.total().as_secs_f64();
    assert!((total - (2.0 * 5.0 * (2.0 + SETUP_S) + 64.0 * 1048576.0 / 500e6)).abs() < 1e-6);
    // Its words: `report::text::events` (snapshot `estimate_lines`).
    let short = e.short(&p).map(|s| (s.cases, s.most, s.remedy));
    assert_eq!(short, Some((2, 6, Remedy::Repeat)));
    assert_eq!((e.assumed(), e.open_ended()), (0, 0));
    assert_eq!(e.most(&p), None);
}

#[test]
fn the_default_run_is_estimated_from_its_budgets() {
    // 64 cases in 6 jobs (random patterns at 1 and 32 requests in
    // flight) of 10 or 11 methods, under the run's default budget: every
    // case gets the rounds a verdict needs, within the budget, set-up
    // included.
    let p = plan(&[]);
    assert_eq!((p.cases.len(), arms(&p).len()), (64, 6));
    assert_eq!(p.budget, Some(crate::plan::DEFAULT_BUDGET));
    assert_eq!(Estimate::budget(&p), p.budget);
    let e = Estimate::of(&p, 1 << 30, true, &arms(&p), &none);
    let total = e.total().as_secs_f64();
    let budget = crate::plan::DEFAULT_BUDGET.as_secs_f64();
    assert!(total > 0.3 * budget && total <= budget, "{total}");
    assert!(e
        .cases
        .iter()
        .all(|c| c.short_of.is_none() && c.reps >= 6.0));
    // The budget shortens the repetitions below the 150 ms of a run
    // without one.
    let t = p.time_limit().expect("a time limit per repetition");
    assert!(
        p.repeat.is_none() && t < Duration::from_millis(150),
        "{t:?}"
    );
    assert_eq!(e.short(&p), None);
    assert_eq!(e.assumed(), 0);
    // A buffered write's flush is in its repetition.
    let w = p
        .cases
        .iter()
        .position(|c| c.method == Method::Buffered && c.pattern == Pattern::Write)
        .unwrap();
    assert!((e.cases[w].rep_s - (t.as_secs_f64() * 3.0 + SETUP_S)).abs() < 1e-9);
}

/// Regression (issue 18, "runs" item 1): when a job cannot afford the
/// rounds its verdict needs, the estimate says so before the run, and
/// which flag gives them.
#[test]
fn jobs_short_of_their_verdicts_rounds_say_what_gives_them() {
    let p = plan(&["--max-time", "500ms"]);
    let e = Estimate::of(&p, 1 << 30, true, &arms(&p), &none);
    assert!(e.cases.iter().all(|c| c.short_of == Some(6)), "{e:?}");
    // The --max-time it names is enough.
    let t = e
        .cases
        .iter()
        .filter_map(|c| c.max_time_for_call)
        .max()
        .unwrap();
    assert_eq!(
        e.short(&p),
        Some(Short {
            cases: 64,
            least: 6,
            most: 6,
            remedy: Remedy::MaxTime(t)
        })
    );
    let more = plan(&["--max-time", &crate::model::units::fmt_duration(t)]);
    let e2 = Estimate::of(&more, 1 << 30, true, &arms(&more), &none);
    assert!(e2.cases.iter().all(|c| c.short_of.is_none()), "{t:?}");
    // A fixed count below the rounds: --repeat.
    let few = plan(&[
        "--repeat",
        "5",
        "--methods",
        "direct,uring",
        "--patterns",
        "read",
    ]);
    let e3 = Estimate::of(&few, 1 << 30, true, &arms(&few), &none);
    assert_eq!(e3.cases[0].short_of, Some(6));
    assert_eq!(
        e3.short(&few),
        Some(Short {
            cases: 2,
            least: 6,
            most: 6,
            remedy: Remedy::Repeat
        })
    );
    // A case timeout that ends the job first, and too few --repeat: both.
    let capped = plan(&[
        "--repeat",
        "3",
        "--case-timeout",
        "1s",
        "--methods",
        "direct,buffered",
        "--patterns",
        "read",
        "--io-size",
        "1G",
    ]);
    let e5 = Estimate::of(&capped, 1 << 30, true, &arms(&capped), &none);
    assert!(e5.cases.iter().all(|c| c.short_by_timeout), "{e5:?}");
    assert_eq!(
        e5.short(&capped),
        Some(Short {
            cases: 2,
            least: 6,
            most: 6,
            remedy: Remedy::CaseTimeout { repeat: true }
        })
    );
    // One method: no verdict to wait for.
    let one = plan(&["--repeat", "2", "--methods", "direct", "--patterns", "read"]);
    let e4 = Estimate::of(&one, 1 << 30, true, &arms(&one), &none);
    assert_eq!(e4.cases[0].short_of, None);
}

#[test]
fn bytes_bound_cases_use_the_measured_speed_once_known() {
    // One pass of 1 GiB, buffered (caches: no wrap), no time limit.
    let p = plan(&[
        "--methods",
        "buffered",
        "--patterns",
        "read",
        "--io-size",
        "1G",
        "--repeat",
        "2",
    ]);
    let guess = Estimate::of(&p, 1 << 30, false, &arms(&p), &none);
    assert!(guess.cases[0].assumed && guess.cases[0].open_ended);
    assert!((guess.cases[0].rep_s - ((1u64 << 30) as f64 / 500e6 + SETUP_S)).abs() < 1e-9);
    assert_eq!(guess.open_ended(), 1);
    let measured = Estimate::of(&p, 1 << 30, false, &arms(&p), &|_| Some(100.0 * 1048576.0));
    assert!(!measured.cases[0].assumed);
    assert!((measured.cases[0].rep_s - (10.24 + SETUP_S)).abs() < 1e-9);
    assert!((measured.total().as_secs_f64() - 2.0 * (10.24 + SETUP_S)).abs() < 1e-6);
    // Half of it spent, nothing done: half of it left.
    let each = 10.24 + SETUP_S;
    let left = measured.left(&[false], &[each]).as_secs_f64();
    assert!((left - each).abs() < 1e-6, "{left}");
    assert_eq!(measured.left(&[true], &[0.0]), Duration::ZERO);
}

#[test]
fn a_finished_case_lends_its_speed_to_cases_like_it() {
    // Two one-pass buffered reads: after the first ran at 100 MiB/s,
    // the second is estimated at that speed, not the assumed one.
    let p = plan(&[
        "--methods",
        "buffered,mmap",
        "--patterns",
        "read",
        "--io-size",
        "1G",
        "--repeat",
        "1",
    ]);
    let mut eta = Eta::new(&p, 1 << 30, false, arms(&p));
    let before = eta.left().as_secs_f64();
    assert!((before - 2.0 * ((1u64 << 30) as f64 / 500e6 + SETUP_S)).abs() < 1e-6);
    eta.spent(0, 3.0);
    eta.finished(&p, 0, Some(100.0 * 1048576.0));
    // mmap has no speed of its own: the pattern's stands in.
    let after = eta.left().as_secs_f64();
    assert!((after - (10.24 + SETUP_S)).abs() < 1e-6, "{after}");
    eta.spent(1, 4.0);
    assert!((eta.left().as_secs_f64() - (6.24 + SETUP_S)).abs() < 1e-6);
}

/// Regression (issue 18, "runs" item 3): the time left froze during a
/// long repetition (the case's time spent was booked only when it
/// ended). A synthetic clock: seconds into the repetition go in.
#[test]
fn the_time_left_runs_down_during_a_repetition_and_never_goes_up() {
    // Two one-pass reads of 1 GiB at 100 MiB/s: 10.24 s and the set-up each.
    let p = plan(&[
        "--methods",
        "buffered,mmap",
        "--patterns",
        "read",
        "--io-size",
        "1G",
        "--repeat",
        "1",
    ]);
    let eta = Eta::new(&p, 1 << 30, false, arms(&p));
    let speed = 100.0 * 1048576.0;
    let mut eta2 = Eta::new(&p, 1 << 30, false, arms(&p));
    eta2.est = Estimate::of(&p, 1 << 30, false, &arms(&p), &|_| Some(speed));
    let each = 10.24 + SETUP_S;
    // 3 s into case 0 (booked), a repetition starting now.
    eta2.spent(0, 3.0);
    let clock = eta2.clock(0);
    assert!((clock.at(0.0).as_secs_f64() - eta2.left().as_secs_f64()).abs() < 1e-9);
    assert!((clock.others_s - each).abs() < 1e-9);
    assert!((clock.case_s - (each - 3.0)).abs() < 1e-9);
    // It ticks: 2.5 s in, 2.5 s less.
    assert!((clock.at(2.5).as_secs_f64() - (2.0 * each - 5.5)).abs() < 1e-9);
    // Past the case's estimate, the other case's time stands.
    assert!((clock.at(100.0).as_secs_f64() - each).abs() < 1e-9);
    // Never up as time passes, whatever the steps.
    let mut last = f64::INFINITY;
    for k in 0..200 {
        let now = clock.at(k as f64 * 0.1).as_secs_f64();
        assert!(now <= last + 1e-12, "{k}: {now} > {last}");
        last = now;
    }
    // When the repetition ends and its time is booked, the clock it
    // ran down and the booked time agree.
    eta2.spent(0, 3.0 + 4.0);
    assert!((eta2.left().as_secs_f64() - clock.at(4.0).as_secs_f64()).abs() < 1e-9);
    // A finished case has nothing left to run down.
    eta2.finished(&p, 0, Some(speed));
    assert_eq!(eta2.clock(0).case_s, 0.0);
    assert_eq!(eta2.clock(0).at(1.0), eta2.left());
    assert_eq!(
        eta.clock(7),
        LeftClock {
            others_s: eta.left().as_secs_f64(),
            case_s: 0.0
        }
    );
}

/// Regression (issue 18, "runs" item 2): presets ran 3 repetitions of
/// 5 methods, where no call is possible. Every built-in preset's jobs
/// get the rounds their verdicts need, except where hmmap's case
/// timeout ends its slowest cases first (and the estimate says so),
/// and every preset is estimated within 20 minutes.
#[test]
fn every_preset_runs_the_rounds_its_verdicts_need() {
    for preset in crate::import::preset::all() {
        let p = crate::plan::Plan::from_spec(
            &preset.job,
            &crate::plan::Origin {
                preset: Some(preset.name.to_string()),
                ..Default::default()
            },
        )
        .unwrap();
        let size = p.size.unwrap_or(crate::plan::DEFAULT_SIZE);
        let e = Estimate::of(&p, size, true, &arms(&p), &none);
        for (c, t) in p.cases.iter().zip(&e.cases) {
            assert!(
                t.short_of.is_none() || t.short_by_timeout,
                "{}: {} {}: {t:?}",
                preset.name,
                c.method.name(),
                c.pattern.name()
            );
        }
        if e.cases.iter().any(|t| t.short_by_timeout) {
            // hmmap: W and R jobs of 5 methods need 8, RR's of 4 need 7.
            let short = e.short(&p).unwrap();
            assert_eq!((short.least, short.most), (7, 8), "{short:?}");
            assert!(
                matches!(short.remedy, Remedy::CaseTimeout { .. }),
                "{short:?}"
            );
        }
        let total = e.total().as_secs_f64();
        assert!(total < 20.0 * 60.0, "{}: {total}", preset.name);
    }
}

#[test]
fn the_case_timeout_bounds_every_case_and_the_run() {
    // hmmap with --time pass: whole operations, as the seed ran them.
    let p = plan(&["--preset", "hmmap", "--time", "pass"]);
    assert_eq!(p.case_timeout, Some(Duration::from_secs(45)));
    let e = Estimate::of(&p, 4 << 30, true, &arms(&p), &none);
    assert!(e
        .cases
        .iter()
        .all(|c| c.total_s <= 45.0 + SETUP_S + 1e-9 && !c.open_ended));
    // mmap's RR: 1,048,576 reads of 8 bytes at the assumed 160 kB/s
    // would be 52 s a repetition; the cap makes it 45 s.
    let rr = p
        .cases
        .iter()
        .position(|c| c.method == Method::Mmap && c.pattern == Pattern::RandRead)
        .unwrap();
    assert!(e.cases[rr].rep_s > 50.0, "{:?}", e.cases[rr]);
    assert!(e.cases[rr].total_s > 44.0, "{:?}", e.cases[rr]);
    let most = p.cases.len() as f64 * (45.0 + SETUP_S) + e.prefill_s;
    assert!(e.total().as_secs_f64() <= most + 1e-6);
    // Every case within its cap: "at most about" the total.
    let at_most = e.most(&p).unwrap().as_secs_f64();
    assert!((at_most - most).abs() < 1e-6, "{at_most}");
    assert!(at_most <= 1.05 * e.total().as_secs_f64(), "{at_most}");
    // Its W cases' flushes may pass the cap (ucache's write-back at
    // close took 3 to 6 s past it here): the estimate says so.
    assert!(flushes_past_cap(&p));
}

/// hmmap as shipped: 1 s slices (with a write's flush and the cold-cache
/// set-up around each), 8 of them per case, each case within its 45 s cap, and the run within the 20 minutes a preset may take.
#[test]
fn hmmap_slices_fit_the_case_timeout_and_the_run_fits_twenty_minutes() {
    let p = plan(&["--preset", "hmmap"]);
    let e = Estimate::of(&p, 4 << 30, true, &arms(&p), &none);
    for (c, t) in p.cases.iter().zip(&e.cases) {
        assert!(
            t.total_s < 45.0,
            "{} {}: {t:?}",
            c.method.name(),
            c.pattern.name()
        );
        assert!(
            t.short_of.is_none(),
            "{} {}: {t:?}",
            c.method.name(),
            c.pattern.name()
        );
    }
    assert!(e.total().as_secs_f64() < 20.0 * 60.0, "{:?}", e.total());
}

/// Regression (issue 28, item 4): `--cache warm --time 3s` measured one
/// ~50 ms pass of a cached file for the caching methods, 2.3x fio's
/// time-based figure. With a warm cache memory is what was asked for:
/// every method's sequential repetition lasts its time limit.
#[test]
fn a_warm_cache_sequential_case_of_a_caching_method_wraps_for_its_time() {
    let args = |cache: &str| -> Vec<String> {
        [
            "--methods",
            "buffered,mmap,direct",
            "--patterns",
            "read",
            "--time",
            "3s",
            "--cache",
            cache,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let warm = plan(&args("warm").iter().map(String::as_str).collect::<Vec<_>>());
    assert!(warm.cases.iter().all(|c| warm.wraps(c)), "{:?}", warm.cases);
    let cold = plan(&args("cold").iter().map(String::as_str).collect::<Vec<_>>());
    let wrapped: Vec<bool> = cold.cases.iter().map(|c| cold.wraps(c)).collect();
    assert_eq!(wrapped, [false, false, true], "only direct wraps from cold");
    let e = Estimate::of(&warm, 256 << 20, false, &arms(&warm), &|_| Some(2e9));
    assert!(e.cases.iter().all(|c| c.rep_s >= 3.0), "{:?}", e.cases);
}

#[test]
fn sequential_cases_of_methods_that_do_not_cache_wrap_and_take_their_time() {
    let p = plan(&[
        "--methods",
        "direct,buffered",
        "--patterns",
        "read",
        "--time",
        "2s",
        "--size",
        "256M",
        "--repeat",
        "1",
    ]);
    let direct = &p.cases[0];
    let buffered = &p.cases[1];
    assert!(p.wraps(direct) && !p.wraps(buffered));
    assert_eq!(rep_bytes(&p, direct, 256 << 20), None);
    assert_eq!(rep_bytes(&p, buffered, 256 << 20), Some(256 << 20));
    // Verified writes stay one pass (two writes of one block in flight
    // at once could interleave); verified reads still wrap.
    let v = plan(&[
        "--methods",
        "direct",
        "--patterns",
        "read,write",
        "--time",
        "2s",
        "--verify",
    ]);
    assert!(p.wraps(direct) && v.wraps(&v.cases[0]) && !v.wraps(&v.cases[1]));
    let e = Estimate::of(&p, 256 << 20, false, &arms(&p), &|_| Some(2e9));
    assert!((e.cases[0].rep_s - (2.0 + SETUP_S)).abs() < 1e-9);
    // One pass of 256 MiB at 2 GB/s: 0.13 s, not 2 s.
    assert!(e.cases[1].rep_s < 0.2, "{:?}", e.cases[1]);
}

/// Regression (issue 18, fix item 1): warm-ups did not cancel the
/// rounds a verdict needs in the estimate but did in the run (the
/// run divided the job's time, warm-ups included, by its measured
/// rounds only). The job loop, given the estimate's repetition times,
/// runs the rounds the estimate counts, with and without warm-ups.
#[test]
fn the_job_loop_runs_the_rounds_the_estimate_counts() {
    use super::super::repeat::{run_job, RepOutcome, Schedule};
    for warmup in ["0", "1", "2"] {
        let p = plan(&[
            "--methods",
            "direct,uring",
            "--patterns",
            "randread",
            "--concurrency",
            "32",
            "--time",
            "100ms",
            "--max-time",
            "450ms",
            "--size",
            "64M",
            "--warmup",
            warmup,
        ]);
        let jobs = arms(&p);
        assert_eq!(jobs.len(), 1);
        // At a set-up of 20 ms, as these figures were chosen for.
        let e = Estimate::with_set_up(&p, (64 << 20, 0.02), true, &jobs, &none);
        let rule = p.stop_rule().map(|mut r| {
            r.wanted_reps = r.min_reps.max(wanted_rounds(&p, 2).unwrap());
            r
        });
        let s = Schedule {
            fixed: None,
            rule,
            warmup: p.warmup,
            seed: 1,
            round_base: 0,
            case_timeout_ns: None,
            budget_ns: None,
        };
        // Throughputs too spread for the interval target to stop it.
        let bws = [50.0, 150.0, 100.0, 80.0];
        let mut i = 0;
        let end = run_job(2, &s, |c| {
            i += 1;
            RepOutcome::Done {
                bw: bws[i % bws.len()],
                wall_ns: (e.cases[c.arm].rep_s * 1e9) as u64,
            }
        });
        let expected = e.cases[0].reps - f64::from(p.warmup);
        assert_eq!(
            f64::from(end.rounds),
            expected,
            "--warmup {warmup}: {end:?}"
        );
        // With up to one warm-up the verdict's 6 rounds fit in twice
        // the budget (8 rounds of 0.24 s do not).
        assert_eq!(e.cases[0].short_of.is_none(), warmup != "2", "{warmup}");
        assert_eq!(end.arms[0].warmup, p.warmup);
    }
}

/// Regression (issue 28, item c): under a budget the rounds every arm
/// runs whatever they cost cannot fit in (`--budget 1ms`), the estimate
/// said "at most about 0 s" and the run took 17 s: it is at least what
/// those rounds take.
#[test]
fn a_budget_smaller_than_the_floor_of_rounds_is_estimated_at_least_the_floor() {
    let p = plan(&["--budget", "1ms", "--size", "4M"]);
    let e = Estimate::of(&p, 4 << 20, true, &arms(&p), &none);
    let floor: f64 = e.prefill_s
        + e.cases
            .iter()
            .map(|c| c.rep_s * (crate::plan::MIN_ADAPTIVE_REPS as f64 + f64::from(p.warmup)))
            .sum::<f64>();
    let Some(Bound::AtLeast { budget, floor: f }) = e.bound(&p) else {
        panic!("{:?}", e.bound(&p))
    };
    assert_eq!(budget, Duration::from_millis(1));
    assert!((f.as_secs_f64() - floor).abs() < 1e-3, "{f:?} vs {floor}");
    assert!(f > budget && f <= e.total(), "{f:?} {:?}", e.total());
    // The default budget holds the default run.
    let p = plan(&[]);
    let e = Estimate::of(&p, 1 << 30, true, &arms(&p), &none);
    assert!(
        matches!(e.bound(&p), Some(Bound::Holds { .. })),
        "{:?}",
        e.bound(&p)
    );
    // Without a budget, no bound.
    let p = plan(&["--repeat", "3"]);
    let e = Estimate::of(&p, 1 << 30, true, &arms(&p), &none);
    assert_eq!(e.bound(&p), None);
}

/// A replay is never cut by the time limit: its estimate is the trace's
/// reads and writes (at an assumed time per op, then the measured speed),
/// and no shorter than the recorded span under the recorded timing, not
/// the default time limit per repetition.
#[test]
fn a_replays_estimate_is_its_ops_not_the_time_limit() {
    use crate::plan::replay::{apply, ReplaySource, ReplayTiming};
    use crate::trace::replay::{Survey, SurveyThread};
    let source = |timing| ReplaySource {
        trace: "/t/long.trace".into(),
        name: "long.trace".into(),
        survey: Survey {
            file_sizes: vec![1 << 30],
            threads: vec![SurveyThread {
                tid: 1,
                ops: 1_000_000,
                data_ops: 1_000_000,
                files: vec![0],
                depth: 1,
            }],
            reads: 1_000_000,
            read_bytes: 4096 * 1_000_000,
            max_len: 4096,
            duration_ns: 600_000_000_000,
            ..Survey::default()
        },
        timing,
        qd: None,
    };
    let estimate = |timing, speed: Option<f64>| {
        let mut p = plan(&["--repeat", "3"]);
        let methods = [Method::Buffered.into(), Method::Uring.into()];
        apply(&mut p, source(timing), &methods, None).unwrap();
        Estimate::of(&p, 1 << 30, false, &arms(&p), &|_| speed)
    };
    let fast = estimate(ReplayTiming::Fast, None);
    for c in &fast.cases {
        // 1 M ops at 50 us each, one in flight.
        assert!((c.rep_s - (50.0 + SETUP_S)).abs() < 1e-6, "{c:?}");
        assert_eq!(c.reps, 3.0);
        assert!(c.assumed && !c.open_ended, "{c:?}");
    }
    let measured = estimate(ReplayTiming::Fast, Some(400e6));
    assert!((measured.cases[0].rep_s - (4.096e9 / 400e6 + SETUP_S)).abs() < 1e-6);
    assert!(!measured.cases[0].assumed);
    let recorded = estimate(ReplayTiming::Recorded { scale: 0.5 }, Some(400e6));
    assert!((recorded.cases[0].rep_s - (300.0 + SETUP_S)).abs() < 1e-6);
    // Under --budget a repetition runs no longer than its share of it.
    let mut p = plan(&["--budget", "20s"]);
    let methods = [Method::Buffered.into(), Method::Uring.into()];
    apply(&mut p, source(ReplayTiming::Fast), &methods, None).unwrap();
    let budgeted = Estimate::of(&p, 1 << 30, false, &arms(&p), &|_| None);
    let limit = crate::plan::replay::repetition_limit(&p, Some(20_000_000_000)).unwrap();
    for c in &budgeted.cases {
        assert!(
            (c.rep_s - (limit.as_secs_f64() + SETUP_S)).abs() < 1e-6,
            "{c:?}"
        );
    }
}

/// Regression (issue 28, item d): repetitions run on to 8 times their
/// chosen length for 32 requests a slot left the default run's sequential
/// jobs 3 rounds of the 6 a verdict needs. The budget now buys every job
/// those rounds first, and stretches its repetitions only with what is
/// left: at the stretch each job is given, its rounds fit in its share
/// even when every arm runs its whole stretched length, and the job loop
/// given those repetitions runs them all.
#[test]
fn the_budget_buys_every_jobs_rounds_before_it_stretches_repetitions() {
    use super::super::repeat::{run_job, RepOutcome, Schedule};
    let size = 1 << 30;
    let rounds = crate::stats::verdict_rounds();
    let p = plan(&["--methods", "direct,uring,buffered", "--budget", "60s"]);
    let mut stretched = Vec::new();
    for job in arms(&p) {
        let cases: Vec<&Case> = job.iter().map(|&i| &p.cases[i]).collect();
        let share = expected_share(&p, &cases, 0.0).unwrap();
        let s = stretch(&p, &cases, (size, SETUP_S), share);
        assert!((1.0..=crate::plan::MAX_STRETCH).contains(&s), "{s}");
        let whole: Vec<f64> = cases
            .iter()
            .map(|c| rep_time(&p, c, (size, SETUP_S), None, Stretch::Whole(s)).0)
            .collect();
        let cost = rounds as f64 * whole.iter().sum::<f64>();
        assert!(cost <= STRETCH_SHARE * share + 1e-6, "{cost} of {share}");
        if s > 1.0 {
            stretched.push(cases[0].pattern);
        }
        // The job loop under that share, every repetition its whole
        // stretched length: the rounds the verdict needs, all of them.
        let rule = p.stop_rule().map(|mut r| {
            r.wanted_reps = rounds;
            r
        });
        let sched = Schedule {
            fixed: None,
            rule,
            warmup: 0,
            seed: 1,
            round_base: 0,
            case_timeout_ns: None,
            budget_ns: Some((share * 1e9) as u64),
        };
        let end = run_job(cases.len(), &sched, |c| RepOutcome::Done {
            bw: 100.0 + (c.arm * 7 + c.round as usize % 5) as f64,
            wall_ns: (whole[c.arm] * 1e9) as u64,
        });
        assert!(end.rounds as usize >= rounds, "{end:?}");
    }
    // That budget leaves room to stretch every job's repetitions.
    assert_eq!(stretched.len(), arms(&p).len(), "{stretched:?}");
    // The default run's budget does not even pay for the rounds of its 64
    // cases at the set-up measured under load before the residency and the
    // kernel threads were read cheaply (0.12 s): nothing is stretched.
    let p = plan(&[]);
    for job in arms(&p) {
        let cases: Vec<&Case> = job.iter().map(|&i| &p.cases[i]).collect();
        let share = expected_share(&p, &cases, 0.0).unwrap();
        assert_eq!(stretch(&p, &cases, (size, 0.12), share), 1.0, "{share}");
    }
    // A budget that pays only for the rounds stretches nothing; one that
    // pays for 8 times the length, all of it.
    let p = plan(&[
        "--methods",
        "direct,uring",
        "--patterns",
        "read",
        "--bs",
        "1m",
    ]);
    let cases: Vec<&Case> = p.cases.iter().collect();
    let floor: f64 = cases
        .iter()
        .map(|c| {
            let rep = rep_time(&p, c, (size, SETUP_S), None, Stretch::Whole(1.0)).0;
            rounds as f64 * rep
        })
        .sum();
    assert_eq!(
        stretch(&p, &cases, (size, SETUP_S), floor / STRETCH_SHARE),
        1.0
    );
    assert_eq!(
        stretch(&p, &cases, (size, SETUP_S), 100.0 * floor),
        crate::plan::MAX_STRETCH
    );
    // A length given (`--time`) is kept as given.
    let p = plan(&["--time", "50ms", "--methods", "direct,uring"]);
    let cases: Vec<&Case> = p.cases.iter().collect();
    assert_eq!(stretch(&p, &cases, (size, SETUP_S), 1000.0), 1.0);
}

/// Issue 28: the estimate counted 20 ms of set-up per repetition whatever
/// the run measured (30-260 ms under load). The set-up each repetition
/// took besides its timed interval now replaces it, the mean of the
/// latest [`SET_UPS_KEPT`], for the cases not done.
#[test]
fn the_estimate_counts_the_set_up_the_run_measured() {
    let p = plan(&[
        "--methods",
        "direct,uring",
        "--patterns",
        "randread",
        "--time",
        "50ms",
        "--repeat",
        "4",
    ]);
    let mut eta = Eta::new(&p, 1 << 30, false, arms(&p));
    // Every case's repetitions (N1 and N32 of each method).
    let reps: f64 = eta.estimate().cases.iter().map(|c| c.reps).sum();
    let before = eta.left().as_secs_f64();
    assert!((before - reps * (0.05 + SETUP_S)).abs() < 1e-6, "{before}");
    eta.set_up(&p, 0.3);
    assert!((eta.setup_s() - 0.3).abs() < 1e-12);
    let after = eta.left().as_secs_f64();
    assert!((after - reps * (0.05 + 0.3)).abs() < 1e-6, "{after}");
    // The mean of the latest: older set-ups leave it (estimated again at
    // the 128th).
    for _ in 0..2 * SET_UPS_KEPT - 1 {
        eta.set_up(&p, 0.1);
    }
    assert!((eta.setup_s() - 0.1).abs() < 1e-12);
    assert!((eta.left().as_secs_f64() - reps * (0.05 + 0.1)).abs() < 1e-6);
    // A case done keeps its time; the floor left counts the others'.
    eta.finished(&p, 0, Some(1e8));
    let others: f64 = eta.estimate().cases[1..].iter().map(|c| c.floor_s).sum();
    assert!((eta.floor_left(&[]) - others).abs() < 1e-9);
    let last = eta.estimate().cases[3].floor_s;
    assert!((eta.floor_left(&[1, 2]) - last).abs() < 1e-9);
    assert_eq!(eta.floor_left(&[1, 2, 3]), 0.0);
}

/// The floor of rounds every arm runs is counted at the set-up measured:
/// under a budget, a job's floor is its 3 rounds (and warm-up) at the
/// repetition's length plus that set-up.
#[test]
fn the_floor_of_rounds_is_counted_at_the_measured_set_up() {
    let p = plan(&[
        "--methods",
        "direct,uring",
        "--patterns",
        "randread",
        "--budget",
        "20s",
    ]);
    let mut eta = Eta::new(&p, 1 << 30, false, arms(&p));
    let floor_at = |eta: &Eta| eta.floor_left(&[]);
    let prior = floor_at(&eta);
    eta.set_up(&p, SETUP_S + 0.1);
    let rounds = (crate::plan::MIN_ADAPTIVE_REPS as u32 + p.warmup) as f64;
    let more = floor_at(&eta) - prior;
    let n = p.cases.len() as f64;
    assert!((more - n * rounds * 0.1).abs() < 1e-6, "{more}");
}

/// Issue 28: under a budget the time left was the rounds' (the verdicts'
/// 6 rounds at the set-up measured): "about 59 s left (21 s so far)" in a
/// run that ended at 50 s, its jobs stopping at their shares. It is now
/// no more than the budget left, and no less than the floor of rounds.
#[test]
fn the_time_left_under_a_budget_is_the_budget_left_or_the_floor() {
    let p = plan(&[
        "--methods",
        "direct,uring",
        "--patterns",
        "randread",
        "--time",
        "100ms",
        "--budget",
        "2s",
    ]);
    let mut eta = Eta::new(&p, 1 << 30, false, arms(&p));
    let rounds = eta.estimate().total().as_secs_f64();
    assert!(rounds > 2.0, "{rounds}");
    let left = eta.left().as_secs_f64();
    assert!(left <= 2.0 && left > 1.0, "{left}");
    // A set-up that makes the floor of rounds longer than the budget.
    eta.set_up(&p, 0.5);
    let floor = eta.floor_left(&[]);
    assert!(floor > 2.0, "{floor}");
    assert!((eta.left().as_secs_f64() - floor).abs() < 1e-6);
}

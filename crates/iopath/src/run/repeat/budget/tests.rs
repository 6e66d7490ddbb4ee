use super::super::*;
use iopath_io::data::Rng;

const MS: u64 = 1_000_000;

/// Adaptive rounds under a budget of `rounds_of_10ms` repetitions of 10 ms.
fn budgeted(reps_of_10ms: u64, seed: u64) -> Schedule {
    Schedule {
        fixed: None,
        rule: Some(StopRule {
            ci_target: 0.03,
            min_reps: 3,
            wanted_reps: crate::stats::verdict_rounds(),
            max_reps: 1000,
            max_time_ns: 0,
            warmup_rounds: 0,
        }),
        warmup: 0,
        seed,
        round_base: 0,
        case_timeout_ns: None,
        budget_ns: Some(reps_of_10ms * 10 * MS),
    }
}

fn normal(rng: &mut Rng) -> f64 {
    let u = |r: &mut Rng| ((r.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (a, b) = (u(rng), u(rng));
    (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
}

/// A deterministic fake: arm `a` runs at `speed[a]` times the round's
/// level, with `noise` of its own per repetition; every repetition takes
/// 10 ms. Logs every call.
fn fake<'a>(
    speed: &'a [f64],
    noise: f64,
    rng: &'a mut Rng,
    log: &'a mut Vec<RepCall>,
) -> impl FnMut(RepCall) -> RepOutcome + 'a {
    move |c| {
        log.push(c);
        let level = 100.0 * (1.0 + 0.05 * ((c.round % 7) as f64 - 3.0) / 3.0);
        RepOutcome::Done {
            bw: level * speed[c.arm] * (noise * normal(rng)).exp(),
            wall_ns: 10 * MS,
        }
    }
}

/// The arms of each round of `log`, sorted.
fn rounds_of(log: &[RepCall]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for c in log.iter().filter(|c| !c.warmup) {
        let r = c.round as usize;
        if out.len() < r {
            out.resize(r, Vec::new());
        }
        out[r - 1].push(c.arm);
    }
    out.iter_mut().for_each(|r| r.sort_unstable());
    out
}

#[test]
fn arms_clearly_behind_stop_taking_rounds_and_the_close_ones_go_on() {
    // Arm 1 runs at half the speed of arm 0; arm 2 alternates 5% either
    // side of arm 0, so its interval does not settle within the budget.
    let mut rng = Rng::new(1);
    let mut log = Vec::new();
    let e = {
        let mut f = fake(&[1.0, 0.5, 1.0], 0.002, &mut rng, &mut log);
        run_job(3, &budgeted(60, 3), |c| match f(c) {
            RepOutcome::Done { bw, wall_ns } if c.arm == 2 => RepOutcome::Done {
                bw: bw * if c.round % 2 == 0 { 1.05 } else { 0.95 },
                wall_ns,
            },
            o => o,
        })
    };
    let floor = crate::stats::leader::FIRST_LOOK as u32;
    assert_eq!(
        (e.arms[1].measured, e.arms[1].stopped_by),
        (floor, StopReason::Settled)
    );
    assert_eq!(e.stopped_by, StopReason::MaxTime, "{e:?}");
    // The close arms took the rounds the slow one left: 60 repetitions in
    // all, never past the budget.
    assert_eq!(e.arms[0].measured, e.rounds);
    assert_eq!(e.arms[2].measured, e.rounds);
    let reps: u32 = e.arms.iter().map(|a| a.measured).sum();
    assert_eq!(reps, 60);
    assert_eq!(e.rounds, floor + (60 - 3 * floor) / 2);
    // Every round ran each arm still in once: the pairing holds.
    for (i, r) in rounds_of(&log).iter().enumerate() {
        let want: &[usize] = if (i as u32) < floor {
            &[0, 1, 2]
        } else {
            &[0, 2]
        };
        assert_eq!(r, want, "round {}", i + 1);
    }
}

#[test]
fn a_job_whose_leader_is_settled_ends_before_its_budget() {
    let mut rng = Rng::new(2);
    let mut log = Vec::new();
    let e = run_job(
        2,
        &budgeted(1000, 1),
        fake(&[1.0, 0.6], 0.01, &mut rng, &mut log),
    );
    let floor = crate::stats::leader::FIRST_LOOK as u32;
    assert_eq!((e.rounds, e.stopped_by), (floor, StopReason::Settled));
    assert_eq!(log.len() as u32, 2 * floor);
}

#[test]
fn a_tie_within_the_margin_is_settled_too() {
    // Two arms measured alike to 0.1%: a tie no further round would
    // change; the job ends at the floor.
    let mut rng = Rng::new(3);
    let mut log = Vec::new();
    let e = run_job(
        2,
        &budgeted(1000, 1),
        fake(&[1.0, 1.0], 0.001, &mut rng, &mut log),
    );
    assert_eq!(e.stopped_by, StopReason::Settled);
    assert!(e.rounds <= crate::stats::leader::FIRST_LOOK as u32);
}

#[test]
fn the_budget_holds_and_the_floor_of_three_rounds_holds_past_it() {
    // 4 arms, a budget of 30 repetitions: 7 rounds (28), never 8.
    let mut rng = Rng::new(4);
    let mut log = Vec::new();
    let speeds = [1.0, 1.0, 1.0, 1.0];
    let e = run_job(4, &budgeted(30, 1), |c| {
        // Each arm 5% either way of the others in turn: nothing settles.
        let up = (c.round / (1 + c.arm as u32)) % 2 == 0;
        let bw = if up { 105.0 } else { 95.0 };
        log.push(c);
        let _ = (&speeds, &mut rng);
        RepOutcome::Done {
            bw,
            wall_ns: 10 * MS,
        }
    });
    assert_eq!((e.rounds, e.stopped_by), (7, StopReason::MaxTime));
    assert_eq!(log.len(), 28);
    // A budget of 5 repetitions still runs the floor: 3 rounds.
    let mut rng = Rng::new(5);
    let mut log = Vec::new();
    let e = run_job(4, &budgeted(5, 1), fake(&speeds, 0.1, &mut rng, &mut log));
    assert_eq!((e.rounds, e.stopped_by), (3, StopReason::MaxTime));
}

#[test]
fn budgeted_aa_jobs_are_called_apart_at_most_one_time_in_twenty() {
    // Identical arms with 10% noise per repetition, looked at after every
    // round: the verdict's step-down test on what the loop leaves (each
    // arm's rounds, paired) calls a difference at most 5% of the time.
    let mut rng = Rng::new(28);
    for arms in [2usize, 5] {
        let jobs = 200;
        let mut wrong = 0;
        for j in 0..jobs {
            let mut log = Vec::new();
            let mut bw: Vec<Vec<(u32, f64)>> = vec![Vec::new(); arms];
            let speeds = vec![1.0; arms];
            let mut f = fake(&speeds, 0.10, &mut rng, &mut log);
            run_job(arms, &budgeted(40 * arms as u64, j), |c| {
                let o = f(c);
                if let RepOutcome::Done { bw: x, .. } = o {
                    bw[c.arm].push((c.round, x));
                }
                o
            });
            wrong += usize::from(any_called(&bw));
        }
        let rate = wrong as f64 / jobs as f64;
        assert!(rate <= 0.05, "{arms} arms: {rate}");
    }
}

/// The verdict's test on the loop's samples: any arm behind the leader.
fn any_called(bw: &[Vec<(u32, f64)>]) -> bool {
    use crate::stats::{compare_paired_with, leader, EQUIVALENCE_MARGIN, VERDICT_ALPHA};
    let med = |v: &Vec<(u32, f64)>| {
        let mut s: Vec<f64> = v.iter().map(|x| x.1).collect();
        s.sort_by(|a, b| a.total_cmp(b));
        crate::stats::median_sorted(&s)
    };
    let vs = |g: usize, i: usize| {
        let pairs: Vec<(f64, f64)> = bw[i]
            .iter()
            .filter_map(|&(r, x)| bw[g].iter().find(|y| y.0 == r).map(|y| (x, y.1)))
            .collect();
        compare_paired_with(&pairs, EQUIVALENCE_MARGIN, VERDICT_ALPHA)
    };
    let lead = (0..bw.len())
        .max_by(|&a, &b| med(&bw[a]).total_cmp(&med(&bw[b])))
        .unwrap();
    let ratio = |i: usize| vs(lead, i).map_or(f64::INFINITY, |k| k.ratio);
    let mut order: Vec<usize> = (0..bw.len()).filter(|&i| i != lead).collect();
    order.sort_by(|&a, &b| ratio(a).total_cmp(&ratio(b)));
    order.insert(0, lead);
    leader::step_down(bw.len(), &|g, i| vs(order[g], order[i])).contains(&leader::Standing::Behind)
}

/// One job of `speeds.len()` arms under a budget of `rounds` rounds of them
/// all, `noise` per repetition: how it ended, and each arm's throughput per
/// round.
fn sim_job(
    speeds: &[f64],
    noise: f64,
    rounds: u64,
    rng: &mut Rng,
    seed: u64,
) -> (JobEnd, Vec<Vec<f64>>) {
    let mut log = Vec::new();
    let mut bw: Vec<Vec<f64>> = vec![Vec::new(); speeds.len()];
    let mut f = fake(speeds, noise, rng, &mut log);
    let e = run_job(
        speeds.len(),
        &budgeted(rounds * speeds.len() as u64, seed),
        |c| {
            let o = f(c);
            if let RepOutcome::Done { bw: x, .. } = o {
                bw[c.arm].push(x);
            }
            o
        },
    );
    (e, bw)
}

/// The arms the loop dropped as behind the leader (not as tied), found
/// again from what it measured: an arm settled after `r` rounds, against
/// the leader of the arms still running then, at that look's level.
fn dropped_behind(e: &JobEnd, bw: &[Vec<f64>]) -> Vec<usize> {
    use crate::stats::{compare_paired_with, leader, median_sorted, EQUIVALENCE_MARGIN};
    let median = |a: usize, r: usize| {
        let mut s = bw[a][..r].to_vec();
        s.sort_by(|x, y| x.total_cmp(y));
        median_sorted(&s)
    };
    let mut out = Vec::new();
    for (a, arm) in e.arms.iter().enumerate() {
        let r = arm.measured as usize;
        if arm.stopped_by != StopReason::Settled {
            continue;
        }
        let lead = (0..e.arms.len())
            .filter(|&b| e.arms[b].measured as usize >= r)
            .max_by(|&x, &y| median(x, r).total_cmp(&median(y, r)))
            .expect("the arm itself");
        let Some(alpha) = leader::drop_level(r).filter(|_| lead != a) else {
            continue;
        };
        let pairs: Vec<(f64, f64)> = (0..r).map(|i| (bw[a][i], bw[lead][i])).collect();
        let k = compare_paired_with(&pairs, EQUIVALENCE_MARGIN, alpha).expect("pairs");
        if k.distinct && k.ratio > 1.0 {
            out.push(a);
        }
    }
    out
}

/// Regression (review of issue 28): the loop dropped a method as behind at
/// 1% at every round from the 8th, so over a job's looks a method 3% behind
/// the leader (at the margin: no difference a verdict would call) was
/// dropped in 2.9-3.8% of these jobs (60 rounds: 53 looks). The looks now
/// spend [`crate::stats::DROP_SPEND`] (2%) among them all (at 8, 12, 18,
/// 27 and 41 rounds here): no method within the margin is dropped as behind
/// in more than that, per method (measured: at most 1.3%; the union bound
/// gives 1% on one side, the leader chosen from the data a little more).
/// Figures: `cargo test -p iopath --lib methods_at_the_margin -- --nocapture`.
#[test]
fn methods_at_the_margin_are_dropped_as_behind_at_most_the_spent_level() {
    let at_margin = 1.0 / (1.0 + crate::stats::EQUIVALENCE_MARGIN);
    let level = crate::stats::DROP_SPEND;
    let mut rng = Rng::new(31);
    let cases: [(&[f64], f64); 4] = [
        (&[1.0, at_margin], 0.10),
        (&[1.0, at_margin], 0.04),
        (&[1.0, at_margin, at_margin], 0.10),
        (&[1.0, 1.0, 1.0], 0.10),
    ];
    let mut worst = Vec::new();
    for (speeds, noise) in cases {
        let jobs = 1000;
        let mut dropped = vec![0usize; speeds.len()];
        for j in 0..jobs {
            let (e, bw) = sim_job(speeds, noise, 60, &mut rng, j);
            for a in dropped_behind(&e, &bw) {
                dropped[a] += 1;
            }
        }
        let rates: Vec<f64> = dropped.iter().map(|&d| d as f64 / jobs as f64).collect();
        eprintln!("{speeds:?} noise {noise}: dropped as behind {rates:?}");
        worst.push(rates.iter().copied().fold(0.0, f64::max));
    }
    assert!(worst.iter().all(|&r| r <= level), "{worst:?}");
}

//! The verdict's why: the cause of the difference between the leader and
//! the runner-up ([`Cause`]), from their summaries' latency splits and
//! costs per I/O. The rule (docs/methodology.md, "Where the time goes"):
//!
//! 0. Different numbers of requests in flight (a synchronous method at
//!    one per thread against a queue): that, before any cost.
//! 1. A part of the latency split that holds at least half of the
//!    difference in mean latency, where both have one of the same source:
//!    the part with the largest difference, each part's time per I/O
//!    ([`LatencySplit::weights`]).
//! 2. Else the cost per I/O where the runner-up is furthest above the
//!    leader, among those past a floor that makes them worth saying: major
//!    faults, read-ahead (own device bytes per byte asked), copies,
//!    voluntary context switches, read/write calls.
//! 3. Else CPU per I/O, when the runner-up's is at least
//!    [`CPU_RATIO`] times the leader's.
//!
//! No cause where none holds: the verdict then says nothing of why.

use super::Verdict;
use crate::result::cause::{Cause, SplitPart};
use crate::result::verdict_facts::VerdictFact;
use crate::result::{CaseResult, Entrant, LatencySplit, Measurement};

/// A part must hold this share of the difference in mean latency.
const PART_SHARE: f64 = 0.5;
/// A cost must be this many times the leader's to be named.
const COST_RATIO: f64 = 1.5;
/// CPU per I/O must be this many times the leader's.
pub const CPU_RATIO: f64 = 1.25;

/// The verdict's `why` fact: the cause of the runner-up's difference
/// from the leader, where the verdict calls one (`fastest`,
/// `tie_for_fastest`) and a cause holds; `name_of` names the cases of
/// `group` as the verdict does.
pub fn fact(
    v: &Verdict,
    group: &[&CaseResult],
    name_of: &dyn Fn(&CaseResult) -> String,
) -> Option<VerdictFact> {
    let (leader, slower) = v.facts.iter().find_map(|f| match f {
        VerdictFact::Fastest { leader, slower }
        | VerdictFact::TieForFastest { leader, slower, .. } => {
            Some((leader.clone(), slower.first()?.method.clone()))
        }
        _ => None,
    })?;
    let find = |e: &Entrant| {
        let name = e.to_string();
        group.iter().copied().find(|c| name_of(c) == name)
    };
    let cause = of(find(&slower)?, find(&leader)?)?;
    Some(VerdictFact::Why {
        slower,
        leader,
        cause,
    })
}

/// The cause of `slower`'s difference from `leader`, if one holds.
pub fn of(slower: &CaseResult, leader: &CaseResult) -> Option<Cause> {
    let (s, l) = (slower.summary.as_ref()?, leader.summary.as_ref()?);
    let in_flight = |c: &CaseResult| u64::from(c.queue_depth) * u64::from(c.threads);
    if in_flight(slower) != in_flight(leader) {
        return Some(Cause::InFlight {
            slower: in_flight(slower),
            leader: in_flight(leader),
        });
    }
    part(s, l)
        .or_else(|| cost(s, l, slower.block_size, leader.block_size))
        .or_else(|| {
            let (a, b) = (s.cpu.ns_per_io, l.cpu.ns_per_io);
            (b > 0.0 && a >= CPU_RATIO * b).then_some(Cause::Cpu {
                slower: a,
                leader: b,
            })
        })
}

/// Rule 1: the part of the split holding most of the latency difference;
/// none from a withheld split (not the case's figures).
fn part(s: &Measurement, l: &Measurement) -> Option<Cause> {
    let (a, b) = (s.latency_split?, l.latency_split?);
    if a.source != b.source || a.withheld.is_some() || b.withheld.is_some() {
        return None;
    }
    let gap = s.lat_ns.mean - l.lat_ns.mean;
    if gap <= 0.0 {
        return None;
    }
    // Each part's time per I/O ([`LatencySplit::per_io`]); a case
    // without cached or unmatched calls spends none in them.
    let parts = |x: &LatencySplit| {
        x.per_io().map(|(part, v)| match part {
            SplitPart::Cached | SplitPart::Unmatched => (part, Some(v.unwrap_or(0.0))),
            _ => (part, v),
        })
    };
    parts(&a)
        .into_iter()
        .zip(parts(&b))
        .filter(|((part, _), _)| part.is_the_requests())
        .filter_map(|((part, x), (_, y))| Some((part, x?, y?)))
        .filter(|&(_, x, y)| x - y >= PART_SHARE * gap)
        .max_by(|p, q| (p.1 - p.2).total_cmp(&(q.1 - q.2)))
        .map(|(part, slower_ns, leader_ns)| Cause::Part {
            part,
            slower_ns,
            leader_ns,
        })
}

/// Rule 2: the cost the runner-up is furthest above the leader in.
fn cost(s: &Measurement, l: &Measurement, s_bs: u64, l_bs: u64) -> Option<Cause> {
    let (a, b) = (s.costs.as_ref()?, l.costs.as_ref()?);
    let per_4k = |v: f64, bs: u64| v * 4096.0 / bs.max(1) as f64;
    // (the runner-up's, the leader's, the floor worth saying, the fact)
    type Make = fn(f64, f64) -> Cause;
    let candidates: [(Option<f64>, Option<f64>, f64, Make); 5] = [
        (
            Some(per_4k(a.majflt_per_io, s_bs)),
            Some(per_4k(b.majflt_per_io, l_bs)),
            0.05,
            |slower, leader| Cause::MajorFaults { slower, leader },
        ),
        (
            a.own_device_per_byte,
            b.own_device_per_byte,
            1.5,
            |slower, leader| Cause::ReadAhead { slower, leader },
        ),
        (
            a.copied_per_byte,
            b.copied_per_byte,
            0.5,
            |slower, leader| Cause::Copies { slower, leader },
        ),
        (
            Some(a.ctx_vol_per_io),
            Some(b.ctx_vol_per_io),
            0.5,
            |slower, leader| Cause::ContextSwitches { slower, leader },
        ),
        (
            a.rw_calls_per_io,
            b.rw_calls_per_io,
            0.5,
            |slower, leader| Cause::SystemCalls { slower, leader },
        ),
    ];
    candidates
        .into_iter()
        .filter_map(|(x, y, floor, make)| {
            let (x, y) = (x?, y?);
            // A leader at 0 counts as a tenth of the floor: "2 faults
            // against none" is a large ratio, not an infinite one.
            let ratio = x / y.max(floor / 10.0);
            (x >= floor && ratio >= COST_RATIO).then(|| (ratio, make(x, y)))
        })
        .max_by(|p, q| p.0.total_cmp(&q.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::latency_split::SplitSource;
    use crate::result::Costs;

    fn case(bs: u64, mean: f64, split: Option<LatencySplit>, costs: Costs) -> CaseResult {
        let mut m = Measurement::default();
        m.lat_ns.mean = mean;
        m.latency_split = split;
        m.costs = Some(costs);
        m.cpu.ns_per_io = 1000.0;
        CaseResult {
            block_size: bs,
            queue_depth: 1,
            threads: 1,
            summary: Some(m),
            ..CaseResult::default()
        }
    }

    fn split(queue: f64, device: f64) -> LatencySplit {
        LatencySplit {
            source: SplitSource::Tracepoints,
            fallback: None,
            submission_ns: Some(1000.0),
            queue_ns: Some(queue),
            device_ns: device,
            completion_ns: Some(2000.0),
            cached_ns: None,
            unmatched_ns: None,
            entry_ns: None,
            entry_calls: 10,
            withheld: None,
            ring: None,
            runnable_total_ns: None,
            block_ns: None,
            block_timing: None,
            disk_stat_ns: None,
            requests: 100,
            calls: 100,
            calls_without_request: 0,
            calls_unmatched: 0,
            other_requests: 0,
            ios: 0,
        }
    }

    /// "direct waits 2.1x longer in the device queue": the queue holds
    /// most of the gap, so it is named, whatever the costs say.
    #[test]
    fn the_part_holding_most_of_the_latency_gap_is_the_cause() {
        let costs = Costs {
            ctx_vol_per_io: 1.0,
            ..Costs::default()
        };
        let slower = case(
            4096,
            33_000.0,
            Some(split(21_000.0, 8_000.0)),
            costs.clone(),
        );
        let leader = case(4096, 21_000.0, Some(split(10_000.0, 8_000.0)), costs);
        assert_eq!(
            of(&slower, &leader),
            Some(Cause::Part {
                part: SplitPart::Queue,
                slower_ns: 21_000.0,
                leader_ns: 10_000.0
            })
        );
    }

    /// O_DIRECT calls the tracer could not tie to a request hold most of
    /// the gap (a tenth of the calls at 200 us against a leader without
    /// any): `unmatched` is named, not the device.
    #[test]
    fn unmatched_calls_holding_most_of_the_gap_are_the_cause() {
        let slower = LatencySplit {
            calls: 90,
            calls_unmatched: 10,
            unmatched_ns: Some(200_000.0),
            ..split(1000.0, 9_000.0)
        };
        let slower = case(4096, 31_800.0, Some(slower), Costs::default());
        let leader = case(
            4096,
            12_000.0,
            Some(split(1000.0, 8_000.0)),
            Costs::default(),
        );
        assert_eq!(
            of(&slower, &leader),
            Some(Cause::Part {
                part: SplitPart::Unmatched,
                slower_ns: 20_000.0,
                leader_ns: 0.0
            })
        );
    }

    /// A call's way in and out (mostly the tracer's) and the wait for a
    /// CPU (the machine's) are never the cause, though each holds more of
    /// the gap than the queue, which is named instead.
    #[test]
    fn the_tracers_part_and_the_wait_for_a_cpu_are_never_the_cause() {
        let leader = LatencySplit {
            entry_ns: Some(500.0),
            runnable_total_ns: Some(0.0),
            ios: 100,
            ..split(1_000.0, 8_000.0)
        };
        let leader = case(4096, 12_500.0, Some(leader), Costs::default());
        // Queue 6 us more, device 3 us less, and 6.5 us more in the way in
        // and out, or in waiting for a CPU: both hold half the 9.5 us gap.
        let by_entry = LatencySplit {
            entry_ns: Some(7_000.0),
            ..split(7_000.0, 5_000.0)
        };
        let by_cpu = LatencySplit {
            entry_ns: Some(500.0),
            runnable_total_ns: Some(650_000.0),
            ios: 100,
            ..split(7_000.0, 5_000.0)
        };
        for slower in [by_entry, by_cpu] {
            assert!((slower.mean_ns() - 22_000.0).abs() < 1e-6);
            let slower = case(4096, 22_000.0, Some(slower), Costs::default());
            assert_eq!(
                of(&slower, &leader),
                Some(Cause::Part {
                    part: SplitPart::Queue,
                    slower_ns: 7_000.0,
                    leader_ns: 1_000.0
                })
            );
        }
    }

    /// A withheld split (the averages over others' traffic) blames no
    /// part, though its device figure holds the whole gap.
    #[test]
    fn a_withheld_split_blames_no_part() {
        use crate::result::latency_split::SplitWithheld;
        let withheld = |device| LatencySplit {
            withheld: Some(SplitWithheld::OtherTraffic),
            ..split(1000.0, device)
        };
        let slower = case(4096, 120_000.0, Some(withheld(300_000.0)), Costs::default());
        let leader = case(
            4096,
            20_000.0,
            Some(split(1000.0, 10_000.0)),
            Costs::default(),
        );
        assert!(!matches!(of(&slower, &leader), Some(Cause::Part { .. })));
        let both = case(4096, 20_000.0, Some(withheld(10_000.0)), Costs::default());
        assert!(!matches!(of(&slower, &both), Some(Cause::Part { .. })));
        // The same figures not withheld: the device is named.
        let shown = case(
            4096,
            120_000.0,
            Some(split(1000.0, 300_000.0)),
            Costs::default(),
        );
        assert!(matches!(
            of(&shown, &leader),
            Some(Cause::Part {
                part: SplitPart::Device,
                ..
            })
        ));
    }

    /// mmap's major faults (1 per 4 KiB) against a leader with none beat
    /// its extra context switches (2x): the larger excess is named.
    #[test]
    fn without_a_dominant_part_the_cost_furthest_above_the_leader_is_the_cause() {
        let slower = case(
            16384,
            50_000.0,
            None,
            Costs {
                majflt_per_io: 4.0,
                ctx_vol_per_io: 2.0,
                ..Costs::default()
            },
        );
        let leader = case(
            16384,
            20_000.0,
            None,
            Costs {
                ctx_vol_per_io: 1.0,
                ..Costs::default()
            },
        );
        assert_eq!(
            of(&slower, &leader),
            Some(Cause::MajorFaults {
                slower: 1.0,
                leader: 0.0
            })
        );
    }

    /// Read-ahead at 3x the bytes asked is named; the same costs on both
    /// sides and CPU within [`CPU_RATIO`] name nothing.
    #[test]
    fn read_ahead_is_named_and_equal_costs_name_no_cause() {
        let ra = |own| Costs {
            own_device_per_byte: Some(own),
            ..Costs::default()
        };
        let slower = case(4096, 9_000.0, None, ra(3.0));
        let leader = case(4096, 5_000.0, None, ra(1.0));
        assert_eq!(
            of(&slower, &leader),
            Some(Cause::ReadAhead {
                slower: 3.0,
                leader: 1.0
            })
        );
        let same = case(4096, 9_000.0, None, ra(1.0));
        assert_eq!(of(&same, &leader), None);
        // At one request in flight against 32, that is the cause.
        let mut queue = leader.clone();
        queue.queue_depth = 32;
        assert_eq!(
            of(&slower, &queue),
            Some(Cause::InFlight {
                slower: 1,
                leader: 32
            })
        );
        // Only the CPU differs, by 1.5x: the CPU is named.
        let mut dear = same.clone();
        dear.summary.as_mut().unwrap().cpu.ns_per_io = 1500.0;
        assert_eq!(
            of(&dear, &leader),
            Some(Cause::Cpu {
                slower: 1500.0,
                leader: 1000.0
            })
        );
    }
}

//! The verdict's facts ([`VerdictFact`]), from its ranking: what it says
//! about speed, the reference, CPU, memory and what to do, with the
//! numbers; `report::text::verdict` words them. They read the verdict as
//! stored (the pick first), so a saved verdict gives the same facts.

use super::variants::{cpu_cost, mixed_sizes};
use super::{memory, no_call, ties, Ranked, Verdict, CPU_WORTH_SAYING};
use crate::result::verdict_facts::{
    CheaperBy, CpuCost, CpuUnit, Overlap, ShortOf, SpeedTie, VerdictFact, Versus, Way,
};
use crate::result::Entrant;
use crate::stats;

/// Fewer repetitions than an interval at its level needs.
pub(super) fn few(m: &Ranked) -> bool {
    m.n < stats::MIN_REPETITIONS_FOR_CI
}

/// The verdict's real methods in speed order and how they stand.
struct Speed<'a> {
    /// The real methods, the fastest (`fastest[0]`) first.
    real: Vec<&'a Ranked>,
    top: &'a Ranked,
    tied: Vec<&'a Ranked>,
    /// Apart from the fastest.
    rest: Vec<&'a Ranked>,
    /// Tied, but with medians far from the fastest's.
    far: Vec<&'a Ranked>,
    /// Tied and near: the names of a "tie for fastest".
    near: Vec<Entrant>,
    /// Apart by too few repetitions to call.
    unsure: Vec<&'a Ranked>,
}

impl<'a> Speed<'a> {
    fn of(v: &'a Verdict) -> Option<Speed<'a>> {
        let mut real: Vec<&Ranked> = v.ranking.iter().filter(|m| !m.reference).collect();
        // The fastest first, the ratios' reference (a stored ranking has
        // the pick first).
        if let Some(i) = real
            .iter()
            .position(|m| v.fastest.first() == Some(&m.method))
        {
            let top = real.remove(i);
            real.insert(0, top);
        }
        let top = *real.first()?;
        let tied: Vec<&Ranked> = real
            .iter()
            .copied()
            .filter(|m| m.tied_with_fastest)
            .collect();
        Some(Speed {
            top,
            rest: real
                .iter()
                .copied()
                .filter(|m| !m.tied_with_fastest)
                .collect(),
            far: tied.iter().copied().filter(|m| !ties::near(m)).collect(),
            near: tied
                .iter()
                .filter(|m| ties::near(m))
                .map(|m| m.method.clone())
                .collect(),
            unsure: real
                .iter()
                .copied()
                .filter(|m| m.too_few_repetitions)
                .collect(),
            tied,
            real,
        })
    }

    /// Why the tied methods (`few`: some ran too few repetitions) are not
    /// shown to differ.
    fn overlap(&self, v: &Verdict, few: bool) -> Overlap {
        if few {
            Overlap::FewRepetitions
        } else if v.paired {
            Overlap::WithinMargin
        } else {
            Overlap::IntervalsOverlap
        }
    }

    /// `m` against the fastest.
    fn versus(&self, v: &Verdict, m: &Ranked) -> Versus {
        Versus {
            method: m.method.clone(),
            ratio: m.fastest_ratio,
            ratio_ci: m.fastest_ratio_ci95,
            few_repetitions: few(m) || few(self.top),
            at_depth: self.depth_note(v, m),
        }
    }

    /// The depth `m` ran at, when below the group's and not every real
    /// method's (then the label says it); a variant's name says its own.
    fn depth_note(&self, v: &Verdict, m: &Ranked) -> Option<u32> {
        let all_at = self.real.iter().all(|r| r.queue_depth == m.queue_depth);
        let lower = m.queue_depth > 0 && m.queue_depth < v.job.queue_depth;
        // A matched job's methods all keep its concurrency in flight.
        let matched = v.job.concurrency.is_some();
        (v.job.group.is_none() && lower && !all_at && !matched).then_some(m.queue_depth)
    }

    /// The slower methods named beside the fastest: the next, and the one
    /// people use by habit (buffered) or else the slowest; a group's
    /// variants all (each is what its preset is about).
    fn shown(&self, v: &Verdict) -> Vec<Versus> {
        // A method whose place is not settled is not called slower.
        let rest: Vec<&Ranked> = self.rest.iter().copied().filter(|m| !m.unranked).collect();
        let mut shown: Vec<&Ranked> = if v.job.group.is_some() {
            rest.clone()
        } else {
            rest.iter().copied().take(1).collect()
        };
        let habit = rest
            .iter()
            .find(|m| m.method == iopath_io::Method::Buffered)
            .or_else(|| rest.last());
        if let Some(h) = habit {
            if !shown.iter().any(|m| m.method == h.method) {
                shown.push(h);
            }
        }
        shown.into_iter().map(|m| self.versus(v, m)).collect()
    }
}

/// The facts of `v`, in the order they are said: speed, the references,
/// the cases set apart (served.rs), CPU, memory, what to do (the dirty-limit caveat, when a run adds one,
/// goes before the last).
pub fn of(v: &Verdict) -> Vec<VerdictFact> {
    let Some(s) = Speed::of(v) else {
        return Vec::new();
    };
    let mut out: Vec<VerdictFact> = in_flight(v).into_iter().collect();
    out.push(speed(v, &s));
    out.extend(unsettled(&s));
    out.extend(
        v.ranking
            .iter()
            .filter(|m| m.reference)
            .map(|m| VerdictFact::Ceiling {
                method: m.method.clone(),
                bw_bytes_per_s: m.bw_bytes_per_s,
            }),
    );
    out.extend(super::served::facts(v));
    out.extend(cpu(v, &s));
    out.extend(memory::fact(v, &s.real));
    out.push(action(v, &s));
    out
}

/// A matched job's concurrency and how each real method kept it.
fn in_flight(v: &Verdict) -> Option<VerdictFact> {
    let requests = v.job.concurrency?;
    let ways = v
        .ranking
        .iter()
        .filter(|m| !m.reference)
        .map(|m| Way {
            method: m.method.clone(),
            threads: m.threads,
            depth: m.queue_depth,
            pool: m.pool_threads,
        })
        .collect();
    Some(VerdictFact::InFlight { requests, ways })
}

/// The methods the leader beats that a method tied with it does not:
/// their place is not settled (ties do not chain).
fn unsettled(s: &Speed) -> Option<VerdictFact> {
    let methods: Vec<Entrant> = s
        .real
        .iter()
        .filter(|m| m.unranked)
        .map(|m| m.method.clone())
        .collect();
    if methods.is_empty() {
        return None;
    }
    Some(VerdictFact::Unsettled {
        leader: s.top.method.clone(),
        methods,
        tied: s
            .tied
            .iter()
            .filter(|m| m.method != s.top.method)
            .map(|m| m.method.clone())
            .collect(),
    })
}

/// What the verdict says about speed.
fn speed(v: &Verdict, s: &Speed) -> VerdictFact {
    let r = &s.real;
    let leader = s.top.method.clone();
    let needed = if v.paired {
        stats::verdict_rounds()
    } else {
        stats::MIN_REPETITIONS_FOR_CI
    };
    let fewest = r.iter().map(|m| m.n).min().unwrap_or(0);
    if !s.unsure.is_empty() {
        let measured = no_call::others_measured(r);
        let advice = no_call::advice(v, needed);
        if v.paired && fewest >= stats::MIN_REPETITIONS_FOR_CI {
            // Enough rounds for one comparison, not for as many as this
            // verdict makes (the level is shared among them).
            return VerdictFact::NoCallRounds {
                leader,
                measured,
                rounds: fewest,
                among: r.len(),
                needed,
                advice,
                budget_ns: v.budget_ns,
            };
        }
        return VerdictFact::NoCallRepetitions {
            leader,
            measured,
            short: short_of(s),
            advice,
            budget_ns: v.budget_ns,
        };
    }
    let slower = s.shown(v);
    if !s.far.is_empty() {
        VerdictFact::TieNearAndFar {
            near: s.near.clone(),
            leader,
            far: s.far.iter().map(|m| s.versus(v, m)).collect(),
            why: s.overlap(v, s.tied.iter().any(|m| few(m))),
            slower,
        }
    } else if s.rest.is_empty() {
        VerdictFact::AllTie {
            methods: s.near.clone(),
            why: s.overlap(v, r.iter().any(|m| few(m))),
            slowest_ratio: r.last().map_or(1.0, |m| m.fastest_ratio),
        }
    } else if s.tied.len() == 1 {
        VerdictFact::Fastest { leader, slower }
    } else {
        VerdictFact::TieForFastest {
            methods: s.near.clone(),
            why: s.overlap(v, s.tied.iter().any(|m| few(m))),
            leader,
            slower,
        }
    }
}

/// The methods with too few repetitions, the fastest first: once when
/// every one named ran as many.
fn short_of(s: &Speed) -> ShortOf {
    let named: Vec<&Ranked> = std::iter::once(s.top)
        .chain(s.unsure.iter().copied())
        .collect();
    let methods: Vec<crate::result::verdict_facts::Repetitions> = named
        .iter()
        .filter(|m| few(m))
        .map(|m| crate::result::verdict_facts::Repetitions {
            method: m.method.clone(),
            n: m.n,
        })
        .collect();
    let same = named.len() > 2
        && named.iter().all(|m| m.n == s.top.n && few(m))
        && methods.len() == named.len();
    if same {
        ShortOf::Each { n: s.top.n }
    } else {
        ShortOf::Listed { methods }
    }
}

/// CPU: the cheapest, the next cheapest, and buffered (the habit), with
/// the fastest when it is none of them; nothing when they are within
/// [`CPU_WORTH_SAYING`].
fn cpu(v: &Verdict, s: &Speed) -> Option<VerdictFact> {
    let mixed = mixed_sizes(&v.ranking);
    let unit = if mixed {
        CpuUnit::PerMib
    } else {
        CpuUnit::PerIo
    };
    let cost = |m: &Ranked| cpu_cost(m, mixed);
    let mut cpu: Vec<&Ranked> = s.real.iter().copied().filter(|m| cost(m) > 0.0).collect();
    cpu.sort_by(|a, b| cost(a).total_cmp(&cost(b)));
    let (lo, hi) = (*cpu.first()?, *cpu.last()?);
    if cost(hi) < cost(lo) * CPU_WORTH_SAYING {
        return None;
    }
    let at = |m: &Ranked, fastest: bool| CpuCost {
        method: m.method.clone(),
        ns: cost(m),
        fastest,
    };
    let mut named: Vec<&Ranked> = cpu.iter().skip(1).take(1).copied().collect();
    if let Some(b) = cpu
        .iter()
        .skip(2)
        .find(|m| m.method == iopath_io::Method::Buffered)
    {
        named.push(b);
    }
    let mut others: Vec<CpuCost> = named.iter().map(|m| at(m, false)).collect();
    let top = s.top;
    if lo.method != top.method && !named.iter().any(|m| m.method == top.method) {
        others.push(at(top, true));
    }
    let eq = |m: &Ranked| v.equally_good.contains(&m.method);
    Some(match cpu.get(1) {
        // The pick found no real difference between the two cheapest:
        // their medians are not a ranking.
        Some(&next) if eq(lo) && eq(next) => VerdictFact::CpuNotShownToDiffer {
            unit,
            first: at(lo, false),
            second: at(next, false),
            others: others.into_iter().skip(1).collect(),
        },
        _ => VerdictFact::CpuCheapest {
            unit,
            cheapest: at(lo, false),
            others,
        },
    })
}

/// Why the pick beat the others, for a verdict saved before the choice
/// recorded it ([`Verdict::cheaper_by`]): read from the medians, CPU when
/// the pick's is the lowest of those tied with it, else memory.
fn saved_cheaper_by(v: &Verdict, s: &Speed) -> CheaperBy {
    let mixed = mixed_sizes(&v.ranking);
    let cost = |m: &Ranked| cpu_cost(m, mixed);
    let p = s.tied.iter().find(|m| m.method == v.pick);
    let cheapest_cpu = p.is_some_and(|p| {
        cost(p) > 0.0 && s.tied.iter().all(|m| cost(m) <= 0.0 || cost(m) >= cost(p))
    });
    match (cheapest_cpu, mixed) {
        (false, _) => CheaperBy::Memory,
        (true, false) => CheaperBy::CpuPerIo,
        (true, true) => CheaperBy::CpuPerMib,
    }
}

/// What to do.
fn action(v: &Verdict, s: &Speed) -> VerdictFact {
    if !s.unsure.is_empty() {
        return VerdictFact::NoCallYet {
            leader: s.top.method.clone(),
        };
    }
    if s.tied.len() == 1 {
        return VerdictFact::Use {
            method: v.pick.clone(),
        };
    }
    if !v.equally_good.is_empty() {
        let speed = if !s.far.is_empty() {
            SpeedTie::NotShownToDiffer
        } else if s.rest.is_empty() {
            SpeedTie::Tied
        } else {
            SpeedTie::TiedForFastest
        };
        // The tied methods that cost more, so that the advice stands on
        // its own beside the CPU fact.
        let dearer = s
            .tied
            .iter()
            .map(|m| m.method.clone())
            .filter(|m| !v.equally_good.contains(m))
            .collect();
        // Equally good only where the interval shows it (an equivalence
        // test), not where the test could only not tell them apart.
        let ratios: Vec<Versus> = s
            .tied
            .iter()
            .filter(|m| v.equally_good.contains(&m.method) && m.method != s.top.method)
            .map(|m| s.versus(v, m))
            .collect();
        if !ratios.iter().all(Versus::equivalent) {
            return VerdictFact::TooCloseToCall {
                methods: v.equally_good.clone(),
                leader: s.top.method.clone(),
                ratios,
                margin: stats::EQUIVALENCE_MARGIN,
                dearer,
                budget_ns: v.budget_ns,
            };
        }
        return VerdictFact::EquallyGood {
            methods: v.equally_good.clone(),
            speed,
            dearer,
            ratios,
        };
    }
    VerdictFact::UseCheaper {
        method: v.pick.clone(),
        speed: if s.far.is_empty() {
            SpeedTie::TiedForFastest
        } else {
            SpeedTie::NotShownToDiffer
        },
        by: v.cheaper_by.unwrap_or_else(|| saved_cheaper_by(v, s)),
    }
}

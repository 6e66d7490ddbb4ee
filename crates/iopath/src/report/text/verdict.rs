//! Words for verdict facts (see [`super`]): every sentence of a verdict
//! ([`lines`]), its one-line form ([`one_line`]), and what each method did
//! to a `--neighbour` reader ([`neighbour`]). The facts come from
//! `analysis::verdict` (`Verdict::facts`); a result written before they
//! existed keeps the words it was saved with.

use crate::analysis::verdict::neighbour::{self as nb, Effect};
use crate::model::units::{fmt_bytes, fmt_ns, fmt_size_flag, fmt_wall};
use crate::result::records::{DirtyBurst, Ranked, Verdict, WriteRate};
use crate::result::verdict_facts::{
    CheaperBy, CpuCost, CpuUnit, Measured, MemoryInterval, MemoryNoCall, MemorySpeed, NoCallAdvice,
    Overlap, ShortOf, SpeedTie, VerdictFact, Versus, Way,
};
use crate::result::{CaseResult, Entrant};
use crate::stats;

/// "a", "a and b", "a, b and c".
pub fn list<T: std::fmt::Display>(names: &[T]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(ToString::to_string).collect();
            format!("{} and {last}", init.join(", "))
        }
    }
}

/// A ratio with three significant digits or so: 1.23, 12.3, 123.
fn num(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}")
    } else if r >= 10.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

/// A ratio: "2.31x".
pub fn x(r: f64) -> String {
    format!("{}x", num(r))
}

/// A confidence level as a percentage: "95", "97.5".
fn level_pct(level: f64) -> String {
    let pct = level * 100.0;
    if (pct - pct.round()).abs() < 0.05 {
        format!("{pct:.0}")
    } else {
        format!("{pct:.1}")
    }
}

/// A ratio's interval: "95% CI 1.19-1.24x"; with too few repetitions on
/// either side (`few`), "1.19-1.24x over few repetitions", as a bootstrap
/// of a handful of values is not an interval at that level.
pub fn ci(c: [f64; 2], few: bool, level: f64) -> String {
    if few {
        format!("{}-{}x over few repetitions", num(c[0]), num(c[1]))
    } else {
        format!("{}% CI {}-{}x", level_pct(level), num(c[0]), num(c[1]))
    }
}

/// How much slower a method is whose median is `ratio` (< 1) times
/// another's: "18%", the complement of the speed sentence's ratio (1.22x
/// is 18% slower); never a rounded "100%" or "0%".
pub fn pct_slower(ratio: f64) -> String {
    let p = (1.0 - ratio) * 100.0;
    if p >= 99.95 {
        "over 99.9%".to_string()
    } else if (1.0..99.5).contains(&p) {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// How a matched job's methods kept its requests in flight, those that
/// kept them alike together: `At 32 requests in flight: uring and aio on 1
/// thread at depth 32; buffered and direct on 32 threads of 1.`
fn in_flight(requests: u32, ways: &[Way]) -> String {
    type Key = (u32, u32, Option<u32>);
    let mut alike: Vec<(Key, Vec<&Entrant>)> = Vec::new();
    for w in ways {
        let key = (w.threads, w.depth, w.pool);
        match alike.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(&w.method),
            None => alike.push((key, vec![&w.method])),
        }
    }
    let threads = |n: u32| crate::model::units::n_of(u64::from(n), "thread", "threads");
    let parts: Vec<String> = alike
        .iter()
        .map(|((n, depth, pool), names)| match pool {
            Some(p) => format!("{} on a pool of {}", list(names), threads(*p)),
            None if *depth == 1 => format!("{} on {} of 1 request each", list(names), threads(*n)),
            None => format!("{} on {} at depth {depth}", list(names), threads(*n)),
        })
        .collect();
    format!(
        "At {} in flight: {}.",
        crate::model::units::n_of(u64::from(requests), "request", "requests"),
        parts.join("; ")
    )
}

/// The verdict's sentences, from its facts (a result written before them:
/// the words it was saved with).
pub fn lines(v: &Verdict) -> Vec<String> {
    if v.facts.is_empty() {
        return v.text.clone();
    }
    let w = Words { v };
    v.facts.iter().map(|f| w.fact(f)).collect()
}

/// The wording of one verdict's facts.
struct Words<'a> {
    v: &'a Verdict,
}

impl Words<'_> {
    fn fact(&self, f: &VerdictFact) -> String {
        let v = self.v;
        let burst = v
            .facts
            .iter()
            .any(|f| matches!(f, VerdictFact::DirtyBurst(b) if b.methods.contains(&v.pick)));
        match f {
            VerdictFact::Ceiling {
                method,
                bw_bytes_per_s,
            } => format!(
                "Ceiling: {method} (no I/O, iopath's own overhead) reached {}/s; the verdict leaves it out.",
                fmt_bytes(bw_bytes_per_s.round() as u64)
            ),
            VerdictFact::CpuCheapest { .. } | VerdictFact::CpuNotShownToDiffer { .. } => cpu(f),
            VerdictFact::MemoryHeld { .. } | VerdictFact::MemoryTrade { .. } => self.memory(f),
            VerdictFact::DirtyBurst(b) => dirty_burst(b),
            VerdictFact::InFlight { requests, ways } => in_flight(*requests, ways),
            VerdictFact::ServedFromMemory { .. } | VerdictFact::AbsorbedByPageCache { .. } => {
                super::served::fact(f).unwrap_or_default()
            }
            VerdictFact::HugeBuffers { block_size, pairs } => huge_buffers(*block_size, pairs),
            VerdictFact::Unsettled {
                leader,
                methods,
                tied,
            } => format!(
                "Not ranked: {} {} behind {leader} but not shown behind {}, which {} not told apart from it; {} place is not settled.",
                list(methods),
                if methods.len() == 1 { "is" } else { "are" },
                list(tied),
                if tied.len() == 1 { "is" } else { "are" },
                if methods.len() == 1 { "its" } else { "their" }
            ),
            VerdictFact::Why { .. } => super::why::fact(f).unwrap_or_default(),
            f if f.is_action() => match self.action(f) {
                Some(advice) => {
                    let caveat = if burst {
                        " (for bursts under the dirty limit: see above)"
                    } else {
                        ""
                    };
                    format!("{advice}{caveat}.")
                }
                None => f.code().to_string(),
            },
            f => self.speed(f),
        }
    }

    /// The job as it ran: the group's label, with the depth every real
    /// method ran at when that is below the depth asked (`randread 4k
    /// Q1T1` for `direct,direct` asked for Q32).
    fn label(&self) -> String {
        let v = self.v;
        if v.job.group.is_some() {
            return v.job.label();
        }
        let real: Vec<&Ranked> = v.ranking.iter().filter(|r| !r.reference).collect();
        let depths: Vec<u32> = real.iter().map(|m| m.queue_depth).collect();
        match depths.first() {
            Some(&d) if d > 0 && d < v.job.queue_depth && depths.iter().all(|&x| x == d) => {
                v.job.label_at(d)
            }
            _ => v.job.label(),
        }
    }

    /// "variants" for a group's, else "methods".
    fn noun(&self) -> &'static str {
        if self.v.job.group.is_some() {
            "variants"
        } else {
            "methods"
        }
    }

    /// `2.31x buffered at QD1 (95% CI 2.2-2.4x)`.
    fn versus(&self, m: &Versus) -> String {
        format!(
            "{} {}{} ({})",
            x(m.ratio),
            m.method,
            m.at_depth.map_or(String::new(), |d| format!(" at QD{d}")),
            ci(m.ratio_ci, m.few_repetitions, self.v.ci_level)
        )
    }

    fn versus_list(&self, ms: &[Versus]) -> String {
        list(&ms.iter().map(|m| self.versus(m)).collect::<Vec<_>>())
    }

    /// Why methods are not shown to differ.
    fn overlap(&self, why: Overlap) -> String {
        match why {
            Overlap::FewRepetitions => "their repetitions overlap".to_string(),
            Overlap::WithinMargin => format!(
                "the interval of their per-round ratio reaches within {:.0}% of even",
                stats::EQUIVALENCE_MARGIN * 100.0
            ),
            Overlap::IntervalsOverlap => {
                format!("their {}% intervals overlap", level_pct(self.v.ci_level))
            }
        }
    }

    /// The speed sentence.
    fn speed(&self, f: &VerdictFact) -> String {
        let label = self.label();
        match f {
            VerdictFact::NoCallRounds {
                leader,
                measured,
                rounds,
                among,
                needed,
                advice,
                budget_ns,
            } => format!(
                "{label}: {}{leader} measured {}, but {rounds} rounds are too few to call that real among {among} {} (it takes {needed}); {}.",
                too_close_in(*budget_ns),
                measured_list(measured),
                self.noun(),
                advice_words(advice)
            ),
            VerdictFact::NoCallRepetitions {
                leader,
                measured,
                short,
                advice,
                budget_ns,
            } => format!(
                "{label}: {}{leader} measured {}, but {}: too few to call that real; {}.",
                too_close_in(*budget_ns),
                measured_list(measured),
                short_words(short),
                advice_words(advice)
            ),
            VerdictFact::TieNearAndFar { .. } => self.near_and_far(&label, f),
            VerdictFact::AllTie {
                methods,
                why,
                slowest_ratio,
            } => format!(
                "{label}: {} are not told apart ({}; the fastest measured {} the slowest): no measurable difference in throughput at this precision.",
                if methods.len() == 2 {
                    list(methods)
                } else {
                    format!("all {} {}", methods.len(), self.noun())
                },
                self.overlap(*why),
                x(*slowest_ratio)
            ),
            VerdictFact::Fastest { leader, slower } if slower.is_empty() => {
                format!("{label}: {leader} is fastest.")
            }
            VerdictFact::Fastest { leader, slower } => {
                format!("{label}: {leader} is fastest, {}.", self.versus_list(slower))
            }
            VerdictFact::TieForFastest {
                methods,
                why,
                leader,
                slower,
            } => {
                let ahead = if slower.is_empty() {
                    String::new()
                } else {
                    format!("; {leader} is {}", self.versus_list(slower))
                };
                format!(
                    "{label}: {} share the lead, not told apart ({}){ahead}.",
                    list(methods),
                    self.overlap(*why)
                )
            }
            other => other.code().to_string(),
        }
    }

    /// The speed sentence of a verdict with far ties: the near ones tie
    /// for fastest, the far ones are not shown to differ, the slower ones
    /// as usual.
    fn near_and_far(&self, label: &str, f: &VerdictFact) -> String {
        let VerdictFact::TieNearAndFar {
            near,
            leader,
            far,
            why,
            slower,
        } = f
        else {
            return String::new();
        };
        let near = if near.len() >= 2 {
            format!("{} share the lead; ", list(near))
        } else {
            String::new()
        };
        let slower = if slower.is_empty() {
            String::new()
        } else {
            format!("; {leader} is {}", self.versus_list(slower))
        };
        format!(
            "{label}: {near}{leader} measured {}, not shown to differ ({}){slower}.",
            self.versus_list(far),
            self.overlap(*why)
        )
    }

    /// The memory sentence.
    fn memory(&self, f: &VerdictFact) -> String {
        match f {
            VerdictFact::MemoryHeld {
                least,
                least_bytes,
                most,
                most_bytes,
                why,
            } => format!(
                "Memory: {least} held {}, {most} {} ({}).",
                fmt_bytes(*least_bytes),
                fmt_bytes(*most_bytes),
                match why {
                    MemoryNoCall::TooFewRepetitions =>
                        "too few repetitions to tell which is faster",
                    MemoryNoCall::NoCall => "which is faster: no call yet",
                }
            ),
            VerdictFact::MemoryTrade {
                least,
                least_bytes,
                most,
                most_bytes,
                speed,
            } => format!(
                "Memory: {least} {} {} {} instead of {}.",
                self.memory_speed(speed, most),
                if matches!(speed, MemorySpeed::Slower { .. }) {
                    "but holds"
                } else {
                    "and holds"
                },
                fmt_bytes(*least_bytes),
                fmt_bytes(*most_bytes)
            ),
            other => other.code().to_string(),
        }
    }

    /// The frugal method's speed against the greedy one (`most`).
    fn memory_speed(&self, speed: &MemorySpeed, most: &Entrant) -> String {
        let level = self.v.ci_level;
        match speed {
            MemorySpeed::NotShownToDiffer { interval } => {
                let why = match interval {
                    None => String::new(),
                    Some(MemoryInterval {
                        ratio_ci,
                        few_repetitions,
                        reaches_even: true,
                    }) => format!(
                        " ({}: it reaches within {:.0}% of even)",
                        ci(*ratio_ci, *few_repetitions, level),
                        stats::EQUIVALENCE_MARGIN * 100.0
                    ),
                    Some(i) => format!(
                        " ({}; the medians' own intervals overlap)",
                        ci(i.ratio_ci, i.few_repetitions, level)
                    ),
                };
                format!("is not shown to differ in speed from {most}{why}")
            }
            MemorySpeed::Slower { ratio } => {
                format!("is {} slower than {most}", pct_slower(*ratio))
            }
            MemorySpeed::Faster {
                ratio,
                ratio_ci,
                few_repetitions,
            } => format!(
                "is {} faster than {most} ({})",
                x(*ratio),
                ci(*ratio_ci, *few_repetitions, level)
            ),
        }
    }
}

/// `too close to call in 2 s: `, for a job without a call that spent
/// the budget it was given; else nothing.
fn too_close_in(budget_ns: Option<u64>) -> String {
    budget_ns.map_or(String::new(), |b| format!("{}: ", too_close_to_call_in(b)))
}

/// `too close to call in 2 s`: what a job without a call could not
/// settle in the time it was given.
pub fn too_close_to_call_in(budget_ns: u64) -> String {
    format!(
        "too close to call in {}",
        fmt_wall(std::time::Duration::from_nanos(budget_ns))
    )
}

/// Without a call, what the leader measured against the others.
fn measured_list(m: &Measured) -> String {
    let each: Vec<String> = m
        .ratios
        .iter()
        .map(|r| format!("{} {}", x(r.ratio), r.method))
        .collect();
    if m.others == 0 {
        list(&each)
    } else {
        format!("{} and {} others", each.join(", "), m.others)
    }
}

/// "s" unless one.
fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Who ran too few repetitions.
fn short_words(short: &ShortOf) -> String {
    match short {
        ShortOf::Each { n } => format!("each ran {n} repetition{}", plural(*n)),
        ShortOf::Listed { methods } => list(
            &methods
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    if i == 0 {
                        format!("{} ran {} repetition{}", m.method, m.n, plural(m.n))
                    } else {
                        format!("{} {}", m.method, m.n)
                    }
                })
                .collect::<Vec<_>>(),
        ),
    }
}

/// What gives a call.
fn advice_words(a: &NoCallAdvice) -> String {
    match a {
        NoCallAdvice::Interrupted => format!(
            "the run was interrupted ({}) before it had them: run it again to the end",
            crate::stop_cause()
        ),
        NoCallAdvice::MaxTime { max_time, repeat } => {
            format!("--max-time {max_time} or --repeat {repeat} gives them")
        }
        NoCallAdvice::RunLonger { repeat } => format!("run longer (--max-time) or --repeat {repeat}"),
        NoCallAdvice::CaseTimeout { methods, repeat } => format!(
            "--case-timeout stopped {} early: give a larger --case-timeout (0 for none) with --repeat {repeat}, or less work per repetition (a smaller --size or --io-size)",
            list(methods)
        ),
    }
}

fn cpu_per(unit: CpuUnit) -> &'static str {
    match unit {
        CpuUnit::PerIo => "CPU per I/O",
        CpuUnit::PerMib => "CPU per MiB moved",
    }
}

fn ns(c: &CpuCost) -> String {
    fmt_ns(c.ns.round() as u64)
}

/// `uring 4.0 us`, `uring (fastest) 4.0 us`.
fn cpu_named(c: &CpuCost) -> String {
    let fastest = if c.fastest { " (fastest)" } else { "" };
    format!("{}{fastest} {}", c.method, ns(c))
}

/// The CPU sentence.
fn cpu(f: &VerdictFact) -> String {
    match f {
        VerdictFact::CpuCheapest {
            unit,
            cheapest,
            others,
        } => format!(
            "{}: {} is cheapest at {}; {}.",
            cpu_per(*unit),
            cheapest.method,
            ns(cheapest),
            others.iter().map(cpu_named).collect::<Vec<_>>().join(", ")
        ),
        VerdictFact::CpuNotShownToDiffer {
            unit,
            first,
            second,
            others,
        } => format!(
            "{}: {} {} and {} {} (medians) are not shown to differ{}.",
            cpu_per(*unit),
            first.method,
            ns(first),
            second.method,
            ns(second),
            if others.is_empty() {
                String::new()
            } else {
                format!(
                    "; {}",
                    others.iter().map(cpu_named).collect::<Vec<_>>().join(", ")
                )
            }
        ),
        other => other.code().to_string(),
    }
}

/// `11 s at buffered's 800 MiB/s`.
fn time_at(r: &WriteRate) -> String {
    format!(
        "{} at {}'s {}/s",
        fmt_wall(std::time::Duration::from_secs_f64(r.seconds_past_limit)),
        r.method,
        fmt_bytes(r.bytes_per_s as u64)
    )
}

/// The dirty-limit caveat: a burst the page cache absorbed, and how to
/// measure sustained writes.
/// "Huge-page buffers at 64k here: uring+hugebuf 1.33x uring: fewer DMA
/// segments per request (...)."
fn huge_buffers(block_size: u64, pairs: &[crate::result::verdict_facts::BufferPair]) -> String {
    let each: Vec<String> = pairs
        .iter()
        .map(|p| {
            let shown = if p.distinct {
                ""
            } else {
                ", not shown to differ"
            };
            format!("{} {} {}{shown}", p.huge, x(p.ratio), p.pages)
        })
        .collect();
    let gain = pairs.iter().any(|p| p.distinct && p.ratio > 1.0);
    let why = if gain && block_size > 4096 {
        ": fewer DMA segments per request (a program's buffers are base pages unless it asks)"
    } else {
        ""
    };
    format!(
        "Huge-page buffers at {} here: {}{why}.",
        crate::model::units::fmt_bs(block_size),
        each.join(", ")
    )
}

fn dirty_burst(b: &DirtyBurst) -> String {
    let time = match (b.rates.first(), b.rates.last()) {
        (Some(slow), Some(fast)) => format!(
            " and a --time long enough to write {}, twice the limit (about {})",
            fmt_bytes(b.past_limit_bytes),
            if b.rates.len() == 1 {
                time_at(slow)
            } else {
                format!("{} to {}", time_at(fast), time_at(slow))
            }
        ),
        _ => String::new(),
    };
    let whose = if b.cgroup {
        "the --cache-limit cgroup's dirty limit"
    } else {
        "this machine's dirty limit"
    };
    let hits = b.cap_hits.map_or(String::new(), |n| {
        format!("; the cgroup's cap was hit {n} times")
    });
    let how = if b.unsynced {
        "and nothing waited for the device"
    } else {
        "and the timed fsync flushed them in one sorted burst"
    };
    format!(
        "Writes: {} wrote at most {} a repetition{}, under {whose} of {} ({}{hits}): the page cache absorbed them {how}, so their speed is a burst's, not sustained writing{}. For sustained writes: --size {} or more{time}.",
        list(&b.methods),
        fmt_bytes(b.written_bytes),
        b.file_bytes
            .map_or(String::new(), |f| format!(" to a {} file", fmt_bytes(f))),
        fmt_bytes(b.limit_bytes),
        b.limits.source(),
        if b.file_bytes.is_some() {
            " (random writes to a file under the limit never pass it)"
        } else {
            ""
        },
        fmt_size_flag(b.suggested_size_bytes),
    )
}

/// `(ucache costs more)`: the methods tied for speed that cost more.
fn dearer_words(dearer: &[Entrant]) -> String {
    match dearer.len() {
        0 => String::new(),
        1 => format!(" ({} costs more)", dearer[0]),
        _ => format!(" ({} cost more)", list(dearer)),
    }
}

impl Words<'_> {
    /// `uring 1.01x aio, 95% CI 0.99-1.02x`: the fastest over others,
    /// inside parentheses.
    fn fastest_over(&self, leader: &str, ratios: &[Versus]) -> String {
        let each: Vec<String> = ratios
            .iter()
            .map(|m| {
                format!(
                    "{} {}, {}",
                    x(m.ratio),
                    m.method,
                    ci(m.ratio_ci, m.few_repetitions, self.v.ci_level)
                )
            })
            .collect();
        format!("{leader} {}", each.join("; "))
    }

    /// What to do, without its full stop (a caveat may follow); `None` for
    /// a fact that is not advice.
    fn action(&self, f: &VerdictFact) -> Option<String> {
        let margin_pct = |m: f64| format!("{:.0}%", m * 100.0);
        Some(match f {
            VerdictFact::NoCallYet { leader } => {
                format!("→ no call yet; on these numbers {leader} leads")
            }
            VerdictFact::Use { method } => format!("→ use {method}"),
            VerdictFact::EquallyGood {
                methods,
                speed,
                dearer,
                ratios,
            } => {
                let speed = match (ratios.is_empty(), speed) {
                    (false, _) => format!(
                        "within {} in speed ({})",
                        margin_pct(stats::EQUIVALENCE_MARGIN),
                        self.fastest_over(
                            &self
                                .v
                                .fastest
                                .first()
                                .map_or(String::new(), ToString::to_string),
                            ratios
                        )
                    ),
                    // Saved before the interval was recorded.
                    (true, SpeedTie::NotShownToDiffer) => "not shown to differ in speed".into(),
                    (true, SpeedTie::Tied) => "tied in speed".into(),
                    (true, SpeedTie::TiedForFastest) => "tied for fastest in speed".into(),
                };
                format!(
                    "→ {} are equally good here: {speed}, and no real difference in CPU per I/O or memory{}",
                    list(methods),
                    dearer_words(dearer)
                )
            }
            VerdictFact::TooCloseToCall {
                methods,
                leader,
                ratios,
                margin,
                dearer,
                budget_ns,
            } => {
                // The ratios whose interval reaches past the margin: why.
                let open: Vec<Versus> =
                    ratios.iter().filter(|r| !r.equivalent()).cloned().collect();
                format!(
                    "→ {} are {}: not shown to differ in speed, nor shown within {} ({}), and no real difference in CPU per I/O or memory{}",
                    list(methods),
                    budget_ns.map_or("too close to call".into(), too_close_to_call_in),
                    margin_pct(*margin),
                    self.fastest_over(&leader.to_string(), &open),
                    dearer_words(dearer)
                )
            }
            VerdictFact::UseCheaper { method, speed, by } => format!(
                "→ use {method}: {}, and the least {} of those (a real difference)",
                match speed {
                    SpeedTie::NotShownToDiffer => "not shown to differ in speed",
                    _ => "tied for fastest",
                },
                match by {
                    CheaperBy::CpuPerIo => cpu_per(CpuUnit::PerIo),
                    CheaperBy::CpuPerMib => cpu_per(CpuUnit::PerMib),
                    CheaperBy::Memory => "memory",
                }
            ),
            _ => return None,
        })
    }
}

/// A hit ratio as a percentage, `?` when unknown.
fn pct(h: Option<f64>) -> String {
    h.map_or("?".into(), |h| format!("{:.0}%", h * 100.0))
}

/// `buffered raises the neighbour's p99 8.00x (hit ratio 100% → 60%)`.
fn judged(e: &Effect, noise: f64) -> String {
    let r = e.p99_ratio();
    let what = if e.within(noise) {
        format!("keeps the neighbour's p99 within noise ({r:.2}x)")
    } else {
        format!("raises the neighbour's p99 {r:.2}x")
    };
    format!(
        "{} {what} (hit ratio {} → {})",
        e.method,
        pct(e.before_hit),
        pct(e.during_hit)
    )
}

/// The text block for cases measured with a neighbour (empty without):
/// per job, each method's effect and the gentlest and harshest method.
pub fn neighbour(cases: &[CaseResult]) -> String {
    let mut out = String::new();
    for j in nb::jobs(cases) {
        out.push_str(&format!(
            "\nneighbour (random 4 KiB cached reads) beside {}:\n",
            j.job
        ));
        for e in &j.effects {
            out.push_str(&format!(
                "  {:<18} before p50 {} p99 {} hit {}   during p50 {} p99 {} ({:.1}x) hit {}\n",
                e.method,
                fmt_ns(e.before_p50 as u64),
                fmt_ns(e.before_p99 as u64),
                pct(e.before_hit),
                fmt_ns(e.during_p50 as u64),
                fmt_ns(e.during_p99 as u64),
                e.p99_ratio(),
                pct(e.during_hit)
            ));
        }
        if let Some((least, most)) = j.extremes() {
            let floor = format!(
                "noise: the neighbour's p99 alone varied {:.2}x across repetitions",
                j.noise
            );
            let most = most.map_or(String::new(), |m| format!("; {}", judged(m, j.noise)));
            out.push_str(&format!("  → {}{most}; {floor}.\n", judged(least, j.noise)));
        }
    }
    out
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;

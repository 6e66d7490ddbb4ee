//! What a verdict says, as facts: each a stable `code` (snake_case) and
//! the numbers it rests on. `analysis::verdict` computes them, in the order
//! the verdict says them (speed, the reference, the cases set apart, CPU,
//! memory, the dirty limit, what to do); `report::text::verdict` words them.

use serde::{Deserialize, Serialize};

use super::names::Entrant;
use super::records::DirtyBurst;
pub use super::served::DeviceRate;
use crate::stats;

/// One fact of a verdict (`verdicts[].facts[]`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum VerdictFact {
    /// A matched job: every method kept `requests` in flight, each its
    /// own way (`ways`, in the ranking's order).
    InFlight { requests: u32, ways: Vec<Way> },
    /// No call: enough rounds for one comparison, not for as many as the
    /// verdict makes among `among` methods (it takes `needed`).
    NoCallRounds {
        leader: Entrant,
        measured: Measured,
        rounds: usize,
        among: usize,
        needed: usize,
        advice: NoCallAdvice,
        /// The time the job was given, when it stopped there
        /// ([`crate::result::records::Verdict::budget_ns`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget_ns: Option<u64>,
    },
    /// `leader` is shown faster than `methods` beyond the margin, but
    /// `tied` (not shown to differ from the leader) are not: ties do not
    /// chain, so where `methods` stand is not settled
    /// ([`crate::stats::leader`]). They are not called slower, and the
    /// verdict still calls the leading group.
    Unsettled {
        leader: Entrant,
        methods: Vec<Entrant>,
        tied: Vec<Entrant>,
    },
    /// No call: too few repetitions (fewer than
    /// [`crate::stats::MIN_CALL_REPETITIONS`]) on some side.
    NoCallRepetitions {
        leader: Entrant,
        measured: Measured,
        short: ShortOf,
        advice: NoCallAdvice,
        /// As in [`VerdictFact::NoCallRounds`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget_ns: Option<u64>,
    },
    /// Methods not shown to differ from the leader whose medians are far
    /// from it (`far`); the `near` ones tie for fastest.
    TieNearAndFar {
        near: Vec<Entrant>,
        leader: Entrant,
        far: Vec<Versus>,
        why: Overlap,
        slower: Vec<Versus>,
    },
    /// Every method ties; `slowest_ratio` is the fastest over the slowest.
    AllTie {
        methods: Vec<Entrant>,
        why: Overlap,
        slowest_ratio: f64,
    },
    /// One method is fastest; `slower` are those shown beside it.
    Fastest {
        leader: Entrant,
        slower: Vec<Versus>,
    },
    /// Several methods tie for fastest, the leader ahead of `slower`.
    TieForFastest {
        methods: Vec<Entrant>,
        why: Overlap,
        leader: Entrant,
        slower: Vec<Versus>,
    },
    /// A reference method (`null`, no I/O) and its throughput.
    Ceiling {
        method: Entrant,
        bw_bytes_per_s: f64,
    },
    /// The cheapest in CPU, and others beside it.
    CpuCheapest {
        unit: CpuUnit,
        cheapest: CpuCost,
        others: Vec<CpuCost>,
    },
    /// The two cheapest in CPU, as good as each other by the pick's rule.
    CpuNotShownToDiffer {
        unit: CpuUnit,
        first: CpuCost,
        second: CpuCost,
        others: Vec<CpuCost>,
    },
    /// Memory held, with no call on speed between the two.
    MemoryHeld {
        least: Entrant,
        least_bytes: u64,
        most: Entrant,
        most_bytes: u64,
        why: MemoryNoCall,
    },
    /// What holding less memory costs in speed.
    MemoryTrade {
        least: Entrant,
        least_bytes: u64,
        most: Entrant,
        most_bytes: u64,
        speed: MemorySpeed,
    },
    /// Page-cache writes under the dirty limit: a burst.
    DirtyBurst(DirtyBurst),
    /// Reads served from memory with the cache cold: left out of the
    /// ranking (`verdicts[].set_apart`).
    ServedFromMemory { methods: Vec<ApartMethod> },
    /// Writes the page cache absorbed: left out of the ranking, with the
    /// dirty limit they stayed under, the device's speed behind them
    /// (absent: no write of the job reached the device to say it) and a
    /// `--size` past the limit.
    AbsorbedByPageCache {
        methods: Vec<ApartMethod>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit_bytes: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<DeviceRate>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggested_size_bytes: Option<u64>,
    },
    /// Methods run with huge-page buffers beside base pages
    /// (`--buffers pages,huge`): each huge arm against its pages arm.
    HugeBuffers {
        block_size: u64,
        pairs: Vec<BufferPair>,
    },
    /// No call yet: the leader on these numbers.
    NoCallYet { leader: Entrant },
    /// Use the one fastest method.
    Use { method: Entrant },
    /// The methods equally good (the pick first): each shown within
    /// [`crate::stats::EQUIVALENCE_MARGIN`] of the fastest both ways, its
    /// ratio's interval (at the verdict's `ci_level`) inside the margin (an
    /// equivalence test); `ratios`: the fastest over each of them but
    /// itself (absent in results before it was recorded, when a tie was
    /// enough). `dearer` tie for speed but cost more.
    EquallyGood {
        methods: Vec<Entrant>,
        speed: SpeedTie,
        dearer: Vec<Entrant>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        ratios: Vec<Versus>,
    },
    /// Methods not shown to differ in speed (nor in CPU per I/O or memory)
    /// whose likeness is not shown either: some ratio's interval reaches
    /// past `margin` ([`crate::stats::EQUIVALENCE_MARGIN`]). `leader` is
    /// the fastest, `ratios` it over each of the others (as
    /// [`VerdictFact::EquallyGood`]); `dearer` tie for speed but cost more.
    TooCloseToCall {
        methods: Vec<Entrant>,
        leader: Entrant,
        ratios: Vec<Versus>,
        margin: f64,
        dearer: Vec<Entrant>,
        /// As in [`VerdictFact::NoCallRounds`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget_ns: Option<u64>,
    },
    /// Use the pick: tied in speed, really cheaper `by`.
    UseCheaper {
        method: Entrant,
        speed: SpeedTie,
        by: CheaperBy,
    },
    /// Why `slower` (the runner-up) is behind `leader`: the cause of the
    /// difference, from the costs per I/O and the latency split.
    Why {
        slower: Entrant,
        leader: Entrant,
        cause: super::cause::Cause,
    },
}

impl VerdictFact {
    /// The fact's `code`, as the JSON writes it.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InFlight { .. } => "in_flight",
            Self::NoCallRounds { .. } => "no_call_rounds",
            Self::NoCallRepetitions { .. } => "no_call_repetitions",
            Self::TieNearAndFar { .. } => "tie_near_and_far",
            Self::AllTie { .. } => "all_tie",
            Self::Fastest { .. } => "fastest",
            Self::TieForFastest { .. } => "tie_for_fastest",
            Self::Ceiling { .. } => "ceiling",
            Self::CpuCheapest { .. } => "cpu_cheapest",
            Self::CpuNotShownToDiffer { .. } => "cpu_not_shown_to_differ",
            Self::MemoryHeld { .. } => "memory_held",
            Self::MemoryTrade { .. } => "memory_trade",
            Self::DirtyBurst(_) => "dirty_burst",
            Self::ServedFromMemory { .. } => "served_from_memory",
            Self::AbsorbedByPageCache { .. } => "absorbed_by_page_cache",
            Self::HugeBuffers { .. } => "huge_buffers",
            Self::NoCallYet { .. } => "no_call_yet",
            Self::Use { .. } => "use",
            Self::EquallyGood { .. } => "equally_good",
            Self::TooCloseToCall { .. } => "too_close_to_call",
            Self::Unsettled { .. } => "unsettled",
            Self::UseCheaper { .. } => "use_cheaper",
            Self::Why { .. } => "why",
        }
    }

    /// True for the last fact, what to do.
    pub fn is_action(&self) -> bool {
        matches!(
            self,
            Self::NoCallYet { .. }
                | Self::Use { .. }
                | Self::EquallyGood { .. }
                | Self::TooCloseToCall { .. }
                | Self::UseCheaper { .. }
        )
    }
}

/// How a method kept a matched job's requests in flight: `threads` of
/// `depth` requests each, or (`pool`) a pool of that many threads serving
/// one submitter.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Way {
    pub method: Entrant,
    pub threads: u32,
    pub depth: u32,
    /// `threadpool`, `tokio`: the pool's threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<u32>,
}

/// One method with huge-page buffers against itself with base pages.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BufferPair {
    pub pages: Entrant,
    pub huge: Entrant,
    /// The huge arm's throughput over the pages arm's (paired when they
    /// ran in rounds), with its interval at the verdict's `ci_level`.
    pub ratio: f64,
    #[serde(deserialize_with = "stats::interval")]
    pub ratio_ci: [f64; 2],
    /// The difference is real (the interval lies outside the margin).
    pub distinct: bool,
}

/// A method against the fastest, as the speed sentence gives it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Versus {
    pub method: Entrant,
    /// The fastest over this method, and its interval (at the verdict's
    /// `ci_level`; an unbounded side is written `null`, as
    /// [`stats::interval`] reads it).
    pub ratio: f64,
    #[serde(deserialize_with = "stats::interval")]
    pub ratio_ci: [f64; 2],
    /// Too few repetitions on either side for the interval to be one at
    /// that level.
    #[serde(default)]
    pub few_repetitions: bool,
    /// The depth it ran at, when below the depth asked and not every
    /// method's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_depth: Option<u32>,
}

impl Versus {
    /// True when its interval lies within
    /// [`crate::stats::EQUIVALENCE_MARGIN`] of even both ways, on enough
    /// repetitions for the interval to be one at its level: the two are
    /// shown alike in speed, not only not shown to differ.
    pub fn equivalent(&self) -> bool {
        !self.few_repetitions && stats::within_margin(self.ratio_ci)
    }
}

/// A method set apart from the ranking, its median throughput and
/// device fraction (absent without a block device).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ApartMethod {
    pub method: Entrant,
    pub bw_bytes_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_fraction: Option<f64>,
}

/// Without a call, what the leader measured against the others: the
/// medians' ratios, the closest first; `others` more not listed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    pub ratios: Vec<MedianRatio>,
    #[serde(default)]
    pub others: usize,
}

/// The leader over a method, by the statistic that ranked them (the
/// paired estimate of a paired job; the medians' ratio otherwise).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MedianRatio {
    pub method: Entrant,
    pub ratio: f64,
}

/// Which methods ran too few repetitions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ShortOf {
    /// Every method named ran `n`.
    Each { n: usize },
    /// Each method and its count, the leader first.
    Listed { methods: Vec<Repetitions> },
}

/// A method's measured repetitions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Repetitions {
    pub method: Entrant,
    pub n: usize,
}

/// What gives a verdict without a call its rounds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoCallAdvice {
    /// The run was interrupted: run it again to the end.
    Interrupted,
    /// The job stopped at its budget: this `--max-time`, or `--repeat`.
    MaxTime { max_time: String, repeat: usize },
    /// More time or `--repeat`.
    RunLonger { repeat: usize },
    /// `--case-timeout` stopped these methods.
    CaseTimeout {
        methods: Vec<Entrant>,
        repeat: usize,
    },
}

/// Why methods are not shown to differ in speed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// Too few repetitions: their repetitions overlap.
    FewRepetitions,
    /// Paired: the per-round ratio's interval reaches within
    /// [`crate::stats::EQUIVALENCE_MARGIN`] of even.
    WithinMargin,
    /// Unpaired: the medians' intervals overlap.
    IntervalsOverlap,
}

/// What CPU is compared by.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CpuUnit {
    PerIo,
    /// Among variants of different block sizes.
    PerMib,
}

/// A method's CPU cost (median ns per I/O, or per MiB moved).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuCost {
    pub method: Entrant,
    pub ns: f64,
    /// Named as the fastest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fastest: bool,
}

/// Why the memory fact calls nothing on speed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MemoryNoCall {
    TooFewRepetitions,
    NoCall,
}

/// The frugal method's speed against the greedy one's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MemorySpeed {
    /// Not shown to differ; the interval, when there is one.
    NotShownToDiffer { interval: Option<MemoryInterval> },
    /// Slower by `ratio` (< 1).
    Slower { ratio: f64 },
    /// Faster by `ratio`.
    Faster {
        ratio: f64,
        #[serde(deserialize_with = "stats::interval")]
        ratio_ci: [f64; 2],
        few_repetitions: bool,
    },
}

/// The interval of a memory trade not shown to differ in speed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemoryInterval {
    #[serde(deserialize_with = "stats::interval")]
    pub ratio_ci: [f64; 2],
    pub few_repetitions: bool,
    /// It reaches within the equivalence margin of even; else (unpaired)
    /// the medians' own intervals overlap.
    pub reaches_even: bool,
}

/// How methods as good as each other compare in speed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SpeedTie {
    NotShownToDiffer,
    Tied,
    TiedForFastest,
}

/// What makes the pick better than the others tied with it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CheaperBy {
    /// Less CPU per I/O.
    CpuPerIo,
    /// Less CPU per MiB moved (variants of different block sizes).
    CpuPerMib,
    Memory,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every interval a verdict fact holds reads back unbounded when its
    /// side was written `null` (JSON has no infinity).
    #[test]
    fn unbounded_fact_intervals_read_back_from_json() {
        let open = [0.0, f64::INFINITY];
        let facts = [
            VerdictFact::Fastest {
                leader: "uring".into(),
                slower: vec![Versus {
                    method: "direct".into(),
                    ratio: 2.0,
                    ratio_ci: open,
                    few_repetitions: true,
                    at_depth: None,
                }],
            },
            VerdictFact::MemoryTrade {
                least: "direct".into(),
                least_bytes: 1,
                most: "buffered".into(),
                most_bytes: 2,
                speed: MemorySpeed::Faster {
                    ratio: 2.0,
                    ratio_ci: open,
                    few_repetitions: false,
                },
            },
            VerdictFact::MemoryTrade {
                least: "direct".into(),
                least_bytes: 1,
                most: "buffered".into(),
                most_bytes: 2,
                speed: MemorySpeed::NotShownToDiffer {
                    interval: Some(MemoryInterval {
                        ratio_ci: [f64::NEG_INFINITY, f64::INFINITY],
                        few_repetitions: true,
                        reaches_even: false,
                    }),
                },
            },
        ];
        for f in facts {
            let json = serde_json::to_string(&f).unwrap();
            assert!(json.contains("null]"), "{json}");
            let back: VerdictFact = serde_json::from_str(&json).unwrap();
            assert_eq!(back, f, "{json}");
        }
    }
}

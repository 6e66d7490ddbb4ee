//! The verdict: for every group of cases that differ only by method, which
//! method is fastest, by how much and whether that is real, and what each
//! costs in CPU and memory — as sentences a person can act on and as data.
//!
//! Ratios are **paired** when the methods ran interleaved (the default):
//! each round ran one repetition of every method, so two methods are
//! compared on their per-round ratios: the Hodges-Lehmann estimate with the
//! Wilcoxon signed-rank 95% interval ([`stats::compare_paired`]); drift
//! between rounds cancels in each ratio. A difference is "real" when
//! that interval lies entirely outside the equivalence margin
//! ([`stats::EQUIVALENCE_MARGIN`], 3%): at least 3% apart with 95%
//! confidence; otherwise the methods tie. Results
//! without rounds (`--schedule sequential`, older files) fall back to the
//! unpaired rule: the medians' 95% intervals must not overlap
//! ([`stats::compare`]), with a bootstrap interval of the ratio.
//!
//! The pick among methods tied for fastest weighs CPU per I/O (then memory)
//! only where that difference is real by the same kind of interval;
//! otherwise they are equally good and the pick is the first of them in the
//! run's order, so that identical runs give the same answer.
//!
//! `null` does no I/O: it is iopath's own ceiling, a reference, never a
//! candidate. It is listed in the ranking (flagged `reference`) and named in
//! one sentence, but the real methods are ranked, timed against each other
//! and picked from among themselves.

pub mod neighbour;
use crate::result::verdict_facts::CheaperBy;
use crate::result::{CaseResult, Entrant, Job, JobKey, MethodName};
use crate::stats::{self, Comparison};

/// CPU figures closer than this (max / min) are not worth a fact.
const CPU_WORTH_SAYING: f64 = 1.10;
/// Nor worth a pick: a CPU-per-I/O difference decides between methods
/// tied for speed only when its interval lies beyond this margin.
const CPU_MARGIN: f64 = CPU_WORTH_SAYING - 1.0;
/// Memory figures are worth a sentence when the largest is at least this
/// many times the smallest and at least [`MEM_WORTH_SAYING_BYTES`] more.
const MEM_WORTH_SAYING: f64 = 2.0;
const MEM_WORTH_SAYING_BYTES: u64 = 1 << 20;

pub use crate::result::records::{Cost, DirtyBurst, MemoryTrade, Ranked, Verdict};
pub use crate::result::verdict_facts::VerdictFact;

mod buffers;
pub(crate) mod dirty;
pub mod facts;
mod memory;
mod no_call;
pub mod served;
mod ties;
mod variants;
pub mod why;
pub use variants::variant_names;
use variants::{cpu_cost, mixed_sizes};

/// The verdicts of a run ([`all`]), with what its system says about them:
/// writes that fit under the dirty limit are called a burst
/// ([`Verdict::dirty_burst`]).
pub fn of_run(r: &crate::result::RunResult) -> Vec<Verdict> {
    let mut v = in_speed_order(&r.cases);
    // Methods that all stopped short were interrupted only in a run that
    // was.
    if !r.interrupted {
        for verdict in v.iter_mut().filter(|v| v.interrupted) {
            verdict.interrupted = false;
            verdict.facts = facts::of(verdict);
        }
    }
    // On tmpfs the file is the page cache: no burst (dirty::in_memory).
    if let Some(d) = r
        .system
        .dirty_limits
        .as_ref()
        .filter(|_| !dirty::in_memory(r))
    {
        let file = r.target.as_ref().map(|t| t.size_bytes);
        for verdict in &mut v {
            let cap = r.config.cache_limit.as_ref();
            if let Some(b) = dirty::burst(verdict, &r.cases, d, file, cap) {
                // Said before what to do (the last fact).
                let at = verdict.facts.len().saturating_sub(1);
                verdict.facts.insert(at, VerdictFact::DirtyBurst(b.clone()));
                verdict.dirty_burst = Some(b);
            }
        }
    }
    // What the buffers alone are worth, said before what to do.
    for verdict in &mut v {
        if let Some(f) = buffers::fact(verdict, &r.cases) {
            let at = verdict.facts.len().saturating_sub(1);
            verdict.facts.insert(at, f);
        }
    }
    v.iter_mut().for_each(pick_first);
    v
}

/// Facts for the verdicts of `r` saved without them (results written
/// before facts existed): each takes those of today's verdict on its job
/// when that makes the same call (pick, fastest, call); one that does not
/// keeps only its saved words.
pub fn add_facts(r: &mut crate::result::RunResult) {
    if r.verdicts.iter().all(|v| !v.facts.is_empty()) {
        return;
    }
    let today = of_run(r);
    for v in r.verdicts.iter_mut().filter(|v| v.facts.is_empty()) {
        let same = |t: &&Verdict| {
            t.job == v.job && t.pick == v.pick && t.fastest == v.fastest && t.called == v.called
        };
        if let Some(t) = today.iter().find(same) {
            v.facts = t.facts.clone();
        }
    }
}

/// The pick moved to the front of the ranking, the others keeping their
/// order (fastest first), so that a reader taking `ranking[0]` takes the
/// method to use. Their ratios stay the fastest's (`fastest[0]`) over
/// each: the pick's is not 1 when the tie was broken in its favour.
fn pick_first(v: &mut Verdict) {
    if let Some(i) = v.ranking.iter().position(|r| r.method == v.pick) {
        let pick = v.ranking.remove(i);
        v.ranking.insert(0, pick);
    }
}

/// True for a method that does no I/O (`null`): a reference, not a
/// candidate.
pub fn is_reference(method: &MethodName) -> bool {
    *method == iopath_io::Method::Null
}

/// Verdicts for every group with at least two measured real methods (a
/// reference method does not count), in the order the groups first appear.
///
/// A group of variants (cases of one pattern that a preset gives the same
/// `group`: glommio-scan's ways to scan, crystal's depths) is judged like
/// a job, its variants in the methods' place, each named by its label when
/// the labels tell them apart, else by what differs
/// ([`variant_names`]: `uring 512k Q5T1`).
pub fn all(cases: &[CaseResult]) -> Vec<Verdict> {
    let mut v = in_speed_order(cases);
    v.iter_mut().for_each(pick_first);
    v
}

/// [`all`] with each ranking in speed order, fastest first, as the
/// verdict's words read it (before [`pick_first`]).
fn in_speed_order(cases: &[CaseResult]) -> Vec<Verdict> {
    // The groups in the order they first come: linear in the cases.
    let mut at: std::collections::HashMap<JobKey, usize> = Default::default();
    let mut groups: Vec<(JobKey, Vec<&CaseResult>)> = Vec::new();
    for c in cases {
        let k = c.job_key();
        let i = match at.get(&k) {
            Some(&i) => i,
            None => {
                at.insert(k.clone(), groups.len());
                groups.push((k, Vec::new()));
                groups.len() - 1
            }
        };
        groups[i].1.push(c);
    }
    groups
        .into_iter()
        .filter_map(|(k, group)| {
            let mut job = group[0].job();
            let names = match &k {
                JobKey::Group { group: g, .. } => {
                    job.group = Some(g.clone());
                    variant_names(&group)
                }
                JobKey::Job(_) => group.iter().map(|c| c.name()).collect(),
            };
            of_group(job, &group, &names)
        })
        .collect()
}

/// A measured case of a group and the statistics of its throughput.
#[derive(Clone)]
struct Sampled<'a> {
    c: &'a CaseResult,
    s: stats::Stats,
}

/// The group's measured cases, the real ones (highest median first), then
/// the references; `real` of them are real.
struct Measured<'a> {
    ms: Vec<Sampled<'a>>,
    real: usize,
}

impl<'a> Measured<'a> {
    /// `None` without two real methods: as with one method alone, there
    /// is nothing to judge (`null` beside one method is no choice).
    fn of(group: &[&'a CaseResult]) -> Option<Measured<'a>> {
        let (mut ms, mut refs): (Vec<Sampled>, Vec<Sampled>) = group
            .iter()
            .filter(|c| c.skipped.is_none() && c.error.is_none())
            // Like with like: memory's speeds are not ranked with the
            // device's (served.rs).
            .filter(|c| !crate::result::served::is_set_apart(c))
            .filter_map(|&c| {
                let s = stats::describe(&c.samples(|m| m.bw_bytes_per_s))?;
                (s.median > 0.0).then_some(Sampled { c, s })
            })
            .partition(|m| !is_reference(&m.c.method));
        if ms.len() < 2 {
            return None;
        }
        ms.sort_by(|a, b| b.s.median.total_cmp(&a.s.median));
        refs.sort_by(|a, b| b.s.median.total_cmp(&a.s.median));
        let real = ms.len();
        ms.extend(refs);
        Some(Measured { ms, real })
    }

    /// Each method against the first of `ms` (`alpha` each).
    fn compare(ms: &[Sampled], alpha: f64) -> Vec<Comparison> {
        let top = &ms[0];
        ms.iter()
            .map(|m| {
                versus(m.c, top.c, &bw, stats::EQUIVALENCE_MARGIN, alpha).unwrap_or(Comparison {
                    ratio: top.s.median / m.s.median,
                    ratio_ci95: [0.0, f64::INFINITY],
                    distinct: false,
                    undersampled: false,
                })
            })
            .collect()
    }

    /// True when none of the real methods is apart by too few rounds.
    fn calls(&self, cmp: &[Comparison]) -> bool {
        !cmp[1..self.real].iter().any(|k| k.undersampled)
    }

    /// Paired, the ranking follows the paired estimate (each method
    /// against the one with the highest median), so that the fastest is
    /// never measured slower than another by its own ratios. Without a
    /// call (too few rounds) it stays on the medians, as the table's
    /// "best" does, unless the medians' leader would make a call the
    /// paired ranking does not. Returns the comparisons with the first.
    fn order(&mut self, paired: bool, alpha: f64) -> Vec<Comparison> {
        let cmp = Self::compare(&self.ms, alpha);
        if !paired {
            return cmp;
        }
        let (ms, real) = (&self.ms, self.real);
        let lead = ms[0].c;
        let score: Vec<f64> = ms[..real]
            .iter()
            .map(|m| {
                versus(lead, m.c, &bw, stats::EQUIVALENCE_MARGIN, alpha).map_or(0.0, |k| k.ratio)
            })
            .collect();
        let mut idx: Vec<usize> = (0..real).collect();
        idx.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
        let sorted: Vec<Sampled> = idx
            .into_iter()
            .chain(real..ms.len())
            .map(|i| ms[i].clone())
            .collect();
        let by_pairs = Self::compare(&sorted, alpha);
        if self.calls(&by_pairs) || self.calls(&cmp) {
            self.ms = sorted;
            return by_pairs;
        }
        cmp
    }

    /// The step-down test from the runner-up ([`stats::leader::step_down`]):
    /// the real methods, in the order of `cmp` (their distance to the
    /// first), are apart from the fastest only when every method of the
    /// leading group is faster; the others tie with it (or are too few to
    /// tell).
    fn step_down(&self, cmp: &mut [Comparison], alpha: f64) -> Vec<bool> {
        let ms = &self.ms[..self.real];
        let first: Vec<Comparison> = cmp[..self.real].to_vec();
        let vs = |g: usize, i: usize| {
            if g == 0 {
                return Some(first[i]);
            }
            versus(ms[i].c, ms[g].c, &bw, stats::EQUIVALENCE_MARGIN, alpha)
        };
        let standing = stats::leader::step_down(ms.len(), &vs);
        let mut unranked = vec![false; self.ms.len()];
        for ((k, s), u) in cmp.iter_mut().zip(standing).zip(&mut unranked) {
            match s {
                stats::Standing::Tied => (k.distinct, k.undersampled) = (false, false),
                stats::Standing::TooFew => (k.distinct, k.undersampled) = (false, true),
                // Not tied, not called behind, not blocking the call.
                stats::Standing::Unranked => {
                    (k.distinct, k.undersampled) = (false, false);
                    *u = true;
                }
                stats::Standing::Leader | stats::Standing::Behind => {}
            }
        }
        unranked
    }

    /// The ranking, each method named by `name_of`.
    fn ranking(
        &self,
        cmp: &[Comparison],
        unranked: &[bool],
        name_of: &dyn Fn(&CaseResult) -> String,
    ) -> Vec<Ranked> {
        let med = |c: &CaseResult, f: &dyn Fn(&crate::result::Measurement) -> f64| {
            stats::describe(&c.samples(f)).map_or(0.0, |s| s.median)
        };
        self.ms
            .iter()
            .zip(cmp)
            .enumerate()
            .map(|(i, (m, k))| {
                let reference = i >= self.real;
                Ranked {
                    method: name_of(m.c).into(),
                    bw_bytes_per_s: m.s.median,
                    bw_ci95_median: m.s.ci95_median,
                    n: m.s.n,
                    queue_depth: m.c.queue_depth,
                    threads: m.c.threads,
                    pool_threads: m.c.pool_threads,
                    fastest_ratio: if i == 0 { 1.0 } else { k.ratio },
                    fastest_ratio_ci95: if i == 0 { [1.0, 1.0] } else { k.ratio_ci95 },
                    // Too few rounds to tell is not a tie either.
                    tied_with_fastest: i == 0
                        || (!reference && !k.distinct && !k.undersampled && !unranked[i]),
                    unranked: unranked[i],
                    too_few_repetitions: i > 0 && !reference && k.undersampled,
                    cpu_ns_per_io: med(m.c, &|m| m.cpu.ns_per_io),
                    block_size: m.c.block_size,
                    memory_bytes: med(m.c, &|m| m.memory.total_bytes as f64).round() as u64,
                    reference,
                }
            })
            .collect()
    }

    /// The real method holding least memory beside the one holding most,
    /// when they differ by [`MEM_WORTH_SAYING`] and
    /// [`MEM_WORTH_SAYING_BYTES`], with their speed compared.
    fn memory_trade(&self, ranking: &[Ranked], alpha: f64) -> Option<MemoryTrade> {
        let held: Vec<(usize, u64)> = ranking
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.reference)
            .map(|(i, r)| (i, r.memory_bytes))
            .filter(|&(_, b)| b > 0)
            .collect();
        let (li, lb) = held.iter().min_by_key(|&&(i, b)| (b, i)).copied()?;
        let (hi, hb) = held
            .iter()
            .max_by_key(|&&(i, b)| (b, usize::MAX - i))
            .copied()?;
        if (hb as f64) < lb as f64 * MEM_WORTH_SAYING || hb - lb < MEM_WORTH_SAYING_BYTES {
            return None;
        }
        let speed = versus(
            self.ms[hi].c,
            self.ms[li].c,
            &bw,
            stats::EQUIVALENCE_MARGIN,
            alpha,
        )?;
        Some(MemoryTrade {
            least: ranking[li].method.clone(),
            least_bytes: lb,
            most: ranking[hi].method.clone(),
            most_bytes: hb,
            speed,
        })
    }

    /// Methods whose case the case timeout stopped: more rounds take a
    /// larger timeout, not only more repetitions.
    fn capped(&self, name_of: &dyn Fn(&CaseResult) -> String) -> Vec<Entrant> {
        self.ms
            .iter()
            .filter(|m| {
                m.c.repetition_control
                    .as_ref()
                    .is_some_and(|r| r.stopped_by == stats::StopReason::CaseTimeout)
            })
            .map(|m| name_of(m.c).into())
            .collect()
    }
}

/// Throughput, the metric the verdict ranks by.
fn bw(m: &crate::result::Measurement) -> f64 {
    m.bw_bytes_per_s
}

/// The real method least in `f` (above 0), and its value.
fn least(ranking: &[Ranked], f: &dyn Fn(&Ranked) -> f64) -> Option<Cost> {
    ranking
        .iter()
        .filter(|r| !r.reference && f(r) > 0.0)
        .min_by(|a, b| f(a).total_cmp(&f(b)))
        .map(|r| Cost {
            method: r.method.clone(),
            value: f(r),
        })
}

fn of_group(job: Job, group: &[&CaseResult], names: &[String]) -> Option<Verdict> {
    let name_of = |c: &CaseResult| {
        group
            .iter()
            .position(|g| std::ptr::eq(*g, c))
            .map_or_else(|| c.name(), |i| names[i].clone())
    };
    let mut m = Measured::of(group)?;
    // Paired when every method shares rounds with the one of highest median.
    let paired = m.ms.iter().all(|s| !pairs(m.ms[0].c, s.c, &bw).is_empty());
    // Each comparison at 5%, in a step-down from the runner-up: the
    // verdict errs at most 5% of the time over all of them
    // ([`stats::leader`]).
    let alpha = stats::VERDICT_ALPHA;
    let mut cmp = m.order(paired, alpha);
    let unranked = m.step_down(&mut cmp, alpha);
    let ranking = m.ranking(&cmp, &unranked, &name_of);
    let fastest: Vec<Entrant> = ranking
        .iter()
        .filter(|r| r.tied_with_fastest)
        .map(|r| r.method.clone())
        .collect();
    let mixed = mixed_sizes(&ranking);
    let called = !ranking.iter().any(|r| r.too_few_repetitions);
    let Chosen {
        pick,
        equally_good,
        cheaper_by,
    } = if called {
        let cases: Vec<&CaseResult> = m.ms.iter().map(|s| s.c).collect();
        choose(&ranking, &cases, group, mixed)
    } else {
        // No call: the leader on these numbers, nothing to weigh it against.
        Chosen {
            pick: ranking[0].method.clone(),
            equally_good: Vec::new(),
            cheaper_by: None,
        }
    };
    let real_cases: Vec<&CaseResult> = m.ms[..m.real].iter().map(|s| s.c).collect();
    let (interrupted, max_time_for_call) =
        no_call::shortfall(&real_cases, called || !paired, alpha);
    let mut v = Verdict {
        job,
        fastest,
        cheapest_cpu: least(&ranking, &|r| cpu_cost(r, mixed)),
        least_memory: least(&ranking, &|r| r.memory_bytes as f64),
        memory_trade: m.memory_trade(&ranking, alpha),
        ranking,
        pick,
        equally_good,
        cheaper_by,
        paired,
        called,
        ci_level: if paired { 1.0 - alpha } else { 0.95 },
        capped: m.capped(&name_of),
        interrupted,
        max_time_for_call,
        budget_ns: no_call::budget(&real_cases).filter(|_| !interrupted),
        dirty_burst: None,
        set_apart: served::apart(group, &name_of),
        facts: Vec::new(),
        text: Vec::new(),
    };
    v.facts = facts::of(&v);
    if let Some(why) = why::fact(&v, group, &name_of) {
        // Said after the speed, before what to do.
        let at = v.facts.iter().position(|f| f.is_action());
        v.facts.insert(at.unwrap_or(v.facts.len()), why);
    }
    Some(v)
}

/// True when every measured repetition of `c` belongs to a round.
fn has_rounds(c: &CaseResult) -> bool {
    let m = c.measured();
    !m.is_empty() && m.iter().all(|r| r.round.is_some())
}

/// Metric `f` of `b` against `a`: paired by round when both ran in rounds
/// and share some, else unpaired. `None` when nothing can be compared.
fn versus(
    a: &CaseResult,
    b: &CaseResult,
    f: &dyn Fn(&crate::result::Measurement) -> f64,
    margin: f64,
    alpha: f64,
) -> Option<Comparison> {
    let pairs = pairs(a, b, f);
    if !pairs.is_empty() {
        if let Some(k) = stats::compare_paired_with(&pairs, margin, alpha) {
            return Some(k);
        }
    }
    // Unpaired: the medians' intervals must not overlap, and the ratio's
    // interval must not lie inside the margin.
    stats::compare(&a.samples(f), &b.samples(f)).map(|mut k| {
        if stats::within_margin(k.ratio_ci95) {
            k.distinct = false;
            k.undersampled = false;
        }
        k
    })
}

/// Metric `f` of `a` and `b` in the rounds both ran (empty unless both ran
/// in rounds; rounds are numbered across the run, so only repetitions of
/// one job pair).
fn pairs(
    a: &CaseResult,
    b: &CaseResult,
    f: &dyn Fn(&crate::result::Measurement) -> f64,
) -> Vec<(f64, f64)> {
    if !(has_rounds(a) && has_rounds(b)) {
        return Vec::new();
    }
    let mb = b.measured();
    a.measured()
        .iter()
        .filter_map(|x| mb.iter().find(|y| y.round == x.round).map(|y| (f(x), f(y))))
        .collect()
}

/// The pick among the methods tied for fastest, and those as good as it.
/// A method is picked over another only for a real difference: less CPU
/// per I/O (by [`versus`], the same kind of interval as speed, beyond a
/// 10% margin), or, where
/// CPU does not separate them, less memory by at least
/// [`MEM_WORTH_SAYING`] times and [`MEM_WORTH_SAYING_BYTES`].
fn choose(ranking: &[Ranked], cases: &[&CaseResult], group: &[&CaseResult], mixed: bool) -> Chosen {
    // Candidates in the run's order (not by a median that noise reorders).
    let mut cand: Vec<usize> = (0..ranking.len())
        .filter(|&i| ranking[i].tied_with_fastest && !ranking[i].reference)
        .collect();
    cand.sort_by_key(|&i| {
        group
            .iter()
            .position(|g| std::ptr::eq(*g, cases[i]))
            .unwrap_or(usize::MAX)
    });
    if cand.is_empty() {
        return Chosen {
            pick: ranking[0].method.clone(),
            equally_good: Vec::new(),
            cheaper_by: None,
        };
    }
    // Per I/O, or per byte moved among variants of different block sizes.
    let cpu = |m: &crate::result::Measurement| {
        if mixed && m.io_bytes > 0 {
            m.cpu.ns_per_io * m.ios as f64 / m.io_bytes as f64
        } else {
            m.cpu.ns_per_io
        }
    };
    let cpu_alpha = 0.05 / (cand.len().saturating_sub(1)).max(1) as f64;
    // `a` beats `b` when it is really cheaper in CPU, or holds much less
    // memory while CPU does not separate them.
    // `a` beats `b` (`Some(true)`) or loses, and by what it was told.
    let cpu_by = if mixed {
        CheaperBy::CpuPerMib
    } else {
        CheaperBy::CpuPerIo
    };
    let beats = |a: usize, b: usize| -> Option<(bool, CheaperBy)> {
        let (ra, rb) = (&ranking[a], &ranking[b]);
        if ra.cpu_ns_per_io > 0.0 && rb.cpu_ns_per_io > 0.0 {
            if let Some(k) = versus(cases[b], cases[a], &cpu, CPU_MARGIN, cpu_alpha) {
                // k.ratio = cpu(a) / cpu(b).
                if k.distinct {
                    return Some((k.ratio < 1.0, cpu_by));
                }
            }
        }
        let (ma, mb) = (ra.memory_bytes, rb.memory_bytes);
        let (lo, hi) = (ma.min(mb), ma.max(mb));
        if hi as f64 >= lo as f64 * MEM_WORTH_SAYING && hi - lo >= MEM_WORTH_SAYING_BYTES {
            return Some((ma < mb, CheaperBy::Memory));
        }
        None
    };
    let wins = |a: usize, b: usize| beats(a, b).filter(|w| w.0).map(|w| w.1);
    // The best: a candidate that no other candidate beats, the first such
    // in the run's order; as good as it: those it does not beat.
    let best = cand
        .iter()
        .copied()
        .find(|&i| !cand.iter().any(|&j| j != i && wins(j, i).is_some()))
        .unwrap_or(cand[0]);
    let mut equal: Vec<Entrant> = vec![ranking[best].method.clone()];
    // What the best beat the others by: CPU when it beat every one of
    // them on CPU, else memory.
    let mut by: Option<CheaperBy> = None;
    for &j in &cand {
        match wins(best, j) {
            _ if j == best => {}
            None => equal.push(ranking[j].method.clone()),
            Some(CheaperBy::Memory) => by = Some(CheaperBy::Memory),
            Some(cpu) => by = Some(by.unwrap_or(cpu)),
        }
    }
    let tied = equal.len() > 1;
    Chosen {
        pick: equal[0].clone(),
        equally_good: if tied { equal } else { Vec::new() },
        cheaper_by: by.filter(|_| !tied),
    }
}

/// What [`choose`] chose: the pick, those as good as it, and what made
/// it better than the others ([`Verdict::cheaper_by`]).
struct Chosen {
    pick: Entrant,
    equally_good: Vec<Entrant>,
    cheaper_by: Option<CheaperBy>,
}

#[cfg(test)]
mod equivalence_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod no_call_tests;
#[cfg(test)]
pub(crate) mod tests;

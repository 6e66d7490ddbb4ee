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
use crate::model::units::{fmt_bytes, fmt_ns};
use crate::result::{CaseResult, Entrant, Job, JobKey, MethodName};
use crate::stats::{self, Comparison};

/// CPU figures closer than this (max / min) are not worth a sentence.
const CPU_WORTH_SAYING: f64 = 1.10;
/// Nor worth a pick: a CPU-per-I/O difference decides between methods
/// tied for speed only when its interval lies beyond this margin.
const CPU_MARGIN: f64 = CPU_WORTH_SAYING - 1.0;
/// Memory figures are worth a sentence when the largest is at least this
/// many times the smallest and at least [`MEM_WORTH_SAYING_BYTES`] more.
const MEM_WORTH_SAYING: f64 = 2.0;
const MEM_WORTH_SAYING_BYTES: u64 = 1 << 20;

pub use crate::result::records::{Cost, DirtyBurst, MemoryTrade, Ranked, Verdict};

mod dirty;
mod memory;
mod no_call;
mod ties;
mod words_fmt;
use words_fmt::{ci, pct_slower, x};
mod variants;
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
            verdict.text = words(verdict);
        }
    }
    // On tmpfs the file is the page cache: no write-back, no device, no
    // burst to tell from sustained writing (the no_block_device warning
    // says what was measured).
    let in_memory = matches!(r.system.fs_type.as_deref(), Some("tmpfs" | "ramfs"))
        && r.target
            .as_ref()
            .is_some_and(|t| t.kind != crate::result::TargetKind::BlockDevice);
    if let Some(d) = r.system.dirty_limits.as_ref().filter(|_| !in_memory) {
        let file = r.target.as_ref().map(|t| t.size_bytes);
        for verdict in &mut v {
            dirty::caveat(verdict, &r.cases, d, file, r.config.cache_limit.as_ref());
        }
    }
    v.iter_mut().for_each(pick_first);
    v
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

fn of_group(job: Job, group: &[&CaseResult], names: &[String]) -> Option<Verdict> {
    let name_of = |c: &CaseResult| {
        group
            .iter()
            .position(|g| std::ptr::eq(*g, c))
            .map_or_else(|| c.name(), |i| names[i].clone())
    };
    #[derive(Clone)]
    struct M<'a> {
        c: &'a CaseResult,
        s: stats::Stats,
    }
    let (mut ms, mut refs): (Vec<M>, Vec<M>) = group
        .iter()
        .filter(|c| c.skipped.is_none() && c.error.is_none())
        .filter_map(|&c| {
            let s = stats::describe(&c.samples(|m| m.bw_bytes_per_s))?;
            (s.median > 0.0).then_some(M { c, s })
        })
        .partition(|m| !is_reference(&m.c.method));
    // As with one method alone, there is nothing to judge without two real
    // ones: `null` beside one method is no choice.
    if ms.len() < 2 {
        return None;
    }
    ms.sort_by(|a, b| b.s.median.total_cmp(&a.s.median));
    refs.sort_by(|a, b| b.s.median.total_cmp(&a.s.median));
    // The real methods first, then the references: `ms[i]` is `ranking[i]`.
    let real = ms.len();
    ms.extend(refs);
    let bw = |m: &crate::result::Measurement| m.bw_bytes_per_s;
    // Paired when every method shares rounds with the one of highest median.
    let paired = ms.iter().all(|m| !pairs(ms[0].c, m.c, &bw).is_empty());
    // Each of the other real methods is compared with the fastest: the
    // verdict errs at most 5% of the time over all of them (Bonferroni).
    let alpha = stats::verdict_alpha(real);
    // Each method against the first of `ms`.
    let compare = |ms: &[M]| -> Vec<Comparison> {
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
    };
    let calls = |cmp: &[Comparison]| !cmp[1..real].iter().any(|k| k.undersampled);
    let mut cmp = compare(&ms);
    if paired {
        // Paired, the ranking follows the paired estimate (each method
        // against the one with the highest median), so that the fastest is
        // never measured slower than another by its own ratios. Without a
        // call (too few rounds) it stays on the medians, as the table's
        // "best" does, unless the medians' leader would make a call the
        // paired ranking does not.
        let lead = ms[0].c;
        let score: Vec<f64> = ms[..real]
            .iter()
            .map(|m| {
                versus(lead, m.c, &bw, stats::EQUIVALENCE_MARGIN, alpha).map_or(0.0, |k| k.ratio)
            })
            .collect();
        let mut idx: Vec<usize> = (0..real).collect();
        idx.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
        let sorted: Vec<M> = idx
            .into_iter()
            .chain(real..ms.len())
            .map(|i| ms[i].clone())
            .collect();
        let by_pairs = compare(&sorted);
        if calls(&by_pairs) || calls(&cmp) {
            ms = sorted;
            cmp = by_pairs;
        }
    }
    let med = |c: &CaseResult, f: &dyn Fn(&crate::result::Measurement) -> f64| {
        stats::describe(&c.samples(f)).map_or(0.0, |s| s.median)
    };
    let ranking: Vec<Ranked> = ms
        .iter()
        .zip(&cmp)
        .enumerate()
        .map(|(i, (m, k))| {
            let reference = i >= real;
            Ranked {
                method: name_of(m.c).into(),
                bw_bytes_per_s: m.s.median,
                bw_ci95_median: m.s.ci95_median,
                n: m.s.n,
                queue_depth: m.c.queue_depth,
                fastest_ratio: if i == 0 { 1.0 } else { k.ratio },
                fastest_ratio_ci95: if i == 0 { [1.0, 1.0] } else { k.ratio_ci95 },
                // Too few rounds to tell is not a tie either.
                tied_with_fastest: i == 0 || (!reference && !k.distinct && !k.undersampled),
                too_few_repetitions: i > 0 && !reference && k.undersampled,
                cpu_ns_per_io: med(m.c, &|m| m.cpu.ns_per_io),
                block_size: m.c.block_size,
                memory_bytes: med(m.c, &|m| m.memory.total_bytes as f64).round() as u64,
                reference,
            }
        })
        .collect();
    let fastest: Vec<Entrant> = ranking
        .iter()
        .filter(|r| r.tied_with_fastest)
        .map(|r| r.method.clone())
        .collect();
    let min_by = |f: &dyn Fn(&Ranked) -> f64| {
        ranking
            .iter()
            .filter(|r| !r.reference && f(r) > 0.0)
            .min_by(|a, b| f(a).total_cmp(&f(b)))
            .map(|r| Cost {
                method: r.method.clone(),
                value: f(r),
            })
    };
    let mixed = mixed_sizes(&ranking);
    let cheapest_cpu = min_by(&|r| cpu_cost(r, mixed));
    let least_memory = min_by(&|r| r.memory_bytes as f64);
    let called = !ranking.iter().any(|r| r.too_few_repetitions);
    let (pick, equally_good) = if called {
        choose(
            &ranking,
            &ms.iter().map(|m| m.c).collect::<Vec<_>>(),
            group,
            mixed,
        )
    } else {
        // No call: the leader on these numbers, nothing to weigh it against.
        (ranking[0].method.clone(), Vec::new())
    };
    let memory_trade = {
        let held: Vec<(usize, u64)> = ranking
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.reference)
            .map(|(i, r)| (i, r.memory_bytes))
            .filter(|&(_, b)| b > 0)
            .collect();
        let lo = held.iter().min_by_key(|&&(i, b)| (b, i)).copied();
        let hi = held
            .iter()
            .max_by_key(|&&(i, b)| (b, usize::MAX - i))
            .copied();
        match (lo, hi) {
            (Some((li, lb)), Some((hi_i, hb)))
                if hb as f64 >= lb as f64 * MEM_WORTH_SAYING
                    && hb - lb >= MEM_WORTH_SAYING_BYTES =>
            {
                versus(ms[hi_i].c, ms[li].c, &bw, stats::EQUIVALENCE_MARGIN, alpha).map(|speed| {
                    MemoryTrade {
                        least: ranking[li].method.clone(),
                        least_bytes: lb,
                        most: ranking[hi_i].method.clone(),
                        most_bytes: hb,
                        speed,
                    }
                })
            }
            _ => None,
        }
    };
    // Methods whose case the case timeout stopped: more rounds take a
    // larger timeout, not only more repetitions.
    let capped: Vec<Entrant> = ms
        .iter()
        .filter(|m| {
            m.c.repetition_control
                .as_ref()
                .is_some_and(|r| r.stopped_by == stats::StopReason::CaseTimeout)
        })
        .map(|m| name_of(m.c).into())
        .collect();
    let real_cases: Vec<&CaseResult> = ms[..real].iter().map(|m| m.c).collect();
    let (interrupted, max_time_for_call) =
        no_call::shortfall(&real_cases, called || !paired, alpha);
    let mut v = Verdict {
        job,
        fastest,
        ranking,
        cheapest_cpu,
        least_memory,
        memory_trade,
        pick,
        equally_good,
        paired,
        called,
        ci_level: if paired { 1.0 - alpha } else { 0.95 },
        capped,
        interrupted,
        max_time_for_call,
        dirty_burst: None,
        text: Vec::new(),
    };
    v.text = words(&v);
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
fn choose(
    ranking: &[Ranked],
    cases: &[&CaseResult],
    group: &[&CaseResult],
    mixed: bool,
) -> (Entrant, Vec<Entrant>) {
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
        return (ranking[0].method.clone(), Vec::new());
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
    let beats = |a: usize, b: usize| -> Option<bool> {
        let (ra, rb) = (&ranking[a], &ranking[b]);
        if ra.cpu_ns_per_io > 0.0 && rb.cpu_ns_per_io > 0.0 {
            if let Some(k) = versus(cases[b], cases[a], &cpu, CPU_MARGIN, cpu_alpha) {
                // k.ratio = cpu(a) / cpu(b).
                if k.distinct {
                    return Some(k.ratio < 1.0);
                }
            }
        }
        let (ma, mb) = (ra.memory_bytes, rb.memory_bytes);
        let (lo, hi) = (ma.min(mb), ma.max(mb));
        if hi as f64 >= lo as f64 * MEM_WORTH_SAYING && hi - lo >= MEM_WORTH_SAYING_BYTES {
            return Some(ma < mb);
        }
        None
    };
    // The best: a candidate that no other candidate beats, the first such
    // in the run's order; as good as it: those it does not beat.
    let best = cand
        .iter()
        .copied()
        .find(|&i| !cand.iter().any(|&j| j != i && beats(j, i) == Some(true)))
        .unwrap_or(cand[0]);
    let mut equal: Vec<Entrant> = vec![ranking[best].method.clone()];
    for &j in &cand {
        if j != best && beats(best, j) != Some(true) {
            equal.push(ranking[j].method.clone());
        }
    }
    let pick = equal[0].clone();
    (pick, if equal.len() > 1 { equal } else { Vec::new() })
}

/// "a", "a and b", "a, b and c".
pub(crate) fn list<T: std::fmt::Display>(names: &[T]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(ToString::to_string).collect();
            format!("{} and {last}", init.join(", "))
        }
    }
}

/// The job as it ran: the group's label, with the depth every real method
/// ran at when that is below the depth asked (`randread 4k Q1T1` for
/// `direct,direct` asked for Q32).
fn ran_label(v: &Verdict, real: &[&Ranked]) -> String {
    if v.job.group.is_some() {
        return v.job.label();
    }
    let depths: Vec<u32> = real.iter().map(|m| m.queue_depth).collect();
    match depths.first() {
        Some(&d) if d > 0 && d < v.job.queue_depth && depths.iter().all(|&x| x == d) => {
            v.job.label_at(d)
        }
        _ => v.job.label(),
    }
}

/// " at QD1" for a method that ran at a lower depth than the group asked.
fn depth_note(m: &Ranked, v: &Verdict) -> String {
    let real: Vec<&Ranked> = v.ranking.iter().filter(|r| !r.reference).collect();
    // Already in the label when every method ran at that depth.
    let all_at = real.iter().all(|r| r.queue_depth == m.queue_depth);
    // A variant's name says its depth.
    if v.job.group.is_some() {
        return String::new();
    }
    if m.queue_depth > 0 && m.queue_depth < v.job.queue_depth && !all_at {
        format!(" at QD{}", m.queue_depth)
    } else {
        String::new()
    }
}

/// The verdict's sentences.
pub fn words(v: &Verdict) -> Vec<String> {
    // The real methods are judged; the references only named.
    let (mut r, refs): (Vec<&Ranked>, Vec<&Ranked>) = v.ranking.iter().partition(|m| !m.reference);
    // The fastest first, the ratios' reference (a stored ranking has the
    // pick first: `pick_first`).
    if let Some(i) = r.iter().position(|m| v.fastest.first() == Some(&m.method)) {
        let top = r.remove(i);
        r.insert(0, top);
    }
    let label = ran_label(v, &r);
    let overlap = |few: bool| {
        if few {
            "their repetitions overlap"
        } else if v.paired {
            "the interval of their per-round ratio reaches within 3% of even"
        } else {
            "their 95% intervals overlap"
        }
    };
    let Some(&top) = r.first() else {
        return Vec::new();
    };
    let tied: Vec<&Ranked> = r.iter().copied().filter(|m| m.tied_with_fastest).collect();
    let rest: Vec<&Ranked> = r.iter().copied().filter(|m| !m.tied_with_fastest).collect();
    let mut out = Vec::new();

    // Speed.
    let vs = |m: &Ranked| {
        format!(
            "{} {}{} ({})",
            x(m.fastest_ratio),
            m.method,
            depth_note(m, v),
            ci(m.fastest_ratio_ci95, m.n < 6 || top.n < 6, v.ci_level)
        )
    };
    // Beside the next method, the one people use by habit (buffered), or
    // else the slowest; a group's variants (a preset's ways to do one
    // thing) all, each is what the preset is about.
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
    let shown: Vec<String> = shown.into_iter().map(vs).collect();
    // Tied, but with medians far apart: not a "tie for fastest".
    let far: Vec<&Ranked> = tied.iter().copied().filter(|m| !ties::near(m)).collect();
    let far_clause = ties::far_clause(top, &far, &vs);
    let names: Vec<&Entrant> = tied
        .iter()
        .filter(|m| ties::near(m))
        .map(|m| &m.method)
        .collect();
    let unsure: Vec<&Ranked> = r
        .iter()
        .copied()
        .filter(|m| m.too_few_repetitions)
        .collect();
    let needed = if v.paired {
        stats::min_rounds(stats::verdict_alpha(r.len()))
    } else {
        6
    };
    let fewest = r.iter().map(|m| m.n).min().unwrap_or(0);
    let noun = if v.job.group.is_some() {
        "variants"
    } else {
        "methods"
    };
    let advice = no_call::advice(v, needed);
    if !unsure.is_empty() && v.paired && fewest >= 6 {
        // Enough rounds for one comparison, not for as many as this verdict
        // makes (the level is shared among them).
        let measured = no_call::others_measured(&r);
        out.push(format!(
            "{label}: {} measured {}, but {fewest} rounds are too few to call that real among {} {noun} (it takes {needed}); {advice}.",
            top.method,
            measured,
            r.len()
        ));
    } else if !unsure.is_empty() {
        // Name the methods with too few repetitions, the fastest first.
        let short: Vec<String> = std::iter::once(top)
            .chain(unsure.iter().copied())
            .filter(|m| m.n < 6)
            .enumerate()
            .map(|(i, m)| {
                if i == 0 {
                    format!(
                        "{} ran {} repetition{}",
                        m.method,
                        m.n,
                        if m.n == 1 { "" } else { "s" }
                    )
                } else {
                    format!("{} {}", m.method, m.n)
                }
            })
            .collect();
        let measured = no_call::others_measured(&r);
        // Every method named ran as many: say it once.
        let named: Vec<&Ranked> = std::iter::once(top).chain(unsure.iter().copied()).collect();
        let same = named.len() > 2
            && named.iter().all(|m| m.n == top.n && m.n < 6)
            && short.len() == named.len();
        let short = if same {
            format!(
                "each ran {} repetition{}",
                top.n,
                if top.n == 1 { "" } else { "s" }
            )
        } else {
            list(&short.iter().map(String::as_str).collect::<Vec<_>>())
        };
        out.push(format!(
            "{label}: {} measured {}, but {short}: too few to call that real; {advice}.",
            top.method, measured,
        ));
    } else if !far.is_empty() {
        let why = overlap(tied.iter().any(|m| m.n < 6));
        out.push(ties::sentence(
            &label,
            &names,
            &far_clause,
            why,
            top,
            &shown,
            rest.is_empty(),
        ));
    } else if rest.is_empty() {
        let why = overlap(r.iter().any(|m| m.n < 6));
        out.push(format!(
            "{label}: {} tie ({why}; the fastest measured {} the slowest): no measurable difference in throughput at this precision.",
            if names.len() == 2 {
                list(&names)
            } else {
                format!("all {} {noun}", names.len())
            },
            x(r.last().map_or(1.0, |m| m.fastest_ratio))
        ));
    } else if tied.len() == 1 {
        out.push(format!(
            "{label}: {} is fastest, {}.",
            top.method,
            list(&shown.iter().map(String::as_str).collect::<Vec<_>>())
        ));
    } else {
        out.push(format!(
            "{label}: {} tie for fastest ({}); {} is {}.",
            list(&names),
            overlap(tied.iter().any(|m| m.n < 6)),
            top.method,
            list(&shown.iter().map(String::as_str).collect::<Vec<_>>())
        ));
    }

    // The reference, in one sentence.
    for m in &refs {
        out.push(format!(
            "Ceiling: {} (no I/O, iopath's own overhead) reached {}/s; the verdict leaves it out.",
            m.method,
            fmt_bytes(m.bw_bytes_per_s.round() as u64)
        ));
    }

    // CPU: the cheapest, the next cheapest, and buffered (the habit).
    let mixed = mixed_sizes(&v.ranking);
    let cost = |m: &Ranked| cpu_cost(m, mixed);
    let per = if mixed {
        "CPU per MiB moved"
    } else {
        "CPU per I/O"
    };
    let mut cpu: Vec<&Ranked> = r.iter().copied().filter(|m| cost(m) > 0.0).collect();
    cpu.sort_by(|a, b| cost(a).total_cmp(&cost(b)));
    if let (Some(lo), Some(hi)) = (cpu.first(), cpu.last()) {
        if cost(hi) >= cost(lo) * CPU_WORTH_SAYING {
            let ns = |m: &Ranked| fmt_ns(cost(m).round() as u64);
            let mut named: Vec<&Ranked> = cpu.iter().skip(1).take(1).copied().collect();
            if let Some(b) = cpu
                .iter()
                .skip(2)
                .find(|m| m.method == iopath_io::Method::Buffered)
            {
                named.push(b);
            }
            let mut others: Vec<String> = named
                .iter()
                .map(|m| format!("{} {}", m.method, ns(m)))
                .collect();
            if lo.method != top.method && !named.iter().any(|m| m.method == top.method) {
                others.push(format!("{} (fastest) {}", top.method, ns(top)));
            }
            let eq = |m: &Ranked| v.equally_good.contains(&m.method);
            match cpu.get(1) {
                // The pick found no real difference between the two
                // cheapest: their medians are not a ranking.
                Some(&next) if eq(lo) && eq(next) => out.push(format!(
                    "{per}: {} {} and {} {} (medians) are not shown to differ{}.",
                    lo.method,
                    ns(lo),
                    next.method,
                    ns(next),
                    if others.len() > 1 {
                        format!("; {}", others[1..].join(", "))
                    } else {
                        String::new()
                    }
                )),
                _ => out.push(format!(
                    "{per}: {} is cheapest at {}; {}.",
                    lo.method,
                    ns(lo),
                    others.join(", ")
                )),
            }
        }
    }

    // Memory: what the frugal method costs in speed against the greedy one.
    out.extend(memory::sentence(v, &r));

    // What to do.
    out.push(if !unsure.is_empty() {
        format!("→ no call yet; on these numbers {} leads.", top.method)
    } else if tied.len() == 1 {
        format!("→ use {}.", v.pick)
    } else if !v.equally_good.is_empty() {
        let eq: Vec<&Entrant> = v.equally_good.iter().collect();
        format!(
            "→ {} are equally good here: {} in speed, and no real difference in CPU per I/O or memory{}.",
            list(&eq),
            if !far.is_empty() {
                "not shown to differ"
            } else if rest.is_empty() {
                "tied"
            } else {
                "tied for fastest"
            },
            if eq.len() < tied.len() {
                // Name the tied methods that cost more, so that the
                // sentence stands on its own beside the CPU line.
                let dearer: Vec<&Entrant> = tied
                    .iter()
                    .map(|m| &m.method)
                    .filter(|m| !eq.contains(m))
                    .collect();
                format!(
                    " ({} {} more)",
                    list(&dearer),
                    if dearer.len() == 1 { "costs" } else { "cost" }
                )
            } else {
                String::new()
            }
        )
    } else {
        let p = tied.iter().find(|m| m.method == v.pick);
        let cheapest_cpu = p.is_some_and(|p| {
            cost(p) > 0.0
                && tied
                    .iter()
                    .all(|m| cost(m) <= 0.0 || cost(m) >= cost(p))
        });
        format!(
            "→ use {}: {}, and the least {} of those (a real difference).",
            v.pick,
            if far.is_empty() {
                "tied for fastest"
            } else {
                "not shown to differ in speed"
            },
            if cheapest_cpu {
                per.to_string()
            } else {
                "memory".to_string()
            }
        )
    });
    out
}

#[cfg(test)]
mod no_call_tests;
#[cfg(test)]
pub(crate) mod tests;

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

use crate::result::{CaseResult, Job};
use crate::stats::{self, Comparison};
use crate::units::{fmt_bytes, fmt_ns};

/// CPU figures closer than this (max / min) are not worth a sentence.
const CPU_WORTH_SAYING: f64 = 1.10;
/// Nor worth a pick: a CPU-per-I/O difference decides between methods
/// tied for speed only when its interval lies beyond this margin.
const CPU_MARGIN: f64 = CPU_WORTH_SAYING - 1.0;
/// Memory figures are worth a sentence when the largest is at least this
/// many times the smallest and at least [`MEM_WORTH_SAYING_BYTES`] more.
const MEM_WORTH_SAYING: f64 = 2.0;
const MEM_WORTH_SAYING_BYTES: u64 = 1 << 20;

pub use crate::result::records::{Cost, MemoryTrade, Ranked, Verdict};

/// True for a method that does no I/O (`null`): a reference, not a
/// candidate.
pub fn is_reference(method: &str) -> bool {
    iopath_io::Method::from_name(method).is_some_and(|m| m.is_null())
}

/// Verdicts for every group with at least two measured real methods (a
/// reference method does not count), in the order the groups first appear.
pub fn all(cases: &[CaseResult]) -> Vec<Verdict> {
    let mut jobs: Vec<Job> = Vec::new();
    for c in cases {
        let j = c.job();
        if !jobs.contains(&j) {
            jobs.push(j);
        }
    }
    jobs.into_iter()
        .filter_map(|j| {
            let group: Vec<&CaseResult> = cases.iter().filter(|c| c.job() == j).collect();
            of_group(j, &group)
        })
        .collect()
}

fn of_group(job: Job, group: &[&CaseResult]) -> Option<Verdict> {
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
    if paired {
        // Paired, the ranking follows the paired estimate (each method
        // against the one with the highest median), so that the fastest is
        // never measured slower than another by its own ratios.
        let lead = ms[0].c;
        let score: Vec<f64> = ms[..real]
            .iter()
            .map(|m| {
                versus(lead, m.c, &bw, stats::EQUIVALENCE_MARGIN, alpha).map_or(0.0, |k| k.ratio)
            })
            .collect();
        let mut idx: Vec<usize> = (0..real).collect();
        idx.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
        let mut sorted: Vec<M> = Vec::with_capacity(ms.len());
        let mut taken: Vec<Option<M>> = ms.drain(..).map(Some).collect();
        for i in idx.into_iter().chain(real..taken.len()) {
            sorted.extend(taken[i].take());
        }
        ms = sorted;
    }
    let top = &ms[0];
    let cmp: Vec<Comparison> = ms
        .iter()
        .map(|m| {
            versus(m.c, top.c, &bw, stats::EQUIVALENCE_MARGIN, alpha).unwrap_or(Comparison {
                ratio: top.s.median / m.s.median,
                ratio_ci95: [0.0, f64::INFINITY],
                distinct: false,
                undersampled: false,
            })
        })
        .collect();
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
                method: m.c.name(),
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
                memory_bytes: med(m.c, &|m| m.memory.total_bytes as f64).round() as u64,
                reference,
            }
        })
        .collect();
    let fastest: Vec<String> = ranking
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
    let cheapest_cpu = min_by(&|r| r.cpu_ns_per_io);
    let least_memory = min_by(&|r| r.memory_bytes as f64);
    let called = !ranking.iter().any(|r| r.too_few_repetitions);
    let (pick, equally_good) = if called {
        choose(&ranking, &ms.iter().map(|m| m.c).collect::<Vec<_>>(), group)
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
) -> (String, Vec<String>) {
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
    let cpu = |m: &crate::result::Measurement| m.cpu.ns_per_io;
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
    let mut equal: Vec<String> = vec![ranking[best].method.clone()];
    for &j in &cand {
        if j != best && beats(best, j) != Some(true) {
            equal.push(ranking[j].method.clone());
        }
    }
    let pick = equal[0].clone();
    (pick, if equal.len() > 1 { equal } else { Vec::new() })
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

fn x(r: f64) -> String {
    format!("{}x", num(r))
}

/// A ratio's interval: "95% CI 1.19-1.24x"; with fewer than 6 repetitions
/// on either side (`few`), "1.19-1.24x over few repetitions", as a
/// bootstrap of a handful of values is not a 95% interval.
fn ci(c: [f64; 2], few: bool, level: f64) -> String {
    if few {
        format!("{}-{}x over few repetitions", num(c[0]), num(c[1]))
    } else {
        let pct = level * 100.0;
        let pct = if (pct - pct.round()).abs() < 0.05 {
            format!("{pct:.0}")
        } else {
            format!("{pct:.1}")
        };
        format!("{pct}% CI {}-{}x", num(c[0]), num(c[1]))
    }
}

/// How much slower a method is whose median is `ratio` (< 1) times
/// another's: "18%", the complement of the speed sentence's ratio (1.22x
/// is 18% slower); never a rounded "100%" or "0%".
fn pct_slower(ratio: f64) -> String {
    let p = (1.0 - ratio) * 100.0;
    if p >= 99.95 {
        "over 99.9%".to_string()
    } else if (1.0..99.5).contains(&p) {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// "a", "a and b", "a, b and c".
fn list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The job as it ran: the group's label, with the depth every real method
/// ran at when that is below the depth asked (`randread 4k Q1T1` for
/// `direct,direct` asked for Q32).
fn ran_label(v: &Verdict, real: &[&Ranked]) -> String {
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
    if m.queue_depth > 0 && m.queue_depth < v.job.queue_depth && !all_at {
        format!(" at QD{}", m.queue_depth)
    } else {
        String::new()
    }
}

/// The verdict's sentences.
pub fn words(v: &Verdict) -> Vec<String> {
    // The real methods are judged; the references only named.
    let (r, refs): (Vec<&Ranked>, Vec<&Ranked>) = v.ranking.iter().partition(|m| !m.reference);
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
    // else the slowest.
    let mut shown: Vec<&Ranked> = rest.iter().copied().take(1).collect();
    let habit = rest
        .iter()
        .find(|m| m.method == "buffered")
        .or_else(|| rest.last());
    if let Some(h) = habit {
        if !shown.iter().any(|m| m.method == h.method) {
            shown.push(h);
        }
    }
    let shown: Vec<String> = shown.into_iter().map(vs).collect();
    let names: Vec<&str> = tied.iter().map(|m| m.method.as_str()).collect();
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
    if !unsure.is_empty() && v.paired && fewest >= 6 {
        // Enough rounds for one comparison, not for as many as this verdict
        // makes (the level is shared among them).
        let measured: Vec<String> = unsure
            .iter()
            .map(|m| format!("{} {}", x(m.fastest_ratio), m.method))
            .collect();
        out.push(format!(
            "{label}: {} measured {}, but {fewest} rounds are too few to call that real among {} methods (it takes {needed}); run longer (--max-time) or --repeat {needed}.",
            top.method,
            list(&measured.iter().map(String::as_str).collect::<Vec<_>>()),
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
        let measured: Vec<String> = unsure
            .iter()
            .map(|m| format!("{} {}", x(m.fastest_ratio), m.method))
            .collect();
        out.push(format!(
            "{label}: {} measured {}, but {}: too few to call that real; run longer (--max-time) or --repeat {needed}.",
            top.method,
            list(&measured.iter().map(String::as_str).collect::<Vec<_>>()),
            list(&short.iter().map(String::as_str).collect::<Vec<_>>())
        ));
    } else if rest.is_empty() {
        let why = overlap(r.iter().any(|m| m.n < 6));
        out.push(format!(
            "{label}: {} tie ({why}; the fastest measured {} the slowest): no measurable difference in throughput at this precision.",
            if names.len() == 2 {
                list(&names)
            } else {
                format!("all {} methods", names.len())
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
    let mut cpu: Vec<&Ranked> = r
        .iter()
        .copied()
        .filter(|m| m.cpu_ns_per_io > 0.0)
        .collect();
    cpu.sort_by(|a, b| a.cpu_ns_per_io.total_cmp(&b.cpu_ns_per_io));
    if let (Some(lo), Some(hi)) = (cpu.first(), cpu.last()) {
        if hi.cpu_ns_per_io >= lo.cpu_ns_per_io * CPU_WORTH_SAYING {
            let ns = |m: &Ranked| fmt_ns(m.cpu_ns_per_io.round() as u64);
            let mut named: Vec<&Ranked> = cpu.iter().skip(1).take(1).copied().collect();
            if let Some(b) = cpu.iter().skip(2).find(|m| m.method == "buffered") {
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
                    "CPU per I/O: {} {} and {} {} (medians) are not shown to differ{}.",
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
                    "CPU per I/O: {} is cheapest at {}; {}.",
                    lo.method,
                    ns(lo),
                    others.join(", ")
                )),
            }
        }
    }

    // Memory: what the frugal method costs in speed against the greedy one.
    if let Some(t) = &v.memory_trade {
        let k = &t.speed;
        // The same rule for its interval as the speed sentence's.
        let n = |name: &str| r.iter().find(|m| m.method == name).map_or(0, |m| m.n);
        let few = n(&t.least) < 6 || n(&t.most) < 6;
        let speed = if k.undersampled {
            format!(
                "measured {} {} {} (too few repetitions to tell)",
                if k.ratio < 1.0 {
                    pct_slower(k.ratio)
                } else {
                    x(k.ratio)
                },
                if k.ratio < 1.0 {
                    "slower than"
                } else {
                    "faster than"
                },
                t.most
            )
        } else if !k.distinct {
            format!("shows no measurable difference in speed from {}", t.most)
        } else if k.ratio < 1.0 {
            format!("is {} slower than {}", pct_slower(k.ratio), t.most)
        } else {
            format!(
                "is {} faster than {} ({})",
                x(k.ratio),
                t.most,
                ci(k.ratio_ci95, few, v.ci_level)
            )
        };
        out.push(format!(
            "Memory: {} {speed} {} {} instead of {}.",
            t.least,
            if k.distinct && k.ratio < 1.0 {
                "but holds"
            } else {
                "and holds"
            },
            fmt_bytes(t.least_bytes),
            fmt_bytes(t.most_bytes)
        ));
    }

    // What to do.
    out.push(if !unsure.is_empty() {
        format!("→ no call yet; on these numbers {} leads.", top.method)
    } else if tied.len() == 1 {
        format!("→ use {}.", v.pick)
    } else if !v.equally_good.is_empty() {
        let eq: Vec<&str> = v.equally_good.iter().map(String::as_str).collect();
        format!(
            "→ {} are equally good here: {} in speed, and no real difference in CPU per I/O or memory{}.",
            list(&eq),
            if rest.is_empty() && eq.len() == r.len() { "tied" } else { "tied for fastest" },
            if eq.len() < tied.len() {
(if tied.len() - eq.len() == 1 {
                    " (the other costs more)"
                } else {
                    " (the others cost more)"
                })
                .to_string()
            } else {
                String::new()
            }
        )
    } else {
        let p = tied.iter().find(|m| m.method == v.pick);
        let cheapest_cpu = p.is_some_and(|p| {
            p.cpu_ns_per_io > 0.0
                && tied
                    .iter()
                    .all(|m| m.cpu_ns_per_io <= 0.0 || m.cpu_ns_per_io >= p.cpu_ns_per_io)
        });
        format!(
            "→ use {}: tied for fastest, and {} of those (a real difference).",
            v.pick,
            if cheapest_cpu {
                "the least CPU per I/O"
            } else {
                "the least memory"
            }
        )
    });
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
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
            pattern: pattern.into(),
            block_size: 4096,
            queue_depth: if sync { 1 } else { 32 },
            queue_depth_requested: 32,
            threads: 1,
            sync: "end".into(),
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
        assert!(
            v.text[0].starts_with("randread 4k Q32T1: uring is fastest, 2.31x buffered"),
            "{}",
            v.text[0]
        );
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
        assert!(v.text[0].contains("tie"), "{}", v.text[0]);
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
    fn around(m: f64, pct: f64) -> Vec<f64> {
        [0.0, 1.0, -1.0, 0.5, -0.5, 0.2]
            .iter()
            .map(|k| m * (1.0 + k * pct / 100.0))
            .collect()
    }

    fn text(cases: &[CaseResult]) -> String {
        all(cases)
            .iter()
            .map(|v| v.text.join("\n"))
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    const GIB: u64 = 1 << 30;

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

    /// `case`, run in rounds: repetition i in round i + 1, with its own
    /// throughput and CPU per I/O.
    fn rounds(method: &str, arm: Option<u32>, mibs: &[f64], cpu: &[f64]) -> CaseResult {
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
        assert_eq!(v[0].fastest.len(), 2, "{:?}", v[0].text);
        let names: Vec<&str> = v[0].ranking.iter().map(|r| r.method.as_str()).collect();
        assert!(
            names.contains(&"direct") && names.contains(&"direct#2"),
            "{names:?}"
        );
        // Both ran at depth 1: the job as it ran.
        assert!(
            v[0].text[0].starts_with("randread 4k Q1T1: direct"),
            "{:?}",
            v[0].text
        );
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
            assert_eq!(v[0].pick, "uring", "{:?}", v[0].text);
            assert_eq!(v[0].equally_good, vec!["uring", "aio"]);
            assert!(
                v[0].text.last().unwrap().contains("equally good"),
                "{:?}",
                v[0].text
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
        assert_eq!(v[0].fastest.len(), 2, "{:?}", v[0].text);
    }

    /// Regression (review of issue 13): every method was tested against
    /// the best of the sample at 5% each, so several identical methods were
    /// called different far more often than one job in twenty. With the
    /// level divided among the comparisons, a whole verdict errs at most 5%
    /// of the time. Noisy repetitions (10%) make wide intervals, where the
    /// margin does not hide the effect of picking the best of seven.
    #[test]
    fn seven_identical_methods_are_one_tie_nineteen_times_in_twenty() {
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
            wrong += usize::from(v[0].fastest.len() < names.len());
        }
        assert!(wrong as f64 / jobs as f64 <= 0.05, "{wrong} of {jobs}");
    }

    /// Seven methods, seven rounds, every difference plain: enough rounds
    /// for one comparison, not for six at a shared 5% (it takes 8); the
    /// verdict says so, with the numbers, instead of an empty list.
    #[test]
    fn too_few_rounds_for_seven_methods_says_how_many_it_takes() {
        let names = [
            "buffered",
            "direct",
            "mmap",
            "uring",
            "aio",
            "uring-sqpoll",
            "uring-buffered",
        ];
        // Method i runs at (i + 1) times the first, in every one of `n`
        // rounds.
        let apart = |n: usize| -> Vec<CaseResult> {
            names
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let bw: Vec<f64> = (0..n)
                        .map(|r| (100.0 + r as f64) * (1.0 + i as f64))
                        .collect();
                    rounds(m, None, &bw, &vec![1.0; n])
                })
                .collect()
        };
        let v = all(&apart(7));
        assert!(
            v[0].text[0].contains("but 7 rounds are too few to call that real among 7 methods (it takes 8); run longer (--max-time) or --repeat 8."),
            "{:?}",
            v[0].text
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
        // With 8 rounds the same differences are called.
        let v = all(&apart(8));
        assert_eq!(v[0].fastest, vec!["uring-buffered"], "{:?}", v[0].text);
        assert!(v[0].called);
        // Six comparisons share 5%: each interval is a 99.2% one, and says so.
        assert!(v[0].text[0].contains("99.2% CI"), "{:?}", v[0].text);
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

    /// `null` far ahead of three real methods, with the least CPU and
    /// memory of all.
    fn with_null() -> Vec<CaseResult> {
        vec![
            case("null", "randread", &around(5_000.0, 2.0), 60.0, 4096),
            case(
                "buffered",
                "randread",
                &around(100.0, 2.0),
                11_700.0,
                1_717_986_918,
            ),
            case("direct", "randread", &around(82.0, 2.0), 8_900.0, 98_304),
            case("uring", "randread", &around(231.0, 2.0), 3_200.0, 131_072),
        ]
    }

    #[test]
    fn null_is_a_reference_never_the_pick() {
        let v = &all(&with_null())[0];
        assert_eq!(v.pick, "uring");
        assert_eq!(v.fastest, vec!["uring"]);
        let methods: Vec<&str> = v.ranking.iter().map(|r| r.method.as_str()).collect();
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
        assert_eq!((t.least.as_str(), t.most.as_str()), ("direct", "buffered"));
        let text = v.text.join("\n");
        assert!(
            text.starts_with("randread 4k Q32T1: uring is fastest"),
            "{text}"
        );
        assert!(!text.contains("use null"), "{text}");
        assert_eq!(text.matches("null").count(), 1, "{text}");
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
    fn wording_null_is_a_ceiling_not_a_candidate() {
        insta::assert_snapshot!(text(&with_null()));
    }

    #[test]
    fn wording_memory_with_few_repetitions() {
        // 4 against 4, apart: real (1 in 35 by chance), but no 95% interval.
        let t = text(&[
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
        ]);
        let memory = t.lines().find(|l| l.starts_with("Memory")).unwrap();
        assert!(memory.contains("over few repetitions"), "{memory}");
        assert!(!t.contains("95% CI"), "{t}");
        insta::assert_snapshot!(t);
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

    #[test]
    fn percentages_slower_never_round_to_all_or_nothing() {
        assert_eq!(pct_slower(0.82), "18%");
        assert_eq!(pct_slower(1.0 / 33.3), "97%");
        assert_eq!(pct_slower(0.02), "98%");
        assert_eq!(pct_slower(0.004), "99.6%");
        assert_eq!(pct_slower(0.0001), "over 99.9%");
        assert_eq!(pct_slower(0.996), "0.4%");
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
        let cpu = v.text.iter().find(|l| l.starts_with("CPU")).unwrap();
        assert!(cpu.contains("uring (fastest) 4.0 us"), "{cpu}");
    }
}

//! Words for summary facts (see [`super`]): the one-screen answer of a
//! run. [`Answer`] reads what a verdict decided (its pick, its ranking and
//! whether it made a call) as facts; [`verdict_line`] says it in one line
//! under a pattern's table, [`summary_line`] in one line of the closing
//! summary, and [`pointer`] says what `--explain` adds.

use super::verdict::{list, x};
use crate::model::units::n_of;
use crate::result::records::{Ranked, Verdict};
use crate::result::verdict_facts::{CheaperBy, VerdictFact};
use crate::result::Entrant;
use crate::stats;

/// Why a verdict made no call.
#[derive(Debug, Clone, PartialEq)]
pub enum NoCall {
    /// Too few rounds for the comparisons it makes (paired).
    Rounds { have: usize, need: usize },
    /// Too few repetitions for a 95% interval (unpaired).
    Repetitions { have: usize },
    /// The run was interrupted while the job ran.
    Interrupted,
    /// `--case-timeout` stopped these methods early.
    CaseTimeout(Vec<String>),
}

/// What a verdict decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// No call: `leader` measured fastest; `budget_ns`: the time the job
    /// was given and spent, when it had a budget.
    Leads { why: NoCall, budget_ns: Option<u64> },
    /// The pick is fastest, alone.
    Fastest,
    /// The pick ties with `with` for speed and costs really less: CPU per
    /// I/O (`cpu`) or else memory.
    Cheaper {
        with: Vec<String>,
        by: crate::result::verdict_facts::CheaperBy,
    },
    /// These methods are equally good (the pick first): shown within the
    /// equivalence margin of each other.
    Equal(Vec<String>),
    /// These methods (the pick first) are not shown to differ, nor shown
    /// alike: too close to call (`budget_ns`: in the time the job was
    /// given, when it stopped there).
    TooClose {
        methods: Vec<String>,
        budget_ns: Option<u64>,
    },
}

/// A method the pick is measured against, and how it compares.
#[derive(Debug, Clone, PartialEq)]
pub struct Versus {
    pub method: String,
    /// The pick's median throughput over this method's.
    pub speed: f64,
    /// This method's queue depth, when it differs from the pick's.
    pub depth: Option<u32>,
    /// The pick's CPU per I/O over this method's (when both were
    /// measured, at one block size).
    pub cpu: Option<f64>,
}

/// A verdict's answer, as facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The method to use, or the leader when there is no call.
    pub pick: Entrant,
    pub decision: Decision,
    /// The next fastest method not tied with the pick.
    pub next: Option<Versus>,
    /// The method people use by habit (`buffered`) when it is not the pick
    /// nor tied with it, else the next fastest.
    pub habit: Option<Versus>,
    /// The pick's writes were a burst under the dirty limit.
    pub burst: bool,
    /// The method with the highest median, when the pick is another one
    /// tied with it and chosen for its cost ([`Decision::Cheaper`]).
    pub fastest: Option<String>,
}

impl Answer {
    /// The answer of `v`; `None` for a verdict with no real method.
    pub fn of(v: &Verdict) -> Option<Answer> {
        let real: Vec<&Ranked> = v.ranking.iter().filter(|m| !m.reference).collect();
        let pick = real.iter().find(|m| m.method == v.pick).or(real.first())?;
        let unsure = real.iter().any(|m| m.too_few_repetitions) || !v.called;
        let tied_ranked: Vec<&Ranked> = real
            .iter()
            .copied()
            .filter(|m| m.tied_with_fastest && m.method != pick.method)
            .collect();
        let tied: Vec<String> = tied_ranked.iter().map(|m| m.method.to_string()).collect();
        let equal: Vec<String> = v.equally_good.iter().map(|e| e.to_string()).collect();
        let decision = if unsure {
            Decision::Leads {
                why: no_call(v, &real),
                budget_ns: v.budget_ns,
            }
        } else if let Some(budget_ns) = too_close(v) {
            Decision::TooClose {
                methods: equal,
                budget_ns,
            }
        } else if !equal.is_empty() {
            Decision::Equal(equal)
        } else if tied.is_empty() {
            Decision::Fastest
        } else {
            let by = cheaper_by(v, pick, &tied_ranked);
            Decision::Cheaper { with: tied, by }
        };
        // Without a call, every other method is apart from the leader;
        // with one, those tied with the pick are not "next", nor those
        // whose place is not settled (never called slower).
        // A pick tied with the fastest for its cost may be slower than a
        // method the fastest beats: it is said beside one it outruns.
        let apart = |m: &&&Ranked| {
            m.method != pick.method
                && (unsure
                    || (!m.tied_with_fastest
                        && !m.unranked
                        && m.bw_bytes_per_s < pick.bw_bytes_per_s))
                && !m.reference
        };
        // A matched job's methods all kept its concurrency: no depth to
        // say beside a ratio.
        let matched = v.job.concurrency.is_some();
        let versus = |m: &Ranked| {
            let mut vs = versus(pick, m, &real);
            if matched {
                vs.depth = None;
            }
            vs
        };
        let next = real.iter().find(apart).map(|m| versus(m));
        let habit = real
            .iter()
            .filter(apart)
            .find(|m| m.method == iopath_io::Method::Buffered)
            .map(|m| versus(m))
            .or_else(|| next.clone());
        let fastest = real
            .iter()
            .max_by(|a, b| a.bw_bytes_per_s.total_cmp(&b.bw_bytes_per_s))
            .filter(|f| f.method != pick.method && matches!(decision, Decision::Cheaper { .. }))
            .map(|f| f.method.to_string());
        Some(Answer {
            pick: pick.method.clone(),
            fastest,
            decision,
            next,
            habit,
            burst: v
                .dirty_burst
                .as_ref()
                .is_some_and(|b| b.methods.contains(&pick.method)),
        })
    }
}

/// Why the verdict picked a method tied with the fastest (its fact); for a
/// result saved before facts: CPU per I/O where no tied method spends less.
fn cheaper_by(v: &Verdict, pick: &Ranked, tied: &[&Ranked]) -> CheaperBy {
    let said = v.facts.iter().find_map(|f| match f {
        VerdictFact::UseCheaper { by, .. } => Some(*by),
        _ => None,
    });
    said.unwrap_or_else(|| {
        if tied.iter().all(|m| m.cpu_ns_per_io >= pick.cpu_ns_per_io) {
            CheaperBy::CpuPerIo
        } else {
            CheaperBy::Memory
        }
    })
}

/// For a verdict whose methods are too close to call, the budget it
/// says (`Some(None)` without one); `None` otherwise.
fn too_close(v: &Verdict) -> Option<Option<u64>> {
    v.facts.iter().find_map(|f| match f {
        VerdictFact::TooCloseToCall { budget_ns, .. } => Some(*budget_ns),
        _ => None,
    })
}

fn no_call(v: &Verdict, real: &[&Ranked]) -> NoCall {
    if v.interrupted {
        NoCall::Interrupted
    } else if !v.capped.is_empty() {
        NoCall::CaseTimeout(v.capped.iter().map(|e| e.to_string()).collect())
    } else {
        let have = real.iter().map(|m| m.n).min().unwrap_or(0);
        // The rounds the verdict said it needs (its fact); a result saved
        // before facts gets the same rule.
        let said = v.facts.iter().find_map(|f| match f {
            VerdictFact::NoCallRounds { rounds, needed, .. } => Some((*rounds, *needed)),
            _ => None,
        });
        match (said, v.paired) {
            (Some((have, need)), _) => NoCall::Rounds { have, need },
            (None, true) => NoCall::Rounds {
                have,
                need: stats::verdict_rounds(),
            },
            (None, false) => NoCall::Repetitions { have },
        }
    }
}

/// How `pick` compares with `m`.
fn versus(pick: &Ranked, m: &Ranked, real: &[&Ranked]) -> Versus {
    // The ratio of the medians, as the table beside it shows them (a
    // quotient of two paired ratios is neither the table's nor a paired
    // estimate).
    let speed = pick.bw_bytes_per_s / m.bw_bytes_per_s.max(f64::MIN_POSITIVE);
    // At another depth: said, so no ratio reads as the path's alone.
    let depth = (m.queue_depth != pick.queue_depth).then_some(m.queue_depth);
    let one_size = real.iter().all(|r| r.block_size == pick.block_size);
    let cpu = (one_size && pick.cpu_ns_per_io > 0.0 && m.cpu_ns_per_io > 0.0)
        .then(|| pick.cpu_ns_per_io / m.cpu_ns_per_io);
    Versus {
        method: m.method.to_string(),
        speed,
        depth,
        cpu,
    }
}

/// Another method's depth, when it is not the pick's: ` (QD1)`.
fn depth_words(depth: Option<u32>) -> String {
    depth.map_or(String::new(), |d| format!(" (QD{d})"))
}

/// The pick's CPU per I/O beside another's: `at 40% of its CPU`, `at
/// 1.80x its CPU`; nothing when within 10% either way.
fn cpu_words(cpu: Option<f64>) -> String {
    match cpu {
        Some(c) if c < 0.9 => format!(" at {:.0}% of its CPU", (c * 100.0).max(1.0)),
        Some(c) if c > 1.1 => format!(" at {} its CPU", x(c)),
        _ => String::new(),
    }
}

fn why_no_call(n: &NoCall) -> String {
    match n {
        NoCall::Rounds { have, need } => format!("{have} of {need} rounds"),
        NoCall::Repetitions { have } => format!(
            "{}: too few",
            n_of(*have as u64, "repetition", "repetitions")
        ),
        NoCall::Interrupted => "interrupted".into(),
        NoCall::CaseTimeout(m) => format!("--case-timeout stopped {}", list(m)),
    }
}

/// A page-cache burst or a figure served from memory, in parentheses.
fn caveats(a: &Answer, pick_device: Option<f64>) -> String {
    let mut s = String::new();
    if a.burst {
        s.push_str(" (a burst the page cache absorbed)");
    }
    if let Some(f) = pick_device {
        s.push_str(&format!(
            " (device {}: {} from memory)",
            crate::model::units::fmt_device_fraction(f),
            if f < 0.5 { "mostly" } else { "partly" }
        ));
    }
    s
}

/// The verdict in one line, under its table: the pick and how far ahead
/// of the next method it is (`→ use uring: 1.19x direct, the next
/// fastest`), or why there is no call. `pick_device`: the pick's device
/// fraction when it is low enough to say so.
pub fn verdict_line(a: &Answer, pick_device: Option<f64>, job: Option<&str>) -> String {
    let next = |lead: &str| match &a.next {
        Some(n) => format!("{lead}{} {}{}", x(n.speed), n.method, depth_words(n.depth)),
        None => String::new(),
    };
    let said = match &a.decision {
        // The leader's lead is a measurement, not a finding.
        Decision::Leads { why, budget_ns } => {
            let measured = match &a.next {
                Some(_) => format!("{} measured {}, not established", a.pick, next("")),
                None => format!("{} leads on these numbers", a.pick),
            };
            match budget_ns {
                Some(b) => format!(
                    "{} ({}): {measured}",
                    super::verdict::too_close_to_call_in(*b),
                    why_no_call(why)
                ),
                None => format!("no call ({}): {measured}", why_no_call(why)),
            }
        }
        Decision::Fastest if a.next.is_some() => {
            format!("use {}{}, the next fastest", a.pick, next(": "))
        }
        Decision::Fastest => format!("use {}", a.pick),
        Decision::Cheaper { with, by } => format!(
            "use {}: not shown slower than {}, with less {}",
            a.pick,
            list(with),
            cost_words(*by)
        ),
        Decision::Equal(m) => format!(
            "{}: equally good in speed, CPU and memory{}",
            list(m),
            next("; ")
        ),
        Decision::TooClose {
            methods,
            budget_ns: Some(b),
        } => format!(
            "{}: {}, no real difference in CPU or memory{}",
            super::verdict::too_close_to_call_in(*b),
            list(methods),
            next("; ")
        ),
        Decision::TooClose { methods, .. } => format!(
            "{}: too close to call in speed, no real difference in CPU or memory{}",
            list(methods),
            next("; ")
        ),
    };
    let job = job.map(|j| format!("{j}: ")).unwrap_or_default();
    format!("→ {job}{said}{}", caveats(a, pick_device))
}

/// The pattern in words, plural, for the summary (`random reads`).
pub fn pattern_words(p: &str) -> String {
    match p {
        "read" => "sequential reads".into(),
        "write" => "sequential writes".into(),
        "randread" => "random reads".into(),
        "randwrite" => "random writes".into(),
        "randrw" => "random reads and writes".into(),
        other => other.to_string(),
    }
}

/// The verdict in one line of the closing summary: what to use for the
/// pattern (`what`: `random reads`, or with its job when the pattern has
/// several), beside the method people use by habit: `random reads: use
/// uring, 1.90x buffered at 33% of its CPU`.
pub fn summary_line(what: &str, a: &Answer, pick_device: Option<f64>) -> String {
    let habit = match &a.habit {
        Some(h) => format!(
            ", {} {}{}{}",
            x(h.speed),
            h.method,
            depth_words(h.depth),
            cpu_words(h.cpu)
        ),
        None => String::new(),
    };
    let said = match &a.decision {
        Decision::Leads { budget_ns, .. } => {
            let call =
                budget_ns.map_or("no call".to_string(), super::verdict::too_close_to_call_in);
            match &a.habit {
                Some(_) => format!(
                    "{what}: {call}; {} measured{}, not established",
                    a.pick,
                    habit.trim_start_matches(',')
                ),
                None => format!("{what}: {call}; {} leads on these numbers", a.pick),
            }
        }
        // A pick beside a faster median says why it is the pick.
        Decision::Cheaper { by, .. } if a.fastest.is_some() => format!(
            "{what}: use {} for its lower {} (not shown slower than {}, the fastest){habit}",
            a.pick,
            cost_words(*by),
            a.fastest.as_deref().unwrap_or_default()
        ),
        Decision::Fastest | Decision::Cheaper { .. } => format!("{what}: use {}{habit}", a.pick),
        Decision::Equal(m) => format!("{what}: {} (equally good){habit}", or_list(m)),
        Decision::TooClose { methods, budget_ns } => format!(
            "{what}: {} ({}){habit}",
            or_list(methods),
            budget_ns.map_or(
                "too close to call".into(),
                super::verdict::too_close_to_call_in
            )
        ),
    };
    format!("{said}{}", short_caveats(a, pick_device))
}

/// What a pick tied with the fastest spends less of.
fn cost_words(by: CheaperBy) -> &'static str {
    match by {
        CheaperBy::CpuPerIo => "CPU per I/O",
        CheaperBy::CpuPerMib => "CPU per MiB",
        CheaperBy::Memory => "memory",
    }
}

/// `a, b or c`.
fn or_list(names: &[String]) -> String {
    match names {
        [init @ .., last] if !init.is_empty() => format!("{} or {last}", init.join(", ")),
        _ => list(names),
    }
}

/// [`caveats`] in a few words, for the summary.
fn short_caveats(a: &Answer, pick_device: Option<f64>) -> String {
    let mut s = String::new();
    if a.burst {
        s.push_str(" (a page-cache burst)");
    }
    if let Some(f) = pick_device {
        s.push_str(&format!(
            " (device {})",
            crate::model::units::fmt_device_fraction(f)
        ));
    }
    s
}

/// What the default view leaves out, and how to see it: `3 warnings, 1
/// case not run; legend, notes and full verdicts: --explain`.
pub fn pointer(warnings: usize, not_run: usize) -> String {
    let mut counts = vec![n_of(warnings as u64, "warning", "warnings")];
    if not_run > 0 {
        counts.push(format!("{} not run", n_of(not_run as u64, "case", "cases")));
    }
    format!(
        "{}; legend, notes and full verdicts: --explain",
        counts.join(", ")
    )
}

/// Where the run's file was.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// A file without a name (`O_TMPFILE`) in this directory.
    TemporaryIn(String),
    /// This file or device.
    Of(String),
}

/// What a run measured on, as the one-screen view says it.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub size: u64,
    pub place: Place,
    /// The file system, or `block device`.
    pub on: String,
    pub device: Option<String>,
    pub cache: String,
}

/// `64 MiB temporary file in /var/tmp (ext4, device vda), cache: cold`.
pub fn target_line(t: &Target) -> String {
    let size = crate::model::units::fmt_bytes(t.size);
    let place = match &t.place {
        Place::TemporaryIn(d) => format!("{size} temporary file in {d}"),
        Place::Of(p) => format!("{size} of {p}"),
    };
    let device = t
        .device
        .as_ref()
        .map(|d| format!(", device {d}"))
        .unwrap_or_default();
    format!("{place} ({}{device}), cache: {}", t.on, t.cache)
}

/// A case that failed, under its table: `direct 4k Q1T1 failed: ...`.
pub fn failed_line(case: &str, error: &str) -> String {
    format!("{case} failed: {error}")
}

/// The heading of the closing summary.
pub const SUMMARY: &str = "summary:";

/// The line under the one-screen grid: its units and its marks (`picked`:
/// the mark of a pick tied with the best and cheaper, where one is).
pub fn grid_key(best: &str, apart: bool, picked: Option<&str>) -> String {
    let mut key =
        format!("MiB/s sequential, IOPS random; N = requests in flight; {best} best in its column");
    if let Some(p) = picked {
        key.push_str(&format!(
            "\n{p} the pick: not shown slower than the {best}, and cheaper (see the summary)"
        ));
    }
    if apart {
        // A line of its own: the first is already near 80 columns.
        format!("{key}\n(figure): served from memory or absorbed by the page cache, not ranked")
    } else {
        key
    }
}

/// A grid cell with no figures: never reached, failed, or not run here.
pub fn grid_gap(not_reached: bool, failed: bool) -> &'static str {
    if not_reached {
        "not reached"
    } else if failed {
        "FAILED "
    } else {
        "not run "
    }
}

/// A pattern at a matched job's concurrency, for the summary: `random
/// reads at 32 in flight`.
pub fn at_concurrency(p: &str, n: u32) -> String {
    format!("{} at {n} in flight", pattern_words(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testdata::fixture;

    fn answers() -> Vec<Answer> {
        fixture().verdicts.iter().filter_map(Answer::of).collect()
    }

    #[test]
    fn answers_read_the_verdicts_decisions() {
        let a = answers();
        // read: aio and uring tie for speed, uring costs less CPU.
        assert_eq!(a[0].pick, "uring");
        assert_eq!(
            a[0].decision,
            Decision::Cheaper {
                with: vec!["aio".into()],
                by: CheaperBy::CpuPerIo
            }
        );
        // Next: the first method not tied.
        let next = a[0].next.as_ref().unwrap();
        assert_eq!(next.method, "direct");
        let v = &fixture().verdicts[0];
        let bw = |m: &str| {
            v.ranking
                .iter()
                .find(|r| r.method == m)
                .unwrap()
                .bw_bytes_per_s
        };
        // The ratio of the medians, as the table shows them.
        assert!((next.speed - bw("uring") / bw("direct")).abs() < 1e-9);
        let habit = a[0].habit.as_ref().unwrap();
        assert_eq!(habit.method, "buffered");
        assert!(habit.cpu.unwrap() < 0.1, "{habit:?}");
        // randread, write: fastest alone.
        assert_eq!(a[1].decision, Decision::Fastest);
        assert_eq!(a[1].pick, "mmap");
        assert_eq!(a[1].next.as_ref().unwrap().method, "uring");
        assert_eq!(a[2].decision, Decision::Fastest);
        assert!(!a[2].burst);
    }

    #[test]
    fn too_few_rounds_is_no_call_with_the_rounds_it_needs() {
        let mut v = fixture().verdicts[1].clone();
        v.paired = true;
        v.ranking[1].too_few_repetitions = true;
        let a = Answer::of(&v).unwrap();
        let need = stats::verdict_rounds();
        assert_eq!(
            a.decision,
            Decision::Leads {
                why: NoCall::Rounds { have: 4, need },
                budget_ns: None
            }
        );
        // Without a call the ratios are the medians'.
        let top = &v.ranking[0];
        let next = a.next.as_ref().unwrap();
        let m = v.ranking.iter().find(|r| r.method == next.method).unwrap();
        assert!((next.speed - top.bw_bytes_per_s / m.bw_bytes_per_s).abs() < 1e-9);
        v.interrupted = true;
        let a = Answer::of(&v).unwrap();
        assert_eq!(
            a.decision,
            Decision::Leads {
                why: NoCall::Interrupted,
                budget_ns: None
            }
        );
    }

    #[test]
    fn the_summary_and_verdict_lines_in_words() {
        let mut unsure = fixture().verdicts[2].clone();
        unsure.paired = true;
        unsure.ranking[1].too_few_repetitions = true;
        let lines: Vec<String> = answers()
            .iter()
            .chain(Answer::of(&unsure).as_ref())
            .flat_map(|a| {
                [
                    verdict_line(a, None, None),
                    summary_line("random reads", a, Some(0.06)),
                ]
            })
            .chain([pointer(1, 0), pointer(3, 2)])
            .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }
}

//! Words for summary facts (see [`super`]): the one-screen answer of a
//! run. [`Answer`] reads what a verdict decided (its pick, its ranking and
//! whether it made a call) as facts; [`verdict_line`] says it in one line
//! under a pattern's table, [`summary_line`] in one line of the closing
//! summary, and [`pointer`] says what `--explain` adds.

use crate::model::units::n_of;
use crate::result::records::{Ranked, Verdict};
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
    /// No call: `leader` measured fastest.
    Leads(NoCall),
    /// The pick is fastest, alone.
    Fastest,
    /// The pick ties with `with` for speed and costs really less: CPU per
    /// I/O (`cpu`) or else memory.
    Cheaper { with: Vec<String>, cpu: bool },
    /// These methods are equally good (the pick first).
    Equal(Vec<String>),
}

/// A method the pick is measured against, and how it compares.
#[derive(Debug, Clone, PartialEq)]
pub struct Versus {
    pub method: String,
    /// The pick's throughput over this method's.
    pub speed: f64,
    /// The pick's CPU per I/O over this method's (when both were
    /// measured, at one block size).
    pub cpu: Option<f64>,
}

/// A verdict's answer, as facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The method to use, or the leader when there is no call.
    pub pick: String,
    pub decision: Decision,
    /// The next fastest method not tied with the pick.
    pub next: Option<Versus>,
    /// The method people use by habit (`buffered`) when it is not the pick
    /// nor tied with it, else the next fastest.
    pub habit: Option<Versus>,
    /// The pick's writes were a burst under the dirty limit.
    pub burst: bool,
}

impl Answer {
    /// The answer of `v`; `None` for a verdict with no real method.
    pub fn of(v: &Verdict) -> Option<Answer> {
        let real: Vec<&Ranked> = v.ranking.iter().filter(|m| !m.reference).collect();
        let pick = real.iter().find(|m| m.method == v.pick).or(real.first())?;
        let unsure = real.iter().any(|m| m.too_few_repetitions) || !v.called;
        let tied: Vec<String> = real
            .iter()
            .filter(|m| m.tied_with_fastest && m.method != pick.method)
            .map(|m| m.method.clone())
            .collect();
        let decision = if unsure {
            Decision::Leads(no_call(v, &real))
        } else if !v.equally_good.is_empty() {
            Decision::Equal(v.equally_good.clone())
        } else if tied.is_empty() {
            Decision::Fastest
        } else {
            let cpu = tied.iter().all(|t| {
                real.iter()
                    .find(|m| &m.method == t)
                    .is_some_and(|m| m.cpu_ns_per_io >= pick.cpu_ns_per_io)
            });
            Decision::Cheaper { with: tied, cpu }
        };
        // Without a call, every other method is apart from the leader;
        // with one, those tied with the pick are not "next".
        let apart = |m: &&&Ranked| {
            m.method != pick.method && (unsure || !m.tied_with_fastest) && !m.reference
        };
        let versus = |m: &Ranked| versus(pick, m, unsure, &real);
        let next = real.iter().find(apart).map(|m| versus(m));
        let habit = real
            .iter()
            .filter(apart)
            .find(|m| m.method == "buffered")
            .map(|m| versus(m))
            .or_else(|| next.clone());
        Some(Answer {
            pick: pick.method.clone(),
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

fn no_call(v: &Verdict, real: &[&Ranked]) -> NoCall {
    if v.interrupted {
        NoCall::Interrupted
    } else if !v.capped.is_empty() {
        NoCall::CaseTimeout(v.capped.clone())
    } else {
        let have = real.iter().map(|m| m.n).min().unwrap_or(0);
        if v.paired {
            let need = stats::min_rounds(stats::verdict_alpha(real.len()));
            NoCall::Rounds { have, need }
        } else {
            NoCall::Repetitions { have }
        }
    }
}

/// How `pick` compares with `m`: by the verdict's ratios once it made a
/// call, by the medians (the table's `vs best`) when it did not.
fn versus(pick: &Ranked, m: &Ranked, unsure: bool, real: &[&Ranked]) -> Versus {
    let speed = if unsure && m.bw_bytes_per_s > 0.0 {
        pick.bw_bytes_per_s / m.bw_bytes_per_s
    } else {
        m.fastest_ratio / pick.fastest_ratio.max(f64::MIN_POSITIVE)
    };
    let one_size = real.iter().all(|r| r.block_size == pick.block_size);
    let cpu = (one_size && pick.cpu_ns_per_io > 0.0 && m.cpu_ns_per_io > 0.0)
        .then(|| pick.cpu_ns_per_io / m.cpu_ns_per_io);
    Versus {
        method: m.method.clone(),
        speed,
        cpu,
    }
}

/// A ratio as the verdicts write it: `1.08x`, `12.3x`, `123x`.
fn x(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}x")
    } else if r >= 10.0 {
        format!("{r:.1}x")
    } else {
        format!("{r:.2}x")
    }
}

/// `a, b and c`.
fn list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The pick's CPU per I/O beside another's: `at 40% of its CPU per I/O`,
/// `at 1.8x its CPU per I/O`; nothing when within 10% either way.
fn cpu_words(cpu: Option<f64>) -> String {
    match cpu {
        Some(c) if c < 0.9 => format!(" at {:.0}% of its CPU per I/O", (c * 100.0).max(1.0)),
        Some(c) if c > 1.1 => format!(" at {} its CPU per I/O", x(c)),
        _ => String::new(),
    }
}

fn why_no_call(n: &NoCall) -> String {
    match n {
        NoCall::Rounds { have, need } => format!("{have} of the {need} rounds a call takes"),
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
            " (device {}: partly served from memory)",
            crate::model::units::fmt_device_fraction(f)
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
        Some(n) => format!("{lead}{} {}", x(n.speed), n.method),
        None => String::new(),
    };
    let said = match &a.decision {
        Decision::Leads(why) => format!(
            "no call yet ({}): {} leads{}",
            why_no_call(why),
            a.pick,
            next(", ")
        ),
        Decision::Fastest if a.next.is_some() => {
            format!("use {}{}, the next fastest", a.pick, next(": "))
        }
        Decision::Fastest => format!("use {}", a.pick),
        Decision::Cheaper { with, cpu } => format!(
            "use {}: as fast as {}, with less {}",
            a.pick,
            list(with),
            if *cpu { "CPU per I/O" } else { "memory" }
        ),
        Decision::Equal(m) => format!(
            "{}: equally good in speed, CPU and memory{}",
            list(m),
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
/// several), beside the method people use by habit: `for random reads use
/// uring: 1.90x buffered at 33% of its CPU per I/O`.
pub fn summary_line(what: &str, a: &Answer, pick_device: Option<f64>) -> String {
    let habit = match &a.habit {
        Some(h) => format!(": {} {}{}", x(h.speed), h.method, cpu_words(h.cpu)),
        None => String::new(),
    };
    let said = match &a.decision {
        Decision::Leads(_) => format!("for {what}, no call yet; {} leads{habit}", a.pick),
        Decision::Fastest | Decision::Cheaper { .. } => format!("for {what} use {}{habit}", a.pick),
        Decision::Equal(m) => format!("for {what} use {} (equally good){habit}", list(m)),
    };
    format!("{said}{}", caveats(a, pick_device))
}

/// What the default view leaves out, and how to see it: `3 warnings, 1
/// case not run; legend, notes and full verdicts: --explain`.
pub fn pointer(warnings: usize, not_run: usize) -> String {
    let mut counts = vec![n_of(warnings as u64, "warning", "warnings")];
    if not_run > 0 {
        counts.push(format!("{} not run", n_of(not_run as u64, "case", "cases")));
    }
    format!(
        "{}; legend, notes, warnings and full verdicts: --explain",
        counts.join(", ")
    )
}

/// The heading of the closing summary.
pub const SUMMARY: &str = "summary:";

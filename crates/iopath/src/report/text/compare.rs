//! Words for the facts of `iopath compare` (`analysis::compare`): the
//! changes and intervals, the header that says which test the intervals
//! come from, why a case is not compared, the notes, the counts, and the
//! lines on stderr that explain the exit code. `report::compare` lays
//! them out with the table.

use crate::analysis::compare::{
    CaseComparison, DataSource, DeviceId, Gate, Label, Note, Report, Side, Status, Test, ToolId,
    Unmeasured, Unsure, Which,
};
use crate::model::units::{fmt_bytes, fmt_ns};
use crate::model::CacheState;

const MIB: f64 = 1024.0 * 1024.0;

/// How several runs a side are asked for, said wherever it helps.
const SEVERAL_RUNS: &str = "A1.json A2.json -- B1.json B2.json";

/// `+12.4%`, `-3.0%`, `0.0%`.
pub fn pct(ratio: f64) -> String {
    if !ratio.is_finite() {
        return "?".into();
    }
    let v = (ratio - 1.0) * 100.0;
    if v.abs() < 0.05 {
        "0.0%".into()
    } else {
        format!("{v:+.1}%")
    }
}

/// `-15.0% to -9.8%`.
pub fn pct_interval(ci: [f64; 2]) -> String {
    format!("{} to {}", pct(ci[0]), pct(ci[1]))
}

/// A throughput in MiB/s with one decimal, `-` when there is none.
pub fn mib(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}", v / MIB))
}

/// The change of a compared case in words: `-12.4% (95% CI -15.0% to
/// -9.8%)`, with `, ×/÷1.08 drift allowed` within one run or `, between 3
/// and 3 runs`.
pub fn change_text(c: &CaseComparison) -> String {
    match (c.ratio, c.ratio_ci95) {
        (Some(r), Some(ci)) => {
            let how = match (c.test, c.drift_allowance_pct) {
                (Some(Test::WithinRun), Some(d)) if d > 0.0 => {
                    format!(", ×/÷{:.2} drift allowed", 1.0 + d / 100.0)
                }
                (Some(Test::BetweenRuns), _) => {
                    format!(", between {} and {} runs", c.a_runs, c.b_runs)
                }
                _ => String::new(),
            };
            format!("{} (95% CI {}{how})", pct(r), pct_interval(ci))
        }
        _ => "-".into(),
    }
}

/// The equivalence margin as the interval it allows: `-5.0% and +5.3%`.
fn margin_text(pct: f64) -> String {
    let lo = 1.0 - pct / 100.0;
    format!("{} and {}", self::pct(lo), self::pct(1.0 / lo))
}

/// `A: base.json (started ...)`, or with several runs their files.
pub fn side_line(letter: &str, s: &Side) -> String {
    if s.paths.len() > 1 {
        format!(
            "{letter}: {} ({} runs: {}; first started {})\n",
            s.name,
            s.paths.len(),
            s.paths.join(", "),
            s.started_at
        )
    } else {
        format!("{letter}: {} (started {})\n", s.name, s.started_at)
    }
}

/// Which test the intervals come from and how to read the table: the
/// paragraphs between the sides and the table.
pub fn preamble(r: &Report) -> String {
    let mut out = String::new();
    if r.cases.iter().any(|c| c.test == Some(Test::BetweenRuns)) {
        out.push_str(
            "With several runs a side, each run's median is one observation: MiB/s = geometric mean of the runs' medians, \
             n = runs x repetitions, and the 95% interval is Welch's t on the log medians, so run-to-run drift is in it.\n",
        );
    }
    if r.one_run_per_side() {
        if r.drift_allowance_pct > 0.0 {
            out.push_str(&format!(
                "One run per side cannot separate a change from run-to-run drift: the 95% interval of the repetitions is widened by \
                 the drift allowance of {}% (--drift: its ends divided and multiplied by 1 + that), and a change counts only beyond it. Give several runs per side \
                 ({SEVERAL_RUNS}) to measure the drift instead.\n",
                r.drift_allowance_pct
            ));
        } else {
            out.push_str(&format!(
                "One run per side cannot separate a change from run-to-run drift, and --drift 0 allows for none: \
                 a change called here may be drift. Give several runs per side ({SEVERAL_RUNS}).\n",
            ));
        }
    }
    out.push_str(&format!(
        "change = B/A - 1 with its 95% interval; faster/slower only when the whole interval is on one side of 0, \
         no change only when it lies within {} both ways, else inconclusive (docs/compare.md); \
         p99 = median p99 latency, for information\n",
        margin_text(r.no_change_margin_pct)
    ));
    out
}

/// The words of a label.
pub fn label(l: Label) -> &'static str {
    match l {
        Label::Faster => "faster",
        Label::Slower => "slower",
        Label::NoChange => "no change",
        Label::Inconclusive => "inconclusive",
    }
}

/// The table's `result` of a case: its label, or why it is not compared
/// in a few words.
pub fn result(c: &CaseComparison) -> &'static str {
    match c.status {
        Status::Compared => c.label.map_or("-", label),
        Status::OnlyInA => "only in A",
        Status::OnlyInB => "only in B",
        Status::NotMeasured => match (c.a_n, c.b_n) {
            (0, 0) => "not measured in A or B",
            (0, _) => "not measured in A",
            _ => "not measured in B",
        },
    }
}

/// Why a side has no measurement.
fn unmeasured(u: &Unmeasured) -> String {
    match u {
        Unmeasured::Skipped { why } => format!("skipped: {why}"),
        Unmeasured::Failed { error } => format!("failed: {error}"),
        Unmeasured::NoRepetitions => "no measured repetitions".into(),
        Unmeasured::NoThroughput => "no throughput (median 0 B/s)".into(),
    }
}

/// Why a case is not compared (`only in A`, `not measured in B: failed:
/// EIO`); `None` when it is.
pub fn reason(c: &CaseComparison) -> Option<String> {
    Some(match c.status {
        Status::Compared => return None,
        Status::OnlyInA => "only in A".into(),
        Status::OnlyInB => "only in B".into(),
        Status::NotMeasured => match (&c.a_not_measured, &c.b_not_measured) {
            (Some(x), Some(y)) if x == y => format!("not measured in A or B: {}", unmeasured(x)),
            (Some(x), Some(y)) => format!(
                "not measured in A: {}; not measured in B: {}",
                unmeasured(x),
                unmeasured(y)
            ),
            (Some(x), None) => format!("not measured in A: {}", unmeasured(x)),
            (None, Some(y)) => format!("not measured in B: {}", unmeasured(y)),
            (None, None) => "not comparable".into(),
        },
    })
}

/// `name job`, with the job's sync policy when the cases do not share one.
pub fn case_name(c: &CaseComparison, show_sync: bool) -> String {
    let mut job = c.job();
    if show_sync {
        job.push_str(&format!(" sync={}", c.job.sync));
    }
    format!("{} {job}", c.name)
}

fn side_name(r: &Report, side: Which) -> &str {
    match side {
        Which::A => &r.a.name,
        Which::B => &r.b.name,
    }
}

/// `none (no file)`, `16 MiB`.
fn target_size(v: &Option<u64>) -> String {
    v.map_or("none (no file)".into(), fmt_bytes)
}

fn file_system(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "unknown".into())
}

fn device(v: &Option<DeviceId>) -> String {
    match v {
        Some(DeviceId {
            name,
            model: Some(m),
        }) => format!("{name} ({m})"),
        Some(DeviceId { name, model: None }) => name.clone(),
        None => "none".into(),
    }
}

fn data(v: &DataSource) -> String {
    let sparse = if v.sparse { " (sparse file)" } else { "" };
    format!("{}{sparse}", v.data)
}

fn tool(v: &ToolId) -> String {
    format!(
        "{} {} (result schema {})",
        v.name, v.version, v.schema_version
    )
}

/// `WHAT differs: A's value, B's value`.
fn differs<T>(r: &Report, what: &str, a: &T, b: &T, show: impl Fn(&T) -> String) -> String {
    format!(
        "{what} differs: {} {}, {} {}",
        r.a.name,
        show(a),
        r.b.name,
        show(b)
    )
}

/// A note in words, without the `note: ` it is printed after.
pub fn note(r: &Report, n: &Note) -> String {
    match n {
        Note::TargetSizeDiffers { a, b } => differs(r, "target size", a, b, target_size),
        Note::FileSystemDiffers { a, b } => differs(r, "file system", a, b, file_system),
        Note::DeviceDiffers { a, b } => differs(r, "device", a, b, device),
        Note::CacheStateDiffers { a, b } => differs(r, "cache state", a, b, CacheState::to_string),
        Note::DataDiffers { a, b } => differs(r, "data", a, b, data),
        Note::TimePerRepetitionDiffers { a, b } => differs(r, "time per repetition", a, b, |v| {
            v.map_or("unlimited".into(), fmt_ns)
        }),
        Note::BytesPerRepetitionDiffers { a, b } => {
            differs(r, "bytes per repetition", a, b, |v| {
                v.map_or("not set".into(), fmt_bytes)
            })
        }
        Note::ToolVersionDiffers { a, b } => differs(r, "tool version", a, b, tool),
        Note::Interrupted { side, run } => {
            let name = side_name(r, *side);
            let which = match run {
                Some(i) => format!("{name} (run {i})"),
                None => name.to_string(),
            };
            format!("{which} was interrupted (Ctrl-C): its last case may be cut short")
        }
        Note::NothingMatched => format!(
            "no case of {} matches one of {} (same method and arm, pattern, block size, queue depth asked for, threads, sync, rwmix and the rest of the job, docs/compare.md): nothing was compared",
            r.a.name, r.b.name
        ),
        Note::OtherTraffic { side, case, device_fraction } => format!(
            "other traffic shared the disk during {}'s {} {}: the device moved {device_fraction:.1}x the bytes the case asked for, so its figures are partly that traffic's (rerun, or give several runs a side)",
            side_name(r, *side),
            r.cases[*case].name,
            r.cases[*case].job(),
        ),
        Note::TooFewRepetitions { cases, first } => {
            let c = &r.cases[*first];
            format!(
                "{cases} compared case{} had too few repetitions to call a change real ({} {}: {} in {}, {} in {}): run both with --repeat 6 or more",
                if *cases == 1 { "" } else { "s" },
                c.name,
                c.job(),
                c.a_n,
                r.a.name,
                c.b_n,
                r.b.name
            )
        }
    }
}

/// `1 case`, `3 cases`.
fn cases(n: usize) -> String {
    format!("{n} case{}", if n == 1 { "" } else { "s" })
}

/// What follows the table: the cases not compared, the notes, what
/// `inconclusive` means here, and the counts.
pub fn closing(r: &Report) -> String {
    let mut out = String::new();
    let show_sync = shows_sync(r);
    let not_compared: Vec<String> = r
        .cases
        .iter()
        .filter(|c| c.status == Status::NotMeasured)
        .map(|c| {
            let why = reason(c).unwrap_or_default();
            format!("  - {}: {why}\n", case_name(c, show_sync))
        })
        .collect();
    if !not_compared.is_empty() {
        out.push_str("\nnot compared:\n");
        out.push_str(&not_compared.concat());
    }
    if !r.notes.is_empty() {
        out.push('\n');
        for n in &r.notes {
            out.push_str(&format!("note: {}\n", note(r, n)));
        }
    }
    let count = |l: Label| r.cases.iter().filter(|c| c.label == Some(l)).count();
    let unsure = count(Label::Inconclusive);
    if unsure > 0 {
        out.push_str(&format!(
            "\ninconclusive: {} whose 95% interval holds both no change and a change beyond {}: \
             the data cannot tell; {}\n",
            cases(unsure),
            margin_text(r.no_change_margin_pct),
            if r.one_run_per_side() {
                format!("give several runs a side ({SEVERAL_RUNS})")
            } else {
                "give more runs a side, or more repetitions (--repeat)".into()
            }
        ));
    }
    let compared = r
        .cases
        .iter()
        .filter(|c| c.status == Status::Compared)
        .count();
    out.push_str(&format!(
        "\n{} faster, {} slower, {} no change, {unsure} inconclusive; {} not compared\n",
        count(Label::Faster),
        count(Label::Slower),
        count(Label::NoChange),
        r.cases.len() - compared
    ));
    out
}

/// True when the cases do not all share one sync policy: the job then
/// says each one's.
pub fn shows_sync(r: &Report) -> bool {
    r.cases.iter().any(|c| c.job.sync != r.cases[0].job.sync)
}

/// Under a table that left the p99 column out to fit `width` columns.
pub fn p99_left_out(width: usize) -> String {
    format!("p99 A → B left out to fit {width} columns: a wider terminal (or COLUMNS) or --json shows it\n")
}

/// A case the gate could not decide, on stderr.
fn unsure_line(r: &Report, u: &Unsure, limit: f64) -> String {
    let c = &r.cases[u.case];
    if u.few_repetitions {
        format!(
            "inconclusive: {} {}: median {} with {} and {} repetitions, too few to tell; rerun both with --repeat 6 or more",
            c.name,
            c.job(),
            change_text(c),
            c.a_n,
            c.b_n
        )
    } else {
        format!(
            "inconclusive: {} {}: median {}: slower than the limit, but the interval reaches back within {limit}%; give several runs a side ({SEVERAL_RUNS})",
            c.name,
            c.job(),
            change_text(c),
        )
    }
}

/// A case that broke the gate, on stderr.
fn regression_line(c: &CaseComparison, limit: f64) -> String {
    let bw = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1} MiB/s", v / MIB));
    format!(
        "regression: {} {}: {} from {} to {}, slower by more than --fail-above {limit}% at the interval's bound",
        c.name,
        c.job(),
        change_text(c),
        bw(c.a_median_bw_bytes_per_s),
        bw(c.b_median_bw_bytes_per_s),
    )
}

/// The lines on stderr that explain the exit code of `--fail-above`, one
/// per case it concerns and one that sums up; none without it.
pub fn gate_lines(r: &Report, g: &Gate) -> Vec<String> {
    let (a, b) = (&r.a.name, &r.b.name);
    match g {
        Gate::NotAsked | Gate::Passed { open: 0, .. } => Vec::new(),
        Gate::Passed { limit, open } => vec![format!(
            "iopath: no case of {b} is slower than {a} beyond {limit}% at its interval's bound, but {open} case{} inconclusive: \
             {} data cannot rule out a change of {limit}% either way (give several runs a side)",
            if *open == 1 { " is" } else { "s are" },
            if *open == 1 { "its" } else { "their" },
        )],
        Gate::Unsure { limit, cases: unsure } => {
            let mut out: Vec<String> = unsure.iter().map(|u| unsure_line(r, u, *limit)).collect();
            out.push(format!(
                "iopath: {} of {b} may be slower than {a} by more than {limit}%, but it cannot be told (exit 3)",
                cases(unsure.len())
            ));
            out
        }
        Gate::Regressed { limit, cases: bad } => {
            let mut out: Vec<String> = bad
                .iter()
                .map(|&i| regression_line(&r.cases[i], *limit))
                .collect();
            out.push(format!(
                "iopath: {} of {b} got slower than {a} by more than {limit}% (exit 1)",
                cases(bad.len())
            ));
            out
        }
    }
}

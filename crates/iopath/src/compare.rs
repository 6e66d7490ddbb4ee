//! `iopath compare A.json B.json`: match the cases of two results of
//! `iopath run --json`, and say for each whether B is faster or slower than
//! A (the baseline), by how much, and whether that is real.
//!
//! - Cases match on method, pattern, block size, requested queue depth,
//!   threads, sync policy and rwmix ([`Key`]).
//! - Throughput samples (the measured repetitions) are compared with
//!   [`stats::compare`]: the change is median(B) / median(A) - 1 with a 95%
//!   bootstrap interval; the label is `faster` or `slower` only when the
//!   difference is statistically real (`distinct`), else `no change`.
//! - `--fail-above PCT`: a case is a regression when it is labelled
//!   `slower` and its median slowdown (1 - ratio) exceeds PCT%.
//! - Differences between the two runs that make comparing them
//!   questionable (target size, file system, device, cache state, data,
//!   tool version, an interrupted run, too few repetitions) become notes.
//!
//! docs/compare.md is the user's description of all of this.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use serde::{Deserialize, Serialize};

use crate::cli::CompareArgs;
use crate::plan::UsageError;
use crate::result::{median, CaseResult, Job, RunResult, SCHEMA_VERSION};
use crate::stats;
use crate::units::{fmt_bytes, fmt_ns};

const MIB: f64 = 1024.0 * 1024.0;

/// What to do with a file that cannot be compared.
const GIVE_A_RESULT: &str = "give a file written by `iopath run --json FILE`";

/// `5`, `5%` or `2.5`: a percentage above 0 and below 100, in percent.
pub fn parse_fail_above(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim_end();
    match t.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a percentage above 0 and below 100 (e.g. 5 or 5%)"
        )),
    }
}

/// The identity of a case across two results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub method: String,
    pub job: Job,
}

impl Key {
    pub fn of(c: &CaseResult) -> Key {
        Key {
            method: c.method.clone(),
            job: c.job(),
        }
    }
}

/// Pair the cases of `a` with those of `b` by [`Key`]: A's cases in A's
/// order (with their match in B, if any), then B's unmatched cases in B's
/// order. A key that occurs more than once in a file matches in order.
pub fn match_cases<'x>(
    a: &'x [CaseResult],
    b: &'x [CaseResult],
) -> Vec<(Option<&'x CaseResult>, Option<&'x CaseResult>)> {
    let b_keys: Vec<Key> = b.iter().map(Key::of).collect();
    let mut used = vec![false; b.len()];
    let mut pairs = Vec::with_capacity(a.len().max(b.len()));
    for ca in a {
        let k = Key::of(ca);
        let m = (0..b.len()).find(|&i| !used[i] && b_keys[i] == k);
        if let Some(i) = m {
            used[i] = true;
        }
        pairs.push((Some(ca), m.map(|i| &b[i])));
    }
    for (i, cb) in b.iter().enumerate() {
        if !used[i] {
            pairs.push((None, Some(cb)));
        }
    }
    pairs
}

/// Whether B is faster, slower or not really different.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Label {
    #[serde(rename = "faster")]
    Faster,
    #[serde(rename = "slower")]
    Slower,
    #[serde(rename = "no change")]
    NoChange,
}

impl Label {
    pub fn name(self) -> &'static str {
        match self {
            Label::Faster => "faster",
            Label::Slower => "slower",
            Label::NoChange => "no change",
        }
    }
}

/// `faster` / `slower` when the difference is real (`distinct`), else
/// `no change`.
pub fn label(c: &stats::Comparison) -> Label {
    if c.distinct && c.ratio > 1.0 {
        Label::Faster
    } else if c.distinct && c.ratio < 1.0 {
        Label::Slower
    } else {
        Label::NoChange
    }
}

/// What became of a case in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured in both: compared.
    Compared,
    OnlyInA,
    OnlyInB,
    /// In both, but skipped, failed or without measured repetitions in at
    /// least one.
    NotMeasured,
}

/// One of the two results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// The path as given.
    pub path: String,
    /// The display name (`--name-a`/`--name-b`, else the file name).
    pub name: String,
    pub started_at: String,
    pub command: String,
}

/// One case of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseComparison {
    pub method: String,
    /// Pattern, block size, the depth asked for (`queue_depth_requested`
    /// in the results), threads, sync, read share.
    #[serde(flatten)]
    pub job: Job,
    pub status: Status,
    /// Null unless `compared`.
    pub label: Option<Label>,
    /// median(B) / median(A) of the throughput; null unless `compared`.
    pub ratio: Option<f64>,
    /// 95% bootstrap interval of `ratio`; null unless `compared`.
    pub ratio_ci95: Option<[f64; 2]>,
    /// Median throughput of the measured repetitions; null when the case is
    /// not measured in that result (or not in it).
    pub a_median_bw_bytes_per_s: Option<f64>,
    pub b_median_bw_bytes_per_s: Option<f64>,
    /// Measured repetitions counted (0 when not measured).
    pub a_n: usize,
    pub b_n: usize,
    /// Median over the measured repetitions of their p99 latency, for
    /// information (no label).
    pub a_p99_ns: Option<u64>,
    pub b_p99_ns: Option<u64>,
    /// Why the case is not compared; null when it is.
    pub reason: Option<String>,
    /// The samples do not overlap but are too few for that to count
    /// ([`stats::Comparison::undersampled`]); said in a note.
    #[serde(skip)]
    pub undersampled: bool,
}

impl CaseComparison {
    /// `randread 4k Q32T1` (the requested depth).
    pub fn job(&self) -> String {
        self.job.label()
    }

    /// True when the case was compared but had too few repetitions for a
    /// change to count: its samples are apart but too few, or so few that
    /// no outcome could count (below 6, `distinct` needs a complete
    /// separation that chance alone gives less than 5% of the time).
    pub fn blind(&self) -> bool {
        self.status == Status::Compared
            && (self.undersampled
                || ((self.a_n < 6 || self.b_n < 6)
                    && stats::separation_p(self.a_n, self.b_n) >= 0.05))
    }

    /// True when the `--fail-above PCT` rule cannot be decided: the median
    /// slowdown exceeds PCT% but there are too few repetitions to tell.
    pub fn inconclusive(&self, pct: f64) -> bool {
        self.blind() && self.ratio.is_some_and(|r| 1.0 - r > pct / 100.0)
    }

    /// True when the case breaks the `--fail-above PCT` rule: labelled
    /// slower, and its median slowdown exceeds PCT%.
    pub fn regressed(&self, pct: f64) -> bool {
        self.label == Some(Label::Slower) && self.ratio.is_some_and(|r| 1.0 - r > pct / 100.0)
    }
}

/// The whole comparison, as printed by `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub a: Side,
    pub b: Side,
    /// `--fail-above`, in percent; null when not given.
    pub fail_above_pct: Option<f64>,
    pub cases: Vec<CaseComparison>,
    /// What differs between the two runs that makes comparing them
    /// questionable.
    pub notes: Vec<String>,
    /// Cases that break the `--fail-above` rule; without it, cases labelled
    /// slower.
    pub regressions: usize,
}

/// A case's measured throughput and p99 samples, or why there are none.
struct Measured {
    bw: Vec<f64>,
    p99: Vec<f64>,
}

fn measured(c: &CaseResult) -> Result<Measured, String> {
    if let Some(why) = &c.skipped {
        return Err(format!("skipped: {why}"));
    }
    if let Some(err) = &c.error {
        return Err(format!("failed: {err}"));
    }
    let bw = c.samples(|m| m.bw_bytes_per_s);
    if bw.is_empty() {
        return Err("no measured repetitions".into());
    }
    if median(&mut bw.clone()) <= 0.0 {
        return Err("no throughput (median 0 B/s)".into());
    }
    let p99 = c.samples(|m| m.lat_ns.p99 as f64);
    Ok(Measured { bw, p99 })
}

fn compare_case(a: Option<&CaseResult>, b: Option<&CaseResult>) -> CaseComparison {
    let c = a.or(b).expect("a pair has at least one case");
    let ma = a.map(measured);
    let mb = b.map(measured);
    let med_bw = |m: &Option<Result<Measured, String>>| match m {
        Some(Ok(m)) => Some(median(&mut m.bw.clone())),
        _ => None,
    };
    let med_p99 = |m: &Option<Result<Measured, String>>| match m {
        Some(Ok(m)) => Some(median(&mut m.p99.clone()).round() as u64),
        _ => None,
    };
    let n = |m: &Option<Result<Measured, String>>| match m {
        Some(Ok(m)) => m.bw.len(),
        _ => 0,
    };
    let mut out = CaseComparison {
        method: c.method.clone(),
        job: c.job(),
        status: Status::NotMeasured,
        label: None,
        ratio: None,
        ratio_ci95: None,
        a_median_bw_bytes_per_s: med_bw(&ma),
        b_median_bw_bytes_per_s: med_bw(&mb),
        a_n: n(&ma),
        b_n: n(&mb),
        a_p99_ns: med_p99(&ma),
        b_p99_ns: med_p99(&mb),
        reason: None,
        undersampled: false,
    };
    match (&ma, &mb) {
        (Some(_), None) => {
            out.status = Status::OnlyInA;
            out.reason = Some("only in A".into());
        }
        (None, Some(_)) => {
            out.status = Status::OnlyInB;
            out.reason = Some("only in B".into());
        }
        (Some(Ok(x)), Some(Ok(y))) => match stats::compare(&x.bw, &y.bw) {
            Some(cmp) => {
                out.status = Status::Compared;
                out.label = Some(label(&cmp));
                out.ratio = Some(cmp.ratio);
                out.ratio_ci95 = Some(cmp.ratio_ci95);
                out.undersampled = cmp.undersampled;
            }
            // Not reached: both samples are non-empty with a positive median.
            None => out.reason = Some("not comparable".into()),
        },
        (Some(ra), Some(rb)) => {
            out.reason = Some(match (ra, rb) {
                (Err(x), Err(y)) if x == y => format!("not measured in A or B: {x}"),
                (Err(x), Err(y)) => format!("not measured in A: {x}; not measured in B: {y}"),
                (Err(x), Ok(_)) => format!("not measured in A: {x}"),
                (Ok(_), Err(y)) => format!("not measured in B: {y}"),
                (Ok(_), Ok(_)) => unreachable!("handled above"),
            });
        }
        (None, None) => unreachable!("a pair has at least one case"),
    }
    out
}

/// Compare result `b` with the baseline `a`.
pub fn compare(
    a: &RunResult,
    b: &RunResult,
    side_a: Side,
    side_b: Side,
    fail_above_pct: Option<f64>,
) -> Report {
    let cases: Vec<CaseComparison> = match_cases(&a.cases, &b.cases)
        .into_iter()
        .map(|(x, y)| compare_case(x, y))
        .collect();
    let regressions = cases
        .iter()
        .filter(|c| c.regressed(fail_above_pct.unwrap_or(0.0)))
        .count();
    let notes = notes(a, b, &side_a.name, &side_b.name, &cases);
    Report {
        a: side_a,
        b: side_b,
        fail_above_pct,
        cases,
        notes,
        regressions,
    }
}

/// What differs between the two runs that makes comparing them
/// questionable, one sentence each.
fn notes(
    a: &RunResult,
    b: &RunResult,
    na: &str,
    nb: &str,
    cases: &[CaseComparison],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, f: &dyn Fn(&RunResult) -> String| {
        let (va, vb) = (f(a), f(b));
        if va != vb {
            out.push(format!("{what} differs: {na} {va}, {nb} {vb}"));
        }
    };
    differ("target size", &|r| {
        r.target
            .as_ref()
            .map_or("none (no file)".into(), |t| fmt_bytes(t.size_bytes))
    });
    differ("file system", &|r| {
        r.system.fs_type.clone().unwrap_or_else(|| "unknown".into())
    });
    differ("device", &|r| match &r.system.device {
        Some(d) => match &d.model {
            Some(m) => format!("{} ({m})", d.name),
            None => d.name.clone(),
        },
        None => "none".into(),
    });
    differ("cache state", &|r| r.config.cache.clone());
    differ("data", &|r| {
        let sparse = r.target.as_ref().is_some_and(|t| t.sparse);
        format!(
            "{}{}",
            r.config.data,
            if sparse { " (sparse file)" } else { "" }
        )
    });
    differ("time per repetition", &|r| {
        r.config.time_limit_ns.map_or("unlimited".into(), fmt_ns)
    });
    differ("bytes per repetition", &|r| {
        r.config.io_size_bytes.map_or("not set".into(), fmt_bytes)
    });
    differ("tool version", &|r| {
        format!(
            "{} {} (result schema {})",
            r.tool.name, r.tool.version, r.schema_version
        )
    });
    for (r, name) in [(a, na), (b, nb)] {
        if r.interrupted {
            out.push(format!(
                "{name} was interrupted (Ctrl-C): its last case may be cut short"
            ));
        }
    }
    if !cases.is_empty()
        && cases
            .iter()
            .all(|c| matches!(c.status, Status::OnlyInA | Status::OnlyInB))
    {
        out.push(format!(
            "no case of {na} matches one of {nb} (same method, pattern, block size, queue depth, threads, sync and rwmix): nothing was compared"
        ));
    }
    // Below 6 repetitions `distinct` needs a complete separation that
    // chance alone would give less than 5% of the time: a case whose
    // samples are apart but too few (`undersampled`), or so few that no
    // outcome could count, reads "no change" for lack of repetitions.
    let blind: Vec<&CaseComparison> = cases.iter().filter(|c| c.blind()).collect();
    if let Some(first) = blind.first() {
        out.push(format!(
            "{} compared case{} had too few repetitions to call a change real ({} {}: {} in {na}, {} in {nb}): run both with --repeat 6 or more",
            blind.len(),
            if blind.len() == 1 { "" } else { "s" },
            first.method,
            first.job(),
            first.a_n,
            first.b_n
        ));
    }
    out
}

/// Read and check one result file; every failure is a [`UsageError`] that
/// names the file and says what to do.
pub fn load(path: &Path) -> Result<RunResult, UsageError> {
    let bytes = std::fs::read(path).map_err(|e| {
        UsageError(format!(
            "cannot read {}: {e}; {GIVE_A_RESULT}",
            path.display()
        ))
    })?;
    parse(&bytes, &path.display().to_string())
}

/// [`load`] on bytes already read; `shown` names the file in messages.
pub fn parse(bytes: &[u8], shown: &str) -> Result<RunResult, UsageError> {
    let v: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| UsageError(format!("{shown} is not JSON ({e}); {GIVE_A_RESULT}")))?;
    let tool = v.pointer("/tool/name").and_then(|n| n.as_str());
    let version = v.get("schema_version").and_then(|x| x.as_u64());
    let (Some("iopath"), Some(version)) = (tool, version) else {
        return Err(UsageError(format!(
            "{shown} is not an iopath result (no \"tool\": {{\"name\": \"iopath\"}} and \"schema_version\"); {GIVE_A_RESULT}"
        )));
    };
    if version > u64::from(SCHEMA_VERSION) {
        return Err(UsageError(format!(
            "{shown} has result schema version {version}, newer than this iopath reads ({SCHEMA_VERSION}): read it with the iopath version that wrote it ({}) or a newer one",
            v.pointer("/tool/version").and_then(|x| x.as_str()).unwrap_or("unknown")
        )));
    }
    serde_json::from_value(v).map_err(|e| {
        UsageError(format!(
            "{shown} is not a complete iopath result of schema version {version} ({e}); {GIVE_A_RESULT}"
        ))
    })
}

/// `+12.4%`, `-3.0%`, `0.0%`.
fn pct(ratio: f64) -> String {
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
fn pct_interval(ci: [f64; 2]) -> String {
    format!("{} to {}", pct(ci[0]), pct(ci[1]))
}

/// The change of a compared case in words: `-12.4% (95% CI -15.0% to -9.8%)`.
pub fn change_text(c: &CaseComparison) -> String {
    match (c.ratio, c.ratio_ci95) {
        (Some(r), Some(ci)) => format!("{} (95% CI {})", pct(r), pct_interval(ci)),
        _ => "-".into(),
    }
}

/// The comparison as text: a header, the table, the cases not compared,
/// the notes and a count.
pub fn render(r: &Report) -> String {
    let mut out = format!(
        "A: {} (started {})\nB: {} (started {})\n\
         MiB/s = median throughput of n measured repetitions; change = B/A - 1 with its 95% interval; \
         faster/slower only when the difference is statistically real (docs/compare.md); \
         p99 = median p99 latency, for information\n\n",
        r.a.name, r.a.started_at, r.b.name, r.b.started_at
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec![
            "method",
            "job",
            "A MiB/s",
            "n",
            "B MiB/s",
            "n",
            "change",
            "95% CI",
            "result",
            "p99 A → B",
        ]);
    let show_sync = r.cases.iter().any(|c| c.job.sync != r.cases[0].job.sync);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    let mib = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1}", v / MIB));
    let n = |present: bool, n: usize| {
        if present {
            n.to_string()
        } else {
            "-".into()
        }
    };
    let lat = |v: Option<u64>| v.map_or("-".into(), fmt_ns);
    let mut not_compared = Vec::new();
    for c in &r.cases {
        let mut job = c.job();
        if show_sync {
            job.push_str(&format!(" sync={}", c.job.sync));
        }
        let result = match c.status {
            Status::Compared => c.label.map_or("-", Label::name).to_string(),
            Status::OnlyInA => "only in A".into(),
            Status::OnlyInB => "only in B".into(),
            Status::NotMeasured => {
                not_compared.push(format!(
                    "{} {job}: {}",
                    c.method,
                    c.reason.as_deref().unwrap_or("")
                ));
                match (c.a_n, c.b_n) {
                    (0, 0) => "not measured in A or B",
                    (0, _) => "not measured in A",
                    _ => "not measured in B",
                }
                .into()
            }
        };
        t.add_row(vec![
            Cell::new(&c.method),
            Cell::new(job),
            right(mib(c.a_median_bw_bytes_per_s)),
            right(n(c.status != Status::OnlyInB, c.a_n)),
            right(mib(c.b_median_bw_bytes_per_s)),
            right(n(c.status != Status::OnlyInA, c.b_n)),
            right(c.ratio.map_or("-".into(), pct)),
            // One repetition on a side: the bootstrap has nothing to resample.
            right(match c.ratio_ci95 {
                Some(ci) if c.a_n >= 2 && c.b_n >= 2 => pct_interval(ci),
                _ => "-".into(),
            }),
            Cell::new(result),
            right(format!("{} → {}", lat(c.a_p99_ns), lat(c.b_p99_ns))),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    if !not_compared.is_empty() {
        out.push_str("\nnot compared:\n");
        for s in not_compared {
            out.push_str(&format!("  - {s}\n"));
        }
    }
    if !r.notes.is_empty() {
        out.push('\n');
        for note in &r.notes {
            out.push_str(&format!("note: {note}\n"));
        }
    }
    let count = |l: Label| r.cases.iter().filter(|c| c.label == Some(l)).count();
    let compared = r
        .cases
        .iter()
        .filter(|c| c.status == Status::Compared)
        .count();
    out.push_str(&format!(
        "\n{} faster, {} slower, {} no change; {} not compared\n",
        count(Label::Faster),
        count(Label::Slower),
        count(Label::NoChange),
        r.cases.len() - compared
    ));
    out
}

/// The display name of a file: its file name, or the path as given when
/// the two file names are the same.
fn default_names(a: &Path, b: &Path) -> (String, String) {
    let file = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        )
    };
    let (fa, fb) = (file(a), file(b));
    if fa == fb {
        (a.display().to_string(), b.display().to_string())
    } else {
        (fa, fb)
    }
}

/// Write `s` on stdout; a reader that went away (`| head`) is not an error.
fn print_stdout(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `iopath compare`: 0, or 1 when `--fail-above` finds a regression, or 3
/// when it finds a slowdown beyond the limit that too few repetitions
/// cannot confirm; bad input is a [`UsageError`] (exit 2).
pub fn run(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let a = load(&args.a)?;
    let b = load(&args.b)?;
    let (name_a, name_b) = default_names(&args.a, &args.b);
    let side = |path: &Path, name: Option<&String>, default: String, r: &RunResult| Side {
        path: path.display().to_string(),
        name: name.cloned().unwrap_or(default),
        started_at: r.started_at.clone(),
        command: r.command.clone(),
    };
    let report = compare(
        &a,
        &b,
        side(&args.a, args.name_a.as_ref(), name_a, &a),
        side(&args.b, args.name_b.as_ref(), name_b, &b),
        args.fail_above,
    );
    if args.json {
        let mut s = serde_json::to_string_pretty(&report)?;
        s.push('\n');
        print_stdout(&s)?;
    } else {
        print_stdout(&render(&report))?;
    }
    let Some(limit) = args.fail_above else {
        return Ok(ExitCode::SUCCESS);
    };
    let bad: Vec<&CaseComparison> = report.cases.iter().filter(|c| c.regressed(limit)).collect();
    if bad.is_empty() {
        // A gate must not pass for lack of data: a slowdown beyond the
        // limit that too few repetitions cannot confirm is exit 3.
        let unsure: Vec<&CaseComparison> = report
            .cases
            .iter()
            .filter(|c| c.inconclusive(limit))
            .collect();
        if unsure.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
        for c in &unsure {
            eprintln!(
                "inconclusive: {} {}: median {} with {} and {} repetitions, too few to tell; rerun both with --repeat 6 or more",
                c.method,
                c.job(),
                change_text(c),
                c.a_n,
                c.b_n
            );
        }
        eprintln!(
            "iopath: {} case{} of {} may be slower than {} by more than {limit}%, but there are too few repetitions to tell (exit 3)",
            unsure.len(),
            if unsure.len() == 1 { "" } else { "s" },
            report.b.name,
            report.a.name
        );
        return Ok(ExitCode::from(3));
    }
    for c in &bad {
        eprintln!(
            "regression: {} {}: {} from {} to {}, slower by more than --fail-above {limit}%",
            c.method,
            c.job(),
            change_text(c),
            c.a_median_bw_bytes_per_s
                .map_or("-".into(), |v| format!("{:.1} MiB/s", v / MIB)),
            c.b_median_bw_bytes_per_s
                .map_or("-".into(), |v| format!("{:.1} MiB/s", v / MIB)),
        );
    }
    eprintln!(
        "iopath: {} case{} of {} got slower than {} by more than {limit}% (exit 1)",
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        report.b.name,
        report.a.name
    );
    Ok(ExitCode::from(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Latency, Measurement, RunConfig, Tool};

    const MB: f64 = 1024.0 * 1024.0;

    /// A measured case with these throughputs (MiB/s) and p99 100 us.
    fn case(method: &str, pattern: &str, rwmix: Option<u8>, mibs: &[f64]) -> CaseResult {
        CaseResult {
            method: method.into(),
            pattern: pattern.into(),
            block_size: 4096,
            queue_depth: 32,
            queue_depth_requested: 32,
            threads: 1,
            sync: "end".into(),
            rwmix_read_pct: rwmix,
            repetitions: mibs
                .iter()
                .map(|&m| Measurement {
                    bw_bytes_per_s: m * MB,
                    lat_ns: Latency {
                        p99: 100_000,
                        ..Latency::default()
                    },
                    ..Measurement::default()
                })
                .collect(),
            ..CaseResult::default()
        }
    }

    fn run(cases: Vec<CaseResult>) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "iopath".into(),
                version: "0.1.0".into(),
            },
            started_at: "2026-01-01T00:00:00Z".into(),
            finished_at: None,
            command: "iopath run".into(),
            interrupted: false,
            system: crate::sysinfo::System::default(),
            target: None,
            config: RunConfig {
                preset: None,
                whole_pass: false,
                cache_limit: None,
                time_limit_ns: Some(150_000_000),
                io_size_bytes: None,
                repeat: Some(8),
                ci_target: None,
                max_time_ns: None,
                warmup: 0,
                schedule: None,
                interval_ns: 100_000_000,
                seed: 1,
                cache: "cold".into(),
                data: "random".into(),
            },
            probe: Vec::new(),
            cases,
            warnings: Vec::new(),
            verdicts: Vec::new(),
        }
    }

    fn side(name: &str) -> Side {
        Side {
            path: name.into(),
            name: name.into(),
            started_at: String::new(),
            command: String::new(),
        }
    }

    fn report(a: Vec<CaseResult>, b: Vec<CaseResult>, fail: Option<f64>) -> Report {
        compare(&run(a), &run(b), side("A"), side("B"), fail)
    }

    const BASE: [f64; 8] = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.4];

    fn times(f: f64) -> Vec<f64> {
        BASE.iter().map(|x| x * f).collect()
    }

    #[test]
    fn cases_match_on_every_part_of_the_key_including_rwmix() {
        let a = vec![
            case("uring", "randrw", Some(50), &BASE),
            case("uring", "randrw", Some(70), &BASE),
            case("uring", "randread", None, &BASE),
        ];
        let mut other_bs = case("uring", "randread", None, &BASE);
        other_bs.block_size = 8192;
        let b = vec![
            case("uring", "randrw", Some(70), &BASE),
            other_bs,
            case("direct", "randrw", Some(50), &BASE),
        ];
        let pairs = match_cases(&a, &b);
        let keys: Vec<(Option<Key>, Option<Key>)> = pairs
            .iter()
            .map(|(x, y)| (x.map(Key::of), y.map(Key::of)))
            .collect();
        assert_eq!(keys.len(), 5, "{keys:?}");
        // A's order first: rwmix 50 has no match (B's is another method),
        // rwmix 70 matches rwmix 70, randread 4k finds no 4k in B.
        assert!(keys[0].1.is_none());
        assert_eq!(keys[1].0, keys[1].1);
        assert_eq!(keys[1].1.as_ref().unwrap().job.rwmix_read_pct, Some(70));
        assert!(keys[2].1.is_none());
        // Then B's unmatched cases, in B's order.
        assert!(keys[3].0.is_none() && keys[3].1.as_ref().unwrap().job.block_size == 8192);
        assert!(keys[4].0.is_none() && keys[4].1.as_ref().unwrap().method == "direct");

        let r = report(a, b, None);
        let st: Vec<Status> = r.cases.iter().map(|c| c.status).collect();
        use Status::*;
        assert_eq!(st, [OnlyInA, Compared, OnlyInA, OnlyInB, OnlyInB]);
        assert_eq!(r.cases[1].job.rwmix_read_pct, Some(70));
        assert_eq!(r.cases[0].reason.as_deref(), Some("only in A"));
        assert_eq!(r.cases[3].reason.as_deref(), Some("only in B"));
    }

    #[test]
    fn matching_uses_the_requested_depth_and_sync() {
        // A synchronous method asked for 32 ran at 1: still the same case.
        let mut a = case("buffered", "randread", None, &BASE);
        a.queue_depth = 1;
        let mut b_depth = case("buffered", "randread", None, &BASE);
        b_depth.queue_depth_requested = 8;
        b_depth.queue_depth = 1;
        let mut b_sync = case("buffered", "randread", None, &BASE);
        b_sync.sync = "dsync".into();
        let b_same = case("buffered", "randread", None, &BASE);
        let b = [b_depth.clone(), b_sync.clone(), b_same.clone()];
        let pairs = match_cases(std::slice::from_ref(&a), &b);
        assert_eq!(pairs.len(), 3);
        assert_eq!(pairs[0].1, Some(&b_same));
        assert_eq!(pairs[1].1, Some(&b_depth));
        assert_eq!(pairs[2].1, Some(&b_sync));
    }

    #[test]
    fn a_key_twice_in_a_file_matches_in_order() {
        let a = [
            case("null", "read", None, &[1.0]),
            case("null", "read", None, &[2.0]),
        ];
        let b = [
            case("null", "read", None, &[3.0]),
            case("null", "read", None, &[4.0]),
        ];
        let pairs = match_cases(&a, &b);
        assert_eq!(pairs.len(), 2);
        assert!(std::ptr::eq(pairs[0].1.unwrap(), &b[0]));
        assert!(std::ptr::eq(pairs[1].1.unwrap(), &b[1]));
    }

    fn one(a: &[f64], b: &[f64]) -> CaseComparison {
        let r = report(
            vec![case("uring", "randread", None, a)],
            vec![case("uring", "randread", None, b)],
            None,
        );
        assert_eq!(r.cases.len(), 1);
        r.cases[0].clone()
    }

    #[test]
    fn labels_follow_the_distinct_test() {
        let faster = one(&BASE, &times(1.2));
        assert_eq!(faster.status, Status::Compared);
        assert_eq!(faster.label, Some(Label::Faster));
        assert!((faster.ratio.unwrap() - 1.2).abs() < 1e-9);
        let ci = faster.ratio_ci95.unwrap();
        assert!(
            ci[0] > 1.15 && ci[0] <= 1.2 && ci[1] >= 1.2 && ci[1] < 1.25,
            "{ci:?}"
        );

        let slower = one(&BASE, &times(0.8));
        assert_eq!(slower.label, Some(Label::Slower));
        assert!((slower.ratio.unwrap() - 0.8).abs() < 1e-9);

        // 5% apart in the medians but overlapping: no change.
        let wide_a = [80.0, 90.0, 100.0, 110.0, 120.0, 95.0, 105.0, 100.0];
        let wide_b: Vec<f64> = wide_a.iter().map(|x| x * 0.95).collect();
        let tie = one(&wide_a, &wide_b);
        assert_eq!(tie.label, Some(Label::NoChange));
        assert!(tie.ratio.unwrap() < 0.96);
        let wide_c: Vec<f64> = wide_a.iter().map(|x| x * 1.05).collect();
        let tie = one(&wide_a, &wide_c);
        assert_eq!(tie.label, Some(Label::NoChange));
        assert!(tie.ratio.unwrap() > 1.04);

        // One repetition each: never real, however far apart.
        let few = one(&[100.0], &[50.0]);
        assert_eq!(few.label, Some(Label::NoChange));
        assert_eq!((few.a_n, few.b_n), (1, 1));
    }

    #[test]
    fn label_of_a_comparison() {
        let c = |ratio, distinct| stats::Comparison {
            ratio,
            ratio_ci95: [ratio, ratio],
            distinct,
            undersampled: false,
        };
        assert_eq!(label(&c(1.5, true)), Label::Faster);
        assert_eq!(label(&c(0.5, true)), Label::Slower);
        assert_eq!(label(&c(0.5, false)), Label::NoChange);
        assert_eq!(label(&c(1.5, false)), Label::NoChange);
        assert_eq!(label(&c(1.0, true)), Label::NoChange);
    }

    #[test]
    fn medians_counts_and_p99_are_reported() {
        let mut b = case("uring", "randread", None, &times(0.5));
        for m in &mut b.repetitions {
            m.lat_ns.p99 = 250_000;
        }
        // A warm-up is recorded, not counted.
        b.repetitions.push(Measurement {
            bw_bytes_per_s: 1.0,
            warmup: true,
            ..Measurement::default()
        });
        let r = report(vec![case("uring", "randread", None, &BASE)], vec![b], None);
        let c = &r.cases[0];
        assert_eq!((c.a_n, c.b_n), (8, 8));
        assert_eq!(c.a_p99_ns, Some(100_000));
        assert_eq!(c.b_p99_ns, Some(250_000));
        assert!((c.a_median_bw_bytes_per_s.unwrap() - 100.1 * MB).abs() < 1.0);
        assert!((c.b_median_bw_bytes_per_s.unwrap() - 50.05 * MB).abs() < 1.0);
    }

    #[test]
    fn skipped_failed_and_empty_cases_are_not_measured_with_the_reason() {
        let mut skipped = case("uring-iopoll", "randread", None, &[]);
        skipped.skipped = Some("no poll queues".into());
        let mut failed = case("aio", "randread", None, &BASE);
        failed.error = Some("EIO".into());
        let empty = case("mmap", "randread", None, &[]);
        let mut zero = case("null", "randread", None, &[0.0, 0.0]);
        zero.repetitions[0].lat_ns.p99 = 5;
        let a = vec![
            skipped.clone(),
            case("aio", "randread", None, &BASE),
            empty.clone(),
            zero,
        ];
        let b = vec![
            skipped,
            failed,
            case("mmap", "randread", None, &BASE),
            case("null", "randread", None, &BASE),
        ];
        let r = report(a, b, Some(1.0));
        assert!(r.cases.iter().all(|c| c.status == Status::NotMeasured));
        assert!(r
            .cases
            .iter()
            .all(|c| c.label.is_none() && c.ratio.is_none()));
        let why: Vec<&str> = r
            .cases
            .iter()
            .map(|c| c.reason.as_deref().unwrap())
            .collect();
        assert_eq!(why[0], "not measured in A or B: skipped: no poll queues");
        assert_eq!(why[1], "not measured in B: failed: EIO");
        assert_eq!(why[2], "not measured in A: no measured repetitions");
        assert_eq!(why[3], "not measured in A: no throughput (median 0 B/s)");
        // The measured side still shows its figures.
        assert_eq!(r.cases[1].a_n, 8);
        assert!(r.cases[1].a_median_bw_bytes_per_s.is_some());
        assert_eq!(r.cases[1].b_n, 0);
        assert!(r.cases[1].b_median_bw_bytes_per_s.is_none());
        assert_eq!(r.regressions, 0);
        let text = render(&r);
        assert!(text.contains("not measured in B"), "{text}");
        assert!(text.contains("failed: EIO"), "{text}");
    }

    #[test]
    fn the_fail_rule_needs_a_real_slowdown_above_the_limit() {
        let slower = one(&BASE, &times(0.8));
        assert!(slower.regressed(10.0));
        assert!(slower.regressed(19.0));
        assert!(!slower.regressed(21.0));
        assert!(!slower.regressed(30.0));
        assert!(!one(&BASE, &times(1.5)).regressed(10.0), "faster");
        // A 50% drop that is not statistically real is not a regression.
        let noisy = one(&[100.0], &[50.0]);
        assert!(noisy.ratio.unwrap() < 0.6);
        assert!(!noisy.regressed(10.0));
        // ... but with too few repetitions to tell it is inconclusive, not
        // a pass: 3 against 3, every B below every A, 40% down.
        let few = one(&[100.0, 101.0, 99.0], &[60.0, 61.0, 59.0]);
        assert!(!few.regressed(10.0));
        assert!(few.inconclusive(10.0));
        assert!(!few.inconclusive(50.0), "within the limit");
        assert!(!slower.inconclusive(10.0), "enough repetitions: decided");
        // The count: with the limit, cases over it; without, every slower one.
        let a = vec![
            case("uring", "randread", None, &BASE),
            case("aio", "randread", None, &BASE),
            case("mmap", "randread", None, &BASE),
        ];
        let b = vec![
            case("uring", "randread", None, &times(0.8)),
            case("aio", "randread", None, &times(0.95)),
            case("mmap", "randread", None, &times(1.3)),
        ];
        assert_eq!(report(a.clone(), b.clone(), Some(10.0)).regressions, 1);
        assert_eq!(report(a.clone(), b.clone(), Some(3.0)).regressions, 2);
        assert_eq!(report(a.clone(), b.clone(), Some(30.0)).regressions, 0);
        assert_eq!(report(a, b, None).regressions, 2);
    }

    #[test]
    fn fail_above_accepts_percentages_strictly_between_0_and_100() {
        assert_eq!(parse_fail_above("5"), Ok(5.0));
        assert_eq!(parse_fail_above("5%"), Ok(5.0));
        assert_eq!(parse_fail_above(" 2.5 % "), Ok(2.5));
        for bad in [
            "0", "0%", "100", "100%", "-5", "abc", "", "%", "nan", "inf", "5%%",
        ] {
            assert!(parse_fail_above(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn percentages_and_intervals_read_as_changes() {
        assert_eq!(pct(0.876), "-12.4%");
        assert_eq!(pct(1.5), "+50.0%");
        assert_eq!(pct(1.0004), "0.0%");
        assert_eq!(pct(f64::NAN), "?");
        let c = CaseComparison {
            ratio: Some(0.876),
            ratio_ci95: Some([0.85, 0.902]),
            ..one(&BASE, &BASE)
        };
        assert_eq!(change_text(&c), "-12.4% (95% CI -15.0% to -9.8%)");
    }

    #[test]
    fn differences_between_the_runs_become_notes() {
        let a = run(vec![case("null", "read", None, &BASE)]);
        let same = report(
            vec![case("null", "read", None, &BASE)],
            vec![case("null", "read", None, &BASE)],
            None,
        );
        assert!(same.notes.is_empty(), "{:?}", same.notes);

        let mut b = a.clone();
        b.system.fs_type = Some("xfs".into());
        b.system.device = Some(crate::sysinfo::Device {
            name: "nvme0n1".into(),
            ..Default::default()
        });
        b.config.cache = "warm".into();
        b.config.data = "zeros".into();
        b.tool.version = "0.2.0".into();
        b.interrupted = true;
        let r = compare(&a, &b, side("old"), side("new"), None);
        let all = r.notes.join("\n");
        for want in [
            "file system differs: old unknown, new xfs",
            "device differs: old none, new nvme0n1",
            "cache state differs: old cold, new warm",
            "data differs: old random, new zeros",
            "tool version differs: old iopath 0.1.0 (result schema 2), new iopath 0.2.0 (result schema 2)",
            "new was interrupted",
        ] {
            assert!(all.contains(want), "missing {want:?} in:\n{all}");
        }
        assert_eq!(r.notes.len(), 6, "{all}");
    }

    #[test]
    fn nothing_matched_and_too_few_repetitions_are_noted() {
        let r = report(
            vec![case("null", "read", None, &BASE)],
            vec![case("null", "write", None, &BASE)],
            None,
        );
        assert!(
            r.notes.iter().any(|n| n.contains("nothing was compared")),
            "{:?}",
            r.notes
        );
        let r = report(
            vec![case("null", "read", None, &[100.0, 101.0])],
            vec![case("null", "read", None, &[50.0, 51.0])],
            None,
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("too few repetitions") && n.contains("2 in A, 2 in B")),
            "{:?}",
            r.notes
        );
        // Four against four can be real (2/70 < 5%): no note.
        let r = report(
            vec![case("null", "read", None, &BASE[..4])],
            vec![case("null", "read", None, &times(0.5)[..4])],
            None,
        );
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        assert_eq!(r.cases[0].label, Some(Label::Slower));
    }

    #[test]
    fn bad_input_names_the_file_and_what_to_do() {
        let e = parse(b"not json", "x.json").unwrap_err().0;
        assert!(
            e.contains("x.json is not JSON") && e.contains("iopath run --json"),
            "{e}"
        );
        let e = parse(br#"{"jobs": []}"#, "fio.json").unwrap_err().0;
        assert!(e.contains("fio.json is not an iopath result"), "{e}");
        let e = parse(br#"[1, 2]"#, "list.json").unwrap_err().0;
        assert!(e.contains("list.json is not an iopath result"), "{e}");
        let e = parse(
            br#"{"schema_version": 7, "tool": {"name": "iopath", "version": "3.0.0"}}"#,
            "new.json",
        )
        .unwrap_err()
        .0;
        assert!(
            e.contains("new.json has result schema version 7") && e.contains("3.0.0"),
            "{e}"
        );
        let e = parse(
            br#"{"schema_version": 2, "tool": {"name": "iopath", "version": "0.1.0"}}"#,
            "cut.json",
        )
        .unwrap_err()
        .0;
        assert!(
            e.contains("cut.json is not a complete iopath result"),
            "{e}"
        );
        let e = load(Path::new("/nonexistent/iopath-compare.json"))
            .unwrap_err()
            .0;
        assert!(
            e.contains("cannot read /nonexistent/iopath-compare.json"),
            "{e}"
        );
        // A result serialized by this build reads back.
        let r = run(vec![case("null", "read", None, &BASE)]);
        assert_eq!(
            parse(&serde_json::to_vec(&r).unwrap(), "ok.json").unwrap(),
            r
        );
    }

    #[test]
    fn file_names_are_the_default_names_unless_they_clash() {
        assert_eq!(
            default_names(Path::new("ci/base.json"), Path::new("out/new.json")),
            ("base.json".into(), "new.json".into())
        );
        assert_eq!(
            default_names(Path::new("a/r.json"), Path::new("b/r.json")),
            ("a/r.json".into(), "b/r.json".into())
        );
    }

    #[test]
    fn the_text_shows_labels_changes_and_sync_when_it_varies() {
        let mut dsync = case("aio", "randwrite", None, &BASE);
        dsync.sync = "dsync".into();
        let r = report(
            vec![
                case("uring", "randread", None, &BASE),
                case("direct", "randrw", Some(70), &BASE),
                dsync,
            ],
            vec![
                case("uring", "randread", None, &times(0.8)),
                case("direct", "randrw", Some(70), &BASE),
            ],
            None,
        );
        let text = render(&r);
        assert!(text.contains("randread 4k Q32T1 sync=end"), "{text}");
        assert!(text.contains("randrw 4k Q32T1 70% read sync=end"), "{text}");
        assert!(text.contains("randwrite 4k Q32T1 sync=dsync"), "{text}");
        assert!(text.contains("-20.0%"), "{text}");
        assert!(text.contains("slower"), "{text}");
        assert!(text.contains("no change"), "{text}");
        assert!(text.contains("only in A"), "{text}");
        assert!(text.contains("100.0 us → 100.0 us"), "{text}");
        assert!(
            text.contains("0 faster, 1 slower, 1 no change; 1 not compared"),
            "{text}"
        );
        let uring = text.lines().find(|l| l.starts_with("│ uring")).unwrap();
        assert!(
            uring.contains("-20.0%") && uring.contains(" to -19."),
            "{uring}"
        );
        let single = render(&report(
            vec![case("null", "read", None, &[100.0])],
            vec![case("null", "read", None, &[80.0])],
            None,
        ));
        let row = single.lines().find(|l| l.starts_with("│ null")).unwrap();
        assert!(row.contains("-20.0%") && !row.contains(" to "), "{row}");
    }
}

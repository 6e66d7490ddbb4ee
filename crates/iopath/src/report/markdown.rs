//! Markdown export: the run as GitHub-flavoured Markdown, ready to paste
//! into an issue or a pull request. A title, the context (target, file
//! system, device, cache, date, version, interruption), the exact command,
//! then for each pattern a table of its methods and the verdict, then what
//! did not run and the warnings.
//!
//! Figures and their rules are the terminal table's (`report::table`):
//! medians over the measured repetitions, `±95%` how far the median
//! throughput's 95% interval reaches from the median, relative to it, `~`
//! when fewer than 6 repetitions make it only the min-max range; a latency
//! percentile with too few requests behind it is marked `~` too. A schema-1 result has no verdicts
//! recorded: they are computed here from its repetitions.

use crate::report::text::framing;
use std::borrow::Cow;

use crate::analysis::verdict::{self, Verdict};
use crate::model::units::{fmt_bytes, fmt_count, fmt_device_fraction, fmt_ns, fmt_percentile};
use crate::model::Pattern;
use crate::report::export::{visible_bytes, Export, Exporter};
use crate::report::table::{
    dedup_vec as dedup, depth_note, job, measured_n, other_notes, pattern_title, spread,
};
use crate::result::{CaseResult, RunResult};

const MIB: f64 = 1024.0 * 1024.0;

/// `--markdown`: [`render`], its control characters shown.
#[derive(Debug, Clone, Copy)]
pub struct Markdown;

impl Exporter for Markdown {
    fn flag(&self) -> &'static str {
        "--markdown"
    }

    fn serialize(&self, r: &RunResult) -> anyhow::Result<Export> {
        Ok(Export::Document(visible_bytes(&render(r))))
    }
}

/// Render the whole run as Markdown.
pub fn render(r: &RunResult) -> String {
    // The result's strings go into lines of this text: each kept to its
    // line (a line feed in a value is shown, `\x0a`).
    let r = &*crate::model::untrusted::one_line(r);
    let mut out = String::new();
    let patterns = patterns(r);
    out.push_str(&format!("## {}\n\n", title(r, &patterns)));
    out.push_str(&context(r));
    out.push_str(&format!("\n{}\n", code_block(&r.command)));
    out.push_str(&format!(
        "\nMiB/s and every other figure: median of n measured repetitions. \
         ±95%: how far the median throughput's 95% interval reaches from the median \
         (its farther side), relative to it ({}). {}. \
         device: bytes the disk moved / bytes asked. \
         CPU/IO: CPU time per request, kernel and SQPOLL included. \
         cache: the file's pages left in the page cache.\n",
        framing::tilde_spread("`~`"),
        framing::tilde_percentiles("`~`", &["p50", "p99"])
    ));

    for g in crate::report::grids::all(r) {
        out.push_str(&grid(&g));
    }

    out.push_str(&patterns_with_verdicts(r, &patterns));
    out.push_str(&super::costs::markdown(r));

    let not_run = not_run(r);
    if !not_run.is_empty() {
        out.push_str("\n### Not run\n\n");
        for line in not_run {
            out.push_str(&format!("- {line}\n"));
        }
    }
    if !r.warnings.is_empty() {
        out.push_str("\n### Warnings\n\n");
        for w in &r.warnings {
            let message = crate::report::text::warnings::message(w);
            out.push_str(&format!("- {}: {}", code_span(&w.code), escape(&message)));
            let cases = crate::report::text::warnings::case_groups(w, r);
            if !cases.is_empty() {
                out.push_str(&format!(" ({})", escape(&cases)));
            }
            out.push('\n');
        }
    }
    out
}

/// A preset's grid: its title, its table, its notes.
fn grid(g: &crate::report::grids::Grid) -> String {
    let mut out = String::new();
    out.push_str(&format!("\n### {}\n\n", escape(&g.title)));
    out.push_str(&format!(
        "| {} |\n|{}|\n",
        g.header
            .iter()
            .map(|c| escape(c))
            .collect::<Vec<_>>()
            .join(" | "),
        g.numeric
            .iter()
            .map(|&n| if n { "---:" } else { "---" })
            .collect::<Vec<_>>()
            .join("|")
    ));
    for row in &g.rows {
        out.push_str(&format!(
            "| {} |\n",
            row.iter()
                .map(|c| escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    for n in &g.notes {
        out.push_str(&format!("\n{}\n", escape(n)));
    }
    out
}

/// Each pattern's table and its verdicts (the interruption's caveat
/// before the first).
fn patterns_with_verdicts(r: &RunResult, patterns: &[Pattern]) -> String {
    let mut out = String::new();
    let verdicts: Cow<[Verdict]> = if r.verdicts.is_empty() {
        // Schema 1 recorded none: the same rules, on its repetitions.
        Cow::Owned(verdict::all(&r.cases))
    } else {
        Cow::Borrowed(&r.verdicts)
    };
    let mut caveat = crate::report::interrupted_caveat(r);
    for p in patterns {
        let cases: Vec<&CaseResult> = r.cases.iter().filter(|c| c.pattern == *p).collect();
        out.push_str(&format!(
            "\n### {} ({})\n\n",
            escape(pattern_title(p.name())),
            code_span(p.name())
        ));
        if cases.iter().all(|c| c.not_reached()) {
            // A table of dashes says less than this line (as the terminal's).
            out.push_str(&format!(
                "Not reached: the run was interrupted before {} (listed under *Not run*).\n",
                crate::model::units::n_of(cases.len() as u64, "case", "cases")
            ));
            continue;
        }
        out.push_str(&pattern_table(&cases));
        // Each verdict's first sentence names its job (`randread 4k Q32T1: ...`).
        for v in verdicts.iter().filter(|v| v.job.pattern == *p) {
            out.push_str("\n**Verdict:**\n\n");
            if let Some(caveat) = caveat.take() {
                out.push_str(&format!("*{}*\n\n", escape(&caveat)));
            }
            for line in crate::report::text::verdict::lines(v) {
                out.push_str(&format!("- {}\n", escape(&line)));
            }
        }
        // `--replay`: what it says of the program.
        if let Some(line) = (*p == Pattern::Replay)
            .then(|| crate::report::text::replay::line(r))
            .flatten()
        {
            out.push_str(&format!("\n{}\n", escape(&line)));
        }
    }

    out
}

/// Patterns in the order they first appear (as the terminal table).
fn patterns(r: &RunResult) -> Vec<Pattern> {
    let mut v: Vec<Pattern> = Vec::new();
    for c in &r.cases {
        if !v.contains(&c.pattern) {
            v.push(c.pattern);
        }
    }
    v
}

/// `iopath: read, randread, write on ext4 (vda)`.
fn title(r: &RunResult, patterns: &[Pattern]) -> String {
    let what = if patterns.is_empty() {
        "no case ran".to_string()
    } else {
        escape(
            &patterns
                .iter()
                .map(|p| p.name())
                .collect::<Vec<_>>()
                .join(", "),
        )
    };
    let mut s = format!("iopath: {what}");
    if r.target.is_some() {
        let fs = r.system.fs_type.as_deref().unwrap_or("unknown file system");
        s.push_str(&format!(" on {}", escape(fs)));
        if let Some(d) = &r.system.device {
            s.push_str(&format!(" ({})", escape(&d.name)));
        }
    }
    if r.interrupted {
        s.push_str(" (interrupted)");
    }
    s
}

/// One line of the context list: `- **key:** value`.
struct Item {
    key: &'static str,
    value: String,
}

/// The context as a list: what was measured, where, how, when, by which
/// version.
fn context(r: &RunResult) -> String {
    let item = |key, value| Item { key, value };
    let mut items = vec![item("target", target(r))];
    if r.target.is_some() {
        let fs = r.system.fs_type.as_deref().unwrap_or("unknown");
        items.push(item(
            "file system",
            match &r.system.mount_options {
                Some(o) => format!("{} ({})", escape(fs), escape(o)),
                None => escape(fs),
            },
        ));
        items.push(item("device", device(r)));
    }
    items.push(item("system", system(r)));
    items.push(item("cache", escape(r.config.cache.name())));
    items.push(item("repetitions", repetitions(r)));
    items.push(item("date", escape(&r.started_at)));
    items.push(item(
        "iopath",
        format!(
            "{} (result schema {})",
            escape(&r.tool.version),
            r.schema_version
        ),
    ));
    items.push(item(
        "interrupted",
        if r.interrupted {
            "**yes**: only the cases finished before Ctrl-C/SIGTERM are here".into()
        } else {
            "no".into()
        },
    ));
    items
        .into_iter()
        .map(|Item { key, value }| format!("- **{key}:** {value}\n"))
        .collect()
}

/// The file measured: its path, size and kind.
fn target(r: &RunResult) -> String {
    match &r.target {
        Some(t) => {
            let mut s = format!(
                "{}, {}, {}",
                code_span(&t.path.display().to_string()),
                fmt_bytes(t.size_bytes),
                escape(t.kind.name())
            );
            if t.created {
                s.push_str(" (removed after the run)");
            }
            s
        }
        None => "none (only `null` ran)".into(),
    }
}

/// The block device under the target, the stack it is reached through,
/// its scheduler and read-ahead.
fn device(r: &RunResult) -> String {
    let stack = r
        .system
        .device_stack
        .as_ref()
        .filter(|s| s.path.len() > 1)
        .map(|s| format!(" via {}", escape(&s.path.join(" → "))))
        .unwrap_or_default();
    match &r.system.device {
        Some(d) => {
            let mut s = escape(&d.name);
            if let Some(m) = &d.model {
                s.push_str(&format!(" ({})", escape(m)));
            }
            s.push_str(&stack);
            if let Some(sch) = &d.scheduler {
                s.push_str(&format!(", scheduler {}", escape(sch)));
            }
            if let Some(ra) = d.read_ahead_kb {
                s.push_str(&format!(", read-ahead {ra} KiB"));
            }
            s
        }
        None => "none (no block device under the target)".into(),
    }
}

/// The kernel, CPU model and count, memory.
fn system(r: &RunResult) -> String {
    let sys = &r.system;
    let mut system = Vec::new();
    if let Some(k) = &sys.kernel {
        system.push(format!("Linux {}", escape(k)));
    }
    if let Some(m) = &sys.cpu_model {
        system.push(escape(m));
    }
    system.push(format!(
        "{} CPU{}",
        sys.cpus,
        if sys.cpus == 1 { "" } else { "s" }
    ));
    if let Some(m) = sys.memory_bytes {
        system.push(format!("{} memory", fmt_bytes(m)));
    }
    system.join(", ")
}

/// How many repetitions each case ran (or the adaptive rule), after how
/// many warm-ups.
fn repetitions(r: &RunResult) -> String {
    let warmup = match r.config.warmup {
        0 => String::new(),
        1 => " after 1 warm-up".into(),
        n => format!(" after {n} warm-ups"),
    };
    match (r.config.repeat, r.config.ci_target) {
        (Some(n), _) => format!("{n} per case{warmup}"),
        (None, Some(t)) => format!(
            "adaptive (until the 95% interval is within {}%{}){warmup}",
            (t * 1000.0).round() / 10.0,
            r.config.max_time_ns.map_or(String::new(), |ns| format!(
                ", at most {} per case",
                fmt_ns(ns)
            ))
        ),
        (None, None) => format!("adaptive{warmup}"),
    }
}

/// One pattern's table.
fn pattern_table(cases: &[&CaseResult]) -> String {
    let mut s = String::from(
        "| method | job | MiB/s | ±95% | n | IOPS | p50 | p99 | CPU/IO | device | cache | notes |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for c in cases {
        // Markdown already: the case's own notes are escaped.
        let mut notes: Vec<String> = depth_note(c).into_iter().collect();
        notes.extend(other_notes(c).map(|n| escape(n)));
        let figures: Vec<String> = match (&c.summary, &c.skipped, &c.error) {
            (_, Some(_), _) if c.not_reached() => {
                notes.insert(0, framing::NOT_REACHED_NOTE.into());
                dashes()
            }
            (_, Some(_), _) => {
                notes.insert(0, "skipped (see *Not run*)".into());
                dashes()
            }
            (_, _, Some(_)) => {
                notes.insert(0, "FAILED (see *Not run*)".into());
                dashes()
            }
            (Some(m), None, None) => vec![
                format!("{:.1}", m.bw_bytes_per_s / MIB),
                spread(c),
                measured_n(c).to_string(),
                fmt_count(m.iops),
                fmt_percentile(m.lat_ns.p50, 0.5, m.lat_ns.count),
                fmt_percentile(m.lat_ns.p99, 0.99, m.lat_ns.count),
                fmt_ns(m.cpu.ns_per_io.round() as u64),
                m.device_fraction.map_or("-".into(), fmt_device_fraction),
                fmt_bytes(m.memory.page_cache_bytes),
            ],
            (None, None, None) => {
                notes.insert(0, "no data".into());
                dashes()
            }
        };
        // The figures are ours: digits, units, `-`, `%` and `~`, which
        // alone in a cell is no strikethrough.
        let mut row = vec![escape(&c.name()), job(c)];
        row.extend(figures);
        row.push(dedup(notes).join("; "));
        s.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    s
}

fn dashes() -> Vec<String> {
    vec!["-".to_string(); 9]
}

/// The skipped and failed cases, one line per method and reason, with the
/// jobs it concerns.
fn not_run(r: &RunResult) -> Vec<String> {
    let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
    for c in &r.cases {
        let why = match (&c.skipped, &c.error) {
            (Some(s), _) => format!("skipped: {s}"),
            (None, Some(e)) => format!("failed: {e}"),
            (None, None) => continue,
        };
        let label = c.job().label();
        match groups
            .iter_mut()
            .find(|(m, w, _)| *m == c.name() && *w == why)
        {
            Some((_, _, jobs)) => jobs.push(label),
            None => groups.push((c.name(), why, vec![label])),
        }
    }
    groups
        .into_iter()
        .map(|(method, why, jobs)| {
            format!(
                "**{}** ({}): {}",
                escape(&method),
                escape(&jobs.join(", ")),
                escape(&why)
            )
        })
        .collect()
}

/// Text made safe for a Markdown table cell or list item: characters that
/// would end a cell (`|`), start emphasis, code, links, HTML or
/// strikethrough are backslash-escaped; line breaks become spaces.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' | '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '~' => {
                out.push('\\');
                out.push(ch);
            }
            '\r' => {}
            '\n' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}

/// `s` as inline code (outside tables: no escapes work inside code), with
/// a fence longer than any run of backticks in it.
fn code_span(s: &str) -> String {
    let s = s.replace(['\r', '\n'], " ");
    let fence = "`".repeat(longest_backtick_run(&s) + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// `s` as a fenced shell block, its fence longer than any run of backticks
/// in it.
fn code_block(s: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(s) + 1).max(3));
    format!("{fence}sh\n{s}\n{fence}")
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::testdata::{fixture, v1};

    /// The rows of every pipe table: lines starting with `|`, split on
    /// unescaped `|`.
    fn table_rows(md: &str) -> Vec<Vec<String>> {
        md.lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| {
                let mut cells = Vec::new();
                let mut cell = String::new();
                let mut chars = l.chars();
                while let Some(ch) = chars.next() {
                    match ch {
                        '\\' => {
                            cell.push(ch);
                            cell.extend(chars.next());
                        }
                        '|' => cells.push(std::mem::take(&mut cell)),
                        _ => cell.push(ch),
                    }
                }
                // A row starts and ends with `|`: drop the empty outsides.
                assert!(cell.is_empty(), "{l}");
                cells.remove(0);
                cells.into_iter().map(|c| c.trim().to_string()).collect()
            })
            .collect()
    }

    #[test]
    fn snapshot_of_a_real_run() {
        insta::assert_snapshot!(render(&fixture()));
    }

    #[test]
    fn tables_are_well_formed() {
        let r = fixture();
        let md = render(&r);
        let rows = table_rows(&md);
        // Per pattern: header, alignment, one row per case.
        assert_eq!(rows.len(), 3 * 2 + r.cases.len());
        assert!(rows.iter().all(|row| row.len() == 12), "{rows:?}");
        assert!(md.contains("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"));
        // Each pattern's heading, and its verdict from the file.
        for (p, title) in [
            ("read", "sequential read"),
            ("randread", "random read"),
            ("write", "sequential write"),
        ] {
            assert!(md.contains(&format!("### {title} (`{p}`)")), "{p}");
        }
        for v in &r.verdicts {
            assert!(md.contains(&escape(&v.text[0])), "{}", v.text[0]);
        }
        // uring on randread: its median, the `~` of 4 repetitions, its n.
        let uring = rows
            .iter()
            .find(|row| row[0] == "uring" && row[1] == "4k Q32T1")
            .unwrap();
        let s = r.cases[9].summary.as_ref().unwrap();
        assert_eq!(r.cases[9].method, "uring");
        assert_eq!(uring[2], format!("{:.1}", s.bw_bytes_per_s / MIB));
        assert!(uring[3].starts_with('~'), "{}", uring[3]);
        assert_eq!(uring[4], "4");
        // Synchronous methods say they ran at depth 1.
        let buffered = rows
            .iter()
            .find(|row| row[0] == "buffered" && row[1] == "4k Q1T1")
            .unwrap();
        assert_eq!(buffered[11], "qd 32→1 (sync method)");
        // The skipped method: a row of dashes, and its reason once, with
        // the jobs it concerns.
        let iopoll: Vec<_> = rows.iter().filter(|row| row[0] == "uring-iopoll").collect();
        assert_eq!(iopoll.len(), 3);
        assert!(iopoll.iter().all(|row| row[2] == "-"));
        let not_run = md.split("### Not run").nth(1).unwrap();
        assert_eq!(not_run.matches("EOPNOTSUPP").count(), 1, "{not_run}");
        assert!(not_run.contains("read 1M Q8T1, randread 4k Q32T1, write 1M Q8T1"));
        assert!(md.contains("- `depth_capped`: synchronous methods"));
        assert!(md.contains("- **interrupted:** no\n"));
        assert!(md.contains(&format!("```sh\n{}\n```", r.command)));
    }

    #[test]
    fn schema_1_gets_its_verdicts_computed() {
        let r = v1();
        assert!(r.verdicts.is_empty());
        let md = render(&r);
        assert_eq!(md.matches("**Verdict:**").count(), 1, "{md}");
        let computed = verdict::all(&r.cases);
        assert_eq!(computed.len(), 1);
        let said = crate::report::text::verdict::lines(&computed[0]);
        assert!(!said.is_empty());
        for line in &said {
            assert!(md.contains(&format!("- {}\n", escape(line))), "{line}");
        }
        assert!(md.contains("(result schema 1)"));
        // n and ±95% come from the summary's repetitions and stats, as
        // schema 1 has no repetition_control: 6 repetitions reach 95%.
        let rows = table_rows(&md);
        let direct = rows.iter().find(|row| row[0] == "direct").unwrap();
        assert_eq!(direct[4], "6");
        assert!(direct[3].ends_with('%') && !direct[3].starts_with('~'));
        assert!(md.contains("### Not run"));
    }

    #[test]
    fn a_pipe_in_a_note_or_reason_does_not_break_the_table() {
        let mut r = fixture();
        r.cases.truncate(2);
        r.cases[0].notes = vec!["fell back | to <plain> buffers *twice*\nsee `dmesg`".into()];
        r.cases.push(CaseResult {
            method: "uring|odd".into(),
            pattern: crate::model::Pattern::Read,
            block_size: 1 << 20,
            queue_depth: 8,
            queue_depth_requested: 8,
            threads: 1,
            sync: iopath_io::SyncPolicy::End,
            error: Some("io_uring_enter | EINVAL".into()),
            ..CaseResult::default()
        });
        r.warnings.clear();
        r.verdicts.clear();
        let md = render(&r);
        let rows = table_rows(&md);
        assert_eq!(rows.len(), 2 + 3);
        assert!(rows.iter().all(|row| row.len() == 12), "{rows:?}");
        assert_eq!(
            rows[2][11],
            // The note's line feed is shown (`untrusted::one_line`), its
            // backslash escaped for Markdown.
            r"qd 8→1 (sync method); fell back \| to \<plain\> buffers \*twice\*\\x0asee \`dmesg\`"
        );
        assert_eq!(rows[4][0], r"uring\|odd");
        assert_eq!(rows[4][11], "FAILED (see *Not run*)");
        assert!(md.contains(r"- **uring\|odd** (read 1M Q8T1): failed: io\_uring\_enter \| EINVAL"));
        // Verdicts recomputed when none are recorded; the job as it ran
        // (both methods are synchronous: depth 1).
        assert!(md.contains("**Verdict:**\n\n- read 1M Q1T1: "), "{md}");
    }

    #[test]
    fn interrupted_and_odd_command() {
        let mut r = fixture();
        r.interrupted = true;
        r.command = "iopath run --dir '/tmp/a ```b'".into();
        let md = render(&r);
        assert!(md.starts_with("## iopath: read, randread, write on ext4 (vda) (interrupted)\n"));
        assert!(md.contains("- **interrupted:** **yes**"));
        assert!(md.contains("````sh\niopath run --dir '/tmp/a ```b'\n````\n"));
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
        assert_eq!(code_span("/tmp/a|b"), "`/tmp/a|b`");
    }
}

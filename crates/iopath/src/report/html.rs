//! The HTML report: one self-contained file that opens offline. Inline CSS,
//! inline SVG charts, the chart font embedded as a data URL, no script, no
//! external resource of any kind (a Content-Security-Policy says so to the
//! browser, which then refuses anything that would reach out).
//!
//! Sections: verdicts; warnings; for each group of cases (those differing
//! only by method) a table and its charts; methods that did not run; the
//! system and configuration; the exact command to reproduce.

use crate::report::text::framing;
use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;

use crate::analysis::verdict::Verdict;
use crate::model::units::{fmt_bytes, fmt_count, fmt_device_fraction, fmt_ns, fmt_percentile};
use crate::report::charts::{self, css_colour};
use crate::report::export::{Export, Exporter};
use crate::report::{groups, table};
use crate::result::{CaseResult, RunResult};

const MIB: f64 = 1024.0 * 1024.0;

/// `&`, `<`, `>`, `"` and `'` as entities, control characters written
/// out visibly (`untrusted::visible`: `\x1b`).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::model::untrusted::visible(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
:root { color-scheme: light; --ink: #1d1d1f; --muted: #5f6368; --line: #dadce0; --soft: #f6f7f9; --accent: #1a5fb4; --warn: #8a4b00; --warnbg: #fff4e5; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 "iopath-sans", system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1160px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 17px; margin: 28px 0 8px; }
a { color: var(--accent); }
.sub { color: var(--muted); margin: 0 0 12px; }
nav { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 12px 0 0; font-size: 14px; }
.banner { background: var(--warnbg); color: var(--warn); border: 1px solid #f0c89a; border-radius: 6px; padding: 8px 12px; margin: 12px 0; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 14px; margin: 8px 0 0; }
.sw { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.verdicts { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; background: var(--soft); }
.card h3 { margin: 0 0 6px; font-size: 16px; }
.card p { margin: 4px 0; }
.card .pick { font-weight: 600; margin-top: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; margin: 8px 0 4px; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td.m { white-space: nowrap; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { overflow-x: auto; }
figure { margin: 18px 0 8px; }
figure svg { max-width: 100%; height: auto; display: block; border: 1px solid var(--line); border-radius: 6px; }
svg text { font-family: "iopath-sans", sans-serif; }
figcaption { color: var(--muted); font-size: 13.5px; margin-top: 6px; max-width: 900px; }
ul.warn li { margin: 6px 0; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; white-space: pre-wrap; word-break: break-all; }
.kv { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 0 24px; }
.kv table td:first-child { color: var(--muted); width: 40%; }
footer { color: var(--muted); font-size: 13px; margin-top: 48px; }
@page { margin: 12mm; }
@media print {
  main { max-width: none; padding: 0; }
  body { font-size: 11px; }
  table { font-size: 9.5px; }
  .scroll { overflow: visible; }
  td.n, td.m, th { white-space: normal; }
  th, td { padding: 3px 4px; }
  nav { display: none; }
  section.job, figure, .card { break-inside: avoid; }
  h2 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
"#;

/// `--html`: [`render`] (every value escaped where it is placed).
#[derive(Debug, Clone, Copy)]
pub struct Html;

impl Exporter for Html {
    fn flag(&self) -> &'static str {
        "--html"
    }

    fn serialize(&self, r: &RunResult) -> Result<Export> {
        Ok(Export::Document(render(r)?.into_bytes()))
    }
}

/// The whole report.
pub fn render(r: &RunResult) -> Result<String> {
    // The result's strings go into lines of this text: each kept to its
    // line (a line feed in a value is shown, `\x0a`).
    let r = &*crate::model::untrusted::one_line(r);
    let mut h = String::new();
    head(&mut h, r)?;
    header(&mut h, r)?;
    verdicts(&mut h, r)?;
    preset(&mut h, r)?;
    warnings(&mut h, r)?;
    results(&mut h, r)?;
    h.push_str(&super::costs::html(r));
    h.push_str(&super::latency_split::html(r));
    h.push_str(&super::cpu_kind::html(r));
    not_run(&mut h, r)?;
    system(&mut h, r)?;
    reproduce(&mut h, r)?;
    Ok(h)
}

/// The document up to `<main>`: its title, the font and the style.
fn head(h: &mut String, r: &RunResult) -> Result<()> {
    let title = match &r.target {
        Some(t) => format!("iopath: {}", t.path.display()),
        None => "iopath report".to_string(),
    };
    write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; font-src data:; img-src data:\">\n\
         <meta name=\"generator\" content=\"iopath {}\">\n<title>{}</title>\n<style>\n{}\n{}</style>\n</head>\n<body>\n<main>\n",
        escape(&r.tool.version),
        escape(&title),
        font_face(),
        STYLE
    )?;
    Ok(())
}

/// The verdicts, as cards (a schema-1 result's computed here), after the
/// interruption's caveat.
fn verdicts(h: &mut String, r: &RunResult) -> Result<()> {
    let verdicts: Vec<Verdict> = if r.verdicts.is_empty() {
        crate::analysis::verdict::all(&r.cases)
    } else {
        r.verdicts.clone()
    };
    write!(h, "<section id=\"verdicts\">\n<h2>Verdicts</h2>\n")?;
    if let Some(caveat) = crate::report::interrupted_caveat(r) {
        writeln!(h, "<p class=\"banner\">{}</p>", escape(&caveat))?;
    }
    if verdicts.is_empty() {
        h.push_str("<p>No verdict: a verdict needs two measured methods doing the same job (the reference <code>null</code> does not count).</p>\n");
    } else {
        h.push_str("<div class=\"verdicts\">\n");
        for v in &verdicts {
            verdict_card(h, v)?;
        }
        h.push_str("</div>\n");
    }
    // `--replay`: what it says of the program.
    if let Some(line) = crate::report::text::replay::line(r) {
        writeln!(h, "<p class=\"replay\">{}</p>", escape(&line))?;
    }
    h.push_str("</section>\n");
    Ok(())
}

/// A preset's grids, if it has any.
fn preset(h: &mut String, r: &RunResult) -> Result<()> {
    let grids = crate::report::grids::all(r);
    if !grids.is_empty() {
        write!(
            h,
            "<section id=\"preset\">\n<h2>Preset {}</h2>\n",
            escape(r.config.preset.as_deref().unwrap_or(""))
        )?;
        for g in &grids {
            grid(h, g)?;
        }
        h.push_str("</section>\n");
    }
    Ok(())
}

/// Each job's table and charts.
fn results(h: &mut String, r: &RunResult) -> Result<()> {
    write!(h, "<section id=\"results\">\n<h2>Results</h2>\n")?;
    writeln!(
        h,
        "<p class=\"sub\">MiB/s and every other figure: median of n measured repetitions. \
         ±95%: how far the median throughput's 95% interval reaches from the median (its farther \
         side), relative to it; {}. {}. device: bytes the disk moved / bytes asked.</p>",
        framing::tilde_spread("~"),
        framing::tilde_percentiles("~", &["p50", "p99", "p99.9"])
    )?;
    if r.cases.is_empty() {
        h.push_str("<p>No case ran.</p>\n");
    }
    for (job, cases) in groups(r) {
        write!(
            h,
            "<section class=\"job\" id=\"{}\">\n<h3>{}</h3>\n",
            charts::job_id(&job),
            escape(&job.label())
        )?;
        if cases.iter().all(|c| c.not_reached()) {
            // A table of dashes says less than this line (as the terminal's).
            h.push_str(
                "<p>Not reached: the run was interrupted before this job (its cases are listed under Not run).</p>\n</section>\n",
            );
            continue;
        }
        results_table(h, &cases, table::show_placement(r))?;
        for fig in charts::figures(&job, &cases) {
            write!(
                h,
                "<figure id=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
                fig.id,
                charts::svg(&fig)?,
                escape(&fig.caption)
            )?;
        }
        h.push_str("</section>\n");
    }
    h.push_str("</section>\n");
    Ok(())
}

/// The command that made the result, and the footer that closes the
/// document.
fn reproduce(h: &mut String, r: &RunResult) -> Result<()> {
    write!(
        h,
        "<section id=\"reproduce\">\n<h2>Reproduce</h2>\n\
         <p>The command that produced these results (run it in the same directory on the same machine):</p>\n\
         <pre><code>{}</code></pre>\n</section>\n",
        escape(&r.command)
    )?;
    write!(
        h,
        "<footer>Written by {} {} from a result of schema version {}; started {}{}. \
         Statistics: docs/statistics.md; what the warnings mean: docs/methodology.md.</footer>\n\
         </main>\n</body>\n</html>\n",
        escape(&r.tool.name),
        escape(&r.tool.version),
        r.schema_version,
        escape(&r.started_at),
        r.finished_at
            .as_ref()
            .map(|f| format!(", finished {}", escape(f)))
            .unwrap_or_default()
    )?;
    Ok(())
}

/// The chart font as a data URL, so text in the SVG charts is laid out in
/// the browser with the metrics plotters used.
fn font_face() -> String {
    format!(
        "@font-face {{ font-family: \"iopath-sans\"; src: url(data:font/ttf;base64,{}) format(\"truetype\"); }}\n",
        base64(charts::FONT)
    )
}

/// Standard base64 with padding (a few lines beat a dependency).
fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn header(h: &mut String, r: &RunResult) -> Result<()> {
    h.push_str("<header>\n<h1>iopath report</h1>\n");
    let mut facts = Vec::new();
    if let Some(t) = &r.target {
        facts.push(format!(
            "<strong>{}</strong> ({}{})",
            escape(&t.path.display().to_string()),
            fmt_bytes(t.size_bytes),
            if t.created {
                ", created and removed by iopath"
            } else {
                ""
            }
        ));
    }
    if let Some(fs) = &r.system.fs_type {
        facts.push(escape(fs));
    }
    if let Some(d) = &r.system.device {
        facts.push(format!(
            "device {}{}",
            escape(&d.name),
            d.model
                .as_ref()
                .map(|m| format!(" ({})", escape(m)))
                .unwrap_or_default()
        ));
    }
    facts.push(format!("cache {}", escape(r.config.cache.name())));
    facts.push(escape(&r.started_at));
    if let Some(host) = &r.system.hostname {
        facts.push(format!("on {}", escape(host)));
    }
    writeln!(h, "<p class=\"sub\">{}</p>", facts.join(" · "))?;
    if r.interrupted {
        h.push_str("<p class=\"banner\">This run was interrupted (Ctrl-C or a signal): here are the cases finished before it, and the one it cut short, measured over its completed repetitions (or over the cut one when none completed).</p>\n");
    }
    let mut methods: Vec<String> = Vec::new();
    for c in r.cases.iter().filter(|c| c.summary.is_some()) {
        if !methods.contains(&c.name()) {
            methods.push(c.name());
        }
    }
    h.push_str("<div class=\"legend\">");
    for m in methods {
        write!(
            h,
            "<span><span class=\"sw\" style=\"background:{}\"></span>{}</span>",
            css_colour(&m),
            escape(&m)
        )?;
    }
    h.push_str("</div>\n<nav><a href=\"#verdicts\">Verdicts</a><a href=\"#warnings\">Warnings</a>");
    for (job, _) in groups(r) {
        write!(
            h,
            "<a href=\"#{}\">{}</a>",
            charts::job_id(&job),
            escape(&job.label())
        )?;
    }
    h.push_str("<a href=\"#not-run\">Not run</a><a href=\"#system\">System</a><a href=\"#reproduce\">Reproduce</a></nav>\n</header>\n");
    Ok(())
}

fn verdict_card(h: &mut String, v: &Verdict) -> Result<()> {
    write!(
        h,
        "<div class=\"card\">\n<h3><a href=\"#{}\">{}</a></h3>\n",
        charts::job_id(&v.job),
        escape(&v.job.label())
    )?;
    let label = v.job.label();
    for (i, line) in crate::report::text::verdict::lines(v)
        .into_iter()
        .enumerate()
    {
        // The first line starts with the group's name, already the title.
        let line = match line.strip_prefix(&format!("{label}: ")) {
            Some(rest) if i == 0 => rest.to_string(),
            _ => line,
        };
        let class = if line.starts_with('→') {
            " class=\"pick\""
        } else {
            ""
        };
        writeln!(h, "<p{class}>{}</p>", escape(&line))?;
    }
    h.push_str("</div>\n");
    Ok(())
}

fn grid(h: &mut String, g: &crate::report::grids::Grid) -> Result<()> {
    write!(
        h,
        "<h3>{}</h3>\n<div class=\"scroll\"><table>\n<tr>",
        escape(&g.title)
    )?;
    for (i, c) in g.header.iter().enumerate() {
        let class = if g.numeric.get(i).copied().unwrap_or(false) {
            " class=\"n\""
        } else {
            ""
        };
        write!(h, "<th{class}>{}</th>", escape(c))?;
    }
    h.push_str("</tr>\n");
    for row in &g.rows {
        h.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let class = if g.numeric.get(i).copied().unwrap_or(false) {
                " class=\"n\""
            } else {
                ""
            };
            write!(h, "<td{class}>{}</td>", escape(c))?;
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
    for n in &g.notes {
        writeln!(h, "<p class=\"sub\">{}</p>", escape(n))?;
    }
    Ok(())
}

fn warnings(h: &mut String, r: &RunResult) -> Result<()> {
    h.push_str("<section id=\"warnings\">\n<h2>Warnings</h2>\n");
    if r.warnings.is_empty() {
        h.push_str("<p>None: nothing in these results looks other than it seems.</p>\n");
    } else {
        h.push_str("<ul class=\"warn\">\n");
        for w in &r.warnings {
            writeln!(
                h,
                "<li><code>{}</code> {}{}</li>",
                escape(&w.code),
                escape(&super::text::warnings::message(w)),
                match super::text::warnings::case_groups(w, r) {
                    cases if cases.is_empty() => String::new(),
                    cases => format!(": {}", escape(&cases)),
                }
            )?;
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
    Ok(())
}

fn results_table(h: &mut String, cases: &[&CaseResult], placement: bool) -> Result<()> {
    h.push_str(
        "<div class=\"scroll\"><table>\n<tr><th>method</th><th>job</th><th class=\"n\">MiB/s</th>\
         <th class=\"n\">±95%</th><th class=\"n\">n</th><th class=\"n\">IOPS</th><th class=\"n\">p50</th>\
         <th class=\"n\">p99</th><th class=\"n\">p99.9</th><th class=\"n\">CPU/IO</th>\
         <th class=\"n\">device</th><th class=\"n\">cache</th>",
    );
    if placement {
        h.push_str("<th>placement</th>");
    }
    h.push_str("<th>notes</th></tr>\n");
    for c in cases {
        let mut notes: Vec<String> = table::depth_note(c).into_iter().collect();
        notes.extend(table::other_notes(c).cloned());
        if c.skipped.is_some() && c.not_reached() {
            notes.insert(0, framing::NOT_REACHED_NOTE.into());
        } else if let Some(s) = &c.skipped {
            notes.insert(0, format!("not run: {s}"));
        }
        if let Some(e) = &c.error {
            notes.insert(0, format!("failed: {e}"));
        }
        write!(
            h,
            "<tr><td class=\"m\"><span class=\"sw\" style=\"background:{}\"></span>{}</td><td class=\"m\">{}</td>",
            css_colour(&c.name()),
            escape(&c.name()),
            escape(&table::job(c))
        )?;
        match &c.summary {
            Some(s) => write!(
                h,
                "<td class=\"n\">{:.1}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
                s.bw_bytes_per_s / MIB,
                table::spread(c),
                table::measured_n(c),
                fmt_count(s.iops),
                fmt_percentile(s.lat_ns.p50, 0.5, s.lat_ns.count),
                fmt_percentile(s.lat_ns.p99, 0.99, s.lat_ns.count),
                fmt_percentile(s.lat_ns.p999, 0.999, s.lat_ns.count),
                fmt_ns(s.cpu.ns_per_io.round() as u64),
                s.device_fraction.map_or("-".into(), fmt_device_fraction),
                fmt_bytes(s.memory.page_cache_bytes)
            )?,
            None => h.push_str(&"<td class=\"n\">-</td>".repeat(10)),
        }
        if placement {
            write!(
                h,
                "<td class=\"m\">{}</td>",
                escape(&c.placement.as_ref().map_or("-".into(), |p| p.short()))
            )?;
        }
        writeln!(h, "<td>{}</td></tr>", escape(&notes.join("; ")))?;
    }
    h.push_str("</table></div>\n");
    Ok(())
}

fn not_run(h: &mut String, r: &RunResult) -> Result<()> {
    h.push_str("<section id=\"not-run\">\n<h2>Not run</h2>\n");
    let missing: Vec<&CaseResult> = r
        .cases
        .iter()
        .filter(|c| c.skipped.is_some() || c.error.is_some())
        .collect();
    if missing.is_empty() {
        h.push_str("<p>Every case ran.</p>\n");
    } else {
        h.push_str("<ul>\n");
        for c in missing {
            let (what, why) = match (&c.skipped, &c.error) {
                (Some(s), _) => ("skipped", s),
                (_, Some(e)) => ("failed", e),
                _ => unreachable!("filtered above"),
            };
            writeln!(
                h,
                "<li><strong>{}</strong> {} {}: {}</li>",
                escape(&c.name()),
                escape(&c.job().label()),
                what,
                escape(why)
            )?;
        }
        h.push_str("</ul>\n");
    }
    if !r.probe.is_empty() {
        h.push_str("<h3>Methods on this target</h3>\n<div class=\"scroll\"><table>\n<tr><th>method</th><th>usable</th><th>why not / notes</th></tr>\n");
        for p in &r.probe {
            let mut why: Vec<String> = p.reason.iter().cloned().collect();
            // Results before the probe left its own mapping out carry it.
            why.extend(
                p.notes
                    .iter()
                    .filter(|n| !n.starts_with(iopath_io::engines::mmap::MAPPING_NOTE_PREFIX))
                    .cloned(),
            );
            writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&p.method.to_string()),
                if p.usable { "yes" } else { "no" },
                escape(&why.join("; "))
            )?;
        }
        h.push_str("</table></div>\n");
    }
    h.push_str("</section>\n");
    Ok(())
}

fn system(h: &mut String, r: &RunResult) -> Result<()> {
    h.push_str("<section id=\"system\">\n<h2>System and configuration</h2>\n<div class=\"kv\">\n");
    kv_table(h, "System", &r.system)?;
    kv_table(h, "Configuration", &r.config)?;
    if let Some(t) = &r.target {
        kv_table(h, "Target", t)?;
    }
    h.push_str("</div>\n</section>\n");
    Ok(())
}

/// A struct's fields as a two-column table (nested objects with dotted
/// names), so every recorded fact shows, whatever the schema version.
fn kv_table(h: &mut String, title: &str, v: &impl Serialize) -> Result<()> {
    let mut rows = Vec::new();
    flatten("", &serde_json::to_value(v)?, &mut rows);
    write!(h, "<div><h3>{title}</h3>\n<table>\n")?;
    for (k, v) in rows {
        let shown = humanize(&k, &v);
        if shown == v {
            writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(&k), escape(&v))?;
        } else {
            // The recorded figure stays at hand, as a tooltip.
            writeln!(
                h,
                "<tr><td>{}</td><td title=\"{}\">{}</td></tr>",
                escape(&k),
                escape(&v),
                escape(&shown)
            )?;
        }
    }
    h.push_str("</table></div>\n");
    Ok(())
}

/// A recorded figure as a person reads it, by its field's name: `_ns`
/// durations (`150 ms`), `_bytes` sizes (`1 GiB`), the `ci_target`
/// fraction as a percentage (`3%`); anything else as recorded.
fn humanize(key: &str, v: &str) -> String {
    let name = key.rsplit('.').next().unwrap_or(key);
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if let (true, Ok(ns)) = (name.ends_with("_ns"), v.parse::<u64>()) {
        let d = crate::model::units::fmt_duration(std::time::Duration::from_nanos(ns));
        let unit = d.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(d.len());
        return format!("{} {}", &d[..unit], &d[unit..]);
    }
    if let (true, Ok(b)) = (name.ends_with("_bytes"), v.parse::<u64>()) {
        return fmt_bytes(b);
    }
    if let (true, Ok(f)) = (name == "ci_target", v.parse::<f64>()) {
        return format!("{}%", trim(format!("{:.2}", f * 100.0)));
    }
    v.to_string()
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Null => out.push((prefix.to_string(), "-".into())),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Array(a) if a.iter().all(|x| !x.is_object()) => out.push((
            prefix.to_string(),
            a.iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        )),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), x, out);
            }
        }
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain:?}");
        }
    }

    #[test]
    fn the_configuration_reads_as_people_write_it() {
        assert_eq!(humanize("time_limit_ns", "150000000"), "150 ms");
        assert_eq!(humanize("max_time_ns", "1500000000"), "1.5 s");
        assert_eq!(humanize("cache_limit.limit_bytes", "8388608"), "8 MiB");
        assert_eq!(humanize("ci_target", "0.03"), "3%");
        assert_eq!(humanize("ci_target", "0.025"), "2.5%");
        assert_eq!(humanize("seed", "1"), "1");
        assert_eq!(humanize("time_limit_ns", "-"), "-", "absent stays absent");
        let r = crate::report::testdata::fixture();
        let h = render(&r).unwrap();
        let config = &h[h.find("<h3>Configuration</h3>").unwrap()..];
        let config = &config[..config.find("</table>").unwrap()];
        assert!(
            config.contains("<td>time_limit_ns</td><td title=\"100000000\">100 ms</td>"),
            "{config}"
        );
        assert!(!config.contains(">100000000<"), "{config}");
    }
}

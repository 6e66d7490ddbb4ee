//! The costs per I/O beside the CPU, one row per measured case, for the
//! whole report (`--explain`), Markdown and HTML: the CPU per I/O the
//! tables use and the process's own, the kernel's deferred work (an
//! estimate, `~`), page faults, context switches, read/write calls, bytes
//! copied between the kernel and the program and device bytes of the case's
//! own and of others per byte asked ([`crate::result::Costs`]). A figure
//! not measured for a case (no source for its method, an older result) is
//! `-`.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use crate::model::units::{fmt_device_fraction, fmt_ns};
use crate::result::{CaseResult, RunResult};

/// The columns, in order.
pub const HEADERS: [&str; 13] = [
    "method", "job", "CPU/IO", "own", "kernel~", "minflt", "majflt", "vcsw", "ivcsw", "calls",
    "copied", "dev own", "other",
];

/// What the columns hold, said once under the tables.
pub const LEGEND: &str = "per I/O: CPU/IO = the tables' (own, plus the kernel's deferred work \
    where it is charged: cases that write, their write-back); own = the CPU of the \
    workers and the method's helper threads (SQPOLL, io-wq); kernel~ = the kernel threads' CPU \
    over the repetition beyond an idle baseline (write-back, loop device, journal: an estimate, \
    other tenants' kernel work counts too); minflt, majflt = page faults; vcsw, ivcsw = \
    voluntary and involuntary context switches; calls = read/write-family system calls (- for \
    io_uring and aio, whose calls are not counted). copied = bytes the kernel copied to or from \
    the program per byte moved; dev own = device bytes the case's own threads caused per byte \
    asked, read-ahead included; other = what the device moved beyond them per byte asked \
    (other processes; for writes the journal too). docs/methodology.md says what each holds \
    for each method.";

fn per_io(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 0.005 || v == 0.0 {
        format!("{v:.2}")
    } else {
        "<0.01".into()
    }
}

fn or_dash<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "-".into(), f)
}

/// The row of a case with a summary; `None` for one without.
pub fn row(c: &CaseResult) -> Option<[String; 13]> {
    let s = c.summary.as_ref()?;
    let k = s.costs.as_ref();
    let ns = |v: f64| fmt_ns(v.round() as u64);
    Some([
        c.name(),
        super::table::job(c),
        ns(s.cpu.ns_per_io),
        or_dash(s.cpu.own_ns_per_io, ns),
        or_dash(k.and_then(|k| k.deferred_ns_per_io), |v| {
            format!("~{}", ns(v))
        }),
        or_dash(k.map(|k| k.minflt_per_io), per_io),
        or_dash(k.map(|k| k.majflt_per_io), per_io),
        or_dash(k.map(|k| k.ctx_vol_per_io), per_io),
        or_dash(k.map(|k| k.ctx_invol_per_io), per_io),
        or_dash(k.and_then(|k| k.rw_calls_per_io), per_io),
        or_dash(k.and_then(|k| k.copied_per_byte), per_io),
        or_dash(k.and_then(|k| k.own_device_per_byte), fmt_device_fraction),
        or_dash(k.and_then(|k| k.other_device_per_byte), fmt_device_fraction),
    ])
}

/// The rows of the measured cases of `pattern`, in the order they ran.
pub fn rows(r: &RunResult, pattern: crate::model::Pattern) -> Vec<[String; 13]> {
    r.cases
        .iter()
        .filter(|c| c.pattern == pattern)
        .filter_map(row)
        .collect()
}

/// True when some case of `r` has its costs measured (results written
/// before them have none: no section).
pub fn any(r: &RunResult) -> bool {
    r.cases
        .iter()
        .any(|c| c.summary.as_ref().is_some_and(|s| s.costs.is_some()))
}

/// The patterns of `r` in the order they ran.
pub fn patterns(r: &RunResult) -> Vec<crate::model::Pattern> {
    let mut out = Vec::new();
    for c in &r.cases {
        if !out.contains(&c.pattern) {
            out.push(c.pattern);
        }
    }
    out
}

/// The terminal's section: a table per pattern, the legend under them, in
/// `width` columns; empty when no case has its costs.
pub fn text(r: &RunResult, width: usize) -> String {
    if !any(r) {
        return String::new();
    }
    let mut out = String::from("\ncosts per I/O:\n");
    for p in patterns(r) {
        let rows = rows(r, p);
        if rows.is_empty() {
            continue;
        }
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(width as u16)
            .set_header(HEADERS);
        for row in rows {
            t.add_row(row);
        }
        // Thirteen columns in 120: one space between them, not two.
        for i in 0..HEADERS.len() {
            if let Some(col) = t.column_mut(i) {
                if i >= 2 {
                    col.set_padding((0, 1))
                        .set_cell_alignment(CellAlignment::Right);
                } else {
                    col.set_padding((1, 0));
                }
            }
        }
        out.push_str(&format!("{}\n{t}\n", p.name()));
    }
    out.push_str(&super::prose::wrap(LEGEND, width, "", ""));
    out
}

/// The Markdown section: a table per pattern and the legend; empty when no
/// case has its costs.
pub fn markdown(r: &RunResult) -> String {
    if !any(r) {
        return String::new();
    }
    let esc = super::markdown::escape;
    let mut out = String::from("\n### Costs per I/O\n\n");
    for p in patterns(r) {
        let rows = rows(r, p);
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "**{}**\n\n| {} |\n",
            esc(p.name()),
            HEADERS.join(" | ")
        ));
        out.push_str(&format!("|{}\n", "---|".repeat(HEADERS.len())));
        for row in rows {
            let cells: Vec<String> = row.iter().map(|c| esc(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out.push('\n');
    }
    out.push_str(&format!("{}\n", esc(LEGEND)));
    out
}

/// The HTML section: a table per pattern and the legend; empty when no
/// case has its costs.
pub fn html(r: &RunResult) -> String {
    if !any(r) {
        return String::new();
    }
    let esc = super::html::escape;
    let mut h = String::from("<section id=\"costs\">\n<h2>Costs per I/O</h2>\n");
    for p in patterns(r) {
        let rows = rows(r, p);
        if rows.is_empty() {
            continue;
        }
        h.push_str(&format!(
            "<h3>{}</h3>\n<div class=\"scroll\"><table>\n<tr>",
            esc(p.name())
        ));
        for (i, head) in HEADERS.iter().enumerate() {
            let class = if i >= 2 { " class=\"n\"" } else { "" };
            h.push_str(&format!("<th{class}>{}</th>", esc(head)));
        }
        h.push_str("</tr>\n");
        for row in rows {
            h.push_str("<tr>");
            for (i, cell) in row.iter().enumerate() {
                let class = if i >= 2 { " class=\"n\"" } else { "" };
                h.push_str(&format!("<td{class}>{}</td>", esc(cell)));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div>\n");
    }
    h.push_str(&format!(
        "<p class=\"sub\">{}</p>\n</section>\n",
        esc(LEGEND)
    ));
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Costs, Measurement};

    fn case(costs: Option<Costs>) -> CaseResult {
        let mut s = Measurement {
            ios: 1000,
            ..Measurement::default()
        };
        s.cpu.ns_per_io = 2_500.0;
        s.cpu.own_ns_per_io = costs.as_ref().map(|_| 2_000.0);
        s.costs = costs;
        CaseResult {
            method: "buffered".into(),
            pattern: crate::model::Pattern::Write,
            block_size: 4096,
            queue_depth: 1,
            threads: 1,
            summary: Some(s),
            ..CaseResult::default()
        }
    }

    #[test]
    fn a_case_row_shows_its_costs_and_a_dash_where_none_was_measured() {
        let row = row(&case(Some(Costs {
            minflt_per_io: 0.004,
            ctx_vol_per_io: 1.0,
            copied_per_byte: Some(1.0),
            own_device_per_byte: Some(1.0),
            other_device_per_byte: Some(0.45),
            deferred_ns_per_io: Some(500.0),
            ..Costs::default()
        })))
        .unwrap();
        assert_eq!(row[2], "2.5 us");
        assert_eq!(row[3], "2.0 us");
        assert_eq!(row[4], "~500 ns");
        assert_eq!(row[5], "<0.01");
        assert_eq!(row[7], "1.00");
        assert_eq!(row[9], "-", "no read/write calls counted");
        assert_eq!(row[10], "1.00");
        assert_eq!((row[11].as_str(), row[12].as_str()), ("100%", "45%"));
        // An older result: the CPU as it was, the rest not measured.
        let old = row_of_old();
        assert_eq!(old[2], "2.5 us");
        assert!(old[3..].iter().all(|c| c == "-"), "{old:?}");
    }

    fn row_of_old() -> [String; 13] {
        row(&case(None)).unwrap()
    }

    #[test]
    fn no_section_for_a_result_without_costs() {
        let mut r = crate::report::testdata::fixture();
        r.cases = vec![case(None)];
        assert_eq!(text(&r, 120), "");
        assert_eq!(markdown(&r), "");
        assert_eq!(html(&r), "");
        r.cases = vec![case(Some(Costs::default()))];
        let t = text(&r, 120);
        assert!(t.lines().all(|l| l.chars().count() <= 120), "{t}");
        assert!(html(&r).contains("<td class=\"n\">0.00</td>"));
        assert_eq!(markdown(&r).matches("| buffered |").count(), 1);
    }
}

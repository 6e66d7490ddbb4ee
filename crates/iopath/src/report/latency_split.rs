//! Where the time goes: each case's mean latency taken apart
//! ([`crate::result::LatencySplit`]), one row per measured case, for the
//! whole report (`--explain`) and HTML, where a stacked bar per method
//! draws it. A part not measured for a case is `-`. The words (legend,
//! sources) are `report::text::why`'s.

use std::fmt::Write as _;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use crate::model::units::fmt_ns;
use crate::report::stacked;
use crate::report::text::why;
use crate::result::{CaseResult, LatencySplit, RunResult};

/// The columns, in order.
pub const HEADERS: [&str; 13] = [
    "method",
    "job",
    "mean",
    "entry",
    "submit",
    "queue",
    "device",
    "complete",
    "cached",
    "unmatched",
    "runnable",
    "unaccounted",
    "source",
];

fn ns(v: f64) -> String {
    let s = fmt_ns(v.abs().round() as u64);
    if v < 0.0 {
        format!("-{s}")
    } else {
        s
    }
}

fn or_dash(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), ns)
}

fn split_of(c: &CaseResult) -> Option<(f64, LatencySplit)> {
    let s = c.summary.as_ref()?;
    Some((s.lat_ns.mean, s.latency_split?))
}

/// The row of a case with a split; `None` for one without. Each part is
/// its share of the mean I/O, weighed as the stacked bar weighs it
/// ([`LatencySplit::weights`]), so that the row adds up to the mean (a
/// part per unmatched call beside the mean read as twice the latency). A
/// withheld split shows no part, only why (its source column).
pub fn row(c: &CaseResult) -> Option<[String; 13]> {
    let (mean, s) = split_of(c)?;
    let parts = s
        .per_io()
        .map(|(_, v)| or_dash(v.filter(|_| s.withheld.is_none())));
    let [entry, submit, queue, device, complete, cached, unmatched, runnable] = parts;
    Some([
        c.name(),
        // Its pattern too: a method's rows of two patterns read alike.
        format!("{} {}", c.pattern.name(), super::table::job(c)),
        ns(mean),
        entry,
        submit,
        queue,
        device,
        complete,
        cached,
        unmatched,
        runnable,
        or_dash(s.unaccounted_ns(mean)),
        why::shown_source(&s),
    ])
}

/// True when some case of `r` has a split.
pub fn any(r: &RunResult) -> bool {
    r.cases.iter().any(|c| split_of(c).is_some())
}

/// The terminal's section: the table, the legend under it, in `width`
/// columns; empty when no case has a split.
pub fn text(r: &RunResult, width: usize) -> String {
    if !any(r) {
        return String::new();
    }
    let rows: Vec<Vec<String>> = r.cases.iter().filter_map(row).map(|r| r.to_vec()).collect();
    let mut out = String::from("\nwhere the time goes:\n");
    out.push_str(&layout(&rows, width));
    let checks = block_checks(r);
    if !checks.is_empty() {
        let lines = why::block_check(&checks);
        out.push_str(&super::prose::wrap(&lines[0], width, "", ""));
        for l in &lines[1..] {
            out.push_str(&super::prose::wrap(l, width, "  ", "    "));
        }
    }
    out.push_str(&super::prose::wrap(why::LEGEND, width, "", ""));
    out
}

/// Each traced read case's block time per read request
/// ([`LatencySplit::block_ns`]) against the `/sys/block` average over the
/// same repetitions ([`LatencySplit::disk_stat_ns`]): the case, the two,
/// ns; none where either is 0 (a few reads under the ticks' millisecond).
pub fn block_checks(r: &RunResult) -> Vec<(String, f64, f64)> {
    r.cases
        .iter()
        // A write case's reads are others' (metadata, other tenants):
        // not its check.
        .filter(|c| !c.pattern.writes())
        .filter_map(|c| {
            let (_, s) = split_of(c)?;
            let case = format!("{} {} {}", c.name(), c.pattern.name(), super::table::job(c));
            let (traced, counted) = (s.block_ns?, s.disk_stat_ns?);
            (traced > 0.0 && counted > 0.0).then_some((case, traced, counted))
        })
        .collect()
}

/// The rows in `width` columns, never breaking a word (a header cut in
/// two, `complet`/`e`, read as two words): the table with its headers
/// whole, else with them shortened (and their key under it), else the
/// same with its cells wrapped at spaces, else a paragraph per row.
fn layout(rows: &[Vec<String>], width: usize) -> String {
    let short: Vec<&str> = HEADERS.iter().map(|h| why::short_header(h)).collect();
    let key = || super::prose::wrap(&why::short_headers_key(&HEADERS), width, "", "");
    if let Some(t) = table(&HEADERS, rows, width, false) {
        return t + "\n";
    }
    if let Some(t) = table(&short, rows, width, false).or_else(|| table(&short, rows, width, true))
    {
        return format!("{t}\n{}", key());
    }
    rows.iter()
        .map(|r| super::prose::wrap(&why::row_line(&HEADERS, r), width, "", "  "))
        .collect()
}

/// A cell's lines wrapped at spaces in `w` columns (a figure and its
/// unit kept together, a longer word whole).
fn wrapped(cell: &str, w: usize) -> String {
    let s = super::prose::wrap(cell, w.max(1), "", "");
    s.trim_end_matches('\n').to_string()
}

fn width_of(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The table of `rows` under `headers` in `width` columns, or `None`
/// where it does not fit: each cell on one line, or with `wrap`, the
/// widest columns narrowed (never below their longest word) and their
/// cells wrapped at spaces.
fn table(headers: &[&str], rows: &[Vec<String>], width: usize, wrap: bool) -> Option<String> {
    let cells = |i: usize| {
        std::iter::once(headers[i]).chain(
            rows.iter()
                .filter_map(move |r| r.get(i).map(String::as_str)),
        )
    };
    let n = headers.len();
    let whole: Vec<usize> = (0..n)
        .map(|i| cells(i).map(width_of).max().unwrap_or(1))
        .collect();
    let least: Vec<usize> = (0..n)
        .map(|i| {
            cells(i)
                .map(|c| width_of(&wrapped(c, 1)))
                .max()
                .unwrap_or(1)
        })
        .collect();
    // The figures right-aligned with a space before them only, the rest
    // with one either side, and a border between columns.
    let figures = |i: usize| (2..n - 1).contains(&i);
    let chrome = n
        + 1
        + (0..n)
            .map(|i| if figures(i) { 1 } else { 2 })
            .sum::<usize>();
    let room = width.checked_sub(chrome)?;
    let mut w = whole.clone();
    let mut total: usize = w.iter().sum();
    while total > room {
        // The widest column that can narrow, by one.
        let i = (0..n)
            .filter(|&i| w[i] > least[i])
            .max_by_key(|&i| (w[i], n - i))?;
        if !wrap {
            return None;
        }
        w[i] -= 1;
        total -= 1;
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(
            (0..n)
                .map(|i| wrapped(headers[i], w[i]))
                .collect::<Vec<_>>(),
        );
    for row in rows {
        t.add_row(
            (0..n)
                .map(|i| wrapped(row.get(i).map_or("", String::as_str), w[i]))
                .collect::<Vec<_>>(),
        );
    }
    for i in 0..n {
        if let Some(col) = t.column_mut(i) {
            if figures(i) {
                col.set_padding((1, 0))
                    .set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    Some(t.to_string())
}

/// The segments of a case's stacked bar: (part's name, ns of the mean
/// I/O, colour). The parts weighed by the calls that made a request (or,
/// without calls, by requests per I/O), the page cache's calls by theirs,
/// and what the parts leave of the mean (unaccounted) last; none for a
/// withheld split.
pub fn segments(mean: f64, s: &LatencySplit) -> Vec<(&'static str, f64, &'static str)> {
    if s.withheld.is_some() {
        return Vec::new();
    }
    let values = s
        .per_io()
        .map(|(_, v)| v.unwrap_or(0.0))
        .into_iter()
        .chain([s.unaccounted_ns(mean).unwrap_or(0.0)]);
    PARTS
        .iter()
        .zip(values)
        .filter(|(_, v)| *v > 0.0 && v.is_finite())
        .map(|(&(name, colour), v)| (name, v, colour))
        .collect()
}

/// The bar's parts in order ([`LatencySplit::per_io`]'s, then
/// unaccounted), with their colours.
const PARTS: [(&str, &str); 9] = [
    ("entry", "#9c755f"),
    ("submit", "#4e79a7"),
    ("queue", "#f28e2b"),
    ("device", "#e15759"),
    ("complete", "#59a14f"),
    ("cached", "#76b7b2"),
    ("unmatched", "#b07aa1"),
    ("runnable", "#edc948"),
    ("unaccounted", "#bab0ac"),
];

/// A stacked bar per method of `cases` (one job), as inline SVG; `None`
/// when none has a split.
pub fn svg(cases: &[&CaseResult]) -> Option<String> {
    let rows: Vec<stacked::Row> = cases
        .iter()
        .filter_map(|c| split_of(c).map(|(m, s)| (c.name(), m, s)))
        .map(|(name, mean, s)| stacked::Row {
            name,
            segments: segments(mean, &s),
            end: format!("{} ({})", ns(mean), why::shown_source(&s)),
        })
        .collect();
    stacked::svg("split", &PARTS, &rows)
}

/// The HTML section: per job, the stacked bars and the table's legend;
/// empty when no case has a split.
pub fn html(r: &RunResult) -> String {
    if !any(r) {
        return String::new();
    }
    let esc = super::html::escape;
    let mut out = String::from("<section id=\"latency-split\">\n<h2>Where the time goes</h2>\n");
    for (job, cases) in super::groups(r) {
        if let Some(svg) = svg(&cases) {
            let _ = write!(out, "<h3>{}</h3>\n{svg}", esc(&job.label()));
        }
    }
    let _ = writeln!(
        out,
        "<p class=\"legend\">{}</p>\n</section>",
        esc(why::LEGEND)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::latency_split::SplitSource;
    use crate::result::Measurement;

    fn case(method: &str, mean: f64, split: LatencySplit) -> CaseResult {
        let mut m = Measurement::default();
        m.lat_ns.mean = mean;
        m.latency_split = Some(split);
        CaseResult {
            method: method.into(),
            summary: Some(m),
            ..CaseResult::default()
        }
    }

    /// A split with every part.
    fn every_part() -> LatencySplit {
        LatencySplit {
            source: SplitSource::Tracepoints,
            fallback: None,
            submission_ns: Some(1.0),
            queue_ns: Some(1.0),
            device_ns: 1.0,
            completion_ns: Some(1.0),
            cached_ns: Some(1.0),
            unmatched_ns: None,
            entry_ns: Some(1.0),
            entry_calls: 10,
            withheld: None,
            ring: None,
            runnable_total_ns: None,
            block_ns: None,
            block_timing: None,
            disk_stat_ns: None,
            requests: 1,
            calls: 1,
            calls_without_request: 1,
            calls_unmatched: 0,
            other_requests: 0,
            ios: 0,
        }
    }

    fn traced(cached: Option<f64>, bare: u64) -> LatencySplit {
        LatencySplit {
            cached_ns: cached,
            calls: 100,
            calls_without_request: bare,
            ..every_part()
        }
    }

    /// The bar's segments are the mean request's: the parts weighed by
    /// the calls that made a request, the cache's calls by theirs, the
    /// rest unaccounted; together, the mean.
    #[test]
    fn the_stacked_bar_adds_up_to_the_mean_request() {
        let s = LatencySplit {
            submission_ns: Some(1000.0),
            queue_ns: Some(2000.0),
            device_ns: 10_000.0,
            completion_ns: Some(3000.0),
            entry_ns: Some(100.0),
            ..traced(Some(1000.0), 300)
        };
        // 1/4 of the calls at 16 us, 3/4 at 1 us, every call's way in and
        // out 0.1 us: 4.85 us, 0.15 unaccounted.
        let seg = segments(5000.0, &s);
        let names: Vec<&str> = seg.iter().map(|x| x.0).collect();
        assert_eq!(
            names,
            [
                "entry",
                "submit",
                "queue",
                "device",
                "complete",
                "cached",
                "unaccounted"
            ]
        );
        let total: f64 = seg.iter().map(|x| x.1).sum();
        assert!((total - 5000.0).abs() < 1e-6, "{total}");
        assert_eq!(seg[0].1, 100.0);
        assert!((seg[6].1 - 150.0).abs() < 1e-9, "{seg:?}");
    }

    /// Two unmatched calls of 10,989 at 63 us each were shown as 63 us
    /// beside a mean of 82 us: a row's parts are their shares of the
    /// mean I/O, and with what is unaccounted they add up to the mean.
    #[test]
    fn a_rows_parts_are_shares_of_the_mean_and_add_up_to_it() {
        let s = LatencySplit {
            submission_ns: Some(2000.0),
            queue_ns: Some(1000.0),
            device_ns: 70_000.0,
            completion_ns: Some(3000.0),
            cached_ns: None,
            unmatched_ns: Some(63_000.0),
            calls: 10_987,
            calls_without_request: 0,
            calls_unmatched: 2,
            ..every_part()
        };
        let r = row(&case("direct", 81_800.0, s)).unwrap();
        assert_eq!(r[9], fmt_ns((63_000.0 * 2.0 / 10_989.0_f64).round() as u64));
        let parsed: Vec<f64> = r[3..12]
            .iter()
            .filter(|v| *v != "-")
            .map(|v| {
                let (n, unit) = v.split_once(' ').unwrap();
                let scale = match unit {
                    "ns" => 1.0,
                    "us" => 1e3,
                    "ms" => 1e6,
                    _ => 1e9,
                };
                n.parse::<f64>().unwrap() * scale
            })
            .collect();
        let total: f64 = parsed.iter().sum();
        assert!((total / 81_800.0 - 1.0).abs() < 0.01, "{r:?} {total}");
    }

    /// A withheld split (others' traffic in the averages) shows no part
    /// and no negative remainder: its row's parts are `-`, its bar empty.
    #[test]
    fn a_withheld_split_shows_no_part_and_no_negative_remainder() {
        use crate::result::latency_split::SplitWithheld;
        let s = LatencySplit {
            ios: 1711,
            ..LatencySplit::from_disk_stat(551, 2646, None).unwrap()
        }
        .own_only(Some(0.55));
        assert_eq!(s.withheld, Some(SplitWithheld::OtherTraffic));
        let c = case("direct", 121_900.0, s);
        let r = row(&c).unwrap();
        assert!(r[3..12].iter().all(|v| v == "-"), "{r:?}");
        assert!(segments(121_900.0, &s).is_empty());
        // Not withheld yet over the mean: still no negative remainder.
        let over = LatencySplit {
            withheld: None,
            ..s
        };
        let r = row(&case("direct", 121_900.0, over)).unwrap();
        assert_eq!(r[11], "-");
        assert!(segments(121_900.0, &over).iter().all(|x| x.1 >= 0.0));
    }

    /// The HTML chart: one SVG per job, a bar group per method with a
    /// rect per part, its title naming the part; the averages' case says
    /// its source.
    #[test]
    fn the_html_section_draws_a_stacked_bar_per_method() {
        let mut averages = LatencySplit::from_disk_stat(3, 100, None).unwrap();
        averages.source = SplitSource::DiskStat;
        let (a, b) = (
            case("direct", 40_000.0, traced(None, 0)),
            case("uring", 45_000.0, averages),
        );
        let h = svg(&[&a, &b]).unwrap();
        assert_eq!(h.matches("<svg").count(), 1, "{h}");
        assert_eq!(h.matches("<g class=\"bar\">").count(), 2, "{h}");
        assert!(h.contains("<title>device: "), "{h}");
        // The legend names every part, unaccounted included.
        for (part, _) in PARTS {
            assert!(h.contains(&format!(">{part}</text>")), "{part}: {h}");
        }
        assert!(h.contains("/sys/block"), "{h}");
        assert!(h.contains(">direct</text>") && h.contains(">uring</text>"));
        let none = CaseResult::default();
        assert_eq!(svg(&[&none]), None);
    }

    /// The words of `s`, without the punctuation around them nor the
    /// table's borders.
    fn words_of(s: &str) -> Vec<String> {
        s.split(|c: char| c.is_whitespace() || "│┆┌┐└┘├┤┬┴┼─═╞╡╪╧╤┄".contains(c))
            .map(|w| w.trim_matches(|c: char| ",.;:()".contains(c)).to_string())
            .filter(|w| !w.is_empty())
            .collect()
    }

    /// A split with every part, its block time per read `traced` and as
    /// `/sys/block` averaged it (`counted`).
    fn checked(traced: f64, counted: f64) -> LatencySplit {
        LatencySplit {
            block_ns: Some(traced),
            disk_stat_ns: Some(counted),
            ..every_part()
        }
    }

    /// The check that the tracer timed what the kernel counts is said
    /// under the table, for each case with both figures, and not for one
    /// without.
    #[test]
    fn the_traced_block_time_is_set_against_sys_block_under_the_table() {
        let mut r = crate::report::testdata::fixture();
        let mut write = case("direct", 60_000.0, checked(129_700.0, 125_000.0));
        write.pattern = crate::model::Pattern::RandWrite;
        r.cases = vec![
            case("direct", 60_000.0, checked(55_300.0, 54_300.0)),
            case("buffered", 40_000.0, every_part()),
            // Others' reads beside a write; reads under the ticks' ms.
            write,
            case("dontcache", 9_000.0, checked(8_000.0, 0.0)),
        ];
        let checks = block_checks(&r);
        assert_eq!(checks.len(), 1, "{checks:?}");
        assert!(checks[0].0.starts_with("direct "), "{checks:?}");
        let out = text(&r, 200);
        assert!(
            out.contains("\n  direct read 0 Q0T0: 55.3 us traced, 54.3 us counted (1.02)\n"),
            "{out}"
        );
        r.cases.remove(0);
        assert!(
            !text(&r, 200).contains("traced against"),
            "{}",
            text(&r, 200)
        );
    }

    /// Run as `iopath run --latency-split ... | cat`, the table's
    /// headers broke mid-word (`complet`/`e`, `unaccou`/`nted`), and so
    /// did `tracepo`/`ints`: at any width, every word the section prints
    /// is whole, and its lines keep to the width.
    #[test]
    fn the_split_table_never_breaks_a_word_at_any_width() {
        use crate::result::latency_split::SplitWithheld;
        let withheld = LatencySplit {
            withheld: Some(SplitWithheld::OwnTrafficUnknown),
            ..LatencySplit::from_disk_stat(3, 100, None).unwrap()
        };
        let mut r = crate::report::testdata::fixture();
        r.cases = vec![
            case("direct", 109_600.0, traced(Some(100.0), 3)),
            case("uring-sqpoll", 202_400.0, checked(27_000.0, 26_000.0)),
            case("buffered", 21_300.0, withheld),
        ];
        let rows: Vec<Vec<String>> = r.cases.iter().filter_map(row).map(|r| r.to_vec()).collect();
        // Every word the section may print whole: the cells', the headers'
        // whole and short, the key's, each row's line, the legend's.
        let mut whole: Vec<String> = rows.iter().flat_map(|r| words_of(&r.join(" "))).collect();
        for h in HEADERS {
            whole.extend(words_of(h));
            whole.extend(words_of(why::short_header(h)));
        }
        whole.extend(words_of(&why::short_headers_key(&HEADERS)));
        whole.extend(words_of(why::LEGEND));
        whole.extend(words_of(&why::block_check(&block_checks(&r)).join(" ")));
        for r in &rows {
            whole.extend(words_of(&why::row_line(&HEADERS, r)));
        }
        whole.extend(words_of("where the time goes"));
        for width in 20..=200 {
            let out = text(&r, width);
            for w in words_of(&out) {
                assert!(
                    whole.contains(&w),
                    "{w:?} is part of a word at {width}:\n{out}"
                );
            }
            for l in out.lines() {
                let one_word = words_of(l).len() == 1;
                assert!(l.chars().count() <= width || one_word, "{width}:\n{out}");
            }
        }
        // Where the whole headers fit, they are the table's.
        assert!(text(&r, 200).contains("unaccounted┆"), "{}", text(&r, 200));
        // Shortened with their key at 120 (--explain), a line a row at 80.
        insta::assert_snapshot!(format!("{}\n{}", layout(&rows, 120), layout(&rows, 80)));
    }
}

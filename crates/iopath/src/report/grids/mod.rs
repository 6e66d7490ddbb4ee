//! The preset views: grids that put a preset's results in the shape of its
//! source — CrystalDiskMark's read/write grid, NIOBench's statistics per
//! mode and operation — and the source's published figures beside
//! iopath's. Each grid is data; the terminal table, HTML and Markdown
//! draw it their own way.

mod numa;

use numa::numa;

use crate::import::preset::Layout;
use crate::model::job::Published;
use crate::model::units::fmt_count;
use crate::model::Pattern;
use crate::result::{CaseResult, RunResult};

/// A small table: a title, a header, rows of cells, notes under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub title: String,
    pub header: Vec<String>,
    /// Which columns hold numbers (right-aligned).
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// Every grid of a result: its preset's layout, then the published
/// figures. Empty outside presets.
pub fn all(r: &RunResult) -> Vec<Grid> {
    let mut out = Vec::new();
    let layout = r.config.layout.or_else(|| {
        r.config
            .preset
            .as_deref()
            .and_then(|p| crate::import::preset::find(p).ok())
            .map(|p| p.job.layout)
    });
    match layout {
        Some(Layout::Crystal) => out.extend(crystal(r)),
        Some(Layout::Niobench) => out.extend(niobench(r)),
        Some(Layout::Daxbench) => out.extend(mappings(r)),
        Some(Layout::Numa) => out.extend(numa(r)),
        Some(Layout::Hmmap) => out.extend(hmmap(r)),
        _ => {}
    }
    out.extend(published(r));
    out
}

fn mbs(bw: f64) -> String {
    let v = bw / 1e6;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 || v <= 0.0 {
        format!("{v:.2}")
    } else {
        // Under 1 MB/s (hmmap's 8-byte reads): two significant digits,
        // not a 0.00 that reads as nothing moved, nor 0.08 beside 0.0018.
        let digits = (1.0 - v.log10().floor()).clamp(2.0, 12.0) as usize;
        format!("{v:.digits$}")
    }
}

fn reads(p: &Pattern) -> bool {
    matches!(p, Pattern::Read | Pattern::RandRead)
}

/// CrystalDiskMark's grid: a row per test label, read and write MB/s side
/// by side, with IOPS and p99 latency added.
fn crystal(r: &RunResult) -> Option<Grid> {
    let mut labels: Vec<&str> = Vec::new();
    for c in &r.cases {
        if let Some(l) = c.label.as_deref() {
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
    }
    if labels.is_empty() {
        return None;
    }
    let find = |label: &str, read: bool| {
        r.cases.iter().find(|c| {
            c.label.as_deref() == Some(label) && reads(&c.pattern) == read && c.summary.is_some()
        })
    };
    let cell = |c: Option<&CaseResult>, f: &dyn Fn(&CaseResult) -> String| c.map_or("-".into(), f);
    let rows = labels
        .iter()
        .map(|l| {
            let (rd, wr) = (find(l, true), find(l, false));
            let s = |c: &CaseResult| c.summary.clone().unwrap_or_default();
            vec![
                l.to_string(),
                cell(rd, &|c| mbs(s(c).bw_bytes_per_s)),
                cell(wr, &|c| mbs(s(c).bw_bytes_per_s)),
                cell(rd, &|c| fmt_count(s(c).iops)),
                cell(wr, &|c| fmt_count(s(c).iops)),
                cell(rd, &|c| p99(&s(c))),
                cell(wr, &|c| p99(&s(c))),
            ]
        })
        .collect();
    Some(Grid {
        title: format!(
            "{} (MB/s = 10^6 bytes/s, median of the repetitions)",
            r.config.preset.as_deref().unwrap_or("crystal")
        ),
        header: [
            "test",
            "Read MB/s",
            "Write MB/s",
            "Read IOPS",
            "Write IOPS",
            "Read p99",
            "Write p99",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, true, true, true],
        rows,
        notes: vec!["CrystalDiskMark shows the best of its runs; iopath the median.".into()],
    })
}

/// NIOBench's report: per mode (label) and operation, the median, mean,
/// min and max MB/s over the iterations.
fn niobench(r: &RunResult) -> Option<Grid> {
    let rows: Vec<Vec<String>> = r
        .cases
        .iter()
        .filter(|c| c.label.is_some())
        .map(|c| {
            let st = c.stats.as_ref().map(|s| &s.bw_bytes_per_s);
            let f = |v: Option<f64>| v.map_or("-".into(), mbs);
            vec![
                c.label.clone().unwrap_or_default(),
                c.pattern.to_string(),
                c.name(),
                c.sync.to_string(),
                f(st.map(|s| s.median)),
                f(st.map(|s| s.mean)),
                f(st.map(|s| s.min)),
                f(st.map(|s| s.max)),
                st.map_or("-".into(), |s| s.n.to_string()),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| Grid {
        title: "niobench: MB/s per mode and operation over the iterations".into(),
        header: [
            "mode", "operation", "method", "sync", "median", "mean", "min", "max", "n",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, false, false, false, true, true, true, true, true],
        rows,
        notes: vec![
            "MB/s = 10^6 bytes/s; copy: bytes copied / time through the destination's flush and close.".into(),
            "Every iteration in order is in the JSON (repetitions[]) and drawn in the HTML report.".into(),
        ],
    })
}

/// DAXBench64's four numbers for every mapped case: the file descriptor,
/// the mapping's length, its first and last address (hex), from the
/// engine's mapping note (first repetition).
fn mappings(r: &RunResult) -> Option<Grid> {
    use iopath_io::engines::mmap::parse_mapping_note;
    let rows: Vec<Vec<String>> = r
        .cases
        .iter()
        .filter_map(|c| {
            let m = c.notes.iter().find_map(|n| parse_mapping_note(n))?;
            Some(vec![
                c.name(),
                c.pattern.to_string(),
                format!("{} ({:#x})", m.fd, m.fd),
                format!("{:#x} ({})", m.len, crate::model::units::fmt_bytes(m.len)),
                format!("{:#x}", m.start),
                format!("{:#x}", m.end),
            ])
        })
        .collect();
    let dax: Vec<String> = r
        .cases
        .iter()
        .filter(|c| c.method == iopath_io::Method::MmapDax)
        .filter_map(|c| {
            c.skipped
                .as_ref()
                .map(|why| format!("mmap-dax not run: {why}"))
        })
        .take(1)
        .collect();
    (!rows.is_empty() || !dax.is_empty()).then(|| Grid {
        title: "the mappings (DAXBench64's four numbers)".into(),
        header: ["method", "pattern", "fd", "length", "start", "last byte"]
            .map(String::from)
            .to_vec(),
        numeric: vec![false, false, true, true, true, true],
        rows,
        notes: dax,
    })
}

/// hmmap's table: for each thread count and method, the seconds W (write
/// everything), R (read everything) and RR (8-byte random reads) took —
/// the median repetition's duration — beside MB/s, and the seed's seconds.
fn hmmap(r: &RunResult) -> Option<Grid> {
    let mut keys: Vec<HmmapRow> = Vec::new();
    for c in r.cases.iter().filter(|c| c.label.is_some()) {
        let k = HmmapRow {
            threads: c.threads,
            method: c.name(),
        };
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.sort_by_key(|k| k.threads);
    let mut rows: Vec<Vec<String>> = keys.iter().map(|k| k.cells(r)).collect();
    let mut header: Vec<String> = [
        "threads",
        "method",
        "W s",
        "R s",
        "RR s",
        "W MB/s",
        "R MB/s",
        "RR MB/s",
        "seed W R RR (s)",
        "",
    ]
    .map(String::from)
    .to_vec();
    let mut numeric = vec![true, false, true, true, true, true, true, true, true, false];
    // The last column says why a row did not run: none when all ran.
    if rows.iter().all(|r| r.last().is_some_and(String::is_empty)) {
        header.pop();
        numeric.pop();
        for r in &mut rows {
            r.pop();
        }
    }
    (!rows.is_empty()).then(|| Grid {
        title: "hmmap: seconds per W (write all), R (read all), RR (8-byte random reads, touch-limited), median repetition (~: from its rate)".into(),
        header,
        numeric,
        rows,
        notes: std::iter::once(
            "Seed (seconds, 10 runs, 128 MiB cache): mmap under a memory cgroup and hmmap on a 4 GiB brd device beside mmap, ucache and uffd; hmmap write-protect on the memory backend beside uffd-wp. A run with another --size or --touch does other work than the seed's: compare the shape, not the seconds.".to_string(),
        )
        .chain(extrapolated_note(r))
        .collect(),
    })
}

/// One row of hmmap's table: a thread count and a method.
#[derive(Debug, Clone, PartialEq)]
struct HmmapRow {
    threads: u32,
    method: String,
}

impl HmmapRow {
    /// Its case of one column (W, R, RR).
    fn case<'a>(&self, r: &'a RunResult, col: &str) -> Option<&'a CaseResult> {
        r.cases.iter().find(|c| {
            c.threads == self.threads && c.name() == self.method && c.label.as_deref() == Some(col)
        })
    }

    fn cells(&self, r: &RunResult) -> Vec<String> {
        // The whole operation's seconds: measured when the median
        // repetition was the whole operation, else extrapolated from its
        // rate (`~`).
        let secs = |c: Option<&CaseResult>| {
            c.and_then(whole_secs)
                .map_or("-".to_string(), |(s, approx)| {
                    format!("{}{s:.2}", if approx { "~" } else { "" })
                })
        };
        let rate = |c: Option<&CaseResult>| {
            c.and_then(|c| c.summary.as_ref())
                .map_or("-".to_string(), |s| mbs(s.bw_bytes_per_s))
        };
        let seed = |c: Option<&CaseResult>| {
            c.and_then(|c| c.published.as_ref())
                .and_then(|p| p.value)
                .map_or("-".to_string(), |v| format!("{v:.2}"))
        };
        let (w, rd, rr) = (self.case(r, "W"), self.case(r, "R"), self.case(r, "RR"));
        let not_run = [w, rd, rr].iter().flatten().find_map(|c| c.skipped.clone());
        vec![
            self.threads.to_string(),
            self.method.clone(),
            secs(w),
            secs(rd),
            secs(rr),
            rate(w),
            rate(rd),
            rate(rr),
            format!("{} {} {}", seed(w), seed(rd), seed(rr)),
            not_run.map_or(String::new(), |why| format!("not run: {why}")),
        ]
    }
}

/// Why seconds marked `~` are from the rate: what the run asked for made a
/// repetition move other than one whole operation. `None` when none did.
fn extrapolated_note(r: &RunResult) -> Option<String> {
    let sliced = r
        .cases
        .iter()
        .any(|c| whole_secs(c).is_some_and(|(_, approx)| approx));
    if !sliced {
        return None;
    }
    // Why a repetition moved other than one whole operation, from what
    // the run asked: a time limit (a slice, or more than one pass for a
    // fast method that wraps), else only the case timeout.
    let why = match r.config.time_limit_ns.filter(|_| !r.config.whole_pass) {
        Some(ns) => format!(
            "--time {} moved part of it, or for a fast method more than one pass; or --case-timeout stopped it",
            crate::model::units::fmt_duration(std::time::Duration::from_nanos(ns))
        ),
        None => "--case-timeout stopped it part-way".to_string(),
    };
    let advice = if r.config.whole_pass {
        ""
    } else {
        "; --time pass measures whole operations (hours at 4 GiB on a disk: mmap's RR thrashes)"
    };
    Some(format!("~: from the rate, not timed: a repetition moved other than one whole operation ({why}), so its seconds are the whole operation's (W, R: one pass over the file; RR: the bytes touched) at the rate measured, which MB/s shows{advice}"))
}

/// The source's figures beside iopath's, for the cases that have one.
fn published(r: &RunResult) -> Option<Grid> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut worded: Vec<&str> = Vec::new();
    for c in &r.cases {
        let Some(p) = c.published.as_ref() else {
            continue;
        };
        if p.value.is_none() {
            // A finding in words is about the group: one row with every
            // method's figure, once per label.
            let label = c.label.as_deref().unwrap_or("");
            if worded.contains(&label) {
                continue;
            }
            worded.push(label);
            rows.push(worded_row(r, c, p));
            continue;
        }
        rows.push(figure_row(r, c, p));
    }
    (!rows.is_empty()).then(|| Grid {
        title: "beside the source: its published figures and ours".into(),
        header: [
            "case",
            "method",
            "published",
            "here",
            "here / published",
            "memory held",
            "published on",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, false, false, false, true, true, false],
        rows,
        notes: published_notes(r),
    })
}

/// The case a published figure is about: its label, or its job where
/// several jobs share the label (hmmap's W at 1 to 16 threads).
fn published_case(r: &RunResult, c: &CaseResult, p: &Published) -> String {
    let shared_label = c.label.is_some()
        && r.cases
            .iter()
            .any(|d| d.label == c.label && d.published.is_some() && d.job() != c.job());
    match &c.label {
        Some(l) if !shared_label || p.value.is_none() => l.clone(),
        _ => c.job().label(),
    }
}

/// A finding in words: one row for the group, with every method's (or
/// placement's) figure here.
fn worded_row(r: &RunResult, c: &CaseResult, p: &Published) -> Vec<String> {
    let here: Vec<String> = r
        .cases
        .iter()
        .filter(|d| d.label == c.label && d.pattern == c.pattern)
        .filter_map(|d| {
            // Cases of one label differ by method, or by placement.
            let who = d.pair.clone().unwrap_or_else(|| d.name());
            d.summary
                .as_ref()
                .map(|s| format!("{who} {} MB/s", mbs(s.bw_bytes_per_s)))
        })
        .collect();
    vec![
        published_case(r, c, p),
        "all".into(),
        p.show(),
        if here.is_empty() {
            "not run here".into()
        } else {
            here.join("; ")
        },
        "-".into(),
        "-".into(),
        p.on.clone(),
    ]
}

/// A published figure beside the case's own, their ratio and the memory
/// the case held.
fn figure_row(r: &RunResult, c: &CaseResult, p: &Published) -> Vec<String> {
    // Seconds of the whole operation: extrapolated (`~`) when the
    // repetitions moved part of it.
    let whole = whole_secs(c);
    let secs = |s: &crate::result::Measurement| {
        whole.map_or(s.duration_ns, |(secs, _)| (secs * 1e9).round() as u64)
    };
    let approx = |_: &crate::result::Measurement| {
        if whole.is_some_and(|(_, a)| a) && p.unit.as_deref() == Some("s") {
            "~"
        } else {
            ""
        }
    };
    let ours = match (&c.summary, &c.skipped) {
        (Some(s), _) => p
            .ours_with(s.bw_bytes_per_s, s.iops, Some(secs(s)))
            .map(|o| format!("{}{o}", approx(s)))
            .unwrap_or_else(|| "see the tables".into()),
        (None, Some(_)) if c.not_reached() => "not reached (interrupted)".into(),
        (None, Some(_)) => "not run here".into(),
        (None, None) => "-".into(),
    };
    let ratio = match (&c.summary, p.value) {
        (Some(s), Some(v)) if v > 0.0 => p
            .ours_value(s.bw_bytes_per_s, s.iops, Some(secs(s)))
            .filter(|o| o.is_finite())
            .map_or("-".into(), |o| format!("{}{:.2}x", approx(s), o / v)),
        _ => "-".into(),
    };
    let held = c.summary.as_ref().map_or("-".into(), |s| {
        crate::model::units::fmt_bytes(held_bytes(&s.memory))
    });
    vec![
        published_case(r, c, p),
        c.name(),
        p.show(),
        ours,
        ratio,
        held,
        p.on.clone(),
    ]
}

/// Under the published figures: what comparing them means, and what
/// "memory held" counts.
fn published_notes(r: &RunResult) -> Vec<String> {
    vec![
        "Different machines: compare the shape (which method wins, by about how much), not the numbers."
            .into(),
        format!(
            "memory held: the file's pages left in the page cache plus the I/O buffers (median); a direct scan holds about depth x block size{}",
            if r.cases.iter().any(|c| {
                c.method
                    .base()
                    .is_some_and(iopath_io::Method::is_user_space_cache)
            }) {
                "; ucache, uffd and uffd-wp count their cache's budget (--ucache-size): what they may hold, not what they filled"
            } else {
                ""
            }
        ),
    ]
}

/// The seconds of a case's whole operation (one pass over its range, or
/// its byte count: [`CaseResult::pass_bytes`]) in its median repetition,
/// and whether they are extrapolated: measured when the repetition moved
/// exactly that, else those bytes over the rate measured (a time limit
/// cut the operation short, or a wrapped one ran past it). Results
/// without `pass_bytes` fall back on the case timeout's extrapolation.
fn whole_secs(c: &CaseResult) -> Option<(f64, bool)> {
    let s = c.summary.as_ref()?;
    match c.pass_bytes {
        Some(whole) if whole > 0 && s.io_bytes != whole => {
            (s.bw_bytes_per_s > 0.0).then(|| (whole as f64 / s.bw_bytes_per_s, true))
        }
        _ => Some(match s.capped {
            Some(k) => (k.extrapolated_ns as f64 / 1e9, true),
            None => (s.duration_ns as f64 / 1e9, false),
        }),
    }
}

/// What a case held: the file's pages in the page cache and the engine's
/// buffers (schema-1 results have no total).
fn held_bytes(m: &crate::result::Memory) -> u64 {
    m.total_bytes.max(m.page_cache_bytes + m.buffers_bytes)
}

/// A grid as a terminal table: in [`super::table::WIDTH`] columns, its
/// text columns wrapping (numbers keep their width), or as wide as its
/// cells with `wide`.
pub fn text(g: &Grid, wide: bool) -> String {
    use comfy_table::presets::UTF8_FULL_CONDENSED;
    use comfy_table::{Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table};
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_header(g.header.clone());
    if wide {
        t.set_content_arrangement(ContentArrangement::Disabled);
    } else {
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(super::table::WIDTH as u16);
    }
    for row in &g.rows {
        t.add_row(row.iter().enumerate().map(|(i, v)| {
            let c = Cell::new(v);
            if g.numeric.get(i).copied().unwrap_or(false) {
                c.set_alignment(CellAlignment::Right)
            } else {
                c
            }
        }));
    }
    if !wide {
        for (i, numeric) in g.numeric.iter().enumerate() {
            if *numeric {
                if let Some(col) = t.column_mut(i) {
                    col.set_constraint(ColumnConstraint::ContentWidth);
                }
            }
        }
    }
    let mut s = format!("{}\n{t}\n", g.title);
    for n in &g.notes {
        s.push_str(&format!("  {n}\n"));
    }
    s
}

/// A p99 latency, `~` with too few requests behind it.
fn p99(s: &crate::result::Measurement) -> String {
    crate::model::units::fmt_percentile(s.lat_ns.p99, 0.99, s.lat_ns.count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Measurement;

    fn placed(pair: &str, mibs: &[f64]) -> CaseResult {
        let mut c = crate::analysis::verdict::tests::case("uring", "write", mibs, 1000.0, 4096);
        c.label = Some("1 MiB direct at depth 8".into());
        c.pair = Some(pair.into());
        c.summary = Measurement::median_of(&c.measured());
        c
    }

    fn numa_run(cases: Vec<CaseResult>) -> RunResult {
        RunResult {
            cases,
            ..crate::report::testdata::fixture()
        }
    }

    /// An hmmap case whose median repetition moved `io_bytes` in
    /// `duration_ns` of an operation of `pass_bytes`.
    fn hmmap_case(label: &str, io_bytes: u64, duration_ns: u64, pass_bytes: u64) -> CaseResult {
        let mut c = crate::analysis::verdict::tests::case("mmap", "read", &[1.0], 0.0, 0);
        c.label = Some(label.into());
        c.pass_bytes = Some(pass_bytes);
        c.summary = Some(Measurement {
            io_bytes,
            duration_ns,
            bw_bytes_per_s: io_bytes as f64 / (duration_ns as f64 / 1e9),
            ..Measurement::default()
        });
        c
    }

    /// A time slice of the operation gives the whole operation's seconds
    /// at the rate measured, marked `~`, and its MB/s as measured; a
    /// whole pass gives its measured duration, unmarked.
    #[test]
    fn hmmap_seconds_of_a_slice_are_extrapolated_from_its_rate() {
        let gib = 1u64 << 30;
        let r = RunResult {
            cases: vec![
                // 512 MiB of a 4 GiB pass in 1 s: 8 s for the pass.
                hmmap_case("W", gib / 2, 1_000_000_000, 4 * gib),
                // The whole pass, in 3.5 s.
                hmmap_case("R", 4 * gib, 3_500_000_000, 4 * gib),
                // 80 KiB of 8 MiB touched in 1 s: 102.4 s.
                hmmap_case("RR", 80 << 10, 1_000_000_000, 8 << 20),
            ],
            ..crate::report::testdata::fixture()
        };
        let g = hmmap(&r).unwrap();
        assert_eq!(g.rows.len(), 1);
        let row = &g.rows[0];
        assert_eq!(row[2], "~8.00", "{row:?}");
        assert_eq!(row[3], "3.50", "{row:?}");
        assert_eq!(row[4], "~102.40", "{row:?}");
        assert_eq!(row[5], mbs(gib as f64 / 2.0), "{row:?}");
        assert_eq!(row[7], "0.082", "{row:?}");
        assert_eq!(mbs(500_000.0), "0.50");
        assert_eq!(mbs(670.0), "0.00067", "a trickle is not 0.00");
        assert!(
            g.notes
                .iter()
                .any(|n| n.starts_with("~: from the rate, not timed")),
            "{:?}",
            g.notes
        );
        // Every row ran: no empty "why not run" column (acceptance of
        // issue 18: hmmap at defaults printed one, headed by nothing).
        assert_eq!(g.header.len(), 9, "{:?}", g.header);
        assert!(g.rows.iter().all(|r| r.len() == 9), "{:?}", g.rows);
        // A row that did not run brings the column back, with the reason.
        let mut skipped = hmmap_case("W", 0, 0, 4 * gib);
        skipped.method = "uffd".into();
        skipped.summary = None;
        skipped.skipped = Some("no userfaultfd".into());
        let mut cases = r.cases.clone();
        cases.push(skipped);
        let g = hmmap(&RunResult {
            cases,
            ..crate::report::testdata::fixture()
        })
        .unwrap();
        assert_eq!(g.header.len(), 10, "{:?}", g.header);
        assert_eq!(g.rows[1][9], "not run: no userfaultfd", "{:?}", g.rows);
        // Under --time pass only the case timeout cuts an operation: the
        // note says so, and does not offer --time pass back.
        let mut whole = RunResult {
            cases: vec![hmmap_case("RR", 80 << 10, 1_000_000_000, 8 << 20)],
            ..crate::report::testdata::fixture()
        };
        whole.config.whole_pass = true;
        let note = hmmap(&whole)
            .unwrap()
            .notes
            .into_iter()
            .find(|n| n.starts_with("~:"))
            .unwrap();
        assert!(
            note.contains("(--case-timeout stopped it part-way)"),
            "{note}"
        );
        assert!(!note.contains("--time pass"), "{note}");
        // Whole passes only: nothing marked, no note.
        let r = RunResult {
            cases: vec![hmmap_case("R", 4 * gib, 3_500_000_000, 4 * gib)],
            ..crate::report::testdata::fixture()
        };
        let g = hmmap(&r).unwrap();
        assert_eq!(g.rows[0][3], "3.50");
        assert!(!g.notes.iter().any(|n| n.contains("~")), "{:?}", g.notes);
    }

    #[test]
    fn a_remote_pair_measurably_slower_is_called_out() {
        let fast = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0];
        let slow = [60.0, 61.0, 59.0, 60.5, 59.5, 60.0];
        let r = numa_run(vec![
            placed("cpu n0 local / mem n0 local", &fast),
            placed("cpu n0 local / mem n1 remote", &fast),
            placed("cpu n1 remote / mem n0 local", &slow),
            placed("cpu n1 remote / mem n1 remote", &slow),
        ]);
        let g = numa(&r).unwrap();
        assert_eq!(g.rows.len(), 4);
        assert_eq!(g.rows[0][4], "baseline");
        assert!(g.rows[2][4].starts_with("0.60x"), "{:?}", g.rows[2]);
        assert_eq!(g.rows[2][5], "yes");
        assert_eq!(g.rows[1][5], "no (intervals overlap)");
        assert_eq!(g.notes.len(), 1);
        // The slower remote pair, its ratio to local/local the figure.
        match &numa::findings(&r)[..] {
            [numa::Finding::Matters { pair, k }] => {
                assert_eq!(pair, "cpu n1 remote / mem n0 local");
                assert!((k.ratio - 0.6).abs() < 0.01, "{k:?}");
            }
            other => panic!("{other:?}"),
        }
        insta::assert_snapshot!("numa_note_placement_matters", &g.notes[0]);
    }

    #[test]
    fn overlapping_pairs_make_no_difference_and_one_pair_has_nothing_to_compare() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0];
        let b = [100.2, 100.8, 99.1, 100.4, 99.7, 100.1];
        let r = numa_run(vec![
            placed("cpu n0 local / mem n0 local", &a),
            placed("cpu n1 remote / mem n1 remote", &b),
        ]);
        let mut notes = numa(&r).unwrap().notes;
        assert_eq!(numa::findings(&r), [numa::Finding::NoDifference]);
        let r = numa_run(vec![placed("cpu n0 local / mem n0 local", &a)]);
        notes.extend(numa(&r).unwrap().notes);
        assert_eq!(numa::findings(&r), [numa::Finding::OnePair]);
        let r = numa_run(vec![
            placed("cpu n0 local / mem n0 local", &a[..3]),
            placed("cpu n1 remote / mem n1 remote", &[50.0, 51.0, 49.0]),
        ]);
        notes.extend(numa(&r).unwrap().notes);
        match &numa::findings(&r)[..] {
            [numa::Finding::Undersampled { pair, k }] => {
                assert_eq!(pair, "cpu n1 remote / mem n1 remote");
                assert!((k.ratio - 0.5).abs() < 0.01, "{k:?}");
            }
            other => panic!("{other:?}"),
        }
        insta::assert_snapshot!(
            "numa_notes_no_difference_one_pair_too_few",
            notes.join("\n")
        );
    }
}

//! Charts of a run, drawn once with plotters onto either backend: SVG for
//! the HTML report (inline, no network) and PNG for `--png-dir` (text
//! rendered from an embedded font, so no system font is needed).
//!
//! Every chart of one group of cases (a [`Job`]: the cases that differ only
//! by method) is a [`Figure`]: throughput with the 95% interval of the
//! median as whiskers, latency percentiles on a log scale, the throughput
//! of every repetition in order (the "cardiogram"), the throughput within
//! the median repetition over time, and the costs (CPU per I/O, memory
//! held, device fraction). A method has the same colour in every chart.

mod axis;
mod cardiogram;
mod costs;
mod draw;
mod latency;
mod throughput;
mod timeline;

use plotters::prelude::RGBColor;

use crate::model::units::fmt_bs;
use crate::report::export::{Export, Exporter, NamedFile};
use crate::result::{CaseResult, Job, RunResult};

use axis::Fmt;
use cardiogram::cardiogram;
use costs::costs;
pub use draw::{png, svg, FONT};
use latency::latency;
use throughput::throughput;
pub use timeline::median_repetition;
use timeline::within;

const MIB: f64 = 1024.0 * 1024.0;

/// The colour of a method, the same in every chart and in the HTML tables
/// (Tableau 10, a palette that stays apart for most colour-blind readers).
/// A second arm of an A/A check (`direct#2`) gets its method's colour,
/// lighter.
pub fn method_colour(name: &str) -> RGBColor {
    match name.split_once('#') {
        Some((method, _)) => {
            let RGBColor(r, g, b) = base_colour(method);
            let light = |c: u8| c + (255 - c) / 2;
            RGBColor(light(r), light(g), light(b))
        }
        None => base_colour(name),
    }
}

fn base_colour(method: &str) -> RGBColor {
    const EXTRA: [RGBColor; 4] = [
        RGBColor(0xff, 0x9d, 0xa7),
        RGBColor(0x17, 0xbe, 0xcf),
        RGBColor(0x8c, 0x56, 0x4b),
        RGBColor(0x7f, 0x7f, 0x7f),
    ];
    match method {
        "buffered" => RGBColor(0x4e, 0x79, 0xa7),
        "direct" => RGBColor(0xf2, 0x8e, 0x2b),
        "mmap" => RGBColor(0x59, 0xa1, 0x4f),
        "uring" => RGBColor(0xe1, 0x57, 0x59),
        "uring-buffered" => RGBColor(0xb0, 0x7a, 0xa1),
        "uring-sqpoll" => RGBColor(0x76, 0xb7, 0xb2),
        "uring-iopoll" => RGBColor(0xc9, 0xa2, 0x27),
        "aio" => RGBColor(0x9c, 0x75, 0x5f),
        "null" => RGBColor(0xba, 0xb0, 0xac),
        "mmap-dax" => RGBColor(0x2f, 0x6b, 0x2a),
        "copy-file-range" => RGBColor(0x49, 0x98, 0x94),
        "sendfile" => RGBColor(0xd3, 0x72, 0x95),
        other => {
            let h = other
                .bytes()
                .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
            EXTRA[h % EXTRA.len()]
        }
    }
}

/// `#4e79a7`.
pub fn css_colour(method: &str) -> String {
    let RGBColor(r, g, b) = method_colour(method);
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One chart, ready to draw on either backend.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Unique within a run and safe as a file name: `randread-4k-q32-t1-latency`.
    pub id: String,
    /// Drawn at the top of the chart.
    pub title: String,
    /// What to read from it, shown under it in the HTML report.
    pub caption: String,
    pub width: u32,
    pub height: u32,
    plot: Plot,
}

#[derive(Debug, Clone)]
enum Plot {
    Bars(Bars),
    Lines(Lines),
    /// Bar panels side by side.
    Row(Vec<Bars>),
}

/// Horizontal bars, one per method, top to bottom in case order.
#[derive(Debug, Clone)]
struct Bars {
    title: String,
    axis: String,
    fmt: Fmt,
    log: bool,
    rows: Vec<Bar>,
    /// A vertical reference line (100% for the device fraction).
    reference: Option<f64>,
    /// Shown instead of bars when there are none.
    empty: String,
}

#[derive(Debug, Clone)]
struct Bar {
    method: String,
    value: f64,
    /// The 95% interval, drawn as whiskers when finite.
    ci: Option<[f64; 2]>,
    label: String,
}

#[derive(Debug, Clone)]
struct Lines {
    x_axis: String,
    y_axis: String,
    /// Category names for x = 0, 1, 2, ...; numbers when empty.
    x_categories: Vec<String>,
    x_fmt: Fmt,
    y_fmt: Fmt,
    log_y: bool,
    series: Vec<Line>,
}

#[derive(Debug, Clone)]
struct Line {
    method: String,
    /// (x, y, hollow): hollow marks a warm-up repetition.
    points: Vec<(f64, f64, bool)>,
}

/// The cases of a group that have something to draw.
/// The reference method `null` (no I/O) is left out when a real method
/// was measured: its speed would flatten every other bar and line.
fn drawn<'c>(cases: &[&'c CaseResult]) -> Vec<&'c CaseResult> {
    let measured: Vec<&CaseResult> = cases
        .iter()
        .copied()
        .filter(|c| c.summary.is_some())
        .collect();
    if measured.iter().all(|c| is_reference(c)) {
        return measured;
    }
    measured.into_iter().filter(|c| !is_reference(c)).collect()
}

fn is_reference(c: &CaseResult) -> bool {
    c.method == iopath_io::Method::Null
}

/// A name short enough for an axis or a legend.
fn short(name: &str) -> String {
    const MAX: usize = 22;
    if name.chars().count() <= MAX {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(MAX - 1).collect();
        s.push('…');
        s
    }
}

/// A name for files and anchors: `randread-4k-q32-t1`.
pub fn job_id(job: &Job) -> String {
    let mut s = format!(
        "{}-{}-q{}-t{}",
        job.pattern,
        fmt_bs(job.block_size).to_lowercase(),
        job.queue_depth,
        job.threads
    );
    if job.sync != iopath_io::SyncPolicy::End {
        s.push_str(&format!("-sync-{}", job.sync));
    }
    if let Some(e) = job.sync_every {
        s.push_str(&format!("-{}-{}", e.call.name(), e.writes));
    }
    if let Some(p) = job.rwmix_read_pct {
        s.push_str(&format!("-{p}pct-read"));
    }
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The finite 95% interval of a median, if there is one.
fn finite(ci: [f64; 2]) -> Option<[f64; 2]> {
    (ci[0].is_finite() && ci[1].is_finite()).then_some(ci)
}

/// Every figure of one group of cases (those differing only by method).
pub fn figures(job: &Job, cases: &[&CaseResult]) -> Vec<Figure> {
    let all = cases;
    let cases = drawn(cases);
    if cases.is_empty() {
        return Vec::new();
    }
    let id = job_id(job);
    let label = job.label();
    let mut tp = throughput(&id, &label, &cases);
    if let Some(s) = all
        .iter()
        .filter(|c| is_reference(c) && !cases.iter().any(|d| std::ptr::eq(**c, *d)))
        .find_map(|c| c.summary.as_ref())
    {
        tp.caption.push_str(&format!(
            " null (no I/O: iopath's own ceiling) reached {} MiB/s and is left out of the charts.",
            Fmt::MiBs.show(s.bw_bytes_per_s / MIB)
        ));
    }
    let mut out = vec![
        tp,
        latency(&id, &label, &cases),
        cardiogram(&id, &label, &cases),
    ];
    if let Some(f) = within(&id, &label, &cases) {
        out.push(f);
    }
    out.push(costs(&id, &label, &cases));
    out
}

/// `--png-dir`: every chart of the HTML report as `<id>.png`, drawn at
/// twice its size for slides.
#[derive(Debug, Clone, Copy)]
pub struct Png;

impl Exporter for Png {
    fn flag(&self) -> &'static str {
        "--png-dir"
    }

    fn serialize(&self, r: &RunResult) -> anyhow::Result<Export> {
        let mut files = Vec::new();
        for (job, cases) in crate::report::groups(r) {
            for fig in figures(&job, &cases) {
                files.push(NamedFile {
                    name: format!("{}.png", fig.id),
                    bytes: png(&fig, 2)?,
                });
            }
        }
        Ok(Export::Directory(files))
    }
}

fn bar_height(n: usize) -> u32 {
    110 + 34 * n as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::RunResult;

    use crate::report::testdata::fixture;

    fn all_figures(r: &RunResult) -> Vec<Figure> {
        crate::report::groups(r)
            .iter()
            .flat_map(|(job, cases)| figures(job, cases))
            .collect()
    }

    #[test]
    fn every_chart_is_well_formed_svg_with_its_labels() {
        let r = fixture();
        let figs = all_figures(&r);
        // 3 groups x (throughput, latency, repetitions, timeline, costs).
        assert_eq!(figs.len(), 15);
        for f in &figs {
            let svg = svg(f).unwrap();
            let doc = roxmltree::Document::parse(&svg)
                .unwrap_or_else(|e| panic!("{}: not well-formed SVG: {e}", f.id));
            assert_eq!(doc.root_element().tag_name().name(), "svg", "{}", f.id);
            let texts: Vec<&str> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| n.text())
                .map(str::trim)
                .collect();
            assert!(texts.contains(&f.title.as_str()), "{}: no title", f.id);
            // Every measured method is named (axis or legend), and the
            // skipped one is not drawn.
            for m in ["buffered", "direct", "mmap", "uring", "aio"] {
                assert!(texts.contains(&m), "{}: {m} missing in {texts:?}", f.id);
            }
            assert!(!texts.contains(&"uring-iopoll"), "{}", f.id);
        }
        let mut ids: Vec<&str> = figs.iter().map(|f| f.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), figs.len(), "figure ids must be unique");
    }

    /// A result file whose numbers lie far outside the axis (an interval
    /// from 1e134 down to the median, a negative or huge point) draws,
    /// clipped to the chart: plotters' pixel arithmetic overflowed on it
    /// (found by fuzzing `iopath report`).
    #[test]
    fn values_far_outside_the_axis_are_drawn_at_its_edge() {
        let bar = |value, ci| Bar {
            method: "direct".into(),
            value,
            ci,
            label: "x".into(),
        };
        let bars = |rows, reference| Bars {
            title: String::new(),
            axis: "MiB/s".into(),
            fmt: Fmt::MiBs,
            log: false,
            rows,
            reference,
            empty: String::new(),
        };
        // The interval's low end far above its high end (and the axis).
        let inverted = bars(vec![bar(5.0, Some([1.2885e134, 4.0]))], None);
        let below = bars(
            vec![bar(3.0, Some([-1e300, 2.0])), bar(-1e300, None)],
            Some(-1e300),
        );
        // A point far below a linear axis from 0.
        let lines = Lines {
            x_axis: "s".into(),
            y_axis: "MiB/s".into(),
            x_categories: Vec::new(),
            x_fmt: Fmt::Int,
            y_fmt: Fmt::MiBs,
            log_y: false,
            series: vec![Line {
                method: "uring".into(),
                points: vec![(1.0, 2.0, false), (2.0, -1e300, true)],
            }],
        };
        let plots = [
            Plot::Bars(inverted.clone()),
            Plot::Bars(below),
            Plot::Row(vec![inverted]),
            Plot::Lines(lines),
        ];
        for plot in plots {
            let fig = Figure {
                id: "x".into(),
                title: "x".into(),
                caption: String::new(),
                width: 400,
                height: 300,
                plot,
            };
            let doc = svg(&fig).unwrap();
            roxmltree::Document::parse(&doc).unwrap();
            png(&fig, 1).unwrap();
        }
    }

    #[test]
    fn markup_in_labels_is_escaped() {
        let r = fixture();
        let mut c = r.cases[0].clone();
        c.method = "a<b&c".into();
        let f = throughput("x", "x", &[&c]);
        let svg = svg(&f).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert!(doc
            .descendants()
            .any(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some("a<b&c")));
    }

    #[test]
    fn png_is_drawn_at_scale_with_text_and_method_colours() {
        let r = fixture();
        let f = all_figures(&r)
            .into_iter()
            .find(|f| f.id.ends_with("-throughput"))
            .unwrap();
        let bytes = png(&f, 2).unwrap();
        let mut dec = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; dec.output_buffer_size().unwrap()];
        let info = dec.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (f.width * 2, f.height * 2));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        let px: Vec<[u8; 3]> = buf[..info.buffer_size()]
            .chunks(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        for m in ["buffered", "direct", "mmap", "uring", "aio"] {
            let RGBColor(r, g, b) = method_colour(m);
            let n = px.iter().filter(|p| **p == [r, g, b]).count();
            assert!(n > 1000, "{m}: only {n} pixels of its colour");
        }
        // Text from the embedded font: black pixels (axis labels, title).
        let black = px.iter().filter(|p| **p == [0, 0, 0]).count();
        assert!(black > 500, "{black} black pixels: no text drawn?");
    }

    #[test]
    fn null_is_left_out_of_the_charts_beside_real_methods() {
        let r = fixture();
        let mut null = r.cases[0].clone();
        null.method = "null".into();
        let cases: Vec<&CaseResult> = vec![&null, &r.cases[0], &r.cases[1]];
        let figs = figures(&r.cases[0].job(), &cases);
        let drawn = svg(&figs[0]).unwrap();
        assert!(
            !svg_has_text(&drawn, "null"),
            "null drawn beside real methods"
        );
        assert!(svg_has_text(&drawn, &r.cases[0].method.to_string()));
        assert!(
            figs[0].caption.contains("null (no I/O"),
            "{}",
            figs[0].caption
        );
        // Alone, it is what there is to draw.
        let figs = figures(&r.cases[0].job(), &[&null]);
        assert!(svg_has_text(&svg(&figs[0]).unwrap(), "null"));
    }

    fn svg_has_text(svg: &str, t: &str) -> bool {
        roxmltree::Document::parse(svg)
            .unwrap()
            .descendants()
            .any(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(t))
    }

    #[test]
    fn colours_are_fixed_per_method_and_distinct() {
        let known = [
            "buffered",
            "direct",
            "mmap",
            "uring",
            "uring-buffered",
            "uring-sqpoll",
            "uring-iopoll",
            "aio",
            "null",
            "mmap-dax",
            "copy-file-range",
            "sendfile",
        ];
        let mut c: Vec<String> = known.iter().map(|m| css_colour(m)).collect();
        assert_eq!(css_colour("buffered"), "#4e79a7");
        c.sort();
        c.dedup();
        assert_eq!(c.len(), known.len());
        // A second arm: its method's colour, half way to white.
        assert_eq!(css_colour("direct"), "#f28e2b");
        assert_eq!(css_colour("direct#2"), "#f8c695");
    }

    #[test]
    fn job_ids_are_file_names() {
        let mut j = fixture().cases[0].job();
        j.sync = iopath_io::SyncPolicy::None;
        j.rwmix_read_pct = Some(70);
        let id = job_id(&j);
        assert!(id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert!(
            id.contains("sync-none") && id.contains("70pct-read"),
            "{id}"
        );
        // Two jobs apart only by their sync every N writes: two files.
        j.sync_every = Some(iopath_io::SyncEvery {
            writes: 16,
            call: iopath_io::SyncCall::Fdatasync,
        });
        let every = job_id(&j);
        assert_ne!(every, id);
        assert!(every.contains("fdatasync-16"), "{every}");
    }
}

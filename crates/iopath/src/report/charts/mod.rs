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
mod draw;

use plotters::prelude::RGBColor;

use crate::result::{CaseResult, Job, Measurement};
use crate::units::{fmt_bs, fmt_count};

use axis::Fmt;
pub use draw::{png, svg, FONT};

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
    c.method == "null"
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
    if job.sync != "end" {
        s.push_str(&format!("-sync-{}", job.sync));
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

/// The measured repetition whose throughput is the median (the lower
/// middle one for an even count), with its 1-based place among all
/// repetitions.
pub fn median_repetition(c: &CaseResult) -> Option<(usize, &Measurement)> {
    let mut counted: Vec<(usize, &Measurement)> = c
        .repetitions
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.warmup && !m.interrupted)
        .map(|(i, m)| (i + 1, m))
        .collect();
    if counted.is_empty() {
        // Only a repetition cut short by Ctrl-C: the summary is made of it.
        counted = c
            .repetitions
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.warmup)
            .map(|(i, m)| (i + 1, m))
            .collect();
    }
    if counted.is_empty() {
        return None;
    }
    counted.sort_by(|a, b| a.1.bw_bytes_per_s.total_cmp(&b.1.bw_bytes_per_s));
    Some(counted[(counted.len() - 1) / 2])
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

fn bar_height(n: usize) -> u32 {
    110 + 34 * n as u32
}

fn throughput(id: &str, label: &str, cases: &[&CaseResult]) -> Figure {
    let rows: Vec<Bar> = cases
        .iter()
        .map(|c| {
            let s = c.summary.as_ref().expect("drawn cases have a summary");
            let ci = c
                .stats
                .as_ref()
                .and_then(|st| finite(st.bw_bytes_per_s.ci95_median))
                .map(|[a, b]| [a / MIB, b / MIB]);
            let n = c.measured().len();
            Bar {
                method: c.name(),
                value: s.bw_bytes_per_s / MIB,
                ci,
                label: format!(
                    "{} MiB/s · {} IOPS · n={n}{}",
                    Fmt::MiBs.show(s.bw_bytes_per_s / MIB),
                    fmt_count(s.iops),
                    if n < 6 && ci.is_some() {
                        ", whiskers = range"
                    } else {
                        ""
                    }
                ),
            }
        })
        .collect();
    Figure {
        id: format!("{id}-throughput"),
        title: format!("{label}: throughput"),
        caption: "Median throughput of the measured repetitions (n). Whiskers: the 95% \
                  interval of the median when n is 6 or more; below 6 no 95% interval of a \
                  median exists, and the whiskers are the range of the samples, from the \
                  slowest to the fastest (marked \"whiskers = range\")."
            .into(),
        width: 900,
        height: bar_height(rows.len()),
        plot: Plot::Bars(Bars {
            title: String::new(),
            axis: "MiB/s".into(),
            fmt: Fmt::MiBs,
            log: false,
            rows,
            reference: None,
            empty: String::new(),
        }),
    }
}

fn latency(id: &str, label: &str, cases: &[&CaseResult]) -> Figure {
    let names = ["p50", "p90", "p99", "p99.9", "max"];
    let series = cases
        .iter()
        .map(|c| {
            let l = &c
                .summary
                .as_ref()
                .expect("drawn cases have a summary")
                .lat_ns;
            let vals = [l.p50, l.p90, l.p99, l.p999, l.max];
            // Hollow: a percentile with too few requests behind it (the max
            // is no percentile: never hollow).
            let ps = [0.5, 0.9, 0.99, 0.999];
            Line {
                method: c.name(),
                points: vals
                    .iter()
                    .enumerate()
                    .filter(|(_, &v)| v > 0)
                    .map(|(i, &v)| {
                        let few = ps
                            .get(i)
                            .is_some_and(|&p| crate::units::too_few_requests(p, l.count));
                        (i as f64, v as f64, few)
                    })
                    .collect(),
            }
        })
        .collect();
    Figure {
        id: format!("{id}-latency"),
        title: format!("{label}: latency percentiles"),
        caption: "Latency of single requests, submission to completion (the summary's \
                  percentiles), on a log scale: a line that rises steeply to the \
                  right has a long tail. Hollow: too few requests behind that percentile \
                  to trust it (p99 needs 1,000, p99.9 10,000)."
            .into(),
        width: 900,
        height: 380,
        plot: Plot::Lines(Lines {
            x_axis: "percentile".into(),
            y_axis: "latency".into(),
            x_categories: names.iter().map(|s| s.to_string()).collect(),
            x_fmt: Fmt::Int,
            y_fmt: Fmt::Ns,
            log_y: true,
            series,
        }),
    }
}

fn cardiogram(id: &str, label: &str, cases: &[&CaseResult]) -> Figure {
    let series = cases
        .iter()
        .map(|c| {
            let median = c.summary.as_ref().map_or(0.0, |s| s.bw_bytes_per_s);
            Line {
                method: c.name(),
                points: c
                    .repetitions
                    .iter()
                    .enumerate()
                    .filter(|_| median > 0.0)
                    .map(|(i, m)| ((i + 1) as f64, m.bw_bytes_per_s / median * 100.0, m.warmup))
                    .collect(),
            }
        })
        .collect();
    Figure {
        id: format!("{id}-repetitions"),
        title: format!("{label}: every repetition, relative to its median"),
        caption: "Throughput of each repetition in the order they ran, as a percentage of \
                  the method's median (hollow: warm-up, not counted), so that methods of very \
                  different speeds share one scale. A trend up or down means the system was \
                  still settling or drifting; a lone point far from 100% is an outlier the \
                  median ignores."
            .into(),
        width: 900,
        height: 360,
        plot: Plot::Lines(Lines {
            x_axis: "repetition".into(),
            y_axis: "% of the median".into(),
            x_categories: Vec::new(),
            x_fmt: Fmt::Int,
            y_fmt: Fmt::Pct,
            log_y: false,
            series,
        }),
    }
}

fn within(id: &str, label: &str, cases: &[&CaseResult]) -> Option<Figure> {
    let mut picked = Vec::new();
    let series: Vec<Line> = cases
        .iter()
        .filter_map(|c| {
            let (place, m) = median_repetition(c)?;
            let s = m.series.as_ref()?;
            picked.push(format!("{} #{place}", c.name()));
            Some(Line {
                method: c.name(),
                points: timeline(s),
            })
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(Figure {
        id: format!("{id}-timeline"),
        title: format!("{label}: throughput within a repetition"),
        caption: format!(
            "Throughput per interval within each method's median repetition ({}), \
             plotted at the end of each interval (a last partial interval under a quarter \
             of the others is merged into the one before). Writes run through the final \
             flush: a long fsync shows as intervals near 0 at the end.",
            picked.join(", ")
        ),
        width: 900,
        height: 360,
        plot: Plot::Lines(Lines {
            x_axis: "time within the repetition (ms)".into(),
            y_axis: "MiB/s".into(),
            x_categories: Vec::new(),
            x_fmt: Fmt::Ms,
            y_fmt: Fmt::MiBs,
            log_y: false,
            series,
        }),
    })
}

/// (end of interval in ms, MiB/s) for each interval of a repetition. A
/// last partial interval shorter than a quarter of the others is merged
/// into the one before: a handful of completions over a fraction of a
/// millisecond would otherwise read as a spike of many GiB/s.
fn timeline(s: &crate::result::Series) -> Vec<(f64, f64, bool)> {
    let step = s.interval_ns as f64 / 1e6;
    let last = s.last_interval_ns as f64 / 1e6;
    let mut bw: Vec<f64> = s.bw_bytes_per_s.clone();
    let mut lens: Vec<f64> = vec![step; bw.len()];
    if let Some(l) = lens.last_mut() {
        *l = last;
    }
    let n = bw.len();
    if n >= 2 && last < step / 4.0 {
        let merged = (bw[n - 2] * step + bw[n - 1] * last) / (step + last);
        bw.truncate(n - 1);
        bw[n - 2] = merged;
        lens.truncate(n - 1);
        lens[n - 2] = step + last;
    }
    let mut t = 0.0;
    let points: Vec<(f64, f64, bool)> = bw
        .iter()
        .zip(&lens)
        .map(|(&b, &len)| {
            t += len;
            (t, b / MIB, false)
        })
        .collect();
    thin(points, MAX_TIMELINE_POINTS)
}

/// More points than a chart can show add only bytes: a long repetition is
/// drawn from the lowest and highest interval of each stretch, so stalls
/// and bursts stay visible.
const MAX_TIMELINE_POINTS: usize = 2000;

fn thin(points: Vec<(f64, f64, bool)>, max: usize) -> Vec<(f64, f64, bool)> {
    if points.len() <= max {
        return points;
    }
    let per = points.len().div_ceil(max / 2);
    let mut out = Vec::with_capacity(max);
    for chunk in points.chunks(per) {
        let lo = chunk.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = chunk.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(&lo), Some(&hi)) = (lo, hi) {
            if lo.0 <= hi.0 {
                out.extend([lo, hi]);
            } else {
                out.extend([hi, lo]);
            }
        }
    }
    out
}

fn costs(id: &str, label: &str, cases: &[&CaseResult]) -> Figure {
    let summary = |c: &CaseResult| c.summary.clone().expect("drawn cases have a summary");
    let cpu = cases
        .iter()
        .map(|c| {
            let v = summary(c).cpu.ns_per_io;
            Bar {
                method: c.name(),
                value: v,
                ci: c
                    .stats
                    .as_ref()
                    .and_then(|s| finite(s.cpu_ns_per_io.ci95_median)),
                label: Fmt::Ns.show(v),
            }
        })
        .collect();
    let memory = cases
        .iter()
        .map(|c| {
            let m = summary(c).memory;
            let v = m.total_bytes.max(m.page_cache_bytes + m.buffers_bytes) as f64;
            Bar {
                method: c.name(),
                value: v,
                ci: None,
                label: Fmt::Bytes.show(v),
            }
        })
        .collect();
    let device = cases
        .iter()
        .filter_map(|c| {
            let f = summary(c).device_fraction? * 100.0;
            Some(Bar {
                method: c.name(),
                value: f,
                ci: None,
                label: crate::units::fmt_device_fraction(f / 100.0),
            })
        })
        .collect();
    let n = cases.len();
    Figure {
        id: format!("{id}-costs"),
        title: format!("{label}: costs"),
        caption: "CPU time per I/O (workers, kernel and SQPOLL threads; whiskers: the 95% \
                  interval of the median, or the range of the samples below 6 repetitions), memory the case held (the file's pages in the page cache plus \
                  the I/O buffers), and the device fraction (bytes the disk moved / bytes \
                  asked: near 100% means the device was measured, near 0% the page cache). \
                  CPU and memory on log scales."
            .into(),
        width: 1100,
        height: bar_height(n),
        plot: Plot::Row(vec![
            Bars {
                title: "CPU per I/O".into(),
                axis: "CPU time per I/O".into(),
                fmt: Fmt::Ns,
                log: true,
                rows: cpu,
                reference: None,
                empty: String::new(),
            },
            Bars {
                title: "memory held".into(),
                axis: "bytes".into(),
                fmt: Fmt::Bytes,
                log: true,
                rows: memory,
                reference: None,
                empty: String::new(),
            },
            Bars {
                title: "device fraction".into(),
                axis: "% of the bytes asked".into(),
                fmt: Fmt::Pct,
                log: false,
                rows: device,
                reference: Some(100.0),
                empty: "no block device under the target".into(),
            },
        ]),
    }
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
    fn the_median_repetition_skips_warmups() {
        let r = fixture();
        let c = r.cases.iter().find(|c| c.method == "uring").unwrap();
        let (place, m) = median_repetition(c).unwrap();
        assert!(!c.repetitions[place - 1].warmup);
        let mut bw = c.samples(|m| m.bw_bytes_per_s);
        bw.sort_by(f64::total_cmp);
        // Four measured: the lower middle one.
        assert_eq!(m.bw_bytes_per_s, bw[1]);
    }

    #[test]
    fn a_short_last_interval_is_merged_not_drawn_as_a_spike() {
        // 10 ms intervals; the last lasted 0.5 ms with 1 MiB: 2000 MiB/s.
        let s = crate::result::Series::from_counts(
            10_000_000,
            500_000,
            &[10 << 20, 10 << 20, 1 << 20],
            &[10, 10, 1],
        );
        let pts = timeline(&s);
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[0], (10.0, 1000.0, false));
        assert!((pts[1].0 - 20.5).abs() < 1e-9);
        // 11 MiB over 10.5 ms.
        assert!((pts[1].1 - 11.0 / 0.0105).abs() < 0.01, "{}", pts[1].1);
        // A last interval of half the length is drawn as it is.
        let s = crate::result::Series::from_counts(10_000_000, 5_000_000, &[0, 1 << 20], &[0, 1]);
        assert_eq!(timeline(&s), vec![(10.0, 0.0, false), (15.0, 200.0, false)]);
    }

    #[test]
    fn long_timelines_keep_their_extremes_within_the_point_budget() {
        let pts: Vec<(f64, f64, bool)> = (0..100_000)
            .map(|i| {
                (
                    i as f64,
                    if i == 54_321 {
                        0.0
                    } else {
                        100.0 + (i % 7) as f64
                    },
                    false,
                )
            })
            .collect();
        let thin = thin(pts, 2000);
        assert!(thin.len() <= 2000, "{}", thin.len());
        assert!(thin.iter().any(|p| p.1 == 0.0), "the stall survives");
        assert!(thin.iter().any(|p| p.1 == 106.0), "so does the peak");
        assert!(thin.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
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
        assert!(svg_has_text(&drawn, &r.cases[0].method));
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
        j.sync = "none".into();
        j.rwmix_read_pct = Some(70);
        let id = job_id(&j);
        assert!(id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert!(
            id.contains("sync-none") && id.contains("70pct-read"),
            "{id}"
        );
    }
}

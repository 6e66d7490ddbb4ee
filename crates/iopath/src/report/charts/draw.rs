//! Drawing a [`Figure`] with plotters onto either backend: SVG for the
//! HTML report, PNG for `--png-dir`.

use std::sync::OnceLock;

use anyhow::{anyhow, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::axis::{text_height, text_width, Axis, Fmt};
use super::{method_colour, short, Bar, Bars, Figure, Line, Lines, Plot};

/// DejaVu Sans, cut down to Latin-1 and a few symbols
/// (`assets/README.md` says how, `assets/LICENSE-DejaVu.txt` under which
/// licence). Used to lay out text in both backends and to draw it in PNGs.
pub const FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans-subset.ttf");
/// The family name charts ask for; the HTML report maps it to [`FONT`].
const FAMILY: &str = "sans-serif";

/// Register [`FONT`] with plotters, once per process.
fn fonts() -> Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .map_err(|_| "the embedded chart font could not be read".to_string())
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

/// Turn a plotters error (generic over the backend) into ours.
trait Drawn<T> {
    fn drawn(self) -> Result<T>;
}

impl<T, E: std::fmt::Debug> Drawn<T> for std::result::Result<T, E> {
    fn drawn(self) -> Result<T> {
        self.map_err(|e| anyhow!("drawing a chart failed: {e:?}"))
    }
}

/// Sizes in pixels at scale 1; PNGs are drawn at a larger scale.
#[derive(Debug, Clone, Copy)]
struct Px(f64);

impl Px {
    fn n(self, v: f64) -> u32 {
        (v * self.0).round() as u32
    }
    fn i(self, v: f64) -> i32 {
        (v * self.0).round() as i32
    }
    fn font(self, v: f64) -> TextStyle<'static> {
        (FAMILY, v * self.0).into_font().color(&BLACK)
    }
}

/// A linear axis over `lo..hi` whose labelled ticks (and grid lines) are
/// the ones given, chosen so that no two labels touch
/// ([`Axis::ticks`]). (Plotters' own `with_key_points` leaves an f64 axis
/// without the label formatter the charts give.)
#[derive(Clone)]
struct Ticked {
    range: RangedCoordf64,
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Ticked {
        Ticked {
            range: (lo..hi).into(),
            lo,
            hi,
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(v, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// `v` inside `lo..=hi` (the chart's range). plotters turns a coordinate
/// into pixels with `i32` arithmetic that overflows (a panic in a debug
/// build, a stray line in a release one) far outside the range: a result
/// file whose interval runs from 1e134 down to the median panicked the
/// HTML report (found by fuzzing). What a run writes lies inside; this
/// keeps a damaged or edited file from breaking the report.
fn clip(v: f64, lo: f64, hi: f64) -> f64 {
    if v.is_nan() {
        lo
    } else {
        v.clamp(lo, hi)
    }
}

const GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);
const LIGHT: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure, px: Px) -> Result<()> {
    root.fill(&WHITE).drawn()?;
    let (w, _) = root.dim_in_pixel();
    root.draw(&Text::new(
        fig.title.clone(),
        (px.i(12.0), px.i(8.0)),
        px.font(17.0),
    ))
    .drawn()?;
    let body = root.margin(px.n(34.0), 0, 0, 0);
    match &fig.plot {
        Plot::Bars(b) => bars(&body, b, px),
        Plot::Lines(l) => lines(&body, l, px),
        Plot::Row(panels) => {
            let parts = body.split_evenly((1, panels.len()));
            for (area, b) in parts.iter().zip(panels) {
                bars(area, b, px)?;
            }
            let _ = w;
            Ok(())
        }
    }
}

/// The chart of a [`Bars`] or [`Lines`] plot, once its axes are built.
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

/// `area` below `title` (the whole area when there is none).
fn titled<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    px: Px,
) -> Result<DrawingArea<DB, Shift>> {
    if title.is_empty() {
        return Ok(area.clone());
    }
    area.draw(&Text::new(
        title.to_string(),
        (px.i(12.0), 0),
        px.font(14.0),
    ))
    .drawn()?;
    Ok(area.margin(px.n(20.0), 0, 0, 0))
}

/// A line of text in place of a chart with nothing to draw.
fn say<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, px: Px) -> Result<()> {
    area.draw(&Text::new(
        text.to_string(),
        (px.i(16.0), px.i(30.0)),
        px.font(13.0).color(&GREY),
    ))
    .drawn()?;
    Ok(())
}

/// The x axis of a bar chart: every bar's end and whisker, and the
/// reference line.
fn bar_axis(b: &Bars) -> Axis {
    let mut ends: Vec<f64> = b
        .rows
        .iter()
        .map(|r| r.ci.map_or(r.value, |c| c[1].max(r.value)))
        .collect();
    if let Some(r) = b.reference {
        ends.push(r);
    }
    let lows = b
        .rows
        .iter()
        .map(|r| r.ci.map_or(r.value, |c| c[0].min(r.value)));
    Axis::fit(
        b.log,
        b.fmt,
        ends.iter().copied().chain(lows),
        if b.log { 1.0 } else { 1.12 },
    )
}

/// What the x layout of a bar chart depends on.
struct BarFrame<'a> {
    b: &'a Bars,
    axis: Axis,
    /// The area's width less its left margin, and the names' column.
    outer: f64,
    y_area: f64,
    /// Font sizes of a tick label and of the value after a bar.
    tick: f64,
    value: f64,
    px: Px,
}

/// The x layout of a bar chart for a right margin: the axis's right end
/// (past `axis.hi`, with room for the values written after the bars), its
/// ticks and the width the data take.
struct BarFit {
    margin_r: f64,
    right: f64,
    ticks: Vec<f64>,
    data_w: f64,
}

impl BarFrame<'_> {
    fn span(&self) -> f64 {
        self.axis.hi - self.axis.lo
    }

    /// The layout for a right margin: the room on the right for the value
    /// written after each bar (and its whisker; the data take `plot_w -
    /// room`, so that the longest bar's label ends inside the chart).
    fn fit(&self, margin_r: f64) -> BarFit {
        let (axis, span) = (self.axis, self.span());
        let plot_w = (self.outer - margin_r - self.y_area).max(1.0);
        let room = self
            .b
            .rows
            .iter()
            .map(|r| {
                let end = r.ci.map_or(r.value, |c| c[1].max(r.value));
                let f = ((axis.at(end) - axis.lo) / span).clamp(0.0, 1.0);
                let need = text_width(&r.label, self.value) + f64::from(self.px.n(10.0));
                if f <= 0.0 {
                    need
                } else {
                    plot_w - (plot_w - need) / f
                }
            })
            .fold(0.0f64, f64::max)
            .clamp(0.0, plot_w * 0.6);
        let data_w = plot_w - room;
        let tick = self.tick;
        BarFit {
            margin_r,
            right: axis.hi + span * room / data_w,
            ticks: axis.ticks(self.b.fmt, data_w / span, &|s| {
                text_width(s, tick) + tick / 1.24
            }),
            data_w,
        }
    }

    /// How far past the plot its tick labels reach: one is centred on its
    /// tick, so one near the right end needs half its width past it.
    fn overhang(&self, fit: &BarFit) -> f64 {
        fit.ticks
            .iter()
            .map(|&t| {
                let past = (t - fit.right) * fit.data_w / self.span();
                past + text_width(&self.axis.label(t, self.b.fmt), self.tick) / 2.0
                    + f64::from(self.px.n(2.0))
            })
            .fold(0.0f64, f64::max)
    }

    /// The layout whose right margin holds its tick labels.
    fn fitted(&self) -> BarFit {
        let margin_r = f64::from(self.px.n(12.0));
        let fit = self.fit(margin_r);
        let need = self.overhang(&fit);
        if need <= margin_r {
            return fit;
        }
        let mut fit = self.fit(need);
        fit.margin_r = need.max(self.overhang(&fit));
        fit
    }
}

fn bars<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, b: &Bars, px: Px) -> Result<()> {
    let area = titled(area, &b.title, px)?;
    if b.rows.is_empty() {
        return say(&area, &b.empty, px);
    }
    let n = b.rows.len();
    let axis = bar_axis(b);
    let tick = 13.0 * px.0;
    let names: Vec<String> = b.rows.iter().map(|r| short(&r.method)).collect();
    let name_width = names
        .iter()
        .map(|n| text_width(n, tick))
        .fold(0.0f64, f64::max);
    let y_area = name_width + f64::from(px.n(14.0));
    let (w, _) = area.dim_in_pixel();
    let frame = BarFrame {
        b,
        axis,
        outer: f64::from(w) - f64::from(px.n(8.0)),
        y_area,
        tick,
        value: 12.0 * px.0,
        px,
    };
    let BarFit {
        margin_r,
        right,
        ticks,
        ..
    } = frame.fitted();
    let mut chart = ChartBuilder::on(&area)
        .margin_left(px.n(8.0))
        .margin_right(margin_r.ceil() as u32)
        .margin_bottom(px.n(6.0))
        .x_label_area_size(px.n(40.0))
        .y_label_area_size(y_area.round() as u32)
        .build_cartesian_2d(
            Ticked::new(axis.lo, right, ticks),
            Ticked::new(-0.6, n as f64 - 0.4, (0..n).map(|i| i as f64).collect()),
        )
        .drawn()?;
    let fmt = b.fmt;
    let xfmt = move |t: &f64| axis.label(*t, fmt);
    let yfmt = |t: &f64| {
        let i = t.round();
        if (t - i).abs() > 1e-6 || i < 0.0 || i as usize >= n {
            return String::new();
        }
        names[n - 1 - i as usize].clone()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .bold_line_style(LIGHT)
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .x_desc(b.axis.clone())
        .label_style(px.font(13.0))
        .axis_desc_style(px.font(13.0))
        .axis_style(GREY)
        .draw()
        .drawn()?;
    let x = BarX { axis, right };
    if let Some(r) = b.reference {
        let at = x.of(r);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(at, -0.6), (at, n as f64 - 0.4)],
                GREY.stroke_width(px.n(1.0).max(1)),
            )))
            .drawn()?;
    }
    for (i, row) in b.rows.iter().enumerate() {
        bar(&mut chart, row, (n - 1 - i) as f64, x, px)?;
    }
    Ok(())
}

/// Where a value lies on a bar chart's x axis, kept inside it.
#[derive(Clone, Copy)]
struct BarX {
    axis: Axis,
    right: f64,
}

impl BarX {
    fn of(self, v: f64) -> f64 {
        clip(self.axis.at(v), self.axis.lo, self.right)
    }
}

/// One bar at height `y`: its length, its whiskers, its value after them.
fn bar<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    row: &Bar,
    y: f64,
    x: BarX,
    px: Px,
) -> Result<()> {
    let colour = method_colour(&row.method);
    let end = x.of(row.value);
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(x.axis.lo, y - 0.32), (end, y + 0.32)],
            colour.filled(),
        )))
        .drawn()?;
    let mut label_at = end;
    if let Some([lo, hi]) = row.ci {
        let (a, z) = (x.of(lo), x.of(hi));
        let style = BLACK.stroke_width(px.n(1.5).max(1));
        chart
            .draw_series([
                PathElement::new(vec![(a, y), (z, y)], style),
                PathElement::new(vec![(a, y - 0.18), (a, y + 0.18)], style),
                PathElement::new(vec![(z, y - 0.18), (z, y + 0.18)], style),
            ])
            .drawn()?;
        label_at = label_at.max(z);
    }
    chart
        .draw_series(std::iter::once(
            EmptyElement::at((label_at, y))
                + Text::new(
                    row.label.clone(),
                    (px.i(6.0), -px.i(7.0)),
                    px.font(12.0).color(&GREY),
                ),
        ))
        .drawn()?;
    Ok(())
}

/// The x axis of a line chart: repetitions 1..n, numbers from 0, or
/// categories 0..n-1, each with a margin.
fn x_axis(l: &Lines) -> Axis {
    let xs = l.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let x_max = xs.fold(0.0f64, f64::max);
    if matches!(l.x_fmt, Fmt::Int) && l.x_categories.is_empty() {
        Axis::linear(0.5, x_max.max(1.0) + 0.5)
    } else if l.x_categories.is_empty() {
        Axis::linear(0.0, if x_max > 0.0 { x_max * 1.02 } else { 1.0 })
    } else {
        Axis::linear(-0.3, l.x_categories.len() as f64 - 0.7)
    }
}

/// The x axis of a line chart: numbers, or the names of its categories.
struct LineX {
    axis: Axis,
    fmt: Fmt,
    categories: Vec<String>,
    /// Font size of a tick label.
    tick: f64,
}

impl LineX {
    fn label(&self, t: f64) -> String {
        if self.categories.is_empty() {
            return self.axis.label(t, self.fmt);
        }
        let i = t.round();
        if (t - i).abs() > 1e-6 || i < 0.0 || i as usize >= self.categories.len() {
            String::new()
        } else {
            self.categories[i as usize].clone()
        }
    }

    /// The room a tick label needs along the axis.
    fn room(&self, s: &str) -> f64 {
        text_width(s, self.tick) + self.tick / 1.24
    }

    /// Ticks spaced so that no two labels touch, over `plot_w` pixels:
    /// every category, else every 2nd, 3rd, ...
    fn ticks(&self, plot_w: f64) -> Vec<f64> {
        let (lo, hi) = (self.axis.lo, self.axis.hi);
        if self.categories.is_empty() {
            return self
                .axis
                .ticks(self.fmt, plot_w / (hi - lo), &|s| self.room(s));
        }
        let n = self.categories.len();
        let per = plot_w / (hi - lo);
        (1..=n)
            .map(|step| (0..n).step_by(step).map(|i| i as f64).collect::<Vec<f64>>())
            .find(|ts| {
                ts.windows(2).all(|t| {
                    (t[1] - t[0]) * per
                        >= (self.room(&self.label(t[0])) + self.room(&self.label(t[1]))) / 2.0
                })
            })
            .unwrap_or_default()
    }
}

fn lines<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, l: &Lines, px: Px) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let legend_w = px.n(150.0).min(w / 3);
    let (plot_area, legend_area) = area.split_horizontally(w - legend_w);
    let y_axis = Axis::fit(
        l.log_y,
        l.y_fmt,
        l.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        if l.log_y { 1.0 } else { 1.1 },
    );
    let tick = 13.0 * px.0;
    let y_fmt = l.y_fmt;
    // Ticks spaced so that no two labels touch: along the y axis a label
    // takes its height, along the x axis its width.
    let plot_h = (f64::from(h) - f64::from(px.n(46.0))).max(1.0);
    let y_ticks = y_axis.ticks(y_fmt, plot_h / (y_axis.hi - y_axis.lo), &|_| {
        2.0 * text_height(tick)
    });
    // The y label area holds the widest tick label and the axis title.
    let y_area = y_ticks
        .iter()
        .map(|&t| text_width(&y_axis.label(t, y_fmt), tick))
        .fold(0.0f64, f64::max)
        + 2.0 * text_height(tick)
        + f64::from(px.n(8.0));
    let plot_w = (f64::from(w - legend_w) - f64::from(px.n(24.0)) - y_area).max(1.0);
    let x = LineX {
        axis: x_axis(l),
        fmt: l.x_fmt,
        categories: l.x_categories.clone(),
        tick,
    };
    let mut chart = ChartBuilder::on(&plot_area)
        .margin_left(px.n(8.0))
        .margin_right(px.n(16.0))
        .margin_bottom(px.n(6.0))
        .x_label_area_size(px.n(40.0))
        .y_label_area_size(y_area.round() as u32)
        .build_cartesian_2d(
            Ticked::new(x.axis.lo, x.axis.hi, x.ticks(plot_w)),
            Ticked::new(y_axis.lo, y_axis.hi, y_ticks),
        )
        .drawn()?;
    let xfmt = |t: &f64| x.label(*t);
    let yfmt = move |t: &f64| y_axis.label(*t, y_fmt);
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(LIGHT)
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .x_desc(l.x_axis.clone())
        .y_desc(l.y_axis.clone())
        .label_style(px.font(13.0))
        .axis_desc_style(px.font(13.0))
        .axis_style(GREY)
        .draw()
        .drawn()?;
    let frame = LineFrame {
        x_axis: x.axis,
        y_axis,
        px,
    };
    for s in &l.series {
        frame.line(&mut chart, s)?;
    }
    legend(&legend_area, &l.series, px)
}

/// Where a line chart's points land: inside its x range and y axis.
struct LineFrame {
    x_axis: Axis,
    y_axis: Axis,
    px: Px,
}

impl LineFrame {
    /// One series: its line, and its points when there are few enough to
    /// tell apart (a warm-up's hollow).
    fn line<DB: DrawingBackend>(&self, chart: &mut Chart<'_, DB>, s: &Line) -> Result<()> {
        let (y_axis, px) = (self.y_axis, self.px);
        let r = px.n(3.5).max(2);
        let colour = method_colour(&s.method);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| {
                (
                    clip(p.0, self.x_axis.lo, self.x_axis.hi),
                    clip(y_axis.at(p.1), y_axis.lo, y_axis.hi),
                )
            })
            .collect();
        chart
            .draw_series(LineSeries::new(
                pts.clone(),
                colour.stroke_width(px.n(2.0).max(1)),
            ))
            .drawn()?;
        if s.points.len() <= 60 {
            chart
                .draw_series(s.points.iter().zip(&pts).map(|(p, &xy)| {
                    let style = if p.2 { WHITE.filled() } else { colour.filled() };
                    Circle::new(xy, r, style)
                }))
                .drawn()?;
            chart
                .draw_series(
                    s.points
                        .iter()
                        .zip(&pts)
                        .filter(|(p, _)| p.2)
                        .map(|(_, &xy)| Circle::new(xy, r, colour.stroke_width(2))),
                )
                .drawn()?;
        }
        Ok(())
    }
}

/// The legend beside the chart, never over the data.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    series: &[Line],
    px: Px,
) -> Result<()> {
    for (i, s) in series.iter().enumerate() {
        let y = px.i(18.0 + 24.0 * i as f64);
        let colour = method_colour(&s.method);
        area.draw(&Rectangle::new(
            [(0, y - px.i(5.0)), (px.i(22.0), y + px.i(5.0))],
            colour.filled(),
        ))
        .drawn()?;
        area.draw(&Text::new(
            short(&s.method),
            (px.i(30.0), y - px.i(8.0)),
            px.font(13.0),
        ))
        .drawn()?;
    }
    Ok(())
}

/// The figure as an SVG document (no XML prolog, so it can be inlined in
/// HTML as is).
pub fn svg(fig: &Figure) -> Result<String> {
    fonts()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (fig.width, fig.height)).into_drawing_area();
        draw(&root, fig, Px(1.0))?;
        root.present().drawn()?;
    }
    // Labels are the result's own strings: a control character is no
    // XML (and would reach a terminal that shows the file), so it is
    // written out visibly, as everywhere (`untrusted`).
    Ok(crate::model::untrusted::visible(&out).into_owned())
}

/// The figure as a PNG, drawn at `scale` times its size (2 for slides).
pub fn png(fig: &Figure, scale: u32) -> Result<Vec<u8>> {
    fonts()?;
    let (w, h) = (fig.width * scale, fig.height * scale);
    let mut rgb = vec![255u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(&root, fig, Px(f64::from(scale)))?;
        root.present().drawn()?;
    }
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(out)
}

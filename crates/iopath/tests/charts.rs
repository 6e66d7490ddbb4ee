//! Charts that read: in every chart of a run no two pieces of text overlap
//! (tick labels, names, values, titles, legends) and none is cut off at
//! the edge. Checked on a stored real run given the extremes real runs
//! reach (mmap's read-ahead moving 1596x the bytes asked, 159593%; memory
//! from 4 KiB to 48 GiB; CPU from 90 ns to 5 ms a request), and on a small
//! real run made here.
//!
//! Text extents are estimated, not measured: a browser lays the SVG out
//! with its own copy of the font. The estimate errs wide (see [`width_em`]).

use std::path::{Path, PathBuf};

mod common;
use common::{inline_svgs, iopath, scratch};

/// An upper bound of a text's width in em, for DejaVu Sans (the font the
/// charts embed and ask for): its widest glyphs (m, w, M, W, %, @, …)
/// are under 1 em; capitals and symbols like + = ~ under 0.85; every other
/// letter, digit and punctuation under 0.75 (digits are 0.64).
fn width_em(s: &str) -> f64 {
    s.chars()
        .map(|c| match c {
            'm' | 'w' | 'M' | 'W' | '%' | '@' | '…' => 1.0,
            c if c.is_uppercase() => 0.85,
            '+' | '=' | '<' | '>' | '~' | '±' | '×' | '→' | '&' | '#' => 0.85,
            _ => 0.75,
        })
        .sum()
}

/// The box one `<text>` of a plotters SVG covers, in the SVG's pixels.
#[derive(Debug, Clone)]
struct TextBox {
    text: String,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

fn attr(n: &roxmltree::Node, name: &str) -> f64 {
    n.attribute(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("<{}> without a numeric {name}", n.tag_name().name()))
}

/// Every non-empty text of an SVG as a box (width from [`width_em`];
/// height from 0.95 em above the baseline to 0.25 em below it, DejaVu's
/// ascent and descent rounded up), rotated as its `transform` says; and
/// the SVG's size.
fn text_boxes(svg: &str) -> ((f64, f64), Vec<TextBox>) {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let root = doc.root_element();
    let size = (attr(&root, "width"), attr(&root, "height"));
    let mut out = Vec::new();
    for n in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let text = n.text().unwrap_or("").trim().to_string();
        if text.is_empty() {
            continue;
        }
        let em = attr(&n, "font-size");
        let (x, y) = (attr(&n, "x"), attr(&n, "y"));
        let dy = match n.attribute("dy") {
            None => 0.0,
            Some(d) if d.ends_with("em") => d[..d.len() - 2].parse::<f64>().unwrap() * em,
            // An ex of DejaVu Sans is 0.55 em.
            Some(d) if d.ends_with("ex") => d[..d.len() - 2].parse::<f64>().unwrap() * 0.55 * em,
            Some(d) => d.parse().unwrap(),
        };
        let w = width_em(&text) * em;
        let (x0, x1) = match n.attribute("text-anchor").unwrap_or("start") {
            "middle" => (x - w / 2.0, x + w / 2.0),
            "end" => (x - w, x),
            _ => (x, x + w),
        };
        let base = y + dy;
        let (y0, y1) = (base - 0.95 * em, base + 0.25 * em);
        let mut b = TextBox {
            text,
            x0,
            x1,
            y0,
            y1,
        };
        if let Some(t) = n.attribute("transform") {
            let args: Vec<f64> = t
                .strip_prefix("rotate(")
                .and_then(|t| t.strip_suffix(')'))
                .unwrap_or_else(|| panic!("transform {t}: only rotate(a, x, y) is read"))
                .split(',')
                .map(|v| v.trim().parse().unwrap())
                .collect();
            let (a, cx, cy) = (args[0].to_radians(), args[1], args[2]);
            let turn = |px: f64, py: f64| {
                let (dx, dy) = (px - cx, py - cy);
                (
                    cx + dx * a.cos() - dy * a.sin(),
                    cy + dx * a.sin() + dy * a.cos(),
                )
            };
            let corners = [
                turn(b.x0, b.y0),
                turn(b.x1, b.y0),
                turn(b.x0, b.y1),
                turn(b.x1, b.y1),
            ];
            b.x0 = corners.iter().map(|c| c.0).fold(f64::INFINITY, f64::min);
            b.x1 = corners
                .iter()
                .map(|c| c.0)
                .fold(f64::NEG_INFINITY, f64::max);
            b.y0 = corners.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
            b.y1 = corners
                .iter()
                .map(|c| c.1)
                .fold(f64::NEG_INFINITY, f64::max);
        }
        out.push(b);
    }
    (size, out)
}

/// What is wrong with the text of one chart: pairs that overlap, text
/// cut off at an edge.
fn collisions(svg: &str) -> Vec<String> {
    let ((w, h), boxes) = text_boxes(svg);
    let mut bad = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        if a.x0 < -0.5 || a.x1 > w + 0.5 || a.y0 < -0.5 || a.y1 > h + 0.5 {
            bad.push(format!("{:?} is cut off at the edge of {w}x{h}", a));
        }
        for b in &boxes[i + 1..] {
            if a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 {
                bad.push(format!("{:?} overlaps {:?}", a, b));
            }
        }
    }
    bad
}

/// The id of a chart (`randread-4k-q32-t1-costs`), for messages.
fn chart_id(svg: &str) -> String {
    let (_, boxes) = text_boxes(svg);
    boxes.first().map_or(String::new(), |b| b.text.clone())
}

/// Check every chart of an HTML report; the texts of each chart.
fn check_report(html: &Path) -> Vec<Vec<String>> {
    let html = std::fs::read_to_string(html).unwrap();
    let svgs = inline_svgs(&html);
    assert!(svgs.len() >= 5, "only {} charts", svgs.len());
    let mut bad = Vec::new();
    let mut texts = Vec::new();
    for svg in &svgs {
        for problem in collisions(svg) {
            bad.push(format!("{}: {problem}", chart_id(svg)));
        }
        texts.push(text_boxes(svg).1.into_iter().map(|b| b.text).collect());
    }
    assert!(
        bad.is_empty(),
        "{} collisions:\n{}",
        bad.len(),
        bad.join("\n")
    );
    texts
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run.json")
}

fn set(
    v: &mut serde_json::Value,
    method: &str,
    pattern: &str,
    key: &[&str],
    to: impl Into<serde_json::Value>,
) {
    let c = v["cases"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["method"] == method && c["pattern"] == pattern)
        .unwrap();
    let mut at = &mut c["summary"];
    for k in key {
        at = &mut at[*k];
    }
    *at = to.into();
}

#[test]
fn the_checker_sees_a_collision_and_a_cut_off_label() {
    let svg = |texts: &str| {
        format!(
            "<svg width=\"200\" height=\"100\" xmlns=\"http://www.w3.org/2000/svg\">{texts}</svg>"
        )
    };
    let t = |x: u32, anchor: &str, s: &str| {
        format!("<text x=\"{x}\" y=\"50\" dy=\"0.76em\" text-anchor=\"{anchor}\" font-size=\"10\">{s}</text>")
    };
    // Today's costs chart: `0% 50000%100000%` side by side.
    let bad = collisions(&svg(
        &(t(40, "middle", "50000%") + &t(75, "middle", "100000%"))
    ));
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(collisions(&svg(&(t(30, "middle", "1 MiB") + &t(90, "middle", "4 MiB")))).is_empty());
    assert_eq!(collisions(&svg(&t(195, "start", "1 MiB"))).len(), 1);
    // A rotated axis title stands upright: tall, not wide.
    let up = "<text x=\"10\" y=\"50\" dy=\"0.76em\" text-anchor=\"middle\" font-size=\"10\" \
              transform=\"rotate(270, 10, 50)\">latency</text>";
    let ((_, _), b) = text_boxes(&svg(up));
    assert!(b[0].y1 - b[0].y0 > 2.0 * (b[0].x1 - b[0].x0), "{:?}", b[0]);
}

#[test]
fn no_chart_text_collides_at_the_extremes_of_a_real_run() {
    let dir = scratch();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    // mmap's 4 KiB random reads with an 8 MiB read-ahead: 159593%.
    set(&mut v, "mmap", "randread", &["device_fraction"], 1595.93);
    set(&mut v, "buffered", "randread", &["device_fraction"], 0.0);
    set(
        &mut v,
        "mmap",
        "randread",
        &["memory", "page_cache_bytes"],
        48u64 << 30,
    );
    set(
        &mut v,
        "mmap",
        "randread",
        &["memory", "total_bytes"],
        48u64 << 30,
    );
    set(
        &mut v,
        "direct",
        "randread",
        &["memory", "total_bytes"],
        4096u64,
    );
    set(&mut v, "uring", "randread", &["cpu", "ns_per_io"], 90.0);
    set(&mut v, "mmap", "randread", &["cpu", "ns_per_io"], 5e6);
    set(
        &mut v,
        "mmap",
        "write",
        &["bw_bytes_per_s"],
        0.8 * 1048576.0,
    );
    let file = dir.path().join("extremes.json");
    std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
    let html = dir.path().join("r.html");
    let out = iopath()
        .arg("report")
        .arg(&file)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let costs = check_report(&html)
        .into_iter()
        .find(|t| t[0] == "randread 4k Q32T1: costs")
        .unwrap();
    // The device fraction is drawn on a log axis as the tables write it:
    // ticks at 100% and at a power of ten times more, and the bar says its
    // value (a linear axis in % had `0% 50000%100000%150000%`).
    for t in ["100%", "1596x"] {
        assert!(costs.iter().any(|x| x == t), "no {t} in {costs:?}");
    }
    assert!(
        ["10x", "100x", "1000x", "10000x"]
            .iter()
            .any(|t| costs.iter().any(|x| x == t)),
        "{costs:?}"
    );
    assert!(!costs.iter().any(|x| x.ends_with("000%")), "{costs:?}");
}

#[test]
fn no_chart_text_collides_in_a_small_real_run() {
    let dir = scratch();
    let html = dir.path().join("r.html");
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--methods",
            "buffered,direct,mmap,uring",
            "--patterns",
            "read,randread",
            "--size",
            "16M",
            "--repeat",
            "3",
            "--warmup",
            "1",
            "--time",
            "30ms",
            "--quiet",
            "--html",
        ])
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_report(&html);
}

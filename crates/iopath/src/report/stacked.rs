//! Stacked bars as inline SVG for the HTML report: a bar per method, a
//! segment per part, the legend above them (the latency split's parts,
//! `report::latency_split`; CPU per I/O by kind, `report::cpu_kind`).

use std::fmt::Write as _;

use crate::model::units::fmt_ns;

/// The width of the picture, px.
pub const SVG_WIDTH: f64 = 1020.0;

/// A legend entry's width: its swatch and gaps, and at most this much a
/// character of its name (12 px sans-serif), px.
pub const LEGEND_GAP: f64 = 24.0;
pub const LEGEND_CHAR: f64 = 7.5;

/// One bar: the method's name, its segments (part, ns, colour) in order,
/// and what is written at its end.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub segments: Vec<(&'static str, f64, &'static str)>,
    pub end: String,
}

/// The bars of `rows` under a legend of `parts` (name, colour), scaled to
/// the longest, as an SVG of class `class`; `None` without rows.
pub fn svg(class: &str, parts: &[(&str, &str)], rows: &[Row]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let longest = rows
        .iter()
        .map(|r| r.segments.iter().map(|x| x.1).sum::<f64>())
        .fold(1.0, f64::max);
    let (left, bar_w, row_h) = (150.0, 520.0, 26.0);
    let height = 40.0 + row_h * rows.len() as f64;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"{class}\" width=\"{SVG_WIDTH}\" \
         height=\"{height}\" role=\"img\" font-family=\"sans-serif\">\n"
    );
    let mut x = left;
    for (name, colour) in parts {
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"6\" width=\"12\" height=\"12\" fill=\"{colour}\"/>\
             <text x=\"{}\" y=\"16\" font-size=\"12\">{name}</text>",
            x + 16.0
        );
        x += LEGEND_GAP + LEGEND_CHAR * name.len() as f64;
    }
    for (i, r) in rows.iter().enumerate() {
        let y = 30.0 + row_h * i as f64;
        let _ = writeln!(
            out,
            "<g class=\"bar\"><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + 15.0,
            super::html::escape(&r.name)
        );
        let mut x = left;
        for (part, v, colour) in &r.segments {
            let w = v / longest * bar_w;
            let _ = writeln!(
                out,
                "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"20\" fill=\"{colour}\">\
                 <title>{part}: {}</title></rect>",
                fmt_ns(v.max(0.0).round() as u64)
            );
            x += w;
        }
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" font-size=\"12\">{}</text></g>",
            x + 6.0,
            y + 15.0,
            super::html::escape(&r.end)
        );
    }
    out.push_str("</svg>\n");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARTS: [(&str, &str); 3] = [
        ("one", "#111"),
        ("a longer name", "#222"),
        ("unaccounted", "#333"),
    ];

    /// Where the legend's name `name` starts in `svg`, px.
    fn left_of(svg: &str, name: &str) -> f64 {
        let at = svg.find(&format!(">{name}</text>")).unwrap();
        let start = svg[..at].rfind("<text x=\"").unwrap() + "<text x=\"".len();
        let end = start + svg[start..].find('"').unwrap();
        svg[start..end].parse().unwrap()
    }

    /// Each bar's segments are scaled to the longest bar, in order, each
    /// titled with its part and time; the legend's names follow each
    /// other without overlap, the last inside the picture; no bars, no
    /// picture.
    #[test]
    fn bars_scale_to_the_longest_and_the_legend_fits() {
        let rows = [
            Row {
                name: "direct".into(),
                segments: vec![("one", 1000.0, "#111"), ("a longer name", 3000.0, "#222")],
                end: "4.0 us".into(),
            },
            Row {
                name: "<b>".into(),
                segments: vec![("one", 2000.0, "#111")],
                end: "2.0 us".into(),
            },
        ];
        let h = svg("t", &PARTS, &rows).unwrap();
        assert!(
            h.contains("width=\"130.0\"") && h.contains("width=\"390.0\""),
            "{h}"
        );
        assert!(h.contains("width=\"260.0\""), "{h}");
        assert!(h.contains("<title>a longer name: 3.0 us</title>"), "{h}");
        assert!(h.contains("&lt;b&gt;") && !h.contains("<b>"), "{h}");
        let (a, b, c) = (
            left_of(&h, "one"),
            left_of(&h, "a longer name"),
            left_of(&h, "unaccounted"),
        );
        assert!(
            a + LEGEND_CHAR * 3.0 < b && b + LEGEND_CHAR * 13.0 < c,
            "{h}"
        );
        // The latency split's nine parts, the longest legend drawn, fit.
        let nine = "entry submit queue device complete cached unmatched runnable unaccounted";
        let width: f64 = nine
            .split(' ')
            .map(|n| LEGEND_GAP + LEGEND_CHAR * n.len() as f64)
            .sum();
        assert!(150.0 + width <= SVG_WIDTH, "{width}");
        assert_eq!(svg("t", &PARTS, &[]), None);
    }
}

//! How the verdict writes its numbers: ratios, intervals, percentages.

/// A ratio with three significant digits or so: 1.23, 12.3, 123.
pub(super) fn num(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}")
    } else if r >= 10.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

pub(super) fn x(r: f64) -> String {
    format!("{}x", num(r))
}

/// A ratio's interval: "95% CI 1.19-1.24x"; with fewer than 6 repetitions
/// on either side (`few`), "1.19-1.24x over few repetitions", as a
/// bootstrap of a handful of values is not a 95% interval.
pub(super) fn ci(c: [f64; 2], few: bool, level: f64) -> String {
    if few {
        format!("{}-{}x over few repetitions", num(c[0]), num(c[1]))
    } else {
        let pct = level * 100.0;
        let pct = if (pct - pct.round()).abs() < 0.05 {
            format!("{pct:.0}")
        } else {
            format!("{pct:.1}")
        };
        format!("{pct}% CI {}-{}x", num(c[0]), num(c[1]))
    }
}

/// How much slower a method is whose median is `ratio` (< 1) times
/// another's: "18%", the complement of the speed sentence's ratio (1.22x
/// is 18% slower); never a rounded "100%" or "0%".
pub(super) fn pct_slower(ratio: f64) -> String {
    let p = (1.0 - ratio) * 100.0;
    if p >= 99.95 {
        "over 99.9%".to_string()
    } else if (1.0..99.5).contains(&p) {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

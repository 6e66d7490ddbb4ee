//! How chart values are written ([`Fmt`]), where they sit on a linear
//! or logarithmic axis ([`Axis`]), and which ticks get a label: as many as
//! fit without two labels touching ([`Axis::ticks`], [`text_width`]).

use crate::model::units::{fmt_bytes, fmt_device_fraction, fmt_ns};

/// How axis values are written.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fmt {
    MiBs,
    Ns,
    Bytes,
    Pct,
    /// A ratio shown as the tables show the device fraction: `10%`,
    /// `100%`, `10x`, `1000x`.
    Fraction,
    Ms,
    Int,
}

impl Fmt {
    pub(super) fn show(self, v: f64) -> String {
        match self {
            Fmt::MiBs => {
                if v >= 100.0 || v == 0.0 {
                    format!("{v:.0}")
                } else if v >= 10.0 {
                    format!("{v:.1}")
                } else {
                    format!("{v:.2}")
                }
            }
            Fmt::Ns => fmt_ns(v.max(0.0).round() as u64),
            Fmt::Bytes => fmt_bytes(v.max(0.0).round() as u64),
            Fmt::Pct => format!("{v:.0}%"),
            Fmt::Fraction if v > 0.0 && v < 0.01 => {
                // Below 1%: as many decimals as the first digit needs.
                let places = (-(v * 100.0).log10()).ceil().max(0.0) as usize;
                format!("{:.*}%", places, v * 100.0)
            }
            Fmt::Fraction => fmt_device_fraction(v),
            Fmt::Ms => {
                if v >= 10.0 || v == 0.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.1}")
                }
            }
            Fmt::Int => format!("{v:.0}"),
        }
    }
}

/// An axis, linear or logarithmic: data are drawn in transformed units so
/// both kinds share one coordinate type. Log axes of bytes count in powers
/// of two (4 KiB, 16 KiB, ... 1 MiB), others in powers of ten.
#[derive(Debug, Clone, Copy)]
pub(super) struct Axis {
    log: bool,
    base: f64,
    pub(super) lo: f64,
    pub(super) hi: f64,
}

impl Axis {
    /// A linear axis from 0 to a little above `max`, or a log axis over
    /// whole decades around the positive values.
    pub(super) fn fit(
        log: bool,
        fmt: Fmt,
        values: impl Iterator<Item = f64>,
        headroom: f64,
    ) -> Axis {
        let vals: Vec<f64> = values.filter(|v| v.is_finite()).collect();
        let base = if matches!(fmt, Fmt::Bytes) { 2.0 } else { 10.0 };
        if log {
            // A ratio far below 1% (a device fraction of a cached read)
            // would stretch the axis over decades nobody reads: the axis
            // starts at 0.1% at the lowest, and anything below sits there.
            let pos = vals.iter().copied().filter(|&v| v > 0.0);
            let min = pos.clone().fold(f64::INFINITY, f64::min);
            let max = pos.fold(0.0f64, f64::max);
            if max <= 0.0 {
                return Axis {
                    log,
                    base,
                    lo: 0.0,
                    hi: 1.0,
                };
            }
            // Half a power of room below the smallest value, so its bar
            // has a length.
            let mut lo = (min.log(base) - 0.5).floor();
            if matches!(fmt, Fmt::Fraction) {
                lo = lo.max(-3.0);
            }
            let mut hi = (max * headroom).log(base).ceil();
            if hi <= lo {
                hi = lo + 1.0;
            }
            Axis { log, base, lo, hi }
        } else {
            let max = vals.iter().copied().fold(0.0f64, f64::max);
            Axis {
                log,
                base,
                lo: 0.0,
                hi: if max > 0.0 { max * headroom } else { 1.0 },
            }
        }
    }

    /// A linear axis over `lo..hi` as given.
    pub(super) fn linear(lo: f64, hi: f64) -> Axis {
        Axis {
            log: false,
            base: 10.0,
            lo,
            hi,
        }
    }

    pub(super) fn at(&self, v: f64) -> f64 {
        if self.log {
            if v > 0.0 {
                v.log(self.base).max(self.lo)
            } else {
                self.lo
            }
        } else {
            v
        }
    }

    fn value(&self, t: f64) -> f64 {
        if self.log {
            self.base.powf(t)
        } else {
            t
        }
    }

    /// The ticks to label, in axis units, within `lo..=hi`: as many as fit
    /// (at most [`MAX_TICKS`]) without two touching. A log axis labels
    /// whole powers (every one, else every 2nd, 3rd, ... aligned on 0, so
    /// 1 MiB or 1 ms stays one of them); a linear one the multiples of 1,
    /// 2 or 5 times a power of ten (whole numbers for counts). `px_per_unit`: pixels per axis unit;
    /// `extent`: the pixels a label takes along the axis, with the space
    /// to leave around it.
    pub(super) fn ticks(
        &self,
        fmt: Fmt,
        px_per_unit: f64,
        extent: &dyn Fn(&str) -> f64,
    ) -> Vec<f64> {
        let fits = |ts: &[f64]| {
            let labels: Vec<String> = ts.iter().map(|&t| self.label(t, fmt)).collect();
            ts.len() <= MAX_TICKS
                && labels.windows(2).all(|w| w[0] != w[1])
                && ts.windows(2).zip(labels.windows(2)).all(|(t, l)| {
                    let (a, b) = (extent(&l[0]), extent(&l[1]));
                    (t[1] - t[0]) * px_per_unit >= (a + b) / 2.0
                })
        };
        if self.log {
            let (first, last) = (self.lo.ceil() as i64, self.hi.floor() as i64);
            let powers: Vec<i64> = (first..=last).collect();
            for step in 1..=powers.len().max(1) as i64 {
                let ts: Vec<f64> = powers
                    .iter()
                    .filter(|p| p.rem_euclid(step) == 0)
                    .map(|&p| p as f64)
                    .collect();
                if !ts.is_empty() && fits(&ts) {
                    return ts;
                }
            }
            return powers.first().map(|&p| vec![p as f64]).unwrap_or_default();
        }
        let span = self.hi - self.lo;
        if span <= 0.0 || !span.is_finite() {
            return vec![self.lo];
        }
        let mut e = (span / 1000.0).log10().floor() as i32;
        loop {
            for m in [1.0, 2.0, 5.0] {
                let step = m * 10f64.powi(e);
                if matches!(fmt, Fmt::Int) && step < 1.0 {
                    continue;
                }
                let (a, z) = (
                    (self.lo / step).ceil() as i64,
                    (self.hi / step).floor() as i64,
                );
                if z - a + 1 > MAX_TICKS as i64 {
                    continue;
                }
                let ts: Vec<f64> = (a..=z).map(|k| k as f64 * step).collect();
                if ts.len() <= 1 || fits(&ts) {
                    return ts;
                }
            }
            e += 1;
        }
    }

    /// A tick label: only at whole powers on a log axis, without trailing
    /// zeros (`10 ms`, not `10.00 ms`).
    pub(super) fn label(&self, t: f64, fmt: Fmt) -> String {
        if self.log && (t - t.round()).abs() > 1e-6 {
            return String::new();
        }
        let v = self.value(if self.log { t.round() } else { t });
        tidy(&fmt.show(v))
    }
}

/// The most ticks an axis labels.
pub(super) const MAX_TICKS: usize = 8;

/// An upper bound of the width of `s` in pixels at font size `size` as
/// plotters takes it (an em is `size / 1.24`), for DejaVu Sans, the font
/// charts are drawn with: its widest glyphs (m, w, M, W, %, @, …) are
/// under 1 em, capitals and symbols like + = ~ under 0.85, every other
/// character under 0.75 (digits are 0.64). An estimate that errs wide, so
/// labels spaced by it never touch whatever the renderer.
pub(super) fn text_width(s: &str, size: f64) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'm' | 'w' | 'M' | 'W' | '%' | '@' | '…' => 1.0,
            c if c.is_uppercase() => 0.85,
            '+' | '=' | '<' | '>' | '~' | '±' | '×' | '→' | '&' | '#' => 0.85,
            _ => 0.75,
        })
        .sum();
    em * size / 1.24
}

/// An upper bound of the height of a line of text at font size `size`
/// (ascent and descent of DejaVu Sans, 1.17 em, rounded up).
pub(super) fn text_height(size: f64) -> f64 {
    1.2 * size / 1.24
}

/// `10.00 ms` → `10 ms`, `2.50 us` → `2.5 us`, `976.6 KiB` unchanged.
fn tidy(s: &str) -> String {
    let (num, unit) = s.split_once(' ').unwrap_or((s, ""));
    let num = if num.contains('.') {
        num.trim_end_matches('0').trim_end_matches('.')
    } else {
        num
    };
    if unit.is_empty() {
        num.to_string()
    } else {
        format!("{num} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_count_bytes_in_powers_of_two_and_time_in_decades() {
        let bytes = Axis::fit(
            true,
            Fmt::Bytes,
            [4096.0, 33.0 * 1048576.0].into_iter(),
            1.0,
        );
        assert_eq!(bytes.base, 2.0);
        assert_eq!(bytes.lo, 11.0, "half a power below 4 KiB, floored");
        assert_eq!(bytes.hi, 26.0);
        assert_eq!(bytes.label(12.0, Fmt::Bytes), "4 KiB");
        assert_eq!(bytes.label(20.0, Fmt::Bytes), "1 MiB");
        assert_eq!(bytes.label(20.5, Fmt::Bytes), "", "no label between powers");
        let ns = Axis::fit(true, Fmt::Ns, [674.0, 236_300.0].into_iter(), 1.0);
        assert_eq!((ns.base, ns.lo, ns.hi), (10.0, 2.0, 6.0));
        assert_eq!(ns.label(4.0, Fmt::Ns), "10 us");
        assert_eq!(ns.label(6.0, Fmt::Ns), "1 ms");
        assert_eq!(ns.at(0.0), ns.lo, "0 sits at the axis start on a log axis");
        let lin = Axis::fit(false, Fmt::MiBs, [50.0, 100.0].into_iter(), 1.1);
        assert_eq!((lin.lo, lin.hi), (0.0, 110.00000000000001));
        assert_eq!(tidy("10.00 ms"), "10 ms");
        assert_eq!(tidy("2.50 us"), "2.5 us");
        assert_eq!(tidy("976.6 KiB"), "976.6 KiB");
        assert_eq!(tidy("120"), "120");
    }

    /// Labels spaced by their estimated width never touch.
    fn apart(a: &Axis, fmt: Fmt, ts: &[f64], per: f64, size: f64) -> bool {
        ts.windows(2).all(|t| {
            let w = |v: f64| text_width(&a.label(v, fmt), size);
            (t[1] - t[0]) * per >= (w(t[0]) + w(t[1])) / 2.0
        })
    }

    #[test]
    fn ticks_are_thinned_until_their_labels_fit() {
        let room = |s: &str| text_width(s, 13.0) + 13.0 / 1.24;
        // Memory held from 4 KiB to 48 GiB in a 160-pixel panel: every
        // power of two would put `1 MiB 4 MiB16 MiB` side by side.
        let mem = Axis::fit(
            true,
            Fmt::Bytes,
            [4096.0, 48.0 * 1073741824.0].into_iter(),
            1.0,
        );
        let per = 160.0 / (mem.hi - mem.lo);
        let ts = mem.ticks(Fmt::Bytes, per, &room);
        assert!(
            ts.len() >= 2 && ts.len() < (mem.hi - mem.lo) as usize,
            "{ts:?}"
        );
        assert!(apart(&mem, Fmt::Bytes, &ts, per, 13.0), "{ts:?}");
        // Thinned on powers that divide evenly: the same step from a
        // round power.
        let step = ts[1] - ts[0];
        assert!(ts.iter().all(|t| t.rem_euclid(step) == 0.0), "{ts:?}");
        // With room, every power has its label (up to MAX_TICKS).
        let few = Axis::fit(true, Fmt::Bytes, [8192.0, 200_000.0].into_iter(), 1.0);
        let all = few.ticks(Fmt::Bytes, 100.0, &room);
        assert_eq!(all.len(), (few.hi - few.lo) as usize + 1, "{all:?}");
        // A linear axis of percentages 0-160,000 in 200 pixels: a few
        // round values, none touching, never `0% 50000%100000%150000%`.
        let lin = Axis::fit(false, Fmt::Pct, [159_593.0].into_iter(), 1.12);
        let per = 200.0 / lin.hi;
        let ts = lin.ticks(Fmt::Pct, per, &room);
        assert!(ts.len() >= 2, "{ts:?}");
        assert!(apart(&lin, Fmt::Pct, &ts, per, 13.0), "{ts:?}");
        // Repetitions are counted in whole numbers.
        let reps = Axis::linear(0.5, 3.5);
        assert_eq!(reps.ticks(Fmt::Int, 200.0, &room), vec![1.0, 2.0, 3.0]);
        let many = Axis::linear(0.5, 200.5).ticks(Fmt::Int, 3.0, &room);
        assert!(
            many.iter().all(|t| t.fract() == 0.0) && many.len() <= MAX_TICKS,
            "{many:?}"
        );
    }

    #[test]
    fn the_device_fraction_axis_is_a_log_ratio_written_as_the_tables_write_it() {
        let a = Axis::fit(true, Fmt::Fraction, [0.0, 1.0, 1595.93].into_iter(), 1.0);
        assert_eq!((a.lo, a.hi), (-1.0, 4.0), "10% to 10000x");
        let labels: Vec<String> = (-1..=4)
            .map(|p| a.label(f64::from(p), Fmt::Fraction))
            .collect();
        assert_eq!(labels, ["10%", "100%", "10x", "100x", "1000x", "10000x"]);
        assert_eq!(a.at(0.0), a.lo, "a fully cached read sits at the start");
        // Far below 1% the axis stops at 0.1%.
        let low = Axis::fit(true, Fmt::Fraction, [1e-7, 1.0].into_iter(), 1.0);
        assert_eq!(low.lo, -3.0);
        assert_eq!(low.label(-3.0, Fmt::Fraction), "0.1%");
    }
}

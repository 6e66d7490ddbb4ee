//! How chart values are written ([`Fmt`]) and where they sit on a linear
//! or logarithmic axis ([`Axis`]).

use crate::units::{fmt_bytes, fmt_ns};

/// How axis values are written.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fmt {
    MiBs,
    Ns,
    Bytes,
    Pct,
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
            let lo = (min.log(base) - 0.5).floor();
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

    /// How many tick labels to ask plotters for: whole powers on a log
    /// axis (at most 8, so every other power of two on a wide byte axis).
    pub(super) fn ticks(&self) -> usize {
        if self.log {
            ((self.hi - self.lo).round() as usize + 1).min(8)
        } else {
            6
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
}

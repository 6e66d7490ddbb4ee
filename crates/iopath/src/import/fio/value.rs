//! fio's numbers: sizes (and the integers fio reads like them), times in
//! seconds, booleans. Values are accepted only where fio reads them as
//! written; what fio would misread is refused with a message saying how
//! fio reads it.

use super::expr;
use super::ValueError;

/// fio reads integers with `strtoll`: nothing above this.
const MAX: u64 = i64::MAX as u64;

/// A size or a percentage (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Amount {
    Bytes(u64),
    Percent(u64),
}

/// A size: `4k`, `1m`, `0x1000`, `(4k*2)`; a percentage too if allowed.
pub(crate) fn size(text: &str, kb_base: u32, allow_percent: bool) -> Result<Amount, ValueError> {
    if text.starts_with('(') {
        let v = expr::eval(text, expr::Units::Size { kb_base })?;
        return u64::try_from(v)
            .ok()
            .filter(|&v| v <= MAX)
            .map(Amount::Bytes)
            .ok_or(ValueError::ExpressionOutOfRange { value: v });
    }
    if let Some(n) = text.strip_suffix('%') {
        if !allow_percent {
            return Err(ValueError::PercentNotAccepted);
        }
        let (v, unit) = split_number(n)?;
        if !unit.is_empty() {
            return Err(ValueError::NotPercent {
                text: text.to_string(),
            });
        }
        return Ok(Amount::Percent(v));
    }
    size_number(text, kb_base).map(Amount::Bytes)
}

/// A size in bytes, with no percentage.
pub(crate) fn bytes(text: &str, kb_base: u32) -> Result<u64, ValueError> {
    match size(text, kb_base, false)? {
        Amount::Bytes(b) => Ok(b),
        Amount::Percent(_) => Err(ValueError::PercentNotAccepted),
    }
}

/// A number with a size unit (no expression): what fio's `str_to_decimal`
/// reads, refusing what it misreads.
pub(crate) fn size_number(word: &str, kb_base: u32) -> Result<u64, ValueError> {
    let (v, unit) = split_number(word)?;
    let lower = unit.to_ascii_lowercase();
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let mult: u64 = match lower.as_str() {
        "" | "b" => 1,
        "z" => return Err(ValueError::ZoneUnit),
        "%" => return Err(ValueError::PercentNotAccepted),
        _ => {
            let mut chars = lower.chars();
            let pow = match chars.next() {
                Some('k') => 1,
                Some('m') => 2,
                Some('g') => 3,
                Some('t') => 4,
                Some('p') => 5,
                _ => return Err(unknown_size_unit(unit)),
            };
            let base = match chars.as_str() {
                "" | "b" => u64::from(kb_base),
                "ib" => other,
                "i" => {
                    return Err(ValueError::AmbiguousUnit {
                        unit: unit.to_string(),
                    })
                }
                _ => return Err(unknown_size_unit(unit)),
            };
            base.checked_pow(pow).ok_or_else(too_large)?
        }
    };
    v.checked_mul(mult)
        .filter(|&b| b <= MAX)
        .ok_or_else(too_large)
}

fn unknown_size_unit(unit: &str) -> ValueError {
    ValueError::UnknownSizeUnit {
        unit: unit.to_string(),
    }
}

fn too_large() -> ValueError {
    ValueError::TooLarge { most: MAX }
}

/// The integer at the start of `word` and the rest; decimal, or hex after
/// `0x` (with nothing after it).
fn split_number(word: &str) -> Result<(u64, &str), ValueError> {
    if word.is_empty() {
        return Err(ValueError::Empty);
    }
    if let Some(hex) = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ValueError::NotHex {
                word: word.to_string(),
            });
        }
        let v = u64::from_str_radix(hex, 16).map_err(|_| too_large())?;
        return Ok((v, ""));
    }
    let end = word
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(word.len());
    if end == 0 {
        return Err(ValueError::NotANumber {
            word: word.to_string(),
        });
    }
    let (digits, unit) = word.split_at(end);
    if unit.starts_with('.') {
        return Err(ValueError::Fraction {
            word: word.to_string(),
        });
    }
    let v = digits.parse::<u64>().map_err(|_| too_large())?;
    Ok((v, unit))
}

/// A time whose plain number is seconds (`runtime`, `ramp_time`), in
/// microseconds.
pub(crate) fn seconds(text: &str) -> Result<u64, ValueError> {
    if text.starts_with('(') {
        let us = expr::eval(text, expr::Units::Time)?;
        let us = u64::try_from(us)
            .ok()
            .filter(|&v| v <= MAX)
            .ok_or(ValueError::TimeExpressionOutOfRange { us })?;
        if us % 1_000_000 != 0 {
            return Err(ValueError::PartialSeconds {
                seconds: us / 1_000_000,
            });
        }
        return Ok(us);
    }
    time_number(text)
}

/// A number with a time unit, in microseconds; no unit is seconds.
pub(crate) fn time_number(word: &str) -> Result<u64, ValueError> {
    if word.starts_with("0x") || word.starts_with("0X") {
        return Err(ValueError::HexTime {
            word: word.to_string(),
        });
    }
    let (v, unit) = split_number(word)?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => 1_000_000,
        "us" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "m" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        "sec" | "secs" | "min" | "mins" | "hour" | "hours" | "day" | "days" => {
            return Err(ValueError::TimeInMicroseconds {
                word: word.to_string(),
                value: v,
                unit: unit[..1].to_string(),
            })
        }
        _ => {
            return Err(ValueError::UnknownTimeUnit {
                unit: unit.to_string(),
            })
        }
    };
    v.checked_mul(mult)
        .filter(|&us| us <= MAX)
        .ok_or_else(too_large)
}

/// `0` or `1` (fio also takes `0x0`/`0x1`).
pub(crate) fn boolean(text: &str) -> Result<bool, ValueError> {
    match split_number(text) {
        Ok((0, "")) => Ok(false),
        Ok((1, "")) => Ok(true),
        _ => Err(ValueError::NotBoolean {
            text: text.to_string(),
        }),
    }
}

/// fio splits the value of a numeric option at `,`, then `:`, then `-`,
/// and uses the parts as it sees fit (`iodepth=4,8` is 4, `size=1g-2g` is
/// 2g, `bs=-4k` is 4k); such values are refused where one number is meant.
pub(crate) fn single(text: &str) -> Result<&str, ValueError> {
    match text.find([',', ':', '-']) {
        Some(i) => Err(ValueError::Split {
            at: char::from(text.as_bytes()[i]),
        }),
        None => Ok(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every expected value below is what fio 3.33 printed for the same
    // input with `--debug=parse` (`ret=0, out=N`).
    #[test]
    fn sizes_as_fio_reads_them() {
        let b = |s| bytes(s, 1024).unwrap();
        assert_eq!(b("4k"), 4096);
        assert_eq!(b("4K"), 4096);
        assert_eq!(b("4kb"), 4096);
        assert_eq!(b("4KB"), 4096);
        assert_eq!(b("4kB"), 4096);
        assert_eq!(b("4kib"), 4000);
        assert_eq!(b("4KiB"), 4000);
        assert_eq!(b("1mib"), 1_000_000);
        assert_eq!(b("1m"), 1 << 20);
        assert_eq!(b("1g"), 1 << 30);
        assert_eq!(b("1t"), 1 << 40);
        assert_eq!(b("1p"), 1 << 50);
        assert_eq!(b("0x10"), 16);
        assert_eq!(b("4096b"), 4096);
        assert_eq!(b("4096B"), 4096);
        assert_eq!(b("00010"), 10);
        assert_eq!(b("010k"), 10240);
        assert_eq!(b("0"), 0);
    }

    #[test]
    fn kb_base_1000_swaps_the_prefixes() {
        assert_eq!(bytes("1M", 1000), Ok(1_000_000));
        assert_eq!(bytes("1MiB", 1000), Ok(1 << 20));
        assert_eq!(bytes("4k", 1000), Ok(4000));
    }

    #[test]
    fn percentages_only_where_allowed() {
        assert_eq!(size("10%", 1024, true), Ok(Amount::Percent(10)));
        assert_eq!(
            size("10%", 1024, false),
            Err(ValueError::PercentNotAccepted)
        );
        assert!(size("50%25", 1024, true).is_err());
        assert!(size("k%", 1024, true).is_err());
    }

    #[test]
    fn sizes_fio_misreads_are_refused() {
        let e = |s| bytes(s, 1024).unwrap_err();
        let word = |s: &str| s.to_string();
        assert_eq!(e("1.5k"), ValueError::Fraction { word: word("1.5k") });
        assert_eq!(e("4ki"), ValueError::AmbiguousUnit { unit: word("ki") });
        for (text, unit) in [
            ("1kx", "kx"),
            ("12abc", "abc"),
            ("4kbyte", "kbyte"),
            ("1e", "e"),
        ] {
            assert_eq!(e(text), ValueError::UnknownSizeUnit { unit: word(unit) });
        }
        assert_eq!(
            e("0x10k"),
            ValueError::NotHex {
                word: word("0x10k")
            }
        );
        assert_eq!(e("0x"), ValueError::NotHex { word: word("0x") });
        assert_eq!(e("k"), ValueError::NotANumber { word: word("k") });
        assert_eq!(e(""), ValueError::Empty);
        assert_eq!(e("10z"), ValueError::ZoneUnit);
        let limit = ValueError::TooLarge { most: MAX };
        assert_eq!(e("99999999999999999999"), limit);
        assert_eq!(e("8192p"), limit);
        assert_eq!(bytes("8191p", 1024), Ok(8191 << 50));
    }

    #[test]
    fn size_expressions() {
        assert_eq!(bytes("(4k*2)", 1024), Ok(8192));
        assert_eq!(bytes("(1m/4)", 1024), Ok(262_144));
        assert_eq!(
            bytes("(0-4k)", 1024),
            Err(ValueError::ExpressionOutOfRange { value: -4096 })
        );
    }

    #[test]
    fn times_as_fio_reads_them() {
        let s = |t| seconds(t).unwrap();
        assert_eq!(s("10"), 10_000_000);
        assert_eq!(s("10s"), 10_000_000);
        assert_eq!(s("10S"), 10_000_000);
        assert_eq!(s("10m"), 600_000_000);
        assert_eq!(s("10M"), 600_000_000);
        assert_eq!(s("1h"), 3_600_000_000);
        assert_eq!(s("1d"), 86_400_000_000);
        assert_eq!(s("500ms"), 500_000);
        assert_eq!(s("500msec"), 500_000);
        assert_eq!(s("500us"), 500);
        assert_eq!(s("500usec"), 500);
        assert_eq!(s("0"), 0);
        assert_eq!(s("(1m+30s)"), 90_000_000);
    }

    #[test]
    fn times_fio_misreads_are_refused() {
        let e = |t| seconds(t).unwrap_err();
        let word = |s: &str| s.to_string();
        let micro = |w: &str, unit: &str| ValueError::TimeInMicroseconds {
            word: word(w),
            value: 10,
            unit: word(unit),
        };
        assert_eq!(e("10sec"), micro("10sec", "s"));
        assert_eq!(e("10min"), micro("10min", "m"));
        assert_eq!(e("1.5"), ValueError::Fraction { word: word("1.5") });
        assert_eq!(e("10ns"), ValueError::UnknownTimeUnit { unit: word("ns") });
        assert_eq!(
            e("0x10"),
            ValueError::HexTime { word: word("0x10") },
            "fio: 16 microseconds"
        );
        assert_eq!(e("(1s+500ms)"), ValueError::PartialSeconds { seconds: 1 });
        assert_eq!(e("s"), ValueError::NotANumber { word: word("s") });
    }

    #[test]
    fn booleans() {
        assert_eq!(boolean("1"), Ok(true));
        assert_eq!(boolean("0"), Ok(false));
        assert_eq!(boolean("0x1"), Ok(true));
        assert_eq!(boolean("01"), Ok(true));
        for bad in ["2", "true", "yes", "1abc", "", "-1"] {
            assert!(boolean(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn split_values_are_refused_where_one_number_is_meant() {
        assert_eq!(single("4k"), Ok("4k"));
        assert_eq!(single("4,8"), Err(ValueError::Split { at: ',' }));
        assert_eq!(single("1g:2g"), Err(ValueError::Split { at: ':' }));
        assert_eq!(single("-1"), Err(ValueError::Split { at: '-' }));
    }
}

//! Sizes and durations as people write them, and back.
//!
//! Sizes: a number with an optional unit. `k`, `K`, `KiB`, `m`, `M`, `MiB`,
//! `g`, `G`, `GiB`, `t`, `T`, `TiB` are binary (1024-based, as in fio and
//! dd); `kB`, `MB`, `GB`, `TB` are decimal (SI). `b`/`B` or no unit: bytes.
//! Durations: `500ms`, `3s`, `2m`, `1h`, `250us`; a bare number is seconds.

use std::time::Duration;

/// A decimal number (digits with at most one `.`, at least one digit)
/// times `mult`, exactly: the whole part of the product and whether a
/// fraction was left over (and if it was at least a half). Reading through
/// `f64`, as iopath did, loses whole units above 2^53: `9007199254740993`
/// bytes and `8923997751411697ns` read back as other values than iopath
/// wrote.
fn decimal_times(num: &str, mult: u128) -> Result<Scaled, Decimal> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err(Decimal::NotANumber);
    }
    let value = |t: &str| {
        t.bytes().try_fold(0u128, |acc, b| {
            acc.checked_mul(10)?.checked_add(u128::from(b - b'0'))
        })
    };
    let whole = value(int)
        .and_then(|i| i.checked_mul(mult))
        .ok_or(Decimal::TooLarge)?;
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        return Ok(Scaled {
            whole,
            rest: false,
            half_up: false,
        });
    }
    // Past 24 decimals (far more than any unit has places), what is left
    // is counted as a fraction of one below a half: a size of
    // `0.000...0001T` with 40 decimals is refused even if it is 1 byte.
    let (frac, tail) = frac.split_at(frac.len().min(24));
    let pow = 10u128.pow(frac.len() as u32);
    let scaled = value(frac)
        .and_then(|f| f.checked_mul(mult))
        .ok_or(Decimal::TooLarge)?;
    let rem = scaled % pow;
    Ok(Scaled {
        whole: whole.checked_add(scaled / pow).ok_or(Decimal::TooLarge)?,
        rest: rem != 0 || !tail.is_empty(),
        half_up: rem * 2 >= pow && rem != 0,
    })
}

/// A decimal times a unit ([`decimal_times`]).
struct Scaled {
    whole: u128,
    /// Something was left below one.
    rest: bool,
    /// What was left was half of one or more.
    half_up: bool,
}

/// Why [`decimal_times`] gave no value.
enum Decimal {
    NotANumber,
    TooLarge,
}

/// Parse a size such as `4k`, `1M`, `2GiB`, `100MB`, `512`. Exact: the
/// result is the number of bytes written, or an error, never a rounding
/// (at most `i64::MAX` bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{s}' is not a size: expected a number with an optional unit, e.g. 4k, 1M, 2GiB"
        ));
    }
    let mult: u64 = match unit.trim() {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "kiB" | "Ki" => 1 << 10,
        "m" | "M" | "MiB" | "Mi" => 1 << 20,
        "g" | "G" | "GiB" | "Gi" => 1 << 30,
        "t" | "T" | "TiB" | "Ti" => 1 << 40,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "unknown size unit '{other}' in '{s}': use k/M/G/T or KiB/MiB/GiB/TiB (1024-based), kB/MB/GB/TB (1000-based)"
            ))
        }
    };
    let bytes = match decimal_times(num, u128::from(mult)) {
        Err(Decimal::NotANumber) => {
            return Err(format!("'{s}' is not a size: '{num}' is not a number"))
        }
        Err(Decimal::TooLarge) => return Err(format!("size '{s}' is too large")),
        Ok(v) => v,
    };
    if bytes.whole > i64::MAX as u128 {
        return Err(format!("size '{s}' is too large"));
    }
    if bytes.rest {
        return Err(format!("size '{s}' is not a whole number of bytes"));
    }
    Ok(bytes.whole as u64)
}

/// The longest duration [`parse_duration`] accepts, in seconds.
const MAX_DURATION_S: u64 = 1_000_000_000;

/// Parse a duration such as `500ms`, `3s`, `1.5s`, `2m`. Exact to the
/// nanosecond (a finer fraction is rounded to the nearest), at most 10^9
/// seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let ns_per_unit: u128 = match unit.trim() {
        "" | "s" | "sec" => 1_000_000_000,
        "ms" => 1_000_000,
        "us" | "µs" => 1_000,
        "ns" => 1,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        other if !num.is_empty() => {
            return Err(format!(
                "unknown duration unit '{other}' in '{s}': use ns, us, ms, s, m or h"
            ))
        }
        _ => {
            return Err(format!(
                "'{s}' is not a duration: expected e.g. 500ms, 3s, 2m"
            ))
        }
    };
    let out_of_range = || format!("duration '{s}' is out of range");
    let ns = match decimal_times(num, ns_per_unit) {
        Err(Decimal::NotANumber) => {
            return Err(format!(
                "'{s}' is not a duration: expected e.g. 500ms, 3s, 2m"
            ))
        }
        Err(Decimal::TooLarge) => return Err(out_of_range()),
        Ok(v) => v.whole + u128::from(v.half_up),
    };
    if ns > u128::from(MAX_DURATION_S) * 1_000_000_000 {
        return Err(out_of_range());
    }
    Ok(Duration::from_nanos(ns as u64))
}

/// A duration as one would type it: `150ms`, `1s`, `2.5s`, `2m`.
pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 1000.0 {
        format!("{}ms", (ms * 1000.0).round() / 1000.0)
    } else if ms < 120_000.0 || ms % 60_000.0 != 0.0 {
        format!("{}s", (ms / 10.0).round() / 100.0)
    } else {
        format!("{}m", ms / 60_000.0)
    }
}

/// A count and its noun, singular or plural: `1 case`, `3 cases`,
/// `0 repetitions`.
pub fn n_of(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A wall-clock time as a person reads it: `8 s`, `3 min 20 s`,
/// `1 h 05 min`.
pub fn fmt_wall(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        let m = (s + 30) / 60;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

/// A byte count in binary units: `4 KiB`, `1.5 GiB`, `512 B`.
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// A size as a flag would take it: `4G`, `512M`, `64k`, else bytes.
pub fn fmt_size_flag(b: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "k")] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// Compact block size for tables: `4k`, `1M`, `512`.
pub fn fmt_bs(b: u64) -> String {
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{}M", b >> 20)
    } else if b >= 1 << 10 && b % (1 << 10) == 0 {
        format!("{}k", b >> 10)
    } else {
        b.to_string()
    }
}

/// A latency in ns as `812 ns`, `14.2 us`, `3.10 ms`, `1.20 s`.
pub fn fmt_ns(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} us", v / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", v / 1e6)
    } else {
        format!("{:.2} s", v / 1e9)
    }
}

/// A rate with three significant digits: `812`, `14.2k`, `1.25M`.
pub fn fmt_count(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// Requests a latency percentile `p` (0.99 for p99) needs behind it to be
/// more than a guess: about 10 / (1 - p), so that at least 10 requests lie
/// beyond it (p50: 20, p90: 100, p99: 1,000, p99.9: 10,000). With fewer, the
/// figure is decided by a handful of requests, or is simply the maximum.
pub fn percentile_min_requests(p: f64) -> u64 {
    if !(0.0..1.0).contains(&p) {
        return u64::MAX;
    }
    (10.0 / (1.0 - p)).round() as u64
}

/// Whether `count` requests are too few for percentile `p`
/// ([`percentile_min_requests`]). A count of 0 means unknown (results older
/// than schema 3 did not record it): never marked.
pub fn too_few_requests(p: f64, count: u64) -> bool {
    count > 0 && count < percentile_min_requests(p)
}

/// A latency percentile as the reports print it: [`fmt_ns`], with `~` in
/// front when too few requests are behind it (`~6.80 ms`).
pub fn fmt_percentile(ns: u64, p: f64, count: u64) -> String {
    let mark = if too_few_requests(p, count) { "~" } else { "" };
    format!("{mark}{}", fmt_ns(ns))
}

/// The device fraction (bytes the device moved / bytes asked) as the
/// reports print it: a percentage up to 200% (`98%`, `112%`), a ratio
/// beyond, where a percentage reads badly (`3.4x`, `1878x`).
pub fn fmt_device_fraction(f: f64) -> String {
    if f < 2.0 {
        format!("{:.0}%", f * 100.0)
    } else if f < 10.0 {
        format!("{f:.1}x")
    } else {
        format!("{f:.0}x")
    }
}

/// `text` wrapped at spaces to lines of at most `width` characters (a word
/// longer than that gets a line of its own), the first line after `first`,
/// the others after `rest`; every line ends with a newline. A number and
/// its unit stay on one line (`4.6 GiB`, `150 ms`).
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        match words.last_mut() {
            Some(prev) if is_unit(word) && prev.ends_with(|c: char| c.is_ascii_digit()) => {
                prev.push(' ');
                prev.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
    }
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in &words {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// A unit as the reports write it after a number, punctuation after it
/// allowed (`GiB`, `ms;`, `MiB/s),`).
fn is_unit(word: &str) -> bool {
    let w = word.trim_end_matches(|c: char| ",;:.)]".contains(c));
    matches!(
        w,
        "B" | "KiB"
            | "MiB"
            | "GiB"
            | "TiB"
            | "kB"
            | "MB"
            | "GB"
            | "TB"
            | "MiB/s"
            | "GiB/s"
            | "MB/s"
            | "GB/s"
            | "ns"
            | "us"
            | "µs"
            | "ms"
            | "s"
            | "IOPS"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_take_the_noun_they_need() {
        assert_eq!(super::n_of(1u32, "case", "cases"), "1 case");
        assert_eq!(super::n_of(0u32, "case", "cases"), "0 cases");
        assert_eq!(
            super::n_of(3u64, "repetition", "repetitions"),
            "3 repetitions"
        );
    }

    #[test]
    fn wall_times_read_as_people_say_them() {
        use super::fmt_wall;
        use std::time::Duration;
        assert_eq!(fmt_wall(Duration::from_millis(7_600)), "8 s");
        assert_eq!(fmt_wall(Duration::from_secs(200)), "3 min 20 s");
        assert_eq!(fmt_wall(Duration::from_secs(3_900)), "1 h 05 min");
        assert_eq!(fmt_wall(Duration::from_secs(7_199)), "2 h 00 min");
    }

    use super::*;

    #[test]
    fn durations_print_as_typed() {
        for (d, s) in [
            (Duration::from_millis(150), "150ms"),
            (Duration::from_secs(1), "1s"),
            (Duration::from_millis(2500), "2.5s"),
            (Duration::from_secs(180), "3m"),
            (Duration::from_secs(90), "90s"),
        ] {
            assert_eq!(fmt_duration(d), s);
            assert_eq!(parse_duration(s).unwrap(), d, "{s} reads back");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("100MB").unwrap(), 100_000_000);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size(" 8 ").unwrap(), 8);
        assert!(parse_size("").is_err());
        assert!(parse_size("k").is_err());
        assert!(parse_size("4x").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("1.1").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn sizes_and_durations_are_exact_beyond_f64() {
        // Found by the proptest/fuzz round trips: through f64 these read
        // as 9007199254740992 bytes and 8923997.751411697 s.
        assert_eq!(parse_size("9007199254740993"), Ok(9_007_199_254_740_993));
        assert_eq!(parse_size("9223372036854775807"), Ok(i64::MAX as u64));
        assert!(parse_size("9223372036854775808")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_size("9007199254740993.5")
            .unwrap_err()
            .contains("whole number"));
        assert!(parse_size("1".repeat(60).as_str())
            .unwrap_err()
            .contains("too large"));
        assert_eq!(parse_size("0.5k"), Ok(512));
        assert_eq!(parse_size(".5k"), Ok(512));
        assert_eq!(parse_size("1.50000000000000000000000000000M"), Ok(3 << 19));
        assert!(parse_size(".").is_err() && parse_size("1.2.3").is_err());
        assert_eq!(
            parse_duration("8923997751411696ns"),
            Ok(Duration::from_nanos(8_923_997_751_411_696))
        );
        assert_eq!(parse_duration("1.5ns"), Ok(Duration::from_nanos(2)));
        assert_eq!(parse_duration("1.4999ns"), Ok(Duration::from_nanos(1)));
        assert_eq!(parse_duration("0.1s"), Ok(Duration::from_millis(100)));
        assert_eq!(
            parse_duration("1000000000"),
            Ok(Duration::from_secs(1_000_000_000))
        );
        assert!(parse_duration("1000000000.000000001")
            .unwrap_err()
            .contains("out of range"));
        assert!(parse_duration("9".repeat(50).as_str())
            .unwrap_err()
            .contains("out of range"));
        assert!(parse_duration("").unwrap_err().contains("not a duration"));
        assert!(parse_duration("ms").unwrap_err().contains("not a duration"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3 weeks").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(fmt_bs(4096), "4k");
        assert_eq!(fmt_bs(1 << 20), "1M");
        assert_eq!(fmt_bs(1000), "1000");
        assert_eq!(fmt_ns(812), "812 ns");
        assert_eq!(fmt_ns(14_200), "14.2 us");
        assert_eq!(fmt_ns(3_100_000), "3.10 ms");
        assert_eq!(fmt_count(812.0), "812");
        assert_eq!(fmt_count(14_200.0), "14.2k");
        assert_eq!(fmt_count(1_250_000.0), "1.25M");
    }
    #[test]
    fn percentiles_need_ten_over_one_minus_p_requests() {
        assert_eq!(percentile_min_requests(0.5), 20);
        assert_eq!(percentile_min_requests(0.9), 100);
        assert_eq!(percentile_min_requests(0.99), 1_000);
        assert_eq!(percentile_min_requests(0.999), 10_000);
        assert!(too_few_requests(0.999, 9_999));
        assert!(!too_few_requests(0.999, 10_000));
        assert!(too_few_requests(0.99, 256));
        assert!(!too_few_requests(0.5, 256));
        assert!(too_few_requests(0.5, 19));
        // 0: a result older than schema 3, count unknown.
        assert!(!too_few_requests(0.999, 0));
        assert_eq!(fmt_percentile(6_800_000, 0.999, 256), "~6.80 ms");
        assert_eq!(fmt_percentile(6_800_000, 0.999, 0), "6.80 ms");
        assert_eq!(fmt_percentile(31_200, 0.5, 256), "31.2 us");
    }

    #[test]
    fn device_fraction_is_a_ratio_when_large() {
        assert_eq!(fmt_device_fraction(0.98), "98%");
        assert_eq!(fmt_device_fraction(1.12), "112%");
        assert_eq!(fmt_device_fraction(3.44), "3.4x");
        assert_eq!(fmt_device_fraction(1878.65), "1879x");
    }
}

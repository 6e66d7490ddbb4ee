//! fio's latency figures from iopath's [`Latency`]: `lat_ns` and
//! `clat_ns` ([`LatStats`]: min, max, mean, the sample standard
//! deviation, `N` and the percentiles under fio's keys), and the
//! `latency_ns`, `latency_us` and `latency_ms` bins ([`BinShares`]) from
//! the recorded [`LatencyBins`].

use crate::result::{Latency, LatencyBins};

use super::{finite, BinShares, LatStats};

/// One of a latency's figures.
type Figure = fn(&Latency) -> u64;

/// The percentiles iopath records, under fio's keys.
pub(super) const PERCENTILES: [(&str, Figure); 4] = [
    ("50.000000", |l| l.p50),
    ("90.000000", |l| l.p90),
    ("99.000000", |l| l.p99),
    ("99.900000", |l| l.p999),
];

/// fio's keys of the ns and µs bins, and of the ms ones (two more):
/// [`LatencyBins`] in fio's units.
const BIN_KEYS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];
const _: () = assert!(LatencyBins::LEN == 10 + 10 + BIN_KEYS.len());

/// fio's `latency_ns`, `latency_us` and `latency_ms` from the latency's
/// bins: each bin's share of all of them, percent, a share under 0.01 of a
/// bin that holds requests written as 0.01, as fio does (`stat_calc_lat`);
/// `None` without bins, or with nothing in them.
pub(super) fn bin_shares(l: &Latency) -> Option<[BinShares; 3]> {
    let bins = l.bins?;
    let total = bins.total();
    if total == 0 {
        return None;
    }
    let share = |n: u64| {
        let pct = finite(n as f64 * 100.0 / total as f64);
        if n > 0 && pct < 0.01 {
            0.01
        } else {
            pct
        }
    };
    let unit = |from: usize, len: usize| {
        BinShares(
            BIN_KEYS[..len]
                .iter()
                .zip(&bins.0[from..from + len])
                .map(|(k, &n)| (*k, share(n)))
                .collect(),
        )
    };
    Some([unit(0, 10), unit(10, 10), unit(20, 12)])
}

/// fio's statistics of iopath's latency; `None` when it has none (no
/// request timed).
pub(super) fn lat_stats(l: &Latency) -> Option<LatStats> {
    if l.count == 0 && l.max == 0 {
        return None;
    }
    Some(LatStats {
        min: l.min,
        max: l.max,
        mean: finite(l.mean),
        stddev: l.stddev.map(|sd| sample_stddev(sd, l.count)),
        n: (l.count > 0).then_some(l.count),
        percentile: PERCENTILES
            .iter()
            .map(|(k, f)| (k.to_string(), f(l)))
            .collect(),
    })
}

/// The sample standard deviation (n − 1, fio's) of `n` values whose
/// population one (n) is `sd`: 0 for one value, `sd` itself when `n` is
/// not known.
pub(super) fn sample_stddev(sd: f64, n: u64) -> f64 {
    let sd = finite(sd);
    match n {
        0 => sd,
        1 => 0.0,
        n => finite(sd * (n as f64 / (n - 1) as f64).sqrt()),
    }
}

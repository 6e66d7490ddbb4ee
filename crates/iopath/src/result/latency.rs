//! Latency as the result records it: [`Latency`], the figures of the
//! requests' latencies (min, mean, percentiles, max, standard deviation)
//! from an HDR histogram, and [`LatencyBins`], the requests counted in
//! fio's latency bins, with their JSON form.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency of individual requests, from right before the request's own
/// submission to its completion (fio's `lat`), in ns, measured in a closed
/// loop (docs/statistics.md). In a summary: from the merged histograms of
/// the measured repetitions.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    /// Requests behind the figures; 0 in results older than schema 3.
    #[serde(default)]
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    /// Population standard deviation of the latencies (the histogram's:
    /// each request at the middle of its histogram bucket); absent in
    /// results that did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    /// Requests per fio latency bin ([`LatencyBins`]); absent in results
    /// that did not record them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bins: Option<LatencyBins>,
}

impl Latency {
    pub fn from_hist(h: &Histogram<u64>) -> Latency {
        if h.is_empty() {
            return Latency::default();
        }
        Latency {
            count: h.len(),
            min: h.min(),
            mean: h.mean(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            stddev: Some(h.stdev()),
            bins: Some(LatencyBins::from_hist(h)),
        }
    }
}

/// How many requests fell in each of fio's latency bins (fio's
/// `latency_ns`, `latency_us` and `latency_ms`, as counts where fio writes
/// percents, so that repetitions' bins add up). Bin `i` holds the requests
/// from [`LatencyBins::EDGES_NS`]`[i - 1]` (0 for the first) up to, not
/// including, `EDGES_NS[i]`; the last has no upper end.
///
/// In JSON: an object of the bins that hold requests, in bin order, each
/// named as fio names it, by its upper end and unit (`"250us"`: from
/// 100 µs up to 250 µs), the last `">=2000ms"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatencyBins(pub [u64; LatencyBins::LEN]);

impl LatencyBins {
    pub const LEN: usize = 32;

    /// The upper ends of the bins but the last, in ns: fio's ranges
    /// (`io_u_mark_latency`), ten in ns, ten in µs, eleven in ms.
    pub const EDGES_NS: [u64; LatencyBins::LEN - 1] = [
        2,
        4,
        10,
        20,
        50,
        100,
        250,
        500,
        750,
        1_000,
        2_000,
        4_000,
        10_000,
        20_000,
        50_000,
        100_000,
        250_000,
        500_000,
        750_000,
        1_000_000,
        2_000_000,
        4_000_000,
        10_000_000,
        20_000_000,
        50_000_000,
        100_000_000,
        250_000_000,
        500_000_000,
        750_000_000,
        1_000_000_000,
        2_000_000_000,
    ];

    /// The bins' names, as fio's keys with their unit.
    pub const NAMES: [&'static str; LatencyBins::LEN] = [
        "2ns", "4ns", "10ns", "20ns", "50ns", "100ns", "250ns", "500ns", "750ns", "1000ns", "2us",
        "4us", "10us", "20us", "50us", "100us", "250us", "500us", "750us", "1000us", "2ms", "4ms",
        "10ms", "20ms", "50ms", "100ms", "250ms", "500ms", "750ms", "1000ms", "2000ms", ">=2000ms",
    ];

    /// The bin a latency of `ns` falls in.
    pub fn index(ns: u64) -> usize {
        Self::EDGES_NS.partition_point(|&edge| edge <= ns)
    }

    /// The histogram's requests by bin, each bucket of the histogram
    /// counted at its middle value (the histogram keeps 3 significant
    /// digits: a request within 0.1% of a bin's edge may be counted in the
    /// bin beside it).
    pub fn from_hist(h: &Histogram<u64>) -> LatencyBins {
        let mut bins = LatencyBins::default();
        for v in h.iter_recorded() {
            let at = h.median_equivalent(v.value_iterated_to());
            bins.0[Self::index(at)] += v.count_since_last_iteration();
        }
        bins
    }

    /// The requests in all the bins.
    pub fn total(&self) -> u64 {
        self.0.iter().fold(0, |a, &n| a.saturating_add(n))
    }

    /// The bins of `self` and `other` together.
    pub fn add(&mut self, other: &LatencyBins) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a = a.saturating_add(b);
        }
    }
}

impl Serialize for LatencyBins {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let held = self.0.iter().filter(|&&n| n > 0).count();
        let mut m = s.serialize_map(Some(held))?;
        for (name, n) in Self::NAMES.iter().zip(self.0) {
            if n > 0 {
                m.serialize_entry(name, &n)?;
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for LatencyBins {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = std::collections::BTreeMap::<String, u64>::deserialize(d)?;
        let mut bins = LatencyBins::default();
        for (name, n) in map {
            let i = Self::NAMES
                .iter()
                .position(|&k| k == name)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown latency bin `{name}`")))?;
            bins.0[i] = n;
        }
        Ok(bins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_from_histogram() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let l = Latency::from_hist(&h);
        assert_eq!(l.min, 1000);
        assert!((499_000..=501_000).contains(&l.p50), "{}", l.p50);
        assert!((989_000..=991_000).contains(&l.p99), "{}", l.p99);
        assert!(l.max >= 999_000);
        assert!((l.mean - 500_500.0).abs() < 1_000.0);
        // 1..=1000 µs evenly: population stddev sqrt((1000² − 1) / 12) µs.
        let sd = ((1000.0f64.powi(2) - 1.0) / 12.0).sqrt() * 1000.0;
        let got = l.stddev.unwrap();
        assert!((got - sd).abs() < 0.001 * sd, "{got} {sd}");
        // fio's bins: [1, 2) µs, [2, 4), [4, 10), ... [750, 1000), 1000 µs.
        // 750 µs is in the histogram bucket 749.568 to 750.079 µs, whose
        // middle is below the edge: counted in the bin below.
        let bins = l.bins.unwrap();
        let at = |name: &str| bins.0[LatencyBins::NAMES.iter().position(|&n| n == name).unwrap()];
        assert_eq!(
            ["2us", "4us", "10us", "20us", "50us", "100us", "250us", "500us", "750us", "1000us"]
                .map(at),
            [1, 2, 6, 10, 30, 50, 150, 250, 251, 249]
        );
        assert_eq!(at("2ms"), 1);
        assert_eq!(bins.total(), 1000);
        // Nothing recorded: nothing to say.
        let empty = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3).unwrap();
        assert_eq!(Latency::from_hist(&empty), Latency::default());
    }

    #[test]
    fn fio_latency_bins() {
        assert_eq!(LatencyBins::index(0), 0);
        assert_eq!(LatencyBins::index(1), 0);
        assert_eq!(LatencyBins::index(2), 1);
        assert_eq!(LatencyBins::index(999), 9);
        assert_eq!(LatencyBins::index(1_000), 10);
        assert_eq!(LatencyBins::index(249_999), 16);
        assert_eq!(LatencyBins::index(250_000), 17);
        assert_eq!(LatencyBins::index(1_999_999_999), 30);
        assert_eq!(LatencyBins::index(2_000_000_000), 31);
        assert_eq!(LatencyBins::index(u64::MAX), 31);
        assert_eq!(LatencyBins::NAMES[16], "250us");
        assert_eq!(LatencyBins::NAMES[31], ">=2000ms");
        // Each name is its upper edge.
        for (edge, name) in LatencyBins::EDGES_NS.iter().zip(LatencyBins::NAMES) {
            let (n, unit) = name.split_at(name.find(|c: char| c.is_alphabetic()).unwrap());
            let scale = match unit {
                "ns" => 1,
                "us" => 1_000,
                "ms" => 1_000_000,
                _ => panic!("{name}"),
            };
            assert_eq!(n.parse::<u64>().unwrap() * scale, *edge, "{name}");
        }
        // Only the bins that hold requests, in bin order; read back whole.
        let mut b = LatencyBins::default();
        b.0[LatencyBins::index(300_000)] = 7;
        b.0[LatencyBins::index(90_000)] = 3;
        b.0[LatencyBins::index(3_000_000_000)] = 1;
        let text = serde_json::to_string(&b).unwrap();
        assert_eq!(text, r#"{"100us":3,"500us":7,">=2000ms":1}"#);
        assert_eq!(serde_json::from_str::<LatencyBins>(&text).unwrap(), b);
        assert!(serde_json::from_str::<LatencyBins>(r#"{"3us":1}"#).is_err());
        let mut sum = b;
        sum.add(&b);
        assert_eq!(sum.total(), 22);
    }

    #[test]
    fn latency_without_the_newer_fields_still_loads() {
        let l: Latency = serde_json::from_str(
            r#"{"count":2,"min":1,"mean":1.5,"p50":1,"p90":2,"p99":2,"p999":2,"max":2}"#,
        )
        .unwrap();
        assert_eq!((l.stddev, l.bins), (None, None));
        let back = serde_json::to_value(&l).unwrap();
        assert!(back.get("stddev").is_none() && back.get("bins").is_none());
    }
}

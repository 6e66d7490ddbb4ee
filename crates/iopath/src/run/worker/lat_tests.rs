//! Tests of the batched latency recording (`books::Latencies`).

use super::books::{Latencies, LAT_BATCH};
use super::*;

/// Latencies recorded a batch at a time make the histogram that recording
/// each at once made: every value counted once (none left pending at any
/// count, a batch's edge included), long ones saturating as before.
#[test]
fn batched_latencies_equal_recording_each() {
    for count in [
        0,
        1,
        LAT_BATCH - 1,
        LAT_BATCH,
        LAT_BATCH + 1,
        3 * LAT_BATCH + 7,
    ] {
        let mut lat = Latencies::new().unwrap();
        let mut want = Histogram::<u64>::new_with_bounds(1, MAX_LAT_NS, 3).unwrap();
        let mut rng = Rng::stream(31, count as u64);
        for i in 0..count {
            let ns = if i % 97 == 5 {
                MAX_LAT_NS * 2 // past the top: saturates
            } else {
                1 + rng.below(50_000_000)
            };
            lat.add(ns);
            want.saturating_record(ns);
        }
        let got = lat.finish();
        assert_eq!(got.len(), count as u64, "count {count}");
        assert_eq!(got, want, "count {count}");
        if count > 0 {
            assert_eq!(got.max(), want.max());
            assert_eq!(got.value_at_quantile(0.5), want.value_at_quantile(0.5));
        }
    }
}

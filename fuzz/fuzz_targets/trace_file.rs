//! Recorded traces as `iopath trace show` reads them: the reader either
//! reads every event or stops at a clean error naming a byte inside the
//! input; it never panics, and its summary takes whatever it read.
#![no_main]

use iopath::trace::codec::{TraceError, TraceReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(r) = TraceReader::open(data) else {
        return;
    };
    let mut sum = iopath::trace::summary::Summary::new(r.header());
    for e in r {
        match e {
            Ok(e) => sum.add(&e),
            Err(TraceError::Corrupt { offset, .. } | TraceError::Truncated { offset, .. }) => {
                assert!(offset <= data.len() as u64);
                return;
            }
            Err(e) => panic!("{e}"),
        }
    }
});

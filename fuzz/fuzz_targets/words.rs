//! Every value spelling of flags and job files (sizes, durations,
//! percentages, spans, names), and the numbers words are written from.
//! Properties: tests/parsers/checks.rs (`words`, `numbers`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iopath/tests/parsers/checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = checks::words(s);
    }
    let mut n = [0u8; 8];
    let mut f = [0u8; 8];
    for (i, b) in data.iter().take(16).enumerate() {
        if i < 8 {
            n[i] = *b;
        } else {
            f[i - 8] = *b;
        }
    }
    checks::numbers(u64::from_le_bytes(n), f64::from_le_bytes(f));
});

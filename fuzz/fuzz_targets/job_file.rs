//! TOML job files (`iopath run JOB.toml`; the presets are the same format),
//! read, written back and planned. Properties: tests/parsers/checks.rs
//! (`job_file`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iopath/tests/parsers/checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    // A job file is read as UTF-8 text (`read_to_string`): other bytes
    // never reach the parser.
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = checks::job_file(text);
    }
});

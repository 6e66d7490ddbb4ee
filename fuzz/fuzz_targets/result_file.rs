//! Result files as `iopath report` and `iopath compare` read them (any
//! schema from 1 to the current one), with every report made of them.
//! Properties: tests/parsers/checks.rs (`result_file`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iopath/tests/parsers/checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    let _ = checks::result_file(data);
});

//! Command lines (`iopath run ...`, `compare`, `presets show`): the
//! arguments are the input split at NUL bytes. Properties:
//! tests/parsers/checks.rs (`command_line`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iopath/tests/parsers/checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    let args: Vec<String> = data
        .split(|&b| b == 0)
        .take(32)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let _ = checks::command_line(&args);
});

//! The placement flags (`--cpus`, `--numa-node`, `--mem-node`,
//! `--mem-policy`, `--sqpoll-cpu`) on machines of up to four nodes.
//! Properties: tests/parsers/checks.rs (`placement`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iopath/tests/parsers/checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    let _ = checks::placement(data);
});

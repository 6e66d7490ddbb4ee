//! CPU and node lists (`--cpus`, sysfs `cpulist`/`online` files).
//! Properties: tests/parsers/checks.rs (`cpu_lists`, `cpu_list_round_trip`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iopath/tests/parsers/checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = checks::cpu_lists(s);
    }
    let cpus: Vec<u32> = data
        .chunks_exact(2)
        .map(|c| u32::from(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    checks::cpu_list_round_trip(&cpus);
});

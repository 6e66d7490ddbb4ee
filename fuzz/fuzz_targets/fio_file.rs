//! fio job files (`iopath run --fio`, `iopath import-fio`), read from a
//! file in a directory of their own, mapped to a job, written back and
//! planned. Properties: tests/parsers/checks.rs (`fio_file`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iopath/tests/parsers/checks.rs"]
mod checks;

/// One empty directory for the whole run: the job file is written there,
/// and relative includes are looked up there (they find nothing).
fn dir() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("iopath-fuzz-fio-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a scratch directory");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let _ = checks::fio_file(data, dir());
});

//! fio iologs as `iopath trace import-fio` reads them, exported back as
//! `export-fio` writes them: no panic, bounded lines.
#![no_main]

use iopath::trace::iolog::{Exporter, Importer, IologReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(r) = IologReader::open(data) else {
        return;
    };
    let mut imp = Importer::default();
    let mut events = Vec::new();
    for line in r.take(10_000) {
        let Ok(line) = line else { return };
        events.extend(imp.event(&line));
    }
    let header = imp.header("fuzz");
    let mut ex = Exporter::new(Vec::new(), 3, &header.files).unwrap();
    for e in &events {
        ex.event(e).unwrap();
    }
    ex.finish(0).unwrap();
});

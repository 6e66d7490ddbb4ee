//! The end of a recording: the header from what the resolver learnt (the
//! files, their sizes and kinds, anonymized when asked) and the trace
//! assembled from its spool.

use std::path::Path;

use super::resolve::FileSeen;
use crate::trace::{BlindSpot, Ending, FileEntry, FileKind, Header};

/// The parts of a header the backend knows.
#[derive(Debug)]
pub struct Ended {
    pub command: Vec<String>,
    pub backend: &'static str,
    pub started_unix_ns: u64,
    pub duration_ns: u64,
    pub lost_events: u64,
    pub unresolved_events: u64,
    pub blind_spots: Vec<BlindSpot>,
    pub ending: Ending,
}

/// The header of a recording into `output`.
pub fn header(e: Ended, files: &[FileSeen], output: &Path, anonymize: bool) -> Header {
    let dir = output
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let system = serde_json::to_value(crate::system::sysinfo::collect(dir)).unwrap_or_default();
    let files = files.iter().map(|f| entry(f, anonymize)).collect();
    let mut command = e.command;
    if anonymize {
        command = command.iter().map(|a| anonymous(a)).collect();
    }
    Header {
        command,
        backend: e.backend.into(),
        started_unix_ns: e.started_unix_ns,
        duration_ns: e.duration_ns,
        system,
        files,
        events: 0,
        lost_events: e.lost_events,
        unresolved_events: e.unresolved_events,
        blind_spots: e.blind_spots,
        ending: e.ending,
        anonymized: anonymize,
    }
}

fn entry(f: &FileSeen, anonymize: bool) -> FileEntry {
    use std::os::unix::fs::FileTypeExt;
    let (kind, size) = match std::fs::metadata(&f.path) {
        Err(_) => (FileKind::Missing, 0),
        Ok(m) => {
            let t = m.file_type();
            let kind = if t.is_file() {
                FileKind::Regular
            } else if t.is_dir() {
                FileKind::Directory
            } else if t.is_block_device() {
                FileKind::BlockDevice
            } else if t.is_char_device() {
                FileKind::CharDevice
            } else {
                FileKind::Other
            };
            (kind, if t.is_file() { m.len() } else { 0 })
        }
    };
    FileEntry {
        path: if anonymize {
            anonymous(&f.path)
        } else {
            f.path.clone()
        },
        size_bytes: size.max(f.extent),
        kind,
    }
}

/// A stable stand-in for a path or argument: the same text gives the same
/// name in every trace (FNV-1a, 64 bits).
pub fn anonymous(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("anon-{h:016x}")
}

/// Wall-clock ns since the epoch.
pub fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// CLOCK_MONOTONIC ns (bpftrace's `nsecs`).
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// The command as text, one argument each.
pub fn argv_text(argv: &[std::ffi::OsString]) -> Vec<String> {
    argv.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

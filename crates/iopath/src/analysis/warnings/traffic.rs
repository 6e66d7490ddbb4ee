//! Whose traffic the device counters hold. The disk's counters are
//! system-wide: another process reading the same disk during a case adds
//! its bytes, which would read as read-ahead waste of a buffered case or as
//! an impossible excess of an O_DIRECT one. The process's own I/O
//! accounting (`process_io`, `/proc/self/io`) holds only what this
//! process's threads made the block layer read, read-ahead and fault-around
//! included, so:
//!
//! - **own fraction** = own device reads / bytes asked: read-ahead and
//!   whole-page waste, and nothing else;
//! - **other share** = (device reads − own device reads) / bytes asked:
//!   other processes' reads.
//!
//! Both are the result's `costs.own_device_per_byte` and
//! `costs.other_device_per_byte` (issue 29) where it has them; results
//! written before them are read from `process_io` and `device`, and those
//! without `process_io` (older ones, kernels without task I/O accounting)
//! fall back to the device counters alone.

use super::{is_read, is_user_space_cache, reads_through_page_cache, some, Fact, Run};
use crate::result::warning::{AmplificationCause, CaseFraction};
use crate::result::{CaseResult, Measurement};

/// Other processes' reads, as a share of the bytes a case asked for, from
/// which a case is said to have shared its disk.
pub const OTHER_TRAFFIC_SHARE: f64 = 0.2;

/// A read case through the page cache that fetched more than this many
/// times the bytes it asked for is amplified.
pub const AMPLIFIED_READS: f64 = 2.0;

/// The share of a read case's bytes that other processes read from its
/// disk, when it is over [`OTHER_TRAFFIC_SHARE`]: beyond the case's own
/// reads where the process recorded them; without that, only a case that
/// bypasses the page cache (no read-ahead) can tell, by its excess over
/// what it asked.
fn other_traffic(c: &CaseResult) -> Option<f64> {
    let s = c.summary.as_ref()?;
    if c.method == iopath_io::Method::Null || !is_read(&c.pattern) {
        return None;
    }
    match other_read_share(s) {
        Some(other) => (other > OTHER_TRAFFIC_SHARE).then_some(other),
        None if !reads_through_page_cache(&c.method) => s
            .device_fraction
            .filter(|&f| f > 1.0 + OTHER_TRAFFIC_SHARE)
            .map(|f| f - 1.0),
        None => None,
    }
}

/// True when some measured case recorded the process's own I/O.
fn own_accounting(run: &Run<'_>) -> bool {
    run.measured
        .iter()
        .any(|(_, c)| c.summary.as_ref().is_some_and(|s| s.process_io.is_some()))
}

/// Read cases whose disk read others' bytes too.
fn others(run: &Run<'_>) -> Vec<CaseFraction> {
    run.measured
        .iter()
        .filter_map(|&(case, c)| other_traffic(c).map(|fraction| CaseFraction { case, fraction }))
        .collect()
}

/// `other_disk_traffic`: the disk read more than these cases did.
pub fn other_disk_traffic(run: &Run<'_>) -> Option<Fact> {
    Some(Fact::OtherDiskTraffic {
        cases: some(others(run))?,
        own_accounting: own_accounting(run),
    })
}

/// `read_amplification`: read cases through the page cache (or a
/// user-space cache) that fetched more than [`AMPLIFIED_READS`] times
/// their bytes, each with its own read fraction.
pub fn read_amplification(run: &Run<'_>) -> Option<Fact> {
    let amplified: Vec<(CaseFraction, bool)> = run
        .measured
        .iter()
        .filter(|(_, c)| reads_through_page_cache(&c.method) && is_read(&c.pattern))
        .filter_map(|&(case, c)| {
            let fraction = c.summary.as_ref().and_then(own_read_fraction)?;
            (fraction > AMPLIFIED_READS)
                .then_some((CaseFraction { case, fraction }, is_user_space_cache(c)))
        })
        .collect();
    let user = amplified.iter().any(|&(_, u)| u);
    let kernel = amplified.iter().any(|&(_, u)| !u);
    let cause = match (kernel, user) {
        (true, false) => AmplificationCause::ReadAhead,
        (false, true) => AmplificationCause::UserSpaceCache,
        _ => AmplificationCause::Both,
    };
    Some(Fact::ReadAmplification {
        cases: some(amplified.into_iter().map(|(c, _)| c).collect())?,
        cause,
        read_ahead_kb: run
            .result
            .system
            .device
            .as_ref()
            .and_then(|d| d.read_ahead_kb),
        other_traffic_unaccounted: !own_accounting(run) && !others(run).is_empty(),
    })
}

/// The bytes a read case fetched from the device over the bytes it asked
/// for: its own reads where the process recorded them (the result's
/// `costs.own_device_per_byte`, or its accounting), else the device's.
pub fn own_read_fraction(s: &Measurement) -> Option<f64> {
    if let Some(own) = s.costs.as_ref().and_then(|c| c.own_device_per_byte) {
        return Some(own);
    }
    match s.process_io {
        Some(p) if s.read_bytes > 0 => Some(p.read_bytes as f64 / s.read_bytes as f64),
        _ => s.device_fraction,
    }
}

/// Device reads beyond the process's own, over the bytes asked; `None`
/// without the process's accounting, device counters or reads.
pub fn other_read_share(s: &Measurement) -> Option<f64> {
    if let Some(other) = s.costs.as_ref().and_then(|c| c.other_device_per_byte) {
        return Some(other);
    }
    let (p, d) = (s.process_io?, s.device?);
    (s.read_bytes > 0)
        .then(|| d.read_bytes.saturating_sub(p.read_bytes) as f64 / s.read_bytes as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ProcessIo;
    use crate::system::metrics::blockdev::DiskCounters;

    fn read(asked: u64, device: u64, own: Option<u64>) -> Measurement {
        Measurement {
            read_bytes: asked,
            device: Some(DiskCounters {
                read_bytes: device,
                ..DiskCounters::default()
            }),
            device_fraction: Some(device as f64 / asked as f64),
            process_io: own.map(|o| ProcessIo {
                read_bytes: o,
                ..ProcessIo::default()
            }),
            ..Measurement::default()
        }
    }

    /// The case: a cold buffered read of 256 MiB beside another
    /// reader; the disk moved 1.45x, the process exactly 1.0x.
    #[test]
    fn another_readers_bytes_are_not_read_ahead() {
        let mib = 1 << 20;
        let m = read(256 * mib, 371 * mib, Some(256 * mib));
        assert_eq!(own_read_fraction(&m), Some(1.0));
        let other = other_read_share(&m).unwrap();
        assert!((other - 115.0 / 256.0).abs() < 1e-9, "{other}");
    }

    /// The result's own and other figures, where it has them, are what
    /// the warnings use.
    #[test]
    fn the_results_own_and_other_figures_decide() {
        let mut m = read(100, 300, Some(100));
        m.costs = Some(crate::result::Costs {
            own_device_per_byte: Some(1.5),
            other_device_per_byte: Some(1.5),
            ..crate::result::Costs::default()
        });
        assert_eq!(own_read_fraction(&m), Some(1.5));
        assert_eq!(other_read_share(&m), Some(1.5));
    }

    #[test]
    fn without_the_process_accounting_the_device_counters_stand() {
        let m = read(100, 250, None);
        assert_eq!(own_read_fraction(&m), Some(2.5));
        assert_eq!(other_read_share(&m), None);
    }

    /// Read-ahead is the process's own: a fraction above 1 with no other
    /// traffic.
    #[test]
    fn read_ahead_stays_the_cases_own() {
        let m = read(4096, 8 << 20, Some(8 << 20));
        assert_eq!(own_read_fraction(&m), Some(2048.0));
        assert_eq!(other_read_share(&m), Some(0.0));
    }
}

//! A repetition's costs per I/O ([`crate::result::Costs`]) from its
//! counters, and what counts as a copy for each method.
//!
//! **Copies** are the bytes the kernel copies between the page cache and
//! the program's buffer in a `read`/`write`-family call (`copy_to_user`,
//! `copy_from_user`), per byte the case moved:
//! - `pread`/`pwrite` methods (`buffered`, `dontcache`, `threadpool`,
//!   `tokio`, `direct`): the process's own `rchar` + `wchar`, less the
//!   bytes `O_DIRECT` moved (DMA to or from the buffer, no copy): about 1
//!   through the page cache, about 0 for `direct`;
//! - io_uring and AIO: the kernel does not count their bytes in `rchar`;
//!   through the page cache (`uring-buffered`, `uring-dontcache`) the
//!   kernel copies each byte once (1), with `O_DIRECT` none (0);
//! - `mmap`, `mmap-dax`: the program reads and writes the page cache in
//!   place (its `memcpy` is the program's, not the kernel's): 0, its cost
//!   is in the page faults;
//! - `copy-file-range`, `sendfile`: the kernel copies from page cache to
//!   page cache, nothing crosses to the program: 0;
//! - the user-space caches: `None` (their misses are `O_DIRECT`, `uffd`
//!   fills pages with `UFFDIO_COPY`: no counter tells these apart);
//! - `null`: 0.

use iopath_io::Method;

use crate::model::Pattern;
use crate::result::{Costs, Measurement, ProcessIo};
use crate::system::metrics::blockdev::DiskCounters;

/// Bytes copied between the kernel and the program during `m`, by the
/// method's rule (module doc), from the calls' accounting `own`; `None`
/// where nothing says.
pub fn copied_bytes(method: Method, m: &Measurement, own: Option<&ProcessIo>) -> Option<u64> {
    use Method as M;
    match method {
        M::Buffered | M::Dontcache | M::Threadpool | M::Tokio | M::Direct => {
            let own = own?;
            let counted = own.rchar + own.wchar;
            let direct = if method.is_direct() { m.io_bytes } else { 0 };
            Some(counted.saturating_sub(direct))
        }
        M::UringBuffered | M::UringDontcache => Some(m.io_bytes),
        M::Ucache | M::Uffd | M::UffdWp => None,
        M::Uring
        | M::UringBatch
        | M::UringSqpoll
        | M::UringIopoll
        | M::Aio
        | M::Mmap
        | M::MmapDax
        | M::CopyFileRange
        | M::Sendfile
        | M::Null => Some(0),
    }
}

/// True when the method's I/O calls are `read`/`write`-family calls that
/// the kernel counts (`syscr`, `syscw`): not io_uring's or AIO's.
fn rw_calls_counted(method: Method) -> bool {
    !(method.name().starts_with("uring") || method == Method::Aio)
}

/// True for the patterns whose device writes (not reads) say whether the
/// device did the work: `write` and `randwrite` (as `device_fraction`).
fn writes_counted(pattern: Pattern) -> bool {
    matches!(pattern, Pattern::Write | Pattern::RandWrite)
}

/// Bytes asked for and moved by the device in the direction that says
/// whether the device did the work (as `device_fraction`), and the
/// process's own share of the latter.
fn direction(pattern: Pattern, m: &Measurement, own: &ProcessIo) -> (u64, u64) {
    if writes_counted(pattern) {
        (m.write_bytes, own.write_bytes)
    } else {
        (m.read_bytes, own.read_bytes)
    }
}

/// The device's bytes in the same direction.
fn device_bytes(pattern: Pattern, d: &DiskCounters) -> u64 {
    if writes_counted(pattern) {
        d.write_bytes
    } else {
        d.read_bytes
    }
}

/// The costs of repetition `m` of a case of `method` and `pattern`, from
/// its CPU counters, its own I/O accounting (`m.process_io`), the device's
/// counters and its deferred work; the read and write calls and the bytes
/// they moved from `calls` (the workers' timed intervals and the method's
/// pool threads: not the workers' opening and closing of their engines).
pub fn of(method: Method, pattern: Pattern, m: &Measurement, calls: Option<&ProcessIo>) -> Costs {
    let ios = m.ios.max(1) as f64;
    let per_io = |n: u64| n as f64 / ios;
    let own = m.process_io.as_ref();
    let asked_own = own.map(|o| direction(pattern, m, o));
    let own_device_per_byte = asked_own
        .filter(|&(asked, _)| asked > 0)
        .map(|(asked, own)| own as f64 / asked as f64);
    let other_device_per_byte = match (asked_own, m.device.as_ref()) {
        (Some((asked, own)), Some(d)) if asked > 0 => {
            Some(device_bytes(pattern, d).saturating_sub(own) as f64 / asked as f64)
        }
        _ => None,
    };
    Costs {
        minflt_per_io: per_io(m.cpu.minflt),
        majflt_per_io: per_io(m.cpu.majflt),
        ctx_vol_per_io: per_io(m.cpu.ctx_vol),
        ctx_invol_per_io: per_io(m.cpu.ctx_invol),
        rw_calls_per_io: calls
            .filter(|_| rw_calls_counted(method))
            .map(|o| per_io(o.read_syscalls + o.write_syscalls)),
        copied_per_byte: copied_bytes(method, m, calls)
            .filter(|_| m.io_bytes > 0)
            .map(|c| c as f64 / m.io_bytes as f64),
        own_device_per_byte,
        other_device_per_byte,
        deferred_ns_per_io: m.deferred.map(|d| per_io(d.estimate_ns)),
    }
}

/// True when the kernel's deferred work during a case may be charged to its
/// CPU per I/O: a case that writes through the page cache (its write-back
/// and the journal's commit are its own). `O_DIRECT` writers have no
/// write-back, and the user-space caches write their misses with
/// `O_DIRECT`: the kernel threads' work during them is other tenants' or
/// an earlier case's write-back, shown beside (an estimate), not charged.
/// A read's work is done in the reader's context, its kernel threads'
/// share is shown beside too. The estimate is charged only where it
/// exceeds the idle baseline's spread ([`crate::result::costs::Deferred`]).
pub fn charged(method: Method, pattern: Pattern) -> bool {
    pattern.writes() && !method.is_null() && !method.is_direct() && !method.is_user_space_cache()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(io_bytes: u64, own: ProcessIo, device: u64) -> Measurement {
        Measurement {
            io_bytes,
            read_bytes: io_bytes,
            ios: io_bytes / 4096,
            read_ios: io_bytes / 4096,
            process_io: Some(own),
            device: Some(DiskCounters {
                read_bytes: device,
                ..DiskCounters::default()
            }),
            ..Measurement::default()
        }
    }

    /// A buffered read copies each byte once; O_DIRECT's bytes, counted in
    /// `rchar` too, are no copy.
    #[test]
    fn direct_reads_copy_nothing_and_buffered_reads_copy_once() {
        let mib = 1 << 20;
        let own = ProcessIo {
            rchar: mib,
            read_bytes: mib,
            read_syscalls: 256,
            ..ProcessIo::default()
        };
        let m = read(mib, own, mib);
        let b = of(Method::Buffered, Pattern::Read, &m, m.process_io.as_ref());
        assert_eq!(b.copied_per_byte, Some(1.0));
        assert_eq!(b.rw_calls_per_io, Some(1.0));
        let d = of(Method::Direct, Pattern::Read, &m, m.process_io.as_ref());
        assert_eq!(d.copied_per_byte, Some(0.0));
        // io_uring's calls and copies are not in the counters.
        let u = of(
            Method::UringBuffered,
            Pattern::Read,
            &m,
            m.process_io.as_ref(),
        );
        assert_eq!(u.rw_calls_per_io, None);
        assert_eq!(u.copied_per_byte, Some(1.0));
        assert_eq!(
            of(Method::Ucache, Pattern::Read, &m, None).copied_per_byte,
            None
        );
    }

    /// Issue 29: the disk moved 1.45x, the process exactly 1.0x: the rest
    /// is another process's, not read-ahead.
    #[test]
    fn other_traffic_is_apart_from_the_cases_own_device_bytes() {
        let mib = 1 << 20;
        let own = ProcessIo {
            read_bytes: 256 * mib,
            ..ProcessIo::default()
        };
        let c = of(
            Method::Buffered,
            Pattern::Read,
            &read(256 * mib, own, 371 * mib),
            None,
        );
        assert_eq!(c.own_device_per_byte, Some(1.0));
        let other = c.other_device_per_byte.unwrap();
        assert!((other - 115.0 / 256.0).abs() < 1e-9, "{other}");
        // Without the process's accounting neither is known.
        let mut m = read(256 * mib, own, 371 * mib);
        m.process_io = None;
        let c = of(Method::Buffered, Pattern::Read, &m, m.process_io.as_ref());
        assert_eq!(
            (c.own_device_per_byte, c.other_device_per_byte),
            (None, None)
        );
    }

    #[test]
    fn only_page_cache_writes_are_charged_deferred_work_never_direct_ones() {
        assert!(charged(Method::Buffered, Pattern::Write));
        assert!(charged(Method::Mmap, Pattern::RandWrite));
        assert!(charged(Method::Dontcache, Pattern::Write));
        assert!(charged(Method::UringBuffered, Pattern::RandRw));
        assert!(charged(Method::Threadpool, Pattern::Write));
        assert!(!charged(Method::Direct, Pattern::Write));
        assert!(!charged(Method::Uring, Pattern::RandRw));
        assert!(!charged(Method::Aio, Pattern::RandWrite));
        assert!(!charged(Method::Ucache, Pattern::Write));
        assert!(!charged(Method::Buffered, Pattern::Read));
        assert!(!charged(Method::Direct, Pattern::RandRead));
        assert!(!charged(Method::Null, Pattern::Write));
    }
}

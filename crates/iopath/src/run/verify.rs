//! `--verify` after a write repetition, outside its timing: the file is
//! made durable and its cached pages dropped (`fsync`,
//! `POSIX_FADV_DONTNEED`), then the blocks its workers wrote are read back
//! and checked, so what is checked is what the device holds, not what the
//! page cache still has (a write lost at writeback is caught).
//!
//! The guarantee: every block written in the repetition holds a block with
//! a valid checksum, its own offset, the run's seed and this repetition's
//! pass. A lost or misdirected write (an older pass, another offset), a torn
//! or corrupted block (a bad checksum) is caught. When a random pattern
//! wrote one block more than once, any one of those writes passes (the
//! header's sequence is not compared): which landed last is not tracked.

use std::os::unix::fs::FileExt;
use std::path::Path;

use iopath_io::verify::{check_all, Expect};

/// Most bytes read back in one call.
const CHUNK: u64 = 1 << 20;

/// `path` opened for the read-back, after its dirty pages reached the
/// device and its cached ones were dropped: reads then come from the device.
fn open_from_device(path: &Path) -> Result<std::fs::File, String> {
    let f = std::fs::File::open(path)
        .map_err(|e| format!("--verify: cannot open {} to read back: {e}", path.display()))?;
    iopath_io::sys::evict_file(&f).map_err(|e| {
        format!(
            "--verify: cannot write back and drop the cached pages of {} before reading back: {e}",
            path.display()
        )
    })?;
    Ok(f)
}

/// Read back and check the blocks marked in each `(start, len, written)`:
/// `written` has one bit per `bs`-byte block from `start`. Returns the bytes
/// checked; the first bad block is the error.
pub fn read_back(
    path: &Path,
    bs: u64,
    unit: u64,
    seed: u64,
    pass: u32,
    ranges: &[(u64, u64, &[u64])],
) -> Result<u64, String> {
    let f = open_from_device(path)?;
    let per_call = (CHUNK / bs).max(1);
    let mut buf = vec![0u8; (per_call * bs) as usize];
    let mut checked = 0u64;
    let expect = Expect {
        offset: 0,
        seed,
        max_pass: pass,
        exact_pass: Some(pass),
    };
    for &(start, len, written) in ranges {
        let blocks = len / bs;
        let is_set = |i: u64| {
            written
                .get((i / 64) as usize)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
        };
        let mut i = 0;
        while i < blocks {
            if !is_set(i) {
                i += 1;
                continue;
            }
            // A run of written blocks, up to one call's worth.
            let mut n = 1;
            while n < per_call && i + n < blocks && is_set(i + n) {
                n += 1;
            }
            let off = start + i * bs;
            let b = &mut buf[..(n * bs) as usize];
            f.read_exact_at(b, off).map_err(|e| {
                format!(
                    "--verify: reading back {} bytes at offset {off} of {}: {e}",
                    b.len(),
                    path.display()
                )
            })?;
            check_all(b, unit as usize, off, &expect)
                .map_err(|m| format!("{m} (read back after the repetition)"))?;
            checked += n * bs;
            i += n;
        }
    }
    Ok(checked)
}

/// Check every whole `unit` of the first `len` bytes of `path` against
/// `expect` (its offset set unit by unit): the copy pattern's destination,
/// which must hold the source's blocks at the same offsets. Returns the
/// bytes checked.
pub fn check_file(path: &Path, len: u64, unit: u64, expect: Expect) -> Result<u64, String> {
    let f = open_from_device(path)?;
    let whole = len / unit * unit;
    let per_call = (CHUNK / unit).max(1) * unit;
    let mut buf = vec![0u8; per_call as usize];
    let mut off = 0;
    while off < whole {
        let b = &mut buf[..(whole - off).min(per_call) as usize];
        f.read_exact_at(b, off).map_err(|e| {
            format!(
                "--verify: reading back {} bytes at offset {off} of {}: {e}",
                b.len(),
                path.display()
            )
        })?;
        check_all(b, unit as usize, off, &expect)
            .map_err(|m| format!("{m} (in the copy {}, read back)", path.display()))?;
        off += b.len() as u64;
    }
    Ok(whole)
}

//! Verifiable blocks (`--verify`): every `unit` bytes of written data start
//! with a 32-byte header that says what must be there, and a CRC-32C
//! (Castagnoli) of the whole unit with its checksum field zeroed. The rest
//! of the unit stays the data the data mode asked for (incompressible by
//! default).
//!
//! Header layout (little-endian):
//!
//! | bytes  | field                                                    |
//! |--------|----------------------------------------------------------|
//! | 0..4   | magic `IOPV`                                             |
//! | 4..8   | CRC-32C of the unit, these 4 bytes taken as zeros        |
//! | 8..16  | offset of the unit in the file                           |
//! | 16..24 | the run's seed (`--seed`)                                |
//! | 24..28 | pass: 0 for the prefill, n for the n-th write repetition |
//! | 28..32 | sequence: the writer's request number in its pass        |

use std::fmt;

/// Size of the header; smaller units cannot be verified.
pub const HEADER_LEN: usize = 32;

const MAGIC: [u8; 4] = *b"IOPV";

/// What a unit's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub offset: u64,
    pub seed: u64,
    pub pass: u32,
    pub seq: u32,
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "offset {} seed {} pass {} seq {}",
            self.offset, self.seed, self.pass, self.seq
        )
    }
}

/// CRC-32C of `unit` with bytes 4..8 taken as zeros.
fn checksum(unit: &[u8]) -> u32 {
    let c = crc32c::crc32c(&unit[..4]);
    let c = crc32c::crc32c_append(c, &[0; 4]);
    crc32c::crc32c_append(c, &unit[8..])
}

/// Write `h` into the start of `unit` and its checksum over the whole unit.
/// `unit` must be at least [`HEADER_LEN`] bytes.
pub fn stamp(unit: &mut [u8], h: &Header) {
    unit[0..4].copy_from_slice(&MAGIC);
    unit[8..16].copy_from_slice(&h.offset.to_le_bytes());
    unit[16..24].copy_from_slice(&h.seed.to_le_bytes());
    unit[24..28].copy_from_slice(&h.pass.to_le_bytes());
    unit[28..32].copy_from_slice(&h.seq.to_le_bytes());
    let c = checksum(unit);
    unit[4..8].copy_from_slice(&c.to_le_bytes());
}

/// Stamp every `unit`-byte unit of `buf`, which starts at file offset
/// `offset`.
pub fn stamp_all(buf: &mut [u8], unit: usize, offset: u64, seed: u64, pass: u32, seq: u32) {
    for (i, u) in buf.chunks_exact_mut(unit).enumerate() {
        let h = Header {
            offset: offset + (i * unit) as u64,
            seed,
            pass,
            seq,
        };
        stamp(u, &h);
    }
}

/// The header a unit carries, whatever its checksum.
pub fn read_header(unit: &[u8]) -> Header {
    let u64_at = |i: usize| u64::from_le_bytes(unit[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(unit[i..i + 4].try_into().expect("4 bytes"));
    Header {
        offset: u64_at(8),
        seed: u64_at(16),
        pass: u32_at(24),
        seq: u32_at(28),
    }
}

/// What a unit must hold: its offset and the run's seed, a pass no later
/// than `max_pass`, and exactly `exact_pass` when given (a unit the current
/// pass wrote).
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    pub offset: u64,
    pub seed: u64,
    pub max_pass: u32,
    pub exact_pass: Option<u32>,
}

/// Why a unit is bad.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub offset: u64,
    pub what: String,
    /// The header found; `None` when the block holds none at all.
    pub found: Option<Header>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.found {
            Some(h) => write!(
                f,
                "verify failed at offset {}: {}; found header: {h}",
                self.offset, self.what
            ),
            None => write!(f, "verify failed at offset {}: {}", self.offset, self.what),
        }
    }
}

/// Check one unit against what it must hold.
pub fn check(unit: &[u8], e: &Expect) -> Result<(), Mismatch> {
    let found = read_header(unit);
    let bad = |what: String| {
        Err(Mismatch {
            offset: e.offset,
            what,
            found: Some(found),
        })
    };
    let want = match e.exact_pass {
        Some(p) => format!("offset {} seed {} pass {p}", e.offset, e.seed),
        None if e.max_pass == u32::MAX => format!("offset {} seed {}", e.offset, e.seed),
        None => format!("offset {} seed {} pass <= {}", e.offset, e.seed, e.max_pass),
    };
    if unit[0..4] != MAGIC {
        return Err(Mismatch {
            offset: e.offset,
            what: format!(
                "no iopath header (the file was not written by `iopath --verify`, or not whole); expected {want}. Let iopath write it first (--allow-write with a write pattern, or --prefill on a device), or give the --seed of the run that did"
            ),
            found: None,
        });
    }
    let stored = u32::from_le_bytes(unit[4..8].try_into().expect("4 bytes"));
    let computed = checksum(unit);
    if stored != computed {
        return bad(format!(
            "checksum {computed:#010x} of the block differs from its header's {stored:#010x} (the data is corrupt); expected {want}"
        ));
    }
    let pass_ok = match e.exact_pass {
        Some(p) => found.pass == p,
        None => found.pass <= e.max_pass,
    };
    if found.offset != e.offset || found.seed != e.seed || !pass_ok {
        return bad(format!("expected {want}"));
    }
    Ok(())
}

/// Check every `unit`-byte unit of `buf` (read from file offset `offset`);
/// the first bad one is the error.
pub fn check_all(buf: &[u8], unit: usize, offset: u64, e: &Expect) -> Result<(), Mismatch> {
    for (i, u) in buf.chunks_exact(unit).enumerate() {
        let at = offset + (i * unit) as u64;
        check(u, &Expect { offset: at, ..*e })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DataMode, Rng};

    fn expect(offset: u64) -> Expect {
        Expect {
            offset,
            seed: 42,
            max_pass: 3,
            exact_pass: None,
        }
    }

    #[test]
    fn a_stamped_unit_checks_and_any_flipped_byte_is_caught() {
        let mut buf = vec![0u8; 4096];
        Rng::new(1).fill_as(&mut buf, DataMode::Random);
        let h = Header {
            offset: 8192,
            seed: 42,
            pass: 2,
            seq: 7,
        };
        stamp(&mut buf, &h);
        assert_eq!(read_header(&buf), h);
        check(&buf, &expect(8192)).unwrap();
        // Header and data alike: every byte is covered.
        for i in [0, 3, 4, 7, 8, 20, 31, 32, 2000, 4095] {
            let mut bad = buf.clone();
            bad[i] ^= 0x10;
            let err = check(&bad, &expect(8192)).unwrap_err();
            assert_eq!(err.offset, 8192, "byte {i}");
            assert!(err.to_string().contains("offset 8192"), "{err}");
        }
    }

    #[test]
    fn wrong_offset_seed_or_pass_is_caught_with_both_headers() {
        let mut buf = vec![7u8; 512];
        stamp(
            &mut buf,
            &Header {
                offset: 512,
                seed: 42,
                pass: 4,
                seq: 0,
            },
        );
        let e = check(&buf, &expect(1024)).unwrap_err();
        assert!(e.to_string().contains("expected offset 1024"), "{e}");
        assert!(e.to_string().contains("found header: offset 512"), "{e}");
        // pass 4 > max 3: newer than anything written so far.
        let e = check(&buf, &expect(512)).unwrap_err();
        assert!(e.to_string().contains("pass <= 3"), "{e}");
        let exact = Expect {
            exact_pass: Some(5),
            max_pass: 5,
            ..expect(512)
        };
        assert!(check(&buf, &exact).is_err(), "a lost write: old pass");
        let ok = Expect {
            exact_pass: Some(4),
            ..exact
        };
        check(&buf, &ok).unwrap();
        let other_seed = Expect { seed: 1, ..ok };
        assert!(check(&buf, &other_seed).is_err());
        // Never stamped at all.
        let e = check(&[0u8; 64], &expect(0)).unwrap_err();
        assert!(e.to_string().contains("no iopath header"), "{e}");
    }

    #[test]
    fn stamp_all_numbers_every_unit_by_its_offset() {
        let mut buf = vec![0u8; 4 * 1024];
        stamp_all(&mut buf, 1024, 1 << 20, 42, 1, 9);
        check_all(&buf, 1024, 1 << 20, &expect(0)).unwrap();
        assert_eq!(read_header(&buf[3072..]).offset, (1 << 20) + 3072);
        buf[2048 + 100] ^= 1;
        let e = check_all(&buf, 1024, 1 << 20, &expect(0)).unwrap_err();
        assert_eq!(e.offset, (1 << 20) + 2048);
    }
}

//! Fast seeded pseudo-random numbers and incompressible data.
//!
//! The generator is wyrand (one 64-bit word of state, passes BigCrush and
//! PractRand for the sizes used here). It is not cryptographic; it only has to
//! be fast, reproducible from `--seed`, and produce data that neither
//! compresses nor deduplicates.

/// wyrand: a tiny, fast 64-bit generator.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Mix the seed so that seeds 0, 1, 2... start far apart.
        let mut r = Rng {
            state: seed ^ 0x2545_f491_4f6c_dd1d,
        };
        r.next_u64();
        r
    }

    /// A generator for stream `n` of seed `seed` (e.g. one per worker thread).
    pub fn stream(seed: u64, n: u64) -> Rng {
        Rng::new(seed.wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0xa076_1d64_78bd_642f);
        let t = (self.state as u128).wrapping_mul((self.state ^ 0xe703_7ed1_a0b4_28db) as u128);
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; bias below 2^-40 for the
    /// block counts used here). `n == 0` returns 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Fill `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let v = self.next_u64().to_le_bytes();
            let n = rest.len();
            rest.copy_from_slice(&v[..n]);
        }
    }
}

/// What written data looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DataMode {
    /// Incompressible, never deduplicated (the default).
    #[default]
    Random,
    /// All zeros: what compressing or deduplicating storage loves most.
    Zeros,
    /// N% of every 512-byte sector is zeros, the rest random: a compressor
    /// that works on sectors or larger shrinks the data by about N%.
    Compressible(u8),
}

impl DataMode {
    /// `random`, `zeros`, or `compress:N` with N from 0 to 100.
    pub fn parse(s: &str) -> Option<DataMode> {
        match s {
            "random" => Some(DataMode::Random),
            "zeros" => Some(DataMode::Zeros),
            _ => {
                let n: u8 = s.strip_prefix("compress:")?.parse().ok()?;
                (n <= 100).then_some(DataMode::Compressible(n))
            }
        }
    }

    pub fn name(self) -> String {
        match self {
            DataMode::Random => "random".into(),
            DataMode::Zeros => "zeros".into(),
            DataMode::Compressible(n) => format!("compress:{n}"),
        }
    }

    /// Random bytes at the start of each 512-byte sector (the rest zeros).
    fn random_per_sector(self) -> usize {
        match self {
            DataMode::Random => 512,
            DataMode::Zeros => 0,
            DataMode::Compressible(n) => 512 - 512 * n as usize / 100,
        }
    }
}

impl Rng {
    /// Fill `buf` as `mode` says.
    pub fn fill_as(&mut self, buf: &mut [u8], mode: DataMode) {
        let r = mode.random_per_sector();
        if r == 512 {
            return self.fill(buf);
        }
        for sector in buf.chunks_mut(512) {
            let k = r.min(sector.len());
            self.fill(&mut sector[..k]);
            sector[k..].fill(0);
        }
    }

    /// Make a buffer unique again at little cost, keeping the zeros `mode`
    /// asks for: overwrite 8 bytes at the start of every 4 KiB (the unit
    /// deduplicating storage compares), inside the random part of the sector.
    #[inline]
    pub fn scramble_as(&mut self, buf: &mut [u8], mode: DataMode) {
        let r = mode.random_per_sector().min(8);
        if r == 0 {
            return;
        }
        for sector in buf.chunks_mut(4096) {
            let n = sector.len().min(r);
            sector[..n].copy_from_slice(&self.next_u64().to_le_bytes()[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let a: Vec<u64> = (0..8)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..8)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        let mut s0 = Rng::stream(7, 0);
        let mut s1 = Rng::stream(7, 1);
        assert_ne!(s0.next_u64(), s1.next_u64());
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1);
        let mut seen = [false; 10];
        // Fewer draws under Miri, which interprets every one.
        for _ in 0..if cfg!(miri) { 1_000 } else { 10_000 } {
            let v = r.below(10);
            assert!(v < 10);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.below(0), 0);
    }

    #[test]
    fn filled_data_is_not_compressible_by_byte_statistics() {
        // Order-0 entropy of random data is close to 8 bits/byte; zeros or
        // text would be far lower.
        let mut buf = vec![0u8; 1 << 20];
        // An odd length, not a multiple of the 8-byte word fill writes
        // (a tenth under Miri, which interprets every byte).
        let n = if cfg!(miri) { 100_003 } else { 1_000_003 };
        Rng::new(3).fill(&mut buf[..n]);
        let data = &buf[..n];
        let mut counts = [0u64; 256];
        for &b in data {
            counts[b as usize] += 1;
        }
        let n = data.len() as f64;
        let entropy: f64 = counts
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| {
                let p = c as f64 / n;
                -p * p.log2()
            })
            .sum();
        assert!(entropy > 7.99, "entropy {entropy}");
    }

    #[test]
    fn scramble_changes_every_4k_and_nothing_else() {
        let mut r = Rng::new(5);
        let mut a = vec![0u8; 16384];
        r.fill(&mut a);
        let mut b = a.clone();
        r.scramble_as(&mut b, DataMode::Random);
        for (sa, sb) in a.chunks(4096).zip(b.chunks(4096)) {
            assert_ne!(sa[..8], sb[..8]);
            assert_eq!(sa[8..], sb[8..]);
        }
    }

    #[test]
    fn data_modes_parse_and_shape_the_bytes() {
        assert_eq!(DataMode::parse("random"), Some(DataMode::Random));
        assert_eq!(DataMode::parse("zeros"), Some(DataMode::Zeros));
        assert_eq!(
            DataMode::parse("compress:50"),
            Some(DataMode::Compressible(50))
        );
        assert_eq!(DataMode::parse("compress:101"), None);
        assert_eq!(DataMode::parse("compress:"), None);
        assert_eq!(DataMode::parse("lz4"), None);
        assert_eq!(DataMode::Compressible(25).name(), "compress:25");

        let zeros_share = |mode| {
            let mut buf = vec![0xAAu8; if cfg!(miri) { 16 } else { 64 } * 1024];
            let mut r = Rng::new(1);
            r.fill_as(&mut buf, mode);
            r.scramble_as(&mut buf, mode);
            buf.iter().filter(|&&b| b == 0).count() as f64 / buf.len() as f64
        };
        assert!(zeros_share(DataMode::Random) < 0.01);
        assert_eq!(zeros_share(DataMode::Zeros), 1.0);
        let half = zeros_share(DataMode::Compressible(50));
        assert!((0.49..0.52).contains(&half), "{half}");
        let most = zeros_share(DataMode::Compressible(90));
        assert!((0.89..0.91).contains(&most), "{most}");
    }
}

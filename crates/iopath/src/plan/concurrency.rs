//! Concurrency matching: the requests in flight a job compares its methods
//! at, and how each method reaches them (docs/methodology.md,
//! "Concurrency matching"). An asynchronous method keeps N in flight from
//! one thread at depth N (or T threads at depth N/T when `--threads T` is
//! given); a synchronous one runs N threads of one request each;
//! `threadpool` and `tokio` a pool of N behind one thread at depth N.

use iopath_io::Method;

use super::{Pattern, UsageError};

/// Bytes a sequential pattern keeps in flight by default: 8 MiB, so that
/// the requests in flight cover a read-ahead window as large as this
/// machine's (`read_ahead_kb` 8192 on its virtio disk; the kernel's default
/// is 128 KiB): a buffered reader's read-ahead and an O_DIRECT reader's
/// queue then ask the device for as much at once. 1 MiB blocks: 8 in
/// flight.
pub const SEQ_BYTES_IN_FLIGHT: u64 = 8 << 20;

/// The most requests in flight the default run gives a sequential pattern
/// (small blocks would otherwise ask for thousands of threads).
pub const MOST_DEFAULT_SEQ: u32 = 32;

/// The requests in flight the default run compares random patterns at:
/// one at a time (latency: how most programs start), and 32 (a device
/// queue kept busy: NVMe and virtio queues take 32 and more).
pub const DEFAULT_RANDOM: [u32; 2] = [1, 32];

/// The most requests in flight a case may ask for (as `--threads`).
pub const MOST: u32 = 1024;

/// How one method keeps a concurrency in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Way {
    pub threads: u32,
    /// Requests in flight per thread.
    pub depth: u32,
    /// `threadpool`, `tokio`: the pool's threads.
    pub pool: Option<u32>,
}

/// True when `method` keeps several requests in flight from one thread
/// (and the reference `null`, which keeps its depth).
fn queues(method: Method) -> bool {
    method.is_async() || method.is_null()
}

/// How `method` keeps `n` requests in flight, with `split` threads for the
/// methods that queue (`None`: one); `None` when `split` does not divide
/// `n`.
pub fn way(method: Method, n: u32, split: Option<u32>) -> Option<Way> {
    if !queues(method) {
        return Some(Way {
            threads: n,
            depth: 1,
            pool: None,
        });
    }
    let t = split.unwrap_or(1);
    if t == 0 || n % t != 0 {
        return None;
    }
    let depth = n / t;
    let pooled = matches!(method, Method::Threadpool | Method::Tokio);
    Some(Way {
        threads: t,
        depth,
        pool: pooled.then_some(depth),
    })
}

/// The concurrency of the default run for `pattern` at block size `bs`:
/// random patterns at [`DEFAULT_RANDOM`]; sequential ones at
/// [`SEQ_BYTES_IN_FLIGHT`] / `bs`, 1 to [`MOST_DEFAULT_SEQ`], and no more
/// than the blocks of a file of `size` bytes (each thread gets one).
pub fn default_for(pattern: Pattern, bs: u64, size: Option<u64>) -> Vec<u32> {
    if pattern.is_random() {
        return DEFAULT_RANDOM.to_vec();
    }
    let mut n = (SEQ_BYTES_IN_FLIGHT / bs.max(1)).clamp(1, u64::from(MOST_DEFAULT_SEQ));
    if let Some(size) = size {
        n = n.min((size / bs.max(1)).max(1));
    }
    vec![n as u32]
}

/// The checks of an entry's concurrency: counts in range, no `--qd` beside
/// it, one thread count at most, and a thread count that divides every
/// concurrency where an asynchronous method is asked for.
pub fn check(
    what: &str,
    ns: &[u32],
    qd: Option<u32>,
    threads: Option<&[u32]>,
    methods: &[Method],
) -> Result<Option<u32>, UsageError> {
    if ns.iter().any(|n| !(1..=MOST).contains(n)) {
        return Err(UsageError(format!(
            "{what}: the concurrency (--concurrency) must be 1 to {MOST} requests in flight"
        )));
    }
    if qd.is_some() {
        return Err(UsageError(format!(
            "{what}: --qd and --concurrency both set the requests in flight: give one (--concurrency N compares every method at N in flight, each its own way; --qd runs every method at that depth per thread)"
        )));
    }
    let split = match threads {
        None => None,
        Some([t]) => Some(*t),
        Some(_) => {
            return Err(UsageError(format!(
                "{what}: with --concurrency, --threads takes one count (the threads an asynchronous method spreads its requests over)"
            )))
        }
    };
    if let Some(t) = split {
        let queued = methods.iter().any(|&m| queues(m));
        if let Some(n) = ns.iter().find(|&&n| queued && n % t != 0) {
            return Err(UsageError(format!(
                "{what}: --concurrency {n} over --threads {t}: an asynchronous method runs {t} threads at {n}/{t} requests each, which is not a whole number; give a concurrency that {t} divides, or leave out --threads"
            )));
        }
    }
    Ok(split)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_reaches_the_concurrency_its_own_way() {
        let w = |m, n, t| way(m, n, t).map(|w| (w.threads, w.depth, w.pool));
        assert_eq!(w(Method::Uring, 32, None), Some((1, 32, None)));
        assert_eq!(w(Method::Aio, 32, Some(4)), Some((4, 8, None)));
        assert_eq!(w(Method::Direct, 32, None), Some((32, 1, None)));
        assert_eq!(w(Method::Direct, 32, Some(4)), Some((32, 1, None)));
        assert_eq!(w(Method::Mmap, 8, None), Some((8, 1, None)));
        assert_eq!(w(Method::Buffered, 1, None), Some((1, 1, None)));
        assert_eq!(w(Method::Threadpool, 32, None), Some((1, 32, Some(32))));
        assert_eq!(w(Method::Uring, 6, Some(4)), None);
    }

    #[test]
    fn the_default_concurrency_covers_eight_mib_sequential_and_one_and_32_random() {
        assert_eq!(default_for(Pattern::Read, 1 << 20, None), vec![8]);
        assert_eq!(default_for(Pattern::Write, 4096, None), vec![32]);
        assert_eq!(default_for(Pattern::Read, 64 << 20, None), vec![1]);
        assert_eq!(default_for(Pattern::Read, 1 << 20, Some(4 << 20)), vec![4]);
        assert_eq!(default_for(Pattern::RandRead, 4096, None), vec![1, 32]);
    }
}

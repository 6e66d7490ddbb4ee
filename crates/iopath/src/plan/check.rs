//! What a plan must satisfy: the run settings' own limits, the settings
//! that do not go together, and what the crossed cases need.

use std::time::Duration;

use super::{CacheState, Case, Origin, Pattern, Plan, RunSpec, UsageError};
use crate::model::units::fmt_bytes;
use crate::model::words::{Bytes, RepTime};

/// The run settings' own limits (what clap checks for flags, checked again
/// for job files).
pub(super) fn check_run(r: &RunSpec) -> Result<(), UsageError> {
    let bad = |m: &str| Err(UsageError(m.into()));
    if r.repeat == Some(0) || r.repeat.is_some_and(|n| n > 100_000) {
        return bad("repeat must be 1 to 100000 (--repeat)");
    }
    if r.repeat.is_some() && r.budget.is_some() {
        return bad("repeat runs a fixed number of repetitions: drop budget (--budget), which is for adaptive repetition");
    }
    if r.repeat.is_some() && (r.ci_target.is_some() || r.max_time.is_some()) {
        return bad("repeat runs a fixed number of repetitions: drop ci_target and max_time (--ci-target, --max-time), which are for adaptive repetition");
    }
    if r.warmup.is_some_and(|n| n > 1000) {
        return bad("warmup must be 0 to 1000 (--warmup)");
    }
    if r.interval.is_some_and(|d| d.0 < Duration::from_millis(1)) {
        return bad("--interval must be at least 1ms (e.g. 100ms)");
    }
    if r.budget.is_some_and(|d| d.0.is_zero()) {
        return bad("--budget 0 leaves no time for a repetition");
    }
    if r.max_time.is_some_and(|d| d.0.is_zero()) {
        return bad("--max-time 0 leaves no time for a repetition");
    }
    if r.size == Some(Bytes(0)) {
        return bad("--size 0: the test file needs at least one block");
    }
    if r.io_size == Some(Bytes(0)) {
        return bad("--io-size 0 would measure nothing");
    }
    if r.time == Some(RepTime::Limit(Duration::ZERO)) {
        return bad("--time 0 would measure nothing");
    }
    if r.ucache_size == Some(Bytes(0)) {
        return bad("--ucache-size 0 leaves the cache no page");
    }
    if let Some(Bytes(p)) = r.ucache_page {
        if p == 0 || p % 512 != 0 || p > (1 << 30) {
            return Err(UsageError(format!(
                "--ucache-page {p}: give a multiple of 512 bytes (the O_DIRECT alignment; 4k by default), at most 1 GiB"
            )));
        }
    }
    Ok(())
}

/// The run's on/off settings, checked against each other and against
/// what only the command line may say.
#[derive(Debug, Clone, Copy)]
pub(super) struct Switches {
    pub sparse: bool,
    pub verify: bool,
    pub cache: CacheState,
    pub drop_caches: bool,
}

/// [`Switches`] of `r`, or the first pair of settings that do not go
/// together.
pub(super) fn switches(
    r: &RunSpec,
    origin: &Origin,
    file_exists: bool,
) -> Result<Switches, UsageError> {
    if r.file.is_some() && r.dir.is_some() {
        return Err(UsageError(
            "give a file (--file) or a directory (--dir) to measure in, not both".into(),
        ));
    }
    let sparse = r.sparse.unwrap_or(false);
    if sparse && file_exists {
        return Err(UsageError(
            "--sparse truncates the file before every repetition: it only works on a file iopath creates (--dir, or a --file that does not exist yet)".into(),
        ));
    }
    let verify = r.verify.unwrap_or(false);
    if verify && sparse {
        return Err(UsageError(
            "--verify and --sparse do not go together: the holes of a sparse file hold no verifiable blocks".into(),
        ));
    }
    let cache = r.cache.unwrap_or_default();
    let drop_caches = r.drop_caches.unwrap_or(false);
    if drop_caches && cache != CacheState::Cold {
        return Err(UsageError(format!(
            "--drop-caches goes with --cache cold, not --cache {}",
            cache.name()
        )));
    }
    if (origin.force_signature || origin.prefill) && !origin.allow_write {
        return Err(UsageError(format!(
            "{} only applies with --allow-write (and a --file)",
            if origin.prefill {
                "--prefill"
            } else {
                "--force-signature"
            }
        )));
    }
    if origin.allow_write && r.file.is_none() {
        return Err(UsageError(
            "--allow-write only applies to --file; iopath's own temporary file is always writable"
                .into(),
        ));
    }
    Ok(Switches {
        sparse,
        verify,
        cache,
        drop_caches,
    })
}

/// Largest verification unit: a file written by one run reads back in
/// another whatever its block sizes, as long as they are multiples of it.
pub(super) const VERIFY_UNIT: u64 = 4096;

/// `--verify` needs every block to hold a header: the verification unit
/// (4 KiB, or the greatest common divisor of the block sizes when that is
/// smaller) must be at least
/// [`iopath_io::verify::HEADER_LEN`] bytes.
pub(super) fn check_verify(cases: &[Case]) -> Result<(), UsageError> {
    let unit = verify_unit_of(cases);
    if unit < iopath_io::verify::HEADER_LEN as u64 {
        return Err(UsageError(format!(
            "--verify needs blocks of at least {} bytes (each holds a {}-byte header); the block sizes here give {unit}-byte units: use a larger --bs",
            iopath_io::verify::HEADER_LEN,
            iopath_io::verify::HEADER_LEN
        )));
    }
    if cases.iter().any(|c| c.sparse) {
        return Err(UsageError(
            "--verify and a sparse case do not go together: holes hold no verifiable blocks".into(),
        ));
    }
    Ok(())
}

/// The verification unit of `cases`: the greatest common divisor of
/// [`VERIFY_UNIT`] and their block sizes (every request is whole units at
/// unit-aligned offsets).
fn verify_unit_of(cases: &[Case]) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    cases
        .iter()
        .filter(|c| !c.method.is_null())
        .fold(VERIFY_UNIT, |g, c| gcd(g, c.block_size))
}

impl Plan {
    /// With `--verify`, the size of a verified unit (each starts with a
    /// header): 4 KiB, or the gcd of the block sizes when smaller.
    pub fn verify_unit(&self) -> Option<u64> {
        self.verify
            .then(|| verify_unit_of(&self.cases))
            .filter(|&u| u > 0)
    }
}

/// What the crossed cases must satisfy together: a span and a file size
/// that hold a block per thread, and a file iopath may copy or truncate.
pub(super) fn check_cases(
    cases: &[Case],
    size: Option<u64>,
    file_exists: bool,
) -> Result<(), UsageError> {
    if let Some(c) = cases.iter().find(|c| {
        c.span
            .is_some_and(|s| s < c.block_size * u64::from(c.threads.max(1)))
    }) {
        return Err(UsageError(format!(
            "a span of {} is less than one {} block per thread ({} thread(s)): give a larger span or a smaller --bs",
            fmt_bytes(c.span.unwrap_or(0)),
            fmt_bytes(c.block_size),
            c.threads
        )));
    }
    if let Some((c, size)) = size.and_then(|s| {
        cases
            .iter()
            .find(|c| {
                c.offset > 0
                    && c.offset
                        .saturating_add(c.block_size * u64::from(c.threads.max(1)))
                        > s
            })
            .map(|c| (c, s))
    }) {
        return Err(UsageError(format!(
            "an offset of {} leaves less than one {} block per thread of the {} file: give a larger size or a smaller offset",
            fmt_bytes(c.offset),
            fmt_bytes(c.block_size),
            fmt_bytes(size)
        )));
    }
    if file_exists && cases.iter().any(|c| c.pattern == Pattern::Copy) {
        return Err(UsageError(
            "the copy pattern writes a copy beside the file it copies: run it on iopath's own test file (--dir), not on an existing --file".into(),
        ));
    }
    if file_exists && cases.iter().any(|c| c.sparse) {
        return Err(UsageError(
            "this job truncates the file before some repetitions (a sparse file): it only works on a file iopath creates (--dir, or a --file that does not exist yet)".into(),
        ));
    }
    if let Some(size) = size {
        // Each case's threads must get at least one of its blocks.
        if let Some(c) = cases
            .iter()
            .find(|c| size / u64::from(c.threads.max(1)) < c.block_size)
        {
            let per_thread = size / u64::from(c.threads.max(1));
            return Err(UsageError(format!(
                "--size {} gives each of {} thread(s) {}, less than one {} block; use a larger --size or a smaller --bs",
                fmt_bytes(size),
                c.threads,
                fmt_bytes(per_thread),
                fmt_bytes(c.block_size)
            )));
        }
    }
    Ok(())
}

//! `--neighbour`: around each measured repetition, the neighbour
//! ([`iopath_io::neighbour`]) re-reads its hot set, is measured alone for
//! [`BEFORE`], then runs beside the repetition.

use std::time::Duration;

use anyhow::{Context, Result};
use iopath_io::neighbour::{HotSet, NeighbourStats, Running};

use crate::plan::Plan;

/// How long the neighbour is measured alone before each repetition.
pub const BEFORE: Duration = Duration::from_millis(500);

/// The hot set's size: a quarter of `--cache-limit`, at most 64 MiB, so
/// that it fits in the cache with room for the method's own pages.
pub fn hot_set_bytes(plan: &Plan) -> u64 {
    const MAX: u64 = 64 << 20;
    plan.cache_limit.map_or(MAX, |l| (l / 4).min(MAX))
}

/// Warm the hot set (made on first use), measure the neighbour alone, and
/// start it beside what comes next.
pub(super) fn before(
    plan: &Plan,
    sh: &mut super::job::Shared<'_>,
) -> Result<(NeighbourStats, Running)> {
    let dir = match sh.target {
        Some(t) => t.dir().to_path_buf(),
        None => std::env::current_dir().context("the current directory")?,
    };
    if sh.hot.is_none() {
        let len = hot_set_bytes(plan);
        let hot = HotSet::create(&dir, len).with_context(|| {
            format!(
                "cannot make its hot set of {} in {}",
                crate::units::fmt_bytes(len),
                dir.display()
            )
        })?;
        sh.hot = Some(hot);
    }
    let hot = sh.hot.as_ref().expect("made above");
    hot.warm()
        .with_context(|| format!("cannot re-read its hot set in {}", dir.display()))?;
    let seed = plan.seed ^ u64::from(sh.seq);
    let alone = hot.measure(BEFORE, seed);
    let running = hot
        .start(seed.wrapping_add(1))
        .context("cannot start its thread")?;
    Ok((alone, running))
}

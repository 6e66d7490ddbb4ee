//! `--neighbour`: around each measured repetition, after its set-up
//! (sparse truncation, the cache state: fsync, DONTNEED, a warm read or
//! drop_caches), the neighbour ([`iopath_io::neighbour`]) re-reads its hot
//! set, is measured alone for [`BEFORE`], then runs beside the repetition
//! ([`Beside`]): from just before its engines start to just after they
//! end, so the set-up is in neither window.

use std::time::Duration;

use anyhow::{Context, Result};
use iopath_io::neighbour::{HotSet, NeighbourStats, Running};

use crate::plan::Plan;
use crate::result::neighbour::NeighbourRep;

/// How long the neighbour is measured alone before each repetition.
pub const BEFORE: Duration = Duration::from_millis(500);

/// The hot set's size: a quarter of `--cache-limit`, at most 64 MiB, so
/// that it fits in the cache with room for the method's own pages.
pub fn hot_set_bytes(plan: &Plan) -> u64 {
    const MAX: u64 = 64 << 20;
    plan.cache_limit.map_or(MAX, |l| (l / 4).min(MAX))
}

/// Where the hot set goes: beside the target file, so that it shares its
/// file system and device; for a block-device target (whose parent is
/// `/dev`, a devtmpfs) the temporary directory (`TMPDIR`), which must then
/// be on a disk: a hot set in memory (tmpfs) is never evicted, and tmpfs
/// cannot tell hits ([`iopath_io::neighbour`]).
pub fn hot_set_dir(target: Option<&crate::run::target::Target>) -> Result<std::path::PathBuf> {
    let Some(t) = target else {
        return std::env::current_dir().context("the current directory");
    };
    if t.info.kind != crate::result::TargetKind::BlockDevice {
        return Ok(t.dir().to_path_buf());
    }
    let tmp = std::env::temp_dir();
    match iopath_io::sys::fs_type_of(&tmp) {
        Ok(fs @ ("tmpfs" | "ramfs" | "devtmpfs")) => anyhow::bail!(
            "the target is a block device, so its hot set goes in the temporary directory, and {} is a {fs} (in memory: never evicted): set TMPDIR to a directory on a disk",
            tmp.display()
        ),
        _ => Ok(tmp),
    }
}

/// Warm the hot set (made on first use), measure the neighbour alone, and
/// start it beside what comes next.
pub(super) fn before(
    plan: &Plan,
    sh: &mut super::job::Shared<'_>,
) -> Result<(NeighbourStats, Running)> {
    let dir = hot_set_dir(sh.target)?;
    if sh.hot.is_none() {
        let len = hot_set_bytes(plan);
        let hot = HotSet::create(&dir, len).with_context(|| {
            format!(
                "cannot make its hot set of {} in {}",
                crate::model::units::fmt_bytes(len),
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

/// The neighbour measured alone and now running beside a repetition.
pub(super) struct Beside {
    alone: NeighbourStats,
    running: Running,
}

impl Beside {
    /// [`before`]; a failure becomes a note of the case (once) and no
    /// neighbour, never a failed repetition.
    pub(super) fn start(
        plan: &Plan,
        sh: &mut super::job::Shared<'_>,
        notes: &mut Vec<crate::result::facts::CaseNote>,
    ) -> Option<Beside> {
        match before(plan, sh) {
            Ok((alone, running)) => Some(Beside { alone, running }),
            Err(e) => {
                notes.push(crate::result::facts::CaseNote::NeighbourFailed {
                    error: format!("{e:#}"),
                });
                None
            }
        }
    }

    /// Stop the neighbour: what it saw alone and during.
    pub(super) fn stop(self) -> NeighbourRep {
        NeighbourRep {
            before: self.alone.into(),
            during: self.running.stop().into(),
        }
    }
}

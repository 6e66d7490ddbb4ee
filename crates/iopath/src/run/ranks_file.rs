//! The test file of each rank (`--layout`, docs/mpi.md).
//!
//! - `per-rank` (and one process): the plan's target as it is; under
//!   `--dir` every rank makes its own (unnamed where the file system
//!   allows, so a killed rank leaves nothing).
//! - `shared-*` under `--dir`: one file for all, `iopath-<pid>-<hex>.dat`
//!   (rank 0's pid: the name a later run's reaper knows), which rank 0
//!   makes, fills and removes at the end (whatever the way out: a Ctrl-C
//!   during the prefill too, which watches the rank's own signal; when any
//!   rank is killed, rank 0 may be killed with it, and the file left is
//!   reaped by the next run in that directory). The others
//!   open it once rank 0 has filled it: the first collective step here is
//!   rank 0's filling, so they wait for it.
//! - `shared-*` with `--file PATH`: that file for all, prefilled by rank 0
//!   alone when `--prefill` asks.

use std::fs::File;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::Runner;
use crate::plan::{Pattern, TargetSpec};
use crate::run::target::{self, Target};

/// Removes the shared file rank 0 made, when dropped.
#[derive(Debug)]
pub struct SharedFile {
    path: PathBuf,
    /// Held (with its `flock`) so that no reaper takes it mid-run.
    _file: File,
}

impl Drop for SharedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Runner<'_> {
    /// This rank's test file (none when no case needs one), and on rank 0
    /// of a shared layout the guard that removes the file it made.
    pub(super) fn prepare_target(&self) -> Result<(Option<Target>, Option<SharedFile>)> {
        let plan = self.plan;
        if !plan.needs_file() {
            return Ok((None, None));
        }
        let ranks = self.ranks;
        let shared = ranks.many() && ranks.layout().is_some_and(|l| l.shared());
        let how = target::Prepare {
            size: plan.size,
            writes: plan.writes(),
            copies: plan.cases.iter().any(|c| c.pattern == Pattern::Copy),
            fill: target::Fill {
                seed: plan.seed,
                data: plan.data,
                sparse: plan.sparse,
                verify_unit: plan.verify_unit(),
            },
            // The signal's own flag: a prefill is cut at once on the
            // rank a Ctrl-C reaches (mpirun kills the ranks a second
            // after its SIGTERM), and the set-up's agreement that
            // follows makes the failure every rank's.
            stop: ranks.cut(self.stop),
            progress: &self.progress,
            events: self.events,
        };
        let prepare = |spec: &TargetSpec| target::prepare(spec, &how);
        if !shared {
            return Ok((Some(prepare(&plan.target)?), None));
        }
        // Rank 0 names the file; every rank learns the name.
        let made = match (&plan.target, ranks.rank()) {
            (TargetSpec::TempIn(dir), 0) => Some(make_shared(dir, plan.size)),
            _ => None,
        };
        let name = match &made {
            Some(Ok((p, _))) => p.display().to_string(),
            _ => String::new(),
        };
        let name = ranks.from_rank0(name.as_bytes());
        let (spec, guard) = match (&plan.target, made) {
            (TargetSpec::TempIn(_), Some(made)) => {
                let (path, file) = ranks.agree(made)?;
                let guard = SharedFile {
                    path: path.clone(),
                    _file: file,
                };
                (shared_spec(path, !plan.sparse), Some(guard))
            }
            (TargetSpec::TempIn(_), None) => {
                ranks.agree(Ok(()))?;
                let path = PathBuf::from(String::from_utf8_lossy(&name).into_owned());
                (shared_spec(path, false), None)
            }
            (spec, _) => {
                ranks.agree(Ok(()))?;
                let mut spec = spec.clone();
                if let TargetSpec::File { prefill, .. } = &mut spec {
                    *prefill &= ranks.rank() == 0;
                }
                (spec, None)
            }
        };
        // Rank 0 fills it while the others wait at the next step.
        if ranks.rank() == 0 {
            let t = ranks.agree(prepare(&spec))?;
            Ok((Some(t), guard))
        } else {
            ranks.agree(Ok(()))?;
            Ok((Some(prepare(&spec)?), guard))
        }
    }
}

/// The shared file's spec: iopath's own file, so written without
/// `--allow-write`; filled by rank 0 only.
fn shared_spec(path: PathBuf, fill: bool) -> TargetSpec {
    TargetSpec::File {
        path,
        allow_write: true,
        force_signature: false,
        prefill: fill,
    }
}

/// Make the shared file in `dir`, `size` long (holes: rank 0 fills it),
/// locked against reapers.
fn make_shared(dir: &std::path::Path, size: Option<u64>) -> Result<(PathBuf, File)> {
    let dir = std::fs::canonicalize(dir).with_context(|| {
        format!(
            "--dir {}: cannot open it; give an existing directory",
            dir.display()
        )
    })?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = dir.join(format!("iopath-{}-{:08x}.dat", std::process::id(), nanos));
    let file = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| {
            format!(
                "cannot make the shared test file {}: give a --dir this user can write to",
                path.display()
            )
        })?;
    target::reap::claim(&file, target::reap::mark);
    let size = size.unwrap_or(crate::plan::DEFAULT_SIZE);
    if let Err(e) = file.set_len(size) {
        let _ = std::fs::remove_file(&path);
        return Err(e).with_context(|| {
            format!(
                "cannot size the shared test file {} to {size} bytes",
                path.display()
            )
        });
    }
    Ok((path, file))
}

//! Starting as one of many ranks (`mpirun -n N iopath run ...`,
//! docs/mpi.md). Built with the cargo feature `mpi`, [`start`] joins the
//! MPI job (rsmpi over the system's Open MPI) when the process was started
//! by `mpirun`/`srun`, and gives the [`Peers`] the runner agrees through;
//! built without it, `--layout` is refused (exit 2), and so is a start by
//! a launcher that says there are several tasks (`IOPATH_MPI_IGNORE=1`
//! runs them as independent copies).
//!
//! Only the main thread calls MPI (MPI_THREAD_FUNNELED): the runner's
//! agreements are made between repetitions, never from a worker.

#[cfg(feature = "mpi")]
mod world;

use crate::plan::UsageError;
use crate::result::mpi::FileLayout;
use crate::run::peers::Peers;

/// How many ranks the launcher says there are (Open MPI, PMIx, Slurm,
/// MPICH's Hydra), when it says.
pub fn launcher_size() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_SIZE",
        "PMI_SIZE",
        "SLURM_STEP_NUM_TASKS",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
}

/// The MPI job this process is a rank of.
pub struct Session {
    #[cfg(feature = "mpi")]
    inner: world::World,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("rank", &self.peers().rank())
            .field("ranks", &self.peers().ranks())
            .finish()
    }
}

impl Session {
    /// The ranks, as the runner talks to them.
    pub fn peers(&self) -> &dyn Peers {
        #[cfg(feature = "mpi")]
        {
            &self.inner
        }
        #[cfg(not(feature = "mpi"))]
        {
            &crate::run::peers::Alone
        }
    }
}

impl Session {
    /// End every rank of the job (MPI_Abort) with `code`: for a failure on
    /// some ranks only, outside the runner's agreements, which would leave
    /// the others waiting for this rank. Called after this rank removed
    /// its files.
    pub fn abort(&self, code: i32) -> ! {
        #[cfg(feature = "mpi")]
        {
            self.inner.abort(code)
        }
        #[cfg(not(feature = "mpi"))]
        {
            std::process::exit(code)
        }
    }
}

/// This host's name (ranks on one host share its page cache and devices).
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// This process's rank as the launcher numbers it, when it says.
pub fn launcher_rank() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "PMI_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
}

/// `IOPATH_MPI_IGNORE=1`: run as one process even under a launcher (N
/// independent copies, each alone).
fn ignored() -> bool {
    std::env::var("IOPATH_MPI_IGNORE").is_ok_and(|v| v.trim() == "1")
}

/// Join the MPI job when started by a launcher (`mpirun`, `srun`), even
/// as its only rank (a scaling sweep's `-n 1`); `None` for a process
/// started alone. `layout` is `--layout`: refused where there are no
/// ranks. A launcher that says N > 1 tasks when this process cannot be
/// one of N ranks (built without MPI, or MPI sees one: `srun` without
/// `--mpi=pmix`) is refused too: N copies would each run alone on the
/// same files and write the same outputs.
pub fn start(layout: Option<FileLayout>) -> Result<Option<Session>, UsageError> {
    let launched = launcher_size().filter(|_| !ignored());
    let several = |n: usize| {
        UsageError(format!(
            "started as one of {n} tasks, but {}: the {n} copies would each run alone, on the same files, and write the same outputs; {}, or set IOPATH_MPI_IGNORE=1 to run {n} independent copies on purpose (give each its own --dir and --json)",
            if cfg!(feature = "mpi") {
                "MPI sees this process alone (srun without --mpi=pmix, or an mpirun of another MPI than the Open MPI iopath was built with)"
            } else {
                "this iopath was built without MPI"
            },
            if cfg!(feature = "mpi") {
                "start it with srun --mpi=pmix or with the mpirun of the Open MPI it was built with"
            } else {
                "build it with `cargo build --release --features mpi` (needs libopenmpi-dev and libclang-dev) for one result of all ranks (docs/mpi.md)"
            }
        ))
    };
    #[cfg(feature = "mpi")]
    {
        if let Some(n) = launched {
            let w = world::World::join()?;
            if n > 1 && w.size() < 2 {
                return Err(several(n));
            }
            return Ok(Some(Session { inner: w }));
        }
    }
    if let Some(n) = launched.filter(|&n| n > 1) {
        return Err(several(n));
    }
    if let Some(l) = layout {
        return Err(UsageError(format!(
            "--layout {} needs MPI ranks: {}",
            l.name(),
            if cfg!(feature = "mpi") {
                "start iopath under mpirun -n N (or srun --mpi=pmix), e.g. mpirun -n 4 iopath run --layout per-rank ..."
            } else {
                "this iopath was built without MPI; build it with `cargo build --release --features mpi` (needs libopenmpi-dev and libclang-dev) and start it under mpirun -n N"
            }
        )));
    }
    Ok(None)
}

/// The checks of a plan against `--layout`, before any rank talks to
/// another (so every rank finds the same error, and rank 0 says it).
pub fn check_plan(plan: &crate::plan::Plan, layout: Option<FileLayout>) -> Result<(), UsageError> {
    use crate::plan::TargetSpec;
    match (layout, &plan.target) {
        (Some(FileLayout::SharedStrided), _) if plan.verify => Err(UsageError(
            "--verify with --layout shared-strided: verified blocks are checked per worker range; use --layout shared or per-rank".into(),
        )),
        (Some(FileLayout::PerRank), TargetSpec::File { path, .. }) => Err(UsageError(format!(
            "--layout per-rank with --file {}: per-rank needs --dir (each rank makes its own file there); use --layout shared or shared-strided for the ranks to share one file or device",
            path.display()
        ))),
        _ => Ok(()),
    }
}

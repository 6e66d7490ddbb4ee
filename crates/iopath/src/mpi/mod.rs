//! Starting as one of many ranks (`mpirun -n N iopath run ...`,
//! docs/mpi.md). Built with the cargo feature `mpi`, [`start`] joins the
//! MPI job (rsmpi over the system's Open MPI) when the process was started
//! by `mpirun`/`srun`, and gives the [`Peers`] the runner agrees through;
//! built without it, `--layout` is refused (exit 2) and a start under
//! `mpirun` only warns that every rank will run alone.
//!
//! Only the main thread calls MPI (MPI_THREAD_FUNNELED): the runner's
//! agreements are made between repetitions, never from a worker.

#[cfg(feature = "mpi")]
mod world;

pub mod table;

use crate::plan::UsageError;
use crate::result::mpi::FileLayout;
use crate::runner::peers::Peers;

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
            &crate::runner::peers::Alone
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

/// Join the MPI job when started as one of several ranks; `None` for one
/// process. `layout` is `--layout`: refused where there are no ranks.
pub fn start(layout: Option<FileLayout>) -> Result<Option<Session>, UsageError> {
    let launched = launcher_size().is_some_and(|n| n > 1);
    #[cfg(feature = "mpi")]
    {
        if launched {
            if let Some(w) = world::World::join()? {
                return Ok(Some(Session { inner: w }));
            }
        }
    }
    if let Some(l) = layout {
        return Err(UsageError(format!(
            "--layout {} needs several MPI ranks: {}",
            l.name(),
            if cfg!(feature = "mpi") {
                "start iopath under mpirun -n N (or srun), e.g. mpirun -n 4 iopath run --layout per-rank ..."
            } else {
                "this iopath was built without MPI; build it with `cargo build --release --features mpi` (needs libopenmpi-dev and libclang-dev) and start it under mpirun -n N"
            }
        )));
    }
    if launched && !cfg!(feature = "mpi") {
        eprintln!(
            "iopath: warning: started as one of {} ranks, but this iopath was built without MPI: every rank runs alone and writes its own output; build with --features mpi for one result of all ranks (docs/mpi.md)",
            launcher_size().unwrap_or(0)
        );
    }
    Ok(None)
}

/// The plan as this rank runs it: with `--layout per-rank` and `--file
/// PATH`, rank r's file is `PATH.rank<r>` (under `--dir` each rank makes
/// its own anyway); the shared layouts use the one file.
pub fn rank_plan(
    mut plan: crate::plan::Plan,
    ranks: &crate::runner::ranks::Ranks<'_>,
) -> Result<crate::plan::Plan, UsageError> {
    use crate::plan::TargetSpec;
    let layout = ranks.layout().unwrap_or(FileLayout::PerRank);
    if layout == FileLayout::SharedStrided && plan.verify {
        return Err(UsageError(
            "--verify with --layout shared-strided: verified blocks are checked per worker range; use --layout shared or per-rank".into(),
        ));
    }
    if let (FileLayout::PerRank, TargetSpec::File { path, .. }) = (layout, &mut plan.target) {
        let mut p = path.clone().into_os_string();
        p.push(format!(".rank{}", ranks.rank()));
        *path = p.into();
    }
    Ok(plan)
}

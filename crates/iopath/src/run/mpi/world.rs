//! The MPI job's world communicator as [`Peers`] (rsmpi).

use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

use crate::plan::UsageError;
use crate::run::peers::Peers;

/// The world communicator; MPI is finalized when this is dropped.
pub struct World {
    _universe: mpi::environment::Universe,
    rank: usize,
    size: usize,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "World(rank {} of {})", self.rank, self.size)
    }
}

impl World {
    /// Initialize MPI (a job of one rank too).
    pub fn join() -> Result<World, UsageError> {
        let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
            return Err(UsageError(
                "MPI was initialized already; start iopath once per rank".into(),
            ));
        };
        let w = universe.world();
        let (rank, size) = (w.rank() as usize, w.size() as usize);
        Ok(World {
            _universe: universe,
            rank,
            size,
        })
    }

    pub fn size(&self) -> usize {
        self.size
    }
}

impl World {
    pub fn abort(&self, code: i32) -> ! {
        SimpleCommunicator::world().abort(code)
    }
}

// The communicator is a handle to MPI's world, fetched per call; only the
// main thread calls (MPI_THREAD_FUNNELED, see the module docs of `mpi`).
impl Peers for World {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.size
    }
    fn barrier(&self) {
        SimpleCommunicator::world().barrier();
    }
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let w = SimpleCommunicator::world();
        let len = mine.len() as Count;
        let mut lens: Vec<Count> = vec![0; self.size];
        w.all_gather_into(&len, &mut lens[..]);
        let displs: Vec<Count> = lens
            .iter()
            .scan(0, |at, &l| {
                let d = *at;
                *at += l;
                Some(d)
            })
            .collect();
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        let mut buf = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            w.all_gather_varcount_into(mine, &mut part);
        }
        lens.iter()
            .zip(&displs)
            .map(|(&l, &d)| buf[d as usize..(d + l) as usize].to_vec())
            .collect()
    }
}

//! The other processes of one run: MPI ranks under `mpirun` (the cargo
//! feature `mpi`: the top-level `mpi` module), or none ([`Alone`]).
//!
//! The runner needs three things of them, all collective (every rank calls
//! them at the same points, in the same order, or the ranks deadlock): a
//! barrier, the exchange of one message per rank (every rank gets every
//! rank's bytes, in rank order), and who this process is. What the runner
//! agrees on through them (skips, failures, stops, the combined
//! measurement) is in [`super::ranks`], the same for any transport, so a
//! fake made of threads tests it without MPI.

/// The processes running one plan together.
pub trait Peers: std::fmt::Debug + Sync {
    /// This process's rank, 0-based.
    fn rank(&self) -> usize;
    /// How many ranks there are.
    fn ranks(&self) -> usize;
    /// Wait until every rank has called it.
    fn barrier(&self);
    /// Every rank's `mine`, in rank order (this rank's among them).
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
}

/// One process alone: no one to wait for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Alone;

impl Peers for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn barrier(&self) {}
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        vec![mine.to_vec()]
    }
}

/// Ranks made of threads of one process, for tests of the agreements:
/// `Threads::group(n)` gives the n ranks' ends.
#[cfg(test)]
pub mod threads {
    use std::sync::{Arc, Barrier, Mutex};

    #[derive(Debug)]
    struct Shared {
        barrier: Barrier,
        slots: Mutex<Vec<Vec<u8>>>,
    }

    #[derive(Debug, Clone)]
    pub struct Threads {
        rank: usize,
        n: usize,
        shared: Arc<Shared>,
    }

    impl Threads {
        pub fn group(n: usize) -> Vec<Threads> {
            let shared = Arc::new(Shared {
                barrier: Barrier::new(n),
                slots: Mutex::new(vec![Vec::new(); n]),
            });
            (0..n)
                .map(|rank| Threads {
                    rank,
                    n,
                    shared: Arc::clone(&shared),
                })
                .collect()
        }
    }

    impl super::Peers for Threads {
        fn rank(&self) -> usize {
            self.rank
        }
        fn ranks(&self) -> usize {
            self.n
        }
        fn barrier(&self) {
            self.shared.barrier.wait();
        }
        fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
            self.shared.slots.lock().unwrap()[self.rank] = mine.to_vec();
            self.shared.barrier.wait();
            let all = self.shared.slots.lock().unwrap().clone();
            // Nobody writes the next round's slot before all have read.
            self.shared.barrier.wait();
            all
        }
    }
}

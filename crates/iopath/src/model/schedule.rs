//! The order a run's repetitions take: plain data, chosen on the command
//! line and read by the runner (`runner::repeat` does the ordering).

/// The order repetitions run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Within a job (cases that differ only by method), one repetition of
    /// every method per round, in an order shuffled per round.
    Interleaved,
    /// Each case runs all its repetitions before the next case starts.
    Sequential,
}

impl Schedule {
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Interleaved => "interleaved",
            Schedule::Sequential => "sequential",
        }
    }

    pub fn from_name(s: &str) -> Option<Schedule> {
        [Schedule::Interleaved, Schedule::Sequential]
            .into_iter()
            .find(|x| x.name() == s)
    }
}

/// A seed nobody chose: the process's random hash keys, with the time.
pub fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish()
}

//! What the runner reports while it runs, as typed events with the facts
//! they rest on: the estimate before any I/O, the estimate revised by
//! measured speeds, cases refused before any I/O, the ranks' notes, what
//! killed runs left and this run removed. The runner writes no sentences: it hands each event to the
//! caller's [`Events`] sink, and the CLI words them
//! (`report::text::events`) onto stderr.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::plan::Plan;
use crate::run::estimate::Estimate;
use crate::run::target::reap::Reaped;

/// One thing the runner reports.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// Before any I/O: how long the run will take, and which cases will
    /// not get the rounds their verdicts need ([`Estimate`]).
    Estimate {
        estimate: &'a Estimate,
        plan: &'a Plan,
    },
    /// Cases refused before any I/O (the probe's refusals, alignment, the
    /// cache limit), and the time left without them.
    Refused { cases: usize, left: Duration },
    /// Without a progress line, after the first job: the measured speeds
    /// moved the estimate far from the first.
    Revised { left: Duration, spent: Duration },
    /// A note on the ranks of an MPI run (`mpi.facts` in the result).
    RankNote(&'a crate::result::mpi::MpiNote),
    /// Test files of killed runs, proven theirs and removed
    /// ([`crate::run::target::reap`]); never empty.
    StaleFiles(&'a [Reaped]),
    /// Paths of killed runs' other leftovers removed: the `--cache-limit`
    /// cgroups ([`crate::run::cgroup::reap_stale`]); never empty.
    StaleCgroups(&'a [PathBuf]),
    /// A removed cgroup ([`Event::StaleCgroups`]) whose run the kernel's
    /// OOM killer killed, `kills` times: that run itself could say
    /// nothing.
    OomKilled { cgroup: &'a Path, kills: u64 },
}

impl Event<'_> {
    /// Said even under `--quiet`, and by every rank: what iopath removed
    /// outside its own run (a user's directory, the cgroup tree) is never
    /// done silently.
    pub fn said_when_quiet(&self) -> bool {
        matches!(
            self,
            Event::StaleFiles(_) | Event::StaleCgroups(_) | Event::OomKilled { .. }
        )
    }
}

/// Where the runner's events go: the caller's sink.
#[derive(Clone, Copy)]
pub struct Events<'a>(pub &'a (dyn Fn(&Event<'_>) + Sync));

impl Events<'_> {
    /// Nowhere (tests, callers that say nothing).
    pub const NONE: Events<'static> = Events(&|_| {});

    pub fn emit(&self, e: Event<'_>) {
        (self.0)(&e)
    }
}

impl std::fmt::Debug for Events<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events(..)")
    }
}

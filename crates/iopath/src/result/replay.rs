//! What a run replayed (`--replay`, docs/replay.md) and what the replay
//! says of the program, as facts: the trace's size ([`Replay`], written by
//! the runner) and the answer ([`ReplayAnswer`], computed by
//! `analysis::replay` from the verdict); `report::text::replay` words them.

use serde::{Deserialize, Serialize};

use crate::result::names::Entrant;

/// The trace a run replayed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Replay {
    /// The trace's file name.
    pub trace: String,
    /// Ops each replay issues: reads, writes and syncs.
    pub ops: u64,
    /// Bytes its reads and writes ask for.
    pub bytes: u64,
    pub threads: u32,
    /// `fast`, `recorded`, or the factor of the recorded gaps.
    pub timing: String,
    /// Events of the trace a replay leaves out (failed calls; stat,
    /// rename, mmap ... which move no data and order nothing).
    pub left_out: u64,
    /// The depth the asynchronous methods replayed at, against the
    /// program's own (absent in results from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<ReplayDepth>,
    /// What the replay says of the program; absent before analysis or
    /// without a verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<ReplayAnswer>,
}

/// The depth an asynchronous method replayed at (a synchronous one always
/// issues one op at a time). `program`: the most reads and writes one
/// thread of the program had in flight at once, from the trace.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum ReplayDepth {
    /// Without `--qd`: each thread at the depth it kept in flight, so the
    /// comparison is of paths, not of depths.
    Own { program: u32 },
    /// `--qd`: every thread at `qd`, where the program kept `program`.
    Asked { qd: u32, program: u32 },
}

/// Why a replay's answer sets its pick against the method it names.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Against {
    /// `buffered`: the path a program takes unless told otherwise.
    DefaultPath,
    /// The method ranked next after the pick (the pick is buffered).
    RunnerUp,
    /// The method ranked first, where the pick is another one tied with
    /// it and cheaper (the pick is buffered).
    Fastest,
}

/// The program's I/O through the verdict's pick against another path: how
/// long a whole replay took through each (medians), and the CPU per op.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplayAnswer {
    pub pick: Entrant,
    pub pick_ns: u64,
    /// `buffered` where it ran and is not the pick (what a program does
    /// unless told), else the runner-up ([`Against`] says which).
    pub against: Entrant,
    pub against_ns: u64,
    /// Why `against` is the one compared (absent in results from before
    /// it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against_is: Option<Against>,
    /// The pick's CPU per op over `against`'s; absent when either lacks
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ratio: Option<f64>,
    /// The verdict made its call (false: the pick only leads).
    pub called: bool,
    /// A repetition of either stopped at its share of the budget
    /// (`cases[].facts` `replay_cut`): the times are of the whole trace at
    /// the pace reached, estimates.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

//! Reading fio job files: fio's INI dialect ([`ini`]) and the typed jobs it
//! describes ([`FioJob`]), with the options fio 3.x gives them after
//! `[global]` inheritance, and which of them fio starts together
//! ([`FioJobFile::groups`]). Nothing here maps to iopath's own job model;
//! that is the caller's business.
//!
//! fio (3.33 was the reference) is followed wherever it is well defined,
//! and a value fio would misread, or read in a way nobody means, is
//! refused with an error that names the file, the line, the option and the
//! value, and says how fio reads it. Nothing is dropped silently: options
//! without a typed field are kept in [`FioJob::unknown`].
//!
//! # The dialect
//!
//! - Sections: `[global]` and job sections `[name]`. Options before the
//!   first section are refused (as fio does). A section whose name *starts*
//!   with `global` is a global section (fio compares six characters).
//!   Options of a `[global]` apply to the job sections after it; a later
//!   `[global]` adds to (and overrides) the earlier ones for the jobs after
//!   it only. A job is its section's name unless it says `name=`.
//! - Lines: `key=value`, or a bare `key` (only for options fio lets go
//!   without a value: `time_based`, `stonewall`, `fixedbufs`, ...; a bare
//!   `direct` is an error in fio and here). Blanks before `=` are ignored;
//!   after `=` they are accepted only where fio reads the value the same
//!   (a plain number), because fio reads `bs= 4k` as 4 bytes,
//!   `runtime= 1m` as one second and refuses `rw= read`.
//! - Comments: a line whose first non-blank character is `;` or `#`, and
//!   everything from the first `;` or `#` on any line (fio cuts there even
//!   inside a value: `filename=a#b` is `a`). `\r` at line ends is ignored.
//! - `include FILE` inside a section inserts the options of FILE (which
//!   may not hold sections, as in fio). A relative FILE is looked up next
//!   to the including file, then in the current directory (fio tries the
//!   current directory first). Include cycles are refused, and so is a
//!   FILE that is not a regular file (`/dev/zero` would be read forever).
//! - `${VAR}`: the environment variable, anywhere on an option line
//!   (fio substitutes an empty string for an unset one; here that is an
//!   error). fio does not expand `$VAR` without braces; a `$name` that is
//!   not one of fio's keywords is refused rather than kept literally (as
//!   fio would), except in `description`.
//! - Keywords `$pagesize`, `$mb_memory` (MiB of RAM), `$ncpus` (CPUs
//!   configured), replaced anywhere. As in fio, a line with a keyword and
//!   one of `+ - * /` has its value computed the way fio has `bc` compute
//!   it: integers with `+ - * /` and parentheses, `/` truncating.
//! - `(...)` expressions in numeric values (fio built with its arithmetic
//!   parser; Debian's fio 3.33 is not and refuses them): integers with
//!   units, `+ * /` and parentheses. `-` is refused: fio splits numeric
//!   values at `-`, `:` and `,` before it sees the expression. A time
//!   expression with no unit anywhere is in seconds, as in fio.
//!
//! # Units
//!
//! Sizes: a decimal (or `0x` hex) integer with `k m g t p` (optionally
//! followed by `b`), case-insensitive, powers of 1024; with `kb_base=1000`
//! powers of 1000. `kib`, `mib`, ... are the *other* base (fio inverts IEC
//! and SI prefixes for compatibility: `4kib` is 4000 bytes by default).
//! Refused: fractions (fio reads `1.5k` as 1 byte), `4ki` (fio reads 4096,
//! its documentation says 4000), other suffixes fio ignores (`4kx`), units
//! after hex. Percentages where fio takes them (`size`, `io_size`).
//! Times (`runtime`, `ramp_time`): seconds by default, or `us`/`usec`,
//! `ms`/`msec`, `s`, `m` (minutes), `h`, `d`; fio reads `10sec`, `10min`
//! and hex times as microseconds, so those are refused. Booleans: `0` or
//! `1`.
//!
//! docs/fio-jobs.md has the full table of options, what is refused and
//! why; the tests cross-check the fixtures in tests/fixtures/fio against
//! the installed fio (`--parse-only`, `--showcmd`, `--debug=parse`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod error;
pub mod existing;
mod expr;
pub mod ini;
mod job;
pub mod map;
mod options;
mod value;

#[cfg(test)]
mod tests;

pub use error::{
    BadValue, Choices, ErrorKind, FioError, Include, Location, Problem, Syntax, ValueError,
};
pub use job::{
    BlockSizes, FioJob, Given, NodeSet, NumaMemPolicy, PerDir, Rw, RwKind, RwModifier, Size,
    SyncMode, Unknown,
};

/// fio's built-in keywords, as fio computes them at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keywords {
    /// `$pagesize`: the page size in bytes.
    pub pagesize: u64,
    /// `$mb_memory`: physical memory in MiB.
    pub mb_memory: u64,
    /// `$ncpus`: CPUs configured (online or not), as `sysconf(_SC_NPROCESSORS_CONF)`.
    pub ncpus: u64,
}

impl Keywords {
    /// This machine's values, computed as fio computes them.
    pub fn detect() -> Keywords {
        let info = rustix::system::sysinfo();
        // `totalram` is a C long: 32 bits on some targets.
        #[allow(clippy::useless_conversion)]
        let ram = u64::from(info.totalram).saturating_mul(u64::from(info.mem_unit).max(1));
        Keywords {
            pagesize: rustix::param::page_size() as u64,
            mb_memory: ram / (1 << 20),
            ncpus: cpus_configured(),
        }
    }
}

/// glibc's `_SC_NPROCESSORS_CONF`: the `cpuN` entries under
/// /sys/devices/system/cpu.
fn cpus_configured() -> u64 {
    let counted = std::fs::read_dir("/sys/devices/system/cpu")
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.strip_prefix("cpu")
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                })
                .count() as u64
        })
        .unwrap_or(0);
    if counted > 0 {
        counted
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
    }
}

/// Where `${VAR}` values come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Env {
    /// This process's environment.
    Process,
    /// A fixed set (tests, or a caller that wants control).
    Fixed(BTreeMap<String, String>),
}

impl Env {
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        match self {
            Env::Process => std::env::var(name).ok(),
            Env::Fixed(map) => map.get(name).cloned(),
        }
    }
}

/// What a job file is read against: its environment and fio's keywords.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub env: Env,
    pub keywords: Keywords,
}

impl Context {
    /// This process's environment and this machine's keywords: what fio
    /// would see if run here.
    pub fn from_process() -> Context {
        Context {
            env: Env::Process,
            keywords: Keywords::detect(),
        }
    }
}

/// A parsed job file: its jobs in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct FioJobFile {
    /// The job file as given.
    pub path: PathBuf,
    /// The job sections in file order, each with its effective options.
    pub jobs: Vec<FioJob>,
}

/// Read and type a job file, with this process's environment and this
/// machine's keywords.
pub fn parse_file(path: &Path) -> Result<FioJobFile, FioError> {
    parse_file_with(path, &Context::from_process())
}

/// Read and type a job file against `ctx`.
pub fn parse_file_with(path: &Path, ctx: &Context) -> Result<FioJobFile, FioError> {
    let sections = ini::read_file(path, ctx)?;
    Ok(FioJobFile {
        path: path.to_path_buf(),
        jobs: options::resolve(&sections)?,
    })
}

/// Type a job file given as text; `path` names it in messages and is where
/// relative includes are looked up from.
pub fn parse_str(text: &str, path: &Path, ctx: &Context) -> Result<FioJobFile, FioError> {
    let sections = ini::read_str(text, path, ctx)?;
    Ok(FioJobFile {
        path: path.to_path_buf(),
        jobs: options::resolve(&sections)?,
    })
}

impl FioJobFile {
    /// The jobs fio starts together, as indexes into [`Self::jobs`], in
    /// the order fio runs the groups.
    ///
    /// fio starts the jobs of a file together, except that a job with
    /// `stonewall` (alias `wait_for_previous`) waits until every job before
    /// it has finished: it opens a new group (unless nothing came before
    /// it). Each job runs as `numjobs` processes ([`FioJob::numjobs`],
    /// default 1) of the same group: fio's clones never carry `stonewall`.
    /// `new_group` only starts a new *reporting* group and does not change
    /// this. Options that delay or stop jobs inside a group (`startdelay`,
    /// `wait_for`, `exitall`, ...) are not modelled; they are in
    /// [`FioJob::unknown`].
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, job) in self.jobs.iter().enumerate() {
            let wall = job.stonewall.as_ref().is_some_and(|g| g.value);
            match groups.last_mut() {
                Some(group) if !wall => group.push(i),
                _ => groups.push(vec![i]),
            }
        }
        groups
    }

    /// A readable listing of every job's options with where each was set,
    /// then the groups; paths are shown relative to the job file's
    /// directory.
    pub fn dump(&self) -> String {
        let base = self.path.parent().unwrap_or(Path::new(""));
        let mut out = String::new();
        for (i, job) in self.jobs.iter().enumerate() {
            job::dump_job(&mut out, i, job, base);
        }
        for (g, members) in self.groups().iter().enumerate() {
            let names: Vec<String> = members
                .iter()
                .map(|&i| {
                    let job = &self.jobs[i];
                    let n = job.numjobs.as_ref().map_or(1, |g| g.value);
                    if n == 1 {
                        format!("{i} {}", job.name)
                    } else {
                        format!("{i} {} x{n}", job.name)
                    }
                })
                .collect();
            out.push_str(&format!("group {g}: {}\n", names.join(", ")));
        }
        out
    }
}

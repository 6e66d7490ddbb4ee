//! The bounds on what iopath takes in (docs/job-files.md, "Limits"): cases
//! per run, the size of a job file (TOML or fio) and of a result that
//! `report` and `compare` read. Each has a default generous for real use
//! and an environment variable that raises (or lowers) it; input over a
//! bound is refused before any work, naming the bound and the variable.

use std::io::Read;
use std::path::Path;

use crate::model::UsageError;

/// One bound: its default and the variable that overrides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The environment variable that sets it (a number; sizes take units).
    pub env: &'static str,
    /// Its value when the variable is not set.
    pub default: u64,
    /// A size in bytes (`4M` in the variable), else a count.
    pub bytes: bool,
}

/// Cases in one run: 4096. The default run has 60; the largest preset
/// under 100; every method x pattern x 4 block sizes x 4 depths about
/// 2,000. At the default 150 ms and at least 3 rounds, 4096 cases take over
/// half an hour; each holds its latency histograms while its job runs.
pub const CASES: Limit = Limit {
    env: "IOPATH_MAX_CASES",
    default: 4096,
    bytes: false,
};

/// A job file (TOML or fio, includes each): 1 MiB, about 25,000
/// two-line `[[case]]` entries, more than [`CASES`] allows.
pub const JOB_FILE: Limit = Limit {
    env: "IOPATH_MAX_JOB_FILE",
    default: 1 << 20,
    bytes: true,
};

/// A result file read by `report` or `compare`: 256 MiB, a run of
/// [`CASES`] cases with their repetitions and time series.
pub const RESULT_FILE: Limit = Limit {
    env: "IOPATH_MAX_RESULT",
    default: 256 << 20,
    bytes: true,
};

impl Limit {
    /// The bound in force: the variable's value, else the default.
    pub fn value(&self) -> Result<u64, UsageError> {
        let Some(raw) = std::env::var_os(self.env) else {
            return Ok(self.default);
        };
        let text = raw.to_string_lossy();
        let parsed = if self.bytes {
            crate::model::units::parse_size(&text)
        } else {
            text.trim().parse::<u64>().map_err(|e| e.to_string())
        };
        parsed.map_err(|e| {
            UsageError(format!(
                "{}={text}: {e}; give a {} (default {})",
                self.env,
                if self.bytes {
                    "size such as 64M"
                } else {
                    "whole number"
                },
                self.show(self.default)
            ))
        })
    }

    fn show(&self, n: u64) -> String {
        if self.bytes {
            crate::model::units::fmt_bytes(n)
        } else {
            n.to_string()
        }
    }

    /// `n` against the bound: the refusal says what (`what`: "the job
    /// has 6000 cases"), the bound, and how to raise it.
    pub fn check(&self, n: u64, what: &str, instead: &str) -> Result<(), UsageError> {
        let most = self.value()?;
        if n <= most {
            return Ok(());
        }
        Err(UsageError(format!(
            "{what} {}, more than the {} allowed ({}): {instead}, or set {}={n} to take it",
            self.show(n),
            self.show(most),
            self.env,
            self.env,
        )))
    }

    /// The bytes of `path`, refused past the bound (read no further than
    /// one byte over it, whatever the file: a FIFO, `/dev/zero`). `Ok(Err)`
    /// is the refusal; `Err` the file's own read error.
    pub fn read(
        &self,
        path: &Path,
        what: &str,
        instead: &str,
    ) -> std::io::Result<Result<Vec<u8>, UsageError>> {
        let most = match self.value() {
            Ok(m) => m,
            Err(e) => return Ok(Err(e)),
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)?
            .take(most.saturating_add(1))
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 <= most {
            return Ok(Ok(bytes));
        }
        // The whole size when the file has one, else "more than".
        let len = std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map_or(bytes.len() as u64, |m| m.len());
        Ok(Err(self.check(len, what, instead).err().unwrap_or_else(
            || UsageError(format!("{what} grew past {}", self.show(most))),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_over_its_bound_names_the_variable_and_the_count_that_takes_it() {
        let e = CASES.check(6000, "the job has", "split it").unwrap_err().0;
        assert!(e.contains("6000"), "{e}");
        assert!(e.contains("IOPATH_MAX_CASES=6000"), "{e}");
        assert!(CASES.check(CASES.default, "the job has", "x").is_ok());
    }

    #[test]
    fn a_file_is_read_no_further_than_one_byte_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        let small = Limit {
            env: "IOPATH_TEST_NEVER_SET",
            default: 10,
            bytes: true,
        };
        std::fs::write(&p, [b'x'; 11]).unwrap();
        let e = small.read(&p, "f is", "less").unwrap().unwrap_err().0;
        assert!(e.contains("IOPATH_TEST_NEVER_SET=11"), "{e}");
        std::fs::write(&p, [b'x'; 10]).unwrap();
        assert_eq!(small.read(&p, "f is", "less").unwrap().unwrap().len(), 10);
    }
}

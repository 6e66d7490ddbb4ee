//! iopath: run one workload through every I/O path on one file, and say
//! which path to use. This crate holds the command line, planning, the
//! runner and the reports; every access method (and all unsafe code) lives
//! in `iopath-io`.

#![forbid(unsafe_code)]

pub mod cli;
pub mod commands;
pub mod compare;
pub mod metrics;
pub mod plan;
pub mod progress;
pub mod report;
pub mod result;
pub mod runner;
pub mod stats;
pub mod sysinfo;
pub mod target;
pub mod units;
pub mod verdict;
pub mod warnings;

/// The run was stopped by Ctrl-C or SIGTERM (exit code 130).
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Quote one argument for a POSIX shell when it needs it.
pub fn shell_quote(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:,@%+-".contains(c));
    if safe {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--bs=4k"), "--bs=4k");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}

//! iopath: run one workload through every I/O path on one file, and say
//! which path to use. This crate holds the command line, planning, the
//! runner and the reports; every access method (and all unsafe code) lives
//! in `iopath-io`.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod cli;
pub mod import;
pub mod model;
pub mod plan;
pub mod record;
pub mod report;
pub mod result;
pub mod run;
pub mod stats;
pub mod system;
pub mod trace;

/// The run was stopped by Ctrl-C or SIGTERM (exit code 130).
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// The number of the signal that stopped the run (0 while none has), set
/// by the handlers `main` registers ([`stop_signal_slot`]).
static STOP_SIGNAL: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicUsize>> =
    std::sync::OnceLock::new();

/// Where the signal handlers record which signal stopped the run.
pub fn stop_signal_slot() -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    std::sync::Arc::clone(STOP_SIGNAL.get_or_init(Default::default))
}

/// The signal that stopped the run (`SIGINT`: Ctrl-C, `SIGTERM`,
/// `SIGHUP`: a closed terminal, `SIGQUIT`); `None` before any.
pub fn stop_signal() -> Option<&'static str> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let n = STOP_SIGNAL
        .get()?
        .load(std::sync::atomic::Ordering::Relaxed);
    Some(match i32::try_from(n).ok()? {
        0 => return None,
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        SIGQUIT => "SIGQUIT",
        _ => "a signal",
    })
}

/// The signal that stopped the run, or what may have when none was
/// recorded: for messages written while it runs.
pub fn stop_cause() -> &'static str {
    stop_signal().unwrap_or("Ctrl-C or SIGTERM")
}

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

/// [`shell_quote`] for any argument: one that is not UTF-8 is written as
/// bash's `$'...'` with `\xNN` for every byte outside printable ASCII, so
/// the command can still be pasted and run.
pub fn shell_quote_os(arg: &std::ffi::OsStr) -> String {
    if let Some(s) = arg.to_str() {
        return shell_quote(s);
    }
    let mut out = String::from("$'");
    for &b in arg.as_encoded_bytes() {
        match b {
            b'\'' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::{shell_quote, shell_quote_os};

    #[test]
    fn bytes_that_are_not_utf8_are_quoted_for_bash() {
        use std::os::unix::ffi::OsStrExt;
        let arg = std::ffi::OsStr::from_bytes(b"x\xfe'y.html");
        assert_eq!(shell_quote_os(arg), r"$'x\xfe\'y.html'");
        assert_eq!(shell_quote_os(std::ffi::OsStr::new("a b")), "'a b'");
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--bs=4k"), "--bs=4k");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}

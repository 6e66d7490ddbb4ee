//! `iopath record`: a program's file I/O into a trace (docs/replay.md).
//! Two backends: eBPF through bpftrace ([`ebpf`], run by [`bpftrace`]),
//! and `strace -f` ([`strace`]) for a user who is not root. Both give
//! [`raw::Raw`] events that [`resolve::Resolver`] turns into trace events,
//! spooled beside the output ([`crate::trace::spool`]) and assembled with
//! the header once the files are known.
//!
//! Files: a failed start leaves nothing behind; once the command has run,
//! the trace is kept, and says how it ended (the command's failure, an
//! interruption, the tracer's end).

pub mod bpftrace;
pub mod command;
pub mod ebpf;
mod ebpf_run;
mod finish;
pub mod raw;
pub mod resolve;
pub mod strace;
mod strace_run;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::trace::Header;

/// Which backend records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    Ebpf,
    Strace,
    /// eBPF when root and bpftrace is installed, else strace.
    #[default]
    Auto,
}

/// What is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A command started here (its arguments, the program first).
    Command(Vec<OsString>),
    /// A running process and its new children.
    Pid(u32),
}

/// One recording.
#[derive(Debug, Clone)]
pub struct RecordSpec {
    pub output: PathBuf,
    pub target: Target,
    /// `--pid`: stop after this long (else when the process exits).
    pub duration: Option<Duration>,
    pub backend: Backend,
    pub anonymize: bool,
}

/// What the recorder tells its caller while it works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordEvent {
    /// tracefs was not mounted: it mounted it.
    MountedTracefs,
    /// eBPF could not start (`auto`): strace records instead.
    FellBack { reason: String },
    /// The tracer is attached: the command runs now.
    Attached { backend: &'static str },
}

/// A recording done: its header (as written) and the command's exit code
/// (`None` for `--pid`).
#[derive(Debug, Clone)]
pub struct Recorded {
    pub header: Header,
    pub exit_code: Option<i32>,
}

/// Why nothing was recorded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(transparent)]
    Usage(#[from] crate::model::UsageError),
    #[error(transparent)]
    Bpftrace(#[from] bpftrace::BpftraceError),
    #[error(
        "strace is not installed: `apt-get install strace`, or record as root with --backend ebpf"
    )]
    NoStrace,
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

impl RecordError {
    fn io(
        what: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> RecordError {
        let path = path.to_path_buf();
        move |source| RecordError::Io { what, path, source }
    }
}

/// Records `spec`; `stop` (Ctrl-C) ends the recording early.
pub fn record(
    spec: &RecordSpec,
    stop: &AtomicBool,
    say: &mut dyn FnMut(RecordEvent),
) -> Result<Recorded, RecordError> {
    if let Target::Command(argv) = &spec.target {
        let Some(program) = argv.first() else {
            return Err(crate::model::UsageError(
                "nothing to record: give a command after `--`, or --pid PID".into(),
            )
            .into());
        };
        command::find(program)?;
    }
    if let Target::Pid(pid) = spec.target {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err(crate::model::UsageError(format!(
                "no process {pid}: give the pid of a running process (pgrep NAME)"
            ))
            .into());
        }
    }
    if spec.output.exists() {
        return Err(crate::model::UsageError(format!(
            "{} exists: remove it or give another -o (a trace is never overwritten)",
            spec.output.display()
        ))
        .into());
    }
    match choose(spec.backend) {
        Backend::Strace => strace_run::record(spec, stop),
        _ => match ebpf_run::record(spec, stop, say) {
            Err(RecordError::Bpftrace(e)) if spec.backend == Backend::Auto => {
                say(RecordEvent::FellBack {
                    reason: e.to_string(),
                });
                strace_run::record(spec, stop)
            }
            other => other,
        },
    }
}

/// The backend `auto` means here.
fn choose(b: Backend) -> Backend {
    match b {
        Backend::Auto if rustix::process::geteuid().is_root() && on_path("bpftrace") => {
            Backend::Ebpf
        }
        Backend::Auto => Backend::Strace,
        other => other,
    }
}

fn on_path(name: &str) -> bool {
    command::find(&OsString::from(name)).is_ok()
}

//! `iopath record` and `iopath trace` (docs/replay.md): their flags, and
//! the commands that run them.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};

use crate::model::UsageError;
use crate::record::{Backend, RecordEvent, RecordSpec, Target};
use crate::trace::codec::{self, TraceError};

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Examples:\n  iopath record -o app.trace -- ./app --input data.bin\n  \
                        iopath record -o db.trace --pid 4242 --duration 30s\n  \
                        iopath trace show app.trace"
)]
pub struct RecordArgs {
    /// The trace to write (never overwritten).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,

    /// Record a running process (and the children it starts) instead of a command.
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,

    /// With --pid: stop recording after this long (else when the process exits, or Ctrl-C).
    #[arg(long, value_name = "TIME", requires = "pid", value_parser = super::values::duration)]
    pub duration: Option<Duration>,

    /// How to record: eBPF through bpftrace (root), strace (anyone; sees
    /// no mmap faults or io_uring ops), or auto (eBPF when it can).
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,

    /// Replace every path (and the command's arguments) by a stable hash,
    /// so the trace can be shared.
    #[arg(long)]
    pub anonymize: bool,

    /// The command to record, after `--`.
    #[arg(
        value_name = "CMD",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<OsString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Ebpf,
    Strace,
    Auto,
}

#[derive(Debug, Clone, Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: TraceCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum TraceCommand {
    /// Summarise a trace: files, bytes, op mix, sizes, threads, ops in flight.
    Show {
        #[arg(value_name = "TRACE")]
        trace: PathBuf,
    },
    /// A fio iolog (v2 or v3, from fio's write_iolog) into a trace.
    ImportFio {
        #[arg(value_name = "IOLOG")]
        log: PathBuf,
        #[arg(short = 'o', long = "output", value_name = "TRACE")]
        output: PathBuf,
    },
    /// A trace as a fio iolog, for fio's read_iolog (fio opens the paths it names).
    ExportFio {
        #[arg(value_name = "TRACE")]
        trace: PathBuf,
        #[arg(short = 'o', long = "output", value_name = "IOLOG")]
        output: PathBuf,
        /// The iolog version: 3 has timestamps, 2 waits between ops.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
        iolog_version: u8,
    },
    /// Keep only the events on some files (a program's data, not its libraries) in a new trace.
    Filter {
        #[arg(value_name = "TRACE")]
        trace: PathBuf,
        #[arg(short = 'o', long = "output", value_name = "TRACE")]
        output: PathBuf,
        /// Keep the files at or under this path (repeat for more); relative paths are taken
        /// against the current directory.
        #[arg(long = "path", value_name = "PATH", required = true)]
        paths: Vec<PathBuf>,
    },
}

/// `iopath record`: the command's exit code, passed through.
pub fn record(a: &RecordArgs, stop: &AtomicBool) -> Result<ExitCode> {
    let target = match a.pid {
        Some(pid) => Target::Pid(pid),
        None => Target::Command(a.command.clone()),
    };
    let spec = RecordSpec {
        output: a.output.clone(),
        target,
        duration: a.duration,
        backend: match a.backend {
            BackendArg::Ebpf => Backend::Ebpf,
            BackendArg::Strace => Backend::Strace,
            BackendArg::Auto => Backend::Auto,
        },
        anonymize: a.anonymize,
    };
    let mut say = |e: RecordEvent| {
        match e {
        RecordEvent::MountedTracefs => {
            crate::say!("iopath: tracefs was not mounted: mounted it at /sys/kernel/tracing")
        }
        RecordEvent::FellBack { reason } => crate::say!(
            "iopath: eBPF cannot record here ({}): recording with strace (no mmap faults, no io_uring ops)",
            crate::model::untrusted::visible(&reason)
        ),
        RecordEvent::Attached { .. } => {}
    }
    };
    let done = crate::record::record(&spec, stop, &mut say).map_err(|e| match e {
        crate::record::RecordError::Usage(u) => anyhow::Error::from(u),
        other => anyhow::Error::from(other),
    })?;
    let text = crate::report::trace::recorded(&done.header, &a.output.to_string_lossy());
    crate::say!("{}", text.trim_end());
    let code = done.exit_code.unwrap_or(0);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// A trace error: bad input (exit 2) names the file.
fn bad_trace(path: &Path, e: TraceError) -> anyhow::Error {
    if e.is_bad_input() {
        UsageError(format!("{}: {e}", path.display())).into()
    } else {
        anyhow::Error::from(e).context(format!("cannot read {}", path.display()))
    }
}

/// `iopath trace ...`.
pub fn trace(a: &TraceArgs) -> Result<ExitCode> {
    match &a.command {
        TraceCommand::Show { trace } => {
            let mut r = codec::open_file(trace).map_err(|e| bad_trace(trace, e))?;
            let mut sum = crate::trace::summary::Summary::new(r.header());
            for e in r.by_ref() {
                sum.add(&e.map_err(|e| bad_trace(trace, e))?);
            }
            super::commands::write_stdout(crate::report::trace::show(r.header(), &sum))?;
        }
        TraceCommand::ImportFio { log, output } => import_fio(log, output)?,
        TraceCommand::ExportFio {
            trace,
            output,
            iolog_version,
        } => export_fio(trace, output, *iolog_version)?,
        TraceCommand::Filter {
            trace,
            output,
            paths,
        } => filter(trace, output, paths)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn refuse_existing(output: &Path) -> Result<()> {
    if output.exists() {
        return Err(UsageError(format!(
            "{} exists: remove it or give another -o (it is never overwritten)",
            output.display()
        ))
        .into());
    }
    Ok(())
}

fn import_fio(log: &Path, output: &Path) -> Result<()> {
    use crate::trace::iolog::{Importer, IologError, IologReader};
    refuse_existing(output)?;
    let bad = |e: IologError| -> anyhow::Error {
        match e {
            IologError::Io(e) => {
                anyhow::Error::from(e).context(format!("cannot read {}", log.display()))
            }
            other => UsageError(format!("{}: {other}", log.display())).into(),
        }
    };
    let f = std::fs::File::open(log).with_context(|| format!("cannot read {}", log.display()))?;
    let reader = IologReader::open(std::io::BufReader::new(f)).map_err(bad)?;
    let mut spool = crate::trace::spool::Spool::create(output)
        .with_context(|| format!("cannot write beside {}", output.display()))?;
    let mut imp = Importer::default();
    for line in reader {
        if let Some(e) = imp.event(&line.map_err(bad)?) {
            spool
                .push(&e)
                .with_context(|| format!("cannot write beside {}", output.display()))?;
        }
    }
    let mut header = imp.header(&log.to_string_lossy());
    spool
        .finish(output, &mut header)
        .with_context(|| format!("cannot write {}", output.display()))?;
    Ok(())
}

/// `iopath trace filter`: the events on the files under `paths`, into a
/// new trace (written through a spool: nothing is left at `output` on an
/// error).
fn filter(trace: &Path, output: &Path, paths: &[PathBuf]) -> Result<()> {
    refuse_existing(output)?;
    let mut r = codec::open_file(trace).map_err(|e| bad_trace(trace, e))?;
    // As given, made absolute, and resolved (`..`, symbolic links) where
    // it exists: a recording names the paths the program opened.
    let absolute: Vec<PathBuf> = paths
        .iter()
        .flat_map(|p| {
            [
                lexical(&std::path::absolute(p).unwrap_or_else(|_| p.clone())),
                std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()),
            ]
        })
        .collect();
    let keep: Vec<&Path> = absolute
        .iter()
        .chain(paths.iter())
        .map(PathBuf::as_path)
        .collect();
    let f = crate::trace::filter::Filter::under(&r.header().files, &keep);
    if f.files().is_empty() {
        return Err(UsageError(format!(
            "{}: none of its {} files is at or under {}; iopath trace show lists them",
            trace.display(),
            r.header().files.len(),
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    }
    let mut header = f.header(r.header());
    let mut spool = crate::trace::spool::Spool::create(output)
        .with_context(|| format!("cannot write beside {}", output.display()))?;
    let (mut seen, mut kept) = (0u64, 0u64);
    for e in r.by_ref() {
        seen += 1;
        if let Some(e) = f.event(&e.map_err(|e| bad_trace(trace, e))?) {
            kept += 1;
            spool
                .push(&e)
                .with_context(|| format!("cannot write beside {}", output.display()))?;
        }
    }
    spool
        .finish(output, &mut header)
        .with_context(|| format!("cannot write {}", output.display()))?;
    eprintln!(
        "{}: kept {} of {} files and {kept} of {seen} events",
        output.display(),
        f.files().len(),
        r.header().files.len()
    );
    Ok(())
}

/// `p` with its `.` and `..` components resolved as names, without
/// asking the file system (a recorded path need not exist here).
fn lexical(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

fn export_fio(trace: &Path, output: &Path, version: u8) -> Result<()> {
    refuse_existing(output)?;
    let mut r = codec::open_file(trace).map_err(|e| bad_trace(trace, e))?;
    if let Some(f) = r
        .header()
        .files
        .iter()
        .find(|f| f.path.contains(char::is_whitespace) || f.path.len() > 256)
    {
        return Err(UsageError(format!(
            "{}: the path {:?} has a space or is over 256 bytes, which fio's iolog cannot name: \
             record with --anonymize",
            trace.display(),
            crate::model::untrusted::visible(&f.path)
        ))
        .into());
    }
    let res = (|| -> Result<()> {
        let f = std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(output)?;
        let files = r.header().files.clone();
        let mut ex =
            crate::trace::iolog::Exporter::new(std::io::BufWriter::new(f), version, &files)?;
        let mut last = 0;
        for e in r.by_ref() {
            let e = e.map_err(|e| bad_trace(trace, e))?;
            last = e.ts_ns;
            ex.event(&e)?;
        }
        ex.finish(last)?.flush()?;
        Ok(())
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(output);
    }
    res
}

/// What `--replay` takes from the trace, or does not do: given with it,
/// clap refuses the pair (exit 2) rather than ignore one.
pub(super) const REPLAY_CONFLICTS: [&str; 18] = [
    "preset",
    "fio",
    "job",
    "file",
    "patterns",
    "threads",
    "concurrency",
    "span",
    "size",
    "bs",
    "time",
    "io_size",
    "sync",
    "sparse",
    "verify",
    "rwmix",
    "case_timeout",
    "neighbour",
];

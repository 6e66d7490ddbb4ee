//! A recording through strace: strace runs the command (or attaches to
//! `--pid`) and writes its lines to a file beside the output, read back
//! when it ends.

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::command::exit_code;
use super::ebpf_run::{command_of, hidden};
use super::finish::{self, Ended};
use super::resolve::Resolver;
use super::strace::{self, Parser};
use super::{RecordError, RecordSpec, Recorded, Target};
use crate::trace::spool::Spool;
use crate::trace::Ending;

pub fn record(spec: &RecordSpec, stop: &AtomicBool) -> Result<Recorded, RecordError> {
    let out = &spec.output;
    let log = hidden(out, "strace");
    let mut cmd = Command::new("strace");
    cmd.args(strace::args(&log));
    match &spec.target {
        Target::Command(argv) => {
            cmd.arg("--").args(argv);
        }
        Target::Pid(pid) => {
            cmd.args(["-p", &pid.to_string()]).stdin(Stdio::null());
        }
    }
    let started_unix_ns = finish::unix_now_ns();
    let t0 = Instant::now();
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => RecordError::NoStrace,
        _ => RecordError::io("cannot start strace for", out)(e),
    })?;
    let (status, early) = wait(&mut child, spec, stop);
    let res = assemble(spec, &log, started_unix_ns, t0.elapsed(), status, early);
    let _ = std::fs::remove_file(&log);
    res
}

/// Waits for strace: to its end, or to `--duration` or `stop` (then it is
/// asked to detach, SIGINT).
fn wait(
    child: &mut std::process::Child,
    spec: &RecordSpec,
    stop: &AtomicBool,
) -> (Option<std::process::ExitStatus>, Option<String>) {
    let deadline = spec.duration.map(|d| Instant::now() + d);
    let mut early = None;
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return (Some(s), early);
        }
        let due = deadline.is_some_and(|d| Instant::now() >= d);
        if early.is_none() && (due || stop.load(Ordering::Relaxed)) {
            if !due {
                early = Some("interrupted".to_string());
            }
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            }
            return (child.wait().ok(), early);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assemble(
    spec: &RecordSpec,
    log: &std::path::Path,
    started_unix_ns: u64,
    took: Duration,
    status: Option<std::process::ExitStatus>,
    early: Option<String>,
) -> Result<Recorded, RecordError> {
    let out = &spec.output;
    let Ok(file) = std::fs::File::open(log) else {
        // strace never started the command (it said why on stderr).
        let code = status.map_or(1, exit_code);
        return Err(crate::model::UsageError(format!(
            "strace could not trace the command (exit {code}): see its message above"
        ))
        .into());
    };
    let mut spool =
        Spool::create(out).map_err(RecordError::io("cannot write the trace beside", out))?;
    let t0 = (started_unix_ns / 1000) * 1000;
    let mut resolver = Resolver::new(t0);
    if let Target::Pid(pid) = spec.target {
        resolver.adopt(pid);
    }
    let mut parser = Parser::default();
    let mut sink = |e: &crate::trace::Event| spool.push(e);
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line.map_err(RecordError::io("cannot read strace's log", log))?;
        let Some(p) = parser.line(&String::from_utf8_lossy(&line)) else {
            continue;
        };
        if let super::raw::Raw::Path(call) = &p.raw {
            let (tid, ts, dirfd) = (call.tid, call.ts_ns, call.dirfd);
            if let Some(path) = p.path {
                resolver.entry_path(false, tid, ts, dirfd, path);
            }
            if let Some(path) = p.path2 {
                resolver.entry_path(true, tid, ts, dirfd, path);
            }
        }
        resolver
            .push(p.raw, &mut sink)
            .map_err(RecordError::io("cannot write the trace beside", out))?;
    }
    resolver
        .finish(&mut sink)
        .map_err(RecordError::io("cannot write the trace beside", out))?;
    let ending = match (early, status) {
        (Some(reason), _) => Ending::EndedEarly { reason },
        (None, Some(s)) if !s.success() && matches!(spec.target, Target::Command(_)) => {
            Ending::CommandFailed {
                exit_code: exit_code(s),
            }
        }
        _ => Ending::Complete,
    };
    let ended = Ended {
        command: command_of(spec),
        backend: "strace",
        started_unix_ns,
        duration_ns: took.as_nanos() as u64,
        lost_events: 0,
        unresolved_events: resolver.unresolved,
        blind_spots: strace::BLIND_SPOTS.to_vec(),
        ending,
    };
    let mut header = finish::header(ended, &resolver.files, out, spec.anonymize);
    spool
        .finish(out, &mut header)
        .map_err(RecordError::io("cannot write the trace", out))?;
    let exit = matches!(spec.target, Target::Command(_)).then(|| status.map_or(1, exit_code));
    Ok(Recorded {
        header,
        exit_code: exit,
    })
}

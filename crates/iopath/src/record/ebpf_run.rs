//! A recording through eBPF: the gate, bpftrace, the event pump.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use super::bpftrace::{self, Bpftrace, BpftraceError, Message};
use super::command::{exit_code, Gated};
use super::finish::{self, Ended};
use super::resolve::Resolver;
use super::{ebpf, RecordError, RecordEvent, RecordSpec, Recorded, Target};
use crate::trace::spool::Spool;
use crate::trace::{BlindSpot, Ending};

/// How long the root's exit may take to come through the tracer after
/// the command has been reaped.
const EXIT_GRACE: Duration = Duration::from_secs(10);

pub fn record(
    spec: &RecordSpec,
    stop: &AtomicBool,
    say: &mut dyn FnMut(RecordEvent),
) -> Result<Recorded, RecordError> {
    // Unmounted when the record ends (after `bt`, declared below).
    let _tracefs = match bpftrace::ensure_tracefs("record with --backend strace") {
        Ok(Some(m)) => {
            say(RecordEvent::MountedTracefs);
            Some(m)
        }
        Ok(None) => None,
        Err(e) => {
            return Err(BpftraceError::Failed {
                stderr: e.to_string(),
            }
            .into())
        }
    };
    let out = &spec.output;
    let mut spool =
        Spool::create(out).map_err(RecordError::io("cannot write the trace beside", out))?;
    let (mut bt, mut gated, root) = launch(spec)?;
    say(RecordEvent::Attached { backend: "ebpf" });
    let started_unix_ns = finish::unix_now_ns();
    let t0 = finish::monotonic_ns();
    let mut resolver = Resolver::new(t0);
    if let Target::Pid(pid) = spec.target {
        resolver.adopt(pid);
    }
    if let Some(g) = &mut gated {
        if let Err(e) = g.open() {
            bt.stop();
            if let Some(g) = gated {
                g.abandon();
            }
            return Err(RecordError::io("cannot start the command", out)(e));
        }
    }
    let pumped = pump(
        &mut bt,
        gated.as_mut(),
        &mut resolver,
        &mut spool,
        spec,
        stop,
        root,
    );
    let tracer_said = bt.stop();
    let mut sink = |e: &crate::trace::Event| spool.push(e);
    let drained = drain(&bt, &mut resolver, &mut sink).and_then(|()| resolver.finish(&mut sink));
    let status = pumped.status.or_else(|| command_end(gated.as_mut(), stop));
    if let Some(e) = pumped.error.or(drained.err()) {
        return Err(RecordError::io("cannot write the trace beside", out)(e));
    }
    let ended = Ended {
        command: command_of(spec),
        backend: "ebpf",
        started_unix_ns,
        duration_ns: finish::monotonic_ns().saturating_sub(t0),
        lost_events: bt.lost(),
        unresolved_events: resolver.unresolved,
        blind_spots: vec![BlindSpot::FaultUpgrades, BlindSpot::TmpfsFaults],
        ending: ending(pumped.ended_early, &tracer_said, status),
    };
    let mut header = finish::header(ended, &resolver.files, out, spec.anonymize);
    spool
        .finish(out, &mut header)
        .map_err(RecordError::io("cannot write the trace", out))?;
    Ok(Recorded {
        header,
        exit_code: status.map(exit_code),
    })
}

/// The end of a command the pump stopped waiting for. Interrupted: it had
/// the terminal's signal too; make sure it ends. The tracer gone: the
/// command goes on to its end.
fn command_end(gated: Option<&mut Gated>, stop: &AtomicBool) -> Option<std::process::ExitStatus> {
    let g = gated?;
    if stop.load(Ordering::Relaxed) {
        let _ = g.child.kill();
    }
    g.child.wait().ok()
}

/// The command behind its gate (not yet running) and bpftrace attached to
/// it, or to `--pid`'s process; the pid traced.
fn launch(spec: &RecordSpec) -> Result<(Bpftrace, Option<Gated>, u32), RecordError> {
    let (root, mode, gated) = match &spec.target {
        Target::Command(argv) => {
            let gate = hidden(&spec.output, "gate");
            let g = Gated::start(argv, &gate)
                .map_err(RecordError::io("cannot start the command behind", &gate))?;
            (g.pid(), 0, Some(g))
        }
        Target::Pid(pid) => (*pid, 1, None),
    };
    match Bpftrace::start(
        &ebpf::program(),
        &[root.to_string(), mode.to_string()],
        ebpf::ENV,
    ) {
        Ok(bt) => Ok((bt, gated, root)),
        Err(e) => {
            if let Some(g) = gated {
                g.abandon();
            }
            Err(e.into())
        }
    }
}

/// `.NAME.WHAT` beside `out`.
pub fn hidden(out: &std::path::Path, what: &str) -> std::path::PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.with_file_name(format!(".{name}.{what}"))
}

pub fn command_of(spec: &RecordSpec) -> Vec<String> {
    match &spec.target {
        Target::Command(argv) => finish::argv_text(argv),
        Target::Pid(pid) => std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| {
                b.split(|&c| c == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .unwrap_or_else(|_| vec![format!("pid {pid}")]),
    }
}

fn ending(
    early: Option<String>,
    tracer_said: &str,
    status: Option<std::process::ExitStatus>,
) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    if let Some(reason) = early {
        let reason = if tracer_said.is_empty() {
            reason
        } else {
            format!("{reason}: {tracer_said}")
        };
        return Ending::EndedEarly { reason };
    }
    match status {
        Some(s) if s.success() => Ending::Complete,
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => Ending::CommandFailed { exit_code: c },
            (None, Some(sig)) => Ending::CommandKilled { signal: sig },
            _ => Ending::CommandFailed {
                exit_code: exit_code(s),
            },
        },
        None => Ending::Complete,
    }
}

#[derive(Debug, Default)]
struct Pumped {
    status: Option<std::process::ExitStatus>,
    ended_early: Option<String>,
    error: Option<std::io::Error>,
}

/// Reads bpftrace's events until the command (or `--pid`'s process) has
/// exited and its exit came through, the duration is up, or `stop`.
fn pump(
    bt: &mut Bpftrace,
    mut gated: Option<&mut Gated>,
    resolver: &mut Resolver,
    spool: &mut Spool,
    spec: &RecordSpec,
    stop: &AtomicBool,
    root: u32,
) -> Pumped {
    let mut p = Pumped::default();
    let deadline = spec.duration.map(|d| Instant::now() + d);
    let mut reaped_at: Option<Instant> = None;
    let mut root_exited = false;
    loop {
        match bt.messages.recv_timeout(Duration::from_millis(100)) {
            Ok(Message::Printf(line)) => {
                let mut sink = |e: &crate::trace::Event| spool.push(e);
                match take_line(&line, resolver, &mut sink) {
                    Ok(exited) => root_exited |= exited == Some(root),
                    Err(e) => {
                        p.error = Some(e);
                        return p;
                    }
                }
            }
            Ok(Message::Other(_)) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                p.ended_early = Some("bpftrace exited".into());
                break;
            }
        }
        if let (None, Some(g)) = (p.status, gated.as_deref_mut()) {
            p.status = g.try_wait().ok().flatten();
            if p.status.is_some() {
                reaped_at = Some(Instant::now());
            }
        }
        let exited = root_exited && (gated.is_none() || p.status.is_some());
        let late = reaped_at.is_some_and(|t| t.elapsed() > EXIT_GRACE);
        if exited || late || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            p.ended_early = Some("interrupted".into());
            break;
        }
    }
    p
}

/// One line of the program; the pid whose exit it reports, if any.
fn take_line(
    line: &str,
    resolver: &mut Resolver,
    sink: &mut dyn FnMut(&crate::trace::Event) -> std::io::Result<()>,
) -> std::io::Result<Option<u32>> {
    if let Some((second, tid, ts, dirfd, path)) = ebpf::entry_path(line) {
        resolver.entry_path(second, tid, ts, dirfd, path);
        return Ok(None);
    }
    let Some(raw) = ebpf::parse(line) else {
        return Ok(None);
    };
    let exited = match raw {
        super::raw::Raw::Exit { pid, .. } => Some(pid),
        _ => None,
    };
    resolver.push(raw, sink)?;
    Ok(exited)
}

/// The events bpftrace printed before it stopped.
fn drain(
    bt: &Bpftrace,
    resolver: &mut Resolver,
    sink: &mut dyn FnMut(&crate::trace::Event) -> std::io::Result<()>,
) -> std::io::Result<()> {
    while let Ok(m) = bt.messages.recv() {
        if let Message::Printf(line) = m {
            take_line(&line, resolver, sink)?;
        }
    }
    Ok(())
}

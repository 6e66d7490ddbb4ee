//! Running a bpftrace program and reading its events as a stream: the one
//! place iopath starts `bpftrace` (Debian's package), so that every user
//! (the recorder; a latency breakdown attaching block tracepoints) gets
//! the same handling. [`Bpftrace::start`] spawns `bpftrace -f json`, waits
//! until its probes are attached (bpftrace says so on stderr when
//! `__BPFTRACE_NOTIFY_PROBES_ATTACHED` is set), and hands back a channel of
//! [`Message`]s read line by line from its stdout by a thread; the events
//! the kernel dropped (bpftrace's `lost_events`) are counted in
//! [`Bpftrace::lost`], never silently lost. [`Bpftrace::stop`] ends it
//! (SIGINT, as Ctrl-C would) and returns its stderr.
//!
//! tracefs: bpftrace needs `/sys/kernel/tracing`; [`ensure_tracefs`] mounts
//! it when it is missing and says so.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// What bpftrace printed on its stdout, one JSON line each.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A `printf`'s text (its trailing newline removed).
    Printf(String),
    /// Anything else bpftrace printed (maps at exit, `attached_probes`).
    Other(serde_json::Value),
}

/// Why bpftrace could not run the program.
#[derive(Debug, thiserror::Error)]
pub enum BpftraceError {
    #[error(
        "bpftrace is not installed: `apt-get install bpftrace` (as root), \
         or record with --backend strace"
    )]
    Missing,
    #[error("cannot start bpftrace: {0}")]
    Spawn(std::io::Error),
    #[error("bpftrace failed before its probes were attached: {stderr}")]
    Failed { stderr: String },
    #[error("bpftrace did not attach its probes within {secs} s: {stderr}")]
    Slow { secs: u64, stderr: String },
}

/// A running bpftrace program.
#[derive(Debug)]
pub struct Bpftrace {
    child: Child,
    lost: Arc<AtomicU64>,
    stderr: Receiver<String>,
    /// Its stdout's messages; closed when bpftrace exits.
    pub messages: Receiver<Message>,
}

/// How long bpftrace may take to exit after each signal of [`Bpftrace::stop`]
/// (detaching many probes on a busy machine is slow).
const STOP_GRACE: Duration = Duration::from_secs(15);

/// How long bpftrace may take to compile and attach a program.
const ATTACH_DEADLINE: Duration = Duration::from_secs(120);

/// The environment variable that has bpftrace say when every probe is
/// attached (its own test framework's hook; present in 0.17 and later).
const NOTIFY: &str = "__BPFTRACE_NOTIFY_PROBES_ATTACHED";

impl Bpftrace {
    /// Starts `program` with positional parameters `args` (`$1`, `$2` ...)
    /// and extra environment `env`; returns once its probes are attached.
    pub fn start(
        program: &str,
        args: &[String],
        env: &[(&str, &str)],
    ) -> Result<Self, BpftraceError> {
        let mut cmd = Command::new("bpftrace");
        // Line-buffered: each event reaches the reader as it is printed
        // (with full buffering the last ones wait for bpftrace's exit).
        cmd.args(["-f", "json", "-B", "line", "-e", program])
            .args(args)
            .env(NOTIFY, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => BpftraceError::Missing,
            _ => BpftraceError::Spawn(e),
        })?;
        let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(BpftraceError::Spawn(std::io::Error::other("no pipes")));
        };
        let (ready_tx, ready_rx) = mpsc::channel();
        let (err_tx, err_rx) = mpsc::channel();
        std::thread::spawn(move || read_stderr(err, &ready_tx, &err_tx));
        let lost = Arc::new(AtomicU64::new(0));
        let (msg_tx, msg_rx) = mpsc::sync_channel(1 << 16);
        let counted = Arc::clone(&lost);
        std::thread::spawn(move || read_stdout(out, &msg_tx, &counted));
        let mut run = Bpftrace {
            child,
            lost,
            stderr: err_rx,
            messages: msg_rx,
        };
        match ready_rx.recv_timeout(ATTACH_DEADLINE) {
            Ok(()) => Ok(run),
            Err(RecvTimeoutError::Disconnected) => {
                let stderr = run.stop();
                Err(BpftraceError::Failed { stderr })
            }
            Err(RecvTimeoutError::Timeout) => {
                let stderr = run.stop();
                Err(BpftraceError::Slow {
                    secs: ATTACH_DEADLINE.as_secs(),
                    stderr,
                })
            }
        }
    }

    /// Events the kernel dropped so far.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// The process id of bpftrace.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops bpftrace (SIGINT, as Ctrl-C; SIGTERM, then SIGKILL, if it
    /// has not exited [`STOP_GRACE`] after each), waits for it, and returns
    /// what it wrote on stderr (bpftrace's own memlock warning left out).
    pub fn stop(&mut self) -> String {
        use rustix::process::Signal;
        for sig in [Signal::INT, Signal::TERM, Signal::KILL] {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
                let _ = rustix::process::kill_process(pid, sig);
            }
            let deadline = std::time::Instant::now() + STOP_GRACE;
            while matches!(self.child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = self.child.wait();
        let mut text = String::new();
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(5)) {
            if !line.contains("RLIMIT_MEMLOCK") {
                text.push_str(&line);
                text.push('\n');
            }
        }
        text.trim_end().to_string()
    }
}

impl Drop for Bpftrace {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.stop();
        }
    }
}

fn read_stderr(
    err: std::process::ChildStderr,
    ready: &mpsc::Sender<()>,
    lines: &mpsc::Sender<String>,
) {
    for line in BufReader::new(err).lines() {
        let Ok(line) = line else { break };
        if line.trim() == NOTIFY {
            let _ = ready.send(());
        } else {
            let _ = lines.send(line);
        }
    }
}

fn read_stdout(out: std::process::ChildStdout, tx: &mpsc::SyncSender<Message>, lost: &AtomicU64) {
    let mut reader = BufReader::with_capacity(1 << 20, out);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Some(msg) = parse_line(&line, lost) else {
            continue;
        };
        if tx.send(msg).is_err() {
            return;
        }
    }
}

/// One line of `bpftrace -f json`; `lost_events` are counted into `lost`
/// (and `None` returned), as are lines that are not JSON.
pub fn parse_line(line: &str, lost: &AtomicU64) -> Option<Message> {
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    match v.get("type").and_then(|t| t.as_str()) {
        Some("printf") => {
            let text = v.get("data")?.as_str()?;
            Some(Message::Printf(text.trim_end_matches('\n').to_string()))
        }
        Some("lost_events") => {
            let n = v
                .pointer("/data/events")
                .and_then(|n| n.as_u64())
                .unwrap_or(0);
            lost.fetch_add(n, Ordering::Relaxed);
            None
        }
        _ => Some(Message::Other(v)),
    }
}

/// Where bpftrace reads tracepoint formats.
const TRACEFS: &str = "/sys/kernel/tracing";

/// tracefs as [`ensure_tracefs`] mounted it: unmounted when dropped (after
/// the bpftrace that needed it, declared after it, has stopped).
#[derive(Debug)]
pub struct TracefsMount(());

impl Drop for TracefsMount {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg(TRACEFS)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Mounts tracefs at /sys/kernel/tracing when it is not there (bpftrace
/// reads tracepoint formats from it); `Some` when it mounted it, to be
/// kept while bpftrace runs and dropped (unmounting it) after. `next`
/// is the caller's next step when it cannot (in the error).
pub fn ensure_tracefs(next: &str) -> std::io::Result<Option<TracefsMount>> {
    let dir = Path::new(TRACEFS);
    if dir.join("events").exists() {
        return Ok(None);
    }
    let status = Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    if status.success() {
        Ok(Some(TracefsMount(())))
    } else {
        Err(std::io::Error::other(format!(
            "tracefs is not mounted and `mount -t tracefs nodev {TRACEFS}` failed: \
             mount it as root, or {next}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_events_are_counted_and_printf_lines_kept() {
        let lost = AtomicU64::new(0);
        let m = parse_line(r#"{"type": "printf", "data": "E 1 2\n"}"#, &lost);
        assert_eq!(m, Some(Message::Printf("E 1 2".into())));
        assert_eq!(
            parse_line(r#"{"type": "lost_events", "data": {"events": 7}}"#, &lost),
            None
        );
        assert_eq!(
            parse_line(r#"{"type": "lost_events", "data": {"events": 5}}"#, &lost),
            None
        );
        assert_eq!(lost.load(Ordering::Relaxed), 12);
        assert_eq!(parse_line("not json", &lost), None);
    }
}

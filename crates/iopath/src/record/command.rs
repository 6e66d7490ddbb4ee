//! The recorded command: found on PATH before anything starts (a command
//! that cannot start is the user's mistake, said before any file is made),
//! started behind a gate (a FIFO the shell that will exec it reads), so
//! the tracer is attached before the command's first instruction.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};

use crate::model::UsageError;

/// The executable `name` runs: itself when it has a `/`, else the first
/// executable of that name on PATH.
pub fn find(name: &OsString) -> Result<PathBuf, UsageError> {
    use std::os::unix::fs::PermissionsExt;
    let shown = name.to_string_lossy();
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let as_path = Path::new(name);
    if shown.contains('/') {
        return match std::fs::metadata(as_path) {
            Err(e) => Err(UsageError(format!("cannot start {shown}: {e}"))),
            Ok(_) if !runnable(as_path) => Err(UsageError(format!(
                "cannot start {shown}: it is not an executable file (chmod +x, or name its interpreter)"
            ))),
            Ok(_) => Ok(as_path.to_path_buf()),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| runnable(p))
        .ok_or_else(|| {
            UsageError(format!(
                "cannot start {shown}: no such command on PATH (give its path, or install it)"
            ))
        })
}

/// A command waiting at its gate.
#[derive(Debug)]
pub struct Gated {
    pub child: Child,
    gate: PathBuf,
}

impl Gated {
    /// Starts `sh`, which waits on the FIFO `gate` (created here) and then
    /// execs `argv` in the same process: its pid is the command's.
    pub fn start(argv: &[OsString], gate: &Path) -> std::io::Result<Gated> {
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            gate,
            rustix::fs::Mode::from_raw_mode(0o600),
        )?;
        let spawned = Command::new("/bin/sh")
            .arg("-c")
            .arg("read -r _ < \"$0\" && exec \"$@\"")
            .arg(gate)
            .args(argv)
            .spawn();
        match spawned {
            Ok(child) => Ok(Gated {
                child,
                gate: gate.to_path_buf(),
            }),
            Err(e) => {
                let _ = std::fs::remove_file(gate);
                Err(e)
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Lets the command run.
    pub fn open(&mut self) -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).open(&self.gate)?;
        let _ = std::fs::remove_file(&self.gate);
        f.write_all(b"\n")
    }

    /// Stops a command that never ran (the tracer failed).
    pub fn abandon(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }
}

impl Drop for Gated {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.gate);
    }
}

/// The exit code a shell would give for `status` (128 + a signal).
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    }
}

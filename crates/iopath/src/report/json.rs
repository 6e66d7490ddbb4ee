//! The JSON result: pure JSON, nothing else on stdout when written there.
//! A file is replaced atomically (written beside it, then renamed), so a
//! reader never sees half a document and a crash keeps the last good one;
//! a device or FIFO is written once, at the end, never replaced.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::result::RunResult;

/// Write `result` to `path`: a regular file (or one to be created) is
/// replaced atomically; a symbolic link is followed (the file it names is
/// replaced, the link stays); anything else — `/dev/null`, `/dev/stdout`, a
/// FIFO, a character device — is only opened and written, once, when the
/// run is finished (`finished_at` set): renaming over it would replace the
/// device node with a regular file, and a stream cannot be rewritten.
pub fn write_file(path: &Path, result: &RunResult) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            if result.finished_at.is_none() {
                return Ok(());
            }
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("cannot write the JSON result to {}", path.display()))?;
            serde_json::to_writer_pretty(&mut f, result)?;
            f.write_all(b"\n")?;
            Ok(())
        }
        Ok(_) => {
            let real = std::fs::canonicalize(path)
                .with_context(|| format!("--json {}: cannot resolve the path", path.display()))?;
            replace(&real, result)
        }
        Err(_) => replace(path, result),
    }
}

/// Write `result` beside `path`, then rename it over `path`.
fn replace(path: &Path, result: &RunResult) -> Result<()> {
    let file_name = path
        .file_name()
        .with_context(|| format!("--json {}: not a file name", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.tmp", file_name.to_string_lossy()));
    let mut f = std::fs::File::create(&tmp)
        .with_context(|| format!("cannot write the JSON result to {}", tmp.display()))?;
    serde_json::to_writer_pretty(&mut f, result)?;
    f.write_all(b"\n")?;
    f.sync_all().ok();
    drop(f);
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!(
            "cannot move the JSON result into place at {}",
            path.display()
        )
    })
}

/// Print `result` on stdout.
pub fn write_stdout(result: &RunResult) -> Result<()> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    serde_json::to_writer_pretty(&mut lock, result)?;
    lock.write_all(b"\n")?;
    lock.flush()?;
    Ok(())
}

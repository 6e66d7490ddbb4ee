//! The JSON result: pure JSON, nothing else on stdout when written there.
//! A file is replaced atomically (written beside it, then renamed), so a
//! reader never sees half a document and a crash keeps the last good one.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::result::RunResult;

/// Write `result` to `path` atomically.
pub fn write_file(path: &Path, result: &RunResult) -> Result<()> {
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

//! The JSON result: pure JSON, nothing else on stdout when written there.
//! A file is replaced atomically (written beside it, then renamed), so a
//! reader never sees half a document and a crash keeps the last good one;
//! a device or FIFO is written once, at the end, never replaced.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::result::RunResult;

/// Write `result` to `path`: a regular file (or one to be created) is
/// replaced atomically; a symbolic link is followed (the file it names is
/// replaced, the link stays); anything else — `/dev/null`, `/dev/stdout`, a
/// FIFO, a character device — is only opened and written, once, when the
/// run is finished (`finished_at` set): renaming over it would replace the
/// device node with a regular file, and a stream cannot be rewritten.
pub fn write_file(path: &Path, result: &RunResult) -> Result<()> {
    let streamed = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    if streamed && result.finished_at.is_none() {
        return Ok(());
    }
    let mut bytes = serde_json::to_vec_pretty(result)?;
    bytes.push(b'\n');
    crate::report::write_output(path, &bytes, "--json")
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

//! The JSON result: pure JSON, nothing else on stdout when written there.
//! A file is replaced atomically (written beside it, then renamed), so a
//! reader never sees half a document and a crash keeps the last good one;
//! a device or FIFO is written once, at the end, never replaced.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::result::RunResult;

/// What `--json` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum JsonFormat {
    /// iopath's own document (docs/json-schema.md): what `iopath report`
    /// and `iopath compare` read.
    #[default]
    Iopath,
    /// fio's `--output-format=json` shape, one job per case, for fio-plot
    /// and fio scripts (a documented subset; iopath cannot read it back).
    Fio,
}

/// `result` in `format`, pretty, ending in a newline.
pub fn bytes_of(result: &RunResult, format: JsonFormat) -> Result<Vec<u8>> {
    // The C1 and bidi controls serde leaves raw are written as `\u0080`
    // (the same data): a terminal showing the JSON obeys none.
    let json = match format {
        JsonFormat::Iopath => serde_json::to_string_pretty(&*worded(result))? + "\n",
        JsonFormat::Fio => crate::report::fio_json::to_json(result)?,
    };
    Ok(crate::model::untrusted::json_escaped(json).into_bytes())
}

/// `result` with each verdict's `text` worded from its facts, as the file
/// carries it for convenience (borrowed when it already is).
fn worded(result: &RunResult) -> std::borrow::Cow<'_, RunResult> {
    use crate::report::text::verdict::lines;
    if result.verdicts.iter().all(|v| v.text == lines(v)) {
        return std::borrow::Cow::Borrowed(result);
    }
    let mut r = result.clone();
    for v in &mut r.verdicts {
        v.text = lines(v);
    }
    std::borrow::Cow::Owned(r)
}

/// Write `result` to `path`: a regular file (or one to be created) is
/// replaced atomically; a symbolic link is followed (the file it names is
/// replaced, the link stays); anything else — `/dev/null`, `/dev/stdout`, a
/// FIFO, a character device — is only opened and written, once, when the
/// run is finished (`finished_at` set): renaming over it would replace the
/// device node with a regular file, and a stream cannot be rewritten.
pub fn write_file(path: &Path, result: &RunResult, format: JsonFormat) -> Result<()> {
    if crate::report::is_stdout(path) {
        return match result.finished_at {
            Some(_) => write_stdout(result, format),
            None => Ok(()),
        };
    }
    let streamed = crate::report::is_stream(path);
    if streamed && result.finished_at.is_none() {
        return Ok(());
    }
    crate::report::write_output(path, &bytes_of(result, format)?, "--json")
}

/// Print `result` on stdout.
pub fn write_stdout(result: &RunResult, format: JsonFormat) -> Result<()> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    lock.write_all(&bytes_of(result, format)?)?;
    lock.flush()?;
    Ok(())
}

//! The JSON result: pure JSON, nothing else on stdout when written there.
//! A file is replaced atomically (written beside it, then renamed), so a
//! reader never sees half a document and a crash keeps the last good one;
//! a device or FIFO is written once, at the end, never replaced.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::report::export::{Export, Exporter};
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

impl JsonFormat {
    /// The exporter that writes this format.
    pub fn exporter(self) -> &'static dyn Exporter {
        match self {
            JsonFormat::Iopath => &Json,
            JsonFormat::Fio => &crate::report::fio_json::FioJson,
        }
    }
}

/// `--json`: iopath's own document, pretty, ending in a newline.
#[derive(Debug, Clone, Copy)]
pub struct Json;

impl Exporter for Json {
    fn flag(&self) -> &'static str {
        "--json"
    }

    fn serialize(&self, r: &RunResult) -> Result<Export> {
        Ok(Export::Document(escaped(
            serde_json::to_string_pretty(r)? + "\n",
        )))
    }
}

/// JSON text as written: the C1 and bidi controls serde leaves raw are
/// written as `\u0080` (the same data), for a terminal showing the JSON
/// obeys none.
pub(crate) fn escaped(json: String) -> Vec<u8> {
    crate::model::untrusted::json_escaped(json).into_bytes()
}

/// `result` in `format`, pretty, ending in a newline.
pub fn bytes_of(result: &RunResult, format: JsonFormat) -> Result<Vec<u8>> {
    let exporter = format.exporter();
    exporter.serialize(result)?.into_document(exporter.flag())
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
    crate::report::export::write(format.exporter(), path, result)
}

/// Print `result` on stdout.
pub fn write_stdout(result: &RunResult, format: JsonFormat) -> Result<()> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    lock.write_all(&bytes_of(result, format)?)?;
    lock.flush()?;
    Ok(())
}

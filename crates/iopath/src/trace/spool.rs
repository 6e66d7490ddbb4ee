//! A trace written before its header is known: events go to a spool file
//! beside the output as they come (memory bounded), and
//! [`Spool::finish`] writes the trace (the header, then the spooled events,
//! then the end marker) and removes the spool. The recorder and the iolog
//! import use it: both learn the files and their sizes only at the end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::codec::{encode_event, TraceWriter};
use super::{Event, Header};

#[derive(Debug)]
pub struct Spool {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    last_ts: u64,
    count: u64,
}

impl Spool {
    /// A spool for the trace `output`: `.NAME.spool` in its directory,
    /// created new (an existing one is an error).
    pub fn create(output: &Path) -> std::io::Result<Spool> {
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".into());
        let path = output.with_file_name(format!(".{name}.spool"));
        let f = File::options().write(true).create_new(true).open(&path)?;
        Ok(Spool {
            path,
            out: Some(BufWriter::with_capacity(1 << 16, f)),
            last_ts: 0,
            count: 0,
        })
    }

    pub fn push(&mut self, e: &Event) -> std::io::Result<()> {
        let mut buf = [0u8; 81];
        let n = encode_event(e, self.last_ts, &mut buf);
        self.last_ts = self.last_ts.max(e.ts_ns);
        self.count += 1;
        match &mut self.out {
            Some(out) => out.write_all(&buf[..n]),
            None => Ok(()),
        }
    }

    /// Events pushed so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Writes the trace at `output` with `header` (its `events` set here)
    /// and the spooled events; removes the spool. On an error nothing is
    /// left at `output`.
    pub fn finish(mut self, output: &Path, header: &mut Header) -> std::io::Result<()> {
        header.events = self.count;
        let res = self.assemble(output, header);
        if res.is_err() {
            let _ = std::fs::remove_file(output);
        }
        res
    }

    fn assemble(&mut self, output: &Path, header: &Header) -> std::io::Result<()> {
        if let Some(out) = self.out.take() {
            out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        }
        let out = BufWriter::with_capacity(1 << 16, File::create(output)?);
        let mut w = TraceWriter::new(out, header)?;
        let mut events = std::fs::File::open(&self.path)?;
        std::io::copy(&mut events, w.raw())?;
        w.set_written(self.count);
        w.finish()?.into_inner().map_err(|e| e.into_error())?;
        Ok(())
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        self.out = None;
        let _ = std::fs::remove_file(&self.path);
    }
}

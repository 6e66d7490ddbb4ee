//! fio's iolog (`write_iolog` / `read_iolog`), versions 2 and 3, to and
//! from traces. A v2 line is `FILE ACTION [OFFSET LENGTH]`, a v3 line the
//! same after a timestamp in µs since the start (fio's `utime_since_now`); the actions are `add`,
//! `open`, `close` (file actions) and `read`, `write`, `trim`, `sync`,
//! `datasync`, `wait` (v2: `FILE wait USECS`). Read line by line: a line is
//! at most [`MAX_LINE`] bytes, so memory is bounded.

use std::collections::HashMap;
use std::io::{BufRead, Write};

use super::{BlindSpot, Ending, Event, FileEntry, FileKind, Header, Op};

/// The longest line read (fio's own reader takes 256-byte names).
pub const MAX_LINE: usize = 8192;

/// A line that is not fio's iolog.
#[derive(Debug, thiserror::Error)]
pub enum IologError {
    #[error("line {line} (byte {offset}): expected {expected}")]
    Bad {
        line: u64,
        offset: u64,
        expected: String,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What a line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Add,
    Open,
    Close,
    Read,
    Write,
    Trim,
    Sync,
    Datasync,
    /// Wait this many µs (v2).
    Wait,
}

impl Action {
    fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "add" => Action::Add,
            "open" => Action::Open,
            "close" => Action::Close,
            "read" => Action::Read,
            "write" => Action::Write,
            "trim" => Action::Trim,
            "sync" => Action::Sync,
            "datasync" => Action::Datasync,
            "wait" => Action::Wait,
            _ => return None,
        })
    }

    fn takes_range(self) -> bool {
        matches!(
            self,
            Action::Read | Action::Write | Action::Trim | Action::Sync | Action::Datasync
        )
    }
}

/// One line of an iolog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// v3: µs since the start.
    pub ts_us: Option<u64>,
    pub file: String,
    pub action: Action,
    /// Offset (for `wait`: the µs).
    pub offset: u64,
    pub len: u64,
}

/// Reads an iolog line by line; the version from its first line.
#[derive(Debug)]
pub struct IologReader<R: BufRead> {
    input: R,
    pub version: u8,
    line: u64,
    offset: u64,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> IologReader<R> {
    pub fn open(mut input: R) -> Result<Self, IologError> {
        let mut first = Vec::new();
        let n = read_line(&mut input, &mut first)?;
        let text = String::from_utf8_lossy(&first);
        let version = match text.trim_end() {
            "fio version 2 iolog" => 2,
            "fio version 3 iolog" => 3,
            _ => {
                return Err(IologError::Bad {
                    line: 1,
                    offset: 0,
                    expected: "\"fio version 2 iolog\" or \"fio version 3 iolog\" \
                               (fio's v1 logs and blktraces are not read)"
                        .into(),
                })
            }
        };
        Ok(IologReader {
            input,
            version,
            line: 1,
            offset: n as u64,
            buf: Vec::new(),
            done: false,
        })
    }

    fn bad(&self, at: u64, expected: impl Into<String>) -> IologError {
        IologError::Bad {
            line: self.line,
            offset: at,
            expected: expected.into(),
        }
    }

    fn next_line(&mut self) -> Result<Option<Line>, IologError> {
        loop {
            let at = self.offset;
            self.buf.clear();
            let n = read_line(&mut self.input, &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            self.offset += n as u64;
            if n > MAX_LINE {
                return Err(self.bad(at, format!("a line of at most {MAX_LINE} bytes")));
            }
            let text = std::str::from_utf8(&self.buf)
                .map_err(|_| self.bad(at, "a line of UTF-8 text"))?
                .to_string();
            if text.trim().is_empty() {
                continue;
            }
            return self.parse(&text, at).map(Some);
        }
    }

    fn parse(&self, text: &str, at: u64) -> Result<Line, IologError> {
        let mut words = text.split_whitespace();
        let ts_us = if self.version == 3 {
            let w = words.next().unwrap_or("");
            Some(
                w.parse::<u64>()
                    .map_err(|_| self.bad(at, format!("a timestamp in µs, not {w:?}")))?,
            )
        } else {
            None
        };
        let file = words.next().unwrap_or("").to_string();
        let act = words.next().unwrap_or("");
        let action = Action::parse(act).ok_or_else(|| {
            self.bad(
                at,
                format!(
                    "an action (add, open, close, read, write, trim, sync, datasync, wait) \
                     after the file name, not {act:?}"
                ),
            )
        })?;
        let mut num = |what: &str| -> Result<u64, IologError> {
            let w = words.next().unwrap_or("");
            w.parse::<u64>()
                .map_err(|_| self.bad(at, format!("{what} (a number) for {act}, not {w:?}")))
        };
        let (offset, len) = if action.takes_range() {
            (num("an offset")?, num("a length")?)
        } else if action == Action::Wait {
            (num("the microseconds")?, 0)
        } else {
            (0, 0)
        };
        Ok(Line {
            ts_us,
            file,
            action,
            offset,
            len,
        })
    }
}

impl<R: BufRead> Iterator for IologReader<R> {
    type Item = Result<Line, IologError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_line().transpose();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

/// One line into `buf` (its newline included), reading at most
/// `MAX_LINE + 1` bytes of it; the bytes the line had (the rest of a long
/// line is consumed, not kept).
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let avail = input.fill_buf()?;
        if avail.is_empty() {
            return Ok(total);
        }
        let (take, end) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let room = (MAX_LINE + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&avail[..take.min(room)]);
        input.consume(take);
        total += take;
        if end {
            return Ok(total);
        }
    }
}

/// Converts iolog lines into trace events: one thread, files by name.
#[derive(Debug, Default)]
pub struct Importer {
    ids: HashMap<String, u32>,
    pub files: Vec<FileEntry>,
    clock_ns: u64,
    timed: bool,
}

impl Importer {
    /// The event of one line (`None` for `add` and `wait`).
    pub fn event(&mut self, l: &Line) -> Option<Event> {
        if let Some(us) = l.ts_us {
            self.timed = true;
            self.clock_ns = self.clock_ns.max(us.saturating_mul(1000));
        }
        let file = self.id(&l.file);
        let (op, flags) = match l.action {
            Action::Add => return None,
            Action::Wait => {
                self.timed = true;
                self.clock_ns = self.clock_ns.saturating_add(l.offset.saturating_mul(1000));
                return None;
            }
            Action::Open => (Op::Open, 0),
            Action::Close => (Op::Close, 0),
            Action::Read => (Op::Pread, 0),
            Action::Write => (Op::Pwrite, 0),
            // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE: what a trim of a
            // file does.
            Action::Trim => (Op::Fallocate, 3),
            Action::Sync => (Op::Fsync, 0),
            Action::Datasync => (Op::Fdatasync, 0),
        };
        let end = l.offset.saturating_add(l.len);
        let entry = &mut self.files[file as usize];
        if op != Op::Fsync && op != Op::Fdatasync {
            entry.size_bytes = entry.size_bytes.max(end);
        }
        let moves = op == Op::Pread || op == Op::Pwrite;
        Some(Event {
            ts_ns: self.clock_ns,
            dur_ns: 0,
            tid: 1,
            op: Some(op),
            file: Some(file),
            offset: l.offset,
            len: l.len,
            result: if moves { l.len as i64 } else { 0 },
            flags,
        })
    }

    fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.files.len() as u32;
        self.ids.insert(name.to_string(), id);
        self.files.push(FileEntry {
            path: name.to_string(),
            size_bytes: 0,
            kind: FileKind::Regular,
        });
        id
    }

    /// The header of the imported trace.
    pub fn header(self, source: &str) -> Header {
        let mut blind_spots = vec![BlindSpot::MmapFaults];
        if !self.timed {
            blind_spots.push(BlindSpot::Timestamps);
        }
        Header {
            command: vec![format!("fio iolog {source}")],
            backend: "fio-iolog".into(),
            duration_ns: self.clock_ns,
            files: self.files,
            blind_spots,
            ending: Ending::Imported,
            ..Header::default()
        }
    }
}

/// Writes a trace's events as a fio iolog of `version` (2 or 3): every
/// file `add`ed first, opened before its first I/O and closed at the end,
/// so fio's `read_iolog` can replay it. Ops fio has no action for (stat,
/// unlink, rename, mmap, ftruncate) are left out and counted.
#[derive(Debug)]
pub struct Exporter<W: Write> {
    out: W,
    version: u8,
    paths: Vec<String>,
    open: Vec<u32>,
    last_ns: u64,
    /// Events with no iolog action.
    pub left_out: u64,
}

impl<W: Write> Exporter<W> {
    pub fn new(mut out: W, version: u8, files: &[FileEntry]) -> std::io::Result<Self> {
        writeln!(out, "fio version {version} iolog")?;
        let mut e = Exporter {
            out,
            version,
            paths: files.iter().map(|f| f.path.clone()).collect(),
            open: vec![0; files.len()],
            last_ns: 0,
            left_out: 0,
        };
        for i in 0..files.len() {
            e.line(0, i as u32, "add")?;
        }
        Ok(e)
    }

    fn line(&mut self, ts_ns: u64, file: u32, words: &str) -> std::io::Result<()> {
        let path = &self.paths[file as usize];
        if self.version == 3 {
            write!(self.out, "{} ", ts_ns / 1000)?;
        }
        writeln!(self.out, "{path} {words}")
    }

    pub fn event(&mut self, e: &Event) -> std::io::Result<()> {
        let Some(file) = e.file else {
            self.left_out += 1;
            return Ok(());
        };
        let op = e.op();
        let act = match op {
            Op::Open => {
                if self.open[file as usize] == 0 {
                    self.line(e.ts_ns, file, "open")?;
                }
                self.open[file as usize] += 1;
                return Ok(());
            }
            Op::Close => return self.close(e.ts_ns, file),
            _ if op.reads() => "read",
            _ if op.writes() => "write",
            Op::Fsync | Op::SyncFileRange => "sync",
            Op::Fdatasync => "datasync",
            Op::Fallocate if e.flags & 2 != 0 => "trim",
            _ => {
                self.left_out += 1;
                return Ok(());
            }
        };
        if e.result < 0 || (e.len == 0 && act != "sync" && act != "datasync") {
            self.left_out += 1;
            return Ok(());
        }
        if self.open[file as usize] == 0 {
            self.line(e.ts_ns, file, "open")?;
            self.open[file as usize] = 1;
        }
        if self.version == 2 && e.ts_ns > self.last_ns + 100_000 {
            // v2 has no timestamps: the gap as `FILE wait USECS` (fio
            // drops waits under 100 µs).
            let us = (e.ts_ns - self.last_ns) / 1000;
            self.line(0, file, &format!("wait {us} 0"))?;
        }
        self.last_ns = self.last_ns.max(e.ts_ns);
        self.line(e.ts_ns, file, &format!("{act} {} {}", e.offset, e.len))
    }

    fn close(&mut self, ts_ns: u64, file: u32) -> std::io::Result<()> {
        let n = &mut self.open[file as usize];
        if *n == 0 {
            return Ok(());
        }
        *n -= 1;
        if *n == 0 {
            self.line(ts_ns, file, "close")?;
        }
        Ok(())
    }

    /// Closes what is still open; the writer back.
    pub fn finish(mut self, ts_ns: u64) -> std::io::Result<W> {
        for f in 0..self.open.len() {
            if self.open[f] > 0 {
                self.open[f] = 1;
                self.close(ts_ns, f as u32)?;
            }
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(text: &str) -> (Vec<Event>, Header) {
        let r = IologReader::open(text.as_bytes()).unwrap();
        let mut imp = Importer::default();
        let events = r.filter_map(|l| imp.event(&l.unwrap())).collect();
        (events, imp.header("t"))
    }

    #[test]
    fn a_v2_log_with_waits_keeps_its_gaps_both_ways() {
        let (events, header) =
            import("fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f wait 5000 0\n/f write 8192 512\n/f close\n");
        let ops: Vec<Op> = events.iter().map(Event::op).collect();
        assert_eq!(ops, [Op::Open, Op::Pread, Op::Pwrite, Op::Close]);
        assert_eq!(events[2].ts_ns, 5_000_000);
        assert_eq!(header.files[0].size_bytes, 8704);
        let mut ex = Exporter::new(Vec::new(), 2, &header.files).unwrap();
        for e in &events {
            ex.event(e).unwrap();
        }
        let text = String::from_utf8(ex.finish(0).unwrap()).unwrap();
        assert_eq!(
            text,
            "fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f wait 5000 0\n/f write 8192 512\n/f close\n"
        );
    }

    #[test]
    fn an_over_long_line_is_refused_without_keeping_it() {
        let text = format!("fio version 3 iolog\n1 /f {}\n", "x".repeat(MAX_LINE * 4));
        let err = IologReader::open(text.as_bytes())
            .unwrap()
            .find_map(Result::err)
            .unwrap();
        assert!(
            matches!(
                err,
                IologError::Bad {
                    line: 2,
                    offset: 20,
                    ..
                }
            ),
            "{err:?}"
        );
    }
}

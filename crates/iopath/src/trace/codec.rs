//! The trace's bytes (docs/replay.md, "Format"): magic, version, a JSON
//! header with its length, then one record per event, then an end marker
//! with the event count.
//!
//! An event is a one-byte op code and eight LEB128 varints: the time since
//! the previous event (ns), the duration (ns), the thread, the file id plus
//! one (0: none), the offset, the length, the result (zigzag) and the
//! flags. The end marker is op code 0 and the count. A reader holds one
//! event at a time: memory is bounded by the header's size limit.

use std::io::{BufRead, Read, Write};

use super::{Event, Header, Op, MAGIC, VERSION};

/// The largest header a reader accepts (a trace naming about a million
/// files fits).
pub const MAX_HEADER_BYTES: u32 = 256 << 20;

/// Why a trace cannot be read: where, and what was expected there.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(
        "byte {offset}: expected {expected} (a corrupt trace: check the file was copied whole, \
         or record it again)"
    )]
    Corrupt { offset: u64, expected: String },
    #[error(
        "byte {offset}: the file ends where {expected} was expected (truncated trace: check the \
         file was copied whole, or record it again)"
    )]
    Truncated { offset: u64, expected: String },
    /// A well-formed trace beyond what a replay runs (`what` says which
    /// limit, and what to do).
    #[error("byte {offset}: {what}")]
    Limit { offset: u64, what: String },
    #[error(
        "byte 8: trace format version {found}, this iopath reads version {VERSION}: \
         use the iopath that recorded it"
    )]
    Version { found: u16 },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl TraceError {
    /// A mistake in the file (exit 2), not a failure to read it.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, TraceError::Io(_))
    }
}

/// Writes a trace: [`TraceWriter::new`] with the header, each event, then
/// [`TraceWriter::finish`]. The header's `events` must be the number of
/// events written (the recorder writes the header last: it assembles the
/// file from its events once it knows the files).
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    out: W,
    last_ts: u64,
    written: u64,
}

impl<W: Write> TraceWriter<W> {
    pub fn new(mut out: W, header: &Header) -> std::io::Result<Self> {
        let json = serde_json::to_vec(header).map_err(std::io::Error::other)?;
        let len = u32::try_from(json.len())
            .ok()
            .filter(|&n| n <= MAX_HEADER_BYTES)
            .ok_or_else(|| std::io::Error::other("trace header over 256 MiB"))?;
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        out.write_all(&len.to_le_bytes())?;
        out.write_all(&json)?;
        Ok(TraceWriter {
            out,
            last_ts: 0,
            written: 0,
        })
    }

    /// One event; timestamps earlier than the last are written as the
    /// last's (the stream never goes back in time).
    pub fn event(&mut self, e: &Event) -> std::io::Result<()> {
        let mut buf = [0u8; 1 + 8 * 10];
        let n = encode_event(e, self.last_ts, &mut buf);
        self.last_ts = self.last_ts.max(e.ts_ns);
        self.written += 1;
        self.out.write_all(&buf[..n])
    }

    /// The output, for events already encoded (a spool's bytes).
    pub(super) fn raw(&mut self) -> &mut W {
        &mut self.out
    }

    /// Counts events copied in through [`Self::raw`].
    pub(super) fn set_written(&mut self, n: u64) {
        self.written = n;
    }

    /// The end marker; the writer back.
    pub fn finish(mut self) -> std::io::Result<W> {
        let mut buf = [0u8; 11];
        buf[0] = 0;
        let n = 1 + put_varint(self.written, &mut buf[1..]);
        self.out.write_all(&buf[..n])?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// `e` into `buf` (at least 81 bytes) after an event at `last_ts`; its
/// length.
pub fn encode_event(e: &Event, last_ts: u64, buf: &mut [u8]) -> usize {
    buf[0] = e.op().code();
    let mut n = 1;
    let fields = [
        e.ts_ns.saturating_sub(last_ts),
        e.dur_ns,
        u64::from(e.tid),
        e.file.map_or(0, |f| u64::from(f) + 1),
        e.offset,
        e.len,
        zigzag(e.result),
        e.flags,
    ];
    for v in fields {
        n += put_varint(v, &mut buf[n..]);
    }
    n
}

fn put_varint(mut v: u64, buf: &mut [u8]) -> usize {
    let mut i = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            buf[i] = byte;
            return i + 1;
        }
        buf[i] = byte | 0x80;
        i += 1;
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Reads a trace as a stream: the header first ([`TraceReader::open`]),
/// then the events as an iterator. After the first error the iterator
/// ends.
#[derive(Debug)]
pub struct TraceReader<R: BufRead> {
    input: R,
    header: Header,
    offset: u64,
    last_ts: u64,
    read: u64,
    done: bool,
}

const FIELDS: [&str; 8] = [
    "the time since the previous event",
    "the duration",
    "the thread id",
    "the file id",
    "the offset",
    "the length",
    "the result",
    "the flags",
];

impl<R: BufRead> TraceReader<R> {
    /// Reads and checks the magic, the version and the header.
    pub fn open(mut input: R) -> Result<Self, TraceError> {
        let mut magic = [0u8; 8];
        read_exact(&mut input, &mut magic, 0, "the magic bytes \"IOPTRACE\"")?;
        if &magic != MAGIC {
            return Err(TraceError::Corrupt {
                offset: 0,
                expected: "the magic bytes \"IOPTRACE\" (this is not an iopath trace)".into(),
            });
        }
        let mut v = [0u8; 2];
        read_exact(&mut input, &mut v, 8, "the format version")?;
        let found = u16::from_le_bytes(v);
        if found != VERSION {
            return Err(TraceError::Version { found });
        }
        let mut l = [0u8; 4];
        read_exact(&mut input, &mut l, 10, "the header's length")?;
        let len = u32::from_le_bytes(l);
        if len > MAX_HEADER_BYTES {
            return Err(TraceError::Corrupt {
                offset: 10,
                expected: format!("a header length of at most {MAX_HEADER_BYTES} bytes, not {len}"),
            });
        }
        let mut json = Vec::new();
        let got = (&mut input).take(u64::from(len)).read_to_end(&mut json)?;
        if got < len as usize {
            return Err(TraceError::Truncated {
                offset: 14 + got as u64,
                expected: format!("the header's {len} bytes of JSON"),
            });
        }
        let header: Header = serde_json::from_slice(&json).map_err(|e| TraceError::Corrupt {
            offset: 14,
            expected: format!("the header as JSON ({e})"),
        })?;
        Ok(TraceReader {
            input,
            header,
            offset: 14 + u64::from(len),
            last_ts: 0,
            read: 0,
            done: false,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn byte(&mut self, expected: &str) -> Result<u8, TraceError> {
        let mut b = [0u8; 1];
        read_exact(&mut self.input, &mut b, self.offset, expected)?;
        self.offset += 1;
        Ok(b[0])
    }

    fn varint(&mut self, what: &str) -> Result<u64, TraceError> {
        let start = self.offset;
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = self.byte(what)?;
            let bits = u64::from(b & 0x7f);
            if i == 9 && b > 1 {
                break;
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(TraceError::Corrupt {
            offset: start,
            expected: format!("{what} as a varint of at most 64 bits"),
        })
    }

    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        let at = self.offset;
        let code = self.byte("an event or the end marker")?;
        if code == 0 {
            return self.end(at).map(|()| None);
        }
        let op = Op::from_code(code).ok_or_else(|| TraceError::Corrupt {
            offset: at,
            expected: format!("an op code (1-{}) or 0 (end), not {code}", super::OPS.len()),
        })?;
        let mut f = [0u64; 8];
        for (slot, what) in f.iter_mut().zip(FIELDS) {
            *slot = self.varint(what)?;
        }
        let ts_ns = self
            .last_ts
            .checked_add(f[0])
            .ok_or_else(|| TraceError::Corrupt {
                offset: at + 1,
                expected: "a timestamp that fits in 64 bits".into(),
            })?;
        let file = match f[3] {
            0 => None,
            n if n <= self.header.files.len() as u64 => Some((n - 1) as u32),
            n => {
                return Err(TraceError::Corrupt {
                    offset: at,
                    expected: format!(
                        "a file id below {} (the header names {} files), not {}",
                        self.header.files.len(),
                        self.header.files.len(),
                        n - 1
                    ),
                })
            }
        };
        let tid = u32::try_from(f[2]).map_err(|_| TraceError::Corrupt {
            offset: at,
            expected: format!("a thread id that fits in 32 bits, not {}", f[2]),
        })?;
        self.last_ts = ts_ns;
        self.read += 1;
        Ok(Some(Event {
            ts_ns,
            dur_ns: f[1],
            tid,
            op: Some(op),
            file,
            offset: f[4],
            len: f[5],
            result: unzigzag(f[6]),
            flags: f[7],
        }))
    }

    /// The end marker at `at` (its code read): the count must match, and
    /// nothing may follow.
    fn end(&mut self, at: u64) -> Result<(), TraceError> {
        let count = self.varint("the event count of the end marker")?;
        if count != self.read || count != self.header.events {
            return Err(TraceError::Corrupt {
                offset: at,
                expected: format!(
                    "an end marker counting the {} events read (the header says {}), not {count}",
                    self.read, self.header.events
                ),
            });
        }
        let mut extra = [0u8; 1];
        if self.input.read(&mut extra)? != 0 {
            return Err(TraceError::Corrupt {
                offset: self.offset,
                expected: "the end of the file after the end marker".into(),
            });
        }
        Ok(())
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_event() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

fn read_exact<R: Read>(
    input: &mut R,
    buf: &mut [u8],
    offset: u64,
    expected: &str,
) -> Result<(), TraceError> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(TraceError::Truncated {
                    offset: offset + got as u64,
                    expected: expected.to_string(),
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Opens the trace at `path` for reading (buffered).
pub fn open_file(
    path: &std::path::Path,
) -> Result<TraceReader<std::io::BufReader<std::fs::File>>, TraceError> {
    let f = std::fs::File::open(path)?;
    TraceReader::open(std::io::BufReader::with_capacity(1 << 16, f))
}

#[cfg(test)]
mod tests;

use super::*;
use crate::trace::{Ending, FileEntry, FileKind};

fn sample_events() -> Vec<Event> {
    (0..40u64)
        .map(|i| Event {
            ts_ns: i * 1500 + (i % 3),
            dur_ns: 700 + i,
            tid: 100 + (i % 4) as u32,
            op: Some(crate::trace::OPS[(i as usize) % crate::trace::OPS.len()]),
            file: if i % 7 == 0 {
                None
            } else {
                Some((i % 2) as u32)
            },
            offset: i * 4096,
            len: 4096,
            result: if i % 5 == 0 { -5 } else { 4096 },
            flags: i & 3,
        })
        .collect()
}

fn sample_trace() -> (Header, Vec<Event>, Vec<u8>) {
    let events = sample_events();
    let mut header = Header {
        command: vec!["dd".into(), "if=/x".into()],
        backend: "ebpf".into(),
        files: vec![
            FileEntry {
                path: "/x".into(),
                size_bytes: 1 << 20,
                kind: FileKind::Regular,
            },
            FileEntry {
                path: "/y".into(),
                size_bytes: 5,
                kind: FileKind::Missing,
            },
        ],
        ending: Ending::CommandFailed { exit_code: 3 },
        ..Header::default()
    };
    header.events = events.len() as u64;
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for e in &events {
        w.event(e).unwrap();
    }
    (header, events, w.finish().unwrap())
}

#[test]
fn a_trace_reads_back_as_written() {
    let (header, events, bytes) = sample_trace();
    let r = TraceReader::open(&bytes[..]).unwrap();
    assert_eq!(r.header(), &header);
    let back: Vec<Event> = r.map(|e| e.unwrap()).collect();
    assert_eq!(back, events);
    // Compact: 4 KiB ops at 1.5 µs apart take well under 20 bytes each.
    let header_len = 14 + serde_json::to_vec(&header).unwrap().len();
    assert!((bytes.len() - header_len) / events.len() < 20);
}

/// Every strict prefix of a trace is refused (the end marker counts the
/// events), with an offset inside the prefix, and never a panic.
#[test]
fn every_truncation_of_a_trace_is_a_clean_error() {
    let (_, _, bytes) = sample_trace();
    for cut in 0..bytes.len() {
        let prefix = &bytes[..cut];
        let err = match TraceReader::open(prefix) {
            Err(e) => e,
            Ok(r) => match r.filter_map(Result::err).next() {
                Some(e) => e,
                None => panic!(
                    "a trace cut at byte {cut} of {} was read whole",
                    bytes.len()
                ),
            },
        };
        match err {
            TraceError::Truncated { offset, .. } | TraceError::Corrupt { offset, .. } => {
                assert!(offset <= cut as u64, "cut {cut}: offset {offset}")
            }
            other => panic!("cut {cut}: {other:?}"),
        }
    }
}

/// A flipped bit anywhere reads as a clean error naming a byte inside the
/// file, or (a flip in a number) as a trace of the same length.
#[test]
fn every_bit_flip_of_a_trace_is_read_or_refused_cleanly() {
    let (_, events, bytes) = sample_trace();
    for i in 0..bytes.len() {
        for bit in 0..8 {
            let mut b = bytes.clone();
            b[i] ^= 1 << bit;
            let mut n = 0;
            let res = TraceReader::open(&b[..]).and_then(|r| {
                for e in r {
                    e?;
                    n += 1;
                }
                Ok(())
            });
            match res {
                Ok(()) => assert_eq!(n, events.len(), "byte {i} bit {bit}"),
                Err(TraceError::Truncated { offset, .. } | TraceError::Corrupt { offset, .. }) => {
                    assert!(
                        offset <= b.len() as u64,
                        "byte {i} bit {bit}: offset {offset}"
                    )
                }
                Err(TraceError::Version { .. }) => assert!((8..10).contains(&i)),
                Err(e @ (TraceError::Io(_) | TraceError::Limit { .. })) => {
                    panic!("byte {i} bit {bit}: {e}")
                }
            }
        }
    }
}

#[test]
fn an_unknown_version_is_refused_by_number() {
    let (_, _, mut bytes) = sample_trace();
    bytes[8] = 9;
    let err = TraceReader::open(&bytes[..]).unwrap_err();
    assert!(matches!(err, TraceError::Version { found: 9 }), "{err:?}");
    assert!(err.is_bad_input());
}

#[test]
fn bytes_after_the_end_marker_are_refused_at_their_offset() {
    let (_, _, mut bytes) = sample_trace();
    let end = bytes.len() as u64;
    bytes.push(7);
    let err = TraceReader::open(&bytes[..])
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert!(
        matches!(err, TraceError::Corrupt { offset, .. } if offset == end),
        "{err:?}"
    );
}

#[test]
fn a_file_id_past_the_header_is_refused() {
    let header = Header {
        events: 1,
        ..Header::default()
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    w.event(&Event {
        op: Some(Op::Read),
        file: Some(3),
        ..Event::default()
    })
    .unwrap();
    let bytes = w.finish().unwrap();
    let err = TraceReader::open(&bytes[..])
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert!(
        matches!(&err, TraceError::Corrupt { expected, .. } if expected.contains("file id")),
        "{err:?}"
    );
}

/// A truncated or corrupt trace's error names the next step as well as the
/// byte: the file may have been cut in the copy, else it must be recorded
/// again.
#[test]
fn a_bad_trace_error_names_the_next_step() {
    let (_, _, bytes) = sample_trace();
    let cut = TraceReader::open(&bytes[..bytes.len() - 3])
        .and_then(|r| r.filter_map(Result::err).next().map_or(Ok(()), Err))
        .unwrap_err();
    let mut flipped = bytes.clone();
    flipped[0] ^= 1;
    let corrupt = TraceReader::open(&flipped[..]).unwrap_err();
    for e in [cut, corrupt] {
        assert!(
            matches!(e, TraceError::Truncated { .. } | TraceError::Corrupt { .. }),
            "{e:?}"
        );
        let words = e.to_string();
        assert!(words.contains("copied whole"), "{words}");
        assert!(words.contains("record it again"), "{words}");
    }
}

//! Unit tests of the copy module: method names, errors, the checks made
//! before anything is created, buffer sizes.

use std::path::PathBuf;

use super::job::Job;
use super::{copy, CopyMethod, CopySpec, MAX_CHUNK};
use crate::{EngineError, SyncPolicy};

#[test]
fn names_round_trip_and_are_distinct() {
    for m in CopyMethod::ALL {
        assert_eq!(CopyMethod::from_name(m.name()), Some(m));
        assert_eq!(m.to_string(), m.name());
        assert!(!m.summary().is_empty());
    }
    assert_eq!(CopyMethod::from_name("nope"), None);
    let mut names: Vec<_> = CopyMethod::ALL.iter().map(|m| m.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CopyMethod::ALL.len());
    assert!(CopyMethod::Uring.is_direct() && CopyMethod::Uring.engine_method().is_direct());
    assert!(!CopyMethod::Sendfile.is_direct());
}

#[test]
fn unsupported_names_the_copy_method() {
    let e = CopyMethod::CopyFileRange.unsupported("why".into());
    let s = e.to_string();
    assert!(s.contains("copy method copy-file-range: why"), "{s}");
}

#[test]
fn chunk_and_depth_are_checked_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("s");
    std::fs::write(&src, [1u8; 10]).unwrap();
    let dst = dir.path().join("d");
    for (chunk, depth) in [(0, 1), (MAX_CHUNK + 1, 1), (4096, 0)] {
        let spec = CopySpec {
            src: src.clone(),
            dst: dst.clone(),
            len: 10,
            chunk,
            depth,
            sync: SyncPolicy::None,
        };
        let r = copy(CopyMethod::ReadWrite, &spec, &mut |_, _| true);
        assert!(matches!(r, Err(EngineError::Invalid(_))), "{r:?}");
        assert!(!dst.exists());
    }
}

#[test]
fn buffers_shrink_to_short_copies() {
    let spec = CopySpec {
        src: PathBuf::from("s"),
        dst: PathBuf::from("d"),
        len: 5000,
        chunk: 1 << 20,
        depth: 1,
        sync: SyncPolicy::None,
    };
    let f = tempfile::tempfile().unwrap();
    let mut cb = |_: u64, _: u64| true;
    let job = Job {
        method: CopyMethod::ReadWrite,
        spec: &spec,
        src: &f,
        on_chunk: &mut cb,
        notes: Vec::new(),
        chunks: 0,
    };
    assert_eq!(job.buf_len(1), 5000);
    assert_eq!(job.buf_len(4096), 8192);
}

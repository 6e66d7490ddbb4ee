//! The copy operation: every copy method under every sync policy makes a
//! byte-identical destination and reports chunks that add up; an existing
//! destination is refused and left untouched; a failing copy leaves no
//! destination behind; O_DIRECT methods on tmpfs work or say they cannot.
//! No timing assertions.
//!
//! Files live under the target directory (a real disk, not a tmpfs /tmp).
//! The tmpfs checks run in `$IOPATH_TEST_TMPFS` when it names a directory,
//! else in a writable tmpfs mounted outside /dev, /proc and /sys; with
//! neither they are skipped (said on stderr).

use std::path::{Path, PathBuf};

use iopath_io::copy::{copy, CopyMethod, CopyOut, CopySpec};
use iopath_io::data::Rng;
use iopath_io::{EngineError, SyncPolicy};
use tempfile::TempDir;

const CHUNK: usize = 16 << 10;

const POLICIES: [SyncPolicy; 5] = [
    SyncPolicy::None,
    SyncPolicy::End,
    SyncPolicy::Dsync,
    SyncPolicy::Osync,
    SyncPolicy::Each,
];

fn disk_dir() -> TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

fn random(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0; len];
    Rng::new(seed).fill(&mut v);
    v
}

/// Compare bytes, naming the first difference instead of dumping buffers.
fn same(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!("{what}: first difference at byte {i}");
    }
}

fn spec(
    src: &Path,
    dst: &Path,
    len: u64,
    chunk: usize,
    depth: usize,
    sync: SyncPolicy,
) -> CopySpec {
    CopySpec {
        src: src.to_path_buf(),
        dst: dst.to_path_buf(),
        len,
        chunk,
        depth,
        sync,
    }
}

/// Run a copy, checking what `on_chunk` saw against the result.
fn run(m: CopyMethod, s: &CopySpec) -> Result<CopyOut, EngineError> {
    let (mut calls, mut sum) = (0u64, 0u64);
    let mut cb = |bytes: u64, _ns: u64| {
        assert!(bytes > 0, "{m}: empty chunk");
        assert!(bytes <= s.chunk as u64, "{m}: chunk of {bytes} bytes");
        calls += 1;
        sum += bytes;
        true
    };
    let out = copy(m, s, &mut cb)?;
    assert_eq!(sum, s.len, "{m}: on_chunk bytes add up to len");
    assert_eq!(out.bytes, s.len, "{m}: bytes");
    assert_eq!(out.chunks, calls, "{m}: chunks = on_chunk calls");
    if s.len == 0 {
        assert_eq!(calls, 0, "{m}: no chunk for an empty copy");
    }
    Ok(out)
}

/// Copy `data[..len]` from a file holding `data` and check the destination.
/// `false` (reason on stderr) when the method is unsupported here.
#[allow(clippy::too_many_arguments)]
fn check_copy(
    dir: &Path,
    m: CopyMethod,
    data: &[u8],
    len: usize,
    chunk: usize,
    depth: usize,
    sync: SyncPolicy,
) -> bool {
    let src = dir.join(format!("src-{m}-{}-{len}", sync.name()));
    let dst = dir.join(format!("dst-{m}-{}-{len}", sync.name()));
    std::fs::write(&src, data).unwrap();
    let s = spec(&src, &dst, len as u64, chunk, depth, sync);
    let what = format!(
        "{m} sync={} len={len} chunk={chunk} depth={depth}",
        sync.name()
    );
    let out = match run(m, &s) {
        Ok(out) => out,
        Err(EngineError::Unsupported { reason, .. }) => {
            // Only O_DIRECT can be refused by a disk file system (tmpfs
            // is tested elsewhere); the buffered copies always work here.
            assert!(m.is_direct(), "{what}: {reason}");
            eprintln!("skipped {what}: {reason}");
            assert!(!dst.exists(), "{what}: unsupported left a destination");
            return false;
        }
        Err(e) => panic!("{what}: {e}"),
    };
    same(&std::fs::read(&dst).unwrap(), &data[..len], &what);
    if !out.notes.is_empty() {
        eprintln!("{what}: {:?}", out.notes);
    }
    let tail = m.is_direct() && len % 4096 != 0 && len >= 1;
    if tail {
        assert!(
            out.notes.iter().any(|n| n.contains("page cache")),
            "{what}: the buffered tail is not said: {:?}",
            out.notes
        );
    }
    if !m.is_direct() || !tail {
        // Without a buffered tail, chunks are exactly ceil(len / chunk).
        assert_eq!(out.chunks, (len as u64).div_ceil(chunk as u64), "{what}");
    }
    std::fs::remove_file(&dst).unwrap();
    std::fs::remove_file(&src).unwrap();
    true
}

#[test]
fn every_method_and_policy_copies_byte_for_byte() {
    let dir = disk_dir();
    let data = random(7, 4 * CHUNK + 5000);
    // Several whole chunks; an odd size (not a multiple of the chunk nor of
    // any O_DIRECT alignment); a prefix of a longer file; one byte; nothing.
    let sizes = [4 * CHUNK, 2 * CHUNK + 1234, 3 * CHUNK, 1, 0];
    for m in CopyMethod::ALL {
        for sync in POLICIES {
            for len in sizes {
                let file = if len == 3 * CHUNK {
                    &data[..]
                } else {
                    &data[..len]
                };
                if !check_copy(dir.path(), m, file, len, CHUNK, 4, sync) {
                    break;
                }
            }
        }
    }
}

#[test]
fn deep_pipelines_and_small_chunks() {
    let dir = disk_dir();
    let data = random(11, (1 << 20) + 3 * 4096 + 77);
    for m in CopyMethod::ALL {
        for (chunk, depth) in [
            (4096, 1),
            (4096, 64),
            (64 << 10, 8),
            (1 << 20, 32),
            (8 << 20, 2),
        ] {
            check_copy(
                dir.path(),
                m,
                &data,
                data.len(),
                chunk,
                depth,
                SyncPolicy::None,
            );
        }
    }
}

#[test]
fn sync_methods_say_they_ran_at_depth_one() {
    let dir = disk_dir();
    let src = dir.path().join("src");
    std::fs::write(&src, random(3, 3 * CHUNK)).unwrap();
    for m in CopyMethod::ALL {
        let dst = dir.path().join(format!("dst-{m}"));
        let s = spec(&src, &dst, 3 * CHUNK as u64, CHUNK, 8, SyncPolicy::None);
        match run(m, &s) {
            Ok(out) => {
                let said = out.notes.iter().any(|n| n.contains("ran at 1"));
                assert_eq!(said, m != CopyMethod::Uring, "{m}: {:?}", out.notes);
                std::fs::remove_file(&dst).unwrap();
            }
            Err(EngineError::Unsupported { reason, .. }) => eprintln!("skipped {m}: {reason}"),
            Err(e) => panic!("{m}: {e}"),
        }
    }
}

#[test]
fn uring_depth_beyond_the_most_is_capped_and_said() {
    let dir = disk_dir();
    let src = dir.path().join("src");
    let data = random(23, 8 * CHUNK);
    std::fs::write(&src, &data).unwrap();
    let dst = dir.path().join("dst");
    let s = spec(
        &src,
        &dst,
        data.len() as u64,
        CHUNK,
        100_000,
        SyncPolicy::None,
    );
    match run(CopyMethod::Uring, &s) {
        Ok(out) => {
            same(&std::fs::read(&dst).unwrap(), &data, "uring depth 100000");
            assert!(
                out.notes.iter().any(|n| n.contains("ran at 4096")),
                "{:?}",
                out.notes
            );
        }
        Err(EngineError::Unsupported { reason, .. }) => eprintln!("skipped uring: {reason}"),
        Err(e) => panic!("uring: {e}"),
    }
}

#[test]
fn an_existing_destination_is_refused_and_left_untouched() {
    let dir = disk_dir();
    let src = dir.path().join("src");
    std::fs::write(&src, random(5, 2 * CHUNK + 100)).unwrap();
    let dst = dir.path().join("existing");
    let keep = b"someone else's file".to_vec();
    std::fs::write(&dst, &keep).unwrap();
    for m in CopyMethod::ALL {
        for sync in [SyncPolicy::None, SyncPolicy::Each] {
            let s = spec(&src, &dst, 2 * CHUNK as u64 + 100, CHUNK, 4, sync);
            match run(m, &s) {
                Ok(_) => panic!("{m}: copied over an existing file"),
                Err(EngineError::Unsupported { reason, .. }) => {
                    eprintln!("skipped {m}: {reason}")
                }
                Err(e) => {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("existing"),
                        "{m}: error does not name it: {msg}"
                    );
                    assert!(msg.contains("already exists"), "{m}: {msg}");
                }
            }
            assert_eq!(
                std::fs::read(&dst).unwrap(),
                keep,
                "{m}: existing file changed"
            );
        }
    }
}

#[test]
fn a_source_shorter_than_len_fails_and_leaves_no_destination() {
    let dir = disk_dir();
    let src = dir.path().join("short");
    std::fs::write(&src, random(9, 10_000)).unwrap();
    for m in CopyMethod::ALL {
        let dst = dir.path().join(format!("dst-{m}"));
        let s = spec(&src, &dst, 3 * CHUNK as u64, CHUNK, 4, SyncPolicy::End);
        match run(m, &s) {
            Ok(_) => panic!("{m}: copied more than the source holds"),
            Err(EngineError::Unsupported { reason, .. }) => eprintln!("skipped {m}: {reason}"),
            Err(e) => assert!(e.to_string().contains("fewer than"), "{m}: {e}"),
        }
        assert!(!dst.exists(), "{m}: a failed copy left {}", dst.display());
    }
}

#[test]
fn a_copy_failing_midway_removes_its_destination() {
    // A directory as the source: it has a size, so the copy starts and
    // creates the destination, then reading fails (EISDIR, ENODEV, EINVAL).
    let dir = disk_dir();
    let src = dir.path().join("a-directory");
    std::fs::create_dir(&src).unwrap();
    let len = std::fs::metadata(&src).unwrap().len().min(100);
    if len == 0 {
        eprintln!("skipped: directories have no size on this file system");
        return;
    }
    for m in CopyMethod::ALL {
        let dst = dir.path().join(format!("dst-{m}"));
        let s = spec(&src, &dst, len, 4096, 2, SyncPolicy::None);
        let r = run(m, &s);
        assert!(r.is_err(), "{m}: copied a directory");
        assert!(!dst.exists(), "{m}: a failed copy left {}", dst.display());
    }
}

#[test]
fn a_misaligned_direct_chunk_is_refused_and_cleaned_up() {
    let dir = disk_dir();
    let src = dir.path().join("src");
    std::fs::write(&src, random(13, 3000 * 4)).unwrap();
    for m in CopyMethod::ALL.into_iter().filter(|m| m.is_direct()) {
        let dst = dir.path().join(format!("dst-{m}"));
        let s = spec(&src, &dst, 3000 * 4, 3000, 2, SyncPolicy::None);
        match run(m, &s) {
            Ok(_) => panic!("{m}: a 3000-byte O_DIRECT chunk was accepted"),
            Err(EngineError::Invalid(why)) => assert!(why.contains("multiple of"), "{m}: {why}"),
            Err(EngineError::Unsupported { reason, .. }) => eprintln!("skipped {m}: {reason}"),
            Err(e) => panic!("{m}: {e}"),
        }
        assert!(!dst.exists(), "{m}: a refused copy left {}", dst.display());
    }
}

/// A writable tmpfs directory, if this machine has one we may use.
fn tmpfs_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("IOPATH_TEST_TMPFS") {
        let d = PathBuf::from(d);
        return d.is_dir().then_some(d);
    }
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (dir, fs, opts) = (f.get(1)?, f.get(2)?, f.get(3)?);
        let ours = *fs == "tmpfs"
            && opts.split(',').any(|o| o == "rw")
            && !["/dev", "/proc", "/sys"]
                .iter()
                .any(|p| dir == p || dir.starts_with(&format!("{p}/")));
        let d = PathBuf::from(dir.replace("\\040", " "));
        (ours && tempfile::tempdir_in(&d).is_ok()).then_some(d)
    })
}

#[test]
fn on_tmpfs_direct_methods_work_or_are_unsupported() {
    let Some(tmpfs) = tmpfs_dir() else {
        eprintln!("skipped: no writable tmpfs outside /dev (set IOPATH_TEST_TMPFS to one)");
        return;
    };
    let dir = tempfile::tempdir_in(&tmpfs).expect("temp dir in tmpfs");
    let data = random(17, 3 * CHUNK + 999);
    for m in CopyMethod::ALL {
        for sync in [SyncPolicy::None, SyncPolicy::End] {
            // check_copy fails the test on any error but Unsupported.
            let ran = check_copy(dir.path(), m, &data, data.len(), CHUNK, 4, sync);
            eprintln!(
                "tmpfs {m} sync={}: {}",
                sync.name(),
                if ran { "ran" } else { "unsupported" }
            );
        }
    }
}

#[test]
fn across_file_systems_every_method_works_or_is_unsupported() {
    let Some(tmpfs) = tmpfs_dir() else {
        eprintln!("skipped: no writable tmpfs outside /dev (set IOPATH_TEST_TMPFS to one)");
        return;
    };
    let disk = disk_dir();
    let far = tempfile::tempdir_in(&tmpfs).expect("temp dir in tmpfs");
    let data = random(19, 2 * CHUNK + 321);
    let src = disk.path().join("src");
    std::fs::write(&src, &data).unwrap();
    for m in CopyMethod::ALL {
        let dst = far.path().join(format!("dst-{m}"));
        let s = spec(&src, &dst, data.len() as u64, CHUNK, 4, SyncPolicy::End);
        match run(m, &s) {
            Ok(_) => {
                same(
                    &std::fs::read(&dst).unwrap(),
                    &data,
                    &format!("{m} disk→tmpfs"),
                );
                std::fs::remove_file(&dst).unwrap();
            }
            Err(EngineError::Unsupported { reason, .. }) => {
                eprintln!("disk→tmpfs {m}: unsupported: {reason}");
                assert!(!dst.exists(), "{m}: unsupported left a destination");
            }
            Err(e) => panic!("{m} disk→tmpfs: {e}"),
        }
    }
}

/// A caller that says stop after the first chunk ends every method's copy
/// with the STOPPED error, waits for what is in flight, and leaves no
/// destination.
#[test]
fn a_copy_stops_when_the_caller_says_so_and_leaves_nothing() {
    let dir = disk_dir();
    let data = random(7, 8 * CHUNK);
    let src = dir.path().join("src.dat");
    std::fs::write(&src, &data).unwrap();
    for m in CopyMethod::ALL {
        let dst = dir.path().join(format!("dst-{m}.dat"));
        let spec = spec(&src, &dst, data.len() as u64, CHUNK, 4, SyncPolicy::End);
        let mut calls = 0;
        let mut stop_after_one = |_: u64, _: u64| {
            calls += 1;
            false
        };
        match copy(m, &spec, &mut stop_after_one) {
            Err(EngineError::Invalid(why)) => assert_eq!(why, iopath_io::copy::STOPPED, "{m}"),
            Err(EngineError::Unsupported { .. }) => continue,
            other => panic!("{m}: {other:?}"),
        }
        assert_eq!(calls, 1, "{m}: no chunk reported after the stop");
        assert!(!dst.exists(), "{m}: destination left behind");
    }
}

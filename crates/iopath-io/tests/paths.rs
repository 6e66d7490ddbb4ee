//! The newer paths: uncached buffered I/O (`dontcache`, `uring-dontcache`),
//! where the kernel refuses it and what the probe says then; access hints
//! (`open_with` and [`MethodOptions::hint`]): applied where they mean
//! something, refused with the reason where they do not; the thread pool's
//! size.

use std::path::{Path, PathBuf};
use std::process::Command;

use iopath_io::engines::mmap::parse_mapping_note;
use iopath_io::{open_with, probe_method, EngineError, Hint, Method, MethodOptions};
use iopath_io::{OpenSpec, SyncPolicy};

const LEN: usize = 1 << 20;

/// Held by the tests that start pool threads, so that one counting them
/// sees only its own.
static POOLS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn file_in(dir: &Path) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new_in(dir).expect("temp file");
    std::fs::write(f.path(), vec![7u8; LEN]).expect("prefill");
    f
}

fn spec(path: &Path, write: bool) -> OpenSpec {
    OpenSpec {
        path: path.to_path_buf(),
        write,
        block_size: 4096,
        queue_depth: 4,
        sync: SyncPolicy::None,
        span_bytes: LEN as u64,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    }
}

fn kernel_has_dontcache() -> bool {
    let rel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut it = rel
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().unwrap_or(0));
    matches!((it.next(), it.next()), (Some(a), Some(b)) if (a, b) >= (6, 14))
}

/// tmpfs has no `FOP_DONTCACHE`: every RWF_DONTCACHE call fails with
/// EOPNOTSUPP, and the probe says which file system and what to do.
#[test]
fn dontcache_is_refused_on_tmpfs_with_the_reason() {
    let shm = Path::new("/dev/shm");
    if iopath_io::sys::fs_type_of(shm).ok() != Some("tmpfs") {
        eprintln!("skipped: /dev/shm is not tmpfs here");
        return;
    }
    let f = file_in(shm);
    for m in [Method::Dontcache, Method::UringDontcache] {
        let st = probe_method(m, f.path(), 4096);
        let Some(why) = st.unusable.clone() else {
            panic!("{m} usable on tmpfs: {st:?} (did tmpfs gain FOP_DONTCACHE? update docs/methods.md)");
        };
        if let Some(uring_refused) = why.strip_prefix("io_uring_setup") {
            eprintln!("skipped {m}: io_uring unavailable: {uring_refused}");
            continue;
        }
        assert!(why.contains("EOPNOTSUPP"), "{m}: {why}");
        if kernel_has_dontcache() {
            assert!(why.contains("(tmpfs)"), "{m}: {why}");
        } else {
            assert!(why.contains("needs Linux 6.14"), "{m}: {why}");
        }
        assert!(why.contains("ext4 or xfs"), "{m}: says what to do: {why}");
    }
}

/// On the file system the tests build on (ext4 on this machine) the
/// methods work from Linux 6.14: a probe read succeeds.
#[test]
fn dontcache_works_where_the_file_system_supports_it() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let fs = iopath_io::sys::fs_type_of(&dir).unwrap_or("unknown");
    if !kernel_has_dontcache() || !matches!(fs, "ext4" | "xfs") {
        eprintln!("skipped: needs Linux 6.14+ and ext4/xfs; here {fs}");
        return;
    }
    let f = file_in(&dir);
    let st = probe_method(Method::Dontcache, f.path(), 4096);
    assert!(st.usable(), "{st:?}");
}

/// A block device node (a loop device over a file in /dev/shm): Linux 6.18
/// has no RWF_DONTCACHE for block devices (docs/methods.md says so), and the
/// probe's real read finds out. Skipped, with the reason, where losetup is
/// refused (no loop devices, not root).
#[test]
fn dontcache_on_a_block_device_node_is_refused() {
    if !kernel_has_dontcache() {
        eprintln!("skipped: kernel before 6.14");
        return;
    }
    let backing = match tempfile::NamedTempFile::new_in("/dev/shm") {
        Ok(f) => f,
        Err(e) => {
            eprintln!("skipped: no file in /dev/shm: {e}");
            return;
        }
    };
    backing.as_file().set_len(LEN as u64).unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(backing.path())
        .output();
    let dev = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => {
            eprintln!(
                "skipped: losetup refused: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            eprintln!("skipped: no losetup: {e}");
            return;
        }
    };
    let st = probe_method(Method::Dontcache, Path::new(&dev), 4096);
    let _ = Command::new("losetup").args(["-d", &dev]).output();
    let Some(why) = st.unusable else {
        panic!("dontcache usable on block device {dev}: did block devices gain FOP_DONTCACHE? update docs/methods.md");
    };
    assert!(why.contains("EOPNOTSUPP"), "{why}");
}

/// A loop-mounted btrfs: Linux 6.18 has no RWF_DONTCACHE for it (checked
/// on this machine), and the probe names the file system. Skipped, with
/// the reason, where mkfs.btrfs, losetup or mount is refused.
#[test]
fn dontcache_on_a_loop_mounted_btrfs_says_why() {
    if !kernel_has_dontcache() {
        eprintln!("skipped: kernel before 6.14");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let img = dir.path().join("btrfs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(160 << 20)
        .unwrap();
    let run = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .output()
            .map_err(|e| e.to_string())
            .and_then(|o| {
                if o.status.success() {
                    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
                } else {
                    Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
                }
            })
    };
    let img_s = img.to_str().unwrap();
    if let Err(e) = run(&["mkfs.btrfs", "-q", img_s]) {
        eprintln!("skipped: mkfs.btrfs failed: {e}");
        return;
    }
    let dev = match run(&["losetup", "-f", "--show", img_s]) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("skipped: losetup failed: {e}");
            return;
        }
    };
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mnt_s = mnt.to_str().unwrap().to_string();
    let outcome = match run(&["mount", &dev, &mnt_s]) {
        Err(e) => Err(format!("mount failed: {e}")),
        Ok(_) => {
            let st = {
                let f = file_in(&mnt);
                probe_method(Method::Dontcache, f.path(), 4096)
            };
            let _ = run(&["umount", &mnt_s]);
            Ok(st)
        }
    };
    let _ = run(&["losetup", "-d", &dev]);
    match outcome {
        Err(e) => eprintln!("skipped: {e}"),
        Ok(st) => match st.unusable {
            // A later kernel may support it: then the method simply works.
            None => eprintln!("note: btrfs accepts RWF_DONTCACHE on this kernel"),
            Some(why) => {
                assert!(
                    why.contains("(btrfs)") && why.contains("EOPNOTSUPP"),
                    "{why}"
                )
            }
        },
    }
}

fn with_hint(m: Method, hint: Hint, path: &Path, write: bool) -> Result<(), EngineError> {
    let opts = MethodOptions {
        hint: Some(hint),
        pool_threads: None,
    };
    open_with(m, &spec(path, write), &opts).map(drop)
}

/// Page-cache hints on O_DIRECT methods, mapping hints on read/write
/// methods and fadvise-only hints on a mapping are refused, each with why.
#[test]
fn a_meaningless_hint_is_refused_with_the_reason() {
    let f = file_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    for (m, h, says) in [
        (Method::Direct, Hint::Random, "O_DIRECT"),
        (Method::Uring, Hint::Willneed, "O_DIRECT"),
        (Method::Buffered, Hint::Populate, "mmap+populate"),
        (Method::Threadpool, Hint::Hugepage, "mmap+hugepage"),
        (Method::Mmap, Hint::Noreuse, "buffered+noreuse"),
        (Method::Null, Hint::Random, "takes no access hint"),
    ] {
        match with_hint(m, h, f.path(), false) {
            Err(EngineError::Unsupported { method, reason }) => {
                assert_eq!(method, m);
                assert!(reason.contains(says), "{m}+{h}: {reason}");
            }
            other => panic!("{m}+{h}: {other:?}"),
        }
    }
}

/// Every hint a method takes is accepted by the kernel here.
#[test]
fn every_meaningful_hint_applies() {
    let _pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    let f = file_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    for m in [
        Method::Buffered,
        Method::Dontcache,
        Method::UringBuffered,
        Method::Threadpool,
        Method::Mmap,
    ] {
        for h in Hint::ALL {
            if h.call_for(m).is_err() {
                continue;
            }
            match with_hint(m, h, f.path(), true) {
                Ok(()) => {}
                Err(EngineError::Unsupported { reason, .. })
                    if reason.starts_with("io_uring_setup") =>
                {
                    eprintln!("skipped {m}: {reason}")
                }
                Err(EngineError::Unsupported { reason, .. }) if h == Hint::Hugepage => {
                    eprintln!("skipped {m}+{h}: {reason}")
                }
                Err(e) => panic!("{m}+{h}: {e}"),
            }
        }
    }
}

/// `mmap+random` and `mmap+sequential` reach the mapping: the kernel
/// shows `rr` / `sr` in the mapping's VmFlags (/proc/self/smaps).
#[test]
fn mmap_hints_reach_the_mapping() {
    let f = file_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    for (h, flag) in [(Hint::Random, "rr"), (Hint::Sequential, "sr")] {
        let opts = MethodOptions {
            hint: Some(h),
            pool_threads: None,
        };
        let eng = open_with(Method::Mmap, &spec(f.path(), false), &opts).unwrap();
        let m = eng
            .caps()
            .notes
            .iter()
            .find_map(|n| parse_mapping_note(n))
            .expect("mmap notes its mapping");
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let head = format!("{:x}-", m.start);
        let block: Vec<&str> = smaps
            .split_inclusive('\n')
            .skip_while(|l| !l.starts_with(&head))
            .take_while(|l| !l.starts_with("VmFlags:"))
            .collect();
        assert!(!block.is_empty(), "mapping {head} not in smaps");
        let flags = smaps
            .lines()
            .skip_while(|l| !l.starts_with(&head))
            .find(|l| l.starts_with("VmFlags:"))
            .unwrap()
            .to_string();
        assert!(flags.split_whitespace().any(|w| w == flag), "{h}: {flags}");
    }
}

/// `--pool-threads N` starts N pool threads, and dropping the engine stops
/// them.
#[test]
fn the_pool_has_the_threads_asked_for() {
    let _pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    let f = file_in(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let count = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|c| c.starts_with("iopath-pool-"))
            .count()
    };
    let opts = MethodOptions {
        hint: None,
        pool_threads: Some(3),
    };
    let eng = open_with(Method::Threadpool, &spec(f.path(), false), &opts).unwrap();
    // A new thread names itself once it starts running: wait for that.
    let started = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        count() >= 3
    });
    assert!(started, "fewer than 3 pool threads named themselves");
    assert_eq!(count(), 3);
    drop(eng);
    assert_eq!(count(), 0);
}

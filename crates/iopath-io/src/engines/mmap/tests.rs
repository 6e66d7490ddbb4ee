//! Unit tests of the mmap engines: mapping notes, cache-line write-back,
//! round trips, truncation under a mapping (SIGBUS), workers sharing a
//! file, and SIGBUS that is not the engines'.

use super::*;

#[test]
fn mapping_note_round_trips() {
    let m = MappingInfo::new(7, 0x7f3a_2c00_0000, 100 << 20);
    let note = m.to_string();
    assert_eq!(
        note,
        "mapping: fd 7, length 0x6400000 (100 MiB), start 0x7f3a2c000000, last byte 0x7f3a323fffff"
    );
    assert_eq!(parse_mapping_note(&note), Some(m));
    let odd = MappingInfo::new(3, 0x1000, 10_000);
    assert!(odd.to_string().contains("(9.8 KiB)"), "{odd}");
    assert_eq!(parse_mapping_note(&odd.to_string()), Some(odd));
}

#[test]
fn other_notes_do_not_parse() {
    for s in [
        "",
        "mmap is synchronous: queue depth 8 requested, ran at 1",
        "mapping: fd 7, length 0x10 (16 B), start 0x1000, last byte 0x1010",
        "mapping: fd -1, length 0x10 (16 B), start 0x1000, last byte 0x100f",
        "mapping: fd 7, length 0x0 (0 B), start 0x1000, last byte 0xfff",
        "mapping: fd 7, length 0xzz (16 B), start 0x1000, last byte 0x100f",
    ] {
        assert_eq!(parse_mapping_note(s), None, "{s}");
    }
}

#[test]
fn sizes_read_like_sizes() {
    assert_eq!(crate::engines::human_bytes(512), "512 B");
    assert_eq!(crate::engines::human_bytes(4096), "4 KiB");
    assert_eq!(crate::engines::human_bytes(1 << 30), "1 GiB");
    assert_eq!(crate::engines::human_bytes(3 << 29), "1.5 GiB");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn cache_line_writeback_runs_here() {
    let wb = dax::Writeback::detect().expect("x86_64 has clflush");
    assert!(wb.line.is_power_of_two(), "{wb:?}");
    let v = vec![1u8; 3 * 4096];
    // Unaligned start and length: the lines around them are in v's pages.
    let p = v.as_ptr();
    let base = (p as usize).next_multiple_of(4096) as *const u8;
    // SAFETY: [base + 5, base + 5 + 4000) is inside v, and the lines
    // around it are inside base's page, which is inside v.
    unsafe { wb.range(base.add(5), 4000) };
    // clflush is baseline x86_64: its path runs on every CPU.
    let clflush = dax::Writeback {
        insn: dax::Insn::Clflush,
        ..wb
    };
    // SAFETY: as above.
    unsafe { clflush.range(base.add(4096), 64) };
    assert!(v.iter().all(|&b| b == 1));
}

/// mmap-dax's engine, mapped without MAP_SYNC (no DAX here): every
/// sync policy writes what std::fs reads back, `end` writes back the
/// dirty range, and reads see the file.
#[cfg(target_arch = "x86_64")]
#[test]
fn dax_engine_round_trips_without_map_sync() {
    use crate::engines::SyncIo;
    const BS: usize = 4096;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.dat");
    std::fs::write(&path, vec![0u8; 12 * BS]).unwrap();
    let spec = |write, sync| OpenSpec {
        path: path.clone(),
        write,
        block_size: BS,
        queue_depth: 4,
        sync,
        span_bytes: 1 << 20,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    };
    let policies = [
        SyncPolicy::None,
        SyncPolicy::End,
        SyncPolicy::Dsync,
        SyncPolicy::Each,
        SyncPolicy::Osync,
    ];
    let mut want = vec![0u8; 12 * BS];
    for (i, policy) in policies.into_iter().enumerate() {
        let mut eng = MmapEngine::open_as(Method::MmapDax, &spec(true, policy), false).unwrap();
        let notes = eng.caps.notes.join("; ");
        let m = eng.caps.notes.iter().find_map(|n| parse_mapping_note(n));
        assert_eq!(m.map(|m| m.len), Some(12 * BS as u64), "{notes}");
        assert!(notes.contains("mmap-dax maps") && notes.contains("mmap-dax is synchronous"));
        assert!(notes.contains("sfence"), "{notes}");
        // Two writes, the second unaligned and short.
        for (k, (off, len)) in [(2 * i * BS, BS), ((2 * i + 1) * BS + 7, 100)]
            .into_iter()
            .enumerate()
        {
            let byte = (10 * i + k + 1) as u8;
            eng.pool.get_mut(0).unwrap().fill(byte);
            let r = IoReq {
                op: Op::Write,
                offset: off as u64,
                len: len as u32,
                slot: 0,
            };
            assert_eq!(eng.one(&r).unwrap(), Ok(len as u32));
            want[off..off + len].fill(byte);
        }
        let each = !matches!(policy, SyncPolicy::None | SyncPolicy::End);
        let dirty = Some((2 * i * BS, (2 * i + 1) * BS + 107));
        assert_eq!(eng.dirty, if each { None } else { dirty }, "{policy:?}");
        eng.flush_end(crate::SyncCall::Fsync).unwrap();
        assert_eq!(eng.dirty, None);
        drop(eng);
        assert!(std::fs::read(&path).unwrap() == want, "{policy:?}");
    }
    // Read back, including across the end of the mapping.
    let mut eng =
        MmapEngine::open_as(Method::MmapDax, &spec(false, SyncPolicy::None), false).unwrap();
    for off in [0, 3 * BS + 1, 11 * BS + 100] {
        let r = IoReq {
            op: Op::Read,
            offset: off as u64,
            len: BS as u32,
            slot: 0,
        };
        let n = (12 * BS - off).min(BS);
        assert_eq!(eng.one(&r).unwrap(), Ok(n as u32));
        assert!(
            eng.pool.get_mut(0).unwrap()[..n] == want[off..off + n],
            "at {off}"
        );
    }
    // A read-only mapping refuses writes with EBADF.
    let w = IoReq {
        op: Op::Write,
        offset: 0,
        len: 1,
        slot: 0,
    };
    assert_eq!(eng.one(&w).unwrap(), Err(libc::EBADF));
}

/// A file of `pages` pages, page `i` filled with `i + 1`, and a spec
/// for it.
fn paged_file(dir: &Path, pages: usize, write: bool) -> OpenSpec {
    const PS: usize = 4096;
    let path = dir.join("m.dat");
    let data: Vec<u8> = (0..pages * PS).map(|i| (i / PS + 1) as u8).collect();
    std::fs::write(&path, data).unwrap();
    OpenSpec {
        path,
        write,
        block_size: PS,
        queue_depth: 1,
        sync: SyncPolicy::None,
        span_bytes: (pages * PS) as u64,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    }
}

fn req(op: Op, offset: u64) -> IoReq {
    IoReq {
        op,
        offset,
        len: 4096,
        slot: 0,
    }
}

fn truncate(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// The file truncated under a read mapping: the read of a page past the
/// new end fails with an error naming the file, the offset and the
/// cause, instead of SIGBUS killing the process; so does every later
/// request of the engine, even one inside the file, and its flush.
#[test]
fn reads_of_a_file_truncated_while_mapped_fail_cleanly() {
    use crate::engines::SyncIo;
    let dir = tempfile::tempdir().unwrap();
    let spec = paged_file(dir.path(), 4, false);
    let mut eng = MmapEngine::open(&spec).unwrap();
    assert!(eng.caps.notes.iter().all(|n| !n.contains("not guarded")));
    assert_eq!(eng.one(&req(Op::Read, 2 * 4096)).unwrap(), Ok(4096));
    assert!(eng.pool.get_mut(0).unwrap().iter().all(|&b| b == 3));
    truncate(&spec.path, 4096);
    let e = eng.one(&req(Op::Read, 2 * 4096)).unwrap_err().to_string();
    for want in [
        spec.path.to_str().unwrap(),
        "mmap read failed",
        "truncated while mapped (SIGBUS at offset 8192; it is 4096 bytes long now)",
        "unexpected end of file",
        "another process changed the file",
    ] {
        assert!(e.contains(want), "{want:?} not in: {e}");
    }
    let again = eng.one(&req(Op::Read, 0)).unwrap_err().to_string();
    assert!(again.contains("SIGBUS at offset 8192"), "{again}");
    let flush = eng
        .flush_end(crate::SyncCall::Fsync)
        .unwrap_err()
        .to_string();
    assert!(flush.contains("mmap flush failed"), "{flush}");
    drop(eng);
    assert_eq!(std::fs::metadata(&spec.path).unwrap().len(), 4096);
}

/// The same for writes (mmap, and mmap-dax's engine without MAP_SYNC):
/// a write into a page past the new end fails, and puts nothing in the
/// file (the page it landed in is the guard's, not the file's).
#[test]
fn writes_past_a_truncated_end_fail_and_extend_nothing() {
    use crate::engines::SyncIo;
    let methods: &[Method] = if cfg!(target_arch = "x86_64") {
        &[Method::Mmap, Method::MmapDax]
    } else {
        &[Method::Mmap]
    };
    for &method in methods {
        let dir = tempfile::tempdir().unwrap();
        let spec = paged_file(dir.path(), 4, true);
        let mut eng = MmapEngine::open_as(method, &spec, false).unwrap();
        eng.pool.get_mut(0).unwrap().fill(0x77);
        assert_eq!(eng.one(&req(Op::Write, 0)).unwrap(), Ok(4096));
        truncate(&spec.path, 4096);
        let e = eng.one(&req(Op::Write, 3 * 4096)).unwrap_err().to_string();
        assert!(e.contains("mmap write failed"), "{method}: {e}");
        assert!(e.contains("SIGBUS at offset 12288"), "{method}: {e}");
        assert!(eng.flush_end(crate::SyncCall::Fsync).is_err(), "{method}");
        drop(eng);
        let data = std::fs::read(&spec.path).unwrap();
        assert_eq!(data.len(), 4096, "{method}");
        assert!(
            data.iter().all(|&b| b == 0x77),
            "{method}: the first write kept"
        );
    }
}

/// Workers of one case each map the same file and copy at once (randrw,
/// threads > 1), each through its own mapping. Every byte is checked:
/// each write fills its block with bytes of its own (worker, request,
/// position), all with the high bit set; a read sees, at each byte,
/// the file's first bytes (under 0x80) or some write's. At the end,
/// each byte of a block nobody wrote is the file's, and each byte of a
/// written block is the byte at its position of the last write to that
/// block of one of the workers that wrote it (a later write of a worker
/// covers all of its earlier one; writes of two workers at the same
/// time may leave a mix of both, byte by byte, as pwrite does).
#[test]
fn workers_copy_through_one_file_at_once() {
    use crate::engines::SyncIo;
    const BLOCKS: usize = 64;
    const BS: usize = 4096;
    const WORKERS: usize = 4;
    // The byte at `j` of worker w's i-th write.
    fn byte(w: usize, i: usize, j: usize) -> u8 {
        let x = (w as u64 + 1)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add((i as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9))
            .wrapping_add(j as u64)
            .wrapping_mul(0x94d0_49bb_1331_11eb);
        0x80 | (x >> 57) as u8
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = paged_file(dir.path(), BLOCKS, true);
    // Per worker: the request index of its last write to each block.
    let last: Vec<Vec<Option<usize>>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                let spec = spec.clone();
                s.spawn(move || {
                    let mut eng = MmapEngine::open(&spec).unwrap();
                    let mut last = vec![None; BLOCKS];
                    let mut x = w as u64 + 1;
                    for i in 0..2000usize {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let block = ((x >> 33) % BLOCKS as u64) as usize;
                        let op = if i % 2 == 0 { Op::Write } else { Op::Read };
                        if op == Op::Write {
                            let b = eng.pool.get_mut(0).unwrap();
                            for (j, v) in b[..BS].iter_mut().enumerate() {
                                *v = byte(w, i, j);
                            }
                            last[block] = Some(i);
                        }
                        let r = req(op, (block * BS) as u64);
                        assert_eq!(eng.one(&r).unwrap(), Ok(BS as u32));
                        if op == Op::Read {
                            let b = eng.pool.get_mut(0).unwrap();
                            if let Some(j) = b[..BS]
                                .iter()
                                .position(|&v| v != (block + 1) as u8 && v < 0x80)
                            {
                                panic!("block {block}, byte {j}: {:#x}, which no one wrote", b[j]);
                            }
                        }
                    }
                    eng.flush_end(crate::SyncCall::Fsync).unwrap();
                    last
                })
            })
            .collect();
        workers.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let data = std::fs::read(&spec.path).unwrap();
    assert_eq!(data.len(), BLOCKS * BS);
    let mut written = 0;
    for block in 0..BLOCKS {
        let writes: Vec<(usize, usize)> = (0..WORKERS)
            .filter_map(|w| last[w][block].map(|i| (w, i)))
            .collect();
        written += usize::from(!writes.is_empty());
        for j in 0..BS {
            let got = data[block * BS + j];
            let ok = if writes.is_empty() {
                got == (block + 1) as u8
            } else {
                writes.iter().any(|&(w, i)| byte(w, i, j) == got)
            };
            assert!(
                ok,
                "block {block}, byte {j}: {got:#x}; last writes (worker, request): {writes:?}"
            );
        }
    }
    assert!(written > BLOCKS / 2, "only {written} blocks written");
}

/// The directory the child of the next test makes its files in: the
/// parent's, which removes it once the child is dead (the child dies of
/// SIGBUS, so a directory of its own would never be removed).
const SIGBUS_CHILD_DIR: &str = "IOPATH_SIGBUS_CHILD_DIR";

/// Child of the next test (does nothing unless it set the variable).
#[test]
#[ignore = "run by sigbus_that_is_not_ours_still_kills in a child process"]
fn sigbus_child() {
    let Ok(mode) = std::env::var("IOPATH_SIGBUS_CHILD") else {
        return;
    };
    let dir = std::path::PathBuf::from(
        std::env::var_os(SIGBUS_CHILD_DIR).expect("the parent names the directory"),
    );
    // A guarded mapping, so the handler is installed and the table used.
    let spec = paged_file(&dir, 2, false);
    let eng = MmapEngine::open(&spec).unwrap();
    let other = dir.join("other.dat");
    std::fs::write(&other, vec![1u8; 2 * 4096]).unwrap();
    let f = std::fs::File::open(&other).unwrap();
    if mode == "raise" {
        // SAFETY: raise has no preconditions.
        unsafe { libc::raise(libc::SIGBUS) };
    } else if let Some(at) = mode.strip_prefix("ao-") {
        // BUS_MCEERR_AO, the kernel's asynchronous notice of a memory
        // error, here sent by the process to itself (allowed for
        // positive si_code only to oneself): at an address inside the
        // guarded mapping, or elsewhere.
        let start = eng.caps.notes.iter().find_map(|n| parse_mapping_note(n));
        let addr = match at {
            "inside" => start.expect("a mapping note").start as usize + 100,
            _ => 0x1000,
        };
        // SAFETY: a zeroed siginfo_t is a valid value (integers and
        // padding); the fields are written at their offsets in the
        // 64-bit Linux layout (si_signo 0, si_code 8, si_addr 16),
        // inside its 128 bytes.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let base = (&mut info as *mut libc::siginfo_t).cast::<u8>();
        // SAFETY: as above.
        unsafe {
            base.cast::<i32>().write(libc::SIGBUS);
            base.add(8).cast::<i32>().write(libc::BUS_MCEERR_AO);
            base.add(16).cast::<usize>().write(addr);
        }
        // SAFETY: rt_tgsigqueueinfo reads one siginfo_t, which lives
        // for the call; the target is this thread of this process.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_rt_tgsigqueueinfo,
                libc::getpid(),
                libc::syscall(libc::SYS_gettid),
                libc::SIGBUS,
                &info as *const libc::siginfo_t,
            )
        };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    } else {
        // SAFETY: a fresh read-only shared mapping of 2 pages of f, not
        // registered with the guard; the process is meant to die of
        // reading its second page once the file is cut to one.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * 4096,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        truncate(&other, 0);
        // SAFETY: inside the mapping; the read is meant to raise SIGBUS.
        let b = unsafe { std::ptr::read_volatile(p.cast::<u8>().add(4096)) };
        eprintln!("read {b} past the end and lived");
    }
    drop(eng);
    std::process::exit(3);
}

/// SIGBUS outside the engines' mappings (a fault in memory iopath did
/// not guard, or the signal sent by someone) still ends the process
/// with SIGBUS, as without the guard: real bugs crash. So does an
/// asynchronous memory error notice (BUS_MCEERR_AO), inside a guarded
/// mapping or not: it used to be recovered (a zero page mapped from
/// whatever thread got it) or passed to Rust's handler, which set the
/// default action and returned, leaving the guard off.
#[test]
#[cfg_attr(miri, ignore = "spawns a process")]
fn sigbus_that_is_not_ours_still_kills() {
    use std::os::unix::process::ExitStatusExt;
    for mode in ["fault", "raise", "ao-inside", "ao-elsewhere"] {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "engines::mmap::tests::sigbus_child",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("IOPATH_SIGBUS_CHILD", mode)
            .env(SIGBUS_CHILD_DIR, dir.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGBUS),
            "{mode}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // The child made its files in the parent's directory, which goes
        // with `dir` here: nothing of the killed child is left in /tmp.
        assert!(
            dir.path().join("other.dat").exists(),
            "{mode}: the child made its files elsewhere"
        );
    }
}

//! The engine's own tests: retries of transient enter errors, waiting
//! without submitting, the single issuer.

use super::*;

/// A 64 KiB file of known bytes; `uring-buffered` works on any file
/// system, tmpfs included.
fn spec(dir: &tempfile::TempDir) -> OpenSpec {
    let path = dir.path().join("t.dat");
    std::fs::write(&path, (0..65536u32).map(|i| i as u8).collect::<Vec<u8>>()).unwrap();
    OpenSpec {
        path,
        write: false,
        block_size: 4096,
        queue_depth: 4,
        sync: SyncPolicy::None,
        span_bytes: 65536,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    }
}

fn open_or_skip(spec: &OpenSpec) -> Option<UringEngine> {
    match UringEngine::open(Method::UringBuffered, spec) {
        Ok(e) => Some(e),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

fn read_one(e: &mut UringEngine, slot: u32) -> Result<Completion, EngineError> {
    let req = IoReq {
        op: Op::Read,
        offset: 4096 * u64::from(slot),
        len: 4096,
        slot,
    };
    let mut done = Vec::new();
    assert_eq!(e.submit(&[req], &mut done)?, 1);
    e.reap(1, &mut done)?;
    Ok(done[0])
}

/// io_uring_enter's transient refusals are retried, not the end of the
/// case: EINTR at once, EBUSY and EAGAIN by draining, waiting for a
/// completion, or sleeping a little (backing off, up to a bound).
/// Everything else is reported. (reap used to fail on EAGAIN.)
#[test]
fn eagain_and_eintr_from_enter_are_retried() {
    use std::time::Duration;
    let z = Duration::ZERO;
    let on = on_enter_error;
    assert_eq!(on(Some(libc::EINTR), false, true, z), OnEnterError::Again);
    assert_eq!(on(Some(libc::EBUSY), true, true, z), OnEnterError::Drain);
    assert_eq!(on(Some(libc::EAGAIN), true, true, z), OnEnterError::Drain);
    assert_eq!(
        on(Some(libc::EAGAIN), false, true, z),
        OnEnterError::WaitOne
    );
    // Nothing to drain or wait for: sleep, longer each time, then give up.
    let mut slept = z;
    let mut sleeps = Vec::new();
    while let OnEnterError::Sleep(d) = on(Some(libc::EAGAIN), false, false, slept) {
        assert!(d > z && d <= Duration::from_millis(1), "{d:?}");
        sleeps.push(d);
        slept += d;
    }
    assert_eq!(
        on(Some(libc::EAGAIN), false, false, slept),
        OnEnterError::Fail
    );
    assert!(slept >= EAGAIN_GIVE_UP && slept < EAGAIN_GIVE_UP + Duration::from_millis(2));
    assert!(sleeps.windows(2).all(|w| w[0] <= w[1]), "backs off");
    assert_eq!(sleeps[0], Duration::from_micros(10));
    for errno in [libc::EIO, libc::EINVAL, libc::EBADF, libc::ENOMEM] {
        assert_eq!(
            on(Some(errno), true, true, z),
            OnEnterError::Fail,
            "{errno}"
        );
    }
    assert_eq!(on(None, true, true, z), OnEnterError::Fail);
}

/// The wait EAGAIN uses when requests are in the kernel: it submits
/// nothing and returns once one completes; the books say which
/// requests the kernel holds.
#[test]
fn wait_one_waits_for_a_request_already_in_the_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut e) = open_or_skip(&spec(&dir)) else {
        return;
    };
    let reqs: Vec<IoReq> = (0..4)
        .map(|slot| IoReq {
            op: Op::Read,
            offset: 4096 * u64::from(slot),
            len: 4096,
            slot,
        })
        .collect();
    let mut done = Vec::new();
    assert_eq!(e.submit(&reqs, &mut done).unwrap(), 4);
    // uring-buffered defers submission: all four wait in the SQ.
    assert_eq!(e.in_kernel(), 0);
    e.enter(0).unwrap();
    assert_eq!(e.in_kernel(), 4);
    let mut got = 0;
    while got < 4 {
        e.wait_one().unwrap();
        let n = e.drain(&mut done);
        assert!(n >= 1, "wait_one returned with nothing complete");
        got += n;
    }
    assert_eq!(e.in_kernel(), 0);
    assert!(done.iter().all(|c| c.result == Ok(4096)), "{done:?}");
}

#[test]
fn opened_on_one_thread_used_on_another() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut e) = open_or_skip(&spec(&dir)) else {
        return;
    };
    std::thread::spawn(move || {
        for slot in 0..4 {
            let c = read_one(&mut e, slot).expect("read on the worker thread");
            assert_eq!(c.result, Ok(4096));
            assert_eq!(e.buf_mut(slot).unwrap()[1], 1);
        }
        drop(e);
    })
    .join()
    .unwrap();
}

#[test]
fn single_issuer_refuses_a_second_thread_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut e) = open_or_skip(&spec(&dir)) else {
        return;
    };
    read_one(&mut e, 0).expect("first read binds the ring to this thread");
    let single_issuer = e.owner.is_some();
    std::thread::spawn(move || {
        let r = read_one(&mut e, 1);
        if single_issuer {
            assert!(matches!(r, Err(EngineError::Invalid(_))), "{r:?}");
        } else {
            assert_eq!(r.expect("no single issuer: any thread").result, Ok(4096));
        }
        // Nothing was left in flight, so dropping here frees everything.
        assert_eq!(e.in_flight(), 0);
    })
    .join()
    .unwrap();
}

/// `bind`'s owner check reads a per-thread id instead of cloning the
/// thread's handle: it must still be each thread's own, distinct id.
#[test]
fn this_thread_is_each_threads_own_id() {
    let here = super::this_thread();
    assert_eq!(here, std::thread::current().id());
    assert_eq!(here, super::this_thread(), "stable within a thread");
    let there = std::thread::spawn(|| {
        let id = super::this_thread();
        assert_eq!(id, std::thread::current().id());
        id
    })
    .join()
    .unwrap();
    assert_ne!(here, there);
}

/// The inline `io_uring_enter` reports the kernel's errno as libc's
/// wrapper did (-4095..=-1 in rax), and a count on success.
#[test]
fn raw_enter_reports_errno_and_count() {
    // SAFETY: submits nothing (to_submit 0, no wait) on a descriptor that
    // is not open: the kernel only looks it up and refuses.
    let r = unsafe { super::ring_fd::enter_raw(1 << 30, 0, 0, 0) };
    assert_eq!(r.unwrap_err().raw_os_error(), Some(libc::EBADF));
    let Ok(ring) = io_uring::IoUring::new(8) else {
        return; // io_uring refused here: nothing more to check
    };
    // SAFETY: the ring's own descriptor, nothing submitted, nothing waited
    // for: the call returns at once with 0 submitted.
    let r = unsafe { super::ring_fd::enter_raw(ring.as_raw_fd() as u32, 0, 0, 0) };
    assert_eq!(r.unwrap(), 0);
}

/// The file's access time, whole seconds.
fn atime_secs(path: &std::path::Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().atime()
}

/// A read through an engine opened with `noatime` leaves the file's
/// access time as it was; the same read without it updates it (the
/// kernel's `touch_atime`, which t/io_uring and fio on devices skip with
/// `O_NOATIME`). The access time is set two days back first, so that
/// `relatime` updates it on the next read.
#[test]
fn noatime_reads_leave_the_access_time_alone() {
    let dir = tempfile::tempdir().unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    let mut spec = spec(&dir);
    let age_it = |path: &std::path::Path| {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_times(std::fs::FileTimes::new().set_accessed(old))
            .unwrap();
        atime_secs(path)
    };
    let atime_after = |noatime: bool, spec: &mut OpenSpec| {
        spec.noatime = noatime;
        let before = age_it(&spec.path);
        let mut e = open_or_skip(spec)?;
        read_one(&mut e, 0).unwrap();
        drop(e);
        Some((before, atime_secs(&spec.path)))
    };
    let Some((before, after)) = atime_after(false, &mut spec) else {
        return;
    };
    if before == after {
        eprintln!("skipped: reads do not update access times here (a noatime mount)");
        return;
    }
    let (before, after) = atime_after(true, &mut spec).unwrap();
    assert_eq!(before, after, "O_NOATIME read changed the access time");
}

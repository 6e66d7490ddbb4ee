//! How `uring` and `uring-batch` hand requests to the kernel (issue 31),
//! and the registered ring descriptor.

use super::*;

/// A 256 KiB file of known bytes (where O_DIRECT is refused, the tests
/// skip with the reason).
fn spec(dir: &tempfile::TempDir, qd: usize) -> OpenSpec {
    let path = dir.path().join("t.dat");
    std::fs::write(&path, (0..262144u32).map(|i| i as u8).collect::<Vec<u8>>()).unwrap();
    OpenSpec {
        path,
        write: false,
        block_size: 4096,
        queue_depth: qd,
        sync: SyncPolicy::None,
        span_bytes: 262144,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    }
}

fn open_or_skip(method: Method, spec: &OpenSpec) -> Option<UringEngine> {
    match UringEngine::open(method, spec) {
        Ok(e) => Some(e),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

fn reads(slots: std::ops::Range<u32>) -> Vec<IoReq> {
    slots
        .map(|slot| IoReq {
            op: Op::Read,
            offset: 4096 * u64::from(slot),
            len: 4096,
            slot,
        })
        .collect()
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// `uring` entered the kernel once per request in `submit` and once more
/// in `reap` to wait: two system calls per request where one wait frees
/// one slot. The last request of a submit now stays in the SQ for the
/// reap's enter, which submits it and waits in one call.
#[test]
fn the_last_request_of_a_submit_goes_in_with_the_wait() {
    let dir = tempdir();
    let Some(mut e) = open_or_skip(Method::Uring, &spec(&dir, 4)) else {
        return;
    };
    let mut done = Vec::new();
    assert_eq!(e.submit(&reads(0..3), &mut done).unwrap(), 3);
    assert_eq!(e.ring.submission().len(), 1, "the last waits in the SQ");
    assert_eq!(e.in_kernel(), 2, "the others are in the kernel");
    let mut got = 0;
    while got < 3 {
        e.reap(1, &mut done).unwrap();
        got = done.len();
    }
    assert_eq!(e.ring.submission().len(), 0);
    assert!(done.iter().all(|c| c.result == Ok(4096)), "{done:?}");
}

/// `uring-batch` at depth 32 defers every request to the reap, whose one
/// enter submits them and waits for a quarter of the depth: 8.
#[test]
fn uring_batch_submits_in_one_enter_and_waits_for_a_quarter_of_the_depth() {
    let dir = tempdir();
    let Some(mut e) = open_or_skip(Method::UringBatch, &spec(&dir, 32)) else {
        return;
    };
    assert_eq!(e.wait_batch, 8);
    let mut done = Vec::new();
    assert_eq!(e.submit(&reads(0..12), &mut done).unwrap(), 12);
    assert_eq!(e.ring.submission().len(), 12, "nothing entered yet");
    e.reap(1, &mut done).unwrap();
    assert!(done.len() >= 8, "one reap waits for 8, got {}", done.len());
    // Never more than are in flight: the last 4 come with a reap of 1.
    while done.len() < 12 {
        e.reap(1, &mut done).unwrap();
    }
    assert!(done.iter().all(|c| c.result == Ok(4096)), "{done:?}");
}

/// The ring's descriptor is registered by its issuer and unregistered when
/// the engine is dropped: a thread has 16 registrations at most, so
/// without the unregistering the 17th engine of a thread ran without one.
#[test]
fn every_engine_of_a_thread_registers_its_ring_and_gives_it_back() {
    let dir = tempdir();
    let spec = spec(&dir, 2);
    for i in 0..20 {
        let Some(mut e) = open_or_skip(Method::Uring, &spec) else {
            return;
        };
        let mut done = Vec::new();
        e.submit(&reads(0..1), &mut done).unwrap();
        e.reap(1, &mut done).unwrap();
        assert_eq!(done[0].result, Ok(4096));
        if e.owner.is_none() {
            eprintln!("skipped: no single-issuer ring on this kernel");
            return;
        }
        assert!(e.ring_index.is_some(), "engine {i} has no registered ring");
    }
}

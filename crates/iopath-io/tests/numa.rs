//! Placement: memory policies for I/O buffers (set before the first touch,
//! verified page by page), `Caps::buffer_nodes` of every engine, and CPU
//! affinity of the calling thread.
//!
//! Runs on any machine: the node used is the first node with memory (node 0
//! on a one-node machine), the absent node is 7 unless that exists. Without
//! NUMA support in the kernel (no `/sys/devices/system/node`), the policy
//! tests say so on stderr and pass.

use std::io;
use std::path::PathBuf;

use iopath_io::buf::{BufferBacking, SlotPool};
use iopath_io::numa::{self, MemPolicy, MemPolicyMode};
use iopath_io::{open, probe_method, EngineError, Method, OpenSpec, SyncPolicy};
use tempfile::TempDir;

const BS: usize = 64 << 10;

fn page() -> u64 {
    rustix::param::page_size() as u64
}

fn pol(mode: MemPolicyMode, nodes: &[u32]) -> MemPolicy {
    MemPolicy {
        mode,
        nodes: nodes.to_vec(),
    }
}

/// The nodes with memory, or `None` (reason on stderr) without NUMA.
fn nodes() -> Option<Vec<u32>> {
    match numa::nodes_with_memory() {
        Some(n) if !n.is_empty() => Some(n),
        _ => {
            eprintln!("skipped: this kernel lists no NUMA nodes");
            None
        }
    }
}

/// A node that does not exist here: 7, or one past the last.
fn absent_node(have: &[u32]) -> u32 {
    if have.contains(&7) {
        have.iter().max().unwrap() + 1
    } else {
        7
    }
}

fn total(nodes: &[(u32, u64)]) -> u64 {
    nodes.iter().map(|&(_, p)| p).sum()
}

#[test]
fn a_pool_bound_to_a_node_has_every_page_there() {
    let Some(have) = nodes() else { return };
    let node = have[0];
    // Small slots (base pages) and large ones (huge-page backing).
    for (slots, slot) in [(4usize, BS), (3, 1 << 20), (1, 4096), (2, 1000)] {
        let policy = pol(MemPolicyMode::Bind, &[node]);
        let backing = if slot > 4096 {
            BufferBacking::Huge
        } else {
            BufferBacking::Pages
        };
        let mut p = SlotPool::new_placed(slots, slot, 4096, Some(&policy), backing).expect("bind");
        let got = p.buffer_nodes().expect("pages_per_node");
        eprintln!("bind:{node} {slots}x{slot}: {got:?} of {} pages", p.pages());
        assert_eq!(got, vec![(node, p.pages())], "{slots}x{slot}");
        assert_eq!(
            p.pages(),
            (slots * slot.next_multiple_of(4096)) as u64 / page()
        );
        // Zeroed and usable like any pool.
        let s = p.get_mut(slots as u32 - 1).unwrap();
        assert!(s.iter().all(|&b| b == 0));
        s.fill(0x5a);
        assert!(p.get(slots as u32 - 1).unwrap().iter().all(|&b| b == 0x5a));
    }
}

#[test]
fn every_mode_places_the_pool() {
    let Some(have) = nodes() else { return };
    let node = have[0];
    for policy in [
        pol(MemPolicyMode::Bind, &[node]),
        pol(MemPolicyMode::Preferred, &[node]),
        pol(MemPolicyMode::Interleave, &[node]),
        pol(MemPolicyMode::Interleave, &have),
        pol(MemPolicyMode::Local, &[]),
    ] {
        let p = SlotPool::new_placed(8, BS, 4096, Some(&policy), BufferBacking::Pages)
            .unwrap_or_else(|e| panic!("{policy}: {e}"));
        let got = p.buffer_nodes().unwrap();
        eprintln!("{policy}: {got:?}");
        // The policy really is on the memory, first page to last.
        let mut p = p;
        let iov = p.iovecs();
        for v in [iov[0], iov[iov.len() - 1]] {
            let at = numa::policy_at(v.iov_base as *const u8).unwrap();
            assert_eq!(at.as_ref(), Some(&policy), "{policy}");
        }
        assert_eq!(total(&got), p.pages(), "{policy}: {got:?}");
        if have.len() == 1 || policy.mode == MemPolicyMode::Bind {
            assert!(got
                .iter()
                .all(|&(n, _)| policy.nodes.contains(&n) || have.len() == 1));
        }
    }
}

#[test]
fn an_unplaced_pool_is_touched_and_reports_its_nodes() {
    let Some(have) = nodes() else { return };
    for (slots, slot) in [(4usize, BS), (2, 1 << 20)] {
        let mut p = SlotPool::new_placed(slots, slot, 4096, None, BufferBacking::Pages).unwrap();
        let got = p.buffer_nodes().unwrap();
        let at = p.iovecs()[0].iov_base as *const u8;
        assert_eq!(numa::policy_at(at).unwrap(), None, "default policy");
        assert_eq!(total(&got), p.pages(), "{got:?}");
        assert!(got.iter().all(|(n, _)| have.contains(n)), "{got:?}");
    }
}

#[test]
fn a_node_that_does_not_exist_is_refused_by_name() {
    let Some(have) = nodes() else { return };
    let bad = absent_node(&have);
    for mode in [
        MemPolicyMode::Bind,
        MemPolicyMode::Preferred,
        MemPolicyMode::Interleave,
    ] {
        let policy = pol(mode, &[bad]);
        let e = SlotPool::new_placed(2, BS, 4096, Some(&policy), BufferBacking::Pages).unwrap_err();
        let msg = e.to_string();
        eprintln!("{msg}");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{msg}");
        assert!(msg.contains(&format!("node {bad} ")), "{msg}");
        assert!(msg.contains(&policy.to_string()), "{msg}");
        assert!(msg.contains(&numa::format_list(&have)), "{msg}");
    }
    // One good node and one bad: refused too, not silently narrowed.
    let policy = pol(MemPolicyMode::Interleave, &[have[0], bad]);
    let e = SlotPool::new_placed(2, BS, 4096, Some(&policy), BufferBacking::Pages).unwrap_err();
    assert!(e.to_string().contains(&format!("node {bad} ")), "{e}");
    // Straight to the kernel, past the sysfs check: it refuses as well.
    let mut buf = SlotPool::new_placed(1, 4096, 4096, None, BufferBacking::Pages).unwrap();
    let addr = buf.iovecs()[0].iov_base as *const u8;
    let e = numa::mbind(addr, 4096, &pol(MemPolicyMode::Bind, &[bad])).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
    // Malformed policies never reach the kernel.
    let e = SlotPool::new_placed(
        1,
        4096,
        4096,
        Some(&pol(MemPolicyMode::Local, &[0])),
        BufferBacking::Pages,
    );
    assert_eq!(e.unwrap_err().kind(), io::ErrorKind::InvalidInput);
    let e = SlotPool::new_placed(
        1,
        4096,
        4096,
        Some(&pol(MemPolicyMode::Bind, &[])),
        BufferBacking::Pages,
    );
    assert_eq!(e.unwrap_err().kind(), io::ErrorKind::InvalidInput);
}

struct Target {
    _dir: TempDir,
    path: PathBuf,
}

fn target() -> Target {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let path = dir.path().join("numa.dat");
    std::fs::write(&path, vec![3u8; 16 * BS]).expect("prefill");
    Target { _dir: dir, path }
}

fn spec(t: &Target, qd: usize, mem_policy: Option<MemPolicy>) -> OpenSpec {
    OpenSpec {
        path: t.path.clone(),
        write: false,
        block_size: BS,
        queue_depth: qd,
        sync: SyncPolicy::None,
        span_bytes: (16 * BS) as u64,
        sqpoll_cpu: None,
        mem_policy,
        buffers: Default::default(),
        noatime: false,
    }
}

#[test]
fn engines_report_where_their_buffers_are() {
    let Some(have) = nodes() else { return };
    let t = target();
    let methods = [
        Method::Buffered,
        Method::Direct,
        Method::Uring,
        Method::UringBuffered,
        Method::Aio,
        Method::Mmap,
        Method::Null,
    ];
    for m in methods {
        if let Some(why) = probe_method(m, &t.path, BS).unusable {
            eprintln!("skipped {m}: {why}");
            continue;
        }
        for policy in [None, Some(pol(MemPolicyMode::Bind, &[have[0]]))] {
            let eng = open(m, &spec(&t, 4, policy.clone()))
                .unwrap_or_else(|e| panic!("open {m} {policy:?}: {e}"));
            let caps = eng.caps();
            let pages = (caps.queue_depth * BS.next_multiple_of(caps.mem_align)) as u64 / page();
            eprintln!(
                "{m} qd {} policy {}: buffer_nodes {:?} ({pages} pages)",
                caps.queue_depth,
                policy.as_ref().map_or("none".into(), |p| p.to_string()),
                caps.buffer_nodes
            );
            assert_eq!(total(&caps.buffer_nodes), pages, "{m} {policy:?}");
            if let Some(p) = &policy {
                assert_eq!(caps.buffer_nodes, vec![(p.nodes[0], pages)], "{m}");
            }
        }
    }
}

#[test]
fn engines_refuse_an_absent_node_as_invalid() {
    let Some(have) = nodes() else { return };
    let bad = absent_node(&have);
    let t = target();
    for m in [Method::Buffered, Method::Uring, Method::Null] {
        let policy = pol(MemPolicyMode::Bind, &[bad]);
        match open(m, &spec(&t, 2, Some(policy))) {
            Err(EngineError::Invalid(msg)) => {
                assert!(msg.contains(&format!("node {bad} ")), "{m}: {msg}")
            }
            // uring may be off here altogether: then it says so first.
            Err(EngineError::Unsupported { reason, .. }) if m == Method::Uring => {
                eprintln!("skipped {m}: {reason}")
            }
            Err(e) => panic!("{m}: {e}"),
            Ok(_) => panic!("{m}: opened with buffers bound to absent node {bad}"),
        }
    }
}

#[test]
fn pinning_moves_only_the_calling_thread() {
    let before = numa::current_affinity().unwrap();
    assert!(!before.is_empty());
    let cpu = before[0];
    let all = before.clone();
    std::thread::spawn(move || {
        numa::pin_current_thread(&[cpu]).expect("pin");
        assert_eq!(numa::current_affinity().unwrap(), vec![cpu]);
        assert_eq!(numa::current_cpu(), Some(cpu));
        // A CPU that does not exist: refused, and the pinning stays.
        let e = numa::pin_current_thread(&[4095]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        assert!(e.to_string().contains("4095"), "{e}");
        assert!(numa::pin_current_thread(&[]).is_err());
        assert_eq!(numa::current_affinity().unwrap(), vec![cpu]);
        // Back to everything it had.
        numa::pin_current_thread(&all).expect("unpin");
        assert_eq!(numa::current_affinity().unwrap(), all);
    })
    .join()
    .unwrap();
    assert!(numa::current_cpu().is_some());
    // The test's own thread was not touched.
    assert_eq!(numa::current_affinity().unwrap(), before);
}

#[test]
fn pinning_to_cpu_0() {
    if !numa::current_affinity().unwrap().contains(&0) {
        eprintln!("skipped: CPU 0 is not allowed here");
        return;
    }
    let outside = numa::current_affinity().unwrap();
    std::thread::spawn(|| {
        numa::pin_current_thread(&[0]).expect("pin to 0");
        assert_eq!(numa::current_affinity().unwrap(), vec![0]);
        assert_eq!(numa::current_cpu(), Some(0));
        assert_eq!(iopath_io::sys::current_cpu(), Some(0));
    })
    .join()
    .unwrap();
    assert_eq!(numa::current_affinity().unwrap(), outside);
}

//! The agreements with ranks made of threads, and the aggregate's sums.

use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::result::mpi::MpiRep;
use crate::result::Measurement;
use crate::run::peers::threads::Threads;
use crate::system::metrics::blockdev::DiskCounters;
use hdrhistogram::Histogram;

/// Run `f` as every rank of a group of `n` threads; the ranks' answers.
fn as_ranks<T: Send>(n: usize, f: impl Fn(&Ranks<'_>) -> T + Sync) -> Vec<T> {
    let group = Threads::group(n);
    let flags: Vec<(AtomicBool, AtomicBool)> = (0..n)
        .map(|_| (AtomicBool::new(false), AtomicBool::new(false)))
        .collect();
    std::thread::scope(|s| {
        let hs: Vec<_> = group
            .iter()
            .zip(&flags)
            .map(|(p, (sig, agreed))| {
                let f = &f;
                s.spawn(move || {
                    let host = format!("h{}", p.rank() / 2);
                    let r = Ranks::new(p, FileLayout::PerRank, &host, sig, agreed);
                    f(&r)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn one_ranks_failure_is_every_ranks_with_its_name_and_kind() {
    let out = as_ranks(3, |r| {
        let mine: Result<u32> = if r.rank() == 2 {
            Err(UsageError("--dir /nowhere: no such directory".into()).into())
        } else {
            Ok(7)
        };
        r.agree(mine)
            .map_err(|e| (format!("{e:#}"), e.is::<UsageError>()))
    });
    for (rank, o) in out.iter().enumerate() {
        let (text, usage) = o.as_ref().unwrap_err();
        assert!(*usage, "rank {rank}: still a usage error (exit 2)");
        assert!(text.contains("/nowhere"), "rank {rank}: {text}");
        if rank != 2 {
            assert!(text.starts_with("rank 2 (on h1) failed"), "{text}");
        }
    }
    let ok = as_ranks(2, |r| {
        r.agree(Ok::<u32, anyhow::Error>(r.rank() as u32)).unwrap()
    });
    assert_eq!(ok, vec![0, 1], "no failure: each its own value");
}

#[test]
fn a_skip_or_refusal_on_one_rank_is_every_ranks() {
    use crate::result::skip::Skip;
    let refused = |why: &str| Skip::Unusable { reason: why.into() };
    let on = |rank: u32, host: &str, skip: Skip| Skip::OnRank {
        rank,
        host: host.into(),
        skip: Box::new(skip),
    };
    let out = as_ranks(4, |r| {
        r.agree_skip((r.rank() == 3).then(|| refused("O_DIRECT refused")))
    });
    for o in &out[..3] {
        assert_eq!(o, &Some(on(3, "h1", refused("O_DIRECT refused"))));
    }
    assert_eq!(out[3], Some(refused("O_DIRECT refused")));
    let probes = as_ranks(2, |r| {
        let p = crate::run::prepare::Probed {
            method: iopath_io::Method::Direct,
            unusable: (r.rank() == 1).then(|| refused("tmpfs")),
            notes: Vec::new(),
        };
        r.agree_probes(vec![p]).remove(0).unusable
    });
    assert_eq!(probes[0], Some(on(1, "h0", refused("tmpfs"))));
    assert_eq!(probes[1], Some(refused("tmpfs")));
}

#[test]
fn a_stop_on_one_rank_becomes_every_ranks_at_the_next_step() {
    let group = Threads::group(2);
    let flags = [
        (AtomicBool::new(false), AtomicBool::new(false)),
        (AtomicBool::new(true), AtomicBool::new(false)),
    ];
    let agreed: Vec<bool> = std::thread::scope(|s| {
        let hs: Vec<_> = group
            .iter()
            .zip(&flags)
            .map(|(p, (sig, agreed))| {
                s.spawn(move || {
                    let r = Ranks::new(p, FileLayout::PerRank, "h", sig, agreed);
                    // Before the step nothing is agreed, whatever the signal.
                    assert!(!agreed.load(Ordering::SeqCst));
                    r.barrier();
                    agreed.load(Ordering::SeqCst)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(agreed, vec![true, true]);
    assert!(
        flags[0].0.load(Ordering::SeqCst),
        "rank 0's workers stop too"
    );
}

fn ran(bytes: u64, start_ns: u64, end_ns: u64, dev_read: u64, lat: u64) -> Ran {
    let mut h = Histogram::<u64>::new_with_bounds(1, crate::run::worker::MAX_LAT_NS, 3).unwrap();
    h.record_n(lat, bytes / 4096).unwrap();
    let m = Measurement {
        io_bytes: bytes,
        read_bytes: bytes,
        ios: bytes / 4096,
        read_ios: bytes / 4096,
        duration_ns: end_ns - start_ns,
        device: Some(DiskCounters {
            read_bytes: dev_read,
            reads: dev_read / 4096,
            ..DiskCounters::default()
        }),
        ..Measurement::default()
    };
    Ran::new(m, &h, start_ns, end_ns, (0, 0))
}

#[test]
fn the_aggregate_is_all_bytes_over_the_common_interval() {
    // Ranks 0 and 1 on host a, rank 2 on host b.
    let (a, b, c) = (
        ran(100 << 20, 1_000_000, 101_000_000, 300 << 20, 10_000),
        ran(100 << 20, 2_000_000, 52_000_000, 290 << 20, 20_000),
        ran(200 << 20, 0, 201_000_000, 200 << 20, 40_000),
    );
    let parts = [(0, "a", &a), (1, "a", &b), (2, "b", &c)];
    let (m, hist, row, _) = aggregate(&parts, false);
    assert_eq!(m.io_bytes, 400 << 20);
    assert_eq!(m.duration_ns, 201_000_000, "first start (0) to last end");
    let want = (400u64 << 20) as f64 / 0.201;
    assert!((m.bw_bytes_per_s - want).abs() < 1e-6 * want);
    assert_eq!(hist.len(), (400 << 20) / 4096, "every request's latency");
    assert_eq!(m.lat_ns.max, hist.max());
    // Devices: host a's counted once (the larger view), plus host b's.
    assert_eq!(m.device.unwrap().read_bytes, (300 << 20) + (200 << 20));
    assert_eq!(row.hosts.len(), 2);
    // Stonewall: rank 1 ends first at 52 ms; by then rank 0 did half of
    // its bytes (linear, no series), rank 2 about a quarter.
    assert_eq!(row.stonewall_ns, 52_000_000);
    let by0 = a.bytes_by(52_000_000);
    assert_eq!(by0, (100u64 << 20) * 51 / 100);
    assert_eq!(
        row.stonewall_bytes,
        by0 + (100 << 20) + c.bytes_by(52_000_000)
    );
    let sum = super::super::ranks_sum::case_summaries(&[MpiRep {
        case: "x".into(),
        ..row
    }]);
    assert_eq!(sum[0].slowest_rank, Some(2));
}

#[test]
fn strided_ranks_take_every_nth_block_and_segmented_a_part_each() {
    use crate::plan::Pattern;
    use crate::run::worker::{IoGen, WorkerJob};
    let job = WorkerJob {
        pattern: Pattern::Read,
        block_size: 4096,
        start: 0,
        len: 4096 * 3,
        byte_budget: None,
        time_budget: None,
        at_least: None,
        sync: iopath_io::SyncPolicy::None,
        sync_every: None,
        rwmix_read_pct: 0,
        seed: 1,
        stream: 0,
        data: iopath_io::data::DataMode::Random,
        interval_ns: 1,
        copy_to_user: false,
        verify: None,
        hint: None,
        stride: (4, 1),
    };
    let mut g = IoGen::new(&job);
    let offs: Vec<u64> = (0..4).map(|_| g.next_req().1 / 4096).collect();
    assert_eq!(
        offs,
        vec![1, 5, 9, 1],
        "rank 1 of 4: blocks 1, 5, 9, then again"
    );
    let mut g = IoGen::new(&WorkerJob {
        pattern: Pattern::RandRead,
        ..job
    });
    for _ in 0..100 {
        let b = g.random_offset() / 4096;
        assert!(b % 4 == 1 && b < 12, "block {b}");
    }
    // Segments: 4 ranks over 40 blocks take 10 each, in rank order.
    let segs = as_ranks(4, |r| {
        let mut r2 = Ranks::alone();
        r2.layout = Some(FileLayout::SharedSegmented);
        r2.peers = r.peers;
        r2.flags = r.flags;
        r2.segment(40 * 4096, 4096)
    });
    assert_eq!(segs[2], (20 * 4096, 10 * 4096));
}

/// A plan of the methods `methods` on sequential reads in `dir`.
fn plan_of(methods: &[&str], dir: &str) -> crate::plan::Plan {
    let text =
        format!("[run]\ndir = {dir:?}\n[[case]]\nmethod = {methods:?}\npattern = \"read\"\n");
    let spec = crate::import::jobfile::parse("test.toml", &text).unwrap();
    crate::plan::Plan::from_spec(&spec, &Default::default()).unwrap()
}

#[test]
fn every_rank_takes_rank_0s_order_seed_and_the_same_arm_order() {
    // Each rank drew its own seed (no --order-seed): rank 0's wins, so
    // every rank runs the same arm in every slot.
    let out = as_ranks(3, |r| {
        let mut p = plan_of(&["null", "direct", "buffered"], ".");
        p.order_seed = 1000 + r.rank() as u64;
        r.agree_plan(&mut p).unwrap();
        // The arms' order over 4 rounds, as the scheduler draws it.
        let sched = crate::run::repeat::Schedule {
            fixed: Some(4),
            rule: None,
            warmup: 0,
            seed: p.order_seed,
            round_base: 0,
            case_timeout_ns: None,
            budget_ns: None,
        };
        let mut order = Vec::new();
        crate::run::repeat::run_job(3, &sched, |c| {
            order.push(c.arm);
            crate::run::repeat::RepOutcome::Done {
                bw: 1.0,
                wall_ns: 1,
            }
        });
        (p.order_seed, order)
    });
    assert!(out.iter().all(|o| o.0 == 1000), "{out:?}");
    assert!(out.iter().all(|o| o.1 == out[0].1), "{out:?}");
}

#[test]
fn ranks_given_different_plans_refuse_together() {
    let out = as_ranks(3, |r| {
        let methods: &[&str] = if r.rank() == 2 {
            &["null", "direct"]
        } else {
            &["null", "buffered"]
        };
        // Paths may differ (each rank its own directory).
        let dir = format!("/tmp/rank{}", r.rank());
        let mut p = plan_of(methods, &dir);
        r.agree_plan(&mut p)
            .map_err(|e| (format!("{e:#}"), e.is::<UsageError>()))
    });
    for o in &out {
        let (text, usage) = o.as_ref().unwrap_err();
        assert!(*usage, "a usage error (exit 2): {text}");
        assert!(
            text.starts_with("rank 2 (on h1) was given a different plan"),
            "{text}"
        );
    }
    let same = as_ranks(2, |r| {
        let dir = format!("/tmp/rank{}", r.rank());
        let mut p = plan_of(&["null"], &dir);
        r.agree_plan(&mut p).is_ok()
    });
    assert_eq!(same, vec![true, true], "only the paths differ");
}

#[test]
fn ranks_that_ran_different_cases_in_one_slot_fail_it() {
    let out = as_ranks(2, |r| {
        let case = if r.rank() == 0 {
            "null read"
        } else {
            "direct read"
        };
        let m = Measurement {
            io_bytes: 4096,
            ios: 1,
            ..Measurement::default()
        };
        let h = Histogram::<u64>::new_with_bounds(1, crate::run::worker::MAX_LAT_NS, 3).unwrap();
        let ok = RepOk {
            measurement: m,
            engine_notes: Vec::new(),
            facts: Vec::new(),
            queue_depth: 1,
            placement: Default::default(),
            hist: h,
            stream_hists: Vec::new(),
            verified: Default::default(),
        };
        let mut result: RunResult =
            serde_json::from_str(include_str!("../../tests/fixtures/report/run.json")).unwrap();
        result.mpi = r.info();
        r.barrier();
        match r.combine(Ok(ok), &mut result, case, 1, false) {
            Err(RepError::Fail(w)) => w,
            _ => String::new(),
        }
    });
    for w in &out {
        assert!(
            w.contains(
                "ranks out of step: rank 1 (h0) ran direct read where rank 0 (h0) ran null read"
            ),
            "{w}"
        );
    }
}

/// The file blocks every thread of every rank reads in one sequential
/// pass of a shared file in `layout`: (rank, thread, blocks).
fn pass_blocks(layout: FileLayout, n: usize, threads: u64, blocks: u64) -> Vec<Vec<u64>> {
    use crate::plan::Pattern;
    use crate::run::worker::{IoGen, WorkerJob};
    let bs = 4096u64;
    let per_rank = as_ranks(n, |r| {
        let mut me = Ranks::alone();
        me.layout = Some(layout);
        me.peers = r.peers;
        me.flags = r.flags;
        let (base, span) = me.segment(blocks * bs, bs);
        let stride = me.stride().unwrap_or((1, 0));
        (0..threads)
            .map(|i| {
                let (start, len) = Ranks::slice(base, span, bs, threads, i);
                let job = WorkerJob {
                    pattern: Pattern::Read,
                    block_size: bs as u32,
                    start,
                    len,
                    byte_budget: None,
                    time_budget: None,
                    at_least: None,
                    sync: iopath_io::SyncPolicy::None,
                    sync_every: None,
                    rwmix_read_pct: 0,
                    seed: 1,
                    stream: i,
                    data: iopath_io::data::DataMode::Random,
                    interval_ns: 1,
                    copy_to_user: false,
                    verify: None,
                    hint: None,
                    stride,
                };
                let mut g = IoGen::new(&job);
                (0..len / bs).map(|_| g.next_req().1 / bs).collect()
            })
            .collect::<Vec<Vec<u64>>>()
    });
    per_rank.into_iter().flatten().collect()
}

#[test]
fn the_threads_of_all_ranks_cover_a_shared_file_once_each() {
    for layout in [FileLayout::SharedStrided, FileLayout::SharedSegmented] {
        for n in 1..=4usize {
            for threads in 1..=3u64 {
                for blocks in [24u64, 25, 37] {
                    let parts = pass_blocks(layout, n, threads, blocks);
                    let mut all: Vec<u64> = parts.iter().flatten().copied().collect();
                    let total = all.len();
                    all.sort_unstable();
                    all.dedup();
                    let what = format!(
                        "{layout:?}, {n} ranks x {threads} threads, {blocks} blocks: {parts:?}"
                    );
                    assert_eq!(all.len(), total, "no block twice: {what}");
                    assert!(all.iter().all(|&b| b < blocks), "inside the file: {what}");
                    // Each thread its equal share: every block of the file
                    // but the tail that does not divide among them.
                    let each = blocks / n as u64 / threads;
                    assert!(parts.iter().all(|p| p.len() as u64 == each), "{what}");
                    if blocks % (n as u64 * threads) == 0 {
                        assert_eq!(all, (0..blocks).collect::<Vec<_>>(), "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_hosts_device_count_runs_from_its_first_ranks_before_to_its_last_ranks_after() {
    let raw = |before: u64, after: u64| RawDisk {
        disks: "vda".into(),
        before: DiskCounters {
            read_bytes: before << 20,
            ..DiskCounters::default()
        },
        after: DiskCounters {
            read_bytes: after << 20,
            ..DiskCounters::default()
        },
    };
    // Rank 0 counted 100..200 MiB, rank 1 150..300 MiB of the same disk:
    // each rank's own delta (100, 150) misses the other's part.
    let mut a = ran(100 << 20, 0, 10, 100 << 20, 1000);
    a.disk = Some(raw(100, 200));
    let mut b = ran(100 << 20, 5, 20, 150 << 20, 1000);
    b.disk = Some(raw(150, 300));
    let (m, _, row, _) = aggregate(&[(0, "a", &a), (1, "a", &b)], false);
    assert_eq!(m.device.unwrap().read_bytes, 200 << 20);
    assert_eq!(row.hosts[0].device.unwrap().read_bytes, 200 << 20);
    // Without raw counters from every rank: the largest delta, as before.
    b.disk = None;
    let (m, _, _, _) = aggregate(&[(0, "a", &a), (1, "a", &b)], false);
    assert_eq!(m.device.unwrap().read_bytes, 150 << 20);
}

#[test]
fn a_hosts_rate_is_its_bytes_over_its_own_common_interval() {
    // Host a: rank 0 100 MiB in 0..100 ms, rank 1 100 MiB in 100..200 ms.
    // Their own rates sum to 2000 MiB/s; the host moved 200 MiB in 200 ms.
    let a = ran(100 << 20, 0, 100_000_000, 0, 1000);
    let b = ran(100 << 20, 100_000_000, 200_000_000, 0, 1000);
    let (_, _, row, _) = aggregate(&[(0, "a", &a), (1, "a", &b)], false);
    let want = (200u64 << 20) as f64 / 0.2;
    assert_eq!(row.hosts[0].common_ns, 200_000_000);
    assert!((row.hosts[0].bw_bytes_per_s - want).abs() < 1e-6 * want);
    let sum = super::super::ranks_sum::case_summaries(&[MpiRep {
        case: "x".into(),
        ..row
    }]);
    assert!((sum[0].hosts[0].bw_bytes_per_s - want).abs() < 1e-6 * want);
}

#[test]
fn ranks_on_different_file_systems_are_noted() {
    let out = as_ranks(3, |r| {
        r.differences(if r.rank() == 2 {
            "tmpfs, no block device"
        } else {
            "ext4 on vda"
        })
    });
    // Its words: `report::text::skips` (snapshot `skip_and_rank_note_words`).
    let want = crate::result::mpi::examples::targets_differ();
    for o in &out {
        assert_eq!(o.as_ref(), Some(&want));
    }
    let same = as_ranks(2, |r| r.differences("ext4 on vda"));
    assert_eq!(same, vec![None, None]);
}

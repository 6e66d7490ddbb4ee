//! A sync every N writes (`--sync-every`, fio's `fsync=N` / `fdatasync=N`,
//! issue 30 item 4): each worker waits for its writes in flight after every
//! N-th, syncs, and goes on; every method runs it, the syncs are counted
//! per repetition, and the result exports back to fio.

mod common;

use common::*;
use predicates::prelude::*;
use serde_json::Value;

/// Every repetition of every case that ran: its syncs equal its writes /
/// `n` (one thread each), and the case says what it ran.
fn each_rep_synced_every(v: &Value, n: u64, every: &str) -> usize {
    let mut reps = 0;
    for c in v["cases"].as_array().unwrap() {
        if c["skipped"].is_object() || c["error"].is_string() {
            continue;
        }
        assert_eq!(c["sync_every"], every, "{}", c["method"]);
        assert_eq!(c["threads"], 1, "{}", c["method"]);
        for r in c["repetitions"].as_array().unwrap() {
            let writes = r["write_ios"].as_u64().unwrap();
            assert!(writes > 0, "{}", c["method"]);
            assert_eq!(r["syncs"]["count"], writes / n, "{}: {r}", c["method"]);
            reps += 1;
        }
    }
    reps
}

#[test]
fn a_fio_job_with_fdatasync_16_runs_through_every_method_with_a_verdict() {
    let dir = scratch();
    let job = dir.path().join("sync.fio");
    std::fs::write(&job, "[w]\nrw=randwrite\nbs=4k\nsize=1m\nfdatasync=16\n").unwrap();
    let v = run_json(
        dir.path(),
        &[
            "--fio",
            job.to_str().unwrap(),
            "--concurrency",
            "1",
            "--repeat",
            "6",
        ],
    );
    // The job's own engine (psync: buffered) and the others.
    let ran = each_rep_synced_every(&v, 16, "16:fdatasync");
    assert!(
        ran >= 6 * 3,
        "at least three methods ran: {ran} repetitions"
    );
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 1, "{verdicts:#?}");
    assert_eq!(verdicts[0]["sync_every"], "16:fdatasync");
    assert_eq!(v["config"]["conditions"]["sync_every"][0], "16:fdatasync");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn the_flag_syncs_a_direct_write_case_and_exports_to_fio() {
    let dir = scratch();
    let args = [
        "--methods",
        "direct",
        "--patterns",
        "randwrite",
        "--concurrency",
        "1",
        "--size",
        "1M",
        "--touch",
        "400k",
        "--sync",
        "none",
        "--sync-every",
        "8",
    ];
    let v = run_json(dir.path(), &args);
    // 100 writes: 12 syncs, each an fsync.
    assert_eq!(each_rep_synced_every(&v, 8, "8:fsync"), 1);
    let c = case(&v, "direct", "randwrite");
    assert_eq!(c["repetitions"][0]["write_ios"], 100);
    let syncs = &c["summary"]["syncs"];
    assert_eq!(syncs["count"], 12);
    let (total, mean) = (
        syncs["total_ns"].as_u64().unwrap(),
        syncs["mean_ns"].as_u64().unwrap(),
    );
    assert!(total > 0 && mean == total / 12, "{syncs}");
    // fio's shape of the same result: the job's fsync=8.
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(args)
        .args([
            "--repeat",
            "1",
            "--json",
            "-",
            "--json-format",
            "fio",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fio = json_of(&out.stdout);
    let o = &fio["jobs"][0]["job options"];
    assert_eq!(o["fsync"], "8", "{o}");
    assert!(o.get("end_fsync").is_none(), "{o}");
    assert_eq!(
        fio["jobs"][0]["sync"]["total_ios"], 12,
        "{}",
        fio["jobs"][0]
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn fsync_and_fdatasync_together_are_refused_with_the_reason() {
    let dir = scratch();
    let job = dir.path().join("both.fio");
    std::fs::write(&job, "[w]\nrw=randwrite\nsize=1m\nfsync=4\nfdatasync=4\n").unwrap();
    iopath()
        .args(["run", "--fio"])
        .arg(&job)
        .args(["--dir"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("fsync=4 (")
                .and(predicate::str::contains("fdatasync=4 ("))
                .and(predicate::str::contains("keep fsync= or fdatasync=")),
        );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_bad_sync_interval_and_sync_each_beside_it_exit_2() {
    let dir = scratch();
    for (args, why) in [
        (&["--sync-every", "0"][..], "not a sync interval"),
        (&["--sync-every", "8:msync"][..], "not a sync interval"),
        (
            &["--sync-every", "8", "--sync", "each"][..],
            "--sync each already syncs after every write",
        ),
    ] {
        iopath()
            .args([
                "run",
                "--methods",
                "null",
                "--patterns",
                "randwrite",
                "--dir",
            ])
            .arg(dir.path())
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(why));
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn import_fio_writes_the_sync_interval_as_a_job_file_key() {
    let dir = scratch();
    let job = dir.path().join("s.fio");
    std::fs::write(&job, "[w]\nrw=write\nsize=1m\nfsync=32\nend_fsync=1\n").unwrap();
    let out = iopath().arg("import-fio").arg(&job).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = String::from_utf8(out.stdout).unwrap();
    let spec = iopath::import::jobfile::parse("import", &toml).unwrap();
    let every = spec.cases[0]
        .sync_every
        .expect("sync_every in the job file");
    assert_eq!((every.writes, every.call), (32, iopath_io::SyncCall::Fsync));
    assert_eq!(spec.cases[0].sync, Some(iopath_io::SyncPolicy::End));
}

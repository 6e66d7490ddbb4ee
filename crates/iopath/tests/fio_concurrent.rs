//! Issue 30 item 4: fio jobs with no `stonewall` between them run at the
//! same time, as the streams of one case per method; each stream's
//! figures are its own, the case's the streams together.

mod common;

use common::{iopath, leftovers, run_json, scratch};
use predicates::prelude::*;
use serde_json::Value;

/// A 4k random reader at depth 4 beside a 1 MiB sequential writer that
/// syncs at its end; `extra` goes into the writer.
fn two_jobs(extra: &str) -> String {
    format!(
        "[global]\nsize=8m\nruntime=1\n\n\
         [reader]\nrw=randread\nbs=4k\niodepth=4\nioengine=libaio\ndirect=1\n\n\
         [writer]\nrw=write\nbs=1m\nend_fsync=1\n{extra}"
    )
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("a count: {v}"))
}

/// Every stream of every case that ran: its bytes are its requests times
/// its block size, and the streams' requests and bytes add up to the
/// case's in each repetition.
fn streams_add_up(v: &Value) -> usize {
    let mut ran = 0;
    for c in v["cases"].as_array().unwrap() {
        if !c["skipped"].is_null() {
            continue;
        }
        assert!(c["error"].is_null(), "{}: {}", c["method"], c["error"]);
        ran += 1;
        let streams = c["streams"].as_array().unwrap();
        let names: Vec<&str> = streams
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["reader", "writer"]);
        for s in streams {
            let sum = &s["summary"];
            let bs = u(&s["block_size"]);
            assert!(u(&sum["ios"]) > 0, "{}: {s}", c["method"]);
            assert_eq!(u(&sum["io_bytes"]), u(&sum["ios"]) * bs, "{s}");
            assert!(sum["lat_ns"]["p99"].as_u64().unwrap() > 0, "{s}");
        }
        assert_eq!(streams[0]["pattern"], "randread");
        assert_eq!(u(&streams[0]["summary"]["write_ios"]), 0);
        assert_eq!(u(&streams[1]["summary"]["read_ios"]), 0);
        for m in c["repetitions"].as_array().unwrap() {
            let each = m["streams"].as_array().unwrap();
            let total = |k: &str| each.iter().map(|s| u(&s[k])).sum::<u64>();
            assert_eq!(total("ios"), u(&m["ios"]), "{m}");
            assert_eq!(total("io_bytes"), u(&m["io_bytes"]), "{m}");
        }
    }
    ran
}

#[test]
fn jobs_without_stonewall_run_at_once_with_a_verdict_and_figures_per_stream() {
    let dir = scratch();
    let job = dir.path().join("two.fio");
    std::fs::write(&job, two_jobs("")).unwrap();
    let v = run_json(
        dir.path(),
        &["--fio", job.to_str().unwrap(), "--repeat", "3"],
    );
    let cases = v["cases"].as_array().unwrap();
    // One case per method, each the group.
    assert!(cases.len() >= 5, "{}", cases.len());
    assert!(cases.iter().all(|c| c["label"] == "reader + writer"));
    assert_eq!(cases[0]["method"], "aio", "the reader's own engine first");
    assert!(streams_add_up(&v) >= 4);
    // One verdict, over the group's throughput.
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert_eq!(verdicts[0]["label"], "reader + writer");
    assert!(verdicts[0]["ranking"].as_array().unwrap().len() >= 4);
    // Each stream on its own part of the file (fio gives each job a file).
    assert_eq!(u(&v["target"]["size_bytes"]), 16 << 20, "{}", v["target"]);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_sync_every_n_writes_is_kept_by_its_stream() {
    let dir = scratch();
    let job = dir.path().join("sync.fio");
    std::fs::write(&job, two_jobs("fdatasync=16\n").replace("bs=1m", "bs=128k")).unwrap();
    let v = run_json(
        dir.path(),
        &[
            "--fio",
            job.to_str().unwrap(),
            "--methods",
            "buffered,direct",
        ],
    );
    assert!(streams_add_up(&v) >= 1);
    for c in v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["skipped"].is_null())
    {
        assert_eq!(c["streams"][1]["sync_every"], "16:fdatasync", "{c}");
        assert!(c["streams"][0]["sync_every"].is_null());
        for m in c["repetitions"].as_array().unwrap() {
            // The writer's one thread syncs after every 16 of its writes;
            // the reader never.
            let writes = u(&m["streams"][1]["write_ios"]);
            assert_eq!(u(&m["syncs"]["count"]), writes / 16, "{m}");
        }
    }
}

#[test]
fn a_group_that_cannot_run_together_says_why() {
    let dir = scratch();
    let job = dir.path().join("bad.fio");
    // Different runtimes: iopath runs a group for one.
    std::fs::write(&job, two_jobs("runtime=2\n")).unwrap();
    iopath()
        .args(["run", "--fio"])
        .arg(&job)
        .arg("--dir")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "[writer] its runtime differs from job reader's, which runs at the same time",
        ));
    // fio's verify in a group: a stream's blocks may be another's writes.
    let verified = two_jobs("").replace("[global]\n", "[global]\nverify=crc32c\n");
    std::fs::write(&job, verified).unwrap();
    iopath()
        .args(["run", "--fio"])
        .arg(&job)
        .arg("--dir")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--verify checks one workload"));
    // `--concurrency` matches methods at one number of requests in flight;
    // a group's streams keep their own: the flag is named, not the jobs.
    std::fs::write(&job, two_jobs("")).unwrap();
    iopath()
        .args(["run", "--fio"])
        .arg(&job)
        .args(["--concurrency", "1", "--dir"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("leave out --concurrency"));
    assert!(leftovers(dir.path()).is_empty());
}

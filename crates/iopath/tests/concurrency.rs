//! Concurrency matching (issue 28, item 1): `--concurrency N` compares the
//! methods at N requests in flight, each reaching them its own way, and
//! the cases of one N are one job with one verdict.

mod common;

use common::{codes, iopath, run_json, scratch};
use serde_json::Value;

/// `(threads, queue_depth, concurrency)` of each case of `method`.
fn ways(v: &Value, method: &str) -> Vec<(u64, u64, u64)> {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["method"] == method)
        .map(|c| {
            (
                c["threads"].as_u64().unwrap(),
                c["queue_depth"].as_u64().unwrap(),
                c["concurrency"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn each_case_records_its_concurrency_and_the_threads_and_depth_it_ran_with() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "4M",
            "--methods",
            "uring,direct,mmap,threadpool",
            "--patterns",
            "randread",
            "--concurrency",
            "1,4",
            "--time",
            "20ms",
            "--repeat",
            "2",
        ],
    );
    let usable = |m: &str| {
        v["probe"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["method"] == m && p["usable"] == true)
    };
    assert_eq!(ways(&v, "direct"), [(1, 1, 1), (4, 1, 4)]);
    assert_eq!(ways(&v, "mmap"), [(1, 1, 1), (4, 1, 4)]);
    if usable("uring") {
        assert_eq!(ways(&v, "uring"), [(1, 1, 1), (1, 4, 4)]);
    }
    assert_eq!(ways(&v, "threadpool"), [(1, 1, 1), (1, 4, 4)]);
    // One verdict per N, each over every method, and saying its N.
    let verdicts = v["verdicts"].as_array().unwrap();
    let ns: Vec<u64> = verdicts
        .iter()
        .map(|v| v["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(ns, [1, 4], "{verdicts:?}");
    for verdict in verdicts {
        let n = verdict["concurrency"].as_u64().unwrap();
        // mmap re-reading a 4 MiB file is served from memory: set apart
        // (docs/methodology.md, "The device apart from memory"), still
        // one of the verdict's methods.
        let ranked = verdict["ranking"].as_array().unwrap().len()
            + verdict["set_apart"].as_array().map_or(0, Vec::len);
        assert_eq!(ranked, if usable("uring") { 4 } else { 3 }, "{verdict}");
        let fact = verdict["facts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "in_flight")
            .expect("an in_flight fact");
        assert_eq!(fact["requests"].as_u64(), Some(n), "{fact}");
        let direct = fact["ways"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["method"] == "direct")
            .unwrap();
        assert_eq!(
            (direct["threads"].as_u64(), direct["depth"].as_u64()),
            (Some(n), Some(1))
        );
    }
    // Matched: no synchronous method was capped below what it was given.
    assert!(!codes(&v).contains(&"depth_capped".to_string()), "{v}");
    assert!(common::leftovers(dir.path()).is_empty());
}

#[test]
fn qd_beside_concurrency_is_a_usage_error() {
    let out = iopath()
        .args(["run", "--concurrency", "8", "--qd", "4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--qd and --concurrency"), "{err}");
}

#[test]
fn a_split_that_does_not_divide_the_concurrency_is_a_usage_error() {
    let out = iopath()
        .args([
            "run",
            "--concurrency",
            "6",
            "--threads",
            "4",
            "--patterns",
            "randread",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--threads 4"), "{err}");
}

#[test]
fn qd_alone_still_caps_synchronous_methods_and_says_so() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "4M",
            "--methods",
            "direct,threadpool",
            "--patterns",
            "randread",
            "--qd",
            "4",
            "--time",
            "20ms",
        ],
    );
    let direct = common::case(&v, "direct", "randread");
    assert_eq!(direct["queue_depth"], 1);
    assert!(direct.get("concurrency").is_none(), "{direct}");
    assert!(codes(&v).contains(&"depth_capped".to_string()), "{v}");
}

#[test]
fn a_job_file_sets_concurrency_like_the_flag() {
    let dir = scratch();
    let job = dir.path().join("job.toml");
    std::fs::write(
        &job,
        "[run]\nsize = \"4M\"\ntime = \"20ms\"\nrepeat = 1\n[[case]]\nmethod = [\"direct\", \"threadpool\"]\npattern = \"randread\"\nconcurrency = 2\n",
    )
    .unwrap();
    let out = iopath()
        .arg("run")
        .arg(&job)
        .arg("--dir")
        .arg(dir.path())
        .args(["--json", "-", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v = common::json_of(&out.stdout);
    assert_eq!(ways(&v, "direct"), [(2, 1, 2)]);
    assert_eq!(ways(&v, "threadpool"), [(1, 2, 2)]);
    assert_eq!(v["verdicts"].as_array().unwrap().len(), 1);
    std::fs::remove_file(&job).unwrap();
    assert!(common::leftovers(dir.path()).is_empty());
}

/// The thread pool keeps N in flight with a pool of N threads serving one
/// submitter: its case and the verdict's `in_flight` fact say the pool's
/// size, not "1 thread at depth N".
#[test]
fn a_thread_pool_is_described_by_its_pool_of_threads() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "4M",
            "--methods",
            "direct,threadpool",
            "--patterns",
            "randread",
            "--concurrency",
            "4",
            "--time",
            "20ms",
            "--repeat",
            "2",
        ],
    );
    let pool = common::case(&v, "threadpool", "randread");
    assert_eq!(pool["pool_threads"].as_u64(), Some(4), "{pool}");
    let direct = common::case(&v, "direct", "randread");
    assert!(direct["pool_threads"].is_null(), "{direct}");
    let fact = v["verdicts"][0]["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "in_flight")
        .expect("an in_flight fact");
    let way = fact["ways"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["method"] == "threadpool")
        .unwrap();
    assert_eq!(way["pool"].as_u64(), Some(4), "{fact}");
    assert!(common::leftovers(dir.path()).is_empty());
}

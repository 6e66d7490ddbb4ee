//! Buffer backing and the run's conditions (issue 28, item 4): iopath's
//! buffers are base pages by default, as a program's and fio's are; huge
//! pages are a variant put beside them; the conditions that move a figure
//! are in the result's config.

mod common;

use serde_json::Value;

fn cases(v: &Value) -> &Vec<Value> {
    v["cases"].as_array().unwrap()
}

/// A 64 KiB O_DIRECT random read ran 1.5x faster from huge-page buffers:
/// the default must be base pages, and the result must say which.
#[test]
fn default_buffers_are_base_pages_and_the_config_records_the_conditions() {
    let dir = common::scratch();
    let v = common::run_json(
        dir.path(),
        &[
            "--size",
            "8M",
            "--methods",
            "direct,uring",
            "--patterns",
            "randread",
            "--bs",
            "64k",
            "--qd",
            "4",
            "--time",
            "50ms",
        ],
    );
    for c in cases(&v) {
        assert_eq!(c["buffers"], "pages", "{}", c["method"]);
    }
    let k = &v["config"]["conditions"];
    assert_eq!(k["buffers"], serde_json::json!(["pages"]));
    assert_eq!(k["uring_registered"], true);
    assert_eq!(k["random_offsets"], "with-replacement");
    assert_eq!(
        k["cached_passes"], "one",
        "a cold cache stops after one pass"
    );
    assert!(common::leftovers(dir.path()).is_empty());
}

/// `--buffers pages,huge` runs each method with both, as two arms of one
/// job, and the verdict puts each huge arm against its pages arm.
#[test]
fn buffers_pages_huge_are_two_arms_of_one_job_with_a_verdict() {
    let dir = common::scratch();
    let v = common::run_json(
        dir.path(),
        &[
            "--size",
            "8M",
            "--methods",
            "uring",
            "--buffers",
            "pages,huge",
            "--patterns",
            "randread",
            "--bs",
            "64k",
            "--qd",
            "4",
            "--time",
            "30ms",
            "--repeat",
            "3",
        ],
    );
    let got: Vec<(&str, &str)> = cases(&v)
        .iter()
        .map(|c| {
            (
                c["method"].as_str().unwrap(),
                c["buffers"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [("uring", "pages"), ("uring+hugebuf", "huge")]);
    assert!(
        cases(&v).iter().all(|c| c.get("arm").is_none()),
        "not A/A arms"
    );
    assert_eq!(
        v["config"]["conditions"]["buffers"],
        serde_json::json!(["pages", "huge"])
    );
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 1, "one job, one verdict: {verdicts:?}");
    let fact = verdicts[0]["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "huge_buffers")
        .expect("a huge_buffers fact");
    assert_eq!(fact["block_size"], 65536);
    let pair = &fact["pairs"][0];
    assert_eq!(
        (&pair["pages"], &pair["huge"]),
        (&"uring".into(), &"uring+hugebuf".into())
    );
    assert!(pair["ratio"].as_f64().unwrap() > 0.0);
}

/// The job file's `buffers` key is the flag's.
#[test]
fn a_job_file_sets_the_buffers_of_its_entry() {
    let dir = common::scratch();
    let job = dir.path().join("huge.toml");
    std::fs::write(
        &job,
        "[[case]]\nmethod = \"direct\"\npattern = \"randread\"\nbs = \"64k\"\nbuffers = \"huge\"\n",
    )
    .unwrap();
    let v = common::run_json(
        dir.path(),
        &[job.to_str().unwrap(), "--size", "8M", "--time", "30ms"],
    );
    let c = &cases(&v)[0];
    assert_eq!(
        (&c["method"], &c["buffers"]),
        (&"direct+hugebuf".into(), &"huge".into())
    );
    let out = common::iopath()
        .args(["run", "--buffers", "giant", "--size", "8M", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pages, huge"));
}

/// Issue 28: a warm 1 MiB buffered read given a time limit must run that
/// time (starting over at the end of the file), not one ~50 ms pass.
#[test]
fn a_warm_cached_read_runs_its_time_limit_not_one_pass() {
    let dir = common::scratch();
    let v = common::run_json(
        dir.path(),
        &[
            "--size",
            "16M",
            "--methods",
            "buffered",
            "--patterns",
            "read",
            "--bs",
            "1M",
            "--cache",
            "warm",
            "--time",
            "1s",
        ],
    );
    let c = &cases(&v)[0];
    let rep = c["repetitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["warmup"] != true)
        .unwrap();
    let ns = rep["duration_ns"].as_u64().unwrap();
    assert!(ns >= 800_000_000, "ran {ns} ns of a 1 s limit");
    assert!(
        rep["io_bytes"].as_u64().unwrap() > 2 * (16 << 20),
        "more than one pass"
    );
    assert_eq!(c["passes"]["kind"], "wrapped");
    assert_eq!(v["config"]["conditions"]["cached_passes"], "repeated");
}

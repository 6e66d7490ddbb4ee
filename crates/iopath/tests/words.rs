//! What a run says when its time is short (issue 28, items c and f): a
//! fio job that cannot be called in its `runtime` says so plainly, and a
//! `--budget` the floor of rounds cannot keep to is estimated at least
//! that floor, on a line that keeps to `COLUMNS`.

mod common;

use common::*;

/// Two fio jobs of 1 s each over the default methods: too little for
/// the rounds a call needs. Each verdict records the second it had, and
/// its line says they were too close to call in that time.
#[test]
fn a_short_fio_job_is_too_close_to_call_in_its_runtime() {
    let dir = scratch();
    let job = dir.path().join("short.fio");
    std::fs::write(
        &job,
        "[global]\nsize=4m\nruntime=1\ntime_based\n\n[rr]\nrw=randread\nbs=4k\n\n[sr]\nstonewall\nrw=read\nbs=128k\n",
    )
    .unwrap();
    let json = dir.path().join("out.json");
    let out = iopath()
        .args(["run", "--fio"])
        .arg(&job)
        .arg("--dir")
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2, "{stdout}");
    // Fewer rounds than any call takes (6): each job either makes no
    // call, or finds its methods too close to call (never "equally
    // good", which takes an interval within the margin).
    for d in verdicts {
        assert_eq!(d["budget_ns"], 1_000_000_000u64, "{d:#}");
        let facts = d["facts"].as_array().unwrap();
        let said = if d["called"] == false {
            &facts[0]
        } else {
            facts.last().unwrap()
        };
        assert!(
            ["no_call_rounds", "no_call_repetitions", "too_close_to_call"]
                .contains(&said["code"].as_str().unwrap()),
            "{facts:#?}"
        );
        assert_eq!(said["budget_ns"], 1_000_000_000u64, "{said:#}");
    }
    let lines = stdout
        .lines()
        .filter(|l| l.starts_with("→ too close to call in 1 s"))
        .count();
    assert_eq!(lines, 2, "{stdout}");
    assert!(!stdout.contains(" leads,"), "{stdout}");
    std::fs::remove_file(&json).unwrap();
    assert!(leftovers(dir.path()).is_empty());
}

/// `--budget 1ms`: the run takes the rounds every method runs whatever
/// they cost, and the estimate says at least that (it said "at most
/// about 0 s"), wrapped to `COLUMNS` like the rest of stderr.
#[test]
fn a_budget_below_the_floor_is_estimated_at_least_the_floor_within_columns() {
    let dir = scratch();
    let out = iopath()
        .env("COLUMNS", "80")
        .args([
            "run",
            "--budget",
            "1ms",
            "--size",
            "4M",
            "--concurrency",
            "1",
        ])
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("iopath: estimated duration: at least about "),
        "{stderr}"
    );
    assert!(!stderr.contains("at most about 0 s"), "{stderr}");
    let estimate: Vec<&str> = stderr
        .lines()
        .take_while(|l| l.starts_with("iopath: estimated") || l.starts_with("  "))
        .collect();
    assert!(estimate.len() > 1, "wrapped: {stderr}");
    for l in &estimate {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    assert!(leftovers(dir.path()).is_empty());
}

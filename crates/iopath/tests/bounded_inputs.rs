//! Nothing unbounded (issue 26, items 2, 7 and 10): the cases of a run, the
//! size of a job file and of a result are bounded, each refused with exit 2
//! naming its bound and the variable that raises it; work is linear in the
//! cases (a 6,000-case run stops at Ctrl-C, `compare` and `report` of
//! tens of thousands of cases finish); a usage error comes before the
//! estimate. No timing assertions: every deadline is generous, there only
//! so that a regression fails instead of hanging.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::*;

/// The binary, as a plain `Command` (spawned and waited on here).
fn bin() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("iopath"))
}

/// `cmd`'s output, or a failure when it has not ended `secs` seconds on
/// (it is killed then). Its output is read as it comes (a full pipe would
/// stop it).
fn output_within(cmd: &mut Command, secs: u64) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(out) => out,
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            panic!("still running after {secs} s");
        }
    }
}

/// A job file of `n` `[[case]]` entries of `method` reading.
fn job_file(dir: &Path, n: usize, method: &str) -> PathBuf {
    let p = dir.join(format!("{n}-{method}.toml"));
    let mut text = String::from("[run]\nsize = \"1M\"\n");
    for _ in 0..n {
        text.push_str(&format!(
            "[[case]]\nmethod = \"{method}\"\npattern = \"read\"\n"
        ));
    }
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_job_of_6000_cases_is_refused_naming_the_bound_before_any_estimate() {
    let dir = scratch();
    let job = job_file(dir.path(), 6000, "null");
    let out = output_within(
        bin()
            .arg("run")
            .arg(&job)
            .arg("--dir")
            .arg(dir.path())
            .args(["--time", "10ms"])
            .env_remove("IOPATH_MAX_CASES"),
        60,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("more than 4096 cases") && err.contains("IOPATH_MAX_CASES"),
        "{err}"
    );
    assert!(!err.contains("estimated duration"), "{err}");
    // A bound that is not a number is refused as such.
    let out = bin()
        .arg("run")
        .arg(&job)
        .arg("--dir")
        .arg(dir.path())
        .env("IOPATH_MAX_CASES", "lots")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("IOPATH_MAX_CASES=lots"), "{err}");
}

/// Lines of `child`'s stderr as they come.
fn stderr_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    rx
}

/// Bytes process `pid` has read (`rchar`, page cache included).
fn read_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn ctrl_c_ends_a_6000_case_run_and_removes_its_test_file() {
    let dir = scratch();
    let job = job_file(dir.path(), 6000, "buffered");
    let mut child = bin()
        .arg("run")
        .arg(&job)
        .arg("--dir")
        .arg(dir.path())
        .args(["--time", "10ms"])
        .env("IOPATH_MAX_CASES", "6000")
        .env("IOPATH_NO_TMPFILE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = stderr_lines(&mut child);
    let deadline = Instant::now() + Duration::from_secs(120);
    // Under way: the estimate said, the test file held, and 64 MiB read
    // from it (cases measured, not only the set-up before them).
    let first = lines.recv_timeout(Duration::from_secs(120)).unwrap();
    assert!(first.contains("estimated duration"), "{first}");
    while holds_file_in(child.id(), dir.path()).is_none() || read_bytes(child.id()) < 64 << 20 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before measuring"
        );
        assert!(Instant::now() < deadline, "not measuring after 120 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    // A debug build ends within about 2 s of it on a loaded 2-core
    // machine; before, it went on for many minutes.
    let stop = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > stop {
            child.kill().unwrap();
            panic!("still running 30 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let rest: Vec<String> = lines.iter().collect();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(rest.iter().any(|l| l.contains("interrupted")), "{rest:?}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn a_job_file_over_its_bound_is_refused_naming_the_variable() {
    let dir = scratch();
    let p = dir.path().join("big.toml");
    let mut text = String::from("[[case]]\nmethod = \"null\"\npattern = \"read\"\n");
    text.push_str(&"# padding\n".repeat(110_000));
    std::fs::write(&p, &text).unwrap();
    let run = |limit: Option<&str>| {
        let mut cmd = bin();
        cmd.arg("run").arg(&p).arg("--dir").arg(dir.path());
        cmd.args(["--time", "10ms", "--repeat", "1", "--quiet"]);
        match limit {
            Some(l) => cmd.env("IOPATH_MAX_JOB_FILE", l),
            None => cmd.env_remove("IOPATH_MAX_JOB_FILE"),
        };
        cmd.output().unwrap()
    };
    let out = run(None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("big.toml") && err.contains(&format!("IOPATH_MAX_JOB_FILE={}", text.len())),
        "{err}"
    );
    // Raised, it is read.
    let out = run(Some("2M"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A fio job file has the same bound.
    let fio = dir.path().join("big.fio");
    let mut text = String::from("[job]\nrw=read\nbs=4k\nsize=1M\n");
    text.push_str(&"; padding\n".repeat(110_000));
    std::fs::write(&fio, &text).unwrap();
    let out = bin()
        .arg("import-fio")
        .arg(&fio)
        .env_remove("IOPATH_MAX_JOB_FILE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("IOPATH_MAX_JOB_FILE"), "{err}");
}

/// `case` without its repetitions and figures: the matching and grouping
/// are what is measured, not the parsing of a debug build.
fn lean(case: &Value) -> Value {
    let mut case = case.clone();
    for k in ["repetitions", "notes"] {
        case[k] = Value::Array(Vec::new());
    }
    for k in [
        "summary",
        "stats",
        "repetition_control",
        "passes",
        "placement",
    ] {
        case[k] = Value::Null;
    }
    case
}

/// A real result of one `null` case, and the same with its one case made
/// `n` cases of different block sizes (each its own job).
fn results(dir: &Path, n: usize) -> (PathBuf, PathBuf) {
    let small = dir.join("small.json");
    let out = bin()
        .args(["run", "--methods", "null", "--patterns", "read"])
        .args(["--size", "1M", "--time", "10ms", "--repeat", "1", "--quiet"])
        .arg("--dir")
        .arg(dir)
        .arg("--json")
        .arg(&small)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&std::fs::read(&small).unwrap()).unwrap();
    let case = lean(&v["cases"][0]);
    v["cases"] = (0..n)
        .map(|i| {
            let mut c = case.clone();
            c["block_size"] = Value::from(4096 * (i as u64 + 1));
            c
        })
        .collect();
    v["verdicts"] = Value::Array(Vec::new());
    let big = dir.join("big.json");
    std::fs::write(&big, serde_json::to_vec(&v).unwrap()).unwrap();
    (small, big)
}

#[test]
fn compare_and_report_of_27000_cases_finish_and_a_result_over_its_bound_is_refused() {
    let dir = scratch();
    let (small, big) = results(dir.path(), 27_000);
    // Before: matching and grouping were quadratic (over 60 s for 26,800
    // cases in a release build).
    let out = output_within(
        bin()
            .arg("compare")
            .arg(&big)
            .arg(&big)
            .env_remove("IOPATH_MAX_RESULT"),
        120,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = output_within(
        bin()
            .arg("report")
            .arg(&big)
            .env_remove("IOPATH_MAX_RESULT"),
        120,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Over the bound: exit 2, naming it, for both commands.
    let len = std::fs::metadata(&small).unwrap().len();
    for args in [vec!["report"], vec!["compare"]] {
        let mut cmd = bin();
        cmd.args(&args).arg(&small);
        if args[0] == "compare" {
            cmd.arg(&small);
        }
        let out = cmd.env("IOPATH_MAX_RESULT", "1k").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("small.json") && err.contains(&format!("IOPATH_MAX_RESULT={len}")),
            "{err}"
        );
    }
}

#[test]
fn a_test_file_that_cannot_fit_is_refused_before_the_estimate() {
    let dir = scratch();
    let out = bin()
        .args(["run", "--size", "100T", "--time", "10ms"])
        .args(["--methods", "buffered", "--patterns", "read"])
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("does not fit"), "{err}");
    assert!(!err.contains("estimated duration"), "{err}");
}

/// Job files of up to a little over [`iopath::model::limits::CASES`] cases (each
/// entry one to three methods), and results of up to 30,000 cases, read
/// as `run`, `report` and `compare` read them: a plan within the bound is
/// made, one over it refused naming it; a result is read, matched with
/// itself and judged. The process's peak memory stays bounded (its
/// `VmHWM`, which a run of 6,000 cases once took past 3 GB).
#[test]
fn job_files_and_results_up_to_the_bounds_are_read_in_bounded_memory() {
    use iopath::plan::{Origin, Plan};
    use proptest::prelude::*;
    let config = ProptestConfig {
        cases: 6,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let methods = ["null", "buffered", "direct"];
    let origin = Origin {
        file: Some(PathBuf::from("big.toml")),
        ..Origin::default()
    };
    proptest::test_runner::TestRunner::new(config.clone())
        .run(&(1usize..=2200, 1usize..=3), |(entries, per)| {
            let mut text = String::new();
            for i in 0..entries {
                let m: Vec<String> = (0..per)
                    .map(|k| format!("\"{}\"", methods[(i + k) % 3]))
                    .collect();
                text.push_str(&format!(
                    "[[case]]\nmethod = [{}]\npattern = \"read\"\nbs = \"{}k\"\n",
                    m.join(", "),
                    4 * (1 + i % 7)
                ));
            }
            let job = iopath::import::jobfile::parse("big.toml", &text).unwrap();
            let plan = Plan::from_spec(&job, &origin);
            let n = (entries * per) as u64;
            match plan {
                Ok(p) => prop_assert!(n <= 4096 && p.cases.len() as u64 == n),
                Err(e) => prop_assert!(n > 4096 && e.0.contains("IOPATH_MAX_CASES"), "{e}"),
            }
            Ok(())
        })
        .unwrap();
    let dir = scratch();
    let (small, _) = results(dir.path(), 1);
    let base: Value = serde_json::from_slice(&std::fs::read(&small).unwrap()).unwrap();
    proptest::test_runner::TestRunner::new(config)
        .run(&(1usize..=30_000), |n| {
            let mut v = base.clone();
            let case = lean(&v["cases"][0]);
            v["cases"] = (0..n)
                .map(|i| {
                    let mut c = case.clone();
                    c["block_size"] = Value::from(4096 * (i as u64 % 5000 + 1));
                    c
                })
                .collect();
            let bytes = serde_json::to_vec(&v).unwrap();
            drop(v);
            let r = iopath::analysis::compare::parse(&bytes, "big.json").unwrap();
            let m = iopath::analysis::compare::match_runs(
                std::slice::from_ref(&r),
                std::slice::from_ref(&r),
            );
            prop_assert_eq!(m.iter().map(|m| m.a.len()).sum::<usize>(), n);
            let _ = iopath::analysis::verdict::all(&r.cases);
            Ok(())
        })
        .unwrap();
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    eprintln!("peak resident memory of the test process: {hwm_kb} kB");
    assert!(hwm_kb < 512 << 10, "{hwm_kb} kB");
}

/// `iopath run --dir DIR ARGS` under `ulimit -v 2000000` (a regression
/// aborts instead of filling the machine), which must exit 2 within a
/// minute; its stderr.
fn refused_in_bounded_memory(dir: &Path, args: &str) -> String {
    let out = output_within(
        Command::new("sh").arg("-c").arg(format!(
            "ulimit -v 2000000; exec {} run --dir {} {args}",
            env!("CARGO_BIN_EXE_iopath"),
            dir.display(),
        )),
        60,
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

/// Review of issue 26: one `[[case]]` of 3,000 thread counts x 3,000
/// methods built its 9 million cases before the bound was checked (5 GB,
/// then an abort). The cross is counted first: exit 2 at once. Run under
/// `ulimit -v 2000000` so that a regression aborts instead of filling the
/// machine.
#[test]
fn one_entry_crossing_into_millions_of_cases_is_refused_before_it_is_made() {
    let dir = scratch();
    let job = dir.path().join("cross.toml");
    let list = |item: &str| vec![item; 3000].join(", ");
    std::fs::write(
        &job,
        format!(
            "[run]\nsize = \"1M\"\n[[case]]\npattern = \"read\"\nthreads = [{}]\nmethod = [{}]\n",
            list("1"),
            list("\"null\"")
        ),
    )
    .unwrap();
    let err = refused_in_bounded_memory(dir.path(), &job.display().to_string());
    assert!(
        err.contains("9000000 cases") && err.contains("IOPATH_MAX_CASES"),
        "{err}"
    );
    assert!(leftovers(dir.path()).is_empty());
}

/// Review of issue 26: the bound was per file read, so 400 includes of
/// one 600 KB file made a 7 KB job read 240 MB (5.9 GB of memory, then an
/// abort). The job and its includes are bounded together.
#[test]
fn includes_of_one_file_again_and_again_count_against_the_job_file_bound() {
    let dir = scratch();
    let opts = dir.path().join("opts.fio");
    std::fs::write(&opts, "bs=4k\n".repeat(100_000)).unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(
        &main,
        format!(
            "[global]\nsize=1M\n[job]\nrw=read\n{}",
            "include opts.fio\n".repeat(400)
        ),
    )
    .unwrap();
    let err = refused_in_bounded_memory(dir.path(), &format!("--fio {}", main.display()));
    assert!(
        err.contains("add up to more than") && err.contains("IOPATH_MAX_JOB_FILE"),
        "{err}"
    );
}

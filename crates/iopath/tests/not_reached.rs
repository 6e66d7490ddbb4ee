//! A case an interrupted run never reached is a typed fact of the result
//! (`cases[].not_reached`), not words of `skipped` recognised later; and
//! the interrupted caveat and the "not run" lines name each job as the
//! table rows do (the depth a case ran at).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

mod common;
use common::{iopath, json_of, leftovers, scratch};
use serde_json::Value;

fn run_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run.json")
}

fn fixture_json() -> Value {
    serde_json::from_slice(&std::fs::read(run_fixture()).unwrap()).unwrap()
}

fn write_json(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
    p
}

fn report(args: &[&std::ffi::OsStr]) -> String {
    // The tables' rows and the "not run" section: the whole report.
    let out = iopath()
        .args(["report", "--explain"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The CSV statuses of a result's rows, as (method, pattern, status).
fn csv_statuses(res: &Path) -> Vec<(String, String, String)> {
    let csv = report(&[res.as_os_str(), "--csv".as_ref(), "-".as_ref()]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (m, p, s) = (col("method"), col("pattern"), col("status"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[m].to_string(), f[p].to_string(), f[s].to_string())
        })
        .collect()
}

#[test]
fn an_interrupted_real_run_records_the_cases_it_never_reached() {
    let dir = scratch();
    let json = dir.path().join("partial.json");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iopath"))
        .args(["run", "--dir"])
        .arg(dir.path())
        // O_DIRECT cannot do 1000-byte requests: direct is refused in both
        // jobs, before any I/O, once the test file is made.
        .args([
            "--size",
            "8M",
            "--concurrency",
            "1",
            "--methods",
            "null,buffered,direct",
        ])
        .args(["--patterns", "read,randread", "--bs", "1000"])
        .args(["--time", "30s", "--repeat", "1", "--json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run is under way once it has made its test file and says which
    // cases cannot run here (printed just before the first job): then
    // Ctrl-C.
    let (tx, rx) = mpsc::channel();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut seen = String::new();
        let mut line = String::new();
        while stderr.read_line(&mut line).unwrap_or(0) > 0 {
            if line.contains("cannot run here") {
                let _ = tx.send(());
            }
            seen.push_str(&line);
            line.clear();
        }
        let _ = stderr.read_to_string(&mut seen);
        seen
    });
    let started = rx.recv_timeout(Duration::from_secs(120));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = child.wait().unwrap();
    let err = reader.join().unwrap();
    assert!(started.is_ok(), "the run never said it started:\n{err}");
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(leftovers(dir.path()).is_empty());

    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    let randread: Vec<&Value> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["pattern"] == "randread")
        .collect();
    assert_eq!(randread.len(), 3, "{}", v["cases"]);
    for c in &randread {
        if c["method"] == "direct" {
            // Refused, not unreached: it could not run here either way.
            assert!(c.get("not_reached").is_none(), "{c}");
            assert!(c["skipped"].as_str().unwrap().contains("O_DIRECT"), "{c}");
        } else {
            assert_eq!(c["not_reached"], true, "{c}");
            assert!(c["summary"].is_null(), "{c}");
        }
    }

    let table = report(&[json.as_os_str()]);
    for method in ["null", "buffered"] {
        assert!(
            table.lines().any(|l| l.starts_with(&format!("│ {method} "))
                && l.contains("1000 N1")
                && l.ends_with("not reached │")),
            "{table}"
        );
    }
    for (method, pattern, status) in csv_statuses(&json) {
        match (pattern.as_str(), method.as_str()) {
            (_, "direct") => assert_eq!(status, "skipped"),
            ("randread", _) => assert_eq!(status, "not_reached", "{method}"),
            _ => {}
        }
    }
}

/// The fixture with its write cases never reached, said by the fact only:
/// their `skipped` in words no reader looks for.
fn never_reached_by_the_fact(dir: &Path) -> PathBuf {
    let mut r = fixture_json();
    r["interrupted"] = true.into();
    for c in r["cases"].as_array_mut().unwrap()[12..].iter_mut() {
        c["not_reached"] = true.into();
        c["skipped"] = "stopped by the user first".into();
        c["queue_depth"] = c["queue_depth_requested"].clone();
        c["summary"] = Value::Null;
        c["stats"] = Value::Null;
        c["repetitions"] = serde_json::json!([]);
        c["repetition_control"] = Value::Null;
    }
    write_json(dir, "fact.json", &r)
}

#[test]
fn a_case_the_result_marks_not_reached_is_shown_not_reached_whatever_its_words() {
    let dir = scratch();
    let res = never_reached_by_the_fact(dir.path());
    let table = report(&[res.as_os_str()]);
    assert!(
        table.contains("sequential write (write): not reached before the interruption"),
        "{table}"
    );
    let statuses = csv_statuses(&res);
    let write: Vec<&String> = statuses
        .iter()
        .filter(|(_, p, _)| p == "write")
        .map(|(_, _, s)| s)
        .collect();
    assert_eq!(write, ["not_reached"; 6], "{statuses:?}");
    // A case refused before any I/O stays skipped.
    assert!(statuses
        .iter()
        .any(|(m, p, s)| m == "uring-iopoll" && p == "read" && s == "skipped"));
    // The fact survives a rewrite of the result.
    let out = iopath()
        .args(["report", "--json", "-"])
        .arg(&res)
        .output()
        .unwrap();
    let v = json_of(&out.stdout);
    assert_eq!(v["cases"][12]["not_reached"], true);
    assert!(v["cases"][0].get("not_reached").is_none(), "absent: false");
}

/// The fixture interrupted inside the read job's last round, which cut
/// buffered and direct (synchronous, asked for Q8, ran at Q1).
fn cut_in_sync_cases(dir: &Path) -> PathBuf {
    let mut r = fixture_json();
    r["interrupted"] = true.into();
    // Its verdicts and warnings made again, from these three cases.
    r["verdicts"] = serde_json::json!([]);
    r["warnings"] = serde_json::json!([]);
    let cases = r["cases"].as_array_mut().unwrap();
    cases.truncate(3);
    for c in &mut cases[..2] {
        let reps = c["repetitions"].as_array_mut().unwrap();
        let last = reps.len() - 1;
        reps[last]["interrupted"] = true.into();
    }
    write_json(dir, "cut.json", &r)
}

#[test]
fn the_interrupted_caveat_names_the_job_at_the_depth_the_table_shows() {
    let dir = scratch();
    let res = cut_in_sync_cases(dir.path());
    let text = report(&[res.as_os_str()]);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("during read 1M Q1T1:"), "{text}");
    assert!(
        flat.contains("cut short (measured over the repetitions they completed): buffered, direct on read 1M Q1T1"),
        "{text}"
    );
    assert!(!flat.contains("Q8T1"), "a depth no row shows:\n{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("│ buffered ") && l.contains("1M Q1T1")),
        "{text}"
    );
}

#[test]
fn a_not_run_line_names_the_job_at_the_depth_the_table_shows() {
    let dir = scratch();
    let mut r = fixture_json();
    // Buffered randread refused here after its depth was capped: its row
    // shows the depth it would have run at.
    let c = &mut r["cases"][6];
    c["skipped"] = "RWF_DONTCACHE is not supported here".into();
    c["summary"] = Value::Null;
    c["stats"] = Value::Null;
    c["repetitions"] = serde_json::json!([]);
    c["repetition_control"] = Value::Null;
    assert_eq!(
        (&c["queue_depth"], &c["queue_depth_requested"]),
        (&1.into(), &32.into())
    );
    let res = write_json(dir.path(), "notrun.json", &r);
    let text = report(&[res.as_os_str()]);
    let not_run = text.split("\nnot run:\n").nth(1).expect(&text);
    let flat = not_run.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("- buffered randread 4k Q1T1: RWF_DONTCACHE is not supported here"),
        "{not_run}"
    );
}

//! Reports that say only what is true (issue 26): a case an interrupted
//! run never reached is not shown as refused, and a pattern none of whose
//! cases ran gets no table of dashes.

use std::path::{Path, PathBuf};

mod common;
use common::{iopath, scratch};

fn run_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run.json")
}

fn fixture_json() -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(run_fixture()).unwrap()).unwrap()
}

fn write_json(dir: &Path, name: &str, v: &serde_json::Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
    p
}

/// The fixture as a run interrupted during randread: its aio randread
/// case (10) and every write case (12-17, uring-iopoll's refused before)
/// never reached.
fn interrupted(dir: &Path) -> PathBuf {
    let mut r = fixture_json();
    r["interrupted"] = true.into();
    let cases = r["cases"].as_array_mut().unwrap();
    for i in [10, 12, 13, 14, 15, 16, 17] {
        let c = &mut cases[i];
        c["skipped"] = "the run was interrupted (Ctrl-C or SIGTERM) before this case".into();
        c["summary"] = serde_json::Value::Null;
        c["stats"] = serde_json::Value::Null;
        c["repetitions"] = serde_json::json!([]);
        c["repetition_control"] = serde_json::Value::Null;
    }
    write_json(dir, "interrupted.json", &r)
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

#[test]
fn interrupted_table_rows_never_reached_say_not_reached_not_not_run() {
    let dir = scratch();
    let res = interrupted(dir.path());
    let text = report(&[res.as_os_str()]);
    let row = |method: &str, job: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("│ {method} ")) && l.contains(job))
            .unwrap_or_else(|| panic!("no row {method} {job}:\n{text}"))
            .to_string()
    };
    let aio = row("aio", "4k Q");
    assert!(aio.contains("not reached"), "{aio}");
    assert!(!aio.contains("not run"), "{aio}");
    // Refused before any I/O: still "not run".
    let iopoll = row("uring-iopoll", "4k Q");
    assert!(iopoll.contains("not run"), "{iopoll}");
    // No table for write (every case of it never reached): the one row
    // that says so is aio's randread.
    let rows = text
        .lines()
        .filter(|l| l.starts_with('│') && l.contains("not reached"));
    assert_eq!(rows.count(), 1, "{text}");
    assert!(
        text.contains("(write): not reached before the interruption"),
        "{text}"
    );
}

#[test]
fn interrupted_markdown_has_no_table_for_a_pattern_never_reached() {
    let dir = scratch();
    let res = interrupted(dir.path());
    let md = report(&[res.as_os_str(), "--markdown".as_ref(), "-".as_ref()]);
    let write = md
        .split("\n### ")
        .find(|s| s.contains("(`write`)"))
        .unwrap_or_else(|| panic!("no write section:\n{md}"));
    assert!(!write.contains("| method |"), "a table for write:\n{write}");
    assert!(
        write.contains("Not reached: the run was interrupted before 6 cases"),
        "{write}"
    );
    // The randread row never reached says so; the refused one is skipped.
    let aio = md
        .lines()
        .find(|l| l.starts_with("| aio |") && l.contains("4k"))
        .unwrap_or_else(|| panic!("no aio randread row:\n{md}"));
    assert!(
        aio.contains("not reached: the run was interrupted"),
        "{aio}"
    );
    let iopoll = md
        .lines()
        .find(|l| l.starts_with("| uring-iopoll |") && l.contains("4k"))
        .unwrap();
    assert!(iopoll.contains("skipped (see *Not run*)"), "{iopoll}");
}

/// Issue 26 item 13: `verdicts[].pick` is `ranking[0]`, and the summary's
/// request counts are named apart: `summary.ios` the median repetition's,
/// `repetition_control.measured_ios` all measured repetitions' (what
/// `summary.lat_ns.count` counts).
#[test]
fn json_pick_is_ranking_first_and_measured_ios_is_the_total() {
    let dir = scratch();
    let v = common::run_json(
        dir.path(),
        &[
            "--size",
            "8M",
            "--time",
            "20ms",
            "--repeat",
            "5",
            "--methods",
            "buffered,mmap,null",
            "--patterns",
            "randread",
            // Both read the 8 MiB file from memory after their first
            // touches: asked for, they are ranked (cold, they are set apart
            // and leave no verdict).
            "--cache",
            "warm",
        ],
    );
    for vd in v["verdicts"].as_array().unwrap() {
        assert_eq!(vd["ranking"][0]["method"], vd["pick"], "{vd}");
    }
    assert!(!v["verdicts"].as_array().unwrap().is_empty());
    for c in v["cases"].as_array().unwrap() {
        let measured: Vec<u64> = c["repetitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["warmup"] != true && r["interrupted"] != true)
            .map(|r| r["ios"].as_u64().unwrap())
            .collect();
        let rc = &c["repetition_control"];
        assert_eq!(
            rc["measured_ios"].as_u64(),
            Some(measured.iter().sum()),
            "{rc}"
        );
        assert_eq!(
            c["summary"]["lat_ns"]["count"], rc["measured_ios"],
            "{}",
            c["method"]
        );
        let mut sorted = measured.clone();
        sorted.sort_unstable();
        assert_eq!(c["summary"]["ios"].as_u64(), Some(sorted[sorted.len() / 2]));
    }
}

/// Whitespace (and a Markdown table's line) aside.
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Issue 26 item 14: the README and `run --help` said a default run
/// leaves out only null, mmap-dax and the user-space caches, where the
/// code also leaves out threadpool, tokio and uring-dontcache and adds
/// mmap+random: both now say the plan's own list.
#[test]
fn readme_and_run_help_name_the_plans_default_methods() {
    let default = iopath::plan::default_methods_text();
    for opt_in in ["threadpool", "tokio", "uring-dontcache", "null"] {
        assert!(default.contains(opt_in), "{default}");
    }
    let out = iopath().args(["run", "--help"]).output().unwrap();
    let help = words(&String::from_utf8_lossy(&out.stdout));
    assert!(help.contains(&format!("[default: {default}]")), "{help}");
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(readme_path).unwrap();
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `--methods LIST` |"))
        .expect("README has a --methods row");
    assert!(words(row).ends_with(&format!("| {default} |")), "{row}");
    // Every method is listed where the README names them all.
    for m in iopath_io::Method::ALL {
        assert!(
            row.contains(m.name()),
            "README's --methods row lacks {}",
            m.name()
        );
    }
}

#[test]
fn interrupted_html_has_no_table_for_a_job_never_reached() {
    let dir = scratch();
    let res = interrupted(dir.path());
    let html = report(&[res.as_os_str(), "--html".as_ref(), "-".as_ref()]);
    let section = |id: &str| {
        let start = html
            .find(&format!("<section class=\"job\" id=\"{id}\">"))
            .unwrap_or_else(|| panic!("no section {id}"));
        let end = html[start..].find("</section>").unwrap() + start;
        html[start..end].to_string()
    };
    let write = section("write-1m-q8-t1");
    assert!(!write.contains("<table"), "a table for write:\n{write}");
    assert!(
        write.contains("Not reached: the run was interrupted"),
        "{write}"
    );
    let randread = section("randread-4k-q32-t1");
    assert!(
        randread.contains("not reached: the run was interrupted"),
        "{randread}"
    );
    assert!(
        randread.contains("not run: "),
        "the refused uring-iopoll: {randread}"
    );
}

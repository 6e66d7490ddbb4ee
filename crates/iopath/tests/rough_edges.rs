//! The rough edges a new user hit in their first hour (issue 18): help
//! that states a default twice or names a library iopath does not use,
//! `--html -`, an unwritable directory, a block size O_DIRECT cannot do,
//! the probe's wording and artefacts, and `--wide`.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

mod common;
use common::*;

/// stdout of `iopath ARGS`, which must succeed.
fn stdout_of(args: &[&str]) -> String {
    let out = iopath().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "iopath {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every help text: short and long, top level and each subcommand.
fn every_help() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for sub in [
        "",
        "run",
        "probe",
        "methods",
        "compare",
        "presets",
        "report",
        "import-fio",
    ] {
        for flag in ["-h", "--help"] {
            let args: Vec<&str> = [sub, flag].into_iter().filter(|a| !a.is_empty()).collect();
            out.push((args.join(" "), stdout_of(&args)));
        }
    }
    out
}

#[test]
fn help_states_each_default_once_and_names_no_library_iopath_does_not_use() {
    for (args, help) in every_help() {
        // Whitespace as one space: clap wraps lines where it likes.
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            !flat.contains("] [default:"),
            "iopath {args}: a default stated twice:\n{help}"
        );
        // `aio` calls io_setup/io_submit/io_getevents itself.
        assert!(!flat.contains("libaio"), "iopath {args}:\n{help}");
    }
    let run = stdout_of(&["run", "-h"]);
    let threads = run
        .lines()
        .find(|l| l.trim_start().starts_with("--threads"))
        .unwrap();
    assert_eq!(threads.matches("[default: 1]").count(), 1, "{threads}");
    let top = stdout_of(&["--help"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(top.contains("Linux AIO"), "{top}");
    // Nor does the engines crate's description claim libaio.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../iopath-io/Cargo.toml");
    let manifest = std::fs::read_to_string(manifest).unwrap();
    let description = manifest
        .lines()
        .find(|l| l.starts_with("description"))
        .unwrap();
    assert!(!description.contains("libaio"), "{description}");
}

#[test]
fn html_to_stdout_is_in_the_help_and_works() {
    for sub in ["run", "report"] {
        let help = stdout_of(&[sub, "--help"]);
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let html = &flat[flat.find("--html <FILE>").unwrap()..];
        let html = &html[..html.find(" --csv").unwrap()];
        assert!(html.contains("or `-` for stdout"), "iopath {sub}: {html}");
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run.json");
    let out = iopath()
        .arg("report")
        .arg(&fixture)
        .args(["--html", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{:.200}", html);
    assert!(html.trim_end().ends_with("</html>"));
}

/// `setpriv` to run as `nobody` (uid and gid 65534), when this test runs
/// as root and the tool is there; `None` (after saying why) otherwise.
fn as_nobody() -> Option<Process> {
    if !rustix::process::getuid().is_root() {
        eprintln!("skipped: switching to nobody needs root");
        return None;
    }
    let probe = Process::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!(
                "skipped: setpriv cannot switch to nobody here: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return None;
        }
        Err(e) => {
            eprintln!("skipped: no setpriv ({e})");
            return None;
        }
    }
    let mut p = Process::new("setpriv");
    p.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
    p.arg(assert_cmd::cargo::cargo_bin("iopath"));
    Some(p)
}

#[test]
fn an_unwritable_directory_is_bad_input_that_names_the_directory() {
    // Root's own directory, 0755: nobody may read it, not write in it.
    let dir = scratch();
    let d: PathBuf = dir.path().to_path_buf();
    let Some(mut run) = as_nobody() else { return };
    let out = run
        .args(["run", "--dir"])
        .arg(&d)
        .args(["--size", "4M", "--patterns", "read", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "bad input: {err}");
    assert!(
        err.contains(&format!("directory {}", d.display())) && err.contains("uid 65534"),
        "{err}"
    );
    assert!(
        err.contains("give a directory this user can write to"),
        "{err}"
    );
    assert!(!err.contains("file's permissions"), "{err}");
    // Without --dir, in that directory: it is the current directory, not a
    // --dir that was never given (issue 18, fix item 7).
    let Some(mut here) = as_nobody() else { return };
    let out = here
        .current_dir(&d)
        .args(["run", "--size", "4M", "--patterns", "read", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("the current directory {}", d.display())) && !err.contains("--dir /"),
        "{err}"
    );
    // Without --quiet: the error comes before the estimate, which a run
    // that cannot start does not print (issue 18, "runs" item 5).
    let Some(mut loud) = as_nobody() else { return };
    let out = loud
        .args(["run", "--dir"])
        .arg(&d)
        .args(["--size", "4M", "--patterns", "read"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("give a directory this user can write to"),
        "{err}"
    );
    assert!(!err.contains("estimated duration"), "{err}");
    // The probe makes its file there too.
    let Some(mut probe) = as_nobody() else { return };
    let out = probe.args(["probe", "--dir"]).arg(&d).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A new --file in such a directory: the same, said of the file.
    let Some(mut file) = as_nobody() else { return };
    let f = d.join("new.dat");
    let out = file
        .args(["run", "--file"])
        .arg(&f)
        .args(["--size", "4M", "--patterns", "read", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("name a file in a directory this user can write to"),
        "{err}"
    );
    assert!(leftovers(&d).is_empty() && !f.exists());
}

#[test]
fn a_block_size_o_direct_cannot_do_skips_only_the_o_direct_methods() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--methods",
            "buffered,direct,mmap,uring,aio",
            "--patterns",
            "randread",
            "--bs",
            "1000",
            "--size",
            "4M",
            "--time",
            "20ms",
        ],
    );
    for m in ["buffered", "mmap"] {
        let c = case(&v, m, "randread");
        assert!(c["summary"].is_object(), "{m} runs: {c}");
    }
    let mut reasons = Vec::new();
    for m in ["direct", "uring", "aio"] {
        let c = case(&v, m, "randread");
        let why = c["skipped"].as_str().unwrap_or_else(|| panic!("{m}: {c}"));
        assert!(
            why.contains("--bs 1000 is not a multiple of the O_DIRECT alignment")
                && why.contains("which every O_DIRECT method requires"),
            "{why}"
        );
        // The file as the run names it, not the /proc link engines open.
        assert!(!why.contains("/proc/"), "{why}");
        reasons.push(why.to_string());
    }
    // One reason, not naming its method: the "not run" list gives the
    // three methods one line (issue 18, fix item 5).
    assert!(reasons.iter().all(|r| r == &reasons[0]), "{reasons:?}");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn the_probe_says_where_the_alignment_came_from_without_its_own_artefacts() {
    let dir = scratch();
    let mut dirs: Vec<PathBuf> = vec![dir.path().to_path_buf()];
    let shm = Path::new("/dev/shm");
    let on_tmpfs = Process::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(shm)
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "tmpfs");
    if on_tmpfs {
        dirs.push(shm.to_path_buf());
    } else {
        eprintln!("/dev/shm is not tmpfs here: the tmpfs half is skipped");
    }
    for d in dirs {
        let text = stdout_of(&["probe", "--dir", d.to_str().unwrap()]);
        let json = stdout_of(&["probe", "--json", "--dir", d.to_str().unwrap()]);
        for out in [&text, &json] {
            // No /proc/<pid>/fd link, no file descriptor or address of
            // the probe's own mapping.
            for artefact in ["/proc/", "mapping: fd", "start 0x"] {
                assert!(
                    !out.contains(artefact),
                    "{}: {artefact} in\n{out}",
                    d.display()
                );
            }
        }
        let line = text.lines().find(|l| l.starts_with("O_DIRECT:")).unwrap();
        assert!(!line.contains("from assumed"), "{line}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        if v["dio_align_source"] == "assumed" {
            assert!(line.contains("(assumed: "), "{line}");
        } else {
            assert!(line.contains("(from "), "{line}");
        }
    }
}

#[test]
fn run_and_report_take_wide() {
    let dir = scratch();
    let header = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("│ method "))
            .unwrap()
            .to_string()
    };
    let args = [
        "run",
        "--methods",
        "null",
        "--patterns",
        "read",
        "--repeat",
        "2",
        "--time",
        "10ms",
        "--quiet",
        "--size",
        "1M",
    ];
    let d = dir.path().to_str().unwrap();
    let narrow = stdout_of(&[&args[..], &["--dir", d, "--explain"]].concat());
    assert!(!header(&narrow).contains("p50"), "{narrow}");
    let wide = stdout_of(&[&args[..], &["--dir", d, "--wide"]].concat());
    let h = header(&wide);
    assert!(
        h.contains("┆ n ┆") && h.contains("p50") && h.contains("notes"),
        "{wide}"
    );
}

/// Issue 18: the estimate is made before the target exists, so it counts
/// cases the probe then refuses; a second line says how many cannot run
/// and what the estimate is without them.
#[test]
fn cases_refused_before_any_io_are_taken_out_of_the_estimate() {
    let dir = scratch();
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--concurrency",
            "1",
            "--methods",
            "buffered,direct,uring",
            "--patterns",
            "randread",
            "--bs",
            "1000",
            "--size",
            "4M",
            "--time",
            "20ms",
            "--max-time",
            "1s",
            // The reasons under "not run": the whole report.
            "--explain",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let unwrapped = err.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        unwrapped.contains("iopath: estimated duration: about"),
        "{err}"
    );
    assert!(
        unwrapped.contains("iopath: 2 cases cannot run here (--explain says why): about"),
        "{err}"
    );
    // And the time without them is less than the first estimate.
    let secs_after = |marker: &str| {
        let rest = &unwrapped[unwrapped.find(marker).unwrap() + marker.len()..];
        let words: Vec<&str> = rest.split_whitespace().take(4).collect();
        match words.as_slice() {
            [m, "min", s, ..] if s.parse::<u64>().is_ok() => {
                m.parse::<u64>().unwrap() * 60 + s.parse::<u64>().unwrap()
            }
            [s, ..] => s.parse::<u64>().unwrap_or_else(|_| panic!("{rest}")),
            _ => panic!("{rest}"),
        }
    };
    let first = secs_after("iopath: estimated duration: about ");
    let then = secs_after("(--explain says why): about ");
    assert!(then < first, "{then} s then, {first} s first: {err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not run:"), "{text}");
    assert!(leftovers(dir.path()).is_empty());
}

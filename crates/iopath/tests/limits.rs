//! Limits of the machine and the process (memory, open files, locked
//! memory), signals, and outputs that are descriptors: a run that meets
//! one ends cleanly (exit 1 or 2, never a panic or an abort), names the
//! limit and the next step, and leaves no file behind (issue 26).

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::block::Mount;
use common::{iopath, json_of, leftovers, scratch, skip};

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("iopath")
}

/// Everything the run said, stdout then stderr.
fn said(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A short run in `dir`, one repetition per case.
const SHORT: [&str; 6] = ["--size", "8M", "--time", "0.05s", "--repeat", "1"];

/// Regression (issue 26, item 3): `--ucache-size 1T` made and prefilled
/// the test file, then aborted (exit 134, "memory allocation of ...
/// failed"), leaving a named file behind. It is now a usage error before
/// any file is made, naming the flag and the memory available.
#[test]
fn a_ucache_larger_than_memory_is_refused_before_any_file_is_made() {
    let dir = scratch();
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(SHORT)
        .args(["--methods", "ucache", "--patterns", "read"])
        .args(["--ucache-size", "64T", "--quiet"])
        // A named file is what an abort would leave.
        .env("IOPATH_NO_TMPFILE", "1")
        .output()
        .unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("--ucache-size 64 TiB"), "{text}");
    assert!(text.contains("is available"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

/// `sh -c 'ulimit ...; exec iopath run --dir DIR ARGS'`.
fn run_limited(
    ulimit: &str,
    dir: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
) -> std::process::Output {
    let script = format!("ulimit {ulimit}; exec \"$0\" run --dir \"$@\"");
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(bin())
        .arg(dir)
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

/// Regression (issue 26, item 4): under `ulimit -n 4` the reopen of the
/// unnamed file through /proc failed with EMFILE, was read as "no
/// O_TMPFILE", and the named fallback was left behind when the next open
/// failed, with a bare "Too many open files". At every small limit the run
/// now ends with exit 0 or 1, names `ulimit -n` when it fails, points
/// nowhere else (dmesg), and leaves nothing.
#[test]
fn a_low_open_file_limit_leaves_no_file_and_names_ulimit_n() {
    let dir = scratch();
    let args = [
        &SHORT[..],
        &[
            "--methods",
            "buffered,direct,uring,ucache,uffd",
            "--patterns",
            "read,copy",
            "--quiet",
        ],
    ]
    .concat();
    let mut failed_at = Vec::new();
    for n in 4..=20 {
        // The named fallback at the smallest limits (where it failed).
        let modes: &[&str] = if n <= 8 { &["0", "1"] } else { &["0"] };
        for &named in modes {
            let out = run_limited(
                &format!("-n {n}"),
                dir.path(),
                &args,
                &[("IOPATH_NO_TMPFILE", named)],
            );
            let text = said(&out);
            let what = format!("ulimit -n {n}, IOPATH_NO_TMPFILE={named}:\n{text}");
            assert!(!text.contains("panicked"), "{what}");
            assert!(matches!(out.status.code(), Some(0 | 1)), "{what}");
            if out.status.code() == Some(1) {
                failed_at.push(n);
                assert!(text.contains("ulimit -n"), "{what}");
                assert!(!text.contains("dmesg"), "{what}");
            }
            assert!(
                leftovers(dir.path()).is_empty(),
                "{what}\nleft {:?}",
                leftovers(dir.path())
            );
        }
    }
    // The smallest limits do fail (else this tests nothing).
    assert!(failed_at.contains(&4), "{failed_at:?}");
}

/// Registered io_uring buffers are locked memory: under a small `ulimit
/// -l` (without CAP_IPC_LOCK, which root has and which lifts the limit)
/// the run falls back to plain buffers or says why a case could not run,
/// naming `ulimit -l`, and leaves nothing. (A guard: this held before
/// issue 26.)
#[test]
fn a_small_locked_memory_limit_names_ulimit_l_and_leaves_nothing() {
    if Command::new("setpriv").arg("--help").output().is_err() {
        skip("setpriv is not installed");
        return;
    }
    let dir = scratch();
    for l in ["0", "64"] {
        let script = format!(
            "ulimit -l {l}; exec setpriv --bounding-set -ipc_lock \"$0\" run --dir \"$1\" --size 8M --time 0.05s --repeat 1 --explain --methods uring,uring-buffered,ucache --patterns read,randwrite"
        );
        let out = Command::new("sh")
            .args(["-c", &script])
            .arg(bin())
            .arg(dir.path())
            .output()
            .unwrap();
        let text = said(&out);
        assert!(!text.contains("panicked"), "{text}");
        assert!(matches!(out.status.code(), Some(0 | 1)), "{text}");
        if text.contains("io_uring") && text.contains("not usable") {
            skip(format!("io_uring is not usable here: {text}"));
            return;
        }
        assert!(text.contains("ulimit -l"), "ulimit -l {l}:\n{text}");
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }
}

/// The arguments of a short run whose JSON goes to `to`.
fn json_run(dir: &Path, to: &str) -> String {
    format!(
        "\"$0\" run --dir '{}' --size 8M --time 0.05s --repeat 1 --methods buffered --patterns read --quiet --json {to}",
        dir.display()
    )
}

/// The JSON of a whole run: parsed, and finished.
fn whole_json(bytes: &[u8]) {
    let v = json_of(bytes);
    assert!(v["finished_at"].is_string(), "{v}");
    assert_eq!(v["cases"].as_array().map(Vec::len), Some(1), "{v}");
}

/// Regression (issue 26, item 8): `--json /dev/stdout` with stdout
/// redirected to a file renamed a new file over it (the shell's
/// descriptor then wrote to the old one) and failed at the end with
/// ENOENT. It is now stdout, as `--json -`: the JSON alone, once.
#[test]
fn json_to_dev_stdout_redirected_to_a_file_is_the_whole_result() {
    let dir = scratch();
    let out_file = dir.path().join("out.json");
    let script = format!(
        "{} > '{}'",
        json_run(dir.path(), "/dev/stdout"),
        out_file.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .arg(bin())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    whole_json(&std::fs::read(&out_file).unwrap());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["out.json"], "nothing else beside it");
}

/// `--json /dev/stdout` into a pipe: the JSON alone on stdout (the tables
/// would go to stderr), as `--json -`.
#[test]
fn json_to_dev_stdout_in_a_pipe_is_the_whole_result() {
    let dir = scratch();
    for to in ["/dev/stdout", "-"] {
        let out = iopath()
            .args(["run", "--dir"])
            .arg(dir.path())
            .args(SHORT)
            .args(["--methods", "buffered", "--patterns", "read", "--json", to])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", said(&out));
        whole_json(&out.stdout);
    }
}

/// Other descriptors (`/dev/stderr`, `/dev/fd/N`) are written through,
/// once at the end, whether they lead to a file or a pipe.
#[test]
fn json_to_a_descriptor_is_written_through_it() {
    let dir = scratch();
    let to_file = dir.path().join("fd3.json");
    let script = format!(
        "{} 3> '{}'",
        json_run(dir.path(), "/dev/fd/3"),
        to_file.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .arg(bin())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    whole_json(&std::fs::read(&to_file).unwrap());
    // Into a pipe: descriptor 3 is the pipe of stdout.
    let script = format!("{} 3>&1 >/dev/null", json_run(dir.path(), "/dev/fd/3"));
    let out = Command::new("sh")
        .args(["-c", &script])
        .arg(bin())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    whole_json(&out.stdout);
    // /dev/stderr, the tables (--quiet) being on stdout.
    let script = json_run(dir.path(), "/dev/stderr");
    let out = Command::new("sh")
        .args(["-c", &script])
        .arg(bin())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    whole_json(&out.stderr);
}

/// Regression (issue 26, item 10): a uffd write-back that failed at the
/// last drop (here: a sparse file on a full tmpfs, `--sync none`) was
/// said on stderr naming `/proc/PID/fd/N`, once per repetition, and the
/// run exited 0. It is now the case's failure, naming the file, said
/// once, and the run exits 1.
#[test]
fn a_lost_uffd_write_back_names_the_file_once() {
    let dir = scratch();
    let Some(_mnt) = Mount::tmpfs(dir.path(), "4M") else {
        return;
    };
    let file = dir.path().join("sparse.dat");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    // Fill the file system: no write of the sparse file's holes can land.
    let fill = std::fs::write(dir.path().join("fill"), vec![1u8; 8 << 20]);
    assert!(fill.is_err(), "the tmpfs is full");
    let out = iopath()
        .args(["run", "--file"])
        .arg(&file)
        .args([
            "--allow-write",
            "--concurrency",
            "1",
            "--methods",
            "uffd",
            "--patterns",
            "randwrite",
        ])
        .args(["--sync", "none", "--time", "0.1s", "--repeat", "3"])
        .output()
        .unwrap();
    let text = said(&out);
    if text.contains("uffd is not usable") {
        common::skip_anyway(format!("userfaultfd is not usable here: {text}"));
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!text.contains("/proc/"), "{text}");
    let says = text.matches("writing back the dirty pages of").count();
    assert_eq!(says, 1, "{text}");
    let named = format!("writing back the dirty pages of {} ", file.display());
    assert!(text.contains(&named), "{text}");
}

/// Regression (issue 26, item 10): SIGTERM was reported as an
/// interruption with no signal named ("Ctrl-C" in places). The message
/// now says which signal stopped the run.
#[test]
fn sigterm_is_named_as_the_signal_that_stopped_the_run() {
    let dir = scratch();
    let mut child = Command::new(bin())
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "64M",
            "--methods",
            "buffered",
            "--patterns",
            "read",
        ])
        .args(["--time", "10s", "--repeat", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The estimate is printed once the handlers are in place.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !seen.contains("estimated duration") && Instant::now() < deadline {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
    }
    assert!(seen.contains("estimated duration"), "{seen}");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert!(rest.contains("interrupted by SIGTERM"), "{seen}{rest}");
    assert!(leftovers(dir.path()).is_empty());
}

/// Regression (issue 26, item 10): a `--dir` whose name is not UTF-8
/// (byte 0xff) made the run fail at the end with "path contains invalid
/// UTF-8 characters", naming nothing, once the JSON was written. The
/// result now names it lossily and the run works.
#[test]
fn a_dir_whose_name_is_not_utf8_runs_and_is_named_lossily() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch();
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"odd\xffdir"));
    std::fs::create_dir(&odd).unwrap();
    let out = iopath()
        .args(["run", "--dir"])
        .arg(&odd)
        .args(SHORT)
        .args([
            "--methods",
            "buffered",
            "--patterns",
            "read",
            "--json",
            "-",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    let v = json_of(&out.stdout);
    let path = v["target"]["path"].as_str().unwrap();
    assert!(path.contains("odd\u{fffd}dir"), "{path}");
    assert!(leftovers(&odd).is_empty());
}

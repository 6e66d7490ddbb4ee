//! A run whose stderr reader is gone (a closed terminal, `2>&1 | head`)
//! still ends as it would have: messages it cannot write are dropped, never
//! a panic (exit 101). Regression of issue 26's review: SIGHUP after the
//! terminal closed exited 101 from `eprintln!`.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Start a run with stderr on a pipe, read its first line (the estimate:
/// the run is under way), close the pipe, then `signal` it (or not) and
/// return its exit code.
fn run_with_stderr_closed(signal: Option<&str>) -> i32 {
    let dir = common::scratch();
    let mut child = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--methods",
            "buffered",
            "--patterns",
            "randread,randwrite",
            "--size",
            "16M",
            "--time",
            "300ms",
            "--repeat",
            "3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("estimated"), "{first}");
    // The reader above is dropped: stderr's pipe has no reader now.
    if let Some(sig) = signal {
        let ok = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(common::leftovers(dir.path()).is_empty());
            return status.code().unwrap_or(-1);
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sighup_after_the_terminal_closed_exits_130_not_a_panic() {
    assert_eq!(run_with_stderr_closed(Some("-HUP")), 130);
}

#[test]
fn a_run_whose_stderr_reader_left_ends_normally() {
    assert_eq!(run_with_stderr_closed(None), 0);
}

//! Another process changes the user's file under a run (issue 26, item
//! 5): `truncate -s 0` during a write case used to go unnoticed (exit 0,
//! normal results, the file grown back by the writes, sparse). The runner
//! now checks the file's length and identity before and after every
//! repetition: the case fails naming the file, what it was and is, and
//! the case; the run exits 1; the JSON keeps the repetitions done before.
//!
//! Determinism: each run writes (or reads) only the first 8 MiB of a
//! 32 MiB file (`--span`), so writes after the cut can grow the file back
//! to 8 MiB at most, never to the 32 MiB it must have. The cut is made
//! once the JSON holds a repetition (a real signal: the run is under way)
//! and at least three repetitions are still to come: whether it lands
//! between two repetitions (the check before the next one sees it) or
//! inside one (the check after it does), the run cannot miss it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::scratch;
use serde_json::Value;

const FILE_LEN: u64 = 32 << 20;

/// A user's file of `FILE_LEN` bytes of varied data.
fn user_file(dir: &Path) -> PathBuf {
    let path = dir.join("user.dat");
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let data: Vec<u8> = (0..FILE_LEN)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&path, data).unwrap();
    path
}

/// `iopath run --file FILE --allow-write` of one method and pattern, four
/// short repetitions on the file's first 8 MiB, the JSON saved to `json`.
fn spawn(file: &Path, method: &str, pattern: &str, json: &Path) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("iopath"))
        .arg("run")
        .arg("--file")
        .arg(file)
        .args(["--allow-write", "--methods", method, "--patterns", pattern])
        // One request in flight (the copy pattern matches none).
        .args(if pattern == "copy" {
            &[][..]
        } else {
            &["--concurrency", "1"][..]
        })
        .args([
            "--span", "8M", "--time", "300ms", "--repeat", "4", "--quiet",
        ])
        .arg("--json")
        .arg(json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The JSON saved so far, once it parses.
fn saved(json: &Path) -> Option<Value> {
    let bytes = std::fs::read(json).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn reps(c: &Value) -> usize {
    c["repetitions"].as_array().map_or(0, Vec::len)
}

/// Wait (a minute at most) until the saved JSON holds a measured
/// repetition of the case; false when the run ended first, or skipped
/// the case (the method cannot run here: `Err` with its reason).
fn wait_under_way(child: &mut Child, json: &Path) -> Result<bool, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Some(v) = saved(json) {
            let cases = v["cases"].as_array().cloned().unwrap_or_default();
            if let Some(why) = cases.iter().find_map(|c| c["skipped"].as_str()) {
                return Err(why.to_string());
            }
            if cases.iter().any(|c| reps(c) > 0) {
                return Ok(true);
            }
        }
        if child.try_wait().unwrap().is_some() {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(false)
}

/// The report's words, its wrapping undone.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Run `method` `pattern` on a user's file, let `change` do something to
/// it once the run is under way, and check the run failed saying `what`
/// (e.g. "truncated FILE from 33554432 to"), with the repetitions before
/// kept. `None` when the method cannot run here (skipped, said why).
fn changed_mid_run(
    method: &str,
    pattern: &str,
    change: impl FnOnce(&Path),
    what: impl FnOnce(&Path) -> String,
) -> Option<(Output, Value)> {
    changed_mid_run_saying_any(method, pattern, change, |f| vec![what(f)])
}

/// [`changed_mid_run`], the run saying one of `whats`.
fn changed_mid_run_saying_any(
    method: &str,
    pattern: &str,
    change: impl FnOnce(&Path),
    whats: impl FnOnce(&Path) -> Vec<String>,
) -> Option<(Output, Value)> {
    let (dir, out_dir) = (scratch(), scratch());
    let file = user_file(dir.path());
    let json = out_dir.path().join("r.json");
    let mut child = spawn(&file, method, pattern, &json);
    let under_way = match wait_under_way(&mut child, &json) {
        Ok(u) => u,
        Err(why) => {
            child.wait().unwrap();
            common::skip(format!("{method} cannot run here: {why}"));
            return None;
        }
    };
    if under_way {
        change(&file);
    }
    let out = child.wait_with_output().unwrap();
    let all = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(under_way, "the run never measured a repetition: {all}");
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("some cases failed"),
        "{all}"
    );
    let wants: Vec<String> = whats(&file)
        .iter()
        .map(|w| format!("another process {w}"))
        .collect();
    let said = flat(&String::from_utf8_lossy(&out.stdout));
    let want = wants
        .iter()
        .find(|w| said.contains(w.as_str()))
        .unwrap_or_else(|| panic!("none of {wants:?} said: {all}"));
    let v = saved(&json).expect("the JSON stays valid");
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "{all}");
    let c = &cases[0];
    let e = c["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {c}"));
    assert!(e.contains(want.as_str()), "{e}");
    assert!(
        e.contains(&format!("{method} {pattern} ")),
        "names the case: {e}"
    );
    assert!(e.contains("run on a file nothing else changes"), "{e}");
    let n = reps(c);
    assert!(
        (1..4).contains(&n),
        "the repetitions before the change are kept, not the changed one: {n}"
    );
    // The user's file stays where it was; nothing of iopath's is left.
    assert!(file.exists());
    assert!(common::leftovers(dir.path()).is_empty());
    Some((out, v))
}

fn truncate_to_0(file: &Path) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(file)
        .unwrap()
        .set_len(0)
        .unwrap();
}

fn truncated(file: &Path) -> String {
    format!("truncated {} from {FILE_LEN} to ", file.display())
}

/// The check every method meets: `truncate -s 0` during `randwrite`.
fn truncated_during_randwrite(method: &str) {
    if let Some((_, v)) = changed_mid_run(method, "randwrite", truncate_to_0, truncated) {
        // Writes after the cut reach no further than the 8 MiB span.
        let e = v["cases"][0]["error"].as_str().unwrap();
        let to: u64 = e
            .split(" to ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{e}"));
        assert!(to <= 8 << 20, "{e}");
    }
}

#[test]
fn a_file_truncated_during_buffered_writes_fails_the_run() {
    truncated_during_randwrite("buffered");
}

#[test]
fn a_file_truncated_during_direct_writes_fails_the_run() {
    truncated_during_randwrite("direct");
}

#[test]
fn a_file_truncated_during_uring_writes_fails_the_run() {
    truncated_during_randwrite("uring");
}

#[test]
fn a_file_truncated_during_ucache_writes_fails_the_run() {
    truncated_during_randwrite("ucache");
}

#[test]
fn a_file_truncated_during_uffd_writes_fails_the_run() {
    truncated_during_randwrite("uffd");
}

/// mmap: a store past the new end is SIGBUS, recovered as the case's
/// error; the check names the cause either way.
#[test]
fn a_file_truncated_during_mmap_writes_fails_the_run() {
    truncated_during_randwrite("mmap");
}

/// A read case met a short read or SIGBUS before; the error now says who
/// cut the file, keeping what the read met.
#[test]
fn a_file_truncated_during_reads_fails_the_run_naming_the_truncation() {
    for method in ["buffered", "mmap"] {
        changed_mid_run(method, "randread", truncate_to_0, truncated);
    }
}

/// Another file renamed over the user's: the run went on with the file it
/// opened, which is no longer the one named; said, not measured as if.
#[test]
fn a_file_replaced_during_writes_fails_the_run() {
    let replace = |file: &Path| {
        let other = file.with_extension("new");
        std::fs::write(&other, vec![0u8; FILE_LEN as usize]).unwrap();
        std::fs::rename(&other, file).unwrap();
    };
    let what = |file: &Path| format!("replaced {}", file.display());
    changed_mid_run("buffered", "randwrite", replace, what);
}

/// A file grown by another writer (iopath never grows a user's file).
#[test]
fn a_file_extended_during_writes_fails_the_run() {
    let grow = |file: &Path| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .unwrap()
            .set_len(FILE_LEN * 2)
            .unwrap();
    };
    let what = |file: &Path| {
        format!(
            "extended {} from {FILE_LEN} to {}",
            file.display(),
            FILE_LEN * 2
        )
    };
    changed_mid_run("direct", "randwrite", grow, what);
}

/// iopath's own test file (`--dir`, unnamed where the file system allows)
/// cut by another process through `/proc/PID/fd/N` during `pattern`: the
/// same failure, and the file still goes at the end.
fn own_file_truncated(method: &str, pattern: &str) {
    let (dir, out_dir) = (scratch(), scratch());
    let json = out_dir.path().join("r.json");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("iopath"))
        .arg("run")
        .arg("--dir")
        .arg(dir.path())
        .args(["--size", "32M", "--methods", method, "--patterns", pattern])
        // One request in flight (the copy pattern matches none).
        .args(if pattern == "copy" {
            &[][..]
        } else {
            &["--concurrency", "1"][..]
        })
        .args([
            "--span", "8M", "--time", "300ms", "--repeat", "4", "--quiet",
        ])
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let under_way = wait_under_way(&mut child, &json).expect("runs here");
    // The test file: the descriptor whose link leads into `dir` (not a
    // copy's).
    let fd = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let to = std::fs::read_link(&p).ok()?;
            (to.starts_with(dir.path()) && !to.to_string_lossy().contains("-copy-")).then_some(p)
        })
        .next();
    if let (true, Some(fd)) = (under_way, &fd) {
        truncate_to_0(fd);
    }
    let out = child.wait_with_output().unwrap();
    let all = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(under_way && fd.is_some(), "{all}");
    assert_eq!(out.status.code(), Some(1), "{all}");
    let v = saved(&json).expect("the JSON stays valid");
    let c = &v["cases"][0];
    let e = c["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {all}"));
    assert!(
        e.contains(&format!(
            "another process truncated {}",
            dir.path().display()
        )) && e.contains(&format!(" from {FILE_LEN} to ")),
        "{e}"
    );
    assert!((1..4).contains(&reps(c)), "{c}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "iopath's test file (and a copy) removed"
    );
}

#[test]
fn iopaths_own_file_truncated_during_writes_fails_the_run_and_goes() {
    own_file_truncated("direct", "randwrite");
}

/// The copy pattern reads its source whole: cut, the copy ends short, and
/// the error says who cut it.
#[test]
fn iopaths_own_file_truncated_during_copies_fails_the_run_and_goes() {
    own_file_truncated("buffered", "copy");
}

/// Cut to 0 and grown back to its length in one step, as
/// `os.truncate(f, 0); os.truncate(f, n)` does: the length and the inode
/// stay, the data is gone (all holes). Freeing 32 MiB takes a while: a
/// check during the cut sees it short, one after sees the holes.
fn cut_and_grow_back(file: &Path) {
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.set_len(0).unwrap();
    f.set_len(FILE_LEN).unwrap();
}

fn cut_or_grown_back(file: &Path) -> Vec<String> {
    vec![
        format!("cut {} and grew it back", file.display()),
        truncated(file),
    ]
}

/// Regression: a cut grown back at once during ucache or uffd reads (no
/// short read, no SIGBUS: the holes read as zeros) was missed: exit 0, all
/// repetitions good, the user's data gone. The file was fully allocated:
/// its blocks (and its ctime) say so now.
#[test]
fn a_file_cut_and_grown_back_during_ucache_reads_fails_the_run() {
    changed_mid_run_saying_any("ucache", "randread", cut_and_grow_back, cut_or_grown_back);
}

#[test]
fn a_file_cut_and_grown_back_during_uffd_reads_fails_the_run() {
    changed_mid_run_saying_any("uffd", "randread", cut_and_grow_back, cut_or_grown_back);
}

/// During writes the ctime moves with iopath's own writes; the blocks of
/// the fully allocated file, which writes of the first 8 MiB cannot bring
/// back, still see the cut.
#[test]
fn a_file_cut_and_grown_back_during_writes_fails_the_run() {
    changed_mid_run_saying_any(
        "buffered",
        "randwrite",
        cut_and_grow_back,
        cut_or_grown_back,
    );
}

/// The same loss without a moment of a shorter file: every block punched
/// out at once (`fallocate(PUNCH_HOLE|KEEP_SIZE)`), so only the new checks
/// can see it, during reads (blocks, ctime) and writes (blocks).
fn punch_all(file: &Path) {
    use rustix::fs::{fallocate, FallocateFlags};
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    fallocate(
        &f,
        FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
        0,
        FILE_LEN,
    )
    .unwrap();
}

fn holes_now(file: &Path) -> String {
    format!(
        "cut {} and grew it back (fully allocated before",
        file.display()
    )
}

/// During reads either check may see it first (the file system may move
/// the ctime before it frees the blocks).
#[test]
fn a_file_whose_data_is_punched_out_during_ucache_reads_fails_the_run() {
    let either = |file: &Path| {
        vec![
            holes_now(file),
            format!("changed {} (its ctime moved", file.display()),
        ]
    };
    changed_mid_run_saying_any("ucache", "randread", punch_all, either);
}

#[test]
fn a_file_whose_data_is_punched_out_during_writes_fails_the_run() {
    changed_mid_run("direct", "randwrite", punch_all, holes_now);
}

//! Helpers shared by the integration test binaries.
// Each test binary uses its own subset of these.
#![allow(dead_code)]

pub mod block;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// A result written by the last commit before verdicts and warnings were
/// facts (issue 27), as a path and as its JSON.
pub fn pre_facts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/pre-facts.json")
}

pub fn pre_facts_json() -> Value {
    serde_json::from_str(&std::fs::read_to_string(pre_facts()).unwrap()).unwrap()
}

pub fn iopath() -> Command {
    Command::cargo_bin("iopath").unwrap()
}

/// A scratch directory on the file system that holds the build (a real
/// disk), not /tmp (often tmpfs).
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// iopath's test files left in `dir` (there must be none after a run).
pub fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("iopath-")
        })
        .collect()
}

/// Every inline `<svg>...</svg>` of an HTML document.
pub fn inline_svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("an <svg> is closed") + start + 6;
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
}

/// Parse stdout as JSON; a failure shows what polluted it.
pub fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap_or_else(|e| {
        panic!(
            "stdout is not pure JSON ({e}):\n{}",
            String::from_utf8_lossy(out)
        )
    })
}

/// Run `cmd`, which must succeed (else its stderr is shown); its stdout,
/// which must be pure JSON.
pub fn ok_json(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)
}

/// `iopath run --dir DIR ARGS --json - --quiet`, which must succeed; its JSON.
/// One repetition per case unless `args` say how to repeat: these tests
/// check behaviour, not statistics.
pub fn run_json(dir: &Path, args: &[&str]) -> Value {
    let repeat_given = args
        .iter()
        .any(|a| ["--repeat", "--ci-target", "--max-time"].contains(a));
    ok_json(
        iopath()
            .args(["run", "--dir"])
            .arg(dir)
            .args(args)
            .args(if repeat_given {
                &[][..]
            } else {
                &["--repeat", "1"][..]
            })
            .args(["--json", "-", "--quiet"]),
    )
}

/// The case `method`/`pattern` of a result.
pub fn case<'a>(v: &'a Value, method: &str, pattern: &str) -> &'a Value {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["method"] == method && c["pattern"] == pattern)
        .unwrap_or_else(|| panic!("no case {method}/{pattern}"))
}

/// The warning codes of a result.
pub fn codes(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

/// True when process `pid` holds a file of `dir` open: its test file, named
/// or unnamed (an `O_TMPFILE` file reads `DIR/#INODE (deleted)`); with the
/// link's text.
pub fn holds_file_in(pid: u32, dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let prefix = format!("{}/", dir.display());
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .find(|l| l.starts_with(&prefix))
}

/// Set to `1` (CI, as root with loop devices and /dev/fuse), a test that
/// would skip for want of privileges or kernel support fails instead.
pub const REQUIRE_ROOT_TESTS_ENV: &str = "IOPATH_REQUIRE_ROOT_TESTS";

/// Skip the calling test (the caller returns): the reason goes straight to
/// the terminal, past the test harness's capture, as one `SKIPPED` line,
/// so a skipped test never reads as a plain pass; with
/// `IOPATH_REQUIRE_ROOT_TESTS=1` it panics instead.
pub fn skip(reason: impl std::fmt::Display) {
    let name = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if std::env::var_os(REQUIRE_ROOT_TESTS_ENV).is_some_and(|v| v == "1") {
        panic!(
            "{name} would be skipped ({reason}) but {REQUIRE_ROOT_TESTS_ENV}=1 requires it to run"
        );
    }
    skipped_line(&name, &reason);
}

/// Skip the calling test whatever `IOPATH_REQUIRE_ROOT_TESTS` says: for a
/// feature the kernel may lack even where root tests are required (an
/// io_uring mode, say). Printed as [`skip`] prints.
pub fn skip_anyway(reason: impl std::fmt::Display) {
    let name = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    skipped_line(&name, &reason);
}

fn skipped_line(name: &str, reason: &dyn std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {name}: {reason}");
}

/// Mark `path` as iopath marks a named file it makes
/// (`iopath::run::target::reap::MARK_XATTR`), as made by a run of pid `pid`
/// that started at clock tick `start` after this boot.
pub fn mark_as_iopaths(path: &Path, pid: u32, start: u64) {
    use iopath::run::target::reap::{boot_id, Mark, MARK_XATTR};
    let f = std::fs::File::open(path).unwrap();
    let ino = std::os::unix::fs::MetadataExt::ino(&f.metadata().unwrap());
    let m = Mark {
        pid,
        start,
        boot: boot_id(),
        ino,
    };
    rustix::fs::fsetxattr(
        &f,
        MARK_XATTR,
        m.value().as_bytes(),
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
}

/// How long a test waits for something a run is bound to do.
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// Poll `found` every 10 ms until it gives a value: `None` when `child`
/// ended first, or when [`DEADLINE`] passed.
pub fn poll_child<T>(
    child: &mut std::process::Child,
    mut found: impl FnMut() -> Option<T>,
) -> Option<T> {
    let deadline = std::time::Instant::now() + DEADLINE;
    while std::time::Instant::now() < deadline {
        if let Some(t) = found() {
            return Some(t);
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    None
}

/// [`poll_child`] for a condition; panics saying `what` never happened,
/// with the child's stderr when it ended first and piped it.
pub fn wait_while_running(
    child: &mut std::process::Child,
    what: &str,
    mut cond: impl FnMut() -> bool,
) {
    if poll_child(child, || cond().then_some(())).is_some() {
        return;
    }
    let ended = child.try_wait().unwrap();
    let mut stderr = String::new();
    if ended.is_some() {
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
        }
    }
    match ended {
        Some(st) => panic!("the run ended ({st}) before {what}\n{stderr}"),
        None => panic!("{what}: not within {DEADLINE:?}"),
    }
}

/// A worker thread of a run's repetition, as /proc shows it.
#[derive(Debug, Clone, Copy)]
pub struct WorkerThread {
    /// Bytes read and written by its system calls (`rchar` + `wchar`):
    /// its I/O, and the few KiB of /proc it reads around its loop.
    pub io_bytes: u64,
    /// Time on a CPU, user and system, in ms (clock-tick resolution).
    pub cpu_ms: u64,
    /// Page faults, minor and major: its buffers' first touches, and
    /// every page it reads through a mapping.
    pub faults: u64,
}

/// The worker threads of process `pid` now: iopath names every thread it
/// starts besides a repetition's workers (`iopath-progress`,
/// `iopath-neighbour`, `iopath-pool-N`, ...), so a worker is a thread
/// other than the main one that has the main one's name. (Not under
/// mpirun: MPI's own threads are unnamed too.)
pub fn worker_threads(pid: u32) -> Vec<WorkerThread> {
    let task = format!("/proc/{pid}/task");
    let Ok(main) = std::fs::read_to_string(format!("{task}/{pid}/comm")) else {
        return Vec::new();
    };
    let tick_ms = 1000 / rustix::param::clock_ticks_per_second().max(1);
    let Ok(tids) = std::fs::read_dir(&task) else {
        return Vec::new();
    };
    tids.filter_map(|t| {
        let t = t.ok()?.path();
        if t.file_name()? == std::ffi::OsStr::new(&pid.to_string()) {
            return None;
        }
        (std::fs::read_to_string(t.join("comm")).ok()? == main).then_some(())?;
        let io = std::fs::read_to_string(t.join("io")).ok()?;
        let field = |name: &str| {
            io.lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        // Fields 10 (minflt) to 15 (stime), counted from the state, the
        // 3rd, just after the name's closing parenthesis.
        let stat = std::fs::read_to_string(t.join("stat")).ok()?;
        let f: Vec<u64> = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .skip(7)
            .take(6)
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        let &[minflt, _, majflt, _, utime, stime] = f.as_slice() else {
            return None;
        };
        Some(WorkerThread {
            io_bytes: field("rchar:") + field("wchar:"),
            cpu_ms: (utime + stime) * tick_ms,
            faults: minflt + majflt,
        })
    })
    .collect()
}

/// True when process `pid` is measuring: one of its workers is in a
/// repetition's timed loop, as it has read or written 1 MiB through
/// system calls (buffered, direct: its set-up reads a few KiB of /proc),
/// faulted 1000 pages in (mmap: its set-up touches a few dozen), or run
/// on a CPU for 30 ms (null: its set-up takes well under a millisecond).
pub fn measuring(pid: u32) -> bool {
    worker_threads(pid)
        .iter()
        .any(|w| w.io_bytes >= 1 << 20 || w.faults >= 1000 || w.cpu_ms >= 30)
}

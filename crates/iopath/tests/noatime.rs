//! `--noatime` (issue 31): every engine opens the target with O_NOATIME,
//! the result records it in `config.conditions.noatime`, and `--explain`
//! says it. (That an engine's reads then leave the access time alone is
//! `noatime_reads_leave_the_access_time_alone` in iopath-io: a whole run
//! also looks at the page cache between repetitions through an mmap of
//! the file, which may update it once, outside the timed interval.)

mod common;

use std::path::Path;

/// A read-only run of `methods` on `path`, with `extra` flags: its JSON.
fn read_run(path: &Path, methods: &str, extra: &[&str]) -> serde_json::Value {
    common::ok_json(
        common::iopath()
            .args(["run", "--file"])
            .arg(path)
            .args(["--methods", methods, "--patterns", "randread", "--bs", "4k"])
            .args(["--time", "100ms", "--concurrency", "1", "--repeat", "1"])
            .args(["--cache", "as-is", "--json", "-", "--quiet"])
            .args(extra),
    )
}

/// The methods whose case ran (no error, not skipped).
fn ran(v: &serde_json::Value) -> Vec<String> {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["error"].is_null() && c["skipped"].is_null())
        .map(|c| c["method"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn noatime_is_a_recorded_condition_of_the_run() {
    let dir = common::scratch();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let methods = "buffered,uring-buffered,mmap";

    let plain = read_run(&path, methods, &[]);
    assert_eq!(plain["config"]["conditions"]["noatime"], false);
    let v = read_run(&path, methods, &["--noatime"]);
    assert_eq!(v["config"]["conditions"]["noatime"], true);
    // The flag takes no method away: what ran plainly runs with it.
    assert_eq!(ran(&v), ran(&plain));
    assert!(!ran(&v).is_empty());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the test's own file is left: {left:?}");
}

/// A job file's `[run] noatime = true` is the flag's setting, and the
/// flag given with a job file that does not set it still applies.
#[test]
fn noatime_from_a_job_file_or_beside_one() {
    let dir = common::scratch();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let job = |noatime: bool| {
        let p = dir.path().join(format!("job-{noatime}.toml"));
        let run = if noatime {
            "[run]\nnoatime = true\n"
        } else {
            ""
        };
        let case = "[[case]]\nmethod = [\"buffered\"]\npattern = \"randread\"\nbs = \"4k\"\n";
        std::fs::write(&p, format!("{run}{case}")).unwrap();
        p
    };
    let conditions = |job: &Path, extra: &[&str]| {
        common::ok_json(
            common::iopath()
                .arg("run")
                .arg(job)
                .arg("--file")
                .arg(&path)
                .args(["--time", "100ms", "--repeat", "1", "--cache", "as-is"])
                .args(["--json", "-", "--quiet"])
                .args(extra),
        )["config"]["conditions"]["noatime"]
            .clone()
    };
    assert_eq!(conditions(&job(true), &[]), true);
    assert_eq!(conditions(&job(false), &[]), false);
    assert_eq!(conditions(&job(false), &["--noatime"]), true);
}

/// `--noatime` on a file the user does not own (O_NOATIME is the owner's):
/// one line naming the file and what to do, exit 2, before any estimate or
/// run; every method used to fail on EPERM in turn, and the run exit 1.
#[test]
fn noatime_on_a_file_of_another_user_is_refused_before_the_run() {
    use std::os::unix::fs::PermissionsExt;
    if !rustix::process::geteuid().is_root() {
        common::skip("switching to the user nobody needs root");
        return;
    }
    if std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip("setpriv is not installed (apt-get install util-linux)");
        return;
    }
    // Outside the build directory, which may be closed to nobody.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let path = dir.path().join("roots.bin");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    // A copy nobody can run.
    let bin = dir.path().join("iopath");
    std::fs::copy(env!("CARGO_BIN_EXE_iopath"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid",
            "nobody",
            "--regid",
            "nogroup",
            "--clear-groups",
            "--",
        ])
        .arg(&bin)
        .args(["run", "--file"])
        .arg(&path)
        .args([
            "--noatime",
            "--methods",
            "buffered,direct",
            "--patterns",
            "randread",
        ])
        .args(["--time", "100ms", "--concurrency", "1", "--repeat", "1"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches("O_NOATIME").count(), 1, "{stderr}");
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(!stderr.contains("estimated duration"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// Every engine's open takes the flag, not io_uring's alone (the review:
/// only uring was checked to leave the access time alone). The file's
/// access time is set two days back, which a plain read moves (relatime's
/// 24 hours); each method's reads under `--noatime` must leave it.
#[test]
fn noatime_reaches_every_engines_open() {
    use std::time::{Duration, SystemTime};
    let dir = common::scratch();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let old = SystemTime::now() - Duration::from_secs(2 * 86_400);
    let set_old = || {
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_times(
            std::fs::FileTimes::new()
                .set_accessed(old)
                .set_modified(old - Duration::from_secs(60)),
        )
        .unwrap();
    };
    let atime = || std::fs::metadata(&path).unwrap().accessed().unwrap();
    // The control: a plain read moves it here, or this mount keeps no
    // access times and nothing can be told.
    set_old();
    read_run(&path, "buffered", &[]);
    if atime() == old {
        common::skip("this mount does not update access times (noatime)");
        return;
    }
    // iopath's own read of the file before a warm run (and its look at
    // the page cache) opens it as the engines do.
    set_old();
    let out = common::iopath()
        .args(["run", "--file"])
        .arg(&path)
        .args([
            "--methods",
            "buffered",
            "--patterns",
            "randread",
            "--bs",
            "4k",
        ])
        .args(["--time", "100ms", "--concurrency", "1", "--repeat", "1"])
        .args(["--cache", "warm", "--noatime", "--json", "-", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        atime(),
        old,
        "the warm read before the run moved the access time"
    );
    let methods = [
        "buffered",
        "dontcache",
        "direct",
        "mmap",
        "uring",
        "uring-buffered",
        "aio",
        "threadpool",
        "ucache",
    ];
    let mut moved = Vec::new();
    for m in methods {
        set_old();
        let v = read_run(&path, m, &["--noatime"]);
        if ran(&v).is_empty() {
            continue; // not on this kernel or file system
        }
        if atime() != old {
            moved.push(m);
        }
    }
    assert!(
        moved.is_empty(),
        "read under --noatime moved the access time: {moved:?}"
    );
}

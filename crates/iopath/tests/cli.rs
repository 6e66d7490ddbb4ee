//! Command-line tests: the `null` method, small temporary files on a real
//! file system, tmpfs, bad input and Ctrl-C. No timing assertions.

use std::path::Path;
use std::process::Stdio;

use predicates::prelude::*;
use serde_json::Value;

mod common;
use common::*;

#[test]
fn methods_lists_every_method_with_advice() {
    iopath()
        .arg("methods")
        .assert()
        .success()
        .stdout(predicate::str::contains("uring-sqpoll"))
        .stdout(predicate::str::contains("aio"))
        .stdout(predicate::str::contains("use it when"));
}

/// The hints, what each asks of the kernel, and which methods take which:
/// mmap takes populate and hugepage, not noreuse; buffered the reverse;
/// direct none.
#[test]
fn methods_lists_the_hints_and_which_methods_take_them() {
    let out = iopath().arg("methods").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("mmap+random"), "{text}");
    for h in iopath_io::Hint::ALL {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{h} ")))
            .unwrap_or_else(|| panic!("no line for hint {h}:\n{text}"));
        assert!(line.contains(h.summary()), "{line}");
    }
    // The last cell of a method's row, over the lines it wraps to (their
    // first cell is empty).
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('│')
            .split('┆')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let row = |m: &str| {
        let lines: Vec<Vec<String>> = text.lines().map(cells).collect();
        let at = lines
            .iter()
            .position(|c| c.len() == 4 && c[0] == m)
            .unwrap_or_else(|| panic!("no row for {m}:\n{text}"));
        let mut hints = vec![lines[at][3].clone()];
        for c in lines[at + 1..]
            .iter()
            .take_while(|c| c.len() == 4 && c[0].is_empty())
        {
            hints.push(c[3].clone());
        }
        hints.retain(|h| !h.is_empty());
        hints.join(" ")
    };
    assert_eq!(row("mmap"), "random sequential willneed hugepage populate");
    assert_eq!(row("buffered"), "random sequential willneed noreuse");
    assert_eq!(row("direct"), "-");
}

#[test]
fn null_run_writes_pure_json_to_stdout_and_creates_no_file() {
    let dir = scratch();
    let out = iopath()
        .current_dir(dir.path())
        .args([
            "run",
            "--concurrency",
            "32",
            "--methods",
            "null",
            "--patterns",
            "randread,write",
            "--time",
            "100ms",
            "--json",
            "-",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let v = json_of(&out.stdout);
    assert_eq!(v["schema_version"], 3);
    assert_eq!(v["tool"]["name"], "iopath");
    let c = case(&v, "null", "randread");
    // Adaptive by default: at least 6 measured repetitions or the budget.
    let rc = &c["repetition_control"];
    assert!(v["config"]["repeat"].is_null(), "{}", v["config"]);
    assert!(
        rc["measured"].as_u64().unwrap() >= 6 || rc["stopped_by"] == "max_time",
        "{rc}"
    );
    // Every repetition has its time series: 100 ms repetitions at the
    // default 10 ms interval give 10 full intervals and what the end of
    // the repetition took beyond them, as many as its duration covers.
    let rep = &c["repetitions"][0];
    let series = &rep["series"];
    assert_eq!(series["interval_ns"], 10_000_000);
    let n = series["bw_bytes_per_s"].as_array().unwrap().len() as u64;
    let duration = rep["duration_ns"].as_u64().unwrap();
    assert!(n >= 10, "{series}");
    assert_eq!(
        n,
        duration.div_ceil(10_000_000),
        "{series} over {duration} ns"
    );
    assert_eq!(c["queue_depth"], 32, "null honours the queue depth");
    let s = &c["summary"];
    assert!(s["ios"].as_u64().unwrap() > 0);
    assert_eq!(
        s["io_bytes"].as_u64().unwrap(),
        s["ios"].as_u64().unwrap() * 4096
    );
    assert!(s["lat_ns"]["p50"].as_u64().unwrap() <= s["lat_ns"]["p99"].as_u64().unwrap());
    assert!(leftovers(dir.path()).is_empty());
    assert!(v["target"].is_null(), "null needs no file");
}

#[test]
fn unknown_method_and_pattern_are_usage_errors_listing_valid_names() {
    iopath()
        .args(["run", "--methods", "turbo"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("valid methods").and(predicate::str::contains("uring-iopoll")),
        );
    iopath()
        .args(["run", "--patterns", "zigzag"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("randrw"));
    iopath()
        .args(["run", "--sync", "sometimes"])
        .assert()
        .code(2);
}

#[test]
fn misaligned_block_size_for_o_direct_names_the_alignment() {
    let dir = scratch();
    iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "4M",
            "--methods",
            "direct",
            "--patterns",
            "read",
            "--bs",
            "1000",
            "--quiet",
        ])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("O_DIRECT alignment").and(predicate::str::contains("--bs")),
        );
    assert!(
        leftovers(dir.path()).is_empty(),
        "no file left after a usage error"
    );
}

#[test]
fn impossible_sizes_are_refused_before_anything_is_written() {
    let dir = scratch();
    iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--size", "900T", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("available").and(predicate::str::contains("--size")));
    iopath()
        .args(["run", "--size", "64k", "--bs", "1M"])
        .assert()
        .code(2);
    iopath()
        .args(["run", "--dir", "/nonexistent/iopath-test"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/iopath-test"));
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn small_run_over_every_method_measures_and_cleans_up() {
    let dir = scratch();
    let json = dir.path().join("result.json");
    iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "8M",
            "--time",
            "100ms",
            "--repeat",
            "1",
            "--patterns",
            "read,randwrite",
            // Every method at depth 32, unmatched: the synchronous ones
            // capped at 1, and saying so.
            "--qd",
            "32",
            "--json",
        ])
        .arg(&json)
        .arg("--quiet")
        .assert()
        .success()
        .stdout(predicate::str::contains("sequential read"))
        .stdout(predicate::str::contains("random write"));
    let text = std::fs::read_to_string(&json).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    // One repetition: unbounded intervals are written as null, and read back.
    let back: iopath::result::RunResult = serde_json::from_str(&text).expect("reads its own JSON");
    assert_eq!(back.cases.len(), v["cases"].as_array().unwrap().len());
    assert!(v["finished_at"].is_string());
    assert_eq!(v["target"]["size_bytes"], 8 << 20);
    assert_eq!(v["target"]["prefilled"], true);
    let cases = v["cases"].as_array().unwrap();
    // 10 default methods on both patterns, and mmap+random beside mmap on
    // the random one.
    assert_eq!(
        cases.len(),
        2 * 10 + 1,
        "10 methods x 2 patterns + mmap+random"
    );
    for c in cases {
        let measured = !c["summary"].is_null();
        let skipped = c["skipped"].as_str().is_some_and(|s| !s.is_empty());
        assert!(
            measured ^ skipped,
            "each case is measured or skipped with a reason: {c}"
        );
        assert!(c["error"].is_null(), "{c}");
        if measured && c["pattern"] == "read" {
            // Methods that cache: one pass over the 8 MiB file in 1 MiB
            // blocks; the others start over and run the whole 150 ms.
            let io = c["summary"]["io_bytes"].as_u64().unwrap();
            let caches =
                ["buffered", "mmap", "uring-buffered"].contains(&c["method"].as_str().unwrap());
            if caches {
                assert_eq!(io, 8 << 20, "{}", c["method"]);
            } else {
                assert!(
                    io >= 8 << 20 && io % (1 << 20) == 0,
                    "{}: {io}",
                    c["method"]
                );
                if io > 8 << 20 {
                    assert_eq!(c["passes"]["kind"], "wrapped", "{c}");
                }
            }
        }
    }
    for m in ["buffered", "direct", "mmap"] {
        let c = case(&v, m, "randwrite");
        assert_eq!(c["queue_depth"], 1);
        assert_eq!(c["queue_depth_requested"], 32);
        assert!(
            c["notes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n.as_str().unwrap().contains("synchronous")),
            "{c}"
        );
    }
    let probe = v["probe"].as_array().unwrap();
    let iopoll = probe
        .iter()
        .find(|p| p["method"] == "uring-iopoll")
        .unwrap();
    if iopoll["usable"] == false {
        assert!(!iopoll["reason"].as_str().unwrap().is_empty());
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn every_sync_policy_runs_a_write() {
    let dir = scratch();
    for sync in ["none", "end", "dsync", "each"] {
        let v = run_json(
            dir.path(),
            &[
                "--size",
                "2M",
                "--io-size",
                "256k",
                "--bs",
                "64k",
                "--concurrency",
                "1",
                "--methods",
                "buffered,mmap,uring,aio",
                "--patterns",
                "write",
                "--sync",
                sync,
            ],
        );
        for c in v["cases"].as_array().unwrap() {
            assert_eq!(c["sync"], sync);
            if c["skipped"].is_null() {
                assert_eq!(
                    c["summary"]["io_bytes"],
                    256 << 10,
                    "{sync} {}",
                    c["method"]
                );
            }
        }
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn run_in_tmpfs_skips_or_annotates_o_direct_and_finishes() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipped: /dev/shm does not exist here");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "4M",
            "--time",
            "50ms",
            "--repeat",
            "1",
            "--patterns",
            "randread",
            "--methods",
            "buffered,direct,uring",
        ])
        .args(["--json", "-", "--quiet"])
        .assert()
        .success()
        .get_output()
        .clone();
    let v = json_of(&out.stdout);
    assert_eq!(v["system"]["fs_type"], "tmpfs");
    let direct = case(&v, "direct", "randread");
    // Older kernels refuse O_DIRECT on tmpfs (skipped with the reason);
    // newer ones accept it, and iopath says no device is measured.
    let skipped = direct["skipped"]
        .as_str()
        .is_some_and(|s| s.contains("O_DIRECT"));
    let noted = direct["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("tmpfs"));
    assert!(skipped || noted, "{direct}");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn existing_file_is_never_written_without_allow_write() {
    let dir = scratch();
    let user = dir.path().join("precious.bin");
    let content: Vec<u8> = (0..(1u32 << 20)).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&user, &content).unwrap();
    iopath()
        .args(["run", "--file"])
        .arg(&user)
        .args(["--patterns", "write", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--allow-write"));
    iopath()
        .args(["run", "--file"])
        .arg(&user)
        .args([
            "--patterns",
            "read,randread",
            "--methods",
            "buffered,direct",
            "--time",
            "50ms",
            "--quiet",
        ])
        .assert()
        .success();
    iopath()
        .args(["run", "--file"])
        .arg(&user)
        .args(["--size", "2M", "--patterns", "read", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("never extends"));
    assert_eq!(
        std::fs::read(&user).unwrap(),
        content,
        "user file untouched"
    );
}

#[test]
fn file_that_does_not_exist_is_created_and_removed() {
    let dir = scratch();
    let path = dir.path().join("fresh.dat");
    iopath()
        .args(["run", "--file"])
        .arg(&path)
        .args([
            "--size",
            "2M",
            "--methods",
            "buffered",
            "--patterns",
            "write,read",
            "--time",
            "50ms",
            "--quiet",
        ])
        .assert()
        .success();
    assert!(!path.exists());
}

#[test]
fn probe_reports_every_method_with_reasons() {
    let dir = scratch();
    let out = iopath()
        .args(["probe", "--json", "--dir"])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let v = json_of(&out.stdout);
    let methods = v["methods"].as_array().unwrap();
    // Every method, the opt-in ones (mmap-dax, the copy-only
    // copy-file-range and sendfile, null) included.
    assert_eq!(methods.len(), iopath_io::Method::ALL.len());
    for m in methods {
        if m["usable"] == false {
            assert!(m["reason"].as_str().is_some_and(|r| r.len() > 10), "{m}");
        }
    }
    assert!(v["dio_align_offset"].as_u64().unwrap().is_power_of_two());
    assert!(leftovers(dir.path()).is_empty());
    iopath()
        .args(["probe", "--dir"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("O_DIRECT").and(predicate::str::contains("uring-iopoll")));
}

#[test]
fn ctrl_c_keeps_results_and_removes_the_test_file() {
    interrupt_keeps_results(rustix::process::Signal::INT);
}

#[test]
fn sigterm_keeps_results_and_removes_the_test_file() {
    interrupt_keeps_results(rustix::process::Signal::TERM);
}

#[test]
fn closed_terminal_sighup_keeps_results_and_removes_the_test_file() {
    interrupt_keeps_results(rustix::process::Signal::HUP);
}

fn interrupt_keeps_results(signal: rustix::process::Signal) {
    let dir = scratch();
    let json = dir.path().join("partial.json");
    let bin = assert_cmd::cargo::cargo_bin("iopath");
    let mut child = std::process::Command::new(bin)
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "8M",
            "--concurrency",
            "1",
            "--methods",
            "null,buffered,direct",
            "--patterns",
            "randread,read",
            // O_DIRECT cannot do 1000-byte requests: direct is refused
            // in both jobs, before any I/O.
            "--bs",
            "1000",
            "--time",
            "30s",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first case (null or buffered, 30 s) is measuring: a
    // worker is in its timed loop, so the repetition cut has I/O to keep.
    let pid = child.id();
    common::wait_while_running(&mut child, "the first case was measuring", || {
        common::measuring(pid)
    });
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "test file removed after Ctrl-C"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    // The two methods take turns (interleaved), in an order shuffled per
    // round: whichever ran first was cut, and keeps what it measured.
    let ran: Vec<&Value> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["summary"].is_null())
        .collect();
    assert_eq!(ran.len(), 1, "{}", v["cases"]);
    assert!(
        ran[0]["summary"]["ios"].as_u64().unwrap() > 0,
        "partial case kept"
    );
    assert_eq!(ran[0]["repetitions"][0]["interrupted"], true);
    // The job never reached says so, but a case refused before any I/O
    // keeps its own reason there too (review of issue 18: the
    // interruption overwrote it).
    let skipped = |c: &Value| c["skipped"].as_str().unwrap_or("").to_string();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6, "{}", v["cases"]);
    for c in cases.iter().filter(|c| c["method"] == "direct") {
        assert!(skipped(c).contains("O_DIRECT alignment"), "{c}");
    }
    assert_eq!(
        cases
            .iter()
            .filter(|c| skipped(c).contains("before this case"))
            .count(),
        2,
        "{}",
        v["cases"]
    );
    // The report says what was interrupted (at the end when no verdict
    // carries it).
    let stdout = String::from_utf8_lossy(&out.stdout);
    let name = format!("Interrupted (SIG{})", signal_name(signal));
    assert!(stdout.contains(&name), "{stdout}");
}

/// `INT`, `TERM`, `HUP`: the name the run gives the signal, less `SIG`.
fn signal_name(signal: rustix::process::Signal) -> &'static str {
    use rustix::process::Signal;
    match signal {
        Signal::INT => "INT",
        Signal::TERM => "TERM",
        Signal::HUP => "HUP",
        _ => "QUIT",
    }
}

/// True when every directory above `path` may be searched by anyone.
fn world_reachable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.ancestors().skip(1).all(|d| {
        d.as_os_str().is_empty()
            || std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
    })
}

/// Run `iopath run --dir SCRATCH ARGS --json - --quiet` as `nobody` (no
/// CAP_IPC_LOCK, no right to drop caches) after `ulimit ULIMIT_ARGS`; its
/// JSON. `None` (test skipped) when not root, without setpriv, or when
/// nobody cannot reach the build directory.
fn run_as_nobody(ulimit_args: &str, args: &str) -> Option<Value> {
    if !rustix::process::geteuid().is_root() || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipped: needs root and setpriv to run as nobody");
        return None;
    }
    let bin = assert_cmd::cargo::cargo_bin("iopath");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    if !world_reachable(&bin) || !world_reachable(tmp) {
        eprintln!(
            "skipped: nobody cannot reach {} or {}",
            bin.display(),
            tmp.display()
        );
        return None;
    }
    let dir = scratch();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    // The limits are set first, then setpriv drops to nobody and runs iopath.
    let script = format!(
        "ulimit {ulimit_args} && exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups -- \
         {} run --dir {} {args} --json - --quiet",
        bin.display(),
        dir.path().display()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stderr: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(leftovers(dir.path()).is_empty());
    Some(json_of(&out.stdout))
}

/// The uring case's notes when run as nobody under `ulimit ULIMIT_ARGS`.
fn uring_notes_without_ipc_lock(ulimit_args: &str) -> Option<Vec<String>> {
    let v = run_as_nobody(
        ulimit_args,
        "--size 8M --methods uring --patterns read --bs 256k --qd 8 --time 50ms",
    )?;
    let c = case(&v, "uring", "read");
    assert!(c["error"].is_null() && c["skipped"].is_null(), "{c}");
    Some(
        c["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect(),
    )
}

#[test]
fn drop_caches_without_permission_is_a_clear_warning() {
    let Some(v) = run_as_nobody(
        "-S -l 64",
        "--size 4M --methods buffered --patterns read --time 20ms --drop-caches",
    ) else {
        return;
    };
    let c = case(&v, "buffered", "read");
    assert!(c["summary"].is_object(), "the run went on: {c}");
    assert!(c["notes"].to_string().contains("drop_caches"), "{c}");
    assert!(
        codes(&v).contains(&"drop_caches_denied".to_string()),
        "{:?}",
        codes(&v)
    );
}

/// One test, not two: io_uring charges locked memory to the *user*, so two
/// runs as `nobody` at the same time would share (and race for) one budget.
#[test]
fn memlock_limits_fall_back_or_raise_and_say_so() {
    // Soft and hard limit 64 KiB: 2 MiB of registered buffers cannot be
    // locked, so plain buffers are used, and the notes say why.
    let Some(notes) = uring_notes_without_ipc_lock("-l 64") else {
        return;
    };
    assert!(
        notes
            .iter()
            .any(|n| n.contains("plain buffers") && n.contains("RLIMIT_MEMLOCK")),
        "{notes:?}"
    );
    // Soft 64 KiB, hard as it is: iopath raises the soft limit to the hard
    // one and registers its buffers.
    let hard = rustix::process::getrlimit(rustix::process::Resource::Memlock).maximum;
    if hard.is_some_and(|h| h < 4 << 20) {
        eprintln!(
            "skipped the raise check: the hard RLIMIT_MEMLOCK ({hard:?} bytes) is below 4 MiB"
        );
        return;
    }
    let Some(notes) = uring_notes_without_ipc_lock("-S -l 64") else {
        return;
    };
    assert!(
        notes
            .iter()
            .any(|n| n.contains("raised the RLIMIT_MEMLOCK")),
        "{notes:?}"
    );
    assert!(
        !notes.iter().any(|n| n.contains("plain buffers")),
        "{notes:?}"
    );
}

#[test]
fn sparse_target_and_data_kinds_are_recorded_and_warned() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "8M",
            "--sparse",
            "--data",
            "compress:50",
            "--methods",
            "buffered",
            "--patterns",
            "write,read",
            "--time",
            "50ms",
        ],
    );
    assert_eq!(v["target"]["sparse"], true);
    assert_eq!(v["target"]["prefilled"], false);
    assert_eq!(v["config"]["data"], "compress:50");
    let codes = codes(&v);
    assert!(
        codes.iter().any(|c| c == "sparse_target")
            && codes.iter().any(|c| c == "compressible_data"),
        "{codes:?}"
    );
    assert!(leftovers(dir.path()).is_empty());

    let existing = dir.path().join("data.bin");
    std::fs::write(&existing, vec![1u8; 4096]).unwrap();
    iopath()
        .args(["run", "--sparse", "--file"])
        .arg(&existing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--sparse"));
    assert_eq!(std::fs::read(&existing).unwrap(), vec![1u8; 4096]);
    iopath()
        .args(["run", "--data", "lz4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("compress:N"));
}

#[test]
fn impossible_requests_are_refused_before_measuring() {
    let dir = scratch();
    // Buffers beyond memory: a usage error, not an allocation abort.
    iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "64M",
            "--bs",
            "64M",
            "--qd",
            "4096",
            "--methods",
            "uring",
            "--quiet",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("of buffers"));
    // An existing file smaller than one block of a sequential case.
    let small = dir.path().join("small.bin");
    std::fs::write(&small, vec![0u8; 8192]).unwrap();
    iopath()
        .args(["run", "--file"])
        .arg(&small)
        .args(["--patterns", "read", "--methods", "buffered", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("less than one"));
    // A JSON path that cannot be written, before anything runs.
    iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--json", "/nonexistent-dir/r.json", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist"));
    iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(dir.path())
        .arg("--quiet")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a directory"));
    assert!(leftovers(dir.path()).is_empty());
}

/// Adaptive repetition on the `null` method: warm-ups first and not
/// counted; an impossible target ends on the time budget, and the rule
/// never starts a repetition that would not fit; an easy one ends on the
/// target, never before 6 (exactly 6 is checked on a deterministic fake in
/// runner::repeat; null's speed moves with whatever else the CPUs run).
#[test]
fn adaptive_repetition_on_null_keeps_its_budget_and_warmups() {
    let dir = scratch();
    let run = |target: &str, budget: &str| {
        let out = iopath()
            .current_dir(dir.path())
            .args(["run", "--methods", "null", "--patterns", "randread"])
            .args(["--time", "20ms", "--max-time", budget, "--warmup", "2"])
            .args(["--ci-target", target, "--json", "-"])
            .assert()
            .success()
            .get_output()
            .clone();
        json_of(&out.stdout)
    };
    let v = run("0.0001%", "400ms");
    let c = case(&v, "null", "randread");
    let rc = &c["repetition_control"];
    assert_eq!(rc["stopped_by"], "max_time", "{rc}");
    assert_eq!(rc["warmup"], 2);
    let reps = c["repetitions"].as_array().unwrap();
    let warm: Vec<bool> = reps.iter().map(|r| r["warmup"] == true).collect();
    assert_eq!(&warm[..2], &[true, true]);
    assert!(warm[2..].iter().all(|w| !w), "{warm:?}");
    assert_eq!(rc["measured"].as_u64().unwrap() as usize, reps.len() - 2);
    assert_eq!(c["stats"]["bw_bytes_per_s"]["n"], rc["measured"]);
    // Past the floor of 3, every repetition but the last started with room
    // for one more (20 ms repetitions: the floor is far inside 400 ms).
    let timed: u64 = reps[..reps.len() - 1]
        .iter()
        .map(|r| r["duration_ns"].as_u64().unwrap())
        .sum();
    assert!(
        timed <= 400_000_000,
        "{timed} ns before the last repetition"
    );
    assert_eq!(v["config"]["max_time_ns"], 400_000_000u64);
    assert_eq!(v["config"]["warmup"], 2);

    let v = run("90%", "30s");
    let rc = &case(&v, "null", "randread")["repetition_control"];
    assert_eq!(rc["stopped_by"], "ci_target", "{rc}");
    assert!(rc["measured"].as_u64().unwrap() >= 6, "{rc}");
    assert!(rc["ci_level"].as_f64().unwrap() >= 0.95, "{rc}");
    assert!(rc["ci_rel"].as_f64().unwrap() <= 0.9, "{rc}");
}

#[test]
fn verdicts_are_printed_and_in_the_json() {
    let dir = scratch();
    let json = dir.path().join("r.json");
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--size", "8M", "--time", "20ms", "--repeat", "6"])
        .args([
            "--concurrency",
            "1",
            "--methods",
            "buffered,direct",
            "--patterns",
            "randread",
        ])
        .arg("--json")
        .arg(&json)
        .args(["--quiet", "--explain"])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout);
    let raw = std::fs::read_to_string(&json).unwrap();
    let v: Value = serde_json::from_str(&raw).unwrap();
    let back: iopath::result::RunResult = serde_json::from_str(&raw).expect("reads its own JSON");
    assert_eq!(back.verdicts.len(), 1);
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    let vd = &verdicts[0];
    assert_eq!(vd["pattern"], "randread");
    assert_eq!(vd["ranking"].as_array().unwrap().len(), 2);
    assert!(["buffered", "direct"].contains(&vd["pick"].as_str().unwrap()));
    // Printed wrapped to 120 columns: compare words.
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for line in vd["text"].as_array().unwrap() {
        assert!(
            words(&text).contains(&words(line.as_str().unwrap())),
            "{line} not printed"
        );
    }
    assert!(text.contains("verdict:"));
    assert_eq!(v["config"]["repeat"], 6);
    assert_eq!(
        case(&v, "direct", "randread")["repetition_control"]["stopped_by"],
        "fixed"
    );
}

/// `--json` naming something that is not a regular file: a FIFO gets one
/// document at the end and stays a FIFO (renaming over it, as for a file,
/// once turned this machine's /dev/null into a regular file); a symbolic
/// link is followed and stays a link.
#[test]
fn json_to_a_fifo_or_through_a_symlink_keeps_them() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch();
    let fifo = dir.path().join("out.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped the FIFO half: mkfifo is not available");
    } else {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(&fifo).unwrap())
        };
        iopath()
            .current_dir(dir.path())
            .args([
                "run",
                "--concurrency",
                "1",
                "--methods",
                "null",
                "--patterns",
                "randread,write",
            ])
            .args(["--time", "10ms", "--repeat", "2", "--quiet", "--json"])
            .arg(&fifo)
            .assert()
            .success();
        // First: a replaced FIFO would leave the reader waiting forever.
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        let text = reader.join().unwrap();
        let v = json_of(text.as_bytes());
        assert_eq!(
            v["cases"].as_array().unwrap().len(),
            2,
            "the whole run, once"
        );
    }
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    iopath()
        .current_dir(dir.path())
        .args(["run", "--methods", "null", "--patterns", "randread"])
        .args(["--time", "10ms", "--repeat", "1", "--quiet", "--json"])
        .arg(&link)
        .assert()
        .success();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v = json_of(std::fs::read(&real).unwrap().as_slice());
    assert_eq!(v["tool"]["name"], "iopath");
}

/// hmmap's RR: 8-byte random reads through a mapping, a fixed amount
/// touched (`--touch`, another name for `--io-size`).
#[test]
fn eight_byte_reads_touch_what_is_asked() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--methods",
            "mmap,buffered",
            "--patterns",
            "randread",
            "--bs",
            "8",
            "--touch",
            "256k",
            "--size",
            "4M",
        ],
    );
    for m in ["mmap", "buffered"] {
        let s = &case(&v, m, "randread")["summary"];
        assert_eq!(s["io_bytes"], 256 << 10, "{m}: {s}");
        assert_eq!(s["ios"], (256 << 10) / 8, "{m}: {s}");
    }
    assert!(leftovers(dir.path()).is_empty());
}

/// Issue 13: a method named twice runs as two arms of one job (`buffered`
/// and `buffered#2`), interleaved: every round runs each arm once, in a
/// recorded order, and the verdict calls the two a tie. A false call needs
/// the signed-rank interval (96% at 16 rounds) to miss 1 *and* to reach
/// beyond the 3% margin; with 16 rounds of warm (memory-speed) reads the
/// interval is a few percent wide, so that takes a real difference.
#[test]
fn aa_arms_run_interleaved_and_tie() {
    let dir = scratch();
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "8M",
            "--concurrency",
            "1",
            "--methods",
            "buffered,buffered",
            "--patterns",
            "randread",
            "--cache",
            "warm",
            "--repeat",
            "16",
            "--time",
            "20ms",
            "--json",
            "-",
            "--quiet",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let v = json_of(&out.stdout);
    assert_eq!(v["config"]["schedule"], "interleaved");
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    assert!(cases[0].get("arm").is_none(), "{}", cases[0]);
    assert_eq!(cases[1]["arm"], 2);
    // Rounds 1..16, one repetition of each arm per round, and the run's
    // order (seq) puts both arms of a round before the next round.
    let mut seen: Vec<(u64, u64)> = Vec::new();
    for c in cases {
        let reps = c["repetitions"].as_array().unwrap();
        let rounds: Vec<u64> = reps.iter().map(|r| r["round"].as_u64().unwrap()).collect();
        assert_eq!(rounds, (1..=16).collect::<Vec<u64>>());
        seen.extend(
            reps.iter()
                .map(|r| (r["round"].as_u64().unwrap(), r["seq"].as_u64().unwrap())),
        );
    }
    seen.sort_by_key(|&(_, seq)| seq);
    let by_seq: Vec<u64> = seen.iter().map(|&(round, _)| round).collect();
    let mut sorted = by_seq.clone();
    sorted.sort_unstable();
    assert_eq!(by_seq, sorted, "rounds run one after another");
    let verdict = &v["verdicts"][0];
    assert_eq!(verdict["paired"], true);
    let fastest: Vec<&str> = verdict["fastest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(fastest.len(), 2, "an A/A pair must tie: {verdict}");
    assert!(fastest.contains(&"buffered#2"), "{verdict}");
}

#[test]
fn a_launchers_several_tasks_that_cannot_be_ranks_are_refused_unless_ignored() {
    // A launcher said 3 tasks (here: PMI_SIZE alone, no MPI job): built
    // without MPI, or MPI seeing one process, 3 copies would run alone on
    // the same files and write the same outputs.
    let out = common::iopath()
        .env("PMI_SIZE", "3")
        .env_remove("IOPATH_MPI_IGNORE")
        .args([
            "run",
            "--methods",
            "null",
            "--patterns",
            "read",
            "--repeat",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("started as one of 3 tasks"), "{stderr}");
    assert!(stderr.contains("IOPATH_MPI_IGNORE=1"), "{stderr}");
    let out = common::iopath()
        .env("PMI_SIZE", "3")
        .env("IOPATH_MPI_IGNORE", "1")
        .args([
            "run",
            "--methods",
            "null",
            "--patterns",
            "read",
            "--repeat",
            "1",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

//! Many ranks, one result (issue 19, docs/mpi.md): iopath under Open MPI's
//! `mpirun`, on one machine (2 and 4 ranks, every layout), with a rank that
//! is refused a method or fails, with Ctrl-C, and across two "hosts" made
//! of network namespaces joined by a veth pair (ranks talk over TCP).
//!
//! Built only with the cargo feature `mpi`. Without `mpirun` (or, for the
//! namespace test, without root, `ip` or `unshare`) a test skips with the
//! reason; `IOPATH_REQUIRE_MPI_TESTS=1` (CI) turns such a skip into a
//! failure.
#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const REQUIRE: &str = "IOPATH_REQUIRE_MPI_TESTS";

/// Skip the calling test (see the module docs).
fn skip(reason: &str) {
    let name = std::thread::current().name().unwrap_or("?").to_string();
    if std::env::var(REQUIRE).as_deref() == Ok("1") {
        panic!("{name} would be skipped ({reason}) but {REQUIRE}=1 requires it to run");
    }
    eprintln!("SKIPPED {name}: {reason}");
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_iopath"))
}

/// `mpirun` with what this machine needs (root, more ranks than cores,
/// no InfiniBand probing).
fn mpirun() -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "--mca", "btl", "self,tcp"]);
    if is_root() {
        c.arg("--allow-run-as-root");
    }
    c.env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    c
}

/// How long one mpirun may take before the test calls it hung.
const HANG: std::time::Duration = std::time::Duration::from_secs(300);

/// Run `c` (its output captured) to its end, or fail the test when it
/// hangs: mpirun is stopped by its pid (SIGTERM, then SIGKILL).
fn run(mut c: Command) -> Output {
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().expect("mpirun starts");
    let out = wait_or_kill(child, HANG);
    eprintln!(
        "{:?}\n--- stdout\n{}--- stderr\n{}",
        c,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `child`'s output, or a panic after `limit` (the child stopped first).
fn wait_or_kill(child: std::process::Child, limit: std::time::Duration) -> Output {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("mpirun's output"),
        Err(_) => {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            if rx.recv_timeout(std::time::Duration::from_secs(5)).is_err() {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            panic!("mpirun (pid {pid:?}) hung for {limit:?}: stopped");
        }
    }
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The result's invariants: the `mpi` object names `ranks` ranks; every
/// repetition's aggregate is the sum of its ranks' bytes over the common
/// interval (first start to last end), and the case's repetition with that
/// seq holds exactly it.
fn check_one_result(v: &Value, ranks: u64, layout: &str) {
    let mpi = &v["mpi"];
    assert_eq!(mpi["ranks"], ranks, "{mpi}");
    assert_eq!(mpi["layout"], layout);
    let reps = mpi["repetitions"].as_array().unwrap();
    assert!(!reps.is_empty());
    for r in reps {
        let rows = r["ranks"].as_array().unwrap();
        assert_eq!(rows.len() as u64, ranks);
        // Every rank ran the slot's case (the same arm, in step).
        for x in rows {
            assert_eq!(x["case"], r["case"], "same case on every rank: {r}");
        }
        let sum: u64 = rows.iter().map(|x| x["io_bytes"].as_u64().unwrap()).sum();
        let start = rows.iter().map(|x| x["start_ns"].as_u64().unwrap()).min();
        let end = rows.iter().map(|x| x["end_ns"].as_u64().unwrap()).max();
        let common = end.unwrap() - start.unwrap();
        // (One Ctrl-C cut at its start may have moved nothing.)
        assert!(
            sum > 0 || r["interrupted"] == true,
            "every repetition moved bytes: {r}"
        );
        assert_eq!(
            r["io_bytes"].as_u64(),
            Some(sum),
            "aggregate = sum of ranks"
        );
        assert_eq!(
            r["common_ns"].as_u64(),
            Some(common),
            "first start to last end"
        );
        let bw = r["bw_bytes_per_s"].as_f64().unwrap();
        let want = sum as f64 / (common as f64 / 1e9);
        assert!((bw - want).abs() <= 1e-9 * want, "{bw} vs {want}");
        assert!(r["stonewall_bytes"].as_u64().unwrap() <= sum);
        // The case's own repetition is the aggregate.
        let seq = r["seq"].as_u64();
        let m = v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["repetitions"].as_array().unwrap())
            .find(|m| m["seq"].as_u64() == seq)
            .unwrap_or_else(|| panic!("a repetition with seq {seq:?}"));
        assert_eq!(m["io_bytes"].as_u64(), Some(sum));
        assert_eq!(m["duration_ns"].as_u64(), Some(common.max(1)));
    }
    let cases = mpi["cases"].as_array().unwrap();
    assert!(cases.iter().all(|c| c["slowest_rank"].as_u64().is_some()));
}

#[test]
fn two_and_four_ranks_write_one_result_in_every_layout() {
    if !have("mpirun") {
        return skip("no mpirun (Debian: apt-get install openmpi-bin libopenmpi-dev)");
    }
    for (n, layout) in [
        (2, "per-rank"),
        (2, "shared-segmented"),
        (4, "per-rank"),
        (4, "shared-strided"),
    ] {
        let dir = common::scratch();
        let out_dir = common::scratch();
        let json_path = out_dir.path().join("r.json");
        let mut c = mpirun();
        c.args(["-n", &n.to_string()])
            .arg(bin())
            .args([
                "run",
                "--methods",
                "direct,uring",
                "--patterns",
                "read,randread",
            ])
            .args(["--size", "8M", "--repeat", "2", "--time", "100ms"])
            // One case per method and pattern (the default compares two
            // concurrencies).
            .args(["--concurrency", "1"])
            .args(["--layout", layout, "--dir"])
            .arg(dir.path())
            .arg("--json")
            .arg(&json_path);
        let out = run(c);
        assert!(out.status.success(), "{n} ranks, {layout}");
        let v = json(&json_path);
        check_one_result(&v, n, layout);
        assert_eq!(v["cases"].as_array().unwrap().len(), 4);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout.matches("MPI: ").count(),
            1,
            "only rank 0 prints: {stdout}"
        );
        // The ranks' tables and their lines keep to 120 columns, as the
        // rest of the report (they printed 301-column lines before).
        let widest = stdout.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest <= 120, "{widest} columns:\n{stdout}");
        if layout == "per-rank" && n > 1 {
            assert!(stdout.contains("each rank its own file"), "{stdout}");
        }
        assert!(
            common::leftovers(dir.path()).is_empty(),
            "no test file left"
        );
        assert_eq!(std::fs::read_dir(out_dir.path()).unwrap().count(), 1);
    }
}

#[test]
fn a_method_refused_on_one_rank_is_skipped_on_all() {
    if !have("mpirun") {
        return skip("no mpirun");
    }
    // Rank 1's directory is on tmpfs, where RWF_DONTCACHE is refused.
    if rustix::fs::statfs("/dev/shm").map_or(true, |s| s.f_type != 0x0102_1994) {
        return skip("/dev/shm is not tmpfs");
    }
    let dir = common::scratch();
    let json_path = dir.path().join("r.json");
    let args = |d: &Path| -> Vec<String> {
        let mut a: Vec<String> = ["run", "--methods", "buffered,dontcache"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(["--patterns", "read", "--size", "4M", "--repeat", "2"].map(String::from));
        a.extend(["--dir".into(), d.display().to_string()]);
        a.extend(["--json".into(), json_path.display().to_string()]);
        a
    };
    let mut c = mpirun();
    c.args(["-n", "1"])
        .arg(bin())
        .args(args(dir.path()))
        .args([":", "-n", "1"])
        .arg(bin())
        .args(args(Path::new("/dev/shm")));
    let out = run(c);
    assert!(out.status.success());
    let v = json(&json_path);
    let dc = common::case(&v, "dontcache", "read");
    let why = dc["skipped"]
        .as_str()
        .expect("dontcache skipped on all ranks");
    assert!(dc["repetitions"].as_array().is_none_or(|r| r.is_empty()));
    // Where rank 0 alone could run it, the reason is rank 1's.
    if !why.contains("kernel") || why.contains("rank 1") {
        assert!(why.contains("rank 1"), "{why}");
    }
    let buffered = common::case(&v, "buffered", "read");
    assert!(buffered["summary"]["io_bytes"].as_u64().unwrap() > 0);
    // The result says that rank 1's target is another file system.
    let notes = v["mpi"]["notes"].to_string();
    assert!(
        notes.contains("targets differ") && notes.contains("tmpfs"),
        "{notes}"
    );
    check_one_result(&v, 2, "per-rank");
}

#[test]
fn a_failing_rank_stops_every_rank_and_leaves_no_file() {
    if !have("mpirun") {
        return skip("no mpirun");
    }
    let dir = common::scratch();
    let json_path = dir.path().join("r.json");
    let base = |d: &str| {
        vec![
            "run".to_string(),
            "--methods".into(),
            "direct".into(),
            "--patterns".into(),
            "read".into(),
            "--size".into(),
            "4M".into(),
            "--dir".into(),
            d.into(),
            "--json".into(),
            json_path.display().to_string(),
        ]
    };
    // Rank 1's directory does not exist: bad input on one rank, exit 2.
    let mut c = mpirun();
    let missing = dir.path().join("missing");
    c.args(["-n", "1"])
        .arg(bin())
        .args(base(&dir.path().display().to_string()))
        .args([":", "-n", "1"])
        .arg(bin())
        .args(base(&missing.display().to_string()));
    let out = run(c);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rank 1 (on ") && stderr.contains("missing"),
        "rank 0 names rank 1 and its reason: {stderr}"
    );
    assert!(!json_path.exists(), "no result of a run that never started");
    assert!(common::leftovers(dir.path()).is_empty());
    // Rank 1's directory is too small for its file (root: a 1 MiB tmpfs).
    if !is_root() {
        return skip("not root: no small tmpfs for the no-space rank");
    }
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "iopath-mpi-test"])
        .arg(&small)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        return skip("cannot mount a tmpfs");
    }
    let mut c = mpirun();
    c.args(["-n", "1"])
        .arg(bin())
        .args(base(&dir.path().display().to_string()))
        .args([":", "-n", "1"])
        .arg(bin())
        .args(base(&small.display().to_string()));
    let out = run(c);
    let left_small = common::leftovers(&small);
    let _ = Command::new("umount").arg(&small).status();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("rank 1 (on "), "{stderr}");
    assert!(common::leftovers(dir.path()).is_empty());
    assert!(left_small.is_empty());
}

#[test]
fn ctrl_c_to_mpirun_stops_every_rank_keeps_the_result_and_removes_the_files() {
    if !have("mpirun") {
        return skip("no mpirun");
    }
    let dir = common::scratch();
    let out_dir = common::scratch();
    let json_path = out_dir.path().join("r.json");
    let mut c = mpirun();
    c.args(["-n", "2"])
        .arg(bin())
        .args(["run", "--methods", "direct,buffered", "--patterns", "read"])
        .args(["--size", "8M", "--repeat", "200", "--time", "100ms"])
        // One thread a rank: 8 MiB holds a 1 MiB block for each.
        .args(["--concurrency", "1"])
        .args(["--layout", "shared", "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json_path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    // Wait until rounds are being written (the saved JSON holds a
    // repetition of every rank), then Ctrl-C (SIGINT) mpirun.
    common::wait_while_running(&mut child, "a round was saved", || {
        std::fs::read(&json_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| v["mpi"]["repetitions"].as_array().map(|r| !r.is_empty()))
            .unwrap_or(false)
    });
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = wait_or_kill(child, HANG);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "an interrupted run does not exit 0");
    let v = json(&json_path);
    assert_eq!(v["interrupted"], true);
    check_one_result(&v, 2, "shared-segmented");
    assert!(
        common::leftovers(dir.path()).is_empty(),
        "the shared file is removed"
    );
}

#[test]
fn ctrl_c_during_a_shared_prefill_stops_at_once_and_removes_the_file() {
    if !have("mpirun") {
        return skip("no mpirun");
    }
    let dir = common::scratch();
    let mut c = mpirun();
    // A prefill of seconds: mpirun kills the ranks 1 s after its SIGTERM,
    // so only a prefill that watches the signal removes its file.
    c.args(["-n", "2"])
        .arg(bin())
        .args(["run", "--methods", "direct", "--patterns", "read"])
        .args([
            "--size", "3G", "--repeat", "1", "--layout", "shared", "--dir",
        ])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    // Once the prefill is writing the shared file (blocks allocated to
    // it: its length may be set before), Ctrl-C to mpirun.
    common::wait_while_running(&mut child, "the prefill wrote the shared file", || {
        use std::os::unix::fs::MetadataExt;
        common::leftovers(dir.path())
            .iter()
            .any(|f| std::fs::metadata(f).is_ok_and(|m| m.blocks() > 0))
    });
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = wait_or_kill(child, HANG);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success());
    assert!(
        common::leftovers(dir.path()).is_empty(),
        "the shared file is removed: {:?}",
        common::leftovers(dir.path())
    );
}

#[test]
fn strided_threads_of_every_rank_write_every_block_of_a_shared_file() {
    if !have("mpirun") {
        return skip("no mpirun");
    }
    let dir = common::scratch();
    let file = dir.path().join("f.dat");
    let bs = 1usize << 20;
    std::fs::write(&file, vec![0xabu8; 16 * bs]).unwrap();
    let mut c = mpirun();
    c.args(["-n", "4"])
        .arg(bin())
        .args(["run", "--methods", "direct", "--patterns", "write"])
        .args([
            "--threads",
            "2",
            "--bs",
            "1M",
            "--repeat",
            "1",
            "--allow-write",
        ])
        .args(["--layout", "shared-strided", "--file"])
        .arg(&file)
        .arg("--json")
        .arg(dir.path().join("r.json"));
    let out = run(c);
    assert!(out.status.success());
    check_one_result(&json(&dir.path().join("r.json")), 4, "shared-strided");
    // One pass of 4 ranks x 2 threads: every block written once, none
    // left as it was (overlapping threads would leave some).
    let data = std::fs::read(&file).unwrap();
    let untouched: Vec<usize> = (0..16)
        .filter(|b| data[b * bs..(b + 1) * bs].iter().all(|&x| x == 0xab))
        .collect();
    assert!(untouched.is_empty(), "blocks never written: {untouched:?}");
}

#[test]
fn refusals_are_said_once_by_rank_0_with_exit_2() {
    if !have("mpirun") {
        return skip("no mpirun");
    }
    let dir = common::scratch();
    let d = dir.path().display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // A shared file smaller than ranks x threads x blocks.
        (
            vec![
                "-n", "4", "--", "--layout", "shared", "--size", "2M", "--dir", &d,
            ],
            "less than one 1 MiB block",
        ),
        (
            vec![
                "-n",
                "2",
                "--",
                "--layout",
                "shared-strided",
                "--verify",
                "--dir",
                &d,
            ],
            "--verify with --layout shared-strided",
        ),
        (
            vec![
                "-n",
                "2",
                "--",
                "--layout",
                "per-rank",
                "--file",
                "/var/tmp/x.dat",
            ],
            "per-rank needs --dir",
        ),
    ];
    for (args, want) in cases {
        let split = args.iter().position(|a| *a == "--").unwrap();
        let mut c = mpirun();
        c.args(&args[..split]).arg(bin()).args([
            "run",
            "--methods",
            "direct",
            "--patterns",
            "read",
            "--repeat",
            "1",
        ]);
        c.args(&args[split + 1..]);
        let out = run(c);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.matches(want).count(), 1, "said once: {stderr}");
        assert!(stderr.contains("Exit code:    2"), "exit 2: {stderr}");
        assert!(!stderr.contains("MPI_ABORT"), "no abort: {stderr}");
    }
    // Ranks given different methods (MPMD): refused, not hung.
    let mut c = mpirun();
    c.args(["-n", "1"])
        .arg(bin())
        .args([
            "run",
            "--methods",
            "null",
            "--patterns",
            "read",
            "--repeat",
            "1",
        ])
        .args([":", "-n", "1"])
        .arg(bin())
        .args([
            "run",
            "--methods",
            "null,buffered",
            "--patterns",
            "read",
            "--repeat",
            "1",
        ]);
    let out = run(c);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("was given a different plan").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("Exit code:    2"), "{stderr}");
}

#[test]
fn one_rank_is_a_run_of_one_rank_and_ranks_run_the_same_arm_per_slot() {
    if !have("mpirun") {
        return skip("no mpirun");
    }
    let dir = common::scratch();
    let json_path = dir.path().join("r.json");
    let mut c = mpirun();
    c.args(["-n", "1"])
        .arg(bin())
        .args([
            "run",
            "--methods",
            "direct",
            "--patterns",
            "read",
            "--size",
            "8M",
        ])
        .args(["--repeat", "1", "--layout", "shared", "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json_path);
    assert!(run(c).status.success());
    check_one_result(&json(&json_path), 1, "shared-segmented");
    // null next to a real method: each rank drew its own order seed
    // before, and a slot summed null on one rank with buffered on another.
    let mut c = mpirun();
    c.args(["-n", "3"])
        .arg(bin())
        .args(["run", "--methods", "null,buffered", "--patterns", "read"])
        .args(["--size", "8M", "--repeat", "4", "--time", "50ms", "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json_path);
    assert!(run(c).status.success());
    let v = json(&json_path);
    check_one_result(&v, 3, "per-rank");
    for r in v["mpi"]["repetitions"].as_array().unwrap() {
        let ios: Vec<f64> = r["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["ios"].as_f64().unwrap().max(1.0))
            .collect();
        let (lo, hi) = ios
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(hi / lo < 10.0, "one order of magnitude in one slot: {r}");
    }
}

/// Two "hosts": network namespaces joined by a veth pair, each its own
/// host name (a UTS namespace) and directory; Open MPI starts the second
/// host's daemon through an rsh agent that enters its namespace.
#[test]
fn two_hosts_in_network_namespaces_talk_over_tcp() {
    if !have("mpirun") {
        return skip("no mpirun");
    }
    if !is_root() || !have("ip") || !have("unshare") {
        return skip("needs root, ip (iproute2) and unshare (util-linux)");
    }
    let tag = format!("{:x}", std::process::id() & 0xffff);
    let (a, b) = (format!("iopA{tag}"), format!("iopB{tag}"));
    let net = Netns::new(&a, &b, &tag);
    if let Err(e) = &net {
        return skip(&format!("cannot make network namespaces: {e}"));
    }
    let _net = net.unwrap();
    let base = common::scratch();
    for h in [&a, &b] {
        std::fs::create_dir(base.path().join(h)).unwrap();
    }
    let agent = base.path().join("agent.sh");
    std::fs::write(
        &agent,
        "#!/bin/sh\n# Open MPI's rsh agent: `agent [options] HOST COMMAND...`.\nwhile [ \"${1#-}\" != \"$1\" ]; do shift; done\nhost=$1; shift\nexec ip netns exec \"$host\" unshare --uts /bin/sh -c 'hostname \"$0\"; eval \"$*\"' \"$host\" \"$@\"\n",
    )
    .unwrap();
    let rank = base.path().join("rank.sh");
    std::fs::write(
        &rank,
        format!(
            "#!/bin/sh\nexec {} \"$@\" --dir {}/$(hostname)\n",
            bin().display(),
            base.path().display()
        ),
    )
    .unwrap();
    for f in [&agent, &rank] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let hosts = base.path().join("hosts");
    std::fs::write(&hosts, format!("{a} slots=1\n{b} slots=1\n")).unwrap();
    let json_path = base.path().join("r.json");
    let inner = format!(
        "hostname {a}; exec mpirun --allow-run-as-root --hostfile {} -n 2 --mca plm_rsh_agent {} --mca oob_tcp_if_include 10.199.{n}.0/24 --mca btl tcp,self --mca btl_tcp_if_include 10.199.{n}.0/24 {} run --methods direct,uring --patterns read --size 8M --repeat 2 --time 100ms --json {}",
        hosts.display(),
        agent.display(),
        rank.display(),
        json_path.display(),
        n = _net.net
    );
    let mut c = Command::new("timeout");
    c.args([
        "120", "ip", "netns", "exec", &a, "unshare", "--uts", "/bin/sh", "-c",
    ])
    .arg(inner)
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    let out = run(c);
    assert!(out.status.success());
    let v = json(&json_path);
    check_one_result(&v, 2, "per-rank");
    let hosts: Vec<&str> = v["mpi"]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(
        hosts,
        vec![a.as_str(), b.as_str()],
        "two hosts, a rank each"
    );
    for h in [&a, &b] {
        assert!(common::leftovers(&base.path().join(h)).is_empty());
    }
}

/// Two network namespaces and the veth pair between them (10.199.N.1 and
/// .2), removed when dropped.
struct Netns {
    a: String,
    b: String,
    net: u32,
}

impl Netns {
    fn new(a: &str, b: &str, tag: &str) -> Result<Netns, String> {
        let net = u32::from_str_radix(tag, 16).unwrap_or(0) % 250 + 1;
        let ns = Netns {
            a: a.into(),
            b: b.into(),
            net,
        };
        let (va, vb) = (format!("v{a}"), format!("v{b}"));
        let steps: Vec<Vec<String>> = vec![
            vec!["netns".into(), "add".into(), a.into()],
            vec!["netns".into(), "add".into(), b.into()],
            vec![
                "link".into(),
                "add".into(),
                va.clone(),
                "type".into(),
                "veth".into(),
                "peer".into(),
                "name".into(),
                vb.clone(),
            ],
            vec![
                "link".into(),
                "set".into(),
                va.clone(),
                "netns".into(),
                a.into(),
            ],
            vec![
                "link".into(),
                "set".into(),
                vb.clone(),
                "netns".into(),
                b.into(),
            ],
        ];
        for s in steps {
            ip(&s)?;
        }
        for (n, v, host) in [(a, &va, 1), (b, &vb, 2)] {
            let addr = format!("10.199.{net}.{host}/24");
            ip(&["-n", n, "addr", "add", &addr, "dev", v].map(String::from))?;
            ip(&["-n", n, "link", "set", v, "up"].map(String::from))?;
            ip(&["-n", n, "link", "set", "lo", "up"].map(String::from))?;
        }
        Ok(ns)
    }
}

fn ip(args: &[String]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth pair, and the pair.
        for n in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

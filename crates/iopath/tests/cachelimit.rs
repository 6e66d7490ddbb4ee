//! `--cache-limit`: a memory cgroup made for the run, the page cache held
//! under it, the cgroup removed afterwards, and one left by a killed run
//! removed by the next. Needs root and a memory cgroup controller: skips
//! with the reason otherwise.

use std::path::PathBuf;

mod common;
use common::{case, iopath, leftovers, run_json, scratch};
use iopath::metrics::procfs::MemCgroup;

/// The process's memory cgroup, when iopath may make children in it.
fn parent() -> Option<PathBuf> {
    let Some(cg) = MemCgroup::current() else {
        eprintln!("skipped: no memory cgroup controller here");
        return None;
    };
    let probe = cg
        .dir
        .join(format!("iopath-test-probe-{}", std::process::id()));
    if std::fs::create_dir(&probe).is_err() {
        eprintln!(
            "skipped: cannot make cgroups in {} (not root?)",
            cg.dir.display()
        );
        return None;
    }
    let _ = std::fs::remove_dir(&probe);
    Some(cg.dir)
}

fn ours(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.starts_with("iopath-").then_some(n)
        })
        .collect()
}

#[test]
fn the_page_cache_stays_under_the_limit_and_the_cgroup_goes_away() {
    let Some(parent) = parent() else { return };
    // A cgroup left by a run that was killed (its pid cannot exist).
    let stale = parent.join("iopath-4194304-0");
    std::fs::create_dir(&stale).unwrap();
    let before: Vec<String> = ours(&parent)
        .into_iter()
        .filter(|n| n != "iopath-4194304-0")
        .collect();
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--methods",
            "buffered",
            "--patterns",
            "read",
            "--size",
            "96M",
            "--cache-limit",
            "32M",
        ],
    );
    let l = &v["config"]["cache_limit"];
    assert_eq!(l["limit_bytes"], 32 << 20, "{l}");
    assert!(l["cgroup_version"] == 1 || l["cgroup_version"] == 2, "{l}");
    let c = case(&v, "buffered", "read");
    let charged = c["summary"]["memory"]["cgroup_file_bytes"]
        .as_u64()
        .unwrap();
    assert!(
        charged <= 32 << 20,
        "page cache charged {charged} over the 32 MiB cap"
    );
    let cached = c["summary"]["memory"]["page_cache_bytes"].as_u64().unwrap();
    assert!(cached <= 32 << 20, "the file holds {cached} bytes of cache");
    assert!(!stale.exists(), "the stale cgroup was not removed");
    let after: Vec<String> = ours(&parent)
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect();
    assert!(after.is_empty(), "cgroups left behind: {after:?}");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_limit_too_small_is_a_usage_error() {
    let dir = scratch();
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--cache-limit", "1M", "--size", "4M"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("memory cgroup controller") {
        eprintln!("skipped: {err}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("at least 4 MiB"), "{err}");
    assert!(leftovers(dir.path()).is_empty());
}

//! `--cache-limit`: a memory cgroup made for the run, the page cache held
//! under it, the cgroup removed afterwards, and one left by a killed run
//! removed by the next. Needs root and a memory cgroup controller: skips
//! with the reason otherwise.

use std::path::PathBuf;

mod common;
use common::{case, iopath, leftovers, run_json, scratch};
use iopath::system::metrics::procfs::MemCgroup;

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

/// Tests that make cgroups run one at a time: one test's cgroup would be
/// another's "left behind".
static CGROUPS: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _one_at_a_time = CGROUPS.lock().unwrap_or_else(|p| p.into_inner());
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
            // One thread: 8 in flight (the default for 1 MiB) would be 8
            // threads, whose buffers and stacks a 32 MiB cap cannot hold.
            "--concurrency",
            "1",
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

/// Median of `xs` (as the neighbour block computes it).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// `--neighbour` end to end, under a cache limit: every measured
/// repetition of every case records the neighbour before and during it
/// (reads, hits, p50, p99) with hit ratios in [0, 1] and p50 <= p99; the
/// terminal block prints, per method, the hit ratios the JSON gives, and
/// ends with the verdict sentence.
#[test]
fn the_neighbour_is_recorded_before_and_during_each_repetition() {
    let _one_at_a_time = CGROUPS.lock().unwrap_or_else(|p| p.into_inner());
    if parent().is_none() {
        return;
    }
    let dir = scratch();
    let json = dir.path().join("result.json");
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--neighbour",
            "--methods",
            "buffered,direct",
            "--patterns",
            "read",
            "--concurrency",
            "1",
            "--size",
            "48M",
            "--cache-limit",
            "32M",
            "--repeat",
            "2",
            "--time",
            "1s",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for m in ["buffered", "direct"] {
        let c = case(&v, m, "read");
        let reps = c["neighbour"].as_array().unwrap();
        let measured = c["repetitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["warmup"] != true)
            .count();
        assert_eq!(reps.len(), measured, "{m}: one record per repetition");
        let mut hit = [Vec::new(), Vec::new()];
        for r in reps {
            for (i, w) in ["before", "during"].iter().enumerate() {
                let n = |k: &str| {
                    r[w][k]
                        .as_u64()
                        .unwrap_or_else(|| panic!("{m} {w}.{k}: {r}"))
                };
                let (reads, hits) = (n("reads"), n("hits"));
                assert!(hits <= reads, "{m} {w}: {hits} hits of {reads} reads");
                assert!(n("p50_ns") <= n("p99_ns"), "{m} {w}: p50 over p99: {r}");
                if *w == "before" {
                    // Alone for 0.5 s at one read per 200 us.
                    assert!(reads > 0, "{m}: the neighbour read nothing alone: {r}");
                    assert!(n("p50_ns") > 0, "{m}: no latency: {r}");
                }
                let ratio = if reads == 0 {
                    1.0
                } else {
                    hits as f64 / reads as f64
                };
                assert!((0.0..=1.0).contains(&ratio));
                hit[i].push(ratio);
            }
        }
        // The terminal line of the method: the same medians.
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(m) && l.contains("before p50"))
            .unwrap_or_else(|| panic!("no neighbour line for {m}:\n{stdout}"));
        let shown: Vec<String> = line
            .split("hit ")
            .skip(1)
            .map(|s| s.split('%').next().unwrap().to_string())
            .collect();
        let want: Vec<String> = hit
            .iter()
            .map(|h| format!("{:.0}", median(h.clone()) * 100.0))
            .collect();
        assert_eq!(shown, want, "{line}");
    }
    let verdict = stdout
        .lines()
        .skip_while(|l| !l.starts_with("neighbour (random 4 KiB cached reads) beside"))
        .find(|l| l.trim_start().starts_with('→'))
        .unwrap_or_else(|| panic!("no verdict sentence:\n{stdout}"));
    assert!(
        verdict.contains("the neighbour's p99")
            && (verdict.contains("buffered") || verdict.contains("direct")),
        "{verdict}"
    );
    assert!(leftovers(dir.path()).is_empty());
}

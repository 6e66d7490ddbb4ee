//! The device apart from memory (issue 28, item 2), on real runs: a read
//! the page cache served with the cache cold, and writes the page cache
//! absorbed, are set apart from the verdict's ranking (`cases[].served`,
//! `verdicts[].set_apart`), never its leader; with `--cache warm` they are
//! what was asked, and ranked.

mod common;
use common::*;
use serde_json::Value;

/// The `served` code of each measured case of `v`, by method.
fn served(v: &Value) -> Vec<(String, String)> {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["summary"].is_null())
        .map(|c| {
            (
                c["method"].as_str().unwrap().to_string(),
                c["served"]["code"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

/// True when the run had device counters (a block device under the
/// scratch directory): without them nothing can tell memory from the
/// device.
fn counted(v: &Value) -> bool {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["summary"]["device_fraction"].is_number())
}

fn served_of<'a>(all: &'a [(String, String)], method: &str) -> &'a str {
    &all.iter().find(|(m, _)| m == method).unwrap().1
}

/// The methods a verdict ranks and those it set apart.
fn ranked_and_apart(verdict: &Value) -> (Vec<String>, Vec<String>) {
    let names = |k: &str| -> Vec<String> {
        verdict[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| m["method"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    (names("ranking"), names("set_apart"))
}

/// Random 4 KiB reads of 16 MiB over a 4 MiB file, the cache cold before
/// each repetition: buffered and mmap read the file from the device once
/// and the rest (three quarters at least) from memory; direct and uring
/// read it all from the device.
const CACHED_READ: &[&str] = &[
    "--size",
    "4M",
    "--io-size",
    "16M",
    "--patterns",
    "randread",
    "--qd",
    "1",
    "--methods",
    "direct,uring,buffered,mmap",
];

#[test]
fn a_cached_file_read_through_the_page_cache_is_set_apart_from_direct() {
    let dir = scratch();
    let v = run_json(dir.path(), CACHED_READ);
    if !counted(&v) {
        return skip("no device counters under the scratch directory");
    }
    let s = served(&v);
    assert_eq!(served_of(&s, "direct"), "device", "{s:?}");
    assert_eq!(served_of(&s, "uring"), "device", "{s:?}");
    assert_eq!(served_of(&s, "buffered"), "memory", "{s:?}");
    assert_eq!(served_of(&s, "mmap"), "memory", "{s:?}");
    let verdict = &v["verdicts"][0];
    let (ranked, mut apart) = ranked_and_apart(verdict);
    apart.sort();
    assert_eq!(apart, ["buffered", "mmap"]);
    assert!(
        ranked.iter().all(|m| m == "direct" || m == "uring"),
        "{ranked:?}"
    );
    assert!(["direct", "uring"].contains(&verdict["pick"].as_str().unwrap()));
    let codes: Vec<&str> = verdict["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"served_from_memory"), "{codes:?}");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn with_a_warm_cache_asked_for_memory_is_ranked_as_before() {
    let dir = scratch();
    let mut args = CACHED_READ.to_vec();
    args.extend(["--cache", "warm"]);
    let v = run_json(dir.path(), &args);
    if !counted(&v) {
        return skip("no device counters under the scratch directory");
    }
    let cases = v["cases"].as_array().unwrap();
    let mmap = cases.iter().find(|c| c["method"] == "mmap").unwrap();
    assert_eq!(mmap["served"]["code"], "memory");
    assert_eq!(mmap["served"]["asked"], true);
    let (ranked, apart) = ranked_and_apart(&v["verdicts"][0]);
    assert!(apart.is_empty(), "{apart:?}");
    assert_eq!(ranked.len(), 4, "{ranked:?}");
}

#[test]
fn a_write_burst_the_page_cache_absorbed_is_set_apart() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "16M",
            "--patterns",
            "randwrite",
            "--methods",
            "buffered,direct,uring",
            "--sync",
            "none",
        ],
    );
    if v["system"]["dirty_limits"].is_null() {
        return skip("the kernel's dirty limit is not known here");
    }
    let s = served(&v);
    assert_eq!(served_of(&s, "buffered"), "absorbed", "{s:?}");
    let buffered = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["method"] == "buffered")
        .unwrap();
    // Under the dirty limit; the device's speed behind it is a direct
    // method's of the same job.
    assert!(buffered["served"]["limit_bytes"].as_u64().unwrap() > 0);
    let behind = buffered["served"]["device"]["method"].as_str().unwrap();
    assert!(["direct", "uring"].contains(&behind), "{behind}");
    let verdict = &v["verdicts"][0];
    let (ranked, apart) = ranked_and_apart(verdict);
    assert_eq!(apart, ["buffered"]);
    assert!(!ranked.contains(&"buffered".to_string()), "{ranked:?}");
    assert_ne!(verdict["pick"], "buffered");
}

/// The default `--sync end` times the flush: buffered and dontcache, whose
/// device moved (nearly) all they wrote, are the device's under the dirty
/// limit, as direct is.
#[test]
fn a_timed_flush_write_the_device_moved_is_the_devices() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "16M",
            "--patterns",
            "write",
            "--methods",
            "buffered,dontcache,direct",
        ],
    );
    if !counted(&v) {
        return skip("no device counters under the scratch directory");
    }
    for c in v["cases"].as_array().unwrap() {
        if !c["skipped"].is_null() || !c["error"].is_null() {
            continue;
        }
        let fraction = c["summary"]["device_fraction"].as_f64().unwrap_or(0.0);
        if fraction >= 0.5 {
            assert_eq!(c["served"]["code"], "device", "{c}");
        }
    }
}

/// A fio job of random O_DIRECT reads, run over the default methods: mmap
/// ignores O_DIRECT and reads the small file from memory after its first
/// pass; it is set apart, never the verdict's leader.
#[test]
fn a_fio_direct_random_read_job_never_has_mmap_lead_on_memory() {
    let dir = scratch();
    let job = dir.path().join("direct.fio");
    std::fs::write(
        &job,
        "[rr]\nioengine=psync\ndirect=1\nrw=randread\nbs=4k\nsize=4M\nio_size=16M\n",
    )
    .unwrap();
    let v = run_json(dir.path(), &["--fio", job.to_str().unwrap()]);
    if !counted(&v) {
        return skip("no device counters under the scratch directory");
    }
    let verdict = &v["verdicts"][0];
    assert_ne!(verdict["pick"], "mmap", "{verdict}");
    assert_ne!(verdict["fastest"][0], "mmap");
    let (ranked, apart) = ranked_and_apart(verdict);
    assert!(!ranked.contains(&"mmap".to_string()), "{ranked:?}");
    assert!(apart.contains(&"mmap".to_string()), "{apart:?}");
    let s = served(&v);
    assert_eq!(served_of(&s, "mmap"), "memory", "{s:?}");
    std::fs::remove_file(&job).unwrap();
    assert!(leftovers(dir.path()).is_empty());
}

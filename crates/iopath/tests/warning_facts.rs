//! Warnings are facts with words: `iopath report` on a result written
//! before warnings had facts (tests/fixtures/report/pre-facts.json:
//! file_fits_in_memory, low_device_fraction, depth_capped) keeps their
//! codes, cases and words, and finds their facts again; a run's JSON
//! carries each warning's facts beside its words.

mod common;
use common::{codes, iopath, json_of, pre_facts, pre_facts_json as stored, run_json, scratch};

#[test]
fn a_result_written_before_facts_reports_its_warnings_with_the_same_codes() {
    let out = iopath()
        .arg("report")
        .arg(pre_facts())
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    let old = stored();
    assert_eq!(
        codes(&v),
        ["file_fits_in_memory", "low_device_fraction", "depth_capped"]
    );
    assert_eq!(codes(&v), codes(&old));
    for (new, old) in v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .zip(old["warnings"].as_array().unwrap())
    {
        assert_eq!(new["cases"], old["cases"], "{}", new["code"]);
        assert_eq!(new["message"], old["message"], "{}", new["code"]);
        assert!(new["facts"].is_object(), "facts found again: {new}");
    }
    // The figures the words rest on, as facts: the 64 MiB file, a cap of
    // a quarter of it; mmap/randread (case 11) is what the device served
    // too little of.
    let w = &v["warnings"];
    assert_eq!(w[0]["facts"]["file_bytes"], 64 << 20);
    assert_eq!(w[0]["facts"]["suggested_cache_limit_bytes"], 16 << 20);
    assert_eq!(w[0]["facts"]["cases"], serde_json::json!([11]));
    assert_eq!(w[1]["facts"]["cases"][0]["case"], 11);
    assert_eq!(v["cases"][11]["method"], "mmap");
    assert_eq!(w[2]["facts"]["cases"].as_array().unwrap().len(), 12);

    // The terminal lists them by code too (--explain: the default view
    // counts them).
    let out = iopath()
        .arg("report")
        .arg(pre_facts())
        .arg("--explain")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for code in codes(&old) {
        assert!(text.contains(&format!("[{code}]")), "{code}: {text}");
    }
}

/// A run's JSON: each warning's facts beside its code, the cases by index.
#[test]
fn a_run_writes_each_warnings_facts() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--methods",
            "buffered",
            "--patterns",
            "randread",
            "--qd",
            "4",
            "--size",
            "4M",
            "--repeat",
            "1",
            "--time",
            "100ms",
        ],
    );
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "depth_capped")
        .unwrap_or_else(|| panic!("no depth_capped: {}", v["warnings"]));
    assert_eq!(w["cases"], serde_json::json!(["buffered/randread"]));
    let capped = &w["facts"]["cases"][0];
    let case = &v["cases"][capped["case"].as_u64().unwrap() as usize];
    assert_eq!(case["method"], "buffered");
    assert_eq!(capped["queue_depth"], 1);
    assert_eq!(capped["queue_depth_requested"], 4);
    assert!(!w["message"].as_str().unwrap().is_empty(), "{w}");
}

//! Results keep their JSON through the typed fields (method, pattern, sync,
//! cache, target kind, the names a verdict ranks): a result written before
//! they were typed (tests/fixtures/report/pre-facts.json, written by the
//! commit before) and the report and compare fixtures load, and write back
//! every one of those fields with the same string.

use std::path::Path;

use iopath::result::RunResult;
use serde_json::Value;

fn fixture(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every typed field of a result as JSON: (where, value).
fn typed_fields(v: &Value) -> Vec<(String, Value)> {
    let mut out = vec![
        ("config.cache".to_string(), v["config"]["cache"].clone()),
        ("target.kind".to_string(), v["target"]["kind"].clone()),
    ];
    let each = |list: &Value| list.as_array().cloned().unwrap_or_default();
    for (i, c) in each(&v["cases"]).iter().enumerate() {
        for k in ["method", "pattern", "sync", "cache"] {
            out.push((format!("cases[{i}].{k}"), c[k].clone()));
        }
    }
    for (i, p) in each(&v["probe"]).iter().enumerate() {
        out.push((format!("probe[{i}].method"), p["method"].clone()));
    }
    for (i, d) in each(&v["verdicts"]).iter().enumerate() {
        for k in [
            "pattern",
            "sync",
            "fastest",
            "pick",
            "equally_good",
            "capped",
        ] {
            out.push((format!("verdicts[{i}].{k}"), d[k].clone()));
        }
        for (j, r) in each(&d["ranking"]).iter().enumerate() {
            out.push((format!("verdicts[{i}].ranking[{j}]"), r["method"].clone()));
        }
        for k in ["cheapest_cpu", "least_memory"] {
            out.push((format!("verdicts[{i}].{k}"), d[k]["method"].clone()));
        }
        let t = &d["memory_trade"];
        out.push((format!("verdicts[{i}].memory_trade"), t["least"].clone()));
        out.push((format!("verdicts[{i}].memory_trade"), t["most"].clone()));
        out.push((
            format!("verdicts[{i}].dirty_burst"),
            d["dirty_burst"]["methods"].clone(),
        ));
    }
    out
}

fn loads_and_writes_back_the_same_strings(rel: &str) {
    let text = fixture(rel);
    let before: Value = serde_json::from_str(&text).unwrap();
    let r: RunResult = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let after = serde_json::to_value(&r).unwrap();
    let (was, now) = (typed_fields(&before), typed_fields(&after));
    assert!(
        was.iter().any(|(_, v)| v.is_string()),
        "{rel}: nothing typed read"
    );
    for ((at, a), (_, b)) in was.iter().zip(&now) {
        // An empty list is left out of the JSON, as before.
        let empty = |v: &Value| v.is_null() || v.as_array().is_some_and(Vec::is_empty);
        assert!(
            a == b || (empty(a) && empty(b)),
            "{rel} {at}: {a} became {b}"
        );
    }
    assert_eq!(was.len(), now.len(), "{rel}");
}

#[test]
fn a_result_written_before_the_typed_fields_loads_and_keeps_its_strings() {
    loads_and_writes_back_the_same_strings("report/pre-facts.json");
}

#[test]
fn the_report_and_compare_fixtures_load_and_keep_their_strings() {
    for rel in [
        "report/run.json",
        "compare/base.json",
        "compare/new.json",
        "compare/v1.json",
        "compare/v3.json",
    ] {
        loads_and_writes_back_the_same_strings(rel);
    }
}

/// A method name no build of today knows (a result from another build)
/// still loads, and is written back as it was.
#[test]
fn a_result_with_a_method_this_build_does_not_know_loads() {
    let mut v: Value = serde_json::from_str(&fixture("report/run.json")).unwrap();
    v["cases"][0]["method"] = "warp-drive+random".into();
    v["verdicts"][0]["pick"] = "warp-drive#3".into();
    let r: RunResult = serde_json::from_value(v).unwrap();
    let back = serde_json::to_value(&r).unwrap();
    assert_eq!(back["cases"][0]["method"], "warp-drive+random");
    assert_eq!(back["verdicts"][0]["pick"], "warp-drive#3");
}

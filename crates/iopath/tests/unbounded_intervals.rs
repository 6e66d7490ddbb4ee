//! An interval a verdict rests on may be unbounded (a bootstrap resample
//! whose median is next to nothing, or no comparison at all gives
//! `[0, inf]`). JSON has no infinity: such a side is written `null`, and
//! what `iopath report --json` writes must read back as the same result.

use iopath::analysis::compare::parse;
use iopath::report::json::{bytes_of, JsonFormat};
use iopath::result::verdict_facts::VerdictFact;

/// A v3 fixture whose first case has one repetition at next to no
/// throughput: its bootstrap interval against the fastest is unbounded.
fn result_with_a_near_zero_throughput() -> iopath::result::RunResult {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/compare/v3.json"
    );
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    doc["cases"][0]["repetitions"][0]["bw_bytes_per_s"] = serde_json::json!(1e-300);
    let mut r = parse(&serde_json::to_vec(&doc).unwrap(), "near-zero.json").unwrap();
    r.verdicts = iopath::analysis::verdict::all(&r.cases);
    iopath::report::text::word(&mut r);
    r
}

/// The upper sides of the verdicts' speed intervals.
fn upper_sides(r: &iopath::result::RunResult) -> Vec<f64> {
    r.verdicts
        .iter()
        .flat_map(|v| &v.facts)
        .flat_map(|f| match f {
            VerdictFact::Fastest { slower, .. } => slower.clone(),
            VerdictFact::TieForFastest { slower, .. } => slower.clone(),
            VerdictFact::TieNearAndFar { far, slower, .. } => {
                [far.clone(), slower.clone()].concat()
            }
            _ => Vec::new(),
        })
        .map(|v| v.ratio_ci[1])
        .collect()
}

#[test]
fn a_result_with_a_near_zero_throughput_round_trips_through_report_json() {
    let r = result_with_a_near_zero_throughput();
    assert!(
        upper_sides(&r).contains(&f64::INFINITY),
        "the input makes an unbounded interval: {:?}",
        upper_sides(&r)
    );
    let json = bytes_of(&r, JsonFormat::Iopath).unwrap();
    let back = parse(&json, "written.json").unwrap_or_else(|e| panic!("{}", e.0));
    assert_eq!(upper_sides(&back), upper_sides(&r));
    assert!(back == r, "report --json writes a different result");
}

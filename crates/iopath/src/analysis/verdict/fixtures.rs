//! Verdict fixtures shared by the verdict tests and the wording
//! snapshots (`report/text/verdict_tests.rs`).

use super::tests::{around, case, rounds};
use crate::result::CaseResult;

/// Seven methods, each `i + 1` times the first in every one of `n`
/// rounds: every difference plain.
pub(crate) fn seven_apart(n: usize) -> Vec<CaseResult> {
    let names = [
        "buffered",
        "direct",
        "mmap",
        "uring",
        "aio",
        "uring-sqpoll",
        "uring-buffered",
    ];
    names
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let bw: Vec<f64> = (0..n)
                .map(|r| (100.0 + r as f64) * (1.0 + i as f64))
                .collect();
            rounds(m, None, &bw, &vec![1.0; n])
        })
        .collect()
}

/// `c` as stopped by `why`, each repetition `rep_s` long.
pub(crate) fn stopped(mut c: CaseResult, why: crate::stats::StopReason, rep_s: f64) -> CaseResult {
    let n = c.repetitions.len() as u32;
    c.repetition_control = Some(crate::result::RepetitionControl {
        stopped_by: why,
        measured: n,
        warmup: 0,
        ci_rel: None,
        ci_level: 0.0,
        elapsed_ns: (rep_s * 1e9) as u64 * u64::from(n),
        measured_ios: None,
        budget_ns: None,
        stretch_until_ns: None,
    });
    c
}

/// `null` far ahead of three real methods, with the least CPU and
/// memory of all.
pub(crate) fn with_null() -> Vec<CaseResult> {
    vec![
        case("null", "randread", &around(5_000.0, 2.0), 60.0, 4096),
        case(
            "buffered",
            "randread",
            &around(100.0, 2.0),
            11_700.0,
            1_717_986_918,
        ),
        case("direct", "randread", &around(82.0, 2.0), 8_900.0, 98_304),
        case("uring", "randread", &around(231.0, 2.0), 3_200.0, 131_072),
    ]
}

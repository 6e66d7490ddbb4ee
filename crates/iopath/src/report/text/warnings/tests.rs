use super::*;
use crate::result::warning::{CaseDepth, CaseFraction, CaseStarved};

/// A real result written before warnings had facts: 16 cases, buffered,
/// direct, uring, mmap on read, write, randread, randwrite (in that order),
/// and its warnings file_fits_in_memory, low_device_fraction, depth_capped.
fn pre_facts() -> RunResult {
    serde_json::from_str(include_str!(
        "../../../../tests/fixtures/report/pre-facts.json"
    ))
    .unwrap()
}

/// One fact of each kind, on the cases of [`pre_facts`].
fn every_fact() -> Vec<Fact> {
    let frac = |case, fraction| CaseFraction { case, fraction };
    vec![
        Fact::IgnoredOptions {
            options: vec!["thinktime=10 (no pause between requests)".into()],
        },
        Fact::FileFitsInMemory {
            cases: vec![11],
            file_bytes: 64 << 20,
            memory_available_bytes: 24_631_910_400,
            cold: true,
            suggested_cache_limit_bytes: 16 << 20,
        },
        Fact::FileFitsInMemory {
            cases: vec![0, 11],
            file_bytes: 1 << 30,
            memory_available_bytes: 8 << 30,
            cold: false,
            suggested_cache_limit_bytes: 256 << 20,
        },
        Fact::SparseTarget {},
        Fact::UnwrittenDeviceRanges {
            cases: vec![1, 9],
            device: "/dev/loop3".into(),
            allocated_bytes: 1 << 20,
            file_bytes: 1 << 30,
        },
        Fact::SparseFile {
            path: "/data/f".into(),
            allocated_bytes: 3 << 20,
            size_bytes: 64 << 20,
        },
        Fact::DropCachesDenied { cases: vec![0] },
        Fact::LoopBuffered {
            loops: vec!["loop0".into(), "loop1".into()],
        },
        Fact::CompressibleData {
            cases: vec![4, 6],
            data: "zeros".into(),
        },
        Fact::NoBlockDevice {},
        Fact::LowDeviceFraction {
            cases: vec![frac(11, 0.01)],
        },
        Fact::ReadAmplification {
            cases: vec![frac(11, 35.0), frac(8, 2.5), frac(0, 1878.65)],
            cause: AmplificationCause::ReadAhead,
            read_ahead_kb: Some(128),
            other_traffic_unaccounted: true,
        },
        Fact::ReadAmplification {
            cases: vec![frac(11, 509.0)],
            cause: AmplificationCause::UserSpaceCache,
            read_ahead_kb: None,
            other_traffic_unaccounted: false,
        },
        Fact::ReadAmplification {
            cases: vec![frac(11, 40.0)],
            cause: AmplificationCause::Both,
            read_ahead_kb: None,
            other_traffic_unaccounted: false,
        },
        Fact::OtherDiskTraffic {
            cases: vec![frac(1, 0.6)],
            own_accounting: false,
        },
        Fact::OtherDiskTraffic {
            cases: vec![frac(0, 0.45)],
            own_accounting: true,
        },
        Fact::SyncNone {
            cases: vec![4, 7, 12, 15],
        },
        Fact::DepthCapped {
            cases: [0, 1, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15]
                .iter()
                .map(|&case| CaseDepth {
                    case,
                    queue_depth: 1,
                    queue_depth_requested: 8,
                })
                .collect(),
        },
        Fact::SpanSmallerThanFile {
            span_bytes: 1 << 30,
            file_bytes: 4 << 30,
        },
        Fact::DontcachePagesKept {
            cases: vec![
                CaseBytes {
                    case: 4,
                    bytes: 120 << 20,
                },
                CaseBytes {
                    case: 12,
                    bytes: 8 << 20,
                },
            ],
        },
        Fact::SqpollSharesCore {
            cases: vec![10],
            cpus: 1,
        },
        Fact::SqpollSharesCore {
            cases: vec![10],
            cpus: 2,
        },
        Fact::CpuStarved {
            cases: vec![CaseStarved {
                case: 8,
                wait_share: 1.0 / 3.0,
                preemptions: 500,
            }],
        },
    ]
}

/// Every fact worded as the terminal lists it: `[code] sentence: cases`,
/// then the JSON `cases`.
#[test]
fn every_warning_in_words() {
    let r = pre_facts();
    let mut out = String::new();
    for f in every_fact() {
        let w = Warning::of(f);
        out.push_str(&format!(
            "[{}] {}\n  groups: {}\n  cases: {:?}\n\n",
            w.code,
            message(&w),
            case_groups(&w, &r),
            cases(&w, &r)
        ));
    }
    insta::assert_snapshot!(out);
}

/// The figures each case is listed with: a ratio of the bytes asked, and
/// a starved case's share of waiting and its preemptions.
#[test]
fn cases_carry_their_figures() {
    let r = pre_facts();
    let amp = Warning::of(every_fact().swap_remove(11));
    assert_eq!(
        cases(&amp, &r),
        [
            "mmap/randread (35x)",
            "buffered/randread (2.5x)",
            "buffered/read (1879x)"
        ]
    );
    let starved = Warning::of(every_fact().pop().unwrap());
    assert_eq!(
        cases(&starved, &r),
        ["buffered/randread (33% waiting, 500 preemptions)"]
    );
}

/// The thresholds in the sentences are the analysis constants.
#[test]
fn thresholds_are_the_constants() {
    let said = |f: Fact| message(&Warning::of(f));
    let low = said(Fact::LowDeviceFraction { cases: vec![] });
    assert!(low.starts_with(&format!(
        "less than {:.0}%",
        memory::LOW_DEVICE_FRACTION * 100.0
    )));
    let other = said(Fact::OtherDiskTraffic {
        cases: vec![],
        own_accounting: true,
    });
    assert!(other.starts_with(&format!(
        "the disk read over {:.0}%",
        traffic::OTHER_TRAFFIC_SHARE * 100.0
    )));
    let hungry = said(Fact::CpuStarved { cases: vec![] });
    let at = format!("{:.0}% or more", starved::STARVED_WAIT_SHARE * 100.0);
    assert!(hungry.contains(&at), "{hungry}");
}

/// Grouped from the typed labels, the list reads as the strings' grouping
/// did (`prose::case_groups`), with no parsing of labels.
#[test]
fn groups_read_as_the_listed_cases_do() {
    let r = pre_facts();
    for f in every_fact() {
        let w = Warning::of(f);
        let listed = cases(&w, &r);
        assert_eq!(
            case_groups(&w, &r),
            crate::report::prose::case_groups(&listed),
            "{}",
            w.code
        );
    }
}

/// Cases of the same method and pattern that ran different jobs are
/// named by their job; an index past the cases (a damaged file) is named,
/// not a panic.
#[test]
fn labels_tell_cases_apart() {
    let mut r = pre_facts();
    let mut twin = r.cases[8].clone();
    twin.threads = 4;
    r.cases.push(twin);
    let label = labeller(&r);
    assert_eq!(label(8).to_string(), "buffered/randread 4k Q32T1");
    assert_eq!(label(16).to_string(), "buffered/randread 4k Q32T4");
    assert_eq!(label(0).to_string(), "buffered/read");
    assert_eq!(label(99).to_string(), "cases/99 (no such case)");
}

/// A result written before facts: its words stand, and `reword` finds
/// the facts again where this version finds the same warning, and words
/// them as they were.
#[test]
fn old_warnings_keep_their_words_and_find_their_facts() {
    let mut r = pre_facts();
    let before = r.warnings.clone();
    assert!(before.iter().all(|w| w.facts.is_none()));
    assert_eq!(message(&before[0]), before[0].message);
    assert_eq!(cases(&before[2], &r), before[2].cases);
    reword(&mut r);
    assert!(
        r.warnings.iter().all(|w| w.facts.is_some()),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.warnings.len(), before.len());
    for (new, old) in r.warnings.iter().zip(&before) {
        assert_eq!((&new.code, &new.cases), (&old.code, &old.cases));
        assert_eq!(new.message, old.message, "{}", new.code);
    }
    // One this version finds differently keeps its words.
    let mut r = pre_facts();
    r.warnings[1].cases = vec!["aio/randread".into()];
    reword(&mut r);
    assert_eq!(r.warnings[1].facts, None);
    assert_eq!(r.warnings[1].cases, ["aio/randread"]);
}

#[test]
fn one_line_counts_the_warnings_by_what_they_are_about() {
    let r = pre_facts();
    assert_eq!(count_line(&[]), None);
    let one = count_line(&r.warnings[2..]).unwrap();
    let all: Vec<Warning> = every_fact().into_iter().map(Warning::of).collect();
    let many = count_line(&all).unwrap();
    insta::assert_snapshot!(format!(
        "{}\n{one}\n{many}",
        count_line(&r.warnings).unwrap()
    ));
}

/// Every key a warning's `facts` can hold (and every `cause`) is named in
/// docs/json-schema.md's `warnings[]` section.
#[test]
fn facts_keys_are_documented() {
    let doc = include_str!("../../../../../../docs/json-schema.md");
    let start = doc.find("## `warnings[]`").unwrap();
    let end = start + doc[start..].find("## `verdicts[]`").unwrap();
    let section = &doc[start..end];
    fn keys(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    out.push(k.clone());
                    keys(v, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    let mut seen = Vec::new();
    for f in every_fact() {
        let json = serde_json::to_value(Warning::of(f)).unwrap();
        for k in ["code", "message", "cases", "facts"] {
            assert!(json.get(k).is_some(), "{k} in {json}");
        }
        keys(&json["facts"], &mut seen);
        if let Some(cause) = json["facts"]["cause"].as_str() {
            seen.push(cause.to_string());
        }
    }
    // As `key`, or in an object `{case, key, ...}`.
    let named = |k: &str| {
        [
            format!("`{k}`"),
            format!("{{{k},"),
            format!(" {k},"),
            format!(" {k}}}"),
        ]
        .iter()
        .any(|form| section.contains(form.as_str()))
    };
    for k in seen {
        assert!(named(&k), "{k} is not documented");
    }
}

//! The comparison in words and tables: figures checked, sentences
//! snapshotted (a wording change touches the .snap files only), every
//! layout within its width.

use super::*;
use crate::analysis::compare::tests::{case, one, report, run, side, times, BASE};
use crate::analysis::compare::{compare, gate, DataSource, DeviceId, ToolId, Unsure, Which};
use crate::analysis::compare::{Gate, Label};
use crate::model::CacheState;
use crate::report::text::compare::{change_text, gate_lines, pct};

/// Three cases A/B (one slower, one unchanged, one only in A) with sync
/// policies that differ.
fn mixed() -> Report {
    let mut dsync = case("aio", "randwrite", None, &BASE);
    dsync.sync = iopath_io::SyncPolicy::Dsync;
    report(
        vec![
            case("uring", "randread", None, &BASE),
            case("direct", "randrw", Some(70), &BASE),
            dsync,
        ],
        vec![
            case("uring", "randread", None, &times(0.8)),
            case("direct", "randrw", Some(70), &BASE),
        ],
        None,
    )
}

/// The line of the table that starts with `│ method `.
fn row<'a>(text: &'a str, method: &str) -> &'a str {
    let start = format!("│ {method} ");
    text.lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no row {method} in:\n{text}"))
}

#[test]
fn percentages_and_intervals_read_as_changes() {
    assert_eq!(pct(0.876), "-12.4%");
    assert_eq!(pct(1.5), "+50.0%");
    assert_eq!(pct(1.0004), "0.0%");
    assert_eq!(pct(f64::NAN), "?");
    let c = CaseComparison {
        ratio: Some(0.876),
        ratio_ci95: Some([0.85, 0.902]),
        ..one(&BASE, &BASE)
    };
    assert_eq!(change_text(&c), "-12.4% (95% CI -15.0% to -9.8%)");
}

#[test]
fn the_wide_table_shows_changes_labels_and_sync_when_it_varies() {
    let r = mixed();
    let text = render(&r, 200);
    let uring = row(&text, "uring");
    assert!(
        uring.contains("-20.0%") && uring.contains(" to -19."),
        "{uring}"
    );
    assert!(uring.contains("100.0 us → 100.0 us"), "{uring}");
    let single = render(
        &report(
            vec![case("null", "read", None, &[100.0])],
            vec![case("null", "read", None, &[80.0])],
            None,
        ),
        200,
    );
    let null = row(&single, "null");
    assert!(null.contains("-20.0%") && !null.contains(" to "), "{null}");
    insta::assert_snapshot!(text);
}

#[test]
fn one_run_a_side_says_its_drift_allowance() {
    let a = run(vec![case("uring", "randread", None, &BASE)]);
    let b = run(vec![case("uring", "randread", None, &times(0.85))]);
    let r = compare(&[a], &[b], side("A"), side("B"), None, 10.0);
    assert_eq!(
        change_text(&r.cases[0]),
        format!(
            "-15.0% (95% CI {} to {}, ×/÷1.10 drift allowed)",
            pct(r.cases[0].ratio_ci95.unwrap()[0]),
            pct(r.cases[0].ratio_ci95.unwrap()[1])
        )
    );
    insta::assert_snapshot!(render(&r, 120));
}

#[test]
fn several_runs_a_side_say_the_test_between_runs() {
    let runs = |scales: &[f64]| -> Vec<crate::result::RunResult> {
        scales
            .iter()
            .map(|&s| run(vec![case("uring", "randread", None, &times(s))]))
            .collect()
    };
    let (a, b) = (runs(&[1.0, 1.06, 0.95]), runs(&[0.6, 0.63, 0.58]));
    let r = compare(&a, &b, side("A"), side("B"), Some(5.0), 10.0);
    let text = render(&r, 120);
    assert!(row(&text, "uring").contains("3x8"), "{text}");
    assert!(change_text(&r.cases[0]).ends_with(", between 3 and 3 runs)"));
    insta::assert_snapshot!(text);
    insta::assert_snapshot!("regression_on_stderr", gate_lines(&r, &gate(&r)).join("\n"));
}

#[test]
fn cases_not_measured_say_why() {
    let mut skipped = case("uring-iopoll", "randread", None, &[]);
    skipped.skipped = Some("no poll queues".into());
    let mut failed = case("aio", "randread", None, &BASE);
    failed.error = Some("EIO".into());
    let empty = case("mmap", "randread", None, &[]);
    let zero = case("null", "randread", None, &[0.0, 0.0]);
    let r = report(
        vec![
            skipped.clone(),
            case("aio", "randread", None, &BASE),
            empty,
            zero,
        ],
        vec![
            skipped,
            failed,
            case("mmap", "randread", None, &BASE),
            case("null", "randread", None, &BASE),
        ],
        Some(1.0),
    );
    let why: Vec<String> = r.cases.iter().filter_map(words::reason).collect();
    insta::assert_snapshot!(why.join("\n"));
    insta::assert_snapshot!("not_measured_at_80", render(&r, 80));
}

/// A report with every kind of note.
fn noted() -> Report {
    let mut r = report(
        vec![case("direct", "randread", None, &[100.0, 101.0])],
        vec![case("direct", "randread", None, &[50.0, 51.0])],
        None,
    );
    let tool = |version: &str, schema_version| ToolId {
        name: "iopath".into(),
        version: version.into(),
        schema_version,
    };
    let data = |data: &str, sparse| DataSource {
        data: data.into(),
        sparse,
    };
    let (a, b) = (Which::A, Which::B);
    r.notes.splice(
        0..0,
        [
            Note::TargetSizeDiffers {
                a: None,
                b: Some(1 << 30),
            },
            Note::FileSystemDiffers {
                a: Some("ext4".into()),
                b: None,
            },
            Note::DeviceDiffers {
                a: Some(DeviceId {
                    name: "vda".into(),
                    model: None,
                }),
                b: Some(DeviceId {
                    name: "nvme0n1".into(),
                    model: Some("Samsung 990".into()),
                }),
            },
            Note::CacheStateDiffers {
                a: CacheState::Cold,
                b: CacheState::Warm,
            },
            Note::DataDiffers {
                a: data("random", false),
                b: data("zeros", true),
            },
            Note::TimePerRepetitionDiffers {
                a: Some(150_000_000),
                b: None,
            },
            Note::BytesPerRepetitionDiffers {
                a: None,
                b: Some(64 << 20),
            },
            Note::ToolVersionDiffers {
                a: tool("0.1.0", 2),
                b: tool("0.2.0", 3),
            },
            Note::Interrupted { side: a, run: None },
            Note::Interrupted {
                side: b,
                run: Some(2),
            },
            Note::NothingMatched,
            Note::OtherTraffic {
                side: b,
                case: 0,
                device_fraction: 12.04,
            },
        ],
    );
    r
}

#[test]
fn every_note_in_words() {
    let r = noted();
    assert_eq!(
        r.notes.last(),
        Some(&Note::TooFewRepetitions { cases: 1, first: 0 })
    );
    let lines: Vec<String> = r.notes.iter().map(|n| words::note(&r, n)).collect();
    insta::assert_snapshot!(lines.join("\n"));
}

#[test]
fn the_gate_explains_its_exit_code() {
    let r = mixed();
    let lines = |g: Gate| gate_lines(&r, &g).join("\n");
    assert_eq!(lines(Gate::NotAsked), "");
    assert_eq!(
        lines(Gate::Passed {
            limit: 5.0,
            open: 0
        }),
        ""
    );
    let unsure = |case, few_repetitions| Unsure {
        case,
        few_repetitions,
    };
    insta::assert_snapshot!(
        "gate_lines",
        [
            lines(Gate::Passed {
                limit: 5.0,
                open: 1
            }),
            lines(Gate::Passed {
                limit: 5.0,
                open: 2
            }),
            lines(Gate::Unsure {
                limit: 10.0,
                cases: vec![unsure(0, true), unsure(1, false)],
            }),
            lines(Gate::Regressed {
                limit: 10.0,
                cases: vec![0],
            }),
        ]
        .join("\n---\n")
    );
}

#[test]
fn the_text_keeps_to_the_width_it_is_given() {
    let r = noted();
    let mixed = mixed();
    for width in [80, 100, 120, 200] {
        for (name, r) in [("noted", &r), ("mixed", &mixed)] {
            let text = render(r, width);
            assert!(
                widest(&text) <= width,
                "{name} at {width}: {} columns:\n{text}",
                widest(&text)
            );
            // The counts are there whatever the layout.
            assert!(text.ends_with(" not compared\n"), "{text}");
        }
    }
    // Wide enough, one line per case with p99; at 80, two lines per case.
    assert!(render(&mixed, 200).contains("p99 A → B"));
    insta::assert_snapshot!("mixed_at_80", render(&mixed, 80));
    insta::assert_snapshot!("noted_at_80", render(&r, 80));
}

#[test]
fn the_json_carries_codes_and_words() {
    let r = noted();
    let v: serde_json::Value = serde_json::from_str(&to_json(&r).unwrap()).unwrap();
    let notes = v["notes"].as_array().unwrap();
    assert_eq!(notes.len(), r.notes.len());
    for (n, fact) in notes.iter().zip(&r.notes) {
        assert_eq!(n["text"], words::note(&r, fact), "{n}");
    }
    assert_eq!(notes[0]["code"], "target_size_differs");
    assert_eq!(notes[0]["b"], 1u64 << 30);
    assert_eq!(notes[11]["code"], "other_traffic");
    assert_eq!(notes[11]["side"], "b");
    assert_eq!(notes[11]["case"], 0);
    assert_eq!(notes[12]["code"], "too_few_repetitions");
    let c = &v["cases"][0];
    assert_eq!(c["label"], "inconclusive");
    assert!(c["reason"].is_null() && c["a_not_measured"].is_null());
    let m = mixed();
    let v: serde_json::Value = serde_json::from_str(&to_json(&m).unwrap()).unwrap();
    assert_eq!(v["cases"][2]["status"], "only_in_a");
    assert_eq!(v["cases"][2]["reason"], "only in A");
    assert_eq!(m.cases[0].label, Some(Label::Slower));
}

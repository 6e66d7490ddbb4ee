//! The changes and the table as text.

use super::*;
use crate::analysis::compare::render::pct;

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
fn the_text_shows_labels_changes_and_sync_when_it_varies() {
    let mut dsync = case("aio", "randwrite", None, &BASE);
    dsync.sync = iopath_io::SyncPolicy::Dsync;
    let r = report(
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
    );
    let text = render(&r);
    assert!(text.contains("randread 4k Q32T1 sync=end"), "{text}");
    assert!(text.contains("randrw 4k Q32T1 70% read sync=end"), "{text}");
    assert!(text.contains("randwrite 4k Q32T1 sync=dsync"), "{text}");
    assert!(text.contains("-20.0%"), "{text}");
    assert!(text.contains("slower"), "{text}");
    assert!(text.contains("no change"), "{text}");
    assert!(text.contains("only in A"), "{text}");
    assert!(text.contains("100.0 us → 100.0 us"), "{text}");
    assert!(
        text.contains("--drift 0 allows for none"),
        "drift 0 is said: {text}"
    );
    assert!(
        text.contains("0 faster, 1 slower, 1 no change, 0 inconclusive; 1 not compared"),
        "{text}"
    );
    let uring = text.lines().find(|l| l.starts_with("│ uring")).unwrap();
    assert!(
        uring.contains("-20.0%") && uring.contains(" to -19."),
        "{uring}"
    );
    let single = render(&report(
        vec![case("null", "read", None, &[100.0])],
        vec![case("null", "read", None, &[80.0])],
        None,
    ));
    let row = single.lines().find(|l| l.starts_with("│ null")).unwrap();
    assert!(row.contains("-20.0%") && !row.contains(" to "), "{row}");
}

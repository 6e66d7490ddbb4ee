//! Reading the arguments and loading the results.

use std::path::{Path, PathBuf};

use super::*;
use crate::analysis::compare::load::default_names;

#[test]
fn percentages_parse_with_their_bounds() {
    assert_eq!(parse_fail_above("5"), Ok(5.0));
    assert_eq!(parse_fail_above("5%"), Ok(5.0));
    assert_eq!(parse_fail_above(" 2.5 % "), Ok(2.5));
    for bad in [
        "0", "0%", "100", "100%", "-5", "abc", "", "%", "nan", "inf", "5%%",
    ] {
        assert!(parse_fail_above(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_drift("0"), Ok(0.0));
    assert_eq!(parse_drift("8%"), Ok(8.0));
    for bad in ["-1", "100", "nan", "x", ""] {
        assert!(parse_drift(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_sides_split_at_the_double_dash() {
    let p = |s: &[&str]| s.iter().map(PathBuf::from).collect::<Vec<_>>();
    assert_eq!(sides(&p(&["a", "b"]), &[]).unwrap(), (p(&["a"]), p(&["b"])));
    assert_eq!(
        sides(&p(&["a1", "a2"]), &p(&["b1"])).unwrap(),
        (p(&["a1", "a2"]), p(&["b1"]))
    );
    assert!(sides(&p(&["a"]), &[])
        .unwrap_err()
        .0
        .contains("a result for each side"));
    let e = sides(&p(&["a", "b", "c"]), &[]).unwrap_err().0;
    assert!(e.contains("3 files and no `--`"), "{e}");
    let e = sides(&p(&["a"]), &p(&["b", "--fail-above", "5"]))
        .unwrap_err()
        .0;
    assert!(e.starts_with("--fail-above comes after `--`"), "{e}");
}

#[test]
fn bad_input_names_the_file_and_what_to_do() {
    let e = parse(b"not json", "x.json").unwrap_err().0;
    assert!(
        e.contains("x.json is not JSON") && e.contains("iopath run --json"),
        "{e}"
    );
    let e = parse(br#"{"jobs": []}"#, "fio.json").unwrap_err().0;
    assert!(e.contains("fio.json is not an iopath result"), "{e}");
    let e = parse(br#"[1, 2]"#, "list.json").unwrap_err().0;
    assert!(e.contains("list.json is not an iopath result"), "{e}");
    let e = parse(
        br#"{"schema_version": 7, "tool": {"name": "iopath", "version": "3.0.0"}}"#,
        "new.json",
    )
    .unwrap_err()
    .0;
    assert!(
        e.contains("new.json has result schema version 7") && e.contains("3.0.0"),
        "{e}"
    );
    let e = parse(
        br#"{"schema_version": 2, "tool": {"name": "iopath", "version": "0.1.0"}}"#,
        "cut.json",
    )
    .unwrap_err()
    .0;
    assert!(
        e.contains("cut.json is not a complete iopath result"),
        "{e}"
    );
    let e = load(Path::new("/nonexistent/iopath-compare.json"))
        .unwrap_err()
        .0;
    assert!(
        e.contains("cannot read /nonexistent/iopath-compare.json"),
        "{e}"
    );
    // A result serialized by this build reads back.
    let r = run(vec![case("null", "read", None, &BASE)]);
    assert_eq!(
        parse(&serde_json::to_vec(&r).unwrap(), "ok.json").unwrap(),
        r
    );
}

#[test]
fn file_names_are_the_default_names_unless_they_clash() {
    let p = |s: &str| vec![PathBuf::from(s)];
    assert_eq!(
        default_names(&p("ci/base.json"), &p("out/new.json")),
        ("base.json".into(), "new.json".into())
    );
    assert_eq!(
        default_names(&p("a/r.json"), &p("b/r.json")),
        ("a/r.json".into(), "b/r.json".into())
    );
    let several = [PathBuf::from("r1.json"), PathBuf::from("r2.json")];
    assert_eq!(
        default_names(&several, &p("new.json")),
        ("r1.json + 1 more".into(), "new.json".into())
    );
}

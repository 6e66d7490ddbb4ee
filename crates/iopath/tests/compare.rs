//! `iopath compare`: labels, JSON, `--fail-above` exit codes, old and bad
//! inputs, on the fixtures in tests/fixtures/compare (see make.py there).
//!
//! base.json (A) against new.json (B): buffered 20% slower (tight samples),
//! mmap 30% faster, direct unchanged (overlapping), null only in A, aio only
//! in B, uring-iopoll skipped in both.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{iopath, json_of, scratch};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(name)
}

/// `iopath compare A B ARGS`: exit code, stdout, stderr.
fn compare(a: &Path, b: &Path, args: &[&str]) -> (i32, String, String) {
    let out = iopath()
        .arg("compare")
        .arg(a)
        .arg(b)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The table row of `method` in the text output.
fn row<'a>(text: &'a str, method: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("│ {method} ")))
        .unwrap_or_else(|| panic!("no row for {method} in:\n{text}"))
}

/// The case of `method` in the JSON output.
fn case<'a>(v: &'a Value, method: &str) -> &'a Value {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["method"] == method)
        .unwrap_or_else(|| panic!("no case {method} in {v:#}"))
}

/// A copy of fixture `name` changed by `edit`, in `dir`.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v: Value = serde_json::from_slice(&std::fs::read(fixture(name)).unwrap()).unwrap();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    p
}

#[test]
fn text_labels_every_case() {
    let (code, out, err) = compare(&fixture("base.json"), &fixture("new.json"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    assert!(out.starts_with("A: base.json (started "), "{out}");
    let buffered = row(&out, "buffered");
    assert!(
        buffered.contains("slower") && buffered.contains("-20.0%"),
        "{buffered}"
    );
    assert!(buffered.contains("2202.0") && buffered.contains("1761.5"));
    let mmap = row(&out, "mmap");
    assert!(mmap.contains("faster") && mmap.contains("+29.9%"), "{mmap}");
    assert!(row(&out, "direct").contains("no change"));
    assert!(row(&out, "null").contains("only in A"));
    assert!(row(&out, "aio").contains("only in B"));
    assert!(row(&out, "uring-iopoll").contains("not measured"));
    assert!(
        out.contains("not compared:\n  - uring-iopoll randread 4k Q32T1: not measured in A or B: skipped: polled completions fail"),
        "{out}"
    );
    // p99 latency medians, A → B, for information.
    assert!(buffered.contains("31.6 us → 39.5 us"), "{buffered}");
    assert!(out.contains("1 faster, 1 slower, 1 no change; 3 not compared"));
    assert!(!out.contains("note:"), "same system, same settings: {out}");
}

#[test]
fn json_is_pure_and_has_labels_and_statuses() {
    let (code, out, err) = compare(&fixture("base.json"), &fixture("new.json"), &["--json"]);
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    assert_eq!(v["a"]["name"], "base.json");
    assert_eq!(v["b"]["name"], "new.json");
    assert!(v["a"]["path"].as_str().unwrap().ends_with("base.json"));
    assert!(v["b"]["command"]
        .as_str()
        .unwrap()
        .starts_with("iopath run"));
    assert!(v["fail_above_pct"].is_null());
    assert_eq!(v["notes"], serde_json::json!([]));
    // Without --fail-above: every case labelled slower.
    assert_eq!(v["regressions"], 1);

    let expect = [
        ("null", "only_in_a", Value::Null),
        ("buffered", "compared", "slower".into()),
        ("direct", "compared", "no change".into()),
        ("mmap", "compared", "faster".into()),
        ("uring-iopoll", "not_measured", Value::Null),
        ("aio", "only_in_b", Value::Null),
    ];
    let methods: Vec<&str> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        expect.iter().map(|e| e.0).collect::<Vec<_>>(),
        "A's order, then B's own"
    );
    for (method, status, label) in &expect {
        let c = case(&v, method);
        assert_eq!(c["status"], *status, "{method}");
        assert_eq!(c["label"], *label, "{method}");
        assert_eq!(c["pattern"], "randread");
        assert_eq!(c["block_size"], 4096);
        assert_eq!(c["queue_depth"], 32, "the requested depth");
        assert_eq!(c["threads"], 1);
        assert_eq!(c["sync"], "end");
        assert!(c["rwmix_read_pct"].is_null());
        assert_eq!(c["reason"].is_null(), *status == "compared", "{method}");
    }

    let b = case(&v, "buffered");
    let ratio = b["ratio"].as_f64().unwrap();
    assert!((0.79..0.81).contains(&ratio), "{ratio}");
    let ci: Vec<f64> = b["ratio_ci95"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(ci[0] <= ratio && ratio <= ci[1] && ci[1] < 0.9, "{ci:?}");
    assert_eq!((b["a_n"].as_u64(), b["b_n"].as_u64()), (Some(8), Some(8)));
    let (ma, mb) = (
        b["a_median_bw_bytes_per_s"].as_f64().unwrap(),
        b["b_median_bw_bytes_per_s"].as_f64().unwrap(),
    );
    assert!((mb / ma - ratio).abs() < 1e-9);
    assert!(b["a_p99_ns"].as_u64().unwrap() < b["b_p99_ns"].as_u64().unwrap());

    let d = case(&v, "direct");
    let dci = d["ratio_ci95"].as_array().unwrap();
    assert!(dci[0].as_f64().unwrap() < 1.0 && dci[1].as_f64().unwrap() > 1.0);

    let only_a = case(&v, "null");
    assert_eq!(only_a["reason"], "only in A");
    assert_eq!(only_a["a_n"], 8);
    assert_eq!(only_a["b_n"], 0);
    assert!(only_a["b_median_bw_bytes_per_s"].is_null() && only_a["ratio"].is_null());
    assert_eq!(case(&v, "aio")["reason"], "only in B");
    assert!(case(&v, "uring-iopoll")["reason"]
        .as_str()
        .unwrap()
        .starts_with("not measured in A or B: skipped: "));
}

#[test]
fn fail_above_exits_1_on_a_real_slowdown_over_the_limit() {
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--fail-above", "10"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        row(&out, "buffered").contains("slower"),
        "the table still prints"
    );
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("regression:"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("buffered randread 4k Q32T1: -20.0% (95% CI -20.6% to -19.5%)"),
        "{err}"
    );
    assert!(err.contains("by more than 10%"), "{err}");
    assert!(!err.contains("mmap") && !err.contains("direct"), "{err}");

    // The same rule in JSON mode: stdout stays pure JSON.
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--fail-above", "10%", "--json"],
    );
    assert_eq!(code, 1, "{err}");
    let v = json_of(out.as_bytes());
    assert_eq!(v["fail_above_pct"], 10.0);
    assert_eq!(v["regressions"], 1);
    assert!(err.contains("regression: buffered"), "{err}");
}

#[test]
fn fail_above_exits_0_when_the_slowdown_is_within_the_limit() {
    for pct in ["30", "30%", "20.5"] {
        let (code, out, err) = compare(
            &fixture("base.json"),
            &fixture("new.json"),
            &["--fail-above", pct, "--json"],
        );
        assert_eq!(code, 0, "--fail-above {pct}: {err}");
        assert!(err.is_empty(), "{err}");
        assert_eq!(json_of(out.as_bytes())["regressions"], 0, "{pct}");
    }
    // The other way round, mmap is 23% slower and buffered 25% faster:
    // only mmap fails, however low the limit.
    let (code, _, err) = compare(
        &fixture("new.json"),
        &fixture("base.json"),
        &["--fail-above", "1"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("regression: mmap") && !err.contains("buffered"),
        "{err}"
    );
}

#[test]
fn a_result_against_itself_changes_nothing() {
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("base.json"),
        &["--json", "--fail-above", "0.1"],
    );
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    for c in v["cases"].as_array().unwrap() {
        if c["status"] == "compared" {
            assert_eq!(c["label"], "no change", "{c}");
            assert_eq!(c["ratio"], 1.0);
        } else {
            assert_eq!(c["method"], "uring-iopoll");
        }
    }
    // Same file name twice: the paths tell them apart.
    assert_ne!(v["a"]["name"], "base.json");
}

#[test]
fn fail_above_must_be_between_0_and_100() {
    for bad in ["0", "100", "150%", "-5", "ten"] {
        let arg = format!("--fail-above={bad}");
        let (code, out, err) = compare(&fixture("base.json"), &fixture("new.json"), &[&arg]);
        assert_eq!(code, 2, "{arg}: {err}");
        assert!(out.is_empty());
        assert!(
            err.contains(&format!("invalid value '{bad}' for '--fail-above <PCT>'")),
            "{err}"
        );
    }
}

#[test]
fn a_schema_1_result_is_compared() {
    let (code, out, err) = compare(&fixture("v1.json"), &fixture("base.json"), &["--json"]);
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    for m in ["null", "buffered", "direct", "mmap"] {
        let c = case(&v, m);
        assert_eq!(c["status"], "compared", "{m}");
        assert_eq!(c["a_n"], 6, "{m}: v1's six repetitions");
        assert_eq!(c["b_n"], 8, "{m}");
        assert!(c["label"].is_string(), "{m}");
    }
    assert_eq!(case(&v, "uring-iopoll")["status"], "not_measured");
    let notes = v["notes"].to_string();
    assert!(notes.contains("result schema 1"), "{notes}");
    assert!(
        notes.contains("time per repetition differs"),
        "v1 ran 1 s repetitions: {notes}"
    );
}

#[test]
fn runs_on_different_systems_or_settings_get_notes() {
    let dir = scratch();
    let b = edited(dir.path(), "new.json", |v| {
        v["target"]["size_bytes"] = (1u64 << 30).into();
        v["system"]["fs_type"] = "xfs".into();
        v["system"]["device"]["name"] = "nvme0n1".into();
        v["config"]["cache"] = "warm".into();
        v["config"]["data"] = "zeros".into();
        v["tool"]["version"] = "0.2.0".into();
    });
    let (code, out, err) = compare(&fixture("base.json"), &b, &[]);
    assert_eq!(code, 0, "{err}");
    for want in [
        "note: target size differs: base.json 16 MiB, new.json 1 GiB",
        "note: file system differs: base.json ext4, new.json xfs",
        "note: device differs: base.json vda, new.json nvme0n1",
        "note: cache state differs: base.json cold, new.json warm",
        "note: data differs: base.json random, new.json zeros",
        "note: tool version differs: base.json iopath 0.1.0 (result schema 2), new.json iopath 0.2.0 (result schema 2)",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    // In JSON the notes are data, not lines on stderr.
    let (code, out, err) = compare(&fixture("base.json"), &b, &["--json"]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
    assert_eq!(
        json_of(out.as_bytes())["notes"].as_array().unwrap().len(),
        6
    );
}

#[test]
fn display_names_replace_the_file_names() {
    let (code, out, _) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--name-a", "main", "--name-b", "pr-123"],
    );
    assert_eq!(code, 0);
    assert!(out.starts_with("A: main (started "), "{out}");
    assert!(out.contains("\nB: pr-123 (started "), "{out}");
    let (_, out, _) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--name-b", "pr-123", "--json"],
    );
    let v = json_of(out.as_bytes());
    assert_eq!(v["a"]["name"], "base.json");
    assert_eq!(v["b"]["name"], "pr-123");
}

/// A bad input exits 2, names the file, says what to do, prints nothing on
/// stdout, and never panics.
fn rejected(a: &Path, b: &Path, named: &Path, says: &str) {
    let (code, out, err) = compare(a, b, &["--fail-above", "10"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains(&named.display().to_string()),
        "{named:?} not named in: {err}"
    );
    assert!(err.contains(says), "{says:?} not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_inputs_exit_2_naming_the_file() {
    let dir = scratch();
    let base = fixture("base.json");
    let missing = dir.path().join("missing.json");
    rejected(&missing, &base, &missing, "cannot read");
    rejected(&base, &missing, &missing, "iopath run --json");

    let not_iopath = fixture("not-iopath.json");
    rejected(&base, &not_iopath, &not_iopath, "is not an iopath result");

    let newer = fixture("schema-99.json");
    rejected(
        &newer,
        &base,
        &newer,
        "schema version 99, newer than this iopath reads",
    );

    let not_json = dir.path().join("log.json");
    std::fs::write(&not_json, "iopath: interrupted\n").unwrap();
    rejected(&base, &not_json, &not_json, "is not JSON");

    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "").unwrap();
    rejected(&empty, &base, &empty, "is not JSON");

    let text = std::fs::read_to_string(&base).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    rejected(&base, &cut, &cut, "is not JSON");

    let no_cases = edited(dir.path(), "new.json", |v| {
        v.as_object_mut().unwrap().remove("cases");
    });
    rejected(&base, &no_cases, &no_cases, "not a complete iopath result");

    rejected(&base, dir.path(), dir.path(), "cannot read");
}

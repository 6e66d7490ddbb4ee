//! `iopath compare`: labels, JSON, `--fail-above` exit codes, old and bad
//! inputs, on the fixtures in tests/fixtures/compare (see make.py there).
//!
//! base.json (A) against new.json (B): buffered 20% slower (tight samples),
//! mmap 30% faster, direct unchanged (overlapping), null only in A, aio only
//! in B, uring-iopoll skipped in both. v3.json: a schema-3 run of
//! `--methods direct,direct,uring` (two arms of direct), series and verdicts
//! left out. Tests that check the repetitions' own intervals pass
//! `--drift 0`; the default allowance is tested on its own. Facts are
//! checked in the JSON; the words in snapshots (tests/snapshots), with
//! `COLUMNS` unset (120 columns) unless a test sets it.

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
    compare_at(None, a, b, args)
}

/// [`compare`] with `COLUMNS` set to `columns` (unset: `None`).
fn compare_at(columns: Option<usize>, a: &Path, b: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = iopath();
    match columns {
        Some(c) => cmd.env("COLUMNS", c.to_string()),
        None => cmd.env_remove("COLUMNS"),
    };
    let out = cmd
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

/// `MiB/s` of a JSON throughput, as the table prints it.
fn mib(v: &Value) -> String {
    format!("{:.1}", v.as_f64().unwrap() / 1024.0 / 1024.0)
}

#[test]
fn text_labels_every_case() {
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--drift", "0"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let buffered = row(&out, "buffered");
    assert!(buffered.contains("-20.0%"), "{buffered}");
    assert!(buffered.contains("2202.0") && buffered.contains("1761.5"));
    let mmap = row(&out, "mmap");
    assert!(mmap.contains("+29.9%"), "{mmap}");
    // The labels, the reasons, the notes (none: same system, same
    // settings) and the counts, in words.
    insta::assert_snapshot!(out);
    // The same figures and facts in the JSON.
    let (_, json, _) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--drift", "0", "--json"],
    );
    let v = json_of(json.as_bytes());
    let b = case(&v, "buffered");
    assert_eq!(b["label"], "slower");
    assert_eq!(mib(&b["a_median_bw_bytes_per_s"]), "2202.0");
    assert_eq!(mib(&b["b_median_bw_bytes_per_s"]), "1761.5");
    // p99 latency medians, A → B (31.6 us → 39.5 us), for information.
    assert_eq!(
        (b["a_p99_ns"].as_u64(), b["b_p99_ns"].as_u64()),
        (Some(31591), Some(39535))
    );
    assert_eq!(case(&v, "mmap")["label"], "faster");
    // +1.0% inside a -38% to +64% interval: it cannot tell (never "no change").
    assert_eq!(case(&v, "direct")["label"], "inconclusive");
    let labels: Vec<&Value> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["label"])
        .collect();
    let n = |l: &str| labels.iter().filter(|x| **x == l).count();
    assert_eq!(
        (n("faster"), n("slower"), n("no change"), n("inconclusive")),
        (1, 1, 0, 1)
    );
    assert_eq!(
        labels.iter().filter(|x| x.is_null()).count(),
        3,
        "not compared"
    );
    assert_eq!(v["notes"], serde_json::json!([]));
}

/// At 80 columns no line of stdout is wider; at 200 the table keeps one
/// line per case with its p99 column.
#[test]
fn text_keeps_to_the_terminals_width() {
    let widest = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    for (a, b, args) in [
        ("base.json", "new.json", &["--fail-above", "10"][..]),
        ("new.json", "base.json", &["--drift", "0"][..]),
        ("v1.json", "base.json", &[][..]),
    ] {
        for columns in [80, 100, 120] {
            let (_, out, _) = compare_at(Some(columns), &fixture(a), &fixture(b), args);
            assert!(widest(&out) <= columns, "{a} {b} at {columns}:\n{out}");
        }
    }
    let (code, narrow, err) = compare_at(
        Some(80),
        &fixture("base.json"),
        &fixture("new.json"),
        &["--fail-above", "10"],
    );
    assert_eq!(code, 3, "{err}");
    insta::assert_snapshot!(narrow);
    let (_, wide, _) = compare_at(
        Some(200),
        &fixture("base.json"),
        &fixture("new.json"),
        &["--drift", "0"],
    );
    assert!(
        row(&wide, "buffered").contains("31.6 us → 39.5 us"),
        "{wide}"
    );
}

#[test]
fn json_is_pure_and_has_labels_and_statuses() {
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--json", "--drift", "0"],
    );
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    assert_eq!(v["a"]["name"], "base.json");
    assert_eq!(v["drift_allowance_pct"], 0.0);
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
        ("direct", "compared", "inconclusive".into()),
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
        assert_eq!(c["name"], *method);
        if *status == "compared" {
            assert_eq!(c["test"], "within_run", "{method}");
            assert_eq!(c["a_runs"], 1);
        }
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
    assert!(only_a["a_not_measured"].is_null() && only_a["b_not_measured"].is_null());
    assert_eq!(only_a["a_n"], 8);
    assert_eq!(only_a["b_n"], 0);
    assert!(only_a["b_median_bw_bytes_per_s"].is_null() && only_a["ratio"].is_null());
    let iopoll = case(&v, "uring-iopoll");
    assert_eq!(iopoll["a_not_measured"]["code"], "skipped");
    assert_eq!(iopoll["a_not_measured"], iopoll["b_not_measured"]);
}

#[test]
fn fail_above_exits_1_on_a_real_slowdown_over_the_limit() {
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--fail-above", "10", "--drift", "0"],
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
        lines[0].contains("buffered randread 4k Q1T1: -20.0% (95% CI -20.6% to -19.5%)"),
        "{err}"
    );
    insta::assert_snapshot!(err);

    // The same rule in JSON mode: stdout stays pure JSON.
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--fail-above", "10%", "--json", "--drift", "0"],
    );
    assert_eq!(code, 1, "{err}");
    let v = json_of(out.as_bytes());
    assert_eq!(v["fail_above_pct"], 10.0);
    assert_eq!(v["regressions"], 1);
    assert!(err.starts_with("regression: buffered "), "{err}");
}

#[test]
fn fail_above_exits_0_when_the_slowdown_is_within_the_limit() {
    // The median lost 20%: a limit above that passes.
    for pct in ["30", "30%", "20.5"] {
        let (code, out, err) = compare(
            &fixture("base.json"),
            &fixture("new.json"),
            &["--fail-above", pct, "--json", "--drift", "0"],
        );
        assert_eq!(code, 0, "--fail-above {pct}: {err}");
        assert!(err.is_empty(), "{err}");
        assert_eq!(json_of(out.as_bytes())["regressions"], 0, "{pct}");
    }
    // The bound nearest to no change is -19.5%: against 19.6 the median is
    // beyond the limit and the interval within it: neither a regression
    // nor a pass (exit 3).
    let (code, _, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--fail-above", "19.6", "--json", "--drift", "0"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.starts_with("inconclusive: buffered "), "{err}");
    // The other way round, mmap is 23% slower and buffered 25% faster:
    // only mmap fails, however low the limit.
    let (code, _, err) = compare(
        &fixture("new.json"),
        &fixture("base.json"),
        &["--fail-above", "1", "--drift", "0"],
    );
    assert_eq!(code, 1, "{err}");
    let named: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("regression: "))
        .collect();
    assert_eq!(named.len(), 1, "{err}");
    assert!(named[0].starts_with("mmap "), "{err}");
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
    // One run a side: the drift allowance keeps even identical figures
    // from ruling out a change: inconclusive, not a call, exit 0.
    for c in v["cases"].as_array().unwrap() {
        if c["status"] == "compared" {
            assert_eq!(c["label"], "inconclusive", "{c}");
            assert_eq!(c["ratio"], 1.0);
        } else {
            assert_eq!(c["method"], "uring-iopoll");
        }
    }
    // Without the allowance the interval is the repetitions' own (about
    // -15% to +18% here): no change against a 25% threshold.
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("base.json"),
        &["--json", "--fail-above", "25", "--drift", "0"],
    );
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    for c in v["cases"].as_array().unwrap() {
        if c["status"] == "compared" {
            assert_eq!(c["label"], "no change", "{c}");
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
    let notes = v["notes"].as_array().unwrap();
    let note = |code: &str| {
        notes
            .iter()
            .find(|n| n["code"] == code)
            .unwrap_or_else(|| panic!("no {code} in {notes:?}"))
    };
    assert_eq!(note("tool_version_differs")["a"]["schema_version"], 1);
    // v1 ran 1 s repetitions.
    assert_eq!(note("time_per_repetition_differs")["a"], 1_000_000_000u64);
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
    let notes: Vec<&str> = out.lines().filter(|l| l.starts_with("note: ")).collect();
    insta::assert_snapshot!(notes.join("\n"));
    // In JSON the notes are data, not lines on stderr: codes and figures,
    // with the words beside them.
    let (code, out, err) = compare(&fixture("base.json"), &b, &["--json"]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
    let v = json_of(out.as_bytes());
    let codes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "target_size_differs",
            "file_system_differs",
            "device_differs",
            "cache_state_differs",
            "data_differs",
            "tool_version_differs"
        ]
    );
    assert_eq!(v["notes"][0]["a"], 16u64 << 20);
    assert_eq!(v["notes"][0]["b"], 1u64 << 30);
    assert_eq!(v["notes"][1]["b"], "xfs");
    assert_eq!(v["notes"][5]["b"]["version"], "0.2.0");
    assert_eq!(
        v["notes"][2]["text"],
        "device differs: base.json vda, new.json nvme0n1"
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
    assert!(
        out.lines()
            .nth(1)
            .unwrap()
            .starts_with("B: pr-123 (started "),
        "{out}"
    );
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

/// A copy of fixture `name` with every repetition's throughput times
/// `scale[i]` for case i (cycling), written as `out` in `dir`.
fn scaled(dir: &Path, name: &str, out: &str, scale: &[f64]) -> PathBuf {
    let tmp = edited(dir, name, |v| {
        for (i, c) in v["cases"].as_array_mut().unwrap().iter_mut().enumerate() {
            let f = scale[i % scale.len()];
            for r in c["repetitions"].as_array_mut().unwrap() {
                let bw = r["bw_bytes_per_s"].as_f64().unwrap();
                r["bw_bytes_per_s"] = (bw * f).into();
            }
        }
    });
    let p = dir.join(out);
    std::fs::rename(tmp, &p).unwrap();
    p
}

#[test]
fn the_default_drift_allowance_widens_one_run_a_side() {
    let default = iopath::analysis::compare::DEFAULT_DRIFT_PCT;
    let (code, out, err) = compare(&fixture("base.json"), &fixture("new.json"), &["--json"]);
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    assert_eq!(v["drift_allowance_pct"], default);
    let b = case(&v, "buffered");
    assert_eq!(b["drift_allowance_pct"], default);
    let hi = b["ratio_ci95"][1].as_f64().unwrap();
    // The repetitions' bound (0.805) times 1 + the allowance.
    assert!(
        (hi / (1.0 + default / 100.0) - 0.805).abs() < 0.002,
        "{hi} with {default}%"
    );
    // --drift overrides it; the text says the allowance.
    let (_, out, _) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--drift", "30%"],
    );
    assert!(out.contains("drift allowance of 30% (--drift"), "{out}");
    let (_, json, _) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--drift", "30%", "--json"],
    );
    let v = json_of(json.as_bytes());
    assert_eq!(v["drift_allowance_pct"], 30.0);
    assert_eq!(
        case(&v, "buffered")["label"],
        "inconclusive",
        "20% is within 30%: not called, and not ruled out either"
    );
    let (code, _, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--drift", "30", "--fail-above", "5"],
    );
    // buffered's median is 20% down, its widened interval reaches +5%:
    // the gate cannot pass it (exit 3), nor call it a regression.
    assert_eq!(code, 3, "{err}");
    for bad in ["-1", "100", "x"] {
        let arg = format!("--drift={bad}");
        let (code, _, err) = compare(&fixture("base.json"), &fixture("new.json"), &[&arg]);
        assert_eq!(code, 2, "{arg}: {err}");
        assert!(err.contains("for '--drift <PCT>'"), "{err}");
    }
}

/// `iopath compare ARGS A... -- B...`.
fn compare_runs(args: &[&str], a: &[PathBuf], b: &[PathBuf]) -> (i32, String, String) {
    let out = iopath()
        .env_remove("COLUMNS")
        .arg("compare")
        .args(args)
        .args(a)
        .arg("--")
        .args(b)
        .output()
        .unwrap();
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn several_runs_a_side_put_the_drift_in_the_interval() {
    let dir = scratch();
    let d = dir.path();
    // Three runs a side of the same configuration, each tight inside but
    // drifting by a few percent from run to run.
    let a: Vec<PathBuf> = [1.0, 1.06, 0.95]
        .iter()
        .enumerate()
        .map(|(i, &f)| scaled(d, "base.json", &format!("a{i}.json"), &[f]))
        .collect();
    let b: Vec<PathBuf> = [1.03, 0.96, 1.01]
        .iter()
        .enumerate()
        .map(|(i, &f)| scaled(d, "base.json", &format!("b{i}.json"), &[f]))
        .collect();
    let (code, out, err) = compare_runs(&["--fail-above", "5", "--json"], &a, &b);
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    assert_eq!(v["a"]["paths"].as_array().unwrap().len(), 3);
    assert_eq!(v["a"]["name"], "a0.json + 2 more");
    let c = case(&v, "buffered");
    assert_eq!(c["test"], "between_runs");
    assert_eq!(
        (c["a_runs"].as_u64(), c["b_runs"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!((c["a_n"].as_u64(), c["b_n"].as_u64()), (Some(24), Some(24)));
    // -11% to +12% against a 5% threshold: neither rules it out.
    assert_eq!(c["label"], "inconclusive", "{c}");
    assert_eq!(v["no_change_margin_pct"], 5.0);
    assert!(c["drift_allowance_pct"].is_null());
    assert_eq!(v["regressions"], 0);
    // The same data one run a side without an allowance: the drift between
    // a1 (1.06) and b1 (0.96) reads as a real 9% slowdown.
    let (code, _, err) = compare(&a[1], &b[1], &["--fail-above", "5", "--drift", "0"]);
    assert_eq!(code, 1, "{err}");
    // Text: runs x repetitions, the test said (snapshot).
    let (code, out, _) = compare_runs(&[], &a, &b);
    assert_eq!(code, 0);
    assert!(row(&out, "buffered").contains("3x8"), "{out}");
    // From the test said to the table (the sides name temporary paths).
    let from = out.find("\nWith several runs").expect("the test is said");
    let paragraphs = out[from + 1..].split("\n\n").next().unwrap();
    insta::assert_snapshot!(paragraphs);

    // A real 40% slowdown over three runs is caught, at the bound.
    let slow: Vec<PathBuf> = [0.6, 0.62, 0.59]
        .iter()
        .enumerate()
        .map(|(i, &f)| scaled(d, "base.json", &format!("s{i}.json"), &[f]))
        .collect();
    let (code, _, err) = compare_runs(&["--fail-above", "5"], &a, &slow);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.lines().any(|l| l
            .starts_with("regression: buffered randread 4k Q1T1: -39.")
            && l.ends_with(" between 3 and 3 runs) from 2207.1 MiB/s to 1328.3 MiB/s, slower by more than --fail-above 5% at the interval's bound")),
        "{err}"
    );
    // Several against one: still between runs (A's spread stands for both).
    let (code, out, err) = compare_runs(&["--fail-above", "5", "--json"], &a, &slow[..1]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        case(&json_of(out.as_bytes()), "buffered")["test"],
        "between_runs"
    );
}

#[test]
fn the_double_dash_splits_the_sides_and_misuse_exits_2() {
    let base = fixture("base.json");
    let dir = scratch();
    let out = iopath().arg("compare").arg(&base).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a result for each side"));
    let out = iopath()
        .arg("compare")
        .args([&base, &base, &base])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("put `--` between"));
    let (code, out, err) = compare_runs(
        &[],
        std::slice::from_ref(&base),
        &[base.clone(), "--json".into()],
    );
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("--json comes after `--`"), "{err}");
    // A bad file on either side, in a list, is named.
    let missing = dir.path().join("gone.json");
    let (code, _, err) = compare_runs(
        &[],
        &[base.clone(), missing.clone()],
        std::slice::from_ref(&base),
    );
    assert_eq!(code, 2);
    assert!(err.contains(&missing.display().to_string()), "{err}");
}

#[test]
fn a_schema_3_result_with_two_arms_is_compared_arm_by_arm() {
    let v3 = fixture("v3.json");
    let (code, out, err) = compare(&v3, &v3, &["--json", "--fail-above", "1"]);
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    let names: Vec<&str> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["direct", "direct#2", "uring"]);
    let arm2 = &v["cases"][1];
    assert_eq!(arm2["arm"], 2);
    assert_eq!(arm2["method"], "direct");
    assert_eq!(arm2["status"], "compared");
    assert_eq!(arm2["ratio"], 1.0);
    assert!(v["cases"][0].get("arm").is_none());
    // The text names the arm and shows the depth direct ran at.
    let (_, out, _) = compare(&v3, &v3, &[]);
    assert!(row(&out, "direct#2").contains("randread 4k Q1T1"), "{out}");
    assert!(row(&out, "uring").contains("randread 4k Q32T1"), "{out}");
    // Against schema 2: direct matches direct, the second arm is only in B.
    let (code, out, err) = compare(&fixture("base.json"), &v3, &["--json"]);
    assert_eq!(code, 0, "{err}");
    let v = json_of(out.as_bytes());
    let direct: Vec<&Value> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["method"] == "direct")
        .collect();
    assert_eq!(direct.len(), 2);
    assert_eq!(direct[0]["status"], "compared");
    assert_eq!(direct[1]["name"], "direct#2");
    assert_eq!(direct[1]["status"], "only_in_b");
    let tool = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["code"] == "tool_version_differs")
        .unwrap();
    assert_eq!(
        (&tool["a"]["schema_version"], &tool["b"]["schema_version"]),
        (&2.into(), &3.into())
    );
}

#[test]
fn a_gate_never_passes_a_slowdown_it_cannot_rule_out() {
    // One run a side, default drift allowance: buffered's -20% is neither
    // a call nor ruled out. Against --fail-above 10 its median is beyond
    // the limit: exit 3, not a pass (the review found a uniform 30%
    // slowdown passing --fail-above 10 with exit 0).
    let (code, out, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--fail-above", "10"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(row(&out, "buffered").contains("-20.0%"), "{out}");
    insta::assert_snapshot!("gate_exit_3", err);
    // Against 25% every median is within the limit: the gate passes, and
    // says that the pass leaves the cases open.
    let (code, _, err) = compare(
        &fixture("base.json"),
        &fixture("new.json"),
        &["--fail-above", "25"],
    );
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("gate_passes_with_3_open", err);
}

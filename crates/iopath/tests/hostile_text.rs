//! Untrusted text that `untrusted::visible` once let through: values on
//! the command line that clap's errors quote, line feeds inside a result's
//! strings (forged lines in a report), bidi controls that reorder what a
//! line shows, and C1 controls that serde_json writes raw.

use std::path::{Path, PathBuf};

mod common;
use common::{iopath, json_of, scratch};

/// OSC 52 (writes the clipboard) and the C1 CSI.
const OSC52: &str = "x\u{1b}]52;c;SGk=\u{7}\u{9b}2J";

/// Characters a terminal obeys or that reorder a line: every control but
/// `\n` and `\t`, and the bidi controls.
fn unsafe_chars(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
        })
        .collect()
}

#[test]
fn clap_errors_show_the_escapes_of_the_values_they_quote() {
    let cases: Vec<Vec<String>> = vec![
        vec!["run".into(), "--patterns".into(), OSC52.into()],
        vec!["run".into(), "--size".into(), OSC52.into()],
        vec!["run".into(), "--methods".into(), OSC52.into()],
        vec!["run".into(), "--max-time".into(), OSC52.into()],
        vec!["presets".into(), "show".into(), OSC52.into()],
        vec!["completions".into(), OSC52.into()],
        vec![OSC52.into()],
        vec!["run".into(), format!("--x{OSC52}")],
        vec!["run".into(), format!("--patterns=read,{OSC52}")],
        vec!["probe".into(), OSC52.into(), "extra".into()],
        vec![
            "compare".into(),
            "--fail-above".into(),
            OSC52.into(),
            "a".into(),
            "b".into(),
        ],
    ];
    for args in cases {
        let out = iopath().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(unsafe_chars(&err), Vec::<char>::new(), "{args:?}: {err}");
        // (`--xx\e]52;c;SGk=...` is the flag `--xx\e]52;c;SGk`: quoted
        // up to the `=`.)
        assert!(
            err.contains("\\x1b]52;c;SGk"),
            "{args:?}: the value is not shown:\n{err}"
        );
    }
}

#[test]
fn a_value_parsers_message_keeps_a_line_feed_of_the_value_on_its_line() {
    let out = iopath()
        .args(["run", "--size", "1x\nerror: FORGED"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("error: FORGED")),
        "a forged line:\n{err}"
    );
    assert!(err.contains("1x\\x0aerror: FORGED"), "{err}");
}

#[test]
fn clap_errors_without_control_characters_are_as_clap_writes_them() {
    let out = iopath().args(["run", "--size", "lots"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: invalid value 'lots' for '--size"),
        "{err}"
    );
    assert!(err.contains("For more information, try '--help'."), "{err}");
}

fn run_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run.json")
}

/// The fixture with a forged line after its first case's method, a note
/// and the file system type, and a bidi override in another note.
fn forged_result(dir: &Path) -> PathBuf {
    let mut r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_fixture()).unwrap()).unwrap();
    r["system"]["fs_type"] = "ext4\nFORGED: fs".into();
    let case = &mut r["cases"][0];
    case["method"] = "buffered\nFORGED: use mmap, 99 GB/s".into();
    let notes = case["notes"].as_array_mut().unwrap();
    notes.push("note\r\nFORGED: note".into());
    notes.push("slow \u{202e}sbG 99\u{202c} fast".into());
    let p = dir.join("forged.json");
    std::fs::write(&p, serde_json::to_vec(&r).unwrap()).unwrap();
    p
}

fn report(args: &[&std::ffi::OsStr]) -> String {
    let out = iopath().arg("report").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// No line of `text` (Markdown's `\\` read as `\`) begins (after table borders, `|` or `"`) with
/// `FORGED`, bidi controls are shown, and the forged method is shown
/// with its line feed escaped.
fn assert_no_forged_lines(what: &str, text: &str) {
    let text = &text.replace("\\\\", "\\");
    let forged = text.lines().find(|l| {
        l.trim_start_matches(|c: char| c.is_whitespace() || "│|\"<>/tdr".contains(c))
            .starts_with("FORGED")
    });
    assert_eq!(forged, None, "{what}: a forged line in:\n{text}");
    assert_eq!(unsafe_chars(text), Vec::<char>::new(), "{what}: {text}");
    assert!(
        text.contains("\\u{202e}sbG 99\\u{202c}") || !text.contains("sbG"),
        "{what}"
    );
}

#[test]
fn a_line_feed_in_a_result_string_forges_no_line_of_a_report() {
    let dir = scratch();
    let res = forged_result(dir.path());
    let table = report(&[res.as_os_str(), "--wide".as_ref()]);
    assert_no_forged_lines("table", &table);
    assert!(table.contains("buffered\\x0aFORGED"), "{table}");
    assert!(table.contains("\\u{202e}sbG 99\\u{202c}"), "{table}");
    // CSV keeps the exact value in a quoted field: a CSV reader reads one
    // field, not a forged row.
    let csv = dir.path().join("r.csv");
    report(&[res.as_os_str(), "--csv".as_ref(), csv.as_os_str()]);
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(
        csv.contains(",\"buffered\nFORGED: use mmap, 99 GB/s\","),
        "{csv}"
    );
    assert_eq!(unsafe_chars(&csv), Vec::<char>::new(), "{csv}");
    for (flag, name) in [("--markdown", "r.md"), ("--html", "r.html")] {
        let out = dir.path().join(name);
        report(&[res.as_os_str(), flag.as_ref(), out.as_os_str()]);
        let text = std::fs::read_to_string(&out).unwrap();
        assert_no_forged_lines(flag, &text);
        let text = text.replace("\\\\", "\\");
        assert!(text.contains("buffered\\x0aFORGED"), "{flag}:\n{text}");
    }
}

#[test]
fn json_on_stdout_writes_c1_and_bidi_controls_as_escapes_of_the_same_data() {
    let dir = scratch();
    let mut r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_fixture()).unwrap()).unwrap();
    let method = "buffered\u{9b}2J\u{202e}x\u{85}";
    r["cases"][0]["method"] = method.into();
    let res = dir.path().join("c1.json");
    std::fs::write(&res, serde_json::to_vec(&r).unwrap()).unwrap();
    let other = dir.path().join("other.json");
    std::fs::copy(run_fixture(), &other).unwrap();
    let outs = [
        iopath()
            .args(["report", "--json", "-"])
            .arg(&res)
            .output()
            .unwrap(),
        iopath()
            .args(["compare", "--json"])
            .arg(&res)
            .arg(&other)
            .output()
            .unwrap(),
    ];
    for out in outs {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout.clone()).unwrap();
        assert_eq!(unsafe_chars(&text), Vec::<char>::new(), "{text}");
        assert!(text.contains("buffered\\u009b2J\\u202ex\\u0085"), "{text}");
        // The same data, once parsed.
        assert!(
            strings(&json_of(&out.stdout))
                .iter()
                .any(|s| s.contains(method)),
            "{text}"
        );
    }
}

/// Every string of a JSON document.
fn strings(v: &serde_json::Value) -> Vec<String> {
    match v {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(a) => a.iter().flat_map(strings).collect(),
        serde_json::Value::Object(m) => m.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

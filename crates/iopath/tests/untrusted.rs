//! Text iopath did not write (a result's strings, job and fio file lines,
//! paths) never reaches a terminal or a text report as raw control
//! characters: `iopath report`, `compare`, and errors quoting input show
//! `\x1b`, `\x00`, `\u{9b}` instead (`untrusted::visible`), while the JSON
//! keeps the exact data.

use std::path::{Path, PathBuf};

mod common;
use common::{iopath, scratch};

/// OSC 52 (writes the clipboard), clear screen, NUL, DEL and the C1 CSI.
const EVIL: &str = "\u{1b}]52;c;aGk=\u{7}\u{1b}[2J\u{0}\u{7f}\u{9b}31m";
/// How [`EVIL`] begins once shown.
const SHOWN: &str = "\\x1b]52;c;aGk=\\x07\\x1b";

fn run_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run.json")
}

/// The real run of tests/fixtures/report/run.json with [`EVIL`] in its
/// file system type, its first case's method and one of its notes.
fn hostile_result(dir: &Path) -> PathBuf {
    let mut r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_fixture()).unwrap()).unwrap();
    r["system"]["fs_type"] = format!("ext4{EVIL}").into();
    let case = &mut r["cases"][0];
    case["method"] = format!("buffered{EVIL}").into();
    case["notes"]
        .as_array_mut()
        .unwrap()
        .push(format!("note{EVIL}").into());
    let p = dir.join("hostile.json");
    std::fs::write(&p, serde_json::to_vec(&r).unwrap()).unwrap();
    p
}

/// Every control character in `bytes` but `\n` and `\t` (C0, DEL, C1).
fn raw_controls(bytes: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(bytes)
        .chars()
        .filter(|&c| c.is_control() && c != '\n' && c != '\t')
        .collect()
}

/// `bytes` hold no raw control character and show [`EVIL`] escaped
/// (`shown`: its escaped form as that output writes it).
fn assert_shown_not_sent(what: &str, bytes: &[u8], shown: &str) {
    assert_eq!(
        raw_controls(bytes),
        Vec::<char>::new(),
        "{what}: raw control characters"
    );
    let text = String::from_utf8_lossy(bytes);
    assert!(text.contains(shown), "{what}: no {shown} in:\n{text}");
}

#[test]
fn report_table_of_a_hostile_result_shows_its_escapes() {
    let dir = scratch();
    let res = hostile_result(dir.path());
    for args in [&[][..], &["--wide"][..]] {
        let out = iopath()
            .arg("report")
            .arg(&res)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_shown_not_sent("report table", &out.stdout, SHOWN);
        assert!(String::from_utf8_lossy(&out.stdout).contains("\\u{9b}31m"));
    }
}

#[test]
fn report_markdown_csv_and_html_of_a_hostile_result_show_its_escapes() {
    let dir = scratch();
    let res = hostile_result(dir.path());
    // Markdown backslash-escapes `]` and `[` as well, and the backslash of
    // the value's escapes (they are shown before Markdown places the
    // value, `untrusted::one_line`): rendered, `\x1b]52;c;aGk=\x07`.
    for (flag, shown) in [
        ("--markdown", "\\\\x1b\\]52;c;aGk=\\\\x07"),
        ("--csv", SHOWN),
        ("--html", SHOWN),
    ] {
        let out = iopath()
            .arg("report")
            .arg(&res)
            .args([flag, "-"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_shown_not_sent(flag, &out.stdout, shown);
        // The same in a file.
        let file = dir.path().join("out");
        let out = iopath()
            .arg("report")
            .arg(&res)
            .arg(flag)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{flag}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_shown_not_sent(flag, &std::fs::read(&file).unwrap(), shown);
    }
}

#[test]
fn report_html_of_a_hostile_result_escapes_its_markup() {
    let dir = scratch();
    let mut r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_fixture()).unwrap()).unwrap();
    r["system"]["fs_type"] = "<script>alert(1)</script>".into();
    r["cases"][0]["method"] = "<img src=x onerror=alert(1)>".into();
    let res = dir.path().join("markup.json");
    std::fs::write(&res, serde_json::to_vec(&r).unwrap()).unwrap();
    let out = iopath()
        .arg("report")
        .arg(&res)
        .args(["--html", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(!html.contains("<script>alert"), "unescaped <script>");
    assert!(!html.contains("<img src=x"), "unescaped <img>");
    assert!(html.contains("&lt;script&gt;alert(1)"));
}

#[test]
fn report_json_of_a_hostile_result_keeps_its_strings_exactly() {
    let dir = scratch();
    let res = hostile_result(dir.path());
    let out = iopath()
        .arg("report")
        .arg(&res)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let j = common::json_of(&out.stdout);
    assert_eq!(j["system"]["fs_type"], format!("ext4{EVIL}"));
    assert_eq!(j["cases"][0]["method"], format!("buffered{EVIL}"));
}

#[test]
fn compare_with_a_hostile_result_shows_its_escapes() {
    let dir = scratch();
    let res = hostile_result(dir.path());
    let out = iopath()
        .arg("compare")
        .arg(run_fixture())
        .arg(&res)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_shown_not_sent("compare", &out.stdout, SHOWN);
    assert_eq!(raw_controls(&out.stderr), Vec::<char>::new());
}

#[test]
fn job_file_error_quoting_a_line_with_esc_and_nul_shows_them_escaped() {
    let dir = scratch();
    let job = dir.path().join("job.toml");
    std::fs::write(&job, format!("methdos = [\"buffered{EVIL}\"]\n")).unwrap();
    let out = iopath().arg("run").arg(&job).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_shown_not_sent("job file error", &out.stderr, SHOWN);
    assert!(String::from_utf8_lossy(&out.stderr).contains("\\x00"));
}

#[test]
fn fio_file_error_quoting_a_line_with_esc_and_nul_shows_them_escaped() {
    let dir = scratch();
    let fio = dir.path().join("job.fio");
    // fio reads `;` as the start of a comment: the quoted name ends there.
    std::fs::write(
        &fio,
        "[job]\nrw=randread\nbs=4k\nsize=1m\nfoo\u{1b}[2J\u{0}\u{9b}bar=1\n",
    )
    .unwrap();
    let out = iopath().arg("import-fio").arg(&fio).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_shown_not_sent("fio file error", &out.stderr, "foo\\x1b[2J\\x00\\u{9b}bar");
}

#[test]
fn path_with_esc_in_an_error_is_shown_escaped() {
    let dir = scratch();
    let missing = dir.path().join("gone\u{1b}[2J.json");
    let out = iopath().arg("report").arg(&missing).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_shown_not_sent("path error", &out.stderr, "gone\\x1b[2J.json");
}

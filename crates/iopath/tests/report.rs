//! Reports: `iopath report` and `iopath run --html/--csv/--markdown/--png-dir`
//! on the real run in tests/fixtures/report/run.json (buffered, direct,
//! mmap, uring, aio and a skipped uring-iopoll on read, randread and write;
//! 1 warm-up + 4 repetitions each), and the HTML report in a real browser.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

mod common;
use common::{inline_svgs, iopath, scratch};

fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
        .join(name)
}

fn run_fixture() -> PathBuf {
    fixture("report", "run.json")
}

/// (width, height, RGB pixels) of a PNG file.
fn decode_png(p: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::fs::File::open(p).unwrap();
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("{}: unexpected colour type {other:?}", p.display()),
    };
    let px = buf[..info.buffer_size()]
        .chunks(step)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

#[test]
fn report_writes_every_format_from_a_saved_result() {
    let dir = scratch();
    let d = dir.path();
    let out = iopath()
        .arg("report")
        .arg(run_fixture())
        .arg("--html")
        .arg(d.join("r.html"))
        .arg("--csv")
        .arg(d.join("r.csv"))
        .arg("--markdown")
        .arg(d.join("r.md"))
        .arg("--png-dir")
        .arg(d.join("charts"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "files asked for: nothing on stdout");

    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for section in [
        "verdicts",
        "warnings",
        "results",
        "not-run",
        "system",
        "reproduce",
        "cpu-kind",
    ] {
        assert!(html.contains(&format!("id=\"{section}\"")), "no {section}");
    }
    // The exact command, escaped; every verdict; the warnings by code.
    assert!(html.contains("iopath run --methods buffered,direct,mmap,uring,aio,uring-iopoll"));
    assert!(html.contains("→ use uring."), "write verdict");
    assert!(html.contains("<code>low_device_fraction</code>"));
    // Self-contained: nothing is fetched (the xmlns of SVG is a name, not a
    // fetch), and the policy forbids it anyway.
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    assert!(html.contains("Content-Security-Policy"));
    assert!(!html.contains("<script"), "readable without JavaScript");
    let svgs = inline_svgs(&html);
    assert_eq!(
        svgs.len(),
        18,
        "5 charts and the CPU-by-kind bars for each of 3 groups"
    );
    for s in svgs {
        roxmltree::Document::parse(s).unwrap_or_else(|e| panic!("inline SVG not well-formed: {e}"));
    }

    let mut pngs: Vec<String> = std::fs::read_dir(d.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pngs.sort();
    assert_eq!(pngs.len(), 15, "{pngs:?}");
    assert!(
        pngs.contains(&"randread-4k-q32-t1-latency.png".to_string()),
        "{pngs:?}"
    );
    let (w, h, px) = decode_png(&d.join("charts/randread-4k-q32-t1-throughput.png"));
    assert_eq!(w, 1800, "drawn at twice the 900 px chart");
    assert!(h > 300);
    assert!(
        px.iter().filter(|p| **p == [0, 0, 0]).count() > 500,
        "text drawn"
    );

    let csv = std::fs::read_to_string(d.join("r.csv")).unwrap();
    assert!(csv.starts_with("started_at,case,method,"), "{}", &csv[..80]);
    // 15 measured cases x 5 repetitions, 3 skipped cases x 1 row, a header.
    assert_eq!(csv.lines().count(), 15 * 5 + 3 + 1);

    let md = std::fs::read_to_string(d.join("r.md")).unwrap();
    assert!(md.contains("→ use uring."), "{md}");
    assert!(md.contains("| method |"), "{md}");
}

#[test]
fn report_without_files_prints_the_tables_and_stdout_markdown_is_pure() {
    let out = iopath()
        .arg("report")
        .arg(run_fixture())
        .arg("--explain")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("random read (randread)"), "{text}");
    assert!(text.contains("verdict:"), "{text}");

    let out = iopath()
        .arg("report")
        .arg(run_fixture())
        .args(["--markdown", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("## iopath"), "{md}");
    assert!(
        !md.contains('┌'),
        "no terminal table mixed into the Markdown"
    );
}

#[test]
fn a_schema_1_result_gets_a_report_with_verdicts() {
    let dir = scratch();
    let html = dir.path().join("v1.html");
    let out = iopath()
        .arg("report")
        .arg(fixture("compare", "v1.json"))
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(html).unwrap();
    assert!(
        html.contains("schema version 1"),
        "the footer says what it read"
    );
    assert!(html.contains("class=\"card\""), "verdicts computed for v1");
    // v1 has no per-interval series: no within-repetition chart, the rest.
    assert!(!html.contains("-timeline\""));
    assert!(html.contains("-throughput\""));
}

#[test]
fn bad_inputs_and_outputs_are_usage_errors_that_name_the_file() {
    let dir = scratch();
    let d = dir.path();
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            vec![fixture("compare", "schema-99.json").into()],
            "schema version 99, newer than this iopath reads",
        ),
        (
            vec![fixture("compare", "not-iopath.json").into()],
            "is not an iopath result",
        ),
        (vec![d.join("missing.json").into()], "cannot read"),
        (
            vec![run_fixture().into(), "--html".into(), d.into()],
            "is a directory: name a file in it",
        ),
        (
            vec![
                run_fixture().into(),
                "--csv".into(),
                d.join("no/such/x.csv").into(),
            ],
            "does not exist",
        ),
        (
            vec![
                run_fixture().into(),
                "--csv".into(),
                "-".into(),
                "--markdown".into(),
                "-".into(),
            ],
            "--csv and --markdown both write to stdout",
        ),
        (
            vec![
                run_fixture().into(),
                "--png-dir".into(),
                run_fixture().into(),
            ],
            "is not a directory",
        ),
        (
            vec![
                run_fixture().into(),
                "--html".into(),
                d.join("newdir/").into(),
            ],
            "not a file name",
        ),
        (
            vec![
                run_fixture().into(),
                "--csv".into(),
                d.join("a.csv").into(),
                "--markdown".into(),
                d.join(".").join("a.csv").into(),
            ],
            "give each its own file",
        ),
    ];
    for (args, msg) in cases {
        let out = iopath().arg("report").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "nothing written");
}

#[test]
fn report_never_replaces_its_input_or_follows_a_planted_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    let d = dir.path();
    let input = d.join("in.json");
    std::fs::copy(run_fixture(), &input).unwrap();
    let out = iopath()
        .arg("report")
        .arg(&input)
        .arg("--markdown")
        .arg(d.join(".").join("in.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is the result being read"));
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(run_fixture()).unwrap()
    );

    // A link planted where a careless tool would put its temporary file,
    // and an existing report with its own permissions.
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    std::os::unix::fs::symlink(&victim, d.join(".r.md.tmp")).unwrap();
    std::fs::write(d.join("r.md"), "old").unwrap();
    std::fs::set_permissions(d.join("r.md"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = iopath()
        .arg("report")
        .arg(&input)
        .arg("--markdown")
        .arg(d.join("r.md"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    let meta = std::fs::symlink_metadata(d.join("r.md")).unwrap();
    assert!(meta.is_file(), "replaced by a regular file");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "permissions kept");
    assert!(std::fs::read_to_string(d.join("r.md"))
        .unwrap()
        .starts_with("## iopath"));
    let temps: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && n != ".r.md.tmp")
        .collect();
    assert!(temps.is_empty(), "temporary files left: {temps:?}");
}

#[test]
fn a_path_that_is_not_utf8_is_written_and_quoted_in_the_command() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch();
    let d = dir.path();
    let md = d.join(std::ffi::OsStr::from_bytes(b"r\xfe.md"));
    let out = iopath()
        .args(["run", "--dir"])
        .arg(d)
        .args([
            "--methods",
            "null",
            "--patterns",
            "randread",
            "--size",
            "1M",
            "--repeat",
            "1",
        ])
        .args(["--time", "10ms", "--quiet", "--json", "-", "--markdown"])
        .arg(&md)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::json_of(&out.stdout);
    assert!(
        v["command"].as_str().unwrap().contains(r"$'"),
        "{}",
        v["command"]
    );
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .starts_with("## iopath"));
}

#[test]
fn run_writes_reports_at_the_end_and_keeps_json_pure() {
    let dir = scratch();
    let d = dir.path();
    let out = iopath()
        .args(["run", "--dir"])
        .arg(d)
        .args([
            "--concurrency",
            "1",
            "--methods",
            "null",
            "--patterns",
            "randread,write",
            "--size",
            "1M",
            "--repeat",
            "2",
            "--time",
            "20ms",
            "--quiet",
            "--json",
            "-",
            "--html",
        ])
        .arg(d.join("r.html"))
        .arg("--csv")
        .arg(d.join("r.csv"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::json_of(&out.stdout);
    assert_eq!(v["cases"].as_array().unwrap().len(), 2);
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(html.contains("null"));
    let csv = std::fs::read_to_string(d.join("r.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2 * 2 + 1, "{csv}");
    // The same output asked twice on stdout is refused before running.
    let out = iopath()
        .args(["run", "--dir"])
        .arg(d)
        .args([
            "--concurrency",
            "1",
            "--methods",
            "null",
            "--json",
            "-",
            "--markdown",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--json and --markdown both write to stdout")
    );
}

/// A Chromium-family browser: `IOPATH_CHROMIUM`, or the usual names.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("IOPATH_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .find_map(|name| {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// Load `page` headless with no network and take a screenshot; returns
/// the console messages Chromium logged and the screenshot's path.
fn browse(browser: &Path, page: &Path, work: &Path) -> (Vec<String>, PathBuf) {
    let shot = work.join(format!(
        "{}.png",
        page.file_stem().unwrap().to_string_lossy()
    ));
    // Without network: a network namespace of its own where that works
    // (root), and in any case no name resolves and the proxy goes nowhere.
    let isolated = Process::new("unshare")
        .args(["--net", "true"])
        .status()
        .is_ok_and(|s| s.success());
    let mut cmd = if isolated {
        let mut c = Process::new("unshare");
        c.arg("--net").arg(browser);
        c
    } else {
        Process::new(browser)
    };
    let out = cmd
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--window-size=1280,3000",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the browser failed: {stderr}");
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (console, shot)
}

#[test]
fn html_report_renders_in_a_real_browser_offline_without_console_errors() {
    let Some(browser) = chromium() else {
        let msg = "chromium not found (apt-get install chromium, or set IOPATH_CHROMIUM); .ci/run installs it";
        if std::env::var_os("IOPATH_REQUIRE_CHROMIUM").is_some() {
            panic!("{msg}");
        }
        eprintln!("skipped: {msg}");
        return;
    };
    let dir = scratch();
    let d = dir.path();
    let page = d.join("report.html");
    let out = iopath()
        .arg("report")
        .arg(run_fixture())
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success());

    // The check can fail: a page that reaches for the network logs it.
    let bad = d.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'\"></head><body><img src=\"http://example.invalid/x.png\"></body></html>",
    )
    .unwrap();
    let (console, _) = browse(&browser, &bad, d);
    assert!(
        !console.is_empty(),
        "the console check sees nothing: it would pass anything"
    );

    let (console, shot) = browse(&browser, &page, d);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let (w, h, px) = decode_png(&shot);
    assert_eq!((w, h), (1280, 3000));
    let white = px.iter().filter(|p| p.iter().all(|&c| c >= 250)).count();
    assert!(
        white < px.len() * 97 / 100,
        "the screenshot is blank: {white} of {} pixels white",
        px.len()
    );
    // The charts were drawn: bar fills in each method's colour.
    for (m, rgb) in [
        ("buffered", [0x4e, 0x79, 0xa7]),
        ("direct", [0xf2, 0x8e, 0x2b]),
        ("uring", [0xe1, 0x57, 0x59]),
    ] {
        let n = px.iter().filter(|p| **p == rgb).count();
        assert!(n > 200, "{m}: {n} pixels of its colour in the screenshot");
    }
}

/// run.json changed by `edit`, written into `dir`: its path.
fn edited_fixture(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_fixture()).unwrap()).unwrap();
    edit(&mut v);
    let p = dir.join("edited.json");
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    p
}

fn case_index(v: &serde_json::Value, method: &str, pattern: &str) -> usize {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["method"] == method && c["pattern"] == pattern)
        .unwrap()
}

/// `iopath report FILE ARGS...`: its stdout.
fn report_stdout(file: &Path, args: &[&str]) -> String {
    // The whole terminal report (--explain): the tests read its tables,
    // notes and verdicts.
    let out = iopath()
        .arg("report")
        .arg(file)
        .arg("--explain")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The Markdown table row of `name` in the table of `pattern`, as cells.
fn md_row(md: &str, pattern: &str, name: &str) -> Vec<String> {
    let table = md
        .split(&format!("(`{pattern}`)"))
        .nth(1)
        .unwrap_or_else(|| panic!("no {pattern} table in {md}"));
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("| {name} |")))
        .unwrap_or_else(|| panic!("no {name} row in {table}"));
    line.trim_matches('|')
        .split(" | ")
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn a_second_arm_is_named_direct_2_in_every_output() {
    let dir = scratch();
    let file = edited_fixture(dir.path(), |v| {
        let i = case_index(v, "direct", "randread");
        let mut arm = v["cases"][i].clone();
        arm["arm"] = 2.into();
        v["cases"].as_array_mut().unwrap().insert(i + 1, arm);
    });
    let text = report_stdout(&file, &[]);
    let rows = |s: &str, name: &str| s.lines().filter(|l| l.contains(name)).count();
    assert!(rows(&text, "│ direct#2 ") >= 1, "{text}");
    assert!(
        rows(&text, "│ direct ") >= 3,
        "the first arm keeps its name: {text}"
    );

    let md = report_stdout(&file, &["--markdown", "-"]);
    assert_eq!(md_row(&md, "randread", "direct")[0], "direct");
    assert_eq!(md_row(&md, "randread", "direct#2")[0], "direct#2");

    let csv = report_stdout(&file, &["--csv", "-"]);
    let arm2 = csv
        .lines()
        .filter(|l| l.contains(",direct#2,randread,"))
        .count();
    let arm1 = csv
        .lines()
        .filter(|l| l.contains(",direct,randread,"))
        .count();
    assert_eq!((arm1, arm2), (5, 5), "every repetition of both arms: {csv}");

    let html_file = dir.path().join("r.html");
    report_stdout(&file, &["--html", html_file.to_str().unwrap()]);
    let html = std::fs::read_to_string(html_file).unwrap();
    assert!(html.contains("</span>direct#2</td>"), "table row");
    // Chart labels are `<text ...>` elements, their text on a line of its own.
    let svgs = inline_svgs(&html).join("\n");
    assert!(
        svgs.lines().any(|l| l.trim() == "direct#2"),
        "charts name the arm"
    );
}

#[test]
fn percentiles_with_too_few_requests_are_marked() {
    let dir = scratch();
    // 256 requests: enough for p50 (20), not for p99 (1,000) or p99.9.
    let file = edited_fixture(dir.path(), |v| {
        let i = case_index(v, "uring", "randread");
        v["cases"][i]["summary"]["lat_ns"]["count"] = 256.into();
        let j = case_index(v, "aio", "randread");
        v["cases"][j]["summary"]["lat_ns"]["count"] = 100_000.into();
    });
    let md = report_stdout(&file, &["--markdown", "-"]);
    // method, job, MiB/s, ±95%, n, IOPS, p50, p99
    let uring = md_row(&md, "randread", "uring");
    assert!(!uring[6].starts_with('~'), "p50 has enough: {uring:?}");
    assert!(uring[7].starts_with('~'), "p99 has too few: {uring:?}");
    let aio = md_row(&md, "randread", "aio");
    assert!(
        !aio[7].contains('~'),
        "100,000 requests are enough: {aio:?}"
    );
    // No count (schema 2): nothing is marked.
    let direct = md_row(&md, "randread", "direct");
    assert!(!direct[7].contains('~'), "{direct:?}");

    let uring = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("│ uring ") && l.contains("Q32T1"))
            .unwrap()
            .to_string()
    };
    let line = uring(&report_stdout(&file, &[]));
    assert_eq!(line.matches('~').count(), 2, "±95% (n=4), p99: {line}");
    let line = uring(&report_stdout(&file, &["--wide"]));
    assert_eq!(
        line.matches('~').count(),
        3,
        "±95% (n=4), p99, p99.9: {line}"
    );
}

#[test]
fn read_amplification_shows_as_a_ratio_in_the_device_column() {
    let dir = scratch();
    let file = edited_fixture(dir.path(), |v| {
        let i = case_index(v, "mmap", "randread");
        v["cases"][i]["summary"]["device_fraction"] = 1878.65.into();
    });
    let text = report_stdout(&file, &[]);
    assert!(text.contains("1879x"), "{text}");
    assert!(!text.contains("187865%"), "{text}");
    let md = report_stdout(&file, &["--markdown", "-"]);
    assert_eq!(md_row(&md, "randread", "mmap")[9], "1879x");
}

#[test]
fn an_interrupted_run_says_so_before_its_verdicts() {
    let dir = scratch();
    let file = edited_fixture(dir.path(), |v| {
        v["interrupted"] = true.into();
        let i = case_index(v, "aio", "write");
        let reps = v["cases"][i]["repetitions"].as_array_mut().unwrap();
        reps.last_mut().unwrap()["interrupted"] = true.into();
    });
    let caveat = "Interrupted (Ctrl-C or SIGTERM) during write 1M Q8T1: the verdicts cover \
                  the repetitions that finished before it; cut short (measured over the \
                  repetitions it completed): aio write 1M Q8T1";
    let text = report_stdout(&file, &[]);
    let first = text.find("verdict:\n").unwrap();
    // Wrapped to the report's width, with a hanging indent.
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text[first..].starts_with("verdict:\n  Interrupted (Ctrl-C or SIGTERM) during")
            && words(&text[first..]).starts_with(&format!("verdict: {caveat}")),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    let md = report_stdout(&file, &["--markdown", "-"]);
    let first = md.find("**Verdict:**").unwrap();
    assert!(md[first..].contains(caveat), "{md}");
    let html_file = dir.path().join("r.html");
    report_stdout(&file, &["--html", html_file.to_str().unwrap()]);
    let html = std::fs::read_to_string(html_file).unwrap();
    let verdicts = html.find("<h2>Verdicts</h2>").unwrap();
    assert!(html[verdicts..].contains(caveat));

    // A run that finished has no caveat.
    let text = report_stdout(&run_fixture(), &[]);
    assert!(!text.contains("Interrupted"), "{text}");
}

/// Issue 18 (output): every line of the terminal report keeps to 120
/// columns, --wide's tables alone excepted: a preset's grid with long
/// labels and sources, long notes, verdicts, an interrupted run's caveat
/// and "not run" lines; each note and "not run" line names its cases
/// (method and job), and a reason shared by many cases is said once.
#[test]
fn every_line_of_the_report_keeps_to_120_columns() {
    let dir = scratch();
    let file = edited_fixture(dir.path(), |v| {
        v["interrupted"] = true.into();
        v["config"]["preset"] = "glommio-scan".into();
        let n = v["cases"].as_array().unwrap().len();
        for i in 0..n {
            let c = &mut v["cases"][i];
            c["label"] = format!(
                "a label as long as a preset's, case {i}, 512 KiB, 5 in flight, registered buffers"
            )
            .into();
            c["published"] = serde_json::json!({
                "value": 945.0,
                "unit": "MB/s",
                "on": "Intel Optane, 53 GB file, 2.5x RAM, polled completions, in an article's own words"
            });
            c["notes"]
                .as_array_mut()
                .unwrap()
                .push("a note of the run, which on its own is longer than the width of one terminal line of one hundred and twenty columns".into());
            if c["pattern"] == "write" {
                c["skipped"] =
                    "the run was interrupted (Ctrl-C or SIGTERM) before this case".into();
                c["summary"] = serde_json::Value::Null;
                c["repetitions"] = serde_json::json!([]);
            }
        }
    });
    let text = report_stdout(&file, &[]);
    assert!(text.contains("beside the source"), "{text}");
    let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 120).collect();
    assert!(long.is_empty(), "{long:#?}\n{text}");
    // Hanging indents: a continued note or verdict line is indented
    // deeper than the line it continues.
    assert!(text.contains("\n    "), "{text}");
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = words(&text);
    // Notes name the case (method and job), once for all the cases.
    assert!(
        flat.contains("- buffered 1M Q1T1 (a label as long as a preset's, case 0,"),
        "{text}"
    );
    // The reason for never-reached cases, once, with their count.
    assert_eq!(flat.matches("before this case").count(), 1, "{text}");
    assert!(
        flat.contains("(6 cases): the run was interrupted"),
        "{text}"
    );
    assert!(
        flat.contains("sequential write (write): not reached before the interruption (6 cases"),
        "{text}"
    );

    let wide = report_stdout(&file, &["--wide"]);
    assert!(wide.lines().any(|l| l.chars().count() > 120), "{wide}");
    let long: Vec<&str> = wide
        .lines()
        .filter(|l| !l.starts_with(['┌', '│', '╞', '├', '└']))
        .filter(|l| l.chars().count() > 120)
        .collect();
    assert!(long.is_empty(), "{long:#?}");
}

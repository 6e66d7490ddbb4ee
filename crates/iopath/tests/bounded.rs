//! Bounded, predictable runs and time that means time (issue 18): the
//! estimate printed before any I/O, `--case-timeout` stopping a case part-way
//! with its extrapolated time marked as such, sequential cases that wrap
//! around the file (or say why they cannot), and verdicts from presets whose
//! variants differ by more than their method. No timing assertions beyond
//! "a 4 KiB O_DIRECT read at depth 1 of 64 MiB takes more than 50 ms".

use serde_json::Value;

mod common;
use common::*;

/// `iopath run --dir DIR ARGS --json -` (not quiet): stderr and the JSON.
fn run(dir: &std::path::Path, args: &[&str]) -> (String, Value) {
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir)
        .args(args)
        .args(["--json", "-"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    (err, json_of(&out.stdout))
}

#[test]
fn every_run_says_how_long_it_will_take_before_any_io() {
    let dir = scratch();
    let (err, v) = run(
        dir.path(),
        &[
            "--methods",
            "direct,buffered",
            "--patterns",
            "randread",
            "--size",
            "8M",
            "--time",
            "50ms",
            "--repeat",
            "2",
        ],
    );
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("iopath: estimated duration: about ")
            && first.contains("(4 cases; 2 repetitions of up to 50ms each)"),
        "{err}"
    );
    // The line comes first: before the target is made and filled.
    assert!(
        err.find("estimated duration") < err.find("target:").or(Some(usize::MAX)),
        "{err}"
    );
    assert!(v["config"]["estimated_ns"].as_u64().unwrap() > 200_000_000);
    // --quiet: nothing at all.
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--methods",
            "direct",
            "--patterns",
            "randread",
            "--size",
            "8M",
        ])
        .args(["--time", "20ms", "--repeat", "1", "--quiet", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_case_timeout_keeps_what_it_measured_and_marks_the_extrapolated_time() {
    let dir = scratch();
    // One pass of 64 MiB in 4 KiB O_DIRECT reads, one at a time: seconds
    // on any disk; the case timeout stops it after 50 ms.
    let args = [
        "--methods",
        "direct",
        "--patterns",
        "read",
        "--bs",
        "4k",
        "--size",
        "64M",
        "--io-size",
        "64M",
        "--repeat",
        "3",
        "--case-timeout",
        "50ms",
    ];
    let (err, v) = run(dir.path(), &args);
    assert!(
        err.contains("each case capped at 50ms (--case-timeout)"),
        "{err}"
    );
    assert_eq!(v["config"]["case_timeout_ns"], 50_000_000);
    let c = case(&v, "direct", "read");
    assert_eq!(c["repetition_control"]["stopped_by"], "case_timeout", "{c}");
    let reps = c["repetitions"].as_array().unwrap();
    assert_eq!(reps.len(), 1, "the case stops at its cap: {c}");
    let r = &reps[0];
    let capped = &r["capped"];
    let fraction = capped["fraction_done"].as_f64().unwrap();
    assert!(fraction > 0.0 && fraction < 1.0, "{r}");
    // The share is the bytes done over the bytes of a whole pass.
    let done = r["io_bytes"].as_f64().unwrap() / (64u64 << 20) as f64;
    assert!((fraction - done).abs() < 1e-9, "{fraction} vs {done}");
    let d = r["duration_ns"].as_f64().unwrap();
    let x = capped["extrapolated_ns"].as_f64().unwrap();
    assert!((x - d / fraction).abs() <= 1.0, "{x} vs {d}/{fraction}");
    assert_eq!(capped["case_timeout_ns"], 50_000_000);
    // The summary is that repetition, marked too.
    assert_eq!(c["summary"]["capped"], *capped);
    // The case's note, as a fact: repetition 1 cut by the 50 ms cap, with
    // the share done and the extrapolation of the result.
    let cut = c["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "timeout_cut")
        .unwrap_or_else(|| panic!("{}", c["facts"]));
    assert_eq!(cut["repetition"], 1);
    assert_eq!(cut["case_timeout_ns"], 50_000_000);
    assert_eq!(cut["fraction_done"], capped["fraction_done"]);
    assert_eq!(cut["extrapolated_ns"], capped["extrapolated_ns"]);
    // The verdict-less table says it in words, with "extrapolated" (a
    // note under the table: --explain).
    let out = iopath()
        .args(["run", "--explain", "--dir"])
        .arg(dir.path())
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // Wrapped to 120 columns: compare words.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("--case-timeout 50ms stopped repetition 1 part-way")
            && flat.contains("the whole repetition extrapolated to ~"),
        "{text}"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn sequential_cases_wrap_unless_their_method_caches_and_say_which() {
    let dir = scratch();
    let (_, v) = run(
        dir.path(),
        &[
            "--methods",
            "direct,buffered",
            "--patterns",
            "read",
            "--size",
            "8M",
            "--time",
            "500ms",
            "--repeat",
            "1",
        ],
    );
    // direct does not cache: its repetition ran its 500 ms, pass after pass.
    let direct = case(&v, "direct", "read");
    assert_eq!(direct["passes"]["kind"], "wrapped", "{direct}");
    assert!(direct["passes"]["passes"].as_f64().unwrap() > 1.0);
    assert!(direct["summary"]["io_bytes"].as_u64().unwrap() > 8 << 20);
    assert!(direct["summary"]["duration_ns"].as_u64().unwrap() >= 500_000_000);
    assert!(direct["notes"].as_array().unwrap().iter().any(|n| n
        .as_str()
        .unwrap()
        .starts_with("ran the whole --time 500ms")));
    // buffered caches: one pass, and how to make it last.
    let buffered = case(&v, "buffered", "read");
    assert_eq!(buffered["summary"]["io_bytes"], 8 << 20, "{buffered}");
    assert_eq!(buffered["passes"]["kind"], "one_pass", "{buffered}");
    let size = buffered["passes"]["suggested_size_bytes"].as_u64().unwrap();
    assert!(size >= 16 << 20 && size.is_power_of_two(), "{size}");
    assert!(buffered["notes"].as_array().unwrap().iter().any(|n| n
        .as_str()
        .unwrap()
        .starts_with("capped at one pass")
        && n.as_str().unwrap().contains("give --size")));
}

#[test]
fn glommio_scan_judges_its_ways_to_scan_in_one_verdict() {
    let dir = scratch();
    let (_, v) = run(
        dir.path(),
        &["--preset", "glommio-scan", "--size", "4M", "--quiet"],
    );
    // Its own 8 rounds, paired: the verdict over every variant that ran.
    assert_eq!(v["config"]["repeat"], 8);
    let verdicts = v["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 1, "{verdicts:#?}");
    let vd = &verdicts[0];
    assert_eq!(vd["group"], "ways to scan");
    assert!(vd["paired"].as_bool().unwrap());
    let ran = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["skipped"].is_null())
        .count();
    assert_eq!(vd["ranking"].as_array().unwrap().len(), ran);
    assert!(vd["text"][0]
        .as_str()
        .unwrap()
        .starts_with("read, ways to scan: "));
    // Every variant took its turn in every round.
    for c in v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["skipped"].is_null())
    {
        let rounds: Vec<u64> = c["repetitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["round"].as_u64().unwrap())
            .collect();
        assert_eq!(rounds.len(), 8, "{c}");
    }
}

#[test]
fn presets_with_several_variants_get_verdicts() {
    // daxbench, glommio-random and crystal at a tiny size: a verdict for
    // each group of variants, and enough rounds behind it to make a call
    // (no "no call yet" for want of repetitions). daxbench's writes: mmap
    // and buffered write 4 MiB with the flush timed (`--sync end`), which
    // the device moved: ranked beside direct, a write verdict
    // (docs/methodology.md, "The device apart from memory").
    // glommio-random at 64 MiB: over 4 MiB the whole-file buffered case is
    // served from the page cache after its first pass (device ~7%) and is
    // set apart from a cold-cache ranking, which leaves that group one
    // ranked method and no verdict (tests/served.rs covers that case).
    let dir = scratch();
    for (preset, size, verdicts) in [
        ("daxbench", "4M", 2),
        ("glommio-random", "64M", 2),
        ("crystal", "4M", 4),
    ] {
        let (_, v) = run(
            dir.path(),
            &[
                "--preset", preset, "--size", size, "--time", "20ms", "--quiet",
            ],
        );
        let vs = v["verdicts"].as_array().unwrap();
        assert_eq!(vs.len(), verdicts, "{preset}: {vs:#?}");
        for vd in vs {
            let rounds = vd["ranking"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["n"].as_u64().unwrap())
                .min()
                .unwrap();
            let methods = vd["ranking"].as_array().unwrap().len();
            let needed = if methods <= 2 { 6 } else { 7 };
            assert!(rounds >= needed, "{preset}: {vd}");
            let text = vd["text"].as_array().unwrap();
            assert!(
                !text.iter().any(|t| t.as_str().unwrap().contains("too few")),
                "{preset}: {text:?}"
            );
        }
    }
}

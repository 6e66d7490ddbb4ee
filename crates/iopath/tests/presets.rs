//! Presets and the copy pattern from the command line: `iopath presets`
//! and `presets show` (snapshots), every preset end to end at a tiny size,
//! what flags may and may not change, the copy methods, daxbench's mapping
//! note and the preset grids under the tables. No timing assertions.

use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;

mod common;
use common::*;

/// Every preset, in the order `iopath presets` lists them, with its number
/// of cases.
const PRESETS: [(&str, usize); 6] = [
    ("niobench", 15),
    ("daxbench", 8),
    ("glommio-scan", 6),
    ("glommio-random", 4),
    ("crystal", 8),
    ("crystal-nvme", 8),
];

/// Every preset, as `iopath presets` lists them; `numa` (whose cases depend
/// on the machine's NUMA nodes) is tested in tests/placement.rs, `hmmap`
/// (16 threads, a memory cgroup) below; `cache-pollution` and `dontcache`
/// (a memory cgroup, minutes at their size) are run by hand
/// (docs/methods.md, "Measured here").
const ALL: [&str; 10] = [
    "niobench",
    "daxbench",
    "glommio-scan",
    "glommio-random",
    "crystal",
    "crystal-nvme",
    "numa",
    "hmmap",
    "cache-pollution",
    "dontcache",
];

const MIB: u64 = 1 << 20;

/// The copy methods, as the copy pattern's messages name them.
const COPY_METHODS: [&str; 6] = [
    "buffered",
    "direct",
    "mmap",
    "uring",
    "copy-file-range",
    "sendfile",
];

fn stdout_of(args: &[&str]) -> String {
    let out = iopath().args(args).assert().success().get_output().clone();
    String::from_utf8(out.stdout).unwrap()
}

/// `iopath presets show NAME`.
fn show(name: &str) -> String {
    stdout_of(&["presets", "show", name])
}

/// The rows of the first table after the line that starts with `title`
/// (the header left out), each as its trimmed cells.
fn table_rows(text: &str, title: &str) -> Vec<Vec<String>> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with(title))
        .skip(1)
        .skip_while(|l| !l.starts_with('╞'))
        .skip(1);
    let mut rows = Vec::new();
    for l in lines.by_ref() {
        if l.starts_with('└') {
            return rows;
        }
        assert!(l.starts_with('│'), "not a table row: {l}\n{text}");
        let cells: Vec<String> = l
            .trim_matches('│')
            .split('┆')
            .map(|c| c.trim().to_string())
            .collect();
        // A row wrapped to the report's width goes on in lines with an
        // empty first or second cell (never empty in a row of these
        // tables: a number or label, then a method or figure): its cells
        // continue the row's.
        match rows.last_mut() {
            Some(row) if cells[0].is_empty() || cells.get(1).is_some_and(|c| c.is_empty()) => {
                for (cell, more) in row.iter_mut().zip(cells) {
                    if !more.is_empty() {
                        if !cell.is_empty() {
                            cell.push(' ');
                        }
                        cell.push_str(&more);
                    }
                }
            }
            _ => rows.push(cells),
        }
    }
    panic!("no table after '{title}' in:\n{text}");
}

/// The case table of `presets show NAME`: #, label, method, pattern, bs,
/// QD, threads, sync, span, cache, other, published.
fn show_rows(text: &str) -> Vec<Vec<String>> {
    table_rows(text, "run settings")
}

/// What `--span 10%ram` comes to here, as `presets show` writes it
/// (`units::fmt_bytes` of 10% of MemTotal).
fn ten_percent_of_ram() -> String {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("MemTotal in /proc/meminfo");
    let b = ((kb * 1024) as f64 * 10.0 / 100.0) as u64;
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let (mut v, mut i) = (b as f64, 0);
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else if v.fract() == 0.0 {
        format!("{v:.0} {}", units[i])
    } else {
        format!("{v:.1} {}", units[i])
    }
}

/// `text` with every cell of the column headed `header` (in the first
/// table that has one) that reads `value` replaced by `with`, the column
/// re-padded so that the table keeps its shape whatever `value`'s width:
/// a snapshot that does not depend on the machine.
fn replace_in_column(text: &str, header: &str, value: &str, with: &str) -> String {
    let lines: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
    let needle: Vec<char> = format!("┆ {header} ").chars().collect();
    let h = lines
        .iter()
        .position(|l| l.windows(needle.len()).any(|w| w == needle))
        .unwrap_or_else(|| panic!("no column '{header}' in:\n{text}"));
    let head = &lines[h];
    // The separator before the header.
    let left = head
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap();
    let right = (left + 1..head.len())
        .find(|&i| matches!(head[i], '┆' | '│'))
        .unwrap();
    let top = (0..h)
        .rev()
        .find(|&i| lines[i].first() == Some(&'┌'))
        .unwrap();
    let bottom = (h..lines.len())
        .find(|&i| lines[i].first() == Some(&'└'))
        .unwrap();
    let cell = |l: &[char]| -> String {
        let c: String = l[left + 1..right].iter().collect();
        let c = c.trim();
        if c == value {
            with.to_string()
        } else {
            c.to_string()
        }
    };
    let is_row = |l: &[char]| l.first() == Some(&'│');
    let width = (top..=bottom)
        .filter(|&i| is_row(&lines[i]))
        .map(|i| cell(&lines[i]).chars().count())
        .max()
        .unwrap();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let mut s: String = l.iter().collect();
        if (top..=bottom).contains(&i) {
            let middle = if is_row(l) {
                format!(" {:width$} ", cell(l))
            } else {
                l[left + 1].to_string().repeat(width + 2)
            };
            s = format!(
                "{}{middle}{}",
                l[..=left].iter().collect::<String>(),
                l[right..].iter().collect::<String>()
            );
        }
        out.push(s);
    }
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// `iopath run --preset NAME --dir DIR --size 4M --repeat 1 --time 20ms
/// --json - --quiet`: the JSON, after checking what every preset run
/// promises: the preset named in the config, every case labelled and
/// measured once or skipped with a reason, none failed, no file left.
fn run_preset(dir: &Path, name: &str) -> Value {
    let v = run_json(dir, &["--preset", name, "--size", "4M", "--time", "20ms"]);
    assert_eq!(v["config"]["preset"], name);
    assert_eq!(v["config"]["repeat"], 1, "{name}");
    assert_eq!(v["target"]["size_bytes"], 4 * MIB, "{name}");
    for c in v["cases"].as_array().unwrap() {
        let id = format!("{name} {}/{}", c["method"], c["pattern"]);
        assert!(
            c["label"].as_str().is_some_and(|l| !l.is_empty()),
            "{id}: no label"
        );
        assert!(c["error"].is_null(), "{id} failed: {}", c["error"]);
        match c["skipped"].as_str() {
            Some(why) => {
                assert!(!why.is_empty(), "{id}: skipped without a reason");
                assert!(c["summary"].is_null(), "{id}");
            }
            None => {
                assert_eq!(c["repetition_control"]["measured"], 1, "{id}");
                assert!(c["summary"]["ios"].as_u64().unwrap() > 0, "{id}");
            }
        }
    }
    assert!(
        leftovers(dir).is_empty(),
        "{name} left {:?}",
        leftovers(dir)
    );
    v
}

fn cases(v: &Value) -> &Vec<Value> {
    v["cases"].as_array().unwrap()
}

fn measured(c: &Value) -> bool {
    c["skipped"].is_null() && c["error"].is_null()
}

// ---------------------------------------------------------------------------
// iopath presets, presets show

#[test]
fn presets_lists_every_preset_on_one_line_with_its_summary() {
    let list = stdout_of(&["presets"]);
    let width = ALL.iter().map(|n| n.len()).max().unwrap();
    // A summary wider than 120 columns goes on under itself (issue 18):
    // one entry per preset, its continuation lines joined.
    let mut entries: Vec<String> = Vec::new();
    for l in list.lines() {
        match (l.strip_prefix(&" ".repeat(width + 2)), entries.last_mut()) {
            (Some(more), Some(e)) if !more.starts_with(' ') => {
                e.push(' ');
                e.push_str(more);
            }
            _ => entries.push(l.to_string()),
        }
    }
    assert!(list.lines().all(|l| l.chars().count() <= 120), "{list}");
    let lines: Vec<&str> = entries.iter().map(String::as_str).collect();
    for (i, name) in ALL.iter().enumerate() {
        // `show` starts with `NAME: SUMMARY` (wrapped like the list); the
        // list gives the same summary, one entry per preset, in order.
        let shown = show(name);
        let head = shown.split("\nsource: ").next().unwrap();
        let first = head.split_whitespace().collect::<Vec<_>>().join(" ");
        let summary = first.strip_prefix(&format!("{name}: ")).unwrap();
        assert_eq!(lines[i], format!("{name:width$}  {summary}"), "{list}");
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.split_whitespace().next() == Some(name))
                .count(),
            1,
            "{name} once: {list}"
        );
    }
    assert_eq!(lines[ALL.len()], "", "{list}");
    assert!(
        list.contains("iopath run --preset NAME") && list.contains("iopath presets show NAME"),
        "{list}"
    );
}

#[test]
fn presets_show_gives_the_cases_settings_and_source_of_each() {
    let ram = ten_percent_of_ram();
    for (name, n) in PRESETS {
        let mut text = show(name);
        let rows = show_rows(&text);
        assert_eq!(rows.len(), n, "{name}:\n{text}");
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r[0], (i + 1).to_string(), "{name}");
            assert!(!r[1].is_empty(), "{name}: case {} has no label", i + 1);
        }
        assert!(
            text.ends_with(&format!("\nrun it: iopath run --preset {name}\n")),
            "{text}"
        );
        // Every line fits 120 columns, the case table's too: its long
        // cells wrap (issue 18, fix item 6).
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest <= 120, "{name}: {widest} columns:\n{text}");
        if name == "glommio-random" {
            // 10% of this machine's RAM: the first two cases, not the
            // whole-file ones. The snapshot holds a placeholder.
            let spans: Vec<&str> = rows.iter().map(|r| r[8].as_str()).collect();
            assert_eq!(spans, [ram.as_str(), &ram, "file", "file"], "{text}");
            text = replace_in_column(&text, "span", &ram, "<10% of RAM>");
            assert_eq!(
                show_rows(&text)
                    .iter()
                    .map(|r| r[8].as_str())
                    .collect::<Vec<_>>(),
                ["<10% of RAM>", "<10% of RAM>", "file", "file"]
            );
        }
        insta::assert_snapshot!(format!("show_{name}"), text);
    }
}

#[test]
fn replace_in_column_keeps_the_table_aligned() {
    let t = "x\n┌───┬───────┬───┐\n│ a ┆ span  ┆ b │\n╞═══╪═══════╪═══╡\n│ 1 ┆ 2 GiB ┆ c │\n│ 2 ┆ file  ┆ d │\n└───┴───────┴───┘\n";
    let r = replace_in_column(t, "span", "2 GiB", "<10% of RAM>");
    assert_eq!(
        r,
        "x\n┌───┬──────────────┬───┐\n│ a ┆ span         ┆ b │\n╞═══╪══════════════╪═══╡\n│ 1 ┆ <10% of RAM> ┆ c │\n│ 2 ┆ file         ┆ d │\n└───┴──────────────┴───┘\n"
    );
}

#[test]
fn an_unknown_preset_is_a_usage_error_listing_the_presets() {
    let names = |s: &str| ALL.iter().all(|n| s.contains(n));
    iopath()
        .args(["presets", "show", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown preset 'nope'").and(predicate::function(names)));
    let dir = scratch();
    iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--preset", "nope", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown preset 'nope'").and(predicate::function(names)));
    assert!(leftovers(dir.path()).is_empty());
}

// ---------------------------------------------------------------------------
// Every preset end to end

#[test]
fn every_preset_runs_end_to_end_at_a_tiny_size() {
    let dir = scratch();
    for (name, n) in PRESETS {
        let v = run_preset(dir.path(), name);
        let cs = cases(&v);
        assert_eq!(cs.len(), n, "{name}");
        // The cases are those `presets show` lists, in its order.
        let rows = show_rows(&show(name));
        assert_eq!(rows.len(), cs.len(), "{name}");
        for (c, r) in cs.iter().zip(&rows) {
            let id = format!("{name} case {}", r[0]);
            assert_eq!(c["label"], r[1].as_str(), "{id}");
            assert_eq!(c["method"], r[2].as_str(), "{id}");
            assert_eq!(c["pattern"], r[3].as_str(), "{id}");
            assert_eq!(c["queue_depth_requested"].to_string(), r[5], "{id}");
            assert_eq!(c["threads"].to_string(), r[6], "{id}");
            assert_eq!(c["sync"], r[7].as_str(), "{id}");
            // A span is capped at the 4 MiB file.
            if r[8] == "file" {
                assert!(c.get("span_bytes").is_none(), "{id}: {c}");
            } else {
                assert_eq!(c["span_bytes"], 4 * MIB, "{id}");
            }
            let other = &r[10];
            assert_eq!(
                c["copy_to_user"] == true,
                other.contains("copy to a user buffer"),
                "{id}"
            );
            assert_eq!(c["sparse"] == true, other.contains("sparse file"), "{id}");
            let cache = if r[9] == "cold" {
                Value::Null
            } else {
                r[9].as_str().into()
            };
            assert_eq!(c["cache"], cache, "{id}");
            assert_eq!(c.get("published").is_some(), !r[11].is_empty(), "{id}");
        }
        // What can only be skipped here is what the machine lacks.
        for c in cs.iter().filter(|c| !measured(c)) {
            assert!(
                ["uring-iopoll", "mmap-dax"].contains(&c["method"].as_str().unwrap()),
                "{name}: {}/{} skipped: {}",
                c["method"],
                c["pattern"],
                c["skipped"]
            );
        }
        match name {
            "niobench" => {
                let modes: Vec<&str> = cs.iter().map(|c| c["label"].as_str().unwrap()).collect();
                for mode in [
                    "unbuffered native",
                    "asynchronous",
                    "sync write+copy",
                    "sync write",
                    "sync+sparse",
                ] {
                    let of_mode: Vec<&Value> = cs.iter().filter(|c| c["label"] == mode).collect();
                    let ops: Vec<&str> = of_mode
                        .iter()
                        .map(|c| c["pattern"].as_str().unwrap())
                        .collect();
                    assert_eq!(ops, ["read", "write", "copy"], "{mode}: {modes:?}");
                    assert!(of_mode.iter().all(|c| measured(c)), "{mode}");
                }
                // A copy moves the whole file, once.
                for c in cs.iter().filter(|c| c["pattern"] == "copy") {
                    assert_eq!(c["summary"]["read_bytes"], 4 * MIB, "{c}");
                }
                let asynchronous = cs.iter().filter(|c| c["label"] == "asynchronous");
                assert!(asynchronous.clone().all(|c| c["cache"] == "as-is"));
                assert!(asynchronous.clone().all(|c| c["sync"] == "none"));
            }
            "crystal-nvme" => {
                let t16: Vec<&Value> = cs.iter().filter(|c| c["threads"] == 16).collect();
                assert_eq!(t16.len(), 2);
                assert!(t16
                    .iter()
                    .all(|c| c["label"] == "RND4K Q32T16" && measured(c)));
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------
// What flags may change

#[test]
fn run_settings_override_a_preset() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--preset", "crystal", "--size", "2M", "--repeat", "2", "--time", "20ms",
        ],
    );
    assert_eq!(v["config"]["preset"], "crystal");
    assert_eq!(v["config"]["repeat"], 2);
    assert_eq!(v["config"]["time_limit_ns"], 20_000_000);
    assert_eq!(v["target"]["size_bytes"], 2 * MIB);
    assert_eq!(v["target"]["file_bytes"], 2 * MIB);
    assert_eq!(cases(&v).len(), 8);
    for c in cases(&v) {
        assert!(measured(c), "{c}");
        let rc = &c["repetition_control"];
        assert_eq!(rc["measured"], 2, "{}: {rc}", c["label"]);
        assert_eq!(rc["stopped_by"], "fixed");
        assert_eq!(c["repetitions"].as_array().unwrap().len(), 2);
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn flags_that_say_what_the_cases_are_are_refused_with_a_preset() {
    let dir = scratch();
    for (flag, value) in [
        ("methods", "buffered"),
        ("patterns", "read"),
        ("bs", "4k"),
        ("qd", "4"),
        ("threads", "2"),
        ("span", "1M"),
        ("sync", "none"),
        ("rwmix", "70"),
    ] {
        iopath()
            .args(["run", "--dir"])
            .arg(dir.path())
            .args(["--preset", "crystal", "--size", "2M", "--quiet"])
            .arg(format!("--{flag}"))
            .arg(value)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(format!("--{flag} cannot change them"))
                    .and(predicate::str::contains("`iopath presets show crystal`")),
            );
    }
    // A size that leaves no room for the preset's largest block.
    iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--preset", "crystal", "--size", "512k", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--size"));
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn an_adaptive_flag_overrides_the_preset_repeat() {
    let dir = scratch();
    for adaptive in [["--ci-target", "5%"], ["--max-time", "100ms"]] {
        let mut args = vec![
            "--preset",
            "glommio-random",
            "--size",
            "4M",
            "--time",
            "10ms",
        ];
        args.extend(adaptive);
        let v = run_json(dir.path(), &args);
        assert!(
            v["config"]["repeat"].is_null(),
            "{adaptive:?}: {}",
            v["config"]
        );
        if adaptive[0] == "--ci-target" {
            assert_eq!(v["config"]["ci_target"], 0.05);
        } else {
            assert_eq!(v["config"]["max_time_ns"], 100_000_000);
        }
        for c in cases(&v) {
            assert!(measured(c), "{c}");
            let rc = &c["repetition_control"];
            assert!(
                ["ci_target", "max_time"].contains(&rc["stopped_by"].as_str().unwrap()),
                "{adaptive:?}: {rc}"
            );
        }
    }
    assert!(leftovers(dir.path()).is_empty());
}

// ---------------------------------------------------------------------------
// The copy pattern outside presets

#[test]
fn copy_pattern_measures_every_copy_method_and_skips_the_others() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--patterns",
            "copy",
            "--methods",
            "buffered,direct,mmap,uring,copy-file-range,sendfile,aio",
            "--size",
            "3M",
        ],
    );
    assert_eq!(cases(&v).len(), 7);
    for m in COPY_METHODS {
        let c = case(&v, m, "copy");
        assert!(measured(c), "{m}: {c}");
        let s = &c["summary"];
        // read_bytes are the bytes copied: the whole file.
        assert_eq!(s["read_bytes"], 3 * MIB, "{m}: {s}");
        assert_eq!(s["io_bytes"], 3 * MIB, "{m}: {s}");
        assert!(s["ios"].as_u64().unwrap() > 0, "{m}");
    }
    let aio = case(&v, "aio", "copy");
    let why = aio["skipped"].as_str().unwrap_or_else(|| panic!("{aio}"));
    for m in COPY_METHODS {
        assert!(why.contains(m), "{why}");
    }
    assert!(aio["error"].is_null());
    // The destinations (iopath-<pid>-copy-*.dat) are gone with the file.
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn copy_only_methods_are_skipped_for_other_patterns() {
    let dir = scratch();
    // Nothing else runs: a run that measured nothing fails (exit 1), and
    // keeps its result.
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--patterns",
            "read",
            "--methods",
            "copy-file-range,sendfile",
            "--size",
            "1M",
            "--repeat",
            "1",
            "--json",
            "-",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    for m in ["copy-file-range", "sendfile"] {
        let c = case(&v, m, "read");
        let why = c["skipped"].as_str().unwrap_or_else(|| panic!("{c}"));
        assert!(why.contains("only copies"), "{why}");
        assert!(why.contains("copy pattern"), "{why}");
        assert!(c["error"].is_null());
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn copy_says_what_it_does_not_honour() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--patterns",
            "copy",
            "--methods",
            "buffered",
            "--threads",
            "2",
            "--size",
            "2M",
            "--io-size",
            "1M",
        ],
    );
    let c = case(&v, "buffered", "copy");
    // The case's notes as facts: one thread copies (of the 2 asked), and
    // the whole file (--io-size does not apply).
    let facts = c["facts"].as_array().unwrap();
    assert!(
        facts.contains(&serde_json::json!({"code": "copy_one_thread", "threads": 2})),
        "{facts:?}"
    );
    assert!(
        facts.contains(&serde_json::json!({"code": "copy_whole", "span": false})),
        "{facts:?}"
    );
    assert_eq!(
        c["summary"]["read_bytes"],
        2 << 20,
        "the whole file is copied"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn whole_pass_presets_read_and_write_the_whole_file_every_iteration() {
    let dir = scratch();
    let out = iopath()
        .args(["run", "--preset", "niobench", "--dir"])
        .arg(dir.path())
        .args(["--size", "4M", "--repeat", "1", "--json", "-", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    assert!(v["config"]["time_limit_ns"].is_null(), "{}", v["config"]);
    for c in cases(&v) {
        assert_eq!(
            c["summary"]["io_bytes"],
            4 << 20,
            "{} {}",
            c["label"],
            c["pattern"]
        );
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_span_capped_at_the_file_says_so_and_copy_defaults_to_the_copy_methods() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--patterns",
            "randread,copy",
            "--methods",
            "buffered",
            "--span",
            "1G",
            "--size",
            "2M",
        ],
    );
    let c = case(&v, "buffered", "randread");
    assert_eq!(c["span_bytes"], 2 << 20);
    assert!(c["notes"].to_string().contains("capped at the file"), "{c}");
    let v = run_json(dir.path(), &["--patterns", "copy", "--size", "1M"]);
    let methods: Vec<&str> = cases(&v)
        .iter()
        .map(|c| c["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "buffered",
            "direct",
            "mmap",
            "uring",
            "copy-file-range",
            "sendfile"
        ]
    );
    assert!(leftovers(dir.path()).is_empty());
}

/// Ctrl-C in the middle of a copy case ends it after the chunk in hand:
/// exit 130, the results so far kept, the destination and the test file
/// removed.
#[test]
fn ctrl_c_during_a_copy_stops_it_and_cleans_up() {
    let dir = scratch();
    let json = dir.path().join("r.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args(["run", "--dir"])
        .arg(dir.path())
        .args([
            "--patterns",
            "copy",
            "--methods",
            "buffered",
            "--sync",
            "each",
            "--bs",
            "4k",
            "--size",
            "64M",
            "--repeat",
            "200",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the copy is under way: its destination exists.
    let started = std::time::Instant::now();
    let copying = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().contains("-copy-"))
    };
    while !copying() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no copy started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    let c = &v["cases"][0];
    let reps = c["repetitions"].as_array().map_or(0, |r| r.len());
    assert!(
        reps < 200,
        "the case went on after Ctrl-C: {reps} repetitions"
    );
    assert!(
        c["skipped"]
            .as_str()
            .is_some_and(|s| s.contains("interrupted"))
            || c["notes"].to_string().contains("interrupted"),
        "{c}"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

// ---------------------------------------------------------------------------
// daxbench: the mapping

/// fd, length, start, last byte of a `mapping: fd ...` note.
fn parse_mapping(note: &str) -> (u32, u64, u64, u64) {
    let rest = note.strip_prefix("mapping: fd ").unwrap();
    let parts: Vec<&str> = rest.split(", ").collect();
    assert_eq!(parts.len(), 4, "{note}");
    let hex = |s: &str, prefix: &str| {
        let h = s
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("'{s}' lacks '{prefix}': {note}"));
        let h = h.split(' ').next().unwrap();
        u64::from_str_radix(h, 16).unwrap_or_else(|e| panic!("{h}: {e}: {note}"))
    };
    (
        parts[0]
            .parse()
            .unwrap_or_else(|e| panic!("fd: {e}: {note}")),
        hex(parts[1], "length 0x"),
        hex(parts[2], "start 0x"),
        hex(parts[3], "last byte 0x"),
    )
}

#[test]
fn daxbench_prints_the_mapping_and_explains_mmap_dax() {
    let dir = scratch();
    let v = run_preset(dir.path(), "daxbench");
    for c in cases(&v) {
        let m = c["method"].as_str().unwrap();
        let mapping: Vec<&str> = c["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .filter(|n| n.starts_with("mapping: fd "))
            .collect();
        match m {
            "mmap" => {
                assert!(measured(c), "{c}");
                assert_eq!(mapping.len(), 1, "{m}/{}: {:?}", c["pattern"], c["notes"]);
                let (fd, len, start, last) = parse_mapping(mapping[0]);
                assert!(fd > 2, "{}", mapping[0]);
                // The whole file is mapped.
                assert_eq!(len, 4 * MIB, "{}", mapping[0]);
                assert!(start < last, "{}", mapping[0]);
                assert_eq!(last - start + 1, len, "{}", mapping[0]);
                assert_eq!(start % 4096, 0, "{}", mapping[0]);
                assert!(mapping[0].contains("(4 MiB)"), "{}", mapping[0]);
            }
            "mmap-dax" => {
                // Measured on a DAX file system; elsewhere skipped, saying why.
                if !measured(c) {
                    let why = c["skipped"].as_str().unwrap_or_else(|| panic!("{c}"));
                    assert!(why.contains("MAP_SYNC"), "{why}");
                }
            }
            _ => {
                assert!(measured(c), "{c}");
                assert!(mapping.is_empty(), "{m}: {mapping:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The preset grids under the tables

/// `iopath run --preset NAME --size 4M --repeat 1 --time 20ms --json
/// DIR/NAME.json --quiet`: its terminal output, and `iopath report` of the
/// JSON it saved.
fn run_text(dir: &Path, name: &str) -> (String, String, Value) {
    let json = dir.join(format!("{name}.json"));
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir)
        .args([
            "--preset", name, "--size", "4M", "--repeat", "1", "--time", "20ms", "--quiet",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let report = iopath()
        .arg("report")
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .clone();
    let report = String::from_utf8(report.stdout).unwrap();
    assert!(leftovers(dir).is_empty());
    assert!(text.contains(&format!("preset: {name}")), "{name}:\n{text}");
    (text, report, v)
}

#[test]
fn glommio_presets_show_their_figures_beside_the_source() {
    let dir = scratch();
    for name in ["glommio-scan", "glommio-random"] {
        let (text, report, v) = run_text(dir.path(), name);
        let published: Vec<&Value> = cases(&v)
            .iter()
            .filter(|c| c.get("published").is_some())
            .collect();
        assert_eq!(
            published.len(),
            cases(&v).len(),
            "{name}: every case has a figure"
        );
        for c in &published {
            let p = &c["published"];
            assert!(p["value"].as_f64().is_some_and(|x| x > 0.0), "{p}");
            assert!(
                ["MB/s", "IOPS"].contains(&p["unit"].as_str().unwrap()),
                "{p}"
            );
            assert!(!p["on"].as_str().unwrap().is_empty(), "{p}");
        }
        for out in [&text, &report] {
            let rows = table_rows(out, "beside the source");
            assert_eq!(rows.len(), published.len(), "{name}:\n{out}");
            for (r, c) in rows.iter().zip(&published) {
                let p = &c["published"];
                assert_eq!(r[0], c["label"].as_str().unwrap(), "{out}");
                assert_eq!(r[1], c["method"].as_str().unwrap(), "{out}");
                let figure = format!(
                    "{} {}",
                    p["value"].as_f64().unwrap(),
                    p["unit"].as_str().unwrap()
                );
                assert_eq!(r[2], figure, "{out}");
                assert_eq!(r[6], p["on"].as_str().unwrap(), "{out}");
                if measured(c) {
                    assert!(r[3].ends_with(p["unit"].as_str().unwrap()), "{out}");
                    assert!(r[4].ends_with('x'), "{out}");
                    // Memory held: page cache + buffers, never nothing (a
                    // direct case holds its buffers).
                    assert!(r[5].ends_with('B') && r[5] != "0 B", "{out}");
                } else {
                    assert_eq!(r[3], "not run here", "{out}");
                }
            }
        }
    }
}

#[test]
fn crystal_shows_the_crystaldiskmark_grid() {
    let dir = scratch();
    let (text, report, _) = run_text(dir.path(), "crystal");
    for out in [&text, &report] {
        let header = out
            .lines()
            .skip_while(|l| !l.starts_with("crystal (MB/s"))
            .find(|l| l.starts_with('│'))
            .unwrap_or_else(|| panic!("no crystal grid:\n{out}"));
        assert!(header.contains("┆ Read MB/s ┆ Write MB/s ┆"), "{header}");
        let rows = table_rows(out, "crystal (MB/s");
        let tests: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(
            tests,
            ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"],
            "{out}"
        );
        for r in &rows {
            // Read and write MB/s, measured.
            assert!(
                r[1].parse::<f64>().is_ok() && r[2].parse::<f64>().is_ok(),
                "{r:?}"
            );
        }
    }
}

#[test]
fn niobench_shows_its_statistics_per_mode_and_operation() {
    let dir = scratch();
    let (text, report, v) = run_text(dir.path(), "niobench");
    for out in [&text, &report] {
        let rows = table_rows(out, "niobench: MB/s per mode and operation");
        assert_eq!(rows.len(), 15, "{out}");
        for (r, c) in rows.iter().zip(cases(&v)) {
            assert_eq!(r[0], c["label"].as_str().unwrap(), "{out}");
            assert_eq!(r[1], c["pattern"].as_str().unwrap(), "{out}");
            assert_eq!(r[2], c["method"].as_str().unwrap(), "{out}");
            assert_eq!(r[3], c["sync"].as_str().unwrap(), "{out}");
            assert_eq!(r[8], "1", "{out}");
        }
    }
}

/// hmmap end to end at a tiny size: every method at 1 to 16 threads for W,
/// R and RR, mmap inside the cache-limit cgroup (when this machine can make
/// one), the seed's seconds beside ours, nothing left behind. `--time pass`
/// gives the seed's whole operations instead of the preset's 1 s slices.
#[test]
fn hmmap_runs_end_to_end_at_a_tiny_size() {
    let dir = scratch();
    let out = iopath()
        .args(["run", "--preset", "hmmap", "--dir"])
        .arg(dir.path())
        .args([
            "--size",
            "16M",
            "--cache-limit",
            "64M",
            "--repeat",
            "1",
            "--touch",
            "64k",
            "--time",
            "pass",
            "--json",
            "-",
            "--quiet",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("memory cgroup controller") || err.contains("cannot create the cgroup") {
        eprintln!("skipped: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    let v = json_of(&out.stdout);
    assert_eq!(v["config"]["preset"], "hmmap");
    assert_eq!(v["config"]["cache_limit"]["limit_bytes"], 64 << 20);
    let cases = cases(&v);
    // W and R: 5 methods, RR: 4 (no direct 8-byte reads), at 5 thread counts.
    assert_eq!(cases.len(), (5 + 5 + 4) * 5);
    for c in cases {
        assert!(c["error"].is_null(), "{c}");
        if c["skipped"].is_null() {
            let s = &c["summary"];
            if c["label"] == "RR" {
                assert_eq!(s["io_bytes"], 64 << 10, "{c}");
                assert_eq!(c["block_size"], 8);
            } else {
                assert_eq!(s["io_bytes"], 16 << 20, "whole passes: {c}");
            }
            assert_eq!(c["pass_bytes"], s["io_bytes"], "the whole operation: {c}");
        }
    }
    assert!(v["config"]["whole_pass"] == true, "{}", v["config"]);
    let mmap_w1 = cases
        .iter()
        .find(|c| c["method"] == "mmap" && c["label"] == "W" && c["threads"] == 1)
        .unwrap();
    assert_eq!(mmap_w1["published"]["value"], 6.8, "{mmap_w1}");
    assert_eq!(mmap_w1["published"]["unit"], "s");
    assert!(leftovers(dir.path()).is_empty());
    // Beside the source, every row names its case: W, R and RR come at
    // five thread counts, so the label alone would not (hmmap at
    // defaults printed "W mmap" five times).
    let json = dir.path().join("hmmap.json");
    std::fs::write(&json, &out.stdout).unwrap();
    let report = iopath().arg("report").arg(&json).output().unwrap();
    assert!(report.status.success());
    let report = String::from_utf8(report.stdout).unwrap();
    let rows = table_rows(&report, "beside the source");
    let published = cases
        .iter()
        .filter(|c| c.get("published").is_some())
        .count();
    assert_eq!(rows.len(), published, "{report}");
    let mut names: Vec<(String, String)> =
        rows.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), rows.len(), "{report}");
    assert!(
        rows.iter()
            .any(|r| r[0] == "write 1M Q1T4 (W)" && r[1] == "mmap"),
        "{report}"
    );
}

/// hmmap's cache keeps its ratio to the file when --size changes it (128
/// MiB for 4 GiB), never below 32 MiB; --cache-limit wins.
#[test]
fn hmmap_scales_its_cache_with_the_file() {
    // `presets show` lists the preset's own settings.
    assert!(stdout_of(&["presets", "show", "hmmap"]).contains("size 4 GiB"));
    use iopath::cli::Command;
    let plan = |args: &[&str]| {
        let mut argv = vec!["iopath", "run", "--preset", "hmmap"];
        argv.extend_from_slice(args);
        let a = match iopath::cli::parse_from(&argv).unwrap().command {
            Some(Command::Run(a)) => *a,
            _ => unreachable!(),
        };
        iopath::cli::commands::plan_of(&a).unwrap()
    };
    assert_eq!(plan(&[]).cache_limit, Some(128 << 20));
    // 1 s slices of the seed's operations by default; `--time pass` the
    // whole operations.
    let slices = plan(&[]);
    assert_eq!(slices.time_limit(), Some(std::time::Duration::from_secs(1)));
    assert_eq!(slices.repeat, Some(8));
    let whole = plan(&["--time", "pass"]);
    assert!(whole.whole_pass);
    assert_eq!(whole.time_limit(), None);
    assert_eq!(plan(&["--size", "16G"]).cache_limit, Some(512 << 20));
    assert_eq!(
        plan(&["--size", "64M"]).cache_limit,
        Some(32 << 20),
        "the floor"
    );
    assert_eq!(
        plan(&["--size", "16G", "--cache-limit", "1G"]).cache_limit,
        Some(1 << 30)
    );
}

/// Issue 18 (fix item 6): `presets show` fits 120 columns for every
/// built-in preset (glommio-scan's table was 204 wide, numa's 280): the
/// label, other and published cells wrap.
#[test]
fn presets_show_fits_120_columns_for_every_preset() {
    for name in ALL {
        let text = show(name);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest <= 120, "{name}: {widest} columns:\n{text}");
    }
}

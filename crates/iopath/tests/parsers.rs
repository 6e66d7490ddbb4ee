//! The parsers' properties (tests/parsers/checks.rs) as proptest
//! properties, so that `cargo test` on stable checks what the fuzz targets
//! (fuzz/, nightly) check: no panic on any input, and values written back
//! read back the same. Inputs are drawn near the grammar (words with units,
//! job files from the keys a job has, fio files from fio's options, results
//! from the fixtures with one value changed) and at random; case counts are
//! small so the suite stays fast. docs/testing.md has the fuzzing side.

#[path = "parsers/checks.rs"]
mod checks;

use std::cell::Cell;

use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestRunner;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Run `check` on `cases` inputs drawn from `inputs` (shrinking a failure
/// to a small input, as `proptest!` does), and fail unless at least
/// `min_accepted` of them were accepted by the parser: a property checked
/// only on refused input would say little. Each minimum is about four
/// standard deviations or more below the count the inputs give (printed
/// with `--nocapture`), so that chance alone does not fail it.
fn run<S: Strategy>(cases: u32, min_accepted: u32, inputs: S, check: impl Fn(&S::Value) -> bool)
where
    S::Value: std::fmt::Debug,
{
    let accepted = Cell::new(0u32);
    TestRunner::new(config(cases))
        .run(&inputs, |v| {
            if check(&v) {
                accepted.set(accepted.get() + 1);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{} of {cases} inputs accepted", accepted.get());
    assert!(
        accepted.get() >= min_accepted,
        "only {} of {cases} inputs were accepted (want {min_accepted}): the inputs miss the grammar",
        accepted.get()
    );
}

/// A number as people type them: digits, maybe a fraction, maybe huge.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        (0u32..100_000).prop_map(|n| n.to_string()),
        "[0-9]{0,25}(\\.[0-9]{0,25})?",
        any::<f64>().prop_map(|f| f.to_string()),
    ]
}

/// A word's text: a number with a unit of some kind, a name, or anything.
fn word_text() -> impl Strategy<Value = String> {
    let unit = select(vec![
        "", "b", "B", "k", "K", "KiB", "Ki", "M", "MiB", "G", "GiB", "T", "TiB", "kB", "MB", "GB",
        "TB", "ns", "us", "µs", "ms", "s", "sec", "m", "min", "h", "%", "%ram", " %ram", "x",
    ]);
    prop_oneof![
        (number(), unit.clone()).prop_map(|(n, u)| format!("{n}{u}")),
        (" {0,2}", number(), unit, " {0,2}").prop_map(|(a, n, u, b)| format!("{a}{n}{u}{b}")),
        select(vec![
            "pass",
            "randread",
            "seqwrite",
            "uring-sqpoll",
            "compress:50",
            "compress:",
            "local",
            "bind",
            "interleaved",
            "as-is",
            "time",
            "dsync",
        ])
        .prop_map(String::from),
        ".{0,12}",
    ]
}

#[test]
fn words_never_panic_and_read_back_what_they_write() {
    run(256, 64, word_text(), |s| checks::words(s));
}

#[test]
fn sizes_and_durations_are_written_exactly() {
    let inputs = (any::<u64>(), 0u64..1 << 45, any::<f64>());
    run(256, 0, inputs, |&(n, small, f)| {
        checks::numbers(n, f);
        checks::numbers(small, f);
        // Multiples of every unit, where words use the unit.
        checks::numbers(small << 10, f);
        checks::numbers((small % (1 << 20)) * 1_000_000_000, f);
        true
    });
}

#[test]
fn cpu_lists_never_panic_and_read_back() {
    let inputs = prop_oneof![
        "[0-9]{1,6}(-[0-9]{1,6})?( ?, ?[0-9]{1,6}(-[0-9]{1,6})?){0,4}",
        "[0-9, \\-\n]{0,16}",
        ".{0,10}",
    ];
    run(256, 16, inputs, |s| checks::cpu_lists(s));
}

#[test]
fn any_cpus_written_as_a_list_read_back() {
    let inputs = proptest::collection::vec(0u32..70_000, 0..24);
    run(256, 0, inputs, |cpus| {
        checks::cpu_list_round_trip(cpus);
        let dense: Vec<u32> = cpus.iter().map(|c| c % 40).collect();
        checks::cpu_list_round_trip(&dense);
        true
    });
}

#[test]
fn placement_flags_never_panic_and_name_only_what_exists() {
    // The second byte says which flags are given: mostly one or two that
    // go together, sometimes any.
    let given = prop_oneof![
        3 => select(vec![0u8, 1, 2, 4, 8, 16, 4 | 8, 1 | 4, 2 | 8 | 4, 1 | 16]),
        1 => any::<u8>(),
    ];
    let inputs = (
        any::<u8>(),
        given,
        proptest::collection::vec(any::<u8>(), 6),
        prop_oneof!["[0-9]{1,2}(-[0-9]{1,2})?(,[0-9]{1,2}){0,3}", ".{0,6}"],
    );
    run(512, 24, inputs, |(shape, given, rest, cpus)| {
        let mut data = vec![*shape, *given];
        data.extend_from_slice(rest);
        data.extend_from_slice(cpus.as_bytes());
        checks::placement(&data)
    });
}

/// One `key = value` line of a job file: a key a job has, with a value of
/// some kind.
fn job_line() -> impl Strategy<Value = String> {
    let key = select(vec![
        "size",
        "time",
        "io_size",
        "repeat",
        "ci_target",
        "max_time",
        "warmup",
        "schedule",
        "order_seed",
        "interval",
        "seed",
        "cache",
        "drop_caches",
        "data",
        "sparse",
        "verify",
        "cache_limit",
        "ucache_size",
        "ucache_page",
        "cpus",
        "numa_node",
        "mem_node",
        "mem_policy",
        "sqpoll_cpu",
        "file",
        "dir",
        "label",
        "method",
        "pattern",
        "bs",
        "qd",
        "threads",
        "sync",
        "rwmix",
        "span",
        "copy_to_user",
        "until",
        "touch",
        "cache_limited",
        "placement",
        "name",
        "layout",
        "sise",
    ]);
    let value = prop_oneof![
        word_text().prop_map(|w| format!("{w:?}")),
        any::<i64>().prop_map(|n| n.to_string()),
        (0i64..5000).prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        select(vec!["true", "false", "nan", "inf", "-0.0", "[]", "{}"]).prop_map(String::from),
        proptest::collection::vec(word_text(), 1..4).prop_map(|v| format!("{v:?}")),
        proptest::collection::vec(0i64..70, 1..4).prop_map(|v| format!("{v:?}")),
    ];
    (key, value).prop_map(|(k, v)| format!("{k} = {v}"))
}

/// A job file: lines under `[run]`, `[[case]]` and the top level.
fn job_text() -> impl Strategy<Value = String> {
    let section = select(vec!["", "[run]", "[[case]]", "[[case]]", "[[reference]]"]);
    proptest::collection::vec((section, proptest::collection::vec(job_line(), 0..5)), 0..4)
        .prop_map(|parts| {
            let mut text = String::new();
            for (head, lines) in parts {
                text.push_str(head);
                text.push('\n');
                for l in lines {
                    text.push_str(&l);
                    text.push('\n');
                }
            }
            text
        })
}

/// The presets' own job files, each cut after some line.
fn cut_preset() -> impl Strategy<Value = String> {
    let presets = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/presets"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<Vec<_>>();
    (select(presets), any::<prop::sample::Index>()).prop_map(|(text, at)| {
        let lines: Vec<&str> = text.lines().collect();
        lines[..at.index(lines.len() + 1)].join("\n")
    })
}

#[test]
fn job_files_never_panic_and_read_back_as_written() {
    run(96, 8, prop_oneof![job_text(), cut_preset()], |text| {
        checks::job_file(text)
    });
}

/// A fio job file: sections of `option=value` lines, mostly lines fio
/// takes, sometimes any of fio's options with any value.
fn fio_text() -> impl Strategy<Value = Vec<u8>> {
    let good = select(vec![
        "rw=read",
        "rw=write",
        "rw=randread",
        "rw=randwrite",
        "rw=randrw",
        "rw=rw",
        "rw=trim",
        "readwrite=randread:8",
        "bs=4k",
        "bs=4k,16k",
        "bs=1m",
        "bs=512",
        "bsrange=1k-64k",
        "blocksize=8k",
        "iodepth=1",
        "iodepth=32",
        "iodepth=$ncpus*2",
        "size=1g",
        "size=64m",
        "size=${SIZE}",
        "size=10%",
        "io_size=256m",
        "filesize=8m",
        "runtime=30s",
        "runtime=1m",
        "ramp_time=2",
        "time_based",
        "ioengine=psync",
        "ioengine=libaio",
        "ioengine=io_uring",
        "ioengine=mmap",
        "ioengine=sync",
        "ioengine=pvsync2",
        "numjobs=2",
        "numjobs=4",
        "direct=1",
        "direct=0",
        "buffered=1",
        "filename=/tmp/f.dat",
        "directory=${DIR}",
        "nrfiles=2",
        "rwmixread=70",
        "rwmixwrite=30",
        "sync=1",
        "fsync=8",
        "fdatasync=16",
        "end_fsync=1",
        "stonewall",
        "new_group",
        "thread",
        "norandommap",
        "randseed=0x2a",
        "randrepeat=0",
        "offset=4k",
        "cpus_allowed=0-1",
        "numa_cpu_nodes=0",
        "numa_mem_policy=bind:0",
        "kb_base=1000",
        "invalidate=0",
        "verify=crc32c",
        "do_verify=1",
        "name=other",
        "description=a job",
        "iodepth_batch=4",
        "loops=2",
        "sqthread_poll=1",
        "fixedbufs",
        "hipri",
        "bs=(4k*2)",
        "size=$mb_memory",
        "include common.inc",
        "; a comment",
        "# another",
    ]);
    let key = select(vec![
        "rw",
        "bs",
        "iodepth",
        "size",
        "io_size",
        "runtime",
        "ramp_time",
        "ioengine",
        "numjobs",
        "direct",
        "filename",
        "rwmixread",
        "sync",
        "fsync",
        "offset",
        "cpus_allowed",
        "numa_mem_policy",
        "kb_base",
        "verify",
        "zonesize",
        "loops",
        "bsrange",
    ]);
    let value = prop_oneof![
        word_text(),
        select(vec![
            "${SIZE}",
            "${NOPE}",
            "$pagesize",
            "$ncpus*2",
            "(4k*2)",
            "1,2",
            "0:1",
            ""
        ])
        .prop_map(String::from),
    ];
    let line = prop_oneof![
        24 => good.prop_map(String::from),
        2 => (key.clone(), value).prop_map(|(k, v)| format!("{k}={v}")),
        1 => key.prop_map(String::from),
        1 => ".{0,12}",
    ];
    let section = select(vec!["[global]", "[job]", "[second]", "[global2]", "[job]"]);
    let first = select(vec!["[global]", "[job]", "[j1]"]);
    (
        first,
        proptest::collection::vec((section, proptest::collection::vec(line, 0..6)), 1..4),
    )
        .prop_map(|(first, parts)| {
            let mut text = String::new();
            for (i, (head, lines)) in parts.into_iter().enumerate() {
                text.push_str(if i == 0 { first } else { head });
                text.push('\n');
                for l in lines {
                    text.push_str(&l);
                    text.push('\n');
                }
            }
            text.into_bytes()
        })
}

#[test]
fn fio_job_files_never_panic_and_import_as_they_read() {
    let inputs = prop_oneof![
        4 => fio_text(),
        1 => proptest::collection::vec(any::<u8>(), 0..64),
    ];
    let dir = tempfile::tempdir().unwrap();
    run(96, 8, inputs, |bytes| checks::fio_file(bytes, dir.path()));
}

/// The result fixtures: schemas 1 (v1.json), 2 (base.json) and 3 (v3.json).
fn fixtures() -> Vec<serde_json::Value> {
    ["compare/v1.json", "compare/v3.json", "compare/base.json"]
        .iter()
        .map(|f| {
            let path = format!("{}/tests/fixtures/{f}", env!("CARGO_MANIFEST_DIR"));
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
        })
        .collect()
}

/// The number of values in `v` (leaves, arrays and objects).
fn count(v: &serde_json::Value) -> usize {
    1 + match v {
        serde_json::Value::Array(a) => a.iter().map(count).sum(),
        serde_json::Value::Object(o) => o.values().map(count).sum(),
        _ => 0,
    }
}

/// One change to a result document.
#[derive(Debug, Clone)]
enum Edit {
    /// Remove the value from the object or array that holds it.
    Remove,
    /// Replace a number with this one (other values stay).
    Number(serde_json::Value),
    /// Replace a string with this one.
    Text(&'static str),
    /// Empty an array or an object.
    Empty,
}

/// Apply `edit` to the `n`-th value of `v`, depth first; `true` when the
/// `n`-th value was reached.
fn change(v: &mut serde_json::Value, n: &mut usize, edit: &Edit) -> bool {
    use serde_json::Value;
    if *n == 0 {
        match (edit, &mut *v) {
            (Edit::Number(x), Value::Number(_)) => *v = x.clone(),
            (Edit::Text(t), Value::String(_)) => *v = Value::String(t.to_string()),
            (Edit::Empty, Value::Array(a)) => a.clear(),
            (Edit::Empty, Value::Object(o)) => o.clear(),
            _ => {}
        }
        return true;
    }
    *n -= 1;
    let remove = matches!(edit, Edit::Remove);
    match v {
        Value::Array(a) => {
            for i in 0..a.len() {
                let at = *n;
                if change(&mut a[i], n, edit) {
                    if at == 0 && remove {
                        a.remove(i);
                    }
                    return true;
                }
            }
            false
        }
        Value::Object(o) => {
            let keys: Vec<String> = o.keys().cloned().collect();
            for k in keys {
                let at = *n;
                if change(o.get_mut(&k).unwrap(), n, edit) {
                    if at == 0 && remove {
                        o.remove(&k);
                    }
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

#[test]
fn results_never_panic_in_report_or_compare() {
    use serde_json::json;
    let edit = prop_oneof![
        1 => Just(Edit::Remove),
        1 => Just(Edit::Empty),
        4 => select(vec![
            json!(0), json!(-1), json!(1), json!(2), json!(4096), json!(u64::MAX),
            json!(i64::MIN), json!(u32::MAX), json!(1e308), json!(-1e308), json!(0.5),
            json!(1e-300), json!(-0.0),
        ])
        .prop_map(Edit::Number),
        2 => select(vec!["", "x", "direct", "randread", "uring", "4k", "\u{1F4BE}", "<b>&amp;"])
            .prop_map(Edit::Text),
    ];
    let edits = proptest::collection::vec((any::<prop::sample::Index>(), edit), 1..4);
    // Each preset layout has its own grids under the tables.
    let layout = select(vec![
        None,
        Some("crystal"),
        Some("niobench"),
        Some("daxbench"),
        Some("numa"),
        Some("hmmap"),
    ]);
    let docs = fixtures();
    run(
        48,
        6,
        (0..docs.len(), layout, edits),
        |(which, layout, edits)| {
            let mut doc = docs[*which].clone();
            if let Some(l) = layout {
                doc["config"]["layout"] = json!(l);
            }
            for (at, edit) in edits {
                let mut n = at.index(count(&doc));
                change(&mut doc, &mut n, edit);
            }
            checks::result_file(&serde_json::to_vec(&doc).unwrap())
        },
    );
}

#[test]
fn the_result_fixtures_pass_the_checks_unchanged() {
    for doc in fixtures() {
        let bytes = serde_json::to_vec(&doc).unwrap();
        iopath::analysis::compare::parse(&bytes, "fixture").expect("the fixtures read");
        assert!(checks::result_file(&bytes));
    }
}

/// One argument of `iopath`: a subcommand, a flag, or a value.
fn argument() -> impl Strategy<Value = String> {
    let flag = select(vec![
        "run",
        "compare",
        "presets",
        "show",
        "report",
        "methods",
        "--",
        "--fio",
        "--only-fio-engine",
        "--ignore-unknown",
        "--preset",
        "--span",
        "--cache-limit",
        "--ucache-size",
        "--ucache-page",
        "--cpus",
        "--numa-node",
        "--mem-node",
        "--mem-policy",
        "--sqpoll-cpu",
        "--dir",
        "--file",
        "--allow-write",
        "--force-signature",
        "--prefill",
        "--size",
        "--methods",
        "--patterns",
        "--bs",
        "--qd",
        "--threads",
        "--time",
        "--io-size",
        "--touch",
        "--repeat",
        "--max-time",
        "--ci-target",
        "--schedule",
        "--order-seed",
        "--warmup",
        "--interval",
        "--sync",
        "--cache",
        "--drop-caches",
        "--data",
        "--sparse",
        "--verify",
        "--rwmix",
        "--seed",
        "--json",
        "--json-format",
        "--html",
        "--csv",
        "--markdown",
        "--png-dir",
        "--fail-above",
        "--drift",
        "--toml",
        "-q",
    ]);
    let value = select(vec![
        "direct,uring",
        "buffered",
        "ucache,uffd",
        "randread,write",
        "copy",
        "crystal",
        "numa",
        "hmmap",
        "0-1",
        "0",
        "1",
        "3",
        "32",
        "4096",
        "bind",
        "local",
        "interleave",
        "warm",
        "cold",
        "dsync",
        "each",
        "pass",
        "1s",
        "64M",
        "10%ram",
        "a.json",
        "b.json",
        "-",
        "r.html",
        "job.toml",
        "x.fio",
        "iopath",
        "fio",
        "5%",
    ]);
    prop_oneof![
        4 => flag.prop_map(String::from),
        4 => value.prop_map(String::from),
        1 => word_text(),
    ]
}

#[test]
fn command_lines_never_panic_before_anything_runs() {
    let inputs = prop_oneof![
        // `run` and its flags, most of the time.
        3 => proptest::collection::vec(argument(), 0..8).prop_map(|mut v| {
            v.insert(0, "run".into());
            v
        }),
        1 => proptest::collection::vec(argument(), 0..6),
    ];
    run(128, 8, inputs, |args| checks::command_line(args));
}

//! What every parser a user or a file can feed must hold for ANY input: it
//! never panics, and where iopath writes a value back out (a word such as
//! `4k`, a CPU list, a job as TOML), what it writes reads back as the same
//! value.
//!
//! One file, two users: the proptest suite (`tests/parsers.rs`, on stable,
//! in every `cargo test`) and the cargo-fuzz targets (`fuzz/`, libFuzzer on
//! nightly), which include this file by path. Each check goes through the
//! public entry points the command line uses (`jobfile::parse` as
//! `iopath run JOB.toml`, `fio::parse_file_with` as `iopath run --fio`,
//! `compare::parse` as `iopath report` and `iopath compare`), and a broken
//! property is a panic with the input in its message. docs/testing.md says
//! how to run them.

// Each user calls its own subset.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::time::Duration;

use iopath::import::fio::{Context, Env, Keywords};
use iopath::model::job::JobSpec;
use iopath::model::schedule::Schedule;
use iopath::model::words::{Bytes, Dur, Pct, RepTime, Span, Until, Word};
use iopath::model::{CacheState, Pattern};
use iopath::plan::{Origin, Plan};
use iopath::system::topology::{Node, Topology};
use iopath_io::data::DataMode;
use iopath_io::numa::MemPolicyMode;
use iopath_io::{Method, SyncPolicy};

/// A word that parses reads back as itself from the text it writes.
fn word<T: Word + PartialEq + Debug>(s: &str) -> bool {
    let Ok(v) = T::parse_word(s) else {
        return false;
    };
    let w = v.word();
    match T::parse_word(&w) {
        Ok(back) => assert_eq!(
            back, v,
            "{s:?} reads as {v:?}, is written {w:?}, which reads as {back:?}"
        ),
        Err(e) => panic!("{s:?} reads as {v:?}, is written {w:?}, which is refused: {e}"),
    }
    true
}

/// Every value spelling of flags and job files (`model::words`), and the
/// other value parsers of the command line: no panic, and every value read
/// is written as text that reads back as the same value. `true` when some
/// parser accepted `s`.
pub fn words(s: &str) -> bool {
    let accepted = [
        word::<Bytes>(s),
        word::<Dur>(s),
        word::<Pct>(s),
        word::<RepTime>(s),
        word::<Span>(s),
        word::<u32>(s),
        word::<Method>(s),
        word::<Pattern>(s),
        word::<SyncPolicy>(s),
        word::<CacheState>(s),
        word::<Schedule>(s),
        word::<DataMode>(s),
        word::<MemPolicyMode>(s),
        word::<Until>(s),
    ];
    if let Ok(b) = iopath::model::units::parse_size(s) {
        assert!(b <= i64::MAX as u64, "{s:?} reads as {b} bytes");
    }
    if let Ok(d) = iopath::model::units::parse_duration(s) {
        assert!(d <= Duration::from_secs(1_000_000_000), "{s:?}: {d:?}");
        let _ = iopath::model::units::fmt_duration(d);
    }
    let _ = iopath::system::placement::parse_policy_mode(s);
    if let Ok(p) = iopath::analysis::compare::parse_fail_above(s) {
        assert!(p > 0.0 && p < 100.0, "{s:?}: {p}");
    }
    if let Ok(p) = iopath::analysis::compare::parse_drift(s) {
        assert!((0.0..100.0).contains(&p), "{s:?}: {p}");
    }
    accepted.contains(&true)
}

/// A byte count and a duration, any value the parsers can return: written
/// as a word, they read back exactly; the display forms never panic.
pub fn numbers(n: u64, f: f64) {
    if n <= i64::MAX as u64 {
        let w = Bytes(n).word();
        assert_eq!(
            Bytes::parse_word(&w),
            Ok(Bytes(n)),
            "Bytes({n}) is written {w:?}"
        );
    }
    let d = Duration::from_nanos(n % 1_000_000_000_000_000_001);
    let w = Dur(d).word();
    assert_eq!(Dur::parse_word(&w), Ok(Dur(d)), "{d:?} is written {w:?}");
    let _ = iopath::model::units::fmt_bytes(n);
    let _ = iopath::model::units::fmt_bs(n);
    let _ = iopath::model::units::fmt_ns(n);
    let _ = iopath::model::units::fmt_duration(d);
    let _ = iopath::model::units::fmt_count(f);
    let _ = iopath::model::units::fmt_device_fraction(f);
    let _ = iopath::model::units::fmt_percentile(n, f, n);
}

/// A CPU or node list as `--cpus` and sysfs give it
/// (`topology::parse_cpulist`, and `iopath_io::numa::parse_list` for the
/// kernel's node lists): no panic; a list read is sorted, unique and in
/// range, and written back (`format_cpulist`, `format_list`) reads back the
/// same. `true` when either accepted `s`.
pub fn cpu_lists(s: &str) -> bool {
    let mut accepted = false;
    if let Ok(cpus) = iopath::system::topology::parse_cpulist(s) {
        accepted = true;
        assert!(!cpus.is_empty(), "{s:?} reads as no CPU");
        assert!(cpus.windows(2).all(|w| w[0] < w[1]), "{s:?}: {cpus:?}");
        assert!(cpus.iter().all(|&c| c <= iopath::system::topology::MAX_CPU));
        let w = iopath::system::topology::format_cpulist(&cpus);
        assert_eq!(
            iopath::system::topology::parse_cpulist(&w).as_ref(),
            Ok(&cpus),
            "{s:?} is written {w:?}"
        );
    }
    if let Some(nodes) = iopath_io::numa::parse_list(s) {
        accepted = true;
        assert!(nodes.windows(2).all(|w| w[0] < w[1]), "{s:?}: {nodes:?}");
        let w = iopath_io::numa::format_list(&nodes);
        if !nodes.is_empty() {
            assert_eq!(
                iopath_io::numa::parse_list(&w).as_ref(),
                Some(&nodes),
                "{s:?} is written {w:?}"
            );
        }
    }
    accepted
}

/// Any CPU numbers: written as a list, they read back sorted and unique.
pub fn cpu_list_round_trip(cpus: &[u32]) {
    let mut want: Vec<u32> = cpus
        .iter()
        .copied()
        .filter(|&c| c <= iopath::system::topology::MAX_CPU)
        .collect();
    want.sort_unstable();
    want.dedup();
    let w = iopath::system::topology::format_cpulist(&want);
    if want.is_empty() {
        assert_eq!(w, "");
        return;
    }
    assert_eq!(
        iopath::system::topology::parse_cpulist(&w),
        Ok(want.clone()),
        "{w:?}"
    );
    assert_eq!(iopath_io::numa::parse_list(&w), Some(want), "{w:?}");
}

/// A machine for the plans: two nodes of four CPUs each (memory on both),
/// or, with `shape`, up to four nodes, some without CPUs or memory.
pub fn topology(shape: u8) -> Topology {
    let nodes = 1 + u32::from(shape & 3);
    let per_node = u32::from((shape >> 2) & 7);
    let memless = shape >> 5;
    let mut cpus_online = Vec::new();
    let topo_nodes: Vec<Node> = (0..nodes)
        .map(|id| {
            let cpus: Vec<u32> = (id * per_node..(id + 1) * per_node).collect();
            cpus_online.extend(&cpus);
            Node {
                id,
                cpus,
                memory_bytes: Some(if memless & (1 << id) != 0 { 0 } else { 1 << 34 }),
                distances: (0..nodes).map(|j| if j == id { 10 } else { 21 }).collect(),
            }
        })
        .collect();
    Topology {
        nodes: topo_nodes,
        cpus_online,
        source: "sysfs".into(),
    }
}

/// The placement flags (`--cpus`, `--numa-node`, `--mem-node`,
/// `--mem-policy`, `--sqpoll-cpu`) as `placement::from_flags` takes them,
/// decoded from bytes: a machine shape, which flags are given and their
/// numbers, the CPUs this process may use, then the `--cpus` text. No
/// panic; a placement accepted only names CPUs that are online and
/// allowed, and nodes that exist. `true` when the flags were accepted.
pub fn placement(data: &[u8]) -> bool {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let topo = topology(byte(0));
    let given = byte(1);
    let text = String::from_utf8_lossy(data.get(8..).unwrap_or(&[])).into_owned();
    let cpus = (given & 1 != 0).then_some(text.as_str());
    let numa_node = (given & 2 != 0).then_some(u32::from(byte(2) % 8));
    let mem_node = (given & 4 != 0).then_some(u32::from(byte(3) % 8));
    let mem_policy = (given & 8 != 0).then(|| {
        [
            MemPolicyMode::Bind,
            MemPolicyMode::Preferred,
            MemPolicyMode::Interleave,
            MemPolicyMode::Local,
        ][usize::from(byte(4) % 4)]
    });
    let sqpoll_cpu = (given & 16 != 0).then_some(u32::from(byte(5)));
    let allowed: Vec<u32> = (0..16u32)
        .filter(|c| u16::from_le_bytes([byte(6), byte(7)]) & (1 << c) != 0)
        .filter(|c| topo.cpus_online.contains(c))
        .collect();
    let Ok(p) = iopath::system::placement::from_flags(
        cpus, numa_node, mem_node, mem_policy, sqpoll_cpu, &topo, &allowed,
    ) else {
        return false;
    };
    if let Some(set) = &p.cpus {
        assert!(!set.is_empty(), "{p:?}");
        for c in set {
            assert!(topo.cpus_online.contains(c), "CPU {c} is not online: {p:?}");
            assert!(allowed.is_empty() || allowed.contains(c), "{p:?}");
        }
        for i in 0..4 {
            let w = p
                .cpus_of_worker(i)
                .expect("a worker of a pinned case has CPUs");
            assert!(w.iter().all(|c| set.contains(c)), "{p:?}");
        }
    }
    if let Some(mem) = &p.mem {
        assert!(mem.check().is_ok(), "{p:?}");
        for n in &mem.nodes {
            assert!(topo.node(*n).is_some(), "node {n} does not exist: {p:?}");
        }
        let _ = iopath::system::placement::policy_name(mem);
    }
    let _ = iopath::system::placement::numa_placements(&topo, &allowed, numa_node);
    true
}

/// The plan `iopath run` makes of a job (no flags given), on the two-node
/// machine of [`topology`]: no panic; a plan made has cases.
fn plan(job: &JobSpec, origin: &Origin) {
    let Ok(job) = job.overridden_by(&JobSpec::default(), false, &|p: &Path| p.exists()) else {
        return;
    };
    if let Ok(plan) = Plan::from_spec_on(&job, origin, &topology(0b0001_0001), &[], &|| None) {
        assert!(!plan.cases.is_empty(), "a plan without cases: {job:?}");
        let _ = plan.methods();
        let _ = plan.needs_file();
        let _ = plan.verify_unit();
    }
}

/// A TOML job file as `iopath run JOB.toml` reads it (`jobfile::parse`):
/// no panic; a job read is written as TOML (what `presets show --toml` and
/// `import-fio` print) that reads back as the same job; its plan does not
/// panic. `true` when the job was read.
pub fn job_file(text: &str) -> bool {
    let Ok(job) = iopath::import::jobfile::parse("fuzz.toml", text) else {
        return false;
    };
    let written = toml::to_string(&job)
        .unwrap_or_else(|e| panic!("a job read from {text:?} cannot be written as TOML: {e}"));
    match iopath::import::jobfile::parse("written.toml", &written) {
        Ok(back) => assert_eq!(back, job, "{text:?} is written as {written:?}"),
        Err(e) => panic!(
            "{text:?} is written as {written:?}, which is refused: {}",
            e.0
        ),
    }
    plan(
        &job,
        &Origin {
            file: Some(PathBuf::from("fuzz.toml")),
            ..Origin::default()
        },
    );
    true
}

/// What `${VAR}` and fio's keywords are while fuzzing: fixed, so a result
/// does not depend on the machine.
pub fn fio_context() -> Context {
    Context {
        env: Env::Fixed(BTreeMap::from([
            ("SIZE".to_string(), "64m".to_string()),
            ("DIR".to_string(), "/tmp".to_string()),
        ])),
        keywords: Keywords {
            pagesize: 4096,
            mb_memory: 16_384,
            ncpus: 8,
        },
    }
}

/// A fio job file as `iopath run --fio JOB.fio` and `iopath import-fio`
/// read it (`fio::parse_file_with`, then `fio::map::to_job`), from a file
/// holding `bytes` in `dir` (a directory of its own, where relative includes
/// find `common.inc`): no panic; a job mapped is written as TOML (what
/// `import-fio` prints) that reads back as the same job; its plan does not
/// panic. `true` when the file was read (mapping refuses much that fio
/// reads: concurrent jobs, trims, several files).
pub fn fio_file(bytes: &[u8], dir: &Path) -> bool {
    let path = dir.join("job.fio");
    std::fs::write(&path, bytes).expect("the fuzz directory is writable");
    // Something for `include common.inc` to find (and `include job.fio`
    // is a cycle).
    let common = dir.join("common.inc");
    if !common.exists() {
        std::fs::write(&common, "bs=4k\niodepth=4\nioengine=psync\n").expect("writable");
    }
    let Ok(file) = iopath::import::fio::parse_file_with(&path, &fio_context()) else {
        return false;
    };
    let _ = file.dump();
    let groups = file.groups();
    assert_eq!(
        groups.iter().map(Vec::len).sum::<usize>(),
        file.jobs.len(),
        "every job is in one group"
    );
    for ignore_unknown in [false, true] {
        let opts = iopath::import::fio::map::MapOptions {
            only_own_engine: false,
            ignore_unknown,
        };
        let Ok(mapped) = iopath::import::fio::map::to_job(&file, opts) else {
            continue;
        };
        let written = toml::to_string(&mapped.job).unwrap_or_else(|e| {
            panic!("the job mapped from {bytes:?} cannot be written as TOML: {e}")
        });
        match iopath::import::jobfile::parse("import.toml", &written) {
            Ok(back) => assert_eq!(back, mapped.job, "import-fio wrote {written:?}"),
            Err(e) => panic!(
                "import-fio of {bytes:?} wrote {written:?}, which is refused: {}",
                e.0
            ),
        }
        plan(
            &mapped.job,
            &Origin {
                file: Some(path.clone()),
                ignored: mapped.ignored.clone(),
                ..Origin::default()
            },
        );
    }
    true
}

/// A result file as `iopath report` and `iopath compare` read it
/// (`compare::parse`, any schema from 1 to the current one): no panic in
/// reading, in any report made of it (tables, Markdown, CSV, HTML, both
/// JSON shapes) or in comparing it with itself; what `report --json` writes
/// reads back as the same result. `true` when the file was read.
pub fn result_file(bytes: &[u8]) -> bool {
    let Ok(mut r) = iopath::analysis::compare::parse(bytes, "fuzz.json") else {
        return false;
    };
    if r.verdicts.is_empty() {
        r.verdicts = iopath::analysis::verdict::all(&r.cases);
    }
    // The words the JSON carries beside the facts, as `report --json`
    // writes them (verdicts made here have none yet).
    iopath::report::text::word(&mut r);
    let _ = iopath::report::table::render(&r, false);
    let _ = iopath::report::table::render(&r, true);
    let _ = iopath::report::markdown::render(&r);
    let _ = iopath::report::csv::render(&r);
    let _ = iopath::report::html::render(&r);
    let _ = iopath::report::json::bytes_of(&r, iopath::report::json::JsonFormat::Fio);
    let json = iopath::report::json::bytes_of(&r, iopath::report::json::JsonFormat::Iopath)
        .expect("a result read from JSON can be written as JSON");
    match iopath::analysis::compare::parse(&json, "written.json") {
        Ok(back) => assert!(back == r, "report --json writes a different result"),
        Err(e) => panic!("report --json writes a result it refuses: {}", e.0),
    }
    let side = |name: &str| iopath::analysis::compare::Side {
        path: format!("{name}.json"),
        name: name.into(),
        started_at: r.started_at.clone(),
        command: r.command.clone(),
        paths: vec![format!("{name}.json")],
    };
    let runs = [r.clone()];
    let report = iopath::analysis::compare::compare(
        &runs,
        &runs,
        side("a"),
        side("b"),
        Some(5.0),
        iopath::analysis::compare::DEFAULT_DRIFT_PCT,
    );
    let _ = iopath::report::compare::render(&report, 80);
    let _ = iopath::report::compare::to_json(&report);
    let _ = iopath::analysis::compare::gate(&report);
    true
}

/// A command line as `iopath` reads it (`cli::parse_from`, the program's
/// name first), and what each command checks before it does anything:
/// `run` makes its plan (`commands::plan_of`: flags, a preset, a job file
/// or a fio job file under them) and checks its report paths, `compare`
/// splits its files into sides, `presets show` prints a preset. No panic; a
/// plan made has cases. `true` when clap accepted the arguments.
///
/// Arguments that name something under /dev, /proc or /sys are left out:
/// `iopath run /dev/stdin` reads standard input by design, which would
/// stall a fuzzer, and the flags that name a target only check it here.
pub fn command_line(args: &[String]) -> bool {
    use iopath::cli::{Command, PresetsAction};
    if args
        .iter()
        .any(|a| ["/dev", "/proc", "/sys"].iter().any(|d| a.contains(d)))
    {
        return false;
    }
    let argv = std::iter::once("iopath".to_string()).chain(args.iter().cloned());
    let Ok(cli) = iopath::cli::parse_from(argv) else {
        return false;
    };
    match cli.command {
        Some(Command::Run(a)) => {
            if let Ok(plan) = iopath::cli::commands::plan_of(&a) {
                assert!(!plan.cases.is_empty(), "a plan without cases: {args:?}");
                let _ = a.reports.check(a.json.as_deref(), None);
            }
        }
        Some(Command::Compare(c)) => {
            let o = c.options();
            let _ = iopath::analysis::compare::sides(&o.a, &o.b);
        }
        Some(Command::Presets(p)) => {
            if let Some(PresetsAction::Show { name, .. }) = p.action {
                let _ = iopath::cli::commands::preset_toml(&name);
                let _ = iopath::cli::commands::preset_show(&name);
            }
        }
        _ => {}
    }
    true
}

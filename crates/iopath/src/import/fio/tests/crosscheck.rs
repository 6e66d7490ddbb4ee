//! The fixtures against the real fio, where it is installed: fio must
//! accept every fixture (`--parse-only`), name the same jobs
//! (`--showcmd`), and, section by section, see the same options with the
//! same values and convert them to the same numbers (`--debug=parse`
//! prints every option fio handles and the number it made of it).
//! Without fio these tests say so and pass, unless IOPATH_REQUIRE_FIO=1.

use std::process::{Command, Output};

use super::*;
use crate::import::fio::ini::{self, Entry};
use crate::import::fio::options::{apply_entry, canonical};
use crate::import::fio::{FioJob, Given, Size};

/// fio's path, or `None` (with a message) when the test cannot run.
fn fio() -> Option<&'static str> {
    match Command::new("fio").arg("--version").output() {
        Ok(out) if out.status.success() => Some("fio"),
        _ => {
            if std::env::var("IOPATH_REQUIRE_FIO").as_deref() == Ok("1") {
                panic!("fio is not installed, and IOPATH_REQUIRE_FIO=1 requires the cross-check");
            }
            eprintln!("SKIPPED: fio is not installed, so the fixtures are not cross-checked against it (set IOPATH_REQUIRE_FIO=1 to make this a failure)");
            None
        }
    }
}

fn run(fio: &str, args: &[&str], file: &Path) -> Output {
    let out = Command::new(fio)
        .args(args)
        .arg(file)
        .envs(FIXTURE_ENV)
        .output()
        .expect("running fio");
    assert!(
        out.status.success(),
        "fio {args:?} {} failed:\n{}{}",
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// One option as fio's parser handled it.
#[derive(Debug)]
struct Handled {
    key: String,
    ptr: Option<String>,
    outs: Vec<u64>,
    /// After "filling default options": an engine's defaults and options.
    late: bool,
    matched: bool,
}

/// `--debug=parse` output: per section, the options fio handled.
fn handled(text: &str) -> Vec<(String, Vec<Handled>)> {
    let mut sections: Vec<(String, Vec<Handled>)> = Vec::new();
    let mut late = false;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("parse") else {
            continue;
        };
        let rest = rest
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit());
        let rest = rest.trim_start();
        if let Some(name) = rest
            .strip_prefix("Parsing section [")
            .and_then(|r| r.strip_suffix(']'))
        {
            sections.push((name.to_string(), Vec::new()));
            late = false;
        } else if rest == "filling default options" {
            late = true;
        } else if let Some(h) = rest.strip_prefix("handle_option=") {
            let Some((key, ptr)) = h.split_once(", ptr=") else {
                continue;
            };
            if let Some((_, list)) = sections.last_mut() {
                list.push(Handled {
                    key: key.to_string(),
                    ptr: (ptr != "(null)").then(|| ptr.to_string()),
                    outs: Vec::new(),
                    late,
                    matched: false,
                });
            }
        } else if let Some(out) = rest.strip_prefix("ret=0, out=") {
            let last = sections.last_mut().and_then(|(_, l)| l.last_mut());
            if let (Some(h), Ok(n)) = (last, out.parse::<u64>()) {
                h.outs.push(n);
            }
        }
    }
    sections
}

fn micros(g: &Option<Given<std::time::Duration>>) -> Vec<u64> {
    g.iter().map(|g| g.value.as_micros() as u64).collect()
}

fn flag(g: &Option<Given<bool>>) -> Vec<u64> {
    g.iter().map(|g| u64::from(g.value)).collect()
}

fn size(g: &Option<Given<Size>>) -> Vec<u64> {
    g.iter()
        .map(|g| match g.value {
            Size::Bytes(b) => b,
            Size::Percent(p) => u64::MAX - u64::from(p),
        })
        .collect()
}

/// The numbers fio prints (`out=`) for this entry, from our typed value;
/// `None` where we do not know what fio prints.
fn expected_outs(e: &Entry, j: &FioJob) -> Option<Vec<u64>> {
    let one = |v: Option<u64>| v.into_iter().collect::<Vec<u64>>();
    Some(match canonical(&e.key)? {
        "bs" => {
            let bs = j.bs.as_ref()?.value;
            let text = e.value.as_deref()?;
            let text = text.strip_suffix(',').unwrap_or(text);
            let dirs = [bs.read, bs.write, bs.trim];
            text.split(',')
                .enumerate()
                .filter(|(_, p)| !p.is_empty())
                .map(|(i, _)| dirs[i])
                .collect()
        }
        "iodepth" => one(j.iodepth.as_ref().map(|g| g.value.into())),
        "numjobs" => one(j.numjobs.as_ref().map(|g| g.value.into())),
        "fsync" => one(j.fsync.as_ref().map(|g| g.value.into())),
        "fdatasync" => one(j.fdatasync.as_ref().map(|g| g.value.into())),
        "rwmixread" => one(j.rwmixread.as_ref().map(|g| g.value.into())),
        "rwmixwrite" => one(j.rwmixread.as_ref().map(|g| 100 - u64::from(g.value))),
        "buffer_compress_percentage" => one(j
            .buffer_compress_percentage
            .as_ref()
            .map(|g| g.value.into())),
        "randseed" => one(j.randseed.as_ref().map(|g| g.value)),
        "size" => size(&j.size),
        "io_size" => size(&j.io_size),
        "filesize" => {
            let (lo, hi) = j.filesize.as_ref()?.value;
            if e.value.as_deref()?.contains(['-', ':']) {
                vec![lo, hi]
            } else {
                vec![lo]
            }
        }
        "runtime" => micros(&j.runtime),
        "ramp_time" => micros(&j.ramp_time),
        "direct" => flag(&j.direct),
        "buffered" => j.direct.iter().map(|g| u64::from(!g.value)).collect(),
        "time_based" => flag(&j.time_based),
        "end_fsync" => flag(&j.end_fsync),
        "fsync_on_close" => flag(&j.fsync_on_close),
        "invalidate" => flag(&j.invalidate),
        "randrepeat" => flag(&j.randrepeat),
        "zero_buffers" => flag(&j.zero_buffers),
        "refill_buffers" => flag(&j.refill_buffers),
        "fixedbufs" => flag(&j.fixedbufs),
        "registerfiles" => flag(&j.registerfiles),
        "sqthread_poll" => flag(&j.sqthread_poll),
        "hipri" => flag(&j.hipri),
        "stonewall" => flag(&j.stonewall),
        "new_group" => flag(&j.new_group),
        "group_reporting" => flag(&j.group_reporting),
        _ => return None,
    })
}

/// Compare what fio handled in each section with our entries; returns
/// how many values were compared.
fn compare_sections(file: &Path, debug: &str, ctx: &Context) -> usize {
    let mut fio_sections = handled(debug);
    let ours = ini::read_file(file, ctx).unwrap();
    let names: Vec<&str> = ours.iter().map(|s| s.name.as_str()).collect();
    let fio_names: Vec<&str> = fio_sections.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, fio_names, "{}: sections", file.display());
    let mut compared = 0;
    let mut global_kb = None;
    for (section, (_, fio_opts)) in ours.iter().zip(fio_sections.iter_mut()) {
        let own_kb = section.entries.iter().rev().find(|e| e.key == "kb_base");
        let mut base = FioJob::default();
        if let Some(e) = own_kb.or(global_kb.as_ref()) {
            apply_entry(&mut base, e, false).unwrap();
        }
        if section.global {
            global_kb = own_kb.cloned().or(global_kb);
        }
        for e in &section.entries {
            let key = canonical(&e.key).unwrap_or(&e.key);
            let found = fio_opts.iter_mut().find(|h| {
                !h.matched && h.key == key && h.ptr.as_deref().map(str::trim) == e.value.as_deref()
            });
            let Some(h) = found else {
                panic!(
                    "{}: fio did not handle {key}={:?} of [{}] (line {})",
                    file.display(),
                    e.value,
                    section.name,
                    e.at.line
                );
            };
            h.matched = true;
            let mut job = base.clone();
            apply_entry(&mut job, e, section.global).unwrap();
            if let Some(want) = expected_outs(e, &job) {
                assert_eq!(
                    h.outs,
                    want,
                    "{}:{}: {key}={:?}",
                    file.display(),
                    e.at.line,
                    e.value
                );
                compared += 1;
            }
        }
        if let Some(h) = fio_opts.iter().find(|h| !h.matched && !h.late) {
            panic!(
                "{}: fio handled {}={:?} in [{}], which we did not read",
                file.display(),
                h.key,
                h.ptr,
                section.name
            );
        }
    }
    compared
}

#[test]
fn fixtures_agree_with_fio() {
    let Some(fio) = fio() else { return };
    let ctx = Context {
        env: Env::Fixed(
            FIXTURE_ENV
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        keywords: Keywords::detect(),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    let mut compared = 0;
    let mut debug_missing = false;
    for file in &files {
        run(fio, &["--parse-only"], file);
        let ours = crate::import::fio::parse_file_with(file, &ctx).unwrap();
        let showcmd = String::from_utf8_lossy(&run(fio, &["--showcmd"], file).stdout).into_owned();
        let fio_jobs: Vec<&str> = showcmd
            .split_whitespace()
            .filter_map(|t| t.strip_prefix("--name="))
            .collect();
        let our_jobs: Vec<&str> = ours.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(our_jobs, fio_jobs, "{}: job names", file.display());
        let out = run(fio, &["--debug=parse", "--parse-only"], file);
        let debug = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !debug.contains("Parsing section") {
            debug_missing = true;
            continue;
        }
        compared += compare_sections(file, &debug, &ctx);
    }
    eprintln!(
        "cross-checked {} fixtures with fio; {compared} values compared",
        files.len()
    );
    if debug_missing {
        eprintln!(
            "PARTLY SKIPPED: this fio prints no --debug=parse output, so values were not compared"
        );
    } else {
        assert!(compared >= 50, "only {compared} values compared");
    }
}

#[test]
fn keywords_agree_with_fio() {
    let Some(fio) = fio() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keywords.fio");
    std::fs::write(
        &file,
        "[k]\nfilename=k.dat\nbs=$pagesize\nsize=$mb_memory\nnumjobs=$ncpus\n",
    )
    .unwrap();
    let out = run(fio, &["--debug=parse", "--parse-only"], &file);
    let debug = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !debug.contains("Parsing section") {
        eprintln!("SKIPPED: this fio prints no --debug=parse output");
        return;
    }
    let kw = Keywords::detect();
    let got: Vec<(String, Vec<u64>)> = handled(&debug)
        .into_iter()
        .flat_map(|(_, l)| l)
        .filter(|h| !h.late && h.key != "filename")
        .map(|h| (h.key, h.outs))
        .collect();
    let want = [
        ("bs".to_string(), vec![kw.pagesize]),
        ("size".to_string(), vec![kw.mb_memory]),
        ("numjobs".to_string(), vec![kw.ncpus]),
    ];
    assert_eq!(got, want);
}

/// Every value form the reader accepts, one job each, must be read by fio
/// as the same number.
#[test]
fn accepted_value_forms_agree_with_fio() {
    let Some(fio) = fio() else { return };
    let sizes = [
        "4k", "4K", "4kb", "4KB", "4kB", "4kib", "4KiB", "1mib", "1m", "1M", "1g", "1t", "1p",
        "0x10", "4096b", "4096B", "00010", "010k", "7",
    ];
    let times = [
        "10", "10s", "10S", "10m", "10M", "1h", "1H", "1d", "500ms", "500MS", "500msec", "500us",
        "500usec", "0",
    ];
    let mut lines: Vec<String> = Vec::new();
    for v in sizes {
        for key in ["bs", "size", "io_size", "filesize", "randseed"] {
            lines.push(format!("{key}={v}"));
        }
        lines.push(format!("kb_base=1000\nsize={v}"));
    }
    for v in times {
        lines.push(format!("runtime={v}"));
        lines.push(format!("ramp_time={v}"));
    }
    let more = [
        "size=10%",
        "io_size=50%",
        "io_limit=1%",
        "filesize=1m-2m",
        "filesize=1k:3k",
        "bs=4k,8k",
        "bs=,8k",
        "bs=4k,8k,16k",
        "bs=4k,",
        "blocksize=2k",
        "iodepth=1k",
        "iodepth=0x20",
        "iodepth= 8",
        "size= 4096",
        "runtime= 10",
        "numjobs=4",
        "rwmixread=0",
        "rwmixread=100",
        "rwmixwrite=30",
        "fsync=7",
        "fdatasync=0",
        "direct=0x1",
        "direct=01",
        "buffered=0",
        "buffered=1",
        "time_based",
        "time_based=0",
        "stonewall=1",
        "wait_for_previous",
        "new_group",
        "group_reporting=1",
        "zero_buffers",
        "refill_buffers=0",
        "invalidate=0",
        "randrepeat=1",
        "end_fsync=1",
        "fsync_on_close=0",
        "buffer_compress_percentage=35",
        "timeout=2m",
        "ioengine=io_uring\nfixedbufs\nregisterfiles=0\nsqthread_poll=1\nhipri",
        "ioengine=pvsync2\nhipri=1",
    ];
    lines.extend(more.iter().map(|s| s.to_string()));
    let mut text = String::new();
    for (i, l) in lines.iter().enumerate() {
        text.push_str(&format!("[v{i}]\nfilename=v.dat\n{l}\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("forms.fio");
    std::fs::write(&file, &text).unwrap();
    let ctx = Context {
        env: Env::Fixed(BTreeMap::new()),
        keywords: Keywords::detect(),
    };
    crate::import::fio::parse_file_with(&file, &ctx).unwrap();
    let out = run(fio, &["--debug=parse", "--parse-only"], &file);
    let debug = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !debug.contains("Parsing section") {
        eprintln!("SKIPPED: this fio prints no --debug=parse output");
        return;
    }
    let compared = compare_sections(&file, &debug, &ctx);
    eprintln!("{compared} value forms compared with fio");
    assert!(compared >= 150, "only {compared} compared");
}

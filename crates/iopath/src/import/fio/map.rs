//! From a fio job file to iopath's job model: each fio job becomes one case
//! entry (its `rw`, `bs`, `iodepth`, `numjobs` as threads, sync options,
//! labelled with the job's name), run through the job's own engine and
//! every other method (or only its own: `--only-fio-engine`). fio's
//! defaults apply where the file says nothing (4 KiB blocks, depth 1, no
//! fsync, `invalidate=1`), not iopath's.
//!
//! Jobs fio runs at the same time (no `stonewall` between them) become
//! one case entry of streams: each job's own case as a stream, all run
//! together through each method (`CaseSpec::streams`).
//!
//! What iopath cannot do the way fio would is refused, each reason with
//! the option and the line that asks for it: jobs of one group with
//! different runtimes, several files, trims, sequential read/write mixes,
//! `rw=...:N` holes, block-size ranges, `fsync=N` beside `fdatasync=M`, jobs
//! that disagree on the file, its size or the run time. Options with no
//! mapping are listed and refused (exit 2), or with `--ignore-unknown`
//! named in the result's warnings. docs/fio-jobs.md has the table.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use iopath_io::data::DataMode;
use iopath_io::numa::MemPolicyMode;
use iopath_io::{Method, SyncCall, SyncEvery, SyncPolicy};

mod group;

use super::{FioJob, FioJobFile, Given, NodeSet, NumaMemPolicy, RwKind, Size, SyncMode};
use crate::model::job::{CaseSpec, JobSpec, RunSpec};
use crate::model::words::{Bytes, Dur, List, RepTime, Span, Until};
use crate::model::{CacheState, Pattern, UsageError};
use group::{group_case, group_problems, offsets_of};

/// How a fio job file is mapped.
#[derive(Debug, Clone, Copy, Default)]
pub struct MapOptions {
    /// Run each job through its own engine only (`--only-fio-engine`).
    pub only_own_engine: bool,
    /// Run with the options that have no mapping left out, each named in
    /// the result's warnings (`--ignore-unknown`).
    pub ignore_unknown: bool,
}

/// A fio job file as an iopath job.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    pub job: JobSpec,
    /// Options left out (`--ignore-unknown`): `key=value (file:line)`.
    pub ignored: Vec<String>,
}

/// Options fio has that change nothing iopath measures (logs, reporting,
/// `thread` instead of processes), accepted without a word.
const HARMLESS: [&str; 22] = [
    "thread",
    "per_job_logs",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "log_offset",
    "log_unix_epoch",
    "bwavgtime",
    "iopsavgtime",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "significant_figures",
    "disk_util",
    "unified_rw_reporting",
    "stats",
    "exitall",
    "unlink",
];

/// Every option name fio 3.33 knows (generated, see the file's head).
const FIO_OPTIONS: &str = include_str!("fio-options.txt");

/// True when fio knows an option of this name.
fn is_fio_option(key: &str) -> bool {
    FIO_OPTIONS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .any(|l| l == key)
}

/// The fio option nearest a misspelt one, if it is near.
pub(super) fn nearest_option(key: &str) -> Option<&'static str> {
    let len = key.chars().count();
    FIO_OPTIONS
        .lines()
        .filter(|l| !l.starts_with('#'))
        // The distance is at least the difference in length: skip the
        // options too long or too short to be near, so that a long line
        // costs no edit distance against every option (the fuzzer found
        // a few kilobytes of key took 10 ms).
        .filter(|l| len.abs_diff(l.len()) <= 2.max(l.len() / 4))
        .map(|l| (crate::import::jobfile::edit_distance(key, l), l))
        .filter(|(d, l)| *d <= 2.max(l.len() / 4))
        .min()
        .map(|(_, l)| l)
}

/// The method fio's engine (with `direct` and its engine options) is, or
/// why no method does what it does.
pub fn method_of(job: &FioJob) -> Result<Method, String> {
    let direct = flag(&job.direct);
    let engine = job.ioengine.as_ref().map_or("psync", |g| g.value.as_str());
    let (hipri, sqpoll) = (flag(&job.hipri), flag(&job.sqthread_poll));
    let polled = |m: Method| {
        if hipri {
            Err(format!(
                "ioengine={engine} with hipri: polled completions; iopath polls only through io_uring (ioengine=io_uring, direct=1, hipri=1 is uring-iopoll)"
            ))
        } else {
            Ok(m)
        }
    };
    match engine {
        "psync" | "sync" | "pvsync" | "pvsync2" if direct => polled(Method::Direct),
        "psync" | "sync" | "pvsync" | "pvsync2" => polled(Method::Buffered),
        // fio's libaio without O_DIRECT is synchronous buffered I/O.
        "libaio" if direct => Ok(Method::Aio),
        "libaio" => Ok(Method::Buffered),
        "io_uring" if !direct && (hipri || sqpoll) => Err(
            "ioengine=io_uring without direct=1 but with hipri or sqthread_poll: iopath's buffered io_uring (uring-buffered) neither polls nor has a submission thread".into(),
        ),
        "io_uring" if hipri && sqpoll => Err(
            "ioengine=io_uring with both hipri and sqthread_poll: iopath has each (uring-iopoll, uring-sqpoll), not both at once".into(),
        ),
        "io_uring" if !direct => Ok(Method::UringBuffered),
        "io_uring" if hipri => Ok(Method::UringIopoll),
        "io_uring" if sqpoll => Ok(Method::UringSqpoll),
        "io_uring" => Ok(Method::Uring),
        "mmap" => Ok(Method::Mmap),
        "null" => Ok(Method::Null),
        other => Err(format!(
            "ioengine={other}: no iopath method does what it does (mapped: psync, sync, pvsync, pvsync2, libaio, io_uring, mmap, null)"
        )),
    }
}

fn flag(g: &Option<Given<bool>>) -> bool {
    g.as_ref().is_some_and(|g| g.value)
}

/// `key=value (file:line)`.
fn said<T>(g: &Given<T>) -> String {
    shown(&g.key, g.text.as_deref(), &g.at)
}

/// `key=value (file:line)`, the value cut to a readable length.
fn shown(key: &str, value: Option<&str>, at: &super::Location) -> String {
    match value {
        Some(v) if v.chars().count() > 80 => {
            format!("{key}={}... ({at})", v.chars().take(80).collect::<String>())
        }
        Some(v) => format!("{key}={v} ({at})"),
        None => format!("{key} ({at})"),
    }
}

/// Map `file` to an iopath job, or say every reason it cannot be.
pub fn to_job(file: &FioJobFile, opts: MapOptions) -> Result<Mapped, UsageError> {
    if file.jobs.is_empty() {
        return Err(UsageError(format!(
            "{}: no job section: fio would run nothing",
            file.path.display()
        )));
    }
    let mut problems: Vec<String> = Vec::new();
    let mut ignored: BTreeSet<String> = BTreeSet::new();
    let mut typos: BTreeSet<String> = BTreeSet::new();
    let mut mapped: Vec<JobCase> = Vec::new();
    for job in &file.jobs {
        match case_of(job, opts) {
            Ok(m) => mapped.push(m),
            Err(mut p) => problems.append(&mut p),
        }
        sort_unknown(job, &mut ignored, &mut typos);
    }
    problems.extend(typos);
    if !ignored.is_empty() && !opts.ignore_unknown {
        problems.push(format!(
            "options iopath does not map: {} (run with --ignore-unknown to leave them out; each is then named in the result's warnings)",
            ignored.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    // One iopath run has one of each run setting: every job must say the
    // same as the first (sizes aside: the file is the largest, each case
    // addresses its own).
    let run = mapped.first().map(|m| m.run.clone()).unwrap_or_default();
    for (m, job) in mapped.iter().zip(&file.jobs).skip(1) {
        let first = &file.jobs[0].name;
        for key in differing(&run, &m.run) {
            problems.push(format!(
                "[{}] its {key} differs from job {first}'s: one iopath run has one (run the jobs as separate files)",
                m.case.label.as_deref().unwrap_or(&job.name)
            ));
        }
    }
    if !problems.is_empty() {
        let problems = merge_jobs(&problems);
        return Err(UsageError(format!(
            "{} cannot run as fio would run it:\n  - {}",
            file.path.display(),
            problems.join("\n  - ")
        )));
    }
    let groups = file.groups();
    for group in &groups {
        problems.extend(group_problems(file, group, &mapped, opts));
    }
    if !problems.is_empty() {
        return Err(UsageError(format!(
            "{} cannot run as fio would run it:\n  - {}",
            file.path.display(),
            problems.join("\n  - ")
        )));
    }
    Ok(Mapped {
        job: assemble(file, run, mapped, &groups),
        ignored: ignored.into_iter().collect(),
    })
}

/// The options of `job` iopath does not know, as fio options it does not
/// map (`ignored`) or names fio does not know either (`typos`, with the
/// nearest option fio knows).
fn sort_unknown(job: &FioJob, ignored: &mut BTreeSet<String>, typos: &mut BTreeSet<String>) {
    for u in job
        .unknown
        .iter()
        .filter(|u| !HARMLESS.contains(&u.key.as_str()))
    {
        let text = shown(&u.key, u.value.as_deref(), &u.at);
        if is_fio_option(&u.key) {
            ignored.insert(text);
        } else {
            let hint = nearest_option(&u.key)
                .map(|k| format!("; did you mean `{k}`?"))
                .unwrap_or_default();
            typos.insert(format!("{text}: not an option fio knows{hint}"));
        }
    }
}

/// The job spec of a file whose jobs all mapped: one run setting, the
/// file as large as the largest job, each smaller job on its own span;
/// each group of jobs fio runs at the same time one case of streams.
fn assemble(
    file: &FioJobFile,
    mut run: RunSpec,
    mapped: Vec<JobCase>,
    groups: &[Vec<usize>],
) -> JobSpec {
    let offsets = offsets_of(&mapped, groups);
    let largest = groups
        .iter()
        .filter_map(|g| {
            g.iter()
                .filter_map(|&i| Some(offsets[i] + mapped[i].bytes?))
                .max()
        })
        .max();
    run.size = largest.map(Bytes);
    let owns: Vec<Method> = mapped.iter().map(|m| m.own).collect();
    let mut cases: Vec<Option<CaseSpec>> = mapped
        .into_iter()
        .zip(offsets)
        .map(
            |(
                JobCase {
                    mut case, bytes, ..
                },
                offset,
            )| {
                // A job smaller than the file addresses only its own size.
                if let (Some(s), Some(l)) = (bytes, largest) {
                    if s < l {
                        case.span = Some(Span::Bytes(s));
                    }
                }
                case.offset = (offset > 0).then_some(Bytes(offset));
                Some(case)
            },
        )
        .collect();
    let cases = groups
        .iter()
        .filter_map(|g| match g.as_slice() {
            [one] => cases[*one].take(),
            many => {
                let streams: Vec<CaseSpec> = many.iter().filter_map(|&i| cases[i].take()).collect();
                Some(group_case(streams, many.iter().map(|&i| owns[i]).collect()))
            }
        })
        .collect();
    let name = file
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string());
    JobSpec {
        name,
        summary: Some(format!("fio job file {}", file.path.display())),
        run,
        cases,
        ..JobSpec::default()
    }
}

/// The keys two run settings differ in (`size` aside).
fn differing(a: &RunSpec, b: &RunSpec) -> Vec<String> {
    let table = |r: &RunSpec| {
        let mut r = r.clone();
        r.size = None;
        toml::Table::try_from(&r).unwrap_or_default()
    };
    let (ta, tb) = (table(a), table(b));
    let mut keys: Vec<String> = ta.keys().chain(tb.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    keys.retain(|k| ta.get(k) != tb.get(k));
    keys.into_iter().map(|k| fio_name(&k).to_string()).collect()
}

/// What fio calls the option behind a run setting, for messages.
fn fio_name(key: &str) -> &str {
    match key {
        "file" => "filename",
        "dir" => "directory",
        "time" => "runtime",
        "warmup" => "ramp_time",
        "seed" => "randseed",
        "cache" => "invalidate",
        "data" => "zero_buffers/buffer_compress_percentage",
        "cpus" => "cpus_allowed",
        "numa_node" => "numa_cpu_nodes",
        "mem_node" | "mem_policy" => "numa_mem_policy",
        other => other,
    }
}

/// `[a] why` and `[b] why` as `[a, b] why`: a `[global]` option refused
/// once, naming every job it reaches.
fn merge_jobs(problems: &[String]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let mut jobs: std::collections::HashMap<String, Vec<String>> = Default::default();
    for p in problems {
        let (job, why) = match p.strip_prefix('[').and_then(|r| r.split_once("] ")) {
            Some((job, why)) => (Some(job.to_string()), why.to_string()),
            None => (None, p.clone()),
        };
        let entry = jobs.entry(why.clone()).or_insert_with(|| {
            order.push(why.clone());
            Vec::new()
        });
        entry.extend(job);
    }
    order
        .into_iter()
        .map(|why| match jobs[&why].as_slice() {
            [] => why,
            names => format!("[{}] {why}", names.join(", ")),
        })
        .collect()
}

/// One job as iopath runs it.
struct JobCase {
    /// Its case entry.
    case: CaseSpec,
    /// The run settings it implies (every job of a file must imply the
    /// same).
    run: RunSpec,
    /// The bytes its file must hold (`size` x `numjobs` when each clone
    /// has its own).
    bytes: Option<u64>,
    /// The method of its own engine.
    own: Method,
    /// fio gives it files of its own (no `filename=`).
    own_file: bool,
}

/// Where a job's I/O goes: its one file, or a directory for iopath's own.
struct Place {
    file: Option<PathBuf>,
    dir: Option<PathBuf>,
}

/// A refusal, for the job being mapped.
type Refuse<'a> = dyn FnMut(String) + 'a;

/// The job's `iodepth` and `numjobs` (1 each when absent), refused
/// outside what iopath runs.
fn depth_and_threads(job: &FioJob, refuse: &mut Refuse<'_>) -> (u32, u32) {
    let qd = job.iodepth.as_ref().map_or(1, |g| g.value);
    if let Some(g) = job
        .iodepth
        .as_ref()
        .filter(|g| !(1..=4096).contains(&g.value))
    {
        refuse(format!("{}: iopath takes a depth of 1 to 4096", said(g)));
    }
    let threads = job.numjobs.as_ref().map_or(1, |g| g.value);
    if let Some(g) = job
        .numjobs
        .as_ref()
        .filter(|g| !(1..=1024).contains(&g.value))
    {
        refuse(format!("{}: iopath runs 1 to 1024 threads", said(g)));
    }
    (qd, threads)
}

/// One job: its case entry, the run settings it implies, and the bytes
/// its file must hold; or every reason it cannot be mapped.
fn case_of(job: &FioJob, opts: MapOptions) -> Result<JobCase, Vec<String>> {
    let mut p: Vec<String> = Vec::new();
    let name = &job.name;
    let mut refuse = |what: String| p.push(format!("[{name}] {what}"));
    let kind = job.rw.as_ref().map_or(RwKind::Read, |g| g.value.kind);
    let pattern = pattern_of(job, &mut refuse);
    let method = method_of(job)
        .map_err(|e| {
            let at = job
                .ioengine
                .as_ref()
                .map(|g| g.at.clone())
                .unwrap_or_else(|| job.section.clone());
            refuse(format!("{e} ({at})"))
        })
        .ok();
    let bs = block_size_of(job, kind, &mut refuse);
    let (qd, threads) = depth_and_threads(job, &mut refuse);
    let sync_every = sync_every_of(job).map_err(&mut refuse).ok().flatten();
    let sync = sync_of(job).map_err(&mut refuse).ok();
    let place = place_of(job, &mut refuse);
    let own_file = place.file.is_none();
    let bytes = bytes_of(job, own_file, threads, &mut refuse);
    let time_based = flag(&job.time_based);
    let time = job
        .runtime
        .as_ref()
        .map(|g| g.value)
        .filter(|d| !d.is_zero());
    if time_based && time.is_none() {
        refuse("time_based without a runtime: fio would run until stopped".into());
    }
    let touch = touch_of(job, time_based, threads, &mut refuse);
    let mut run = run_of(job, place, time, &mut refuse);
    // fio's verify methods (md5, crc32c, ...) become iopath's own: a
    // header and CRC-32C in every block, checked on read and after writes.
    if job.verify.as_ref().is_some_and(|g| g.value != "0") {
        run.verify = Some(true);
    }
    if !p.is_empty() {
        return Err(p);
    }
    let (Some(pattern), Some(method), Some(sync)) = (pattern, method, sync) else {
        return Err(p);
    };
    let case = CaseSpec {
        label: Some(name.clone()),
        method: Some(List(
            methods_of(method, opts)
                .into_iter()
                .map(Into::into)
                .collect(),
        )),
        pattern: Some(List(vec![pattern])),
        bs: Some(Bytes(bs)),
        qd: Some(qd),
        threads: Some(List(vec![threads])),
        sync: Some(sync),
        sync_every,
        rwmix: (pattern == Pattern::RandRw).then(|| job.rwmixread.as_ref().map_or(50, |g| g.value)),
        // time_based: the runtime alone ends it, passes start over;
        // otherwise one pass over the job's bytes (or the runtime).
        until: Some(if time_based { Until::Time } else { Until::Pass }),
        budget: time.map(Dur),
        touch,
        ..CaseSpec::default()
    };
    Ok(JobCase {
        case,
        run,
        bytes,
        own: method,
        own_file,
    })
}

/// The job's own engine first (what the user runs today), then every
/// default method; or only its own (`--only-fio-engine`).
fn methods_of(method: Method, opts: MapOptions) -> Vec<Method> {
    let mut all = vec![method];
    if !opts.only_own_engine {
        all.extend(
            Method::ALL
                .into_iter()
                .filter(|m| m.in_default_run() && *m != method),
        );
    }
    all
}

/// The pattern of `rw=`, if iopath has it (and no `:N` suffix).
fn pattern_of(job: &FioJob, refuse: &mut Refuse) -> Option<Pattern> {
    let rw = job.rw.as_ref();
    let rw_said = || rw.map_or("rw=read".to_string(), said);
    let pattern = match rw.map_or(RwKind::Read, |g| g.value.kind) {
        RwKind::Read => Some(Pattern::Read),
        RwKind::Write => Some(Pattern::Write),
        RwKind::RandRead => Some(Pattern::RandRead),
        RwKind::RandWrite => Some(Pattern::RandWrite),
        RwKind::RandRw => Some(Pattern::RandRw),
        RwKind::ReadWrite => {
            refuse(format!(
                "{}: a sequential mix of reads and writes is not a pattern iopath has (randrw is)",
                rw_said()
            ));
            None
        }
        _ => {
            refuse(format!("{}: iopath does not measure trims", rw_said()));
            None
        }
    };
    if let Some(g) = rw.filter(|g| g.value.modifier.is_some()) {
        refuse(format!(
            "{}: the `:N` suffix (holes between sequential I/Os, or I/Os per random offset) has no iopath equivalent; drop it to measure the plain pattern",
            said(g)
        ));
    }
    pattern
}

/// The one block size of the job's direction(s), from `bs` or a
/// `bsrange` of one size.
fn block_size_of(job: &FioJob, kind: RwKind, refuse: &mut Refuse) -> u64 {
    let reads = matches!(kind, RwKind::Read | RwKind::RandRead | RwKind::RandRw);
    let writes = matches!(kind, RwKind::Write | RwKind::RandWrite | RwKind::RandRw);
    let mut bs = 4096;
    if let Some(g) = &job.bs {
        let (r, w) = (g.value.read, g.value.write);
        if reads && writes && r != w {
            refuse(format!(
                "{}: randrw with different read and write block sizes; iopath uses one",
                said(g)
            ));
        }
        bs = if reads { r } else { w };
    }
    if let Some(g) = &job.bsrange {
        let (r, w) = (g.value.read, g.value.write);
        let (lo, hi) = if reads { r } else { w };
        if lo != hi || (reads && writes && r != w) {
            refuse(format!(
                "{}: a range of block sizes, or one per direction; iopath uses one (give bs=)",
                said(g)
            ));
        }
        bs = lo;
    }
    if bs == 0 || bs > 1 << 30 {
        refuse(format!("bs={bs}: iopath takes 1 byte to 1 GiB blocks"));
    }
    bs
}

/// The file: one, shared by every job.
fn place_of(job: &FioJob, refuse: &mut Refuse) -> Place {
    let dirs = job
        .directory
        .as_ref()
        .map(|g| g.value.clone())
        .unwrap_or_default();
    if dirs.len() > 1 {
        refuse(format!(
            "{}: several directories; iopath measures one file",
            job.directory.as_ref().map_or(String::new(), said)
        ));
    }
    let dir = dirs.first().map(PathBuf::from);
    let file = match job.filename.as_ref() {
        Some(g) if g.value.len() > 1 => {
            refuse(format!(
                "{}: several files; iopath measures one file (name one)",
                said(g)
            ));
            None
        }
        Some(g) => g.value.first().map(|f| match &dir {
            Some(d) if !f.starts_with('/') => d.join(f),
            _ => PathBuf::from(f),
        }),
        None => None,
    };
    if let (Some(f), Some(g)) = (&file, &job.filename) {
        if f.starts_with("/dev") && !f.exists() {
            refuse(format!(
                "{}: no such device (iopath would make a file there, not measure a device)",
                said(g)
            ));
        }
    }
    Place { file, dir }
}

/// The bytes the job's file must hold, from `size` or `filesize`; each
/// clone of a job without a filename has a file of its own, `size` each:
/// iopath's one file holds them all, one part per thread.
fn bytes_of(job: &FioJob, own_files: bool, threads: u32, refuse: &mut Refuse) -> Option<u64> {
    let size = match job.size.as_ref().map(|g| (g, g.value)) {
        None | Some((_, Size::Percent(100))) => None,
        Some((_, Size::Bytes(b))) => Some(b),
        Some((g, Size::Percent(_))) => {
            refuse(format!("{}: a share of the file; give its size in bytes (or leave it out for the whole file)", said(g)));
            None
        }
    };
    let size = match (&job.filesize, size) {
        (Some(g), _) if g.value.0 != g.value.1 => {
            refuse(format!(
                "{}: a range of file sizes; iopath uses one",
                said(g)
            ));
            size
        }
        (Some(g), None) => Some(g.value.0),
        (_, s) => s,
    };
    size.map(|s| {
        if own_files {
            s.saturating_mul(u64::from(threads))
        } else {
            s
        }
    })
}

/// The bytes each repetition moves (`io_size`, all clones together),
/// unless the run time alone ends it.
fn touch_of(job: &FioJob, time_based: bool, threads: u32, refuse: &mut Refuse) -> Option<Bytes> {
    match job.io_size.as_ref().map(|g| (g, g.value)) {
        None => None,
        Some((_, Size::Bytes(b))) if !time_based => {
            Some(Bytes(b.saturating_mul(u64::from(threads))))
        }
        Some((_, Size::Bytes(_))) => None,
        Some((g, Size::Percent(_))) => {
            refuse(format!("{}: a share of the file; give bytes", said(g)));
            None
        }
    }
}

/// fio's `fsync=N`, `fdatasync=N` with N > 1: a sync every N writes
/// (N = 1 is the policy `each`: [`sync_of`]). Both given: refused.
fn sync_every_of(job: &FioJob) -> Result<Option<SyncEvery>, String> {
    let given = |g: &Option<Given<u32>>| g.as_ref().filter(|g| g.value > 0).cloned();
    match (given(&job.fsync), given(&job.fdatasync)) {
        (Some(a), Some(b)) => Err(format!(
            "{}, {}: fio would make both calls; iopath makes one kind of sync per case: keep fsync= or fdatasync=",
            said(&a),
            said(&b)
        )),
        (Some(g), None) if g.value > 1 => Ok(Some(SyncEvery {
            writes: g.value,
            call: SyncCall::Fsync,
        })),
        (None, Some(g)) if g.value > 1 => Ok(Some(SyncEvery {
            writes: g.value,
            call: SyncCall::Fdatasync,
        })),
        _ => Ok(None),
    }
}

/// fio's sync options as one iopath policy (fio's default: none at all).
fn sync_of(job: &FioJob) -> Result<SyncPolicy, String> {
    let mut wants: Vec<(SyncPolicy, String)> = Vec::new();
    for g in [&job.fsync, &job.fdatasync].into_iter().flatten() {
        // N > 1: a sync every N writes beside the policy (sync_every_of).
        if g.value == 1 {
            wants.push((SyncPolicy::Each, said(g)));
        }
    }
    if let Some(g) = &job.sync {
        match g.value {
            SyncMode::None => {}
            SyncMode::Sync => wants.push((SyncPolicy::Osync, said(g))),
            SyncMode::Dsync => wants.push((SyncPolicy::Dsync, said(g))),
        }
    }
    for g in [&job.end_fsync, &job.fsync_on_close].into_iter().flatten() {
        if g.value {
            wants.push((SyncPolicy::End, said(g)));
        }
    }
    let mut kinds: Vec<SyncPolicy> = wants.iter().map(|(k, _)| *k).collect();
    kinds.dedup();
    match kinds.as_slice() {
        [] => Ok(SyncPolicy::None),
        [one] => Ok(*one),
        _ => Err(format!(
            "{}: fio does each of these; iopath applies one sync policy per case (none, end, dsync, osync or each)",
            wants.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The run settings a job implies (every job of a file must imply the
/// same).
fn run_of(job: &FioJob, place: Place, time: Option<Duration>, refuse: &mut Refuse) -> RunSpec {
    let mut run = RunSpec {
        dir: if place.file.is_none() {
            place.dir
        } else {
            None
        },
        file: place.file,
        // No runtime: one pass per repetition, as fio moves `size` once.
        // A runtime is the job's budget (its case's), not a repetition's.
        time: time.is_none().then_some(RepTime::Pass),
        ..RunSpec::default()
    };
    if job.ramp_time.as_ref().is_some_and(|g| !g.value.is_zero()) {
        // A warm-up repetition, not counted: iopath's ramp.
        run.warmup = Some(1);
    }
    run.seed = job.randseed.as_ref().map(|g| g.value);
    if job.invalidate.as_ref().is_some_and(|g| !g.value) {
        run.cache = Some(CacheState::AsIs);
    }
    if flag(&job.zero_buffers) {
        run.data = Some(DataMode::Zeros);
    }
    if let Some(g) = &job.buffer_compress_percentage {
        run.data = DataMode::parse(&format!("compress:{}", g.value));
    }
    if let Some(g) = &job.cpus_allowed {
        run.cpus = Some(
            g.value
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    if let Some(g) = &job.numa_cpu_nodes {
        match &g.value {
            NodeSet::List(n) if n.len() == 1 => run.numa_node = Some(n[0]),
            NodeSet::All => {}
            _ => refuse(format!("{}: iopath places workers on one node", said(g))),
        }
    }
    if let Some(g) = &job.numa_mem_policy {
        let one = |set: &NodeSet| match set {
            NodeSet::List(n) if n.len() == 1 => Some(n[0]),
            _ => None,
        };
        match &g.value {
            NumaMemPolicy::Default => {}
            NumaMemPolicy::Local => run.mem_policy = Some(MemPolicyMode::Local),
            NumaMemPolicy::Prefer(n) => {
                run.mem_node = Some(*n);
                run.mem_policy = Some(MemPolicyMode::Preferred);
            }
            NumaMemPolicy::Bind(set) if one(set).is_some() => {
                run.mem_node = one(set);
                run.mem_policy = Some(MemPolicyMode::Bind);
            }
            NumaMemPolicy::Interleave(set) if one(set).is_some() => {
                run.mem_node = one(set);
                run.mem_policy = Some(MemPolicyMode::Interleave);
            }
            _ => refuse(format!("{}: iopath places buffers on one node", said(g))),
        }
    }
    run
}

//! From a fio job file to iopath's job model: each fio job becomes one case
//! entry (its `rw`, `bs`, `iodepth`, `numjobs` as threads, sync options,
//! labelled with the job's name), run through the job's own engine and
//! every other method (or only its own: `--only-fio-engine`). fio's
//! defaults apply where the file says nothing (4 KiB blocks, depth 1, no
//! fsync, `invalidate=1`), not iopath's.
//!
//! What iopath cannot do the way fio would is refused, each reason with
//! the option and the line that asks for it: jobs fio runs at the same
//! time (iopath measures one case at a time; only `numjobs` clones run
//! together, as threads), several files, trims, sequential read/write mixes,
//! `rw=...:N` holes, block-size ranges, fsync every N > 1 writes, jobs
//! that disagree on the file, its size or the run time. Options with no
//! mapping are listed and refused (exit 2), or with `--ignore-unknown`
//! named in the result's warnings. docs/fio-jobs.md has the table.

use std::path::PathBuf;
use std::time::Duration;

use iopath_io::data::DataMode;
use iopath_io::numa::MemPolicyMode;
use iopath_io::{Method, SyncPolicy};

use super::{FioJob, FioJobFile, Given, NodeSet, NumaMemPolicy, RwKind, Size, SyncMode};
use crate::model::job::{CaseSpec, JobSpec, RunSpec};
use crate::model::words::{Bytes, List, RepTime};
use crate::model::{CacheState, Pattern, UsageError};

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

/// Options that change nothing iopath measures, accepted without a word.
const HARMLESS: [&str; 9] = [
    "description",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "group_reporting",
    "kb_base",
    "randrepeat",
    "refill_buffers",
    "invalidate",
];

/// The method fio's engine (with `direct`) is, or why there is none.
pub fn method_of(job: &FioJob) -> Result<Method, String> {
    let direct = flag(&job.direct);
    let engine = job.ioengine.as_ref().map_or("psync", |g| g.value.as_str());
    let on = |g: &Option<Given<bool>>| flag(g);
    Ok(match engine {
        "psync" | "sync" | "pvsync" | "pvsync2" => {
            if direct {
                Method::Direct
            } else {
                Method::Buffered
            }
        }
        // fio's libaio without O_DIRECT is synchronous buffered I/O.
        "libaio" if direct => Method::Aio,
        "libaio" => Method::Buffered,
        "io_uring" if !direct => Method::UringBuffered,
        "io_uring" if on(&job.hipri) => Method::UringIopoll,
        "io_uring" if on(&job.sqthread_poll) => Method::UringSqpoll,
        "io_uring" => Method::Uring,
        "mmap" => Method::Mmap,
        "null" => Method::Null,
        other => {
            return Err(format!(
                "ioengine={other}: no iopath method does what it does (mapped: psync, sync, pvsync, pvsync2, libaio, io_uring, mmap, null)"
            ))
        }
    })
}

fn flag(g: &Option<Given<bool>>) -> bool {
    g.as_ref().is_some_and(|g| g.value)
}

/// `key=value (file:line)`.
fn said<T>(g: &Given<T>) -> String {
    match &g.text {
        Some(t) => format!("{}={t} ({})", g.key, g.at),
        None => format!("{} ({})", g.key, g.at),
    }
}

/// Map `file` to an iopath job, or say every reason it cannot be.
pub fn to_job(file: &FioJobFile, opts: MapOptions) -> Result<Mapped, UsageError> {
    let mut problems: Vec<String> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    if file.jobs.is_empty() {
        return Err(UsageError(format!(
            "{}: no job section: fio would run nothing",
            file.path.display()
        )));
    }
    for group in file.groups() {
        if group.len() > 1 {
            let names: Vec<&str> = group.iter().map(|&i| file.jobs[i].name.as_str()).collect();
            problems.push(format!(
                "jobs {} run at the same time in fio (no stonewall between them): iopath measures one case at a time, so their figures would not be fio's; add `stonewall` to each job after the first to run them one after the other, or give concurrency as numjobs (threads)",
                names.join(", ")
            ));
        }
    }
    let mut run = RunSpec::default();
    let mut cases = Vec::new();
    // Settings one iopath run has once: every job must agree.
    let mut agree = Agree::default();
    for job in &file.jobs {
        match case_of(job, opts, &mut run, &mut agree) {
            Ok(c) => cases.push(c),
            Err(mut p) => problems.append(&mut p),
        }
        for u in &job.unknown {
            if HARMLESS.contains(&u.key.as_str()) {
                continue;
            }
            let text = match &u.value {
                Some(v) => format!("{}={v} ({})", u.key, u.at),
                None => format!("{} ({})", u.key, u.at),
            };
            if !ignored.contains(&text) {
                ignored.push(text);
            }
        }
    }
    if !ignored.is_empty() && !opts.ignore_unknown {
        problems.push(format!(
            "options iopath does not map: {} (run with --ignore-unknown to leave them out; each is then named in the result's warnings)",
            ignored.join(", ")
        ));
    }
    if !problems.is_empty() {
        let problems = merge_jobs(&problems);
        return Err(UsageError(format!(
            "{} cannot run as fio would run it:\n  - {}",
            file.path.display(),
            problems.join("\n  - ")
        )));
    }
    let first = agree.first.as_ref();
    run.file = first.and_then(|f| f.file.clone());
    if run.file.is_none() {
        run.dir = agree.dir.clone();
    }
    run.size = agree.size.map(Bytes);
    run.time = Some(match first.and_then(|f| f.time) {
        Some(d) => RepTime::Limit(d),
        None => RepTime::Pass,
    });
    let name = file
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string());
    Ok(Mapped {
        job: JobSpec {
            name,
            summary: Some(format!("fio job file {}", file.path.display())),
            run,
            cases,
            ..JobSpec::default()
        },
        ignored,
    })
}

/// `[a] why` and `[b] why` as `[a, b] why`: a `[global]` option refused
/// once, naming every job it reaches.
fn merge_jobs(problems: &[String]) -> Vec<String> {
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    for p in problems {
        let split = p
            .strip_prefix('[')
            .and_then(|r| r.split_once("] "))
            .map(|(job, why)| (job.to_string(), why.to_string()));
        match split {
            Some((job, why)) => match out.iter_mut().find(|(_, w)| *w == why) {
                Some((jobs, _)) => jobs.push(job),
                None => out.push((vec![job], why)),
            },
            None => out.push((Vec::new(), p.clone())),
        }
    }
    out.into_iter()
        .map(|(jobs, why)| {
            if jobs.is_empty() {
                why
            } else {
                format!("[{}] {why}", jobs.join(", "))
            }
        })
        .collect()
}

/// What one job says of the settings all jobs must share.
#[derive(Debug, Clone)]
struct Shared {
    name: String,
    file: Option<PathBuf>,
    size: Option<u64>,
    time: Option<Duration>,
}

/// The settings all jobs must share: what the first job said.
#[derive(Debug, Default)]
struct Agree {
    first: Option<Shared>,
    dir: Option<PathBuf>,
    size: Option<u64>,
}

/// One job as a case entry (and the run settings it implies).
fn case_of(
    job: &FioJob,
    opts: MapOptions,
    run: &mut RunSpec,
    agree: &mut Agree,
) -> Result<CaseSpec, Vec<String>> {
    let mut p: Vec<String> = Vec::new();
    let name = &job.name;
    let mut refuse = |what: String| p.push(format!("[{name}] {what}"));
    let rw = job.rw.as_ref();
    let kind = rw.map_or(RwKind::Read, |g| g.value.kind);
    let pattern = match kind {
        RwKind::Read => Some(Pattern::Read),
        RwKind::Write => Some(Pattern::Write),
        RwKind::RandRead => Some(Pattern::RandRead),
        RwKind::RandWrite => Some(Pattern::RandWrite),
        RwKind::RandRw => Some(Pattern::RandRw),
        RwKind::ReadWrite => {
            refuse(format!(
                "{}: a sequential mix of reads and writes is not a pattern iopath has (randrw is)",
                rw.map_or(String::new(), said)
            ));
            None
        }
        _ => {
            refuse(format!(
                "{}: iopath does not measure trims",
                rw.map_or(String::new(), said)
            ));
            None
        }
    };
    if let Some(g) = rw.filter(|g| g.value.modifier.is_some()) {
        refuse(format!(
            "{}: the `:N` suffix (holes between sequential I/Os, or I/Os per random offset) has no iopath equivalent; drop it to measure the plain pattern",
            said(g)
        ));
    }
    let method = match method_of(job) {
        Ok(m) => Some(m),
        Err(e) => {
            refuse(format!(
                "{e} ({})",
                job.ioengine
                    .as_ref()
                    .map_or(String::new(), |g| g.at.to_string())
            ));
            None
        }
    };
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
        let (lo, hi) = if reads { g.value.read } else { g.value.write };
        if lo != hi {
            refuse(format!(
                "{}: a range of block sizes; iopath uses one (give bs= or bsrange=N-N)",
                said(g)
            ));
        }
        bs = lo;
    }
    let qd = job.iodepth.as_ref().map_or(1, |g| g.value);
    let threads = job.numjobs.as_ref().map_or(1, |g| g.value);
    // Sync: fio's default is none at all.
    let mut sync = SyncPolicy::None;
    if let Some(g) = job.fsync.as_ref().or(job.fdatasync.as_ref()) {
        match g.value {
            0 => {}
            1 => sync = SyncPolicy::Each,
            _ => refuse(format!(
                "{}: iopath syncs after every write (1) or at the end, not every N writes",
                said(g)
            )),
        }
    }
    if (flag(&job.end_fsync) || flag(&job.fsync_on_close)) && sync == SyncPolicy::None {
        sync = SyncPolicy::End;
    }
    if let Some(g) = &job.sync {
        sync = match g.value {
            SyncMode::None => sync,
            SyncMode::Sync => SyncPolicy::Osync,
            SyncMode::Dsync => SyncPolicy::Dsync,
        };
    }
    // The file: one, shared by every job.
    let dir = job
        .directory
        .as_ref()
        .map(|g| g.value.clone())
        .unwrap_or_default();
    if dir.len() > 1 {
        refuse(format!(
            "{}: several directories; iopath measures one file",
            job.directory.as_ref().map_or(String::new(), said)
        ));
    }
    let dir = dir.first().map(PathBuf::from);
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
    let size = match job.size.as_ref().map(|g| (g, g.value)) {
        None => None,
        Some((_, Size::Bytes(b))) => Some(b),
        Some((_, Size::Percent(100))) => None,
        Some((g, Size::Percent(_))) => {
            refuse(format!(
                "{}: a share of the file; give its size in bytes (or leave it out for the whole file)",
                said(g)
            ));
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
    // Time: a time_based job runs for its runtime; otherwise a pass over
    // its size, cut at runtime if it has one.
    let time = job
        .runtime
        .as_ref()
        .map(|g| g.value)
        .filter(|d| !d.is_zero());
    if flag(&job.time_based) && time.is_none() {
        refuse("time_based without a runtime: fio would run until stopped".into());
    }
    let mut touch = None;
    match job.io_size.as_ref().map(|g| (g, g.value)) {
        None => {}
        Some((_, Size::Bytes(b))) => touch = Some(Bytes(b.saturating_mul(u64::from(threads)))),
        Some((g, Size::Percent(_))) => {
            refuse(format!("{}: a share of the file; give bytes", said(g)))
        }
    }
    if flag(&job.time_based) {
        touch = None;
    } else if touch.is_none() && kind.is_random() {
        // fio moves `size` bytes per clone, at random offsets.
        touch = size.map(|b| Bytes(b.saturating_mul(u64::from(threads))));
    }
    // Settings of the run, which every job must share.
    if let Some(Shared {
        name: n,
        file: f,
        size: s,
        time: t,
    }) = &agree.first
    {
        if *f != file {
            refuse(format!(
                "a different file from job {n}: iopath measures one file per run"
            ));
        }
        if s.is_some() && size.is_some() && *s != size {
            refuse(format!(
                "a different size from job {n}: iopath's file has one size"
            ));
        }
        if *t != time {
            refuse(format!(
                "a different runtime from job {n}: one iopath run has one time limit (split the file, or give --time)"
            ));
        }
    }
    if agree.first.is_none() {
        agree.first = Some(Shared {
            name: name.clone(),
            file,
            size,
            time,
        });
    }
    agree.dir = agree.dir.take().or(dir);
    agree.size = agree.size.max(size);
    if let Some(g) = &job.ramp_time {
        if !g.value.is_zero() && run.warmup.is_none() {
            // A warm-up repetition, not counted: iopath's ramp.
            run.warmup = Some(1);
        }
    }
    if let Some(g) = &job.randseed {
        run.seed = Some(g.value);
    }
    if let Some(g) = &job.invalidate {
        if !g.value {
            run.cache = Some(CacheState::AsIs);
        }
    }
    if flag(&job.zero_buffers) {
        run.data = Some(DataMode::Zeros);
    }
    if let Some(g) = &job.buffer_compress_percentage {
        run.data = DataMode::parse(&format!("compress:{}", g.value));
    }
    if let Some(g) = &job.verify {
        if g.value != "0" {
            refuse(format!("{}: iopath does not verify data yet", said(g)));
        }
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
        match &g.value {
            NumaMemPolicy::Default => {}
            NumaMemPolicy::Local => run.mem_policy = Some(MemPolicyMode::Local),
            NumaMemPolicy::Prefer(n) => {
                run.mem_node = Some(*n);
                run.mem_policy = Some(MemPolicyMode::Preferred);
            }
            NumaMemPolicy::Bind(NodeSet::List(n)) if n.len() == 1 => {
                run.mem_node = Some(n[0]);
                run.mem_policy = Some(MemPolicyMode::Bind);
            }
            NumaMemPolicy::Interleave(NodeSet::List(n)) if n.len() == 1 => {
                run.mem_node = Some(n[0]);
                run.mem_policy = Some(MemPolicyMode::Interleave);
            }
            _ => refuse(format!("{}: iopath places buffers on one node", said(g))),
        }
    }
    let rwmix = job.rwmixread.as_ref().map(|g| g.value);
    if !p.is_empty() {
        return Err(p);
    }
    let (Some(pattern), Some(method)) = (pattern, method) else {
        return Err(p);
    };
    let methods = if opts.only_own_engine {
        vec![method]
    } else {
        let mut all: Vec<Method> = Method::ALL
            .into_iter()
            .filter(|m| m.in_default_run() || *m == method)
            .collect();
        // The job's own engine first: it is what the user runs today.
        all.retain(|m| *m != method);
        all.insert(0, method);
        all
    };
    Ok(CaseSpec {
        label: Some(name.clone()),
        method: Some(List(methods)),
        pattern: Some(List(vec![pattern])),
        bs: Some(Bytes(bs)),
        qd: Some(qd),
        threads: Some(List(vec![threads])),
        sync: Some(sync),
        rwmix: (pattern == Pattern::RandRw).then(|| rwmix.unwrap_or(50)),
        touch,
        ..CaseSpec::default()
    })
}

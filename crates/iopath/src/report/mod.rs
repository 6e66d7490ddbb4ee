//! Exporters: the terminal table, the JSON document (also in fio's shape),
//! the HTML report with its charts (also as PNG files), CSV and Markdown,
//! each an [`export::Exporter`]. All of them read a [`RunResult`] only, so
//! `iopath report` makes the same files from a saved JSON as `iopath run`
//! makes at the end of a run.

pub mod charts;
pub mod compare;
pub mod costs;
pub mod cpu_kind;
pub mod csv;
pub mod export;
pub mod fio_json;
pub mod grids;
pub mod heading;
pub mod html;
pub mod json;
pub mod latency_split;
pub mod markdown;
pub mod mpi;
pub mod overview;
pub mod prose;
pub mod screen;
pub mod stacked;
pub mod streams;
pub mod table;
pub mod text;
pub mod trace;
pub mod width;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use crate::plan::UsageError;
use crate::report::export::{Destination, Exporter, Terminal};
use crate::result::{CaseResult, Job, RunResult};

/// The report files a run or `iopath report` can write.
#[derive(Debug, Clone, Default, Args)]
pub struct Outputs {
    /// Write a self-contained HTML report to FILE, or `-` for stdout.
    ///
    /// Charts inline: it opens offline.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write one CSV row per case and repetition to FILE, or `-` for stdout
    /// (columns: docs/reports.md).
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub csv: Option<PathBuf>,

    /// Write Markdown tables and verdicts to FILE, or `-` for stdout.
    ///
    /// Ready to paste into an issue.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Write every chart of the HTML report as a PNG file into DIR (created
    /// if missing; files named like `randread-4k-q32-t1-latency.png`).
    #[arg(long, value_name = "DIR", hide_short_help = true)]
    pub png_dir: Option<PathBuf>,

    /// Print everything (--explain) with every column of the tables.
    ///
    /// The columns n, p50, p99.9 and notes, however wide.
    #[arg(long)]
    pub wide: bool,

    /// Print everything: legend, notes, full verdicts, warnings.
    ///
    /// The legend of the columns, every table's notes, the full verdicts,
    /// the warnings and what did not run, in 120 columns. Without it the
    /// terminal gets one screen in its width: a compact table per pattern,
    /// its verdict in a line, and a summary.
    #[arg(long, short = 'v')]
    pub explain: bool,
}

impl Outputs {
    /// How the terminal report is laid out: as asked, in the terminal's
    /// width.
    pub fn view(&self) -> screen::View {
        screen::View {
            explain: self.explain,
            wide: self.wide,
            width: width::stdout_width(),
        }
    }
}

/// True when `p` is stdout: `-`, or a name of descriptor 1
/// (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`), whatever it leads to
/// (a terminal, a pipe, a file the shell opened).
pub fn is_stdout(p: &Path) -> bool {
    ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]
        .iter()
        .any(|s| p.as_os_str() == *s)
}

/// True when `p` names a descriptor this process holds (`/dev/stderr`,
/// `/dev/fd/N`, `/proc/self/fd/N`): what it leads to was opened by whoever
/// started iopath, and is written through, never replaced.
pub fn names_descriptor(p: &Path) -> bool {
    let s = p.as_os_str().as_encoded_bytes();
    ["/dev/stdout", "/dev/stderr", "/dev/stdin"]
        .iter()
        .any(|d| s == d.as_bytes())
        || ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"]
            .iter()
            .any(|d| s.starts_with(d.as_bytes()))
}

/// True when `p` is written as a stream, once at the end, never replaced:
/// stdout, a descriptor, or anything but a regular file (a FIFO, a
/// terminal).
pub fn is_stream(p: &Path) -> bool {
    is_stdout(p) || names_descriptor(p) || std::fs::metadata(p).is_ok_and(|m| !m.is_file())
}

impl Outputs {
    pub fn any(&self) -> bool {
        self.html.is_some()
            || self.csv.is_some()
            || self.markdown.is_some()
            || self.png_dir.is_some()
    }

    /// True when one of them goes to stdout (`-`).
    pub fn uses_stdout(&self) -> bool {
        [&self.html, &self.csv, &self.markdown]
            .into_iter()
            .flatten()
            .any(|p| is_stdout(p))
    }

    /// Refuse, before any I/O, what could only fail at the end of a run: a
    /// directory or device named as a file, a missing or read-only parent
    /// directory, two outputs on one file (however spelled) or two on
    /// stdout. `json` is the run's `--json`, if any; `input` a file that no
    /// output may replace (`iopath report`'s result).
    pub fn check(&self, json: Option<&Path>, input: Option<&Path>) -> Result<(), UsageError> {
        let files = [
            ("--json", json),
            ("--html", self.html.as_deref()),
            ("--csv", self.csv.as_deref()),
            ("--markdown", self.markdown.as_deref()),
        ];
        // (flag, as given, identity)
        let mut seen: Vec<(&str, &Path, PathBuf)> = Vec::new();
        for (flag, path) in files {
            let Some(p) = path else { continue };
            if is_stdout(p) {
                seen.push((flag, p, PathBuf::from("-")));
                continue;
            }
            if names_descriptor(p) {
                seen.push((flag, p, p.to_path_buf()));
                continue;
            }
            check_file(flag, p)?;
            seen.push((flag, p, identity(p)));
        }
        if let Some(d) = &self.png_dir {
            if d.exists() && !d.is_dir() {
                return Err(UsageError(format!(
                    "--png-dir {} is not a directory: name a directory (it is created if missing)",
                    d.display()
                )));
            }
            let parent = if d.exists() {
                d.as_path()
            } else {
                parent_of(d)
            };
            if !parent.is_dir() {
                return Err(UsageError(format!(
                    "--png-dir {}: directory {} does not exist",
                    d.display(),
                    parent.display()
                )));
            }
            writable_dir("--png-dir", d, parent)?;
            seen.push(("--png-dir", d, identity(d)));
        }
        if let Some(input) = input {
            let id = identity(input);
            if let Some((flag, p, _)) = seen.iter().find(|(_, _, i)| *i == id) {
                return Err(UsageError(format!(
                    "{flag} {} is the result being read: write the report to another file",
                    p.display()
                )));
            }
        }
        for (i, (fa, a, ia)) in seen.iter().enumerate() {
            for (fb, b, ib) in &seen[i + 1..] {
                if ia == ib {
                    let what = if is_stdout(a) {
                        "both write to stdout (`-`)".to_string()
                    } else if a == b {
                        format!("both name {}", a.display())
                    } else {
                        format!("name the same file ({} and {})", a.display(), b.display())
                    };
                    return Err(UsageError(format!(
                        "{fa} and {fb} {what}: give each its own file"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The report files asked for, each with the path its flag named, in
    /// the order they are written.
    pub fn destinations(&self) -> Vec<Destination<'_>> {
        let asked: [(&'static dyn Exporter, &Option<PathBuf>); 4] = [
            (&html::Html, &self.html),
            (&csv::Csv, &self.csv),
            (&markdown::Markdown, &self.markdown),
            (&charts::Png, &self.png_dir),
        ];
        asked
            .into_iter()
            .filter_map(|(exporter, path)| {
                Some(Destination {
                    exporter,
                    path: path.as_deref()?,
                })
            })
            .collect()
    }

    /// The terminal tables, as `--wide` asks.
    pub fn terminal(&self) -> Terminal {
        Terminal { view: self.view() }
    }

    /// Write every report asked for; one that fails does not stop the
    /// others, and the error names every one that failed.
    pub fn write(&self, r: &RunResult) -> Result<()> {
        let failed: Vec<String> = self
            .destinations()
            .iter()
            .filter_map(|d| export::write(d.exporter, d.path, r).err())
            .map(|e| format!("{e:#}"))
            .collect();
        if failed.is_empty() {
            Ok(())
        } else {
            Err(anyhow::anyhow!("{}", failed.join("; ")))
        }
    }
}

fn parent_of(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// What a path names, for telling two spellings of one file apart: the
/// real directory and the file name (`./a.json`, `a.json` and
/// `../d/a.json` from `d` are one file; a symbolic link is followed).
fn identity(p: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(p) {
        return real;
    }
    match (std::fs::canonicalize(parent_of(p)), p.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => p.to_path_buf(),
    }
}

fn writable_dir(flag: &str, p: &Path, dir: &Path) -> Result<(), UsageError> {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).map_err(|e| {
        UsageError(format!(
            "{flag} {}: cannot write in {} ({e}); choose a directory you can write to",
            p.display(),
            dir.display()
        ))
    })
}

/// A path a report file can be written to: a file name (not a directory,
/// not a device), in a directory that exists and can be written to.
pub fn check_file(flag: &str, p: &Path) -> Result<(), UsageError> {
    if p.is_dir() {
        return Err(UsageError(format!(
            "{flag} {} is a directory: name a file in it",
            p.display()
        )));
    }
    if p.file_name().is_none() || p.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(UsageError(format!(
            "{flag} {}: not a file name; name a file (`report.html`)",
            p.display()
        )));
    }
    if let Ok(m) = std::fs::metadata(p) {
        use std::os::unix::fs::FileTypeExt;
        if m.file_type().is_block_device() {
            return Err(UsageError(format!(
                "{flag} {} is a block device: reports go to files, never onto a disk",
                p.display()
            )));
        }
    }
    let parent = parent_of(p);
    if !parent.is_dir() {
        return Err(UsageError(format!(
            "{flag} {}: directory {} does not exist",
            p.display(),
            parent.display()
        )));
    }
    if std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
        // Replaced through a new file beside it: the directory must be
        // writable, not just the file.
        return writable_dir(flag, p, parent);
    }
    if std::fs::metadata(p).is_err() {
        return writable_dir(flag, p, parent);
    }
    Ok(())
}

/// Write `bytes` to `path`: `-` is stdout; a regular file (or a new one) is
/// replaced atomically, written beside it under a new name and renamed, so
/// a reader never sees half a file and a failure leaves nothing behind; a
/// symbolic link is followed (the file it names is replaced); a FIFO or
/// character device (`/dev/stdout`) is opened and written, never replaced.
pub fn write_output(path: &Path, bytes: &[u8], flag: &str) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        return Ok(out.flush()?);
    }
    let cannot =
        |e: &dyn std::fmt::Display| format!("{flag}: cannot write {}: {e}", path.display());
    if path.as_os_str() == "/dev/stderr" {
        let mut err = std::io::stderr().lock();
        return err
            .write_all(bytes)
            .and_then(|()| err.flush())
            .map_err(|e| anyhow::anyhow!(cannot(&e)));
    }
    if names_descriptor(path) {
        // What the descriptor leads to, written where it stands: appended
        // to a file the shell opened (`3>out.json`), never renamed over.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!(cannot(&e)))?;
        return f.write_all(bytes).map_err(|e| anyhow::anyhow!(cannot(&e)));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => Err(anyhow::anyhow!(
            "{flag} {} is a block device: reports go to files, never onto a disk",
            path.display()
        )),
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| anyhow::anyhow!(cannot(&e)))?;
            f.write_all(bytes).map_err(|e| anyhow::anyhow!(cannot(&e)))
        }
        Ok(m) => {
            let real = std::fs::canonicalize(path).map_err(|e| anyhow::anyhow!(cannot(&e)))?;
            replace(&real, bytes, flag, Some(m.permissions()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                return Err(anyhow::anyhow!(
                    "{flag} {} is a symbolic link to nothing: remove it or name another file",
                    path.display()
                ));
            }
            replace(path, bytes, flag, None)
        }
        Err(e) => Err(anyhow::anyhow!(cannot(&e))),
    }
}

/// Write `bytes` to a new file beside `path` (a name nobody else holds,
/// created exclusively, so no existing file or link is ever followed or
/// truncated), then rename it over `path`, keeping `path`'s permissions
/// when it existed. On failure the new file is removed.
fn replace(
    path: &Path,
    bytes: &[u8],
    flag: &str,
    perms: Option<std::fs::Permissions>,
) -> Result<()> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let name = path
        .file_name()
        .with_context(|| format!("{flag} {}: not a file name", path.display()))?
        .to_string_lossy()
        .into_owned();
    let mut attempt = 0;
    let (tmp, mut f) = loop {
        let tmp = path.with_file_name(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "{flag}: cannot write {}: {e}",
                    tmp.display()
                ))
            }
        }
    };
    let written = (|| -> std::io::Result<()> {
        f.write_all(bytes)?;
        if let Some(p) = perms {
            f.set_permissions(p)?;
        }
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("{flag}: cannot write {}: {e}", path.display())
    })
}

/// The cases in groups that differ only by method (a verdict's group), in
/// the order the groups first appear, cases in run order.
pub fn groups(r: &RunResult) -> Vec<(Job, Vec<&CaseResult>)> {
    let mut out: Vec<(Job, Vec<&CaseResult>)> = Vec::new();
    for c in &r.cases {
        let job = c.job();
        match out.iter_mut().find(|(j, _)| *j == job) {
            Some((_, v)) => v.push(c),
            None => out.push((job, vec![c])),
        }
    }
    out
}

/// What an interruption left behind, as facts: the jobs it stopped in
/// (labels at the depth their rows show), the cases it cut short (inside a
/// repetition, or between two), those it stopped before a repetition
/// finished, and those it never reached.
struct Interruption<'a> {
    jobs: Vec<String>,
    cut: Vec<&'a CaseResult>,
    started: Vec<&'a CaseResult>,
    never_reached: Vec<&'a CaseResult>,
}

impl<'a> Interruption<'a> {
    fn of(r: &'a RunResult) -> Interruption<'a> {
        let mut cut: Vec<&CaseResult> = Vec::new();
        let mut none: Vec<&CaseResult> = Vec::new();
        let never = CaseResult::not_reached;
        let running = running_job(r);
        for c in r
            .cases
            .iter()
            .filter(|c| (c.skipped.is_none() || never(c)) && c.error.is_none())
        {
            if never(c) || c.summary.is_none() || c.repetitions.iter().all(|m| m.warmup) {
                none.push(c);
            } else if c.repetitions.iter().any(|m| m.interrupted)
                || (c
                    .repetition_control
                    .as_ref()
                    .is_some_and(|rc| rc.stopped_by == crate::stats::StopReason::Stopped)
                    && running.as_ref() == Some(&c.job_key()))
            {
                // Cut inside a repetition, or between two: the interruption
                // stopped it short of its rounds either way.
                cut.push(c);
            }
        }
        let (never_reached, started): (Vec<&CaseResult>, Vec<&CaseResult>) =
            none.iter().partition(|c| never(c));
        // The jobs it stopped in: those of the cases cut short or started
        // without a repetition finished (not those never reached), at the
        // depth their table rows show (the one each case ran at).
        let mut jobs: Vec<String> = Vec::new();
        for c in cut.iter().chain(&started) {
            let label = c.ran_label();
            if !jobs.contains(&label) {
                jobs.push(label);
            }
        }
        Interruption {
            jobs,
            cut,
            started,
            never_reached,
        }
    }
}

/// The job running when the signal came: the one whose repetition ran
/// last (the highest seq; results without seq ran in the plan's order). A
/// case of another job that stopped early stopped for its own reason (a
/// refusal after good repetitions).
fn running_job(r: &RunResult) -> Option<crate::result::JobKey> {
    let last_seq = |c: &CaseResult| c.repetitions.iter().filter_map(|m| m.seq).max();
    r.cases
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.repetitions.is_empty())
        .max_by_key(|(i, c)| (last_seq(c), *i))
        .map(|(_, c)| c.job_key())
}

/// Cases named in groups (`buffered, direct on randread 4k Q32T1`),
/// counted first when there are more than 3.
fn case_group(cases: &[&CaseResult]) -> String {
    let named: Vec<(String, String)> = cases
        .iter()
        .map(|c| (c.name(), table::job_shown(c)))
        .collect();
    let pairs: Vec<(&str, &str)> = named
        .iter()
        .map(|(m, j)| (m.as_str(), j.as_str()))
        .collect();
    let said = prose::by_method(&pairs, " ").join("; ");
    match cases.len() {
        n if n > 3 => format!("{n} cases: {said}"),
        _ => said,
    }
}

/// The line an interrupted run's verdicts begin with (every report prints
/// it before them): the job the interruption cut into, the cases it cut
/// short and those left without a repetition, in groups (`5 cases:
/// buffered, direct on randread 4k Q32T1, randwrite 4k Q32T1`), and how
/// many it never reached (listed under "not run", so not again here);
/// `None` for a run that finished.
pub fn interrupted_caveat(r: &RunResult) -> Option<String> {
    if !r.interrupted {
        return None;
    }
    let i = Interruption::of(r);
    let mut s = format!("Interrupted ({})", crate::stop_cause());
    if !i.jobs.is_empty() {
        let jobs: Vec<&str> = i.jobs.iter().map(String::as_str).collect();
        s.push_str(&format!(
            " during {}",
            crate::report::text::verdict::list(&jobs)
        ));
    }
    s.push_str(": the verdicts cover the repetitions that finished before it");
    if !i.cut.is_empty() {
        s.push_str(&format!(
            "; cut short (measured over the repetitions {} completed): {}",
            if i.cut.len() == 1 { "it" } else { "they" },
            case_group(&i.cut)
        ));
    }
    // Started without a repetition finished: named. Never reached: only
    // counted, for the report lists them under "not run" (and the text a
    // pattern it never reached on a line of its own).
    if !i.started.is_empty() {
        s.push_str(&format!("; not run: {}", case_group(&i.started)));
    }
    if !i.never_reached.is_empty() {
        s.push_str(&format!(
            "; never reached: {}",
            crate::model::units::n_of(i.never_reached.len() as u64, "case", "cases")
        ));
    }
    s.push('.');
    Some(s)
}

/// The results the exporters' tests read: a real run (buffered, direct,
/// mmap, uring, aio and a skipped uring-iopoll on read, randread and write;
/// 1 warm-up + 4 repetitions each) and a schema-1 run.
#[cfg(test)]
pub(crate) mod testdata {
    use crate::result::RunResult;

    pub fn fixture() -> RunResult {
        serde_json::from_str(include_str!("../../tests/fixtures/report/run.json")).unwrap()
    }

    pub fn v1() -> RunResult {
        serde_json::from_str(include_str!("../../tests/fixtures/compare/v1.json")).unwrap()
    }
}

//! Exporters: the terminal table, the JSON document, the HTML report with
//! its charts (also as PNG files), CSV and Markdown. All of them read a
//! [`RunResult`] only, so `iopath report` makes the same files from a saved
//! JSON as `iopath run` makes at the end of a run.

pub mod charts;
pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod table;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use crate::plan::UsageError;
use crate::result::{CaseResult, Job, RunResult};

/// The report files a run or `iopath report` can write.
#[derive(Debug, Clone, Default, Args)]
pub struct Outputs {
    /// Write a self-contained HTML report (charts inline, opens offline) to
    /// FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write one CSV row per case and repetition to FILE, or `-` for stdout
    /// (columns: docs/reports.md).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write Markdown tables and verdicts, ready to paste into an issue, to
    /// FILE, or `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Write every chart of the HTML report as a PNG file into DIR (created
    /// if missing; files named like `randread-4k-q32-t1-latency.png`).
    #[arg(long, value_name = "DIR")]
    pub png_dir: Option<PathBuf>,
}

fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
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
    /// directory named as a file, a missing parent directory, two outputs
    /// on one path or two on stdout. `json` is the run's `--json`, if any.
    pub fn check(&self, json: Option<&Path>) -> Result<(), UsageError> {
        let files = [
            ("--html", &self.html),
            ("--csv", &self.csv),
            ("--markdown", &self.markdown),
        ];
        let mut seen: Vec<(&str, &Path)> = Vec::new();
        if let Some(j) = json {
            seen.push(("--json", j));
        }
        for (flag, path) in files {
            let Some(p) = path else { continue };
            if !is_stdout(p) {
                check_file(flag, p)?;
            }
            seen.push((flag, p));
        }
        if let Some(d) = &self.png_dir {
            if d.exists() && !d.is_dir() {
                return Err(UsageError(format!(
                    "--png-dir {} is not a directory: name a directory (it is created if missing)",
                    d.display()
                )));
            }
            if !d.exists() {
                let parent = parent_of(d);
                if !parent.is_dir() {
                    return Err(UsageError(format!(
                        "--png-dir {}: directory {} does not exist",
                        d.display(),
                        parent.display()
                    )));
                }
            }
        }
        for (i, (fa, a)) in seen.iter().enumerate() {
            for (fb, b) in &seen[i + 1..] {
                if a == b {
                    let what = if is_stdout(a) {
                        "both write to stdout (`-`)".to_string()
                    } else {
                        format!("both name {}", a.display())
                    };
                    return Err(UsageError(format!(
                        "{fa} and {fb} {what}: give each its own file"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Write every report asked for.
    pub fn write(&self, r: &RunResult) -> Result<()> {
        if let Some(p) = &self.html {
            write_output(p, html::render(r)?.as_bytes(), "--html")?;
        }
        if let Some(p) = &self.csv {
            write_output(p, csv::render(r)?.as_bytes(), "--csv")?;
        }
        if let Some(p) = &self.markdown {
            write_output(p, markdown::render(r).as_bytes(), "--markdown")?;
        }
        if let Some(d) = &self.png_dir {
            write_pngs(d, r)?;
        }
        Ok(())
    }
}

fn parent_of(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A path a report file can be written to: not a directory, in a directory
/// that exists.
pub fn check_file(flag: &str, p: &Path) -> Result<(), UsageError> {
    if p.is_dir() {
        return Err(UsageError(format!(
            "{flag} {} is a directory: name a file in it",
            p.display()
        )));
    }
    let parent = parent_of(p);
    if !parent.is_dir() {
        return Err(UsageError(format!(
            "{flag} {}: directory {} does not exist",
            p.display(),
            parent.display()
        )));
    }
    Ok(())
}

/// Write `bytes` to `path`: `-` is stdout; a regular file (or a new one) is
/// replaced atomically, written beside it and renamed, so a reader never
/// sees half a file; a symbolic link is followed; anything else (a FIFO,
/// `/dev/stdout`, a device) is opened and written, never replaced.
pub fn write_output(path: &Path, bytes: &[u8], flag: &str) -> Result<()> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        return Ok(out.flush()?);
    }
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("{flag}: cannot write {}", path.display()))?;
            f.write_all(bytes)
                .with_context(|| format!("{flag}: cannot write {}", path.display()))
        }
        Ok(_) => {
            let real = std::fs::canonicalize(path)
                .with_context(|| format!("{flag} {}: cannot resolve the path", path.display()))?;
            replace(&real, bytes, flag)
        }
        Err(_) => replace(path, bytes, flag),
    }
}

/// Write `bytes` beside `path`, then rename over it; on failure nothing is
/// left behind.
fn replace(path: &Path, bytes: &[u8], flag: &str) -> Result<()> {
    let name = path
        .file_name()
        .with_context(|| format!("{flag} {}: not a file name", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.tmp", name.to_string_lossy()));
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("{flag}: cannot write {}: {e}", path.display())
    })
}

/// Every chart as `DIR/<id>.png`, drawn at twice its size for slides.
pub fn write_pngs(dir: &Path, r: &RunResult) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--png-dir: cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    for (job, cases) in groups(r) {
        for fig in charts::figures(&job, &cases) {
            let p = dir.join(format!("{}.png", fig.id));
            write_output(&p, &charts::png(&fig, 2)?, "--png-dir")?;
            written.push(p);
        }
    }
    Ok(written)
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

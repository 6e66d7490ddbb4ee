//! `iopath probe`, `iopath methods` and `iopath report`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use iopath_io::Method;
use serde::Serialize;

use crate::cli::{ProbeArgs, ReportArgs, RunArgs};
use crate::model::units::fmt_bytes;
use crate::plan::{Origin, Plan, TargetSpec, UsageError};
use crate::result::ProbeEntry;
use crate::run::progress::Progress;
use crate::system::sysinfo::{self, System};

/// What `iopath probe` found.
#[derive(Debug, Serialize)]
pub struct ProbeReport {
    pub dir: PathBuf,
    pub system: System,
    pub dio_align_mem: usize,
    pub dio_align_offset: usize,
    pub dio_align_source: String,
    pub memlock_soft: Option<u64>,
    pub memlock_hard: Option<u64>,
    pub io_uring_disabled: Option<u32>,
    /// io_uring feature flags and opcodes, or why io_uring is unavailable.
    pub io_uring: Result<Vec<String>, String>,
    pub aio_max_nr: Option<u64>,
    pub aio_nr: Option<u64>,
    pub methods: Vec<ProbeEntry>,
}

pub fn probe(args: &ProbeArgs, stop: &AtomicBool) -> Result<()> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let report = probe_dir(&dir, stop)?;
    if args.json {
        write_raw((serde_json::to_string_pretty(&report)? + "\n").as_bytes())?;
    } else {
        write_stdout(render_probe(&report, crate::report::width::stdout_width()))?;
    }
    Ok(())
}

/// Probe every method on a small temporary file in `dir`.
pub fn probe_dir(dir: &Path, stop: &AtomicBool) -> Result<ProbeReport> {
    let target = crate::run::target::prepare(
        &TargetSpec::TempIn(dir.to_path_buf()),
        &crate::run::target::Prepare {
            size: Some(1 << 20),
            writes: false,
            copies: false,
            fill: crate::run::target::Fill::random(1),
            stop,
            progress: &Progress::hidden(),
            // What killed runs left in `dir`, removed: said on stderr.
            events: crate::run::Events(&crate::report::text::events::to_stderr),
        },
    )?;
    let align = iopath_io::sys::dio_alignment(target.path());
    let len = align.offset.max(4096);
    let methods = Method::ALL
        .iter()
        .map(|&m| {
            let st = crate::run::probe(m, &target, len, false);
            ProbeEntry {
                method: m.name().into(),
                usable: st.usable(),
                reason: st.unusable.as_ref().map(crate::report::text::skips::skip),
                skip: st.unusable,
                notes: st.notes,
            }
        })
        .collect();
    let (soft, hard) = iopath_io::sys::memlock_limit();
    let read_u64 = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    };
    Ok(ProbeReport {
        dir: dir.to_path_buf(),
        system: sysinfo::collect(target.place()),
        dio_align_mem: align.mem,
        dio_align_offset: align.offset,
        dio_align_source: align.source.into(),
        memlock_soft: soft,
        memlock_hard: hard,
        io_uring_disabled: iopath_io::sys::io_uring_disabled(),
        io_uring: iopath_io::engines::uring::features(),
        aio_max_nr: read_u64("/proc/sys/fs/aio-max-nr"),
        aio_nr: read_u64("/proc/sys/fs/aio-nr"),
        methods,
    })
}

fn limit(v: Option<u64>) -> String {
    v.map_or_else(|| "unlimited".into(), fmt_bytes)
}

/// `iopath probe`'s report, kept to `width` columns (a long line wraps
/// under its value).
pub fn render_probe(r: &ProbeReport, width: usize) -> String {
    // Each line is a 12-column label and its value; a value too long for
    // the width wraps under itself.
    const LABEL: usize = 12;
    let s = probe_lines(r)
        .lines()
        .map(|l| match l.char_indices().nth(LABEL) {
            Some((i, _)) if l.chars().count() > width => {
                crate::model::units::wrap(&l[i..], width, &l[..i], &" ".repeat(LABEL))
            }
            _ => format!("{l}\n"),
        })
        .collect::<String>();
    format!("{s}{}\n", probe_methods(r, width))
}

/// The probe's lines about the directory, kernel and limits.
fn probe_lines(r: &ProbeReport) -> String {
    let mut s = String::new();
    let sys = &r.system;
    let dev = sys.device.as_ref();
    s.push_str(&format!(
        "directory:  {} ({}{})\n",
        r.dir.display(),
        sys.fs_type.as_deref().unwrap_or("unknown file system"),
        dev.map(|d| format!(
            " on {}{}, scheduler {}, {} B logical blocks",
            d.name,
            d.model
                .as_ref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default(),
            d.scheduler.as_deref().unwrap_or("?"),
            d.logical_block_size.unwrap_or(0)
        ))
        .unwrap_or_else(|| ", no block device under it".into())
    ));
    s.push_str(&format!(
        "kernel:     {}   cpus: {}   memory: {}\n",
        sys.kernel.as_deref().unwrap_or("?"),
        sys.cpus,
        sys.memory_bytes.map_or("?".into(), fmt_bytes)
    ));
    s.push_str(&format!(
        "O_DIRECT:   buffers aligned to {} B, offsets and lengths to {} B ({})\n",
        r.dio_align_mem,
        r.dio_align_offset,
        iopath_io::sys::dio_provenance(&r.dio_align_source)
    ));
    s.push_str(&format!(
        "memlock:    soft {}, hard {} (registered io_uring buffers are locked memory)\n",
        limit(r.memlock_soft),
        limit(r.memlock_hard)
    ));
    match &r.io_uring {
        Ok(f) => s.push_str(&format!(
            "io_uring:   available (kernel.io_uring_disabled={}); {}\n",
            r.io_uring_disabled
                .map_or("absent".into(), |v| v.to_string()),
            f.join(" ")
        )),
        Err(e) => s.push_str(&format!("io_uring:   unavailable: {e}\n")),
    }
    s.push_str(&format!(
        "aio:        fs.aio-max-nr {}, in use {}\n",
        r.aio_max_nr.map_or("?".into(), |v| v.to_string()),
        r.aio_nr.map_or("?".into(), |v| v.to_string())
    ));
    s
}

/// The probe's table: each method, usable or not, and why.
fn probe_methods(r: &ProbeReport, width: usize) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width).unwrap_or(u16::MAX))
        .set_header(vec!["method", "usable", "why not / notes"]);
    for m in &r.methods {
        let mut text = m.reason.clone().unwrap_or_default();
        for n in &m.notes {
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str(n);
        }
        t.add_row(vec![
            m.method.to_string(),
            if m.usable { "yes".into() } else { "NO".into() },
            text,
        ]);
    }
    t
}

pub fn methods() -> String {
    use iopath_io::Hint;
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(120)
        .set_header(vec!["method", "what it is", "use it when", "hints"]);
    for m in Method::ALL {
        let mut what = m.summary().to_string();
        if let Some(how) = m.not_compiled_in() {
            what.push_str(&format!(" [not in this build: {how}]"));
        }
        let hints: Vec<&str> = Hint::accepted_by(m).iter().map(|h| h.name()).collect();
        let hints = if hints.is_empty() {
            "-".to_string()
        } else {
            hints.join(" ")
        };
        t.add_row(vec![
            m.name().to_string(),
            what,
            m.when_to_use().into(),
            hints,
        ]);
    }
    let mut out = format!("{t}\n");
    out.push_str(
        "Hints: an option of a method, written after a +: --methods mmap,mmap+random runs mmap without and with MADV_RANDOM side by side.\n",
    );
    let width = Hint::ALL.iter().map(|h| h.name().len()).max().unwrap_or(8);
    for h in Hint::ALL {
        out.push_str(&format!("  {:width$}  {}\n", h.name(), h.summary()));
    }
    out.push_str("\nRun `iopath probe` to see which methods work here. Details: docs/methods.md\n");
    out
}

/// `iopath report RESULT.json`: the report files asked for, or the
/// terminal tables when none is.
pub fn report(args: &ReportArgs) -> Result<std::process::ExitCode> {
    args.reports
        .check(args.json.as_deref(), Some(&args.result))?;
    let mut result = crate::analysis::compare::load(&args.result)?;
    if result.verdicts.is_empty() {
        // Schema 1 had no verdicts: make them as a run of this version would.
        result.verdicts = crate::analysis::verdict::of_run(&result);
    } else {
        // Saved before verdicts had facts: today's facts where they agree.
        crate::analysis::verdict::add_facts(&mut result);
    }
    // Warnings in today's words (from facts found again in an older file).
    crate::report::text::warnings::reword(&mut result);
    crate::report::text::word_verdicts(&mut result);
    match args.json.as_deref() {
        Some(p) if crate::report::is_stdout(p) => {
            crate::report::json::write_stdout(&result, args.json_format)?
        }
        Some(p) => crate::report::json::write_file(p, &result, args.json_format)?,
        None => {}
    }
    if args.reports.any() {
        args.reports.write(&result)?;
    } else if args.json.is_none() {
        write_stdout(args.reports.terminal().text(&result))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `iopath presets` (one line each) and `iopath presets show NAME`.
pub fn presets(args: &crate::cli::PresetsArgs) -> Result<std::process::ExitCode> {
    match &args.action {
        None => write_stdout(presets_list())?,
        Some(crate::cli::PresetsAction::Show { name, toml: false }) => {
            write_stdout(preset_show(name)?)?
        }
        Some(crate::cli::PresetsAction::Show { name, toml: true }) => {
            write_stdout(preset_toml(name)?)?
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// One line per preset.
pub fn presets_list() -> String {
    let all = crate::import::preset::all();
    let width = all.iter().map(|p| p.name.len()).max().unwrap_or(8);
    let mut out = String::new();
    let indent = " ".repeat(width + 2);
    for p in &all {
        out.push_str(&crate::report::prose::wrap(
            &p.summary,
            120,
            &format!("{:width$}  ", p.name),
            &indent,
        ));
    }
    out.push_str(
        "\nRun one: iopath run --preset NAME [--size ..] [--dir ..] [--repeat ..] [--time ..]\n\
         Its cases: iopath presets show NAME. The experiments: docs/presets.md.\n",
    );
    out
}

/// Why a finished run measured nothing, `None` when it measured something:
/// every case that does I/O was skipped (or every case, in a run of
/// `null` alone). Such a run failed: the caller exits 1. An interrupted
/// run is not judged here (it exits 130).
pub fn nothing_measured(r: &crate::result::RunResult) -> Option<String> {
    if r.interrupted {
        return None;
    }
    let io: Vec<&crate::result::CaseResult> = r
        .cases
        .iter()
        .filter(|c| c.method != iopath_io::Method::Null)
        .collect();
    let judged = if io.is_empty() {
        r.cases.iter().collect()
    } else {
        io
    };
    if judged.is_empty() || judged.iter().any(|c| c.skipped.is_none()) {
        return None;
    }
    let null_ran = judged.len() < r.cases.len();
    Some(format!(
        "nothing was measured: {} skipped{} (the reasons are listed under \"not run\"); fix the first reason, or choose --methods, --patterns or a --dir where they can run",
        if judged.len() == 1 {
            "the one case that does I/O was".to_string()
        } else {
            format!("all {} cases that do I/O were", judged.len())
        },
        if null_ran {
            " (only `null`, iopath's own overhead, ran)"
        } else {
            ""
        }
    ))
}

/// Text to stdout, every control character in it but `\n` and `\t`
/// written out visibly (`untrusted::visible`): tables and reports quote
/// results, job files and paths, which may hold terminal escapes. A
/// reader that went away (`| head`) is not an error, and a full disk is an
/// error, not a panic.
pub fn write_stdout(text: impl AsRef<[u8]>) -> Result<()> {
    let text = String::from_utf8_lossy(text.as_ref());
    write_raw(crate::model::untrusted::visible(&text).as_bytes())
}

/// Bytes to stdout as they are (JSON: serde escapes what it must, and the
/// data stays exact).
fn write_raw(bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::from(e).context("cannot write to stdout"))
        }
        _ => Ok(()),
    }
}

/// The plan `iopath run` makes of its arguments: the preset, job file or
/// fio job file they name (else the flags alone), with the flags over it.
pub fn plan_of(args: &RunArgs) -> Result<Plan, UsageError> {
    let flags = args.flags_spec();
    let exists = |p: &Path| p.exists();
    let mut origin = Origin {
        allow_write: args.allow_write,
        force_signature: args.force_signature,
        prefill: args.prefill,
        ..Origin::default()
    };
    let job = if let Some(name) = &args.preset {
        let p = crate::import::preset::find(name)?;
        origin.preset = Some(p.name.clone());
        p.job.overridden_by(&flags, true, &exists)?
    } else if let Some(path) = &args.job {
        origin.file = Some(path.clone());
        crate::import::jobfile::load(path)?.overridden_by(&flags, false, &exists)?
    } else if let Some(path) = &args.fio {
        origin.file = Some(path.clone());
        let mapped = fio_job(
            path,
            crate::import::fio::map::MapOptions {
                only_own_engine: args.only_fio_engine,
                ignore_unknown: args.ignore_unknown,
            },
        )?;
        origin.ignored = mapped.ignored;
        let sized = mapped.job.run.size.map(|b| b.0);
        let mut job = mapped.job.overridden_by(&flags, false, &exists)?;
        // An existing file: the job's first size= bytes, as fio; refused
        // when smaller (fio would rewrite it).
        if flags.run.size.is_none() {
            let file = job.run.file.as_deref();
            if let Some(s) = crate::import::fio::existing::size_of_existing(path, sized, file)? {
                job.run.size = Some(crate::model::words::Bytes(s));
            }
        }
        // fio needs a size for a file it makes; so does iopath here, rather
        // than its own default of 1 GiB.
        if job.run.size.is_none() && !job.run.file.as_deref().is_some_and(exists) {
            return Err(UsageError(format!(
                "{}: no size= for a file that does not exist yet (fio refuses it too: \"you need to specify size=\"); add size= to the job or give --size",
                path.display()
            )));
        }
        job
    } else {
        flags
    };
    let mut plan = Plan::from_spec(&job, &origin)?;
    if plan.noatime {
        noatime_allowed(&plan.target)?;
    }
    if let Some(trace) = &args.replay {
        let source =
            crate::plan::replay::ReplaySource::read(trace, args.replay_timing.unwrap_or_default())?;
        crate::plan::replay::apply(&mut plan, source, &args.methods, args.qd)?;
    }
    Ok(plan)
}

/// `--noatime` on a file the user may not open so: `O_NOATIME` is the
/// owner's (or `CAP_FOWNER`'s), and every method would fail on `EPERM`.
/// Said once, before the run, as the bad input it is.
fn noatime_allowed(target: &crate::model::TargetSpec) -> Result<(), UsageError> {
    let crate::model::TargetSpec::File { path, .. } = target else {
        return Ok(());
    };
    // The kernel's rule is the owner or CAP_FOWNER: asked of the kernel.
    if iopath_io::sys::noatime_refused(path) {
        return Err(UsageError(format!(
            "--noatime: opening {} with O_NOATIME is refused (EPERM): only its owner (or a process with CAP_FOWNER) may; run as its owner, or leave out --noatime",
            path.display()
        )));
    }
    Ok(())
}

/// A fio job file mapped to a job; a mistake in it is a usage error.
fn fio_job(
    path: &Path,
    opts: crate::import::fio::map::MapOptions,
) -> Result<crate::import::fio::map::Mapped, UsageError> {
    let file = crate::import::fio::parse_file(path).map_err(|e| UsageError(e.to_string()))?;
    crate::import::fio::map::to_job(&file, opts)
}

/// `iopath import-fio JOB.fio`: the job as TOML, with what was left out.
pub fn import_fio(args: &crate::cli::ImportFioArgs) -> Result<String> {
    let mapped = fio_job(&args.file, args.map_options())?;
    let mut out = format!(
        "# {} as an iopath job file: `iopath run FILE.toml` (keys: docs/job-files.md).\n",
        args.file.display()
    );
    for i in &mapped.ignored {
        out.push_str(&format!("# left out: {i}\n"));
    }
    out.push_str(&toml::to_string(&mapped.job)?);
    Ok(out)
}

/// A preset as a job file to start from (`presets show NAME --toml`).
pub fn preset_toml(name: &str) -> Result<String> {
    let preset = crate::import::preset::find(name)?;
    let body = toml::to_string(&preset.job)?;
    Ok(format!(
        "# The preset {name} as a job file: edit it, then `iopath run FILE.toml`.\n# Keys: docs/job-files.md.\n{body}"
    ))
}

/// The width `presets show` fits its case table to.
pub const SHOW_WIDTH: u16 = 120;

/// A preset as the cases it runs, with its run settings and source.
pub fn preset_show(name: &str) -> Result<String> {
    let preset = crate::import::preset::find(name)?;
    let plan = Plan::from_spec(
        &preset.job,
        &Origin {
            preset: Some(preset.name.clone()),
            ..Origin::default()
        },
    )?;
    let mut out = format!(
        "{}: {}\nsource: {}\n\nrun settings (flags override them): {}\n\n",
        preset.name,
        preset.summary,
        preset.source,
        run_settings(&plan),
    );
    out.push_str(&format!("{}\n", preset_cases(&plan, &preset)));
    if !preset.job.reading.is_empty() {
        out.push_str("\nhow to read it:\n");
        for r in &preset.job.reading {
            out.push_str(&format!("  - {r}\n"));
        }
    }
    let mut published: Vec<String> = Vec::new();
    for on in plan.cases.iter().filter_map(|c| c.published.as_ref()) {
        if !published.contains(&on.on) {
            published.push(on.on.clone());
        }
    }
    if !published.is_empty() {
        out.push_str("\npublished figures measured on:\n");
        for on in published {
            out.push_str(&format!("  - {on}\n"));
        }
    }
    out.push_str(&format!("\nrun it: iopath run --preset {}\n", preset.name));
    Ok(crate::report::prose::fit(&out, 120))
}

/// A plan's run settings, in one line: size, repetitions and their length,
/// cache state, warm-up, cache limit, case timeout.
fn run_settings(plan: &Plan) -> String {
    let reps = plan.repeat.map_or("adaptive repetitions".to_string(), |n| {
        format!("{n} repetitions")
    });
    let length = match (plan.time, plan.whole_pass) {
        (Some(t), _) => format!(" of {}", crate::model::units::fmt_duration(t)),
        (None, true) => ", each one whole pass over the file".to_string(),
        (None, false) => String::new(),
    };
    let limit = plan
        .cache_limit
        .filter(|_| plan.cases.iter().any(|c| c.cache_limited))
        .map(|l| format!(", cache limit {} (a memory cgroup)", fmt_bytes(l)))
        .unwrap_or_default();
    let warmup = if plan.warmup > 0 {
        format!(", {} warm-up", plan.warmup)
    } else {
        String::new()
    };
    let timeout = plan.case_timeout.map_or(String::new(), |t| {
        format!(
            ", each case capped at {} (--case-timeout)",
            crate::model::units::fmt_duration(t)
        )
    });
    format!(
        "size {}, {reps}{length}, cache {}{warmup}{limit}{timeout}",
        plan.size.map_or("default".to_string(), fmt_bytes),
        plan.cache.name(),
    )
}

/// The table of a preset's cases, fitted to [`SHOW_WIDTH`].
fn preset_cases(plan: &Plan, preset: &crate::import::preset::Preset) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(SHOW_WIDTH)
        .set_header(vec![
            "#",
            "label",
            "method",
            "pattern",
            "bs",
            "QD",
            "threads",
            "sync",
            "span",
            "cache",
            "other",
            "published",
        ]);
    let limited = plan.cache_limit.is_some() && preset.job.run.cache_limit.is_some();
    for (i, c) in plan.cases.iter().enumerate() {
        t.add_row(vec![
            (i + 1).to_string(),
            c.label.clone().unwrap_or_default(),
            c.method_name(),
            c.pattern.name().to_string(),
            crate::model::units::fmt_bs(c.block_size),
            c.queue_depth_requested.to_string(),
            c.threads.to_string(),
            c.sync.name().to_string(),
            c.span.map_or("file".to_string(), fmt_bytes),
            c.cache.unwrap_or(plan.cache).name().to_string(),
            case_other(c, limited && c.cache_limited),
            c.published.as_ref().map(|p| p.show()).unwrap_or_default(),
        ]);
    }
    // The short columns keep their width; the label, other and published
    // cells wrap, so that the table fits SHOW_WIDTH columns.
    for (i, col) in t.column_iter_mut().enumerate() {
        if ![1, 10, 11].contains(&i) {
            col.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
    }
    t
}

/// The "other" cell of a preset's case: what sets it apart beyond the
/// columns (a copy, a sparse file, its group, a touched size, the cache
/// limit, a placement pair).
fn case_other(c: &crate::plan::Case, under_limit: bool) -> String {
    let mut other: Vec<String> = Vec::new();
    if c.copy_to_user {
        other.push("copy to a user buffer".into());
    }
    if c.sparse {
        other.push("sparse file".into());
    }
    if let Some(g) = &c.group {
        other.push(format!("group: {g}"));
    }
    if let Some(t) = c.io_size {
        other.push(format!("touch {}", fmt_bytes(t)));
    }
    if under_limit {
        other.push("under the cache limit".into());
    }
    if let Some(pair) = &c.pair {
        other.push(format!(
            "{pair} (cpus {}, {})",
            c.placement
                .cpus
                .as_deref()
                .map_or("any".into(), crate::system::topology::format_cpulist),
            c.placement
                .mem
                .as_ref()
                .map_or("default".into(), crate::system::placement::policy_name)
        ));
    }
    other.join(", ")
}

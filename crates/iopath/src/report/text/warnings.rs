//! Words for warnings facts (see [`super`]): each warning's sentence, the
//! cases it names (`mmap/randread (35x)`), grouped for a line
//! (`12 cases: buffered, direct on read, write`), and a one-line count for
//! the one-screen output. Thresholds are the analysis constants, never
//! retyped. A warning without facts (a result written before they were
//! recorded) keeps the words it was written with.

use crate::analysis::warnings::{memory, starved, traffic};
use crate::model::units::{fmt_bytes, fmt_device_fraction, fmt_size_flag};
use crate::result::warning::{AmplificationCause, CaseBytes, Fact, Scope};
use crate::result::{CaseResult, RunResult, Warning};

/// How warnings name a case: its method (with the arm, `direct#2`) and
/// what else tells it apart: its pattern with a preset's label
/// (`read (sync write)`), or its whole job where another case of the run
/// reads alike but ran another job (`randread 8 Q1T4 (RR)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub method: String,
    pub what: String,
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.method, self.what)
    }
}

/// `pattern`, or `pattern (label)`.
fn short(c: &CaseResult) -> Label {
    let what = match &c.label {
        Some(l) => format!("{} ({l})", c.pattern),
        None => c.pattern.to_string(),
    };
    Label {
        method: c.name(),
        what,
    }
}

/// How the warnings of `r` name case `i` (see [`Label`]); an index past
/// the cases (a damaged file) is named as such.
pub fn labeller(r: &RunResult) -> impl Fn(usize) -> Label + '_ {
    // Each case's short name and job, once.
    let named: Vec<(Label, crate::result::Job)> =
        r.cases.iter().map(|c| (short(c), c.job())).collect();
    move |i| {
        let Some((own, job)) = named.get(i) else {
            return Label {
                method: "cases".into(),
                what: format!("{i} (no such case)"),
            };
        };
        let clash = named.iter().any(|(s, j)| s == own && j != job);
        if clash {
            Label {
                method: own.method.clone(),
                what: job.label(),
            }
        } else {
            own.clone()
        }
    }
}

/// One case as a warning lists it: its label, and the figure that raised
/// it where the warning has one per case (`(35x)`).
fn entries(f: &Fact, r: &RunResult) -> Vec<Label> {
    let label = labeller(r);
    let figured = |case: usize, figure: String| {
        let l = label(case);
        Label {
            what: format!("{} ({figure})", l.what),
            ..l
        }
    };
    let mut out: Vec<Label> = match f {
        Fact::ReadAmplification { cases, .. } => cases
            .iter()
            .map(|c| figured(c.case, fmt_device_fraction(c.fraction)))
            .collect(),
        Fact::CpuStarved { cases } => cases
            .iter()
            .map(|c| {
                let figure = format!(
                    "{:.0}% waiting, {} preemptions",
                    c.wait_share * 100.0,
                    c.preemptions
                );
                figured(c.case, figure)
            })
            .collect(),
        _ => match f.scope() {
            Scope::Cases(cases) => cases.into_iter().map(&label).collect(),
            Scope::Run | Scope::Job => Vec::new(),
        },
    };
    // Each once: cases of one job at two block sizes read alike.
    let mut seen = std::collections::HashSet::new();
    out.retain(|l| seen.insert(l.to_string()));
    out
}

/// The cases `w` names, as JSON `cases` lists them: `all` for the run as a
/// whole, none for the job, else each case's label (with its figure).
pub fn cases(w: &Warning, r: &RunResult) -> Vec<String> {
    let Some(f) = &w.facts else {
        return w.cases.clone();
    };
    match f.scope() {
        Scope::Run => vec!["all".into()],
        Scope::Job => Vec::new(),
        Scope::Cases(_) => entries(f, r).iter().map(Label::to_string).collect(),
    }
}

/// The cases `w` names, for a line: up to three as they are, more in
/// groups of methods sharing the same list (`12 cases: buffered, direct,
/// mmap on read, write`); empty when it names none.
pub fn case_groups(w: &Warning, r: &RunResult) -> String {
    let Some(f) = &w.facts else {
        return crate::report::prose::case_groups(&w.cases);
    };
    match f.scope() {
        // About the run's tracer, not its cases.
        Scope::Run if matches!(f, Fact::LatencySplitFallback { .. }) => return String::new(),
        Scope::Run => return "all".into(),
        Scope::Job => return String::new(),
        Scope::Cases(_) => {}
    }
    let labels = entries(f, r);
    if labels.len() <= 3 {
        let each: Vec<String> = labels.iter().map(Label::to_string).collect();
        return each.join(", ");
    }
    let pairs: Vec<(&str, &str)> = labels
        .iter()
        .map(|l| (l.method.as_str(), l.what.as_str()))
        .collect();
    format!(
        "{} cases: {}",
        labels.len(),
        crate::report::prose::by_method(&pairs, "/").join("; ")
    )
}

/// The sentence of `w`: from its facts, else as it was written.
pub fn message(w: &Warning) -> String {
    match &w.facts {
        Some(f) => sentence(f),
        None => w.message.clone(),
    }
}

/// A share as a whole percentage (`0.9` is `90`).
fn pct(share: f64) -> String {
    format!("{:.0}", share * 100.0)
}

/// A multiple in words (`twice`).
fn times(x: f64) -> String {
    if x == 2.0 {
        "twice".into()
    } else {
        format!("{x} times")
    }
}

/// The sentence of one fact.
pub fn sentence(f: &Fact) -> String {
    match f {
        Fact::IgnoredOptions { options } => format!(
            "these options of the fio job file were left out (--ignore-unknown), so this run is not exactly the fio job: {}",
            options.join(", ")
        ),
        Fact::FileFitsInMemory { .. } => fits_in_memory(f),
        Fact::SparseTarget {} => "--sparse: the file is truncated before every repetition, so reads of holes return zeros without touching the device and writes allocate blocks (file-system allocation is part of the result)".into(),
        Fact::UnwrittenDeviceRanges { device, allocated_bytes, file_bytes, .. } => format!(
            "{} is a loop device over a sparse file ({} allocated of {}): reads of never-written ranges return zeros without touching a disk; fill it first with --allow-write --prefill",
            device.display(),
            fmt_bytes(*allocated_bytes),
            fmt_bytes(*file_bytes)
        ),
        Fact::SparseFile { path, allocated_bytes, size_bytes } => format!(
            "{} has holes ({} allocated of {}): reads of holes return zeros without touching the device",
            path.display(),
            fmt_bytes(*allocated_bytes),
            fmt_bytes(*size_bytes)
        ),
        Fact::DropCachesDenied { .. } => "--drop-caches was not permitted (it needs root): only the test file's own pages were dropped".into(),
        Fact::LoopBuffered { loops } => format!(
            "{} uses buffered I/O on its backing file: even O_DIRECT reads may be served from the page cache of the file system below (losetup --direct-io=on avoids it)",
            loops.join(", ")
        ),
        Fact::CompressibleData { data, .. } => format!(
            "written data is '{data}': storage that compresses or deduplicates (some SSDs, ZFS, btrfs with compression, VDO) may write far less than asked"
        ),
        Fact::NoBlockDevice {} => "no block device is under the target (tmpfs, overlay or a network file system), so no device was measured in the cases".into(),
        Fact::LowDeviceFraction { .. } => format!(
            "less than {}% of the bytes these cold read cases asked for came from the device: the rest was served from memory",
            pct(memory::LOW_DEVICE_FRACTION)
        ),
        Fact::ReadAmplification { .. } => amplification(f),
        Fact::OtherDiskTraffic { own_accounting, .. } => other_traffic(*own_accounting),
        Fact::LatencySplitFallback { reason } => super::why::fallback_sentence(*reason),
        Fact::SyncNone { .. }
        | Fact::DepthCapped { .. }
        | Fact::SpanSmallerThanFile { .. }
        | Fact::DontcachePagesKept { .. }
        | Fact::SqpollSharesCore { .. }
        | Fact::CpuStarved { .. } => about_writes(f),
    }
}

/// The sentences of the facts about writes and how cases ran.
fn about_writes(f: &Fact) -> String {
    match f {
        Fact::SyncNone { .. } => "writes with --sync none may end in the page cache: these figures measure memory, not the device".into(),
        Fact::DepthCapped { cases } => format!(
            "synchronous methods ran at queue depth {} though more was asked (use --threads for parallelism)",
            cases.iter().map(|c| c.queue_depth).max().unwrap_or(1)
        ),
        Fact::SpanSmallerThanFile { span_bytes, file_bytes } => format!(
            "cases address the first {} of a {} file: the rest is never touched",
            fmt_bytes(*span_bytes),
            fmt_bytes(*file_bytes)
        ),
        Fact::DontcachePagesKept { cases } => format!(
            "these RWF_DONTCACHE writes left up to {} of the file in the page cache: the kernel drops an uncached write's pages when their write-back completes in a task, not when it completes in an interrupt, which is where ext4 completes writes over blocks already written (the prefilled test file); writes that allocate (--sparse, a new file) are dropped. The cache column shows what stayed",
            fmt_bytes(cases.iter().map(|c: &CaseBytes| c.bytes).max().unwrap_or(0))
        ),
        Fact::SqpollSharesCore { cpus, .. } => format!(
            "the SQPOLL kernel thread spins on a core of its own, but {} it, the workers and everything else: they compete (its CPU time is counted in cpu.sqpoll_ns)",
            if *cpus == 1 {
                "1 CPU serves".to_string()
            } else {
                format!("{cpus} CPUs serve")
            }
        ),
        Fact::CpuStarved { .. } => format!(
            "these cases' workers waited for a CPU for {}% or more of the time they ran (runnable but not running: the run-queue delay): their speed and latency measure the CPU share iopath was given as much as the I/O path, and a difference between them and other methods may be that share; run on an idler machine, give the workers CPUs of their own (--cpus), or fewer threads than cores (io_uring's SQPOLL and io-wq threads compete too)",
            pct(starved::STARVED_WAIT_SHARE)
        ),
        // Worded by `sentence`.
        _ => String::new(),
    }
}

/// `file_fits_in_memory`: what it means and what to do.
fn fits_in_memory(f: &Fact) -> String {
    let Fact::FileFitsInMemory {
        file_bytes,
        memory_available_bytes,
        cold,
        suggested_cache_limit_bytes,
        ..
    } = f
    else {
        return String::new();
    };
    let how = if *cold {
        "so their random reads, which come back to pages read earlier, speed up as a repetition goes on and measure partly memory"
    } else {
        "and the warm or as-is cache starts them there: their reads measure mostly memory"
    };
    format!(
        "the {} file fits in the page cache ({} of memory available): a page these cached methods have read once is read again from memory, not the device, {how}; for the device's speed give a --size larger than memory, or cap the page cache with --cache-limit (e.g. --cache-limit {})",
        fmt_bytes(*file_bytes),
        fmt_bytes(*memory_available_bytes),
        fmt_size_flag(*suggested_cache_limit_bytes)
    )
}

/// `read_amplification`: by how much, and what fetched the extra pages.
fn amplification(f: &Fact) -> String {
    let Fact::ReadAmplification {
        cause,
        read_ahead_kb,
        other_traffic_unaccounted,
        ..
    } = f
    else {
        return String::new();
    };
    let ra = read_ahead_kb
        .map(|kb| format!(" (read_ahead_kb={kb})"))
        .unwrap_or_default();
    let read_ahead = format!("read-ahead and fault-around{ra} fetch pages nobody reads");
    let user = "a user-space cache (ucache, uffd, uffd-wp) reads a whole page for each miss, however small the request";
    let why = match cause {
        AmplificationCause::ReadAhead => read_ahead,
        AmplificationCause::UserSpaceCache => user.to_string(),
        AmplificationCause::Both => format!("{read_ahead}, and {user}"),
    };
    format!(
        "these cases read more than {} the bytes they asked for from the device: {why}{}",
        times(traffic::AMPLIFIED_READS),
        if *other_traffic_unaccounted {
            " (or other traffic on the disk: see other_disk_traffic)"
        } else {
            ""
        }
    )
}

/// `other_disk_traffic`, with or without the process's own accounting.
fn other_traffic(own_accounting: bool) -> String {
    let over = pct(traffic::OTHER_TRAFFIC_SHARE);
    if own_accounting {
        format!("the disk read over {over}% more than these cases' own reads (the process's I/O accounting, read-ahead included): other processes used the disk at the same time, so the device columns count their bytes too (device counters are system-wide)")
    } else {
        format!("the disk read over {over}% more than these cases asked for, though they bypass the page cache (O_DIRECT or DAX: no read-ahead): other processes used the disk at the same time (device counters are system-wide)")
    }
}

/// Write the words of `r`'s warnings (`message`, `cases`) from their
/// facts, as the JSON carries them; a warning without facts keeps its own.
pub fn word(r: &mut RunResult) {
    let worded: Vec<(String, Vec<String>)> = r
        .warnings
        .iter()
        .map(|w| (message(w), cases(w, r)))
        .collect();
    for (w, (m, c)) in r.warnings.iter_mut().zip(worded) {
        (w.message, w.cases) = (m, c);
    }
}

/// For a result written before warnings had facts: each warning without
/// them takes the facts that this version finds in the same result under
/// the same code for the same cases (so it is worded as today); one it
/// finds differently keeps its words. Then every warning is worded.
pub fn reword(r: &mut RunResult) {
    if r.warnings.iter().any(|w| w.facts.is_none()) {
        let fresh = crate::analysis::warnings::collect(r);
        let found: Vec<Option<Fact>> = r
            .warnings
            .iter()
            .map(|w| match &w.facts {
                Some(_) => None,
                None => fresh
                    .iter()
                    .find(|f| f.code == w.code && cases(f, r) == w.cases)
                    .and_then(|f| f.facts.clone()),
            })
            .collect();
        for (w, f) in r.warnings.iter_mut().zip(found) {
            if f.is_some() {
                w.facts = f;
            }
        }
    }
    word(r);
}

/// What a warning is about, for the one-line count.
fn topic(code: &str) -> &'static str {
    match code {
        "file_fits_in_memory" | "low_device_fraction" | "sync_none" | "dontcache_pages_kept" => {
            "memory"
        }
        "read_amplification" | "other_disk_traffic" | "no_block_device" | "loop_buffered"
        | "compressible_data" | "drop_caches_denied" => "device",
        "sparse_target" | "sparse_file" | "unwritten_device_ranges" | "span_smaller_than_file" => {
            "target"
        }
        "cpu_starved" | "sqpoll_shares_core" => "cpu",
        "latency_split_fallback" => "latency split",
        "depth_capped" | "ignored_options" => "job",
        _ => "other",
    }
}

/// The warnings in one line, grouped by what they are about, with where
/// to read them: `3 warnings: memory (file_fits_in_memory,
/// low_device_fraction), job (depth_capped); --explain says more`; `None`
/// without warnings.
pub fn count_line(warnings: &[Warning]) -> Option<String> {
    if warnings.is_empty() {
        return None;
    }
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for w in warnings {
        let t = topic(&w.code);
        match groups.iter_mut().find(|(g, _)| *g == t) {
            Some((_, codes)) if codes.contains(&w.code.as_str()) => {}
            Some((_, codes)) => codes.push(&w.code),
            None => groups.push((t, vec![&w.code])),
        }
    }
    let said: Vec<String> = groups
        .iter()
        .map(|(t, codes)| format!("{t} ({})", codes.join(", ")))
        .collect();
    let n = warnings.len();
    Some(format!(
        "{n} warning{}: {}; --explain says more",
        if n == 1 { "" } else { "s" },
        said.join(", ")
    ))
}

#[cfg(test)]
mod tests;

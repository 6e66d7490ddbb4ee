//! The job model: what to measure and how, whatever spelled it. Flags,
//! built-in presets, TOML job files (`iopath run JOB.toml`) and fio job
//! files (`iopath run --fio JOB.fio`) all become a [`JobSpec`]; one
//! function (`plan::Plan::from_spec`) checks it and turns it into the
//! cases a run measures. Every field is documented in docs/job-files.md.
//!
//! A job file is TOML:
//!
//! ```toml
//! [run]                 # run settings: the flags of `iopath run`
//! size = "4G"
//! time = "2s"
//!
//! [[case]]              # cases: every method x every pattern x threads
//! method = ["direct", "uring"]
//! pattern = "randread"
//! bs = "4k"
//! qd = 32
//! ```
//!
//! Keys are the flags' names with `_` for `-` (`io_size` is `--io-size`);
//! a case with no `method` runs the default methods, one with no `pattern`
//! the default patterns. Presets are job files with a `name`, `summary` and
//! `source`, and their source's published figures.

use std::path::PathBuf;

use iopath_io::data::DataMode;
use iopath_io::numa::MemPolicyMode;
use iopath_io::SyncPolicy;
use serde::{Deserialize, Serialize};

use super::words::{self, Bytes, Dur, List, Pct, RepTime, Span, Until};
use super::{CacheState, Pattern, UsageError};
use crate::model::schedule::Schedule;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// A job: what a run measures, and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// A name (presets: the preset's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// One line that says what the job is (`iopath presets` lists it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The experiment it repeats (presets: SEEDS.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// How results are laid out under the usual tables (presets).
    #[serde(default, skip_serializing_if = "is_default")]
    pub layout: Layout,
    /// How to read the result, a sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reading: Vec<String>,
    /// Run settings: the same as `iopath run`'s flags, which override them.
    #[serde(default, skip_serializing_if = "is_default")]
    pub run: RunSpec,
    /// The cases, each crossed from its axes (method x pattern x threads);
    /// none: the default methods on the default patterns.
    #[serde(default, rename = "case", skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<CaseSpec>,
    /// The source's figures for cases by method, pattern and threads (when a
    /// case has no `published` of its own): hmmap's tables.
    #[serde(default, rename = "reference", skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<Reference>,
}

/// The run settings of a job; `None`: the flag's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Measure this file or block device (`--file`); an existing one is
    /// only written with `--allow-write` on the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// Directory of iopath's temporary test file (`--dir`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub size: Option<Bytes>,
    /// A repetition's time limit, or `"pass"`: one whole pass, no limit.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub time: Option<RepTime>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub io_size: Option<Bytes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub ci_target: Option<Pct>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub max_time: Option<Dur>,
    /// Adaptive: the whole run's time, set-up included, shared among its
    /// jobs and spent where their verdicts need it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub budget: Option<Dur>,
    /// Wall-clock cap of one case, all its repetitions together (`0`: none):
    /// a case that reaches it stops, keeps what it measured and reports the
    /// fraction done and the extrapolated time of the whole repetition.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub case_timeout: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub schedule: Option<Schedule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub interval: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub cache: Option<CacheState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_caches: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub data: Option<DataMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse: Option<bool>,
    /// `--verify`: headers and checksums in every written block, checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<bool>,
    /// The memory cgroup cap of the cases marked `cache_limited` (every
    /// case when it comes from `--cache-limit`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub cache_limit: Option<Bytes>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub ucache_size: Option<Bytes>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub ucache_page: Option<Bytes>,
    /// Threads of the `threadpool` method's pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_threads: Option<u32>,
    /// Run the neighbour (a latency-sensitive cached reader) beside every
    /// case, and report what each method does to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbour: Option<bool>,
    /// Take each request's time apart through block tracepoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_split: Option<bool>,
    /// Open the target with `O_NOATIME` (`--noatime`): reads leave its
    /// access time alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noatime: Option<bool>,
    /// CPUs the workers run on, round-robin (`0-3,8`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_node: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub mem_policy: Option<MemPolicyMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll_cpu: Option<u32>,
}

/// One entry of a job's cases: every method x every pattern x every
/// thread count it names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// What the source calls this case (`SEQ1M Q8T1`, `unbuffered native`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Methods; a method named twice is a second arm (an A/A check).
    /// None: the default methods (for `copy`: the methods that copy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<List<crate::model::choice::MethodChoice>>,
    /// None: read, write, randread, randwrite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<List<Pattern>>,
    /// What the I/O buffers are made of: `"pages"` (base pages, what
    /// programs and fio get), `"huge"` (transparent huge pages), or both
    /// (each method once with each, side by side). None: as each method is
    /// named (`direct+hugebuf`), else pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffers: Option<List<iopath_io::BufferBacking>>,
    /// None: 1M sequential, 4k random.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub bs: Option<Bytes>,
    /// None: 8 sequential, 32 random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qd: Option<u32>,
    /// Worker threads: one count or a list (the case once per count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<List<u32>>,
    /// Requests in flight the methods are compared at: one count or a list
    /// (the case once per count). Each method reaches it its own way: an
    /// asynchronous one from one thread at that depth (or `threads` x the
    /// rest), a synchronous one with that many threads, `threadpool` with a
    /// pool of that size (docs/methodology.md, "Concurrency matching").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<List<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub sync: Option<SyncPolicy>,
    /// A sync every N writes of each thread (`"16"`, `"16:fdatasync"`:
    /// fio's `fsync=N`, `fdatasync=N`), beside `sync`: the thread waits for
    /// its writes in flight, then syncs, then goes on.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub sync_every: Option<iopath_io::SyncEvery>,
    /// Read percentage of randrw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmix: Option<u8>,
    /// Random offsets within this much of the file: a size (`1G`) or a
    /// share of the machine's memory (`10%ram`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub span: Option<Span>,
    /// Where in the file the case's range starts (its `span` counts from
    /// there): a stream's own part of the file, as fio jobs that each have
    /// a file of their own. None: the file's start.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub offset: Option<Bytes>,
    /// Reads are copied from the engine's buffer into a separate user
    /// buffer (what a read into a caller's buffer costs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub copy_to_user: bool,
    /// The file is truncated before every repetition (writes allocate).
    #[serde(default, skip_serializing_if = "is_false")]
    pub sparse: bool,
    /// This case's cache state, instead of the run's.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub cache: Option<CacheState>,
    /// What ends a repetition when no byte count does: `"time"`, the time
    /// limit alone (a sequential pass starts over: fio's `time_based`), or
    /// `"pass"`, one pass's bytes over the file or span, random patterns too
    /// (fio without `time_based`). Left out: sequential patterns stop after
    /// one pass, random ones at the time limit.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub until: Option<Until>,
    /// This case's job's time, all its methods and rounds together, set-up
    /// included (a fio job's `runtime`), instead of a share of the run's
    /// `budget`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub budget: Option<Dur>,
    /// Bytes each repetition transfers (all threads), instead of the run's
    /// `io_size`: `8M` for hmmap's RR. `--touch` on the command line sets it.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "words::opt")]
    pub touch: Option<Bytes>,
    /// Run inside the run's `cache_limit` cgroup; without it only the cases
    /// that say so are limited (every case, with `--cache-limit` alone).
    #[serde(default, skip_serializing_if = "is_false")]
    pub cache_limited: bool,
    /// Cases of one pattern with the same group are compared with each
    /// other whatever else differs (block size, depth, label, placement):
    /// they run as one job, in interleaved rounds, and get one verdict over
    /// their variants (glommio-scan's ways to scan, crystal's depths).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// What the source measured for this case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<Published>,
    /// `"numa-pairs"`: the case once for each (CPU node, memory node) pair
    /// relative to the device's node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// Streams run at the same time through each method (fio jobs with no
    /// `stonewall` between them): each a workload of its own (`label`,
    /// `pattern`, `bs`, `qd`, `threads`, `sync`, `sync_every`, `rwmix`,
    /// `span`, `touch`, `until`), the entry's `method`, `budget` and
    /// `label` the group's. None: the entry is one workload.
    #[serde(default, rename = "stream", skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<CaseSpec>,
}

/// How a preset's results are laid out under the usual tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// The usual tables only.
    #[default]
    Table,
    /// CrystalDiskMark's grid: one row per test, read and write side by
    /// side.
    Crystal,
    /// NIOBench's report: per mode and operation, median, mean, min, max.
    Niobench,
    /// DAXBench64's mapping line: file descriptor, length, start and end.
    Daxbench,
    /// The placement study: each (CPU node, memory node) pair against
    /// local/local.
    Numa,
    /// hmmap's table: seconds for W, R and RR per thread count and method.
    Hmmap,
}

/// A published figure for the cases of one method, pattern and thread
/// count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub method: String,
    pub pattern: String,
    pub threads: u32,
    pub value: f64,
    pub unit: String,
    pub on: String,
}

/// A figure from the source experiment, shown beside iopath's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The number, in `unit`; absent for a finding stated in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// `MB/s` (10^6 bytes/s), `MiB/s`, `GB/s`, `IOPS`, `s` (seconds a
    /// repetition took).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Where and on what: `Intel Optane, 53 GB file (Glommio article)`.
    pub on: String,
    /// The finding in words, when there is no number to match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl CaseSpec {
    /// The case keys this entry sets, by flag name (`methods`, `bs`, ...).
    pub fn set_flags(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut set = |on: bool, flag| {
            if on {
                v.push(flag)
            }
        };
        set(self.method.is_some(), "methods");
        set(self.pattern.is_some(), "patterns");
        set(self.bs.is_some(), "bs");
        set(self.qd.is_some(), "qd");
        set(self.threads.is_some(), "threads");
        set(self.concurrency.is_some(), "concurrency");
        set(self.sync.is_some(), "sync");
        set(self.sync_every.is_some(), "sync-every");
        set(self.rwmix.is_some(), "rwmix");
        set(self.span.is_some(), "span");
        set(self.buffers.is_some(), "buffers");
        v
    }

    /// `self` with every case key `over` sets put in its place.
    fn overridden_by(&self, over: &CaseSpec) -> CaseSpec {
        fn pick<T: Clone>(a: &Option<T>, b: &Option<T>) -> Option<T> {
            b.clone().or_else(|| a.clone())
        }
        // A source's figure is for the case it measured, not another.
        let published = if over.set_flags().is_empty() {
            self.published.clone()
        } else {
            None
        };
        CaseSpec {
            published,
            method: pick(&self.method, &over.method),
            pattern: pick(&self.pattern, &over.pattern),
            bs: pick(&self.bs, &over.bs),
            // A concurrency given over a job's depth replaces it: each
            // method's depth then follows from the concurrency.
            qd: if over.concurrency.is_some() {
                over.qd
            } else {
                pick(&self.qd, &over.qd)
            },
            threads: pick(&self.threads, &over.threads),
            concurrency: pick(&self.concurrency, &over.concurrency),
            sync: pick(&self.sync, &over.sync),
            sync_every: pick(&self.sync_every, &over.sync_every),
            rwmix: pick(&self.rwmix, &over.rwmix),
            span: pick(&self.span, &over.span),
            buffers: pick(&self.buffers, &over.buffers),
            // Each stream takes the workload flags; the methods and the
            // concurrency are the group's (which refuses the latter).
            streams: self
                .streams
                .iter()
                .map(|s| {
                    s.overridden_by(&CaseSpec {
                        method: None,
                        concurrency: None,
                        ..over.clone()
                    })
                })
                .collect(),
            ..self.clone()
        }
    }
}

impl JobSpec {
    /// True when some case says how much it touches (`touch`): such a job
    /// gives `--touch` to those cases only.
    pub fn has_touch_cases(&self) -> bool {
        self.cases.iter().any(|c| c.touch.is_some())
    }

    /// The reference figure for a case, if the job has one.
    pub fn reference(&self, method: &str, pattern: &str, threads: u32) -> Option<Published> {
        self.references
            .iter()
            .find(|r| r.method == method && r.pattern == pattern && r.threads == threads)
            .map(|r| Published {
                value: Some(r.value),
                unit: Some(r.unit.clone()),
                on: r.on.clone(),
                text: None,
            })
    }

    /// This job with the command line's settings in place of its own.
    ///
    /// `flags` is what the command line gave: its `run` holds the flags
    /// given, its one case the case flags given. A preset's cases are what
    /// it is, so case flags are refused there (`fixed_cases`); a job file's
    /// cases take them, every entry. The flags' own rules for settings
    /// that go together hold as they do for flags alone:
    /// - `--io-size` replaces the job's `time`, unless it has cases with a
    ///   `touch` of their own: then `--touch` is theirs;
    /// - `--size` scales the job's `cache_limit` with the file (hmmap: 128
    ///   MiB for 4 GiB), never below 32 MiB;
    /// - an existing `--file` has its own size: the job's `size` is dropped;
    /// - `--repeat` replaces adaptive repetition, `--ci-target` or
    ///   `--max-time` a fixed `repeat`.
    pub fn overridden_by(
        &self,
        flags: &JobSpec,
        fixed_cases: bool,
        file_exists: &dyn Fn(&std::path::Path) -> bool,
    ) -> Result<JobSpec, UsageError> {
        let what = self.name.as_deref().unwrap_or("the job file");
        let over_case = flags.cases.first().cloned().unwrap_or_default();
        if fixed_cases {
            if let Some(flag) = over_case.set_flags().first() {
                return Err(UsageError(format!(
                    "--preset {what} fixes the cases, so --{flag} cannot change them; `iopath presets show {what}` lists them (run settings such as --size, --dir, --repeat, --time apply)",
                )));
            }
        }
        let mut job = self.clone();
        let touch = self.has_touch_cases();
        merge_run(
            &mut job.run,
            &flags.run,
            MergeContext {
                base_size: self.run.size,
                touch,
                file_exists,
            },
            &mut job.cases,
        );
        if job.cases.is_empty() {
            job.cases = vec![over_case];
        } else {
            job.cases = job
                .cases
                .iter()
                .map(|c| c.overridden_by(&over_case))
                .collect();
        }
        Ok(job)
    }
}

/// What [`merge_run`] needs to know of the job beyond its run settings.
struct MergeContext<'a> {
    /// The job's own file size (a cache limit scales with it).
    base_size: Option<Bytes>,
    /// The job has cases with a `touch` of their own.
    touch: bool,
    file_exists: &'a dyn Fn(&std::path::Path) -> bool,
}

/// The flags' run settings `f` over a job's `r`, with the rules of
/// [`JobSpec::overridden_by`] (a `--file`/`--dir` pair, `--io-size` and
/// `touch`, a scaled cache limit, fixed or adaptive repetition).
/// How the run repeats, from the flags over the job's: fixed and adaptive
/// repetition exclude each other (the flag's kind replaces the job's), and
/// a job's own time (a fio job's `runtime`) yields to the time the command
/// line gives the run, whichever way it gives it.
fn merge_repetition(r: &mut RunSpec, f: &RunSpec, cases: &mut [CaseSpec]) {
    if f.ci_target.is_some() || f.max_time.is_some() || f.budget.is_some() {
        r.repeat = None;
    }
    if f.repeat.is_some() {
        r.ci_target = None;
        r.max_time = None;
        r.budget = None;
    }
    if f.max_time.is_some() {
        r.budget = None;
    }
    if f.budget.is_some() || f.max_time.is_some() || f.repeat.is_some() {
        for c in cases.iter_mut() {
            c.budget = None;
        }
    }
}

fn merge_run(r: &mut RunSpec, f: &RunSpec, cx: MergeContext<'_>, cases: &mut [CaseSpec]) {
    let MergeContext {
        base_size,
        touch,
        file_exists,
    } = cx;
    // The target: a flag's file or directory replaces the job's.
    if f.file.is_some() || f.dir.is_some() {
        r.file = f.file.clone();
        r.dir = f.dir.clone();
    }
    if r.file.as_deref().is_some_and(file_exists) && f.size.is_none() {
        r.size = None;
    }
    if let Some(io) = f.io_size {
        if touch {
            for c in cases.iter_mut().filter(|c| c.touch.is_some()) {
                c.touch = Some(io);
            }
        } else {
            r.io_size = Some(io);
            if f.time.is_none() {
                r.time = None;
            }
        }
    }
    if let (Some(limit), Some(base), Some(size), None) =
        (r.cache_limit, base_size, f.size, f.cache_limit)
    {
        let scaled = (limit.0 as u128 * size.0 as u128 / base.0.max(1) as u128) as u64;
        r.cache_limit = Some(Bytes(scaled.max(32 << 20)));
    }
    merge_repetition(r, f, cases);
    macro_rules! take {
        ($($k:ident),*) => {$(if f.$k.is_some() { r.$k = f.$k.clone(); })*};
    }
    take!(
        size,
        time,
        repeat,
        ci_target,
        max_time,
        budget,
        case_timeout,
        warmup,
        schedule,
        order_seed,
        interval,
        seed,
        cache,
        drop_caches,
        data,
        sparse,
        verify,
        cache_limit,
        ucache_size,
        ucache_page,
        pool_threads,
        neighbour,
        latency_split,
        noatime,
        cpus,
        numa_node,
        mem_node,
        mem_policy,
        sqpoll_cpu
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_io::Method;

    fn job(toml_text: &str) -> JobSpec {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn the_latency_split_and_noatime_flags_reach_a_job_file() {
        // `--latency-split` beside a job file was dropped: it was missing
        // from the settings the flags hand over.
        let base = job("[[case]]\nmethod = \"direct\"\npattern = \"randread\"\n");
        let flags = JobSpec {
            run: RunSpec {
                latency_split: Some(true),
                noatime: Some(true),
                ..RunSpec::default()
            },
            ..JobSpec::default()
        };
        let j = base.overridden_by(&flags, false, &|_| false).unwrap();
        assert_eq!(j.run.latency_split, Some(true));
        assert_eq!(j.run.noatime, Some(true));
    }

    #[test]
    fn flags_override_run_settings_and_every_case_of_a_job_file() {
        let base = job(
            "[run]\nsize = \"4G\"\ntime = \"2s\"\n[[case]]\nmethod = \"direct\"\npattern = \"randread\"\n[[case]]\nmethod = [\"mmap\", \"uring\"]\npattern = \"read\"\nqd = 4\n",
        );
        let flags = JobSpec {
            run: RunSpec {
                time: Some(RepTime::Limit(std::time::Duration::from_millis(500))),
                ..RunSpec::default()
            },
            cases: vec![CaseSpec {
                qd: Some(16),
                ..CaseSpec::default()
            }],
            ..JobSpec::default()
        };
        let j = base.overridden_by(&flags, false, &|_| false).unwrap();
        assert_eq!(j.run.size, Some(Bytes(4 << 30)));
        assert_eq!(
            j.run.time,
            Some(RepTime::Limit(std::time::Duration::from_millis(500)))
        );
        assert!(j.cases.iter().all(|c| c.qd == Some(16)));
        // A source's figure is for the case it measured: a case key
        // changed by a flag drops it; run settings do not.
        let mut published = base.clone();
        published.cases[0].published = Some(Published {
            value: Some(1.0),
            unit: Some("IOPS".into()),
            on: "x".into(),
            text: None,
        });
        let j = published.overridden_by(&flags, false, &|_| false).unwrap();
        assert_eq!(j.cases[0].published, None);
        let run_only = JobSpec {
            cases: vec![CaseSpec::default()],
            ..flags.clone()
        };
        let j = published
            .overridden_by(&run_only, false, &|_| false)
            .unwrap();
        assert!(j.cases[0].published.is_some());
        assert_eq!(
            j.cases[1].method,
            Some(List(vec![Method::Mmap.into(), Method::Uring.into()]))
        );
        let e = base.overridden_by(&flags, true, &|_| false).unwrap_err();
        assert!(e.0.contains("--qd cannot change them"), "{e}");
    }

    /// A fio job's `runtime` (the case's `budget`) overrode `--budget`
    /// without a word: the run's time given on the command line wins.
    #[test]
    fn a_budget_flag_replaces_the_jobs_own_time() {
        let base = job("[[case]]\npattern = \"randread\"\nbudget = \"2s\"\n[[case]]\npattern = \"read\"\nbudget = \"2s\"\n");
        assert!(base.cases.iter().all(|c| c.budget.is_some()));
        let flags = JobSpec {
            run: RunSpec {
                budget: Some(Dur(std::time::Duration::from_secs(10))),
                ..RunSpec::default()
            },
            ..JobSpec::default()
        };
        let j = base.overridden_by(&flags, false, &|_| false).unwrap();
        assert!(j.cases.iter().all(|c| c.budget.is_none()));
        assert_eq!(j.run.budget, Some(Dur(std::time::Duration::from_secs(10))));
        // A run setting that says nothing of time keeps the job's.
        let sized = JobSpec {
            run: RunSpec {
                size: Some(Bytes(1 << 30)),
                ..RunSpec::default()
            },
            ..JobSpec::default()
        };
        let j = base.overridden_by(&sized, false, &|_| false).unwrap();
        assert!(j.cases.iter().all(|c| c.budget.is_some()));
    }

    #[test]
    fn io_size_replaces_time_or_goes_to_the_touch_cases() {
        let base = job("[run]\ntime = \"pass\"\n[[case]]\npattern = \"read\"\n");
        let flags = JobSpec {
            run: RunSpec {
                io_size: Some(Bytes(8 << 20)),
                ..RunSpec::default()
            },
            ..JobSpec::default()
        };
        let j = base.overridden_by(&flags, false, &|_| false).unwrap();
        assert_eq!((j.run.time, j.run.io_size), (None, Some(Bytes(8 << 20))));
        let touchy = job("[run]\ntime = \"pass\"\n[[case]]\npattern = \"randread\"\ntouch = \"8M\"\n[[case]]\npattern = \"read\"\n");
        let j = touchy.overridden_by(&flags, false, &|_| false).unwrap();
        assert_eq!(j.run.time, Some(RepTime::Pass));
        assert_eq!(j.run.io_size, None);
        assert_eq!(j.cases[0].touch, Some(Bytes(8 << 20)));
        assert_eq!(j.cases[1].touch, None);
    }

    #[test]
    fn a_larger_file_scales_the_cache_limit_and_an_existing_file_keeps_its_size() {
        let base = job("[run]\nsize = \"4G\"\ncache_limit = \"128M\"\n");
        let flags = JobSpec {
            run: RunSpec {
                size: Some(Bytes(1 << 30)),
                ..RunSpec::default()
            },
            ..JobSpec::default()
        };
        let j = base.overridden_by(&flags, true, &|_| false).unwrap();
        assert_eq!(j.run.cache_limit, Some(Bytes(32 << 20)));
        let on_file = JobSpec {
            run: RunSpec {
                file: Some("/dev/x".into()),
                ..RunSpec::default()
            },
            ..JobSpec::default()
        };
        let j = base.overridden_by(&on_file, true, &|_| true).unwrap();
        assert_eq!(j.run.size, None);
    }

    #[test]
    fn a_job_serialises_to_toml_that_reads_back_the_same() {
        let text = "name = \"x\"\n[run]\nsize = \"4G\"\ntime = \"pass\"\nci_target = \"2%\"\n[[case]]\nmethod = [\"direct\", \"direct\"]\npattern = [\"randread\", \"randwrite\"]\nthreads = [1, 2]\nspan = \"10%ram\"\nbs = 4096\n";
        let j = job(text);
        let back: JobSpec = toml::from_str(&toml::to_string(&j).unwrap()).unwrap();
        assert_eq!(back, j);
    }
}

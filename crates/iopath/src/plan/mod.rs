//! From a job ([`JobSpec`], whatever spelled it) to a validated [`Plan`]: the
//! target, and the list of cases (method x pattern x block size x queue
//! depth x threads).
//!
//! Everything that can be decided without touching the file system is
//! checked here, and a mistake is a [`UsageError`] (exit code 2).

use std::path::PathBuf;
use std::time::Duration;

use iopath_io::data::DataMode;
use iopath_io::{Method, SyncPolicy};

use crate::model::choice::MethodChoice;
pub use crate::model::job::{CaseSpec, JobSpec, RunSpec};
use crate::model::units::fmt_bytes;
use crate::model::words::{Bytes, RepTime, Span};
pub use crate::model::{CacheState, Pattern, TargetSpec, UsageError};
pub use crate::system::placement::numa_pairs;

/// Default size of the test file.
pub const DEFAULT_SIZE: u64 = 1 << 30;
/// Default time limit of one repetition: short, because the default run
/// repeats every case (adaptively) and must stay under a minute.
pub const DEFAULT_TIME: Duration = Duration::from_millis(150);
/// Most repetitions adaptive repetition runs of one case.
pub const MAX_ADAPTIVE_REPS: usize = 1000;
/// Fewest measured repetitions adaptive repetition runs.
pub const MIN_ADAPTIVE_REPS: usize = 3;
/// Defaults of the run settings a job leaves out (clap shows the same
/// ones in `--help`; a test holds them together).
pub const DEFAULT_CI_TARGET: f64 = 0.03;
pub const DEFAULT_MAX_TIME: Duration = Duration::from_millis(1500);
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(10);
pub const DEFAULT_SEED: u64 = 1;
pub const DEFAULT_RWMIX: u8 = 50;
pub const DEFAULT_UCACHE_PAGE: u64 = 4096;

pub use crate::model::schedule::{random_seed, Schedule};

/// One measured configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub method: Method,
    /// 1, or 2, 3, .. for a method named again in `--methods` (an A/A
    /// check: the same method as another arm of the same job).
    pub arm: u32,
    pub pattern: Pattern,
    pub block_size: u64,
    pub queue_depth_requested: u32,
    pub threads: u32,
    pub sync: SyncPolicy,
    pub rwmix_read_pct: u8,
    /// Random offsets within the first this many bytes of the file (capped
    /// at its size); `None`: the whole file.
    pub span: Option<u64>,
    /// Reads are copied from the engine's buffer into a user buffer.
    pub copy_to_user: bool,
    /// The file is truncated before every repetition of this case.
    pub sparse: bool,
    /// This case's cache state, when not the run's.
    pub cache: Option<CacheState>,
    /// What a preset calls the case, and what its source published.
    pub label: Option<String>,
    pub published: Option<crate::model::job::Published>,
    /// Where its workers run and its buffers live.
    pub placement: crate::system::placement::Placement,
    /// The NUMA pair of the placement study (`cpu n0 local / mem n1 remote`).
    pub pair: Option<String>,
    /// Bytes per repetition for this case, instead of `--io-size`.
    pub io_size: Option<u64>,
    /// What ends a repetition when no byte count does (`None`: sequential
    /// patterns one pass, random ones the time limit).
    pub until: Option<crate::model::words::Until>,
    /// Runs inside the `--cache-limit` cgroup.
    pub cache_limited: bool,
    /// The access hint applied after the engine opens (`mmap+random`).
    pub hint: Option<iopath_io::Hint>,
    /// The job's group: cases of one pattern with the same group are one
    /// job and one verdict over their variants (`CaseSpec::group`).
    pub group: Option<String>,
}

impl Case {
    /// A case of `method` on `pattern` with the run-wide settings.
    pub fn new(method: Method, pattern: Pattern, bs: u64, qd: u32, threads: u32) -> Case {
        Case {
            method,
            arm: 1,
            pattern,
            block_size: bs,
            queue_depth_requested: qd,
            threads,
            sync: SyncPolicy::End,
            rwmix_read_pct: DEFAULT_RWMIX,
            span: None,
            copy_to_user: false,
            sparse: false,
            cache: None,
            label: None,
            published: None,
            placement: crate::system::placement::Placement::default(),
            pair: None,
            io_size: None,
            until: None,
            cache_limited: true,
            hint: None,
            group: None,
        }
    }

    /// The method as results name it: `mmap`, or `mmap+random` with a hint.
    pub fn method_name(&self) -> String {
        MethodChoice {
            method: self.method,
            hint: self.hint,
        }
        .name()
    }
}

/// The methods a run without `--methods` compares on `pattern`: the
/// default ones ([`Method::in_default_run`]); on random patterns `mmap`
/// with `MADV_RANDOM` beside plain `mmap` (read-ahead is what makes mapped
/// random reads slow, and the hint is the usual cure); for the copy
/// pattern the methods that copy.
fn default_methods(pattern: Pattern) -> Vec<MethodChoice> {
    let mut out = Vec::new();
    for m in Method::ALL {
        if pattern == Pattern::Copy {
            if crate::model::copy_method(m).is_some() {
                out.push(m.into());
            }
            continue;
        }
        if !m.in_default_run() {
            continue;
        }
        out.push(m.into());
        if m == Method::Mmap && pattern.is_random() {
            out.push(MethodChoice {
                method: m,
                hint: Some(iopath_io::Hint::Random),
            });
        }
    }
    out
}

/// `--methods`'s default in words, made from the lists the plan uses
/// ([`default_methods`]), so that `run --help` and the README (whose
/// `--methods` row a test holds to it) cannot drift from the code.
pub fn default_methods_text() -> String {
    let names = |ms: Vec<MethodChoice>| {
        ms.iter()
            .map(MethodChoice::name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let read = default_methods(Pattern::Read);
    let random_too: Vec<MethodChoice> = default_methods(Pattern::RandRead)
        .into_iter()
        .filter(|m| !read.contains(m))
        .collect();
    let opt_in: Vec<MethodChoice> = Method::ALL
        .into_iter()
        .filter(|m| !m.in_default_run() && !m.copy_only())
        .map(MethodChoice::from)
        .collect();
    format!(
        "{}; on random patterns {} too; the copy pattern: {}. Opt-in (run only when named): {}",
        names(read),
        names(random_too),
        names(default_methods(Pattern::Copy)),
        names(opt_in)
    )
}

/// A validated run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The preset the cases come from, if any.
    pub preset: Option<String>,
    /// The job file (TOML or fio) they come from, if any.
    pub job_file: Option<PathBuf>,
    /// How the results are laid out under the tables.
    pub layout: crate::model::job::Layout,
    /// fio options left out (`--ignore-unknown`), for the result's warnings.
    pub ignored_options: Vec<String>,
    pub target: TargetSpec,
    /// Requested file size (`None`: the existing file's size, or the default).
    pub size: Option<u64>,
    pub cases: Vec<Case>,
    pub time: Option<Duration>,
    pub io_size: Option<u64>,
    /// No time limit: every repetition is one whole pass over the file or
    /// span (presets with `time = "pass"`).
    pub whole_pass: bool,
    /// `Some(n)`: exactly n measured repetitions; `None`: adaptive.
    pub repeat: Option<u32>,
    pub ci_target: f64,
    pub max_time: Duration,
    /// `--case-timeout`: the wall-clock cap of one case, all its
    /// repetitions together; `None`: no cap.
    pub case_timeout: Option<Duration>,
    pub warmup: u32,
    pub schedule: Schedule,
    /// Seed of the rounds' orders: `--order-seed`, else drawn at random.
    pub order_seed: u64,
    pub interval: Duration,
    pub seed: u64,
    pub cache: CacheState,
    pub drop_caches: bool,
    pub data: DataMode,
    pub sparse: bool,
    /// `--verify`: written blocks carry headers and checksums, checked on
    /// reads and after write repetitions ([`Plan::verify_unit`]).
    pub verify: bool,
    /// `--cache-limit`: the memory cgroup cap cases run under.
    pub cache_limit: Option<u64>,
    /// Budget of the user-space caches (ucache, uffd).
    pub ucache_size: u64,
    pub ucache_page: u64,
    /// `--pool-threads` (`None`: the threadpool method's default).
    pub pool_threads: Option<u32>,
    /// `--neighbour`: a cached reader runs beside every case.
    pub neighbour: bool,
}

impl Plan {
    /// The adaptive stopping rule, or `None` with `--repeat`.
    pub fn stop_rule(&self) -> Option<crate::stats::StopRule> {
        self.repeat.is_none().then_some(crate::stats::StopRule {
            ci_target: self.ci_target,
            min_reps: MIN_ADAPTIVE_REPS,
            wanted_reps: MIN_ADAPTIVE_REPS,
            max_reps: MAX_ADAPTIVE_REPS,
            max_time_ns: self.max_time.as_nanos() as u64,
            warmup_rounds: self.warmup as usize,
        })
    }

    /// [`Plan::from_spec_on`] on this machine: its topology, the CPUs this
    /// process may run on (cgroup cpuset, taskset), and the NUMA node of
    /// the disk under the target (asked only by the placement study).
    pub fn from_spec(spec: &JobSpec, origin: &Origin) -> Result<Plan, UsageError> {
        let topo = crate::system::topology::Topology::read(std::path::Path::new("/sys"));
        let allowed = iopath_io::numa::current_affinity().unwrap_or_default();
        Plan::from_spec_on(spec, origin, &topo, &allowed, &|| {
            device_node_under(&spec.run)
        })
    }

    /// The one place a job becomes a plan: every setting checked, every
    /// default applied, every case crossed from its axes (for each case
    /// entry: pattern, then threads, then NUMA pair, then method).
    pub fn from_spec_on(
        spec: &JobSpec,
        origin: &Origin,
        topo: &crate::system::topology::Topology,
        allowed: &[u32],
        device_node: &dyn Fn() -> Option<u32>,
    ) -> Result<Plan, UsageError> {
        let r = &spec.run;
        let placement = crate::system::placement::from_flags(
            r.cpus.as_deref(),
            r.numa_node,
            r.mem_node,
            r.mem_policy,
            r.sqpoll_cpu,
            topo,
            allowed,
        )?;
        check_run(r)?;
        let file_exists = r.file.as_ref().is_some_and(|f| f.exists());
        let target = match &r.file {
            Some(p) => TargetSpec::File {
                path: p.clone(),
                allow_write: origin.allow_write,
                force_signature: origin.force_signature,
                prefill: origin.prefill,
            },
            None => TargetSpec::TempIn(r.dir.clone().unwrap_or_else(|| PathBuf::from("."))),
        };
        if r.file.is_some() && r.dir.is_some() {
            return Err(UsageError(
                "give a file (--file) or a directory (--dir) to measure in, not both".into(),
            ));
        }
        let sparse = r.sparse.unwrap_or(false);
        if sparse && file_exists {
            return Err(UsageError(
                "--sparse truncates the file before every repetition: it only works on a file iopath creates (--dir, or a --file that does not exist yet)".into(),
            ));
        }
        let verify = r.verify.unwrap_or(false);
        if verify && sparse {
            return Err(UsageError(
                "--verify and --sparse do not go together: the holes of a sparse file hold no verifiable blocks".into(),
            ));
        }
        let cache = r.cache.unwrap_or_default();
        let drop_caches = r.drop_caches.unwrap_or(false);
        if drop_caches && cache != CacheState::Cold {
            return Err(UsageError(format!(
                "--drop-caches goes with --cache cold, not --cache {}",
                cache.name()
            )));
        }
        if (origin.force_signature || origin.prefill) && !origin.allow_write {
            return Err(UsageError(format!(
                "{} only applies with --allow-write (and a --file)",
                if origin.prefill {
                    "--prefill"
                } else {
                    "--force-signature"
                }
            )));
        }
        if origin.allow_write && r.file.is_none() {
            return Err(UsageError(
                "--allow-write only applies to --file; iopath's own temporary file is always writable".into(),
            ));
        }
        let default_case = [CaseSpec::default()];
        let entries: &[CaseSpec] = if spec.cases.is_empty() {
            &default_case
        } else {
            &spec.cases
        };
        if entries
            .iter()
            .any(|c| c.placement.as_deref() == Some("numa-pairs"))
            && !placement.is_default()
        {
            return Err(UsageError(format!(
                "{} places every case itself (each CPU node x memory node pair): drop --cpus, --numa-node, --mem-node, --mem-policy and --sqpoll-cpu",
                origin.what()
            )));
        }
        let mut cases = Vec::new();
        for pc in entries {
            cases.extend(entry_cases(
                spec,
                pc,
                origin,
                &placement,
                topo,
                allowed,
                device_node,
            )?);
            // Checked as the cases grow: no entry crosses into more than
            // the bound before it is refused.
            let most = crate::model::limits::CASES.value()?;
            if cases.len() as u64 > most {
                return Err(UsageError(format!(
                    "{} makes more than {most} cases, the most one run takes ({}): run fewer at a time (split the job), or set {} to a larger number",
                    origin.what(),
                    crate::model::limits::CASES.env,
                    crate::model::limits::CASES.env,
                )));
            }
        }
        number_arms(&mut cases);
        check_cases(&cases, r.size.map(|b| b.0), file_exists)?;
        if verify {
            check_verify(&cases)?;
        }
        let (time, whole_pass) = match r.time {
            Some(RepTime::Pass) => (None, true),
            Some(RepTime::Limit(d)) => (Some(d), false),
            None => (None, false),
        };
        let cache_limit = r.cache_limit.map(|b| b.0);
        Ok(Plan {
            preset: origin.preset.clone(),
            job_file: origin.file.clone(),
            layout: spec.layout,
            ignored_options: origin.ignored.clone(),
            target,
            size: r.size.map(|b| b.0),
            cases,
            time,
            io_size: r.io_size.map(|b| b.0),
            whole_pass,
            repeat: r.repeat,
            ci_target: r.ci_target.map_or(DEFAULT_CI_TARGET, |p| p.0),
            max_time: r.max_time.map_or(DEFAULT_MAX_TIME, |d| d.0),
            case_timeout: r.case_timeout.map(|d| d.0).filter(|d| !d.is_zero()),
            warmup: r.warmup.unwrap_or(0),
            schedule: r.schedule.unwrap_or(Schedule::Interleaved),
            order_seed: r.order_seed.unwrap_or_else(random_seed),
            interval: r.interval.map_or(DEFAULT_INTERVAL, |d| d.0),
            seed: r.seed.unwrap_or(DEFAULT_SEED),
            cache,
            drop_caches,
            data: r.data.unwrap_or(DataMode::Random),
            sparse,
            verify,
            cache_limit,
            ucache_size: r
                .ucache_size
                .map(|b| b.0)
                .or(cache_limit)
                .unwrap_or(64 << 20),
            ucache_page: r.ucache_page.map_or(DEFAULT_UCACHE_PAGE, |b| b.0),
            pool_threads: r.pool_threads,
            neighbour: r.neighbour.unwrap_or(false),
        })
    }

    /// The methods the plan uses, in order.
    pub fn methods(&self) -> Vec<Method> {
        dedup(&self.cases.iter().map(|c| c.method).collect::<Vec<_>>())
    }

    /// True when some case writes.
    pub fn writes(&self) -> bool {
        self.cases.iter().any(|c| c.pattern.writes())
    }

    /// True when some case touches a file (not only `null`).
    pub fn needs_file(&self) -> bool {
        self.cases.iter().any(|c| !c.method.is_null())
    }

    /// The time limit of a repetition: `--time`, else the default (150 ms)
    /// unless `--io-size` alone bounds it or a preset asks for whole passes.
    pub fn time_limit(&self) -> Option<Duration> {
        if self.whole_pass && self.time.is_none() {
            return None;
        }
        match (self.time, self.io_size) {
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            (None, None) => Some(DEFAULT_TIME),
        }
    }

    /// The time limit of one repetition of `case`: the run's, unless the
    /// case's own byte count (a preset's `touch`) bounds it alone.
    pub fn case_time_limit(&self, case: &Case) -> Option<Duration> {
        if case.io_size.is_some() && self.time.is_none() {
            None
        } else {
            self.time_limit()
        }
    }

    /// True when a sequential repetition of `case` runs for its whole time
    /// limit, starting over at the end of its range ("time means time"):
    /// a time limit and no byte count bound it, and its method keeps no
    /// cache a second pass would read ([`crate::model::method_caches`]), or
    /// the case's cache is `warm` (memory is what was asked for: every pass
    /// reads the cached file, as fio's `time_based` does). A caching
    /// method's sequential repetition from a cold cache stops after one
    /// pass instead (a second pass would measure memory), and says so. A
    /// case's own `until` decides for it.
    pub fn wraps(&self, case: &Case) -> bool {
        use crate::model::words::Until;
        let sequential = !case.pattern.is_random() && case.pattern != Pattern::Copy;
        let bytes = case.io_size.or(self.io_size).is_some();
        match case.until {
            Some(Until::Time) => sequential && !bytes,
            Some(Until::Pass) => false,
            // Verified writes stay one pass: starting over could put one
            // block in flight twice, and two writes of a block may
            // interleave.
            None => {
                sequential
                    && !bytes
                    && self.case_time_limit(case).is_some()
                    && (case.cache.unwrap_or(self.cache) == CacheState::Warm
                        || !crate::model::method_caches(case.method))
                    && !(self.verify && case.pattern.writes())
            }
        }
    }
}

/// Where a job came from, and what only the command line may say.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The built-in preset it is, if it is one.
    pub preset: Option<String>,
    /// The job file it was read from, if any.
    pub file: Option<PathBuf>,
    /// `--allow-write`: an existing file may be written (never from a file).
    pub allow_write: bool,
    /// `--force-signature`: a block device with a signature may be written.
    pub force_signature: bool,
    /// `--prefill`: an existing --file is filled before the run.
    pub prefill: bool,
    /// Options of a fio job file left out (`--ignore-unknown`).
    pub ignored: Vec<String>,
}

impl Origin {
    /// How messages name the job: `--preset hmmap`, `job.toml`, `this run`.
    pub fn what(&self) -> String {
        match (&self.preset, &self.file) {
            (Some(p), _) => format!("--preset {p}"),
            (None, Some(f)) => f.display().to_string(),
            (None, None) => "this run".into(),
        }
    }
}

/// A method that comes again in the same job (two entries of a job file
/// naming it for the same pattern, block size, ...) is another arm of it,
/// numbered across the whole plan, as within one entry.
fn number_arms(cases: &mut [Case]) {
    // One count per method, hint and job: linear in the cases.
    let arms: Vec<u32> = {
        let mut seen = std::collections::HashMap::new();
        cases
            .iter()
            .map(|c| {
                let n = seen.entry((c.method, c.hint, c.job_key())).or_insert(0u32);
                *n += 1;
                *n
            })
            .collect()
    };
    for (c, arm) in cases.iter_mut().zip(arms) {
        c.arm = arm;
    }
}

impl Case {
    /// What the case runs apart from its method: the fields of the
    /// result's job (`result::Job`), so cases that differ only by method
    /// are one job.
    #[allow(clippy::type_complexity)]
    fn job_key(
        &self,
    ) -> (
        Pattern,
        u64,
        u32,
        u32,
        SyncPolicy,
        Option<u8>,
        &Option<String>,
        Option<u64>,
        bool,
        bool,
        &Option<String>,
    ) {
        (
            self.pattern,
            self.block_size,
            self.queue_depth_requested,
            self.threads,
            self.sync,
            (self.pattern == Pattern::RandRw).then_some(self.rwmix_read_pct),
            &self.label,
            self.span,
            self.copy_to_user,
            self.sparse,
            &self.pair,
        )
    }
}

/// The run settings' own limits (what clap checks for flags, checked again
/// for job files).
fn check_run(r: &RunSpec) -> Result<(), UsageError> {
    let bad = |m: &str| Err(UsageError(m.into()));
    if r.repeat == Some(0) || r.repeat.is_some_and(|n| n > 100_000) {
        return bad("repeat must be 1 to 100000 (--repeat)");
    }
    if r.repeat.is_some() && (r.ci_target.is_some() || r.max_time.is_some()) {
        return bad("repeat runs a fixed number of repetitions: drop ci_target and max_time (--ci-target, --max-time), which are for adaptive repetition");
    }
    if r.warmup.is_some_and(|n| n > 1000) {
        return bad("warmup must be 0 to 1000 (--warmup)");
    }
    if r.interval.is_some_and(|d| d.0 < Duration::from_millis(1)) {
        return bad("--interval must be at least 1ms (e.g. 100ms)");
    }
    if r.max_time.is_some_and(|d| d.0.is_zero()) {
        return bad("--max-time 0 leaves no time for a repetition");
    }
    if r.size == Some(Bytes(0)) {
        return bad("--size 0: the test file needs at least one block");
    }
    if r.io_size == Some(Bytes(0)) {
        return bad("--io-size 0 would measure nothing");
    }
    if r.time == Some(RepTime::Limit(Duration::ZERO)) {
        return bad("--time 0 would measure nothing");
    }
    if r.ucache_size == Some(Bytes(0)) {
        return bad("--ucache-size 0 leaves the cache no page");
    }
    if let Some(Bytes(p)) = r.ucache_page {
        if p == 0 || p % 512 != 0 || p > (1 << 30) {
            return Err(UsageError(format!(
                "--ucache-page {p}: give a multiple of 512 bytes (the O_DIRECT alignment; 4k by default), at most 1 GiB"
            )));
        }
    }
    Ok(())
}

/// What the crossed cases must satisfy together.
/// Largest verification unit: a file written by one run reads back in
/// another whatever its block sizes, as long as they are multiples of it.
pub const VERIFY_UNIT: u64 = 4096;

/// `--verify` needs every block to hold a header: the verification unit
/// (4 KiB, or the greatest common divisor of the block sizes when that is
/// smaller) must be at least
/// [`iopath_io::verify::HEADER_LEN`] bytes.
fn check_verify(cases: &[Case]) -> Result<(), UsageError> {
    let unit = verify_unit_of(cases);
    if unit < iopath_io::verify::HEADER_LEN as u64 {
        return Err(UsageError(format!(
            "--verify needs blocks of at least {} bytes (each holds a {}-byte header); the block sizes here give {unit}-byte units: use a larger --bs",
            iopath_io::verify::HEADER_LEN,
            iopath_io::verify::HEADER_LEN
        )));
    }
    if cases.iter().any(|c| c.sparse) {
        return Err(UsageError(
            "--verify and a sparse case do not go together: holes hold no verifiable blocks".into(),
        ));
    }
    Ok(())
}

/// The verification unit of `cases`: the greatest common divisor of
/// [`VERIFY_UNIT`] and their block sizes (every request is whole units at
/// unit-aligned offsets).
fn verify_unit_of(cases: &[Case]) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    cases
        .iter()
        .filter(|c| !c.method.is_null())
        .fold(VERIFY_UNIT, |g, c| gcd(g, c.block_size))
}

impl Plan {
    /// With `--verify`, the size of a verified unit (each starts with a
    /// header): 4 KiB, or the gcd of the block sizes when smaller.
    pub fn verify_unit(&self) -> Option<u64> {
        self.verify
            .then(|| verify_unit_of(&self.cases))
            .filter(|&u| u > 0)
    }
}

fn check_cases(cases: &[Case], size: Option<u64>, file_exists: bool) -> Result<(), UsageError> {
    if let Some(c) = cases.iter().find(|c| {
        c.span
            .is_some_and(|s| s < c.block_size * u64::from(c.threads.max(1)))
    }) {
        return Err(UsageError(format!(
            "a span of {} is less than one {} block per thread ({} thread(s)): give a larger span or a smaller --bs",
            fmt_bytes(c.span.unwrap_or(0)),
            fmt_bytes(c.block_size),
            c.threads
        )));
    }
    if file_exists && cases.iter().any(|c| c.pattern == Pattern::Copy) {
        return Err(UsageError(
            "the copy pattern writes a copy beside the file it copies: run it on iopath's own test file (--dir), not on an existing --file".into(),
        ));
    }
    if file_exists && cases.iter().any(|c| c.sparse) {
        return Err(UsageError(
            "this job truncates the file before some repetitions (a sparse file): it only works on a file iopath creates (--dir, or a --file that does not exist yet)".into(),
        ));
    }
    if let Some(size) = size {
        // Each case's threads must get at least one of its blocks.
        if let Some(c) = cases
            .iter()
            .find(|c| size / u64::from(c.threads.max(1)) < c.block_size)
        {
            let per_thread = size / u64::from(c.threads.max(1));
            return Err(UsageError(format!(
                "--size {} gives each of {} thread(s) {}, less than one {} block; use a larger --size or a smaller --bs",
                fmt_bytes(size),
                c.threads,
                fmt_bytes(per_thread),
                fmt_bytes(c.block_size)
            )));
        }
    }
    Ok(())
}

/// The cases of one entry: every pattern (outer), thread count, NUMA pair
/// and method (inner) it names.
fn entry_cases(
    spec: &JobSpec,
    pc: &CaseSpec,
    origin: &Origin,
    placement: &crate::system::placement::Placement,
    topo: &crate::system::topology::Topology,
    allowed: &[u32],
    device_node: &dyn Fn() -> Option<u32>,
) -> Result<Vec<Case>, UsageError> {
    let what = origin.what();
    if let Some(Bytes(bs)) = pc.bs {
        if bs == 0 || bs > (1 << 30) {
            return Err(UsageError(format!(
                "--bs {bs} is out of range: use 1 byte to 1 GiB (e.g. 4k, 1M)"
            )));
        }
    }
    let thread_counts = pc.threads.as_ref().map_or(vec![1], |t| t.0.clone());
    if pc.qd.is_some_and(|q| !(1..=4096).contains(&q))
        || thread_counts.iter().any(|t| !(1..=1024).contains(t))
    {
        return Err(UsageError(format!(
            "{what}: the queue depth must be 1 to 4096 (--qd) and threads 1 to 1024 (--threads)"
        )));
    }
    if pc.touch == Some(Bytes(0)) {
        return Err(UsageError(format!(
            "{what}: a touch (--touch, --io-size) of 0 would measure nothing"
        )));
    }
    if pc.rwmix.is_some_and(|p| p > 100) {
        return Err(UsageError(format!(
            "{what}: rwmix is a percentage, 0 to 100 (--rwmix)"
        )));
    }
    let span = pc.span.map(resolve_span).transpose()?;
    let pairs: Vec<(Option<String>, crate::system::placement::Placement)> =
        match pc.placement.as_deref() {
            None => vec![(None, placement.clone())],
            Some("numa-pairs") => {
                crate::system::placement::numa_placements(topo, allowed, device_node())
            }
            Some(other) => {
                return Err(UsageError(format!(
                    "{what}: unknown placement '{other}'; valid: numa-pairs"
                )))
            }
        };
    let patterns = pc
        .pattern
        .as_ref()
        .map_or_else(|| Pattern::DEFAULT.to_vec(), |l| dedup(&l.0));
    // The entry's cross, counted before it is made: lists of thousands of
    // methods and thread counts would otherwise build billions of cases
    // before the bound is checked.
    let most = crate::model::limits::CASES.value()?;
    let methods_most = pc.method.as_ref().map_or(Method::ALL.len(), |l| l.0.len());
    let crossed = [
        patterns.len(),
        thread_counts.len(),
        pairs.len(),
        methods_most,
    ]
    .iter()
    .fold(1u64, |n, &k| n.saturating_mul(k as u64));
    if crossed > most {
        return Err(UsageError(format!(
            "{what} crosses one entry into {crossed} cases (patterns x thread counts x placements x methods), more than {most}, the most one run takes ({}): run fewer at a time (split the job), or set {} to a larger number",
            crate::model::limits::CASES.env,
            crate::model::limits::CASES.env,
        )));
    }
    let mut cases = Vec::new();
    for pattern in patterns {
        // No methods named: the default ones, and for the copy pattern the
        // methods that copy. A method named again is another arm of the
        // same method (an A/A check), not a duplicate to drop.
        let methods: Vec<MethodChoice> = match &pc.method {
            Some(l) => l.0.clone(),
            None => default_methods(pattern),
        };
        let bs = pc.bs.map_or_else(|| pattern.default_block_size(), |b| b.0);
        let qd = pc.qd.unwrap_or_else(|| pattern.default_queue_depth());
        for &threads in &thread_counts {
            for (pair, placement) in &pairs {
                for &MethodChoice { method, hint } in &methods {
                    // Arms are numbered over the whole plan (`number_arms`).
                    cases.push(Case {
                        sync: pc.sync.unwrap_or(SyncPolicy::End),
                        rwmix_read_pct: pc.rwmix.unwrap_or(DEFAULT_RWMIX),
                        span,
                        copy_to_user: pc.copy_to_user,
                        sparse: pc.sparse,
                        cache: pc.cache,
                        label: pc.label.clone(),
                        published: pc
                            .published
                            .clone()
                            .or_else(|| spec.reference(method.name(), pattern.name(), threads)),
                        placement: placement.clone(),
                        pair: pair.clone(),
                        io_size: pc.touch.map(|b| b.0),
                        until: pc.until,
                        // Only the cases a job marks run under its cache
                        // limit; with no case marked (flags), every case.
                        cache_limited: pc.cache_limited
                            || !spec.cases.iter().any(|c| c.cache_limited),
                        hint,
                        group: pc.group.clone(),
                        ..Case::new(method, pattern, bs, qd, threads)
                    });
                }
            }
        }
    }
    Ok(cases)
}

/// The NUMA node of the disk under the run's target, if the kernel says.
fn device_node_under(r: &RunSpec) -> Option<u32> {
    let at = match (&r.file, &r.dir) {
        (Some(f), _) if f.exists() => f.clone(),
        (Some(f), _) => f
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), |p| p.to_path_buf()),
        (None, Some(d)) => d.clone(),
        (None, None) => PathBuf::from("."),
    };
    crate::system::sysinfo::device_of(&at)
        .and_then(|d| d.numa_node)
        .and_then(|n| u32::try_from(n).ok())
}

/// A span in bytes: a size, or a share of this machine's memory.
pub fn resolve_span(span: Span) -> Result<u64, UsageError> {
    match span {
        Span::Bytes(b) => Ok(b),
        Span::RamPct(pct) => {
            let total = std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|m| crate::system::sysinfo::meminfo_kb(&m, "MemTotal"))
                .ok_or_else(|| {
                    UsageError(format!(
                        "span '{pct}%ram': /proc/meminfo gives no MemTotal; give a size instead"
                    ))
                })?;
            Ok(((total * 1024) as f64 * pct / 100.0) as u64)
        }
    }
}

fn dedup<T: PartialEq + Copy>(v: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(v.len());
    for &x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numa preset's cases on a fixture topology, one line each.
    fn numa_cases(fixture: &str, device_node: Option<u32>) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/topology")
            .join(fixture);
        let topo = crate::system::topology::Topology::read(&root);
        let numa = crate::import::preset::find("numa").unwrap();
        let origin = Origin {
            preset: Some("numa".into()),
            ..Origin::default()
        };
        let plan = Plan::from_spec_on(&numa.job, &origin, &topo, &topo.cpus_online, &|| {
            device_node
        })
        .unwrap();
        plan.cases
            .iter()
            .map(|c| {
                format!(
                    "{} {} {} | {} | cpus {} | mem {}",
                    c.label.as_deref().unwrap_or(""),
                    c.method_name(),
                    c.pattern.name(),
                    c.pair.as_deref().unwrap_or(""),
                    c.placement
                        .cpus
                        .as_deref()
                        .map_or("-".into(), crate::system::topology::format_cpulist),
                    c.placement
                        .mem
                        .as_ref()
                        .map_or("-".into(), crate::system::placement::policy_name),
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn numa_preset_pairs_on_two_nodes_relative_to_the_device() {
        // The NVMe disk of the 2-node fixture hangs off node 1.
        insta::assert_snapshot!("numa_2node_device_on_1", numa_cases("2node", Some(1)));
        let unknown = numa_cases("2node", None);
        assert!(unknown.contains("cpu n0 local / mem n0 local"), "{unknown}");
    }

    #[test]
    fn numa_preset_on_four_nodes_picks_the_farthest_nodes_with_cpus_and_memory() {
        // The fixture's NVMe (multipath) disk is on node 1.
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/topology/4node");
        let dev = crate::system::topology::device_numa_node(&root, "nvme0n1")
            .and_then(|n| u32::try_from(n).ok());
        assert_eq!(dev, Some(1));
        insta::assert_snapshot!("numa_4node_device_on_1", numa_cases("4node", dev));
    }

    #[test]
    fn numa_pairs_never_repeat_when_the_device_node_has_no_memory() {
        use crate::system::topology::{Node, Topology};
        let topo = Topology {
            nodes: vec![
                Node {
                    id: 0,
                    cpus: vec![0, 1],
                    memory_bytes: Some(8 << 30),
                    distances: vec![10, 21],
                },
                Node {
                    id: 1,
                    cpus: vec![2, 3],
                    memory_bytes: Some(0),
                    distances: vec![21, 10],
                },
            ],
            cpus_online: vec![0, 1, 2, 3],
            ..Topology::default()
        };
        let pairs = numa_pairs(&topo, Some(1));
        let mut seen: Vec<(u32, u32)> = pairs.iter().map(|(c, m, _)| (*c, *m)).collect();
        let n = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), n, "{pairs:?}");
        // CPUs local to the device (node 1), memory nearest to it (node 0,
        // the only node with memory): two pairs, no remote memory.
        assert_eq!(seen, vec![(0, 0), (1, 0)], "{pairs:?}");
    }

    #[test]
    fn numa_preset_on_one_node_has_one_pair() {
        let text = numa_cases("1node", Some(0));
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(
            text.lines()
                .all(|l| l.contains("cpu n0 local / mem n0 local")),
            "{text}"
        );
    }
    use crate::cli::Command;

    fn plan(args: &[&str]) -> Result<Plan, UsageError> {
        let mut v = vec!["iopath", "run"];
        v.extend_from_slice(args);
        let Some(Command::Run(r)) = crate::cli::parse_from(v).unwrap().command else {
            unreachable!()
        };
        crate::cli::commands::plan_of(&r)
    }

    #[test]
    fn default_plan_compares_all_real_methods_on_four_patterns() {
        let p = plan(&[]).unwrap();
        // Nine methods on four patterns, and mmap+random beside mmap on
        // the two random ones.
        assert_eq!(p.cases.len(), 4 * 9 + 2);
        assert!(p.cases.iter().all(|c| !c.method.is_null()));
        let hinted: Vec<(Pattern, String)> = p
            .cases
            .iter()
            .filter(|c| c.hint.is_some())
            .map(|c| (c.pattern, c.method_name()))
            .collect();
        assert_eq!(
            hinted,
            [
                (Pattern::RandRead, "mmap+random".to_string()),
                (Pattern::RandWrite, "mmap+random".to_string())
            ]
        );
        let rr = p
            .cases
            .iter()
            .find(|c| c.pattern == Pattern::RandRead)
            .unwrap();
        assert_eq!((rr.block_size, rr.queue_depth_requested), (4096, 32));
        let sr = p.cases.iter().find(|c| c.pattern == Pattern::Read).unwrap();
        assert_eq!((sr.block_size, sr.queue_depth_requested), (1 << 20, 8));
        assert_eq!(p.target, TargetSpec::TempIn(PathBuf::from(".")));
    }

    #[test]
    fn duplicates_are_dropped_and_order_kept() {
        let p = plan(&[
            "--methods",
            "direct,buffered,direct",
            "--patterns",
            "randread",
        ])
        .unwrap();
        assert_eq!(p.methods(), vec![Method::Direct, Method::Buffered]);
    }

    #[test]
    fn impossible_sizes_are_usage_errors() {
        assert!(plan(&["--size", "0"]).is_err());
        let e = plan(&["--size", "64k", "--bs", "1M"]).unwrap_err();
        assert!(e.0.contains("less than one"), "{e}");
        let e = plan(&["--size", "1M", "--threads", "4", "--bs", "512k"]).unwrap_err();
        assert!(e.0.contains("4 thread"), "{e}");
        assert!(plan(&["--time", "0s"]).is_err());
        assert!(plan(&["--allow-write"]).is_err());
    }
}

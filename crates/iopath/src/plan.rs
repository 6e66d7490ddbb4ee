//! From command-line arguments to a validated [`Plan`]: the target, and the
//! list of cases (method x pattern x block size x queue depth x threads).
//!
//! Everything that can be decided without touching the file system is
//! checked here, and a mistake is a [`UsageError`] (exit code 2).

use std::path::PathBuf;
use std::time::Duration;

use iopath_io::data::DataMode;
use iopath_io::{Method, SyncPolicy};
use serde::{Deserialize, Serialize};

use crate::cli::RunArgs;
use crate::units::fmt_bytes;

/// Default size of the test file.
pub const DEFAULT_SIZE: u64 = 1 << 30;
/// Default time limit of one repetition: short, because the default run
/// repeats every case (adaptively) and must stay under a minute.
pub const DEFAULT_TIME: Duration = Duration::from_millis(150);
/// Most repetitions adaptive repetition runs of one case.
pub const MAX_ADAPTIVE_REPS: usize = 1000;
/// Fewest measured repetitions adaptive repetition runs.
pub const MIN_ADAPTIVE_REPS: usize = 3;

/// A mistake in what the user asked for: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// An access pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    /// Copy the test file to a new file beside it (NIOBench's copy), timed
    /// through the destination's flush and close.
    Copy,
}

impl Pattern {
    pub const DEFAULT: [Pattern; 4] = [
        Pattern::Read,
        Pattern::Write,
        Pattern::RandRead,
        Pattern::RandWrite,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::RandRw => "randrw",
            Pattern::Copy => "copy",
        }
    }

    pub fn from_name(s: &str) -> Option<Pattern> {
        Some(match s {
            "read" | "seqread" => Pattern::Read,
            "write" | "seqwrite" => Pattern::Write,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "randrw" => Pattern::RandRw,
            "copy" => Pattern::Copy,
            _ => return None,
        })
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            Pattern::RandRead | Pattern::RandWrite | Pattern::RandRw
        )
    }

    /// True when the pattern writes the test file (a copy writes a new
    /// file of its own and only reads the test file).
    pub fn writes(self) -> bool {
        matches!(self, Pattern::Write | Pattern::RandWrite | Pattern::RandRw)
    }

    pub fn default_block_size(self) -> u64 {
        if self.is_random() {
            4096
        } else {
            1 << 20
        }
    }

    pub fn default_queue_depth(self) -> u32 {
        if self.is_random() {
            32
        } else {
            8
        }
    }
}

/// Page-cache state of the target before each repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheState {
    /// Dirty pages written back and the file's cached pages dropped
    /// (`posix_fadvise(DONTNEED)`): reads must come from the device.
    #[default]
    Cold,
    /// The file read once through the page cache before timing.
    Warm,
    /// Left as the previous case left it.
    AsIs,
}

impl CacheState {
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Cold => "cold",
            CacheState::Warm => "warm",
            CacheState::AsIs => "as-is",
        }
    }

    pub fn from_name(s: &str) -> Option<CacheState> {
        [CacheState::Cold, CacheState::Warm, CacheState::AsIs]
            .into_iter()
            .find(|c| c.name() == s)
    }
}

pub use crate::schedule::{random_seed, Schedule};

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
    pub published: Option<crate::preset::Published>,
    /// Where its workers run and its buffers live.
    pub placement: crate::placement::Placement,
    /// The NUMA pair of the placement study (`cpu n0 local / mem n1 remote`).
    pub pair: Option<String>,
    /// Bytes per repetition for this case, instead of `--io-size`.
    pub io_size: Option<u64>,
    /// Runs inside the `--cache-limit` cgroup.
    pub cache_limited: bool,
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
            rwmix_read_pct: 50,
            span: None,
            copy_to_user: false,
            sparse: false,
            cache: None,
            label: None,
            published: None,
            placement: crate::placement::Placement::default(),
            pair: None,
            io_size: None,
            cache_limited: true,
        }
    }
}

/// What the run measures on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A temporary file created in this directory, removed at the end.
    TempIn(PathBuf),
    /// A file the user named.
    File { path: PathBuf, allow_write: bool },
}

/// A validated run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The preset the cases come from, if any.
    pub preset: Option<String>,
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
    pub json: Option<PathBuf>,
    /// Report files written at the end.
    pub reports: crate::report::Outputs,
    /// `--cache-limit`: the memory cgroup cap cases run under.
    pub cache_limit: Option<u64>,
    /// Budget of the user-space caches (ucache, uffd).
    pub ucache_size: u64,
    pub ucache_page: u64,
    pub quiet: bool,
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
        })
    }

    pub fn from_args(a: &RunArgs) -> Result<Plan, UsageError> {
        let topo = crate::topology::Topology::read(std::path::Path::new("/sys"));
        // The CPUs this process may run on (cgroup cpuset, taskset).
        let allowed = iopath_io::numa::current_affinity().unwrap_or_default();
        Plan::from_args_on(a, &topo, &allowed, &|| device_node_under(a))
    }

    /// [`Plan::from_args`] on a given topology, with the device's node
    /// asked for only when the placement study needs it.
    pub fn from_args_on(
        a: &RunArgs,
        topo: &crate::topology::Topology,
        allowed: &[u32],
        device_node: &dyn Fn() -> Option<u32>,
    ) -> Result<Plan, UsageError> {
        let preset = a.preset.as_deref().map(crate::preset::find).transpose()?;
        let placement = crate::placement::from_flags(
            a.cpus.as_deref(),
            a.numa_node,
            a.mem_node,
            a.mem_policy,
            a.sqpoll_cpu,
            topo,
            allowed,
        )?;
        let a = &match &preset {
            Some(p) => apply_preset_run(a, p)?,
            None => a.clone(),
        };
        let methods: Vec<Method> = if a.methods.is_empty() {
            Method::ALL
                .into_iter()
                .filter(|m| m.in_default_run())
                .collect()
        } else {
            // A method named again is another arm of the same method (an
            // A/A check), not a duplicate to drop.
            a.methods.clone()
        };
        let patterns: Vec<Pattern> = if a.patterns.is_empty() {
            Pattern::DEFAULT.to_vec()
        } else {
            dedup(&a.patterns)
        };
        if let Some(bs) = a.bs {
            if bs == 0 || bs > (1 << 30) {
                return Err(UsageError(format!(
                    "--bs {bs} is out of range: use 1 byte to 1 GiB (e.g. 4k, 1M)"
                )));
            }
        }
        if a.threads == 0 || a.repeat == Some(0) {
            return Err(UsageError(
                "--threads and --repeat must be at least 1".into(),
            ));
        }
        if a.interval < Duration::from_millis(1) {
            return Err(UsageError(
                "--interval must be at least 1ms (e.g. 100ms)".into(),
            ));
        }
        if a.max_time.is_zero() {
            return Err(UsageError(
                "--max-time 0 leaves no time for a repetition".into(),
            ));
        }
        if a.size == Some(0) {
            return Err(UsageError(
                "--size 0: the test file needs at least one block".into(),
            ));
        }
        if a.io_size == Some(0) {
            return Err(UsageError("--io-size 0 would measure nothing".into()));
        }
        if a.time == Some(Duration::ZERO) {
            return Err(UsageError("--time 0 would measure nothing".into()));
        }
        let target = match &a.file {
            Some(p) => TargetSpec::File {
                path: p.clone(),
                allow_write: a.allow_write,
            },
            None => TargetSpec::TempIn(a.dir.clone().unwrap_or_else(|| PathBuf::from("."))),
        };
        if a.sparse && a.file.as_ref().is_some_and(|f| f.exists()) {
            return Err(UsageError(
                "--sparse truncates the file before every repetition: it only works on a file iopath creates (--dir, or a --file that does not exist yet)".into(),
            ));
        }
        if a.drop_caches && a.cache != CacheState::Cold {
            return Err(UsageError(format!(
                "--drop-caches goes with --cache cold, not --cache {}",
                a.cache.name()
            )));
        }
        // The test file named by --file is read (or written) by the run: no
        // report may replace it.
        a.reports.check(a.json.as_deref(), a.file.as_deref())?;
        if a.ucache_size == Some(0) {
            return Err(UsageError(
                "--ucache-size 0 leaves the cache no page".into(),
            ));
        }
        if a.ucache_page == 0 || a.ucache_page % 512 != 0 || a.ucache_page > (1 << 30) {
            return Err(UsageError(format!(
                "--ucache-page {}: give a multiple of 512 bytes (the O_DIRECT alignment; 4k by default), at most 1 GiB",
                a.ucache_page
            )));
        }
        if a.allow_write && a.file.is_none() {
            return Err(UsageError(
                "--allow-write only applies to --file; iopath's own temporary file is always writable".into(),
            ));
        }
        let span = a
            .span
            .as_deref()
            .map(|s| parse_span("--span", s))
            .transpose()?;
        let mut cases = Vec::new();
        if let Some(p) = &preset {
            let pairs = p
                .cases
                .iter()
                .any(|c| c.placement.as_deref() == Some("numa-pairs"));
            if pairs && !placement.is_default() {
                return Err(UsageError(format!(
                    "--preset {} places every case itself (each CPU node x memory node pair): drop --cpus, --numa-node, --mem-node, --mem-policy and --sqpoll-cpu",
                    p.name
                )));
            }
            cases = preset_cases(p, a, topo, allowed, device_node)?;
            for c in cases.iter_mut().filter(|c| c.pair.is_none()) {
                c.placement = placement.clone();
            }
        } else {
            for &pattern in &patterns {
                // The copy pattern by default runs the methods that copy.
                let methods: Vec<Method> = if pattern == Pattern::Copy && a.methods.is_empty() {
                    Method::ALL
                        .into_iter()
                        .filter(|m| crate::runner::copy::copy_method(*m).is_some())
                        .collect()
                } else {
                    methods.clone()
                };
                for (i, &method) in methods.iter().enumerate() {
                    let bs = a.bs.unwrap_or_else(|| pattern.default_block_size());
                    let qd = a.qd.unwrap_or_else(|| pattern.default_queue_depth());
                    let arm = 1 + methods[..i].iter().filter(|&&m| m == method).count() as u32;
                    cases.push(Case {
                        arm,
                        sync: a.sync,
                        rwmix_read_pct: a.rwmix,
                        span,
                        placement: placement.clone(),
                        ..Case::new(method, pattern, bs, qd, a.threads)
                    });
                }
            }
        }
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
        if cases.iter().any(|c| c.pattern == Pattern::Copy)
            && a.file.as_ref().is_some_and(|f| f.exists())
        {
            return Err(UsageError(
                "the copy pattern writes a copy beside the file it copies: run it on iopath's own test file (--dir), not on an existing --file".into(),
            ));
        }
        if cases.iter().any(|c| c.sparse) && a.file.as_ref().is_some_and(|f| f.exists()) {
            return Err(UsageError(
                "this preset truncates the file before some repetitions (a sparse file): it only works on a file iopath creates (--dir, or a --file that does not exist yet)".into(),
            ));
        }
        if let Some(size) = a.size {
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
        // A preset whose cases say how much they touch takes `--touch` for
        // those cases only; the others keep their whole passes.
        let touch_cases = preset
            .as_ref()
            .is_some_and(crate::preset::Preset::has_touch_cases);
        let io_size = if touch_cases && a.given.iter().any(|g| g == "io_size") {
            None
        } else {
            a.io_size
        };
        Ok(Plan {
            preset: preset.map(|p| p.name),
            target,
            size: a.size,
            cases,
            time: a.time,
            io_size,
            whole_pass: a.whole_pass,
            repeat: a.repeat,
            ci_target: a.ci_target,
            max_time: a.max_time,
            warmup: a.warmup,
            schedule: a.schedule,
            order_seed: a.order_seed.unwrap_or_else(random_seed),
            interval: a.interval,
            seed: a.seed,
            cache: a.cache,
            drop_caches: a.drop_caches,
            data: a.data,
            sparse: a.sparse,
            json: a.json.clone(),
            reports: a.reports.clone(),
            cache_limit: a.cache_limit,
            ucache_size: a.ucache_size.or(a.cache_limit).unwrap_or(64 << 20),
            ucache_page: a.ucache_page,
            quiet: a.quiet,
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
}

/// Flags that say what the cases are: a preset fixes them.
const CASE_FLAGS: [&str; 8] = [
    "methods", "patterns", "bs", "qd", "threads", "sync", "rwmix", "span",
];

/// `a` with the preset's run settings wherever the command line gave none.
fn apply_preset_run(a: &RunArgs, p: &crate::preset::Preset) -> Result<RunArgs, UsageError> {
    let given = |id: &str| a.given.iter().any(|g| g == id);
    if let Some(flag) = CASE_FLAGS.iter().find(|f| given(f)) {
        return Err(UsageError(format!(
            "--preset {} fixes the cases, so --{} cannot change them; `iopath presets show {}` lists them (run settings such as --size, --dir, --repeat, --time apply)",
            p.name,
            flag.replace('_', "-"),
            p.name
        )));
    }
    let bad = |what: &str, v: &str, e: String| {
        UsageError(format!("preset {}: {what} '{v}': {e}", p.name))
    };
    let mut a = a.clone();
    let r = &p.run;
    // An existing --file has its own size.
    let existing = a.file.as_ref().is_some_and(|f| f.exists());
    if let (Some(v), false) = (&r.size, given("size") || existing) {
        a.size = Some(crate::units::parse_size(v).map_err(|e| bad("size", v, e))?);
    }
    // `--io-size` replaces a preset's time, unless the preset has cases
    // with their own touch size (then `--touch` is theirs).
    let touch_cases = p.has_touch_cases();
    if let (Some(v), false) = (&r.time, given("time") || (given("io_size") && !touch_cases)) {
        if v == "pass" {
            a.whole_pass = true;
        } else {
            a.time = Some(crate::units::parse_duration(v).map_err(|e| bad("time", v, e))?);
        }
    }
    if let (Some(v), false) = (&r.cache_limit, given("cache_limit")) {
        let limit = crate::units::parse_size(v).map_err(|e| bad("cache limit", v, e))?;
        // The cache keeps its ratio to the file (hmmap: 128 MiB for 4 GiB)
        // when --size changes it, never below 32 MiB (iopath's own memory
        // must fit under the cap).
        a.cache_limit = Some(match (&r.size, given("size").then_some(a.size).flatten()) {
            (Some(preset_size), Some(size)) => {
                let base = crate::units::parse_size(preset_size)
                    .map_err(|e| bad("size", preset_size, e))?;
                ((limit as u128 * size as u128 / base.max(1) as u128) as u64).max(32 << 20)
            }
            _ => limit,
        });
    }
    if let (Some(v), false) = (&r.io_size, given("io_size")) {
        a.io_size = Some(crate::units::parse_size(v).map_err(|e| bad("io size", v, e))?);
    }
    let adaptive = given("ci_target") || given("max_time");
    if let (Some(n), false) = (r.repeat, given("repeat") || adaptive) {
        a.repeat = Some(n);
    }
    if let (Some(n), false) = (r.warmup, given("warmup")) {
        a.warmup = n;
    }
    if let (Some(v), false) = (&r.max_time, given("max_time")) {
        a.max_time = crate::units::parse_duration(v).map_err(|e| bad("max time", v, e))?;
    }
    if let (Some(v), false) = (&r.cache, given("cache")) {
        a.cache = CacheState::from_name(v).ok_or_else(|| bad("cache", v, "unknown".into()))?;
    }
    if let (Some(v), false) = (&r.data, given("data")) {
        a.data = DataMode::parse(v).ok_or_else(|| bad("data", v, "unknown".into()))?;
    }
    Ok(a)
}

/// The preset's cases: for each entry, every pattern (outer) by every
/// method it names.
/// The NUMA node of the disk under the run's directory, if the kernel says.
fn device_node_under(a: &RunArgs) -> Option<u32> {
    let at = match (&a.file, &a.dir) {
        (Some(f), _) if f.exists() => f.clone(),
        (Some(f), _) => f
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), |p| p.to_path_buf()),
        (None, Some(d)) => d.clone(),
        (None, None) => PathBuf::from("."),
    };
    crate::sysinfo::device_of(&at)
        .and_then(|d| d.numa_node)
        .and_then(|n| u32::try_from(n).ok())
}

/// The (CPU node, memory node) pairs of the placement study, relative to
/// the device's node: local/local, local/remote, remote/local,
/// remote/remote, "remote" being the node farthest from local that has
/// CPUs (for workers) or memory (for buffers). One pair on one node.
pub fn numa_pairs(
    topo: &crate::topology::Topology,
    device_node: Option<u32>,
) -> Vec<(u32, u32, String)> {
    let with_cpus: Vec<u32> = topo
        .nodes
        .iter()
        .filter(|n| !n.cpus.is_empty())
        .map(|n| n.id)
        .collect();
    let with_mem: Vec<u32> = topo
        .nodes
        .iter()
        .filter(|n| n.memory_bytes != Some(0))
        .map(|n| n.id)
        .collect();
    let local = device_node
        .filter(|n| with_cpus.contains(n))
        .or_else(|| with_cpus.first().copied())
        .unwrap_or(0);
    let local_mem = if with_mem.contains(&local) {
        local
    } else {
        with_mem.first().copied().unwrap_or(local)
    };
    let distance = |a: u32, b: u32| topo.distance(a, b).unwrap_or(if a == b { 10 } else { 20 });
    let farthest = |from: u32, among: &[u32]| {
        among
            .iter()
            .copied()
            .filter(|&n| n != from)
            .max_by_key(|&n| (distance(from, n), std::cmp::Reverse(n)))
    };
    let remote_cpu = farthest(local, &with_cpus);
    let remote_mem = farthest(local_mem, &with_mem);
    let name = |c: u32, m: u32| {
        format!(
            "cpu n{c} {} / mem n{m} {}",
            if c == local { "local" } else { "remote" },
            if m == local_mem { "local" } else { "remote" }
        )
    };
    let mut pairs = vec![(local, local_mem)];
    if let Some(rm) = remote_mem {
        pairs.push((local, rm));
    }
    if let Some(rc) = remote_cpu {
        pairs.push((rc, local_mem));
        if let Some(rm) = remote_mem {
            pairs.push((rc, rm));
        }
    }
    pairs.into_iter().map(|(c, m)| (c, m, name(c, m))).collect()
}

fn preset_cases(
    p: &crate::preset::Preset,
    a: &RunArgs,
    topo: &crate::topology::Topology,
    allowed: &[u32],
    device_node: &dyn Fn() -> Option<u32>,
) -> Result<Vec<Case>, UsageError> {
    let bad = |what: &str, v: &str| UsageError(format!("preset {}: unknown {what} '{v}'", p.name));
    let mut cases = Vec::new();
    for pc in &p.cases {
        let methods = pc
            .method
            .items()
            .iter()
            .map(|m| Method::from_name(m).ok_or_else(|| bad("method", m)))
            .collect::<Result<Vec<_>, _>>()?;
        for pat in pc.pattern.items() {
            let pattern = Pattern::from_name(&pat).ok_or_else(|| bad("pattern", &pat))?;
            let bs = match &pc.bs {
                Some(v) => crate::units::parse_size(v)
                    .ok()
                    .filter(|b| (1..=1 << 30).contains(b))
                    .ok_or_else(|| bad("block size (1 byte to 1 GiB)", v))?,
                None => pattern.default_block_size(),
            };
            let thread_counts = pc.threads.as_ref().map_or(vec![1], |t| t.counts());
            // `--touch`/`--io-size` on the command line wins, as run settings do.
            let touch_given = a.given.iter().any(|g| g == "io_size");
            let touch = match pc.touch.as_ref().filter(|_| !touch_given) {
                None if touch_given && pc.touch.is_some() => a.io_size,
                Some(v) => Some(
                    crate::units::parse_size(v)
                        .ok()
                        .filter(|b| *b > 0)
                        .ok_or_else(|| bad("touch size", v))?,
                ),
                None => None,
            };
            if pc.qd.is_some_and(|q| !(1..=4096).contains(&q))
                || thread_counts.iter().any(|t| !(1..=1024).contains(t))
            {
                return Err(UsageError(format!(
                    "preset {}: qd must be 1 to 4096 and threads 1 to 1024",
                    p.name
                )));
            }
            let sync = match &pc.sync {
                Some(v) => SyncPolicy::from_name(v).ok_or_else(|| bad("sync policy", v))?,
                None => a.sync,
            };
            let cache = match &pc.cache {
                Some(v) => Some(CacheState::from_name(v).ok_or_else(|| bad("cache state", v))?),
                None => None,
            };
            let span = pc
                .span
                .as_deref()
                .map(|s| parse_span(&format!("preset {} span", p.name), s))
                .transpose()?;
            let pairs: Vec<(Option<String>, crate::placement::Placement)> =
                match pc.placement.as_deref() {
                    None => vec![(None, crate::placement::Placement::default())],
                    Some("numa-pairs") => numa_pairs(topo, device_node())
                        .into_iter()
                        .map(|(c, m, name)| {
                            let cpus = crate::placement::usable_cpus(
                                &topo.node(c).map(|n| n.cpus.clone()).unwrap_or_default(),
                                allowed,
                            );
                            // With one node holding memory, binding to it
                            // changes nothing and may be refused (seccomp):
                            // the buffers go where they would anyway.
                            let one_mem_node = topo
                                .nodes
                                .iter()
                                .filter(|n| n.memory_bytes != Some(0))
                                .count()
                                <= 1;
                            (
                                Some(name),
                                crate::placement::Placement {
                                    cpus: Some(cpus),
                                    round_robin: false,
                                    cpu_node: Some(c),
                                    mem: (!one_mem_node).then(|| iopath_io::numa::MemPolicy {
                                        mode: iopath_io::numa::MemPolicyMode::Bind,
                                        nodes: vec![m],
                                    }),
                                    sqpoll_cpu: None,
                                },
                            )
                        })
                        .collect(),
                    Some(other) => return Err(bad("placement", other)),
                };
            for &threads in &thread_counts {
                for (pair, placement) in &pairs {
                    for &method in &methods {
                        cases.push(Case {
                            sync,
                            rwmix_read_pct: a.rwmix,
                            span,
                            copy_to_user: pc.copy_to_user,
                            sparse: pc.sparse,
                            cache,
                            label: pc.label.clone(),
                            published: pc
                                .published
                                .clone()
                                .or_else(|| p.reference(method.name(), pattern.name(), threads)),
                            placement: placement.clone(),
                            pair: pair.clone(),
                            io_size: touch,
                            cache_limited: pc.cache_limited,
                            ..Case::new(
                                method,
                                pattern,
                                bs,
                                pc.qd.unwrap_or_else(|| pattern.default_queue_depth()),
                                threads,
                            )
                        });
                    }
                }
            }
        }
    }
    Ok(cases)
}

/// A span: a size (`2G`) or a share of the machine's memory (`10%ram`).
pub fn parse_span(what: &str, s: &str) -> Result<u64, UsageError> {
    let s = s.trim();
    if let Some(pct) = s.strip_suffix("%ram") {
        let pct: f64 = pct
            .trim()
            .parse()
            .ok()
            .filter(|p| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                UsageError(format!(
                    "{what} '{s}': a share of memory is 1%ram to 100%ram"
                ))
            })?;
        let total = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| crate::sysinfo::meminfo_kb(&m, "MemTotal"))
            .ok_or_else(|| {
                UsageError(format!(
                    "{what} '{s}': /proc/meminfo gives no MemTotal; give a size instead"
                ))
            })?;
        return Ok(((total * 1024) as f64 * pct / 100.0) as u64);
    }
    match crate::units::parse_size(s) {
        Ok(0) | Err(_) => Err(UsageError(format!(
            "{what} '{s}': give a size (512M, 2G) or a share of memory (10%ram)"
        ))),
        Ok(n) => Ok(n),
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
        let topo = crate::topology::Topology::read(&root);
        let args = match crate::cli::Cli::parse_from(["iopath", "run", "--preset", "numa"]).command
        {
            Some(crate::cli::Command::Run(a)) => *a,
            _ => unreachable!(),
        };
        let plan = Plan::from_args_on(&args, &topo, &topo.cpus_online, &|| device_node).unwrap();
        plan.cases
            .iter()
            .map(|c| {
                format!(
                    "{} {} {} | {} | cpus {} | mem {}",
                    c.label.as_deref().unwrap_or(""),
                    c.method.name(),
                    c.pattern.name(),
                    c.pair.as_deref().unwrap_or(""),
                    c.placement
                        .cpus
                        .as_deref()
                        .map_or("-".into(), crate::topology::format_cpulist),
                    c.placement
                        .mem
                        .as_ref()
                        .map_or("-".into(), crate::placement::policy_name),
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
        let dev =
            crate::topology::device_numa_node(&root, "nvme0n1").and_then(|n| u32::try_from(n).ok());
        assert_eq!(dev, Some(1));
        insta::assert_snapshot!("numa_4node_device_on_1", numa_cases("4node", dev));
    }

    #[test]
    fn numa_pairs_never_repeat_when_the_device_node_has_no_memory() {
        use crate::topology::{Node, Topology};
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
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn plan(args: &[&str]) -> Result<Plan, UsageError> {
        let mut v = vec!["iopath", "run"];
        v.extend_from_slice(args);
        let Some(Command::Run(r)) = Cli::try_parse_from(v).unwrap().command else {
            unreachable!()
        };
        Plan::from_args(&r)
    }

    #[test]
    fn default_plan_compares_all_real_methods_on_four_patterns() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.cases.len(), 4 * 8);
        assert!(p.cases.iter().all(|c| !c.method.is_null()));
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

//! From a job ([`JobSpec`], whatever spelled it) to a validated [`Plan`]: the
//! target, and the list of cases (method x pattern x block size x queue
//! depth x threads).
//!
//! Everything that can be decided without touching the file system is
//! checked here, and a mistake is a [`UsageError`] (exit code 2).

use std::path::PathBuf;
use std::time::Duration;

use iopath_io::data::DataMode;
use iopath_io::Method;

mod case;
mod check;
pub mod concurrency;
mod entry;
mod methods;
pub mod replay;

pub use crate::model::job::{CaseSpec, JobSpec, RunSpec};
use crate::model::words::RepTime;
pub use crate::model::{CacheState, Pattern, TargetSpec, UsageError};
pub use crate::system::placement::numa_pairs;
pub use case::Case;
pub use methods::default_methods_text;

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
/// The budget of an adaptive run that names no preset, `--max-time` or
/// `--budget`: the whole run, set-up included, within a minute (a round's
/// overshoot and the last write-back past it).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(52);
/// The share of a budget the floor of rounds may take when iopath chooses
/// the repetitions' length: the rest goes to the methods still close.
const FLOOR_SHARE: f64 = 0.6;
/// Set-up of one repetition (file open, cache state), beside its time.
const REP_SETUP: Duration = Duration::from_millis(15);
/// The shortest repetition iopath chooses to fit a budget.
pub const MIN_BUDGET_TIME: Duration = Duration::from_millis(20);
/// The fewest requests every slot (request in flight) of a repetition is
/// given when iopath chose its length (no `--time`): a repetition's edges
/// (its requests in flight when its time ends: at most one a slot) are then
/// at most 1/32 of it, the 3% margin of a verdict. The budget's length
/// alone gave a sequential 1 MiB read at 8 in flight 5 requests a thread.
pub const MIN_REQUESTS_PER_SLOT: u32 = 32;
/// The most times its chosen length such a repetition may run on for
/// them; within it, its job's budget decides after buying the rounds a
/// verdict needs (`run::estimate::stretch`).
pub const MAX_STRETCH: f64 = 8.0;
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(10);
pub const DEFAULT_SEED: u64 = 1;
pub const DEFAULT_RWMIX: u8 = 50;
pub const DEFAULT_UCACHE_PAGE: u64 = 4096;

pub use crate::model::schedule::{random_seed, Schedule};

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
    /// `--budget` (or the default one): the whole run's time, set-up
    /// included; `None` with `--repeat` or `--max-time`.
    pub budget: Option<Duration>,
    /// Whether `budget` is the user's (`--budget`, a job file's) rather
    /// than the default run's: only the user's cuts a replay.
    pub budget_given: bool,
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
    /// `--latency-split`: each request's time taken apart through block
    /// tracepoints (bpftrace, as root).
    pub latency_split: bool,
    /// `--noatime`: every engine opens the target with `O_NOATIME`.
    pub noatime: bool,
    /// `--replay`: the trace the cases replay ([`replay::apply`]).
    pub replay: Option<std::sync::Arc<replay::ReplaySource>>,
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
        check::check_run(r)?;
        let file_exists = r.file.as_ref().is_some_and(|f| f.exists());
        let target = target_of(r, origin);
        let switches = check::switches(r, origin, file_exists)?;
        let crossing = entry::Crossing {
            spec,
            origin,
            placement: &placement,
            topo,
            allowed,
            device_node,
        };
        let cases = crossing.cases()?;
        // A group's streams are each checked as a case of their own.
        let workloads: Vec<Case> = cases
            .iter()
            .flat_map(|c| c.workloads().iter().cloned())
            .collect();
        check::check_cases(&workloads, r.size.map(|b| b.0), file_exists)?;
        if switches.verify && cases.iter().any(|c| !c.streams.is_empty()) {
            return Err(UsageError(
                "--verify checks one workload's blocks; streams run at the same time (fio jobs without stonewall) may write the blocks another reads: leave out --verify (fio's verify=) or run the jobs one after the other (stonewall)".into(),
            ));
        }
        if switches.verify {
            check::check_verify(&cases)?;
        }
        Ok(Plan::assemble(spec, origin, target, cases, switches))
    }

    /// The plan of checked settings and crossed cases: the job's settings,
    /// each default applied where it says nothing.
    fn assemble(
        spec: &JobSpec,
        origin: &Origin,
        target: TargetSpec,
        cases: Vec<Case>,
        switches: check::Switches,
    ) -> Plan {
        let r = &spec.run;
        let (time, whole_pass) = match r.time {
            Some(RepTime::Pass) => (None, true),
            Some(RepTime::Limit(d)) => (Some(d), false),
            None => (None, false),
        };
        let cache_limit = r.cache_limit.map(|b| b.0);
        Plan {
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
            budget_given: r.budget.is_some(),
            budget: r.budget.map(|d| d.0).or_else(|| {
                (r.max_time.is_none() && origin.preset.is_none()).then_some(DEFAULT_BUDGET)
            }),
            case_timeout: r.case_timeout.map(|d| d.0).filter(|d| !d.is_zero()),
            warmup: r.warmup.unwrap_or(0),
            schedule: r.schedule.unwrap_or(Schedule::Interleaved),
            order_seed: r.order_seed.unwrap_or_else(random_seed),
            interval: r.interval.map_or(DEFAULT_INTERVAL, |d| d.0),
            seed: r.seed.unwrap_or(DEFAULT_SEED),
            cache: switches.cache,
            drop_caches: switches.drop_caches,
            data: r.data.unwrap_or(DataMode::Random),
            sparse: switches.sparse,
            verify: switches.verify,
            cache_limit,
            ucache_size: r
                .ucache_size
                .map(|b| b.0)
                .or(cache_limit)
                .unwrap_or(64 << 20),
            ucache_page: r.ucache_page.map_or(DEFAULT_UCACHE_PAGE, |b| b.0),
            pool_threads: r.pool_threads,
            neighbour: r.neighbour.unwrap_or(false),
            latency_split: r.latency_split.unwrap_or(false),
            noatime: r.noatime.unwrap_or(false),
            replay: None,
        }
    }

    /// The methods the plan uses, in order.
    pub fn methods(&self) -> Vec<Method> {
        entry::dedup(&self.cases.iter().map(|c| c.method).collect::<Vec<_>>())
    }

    /// True when some case writes.
    pub fn writes(&self) -> bool {
        self.cases.iter().any(Case::writes)
    }

    /// True when some case touches a file (not only `null`).
    pub fn needs_file(&self) -> bool {
        // A replay makes files of its own (`run::replay`).
        self.replay.is_none() && self.cases.iter().any(|c| !c.method.is_null())
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
            (None, None) => Some(self.budget_time(None).unwrap_or(DEFAULT_TIME)),
        }
    }

    /// Under a budget, with no `--time`: the repetitions' length that lets
    /// the floor of rounds ([`crate::stats::verdict_rounds`]) of every case
    /// take [`FLOOR_SHARE`] of it, at most [`DEFAULT_TIME`] and at least
    /// [`MIN_BUDGET_TIME`]; writes count twice (their fsync). `job`: the
    /// cases of one job with its own budget (a fio job's `runtime`), else
    /// the run's budget over the cases without one.
    pub fn budget_time(&self, job: Option<(Duration, usize)>) -> Option<Duration> {
        if let Some(n) = self.repeat {
            // A fixed count of rounds: a job's own budget (a fio job's
            // `runtime`) is shared by them, whole (a time-based job must
            // not run without a limit). The run's budget and `--repeat`
            // exclude each other.
            let (b, arms) = job?;
            let reps = (arms.max(1) as u32).saturating_mul(n.max(1) + self.warmup);
            return Some((b / reps.max(1)).max(MIN_BUDGET_TIME));
        }
        let weight = |c: &Case| if c.pattern.writes() { 2.0 } else { 1.0 };
        let (budget, weights) = match job {
            Some((b, arms)) => (b, arms as f64),
            None => (
                self.budget?,
                self.cases
                    .iter()
                    .filter(|c| c.budget.is_none())
                    .map(weight)
                    .sum(),
            ),
        };
        let reps =
            weights.max(1.0) * (crate::stats::verdict_rounds() as f64 + f64::from(self.warmup));
        let t = budget.as_secs_f64() * FLOOR_SHARE / reps - REP_SETUP.as_secs_f64();
        Some(Duration::from_secs_f64(t.clamp(
            MIN_BUDGET_TIME.as_secs_f64(),
            DEFAULT_TIME.as_secs_f64(),
        )))
    }

    /// When iopath chose the length of `case`'s repetitions (no `--time`,
    /// no byte count, no whole pass): that length, which a repetition may
    /// run on past until every slot had [`MIN_REQUESTS_PER_SLOT`] requests
    /// (as far as its job's stretch allows). A user's time is kept as given.
    pub fn chosen_length(&self, case: &Case) -> Option<Duration> {
        let given = self.time.is_some() || self.whole_pass || self.replay.is_some();
        // Streams run for the group's one time limit, together: none runs
        // on alone for its requests.
        if given || case.io_size.or(self.io_size).is_some() || !case.streams.is_empty() {
            return None;
        }
        self.case_time_limit(case)
    }

    /// The time limit of one repetition of `case`: the run's, unless the
    /// case's own byte count (a preset's `touch`) bounds it alone.
    pub fn case_time_limit(&self, case: &Case) -> Option<Duration> {
        if case.io_size.is_some() && self.time.is_none() {
            None
        } else if let Some(b) = case
            .budget
            .filter(|_| self.time.is_none() && !self.whole_pass)
        {
            let arms = self
                .cases
                .iter()
                .filter(|c| c.budget.is_some() && same_job(c, case))
                .count();
            self.budget_time(Some((b, arms)))
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

/// What the run measures: the file it names, or a temporary file in its
/// directory (the current one by default).
fn target_of(r: &RunSpec, origin: &Origin) -> TargetSpec {
    match &r.file {
        Some(p) => TargetSpec::File {
            path: p.clone(),
            allow_write: origin.allow_write,
            force_signature: origin.force_signature,
            prefill: origin.prefill,
        },
        None => TargetSpec::TempIn(r.dir.clone().unwrap_or_else(|| PathBuf::from("."))),
    }
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

/// True when `a` and `b` are cases of one job with its own budget: a fio
/// job's cases share its name and its `runtime`.
fn same_job(a: &Case, b: &Case) -> bool {
    a.label == b.label && a.budget == b.budget && a.pattern == b.pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numa preset's plan on a fixture topology.
    fn numa_plan(fixture: &str, device_node: Option<u32>) -> Vec<Case> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/topology")
            .join(fixture);
        let topo = crate::system::topology::Topology::read(&root);
        let numa = crate::import::preset::find("numa").unwrap();
        let origin = Origin {
            preset: Some("numa".into()),
            ..Origin::default()
        };
        Plan::from_spec_on(&numa.job, &origin, &topo, &topo.cpus_online, &|| {
            device_node
        })
        .unwrap()
        .cases
    }

    /// The numa preset's cases on a fixture topology, one line each.
    fn numa_cases(fixture: &str, device_node: Option<u32>) -> String {
        numa_plan(fixture, device_node)
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

    /// The pair of CPUs and memory both on node 0.
    const LOCAL_PAIR: &str = "cpu n0 local / mem n0 local";

    #[test]
    fn numa_preset_pairs_on_two_nodes_relative_to_the_device() {
        // The NVMe disk of the 2-node fixture hangs off node 1.
        insta::assert_snapshot!("numa_2node_device_on_1", numa_cases("2node", Some(1)));
        let unknown = numa_plan("2node", None);
        assert!(
            unknown
                .iter()
                .any(|c| c.pair.as_deref() == Some(LOCAL_PAIR)),
            "{unknown:?}"
        );
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
        let cases = numa_plan("1node", Some(0));
        assert_eq!(cases.len(), 3, "{cases:?}");
        assert!(
            cases.iter().all(|c| c.pair.as_deref() == Some(LOCAL_PAIR)),
            "{cases:?}"
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
        let p = plan(&[]);
        let p = p.unwrap();
        // Ten methods on four patterns, random ones at two concurrencies,
        // and mmap+random beside mmap on the random ones.
        assert_eq!(p.cases.len(), 2 * 10 + 2 * 2 * 11);
        assert!(p.cases.iter().all(|c| !c.method.is_null()));
        assert!(p.cases.iter().any(|c| c.method == Method::Threadpool));
        let hinted: Vec<(Pattern, Option<u32>)> = p
            .cases
            .iter()
            .filter(|c| c.hint.is_some())
            .map(|c| (c.pattern, c.concurrency))
            .collect();
        assert_eq!(
            hinted,
            [
                (Pattern::RandRead, Some(1)),
                (Pattern::RandRead, Some(32)),
                (Pattern::RandWrite, Some(1)),
                (Pattern::RandWrite, Some(32))
            ]
        );
        let uring = |pattern, n| {
            let c = p
                .cases
                .iter()
                .find(|c| c.pattern == pattern && c.method == Method::Uring && c.concurrency == n)
                .unwrap();
            (c.block_size, c.threads, c.queue_depth_requested)
        };
        assert_eq!(uring(Pattern::RandRead, Some(32)), (4096, 1, 32));
        assert_eq!(uring(Pattern::RandRead, Some(1)), (4096, 1, 1));
        // Sequential: 8 MiB in flight, 8 blocks of 1 MiB.
        assert_eq!(uring(Pattern::Read, Some(8)), (1 << 20, 1, 8));
        assert_eq!(p.target, TargetSpec::TempIn(PathBuf::from(".")));
    }

    /// (threads, depth, pool) of `method`'s case at concurrency `n`.
    fn way_of(p: &Plan, method: Method, n: u32) -> (u32, u32, Option<u32>) {
        let c = p
            .cases
            .iter()
            .find(|c| c.method == method && c.concurrency == Some(n))
            .unwrap();
        (c.threads, c.queue_depth_requested, c.pool_threads)
    }

    #[test]
    fn each_method_keeps_the_concurrency_in_flight_its_own_way() {
        let methods = "uring,aio,direct,buffered,mmap,threadpool";
        let p = plan(&[
            "--methods",
            methods,
            "--patterns",
            "randread",
            "--concurrency",
            "1,4",
        ])
        .unwrap();
        for n in [1, 4] {
            assert_eq!(way_of(&p, Method::Uring, n), (1, n, None));
            assert_eq!(way_of(&p, Method::Aio, n), (1, n, None));
            assert_eq!(way_of(&p, Method::Direct, n), (n, 1, None));
            assert_eq!(way_of(&p, Method::Buffered, n), (n, 1, None));
            assert_eq!(way_of(&p, Method::Mmap, n), (n, 1, None));
            assert_eq!(way_of(&p, Method::Threadpool, n), (1, n, Some(n)));
        }
        // With --threads T, the methods that queue spread N over T.
        let p = plan(&[
            "--methods",
            "uring,direct",
            "--patterns",
            "randread",
            "--concurrency",
            "8",
            "--threads",
            "2",
        ])
        .unwrap();
        assert_eq!(way_of(&p, Method::Uring, 8), (2, 4, None));
        assert_eq!(way_of(&p, Method::Direct, 8), (8, 1, None));
    }

    #[test]
    fn cases_of_one_concurrency_are_one_job_whatever_their_threads() {
        let p = plan(&[
            "--methods",
            "uring,direct,threadpool",
            "--patterns",
            "randread,read",
            "--concurrency",
            "1,32",
        ])
        .unwrap();
        let jobs = crate::run::job::jobs(&p.cases, p.schedule);
        assert_eq!(jobs.len(), 4, "{jobs:?}");
        for j in &jobs {
            let n: Vec<(Pattern, Option<u32>)> = j
                .iter()
                .map(|&i| (p.cases[i].pattern, p.cases[i].concurrency))
                .collect();
            assert_eq!(j.len(), 3);
            assert!(n.iter().all(|x| *x == n[0]), "{n:?}");
        }
        // Arms are numbered within a job: none is a second arm.
        assert!(p.cases.iter().all(|c| c.arm == 1));
    }

    #[test]
    fn qd_or_threads_alone_keep_every_method_at_the_depth_asked() {
        for args in [&["--qd", "32"][..], &["--threads", "1"]] {
            let mut v = vec!["--methods", "uring,direct", "--patterns", "randread"];
            v.extend_from_slice(args);
            let p = plan(&v).unwrap();
            assert_eq!(p.cases.len(), 2, "{args:?}");
            assert!(p.cases.iter().all(|c| c.concurrency.is_none()), "{args:?}");
            assert!(p.cases.iter().all(|c| c.threads == 1), "{args:?}");
        }
    }

    #[test]
    fn concurrency_usage_errors_say_what_to_give() {
        let e = plan(&["--concurrency", "8", "--qd", "4"]).unwrap_err();
        assert!(e.0.contains("--qd and --concurrency"), "{e}");
        let e = plan(&[
            "--concurrency",
            "6",
            "--threads",
            "4",
            "--patterns",
            "randread",
        ])
        .unwrap_err();
        assert!(e.0.contains("--concurrency 6 over --threads 4"), "{e}");
        let e = plan(&["--concurrency", "8", "--patterns", "copy"]).unwrap_err();
        assert!(e.0.contains("copy pattern"), "{e}");
        // Synchronous methods alone take any split.
        assert!(plan(&[
            "--concurrency",
            "6",
            "--threads",
            "4",
            "--methods",
            "direct",
            "--patterns",
            "randread"
        ])
        .is_ok());
        let job: crate::model::job::JobSpec =
            toml::from_str("[[case]]\nconcurrency = [0]\n").unwrap();
        let e = Plan::from_spec(&job, &Origin::default()).unwrap_err();
        assert!(e.0.contains("1 to 1024"), "{e}");
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

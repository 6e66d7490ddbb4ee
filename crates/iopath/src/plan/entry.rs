//! Crossing a job's case entries into cases: each entry's axes checked,
//! then every pattern (outer), thread count, NUMA pair and method (inner)
//! it names, within the bound on the cases of one run.

use iopath_io::{Method, SyncPolicy};

use super::case::number_arms;
use super::concurrency;
use super::methods::default_methods;
use super::{Case, CaseSpec, JobSpec, Origin, Pattern, UsageError, DEFAULT_RWMIX};
use crate::model::choice::MethodChoice;
use crate::model::words::{Bytes, Span};
use crate::system::placement::Placement;
use crate::system::topology::Topology;

/// What every entry of a job is crossed with: the job, where it came
/// from, and where its cases may run.
pub(super) struct Crossing<'a> {
    pub spec: &'a JobSpec,
    pub origin: &'a Origin,
    /// The run's placement (flags), for entries that do not place
    /// themselves.
    pub placement: &'a Placement,
    pub topo: &'a Topology,
    pub allowed: &'a [u32],
    pub device_node: &'a dyn Fn() -> Option<u32>,
}

/// Where the cases of one NUMA pair run: the pair's name (`None` for the
/// run's own placement) and its placement.
struct Pair {
    name: Option<String>,
    placement: Placement,
}

impl Crossing<'_> {
    /// Every case of the job, its arms numbered; the bound on the cases of
    /// one run checked as they grow, so that no entry crosses into more
    /// than it before it is refused.
    pub(super) fn cases(&self) -> Result<Vec<Case>, UsageError> {
        let default_case = [CaseSpec::default()];
        let entries: &[CaseSpec] = if self.spec.cases.is_empty() {
            &default_case
        } else {
            &self.spec.cases
        };
        if entries
            .iter()
            .any(|c| c.placement.as_deref() == Some("numa-pairs"))
            && !self.placement.is_default()
        {
            return Err(UsageError(format!(
                "{} places every case itself (each CPU node x memory node pair): drop --cpus, --numa-node, --mem-node, --mem-policy and --sqpoll-cpu",
                self.origin.what()
            )));
        }
        let mut cases = Vec::new();
        for pc in entries {
            cases.extend(self.entry_cases(pc)?);
            let most = crate::model::limits::CASES.value()?;
            if cases.len() as u64 > most {
                return Err(UsageError(format!(
                    "{} makes more than {most} cases, the most one run takes ({}): run fewer at a time (split the job), or set {} to a larger number",
                    self.origin.what(),
                    crate::model::limits::CASES.env,
                    crate::model::limits::CASES.env,
                )));
            }
        }
        number_arms(&mut cases);
        Ok(cases)
    }

    /// The cases of one entry: every pattern (outer), thread count or
    /// concurrency, NUMA pair and method (inner) it names.
    fn entry_cases(&self, pc: &CaseSpec) -> Result<Vec<Case>, UsageError> {
        let what = self.origin.what();
        if !pc.streams.is_empty() {
            return self.group_cases(pc, &what);
        }
        let thread_counts = check_entry(pc, &what)?;
        let span = pc.span.map(resolve_span).transpose()?;
        let pairs = self.pairs(pc, &what)?;
        let patterns = pc
            .pattern
            .as_ref()
            .map_or_else(|| Pattern::DEFAULT.to_vec(), |l| dedup(&l.0));
        let methods_most = pc.method.as_ref().map_or(Method::ALL.len(), |l| l.0.len());
        let matching = self.matching(pc, &what, &patterns)?;
        let axis_most = match &matching {
            Matching::Asked => thread_counts.len(),
            Matching::Given { ns, .. } => ns.len(),
            Matching::Default => concurrency::DEFAULT_RANDOM.len(),
        };
        check_cross(
            &what,
            &[
                patterns.len(),
                axis_most,
                pairs.len(),
                methods_most,
                pc.buffers.as_ref().map_or(1, |l| l.0.len()),
            ],
        )?;
        let mut cases = Vec::new();
        for pattern in patterns {
            // No methods named: the default ones, and for the copy pattern
            // the methods that copy. A method named again is another arm
            // of the same method (an A/A check), not a duplicate to drop.
            let methods: Vec<MethodChoice> = match &pc.method {
                Some(l) => l.0.clone(),
                None => default_methods(pattern),
            };
            let methods = with_buffers(methods, pc.buffers.as_ref().map(|l| l.0.as_slice()));
            let bs = pc.bs.map_or_else(|| pattern.default_block_size(), |b| b.0);
            let qd = pc.qd.unwrap_or_else(|| pattern.default_queue_depth());
            // The file's size: asked, else an existing file's (a regular
            // file; a device's length is not its metadata's).
            let size = self.spec.run.size.map(|b| b.0).or_else(|| {
                let f = self.spec.run.file.as_ref()?;
                std::fs::metadata(f)
                    .ok()
                    .map(|m| m.len())
                    .filter(|&l| l > 0)
            });
            for axis in matching.axes(pattern, bs, size, &thread_counts) {
                for pair in &pairs {
                    for &choice in &methods {
                        let base = axis.case(choice.method, pattern, bs, qd);
                        cases.push(self.case(pc, base, choice, pair, span));
                    }
                }
            }
        }
        Ok(cases)
    }

    /// The cases of an entry of streams run at the same time: each stream
    /// crossed alone with the entry's methods and placements, then one
    /// case per method (and pair) holding every stream's case of it.
    fn group_cases(&self, pc: &CaseSpec, what: &str) -> Result<Vec<Case>, UsageError> {
        if pc.concurrency.is_some() {
            return Err(UsageError(format!(
                "{what}: its streams run at the same time, each at its own depth and threads: leave out --concurrency (or the entry's `concurrency`), or give each stream its own `qd`/`threads` (fio: iodepth, numjobs)"
            )));
        }
        let mut per_stream: Vec<Vec<Case>> = Vec::with_capacity(pc.streams.len());
        for s in &pc.streams {
            let name = s.label.as_deref().unwrap_or("a stream");
            let several = |l: Option<usize>| l.is_some_and(|n| n != 1);
            if s.method.is_some()
                || !s.streams.is_empty()
                || s.concurrency.is_some()
                || s.placement.is_some()
                || s.pattern.as_ref().is_none_or(|l| l.0.len() != 1)
                || several(s.threads.as_ref().map(|l| l.0.len()))
            {
                return Err(UsageError(format!(
                    "{what}: stream {name} must name one pattern and at most one thread count, and no method, concurrency, placement or streams of its own (the group's entry names the methods)"
                )));
            }
            let entry = CaseSpec {
                method: pc.method.clone(),
                buffers: pc.buffers.clone(),
                placement: pc.placement.clone(),
                budget: pc.budget,
                cache_limited: pc.cache_limited,
                group: pc.group.clone(),
                ..s.clone()
            };
            per_stream.push(self.entry_cases(&entry)?);
        }
        let n = per_stream.first().map_or(0, Vec::len);
        if per_stream.iter().any(|v| v.len() != n) {
            return Err(UsageError(format!(
                "{what}: its streams cross into different numbers of cases; give each one pattern and one thread count"
            )));
        }
        Ok((0..n)
            .map(|i| {
                let streams: Vec<Case> = per_stream.iter().map(|v| v[i].clone()).collect();
                Case {
                    label: pc.label.clone(),
                    streams: streams.clone(),
                    ..streams[0].clone()
                }
            })
            .collect())
    }

    /// How the entry's cases get their threads and depths: as asked
    /// (`qd`, `threads`), matched at the concurrency it gives, or (a run
    /// of flags that sets none of the three) matched at the default run's.
    fn matching(
        &self,
        pc: &CaseSpec,
        what: &str,
        patterns: &[Pattern],
    ) -> Result<Matching, UsageError> {
        if let Some(l) = &pc.concurrency {
            if patterns.contains(&Pattern::Copy) {
                return Err(UsageError(format!(
                    "{what}: the copy pattern keeps no requests in flight to match: leave out --concurrency (or run copy apart)"
                )));
            }
            let methods: Vec<Method> = pc.method.as_ref().map_or_else(
                || Method::ALL.to_vec(),
                |l| l.0.iter().map(|c| c.method).collect(),
            );
            let threads = pc.threads.as_ref().map(|t| t.0.as_slice());
            let split = concurrency::check(what, &l.0, pc.qd, threads, &methods)?;
            return Ok(Matching::Given {
                ns: dedup(&l.0),
                split,
            });
        }
        let flags_only = self.origin.preset.is_none() && self.origin.file.is_none();
        if flags_only && pc.qd.is_none() && pc.threads.is_none() {
            Ok(Matching::Default)
        } else {
            Ok(Matching::Asked)
        }
    }
    /// One case of entry `pc`: `base` (its method and axes) with the
    /// entry's settings. Arms are numbered over the whole plan
    /// ([`number_arms`]).
    fn case(
        &self,
        pc: &CaseSpec,
        base: Case,
        choice: MethodChoice,
        pair: &Pair,
        span: Option<u64>,
    ) -> Case {
        let spec = self.spec;
        Case {
            sync: pc.sync.unwrap_or(SyncPolicy::End),
            // Only writes are synced: a read pattern ignores it.
            sync_every: pc.sync_every.filter(|_| base.pattern.writes()),
            rwmix_read_pct: pc.rwmix.unwrap_or(DEFAULT_RWMIX),
            span,
            offset: pc.offset.map_or(0, |b| b.0),
            copy_to_user: pc.copy_to_user,
            sparse: pc.sparse,
            cache: pc.cache,
            label: pc.label.clone(),
            published: pc
                .published
                .clone()
                .or_else(|| spec.reference(base.method.name(), base.pattern.name(), base.threads)),
            placement: pair.placement.clone(),
            pair: pair.name.clone(),
            io_size: pc.touch.map(|b| b.0),
            until: pc.until,
            budget: pc.budget.map(|d| d.0),
            // Only the cases a job marks run under its cache limit; with no
            // case marked (flags), every case.
            cache_limited: pc.cache_limited || !spec.cases.iter().any(|c| c.cache_limited),
            hint: choice.hint,
            buffers: choice.buffers,
            group: pc.group.clone(),
            ..base
        }
    }

    /// The NUMA pairs the entry's cases run on: the run's placement, or
    /// every pair of the placement study.
    fn pairs(&self, pc: &CaseSpec, what: &str) -> Result<Vec<Pair>, UsageError> {
        match pc.placement.as_deref() {
            None => Ok(vec![Pair {
                name: None,
                placement: self.placement.clone(),
            }]),
            Some("numa-pairs") => Ok(crate::system::placement::numa_placements(
                self.topo,
                self.allowed,
                (self.device_node)(),
            )
            .into_iter()
            .map(|(name, placement)| Pair { name, placement })
            .collect()),
            Some(other) => Err(UsageError(format!(
                "{what}: unknown placement '{other}'; valid: numa-pairs"
            ))),
        }
    }
}

/// Each method once per buffer backing of `buffers` (`--buffers
/// pages,huge`: `direct` and `direct+hugebuf` side by side, one job); with
/// none given, each as it is named (base pages unless `+hugebuf`).
fn with_buffers(
    methods: Vec<MethodChoice>,
    buffers: Option<&[iopath_io::BufferBacking]>,
) -> Vec<MethodChoice> {
    let Some(buffers) = buffers else {
        return methods;
    };
    let mut buffers = buffers.to_vec();
    buffers.sort();
    buffers.dedup();
    methods
        .into_iter()
        .flat_map(|m| buffers.iter().map(move |&b| m.with_buffers(b)))
        .collect()
}

/// The entry's own limits (what clap checks for flags, checked again for
/// job files); its thread counts.
fn check_entry(pc: &CaseSpec, what: &str) -> Result<Vec<u32>, UsageError> {
    if let Some(Bytes(bs)) = pc.bs {
        if bs == 0 || bs > (1 << 30) {
            return Err(UsageError(format!(
                "--bs {bs} is out of range: use 1 byte to 1 GiB (e.g. 4k, 1M)"
            )));
        }
    }
    if let (Some(SyncPolicy::Each), Some(e)) = (pc.sync, pc.sync_every) {
        return Err(UsageError(format!(
            "{what}: --sync each already syncs after every write; --sync-every {} would sync again: give one of them",
            crate::model::words::Word::word(&e)
        )));
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
    Ok(thread_counts)
}

/// The entry's cross (patterns x thread counts x placements x methods),
/// counted before it is made: lists of thousands of methods and thread
/// counts would otherwise build billions of cases before the bound is
/// checked.
fn check_cross(what: &str, axes: &[usize]) -> Result<(), UsageError> {
    let most = crate::model::limits::CASES.value()?;
    let crossed = axes.iter().fold(1u64, |n, &k| n.saturating_mul(k as u64));
    if crossed > most {
        return Err(UsageError(format!(
            "{what} crosses one entry into {crossed} cases (patterns x thread counts x placements x methods), more than {most}, the most one run takes ({}): run fewer at a time (split the job), or set {} to a larger number",
            crate::model::limits::CASES.env,
            crate::model::limits::CASES.env,
        )));
    }
    Ok(())
}

/// A span in bytes: a size, or a share of this machine's memory.
fn resolve_span(span: Span) -> Result<u64, UsageError> {
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

/// How an entry's cases get their threads and depths ([`Crossing::matching`]).
enum Matching {
    /// Every method at the depth and thread counts asked (synchronous
    /// ones at depth 1).
    Asked,
    /// Matched at each of `ns` requests in flight, queueing methods over
    /// `split` threads.
    Given { ns: Vec<u32>, split: Option<u32> },
    /// Matched at the default run's concurrency for each pattern
    /// ([`concurrency::default_for`]); the copy pattern as asked.
    Default,
}

/// One value of the axis crossed between patterns and placements: a thread
/// count, or a concurrency.
#[derive(Clone, Copy)]
enum Axis {
    Threads(u32),
    InFlight { n: u32, split: Option<u32> },
}

impl Matching {
    fn axes(&self, pattern: Pattern, bs: u64, size: Option<u64>, threads: &[u32]) -> Vec<Axis> {
        let asked = || threads.iter().map(|&t| Axis::Threads(t)).collect();
        let matched = |ns: &[u32], split| {
            ns.iter()
                .map(|&n| Axis::InFlight { n, split })
                .collect::<Vec<_>>()
        };
        match self {
            Matching::Asked => asked(),
            Matching::Default if pattern == Pattern::Copy => asked(),
            Matching::Default => matched(&concurrency::default_for(pattern, bs, size), None),
            Matching::Given { ns, split } => matched(ns, *split),
        }
    }
}

impl Axis {
    /// The case of `method` on this axis value.
    fn case(self, method: Method, pattern: Pattern, bs: u64, qd: u32) -> Case {
        match self {
            Axis::Threads(t) => Case::new(method, pattern, bs, qd, t),
            Axis::InFlight { n, split } => {
                // A split that does not divide n was refused for the
                // methods that queue ([`concurrency::check`]).
                let w = concurrency::way(method, n, split).unwrap_or(concurrency::Way {
                    threads: n,
                    depth: 1,
                    pool: None,
                });
                Case {
                    concurrency: Some(n),
                    pool_threads: w.pool,
                    ..Case::new(method, pattern, bs, w.depth, w.threads)
                }
            }
        }
    }
}

pub(super) fn dedup<T: PartialEq + Copy>(v: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(v.len());
    for &x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

//! One measured configuration ([`Case`]), and how cases of one job that
//! name a method again become its arms.

use iopath_io::{Method, SyncPolicy};

use super::{CacheState, Pattern, DEFAULT_RWMIX};
use crate::model::choice::MethodChoice;

/// One measured configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub method: Method,
    /// 1, or 2, 3, .. for a method named again in `--methods` (an A/A
    /// check: the same method as another arm of the same job).
    pub arm: u32,
    pub pattern: Pattern,
    pub block_size: u64,
    /// Per thread; for a matched case, the depth its method reaches the
    /// concurrency with.
    pub queue_depth_requested: u32,
    pub threads: u32,
    /// The requests in flight the job compares its methods at (`None`: an
    /// unmatched case, every method at the depth and threads asked); its
    /// method reaches it with `threads` x `queue_depth_requested`.
    pub concurrency: Option<u32>,
    /// `threadpool`, `tokio`: the pool the case runs with (a matched
    /// case's concurrency), unless `--pool-threads` says.
    pub pool_threads: Option<u32>,
    pub sync: SyncPolicy,
    /// A sync every N writes of each worker (`--sync-every`).
    pub sync_every: Option<iopath_io::SyncEvery>,
    pub rwmix_read_pct: u8,
    /// Random offsets within the first this many bytes of the file (capped
    /// at its size); `None`: the whole file.
    pub span: Option<u64>,
    /// Where in the file its range starts (a stream's own part of it).
    pub offset: u64,
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
    /// Its job's own budget (a fio job's `runtime`).
    pub budget: Option<std::time::Duration>,
    /// Runs inside the `--cache-limit` cgroup.
    pub cache_limited: bool,
    /// The access hint applied after the engine opens (`mmap+random`).
    pub hint: Option<iopath_io::Hint>,
    /// What its I/O buffers are made of (`--buffers`; `direct+hugebuf`).
    pub buffers: iopath_io::BufferBacking,
    /// The job's group: cases of one pattern with the same group are one
    /// job and one verdict over their variants (`CaseSpec::group`).
    pub group: Option<String>,
    /// Workloads run at the same time through this case's method (fio jobs
    /// with no `stonewall` between them), each a case of its own settings
    /// (`label` its name); the case's own workload fields are the first
    /// stream's. Empty: the case is one workload.
    pub streams: Vec<Case>,
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
            concurrency: None,
            pool_threads: None,
            sync: SyncPolicy::End,
            sync_every: None,
            rwmix_read_pct: DEFAULT_RWMIX,
            span: None,
            offset: 0,
            copy_to_user: false,
            sparse: false,
            cache: None,
            label: None,
            published: None,
            placement: crate::system::placement::Placement::default(),
            pair: None,
            io_size: None,
            until: None,
            budget: None,
            cache_limited: true,
            hint: None,
            buffers: iopath_io::BufferBacking::Pages,
            group: None,
            streams: Vec::new(),
        }
    }

    /// The workloads a repetition runs at the same time: its streams, or
    /// the case itself.
    pub fn workloads(&self) -> &[Case] {
        if self.streams.is_empty() {
            std::slice::from_ref(self)
        } else {
            &self.streams
        }
    }

    /// True when some workload of the case writes.
    pub fn writes(&self) -> bool {
        self.workloads().iter().any(|c| c.pattern.writes())
    }

    /// The method as results name it: `mmap`, or `mmap+random` with a
    /// hint, `direct+hugebuf` with huge-page buffers.
    pub fn method_name(&self) -> String {
        MethodChoice {
            method: self.method,
            hint: self.hint,
            buffers: self.buffers,
        }
        .name()
    }
}

/// A method that comes again in the same job (two entries of a job file
/// naming it for the same pattern, block size, ...) is another arm of it,
/// numbered across the whole plan, as within one entry.
pub(super) fn number_arms(cases: &mut [Case]) {
    // One count per method, hint, buffers and job: linear in the cases.
    let arms: Vec<u32> = {
        let mut seen = std::collections::HashMap::new();
        cases
            .iter()
            .map(|c| {
                let n = seen
                    .entry((c.method, c.hint, c.buffers, c.job_key()))
                    .or_insert(0u32);
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
    fn job_key(&self) -> JobKey<'_> {
        // Matched cases group by their concurrency, whatever threads and
        // depth each method reaches it with.
        let (queue_depth, threads) = match self.concurrency {
            Some(_) => (0, 0),
            None => (self.queue_depth_requested, self.threads),
        };
        JobKey {
            pattern: self.pattern,
            block_size: self.block_size,
            queue_depth,
            threads,
            concurrency: self.concurrency,
            sync: self.sync,
            sync_every: self.sync_every,
            rwmix_read_pct: (self.pattern == Pattern::RandRw).then_some(self.rwmix_read_pct),
            label: &self.label,
            span: self.span,
            copy_to_user: self.copy_to_user,
            sparse: self.sparse,
            pair: &self.pair,
        }
    }
}

/// A case's job: what it runs apart from its method ([`Case::job_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct JobKey<'a> {
    pattern: Pattern,
    block_size: u64,
    queue_depth: u32,
    threads: u32,
    concurrency: Option<u32>,
    sync: SyncPolicy,
    sync_every: Option<iopath_io::SyncEvery>,
    /// The read share, where the pattern mixes reads and writes.
    rwmix_read_pct: Option<u8>,
    label: &'a Option<String>,
    span: Option<u64>,
    copy_to_user: bool,
    sparse: bool,
    pair: &'a Option<String>,
}

//! The job the flags of `iopath run` describe.

use crate::model::job::{CaseSpec, JobSpec, RunSpec};
use crate::model::words::{Bytes, Dur, List, Pct};

use super::RunArgs;

impl RunArgs {
    /// The job the flags describe: every setting given on the command line
    /// (or, for a flag with a default, only when given), and one case entry
    /// of the case flags. Applied over a preset or job file, it overrides
    /// them; alone, the defaults fill the rest (`plan::Plan::from_spec`).
    pub fn flags_spec(&self) -> JobSpec {
        let when = |id: &str| self.given.iter().any(|g| g == id);
        let run = RunSpec {
            file: self.file.clone(),
            dir: self.dir.clone(),
            size: self.size.map(Bytes),
            time: self.time,
            io_size: self.io_size.map(Bytes),
            repeat: self.repeat,
            ci_target: when("ci_target").then_some(Pct(self.ci_target)),
            max_time: when("max_time").then_some(Dur(self.max_time)),
            budget: self.budget.map(Dur),
            case_timeout: self.case_timeout.map(Dur),
            warmup: when("warmup").then_some(self.warmup),
            schedule: when("schedule").then_some(self.schedule),
            order_seed: self.order_seed,
            interval: when("interval").then_some(Dur(self.interval)),
            seed: when("seed").then_some(self.seed),
            cache: when("cache").then_some(self.cache),
            drop_caches: self.drop_caches.then_some(true),
            data: when("data").then_some(self.data),
            sparse: self.sparse.then_some(true),
            verify: self.verify.then_some(true),
            cache_limit: self.cache_limit.map(Bytes),
            ucache_size: self.ucache_size.map(Bytes),
            ucache_page: when("ucache_page").then_some(Bytes(self.ucache_page)),
            pool_threads: self.pool_threads,
            neighbour: self.neighbour.then_some(true),
            latency_split: self.latency_split.then_some(true),
            noatime: self.noatime.then_some(true),
            cpus: self.cpus.clone(),
            numa_node: self.numa_node,
            mem_node: self.mem_node,
            mem_policy: self.mem_policy,
            sqpoll_cpu: self.sqpoll_cpu,
        };
        let case = CaseSpec {
            method: (!self.methods.is_empty()).then(|| List(self.methods.clone())),
            pattern: (!self.patterns.is_empty()).then(|| List(self.patterns.clone())),
            buffers: (!self.buffers.is_empty()).then(|| List(self.buffers.clone())),
            bs: self.bs.map(Bytes),
            qd: self.qd,
            threads: when("threads").then(|| List(vec![self.threads])),
            concurrency: (!self.concurrency.is_empty()).then(|| List(self.concurrency.clone())),
            sync: when("sync").then_some(self.sync),
            sync_every: self.sync_every,
            rwmix: when("rwmix").then_some(self.rwmix),
            span: self.span,
            ..CaseSpec::default()
        };
        JobSpec {
            run,
            cases: vec![case],
            ..JobSpec::default()
        }
    }
}

//! Unit tests of loading, matching, labels, the fail rule and the notes;
//! here, the results they are made of (`report::compare`'s tests use them
//! too).

mod input;
mod labels;
mod matching;
mod notes;

use super::*;
use crate::result::{CaseResult, Latency, Measurement, RunConfig, Tool, SCHEMA_VERSION};

pub(crate) const MB: f64 = 1024.0 * 1024.0;

/// A measured case with these throughputs (MiB/s) and p99 100 us.
pub(crate) fn case(method: &str, pattern: &str, rwmix: Option<u8>, mibs: &[f64]) -> CaseResult {
    CaseResult {
        method: method.into(),
        pattern: crate::model::Pattern::from_name(pattern).unwrap(),
        block_size: 4096,
        queue_depth: 32,
        queue_depth_requested: 32,
        threads: 1,
        sync: iopath_io::SyncPolicy::End,
        rwmix_read_pct: rwmix,
        repetitions: mibs
            .iter()
            .map(|&m| Measurement {
                bw_bytes_per_s: m * MB,
                lat_ns: Latency {
                    p99: 100_000,
                    ..Latency::default()
                },
                ..Measurement::default()
            })
            .collect(),
        ..CaseResult::default()
    }
}

pub(crate) fn run(cases: Vec<CaseResult>) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "iopath".into(),
            version: "0.1.0".into(),
        },
        started_at: "2026-01-01T00:00:00Z".into(),
        finished_at: None,
        command: "iopath run".into(),
        interrupted: false,
        system: crate::system::sysinfo::System::default(),
        target: None,
        config: RunConfig {
            preset: None,
            job_file: None,
            layout: None,
            ignored_options: Vec::new(),
            whole_pass: false,
            cache_limit: None,
            latency_split_fallback: None,
            time_limit_ns: Some(150_000_000),
            io_size_bytes: None,
            repeat: Some(8),
            ci_target: None,
            max_time_ns: None,
            case_timeout_ns: None,
            estimated_ns: None,
            warmup: 0,
            schedule: None,
            order_seed: None,
            interval_ns: 100_000_000,
            seed: 1,
            cache: crate::model::CacheState::Cold,
            data: "random".into(),
            conditions: None,
        },
        probe: Vec::new(),
        cases,
        warnings: Vec::new(),
        verdicts: Vec::new(),
        mpi: None,
        replay: None,
    }
}

pub(crate) fn side(name: &str) -> Side {
    Side {
        path: name.into(),
        name: name.into(),
        started_at: String::new(),
        command: String::new(),
        paths: vec![name.into()],
    }
}

/// One run a side, drift allowance 0 (the repetitions' own test).
pub(crate) fn report(a: Vec<CaseResult>, b: Vec<CaseResult>, fail: Option<f64>) -> Report {
    compare(&[run(a)], &[run(b)], side("A"), side("B"), fail, 0.0)
}

pub(crate) const BASE: [f64; 8] = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.4];

pub(crate) fn times(f: f64) -> Vec<f64> {
    BASE.iter().map(|x| x * f).collect()
}

pub(crate) fn one(a: &[f64], b: &[f64]) -> CaseComparison {
    let r = report(
        vec![case("uring", "randread", None, a)],
        vec![case("uring", "randread", None, b)],
        None,
    );
    assert_eq!(r.cases.len(), 1);
    r.cases[0].clone()
}

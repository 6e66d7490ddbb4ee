//! fio-compatible JSON (`--json-format fio`): the run shaped like fio 3.x's
//! `--output-format=json`, for fio-plot and scripts written for fio.
//!
//! One fio job per case that measured something (a case that was skipped,
//! failed, or never reached is left out: fio has no job that did not run).
//! Every figure of a job comes from one real repetition, the case's median
//! one by throughput (see [`representative`]), so that they agree with one
//! another as a fio job's do: `bw_bytes` is `io_bytes` over the runtime,
//! `N` is the requests behind the percentiles.
//!
//! Only keys fio writes are written, with fio's JSON types (integers where
//! fio writes integers, floats where it writes floats, option values as
//! strings); what iopath does not measure is left out, never made up. The
//! subset, what differs in meaning, and what is left out are listed in
//! `docs/json-schema.md` ("fio-compatible JSON").
//!
//! Here: the document's types and its entry points. Beside them: `latency`
//! (fio's latency statistics, percentiles and bins from iopath's latency),
//! `options` (the global and job option maps, fio's engine for each
//! method), `time` (the timestamps) and the tests.

mod latency;
mod options;
mod time;

use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::report::export::{Export, Exporter};
use crate::result::{CaseResult, Cpu, Measurement, RunResult};

use latency::{bin_shares, lat_stats};
use options::{global_options, job_options};
use time::{ctime, parse_rfc3339};

/// The document, its keys in fio's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FioDocument {
    /// `iopath-<version> (fio-json subset)`.
    #[serde(rename = "fio version")]
    pub fio_version: String,
    /// When the run finished (started, if it never did), Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<u64>,
    /// The same instant as `ctime(3)` writes it, in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(rename = "global options", skip_serializing_if = "Options::is_empty")]
    pub global_options: Options,
    pub jobs: Vec<FioJob>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disk_util: Vec<DiskUtil>,
}

/// fio's option map: names and string values, in the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options(pub Vec<(&'static str, String)>);

impl Options {
    fn set(&mut self, key: &'static str, value: impl Into<String>) {
        self.0.push((key, value.into()));
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Options {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// One case as a fio job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FioJob {
    /// The method and the job as iopath names them: `direct randread 4k Q1T1`.
    pub jobname: String,
    /// Every case ran alone, so each is its own group (fio adds up the
    /// jobs of a group as if they ran together).
    pub groupid: u64,
    /// Always 0: a case that failed is not rendered.
    pub error: i64,
    #[serde(rename = "job options")]
    pub job_options: Options,
    pub read: Direction,
    pub write: Direction,
    /// iopath never trims: all zero, as fio writes it for a job that did not.
    pub trim: Direction,
    /// The repetition's duration, ms.
    pub job_runtime: u64,
    /// The workers' user and system CPU time over the duration, percent
    /// (above 100 with several threads, as fio's with `group_reporting`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usr_cpu: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_cpu: Option<f64>,
    /// Voluntary and involuntary context switches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctx: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub majf: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minf: Option<u64>,
    /// Percent of the requests timed (reads and writes together, as fio's)
    /// in each of fio's latency bins: under 1 µs, 1 µs to 1 ms, from 1 ms;
    /// absent when the result has no bins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<BinShares>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<BinShares>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<BinShares>,
    /// A case with a sync every N writes (`--sync-every`): its syncs, as
    /// fio's `sync` object; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncStats>,
}

/// fio's `sync` object, of what iopath records of its syncs: the count
/// and their mean time (no spread: each call is not kept).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncStats {
    pub total_ios: u64,
    pub lat_ns: SyncLat,
}

/// `sync.lat_ns`: `N` calls of `mean` ns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncLat {
    #[serde(rename = "N")]
    pub n: u64,
    pub mean: f64,
}

/// fio's `latency_ns`, `latency_us` or `latency_ms`: each bin's upper end
/// (fio's key) and its share of the requests, percent, in fio's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BinShares(pub Vec<(&'static str, f64)>);

impl Serialize for BinShares {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// fio's `read`, `write` or `trim` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Direction {
    pub io_bytes: u64,
    pub io_kbytes: u64,
    /// Bytes per second (floor), from the exact duration.
    pub bw_bytes: u64,
    /// KiB per second (floor), as fio's `bw`.
    pub bw: u64,
    pub iops: f64,
    /// ms; 0 for a direction with no I/O, as in fio.
    pub runtime: u64,
    pub total_ios: u64,
    /// The same figures as `lat_ns` (iopath times submit to completion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clat_ns: Option<LatStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat_ns: Option<LatStats>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Samples>,
}

/// fio's latency statistics (`clat_ns`, `lat_ns`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sample standard deviation (n − 1), as fio's; absent when the result
    /// did not record one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    /// Requests behind the figures; absent before schema 3, which did not
    /// record it.
    #[serde(rename = "N", skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub percentile: BTreeMap<String, u64>,
}

/// fio's bandwidth and IOPS samples, here the repetition's intervals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Samples {
    /// KiB/s (floor).
    pub bw_min: u64,
    pub bw_max: u64,
    /// Percent of the group's bandwidth (its only job): fio's
    /// `bw_mean / bw`, at most 100.
    pub bw_agg: f64,
    pub bw_mean: f64,
    /// Sample standard deviation (n − 1), 0 for one sample, as fio.
    pub bw_dev: f64,
    pub bw_samples: u64,
    pub iops_min: u64,
    pub iops_max: u64,
    pub iops_mean: f64,
    pub iops_stddev: f64,
    pub iops_samples: u64,
}

/// fio's `disk_util` entry: the disks under the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiskUtil {
    /// The disk (`vda`), or the disks joined by `+` (`nvme0n1+nvme1n1`)
    /// when the target sits on several: their counters are one sum.
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    /// From the rest of `/sys/block/X/stat`, when the result recorded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_merges: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_merges: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ticks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_ticks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_queue: Option<u64>,
    /// Busy time over the repetitions' time, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub util: Option<f64>,
}

/// The run as fio's JSON document, keys in fio's order.
pub fn document(r: &RunResult) -> FioDocument {
    let when = r
        .finished_at
        .as_deref()
        .and_then(parse_rfc3339)
        .or_else(|| parse_rfc3339(&r.started_at));
    let jobs = r
        .cases
        .iter()
        .filter(|c| c.error.is_none())
        .filter_map(|c| representative(c).map(|m| (c, m)))
        .enumerate()
        .flat_map(|(i, (c, m))| match c.streams.is_empty() {
            true => vec![job(r, c, m, i as u64)],
            // A case of streams: a fio job per stream, one group.
            false => (0..c.streams.len())
                .filter_map(|s| {
                    let (sc, sm) = stream_case(c, m, s)?;
                    Some(job(r, &sc, &sm, i as u64))
                })
                .collect(),
        })
        .collect();
    FioDocument {
        fio_version: format!("iopath-{} (fio-json subset)", r.tool.version),
        timestamp: when.map(|t| t.div_euclid(1000).max(0) as u64),
        timestamp_ms: when.map(|t| t.max(0) as u64),
        time: when.map(|t| ctime(t.div_euclid(1000))),
        global_options: global_options(r),
        jobs,
        disk_util: disk_util(r),
    }
}

/// The run as fio's JSON document, as a [`serde_json::Value`] (whose
/// objects sort their keys; [`to_json`] keeps fio's order).
pub fn render(r: &RunResult) -> serde_json::Value {
    // Cannot fail: every map has string keys.
    serde_json::to_value(document(r)).unwrap_or(serde_json::Value::Null)
}

/// The document as pretty-printed JSON in fio's key order, ending with a
/// newline: what `--json-format fio` writes.
pub fn to_json(r: &RunResult) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(&document(r))?;
    s.push('\n');
    Ok(s)
}

/// `--json-format fio`: [`to_json`], written as the `--json` document.
#[derive(Debug, Clone, Copy)]
pub struct FioJson;

impl Exporter for FioJson {
    fn flag(&self) -> &'static str {
        "--json"
    }

    fn serialize(&self, r: &RunResult) -> anyhow::Result<Export> {
        Ok(Export::Document(crate::report::json::escaped(to_json(r)?)))
    }
}

/// The repetition a case's fio job is made of: the median of the measured
/// repetitions ([`CaseResult::measured`]: warm-ups left out) by throughput;
/// with an even number, the slower of the two in the middle. `None` when
/// the case measured nothing.
pub fn representative(c: &CaseResult) -> Option<&Measurement> {
    let mut reps = c.measured();
    reps.sort_by(|a, b| a.bw_bytes_per_s.total_cmp(&b.bw_bytes_per_s));
    reps.get(reps.len().checked_sub(1)? / 2).copied()
}

fn job(r: &RunResult, c: &CaseResult, m: &Measurement, groupid: u64) -> FioJob {
    let reads = m.read_ios > 0 || m.read_bytes > 0;
    let writes = m.write_ios > 0 || m.write_bytes > 0;
    // One latency histogram and one series cover reads and writes
    // together: they belong to a direction only when it is the only one.
    let single = reads != writes;
    let cpu_known = m.cpu != Cpu::default();
    let pct = |ns: u64| {
        if m.duration_ns == 0 {
            0.0
        } else {
            finite(ns as f64 * 100.0 / m.duration_ns as f64)
        }
    };
    let read = direction(m, m.read_bytes, m.read_ios, single);
    let write = direction(m, m.write_bytes, m.write_ios, single);
    let [latency_ns, latency_us, latency_ms] =
        bin_shares(&m.lat_ns).map_or([None, None, None], |b| b.map(Some));
    let mut job_options = job_options(r, c);
    // fio writes `lat_ns.percentile` only with this option set.
    if [&read, &write]
        .iter()
        .any(|d| d.lat_ns.as_ref().is_some_and(|l| !l.percentile.is_empty()))
    {
        job_options.set("lat_percentiles", "1");
    }
    FioJob {
        jobname: jobname(c),
        groupid,
        error: 0,
        job_options,
        read,
        write,
        trim: direction(m, 0, 0, single),
        job_runtime: ms(m.duration_ns),
        usr_cpu: cpu_known.then(|| pct(m.cpu.user_ns)),
        sys_cpu: cpu_known.then(|| pct(m.cpu.sys_ns)),
        ctx: cpu_known.then(|| m.cpu.ctx_vol.saturating_add(m.cpu.ctx_invol)),
        majf: cpu_known.then_some(m.cpu.majflt),
        minf: cpu_known.then_some(m.cpu.minflt),
        latency_ns,
        latency_us,
        latency_ms,
        sync: m.syncs.map(|s| SyncStats {
            total_ios: s.count,
            lat_ns: SyncLat {
                n: s.count,
                mean: s.mean_ns as f64,
            },
        }),
    }
}

/// Stream `s` of case `c` as a case of its own (its workload, its name the
/// fio job's), and its figures in the repetition `m`; `None` when `m` has
/// none for it.
fn stream_case(c: &CaseResult, m: &Measurement, s: usize) -> Option<(CaseResult, Measurement)> {
    let (st, f) = (c.streams.get(s)?, m.streams.get(s)?);
    let case = CaseResult {
        pattern: st.pattern,
        block_size: st.block_size,
        queue_depth_requested: st.queue_depth_requested,
        queue_depth: c.queue_depth.min(st.queue_depth_requested),
        threads: st.threads,
        sync: st.sync,
        sync_every: st.sync_every,
        rwmix_read_pct: st.rwmix_read_pct,
        span_bytes: st.span_bytes,
        label: Some(st.name.clone()),
        streams: Vec::new(),
        repetitions: Vec::new(),
        ..c.clone()
    };
    let figures = Measurement {
        io_bytes: f.io_bytes,
        ios: f.ios,
        read_ios: f.read_ios,
        write_ios: f.write_ios,
        read_bytes: f.read_bytes,
        write_bytes: f.write_bytes,
        duration_ns: f.duration_ns,
        bw_bytes_per_s: f.bw_bytes_per_s,
        iops: f.iops,
        lat_ns: f.lat_ns.clone(),
        ..Measurement::default()
    };
    Some((case, figures))
}

/// `direct randread 4k Q1T1`: the method (its arm: `direct#2`) and the job
/// at the depth it ran at, as iopath's other reports name a case.
pub fn jobname(c: &CaseResult) -> String {
    format!("{} {}", c.name(), c.ran_label())
}

/// One direction of a repetition. `single`: the repetition moved data in
/// one direction only, so its latency and series are that direction's.
fn direction(m: &Measurement, bytes: u64, ios: u64, single: bool) -> Direction {
    if bytes == 0 && ios == 0 {
        // What fio writes for a direction with no I/O (its `stddev` 0
        // too, when the result records one).
        let none = LatStats {
            n: Some(0),
            stddev: m.lat_ns.stddev.map(|_| 0.0),
            ..LatStats::default()
        };
        return Direction {
            clat_ns: Some(none.clone()),
            lat_ns: Some(none),
            samples: Some(Samples::default()),
            ..Direction::default()
        };
    }
    let ns = m.duration_ns;
    let bw_bytes = if ns == 0 {
        0
    } else {
        u64::try_from(u128::from(bytes) * 1_000_000_000 / u128::from(ns)).unwrap_or(u64::MAX)
    };
    let lat = single.then(|| lat_stats(&m.lat_ns)).flatten();
    Direction {
        io_bytes: bytes,
        io_kbytes: bytes / 1024,
        bw_bytes,
        bw: bw_bytes / 1024,
        iops: if ns == 0 {
            0.0
        } else {
            finite(ios as f64 * 1e9 / ns as f64)
        },
        runtime: ms(ns),
        total_ios: ios,
        clat_ns: lat.clone(),
        lat_ns: lat,
        samples: if single { samples(m, bw_bytes) } else { None },
    }
}

/// fio's bandwidth and IOPS sample statistics from the repetition's
/// per-interval series; `None` without one.
fn samples(m: &Measurement, bw_bytes: u64) -> Option<Samples> {
    let s = m.series.as_ref()?;
    let n = s.bw_bytes_per_s.len().min(s.iops.len());
    if n == 0 {
        return None;
    }
    // A last interval cut short (often microseconds long) gives a rate of
    // little meaning: like fio, which samples whole windows only, leave it
    // out, unless it is the whole repetition.
    let n = if n > 1 && s.last_interval_ns < s.interval_ns {
        n - 1
    } else {
        n
    };
    let kib: Vec<f64> = s.bw_bytes_per_s[..n].iter().map(|b| b / 1024.0).collect();
    let (bw_min, bw_max, bw_mean, bw_dev) = describe(&kib);
    let (iops_min, iops_max, iops_mean, iops_stddev) = describe(&s.iops[..n]);
    let bw = (bw_bytes / 1024) as f64;
    Some(Samples {
        bw_min: bw_min.floor() as u64,
        bw_max: bw_max.floor() as u64,
        bw_agg: if bw > 0.0 {
            finite((bw_mean * 100.0 / bw).min(100.0))
        } else {
            0.0
        },
        bw_mean,
        bw_dev,
        bw_samples: kib.len() as u64,
        iops_min: iops_min.floor() as u64,
        iops_max: iops_max.floor() as u64,
        iops_mean,
        iops_stddev,
        iops_samples: n as u64,
    })
}

/// Min, max, mean and sample standard deviation (0 for one value) of a
/// non-empty list; negative or non-finite values read as 0.
fn describe(v: &[f64]) -> (f64, f64, f64, f64) {
    let v: Vec<f64> = v.iter().map(|&x| finite(x).max(0.0)).collect();
    let n = v.len() as f64;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    let mean = v.iter().sum::<f64>() / n;
    let dev = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (finite(min), max, finite(mean), finite(dev))
}

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// ns to fio's ms: rounded, and at least 1 when anything ran.
fn ms(ns: u64) -> u64 {
    if ns == 0 {
        0
    } else {
        ns.saturating_add(500_000).div_euclid(1_000_000).max(1)
    }
}

/// The disks' counters summed over every repetition of the run, warm-ups
/// included; nothing when no repetition read them or the disk has no name.
fn disk_util(r: &RunResult) -> Vec<DiskUtil> {
    let counters: Vec<_> = r
        .cases
        .iter()
        .flat_map(|c| &c.repetitions)
        .filter_map(|m| m.device)
        .collect();
    if counters.is_empty() {
        return Vec::new();
    }
    let leaves = r
        .system
        .device_stack
        .as_ref()
        .map(|s| s.leaves.join("+"))
        .filter(|n| !n.is_empty());
    let Some(name) = leaves.or_else(|| r.system.device.as_ref().map(|d| d.name.clone())) else {
        return Vec::new();
    };
    // Times only when every repetition recorded them.
    let times: Option<Vec<_>> = counters.iter().map(|d| d.time).collect();
    let sum = |f: &dyn Fn(&crate::system::metrics::blockdev::DiskTime) -> u64| {
        times
            .as_ref()
            .map(|t| t.iter().fold(0u64, |a, x| a.saturating_add(f(x))))
    };
    let elapsed_ms: u64 = r
        .cases
        .iter()
        .flat_map(|c| &c.repetitions)
        .filter(|m| m.device.is_some())
        .map(|m| m.duration_ns / 1_000_000)
        .sum();
    let util = sum(&|t| t.io_ticks_ms)
        .filter(|_| elapsed_ms > 0)
        .map(|busy| (busy as f64 * 100.0 / elapsed_ms as f64).min(100.0));
    vec![DiskUtil {
        name,
        read_ios: counters.iter().fold(0, |a, d| a.saturating_add(d.reads)),
        write_ios: counters.iter().fold(0, |a, d| a.saturating_add(d.writes)),
        read_merges: sum(&|t| t.read_merges),
        write_merges: sum(&|t| t.write_merges),
        read_ticks: sum(&|t| t.read_ticks_ms),
        write_ticks: sum(&|t| t.write_ticks_ms),
        in_queue: sum(&|t| t.in_queue_ms),
        util,
    }]
}

#[cfg(test)]
mod tests;

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

use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::result::{CaseResult, Cpu, Latency, LatencyBins, Measurement, RunResult};

/// One of a latency's figures.
type Figure = fn(&Latency) -> u64;

/// The percentiles iopath records, under fio's keys.
const PERCENTILES: [(&str, Figure); 4] = [
    ("50.000000", |l| l.p50),
    ("90.000000", |l| l.p90),
    ("99.000000", |l| l.p99),
    ("99.900000", |l| l.p999),
];

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

/// fio's keys of the ns and µs bins, and of the ms ones (two more):
/// [`LatencyBins`] in fio's units.
const BIN_KEYS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];
const _: () = assert!(LatencyBins::LEN == 10 + 10 + BIN_KEYS.len());

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
        .map(|(i, (c, m))| job(r, c, m, i as u64))
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
    }
}

/// fio's `latency_ns`, `latency_us` and `latency_ms` from the latency's
/// bins: each bin's share of all of them, percent, a share under 0.01 of a
/// bin that holds requests written as 0.01, as fio does (`stat_calc_lat`);
/// `None` without bins, or with nothing in them.
fn bin_shares(l: &Latency) -> Option<[BinShares; 3]> {
    let bins = l.bins?;
    let total = bins.total();
    if total == 0 {
        return None;
    }
    let share = |n: u64| {
        let pct = finite(n as f64 * 100.0 / total as f64);
        if n > 0 && pct < 0.01 {
            0.01
        } else {
            pct
        }
    };
    let unit = |from: usize, len: usize| {
        BinShares(
            BIN_KEYS[..len]
                .iter()
                .zip(&bins.0[from..from + len])
                .map(|(k, &n)| (*k, share(n)))
                .collect(),
        )
    };
    Some([unit(0, 10), unit(10, 10), unit(20, 12)])
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

/// fio's statistics of iopath's latency; `None` when it has none (no
/// request timed).
fn lat_stats(l: &Latency) -> Option<LatStats> {
    if l.count == 0 && l.max == 0 {
        return None;
    }
    Some(LatStats {
        min: l.min,
        max: l.max,
        mean: finite(l.mean),
        stddev: l.stddev.map(|sd| sample_stddev(sd, l.count)),
        n: (l.count > 0).then_some(l.count),
        percentile: PERCENTILES
            .iter()
            .map(|(k, f)| (k.to_string(), f(l)))
            .collect(),
    })
}

/// The sample standard deviation (n − 1, fio's) of `n` values whose
/// population one (n) is `sd`: 0 for one value, `sd` itself when `n` is
/// not known.
fn sample_stddev(sd: f64, n: u64) -> f64 {
    let sd = finite(sd);
    match n {
        0 => sd,
        1 => 0.0,
        n => finite(sd * (n as f64 / (n - 1) as f64).sqrt()),
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

/// What holds for the whole run: the target, its size, the time limit.
fn global_options(r: &RunResult) -> Options {
    let mut o = Options::default();
    if let Some(t) = &r.target {
        o.set("filename", t.path.to_string_lossy());
        o.set("size", fio_size(t.size_bytes));
    }
    if let Some(ns) = r.config.time_limit_ns.filter(|_| !r.config.whole_pass) {
        o.set("runtime", fio_time(ns));
    }
    o
}

/// fio's options for what the case ran.
fn job_options(r: &RunResult, c: &CaseResult) -> Options {
    let mut o = Options::default();
    o.set("name", jobname(c));
    o.set("rw", c.pattern.clone());
    if let Some(p) = c.rwmix_read_pct {
        o.set("rwmixread", p.to_string());
    }
    o.set("bs", fio_size(c.block_size));
    o.set("iodepth", c.queue_depth.to_string());
    o.set("numjobs", c.threads.to_string());
    if c.threads > 1 {
        o.set("group_reporting", "1");
    }
    if let Some(span) = c.span_bytes {
        o.set("size", fio_size(span));
    }
    let (engine, direct, extra): (Option<&str>, Option<&str>, &[(&str, &str)]) =
        match c.method.as_str() {
            "buffered" => (Some("psync"), Some("0"), &[]),
            "direct" => (Some("psync"), Some("1"), &[]),
            "mmap" => (Some("mmap"), Some("0"), &[]),
            "uring" => (Some("io_uring"), Some("1"), &URING),
            "uring-buffered" => (Some("io_uring"), Some("0"), &URING),
            "uring-sqpoll" => (Some("io_uring"), Some("1"), &URING_SQPOLL),
            "uring-iopoll" => (Some("io_uring"), Some("1"), &URING_IOPOLL),
            "aio" => (Some("libaio"), Some("1"), &[]),
            "null" => (Some("null"), None, &[]),
            // mmap-dax, ucache, uffd, uffd-wp: no fio engine does the same.
            _ => (None, None, &[]),
        };
    if let Some(e) = engine {
        o.set("ioengine", e);
    }
    if let Some(d) = direct {
        o.set("direct", d);
    }
    for (k, v) in extra {
        o.set(k, *v);
    }
    match c.cache.as_deref().unwrap_or(&r.config.cache) {
        "cold" => o.set("invalidate", "1"),
        "warm" | "as-is" => o.set("invalidate", "0"),
        _ => {}
    }
    if matches!(
        c.pattern.as_str(),
        "write" | "randwrite" | "randrw" | "copy"
    ) {
        match c.sync.as_str() {
            "end" => o.set("end_fsync", "1"),
            "dsync" => o.set("sync", "dsync"),
            "osync" => o.set("sync", "sync"),
            "each" => o.set("fsync", "1"),
            _ => {}
        }
    }
    o
}

const URING: [(&str, &str); 2] = [("fixedbufs", "1"), ("registerfiles", "1")];
const URING_SQPOLL: [(&str, &str); 3] = [
    ("fixedbufs", "1"),
    ("registerfiles", "1"),
    ("sqthread_poll", "1"),
];
const URING_IOPOLL: [(&str, &str); 3] =
    [("fixedbufs", "1"), ("registerfiles", "1"), ("hipri", "1")];

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
    vec![DiskUtil {
        name,
        read_ios: counters.iter().fold(0, |a, d| a.saturating_add(d.reads)),
        write_ios: counters.iter().fold(0, |a, d| a.saturating_add(d.writes)),
    }]
}

/// A size as fio reads one: `4k`, `1M`, `2G` (binary), else bytes.
fn fio_size(b: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "k")] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// A duration as fio reads one: seconds by default, else `ms` or `us`.
fn fio_time(ns: u64) -> String {
    if ns % 1_000_000_000 == 0 {
        (ns / 1_000_000_000).to_string()
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", ns.saturating_add(500) / 1000)
    }
}

/// Milliseconds since the Unix epoch of an RFC 3339 time
/// (`2026-11-21T01:57:42Z`, `...42.5+01:00`); `None` if it is not one.
fn parse_rfc3339(s: &str) -> Option<i64> {
    let num = |a: usize, b: usize| -> Option<i64> {
        let t = s.get(a..b)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())
            .flatten()
    };
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0;
    if let Some(f) = rest.strip_prefix('.') {
        let digits = f.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let frac = &f[..digits];
        millis = format!("{frac:0<3}")[..3].parse::<i64>().ok()?;
        rest = &f[digits..];
    }
    let offset_s = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let digit = |c: &u8| c.is_ascii_digit().then(|| i64::from(c - b'0'));
            let oh = digit(h1)? * 10 + digit(h2)?;
            let om = digit(m1)? * 10 + digit(m2)?;
            let o = oh * 3600 + om * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    Some(secs * 1000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `ctime(3)`'s form of Unix seconds, UTC: `Sat Nov 21 01:57:47 2026`.
fn ctime(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // civil_from_days (H. Hinnant), as sysinfo::rfc3339.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{} {} {d:>2} {:02}:{:02}:{:02} {y}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use serde_json::Value;

    use super::*;
    use crate::report::testdata::fixture;
    use crate::result::{Latency, Series};

    /// What fio 3.33 wrote (tests/fixtures/fio/README.md).
    const FIO: [&str; 3] = [
        include_str!("../../tests/fixtures/fio/fio-3.33-randread.json"),
        include_str!("../../tests/fixtures/fio/fio-3.33-write.json"),
        include_str!("../../tests/fixtures/fio/fio-3.33-randrw.json"),
    ];

    const OPTION_MAPS: [&str; 2] = ["global options", "job options"];

    fn v3() -> RunResult {
        serde_json::from_str(include_str!("../../tests/fixtures/compare/v3.json")).unwrap()
    }

    /// The document as a reader gets it: the text, parsed back.
    fn parsed(r: &RunResult) -> Value {
        serde_json::from_str(&to_json(r).unwrap()).unwrap()
    }

    fn kind(v: &Value) -> &'static str {
        match v {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "integer",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// Paths and types in a document, array items as `[]`; option maps'
    /// entries go to `options` (name -> types) instead.
    #[derive(Default)]
    struct Shape {
        paths: BTreeMap<String, BTreeSet<&'static str>>,
        options: BTreeMap<String, BTreeSet<&'static str>>,
    }

    impl Shape {
        fn of(docs: &[Value]) -> Shape {
            let mut s = Shape::default();
            for d in docs {
                s.walk(d, String::new());
            }
            s
        }

        fn walk(&mut self, v: &Value, path: String) {
            self.paths.entry(path.clone()).or_default().insert(kind(v));
            match v {
                Value::Object(m) => {
                    for (k, x) in m {
                        if OPTION_MAPS.contains(&k.as_str()) {
                            let p = format!("{path}/{k}");
                            self.paths.entry(p).or_default().insert(kind(x));
                            for (name, val) in x.as_object().into_iter().flatten() {
                                self.options
                                    .entry(name.clone())
                                    .or_default()
                                    .insert(kind(val));
                            }
                        } else {
                            self.walk(x, format!("{path}/{k}"));
                        }
                    }
                }
                Value::Array(a) => {
                    for x in a {
                        self.walk(x, format!("{path}/[]"));
                    }
                }
                _ => {}
            }
        }
    }

    fn fio_shape() -> Shape {
        Shape::of(
            &FIO.iter()
                .map(|t| serde_json::from_str(t).unwrap())
                .collect::<Vec<Value>>(),
        )
    }

    /// Bins by name, the rest empty.
    fn bins(held: &[(&str, u64)]) -> LatencyBins {
        let mut b = LatencyBins::default();
        for (name, n) in held {
            let i = LatencyBins::NAMES.iter().position(|k| k == name).unwrap();
            b.0[i] = *n;
        }
        b
    }

    fn rep(read: (u64, u64), write: (u64, u64), duration_ns: u64) -> Measurement {
        let n = read.1 + write.1;
        Measurement {
            io_bytes: read.0 + write.0,
            ios: read.1 + write.1,
            read_bytes: read.0,
            read_ios: read.1,
            write_bytes: write.0,
            write_ios: write.1,
            duration_ns,
            bw_bytes_per_s: (read.0 + write.0) as f64 * 1e9 / duration_ns.max(1) as f64,
            iops: (read.1 + write.1) as f64 * 1e9 / duration_ns.max(1) as f64,
            lat_ns: Latency {
                count: read.1 + write.1,
                min: 40_000,
                mean: 95_000.5,
                p50: 90_000,
                p90: 120_000,
                p99: 250_000,
                p999: 900_000,
                max: 1_200_000,
                stddev: Some(60_000.0),
                // As the percentiles have it: half under 100 µs, 99% under
                // 250 µs, 0.1% from 1 ms.
                bins: Some(bins(&[
                    ("100us", n / 2),
                    ("250us", n - n / 2 - n / 100),
                    ("1000us", n / 100 - n / 1000),
                    ("2ms", n / 1000),
                ])),
            },
            cpu: Cpu {
                cpu_ns: 60_000_000,
                user_ns: 10_000_000,
                sys_ns: 40_000_000,
                ctx_vol: 300,
                ctx_invol: 7,
                minflt: 12,
                majflt: 1,
                ..Cpu::default()
            },
            ..Measurement::default()
        }
    }

    fn case(method: &str, pattern: &str, reps: Vec<Measurement>) -> CaseResult {
        CaseResult {
            method: method.into(),
            pattern: pattern.into(),
            block_size: 4096,
            queue_depth: 32,
            queue_depth_requested: 32,
            threads: 1,
            sync: "end".into(),
            repetitions: reps,
            ..CaseResult::default()
        }
    }

    fn run(cases: Vec<CaseResult>) -> RunResult {
        let mut r = fixture();
        r.cases = cases;
        r
    }

    /// Cases of every kind the renderer tells apart, odd ones included.
    fn odd_run() -> RunResult {
        let mut with_series = rep((4096 * 30_000, 30_000), (0, 0), 200_000_000);
        with_series.series = Some(Series::from_counts(
            100_000_000,
            100_000_000,
            &[4096 * 14_000, 4096 * 16_000],
            &[14_000, 16_000],
        ));
        let mut randrw = case(
            "uring",
            "randrw",
            vec![rep((4096 * 700, 700), (4096 * 300, 300), 100_000_000)],
        );
        randrw.rwmix_read_pct = Some(70);
        let mut threads = case(
            "uring-sqpoll",
            "randwrite",
            vec![rep((0, 0), (4096 * 1000, 1000), 100_000_000)],
        );
        threads.threads = 4;
        threads.sync = "each".into();
        threads.span_bytes = Some(1 << 30);
        threads.cache = Some("warm".into());
        let mut old = rep((1 << 20, 1), (0, 0), 5_000_000);
        old.lat_ns.count = 0;
        old.lat_ns.stddev = None;
        old.lat_ns.bins = None;
        old.cpu = Cpu::default();
        let mut errored = case("aio", "randread", vec![rep((4096, 1), (0, 0), 1000)]);
        errored.error = Some("io_submit: Invalid argument (os error 22)".into());
        let mut skipped = case("uring-iopoll", "randread", vec![]);
        skipped.skipped = Some("no poll queues".into());
        let warm_only = case(
            "direct",
            "randread",
            vec![Measurement {
                warmup: true,
                ..rep((4096, 1), (0, 0), 1000)
            }],
        );
        run(vec![
            case("direct", "randread", vec![with_series]),
            randrw,
            threads,
            case(
                "mmap",
                "copy",
                vec![rep((1 << 20, 1), (1 << 20, 1), 2_000_000)],
            ),
            case("ucache", "read", vec![old]),
            case("null", "randread", vec![rep((4096, 1), (0, 0), 0)]),
            errored,
            skipped,
            warm_only,
        ])
    }

    fn jobs(doc: &Value) -> &Vec<Value> {
        doc["jobs"].as_array().unwrap()
    }

    fn job_named<'a>(doc: &'a Value, name: &str) -> &'a Value {
        jobs(doc)
            .iter()
            .find(|j| j["jobname"] == name)
            .unwrap_or_else(|| panic!("no job {name}"))
    }

    #[test]
    fn snapshot_of_a_real_run() {
        insta::assert_snapshot!(to_json(&fixture()).unwrap());
    }

    #[test]
    fn snapshot_of_a_schema_3_run() {
        insta::assert_snapshot!(to_json(&v3()).unwrap());
    }

    /// A run that recorded the latency's standard deviation and bins: one
    /// direction, and reads and writes mixed.
    #[test]
    fn snapshot_of_latency_spread_and_bins() {
        let r = odd_run();
        insta::assert_snapshot!(to_json(&run(r.cases[..2].to_vec())).unwrap());
    }

    /// Every key written is at a path fio writes, with fio's JSON type;
    /// every option is one fio wrote, as a string.
    #[test]
    fn keys_and_types_are_fios() {
        let fio = fio_shape();
        let ours = Shape::of(&[parsed(&fixture()), parsed(&v3()), parsed(&odd_run())]);
        // Not vacuous: the deep paths are there.
        for p in [
            "/jobs/[]/read/clat_ns/percentile/99.000000",
            "/jobs/[]/write/lat_ns/N",
            "/jobs/[]/read/iops_stddev",
            "/jobs/[]/read/lat_ns/stddev",
            "/jobs/[]/write/clat_ns/stddev",
            "/jobs/[]/trim/lat_ns/stddev",
            "/jobs/[]/latency_ns/2",
            "/jobs/[]/latency_us/250",
            "/jobs/[]/latency_ms/>=2000",
            "/jobs/[]/usr_cpu",
            "/disk_util/[]/read_ios",
        ] {
            assert!(ours.paths.contains_key(p), "{p} not written");
        }
        for (path, types) in &ours.paths {
            let want = fio
                .paths
                .get(path)
                .unwrap_or_else(|| panic!("{path}: fio has no such key"));
            assert_eq!(types, want, "{path}: ours {types:?}, fio's {want:?}");
        }
        for (name, types) in &ours.options {
            assert!(
                fio.options.contains_key(name),
                "option {name}: fio wrote no such option"
            );
            assert_eq!(
                types,
                &BTreeSet::from(["string"]),
                "option {name}: {types:?}"
            );
        }
        // fio's own option values are all strings too.
        for (name, types) in &fio.options {
            assert_eq!(types, &BTreeSet::from(["string"]), "fio's {name}");
        }
    }

    /// What fio keys are not written, by path (directions as `<dir>`,
    /// percentiles apart): the list docs/json-schema.md gives.
    const LEFT_OUT: &[&str] = &[
        "/disk_util/[]/in_queue",
        "/disk_util/[]/read_merges",
        "/disk_util/[]/read_ticks",
        "/disk_util/[]/util",
        "/disk_util/[]/write_merges",
        "/disk_util/[]/write_ticks",
        "/jobs/[]/<dir>/drop_ios",
        "/jobs/[]/<dir>/short_ios",
        "/jobs/[]/<dir>/slat_ns",
        "/jobs/[]/elapsed",
        "/jobs/[]/eta",
        "/jobs/[]/iodepth_complete",
        "/jobs/[]/iodepth_level",
        "/jobs/[]/iodepth_submit",
        "/jobs/[]/latency_depth",
        "/jobs/[]/latency_percentile",
        "/jobs/[]/latency_target",
        "/jobs/[]/latency_window",
        "/jobs/[]/sync",
    ];

    fn normalized(paths: &BTreeMap<String, BTreeSet<&'static str>>) -> BTreeSet<String> {
        paths
            .keys()
            .map(|p| {
                p.replace("/read/", "/<dir>/")
                    .replace("/write/", "/<dir>/")
                    .replace("/trim/", "/<dir>/")
            })
            .map(|p| match p.as_str() {
                "/jobs/[]/read" | "/jobs/[]/write" | "/jobs/[]/trim" => "/jobs/[]/<dir>".into(),
                _ => p,
            })
            .collect()
    }

    #[test]
    fn left_out_keys_are_the_documented_ones() {
        let fio = normalized(&fio_shape().paths);
        let ours =
            normalized(&Shape::of(&[parsed(&fixture()), parsed(&v3()), parsed(&odd_run())]).paths);
        // The topmost paths fio has and we do not, percentiles apart.
        let missing: Vec<&str> = fio
            .iter()
            .filter(|p| !ours.contains(*p) && !p.contains("/percentile/"))
            .filter(|p| {
                let parent = &p[..p.rfind('/').unwrap()];
                ours.contains(parent)
            })
            .map(String::as_str)
            .collect();
        assert_eq!(missing, LEFT_OUT);
        // And the docs name every one of them.
        let doc = include_str!("../../../../docs/json-schema.md");
        let section = &doc[doc
            .find("## fio-compatible JSON")
            .expect("docs/json-schema.md has the fio section")..];
        for p in LEFT_OUT {
            let name = p.rsplit('/').next().unwrap();
            assert!(section.contains(&format!("`{name}`")), "docs: `{name}`");
        }
        // The percentiles written are among fio's default ones.
        let fio_pct: BTreeSet<&str> = fio
            .iter()
            .filter_map(|p| p.strip_prefix("/jobs/[]/<dir>/clat_ns/percentile/"))
            .collect();
        for (k, _) in PERCENTILES {
            assert!(fio_pct.contains(k), "{k}");
        }
    }

    /// The paths fio-plot (fio_plot/fiolib/jsonparsing_support.py,
    /// get_json_mapping) and common scripts read, with fio's types.
    #[test]
    fn what_fio_plot_and_scripts_read() {
        let doc = parsed(&fixture());
        assert!(doc["fio version"].as_str().unwrap().starts_with("iopath-"));
        assert_eq!(doc["timestamp"], 1_795_226_267);
        assert_eq!(doc["time"], "Sat Nov 21 01:57:47 2026");
        assert_eq!(jobs(&doc).len(), 15, "18 cases, 3 skipped");
        for (i, j) in jobs(&doc).iter().enumerate() {
            let name = j["jobname"].as_str().unwrap();
            assert_eq!(j["groupid"], i as u64, "{name}");
            assert_eq!(j["error"], 0);
            let o = &j["job options"];
            for k in ["rw", "bs", "iodepth", "numjobs", "ioengine", "direct"] {
                assert!(o[k].is_string(), "{name}: job options.{k}");
            }
            o["iodepth"].as_str().unwrap().parse::<u32>().unwrap();
            o["numjobs"].as_str().unwrap().parse::<u32>().unwrap();
            // fio-plot's mode: the direction the pattern moves data in.
            let rw = o["rw"].as_str().unwrap();
            let (mode, other) = match rw {
                "read" | "randread" => ("read", "write"),
                "write" | "randwrite" => ("write", "read"),
                _ => panic!("{name}: rw {rw}"),
            };
            let d = &j[mode];
            assert!(d["bw"].is_u64() && d["bw"].as_u64().unwrap() > 0, "{name}");
            assert!(d["bw_bytes"].is_u64() && d["io_bytes"].is_u64());
            assert!(d["iops"].is_f64() && d["iops"].as_f64().unwrap() > 0.0);
            assert!(d["iops_stddev"].is_f64(), "{name}");
            assert!(d["runtime"].is_u64() && d["total_ios"].is_u64());
            for lat in ["lat_ns", "clat_ns"] {
                assert!(d[lat]["mean"].is_f64(), "{name}: {lat}.mean");
                assert!(d[lat]["min"].is_u64() && d[lat]["max"].is_u64());
                assert!(d[lat]["percentile"]["99.000000"].is_u64(), "{name}");
                assert!(d[lat]["percentile"]["50.000000"].is_u64(), "{name}");
            }
            assert_eq!(j[other]["io_bytes"], 0, "{name}");
            assert_eq!(j[other]["lat_ns"]["N"], 0, "{name}");
            assert_eq!(j["trim"]["total_ios"], 0);
            assert!(j["usr_cpu"].is_f64() && j["sys_cpu"].is_f64(), "{name}");
            assert!(j["ctx"].is_u64());
        }
        let disks = doc["disk_util"].as_array().unwrap();
        assert_eq!(disks.len(), 1);
        assert_eq!(disks[0]["name"], "vda");
        // Every repetition's counters, warm-ups included (75 of them).
        assert_eq!(disks[0]["read_ios"], 261_575);
        assert_eq!(disks[0]["write_ios"], 695);
        // Not recorded by iopath (docs): absent, not zero.
        assert!(disks[0].get("util").is_none());
        // Not recorded by the iopath that wrote this result: absent too.
        assert!(jobs(&doc)[0]["read"]["lat_ns"].get("stddev").is_none());
        assert!(jobs(&doc)[0].get("latency_us").is_none());
    }

    #[test]
    fn a_job_is_its_median_repetition_and_its_figures_agree() {
        let r = fixture();
        let doc = parsed(&r);
        for c in r.cases.iter().filter(|c| c.skipped.is_none()) {
            let j = job_named(&doc, &jobname(c));
            let m = representative(c).unwrap();
            let mode = if m.read_ios > 0 { "read" } else { "write" };
            let d = &j[mode];
            assert_eq!(d["io_bytes"], m.io_bytes);
            assert_eq!(d["io_kbytes"], m.io_bytes / 1024);
            assert_eq!(d["total_ios"], m.ios);
            let bw_bytes = d["bw_bytes"].as_u64().unwrap();
            assert_eq!(
                bw_bytes,
                (m.io_bytes as u128 * 1_000_000_000 / m.duration_ns as u128) as u64
            );
            assert!((bw_bytes as f64 - m.bw_bytes_per_s).abs() <= 1.0);
            assert_eq!(d["bw"], bw_bytes / 1024);
            let iops = d["iops"].as_f64().unwrap();
            assert!((iops - m.iops).abs() < 1e-6 * m.iops, "{iops} {}", m.iops);
            assert_eq!(d["runtime"], (m.duration_ns + 500_000) / 1_000_000);
            assert_eq!(d["lat_ns"]["percentile"]["99.000000"], m.lat_ns.p99);
            assert_eq!(d["clat_ns"], d["lat_ns"]);
            // fio's bw is io_bytes over runtime: true to the ms rounding.
            let runtime_ms = d["runtime"].as_f64().unwrap();
            let fio_bw = m.io_bytes as f64 * 1000.0 / runtime_ms;
            assert!((fio_bw / bw_bytes as f64 - 1.0).abs() < 0.5 / runtime_ms + 1e-9);
            // The median repetition: as many measured ones above as below
            // (the slower middle one of an even number).
            let bws = c.samples(|m| m.bw_bytes_per_s);
            let below = bws.iter().filter(|&&b| b < m.bw_bytes_per_s).count();
            let above = bws.iter().filter(|&&b| b > m.bw_bytes_per_s).count();
            assert_eq!(above, bws.len() / 2, "{}", jobname(c));
            assert_eq!(below, (bws.len() - 1) / 2, "{}", jobname(c));
        }
    }

    #[test]
    fn representative_repetition() {
        let bw = |b: f64| Measurement {
            bw_bytes_per_s: b,
            ..Measurement::default()
        };
        let c = case("direct", "read", vec![bw(1.0), bw(9.0), bw(5.0)]);
        assert_eq!(representative(&c).unwrap().bw_bytes_per_s, 5.0);
        let c = case("direct", "read", vec![bw(4.0), bw(1.0), bw(3.0), bw(2.0)]);
        assert_eq!(representative(&c).unwrap().bw_bytes_per_s, 2.0);
        // Warm-ups never, cut repetitions only when nothing else.
        let warm = Measurement {
            warmup: true,
            ..bw(100.0)
        };
        let cut = Measurement {
            interrupted: true,
            ..bw(50.0)
        };
        let c = case("direct", "read", vec![warm.clone(), bw(7.0), cut.clone()]);
        assert_eq!(representative(&c).unwrap().bw_bytes_per_s, 7.0);
        let c = case("direct", "read", vec![warm.clone(), cut]);
        assert_eq!(representative(&c).unwrap().bw_bytes_per_s, 50.0);
        assert!(representative(&case("direct", "read", vec![warm])).is_none());
        assert!(representative(&case("direct", "read", vec![])).is_none());
    }

    #[test]
    fn cases_that_measured_nothing_are_left_out() {
        let doc = parsed(&odd_run());
        let names: Vec<&str> = jobs(&doc)
            .iter()
            .map(|j| j["jobname"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "direct randread 4k Q32T1",
                "uring randrw 4k Q32T1 70% read",
                "uring-sqpoll randwrite 4k Q32T4 span 1 GiB",
                "mmap copy 4k Q32T1",
                "ucache read 4k Q32T1",
                "null randread 4k Q32T1",
            ]
        );
        for (i, j) in jobs(&doc).iter().enumerate() {
            assert_eq!(j["groupid"], i as u64);
        }
        // No case at all: a document with no jobs.
        let doc = parsed(&run(vec![]));
        assert_eq!(doc["jobs"], serde_json::json!([]));
        assert!(doc.get("disk_util").is_none());
    }

    #[test]
    fn mixed_directions_keep_their_bytes_and_lose_latency() {
        let doc = parsed(&odd_run());
        let j = job_named(&doc, "uring randrw 4k Q32T1 70% read");
        assert_eq!(j["job options"]["rw"], "randrw");
        assert_eq!(j["job options"]["rwmixread"], "70");
        assert!(j["job options"].get("lat_percentiles").is_none());
        for (dir, ios) in [("read", 700u64), ("write", 300)] {
            let d = &j[dir];
            assert_eq!(d["total_ios"], ios);
            assert_eq!(d["io_bytes"], ios * 4096);
            assert_eq!(d["bw_bytes"], ios * 4096 * 10);
            assert_eq!(d["iops"], ios as f64 * 10.0);
            assert_eq!(d["runtime"], 100);
            // One histogram and one series for both: neither direction's.
            for k in ["lat_ns", "clat_ns", "bw_min", "iops_stddev"] {
                assert!(d.get(k).is_none(), "{dir}.{k}");
            }
        }
        // A copy reads and writes too.
        let j = job_named(&doc, "mmap copy 4k Q32T1");
        assert_eq!(j["read"]["io_bytes"], 1 << 20);
        assert_eq!(j["write"]["io_bytes"], 1 << 20);
        assert!(j["read"].get("lat_ns").is_none() && j["write"].get("lat_ns").is_none());
        assert_eq!(j["job options"]["end_fsync"], "1");
    }

    #[test]
    fn one_direction_gets_the_latency_and_the_samples() {
        let doc = parsed(&odd_run());
        let j = job_named(&doc, "direct randread 4k Q32T1");
        let d = &j["read"];
        assert_eq!(d["lat_ns"]["N"], 30_000);
        assert_eq!(d["lat_ns"]["mean"], 95_000.5);
        assert_eq!(d["lat_ns"]["percentile"]["99.900000"], 900_000);
        assert_eq!(j["job options"]["lat_percentiles"], "1");
        // Two intervals of 100 ms: 14,000 and 16,000 requests of 4 KiB.
        assert_eq!(d["iops_samples"], 2);
        assert_eq!(d["iops_min"], 140_000);
        assert_eq!(d["iops_max"], 160_000);
        assert_eq!(d["iops_mean"], 150_000.0);
        let sd = (2.0f64 * 10_000.0f64.powi(2)).sqrt(); // sample stddev of the two
        assert!((d["iops_stddev"].as_f64().unwrap() - sd).abs() < 1e-6);
        assert_eq!(d["bw_min"], 560_000);
        assert_eq!(d["bw_max"], 640_000);
        assert_eq!(d["bw_samples"], 2);
        assert_eq!(d["bw_agg"], 100.0);
        // CPU over the 200 ms: 10 ms user, 40 ms system.
        assert_eq!(j["usr_cpu"], 5.0);
        assert_eq!(j["sys_cpu"], 20.0);
        assert_eq!(j["ctx"], 307);
        assert_eq!(j["majf"], 1);
        assert_eq!(j["minf"], 12);
        // The write-only case: latency on the write side, zeros on the read.
        let j = job_named(&doc, "uring-sqpoll randwrite 4k Q32T4 span 1 GiB");
        assert_eq!(j["write"]["lat_ns"]["N"], 1000);
        assert_eq!(j["read"]["lat_ns"]["N"], 0);
        assert_eq!(j["read"]["lat_ns"]["max"], 0);
        assert_eq!(j["read"]["lat_ns"]["stddev"], 0.0);
        assert!(j["read"]["lat_ns"].get("percentile").is_none());
        // No series: no samples.
        assert!(j["write"].get("bw_samples").is_none());
        assert_eq!(j["read"]["bw_samples"], 0);
    }

    #[test]
    fn latency_spread_and_bins_as_fio_writes_them() {
        let fio: Value = serde_json::from_str(FIO[0]).unwrap();
        let doc = parsed(&odd_run());
        let j = job_named(&doc, "direct randread 4k Q32T1");
        // fio's stddev is the sample one: 60 µs over 30,000 requests.
        let sd = 60_000.0 * (30_000.0f64 / 29_999.0).sqrt();
        for lat in ["lat_ns", "clat_ns"] {
            let got = j["read"][lat]["stddev"].as_f64().unwrap();
            assert!((got - sd).abs() < 1e-6, "{lat}: {got}");
        }
        // Every bin fio writes, in fio's order, each a float: 15,000
        // requests under 100 µs, 14,700 under 250, 270 from 750 µs, 30 from
        // 1 ms.
        for k in ["latency_ns", "latency_us", "latency_ms"] {
            let keys =
                |v: &Value| -> Vec<String> { v[k].as_object().unwrap().keys().cloned().collect() };
            let ours = keys(j);
            assert_eq!(ours, keys(&fio["jobs"][0]), "{k}");
            assert!(j[k].as_object().unwrap().values().all(Value::is_f64));
        }
        let text = to_json(&odd_run()).unwrap();
        assert!(text.contains("\"latency_us\": {\n        \"2\": 0.0,\n        \"4\": 0.0,"));
        assert_eq!(j["latency_us"]["100"], 50.0);
        assert_eq!(j["latency_us"]["250"], 49.0);
        assert_eq!(j["latency_us"]["1000"], 0.9);
        assert_eq!(j["latency_ms"]["2"], 0.1);
        let total: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|k| j[*k].as_object().unwrap().values())
            .map(|v| v.as_f64().unwrap())
            .sum();
        assert!((total - 100.0).abs() < 1e-9, "{total}");
        assert_eq!(j["latency_ms"][">=2000"], 0.0);
        // The bins are the job's, reads and writes together as in fio: a
        // mixed job has them though neither direction has a latency.
        let j = job_named(&doc, "uring randrw 4k Q32T1 70% read");
        assert!(j["read"].get("lat_ns").is_none());
        assert_eq!(j["latency_us"]["100"], 50.0);
        assert_eq!(j["latency_ms"]["2"], 0.1);
        // A bin with requests in it is at least 0.01%, as fio writes it;
        // one request: the whole distribution, no sample deviation.
        let mut m = rep((4096 * 100_000, 100_000), (0, 0), 1_000_000_000);
        m.lat_ns.bins = Some(bins(&[("50us", 99_999), (">=2000ms", 1)]));
        let mut one = rep((4096, 1), (0, 0), 1000);
        one.lat_ns.bins = Some(bins(&[("4ms", 1)]));
        let doc = parsed(&run(vec![
            case("direct", "randread", vec![m]),
            case("direct", "read", vec![one]),
        ]));
        assert_eq!(doc["jobs"][0]["latency_ms"][">=2000"], 0.01);
        assert_eq!(doc["jobs"][0]["latency_us"]["50"], 99.999);
        assert_eq!(doc["jobs"][1]["latency_ms"]["4"], 100.0);
        assert_eq!(doc["jobs"][1]["read"]["lat_ns"]["stddev"], 0.0);
        // Bins with nothing in them say nothing.
        let mut m = rep((4096, 1), (0, 0), 1000);
        m.lat_ns.bins = Some(LatencyBins::default());
        let doc = parsed(&run(vec![case("direct", "randread", vec![m])]));
        assert!(doc["jobs"][0].get("latency_ns").is_none());
        assert_eq!(sample_stddev(f64::NAN, 5), 0.0);
        assert_eq!(sample_stddev(3.0, 0), 3.0);
    }

    /// What fio-plot 1.1.21 reads of every job it draws
    /// (fio_plot/fiolib/jsonparsing_support.py, get_json_mapping), for the
    /// direction the pattern moves data in, with fio's types.
    #[test]
    fn fio_plot_finds_every_key_it_reads() {
        let doc = parsed(&odd_run());
        let mut drawn = 0;
        for j in jobs(&doc) {
            let name = j["jobname"].as_str().unwrap();
            let o = &j["job options"];
            let mode = match o["rw"].as_str().unwrap() {
                "read" | "randread" => "read",
                "write" | "randwrite" => "write",
                // randrw: neither direction has a latency (docs); copy: no
                // fio pattern.
                _ => continue,
            };
            if name.starts_with("ucache") {
                continue; // recorded before stddev and bins
            }
            for k in ["iodepth", "numjobs", "bs", "rw"] {
                assert!(o[k].is_string(), "{name}: {k}");
            }
            let d = &j[mode];
            assert!(d["bw"].is_u64(), "{name}");
            assert!(d["iops"].is_f64(), "{name}");
            assert!(d["lat_ns"]["mean"].is_f64(), "{name}");
            assert!(d["lat_ns"]["stddev"].is_f64(), "{name}");
            for k in ["latency_ms", "latency_us", "latency_ns"] {
                assert!(j[k].is_object(), "{name}: {k}");
            }
            assert!(j["usr_cpu"].is_f64() && j["sys_cpu"].is_f64(), "{name}");
            drawn += 1;
        }
        assert_eq!(drawn, 3, "direct and null randread, uring-sqpoll randwrite");
    }

    #[test]
    fn a_last_interval_cut_short_is_no_sample() {
        let mut m = rep((4096 * 3000, 3000), (0, 0), 200_010_000);
        m.series = Some(Series::from_counts(
            100_000_000,
            10_000,
            &[4096 * 1000, 4096 * 1000, 4096 * 1000],
            &[1000, 1000, 1000],
        ));
        let s = samples(&m, 0).unwrap();
        assert_eq!(
            (s.iops_samples, s.iops_max, s.iops_stddev),
            (2, 10_000, 0.0)
        );
        // Unless it is the whole repetition.
        m.series = Some(Series::from_counts(100_000_000, 10_000, &[4096], &[1]));
        let s = samples(&m, 0).unwrap();
        assert_eq!((s.iops_samples, s.iops_min), (1, 100_000));
        assert_eq!(s.bw_agg, 0.0);
    }

    #[test]
    fn results_iopath_lacks_a_figure_for() {
        let doc = parsed(&odd_run());
        // Schema 2: no request count, standard deviation or bins; no CPU
        // recorded.
        let j = job_named(&doc, "ucache read 4k Q32T1");
        assert!(j["read"]["lat_ns"].get("N").is_none());
        assert_eq!(j["read"]["lat_ns"]["max"], 1_200_000);
        for lat in ["lat_ns", "clat_ns"] {
            assert!(j["read"][lat].get("stddev").is_none(), "{lat}");
            assert!(j["write"][lat].get("stddev").is_none(), "{lat}");
        }
        for k in ["latency_ns", "latency_us", "latency_ms"] {
            assert!(j.get(k).is_none(), "{k}");
        }
        for k in ["usr_cpu", "sys_cpu", "ctx", "majf", "minf"] {
            assert!(j.get(k).is_none(), "{k}");
        }
        // No fio engine does what ucache does.
        assert!(j["job options"].get("ioengine").is_none());
        assert!(j["job options"].get("direct").is_none());
        // A zero duration divides nothing.
        let j = job_named(&doc, "null randread 4k Q32T1");
        assert_eq!(j["read"]["bw_bytes"], 0);
        assert_eq!(j["read"]["iops"], 0.0);
        assert_eq!(j["read"]["runtime"], 0);
        assert_eq!(j["job_runtime"], 0);
        assert_eq!(j["usr_cpu"], 0.0);
        // A latency with nothing behind it is left out, not zero.
        let mut m = rep((4096, 1), (0, 0), 1000);
        m.lat_ns = Latency::default();
        let doc = parsed(&run(vec![case("direct", "randread", vec![m])]));
        assert!(doc["jobs"][0]["read"].get("lat_ns").is_none());
        assert_eq!(doc["jobs"][0]["read"]["total_ios"], 1);
    }

    #[test]
    fn job_options_say_what_ran() {
        let doc = parsed(&fixture());
        let o = &job_named(&doc, "uring randread 4k Q32T1")["job options"];
        assert_eq!(o["name"], "uring randread 4k Q32T1");
        assert_eq!(o["rw"], "randread");
        assert_eq!(o["bs"], "4k");
        assert_eq!(o["iodepth"], "32");
        assert_eq!(o["numjobs"], "1");
        assert_eq!(o["ioengine"], "io_uring");
        assert_eq!(o["direct"], "1");
        assert_eq!(o["fixedbufs"], "1");
        assert_eq!(o["registerfiles"], "1");
        assert_eq!(o["invalidate"], "1");
        assert!(o.get("end_fsync").is_none(), "reads sync nothing");
        // A synchronous method at the depth it ran at, not the one asked.
        let o = &job_named(&doc, "buffered randread 4k Q1T1")["job options"];
        assert_eq!(
            (&o["iodepth"], &o["ioengine"], &o["direct"]),
            (&"1".into(), &"psync".into(), &"0".into())
        );
        let o = &job_named(&doc, "aio write 1M Q8T1")["job options"];
        assert_eq!(
            (&o["ioengine"], &o["bs"], &o["end_fsync"]),
            (&"libaio".into(), &"1M".into(), &"1".into())
        );
        assert_eq!(o["lat_percentiles"], "1");
        assert_eq!(doc["global options"]["size"], "32M");
        assert_eq!(doc["global options"]["runtime"], "100ms");
        assert_eq!(
            doc["global options"]["filename"],
            "/tmp/fx5/iopath-15359-956e543a.dat"
        );

        let doc = parsed(&odd_run());
        let o = &job_named(&doc, "uring-sqpoll randwrite 4k Q32T4 span 1 GiB")["job options"];
        assert_eq!(o["sqthread_poll"], "1");
        assert_eq!(o["numjobs"], "4");
        assert_eq!(o["group_reporting"], "1");
        assert_eq!(o["size"], "1G");
        assert_eq!(o["fsync"], "1");
        assert_eq!(o["invalidate"], "0", "the case's own cache state");
        let o = &job_named(&doc, "null randread 4k Q32T1")["job options"];
        assert_eq!(o["ioengine"], "null");
        assert!(o.get("direct").is_none());
        assert_eq!(
            job_named(&doc, "mmap copy 4k Q32T1")["job options"]["ioengine"],
            "mmap"
        );
    }

    #[test]
    fn disks_and_options_from_what_the_run_knows() {
        let mut r = v3();
        assert_eq!(parsed(&r)["disk_util"][0]["name"], "vda");
        r.system.device_stack.as_mut().unwrap().leaves = vec!["nvme0n1".into(), "nvme1n1".into()];
        assert_eq!(parsed(&r)["disk_util"][0]["name"], "nvme0n1+nvme1n1");
        // No counters in any repetition: no disk_util.
        for c in &mut r.cases {
            for m in &mut c.repetitions {
                m.device = None;
            }
        }
        assert!(parsed(&r).get("disk_util").is_none());
        // No target, a whole pass: no global options at all.
        r.target = None;
        r.config.whole_pass = true;
        assert!(parsed(&r).get("global options").is_none());
        assert_eq!(fio_time(2_000_000_000), "2");
        assert_eq!(fio_time(150_000_000), "150ms");
        assert_eq!(fio_time(1_500_400), "1500us");
        assert_eq!(fio_size(4096), "4k");
        assert_eq!(fio_size(1 << 30), "1G");
        assert_eq!(fio_size(3 << 19), "1536k");
        assert_eq!(fio_size(512), "512");
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            parse_rfc3339("2026-11-21T01:57:47Z"),
            Some(1_795_226_267_000)
        );
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2000-02-29T00:00:00.25Z"),
            Some(951_782_400_250)
        );
        assert_eq!(
            parse_rfc3339("2026-11-21T02:57:47+01:00"),
            Some(1_795_226_267_000)
        );
        for bad in [
            "",
            "2026-11-21",
            "2026-13-21T01:57:47Z",
            "2026-11-21T01:57:47",
            "2026-11-21T01:57:47.Z",
            "x026-11-21T01:57:47Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
        assert_eq!(ctime(1_700_000_000), "Tue Nov 14 22:13:20 2023");
        // finished_at first, started_at for a run that never finished,
        // nothing from a time that is not one.
        let mut r = run(vec![]);
        r.finished_at = None;
        assert_eq!(parsed(&r)["timestamp"], 1_795_226_262);
        r.started_at = "yesterday".into();
        let doc = parsed(&r);
        for k in ["timestamp", "timestamp_ms", "time"] {
            assert!(doc.get(k).is_none(), "{k}");
        }
    }

    #[test]
    fn extreme_figures_do_not_panic() {
        let mut m = rep((u64::MAX, u64::MAX), (0, 0), 1);
        m.cpu.ctx_vol = u64::MAX;
        m.device = Some(crate::metrics::blockdev::DiskCounters {
            reads: u64::MAX,
            ..Default::default()
        });
        let mut r = run(vec![case("direct", "read", vec![m.clone(), m])]);
        r.system.device_stack = None;
        let doc = parsed(&r);
        let d = &doc["jobs"][0]["read"];
        assert_eq!(d["bw_bytes"], u64::MAX);
        assert_eq!(d["runtime"], 1);
        assert_eq!(doc["jobs"][0]["ctx"], u64::MAX);
        // No device stack: the device's own name.
        assert_eq!(doc["disk_util"][0]["name"], "vda");
        assert_eq!(doc["disk_util"][0]["read_ios"], u64::MAX);
    }

    #[test]
    fn render_is_the_same_document() {
        let r = odd_run();
        assert_eq!(render(&r), parsed(&r));
    }
}

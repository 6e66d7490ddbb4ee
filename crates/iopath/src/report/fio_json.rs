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

use crate::result::{CaseResult, Cpu, Latency, Measurement, RunResult};

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

/// fio's latency statistics (`clat_ns`, `lat_ns`); no `stddev`: iopath
/// does not record one.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
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
    }
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
        // What fio writes for a direction with no I/O.
        let none = LatStats {
            n: Some(0),
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
        n: (l.count > 0).then_some(l.count),
        percentile: PERCENTILES
            .iter()
            .map(|(k, f)| (k.to_string(), f(l)))
            .collect(),
    })
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


//! Every rank's repetition as one measurement, as IOR reckons it.
//!
//! - **Aggregate**: all ranks' bytes and requests over the common interval,
//!   from the first rank's start to the last rank's end (times from the
//!   barrier's release, each on its rank's own clock). Raw counts are
//!   summed; no rate is averaged.
//! - **Stonewall**: the bytes all ranks had done when the first rank
//!   finished, over the time from the first start to then: what the ranks
//!   did together while all were running (stragglers excluded). A rank's
//!   bytes by a time inside its repetition come from its over-time series
//!   (`--interval`), linear within an interval; without one, linear over
//!   the repetition.
//! - **Latency** from the merged histograms (every request of every rank).
//! - **Device counters** are system-wide: every rank of one host counts the
//!   same devices, so a host's are counted once (the largest any of its
//!   ranks saw), and hosts are summed. Likewise the page cache of one shared
//!   file, and the system's cached and dirty memory.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::Verified;
use crate::result::mpi::{HostRow, HostSummary, MpiCase, MpiRep, RankRow, RankSummary};
use crate::result::{median, Latency, Measurement, ProcessIo, Series};
use crate::system::metrics::blockdev::DiskCounters;

/// One rank's repetition, as it travels to the others.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ran {
    /// The case this rank ran (its arm and pattern, as the tables name
    /// it): every rank's must be the same, or the ranks are out of step.
    #[serde(default)]
    pub case: String,
    /// Its notes on the repetition (cache state, fallbacks).
    #[serde(default)]
    pub notes: Vec<String>,
    pub m: Measurement,
    /// Its latency histogram's recorded values: (value, count).
    pub hist: Vec<(u64, u64)>,
    /// First worker start and last end, ns from the barrier's release.
    pub start_ns: u64,
    pub end_ns: u64,
    /// `--verify`: bytes checked, ns spent.
    pub verified: (u64, u64),
    /// The raw counters of the disks under its file, before and after.
    #[serde(default)]
    pub disk: Option<RawDisk>,
}

/// A rank's raw device counters around its repetition: the ranks of one
/// host that count the same disks are counted together, from the first
/// rank's `before` to the last rank's `after` (each rank's own delta
/// misses what the others did outside its interval).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawDisk {
    /// The disks counted (their names, joined).
    pub disks: String,
    pub before: DiskCounters,
    pub after: DiskCounters,
}

impl Ran {
    pub fn new(
        m: Measurement,
        hist: &Histogram<u64>,
        start_ns: u64,
        end_ns: u64,
        verified: (u64, u64),
    ) -> Ran {
        Ran {
            case: String::new(),
            notes: Vec::new(),
            m,
            hist: hist
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
            start_ns,
            end_ns: end_ns.max(start_ns + 1),
            verified,
            disk: None,
        }
    }

    /// Bytes this rank had done at `t` (ns from its barrier's release).
    pub fn bytes_by(&self, t: u64) -> u64 {
        let total = self.m.io_bytes;
        if t >= self.end_ns {
            return total;
        }
        if t <= self.start_ns {
            return 0;
        }
        let at = (t - self.start_ns) as f64;
        let Some(s) = self
            .m
            .series
            .as_ref()
            .filter(|s| !s.bw_bytes_per_s.is_empty())
        else {
            let whole = (self.end_ns - self.start_ns) as f64;
            return ((total as f64) * at / whole).round() as u64;
        };
        let n = s.bw_bytes_per_s.len();
        let mut done = 0.0;
        let mut from = 0.0;
        for (i, bw) in s.bw_bytes_per_s.iter().enumerate() {
            let len = if i + 1 == n {
                s.last_interval_ns
            } else {
                s.interval_ns
            }
            .max(1) as f64;
            let bytes = bw * len / 1e9;
            if at < from + len {
                done += bytes * (at - from) / len;
                break;
            }
            done += bytes;
            from += len;
        }
        (done.round() as u64).min(total)
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::<u64>::new_with_bounds(1, super::worker::MAX_LAT_NS, 3).expect("valid bounds")
}

/// Sum of counters, field by field.
fn add_disk(a: Option<DiskCounters>, b: Option<DiskCounters>) -> Option<DiskCounters> {
    match (a, b) {
        (Some(a), Some(b)) => Some(DiskCounters {
            reads: a.reads + b.reads,
            read_bytes: a.read_bytes + b.read_bytes,
            writes: a.writes + b.writes,
            write_bytes: a.write_bytes + b.write_bytes,
            time: None,
        }),
        (a, b) => a.or(b),
    }
}

/// Smallest of counters, field by field.
fn min_disk(a: DiskCounters, b: DiskCounters) -> DiskCounters {
    DiskCounters {
        reads: a.reads.min(b.reads),
        read_bytes: a.read_bytes.min(b.read_bytes),
        writes: a.writes.min(b.writes),
        write_bytes: a.write_bytes.min(b.write_bytes),
        time: None,
    }
}

/// Largest of counters, field by field (one host's ranks).
fn max_disk(a: Option<DiskCounters>, b: Option<DiskCounters>) -> Option<DiskCounters> {
    match (a, b) {
        (Some(a), Some(b)) => Some(DiskCounters {
            reads: a.reads.max(b.reads),
            read_bytes: a.read_bytes.max(b.read_bytes),
            writes: a.writes.max(b.writes),
            write_bytes: a.write_bytes.max(b.write_bytes),
            time: None,
        }),
        (a, b) => a.or(b),
    }
}

/// The ranks' parts (rank, host, part) as one measurement, its merged
/// histogram, the repetition's row for the result's `mpi` object (case,
/// seq and warm-up left for the caller), and what `--verify` checked.
/// `shared_file`: the ranks share one file (its cached pages are one
/// host's, not one per rank).
pub fn aggregate(
    parts: &[(u32, &str, &Ran)],
    shared_file: bool,
) -> (Measurement, Histogram<u64>, MpiRep, Verified) {
    let mut hist = histogram();
    let mut verified = Verified::default();
    let Some(&(_, _, first)) = parts.first() else {
        return (Measurement::default(), hist, MpiRep::default(), verified);
    };
    let start = parts.iter().map(|p| p.2.start_ns).min().unwrap_or(0);
    let end = parts.iter().map(|p| p.2.end_ns).max().unwrap_or(1);
    let common = end.saturating_sub(start).max(1);
    let mut m = first.m.clone();
    let sum = |f: &dyn Fn(&Measurement) -> u64| sum_of(parts, f);
    m.io_bytes = sum(&|x| x.io_bytes);
    m.ios = sum(&|x| x.ios);
    m.read_ios = sum(&|x| x.read_ios);
    m.write_ios = sum(&|x| x.write_ios);
    m.read_bytes = sum(&|x| x.read_bytes);
    m.write_bytes = sum(&|x| x.write_bytes);
    m.duration_ns = common;
    let secs = common as f64 / 1e9;
    m.bw_bytes_per_s = m.io_bytes as f64 / secs;
    m.iops = m.ios as f64 / secs;
    for (_, _, p) in parts {
        for &(v, c) in &p.hist {
            let _ = hist.record_n(v.max(1), c);
        }
        verified.bytes += p.verified.0;
        verified.ns += p.verified.1;
    }
    m.lat_ns = Latency::from_hist(&hist);
    let hosts = host_books(parts);
    m.device = hosts
        .values()
        .fold(None, |d, h| add_disk(d, h.device))
        .filter(|_| parts.iter().any(|p| p.2.m.device.is_some()));
    m.device_fraction = m.device.map(|d| {
        if m.read_bytes > 0 {
            d.read_bytes as f64 / m.read_bytes as f64
        } else {
            d.write_bytes as f64 / m.write_bytes.max(1) as f64
        }
    });
    sum_cpu(&mut m, parts, common);
    sum_memory(&mut m, parts, &hosts, shared_file);
    m.interrupted = parts.iter().any(|p| p.2.m.interrupted);
    m.capped = parts
        .iter()
        .filter_map(|p| p.2.m.capped)
        .min_by(|a, b| a.fraction_done.total_cmp(&b.fraction_done));
    m.series = series(parts, start, common);
    let row = mpi_row(parts, &m, hosts, (start, end));
    (m, hist, row, verified)
}

/// The sum of `f` over the ranks' measurements.
fn sum_of(parts: &[(u32, &str, &Ran)], f: &dyn Fn(&Measurement) -> u64) -> u64 {
    parts.iter().map(|p| f(&p.2.m)).sum()
}

/// Per host: what every rank there sees alike, counted once. A host whose
/// every rank sent raw counters: per set of disks, the last rank's after
/// minus the first rank's before.
fn host_books<'p>(parts: &[(u32, &'p str, &'p Ran)]) -> BTreeMap<&'p str, HostAcc<'p>> {
    let mut hosts: BTreeMap<&str, HostAcc> = BTreeMap::new();
    for &(r, h, p) in parts {
        let acc = hosts.entry(h).or_insert_with(|| HostAcc {
            start: u64::MAX,
            ..HostAcc::default()
        });
        acc.ranks.push(r);
        acc.io_bytes += p.m.io_bytes;
        acc.start = acc.start.min(p.start_ns);
        acc.end = acc.end.max(p.end_ns);
        acc.device = max_disk(acc.device, p.m.device);
        if let Some(d) = &p.disk {
            let e = acc
                .raw
                .entry(d.disks.as_str())
                .or_insert((d.before, d.after));
            e.0 = min_disk(e.0, d.before);
            e.1 = max_disk(Some(e.1), Some(d.after)).unwrap_or(d.after);
        }
        acc.cached_delta = acc.cached_delta.max(p.m.memory.cached_delta_bytes);
        acc.dirty = acc.dirty.max(p.m.memory.dirty_after_bytes);
        acc.cache_max = acc.cache_max.max(p.m.memory.page_cache_bytes);
        acc.cache_before_max = acc.cache_before_max.max(p.m.memory.page_cache_before_bytes);
    }
    let ranks_of = |h: &str| parts.iter().filter(|p| p.1 == h).count();
    for (h, acc) in hosts.iter_mut() {
        let all_raw = parts
            .iter()
            .filter(|p| p.1 == *h && p.2.disk.is_some())
            .count();
        if all_raw == ranks_of(h) && !acc.raw.is_empty() {
            acc.device = acc
                .raw
                .values()
                .fold(None, |d, (b, a)| add_disk(d, Some(a.delta(b))));
        }
    }
    hosts
}

/// The ranks' CPU summed, and their I/O accounting (each rank is a
/// process of its own: its accounting is its own).
fn sum_cpu(m: &mut Measurement, parts: &[(u32, &str, &Ran)], common: u64) {
    let sum = |f: &dyn Fn(&Measurement) -> u64| sum_of(parts, f);
    let c = &mut m.cpu;
    c.cpu_ns = sum(&|x| x.cpu.cpu_ns);
    c.user_ns = sum(&|x| x.cpu.user_ns);
    c.sys_ns = sum(&|x| x.cpu.sys_ns);
    c.sqpoll_ns = sum(&|x| x.cpu.sqpoll_ns);
    c.ctx_vol = sum(&|x| x.cpu.ctx_vol);
    c.ctx_invol = sum(&|x| x.cpu.ctx_invol);
    c.minflt = sum(&|x| x.cpu.minflt);
    c.majflt = sum(&|x| x.cpu.majflt);
    c.run_delay_ns = sum(&|x| x.cpu.run_delay_ns);
    let busy = (c.cpu_ns + c.sqpoll_ns) as f64;
    c.ns_per_io = busy / m.ios.max(1) as f64;
    c.utilization = busy / common as f64;
    c.own_ns_per_io = Some(c.ns_per_io);
    // The ranks' costs per I/O and deferred work are not combined (each
    // rank's are in its own result).
    m.process_io = parts
        .iter()
        .map(|p| p.2.m.process_io)
        .collect::<Option<Vec<_>>>()
        .map(|all| all.iter().fold(ProcessIo::default(), |a, b| a.plus(b)));
}

/// The ranks' memory: their own summed; the page cache per host when they
/// share one file (its cached pages are one host's, not one per rank).
fn sum_memory(
    m: &mut Measurement,
    parts: &[(u32, &str, &Ran)],
    hosts: &BTreeMap<&str, HostAcc<'_>>,
    shared_file: bool,
) {
    let sum = |f: &dyn Fn(&Measurement) -> u64| sum_of(parts, f);
    let mem = &mut m.memory;
    mem.buffers_bytes = sum(&|x| x.memory.buffers_bytes);
    mem.rss_peak_bytes = sum(&|x| x.memory.rss_peak_bytes);
    mem.locked_bytes = sum(&|x| x.memory.locked_bytes);
    if shared_file {
        mem.page_cache_bytes = hosts.values().map(|h| h.cache_max).sum();
        mem.page_cache_before_bytes = hosts.values().map(|h| h.cache_before_max).sum();
    } else {
        mem.page_cache_bytes = sum(&|x| x.memory.page_cache_bytes);
        mem.page_cache_before_bytes = sum(&|x| x.memory.page_cache_before_bytes);
    }
    mem.total_bytes = mem.page_cache_bytes + mem.buffers_bytes;
    mem.cached_delta_bytes = hosts.values().map(|h| h.cached_delta).sum();
    mem.dirty_after_bytes = hosts.values().map(|h| h.dirty).sum();
}

/// The repetition's row for the result's `mpi` object: the whole, the
/// stonewall (when the first rank finished), each rank and each host.
fn mpi_row(
    parts: &[(u32, &str, &Ran)],
    m: &Measurement,
    hosts: BTreeMap<&str, HostAcc<'_>>,
    (start, end): (u64, u64),
) -> MpiRep {
    let first_end = parts.iter().map(|p| p.2.end_ns).min().unwrap_or(end);
    let stonewall_bytes: u64 = parts.iter().map(|p| p.2.bytes_by(first_end)).sum();
    let stonewall_ns = first_end.saturating_sub(start).max(1);
    MpiRep {
        common_ns: m.duration_ns,
        io_bytes: m.io_bytes,
        ios: m.ios,
        bw_bytes_per_s: m.bw_bytes_per_s,
        stonewall_ns,
        stonewall_bytes,
        stonewall_bw_bytes_per_s: stonewall_bytes as f64 / (stonewall_ns as f64 / 1e9),
        interrupted: m.interrupted,
        ranks: parts
            .iter()
            .map(|&(rank, host, p)| RankRow {
                rank,
                host: host.to_string(),
                case: p.case.clone(),
                notes: p.notes.clone(),
                io_bytes: p.m.io_bytes,
                ios: p.m.ios,
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                bw_bytes_per_s: p.m.io_bytes as f64 / ((p.end_ns - p.start_ns).max(1) as f64 / 1e9),
                lat_p50_ns: p.m.lat_ns.p50,
                lat_p99_ns: p.m.lat_ns.p99,
                cpu_ns: p.m.cpu.cpu_ns,
                device: p.m.device,
            })
            .collect(),
        hosts: hosts
            .into_iter()
            .map(|(h, a)| HostRow {
                host: h.to_string(),
                ranks: a.ranks,
                io_bytes: a.io_bytes,
                common_ns: a.end.saturating_sub(a.start).max(1),
                bw_bytes_per_s: a.io_bytes as f64
                    / (a.end.saturating_sub(a.start).max(1) as f64 / 1e9),
                device: a.device,
            })
            .collect(),
        ..MpiRep::default()
    }
}

#[derive(Debug, Default)]
struct HostAcc<'a> {
    ranks: Vec<u32>,
    /// Its ranks' first start and last end.
    start: u64,
    end: u64,
    /// Per set of disks: the earliest before, the latest after.
    raw: BTreeMap<&'a str, (DiskCounters, DiskCounters)>,
    io_bytes: u64,
    device: Option<DiskCounters>,
    cached_delta: i64,
    dirty: u64,
    cache_max: u64,
    cache_before_max: u64,
}

/// The ranks' series on the common interval: each rank's intervals
/// moved by its start and added into the common interval's bins.
fn series(parts: &[(u32, &str, &Ran)], start: u64, common: u64) -> Option<Series> {
    let interval = parts
        .iter()
        .find_map(|p| p.2.m.series.as_ref().map(|s| s.interval_ns))?
        .max(1);
    let len = common.div_ceil(interval).max(1) as usize;
    let (mut bytes, mut ios) = (vec![0u64; len], vec![0u64; len]);
    for (_, _, p) in parts {
        let Some(s) = &p.m.series else { continue };
        let n = s.bw_bytes_per_s.len();
        for (i, (bw, iops)) in s.bw_bytes_per_s.iter().zip(&s.iops).enumerate() {
            let l = if i + 1 == n {
                s.last_interval_ns
            } else {
                s.interval_ns
            }
            .max(1) as f64
                / 1e9;
            let at = (p.start_ns - start + i as u64 * s.interval_ns) / interval;
            let k = (at as usize).min(len - 1);
            bytes[k] += (bw * l).round() as u64;
            ios[k] += (iops * l).round() as u64;
        }
    }
    let last = common
        .saturating_sub(interval * (len as u64 - 1))
        .clamp(1, interval);
    Some(Series::from_counts(interval, last, &bytes, &ios))
}

/// Per case (in the order first run), over its measured repetitions: each
/// rank's median rate and end, the slowest rank, the spread, per host.
pub fn case_summaries(reps: &[MpiRep]) -> Vec<MpiCase> {
    let mut order: Vec<&str> = Vec::new();
    // Measured repetitions: no warm-ups, none cut short by Ctrl-C.
    let counted = |r: &&MpiRep| !r.warmup && !r.interrupted;
    for r in reps.iter().filter(counted) {
        if !order.contains(&r.case.as_str()) {
            order.push(&r.case);
        }
    }
    order
        .into_iter()
        .map(|case| {
            let mine: Vec<&MpiRep> = reps
                .iter()
                .filter(|r| counted(r) && r.case == case)
                .collect();
            case_summary(case, &mine)
        })
        .collect()
}

/// The median of `v`.
fn med(mut v: Vec<f64>) -> f64 {
    median(&mut v)
}

/// One case over its measured repetitions `mine` (at least one).
fn case_summary(case: &str, mine: &[&MpiRep]) -> MpiCase {
    let ranks = rank_summaries(mine);
    let slowest_rank = ranks.iter().max_by_key(|r| r.end_ns).map(|r| r.rank);
    let bws = ranks.iter().map(|r| r.bw_bytes_per_s);
    let (lo, hi) = bws.fold((f64::MAX, 0.0f64), |(lo, hi), b| (lo.min(b), hi.max(b)));
    MpiCase {
        case: case.to_string(),
        measured: mine.len() as u32,
        spread: (lo > 0.0 && hi > 0.0).then(|| hi / lo),
        slowest_rank,
        ranks,
        hosts: host_summaries(mine),
        stonewall_bw_bytes_per_s: Some(med(mine
            .iter()
            .map(|r| r.stonewall_bw_bytes_per_s)
            .collect())),
    }
}

/// Each rank's medians over the repetitions `mine`.
fn rank_summaries(mine: &[&MpiRep]) -> Vec<RankSummary> {
    mine[0]
        .ranks
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let of = |f: &dyn Fn(&RankRow) -> f64| {
                med(mine.iter().filter_map(|r| r.ranks.get(i)).map(f).collect())
            };
            RankSummary {
                rank: row.rank,
                host: row.host.clone(),
                io_bytes: of(&|x| x.io_bytes as f64).round() as u64,
                bw_bytes_per_s: of(&|x| x.bw_bytes_per_s),
                end_ns: of(&|x| x.end_ns as f64).round() as u64,
            }
        })
        .collect()
}

/// Each host's medians over the repetitions `mine`; its device's only when
/// every repetition counted them.
fn host_summaries(mine: &[&MpiRep]) -> Vec<HostSummary> {
    mine[0]
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let rows: Vec<&HostRow> = mine.iter().filter_map(|r| r.hosts.get(i)).collect();
            let dev = |f: &dyn Fn(&DiskCounters) -> u64| {
                rows.iter().all(|r| r.device.is_some()).then(|| {
                    med(rows
                        .iter()
                        .filter_map(|r| r.device.as_ref().map(|d| f(d) as f64))
                        .collect())
                    .round() as u64
                })
            };
            HostSummary {
                host: h.host.clone(),
                ranks: h.ranks.clone(),
                io_bytes: med(rows.iter().map(|r| r.io_bytes as f64).collect()).round() as u64,
                bw_bytes_per_s: med(rows.iter().map(|r| r.bw_bytes_per_s).collect()),
                device_read_bytes: dev(&|d| d.read_bytes),
                device_write_bytes: dev(&|d| d.write_bytes),
            }
        })
        .collect()
}

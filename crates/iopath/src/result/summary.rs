//! A case's summary over its repetitions: field-wise medians of the
//! measurements, and the spread of the figures the tables show.

use super::{
    median, Capped, Costs, Cpu, Deferred, Latency, LatencyBins, LatencySplit, Measurement, Memory,
};
use crate::system::metrics::blockdev::DiskCounters;
use crate::system::metrics::procfs::ProcessIo;

/// The repetitions a summary is the median of.
struct Reps<'a>(&'a [&'a Measurement]);

impl Reps<'_> {
    /// The median of one figure over the repetitions.
    fn med(&self, f: &dyn Fn(&Measurement) -> f64) -> f64 {
        let mut v: Vec<f64> = self.0.iter().map(|m| f(m)).collect();
        median(&mut v)
    }

    /// The same for a count, rounded.
    fn medu(&self, f: &dyn Fn(&Measurement) -> u64) -> u64 {
        self.med(&|m| f(m) as f64).round() as u64
    }

    /// The first repetition, which says which optional figures were
    /// measured.
    fn first(&self) -> &Measurement {
        self.0[0]
    }

    /// Medians of the latencies; the request count and bins are summed
    /// (the bins only when every repetition has them), and the standard
    /// deviation is a median only when every repetition has one.
    fn latency(&self) -> Latency {
        let reps = self.0;
        Latency {
            count: reps.iter().map(|m| m.lat_ns.count).sum(),
            min: self.medu(&|m| m.lat_ns.min),
            mean: self.med(&|m| m.lat_ns.mean),
            p50: self.medu(&|m| m.lat_ns.p50),
            p90: self.medu(&|m| m.lat_ns.p90),
            p99: self.medu(&|m| m.lat_ns.p99),
            p999: self.medu(&|m| m.lat_ns.p999),
            max: self.medu(&|m| m.lat_ns.max),
            stddev: reps
                .iter()
                .all(|m| m.lat_ns.stddev.is_some())
                .then(|| self.med(&|m| m.lat_ns.stddev.unwrap_or(0.0))),
            bins: reps
                .iter()
                .map(|m| m.lat_ns.bins)
                .collect::<Option<Vec<_>>>()
                .map(|all| {
                    all.iter().fold(LatencyBins::default(), |mut sum, b| {
                        sum.add(b);
                        sum
                    })
                }),
        }
    }

    fn device(&self) -> Option<DiskCounters> {
        self.first().device.map(|_| DiskCounters {
            reads: self.medu(&|m| m.device.map_or(0, |d| d.reads)),
            read_bytes: self.medu(&|m| m.device.map_or(0, |d| d.read_bytes)),
            writes: self.medu(&|m| m.device.map_or(0, |d| d.writes)),
            write_bytes: self.medu(&|m| m.device.map_or(0, |d| d.write_bytes)),
            // Times are for a repetition's own disk_util (fio JSON).
            time: None,
        })
    }

    fn process_io(&self) -> Option<ProcessIo> {
        self.first().process_io.map(|_| ProcessIo {
            read_bytes: self.medu(&|m| m.process_io.map_or(0, |p| p.read_bytes)),
            write_bytes: self.medu(&|m| m.process_io.map_or(0, |p| p.write_bytes)),
            read_syscalls: self.medu(&|m| m.process_io.map_or(0, |p| p.read_syscalls)),
            write_syscalls: self.medu(&|m| m.process_io.map_or(0, |p| p.write_syscalls)),
            rchar: self.medu(&|m| m.process_io.map_or(0, |p| p.rchar)),
            wchar: self.medu(&|m| m.process_io.map_or(0, |p| p.wchar)),
        })
    }

    /// The median of an optional figure over the repetitions that have it.
    fn med_some(&self, f: &dyn Fn(&Measurement) -> Option<f64>) -> Option<f64> {
        let mut v: Vec<f64> = self.0.iter().filter_map(|m| f(m)).collect();
        (!v.is_empty()).then(|| median(&mut v))
    }

    fn costs(&self) -> Option<Costs> {
        let c = |f: fn(&Costs) -> f64| self.med(&|m| m.costs.as_ref().map_or(0.0, f));
        let o = |f: fn(&Costs) -> Option<f64>| self.med_some(&|m| m.costs.as_ref().and_then(f));
        self.first().costs.as_ref().map(|_| Costs {
            minflt_per_io: c(|k| k.minflt_per_io),
            majflt_per_io: c(|k| k.majflt_per_io),
            ctx_vol_per_io: c(|k| k.ctx_vol_per_io),
            ctx_invol_per_io: c(|k| k.ctx_invol_per_io),
            rw_calls_per_io: o(|k| k.rw_calls_per_io),
            copied_per_byte: o(|k| k.copied_per_byte),
            own_device_per_byte: o(|k| k.own_device_per_byte),
            other_device_per_byte: o(|k| k.other_device_per_byte),
            deferred_ns_per_io: o(|k| k.deferred_ns_per_io),
        })
    }

    fn deferred(&self) -> Option<Deferred> {
        let d = |f: fn(&Deferred) -> u64| self.medu(&|m| m.deferred.as_ref().map_or(0, f));
        self.first().deferred.map(|_| Deferred {
            kernel_threads_ns: d(|x| x.kernel_threads_ns),
            baseline_ns: d(|x| x.baseline_ns),
            estimate_ns: d(|x| x.estimate_ns),
            baseline_spread_ns: d(|x| x.baseline_spread_ns),
            // Charged where most repetitions were (the median CPU's).
            charged: 2 * self
                .0
                .iter()
                .filter(|m| m.deferred.is_some_and(|x| x.charged))
                .count()
                > self.0.len(),
        })
    }

    /// The repetitions' splits of the first's source pooled (as the
    /// latency's histograms are): a repetition whose tracer fell silent
    /// is left out.
    fn latency_split(&self) -> Option<LatencySplit> {
        let first = self.first().latency_split?;
        let same: Vec<LatencySplit> = self
            .0
            .iter()
            .filter_map(|m| m.latency_split)
            .filter(|s| s.source == first.source)
            .collect();
        LatencySplit::pooled(&same)
    }

    fn cpu(&self) -> Cpu {
        Cpu {
            cpu_ns: self.medu(&|m| m.cpu.cpu_ns),
            user_ns: self.medu(&|m| m.cpu.user_ns),
            sys_ns: self.medu(&|m| m.cpu.sys_ns),
            sqpoll_ns: self.medu(&|m| m.cpu.sqpoll_ns),
            ctx_vol: self.medu(&|m| m.cpu.ctx_vol),
            ctx_invol: self.medu(&|m| m.cpu.ctx_invol),
            minflt: self.medu(&|m| m.cpu.minflt),
            majflt: self.medu(&|m| m.cpu.majflt),
            run_delay_ns: self.medu(&|m| m.cpu.run_delay_ns),
            ns_per_io: self.med(&|m| m.cpu.ns_per_io),
            own_ns_per_io: self.med_some(&|m| m.cpu.own_ns_per_io),
            utilization: self.med(&|m| m.cpu.utilization),
        }
    }

    fn memory(&self) -> Memory {
        Memory {
            page_cache_bytes: self.medu(&|m| m.memory.page_cache_bytes),
            page_cache_before_bytes: self.medu(&|m| m.memory.page_cache_before_bytes),
            buffers_bytes: self.medu(&|m| m.memory.buffers_bytes),
            total_bytes: self.medu(&|m| m.memory.total_bytes),
            rss_peak_bytes: self.medu(&|m| m.memory.rss_peak_bytes),
            locked_bytes: self.medu(&|m| m.memory.locked_bytes),
            cached_delta_bytes: self.med(&|m| m.memory.cached_delta_bytes as f64).round() as i64,
            dirty_after_bytes: self.medu(&|m| m.memory.dirty_after_bytes),
            cgroup_file_bytes: self
                .first()
                .memory
                .cgroup_file_bytes
                .map(|_| self.medu(&|m| m.memory.cgroup_file_bytes.unwrap_or(0))),
        }
    }

    /// The cap, when every repetition was capped: the first one's
    /// timeout, the medians of the rest.
    fn capped(&self) -> Option<Capped> {
        self.0
            .iter()
            .map(|m| m.capped)
            .collect::<Option<Vec<Capped>>>()
            .map(|all| Capped {
                case_timeout_ns: all[0].case_timeout_ns,
                fraction_done: median(&mut all.iter().map(|c| c.fraction_done).collect::<Vec<_>>()),
                extrapolated_ns: median(
                    &mut all
                        .iter()
                        .map(|c| c.extrapolated_ns as f64)
                        .collect::<Vec<_>>(),
                )
                .round() as u64,
                flush_ns: None,
            })
    }
}

impl Measurement {
    /// Field-wise medians over repetitions; the latency's request count
    /// and bins are summed (the bins only when every repetition has them,
    /// and its standard deviation, a median, likewise).
    pub fn median_of(reps: &[&Measurement]) -> Option<Measurement> {
        if reps.is_empty() {
            return None;
        }
        let r = Reps(reps);
        let lat_ns = r.latency();
        Some(Measurement {
            io_bytes: r.medu(&|m| m.io_bytes),
            ios: r.medu(&|m| m.ios),
            read_ios: r.medu(&|m| m.read_ios),
            write_ios: r.medu(&|m| m.write_ios),
            read_bytes: r.medu(&|m| m.read_bytes),
            write_bytes: r.medu(&|m| m.write_bytes),
            duration_ns: r.medu(&|m| m.duration_ns),
            bw_bytes_per_s: r.med(&|m| m.bw_bytes_per_s),
            iops: r.med(&|m| m.iops),
            // Parts beyond the mean are not the case's: withheld.
            latency_split: r.latency_split().map(|s| s.within(lat_ns.mean)),
            lat_ns,
            device: r.device(),
            device_fraction: r
                .first()
                .device_fraction
                .map(|_| r.med(&|m| m.device_fraction.unwrap_or(0.0))),
            process_io: r.process_io(),
            costs: r.costs(),
            deferred: r.deferred(),
            cpu: r.cpu(),
            memory: r.memory(),
            interrupted: reps.iter().any(|m| m.interrupted),
            warmup: false,
            series: None,
            round: None,
            seq: None,
            capped: r.capped(),
            streams: Vec::new(),
            syncs: r.first().syncs.map(|_| {
                let med =
                    |f: &dyn Fn(&super::Syncs) -> u64| r.medu(&|m| m.syncs.as_ref().map_or(0, f));
                super::Syncs {
                    count: med(&|s| s.count),
                    total_ns: med(&|s| s.total_ns),
                    mean_ns: med(&|s| s.mean_ns),
                }
            }),
        })
    }
}

/// The spread of a case's figures over its repetitions (the statistics
/// know numbers, not measurements).
impl crate::stats::CaseStats {
    /// `None` when no repetition completed.
    pub fn of(reps: &[&Measurement]) -> Option<crate::stats::CaseStats> {
        let d = |f: &dyn Fn(&Measurement) -> f64| {
            crate::stats::describe(&reps.iter().map(|m| f(m)).collect::<Vec<f64>>())
        };
        Some(crate::stats::CaseStats {
            bw_bytes_per_s: d(&|m| m.bw_bytes_per_s)?,
            iops: d(&|m| m.iops)?,
            lat_mean_ns: d(&|m| m.lat_ns.mean),
            lat_p50_ns: d(&|m| m.lat_ns.p50 as f64)?,
            lat_p90_ns: d(&|m| m.lat_ns.p90 as f64),
            lat_p99_ns: d(&|m| m.lat_ns.p99 as f64)?,
            lat_p999_ns: d(&|m| m.lat_ns.p999 as f64)?,
            cpu_ns_per_io: d(&|m| m.cpu.ns_per_io)?,
        })
    }
}

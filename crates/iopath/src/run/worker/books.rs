//! What the worker's loop keeps during a repetition: the engine's slots
//! (which are free, and for each the request it holds), the latencies, the
//! time series, the totals, and for `--verify` what was written and
//! checked. Everything is sized before the start barrier: nothing here
//! allocates in the loop (but a series past its expected length).

use super::*;

/// Requests and bytes completed so far, and the sums of their submit and
/// reap stamps (ns of the worker's clock, wrapping: `--latency-split`
/// sets them against the kernel's times of the same requests).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Totals {
    pub(super) read_ios: u64,
    pub(super) write_ios: u64,
    pub(super) read_bytes: u64,
    pub(super) write_bytes: u64,
    pub(super) submit_sum: u64,
    pub(super) reap_sum: u64,
}

impl Totals {
    #[inline(always)]
    pub(super) fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }

    #[inline(always)]
    pub(super) fn ios(&self) -> u64 {
        self.read_ios + self.write_ios
    }
}

/// The time series: counts of the current interval, flushed into the
/// vectors when a completion lands past its end.
pub(super) struct Series {
    bytes: Vec<u64>,
    ios: Vec<u64>,
    cur_bytes: u64,
    cur_ios: u64,
    edge_ns: u64,
    interval_ns: u64,
}

/// A closed time series: bytes and requests per interval.
pub(super) struct SeriesOut {
    pub(super) bytes: Vec<u64>,
    pub(super) ios: Vec<u64>,
}

impl Series {
    /// Sized for the time budget (a soft one's end) so that the hot loop
    /// does not allocate;
    /// without one (a byte budget alone), for 8192 intervals (82 s at the
    /// default 10 ms, 128 KiB), past which a vector doubles inside the
    /// loop.
    pub(super) fn new(job: &WorkerJob) -> Series {
        let interval_ns = job.interval_ns.max(1);
        // A soft time budget may run on to its `until`.
        let longest = job.at_least.map(|a| a.until).max(job.time_budget);
        let expect = longest
            .filter(|_| job.time_budget.is_some())
            .map_or(8192, |d| (d.as_nanos() as u64 / interval_ns) as usize + 4)
            .min(1 << 20);
        Series {
            bytes: Vec::with_capacity(expect),
            ios: Vec::with_capacity(expect),
            cur_bytes: 0,
            cur_ios: 0,
            edge_ns: interval_ns,
            interval_ns,
        }
    }

    /// The intervals that ended at or before `now_ns`, closed.
    #[inline(always)]
    pub(super) fn advance(&mut self, now_ns: u64) {
        while now_ns >= self.edge_ns {
            self.next_interval();
        }
    }

    /// One completion of `n` bytes in the current interval.
    #[inline(always)]
    fn add(&mut self, n: u32) {
        self.cur_bytes += u64::from(n);
        self.cur_ios += 1;
    }

    #[inline(always)]
    fn next_interval(&mut self) {
        self.bytes.push(self.cur_bytes);
        self.ios.push(self.cur_ios);
        (self.cur_bytes, self.cur_ios) = (0, 0);
        self.edge_ns += self.interval_ns;
    }

    /// The series closed at `end_ns`: intervals with nothing completed (a
    /// long fsync) stay as zeros, the last one is partial.
    fn close(mut self, end_ns: u64) -> SeriesOut {
        while end_ns > self.edge_ns {
            self.next_interval();
        }
        self.bytes.push(self.cur_bytes);
        self.ios.push(self.cur_ios);
        SeriesOut {
            bytes: self.bytes,
            ios: self.ios,
        }
    }
}

/// The engine's slots: which are free, and for each the request it holds.
pub(super) struct Slots {
    pub(super) free: Vec<u32>,
    pub(super) submit_ns: Vec<u64>,
    pub(super) op: Vec<Op>,
    pub(super) off: Vec<u64>,
    /// `--verify`: which slots are in flight (a random writer draws again
    /// rather than overlap its own in-flight write); empty otherwise.
    pub(super) busy: Vec<bool>,
}

impl Slots {
    pub(super) fn new(qd: usize, verify: bool) -> Slots {
        Slots {
            free: (0..qd as u32).rev().collect(),
            submit_ns: vec![0u64; qd],
            op: vec![Op::Read; qd],
            off: vec![0u64; qd],
            busy: vec![false; if verify { qd } else { 0 }],
        }
    }

    /// The request of slot `s` failed with `errno` (`None`: it read or
    /// wrote nothing, the end of the file).
    #[cold]
    #[inline(never)]
    fn failed(&self, s: usize, len: u32, errno: Option<i32>) -> WorkerError {
        let (op, offset) = (self.op[s], self.off[s]);
        match errno {
            Some(errno) => WorkerError::Request {
                op,
                len,
                offset,
                errno,
            },
            None => WorkerError::Eof { op, len, offset },
        }
    }
}

/// `--verify`: the blocks written (one bit each), the bytes checked, the
/// time spent stamping and checking, and the requests written so far (each
/// header's sequence).
pub(super) struct Checks {
    pub(super) written: Vec<u64>,
    pub(super) bytes: u64,
    pub(super) ns: u64,
    pub(super) write_seq: u32,
}

impl Checks {
    fn new(job: &WorkerJob) -> Checks {
        let range_blocks = (job.len / u64::from(job.block_size)).max(1);
        let writes = job.verify.is_some() && job.pattern.writes();
        Checks {
            written: vec![
                0u64;
                if writes {
                    range_blocks.div_ceil(64) as usize
                } else {
                    0
                }
            ],
            bytes: 0,
            ns: 0,
            write_seq: 0,
        }
    }

    /// A completion of `n` bytes by `op` at `off`: a read's blocks
    /// checked, a write's block marked written.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn complete(
        &mut self,
        engine: &mut dyn Engine,
        job: &WorkerJob,
        v: &VerifyJob,
        slot: u32,
        (op, off): (Op, u64),
        n: u32,
    ) -> Result<(), WorkerError> {
        let bs = job.block_size;
        match op {
            Op::Read if v.check_reads => {
                if let Some(b) = engine.buf_mut(slot) {
                    let t0 = Instant::now();
                    let b = &b[..(n as usize).min(b.len())];
                    let e = iopath_io::verify::Expect {
                        offset: off,
                        seed: v.seed,
                        max_pass: v.max_pass,
                        exact_pass: None,
                    };
                    iopath_io::verify::check_all(b, v.unit, off, &e)
                        .map_err(|m| WorkerError::Verify(m.to_string()))?;
                    self.bytes += (b.len() / v.unit * v.unit) as u64;
                    self.ns += t0.elapsed().as_nanos() as u64;
                }
            }
            Op::Write if n == bs => {
                let i = (off - job.start) / u64::from(bs);
                if let Some(w) = self.written.get_mut((i / 64) as usize) {
                    *w |= 1 << (i % 64);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Latencies recorded per batch: how many wait before they go into the
/// histogram. 2 KiB of pending values, in a few cache lines.
pub(super) const LAT_BATCH: usize = 256;

/// The latency histogram, and the latencies not yet in it. Its counters
/// span hundreds of KiB, and the kernel's work between two completions
/// evicts the few lines a run's latencies fall in: recorded one per
/// completion, each record waited for a cache miss (83% of its samples,
/// about 1% of the worker's CPU at 4 KiB QD32 on a loop device). Recorded
/// [`LAT_BATCH`] at a time, the lines are loaded once per batch and the
/// misses of a batch overlap. The worker flushes the rest before its timed
/// interval ends, so the CPU it reports still covers every record.
pub(super) struct Latencies {
    hist: Histogram<u64>,
    pending: Vec<u64>,
}

impl Latencies {
    pub(super) fn new() -> Result<Latencies, WorkerError> {
        Ok(Latencies {
            hist: Histogram::<u64>::new_with_bounds(1, MAX_LAT_NS, 3)
                .map_err(|e| WorkerError::Other(format!("histogram: {e}")))?,
            pending: Vec::with_capacity(LAT_BATCH),
        })
    }

    /// One request's latency, ns (values past [`MAX_LAT_NS`] saturate).
    #[inline(always)]
    pub(super) fn add(&mut self, ns: u64) {
        self.pending.push(ns);
        if self.pending.len() >= LAT_BATCH {
            self.flush();
        }
    }

    /// Every pending latency into the histogram.
    #[inline(never)]
    pub(super) fn flush(&mut self) {
        for &ns in &self.pending {
            self.hist.saturating_record(ns);
        }
        self.pending.clear();
    }

    /// The histogram of every latency added.
    pub(super) fn finish(mut self) -> Histogram<u64> {
        self.flush();
        self.hist
    }
}

/// What completions add up to: latencies, the series, the totals, the
/// checks, and the caller's buffer for `copy_to_user`.
pub(super) struct Books {
    pub(super) lat: Latencies,
    pub(super) series: Series,
    pub(super) totals: Totals,
    pub(super) checks: Checks,
    /// Touched now so that the timed copies do not fault its pages in.
    user_buf: Vec<u8>,
}

impl Books {
    pub(super) fn new(job: &WorkerJob) -> Result<Books, WorkerError> {
        Ok(Books {
            lat: Latencies::new()?,
            series: Series::new(job),
            totals: Totals::default(),
            checks: Checks::new(job),
            user_buf: vec![
                1u8;
                if job.copy_to_user {
                    job.block_size as usize
                } else {
                    0
                }
            ],
        })
    }

    /// One completion `c` at `now_ns`, its slot freed: its latency, its
    /// bytes, its check, its copy to the caller's buffer.
    #[inline(always)]
    pub(super) fn complete(
        &mut self,
        slots: &mut Slots,
        engine: &mut dyn Engine,
        job: &WorkerJob,
        c: Completion,
        now_ns: u64,
    ) -> Result<(), WorkerError> {
        let bs = job.block_size;
        let s = c.slot as usize;
        slots.free.push(c.slot);
        let n = match c.result {
            Ok(n) => n,
            Err(errno) => return Err(slots.failed(s, bs, Some(errno))),
        };
        if n == 0 {
            return Err(slots.failed(s, bs, None));
        }
        self.lat
            .add(now_ns.saturating_sub(slots.submit_ns[s]).max(1));
        self.totals.submit_sum = self.totals.submit_sum.wrapping_add(slots.submit_ns[s]);
        self.totals.reap_sum = self.totals.reap_sum.wrapping_add(now_ns);
        self.series.add(n);
        if let Some(v) = job.verify {
            slots.busy[s] = false;
            let at = (slots.op[s], slots.off[s]);
            self.checks.complete(engine, job, &v, c.slot, at, n)?;
        }
        match slots.op[s] {
            Op::Read => {
                self.totals.read_ios += 1;
                self.totals.read_bytes += u64::from(n);
                if job.copy_to_user {
                    if let Some(b) = engine.buf_mut(c.slot) {
                        let n = (n as usize).min(b.len());
                        self.user_buf[..n].copy_from_slice(&b[..n]);
                        std::hint::black_box(&mut self.user_buf);
                    }
                }
            }
            Op::Write => {
                self.totals.write_ios += 1;
                self.totals.write_bytes += u64::from(n);
            }
        }
        Ok(())
    }

    /// The worker's figures: the books, the series closed at the end.
    pub(super) fn into_out(self, start: Instant, end: Closed, ended: Ended) -> WorkerOut {
        let series = self
            .series
            .close(end.at.duration_since(start).as_nanos() as u64);
        WorkerOut {
            series_bytes: series.bytes,
            series_ios: series.ios,
            cpu: end.cpu,
            io: end.io,
            hist: self.lat.finish(),
            read_ios: self.totals.read_ios,
            write_ios: self.totals.write_ios,
            read_bytes: self.totals.read_bytes,
            write_bytes: self.totals.write_bytes,
            stamps: crate::run::latency_split::Stamps::since(
                start,
                self.totals.ios(),
                self.totals.submit_sum,
                self.totals.reap_sum,
            ),
            start,
            end: end.at,
            interrupted: ended.interrupted,
            timed_out: ended.timed_out,
            flush_ns: end.flush_ns,
            verified_bytes: self.checks.bytes,
            verify_ns: self.checks.ns,
            written: self.checks.written,
            syncs: None,
        }
    }
}

//! The worker's books during a repetition: the engine's slots (which are
//! free, and for each the request it holds), the latencies, the time
//! series and totals, and for `--verify` what was written and checked.
//! Sized before the start barrier: nothing here allocates in the loop.

use super::*;

/// Requests and bytes completed so far.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Totals {
    pub(super) read_ios: u64,
    pub(super) write_ios: u64,
    pub(super) read_bytes: u64,
    pub(super) write_bytes: u64,
}

impl Totals {
    #[inline]
    pub(super) fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }

    #[inline]
    pub(super) fn ios(&self) -> u64 {
        self.read_ios + self.write_ios
    }
}

/// The time series: counts of the current interval, flushed into the
/// vectors when a completion lands past its end.
pub(super) struct Series {
    pub(super) bytes: Vec<u64>,
    pub(super) ios: Vec<u64>,
    pub(super) cur_bytes: u64,
    pub(super) cur_ios: u64,
    pub(super) edge_ns: u64,
    pub(super) interval_ns: u64,
}

impl Series {
    /// Sized for the time budget so that the hot loop does not allocate;
    /// without one (a byte budget alone), for 8192 intervals (82 s at the
    /// default 10 ms, 128 KiB), past which a vector doubles inside the
    /// loop.
    pub(super) fn new(job: &WorkerJob) -> Series {
        let interval_ns = job.interval_ns.max(1);
        let expect = job
            .time_budget
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

    /// The intervals that ended before `now_ns`, closed.
    #[inline]
    pub(super) fn advance(&mut self, now_ns: u64) {
        while now_ns >= self.edge_ns {
            self.bytes.push(self.cur_bytes);
            self.ios.push(self.cur_ios);
            (self.cur_bytes, self.cur_ios) = (0, 0);
            self.edge_ns += self.interval_ns;
        }
    }

    /// The series up to `end_ns`, the last interval partial.
    pub(super) fn close(mut self, end_ns: u64) -> (Vec<u64>, Vec<u64>) {
        while end_ns > self.edge_ns {
            self.bytes.push(self.cur_bytes);
            self.ios.push(self.cur_ios);
            (self.cur_bytes, self.cur_ios) = (0, 0);
            self.edge_ns += self.interval_ns;
        }
        self.bytes.push(self.cur_bytes);
        self.ios.push(self.cur_ios);
        (self.bytes, self.ios)
    }
}

/// What the loop keeps: the engine's slots (which are free, and for each
/// the request it holds), the latencies, the series and totals, and for
/// `--verify` what was written and checked.
pub(super) struct Books {
    pub(super) hist: Histogram<u64>,
    pub(super) free: Vec<u32>,
    pub(super) submit_ns: Vec<u64>,
    pub(super) slot_op: Vec<Op>,
    pub(super) slot_off: Vec<u64>,
    /// `--verify`: which slots are in flight (a random writer draws again
    /// rather than overlap its own in-flight write).
    pub(super) busy: Vec<bool>,
    pub(super) series: Series,
    pub(super) t: Totals,
    /// The caller's buffer for `copy_to_user`, touched now so that the
    /// timed copies do not fault its pages in.
    pub(super) user_buf: Vec<u8>,
    /// `--verify`: the blocks written (one bit each).
    pub(super) written: Vec<u64>,
    pub(super) verified_bytes: u64,
    pub(super) verify_ns: u64,
    /// `--verify`: the requests written so far (each header's sequence).
    pub(super) write_seq: u32,
}

impl Books {
    pub(super) fn new(job: &WorkerJob, qd: usize) -> Result<Books, WorkerError> {
        let bs = job.block_size;
        let verify = job.verify.is_some();
        let range_blocks = (job.len / u64::from(bs)).max(1);
        Ok(Books {
            hist: Histogram::<u64>::new_with_bounds(1, MAX_LAT_NS, 3)
                .map_err(|e| WorkerError::Other(format!("histogram: {e}")))?,
            free: (0..qd as u32).rev().collect(),
            submit_ns: vec![0u64; qd],
            slot_op: vec![Op::Read; qd],
            slot_off: vec![0u64; qd],
            busy: vec![false; if verify { qd } else { 0 }],
            series: Series::new(job),
            t: Totals::default(),
            user_buf: vec![1u8; if job.copy_to_user { bs as usize } else { 0 }],
            written: vec![
                0u64;
                if verify && job.pattern.writes() {
                    range_blocks.div_ceil(64) as usize
                } else {
                    0
                }
            ],
            verified_bytes: 0,
            verify_ns: 0,
            write_seq: 0,
        })
    }

    /// `reqs` handed to the engine, stamped `submit_at`: how many it
    /// accepted. The others' slots are free again.
    #[inline(always)]
    pub(super) fn hand_over(
        &mut self,
        engine: &mut dyn Engine,
        reqs: &[IoReq],
        done: &mut Vec<Completion>,
        submit_at: u64,
    ) -> Result<usize, WorkerError> {
        for r in reqs {
            self.submit_ns[r.slot as usize] = submit_at;
        }
        let accepted = engine.submit(reqs, done).map_err(WorkerError::Engine)?;
        for r in reqs[accepted..].iter().rev() {
            self.free.push(r.slot);
            // Not in flight: no longer a block to keep clear of.
            if let Some(x) = self.busy.get_mut(r.slot as usize) {
                *x = false;
            }
        }
        Ok(accepted)
    }

    /// The worker's figures, from `span` (its start and end): the series
    /// closed at the end (intervals with nothing completed, a long fsync,
    /// stay as zeros; the last one is partial).
    pub(super) fn into_out(
        self,
        (start, end): (Instant, Instant),
        cpu: iopath_io::sys::ThreadUsage,
        flush_ns: u64,
    ) -> WorkerOut {
        let (series_bytes, series_ios) = self
            .series
            .close(end.duration_since(start).as_nanos() as u64);
        WorkerOut {
            series_bytes,
            series_ios,
            cpu,
            hist: self.hist,
            read_ios: self.t.read_ios,
            write_ios: self.t.write_ios,
            read_bytes: self.t.read_bytes,
            write_bytes: self.t.write_bytes,
            start,
            end,
            interrupted: false,
            timed_out: false,
            flush_ns,
            verified_bytes: self.verified_bytes,
            verify_ns: self.verify_ns,
            written: self.written,
        }
    }

    /// Requests for the free slots into `reqs`, their write buffers
    /// prepared, up to the byte budget; returns the bytes issued so far.
    #[inline(always)]
    pub(super) fn draw(
        &mut self,
        engine: &mut dyn Engine,
        job: &WorkerJob,
        (gen, data_rng): (&mut IoGen, &mut Rng),
        held: &mut Option<(Op, u64)>,
        reqs: &mut Vec<IoReq>,
        (mut issued, byte_budget): (u64, u64),
    ) -> u64 {
        let bs = job.block_size;
        while issued < byte_budget {
            let Some(slot) = self.free.pop() else { break };
            let (op, offset) = if let Some(v) = job.verify {
                let drawn = held.take().unwrap_or_else(|| gen.next_req());
                let ready = verify_prepare(
                    engine,
                    gen,
                    drawn,
                    slot,
                    &v,
                    (&self.slot_op, &self.slot_off, &mut self.busy),
                    (data_rng, job.data),
                    &mut self.write_seq,
                    &mut self.verify_ns,
                );
                match ready {
                    Some(r) => r,
                    None => {
                        // Its block has a write in flight (and no other
                        // block is free to take instead): wait for a
                        // completion, then issue it.
                        *held = Some(drawn);
                        self.free.push(slot);
                        break;
                    }
                }
            } else {
                let (op, offset) = gen.next_req();
                if op == Op::Write {
                    if let Some(b) = engine.buf_mut(slot) {
                        data_rng.scramble_as(b, job.data);
                    }
                }
                (op, offset)
            };
            reqs.push(IoReq {
                op,
                offset,
                len: bs,
                slot,
            });
            self.slot_op[slot as usize] = op;
            self.slot_off[slot as usize] = offset;
            issued += u64::from(bs);
        }
        issued
    }

    /// One completion, at `now_ns`: its latency, its bytes, its check.
    #[inline(always)]
    pub(super) fn complete(
        &mut self,
        engine: &mut dyn Engine,
        job: &WorkerJob,
        c: Completion,
        now_ns: u64,
    ) -> Result<(), WorkerError> {
        let bs = job.block_size;
        let s = c.slot as usize;
        self.free.push(c.slot);
        let n = match c.result {
            Ok(n) => n,
            Err(errno) => {
                return Err(WorkerError::Request {
                    op: self.slot_op[s],
                    len: bs,
                    offset: self.slot_off[s],
                    errno,
                })
            }
        };
        if n == 0 {
            return Err(WorkerError::Eof {
                op: self.slot_op[s],
                len: bs,
                offset: self.slot_off[s],
            });
        }
        self.hist
            .saturating_record(now_ns.saturating_sub(self.submit_ns[s]).max(1));
        self.series.cur_bytes += u64::from(n);
        self.series.cur_ios += 1;
        if let Some(v) = job.verify {
            self.check(engine, job, &v, c.slot, n)?;
        }
        match self.slot_op[s] {
            Op::Read => {
                self.t.read_ios += 1;
                self.t.read_bytes += u64::from(n);
                if job.copy_to_user {
                    if let Some(b) = engine.buf_mut(c.slot) {
                        let n = (n as usize).min(b.len());
                        self.user_buf[..n].copy_from_slice(&b[..n]);
                        std::hint::black_box(&mut self.user_buf);
                    }
                }
            }
            Op::Write => {
                self.t.write_ios += 1;
                self.t.write_bytes += u64::from(n);
            }
        }
        Ok(())
    }

    /// `--verify`: a read's blocks checked, a write's block marked written.
    #[inline]
    pub(super) fn check(
        &mut self,
        engine: &mut dyn Engine,
        job: &WorkerJob,
        v: &VerifyJob,
        slot: u32,
        n: u32,
    ) -> Result<(), WorkerError> {
        let s = slot as usize;
        self.busy[s] = false;
        let off = self.slot_off[s];
        match self.slot_op[s] {
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
                    self.verified_bytes += (b.len() / v.unit * v.unit) as u64;
                    self.verify_ns += t0.elapsed().as_nanos() as u64;
                }
            }
            Op::Write if n == job.block_size => {
                let i = (off - job.start) / u64::from(job.block_size);
                if let Some(w) = self.written.get_mut((i / 64) as usize) {
                    *w |= 1 << (i % 64);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

//! Many ranks, one run: what the ranks of `mpirun -n N iopath run` agree
//! on, so that every decision that changes the run's course is the same on
//! every rank (or they would wait on each other forever).
//!
//! Invariants:
//! - Every method here is collective when there are several ranks: each
//!   rank calls it at the same point of the same plan. The runner calls
//!   them where its course could split: after the set-up (the test file,
//!   the checks: one rank failing fails all, with that rank's reason), after
//!   the probes (a method refused on any rank is refused on all), per case
//!   (a skip on any rank skips it on all), before every repetition (a
//!   barrier, after each rank made its cache state) and after it
//!   ([`Ranks::combine`]: every rank gets every rank's measurement and
//!   computes the same aggregate, so the adaptive stop, which reads it,
//!   decides alike everywhere).
//! - A stop (Ctrl-C to `mpirun`, which sends every rank SIGTERM, then
//!   SIGKILL a second later) is agreed too: the signal sets the rank's own flag, which its
//!   workers watch (the repetition is cut short); the runner's flag, which
//!   decides its course, is set only inside a collective, when any rank's
//!   own flag is set, so every rank turns back at the same point.
//! - With one process ([`Ranks::alone`]) every method returns its input:
//!   nothing changes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::peers::{Alone, Peers};
use super::prepare::Probed;
use super::repeat::RepOutcome;
use super::{RepError, RepOk};
use crate::plan::UsageError;
use crate::result::mpi::{
    FileLayout, HostRanks, MpiInfo, MpiNote, RankHost, RankTargets, SHARED_HOST_NOTE,
};
use crate::result::skip::Skip;
use crate::result::RunResult;

pub use super::ranks_sum::{aggregate, Ran, RawDisk};

/// This process among the run's ranks.
#[derive(Debug)]
pub struct Ranks<'p> {
    peers: &'p dyn Peers,
    layout: Option<FileLayout>,
    /// Every rank's host name, in rank order.
    hosts: Vec<String>,
    /// Many ranks: (the signal's flag, the runner's agreed flag).
    flags: Option<(&'p AtomicBool, &'p AtomicBool)>,
    /// Set when [`Ranks::agree`] failed: every rank left together.
    failed_together: AtomicBool,
    /// When the barrier before the running repetition let this rank go.
    release: Mutex<Option<Instant>>,
    /// The running repetition's first start and last end on this rank.
    span: Mutex<Option<(Instant, Instant)>>,
    /// Its raw device counters, before and after.
    disk: Mutex<Option<RawDisk>>,
}

static ALONE: Alone = Alone;

impl Ranks<'static> {
    /// One process: every agreement is its own.
    pub fn alone() -> Ranks<'static> {
        Ranks {
            peers: &ALONE,
            layout: None,
            hosts: vec![String::new()],
            flags: None,
            failed_together: AtomicBool::new(false),
            release: Mutex::new(None),
            span: Mutex::new(None),
            disk: Mutex::new(None),
        }
    }
}

impl<'p> Ranks<'p> {
    /// The ranks of `peers` (collective: they exchange host names).
    /// `signal` is what Ctrl-C sets on this rank; `agreed` the flag the
    /// runner is given as its `stop`.
    pub fn new(
        peers: &'p dyn Peers,
        layout: FileLayout,
        host: &str,
        signal: &'p AtomicBool,
        agreed: &'p AtomicBool,
    ) -> Ranks<'p> {
        let hosts = peers
            .all_gather(host.as_bytes())
            .into_iter()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect();
        Ranks {
            peers,
            layout: Some(layout),
            hosts,
            flags: Some((signal, agreed)),
            failed_together: AtomicBool::new(false),
            release: Mutex::new(None),
            span: Mutex::new(None),
            disk: Mutex::new(None),
        }
    }

    /// Started under MPI (a job of one rank too): every step is agreed
    /// and the result has an `mpi` object.
    pub fn many(&self) -> bool {
        self.flags.is_some()
    }
    pub fn rank(&self) -> usize {
        self.peers.rank()
    }
    pub fn count(&self) -> usize {
        self.peers.ranks()
    }
    pub fn layout(&self) -> Option<FileLayout> {
        self.layout
    }
    fn host(&self, rank: usize) -> &str {
        self.hosts.get(rank).map_or("?", String::as_str)
    }

    /// The result's `mpi` object before any case; `None` alone.
    pub fn info(&self) -> Option<MpiInfo> {
        if !self.many() {
            return None;
        }
        let mut hosts: Vec<HostRanks> = Vec::new();
        for (r, h) in self.hosts.iter().enumerate() {
            match hosts.iter_mut().find(|x| &x.host == h) {
                Some(x) => x.ranks.push(r as u32),
                None => hosts.push(HostRanks {
                    host: h.clone(),
                    ranks: vec![r as u32],
                }),
            }
        }
        Some(MpiInfo {
            ranks: self.count() as u32,
            hosts,
            layout: self.layout,
            note: SHARED_HOST_NOTE.into(),
            ..MpiInfo::default()
        })
    }

    /// The flag the workers watch: the rank's own signal flag when there
    /// are many (a Ctrl-C cuts the repetition on every rank it reaches),
    /// else the runner's.
    pub fn cut<'a>(&'a self, stop: &'a AtomicBool) -> &'a AtomicBool {
        self.flags.map_or(stop, |(signal, _)| signal)
    }

    /// Exchange `mine` with a stop flag: every rank's bytes, and the
    /// runner's flag set everywhere when any rank's signal came.
    fn exchange(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let Some((signal, agreed)) = self.flags else {
            return vec![mine.to_vec()];
        };
        let mut msg = vec![u8::from(signal.load(Ordering::SeqCst))];
        msg.extend_from_slice(mine);
        let all = self.peers.all_gather(&msg);
        if all.iter().any(|m| m.first() == Some(&1)) {
            agreed.store(true, Ordering::SeqCst);
            signal.store(true, Ordering::SeqCst);
        }
        all.into_iter()
            .map(|m| m.get(1..).unwrap_or_default().to_vec())
            .collect()
    }

    /// Rank 0's `mine`, on every rank.
    pub fn from_rank0(&self, mine: &[u8]) -> Vec<u8> {
        if !self.many() {
            return mine.to_vec();
        }
        self.exchange(mine).into_iter().next().unwrap_or_default()
    }

    /// The barrier before a repetition (after this rank made its cache
    /// state); the repetition's times count from its release.
    pub fn barrier(&self) {
        if self.many() {
            self.exchange(&[]);
        }
        if let Ok(mut r) = self.release.lock() {
            *r = Some(Instant::now());
        }
        if let Ok(mut s) = self.span.lock() {
            *s = None;
        }
        self.disk(None);
    }

    /// The running repetition's first worker start and last end here.
    pub fn timed(&self, start: Option<Instant>, end: Option<Instant>) {
        if let (Some(s), Some(e), Ok(mut span)) = (start, end, self.span.lock()) {
            *span = Some((s, e));
        }
    }

    /// The running repetition's raw device counters on this rank.
    pub fn disk(&self, raw: Option<RawDisk>) {
        if let Ok(mut d) = self.disk.lock() {
            *d = raw;
        }
    }

    /// One outcome of a step every rank took: this rank's error, else the
    /// first other rank's (named), else `local`'s value. A bad input on
    /// any rank is a usage error on all (exit 2).
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        if !self.many() {
            return local;
        }
        let mine = match &local {
            Ok(_) => Vec::new(),
            Err(e) => {
                let usage = u8::from(e.is::<UsageError>());
                let mut m = vec![usage];
                m.extend_from_slice(format!("{e:#}").as_bytes());
                m
            }
        };
        let all = self.exchange(&mine);
        if all.iter().any(|m| !m.is_empty()) {
            self.failed_together.store(true, Ordering::SeqCst);
        }
        let local = local?;
        match all.iter().enumerate().find(|(_, m)| !m.is_empty()) {
            None => Ok(local),
            Some((r, m)) => {
                let text = format!(
                    "rank {r} (on {}) failed: {}",
                    self.host(r),
                    String::from_utf8_lossy(&m[1..])
                );
                if m[0] == 1 {
                    Err(UsageError(text).into())
                } else {
                    Err(anyhow::anyhow!(text))
                }
            }
        }
    }

    /// The plan as every rank runs it: rank 0's order seed (each rank
    /// drew its own when `--order-seed` was not given, and the rounds'
    /// orders would differ), then a check that every rank runs the same
    /// plan (rank 0's, paths aside): ranks started with different options
    /// (`mpirun -n 1 iopath run --methods a : -n 1 iopath run --methods b`)
    /// would wait on each other forever. A usage error on every rank.
    pub fn agree_plan(&self, plan: &mut crate::plan::Plan) -> Result<()> {
        if !self.many() {
            return Ok(());
        }
        let seed = self.from_rank0(&plan.order_seed.to_le_bytes());
        if let Ok(b) = <[u8; 8]>::try_from(seed.as_slice()) {
            plan.order_seed = u64::from_le_bytes(b);
        }
        let mine = fingerprint(plan, self.layout);
        let all = self.exchange(&mine.to_le_bytes());
        match all.iter().position(|f| f.as_slice() != all[0].as_slice()) {
            None => Ok(()),
            Some(r) => Err(UsageError(format!(
                "rank {r} (on {}) was given a different plan from rank 0's (on {}): every rank must be started with the same options (methods, patterns, sizes, --layout; only the paths may differ); start one iopath command under mpirun -n N",
                self.host(r),
                self.host(0)
            ))
            .into()),
        }
    }

    /// True when a failure was agreed ([`Ranks::agree`]): every rank
    /// stopped at the same step. A failure that was not (an error between
    /// agreements, on some ranks only) leaves the others waiting: the
    /// caller then aborts the MPI job.
    pub fn failed_together(&self) -> bool {
        self.failed_together.load(Ordering::SeqCst)
    }

    /// The outcome of a repetition as the scheduler sees it, rank 0's on
    /// every rank: its wall time (which the adaptive stop and the case
    /// timeout read) is each rank's own.
    pub fn agree_outcome(&self, o: RepOutcome) -> RepOutcome {
        if !self.many() {
            return o;
        }
        let (tag, bw, ns) = match o {
            RepOutcome::Done { bw, wall_ns } => (0u8, bw, wall_ns),
            RepOutcome::Capped { bw, wall_ns } => (1, bw, wall_ns),
            RepOutcome::Stop => (2, 0.0, 0),
            RepOutcome::Abort => (3, 0.0, 0),
        };
        let mut mine = vec![tag];
        mine.extend_from_slice(&bw.to_le_bytes());
        mine.extend_from_slice(&ns.to_le_bytes());
        let r0 = self.from_rank0(&mine);
        let (Some(&tag), Some(bw), Some(ns)) = (r0.first(), r0.get(1..9), r0.get(9..17)) else {
            return RepOutcome::Abort;
        };
        let bw = f64::from_le_bytes(bw.try_into().unwrap_or_default());
        let wall_ns = u64::from_le_bytes(ns.try_into().unwrap_or_default());
        match tag {
            0 => RepOutcome::Done { bw, wall_ns },
            1 => RepOutcome::Capped { bw, wall_ns },
            2 => RepOutcome::Stop,
            _ => RepOutcome::Abort,
        }
    }

    /// Rank 0's `mine` on every rank (a figure every rank must run by
    /// alike: a job's stretch, which each rank derived from its own clock).
    pub fn agree_f64(&self, mine: f64) -> f64 {
        if !self.many() {
            return mine;
        }
        let r0 = self.from_rank0(&mine.to_le_bytes());
        <[u8; 8]>::try_from(r0.as_slice()).map_or(mine, f64::from_le_bytes)
    }

    /// Every rank's `mine` (its target's file system and device): `None`
    /// when all are alike, else a note naming which ranks have which.
    pub fn differences(&self, mine: &str) -> Option<MpiNote> {
        if !self.many() {
            return None;
        }
        let all = self.exchange(mine.as_bytes());
        let mut groups: Vec<RankTargets> = Vec::new();
        for (r, b) in all.iter().enumerate() {
            let target = String::from_utf8_lossy(b).into_owned();
            let who = self.rank_host(r);
            match groups.iter_mut().find(|g| g.target == target) {
                Some(g) => g.ranks.push(who),
                None => groups.push(RankTargets {
                    target,
                    ranks: vec![who],
                }),
            }
        }
        (groups.len() > 1).then_some(MpiNote::TargetsDiffer { groups })
    }

    /// Rank `r` with its host, for facts.
    fn rank_host(&self, r: usize) -> RankHost {
        RankHost {
            rank: r as u32,
            host: self.host(r).to_string(),
        }
    }

    /// `skip` as another rank's: rank `r`'s refusal.
    fn on_rank(&self, r: usize, skip: Skip) -> Skip {
        let RankHost { rank, host } = self.rank_host(r);
        Skip::OnRank {
            rank,
            host,
            skip: Box::new(skip),
        }
    }

    /// The probes as one: a method unusable on any rank is unusable on all,
    /// with the first such rank's reason.
    pub fn agree_probes(&self, mut probes: Vec<Probed>) -> Vec<Probed> {
        if !self.many() {
            return probes;
        }
        let mine: Vec<Option<Skip>> = probes.iter().map(|p| p.unusable.clone()).collect();
        let all = self.exchange(&serde_json::to_vec(&mine).unwrap_or_default());
        for (r, bytes) in all.iter().enumerate() {
            let theirs: Vec<Option<Skip>> = serde_json::from_slice(bytes).unwrap_or_default();
            for (p, why) in probes.iter_mut().zip(theirs) {
                if let (None, Some(why)) = (&p.unusable, why) {
                    p.unusable = Some(self.on_rank(r, why));
                }
            }
        }
        probes
    }

    /// A case's skip as one: skipped on any rank, skipped on all.
    pub fn agree_skip(&self, skipped: Option<Skip>) -> Option<Skip> {
        if !self.many() {
            return skipped;
        }
        let all = self.exchange(&serde_json::to_vec(&skipped).unwrap_or_default());
        if skipped.is_some() {
            return skipped;
        }
        all.iter().enumerate().find_map(|(r, m)| {
            let theirs: Option<Skip> = serde_json::from_slice(m).ok().flatten();
            theirs.map(|s| self.on_rank(r, s))
        })
    }

    /// How many ranks share one file, each addressing its part (a shared
    /// layout); 1 otherwise.
    pub fn sharing(&self) -> u64 {
        if self.many() && self.layout.is_some_and(FileLayout::shared) {
            self.count() as u64
        } else {
            1
        }
    }

    /// The byte range of a shared file this rank addresses: its segment
    /// (`shared-segmented`), else all of `span`.
    /// Strided, the range is this rank's share of the blocks, which the
    /// workers spread over the file ([`Ranks::stride`]).
    pub fn segment(&self, span: u64, bs: u64) -> (u64, u64) {
        if !self.many() {
            return (0, span);
        }
        let n = self.count() as u64;
        let per = span / bs / n * bs;
        match self.layout {
            Some(FileLayout::SharedSegmented) => (self.rank() as u64 * per, per),
            Some(FileLayout::SharedStrided) => (0, per),
            _ => (0, span),
        }
    }

    /// Thread `i`'s (start, length) of this rank's range (`base`, `span`),
    /// when the threads take a slice each (sequential patterns, verified
    /// writes); strided, in the rank's own blocks ([`Ranks::stride`]).
    pub fn slice(base: u64, span: u64, bs: u64, threads: u64, i: u64) -> (u64, u64) {
        let per_thread = span / threads.max(1) / bs * bs;
        (base + i * per_thread, per_thread)
    }

    /// `shared-strided`: (ranks, this rank) for block interleaving.
    pub fn stride(&self) -> Option<(u64, u64)> {
        (self.layout == Some(FileLayout::SharedStrided) && self.many())
            .then(|| (self.count() as u64, self.rank() as u64))
    }

    /// The repetition every rank just ran, as one: a failure on any rank
    /// fails it on all (the first failing rank's reason), a refusal
    /// likewise, else the aggregate ([`aggregate`]) with this rank's notes
    /// and placement. Its per-rank rows go into `result.mpi`.
    pub fn combine(
        &self,
        rep: Result<RepOk, RepError>,
        result: &mut RunResult,
        case: &str,
        seq: u32,
        warmup: bool,
    ) -> Result<RepOk, RepError> {
        if !self.many() {
            return rep;
        }
        let parts = self.gather(&self.part_of(&rep, case));
        if let Some(refused) = self.first_refusal(&parts) {
            return Err(refused);
        }
        let rans: Vec<(u32, &str, &Ran)> = parts
            .iter()
            .enumerate()
            .filter_map(|(r, p)| match p {
                Part::Ran(x) => Some((r as u32, self.host(r), &**x)),
                _ => None,
            })
            .collect();
        let shared = self.layout.is_some_and(FileLayout::shared);
        let (m, hist, mut row, verified) = aggregate(&rans, shared);
        row.case = case.to_string();
        row.seq = seq;
        row.warmup = warmup;
        if let Some(info) = result.mpi.as_mut() {
            info.repetitions.push(row);
            info.cases = super::ranks_sum::case_summaries(&info.repetitions);
        }
        // This rank's own part ran (else it failed or was refused above).
        rep.map(|r| RepOk {
            measurement: m,
            hist,
            verified,
            ..r
        })
    }

    /// This rank's part of the repetition, as the other ranks get it: what
    /// it measured, placed in time after the common release, or why it
    /// failed or was refused.
    fn part_of(&self, rep: &Result<RepOk, RepError>, case: &str) -> Part {
        let ok = match rep {
            Ok(ok) => ok,
            Err(RepError::Skip(w)) => return Part::Skip(w.clone()),
            Err(RepError::Fail(w)) => return Part::Fail(w.clone()),
        };
        let m = &ok.measurement;
        let release = self.release.lock().ok().and_then(|r| *r);
        let span = self.span.lock().ok().and_then(|s| *s);
        let now = Instant::now();
        let (s, e) = span.unwrap_or_else(|| {
            // No worker span (a copy): it ended about now.
            let d = std::time::Duration::from_nanos(m.duration_ns);
            (now.checked_sub(d).unwrap_or(now), now)
        });
        let since =
            |t: Instant| release.map_or(0, |r| t.saturating_duration_since(r).as_nanos() as u64);
        let mut ran = Ran::new(
            m.clone(),
            &ok.hist,
            since(s),
            since(e),
            (ok.verified.bytes, ok.verified.ns),
        );
        ran.case = case.to_string();
        ran.notes = ok.engine_notes.clone();
        ran.disk = self.disk.lock().ok().and_then(|mut d| d.take());
        Part::Ran(Box::new(ran))
    }

    /// Every rank's part, in rank order (this one's `mine` among them).
    fn gather(&self, mine: &Part) -> Vec<Part> {
        self.exchange(&serde_json::to_vec(mine).unwrap_or_default())
            .iter()
            .map(|b| {
                serde_json::from_slice(b)
                    .unwrap_or_else(|e| Part::Fail(format!("unreadable message: {e}")))
            })
            .collect()
    }

    /// Why the repetition counts on no rank: the first failing rank's
    /// failure, else the first refusing rank's refusal, else ranks that
    /// ran different cases in this slot; `None` when all ran it.
    fn first_refusal(&self, parts: &[Part]) -> Option<RepError> {
        let named = |r: usize, w: &str| format!("rank {r} ({}): {w}", self.host(r));
        let fail = parts.iter().enumerate().find_map(|(r, p)| match p {
            Part::Fail(w) => Some(RepError::Fail(named(r, w))),
            _ => None,
        });
        let skip = || {
            parts.iter().enumerate().find_map(|(r, p)| match p {
                Part::Skip(w) => Some(RepError::Skip(self.on_rank(r, w.clone()))),
                _ => None,
            })
        };
        fail.or_else(skip).or_else(|| self.out_of_step(parts))
    }

    /// Every rank must have run the same case in this slot (the same plan,
    /// the same order: [`Ranks::agree_plan`]); a rank out of step would
    /// make the aggregate a sum of different cases.
    fn out_of_step(&self, parts: &[Part]) -> Option<RepError> {
        let mut ran_cases = parts.iter().enumerate().filter_map(|(r, p)| match p {
            Part::Ran(x) => Some((r, x.case.as_str())),
            _ => None,
        });
        let (r0, first) = ran_cases.next()?;
        let (r, other) = ran_cases.find(|(_, c)| *c != first)?;
        Some(RepError::Fail(format!(
            "ranks out of step: rank {r} ({}) ran {other} where rank {r0} ({}) ran {first}; every rank must run the same plan in the same order (report this as a bug)",
            self.host(r),
            self.host(r0)
        )))
    }
}

/// A plan's fingerprint, its target's and job file's paths and the CPUs
/// of its placements left out (they may differ by rank: each rank's own
/// directory, each rank's own binding), and the file layout in.
fn fingerprint(plan: &crate::plan::Plan, layout: Option<FileLayout>) -> u64 {
    use crate::plan::TargetSpec;
    let mut p = plan.clone();
    match &mut p.target {
        TargetSpec::File { path, .. } => *path = Default::default(),
        TargetSpec::TempIn(d) => *d = Default::default(),
    }
    p.job_file = None;
    for c in &mut p.cases {
        c.placement.cpus = None;
    }
    // FNV-1a: the same on every host, whatever the build.
    format!("{p:?} {layout:?}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}

/// One rank's part of a repetition, as sent.
#[derive(Debug, Serialize, Deserialize)]
enum Part {
    Ran(Box<Ran>),
    Skip(Skip),
    Fail(String),
}

#[cfg(test)]
#[path = "ranks_tests.rs"]
mod tests;

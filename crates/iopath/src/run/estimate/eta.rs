//! The time left while a run goes ([`Eta`]): the estimate of
//! [`super`], made again as cases finish and as repetitions show their
//! set-up.

use std::time::Duration;

use super::{Estimate, SETUP_S};
use crate::plan::{Case, Pattern, Plan};

/// The time left while a run goes: the estimate, refined as cases finish
/// (their speeds stand in for the assumed ones of cases like them) and as
/// the running ones spend their time.
#[derive(Debug, Clone)]
pub struct Eta {
    pub(super) est: Estimate,
    pub(super) file_size: u64,
    pub(super) prefill: bool,
    pub(super) jobs: Vec<Vec<usize>>,
    pub(super) done: Vec<bool>,
    pub(super) spent: Vec<f64>,
    /// Measured speed of each finished case, bytes per second.
    pub(super) speed: Vec<Option<f64>>,
    /// How many of them are known.
    pub(super) known: usize,
    /// The methods and patterns with a speed known.
    pub(super) kinds: std::collections::HashSet<(iopath_io::Method, Pattern)>,
    /// The set-up of the latest repetitions (seconds, at most
    /// [`SET_UPS_KEPT`]), and how many were seen in all.
    pub(super) set_ups: std::collections::VecDeque<f64>,
    pub(super) set_ups_seen: usize,
    /// Under a budget: the run's, seconds, from when the estimate was
    /// made (the run's start).
    pub(super) budget: Option<(f64, std::time::Instant)>,
}

/// The repetitions whose set-up the estimate's mean is taken over: the
/// latest, as the load and the cases change.
pub(super) const SET_UPS_KEPT: usize = 64;

impl Eta {
    pub fn new(plan: &Plan, file_size: u64, prefill: bool, jobs: Vec<Vec<usize>>) -> Eta {
        let n = plan.cases.len();
        Eta {
            est: Estimate::of(plan, file_size, prefill, &jobs, &|_| None),
            file_size,
            prefill,
            jobs,
            done: vec![false; n],
            spent: vec![0.0; n],
            speed: vec![None; n],
            known: 0,
            kinds: Default::default(),
            set_ups: Default::default(),
            set_ups_seen: 0,
            budget: Estimate::budget(plan)
                .filter(|_| plan.repeat.is_none())
                .map(|b| (b.as_secs_f64(), std::time::Instant::now())),
        }
    }

    /// A repetition took `secs` besides its timed interval (its set-up:
    /// the cache state made, engines opened, workers started and joined,
    /// the figures read). The cases not done are estimated again with the
    /// mean of the latest ones ([`SET_UPS_KEPT`]) at the 1st, 2nd, 4th,
    /// 8th, ... and then every [`SET_UPS_KEPT`]th.
    pub fn set_up(&mut self, plan: &Plan, secs: f64) {
        if !secs.is_finite() || secs < 0.0 {
            return;
        }
        if self.set_ups.len() == SET_UPS_KEPT {
            self.set_ups.pop_front();
        }
        self.set_ups.push_back(secs);
        self.set_ups_seen += 1;
        let n = self.set_ups_seen;
        if n.is_power_of_two() || n % SET_UPS_KEPT == 0 {
            self.estimate_again(plan);
        }
    }

    /// The set-up per repetition counted: the mean of the latest measured
    /// (the run's time is their sum: a median would leave out the slow
    /// ones), else [`SETUP_S`].
    pub fn setup_s(&self) -> f64 {
        if self.set_ups.is_empty() {
            return SETUP_S;
        }
        self.set_ups.iter().sum::<f64>() / self.set_ups.len() as f64
    }

    /// The least the cases not done take, less those of `except` (the
    /// job about to run): the rounds every arm runs whatever they cost
    /// ([`CaseTime::floor_s`]), seconds.
    pub fn floor_left(&self, except: &[usize]) -> f64 {
        self.est
            .cases
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.done[*i] && !except.contains(i))
            .map(|(_, c)| c.floor_s)
            .sum()
    }

    pub fn estimate(&self) -> &Estimate {
        &self.est
    }

    /// Case `i` has run for `secs` so far.
    pub fn spent(&mut self, i: usize, secs: f64) {
        if let Some(s) = self.spent.get_mut(i) {
            *s = secs;
        }
    }

    /// Case `i` is done, at `bw` bytes per second when it measured any;
    /// the cases not run yet are estimated again when that speed says
    /// something new: the first of its method and pattern, or the count of
    /// speeds known doubled. Each estimate is one pass over the plan, so a
    /// run of n cases makes O(n log n) work of them, not O(n^2) or worse.
    pub fn finished(&mut self, plan: &Plan, i: usize, bw: Option<f64>) {
        if i >= self.done.len() {
            return;
        }
        self.done[i] = true;
        let bw = bw.filter(|b| *b > 0.0);
        self.speed[i] = bw;
        let Some(case) = plan.cases.get(i).filter(|_| bw.is_some()) else {
            return;
        };
        self.known += 1;
        let new_kind = self.kinds.insert((case.method, case.pattern));
        if new_kind || self.known.is_power_of_two() {
            self.estimate_again(plan);
        }
    }

    /// The cases not done, estimated with the median speed measured for
    /// their method and pattern, else for their pattern.
    fn estimate_again(&mut self, plan: &Plan) {
        use std::collections::HashMap;
        let mut by_kind: HashMap<(iopath_io::Method, Pattern), Vec<f64>> = HashMap::new();
        let mut by_pattern: HashMap<Pattern, Vec<f64>> = HashMap::new();
        for (c, s) in plan.cases.iter().zip(&self.speed) {
            if let Some(s) = *s {
                by_kind.entry((c.method, c.pattern)).or_default().push(s);
                by_pattern.entry(c.pattern).or_default().push(s);
            }
        }
        let by_kind: HashMap<_, f64> = by_kind
            .into_iter()
            .map(|(k, mut v)| (k, crate::result::median(&mut v)))
            .collect();
        let by_pattern: HashMap<_, f64> = by_pattern
            .into_iter()
            .map(|(k, mut v)| (k, crate::result::median(&mut v)))
            .collect();
        let known = |c: &Case| {
            by_kind
                .get(&(c.method, c.pattern))
                .or_else(|| by_pattern.get(&c.pattern))
                .copied()
        };
        let size = (self.file_size, self.setup_s());
        let fresh = Estimate::with_set_up(plan, size, self.prefill, &self.jobs, &known);
        for (j, c) in fresh.cases.into_iter().enumerate() {
            if !self.done[j] {
                self.est.cases[j] = c;
            }
        }
        self.est.setup_s = fresh.setup_s;
    }

    /// Time left: the cases not done, less what the running ones spent;
    /// under a budget, no more than what is left of it (the jobs stop at
    /// their shares), but no less than the floor of rounds the cases not
    /// done run whatever they cost.
    pub fn left(&self) -> Duration {
        let rounds = self.est.left(&self.done, &self.spent);
        match self.budget {
            Some((b, t0)) => {
                let within = (b - t0.elapsed().as_secs_f64()).max(self.floor_left(&[]));
                rounds.min(Duration::from_secs_f64(within.max(0.0)))
            }
            None => rounds,
        }
    }

    /// The time left as it runs down while case `i` runs a repetition:
    /// [`LeftClock::at`] the time into it.
    pub fn clock(&self, i: usize) -> LeftClock {
        let left = self.left().as_secs_f64();
        let case_s = match (self.est.cases.get(i), self.done.get(i)) {
            (Some(c), Some(false)) => (c.total_s - self.spent[i]).max(0.0),
            _ => 0.0,
        };
        LeftClock {
            others_s: (left - case_s).max(0.0),
            case_s,
        }
    }
}

/// The time left during one repetition, taken when it starts: the other
/// cases' share stands, the running case's runs down with the time into
/// the repetition and stops at 0 (a case that runs over its estimate does
/// not make the rest longer, nor shorter). Never increases as time passes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeftClock {
    /// What the cases other than the running one have left, seconds.
    pub others_s: f64,
    /// What the running case had left when the repetition started.
    pub case_s: f64,
}

impl LeftClock {
    /// The time left `into_s` seconds into the repetition.
    pub fn at(&self, into_s: f64) -> Duration {
        let case = (self.case_s - into_s.max(0.0)).max(0.0);
        Duration::from_secs_f64(self.others_s + case)
    }
}

//! A job under a budget (`--budget`'s share, a fio job's `runtime`): the
//! rounds go where the verdict needs them. Every arm gets the floor of
//! rounds; then, at the looks of a group-sequential rule
//! ([`crate::stats::leader::drop_level`]: rounds 8, 12, 18, 27, ..., the
//! level [`crate::stats::DROP_SPEND`] spent across them all), the arms
//! settled against the leader (behind it by the paired test, or tied
//! within the margin) stop taking rounds, and the rounds left go to the
//! arms still close to it. The arms that go on keep
//! running in the same shuffled rounds, so that every pair of them stays
//! paired round by round.

use super::{Books, Job};
use crate::stats::{StopReason, StopRule};

impl Job {
    /// After a round of a job under a budget of `budget` ns: `None` to go
    /// on. Every arm gets the rule's rounds (`min_reps` whatever they cost,
    /// up to `wanted_reps` while they fit); then the arms settled against
    /// the leader ([`crate::stats::leader::settled`], at the looks'
    /// levels) leave, and the job ends when none but the leader is left, or the
    /// next round would not fit in the budget. A job of one arm stops on
    /// the rule's interval target instead.
    pub(super) fn budgeted(&mut self, rule: &StopRule, budget: u64) -> Option<StopReason> {
        let rounds = self.end.rounds as usize;
        if rounds >= rule.max_reps {
            return Some(StopReason::MaxReps);
        }
        let spent: u64 = self.end.arms.iter().map(|a| a.elapsed_ns).sum();
        let alive: Vec<usize> = (0..self.alive.len()).filter(|&a| self.alive[a]).collect();
        let next: u64 = alive.iter().map(|&a| self.b.slowest[a]).sum();
        let over = (spent.saturating_add(next) > budget).then_some(StopReason::MaxTime);
        if rounds < rule.min_reps {
            return None;
        }
        if rounds < rule.wanted_reps {
            return over;
        }
        if self.alive.len() == 1 {
            return if rule.met(&self.b.samples[0]) {
                Some(StopReason::CiTarget)
            } else {
                over
            };
        }
        self.settle(&alive);
        if self.alive.iter().filter(|&&a| a).count() <= 1 {
            return Some(StopReason::Settled);
        }
        over
    }

    /// The arms of `alive` settled against the one of highest median leave,
    /// when their paired rounds make a look (at its level); between looks
    /// none does.
    fn settle(&mut self, alive: &[usize]) {
        let median = |a: usize| {
            let mut s = self.b.samples[a].clone();
            s.sort_by(|x, y| x.total_cmp(y));
            crate::stats::median_sorted(&s)
        };
        let Some(lead) = alive
            .iter()
            .copied()
            .max_by(|&a, &b| median(a).total_cmp(&median(b)))
        else {
            return;
        };
        for &a in alive.iter().filter(|&&a| a != lead) {
            let pairs = self.b.pairs(a, lead);
            let Some(alpha) = crate::stats::leader::drop_level(pairs.len()) else {
                continue;
            };
            let k =
                crate::stats::compare_paired_with(&pairs, crate::stats::EQUIVALENCE_MARGIN, alpha);
            if k.is_some_and(|k| crate::stats::leader::settled(&k)) {
                self.alive[a] = false;
                self.b.gone[a] = StopReason::Settled;
            }
        }
    }
}

impl Books {
    /// The throughputs of arms `a` and `b` in the rounds both ran.
    fn pairs(&self, a: usize, b: usize) -> Vec<(f64, f64)> {
        let (ra, rb) = (&self.rounds[a], &self.rounds[b]);
        ra.iter()
            .zip(&self.samples[a])
            .filter_map(|(r, &x)| {
                let j = rb.binary_search(r).ok()?;
                Some((x, self.samples[b][j]))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;

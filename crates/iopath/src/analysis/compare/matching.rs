//! Which case of A goes with which of B: cases match on their [`Key`].

use std::collections::HashMap;

use crate::result::{CaseResult, Job, MethodName, RunResult};

/// The identity of a case across results: method, arm (`direct#2`), and
/// the job.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    pub method: MethodName,
    /// `None` for the first arm (absent or 1 in the results).
    pub arm: Option<u32>,
    pub job: Job,
}

impl Key {
    pub fn of(c: &CaseResult) -> Key {
        Key {
            method: c.method.clone(),
            arm: c.arm.filter(|&a| a > 1),
            job: c.job(),
        }
    }
}

/// One case of the comparison and where it is: its case in each run of A
/// and of B (none where that run lacks it).
#[derive(Debug, Clone)]
pub struct Matched<'x> {
    pub key: Key,
    pub a: Vec<&'x CaseResult>,
    pub b: Vec<&'x CaseResult>,
}

/// Group the cases of every run of A and B by [`Key`] (the n-th case with
/// a key in a run goes with the n-th in every other run): A's first run's
/// order, then keys first seen in A's other runs, then B's own.
pub fn match_runs<'x>(a: &'x [RunResult], b: &'x [RunResult]) -> Vec<Matched<'x>> {
    // Where each (key, occurrence) went, and each run's count of a key:
    // linear in the cases.
    let mut at: HashMap<(Key, usize), usize> = HashMap::new();
    let mut out: Vec<Matched<'x>> = Vec::new();
    for (side_b, runs) in [(false, a), (true, b)] {
        for run in runs {
            let mut seen: HashMap<Key, usize> = HashMap::new();
            for c in &run.cases {
                let key = Key::of(c);
                let n = seen.entry(key.clone()).or_insert(0);
                let occurrence = *n;
                *n += 1;
                let i = *at.entry((key.clone(), occurrence)).or_insert_with(|| {
                    out.push(Matched {
                        key,
                        a: Vec::new(),
                        b: Vec::new(),
                    });
                    out.len() - 1
                });
                let m = &mut out[i];
                if side_b { &mut m.b } else { &mut m.a }.push(c);
            }
        }
    }
    out
}

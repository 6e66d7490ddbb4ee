//! Jobs fio runs at the same time (no `stonewall` between them) as one
//! case entry of streams: what keeps a group from running together, where
//! each job's part of the file starts, and the group's entry.

use iopath_io::Method;

use super::{FioJobFile, JobCase, MapOptions};
use crate::model::job::CaseSpec;
use crate::model::words::List;

/// Why the jobs of one group (run at the same time) cannot be one case of
/// streams: they must have one runtime, and with `--only-fio-engine` one
/// engine.
pub(super) fn group_problems(
    file: &FioJobFile,
    group: &[usize],
    mapped: &[JobCase],
    opts: MapOptions,
) -> Vec<String> {
    let mut p = Vec::new();
    let Some(&first) = group.first() else {
        return p;
    };
    let name = |i: usize| file.jobs[i].name.as_str();
    for &i in &group[1..] {
        if mapped[i].case.budget != mapped[first].case.budget {
            p.push(format!(
                "[{}] its runtime differs from job {}'s, which runs at the same time (no stonewall between them): iopath runs the streams of a group for one runtime (give them the same, or add `stonewall`)",
                name(i),
                name(first)
            ));
        }
        if opts.only_own_engine && mapped[i].own != mapped[first].own {
            p.push(format!(
                "[{}] its engine ({}) differs from job {}'s ({}), which runs at the same time: with --only-fio-engine iopath runs a group through one method (leave out --only-fio-engine to run the group through every method)",
                name(i),
                mapped[i].own.name(),
                name(first),
                mapped[first].own.name()
            ));
        }
    }
    p
}

/// Where each job's part of iopath's one file starts: in a group that
/// runs at the same time, jobs fio gives files of their own (no
/// `filename=`) each get a part of their own, one after the other, so
/// that no stream reads or writes another's blocks; every other job starts
/// at the file's start.
pub(super) fn offsets_of(mapped: &[JobCase], groups: &[Vec<usize>]) -> Vec<u64> {
    let mut offsets = vec![0u64; mapped.len()];
    for g in groups.iter().filter(|g| g.len() > 1) {
        let mut at = 0u64;
        for &i in g {
            if let (true, Some(b)) = (mapped[i].own_file, mapped[i].bytes) {
                offsets[i] = at;
                at = at.saturating_add(b);
            }
        }
    }
    offsets
}

/// The jobs of one group as one case entry of streams: labelled with
/// their names, run through each job's own engine (in file order), then
/// the other methods of the first job's list; the group's runtime its
/// budget.
pub(super) fn group_case(mut streams: Vec<CaseSpec>, owns: Vec<Method>) -> CaseSpec {
    let label = streams
        .iter()
        .filter_map(|s| s.label.clone())
        .collect::<Vec<_>>()
        .join(" + ");
    let listed = streams.first().and_then(|s| s.method.clone());
    let mut methods: Vec<crate::model::choice::MethodChoice> = Vec::new();
    for m in owns
        .into_iter()
        .map(Into::into)
        .chain(listed.map(|l| l.0).unwrap_or_default())
    {
        if !methods.contains(&m) {
            methods.push(m);
        }
    }
    let budget = streams.first().and_then(|s| s.budget);
    for s in &mut streams {
        (s.method, s.budget) = (None, None);
    }
    CaseSpec {
        label: Some(label),
        method: Some(List(methods)),
        budget,
        streams,
        ..CaseSpec::default()
    }
}

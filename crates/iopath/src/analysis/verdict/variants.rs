//! Names for the variants of a group (a preset's `group`: cases of one
//! pattern compared whatever else differs), as the verdict ranks them.

use super::Ranked;
use crate::result::CaseResult;

/// Names for the variants of a group: their labels when every one has a
/// label of its own, else method, block size, the depth it ran at and
/// threads, with `+copy` and the placement pair where they apply.
pub fn variant_names(group: &[&CaseResult]) -> Vec<String> {
    let labels: Vec<Option<&String>> = group.iter().map(|c| c.label.as_ref()).collect();
    let unique = |v: &[String]| {
        let mut s = v.to_vec();
        s.sort();
        s.dedup();
        s.len() == v.len()
    };
    if let Some(l) = labels.iter().copied().collect::<Option<Vec<&String>>>() {
        let l: Vec<String> = l.into_iter().cloned().collect();
        if unique(&l) {
            return l;
        }
    }
    let made: Vec<String> = group
        .iter()
        .map(|c| {
            let mut s = format!(
                "{} {} Q{}T{}",
                c.name(),
                crate::model::units::fmt_bs(c.block_size),
                c.queue_depth,
                c.threads
            );
            if c.copy_to_user {
                s.push_str(" +copy");
            }
            if let Some(p) = &c.pair {
                s.push_str(&format!(" ({p})"));
            }
            s
        })
        .collect();
    if unique(&made) {
        return made;
    }
    // Still alike: number them in the run's order.
    made.iter()
        .enumerate()
        .map(|(i, m)| format!("{m} #{}", i + 1))
        .collect()
}

/// True when the ranked variants differ in block size (a group): CPU per
/// I/O then compares unlike things, and CPU per MiB moved is compared.
pub(super) fn mixed_sizes(ranking: &[Ranked]) -> bool {
    let mut sizes: Vec<u64> = ranking
        .iter()
        .map(|r| r.block_size)
        .filter(|&b| b > 0)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes.len() > 1
}

/// A ranked method's CPU cost: ns per I/O, or with `mixed` block sizes ns
/// per MiB moved.
pub(super) fn cpu_cost(r: &Ranked, mixed: bool) -> f64 {
    if mixed && r.block_size > 0 {
        r.cpu_ns_per_io * (1 << 20) as f64 / r.block_size as f64
    } else {
        r.cpu_ns_per_io
    }
}

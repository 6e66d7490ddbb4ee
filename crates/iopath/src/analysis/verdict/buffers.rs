//! Huge-page buffers beside base pages (`--buffers pages,huge`): each
//! method's `+hugebuf` arm against its plain arm, as a verdict fact, so the
//! verdict can say what the buffers alone are worth ("huge-page buffers:
//! 1.5x at 64 KiB here").

use iopath_io::BufferBacking;

use super::{bw, versus, Verdict};
use crate::result::verdict_facts::{BufferPair, VerdictFact};
use crate::result::{CaseResult, Entrant};
use crate::stats;

/// The fact for verdict `v` over the run's `cases`: every method of its
/// ranking that ran with both backings, the huge arm against the pages arm;
/// `None` when no method did.
pub(super) fn fact(v: &Verdict, cases: &[CaseResult]) -> Option<VerdictFact> {
    let alpha = 1.0 - v.ci_level;
    let case_of = |e: &Entrant| {
        let name = e.to_string();
        cases.iter().find(|c| c.job() == v.job && c.name() == name)
    };
    let mut pairs = Vec::new();
    for r in v.ranking.iter().filter(|r| !r.reference) {
        let Entrant::Method { method, arm: None } = &r.method else {
            continue;
        };
        if method.buffers != BufferBacking::Huge {
            continue;
        }
        let pages = Entrant::Method {
            method: method.with_buffers(BufferBacking::Pages),
            arm: None,
        };
        let (Some(h), Some(p)) = (case_of(&r.method), case_of(&pages)) else {
            continue;
        };
        let Some(k) = versus(p, h, &bw, stats::EQUIVALENCE_MARGIN, alpha) else {
            continue;
        };
        pairs.push(BufferPair {
            pages,
            huge: r.method.clone(),
            ratio: k.ratio,
            ratio_ci: k.ratio_ci95,
            distinct: k.distinct,
        });
    }
    (!pairs.is_empty()).then_some(VerdictFact::HugeBuffers {
        block_size: v.job.block_size,
        pairs,
    })
}

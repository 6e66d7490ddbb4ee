//! The verdict's memory fact: what the method holding least costs in
//! speed against the one holding most ([`Verdict::memory_trade`]); with no
//! call on speed, only what each held, and no winner.

use super::facts::few;
use super::{Ranked, Verdict};
use crate::result::verdict_facts::{MemoryInterval, MemoryNoCall, MemorySpeed, VerdictFact};
use crate::result::Entrant;

/// The fact, when the memory held differs enough to say
/// ([`Verdict::memory_trade`]); `r` the real methods ranked.
pub(super) fn fact(v: &Verdict, r: &[&Ranked]) -> Option<VerdictFact> {
    let t = v.memory_trade.as_ref()?;
    let k = &t.speed;
    // The same rule for its interval as the speed fact's.
    let short = |name: &Entrant| r.iter().find(|m| m.method == *name).is_none_or(|m| few(m));
    let few_repetitions = short(&t.least) || short(&t.most);
    if k.undersampled || !v.called {
        // No call on speed: what each held, and no winner.
        return Some(VerdictFact::MemoryHeld {
            least: t.least.clone(),
            least_bytes: t.least_bytes,
            most: t.most.clone(),
            most_bytes: t.most_bytes,
            why: if v.called {
                MemoryNoCall::TooFewRepetitions
            } else {
                MemoryNoCall::NoCall
            },
        });
    }
    let speed = if !k.distinct {
        // Not "no difference": the interval may lie wholly on one side of
        // even and only reach into the margin (1.02-2.65x).
        let [lo, hi] = k.ratio_ci95;
        let margin = 1.0 + crate::stats::EQUIVALENCE_MARGIN;
        MemorySpeed::NotShownToDiffer {
            // No interval (no rounds to pair): nothing to show.
            interval: (lo > 0.0 && hi.is_finite()).then_some(MemoryInterval {
                ratio_ci: k.ratio_ci95,
                few_repetitions,
                // Else (unpaired, sequential schedule) the medians'
                // intervals overlap, though the ratio's lies beyond the
                // margin.
                reaches_even: lo <= margin && hi >= 1.0 / margin,
            }),
        }
    } else if k.ratio < 1.0 {
        MemorySpeed::Slower { ratio: k.ratio }
    } else {
        MemorySpeed::Faster {
            ratio: k.ratio,
            ratio_ci: k.ratio_ci95,
            few_repetitions,
        }
    };
    Some(VerdictFact::MemoryTrade {
        least: t.least.clone(),
        least_bytes: t.least_bytes,
        most: t.most.clone(),
        most_bytes: t.most_bytes,
        speed,
    })
}

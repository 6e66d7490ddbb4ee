//! The verdict's memory sentence: what the method holding least costs in
//! speed against the one holding most ([`Verdict::memory_trade`]); with no
//! call on speed, only what each held, and no winner.

use super::{ci, pct_slower, x, Ranked, Verdict};
use crate::model::units::fmt_bytes;
use crate::result::Entrant;

/// The sentence, when the memory held differs enough to say
/// ([`Verdict::memory_trade`]); `r` the real methods ranked.
pub(super) fn sentence(v: &Verdict, r: &[&Ranked]) -> Option<String> {
    let t = v.memory_trade.as_ref()?;
    let k = &t.speed;
    // The same rule for its interval as the speed sentence's.
    let n = |name: &Entrant| r.iter().find(|m| m.method == *name).map_or(0, |m| m.n);
    let few = n(&t.least) < 6 || n(&t.most) < 6;
    if k.undersampled || !v.called {
        // No call on speed: what each held, and no winner.
        return Some(format!(
            "Memory: {} held {}, {} {} ({}).",
            t.least,
            fmt_bytes(t.least_bytes),
            t.most,
            fmt_bytes(t.most_bytes),
            if v.called {
                "too few repetitions to tell which is faster"
            } else {
                "which is faster: no call yet"
            }
        ));
    }
    let speed = if !k.distinct {
        // Not "no difference": the interval may lie wholly on one side of
        // even and only reach into the margin (1.02-2.65x).
        let [lo, hi] = k.ratio_ci95;
        let margin = 1.0 + crate::stats::EQUIVALENCE_MARGIN;
        let why = if !(lo > 0.0 && hi.is_finite()) {
            // No interval (no rounds to pair): nothing to show.
            String::new()
        } else if lo <= margin && hi >= 1.0 / margin {
            format!(
                " ({}: it reaches within 3% of even)",
                ci(k.ratio_ci95, few, v.ci_level)
            )
        } else {
            // Unpaired (sequential schedule): the medians' intervals
            // overlap, though the ratio's lies beyond the margin.
            format!(
                " ({}; the medians' own intervals overlap)",
                ci(k.ratio_ci95, few, v.ci_level)
            )
        };
        format!("is not shown to differ in speed from {}{why}", t.most)
    } else if k.ratio < 1.0 {
        format!("is {} slower than {}", pct_slower(k.ratio), t.most)
    } else {
        format!(
            "is {} faster than {} ({})",
            x(k.ratio),
            t.most,
            ci(k.ratio_ci95, few, v.ci_level)
        )
    };
    Some(format!(
        "Memory: {} {speed} {} {} instead of {}.",
        t.least,
        if k.distinct && k.ratio < 1.0 {
            "but holds"
        } else {
            "and holds"
        },
        fmt_bytes(t.least_bytes),
        fmt_bytes(t.most_bytes)
    ))
}

//! `--neighbour`: what each method did to the reader next to it, per job:
//! the neighbour's p50/p99 and hit ratio alone (before) and beside the
//! method (during), medians over the measured repetitions, and one
//! sentence naming the gentlest and the harshest method.

use crate::result::neighbour::NeighbourWindow;
use crate::result::CaseResult;
use crate::units::fmt_ns;

/// Median of `xs` (0 when empty).
fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// One method's effect on the neighbour.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub method: String,
    pub before_p50: f64,
    pub before_p99: f64,
    pub before_hit: f64,
    pub during_p50: f64,
    pub during_p99: f64,
    pub during_hit: f64,
}

impl Effect {
    pub fn of(c: &CaseResult) -> Option<Effect> {
        if c.neighbour.is_empty() {
            return None;
        }
        let m = |f: &dyn Fn(&NeighbourWindow) -> f64, during: bool| {
            median(
                c.neighbour
                    .iter()
                    .map(|r| f(if during { &r.during } else { &r.before }))
                    .collect(),
            )
        };
        Some(Effect {
            method: c.name(),
            before_p50: m(&|w| w.p50_ns as f64, false),
            before_p99: m(&|w| w.p99_ns as f64, false),
            before_hit: m(&|w| w.hit_ratio(), false),
            during_p50: m(&|w| w.p50_ns as f64, true),
            during_p99: m(&|w| w.p99_ns as f64, true),
            during_hit: m(&|w| w.hit_ratio(), true),
        })
    }

    /// During over before, of the p99.
    pub fn p99_ratio(&self) -> f64 {
        self.during_p99 / self.before_p99.max(1.0)
    }
}

/// The sentence: the method that hurt the neighbour least and the one
/// that hurt it most.
pub fn sentence(effects: &[Effect]) -> Option<String> {
    let least = effects
        .iter()
        .min_by(|a, b| a.p99_ratio().total_cmp(&b.p99_ratio()))?;
    let most = effects
        .iter()
        .max_by(|a, b| a.p99_ratio().total_cmp(&b.p99_ratio()))?;
    let keep = |e: &Effect| {
        let r = e.p99_ratio();
        if r <= 1.05 {
            format!("{} keeps the neighbour's p99 within 5%", e.method)
        } else {
            format!("{} raises the neighbour's p99 {:.1}x", e.method, r)
        }
    };
    if effects.len() < 2 || least.method == most.method {
        return Some(keep(least));
    }
    Some(format!(
        "{}; {} (hit ratio {:.0}% → {:.0}%).",
        keep(least),
        keep(most),
        most.before_hit * 100.0,
        most.during_hit * 100.0
    ))
}

/// The text block for cases measured with a neighbour (empty without).
pub fn text(cases: &[CaseResult]) -> String {
    let mut out = String::new();
    let mut jobs: Vec<String> = Vec::new();
    for c in cases.iter().filter(|c| !c.neighbour.is_empty()) {
        let j = c.job().label();
        if !jobs.contains(&j) {
            jobs.push(j);
        }
    }
    for j in jobs {
        let effects: Vec<Effect> = cases
            .iter()
            .filter(|c| c.job().label() == j)
            .filter_map(Effect::of)
            .collect();
        out.push_str(&format!(
            "\nneighbour (random 4 KiB cached reads) beside {j}:\n"
        ));
        for e in &effects {
            out.push_str(&format!(
                "  {:<18} before p50 {} p99 {} hit {:.0}%   during p50 {} p99 {} ({:.1}x) hit {:.0}%\n",
                e.method,
                fmt_ns(e.before_p50 as u64),
                fmt_ns(e.before_p99 as u64),
                e.before_hit * 100.0,
                fmt_ns(e.during_p50 as u64),
                fmt_ns(e.during_p99 as u64),
                e.p99_ratio(),
                e.during_hit * 100.0
            ));
        }
        if let Some(s) = sentence(&effects) {
            out.push_str(&format!("  → {s}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::neighbour::NeighbourRep;

    fn case(method: &str, before_p99: u64, during_p99: u64, during_hits: u64) -> CaseResult {
        let w = |p99, hits| NeighbourWindow {
            reads: 100,
            hits,
            p50_ns: p99 / 4,
            p99_ns: p99,
        };
        CaseResult {
            method: method.into(),
            pattern: "write".into(),
            block_size: 1 << 20,
            neighbour: vec![NeighbourRep {
                before: w(before_p99, 100),
                during: w(during_p99, during_hits),
            }],
            ..CaseResult::default()
        }
    }

    #[test]
    fn the_sentence_names_the_gentlest_and_the_harshest_method() {
        let cases = [
            case("buffered", 10_000, 80_000, 60),
            case("dontcache", 10_000, 10_300, 100),
        ];
        let effects: Vec<Effect> = cases.iter().filter_map(Effect::of).collect();
        let s = sentence(&effects).unwrap();
        assert!(
            s.starts_with("dontcache keeps the neighbour's p99 within 5%; buffered raises the neighbour's p99 8.0x"),
            "{s}"
        );
        assert!(s.contains("100% → 60%"), "{s}");
        let t = text(&cases);
        assert!(
            t.contains("neighbour (random 4 KiB cached reads) beside write 1M"),
            "{t}"
        );
    }

    #[test]
    fn no_neighbour_no_text() {
        let mut c = case("buffered", 1, 1, 1);
        c.neighbour.clear();
        assert_eq!(text(&[c]), "");
    }
}

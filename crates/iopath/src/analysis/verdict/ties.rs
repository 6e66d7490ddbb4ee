//! Methods whose difference from the fastest is not shown, but whose
//! median is far from it: "tie for fastest" would say more than the
//! numbers do (mmap at half the speed, its interval reaching 1).

use super::Ranked;

/// How far (either way) a tied method's ratio to the fastest may be for
/// the verdict to call them a tie for fastest.
const NEAR: f64 = 1.10;

/// True when `m`'s ratio to the fastest is within [`NEAR`] of even.
pub(super) fn near(m: &Ranked) -> bool {
    m.fastest_ratio <= NEAR && m.fastest_ratio >= 1.0 / NEAR
}

/// `top measured 2.00x mmap (95% CI 0.93-4.20x)` for the `far` methods,
/// `vs` the way the verdict writes a ratio.
pub(super) fn far_clause(top: &Ranked, far: &[&Ranked], vs: &dyn Fn(&Ranked) -> String) -> String {
    let items: Vec<String> = far.iter().map(|m| vs(m)).collect();
    format!(
        "{} measured {}, not shown to differ",
        top.method,
        super::list(&items.iter().map(String::as_str).collect::<Vec<_>>())
    )
}

/// The speed sentence of a verdict with `far` ties: the near ones (`names`,
/// the fastest first) tie for fastest, the far ones are not shown to
/// differ (`clause`, [`far_clause`]), and the slower ones (`shown`) as
/// usual.
pub(super) fn sentence(
    label: &str,
    names: &[&crate::result::Entrant],
    clause: &str,
    why: &str,
    top: &Ranked,
    shown: &[String],
    no_rest: bool,
) -> String {
    let near = if names.len() >= 2 {
        format!("{} tie for fastest; ", super::list(names))
    } else {
        String::new()
    };
    let slower = if no_rest {
        String::new()
    } else {
        format!(
            "; {} is {}",
            top.method,
            super::list(&shown.iter().map(String::as_str).collect::<Vec<_>>())
        )
    };
    format!("{label}: {near}{clause} ({why}){slower}.")
}

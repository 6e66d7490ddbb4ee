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

//! Words for verdict facts (see [`super`]).

use crate::result::records::Verdict;

pub fn lines(v: &Verdict) -> Vec<String> {
    v.text.clone()
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;

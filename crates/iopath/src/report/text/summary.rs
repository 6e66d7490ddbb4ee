//! Words for summary facts (see [`super`]).

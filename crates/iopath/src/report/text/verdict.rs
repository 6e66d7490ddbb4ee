//! Words for verdict facts (see [`super`]).

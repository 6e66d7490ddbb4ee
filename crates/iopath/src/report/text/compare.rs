//! Words for compare facts (see [`super`]).

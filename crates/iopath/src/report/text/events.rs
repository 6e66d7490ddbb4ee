//! Words for events facts (see [`super`]).

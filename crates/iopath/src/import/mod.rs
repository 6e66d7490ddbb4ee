//! Where a job comes from: TOML job files ([`jobfile`]), the built-in
//! presets ([`preset`]) and fio job files ([`fio`]), each turned into a
//! [`crate::model::job::JobSpec`]. (Flags become one in the command line, `cli`.)

pub mod fio;
pub mod jobfile;
pub mod preset;

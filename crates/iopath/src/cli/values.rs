//! The value parsers of the command line's options: each checks a value
//! and says what is wrong with it on a line of its own.

use std::time::Duration;

use crate::model::words::{Pct, Word};

/// A preset's name: checked, and listed for completion and `--help`.
#[derive(Debug, Clone, Copy)]
pub(super) struct PresetName;

impl clap::builder::TypedValueParser for PresetName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let parse: fn(&str) -> Result<String, String> = |s| {
            crate::import::preset::find(s)
                .map(|p| p.name)
                .map_err(|e| own_line(e.0))
        };
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            crate::import::preset::names()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

/// `3`, `3%` or `0.5%`: a percentage above 0 and below 100, as a fraction.
pub(super) fn pct(s: &str) -> Result<f64, String> {
    Pct::parse_word(s).map(|p| p.0).map_err(own_line)
}

/// A value parser's message, which quotes the value given: its control
/// characters shown (`\x1b`), its line feeds too, so that the value
/// neither reaches the terminal as an escape nor starts a line of the
/// error (clap's whole message is made visible again by [`parse`]).
fn own_line(message: String) -> String {
    crate::model::untrusted::field(&message).into_owned()
}

pub(super) fn size(s: &str) -> Result<u64, String> {
    crate::model::units::parse_size(s).map_err(own_line)
}

pub(super) fn duration(s: &str) -> Result<Duration, String> {
    crate::model::units::parse_duration(s).map_err(own_line)
}

pub(super) fn file_layout(s: &str) -> Result<crate::result::mpi::FileLayout, String> {
    crate::result::mpi::FileLayout::parse_arg(s).map_err(own_line)
}

pub(super) fn fail_above(s: &str) -> Result<f64, String> {
    crate::analysis::compare::parse_fail_above(s).map_err(own_line)
}

pub(super) fn drift(s: &str) -> Result<f64, String> {
    crate::analysis::compare::parse_drift(s).map_err(own_line)
}

//! Tests of the fio job-file reader: syntax, units and options, errors,
//! golden dumps of the fixtures, a cross-check against the real fio, and
//! garbage input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Context, Env, FioError, FioJobFile, Keywords};

mod crosscheck;
mod errors;
mod garbage;
mod golden;
mod map;
mod options;
mod syntax;

/// Fixed keywords, so results do not depend on the machine.
pub(super) const KEYWORDS: Keywords = Keywords {
    pagesize: 4096,
    mb_memory: 16000,
    ncpus: 8,
};

pub(super) fn ctx(env: &[(&str, &str)]) -> Context {
    Context {
        env: Env::Fixed(
            env.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        ),
        keywords: KEYWORDS,
    }
}

/// The fixtures' directory.
pub(super) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio")
}

/// The environment the fixtures expect.
pub(super) const FIXTURE_ENV: [(&str, &str); 2] =
    [("IOPATH_FIO_DIR", "/srv/bench"), ("IOPATH_FIO_SIZE", "64m")];

/// Parse a job file given as text (named `job.fio` in a temporary-free
/// way: includes resolve against the fixtures).
pub(super) fn parse(text: &str) -> Result<FioJobFile, FioError> {
    super::parse_str(text, &fixtures().join("job.fio"), &ctx(&FIXTURE_ENV))
}

/// Parse, expecting success.
pub(super) fn ok(text: &str) -> FioJobFile {
    match parse(text) {
        Ok(f) => f,
        Err(e) => panic!("unexpected error: {e}\n--- input ---\n{text}"),
    }
}

/// Parse, expecting an error.
pub(super) fn err(text: &str) -> FioError {
    match parse(text) {
        Ok(f) => panic!("expected an error, got:\n{}", f.dump()),
        Err(e) => e,
    }
}

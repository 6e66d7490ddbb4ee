//! Every fixture's typed jobs, dumped and compared with a reviewed
//! snapshot.

use super::{ctx, fixtures, FIXTURE_ENV};

fn dump(name: &str) -> String {
    let path = fixtures().join(name);
    match crate::import::fio::parse_file_with(&path, &ctx(&FIXTURE_ENV)) {
        Ok(f) => f.dump(),
        Err(e) => panic!("{name}: {e}"),
    }
}

#[test]
fn ssd_suite() {
    insta::assert_snapshot!(dump("ssd-suite.fio"));
}

#[test]
fn tiobench() {
    insta::assert_snapshot!(dump("tiobench.fio"));
}

#[test]
fn randrw_mix() {
    insta::assert_snapshot!(dump("randrw-mix.fio"));
}

#[test]
fn multi_file() {
    insta::assert_snapshot!(dump("multi-file.fio"));
}

#[test]
fn include_env() {
    insta::assert_snapshot!(dump("include-env.fio"));
}

#[test]
fn io_uring() {
    insta::assert_snapshot!(dump("io-uring.fio"));
}

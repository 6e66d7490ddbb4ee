//! The mapping to iopath's job model, golden: every fixture as the TOML
//! `iopath import-fio` prints, or the reasons it is refused.

use super::super::map::{to_job, MapOptions};
use super::{ctx, fixtures, ok, FIXTURE_ENV};

/// The fixture mapped, as TOML or as its refusal (paths relative).
fn mapped(name: &str, opts: MapOptions) -> String {
    let path = fixtures().join(name);
    let file = super::super::parse_file_with(&path, &ctx(&FIXTURE_ENV)).unwrap();
    let text = match to_job(&file, opts) {
        Ok(m) => {
            let mut s = String::new();
            for i in &m.ignored {
                s.push_str(&format!("# left out: {i}\n"));
            }
            s + &toml::to_string(&m.job).unwrap()
        }
        Err(e) => format!("refused: {}", e.0),
    };
    text.replace(&format!("{}/", fixtures().display()), "")
}

#[test]
fn every_fixture_maps_or_says_why_not() {
    for name in [
        "ssd-suite.fio",
        "tiobench.fio",
        "randrw-mix.fio",
        "multi-file.fio",
        "io-uring.fio",
        "include-env.fio",
        "randrw-timed.fio",
    ] {
        let snap = name.trim_end_matches(".fio").replace('-', "_");
        insta::assert_snapshot!(format!("map_{snap}"), mapped(name, MapOptions::default()));
    }
    insta::assert_snapshot!(
        "map_randrw_mix_ignoring",
        mapped(
            "randrw-mix.fio",
            MapOptions {
                ignore_unknown: true,
                only_own_engine: true
            }
        )
    );
}

/// One job, mapped with `opts`: its only case entry, or the refusal.
fn one(text: &str, opts: MapOptions) -> Result<crate::model::job::JobSpec, String> {
    to_job(&ok(text), opts).map(|m| m.job).map_err(|e| e.0)
}

#[test]
fn engines_become_methods_and_the_own_engine_comes_first() {
    use iopath_io::Method;
    let own = MapOptions {
        only_own_engine: true,
        ..MapOptions::default()
    };
    for (opts, method) in [
        ("", Method::Buffered),
        ("direct=1", Method::Direct),
        ("ioengine=libaio\ndirect=1", Method::Aio),
        ("ioengine=libaio", Method::Buffered),
        ("ioengine=io_uring\ndirect=1", Method::Uring),
        ("ioengine=io_uring", Method::UringBuffered),
        (
            "ioengine=io_uring\ndirect=1\nsqthread_poll",
            Method::UringSqpoll,
        ),
        ("ioengine=io_uring\ndirect=1\nhipri", Method::UringIopoll),
        ("ioengine=mmap", Method::Mmap),
        ("ioengine=null", Method::Null),
        ("ioengine=pvsync2\nbuffered=0", Method::Direct),
    ] {
        let job = one(&format!("[j]\n{opts}\n"), own).unwrap();
        let m = job.cases[0].method.clone().unwrap().0;
        assert_eq!(m, vec![method], "{opts}");
        let all = one(&format!("[j]\n{opts}\n"), MapOptions::default()).unwrap();
        let m = all.cases[0].method.clone().unwrap().0;
        assert_eq!(m[0], method, "{opts}: its own engine first");
        assert!(m.len() > 3 && m.contains(&Method::Direct), "{opts}: {m:?}");
    }
    let e = one("[j]\nioengine=splice\n", own).unwrap_err();
    assert!(
        e.contains("ioengine=splice") && e.contains("job.fio:2"),
        "{e}"
    );
}

#[test]
fn fios_defaults_apply_not_iopaths() {
    let job = one("[j]\nrw=randread\n", MapOptions::default()).unwrap();
    let c = &job.cases[0];
    assert_eq!(c.bs.map(|b| b.0), Some(4096));
    assert_eq!(c.qd, Some(1), "fio's iodepth is 1 by default");
    assert_eq!(
        c.sync,
        Some(iopath_io::SyncPolicy::None),
        "fio does not fsync by default"
    );
    assert_eq!(
        job.run.time,
        Some(crate::model::words::RepTime::Pass),
        "no runtime: one pass"
    );
    let job = one(
        "[j]\nrw=write\nend_fsync=1\nruntime=10\ntime_based\nnumjobs=4\nio_size=1m\n",
        MapOptions::default(),
    )
    .unwrap();
    let c = &job.cases[0];
    assert_eq!(c.sync, Some(iopath_io::SyncPolicy::End));
    assert_eq!(c.threads.clone().unwrap().0, vec![4]);
    assert_eq!(
        c.touch, None,
        "time_based runs for the runtime, not io_size"
    );
    assert_eq!(
        job.run.time,
        Some(crate::model::words::RepTime::Limit(
            std::time::Duration::from_secs(10)
        ))
    );
}

#[test]
fn what_cannot_run_as_fio_would_is_refused_with_its_line() {
    for (text, why) in [
        ("[a]\n[b]\n", "run at the same time in fio"),
        ("[a]\nrw=rw\n", "sequential mix"),
        ("[a]\nrw=trim\n", "trims"),
        ("[a]\nrw=write:4k\n", "`:N` suffix"),
        ("[a]\nbsrange=4k-64k\n", "range of block sizes"),
        ("[a]\nfsync=8\n", "not every N writes"),
        ("[a]\nfilename=x:y\n", "several files"),
        ("[a]\nverify=crc32c\n", "does not verify"),
        (
            "[a]\nruntime=5\n[b]\nstonewall\nruntime=6\n",
            "different runtime",
        ),
        (
            "[a]\nfilename=/x\n[b]\nstonewall\nfilename=/y\n",
            "different file",
        ),
        ("[a]\nthread\n", "--ignore-unknown"),
    ] {
        let e = one(text, MapOptions::default()).unwrap_err();
        assert!(e.contains(why), "{text}: {e}");
        assert!(e.contains("job.fio"), "{text}: names the file: {e}");
    }
    // Stonewalled jobs run one after the other, as cases.
    let job = one(
        "[a]\nrw=read\n[b]\nstonewall\nrw=randwrite\n",
        MapOptions::default(),
    )
    .unwrap();
    let labels: Vec<_> = job.cases.iter().map(|c| c.label.clone().unwrap()).collect();
    assert_eq!(labels, ["a", "b"]);
}

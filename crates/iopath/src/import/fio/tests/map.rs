//! The mapping to iopath's job model, golden: every fixture as the TOML
//! `iopath import-fio` prints, or the reasons it is refused.

use super::super::map::{nearest_option, to_job, MapOptions};
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
        assert_eq!(m, vec![method.into()], "{opts}");
        let all = one(&format!("[j]\n{opts}\n"), MapOptions::default()).unwrap();
        let m = all.cases[0].method.clone().unwrap().0;
        assert_eq!(m[0], method.into(), "{opts}: its own engine first");
        assert!(
            m.len() > 3 && m.contains(&Method::Direct.into()),
            "{opts}: {m:?}"
        );
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
    // The runtime is the job's budget, not a repetition's length.
    assert_eq!(
        c.budget.map(|d| d.0),
        Some(std::time::Duration::from_secs(10))
    );
    assert_eq!(job.run.time, None);
}

#[test]
fn how_much_a_job_moves_follows_fio() {
    use crate::model::words::{Span, Until};
    // Without filename= each clone has a file of its own: iopath's file
    // holds them all; a smaller job addresses only its own bytes.
    let job = one(
        "[global]\nsize=8m\n[a]\nrw=read\nnumjobs=2\n[b]\nstonewall\nrw=randread\n",
        MapOptions::default(),
    )
    .unwrap();
    assert_eq!(job.run.size.map(|b| b.0), Some(16 << 20));
    assert_eq!(job.cases[0].span, None);
    assert_eq!(job.cases[1].span, Some(Span::Bytes(8 << 20)));
    // time_based: the runtime alone ends a repetition, sequential passes
    // start over; otherwise one pass (random too), cut at the runtime.
    let tb = one(
        "[s]\nrw=read\ntime_based\nruntime=1\n",
        MapOptions::default(),
    )
    .unwrap();
    assert_eq!(tb.cases[0].until, Some(Until::Time));
    let pass = one(
        "[s]\nrw=randread\nruntime=1\nsize=1m\n",
        MapOptions::default(),
    )
    .unwrap();
    assert_eq!(pass.cases[0].until, Some(Until::Pass));
}

#[test]
fn what_cannot_run_as_fio_would_is_refused_with_its_line() {
    for (text, why) in [
        (
            "[a]\nruntime=1\n[b]\nruntime=2\n",
            "its runtime differs from job a's, which runs at the same time",
        ),
        ("[a]\nrw=rw\n", "sequential mix"),
        ("[a]\nrw=trim\n", "trims"),
        ("[a]\nrw=write:4k\n", "`:N` suffix"),
        ("[a]\nbsrange=4k-64k\n", "range of block sizes"),
        ("[a]\nfsync=8\nfdatasync=2\n", "keep fsync= or fdatasync="),
        ("[a]\nfilename=x:y\n", "several files"),
        (
            "[a]\nfilename=/x\n[b]\nstonewall\nfilename=/y\n",
            "its filename differs",
        ),
        (
            "[a]\ndirectory=/x\n[b]\nstonewall\ndirectory=/y\n",
            "its directory differs",
        ),
        (
            "[a]\nzero_buffers=1\n[b]\nstonewall\n",
            "zero_buffers/buffer_compress_percentage differs",
        ),
        (
            "[a]\ninvalidate=0\n[b]\nstonewall\n",
            "its invalidate differs",
        ),
        ("[a]\nrate=10m\n", "--ignore-unknown"),
        (
            "[a]\niodpeth=32\n",
            "not an option fio knows; did you mean `iodepth`?",
        ),
        ("[a]\nrw=randrw\nbsrange=4k-4k,8k-8k\n", "one per direction"),
        ("[a]\nfsync=1\nfdatasync=4\n", "keep fsync= or fdatasync="),
        ("[a]\nrw=write\nfsync=1\nsync=1\n", "one sync policy"),
        (
            "[a]\nrw=write\nsync=dsync\nend_fsync=1\n",
            "one sync policy",
        ),
        (
            "[a]\nioengine=io_uring\ndirect=1\nhipri=1\nsqthread_poll=1\n",
            "not both",
        ),
        (
            "[a]\nioengine=pvsync2\ndirect=1\nhipri=1\n",
            "polled completions",
        ),
        ("[a]\nioengine=io_uring\nhipri=1\n", "without direct=1"),
        ("[a]\nfilename=/dev/iopath-no-such-disk\n", "no such device"),
        ("[a]\niodepth=5000\n", "depth of 1 to 4096"),
    ] {
        let e = one(text, MapOptions::default()).unwrap_err();
        assert!(e.contains(why), "{text}: {e}");
        assert!(e.contains("job.fio"), "{text}: names the file: {e}");
    }
    // Harmless options pass; fdatasync=1 is a sync after every write.
    let job = one(
        "[a]\nthread\nper_job_logs=0\nrw=write\nfdatasync=1\n",
        MapOptions::default(),
    )
    .unwrap();
    assert_eq!(job.cases[0].sync, Some(iopath_io::SyncPolicy::Each));
    assert_eq!(job.cases[0].sync_every, None);
    // Issue 30 item 4: every N > 1 writes is a sync every N writes beside
    // the policy (fio's none; its end_fsync), fsync or fdatasync as named.
    for (text, writes, call, sync) in [
        (
            "[a]\nrw=randwrite\nfdatasync=16\n",
            16,
            iopath_io::SyncCall::Fdatasync,
            iopath_io::SyncPolicy::None,
        ),
        (
            "[a]\nrw=write\nfsync=8\nend_fsync=1\n",
            8,
            iopath_io::SyncCall::Fsync,
            iopath_io::SyncPolicy::End,
        ),
        (
            "[a]\nrw=write\nfsync=0\nfdatasync=4\n",
            4,
            iopath_io::SyncCall::Fdatasync,
            iopath_io::SyncPolicy::None,
        ),
    ] {
        let c = &one(text, MapOptions::default()).unwrap().cases[0];
        assert_eq!(
            c.sync_every,
            Some(iopath_io::SyncEvery { writes, call }),
            "{text}"
        );
        assert_eq!(c.sync, Some(sync), "{text}");
    }
    // verify= is iopath's --verify; verify=0 is none.
    let v = one("[a]\nrw=write\nverify=crc32c\n", MapOptions::default()).unwrap();
    assert_eq!(v.run.verify, Some(true));
    let v = one("[a]\nrw=write\nverify=0\n", MapOptions::default()).unwrap();
    assert_eq!(v.run.verify, None);
    // Stonewalled jobs run one after the other, as cases.
    let job = one(
        "[a]\nrw=read\n[b]\nstonewall\nrw=randwrite\n",
        MapOptions::default(),
    )
    .unwrap();
    let labels: Vec<_> = job.cases.iter().map(|c| c.label.clone().unwrap()).collect();
    assert_eq!(labels, ["a", "b"]);
}

/// Suggestions skip options whose length alone puts them too far (the
/// fuzzer found a key of a few kilobytes cost an edit distance against
/// every option): the near ones are still suggested, a long one gets none.
#[test]
fn a_long_unknown_option_gets_no_suggestion() {
    assert_eq!(nearest_option("directt"), Some("direct"));
    assert_eq!(nearest_option("numjob"), Some("numjobs"));
    assert_eq!(nearest_option(&"iodepth".repeat(500)), None);
    // The refusal names each typo, with its suggestion where there is one.
    let long = format!("[a]\ndirectt=1\nnumjob=2\n{}=1\n", "iodepth".repeat(8));
    let e = one(&long, MapOptions::default()).unwrap_err();
    insta::assert_snapshot!(e.replace(&format!("{}/", fixtures().display()), ""));
}

/// `runtime=` is the job's budget across its methods and rounds, not the
/// length of each repetition: two jobs, each its own.
#[test]
fn runtime_is_the_jobs_budget_not_a_repetitions_length() {
    let text = "[global]\nfilename=/tmp/x\nsize=16M\nbs=4k\n\
                [a]\nrw=randread\nruntime=60\n[b]\nstonewall\nrw=randread\niodepth=8\nruntime=2\n";
    let spec = one(text, MapOptions::default()).unwrap();
    let budgets: Vec<Option<std::time::Duration>> =
        spec.cases.iter().map(|c| c.budget.map(|d| d.0)).collect();
    assert_eq!(
        budgets,
        vec![
            Some(std::time::Duration::from_secs(60)),
            Some(std::time::Duration::from_secs(2))
        ]
    );
    assert_eq!(spec.run.time, None);
}

/// Issue 30 item 4: jobs fio runs at the same time (no stonewall between
/// them) are one case entry whose streams are the jobs, each with its own
/// workload; the group runs through each job's own engine, then the rest.
#[test]
fn jobs_without_stonewall_become_one_case_of_streams() {
    use crate::model::words::Until;
    use iopath_io::Method;
    let text = "[global]\nsize=8m\nruntime=1\nfilename=/tmp/x\n\
                [reader]\nioengine=libaio\ndirect=1\nrw=randread\niodepth=4\n\
                [writer]\nrw=write\nbs=1m\nend_fsync=1\nfdatasync=16\n";
    let job = one(text, MapOptions::default()).unwrap();
    assert_eq!(job.cases.len(), 1, "{job:#?}");
    let group = &job.cases[0];
    assert_eq!(group.label.as_deref(), Some("reader + writer"));
    let methods: Vec<Method> = group
        .method
        .as_ref()
        .unwrap()
        .0
        .iter()
        .map(|c| c.method)
        .collect();
    assert_eq!(&methods[..2], &[Method::Aio, Method::Buffered]);
    assert_eq!(
        group.budget.map(|d| d.0),
        Some(std::time::Duration::from_secs(1))
    );
    let [r, w] = group.streams.as_slice() else {
        panic!("two streams: {group:#?}")
    };
    assert_eq!(r.label.as_deref(), Some("reader"));
    assert_eq!(
        r.pattern.as_ref().unwrap().0,
        vec![crate::model::Pattern::RandRead]
    );
    assert_eq!((r.bs.map(|b| b.0), r.qd), (Some(4096), Some(4)));
    assert_eq!(
        w.pattern.as_ref().unwrap().0,
        vec![crate::model::Pattern::Write]
    );
    assert_eq!((w.bs.map(|b| b.0), w.qd), (Some(1 << 20), Some(1)));
    assert_eq!(w.sync, Some(iopath_io::SyncPolicy::End));
    assert_eq!(w.sync_every.map(|e| e.writes), Some(16));
    assert_eq!((r.until, w.until), (Some(Until::Pass), Some(Until::Pass)));
    assert!(r.method.is_none() && w.method.is_none() && r.budget.is_none());
    assert_eq!((r.offset, w.offset), (None, None), "one file: fio's too");
    assert_eq!(job.run.size.map(|b| b.0), Some(8 << 20));
    // Without filename= fio gives each job a file of its own: each stream
    // has a part of iopath's file of its own.
    let own = one(
        &text.replace("filename=/tmp/x\n", ""),
        MapOptions::default(),
    )
    .unwrap();
    let s = &own.cases[0].streams;
    assert_eq!(own.run.size.map(|b| b.0), Some(16 << 20));
    assert_eq!(
        (s[0].offset, s[1].offset.map(|b| b.0)),
        (None, Some(8 << 20))
    );
    assert_eq!(s[1].span, Some(crate::model::words::Span::Bytes(8 << 20)));
    // With stonewall, the same jobs are two cases, one after the other.
    let walled = text.replace("[writer]\n", "[writer]\nstonewall\n");
    let job = one(&walled, MapOptions::default()).unwrap();
    assert_eq!(job.cases.len(), 2);
    assert!(job.cases.iter().all(|c| c.streams.is_empty()));
    // Through its own engines only, a group of two engines is refused.
    let own = MapOptions {
        only_own_engine: true,
        ..MapOptions::default()
    };
    let e = one(text, own).unwrap_err();
    assert!(
        e.contains("[writer] its engine (buffered) differs from job reader's (aio)"),
        "{e}"
    );
}

//! Errors name the file, the line, the option and its value.

use super::*;
use crate::import::fio::{BadValue, ErrorKind, Include, Problem, Syntax};

#[test]
fn a_bad_value_names_file_line_key_and_value() {
    let e = err("[global]\nbs=4k\n\n[j]\niodepth=lots\n");
    assert_eq!(e.kind(), ErrorKind::BadValue);
    assert!(e.at.file.ends_with("tests/fixtures/fio/job.fio"));
    assert_eq!(e.at.line, 5);
    assert_eq!(e.key.as_deref(), Some("iodepth"));
    assert_eq!(e.value.as_deref(), Some("lots"));
    let shown = e.to_string();
    assert!(
        shown.ends_with("job.fio:5: iodepth=lots: \"lots\" is not a number"),
        "{shown}"
    );
}

#[test]
fn an_out_of_range_value_says_the_range() {
    let e = err("[j]\nrwmixread=120\n");
    assert_eq!((e.at.line, e.key.as_deref()), (2, Some("rwmixread")));
    assert_eq!(e.value.as_deref(), Some("120"));
    assert_eq!(
        e.bad_value(),
        Some(&BadValue::OutOfRange {
            value: 120,
            min: 0,
            max: 100
        })
    );
}

#[test]
fn a_missing_environment_variable() {
    let e = err("[j]\nrw=read\nfilename=${IOPATH_FIO_NOT_SET}/f\n");
    assert_eq!(e.kind(), ErrorKind::MissingEnv);
    assert_eq!(e.at.line, 3);
    assert_eq!(e.key.as_deref(), Some("filename"));
    assert_eq!(e.value.as_deref(), Some("${IOPATH_FIO_NOT_SET}/f"));
    assert_eq!(
        *e.problem,
        Problem::MissingEnv {
            name: "IOPATH_FIO_NOT_SET".into()
        }
    );
    let e = err("[j]\nsize=${OOPS\n");
    assert_eq!(e.at.line, 2);
    assert_eq!(*e.problem, Problem::Syntax(Syntax::UnclosedEnv));
    assert_eq!(
        *err("[j]\nsize=${}\n").problem,
        Problem::Syntax(Syntax::EmptyEnv)
    );
}

#[test]
fn an_include_cycle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.inc"), "bs=4k\ninclude b.inc\n").unwrap();
    std::fs::write(dir.path().join("b.inc"), "\niodepth=2\ninclude a.inc\n").unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(&main, "[j]\ninclude a.inc\n").unwrap();
    let e = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncludeCycle);
    assert!(e.at.file.ends_with("b.inc"));
    assert_eq!(e.at.line, 3);
    let Problem::IncludeCycle { name, chain } = &*e.problem else {
        panic!("not a cycle: {e}");
    };
    assert_eq!(name, "a.inc");
    let files: Vec<_> = chain.iter().filter_map(|p| p.file_name()).collect();
    assert_eq!(files, ["main.fio", "a.inc", "b.inc", "a.inc"]);
    // Including itself.
    std::fs::write(&main, "[j]\ninclude main.fio\n").unwrap();
    let e = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap_err();
    assert_eq!((e.kind(), e.at.line), (ErrorKind::IncludeCycle, 2));
}

/// An include of a device, FIFO or directory is refused before it is
/// read (`include /dev/zero` read until memory ran out).
#[test]
fn an_include_of_something_not_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.fio");
    for target in ["/dev/zero", "/dev/null", "/tmp"] {
        std::fs::write(&main, format!("[j]\ninclude {target}\n")).unwrap();
        let e = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap_err();
        assert_eq!(e.at.line, 2);
        assert!(
            matches!(&*e.problem, Problem::Include(Include::NotAFile { name, .. }) if name == target),
            "{e}"
        );
    }
}

#[test]
fn a_missing_job_file() {
    let e = crate::import::fio::parse_file_with(Path::new("/nonexistent/x.fio"), &ctx(&[]))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.fio: cannot read the job file"),
        "{e}"
    );
}

#[test]
fn errors_in_included_files_name_the_included_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.inc"), "; fine\nruntime=5sec\n").unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(&main, "[j]\ninclude bad.inc\n").unwrap();
    let e = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap_err();
    assert!(e.at.file.ends_with("bad.inc"));
    assert_eq!((e.at.line, e.key.as_deref()), (2, Some("runtime")));
}

#[test]
fn a_line_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(&main, b"; caf\xe9 comment\n[j]\nfilename=caf\xe9\n").unwrap();
    let e = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap_err();
    assert_eq!((e.kind(), e.at.line), (ErrorKind::Syntax, 3));
}

/// The wording of every kind of mistake, checked once: the messages a
/// user reads (after `FILE:LINE: key=value: `), one per line.
#[test]
fn every_message_reads_as_written() {
    let inputs = [
        "[j]\niodepth=lots",
        "[j]\nrwmixread=120",
        "[j]\nfilename=${IOPATH_FIO_NOT_SET}/f",
        "[j]\nsize=${OOPS",
        "[j]\nsize=${}",
        "[j]\nfilename=$HOME/x",
        "[j",
        "[  ]",
        "bs=4k\n[j]",
        "[j]\nincludes x",
        "[j]\ninclude",
        "[j]\n=4k",
        "[j]\nbad key=1",
        "[j]\nfilename=/tmp/$ncpus",
        "[j]\ndirect",
        "[j]\nbs= 4k",
        "[j]\nfilename=",
        "[j]\nnumjobs=0",
        "[j]\nioengine=a b",
        "[j]\nioengine=libaio\nfixedbufs",
        "[j]\nsync=2",
        "[j]\nkb_base=1001",
        "[j]\nverify=crc33",
        "[j]\nnuma_mem_policy=spread",
        "[j]\nrw=randomread",
        "[j]\nrw=write:",
        "[j]\nrw=randread:0",
        "[j]\nbs=1k,2k,3k,4k",
        "[j]\nbs=4k-8k",
        "[j]\nbs=0",
        "[j]\nbsrange=4k",
        "[j]\nbsrange=,4k-8k",
        "[j]\nfilesize=1m,2m",
        "[j]\nfilesize=0",
        "[j]\nfilesize=2m-1m",
        "[j]\nfilename=:",
        "[j]\ncpus_allowed=3-1",
        "[j]\nnuma_mem_policy=local:0",
        "[j]\nnuma_mem_policy=prefer:0-1",
        "[j]\nnuma_mem_policy=bind",
        "[j]\nsize=0%",
        "[j]\nsize=",
        "[j]\nsize=1.5k",
        "[j]\nsize=0x1k",
        "[j]\nsize=99999999999999999999",
        "[j]\nfilesize=10%",
        "[j]\nsize=1%%",
        "[j]\nsize=10z",
        "[j]\nsize=4ki",
        "[j]\nsize=4kx",
        "[j]\nruntime=0x10",
        "[j]\nruntime=10sec",
        "[j]\nruntime=10ns",
        "[j]\ndirect=2",
        "[j]\niodepth=4,8",
        "[j]\nsize=(0-4k)",
        "[j]\nruntime=(0-1)",
        "[j]\nruntime=(1s+500ms)",
        "[j]\nsize=(1+",
        "[j]\nsize=(5%2)",
        "[j]\nsize=(1.5)",
        "[j]\nsize=(1 2)",
        "[j]\nsize=(1",
        "[j]\nsize=(1/0)",
        "[j]\nsize=(99999999999p*99999999999p)",
        "[j]\niodepth=$ncpus*4k",
    ];
    let deep = format!("[j]\nsize={}1{}", "(".repeat(70), ")".repeat(70));
    let long = format!("[{}]", "n".repeat(256));
    let shown: Vec<String> = inputs
        .iter()
        .map(|s| s.to_string())
        .chain([deep, long])
        .map(|text| {
            let e = err(&text);
            let at = format!("{}: ", e.at);
            let shown = e.to_string();
            let first = text.lines().last().unwrap_or_default();
            let first: String = first.chars().take(24).collect();
            format!("{first:24} | {}", shown.strip_prefix(&at).unwrap_or(&shown))
        })
        .collect();
    insta::assert_snapshot!(shown.join("\n"));
}

/// The include mistakes' wording, with the temporary directory's name
/// taken out.
#[test]
fn include_messages_read_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    write("sect.inc", "bs=4k\n[other]\n");
    write("loop.inc", "include loop.inc\n");
    let cases = [
        "[j]\ninclude sect.inc\n",
        "[j]\ninclude missing.inc\n",
        "[j]\ninclude loop.inc\n",
        "[j]\ninclude /dev/null\n",
    ];
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let shown: Vec<String> = cases
        .iter()
        .map(|text| {
            let main = write("main.fio", text);
            let e = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap_err();
            e.to_string()
                .replace(&base.display().to_string(), "DIR")
                .replace(&dir.path().display().to_string(), "DIR")
        })
        .collect();
    insta::assert_snapshot!(shown.join("\n"));
}

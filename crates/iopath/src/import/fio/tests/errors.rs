//! Errors name the file, the line, the option and its value.

use super::*;
use crate::import::fio::ErrorKind;

#[test]
fn a_bad_value_names_file_line_key_and_value() {
    let e = err("[global]\nbs=4k\n\n[j]\niodepth=lots\n");
    assert_eq!(e.kind, ErrorKind::BadValue);
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
    assert!(
        e.to_string()
            .contains("rwmixread=120: 120 is out of fio's range 0 to 100"),
        "{e}"
    );
}

#[test]
fn a_missing_environment_variable() {
    let e = err("[j]\nrw=read\nfilename=${IOPATH_FIO_NOT_SET}/f\n");
    assert_eq!(e.kind, ErrorKind::MissingEnv);
    assert_eq!(e.at.line, 3);
    assert_eq!(e.key.as_deref(), Some("filename"));
    assert_eq!(e.value.as_deref(), Some("${IOPATH_FIO_NOT_SET}/f"));
    let shown = e.to_string();
    assert!(shown.contains("job.fio:3: filename=${IOPATH_FIO_NOT_SET}/f: environment variable IOPATH_FIO_NOT_SET is not set"), "{shown}");
    let e = err("[j]\nsize=${OOPS\n");
    assert_eq!((e.kind, e.at.line), (ErrorKind::Syntax, 2));
    assert!(e.message.contains("without a closing"));
    assert!(err("[j]\nsize=${}\n")
        .message
        .contains("names no environment variable"));
}

#[test]
fn an_include_cycle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.inc"), "bs=4k\ninclude b.inc\n").unwrap();
    std::fs::write(dir.path().join("b.inc"), "\niodepth=2\ninclude a.inc\n").unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(&main, "[j]\ninclude a.inc\n").unwrap();
    let e = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::IncludeCycle);
    assert!(e.at.file.ends_with("b.inc"));
    assert_eq!(e.at.line, 3);
    let shown = e.to_string();
    assert!(
        shown.contains("b.inc:3: include a.inc: include cycle: "),
        "{shown}"
    );
    assert!(
        shown.contains("main.fio -> ") && shown.ends_with("a.inc"),
        "{shown}"
    );
    // Including itself.
    std::fs::write(&main, "[j]\ninclude main.fio\n").unwrap();
    let e = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap_err();
    assert_eq!((e.kind, e.at.line), (ErrorKind::IncludeCycle, 2));
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
        assert_eq!((e.kind, e.at.line), (ErrorKind::Include, 2), "{e}");
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}

#[test]
fn a_missing_job_file() {
    let e = crate::import::fio::parse_file_with(Path::new("/nonexistent/x.fio"), &ctx(&[]))
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Io);
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
    assert_eq!((e.kind, e.at.line), (ErrorKind::Syntax, 3));
}

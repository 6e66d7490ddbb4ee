//! The INI dialect: sections, comments, blanks, bare flags, includes,
//! `${VAR}`, keywords and arithmetic.

use super::*;
use crate::import::fio::{
    ini, BadValue, ErrorKind, Include, Problem, RwKind, Size, Syntax, ValueError,
};

fn sections(text: &str) -> Vec<ini::Section> {
    ini::read_str(text, Path::new("/x/job.fio"), &ctx(&[("FOO", "bar")])).unwrap()
}

fn entries(text: &str) -> Vec<(String, Option<String>, u32)> {
    sections(text)
        .into_iter()
        .flat_map(|s| s.entries)
        .map(|e| (e.key, e.value, e.at.line))
        .collect()
}

fn kv(k: &str, v: &str, line: u32) -> (String, Option<String>, u32) {
    (k.to_string(), Some(v.to_string()), line)
}

#[test]
fn comments_blank_lines_and_crlf() {
    let got = entries(
        "; leading comment\n# another\n   ; indented comment\n\n[j]\r\nbs=4k ; trailing\r\nsize=1m# hash\nfilename=a#b;c\n\t\nrw=read\t;\n",
    );
    assert_eq!(
        got,
        vec![
            kv("bs", "4k", 6),
            kv("size", "1m", 7),
            kv("filename", "a", 8),
            kv("rw", "read", 10)
        ]
    );
}

#[test]
fn blanks_around_the_equals_sign() {
    let s = sections("[j]\nbs =4k\n  iodepth= 8\nsize\t=\t1m\n");
    let e = &s[0].entries;
    assert_eq!(
        (e[0].key.as_str(), e[0].value.as_deref()),
        ("bs", Some("4k"))
    );
    assert!(!e[0].space_after_eq);
    assert_eq!(
        (e[1].key.as_str(), e[1].value.as_deref()),
        ("iodepth", Some("8"))
    );
    assert!(e[1].space_after_eq);
    assert!(e[2].space_after_eq);
    // fio reads `iodepth= 8` as 8, `bs= 4k` as 4 bytes and refuses `rw= read`.
    assert_eq!(
        ok("[j]\niodepth= 8\n").jobs[0]
            .iodepth
            .as_ref()
            .unwrap()
            .value,
        8
    );
    for bad in [
        "bs= 4k",
        "size = 1m",
        "rw = read",
        "runtime= 1m",
        "filename= /x",
    ] {
        let e = err(&format!("[j]\n{bad}\n"));
        assert_eq!(e.bad_value(), Some(&BadValue::BlankAfterEq), "{bad}: {e}");
    }
    let d = ok("[j]\ndescription= text\n");
    assert_eq!(d.jobs[0].description.as_ref().unwrap().value, "text");
}

#[test]
fn section_headers() {
    let s = sections("[global]\n[ my job ]\n[globalfoo]\n[j] ; c\n");
    let names: Vec<(&str, bool)> = s.iter().map(|s| (s.name.as_str(), s.global)).collect();
    assert_eq!(
        names,
        [
            ("global", true),
            (" my job ", false),
            ("globalfoo", true),
            ("j", false)
        ]
    );
    assert_eq!(s[3].at.line, 4);
    for bad in ["[j", "[]", "[  ]", "[j]x"] {
        let e = err(bad);
        assert_eq!(e.kind(), ErrorKind::Syntax, "{bad}");
        assert_eq!(e.at.line, 1);
    }
    let long = format!("[{}]", "n".repeat(256));
    assert_eq!(
        *err(&long).problem,
        Problem::Syntax(Syntax::LongSectionName { most: 255 })
    );
}

#[test]
fn options_before_any_section_are_refused() {
    let e = err("bs=4k\n[j]\n");
    assert_eq!(e.at.line, 1);
    assert_eq!(
        *e.problem,
        Problem::Syntax(Syntax::OutsideSection {
            line: "bs=4k".into()
        })
    );
}

#[test]
fn bare_flags() {
    let f = ok("[j]\ntime_based\nstonewall=0\ngroup_reporting\n");
    let j = &f.jobs[0];
    assert!(j.time_based.as_ref().unwrap().value);
    assert_eq!(j.time_based.as_ref().unwrap().text, None);
    assert!(!j.stonewall.as_ref().unwrap().value);
    assert!(j.group_reporting.as_ref().unwrap().value);
    // fio: "Option direct requires an argument".
    let e = err("[j]\ndirect\n");
    assert_eq!(e.key.as_deref(), Some("direct"));
    assert_eq!(
        e.bad_value(),
        Some(&BadValue::NeedsValue {
            key: "direct".into(),
            canon: "direct"
        })
    );
    // A bare unknown option is kept as one.
    let f = ok("[j]\nthread\n");
    assert_eq!(f.jobs[0].unknown[0].key, "thread");
    assert_eq!(f.jobs[0].unknown[0].value, None);
}

#[test]
fn globals_apply_to_the_jobs_after_them() {
    let f = ok("[global]\nbs=8k\niodepth=2\n[a]\n[global]\niodepth=4\n[b]\niodepth=16\n[c]\n[global]\nsize=1m\n");
    let depth: Vec<u32> = f
        .jobs
        .iter()
        .map(|j| j.iodepth.as_ref().unwrap().value)
        .collect();
    assert_eq!(depth, [2, 16, 4]);
    assert!(f
        .jobs
        .iter()
        .all(|j| j.bs.as_ref().unwrap().value.read == 8192));
    assert!(
        f.jobs.iter().all(|j| j.size.is_none()),
        "a trailing [global] applies to nothing"
    );
    assert_eq!(f.jobs[2].iodepth.as_ref().unwrap().at.line, 6);
}

#[test]
fn later_values_win_and_names() {
    let f = ok("[j]\nbs=4k\nbs=8k\nname=renamed\n[k]\n");
    assert_eq!(f.jobs[0].bs.as_ref().unwrap().value.read, 8192);
    assert_eq!(f.jobs[0].name, "renamed");
    assert_eq!(f.jobs[1].name, "k");
    // fio's own examples name the [global]: no effect, the job keeps its
    // section's name.
    let f = ok("[global]\nname=x\n[j]\n");
    assert_eq!(f.jobs[0].name, "j");
}

#[test]
fn kb_base_applies_to_its_whole_section_as_in_fio() {
    // fio parses kb_base before the section's other options.
    let f = ok("[global]\nsize=1m\n[j]\nbs=1k\nkb_base=1000\n[k]\n");
    let j = &f.jobs[0];
    assert_eq!(j.bs.as_ref().unwrap().value.read, 1000);
    assert_eq!(
        j.size.as_ref().unwrap().value,
        Size::Bytes(1 << 20),
        "converted in [global]"
    );
    assert_eq!(f.jobs[1].kb_base, None);
    let f = ok("[global]\nkb_base=1000\n[j]\nsize=1m\n");
    assert_eq!(
        f.jobs[0].size.as_ref().unwrap().value,
        Size::Bytes(1_000_000)
    );
}

#[test]
fn includes_resolve_next_to_the_including_file() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("a.inc"), "bs=8k\ninclude b.inc\n").unwrap();
    std::fs::write(sub.join("b.inc"), "; comment\niodepth=4\n").unwrap();
    let main = sub.join("main.fio");
    std::fs::write(
        &main,
        "[global]\ninclude a.inc\n[j]\ninclude=b.inc\nrw=write\n",
    )
    .unwrap();
    let f = crate::import::fio::parse_file_with(&main, &ctx(&[])).unwrap();
    let j = &f.jobs[0];
    assert_eq!(j.bs.as_ref().unwrap().at.file, sub.join("a.inc"));
    assert_eq!(j.bs.as_ref().unwrap().at.line, 1);
    assert_eq!(j.iodepth.as_ref().unwrap().at.file, sub.join("b.inc"));
    assert_eq!(j.iodepth.as_ref().unwrap().at.line, 2);
    assert_eq!(j.rw.as_ref().unwrap().at.line, 5);
}

#[test]
fn include_mistakes() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let read = |p: &Path| crate::import::fio::parse_file_with(p, &ctx(&[])).unwrap_err();
    write("sect.inc", "bs=4k\n[other]\n");
    let e = read(&write("m1.fio", "[j]\ninclude sect.inc\n"));
    assert_eq!((e.kind(), e.at.line), (ErrorKind::Include, 2));
    assert!(e.at.file.ends_with("sect.inc"));
    let e = read(&write("m2.fio", "include sect.inc\n[j]\n"));
    assert!(matches!(
        *e.problem,
        Problem::Syntax(Syntax::OutsideSection { .. })
    ));
    let e = read(&write("m3.fio", "[j]\ninclude missing.inc\n"));
    assert!(
        matches!(&*e.problem, Problem::Include(Include::NotFound { name, .. }) if name == "missing.inc"),
        "{e}"
    );
    let e = read(&write("m4.fio", "[j]\ninclude\n"));
    assert_eq!(*e.problem, Problem::Syntax(Syntax::IncludeNeedsName));
    let e = read(&write("m5.fio", "[j]\nincludes x\n"));
    assert_eq!(e.kind(), ErrorKind::Syntax);
}

#[test]
fn env_expansion() {
    let f = ok("[j]\ndirectory=${IOPATH_FIO_DIR}/x\nsize=${IOPATH_FIO_SIZE}\n");
    let j = &f.jobs[0];
    assert_eq!(j.directory.as_ref().unwrap().value, ["/srv/bench/x"]);
    assert_eq!(j.size.as_ref().unwrap().value, Size::Bytes(64 << 20));
    assert_eq!(j.size.as_ref().unwrap().text.as_deref(), Some("64m"));
    // The whole line is expanded, the key too, as in fio.
    let s = sections("[j]\n${FOO}dir=1\n");
    assert_eq!(s[0].entries[0].key, "bardir");
    // Not rescanned: a value holding "${" stays.
    let s = ini::read_str("[j]\nx=${A}\n", Path::new("j.fio"), &ctx(&[("A", "${B}")])).unwrap();
    assert_eq!(s[0].entries[0].value.as_deref(), Some("${B}"));
}

#[test]
fn dollar_without_braces() {
    // fio expands only ${VAR}; a bare $NAME would be used literally.
    let e = err("[j]\nfilename=$HOME/x\n");
    assert_eq!(
        *e.problem,
        Problem::Syntax(Syntax::BareDollar {
            name: "HOME".into()
        })
    );
    assert_eq!(
        ok("[j]\ndescription=costs $HOME\n").jobs[0]
            .description
            .as_ref()
            .unwrap()
            .value,
        "costs $HOME"
    );
    assert_eq!(
        ok("[j]\ndescription=$5\n").jobs[0]
            .description
            .as_ref()
            .unwrap()
            .value,
        "$5"
    );
}

#[test]
fn keywords_and_their_bc_arithmetic() {
    let f = ok("[j]\nbs=$pagesize\nnumjobs=$ncpus\nsize=$mb_memory\niodepth=$ncpus*2\nio_size=$mb_memory/3\nfsync=$ncpus-1\n");
    let j = &f.jobs[0];
    assert_eq!(j.bs.as_ref().unwrap().value.read, 4096);
    assert_eq!(j.numjobs.as_ref().unwrap().value, 8);
    assert_eq!(
        j.size.as_ref().unwrap().value,
        Size::Bytes(16000),
        "bc gives a plain number: bytes"
    );
    assert_eq!(j.iodepth.as_ref().unwrap().value, 16);
    assert_eq!(j.io_size.as_ref().unwrap().value, Size::Bytes(5333));
    assert_eq!(
        j.fsync.as_ref().unwrap().value,
        7,
        "bc runs before fio splits at '-'"
    );
    // Replaced anywhere, even glued to text; then bc sees the value.
    let e = err("[j]\nfilename=/tmp/$ncpus\n");
    assert!(matches!(e.bad_value(), Some(BadValue::Bc(_))), "{e}");
    let e = err("[j]\ndescription=uses $ncpus - fast\n");
    assert!(matches!(e.bad_value(), Some(BadValue::Bc(_))), "{e}");
    // fio skips bc for long lines.
    let long = format!("[j]\ndescription={} $ncpus - x\n", "d".repeat(130));
    assert!(ok(&long).jobs[0]
        .description
        .as_ref()
        .unwrap()
        .value
        .ends_with(" 8 - x"));
}

#[test]
fn parenthesised_arithmetic() {
    let f = ok("[j]\nbs=(4k*2)\nsize=(1g/2)\nruntime=(2*30)\nramp_time=(1m+30s)\niodepth=(4+4)\n");
    let j = &f.jobs[0];
    assert_eq!(j.bs.as_ref().unwrap().value.write, 8192);
    assert_eq!(j.size.as_ref().unwrap().value, Size::Bytes(1 << 29));
    assert_eq!(j.runtime.as_ref().unwrap().value.as_secs(), 60);
    assert_eq!(j.ramp_time.as_ref().unwrap().value.as_secs(), 90);
    assert_eq!(j.iodepth.as_ref().unwrap().value, 8);
    // fio splits at '-' before it sees the expression.
    let e = err("[j]\niodepth=(8-2)\n");
    assert_eq!(
        e.bad_value(),
        Some(&BadValue::Number(ValueError::Split { at: '-' }))
    );
    let e = err("[j]\nsize=(5%2)\n");
    assert_eq!(e.bad_value(), Some(&BadValue::Number(ValueError::Operator)));
}

#[test]
fn patterns_in_file_order() {
    let f = ok("[a]\nrw=trim\n[b]\nrw=randtrimwrite\n[c]\n");
    assert_eq!(f.jobs[0].rw.as_ref().unwrap().value.kind, RwKind::Trim);
    assert!(f.jobs[1].rw.as_ref().unwrap().value.kind.trims());
    assert_eq!(f.jobs[2].rw, None);
    assert_eq!(
        f.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
}

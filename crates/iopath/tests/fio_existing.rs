//! A fio job's `size=` against an existing file the run uses (its
//! `filename=`, or `--file`): fio lays a smaller file out again at that
//! size, replacing it; iopath refuses it (it never rewrites a file it did
//! not create) and leaves it as it was, and gives the job the first
//! `size=` bytes of a larger one, as fio does.

mod common;

use common::*;

/// `iopath run --fio JOB ARGS` for one short direct repetition.
fn run_fio(job: &std::path::Path, args: &[&str]) -> std::process::Output {
    iopath()
        .args(["run", "--fio"])
        .arg(job)
        .args(args)
        .args(["--methods", "direct", "--repeat", "1", "--quiet"])
        .output()
        .unwrap()
}

#[test]
fn an_existing_file_smaller_than_the_jobs_size_is_refused_and_left_as_it_was() {
    let dir = scratch();
    let data = dir.path().join("small.dat");
    let bytes = vec![5u8; 1 << 20];
    std::fs::write(&data, &bytes).unwrap();
    let job = dir.path().join("small.fio");
    let body = |size: &str, file: Option<&std::path::Path>| {
        let name = file.map_or(String::new(), |f| format!("filename={}\n", f.display()));
        format!("[j]\n{name}size={size}\nrw=randread\nbs=4k\nruntime=1\n")
    };
    // Named by the job, and by --file: used whole without a word before.
    std::fs::write(&job, body("64m", Some(&data))).unwrap();
    let named = run_fio(&job, &[]);
    std::fs::write(&job, body("64m", None)).unwrap();
    let flagged = run_fio(&job, &["--file", data.to_str().unwrap()]);
    for out in [named, flagged] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("small.dat") && err.contains("size="), "{err}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert_eq!(std::fs::read(&data).unwrap(), bytes, "the file as it was");
    // --size says what to use: the flag's rule (never more than there is).
    let sized = run_fio(&job, &["--file", data.to_str().unwrap(), "--size", "512k"]);
    assert!(
        sized.status.success(),
        "{}",
        String::from_utf8_lossy(&sized.stderr)
    );
    // A larger file: the job's first size= bytes, as fio.
    std::fs::write(&job, body("256k", Some(&data))).unwrap();
    let out = run_fio(&job, &["--json", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    assert_eq!(v["target"]["size_bytes"], 256 << 10, "{}", v["target"]);
    assert_eq!(std::fs::read(&data).unwrap(), bytes, "the file as it was");
    assert!(leftovers(dir.path()).is_empty());
}

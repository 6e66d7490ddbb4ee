//! TOML job files from the command line: `iopath run JOB.toml` runs the
//! file's cases, flags override it, mistakes exit 2 naming the file, line
//! and key; `presets show NAME --toml` prints a job file that plans exactly
//! the preset's cases.

mod common;

use common::*;
use predicates::prelude::*;

const JOB: &str = r#"
[run]
size = "8M"
time = "20ms"

[[case]]
method = ["direct", "null"]
pattern = "randread"
bs = "4k"
qd = 4

[[case]]
method = "buffered"
pattern = ["read", "write"]
bs = "64k"
threads = [1, 2]
"#;

#[test]
fn a_job_file_runs_its_cases_and_flags_override_it() {
    let dir = scratch();
    let job = dir.path().join("job.toml");
    std::fs::write(&job, JOB).unwrap();
    let v = run_json(dir.path(), &[job.to_str().unwrap()]);
    let cases = v["cases"].as_array().unwrap();
    let names: Vec<String> = cases
        .iter()
        .map(|c| {
            format!(
                "{}/{}/t{}/q{}",
                c["method"].as_str().unwrap(),
                c["pattern"].as_str().unwrap(),
                c["threads"],
                c["queue_depth_requested"]
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "direct/randread/t1/q4",
            "null/randread/t1/q4",
            "buffered/read/t1/q8",
            "buffered/read/t2/q8",
            "buffered/write/t1/q8",
            "buffered/write/t2/q8"
        ],
        "the file's cases in its order"
    );
    assert_eq!(v["target"]["size_bytes"], 8 << 20);
    // A flag replaces the setting in every case, and the file's size.
    let v = run_json(
        dir.path(),
        &[job.to_str().unwrap(), "--qd", "2", "--size", "4M"],
    );
    assert!(v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["queue_depth_requested"] == 2));
    assert_eq!(v["target"]["size_bytes"], 4 << 20);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_mistake_in_a_job_file_names_the_file_line_and_key() {
    let dir = scratch();
    let job = dir.path().join("bad.toml");
    std::fs::write(&job, "[run]\nsize = \"8M\"\nrepaet = 3\n").unwrap();
    iopath().arg("run").arg(&job).assert().code(2).stderr(
        predicate::str::contains("bad.toml:3:1: unknown field `repaet`")
            .and(predicate::str::contains("did you mean `repeat`?")),
    );
    // Writing a user's file takes --allow-write on the command line: a
    // job file cannot grant it.
    std::fs::write(&job, "[run]\nallow_write = true\n").unwrap();
    iopath()
        .arg("run")
        .arg(&job)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown field `allow_write`"));
    iopath()
        .args(["run", "/nonexistent/job.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot read the job file /nonexistent/job.toml",
        ));
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn every_preset_as_toml_plans_the_presets_cases() {
    let dir = scratch();
    for name in iopath::import::preset::names() {
        let out = iopath()
            .args(["presets", "show", name, "--toml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}");
        let text = String::from_utf8(out.stdout).unwrap();
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(&path, &text).unwrap();
        let from_file = iopath::import::jobfile::load(&path).unwrap();
        let preset = iopath::import::preset::find(name).unwrap();
        assert_eq!(
            from_file, preset.job,
            "{name}: the TOML reads back as the preset"
        );
        let plan = |job: &iopath::plan::JobSpec| {
            let p = iopath::plan::Plan::from_spec(job, &iopath::plan::Origin::default()).unwrap();
            format!("{:?}", p.cases)
        };
        assert_eq!(plan(&from_file), plan(&preset.job), "{name}");
    }
}

const FIO: &str = "[global]\nioengine=io_uring\ndirect=1\nbs=4k\nthinktime=10\nthread\n\n[rr]\nrw=randread\niodepth=4\n\n[sw]\nstonewall\nrw=write\nbs=64k\nnumjobs=2\n";

#[test]
fn a_fio_job_file_runs_each_job_as_a_case_through_its_engine_and_the_others() {
    let dir = scratch();
    let job = dir.path().join("suite.fio");
    std::fs::write(&job, FIO).unwrap();
    // `thinktime` has no mapping: listed, exit 2, nothing created.
    iopath()
        .args(["run", "--fio"])
        .arg(&job)
        .args(["--dir"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("thinktime=10 (").and(predicate::str::contains("suite.fio:5")),
        );
    assert!(leftovers(dir.path()).is_empty());
    let v = run_json(
        dir.path(),
        &[
            "--fio",
            job.to_str().unwrap(),
            "--ignore-unknown",
            "--only-fio-engine",
            "--size",
            "4M",
            "--time",
            "20ms",
        ],
    );
    let cases: Vec<String> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {} {} {} q{} t{}",
                c["label"].as_str().unwrap(),
                c["method"].as_str().unwrap(),
                c["pattern"].as_str().unwrap(),
                c["block_size"],
                c["queue_depth_requested"],
                c["threads"]
            )
        })
        .collect();
    assert_eq!(
        cases,
        ["rr uring randread 4096 q4 t1", "sw uring write 65536 q1 t2"]
    );
    assert_eq!(v["config"]["job_file"], job.to_str().unwrap());
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "ignored_options")
        .expect("the ignored option is a warning");
    assert!(
        w["facts"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o.as_str().unwrap().starts_with("thinktime=10 (")),
        "{w}"
    );
    // Without --only-fio-engine the job's engine is one method among all.
    let out = iopath()
        .args(["import-fio", "--ignore-unknown"])
        .arg(&job)
        .output()
        .unwrap();
    assert!(out.status.success());
    let toml = String::from_utf8(out.stdout).unwrap();
    assert!(toml.contains("# left out: thinktime=10 ("), "{toml}");
    let spec = iopath::import::jobfile::parse("import", &toml).unwrap();
    let methods = spec.cases[0].method.clone().unwrap().0;
    assert_eq!(methods[0], iopath_io::Method::Uring.into());
    assert!(
        methods.contains(&iopath_io::Method::Buffered.into()),
        "{methods:?}"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_time_based_fio_job_runs_for_its_runtime_and_a_file_needs_a_size() {
    let dir = scratch();
    let job = dir.path().join("tb.fio");
    // One 1 MiB pass takes milliseconds; time_based keeps passing for the
    // runtime, as fio does.
    std::fs::write(
        &job,
        "[s]\nrw=read\nbs=64k\nsize=1m\ntime_based\nruntime=300ms\n",
    )
    .unwrap();
    let v = run_json(
        dir.path(),
        &["--fio", job.to_str().unwrap(), "--only-fio-engine"],
    );
    let bytes = v["cases"][0]["summary"]["read_bytes"].as_u64().unwrap();
    assert!(bytes > 2 << 20, "more than one pass in 300 ms: {bytes}");
    // Without size= for a file that does not exist, fio refuses; so does
    // iopath (no 1 GiB default), unless --size says.
    std::fs::write(&job, "[s]\nrw=read\n").unwrap();
    iopath()
        .args(["run", "--fio"])
        .arg(&job)
        .args(["--dir"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no size="));
    let v = run_json(
        dir.path(),
        &[
            "--fio",
            job.to_str().unwrap(),
            "--only-fio-engine",
            "--size",
            "1M",
        ],
    );
    assert_eq!(v["cases"][0]["summary"]["read_bytes"], 1 << 20, "one pass");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn review_regressions_of_job_files() {
    let dir = scratch();
    let job = dir.path().join("two.toml");
    // The same method in two entries of one job is a second arm, not a
    // twin nobody can tell apart.
    std::fs::write(
        &job,
        "[run]\nsize = \"4M\"\ntime = \"20ms\"\n[[case]]\nmethod = \"null\"\npattern = \"randread\"\n[[case]]\nmethod = [\"null\", \"direct\"]\npattern = \"randread\"\n",
    )
    .unwrap();
    let v = run_json(dir.path(), &[job.to_str().unwrap()]);
    let arms: Vec<String> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}#{}",
                c["method"].as_str().unwrap(),
                c["arm"].as_u64().unwrap_or(1)
            )
        })
        .collect();
    assert_eq!(arms, ["null#1", "null#2", "direct#1"]);
    // A report may not replace the job file it was read from.
    iopath()
        .arg("run")
        .arg(&job)
        .args(["--csv"])
        .arg(&job)
        .assert()
        .code(2);
    assert!(std::fs::read_to_string(&job).unwrap().contains("[[case]]"));
    // A touch of 0 measures nothing.
    iopath()
        .args([
            "run", "--preset", "hmmap", "--size", "16M", "--touch", "0", "--dir",
        ])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("touch"));
    // A job file's layout lays the result out as the preset's does.
    let out = iopath()
        .args(["presets", "show", "crystal", "--toml"])
        .output()
        .unwrap();
    let crystal = dir.path().join("crystal.toml");
    std::fs::write(&crystal, out.stdout).unwrap();
    let v = run_json(
        dir.path(),
        &[
            crystal.to_str().unwrap(),
            "--size",
            "4M",
            "--time",
            "20ms",
            "--repeat",
            "1",
        ],
    );
    assert_eq!(v["config"]["layout"], "crystal");
    assert!(v["config"]["preset"].is_null());
    assert!(leftovers(dir.path()).is_empty());
}

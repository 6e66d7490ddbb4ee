//! `cpu_starved`: a CPU hog pinned beside the workers makes them wait for
//! their CPU, and the run says that its figures measured the CPU share, not
//! the path (issue 29, item 4).

mod common;

use std::process::{Child, Command};

/// A busy loop pinned to CPU `cpu`, killed when dropped.
struct Hog(Child);

impl Hog {
    fn on(cpu: u32) -> Option<Hog> {
        Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
            .spawn()
            .ok()
            .map(Hog)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run_on_cpu0(dir: &std::path::Path) -> serde_json::Value {
    common::run_json(
        dir,
        &[
            "--concurrency",
            "1",
            "--methods",
            "null",
            "--patterns",
            "randread",
            "--cpus",
            "0",
            "--time",
            "200ms",
            "--repeat",
            "3",
        ],
    )
}

#[test]
fn a_cpu_hog_beside_the_worker_raises_cpu_starved() {
    if !std::path::Path::new("/proc/thread-self/schedstat").exists() {
        common::skip_anyway("no /proc/thread-self/schedstat (CONFIG_SCHED_INFO off)");
        return;
    }
    let Some(hog) = Hog::on(0) else {
        common::skip_anyway("taskset cannot start a pinned process here");
        return;
    };
    let dir = common::scratch();
    let v = run_on_cpu0(dir.path());
    drop(hog);
    let c = common::case(&v, "null", "randread");
    let rep = &c["repetitions"][0]["cpu"];
    let (wait, cpu) = (
        rep["run_delay_ns"].as_u64().unwrap(),
        rep["cpu_ns"].as_u64().unwrap(),
    );
    assert!(wait > 0 && cpu > 0, "{rep}");
    // Sharing one CPU with a busy loop: about half the runnable time.
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "cpu_starved")
        .unwrap_or_else(|| panic!("no cpu_starved: {}", v["warnings"]));
    let cases = w["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "{w}");
    assert!(
        cases[0].as_str().unwrap().starts_with("null/randread ("),
        "{w}"
    );
}

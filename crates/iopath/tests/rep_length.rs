//! The length of a repetition iopath chooses under a budget: the rounds a
//! verdict needs first, then enough requests a slot with what is left.

mod common;
use common::{case, iopath, json_of, leftovers, scratch};

/// Regression (issue 28, item d): without `--time`, a repetition lasted
/// the length the budget chose whatever it held (5 requests a thread of
/// sequential 1 MiB reads at 8 in flight in the default run); stretched
/// to 8 times that length for 32 requests a slot, it left the job 3
/// rounds. Now the budget buys the 6 rounds first and the repetitions run
/// on with what is left: every repetition gives each of the 8 requests in
/// flight 32 requests, or runs to the latest its job's stretch allows.
#[test]
fn a_chosen_length_gives_every_slot_its_requests_after_the_rounds_a_verdict_needs() {
    let dir = scratch();
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--methods", "direct,uring", "--patterns", "read"])
        .args(["--bs", "1m", "--concurrency", "8", "--size", "64M"])
        .args(["--budget", "8s", "--json", "-", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    for method in ["direct", "uring"] {
        let c = case(&v, method, "read");
        let control = &c["repetition_control"];
        let measured = control["measured"].as_u64().unwrap();
        assert!(measured >= 6, "{method}: {measured} rounds");
        // 8 s pays for the rounds and leaves some: the job may run on.
        let until = control["stretch_until_ns"].as_u64().unwrap();
        let length = v["config"]["time_limit_ns"].as_u64().unwrap();
        assert!(until > length, "{method}: {until} ns, length {length} ns");
        for r in c["repetitions"].as_array().unwrap() {
            let ios = r["ios"].as_u64().unwrap();
            let ns = r["duration_ns"].as_u64().unwrap();
            // Every slot 32 requests, or the stretch's end (the last
            // requests in flight reaped within 5% of it).
            assert!(
                ios >= 8 * 32 || ns as f64 >= 0.95 * until as f64,
                "{method}: {ios} requests in {ns} ns, until {until}"
            );
        }
    }
    assert!(leftovers(dir.path()).is_empty());
}

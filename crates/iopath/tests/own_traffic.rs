//! A case's own device reads are told apart from other processes' traffic
//! on the same disk (issue 29, item 2): a cold buffered read beside another
//! reader reports its own reads at about 1.0x the bytes it asked for, and
//! the other reader's bytes as other traffic, not as read-ahead waste.

mod common;

use std::process::{Child, Command, Stdio};

/// Another process reading `file` with O_DIRECT, over and over, until
/// dropped.
struct Reader(Child);

impl Drop for Reader {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn another_readers_traffic_is_not_read_ahead() {
    let dir = common::scratch();
    let other = dir.path().join("other.bin");
    let status = Command::new("dd")
        .args(["if=/dev/urandom", "bs=1M", "count=96", "status=none"])
        .arg(format!("of={}", other.display()))
        .status()
        .unwrap();
    assert!(status.success());
    // Two readers of the other file beside iopath's run. How much they
    // move during its short repetitions depends on the machine; the run is
    // tried again (at most 5 times) until the disk moved more than 1.2x the
    // case's own reads, which is what the warnings are about.
    let spawn_reader = || {
        Reader(
            Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "while :; do dd if={} of=/dev/null bs=1M iflag=direct status=none || exit 1; done",
                    other.display()
                ))
                .stdout(Stdio::null())
                .spawn()
                .unwrap(),
        )
    };
    let mut seen = None;
    for _ in 0..5 {
        let readers = [spawn_reader(), spawn_reader()];
        let v = common::run_json(
            dir.path(),
            &[
                "--methods",
                "buffered",
                "--patterns",
                "read",
                "--size",
                "128M",
                "--repeat",
                "3",
            ],
        );
        drop(readers);
        let s = common::case(&v, "buffered", "read")["summary"].clone();
        if s["device"].is_null() {
            common::skip_anyway("no block device under the test directory");
            return;
        }
        let asked = s["read_bytes"].as_f64().unwrap();
        let own = s["process_io"]["read_bytes"].as_f64().unwrap();
        let device = s["device"]["read_bytes"].as_f64().unwrap();
        // Cold and sequential: the process read its file once, read-ahead
        // and all, whatever the other readers did.
        assert!(
            (0.95..=1.1).contains(&(own / asked)),
            "own {own} of {asked}: {s}"
        );
        if device > own * 1.25 {
            seen = Some(v);
            break;
        }
    }
    let v = seen.expect("in 5 runs the other readers never moved 25% beside the case");
    let warnings = v["warnings"].as_array().unwrap();
    let named = |code: &str| {
        warnings
            .iter()
            .filter(|w| w["code"] == code)
            .flat_map(|w| w["cases"].as_array().unwrap().iter())
            .any(|c| c.as_str().unwrap().starts_with("buffered/read"))
    };
    assert!(named("other_disk_traffic"), "{warnings:?}");
    assert!(!named("read_amplification"), "{warnings:?}");
}

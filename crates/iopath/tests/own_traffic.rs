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
    let reader = Reader(
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "while :; do dd if={} of=/dev/null bs=1M iflag=direct status=none || exit 1; done",
                other.display()
            ))
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let v = common::run_json(
        dir.path(),
        &[
            "--methods",
            "buffered",
            "--patterns",
            "read",
            "--size",
            "64M",
            "--repeat",
            "3",
        ],
    );
    drop(reader);
    let c = common::case(&v, "buffered", "read");
    let s = &c["summary"];
    if s["device"].is_null() {
        common::skip("no block device under the test directory");
        return;
    }
    let asked = s["read_bytes"].as_f64().unwrap();
    let own = s["process_io"]["read_bytes"].as_f64().unwrap();
    let device = s["device"]["read_bytes"].as_f64().unwrap();
    // Cold and sequential: the process read its file once, read-ahead and all.
    assert!(
        (0.95..=1.1).contains(&(own / asked)),
        "own {own} of {asked}: {s}"
    );
    // The disk moved the other reader's bytes too.
    assert!(device > own * 1.2, "device {device}, own {own}: {s}");
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

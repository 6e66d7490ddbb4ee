//! A run that cannot start promises no duration: refusals of the target
//! come before the estimate line (issue 26, item 10; review: a write guard's
//! refusal still came after "estimated duration").

mod common;

#[test]
fn writing_a_users_file_without_allow_write_is_refused_before_the_estimate() {
    let dir = common::scratch();
    let file = dir.path().join("data.bin");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let out = common::iopath()
        .args([
            "run",
            "--patterns",
            "randwrite",
            "--methods",
            "buffered",
            "--file",
        ])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--allow-write"), "{err}");
    assert!(!err.contains("estimated duration"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 1 << 20]);
}

#[test]
fn a_guarded_file_is_refused_before_the_estimate() {
    // The mounted root file system's device: refused as mounted, before
    // the estimate, even where the device cannot be opened to read its
    // signatures.
    let Some(dev) = std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.split_whitespace().nth(4) == Some("/"))
                .and_then(|l| l.split(" - ").nth(1))
                .and_then(|r| r.split_whitespace().nth(1).map(str::to_string))
        })
        .filter(|d| d.starts_with("/dev/"))
    else {
        common::skip_anyway("no /dev source for the root file system");
        return;
    };
    let out = common::iopath()
        .args([
            "run",
            "--allow-write",
            "--patterns",
            "randwrite",
            "--size",
            "8M",
            "--file",
        ])
        .arg(&dev)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("mounted"), "{err}");
    assert!(!err.contains("estimated duration"), "{err}");
}

//! `--verify`: blocks written with headers and checksums, checked on reads
//! and read back after write repetitions; a corrupted byte is caught. No
//! timing assertions.

use serde_json::Value;

mod common;
use common::*;

/// Every case either ran clean with bytes verified, or was skipped (a
/// method this machine refuses) with its reason. Returns the methods that
/// ran each pattern.
fn check_verified(v: &Value, pattern: &str) -> Vec<String> {
    let mut ran = Vec::new();
    for c in v["cases"].as_array().unwrap() {
        if c["pattern"] != pattern {
            continue;
        }
        assert!(c["error"].is_null(), "{}", c["error"]);
        if c["skipped"].is_string() {
            continue;
        }
        let n = c["verified_bytes"].as_u64().unwrap_or(0);
        assert!(n > 0, "{} {pattern}: nothing verified: {c}", c["method"]);
        assert_eq!(n % 4096, 0, "whole units");
        assert!(c["verify_ns"].is_u64(), "{c}");
        ran.push(c["method"].as_str().unwrap().to_string());
    }
    ran
}

#[test]
fn write_then_read_verifies_with_every_method_and_two_threads() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "8M",
            "--time",
            "100ms",
            "--repeat",
            "1",
            "--threads",
            "2",
            "--methods",
            "buffered,direct,mmap,uring,uring-buffered,aio,ucache,uffd,uffd-wp",
            "--patterns",
            "randwrite,write,read,randread,randrw",
            "--verify",
        ],
    );
    for p in ["randwrite", "write", "read", "randread", "randrw"] {
        let ran = check_verified(&v, p);
        for m in ["buffered", "mmap"] {
            assert!(ran.iter().any(|r| r == m), "{m} {p} did not run: {ran:?}");
        }
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_flipped_byte_is_caught_with_its_offset() {
    let dir = scratch();
    let file = dir.path().join("data.bin");
    // A file of the user's, written whole (sequential, one pass) with
    // verifiable blocks...
    std::fs::File::create(&file)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let run = |args: &[&str]| {
        let mut c = iopath();
        c.args([
            "run", "--quiet", "--repeat", "1", "--verify", "--json", "-", "--file",
        ])
        .arg(&file)
        .args(args);
        c.output().unwrap()
    };
    let out = run(&[
        "--allow-write",
        "--patterns",
        "write",
        "--methods",
        "direct,buffered",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ...reads back clean by every method...
    let out = run(&[
        "--patterns",
        "read,randread",
        "--methods",
        "buffered,direct,mmap,uring",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_verified(&json_of(&out.stdout), "read");
    // ...until one byte in the middle of block 300 changes.
    let at = 4096 * 300 + 77;
    let mut data = std::fs::read(&file).unwrap();
    data[at] ^= 0x01;
    std::fs::write(&file, &data).unwrap();
    for m in ["buffered", "mmap", "uring"] {
        let out = run(&["--patterns", "read", "--methods", m]);
        assert_eq!(out.status.code(), Some(1), "{m} must fail");
        let v = json_of(&out.stdout);
        let err = case(&v, m, "read")["error"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(
            err.contains("verify failed at offset 1228800") && err.contains("checksum"),
            "{m}: {err}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stdout.contains("1228800") || stderr.contains("1228800"),
            "the offset is told: {stderr}"
        );
    }
}

#[test]
fn a_file_iopath_did_not_write_fails_verification() {
    let dir = scratch();
    let file = dir.path().join("plain.bin");
    std::fs::write(&file, vec![0x5a; 1 << 20]).unwrap();
    let out = iopath()
        .args(["run", "--quiet", "--repeat", "1", "--verify", "--json", "-"])
        .args(["--patterns", "read", "--methods", "buffered", "--file"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out.stdout);
    let err = case(&v, "buffered", "read")["error"].as_str().unwrap();
    assert!(
        err.contains("offset 0") && err.contains("no iopath header"),
        "{err}"
    );
}

#[test]
fn blocks_smaller_than_the_header_are_refused() {
    let dir = scratch();
    let out = iopath()
        .current_dir(dir.path())
        .args([
            "run",
            "--quiet",
            "--verify",
            "--bs",
            "16",
            "--methods",
            "buffered",
        ])
        .args(["--patterns", "randread", "--size", "1M"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--verify needs blocks of at least 32 bytes"),
        "{err}"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn copies_hold_the_sources_blocks() {
    let dir = scratch();
    let v = run_json(
        dir.path(),
        &[
            "--size",
            "4M",
            "--methods",
            "copy-file-range,sendfile,buffered,direct,mmap,uring",
            "--patterns",
            "copy",
            "--verify",
        ],
    );
    let ran = check_verified(&v, "copy");
    assert!(ran.iter().any(|m| m == "buffered"), "{ran:?}");
    for c in v["cases"].as_array().unwrap() {
        if !c["skipped"].is_string() {
            assert_eq!(c["verified_bytes"], 4 << 20, "{c}");
        }
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn null_is_skipped_under_verify_with_the_reason() {
    // `null` moves no data: under --verify it used to "find" corruption
    // (no header, a stale header read back) and fail the run.
    let dir = scratch();
    let json = dir.path().join("out.json");
    let out = iopath()
        .args(["run", "--dir"])
        .arg(dir.path())
        .args(["--size", "8M", "--time", "100ms", "--repeat", "1"])
        .args(["--methods", "null,buffered", "--patterns", "read,write"])
        .args(["--verify", "--explain", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for p in ["read", "write"] {
        let null = case(&v, "null", p);
        assert!(null["error"].is_null(), "{null}");
        let why = null["skipped"].as_str().unwrap_or_default();
        assert!(why.contains("--verify"), "null/{p}: {null}");
        assert_eq!(check_verified(&v, p), ["buffered"]);
    }
    let shown = format!("{stdout}{stderr}");
    assert!(
        shown.contains("null moves no data"),
        "the reason is not shown: {shown}"
    );
}

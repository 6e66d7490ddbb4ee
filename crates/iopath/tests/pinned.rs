//! An existing `--file` is resolved once: the guards check one file or
//! device, and the run writes that very one, even when its name is
//! repointed (a symlink swapped, as udev does under /dev/disk/by-id) or the
//! file replaced (renamed over) in the middle of the run. Plain files are
//! enough to prove the mechanism (the same path serves devices).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn random_file(p: &Path, len: usize, seed: u8) -> Vec<u8> {
    let data: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 9) as u8)
        .collect();
    std::fs::write(p, &data).unwrap();
    data
}

/// Start a writing run on `name`; once `a` has been written to (the run is
/// under way), call `swap`, check the run was still going, and wait for it:
/// it fails (exit 1) saying that the name leads to another file now (issue
/// 26: not measured as if nothing happened), having written only `a`.
fn write_then_swap(dir: &Path, name: &Path, a: &Path, a_data: &[u8], swap: impl FnOnce()) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .current_dir(dir)
        .args(["run", "--file"])
        .arg(name)
        .args([
            "--allow-write",
            "--patterns",
            "randwrite",
            "--methods",
            "buffered",
            "--bs",
            "4k",
            "--repeat",
            "8",
            "--time",
            "300ms",
            "--quiet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while std::fs::read(a).unwrap() == a_data {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before writing to {}",
            a.display()
        );
        assert!(t0.elapsed() < Duration::from_secs(60), "no write in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    swap();
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before the swap: the test proves nothing; lengthen it"
    );
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(&format!("another process replaced {}", name.display())),
        "{stdout}"
    );
}

/// Review of issue 14: a symlink repointed mid-run sent the writes to the
/// new target, which no guard had checked.
#[test]
fn a_symlink_repointed_mid_run_does_not_redirect_the_writes() {
    let dir = common::scratch();
    let (a, b, link) = (
        dir.path().join("a.img"),
        dir.path().join("b.img"),
        dir.path().join("swing"),
    );
    let a_data = random_file(&a, 8 << 20, 1);
    let b_data = random_file(&b, 8 << 20, 2);
    std::os::unix::fs::symlink(&a, &link).unwrap();
    write_then_swap(dir.path(), &link, &a, &a_data, || {
        let tmp = dir.path().join("swing.new");
        std::os::unix::fs::symlink(&b, &tmp).unwrap();
        std::fs::rename(&tmp, &link).unwrap();
    });
    assert!(
        std::fs::read(&b).unwrap() == b_data,
        "the file the symlink was repointed to was written"
    );
}

/// Same for a file replaced (renamed over) mid-run: the replacement is
/// never written.
#[test]
fn a_file_replaced_mid_run_is_not_written() {
    let dir = common::scratch();
    let (a, b) = (dir.path().join("a.img"), dir.path().join("b.img"));
    let a_data = random_file(&a, 8 << 20, 3);
    let b_data = random_file(&b, 8 << 20, 4);
    write_then_swap(dir.path(), &a, &a, &a_data, || {
        std::fs::rename(&b, &a).unwrap();
    });
    assert!(
        std::fs::read(&a).unwrap() == b_data,
        "the file renamed over the target mid-run was written"
    );
}

//! The memory check counts the process's own memory cgroup (review of
//! issue 26, item 3): inside a 200 MiB cgroup, `--qd 400 --bs 1M` of aio
//! buffers and a 400 MiB test file on tmpfs passed the check (the system's
//! MemAvailable) and the kernel OOM-killed the run (exit 137, no message,
//! nothing said). It is refused now (exit 2), naming the cgroup's limit
//! and the next step.
//!
//! Needs root and a memory controller (cgroup v1's, or v2's enabled at
//! the root); skipped with a SKIPPED line otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A memory cgroup of the tests' own, removed when dropped.
struct Cgroup(PathBuf);

impl Cgroup {
    /// A new cgroup limited to `limit` bytes, or why there can be none.
    fn make(limit: u64) -> Result<Cgroup, String> {
        if !rustix::process::geteuid().is_root() {
            return Err("needs root to make a memory cgroup".into());
        }
        let name = format!("iopath-test-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v2 = Path::new("/sys/fs/cgroup");
        let (dir, file) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(&name), "memory.limit_in_bytes")
        } else if std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        {
            (v2.join(&name), "memory.max")
        } else {
            return Err("no cgroup v1 memory controller, nor v2's enabled at the root".into());
        };
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let cg = Cgroup(dir);
        std::fs::write(cg.0.join(file), limit.to_string())
            .map_err(|e| format!("limit {}: {e}", cg.0.display()))?;
        Ok(cg)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_run_beyond_its_memory_cgroups_limit_is_refused_naming_it() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        common::skip("no /dev/shm");
        return;
    }
    let cg = match Cgroup::make(200 << 20) {
        Ok(cg) => cg,
        Err(why) => {
            common::skip(why);
            return;
        }
    };
    let dir = tempfile::tempdir_in(shm).unwrap();
    let file = dir.path().join("f");
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} run --file {} --size 400M --bs 1M --qd 400 --methods aio --patterns randwrite --time 1s --repeat 1",
        cg.0.display(),
        assert_cmd::cargo::cargo_bin("iopath").display(),
        file.display()
    );
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let flat = err.split_whitespace().collect::<Vec<_>>().join(" ");
    let all = format!("status {:?}\nstderr:\n{err}", out.status);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(flat.contains("lower --threads, --qd or --bs"), "{all}");
    assert!(
        flat.contains(&format!(
            "the memory cgroup {} leaves (its limit 200 MiB",
            cg.0.display()
        )),
        "{all}"
    );
    assert!(flat.contains("or run iopath outside it"), "{all}");
    assert!(!file.exists(), "nothing made");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    drop(cg);
}

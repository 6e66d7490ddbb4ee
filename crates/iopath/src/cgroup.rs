//! `--cache-limit`: run cases inside a memory cgroup of their own, capped
//! at a size, so that "my data is much larger than the memory I may use"
//! can be measured without a huge file (the hmmap experiment's page cache
//! limited to 128 MiB).
//!
//! The cgroup is a child of the process's own memory cgroup (v2
//! `memory.max` where the v2 hierarchy has the memory controller, else v1
//! `memory.limit_in_bytes`), named `iopath-<pid>-<n>`. The whole process is
//! moved in while a case runs (memory is charged per process, not per
//! thread) and back afterwards; the cgroup is emptied and removed when the
//! run ends — also on error and Ctrl-C (a guard's `Drop`), and one left by
//! a killed run (its pid gone) is removed by the next run that looks.

use std::path::{Path, PathBuf};

use crate::metrics::procfs::{stat_value, MemCgroup};
use crate::plan::UsageError;

/// A memory cgroup iopath made; removed when dropped.
#[derive(Debug)]
pub struct CacheLimit {
    /// The cgroup's directory.
    pub dir: PathBuf,
    /// 1 or 2.
    pub version: u8,
    /// The cap, bytes.
    pub limit: u64,
    /// Where the process was (and goes back to).
    home: PathBuf,
    entered: bool,
}

fn procs_file(dir: &Path) -> PathBuf {
    dir.join("cgroup.procs")
}

impl CacheLimit {
    /// Make a cgroup capped at `limit` under the process's memory cgroup.
    pub fn create(limit: u64) -> Result<CacheLimit, UsageError> {
        CacheLimit::create_under(MemCgroup::current(), limit)
    }

    /// [`CacheLimit::create`] under `parent` (None: no memory controller).
    pub fn create_under(parent: Option<MemCgroup>, limit: u64) -> Result<CacheLimit, UsageError> {
        let Some(parent) = parent else {
            return Err(UsageError(
                "--cache-limit needs a memory cgroup controller, and this process is in none (no v1 `memory` hierarchy, no v2 hierarchy with `memory` in cgroup.controllers): mount one, or run without --cache-limit".into(),
            ));
        };
        if limit < (4 << 20) {
            return Err(UsageError(format!(
                "--cache-limit {}: give at least 4 MiB (the process itself needs some)",
                crate::units::fmt_bytes(limit)
            )));
        }
        // On v2 a cgroup that holds processes cannot give its children a
        // controller (the no-internal-processes rule): the new cgroup is
        // then a sibling of the process's own, under a parent that already
        // enables memory for its children. On v1 it is a child.
        let base = if parent.version == 2 {
            parent
                .dir
                .parent()
                .filter(|p| {
                    std::fs::read_to_string(p.join("cgroup.subtree_control"))
                        .is_ok_and(|c| c.split_whitespace().any(|x| x == "memory"))
                })
                .map_or_else(|| parent.dir.clone(), Path::to_path_buf)
        } else {
            parent.dir.clone()
        };
        let stale = reap_stale(&base);
        let paths: Vec<PathBuf> = stale.iter().map(|s| s.0.clone()).collect();
        if let Some(m) = crate::target::reap::message(("cgroup", "cgroups"), &paths) {
            eprintln!("{m}");
        }
        for (dir, kills) in stale.iter().filter(|s| s.1 > 0) {
            eprintln!("{}", oom_message(dir, *kills));
        }
        let dir = (0..100)
            .map(|n| base.join(format!("iopath-{}-{n}", std::process::id())))
            .find(|d| !d.exists())
            .ok_or_else(|| UsageError("--cache-limit: no free cgroup name".into()))?;
        if parent.version == 2 && base == parent.dir {
            // The controller must be enabled for the children.
            let ctl = base.join("cgroup.subtree_control");
            let enabled = std::fs::read_to_string(&ctl).unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == "memory") {
                std::fs::write(&ctl, "+memory").map_err(|e| {
                    UsageError(format!(
                        "--cache-limit: cannot enable the memory controller for children of {} ({e}); run as root, from a cgroup whose memory controller may be delegated",
                        parent.dir.display()
                    ))
                })?;
            }
        }
        std::fs::create_dir(&dir).map_err(|e| {
            UsageError(format!(
                "--cache-limit: cannot create the cgroup {} ({e}); it needs root (or a delegated cgroup)",
                dir.display()
            ))
        })?;
        let mut made = CacheLimit {
            dir,
            version: parent.version,
            limit,
            home: parent.dir.clone(),
            entered: false,
        };
        let (file, value) = if made.version == 2 {
            ("memory.max", limit.to_string())
        } else {
            ("memory.limit_in_bytes", limit.to_string())
        };
        if let Err(e) = std::fs::write(made.dir.join(file), value) {
            // `made` drops here and removes the directory.
            return Err(UsageError(format!(
                "--cache-limit: cannot write {} in {} ({e})",
                file,
                made.dir.display()
            )));
        }
        made.entered = false;
        Ok(made)
    }

    /// Move the whole process into the cgroup.
    pub fn enter(&mut self) -> std::io::Result<()> {
        std::fs::write(procs_file(&self.dir), std::process::id().to_string())?;
        self.entered = true;
        Ok(())
    }

    /// Move the process back where it was.
    pub fn leave(&mut self) -> std::io::Result<()> {
        if self.entered {
            std::fs::write(procs_file(&self.home), std::process::id().to_string())?;
            self.entered = false;
        }
        Ok(())
    }

    /// The cgroup as [`MemCgroup`] (for the per-repetition figures).
    pub fn as_mem_cgroup(&self) -> MemCgroup {
        MemCgroup {
            version: self.version,
            dir: self.dir.clone(),
        }
    }

    /// Page cache charged to the cgroup now (v2 `file`, v1 `cache`).
    pub fn file_bytes(&self) -> Option<u64> {
        self.as_mem_cgroup().file_bytes()
    }

    /// Peak memory charged (v2 `memory.peak`, v1 `memory.max_usage_in_bytes`).
    pub fn peak_bytes(&self) -> Option<u64> {
        let f = if self.version == 2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        std::fs::read_to_string(self.dir.join(f))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// Times the cap was hit (v1 `memory.failcnt`, v2 `max` in
    /// `memory.events`).
    pub fn limit_hits(&self) -> Option<u64> {
        if self.version == 2 {
            let text = std::fs::read_to_string(self.dir.join("memory.events")).ok()?;
            stat_value(&text, "max")
        } else {
            std::fs::read_to_string(self.dir.join("memory.failcnt"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
        }
    }
}

impl Drop for CacheLimit {
    fn drop(&mut self) {
        let _ = self.leave();
        remove(&self.dir, self.version);
    }
}

/// Empty a cgroup iopath made and remove it (a few tries: the kernel may
/// still be moving the last task out).
fn remove(dir: &Path, version: u8) {
    if version == 1 {
        // Reclaim what is charged, so nothing is left to reparent.
        let _ = std::fs::write(dir.join("memory.force_empty"), "0");
    }
    for _ in 0..50 {
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// What the next run says of a cgroup it removed whose run the kernel's
/// OOM killer killed (`kills` times): the run itself could say nothing.
pub fn oom_message(dir: &Path, kills: u64) -> String {
    format!(
        "iopath: the run that made {} was killed by the kernel's OOM killer ({kills} kill(s) in it): its --cache-limit could not hold what a case needed (its results are in its --json file up to its last round); give a larger --cache-limit, or a --dir on a disk if it ran on tmpfs",
        dir.display()
    )
}

/// How many times the OOM killer killed a task of the cgroup `dir` (v1
/// `memory.oom_control`, v2 `memory.events`: `oom_kill N`); 0 when unknown.
pub fn oom_kills(dir: &Path) -> u64 {
    ["memory.events", "memory.oom_control"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .find_map(|text| stat_value(&text, "oom_kill"))
        .unwrap_or(0)
}

/// Remove `iopath-<pid>-<n>` cgroups under `parent` whose process is gone
/// (a run killed before it could clean up): no process has the pid, or
/// the one that has it started after the cgroup was made (a reused pid),
/// and no process is in it. A live run's cgroup is left. Returns each
/// cgroup removed with the OOM kills counted in it ([`oom_kills`]).
pub fn reap_stale(parent: &Path) -> Vec<(PathBuf, u64)> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return removed;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = crate::target::reap::pid_of_name(&name, false) else {
            continue;
        };
        let Ok(made) = e.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        if !crate::target::reap::owner_gone(pid, made) {
            continue;
        }
        let procs = std::fs::read_to_string(procs_file(&e.path())).unwrap_or_default();
        if !procs.trim().is_empty() {
            continue;
        }
        let version = if e.path().join("memory.limit_in_bytes").exists() {
            1
        } else {
            2
        };
        let kills = oom_kills(&e.path());
        remove(&e.path(), version);
        if !e.path().exists() {
            removed.push((e.path(), kills));
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_memory_controller_is_a_clear_usage_error() {
        let e = CacheLimit::create_under(None, 64 << 20).unwrap_err().0;
        assert!(e.contains("memory cgroup controller"), "{e}");
        let fake = MemCgroup {
            version: 1,
            dir: PathBuf::from("/nonexistent"),
        };
        let e = CacheLimit::create_under(Some(fake), 1 << 20).unwrap_err().0;
        assert!(e.contains("at least 4 MiB"), "{e}");
    }
}

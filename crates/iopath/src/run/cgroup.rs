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
//!
//! Dirty pages on v1: a v1 memory cgroup has no dirty limits of its own
//! (v2 applies `vm.dirty_background_ratio`/`vm.dirty_ratio` to the
//! cgroup's memory and starts write-back there), so buffered writes fill a
//! small cap with dirty pages that reclaim cannot free, the machine-wide
//! thresholds (gigabytes) are never reached, and the kernel's OOM killer
//! kills the run (the dontcache preset's 2 GiB write under 256 MiB did).
//! While the process is in a v1 cgroup, a thread does what v2 does: once
//! the cgroup's dirty pages pass [`V1_BACKGROUND_FRACTION`] of the cap it
//! starts write-back of the target's filesystem (`syncfs`), so reclaim
//! finds pages under write-back and waits for them instead.

use std::path::{Path, PathBuf};

use crate::plan::UsageError;
use crate::run::{Event, Events};
use crate::system::metrics::procfs::{stat_value, MemCgroup};

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
    /// v1: a path on the target's filesystem, written back by [`Flusher`].
    flush_at: Option<PathBuf>,
    flusher: Option<Flusher>,
}

/// v1: start write-back once the cgroup's dirty pages pass this fraction of
/// the cap (1/10: v2's at the default `vm.dirty_background_ratio` of 10).
pub const V1_BACKGROUND_FRACTION: u64 = 10;

/// The v1 write-back thread ([`CacheLimit`]'s module docs); stopped and
/// joined when dropped.
#[derive(Debug)]
struct Flusher {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Flusher {
    fn start(cgroup: MemCgroup, at: &Path, limit: u64) -> Option<Flusher> {
        let fs = std::fs::File::open(at).ok()?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let threshold = limit / V1_BACKGROUND_FRACTION;
        let thread = std::thread::Builder::new()
            .name("iopath-v1-writeback".into())
            .spawn(move || {
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    let dirty = std::fs::read_to_string(cgroup.dir.join("memory.stat"))
                        .ok()
                        .and_then(|t| stat_value(&t, "dirty"))
                        .unwrap_or(0);
                    if dirty > threshold {
                        // Errors: nothing to do but try again; the cap
                        // still holds.
                        let _ = rustix::fs::syncfs(&fs);
                    } else {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
            })
            .ok()?;
        Some(Flusher {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The parent cgroup, when there is one and the cap is one the process
/// can live under (bad input otherwise).
fn check_request(parent: Option<MemCgroup>, limit: u64) -> Result<MemCgroup, UsageError> {
    let Some(parent) = parent else {
        return Err(UsageError(
            "--cache-limit needs a memory cgroup controller, and this process is in none (no v1 `memory` hierarchy, no v2 hierarchy with `memory` in cgroup.controllers): mount one, or run without --cache-limit".into(),
        ));
    };
    if limit < MIN_LIMIT {
        return Err(UsageError(format!(
            "--cache-limit {}: give at least {} (the process itself needs some)",
            crate::model::units::fmt_bytes(limit),
            crate::model::units::fmt_bytes(MIN_LIMIT)
        )));
    }
    Ok(parent)
}

/// The smallest cap accepted: the process itself needs some memory.
pub const MIN_LIMIT: u64 = 4 << 20;

/// Where the new cgroup goes. On v2 a cgroup that holds processes cannot
/// give its children a controller (the no-internal-processes rule): the
/// new cgroup is then a sibling of the process's own, under a parent that
/// already enables memory for its children. On v1 it is a child.
fn base_of(parent: &MemCgroup) -> PathBuf {
    if parent.version != 2 {
        return parent.dir.clone();
    }
    parent
        .dir
        .parent()
        .filter(|p| {
            std::fs::read_to_string(p.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|x| x == "memory"))
        })
        .map_or_else(|| parent.dir.clone(), Path::to_path_buf)
}

/// v2: enable the memory controller for the children of `dir` (the
/// process's own cgroup), unless it is already.
fn enable_memory_for_children(dir: &Path) -> Result<(), UsageError> {
    let ctl = dir.join("cgroup.subtree_control");
    let enabled = std::fs::read_to_string(&ctl).unwrap_or_default();
    if enabled.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    std::fs::write(&ctl, "+memory").map_err(|e| {
        UsageError(format!(
            "--cache-limit: cannot enable the memory controller for children of {} ({e}); run as root, from a cgroup whose memory controller may be delegated",
            dir.display()
        ))
    })
}

/// Say what [`reap_stale`] removed: the cgroups, then each one whose run
/// the OOM killer killed.
fn say_reaped(stale: &[StaleCgroup], events: Events<'_>) {
    if stale.is_empty() {
        return;
    }
    let paths: Vec<PathBuf> = stale.iter().map(|s| s.dir.clone()).collect();
    events.emit(Event::StaleCgroups(&paths));
    for s in stale.iter().filter(|s| s.oom_kills > 0) {
        events.emit(Event::OomKilled {
            cgroup: &s.dir,
            kills: s.oom_kills,
        });
    }
}

fn procs_file(dir: &Path) -> PathBuf {
    dir.join("cgroup.procs")
}

impl CacheLimit {
    /// Make a cgroup capped at `limit` under the process's memory cgroup;
    /// the cgroups of killed runs found beside it are removed and said to
    /// `events`.
    pub fn create(limit: u64, events: Events<'_>) -> Result<CacheLimit, UsageError> {
        CacheLimit::create_under(MemCgroup::current(), limit, events)
    }

    /// [`CacheLimit::create`] under `parent` (None: no memory controller).
    pub fn create_under(
        parent: Option<MemCgroup>,
        limit: u64,
        events: Events<'_>,
    ) -> Result<CacheLimit, UsageError> {
        let parent = check_request(parent, limit)?;
        let base = base_of(&parent);
        say_reaped(&reap_stale(&base), events);
        let dir = (0..100)
            .map(|n| base.join(format!("iopath-{}-{n}", std::process::id())))
            .find(|d| !d.exists())
            .ok_or_else(|| UsageError("--cache-limit: no free cgroup name".into()))?;
        if parent.version == 2 && base == parent.dir {
            enable_memory_for_children(&parent.dir)?;
        }
        std::fs::create_dir(&dir).map_err(|e| {
            UsageError(format!(
                "--cache-limit: cannot create the cgroup {} ({e}); it needs root (or a delegated cgroup)",
                dir.display()
            ))
        })?;
        let made = CacheLimit {
            dir,
            version: parent.version,
            limit,
            home: parent.dir.clone(),
            entered: false,
            flush_at: None,
            flusher: None,
        };
        // On failure `made` drops and removes the directory.
        made.cap().map(|()| made)
    }

    /// Write the cap into the cgroup made.
    fn cap(&self) -> Result<(), UsageError> {
        let file = if self.version == 2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        std::fs::write(self.dir.join(file), self.limit.to_string()).map_err(|e| {
            UsageError(format!(
                "--cache-limit: cannot write {} in {} ({e})",
                file,
                self.dir.display()
            ))
        })
    }

    /// v1: write back dirty pages of the filesystem holding `at` (the
    /// target) while the process is in the cgroup (the module docs say
    /// why). Nothing on v2, whose kernel does it.
    pub fn write_back_in(&mut self, at: &Path) {
        if self.version == 1 {
            self.flush_at = Some(at.to_path_buf());
        }
    }

    /// Move the whole process into the cgroup.
    pub fn enter(&mut self) -> std::io::Result<()> {
        std::fs::write(procs_file(&self.dir), std::process::id().to_string())?;
        self.entered = true;
        if let (Some(at), None) = (&self.flush_at, &self.flusher) {
            self.flusher = Flusher::start(self.as_mem_cgroup(), at, self.limit);
        }
        Ok(())
    }

    /// Move the process back where it was.
    pub fn leave(&mut self) -> std::io::Result<()> {
        self.flusher = None;
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

/// How many times the OOM killer killed a task of the cgroup `dir` (v1
/// `memory.oom_control`, v2 `memory.events`: `oom_kill N`); 0 when unknown.
pub fn oom_kills(dir: &Path) -> u64 {
    ["memory.events", "memory.oom_control"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .find_map(|text| stat_value(&text, "oom_kill"))
        .unwrap_or(0)
}

/// A cgroup of a killed run, removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleCgroup {
    pub dir: PathBuf,
    /// How many times the kernel's OOM killer killed a task in it.
    pub oom_kills: u64,
}

/// Remove `iopath-<pid>-<n>` cgroups under `parent` whose process is gone
/// (a run killed before it could clean up): no process has the pid, or
/// the one that has it started after the cgroup was made (a reused pid),
/// and no process is in it. A live run's cgroup is left. Returns each
/// cgroup removed with the OOM kills counted in it ([`oom_kills`]).
pub fn reap_stale(parent: &Path) -> Vec<StaleCgroup> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return removed;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = crate::run::target::reap::pid_of_name(&name, false) else {
            continue;
        };
        let Ok(made) = e.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        if !crate::run::target::reap::owner_gone(pid, made) {
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
            removed.push(StaleCgroup {
                dir: e.path(),
                oom_kills: kills,
            });
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_memory_controller_is_a_clear_usage_error() {
        let e = CacheLimit::create_under(None, 64 << 20, Events::NONE)
            .unwrap_err()
            .0;
        assert!(e.contains("memory cgroup controller"), "{e}");
        let fake = MemCgroup {
            version: 1,
            dir: PathBuf::from("/nonexistent"),
        };
        let e = CacheLimit::create_under(Some(fake), 1 << 20, Events::NONE)
            .unwrap_err()
            .0;
        assert!(e.contains("at least 4 MiB"), "{e}");
    }
}

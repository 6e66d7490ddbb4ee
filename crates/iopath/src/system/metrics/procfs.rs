//! Memory and CPU facts from /proc and the memory cgroup: page cache
//! (`/proc/meminfo`), the process's resident and locked memory
//! (`/proc/self/status`) and the memory cgroup's file pages.
//!
//! Every parser takes text so it can be tested on captured files.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// I/O accounting of a process (`/proc/self/io`) or of one thread
/// (`/proc/thread-self/io`, `/proc/self/task/TID/io`): what its threads —
/// for the process, io_uring's io-wq and SQPOLL threads, and threads that
/// have exited, included — made the block layer read and write, the bytes
/// its read- and write-family system calls moved, and how many such calls
/// it made. Unlike the device counters, other processes' traffic is not in
/// it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessIo {
    /// Bytes the process's reads fetched from storage: read-ahead and
    /// fault-around included, pages already cached not.
    pub read_bytes: u64,
    /// Bytes the process caused to be written; for buffered writes counted
    /// when a page is dirtied, not when it is written back.
    pub write_bytes: u64,
    /// `read`-family system calls (`read`, `pread64`, `readv`, ...; not
    /// `io_uring_enter` or `io_submit`).
    pub read_syscalls: u64,
    /// `write`-family system calls.
    pub write_syscalls: u64,
    /// Bytes the `read`-family calls returned (`rchar`), from the page
    /// cache or, with `O_DIRECT`, from the device; io_uring's and AIO's
    /// reads are not counted here. 0 in results written before it.
    #[serde(default)]
    pub rchar: u64,
    /// Bytes the `write`-family calls took (`wchar`), likewise.
    #[serde(default)]
    pub wchar: u64,
}

impl ProcessIo {
    /// Parse `/proc/PID/io`; `None` when a field is missing.
    pub fn parse(text: &str) -> Option<ProcessIo> {
        let field = |k: &str| -> Option<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(k)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse().ok())
        };
        Some(ProcessIo {
            read_bytes: field("read_bytes")?,
            write_bytes: field("write_bytes")?,
            read_syscalls: field("syscr")?,
            write_syscalls: field("syscw")?,
            rchar: field("rchar")?,
            wchar: field("wchar")?,
        })
    }

    /// This process's counters now; `None` where the kernel keeps none
    /// (`CONFIG_TASK_IO_ACCOUNTING` off).
    pub fn read_self() -> Option<ProcessIo> {
        ProcessIo::parse(&std::fs::read_to_string("/proc/self/io").ok()?)
    }

    /// The calling thread's counters now, in one `read` call (the file is
    /// about 200 bytes), so that reading them adds one call and no more to
    /// the thread's own `syscr` between two readings.
    pub fn read_thread() -> Option<ProcessIo> {
        use std::io::Read;
        let mut buf = [0u8; 1024];
        let n = std::fs::File::open("/proc/thread-self/io")
            .ok()?
            .read(&mut buf)
            .ok()?;
        ProcessIo::parse(std::str::from_utf8(&buf[..n]).ok()?)
    }

    /// The counters of thread `tid` of this process now; `None` once it
    /// has exited.
    pub fn read_task(tid: i32) -> Option<ProcessIo> {
        ProcessIo::parse(&std::fs::read_to_string(format!("/proc/self/task/{tid}/io")).ok()?)
    }

    /// What happened between `before` and `self`.
    pub fn since(&self, before: &ProcessIo) -> ProcessIo {
        self.zip(before, u64::saturating_sub)
    }

    /// The two together (the counters of two threads, or two intervals).
    pub fn plus(&self, other: &ProcessIo) -> ProcessIo {
        self.zip(other, u64::saturating_add)
    }

    fn zip(&self, o: &ProcessIo, f: fn(u64, u64) -> u64) -> ProcessIo {
        ProcessIo {
            read_bytes: f(self.read_bytes, o.read_bytes),
            write_bytes: f(self.write_bytes, o.write_bytes),
            read_syscalls: f(self.read_syscalls, o.read_syscalls),
            write_syscalls: f(self.write_syscalls, o.write_syscalls),
            rchar: f(self.rchar, o.rchar),
            wchar: f(self.wchar, o.wchar),
        }
    }
}

/// System-wide page-cache state (`/proc/meminfo`), bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageCache {
    pub cached: u64,
    pub dirty: u64,
    pub writeback: u64,
}

impl PageCache {
    pub fn parse(meminfo: &str) -> PageCache {
        let kb = |k| meminfo_kb(meminfo, k).unwrap_or(0) * 1024;
        PageCache {
            cached: kb("Cached"),
            dirty: kb("Dirty"),
            writeback: kb("Writeback"),
        }
    }

    pub fn read() -> PageCache {
        PageCache::parse(&std::fs::read_to_string("/proc/meminfo").unwrap_or_default())
    }
}

/// The process's memory (`/proc/self/status`), bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcMem {
    pub rss: u64,
    /// Peak RSS since start or the last [`reset_peak_rss`].
    pub rss_peak: u64,
    /// mlock()ed memory.
    pub locked: u64,
    /// Pinned memory (io_uring registered buffers land here).
    pub pinned: u64,
}

impl ProcMem {
    pub fn parse(status: &str) -> ProcMem {
        ProcMem {
            rss: meminfo_kb(status, "VmRSS").unwrap_or(0) * 1024,
            rss_peak: meminfo_kb(status, "VmHWM").unwrap_or(0) * 1024,
            locked: meminfo_kb(status, "VmLck").unwrap_or(0) * 1024,
            pinned: meminfo_kb(status, "VmPin").unwrap_or(0) * 1024,
        }
    }

    pub fn read() -> ProcMem {
        ProcMem::parse(&std::fs::read_to_string("/proc/self/status").unwrap_or_default())
    }
}

/// Reset the peak RSS (`VmHWM`) to the current RSS (Linux 4.0+). Returns
/// false when not permitted; the peak then covers the whole process life.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The memory cgroup the process is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemCgroup {
    /// 1 or 2.
    pub version: u8,
    /// Directory of the cgroup in the cgroup file system.
    pub dir: PathBuf,
}

impl MemCgroup {
    /// Find the memory cgroup from `/proc/self/cgroup` text; `root` is the
    /// cgroup mount root (`/sys/fs/cgroup`). A v1 memory hierarchy wins over
    /// v2 (hybrid systems: v1 owns the memory controller then).
    pub fn find(proc_cgroup: &str, root: &Path) -> Option<MemCgroup> {
        for line in proc_cgroup.lines() {
            let mut f = line.splitn(3, ':');
            let (_, ctrls, path) = (f.next()?, f.next()?, f.next()?);
            if ctrls.split(',').any(|c| c == "memory") {
                let dir = root.join("memory").join(path.trim_start_matches('/'));
                if dir.join("memory.stat").exists() {
                    return Some(MemCgroup { version: 1, dir });
                }
            }
        }
        for line in proc_cgroup.lines() {
            if let Some(path) = line.strip_prefix("0::") {
                for base in [root.to_path_buf(), root.join("unified")] {
                    let dir = base.join(path.trim_start_matches('/'));
                    if dir.join("memory.stat").exists() {
                        return Some(MemCgroup { version: 2, dir });
                    }
                }
            }
        }
        None
    }

    pub fn current() -> Option<MemCgroup> {
        let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        MemCgroup::find(&text, Path::new("/sys/fs/cgroup"))
    }

    /// The cgroup's memory limit (v2 `memory.max`, v1
    /// `memory.limit_in_bytes`); `None` when unlimited (`max`, or v1's
    /// page-rounded `LONG_MAX`) or unreadable.
    pub fn limit_bytes(&self) -> Option<u64> {
        let file = if self.version == 2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        let v: u64 = std::fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        (v < 1 << 60).then_some(v)
    }

    /// Page-cache bytes charged to the cgroup (v2 `file`, v1 `cache`).
    pub fn file_bytes(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.dir.join("memory.stat")).ok()?;
        stat_value(&text, if self.version == 2 { "file" } else { "cache" })
    }
}

/// What the tightest of a memory cgroup and its ancestors leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupRoom {
    /// The cgroup whose limit binds (the process's own, or an ancestor).
    pub dir: PathBuf,
    pub limit: u64,
    /// Charged to it, less its inactive page cache (reclaimable).
    pub used: u64,
    /// `limit - used`.
    pub left: u64,
}

impl MemCgroup {
    /// The memory left under this cgroup's limit and its ancestors' (up
    /// to the hierarchy's root): the smallest `limit - (usage - inactive
    /// file pages)`; `None` when none of them is limited.
    pub fn room(&self) -> Option<CgroupRoom> {
        let (usage, inactive) = if self.version == 2 {
            ("memory.current", "inactive_file")
        } else {
            ("memory.usage_in_bytes", "total_inactive_file")
        };
        let mut tightest: Option<CgroupRoom> = None;
        for dir in self.dir.ancestors() {
            if !dir.join("memory.stat").exists() {
                break;
            }
            let level = MemCgroup {
                version: self.version,
                dir: dir.to_path_buf(),
            };
            let Some(limit) = level.limit_bytes() else {
                continue;
            };
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
            let charged: u64 = read(usage).and_then(|t| t.trim().parse().ok()).unwrap_or(0);
            let reclaimable = read("memory.stat")
                .and_then(|t| stat_value(&t, inactive))
                .unwrap_or(0);
            let used = charged.saturating_sub(reclaimable);
            let left = limit.saturating_sub(used);
            if tightest.as_ref().is_none_or(|t| left < t.left) {
                tightest = Some(CgroupRoom {
                    dir: dir.to_path_buf(),
                    limit,
                    used,
                    left,
                });
            }
        }
        tightest
    }
}

/// A `key value` line of a cgroup `memory.stat`.
pub fn stat_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// A `/proc/meminfo` field in kB.
pub fn meminfo_kb(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        v.split_whitespace().next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_captured_meminfo_and_status() {
        let meminfo =
            "MemTotal: 24624316 kB\nCached:  1048576 kB\nDirty:  2048 kB\nWriteback:  0 kB\n";
        let pc = PageCache::parse(meminfo);
        assert_eq!(pc.cached, 1 << 30);
        assert_eq!(pc.dirty, 2 << 20);
        assert_eq!(pc.writeback, 0);
        let status = "Name:\tiopath\nVmHWM:\t    1688 kB\nVmRSS:\t    1500 kB\nVmLck:\t       4 kB\nVmPin:\t    8192 kB\n";
        let m = ProcMem::parse(status);
        assert_eq!(
            (m.rss_peak, m.rss, m.locked, m.pinned),
            (1688 * 1024, 1500 * 1024, 4096, 8 << 20)
        );
    }

    #[test]
    fn finds_v1_memory_cgroup_before_v2() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("memory/process_api/abc")).unwrap();
        std::fs::write(
            root.join("memory/process_api/abc/memory.stat"),
            "cache 4096\nrss 0\ntotal_cache 8192\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("unified/job")).unwrap();
        std::fs::write(root.join("unified/job/memory.stat"), "anon 0\nfile 12288\n").unwrap();
        let text = "4:memory:/process_api/abc\n0::/job\n";
        let cg = MemCgroup::find(text, root).unwrap();
        assert_eq!(cg.version, 1);
        assert_eq!(cg.file_bytes(), Some(4096));
        let cg2 = MemCgroup::find("0::/job\n", root).unwrap();
        assert_eq!(cg2.version, 2);
        assert_eq!(cg2.file_bytes(), Some(12288));
        assert!(MemCgroup::find("0::/missing\n", root).is_none());
    }

    /// The tightest level binds: a child limited to 1 GiB under a parent
    /// of 200 MiB with 150 MiB charged (10 MiB of it inactive page cache)
    /// leaves 60 MiB; levels without a limit are passed over.
    #[test]
    fn a_cgroups_room_is_the_tightest_of_its_ancestors() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("memory");
        let (parent, child) = (root.join("p"), root.join("p/c"));
        std::fs::create_dir_all(&child).unwrap();
        let level = |dir: &Path, limit: &str, usage: u64, inactive: u64| {
            std::fs::write(dir.join("memory.limit_in_bytes"), limit).unwrap();
            std::fs::write(dir.join("memory.usage_in_bytes"), usage.to_string()).unwrap();
            let stat = format!("cache 0\ntotal_inactive_file {inactive}\n");
            std::fs::write(dir.join("memory.stat"), stat).unwrap();
        };
        level(&root, "9223372036854771712\n", 5 << 30, 0);
        level(&parent, "209715200\n", 150 << 20, 10 << 20);
        level(&child, "1073741824\n", 10 << 20, 0);
        let cg = MemCgroup {
            version: 1,
            dir: child.clone(),
        };
        let room = cg.room().unwrap();
        assert_eq!(room.dir, parent);
        assert_eq!(
            (room.limit, room.used, room.left),
            (200 << 20, 140 << 20, 60 << 20)
        );
        // Over its limit (charges may pass it briefly): nothing left.
        level(&child, "1073741824\n", 2 << 30, 0);
        assert_eq!(cg.room().unwrap().left, 0);
        // No limit anywhere: no room to say.
        level(&parent, "9223372036854771712\n", 0, 0);
        level(&child, "9223372036854771712\n", 0, 0);
        assert_eq!(cg.room(), None);
    }

    #[test]
    fn stat_values() {
        assert_eq!(stat_value("file 10\nanon 3\n", "anon"), Some(3));
        assert_eq!(stat_value("file 10\n", "shmem"), None);
    }
}

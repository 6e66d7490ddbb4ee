//! CPU time of the kernel's own threads, system-wide: the work the kernel
//! does away from the process that caused it — write-back (the flusher
//! `kworker/*-writeback` threads), the loop device's worker, the file
//! system's journal (`jbd2`), soft interrupts handed to `ksoftirqd` — and
//! whatever else the machine's kernel threads did meanwhile.
//!
//! A kernel thread is a task whose `/proc/PID/stat` flags carry
//! `PF_KTHREAD`; its CPU time is the first field of `/proc/PID/schedstat`
//! (the scheduler's precise clock, ns). This process's io_uring threads
//! (io-wq, SQPOLL) are not kernel threads in this sense (they are threads
//! of this process, `/proc/self/task`), so nothing is counted both here and
//! in the process's own CPU. Time spent in hard and soft interrupts outside
//! `ksoftirqd` is charged by the kernel to whatever task was interrupted,
//! and is not here.

use std::path::Path;

/// `PF_KTHREAD` of `include/linux/sched.h`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// The flags of a `/proc/PID/stat` line: the 9th field, the 6th after the
/// command name (which may hold spaces and parentheses, so the fields are
/// counted from its closing parenthesis).
pub fn stat_flags(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(6)?.parse().ok()
}

/// The CPU time (ns) of a `/proc/PID/schedstat` line: its first number.
pub fn schedstat_ns(schedstat: &str) -> Option<u64> {
    schedstat.split_ascii_whitespace().next()?.parse().ok()
}

/// `kthreadd`'s PID: every other kernel thread is its child.
const KTHREADD: i32 = 2;

/// Each kernel thread's CPU time so far (ns), by PID, read under `proc`
/// (`/proc`). Empty where `/proc` cannot be listed.
///
/// The kernel threads are `kthreadd` and its children (every kernel thread
/// is started by it and never reparented), listed by one read of its
/// `task/2/children`: a scan of every process's `stat` took 2-4 ms twice
/// per repetition here under load. Where that list cannot be read (a
/// kernel without `CONFIG_PROC_CHILDREN`, a PID namespace whose PID 2 is
/// not `kthreadd`), every process's flags are read ([`scan_cpu_ns`]).
pub fn cpu_ns(proc: &Path) -> Vec<(i32, u64)> {
    match kthreadd_children(proc) {
        Some(pids) => std::iter::once(KTHREADD)
            .chain(pids)
            .filter_map(|pid| Some((pid, schedstat_of(proc, pid)?)))
            .collect(),
        None => scan_cpu_ns(proc),
    }
}

/// The PIDs of `kthreadd`'s children; `None` where PID 2 is not a kernel
/// thread or its children cannot be listed.
fn kthreadd_children(proc: &Path) -> Option<Vec<i32>> {
    let dir = proc.join(KTHREADD.to_string());
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    if stat_flags(&stat)? & PF_KTHREAD == 0 {
        return None;
    }
    let children = std::fs::read_to_string(dir.join("task/2/children")).ok()?;
    children
        .split_ascii_whitespace()
        .map(|p| p.parse().ok())
        .collect()
}

/// The CPU time (ns) of `pid` so far; `None` when it is gone.
fn schedstat_of(proc: &Path, pid: i32) -> Option<u64> {
    let path = proc.join(pid.to_string()).join("schedstat");
    schedstat_ns(&std::fs::read_to_string(path).ok()?)
}

/// [`cpu_ns`] by reading every process's flags.
pub fn scan_cpu_ns(proc: &Path) -> Vec<(i32, u64)> {
    let Ok(dir) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|t| t.parse::<i32>().ok()) else {
            continue;
        };
        let path = e.path();
        let is_kthread = std::fs::read_to_string(path.join("stat"))
            .ok()
            .and_then(|s| stat_flags(&s))
            .is_some_and(|f| f & PF_KTHREAD != 0);
        if !is_kthread {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| schedstat_ns(&s))
        {
            out.push((pid, ns));
        }
    }
    out
}

/// CPU (ns) the kernel threads used between two snapshots of [`cpu_ns`]:
/// per PID, a thread started in between counting from zero, one gone by
/// the end not at all.
pub fn used_ns(before: &[(i32, u64)], after: &[(i32, u64)]) -> u64 {
    after
        .iter()
        .map(|&(pid, ns)| {
            let was = before
                .iter()
                .find(|&&(p, _)| p == pid)
                .map_or(0, |&(_, n)| n);
            ns.saturating_sub(was)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_are_counted_from_the_end_of_the_name() {
        let kthreadd = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 10 0 0 20 0 1 0 25";
        assert_eq!(stat_flags(kthreadd), Some(2_129_984));
        assert_ne!(stat_flags(kthreadd).unwrap() & PF_KTHREAD, 0);
        // A user process may name itself with spaces and parentheses.
        let odd = "77 (a) b (c) S 1 77 77 0 -1 4194560 0 0";
        assert_eq!(stat_flags(odd), Some(4_194_560));
        assert_eq!(stat_flags(odd).unwrap() & PF_KTHREAD, 0);
        assert_eq!(stat_flags("garbage"), None);
    }

    #[test]
    fn a_kernel_thread_gone_or_new_counts_what_it_did_in_between() {
        assert_eq!(
            schedstat_ns("104588307 250120577 2800\n"),
            Some(104_588_307)
        );
        let before = [(10, 5_000), (11, 7_000)];
        // 10 used 1 µs, 11 exited, 12 started and used 3 µs.
        let after = [(10, 6_000), (12, 3_000)];
        assert_eq!(used_ns(&before, &after), 4_000);
    }

    /// Issue 28: every process's `stat` was read twice per repetition to
    /// find the kernel threads. They are now `kthreadd`'s children: a
    /// process not among them is not read, whatever its flags say.
    #[test]
    fn kernel_threads_are_found_as_kthreadds_children() {
        let proc = tempfile::tempdir().unwrap();
        let put = |pid: i32, flags: u64, ns: u64| {
            let d = proc.path().join(pid.to_string());
            std::fs::create_dir_all(d.join(format!("task/{pid}"))).unwrap();
            let stat = format!("{pid} (k {pid}) S 0 0 0 0 -1 {flags} 0 0 0 0 0 10");
            std::fs::write(d.join("stat"), stat).unwrap();
            std::fs::write(d.join("schedstat"), format!("{ns} 0 0\n")).unwrap();
        };
        put(2, PF_KTHREAD, 100);
        put(10, PF_KTHREAD, 1_000);
        put(11, PF_KTHREAD, 2_000);
        // Flagged, but not kthreadd's child: a stale entry the list omits.
        put(12, PF_KTHREAD, 4_000);
        put(500, 0x40_0100, 9_000);
        std::fs::write(proc.path().join("2/task/2/children"), "10 11 ").unwrap();
        let mut found = cpu_ns(proc.path());
        found.sort_unstable();
        assert_eq!(found, vec![(2, 100), (10, 1_000), (11, 2_000)]);
        // With no list, every process's flags are read.
        std::fs::remove_file(proc.path().join("2/task/2/children")).unwrap();
        let mut scanned = cpu_ns(proc.path());
        scanned.sort_unstable();
        assert_eq!(
            scanned,
            vec![(2, 100), (10, 1_000), (11, 2_000), (12, 4_000)]
        );
    }

    /// On this machine the list finds the threads the scan finds (a few
    /// tries: kernel workers come and go between two reads).
    #[test]
    fn kthreadds_children_are_the_kernel_threads_the_scan_finds() {
        let proc = Path::new("/proc");
        if kthreadd_children(proc).is_none() {
            eprintln!("skipped: no kthreadd children list here");
            return;
        }
        let pids = |v: Vec<(i32, u64)>| {
            let mut p: Vec<i32> = v.into_iter().map(|(p, _)| p).collect();
            p.sort_unstable();
            p
        };
        let same = (0..20).any(|_| pids(cpu_ns(proc)) == pids(scan_cpu_ns(proc)));
        assert!(
            same,
            "{:?}\n{:?}",
            pids(cpu_ns(proc)),
            pids(scan_cpu_ns(proc))
        );
    }

    #[test]
    fn this_machines_kernel_threads_are_found() {
        let found = cpu_ns(Path::new("/proc"));
        // kthreadd (PID 2) is a kernel thread wherever /proc shows it.
        if Path::new("/proc/2/schedstat").exists() {
            assert!(found.iter().any(|&(p, _)| p == 2), "{found:?}");
        }
        assert!(!found.iter().any(|&(p, _)| p == std::process::id() as i32));
    }
}

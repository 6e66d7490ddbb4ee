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

/// Each kernel thread's CPU time so far (ns), by PID, read under `proc`
/// (`/proc`). Empty where `/proc` cannot be listed.
pub fn cpu_ns(proc: &Path) -> Vec<(i32, u64)> {
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

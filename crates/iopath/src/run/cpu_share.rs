//! Whose CPU a case is charged. The CPU of a method's helper threads
//! (io_uring's SQPOLL and io-wq threads, `threadpool` and `tokio` pool
//! threads) is what the process used beyond the main thread and the
//! workers; iopath's own bystander threads (the `--neighbour` reader, the
//! progress line's ticker) run at the same time and are no method's, so
//! their CPU, read by thread id over the same interval, is taken out.

use crate::system::metrics::procfs::ProcessIo;

/// Name prefixes of the bystander threads, as `/proc/self/task/TID/comm`
/// shows them (15 bytes at most: `iopath-neighbour` is `iopath-neighbou`).
pub const BYSTANDERS: [&str; 2] = ["iopath-neighbou", "iopath-progress"];

/// CPU (ns) the bystanders used between two snapshots of
/// [`iopath_io::sys::named_threads_cpu_ns`]: per thread id, a thread
/// started in between counting from zero, one gone by the end not at all.
pub fn bystanders_ns(before: &[(i32, u64)], after: &[(i32, u64)]) -> u64 {
    after
        .iter()
        .map(|&(tid, ns)| {
            let was = before
                .iter()
                .find(|&&(t, _)| t == tid)
                .map_or(0, |&(_, n)| n);
            ns.saturating_sub(was)
        })
        .sum()
}

/// The I/O accounting of the bystander threads now, by thread id.
pub fn bystanders_io_now() -> Vec<(i32, ProcessIo)> {
    iopath_io::sys::named_threads_cpu_ns(&BYSTANDERS)
        .into_iter()
        .filter_map(|(tid, _)| ProcessIo::read_task(tid).map(|io| (tid, io)))
        .collect()
}

/// The I/O the bystanders did between two snapshots of
/// [`bystanders_io_now`], by the rule of [`bystanders_ns`].
pub fn bystanders_io(before: &[(i32, ProcessIo)], after: &[(i32, ProcessIo)]) -> ProcessIo {
    after.iter().fold(ProcessIo::default(), |sum, (tid, io)| {
        let was = before
            .iter()
            .find(|(t, _)| t == tid)
            .map_or(ProcessIo::default(), |(_, w)| *w);
        sum.plus(&io.since(&was))
    })
}

/// The case's own I/O: the process's (`process`, io_uring's threads and
/// exited workers included), less the main thread's (`--verify`'s reading
/// back, the residency scan) and the bystanders' (the `--neighbour`
/// reader's reads).
pub fn own_io(process: &ProcessIo, main: &ProcessIo, bystanders: &ProcessIo) -> ProcessIo {
    process.since(main).since(bystanders)
}

/// The CPU of the method's helper threads: the process's, less the main
/// thread's, the workers' and the bystanders'.
pub fn helper_threads_ns(
    process_ns: u64,
    main_ns: u64,
    workers_ns: u64,
    bystanders_ns: u64,
) -> u64 {
    process_ns.saturating_sub(main_ns + workers_ns + bystanders_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 17 review): with `--neighbour`, the neighbour's
    /// CPU (and the progress ticker's) was charged to uring, threadpool and
    /// tokio as their helper threads'. The same case with and without the
    /// bystanders is charged the same.
    #[test]
    fn the_neighbour_and_the_progress_line_are_no_methods_cpu() {
        let (main, workers, helpers) = (3_000_000, 400_000_000, 90_000_000);
        let alone = helper_threads_ns(main + workers + helpers, main, workers, 0);
        assert_eq!(alone, helpers);
        // The neighbour ran before the case began (its clock at 7 ms) and
        // used 25 ms during it; the ticker started inside it and used 2 ms.
        let before = [(41, 7_000_000)];
        let after = [(41, 32_000_000), (57, 2_000_000)];
        let b = bystanders_ns(&before, &after);
        assert_eq!(b, 27_000_000);
        let beside = helper_threads_ns(main + workers + helpers + b, main, workers, b);
        assert_eq!(beside, alone);
        // A bystander gone by the end counts nothing, never a negative.
        assert_eq!(bystanders_ns(&[(41, 9)], &[]), 0);
        assert_eq!(helper_threads_ns(1, 2, 3, 4), 0);
    }

    /// Issue 29: the `--neighbour` reader's reads (and `--verify`'s, on
    /// the main thread) were counted as the case's own device reads, so
    /// a neighbour's traffic read as read-ahead. They are taken out, by
    /// thread.
    #[test]
    fn the_neighbours_and_the_main_threads_reads_are_not_the_cases_own() {
        let io = |read_bytes| ProcessIo {
            read_bytes,
            ..ProcessIo::default()
        };
        let (case, verify, neighbour) = (256 << 20, 64 << 20, 100 << 20);
        // The neighbour had read 5 MiB before the case began.
        let before = [(41, io(5 << 20))];
        let after = [(41, io((5 << 20) + neighbour))];
        let b = bystanders_io(&before, &after);
        assert_eq!(b.read_bytes, neighbour);
        let own = own_io(&io(case + verify + neighbour), &io(verify), &b);
        assert_eq!(own.read_bytes, case);
        // A neighbour that started inside the case counts from zero.
        assert_eq!(bystanders_io(&[], &after).read_bytes, (5 << 20) + neighbour);
    }
}

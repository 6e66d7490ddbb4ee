//! The words of a run's conditions (`config.conditions`), for `--explain`:
//! each the condition, what this run had, and the fio option that makes a
//! fio job the same (docs/methodology.md, rule 9, has the table).

use crate::result::conditions::{CachedPasses, Conditions, RandomOffsets};

/// The lines `--explain` shows under the legend, heading first.
pub fn lines(c: &Conditions) -> Vec<String> {
    let buffers = match c.buffers.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["pages"] => "ordinary 4 KiB pages, never huge (fio's default, iomem=malloc)".to_string(),
        ["huge"] => "transparent huge pages (fio: iomem=mmaphuge)".to_string(),
        ["huge", "pages"] | ["pages", "huge"] => {
            "ordinary pages, and huge pages beside them (+hugebuf; fio: iomem=mmaphuge)".to_string()
        }
        _ => c.buffers.join(", "),
    };
    let uring = if c.uring_registered {
        "buffers and file registered (fio: fixedbufs=1 registerfiles=1)"
    } else {
        "plain buffers and descriptor (fio's default)"
    };
    let passes = match c.cached_passes {
        CachedPasses::Repeated => "start over until the time is up (fio: time_based=1)",
        CachedPasses::One => "stop after one pass (fio without time_based)",
        CachedPasses::NoTimeLimit => "no time limit: one pass or the byte count",
    };
    let offsets = match c.random_offsets {
        RandomOffsets::WithReplacement => {
            "uniform, with replacement (fio: norandommap=1; fio's default reads each block once a pass)"
        }
    };
    let atime = if c.noatime {
        "opened O_NOATIME, reads leave it alone (--noatime; fio does so on block and character devices, t/io_uring always)"
    } else {
        "a plain open, reads update it (fio on a regular file; fio opens block and character devices O_NOATIME)"
    };
    let mut lines = vec![
        "conditions (the same job in fio: docs/methodology.md, rule 9):".to_string(),
        format!("  I/O buffers: {buffers}"),
        format!("  io_uring: {uring}"),
        format!("  the target's access time: {atime}"),
        format!("  caching methods' sequential cases under a time limit: {passes}"),
        format!("  random offsets: {offsets}"),
    ];
    let every = c
        .sync_every
        .iter()
        .filter_map(|w| <iopath_io::SyncEvery as crate::model::words::Word>::parse_word(w).ok());
    for e in every {
        lines.push(format!(
            "  syncs: each thread, after every {} writes, waits for those in flight, then calls {} (fio: {}={}); their time is in bandwidth and IOPS, in no request's latency (syncs per case in the JSON)",
            e.writes,
            e.call.name(),
            e.call.name(),
            e.writes
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conditions(buffers: &[&str], cached_passes: CachedPasses) -> Conditions {
        Conditions {
            buffers: buffers.iter().map(|b| b.to_string()).collect(),
            uring_registered: true,
            cached_passes,
            random_offsets: RandomOffsets::WithReplacement,
            sync_every: Vec::new(),
            noatime: false,
        }
    }

    /// Issue 28 item 4: `--explain` says each condition that moves a
    /// figure, with the fio option that makes the same job.
    #[test]
    fn explain_names_each_condition_and_its_fio_option() {
        let default = lines(&conditions(&["pages"], CachedPasses::One));
        let both = lines(&Conditions {
            noatime: true,
            ..conditions(&["pages", "huge"], CachedPasses::Repeated)
        });
        insta::assert_snapshot!(format!("{}\n--\n{}", default.join("\n"), both.join("\n")));
    }
}

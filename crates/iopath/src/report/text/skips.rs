//! Words for why cases did not run and methods cannot run here
//! ([`Skip`]), and for the notes on an MPI run's ranks ([`MpiNote`]).

use crate::model::units::{fmt_bytes, n_of};
use crate::result::mpi::MpiNote;
use crate::result::skip::Skip;
use crate::result::{RunResult, NOT_REACHED};

/// Word a result's skips and rank notes in place, as the JSON keeps them
/// for readers: `cases[].skipped`, `probe[].reason`, `mpi.notes`. What has
/// no fact (a result written before them) keeps its words.
pub fn word(result: &mut RunResult) {
    for c in &mut result.cases {
        if let Some(s) = &c.skip {
            c.skipped = Some(skip(s));
        }
    }
    for p in &mut result.probe {
        if let Some(s) = &p.skip {
            p.reason = Some(skip(s));
        }
    }
    if let Some(m) = result.mpi.as_mut().filter(|m| !m.facts.is_empty()) {
        m.notes = m.facts.iter().map(mpi_note).collect();
    }
}

/// Why a case did not run, or a method cannot run here. The words do not
/// name the case's method, so that the "not run" list gives the methods a
/// reason concerns one line.
pub fn skip(s: &Skip) -> String {
    match s {
        Skip::Unusable { reason } => reason.clone(),
        Skip::NullUnderVerify => "null moves no data, so --verify has nothing to check in it: skipped under --verify (run it without --verify to measure the overhead floor)".into(),
        Skip::NoTargetFile => "no target file".into(),
        Skip::SmallerThanProbe { probe_bytes } => {
            format!("the file is smaller than one {probe_bytes}-byte probe read")
        }
        Skip::Misaligned {
            block_size,
            path,
            align_bytes,
            align_source,
        } => format!(
            "--bs {block_size} is not a multiple of the O_DIRECT alignment of {path} ({align_bytes} bytes, {}), which every O_DIRECT method requires; use --bs {} for them",
            iopath_io::sys::dio_provenance(align_source),
            fmt_bytes(block_size.div_ceil((*align_bytes).max(1)) * align_bytes).replace(' ', "")
        ),
        Skip::CacheLimitOwn {
            limit_bytes,
            own_bytes,
            threads,
            cache,
        } => format!(
            "--cache-limit {} cannot hold this case's own memory (about {}: {}, their buffers{} and iopath itself); the kernel would kill the run: give a larger --cache-limit{}",
            fmt_bytes(*limit_bytes),
            fmt_bytes(*own_bytes),
            n_of(*threads, "thread", "threads"),
            if *cache { ", its cache" } else { "" },
            if *cache { " or a smaller --ucache-size" } else { "" }
        ),
        Skip::CacheLimitInMemory {
            limit_bytes,
            new_bytes,
            copy,
            fs,
            own_bytes,
        } => format!(
            "--cache-limit {} cannot hold what this case writes to a file system in memory ({} of new {} pages on {fs}, which cannot be reclaimed, plus about {} of its own): the kernel would OOM-kill the run: give a larger --cache-limit, or a --dir on a disk",
            fmt_bytes(*limit_bytes),
            fmt_bytes(*new_bytes),
            if *copy { "copy" } else { "file" },
            fmt_bytes(*own_bytes)
        ),
        Skip::CopyNeedsFile => "copy needs a file to copy".into(),
        Skip::ReplayUnaligned {
            method,
            unaligned_ops,
            data_ops,
            align_bytes,
        } => format!(
            "{method} cannot replay this trace: {unaligned_ops} of its {data_ops} reads and writes are not on {} boundaries (offset or length), which {method} requires",
            fmt_bytes(*align_bytes)
        ),
        Skip::NoCopyMethod { method, methods } => format!(
            "{method} has no copy method; the copy pattern runs with {}",
            methods
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Skip::CopyInterrupted { cause } => {
            format!("interrupted ({cause}) during the copy; its destination was removed")
        }
        Skip::NotReached { cause } => format!("{NOT_REACHED} ({cause}) before this case"),
        Skip::OnRank { rank, host, skip: s } => format!("on rank {rank} ({host}): {}", skip(s)),
    }
}

/// A note on the ranks of an MPI run.
pub fn mpi_note(n: &MpiNote) -> String {
    match n {
        MpiNote::TargetsDiffer { groups } => {
            let each: Vec<String> = groups
                .iter()
                .map(|g| {
                    let who: Vec<String> = g
                        .ranks
                        .iter()
                        .map(|r| format!("{} ({})", r.rank, r.host))
                        .collect();
                    format!("rank {}: {}", who.join(", "), g.target)
                })
                .collect();
            format!(
                "the ranks' targets differ ({}): their figures are not alike, and the system and target recorded are rank 0's",
                each.join("; ")
            )
        }
        MpiNote::UnusedTail {
            path,
            file_bytes,
            ranks,
            block_size,
        } => {
            let unit = block_size * ranks;
            format!(
                "{path} ({}) is not a multiple of {} ({ranks} ranks x {} blocks): its last {} is addressed by no rank",
                fmt_bytes(*file_bytes),
                fmt_bytes(unit),
                fmt_bytes(*block_size),
                fmt_bytes(file_bytes % unit.max(1))
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::mpi::MpiInfo;
    use crate::result::{CaseResult, ProbeEntry};

    fn every_skip() -> Vec<Skip> {
        let tmpfs = Skip::Unusable {
            reason: "O_DIRECT: EINVAL (tmpfs)".into(),
        };
        vec![
            tmpfs.clone(),
            Skip::NullUnderVerify,
            Skip::NoTargetFile,
            Skip::SmallerThanProbe { probe_bytes: 4096 },
            Skip::Misaligned {
                block_size: 1000,
                path: "/data/f".into(),
                align_bytes: 512,
                align_source: "statx DIOALIGN".into(),
            },
            Skip::CacheLimitOwn {
                limit_bytes: 32 << 20,
                own_bytes: 90 << 20,
                threads: 4,
                cache: true,
            },
            Skip::CacheLimitOwn {
                limit_bytes: 32 << 20,
                own_bytes: 40 << 20,
                threads: 1,
                cache: false,
            },
            Skip::CacheLimitInMemory {
                limit_bytes: 64 << 20,
                new_bytes: 1 << 30,
                copy: true,
                fs: "tmpfs".into(),
                own_bytes: 30 << 20,
            },
            Skip::CopyNeedsFile,
            Skip::ReplayUnaligned {
                method: "direct".into(),
                unaligned_ops: 3,
                data_ops: 10,
                align_bytes: 4096,
            },
            Skip::NoCopyMethod {
                method: "mmap".into(),
                methods: vec!["buffered".into(), "direct".into()],
            },
            Skip::CopyInterrupted {
                cause: "SIGINT".into(),
            },
            Skip::NotReached {
                cause: "SIGTERM".into(),
            },
            Skip::OnRank {
                rank: 3,
                host: "h1".into(),
                skip: Box::new(tmpfs),
            },
        ]
    }

    /// A note of each kind: ranks on different file systems, a shared
    /// file's tail no rank addresses.
    fn every_note() -> Vec<MpiNote> {
        vec![
            crate::result::mpi::examples::targets_differ(),
            MpiNote::UnusedTail {
                path: "/data/shared".into(),
                file_bytes: (1 << 30) + (3 << 20),
                ranks: 4,
                block_size: 1 << 20,
            },
        ]
    }

    /// Every reason a case is not run, and every note on ranks, in words.
    #[test]
    fn skip_and_rank_note_words() {
        let lines: Vec<String> = every_skip()
            .iter()
            .map(skip)
            .chain(every_note().iter().map(mpi_note))
            .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// The facts survive the JSON with their figures (and their code).
    #[test]
    fn skips_and_rank_notes_round_trip_as_facts() {
        for s in every_skip() {
            let json = serde_json::to_value(&s).unwrap();
            assert!(json["code"].is_string(), "{json}");
            assert_eq!(serde_json::from_value::<Skip>(json).unwrap(), s);
        }
        for n in every_note() {
            let json = serde_json::to_string(&n).unwrap();
            assert_eq!(serde_json::from_str::<MpiNote>(&json).unwrap(), n);
        }
    }

    /// `word` fills the words from the facts; a result written before the
    /// facts keeps its own words.
    #[test]
    fn word_fills_the_words_of_facts_and_keeps_older_words() {
        let mut r = crate::report::testdata::fixture();
        r.cases = vec![
            CaseResult {
                skip: Some(Skip::NoTargetFile),
                ..Default::default()
            },
            CaseResult {
                skipped: Some("an older result's words".into()),
                ..Default::default()
            },
        ];
        r.probe = vec![ProbeEntry {
            method: "direct".into(),
            usable: false,
            reason: None,
            skip: Some(Skip::SmallerThanProbe { probe_bytes: 512 }),
            notes: Vec::new(),
        }];
        r.mpi = Some(MpiInfo {
            notes: vec!["old".into()],
            facts: every_note(),
            ..Default::default()
        });
        word(&mut r);
        assert_eq!(r.cases[0].skipped.as_deref(), Some("no target file"));
        assert_eq!(
            r.cases[1].skipped.as_deref(),
            Some("an older result's words")
        );
        assert_eq!(
            r.probe[0].reason,
            Some(skip(&r.probe[0].skip.clone().unwrap()))
        );
        let m = r.mpi.unwrap();
        assert_eq!(
            m.notes,
            every_note().iter().map(mpi_note).collect::<Vec<_>>()
        );
    }

    /// A refused repetition's reason saved as words (before refusals were
    /// facts) still reads, as the probe's words.
    #[test]
    fn a_refusal_saved_as_words_still_reads() {
        let old = r#"{"code":"repetition_refused","repetition":4,"reason":"ENOMEM","earlier":3}"#;
        let n: crate::result::facts::CaseNote = serde_json::from_str(old).unwrap();
        assert_eq!(
            n,
            crate::result::facts::CaseNote::RepetitionRefused {
                repetition: 4,
                reason: Skip::Unusable {
                    reason: "ENOMEM".into()
                },
                earlier: 3,
            }
        );
    }
}

//! Words for the runner's events and case notes (see [`super`]): the
//! estimate before any I/O, the estimate revised, cases refused, what was
//! removed after killed runs and how it was proven theirs ([`Event`]), and
//! each case's notes
//! ([`CaseNote`]).

use std::time::Duration;

use crate::model::units::{fmt_bytes, fmt_duration, fmt_wall, n_of};
use crate::model::untrusted::{self, Visible};
use crate::plan::Plan;
use crate::result::facts::{CaseNote, Keeper, PassNote};
use crate::result::RunResult;
use crate::run::estimate::{self, Bound, Estimate, Remedy, Short};
use crate::run::target::reap::{Gone, Reaped, MARK_XATTR};
use crate::run::Event;

/// Say `e` on stderr, as the runner said it before its events were typed.
pub fn to_stderr(e: &Event<'_>) {
    match e {
        // The plan's paths and labels come from a job file: shown, not
        // obeyed (`untrusted`).
        Event::Estimate { .. } | Event::Refused { .. } => {
            let line = line(e);
            let line = untrusted::visible(&line);
            let width = crate::report::width::stderr_width();
            untrusted::to_stderr(crate::model::units::wrap(&line, width, "", "  "));
        }
        _ => crate::say!("{}", Visible(line(e))),
    }
}

/// The words of one event, on one line (unwrapped).
pub fn line(e: &Event<'_>) -> String {
    match *e {
        Event::Estimate { estimate, plan } => format!("iopath: {}", describe(estimate, plan)),
        Event::Refused { cases, left } => format!(
            "iopath: {} cannot run here (--explain says why): about {} now",
            n_of(cases as u64, "case", "cases"),
            fmt_wall(left)
        ),
        Event::Revised { left, spent } => format!(
            "iopath: measured speeds change the estimate: about {} left ({} so far)",
            fmt_wall(left),
            fmt_wall(spent)
        ),
        Event::RankNote(n) => format!("iopath: note: {}", super::skips::mpi_note(n)),
        Event::StaleFiles(removed) => stale_files(removed),
        Event::StaleCgroups(removed) => format!(
            "iopath: removed {} stale {} of killed runs: {}",
            removed.len(),
            if removed.len() == 1 {
                "cgroup"
            } else {
                "cgroups"
            },
            removed
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Event::OomKilled { cgroup, kills } => format!(
            "iopath: the run that made {} was killed by the kernel's OOM killer ({kills} kill(s) in it): its --cache-limit could not hold what a case needed (if it was given --json, that file holds what it finished before the kill; it has none if the kill came in its first case); give a larger --cache-limit, or a --dir on a disk if it ran on tmpfs",
            cgroup.display()
        ),
    }
}

/// The test files of killed runs removed, each with what proved it a
/// killed run's.
fn stale_files(removed: &[Reaped]) -> String {
    let why = |r: &Reaped| {
        let run = match r.gone {
            Gone::Exited => "which has exited",
            Gone::PidReused => "whose pid is now another process's",
            Gone::Rebooted => "from before the last boot",
        };
        let proof = if r.by_tag {
            "named for its inode and birth time".to_string()
        } else {
            format!("marked {MARK_XATTR}")
        };
        format!(
            "{} ({proof} by iopath pid {} {run}; its only link, not locked)",
            r.path.display(),
            r.pid
        )
    };
    format!(
        "iopath: removed {} stale test {} of killed runs: {}",
        removed.len(),
        if removed.len() == 1 { "file" } else { "files" },
        removed.iter().map(why).collect::<Vec<_>>().join(", ")
    )
}

/// The estimate before any I/O: `estimated duration: about 52 s (32
/// cases; ...)`.
pub fn describe(e: &Estimate, plan: &Plan) -> String {
    let mut parts = vec![n_of(e.cases.len() as u64, "case", "cases")];
    parts.push(repetitions(plan));
    if let Some(until) = e.stretch_until(plan) {
        // Said to the ms, as the length it stretches.
        let ms = std::time::Duration::from_millis(until.as_millis().max(1) as u64);
        parts[1].push_str(&format!(
            ", run on up to {} where {} requests per request in flight need it",
            fmt_duration(ms),
            crate::plan::MIN_REQUESTS_PER_SLOT
        ));
    }
    if let Some(c) = plan.case_timeout {
        parts.push(format!(
            "each case capped at {} (--case-timeout){}",
            fmt_duration(c),
            if estimate::flushes_past_cap(plan) {
                ", a write's final flush, which cannot be cut, past it"
            } else {
                ""
            }
        ));
    }
    let assumed = e.assumed();
    if assumed > 0 {
        parts.push(format!(
            "{assumed} case{} bounded by bytes at an assumed speed until measured",
            if assumed == 1 { "" } else { "s" }
        ));
    }
    let total = e.total();
    if let Some(bound) = e.bound(plan) {
        return budgeted(bound, &parts);
    }
    let mut line = format!("estimated duration: about {}", fmt_wall(total));
    if let Some(most) = e.most(plan) {
        // Every case within its cap: the run is bounded.
        line = if most.as_secs_f64() <= 1.05 * total.as_secs_f64() {
            format!("estimated duration: at most about {}", fmt_wall(total))
        } else {
            format!("{line}, at most about {}", fmt_wall(most))
        };
    }
    line.push_str(&format!(" ({})", parts.join("; ")));
    if let Some(short) = e.short(plan) {
        line.push_str("; ");
        line.push_str(&short_text(&short));
    }
    let open = e.open_ended();
    if open > 0 {
        line.push_str(&format!(
            "; {open} case{} only when {} bytes are done, however long that takes: --case-timeout DURATION caps each case",
            if open == 1 { " ends" } else { "s end" },
            if open == 1 { "its" } else { "their" }
        ));
    }
    line
}

/// The estimate of a run under a budget: at most the budget when the
/// rounds every arm runs fit in it, else at least what they take.
fn budgeted(bound: Bound, parts: &[String]) -> String {
    let rounds = crate::stats::verdict_rounds();
    match bound {
        // The floor of rounds is what the estimate counts; the budget
        // bounds the rest.
        Bound::Holds { budget, rounds: t } | Bound::ShortOfRounds { budget, rounds: t } => {
            let holds = if matches!(bound, Bound::Holds { .. }) {
                "it will hold"
            } else {
                "some verdicts will get fewer: --time shorter or --budget longer"
            };
            format!(
                "estimated duration: at most about {} ({}; a budget of {} for the whole run, set-up included: the {rounds} rounds every verdict needs take about {}, the rest goes to the methods still close to their leader; {holds})",
                fmt_wall(budget),
                parts.join("; "),
                fmt_duration(budget),
                fmt_wall(t),
            )
        }
        Bound::AtLeast { budget, floor } => format!(
            "estimated duration: at least about {} ({}; a budget of {} for the whole run cannot be held: the {} rounds every method runs take about that; --time shorter or --budget longer)",
            fmt_wall(floor),
            parts.join("; "),
            fmt_duration(budget),
            crate::plan::MIN_ADAPTIVE_REPS,
        ),
    }
}

/// How the plan repeats its cases.
fn repetitions(plan: &Plan) -> String {
    if plan.replay.is_some() {
        // No time limit cuts a replay: each repetition is the whole trace.
        return match plan.repeat {
            Some(r) => format!(
                "{r} repetition{}, each a whole replay of the trace",
                if r == 1 { "" } else { "s" }
            ),
            None => format!(
                "adaptive repetitions, each a whole replay of the trace, about {} per method of a job",
                fmt_duration(plan.max_time)
            ),
        };
    }
    match (plan.repeat, plan.time_limit()) {
        (Some(r), Some(t)) => format!(
            "{r} repetition{} of up to {} each",
            if r == 1 { "" } else { "s" },
            fmt_duration(t)
        ),
        (Some(r), None) => format!("{r} repetition{}", if r == 1 { "" } else { "s" }),
        (None, t) if plan.budget.is_some() || plan.cases.iter().any(|c| c.budget.is_some()) => {
            format!(
                "adaptive repetitions{}",
                // A budget's share is no round figure: said to the ms.
                t.map_or(String::new(), |t| {
                    let ms = std::time::Duration::from_millis(t.as_millis().max(1) as u64);
                    format!(" of up to {}", fmt_duration(ms))
                })
            )
        }
        (None, t) => format!(
            "adaptive repetitions{}, about {} per method of a job (up to twice that for the rounds a verdict needs)",
            t.map_or(String::new(), |t| format!(" of up to {}", fmt_duration(t))),
            fmt_duration(plan.max_time)
        ),
    }
}

/// `12 cases will not run the 9 rounds their verdicts need to make a
/// call: --max-time 2s or --repeat 9 gives them`.
pub fn short_text(s: &Short) -> String {
    let Short {
        cases: n,
        least,
        most,
        remedy,
    } = *s;
    let rounds = if least == most {
        most.to_string()
    } else {
        format!("{least} to {most}")
    };
    let flag = match remedy {
        Remedy::CaseTimeout { repeat } => format!(
            "{}a larger --case-timeout (0 for none) or a smaller --size gives them",
            if repeat {
                format!("--repeat {most} with ")
            } else {
                String::new()
            }
        ),
        Remedy::MaxTime(t) => format!(
            "--max-time {} or --repeat {most} gives them",
            fmt_duration(t)
        ),
        Remedy::Repeat => format!("--repeat {most} gives them"),
    };
    format!(
        "{n} case{} will not run the {rounds} rounds {} verdict{} need{} to make a call: {flag}",
        if n == 1 { "" } else { "s" },
        if n == 1 { "its" } else { "their" },
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" },
    )
}

/// Each case's notes in words, from its facts, as the result keeps them
/// for readers (`cases[].notes`), and its skip and the run's rank notes
/// ([`super::skips::word`]). A case without facts (a result written
/// before them) keeps the notes it has.
pub fn word_notes(result: &mut RunResult) {
    super::skips::word(result);
    for c in result.cases.iter_mut().filter(|c| !c.facts.is_empty()) {
        c.notes = c.facts.iter().map(note).collect();
    }
}

/// One case note in words.
pub fn note(n: &CaseNote) -> String {
    let secs = |ns: u64| ns as f64 / 1e9;
    let cap =
        |ns: Option<u64>| ns.map_or_else(String::new, |n| fmt_duration(Duration::from_nanos(n)));
    match n {
        CaseNote::TimeoutCut {
            case_timeout_ns,
            repetition,
            fraction_done,
            duration_ns,
            flush_ns,
            extrapolated_ns,
        } => format!(
            "--case-timeout {} stopped repetition {repetition} part-way: {:.1}% of it done in {:.2} s{}; the whole repetition extrapolated to ~{:.1} s (an estimate; give a larger --case-timeout, 0 for none, to measure it)",
            cap(*case_timeout_ns),
            fraction_done * 100.0,
            secs(*duration_ns),
            flush_ns.map_or(String::new(), |f| format!(
                ", its final flush included ({:.2} s: a flush cannot be cut, so it counts in the time and may end past the cap)",
                secs(f)
            )),
            secs(*extrapolated_ns)
        ),
        CaseNote::TimeoutStopped {
            case_timeout_ns,
            repetitions,
            asked,
        } => format!(
            "--case-timeout {}: {} ran{}; the next would not have fit",
            cap(*case_timeout_ns),
            n_of(u64::from(*repetitions), "repetition", "repetitions"),
            asked.map_or(String::new(), |n| format!(" of the {n} asked"))
        ),
        CaseNote::Passes { .. } => passes(n),
        CaseNote::Verified { bytes, checking_ns } => format!(
            "verified {} ({:.2} s checking)",
            fmt_bytes(*bytes),
            secs(*checking_ns)
        ),
        CaseNote::SpanCapped {
            span_bytes,
            file_bytes,
        } => format!(
            "span {} capped at the file size, {} (use a larger --size)",
            fmt_bytes(*span_bytes),
            fmt_bytes(*file_bytes)
        ),
        CaseNote::CacheNotMade { cache, error } => {
            format!("could not make the cache {cache}: {error}")
        }
        CaseNote::NeighbourFailed { error } => format!("neighbour: {error}"),
        CaseNote::RepetitionRefused {
            repetition,
            reason,
            earlier,
        } => format!(
            "repetition {repetition} could not run ({}); the case keeps its {} earlier",
            super::skips::skip(reason),
            n_of(u64::from(*earlier), "repetition", "repetitions")
        ),
        CaseNote::SqpollCpuUnused { method } => {
            format!("--sqpoll-cpu applies to uring-sqpoll only; {method} has no SQPOLL thread")
        }
        CaseNote::CopyOneThread { threads } => {
            format!("one thread copies: --threads {threads} does not apply to the copy pattern")
        }
        CaseNote::CopyWhole { span } => format!(
            "the copy moves the whole {} (--io-size does not apply to it)",
            if *span { "span" } else { "file" }
        ),
        CaseNote::CopyUnplaced => "placement (--cpus, --numa-node, --mem-node, --sqpoll-cpu) does not apply to the copy pattern: one unpinned thread copies with the copy method's own buffers".into(),
        CaseNote::Engine { text } => text.clone(),
        CaseNote::ReplayCut { limit_ns } => format!(
            "each repetition replayed for at most {:.2} s (its share of --budget), short of the trace's end: its figures are of the ops it reached",
            secs(*limit_ns)
        ),
    }
}

/// How a sequential case used its time limit.
fn passes(n: &CaseNote) -> String {
    let CaseNote::Passes {
        kind,
        limit_ns,
        passes,
        method,
        keeps,
        writes,
        duration_ns,
        suggested_size_bytes,
    } = n
    else {
        return String::new();
    };
    let limit = fmt_duration(Duration::from_nanos(*limit_ns));
    let why = why_one_pass(*keeps, &method.to_string());
    let (verb, to, from) = if *writes {
        ("writes", "write to", "writes to")
    } else {
        ("reads", "read", "reads from")
    };
    match kind {
        // The file itself: the device's blocks, or on tmpfs its memory.
        PassNote::WrappedUncached => format!(
            "ran the whole --time {limit}, {passes:.1} passes over its range per repetition ({method} keeps no cache: every pass {verb} the file itself again, not a cached copy)"
        ),
        // A caching method started over from a warm cache: memory is what
        // was asked for.
        PassNote::WrappedWarm => format!(
            "ran the whole --time {limit}, {passes:.1} passes over its range per repetition from a warm cache ({why}: every pass {from} memory, as --cache warm asks)"
        ),
        // A caching method started over because its case asked for it
        // (`until = "time"`, fio's `time_based`): passes after the first
        // may be served by its cache.
        PassNote::WrappedAsAsked => format!(
            "ran the whole --time {limit}, {passes:.1} passes over its range per repetition, as its job asks (until = \"time\", fio's time_based); {why}, so passes after the first may {to} memory, not the device"
        ),
        PassNote::OnePass => format!(
            "capped at one pass: {:.2} s of the --time {limit} ({why}, so a second pass could {} memory); for repetitions that last {limit}, give --size {} or more",
            *duration_ns as f64 / 1e9,
            if *writes { "write to" } else { "read" },
            suggested_size_bytes.map_or("larger".into(), crate::model::units::fmt_size_flag)
        ),
    }
}

/// Why a caching method's sequential case stops after one pass, in words
/// that are true of the method (`name` as the result names it).
pub fn why_one_pass(keeps: Keeper, name: &str) -> String {
    match keeps {
        // RWF_DONTCACHE drops a page once its I/O is done, but not one
        // that was cached before, and on ext4 not an overwrite's
        // (warning dontcache_pages_kept).
        Keeper::DropsAfter => format!(
            "{name} drops pages after its I/O, but keeps those cached before it and, on ext4, those of overwrites"
        ),
        Keeper::OwnCache => format!("{name} keeps pages in its own cache"),
        Keeper::PageCache => format!("{name} keeps pages in the page cache"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::CaseResult;
    use crate::run::estimate::Estimate;

    use crate::run::estimate::plan_of_args as plan;

    fn estimate_line(args: &[&str], size: u64, prefill: bool) -> String {
        let p = plan(args);
        let jobs = crate::run::job::jobs(&p.cases, p.schedule);
        let e = Estimate::of(&p, size, prefill, &jobs, &|_| None);
        line(&Event::Estimate {
            estimate: &e,
            plan: &p,
        })
    }

    /// The estimate's words for the plans `run::estimate`'s tests check
    /// as facts: fixed counts, the default run, jobs short of their
    /// verdicts' rounds (each remedy), an open-ended pass, a case timeout.
    #[test]
    fn estimate_lines() {
        let g = 1 << 30;
        let lines = [
            estimate_line(
                &[
                    "--methods",
                    "direct,uring",
                    "--patterns",
                    "randread",
                    "--time",
                    "2s",
                    "--repeat",
                    "5",
                    "--size",
                    "64M",
                ],
                64 << 20,
                true,
            ),
            estimate_line(&[], g, true),
            estimate_line(&["--max-time", "500ms"], g, true),
            estimate_line(
                &[
                    "--repeat",
                    "5",
                    "--methods",
                    "direct,uring",
                    "--patterns",
                    "read",
                ],
                g,
                true,
            ),
            estimate_line(
                &[
                    "--repeat",
                    "3",
                    "--case-timeout",
                    "1s",
                    "--methods",
                    "direct,buffered",
                    "--patterns",
                    "read",
                    "--io-size",
                    "1G",
                ],
                g,
                true,
            ),
            estimate_line(
                &[
                    "--methods",
                    "buffered",
                    "--patterns",
                    "read",
                    "--io-size",
                    "1G",
                    "--repeat",
                    "2",
                ],
                g,
                false,
            ),
            estimate_line(&["--preset", "hmmap", "--time", "pass"], 4 << 30, true),
            // A budget the floor of rounds cannot keep to, and one the
            // floor fits but not the rounds every verdict needs.
            estimate_line(&["--budget", "1ms", "--size", "4M"], 4 << 20, true),
            estimate_line(&["--budget", "10s", "--size", "4M"], 4 << 20, true),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn progress_lines() {
        let s = Duration::from_secs;
        let lines = [
            line(&Event::Refused {
                cases: 3,
                left: s(75),
            }),
            line(&Event::Revised {
                left: s(130),
                spent: s(12),
            }),
            line(&Event::RankNote(&crate::result::mpi::MpiNote::UnusedTail {
                path: "/data/f".into(),
                file_bytes: (1 << 30) + (1 << 20),
                ranks: 2,
                block_size: 1 << 20,
            })),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// What the next run says of the leftovers of killed runs it removed:
    /// each file with its proof (every way a run is known gone, by mark and
    /// by tag), the cgroups, and a cgroup whose run the OOM killer killed.
    #[test]
    fn leftovers_removed() {
        let reaped = |name: &str, pid: u32, gone: Gone, by_tag: bool| Reaped {
            path: std::path::PathBuf::from(format!("/data/{name}")),
            pid,
            gone,
            by_tag,
        };
        let files = [
            reaped("iopath-41-0badcafe.dat", 41, Gone::Exited, false),
            reaped("iopath-42-copy-1f2.dat", 42, Gone::PidReused, false),
            reaped("iopath-43-12345678.dat", 43, Gone::Rebooted, true),
        ];
        let cgroups = [
            std::path::PathBuf::from("/sys/fs/cgroup/iopath-41-0"),
            std::path::PathBuf::from("/sys/fs/cgroup/iopath-42-1"),
        ];
        let lines = [
            line(&Event::StaleFiles(&files[..1])),
            line(&Event::StaleFiles(&files)),
            line(&Event::StaleCgroups(&cgroups[..1])),
            line(&Event::StaleCgroups(&cgroups)),
            line(&Event::OomKilled {
                cgroup: &cgroups[0],
                kills: 2,
            }),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// The killed run's --json file may not exist (killed in its first
    /// case, or no --json at all): the OOM notice must not promise one.
    #[test]
    fn oom_notice_does_not_promise_a_json_file() {
        let m = line(&Event::OomKilled {
            cgroup: std::path::Path::new("/sys/fs/cgroup/memory/iopath-1-0"),
            kills: 1,
        });
        assert!(!m.contains("its results are in its --json file"), "{m}");
        assert!(m.contains("if it was given --json"), "{m}");
    }

    /// Notices of what iopath removed outside its run are said under
    /// --quiet too; the estimate and its revisions are not.
    #[test]
    fn removals_are_said_under_quiet() {
        let paths = [std::path::PathBuf::from("/x")];
        assert!(Event::StaleCgroups(&paths).said_when_quiet());
        assert!(Event::StaleFiles(&[]).said_when_quiet());
        assert!(Event::OomKilled {
            cgroup: &paths[0],
            kills: 1
        }
        .said_when_quiet());
        let note = crate::result::mpi::MpiNote::TargetsDiffer { groups: Vec::new() };
        assert!(!Event::RankNote(&note).said_when_quiet());
        assert!(!Event::Revised {
            left: Duration::ZERO,
            spent: Duration::ZERO
        }
        .said_when_quiet());
    }

    /// Every case note's words, one per code.
    #[test]
    fn case_notes() {
        let notes = [
            CaseNote::TimeoutCut {
                case_timeout_ns: Some(10_000_000_000),
                repetition: 3,
                fraction_done: 0.4567,
                duration_ns: 9_870_000_000,
                flush_ns: Some(1_230_000_000),
                extrapolated_ns: 21_600_000_000,
            },
            CaseNote::TimeoutCut {
                case_timeout_ns: Some(10_000_000_000),
                repetition: 1,
                fraction_done: 0.5,
                duration_ns: 10_000_000_000,
                flush_ns: None,
                extrapolated_ns: 20_000_000_000,
            },
            CaseNote::TimeoutStopped {
                case_timeout_ns: Some(45_000_000_000),
                repetitions: 2,
                asked: Some(5),
            },
            CaseNote::TimeoutStopped {
                case_timeout_ns: Some(45_000_000_000),
                repetitions: 1,
                asked: None,
            },
            passes_note(
                PassNote::WrappedUncached,
                "direct",
                Keeper::PageCache,
                false,
            ),
            passes_note(PassNote::WrappedWarm, "buffered", Keeper::PageCache, false),
            passes_note(
                PassNote::WrappedAsAsked,
                "buffered",
                Keeper::PageCache,
                true,
            ),
            passes_note(PassNote::OnePass, "dontcache", Keeper::DropsAfter, false),
            passes_note(PassNote::OnePass, "ucache", Keeper::OwnCache, true),
            CaseNote::Verified {
                bytes: 64 << 20,
                checking_ns: 120_000_000,
            },
            CaseNote::SpanCapped {
                span_bytes: 8 << 30,
                file_bytes: 1 << 30,
            },
            CaseNote::CacheNotMade {
                cache: "cold".into(),
                error: "EPERM".into(),
            },
            CaseNote::NeighbourFailed {
                error: "cannot start".into(),
            },
            CaseNote::RepetitionRefused {
                repetition: 4,
                reason: crate::result::skip::Skip::Unusable {
                    reason: "ENOMEM".into(),
                },
                earlier: 3,
            },
            CaseNote::SqpollCpuUnused {
                method: "uring".into(),
            },
            CaseNote::CopyOneThread { threads: 4 },
            CaseNote::CopyWhole { span: true },
            CaseNote::CopyWhole { span: false },
            CaseNote::CopyUnplaced,
            CaseNote::Engine {
                text: "tmpfs accepts O_DIRECT".into(),
            },
            CaseNote::ReplayCut {
                limit_ns: 520_000_000,
            },
        ];
        let words: Vec<String> = notes.iter().map(note).collect();
        insta::assert_snapshot!(words.join("\n"));
    }

    fn passes_note(kind: PassNote, method: &str, keeps: Keeper, writes: bool) -> CaseNote {
        CaseNote::Passes {
            kind,
            limit_ns: 2_000_000_000,
            passes: 3.25,
            method: method.into(),
            keeps,
            writes,
            duration_ns: 480_000_000,
            suggested_size_bytes: (kind == PassNote::OnePass).then_some(8 << 30),
        }
    }

    /// A result written before notes were facts keeps its notes; one with
    /// facts gets their words.
    #[test]
    fn word_notes_keeps_the_notes_of_results_without_facts() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/run/pre-facts.json"
        ))
        .unwrap();
        let mut old: RunResult = serde_json::from_str(&text).unwrap();
        let before: Vec<Vec<String>> = old.cases.iter().map(|c| c.notes.clone()).collect();
        assert!(before.iter().any(|n| !n.is_empty()), "{before:?}");
        assert!(old.cases.iter().all(|c| c.facts.is_empty()));
        word_notes(&mut old);
        let after: Vec<Vec<String>> = old.cases.iter().map(|c| c.notes.clone()).collect();
        assert_eq!(before, after);
        let mut new = old.clone();
        new.cases[0] = CaseResult {
            facts: vec![CaseNote::Verified {
                bytes: 1 << 20,
                checking_ns: 0,
            }],
            ..CaseResult::default()
        };
        word_notes(&mut new);
        assert_eq!(new.cases[0].notes, ["verified 1 MiB (0.00 s checking)"]);
    }
}

//! `--replay`: the program's answer in a line, from the replay's facts
//! (`result::replay`): "replaying app.trace (3000 ops, 11.7 MiB, 1
//! thread): uring finishes in 61.2 ms against buffered's 242 ms, at 0.21x
//! the CPU per op".

use crate::model::units::{fmt_bytes, fmt_count, fmt_ns, n_of};
use crate::result::replay::{Against, Replay, ReplayAnswer, ReplayDepth};
use crate::result::RunResult;

/// The line, when the run replayed a trace and its verdict ranked two
/// methods.
pub fn line(r: &RunResult) -> Option<String> {
    let replay = r.replay.as_ref()?;
    Some(words(replay, replay.answer.as_ref()?))
}

/// What `a` says of the trace `t`.
pub fn words(t: &Replay, a: &ReplayAnswer) -> String {
    let what = format!(
        "replaying {} ({} ops, {}, {}{}{})",
        t.trace,
        fmt_count(t.ops as f64),
        fmt_bytes(t.bytes),
        n_of(t.threads, "thread", "threads"),
        match t.timing.as_str() {
            "fast" => String::new(),
            "recorded" => ", at its recorded pace".into(),
            f => format!(", its gaps times {f}"),
        },
        t.depth.map(depth).unwrap_or_default()
    );
    // Cut by the budget: the whole trace's times at the pace reached.
    let about = if a.estimated { "about " } else { "" };
    let times = format!(
        "in {about}{} against {}'s {about}{}{}",
        fmt_ns(a.pick_ns),
        a.against,
        fmt_ns(a.against_ns),
        a.against_is.map(against_words).unwrap_or_default()
    );
    let cpu = a
        .cpu_ratio
        .map(|x| format!(", at {x:.2}x the CPU per op"))
        .unwrap_or_default();
    if a.called {
        format!("{what}: {} finishes {times}{cpu}", a.pick)
    } else {
        format!(
            "{what}: {} leads (no call yet), finishing {times}{cpu}",
            a.pick
        )
    }
}

/// Why the answer names the method it sets the pick against.
fn against_words(a: Against) -> &'static str {
    match a {
        Against::DefaultPath => " (the default path)",
        Against::RunnerUp => " (the runner-up)",
        Against::Fastest => " (the fastest)",
    }
}

/// The depth the asynchronous methods replayed at, beside the program's:
/// a deeper or shallower one is a question the user asked (--qd), never
/// presented as the path's own.
fn depth(d: ReplayDepth) -> String {
    match d {
        ReplayDepth::Own { program } => {
            format!(", at the program's own depth, at most {program} in flight")
        }
        ReplayDepth::Asked { qd, program } if qd == program => {
            format!(", at --qd {qd}, the program's own depth")
        }
        ReplayDepth::Asked { qd, program } => format!(
            ", asynchronous methods at --qd {qd}, {} than the program's {program} in flight",
            if qd > program { "deeper" } else { "shallower" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(timing: &str) -> Replay {
        trace_at(timing, None)
    }

    fn trace_at(timing: &str, depth: Option<ReplayDepth>) -> Replay {
        Replay {
            trace: "app.trace".into(),
            ops: 1_200_000,
            bytes: 9 << 30,
            threads: 8,
            timing: timing.into(),
            left_out: 12,
            depth,
            answer: None,
        }
    }

    fn answer(called: bool, cpu: Option<f64>) -> ReplayAnswer {
        ReplayAnswer {
            pick: "uring".into(),
            pick_ns: 41_000_000_000,
            against: "buffered".into(),
            against_ns: 77_000_000_000,
            against_is: Some(Against::DefaultPath),
            cpu_ratio: cpu,
            called,
            estimated: false,
        }
    }

    #[test]
    fn replay_answer_words() {
        let lines = [
            words(&trace("fast"), &answer(true, Some(0.4))),
            words(&trace("recorded"), &answer(false, None)),
            words(&trace("0.5"), &answer(true, Some(1.25))),
            words(
                &trace("fast"),
                &ReplayAnswer {
                    estimated: true,
                    ..answer(true, Some(0.4))
                },
            ),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// What the pick is set against, and why it is that method.
    #[test]
    fn replay_against_words() {
        let with = |against: &str, is: Option<Against>| {
            let pick = if is == Some(Against::DefaultPath) {
                "uring"
            } else {
                "buffered"
            };
            let a = ReplayAnswer {
                pick: pick.into(),
                against: against.into(),
                against_is: is,
                // The fastest, where the pick is tied with it, cheaper.
                against_ns: if is == Some(Against::Fastest) {
                    40_000_000_000
                } else {
                    77_000_000_000
                },
                ..answer(true, Some(0.4))
            };
            words(&trace("fast"), &a)
        };
        let lines = [
            with("buffered", Some(Against::DefaultPath)),
            with("direct", Some(Against::RunnerUp)),
            with("uring", Some(Against::Fastest)),
            with("aio", None),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn replay_depth_words() {
        let at = |d| words(&trace_at("fast", Some(d)), &answer(true, Some(0.4)));
        let lines = [
            at(ReplayDepth::Own { program: 1 }),
            at(ReplayDepth::Asked { qd: 32, program: 1 }),
            at(ReplayDepth::Asked { qd: 4, program: 16 }),
            at(ReplayDepth::Asked {
                qd: 16,
                program: 16,
            }),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }
}

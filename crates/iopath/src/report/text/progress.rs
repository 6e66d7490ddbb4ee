//! Words for the progress lines on stderr ([`ProgressWords`]): the
//! prefill bar, the case bar, the time left, a repetition's live figures
//! (`buffered randread 4k Q32T1 · rep 3/5 · 2150.3 MiB/s · 550.4k IOPS`).

use std::time::Duration;

use crate::model::units::{fmt_bytes, fmt_count, fmt_wall};
use crate::run::progress::{ProgressWords, RepLine, RepTag};

/// The words the CLI gives the runner's progress lines.
pub const WORDS: ProgressWords = ProgressWords {
    prefill,
    cases: cases_template,
    left,
    rep: rep_line,
};

/// The prefill bar's template and message: `prefilling 1 GiB [====> ]`.
fn prefill(len: u64) -> (String, String) {
    (
        "{msg:>20} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}".into(),
        format!("prefilling {}", fmt_bytes(len)),
    )
}

/// The case bar's template: `3/38 cases`, `0/1 case`.
fn cases_template(len: u64) -> String {
    format!(
        "[{{elapsed_precise}}] [{{bar:30}}] {{pos}}/{{len}} {}{{prefix}}  {{msg}}",
        if len == 1 { "case" } else { "cases" }
    )
}

/// The line's time left: `, about 2 min 10 s left`.
fn left(left: Duration) -> String {
    format!(", about {} left", fmt_wall(left))
}

/// Which repetition a line is about: `rep 3`, `rep 3/5` (with `--repeat
/// 5`), `warm-up 1/2`.
pub fn tag(t: RepTag) -> String {
    let kind = if t.warmup { "warm-up" } else { "rep" };
    match t.of {
        Some(of) => format!("{kind} {}/{of}", t.n),
        None => format!("{kind} {}", t.n),
    }
}

/// A repetition's message, live or finished, with `· flushing` while a
/// worker is in its final fsync/close.
fn rep_line(l: &RepLine<'_>) -> String {
    format!(
        "{} · {} · {:.1} MiB/s · {} IOPS{}",
        l.case,
        tag(l.tag),
        l.mib_s,
        fmt_count(l.iops),
        if l.flushing { " · flushing" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_case_bar_counts_one_case_or_several() {
        assert!(cases_template(1).contains("{pos}/{len} case{prefix}"));
        assert!(cases_template(38).contains("{pos}/{len} cases{prefix}"));
        assert!(indicatif::ProgressStyle::with_template(&cases_template(2)).is_ok());
        assert!(indicatif::ProgressStyle::with_template(&prefill(1 << 30).0).is_ok());
    }

    #[test]
    fn lines() {
        let line = |case, warmup, n, of, mib_s, iops, flushing| {
            rep_line(&RepLine {
                case,
                tag: RepTag { warmup, n, of },
                mib_s,
                iops,
                flushing,
            })
        };
        let lines = [
            line(
                "buffered randread 4k Q32T1",
                false,
                3,
                None,
                2150.34,
                550_400.0,
                false,
            ),
            line("direct write 1M Q8T1", true, 1, Some(2), 0.0, 0.0, true),
            tag(RepTag {
                warmup: false,
                n: 2,
                of: Some(5),
            }),
            left(Duration::from_secs(130)),
            prefill(1 << 30).1,
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }
}

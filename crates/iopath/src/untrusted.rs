//! Text iopath did not write itself (a result's strings, a job file's or
//! fio file's lines, a path) made safe for a terminal or a text file: every
//! control character but the line feed and the tab is written out visibly
//! (`\x1b`, `\x00`, `\x7f`, `\u{9b}`), so an escape sequence in a result
//! (OSC 52 writes the clipboard, `\e[2J` clears the screen) is shown, never
//! obeyed.
//!
//! It is applied where text leaves iopath, not where it is read: the JSON a
//! run writes keeps the exact data (serde escapes what JSON must), and the
//! renderers stay free of it. The sinks are `commands::write_stdout` (every
//! text on stdout), the CSV and Markdown files (`report::Outputs::write`),
//! the HTML escape (`report::html::escape`), the errors `main` prints, and
//! the lines the runner and `compare` write on stderr.

use std::borrow::Cow;
use std::fmt::{self, Write};

/// Whether `c` is shown escaped: the C0 controls but `\n` and `\t`, DEL,
/// and the C1 controls (U+0080 to U+009F, which some terminals obey as
/// escapes: U+009B is CSI).
fn hidden(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Write `c`'s visible form: `\x1b` below U+0080, `\u{9b}` above.
fn escape_into(out: &mut impl Write, c: char) -> fmt::Result {
    let n = u32::from(c);
    if n < 0x80 {
        write!(out, "\\x{n:02x}")
    } else {
        write!(out, "\\u{{{n:x}}}")
    }
}

/// `s` with every control character but `\n` and `\t` written out
/// visibly; borrowed when there is none (the usual case).
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hidden(c) {
            // Writing to a String cannot fail.
            let _ = escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Displays its value with [`visible`] applied: `eprintln!("error: {}",
/// Visible(format_args!("{e:#}")))`.
#[derive(Debug, Clone, Copy)]
pub struct Visible<T>(pub T);

impl<T: fmt::Display> fmt::Display for Visible<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        f.write_str(&visible(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_and_clear_screen_are_shown_not_sent() {
        let s = "ext4\u{1b}]52;c;aGk=\u{7}\u{1b}[2J";
        assert_eq!(visible(s), "ext4\\x1b]52;c;aGk=\\x07\\x1b[2J");
    }

    #[test]
    fn c1_controls_del_and_nul_are_escaped() {
        assert_eq!(visible("a\u{9b}2Jb"), "a\\u{9b}2Jb");
        assert_eq!(visible("\u{80}\u{9f}"), "\\u{80}\\u{9f}");
        assert_eq!(visible("x\u{7f}\0"), "x\\x7f\\x00");
        assert_eq!(visible("line\r"), "line\\x0d");
    }

    #[test]
    fn line_feed_tab_and_printable_text_are_kept_as_they_are() {
        let s = "a\tb\nc é ü 日本 \u{a0}\\x1b";
        assert!(matches!(visible(s), Cow::Borrowed(t) if t == s));
    }

    #[test]
    fn the_wrapper_escapes_what_it_displays() {
        let e = anyhow::anyhow!("line 3: 'x\u{1b}[31m'").context("job.toml");
        assert_eq!(
            Visible(format_args!("{e:#}")).to_string(),
            "job.toml: line 3: 'x\\x1b[31m'"
        );
    }
}

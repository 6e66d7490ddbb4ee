//! Text iopath did not write itself (a result's strings, a job file's or
//! fio file's lines, a path) made safe for a terminal or a text file: every
//! control character but the line feed and the tab, and every invisible
//! format character that reorders or hides text (the bidi overrides and
//! isolates, U+200E/U+200F, U+061C), is written out visibly (`\x1b`,
//! `\x00`, `\x7f`, `\u{9b}`, `\u{202e}`), so an escape sequence in a
//! result (OSC 52 writes the clipboard, `\e[2J` clears the screen) is
//! shown, never obeyed, and text reads in the order it is stored.
//!
//! Two levels, because iopath's own text has lines and a value must not:
//! - [`visible`] is the pass over a whole output, applied where text leaves
//!   iopath: `commands::write_stdout` (every text on stdout), the CSV and
//!   Markdown files (`report::Outputs::write`), the HTML escape
//!   (`report::html::escape`), the errors `main` prints (clap's included),
//!   and the lines the runner and `compare` write on stderr. It keeps `\n`.
//! - [`field`] / [`Field`] is for one value placed in iopath's text (a
//!   method, a note, a file system type): its line feeds and carriage
//!   returns are shown too (`\x0a`), so a value cannot start a line of its
//!   own. [`one_line`] applies it to every string of a document (a
//!   result, a comparison) before a renderer places them: the table,
//!   Markdown, HTML, `compare`'s text. (CSV keeps a line feed inside its
//!   quoted field: a CSV reader reads the exact value.)
//!
//! The JSON a run writes keeps the exact data: [`json_escaped`] writes the
//! characters serde leaves raw (C1 controls, bidi controls) as `\u0080`,
//! which parse back to the same string.

use std::borrow::Cow;
use std::fmt::{self, Write};

/// Whether `c` is shown escaped: the C0 controls but `\n` and `\t`, DEL,
/// the C1 controls (U+0080 to U+009F, which some terminals obey as
/// escapes: U+009B is CSI), and the invisible characters that reorder or
/// mark the direction of text ([`bidi_control`]).
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || bidi_control(c)
}

/// The bidi embeddings and overrides (U+202A to U+202E), isolates (U+2066
/// to U+2069) and marks (U+200E, U+200F, U+061C): invisible, they make a
/// line show in another order than it reads ("Trojan Source").
fn bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// [`hidden`], and for a value on one line the line feed too.
fn hidden_in_field(c: char) -> bool {
    hidden(c) || c == '\n'
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

/// `s` with every control character but `\n` and `\t` (and every bidi
/// control) written out visibly; borrowed when there is none (the usual
/// case).
pub fn visible(s: &str) -> Cow<'_, str> {
    escaped(s, hidden)
}

/// One untrusted value as it may be placed in iopath's text: [`visible`],
/// and its line feeds written out too (`\x0a`), so that it stays on its
/// line; borrowed when there is nothing to escape.
pub fn field(s: &str) -> Cow<'_, str> {
    escaped(s, hidden_in_field)
}

fn escaped(s: &str, hide: fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(hide) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hide(c) {
            // Writing to a String cannot fail.
            let _ = escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A copy of `doc` (a result, a comparison) with [`field`] applied to
/// every string in it, for the renderers that place those strings in
/// lines of their own text; borrowed when no string needs it. The copy
/// is made through its JSON form, so it covers every field, present and
/// future; a document that does not make the round trip (a float that is
/// not a number, which no result read from a file holds) has its strings
/// left as they are, and the whole-output pass still shows its controls.
pub fn one_line<T>(doc: &T) -> Cow<'_, T>
where
    T: Clone + serde::Serialize + serde::de::DeserializeOwned,
{
    let Ok(mut v) = serde_json::to_value(doc) else {
        return Cow::Borrowed(doc);
    };
    if !fields_escaped(&mut v) {
        return Cow::Borrowed(doc);
    }
    serde_json::from_value(v).map_or(Cow::Borrowed(doc), Cow::Owned)
}

/// [`field`] on every string (and object key) of `v`; whether any changed.
fn fields_escaped(v: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => match field(s) {
            Cow::Owned(t) => {
                *s = t;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Array(a) => a.iter_mut().fold(false, |any, x| fields_escaped(x) | any),
        Value::Object(m) => {
            let mut any = false;
            let keys: Vec<String> = m
                .keys()
                .filter(|k| matches!(field(k), Cow::Owned(_)))
                .cloned()
                .collect();
            for k in keys {
                if let Some(x) = m.remove(&k) {
                    m.insert(field(&k).into_owned(), x);
                    any = true;
                }
            }
            m.values_mut().fold(any, |any, x| fields_escaped(x) | any)
        }
        _ => false,
    }
}

/// Serialized JSON with the characters serde writes raw but a terminal
/// may obey or reorder (the C1 controls, DEL, the bidi controls: every
/// [`hidden`] one outside ASCII's C0, which serde escapes itself) written
/// as `\u0080`: the same data when parsed. They can only be inside
/// strings, so each becomes a JSON escape there.
pub fn json_escaped(json: String) -> String {
    if !json.chars().any(hidden) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if hidden(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// Write `text`, made [`visible`], to stderr, and ignore a failure:
/// `eprint!` panics when the write fails, and a closed terminal (the
/// SIGHUP a run ends on) or a reader gone (`2>&1 | head`) must not turn a
/// message into a panic (exit 101).
pub fn to_stderr(text: impl fmt::Display) {
    use std::io::Write;
    let text = text.to_string();
    let _ = std::io::stderr()
        .lock()
        .write_all(visible(&text).as_bytes());
}

/// [`to_stderr`] with a line feed: the `eprintln!` that never panics.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::model::untrusted::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Displays its value with [`visible`] applied: `say!("error: {}",
/// Visible(format_args!("{e:#}")))`.
#[derive(Debug, Clone, Copy)]
pub struct Visible<T>(pub T);

impl<T: fmt::Display> fmt::Display for Visible<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        f.write_str(&visible(&text))
    }
}

/// Displays its value with [`field`] applied: a value placed on a line of
/// iopath's text (`format!("{}: {}", name, Field(&notes))`).
#[derive(Debug, Clone, Copy)]
pub struct Field<T>(pub T);

impl<T: fmt::Display> fmt::Display for Field<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        f.write_str(&field(&text))
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

    #[test]
    fn bidi_overrides_isolates_and_marks_are_shown() {
        let s = "a\u{202e}b\u{202a}\u{2066}\u{2069}\u{200e}\u{200f}\u{61c}c";
        assert_eq!(
            visible(s),
            "a\\u{202e}b\\u{202a}\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}c"
        );
        // Other format characters that only join or break words stay.
        assert!(matches!(visible("a\u{200d}b"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_field_keeps_to_its_line_the_whole_output_keeps_its_lines() {
        let forged = "mmap\nFORGED: use mmap, 99 GB/s\r";
        assert_eq!(field(forged), "mmap\\x0aFORGED: use mmap, 99 GB/s\\x0d");
        assert_eq!(Field(forged).to_string(), field(forged));
        assert_eq!(visible(forged), "mmap\nFORGED: use mmap, 99 GB/s\\x0d");
        assert!(matches!(field("a\tb"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_line_escapes_every_string_of_a_document_and_only_when_needed() {
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        struct Doc {
            name: String,
            notes: Vec<String>,
            n: u32,
        }
        let clean = Doc {
            name: "ext4".into(),
            notes: vec!["ok".into()],
            n: 3,
        };
        assert!(matches!(one_line(&clean), Cow::Borrowed(_)));
        let forged = Doc {
            notes: vec!["x\nFORGED".into()],
            ..clean.clone()
        };
        let done = one_line(&forged);
        assert_eq!(done.notes, ["x\\x0aFORGED"]);
        assert_eq!((&done.name, done.n), (&clean.name, 3));
    }

    #[test]
    fn json_writes_c1_and_bidi_controls_as_escapes_of_the_same_data() {
        let s = "a\u{9b}2J\u{202e}b\u{85}";
        let json = json_escaped(serde_json::to_string(&s).unwrap());
        assert_eq!(json, "\"a\\u009b2J\\u202eb\\u0085\"");
        assert!(!json.chars().any(|c| u32::from(c) >= 0x80));
        assert_eq!(serde_json::from_str::<String>(&json).unwrap(), s);
    }
}

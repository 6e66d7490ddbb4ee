//! Text around the tables: paragraphs wrapped to a width, and the lists of
//! cases a warning concerns said in groups (`6 cases: buffered, mmap,
//! uring-buffered on read, randread`) rather than one by one.

pub use crate::model::units::wrap;

/// True for a line of a drawn table (its borders and rows), which
/// [`fit`] leaves as comfy-table laid it out.
fn is_table_line(l: &str) -> bool {
    l.starts_with(['┌', '│', '╞', '├', '└', '╭', '╰'])
}

/// Every line of `text` longer than `width` but a table's, wrapped at
/// spaces with a hanging indent: its own indent, plus the width of a
/// bullet (`- `, `→ `) when it starts with one, else two spaces more
/// (`  read 1M Q8T1: ...` goes on under `    `). Shorter lines, tables and
/// empty lines are kept as they are; a word longer than the width stands
/// on a line of its own, uncut (a long path).
pub fn fit(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.chars().count() <= width || is_table_line(line) {
            out.push_str(line);
            continue;
        }
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        let bullet = ["- ", "→ ", "• "]
            .iter()
            .find(|b| body.starts_with(*b))
            .map_or(0, |b| b.chars().count());
        let first = &line[..indent + body.find(' ').filter(|_| bullet > 0).map_or(0, |p| p + 1)];
        let rest = " ".repeat(indent + if bullet > 0 { bullet } else { 2 });
        let wrapped = wrap(&line[first.len()..], width, first, &rest);
        out.push_str(wrapped.strip_suffix('\n').unwrap_or(&wrapped));
    }
    out
}

/// A warning's cases (`method/pattern`, with a label or a figure after
/// the pattern: `mmap/randread (35x)`) in few words: up to three as they
/// are; more as their count and groups of methods that share the same
/// patterns (`12 cases: buffered, direct, mmap on read, write, randread,
/// randwrite`).
pub fn case_groups(cases: &[String]) -> String {
    if cases.len() <= 3 {
        return cases.join(", ");
    }
    let pairs: Vec<(&str, &str)> = cases
        .iter()
        .map(|c| c.split_once('/').unwrap_or((c.as_str(), "")))
        .collect();
    format!(
        "{} cases: {}",
        cases.len(),
        by_method(&pairs, "/").join("; ")
    )
}

/// Cases as (method, what else names them) pairs, said in groups of
/// methods that share the same list (`buffered, mmap on read, randread`),
/// in order of appearance; a method with one thing after it is written
/// `method{single}what` (`mmap/randread`, `uring-iopoll read 1M Q8T1`).
pub fn by_method(pairs: &[(&str, &str)], single: &str) -> Vec<String> {
    // Each method with what follows it, in order of appearance.
    // (Hashed: linear in the pairs, whatever their number.)
    let mut by_method: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = Default::default();
    let mut seen: std::collections::HashSet<(&str, &str)> = Default::default();
    for &(m, what) in pairs {
        if !seen.insert((m, what)) {
            continue;
        }
        let i = *at.entry(m).or_insert_with(|| {
            by_method.push((m, Vec::new()));
            by_method.len() - 1
        });
        by_method[i].1.push(what);
    }
    // Methods with the same list go together.
    let mut groups: Vec<(Vec<&str>, &Vec<&str>)> = Vec::new();
    for (m, what) in &by_method {
        match groups.iter_mut().find(|(_, w)| *w == what) {
            Some((ms, _)) => ms.push(m),
            None => groups.push((vec![m], what)),
        }
    }
    groups
        .iter()
        .map(|(ms, what)| {
            let what: Vec<&str> = what.iter().copied().filter(|w| !w.is_empty()).collect();
            match (ms.len(), what.len()) {
                (_, 0) => ms.join(", "),
                (1, 1) => format!("{}{single}{}", ms[0], what[0]),
                _ => format!("{} on {}", ms.join(", "), what.join(", ")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_wrap_at_spaces_within_the_width() {
        let text = "the 64 MiB file fits in the 21.7 GiB of available memory: cached methods serve re-read pages";
        let out = wrap(text, 40, "  - ", "    ");
        assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
        assert!(out.starts_with("  - the 64 MiB"), "{out}");
        assert!(out.lines().skip(1).all(|l| l.starts_with("    ")), "{out}");
        let words: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(words[1..].join(" "), text, "no word lost");
        // A word longer than the width stands alone, uncut.
        let long = wrap("a /very/long/path/name b", 8, "", "");
        assert_eq!(long, "a\n/very/long/path/name\nb\n");
        // A number keeps its unit.
        assert_eq!(
            wrap("limit of 4.6 GiB (vm.dirty_ratio)", 12, "", ""),
            "limit of\n4.6 GiB\n(vm.dirty_ratio)\n"
        );
        assert_eq!(
            wrap("at 150 ms; 3 cases", 8, "", ""),
            "at\n150 ms;\n3 cases\n"
        );
    }

    #[test]
    fn long_lines_wrap_with_a_hanging_indent_and_tables_stay() {
        let long = "word ".repeat(40);
        let text = format!(
            "verdict:\n  read 1M Q8T1: {long}\n  - a note: {long}\n  → use {long}\n│ {long}│\nshort\n\ntarget: {long}"
        );
        let out = fit(&text, 60);
        let lines: Vec<&str> = out.lines().collect();
        // Tables are left alone, everything else fits.
        assert!(lines
            .iter()
            .any(|l| l.starts_with('│') && l.chars().count() > 60));
        assert!(
            lines
                .iter()
                .filter(|l| !l.starts_with('│'))
                .all(|l| l.chars().count() <= 60),
            "{out}"
        );
        // Each paragraph goes on under its own indent and bullet.
        let after = |start: &str| {
            let i = lines.iter().position(|l| l.starts_with(start)).unwrap();
            lines[i + 1]
        };
        assert!(after("  read 1M Q8T1:").starts_with("    word"), "{out}");
        assert!(after("  - a note:").starts_with("    word"), "{out}");
        assert!(after("  → use").starts_with("    word"), "{out}");
        assert!(after("target:").starts_with("  word"), "{out}");
        // Short and empty lines, and the words, are kept.
        assert!(out.contains("\nshort\n\n"), "{out}");
        assert_eq!(
            out.split_whitespace().filter(|w| *w == "word").count(),
            text.split_whitespace().filter(|w| *w == "word").count()
        );
        assert_eq!(fit("a\nb\n", 60), "a\nb\n");
    }

    #[test]
    fn long_case_lists_are_counted_and_grouped() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // A few: as they are.
        assert_eq!(
            case_groups(&s(&["mmap/randread (713x)"])),
            "mmap/randread (713x)"
        );
        // Methods x patterns: one group.
        let mut all = Vec::new();
        for p in ["read", "write", "randread", "randwrite"] {
            for m in ["buffered", "direct", "mmap"] {
                all.push(format!("{m}/{p}"));
            }
        }
        assert_eq!(
            case_groups(&all),
            "12 cases: buffered, direct, mmap on read, write, randread, randwrite"
        );
        // Methods with different patterns: one group each.
        let mixed = s(&[
            "buffered/read",
            "mmap/read",
            "buffered/randread",
            "mmap/randread",
            "uring-buffered/read",
        ]);
        assert_eq!(
            case_groups(&mixed),
            "5 cases: buffered, mmap on read, randread; uring-buffered/read"
        );
        // Preset labels stay with their pattern.
        let labelled = s(&[
            "buffered/read (W)",
            "buffered/read (R)",
            "mmap/read (W)",
            "mmap/read (R)",
        ]);
        assert_eq!(
            case_groups(&labelled),
            "4 cases: buffered, mmap on read (W), read (R)"
        );
    }
}

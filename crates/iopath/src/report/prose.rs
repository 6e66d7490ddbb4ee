//! Text around the tables: paragraphs wrapped to a width, and the lists of
//! cases a warning concerns said in groups (`6 cases: buffered, mmap,
//! uring-buffered on read, randread`) rather than one by one.

/// `text` wrapped at spaces to lines of at most `width` characters (a word
/// longer than that gets a line of its own), the first line after `first`,
/// the others after `rest`; every line ends with a newline.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
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
    // Each method with what follows its `/`, in order of appearance.
    let mut by_method: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in cases {
        let (m, what) = c.split_once('/').unwrap_or((c.as_str(), ""));
        match by_method.iter_mut().find(|(n, _)| *n == m) {
            Some((_, v)) => v.push(what),
            None => by_method.push((m, vec![what])),
        }
    }
    // Methods with the same list go together.
    let mut groups: Vec<(Vec<&str>, &Vec<&str>)> = Vec::new();
    for (m, what) in &by_method {
        match groups.iter_mut().find(|(_, w)| *w == what) {
            Some((ms, _)) => ms.push(m),
            None => groups.push((vec![m], what)),
        }
    }
    let said: Vec<String> = groups
        .iter()
        .map(|(ms, what)| {
            let what: Vec<&str> = what.iter().copied().filter(|w| !w.is_empty()).collect();
            match (ms.len(), what.len()) {
                (_, 0) => ms.join(", "),
                (1, 1) => format!("{}/{}", ms[0], what[0]),
                _ => format!("{} on {}", ms.join(", "), what.join(", ")),
            }
        })
        .collect();
    format!("{} cases: {}", cases.len(), said.join("; "))
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

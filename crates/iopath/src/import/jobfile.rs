//! TOML job files (`iopath run JOB.toml`): read into a
//! [`JobSpec`](crate::model::job::JobSpec), with errors that name the file,
//! the line and the key, and suggest the key a misspelt one meant.

use std::path::Path;

use crate::model::job::JobSpec;
use crate::model::UsageError;

/// The job in `path`.
pub fn load(path: &Path) -> Result<JobSpec, UsageError> {
    let cannot = |e: &dyn std::fmt::Display| {
        UsageError(format!(
            "cannot read the job file {}: {e} (give the path of a TOML job file; `iopath presets show NAME --toml` prints one to start from)",
            path.display()
        ))
    };
    let what = format!("the job file {} is", path.display());
    let bytes = crate::model::limits::JOB_FILE
        .read(path, &what, "split the job into several files")
        .map_err(|e| cannot(&e))??;
    let text = String::from_utf8(bytes).map_err(|e| cannot(&e))?;
    parse(&path.display().to_string(), &text)
}

/// The job in `text`, read from `name` (for messages).
pub fn parse(name: &str, text: &str) -> Result<JobSpec, UsageError> {
    toml::from_str::<JobSpec>(text).map_err(|e| UsageError(describe(name, text, &e)))
}

/// `job.toml:3:1: unknown key `sise` in [run]; did you mean `size`?`,
/// with the line quoted.
fn describe(name: &str, text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim();
    let place = e.span().map(|span| {
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        let quoted = text.lines().nth(line - 1).unwrap_or("").trim_end();
        (line, col, quoted.to_string())
    });
    let hint = suggestion(msg)
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    match place {
        Some((line, col, quoted)) => {
            format!("{name}:{line}:{col}: {msg}{hint}\n  {line} | {quoted}\n(docs/job-files.md lists every key)")
        }
        None => format!("{name}: {msg}{hint} (docs/job-files.md lists every key)"),
    }
}

/// For serde's "unknown field `x`, expected one of `a`, `b`": the expected
/// key nearest to `x`, if it is near enough to be a misspelling.
fn suggestion(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("unknown field `")?;
    let (unknown, rest) = rest.split_once('`')?;
    let expected: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    expected
        .into_iter()
        .map(|k| (edit_distance(unknown, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| k.to_string())
}

/// Levenshtein distance between two short keys.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_key_is_named_with_its_line_and_the_key_it_meant() {
        let text = "[run]\nsize = \"1G\"\nrepaet = 3\n";
        let e = parse("job.toml", text).unwrap_err().0;
        assert!(e.starts_with("job.toml:3:1: unknown field `repaet`"), "{e}");
        assert!(e.contains("did you mean `repeat`?"), "{e}");
        assert!(e.contains("3 | repaet = 3"), "{e}");
    }

    #[test]
    fn a_bad_value_is_named_with_its_place_and_what_is_valid() {
        let text = "[[case]]\nmethod = [\"direct\", \"fast\"]\n";
        let e = parse("j.toml", text).unwrap_err().0;
        assert!(e.starts_with("j.toml:2:"), "{e}");
        assert!(
            e.contains("unknown method 'fast'") && e.contains("uring"),
            "{e}"
        );
        let e = parse("j.toml", "[run]\nsize = \"4 parsecs\"\n")
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("j.toml:2:8:") && e.contains("unknown size unit"),
            "{e}"
        );
    }

    #[test]
    fn far_off_keys_get_no_guess() {
        let e = parse("j.toml", "[run]\nbanana = 1\n").unwrap_err().0;
        assert!(
            e.contains("unknown field `banana`") && !e.contains("did you mean"),
            "{e}"
        );
        assert_eq!(edit_distance("sise", "size"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn a_missing_file_says_what_to_do() {
        let e = load(Path::new("/nonexistent/job.toml")).unwrap_err().0;
        assert!(
            e.contains("/nonexistent/job.toml") && e.contains("--toml"),
            "{e}"
        );
    }
}

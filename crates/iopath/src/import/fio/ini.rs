//! fio's INI dialect, to sections of `key[=value]` entries, each with the
//! file and line it came from. Comments, includes, `${VAR}`, fio's
//! keywords and their `bc` arithmetic are dealt with here; what the options
//! mean is not (see the parent module for the rules).

use std::path::{Path, PathBuf};

use super::{expr, BadValue, Context, FioError, Include, Location, Problem, Syntax};

/// Includes deeper than this are refused (fio has no limit, and no cycle
/// check: it recurses until it runs out of file descriptors).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Section names longer than this are refused (fio truncates them).
const MAX_SECTION_NAME: usize = 255;

/// fio's keywords, in the order fio replaces them.
pub const KEYWORDS: [&str; 3] = ["$pagesize", "$mb_memory", "$ncpus"];

/// One section, `[global]` or a job, with its entries in file order
/// (included files' entries where the `include` line was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets, as written.
    pub name: String,
    /// A global section: its name starts with `global`.
    pub global: bool,
    /// The header line.
    pub at: Location,
    pub entries: Vec<Entry>,
}

/// One option line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The option name as written (blanks before `=` removed).
    pub key: String,
    /// The value, comment removed, `${VAR}` and keywords expanded, blanks
    /// around it removed; `None` for a bare `key`.
    pub value: Option<String>,
    /// The value had blanks right after `=`: fio keeps them, and reads
    /// many values differently then.
    pub space_after_eq: bool,
    pub at: Location,
}

/// Read a job file and the files it includes.
pub fn read_file(path: &Path, ctx: &Context) -> Result<Vec<Section>, FioError> {
    let at = Location {
        file: path.to_path_buf(),
        line: 0,
    };
    let bytes = read_capped(
        path,
        "the job file is",
        &at,
        Problem::Unreadable,
        "cannot read the job file",
    )?;
    let mut reader = Reader::new(ctx);
    reader.read_bytes = bytes.len() as u64;
    reader.stack.push(identity(path));
    reader.lines(&bytes, path, false)?;
    Ok(reader.sections)
}

/// The bytes of `path`, at most [`crate::model::limits::JOB_FILE`] of them.
fn read_capped(
    path: &Path,
    what: &str,
    at: &Location,
    problem: fn(String) -> Problem,
    cannot: &str,
) -> Result<Vec<u8>, FioError> {
    match crate::model::limits::JOB_FILE.read(path, what, "split the job") {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => Err(FioError::new(at, problem(e.0))),
        Err(e) => Err(FioError::new(at, problem(format!("{cannot}: {e}")))),
    }
}

/// Read a job file given as text; `path` names it in messages and is where
/// relative includes are looked up from.
pub fn read_str(text: &str, path: &Path, ctx: &Context) -> Result<Vec<Section>, FioError> {
    let mut reader = Reader::new(ctx);
    reader.read_bytes = text.len() as u64;
    reader.stack.push(identity(path));
    reader.lines(text.as_bytes(), path, false)?;
    Ok(reader.sections)
}

/// The path a file is known by for cycle checks.
fn identity(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

struct Reader<'c> {
    ctx: &'c Context,
    sections: Vec<Section>,
    /// The files being read, outermost first.
    stack: Vec<PathBuf>,
    /// Bytes read so far, the job file and every include (the same file
    /// included again counts again): bounded as one job file is.
    read_bytes: u64,
}

impl<'c> Reader<'c> {
    fn new(ctx: &'c Context) -> Reader<'c> {
        Reader {
            ctx,
            sections: Vec::new(),
            stack: Vec::new(),
            read_bytes: 0,
        }
    }

    fn lines(&mut self, bytes: &[u8], path: &Path, nested: bool) -> Result<(), FioError> {
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let at = Location {
                file: path.to_path_buf(),
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            };
            let Ok(raw) = std::str::from_utf8(raw) else {
                let first = raw.iter().find(|b| !b.is_ascii_whitespace());
                if matches!(first, None | Some(b';' | b'#')) {
                    continue;
                }
                return Err(FioError::new(&at, Syntax::NotUtf8));
            };
            let line = strip(raw);
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                if nested {
                    return Err(FioError::new(
                        &at,
                        Include::Section {
                            line: line.to_string(),
                        },
                    ));
                }
                self.section(rest, line, &at)?;
                continue;
            }
            if !nested && self.sections.is_empty() {
                return Err(FioError::new(
                    &at,
                    Syntax::OutsideSection {
                        line: line.to_string(),
                    },
                ));
            }
            if let Some(rest) = line.strip_prefix("include") {
                self.include(rest, line, &at)?;
                continue;
            }
            let entry = self.option(line, &at)?;
            if let Some(section) = self.sections.last_mut() {
                section.entries.push(entry);
            }
        }
        Ok(())
    }

    fn section(&mut self, rest: &str, line: &str, at: &Location) -> Result<(), FioError> {
        let Some(name) = rest.strip_suffix(']') else {
            return Err(FioError::new(
                at,
                Syntax::NotSectionHeader {
                    line: line.to_string(),
                },
            ));
        };
        if name.trim().is_empty() {
            return Err(FioError::new(at, Syntax::NoSectionName));
        }
        if name.len() > MAX_SECTION_NAME {
            return Err(FioError::new(
                at,
                Syntax::LongSectionName {
                    most: MAX_SECTION_NAME,
                },
            ));
        }
        self.sections.push(Section {
            name: name.to_string(),
            global: name.starts_with("global"),
            at: at.clone(),
            entries: Vec::new(),
        });
        Ok(())
    }

    fn include(&mut self, rest: &str, line: &str, at: &Location) -> Result<(), FioError> {
        let name = include_name(rest, line, at)?;
        let path = resolve_include(name, &at.file).ok_or_else(|| {
            let dir = at.file.parent().unwrap_or(Path::new(""));
            FioError::new(
                at,
                Include::NotFound {
                    name: name.to_string(),
                    from: at.file.clone(),
                    dir: dir.to_path_buf(),
                },
            )
        })?;
        let id = identity(&path);
        self.check_include(name, &path, &id, at)?;
        let bytes = self.read_include(name, &path, at)?;
        self.stack.push(id);
        let result = self.lines(&bytes, &path, true);
        self.stack.pop();
        result
    }

    /// Whether the file `path` (`id`, as the stack holds it) may be
    /// included here: not one being read (a cycle), not deeper than
    /// [`MAX_INCLUDE_DEPTH`], a regular file.
    fn check_include(
        &self,
        name: &str,
        path: &Path,
        id: &PathBuf,
        at: &Location,
    ) -> Result<(), FioError> {
        if self.stack.contains(id) {
            let chain = self
                .stack
                .iter()
                .chain(std::iter::once(id))
                .cloned()
                .collect();
            return Err(FioError::new(
                at,
                Problem::IncludeCycle {
                    name: name.to_string(),
                    chain,
                },
            ));
        }
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            return Err(FioError::new(
                at,
                Include::TooDeep {
                    name: name.to_string(),
                    most: MAX_INCLUDE_DEPTH,
                },
            ));
        }
        // A device or a FIFO would be read until memory runs out, or
        // forever (`include /dev/zero`).
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return Err(FioError::new(
                at,
                Include::NotAFile {
                    name: name.to_string(),
                    path: path.to_path_buf(),
                },
            ));
        }
        Ok(())
    }

    /// The included file's bytes, counted into what the job file has read
    /// so far, which is bounded as one job file is.
    fn read_include(
        &mut self,
        name: &str,
        path: &Path,
        at: &Location,
    ) -> Result<Vec<u8>, FioError> {
        let bytes = read_capped(
            path,
            &format!("include {name}: {} is", path.display()),
            at,
            |why| Problem::Include(Include::Unreadable(why)),
            &format!("include {name}: cannot read {}", path.display()),
        )?;
        self.read_bytes = self.read_bytes.saturating_add(bytes.len() as u64);
        let most = crate::model::limits::JOB_FILE
            .value()
            .map_err(|e| FioError::new(at, Include::Unreadable(e.0)))?;
        if self.read_bytes > most {
            return Err(FioError::new(
                at,
                Include::TooLarge {
                    name: name.to_string(),
                    most,
                    env: crate::model::limits::JOB_FILE.env,
                },
            ));
        }
        Ok(bytes)
    }

    fn option(&self, line: &str, at: &Location) -> Result<Entry, FioError> {
        let (written_key, written_value) = split(line);
        if written_key.is_empty() {
            return Err(FioError::new(
                at,
                Syntax::MissingKey {
                    line: line.to_string(),
                },
            ));
        }
        if written_key != "description" {
            if let Some(name) = bare_dollar(line) {
                return Err(FioError::option(
                    at,
                    written_key,
                    written_value,
                    Syntax::BareDollar {
                        name: name.to_string(),
                    },
                ));
            }
        }
        let expanded = self.expand_env(line, at, written_key, written_value)?;
        let (mut text, replaced) = replace_keywords(&expanded, &self.ctx.keywords);
        if replaced {
            text = bc_math(&text, at)?;
        }
        let (key, value) = split(&text);
        if key.is_empty() {
            return Err(FioError::new(at, Syntax::MissingKey { line: text.clone() }));
        }
        if key.chars().any(char::is_whitespace) {
            return Err(FioError::new(
                at,
                Syntax::NotOptionName {
                    key: key.to_string(),
                },
            ));
        }
        Ok(Entry {
            key: key.to_string(),
            value: value.map(|v| v.trim().to_string()),
            space_after_eq: value.is_some_and(|v| v.starts_with(char::is_whitespace)),
            at: at.clone(),
        })
    }

    /// `${NAME}` → the variable's value (not rescanned, as in fio).
    fn expand_env(
        &self,
        line: &str,
        at: &Location,
        key: &str,
        value: Option<&str>,
    ) -> Result<String, FioError> {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(FioError::option(at, key, value, Syntax::UnclosedEnv));
            };
            let name = &after[..end];
            if name.is_empty() {
                return Err(FioError::option(at, key, value, Syntax::EmptyEnv));
            }
            match self.ctx.env.get(name) {
                Some(v) => out.push_str(&v),
                None => {
                    return Err(FioError::option(
                        at,
                        key,
                        value,
                        Problem::MissingEnv {
                            name: name.to_string(),
                        },
                    ))
                }
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// The file an `include` line names (`include NAME`, `include=NAME`);
/// `rest` is what follows the word `include`.
fn include_name<'l>(rest: &'l str, line: &str, at: &Location) -> Result<&'l str, FioError> {
    let name = match rest.chars().next() {
        None => "",
        Some(c) if c.is_whitespace() || c == '=' => rest[c.len_utf8()..].trim(),
        _ => {
            return Err(FioError::new(
                at,
                Syntax::NotInclude {
                    line: line.to_string(),
                },
            ))
        }
    };
    if name.is_empty() {
        return Err(FioError::new(at, Syntax::IncludeNeedsName));
    }
    Ok(name)
}

/// A relative include: next to the including file, then the current
/// directory.
fn resolve_include(name: &str, including: &Path) -> Option<PathBuf> {
    let name = Path::new(name);
    if name.is_absolute() {
        return name.exists().then(|| name.to_path_buf());
    }
    let beside = including.parent().unwrap_or(Path::new("")).join(name);
    if beside.exists() {
        return Some(beside);
    }
    name.exists().then(|| name.to_path_buf())
}

/// fio's line clean-up: cut at the first `;` or `#`, then drop blanks (and
/// control characters such as `\r`) at both ends.
pub(crate) fn strip(raw: &str) -> &str {
    let cut = raw.find([';', '#']).unwrap_or(raw.len());
    raw[..cut].trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// `key=value` → (key without trailing blanks, value as written after `=`).
fn split(line: &str) -> (&str, Option<&str>) {
    match line.split_once('=') {
        Some((k, v)) => (k.trim_end(), Some(v)),
        None => (line, None),
    }
}

/// The first `$name` that is neither `${...}` nor a keyword.
fn bare_dollar(line: &str) -> Option<&str> {
    let mut rest = line;
    while let Some(i) = rest.find('$') {
        let after = &rest[i + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let starts_name = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        let keyword = KEYWORDS.iter().any(|k| rest[i..].starts_with(k));
        if starts_name && !keyword {
            return Some(&after[..name_len]);
        }
        rest = after;
    }
    None
}

/// Replace fio's keywords everywhere; says whether any was.
fn replace_keywords(line: &str, kw: &super::Keywords) -> (String, bool) {
    let mut text = line.to_string();
    let mut replaced = false;
    for (word, value) in KEYWORDS.iter().zip([kw.pagesize, kw.mb_memory, kw.ncpus]) {
        if text.contains(word) {
            text = text.replace(word, &value.to_string());
            replaced = true;
        }
    }
    (text, replaced)
}

/// fio hands the value of a line that had a keyword replaced and holds one
/// of `+ - * /` (and no `'`) to `bc`; the result replaces the value. fio
/// skips this for lines of 128 bytes or more, or values over 100.
fn bc_math(line: &str, at: &Location) -> Result<String, FioError> {
    if !line.contains(['+', '-', '*', '/']) || line.contains('\'') {
        return Ok(line.to_string());
    }
    let Some((key, value)) = line.split_once('=') else {
        return Ok(line.to_string());
    };
    if line.len() >= 128 || value.len() > 100 {
        return Ok(line.to_string());
    }
    let result = expr::eval(value, expr::Units::None)
        .map_err(|e| FioError::option(at, key.trim_end(), Some(value.trim()), BadValue::Bc(e)))?;
    Ok(format!("{key}={result}"))
}

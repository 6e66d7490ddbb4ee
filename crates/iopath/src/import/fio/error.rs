//! What can be wrong in a fio job file, as data: each mistake a variant
//! carrying what it is about (the unit, the range, the include chain), and
//! its message rendered from it. Callers and tests match on the variants;
//! the wording lives in the `Display` impls below, and is checked once, by
//! the snapshots of `tests/errors.rs`.

use std::fmt;
use std::path::PathBuf;

/// Where something was written: file and 1-based line (0: the file as a
/// whole).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Location {
    pub file: PathBuf,
    pub line: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file.display())
        } else {
            write!(f, "{}:{}", self.file.display(), self.line)
        }
    }
}

/// What kind of mistake a [`FioError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A file could not be read.
    Io,
    /// A line is not fio syntax (section header, option outside a section,
    /// malformed include, `${` without `}`, ...).
    Syntax,
    /// An include file is missing or holds a section.
    Include,
    /// A file includes itself, directly or not.
    IncludeCycle,
    /// `${VAR}` names an unset environment variable.
    MissingEnv,
    /// A value fio refuses, misreads, or that is out of fio's range.
    BadValue,
}

/// An error in a job file: where, which option, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FioError {
    pub at: Location,
    /// The option, when the error is about one.
    pub key: Option<String>,
    /// Its value as written (after `${VAR}` expansion), if it has one.
    pub value: Option<String>,
    /// What is wrong (boxed: errors stay small on the success path).
    pub problem: Box<Problem>,
}

impl FioError {
    pub(crate) fn new(at: &Location, problem: impl Into<Problem>) -> FioError {
        FioError {
            at: at.clone(),
            key: None,
            value: None,
            problem: Box::new(problem.into()),
        }
    }

    pub(crate) fn option(
        at: &Location,
        key: &str,
        value: Option<&str>,
        problem: impl Into<Problem>,
    ) -> FioError {
        FioError {
            at: at.clone(),
            key: Some(key.to_string()),
            value: value.map(str::to_string),
            problem: Box::new(problem.into()),
        }
    }

    /// The kind of mistake.
    pub fn kind(&self) -> ErrorKind {
        self.problem.kind()
    }

    /// The value's own problem, when it is one (a unit fio misreads, a
    /// number out of range, ...).
    pub fn bad_value(&self) -> Option<&BadValue> {
        match &*self.problem {
            Problem::BadValue(b) => Some(b),
            _ => None,
        }
    }
}

impl fmt::Display for FioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.at)?;
        match (&self.key, &self.value) {
            (Some(k), Some(v)) => write!(f, "{k}={v}: ")?,
            (Some(k), None) => write!(f, "{k}: ")?,
            _ => {}
        }
        write!(f, "{}", self.problem)
    }
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A file could not be read; the message says why.
    Unreadable(String),
    Syntax(Syntax),
    Include(Include),
    /// `include NAME` closes a cycle: the files being read, outermost
    /// first, then the one included again.
    IncludeCycle {
        name: String,
        chain: Vec<PathBuf>,
    },
    /// `${NAME}` is not set.
    MissingEnv {
        name: String,
    },
    BadValue(BadValue),
}

impl Problem {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Problem::Unreadable(_) => ErrorKind::Io,
            Problem::Syntax(_) => ErrorKind::Syntax,
            Problem::Include(_) => ErrorKind::Include,
            Problem::IncludeCycle { .. } => ErrorKind::IncludeCycle,
            Problem::MissingEnv { .. } => ErrorKind::MissingEnv,
            Problem::BadValue(_) => ErrorKind::BadValue,
        }
    }
}

impl From<Syntax> for Problem {
    fn from(s: Syntax) -> Problem {
        Problem::Syntax(s)
    }
}

impl From<Include> for Problem {
    fn from(i: Include) -> Problem {
        Problem::Include(i)
    }
}

impl From<BadValue> for Problem {
    fn from(b: BadValue) -> Problem {
        Problem::BadValue(b)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Unreadable(why) => write!(f, "{why}"),
            Problem::Syntax(s) => write!(f, "{s}"),
            Problem::Include(i) => write!(f, "{i}"),
            Problem::IncludeCycle { name, chain } => {
                let chain: Vec<String> = chain.iter().map(|p| p.display().to_string()).collect();
                write!(f, "include {name}: include cycle: {}", chain.join(" -> "))
            }
            Problem::MissingEnv { name } => write!(
                f,
                "environment variable {name} is not set (fio would silently use an empty value)"
            ),
            Problem::BadValue(b) => write!(f, "{b}"),
        }
    }
}

/// A line that is not fio syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Syntax {
    NotUtf8,
    /// `[name` without the closing bracket.
    NotSectionHeader {
        line: String,
    },
    NoSectionName,
    /// A section name longer than fio keeps.
    LongSectionName {
        most: usize,
    },
    /// An option before any section.
    OutsideSection {
        line: String,
    },
    /// `includeX`, not `include FILE`.
    NotInclude {
        line: String,
    },
    IncludeNeedsName,
    /// `=value` with no option name.
    MissingKey {
        line: String,
    },
    /// A name with blanks in it.
    NotOptionName {
        key: String,
    },
    /// `$NAME` without braces (fio would keep it as text).
    BareDollar {
        name: String,
    },
    /// `${` without `}`.
    UnclosedEnv,
    /// `${}`.
    EmptyEnv,
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Syntax::NotUtf8 => write!(f, "the line is not UTF-8 text"),
            Syntax::NotSectionHeader { line } => write!(
                f,
                "\"{line}\" is not a section header: it must end with ']'"
            ),
            Syntax::NoSectionName => write!(f, "a section needs a name: [global] or [job-name]"),
            Syntax::LongSectionName { most } => write!(
                f,
                "the section name is longer than {most} bytes (fio would cut it)"
            ),
            Syntax::OutsideSection { line } => write!(
                f,
                "\"{line}\" is outside of any [section]: put options under [global] or a [job]"
            ),
            Syntax::NotInclude { line } => {
                write!(f, "\"{line}\": an include line is `include FILE`")
            }
            Syntax::IncludeNeedsName => write!(f, "include needs a file name"),
            Syntax::MissingKey { line } => {
                write!(f, "\"{line}\": an option name is missing before '='")
            }
            Syntax::NotOptionName { key } => write!(
                f,
                "\"{key}\" is not an option name (options are `key=value` or a bare `key`)"
            ),
            Syntax::BareDollar { name } => write!(
                f,
                "fio does not expand ${name} (it would use the text as it is): write ${{{name}}} for the environment variable"
            ),
            Syntax::UnclosedEnv => write!(f, "\"${{\" without a closing '}}'"),
            Syntax::EmptyEnv => write!(f, "\"${{}}\" names no environment variable"),
        }
    }
}

/// An `include` line fio would refuse, or that iopath will not follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Include {
    /// An included file starts a section.
    Section {
        line: String,
    },
    /// No such file next to `from` (in `dir`) nor in the current
    /// directory.
    NotFound {
        name: String,
        from: PathBuf,
        dir: PathBuf,
    },
    TooDeep {
        name: String,
        most: usize,
    },
    /// A directory, device or FIFO.
    NotAFile {
        name: String,
        path: PathBuf,
    },
    /// The job file and its includes add up to more than `most` bytes,
    /// the most a job reads (raised with the variable `env`).
    TooLarge {
        name: String,
        most: u64,
        env: &'static str,
    },
    /// The file could not be read, or the read bound not set; the
    /// message says why.
    Unreadable(String),
}

impl fmt::Display for Include {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Include::Section { line } => write!(
                f,
                "{line}: an included file cannot start a section (fio: \"No new sections in included files\")"
            ),
            Include::NotFound { name, from, dir } => write!(
                f,
                "include {name}: no such file next to {} (in '{}') nor in the current directory",
                from.display(),
                dir.display()
            ),
            Include::TooDeep { name, most } => {
                write!(f, "include {name}: includes nest deeper than {most}")
            }
            Include::NotAFile { name, path } => write!(
                f,
                "include {name}: {} is not a regular file (a directory, device or FIFO); include a file of options",
                path.display()
            ),
            Include::TooLarge { name, most, env } => write!(
                f,
                "include {name}: the job file and its includes add up to more than {}, the most a job reads ({env}): include less, or set {env} to a larger size",
                crate::model::units::fmt_bytes(*most),
            ),
            Include::Unreadable(why) => write!(f, "{why}"),
        }
    }
}

/// A value fio refuses, misreads, or that is out of its range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadValue {
    /// The number (size, time, count, flag) as fio reads it.
    Number(ValueError),
    /// A bare option that needs a value (`canon` is its typed name).
    NeedsValue {
        key: String,
        canon: &'static str,
    },
    /// Blanks after `=` where fio would read the value differently.
    BlankAfterEq,
    Empty,
    OutOfRange {
        value: u64,
        min: u64,
        max: u64,
    },
    /// A percentage outside 1% to 100%.
    PercentOutOfRange {
        percent: u64,
    },
    NumjobsZero,
    NotEngineName,
    /// An engine option (`key`) under an engine that does not have it.
    WrongEngine {
        key: String,
        engines: &'static [&'static str],
        engine: String,
    },
    /// One of a fixed set of words: `choices` says which, as fio lists
    /// them.
    NotOneOf {
        choices: Choices,
    },
    /// `rw=` names no pattern fio has.
    UnknownPattern {
        name: String,
    },
    /// `rw=KIND:` with nothing after the colon.
    NothingAfterColon,
    /// `rw=RANDOM:N` with N not a count of 1 or more.
    NotRandomRun {
        text: String,
    },
    OffsetTooLarge,
    /// More than read, write and trim parts.
    TooManyParts,
    /// `bs=4k-8k`: fio splits there too.
    BlockSizeSplit,
    ZeroBlockSize,
    NotRange {
        part: String,
    },
    EmptyRangePart,
    /// `filesize` with `,`.
    NotOneFileSize,
    ZeroFileSize,
    Backwards,
    NoName,
    /// A CPU or node list fio would not read; the message says why.
    CpuList(String),
    /// `numa_mem_policy=MODE:NODES` where `MODE` takes none.
    NoNodeList {
        mode: String,
    },
    PreferOneNode,
    /// `numa_mem_policy=MODE` where `MODE` needs nodes.
    NeedsNodes {
        mode: String,
    },
    /// A value with a keyword and an operator that fio's `bc` step
    /// would fail on.
    Bc(ValueError),
}

/// The fixed sets of words an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choices {
    Sync,
    KbBase,
    /// fio's `verify=` methods.
    Verify(&'static [&'static str]),
    MemPolicy,
}

impl From<ValueError> for BadValue {
    fn from(e: ValueError) -> BadValue {
        BadValue::Number(e)
    }
}

impl BadValue {
    /// The message of a value error that carries nothing: `None` for one
    /// whose message quotes what it carries.
    fn fixed(&self) -> Option<&'static str> {
        Some(match self {
            BadValue::BlankAfterEq => "a blank after '=' changes how fio reads this value (fio reads `bs= 4k` as 4 bytes, `runtime= 1m` as 1 second, and refuses `rw= read`): remove it",
            BadValue::Empty => "the value is empty (fio refuses it)",
            BadValue::NumjobsZero => "numjobs=0 makes fio 3.33 clone the job until it runs out of job slots; give 1 or more",
            BadValue::NotEngineName => "not an engine name",
            BadValue::NothingAfterColon => "nothing after ':'",
            BadValue::OffsetTooLarge => "the offset is too large",
            BadValue::TooManyParts => "more than three ','-separated parts (read, write, trim)",
            BadValue::BlockSizeSplit => "fio splits bs at ':' and '-' too (bs=4k-8k is read 4k, write 8k): give bs=READ,WRITE, or bsrange for a range",
            BadValue::ZeroBlockSize => "a block size of 0 is out of fio's range (1 or more)",
            BadValue::EmptyRangePart => "an empty part: give LOW-HIGH for each direction",
            BadValue::NotOneFileSize => "give one size or a range LOW-HIGH",
            BadValue::ZeroFileSize => "a file size of 0 is out of fio's range (1 or more)",
            BadValue::Backwards => "the range runs backwards",
            BadValue::NoName => "no name",
            BadValue::PreferOneNode => "prefer takes exactly one node",
            BadValue::Number(_)
            | BadValue::NeedsValue { .. }
            | BadValue::OutOfRange { .. }
            | BadValue::PercentOutOfRange { .. }
            | BadValue::WrongEngine { .. }
            | BadValue::NotOneOf { .. }
            | BadValue::UnknownPattern { .. }
            | BadValue::NotRandomRun { .. }
            | BadValue::NotRange { .. }
            | BadValue::CpuList(_)
            | BadValue::NoNodeList { .. }
            | BadValue::NeedsNodes { .. }
            | BadValue::Bc(_) => return None,
        })
    }
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(text) = self.fixed() {
            return f.write_str(text);
        }
        match self {
            BadValue::Number(e) => write!(f, "{e}"),
            BadValue::NeedsValue { key, canon } => write!(
                f,
                "needs a value: fio refuses a bare `{key}` (\"Option {canon} requires an argument\"); write {key}=VALUE"
            ),
            BadValue::OutOfRange { value, min, max } => {
                write!(f, "{value} is out of fio's range {min} to {max}")
            }
            BadValue::PercentOutOfRange { percent } => {
                write!(f, "{percent}% is out of range: give 1% to 100%")
            }
            BadValue::WrongEngine {
                key,
                engines,
                engine,
            } => write!(
                f,
                "{key} is an option of the {} engine, but this section's ioengine is {engine} (fio refuses it: \"Bad option\")",
                engines.join("/")
            ),
            BadValue::NotOneOf { choices } => write!(f, "{choices}"),
            BadValue::UnknownPattern { name } => {
                let names: Vec<&str> = super::RwKind::ALL.iter().map(|(_, n)| *n).collect();
                write!(
                    f,
                    "\"{name}\" is not one of fio's patterns: {}, readwrite",
                    names.join(", ")
                )
            }
            BadValue::NotRandomRun { text } => write!(
                f,
                "after ':' fio takes the number of I/Os per random offset (1 or more), not \"{text}\""
            ),
            BadValue::NotRange { part } => write!(f, "\"{part}\" is not a range LOW-HIGH"),
            BadValue::CpuList(why) => write!(f, "{why}"),
            BadValue::NoNodeList { mode } => write!(f, "{mode} takes no node list"),
            BadValue::NeedsNodes { mode } => write!(f, "{mode} needs nodes: {mode}:0-1"),
            BadValue::Bc(e) => write!(
                f,
                "fio computes a value that uses $pagesize, $mb_memory or $ncpus and holds + - * / with bc, which would fail here: {e}"
            ),
            // Said by `fixed` above.
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Choices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Choices::Sync => write!(f, "fio takes none, 0, sync, 1 or dsync"),
            Choices::KbBase => write!(f, "fio takes 1024 or 1000"),
            Choices::Verify(methods) => {
                write!(f, "not one of fio's verify methods: {}", methods.join(", "))
            }
            Choices::MemPolicy => write!(
                f,
                "fio takes default, prefer:N, bind:NODES, interleave:NODES or local"
            ),
        }
    }
}

/// A number (size, time, count, flag) or `(...)` expression that fio
/// would misread, or that is out of its range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueError {
    Empty,
    NotANumber {
        word: String,
    },
    /// `0x` with no digits, or a unit after hex digits.
    NotHex {
        word: String,
    },
    /// `1.5k`: fio stops at the `.`.
    Fraction {
        word: String,
    },
    /// Above fio's `strtoll` limit.
    TooLarge {
        most: u64,
    },
    PercentNotAccepted,
    NotPercent {
        text: String,
    },
    ZoneUnit,
    /// `4ki`: fio and its documentation disagree.
    AmbiguousUnit {
        unit: String,
    },
    UnknownSizeUnit {
        unit: String,
    },
    /// fio reads a hex time as microseconds.
    HexTime {
        word: String,
    },
    /// `10sec`: fio reads `value` microseconds; `unit` is what to write.
    TimeInMicroseconds {
        word: String,
        value: u64,
        unit: String,
    },
    UnknownTimeUnit {
        unit: String,
    },
    NotBoolean {
        text: String,
    },
    /// fio splits the value at `at` and reads only part of it.
    Split {
        at: char,
    },
    /// An expression's value outside fio's range (in bytes or units).
    ExpressionOutOfRange {
        value: i128,
    },
    /// A time expression's value, in microseconds, outside fio's range.
    TimeExpressionOutOfRange {
        us: i128,
    },
    /// fio would keep only `seconds` whole seconds of the expression.
    PartialSeconds {
        seconds: u64,
    },
    /// An intermediate result overflows.
    Overflow,
    EndsEarly,
    /// `%` or `^`.
    Operator,
    ExpressionFraction,
    Unexpected {
        rest: String,
    },
    Unclosed,
    DivisionByZero,
    TooDeep {
        most: usize,
    },
    NotInteger {
        word: String,
    },
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueError::Empty => write!(f, "the value is empty"),
            ValueError::NotANumber { word } => write!(f, "\"{word}\" is not a number"),
            ValueError::NotHex { word } => write!(
                f,
                "\"{word}\" is not a hex number (fio takes no unit after a hex number)"
            ),
            ValueError::Fraction { word } => write!(
                f,
                "\"{word}\" has a fraction: fio ignores everything from the '.' (it reads 1.5k as 1); write a whole number"
            ),
            ValueError::TooLarge { most } => {
                write!(f, "the value is larger than fio's limit ({most})")
            }
            ValueError::PercentNotAccepted => write!(f, "a percentage is not accepted here"),
            ValueError::NotPercent { text } => {
                write!(f, "\"{text}\" is not a percentage such as 50%")
            }
            ValueError::ZoneUnit => write!(
                f,
                "zone units (z) need zonemode and are not supported"
            ),
            ValueError::AmbiguousUnit { unit } => {
                let k = &unit[..1];
                write!(
                    f,
                    "\"{unit}\" is ambiguous: fio 3.33 reads it as {k}, its documentation as {k}ib; write {k} or {k}ib"
                )
            }
            ValueError::UnknownSizeUnit { unit } => write!(
                f,
                "unknown unit \"{unit}\": use k, m, g, t or p (optionally with b, or ib for the other base); fio ignores what it does not know"
            ),
            ValueError::HexTime { word } => write!(
                f,
                "fio reads a hex time such as \"{word}\" as microseconds, whatever the option's unit; write it in decimal with a unit"
            ),
            ValueError::TimeInMicroseconds { word, value, unit } => write!(
                f,
                "fio 3.33 reads \"{word}\" as {value} microseconds; write {value}{unit}"
            ),
            ValueError::UnknownTimeUnit { unit } => write!(
                f,
                "unknown time unit \"{unit}\": use us, ms, s, m, h or d (fio reads an unknown unit as microseconds)"
            ),
            ValueError::NotBoolean { text } => write!(f, "\"{text}\" is not 0 or 1"),
            ValueError::Split { at } => write!(
                f,
                "fio splits this value at '{at}' and reads only part of it; give one number"
            ),
            ValueError::ExpressionOutOfRange { value } => {
                write!(f, "the expression's value {value} is out of range")
            }
            ValueError::TimeExpressionOutOfRange { us } => {
                write!(f, "the expression's value {us} us is out of range")
            }
            ValueError::PartialSeconds { seconds } => write!(
                f,
                "fio keeps only the whole seconds of an expression here (it would read {seconds}s)"
            ),
            ValueError::Overflow => write!(f, "the expression's value is out of range"),
            ValueError::EndsEarly => write!(f, "the expression ends too early"),
            ValueError::Operator => write!(
                f,
                "only + - * / and parentheses are supported in expressions"
            ),
            ValueError::ExpressionFraction => {
                write!(f, "fractions are not supported in expressions")
            }
            ValueError::Unexpected { rest } => {
                write!(f, "unexpected \"{rest}\" in the expression")
            }
            ValueError::Unclosed => write!(f, "a '(' is not closed"),
            ValueError::DivisionByZero => write!(f, "division by zero"),
            ValueError::TooDeep { most } => write!(f, "expressions nest deeper than {most}"),
            ValueError::NotInteger { word } => write!(f, "\"{word}\" is not an integer"),
        }
    }
}

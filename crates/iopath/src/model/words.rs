//! How a value is spelled, once for the command line and for job files: a
//! [`Word`] parses the text a user types (`4k`, `randread`, `interleaved`)
//! and gives it back. Clap's value parsers and the job model's serde both
//! use it, so `--bs 4k` and `bs = "4k"` accept and refuse the same things
//! with the same message.

use std::time::Duration;

use iopath_io::data::DataMode;
use iopath_io::numa::MemPolicyMode;
use iopath_io::{Method, SyncPolicy};
use serde::{Deserialize, Deserializer, Serializer};

use super::{CacheState, Pattern};
use crate::model::schedule::Schedule;

/// A value with one spelling on the command line and in job files.
pub trait Word: Sized {
    /// The text a user types, or a message that says what is valid.
    fn parse_word(s: &str) -> Result<Self, String>;
    /// The text that parses back to this value.
    fn word(&self) -> String;
    /// Every word there is, when they can be listed (for shell completion
    /// and `--help`); empty for open-ended kinds (sizes, durations).
    fn names() -> Vec<String> {
        Vec::new()
    }
    /// As it is written in a job file: the word as a string (counts are
    /// written as numbers).
    fn serialize_word<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.word())
    }
}

/// A byte count: `4k`, `1M`, `2GiB`, `1000` (1024-based k/M/G/T).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

/// A duration: `150ms`, `2s`, `1m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub Duration);

/// A percentage above 0 and below 100 (`3`, `3%`, `0.5%`), as a fraction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pct(pub f64);

/// A repetition's time limit, or `pass`: one whole pass over the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepTime {
    Limit(Duration),
    Pass,
}

/// How much of the file cases address: a size, or a share of the
/// machine's memory (`10%ram`), resolved when the plan is made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Span {
    Bytes(u64),
    RamPct(f64),
}

impl Word for Bytes {
    fn parse_word(s: &str) -> Result<Self, String> {
        crate::model::units::parse_size(s).map(Bytes)
    }
    fn word(&self) -> String {
        let b = self.0;
        for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "k")] {
            if b >= 1 << shift && b % (1 << shift) == 0 {
                return format!("{}{unit}", b >> shift);
            }
        }
        b.to_string()
    }
}

/// A sync every N writes: `16` or `16:fsync` (fsync), `16:fdatasync`.
impl Word for iopath_io::SyncEvery {
    fn parse_word(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{s}' is not a sync interval: give N writes (1 to 1000000000), then :fsync (the default) or :fdatasync, e.g. 16 or 16:fdatasync"
            )
        };
        let (n, call) = s.split_once(':').unwrap_or((s, "fsync"));
        let writes: u32 = n.trim().parse().map_err(|_| bad())?;
        let call = iopath_io::SyncCall::from_name(call.trim()).ok_or_else(bad)?;
        if !(1..=1_000_000_000).contains(&writes) {
            return Err(bad());
        }
        Ok(iopath_io::SyncEvery { writes, call })
    }
    fn word(&self) -> String {
        format!("{}:{}", self.writes, self.call.name())
    }
}

impl Word for Dur {
    fn parse_word(s: &str) -> Result<Self, String> {
        crate::model::units::parse_duration(s).map(Dur)
    }
    fn word(&self) -> String {
        let ns = self.0.as_nanos();
        for (div, unit) in [
            (60_000_000_000, "m"),
            (1_000_000_000, "s"),
            (1_000_000, "ms"),
        ] {
            if ns >= div && ns % div == 0 {
                return format!("{}{unit}", ns / div);
            }
        }
        if ns % 1000 == 0 {
            format!("{}us", ns / 1000)
        } else {
            format!("{ns}ns")
        }
    }
}

impl Word for Pct {
    fn parse_word(s: &str) -> Result<Self, String> {
        let t = s.trim().trim_end_matches('%');
        match t.parse::<f64>() {
            Ok(v) if v > 0.0 && v < 100.0 => Ok(Pct(v / 100.0)),
            _ => Err(format!(
                "'{s}' is not a percentage between 0 and 100 (e.g. 3 or 2.5%)"
            )),
        }
    }
    /// The shortest percentage that reads back as exactly this fraction
    /// (`3%`, `0.5%`): rounding it to a few decimals wrote `0%` for a share
    /// under 0.00005%, which is then refused.
    fn word(&self) -> String {
        let pct = self.0 * 100.0;
        // `pct` itself, or a neighbour when dividing by 100 rounds.
        let bits = pct.to_bits();
        (bits.saturating_sub(2)..=bits.saturating_add(2))
            .map(f64::from_bits)
            .filter(|p| p.is_finite() && p / 100.0 == self.0)
            .map(|p| p.to_string())
            .min_by_key(String::len)
            .map_or_else(|| format!("{pct}%"), |p| format!("{p}%"))
    }
}

impl Word for RepTime {
    fn parse_word(s: &str) -> Result<Self, String> {
        if s.trim() == "pass" {
            return Ok(RepTime::Pass);
        }
        crate::model::units::parse_duration(s)
            .map(RepTime::Limit)
            .map_err(|e| format!("{e}, or \"pass\" (one whole pass, no time limit)"))
    }
    fn word(&self) -> String {
        match self {
            RepTime::Pass => "pass".into(),
            RepTime::Limit(d) => Dur(*d).word(),
        }
    }
}

impl Word for Span {
    fn parse_word(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(pct) = s.strip_suffix("%ram") {
            return pct
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| *p > 0.0 && *p <= 100.0)
                .map(Span::RamPct)
                .ok_or_else(|| format!("'{s}': a share of memory is 1%ram to 100%ram"));
        }
        match crate::model::units::parse_size(s) {
            Ok(0) | Err(_) => Err(format!(
                "'{s}': give a size (512M, 2G) or a share of memory (10%ram)"
            )),
            Ok(n) => Ok(Span::Bytes(n)),
        }
    }
    fn word(&self) -> String {
        match self {
            Span::Bytes(b) => Bytes(*b).word(),
            Span::RamPct(p) => format!("{p}%ram"),
        }
    }
}

/// What ends a case's repetition when no `io_size`/`touch` does: the time
/// limit alone (sequential passes start over), or one pass's bytes (random
/// patterns too), whichever comes first with the time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    Time,
    Pass,
}

impl Until {
    pub fn name(self) -> &'static str {
        match self {
            Until::Time => "time",
            Until::Pass => "pass",
        }
    }
}

/// A word from a fixed list of names.
macro_rules! named {
    ($t:ty, $what:literal, $whats:literal, $valid:expr, $parse:expr, $name:expr) => {
        named!($t, $what, $whats, $valid, $parse, $name, Vec::new());
    };
    ($t:ty, $what:literal, $whats:literal, $valid:expr, $parse:expr, $name:expr, $all:expr) => {
        impl Word for $t {
            fn names() -> Vec<String> {
                let all: Vec<$t> = $all;
                all.iter().map(|w| w.word()).collect()
            }
            fn parse_word(s: &str) -> Result<Self, String> {
                let parse: fn(&str) -> Option<$t> = $parse;
                parse(s.trim()).ok_or_else(|| {
                    format!(
                        concat!("unknown ", $what, " '{}'; valid ", $whats, ": {}"),
                        s, $valid
                    )
                })
            }
            fn word(&self) -> String {
                let name: fn(&$t) -> String = $name;
                name(self)
            }
        }
    };
}

named!(
    Method,
    "method",
    "methods",
    Method::ALL
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", "),
    Method::from_name,
    |m| m.name().into(),
    Method::ALL.to_vec()
);
named!(
    Pattern,
    "pattern",
    "patterns",
    "read (seqread), write (seqwrite), randread, randwrite, randrw, copy",
    Pattern::from_name,
    |p| p.name().into(),
    vec![
        Pattern::Read,
        Pattern::Write,
        Pattern::RandRead,
        Pattern::RandWrite,
        Pattern::RandRw,
        Pattern::Copy
    ]
);
named!(
    SyncPolicy,
    "sync policy",
    "sync policies",
    "none, end, dsync, osync, each",
    SyncPolicy::from_name,
    |p| p.name().into(),
    ["none", "end", "dsync", "osync", "each"]
        .iter()
        .filter_map(|n| SyncPolicy::from_name(n))
        .collect()
);
named!(
    iopath_io::BufferBacking,
    "buffer backing",
    "buffer backings",
    "pages, huge",
    iopath_io::BufferBacking::from_name,
    |b| b.name().into(),
    iopath_io::BufferBacking::ALL.to_vec()
);
named!(
    CacheState,
    "cache state",
    "cache states",
    "cold, warm, as-is",
    CacheState::from_name,
    |c| c.name().into(),
    vec![CacheState::Cold, CacheState::Warm, CacheState::AsIs]
);
named!(
    Schedule,
    "schedule",
    "schedules",
    "interleaved, sequential",
    Schedule::from_name,
    |s| s.name().into(),
    vec![Schedule::Interleaved, Schedule::Sequential]
);
named!(
    DataMode,
    "data kind",
    "data kinds",
    "random, zeros, compress:N (N from 0 to 100)",
    DataMode::parse,
    |d| d.name()
);
named!(
    MemPolicyMode,
    "memory policy",
    "memory policies",
    "bind, preferred, interleave, local",
    |s| match s {
        "bind" => Some(MemPolicyMode::Bind),
        "preferred" => Some(MemPolicyMode::Preferred),
        "interleave" => Some(MemPolicyMode::Interleave),
        "local" => Some(MemPolicyMode::Local),
        _ => None,
    },
    |m| m.name().into(),
    vec![
        MemPolicyMode::Bind,
        MemPolicyMode::Preferred,
        MemPolicyMode::Interleave,
        MemPolicyMode::Local
    ]
);

named!(
    Until,
    "until",
    "values of until",
    "time, pass",
    |s| [Until::Time, Until::Pass]
        .into_iter()
        .find(|u| u.name() == s),
    |u| u.name().into()
);

/// A clap value parser for any [`Word`].
pub fn flag<T: Word>(s: &str) -> Result<T, String> {
    // The message quotes the value: shown, on its line, never sent.
    T::parse_word(s).map_err(|e| crate::model::untrusted::field(&e).into_owned())
}

/// The clap value parser of a [`Word`] with its names, so that shells
/// complete them and `--help` lists them.
#[derive(Debug, Clone, Copy)]
pub struct WordParser<T>(std::marker::PhantomData<T>);

/// [`WordParser`] for `T`.
pub fn word<T: Word>() -> WordParser<T> {
    WordParser(std::marker::PhantomData)
}

impl<T: Word + Clone + Send + Sync + 'static> clap::builder::TypedValueParser for WordParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let parse: fn(&str) -> Result<T, String> = flag::<T>;
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = T::names();
        (!names.is_empty()).then(|| {
            Box::new(names.into_iter().map(clap::builder::PossibleValue::new))
                as Box<dyn Iterator<Item = _>>
        })
    }
}

/// What a word may be written as in a job file: text, or a bare number
/// (`qd = 32`, `bs = 4096`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Raw {
    Text(String),
    Int(i64),
    Float(f64),
}

impl Raw {
    fn text(self) -> String {
        match self {
            Raw::Text(s) => s,
            Raw::Int(i) => i.to_string(),
            Raw::Float(f) => f.to_string(),
        }
    }
}

fn de_word<'de, D: Deserializer<'de>, T: Word>(d: D) -> Result<T, D::Error> {
    let raw = Raw::deserialize(d)
        .map_err(|_| serde::de::Error::custom("expected a string or a number"))?;
    T::parse_word(&raw.text()).map_err(serde::de::Error::custom)
}

/// `#[serde(with = "words::opt")]` for an `Option` of a [`Word`].
pub mod opt {
    use super::*;

    pub fn serialize<S: Serializer, T: Word>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(w) => s.serialize_str(&w.word()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Word>(d: D) -> Result<Option<T>, D::Error> {
        de_word(d).map(Some)
    }
}

/// One word or a list of them (`method = "direct"`, `method = ["direct",
/// "uring"]`), in order, repeats kept.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T: Word> serde::Serialize for List<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        /// One element, serialised as its word.
        struct Item<'a, T>(&'a T);
        impl<T: Word> serde::Serialize for Item<'_, T> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize_word(s)
            }
        }
        if let [one] = self.0.as_slice() {
            return one.serialize_word(s);
        }
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for w in &self.0 {
            seq.serialize_element(&Item(w))?;
        }
        seq.end()
    }
}

impl<'de, T: Word> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            Many(Vec<Raw>),
            One(Raw),
        }
        let items = match OneOrMany::deserialize(d)
            .map_err(|_| serde::de::Error::custom("expected a value or a list of values"))?
        {
            OneOrMany::One(r) => vec![r],
            OneOrMany::Many(v) => v,
        };
        if items.is_empty() {
            return Err(serde::de::Error::custom("an empty list: name at least one"));
        }
        items
            .into_iter()
            .map(|r| T::parse_word(&r.text()).map_err(serde::de::Error::custom))
            .collect::<Result<Vec<T>, _>>()
            .map(List)
    }
}

/// A thread count, as a word (lists of them: `threads = [1, 2, 4]`).
impl Word for u32 {
    fn parse_word(s: &str) -> Result<Self, String> {
        s.trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a whole number"))
    }
    fn word(&self) -> String {
        self.to_string()
    }
    fn serialize_word<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Word + PartialEq + std::fmt::Debug>(v: T) {
        let w = v.word();
        assert_eq!(T::parse_word(&w).unwrap(), v, "{w}");
    }

    #[test]
    fn every_word_reads_back_what_it_writes() {
        for b in [1, 512, 4096, 4097, 1 << 20, 3 << 30, 1 << 40, 1_000_000] {
            round_trip(Bytes(b));
        }
        for ns in [1, 1500, 150_000_000, 2_000_000_000, 120_000_000_000] {
            round_trip(Dur(Duration::from_nanos(ns)));
        }
        round_trip(Pct(0.03));
        round_trip(Pct(0.005));
        round_trip(RepTime::Pass);
        round_trip(RepTime::Limit(Duration::from_millis(150)));
        round_trip(Span::RamPct(10.0));
        round_trip(Span::Bytes(1 << 30));
        for m in Method::ALL {
            round_trip(m);
        }
        round_trip(DataMode::parse("compress:50").unwrap());
        round_trip(MemPolicyMode::Interleave);
        round_trip(Schedule::Sequential);
        round_trip(CacheState::AsIs);
        for call in [iopath_io::SyncCall::Fsync, iopath_io::SyncCall::Fdatasync] {
            round_trip(iopath_io::SyncEvery { writes: 16, call });
        }
    }

    #[test]
    fn a_sync_interval_is_n_writes_then_fsync_unless_fdatasync_is_named() {
        use iopath_io::{SyncCall, SyncEvery};
        let every = |writes, call| Ok(SyncEvery { writes, call });
        assert_eq!(SyncEvery::parse_word("16"), every(16, SyncCall::Fsync));
        assert_eq!(SyncEvery::parse_word("8:fsync"), every(8, SyncCall::Fsync));
        assert_eq!(
            SyncEvery::parse_word("1:fdatasync"),
            every(1, SyncCall::Fdatasync)
        );
        for bad in ["0", "-1", "16:msync", "x", "16:", "2000000000"] {
            let e = SyncEvery::parse_word(bad).unwrap_err();
            assert!(e.contains("16:fdatasync"), "{bad}: {e}");
        }
    }

    #[test]
    fn tiny_and_odd_percentages_are_written_exactly() {
        // Found by the proptest/fuzz round trip: `0.00000000001%` was
        // written `0%`, which is refused; `0.123456%` as `0.1235%`.
        for s in [
            "0.00000000001%",
            "0.123456%",
            "7%",
            "99.99999999999999",
            "1e-30",
        ] {
            let p = Pct::parse_word(s).unwrap();
            assert_eq!(Pct::parse_word(&p.word()), Ok(p), "{s} -> {}", p.word());
        }
        assert_eq!(Pct(0.07).word(), "7%");
        assert_eq!(Pct(0.025).word(), "2.5%");
    }

    #[test]
    fn a_bad_word_says_what_is_valid() {
        let e = Method::parse_word("fast").unwrap_err();
        assert!(
            e.contains("unknown method 'fast'") && e.contains("uring-sqpoll"),
            "{e}"
        );
        let e = Pattern::parse_word("seq").unwrap_err();
        assert!(e.contains("randread"), "{e}");
        assert!(Pct::parse_word("100").is_err() && Pct::parse_word("0").is_err());
        assert_eq!(Pct::parse_word("2.5%").unwrap(), Pct(0.025));
        assert!(Span::parse_word("0").is_err());
        assert!(Span::parse_word("200%ram").is_err());
        let e = RepTime::parse_word("soon").unwrap_err();
        assert!(e.contains("pass"), "{e}");
    }
}

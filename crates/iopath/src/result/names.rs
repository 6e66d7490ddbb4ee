//! The names a result records, typed: a case's method, the names a verdict
//! ranks, the target's kind, and the sync policy's spelling. Each is
//! written to JSON exactly as before (the strings users script against)
//! and read back from any result that loaded before: a method name this
//! build does not know is kept as written ([`MethodName::Other`]).

use std::fmt;

use iopath_io::{Method, SyncPolicy};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::choice::{parse_result_method, MethodChoice};

/// A case's method as a result records it: a method this build knows with
/// its access hint, if any (`mmap+random`), or a name it does not know (a
/// result from another build), kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MethodName {
    Known(MethodChoice),
    Other(String),
}

impl MethodName {
    /// The name as written: [`MethodName::Known`] only when it reads back
    /// into exactly the same spelling.
    pub fn parse(s: &str) -> MethodName {
        match parse_result_method(s) {
            Some(c) if c.name() == s => MethodName::Known(c),
            _ => MethodName::Other(s.to_string()),
        }
    }

    /// The method and its hint; for a name kept as written, what it reads
    /// back as, if anything ([`parse_result_method`]).
    pub fn choice(&self) -> Option<MethodChoice> {
        match self {
            MethodName::Known(c) => Some(*c),
            MethodName::Other(s) => parse_result_method(s),
        }
    }

    /// The method, its hint left aside.
    pub fn base(&self) -> Option<Method> {
        self.choice().map(|c| c.method)
    }
}

impl Default for MethodName {
    fn default() -> MethodName {
        MethodName::Other(String::new())
    }
}

/// True for exactly that method, without a hint (`null`, not `mmap+random`
/// for `mmap`).
impl PartialEq<Method> for MethodName {
    fn eq(&self, m: &Method) -> bool {
        matches!(self, MethodName::Known(c) if *c == MethodChoice::from(*m))
    }
}

impl fmt::Display for MethodName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MethodName::Known(c) => f.write_str(&c.name()),
            MethodName::Other(s) => f.write_str(s),
        }
    }
}

impl From<&str> for MethodName {
    fn from(s: &str) -> MethodName {
        MethodName::parse(s)
    }
}

impl From<String> for MethodName {
    fn from(s: String) -> MethodName {
        MethodName::parse(&s)
    }
}

impl From<Method> for MethodName {
    fn from(m: Method) -> MethodName {
        MethodName::Known(m.into())
    }
}

impl From<MethodChoice> for MethodName {
    fn from(c: MethodChoice) -> MethodName {
        MethodName::Known(c)
    }
}

/// What a verdict ranks and names (`ranking[].method`, `pick`, `fastest`,
/// ...): a case's method, with the arm of an A/A check (`direct#2`), or a
/// variant of a preset's group, by its label or by what differs (`uring
/// 512k Q5T1`); also any name this build does not read, kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Entrant {
    /// A method; `arm` 2 and up for the later arms of an A/A check.
    Method {
        method: MethodChoice,
        arm: Option<u32>,
    },
    Variant(String),
}

impl Entrant {
    /// The name as written: [`Entrant::Method`] only when it reads back
    /// into exactly the same spelling.
    pub fn parse(s: &str) -> Entrant {
        let (m, arm) = match s.split_once('#') {
            Some((m, a)) => (m, a.parse::<u32>().ok()),
            None => (s, None),
        };
        let method = parse_result_method(m).map(|method| Entrant::Method { method, arm });
        match method {
            Some(e) if e.to_string().as_str() == s => e,
            _ => Entrant::Variant(s.to_string()),
        }
    }
}

/// True for exactly that method: no hint, no later arm, not a variant.
impl PartialEq<Method> for Entrant {
    fn eq(&self, m: &Method) -> bool {
        matches!(self, Entrant::Method { method, arm: None } if *method == MethodChoice::from(*m))
    }
}

impl fmt::Display for Entrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entrant::Method { method, arm: None } => f.write_str(&method.name()),
            Entrant::Method {
                method,
                arm: Some(a),
            } => write!(f, "{}#{a}", method.name()),
            Entrant::Variant(s) => f.write_str(s),
        }
    }
}

impl From<&str> for Entrant {
    fn from(s: &str) -> Entrant {
        Entrant::parse(s)
    }
}

impl From<String> for Entrant {
    fn from(s: String) -> Entrant {
        Entrant::parse(&s)
    }
}

/// Both names are written as the strings they display as.
macro_rules! as_string {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                Ok(<$t>::parse(&String::deserialize(d)?))
            }
        }
    };
}

as_string!(MethodName);
as_string!(Entrant);

/// Tests name methods as results spell them (`assert_eq!(v.pick,
/// "direct")`); the code itself matches on the enums.
#[cfg(test)]
macro_rules! eq_spelling {
    ($t:ty) => {
        impl PartialEq<&str> for $t {
            fn eq(&self, s: &&str) -> bool {
                self.to_string().as_str() == *s
            }
        }

        impl PartialEq<str> for $t {
            fn eq(&self, s: &str) -> bool {
                self.to_string().as_str() == s
            }
        }

        impl PartialEq<String> for $t {
            fn eq(&self, s: &String) -> bool {
                self.to_string().as_str() == *s
            }
        }
    };
}

#[cfg(test)]
eq_spelling!(MethodName);
#[cfg(test)]
eq_spelling!(Entrant);

/// What the run measured on (`target.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    /// A file iopath created in a directory, removed at the end.
    Temporary,
    /// A file given by the user.
    File,
    /// A block device.
    BlockDevice,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Temporary => "temporary",
            TargetKind::File => "file",
            TargetKind::BlockDevice => "block-device",
        }
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A [`SyncPolicy`] as its name (`none`, `end`, ...): `#[serde(with)]`,
/// the engines' crate knowing nothing of serde.
pub mod sync_name {
    use super::*;

    pub fn serialize<S: Serializer>(p: &SyncPolicy, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(p.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SyncPolicy, D::Error> {
        let s = String::deserialize(d)?;
        SyncPolicy::from_name(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown sync policy '{s}' (expected none, end, dsync, each or osync)"
            ))
        })
    }
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;

//! Presets: the seed experiments as data. Each preset is a small TOML file
//! in `crates/iopath/presets/` (compiled in): what the experiment is, the
//! run settings it starts from (which command-line flags override), and
//! its cases — method, pattern, block size, depth, threads, sync, span,
//! cache state — with the figures the source published for them. No
//! preset has a code path of its own: a preset becomes an ordinary plan.

use serde::{Deserialize, Serialize};

use crate::plan::UsageError;

/// Every preset, in the order `iopath presets` lists them.
const SOURCES: [(&str, &str); 8] = [
    ("niobench", include_str!("../presets/niobench.toml")),
    ("daxbench", include_str!("../presets/daxbench.toml")),
    ("glommio-scan", include_str!("../presets/glommio-scan.toml")),
    (
        "glommio-random",
        include_str!("../presets/glommio-random.toml"),
    ),
    ("crystal", include_str!("../presets/crystal.toml")),
    ("crystal-nvme", include_str!("../presets/crystal-nvme.toml")),
    ("numa", include_str!("../presets/numa.toml")),
    ("hmmap", include_str!("../presets/hmmap.toml")),
];

/// How a preset's results are laid out under the usual tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// The usual tables only.
    #[default]
    Table,
    /// CrystalDiskMark's grid: one row per test, read and write side by
    /// side.
    Crystal,
    /// NIOBench's report: per mode and operation, median, mean, min, max.
    Niobench,
    /// DAXBench64's mapping line: file descriptor, length, start and end.
    Daxbench,
    /// The placement study: each (CPU node, memory node) pair against
    /// local/local.
    Numa,
    /// hmmap's table: seconds for W, R and RR per thread count and method.
    Hmmap,
}

/// A preset as written in its file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub name: String,
    /// One line for `iopath presets`.
    pub summary: String,
    /// The experiment it repeats (SEEDS.md).
    pub source: String,
    #[serde(default)]
    pub layout: Layout,
    /// How to read the result, a sentence each.
    #[serde(default)]
    pub reading: Vec<String>,
    #[serde(default)]
    pub run: RunDefaults,
    #[serde(rename = "case")]
    pub cases: Vec<PresetCase>,
    /// The source's figures for cases by method, pattern and threads (when
    /// a case has no `published` of its own): hmmap's tables.
    #[serde(default, rename = "reference")]
    pub references: Vec<Reference>,
}

/// A published figure for the cases of one method, pattern and thread
/// count.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub method: String,
    pub pattern: String,
    pub threads: u32,
    pub value: f64,
    pub unit: String,
    pub on: String,
}

impl Preset {
    /// True when some case says how much it touches (`touch`): such a
    /// preset gives `--touch` to those cases only.
    pub fn has_touch_cases(&self) -> bool {
        self.cases.iter().any(|c| c.touch.is_some())
    }

    /// The reference figure for a case, if the preset has one.
    pub fn reference(&self, method: &str, pattern: &str, threads: u32) -> Option<Published> {
        self.references
            .iter()
            .find(|r| r.method == method && r.pattern == pattern && r.threads == threads)
            .map(|r| Published {
                value: Some(r.value),
                unit: Some(r.unit.clone()),
                on: r.on.clone(),
                text: None,
            })
    }
}

/// Run settings a preset starts from; a flag given on the command line
/// wins.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDefaults {
    pub size: Option<String>,
    /// `--cache-limit` for the cases marked `cache_limited`.
    pub cache_limit: Option<String>,
    /// A repetition's time limit, or `"pass"`: no limit, every repetition
    /// is one whole pass over the file (or span).
    pub time: Option<String>,
    pub io_size: Option<String>,
    pub repeat: Option<u32>,
    pub warmup: Option<u32>,
    pub max_time: Option<String>,
    pub cache: Option<String>,
    pub data: Option<String>,
}

/// One string or a list of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn items(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// One thread count or a list of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Threads {
    One(u32),
    Many(Vec<u32>),
}

impl Threads {
    pub fn counts(&self) -> Vec<u32> {
        match self {
            Threads::One(n) => vec![*n],
            Threads::Many(v) => v.clone(),
        }
    }
}

/// One entry of a preset: every method x every pattern it names.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetCase {
    /// What the source calls this case (`SEQ1M Q8T1`, `unbuffered native`).
    pub label: Option<String>,
    pub method: OneOrMany,
    pub pattern: OneOrMany,
    pub bs: Option<String>,
    pub qd: Option<u32>,
    /// Worker threads: one number, or a list (the case once per count).
    pub threads: Option<Threads>,
    pub sync: Option<String>,
    /// Random offsets within this much of the file: a size (`1G`) or a
    /// share of the machine's memory (`10%ram`).
    pub span: Option<String>,
    /// Reads are copied from the engine's buffer into a separate user
    /// buffer (what a read into a caller's buffer costs).
    #[serde(default)]
    pub copy_to_user: bool,
    /// The file is truncated before every repetition (writes allocate).
    #[serde(default)]
    pub sparse: bool,
    /// This case's cache state, instead of the run's.
    pub cache: Option<String>,
    /// Bytes each repetition transfers (all threads), instead of the
    /// run's: `8M` for hmmap's RR.
    pub touch: Option<String>,
    /// Run inside the `--cache-limit` cgroup (the run's `cache_limit`);
    /// without it only the cases that say so are limited.
    #[serde(default)]
    pub cache_limited: bool,
    /// What the source measured for this case.
    pub published: Option<Published>,
    /// `"numa-pairs"`: the case once for each (CPU node, memory node) pair
    /// relative to the device's node — local/local, local/remote,
    /// remote/local, remote/remote (one pair on a one-node machine).
    pub placement: Option<String>,
}

/// A figure from the source experiment, shown beside iopath's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The number, in `unit`; absent for a finding stated in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// `MB/s` (10^6 bytes/s), `MiB/s`, `GB/s`, `IOPS`, `s` (seconds a
    /// repetition took).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Where and on what: `Intel Optane, 53 GB file (Glommio article)`.
    pub on: String,
    /// The finding in words, when there is no number to match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Published {
    /// `945 MB/s` or the finding in words.
    pub fn show(&self) -> String {
        match (&self.value, &self.unit, &self.text) {
            (Some(v), Some(u), _) => format!("{} {u}", trim_number(*v)),
            (_, _, Some(t)) => t.clone(),
            (Some(v), None, None) => trim_number(*v),
            (None, _, None) => String::new(),
        }
    }

    /// iopath's figure in the published unit, when it has one iopath
    /// measures: bytes/s for MB/s, MiB/s, GB/s; IOPS.
    pub fn ours(&self, bw_bytes_per_s: f64, iops: f64) -> Option<String> {
        self.ours_with(bw_bytes_per_s, iops, None)
    }

    /// iopath's figure as a number in the published unit, if it has one.
    pub fn ours_value(
        &self,
        bw_bytes_per_s: f64,
        iops: f64,
        duration_ns: Option<u64>,
    ) -> Option<f64> {
        Some(match self.unit.as_deref()? {
            "MB/s" => bw_bytes_per_s / 1e6,
            "MiB/s" => bw_bytes_per_s / 1048576.0,
            "GB/s" => bw_bytes_per_s / 1e9,
            "IOPS" => iops,
            "s" => duration_ns? as f64 / 1e9,
            _ => return None,
        })
    }

    /// [`Published::ours`], and for `s` (a time, as hmmap published) the
    /// repetition's duration.
    pub fn ours_with(
        &self,
        bw_bytes_per_s: f64,
        iops: f64,
        duration_ns: Option<u64>,
    ) -> Option<String> {
        let v = self.ours_value(bw_bytes_per_s, iops, duration_ns)?;
        Some(format!(
            "{} {}",
            trim_number(round3(v)),
            self.unit.as_deref()?
        ))
    }
}

/// Three significant digits, at least the integer part.
fn round3(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = v.abs().log10().floor() as i32;
    if digits >= 2 {
        v.round()
    } else {
        let f = 10f64.powi(2 - digits);
        (v * f).round() / f
    }
}

/// `945`, `2.35`, `693870`: no trailing zeros.
fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Every preset.
pub fn all() -> Vec<Preset> {
    SOURCES
        .iter()
        .map(|(name, text)| parse(name, text).unwrap_or_else(|e| panic!("preset {name}: {e}")))
        .collect()
}

/// The preset called `name`, or a usage error listing the names.
pub fn find(name: &str) -> Result<Preset, UsageError> {
    match SOURCES.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => parse(n, text).map_err(UsageError),
        None => Err(UsageError(format!(
            "unknown preset '{name}'; presets: {} (`iopath presets` says what each runs)",
            names().join(", ")
        ))),
    }
}

pub fn names() -> Vec<&'static str> {
    SOURCES.iter().map(|(n, _)| *n).collect()
}

fn parse(name: &str, text: &str) -> Result<Preset, String> {
    let p: Preset = toml::from_str(text).map_err(|e| format!("preset {name} is malformed: {e}"))?;
    if p.name != name {
        return Err(format!("preset file {name} names itself {}", p.name));
    }
    if p.cases.is_empty() {
        return Err(format!("preset {name} has no case"));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_names_itself() {
        let all = all();
        assert_eq!(all.len(), SOURCES.len());
        for p in &all {
            assert!(!p.summary.is_empty() && !p.source.is_empty(), "{}", p.name);
        }
        assert!(find("nope").unwrap_err().0.contains("glommio-scan"));
    }

    #[test]
    fn published_figures_convert_to_our_units() {
        let p = Published {
            value: Some(945.0),
            unit: Some("MB/s".into()),
            on: "x".into(),
            text: None,
        };
        assert_eq!(p.show(), "945 MB/s");
        assert_eq!(p.ours(2_350_000_000.0, 0.0).unwrap(), "2350 MB/s");
        assert_eq!(p.ours(463_123_456.0, 0.0).unwrap(), "463 MB/s");
        let iops = Published {
            unit: Some("IOPS".into()),
            value: Some(693870.0),
            ..p.clone()
        };
        assert_eq!(iops.show(), "693870 IOPS");
        assert_eq!(iops.ours(0.0, 551_547.4).unwrap(), "551547 IOPS");
        let gb = Published {
            unit: Some("GB/s".into()),
            value: Some(2.35),
            ..p.clone()
        };
        assert_eq!(gb.ours(2_454_000_000.0, 0.0).unwrap(), "2.45 GB/s");
        let words = Published {
            value: None,
            unit: None,
            text: Some("read several times slower".into()),
            on: "x".into(),
        };
        assert_eq!(words.show(), "read several times slower");
        assert!(words.ours(1.0, 1.0).is_none());
    }
}

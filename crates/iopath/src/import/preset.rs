//! Presets: the seed experiments as data. Each preset is a small TOML file
//! in `crates/iopath/presets/` (compiled in): what the experiment is, the
//! run settings it starts from (which command-line flags override), and
//! its cases — method, pattern, block size, depth, threads, sync, span,
//! cache state — with the figures the source published for them. No
//! preset has a code path of its own: a preset becomes an ordinary plan.

use crate::model::job::JobSpec;
use crate::model::UsageError;

/// Every preset, in the order `iopath presets` lists them.
const SOURCES: [(&str, &str); 10] = [
    ("niobench", include_str!("../../presets/niobench.toml")),
    ("daxbench", include_str!("../../presets/daxbench.toml")),
    (
        "glommio-scan",
        include_str!("../../presets/glommio-scan.toml"),
    ),
    (
        "glommio-random",
        include_str!("../../presets/glommio-random.toml"),
    ),
    ("crystal", include_str!("../../presets/crystal.toml")),
    (
        "crystal-nvme",
        include_str!("../../presets/crystal-nvme.toml"),
    ),
    ("numa", include_str!("../../presets/numa.toml")),
    ("hmmap", include_str!("../../presets/hmmap.toml")),
    (
        "cache-pollution",
        include_str!("../../presets/cache-pollution.toml"),
    ),
    ("dontcache", include_str!("../../presets/dontcache.toml")),
];

pub use crate::model::job::{Layout, Published, Reference};

/// A built-in preset: a job with a name, a summary and a source.
#[derive(Debug, Clone)]
pub struct Preset {
    pub name: String,
    /// One line for `iopath presets`.
    pub summary: String,
    /// The experiment it repeats (SEEDS.md).
    pub source: String,
    /// What it runs.
    pub job: JobSpec,
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
    let job: JobSpec =
        toml::from_str(text).map_err(|e| format!("preset {name} is malformed: {e}"))?;
    if job.name.as_deref() != Some(name) {
        return Err(format!("preset file {name} names itself {:?}", job.name));
    }
    if job.cases.is_empty() {
        return Err(format!("preset {name} has no case"));
    }
    let (Some(summary), Some(source)) = (job.summary.clone(), job.source.clone()) else {
        return Err(format!("preset {name} needs a summary and a source"));
    };
    Ok(Preset {
        name: name.to_string(),
        summary,
        source,
        job,
    })
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

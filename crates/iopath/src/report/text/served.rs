//! Words for what served a case (`cases[].served`, the verdict's
//! `served_from_memory` and `absorbed_by_page_cache` facts): a case served
//! from memory, or whose writes the page cache absorbed, is set apart from
//! the device's ranking, and these say so: in the full verdict and in the
//! tables' `vs best` cell (the one screen says no more than that cell, to
//! keep to its lines).

use super::verdict::list;
use crate::model::units::{fmt_bytes, fmt_device_fraction, fmt_size_flag};
use crate::result::served::{is_set_apart, Served};
use crate::result::verdict_facts::{ApartMethod, DeviceRate, VerdictFact};
use crate::result::CaseResult;

/// The `vs best` cell of a case set apart: `memory` or `absorbed`; `None`
/// for a case ranked against the device's.
pub fn cell(c: &CaseResult) -> Option<&'static str> {
    match c.served.as_ref().filter(|_| is_set_apart(c))? {
        Served::Memory { .. } => Some("memory"),
        Served::Absorbed(_) => Some("absorbed"),
        Served::Device { .. } => None,
    }
}

/// The legend of those cells, for the full report.
pub const LEGEND: &str = "vs best `memory` = served from memory with the cache cold (the device \
     moved under half of what it read), `absorbed` = writes the page cache absorbed (under the \
     dirty limit): set apart, never ranked against what the device served";

/// `212 MiB/s`.
fn rate(bytes_per_s: f64) -> String {
    format!("{}/s", fmt_bytes(bytes_per_s.round() as u64))
}

/// `mmap (4.51 GiB/s, device 3%)`; `device`: with the device fraction.
fn named(m: &ApartMethod, device: bool) -> String {
    match m.device_fraction.filter(|_| device) {
        Some(f) => format!(
            "{} ({}, device {})",
            m.method,
            rate(m.bw_bytes_per_s),
            fmt_device_fraction(f)
        ),
        None => format!("{} ({})", m.method, rate(m.bw_bytes_per_s)),
    }
}

fn named_list(methods: &[ApartMethod], device: bool) -> String {
    list(&methods.iter().map(|m| named(m, device)).collect::<Vec<_>>())
}

/// The device's speed behind an absorbed burst, or that it is not known.
fn device_words(device: Option<&DeviceRate>) -> String {
    match device {
        Some(d) => format!(
            "the device's: {} here ({}, this job's fastest write the device served)",
            rate(d.bytes_per_s),
            d.method
        ),
        None => "the device's (not known here: no write of this job was served by the device)"
            .to_string(),
    }
}

/// The sentence of a verdict fact about the cases it set apart; `None`
/// for the other facts.
pub fn fact(f: &VerdictFact) -> Option<String> {
    const NOT_RANKED: &str = "not ranked against the methods the device served";
    Some(match f {
        VerdictFact::ServedFromMemory { methods } => {
            let (was, that, it) = if methods.len() == 1 {
                ("was", "that is memory's speed", "it is")
            } else {
                ("were", "those are memory's speeds", "they are")
            };
            format!(
                "Set apart: {} {was} served from memory, the cache cold: {that}, not the device's, and {it} {NOT_RANKED}.",
                named_list(methods, true),
            )
        }
        VerdictFact::AbsorbedByPageCache {
            methods,
            limit_bytes,
            device,
            suggested_size_bytes,
        } => {
            let (that, lasts, they) = if methods.len() == 1 {
                ("that speed", "lasts", "it is")
            } else {
                ("those speeds", "last", "they are")
            };
            let until = match limit_bytes {
                Some(l) => format!("until the dirty limit ({})", fmt_bytes(*l)),
                None => "while the page cache holds the writes".to_string(),
            };
            let size = suggested_size_bytes.map_or(String::new(), |s| {
                format!(
                    " For sustained writes: --size {} or more.",
                    fmt_size_flag(s)
                )
            });
            format!(
                "Set apart: the page cache absorbed the writes of {}: {that} {lasts} {until}, then {}; {they} {NOT_RANKED}.{size}",
                // Under the dirty limit, that is the evidence; else the
                // device's share is.
                named_list(methods, limit_bytes.is_none()),
                device_words(device.as_ref()),
            )
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(method: &str, mib: f64, f: Option<f64>) -> ApartMethod {
        ApartMethod {
            method: method.into(),
            bw_bytes_per_s: mib * (1 << 20) as f64,
            device_fraction: f,
        }
    }

    /// The words of the set-apart facts, one and several, with the
    /// device's speed known and not, under a dirty limit and without one.
    #[test]
    fn the_set_apart_facts_in_words() {
        let device = DeviceRate {
            method: "uring".into(),
            bytes_per_s: 120.0 * (1 << 20) as f64,
        };
        let facts = [
            VerdictFact::ServedFromMemory {
                methods: vec![m("mmap", 4614.0, Some(0.03))],
            },
            VerdictFact::ServedFromMemory {
                methods: vec![
                    m("mmap", 4614.0, Some(0.03)),
                    m("buffered", 900.0, Some(0.4)),
                ],
            },
            VerdictFact::AbsorbedByPageCache {
                methods: vec![
                    m("buffered", 212.0, Some(0.96)),
                    m("uring-buffered", 160.0, Some(0.98)),
                ],
                limit_bytes: Some(4_892_991_480),
                device: Some(device),
                suggested_size_bytes: Some(8 << 30),
            },
            VerdictFact::AbsorbedByPageCache {
                methods: vec![m("buffered", 10637.0, Some(0.0))],
                limit_bytes: None,
                device: None,
                suggested_size_bytes: None,
            },
        ];
        let lines: Vec<String> = facts.iter().filter_map(fact).collect();
        insta::assert_snapshot!(lines.join("\n"));
    }
}

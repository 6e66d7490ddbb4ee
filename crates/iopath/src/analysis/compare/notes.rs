//! The notes of a comparison: what differs between the runs, or happened
//! in them, that makes comparing them questionable.

use super::{CaseComparison, Status, OTHER_TRAFFIC};
use crate::model::units::{fmt_bytes, fmt_ns};
use crate::result::RunResult;

/// What differs between the runs that makes comparing them questionable,
/// one sentence each: the first run of A against the first of B, and
/// every interrupted run.
pub(super) fn notes(
    a: &[RunResult],
    b: &[RunResult],
    na: &str,
    nb: &str,
    cases: &[CaseComparison],
) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(a0), Some(b0)) = (a.first(), b.first()) {
        let mut differ = |what: &str, f: &dyn Fn(&RunResult) -> String| {
            let (va, vb) = (f(a0), f(b0));
            if va != vb {
                out.push(format!("{what} differs: {na} {va}, {nb} {vb}"));
            }
        };
        differ("target size", &|r| {
            r.target
                .as_ref()
                .map_or("none (no file)".into(), |t| fmt_bytes(t.size_bytes))
        });
        differ("file system", &|r| {
            r.system.fs_type.clone().unwrap_or_else(|| "unknown".into())
        });
        differ("device", &|r| match &r.system.device {
            Some(d) => match &d.model {
                Some(m) => format!("{} ({m})", d.name),
                None => d.name.clone(),
            },
            None => "none".into(),
        });
        differ("cache state", &|r| r.config.cache.to_string());
        differ("data", &|r| {
            let sparse = r.target.as_ref().is_some_and(|t| t.sparse);
            format!(
                "{}{}",
                r.config.data,
                if sparse { " (sparse file)" } else { "" }
            )
        });
        differ("time per repetition", &|r| {
            r.config.time_limit_ns.map_or("unlimited".into(), fmt_ns)
        });
        differ("bytes per repetition", &|r| {
            r.config.io_size_bytes.map_or("not set".into(), fmt_bytes)
        });
        differ("tool version", &|r| {
            format!(
                "{} {} (result schema {})",
                r.tool.name, r.tool.version, r.schema_version
            )
        });
    }
    for (runs, name) in [(a, na), (b, nb)] {
        for (i, r) in runs.iter().enumerate() {
            if r.interrupted {
                let which = if runs.len() > 1 {
                    format!("{name} (run {})", i + 1)
                } else {
                    name.to_string()
                };
                out.push(format!(
                    "{which} was interrupted (Ctrl-C): its last case may be cut short"
                ));
            }
        }
    }
    if !cases.is_empty()
        && cases
            .iter()
            .all(|c| matches!(c.status, Status::OnlyInA | Status::OnlyInB))
    {
        out.push(format!(
            "no case of {na} matches one of {nb} (same method and arm, pattern, block size, queue depth asked for, threads, sync, rwmix and the rest of the job, docs/compare.md): nothing was compared"
        ));
    }
    for c in cases.iter().filter(|c| c.status == Status::Compared) {
        for (f, name) in [(c.a_device_fraction, na), (c.b_device_fraction, nb)] {
            if let Some(f) = f.filter(|&f| f > OTHER_TRAFFIC) {
                out.push(format!(
                    "other traffic shared the disk during {name}'s {} {}: the device moved {f:.1}x the bytes the case asked for, so its figures are partly that traffic's (rerun, or give several runs a side)",
                    c.name,
                    c.job(),
                ));
            }
        }
    }
    // Below 6 repetitions `distinct` needs a complete separation that
    // chance alone would give less than 5% of the time: a case whose
    // samples are apart but too few (`undersampled`), or so few that no
    // outcome could count, reads "inconclusive" for lack of repetitions.
    let blind: Vec<&CaseComparison> = cases.iter().filter(|c| c.blind()).collect();
    if let Some(first) = blind.first() {
        out.push(format!(
            "{} compared case{} had too few repetitions to call a change real ({} {}: {} in {na}, {} in {nb}): run both with --repeat 6 or more",
            blind.len(),
            if blind.len() == 1 { "" } else { "s" },
            first.name,
            first.job(),
            first.a_n,
            first.b_n
        ));
    }
    out
}

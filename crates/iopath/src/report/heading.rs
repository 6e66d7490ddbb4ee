//! The lines before the tables of the whole report: what the run
//! measured on (the target, its file system or device, the cache state),
//! and the run's settings worth a line (a cache limit, a preset).

use crate::model::units::fmt_bytes;
use crate::result::RunResult;

/// How the target line describes a block device: its block sizes, kind,
/// queue and the stack below it (`512 B blocks, non-rotational, scheduler
/// none, nr_requests 128, read-ahead 128 KiB, loop0 -> vda`).
fn block_device_words(r: &RunResult) -> String {
    let mut w = vec!["block device".to_string()];
    if let Some(d) = &r.system.device {
        match (d.logical_block_size, d.physical_block_size) {
            (Some(l), Some(p)) if l != p => w.push(format!("{l}/{p} B blocks")),
            (Some(l), _) => w.push(format!("{l} B blocks")),
            _ => {}
        }
        if let Some(rot) = d.rotational {
            w.push(if rot { "rotational" } else { "non-rotational" }.into());
        }
        if let Some(s) = &d.scheduler {
            w.push(format!("scheduler {s}"));
        }
        if let Some(n) = d.nr_requests {
            w.push(format!("nr_requests {n}"));
        }
        if let Some(ra) = d.read_ahead_kb {
            w.push(format!("read-ahead {ra} KiB"));
        }
    }
    if let Some(st) = &r.system.device_stack {
        if st.path.len() > 1 {
            w.push(st.path.join(" -> "));
        }
    }
    w.join(", ")
}

/// The line that says what the run measured on: the target, its size,
/// file system or device, and the cache state.
pub fn target_line(r: &RunResult, t: &crate::result::TargetInfo) -> String {
    let dev = r
        .system
        .device
        .as_ref()
        .map(|d| {
            // A partition named as the target is the device measured.
            let name = match (&d.partition, d.disk_size_bytes) {
                (Some(p), Some(_)) => format!("{p}, a partition of {}", d.name),
                _ => d.name.clone(),
            };
            let above = if d.holders.is_empty() {
                String::new()
            } else {
                format!(
                    ", held by {}",
                    d.holders
                        .iter()
                        .map(|h| format!("{} (on {})", h.name, h.over))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            format!(
                ", device {name}{}{above}",
                d.model
                    .as_ref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_default();
    format!(
        "target: {} ({}, {}{}{}), cache: {}",
        t.path.display(),
        fmt_bytes(t.size_bytes),
        if t.kind == crate::result::names::TargetKind::BlockDevice {
            block_device_words(r)
        } else {
            r.system
                .fs_type
                .as_deref()
                .unwrap_or("unknown fs")
                .to_string()
        },
        dev,
        if t.created {
            ", removed after the run"
        } else {
            ""
        },
        r.config.cache
    )
}

/// The run's settings worth a line before the tables: a cache limit, a
/// preset.
pub fn run_notes(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(l) = &r.config.cache_limit {
        out.push(format!(
            "cache limit: {} (memory cgroup v{}, peak {}, cap hit {} times): cached methods held at most that much of the file",
            fmt_bytes(l.limit_bytes),
            l.cgroup_version,
            l.peak_bytes.map_or("?".into(), fmt_bytes),
            l.limit_hits.map_or("?".into(), |n| n.to_string())
        ));
    }
    if let Some(p) = &r.config.preset {
        out.push(format!("preset: {p} (docs/presets.md)"));
    }
    out
}

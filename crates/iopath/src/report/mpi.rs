//! The terminal tables of a run of many ranks: per case, the aggregate
//! beside the stonewall figure, then every rank and every host (printed
//! after the usual tables, which show the aggregate).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use crate::result::mpi::{FileLayout, MpiInfo};
use crate::result::RunResult;

fn mib(bw: f64) -> String {
    format!("{:.1}", bw / (1024.0 * 1024.0))
}

/// The ranks' tables; empty for a run of one process.
pub fn render(r: &RunResult) -> String {
    let Some(info) = &r.mpi else {
        return String::new();
    };
    let mut out = header(info);
    // In the tables' order (the cases' own).
    for k in &r.cases {
        let name = format!("{} {}", k.name(), k.ran_label());
        let Some(c) = info.cases.iter().find(|c| c.case == name) else {
            continue;
        };
        let agg = k.summary.as_ref();
        let line = format!(
            "{}: aggregate {} MiB/s over the common interval, stonewall {} MiB/s; slowest rank {}, spread {} ({} measured repetitions)",
            c.case,
            agg.map_or("?".into(), |m| mib(m.bw_bytes_per_s)),
            c.stonewall_bw_bytes_per_s.map_or("?".into(), mib),
            c.slowest_rank.map_or("?".into(), |r| r.to_string()),
            c.spread.map_or("?".into(), |s| format!("{s:.2}x")),
            c.measured
        );
        out.push('\n');
        out.push_str(&crate::model::units::wrap(&line, 120, "", "  "));
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(120)
            .set_header(vec![
                "rank",
                "host",
                "MiB moved",
                "MiB/s (own)",
                "ends at ms",
            ]);
        for k in &c.ranks {
            t.add_row(vec![
                k.rank.to_string(),
                k.host.clone(),
                format!("{:.1}", k.io_bytes as f64 / (1024.0 * 1024.0)),
                mib(k.bw_bytes_per_s),
                format!("{:.1}", k.end_ns as f64 / 1e6),
            ]);
        }
        out.push_str(&format!("{t}\n"));
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(120)
            .set_header(vec![
                "host",
                "ranks",
                "MiB moved",
                "MiB/s (host interval)",
                "device MiB read",
                "device MiB written",
            ]);
        let dev = |v: Option<u64>| v.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1048576.0));
        for h in &c.hosts {
            t.add_row(vec![
                h.host.clone(),
                h.ranks
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                format!("{:.1}", h.io_bytes as f64 / 1048576.0),
                mib(h.bw_bytes_per_s),
                dev(h.device_read_bytes),
                dev(h.device_write_bytes),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    out
}

fn header(info: &MpiInfo) -> String {
    let layout = info.layout.unwrap_or(FileLayout::PerRank);
    let line = format!(
        "MPI: {} on {} ({}), layout {}{}. Medians over the measured repetitions; {}.",
        crate::model::units::n_of(info.ranks, "rank", "ranks"),
        crate::model::units::n_of(info.hosts.len() as u64, "host", "hosts"),
        info.hosts
            .iter()
            .map(|h| format!("{}: {}", h.host, h.ranks.len()))
            .collect::<Vec<_>>()
            .join(", "),
        layout.name(),
        // The target line above names one file: with per-rank files it
        // is rank 0's, and every rank has one like it.
        if layout.shared() || info.ranks < 2 {
            ""
        } else {
            " (each rank its own file, as rank 0's above)"
        },
        info.note
    );
    format!("\n{}", crate::model::units::wrap(&line, 120, "", "  "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::mpi::{HostRanks, HostSummary, MpiCase, RankSummary};
    use crate::result::CaseResult;

    /// The ranks' tables of a run of two ranks on two hosts, per-rank
    /// files: the header, a case's line, its ranks and hosts.
    #[test]
    fn tables_of_two_ranks() {
        let case = CaseResult::default();
        let name = format!("{} {}", case.name(), case.ran_label());
        let rank = |rank: u32, host: &str| RankSummary {
            rank,
            host: host.into(),
            io_bytes: 64 << 20,
            bw_bytes_per_s: f64::from(100 + rank) * 1048576.0,
            end_ns: 640_000_000 + u64::from(rank),
        };
        let host = |host: &str, r: u32| HostSummary {
            host: host.into(),
            ranks: vec![r],
            io_bytes: 64 << 20,
            bw_bytes_per_s: 100.0 * 1048576.0,
            device_read_bytes: (r == 0).then_some(32 << 20),
            device_write_bytes: None,
        };
        let mut r = crate::report::testdata::fixture();
        assert_eq!(render(&r), "", "a run of one process has no ranks' tables");
        r.cases = vec![case];
        r.mpi = Some(MpiInfo {
            ranks: 2,
            hosts: vec![
                HostRanks {
                    host: "a".into(),
                    ranks: vec![0],
                },
                HostRanks {
                    host: "b".into(),
                    ranks: vec![1],
                },
            ],
            layout: Some(FileLayout::PerRank),
            note: "a note".into(),
            cases: vec![MpiCase {
                case: name,
                measured: 3,
                ranks: vec![rank(0, "a"), rank(1, "b")],
                hosts: vec![host("a", 0), host("b", 1)],
                slowest_rank: Some(1),
                spread: Some(1.01),
                stonewall_bw_bytes_per_s: Some(200.0 * 1048576.0),
            }],
            ..MpiInfo::default()
        });
        insta::assert_snapshot!(render(&r));
    }
}

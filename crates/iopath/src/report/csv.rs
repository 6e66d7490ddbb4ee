//! CSV export: one row per case and repetition, every figure of a
//! measurement in its own column, for spreadsheets, pandas and R.
//!
//! A row is one repetition of one case, warm-ups included (flagged, and
//! `counted` false), in case order then repetition order. A case with no
//! repetition (skipped, failed, or never reached) still gets one row, with
//! empty measurement columns and its status and reason, so that nothing
//! disappears. Columns are documented in `docs/reports.md`; their names and
//! order are stable. Per-interval time series are not here: they are in the
//! JSON's `cases[].repetitions[].series`.

use anyhow::{Context, Result};

use crate::report::export::{visible_bytes, Export, Exporter};
use crate::result::{CaseResult, Measurement, RunResult};

const MIB: f64 = 1024.0 * 1024.0;

/// `--csv`: [`render`], its control characters shown.
#[derive(Debug, Clone, Copy)]
pub struct Csv;

impl Exporter for Csv {
    fn flag(&self) -> &'static str {
        "--csv"
    }

    fn serialize(&self, r: &RunResult) -> Result<Export> {
        Ok(Export::Document(visible_bytes(&render(r)?)))
    }
}

/// The header, in order. Measurement columns follow the JSON's field
/// paths joined with `_` (`lat_ns.p99` is `lat_p99_ns`, `cpu.user_ns` is
/// `cpu_user_ns`).
pub const COLUMNS: &[&str] = &[
    // The run and the case.
    "started_at",
    "case",
    "method",
    "pattern",
    "block_size_bytes",
    "queue_depth",
    "queue_depth_requested",
    "threads",
    "sync",
    "rwmix_read_pct",
    "label",
    "span_bytes",
    "copy_to_user",
    "sparse",
    // What the row is.
    "status",
    "reason",
    "notes",
    "repetition",
    "counted",
    // The measurement.
    "duration_ns",
    "io_bytes",
    "ios",
    "read_ios",
    "write_ios",
    "read_bytes",
    "write_bytes",
    "bw_bytes_per_s",
    "bw_mib_per_s",
    "iops",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
    "device_reads",
    "device_read_bytes",
    "device_writes",
    "device_write_bytes",
    "device_fraction",
    "cpu_ns",
    "cpu_user_ns",
    "cpu_sys_ns",
    "cpu_sqpoll_ns",
    "cpu_ns_per_io",
    "cpu_utilization",
    "cpu_minflt",
    "cpu_majflt",
    "cpu_ctx_vol",
    "cpu_ctx_invol",
    "memory_page_cache_bytes",
    "memory_page_cache_before_bytes",
    "memory_buffers_bytes",
    "memory_total_bytes",
    "memory_rss_peak_bytes",
    "memory_locked_bytes",
    "memory_cached_delta_bytes",
    "memory_dirty_after_bytes",
    "memory_cgroup_file_bytes",
    // Added in schema 3, last so that earlier columns keep their places.
    "lat_count",
    "round",
    "seq",
    // The costs per I/O and the kernel's deferred work (issue 29), last.
    "cpu_own_ns_per_io",
    "deferred_kernel_threads_ns",
    "deferred_baseline_ns",
    "deferred_estimate_ns",
    "deferred_charged",
    "minflt_per_io",
    "majflt_per_io",
    "ctx_vol_per_io",
    "ctx_invol_per_io",
    "rw_calls_per_io",
    "copied_per_byte",
    "own_device_per_byte",
    "other_device_per_byte",
    "deferred_ns_per_io",
];

/// Columns before the measurement's.
const IDENTITY_COLUMNS: usize = 19;

/// Render `r` as CSV (RFC 4180: comma-separated, fields quoted when they
/// need it, `\n` line ends), header first.
pub fn render(r: &RunResult) -> Result<String> {
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(COLUMNS)?;
    for (i, c) in r.cases.iter().enumerate() {
        for row in case_rows(r, i + 1, c) {
            debug_assert_eq!(row.len(), COLUMNS.len());
            w.write_record(&row)?;
        }
    }
    let bytes = w.into_inner().context("cannot finish the CSV")?;
    String::from_utf8(bytes).context("the CSV is not UTF-8")
}

/// The rows of one case: one per repetition, or one saying why there is
/// none.
fn case_rows(r: &RunResult, index: usize, c: &CaseResult) -> Vec<Vec<String>> {
    let identity = |status: &str, reason: &str, repetition: String, counted: String| {
        vec![
            r.started_at.clone(),
            index.to_string(),
            c.name(),
            c.pattern.to_string(),
            c.block_size.to_string(),
            c.queue_depth.to_string(),
            c.queue_depth_requested.to_string(),
            c.threads.to_string(),
            c.sync.to_string(),
            opt(c.rwmix_read_pct),
            c.label.clone().unwrap_or_default(),
            opt(c.span_bytes),
            c.copy_to_user.to_string(),
            c.sparse.to_string(),
            status.to_string(),
            reason.to_string(),
            c.notes.join("; "),
            repetition,
            counted,
        ]
    };
    if c.repetitions.is_empty() {
        let (status, reason) = match (&c.skipped, &c.error) {
            // Not refused: it could run here, the interruption came first.
            (Some(why), _) if c.not_reached() => ("not_reached", why.clone()),
            (Some(why), _) => ("skipped", why.clone()),
            (None, Some(err)) => ("error", err.clone()),
            (None, None) if r.interrupted => (
                "interrupted",
                "the run was stopped before this case completed a repetition".to_string(),
            ),
            (None, None) => ("error", "no repetition was recorded".to_string()),
        };
        let mut row = identity(status, &reason, String::new(), String::new());
        row.resize(COLUMNS.len(), String::new());
        return vec![row];
    }
    // `measured()` returns references into `repetitions`: the counted ones
    // are found by address.
    let counted = c.measured();
    c.repetitions
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let status = if m.warmup {
                "warmup"
            } else if m.interrupted {
                "interrupted"
            } else {
                "measured"
            };
            let mut reasons = Vec::new();
            if m.interrupted {
                reasons.push("cut short by Ctrl-C or SIGTERM".to_string());
            }
            if let Some(err) = &c.error {
                reasons.push(format!("the case then failed: {err}"));
            }
            let is_counted = counted.iter().any(|&x| std::ptr::eq(x, m));
            let mut row = identity(
                status,
                &reasons.join("; "),
                (k + 1).to_string(),
                is_counted.to_string(),
            );
            debug_assert_eq!(row.len(), IDENTITY_COLUMNS);
            row.extend(measurement(m));
            row
        })
        .collect()
}

/// The measurement columns of one repetition.
fn measurement(m: &Measurement) -> Vec<String> {
    let d = m.device.as_ref();
    let mut row = vec![
        m.duration_ns.to_string(),
        m.io_bytes.to_string(),
        m.ios.to_string(),
        m.read_ios.to_string(),
        m.write_ios.to_string(),
        m.read_bytes.to_string(),
        m.write_bytes.to_string(),
        float(m.bw_bytes_per_s),
        float(m.bw_bytes_per_s / MIB),
        float(m.iops),
        m.lat_ns.min.to_string(),
        float(m.lat_ns.mean),
        m.lat_ns.p50.to_string(),
        m.lat_ns.p90.to_string(),
        m.lat_ns.p99.to_string(),
        m.lat_ns.p999.to_string(),
        m.lat_ns.max.to_string(),
        opt(d.map(|d| d.reads)),
        opt(d.map(|d| d.read_bytes)),
        opt(d.map(|d| d.writes)),
        opt(d.map(|d| d.write_bytes)),
        m.device_fraction.map_or(String::new(), float),
        m.cpu.cpu_ns.to_string(),
        m.cpu.user_ns.to_string(),
        m.cpu.sys_ns.to_string(),
        m.cpu.sqpoll_ns.to_string(),
        float(m.cpu.ns_per_io),
        float(m.cpu.utilization),
        m.cpu.minflt.to_string(),
        m.cpu.majflt.to_string(),
        m.cpu.ctx_vol.to_string(),
        m.cpu.ctx_invol.to_string(),
        m.memory.page_cache_bytes.to_string(),
        m.memory.page_cache_before_bytes.to_string(),
        m.memory.buffers_bytes.to_string(),
        m.memory.total_bytes.to_string(),
        m.memory.rss_peak_bytes.to_string(),
        m.memory.locked_bytes.to_string(),
        m.memory.cached_delta_bytes.to_string(),
        m.memory.dirty_after_bytes.to_string(),
        opt(m.memory.cgroup_file_bytes),
        // 0: not recorded (results older than schema 3).
        opt((m.lat_ns.count > 0).then_some(m.lat_ns.count)),
        opt(m.round),
        opt(m.seq),
    ];
    row.extend(costs(m));
    row
}

/// The costs columns of one repetition: empty where not measured.
fn costs(m: &Measurement) -> Vec<String> {
    let f = |v: Option<f64>| v.map_or(String::new(), float);
    let d = m.deferred.as_ref();
    let c = m.costs.as_ref();
    vec![
        f(m.cpu.own_ns_per_io),
        opt(d.map(|d| d.kernel_threads_ns)),
        opt(d.map(|d| d.baseline_ns)),
        opt(d.map(|d| d.estimate_ns)),
        opt(d.map(|d| u8::from(d.charged))),
        f(c.map(|c| c.minflt_per_io)),
        f(c.map(|c| c.majflt_per_io)),
        f(c.map(|c| c.ctx_vol_per_io)),
        f(c.map(|c| c.ctx_invol_per_io)),
        f(c.and_then(|c| c.rw_calls_per_io)),
        f(c.and_then(|c| c.copied_per_byte)),
        f(c.and_then(|c| c.own_device_per_byte)),
        f(c.and_then(|c| c.other_device_per_byte)),
        f(c.and_then(|c| c.deferred_ns_per_io)),
    ]
}

/// A float in plain decimal: the shortest form that reads back to the same
/// value, never an exponent (Rust's `Display`); empty when not finite.
fn float(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::testdata::{fixture, v1};

    /// Header and rows, parsed back.
    fn parse(text: &str) -> (Vec<String>, Vec<::csv::StringRecord>) {
        let mut rd = ::csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(text.as_bytes());
        let header = rd.headers().unwrap().iter().map(String::from).collect();
        let rows = rd.records().map(|r| r.unwrap()).collect();
        (header, rows)
    }

    fn col(header: &[String], name: &str) -> usize {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    }

    #[test]
    fn columns_are_unique_and_snake_case() {
        for (i, c) in COLUMNS.iter().enumerate() {
            assert!(
                c.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'),
                "{c}"
            );
            assert!(!COLUMNS[..i].contains(c), "{c} twice");
        }
        assert_eq!(COLUMNS[IDENTITY_COLUMNS], "duration_ns");
        assert_eq!(
            measurement(&Measurement::default()).len(),
            COLUMNS.len() - IDENTITY_COLUMNS
        );
    }

    #[test]
    fn one_row_per_repetition_and_per_case_without_any() {
        let r = fixture();
        let text = render(&r).unwrap();
        let (header, rows) = parse(&text);
        assert_eq!(header, COLUMNS);
        let expected: usize = r.cases.iter().map(|c| c.repetitions.len().max(1)).sum();
        assert_eq!(rows.len(), expected);
        // 15 measured cases of 5 repetitions, 3 skipped.
        assert_eq!(rows.len(), 15 * 5 + 3);
        for row in &rows {
            assert_eq!(row.len(), header.len(), "{row:?}");
        }

        let (status, counted, rep) = (
            col(&header, "status"),
            col(&header, "counted"),
            col(&header, "repetition"),
        );
        let warmups: Vec<_> = rows.iter().filter(|x| &x[status] == "warmup").collect();
        assert_eq!(warmups.len(), 15);
        for w in warmups {
            assert_eq!(&w[counted], "false");
            assert_eq!(&w[rep], "1", "the warm-up runs first");
            assert!(!w[col(&header, "bw_bytes_per_s")].is_empty());
        }
        let measured: Vec<_> = rows.iter().filter(|x| &x[status] == "measured").collect();
        assert_eq!(measured.len(), 15 * 4);
        assert!(measured.iter().all(|x| &x[counted] == "true"));

        // Skipped: its reason, and nothing measured.
        let skipped: Vec<_> = rows.iter().filter(|x| &x[status] == "skipped").collect();
        assert_eq!(skipped.len(), 3);
        for s in skipped {
            assert_eq!(&s[col(&header, "method")], "uring-iopoll");
            assert!(
                s[col(&header, "reason")].contains("EOPNOTSUPP"),
                "{:?}",
                &s[col(&header, "reason")]
            );
            assert_eq!(&s[rep], "");
            assert_eq!(&s[counted], "");
            assert!(s.iter().skip(IDENTITY_COLUMNS).all(|f| f.is_empty()));
        }

        // Case order, then repetition order; figures read back exactly.
        let (case, method, pattern) = (
            col(&header, "case"),
            col(&header, "method"),
            col(&header, "pattern"),
        );
        let row = &rows[2];
        assert_eq!(
            (&row[case], &row[method], &row[pattern], &row[rep]),
            ("1", "buffered", "read", "3")
        );
        let bw: f64 = row[col(&header, "bw_bytes_per_s")].parse().unwrap();
        assert_eq!(bw, r.cases[0].repetitions[2].bw_bytes_per_s);
        assert_eq!(bw, 1849022638.195222);
        let mib: f64 = row[col(&header, "bw_mib_per_s")].parse().unwrap();
        assert!((mib * MIB - bw).abs() < 1e-3);
        assert_eq!(
            row[col(&header, "lat_p99_ns")].parse::<u64>().unwrap(),
            r.cases[0].repetitions[2].lat_ns.p99
        );
        assert_eq!(
            &row[col(&header, "started_at")],
            "2026-11-21T01:57:42Z",
            "every row says which run it is from"
        );
        // The last case of the file is its last row.
        let last = rows.last().unwrap();
        assert_eq!(&last[case], r.cases.len().to_string().as_str());
    }

    #[test]
    fn numbers_are_plain() {
        let text = render(&fixture()).unwrap();
        let (header, rows) = parse(&text);
        let numeric = &header[IDENTITY_COLUMNS..];
        for row in &rows {
            for (name, f) in numeric.iter().zip(row.iter().skip(IDENTITY_COLUMNS)) {
                assert!(
                    f.is_empty()
                        || (f.parse::<f64>().is_ok() && !f.contains(['e', 'E', ',', '_', ' '])),
                    "{name}: {f:?}"
                );
            }
        }
        assert_eq!(float(1e20), "100000000000000000000");
        assert_eq!(float(0.000125), "0.000125");
        assert_eq!(float(2.0), "2");
        assert_eq!(float(f64::NAN), "");
    }

    #[test]
    fn schema_1_file() {
        let r = v1();
        assert!(r.cases.iter().all(|c| c.repetition_control.is_none()));
        let text = render(&r).unwrap();
        let (header, rows) = parse(&text);
        let expected: usize = r.cases.iter().map(|c| c.repetitions.len().max(1)).sum();
        assert_eq!(rows.len(), expected);
        let status = col(&header, "status");
        assert!(rows.iter().all(|x| &x[status] != "warmup"));
        assert_eq!(
            rows.iter()
                .filter(|x| &x[status] == "measured" && &x[col(&header, "counted")] == "true")
                .count(),
            4 * 6
        );
        assert_eq!(rows.iter().filter(|x| &x[status] == "skipped").count(), 1);
    }

    #[test]
    fn interrupted_failed_and_quoted() {
        let mut r = fixture();
        r.interrupted = true;
        // A case whose last repetition Ctrl-C cut short: not counted, as
        // `measured()` leaves it out while complete ones exist.
        r.cases[0].repetitions[4].interrupted = true;
        // A case that failed after two repetitions, with a comma, a quote
        // and a line break in its error.
        r.cases[1].repetitions.truncate(3);
        r.cases[1].error = Some("pread: I/O error, \"EIO\"\nat offset 0".into());
        // A case the run never reached.
        r.cases[2].repetitions.clear();
        let text = render(&r).unwrap();
        let (header, rows) = parse(&text);
        let (status, reason, counted) = (
            col(&header, "status"),
            col(&header, "reason"),
            col(&header, "counted"),
        );
        let case = |i: usize| -> Vec<&::csv::StringRecord> {
            rows.iter()
                .filter(|x| x[col(&header, "case")] == i.to_string())
                .collect()
        };
        let c1 = case(1);
        assert_eq!(&c1[4][status], "interrupted");
        assert_eq!(&c1[4][counted], "false");
        assert!(c1[4][reason].contains("Ctrl-C"));

        let c2 = case(2);
        assert_eq!(c2.len(), 3);
        for row in &c2 {
            assert!(
                row[reason].ends_with("pread: I/O error, \"EIO\"\nat offset 0"),
                "{:?}",
                &row[reason]
            );
        }
        assert_eq!(&c2[1][status], "measured");

        let c3 = case(3);
        assert_eq!(c3.len(), 1);
        assert_eq!(&c3[0][status], "interrupted");
        assert!(c3[0].iter().skip(IDENTITY_COLUMNS).all(|f| f.is_empty()));
    }

    #[test]
    fn snapshot() {
        let text = render(&fixture()).unwrap();
        let mut lines = text.lines();
        // The header, then one case of each kind: buffered on read (warm-up
        // and 4 measured), uring on randread, the skipped uring-iopoll.
        let mut shown: Vec<&str> = vec![lines.next().unwrap()];
        let body: Vec<&str> = lines.collect();
        shown.extend(&body[0..5]);
        shown.extend(
            body.iter()
                .filter(|l| l.contains(",uring,randread,") || l.contains(",uring-iopoll,write,")),
        );
        insta::assert_snapshot!(shown.join("\n"));
    }
}

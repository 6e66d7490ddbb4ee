//! Tests of the fio JSON: the fixtures (a run with cases of every kind
//! the renderer tells apart), the snapshots of whole documents, and the
//! figures of a job: its representative repetition, its directions,
//! latency, samples, options, disks and times. What fio's keys and types
//! are, and what fio-plot reads, is in [`keys`].

mod keys;

use serde_json::Value;

use super::latency::sample_stddev;
use super::options::{fio_size, fio_time};
use super::time::{ctime, parse_rfc3339};
use super::*;
use crate::report::testdata::fixture;
use crate::result::{Latency, LatencyBins, Series};

/// What fio 3.33 wrote (tests/fixtures/fio/README.md).
const FIO: [&str; 3] = [
    include_str!("../../../../tests/fixtures/fio/fio-3.33-randread.json"),
    include_str!("../../../../tests/fixtures/fio/fio-3.33-write.json"),
    include_str!("../../../../tests/fixtures/fio/fio-3.33-randrw.json"),
];

fn v3() -> RunResult {
    serde_json::from_str(include_str!("../../../../tests/fixtures/compare/v3.json")).unwrap()
}

/// The document as a reader gets it: the text, parsed back.
fn parsed(r: &RunResult) -> Value {
    serde_json::from_str(&to_json(r).unwrap()).unwrap()
}

/// Bins by name, the rest empty.
fn bins(held: &[(&str, u64)]) -> LatencyBins {
    let mut b = LatencyBins::default();
    for (name, n) in held {
        let i = LatencyBins::NAMES.iter().position(|k| k == name).unwrap();
        b.0[i] = *n;
    }
    b
}

fn rep(read: (u64, u64), write: (u64, u64), duration_ns: u64) -> Measurement {
    let n = read.1 + write.1;
    Measurement {
        io_bytes: read.0 + write.0,
        ios: read.1 + write.1,
        read_bytes: read.0,
        read_ios: read.1,
        write_bytes: write.0,
        write_ios: write.1,
        duration_ns,
        bw_bytes_per_s: (read.0 + write.0) as f64 * 1e9 / duration_ns.max(1) as f64,
        iops: (read.1 + write.1) as f64 * 1e9 / duration_ns.max(1) as f64,
        lat_ns: Latency {
            count: read.1 + write.1,
            min: 40_000,
            mean: 95_000.5,
            p50: 90_000,
            p90: 120_000,
            p99: 250_000,
            p999: 900_000,
            max: 1_200_000,
            stddev: Some(60_000.0),
            // As the percentiles have it: half under 100 µs, 99% under
            // 250 µs, 0.1% from 1 ms.
            bins: Some(bins(&[
                ("100us", n / 2),
                ("250us", n - n / 2 - n / 100),
                ("1000us", n / 100 - n / 1000),
                ("2ms", n / 1000),
            ])),
        },
        cpu: Cpu {
            cpu_ns: 60_000_000,
            user_ns: 10_000_000,
            sys_ns: 40_000_000,
            ctx_vol: 300,
            ctx_invol: 7,
            minflt: 12,
            majflt: 1,
            ..Cpu::default()
        },
        ..Measurement::default()
    }
}

fn case(method: &str, pattern: &str, reps: Vec<Measurement>) -> CaseResult {
    CaseResult {
        method: method.into(),
        pattern: crate::model::Pattern::from_name(pattern).unwrap(),
        block_size: 4096,
        queue_depth: 32,
        queue_depth_requested: 32,
        threads: 1,
        sync: iopath_io::SyncPolicy::End,
        repetitions: reps,
        ..CaseResult::default()
    }
}

fn run(cases: Vec<CaseResult>) -> RunResult {
    let mut r = fixture();
    r.cases = cases;
    r
}

/// Cases of every kind the renderer tells apart, odd ones included.
fn odd_run() -> RunResult {
    let mut with_series = rep((4096 * 30_000, 30_000), (0, 0), 200_000_000);
    with_series.series = Some(Series::from_counts(
        100_000_000,
        100_000_000,
        &[4096 * 14_000, 4096 * 16_000],
        &[14_000, 16_000],
    ));
    let mut randrw = case(
        "uring",
        "randrw",
        vec![rep((4096 * 700, 700), (4096 * 300, 300), 100_000_000)],
    );
    randrw.rwmix_read_pct = Some(70);
    let mut threads = case(
        "uring-sqpoll",
        "randwrite",
        vec![rep((0, 0), (4096 * 1000, 1000), 100_000_000)],
    );
    threads.threads = 4;
    threads.sync = iopath_io::SyncPolicy::Each;
    threads.span_bytes = Some(1 << 30);
    threads.cache = Some(crate::model::CacheState::Warm);
    let mut old = rep((1 << 20, 1), (0, 0), 5_000_000);
    old.lat_ns.count = 0;
    old.lat_ns.stddev = None;
    old.lat_ns.bins = None;
    old.cpu = Cpu::default();
    let mut errored = case("aio", "randread", vec![rep((4096, 1), (0, 0), 1000)]);
    errored.error = Some("io_submit: Invalid argument (os error 22)".into());
    let mut skipped = case("uring-iopoll", "randread", vec![]);
    skipped.skipped = Some("no poll queues".into());
    let warm_only = case(
        "direct",
        "randread",
        vec![Measurement {
            warmup: true,
            ..rep((4096, 1), (0, 0), 1000)
        }],
    );
    run(vec![
        case("direct", "randread", vec![with_series]),
        randrw,
        threads,
        case(
            "mmap",
            "copy",
            vec![rep((1 << 20, 1), (1 << 20, 1), 2_000_000)],
        ),
        case("ucache", "read", vec![old]),
        case("null", "randread", vec![rep((4096, 1), (0, 0), 0)]),
        errored,
        skipped,
        warm_only,
    ])
}

fn jobs(doc: &Value) -> &Vec<Value> {
    doc["jobs"].as_array().unwrap()
}

fn job_named<'a>(doc: &'a Value, name: &str) -> &'a Value {
    jobs(doc)
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name}"))
}

#[test]
fn snapshot_of_a_real_run() {
    insta::assert_snapshot!(to_json(&fixture()).unwrap());
}

#[test]
fn snapshot_of_a_schema_3_run() {
    insta::assert_snapshot!(to_json(&v3()).unwrap());
}

/// A run that recorded the latency's standard deviation and bins: one
/// direction, and reads and writes mixed.
#[test]
fn snapshot_of_latency_spread_and_bins() {
    let r = odd_run();
    insta::assert_snapshot!(to_json(&run(r.cases[..2].to_vec())).unwrap());
}

#[test]
fn a_job_is_its_median_repetition_and_its_figures_agree() {
    let r = fixture();
    let doc = parsed(&r);
    for c in r.cases.iter().filter(|c| c.skipped.is_none()) {
        let j = job_named(&doc, &jobname(c));
        let m = representative(c).unwrap();
        let mode = if m.read_ios > 0 { "read" } else { "write" };
        let d = &j[mode];
        assert_eq!(d["io_bytes"], m.io_bytes);
        assert_eq!(d["io_kbytes"], m.io_bytes / 1024);
        assert_eq!(d["total_ios"], m.ios);
        let bw_bytes = d["bw_bytes"].as_u64().unwrap();
        assert_eq!(
            bw_bytes,
            (m.io_bytes as u128 * 1_000_000_000 / m.duration_ns as u128) as u64
        );
        assert!((bw_bytes as f64 - m.bw_bytes_per_s).abs() <= 1.0);
        assert_eq!(d["bw"], bw_bytes / 1024);
        let iops = d["iops"].as_f64().unwrap();
        assert!((iops - m.iops).abs() < 1e-6 * m.iops, "{iops} {}", m.iops);
        assert_eq!(d["runtime"], (m.duration_ns + 500_000) / 1_000_000);
        assert_eq!(d["lat_ns"]["percentile"]["99.000000"], m.lat_ns.p99);
        assert_eq!(d["clat_ns"], d["lat_ns"]);
        // fio's bw is io_bytes over runtime: true to the ms rounding.
        let runtime_ms = d["runtime"].as_f64().unwrap();
        let fio_bw = m.io_bytes as f64 * 1000.0 / runtime_ms;
        assert!((fio_bw / bw_bytes as f64 - 1.0).abs() < 0.5 / runtime_ms + 1e-9);
        // The median repetition: as many measured ones above as below
        // (the slower middle one of an even number).
        let bws = c.samples(|m| m.bw_bytes_per_s);
        let below = bws.iter().filter(|&&b| b < m.bw_bytes_per_s).count();
        let above = bws.iter().filter(|&&b| b > m.bw_bytes_per_s).count();
        assert_eq!(above, bws.len() / 2, "{}", jobname(c));
        assert_eq!(below, (bws.len() - 1) / 2, "{}", jobname(c));
    }
}

#[test]
fn representative_repetition() {
    let bw = |b: f64| Measurement {
        bw_bytes_per_s: b,
        ..Measurement::default()
    };
    let c = case("direct", "read", vec![bw(1.0), bw(9.0), bw(5.0)]);
    assert_eq!(representative(&c).unwrap().bw_bytes_per_s, 5.0);
    let c = case("direct", "read", vec![bw(4.0), bw(1.0), bw(3.0), bw(2.0)]);
    assert_eq!(representative(&c).unwrap().bw_bytes_per_s, 2.0);
    // Warm-ups never, cut repetitions only when nothing else.
    let warm = Measurement {
        warmup: true,
        ..bw(100.0)
    };
    let cut = Measurement {
        interrupted: true,
        ..bw(50.0)
    };
    let c = case("direct", "read", vec![warm.clone(), bw(7.0), cut.clone()]);
    assert_eq!(representative(&c).unwrap().bw_bytes_per_s, 7.0);
    let c = case("direct", "read", vec![warm.clone(), cut]);
    assert_eq!(representative(&c).unwrap().bw_bytes_per_s, 50.0);
    assert!(representative(&case("direct", "read", vec![warm])).is_none());
    assert!(representative(&case("direct", "read", vec![])).is_none());
}

#[test]
fn cases_that_measured_nothing_are_left_out() {
    let doc = parsed(&odd_run());
    let names: Vec<&str> = jobs(&doc)
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "direct randread 4k Q32T1",
            "uring randrw 4k Q32T1 70% read",
            "uring-sqpoll randwrite 4k Q32T4 span 1 GiB",
            "mmap copy 4k Q32T1",
            "ucache read 4k Q32T1",
            "null randread 4k Q32T1",
        ]
    );
    for (i, j) in jobs(&doc).iter().enumerate() {
        assert_eq!(j["groupid"], i as u64);
    }
    // No case at all: a document with no jobs.
    let doc = parsed(&run(vec![]));
    assert_eq!(doc["jobs"], serde_json::json!([]));
    assert!(doc.get("disk_util").is_none());
}

#[test]
fn mixed_directions_keep_their_bytes_and_lose_latency() {
    let doc = parsed(&odd_run());
    let j = job_named(&doc, "uring randrw 4k Q32T1 70% read");
    assert_eq!(j["job options"]["rw"], "randrw");
    assert_eq!(j["job options"]["rwmixread"], "70");
    assert!(j["job options"].get("lat_percentiles").is_none());
    for (dir, ios) in [("read", 700u64), ("write", 300)] {
        let d = &j[dir];
        assert_eq!(d["total_ios"], ios);
        assert_eq!(d["io_bytes"], ios * 4096);
        assert_eq!(d["bw_bytes"], ios * 4096 * 10);
        assert_eq!(d["iops"], ios as f64 * 10.0);
        assert_eq!(d["runtime"], 100);
        // One histogram and one series for both: neither direction's.
        for k in ["lat_ns", "clat_ns", "bw_min", "iops_stddev"] {
            assert!(d.get(k).is_none(), "{dir}.{k}");
        }
    }
    // A copy reads and writes too.
    let j = job_named(&doc, "mmap copy 4k Q32T1");
    assert_eq!(j["read"]["io_bytes"], 1 << 20);
    assert_eq!(j["write"]["io_bytes"], 1 << 20);
    assert!(j["read"].get("lat_ns").is_none() && j["write"].get("lat_ns").is_none());
    assert_eq!(j["job options"]["end_fsync"], "1");
}

#[test]
fn one_direction_gets_the_latency_and_the_samples() {
    let doc = parsed(&odd_run());
    let j = job_named(&doc, "direct randread 4k Q32T1");
    let d = &j["read"];
    assert_eq!(d["lat_ns"]["N"], 30_000);
    assert_eq!(d["lat_ns"]["mean"], 95_000.5);
    assert_eq!(d["lat_ns"]["percentile"]["99.900000"], 900_000);
    assert_eq!(j["job options"]["lat_percentiles"], "1");
    // Two intervals of 100 ms: 14,000 and 16,000 requests of 4 KiB.
    assert_eq!(d["iops_samples"], 2);
    assert_eq!(d["iops_min"], 140_000);
    assert_eq!(d["iops_max"], 160_000);
    assert_eq!(d["iops_mean"], 150_000.0);
    let sd = (2.0f64 * 10_000.0f64.powi(2)).sqrt(); // sample stddev of the two
    assert!((d["iops_stddev"].as_f64().unwrap() - sd).abs() < 1e-6);
    assert_eq!(d["bw_min"], 560_000);
    assert_eq!(d["bw_max"], 640_000);
    assert_eq!(d["bw_samples"], 2);
    assert_eq!(d["bw_agg"], 100.0);
    // CPU over the 200 ms: 10 ms user, 40 ms system.
    assert_eq!(j["usr_cpu"], 5.0);
    assert_eq!(j["sys_cpu"], 20.0);
    assert_eq!(j["ctx"], 307);
    assert_eq!(j["majf"], 1);
    assert_eq!(j["minf"], 12);
    // The write-only case: latency on the write side, zeros on the read.
    let j = job_named(&doc, "uring-sqpoll randwrite 4k Q32T4 span 1 GiB");
    assert_eq!(j["write"]["lat_ns"]["N"], 1000);
    assert_eq!(j["read"]["lat_ns"]["N"], 0);
    assert_eq!(j["read"]["lat_ns"]["max"], 0);
    assert_eq!(j["read"]["lat_ns"]["stddev"], 0.0);
    assert!(j["read"]["lat_ns"].get("percentile").is_none());
    // No series: no samples.
    assert!(j["write"].get("bw_samples").is_none());
    assert_eq!(j["read"]["bw_samples"], 0);
}

#[test]
fn latency_spread_and_bins_as_fio_writes_them() {
    let fio: Value = serde_json::from_str(FIO[0]).unwrap();
    let doc = parsed(&odd_run());
    let j = job_named(&doc, "direct randread 4k Q32T1");
    // fio's stddev is the sample one: 60 µs over 30,000 requests.
    let sd = 60_000.0 * (30_000.0f64 / 29_999.0).sqrt();
    for lat in ["lat_ns", "clat_ns"] {
        let got = j["read"][lat]["stddev"].as_f64().unwrap();
        assert!((got - sd).abs() < 1e-6, "{lat}: {got}");
    }
    // Every bin fio writes, in fio's order, each a float: 15,000
    // requests under 100 µs, 14,700 under 250, 270 from 750 µs, 30 from
    // 1 ms.
    for k in ["latency_ns", "latency_us", "latency_ms"] {
        let keys =
            |v: &Value| -> Vec<String> { v[k].as_object().unwrap().keys().cloned().collect() };
        let ours = keys(j);
        assert_eq!(ours, keys(&fio["jobs"][0]), "{k}");
        assert!(j[k].as_object().unwrap().values().all(Value::is_f64));
    }
    let text = to_json(&odd_run()).unwrap();
    assert!(text.contains("\"latency_us\": {\n        \"2\": 0.0,\n        \"4\": 0.0,"));
    assert_eq!(j["latency_us"]["100"], 50.0);
    assert_eq!(j["latency_us"]["250"], 49.0);
    assert_eq!(j["latency_us"]["1000"], 0.9);
    assert_eq!(j["latency_ms"]["2"], 0.1);
    let total: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| j[*k].as_object().unwrap().values())
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((total - 100.0).abs() < 1e-9, "{total}");
    assert_eq!(j["latency_ms"][">=2000"], 0.0);
    // The bins are the job's, reads and writes together as in fio: a
    // mixed job has them though neither direction has a latency.
    let j = job_named(&doc, "uring randrw 4k Q32T1 70% read");
    assert!(j["read"].get("lat_ns").is_none());
    assert_eq!(j["latency_us"]["100"], 50.0);
    assert_eq!(j["latency_ms"]["2"], 0.1);
    // A bin with requests in it is at least 0.01%, as fio writes it;
    // one request: the whole distribution, no sample deviation.
    let mut m = rep((4096 * 100_000, 100_000), (0, 0), 1_000_000_000);
    m.lat_ns.bins = Some(bins(&[("50us", 99_999), (">=2000ms", 1)]));
    let mut one = rep((4096, 1), (0, 0), 1000);
    one.lat_ns.bins = Some(bins(&[("4ms", 1)]));
    let doc = parsed(&run(vec![
        case("direct", "randread", vec![m]),
        case("direct", "read", vec![one]),
    ]));
    assert_eq!(doc["jobs"][0]["latency_ms"][">=2000"], 0.01);
    assert_eq!(doc["jobs"][0]["latency_us"]["50"], 99.999);
    assert_eq!(doc["jobs"][1]["latency_ms"]["4"], 100.0);
    assert_eq!(doc["jobs"][1]["read"]["lat_ns"]["stddev"], 0.0);
    // Bins with nothing in them say nothing.
    let mut m = rep((4096, 1), (0, 0), 1000);
    m.lat_ns.bins = Some(LatencyBins::default());
    let doc = parsed(&run(vec![case("direct", "randread", vec![m])]));
    assert!(doc["jobs"][0].get("latency_ns").is_none());
    assert_eq!(sample_stddev(f64::NAN, 5), 0.0);
    assert_eq!(sample_stddev(3.0, 0), 3.0);
}

#[test]
fn a_last_interval_cut_short_is_no_sample() {
    let mut m = rep((4096 * 3000, 3000), (0, 0), 200_010_000);
    m.series = Some(Series::from_counts(
        100_000_000,
        10_000,
        &[4096 * 1000, 4096 * 1000, 4096 * 1000],
        &[1000, 1000, 1000],
    ));
    let s = samples(&m, 0).unwrap();
    assert_eq!(
        (s.iops_samples, s.iops_max, s.iops_stddev),
        (2, 10_000, 0.0)
    );
    // Unless it is the whole repetition.
    m.series = Some(Series::from_counts(100_000_000, 10_000, &[4096], &[1]));
    let s = samples(&m, 0).unwrap();
    assert_eq!((s.iops_samples, s.iops_min), (1, 100_000));
    assert_eq!(s.bw_agg, 0.0);
}

#[test]
fn results_iopath_lacks_a_figure_for() {
    let doc = parsed(&odd_run());
    // Schema 2: no request count, standard deviation or bins; no CPU
    // recorded.
    let j = job_named(&doc, "ucache read 4k Q32T1");
    assert!(j["read"]["lat_ns"].get("N").is_none());
    assert_eq!(j["read"]["lat_ns"]["max"], 1_200_000);
    for lat in ["lat_ns", "clat_ns"] {
        assert!(j["read"][lat].get("stddev").is_none(), "{lat}");
        assert!(j["write"][lat].get("stddev").is_none(), "{lat}");
    }
    for k in ["latency_ns", "latency_us", "latency_ms"] {
        assert!(j.get(k).is_none(), "{k}");
    }
    for k in ["usr_cpu", "sys_cpu", "ctx", "majf", "minf"] {
        assert!(j.get(k).is_none(), "{k}");
    }
    // No fio engine does what ucache does.
    assert!(j["job options"].get("ioengine").is_none());
    assert!(j["job options"].get("direct").is_none());
    // A zero duration divides nothing.
    let j = job_named(&doc, "null randread 4k Q32T1");
    assert_eq!(j["read"]["bw_bytes"], 0);
    assert_eq!(j["read"]["iops"], 0.0);
    assert_eq!(j["read"]["runtime"], 0);
    assert_eq!(j["job_runtime"], 0);
    assert_eq!(j["usr_cpu"], 0.0);
    // A latency with nothing behind it is left out, not zero.
    let mut m = rep((4096, 1), (0, 0), 1000);
    m.lat_ns = Latency::default();
    let doc = parsed(&run(vec![case("direct", "randread", vec![m])]));
    assert!(doc["jobs"][0]["read"].get("lat_ns").is_none());
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 1);
}

#[test]
fn job_options_say_what_ran() {
    let doc = parsed(&fixture());
    let o = &job_named(&doc, "uring randread 4k Q32T1")["job options"];
    assert_eq!(o["name"], "uring randread 4k Q32T1");
    assert_eq!(o["rw"], "randread");
    assert_eq!(o["bs"], "4k");
    assert_eq!(o["iodepth"], "32");
    assert_eq!(o["numjobs"], "1");
    assert_eq!(o["ioengine"], "io_uring");
    assert_eq!(o["direct"], "1");
    assert_eq!(o["fixedbufs"], "1");
    assert_eq!(o["registerfiles"], "1");
    assert_eq!(o["invalidate"], "1");
    assert!(o.get("end_fsync").is_none(), "reads sync nothing");
    // A synchronous method at the depth it ran at, not the one asked.
    let o = &job_named(&doc, "buffered randread 4k Q1T1")["job options"];
    assert_eq!(
        (&o["iodepth"], &o["ioengine"], &o["direct"]),
        (&"1".into(), &"psync".into(), &"0".into())
    );
    let o = &job_named(&doc, "aio write 1M Q8T1")["job options"];
    assert_eq!(
        (&o["ioengine"], &o["bs"], &o["end_fsync"]),
        (&"libaio".into(), &"1M".into(), &"1".into())
    );
    assert_eq!(o["lat_percentiles"], "1");
    assert_eq!(doc["global options"]["size"], "32M");
    assert_eq!(doc["global options"]["runtime"], "100ms");
    assert_eq!(
        doc["global options"]["filename"],
        "/tmp/fx5/iopath-15359-956e543a.dat"
    );

    let doc = parsed(&odd_run());
    let o = &job_named(&doc, "uring-sqpoll randwrite 4k Q32T4 span 1 GiB")["job options"];
    assert_eq!(o["sqthread_poll"], "1");
    assert_eq!(o["numjobs"], "4");
    assert_eq!(o["group_reporting"], "1");
    assert_eq!(o["size"], "1G");
    assert_eq!(o["fsync"], "1");
    assert_eq!(o["invalidate"], "0", "the case's own cache state");
    let o = &job_named(&doc, "null randread 4k Q32T1")["job options"];
    assert_eq!(o["ioengine"], "null");
    assert!(o.get("direct").is_none());
    assert_eq!(
        job_named(&doc, "mmap copy 4k Q32T1")["job options"]["ioengine"],
        "mmap"
    );
}

#[test]
fn disks_and_options_from_what_the_run_knows() {
    let mut r = v3();
    assert_eq!(parsed(&r)["disk_util"][0]["name"], "vda");
    r.system.device_stack.as_mut().unwrap().leaves = vec!["nvme0n1".into(), "nvme1n1".into()];
    assert_eq!(parsed(&r)["disk_util"][0]["name"], "nvme0n1+nvme1n1");
    // No counters in any repetition: no disk_util.
    for c in &mut r.cases {
        for m in &mut c.repetitions {
            m.device = None;
        }
    }
    assert!(parsed(&r).get("disk_util").is_none());
    // No target, a whole pass: no global options at all.
    r.target = None;
    r.config.whole_pass = true;
    assert!(parsed(&r).get("global options").is_none());
    assert_eq!(fio_time(2_000_000_000), "2");
    assert_eq!(fio_time(150_000_000), "150ms");
    assert_eq!(fio_time(1_500_400), "1500us");
    assert_eq!(fio_size(4096), "4k");
    assert_eq!(fio_size(1 << 30), "1G");
    assert_eq!(fio_size(3 << 19), "1536k");
    assert_eq!(fio_size(512), "512");
}

#[test]
fn disk_times_fill_fios_disk_util_when_recorded() {
    use crate::system::metrics::blockdev::DiskTime;
    let mut r = v3();
    let mut elapsed_ms = 0;
    for c in &mut r.cases {
        for m in &mut c.repetitions {
            if let Some(d) = &mut m.device {
                let ms = m.duration_ns / 1_000_000;
                elapsed_ms += ms;
                // Busy half the time; one merge and 3 ms per direction.
                d.time = Some(DiskTime {
                    read_merges: 1,
                    write_merges: 1,
                    read_ticks_ms: 3,
                    write_ticks_ms: 3,
                    io_ticks_ms: ms / 2,
                    in_queue_ms: ms,
                });
            }
        }
    }
    let doc = parsed(&r);
    let d = &doc["disk_util"][0];
    let reps = d["read_merges"].as_u64().unwrap();
    assert!(reps > 0);
    assert_eq!(d["read_ticks"].as_u64(), Some(3 * reps));
    assert_eq!(d["in_queue"].as_u64(), Some(elapsed_ms));
    let util = d["util"].as_f64().unwrap();
    assert!((util - 50.0).abs() < 1.0, "busy half the time: {util}");
    // fio writes util as a float and the others as integers.
    let fio: serde_json::Value = serde_json::from_str(include_str!(
        "../../../../tests/fixtures/fio/fio-3.33-randread.json"
    ))
    .unwrap();
    let f = &fio["disk_util"][0];
    assert!(f["util"].is_f64() && f["read_ticks"].is_u64() && f["in_queue"].is_u64());
    // One repetition without the times: none of them.
    r.cases[0].repetitions[0].device.as_mut().unwrap().time = None;
    assert!(parsed(&r)["disk_util"][0].get("util").is_none());
}

#[test]
fn timestamps() {
    assert_eq!(
        parse_rfc3339("2026-11-21T01:57:47Z"),
        Some(1_795_226_267_000)
    );
    assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(
        parse_rfc3339("2000-02-29T00:00:00.25Z"),
        Some(951_782_400_250)
    );
    assert_eq!(
        parse_rfc3339("2026-11-21T02:57:47+01:00"),
        Some(1_795_226_267_000)
    );
    for bad in [
        "",
        "2026-11-21",
        "2026-13-21T01:57:47Z",
        "2026-11-21T01:57:47",
        "2026-11-21T01:57:47.Z",
        "x026-11-21T01:57:47Z",
    ] {
        assert_eq!(parse_rfc3339(bad), None, "{bad}");
    }
    assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
    assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    assert_eq!(ctime(1_700_000_000), "Tue Nov 14 22:13:20 2023");
    // finished_at first, started_at for a run that never finished,
    // nothing from a time that is not one.
    let mut r = run(vec![]);
    r.finished_at = None;
    assert_eq!(parsed(&r)["timestamp"], 1_795_226_262);
    r.started_at = "yesterday".into();
    let doc = parsed(&r);
    for k in ["timestamp", "timestamp_ms", "time"] {
        assert!(doc.get(k).is_none(), "{k}");
    }
}

#[test]
fn extreme_figures_do_not_panic() {
    let mut m = rep((u64::MAX, u64::MAX), (0, 0), 1);
    m.cpu.ctx_vol = u64::MAX;
    m.device = Some(crate::system::metrics::blockdev::DiskCounters {
        reads: u64::MAX,
        ..Default::default()
    });
    let mut r = run(vec![case("direct", "read", vec![m.clone(), m])]);
    r.system.device_stack = None;
    let doc = parsed(&r);
    let d = &doc["jobs"][0]["read"];
    assert_eq!(d["bw_bytes"], u64::MAX);
    assert_eq!(d["runtime"], 1);
    assert_eq!(doc["jobs"][0]["ctx"], u64::MAX);
    // No device stack: the device's own name.
    assert_eq!(doc["disk_util"][0]["name"], "vda");
    assert_eq!(doc["disk_util"][0]["read_ios"], u64::MAX);
}

#[test]
fn render_is_the_same_document() {
    let r = odd_run();
    assert_eq!(render(&r), parsed(&r));
}

/// Issue 31: `uring-batch` is fio's io_uring with batches of a quarter of
/// the depth, submitted and reaped (no engine before: the method is new).
#[test]
fn uring_batch_is_fios_io_uring_with_batches_of_a_quarter_of_the_depth() {
    let reps = vec![rep((4096 * 100, 100), (0, 0), 1_000_000_000)];
    let doc = parsed(&run(vec![case("uring-batch", "randread", reps)]));
    let o = &jobs(&doc)[0]["job options"];
    assert_eq!(
        (&o["ioengine"], &o["direct"]),
        (&"io_uring".into(), &"1".into())
    );
    assert_eq!(o["iodepth"], "32");
    assert_eq!(o["iodepth_batch_submit"], "8");
    assert_eq!(o["iodepth_batch_complete_min"], "8");
    assert_eq!(o["fixedbufs"], "1");
}

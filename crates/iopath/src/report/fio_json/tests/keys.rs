//! The document against fio's own: every key written is at a path fio
//! writes, with fio's JSON type; the keys left out are the ones
//! docs/json-schema.md lists; what fio-plot and common scripts read is
//! there.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::super::latency::PERCENTILES;
use super::*;

const OPTION_MAPS: [&str; 2] = ["global options", "job options"];

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Paths and types in a document, array items as `[]`; option maps'
/// entries go to `options` (name -> types) instead.
#[derive(Default)]
struct Shape {
    paths: BTreeMap<String, BTreeSet<&'static str>>,
    options: BTreeMap<String, BTreeSet<&'static str>>,
}

impl Shape {
    fn of(docs: &[Value]) -> Shape {
        let mut s = Shape::default();
        for d in docs {
            s.walk(d, String::new());
        }
        s
    }

    fn walk(&mut self, v: &Value, path: String) {
        self.paths.entry(path.clone()).or_default().insert(kind(v));
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if OPTION_MAPS.contains(&k.as_str()) {
                        let p = format!("{path}/{k}");
                        self.paths.entry(p).or_default().insert(kind(x));
                        for (name, val) in x.as_object().into_iter().flatten() {
                            self.options
                                .entry(name.clone())
                                .or_default()
                                .insert(kind(val));
                        }
                    } else {
                        self.walk(x, format!("{path}/{k}"));
                    }
                }
            }
            Value::Array(a) => {
                for x in a {
                    self.walk(x, format!("{path}/[]"));
                }
            }
            _ => {}
        }
    }
}

fn fio_shape() -> Shape {
    Shape::of(
        &FIO.iter()
            .map(|t| serde_json::from_str(t).unwrap())
            .collect::<Vec<Value>>(),
    )
}

/// Options fio 3.33 writes back in `job options` as strings that the
/// fixtures' jobs did not set (checked with fio 3.33: `fio --name=x
/// --ioengine=pvsync2 --uncached=1 --fadvise_hint=0 --output-format=json`
/// and `--ioengine=mmap --thp=1 --fadvise_hint=random`).
const FIO_OPTIONS_NOT_IN_FIXTURES: [&str; 3] = ["fadvise_hint", "uncached", "thp"];

/// Every key written is at a path fio writes, with fio's JSON type;
/// every option is one fio wrote, as a string.
#[test]
fn keys_and_types_are_fios() {
    let fio = fio_shape();
    let ours = Shape::of(&[parsed(&fixture()), parsed(&v3()), parsed(&odd_run())]);
    // Not vacuous: the deep paths are there.
    for p in [
        "/jobs/[]/read/clat_ns/percentile/99.000000",
        "/jobs/[]/write/lat_ns/N",
        "/jobs/[]/read/iops_stddev",
        "/jobs/[]/read/lat_ns/stddev",
        "/jobs/[]/write/clat_ns/stddev",
        "/jobs/[]/trim/lat_ns/stddev",
        "/jobs/[]/latency_ns/2",
        "/jobs/[]/latency_us/250",
        "/jobs/[]/latency_ms/>=2000",
        "/jobs/[]/usr_cpu",
        "/disk_util/[]/read_ios",
    ] {
        assert!(ours.paths.contains_key(p), "{p} not written");
    }
    for (path, types) in &ours.paths {
        let want = fio
            .paths
            .get(path)
            .unwrap_or_else(|| panic!("{path}: fio has no such key"));
        assert_eq!(types, want, "{path}: ours {types:?}, fio's {want:?}");
    }
    for (name, types) in &ours.options {
        assert!(
            fio.options.contains_key(name) || FIO_OPTIONS_NOT_IN_FIXTURES.contains(&name.as_str()),
            "option {name}: fio wrote no such option"
        );
        assert_eq!(
            types,
            &BTreeSet::from(["string"]),
            "option {name}: {types:?}"
        );
    }
    // fio's own option values are all strings too.
    for (name, types) in &fio.options {
        assert_eq!(types, &BTreeSet::from(["string"]), "fio's {name}");
    }
}

/// What fio keys are not written, by path (directions as `<dir>`,
/// percentiles apart): the list docs/json-schema.md gives.
const LEFT_OUT: &[&str] = &[
    "/disk_util/[]/in_queue",
    "/disk_util/[]/read_merges",
    "/disk_util/[]/read_ticks",
    "/disk_util/[]/util",
    "/disk_util/[]/write_merges",
    "/disk_util/[]/write_ticks",
    "/jobs/[]/<dir>/drop_ios",
    "/jobs/[]/<dir>/short_ios",
    "/jobs/[]/<dir>/slat_ns",
    "/jobs/[]/elapsed",
    "/jobs/[]/eta",
    "/jobs/[]/iodepth_complete",
    "/jobs/[]/iodepth_level",
    "/jobs/[]/iodepth_submit",
    "/jobs/[]/latency_depth",
    "/jobs/[]/latency_percentile",
    "/jobs/[]/latency_target",
    "/jobs/[]/latency_window",
    "/jobs/[]/sync",
];

fn normalized(paths: &BTreeMap<String, BTreeSet<&'static str>>) -> BTreeSet<String> {
    paths
        .keys()
        .map(|p| {
            p.replace("/read/", "/<dir>/")
                .replace("/write/", "/<dir>/")
                .replace("/trim/", "/<dir>/")
        })
        .map(|p| match p.as_str() {
            "/jobs/[]/read" | "/jobs/[]/write" | "/jobs/[]/trim" => "/jobs/[]/<dir>".into(),
            _ => p,
        })
        .collect()
}

#[test]
fn left_out_keys_are_the_documented_ones() {
    let fio = normalized(&fio_shape().paths);
    let ours =
        normalized(&Shape::of(&[parsed(&fixture()), parsed(&v3()), parsed(&odd_run())]).paths);
    // The topmost paths fio has and we do not, percentiles apart.
    let missing: Vec<&str> = fio
        .iter()
        .filter(|p| !ours.contains(*p) && !p.contains("/percentile/"))
        .filter(|p| {
            let parent = &p[..p.rfind('/').unwrap()];
            ours.contains(parent)
        })
        .map(String::as_str)
        .collect();
    assert_eq!(missing, LEFT_OUT);
    // And the docs name every one of them.
    let doc = include_str!("../../../../../../docs/json-schema.md");
    let section = &doc[doc
        .find("## fio-compatible JSON")
        .expect("docs/json-schema.md has the fio section")..];
    for p in LEFT_OUT {
        let name = p.rsplit('/').next().unwrap();
        assert!(section.contains(&format!("`{name}`")), "docs: `{name}`");
    }
    // The percentiles written are among fio's default ones.
    let fio_pct: BTreeSet<&str> = fio
        .iter()
        .filter_map(|p| p.strip_prefix("/jobs/[]/<dir>/clat_ns/percentile/"))
        .collect();
    for (k, _) in PERCENTILES {
        assert!(fio_pct.contains(k), "{k}");
    }
}

/// The paths fio-plot (fio_plot/fiolib/jsonparsing_support.py,
/// get_json_mapping) and common scripts read, with fio's types.
#[test]
fn what_fio_plot_and_scripts_read() {
    let doc = parsed(&fixture());
    assert!(doc["fio version"].as_str().unwrap().starts_with("iopath-"));
    assert_eq!(doc["timestamp"], 1_795_226_267);
    assert_eq!(doc["time"], "Sat Nov 21 01:57:47 2026");
    assert_eq!(jobs(&doc).len(), 15, "18 cases, 3 skipped");
    for (i, j) in jobs(&doc).iter().enumerate() {
        let name = j["jobname"].as_str().unwrap();
        assert_eq!(j["groupid"], i as u64, "{name}");
        assert_eq!(j["error"], 0);
        let o = &j["job options"];
        for k in ["rw", "bs", "iodepth", "numjobs", "ioengine", "direct"] {
            assert!(o[k].is_string(), "{name}: job options.{k}");
        }
        o["iodepth"].as_str().unwrap().parse::<u32>().unwrap();
        o["numjobs"].as_str().unwrap().parse::<u32>().unwrap();
        // fio-plot's mode: the direction the pattern moves data in.
        let rw = o["rw"].as_str().unwrap();
        let (mode, other) = match rw {
            "read" | "randread" => ("read", "write"),
            "write" | "randwrite" => ("write", "read"),
            _ => panic!("{name}: rw {rw}"),
        };
        let d = &j[mode];
        assert!(d["bw"].is_u64() && d["bw"].as_u64().unwrap() > 0, "{name}");
        assert!(d["bw_bytes"].is_u64() && d["io_bytes"].is_u64());
        assert!(d["iops"].is_f64() && d["iops"].as_f64().unwrap() > 0.0);
        assert!(d["iops_stddev"].is_f64(), "{name}");
        assert!(d["runtime"].is_u64() && d["total_ios"].is_u64());
        for lat in ["lat_ns", "clat_ns"] {
            assert!(d[lat]["mean"].is_f64(), "{name}: {lat}.mean");
            assert!(d[lat]["min"].is_u64() && d[lat]["max"].is_u64());
            assert!(d[lat]["percentile"]["99.000000"].is_u64(), "{name}");
            assert!(d[lat]["percentile"]["50.000000"].is_u64(), "{name}");
        }
        assert_eq!(j[other]["io_bytes"], 0, "{name}");
        assert_eq!(j[other]["lat_ns"]["N"], 0, "{name}");
        assert_eq!(j["trim"]["total_ios"], 0);
        assert!(j["usr_cpu"].is_f64() && j["sys_cpu"].is_f64(), "{name}");
        assert!(j["ctx"].is_u64());
    }
    let disks = doc["disk_util"].as_array().unwrap();
    assert_eq!(disks.len(), 1);
    assert_eq!(disks[0]["name"], "vda");
    // Every repetition's counters, warm-ups included (75 of them).
    assert_eq!(disks[0]["read_ios"], 261_575);
    assert_eq!(disks[0]["write_ios"], 695);
    // Not recorded by iopath (docs): absent, not zero.
    assert!(disks[0].get("util").is_none());
    // Not recorded by the iopath that wrote this result: absent too.
    assert!(jobs(&doc)[0]["read"]["lat_ns"].get("stddev").is_none());
    assert!(jobs(&doc)[0].get("latency_us").is_none());
}

/// What fio-plot 1.1.21 reads of every job it draws
/// (fio_plot/fiolib/jsonparsing_support.py, get_json_mapping), for the
/// direction the pattern moves data in, with fio's types.
#[test]
fn fio_plot_finds_every_key_it_reads() {
    let doc = parsed(&odd_run());
    let mut drawn = 0;
    for j in jobs(&doc) {
        let name = j["jobname"].as_str().unwrap();
        let o = &j["job options"];
        let mode = match o["rw"].as_str().unwrap() {
            "read" | "randread" => "read",
            "write" | "randwrite" => "write",
            // randrw: neither direction has a latency (docs); copy: no
            // fio pattern.
            _ => continue,
        };
        if name.starts_with("ucache") {
            continue; // recorded before stddev and bins
        }
        for k in ["iodepth", "numjobs", "bs", "rw"] {
            assert!(o[k].is_string(), "{name}: {k}");
        }
        let d = &j[mode];
        assert!(d["bw"].is_u64(), "{name}");
        assert!(d["iops"].is_f64(), "{name}");
        assert!(d["lat_ns"]["mean"].is_f64(), "{name}");
        assert!(d["lat_ns"]["stddev"].is_f64(), "{name}");
        for k in ["latency_ms", "latency_us", "latency_ns"] {
            assert!(j[k].is_object(), "{name}: {k}");
        }
        assert!(j["usr_cpu"].is_f64() && j["sys_cpu"].is_f64(), "{name}");
        drawn += 1;
    }
    assert_eq!(drawn, 3, "direct and null randread, uring-sqpoll randwrite");
}

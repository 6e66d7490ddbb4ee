//! The typed options: values, aliases, ranges, inheritance and groups.

use std::time::Duration;

use super::*;
use crate::import::fio::{
    BadValue, Choices, FioJob, NodeSet, NumaMemPolicy, PerDir, RwKind, RwModifier, Size, SyncMode,
    ValueError,
};

fn job(body: &str) -> FioJob {
    ok(&format!("[j]\n{body}\n")).jobs.remove(0)
}

fn bad(body: &str) -> FioError {
    err(&format!("[j]\n{body}\n"))
}

/// What is wrong with the value of the one option in `body`.
fn why(body: &str) -> BadValue {
    let e = bad(body);
    match e.bad_value() {
        Some(b) => b.clone(),
        None => panic!("{body}: not a bad value: {e}"),
    }
}

/// The number in `body` that fio would misread.
fn number(body: &str) -> ValueError {
    match why(body) {
        BadValue::Number(n) => n,
        other => panic!("{body}: not a number's problem: {other:?}"),
    }
}

fn out_of_range(value: u64, min: u64, max: u64) -> BadValue {
    BadValue::OutOfRange { value, min, max }
}

#[test]
fn rw_kinds_aliases_and_modifiers() {
    for (kind, name) in RwKind::ALL {
        assert_eq!(job(&format!("rw={name}")).rw.unwrap().value.kind, kind);
        assert_eq!(kind.fio_name(), name);
    }
    let r = job("readwrite=readwrite").rw.unwrap();
    assert_eq!(
        (r.value.kind, r.key.as_str()),
        (RwKind::ReadWrite, "readwrite")
    );
    let m = |v: &str| job(&format!("rw={v}")).rw.unwrap().value.modifier;
    assert_eq!(m("write:4k"), Some(RwModifier::SeqOffset(4096)));
    assert_eq!(m("read: 8k"), Some(RwModifier::SeqOffset(8192)));
    assert_eq!(m("read:-4k"), Some(RwModifier::SeqOffset(-4096)));
    assert_eq!(m("randread:8"), Some(RwModifier::RandomRun(8)));
    assert_eq!(m("randrw"), None);
    for run in ["0", "x"] {
        assert_eq!(
            why(&format!("rw=randread:{run}")),
            BadValue::NotRandomRun { text: run.into() }
        );
    }
    assert_eq!(why("rw=write:"), BadValue::NothingAfterColon);
    assert_eq!(
        number("rw=write:4q"),
        ValueError::UnknownSizeUnit { unit: "q".into() }
    );
    assert_eq!(
        why("rw=randomread"),
        BadValue::UnknownPattern {
            name: "randomread".into()
        }
    );
    assert_eq!(
        why("rw=Read"),
        BadValue::UnknownPattern {
            name: "Read".into()
        },
        "fio's names are case-sensitive"
    );
}

#[test]
fn block_sizes_per_direction() {
    let bs = |v: &str| job(v).bs.unwrap().value;
    fn all<T: Copy>(n: T) -> PerDir<T> {
        PerDir {
            read: n,
            write: n,
            trim: n,
        }
    }
    assert_eq!(bs("bs=4k"), all(4096));
    assert_eq!(bs("blocksize=4k,"), all(4096));
    assert_eq!(
        bs("bs=4k,8k"),
        PerDir {
            read: 4096,
            write: 8192,
            trim: 8192
        }
    );
    assert_eq!(
        bs("bs=4k,8k,16k"),
        PerDir {
            read: 4096,
            write: 8192,
            trim: 16384
        }
    );
    assert_eq!(
        bs("bs=,8k"),
        PerDir {
            read: 4096,
            write: 8192,
            trim: 8192
        }
    );
    assert_eq!(
        bs("bs=2k\nbs=,8k"),
        PerDir {
            read: 2048,
            write: 8192,
            trim: 8192
        }
    );
    assert_eq!(
        bs("bs=2k\nbs=4k,,8k"),
        PerDir {
            read: 4096,
            write: 2048,
            trim: 8192
        }
    );
    assert_eq!(why("bs=4k-8k"), BadValue::BlockSizeSplit);
    assert_eq!(why("bs=4k:8k"), BadValue::BlockSizeSplit);
    assert_eq!(why("bs=0"), BadValue::ZeroBlockSize);
    assert_eq!(why("bs=1k,2k,3k,4k"), BadValue::TooManyParts);
    let r = |v: &str| job(v).bsrange.unwrap().value;
    assert_eq!(r("bsrange=4k-8k"), all((4096, 8192)));
    assert_eq!(r("blocksize_range=8k:4k"), all((4096, 8192)));
    assert_eq!(
        r("bsrange=1k-4k,8k-16k"),
        PerDir {
            read: (1024, 4096),
            write: (8192, 16384),
            trim: (8192, 16384)
        }
    );
    assert_eq!(why("bsrange=4k"), BadValue::NotRange { part: "4k".into() });
    assert_eq!(why("bsrange=,4k-8k"), BadValue::EmptyRangePart);
}

#[test]
fn counts_and_their_ranges() {
    assert_eq!(job("iodepth=32").iodepth.unwrap().value, 32);
    assert_eq!(
        job("iodepth=1k").iodepth.unwrap().value,
        1024,
        "fio reads units in counts"
    );
    assert_eq!(job("iodepth=4294967295").iodepth.unwrap().value, u32::MAX);
    let most = u64::from(u32::MAX);
    assert_eq!(
        why("iodepth=4294967296"),
        out_of_range(4_294_967_296, 1, most)
    );
    assert_eq!(why("iodepth=0"), out_of_range(0, 1, most));
    assert_eq!(number("iodepth=4,8"), ValueError::Split { at: ',' });
    assert_eq!(number("iodepth=-1"), ValueError::Split { at: '-' });
    assert_eq!(why("numjobs=0"), BadValue::NumjobsZero);
    assert_eq!(job("numjobs=4").numjobs.unwrap().value, 4);
    assert_eq!(job("fsync=0").fsync.unwrap().value, 0);
    assert_eq!(job("fdatasync=32").fdatasync.unwrap().value, 32);
    assert_eq!(
        job("buffer_compress_percentage=100")
            .buffer_compress_percentage
            .unwrap()
            .value,
        100
    );
    assert_eq!(
        why("buffer_compress_percentage=101"),
        out_of_range(101, 0, 100)
    );
}

#[test]
fn sizes_and_percentages() {
    assert_eq!(job("size=10%").size.unwrap().value, Size::Percent(10));
    assert_eq!(job("size=0").size.unwrap().value, Size::Bytes(0));
    assert_eq!(why("size=0%"), BadValue::PercentOutOfRange { percent: 0 });
    assert_eq!(
        why("size=101%"),
        BadValue::PercentOutOfRange { percent: 101 }
    );
    assert_eq!(number("size=1g-2g"), ValueError::Split { at: '-' });
    let io = job("io_limit=50%").io_size.unwrap();
    assert_eq!((io.value, io.key.as_str()), (Size::Percent(50), "io_limit"));
    assert_eq!(
        job("io_size=2g").io_size.unwrap().value,
        Size::Bytes(2 << 30)
    );
    assert_eq!(
        job("filesize=1m").filesize.unwrap().value,
        (1 << 20, 1 << 20)
    );
    assert_eq!(
        job("filesize=1m-2m").filesize.unwrap().value,
        (1 << 20, 2 << 20)
    );
    assert_eq!(
        job("filesize=1m:2m").filesize.unwrap().value,
        (1 << 20, 2 << 20)
    );
    assert_eq!(why("filesize=2m-1m"), BadValue::Backwards);
    assert_eq!(number("filesize=10%"), ValueError::PercentNotAccepted);
    assert_eq!(job("randseed=1234").randseed.unwrap().value, 1234);
}

#[test]
fn times() {
    let t = |v: &str| job(v).runtime.unwrap().value;
    assert_eq!(t("runtime=60"), Duration::from_secs(60));
    assert_eq!(t("timeout=2m"), Duration::from_secs(120));
    assert_eq!(t("runtime=1500ms"), Duration::from_millis(1500));
    assert_eq!(
        job("ramp_time=250us").ramp_time.unwrap().value,
        Duration::from_micros(250)
    );
    assert_eq!(
        number("runtime=10sec"),
        ValueError::TimeInMicroseconds {
            word: "10sec".into(),
            value: 10,
            unit: "s".into()
        }
    );
    assert_eq!(
        number("runtime=1.5"),
        ValueError::Fraction { word: "1.5".into() }
    );
}

#[test]
fn direct_and_buffered_are_one_setting() {
    let d = job("buffered=0").direct.unwrap();
    assert!(d.value);
    assert_eq!(d.key, "buffered");
    assert!(!job("direct=1\nbuffered=1").direct.unwrap().value);
    assert!(job("buffered=1\ndirect=1").direct.unwrap().value);
    for v in ["2", "true"] {
        assert_eq!(
            number(&format!("direct={v}")),
            ValueError::NotBoolean { text: v.into() }
        );
    }
}

#[test]
fn mixes() {
    assert_eq!(job("rwmixread=70").rwmixread.unwrap().value, 70);
    let w = job("rwmixwrite=30").rwmixread.unwrap();
    assert_eq!((w.value, w.key.as_str()), (70, "rwmixwrite"));
    assert_eq!(
        job("rwmixread=10\nrwmixwrite=30").rwmixread.unwrap().value,
        70
    );
    assert_eq!(why("rwmixread=101"), out_of_range(101, 0, 100));
}

#[test]
fn file_names() {
    assert_eq!(job("filename=a:b").filename.unwrap().value, ["a", "b"]);
    assert_eq!(
        job(r"filename=c\:x:y").filename.unwrap().value,
        ["c:x", "y"]
    );
    assert_eq!(
        job("directory=/d1:/d2").directory.unwrap().value,
        ["/d1", "/d2"]
    );
    assert_eq!(job("filename=a::b:").filename.unwrap().value, ["a", "b"]);
    assert_eq!(why("filename=:"), BadValue::NoName);
}

#[test]
fn engines_and_their_options() {
    assert_eq!(
        job("ioengine=external:/x.so").ioengine.unwrap().value,
        "external:/x.so"
    );
    let j = job("fixedbufs\nsqthread_poll=1\nregisterfiles=0\nioengine=io_uring");
    assert!(
        j.fixedbufs.unwrap().value,
        "engine options may come before ioengine"
    );
    assert!(j.sqthread_poll.unwrap().value);
    assert!(!j.registerfiles.unwrap().value);
    assert!(job("ioengine=pvsync2\nhipri").hipri.unwrap().value);
    let e = bad("ioengine=libaio\nfixedbufs");
    assert_eq!(e.key.as_deref(), Some("fixedbufs"));
    assert_eq!(
        e.bad_value(),
        Some(&BadValue::WrongEngine {
            key: "fixedbufs".into(),
            engines: &["io_uring", "io_uring_cmd"],
            engine: "libaio".into()
        })
    );
    assert!(
        matches!(why("hipri"), BadValue::WrongEngine { engine, .. } if engine == "psync"),
        "no ioengine: fio's default, psync"
    );
    // Inherited: kept where a job switches engine (fio ignores it there).
    let f = ok("[global]\nioengine=io_uring\nfixedbufs\n[j]\nioengine=libaio\n");
    assert!(f.jobs[0].fixedbufs.as_ref().unwrap().value);
}

#[test]
fn enumerations() {
    assert_eq!(job("sync=0").sync.unwrap().value, SyncMode::None);
    assert_eq!(job("sync=1").sync.unwrap().value, SyncMode::Sync);
    assert_eq!(job("sync=dsync").sync.unwrap().value, SyncMode::Dsync);
    let one_of = |choices| BadValue::NotOneOf { choices };
    assert_eq!(why("sync=2"), one_of(Choices::Sync));
    assert_eq!(job("verify=crc32c").verify.unwrap().value, "crc32c");
    assert!(matches!(
        why("verify=crc33"),
        BadValue::NotOneOf {
            choices: Choices::Verify(methods)
        } if methods.contains(&"crc32c")
    ));
    assert_eq!(why("kb_base=1001"), one_of(Choices::KbBase));
    assert_eq!(why("ioengine=a b"), BadValue::NotEngineName);
}

#[test]
fn cpus_and_numa() {
    assert_eq!(
        job("cpus_allowed=0-2,5").cpus_allowed.unwrap().value,
        [0, 1, 2, 5]
    );
    assert!(matches!(why("cpus_allowed=3-1"), BadValue::CpuList(_)));
    assert_eq!(
        job("numa_cpu_nodes=all").numa_cpu_nodes.unwrap().value,
        NodeSet::All
    );
    assert_eq!(
        job("numa_cpu_nodes=0,1").numa_cpu_nodes.unwrap().value,
        NodeSet::List(vec![0, 1])
    );
    let p = |v: &str| {
        job(&format!("numa_mem_policy={v}"))
            .numa_mem_policy
            .unwrap()
            .value
    };
    assert_eq!(p("local"), NumaMemPolicy::Local);
    assert_eq!(p("default"), NumaMemPolicy::Default);
    assert_eq!(p("prefer:1"), NumaMemPolicy::Prefer(1));
    assert_eq!(
        p("bind:0-1"),
        NumaMemPolicy::Bind(NodeSet::List(vec![0, 1]))
    );
    assert_eq!(p("interleave:all"), NumaMemPolicy::Interleave(NodeSet::All));
    let policy = |v: &str| why(&format!("numa_mem_policy={v}"));
    assert_eq!(policy("prefer:0-1"), BadValue::PreferOneNode);
    assert_eq!(
        policy("bind"),
        BadValue::NeedsNodes {
            mode: "bind".into()
        }
    );
    assert_eq!(
        policy("local:0"),
        BadValue::NoNodeList {
            mode: "local".into()
        }
    );
    assert_eq!(
        policy("spread"),
        BadValue::NotOneOf {
            choices: Choices::MemPolicy
        }
    );
}

#[test]
fn unknown_options_are_kept_in_order_with_their_place() {
    let f = ok("[global]\nthread\nnrfiles=2\n[j]\nlat_percentiles=1\n");
    let u: Vec<(&str, Option<&str>, u32)> = f.jobs[0]
        .unknown
        .iter()
        .map(|u| (u.key.as_str(), u.value.as_deref(), u.at.line))
        .collect();
    assert_eq!(
        u,
        [
            ("thread", None, 2),
            ("nrfiles", Some("2"), 3),
            ("lat_percentiles", Some("1"), 5)
        ]
    );
    assert!(f.jobs[0].unknown[0].at.file.ends_with("job.fio"));
}

#[test]
fn groups_follow_stonewalls() {
    let groups = |t: &str| ok(t).groups();
    assert_eq!(groups("[a]\n[b]\n[c]\n"), vec![vec![0, 1, 2]]);
    assert_eq!(
        groups("[a]\nstonewall\n[b]\n[c]\nstonewall\n[d]\n"),
        vec![vec![0, 1], vec![2, 3]]
    );
    assert_eq!(
        groups("[global]\nstonewall\n[a]\n[b]\n[c]\n"),
        vec![vec![0], vec![1], vec![2]]
    );
    assert_eq!(
        groups("[global]\nstonewall\n[a]\n[b]\nstonewall=0\n[c]\n"),
        vec![vec![0, 1], vec![2]]
    );
    assert_eq!(
        groups("[a]\nnew_group\n[b]\nnew_group\nnumjobs=3\n"),
        vec![vec![0, 1]]
    );
    assert_eq!(groups("[global]\nbs=4k\n"), Vec::<Vec<usize>>::new());
}

//! The typed job: the options iopath reads from a fio job, after `[global]`
//! inheritance, each with where it was set. `None` means the job does not
//! set the option, and fio's default (given on each field) applies.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::Location;
use crate::model::units::fmt_bytes;
use crate::system::topology::format_cpulist;

/// A value and where it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given<T> {
    pub value: T,
    /// The option as written there (an alias such as `readwrite`, or the
    /// option that set this one: `buffered` for [`FioJob::direct`],
    /// `rwmixwrite` for [`FioJob::rwmixread`]).
    pub key: String,
    /// The value as written (after `${VAR}` and keyword expansion); `None`
    /// for a bare flag.
    pub text: Option<String>,
    pub at: Location,
}

/// The I/O pattern of `rw=` (alias `readwrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwKind {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    /// `rw` or `readwrite`: sequential mix of reads and writes.
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

impl RwKind {
    /// Every kind with fio's name for it (`rw` for [`RwKind::ReadWrite`],
    /// which fio also calls `readwrite`).
    pub const ALL: [(RwKind, &'static str); 10] = [
        (RwKind::Read, "read"),
        (RwKind::Write, "write"),
        (RwKind::Trim, "trim"),
        (RwKind::RandRead, "randread"),
        (RwKind::RandWrite, "randwrite"),
        (RwKind::RandTrim, "randtrim"),
        (RwKind::ReadWrite, "rw"),
        (RwKind::RandRw, "randrw"),
        (RwKind::TrimWrite, "trimwrite"),
        (RwKind::RandTrimWrite, "randtrimwrite"),
    ];

    /// fio's name for it.
    pub fn fio_name(self) -> &'static str {
        RwKind::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("read", |(_, n)| n)
    }

    /// Random offsets (`rand*`).
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwKind::RandRead
                | RwKind::RandWrite
                | RwKind::RandTrim
                | RwKind::RandRw
                | RwKind::RandTrimWrite
        )
    }

    /// Involves trims (which iopath does not do).
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwKind::Trim | RwKind::RandTrim | RwKind::TrimWrite | RwKind::RandTrimWrite
        )
    }
}

/// What follows `:` in `rw=` (fio: `rw=write:4k`, `rw=randread:8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwModifier {
    /// Sequential kinds: bytes added to the offset after every I/O (a hole
    /// between I/Os; negative goes backwards).
    SeqOffset(i64),
    /// Random kinds: I/Os issued before a new random offset is drawn.
    RandomRun(u32),
}

/// `rw=`: the pattern and its modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rw {
    pub kind: RwKind,
    pub modifier: Option<RwModifier>,
}

/// One value per I/O direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerDir<T> {
    pub read: T,
    pub write: T,
    pub trim: T,
}

impl<T: Copy> PerDir<T> {
    /// The same for reads, writes and trims.
    pub fn all(value: T) -> PerDir<T> {
        PerDir {
            read: value,
            write: value,
            trim: value,
        }
    }
}

/// `bs=`: block size per direction in bytes.
pub type BlockSizes = PerDir<u64>;

/// `size=`, `io_size=`: bytes, or a percentage of the file or device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    Bytes(u64),
    /// 1 to 100.
    Percent(u8),
}

/// `sync=`: how writes are opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// `none` or `0` (fio's default).
    None,
    /// `sync` or `1`: O_SYNC.
    Sync,
    /// `dsync`: O_DSYNC.
    Dsync,
}

/// NUMA nodes: `all` or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeSet {
    All,
    List(Vec<u32>),
}

/// `numa_mem_policy=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumaMemPolicy {
    Default,
    Local,
    Prefer(u32),
    Bind(NodeSet),
    Interleave(NodeSet),
}

/// An option without a typed field, kept as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub key: String,
    /// `None` for a bare flag.
    pub value: Option<String>,
    pub at: Location,
}

/// One job section with its effective options (its own over those of the
/// `[global]` sections before it). Defaults in the field docs are fio's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FioJob {
    /// The section's name, or the job's `name=`.
    pub name: String,
    /// The section header.
    pub section: Location,
    /// `description`: free text.
    pub description: Option<Given<String>>,
    /// `rw`/`readwrite`; default `read`.
    pub rw: Option<Given<Rw>>,
    /// `bs`/`blocksize` (`R[,W[,T]]`; an empty part keeps the value before);
    /// default 4096 each.
    pub bs: Option<Given<BlockSizes>>,
    /// `bsrange`/`blocksize_range`: (low, high) per direction; fio prefers
    /// it to `bs`.
    pub bsrange: Option<Given<PerDir<(u64, u64)>>>,
    /// `iodepth`; default 1.
    pub iodepth: Option<Given<u32>>,
    /// `numjobs`: identical processes of this job, run together; default 1.
    pub numjobs: Option<Given<u32>>,
    /// `size`: total I/O region of the job's files; default the files'
    /// sizes.
    pub size: Option<Given<Size>>,
    /// `filesize`: (low, high) size of each file.
    pub filesize: Option<Given<(u64, u64)>>,
    /// `io_size`/`io_limit`: bytes of I/O to do; default `size`.
    pub io_size: Option<Given<Size>>,
    /// `runtime`/`timeout`; default none (run until `size` is done).
    pub runtime: Option<Given<Duration>>,
    /// `time_based`: repeat the workload until `runtime`; default false.
    pub time_based: Option<Given<bool>>,
    /// `ramp_time`: run this long before measuring; default 0.
    pub ramp_time: Option<Given<Duration>>,
    /// `direct=1`, or `buffered=0` (`key` says which); default false.
    pub direct: Option<Given<bool>>,
    /// `ioengine` as written (`libaio`, `io_uring`, `external:/x.so`, ...);
    /// default `psync`.
    pub ioengine: Option<Given<String>>,
    /// io_uring's `fixedbufs`. This and the next three are options of their
    /// engine: a section that sets one must use that engine (fio refuses it
    /// otherwise), but a value inherited from `[global]` stays here when a
    /// job picks another engine, where fio ignores it.
    pub fixedbufs: Option<Given<bool>>,
    /// io_uring's `registerfiles`.
    pub registerfiles: Option<Given<bool>>,
    /// io_uring's `sqthread_poll`.
    pub sqthread_poll: Option<Given<bool>>,
    /// `hipri`: polled completions (io_uring, io_uring_cmd, pvsync2).
    pub hipri: Option<Given<bool>>,
    /// `rwmixread`, or 100 - `rwmixwrite` (`key` says which); default 50.
    pub rwmixread: Option<Given<u8>>,
    /// `filename`: `:`-separated (`\:` is a colon in a name).
    pub filename: Option<Given<Vec<String>>>,
    /// `directory`: `:`-separated.
    pub directory: Option<Given<Vec<String>>>,
    /// `fsync`: fsync every N writes; default 0 (never).
    pub fsync: Option<Given<u32>>,
    /// `fdatasync`: fdatasync every N writes; default 0.
    pub fdatasync: Option<Given<u32>>,
    /// `end_fsync`; default false.
    pub end_fsync: Option<Given<bool>>,
    /// `fsync_on_close`; default false.
    pub fsync_on_close: Option<Given<bool>>,
    /// `sync`; default none.
    pub sync: Option<Given<SyncMode>>,
    /// `invalidate`: drop the file's page cache first; default true.
    pub invalidate: Option<Given<bool>>,
    /// `randrepeat`: same random sequence every run; default true.
    pub randrepeat: Option<Given<bool>>,
    /// `randseed`.
    pub randseed: Option<Given<u64>>,
    /// `cpus_allowed`: CPU numbers.
    pub cpus_allowed: Option<Given<Vec<u32>>>,
    /// `numa_cpu_nodes`.
    pub numa_cpu_nodes: Option<Given<NodeSet>>,
    /// `numa_mem_policy`.
    pub numa_mem_policy: Option<Given<NumaMemPolicy>>,
    /// `zero_buffers`; default false.
    pub zero_buffers: Option<Given<bool>>,
    /// `refill_buffers`; default false.
    pub refill_buffers: Option<Given<bool>>,
    /// `buffer_compress_percentage`: 0 to 100.
    pub buffer_compress_percentage: Option<Given<u8>>,
    /// `verify`: fio's method name (`0` is none, the default).
    pub verify: Option<Given<String>>,
    /// `stonewall`/`wait_for_previous`: wait for the jobs before this one
    /// (see [`super::FioJobFile::groups`]).
    pub stonewall: Option<Given<bool>>,
    /// `new_group`: start a new reporting group.
    pub new_group: Option<Given<bool>>,
    /// `group_reporting`.
    pub group_reporting: Option<Given<bool>>,
    /// `kb_base`: 1024 (default) or 1000; already applied to every size.
    pub kb_base: Option<Given<u32>>,
    /// Every other option, in the order fio reads them (`[global]`s first).
    pub unknown: Vec<Unknown>,
}

fn yes(b: &bool) -> String {
    if *b { "true" } else { "false" }.to_string()
}

fn byte_count(b: u64) -> String {
    if b >= 1024 {
        format!("{b} ({})", fmt_bytes(b))
    } else {
        b.to_string()
    }
}

fn size(s: &Size) -> String {
    match s {
        Size::Bytes(b) => byte_count(*b),
        Size::Percent(p) => format!("{p}%"),
    }
}

fn per_dir<T: PartialEq>(d: &PerDir<T>, f: impl Fn(&T) -> String) -> String {
    if d.read == d.write && d.write == d.trim {
        f(&d.read)
    } else {
        format!(
            "read {}, write {}, trim {}",
            f(&d.read),
            f(&d.write),
            f(&d.trim)
        )
    }
}

fn duration(d: &Duration) -> String {
    let us = d.as_micros();
    if us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us % 1000 == 0 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

fn rw(r: &Rw) -> String {
    match r.modifier {
        None => r.kind.fio_name().to_string(),
        Some(RwModifier::SeqOffset(b)) => {
            format!("{}, {b:+} bytes after each I/O", r.kind.fio_name())
        }
        Some(RwModifier::RandomRun(n)) => {
            format!("{}, {n} I/Os per random offset", r.kind.fio_name())
        }
    }
}

fn nodes(n: &NodeSet) -> String {
    match n {
        NodeSet::All => "all".into(),
        NodeSet::List(l) => format_cpulist(l),
    }
}

fn policy(p: &NumaMemPolicy) -> String {
    match p {
        NumaMemPolicy::Default => "default".into(),
        NumaMemPolicy::Local => "local".into(),
        NumaMemPolicy::Prefer(n) => format!("prefer node {n}"),
        NumaMemPolicy::Bind(n) => format!("bind to {}", nodes(n)),
        NumaMemPolicy::Interleave(n) => format!("interleave over {}", nodes(n)),
    }
}

fn place(at: &Location, base: &Path) -> String {
    let file = at.file.strip_prefix(base).unwrap_or(&at.file);
    format!("{}:{}", file.display(), at.line)
}

fn line<T>(
    out: &mut String,
    label: &str,
    g: &Option<Given<T>>,
    base: &Path,
    f: impl Fn(&T) -> String,
) {
    if let Some(g) = g {
        let written = match &g.text {
            Some(t) => format!("{}={t}", g.key),
            None => g.key.clone(),
        };
        let _ = writeln!(
            out,
            "    {label:<26} {:<34} {} {written}",
            f(&g.value),
            place(&g.at, base)
        );
    }
}

/// Append one job to a [`super::FioJobFile::dump`].
pub(crate) fn dump_job(out: &mut String, index: usize, j: &FioJob, base: &Path) {
    let _ = writeln!(out, "job {index}: {} [{}]", j.name, place(&j.section, base));
    let d = &mut *out;
    line(d, "description", &j.description, base, |s| format!("{s:?}"));
    line(d, "rw", &j.rw, base, rw);
    line(d, "bs", &j.bs, base, |b| per_dir(b, |v| byte_count(*v)));
    line(d, "bsrange", &j.bsrange, base, |b| {
        per_dir(b, |(lo, hi)| format!("{lo}-{hi}"))
    });
    line(d, "iodepth", &j.iodepth, base, u32::to_string);
    line(d, "numjobs", &j.numjobs, base, u32::to_string);
    line(d, "size", &j.size, base, size);
    line(d, "filesize", &j.filesize, base, |(lo, hi)| {
        if lo == hi {
            byte_count(*lo)
        } else {
            format!("{lo}-{hi}")
        }
    });
    line(d, "io_size", &j.io_size, base, size);
    line(d, "runtime", &j.runtime, base, duration);
    line(d, "time_based", &j.time_based, base, yes);
    line(d, "ramp_time", &j.ramp_time, base, duration);
    line(d, "direct", &j.direct, base, yes);
    line(d, "ioengine", &j.ioengine, base, String::clone);
    line(d, "fixedbufs", &j.fixedbufs, base, yes);
    line(d, "registerfiles", &j.registerfiles, base, yes);
    line(d, "sqthread_poll", &j.sqthread_poll, base, yes);
    line(d, "hipri", &j.hipri, base, yes);
    line(d, "rwmixread", &j.rwmixread, base, |p| format!("{p}%"));
    line(d, "filename", &j.filename, base, |v| format!("{v:?}"));
    line(d, "directory", &j.directory, base, |v| format!("{v:?}"));
    line(d, "fsync", &j.fsync, base, u32::to_string);
    line(d, "fdatasync", &j.fdatasync, base, u32::to_string);
    line(d, "end_fsync", &j.end_fsync, base, yes);
    line(d, "fsync_on_close", &j.fsync_on_close, base, yes);
    line(d, "sync", &j.sync, base, |s| {
        format!("{s:?}").to_lowercase()
    });
    line(d, "invalidate", &j.invalidate, base, yes);
    line(d, "randrepeat", &j.randrepeat, base, yes);
    line(d, "randseed", &j.randseed, base, u64::to_string);
    line(d, "cpus_allowed", &j.cpus_allowed, base, |c| {
        format_cpulist(c)
    });
    line(d, "numa_cpu_nodes", &j.numa_cpu_nodes, base, nodes);
    line(d, "numa_mem_policy", &j.numa_mem_policy, base, policy);
    line(d, "zero_buffers", &j.zero_buffers, base, yes);
    line(d, "refill_buffers", &j.refill_buffers, base, yes);
    line(
        d,
        "buffer_compress_percentage",
        &j.buffer_compress_percentage,
        base,
        |p| format!("{p}%"),
    );
    line(d, "verify", &j.verify, base, String::clone);
    line(d, "stonewall", &j.stonewall, base, yes);
    line(d, "new_group", &j.new_group, base, yes);
    line(d, "group_reporting", &j.group_reporting, base, yes);
    line(d, "kb_base", &j.kb_base, base, u32::to_string);
    for u in &j.unknown {
        let written = match &u.value {
            Some(v) => format!("{}={v}", u.key),
            None => u.key.clone(),
        };
        let _ = writeln!(
            d,
            "    {:<26} {:<34} {}",
            "(not typed)",
            written,
            place(&u.at, base)
        );
    }
}

//! From sections to typed jobs: `[global]` inheritance and the meaning of
//! each typed option, with fio's ranges.

use std::time::Duration;

use super::ini::{Entry, Section};
use super::job::{
    BlockSizes, FioJob, Given, NodeSet, NumaMemPolicy, PerDir, Rw, RwKind, RwModifier, Size,
    SyncMode, Unknown,
};
use super::value::{self, Amount};
use super::{BadValue, Choices, FioError};
use crate::system::topology::parse_cpulist;

/// fio's `verify=` methods (3.33); `0` is none.
const VERIFY: [&str; 19] = [
    "0",
    "md5",
    "crc64",
    "crc32",
    "crc32c-intel",
    "crc32c",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
    "pattern",
    "null",
];

/// The typed option an option name (or alias) is, if any.
pub(crate) fn canonical(key: &str) -> Option<&'static str> {
    Some(match key {
        "name" => "name",
        "description" => "description",
        "rw" | "readwrite" => "rw",
        "bs" | "blocksize" => "bs",
        "bsrange" | "blocksize_range" => "bsrange",
        "iodepth" => "iodepth",
        "numjobs" => "numjobs",
        "size" => "size",
        "filesize" => "filesize",
        "io_size" | "io_limit" => "io_size",
        "runtime" | "timeout" => "runtime",
        "time_based" => "time_based",
        "ramp_time" => "ramp_time",
        "direct" => "direct",
        "buffered" => "buffered",
        "ioengine" => "ioengine",
        "fixedbufs" => "fixedbufs",
        "registerfiles" => "registerfiles",
        "sqthread_poll" => "sqthread_poll",
        "hipri" => "hipri",
        "rwmixread" => "rwmixread",
        "rwmixwrite" => "rwmixwrite",
        "filename" => "filename",
        "directory" => "directory",
        "fsync" => "fsync",
        "fdatasync" => "fdatasync",
        "end_fsync" => "end_fsync",
        "fsync_on_close" => "fsync_on_close",
        "sync" => "sync",
        "invalidate" => "invalidate",
        "randrepeat" => "randrepeat",
        "randseed" => "randseed",
        "cpus_allowed" => "cpus_allowed",
        "numa_cpu_nodes" => "numa_cpu_nodes",
        "numa_mem_policy" => "numa_mem_policy",
        "zero_buffers" => "zero_buffers",
        "refill_buffers" => "refill_buffers",
        "buffer_compress_percentage" => "buffer_compress_percentage",
        "verify" => "verify",
        "stonewall" | "wait_for_previous" => "stonewall",
        "new_group" => "new_group",
        "group_reporting" => "group_reporting",
        "kb_base" => "kb_base",
        _ => return None,
    })
}

/// Options fio takes bare (its "empty or boolean value" options).
const FLAGS: [&str; 10] = [
    "time_based",
    "stonewall",
    "new_group",
    "group_reporting",
    "zero_buffers",
    "refill_buffers",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "hipri",
];

/// Options whose value is one number, which fio reads the same with a
/// blank before it when it is a plain number.
const NUMERIC: [&str; 24] = [
    "iodepth",
    "numjobs",
    "size",
    "filesize",
    "io_size",
    "runtime",
    "ramp_time",
    "direct",
    "buffered",
    "rwmixread",
    "rwmixwrite",
    "fsync",
    "fdatasync",
    "end_fsync",
    "fsync_on_close",
    "invalidate",
    "randrepeat",
    "randseed",
    "buffer_compress_percentage",
    "time_based",
    "stonewall",
    "new_group",
    "group_reporting",
    "zero_buffers",
];

/// Engine options and the engines that have them.
fn engines_of(canon: &str) -> Option<&'static [&'static str]> {
    match canon {
        "fixedbufs" | "registerfiles" | "sqthread_poll" => Some(&["io_uring", "io_uring_cmd"]),
        "hipri" => Some(&["io_uring", "io_uring_cmd", "pvsync2"]),
        _ => None,
    }
}

/// Every job section with its effective options, in file order.
pub(crate) fn resolve(sections: &[Section]) -> Result<Vec<FioJob>, FioError> {
    let mut global = FioJob::default();
    let mut jobs = Vec::new();
    for s in sections {
        if s.global {
            apply_section(&mut global, s, true)?;
        } else {
            let mut job = global.clone();
            job.name = s.name.clone();
            job.section = s.at.clone();
            apply_section(&mut job, s, false)?;
            jobs.push(job);
        }
    }
    Ok(jobs)
}

/// A section's options over what `job` has, in fio's order: `kb_base`
/// first (fio sorts it before the rest), engine options last (fio parses
/// them once the engine is known).
fn apply_section(job: &mut FioJob, s: &Section, global: bool) -> Result<(), FioError> {
    let is_kb = |e: &&Entry| e.key == "kb_base";
    let is_engine = |e: &&Entry| canonical(&e.key).and_then(engines_of).is_some();
    for e in s.entries.iter().filter(is_kb) {
        apply_entry(job, e, global)?;
    }
    for e in s.entries.iter().filter(|e| !is_kb(e) && !is_engine(e)) {
        apply_entry(job, e, global)?;
    }
    for e in s.entries.iter().filter(is_engine) {
        let canon = canonical(&e.key).unwrap_or_default();
        let wanted = engines_of(canon).unwrap_or_default();
        let engine = job
            .ioengine
            .as_ref()
            .map_or("psync", |g| engine_name(&g.value));
        if !wanted.contains(&engine) {
            return Err(FioError::option(
                &e.at,
                &e.key,
                e.value.as_deref(),
                BadValue::WrongEngine {
                    key: e.key.clone(),
                    engines: wanted,
                    engine: engine.to_string(),
                },
            ));
        }
        apply_entry(job, e, global)?;
    }
    Ok(())
}

/// The engine's name in `ioengine=` (`external:/x.so` → `external`).
fn engine_name(value: &str) -> &str {
    value.split(':').next().unwrap_or(value)
}

/// Apply one entry to `job` (the caller orders them as fio does).
pub(crate) fn apply_entry(job: &mut FioJob, e: &Entry, global: bool) -> Result<(), FioError> {
    let Some(canon) = canonical(&e.key) else {
        job.unknown.push(Unknown {
            key: e.key.clone(),
            value: e.value.clone(),
            at: e.at.clone(),
        });
        return Ok(());
    };
    let r = Reading {
        e,
        v: value_of(e, canon)?,
        kb: job.kb_base.as_ref().map_or(1024, |g| g.value),
    };
    if apply_workload(job, canon, &r, global)? || apply_setting(job, canon, &r)? {
        return Ok(());
    }
    let b = Some(given(e, r.flag()?));
    match canon {
        "time_based" => job.time_based = b,
        "end_fsync" => job.end_fsync = b,
        "fsync_on_close" => job.fsync_on_close = b,
        "invalidate" => job.invalidate = b,
        "randrepeat" => job.randrepeat = b,
        "fixedbufs" => job.fixedbufs = b,
        "registerfiles" => job.registerfiles = b,
        "sqthread_poll" => job.sqthread_poll = b,
        "hipri" => job.hipri = b,
        "zero_buffers" => job.zero_buffers = b,
        "refill_buffers" => job.refill_buffers = b,
        "stonewall" => job.stonewall = b,
        "new_group" => job.new_group = b,
        _ => job.group_reporting = b,
    }
    Ok(())
}

/// The entry's value as fio would read it: a bare flag is `1`; a bare
/// option that needs a value, an empty value, and blanks after `=` that
/// change the reading are refused.
fn value_of<'e>(e: &'e Entry, canon: &'static str) -> Result<&'e str, FioError> {
    let bad = |p: BadValue| FioError::option(&e.at, &e.key, e.value.as_deref(), p);
    let v = match e.value.as_deref() {
        Some(v) => v,
        None if FLAGS.contains(&canon) => "1",
        None => {
            return Err(bad(BadValue::NeedsValue {
                key: e.key.clone(),
                canon,
            }))
        }
    };
    if e.space_after_eq {
        let plain = value::boolean(v).is_ok()
            || (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            || v.strip_prefix("0x")
                .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()));
        if canon != "description" && !(NUMERIC.contains(&canon) && plain) {
            return Err(bad(BadValue::BlankAfterEq));
        }
    }
    if v.is_empty() {
        return Err(bad(BadValue::Empty));
    }
    Ok(v)
}

/// One entry's value being read, with the errors that name it.
struct Reading<'a> {
    e: &'a Entry,
    v: &'a str,
    /// The section's `kb_base`.
    kb: u32,
}

impl Reading<'_> {
    fn bad(&self, p: impl Into<BadValue>) -> FioError {
        FioError::option(&self.e.at, &self.e.key, self.e.value.as_deref(), p.into())
    }

    /// `f(value)`, its error naming the entry.
    fn read<T, E: Into<BadValue>>(
        &self,
        f: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, FioError> {
        f(self.v).map_err(|p| self.bad(p))
    }

    fn flag(&self) -> Result<bool, FioError> {
        self.read(value::boolean)
    }

    /// One integer (units allowed, as fio reads counts) from `min` to
    /// `max`.
    fn count(&self, min: u64, max: u64) -> Result<u64, FioError> {
        let kb = self.kb;
        let n = self.read(|v| value::single(v).and_then(|v| value::bytes(v, kb)))?;
        if n < min || n > max {
            return Err(self.bad(BadValue::OutOfRange { value: n, min, max }));
        }
        Ok(n)
    }

    fn seconds(&self) -> Result<Duration, FioError> {
        let us = self.read(|v| value::single(v).and_then(value::seconds))?;
        Ok(Duration::from_micros(us))
    }

    /// A size, or a percentage of 1 to 100.
    fn percent_size(&self) -> Result<Size, FioError> {
        let kb = self.kb;
        match self.read(|v| value::single(v).and_then(|v| value::size(v, kb, true)))? {
            Amount::Bytes(b) => Ok(Size::Bytes(b)),
            Amount::Percent(p @ 1..=100) => Ok(Size::Percent(p as u8)),
            Amount::Percent(percent) => Err(self.bad(BadValue::PercentOutOfRange { percent })),
        }
    }
}

/// The options that say what the job does (its name, pattern, sizes,
/// depth, clones, times, mix); false when `canon` is not one.
fn apply_workload(
    job: &mut FioJob,
    canon: &str,
    r: &Reading,
    global: bool,
) -> Result<bool, FioError> {
    let (e, v, kb) = (r.e, r.v, r.kb);
    match canon {
        // fio's own examples (fio-seq-read.fio, ...) say it: no effect.
        "name" if global => {}
        "name" => job.name = v.to_string(),
        "description" => job.description = Some(given(e, v.to_string())),
        "rw" => job.rw = Some(given(e, r.read(|v| rw(v, kb))?)),
        "bs" => {
            let before = job.bs.as_ref().map_or(PerDir::all(4096), |g| g.value);
            job.bs = Some(given(e, r.read(|v| block_sizes(v, kb, before))?));
        }
        "bsrange" => job.bsrange = Some(given(e, r.read(|v| bs_ranges(v, kb))?)),
        "iodepth" => job.iodepth = Some(given(e, r.count(1, u32::MAX.into())? as u32)),
        "numjobs" => {
            let n = r.count(0, u32::MAX.into())?;
            if n == 0 {
                return Err(r.bad(BadValue::NumjobsZero));
            }
            job.numjobs = Some(given(e, n as u32));
        }
        "size" => job.size = Some(given(e, r.percent_size()?)),
        "io_size" => job.io_size = Some(given(e, r.percent_size()?)),
        "filesize" => job.filesize = Some(given(e, r.read(|v| file_sizes(v, kb))?)),
        "runtime" => job.runtime = Some(given(e, r.seconds()?)),
        "ramp_time" => job.ramp_time = Some(given(e, r.seconds()?)),
        "rwmixread" => job.rwmixread = Some(given(e, r.count(0, 100)? as u8)),
        "rwmixwrite" => job.rwmixread = Some(given(e, 100 - r.count(0, 100)? as u8)),
        _ => return Ok(false),
    }
    Ok(true)
}

/// The options that say how and where it runs (engine, files, syncs,
/// seed, placement, data, verification, units); false when `canon` is
/// not one.
fn apply_setting(job: &mut FioJob, canon: &str, r: &Reading) -> Result<bool, FioError> {
    let (e, v, kb) = (r.e, r.v, r.kb);
    let one_of = |choices| r.bad(BadValue::NotOneOf { choices });
    match canon {
        "direct" => job.direct = Some(given(e, r.flag()?)),
        "buffered" => job.direct = Some(given(e, !r.flag()?)),
        "ioengine" => {
            if v.contains(char::is_whitespace) || engine_name(v).is_empty() {
                return Err(r.bad(BadValue::NotEngineName));
            }
            job.ioengine = Some(given(e, v.to_string()));
        }
        "filename" => job.filename = Some(given(e, r.read(names)?)),
        "directory" => job.directory = Some(given(e, r.read(names)?)),
        "fsync" => job.fsync = Some(given(e, r.count(0, u32::MAX.into())? as u32)),
        "fdatasync" => job.fdatasync = Some(given(e, r.count(0, u32::MAX.into())? as u32)),
        "sync" => {
            let mode = match v {
                "none" | "0" => SyncMode::None,
                "sync" | "1" => SyncMode::Sync,
                "dsync" => SyncMode::Dsync,
                _ => return Err(one_of(Choices::Sync)),
            };
            job.sync = Some(given(e, mode));
        }
        "randseed" => {
            let seed = r.read(|v| value::single(v).and_then(|v| value::bytes(v, kb)))?;
            job.randseed = Some(given(e, seed));
        }
        "cpus_allowed" => {
            let cpus = r.read(|v| parse_cpulist(v).map_err(BadValue::CpuList))?;
            job.cpus_allowed = Some(given(e, cpus));
        }
        "numa_cpu_nodes" => job.numa_cpu_nodes = Some(given(e, r.read(node_set)?)),
        "numa_mem_policy" => job.numa_mem_policy = Some(given(e, r.read(mem_policy)?)),
        "buffer_compress_percentage" => {
            job.buffer_compress_percentage = Some(given(e, r.count(0, 100)? as u8));
        }
        "verify" => {
            if !VERIFY.contains(&v) {
                return Err(one_of(Choices::Verify(&VERIFY)));
            }
            job.verify = Some(given(e, v.to_string()));
        }
        "kb_base" => {
            let base = match v {
                "1024" => 1024,
                "1000" => 1000,
                _ => return Err(one_of(Choices::KbBase)),
            };
            job.kb_base = Some(given(e, base));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn given<T>(e: &Entry, value: T) -> Given<T> {
    Given {
        value,
        key: e.key.clone(),
        text: e.value.clone(),
        at: e.at.clone(),
    }
}

/// `rw=KIND[:MODIFIER]`.
fn rw(v: &str, kb: u32) -> Result<Rw, BadValue> {
    let (name, suffix) = match v.split_once(':') {
        Some((n, s)) => (n, Some(s.trim())),
        None => (v, None),
    };
    let kind = match name {
        "readwrite" => RwKind::ReadWrite,
        _ => RwKind::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(k, _)| *k)
            .ok_or_else(|| BadValue::UnknownPattern {
                name: name.to_string(),
            })?,
    };
    let modifier = match suffix {
        None => None,
        Some("") => return Err(BadValue::NothingAfterColon),
        Some(s) if kind.is_random() => {
            let n: u32 =
                s.parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| BadValue::NotRandomRun {
                        text: s.to_string(),
                    })?;
            Some(RwModifier::RandomRun(n))
        }
        Some(s) => {
            let (neg, digits) = match s.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, s.strip_prefix('+').unwrap_or(s)),
            };
            let b = value::bytes(digits, kb)?;
            let b = i64::try_from(b).map_err(|_| BadValue::OffsetTooLarge)?;
            Some(RwModifier::SeqOffset(if neg { -b } else { b }))
        }
    };
    Ok(Rw { kind, modifier })
}

/// Up to three `,`-separated parts: read, write, trim; fewer parts repeat
/// the last; an empty part keeps the value before.
fn parts(v: &str) -> Result<Vec<&str>, BadValue> {
    let v = v.strip_suffix(',').unwrap_or(v);
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err(BadValue::TooManyParts);
    }
    Ok(parts)
}

fn spread<T: Copy>(parts: &[Option<T>], before: PerDir<T>) -> PerDir<T> {
    let at = |i: usize, b: T| parts.get(i).copied().flatten().unwrap_or(b);
    match parts.len() {
        1 => {
            let one = at(0, before.read);
            if parts[0].is_some() {
                PerDir {
                    read: one,
                    write: one,
                    trim: one,
                }
            } else {
                before
            }
        }
        2 => {
            let w = at(1, before.write);
            PerDir {
                read: at(0, before.read),
                write: w,
                trim: at(1, before.trim),
            }
        }
        _ => PerDir {
            read: at(0, before.read),
            write: at(1, before.write),
            trim: at(2, before.trim),
        },
    }
}

fn block_sizes(v: &str, kb: u32, before: BlockSizes) -> Result<BlockSizes, BadValue> {
    let mut sizes = Vec::new();
    for p in parts(v)? {
        if p.contains([':', '-']) {
            return Err(BadValue::BlockSizeSplit);
        }
        if p.is_empty() {
            sizes.push(None);
            continue;
        }
        let b = value::bytes(p, kb)?;
        if b == 0 {
            return Err(BadValue::ZeroBlockSize);
        }
        sizes.push(Some(b));
    }
    Ok(spread(&sizes, before))
}

fn range(p: &str, kb: u32) -> Result<(u64, u64), BadValue> {
    let Some((lo, hi)) = p.split_once(['-', ':']) else {
        return Err(BadValue::NotRange {
            part: p.to_string(),
        });
    };
    let (lo, hi) = (value::bytes(lo, kb)?, value::bytes(hi, kb)?);
    if lo == 0 || hi == 0 {
        return Err(BadValue::ZeroBlockSize);
    }
    Ok((lo.min(hi), lo.max(hi)))
}

fn bs_ranges(v: &str, kb: u32) -> Result<PerDir<(u64, u64)>, BadValue> {
    let mut ranges = Vec::new();
    for p in parts(v)? {
        if p.is_empty() {
            return Err(BadValue::EmptyRangePart);
        }
        ranges.push(Some(range(p, kb)?));
    }
    let first = ranges[0].unwrap_or_default();
    Ok(spread(&ranges, PerDir::all(first)))
}

/// `filesize=SIZE` or `LOW-HIGH` (or `LOW:HIGH`).
fn file_sizes(v: &str, kb: u32) -> Result<(u64, u64), BadValue> {
    if v.contains(',') {
        return Err(BadValue::NotOneFileSize);
    }
    let (lo, hi) = match v.split_once(['-', ':']) {
        Some((lo, hi)) => (value::bytes(lo, kb)?, value::bytes(hi, kb)?),
        None => {
            let b = value::bytes(v, kb)?;
            (b, b)
        }
    };
    if lo == 0 {
        return Err(BadValue::ZeroFileSize);
    }
    if lo > hi {
        return Err(BadValue::Backwards);
    }
    Ok((lo, hi))
}

/// `a:b:c`, where `\:` is a colon inside a name; empty names are
/// skipped, as fio does.
fn names(v: &str) -> Result<Vec<String>, BadValue> {
    let mut out = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                if let Some(s) = out.last_mut() {
                    s.push(':');
                }
            }
            ':' => out.push(String::new()),
            c => {
                if let Some(s) = out.last_mut() {
                    s.push(c);
                }
            }
        }
    }
    // fio skips empty names (`a::b`, `a:`).
    out.retain(|s| !s.is_empty());
    if out.is_empty() {
        return Err(BadValue::NoName);
    }
    Ok(out)
}

fn node_set(v: &str) -> Result<NodeSet, BadValue> {
    if v == "all" {
        return Ok(NodeSet::All);
    }
    parse_cpulist(v)
        .map(NodeSet::List)
        .map_err(BadValue::CpuList)
}

fn mem_policy(v: &str) -> Result<NumaMemPolicy, BadValue> {
    let (mode, nodes) = match v.split_once(':') {
        Some((m, n)) => (m, Some(n)),
        None => (v, None),
    };
    match (mode, nodes) {
        ("default", None) => Ok(NumaMemPolicy::Default),
        ("local", None) => Ok(NumaMemPolicy::Local),
        ("default" | "local", Some(_)) => Err(BadValue::NoNodeList {
            mode: mode.to_string(),
        }),
        ("prefer", Some(n)) => match parse_cpulist(n).map_err(BadValue::CpuList)?.as_slice() {
            [one] => Ok(NumaMemPolicy::Prefer(*one)),
            _ => Err(BadValue::PreferOneNode),
        },
        ("bind", Some(n)) => node_set(n).map(NumaMemPolicy::Bind),
        ("interleave", Some(n)) => node_set(n).map(NumaMemPolicy::Interleave),
        ("prefer" | "bind" | "interleave", None) => Err(BadValue::NeedsNodes {
            mode: mode.to_string(),
        }),
        _ => Err(BadValue::NotOneOf {
            choices: Choices::MemPolicy,
        }),
    }
}

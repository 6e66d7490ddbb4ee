//! From what a backend saw ([`Raw`]) to trace events: descriptors to
//! files (through the opens seen, `dup`s, forks, and /proc for descriptors
//! opened before `--pid` attached), a read's or write's offset from the
//! descriptor's position (`lseek` followed), faults to files by inode
//! (learnt when a descriptor is mapped), io_uring completions matched to
//! their submissions.
//!
//! Events reach the resolver in the order the tracer read them, which is
//! not quite time order (one buffer per CPU): [`Resolver::push`] holds them
//! [`WINDOW_NS`] and releases them in time order, at most [`MAX_HELD`] at
//! once, so memory stays bounded.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

use super::raw::{FdCall, PathCall, Raw, DUP, LEN_FROM_RESULT, LSEEK};
use crate::trace::{Event, Op, FAULT_MAJOR};

/// How long an event is held for the events of other CPUs to catch up.
pub const WINDOW_NS: u64 = 200_000_000;
/// The most events held at once.
pub const MAX_HELD: usize = 1 << 20;
/// The most entry paths waiting for their call's exit.
const MAX_PENDING_PATHS: usize = 1 << 16;

const AT_FDCWD: i64 = -100;
const O_APPEND: u64 = 0o2000;
const PAGE: u64 = 4096;

#[derive(Debug, Clone, Copy)]
struct Fd {
    file: u32,
    pos: u64,
    append: bool,
}

/// A file the trace names, while recording.
#[derive(Debug, Clone, Default)]
pub struct FileSeen {
    pub path: String,
    /// The furthest byte an event reached.
    pub extent: u64,
}

/// Turns raw events into trace events, in time order.
#[derive(Debug, Default)]
pub struct Resolver {
    t0: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    held: HashMap<u64, Raw>,
    last_fault: HashMap<u32, u64>,
    rings: HashMap<u64, u64>,
    /// io_uring completions not yet given to their submission, by request:
    /// (instant, result). The recorder's CPUs deliver events out of order,
    /// a completion often before its submission; each submission takes
    /// the earliest completion of its request at or after it when it is
    /// released ([`Resolver::complete`]).
    completions: HashMap<u64, Vec<(u64, i64)>>,
    /// Completions held in `completions`.
    completions_held: usize,
    paths: HashMap<(u32, u64), (String, Option<String>)>,
    fds: HashMap<u32, HashMap<i64, Fd>>,
    pub files: Vec<FileSeen>,
    by_path: HashMap<String, u32>,
    by_inode: HashMap<(u64, u64), u32>,
    own_cwd: PathBuf,
    /// Data and sync calls on descriptors with no known file.
    pub unresolved: u64,
}

impl Resolver {
    /// A resolver for events after `t0_ns` (CLOCK_MONOTONIC).
    pub fn new(t0_ns: u64) -> Resolver {
        Resolver {
            t0: t0_ns,
            own_cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            ..Resolver::default()
        }
    }

    /// A path printed at a call's entry, for the call's exit to take. A
    /// path relative to the working directory is made absolute now, while
    /// the thread is alive to say where it is.
    pub fn entry_path(&mut self, second: bool, tid: u32, ts: u64, dirfd: i64, path: String) {
        if self.paths.len() >= MAX_PENDING_PATHS {
            self.paths.clear();
        }
        let path = match std::fs::read_link(format!("/proc/{tid}/cwd")) {
            Ok(cwd) if dirfd == AT_FDCWD && !path.starts_with('/') && !path.is_empty() => {
                cwd.join(&path).to_string_lossy().into_owned()
            }
            _ => path,
        };
        let slot = self.paths.entry((tid, ts)).or_default();
        if second {
            slot.1 = Some(path);
        } else {
            slot.0 = path;
        }
    }

    /// Descriptors `pid` had before the recording (from /proc/PID/fd) and
    /// the files it had mapped (/proc/PID/maps).
    pub fn adopt(&mut self, pid: u32) {
        if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
            for e in dir.flatten() {
                let (Some(fd), Ok(target)) = (
                    e.file_name().to_str().and_then(|s| s.parse::<i64>().ok()),
                    std::fs::read_link(e.path()),
                ) else {
                    continue;
                };
                if target.is_absolute() {
                    let file = self.file(&target.to_string_lossy());
                    self.learn_inode(file);
                    self.fds.entry(pid).or_default().insert(
                        fd,
                        Fd {
                            file,
                            pos: 0,
                            append: false,
                        },
                    );
                }
            }
        }
        if let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) {
            for line in maps.lines() {
                if let Some(path) = line
                    .split_whitespace()
                    .nth(5)
                    .filter(|p| p.starts_with('/'))
                {
                    let file = self.file(path);
                    self.learn_inode(file);
                }
            }
        }
    }

    /// One raw event; those older than the window are released to `out`.
    pub fn push(
        &mut self,
        raw: Raw,
        out: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        match raw {
            Raw::Major { tid, .. } => {
                if let Some(seq) = self.last_fault.remove(&tid) {
                    if let Some(Raw::Fault { major, .. }) = self.held.get_mut(&seq) {
                        *major = true;
                    }
                }
                return Ok(());
            }
            Raw::UringComplete { req, res, ts_ns } => {
                if self.completions_held >= MAX_HELD {
                    self.prune_completions(ts_ns);
                }
                self.completions.entry(req).or_default().push((ts_ns, res));
                self.completions_held += 1;
                return Ok(());
            }
            _ => {}
        }
        if let Raw::Fault { pid, dev, ino, .. } = raw {
            if !self.by_inode.contains_key(&(dev, ino)) {
                self.learn_maps(pid, dev, ino);
            }
        }
        let ts = raw.ts_ns();
        let seq = self.seq;
        self.seq += 1;
        match &raw {
            Raw::Fault { tid, .. } => {
                self.last_fault.insert(*tid, seq);
            }
            Raw::UringSubmit { req, .. } => {
                self.rings.insert(*req, seq);
            }
            _ => {}
        }
        self.held.insert(seq, raw);
        self.heap.push(Reverse((ts, seq)));
        self.release(ts.saturating_sub(WINDOW_NS), out)
    }

    /// Bounded: completions older than the window go, and, where more
    /// than half of [`MAX_HELD`] are left within it, the oldest until half
    /// are, so that a burst inside the window does not make every later
    /// completion scan the whole map again.
    fn prune_completions(&mut self, now_ns: u64) {
        let keep = now_ns.saturating_sub(WINDOW_NS);
        let mut times: Vec<u64> = self
            .completions
            .values()
            .flatten()
            .map(|&(t, _)| t)
            .filter(|&t| t >= keep)
            .collect();
        // Past half the bound, only those after the cut's time: ties at it
        // go too, so what is left is under half whatever the clock gave.
        let mut after = None;
        if times.len() > MAX_HELD / 2 {
            let cut = times.len() - MAX_HELD / 2;
            after = Some(*times.select_nth_unstable(cut).1);
        }
        self.completions.retain(|_, v| {
            v.retain(|&(t, _)| t >= keep && after.is_none_or(|a| t > a));
            !v.is_empty()
        });
        self.completions_held = self.completions.values().map(Vec::len).sum();
    }

    /// Releases every held event before `until` (and the oldest while
    /// over [`MAX_HELD`]).
    fn release(
        &mut self,
        until: u64,
        out: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        while let Some(&Reverse((ts, seq))) = self.heap.peek() {
            if ts >= until && self.heap.len() <= MAX_HELD {
                break;
            }
            self.heap.pop();
            if let Some(raw) = self.held.remove(&seq) {
                // Forget the links to it (a newer fault or request in the
                // same slot keeps its own).
                match &raw {
                    Raw::Fault { tid, .. } if self.last_fault.get(tid) == Some(&seq) => {
                        self.last_fault.remove(tid);
                    }
                    Raw::UringSubmit { req, .. } if self.rings.get(req) == Some(&seq) => {
                        self.rings.remove(req);
                    }
                    _ => {}
                }
                let raw = self.complete(raw);
                if let Some(e) = self.resolve(raw) {
                    out(&e)?;
                }
            }
        }
        Ok(())
    }

    /// Releases everything held.
    pub fn finish(
        &mut self,
        out: &mut dyn FnMut(&Event) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.release(u64::MAX, out)
    }

    /// A submission as it is released, given its completion: the earliest
    /// of its request at or after it, and before the request's next
    /// submission (a request whose completion was lost stays without one,
    /// rather than take the next request's).
    fn complete(&mut self, mut raw: Raw) -> Raw {
        let Raw::UringSubmit {
            req, ts_ns, done, ..
        } = &mut raw
        else {
            return raw;
        };
        let next = self
            .rings
            .get(req)
            .and_then(|seq| self.held.get(seq))
            .map_or(u64::MAX, Raw::ts_ns);
        let Some(list) = self.completions.get_mut(req) else {
            return raw;
        };
        // Those before it belong to earlier requests: gone.
        let before = list.len();
        list.retain(|&(t, _)| t >= *ts_ns);
        let first = (0..list.len()).min_by_key(|&i| list[i].0);
        if let Some(i) = first.filter(|&i| list[i].0 <= next) {
            let (t, res) = list.swap_remove(i);
            *done = Some((res, t));
        }
        self.completions_held -= before - list.len();
        if list.is_empty() {
            self.completions.remove(req);
        }
        raw
    }

    fn resolve(&mut self, raw: Raw) -> Option<Event> {
        match raw {
            Raw::Fd(c) => self.fd_call(c),
            Raw::Path(p) => self.path_call(p),
            Raw::Fault {
                tid,
                ts_ns,
                dev,
                ino,
                index,
                pages,
                write,
                major,
                ..
            } => {
                let file = self.inode_file(dev, ino);
                self.extend(file, index.saturating_add(pages).saturating_mul(PAGE));
                Some(Event {
                    ts_ns: ts_ns.saturating_sub(self.t0),
                    tid,
                    op: Some(if write { Op::FaultWrite } else { Op::FaultRead }),
                    file: Some(file),
                    offset: index.saturating_mul(PAGE),
                    len: pages.saturating_mul(PAGE),
                    result: 0,
                    flags: if major { FAULT_MAJOR } else { 0 },
                    dur_ns: 0,
                })
            }
            Raw::UringSubmit {
                pid,
                tid,
                ts_ns,
                code,
                fd,
                fixed_file,
                offset,
                len,
                vectored,
                done,
                ..
            } => {
                let Some(f) = (!fixed_file).then(|| self.fd(pid, fd)).flatten() else {
                    self.unresolved += 1;
                    return None;
                };
                // A vectored op's length is its iovec count: its bytes are
                // its result.
                let (result, dur_ns) = match done {
                    Some((res, end)) => (res, end.saturating_sub(ts_ns)),
                    None => (len as i64, 0),
                };
                let len = if vectored { result.max(0) as u64 } else { len };
                self.extend(f.file, offset.saturating_add(len));
                Some(Event {
                    ts_ns: ts_ns.saturating_sub(self.t0),
                    tid,
                    op: Op::from_code(code),
                    file: Some(f.file),
                    offset,
                    len,
                    result,
                    flags: 0,
                    dur_ns,
                })
            }
            Raw::Fork { parent, child, .. } => {
                if let Some(table) = self.fds.get(&parent).cloned() {
                    self.fds.insert(child, table);
                }
                None
            }
            Raw::Exit { pid, .. } => {
                self.fds.remove(&pid);
                None
            }
            Raw::Major { .. } | Raw::UringComplete { .. } => None,
        }
    }

    fn fd(&self, pid: u32, fd: i64) -> Option<Fd> {
        self.fds.get(&pid)?.get(&fd).copied()
    }

    fn fd_call(&mut self, c: FdCall) -> Option<Event> {
        let table = self.fds.entry(c.pid).or_default();
        match c.code {
            LSEEK => {
                if let (Some(f), Ok(pos)) = (table.get_mut(&c.fd), u64::try_from(c.ret)) {
                    f.pos = pos;
                }
                return None;
            }
            DUP => {
                if let Some(f) = table.get(&c.fd).copied().filter(|_| c.ret >= 0) {
                    table.insert(c.ret, f);
                }
                return None;
            }
            _ => {}
        }
        let op = Op::from_code(c.code)?;
        let Some(mut f) = table.get(&c.fd).copied() else {
            if op.reads() || op.writes() || op.syncs() {
                self.unresolved += 1;
            }
            return None;
        };
        if op == Op::Close {
            table.remove(&c.fd);
        }
        let moved = u64::try_from(c.ret).unwrap_or(0);
        let len = if c.len == LEN_FROM_RESULT {
            moved
        } else {
            c.len
        };
        let offset = if c.offset >= 0 {
            c.offset as u64
        } else if f.append && op.writes() {
            self.files[f.file as usize].extent
        } else {
            let at = f.pos;
            f.pos = f.pos.saturating_add(moved);
            if let Some(slot) = table.get_mut(&c.fd) {
                slot.pos = f.pos;
            }
            at
        };
        match op {
            Op::Mmap => self.learn_inode(f.file),
            _ if op.reads() || op.writes() => self.extend(f.file, offset.saturating_add(moved)),
            Op::Ftruncate | Op::Fallocate => self.extend(f.file, offset.saturating_add(len)),
            _ => {}
        }
        let result = if op == Op::Mmap { c.ret.min(0) } else { c.ret };
        Some(Event {
            ts_ns: c.ts_ns.saturating_sub(self.t0),
            dur_ns: c.dur_ns,
            tid: c.tid,
            op: Some(op),
            file: Some(f.file),
            offset,
            len,
            result,
            flags: c.flags,
        })
    }

    fn path_call(&mut self, p: PathCall) -> Option<Event> {
        let op = Op::from_code(p.code)?;
        let (path, path2) = self.paths.remove(&(p.tid, p.ts_ns)).unwrap_or_default();
        let mut e = Event {
            ts_ns: p.ts_ns.saturating_sub(self.t0),
            dur_ns: p.dur_ns,
            tid: p.tid,
            op: Some(op),
            file: None,
            offset: 0,
            len: 0,
            result: p.ret,
            flags: p.flags,
        };
        if p.ret < 0 {
            // A failed call names no file the program has (a library
            // searched for along a path, a missing file).
            return Some(e);
        }
        if op == Op::Stat && path.is_empty() && p.dirfd >= 0 {
            e.file = self.fd(p.pid, p.dirfd).map(|f| f.file);
            return Some(e);
        }
        let full = self.absolute(p.pid, p.dirfd, &path);
        let file = self.file(&full);
        e.file = Some(file);
        match op {
            Op::Open => {
                let fd = Fd {
                    file,
                    pos: 0,
                    append: p.flags & O_APPEND != 0,
                };
                self.fds.entry(p.pid).or_default().insert(p.ret, fd);
            }
            Op::Rename => {
                let new = self.absolute(p.pid, p.dirfd, path2.as_deref().unwrap_or(""));
                e.offset = u64::from(self.file(&new));
            }
            _ => {}
        }
        Some(e)
    }

    /// `path` as an absolute path: relative to `dirfd`'s directory, or to
    /// the process's working directory.
    fn absolute(&self, pid: u32, dirfd: i64, path: &str) -> String {
        if path.starts_with('/') {
            return path.to_string();
        }
        let base = if dirfd == AT_FDCWD {
            std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_else(|_| self.own_cwd.clone())
        } else if let Some(f) = self.fd(pid, dirfd) {
            PathBuf::from(&self.files[f.file as usize].path)
        } else {
            return path.to_string();
        };
        base.join(Path::new(path)).to_string_lossy().into_owned()
    }

    /// The file id of `path`, a new one if the trace has not named it.
    fn file(&mut self, path: &str) -> u32 {
        if let Some(&id) = self.by_path.get(path) {
            return id;
        }
        let id = self.files.len() as u32;
        self.files.push(FileSeen {
            path: path.to_string(),
            extent: 0,
        });
        self.by_path.insert(path.to_string(), id);
        id
    }

    /// Remembers the inode of a file (a mapped one): its faults name it.
    fn learn_inode(&mut self, file: u32) {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::metadata(&self.files[file as usize].path) {
            self.by_inode.entry((m.dev(), m.ino())).or_insert(file);
        }
    }

    /// Names the file of an inode faulted on but never mapped through a
    /// descriptor seen (the program itself, the dynamic loader), from the
    /// process's /proc/PID/maps while it is alive.
    fn learn_maps(&mut self, pid: u32, dev: u64, ino: u64) {
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
            return;
        };
        let want = format!(
            "{:02x}:{:02x}",
            (dev >> 8) & 0xfff,
            (dev & 0xff) | ((dev >> 12) & !0xff)
        );
        for line in maps.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 6 && f[3] == want && f[4].parse() == Ok(ino) && f[5].starts_with('/') {
                let file = self.file(f[5]);
                self.by_inode.insert((dev, ino), file);
                return;
            }
        }
    }

    fn inode_file(&mut self, dev: u64, ino: u64) -> u32 {
        if let Some(&f) = self.by_inode.get(&(dev, ino)) {
            return f;
        }
        let (major, minor) = ((dev >> 8) & 0xfff, (dev & 0xff) | ((dev >> 12) & !0xff));
        let f = self.file(&format!("<inode {major}:{minor}:{ino}>"));
        self.by_inode.insert((dev, ino), f);
        f
    }

    fn extend(&mut self, file: u32, end: u64) {
        if let Some(f) = self.files.get_mut(file as usize) {
            f.extent = f.extent.max(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(code: u8, pid: u32, ts_ns: u64, fd: i64, offset: i64, len: u64, ret: i64) -> Raw {
        Raw::Fd(FdCall {
            code,
            pid,
            tid: pid,
            ts_ns,
            dur_ns: 1,
            fd,
            offset,
            len,
            ret,
            flags: 0,
        })
    }

    fn open(r: &mut Resolver, pid: u32, ts: u64, path: &str, fd: i64, flags: u64) -> Raw {
        r.entry_path(false, pid, ts, AT_FDCWD, path.into());
        Raw::Path(PathCall {
            code: Op::Open as u8,
            pid,
            tid: pid,
            ts_ns: ts,
            dur_ns: 1,
            dirfd: AT_FDCWD,
            flags,
            ret: fd,
            path: String::new(),
            path2: None,
        })
    }

    /// Positions follow reads, `lseek`, a `dup2` and a fork; an append
    /// writes at the end; a read on an unknown descriptor is counted.
    #[test]
    fn descriptors_keep_their_file_and_position() {
        let mut r = Resolver::new(1000);
        let mut out = Vec::new();
        // The first read reaches the resolver before its open (another
        // CPU's buffer): held, it is released after it.
        let raws = [
            call(Op::Read as u8, 10, 1200, 3, -1, 4096, 4096),
            open(&mut r, 10, 1100, "/d/a", 3, 0),
            call(LSEEK, 10, 1300, 3, 65536, 0, 65536),
            call(DUP, 10, 1400, 3, 0, 0, 0),
            call(Op::Read as u8, 10, 1500, 0, -1, 100, 100),
            Raw::Fork {
                parent: 10,
                child: 11,
                ts_ns: 1600,
            },
            call(Op::Pread as u8, 11, 1700, 3, 8192, 512, 512),
            open(&mut r, 10, 1800, "/d/log", 4, O_APPEND),
            call(Op::Write as u8, 10, 1900, 4, -1, 10, 10),
            call(Op::Write as u8, 10, 2000, 4, -1, 10, 10),
            call(Op::Read as u8, 10, 2100, 9, -1, 10, 10),
        ];
        let mut sink = |e: &Event| {
            out.push(*e);
            Ok(())
        };
        for raw in raws {
            r.push(raw, &mut sink).unwrap();
        }
        r.finish(&mut sink).unwrap();
        let seen: Vec<(Op, Option<u32>, u64)> =
            out.iter().map(|e| (e.op(), e.file, e.offset)).collect();
        assert_eq!(
            seen,
            [
                (Op::Open, Some(0), 0),
                (Op::Read, Some(0), 0),
                (Op::Read, Some(0), 65536),
                (Op::Pread, Some(0), 8192),
                (Op::Open, Some(1), 0),
                (Op::Write, Some(1), 0),
                (Op::Write, Some(1), 10),
            ]
        );
        assert_eq!(out[1].ts_ns, 200);
        assert_eq!(r.unresolved, 1);
        assert_eq!(r.files[0].extent, 65636);
    }

    #[test]
    fn a_major_page_marks_its_fault_and_a_completion_its_submission() {
        let mut r = Resolver::new(0);
        let mut out = Vec::new();
        let mut sink = |e: &Event| {
            out.push(*e);
            Ok(())
        };
        let fault = Raw::Fault {
            pid: 1,
            tid: 1,
            ts_ns: 10,
            dev: 7,
            ino: 9,
            index: 3,
            pages: 1,
            write: false,
            major: false,
        };
        r.push(fault, &mut sink).unwrap();
        r.push(
            Raw::Major {
                tid: 1,
                ino: 9,
                ts_ns: 11,
            },
            &mut sink,
        )
        .unwrap();
        let opened = open(&mut r, 1, 12, "/d/u", 5, 0);
        r.push(opened, &mut sink).unwrap();
        let submit = Raw::UringSubmit {
            pid: 1,
            tid: 1,
            ts_ns: 20,
            req: 0xabc,
            code: Op::UringRead as u8,
            fd: 5,
            fixed_file: false,
            offset: 4096,
            len: 4096,
            vectored: false,
            done: None,
        };
        r.push(submit, &mut sink).unwrap();
        r.push(
            Raw::UringComplete {
                ts_ns: 70,
                req: 0xabc,
                res: 4096,
            },
            &mut sink,
        )
        .unwrap();
        r.finish(&mut sink).unwrap();
        assert_eq!(out[0].op(), Op::FaultRead);
        assert_eq!((out[0].offset, out[0].flags), (3 * 4096, FAULT_MAJOR));
        let ring = out.iter().find(|e| e.op() == Op::UringRead).unwrap();
        assert_eq!((ring.result, ring.dur_ns, ring.offset), (4096, 50, 4096));
    }
    /// The review's finding: completions held past [`MAX_HELD`] within the
    /// window were pruned by time only, so none went and every later one
    /// rescanned the whole map. Now at most [`MAX_HELD`] are held, the
    /// oldest going first, ties at the cut included.
    #[test]
    fn completions_in_a_burst_stay_bounded() {
        let mut r = Resolver::new(0);
        let mut sink = |_: &Event| Ok(());
        for i in 0..(MAX_HELD as u64 + MAX_HELD as u64 / 2) {
            let c = Raw::UringComplete {
                ts_ns: 1_000 + i,
                req: i,
                res: 4096,
            };
            r.push(c, &mut sink).unwrap();
            assert!(r.completions_held <= MAX_HELD);
        }
        // The oldest went.
        assert!(!r.completions.contains_key(&0));
        // Many at one instant: still bounded (ties at the cut go too).
        let mut r = Resolver::new(0);
        for i in 0..(MAX_HELD as u64 + 2) {
            let c = Raw::UringComplete {
                ts_ns: 1_000,
                req: i,
                res: 4096,
            };
            r.push(c, &mut sink).unwrap();
            assert!(r.completions_held <= MAX_HELD);
        }
    }

    /// Regression: the recorder's CPUs deliver a completion before its
    /// submission (the loop device completes on another CPU). It was
    /// dropped, and the request reusing the slot gave its completion to
    /// the old submission: durations spanning several requests, and a
    /// program at depth 16 surveyed at 227. A completion now waits for its
    /// submission; one that was lost leaves its submission without one.
    #[test]
    fn a_completion_delivered_before_its_submission_is_its_own() {
        let mut r = Resolver::new(0);
        let mut out = Vec::new();
        let mut sink = |e: &Event| {
            out.push(*e);
            Ok(())
        };
        let opened = open(&mut r, 1, 1, "/d/u", 5, 0);
        r.push(opened, &mut sink).unwrap();
        let submit = |ts_ns: u64, offset: u64| Raw::UringSubmit {
            pid: 1,
            tid: 1,
            ts_ns,
            req: 0xabc,
            code: Op::UringRead as u8,
            fd: 5,
            fixed_file: false,
            offset,
            len: 4096,
            vectored: false,
            done: None,
        };
        let complete = |ts_ns: u64| Raw::UringComplete {
            ts_ns,
            req: 0xabc,
            res: 4096,
        };
        // Delivered out of order: each of the first two requests' completion
        // (40, 130) before its submission (20, 100); the third (200) loses
        // its completion, and the fourth (300) reuses its request and
        // completes at 360.
        for raw in [
            complete(40),
            submit(20, 0),
            complete(130),
            submit(100, 4096),
            submit(200, 8192),
            submit(300, 12288),
            complete(360),
        ] {
            r.push(raw, &mut sink).unwrap();
        }
        r.finish(&mut sink).unwrap();
        let durs: Vec<(u64, u64)> = out
            .iter()
            .filter(|e| e.op() == Op::UringRead)
            .map(|e| (e.offset, e.dur_ns))
            .collect();
        assert_eq!(durs, [(0, 20), (4096, 30), (8192, 0), (12288, 60)]);
        assert!(r.completions.is_empty() && r.completions_held == 0);
    }
}

//! Device truth: which block devices sit under a target, and how many bytes
//! they really moved.
//!
//! The target's `st_dev` (its `st_rdev` when the target is a block-device
//! node) leads to `/sys/dev/block/MAJ:MIN`; a partition is
//! followed to its whole disk; device-mapper and md devices are followed
//! through `slaves/`, and a loop device through its `loop/backing_file` to the
//! device under that file. The *leaves* of that walk are the disks whose
//! counters (`/sys/block/X/stat`) are read around every repetition.
//!
//! [`DeviceWalk`] is that walk, and the only one: the description of the
//! device in a result (`sysinfo::Device`) and the counters' [`DeviceStack`]
//! are both built from it.
//!
//! The counters are system-wide: any other traffic on the same disks during
//! a repetition is counted too. Results say so.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// I/O counters of one block device (`/sys/block/X/stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    /// Merges and times (fio's `disk_util`); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<DiskTime>,
}

/// The rest of a `stat` line: merged requests and milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskTime {
    pub read_merges: u64,
    pub write_merges: u64,
    /// Milliseconds reads spent queued and in service, summed over reads.
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    /// Milliseconds the device had I/O in flight: busy time (fio's `util`
    /// is this over the elapsed time).
    pub io_ticks_ms: u64,
    /// Milliseconds weighted by requests in flight (fio's `in_queue`).
    pub in_queue_ms: u64,
}

impl DiskTime {
    fn zip(&self, o: &DiskTime, f: impl Fn(u64, u64) -> u64) -> DiskTime {
        DiskTime {
            read_merges: f(self.read_merges, o.read_merges),
            write_merges: f(self.write_merges, o.write_merges),
            read_ticks_ms: f(self.read_ticks_ms, o.read_ticks_ms),
            write_ticks_ms: f(self.write_ticks_ms, o.write_ticks_ms),
            io_ticks_ms: f(self.io_ticks_ms, o.io_ticks_ms),
            in_queue_ms: f(self.in_queue_ms, o.in_queue_ms),
        }
    }
}

impl DiskCounters {
    /// Parse the text of a `stat` file (fields: reads, reads merged, sectors
    /// read, read ticks, writes, writes merged, sectors written, ...). Sectors
    /// are always 512 bytes in this file, whatever the device's block size.
    pub fn parse(text: &str) -> Option<DiskCounters> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|w| w.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        if f.len() < 7 {
            return None;
        }
        Some(DiskCounters {
            reads: f[0],
            read_bytes: f[2] * 512,
            writes: f[4],
            write_bytes: f[6] * 512,
            // Fields 2, 4, 6, 8, 10 and 11 (1-based): merges, ticks, busy,
            // weighted time in queue.
            time: (f.len() >= 11).then(|| DiskTime {
                read_merges: f[1],
                read_ticks_ms: f[3],
                write_merges: f[5],
                write_ticks_ms: f[7],
                io_ticks_ms: f[9],
                in_queue_ms: f[10],
            }),
        })
    }

    pub fn delta(&self, before: &DiskCounters) -> DiskCounters {
        DiskCounters {
            reads: self.reads.saturating_sub(before.reads),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            writes: self.writes.saturating_sub(before.writes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
            time: match (self.time, before.time) {
                (Some(a), Some(b)) => Some(a.zip(&b, u64::saturating_sub)),
                _ => None,
            },
        }
    }

    pub fn add(&mut self, o: &DiskCounters) {
        self.reads += o.reads;
        self.read_bytes += o.read_bytes;
        self.writes += o.writes;
        self.write_bytes += o.write_bytes;
        self.time = match (self.time, o.time) {
            (Some(a), Some(b)) => Some(a.zip(&b, u64::saturating_add)),
            _ => None,
        };
    }
}

/// The block devices under a path, top to bottom, as sysfs tells them: the
/// one walk that both the description of the device
/// (`sysinfo::Device::from_walk`) and the disks whose counters are read
/// ([`DeviceStack`]) are built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceWalk {
    /// sysfs directory of the device the path is on, or is when it is a
    /// block-device node (`.../vda/vda1`, `.../dm-0`, `.../loop3`).
    pub top: PathBuf,
    /// The whole disk of `top`: its parent when `top` is a partition, else
    /// `top` itself.
    pub disk: PathBuf,
    /// Every device met, top to bottom, in walk order (`vda1`, `vda`).
    pub path: Vec<String>,
    /// sysfs directories of the devices at the bottom: whole disks with no
    /// `slaves/` and no loop backing left to follow. Empty when the bottom
    /// is no block device (a loop device over a file on tmpfs).
    pub leaves: Vec<PathBuf>,
    /// Loop devices on the way with `loop/dio` 0 (buffered I/O on their
    /// backing file).
    pub buffered_loops: Vec<String>,
    /// The walk started at a block-device node named as the target
    /// (`--file /dev/vda1`), not at a file on a file system: `top` is then
    /// the target itself, and a partition is counted by its own `stat`.
    pub node: bool,
    /// The devices stacked above `top` ([`holders_above`]).
    pub holders: Vec<Holder>,
}

/// A device built on another: `name` (dm-0, md0, bcache0, or a loop device
/// whose backing file is the device node) sits over `over`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub name: String,
    pub over: String,
}

impl DeviceWalk {
    /// Walk from the file or block device at `at`: a block-device node
    /// (`/dev/loop0`) stands for itself (`st_rdev`), anything else for the
    /// device its file system is on (`st_dev`). `sys` is the sysfs root
    /// (`/sys`; tests pass a tree of their own). `None` when no block device
    /// is under `at` (tmpfs, overlay, NFS, or a path that does not exist).
    ///
    /// A file system with an anonymous `st_dev` (btrfs, bcachefs, ZFS:
    /// `0:N`, no block device in sysfs) is walked from its mount's source
    /// device instead ([`mount_source`]).
    pub fn of(at: &Path, sys: &Path) -> Option<DeviceWalk> {
        let (maj, min) = iopath_io::sys::dev_numbers(at)?;
        let mut w = DeviceWalk::from_dev(maj, min, sys).or_else(|| {
            let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
            let source = mount_source(at, &mountinfo)?;
            let (maj, min) = block_node_numbers(Path::new(&source))?;
            DeviceWalk::from_dev(maj, min, sys)
        })?;
        w.node = block_node_numbers(at).is_some();
        Some(w)
    }

    /// True when the target is a partition's node (`--file /dev/vda1`):
    /// described by its own size and counted by its own `stat`.
    pub fn partition_node(&self) -> bool {
        self.node && self.top != self.disk
    }

    /// Walk from device number `maj:min` (`sys/dev/block/MAJ:MIN`); `None`
    /// when sysfs has no such block device.
    pub fn from_dev(maj: u32, min: u32, sys: &Path) -> Option<DeviceWalk> {
        let top = resolve(&sys.join(format!("dev/block/{maj}:{min}")), sys)?;
        name_of(&top)?;
        let mut w = DeviceWalk {
            disk: whole_disk(&top),
            top: top.clone(),
            path: Vec::new(),
            leaves: Vec::new(),
            buffered_loops: Vec::new(),
            node: false,
            holders: holders_above(&top, sys),
        };
        walk(&top, sys, &mut w, 0);
        Some(w)
    }

    /// Kernel name of [`DeviceWalk::top`] (`vda1`).
    pub fn top_name(&self) -> String {
        name_of(&self.top).unwrap_or_default()
    }

    /// Kernel name of [`DeviceWalk::disk`] (`vda`).
    pub fn disk_name(&self) -> String {
        name_of(&self.disk).unwrap_or_default()
    }

    /// Kernel names of the leaves (`vda`, `nvme0n1`).
    pub fn leaf_names(&self) -> Vec<String> {
        self.leaves.iter().filter_map(|d| name_of(d)).collect()
    }
}

/// The source of the mount that holds `at` (`/dev/loop0`), from the text of
/// `/proc/self/mountinfo`: the mount whose mount point is the longest prefix
/// of the canonical path (the last one listed among equals, the one on
/// top). `None` when that source is no path (`tmpfs`, `overlay`).
pub fn mount_source(at: &Path, mountinfo: &str) -> Option<String> {
    let abs = std::fs::canonicalize(at).unwrap_or_else(|_| at.to_path_buf());
    let mut best: Option<(usize, String)> = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let f: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if f.len() < 5 || r.len() < 2 {
            continue;
        }
        let mp = PathBuf::from(f[4].replace("\\040", " "));
        if abs.starts_with(&mp) {
            let depth = mp.components().count();
            if best.as_ref().is_none_or(|b| depth >= b.0) {
                best = Some((depth, r[1].replace("\\040", " ")));
            }
        }
    }
    best.map(|b| b.1).filter(|s| s.starts_with('/'))
}

/// `maj:min` of a block-device node (`st_rdev`); `None` for anything else.
fn block_node_numbers(p: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p)
        .ok()
        .filter(|m| m.file_type().is_block_device())
        .and_then(|_| iopath_io::sys::dev_numbers(p))
}

/// The backing file of loop device `dev` (a block-device node) when it is
/// a regular file: (its path, bytes allocated, its length). A sparse
/// backing file reads zeros from its holes without touching a disk.
pub fn loop_backing_allocation(dev: &Path, sys: &Path) -> Option<(PathBuf, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let (maj, min) = block_node_numbers(dev)?;
    let dir = resolve(&sys.join(format!("dev/block/{maj}:{min}")), sys)?;
    let backing = std::fs::read_to_string(dir.join("loop/backing_file")).ok()?;
    let backing = PathBuf::from(backing.trim());
    let meta = std::fs::metadata(&backing).ok().filter(|m| m.is_file())?;
    Some((backing, meta.blocks() * 512, meta.len()))
}

/// The disks under a target and how the walk reached them, as a result
/// keeps them; built from a [`DeviceWalk`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceStack {
    /// The device the file system sits on (`vda1`, `dm-0`, `loop3`).
    pub top: Option<String>,
    /// The disks at the bottom, whose counters are read (`vda`, `nvme0n1`).
    pub leaves: Vec<String>,
    /// How the walk went, top to bottom (`loop0 -> vda`).
    pub path: Vec<String>,
    /// Loop devices on the way that use buffered I/O on their backing file
    /// (`loop/dio` is 0): reads through them may be served by the page cache
    /// of the file system below, even with O_DIRECT above.
    #[serde(default)]
    pub buffered_loops: Vec<String>,
}

impl From<&DeviceWalk> for DeviceStack {
    /// The disks to count: the walk's leaves, or a partition named as the
    /// target itself (its own `stat`, not its whole disk's).
    fn from(w: &DeviceWalk) -> DeviceStack {
        DeviceStack {
            top: Some(w.top_name()),
            leaves: if w.partition_node() {
                vec![w.top_name()]
            } else {
                w.leaf_names()
            },
            path: w.path.clone(),
            buffered_loops: w.buffered_loops.clone(),
        }
    }
}

impl DeviceStack {
    /// The stack under the file (or block device) at `target`
    /// ([`DeviceWalk::of`]); empty when there is no block device.
    ///
    /// A partition named as the target (`--file /dev/vda1`) is counted by
    /// its own `stat`, not its whole disk's.
    pub fn of(target: &Path, sys: &Path) -> DeviceStack {
        DeviceWalk::of(target, sys).map_or_else(DeviceStack::default, |w| (&w).into())
    }

    /// The stack under device number `maj:min` ([`DeviceWalk::from_dev`]).
    pub fn from_dev(maj: u32, min: u32, sys: &Path) -> DeviceStack {
        DeviceWalk::from_dev(maj, min, sys).map_or_else(DeviceStack::default, |w| (&w).into())
    }

    /// Sum of the leaves' counters now.
    pub fn snapshot(&self, sys: &Path) -> Option<DiskCounters> {
        if self.leaves.is_empty() {
            return None;
        }
        let mut sum: Option<DiskCounters> = None;
        for leaf in &self.leaves {
            // A partition is under class/block only.
            let text = std::fs::read_to_string(sys.join("block").join(leaf).join("stat"))
                .or_else(|_| {
                    std::fs::read_to_string(sys.join("class/block").join(leaf).join("stat"))
                })
                .ok()?;
            let c = DiskCounters::parse(&text)?;
            match &mut sum {
                Some(s) => s.add(&c),
                None => sum = Some(c),
            }
        }
        sum
    }
}

/// The devices stacked above the device whose sysfs directory is `top`
/// (and above its partitions, when it is a whole disk), nearest first:
/// those in `holders/` (dm, md, bcache) and the loop devices whose backing
/// file is the device's node (a loop device over a device is not listed in
/// its `holders/`), then what holds those in turn.
pub fn holders_above(top: &Path, sys: &Path) -> Vec<Holder> {
    let loops = loop_backings(sys);
    let mut out: Vec<Holder> = Vec::new();
    let mut queue: std::collections::VecDeque<PathBuf> = [top.to_path_buf()].into();
    if !is_partition(top) {
        let mut parts: Vec<PathBuf> = std::fs::read_dir(top)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.join("partition").exists())
                    .collect()
            })
            .unwrap_or_default();
        parts.sort();
        queue.extend(parts);
    }
    while let Some(dir) = queue.pop_front() {
        let Some(below) = name_of(&dir) else { continue };
        let mut above: Vec<(String, Option<PathBuf>)> = holders(&dir)
            .into_iter()
            .map(|h| {
                let at = resolve(&dir.join("holders").join(&h), sys);
                (h, at)
            })
            .collect();
        if let Some(dev) = dev_of(&dir) {
            for (lo, backing) in &loops {
                if *backing == dev && !above.iter().any(|(h, _)| h == lo) {
                    let at = resolve(&sys.join("block").join(lo), sys);
                    above.push((lo.clone(), at));
                }
            }
        }
        for (name, at) in above {
            // A device met twice (two paths up, or a cycle) is listed once.
            if out.iter().any(|h| h.name == name) || out.len() >= 64 {
                continue;
            }
            out.push(Holder {
                name,
                over: below.clone(),
            });
            queue.extend(at);
        }
    }
    out
}

/// Every loop device whose backing file is a block device: (loop name, the
/// backing device's number), as the kernel gives it (`LOOP_GET_STATUS64`'s
/// `lo_rdevice`: whatever node, or name, the device was attached by); by
/// `stat` of its sysfs name only where the loop device cannot be asked
/// (not root).
pub fn loop_backings(sys: &Path) -> Vec<(String, (u32, u32))> {
    iopath_io::loopdev::loop_devices(sys)
        .into_iter()
        .filter_map(|lo| {
            let dev = match lo.backing {
                Some(b) => Some(b.rdev).filter(|&r| r != (0, 0)),
                None => block_node_numbers(Path::new(lo.backing_name.trim())),
            }?;
            Some((lo.name, dev))
        })
        .collect()
}

/// Names in a device's `holders/` directory, sorted.
pub fn holders(sysdir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(sysdir.join("holders"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `maj:min` of a device's sysfs directory (its `dev` file).
fn dev_of(dir: &Path) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string(dir.join("dev")).ok()?;
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Follow a sysfs link to the device's directory (absolute, inside `sys`).
fn resolve(link: &Path, sys: &Path) -> Option<PathBuf> {
    match std::fs::canonicalize(link) {
        Ok(p) => Some(p),
        // A captured tree in a test may hold plain directories, not links.
        Err(_) if link.starts_with(sys) && link.is_dir() => Some(link.to_path_buf()),
        Err(_) => None,
    }
}

fn name_of(dir: &Path) -> Option<String> {
    dir.file_name().map(|n| n.to_string_lossy().into_owned())
}

fn is_partition(dir: &Path) -> bool {
    dir.join("partition").exists() && dir.parent().is_some()
}

/// The whole disk of a block device's sysfs directory: a partition's
/// parent, else the directory itself.
fn whole_disk(dir: &Path) -> PathBuf {
    match dir.parent() {
        Some(parent) if is_partition(dir) => parent.to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

fn walk(dir: &Path, sys: &Path, w: &mut DeviceWalk, depth: usize) {
    let Some(name) = name_of(dir) else { return };
    w.path.push(name.clone());
    if depth > 16 {
        return; // a loop in the graph: stop rather than spin
    }
    // A partition: its disk is the parent directory.
    if is_partition(dir) {
        walk(&whole_disk(dir), sys, w, depth + 1);
        return;
    }
    // A loop device: the disk under its backing file.
    if let Ok(backing) = std::fs::read_to_string(dir.join("loop/backing_file")) {
        let dio = std::fs::read_to_string(dir.join("loop/dio")).unwrap_or_default();
        if dio.trim() == "0" {
            w.buffered_loops.push(name.clone());
        }
        let backing = backing.trim();
        if let Some((maj, min)) = iopath_io::sys::dev_numbers(Path::new(backing)) {
            let link = sys.join(format!("dev/block/{maj}:{min}"));
            if let Some(next) = resolve(&link, sys) {
                walk(&next, sys, w, depth + 1);
                return;
            }
        }
        // The backing file lives on a file system with no block device.
        return;
    }
    // dm / md / bcache: every slave.
    let mut slaves: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    slaves.sort();
    if slaves.is_empty() {
        if !w.leaves.iter().any(|l| l == dir) {
            w.leaves.push(dir.to_path_buf());
        }
        return;
    }
    for s in slaves {
        if let Some(next) = resolve(&s, sys) {
            walk(&next, sys, w, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_captured_stat_line() {
        let text = "29691919   131143 3621734058 11884263   504048    23569 52620072   751465       32   737048 12643540     8961       61 10797768     7574     2013      236\n";
        let c = DiskCounters::parse(text).unwrap();
        assert_eq!(c.reads, 29_691_919);
        assert_eq!(c.read_bytes, 3_621_734_058 * 512);
        assert_eq!(c.writes, 504_048);
        assert_eq!(c.write_bytes, 52_620_072 * 512);
        let t = c.time.unwrap();
        assert_eq!(
            (
                t.read_merges,
                t.read_ticks_ms,
                t.write_merges,
                t.write_ticks_ms
            ),
            (131_143, 11_884_263, 23_569, 751_465)
        );
        assert_eq!((t.io_ticks_ms, t.in_queue_ms), (737_048, 12_643_540));
        // A kernel's shorter line (before 2.6.x's 11 fields) has no times.
        assert_eq!(DiskCounters::parse("1 2 3 4 5 6 7").unwrap().time, None);
        assert!(DiskCounters::parse("1 2 3").is_none());
        assert!(DiskCounters::parse("a b c d e f g").is_none());
    }

    #[test]
    fn deltas_never_go_negative() {
        let a = DiskCounters {
            reads: 10,
            read_bytes: 100,
            writes: 5,
            write_bytes: 50,
            time: None,
        };
        let b = DiskCounters {
            reads: 12,
            read_bytes: 612,
            writes: 5,
            write_bytes: 40,
            time: None,
        };
        let d = b.delta(&a);
        assert_eq!(
            (d.reads, d.read_bytes, d.writes, d.write_bytes),
            (2, 512, 0, 0)
        );
    }

    /// A captured-shape tree: dm-0 over two partitions of two disks.
    #[test]
    fn walks_dm_slaves_and_partitions_to_whole_disks() {
        let t = tempfile::tempdir().unwrap();
        let sys = t.path();
        let mk = |p: &str| std::fs::create_dir_all(sys.join(p)).unwrap();
        mk("devices/virtual/block/dm-0/slaves");
        mk("devices/pci/nvme0n1/nvme0n1p2");
        mk("devices/pci/sda/sda1");
        std::fs::write(sys.join("devices/pci/nvme0n1/nvme0n1p2/partition"), "2\n").unwrap();
        std::fs::write(sys.join("devices/pci/sda/sda1/partition"), "1\n").unwrap();
        mk("dev/block");
        let link = |target: &str, at: &str| {
            std::os::unix::fs::symlink(sys.join(target), sys.join(at)).unwrap();
        };
        link("devices/virtual/block/dm-0", "dev/block/253:0");
        link(
            "devices/pci/nvme0n1/nvme0n1p2",
            "devices/virtual/block/dm-0/slaves/nvme0n1p2",
        );
        link(
            "devices/pci/sda/sda1",
            "devices/virtual/block/dm-0/slaves/sda1",
        );
        let st = DeviceStack::from_dev(253, 0, sys);
        assert_eq!(st.top.as_deref(), Some("dm-0"));
        let mut leaves = st.leaves.clone();
        leaves.sort();
        assert_eq!(leaves, vec!["nvme0n1".to_string(), "sda".to_string()]);
        assert_eq!(st.path[0], "dm-0");

        mk("block/nvme0n1");
        mk("block/sda");
        std::fs::write(sys.join("block/nvme0n1/stat"), "1 0 8 0 2 0 16 0 0 0 0\n").unwrap();
        std::fs::write(sys.join("block/sda/stat"), "3 0 8 0 0 0 0 0 0 0 0\n").unwrap();
        let c = st.snapshot(sys).unwrap();
        assert_eq!(
            (c.reads, c.read_bytes, c.writes, c.write_bytes),
            (4, 8192, 2, 8192)
        );
    }

    #[test]
    fn unknown_device_gives_an_empty_stack() {
        let t = tempfile::tempdir().unwrap();
        let st = DeviceStack::from_dev(1, 2, t.path());
        assert!(st.leaves.is_empty() && st.top.is_none());
        assert!(st.snapshot(t.path()).is_none());
    }

    use super::fake::FakeSys;

    #[test]
    fn a_partition_leads_to_its_whole_disk() {
        let sys = FakeSys::new();
        sys.device("pci/vda", (254, 0));
        sys.partition("pci/vda/vda1", (254, 1));
        let w = DeviceWalk::from_dev(254, 1, sys.root()).unwrap();
        assert_eq!(w.top_name(), "vda1");
        assert_eq!(w.disk_name(), "vda");
        assert_eq!(w.disk, w.top.parent().unwrap());
        assert_eq!(w.path, ["vda1", "vda"]);
        assert_eq!(w.leaf_names(), ["vda"]);
        let st = DeviceStack::from_dev(254, 1, sys.root());
        assert_eq!(st.top.as_deref(), Some("vda1"));
        assert_eq!(st.leaves, ["vda"]);
        assert_eq!(st, DeviceStack::from(&w));
        // The disk itself: one step.
        let w = DeviceWalk::from_dev(254, 0, sys.root()).unwrap();
        assert_eq!((w.top_name(), w.disk_name()), ("vda".into(), "vda".into()));
        assert_eq!(w.path, ["vda"]);
        assert_eq!(w.leaf_names(), ["vda"]);
    }

    #[test]
    fn a_dm_device_leads_to_its_slaves_whole_disks() {
        let sys = FakeSys::new();
        sys.device("virtual/block/dm-0", (253, 0));
        sys.device("pci/nvme0n1", (259, 0));
        sys.partition("pci/nvme0n1/nvme0n1p2", (259, 2));
        sys.device("pci/sda", (8, 0));
        sys.link(
            "pci/nvme0n1/nvme0n1p2",
            "virtual/block/dm-0/slaves/nvme0n1p2",
        );
        sys.link("pci/sda", "virtual/block/dm-0/slaves/sda");
        let w = DeviceWalk::from_dev(253, 0, sys.root()).unwrap();
        // A mapping is no partition: it is its own whole disk.
        assert_eq!(
            (w.top_name(), w.disk_name()),
            ("dm-0".into(), "dm-0".into())
        );
        assert_eq!(w.path, ["dm-0", "nvme0n1p2", "nvme0n1", "sda"]);
        assert_eq!(w.leaf_names(), ["nvme0n1", "sda"]);
        assert!(w.buffered_loops.is_empty());
    }

    /// A loop device's backing file is a real file here: the walk goes on
    /// from its `st_dev`, found in the fake tree.
    #[test]
    fn a_loop_device_leads_to_the_disk_under_its_backing_file() {
        let sys = FakeSys::new();
        let backing = sys.root().join("backing.img");
        std::fs::write(&backing, b"x").unwrap();
        let (maj, min) = iopath_io::sys::dev_numbers(&backing).unwrap();
        sys.device("pci/sdz", (maj, min));
        let lo = sys.device("virtual/block/loop0", (7, 0));
        std::fs::create_dir_all(lo.join("loop")).unwrap();
        std::fs::write(
            lo.join("loop/backing_file"),
            format!("{}\n", backing.display()),
        )
        .unwrap();
        std::fs::write(lo.join("loop/dio"), "0\n").unwrap();
        let w = DeviceWalk::from_dev(7, 0, sys.root()).unwrap();
        assert_eq!(w.path, ["loop0", "sdz"]);
        assert_eq!(w.leaf_names(), ["sdz"]);
        assert_eq!(w.buffered_loops, ["loop0"]);
        // With direct I/O on, and a backing file gone: no disk below.
        std::fs::write(lo.join("loop/dio"), "1\n").unwrap();
        std::fs::remove_file(&backing).unwrap();
        let w = DeviceWalk::from_dev(7, 0, sys.root()).unwrap();
        assert_eq!(w.path, ["loop0"]);
        assert!(w.leaves.is_empty() && w.buffered_loops.is_empty());
        let st = DeviceStack::from(&w);
        assert_eq!(st.top.as_deref(), Some("loop0"));
        assert!(st.snapshot(sys.root()).is_none());
    }

    /// A block-device node's `st_rdev` (7:0) names the device itself; the
    /// `st_dev` of the node (devtmpfs, 0:6) names no block device.
    #[test]
    fn a_device_number_walks_from_that_device_only() {
        let sys = FakeSys::new();
        sys.device("virtual/block/loop0", (7, 0));
        assert_eq!(
            DeviceWalk::from_dev(7, 0, sys.root()).unwrap().top_name(),
            "loop0"
        );
        assert!(DeviceWalk::from_dev(0, 6, sys.root()).is_none());
        assert_eq!(
            DeviceStack::from_dev(0, 6, sys.root()),
            DeviceStack::default()
        );
    }

    #[test]
    fn the_mount_source_is_that_of_the_deepest_mount() {
        let mi = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                  40 22 0:52 / /mnt/b rw shared:9 - btrfs /dev/loop3 rw,space_cache=v2\n\
                  41 22 0:53 / /mnt/b/t rw shared:9 - tmpfs tmpfs rw\n";
        assert_eq!(
            mount_source(Path::new("/mnt/b/x/y"), mi).as_deref(),
            Some("/dev/loop3")
        );
        assert_eq!(
            mount_source(Path::new("/work"), mi).as_deref(),
            Some("/dev/vda")
        );
        // /mnt/bb is not under /mnt/b.
        assert_eq!(
            mount_source(Path::new("/mnt/bb"), mi).as_deref(),
            Some("/dev/vda")
        );
        assert_eq!(mount_source(Path::new("/mnt/b/t/f"), mi), None);
    }

    #[test]
    fn a_cycle_in_the_tree_stops_the_walk() {
        let sys = FakeSys::new();
        sys.device("virtual/block/md0", (9, 0));
        sys.device("virtual/block/md1", (9, 1));
        sys.link("virtual/block/md1", "virtual/block/md0/slaves/md1");
        sys.link("virtual/block/md0", "virtual/block/md1/slaves/md0");
        let w = DeviceWalk::from_dev(9, 0, sys.root()).unwrap();
        assert!(w.path.len() > 16 && w.leaves.is_empty(), "{w:?}");
    }
}

/// Fake sysfs trees for tests: device directories under `devices/`, each
/// with its `dev/block/MAJ:MIN` link.
#[cfg(test)]
pub(crate) mod fake {
    use std::path::{Path, PathBuf};

    pub struct FakeSys(tempfile::TempDir);

    impl FakeSys {
        pub fn new() -> FakeSys {
            let t = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(t.path().join("dev/block")).unwrap();
            FakeSys(t)
        }

        pub fn root(&self) -> &Path {
            self.0.path()
        }

        /// A whole device at `devices/AT`; its directory.
        pub fn device(&self, at: &str, (maj, min): (u32, u32)) -> PathBuf {
            let dir = self.root().join("devices").join(at);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("dev"), format!("{maj}:{min}\n")).unwrap();
            let link = self.root().join(format!("dev/block/{maj}:{min}"));
            std::os::unix::fs::symlink(&dir, link).unwrap();
            dir
        }

        /// A partition at `devices/DISK/PART`, DISK made first.
        pub fn partition(&self, at: &str, dev: (u32, u32)) -> PathBuf {
            let dir = self.device(at, dev);
            std::fs::write(dir.join("partition"), "1\n").unwrap();
            dir
        }

        /// A link at `devices/AT` to `devices/TARGET`.
        pub fn link(&self, target: &str, at: &str) {
            let at = self.root().join("devices").join(at);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(self.root().join("devices").join(target), at).unwrap();
        }

        /// `text` into `devices/AT`.
        pub fn write(&self, at: &str, text: &str) {
            let at = self.root().join("devices").join(at);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
        }
    }
}

//! Device truth: which block devices sit under a target, and how many bytes
//! they really moved.
//!
//! The target's `st_dev` leads to `/sys/dev/block/MAJ:MIN`; a partition is
//! followed to its whole disk; device-mapper and md devices are followed
//! through `slaves/`, and a loop device through its `loop/backing_file` to the
//! device under that file. The *leaves* of that walk are the disks whose
//! counters (`/sys/block/X/stat`) are read around every repetition.
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
        })
    }

    pub fn delta(&self, before: &DiskCounters) -> DiskCounters {
        DiskCounters {
            reads: self.reads.saturating_sub(before.reads),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            writes: self.writes.saturating_sub(before.writes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
        }
    }

    pub fn add(&mut self, o: &DiskCounters) {
        self.reads += o.reads;
        self.read_bytes += o.read_bytes;
        self.writes += o.writes;
        self.write_bytes += o.write_bytes;
    }
}

/// The disks under a target, found by walking sysfs.
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

impl DeviceStack {
    /// Walk from the file (or block device) at `target`. `sys` is the sysfs
    /// root (`/sys`; tests pass a captured tree).
    pub fn of(target: &Path, sys: &Path) -> DeviceStack {
        let Some((maj, min)) = iopath_io::sys::dev_numbers(target) else {
            return DeviceStack::default();
        };
        DeviceStack::from_dev(maj, min, sys)
    }

    /// Walk from device number `maj:min`.
    pub fn from_dev(maj: u32, min: u32, sys: &Path) -> DeviceStack {
        let mut st = DeviceStack::default();
        let link = sys.join(format!("dev/block/{maj}:{min}"));
        let Some(dir) = resolve(&link, sys) else {
            return st;
        };
        st.top = name_of(&dir);
        walk(&dir, sys, &mut st, 0);
        st
    }

    /// Sum of the leaves' counters now.
    pub fn snapshot(&self, sys: &Path) -> Option<DiskCounters> {
        if self.leaves.is_empty() {
            return None;
        }
        let mut sum = DiskCounters::default();
        for leaf in &self.leaves {
            let text = std::fs::read_to_string(sys.join("block").join(leaf).join("stat")).ok()?;
            sum.add(&DiskCounters::parse(&text)?);
        }
        Some(sum)
    }
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

fn walk(dir: &Path, sys: &Path, st: &mut DeviceStack, depth: usize) {
    let Some(name) = name_of(dir) else { return };
    st.path.push(name.clone());
    if depth > 16 {
        return; // a loop in the graph: stop rather than spin
    }
    // A partition: its disk is the parent directory.
    if dir.join("partition").exists() {
        if let Some(parent) = dir.parent() {
            walk(parent, sys, st, depth + 1);
            return;
        }
    }
    // A loop device: the disk under its backing file.
    if let Ok(backing) = std::fs::read_to_string(dir.join("loop/backing_file")) {
        let dio = std::fs::read_to_string(dir.join("loop/dio")).unwrap_or_default();
        if dio.trim() == "0" {
            st.buffered_loops.push(name.clone());
        }
        let backing = backing.trim();
        if let Some((maj, min)) = iopath_io::sys::dev_numbers(Path::new(backing)) {
            let link = sys.join(format!("dev/block/{maj}:{min}"));
            if let Some(next) = resolve(&link, sys) {
                walk(&next, sys, st, depth + 1);
                return;
            }
        }
        // The backing file lives on a file system with no block device.
        return;
    }
    // dm / md / bcache: every slave.
    let slaves: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    if slaves.is_empty() {
        if !st.leaves.contains(&name) {
            st.leaves.push(name);
        }
        return;
    }
    for s in slaves {
        if let Some(next) = resolve(&s, sys) {
            walk(&next, sys, st, depth + 1);
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
        };
        let b = DiskCounters {
            reads: 12,
            read_bytes: 612,
            writes: 5,
            write_bytes: 40,
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
}

//! The system a result was measured on: kernel, CPU, memory, file system
//! and the block device under the target, read from /proc and /sys.
//! Missing facts are `null`, never guessed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::system::metrics::blockdev::{DeviceStack, DeviceWalk, Holder};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct System {
    pub kernel: Option<String>,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub cpus: usize,
    pub memory_bytes: Option<u64>,
    /// `MemAvailable` when the run started.
    #[serde(default)]
    pub memory_available_bytes: Option<u64>,
    /// Transparent huge pages setting (`[always] madvise never`).
    pub thp: Option<String>,
    /// CPU frequency governor of cpu0.
    pub governor: Option<String>,
    /// File system of the target (or its directory); `None` for a
    /// block-device target, which has none.
    pub fs_type: Option<String>,
    pub mount_options: Option<String>,
    pub device: Option<Device>,
    /// How the target reaches its disks (`loop0 -> vda`), and the disks whose
    /// counters give `device` figures.
    #[serde(default)]
    pub device_stack: Option<DeviceStack>,
    /// NUMA nodes (CPUs, memory, distances) and online CPUs, from
    /// `/sys/devices/system`; `None` when sysfs could not be read.
    #[serde(default)]
    pub topology: Option<crate::system::topology::Topology>,
    /// The kernel's dirty-page limits for this process when the run
    /// started (`vm.dirty_*` against available memory or the memory
    /// cgroup's limit); absent when unreadable and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_limits: Option<crate::system::metrics::dirty::DirtyLimits>,
}

/// The block device under the target: its whole disk, and the partition
/// the target is or sits on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Device {
    /// Kernel name of the disk (`vda`, `nvme0n1`): the parent disk of a
    /// partition.
    pub name: String,
    /// The partition the target is (`--file /dev/vda1`) or its file system
    /// sits on, when not the whole disk.
    pub partition: Option<String>,
    pub model: Option<String>,
    /// Size of the device the target is: a partition named as the target
    /// is its own size; otherwise the whole disk's.
    pub size_bytes: Option<u64>,
    /// The whole disk's size, when `size_bytes` is a partition's.
    #[serde(default)]
    pub disk_size_bytes: Option<u64>,
    /// Devices stacked above the target's device (or above the partitions
    /// of a whole disk): dm, md, bcache (`holders/`) and loop devices
    /// backed by it, each with what it sits over. Empty when none.
    #[serde(default)]
    pub holders: Vec<Holder>,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    pub read_ahead_kb: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    /// 1 when the queue supports polled I/O (IOPOLL can work).
    pub io_poll: Option<bool>,
    pub dax: Option<bool>,
    /// NUMA node of the disk (its device, or the PCI function above it);
    /// `None` when the kernel does not know (-1) or says nothing.
    pub numa_node: Option<i64>,
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_num<T: std::str::FromStr>(p: impl AsRef<Path>) -> Option<T> {
    read_trim(p).and_then(|s| s.parse().ok())
}

/// Collect the system facts; `at` is the target file or its directory.
/// The block devices under it are walked once ([`DeviceWalk::of`]): the
/// description (`device`) and the disks whose counters are read
/// (`device_stack`, present when there are any) come from that one walk.
impl System {
    /// The target's file system and device in a few words (`ext4 on vda
    /// (QEMU HARDDISK)`), to compare ranks' targets.
    pub fn target_text(&self) -> String {
        let fs = self.fs_type.as_deref().unwrap_or("no file system");
        match &self.device {
            Some(d) => format!(
                "{fs} on {}{}",
                d.partition.as_deref().unwrap_or(&d.name),
                d.model
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ),
            None => format!("{fs}, no block device"),
        }
    }
}

pub fn collect(at: &Path) -> System {
    let sys = Path::new("/sys");
    let walk = DeviceWalk::of(at, sys);
    let uname = rustix::system::uname();
    let kernel = Some(uname.release().to_string_lossy().into_owned());
    let hostname = Some(uname.nodename().to_string_lossy().into_owned());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    // A block-device node is raw storage: the file system it sits in
    // (devtmpfs, which statfs calls tmpfs) says nothing about it.
    let raw = std::fs::metadata(at)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    let mount = mount_of(
        at,
        &std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default(),
    )
    .filter(|_| !raw);
    System {
        kernel,
        hostname,
        cpu_model: cpu_model(&cpuinfo),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes: meminfo_kb(&meminfo, "MemTotal").map(|kb| kb * 1024),
        memory_available_bytes: meminfo_kb(&meminfo, "MemAvailable").map(|kb| kb * 1024),
        thp: read_trim("/sys/kernel/mm/transparent_hugepage/enabled"),
        governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        fs_type: iopath_io::sys::fs_type_of(at)
            .ok()
            .filter(|_| !raw)
            .map(|s| s.to_string())
            .filter(|s| s != "unknown")
            .or_else(|| mount.as_ref().map(|m| m.0.clone())),
        mount_options: mount.map(|m| m.1),
        device: walk.as_ref().map(|w| Device::from_walk(w, sys)),
        device_stack: walk
            .as_ref()
            .map(DeviceStack::from)
            .filter(|st| !st.leaves.is_empty()),
        topology: Some(crate::system::topology::Topology::read(Path::new("/sys")))
            .filter(|t| !t.nodes.is_empty()),
        dirty_limits: crate::system::metrics::dirty::DirtyLimits::read(),
    }
}

pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

pub use crate::system::metrics::procfs::meminfo_kb;

/// (fs type, mount options) of the mount that holds `at`, from
/// `/proc/self/mountinfo`: the longest mount point that prefixes the path.
pub fn mount_of(at: &Path, mountinfo: &str) -> Option<(String, String)> {
    let abs = std::fs::canonicalize(at).unwrap_or_else(|_| at.to_path_buf());
    let mut best: Option<(usize, String, String)> = None;
    for line in mountinfo.lines() {
        let (left, right) = line.split_once(" - ")?;
        let f: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if f.len() < 6 || r.is_empty() {
            continue;
        }
        let mp = PathBuf::from(f[4].replace("\\040", " "));
        if abs.starts_with(&mp) {
            let depth = mp.components().count();
            if best.as_ref().is_none_or(|b| depth >= b.0) {
                best = Some((depth, r[0].to_string(), f[5].to_string()));
            }
        }
    }
    best.map(|b| (b.1, b.2))
}

/// The whole disk under `at` and its queue settings (`/sys`).
pub fn device_of(at: &Path) -> Option<Device> {
    device_under(at, Path::new("/sys"))
}

/// The whole disk under `at`, read under the sysfs root `sys`: the
/// description of [`DeviceWalk::of`]'s walk, the walk whose leaves give the
/// disk counters. `None` when no block device is under `at`.
pub fn device_under(at: &Path, sys: &Path) -> Option<Device> {
    DeviceWalk::of(at, sys).map(|w| Device::from_walk(&w, sys))
}

impl Device {
    /// The whole disk the walk started on ([`DeviceWalk::disk`]), the
    /// partition it started from when that is not the disk (described by
    /// its own size when it is the target itself), and what is stacked
    /// above.
    pub fn from_walk(w: &DeviceWalk, sys: &Path) -> Device {
        let disk = &w.disk;
        let q = disk.join("queue");
        let sectors = |dir: &Path| read_num::<u64>(dir.join("size")).map(|s| s * 512);
        let disk_size = sectors(disk);
        Device {
            name: w.disk_name(),
            partition: (w.top != w.disk).then(|| w.top_name()),
            model: read_trim(disk.join("device/model")),
            size_bytes: if w.partition_node() {
                sectors(&w.top)
            } else {
                disk_size
            },
            disk_size_bytes: disk_size.filter(|_| w.partition_node()),
            holders: w.holders.clone(),
            logical_block_size: read_num(q.join("logical_block_size")),
            physical_block_size: read_num(q.join("physical_block_size")),
            rotational: read_num::<u8>(q.join("rotational")).map(|v| v == 1),
            scheduler: read_trim(q.join("scheduler")).map(|s| active_scheduler(&s)),
            nr_requests: read_num(q.join("nr_requests")),
            read_ahead_kb: read_num(q.join("read_ahead_kb")),
            max_sectors_kb: read_num(q.join("max_sectors_kb")),
            io_poll: read_num::<u8>(q.join("io_poll")).map(|v| v == 1),
            dax: read_num::<u8>(q.join("dax")).map(|v| v == 1),
            numa_node: crate::system::topology::block_numa_node(sys, disk).map(i64::from),
        }
    }
}

/// `none [mq-deadline] kyber` -> `mq-deadline`.
pub fn active_scheduler(s: &str) -> String {
    s.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or_else(|| s.to_string())
}

/// Current UTC time as RFC 3339 (`2026-11-20T23:22:26Z`).
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// The proleptic Gregorian (year, month, day) of a day counted from
/// 1970-01-01 (civil-from-days, H. Hinnant).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Seconds since the Unix epoch as RFC 3339 UTC.
pub fn rfc3339(secs: u64) -> String {
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_216_946), "2026-11-20T23:22:26Z");
    }

    #[test]
    fn parses_captured_proc_text() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz\n";
        assert_eq!(
            cpu_model(cpuinfo).as_deref(),
            Some("Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz")
        );
        let meminfo = "MemTotal:       24624316 kB\nMemFree:        23000000 kB\nCached:  100 kB\n";
        assert_eq!(meminfo_kb(meminfo, "MemTotal"), Some(24_624_316));
        assert_eq!(meminfo_kb(meminfo, "Cached"), Some(100));
        assert_eq!(meminfo_kb(meminfo, "Dirty"), None);
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq"),
            "mq-deadline"
        );
    }

    #[test]
    fn mount_lookup_picks_the_deepest_mount() {
        let mi = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n\
                  30 22 0:26 / /dev/shm rw,nosuid,nodev shared:5 - tmpfs tmpfs rw\n";
        assert_eq!(
            mount_of(Path::new("/dev/shm/x"), mi),
            Some(("tmpfs".into(), "rw,nosuid,nodev".into()))
        );
        assert_eq!(
            mount_of(Path::new("/work/a"), mi),
            Some(("ext4".into(), "rw,relatime".into()))
        );
    }

    use crate::system::metrics::blockdev::fake::FakeSys;

    const HBA: &str = "pci0000:00/0000:00:1f.2";
    const SDA: &str = "pci0000:00/0000:00:1f.2/host0/block/sda";

    /// An AHCI disk on node 1 with one partition, and dm-0 over that
    /// partition.
    fn sda_tree() -> FakeSys {
        let sys = FakeSys::new();
        sys.device(SDA, (8, 0));
        sys.partition(&format!("{SDA}/sda1"), (8, 1));
        sys.write(&format!("{HBA}/numa_node"), "1\n");
        sys.write(&format!("{HBA}/host0/model"), "FAKE DISK\n");
        sys.link(&format!("{HBA}/host0"), &format!("{SDA}/device"));
        sys.write(&format!("{SDA}/size"), "2048\n");
        sys.write(&format!("{SDA}/queue/scheduler"), "none [mq-deadline]\n");
        sys.write(&format!("{SDA}/queue/logical_block_size"), "512\n");
        sys.write(&format!("{SDA}/queue/rotational"), "1\n");
        sys.device("virtual/block/dm-0", (253, 0));
        sys.write("virtual/block/dm-0/queue/scheduler", "[none]\n");
        sys.link(&format!("{SDA}/sda1"), "virtual/block/dm-0/slaves/sda1");
        sys
    }

    fn described(sys: &FakeSys, dev: (u32, u32)) -> (Device, DeviceStack) {
        let w = DeviceWalk::from_dev(dev.0, dev.1, sys.root()).unwrap();
        (Device::from_walk(&w, sys.root()), DeviceStack::from(&w))
    }

    #[test]
    fn a_partition_is_described_and_counted_as_its_whole_disk() {
        let sys = sda_tree();
        let (d, st) = described(&sys, (8, 1));
        assert_eq!(d.name, "sda");
        assert_eq!(d.partition.as_deref(), Some("sda1"));
        assert_eq!(d.model.as_deref(), Some("FAKE DISK"));
        assert_eq!(d.size_bytes, Some(2048 * 512));
        assert_eq!(d.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(d.logical_block_size, Some(512));
        assert_eq!(d.rotational, Some(true));
        assert_eq!(d.numa_node, Some(1));
        assert_eq!(st.top.as_deref(), Some("sda1"));
        assert_eq!(st.path, ["sda1", "sda"]);
        assert_eq!(st.leaves, ["sda"]);
        // The disk itself: the same description, no partition.
        let (whole, st) = described(&sys, (8, 0));
        assert_eq!(
            whole,
            Device {
                partition: None,
                ..d
            }
        );
        assert_eq!(st.leaves, ["sda"]);
    }

    /// A partition named as the target (`--file /dev/sda1`): its own size,
    /// its disk named with the disk's size, its own `stat` counted; what is
    /// stacked above it listed (review of issue 14: the description was the
    /// whole disk's, and no holder was listed).
    #[test]
    fn a_partition_target_is_described_as_the_partition_with_its_holders() {
        let sys = sda_tree();
        sys.write(&format!("{SDA}/sda1/size"), "1024\n");
        sys.link("virtual/block/dm-0", &format!("{SDA}/sda1/holders/dm-0"));
        let mut w = DeviceWalk::from_dev(8, 1, sys.root()).unwrap();
        w.node = true;
        let d = Device::from_walk(&w, sys.root());
        assert_eq!(
            (d.name.as_str(), d.partition.as_deref()),
            ("sda", Some("sda1"))
        );
        assert_eq!(d.size_bytes, Some(1024 * 512));
        assert_eq!(d.disk_size_bytes, Some(2048 * 512));
        assert_eq!(d.model.as_deref(), Some("FAKE DISK"), "the disk's model");
        let held = |name: &str, over: &str| Holder {
            name: name.into(),
            over: over.into(),
        };
        assert_eq!(d.holders, [held("dm-0", "sda1")]);
        let st = DeviceStack::from(&w);
        assert_eq!(st.leaves, ["sda1"]);
        // A file on the partition's file system: the disk is described and
        // counted; the holder is still listed.
        w.node = false;
        let d = Device::from_walk(&w, sys.root());
        assert_eq!((d.size_bytes, d.disk_size_bytes), (Some(2048 * 512), None));
        assert_eq!(DeviceStack::from(&w).leaves, ["sda"]);
        // The whole disk lists what sits on its partitions; dm-0 itself has
        // nothing above it.
        let whole = DeviceWalk::from_dev(8, 0, sys.root()).unwrap();
        assert_eq!(whole.holders, [held("dm-0", "sda1")]);
        assert!(DeviceWalk::from_dev(253, 0, sys.root())
            .unwrap()
            .holders
            .is_empty());
    }

    #[test]
    fn a_dm_device_is_described_as_itself_and_counted_on_its_slaves() {
        let sys = sda_tree();
        let (d, st) = described(&sys, (253, 0));
        assert_eq!(d.name, "dm-0");
        assert_eq!(d.partition, None);
        assert_eq!(d.scheduler.as_deref(), Some("none"));
        assert_eq!((d.model.as_ref(), d.numa_node), (None, None));
        assert_eq!(st.top.as_deref(), Some("dm-0"));
        assert_eq!(st.path, ["dm-0", "sda1", "sda"]);
        assert_eq!(st.leaves, ["sda"]);
    }

    /// A regular file walks from its `st_dev`, through the same function as
    /// a block-device node: nothing until the fake tree has that device.
    #[test]
    fn a_regular_file_is_on_the_device_of_its_st_dev() {
        let sys = FakeSys::new();
        let file = sys.root().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(device_under(&file, sys.root()).is_none());
        assert_eq!(DeviceStack::of(&file, sys.root()), DeviceStack::default());
        sys.device(
            "virtual/block/here",
            iopath_io::sys::dev_numbers(&file).unwrap(),
        );
        assert_eq!(device_under(&file, sys.root()).unwrap().name, "here");
        assert_eq!(DeviceStack::of(&file, sys.root()).leaves, ["here"]);
        assert!(device_under(&sys.root().join("missing"), sys.root()).is_none());
    }

    fn is_block_node(p: &Path) -> bool {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
    }

    /// This machine: a block-device node (`/dev/vda`) is that device
    /// (`st_rdev`), not the devtmpfs `/dev` it sits in; a file on tmpfs is
    /// on no block device.
    #[test]
    fn this_machine_block_nodes_and_tmpfs() {
        let sys = Path::new("/sys");
        let mut names: Vec<String> = std::fs::read_dir("/sys/block")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        match names
            .into_iter()
            .find(|n| is_block_node(&Path::new("/dev").join(n)))
        {
            Some(n) => {
                let node = Path::new("/dev").join(&n);
                let d = device_of(&node).unwrap();
                assert_eq!(
                    (d.name.as_str(), d.partition.as_deref()),
                    (n.as_str(), None)
                );
                let st = DeviceStack::of(&node, sys);
                assert_eq!(st.top.as_deref(), Some(n.as_str()));
                assert_eq!(st.path[0], n);
            }
            None => eprintln!("skipped: no /dev node of a device in /sys/block"),
        }
        if iopath_io::sys::fs_type_of(Path::new("/dev/shm")).ok() == Some("tmpfs") {
            let f = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
            assert!(DeviceWalk::of(f.path(), sys).is_none());
            assert!(device_of(f.path()).is_none());
            assert_eq!(DeviceStack::of(f.path(), sys), DeviceStack::default());
        } else {
            eprintln!("skipped: /dev/shm is not tmpfs here");
        }
    }

    /// A loop device attached for a test, detached when dropped.
    struct Loop(PathBuf);

    impl Loop {
        fn attach(file: &Path) -> Option<Loop> {
            let out = std::process::Command::new("losetup")
                .args(["-f", "--show"])
                .arg(file)
                .output()
                .ok()?;
            let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !out.status.success() || dev.is_empty() {
                eprintln!(
                    "skipped: losetup -f --show {} failed: {}",
                    file.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                return None;
            }
            Some(Loop(PathBuf::from(dev)))
        }

        fn name(&self) -> String {
            self.0.file_name().unwrap().to_string_lossy().into_owned()
        }
    }

    impl Drop for Loop {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup")
                .arg("-d")
                .arg(&self.0)
                .status();
        }
    }

    /// This machine, as root: a loop device over a file in /dev/shm is
    /// described as that loop device (not tmpfs, not nothing) and has no
    /// disk to count; one over a file on a disk reaches that disk.
    #[test]
    fn this_machine_loop_devices() {
        let sys = Path::new("/sys");
        let file_in = |dir: &Path| {
            let f = tempfile::NamedTempFile::new_in(dir).unwrap();
            f.as_file().set_len(1 << 20).unwrap();
            f
        };
        if iopath_io::sys::fs_type_of(Path::new("/dev/shm")).ok() == Some("tmpfs") {
            let f = file_in(Path::new("/dev/shm"));
            let Some(lo) = Loop::attach(f.path()) else {
                return;
            };
            let d = device_of(&lo.0).unwrap();
            assert_eq!((d.name, d.partition), (lo.name(), None));
            // Not the tmpfs of /dev it sits in, nor the one under its file.
            let s = collect(&lo.0);
            assert_eq!((s.fs_type, s.mount_options), (None, None));
            assert_eq!(s.device.map(|d| d.name), Some(lo.name()));
            assert_eq!(d.size_bytes, Some(1 << 20));
            let st = DeviceStack::of(&lo.0, sys);
            assert_eq!(st.top, Some(lo.name()));
            assert_eq!(st.path, [lo.name()]);
            assert!(st.leaves.is_empty(), "{st:?}");
        } else {
            eprintln!("skipped: /dev/shm is not tmpfs here");
        }
        let dir = tempfile::tempdir().unwrap();
        let f = file_in(dir.path());
        let Some(under) = DeviceWalk::of(f.path(), sys) else {
            eprintln!("skipped: {} is on no block device", dir.path().display());
            return;
        };
        let Some(lo) = Loop::attach(f.path()) else {
            return;
        };
        let w = DeviceWalk::of(&lo.0, sys).unwrap();
        assert_eq!(w.top_name(), lo.name());
        assert_eq!(w.path[0], lo.name());
        assert_eq!(w.path[1..], under.path[..]);
        assert_eq!(w.leaves, under.leaves);
        assert_eq!(device_of(&lo.0).unwrap().name, lo.name());
    }
}

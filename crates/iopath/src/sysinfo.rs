//! The system a result was measured on: kernel, CPU, memory, file system
//! and the block device under the target, read from /proc and /sys.
//! Missing facts are `null`, never guessed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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
    /// File system of the target (or its directory).
    pub fs_type: Option<String>,
    pub mount_options: Option<String>,
    pub device: Option<Device>,
    /// How the target reaches its disks (`loop0 -> vda`), and the disks whose
    /// counters give `device` figures.
    #[serde(default)]
    pub device_stack: Option<crate::metrics::blockdev::DeviceStack>,
    /// NUMA nodes (CPUs, memory, distances) and online CPUs, from
    /// `/sys/devices/system`; `None` when sysfs could not be read.
    #[serde(default)]
    pub topology: Option<crate::topology::Topology>,
}

/// The whole disk under the target.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Device {
    /// Kernel name of the disk (`vda`, `nvme0n1`).
    pub name: String,
    /// Partition or mapping the file system sits on, when not the disk.
    pub partition: Option<String>,
    pub model: Option<String>,
    pub size_bytes: Option<u64>,
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
pub fn collect(at: &Path) -> System {
    let uname = rustix::system::uname();
    let kernel = Some(uname.release().to_string_lossy().into_owned());
    let hostname = Some(uname.nodename().to_string_lossy().into_owned());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mount = mount_of(
        at,
        &std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default(),
    );
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
            .map(|s| s.to_string())
            .filter(|s| s != "unknown")
            .or_else(|| mount.as_ref().map(|m| m.0.clone())),
        mount_options: mount.map(|m| m.1),
        device: device_of(at),
        device_stack: None,
        topology: Some(crate::topology::Topology::read(Path::new("/sys")))
            .filter(|t| !t.nodes.is_empty()),
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

pub use crate::metrics::procfs::meminfo_kb;

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

/// The whole disk under `at` and its queue settings.
pub fn device_of(at: &Path) -> Option<Device> {
    let dir = iopath_io::sys::block_device_sysfs(at)?;
    let disk = iopath_io::sys::whole_disk(&dir);
    let name = disk.file_name()?.to_string_lossy().into_owned();
    let part = (disk != dir)
        .then(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .flatten();
    let q = disk.join("queue");
    let numa_node = crate::topology::device_numa_node(Path::new("/sys"), &name).map(i64::from);
    Some(Device {
        name,
        partition: part,
        model: read_trim(disk.join("device/model")),
        size_bytes: read_num::<u64>(disk.join("size")).map(|s| s * 512),
        logical_block_size: read_num(q.join("logical_block_size")),
        physical_block_size: read_num(q.join("physical_block_size")),
        rotational: read_num::<u8>(q.join("rotational")).map(|v| v == 1),
        scheduler: read_trim(q.join("scheduler")).map(|s| active_scheduler(&s)),
        nr_requests: read_num(q.join("nr_requests")),
        read_ahead_kb: read_num(q.join("read_ahead_kb")),
        max_sectors_kb: read_num(q.join("max_sectors_kb")),
        io_poll: read_num::<u8>(q.join("io_poll")).map(|v| v == 1),
        dax: read_num::<u8>(q.join("dax")).map(|v| v == 1),
        numa_node,
    })
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

/// Seconds since the Unix epoch as RFC 3339 UTC (civil-from-days, H. Hinnant).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
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
}

//! NUMA topology from sysfs: the nodes, their CPUs and memory, the distances
//! between them, and the node a block device hangs off.
//!
//! Everything is read under a sysfs root (`/sys` normally; tests pass a
//! captured tree):
//!
//! - `devices/system/node/online`: the online nodes (CPU-list format);
//! - `devices/system/node/nodeN/cpulist`: node N's CPUs (empty for a
//!   CPU-less node, such as a CXL or HBM memory expander);
//! - `devices/system/node/nodeN/meminfo`: `Node N MemTotal: ... kB` (0 for a
//!   memoryless node);
//! - `devices/system/node/nodeN/distance`: the SLIT distances from N to
//!   every online node, in ascending node id, space-separated (`10 21`);
//! - `devices/system/cpu/online`: the online CPUs.
//!
//! A kernel built without NUMA has no `devices/system/node`: the topology is
//! then one node 0 holding every online CPU, with memory and distances
//! unknown (`source` = `"assumed"`). Missing facts stay empty or `None`,
//! never guessed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The largest CPU number [`parse_cpulist`] accepts: far above any kernel's
/// `NR_CPUS` (8192 at most today), low enough that a typo like `0-4000000000`
/// is an error rather than an allocation.
pub const MAX_CPU: u32 = 65_535;

/// The machine's NUMA nodes and online CPUs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// Online nodes in ascending id.
    pub nodes: Vec<Node>,
    /// Online CPUs, ascending (`devices/system/cpu/online`; when that file is
    /// missing, the CPUs of all nodes together).
    pub cpus_online: Vec<u32>,
    /// `"sysfs"`: read from `devices/system/node`; `"assumed"`: no such
    /// directory (a kernel without NUMA), so one node 0 with every online
    /// CPU; empty when nothing could be read.
    #[serde(default)]
    pub source: String,
}

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: u32,
    /// CPUs of the node, ascending; empty for a CPU-less node.
    pub cpus: Vec<u32>,
    /// `MemTotal` of the node; `Some(0)` for a memoryless node, `None` when
    /// unknown.
    pub memory_bytes: Option<u64>,
    /// Distances from this node to every node of [`Topology::nodes`], in the
    /// same (ascending id) order, as the kernel lists them; 10 is local.
    /// Empty when unknown.
    pub distances: Vec<u32>,
}

impl Topology {
    /// Read the topology under `sys_root` (`/sys`). Never fails: what cannot
    /// be read is left out (see the module documentation).
    pub fn read(sys_root: &Path) -> Topology {
        let system = sys_root.join("devices/system");
        let cpus_online = read_cpulist(&system.join("cpu/online"));
        let node_dir = system.join("node");
        if !node_dir.is_dir() {
            let Some(cpus) = cpus_online.filter(|c| !c.is_empty()) else {
                return Topology::default();
            };
            return Topology {
                nodes: vec![Node {
                    id: 0,
                    cpus: cpus.clone(),
                    memory_bytes: None,
                    distances: Vec::new(),
                }],
                cpus_online: cpus,
                source: "assumed".into(),
            };
        }
        let ids = read_cpulist(&node_dir.join("online")).unwrap_or_else(|| node_dirs(&node_dir));
        let nodes: Vec<Node> = ids
            .into_iter()
            .map(|id| read_node(&node_dir.join(format!("node{id}")), id))
            .collect();
        let cpus_online = cpus_online.unwrap_or_else(|| {
            let mut all: Vec<u32> = nodes.iter().flat_map(|n| n.cpus.iter().copied()).collect();
            all.sort_unstable();
            all.dedup();
            all
        });
        Topology {
            nodes,
            cpus_online,
            source: "sysfs".into(),
        }
    }

    /// The node with this id.
    pub fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The node that holds `cpu`.
    pub fn node_of_cpu(&self, cpu: u32) -> Option<u32> {
        self.nodes
            .iter()
            .find(|n| n.cpus.binary_search(&cpu).is_ok())
            .map(|n| n.id)
    }

    /// The node ids, ascending.
    pub fn node_ids(&self) -> Vec<u32> {
        self.nodes.iter().map(|n| n.id).collect()
    }

    /// The distance from node `from` to node `to` (10 = local), when the
    /// kernel gave one.
    pub fn distance(&self, from: u32, to: u32) -> Option<u32> {
        let idx = self.nodes.iter().position(|n| n.id == to)?;
        let from = self.node(from)?;
        if from.distances.len() != self.nodes.len() {
            return None;
        }
        from.distances.get(idx).copied()
    }
}

/// A CPU-list file; `Some(empty)` for an empty file (a CPU-less node),
/// `None` when missing or malformed.
fn read_cpulist(path: &Path) -> Option<Vec<u32>> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    if text.is_empty() {
        return Some(Vec::new());
    }
    parse_cpulist(text).ok()
}

/// The `nodeN` directories, when `online` cannot be read.
fn node_dirs(node_dir: &Path) -> Vec<u32> {
    let mut ids: Vec<u32> = std::fs::read_dir(node_dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    ids.sort_unstable();
    ids
}

fn read_node(dir: &Path, id: u32) -> Node {
    let memory_bytes = std::fs::read_to_string(dir.join("meminfo"))
        .ok()
        .and_then(|t| node_mem_total_kb(&t))
        .map(|kb| kb * 1024);
    let distances = std::fs::read_to_string(dir.join("distance"))
        .ok()
        .and_then(|t| {
            t.split_whitespace()
                .map(|w| w.parse().ok())
                .collect::<Option<Vec<u32>>>()
        })
        .unwrap_or_default();
    Node {
        id,
        cpus: read_cpulist(&dir.join("cpulist")).unwrap_or_default(),
        memory_bytes,
        distances,
    }
}

/// `MemTotal` in kB from a node's `meminfo` (`Node 0 MemTotal:  24512345 kB`).
fn node_mem_total_kb(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.split_whitespace().last()? != "MemTotal" {
            return None;
        }
        v.split_whitespace().next()?.parse().ok()
    })
}

/// Parse a CPU list as the kernel writes it and `--cpus` takes it
/// (`0-3,8,10-11`) into sorted, unique CPU numbers. Spaces around pieces are
/// allowed; an empty list, an empty piece, a backwards range, a number over
/// [`MAX_CPU`] or anything else is an error naming the bad piece.
pub fn parse_cpulist(s: &str) -> Result<Vec<u32>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty CPU list".into());
    }
    let mut ranges = Vec::new();
    for piece in s.split(',') {
        let p = piece.trim();
        if p.is_empty() {
            return Err(format!("empty piece in CPU list \"{s}\""));
        }
        let (a, b) = match p.split_once('-') {
            Some((a, b)) => (cpu_number(a, p)?, cpu_number(b, p)?),
            None => {
                let n = cpu_number(p, p)?;
                (n, n)
            }
        };
        if b < a {
            return Err(format!("CPU range \"{p}\" runs backwards"));
        }
        ranges.push((a, b));
    }
    // A bitmap bounded by MAX_CPU, however many overlapping pieces there are.
    let top = ranges.iter().map(|r| r.1).max().unwrap_or(0) as usize;
    let mut set = vec![false; top + 1];
    for (a, b) in ranges {
        for c in a..=b {
            set[c as usize] = true;
        }
    }
    Ok(set
        .iter()
        .enumerate()
        .filter(|(_, on)| **on)
        .map(|(c, _)| c as u32)
        .collect())
}

fn cpu_number(t: &str, piece: &str) -> Result<u32, String> {
    let t = t.trim();
    if t.is_empty() {
        return Err(format!("\"{piece}\": a CPU number is missing"));
    }
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("\"{piece}\": \"{t}\" is not a CPU number"));
    }
    match t.parse::<u32>() {
        Ok(n) if n <= MAX_CPU => Ok(n),
        _ => Err(format!(
            "\"{piece}\": CPU {t} is out of range (at most {MAX_CPU})"
        )),
    }
}

/// The inverse of [`parse_cpulist`]: sorted, unique, runs of two or more as
/// ranges (`0-3,8,10-11`), as the kernel writes them; `""` for no CPUs.
pub fn format_cpulist(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let start = v[i];
        let mut end = start;
        while i + 1 < v.len() && v[i + 1] == end + 1 {
            i += 1;
            end = v[i];
        }
        out.push(if end > start {
            format!("{start}-{end}")
        } else {
            start.to_string()
        });
        i += 1;
    }
    out.join(",")
}

/// The NUMA node of block device `disk` (`nvme0n1`, as in `/sys/block`), or
/// `None` when unknown (the kernel's -1, or no `numa_node` anywhere).
///
/// `block/<disk>/device/numa_node` when that exists; else up the resolved
/// device path (`.../0000:81:00.0/nvme/nvme0` -> `0000:81:00.0`) to the
/// first directory with a `numa_node` file, which decides, -1 included.
/// An NVMe multipath disk hangs off a virtual subsystem; its paths
/// (`block/<disk>/multipath/*`) are followed instead, and give the node when
/// they all agree. Links are resolved, and never followed out of `sys_root`.
pub fn device_numa_node(sys_root: &Path, disk: &str) -> Option<i32> {
    if disk.is_empty() || disk == "." || disk == ".." || disk.contains('/') {
        return None;
    }
    block_numa_node(sys_root, &sys_root.join("block").join(disk))
}

/// [`device_numa_node`] of the block device whose sysfs directory is `dir`
/// (`/sys/block/vda`, or where that leads), as a walk down the devices
/// under a file finds it. `None` as well when `dir` is not inside
/// `sys_root`.
pub fn block_numa_node(sys_root: &Path, dir: &Path) -> Option<i32> {
    let root = std::fs::canonicalize(sys_root).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    if !dir.starts_with(&root) {
        return None;
    }
    if let Some(found) = numa_node_upwards(&root, &dir.join("device")) {
        return found;
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join("multipath"))
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    let mut node = None;
    for p in paths {
        match numa_node_upwards(&root, &p).flatten() {
            Some(n) if node.is_none_or(|m| m == n) => node = Some(n),
            Some(_) => return None, // paths on different nodes
            None => {}
        }
    }
    node
}

/// From `start` (resolved, and inside `root`) up to the first directory with
/// a `numa_node` file: `Some(Some(n))`, `Some(None)` for -1 or garbage, and
/// `None` when there is no such file before `root`.
fn numa_node_upwards(root: &Path, start: &Path) -> Option<Option<i32>> {
    let mut at = std::fs::canonicalize(start).ok()?;
    while at.starts_with(root) && at != root {
        if let Ok(text) = std::fs::read_to_string(at.join("numa_node")) {
            return Some(text.trim().parse::<i32>().ok().filter(|n| *n >= 0));
        }
        if !at.pop() {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/topology")
            .join(name)
    }

    /// Real capture: a 2-vCPU VM, one node, a virtio disk.
    #[test]
    fn one_node_capture() {
        let t = Topology::read(&fixture("1node"));
        assert_eq!(t.source, "sysfs");
        assert_eq!(t.node_ids(), vec![0]);
        assert_eq!(t.cpus_online, vec![0, 1]);
        let n = t.node(0).unwrap();
        assert_eq!(n.cpus, vec![0, 1]);
        assert_eq!(n.memory_bytes, Some(20_406_852 * 1024));
        assert_eq!(n.distances, vec![10]);
        assert_eq!(t.node_of_cpu(1), Some(0));
        assert_eq!(t.node_of_cpu(2), None);
        assert_eq!(t.distance(0, 0), Some(10));
        assert!(t.node(1).is_none());
        // The virtio device has no numa_node; its PCI function says -1.
        assert_eq!(device_numa_node(&fixture("1node"), "vda"), None);
        assert_eq!(device_numa_node(&fixture("1node"), "sda"), None);
    }

    #[test]
    fn two_socket_box() {
        let t = Topology::read(&fixture("2node"));
        assert_eq!(t.node_ids(), vec![0, 1]);
        assert_eq!(t.cpus_online, (0..32).collect::<Vec<u32>>());
        let n0 = t.node(0).unwrap();
        let n1 = t.node(1).unwrap();
        assert_eq!(n0.cpus, parse_cpulist("0-7,16-23").unwrap());
        assert_eq!(n1.cpus, parse_cpulist("8-15,24-31").unwrap());
        assert_eq!(n0.memory_bytes, Some(65_855_844 * 1024));
        assert_eq!(n1.memory_bytes, Some(66_058_108 * 1024));
        assert_eq!(n0.distances, vec![10, 21]);
        assert_eq!(n1.distances, vec![21, 10]);
        assert_eq!(t.distance(0, 1), Some(21));
        assert_eq!(t.distance(1, 1), Some(10));
        for (cpu, node) in [
            (0, 0),
            (7, 0),
            (8, 1),
            (15, 1),
            (16, 0),
            (23, 0),
            (24, 1),
            (31, 1),
        ] {
            assert_eq!(t.node_of_cpu(cpu), Some(node), "cpu {cpu}");
        }
        assert_eq!(t.node_of_cpu(32), None);
        // nvme0 has no numa_node: its PCI function 0000:81:00.0 says 1.
        assert_eq!(device_numa_node(&fixture("2node"), "nvme0n1"), Some(1));
        // sda's SCSI device is four levels under its AHCI function (node 0).
        assert_eq!(device_numa_node(&fixture("2node"), "sda"), Some(0));
    }

    #[test]
    fn four_nodes_with_a_memoryless_and_a_cpuless_node() {
        let t = Topology::read(&fixture("4node"));
        assert_eq!(t.node_ids(), vec![0, 1, 2, 3]);
        assert_eq!(t.cpus_online, (0..12).collect::<Vec<u32>>());
        let cpus: Vec<Vec<u32>> = t.nodes.iter().map(|n| n.cpus.clone()).collect();
        assert_eq!(
            cpus,
            vec![
                vec![0, 1, 2, 3],
                vec![4, 5, 6, 7],
                vec![8, 9, 10, 11],
                vec![]
            ]
        );
        let mem: Vec<Option<u64>> = t.nodes.iter().map(|n| n.memory_bytes).collect();
        assert_eq!(
            mem,
            vec![
                Some(16_303_540 * 1024),
                Some(16_514_552 * 1024),
                Some(0),
                Some(32 << 30)
            ]
        );
        let d: Vec<Vec<u32>> = t.nodes.iter().map(|n| n.distances.clone()).collect();
        assert_eq!(
            d,
            vec![
                vec![10, 16, 16, 22],
                vec![16, 10, 22, 16],
                vec![16, 22, 10, 16],
                vec![22, 16, 16, 10]
            ]
        );
        assert_eq!(t.distance(0, 3), Some(22));
        assert_eq!(t.distance(2, 1), Some(22));
        assert_eq!(t.node_of_cpu(9), Some(2));
        assert_eq!(t.node_of_cpu(12), None);
        // Native NVMe multipath: the disk hangs off a virtual subsystem; its
        // one path leads to the controller's PCI function on node 1.
        assert_eq!(device_numa_node(&fixture("4node"), "nvme0n1"), Some(1));
        // A loop device has no device at all.
        assert_eq!(device_numa_node(&fixture("4node"), "loop0"), None);
        assert_eq!(device_numa_node(&fixture("4node"), "../block"), None);
    }

    #[test]
    fn the_topology_round_trips_through_json() {
        let t = Topology::read(&fixture("4node"));
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"memory_bytes\":0"), "{json}");
        assert_eq!(serde_json::from_str::<Topology>(&json).unwrap(), t);
        let old: Topology = serde_json::from_str(r#"{"nodes":[],"cpus_online":[0]}"#).unwrap();
        assert_eq!(old.source, "");
    }

    #[test]
    fn no_node_directory_means_one_assumed_node() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("devices/system/cpu")).unwrap();
        std::fs::write(d.path().join("devices/system/cpu/online"), "0-5\n").unwrap();
        let t = Topology::read(d.path());
        assert_eq!(t.source, "assumed");
        assert_eq!(t.node_ids(), vec![0]);
        assert_eq!(t.node(0).unwrap().cpus, (0..6).collect::<Vec<u32>>());
        assert_eq!(t.node(0).unwrap().memory_bytes, None);
        assert!(t.node(0).unwrap().distances.is_empty());
        assert_eq!(t.distance(0, 0), None);
        assert_eq!(t.node_of_cpu(5), Some(0));
        // Nothing at all: an empty topology.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(Topology::read(empty.path()), Topology::default());
    }

    #[test]
    fn node_directories_stand_in_for_a_missing_online_file() {
        let d = tempfile::tempdir().unwrap();
        let node = d.path().join("devices/system/node");
        for (id, cpus) in [(0, "0-1"), (2, "2-3")] {
            std::fs::create_dir_all(node.join(format!("node{id}"))).unwrap();
            std::fs::write(node.join(format!("node{id}/cpulist")), format!("{cpus}\n")).unwrap();
        }
        let t = Topology::read(d.path());
        assert_eq!(t.node_ids(), vec![0, 2]);
        assert_eq!(t.cpus_online, vec![0, 1, 2, 3]); // no cpu/online: the nodes' CPUs
        assert_eq!(t.node_of_cpu(3), Some(2));
        assert_eq!(t.node(2).unwrap().memory_bytes, None);
    }

    #[test]
    fn device_links_never_leave_the_sysfs_root() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("numa_node"), "3\n").unwrap();
        std::fs::create_dir_all(outside.path().join("dev")).unwrap();
        let sys = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(sys.path().join("block/x")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("dev"),
            sys.path().join("block/x/device"),
        )
        .unwrap();
        assert_eq!(device_numa_node(sys.path(), "x"), None);
        // A plain directory with the file (old kernels: device is the PCI
        // function itself).
        std::fs::create_dir_all(sys.path().join("block/y/device")).unwrap();
        std::fs::write(sys.path().join("block/y/device/numa_node"), "2\n").unwrap();
        assert_eq!(device_numa_node(sys.path(), "y"), Some(2));
    }

    #[test]
    fn cpulists_parse_and_format() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpulist("5,1,1-2,3\n").unwrap(), vec![1, 2, 3, 5]);
        assert_eq!(parse_cpulist(" 0 - 1 , 4 ").unwrap(), vec![0, 1, 4]);
        assert_eq!(parse_cpulist("7-7").unwrap(), vec![7]);
        assert_eq!(parse_cpulist("65535").unwrap(), vec![MAX_CPU]);
        assert_eq!(format_cpulist(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpulist(&[11, 3, 3, 0, 1, 2]), "0-3,11");
        assert_eq!(format_cpulist(&[0, 1]), "0-1");
        assert_eq!(format_cpulist(&[4]), "4");
        assert_eq!(format_cpulist(&[]), "");
        for s in [
            "0",
            "0-1",
            "0-7,16-23",
            "8-15,24-31",
            "1,3,5-6,9",
            "0-65535",
        ] {
            assert_eq!(format_cpulist(&parse_cpulist(s).unwrap()), s);
        }
        for cpus in [
            vec![0u32],
            vec![2, 4, 6],
            (0..100).collect(),
            vec![0, 2, 3, 4, 9],
        ] {
            assert_eq!(parse_cpulist(&format_cpulist(&cpus)).unwrap(), cpus);
        }
    }

    #[test]
    fn bad_cpulists_name_the_bad_piece() {
        let err = |s: &str| parse_cpulist(s).unwrap_err();
        assert_eq!(err(""), "empty CPU list");
        assert_eq!(err("  "), "empty CPU list");
        assert!(err("0-").contains("\"0-\""), "{}", err("0-"));
        assert!(err("-3").contains("\"-3\""));
        assert_eq!(err("1,3-1"), "CPU range \"3-1\" runs backwards");
        assert_eq!(err("0,a"), "\"a\": \"a\" is not a CPU number");
        assert!(err("1,,2").contains("empty piece"));
        assert!(err("0,").contains("empty piece"));
        assert!(err("+3").contains("\"+3\""));
        assert!(err("1-2-3").contains("\"1-2-3\""));
        assert!(err("0-7:2").contains("\"0-7:2\""));
        assert!(err("65536").contains("out of range"));
        assert!(err("0-4294967295").contains("\"0-4294967295\""));
        assert!(err("99999999999999999999").contains("out of range"));
    }

    /// This machine: at least one node, and CPU 0 on one of them.
    #[test]
    fn this_machine_parses() {
        let t = Topology::read(Path::new("/sys"));
        assert!(!t.nodes.is_empty(), "{t:?}");
        assert!(t.node_of_cpu(0).is_some(), "{t:?}");
        assert!(t.cpus_online.contains(&0), "{t:?}");
        for n in &t.nodes {
            assert!(n.distances.is_empty() || n.distances.len() == t.nodes.len());
        }
    }
}

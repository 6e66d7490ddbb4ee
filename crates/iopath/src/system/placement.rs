//! Where a case runs: the CPUs its workers are pinned to, the NUMA memory
//! policy of its I/O buffers, and the CPU of io_uring's SQPOLL thread —
//! checked against the machine's topology before anything runs, and what
//! really happened recorded per case.

use iopath_io::numa::{MemPolicy, MemPolicyMode};
use serde::{Deserialize, Serialize};

use crate::model::UsageError;
use crate::system::topology::{format_cpulist, Topology};

/// What a case asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// The CPUs workers run on; `None`: wherever the scheduler puts them.
    pub cpus: Option<Vec<u32>>,
    /// Worker i on `cpus[i % n]` alone (`--cpus`); otherwise every worker
    /// may use the whole set (`--numa-node`, a preset's node).
    pub round_robin: bool,
    /// The node the CPUs were chosen by, if they were.
    pub cpu_node: Option<u32>,
    /// The I/O buffers' memory policy; `None`: the kernel's default (the
    /// node of the CPU that first touches them).
    pub mem: Option<MemPolicy>,
    /// The CPU io_uring's SQPOLL thread is bound to.
    pub sqpoll_cpu: Option<u32>,
}

impl Placement {
    /// The CPU set worker `i` is pinned to, if any.
    pub fn cpus_of_worker(&self, i: usize) -> Option<Vec<u32>> {
        let cpus = self.cpus.as_ref().filter(|c| !c.is_empty())?;
        Some(if self.round_robin {
            vec![cpus[i % cpus.len()]]
        } else {
            cpus.clone()
        })
    }

    /// `true` when nothing is asked: the default placement.
    pub fn is_default(&self) -> bool {
        self.cpus.is_none() && self.mem.is_none() && self.sqpoll_cpu.is_none()
    }
}

/// `bind:1`, `interleave:0,1`, `local`.
pub fn policy_name(p: &MemPolicy) -> String {
    p.to_string()
}

pub fn parse_policy_mode(s: &str) -> Result<MemPolicyMode, String> {
    match s.trim() {
        "bind" => Ok(MemPolicyMode::Bind),
        "preferred" => Ok(MemPolicyMode::Preferred),
        "interleave" => Ok(MemPolicyMode::Interleave),
        "local" => Ok(MemPolicyMode::Local),
        other => Err(format!(
            "unknown memory policy '{other}'; valid: bind, preferred, interleave, local"
        )),
    }
}

/// What the flags ask for, checked against `topo` and `allowed` (the CPUs
/// this process may run on: cgroup cpusets and `taskset` narrow them): CPUs
/// and nodes that do not exist, or cannot be used, are usage errors that
/// list what can.
pub fn from_flags(
    cpus: Option<&str>,
    numa_node: Option<u32>,
    mem_node: Option<u32>,
    mem_policy: Option<MemPolicyMode>,
    sqpoll_cpu: Option<u32>,
    topo: &Topology,
    allowed: &[u32],
) -> Result<Placement, UsageError> {
    let mut p = Placement {
        sqpoll_cpu,
        ..Placement::default()
    };
    if cpus.is_some() && numa_node.is_some() {
        return Err(UsageError(
            "--cpus and --numa-node both say where workers run: give one".into(),
        ));
    }
    if let Some(list) = cpus {
        let set = crate::system::topology::parse_cpulist(list)
            .map_err(|e| UsageError(format!("--cpus {list}: {e}")))?;
        if set.is_empty() {
            return Err(UsageError(format!("--cpus {list} names no CPU")));
        }
        check_cpus("--cpus", &set, topo)?;
        check_allowed("--cpus", &set, allowed)?;
        p.cpus = Some(set);
        p.round_robin = true;
    }
    if let Some(n) = numa_node {
        let node = node_with_cpus("--numa-node", n, topo)?;
        let usable = usable_cpus(&node.cpus, allowed);
        if usable.is_empty() {
            return Err(UsageError(format!(
                "--numa-node {n}: this process may not run on any CPU of node {n} (CPUs {}); it may run on {}",
                format_cpulist(&node.cpus),
                format_cpulist(allowed)
            )));
        }
        p.cpus = Some(usable);
        p.cpu_node = Some(n);
    }
    if let Some(cpu) = sqpoll_cpu {
        check_cpus("--sqpoll-cpu", &[cpu], topo)?;
    }
    match (mem_node, mem_policy) {
        (None, None) => {}
        (None, Some(MemPolicyMode::Local)) => {
            p.mem = Some(MemPolicy {
                mode: MemPolicyMode::Local,
                nodes: Vec::new(),
            })
        }
        (None, Some(_)) => {
            return Err(UsageError(
                "--mem-policy bind, preferred and interleave need --mem-node N (local needs none)"
                    .into(),
            ))
        }
        (Some(n), mode) => {
            let mode = mode.unwrap_or(MemPolicyMode::Bind);
            if mode == MemPolicyMode::Local {
                return Err(UsageError(
                    "--mem-policy local places buffers on the node of the CPU that touches them: drop --mem-node".into(),
                ));
            }
            node_with_memory("--mem-node", n, topo)?;
            p.mem = Some(MemPolicy {
                mode,
                nodes: vec![n],
            });
        }
    }
    Ok(p)
}

/// `cpus` this process may use (all of them when `allowed` is unknown).
pub fn usable_cpus(cpus: &[u32], allowed: &[u32]) -> Vec<u32> {
    if allowed.is_empty() {
        return cpus.to_vec();
    }
    cpus.iter()
        .copied()
        .filter(|c| allowed.contains(c))
        .collect()
}

fn check_allowed(flag: &str, cpus: &[u32], allowed: &[u32]) -> Result<(), UsageError> {
    if let Some(bad) = cpus
        .iter()
        .find(|c| !allowed.is_empty() && !allowed.contains(c))
    {
        return Err(UsageError(format!(
            "{flag}: CPU {bad} is online but this process may not run on it (a cgroup cpuset or taskset); it may run on {}",
            format_cpulist(allowed)
        )));
    }
    Ok(())
}

fn check_cpus(flag: &str, cpus: &[u32], topo: &Topology) -> Result<(), UsageError> {
    if let Some(bad) = cpus.iter().find(|c| !topo.cpus_online.contains(c)) {
        return Err(UsageError(format!(
            "{flag}: CPU {bad} does not exist or is offline; online CPUs: {}",
            format_cpulist(&topo.cpus_online)
        )));
    }
    Ok(())
}

fn nodes_list(topo: &Topology) -> String {
    topo.nodes
        .iter()
        .map(|n| {
            format!(
                "{} (CPUs {}{})",
                n.id,
                if n.cpus.is_empty() {
                    "none".to_string()
                } else {
                    format_cpulist(&n.cpus)
                },
                n.memory_bytes
                    .map(|m| format!(", {}", crate::model::units::fmt_bytes(m)))
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn node_with_cpus<'t>(
    flag: &str,
    n: u32,
    topo: &'t Topology,
) -> Result<&'t crate::system::topology::Node, UsageError> {
    match topo.node(n) {
        None => Err(UsageError(format!(
            "{flag} {n}: no such NUMA node; nodes here: {}",
            nodes_list(topo)
        ))),
        Some(node) if node.cpus.is_empty() => Err(UsageError(format!(
            "{flag} {n}: node {n} has no CPUs to run workers on; nodes here: {}",
            nodes_list(topo)
        ))),
        Some(node) => Ok(node),
    }
}

fn node_with_memory(flag: &str, n: u32, topo: &Topology) -> Result<(), UsageError> {
    match topo.node(n) {
        None => Err(UsageError(format!(
            "{flag} {n}: no such NUMA node; nodes here: {}",
            nodes_list(topo)
        ))),
        Some(node) if node.memory_bytes == Some(0) => Err(UsageError(format!(
            "{flag} {n}: node {n} has no memory; nodes here: {}",
            nodes_list(topo)
        ))),
        Some(_) => Ok(()),
    }
}

/// What a case's placement really was, as recorded in its result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlacementResult {
    /// The CPUs asked for (all workers together); empty: not pinned.
    #[serde(default)]
    pub cpus: Vec<u32>,
    /// The CPUs the workers were allowed on, read back with
    /// `sched_getaffinity` inside each worker (all workers together).
    #[serde(default)]
    pub affinity: Vec<u32>,
    /// Each worker's own affinity, in worker order (round-robin pinning
    /// gives worker i the i-th CPU of the list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worker_affinity: Vec<Vec<u32>>,
    /// The nodes of those CPUs.
    #[serde(default)]
    pub cpu_nodes: Vec<u32>,
    /// The buffers' policy asked for (`bind:1`, `local`); null: default.
    #[serde(default)]
    pub mem_policy: Option<String>,
    /// Pages of the I/O buffers on each node, read back page by page
    /// (`move_pages` query), first repetition, all workers together.
    #[serde(default)]
    pub buffer_nodes: Vec<(u32, u64)>,
    #[serde(default)]
    pub sqpoll_cpu: Option<u32>,
    /// The device's NUMA node, when the kernel knows it.
    #[serde(default)]
    pub device_node: Option<u32>,
}

impl PlacementResult {
    /// `cpu 0-3 (n0) · mem n0` for the table.
    pub fn short(&self) -> String {
        let cpu = if self.affinity.is_empty() {
            "cpu ?".to_string()
        } else {
            format!(
                "cpu {}{}",
                format_cpulist(&self.affinity),
                if self.cpu_nodes.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (n{})",
                        self.cpu_nodes
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(",n")
                    )
                }
            )
        };
        let total: u64 = self.buffer_nodes.iter().map(|(_, p)| p).sum();
        let mem = if total == 0 {
            "mem ?".to_string()
        } else {
            let parts: Vec<String> = self
                .buffer_nodes
                .iter()
                .filter(|(_, p)| *p > 0)
                .map(|(n, p)| {
                    if *p == total {
                        format!("n{n}")
                    } else {
                        format!("n{n} {:.0}%", *p as f64 / total as f64 * 100.0)
                    }
                })
                .collect();
            format!("mem {}", parts.join(" "))
        };
        format!("{cpu} · {mem}")
    }
}

/// One placement per (CPU node, memory node) pair of the study.
pub fn numa_placements(
    topo: &crate::system::topology::Topology,
    allowed: &[u32],
    device_node: Option<u32>,
) -> Vec<(Option<String>, Placement)> {
    // With one node holding memory, binding to it changes nothing and may
    // be refused (seccomp): the buffers go where they would anyway.
    let one_mem_node = topo
        .nodes
        .iter()
        .filter(|n| n.memory_bytes != Some(0))
        .count()
        <= 1;
    numa_pairs(topo, device_node)
        .into_iter()
        .map(|(c, m, name)| {
            let cpus = usable_cpus(
                &topo.node(c).map(|n| n.cpus.clone()).unwrap_or_default(),
                allowed,
            );
            (
                Some(name),
                Placement {
                    cpus: Some(cpus),
                    round_robin: false,
                    cpu_node: Some(c),
                    mem: (!one_mem_node).then(|| iopath_io::numa::MemPolicy {
                        mode: iopath_io::numa::MemPolicyMode::Bind,
                        nodes: vec![m],
                    }),
                    sqpoll_cpu: None,
                },
            )
        })
        .collect()
}

/// The (CPU node, memory node) pairs of the placement study, relative to
/// the device's node: local/local, local/remote, remote/local,
/// remote/remote, "remote" being the node farthest from local that has
/// CPUs (for workers) or memory (for buffers). One pair on one node.
pub fn numa_pairs(
    topo: &crate::system::topology::Topology,
    device_node: Option<u32>,
) -> Vec<(u32, u32, String)> {
    let with_cpus: Vec<u32> = topo
        .nodes
        .iter()
        .filter(|n| !n.cpus.is_empty())
        .map(|n| n.id)
        .collect();
    let with_mem: Vec<u32> = topo
        .nodes
        .iter()
        .filter(|n| n.memory_bytes != Some(0))
        .map(|n| n.id)
        .collect();
    let local = device_node
        .filter(|n| with_cpus.contains(n))
        .or_else(|| with_cpus.first().copied())
        .unwrap_or(0);
    let local_mem = if with_mem.contains(&local) {
        local
    } else {
        with_mem.first().copied().unwrap_or(local)
    };
    let distance = |a: u32, b: u32| topo.distance(a, b).unwrap_or(if a == b { 10 } else { 20 });
    let farthest = |from: u32, among: &[u32]| {
        among
            .iter()
            .copied()
            .filter(|&n| n != from)
            .max_by_key(|&n| (distance(from, n), std::cmp::Reverse(n)))
    };
    let remote_cpu = farthest(local, &with_cpus);
    let remote_mem = farthest(local_mem, &with_mem);
    let name = |c: u32, m: u32| {
        format!(
            "cpu n{c} {} / mem n{m} {}",
            if c == local { "local" } else { "remote" },
            if m == local_mem { "local" } else { "remote" }
        )
    };
    let mut pairs = vec![(local, local_mem)];
    if let Some(rm) = remote_mem {
        pairs.push((local, rm));
    }
    if let Some(rc) = remote_cpu {
        pairs.push((rc, local_mem));
        if let Some(rm) = remote_mem {
            pairs.push((rc, rm));
        }
    }
    pairs.into_iter().map(|(c, m)| (c, m, name(c, m))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::topology::Node;

    fn two_nodes() -> Topology {
        Topology {
            nodes: vec![
                Node {
                    id: 0,
                    cpus: vec![0, 1, 2, 3],
                    memory_bytes: Some(8 << 30),
                    distances: vec![10, 21],
                },
                Node {
                    id: 1,
                    cpus: vec![4, 5, 6, 7],
                    memory_bytes: Some(8 << 30),
                    distances: vec![21, 10],
                },
            ],
            cpus_online: (0..8).collect(),
            ..Topology::default()
        }
    }

    #[test]
    fn flags_become_a_placement() {
        let t = two_nodes();
        let p = from_flags(Some("1,3-4"), None, Some(1), None, Some(7), &t, &[]).unwrap();
        assert_eq!(p.cpus, Some(vec![1, 3, 4]));
        assert_eq!(p.cpus_of_worker(0), Some(vec![1]));
        assert_eq!(p.cpus_of_worker(4), Some(vec![3]), "round robin");
        assert_eq!(policy_name(p.mem.as_ref().unwrap()), "bind:1");
        let p = from_flags(
            None,
            Some(1),
            None,
            Some(MemPolicyMode::Local),
            None,
            &t,
            &[],
        )
        .unwrap();
        assert_eq!(
            p.cpus_of_worker(3),
            Some(vec![4, 5, 6, 7]),
            "the whole node"
        );
        assert_eq!(policy_name(p.mem.as_ref().unwrap()), "local");
        assert!(from_flags(None, None, None, None, None, &t, &[])
            .unwrap()
            .is_default());
    }

    #[test]
    fn what_does_not_exist_is_named_with_what_does() {
        let t = two_nodes();
        let e = from_flags(Some("9"), None, None, None, None, &t, &[])
            .unwrap_err()
            .0;
        assert!(e.contains("CPU 9") && e.contains("online CPUs: 0-7"), "{e}");
        let e = from_flags(None, Some(2), None, None, None, &t, &[])
            .unwrap_err()
            .0;
        assert!(
            e.contains("no such NUMA node") && e.contains("1 (CPUs 4-7"),
            "{e}"
        );
        let e = from_flags(None, None, Some(5), None, None, &t, &[])
            .unwrap_err()
            .0;
        assert!(e.contains("--mem-node 5"), "{e}");
        let e = from_flags(None, None, None, Some(MemPolicyMode::Bind), None, &t, &[])
            .unwrap_err()
            .0;
        assert!(e.contains("need --mem-node"), "{e}");
        let e = from_flags(Some("0"), Some(0), None, None, None, &t, &[])
            .unwrap_err()
            .0;
        assert!(e.contains("give one"), "{e}");
        let e = from_flags(None, None, None, None, Some(64), &t, &[])
            .unwrap_err()
            .0;
        assert!(e.contains("--sqpoll-cpu") && e.contains("CPU 64"), "{e}");
    }

    #[test]
    fn a_cpuset_narrows_what_can_be_asked() {
        let t = two_nodes();
        let e = from_flags(Some("5"), None, None, None, None, &t, &[0, 1, 4])
            .unwrap_err()
            .0;
        assert!(
            e.contains("may not run on it") && e.contains("0-1,4"),
            "{e}"
        );
        let p = from_flags(None, Some(1), None, None, None, &t, &[0, 1, 4]).unwrap();
        assert_eq!(
            p.cpus,
            Some(vec![4]),
            "the node's CPUs this process may use"
        );
        let e = from_flags(None, Some(1), None, None, None, &t, &[0, 1])
            .unwrap_err()
            .0;
        assert!(e.contains("may not run on any CPU of node 1"), "{e}");
    }

    #[test]
    fn the_short_form_says_cpus_and_buffer_nodes() {
        let r = PlacementResult {
            affinity: vec![0, 1, 2, 3],
            cpu_nodes: vec![0],
            buffer_nodes: vec![(0, 30), (1, 10)],
            ..PlacementResult::default()
        };
        assert_eq!(r.short(), "cpu 0-3 (n0) · mem n0 75% n1 25%");
    }
}

//! The plan: default cases, the placement study's pairs, refusals.

use super::*;

/// The numa preset's plan on a fixture topology.
fn numa_plan(fixture: &str, device_node: Option<u32>) -> Vec<Case> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/topology")
        .join(fixture);
    let topo = crate::system::topology::Topology::read(&root);
    let numa = crate::import::preset::find("numa").unwrap();
    let origin = Origin {
        preset: Some("numa".into()),
        ..Origin::default()
    };
    Plan::from_spec_on(&numa.job, &origin, &topo, &topo.cpus_online, &|| {
        device_node
    })
    .unwrap()
    .cases
}

/// The numa preset's cases on a fixture topology, one line each.
fn numa_cases(fixture: &str, device_node: Option<u32>) -> String {
    numa_plan(fixture, device_node)
        .iter()
        .map(|c| {
            format!(
                "{} {} {} | {} | cpus {} | mem {}",
                c.label.as_deref().unwrap_or(""),
                c.method_name(),
                c.pattern.name(),
                c.pair.as_deref().unwrap_or(""),
                c.placement
                    .cpus
                    .as_deref()
                    .map_or("-".into(), crate::system::topology::format_cpulist),
                c.placement
                    .mem
                    .as_ref()
                    .map_or("-".into(), crate::system::placement::policy_name),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The pair of CPUs and memory both on node 0.
const LOCAL_PAIR: &str = "cpu n0 local / mem n0 local";

#[test]
fn numa_preset_pairs_on_two_nodes_relative_to_the_device() {
    // The NVMe disk of the 2-node fixture hangs off node 1.
    insta::assert_snapshot!("numa_2node_device_on_1", numa_cases("2node", Some(1)));
    let unknown = numa_plan("2node", None);
    assert!(
        unknown
            .iter()
            .any(|c| c.pair.as_deref() == Some(LOCAL_PAIR)),
        "{unknown:?}"
    );
}

#[test]
fn numa_preset_on_four_nodes_picks_the_farthest_nodes_with_cpus_and_memory() {
    // The fixture's NVMe (multipath) disk is on node 1.
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/topology/4node");
    let dev = crate::system::topology::device_numa_node(&root, "nvme0n1")
        .and_then(|n| u32::try_from(n).ok());
    assert_eq!(dev, Some(1));
    insta::assert_snapshot!("numa_4node_device_on_1", numa_cases("4node", dev));
}

#[test]
fn numa_pairs_never_repeat_when_the_device_node_has_no_memory() {
    use crate::system::topology::{Node, Topology};
    let topo = Topology {
        nodes: vec![
            Node {
                id: 0,
                cpus: vec![0, 1],
                memory_bytes: Some(8 << 30),
                distances: vec![10, 21],
            },
            Node {
                id: 1,
                cpus: vec![2, 3],
                memory_bytes: Some(0),
                distances: vec![21, 10],
            },
        ],
        cpus_online: vec![0, 1, 2, 3],
        ..Topology::default()
    };
    let pairs = numa_pairs(&topo, Some(1));
    let mut seen: Vec<(u32, u32)> = pairs.iter().map(|(c, m, _)| (*c, *m)).collect();
    let n = seen.len();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), n, "{pairs:?}");
    // CPUs local to the device (node 1), memory nearest to it (node 0,
    // the only node with memory): two pairs, no remote memory.
    assert_eq!(seen, vec![(0, 0), (1, 0)], "{pairs:?}");
}

#[test]
fn numa_preset_on_one_node_has_one_pair() {
    let cases = numa_plan("1node", Some(0));
    assert_eq!(cases.len(), 3, "{cases:?}");
    assert!(
        cases.iter().all(|c| c.pair.as_deref() == Some(LOCAL_PAIR)),
        "{cases:?}"
    );
}
use crate::cli::Command;

fn plan(args: &[&str]) -> Result<Plan, UsageError> {
    let mut v = vec!["iopath", "run"];
    v.extend_from_slice(args);
    let Some(Command::Run(r)) = crate::cli::parse_from(v).unwrap().command else {
        unreachable!()
    };
    crate::cli::commands::plan_of(&r)
}

#[test]
fn default_plan_compares_all_real_methods_on_four_patterns() {
    let p = plan(&[]).unwrap();
    // Nine methods on four patterns, and mmap+random beside mmap on
    // the two random ones.
    assert_eq!(p.cases.len(), 4 * 9 + 2);
    assert!(p.cases.iter().all(|c| !c.method.is_null()));
    let hinted: Vec<(Pattern, String)> = p
        .cases
        .iter()
        .filter(|c| c.hint.is_some())
        .map(|c| (c.pattern, c.method_name()))
        .collect();
    assert_eq!(
        hinted,
        [
            (Pattern::RandRead, "mmap+random".to_string()),
            (Pattern::RandWrite, "mmap+random".to_string())
        ]
    );
    let rr = p
        .cases
        .iter()
        .find(|c| c.pattern == Pattern::RandRead)
        .unwrap();
    assert_eq!((rr.block_size, rr.queue_depth_requested), (4096, 32));
    let sr = p.cases.iter().find(|c| c.pattern == Pattern::Read).unwrap();
    assert_eq!((sr.block_size, sr.queue_depth_requested), (1 << 20, 8));
    assert_eq!(p.target, TargetSpec::TempIn(PathBuf::from(".")));
}

#[test]
fn duplicates_are_dropped_and_order_kept() {
    let p = plan(&[
        "--methods",
        "direct,buffered,direct",
        "--patterns",
        "randread",
    ])
    .unwrap();
    assert_eq!(p.methods(), vec![Method::Direct, Method::Buffered]);
}

#[test]
fn impossible_sizes_are_usage_errors() {
    assert!(plan(&["--size", "0"]).is_err());
    let e = plan(&["--size", "64k", "--bs", "1M"]).unwrap_err();
    assert!(e.0.contains("less than one"), "{e}");
    let e = plan(&["--size", "1M", "--threads", "4", "--bs", "512k"]).unwrap_err();
    assert!(e.0.contains("4 thread"), "{e}");
    assert!(plan(&["--time", "0s"]).is_err());
    assert!(plan(&["--allow-write"]).is_err());
}

//! Placement: workers pinned (`--cpus`, `--numa-node`), buffers placed
//! (`--mem-node`, `--mem-policy`), both read back and recorded per case;
//! invalid CPUs and nodes refused with what exists; the numa preset on this
//! machine (one node: one pair, and it says so).

mod common;
use common::{case, iopath, leftovers, run_json, scratch};

fn online_cpus() -> Vec<u64> {
    let t = iopath::system::topology::Topology::read(std::path::Path::new("/sys"));
    t.cpus_online.iter().map(|&c| u64::from(c)).collect()
}

#[test]
fn pinned_workers_and_placed_buffers_are_read_back_per_case() {
    let dir = scratch();
    let last = *online_cpus().last().unwrap();
    let v = run_json(
        dir.path(),
        &[
            "--methods",
            "buffered,uring",
            "--patterns",
            "randread",
            "--size",
            "1M",
            "--time",
            "20ms",
            "--cpus",
            &last.to_string(),
            "--mem-node",
            "0",
        ],
    );
    assert!(
        v["system"]["topology"]["nodes"][0]["cpus"].is_array(),
        "{}",
        v["system"]
    );
    for m in ["buffered", "uring"] {
        let p = &case(&v, m, "randread")["placement"];
        assert_eq!(p["cpus"], serde_json::json!([last]), "{p}");
        // Read back inside the worker with sched_getaffinity.
        assert_eq!(p["affinity"], serde_json::json!([last]), "{p}");
        assert_eq!(p["mem_policy"], "bind:0", "{p}");
        let nodes = p["buffer_nodes"].as_array().unwrap();
        assert!(!nodes.is_empty(), "{p}");
        // Every page of the buffers, counted page by page, is on node 0.
        assert!(
            nodes
                .iter()
                .all(|n| n[0] == 0 && n[1].as_u64().unwrap() > 0),
            "{p}"
        );
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn round_robin_over_a_cpu_list_and_a_whole_node() {
    let dir = scratch();
    let cpus = online_cpus();
    let list = cpus
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let threads = cpus.len().to_string();
    let v = run_json(
        dir.path(),
        &[
            "--methods",
            "direct",
            "--patterns",
            "randread",
            "--size",
            "1M",
            "--time",
            "20ms",
            "--threads",
            &threads,
            "--cpus",
            &list,
        ],
    );
    let p = &case(&v, "direct", "randread")["placement"];
    // One worker per CPU: together they were on every CPU of the list, and
    // worker i, read back from inside it, on the i-th CPU alone.
    assert_eq!(p["affinity"], serde_json::json!(cpus), "{p}");
    let per_worker = p["worker_affinity"].as_array().unwrap();
    assert_eq!(per_worker.len(), cpus.len(), "{p}");
    for (i, a) in per_worker.iter().enumerate() {
        assert_eq!(*a, serde_json::json!([cpus[i]]), "worker {i}: {p}");
    }
    let v = run_json(
        dir.path(),
        &[
            "--methods",
            "direct",
            "--patterns",
            "randread",
            "--size",
            "1M",
            "--time",
            "20ms",
            "--numa-node",
            "0",
        ],
    );
    let node0: Vec<u64> = v["system"]["topology"]["nodes"][0]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    let p = &case(&v, "direct", "randread")["placement"];
    assert_eq!(p["affinity"], serde_json::json!(node0), "{p}");
    assert_eq!(p["cpu_nodes"], serde_json::json!([0]), "{p}");
}

#[test]
fn cpus_and_nodes_that_do_not_exist_are_refused_with_what_exists() {
    let dir = scratch();
    for (args, want) in [
        (vec!["--cpus", "4000"], "CPU 4000 does not exist"),
        (vec!["--cpus", "0-"], "--cpus 0-"),
        (
            vec!["--numa-node", "63"],
            "no such NUMA node; nodes here: 0",
        ),
        (vec!["--mem-node", "63"], "--mem-node 63: no such NUMA node"),
        (vec!["--mem-policy", "interleave"], "need --mem-node"),
        (vec!["--mem-policy", "sideways"], "unknown memory policy"),
        (vec!["--sqpoll-cpu", "4000"], "--sqpoll-cpu: CPU 4000"),
        (vec!["--cpus", "0", "--numa-node", "0"], "give one"),
        (
            vec!["--preset", "numa", "--cpus", "0"],
            "places every case itself",
        ),
    ] {
        let out = iopath()
            .args(["run", "--dir"])
            .arg(dir.path())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn presets_show_numa_lists_three_cases_per_pair() {
    let out = iopath().args(["presets", "show", "numa"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let topo = iopath::system::topology::Topology::read(std::path::Path::new("/sys"));
    let pairs = iopath::plan::numa_pairs(&topo, None).len();
    // A row whose cells wrap (the table fits 120 columns) goes on in
    // lines with an empty first cell: its "other" cell (the 11th) is the
    // pieces joined.
    let mut rows: Vec<String> = Vec::new();
    for l in text
        .lines()
        .filter(|l| l.starts_with("│ ") && !l.starts_with("│ # "))
    {
        let cells: Vec<&str> = l.trim_matches('│').split('┆').map(str::trim).collect();
        let other = cells.get(10).copied().unwrap_or("");
        match rows.last_mut() {
            Some(row) if cells[0].is_empty() => {
                if !other.is_empty() {
                    row.push(' ');
                    row.push_str(other);
                }
            }
            _ => rows.push(other.to_string()),
        }
    }
    assert_eq!(rows.len(), 3 * pairs, "{text}");
    // Each row says its pair and where it runs.
    assert!(
        rows.iter()
            .all(|r| r.contains(" local / mem ") && r.contains("cpus ")),
        "{text}"
    );
}

#[test]
fn the_numa_preset_on_one_node_says_there_is_nothing_to_compare() {
    let dir = scratch();
    let out = iopath()
        .args(["run", "--preset", "numa", "--dir"])
        .arg(dir.path())
        .args(["--size", "20M", "--repeat", "2", "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let nodes = iopath::system::topology::Topology::read(std::path::Path::new("/sys"))
        .nodes
        .len();
    assert!(
        text.contains("placement: each (CPU node, memory node) pair"),
        "{text}"
    );
    if nodes == 1 {
        assert!(text.contains("one NUMA node here"), "{text}");
        // The grid's text cells wrap to keep it in 120 columns: a row goes
        // on in lines whose pattern cell is empty.
        let mut pairs: Vec<String> = Vec::new();
        for l in text
            .lines()
            .skip_while(|l| !l.starts_with("placement: each"))
            .skip_while(|l| !l.starts_with('╞'))
            .skip(1)
            .take_while(|l| l.starts_with('│'))
        {
            let cells: Vec<&str> = l.trim_matches('│').split('┆').map(str::trim).collect();
            match pairs.last_mut() {
                Some(p) if cells[1].is_empty() && !cells[2].is_empty() => {
                    p.push(' ');
                    p.push_str(cells[2]);
                }
                _ if !cells[1].is_empty() => pairs.push(cells[2].to_string()),
                _ => {}
            }
        }
        assert!(
            !pairs.is_empty() && pairs.iter().all(|p| p == "cpu n0 local / mem n0 local"),
            "{pairs:?}\n{text}"
        );
    }
    assert!(leftovers(dir.path()).is_empty());
}

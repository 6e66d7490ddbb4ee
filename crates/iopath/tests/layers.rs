//! The layers of `crates/iopath/src` (docs/architecture.md): every
//! top-level module has a place in [`LAYERS`], bottom first, and may use
//! only the modules in its own layer or below. A module that names one
//! above it (`crate::run` from `plan`) fails this test, as does a module
//! missing from the list. Test code (after `#[cfg(test)]`) is not counted:
//! tests may reach up for fixtures. The same reading as
//! `../shared/tools/layers.py`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Bottom first. A module may use any module of its own layer or a lower
/// one; within a layer, no cycle.
const LAYERS: &[(&str, &[&str])] = &[
    ("plain data and vocabulary", &["model"]),
    ("recorded traces (data)", &["trace"]),
    ("statistics", &["stats"]),
    ("the machine, read", &["system"]),
    ("job sources", &["import"]),
    ("planning", &["plan"]),
    ("results", &["result"]),
    ("running", &["run", "record"]),
    ("analysis", &["analysis"]),
    ("reports and words", &["report"]),
    ("command line", &["cli"]),
];

/// Every top-level module of `src` and the modules its non-test code names
/// (`crate::NAME`).
fn edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: BTreeMap<String, Vec<std::path::PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if let Some(m) = name.strip_suffix(".rs") {
            if m != "lib" && m != "main" {
                files.entry(m.to_string()).or_default().push(p);
            }
        } else if p.is_dir() && name != "snapshots" {
            let mut stack = vec![p];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap() {
                    let q = e.unwrap().path();
                    if q.is_dir() {
                        stack.push(q);
                    } else if q.extension().is_some_and(|x| x == "rs") {
                        files.entry(name.clone()).or_default().push(q);
                    }
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for (m, paths) in &files {
        let mut uses = BTreeSet::new();
        for p in paths {
            let text = std::fs::read_to_string(p).unwrap();
            let body = without_tests(&without_comments(&text));
            // In a top-level module (`src/x.rs`, `src/x/mod.rs`), `super::`
            // is the crate.
            let top = p.parent() == Some(src) || p.ends_with(format!("{m}/mod.rs"));
            let mut prefixes = vec!["crate::"];
            if top {
                prefixes.push("super::");
            }
            for prefix in prefixes {
                for (i, _) in body.match_indices(prefix) {
                    for name in names_after(&body[i + prefix.len()..]) {
                        if files.contains_key(&name) && name != *m {
                            uses.insert(name);
                        }
                    }
                }
            }
        }
        out.insert(m.clone(), uses);
    }
    out
}

/// `text` without `//` comments (doc comments included).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without the items marked `#[cfg(test)]` (a `mod tests { .. }`,
/// a `mod tests;`, a `use ..;`): only they, not what follows them.
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let item = &rest[i + "#[cfg(test)]".len()..];
        // The item ends at its first `;` at depth 0, or at the `}` that
        // closes its first `{`.
        let mut depth = 0usize;
        let mut end = item.len();
        for (j, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = j + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The modules named right after `crate::`: one (`runner::Runner`), or
/// the first segment of each member of a group (`{runner::Runner, plan}`).
fn names_after(s: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect()
    };
    let Some(group) = s.strip_prefix('{') else {
        return vec![ident(s)];
    };
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && !c.is_whitespace() => {
                names.push(ident(&group[i..]));
                start = false;
            }
            _ => {}
        }
    }
    names
}

/// What breaks the layering: upward uses, modules without a layer, cycles
/// within a layer.
fn violations(
    edges: &BTreeMap<String, BTreeSet<String>>,
    layers: &[(&str, &[&str])],
) -> Vec<String> {
    let rank = |m: &str| layers.iter().position(|(_, ms)| ms.contains(&m));
    let mut out = Vec::new();
    for (m, uses) in edges {
        let Some(rm) = rank(m) else {
            out.push(format!("module `{m}` has no layer: add it to LAYERS (tests/layers.rs) and docs/architecture.md"));
            continue;
        };
        for u in uses {
            if let Some(ru) = rank(u) {
                if ru > rm {
                    out.push(format!(
                        "`{m}` ({}) uses `{u}` ({}), a layer above it",
                        layers[rm].0, layers[ru].0
                    ));
                }
            }
        }
    }
    // Cycles within a layer: a module reaching itself through modules of
    // its own layer.
    for m in edges.keys() {
        let Some(rm) = rank(m) else { continue };
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = edges[m].iter().collect();
        while let Some(n) = stack.pop() {
            if rank(n) != Some(rm) || !seen.insert(n.clone()) {
                continue;
            }
            if n == m {
                out.push(format!(
                    "`{m}` is in a cycle within the {} layer",
                    layers[rm].0
                ));
                break;
            }
            stack.extend(edges.get(n).into_iter().flatten());
        }
    }
    out
}

#[test]
fn no_module_uses_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let e = edges(&src);
    assert!(
        e.contains_key("plan") && e.contains_key("run"),
        "read {}",
        src.display()
    );
    let v = violations(&e, LAYERS);
    assert!(v.is_empty(), "the layers are broken:\n  {}", v.join("\n  "));
}

/// The folders show the layers: every module of `src` (but `lib.rs` and
/// `main.rs`) is a folder, and each is one layer.
#[test]
fn every_layer_is_a_folder_and_every_folder_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut flat = Vec::new();
    let mut folders = BTreeSet::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            folders.insert(name);
        } else if name != "lib.rs" && name != "main.rs" {
            flat.push(name);
        }
    }
    assert!(
        flat.is_empty(),
        "modules outside a layer's folder: {flat:?}"
    );
    let layers: BTreeSet<String> = LAYERS
        .iter()
        .flat_map(|(_, ms)| ms.iter().map(|m| m.to_string()))
        .collect();
    assert_eq!(folders, layers, "the folders of src and the layers differ");
}

#[test]
fn an_upward_use_a_missing_module_and_a_cycle_are_caught() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("low.rs"), "use crate::high::X;\n").unwrap();
    std::fs::write(
        src.join("high.rs"),
        "use crate::low::Y;\n#[cfg(test)]\nuse crate::stray::Z;\n#[cfg(test)]\nmod tests { use crate::stray::W; }\n",
    )
    .unwrap();
    std::fs::create_dir(src.join("stray")).unwrap();
    std::fs::write(
        src.join("stray/mod.rs"),
        "// crate::low\n/// [`crate::high`]\n",
    )
    .unwrap();
    let e = edges(src);
    assert_eq!(
        e["high"],
        BTreeSet::from(["low".to_string()]),
        "test code is not counted"
    );
    assert!(
        e["stray"].is_empty(),
        "comments are not uses: {:?}",
        e["stray"]
    );
    let v = violations(&e, &[("bottom", &["low"]), ("top", &["high"])]);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].contains("`low` (bottom) uses `high` (top)"), "{v:?}");
    assert!(v[1].contains("`stray` has no layer"), "{v:?}");
    let v = violations(&e, &[("one", &["low", "high", "stray"])]);
    assert!(
        v.iter().any(|s| s.contains("cycle within the one layer")),
        "{v:?}"
    );
    // The forms a use can take: a group, `super::` from a top-level
    // module, and code after a test item.
    std::fs::write(
        src.join("low.rs"),
        "use crate::{\n    high::X,\n    stray,\n};\n",
    )
    .unwrap();
    assert_eq!(
        edges(src)["low"],
        BTreeSet::from(["high".to_string(), "stray".to_string()])
    );
    std::fs::write(
        src.join("low.rs"),
        "#[cfg(test)]\nuse std::fmt;\nuse super::high::X;\n",
    )
    .unwrap();
    assert_eq!(edges(src)["low"], BTreeSet::from(["high".to_string()]));
}

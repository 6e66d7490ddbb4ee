//! What differs between the runs becomes notes.

use super::*;

#[test]
fn differences_between_the_runs_become_notes() {
    let a = run(vec![case("null", "read", None, &BASE)]);
    let same = report(
        vec![case("null", "read", None, &BASE)],
        vec![case("null", "read", None, &BASE)],
        None,
    );
    assert!(same.notes.is_empty(), "{:?}", same.notes);

    let mut b = a.clone();
    b.system.fs_type = Some("xfs".into());
    b.system.device = Some(crate::system::sysinfo::Device {
        name: "nvme0n1".into(),
        ..Default::default()
    });
    b.config.cache = crate::model::CacheState::Warm;
    b.config.data = "zeros".into();
    b.tool.version = "0.2.0".into();
    b.interrupted = true;
    let r = compare(
        std::slice::from_ref(&a),
        std::slice::from_ref(&b),
        side("old"),
        side("new"),
        None,
        0.0,
    );
    let all = r.notes.join("\n");
    for want in [
        "file system differs: old unknown, new xfs",
        "device differs: old none, new nvme0n1",
        "cache state differs: old cold, new warm",
        "data differs: old random, new zeros",
        "tool version differs: old iopath 0.1.0 (result schema 3), new iopath 0.2.0 (result schema 3)",
        "new was interrupted",
    ] {
        assert!(all.contains(want), "missing {want:?} in:\n{all}");
    }
    assert_eq!(r.notes.len(), 6, "{all}");
    // Several runs: an interrupted one is named by its place.
    let r = compare(
        std::slice::from_ref(&a),
        &[a.clone(), b],
        side("old"),
        side("new"),
        None,
        0.0,
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("new (run 2) was interrupted")),
        "{:?}",
        r.notes
    );
}

#[test]
fn nothing_matched_and_too_few_repetitions_are_noted() {
    let r = report(
        vec![case("null", "read", None, &BASE)],
        vec![case("null", "write", None, &BASE)],
        None,
    );
    assert!(
        r.notes.iter().any(|n| n.contains("nothing was compared")),
        "{:?}",
        r.notes
    );
    let r = report(
        vec![case("null", "read", None, &[100.0, 101.0])],
        vec![case("null", "read", None, &[50.0, 51.0])],
        None,
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("too few repetitions") && n.contains("2 in A, 2 in B")),
        "{:?}",
        r.notes
    );
    // Four against four can be real (2/70 < 5%): no note.
    let r = report(
        vec![case("null", "read", None, &BASE[..4])],
        vec![case("null", "read", None, &times(0.5)[..4])],
        None,
    );
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(r.cases[0].label, Some(Label::Slower));
}

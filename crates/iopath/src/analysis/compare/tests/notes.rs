//! What differs between the runs becomes notes.

use super::*;
use crate::model::CacheState;

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
    let tool = |version: &str| ToolId {
        name: "iopath".into(),
        version: version.into(),
        schema_version: SCHEMA_VERSION,
    };
    let data = |data: &str| DataSource {
        data: data.into(),
        sparse: false,
    };
    assert_eq!(
        r.notes,
        [
            Note::FileSystemDiffers {
                a: None,
                b: Some("xfs".into())
            },
            Note::DeviceDiffers {
                a: None,
                b: Some(DeviceId {
                    name: "nvme0n1".into(),
                    model: None
                })
            },
            Note::CacheStateDiffers {
                a: CacheState::Cold,
                b: CacheState::Warm
            },
            Note::DataDiffers {
                a: data("random"),
                b: data("zeros")
            },
            Note::ToolVersionDiffers {
                a: tool("0.1.0"),
                b: tool("0.2.0")
            },
            Note::Interrupted {
                side: Which::B,
                run: None
            },
        ]
    );
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
        r.notes.contains(&Note::Interrupted {
            side: Which::B,
            run: Some(2)
        }),
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
    assert_eq!(r.notes, [Note::NothingMatched]);
    let r = report(
        vec![case("null", "read", None, &[100.0, 101.0])],
        vec![case("null", "read", None, &[50.0, 51.0])],
        None,
    );
    assert_eq!(r.notes, [Note::TooFewRepetitions { cases: 1, first: 0 }]);
    assert_eq!((r.cases[0].a_n, r.cases[0].b_n), (2, 2));
    // Four against four can be real (2/70 < 5%): no note.
    let r = report(
        vec![case("null", "read", None, &BASE[..4])],
        vec![case("null", "read", None, &times(0.5)[..4])],
        None,
    );
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(r.cases[0].label, Some(Label::Slower));
}

use iopath_io::{Hint, Method, SyncPolicy};

use super::*;
use crate::model::{CacheState, Pattern};
use crate::result::{CaseResult, Job};

/// The value written as JSON, and read back from that JSON.
fn round_trip<T>(value: &T) -> (String, T)
where
    T: Serialize + for<'de> Deserialize<'de>,
{
    let json = serde_json::to_string(value).unwrap();
    let back = serde_json::from_str(&json).unwrap();
    (json, back)
}

#[test]
fn every_method_and_hint_keeps_its_json_spelling() {
    for m in Method::ALL {
        let plain = MethodName::from(m);
        let (json, back) = round_trip(&plain);
        assert_eq!(json, format!("\"{}\"", m.name()));
        assert_eq!(back, plain);
        assert!(back == m, "{json} reads back as {m:?}");
        for h in Hint::ALL {
            let hinted = MethodName::from(MethodChoice {
                hint: Some(h),
                ..m.into()
            });
            let (json, back) = round_trip(&hinted);
            assert_eq!(json, format!("\"{}+{}\"", m.name(), h.name()));
            assert_eq!(back, hinted);
            // A hinted method is not the plain one.
            assert!(back != m && back.base() == Some(m), "{json}");
        }
    }
}

#[test]
fn a_method_name_this_build_does_not_know_is_kept_as_written() {
    for name in ["fast", "mmap + random", "mmap+fast", "direct#2", ""] {
        let m: MethodName = serde_json::from_str(&format!("\"{name}\"")).unwrap();
        assert_eq!(m, MethodName::Other(name.to_string()), "{name}");
        assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{name}\""));
    }
    // What it reads back as is still there for the classifiers.
    assert_eq!(
        MethodName::parse("mmap + random").base(),
        Some(Method::Mmap)
    );
    assert_eq!(MethodName::parse("fast").base(), None);
}

#[test]
fn every_entrant_keeps_its_json_spelling() {
    let direct = MethodChoice::from(Method::Direct);
    let cases = [
        (
            "direct",
            Entrant::Method {
                method: direct,
                arm: None,
            },
        ),
        (
            "direct#2",
            Entrant::Method {
                method: direct,
                arm: Some(2),
            },
        ),
        (
            "mmap+random",
            Entrant::Method {
                method: MethodChoice {
                    hint: Some(Hint::Random),
                    ..Method::Mmap.into()
                },
                arm: None,
            },
        ),
        (
            "uring 512k Q5T1",
            Entrant::Variant("uring 512k Q5T1".into()),
        ),
        ("SEQ1M Q8T1", Entrant::Variant("SEQ1M Q8T1".into())),
        // Spellings that would not read back the same stay as written.
        ("direct#02", Entrant::Variant("direct#02".into())),
        ("direct#", Entrant::Variant("direct#".into())),
        ("fast", Entrant::Variant("fast".into())),
    ];
    for (name, want) in cases {
        let e: Entrant = serde_json::from_str(&format!("\"{name}\"")).unwrap();
        assert_eq!(e, want, "{name}");
        assert_eq!(serde_json::to_string(&e).unwrap(), format!("\"{name}\""));
    }
    assert!(Entrant::parse("direct") == Method::Direct);
    assert!(Entrant::parse("direct#2") != Method::Direct);
    assert!(Entrant::parse("direct 4k Q1T1") != Method::Direct);
}

#[test]
fn patterns_sync_policies_cache_states_and_target_kinds_keep_their_json_spelling() {
    let patterns = [
        (Pattern::Read, "read"),
        (Pattern::Write, "write"),
        (Pattern::RandRead, "randread"),
        (Pattern::RandWrite, "randwrite"),
        (Pattern::RandRw, "randrw"),
        (Pattern::Copy, "copy"),
    ];
    for (p, name) in patterns {
        assert_eq!(round_trip(&p), (format!("\"{name}\""), p));
        assert_eq!(p.to_string(), name);
    }
    for (c, name) in [
        (CacheState::Cold, "cold"),
        (CacheState::Warm, "warm"),
        (CacheState::AsIs, "as-is"),
    ] {
        assert_eq!(round_trip(&c), (format!("\"{name}\""), c));
    }
    for (k, name) in [
        (TargetKind::Temporary, "temporary"),
        (TargetKind::File, "file"),
        (TargetKind::BlockDevice, "block-device"),
    ] {
        assert_eq!(round_trip(&k), (format!("\"{name}\""), k));
        assert_eq!(k.to_string(), name);
    }
    for (s, name) in [
        (SyncPolicy::None, "none"),
        (SyncPolicy::End, "end"),
        (SyncPolicy::Dsync, "dsync"),
        (SyncPolicy::Each, "each"),
        (SyncPolicy::Osync, "osync"),
    ] {
        let job = Job {
            sync: s,
            ..CaseResult::default().job()
        };
        let (json, back) = round_trip(&job);
        assert!(json.contains(&format!("\"sync\":\"{name}\"")), "{json}");
        assert_eq!(back, job);
    }
}

#[test]
fn an_unknown_sync_policy_or_cache_state_is_refused_with_the_valid_names() {
    let job = serde_json::to_value(CaseResult::default().job()).unwrap();
    let mut bad = job.clone();
    bad["sync"] = "sometimes".into();
    let e = serde_json::from_value::<Job>(bad).unwrap_err().to_string();
    assert!(e.contains("unknown sync policy 'sometimes'"), "{e}");
    let e = serde_json::from_str::<CacheState>("\"tepid\"").unwrap_err();
    assert!(
        e.to_string().contains("expected cold, warm or as-is"),
        "{e}"
    );
}

//! Every output format behind one trait (the exporters).

/// Each format's output for the saved fixture run, as sizes and digests:
/// a refactoring of the exporters must leave every byte as it was.
#[cfg(test)]
mod tests {
    use crate::report::testdata::fixture;
    use crate::report::{charts, csv, groups, html, json, markdown, table};
    use crate::result::RunResult;

    /// FNV-1a, 64 bits: enough to tell two outputs apart in a snapshot.
    fn digest(bytes: &[u8]) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{:>7} bytes  fnv1a64 {h:016x}", bytes.len())
    }

    fn outputs(r: &RunResult) -> Vec<(String, Vec<u8>)> {
        let text = |t: &str| {
            crate::model::untrusted::visible(t)
                .into_owned()
                .into_bytes()
        };
        let mut out = vec![
            ("terminal".into(), table::render(r, false).into_bytes()),
            (
                "terminal --wide".into(),
                table::render(r, true).into_bytes(),
            ),
            (
                "--json".into(),
                json::bytes_of(r, json::JsonFormat::Iopath).unwrap(),
            ),
            (
                "--json-format fio".into(),
                json::bytes_of(r, json::JsonFormat::Fio).unwrap(),
            ),
            ("--csv".into(), text(&csv::render(r).unwrap())),
            ("--markdown".into(), text(&markdown::render(r))),
            ("--html".into(), html::render(r).unwrap().into_bytes()),
        ];
        for (job, cases) in groups(r) {
            for fig in charts::figures(&job, &cases) {
                out.push((
                    format!("--png-dir {}.png", fig.id),
                    charts::png(&fig, 2).unwrap(),
                ));
            }
        }
        out
    }

    #[test]
    fn every_exporter_writes_the_fixture_run() {
        let all = outputs(&fixture());
        assert!(all.iter().any(|(name, _)| name.starts_with("--png-dir")));
        for (name, bytes) in &all {
            assert!(!bytes.is_empty(), "{name} wrote nothing");
        }
        let listed: Vec<String> = all
            .iter()
            .map(|(name, bytes)| format!("{name:<45} {}", digest(bytes)))
            .collect();
        insta::assert_snapshot!("outputs_of_the_fixture_run", listed.join("\n"));
    }
}

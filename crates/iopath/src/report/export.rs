//! Every output format behind one trait: an [`Exporter`] turns a
//! [`RunResult`] into the bytes of its format (one document, or for PNG the
//! files of a directory), and [`write`] puts them where its flag said. The
//! formats: the terminal tables ([`Terminal`]), the JSON document
//! (`report::json::Json`) and its fio shape (`report::fio_json::FioJson`),
//! CSV (`report::csv::Csv`), Markdown (`report::markdown::Markdown`), HTML
//! (`report::html::Html`) and the charts as PNG files (`report::charts::Png`).
//! A new format is one more type implementing [`Exporter`] and one more
//! field of [`crate::report::Outputs`].

use std::path::Path;

use anyhow::{Context, Result};

use crate::result::RunResult;

/// One output format.
pub trait Exporter: std::fmt::Debug {
    /// The flag that asks for it (`--html`): its errors name it.
    fn flag(&self) -> &'static str;

    /// `r` in this format.
    fn serialize(&self, r: &RunResult) -> Result<Export>;
}

/// What an exporter makes of a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Export {
    /// One document: the file its flag names, or stdout (`-`).
    Document(Vec<u8>),
    /// Files of the directory its flag names (created if missing), in the
    /// order they are written.
    Directory(Vec<NamedFile>),
}

/// One file of an [`Export::Directory`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedFile {
    /// Its name in the directory (`randread-4k-q32-t1-latency.png`).
    pub name: String,
    pub bytes: Vec<u8>,
}

impl Export {
    /// The bytes of a document; a directory's files are no document (an
    /// exporter used where one document is written, such as stdout).
    pub fn into_document(self, flag: &str) -> Result<Vec<u8>> {
        match self {
            Export::Document(bytes) => Ok(bytes),
            Export::Directory(_) => Err(anyhow::anyhow!(
                "{flag} writes a directory of files, not one document"
            )),
        }
    }
}

/// An exporter and the path its flag named.
#[derive(Debug, Clone, Copy)]
pub struct Destination<'a> {
    pub exporter: &'a dyn Exporter,
    pub path: &'a Path,
}

/// Write `r` through `exporter` to `path`: a document with
/// [`crate::report::write_output`] (`-` is stdout, a file is replaced
/// atomically), a directory's files into `path`, created if missing.
pub fn write(exporter: &dyn Exporter, path: &Path, r: &RunResult) -> Result<()> {
    let flag = exporter.flag();
    match exporter.serialize(r)? {
        Export::Document(bytes) => crate::report::write_output(path, &bytes, flag),
        Export::Directory(files) => {
            std::fs::create_dir_all(path)
                .with_context(|| format!("{flag}: cannot create {}", path.display()))?;
            for f in files {
                crate::report::write_output(&path.join(&f.name), &f.bytes, flag)?;
            }
            Ok(())
        }
    }
}

/// Text read in a terminal as often as not (`cat`, `less -R`): the
/// result's own strings may hold escapes, shown, not sent. (HTML is escaped
/// cell by cell, `html::escape`.)
pub(crate) fn visible_bytes(text: &str) -> Vec<u8> {
    crate::model::untrusted::visible(text)
        .into_owned()
        .into_bytes()
}

/// The terminal view (`report::screen`): one screen, or with `--explain`
/// the whole table (`report::table`), every column with `--wide`.
#[derive(Debug, Clone, Copy)]
pub struct Terminal {
    /// What the view shows (`--explain`, `--wide`) and its width.
    pub view: crate::report::screen::View,
}

impl Terminal {
    /// The tables as text, the result's own strings as they are (whoever
    /// prints it shows their control characters, `untrusted::visible`).
    pub fn text(&self, r: &RunResult) -> String {
        crate::report::screen::render(r, &self.view)
    }
}

impl Exporter for Terminal {
    fn flag(&self) -> &'static str {
        "stdout"
    }

    fn serialize(&self, r: &RunResult) -> Result<Export> {
        Ok(Export::Document(visible_bytes(&self.text(r))))
    }
}

/// Each format's output for the saved fixture run, as sizes and digests:
/// a refactoring of the exporters must leave every byte as it was.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::json::JsonFormat;
    use crate::report::testdata::fixture;
    use crate::report::{charts, csv, html, markdown, Outputs};

    /// FNV-1a, 64 bits: enough to tell two outputs apart in a snapshot.
    fn digest(bytes: &[u8]) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{:>7} bytes  fnv1a64 {h:016x}", bytes.len())
    }

    use crate::report::screen::View;

    /// Every exporter, under the name its output is listed by.
    fn exporters() -> Vec<(&'static str, &'static dyn Exporter)> {
        vec![
            (
                "terminal (80 columns)",
                &Terminal {
                    view: View {
                        explain: false,
                        wide: false,
                        width: 80,
                    },
                },
            ),
            (
                "terminal --explain",
                &Terminal {
                    view: View {
                        explain: true,
                        wide: false,
                        width: 120,
                    },
                },
            ),
            (
                "terminal --wide",
                &Terminal {
                    view: View {
                        explain: true,
                        wide: true,
                        width: 120,
                    },
                },
            ),
            ("--json", JsonFormat::Iopath.exporter()),
            ("--json-format fio", JsonFormat::Fio.exporter()),
            ("--csv", &csv::Csv),
            ("--markdown", &markdown::Markdown),
            ("--html", &html::Html),
            ("--png-dir", &charts::Png),
        ]
    }

    fn outputs(r: &RunResult) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for (name, exporter) in exporters() {
            match exporter.serialize(r).unwrap() {
                Export::Document(bytes) => out.push((name.to_string(), bytes)),
                Export::Directory(files) => out.extend(
                    files
                        .into_iter()
                        .map(|f| (format!("{name} {}", f.name), f.bytes)),
                ),
            }
        }
        out
    }

    /// The snapshot was taken with the code before the exporters (each
    /// format's own function): the same bytes, format by format.
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

    #[test]
    fn the_report_files_are_written_in_flag_order() {
        let o = Outputs {
            html: Some("a.html".into()),
            csv: None,
            markdown: Some("-".into()),
            png_dir: Some("charts".into()),
            wide: false,
            explain: false,
        };
        let flags: Vec<&str> = o.destinations().iter().map(|d| d.exporter.flag()).collect();
        assert_eq!(flags, ["--html", "--markdown", "--png-dir"]);
        assert!(Outputs::default().destinations().is_empty());
    }

    #[test]
    fn a_directory_is_no_document() {
        let files = Export::Directory(vec![NamedFile {
            name: "a.png".into(),
            bytes: vec![1],
        }]);
        let e = files.into_document("--png-dir").unwrap_err();
        assert!(e.to_string().starts_with("--png-dir"), "{e}");
        assert_eq!(
            Export::Document(vec![7]).into_document("--csv").unwrap(),
            [7]
        );
    }
}

//! Another process changing the test file under the run: its length cut
//! or grown (`truncate -s 0 F`), or its name made to lead to another file
//! (replaced, removed). Write engines do not notice it (a write past the
//! new end grows the file back, with holes), so the runner asks
//! [`Target::changed`] before and after every repetition: one `fstat` of
//! the held descriptor and one `stat` of the name, a few microseconds.

use std::os::unix::fs::MetadataExt;

use super::Target;

/// What another process did to a regular test file (the user's, or
/// iopath's own) since it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Its length is `now` bytes instead of `was` (shorter: truncated;
    /// longer: extended).
    Length { was: u64, now: u64 },
    /// Its name leads to another file (replaced, or renamed over): the run
    /// goes on with the one it opened, which is no longer the named file.
    Replaced,
    /// Its name leads to nothing (removed or renamed away).
    Removed,
}

impl Target {
    /// The length the file must keep for the whole run: what it had when
    /// the run opened it (iopath never grows a file it did not create, and
    /// keeps its own at its size).
    pub fn expected_len(&self) -> u64 {
        self.info.file_bytes.unwrap_or(self.info.size_bytes)
    }

    /// What another process changed of the file since the run opened it,
    /// if anything. Block devices (whose length nothing can cut) and a
    /// target that could not be checked give `None`.
    pub fn changed(&self) -> Option<Change> {
        if self.info.kind == "block-device" {
            return None;
        }
        let held = self.held.as_ref()?.metadata().ok()?;
        let was = self.expected_len();
        if held.len() != was {
            return Some(Change::Length {
                was,
                now: held.len(),
            });
        }
        self.renamed(&held)
    }

    /// What became of the file's name, when it no longer leads to the
    /// file the run holds (`held`: its metadata). An unnamed file has no
    /// name to check.
    fn renamed(&self, held: &std::fs::Metadata) -> Option<Change> {
        if self.info.unnamed {
            return None;
        }
        match std::fs::metadata(&self.info.path) {
            Ok(m) if m.dev() == held.dev() && m.ino() == held.ino() => None,
            Ok(_) => Some(Change::Replaced),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Change::Removed),
            Err(_) => None,
        }
    }

    /// True when the file's name still leads to the file the run holds
    /// (or it has none): removing it by name removes iopath's own file,
    /// not one another process put there.
    pub(super) fn name_is_ours(&self) -> bool {
        match self.held.as_ref().map(std::fs::File::metadata) {
            Some(Ok(held)) => self.renamed(&held).is_none(),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{open_existing, Existing};
    use super::*;

    /// `path` as a `--file` target read by the run.
    fn open(path: &std::path::Path) -> Target {
        let meta = std::fs::metadata(path).unwrap();
        let opts = Existing {
            writes: false,
            allow_write: false,
            force_signature: false,
            prefill: false,
        };
        open_existing(path, &meta, None, opts).unwrap()
    }

    #[test]
    fn a_truncated_extended_replaced_or_removed_file_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.dat");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let t = open(&path);
        assert_eq!(t.changed(), None, "nothing changed yet");
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(0).unwrap();
        assert_eq!(t.changed(), Some(Change::Length { was: 8192, now: 0 }));
        f.set_len(16384).unwrap();
        assert_eq!(
            t.changed(),
            Some(Change::Length {
                was: 8192,
                now: 16384
            })
        );
        f.set_len(8192).unwrap();
        assert_eq!(t.changed(), None, "back to its length");
        let other = dir.path().join("g.dat");
        std::fs::write(&other, vec![1u8; 8192]).unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(t.changed(), Some(Change::Replaced));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(t.changed(), Some(Change::Removed));
    }
}

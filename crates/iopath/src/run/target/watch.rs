//! Another process changing the test file under the run: its length cut
//! or grown (`truncate -s 0 F`), or its name made to lead to another file
//! (replaced, removed). Write engines do not notice it (a write past the
//! new end grows the file back, with holes), so the runner asks
//! [`Target::changed`] before and after every repetition: one `fstat` of
//! the held descriptor and one `stat` of the name, a few microseconds.
//!
//! A cut grown back at once (`truncate -s 0 F; truncate -s 64M F`) keeps
//! the length and the inode: its data is gone (all holes). Two more facts
//! see it, both recorded ([`Target::settle`]) when the file is opened and
//! after each of iopath's own changes to it (prefill, the sparse
//! truncation, a write repetition):
//! - its ctime: any truncation, write or attribute change moves it; valid
//!   while iopath itself does not write the file (every check but those
//!   during and after a write repetition);
//! - its allocation, when it was fully allocated (no hole, `st_blocks`
//!   covering its length): a cut frees blocks that a regrowth does not
//!   bring back; valid during writes too, unless they write compressible
//!   data (a compressing file system may then allocate less).

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
    /// Fully allocated before, it has holes now (`allocated` bytes of its
    /// `len`): cut and grown back to its length.
    Holes { len: u64, allocated: u64 },
    /// Its ctime moved while iopath did not write it: truncated (and grown
    /// back), written, or its attributes changed by another process.
    Status,
}

/// What the file was after iopath's own last change to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// `st_ctime` (seconds, nanoseconds).
    ctime: (i64, i64),
    /// Every byte allocated: `st_blocks` cover its length and `SEEK_HOLE`
    /// finds no hole before its end.
    full: bool,
}

/// Which facts a check may compare, by what runs meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sees {
    /// The ctime: nothing of iopath's writes the file (iopath's own writes
    /// move it).
    pub ctime: bool,
    /// The allocation of a fully allocated file: no write of compressible
    /// data (a compressing file system may store it in fewer blocks).
    pub blocks: bool,
}

impl Sees {
    /// Between repetitions: nothing of iopath's touches the file.
    pub const ALL: Sees = Sees {
        ctime: true,
        blocks: true,
    };
}

impl Target {
    /// The length the file must keep for the whole run: what it had when
    /// the run opened it (iopath never grows a file it did not create, and
    /// keeps its own at its size).
    pub fn expected_len(&self) -> u64 {
        self.info.file_bytes.unwrap_or(self.info.size_bytes)
    }

    /// What another process changed of the file since the run opened it
    /// (its length, its name) or since iopath's own last change to it
    /// (its allocation, its ctime: as far as `sees` allows), if anything.
    /// Block devices (whose length nothing can cut) and a target that
    /// could not be checked give `None`.
    pub fn changed(&self, sees: Sees) -> Option<Change> {
        if self.info.kind == crate::result::TargetKind::BlockDevice {
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
        if let Some(c) = self.renamed(&held) {
            return Some(c);
        }
        let stamp = (*self.stamp.lock().ok()?)?;
        let allocated = held.blocks().saturating_mul(512);
        if sees.blocks && stamp.full && allocated < held.len() {
            return Some(Change::Holes {
                len: held.len(),
                allocated,
            });
        }
        let ctime = (held.ctime(), held.ctime_nsec());
        (sees.ctime && ctime != stamp.ctime).then_some(Change::Status)
    }

    /// Record the file as it is now, after iopath's own change to it (or
    /// when opened): what [`Target::changed`] compares its ctime and
    /// allocation with.
    pub fn settle(&self) {
        let now = self.stamp_now();
        if let Ok(mut s) = self.stamp.lock() {
            *s = now;
        }
    }

    /// The file's ctime and whether it is fully allocated; `None` for a
    /// block device, or when it cannot be read.
    fn stamp_now(&self) -> Option<Stamp> {
        if self.info.kind == crate::result::TargetKind::BlockDevice {
            return None;
        }
        let m = self.held.as_ref()?.metadata().ok()?;
        let len = m.len();
        let full = len > 0 && m.blocks().saturating_mul(512) >= len && self.no_hole_before(len);
        Some(Stamp {
            ctime: (m.ctime(), m.ctime_nsec()),
            full,
        })
    }

    /// True when `SEEK_HOLE` finds no hole before `len` (`st_blocks` can
    /// cover the length of a file with holes: blocks preallocated past
    /// its end, which the file system may free later).
    fn no_hole_before(&self, len: u64) -> bool {
        let Ok(f) = std::fs::File::open(self.path()) else {
            return false;
        };
        matches!(rustix::fs::seek(&f, rustix::fs::SeekFrom::Hole(0)), Ok(h) if h >= len)
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
        assert_eq!(t.changed(Sees::ALL), None, "nothing changed yet");
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(0).unwrap();
        assert_eq!(
            t.changed(Sees::ALL),
            Some(Change::Length { was: 8192, now: 0 })
        );
        f.set_len(16384).unwrap();
        assert_eq!(
            t.changed(Sees::ALL),
            Some(Change::Length {
                was: 8192,
                now: 16384
            })
        );
        f.set_len(8192).unwrap();
        assert_eq!(
            t.changed(Sees::ALL),
            Some(Change::Holes {
                len: 8192,
                allocated: 0
            }),
            "back to its length, its data gone"
        );
        let other = dir.path().join("g.dat");
        std::fs::write(&other, vec![1u8; 8192]).unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(t.changed(Sees::ALL), Some(Change::Replaced));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(t.changed(Sees::ALL), Some(Change::Removed));
    }

    /// Regression: a cut grown back at once (`os.truncate(f, 0);
    /// os.truncate(f, len)`) kept the length and the inode, and a read
    /// run exited 0 over a file of holes. A fully allocated file's blocks
    /// see it (during writes too); the ctime sees it in a file with holes,
    /// where iopath does not write; `settle` (iopath's own change) is not
    /// one.
    #[test]
    fn a_cut_grown_back_at_once_is_seen_by_allocation_or_ctime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.dat");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let cut_and_regrow = |len: u64| {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(0).unwrap();
            f.set_len(len).unwrap();
        };
        let t = open(&path);
        let writing = Sees {
            ctime: false,
            blocks: true,
        };
        assert_eq!(t.changed(Sees::ALL), None, "nothing changed yet");
        assert_eq!(t.changed(writing), None);
        cut_and_regrow(1 << 20);
        let holes = Some(Change::Holes {
            len: 1 << 20,
            allocated: 0,
        });
        assert_eq!(t.changed(Sees::ALL), holes);
        assert_eq!(t.changed(writing), holes, "seen during writes too");
        // A file with holes (iopath's own cut, settled): only the ctime
        // sees the next cut, and not while iopath writes.
        t.settle();
        assert_eq!(t.changed(Sees::ALL), None, "iopath's own change");
        cut_and_regrow(1 << 20);
        assert_eq!(t.changed(Sees::ALL), Some(Change::Status));
        assert_eq!(t.changed(writing), None, "what writes cannot see");
    }
}

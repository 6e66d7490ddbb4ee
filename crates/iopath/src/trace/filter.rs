//! Keeping a trace's events on some files only (`iopath trace filter`,
//! docs/replay.md): a recording of a program holds its loader's and
//! libraries' I/O beside the I/O on its data (a fio job maps fio's
//! libraries, sqlite3 reads `/etc` files); replaying only the data files
//! asks the question about them alone, and keeps an O_DIRECT method from
//! being refused for a library's unaligned reads.
//!
//! A [`Filter`] keeps the files whose path is one of the paths asked for or
//! under one of them (whole path components: `/db` keeps `/db/a` and not
//! `/dbx`), numbers them anew in their old order, and maps each event:
//! kept (its file renumbered), or left out (an event on another file, or
//! on none, such as a failed `open`). A `rename` is kept when both of its
//! names are.

use std::path::Path;

use super::{Event, FileEntry, Header, Op};

/// Which files of a trace to keep, and their new ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// New id of each old file id (`None`: left out).
    ids: Vec<Option<u32>>,
    /// The kept files, in their old order.
    files: Vec<FileEntry>,
}

impl Filter {
    /// Keeps the files of `files` at or under one of `paths`.
    pub fn under(files: &[FileEntry], paths: &[&Path]) -> Filter {
        let mut kept = Vec::new();
        let ids = files
            .iter()
            .map(|f| {
                let p = Path::new(&f.path);
                paths.iter().any(|k| p.starts_with(k)).then(|| {
                    kept.push(f.clone());
                    (kept.len() - 1) as u32
                })
            })
            .collect();
        Filter { ids, files: kept }
    }

    /// The files kept, as the new trace's header lists them.
    pub fn files(&self) -> &[FileEntry] {
        &self.files
    }

    fn id(&self, old: u32) -> Option<u32> {
        self.ids.get(old as usize).copied().flatten()
    }

    /// `e` with its file renumbered, if it is kept.
    pub fn event(&self, e: &Event) -> Option<Event> {
        let mut out = *e;
        out.file = Some(self.id(e.file?)?);
        if e.op() == Op::Rename {
            out.offset = u64::from(self.id(u32::try_from(e.offset).ok()?)?);
        }
        Some(out)
    }

    /// The new trace's header: `old`'s, with the kept files (the event
    /// count is set when the events are written).
    pub fn header(&self, old: &Header) -> Header {
        Header {
            files: self.files.clone(),
            ..old.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::FileKind;

    fn file(path: &str) -> FileEntry {
        FileEntry {
            path: path.into(),
            size_bytes: 4096,
            kind: FileKind::Regular,
        }
    }

    fn ev(op: Op, file: Option<u32>, offset: u64) -> Event {
        Event {
            op: Some(op),
            file,
            offset,
            len: 4096,
            result: 4096,
            ..Event::default()
        }
    }

    #[test]
    fn a_filter_keeps_the_files_under_a_path_by_whole_components_and_renumbers_them() {
        let files = [
            file("/usr/lib/libc.so.6"),
            file("/db/main.db"),
            file("/dbx/other"),
            file("/db/main.db-journal"),
        ];
        let f = Filter::under(&files, &[Path::new("/db")]);
        let kept: Vec<&str> = f.files().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(kept, ["/db/main.db", "/db/main.db-journal"]);
        assert_eq!(f.event(&ev(Op::Pread, Some(0), 0)), None);
        assert_eq!(f.event(&ev(Op::Pread, Some(2), 0)), None);
        assert_eq!(f.event(&ev(Op::Open, None, 0)), None);
        assert_eq!(
            f.event(&ev(Op::Pread, Some(3), 8192)).unwrap().file,
            Some(1)
        );
        // A rename is kept when both names are, its new name renumbered.
        let r = f.event(&ev(Op::Rename, Some(3), 1)).unwrap();
        assert_eq!((r.file, r.offset), (Some(1), 0));
        assert_eq!(f.event(&ev(Op::Rename, Some(1), 0)), None);
        // An exact path is kept as well.
        let one = Filter::under(&files, &[Path::new("/usr/lib/libc.so.6")]);
        assert_eq!(one.files().len(), 1);
    }
}

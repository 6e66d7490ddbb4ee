//! Is this regular file the one behind a loop device, a mount or swap?
//! Asked by identity, never by name: a file is its `st_dev` and inode, and
//! each of its names (hard links) is the same file. A loop device's backing
//! file is the one the kernel holds (`LOOP_GET_STATUS64`,
//! [`iopath_io::loopdev`]), not the name sysfs shows; a mount's source and
//! a swap file are `stat`ed, and their identity compared.
//!
//! Where the kernel cannot be asked (the loop device's node cannot be
//! opened: not root), the sysfs name stands in when it still names a file;
//! a removed name (` (deleted)`) on the same file system is *unverified*,
//! and the guard refuses rather than guess.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use iopath_io::loopdev::LoopDevice;

use super::{family, mounted, parse_dev};
use crate::plan::UsageError;

/// A file: the device of its file system and its inode number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    pub dev: (u32, u32),
    pub ino: u64,
}

impl FileId {
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        let d = meta.dev();
        FileId {
            dev: (rustix::fs::major(d), rustix::fs::minor(d)),
            ino: meta.ino(),
        }
    }

    /// The file `path` names now (following symbolic links).
    pub fn at(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|m| FileId::of(&m))
    }
}

/// Whether a loop device's backing file is a given file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backs {
    Yes,
    No,
    /// The kernel could not be asked and the name it had was removed:
    /// it may be this file under another name.
    Unverified,
}

/// The identity of `lo`'s backing file: the kernel's, else what its sysfs
/// name still names.
pub fn backing_id(lo: &LoopDevice) -> Option<FileId> {
    match lo.backing {
        Some(b) => Some(FileId {
            dev: b.dev,
            ino: b.ino,
        }),
        None if lo.backing_name.ends_with(" (deleted)") => None,
        None => FileId::at(Path::new(&lo.backing_name)),
    }
}

/// Whether `lo`'s backing file is the file `id`.
pub fn backs(lo: &LoopDevice, id: FileId) -> Backs {
    if let Some(b) = backing_id(lo) {
        return if b == id { Backs::Yes } else { Backs::No };
    }
    // Unknown: its name was removed (or cannot be stat'ed) and the kernel
    // was not asked. A hard link lives on the same file system as the
    // name's directory: another file system's cannot be this file.
    let name = lo.backing_name.trim_end_matches(" (deleted)");
    match Path::new(name).parent().and_then(FileId::at) {
        Some(dir) if dir.dev != id.dev => Backs::No,
        _ => Backs::Unverified,
    }
}

/// The loop devices (of `loops`, but `except`) whose backing file is `id`,
/// and those that may be (unverified).
pub fn loops_backing(
    id: FileId,
    loops: &[LoopDevice],
    except: Option<&str>,
) -> (Vec<String>, Vec<String>) {
    let (mut sure, mut maybe) = (Vec::new(), Vec::new());
    for lo in loops.iter().filter(|l| Some(l.name.as_str()) != except) {
        match backs(lo, id) {
            Backs::Yes => sure.push(lo.name.clone()),
            Backs::Unverified => maybe.push(lo.name.clone()),
            Backs::No => {}
        }
    }
    (sure, maybe)
}

/// The mount points whose source (`/proc/self/mountinfo`, field after the
/// file-system type) is the regular file `id`: an image mounted by a FUSE
/// driver (fuse2fs, squashfuse), say. A loop mount's source is the loop
/// device, found by [`loops_backing`].
pub fn mounts_of_file(mountinfo: &str, id: FileId) -> Vec<String> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let at = left.split(' ').nth(4)?;
            let source = super::unescape(right.split(' ').nth(1)?);
            let meta = std::fs::metadata(source).ok()?;
            (meta.is_file() && FileId::of(&meta) == id).then(|| super::unescape(at))
        })
        .collect()
}

/// The swap files (`/proc/swaps`, as named there) that are the regular
/// file `id`. A swap file whose name was removed is listed ` (deleted)`
/// and cannot be `stat`ed: the kernel itself fails writes to it (ETXTBSY).
pub fn swap_files_of(swaps: &str, id: FileId) -> Vec<String> {
    swaps
        .lines()
        .skip(1)
        .filter_map(|line| {
            let name = super::unescape(line.split_whitespace().next()?);
            let meta = std::fs::metadata(&name).ok()?;
            (meta.is_file() && FileId::of(&meta) == id).then_some(name)
        })
        .collect()
}

/// Check that iopath may write the regular file at `path`: it is not the
/// file behind a loop device (its blocks would be a mounted file system's,
/// or another device's), the source of a mount, or active swap; compared
/// by identity (device and inode, (this module)), so a hard link or a file
/// whose first name was removed is the same file. `at` is the file
/// checked, `path` the name shown.
pub fn check_file_write(path: &Path, at: &Path) -> Result<(), UsageError> {
    let p = path.display();
    let Some(id) = FileId::at(at) else {
        return Err(UsageError(format!(
            "cannot check whether {p} is in use: it cannot be stat'ed; name an existing file"
        )));
    };
    let sys = Path::new("/sys");
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let (sure, maybe) = loops_backing(id, &iopath_io::loopdev::loop_devices(sys), None);
    if !sure.is_empty() {
        let mut names = Vec::new();
        let mut mounted_at = Vec::new();
        for lo in &sure {
            names.push(format!("/dev/{lo}"));
            if let Some((maj, min)) = dev_number_of(lo, sys) {
                mounted_at.extend(
                    mounted(&mountinfo, &family(maj, min, sys))
                        .into_iter()
                        .map(|m| m.1),
                );
            }
        }
        let mounted_note = if mounted_at.is_empty() {
            String::new()
        } else {
            format!(", mounted at {}", mounted_at.join(", "))
        };
        let unmount = if mounted_at.is_empty() {
            String::new()
        } else {
            format!("umount {}; ", mounted_at.join(" "))
        };
        return Err(UsageError(format!(
            "refusing to write to {p}: it is the backing file of {}{mounted_note} (the same file by device and inode, under this name or another). Detach {} first ({unmount}losetup -d {}); no option overrides this",
            sure.join(", "),
            if sure.len() == 1 { "it" } else { "them" },
            names.join(" ")
        )));
    }
    if !maybe.is_empty() {
        return Err(UsageError(format!(
            "refusing to write to {p}: it may be the backing file of {} (whose file's name was removed, and /dev/{} could not be opened to ask the kernel which file it is). Run as root (or a member of the 'disk' group) so iopath can tell, or detach it first (losetup -d); no option overrides this",
            maybe.join(", "),
            maybe[0]
        )));
    }
    if let Some(at) = mounts_of_file(&mountinfo, id).first() {
        return Err(UsageError(format!(
            "refusing to write to {p}: it is the source of the file system mounted at {at}. Unmount it first; no option overrides this"
        )));
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    if let Some(name) = swap_files_of(&swaps, id).first() {
        return Err(UsageError(format!(
            "refusing to write to {p}: it is active swap ({name} in /proc/swaps). Run swapoff {name} first; no option overrides this"
        )));
    }
    Ok(())
}

/// `maj:min` of block device `name` (`/sys/block/<name>/dev`).
fn dev_number_of(name: &str, sys: &Path) -> Option<(u32, u32)> {
    parse_dev(
        std::fs::read_to_string(sys.join("block").join(name).join("dev"))
            .ok()?
            .trim(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_io::loopdev::LoopBacking;

    fn lo(name: &str, backing_name: &str, backing: Option<LoopBacking>) -> LoopDevice {
        LoopDevice {
            name: name.into(),
            number: (7, 0),
            backing_name: backing_name.into(),
            backing,
        }
    }

    #[test]
    fn the_kernels_identity_decides_whatever_the_name() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("img");
        std::fs::write(&f, b"x").unwrap();
        let id = FileId::at(&f).unwrap();
        let known = |ino| {
            Some(LoopBacking {
                dev: id.dev,
                ino,
                rdev: (0, 0),
            })
        };
        // Another name, even one that no longer exists: the kernel says.
        assert_eq!(
            backs(&lo("loop0", "/gone/x (deleted)", known(id.ino)), id),
            Backs::Yes
        );
        // The same name, but the kernel holds another file.
        let other = lo("loop1", &f.display().to_string(), known(id.ino + 1));
        assert_eq!(backs(&other, id), Backs::No);
        // Not asked: a name that still names the file is it.
        let by_name = lo("loop2", &f.display().to_string(), None);
        assert_eq!(backs(&by_name, id), Backs::Yes);
        // Not asked, its name removed, in this file's file system: unknown.
        let gone = format!("{}/old (deleted)", d.path().display());
        assert_eq!(backs(&lo("loop3", &gone, None), id), Backs::Unverified);
        let (sure, maybe) = loops_backing(
            id,
            &[
                lo("loop0", "/x (deleted)", known(id.ino)),
                other,
                lo("loop3", &gone, None),
            ],
            Some("loop9"),
        );
        assert_eq!((sure, maybe), (vec!["loop0".into()], vec!["loop3".into()]));
    }

    #[test]
    fn mount_sources_and_swap_files_are_compared_by_identity() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a b.img");
        std::fs::write(&f, b"x").unwrap();
        let link = d.path().join("link");
        std::fs::hard_link(&f, &link).unwrap();
        let id = FileId::at(&link).unwrap();
        let esc = f.display().to_string().replace(' ', "\\040");
        let mi = format!(
            "22 1 254:0 / / rw - ext4 /dev/vda rw\n\
             41 22 0:50 / /mnt/img rw - fuse.fuse2fs {esc} rw\n"
        );
        assert_eq!(mounts_of_file(&mi, id), ["/mnt/img"]);
        let swaps = format!(
            "Filename Type Size Used Priority\n{esc} file 1024 0 -2\n/nonexistent (deleted) file 1 0 -3\n"
        );
        assert_eq!(swap_files_of(&swaps, id), [f.display().to_string()]);
        let other = d.path().join("other");
        std::fs::write(&other, b"y").unwrap();
        let oid = FileId::at(&other).unwrap();
        assert!(mounts_of_file(&mi, oid).is_empty() && swap_files_of(&swaps, oid).is_empty());
    }
}

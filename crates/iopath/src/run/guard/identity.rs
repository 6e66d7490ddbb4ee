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

use super::overlay::{self, MountLine};
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

/// Whether a loop device's backing file (or a mount's source) is a given
/// file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backs {
    Yes,
    No,
    /// The kernel could not be asked and the name it had was removed:
    /// it may be this file under another name.
    Unverified,
    /// An overlay on the way names its layers by relative paths, and the
    /// inode numbers agree: it may be this file through that overlay.
    OverlayUnsure,
}

/// A file's identities: its own and, where it is on an overlay, those of
/// its file in each layer ([`overlay`]); with the overlays (mount points)
/// whose layers could not be resolved.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ids {
    pub ids: Vec<FileId>,
    pub unresolved: Vec<String>,
}

impl From<FileId> for Ids {
    fn from(id: FileId) -> Ids {
        Ids {
            ids: vec![id],
            unresolved: Vec::new(),
        }
    }
}

impl Ids {
    /// The file at `path` and its layers' files; `None` when it cannot be
    /// `stat`ed.
    pub fn of_path(path: &Path, mounts: &[MountLine]) -> Option<Ids> {
        let mut out = Ids::from(FileId::at(path)?);
        out.add_layers(path, mounts);
        Some(out)
    }

    /// Add the identities `path` has in the layers of overlays it is on.
    pub fn add_layers(&mut self, path: &Path, mounts: &[MountLine]) {
        let l = overlay::layer_identities(path, mounts);
        for id in l.ids {
            if !self.ids.contains(&id) {
                self.ids.push(id);
            }
        }
        self.unresolved.extend(l.unresolved);
    }

    /// Whether these and `other` are one file: an identity shared; else,
    /// with an unresolved overlay on either side, an inode number shared
    /// (an overlay's file shows its layer file's inode number).
    pub fn meets(&self, other: &Ids) -> Backs {
        if self.ids.iter().any(|a| other.ids.contains(a)) {
            return Backs::Yes;
        }
        let unsure = !self.unresolved.is_empty() || !other.unresolved.is_empty();
        let same_ino = || {
            self.ids
                .iter()
                .any(|a| other.ids.iter().any(|b| a.ino == b.ino))
        };
        if unsure && same_ino() {
            Backs::OverlayUnsure
        } else {
            Backs::No
        }
    }

    fn on_dev(&self, dev: (u32, u32)) -> bool {
        self.ids.iter().any(|i| i.dev == dev)
    }
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

/// Whether `lo`'s backing file is the file `target`. The kernel's
/// identity of it, with (where its sysfs name is on an overlay) the
/// identities that name has in the overlay's layers: a name only ever
/// adds identities, so that the guard refuses more, never less.
pub fn backs(lo: &LoopDevice, target: &Ids, mounts: &[MountLine]) -> Backs {
    let deleted = lo.backing_name.ends_with(" (deleted)");
    let mut b = Ids::default();
    b.ids.extend(backing_id(lo));
    if !deleted {
        b.add_layers(Path::new(&lo.backing_name), mounts);
    } else if let Some(ov) = b.ids.first().and_then(|k| overlay_of_dev(k.dev, mounts)) {
        // A removed name on an overlay: its layers cannot be looked up.
        b.unresolved.push(ov);
    }
    if !b.ids.is_empty() {
        return b.meets(target);
    }
    // Unknown: its name was removed (or cannot be stat'ed) and the kernel
    // was not asked. A hard link lives on the same file system as the
    // name's directory: another file system's cannot be this file.
    let name = lo.backing_name.trim_end_matches(" (deleted)");
    match Path::new(name).parent().and_then(FileId::at) {
        Some(dir) if !target.on_dev(dir.dev) => Backs::No,
        _ => Backs::Unverified,
    }
}

/// The mount point of the overlay whose device is `dev`, if one is.
fn overlay_of_dev(dev: (u32, u32), mounts: &[MountLine]) -> Option<String> {
    mounts
        .iter()
        .find(|m| m.dev == dev && m.fstype == "overlay")
        .map(|m| m.at.clone())
}

/// The loop devices (of `loops`) whose backing file is `target`, those
/// that may be (unverified), and those that may be through an overlay
/// whose layers could not be resolved.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Backing {
    pub sure: Vec<String>,
    pub maybe: Vec<String>,
    pub overlay: Vec<String>,
}

/// [`Backing`] of `target` among `loops`, but `except`.
pub fn loops_backing(
    target: &Ids,
    loops: &[LoopDevice],
    mounts: &[MountLine],
    except: Option<&str>,
) -> Backing {
    let mut out = Backing::default();
    for lo in loops.iter().filter(|l| Some(l.name.as_str()) != except) {
        match backs(lo, target, mounts) {
            Backs::Yes => out.sure.push(lo.name.clone()),
            Backs::Unverified => out.maybe.push(lo.name.clone()),
            Backs::OverlayUnsure => out.overlay.push(lo.name.clone()),
            Backs::No => {}
        }
    }
    out
}

/// The mount points whose source (`/proc/self/mountinfo`, field after the
/// file-system type) is the regular file `target`: an image mounted by a
/// FUSE driver (fuse2fs, squashfuse) or by erofs, say. A loop mount's
/// source is the loop device, found by [`loops_backing`].
pub fn mounts_of_file(mounts: &[MountLine], target: &Ids) -> Vec<String> {
    mounts
        .iter()
        .filter_map(|m| {
            let meta = std::fs::metadata(&m.source).ok()?;
            if !meta.is_file() {
                return None;
            }
            let mut src = Ids::from(FileId::of(&meta));
            src.add_layers(Path::new(&m.source), mounts);
            (src.meets(target) == Backs::Yes).then(|| m.at.clone())
        })
        .collect()
}

/// Whether a file system of type `fstype` can be mounted straight from a
/// regular file (no loop device): erofs (Linux 6.12+) and FUSE.
fn file_backable(fstype: &str) -> bool {
    fstype == "erofs" || fstype == "fuse" || fstype == "fuseblk" || fstype.starts_with("fuse.")
}

/// The mounts (mount point, source) that may be from the file `target`
/// under another name: the kernel keeps a mount's source as it was named
/// at mount time, so a source that no longer names a regular file (moved,
/// removed), or one of a file-backable type (whose name may now be
/// another file), whose nearest existing directory is on `target`'s file
/// system, cannot be told from `target`.
pub fn unverified_mounts(mounts: &[MountLine], target: &Ids) -> Vec<(String, String)> {
    mounts
        .iter()
        .filter(|m| m.source.starts_with('/'))
        .filter(|m| match std::fs::metadata(&m.source) {
            Ok(meta) => meta.is_file() && file_backable(&m.fstype),
            Err(_) => true,
        })
        .filter(|m| {
            Path::new(&m.source)
                .ancestors()
                .skip(1)
                .find_map(FileId::at)
                .is_some_and(|dir| target.on_dev(dir.dev))
        })
        .map(|m| (m.at.clone(), m.source.clone()))
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
/// whose first name was removed is the same file, and a file on an overlay
/// is also its file in the overlay's layers. `at` is the file checked,
/// `path` the name shown.
pub fn check_file_write(path: &Path, at: &Path) -> Result<(), UsageError> {
    let p = path.display();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mounts = overlay::mount_lines(&mountinfo);
    let Some(target) = Ids::of_path(at, &mounts) else {
        return Err(UsageError(format!(
            "cannot check whether {p} is in use: it cannot be stat'ed; name an existing file"
        )));
    };
    let sys = Path::new("/sys");
    let loops = iopath_io::loopdev::loop_devices(sys);
    let b = loops_backing(&target, &loops, &mounts, None);
    if !b.sure.is_empty() {
        return Err(loop_refusal(
            &p.to_string(),
            &b.sure,
            &loops,
            &mountinfo,
            sys,
        ));
    }
    if !b.maybe.is_empty() {
        return Err(UsageError(format!(
            "refusing to write to {p}: it may be the backing file of {} (whose file's name was removed, and /dev/{} could not be opened to ask the kernel which file it is). Run as root (or a member of the 'disk' group) so iopath can tell, or detach it first (losetup -d); no option overrides this",
            b.maybe.join(", "),
            b.maybe[0]
        )));
    }
    if !b.overlay.is_empty() {
        let mut ovs = target.unresolved.clone();
        for lo in loops.iter().filter(|l| b.overlay.contains(&l.name)) {
            ovs.extend(overlay::layer_identities(Path::new(&l_name(lo)), &mounts).unresolved);
        }
        ovs.dedup();
        return Err(UsageError(format!(
            "refusing to write to {p}: it may be the backing file of {} through the overlay mounted at {} (same inode number; the overlay names its layers by relative paths in /proc/self/mountinfo, so iopath cannot tell). Detach it first (losetup -d /dev/{}), or mount the overlay with absolute upperdir=/lowerdir= paths; no option overrides this",
            b.overlay.join(", "),
            ovs.join(", "),
            b.overlay.join(" /dev/")
        )));
    }
    if let Some(at) = mounts_of_file(&mounts, &target).first() {
        return Err(UsageError(format!(
            "refusing to write to {p}: it is the source of the file system mounted at {at}. Unmount it first; no option overrides this"
        )));
    }
    if let Some((at, source)) = unverified_mounts(&mounts, &target).first() {
        return Err(UsageError(format!(
            "refusing to write to {p}: it may be the image of the file system mounted at {at}, whose source {source} (named as it was at mount time) no longer shows which file it is, on this file system. Unmount {at} first (umount {at}), or write a file on another file system; no option overrides this"
        )));
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    if let Some(name) = swap_files_of(&swaps, target.ids[0]).first() {
        return Err(UsageError(format!(
            "refusing to write to {p}: it is active swap ({name} in /proc/swaps). Run swapoff {name} first; no option overrides this"
        )));
    }
    Ok(())
}

/// A loop device's backing file's name, without a ` (deleted)` suffix.
fn l_name(lo: &LoopDevice) -> String {
    lo.backing_name.trim_end_matches(" (deleted)").to_string()
}

/// `sure` (loop devices over the file), then the loop devices stacked on
/// them (whose backing file is one of them or a partition of one), and
/// so on up: the chain to detach, bottom first.
pub fn stacked_chain(sure: &[String], loops: &[LoopDevice], sys: &Path) -> Vec<String> {
    let mut chain = sure.to_vec();
    let mut i = 0;
    while i < chain.len() && chain.len() <= loops.len() {
        let fam = dev_number_of(&chain[i], sys)
            .map(|(maj, min)| family(maj, min, sys))
            .unwrap_or_default();
        let nodes: Vec<String> = fam
            .iter()
            .map(|m| m.name.as_str())
            .chain([chain[i].as_str()])
            .filter(|n| !n.is_empty())
            .map(|n| format!("/dev/{n}"))
            .collect();
        for lo in loops {
            let on = match lo.backing {
                Some(b) => b.rdev != (0, 0) && fam.iter().any(|m| m.dev == b.rdev),
                None => nodes.contains(&lo.backing_name),
            };
            if on && !chain.contains(&lo.name) {
                chain.push(lo.name.clone());
            }
        }
        i += 1;
    }
    chain
}

/// The refusal for a file behind the loop devices `sure`: names them,
/// those stacked on them, where any is mounted, and the commands to free
/// the file (top first).
fn loop_refusal(
    p: &str,
    sure: &[String],
    loops: &[LoopDevice],
    mountinfo: &str,
    sys: &Path,
) -> UsageError {
    let chain = stacked_chain(sure, loops, sys);
    let mut mounted_at = Vec::new();
    for lo in &chain {
        if let Some((maj, min)) = dev_number_of(lo, sys) {
            mounted_at.extend(
                mounted(mountinfo, &family(maj, min, sys))
                    .into_iter()
                    .map(|m| m.1),
            );
        }
    }
    let stacked = &chain[sure.len()..];
    let stacked_note = if stacked.is_empty() {
        String::new()
    } else {
        format!(", under {} (stacked on it)", stacked.join(", "))
    };
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
    let names: Vec<String> = chain.iter().rev().map(|l| format!("/dev/{l}")).collect();
    UsageError(format!(
        "refusing to write to {p}: it is the backing file of {}{stacked_note}{mounted_note} (the same file by device and inode, under this name or another). Detach {} first ({unmount}losetup -d {}); no option overrides this",
        sure.join(", "),
        if chain.len() == 1 { "it" } else { "them" },
        names.join(" ")
    ))
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

    #[test]
    fn a_moved_file_backed_mounts_source_on_the_targets_file_system_is_unverified() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("other.img");
        std::fs::write(&f, b"x").unwrap();
        let t = Ids::from(FileId::at(&f).unwrap());
        let gone = d.path().join("sub dir/ero.img").display().to_string();
        let present = f.display().to_string().replace(' ', "\\040");
        let mi = format!(
            "22 1 254:0 / / rw - ext4 /dev/vda rw\n\
             41 22 0:50 / /mnt/ero rw - erofs {} ro\n\
             42 22 0:51 / /mnt/gone rw - ext4 /proc/nonexistent/x rw\n\
             43 22 0:52 / /mnt/fuse rw - fuse.squashfuse {present} ro\n\
             44 22 0:53 / /mnt/ext rw - ext4 {present} rw\n",
            gone.replace(' ', "\\040")
        );
        let m = overlay::mount_lines(&mi);
        let got = unverified_mounts(&m, &t);
        assert_eq!(
            got,
            [
                ("/mnt/ero".to_string(), gone),
                ("/mnt/fuse".to_string(), f.display().to_string())
            ]
        );
        let elsewhere = Ids::from(FileId {
            dev: (0, 1),
            ino: 1,
        });
        assert!(unverified_mounts(&m, &elsewhere).is_empty());
    }

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
            backs(
                &lo("loop0", "/gone/x (deleted)", known(id.ino)),
                &Ids::from(id),
                &[]
            ),
            Backs::Yes
        );
        // The same name, but the kernel holds another file.
        let other = lo("loop1", &f.display().to_string(), known(id.ino + 1));
        assert_eq!(backs(&other, &Ids::from(id), &[]), Backs::No);
        // Not asked: a name that still names the file is it.
        let by_name = lo("loop2", &f.display().to_string(), None);
        assert_eq!(backs(&by_name, &Ids::from(id), &[]), Backs::Yes);
        // Not asked, its name removed, in this file's file system: unknown.
        let gone = format!("{}/old (deleted)", d.path().display());
        assert_eq!(
            backs(&lo("loop3", &gone, None), &Ids::from(id), &[]),
            Backs::Unverified
        );
        let b = loops_backing(
            &Ids::from(id),
            &[
                lo("loop0", "/x (deleted)", known(id.ino)),
                other,
                lo("loop3", &gone, None),
            ],
            &[],
            Some("loop9"),
        );
        assert_eq!(
            (b.sure, b.maybe),
            (vec!["loop0".into()], vec!["loop3".into()])
        );
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
        assert_eq!(
            mounts_of_file(&overlay::mount_lines(&mi), &Ids::from(id)),
            ["/mnt/img"]
        );
        let swaps = format!(
            "Filename Type Size Used Priority\n{esc} file 1024 0 -2\n/nonexistent (deleted) file 1 0 -3\n"
        );
        assert_eq!(swap_files_of(&swaps, id), [f.display().to_string()]);
        let other = d.path().join("other");
        std::fs::write(&other, b"y").unwrap();
        let oid = FileId::at(&other).unwrap();
        assert!(
            mounts_of_file(&overlay::mount_lines(&mi), &Ids::from(oid)).is_empty()
                && swap_files_of(&swaps, oid).is_empty()
        );
    }
}

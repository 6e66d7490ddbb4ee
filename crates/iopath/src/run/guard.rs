//! Write guards for block devices: before iopath writes to a `--file` that
//! is a block device (even with `--allow-write`), it refuses when the
//! device is in use or holds data.
//!
//! Refused, never overridable:
//! - the device, a partition of it, or (for a partition) its whole disk is
//!   mounted (`/proc/self/mountinfo`, by `maj:min` or by the mount's source
//!   device);
//! - one of them is active swap (`/proc/swaps`);
//! - one of them is held by another device (`/sys/class/block/X/holders/`:
//!   dm, md, bcache), or backs a loop device (the backing device number
//!   the kernel gives for every loop device, `LOOP_GET_STATUS64`: a loop
//!   over a device is not listed in its `holders/`); for a loop device, its
//!   backing file is also another loop device's (the same file by device
//!   and inode).
//!
//! A regular file is refused, never overridably, when it is the file
//! behind a loop device, a mount's source or active swap, compared by
//! identity (device and inode, [`identity`]), never by name: a hard link,
//! or a file whose first name was removed, is the same file.
//!
//! Refused unless `--force-signature`: the first or last MiB of the device
//! carries a file-system, RAID, volume or partition-table signature
//! ([`signatures`]).
//!
//! Reading is plain std I/O; the detection functions are pure, over byte
//! buffers and text, and tested as such.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::plan::UsageError;

pub mod identity;
pub mod overlay;
pub use identity::check_file_write;
use identity::FileId;

/// How much of each end of the device is read for signatures.
pub const PROBE_BYTES: u64 = 1 << 20;

/// Why writing to a device is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `dev` (the target, or the disk of a partition) is read-only:
    /// `/sys/class/block/<dev>/ro` is 1.
    ReadOnly { dev: String },
    /// `dev` is mounted at `at`.
    Mounted { dev: String, at: String },
    /// `dev` is active swap.
    Swap { dev: String },
    /// `dev` is held by `holders` (dm-0, md0, loop3, ...).
    Held { dev: String, holders: Vec<String> },
    /// The device carries these signatures.
    Signature { what: Vec<&'static str> },
}

impl Refusal {
    /// Whether `--force-signature` lifts it.
    pub fn overridable(&self) -> bool {
        matches!(self, Refusal::Signature { .. })
    }

    /// The message, naming the reason and what (if anything) overrides it.
    pub fn message(&self, path: &Path) -> String {
        let p = path.display();
        match self {
            Refusal::ReadOnly { dev } => format!(
                "refusing to write to {p}: {dev} is read-only (/sys/class/block/{dev}/ro = 1). Use read patterns, or a writable device; no option overrides this"
            ),
            Refusal::Mounted { dev, at } => format!(
                "refusing to write to {p}: {dev} is mounted at {at}. Unmount it first; no option overrides this"
            ),
            Refusal::Swap { dev } => format!(
                "refusing to write to {p}: {dev} is active swap. Run swapoff first; no option overrides this"
            ),
            Refusal::Held { dev, holders } => format!(
                "refusing to write to {p}: {dev} is held by {} (a device stacked on it, or a loop device backed by it). Tear that down first; no option overrides this",
                holders.join(", ")
            ),
            Refusal::Signature { what } => format!(
                "refusing to write to {p}: it carries {} {} signature, so it probably holds data. Add --force-signature to destroy it anyway",
                article(what.first().copied().unwrap_or_default()),
                what.join(", ")
            ),
        }
    }
}

/// "a" or "an" before `name` as it is said: "an ext4", "an LVM2" (el-vee-em),
/// "an xfs" (ex-ef-es), "a GPT", "a swap".
fn article(name: &str) -> &'static str {
    let first = name.chars().next().unwrap_or('x');
    // Said letter by letter: capitals, the second no vowel (LVM2, MBR;
    // not LUKS or FAT, said as words).
    let initialism = name.len() > 1
        && name.chars().take(2).all(|c| c.is_ascii_uppercase())
        && !"AEIOU".contains(name.chars().nth(1).unwrap_or('A'));
    let vowel = "aeiouAEIOU".contains(first)
        || (initialism && "FHLMNRSX".contains(first))
        || name.starts_with("xfs");
    if vowel {
        "an"
    } else {
        "a"
    }
}

/// Check that iopath may write to the block device at `path`; the first
/// refusal that applies (mounted, swap, held, then signature unless
/// `force_signature`) as a [`UsageError`].
///
/// `at` is the device checked (the run's own descriptor,
/// `/proc/<pid>/fd/<n>`, so that a symlink repointed meanwhile cannot
/// swap another device in); `path` is the name messages show.
pub fn check_block_write(path: &Path, at: &Path, force_signature: bool) -> Result<(), UsageError> {
    match refusals(at, Path::new("/sys")) {
        Err(e) => Err(UsageError(format!(
            "cannot check whether {} is in use: {e}",
            path.display()
        ))),
        Ok(list) => match list
            .into_iter()
            .find(|r| !(force_signature && r.overridable()))
        {
            Some(r) => Err(UsageError(r.message(path))),
            None => Ok(()),
        },
    }
}

/// The block device at `path` opened `O_EXCL`, to hold for as long as it
/// is written: while it is open so, the kernel refuses to mount it, build
/// a RAID or volume on it or swap on it, and the open itself fails
/// (EBUSY) when one of them holds it already.
/// `at` is opened (the run's own descriptor, `/proc/<pid>/fd/<n>`), `path`
/// named.
pub fn hold_exclusively(path: &Path, at: &Path) -> Result<File, UsageError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::EXCL.bits() as i32)
        .open(at)
        .map_err(|e| {
            UsageError(format!(
                "refusing to write to {}: it cannot be held exclusively ({e}): the kernel has it in use (mounted, part of a RAID or volume, swap). Free it first; no option overrides this",
                path.display()
            ))
        })
}

/// The loop devices whose backing file is the file at `path` (the same
/// file by device and inode, whatever its names: [`identity`]), or, for a
/// loop device (or a partition of one) at `path`, the other loop devices
/// over its backing file. One whose backing file cannot be told (not
/// root, its name removed) counts as one: the caller refuses.
pub fn loops_backed_by(path: &Path, sys: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let loops = iopath_io::loopdev::loop_devices(sys);
    // A block device's own name, or for a partition its whole disk's:
    // only a whole loop device has a backing file (loop4p1 reads loop4's).
    let own_name = std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type())
        .then(|| {
            let rdev = meta.rdev();
            let mut dir = std::fs::canonicalize(sys.join(format!(
                "dev/block/{}:{}",
                rustix::fs::major(rdev),
                rustix::fs::minor(rdev)
            )))
            .ok()?;
            if dir.join("partition").exists() {
                dir = dir.parent()?.to_path_buf();
            }
            Some(dir.file_name()?.to_string_lossy().into_owned())
        })
        .flatten();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mounts = overlay::mount_lines(&mountinfo);
    let target = match &own_name {
        Some(name) => loops.iter().find(|l| &l.name == name).map(|l| {
            let mut t = identity::Ids::default();
            t.ids.extend(identity::backing_id(l));
            if !l.backing_name.ends_with(" (deleted)") {
                t.add_layers(Path::new(&l.backing_name), &mounts);
            }
            t
        }),
        None => {
            let mut t = identity::Ids::from(FileId::of(&meta));
            t.add_layers(path, &mounts);
            Some(t)
        }
    };
    let Some(target) = target.filter(|t| !t.ids.is_empty()) else {
        return Vec::new();
    };
    let b = identity::loops_backing(&target, &loops, &mounts, own_name.as_deref());
    let mut sure = b.sure;
    sure.extend(b.maybe);
    sure.extend(b.overlay);
    sure.sort();
    sure
}

/// Every reason to refuse writing to the block device at `path`, in order:
/// use by the system first, then signatures.
pub fn refusals(path: &Path, sys: &Path) -> std::io::Result<Vec<Refusal>> {
    let (maj, min) = iopath_io::sys::dev_numbers(path)
        .ok_or_else(|| std::io::Error::other("cannot stat the device"))?;
    let family = family(maj, min, sys);
    let mut out = Vec::new();
    for dev in read_only(&family) {
        out.push(Refusal::ReadOnly { dev });
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for (dev, at) in mounted(&mountinfo, &family) {
        out.push(Refusal::Mounted { dev, at });
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for dev in swapping(&swaps, &family) {
        out.push(Refusal::Swap { dev });
    }
    let loops = loop_backings(sys);
    for m in &family {
        let mut holders = holders(&m.sysdir);
        // A loop device over this one is not listed in holders/.
        for (lo, dev) in &loops {
            if *dev == m.dev && !holders.contains(lo) {
                holders.push(lo.clone());
            }
        }
        if !holders.is_empty() {
            out.push(Refusal::Held {
                dev: m.name.clone(),
                holders,
            });
        }
    }
    // Another loop device over the same backing file writes the same
    // blocks: if it is mounted, writing this one corrupts that file system.
    let sharing = loops_backed_by(path, sys);
    if !sharing.is_empty() {
        out.push(Refusal::Held {
            dev: "its backing file".into(),
            holders: sharing,
        });
    }
    // The signatures need a read of the device; one that cannot be read
    // (a mounted device the kernel will not open, a device cgroup) is
    // refused for what is already known, said first.
    match read_signatures(path) {
        Ok(what) if !what.is_empty() => out.push(Refusal::Signature { what }),
        Ok(_) => {}
        Err(e) if out.is_empty() => return Err(e),
        Err(_) => {}
    }
    Ok(out)
}

/// The read-only devices among the target and, for a partition, its
/// disk (`family`'s first two): their `ro` attribute is 1 (`losetup -r`,
/// `blockdev --setro`, a write-protected medium). The kernel would fail
/// every write with EPERM or EROFS; said up front instead.
fn read_only(family: &[Member]) -> Vec<String> {
    let parted = family
        .first()
        .is_some_and(|m| m.sysdir.join("partition").exists());
    family
        .iter()
        .take(if parted { 2 } else { 1 })
        .filter(|m| !m.sysdir.as_os_str().is_empty())
        .filter(|m| std::fs::read_to_string(m.sysdir.join("ro")).is_ok_and(|t| t.trim() == "1"))
        .map(|m| m.name.clone())
        .collect()
}

/// A device whose use blocks writing: the target, its partitions, or its
/// whole disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub dev: (u32, u32),
    pub sysdir: PathBuf,
}

/// The target (`maj:min`), its partitions when it is a whole disk, and its
/// whole disk when it is a partition.
pub fn family(maj: u32, min: u32, sys: &Path) -> Vec<Member> {
    let mut out = vec![Member {
        name: String::new(),
        dev: (maj, min),
        sysdir: PathBuf::new(),
    }];
    let Ok(top) = std::fs::canonicalize(sys.join(format!("dev/block/{maj}:{min}"))) else {
        return out;
    };
    out[0] = member(&top).unwrap_or_else(|| out[0].clone());
    if top.join("partition").exists() {
        if let Some(m) = top.parent().and_then(member) {
            out.push(m);
        }
    } else if let Ok(rd) = std::fs::read_dir(&top) {
        let mut parts: Vec<Member> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.join("partition").exists())
            .filter_map(|p| member(&p))
            .collect();
        parts.sort_by(|a, b| a.name.cmp(&b.name));
        out.extend(parts);
    }
    out
}

fn member(dir: &Path) -> Option<Member> {
    let text = std::fs::read_to_string(dir.join("dev")).ok()?;
    Some(Member {
        name: dir.file_name()?.to_string_lossy().into_owned(),
        dev: parse_dev(text.trim())?,
        sysdir: dir.to_path_buf(),
    })
}

fn parse_dev(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The block device a path names (`st_rdev`), if it is one.
fn rdev_of(p: &str) -> Option<(u32, u32)> {
    use std::os::unix::fs::FileTypeExt;
    let p = Path::new(p);
    let meta = std::fs::metadata(p).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| iopath_io::sys::dev_numbers(p))
        .flatten()
}

/// Which members are mounted, and where: a mount's `maj:min` (field 3), or
/// its source when that is a block-device node (btrfs mounts show an
/// anonymous `0:N`).
pub fn mounted(mountinfo: &str, family: &[Member]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let f: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if f.len() < 5 || r.len() < 2 {
            continue;
        }
        let by_number = parse_dev(f[2]);
        let source = unescape(r[1]);
        let by_source = if source.starts_with('/') {
            rdev_of(&source)
        } else {
            None
        };
        for m in family {
            if Some(m.dev) == by_number || Some(m.dev) == by_source {
                let name = if m.name.is_empty() {
                    source.clone()
                } else {
                    m.name.clone()
                };
                out.push((name, unescape(f[4])));
            }
        }
    }
    out
}

/// `\040` and friends of mountinfo and /proc/swaps.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// Which members are active swap (`/proc/swaps`: a partition's node).
pub fn swapping(swaps: &str, family: &[Member]) -> Vec<String> {
    let mut out = Vec::new();
    for line in swaps.lines().skip(1) {
        let Some(file) = line.split_whitespace().next() else {
            continue;
        };
        let file = unescape(file);
        let Some(dev) = rdev_of(&file) else { continue };
        for m in family {
            if m.dev == dev {
                out.push(if m.name.is_empty() {
                    file.clone()
                } else {
                    m.name.clone()
                });
            }
        }
    }
    out
}

pub use crate::system::metrics::blockdev::{holders, loop_backings};

/// Read the first and last [`PROBE_BYTES`] of the device and name their
/// signatures.
pub fn read_signatures(path: &Path) -> std::io::Result<Vec<&'static str>> {
    use std::io::{Seek, SeekFrom};
    let mut f = File::open(path)?;
    let size = f.seek(SeekFrom::End(0))?;
    let head = read_range(&f, 0, PROBE_BYTES.min(size))?;
    let tail_at = size.saturating_sub(PROBE_BYTES);
    let tail = read_range(&f, tail_at, size - tail_at)?;
    Ok(signatures(&head, &tail, size))
}

fn read_range(f: &File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    f.read_exact_at(&mut buf, at)?;
    Ok(buf)
}

fn at(buf: &[u8], off: u64, len: usize) -> Option<&[u8]> {
    let off = usize::try_from(off).ok()?;
    buf.get(off..off.checked_add(len)?)
}

/// The md superblock magic, little-endian (1.x) or as a big-endian
/// machine writes 0.90.
const MD_MAGIC: u32 = 0xa92b_4efc;

fn is_md_magic(b: Option<&[u8]>) -> bool {
    b.is_some_and(|b| {
        b == MD_MAGIC.to_le_bytes().as_slice() || b == MD_MAGIC.to_be_bytes().as_slice()
    })
}

/// The signatures in `head` (the device's first bytes) and `tail` (its
/// last bytes; the device is `size` bytes long): file systems (ext2/3/4,
/// xfs, btrfs, swap), volumes and RAID (LVM2, mdraid) and partition tables
/// (GPT, MBR, a boot sector), and those of [`more_signatures`]. Empty when
/// none is found.
pub fn signatures(head: &[u8], tail: &[u8], size: u64) -> Vec<&'static str> {
    let mut out = Vec::new();
    if at(head, 1080, 2) == Some(&0xEF53u16.to_le_bytes()[..]) {
        out.push("ext2/3/4");
    }
    if at(head, 0, 4) == Some(b"XFSB") {
        out.push("xfs");
    }
    if at(head, 65600, 8) == Some(b"_BHRfS_M") {
        out.push("btrfs");
    }
    if [4096u64, 8192, 16384, 65536].iter().any(|ps| {
        matches!(
            at(head, ps - 10, 10),
            Some(b"SWAPSPACE2") | Some(b"SWAP-SPACE")
        )
    }) {
        out.push("swap");
    }
    if (0..4u64).any(|s| {
        at(head, s * 512, 8) == Some(b"LABELONE") && at(head, s * 512 + 24, 8) == Some(b"LVM2 001")
    }) {
        out.push("LVM2");
    }
    let tail_start = size.saturating_sub(tail.len() as u64);
    let in_tail = |off: u64, len: usize| off.checked_sub(tail_start).and_then(|o| at(tail, o, len));
    let sectors = size / 512;
    // md 1.0: 8 KiB to 12 KiB from the end, 4 KiB aligned; 0.90: the last
    // 64 KiB-aligned 64 KiB block.
    let md10 = sectors
        .checked_sub(16)
        .map(|s| (s & !7) * 512)
        .and_then(|o| in_tail(o, 4));
    let md090 = (sectors & !127)
        .checked_sub(128)
        .map(|s| s * 512)
        .and_then(|o| in_tail(o, 4));
    if [at(head, 4096, 4), at(head, 0, 4), md10, md090]
        .into_iter()
        .any(is_md_magic)
    {
        out.push("mdraid");
    }
    let gpt_primary = [512u64, 4096]
        .iter()
        .any(|&s| at(head, s, 8) == Some(b"EFI PART"));
    let gpt_backup = [512u64, 4096].iter().any(|&s| {
        size.checked_sub(s)
            .and_then(|o| in_tail(o, 8))
            .is_some_and(|b| b == b"EFI PART")
    });
    if gpt_primary || gpt_backup {
        out.push("GPT");
    } else if at(head, 510, 2) == Some(&[0x55, 0xAA][..]) {
        // A partition table, or a boot sector (FAT, NTFS and exFAT carry
        // one too): either way somebody's data.
        let table = (0..4).any(|i| {
            at(head, 446 + 16 * i, 16).is_some_and(|e| e[4] != 0 && e.iter().any(|&b| b != 0))
        });
        out.push(if table { "MBR" } else { "boot sector" });
    }
    out.extend(more_signatures(head, tail, size));
    out
}

/// bcache's and bcachefs's superblock magics (at 4096 + 24).
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
const BCACHEFS_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9, 0xd9, 0x6a, 0x60, 0xcf, 0x80, 0x3d, 0xf7, 0xef,
];

/// The signatures of encrypted volumes, other file systems and caches:
/// LUKS (both headers of LUKS2), NTFS, exFAT, FAT, f2fs, ISO 9660, ZFS
/// (its labels at both ends), bcache, bcachefs.
fn more_signatures(head: &[u8], tail: &[u8], size: u64) -> Vec<&'static str> {
    let mut out = Vec::new();
    let luks2_secondary =
        (14..=22).any(|shift| at(head, 1u64 << shift, 6) == Some(b"SKUL\xba\xbe"));
    if at(head, 0, 6) == Some(b"LUKS\xba\xbe") || luks2_secondary {
        out.push("LUKS");
    }
    if at(head, 3, 8) == Some(b"NTFS    ") {
        out.push("NTFS");
    }
    if at(head, 3, 8) == Some(b"EXFAT   ") {
        out.push("exFAT");
    }
    if matches!(at(head, 54, 5), Some(b"FAT12") | Some(b"FAT16"))
        || at(head, 82, 5) == Some(b"FAT32")
    {
        out.push("FAT");
    }
    if at(head, 1024, 4) == Some(&0xF2F5_2010u32.to_le_bytes()[..]) {
        out.push("f2fs");
    }
    if at(head, 32769, 5) == Some(b"CD001") {
        out.push("ISO 9660");
    }
    if at(head, 4096 + 24, 16) == Some(&BCACHE_MAGIC[..]) {
        out.push("bcache");
    }
    if at(head, 4096 + 24, 16) == Some(&BCACHEFS_MAGIC[..]) {
        out.push("bcachefs");
    }
    // ZFS: an uberblock (magic 0x00bab10c, either byte order) in the
    // uberblock array (the second 128 KiB) of any of the four 256 KiB
    // labels, two at the start and two at the end.
    let uberblock = |buf: &[u8], label: u64| {
        (0..128u64).any(|k| {
            let o = label + (128 << 10) + k * 1024;
            matches!(
                at(buf, o, 4),
                Some([0x0c, 0xb1, 0xba, 0x00]) | Some([0x00, 0xba, 0xb1, 0x0c])
            )
        })
    };
    let tail_start = size.saturating_sub(tail.len() as u64);
    let tail_label = |from_end: u64| {
        size.checked_sub(from_end)
            .and_then(|o| o.checked_sub(tail_start))
            .is_some_and(|o| uberblock(tail, o))
    };
    if uberblock(head, 0)
        || uberblock(head, 256 << 10)
        || tail_label(512 << 10)
        || tail_label(256 << 10)
    {
        out.push("ZFS");
    }
    out
}

#[cfg(test)]
mod tests;

//! Loop devices and the files behind them, by identity.
//!
//! `/sys/block/loopN/loop/backing_file` is a *name*: the one the file had
//! when it was attached, with ` (deleted)` appended once that name is
//! removed. A hard link of the file, or a file later put under that name,
//! is not told apart by it. The kernel holds the file itself, and
//! `LOOP_GET_STATUS64` on the device says which: its `st_dev` and inode
//! (and `st_rdev` for a block device node). [`loop_devices`] lists every
//! attached loop device with that identity where the device node can be
//! opened (read-only: root, or the `disk` group), else with its sysfs name
//! only, for the caller to treat as unverified.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The identity of a loop device's backing file, as the kernel holds it:
/// the file itself, whatever its names (a hard link, a name renamed or
/// deleted since).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopBacking {
    /// `st_dev` of the backing file: the file system it is on.
    pub dev: (u32, u32),
    /// Its inode number on that file system.
    pub ino: u64,
    /// Its `st_rdev`: the device number when the backing file is a block
    /// device node, else `(0, 0)`.
    pub rdev: (u32, u32),
}

/// One attached loop device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopDevice {
    /// `loop3`.
    pub name: String,
    /// Its own device number.
    pub number: (u32, u32),
    /// `loop/backing_file` as sysfs gives it (for messages; may end in
    /// ` (deleted)`).
    pub backing_name: String,
    /// The backing file's identity; `None` when the device node could not
    /// be opened or asked (not root, no node in /dev): the caller cannot
    /// tell which file it is and must say so rather than guess by name.
    pub backing: Option<LoopBacking>,
}

/// `LOOP_GET_STATUS64` (linux/loop.h).
const LOOP_GET_STATUS64: libc::Ioctl = 0x4C05;

/// `struct loop_info64` (linux/loop.h).
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// The backing file of the loop device open as `dev` (a read-only open of
/// `/dev/loopN` is enough). `ENXIO` when no file is attached; `ENOTTY`
/// when `dev` is not a loop device.
pub fn loop_backing(dev: &File) -> io::Result<LoopBacking> {
    use std::os::fd::AsRawFd;
    // SAFETY: all-zero bytes are a valid LoopInfo64 (integers and byte
    // arrays only).
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: `dev` is an open descriptor for the call's duration, and
    // LOOP_GET_STATUS64 writes one `struct loop_info64` (whose layout
    // LoopInfo64 repeats, 232 bytes) through the pointer, which is valid
    // and exclusively borrowed for the call.
    let rc = unsafe {
        libc::ioctl(
            dev.as_raw_fd(),
            LOOP_GET_STATUS64,
            &mut info as *mut LoopInfo64,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(LoopBacking {
        dev: decode_huge_dev(info.lo_device),
        ino: info.lo_inode,
        rdev: decode_huge_dev(info.lo_rdevice),
    })
}

/// (major, minor) of a device number as the kernel's `huge_encode_dev`
/// gives it (12 bits of major, 20 of minor, the minor split around it).
fn decode_huge_dev(v: u64) -> (u32, u32) {
    let major = ((v >> 8) & 0xfff) as u32;
    let minor = ((v & 0xff) | ((v >> 12) & 0xfff00)) as u32;
    (major, minor)
}

/// The node of block device `number` opened read-only: `/dev/block/M:m`,
/// else `/dev/<name>`, taken only when it is that very device (its
/// `st_rdev`), whatever a name in /dev points at.
pub fn open_block_node(name: &str, number: (u32, u32)) -> Option<File> {
    let (maj, min) = number;
    [format!("/dev/block/{maj}:{min}"), format!("/dev/{name}")]
        .iter()
        .find_map(|p| {
            let f = File::open(p).ok()?;
            let m = f.metadata().ok()?;
            let rdev = m.rdev();
            (std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type())
                && (rustix::fs::major(rdev), rustix::fs::minor(rdev)) == number)
                .then_some(f)
        })
}

/// Every attached loop device under `sys` (`/sys`, or a captured tree in
/// tests): those with a `loop/backing_file`, sorted by name, each with its
/// backing file's identity where its node can be opened and asked.
pub fn loop_devices(sys: &Path) -> Vec<LoopDevice> {
    let Ok(rd) = std::fs::read_dir(sys.join("block")) else {
        return Vec::new();
    };
    let mut out: Vec<LoopDevice> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let dir = e.path();
            let backing_name = std::fs::read_to_string(dir.join("loop/backing_file")).ok()?;
            let number = parse_dev(std::fs::read_to_string(dir.join("dev")).ok()?.trim())?;
            let name = e.file_name().to_string_lossy().into_owned();
            let backing = open_block_node(&name, number).and_then(|f| loop_backing(&f).ok());
            Some(LoopDevice {
                name,
                number,
                backing_name: backing_name.trim_end_matches('\n').to_string(),
                backing,
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn parse_dev(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_device_numbers_decode_as_stat_encodes_them() {
        for (maj, min) in [(7u32, 3u32), (259, 0), (8, 17), (7, 300), (253, 1_000_000)] {
            let st = rustix::fs::makedev(maj, min);
            assert_eq!(decode_huge_dev(st), (maj, min), "{maj}:{min}");
        }
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
    }

    #[test]
    fn a_file_that_is_no_loop_device_is_refused_by_the_kernel() {
        let f = tempfile::tempfile().unwrap();
        assert!(loop_backing(&f).is_err());
    }
}

//! Loop devices and mounts made by a test, always undone when dropped
//! (on failure too); `None`, with the reason printed, where the machine
//! refuses them (not root, no losetup).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device attached here, detached when dropped.
pub struct Loop(pub PathBuf);

impl Loop {
    /// `losetup -f --show [-P] FILE`; `None` (with the reason printed) when
    /// it fails.
    pub fn attach(file: &Path, partscan: bool) -> Option<Loop> {
        Self::attach_with(file, if partscan { &["-P"] } else { &[] })
    }

    /// `losetup -r -f --show FILE`: a read-only loop device.
    #[allow(dead_code)]
    pub fn attach_read_only(file: &Path) -> Option<Loop> {
        Self::attach_with(file, &["-r"])
    }

    fn attach_with(file: &Path, flags: &[&str]) -> Option<Loop> {
        let mut cmd = Command::new("losetup");
        cmd.args(["-f", "--show"]).args(flags);
        let out = match cmd.arg(file).output() {
            Ok(o) => o,
            Err(e) => {
                crate::common::skip(format!("cannot run losetup: {e}"));
                return None;
            }
        };
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || dev.is_empty() {
            crate::common::skip(format!(
                "losetup -f --show {} failed: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return None;
        }
        Some(Loop(PathBuf::from(dev)))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn name(&self) -> String {
        self.0.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// The node of partition `n` (`/dev/loop3p1`), once it exists. A
    /// kernel without the MBR parser (`CONFIG_MSDOS_PARTITION` unset)
    /// finds no partition on `losetup -P`: `partx -a` then adds it from
    /// user space (BLKPG).
    pub fn partition(&self, n: u32) -> Option<PathBuf> {
        let p = PathBuf::from(format!("{}p{n}", self.0.display()));
        let appears = || {
            (0..25).any(|_| {
                std::thread::sleep(std::time::Duration::from_millis(40));
                p.exists()
            })
        };
        if p.exists() || appears() {
            return Some(p);
        }
        let _ = Command::new("partx").arg("-a").arg(&self.0).status();
        if appears() {
            return Some(p);
        }
        crate::common::skip(format!(
            "{} did not appear (losetup -P, then partx -a)",
            p.display()
        ));
        None
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

/// A mount made here, unmounted when dropped.
pub struct Mount(PathBuf);

impl Mount {
    /// `mount ARGS SRC AT`; `None` (with the reason printed) when it fails.
    pub fn new(src: impl AsRef<OsStr>, at: &Path, args: &[&str]) -> Option<Mount> {
        let src = src.as_ref();
        match Command::new("mount").args(args).arg(src).arg(at).output() {
            Ok(o) if o.status.success() => Some(Mount(at.to_path_buf())),
            Ok(o) => {
                crate::common::skip(format!(
                    "mount {} on {} failed: {}",
                    src.to_string_lossy(),
                    at.display(),
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
                None
            }
            Err(e) => {
                crate::common::skip(format!("cannot run mount: {e}"));
                None
            }
        }
    }

    /// A tmpfs of `size` (`8M`) on `at`.
    pub fn tmpfs(at: &Path, size: &str) -> Option<Mount> {
        Mount::new("tmpfs", at, &["-t", "tmpfs", "-o", &format!("size={size}")])
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

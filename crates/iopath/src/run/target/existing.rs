//! An existing file or device as the target: opened and pinned (checked
//! to be the file named, its signature and size), and prefilled when asked.

use super::*;

/// What may be done to an existing --file.
#[derive(Debug, Clone, Copy)]
pub(super) struct Existing {
    /// Some case writes to it.
    pub(super) writes: bool,
    pub(super) allow_write: bool,
    pub(super) force_signature: bool,
    pub(super) prefill: bool,
}

pub(super) fn open_existing(
    path: &Path,
    meta: &std::fs::Metadata,
    size: Option<u64>,
    opts: Existing,
) -> Result<Target> {
    let Existing {
        writes,
        allow_write,
        force_signature,
        prefill,
    } = opts;
    let ft = meta.file_type();
    if !ft.is_block_device() && !ft.is_file() {
        return Err(UsageError(format!(
            "--file {} is neither a regular file nor a block device",
            path.display()
        ))
        .into());
    }
    refuse_unasked_writes(path, writes, allow_write)?;
    // Resolved once: the file or device is opened here (O_PATH), checked
    // to be the one just looked at, and from then on everything (guards,
    // prefill, engines, verification) opens it through this descriptor,
    // never by name again: a symlink repointed mid-run, or a file
    // replaced, cannot send the writes somewhere unchecked.
    let pinned = pin(path, meta)?;
    let at = proc_fd_path(&pinned);
    let len = if ft.is_block_device() {
        let mut f = File::open(&at).map_err(|e| unreadable(path, &e))?;
        f.seek(SeekFrom::End(0))
            .with_context(|| format!("cannot read the size of {}", path.display()))?
    } else {
        meta.len()
    };
    let kind = if ft.is_block_device() {
        crate::result::TargetKind::BlockDevice
    } else {
        crate::result::TargetKind::File
    };
    let size = match size {
        Some(s) if s > len => {
            return Err(UsageError(format!(
                "--size {} is larger than {} ({}); iopath never extends a file it did not create",
                fmt_bytes(s),
                path.display(),
                fmt_bytes(len)
            ))
            .into())
        }
        Some(s) => s,
        None => len,
    };
    if size == 0 {
        return Err(UsageError(format!("{} is empty: nothing to read", path.display())).into());
    }
    // A block device is written only when nothing uses it and (unless
    // forced) it carries no signature of data.
    let mut held = pinned;
    let mut open_path = at.clone();
    if ft.is_block_device() && allow_write && (writes || prefill) {
        crate::run::guard::check_block_write(path, &at, force_signature)?;
        // Held exclusively for the whole run: the kernel then refuses to
        // mount it, assemble it or swap on it meanwhile, and refuses us if
        // something claimed it since the check.
        held = crate::run::guard::hold_exclusively(path, &at)?;
        open_path = proc_fd_path(&held);
    }
    if ft.is_file() && allow_write && (writes || prefill) {
        crate::run::guard::check_file_write(path, &at)?;
    }
    let allocated_bytes = allocated(&open_path);
    let held = Some(held);
    let target = Target {
        open_path,
        dir: path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
        held,
        info: TargetInfo {
            path: path.to_path_buf(),
            unnamed: false,
            kind,
            size_bytes: size,
            file_bytes: Some(len),
            created: false,
            writable: (writes || prefill) && allow_write,
            prefilled: false,
            sparse: false,
            prefill_ns: None,
            allocated_bytes,
        },
        stamp: Default::default(),
    };
    // Pinned: from here on another process's change is seen.
    target.settle();
    Ok(target)
}

/// `path` opened `O_PATH` (following symlinks), refused when it is not the
/// file `meta` describes (replaced or repointed in between).
pub(super) fn pin(path: &Path, meta: &std::fs::Metadata) -> Result<File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| unreadable(path, &std::io::Error::from(e)))?;
    let file = File::from(fd);
    let now = file
        .metadata()
        .with_context(|| format!("cannot stat {}", path.display()))?;
    if !same_file(meta, &now) {
        return Err(UsageError(format!(
            "{} changed while iopath opened it (a symlink repointed, or the file replaced); run again once it is stable",
            path.display()
        ))
        .into());
    }
    Ok(file)
}

/// The same inode, and for a device the same device number.
pub(super) fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino() && a.rdev() == b.rdev()
}

/// `/proc/<pid>/fd/<n>` of `file`: opening it reopens that very file,
/// whatever its name points at now.
pub(super) fn proc_fd_path(file: &File) -> PathBuf {
    PathBuf::from(format!(
        "/proc/{}/fd/{}",
        std::process::id(),
        std::os::fd::AsRawFd::as_raw_fd(file)
    ))
}

/// An existing --file this user cannot open: bad input, with the next step.
pub(super) fn unreadable(path: &Path, e: &std::io::Error) -> anyhow::Error {
    if iopath_io::sys::is_limit_error(e) {
        return limit_error(&format!("cannot open {}", path.display()), e);
    }
    UsageError(format!(
        "cannot open {}: {e}; run as a user who may read it (for a device: root, or a member of its group, often 'disk'), or name another file",
        path.display()
    ))
    .into()
}

/// `--prefill`: write incompressible data over the first `size` bytes of an
/// existing file or device (the guards have passed).
pub(super) fn prefill_existing(
    target: &mut Target,
    fill: Fill,
    stop: &AtomicBool,
    progress: &Progress,
) -> Result<()> {
    let path = target.path().to_path_buf();
    let mut file = OpenOptions::new()
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {} to prefill it", path.display()))?;
    let t0 = Instant::now();
    write_fill(&mut file, &path, target.size(), fill, stop, progress)?;
    target.info.prefilled = true;
    target.info.prefill_ns = Some(t0.elapsed().as_nanos() as u64);
    target.info.allocated_bytes = allocated(&path);
    target.settle();
    Ok(())
}

/// Bytes allocated under an existing file (`st_blocks`), or under a loop
/// device's backing file; `None` for other devices.
pub(super) fn allocated(path: &Path) -> Option<u64> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.file_type().is_file() {
        Some(meta.blocks() * 512)
    } else {
        crate::system::metrics::blockdev::loop_backing_allocation(path, Path::new("/sys"))
            .map(|b| b.1)
    }
}

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

impl Existing {
    /// Whether the run writes to it: a case writes or `--prefill` fills
    /// it, and `--allow-write` allows it.
    fn written(&self) -> bool {
        self.allow_write && (self.writes || self.prefill)
    }
}

pub(super) fn open_existing(
    path: &Path,
    meta: &std::fs::Metadata,
    size: Option<u64>,
    opts: Existing,
) -> Result<Target> {
    let kind = kind_of(path, meta)?;
    refuse_unasked_writes(path, opts.writes, opts.allow_write)?;
    // Resolved once: the file or device is opened here (O_PATH), checked
    // to be the one just looked at, and from then on everything (guards,
    // prefill, engines, verification) opens it through this descriptor,
    // never by name again: a symlink repointed mid-run, or a file
    // replaced, cannot send the writes somewhere unchecked.
    let pinned = pin(path, meta)?;
    let at = proc_fd_path(&pinned);
    let len = if kind == TargetKind::BlockDevice {
        let mut f = File::open(&at).map_err(|e| unreadable(path, &e))?;
        f.seek(SeekFrom::End(0))
            .with_context(|| format!("cannot read the size of {}", path.display()))?
    } else {
        meta.len()
    };
    let size = used_size(path, size, len)?;
    let held = guarded(path, kind, pinned, opts)?;
    let allocated_bytes = allocated(&held.open_path);
    let target = Target {
        open_path: held.open_path,
        dir: parent_of(path).to_path_buf(),
        held: Some(held.file),
        info: TargetInfo {
            path: path.to_path_buf(),
            unnamed: false,
            kind,
            size_bytes: size,
            file_bytes: Some(len),
            created: false,
            writable: opts.written(),
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

/// A block device or a regular file; anything else is bad input.
fn kind_of(path: &Path, meta: &std::fs::Metadata) -> Result<TargetKind> {
    let ft = meta.file_type();
    if ft.is_block_device() {
        Ok(TargetKind::BlockDevice)
    } else if ft.is_file() {
        Ok(TargetKind::File)
    } else {
        Err(UsageError(format!(
            "--file {} is neither a regular file nor a block device",
            path.display()
        ))
        .into())
    }
}

/// The part of the `len` bytes of `path` the run uses: `--size`, never
/// more than there is, and never nothing.
fn used_size(path: &Path, size: Option<u64>, len: u64) -> Result<u64> {
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
    Ok(size)
}

/// The descriptor the run holds its target by, and the path engines open.
struct Held {
    file: File,
    open_path: PathBuf,
}

/// The pinned target, once the write guards pass when the run writes to
/// it: a block device only when nothing uses it and (unless forced) it
/// carries no signature of data, then held exclusively; a file only when
/// no loop device, mount or swap is behind it.
fn guarded(path: &Path, kind: TargetKind, pinned: File, opts: Existing) -> Result<Held> {
    let at = proc_fd_path(&pinned);
    if !opts.written() {
        return Ok(Held {
            file: pinned,
            open_path: at,
        });
    }
    if kind == TargetKind::BlockDevice {
        crate::run::guard::check_block_write(path, &at, opts.force_signature)?;
        // Held exclusively for the whole run: the kernel then refuses to
        // mount it, assemble it or swap on it meanwhile, and refuses us if
        // something claimed it since the check.
        let file = crate::run::guard::hold_exclusively(path, &at)?;
        let open_path = proc_fd_path(&file);
        return Ok(Held { file, open_path });
    }
    crate::run::guard::check_file_write(path, &at)?;
    Ok(Held {
        file: pinned,
        open_path: at,
    })
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

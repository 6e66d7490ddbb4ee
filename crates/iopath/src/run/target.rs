//! The file under test: iopath's own temporary file, or one the user named.
//!
//! Invariants:
//! - iopath only writes to a file it created (`created == true`) or one the
//!   user allowed with `--allow-write`; it never truncates a file it did not
//!   create.
//! - A block device is written (with `--allow-write`) only after the
//!   guards of [`crate::run::guard`] pass: not mounted, swap or held, and no
//!   signature unless `--force-signature`.
//! - `--prefill` (with `--allow-write`) fills an existing file or device
//!   before any case runs.
//! - A file iopath created is removed when the [`Target`] is dropped: at the
//!   end, on error, on panic (unwinding) and after Ctrl-C/SIGTERM (the
//!   runner stops, unwinds and drops it).
//! - Even SIGKILL leaves nothing where the file system can make a file
//!   without a name (`O_TMPFILE`: ext4, xfs, btrfs, tmpfs, ...): the
//!   temporary test file is made unnamed in `--dir`, held open for the
//!   run, and engines reopen it (with their own flags: O_DIRECT, ...)
//!   through `/proc/<pid>/fd/<n>`; it goes when the last descriptor closes.
//!   It is never linked into the directory. A `--file` that does not
//!   exist, which iopath creates for the run and removes after it, is made
//!   the same way in its directory (results call it by the name asked
//!   for). Elsewhere (or with
//!   `IOPATH_NO_TMPFILE=1`, for tests) it is named `iopath-<pid>-<random>.dat`,
//!   marked as this run's (`user.iopath.owner`) and `flock`ed while the
//!   run lives, and the next run removes such files left by killed runs
//!   when it can prove them so ([`reap`]), saying so to the caller's
//!   events (`run::Event::StaleFiles`).
//! - A created file is prefilled with incompressible data before any case
//!   runs, so no read ever hits an unwritten (sparse) extent.
//! - Free space is checked before anything is created.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use iopath_io::data::{DataMode, Rng};

use crate::model::units::fmt_bytes;
use crate::plan::{TargetSpec, UsageError, DEFAULT_SIZE};
use crate::result::TargetKind;
use crate::run::progress::Progress;
use crate::run::Events;
use crate::Interrupted;

mod existing;
pub mod reap;
pub mod watch;

use existing::{open_existing, prefill_existing, proc_fd_path, Existing};

/// Set to `1` (tests only), iopath names its temporary test file even where
/// `O_TMPFILE` works: the fallback of file systems without it.
pub const NO_TMPFILE_ENV: &str = "IOPATH_NO_TMPFILE";

/// Most head-room left free on the file system beyond the test file.
pub(crate) const FREE_MARGIN: u64 = 64 << 20;

pub use crate::result::records::TargetInfo;

/// An open target; removes the file on drop when iopath created it.
#[derive(Debug)]
pub struct Target {
    pub info: TargetInfo,
    /// The path engines open: `/proc/<pid>/fd/<n>` of `held` (an unnamed
    /// file, or an existing file or device, opened once so that its name
    /// cannot be repointed under the run), or `info.path` of a named file
    /// iopath created.
    open_path: PathBuf,
    /// The directory the file is in (the copy pattern's destination goes
    /// there).
    dir: PathBuf,
    /// A file iopath created, open for the whole run: it keeps an unnamed
    /// file alive, and holds the `flock` that tells [`reap`] a named one is
    /// in use; a block device iopath writes, held open `O_EXCL`; or an
    /// existing file or device, held `O_PATH`.
    held: Option<File>,
    /// The file after iopath's own last change to it ([`watch`]).
    stamp: std::sync::Mutex<Option<watch::Stamp>>,
}

impl Target {
    /// The path to open the file by (for an unnamed file, a
    /// `/proc/<pid>/fd/<n>` link valid while the target lives).
    pub fn path(&self) -> &Path {
        &self.open_path
    }

    /// A path on the file system (and device) the file lives on, for
    /// describing them: the file by its name, or for an unnamed file its
    /// directory (a `/proc/<pid>/fd/N` path leads mount lookups astray).
    pub fn place(&self) -> &Path {
        if self.info.unnamed {
            &self.dir
        } else {
            &self.info.path
        }
    }

    /// The directory the file is in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn size(&self) -> u64 {
        self.info.size_bytes
    }
}

impl Target {
    /// Make a sparse target freshly truncated again: every block a hole.
    pub fn retruncate(&self) -> Result<()> {
        let f = OpenOptions::new()
            .write(true)
            .open(self.path())
            .with_context(|| format!("open {}", self.path().display()))?;
        f.set_len(0)
            .and_then(|()| f.set_len(self.size()))
            .with_context(|| format!("truncating {}", self.path().display()))?;
        self.settle();
        Ok(())
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        // An unnamed file goes with its last descriptor (`held`).
        // A named one is removed unless another process put another file
        // under its name.
        if self.info.created && !self.info.unnamed && self.name_is_ours() {
            let _ = std::fs::remove_file(&self.info.path);
        }
        drop(self.held.take());
    }
}

/// How a file iopath creates is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    pub seed: u64,
    pub data: DataMode,
    /// Leave it sparse (truncated to its size, no data written).
    pub sparse: bool,
    /// `--verify`: stamp every unit of this many bytes with a header
    /// (pass 0) and a checksum ([`iopath_io::verify`]).
    pub verify_unit: Option<u64>,
}

impl Fill {
    pub fn random(seed: u64) -> Fill {
        Fill {
            seed,
            data: DataMode::Random,
            sparse: false,
            verify_unit: None,
        }
    }
}

/// [`check`], and for a file iopath makes (`size` bytes, twice that with
/// `copies`), room for it: all that [`prepare`] can refuse before any
/// I/O, so that the run says it before its estimate.
/// What killed runs left there and is removed is said to `events`.
pub fn check_room(
    spec: &TargetSpec,
    size: Option<u64>,
    copies: bool,
    events: Events<'_>,
) -> Result<()> {
    check(spec)?;
    let size = size.unwrap_or(DEFAULT_SIZE);
    match spec {
        TargetSpec::TempIn(dir) => {
            let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            // What dead runs left there is no longer in the way.
            reap_in(dir, events);
            check_free_space(dir, size, copies)
        }
        TargetSpec::File { path, .. } if !path.exists() => {
            check_free_space(parent_of(path), size, copies)
        }
        TargetSpec::File { .. } => Ok(()),
    }
}

/// How [`prepare`] makes or opens the target.
#[derive(Debug, Clone, Copy)]
pub struct Prepare<'a> {
    /// The size of a file iopath makes ([`DEFAULT_SIZE`] without), or
    /// the part of an existing one the run uses.
    pub size: Option<u64>,
    /// Some case writes to it.
    pub writes: bool,
    /// The copy pattern runs: room for its destination beside the file,
    /// and the destinations killed runs left there reaped.
    pub copies: bool,
    pub fill: Fill,
    pub stop: &'a AtomicBool,
    pub progress: &'a Progress,
    /// Where what killed runs left, and this run removed, is said.
    pub events: Events<'a>,
}

/// Create or open the target.
pub fn prepare(spec: &TargetSpec, how: &Prepare<'_>) -> Result<Target> {
    check(spec)?;
    match spec {
        // Absolute, so results and messages name the file unambiguously.
        TargetSpec::TempIn(dir) => {
            how.temporary_in(&std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()))
        }
        TargetSpec::File {
            path,
            allow_write,
            force_signature,
            prefill,
        } => match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => how.new_file(path),
            Err(e) => Err(UsageError(format!("--file {}: {e}", path.display())).into()),
            Ok(meta) => how.existing(
                path,
                &meta,
                Existing {
                    writes: how.writes,
                    allow_write: *allow_write,
                    force_signature: *force_signature,
                    prefill: *prefill,
                },
            ),
        },
    }
}

impl Prepare<'_> {
    /// iopath's own temporary file in `dir` (absolute): unnamed where the
    /// file system can, else named for this run and marked as its own.
    fn temporary_in(&self, dir: &Path) -> Result<Target> {
        reap_in(dir, self.events);
        let size = self.size.unwrap_or(DEFAULT_SIZE);
        check_free_space(dir, size, self.copies)?;
        let made = match create_unnamed(dir)? {
            Some(made) => made,
            None => {
                let path = dir.join(format!(
                    "iopath-{}-{:08x}.dat",
                    std::process::id(),
                    Rng::new(self.fill.seed ^ nanos()).next_u64() as u32
                ));
                let file = create_named(&path)?;
                // Marked as this run's (or, with no extended attributes,
                // renamed to carry its tag), so that once the run is
                // gone the reaper can tell it from a user's file of that
                // name; a live run's file, locked first: the reaper leaves it.
                let path = reap::claim(&file, |f| reap::mark_or_tag(f, &path));
                Made {
                    file,
                    path: path.clone(),
                    open_path: path,
                    dir: dir.to_path_buf(),
                    unnamed: false,
                }
            }
        };
        self.filled(made, TargetKind::Temporary)
    }

    /// A `--file` that does not exist: created for the run and removed
    /// after it, so made without a name where the file system can (a
    /// killed run then leaves nothing under the name either). Results and
    /// messages call it by the name asked for.
    fn new_file(&self, path: &Path) -> Result<Target> {
        let size = self.size.unwrap_or(DEFAULT_SIZE);
        let dir = parent_of(path);
        check_free_space(dir, size, self.copies)?;
        if self.copies {
            reap_in(dir, self.events);
        }
        let made = match create_unnamed(dir)? {
            Some(made) => Made {
                path: path.to_path_buf(),
                ..made
            },
            None => {
                let file = create_named(path)?;
                reap::try_lock(&file);
                Made {
                    file,
                    path: path.to_path_buf(),
                    open_path: path.to_path_buf(),
                    dir: dir.to_path_buf(),
                    unnamed: false,
                }
            }
        };
        self.filled(made, TargetKind::File)
    }

    /// A `--file` that exists, opened as [`open_existing`] allows and
    /// prefilled when asked.
    fn existing(&self, path: &Path, meta: &std::fs::Metadata, opts: Existing) -> Result<Target> {
        if self.copies && meta.is_file() {
            // The copy pattern's destinations go beside the file.
            reap_in(parent_of(path), self.events);
        }
        let mut target = open_existing(path, meta, self.size, opts)?;
        if opts.prefill {
            prefill_existing(&mut target, self.fill, self.stop, self.progress)?;
        }
        Ok(target)
    }

    /// The file made, held by a [`Target`] and filled.
    fn filled(&self, made: Made, kind: TargetKind) -> Result<Target> {
        let size = self.size.unwrap_or(DEFAULT_SIZE);
        create_prefilled(made, size, kind, self.fill, self.stop, self.progress)
    }
}

/// What can be said wrong with the target before anything is made or
/// printed (bad input, exit 2): a `--dir` that is missing, not a directory
/// or not writable; a new `--file` whose directory is so, or in `/dev`.
/// Free space is checked once killed runs' files are reaped, and an
/// existing file as it is opened.
pub fn check(spec: &TargetSpec) -> Result<()> {
    match spec {
        TargetSpec::TempIn(dir) => {
            let meta = std::fs::metadata(dir).map_err(|e| {
                UsageError(format!(
                    "--dir {}: {e}; give an existing directory",
                    dir.display()
                ))
            })?;
            if !meta.is_dir() {
                return Err(
                    UsageError(format!("--dir {} is not a directory", dir.display())).into(),
                );
            }
            // No --dir (or `--dir .`): the current directory, as such.
            let flag = if dir.as_os_str() == "." { "." } else { "--dir" };
            let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            writable(flag, dir, dir)
        }
        TargetSpec::File { path, .. } if !path.exists() => {
            let dir = parent_of(path);
            if !dir.is_dir() {
                return Err(UsageError(format!(
                    "--file {}: directory {} does not exist",
                    path.display(),
                    dir.display()
                ))
                .into());
            }
            refuse_dev(path, dir)?;
            writable("--file", path, dir)
        }
        TargetSpec::File { .. } => Ok(()),
    }
}

/// Writes to a file iopath did not create need `--allow-write`.
fn refuse_unasked_writes(path: &Path, writes: bool, allow_write: bool) -> Result<()> {
    if writes && !allow_write {
        return Err(UsageError(format!(
            "{} exists and iopath did not create it: write patterns would destroy its contents. \
             Use --patterns read,randread, or add --allow-write if that is what you want",
            path.display()
        ))
        .into());
    }
    Ok(())
}

/// The refusals of an existing `--file` that need no open of it, said
/// before the estimate (a run that cannot start promises no duration):
/// writes not allowed, and the write guards by path. The guards run again
/// on the file as pinned when the run opens it ([`prepare`]), which is
/// what counts; this is the early word. `writes`: some case writes.
pub fn check_existing(spec: &TargetSpec, writes: bool) -> Result<()> {
    let TargetSpec::File {
        path,
        allow_write,
        force_signature,
        prefill,
    } = spec
    else {
        return Ok(());
    };
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    refuse_unasked_writes(path, writes, *allow_write)?;
    if *allow_write && (writes || *prefill) {
        let ft = meta.file_type();
        if ft.is_block_device() {
            crate::run::guard::check_block_write(path, path, *force_signature)?;
        } else if ft.is_file() {
            crate::run::guard::check_file_write(path, path)?;
        }
    }
    Ok(())
}

/// The directory of `path` (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The test file is made in `dir`: a directory this user cannot write in
/// (or a read-only file system) is bad input, said before anything else
/// (exit 2), naming the directory rather than a file. `flag` is the flag
/// that named it, or `.` for the current directory (no --dir).
fn writable(flag: &str, given: &Path, dir: &Path) -> Result<()> {
    use rustix::fs::{access, Access};
    match access(dir, Access::WRITE_OK | Access::EXEC_OK) {
        Ok(()) => Ok(()),
        Err(e) => {
            let why = if e == rustix::io::Errno::ROFS {
                "it is on a read-only file system".to_string()
            } else {
                format!(
                    "this user (uid {}) may not create files in it ({})",
                    rustix::process::getuid().as_raw(),
                    std::io::Error::from(e)
                )
            };
            let instead = if flag == "--dir" {
                "give a directory this user can write to"
            } else {
                "name a file in a directory this user can write to"
            };
            if flag == "." {
                return Err(UsageError(format!(
                    "cannot make the test file in the current directory {}: {why}; give --dir with a directory this user can write to, or run as a user who may write in it",
                    dir.display()
                ))
                .into());
            }
            Err(UsageError(format!(
                "{flag} {}: cannot make the test file in directory {}: {why}; {instead}, or run as a user who may write in it",
                given.display(),
                dir.display()
            ))
            .into())
        }
    }
}

/// A --file that does not exist in `/dev` (devtmpfs, or the tmpfs a
/// container mounts there) is a mistyped device name: iopath would create a
/// file in memory and measure it. Bad input.
fn refuse_dev(path: &Path, dir: &Path) -> Result<()> {
    let dev_of = |p: &Path| std::fs::metadata(p).ok().map(|m| m.dev());
    let in_dev = dev_of(dir).is_some() && dev_of(dir) == dev_of(Path::new("/dev"));
    let memory = matches!(
        iopath_io::sys::fs_type_of(dir).unwrap_or("unknown"),
        "tmpfs" | "devtmpfs" | "ramfs"
    );
    if in_dev && memory {
        return Err(UsageError(format!(
            "{} does not exist: iopath would create a file in /dev (devtmpfs, memory); name an existing device, or a file on a real file system",
            path.display()
        ))
        .into());
    }
    Ok(())
}

/// Remove what killed runs left in `dir`, and say so.
fn reap_in(dir: &Path, events: Events<'_>) {
    let removed = reap::stale_files(dir);
    if !removed.is_empty() {
        events.emit(crate::run::Event::StaleFiles(&removed));
    }
}

/// A file iopath just created, open read-write.
struct Made {
    file: File,
    /// As recorded: the file's name, or for an unnamed file
    /// `<dir>/(unnamed O_TMPFILE)`.
    path: PathBuf,
    open_path: PathBuf,
    dir: PathBuf,
    unnamed: bool,
}

/// Make the test file without a name in `dir` (`O_TMPFILE`), `None` where
/// the file system (or kernel) cannot, or [`NO_TMPFILE_ENV`] says not to.
fn create_unnamed(dir: &Path) -> Result<Option<Made>> {
    if std::env::var_os(NO_TMPFILE_ENV).is_some_and(|v| v == "1") {
        return Ok(None);
    }
    use rustix::fs::{Mode, OFlags};
    // O_EXCL: it can never be linked into the directory.
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::EXCL | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(dir, flags, Mode::from_raw_mode(0o600)) {
        Ok(fd) => fd,
        // Not supported by the file system (EOPNOTSUPP), or a kernel that
        // knows no O_TMPFILE (it reads as O_DIRECTORY: EISDIR), or EINVAL.
        Err(e)
            if e == rustix::io::Errno::OPNOTSUPP
                || e == rustix::io::Errno::ISDIR
                || e == rustix::io::Errno::INVAL =>
        {
            return Ok(None)
        }
        Err(e) => {
            let e = std::io::Error::from(e);
            let hint = hint_of(iopath_io::sys::errno_hint("create", &e));
            bail!("cannot create a test file in {}: {e}{hint}", dir.display());
        }
    };
    let file = File::from(fd);
    let open_path = proc_fd_path(&file);
    // Engines reopen it by that path: make sure it can be (no /proc, or a
    // file system whose unnamed files cannot be reopened: use a name). Out
    // of descriptors or memory is no answer to that: the run could not
    // open its file either way (and the unnamed file goes with `file`).
    match std::fs::File::open(&open_path) {
        Ok(_) => {}
        Err(e) if iopath_io::sys::is_limit_error(&e) => {
            return Err(limit_error(
                &format!("cannot open the test file in {}", dir.display()),
                &e,
            ))
        }
        Err(_) => return Ok(None),
    }
    Ok(Some(Made {
        file,
        path: dir.join("(unnamed O_TMPFILE)"),
        open_path,
        dir: dir.to_path_buf(),
        unnamed: true,
    }))
}

/// Create `path`, never over an existing file, read-write, mode 0600.
fn create_named(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| {
            let hint = hint_of(iopath_io::sys::errno_hint("create", &e));
            anyhow::anyhow!("cannot create {}: {e}{hint}", path.display())
        })
}

/// `; HINT`, or nothing without one.
fn hint_of(hint: Option<String>) -> String {
    hint.map(|h| format!("; {h}")).unwrap_or_default()
}

/// `what` failed with an error of a limit (open files, memory:
/// [`iopath_io::sys::is_limit_error`]): a failed run (exit 1) whose
/// message names the limit, its value and the next step.
fn limit_error(what: &str, e: &std::io::Error) -> anyhow::Error {
    let hint = hint_of(e.raw_os_error().and_then(iopath_io::sys::limit_hint));
    anyhow::anyhow!("{what}: {e}{hint}")
}

fn nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Room for the test file of `size` bytes, and with `copies` for the copy
/// pattern's destination beside it (as large again), plus a margin.
fn check_free_space(dir: &Path, size: u64, copies: bool) -> Result<()> {
    let need = if copies { size.saturating_mul(2) } else { size };
    if iopath_io::sys::is_read_only(dir).unwrap_or(false) {
        return Err(UsageError(format!(
            "{} is on a read-only file system: iopath cannot create its test file there; use --dir on a writable file system, or --file with an existing file for read patterns",
            dir.display()
        ))
        .into());
    }
    let free = iopath_io::sys::free_bytes(dir)
        .with_context(|| format!("cannot read free space of {}", dir.display()))?;
    let margin = head_room(free);
    if need.saturating_add(margin) > free {
        return Err(UsageError(format!(
            "a {} test file{} fit in {}: {} is available and iopath leaves {} free; use a smaller --size or another --dir",
            fmt_bytes(size),
            if copies { " and its copy do not" } else { " does not" },
            dir.display(),
            fmt_bytes(free),
            fmt_bytes(margin)
        ))
        .into());
    }
    Ok(())
}

/// Space left free beside the test file: a tenth of what is free, at most
/// [`FREE_MARGIN`], so the file system never fills up.
fn head_room(free: u64) -> u64 {
    (free / 10).min(FREE_MARGIN)
}

/// Write `size` bytes of `fill` from the start of `file`, then flush it and
/// drop it from the page cache.
fn write_fill(
    file: &mut File,
    path: &Path,
    size: u64,
    fill: Fill,
    stop: &AtomicBool,
    progress: &Progress,
) -> Result<()> {
    let bar = progress.prefill(size);
    let mut rng = Rng::stream(fill.seed, u64::MAX);
    // Whole verification units in every chunk but the file's tail.
    let unit = fill.verify_unit.map(|u| u as usize);
    let mut chunk = vec![0u8; unit.map_or(4 << 20, |u| ((4 << 20) / u).max(1) * u)];
    let mut written = 0u64;
    while written < size {
        if stop.load(Ordering::Relaxed) {
            return Err(Interrupted.into());
        }
        let n = (size - written).min(chunk.len() as u64) as usize;
        rng.fill_as(&mut chunk[..n], fill.data);
        if let Some(u) = unit {
            iopath_io::verify::stamp_all(&mut chunk[..n], u, written, fill.seed, 0, 0);
        }
        file.write_all(&chunk[..n]).map_err(|e| {
            let hint = iopath_io::sys::errno_hint("write", &e).unwrap_or_default();
            anyhow::anyhow!(
                "prefilling {} failed after {}: {e} {hint}",
                path.display(),
                fmt_bytes(written)
            )
        })?;
        written += n as u64;
        bar.set_position(written);
    }
    iopath_io::sys::evict_file(file)
        .with_context(|| format!("fsync/fadvise of {} failed", path.display()))?;
    bar.finish_and_clear();
    Ok(())
}

fn create_prefilled(
    made: Made,
    size: u64,
    kind: TargetKind,
    fill: Fill,
    stop: &AtomicBool,
    progress: &Progress,
) -> Result<Target> {
    let path = made.path.clone();
    // From here on the Target owns the file: any early return removes it.
    let mut target = Target {
        open_path: made.open_path,
        dir: made.dir,
        held: Some(made.file),
        info: TargetInfo {
            path: path.clone(),
            unnamed: made.unnamed,
            kind,
            size_bytes: size,
            file_bytes: Some(size),
            created: true,
            writable: true,
            prefilled: false,
            sparse: fill.sparse,
            prefill_ns: None,
            allocated_bytes: None,
        },
        stamp: Default::default(),
    };
    let mut file = match target.held.as_ref().map(File::try_clone) {
        Some(Ok(f)) => f,
        Some(Err(e)) if iopath_io::sys::is_limit_error(&e) => {
            return Err(limit_error(
                &format!("cannot open {} to fill it", path.display()),
                &e,
            ))
        }
        Some(Err(e)) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
        None => bail!("{} is not held open", path.display()),
    };
    if fill.sparse {
        file.set_len(size)
            .with_context(|| format!("cannot size {} to {}", path.display(), fmt_bytes(size)))?;
        target.info.allocated_bytes = Some(file.metadata()?.blocks() * 512);
        target.settle();
        return Ok(target);
    }
    let t0 = Instant::now();
    write_fill(&mut file, &path, size, fill, stop, progress)?;
    let meta = file.metadata()?;
    target.info.prefilled = true;
    target.info.prefill_ns = Some(t0.elapsed().as_nanos() as u64);
    target.info.allocated_bytes = Some(meta.blocks() * 512);
    if meta.len() != size {
        bail!(
            "{} has {} bytes after prefill, expected {}",
            path.display(),
            meta.len(),
            size
        );
    }
    target.settle();
    Ok(target)
}

#[cfg(test)]
mod tests;

//! The neighbour: a fixed latency-sensitive reader that stands for the
//! service next to the program being measured (a database's hot set, a
//! cache server). It issues random 4 KiB buffered reads over a hot set
//! small enough to stay in the page cache, one every [`PACE`], and records
//! each read's latency and whether the page cache had it.
//!
//! A hit is told exactly, not guessed from latency: each read is first
//! tried with `preadv2(RWF_NOWAIT)`, which the kernel answers from the page
//! cache or refuses with EAGAIN; a refused one is a miss, and is then read
//! with a plain `pread` (its latency counts both calls, as a program that
//! blocks would see about the same).
//!
//! Where the file system refuses `RWF_NOWAIT` itself (tmpfs answers
//! EOPNOTSUPP, whatever the cache holds), hits cannot be told: the window's
//! `hits` is `None` (unknown), never a 0% that would read as all misses,
//! and the loop stops asking after the first refusal.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes of each read.
pub const READ: usize = 4096;
/// Time between the neighbour's reads: about 5000 reads a second, a
/// steady service that leaves the CPUs to the method measured.
pub const PACE: Duration = Duration::from_micros(200);

/// The neighbour's hot set: an unlinked file of its own, filled once.
#[derive(Debug)]
pub struct HotSet {
    file: Arc<File>,
    len: u64,
}

/// What the neighbour saw over one window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NeighbourStats {
    pub reads: u64,
    /// Reads the page cache served (RWF_NOWAIT succeeded); `None` where
    /// the file system refuses RWF_NOWAIT (tmpfs), so hits are unknown.
    pub hits: Option<u64>,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

impl NeighbourStats {
    /// Hits over reads (1 when nothing was read); `None` when unknown.
    pub fn hit_ratio(&self) -> Option<f64> {
        let hits = self.hits?;
        Some(if self.reads == 0 {
            1.0
        } else {
            hits as f64 / self.reads as f64
        })
    }

    fn of(mut lat: Vec<u64>, hits: Option<u64>) -> NeighbourStats {
        lat.sort_unstable();
        let pct = |p: f64| -> u64 {
            if lat.is_empty() {
                return 0;
            }
            let i = ((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1;
            lat[i]
        };
        NeighbourStats {
            reads: lat.len() as u64,
            hits,
            p50_ns: pct(0.50),
            p99_ns: pct(0.99),
        }
    }
}

/// A new file in `dir` no one else can reach: unnamed (`O_TMPFILE`) where
/// the file system can, else created under a fresh name (`O_EXCL`: never
/// over an existing file, never through a symlink) and unlinked at once.
fn hot_file(dir: &Path) -> io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::EXCL | OFlags::CLOEXEC;
    match rustix::fs::open(dir, flags, Mode::from_raw_mode(0o600)) {
        Ok(fd) => return Ok(std::fs::File::from(fd)),
        Err(e)
            if e == rustix::io::Errno::OPNOTSUPP
                || e == rustix::io::Errno::ISDIR
                || e == rustix::io::Errno::INVAL => {}
        Err(e) => {
            return Err(io::Error::new(
                io::Error::from(e).kind(),
                format!("{}: {}", dir.display(), io::Error::from(e)),
            ))
        }
    }
    named_hot_file(dir)
}

/// [`hot_file`] where `O_TMPFILE` is refused.
fn named_hot_file(dir: &Path) -> io::Result<std::fs::File> {
    let path = dir.join(format!(".iopath-neighbour-{}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

impl HotSet {
    /// Create a hot set of `len` bytes (rounded down to 4 KiB, at least
    /// one read) in `dir`, unlinked at once, filled and read into the
    /// page cache.
    pub fn create(dir: &Path, len: u64) -> io::Result<HotSet> {
        let len = (len / READ as u64).max(1) * READ as u64;
        let file = hot_file(dir)?;
        let block = vec![0x6Eu8; 1 << 20];
        let mut off = 0;
        while off < len {
            let n = (len - off).min(block.len() as u64) as usize;
            rustix::io::pwrite(&file, &block[..n], off)?;
            off += n as u64;
        }
        let hot = HotSet {
            file: Arc::new(file),
            len,
        };
        hot.warm()?;
        Ok(hot)
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Read the whole hot set once, so that it is cached (what a running
    /// service's hot set is before a neighbour arrives).
    pub fn warm(&self) -> io::Result<()> {
        let mut buf = vec![0u8; 1 << 20];
        let mut off = 0;
        while off < self.len {
            let n = (self.len - off).min(buf.len() as u64) as usize;
            rustix::io::pread(&*self.file, &mut buf[..n], off)?;
            off += n as u64;
        }
        Ok(())
    }

    /// The neighbour alone for `window`.
    pub fn measure(&self, window: Duration, seed: u64) -> NeighbourStats {
        let stop = AtomicBool::new(false);
        let deadline = Instant::now() + window;
        read_loop(&self.file, self.len, seed, &stop, Some(deadline))
    }

    /// Start the neighbour on a thread of its own; [`Running::stop`] ends
    /// it and says what it saw.
    pub fn start(&self, seed: u64) -> io::Result<Running> {
        let stop = Arc::new(AtomicBool::new(false));
        let (file, len, flag) = (Arc::clone(&self.file), self.len, Arc::clone(&stop));
        let handle = std::thread::Builder::new()
            .name("iopath-neighbour".into())
            .spawn(move || read_loop(&file, len, seed, &flag, None))?;
        Ok(Running { stop, handle })
    }
}

/// A neighbour running beside a measurement.
#[derive(Debug)]
pub struct Running {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<NeighbourStats>,
}

impl Running {
    pub fn stop(self) -> NeighbourStats {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

fn read_loop(
    file: &File,
    len: u64,
    seed: u64,
    stop: &AtomicBool,
    deadline: Option<Instant>,
) -> NeighbourStats {
    let blocks = (len / READ as u64).max(1);
    let mut rng = crate::data::Rng::new(seed ^ 0x6e65_6967_6862_6f72);
    let mut buf = vec![0u8; READ];
    let mut lat = Vec::with_capacity(1 << 14);
    let mut hits = 0;
    // Cleared at the first refusal of RWF_NOWAIT itself (EOPNOTSUPP:
    // tmpfs): hits are then unknown and every read is a plain pread.
    let mut nowait_works = true;
    let fd = file.as_fd();
    let nowait = rustix::io::ReadWriteFlags::NOWAIT;
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d) {
        let off = (rng.next_u64() % blocks) * READ as u64;
        let t0 = Instant::now();
        let hit = nowait_works
            && match rustix::io::preadv2(fd, &mut [io::IoSliceMut::new(&mut buf)], off, nowait) {
                Ok(n) => n == READ,
                Err(e) if refuses_nowait(e) => {
                    nowait_works = false;
                    false
                }
                Err(_) => false,
            };
        if !hit {
            // EAGAIN (not cached), or a short cached read: read it all.
            if rustix::io::pread(fd, &mut buf, off).is_err() {
                break;
            }
        }
        lat.push(t0.elapsed().as_nanos() as u64);
        hits += u64::from(hit);
        next += PACE;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    NeighbourStats::of(lat, nowait_works.then_some(hits))
}

/// True when `e` says RWF_NOWAIT itself is refused (the file system does
/// not support it), not that this read would block (EAGAIN).
fn refuses_nowait(e: rustix::io::Errno) -> bool {
    e == rustix::io::Errno::OPNOTSUPP || e == rustix::io::Errno::NOSYS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review of issue 14: the hot set was opened by a fixed name in the
    /// target's directory with create + truncate, following symlinks: a
    /// link planted there had iopath truncate and overwrite any file the
    /// user could write, without --allow-write.
    #[test]
    fn a_planted_symlink_is_neither_followed_nor_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let planted = dir
            .path()
            .join(format!(".iopath-neighbour-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let hot = HotSet::create(dir.path(), 1 << 16).unwrap();
        assert_eq!(hot.len(), 1 << 16);
        // Where O_TMPFILE is refused: the name is taken, and it says so.
        assert_eq!(
            named_hot_file(dir.path()).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&planted).unwrap().is_symlink());
    }

    #[test]
    fn a_cached_hot_set_is_all_hits_and_a_dropped_one_misses() {
        let dir = std::env::temp_dir();
        let hot = HotSet::create(&dir, 1 << 20).unwrap();
        let warm = hot.measure(Duration::from_millis(50), 1);
        let fs = crate::sys::fs_type_of(&dir).unwrap_or("?");
        if fs == "tmpfs" {
            // tmpfs refuses RWF_NOWAIT: hits are unknown, never 0%.
            assert!(warm.reads > 0 && warm.hits.is_none(), "{warm:?}");
            eprintln!(
                "skipped the hit/miss halves: {} is tmpfs, which refuses RWF_NOWAIT",
                dir.display()
            );
            return;
        }
        assert!(warm.reads > 0 && warm.hits == Some(warm.reads), "{warm:?}");
        // Evict it: written back first (DONTNEED drops clean pages only).
        rustix::fs::fdatasync(&*hot.file).unwrap();
        rustix::fs::fadvise(&*hot.file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        let cold = hot.measure(Duration::from_millis(50), 2);
        assert!(cold.hits.unwrap() < cold.reads, "{cold:?}");
    }

    /// Review of issue 17: tmpfs answers preadv2(RWF_NOWAIT) with
    /// EOPNOTSUPP, and every read was counted a miss ("hit 0%").
    #[test]
    fn on_tmpfs_hits_are_unknown_not_zero() {
        let dir = std::path::Path::new("/dev/shm");
        if crate::sys::fs_type_of(dir).ok() != Some("tmpfs") {
            eprintln!("skipped: /dev/shm is not a tmpfs here");
            return;
        }
        let hot = HotSet::create(dir, 1 << 16).unwrap();
        let s = hot.measure(Duration::from_millis(20), 3);
        assert!(s.reads > 0, "{s:?}");
        assert_eq!((s.hits, s.hit_ratio()), (None, None), "{s:?}");
    }

    #[test]
    fn percentiles_come_from_the_sorted_latencies() {
        let s = NeighbourStats::of((1..=100).rev().collect(), Some(40));
        assert_eq!((s.reads, s.p50_ns, s.p99_ns), (100, 50, 99));
        assert!((s.hit_ratio().unwrap() - 0.4).abs() < 1e-9);
    }
}

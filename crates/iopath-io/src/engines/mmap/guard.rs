//! SIGBUS from iopath's own file mappings, turned into an error of the
//! request instead of the death of the process.
//!
//! Touching a page of a shared file mapping that lies wholly past the
//! file's end (another process truncated the file while it was mapped)
//! raises SIGBUS, as does a page the kernel cannot read in or allocate
//! (an I/O error, no space for a page written into a hole, a hardware
//! memory error on DAX). Its default action kills the process without a
//! word, and the results gathered so far are lost.
//!
//! So a process-wide handler (`SA_SIGINFO | SA_ONSTACK`, installed once,
//! the first time a mapping is registered) looks the faulting address up in
//! a fixed table of the live mappings the engines made ([`Guard`]). The
//! table is lock-free: each entry is a sequence lock over atomics, which
//! the handler only reads, and the id of the thread accessing the mapping
//! now ([`Guard::access`]: an engine's copy, one thread at a time). The
//! handler recovers a fault only when all of these hold:
//! - it is a synchronous fault of the access itself: `si_code` is
//!   `BUS_ADRERR` (no page: past end of file), `BUS_OBJERR` (the page could
//!   not be read in or allocated) or `BUS_MCEERR_AR` (a memory error met by
//!   the access);
//! - the address is inside a guarded mapping;
//! - the thread that took it is the one accessing that mapping now (the
//!   mapping is then alive, and nobody else is looking at its bytes).
//!
//! It then records the fault in the entry, and only then maps an anonymous
//! zero page over the faulting page (`mmap` with `MAP_FIXED`: one system
//! call, safe in a signal handler on Linux, where it does nothing else), and
//! returns: the faulting instruction runs again, now on the zero page, and
//! succeeds. Recording first means that any load that can see the zero
//! page comes after the fault is recorded. The engine checks its entry
//! after every access ([`Guard::fault`]) and fails the request, and every
//! later one, with an error naming the file.
//!
//! Any other synchronous fault (outside the guarded mappings, on another
//! thread, or not during an access) goes to the handler that was installed
//! before (Rust's own, which reports stack overflows, else restores the
//! default action and returns), or to the default action: the faulting
//! instruction runs again and the process dies of it, as it would have
//! without this module, so real bugs still crash. Any SIGBUS that is not a
//! synchronous fault — sent by a process (`kill`, `si_code <= 0`), or
//! `BUS_MCEERR_AO`, the kernel's asynchronous notice of a memory error not
//! yet touched (sent only where early kill was asked, with
//! `prctl(PR_MCE_KILL)` or `vm.memory_failure_early_kill`), often to another
//! thread than the one using the page — takes the default action: the
//! process ends. It is not passed to the previous handler, which handles
//! faults: Rust's would restore the default action and return, leaving the
//! process running with this guard silently off and the notice ignored.

use std::cell::Cell;
use std::sync::atomic::{compiler_fence, fence, AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

/// Mappings guarded at once (one per engine: per worker thread of a case).
/// A mapping made while all are taken is not guarded (see
/// [`Guard::register`]).
pub(super) const ENTRIES: usize = 1024;

/// One live mapping: `[start, start + len)`, and its first fault.
#[derive(Debug)]
struct Entry {
    /// Taken by a [`Guard`].
    taken: AtomicBool,
    /// Sequence lock over `start` and `len`: odd while they change.
    seq: AtomicUsize,
    start: AtomicUsize,
    /// 0: no mapping.
    len: AtomicUsize,
    /// 1 + the offset in the mapping of the first page that faulted; 0: none.
    fault: AtomicUsize,
    /// `si_code` of that fault.
    code: AtomicI32,
    /// The thread (kernel thread id) accessing the mapping now; 0: none.
    /// Written only by that thread, read by the handler on it.
    active: AtomicI32,
}

impl Entry {
    const fn new() -> Entry {
        Entry {
            taken: AtomicBool::new(false),
            seq: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            fault: AtomicUsize::new(0),
            code: AtomicI32::new(0),
            active: AtomicI32::new(0),
        }
    }

    /// Set the range (the entry is taken by the caller).
    fn set(&self, start: usize, len: usize) {
        // A sequence lock's writer (one per entry: its taker): odd, then a
        // release fence so that a reader that sees any new value also sees
        // the sequence changed; even again, releasing the values.
        self.seq.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.start.store(start, Ordering::Relaxed);
        self.len.store(len, Ordering::Relaxed);
        self.fault.store(0, Ordering::Relaxed);
        self.code.store(0, Ordering::Relaxed);
        self.active.store(0, Ordering::Relaxed);
        self.seq.fetch_add(1, Ordering::Release);
    }

    /// The range, read consistently; `None` while it changes or when empty.
    fn range(&self) -> Option<(usize, usize)> {
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 % 2 == 1 {
            return None;
        }
        let (start, len) = (
            self.start.load(Ordering::Relaxed),
            self.len.load(Ordering::Relaxed),
        );
        fence(Ordering::Acquire);
        let s2 = self.seq.load(Ordering::Relaxed);
        (s1 == s2 && len > 0).then_some((start, len))
    }
}

static TABLE: [Entry; ENTRIES] = [const { Entry::new() }; ENTRIES];

/// The SIGBUS action before ours, called for faults that are not ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// A fault the handler recovered from in a guarded mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fault {
    /// Offset in the mapping (the file) of the page that faulted.
    pub(super) offset: usize,
    /// Its `si_code` (`BUS_ADRERR` for a page past end of file or one that
    /// could not be read in; `BUS_MCEERR_*` for a memory error).
    pub(super) code: i32,
}

/// A mapping registered with the handler, until dropped. Drop it before
/// unmapping: from then on, a fault at its addresses is not ours.
#[derive(Debug)]
pub(super) struct Guard {
    entry: &'static Entry,
}

impl Guard {
    /// Guard `[start, start + len)`, a mapping the caller made and unmaps
    /// only after dropping the guard. `None` when the handler could not be
    /// installed or every entry is taken (the mapping then runs unguarded,
    /// as before this module: a SIGBUS in it kills the process).
    pub(super) fn register(start: usize, len: usize) -> Option<Guard> {
        if len == 0 || !install() {
            return None;
        }
        let entry = TABLE.iter().find(|e| {
            e.taken
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        entry.set(start, len);
        Some(Guard { entry })
    }

    /// Run `f`, an access of this thread to the guarded mapping (a copy to
    /// or from it): a SIGBUS fault it takes there is recovered, and only
    /// such a one. Not nested; one thread at a time (the mapping's owner
    /// holds it through `&self`/`&mut self` and is not `Sync`).
    pub(super) fn access<T>(&self, f: impl FnOnce() -> T) -> T {
        self.entry.active.store(this_thread(), Ordering::Relaxed);
        // The handler runs on this thread, inside `f`: keep the store
        // before the access and the clearing after it.
        compiler_fence(Ordering::SeqCst);
        let v = f();
        compiler_fence(Ordering::SeqCst);
        self.entry.active.store(0, Ordering::Relaxed);
        v
    }

    /// The first fault the handler recovered from in this mapping, if any.
    /// Call it after each access: a fault during the access is seen (the
    /// handler ran on this thread, before the faulting instruction
    /// completed, and recorded it before mapping the zero page).
    pub(super) fn fault(&self) -> Option<Fault> {
        // The handler's stores happened on this thread, inside the access
        // before this call; the fence keeps the compiler from moving the
        // load above that access.
        compiler_fence(Ordering::SeqCst);
        let f = self.entry.fault.load(Ordering::Acquire);
        (f > 0).then(|| Fault {
            offset: f - 1,
            code: self.entry.code.load(Ordering::Acquire),
        })
    }
}

/// The kernel id of the calling thread (`gettid`), cached per thread.
fn this_thread() -> i32 {
    thread_local! {
        static TID: Cell<i32> = const { Cell::new(0) };
    }
    TID.with(|t| {
        if t.get() == 0 {
            t.set(gettid());
        }
        t.get()
    })
}

/// `gettid(2)`: a plain system call, async-signal-safe.
fn gettid() -> i32 {
    // SAFETY: gettid takes no argument, touches no memory and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.entry.set(0, 0);
        self.entry.taken.store(false, Ordering::Release);
    }
}

/// Install the handler once; whether it is installed.
fn install() -> bool {
    INSTALL.call_once(|| {
        PAGE_SIZE.store(rustix::param::page_size(), Ordering::Relaxed);
        // SAFETY: sigaction with a null new action only reads the current
        // one into `old`, a zeroed sigaction (a valid value: all integers,
        // and a null restorer, which is None).
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) } != 0 {
            return;
        }
        let _ = PREVIOUS.set(old);
        // SAFETY: a zeroed sigaction is valid (see above); the fields set
        // are the handler (an extern "C" fn of the SA_SIGINFO signature)
        // and its flags; sa_mask is emptied by sigemptyset.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: act.sa_mask is a valid sigset_t to initialise.
        unsafe { libc::sigemptyset(&mut act.sa_mask) };
        // SAFETY: act is a complete action for a handler that is sound to
        // run on any thread at any fault (see on_sigbus); SIGBUS can be
        // caught.
        if unsafe { libc::sigaction(libc::SIGBUS, &act, std::ptr::null_mut()) } == 0 {
            INSTALLED.store(true, Ordering::Release);
        }
    });
    INSTALLED.load(Ordering::Acquire)
}

/// The handler. Async-signal-safe: atomics, and `gettid`, `mmap`,
/// `sigaction` and `raise`, each a plain system call here; no allocation,
/// no lock, no thread-local.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler;
    // si_addr is the field of SIGBUS's union member.
    let (addr, code) = unsafe { ((*info).si_addr() as usize, (*info).si_code) };
    if recover(addr, code, gettid()) {
        return;
    }
    // SAFETY: called from the SIGBUS handler with its own arguments.
    unsafe { not_ours(sig, info, ctx, code) }
}

/// Whether `code` is a synchronous fault that an access to a guarded
/// mapping can take and run again after: no page (`BUS_ADRERR`), a page
/// that could not be read in or allocated (`BUS_OBJERR`), a memory error
/// the access met (`BUS_MCEERR_AR`).
fn recoverable(code: i32) -> bool {
    matches!(
        code,
        libc::BUS_ADRERR | libc::BUS_OBJERR | libc::BUS_MCEERR_AR
    )
}

/// Whether `code` is a synchronous fault of an instruction (which runs
/// again when the handler returns), recoverable or not (`BUS_ADRALN`).
fn synchronous(code: i32) -> bool {
    code == libc::BUS_ADRALN || recoverable(code)
}

/// If `code` is a recoverable fault at `addr` in a guarded mapping that
/// thread `tid` is accessing now: the fault recorded, then a zero page over
/// its page; true when the faulting access can now run again.
fn recover(addr: usize, code: i32, tid: i32) -> bool {
    let page_size = PAGE_SIZE.load(Ordering::Relaxed);
    if page_size == 0 || !recoverable(code) {
        return false;
    }
    for e in &TABLE {
        let Some((start, len)) = e.range() else {
            continue;
        };
        if addr.wrapping_sub(start) >= len {
            continue;
        }
        // Ours only if this thread is accessing this mapping now: then it
        // is alive until the access ends (its owner unregisters it before
        // unmapping, and does neither during an access).
        if tid == 0 || e.active.load(Ordering::Relaxed) != tid {
            return false;
        }
        let page = addr & !(page_size - 1);
        // Recorded before the zero page is there: whoever can load from it
        // (this thread, when the handler returns) sees the fault. Only this
        // thread writes these now, and SIGBUS is blocked while it runs.
        if e.fault.load(Ordering::Relaxed) == 0 {
            e.code.store(code, Ordering::Relaxed);
            e.fault.store(page - start + 1, Ordering::Release);
        }
        compiler_fence(Ordering::SeqCst);
        // SAFETY: errno is thread-local; saved to be restored below, as a
        // handler must leave it as the interrupted code had it.
        let errno = unsafe { *libc::__errno_location() };
        // SAFETY: [page, page + page_size) lies in a live guarded mapping
        // (addr is in [start, start + len), start is page-aligned, and the
        // mapping covers whole pages), which this thread is accessing now
        // (checked above), so it is not unmapped or reused meanwhile.
        // MAP_FIXED replaces just that page of it, whose file page is gone
        // or unreadable, with private zeros: no Rust reference into the
        // mapping exists (engines copy through raw pointers), so no value
        // Rust relies on changes.
        let p = unsafe {
            libc::mmap(
                page as *mut libc::c_void,
                page_size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = errno };
        // MAP_FAILED: the access faults again, and the process dies of it
        // (the fault stays recorded, for nobody).
        return p != libc::MAP_FAILED;
    }
    false
}

/// A SIGBUS that is not ours. A synchronous fault goes to the previous
/// handler (Rust's reports a stack overflow, else restores the default
/// action and returns) or, without one, to the default action: returning
/// runs the faulting instruction again, which then kills the process (with
/// a core dump where enabled). Any other SIGBUS (sent by a process, or a
/// memory error's asynchronous notice, `BUS_MCEERR_AO`) has no faulting
/// instruction to run again: it is raised again with the default action,
/// which ends the process, and is not passed to the previous handler,
/// which would switch this guard off (see the module documentation).
///
/// # Safety
/// Only from the SIGBUS handler, with the arguments it got.
unsafe fn not_ours(
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
    code: i32,
) {
    if synchronous(code) {
        if let Some(prev) = PREVIOUS.get() {
            let h = prev.sa_sigaction;
            if h != libc::SIG_DFL && h != libc::SIG_IGN {
                if prev.sa_flags & libc::SA_SIGINFO != 0 {
                    // SAFETY: an SA_SIGINFO action's handler has this
                    // signature; it was installed for SIGBUS and is called
                    // as the kernel would have.
                    let f = unsafe { std::mem::transmute::<libc::sighandler_t, InfoHandler>(h) };
                    f(sig, info, ctx);
                } else {
                    // SAFETY: a plain action's handler takes the signal
                    // number.
                    let f = unsafe { std::mem::transmute::<libc::sighandler_t, PlainHandler>(h) };
                    f(sig);
                }
                return;
            }
        }
    }
    // SAFETY: a zeroed sigaction with SIG_DFL (0) and no flags is the
    // default action; sigaction is async-signal-safe.
    unsafe {
        let dfl: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
    }
    if !synchronous(code) {
        // Blocked while this handler runs: delivered, with the default
        // action, as soon as it returns.
        // SAFETY: raise is async-signal-safe.
        unsafe { libc::raise(libc::SIGBUS) };
    }
}

/// An `SA_SIGINFO` handler.
type InfoHandler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);
/// A plain handler.
type PlainHandler = extern "C" fn(libc::c_int);

#[cfg(test)]
mod tests {
    use super::*;

    /// `pages` pages of inaccessible memory of our own (touching them is
    /// SIGSEGV, never SIGBUS), to register without guarding anyone else's.
    fn reserve(pages: usize) -> usize {
        let ps = rustix::param::page_size();
        // SAFETY: a fresh PROT_NONE mapping where the kernel chooses.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                pages * ps,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(m, libc::MAP_FAILED);
        m as usize
    }

    #[test]
    #[cfg_attr(miri, ignore = "sigaction and mmap")]
    fn entries_are_taken_and_given_back() {
        let ps = rustix::param::page_size();
        let base = reserve(3);
        let a = Guard::register(base, 2 * ps).expect("installed, free");
        let b = Guard::register(base + 2 * ps, ps).expect("free");
        assert!(!std::ptr::eq(a.entry, b.entry));
        assert_eq!(a.entry.range(), Some((base, 2 * ps)));
        assert_eq!(a.fault(), None);
        let e = a.entry;
        drop(a);
        assert_eq!(e.range(), None);
        assert!(Guard::register(base, 0).is_none(), "empty");
        drop(b);
        // SAFETY: the reservation made above, unmapped once.
        unsafe { libc::munmap(base as *mut libc::c_void, 3 * ps) };
    }

    /// The table, as the handler reads it: a synchronous fault at an
    /// address inside a registered range, taken by the thread accessing it
    /// now, is recovered (a zero page mapped over it, the fault recorded
    /// once, at its page). Not recovered: an address outside every range,
    /// a fault outside an access or by another thread, and an asynchronous
    /// memory error notice (BUS_MCEERR_AO, which used to be recovered, from
    /// whatever thread it was sent to).
    #[test]
    #[cfg_attr(miri, ignore = "sigaction and mmap")]
    fn recover_maps_a_zero_page_only_for_a_fault_of_the_access() {
        let ps = rustix::param::page_size();
        // A private anonymous mapping to stand for the file's: 2 pages.
        // SAFETY: a fresh mapping where the kernel chooses; checked below.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * ps,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(m, libc::MAP_FAILED);
        let start = m as usize;
        // SAFETY: inside the 2-page mapping just made.
        unsafe { (start as *mut u8).add(ps + 5).write(0xab) };
        let g = Guard::register(start, 2 * ps).unwrap();
        let me = gettid();
        let other = std::thread::spawn(gettid).join().unwrap();
        let inside = start + ps + 7;
        assert!(
            !recover(inside, libc::BUS_ADRERR, me),
            "not during an access"
        );
        g.access(|| {
            assert!(
                !recover(start + 2 * ps, libc::BUS_ADRERR, me),
                "past the range"
            );
            assert!(!recover(inside, libc::BUS_ADRERR, other), "another thread");
            assert!(!recover(inside, libc::BUS_MCEERR_AO, me), "asynchronous");
            assert!(!recover(inside, libc::BUS_ADRALN, me), "alignment");
            assert!(!recover(inside, 0, me), "sent by a process");
            assert_eq!(g.fault(), None, "nothing recorded yet");
            // SAFETY: inside the mapping, which is ours.
            assert_eq!(unsafe { (start as *const u8).add(ps + 5).read() }, 0xab);
            assert!(recover(inside, libc::BUS_ADRERR, me));
            assert!(
                recover(start + ps + 9, libc::BUS_MCEERR_AR, me),
                "a second fault is recovered too"
            );
            assert!(recover(start, libc::BUS_OBJERR, me));
        });
        assert_eq!(
            g.fault(),
            Some(Fault {
                offset: ps,
                code: libc::BUS_ADRERR
            }),
            "the first fault is kept"
        );
        // SAFETY: inside the mapping; the page is now a fresh zero page.
        assert_eq!(unsafe { (start as *const u8).add(ps + 5).read() }, 0);
        drop(g);
        assert!(!recover(start, libc::BUS_ADRERR, me), "unregistered");
        // SAFETY: the mapping made above, unmapped once.
        unsafe { libc::munmap(m, 2 * ps) };
    }
}

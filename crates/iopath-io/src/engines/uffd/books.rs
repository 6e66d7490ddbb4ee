//! The pager's books, with no system call in them: which pages are
//! resident or being filled, in what order they came ([`Books`], behind the
//! pager's lock), what each page is doing now ([`PageWords`], one atomic
//! word per page that requests read and change without the lock), runs of
//! neighbours ([`runs`]), and eviction ([`evict`]) with its I/O passed in,
//! so that its error paths can be tested.
//!
//! # Invariants
//! - A page is RESIDENT in the books exactly when it is mapped in the
//!   region (its bytes are there), FILLING while a handler reads it from the
//!   file, and neither otherwise. `resident` and `filling` count them; the
//!   FIFO holds one valid entry `(page, generation)` for each resident page
//!   (entries of pages dropped or filled again since are stale and skipped).
//!   Whatever fails, a page is forgotten as soon as it is dropped
//!   ([`evict`]): copying a page the books call resident must never fault,
//!   for the copier may be the fault handler itself, or hold the lock the
//!   handler needs.
//! - A request *pins* each page while it copies to or from it. The pager
//!   *claims* a page (`EVICTING`) before it copies the page out to drop it
//!   or to write it back without write protection, and only a page nobody
//!   pins: a claim waits for no one, and a pin waits only for a claim to be
//!   released, which needs no one else. Either wait spins briefly, then
//!   sleeps until the word changes ([`PageWords`]), so a wait as long as a
//!   `pwrite` costs no CPU. So no copy into a page is lost to a
//!   write-back that took the page's bytes before it, and no page is dropped
//!   under a copy.
//! - `DIRTY` is set while the page is pinned by the request that wrote it
//!   (`uffd`) or by the handler on a write fault (`uffd-wp`), and cleared
//!   only by the pager, under its lock, after writing the page back while
//!   no store could reach it (claimed, or write-protected). `POISONED`: the
//!   page's read failed, it holds zeros; it is never written back, and each
//!   request that copies it fails with the errno kept beside the flag.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};

use super::WRITEBACK_PAGES;

const RESIDENT: u8 = 1;
const FILLING: u8 = 2;

/// Which pages are resident or being filled, and in what order they came.
#[derive(Debug)]
pub(super) struct Books {
    /// Per page: RESIDENT, FILLING or neither.
    state: Vec<u8>,
    /// Per page: how many times it was filled, to tell stale FIFO entries.
    generation: Vec<u32>,
    /// Resident pages, oldest first: (page, generation when filled).
    fifo: VecDeque<(u32, u32)>,
    resident: usize,
    filling: usize,
    budget: usize,
}

/// What a missing-page fault finds in the books.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fill {
    /// The page is FILLING now, counted against the budget: read it.
    Start,
    /// The books say it is resident already.
    Resident,
    /// Another handler is filling it, and wakes every toucher when done.
    Busy,
}

impl Books {
    pub(super) fn new(pages: usize, budget: usize) -> Books {
        Books {
            state: vec![0; pages],
            generation: vec![0; pages],
            fifo: VecDeque::new(),
            resident: 0,
            filling: 0,
            budget: budget.max(1),
        }
    }

    pub(super) fn is_resident(&self, p: usize) -> bool {
        self.state[p] == RESIDENT
    }

    pub(super) fn resident(&self) -> usize {
        self.resident
    }

    pub(super) fn budget(&self) -> usize {
        self.budget
    }

    /// Pages resident and being filled exceed the budget.
    pub(super) fn over_budget(&self) -> bool {
        self.resident + self.filling > self.budget
    }

    /// A missing-page fault on `p`.
    pub(super) fn begin_fill(&mut self, p: usize) -> Fill {
        match self.state[p] {
            RESIDENT => Fill::Resident,
            FILLING => Fill::Busy,
            _ => {
                self.state[p] = FILLING;
                self.filling += 1;
                Fill::Start
            }
        }
    }

    /// The fill of `p` failed before the page was mapped.
    pub(super) fn abort_fill(&mut self, p: usize) {
        if self.state[p] == FILLING {
            self.state[p] = 0;
            self.filling -= 1;
        }
    }

    /// `p`, being filled, is mapped now: the newest resident page.
    pub(super) fn installed(&mut self, p: usize) {
        if self.state[p] != FILLING {
            return;
        }
        self.state[p] = RESIDENT;
        self.filling -= 1;
        self.resident += 1;
        self.generation[p] = self.generation[p].wrapping_add(1);
        self.fifo.push_back((p as u32, self.generation[p]));
        if self.fifo.len() > 2 * self.budget + 1024 {
            let (state, generation) = (&self.state, &self.generation);
            self.fifo
                .retain(|&(q, g)| state[q as usize] == RESIDENT && generation[q as usize] == g);
        }
    }

    /// `p` is no longer mapped (dropped).
    pub(super) fn forget(&mut self, p: usize) {
        if self.state[p] == RESIDENT {
            self.state[p] = 0;
            self.resident -= 1;
        }
    }

    fn valid(&self, (q, g): (u32, u32)) -> bool {
        self.state[q as usize] == RESIDENT && self.generation[q as usize] == g
    }

    /// Up to `want` of the oldest resident pages that `claim` takes. A page
    /// it refuses (in use now) goes to the back of the FIFO, as if it came
    /// again; each entry is looked at once at most, so this ends when every
    /// resident page is in use.
    pub(super) fn victims(
        &mut self,
        want: usize,
        mut claim: impl FnMut(usize) -> bool,
    ) -> Vec<(u32, u32)> {
        let mut victims = Vec::with_capacity(want);
        let mut refused = Vec::new();
        let mut looked = self.fifo.len();
        while victims.len() < want && looked > 0 {
            looked -= 1;
            let Some(v) = self.fifo.pop_front() else {
                break;
            };
            if !self.valid(v) {
                continue;
            }
            if claim(v.0 as usize) {
                victims.push(v);
            } else {
                refused.push(v);
            }
        }
        self.fifo.extend(refused);
        victims
    }

    /// Put back the `victims` still resident, at the front of the FIFO, in
    /// their order: the oldest again.
    pub(super) fn requeue(&mut self, victims: &[(u32, u32)]) {
        for &v in victims.iter().rev() {
            if self.valid(v) {
                self.fifo.push_front(v);
            }
        }
    }

    /// Whether the books agree with themselves: the counts match the
    /// states, and every resident page has one valid FIFO entry.
    #[cfg(test)]
    pub(super) fn check(&self) -> Result<(), String> {
        let count = |s: u8| self.state.iter().filter(|&&x| x == s).count();
        if count(RESIDENT) != self.resident || count(FILLING) != self.filling {
            return Err(format!(
                "counts {} resident, {} filling; states {} and {}",
                self.resident,
                self.filling,
                count(RESIDENT),
                count(FILLING)
            ));
        }
        let mut entries = vec![0u32; self.state.len()];
        for &v in self.fifo.iter().filter(|&&v| self.valid(v)) {
            entries[v.0 as usize] += 1;
        }
        match (0..self.state.len()).find(|&p| entries[p] != u32::from(self.state[p] == RESIDENT)) {
            Some(p) => Err(format!(
                "page {p}: {} valid FIFO entries, state {}",
                entries[p], self.state[p]
            )),
            None => Ok(()),
        }
    }
}

/// Pins: requests copying the page now.
const PINS: u32 = 0xFFFF;
/// The pager has claimed the page (to write it back or drop it): no pin
/// until it is released.
pub(super) const EVICTING: u32 = 1 << 16;
/// Holds bytes the file has not.
pub(super) const DIRTY: u32 = 1 << 17;
/// Its read failed; zeros; the errno is in the top byte.
pub(super) const POISONED: u32 = 1 << 18;
/// A thread sleeps until the page's claim is released (a pinner) or its
/// pins are gone (a write-back): whoever ends that wakes the sleepers.
pub(super) const WAITING: u32 = 1 << 19;
const ERRNO_SHIFT: u32 = 24;
const FLAGS: u32 = !PINS;
/// What a word says of the page's bytes.
const BYTES: u32 = DIRTY | POISONED | (0xFF << ERRNO_SHIFT);

/// Spins on a busy page word before sleeping. A claim lasts a copy and
/// usually a `pwrite`; a pin a copy, and sometimes a fault's `pread`.
const SPINS: u32 = 100;

/// One atomic word per page: pins, claim, dirty, poisoned (see the module
/// documentation for who changes what), and where threads sleep while a
/// page is busy.
///
/// A wait spins [`SPINS`] times, then sleeps on a condition variable
/// until the page's word changes: it used to yield in a loop for as long
/// as the write-back took, which burnt the waiting worker's CPU (counted
/// in the case's CPU time per I/O) and, on a busy machine, the CPU the
/// pager needed.
#[derive(Debug)]
pub(super) struct PageWords {
    words: Box<[AtomicU32]>,
    park: Mutex<()>,
    parked: Condvar,
}

impl PageWords {
    pub(super) fn new(pages: usize) -> PageWords {
        PageWords {
            words: (0..pages).map(|_| AtomicU32::new(0)).collect(),
            park: Mutex::new(()),
            parked: Condvar::new(),
        }
    }

    pub(super) fn word(&self, p: usize) -> u32 {
        self.words[p].load(Ordering::Acquire)
    }

    /// Pin `p` for a copy, waiting while the pager holds a claim on it.
    pub(super) fn pin(&self, p: usize) {
        let w = &self.words[p];
        let mut spins = 0u32;
        let mut cur = w.load(Ordering::Acquire);
        loop {
            if cur & EVICTING != 0 {
                // A write-back or a drop in progress: it waits for nobody.
                spins += 1;
                if spins < SPINS {
                    std::hint::spin_loop();
                } else {
                    self.sleep_while(p, |w| w & EVICTING != 0);
                    spins = 0;
                }
                cur = w.load(Ordering::Acquire);
                continue;
            }
            debug_assert!(cur & PINS < PINS, "page {p}: pin count overflow");
            match w.compare_exchange_weak(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// Unpin `p` after a copy, marking it DIRTY first when the copy was a
    /// store the pager must write back. The errno when the page is poisoned
    /// (its bytes are zeros, not the file's).
    pub(super) fn unpin(&self, p: usize, dirtied: bool) -> Option<i32> {
        let set = if dirtied { DIRTY } else { 0 };
        let prev = self.words[p]
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                let w = (w | set) - 1;
                // The last pin gone: a write-back sleeping on it wakes.
                Some(if w & PINS == 0 { w & !WAITING } else { w })
            })
            .expect("the closure always gives a value");
        if prev & PINS == 1 {
            self.wake(prev);
        }
        (prev & POISONED != 0).then(|| errno_in(prev))
    }

    /// Wait until nobody pins `p` (spinning a little, then sleeping). The
    /// caller holds no claim and no lock a pinner may need.
    pub(super) fn wait_unpinned(&self, p: usize) {
        for _ in 0..SPINS {
            if self.word(p) & PINS == 0 {
                return;
            }
            std::hint::spin_loop();
        }
        self.sleep_while(p, |w| w & PINS != 0);
    }

    /// Sleep while `busy(word of p)`. Under the park lock, the word is
    /// marked WAITING before the sleep; whoever clears the claim or the
    /// last pin clears WAITING with it and, seeing it was set, takes the
    /// park lock (so after this thread sleeps) and wakes every sleeper.
    fn sleep_while(&self, p: usize, busy: impl Fn(u32) -> bool) {
        let w = &self.words[p];
        let mut g = self.park.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let cur = w.load(Ordering::Acquire);
            if !busy(cur) {
                return;
            }
            if cur & WAITING == 0
                && w.compare_exchange(cur, cur | WAITING, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                continue; // changed meanwhile: look again
            }
            g = self.parked.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Wake the sleepers if `prev`, the word before a change that cleared
    /// WAITING, had it.
    fn wake(&self, prev: u32) {
        if prev & WAITING != 0 {
            let _g = self.park.lock().unwrap_or_else(|e| e.into_inner());
            self.parked.notify_all();
        }
    }

    /// Claim `p` if nobody pins it (and nobody claimed it).
    pub(super) fn try_claim(&self, p: usize) -> bool {
        let w = &self.words[p];
        let mut cur = w.load(Ordering::Acquire);
        loop {
            if cur & (PINS | EVICTING) != 0 {
                return false;
            }
            match w.compare_exchange_weak(cur, cur | EVICTING, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Release a claim, the page staying as it is.
    pub(super) fn release(&self, p: usize) {
        let prev = self.words[p].fetch_and(!(EVICTING | WAITING), Ordering::AcqRel);
        self.wake(prev);
    }

    /// Whether `p` must be written back: dirty and not poisoned.
    pub(super) fn dirty(&self, p: usize) -> bool {
        self.word(p) & (DIRTY | POISONED) == DIRTY
    }

    pub(super) fn poisoned(&self, p: usize) -> bool {
        self.word(p) & POISONED != 0
    }

    pub(super) fn set_dirty(&self, p: usize) {
        self.words[p].fetch_or(DIRTY, Ordering::AcqRel);
    }

    /// Written back: clean.
    pub(super) fn clean(&self, p: usize) {
        self.words[p].fetch_and(!DIRTY, Ordering::AcqRel);
    }

    /// Its read failed with `errno`.
    pub(super) fn poison(&self, p: usize, errno: i32) {
        let e = u32::try_from(errno)
            .ok()
            .filter(|&e| (1..=0xFF).contains(&e))
            .unwrap_or(libc::EIO as u32);
        self.words[p].fetch_or(POISONED | (e << ERRNO_SHIFT), Ordering::AcqRel);
    }

    /// What the word says of the page's bytes: DIRTY, POISONED and its
    /// errno.
    pub(super) fn flags(&self, p: usize) -> u32 {
        self.word(p) & BYTES
    }

    /// Set what the word says of the page's bytes to `flags` (from
    /// [`PageWords::flags`]), pins and claim as they are.
    pub(super) fn set_flags(&self, p: usize, flags: u32) {
        let _ = self.words[p].fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            Some(w & !BYTES | flags & BYTES)
        });
    }

    /// `p` is not mapped any more: no flag (and no claim) left, pins kept.
    pub(super) fn clear(&self, p: usize) {
        let prev = self.words[p].fetch_and(!FLAGS, Ordering::AcqRel);
        self.wake(prev);
    }
}

fn errno_in(w: u32) -> i32 {
    match (w >> ERRNO_SHIFT) as i32 {
        0 => libc::EIO,
        e => e,
    }
}

/// Runs of consecutive pages of the sorted `pages` for which `keep` holds:
/// `(first, count)`, each at most [`WRITEBACK_PAGES`] long.
pub(super) fn runs(pages: &[usize], keep: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &p in pages.iter().filter(|&&p| keep(p)) {
        match out.last_mut() {
            Some((first, count)) if *first + *count == p && *count < WRITEBACK_PAGES => *count += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

/// Evict `victims` (taken by [`Books::victims`], so claimed in `words`):
/// `write` each run of dirty neighbours back, then `discard` each run of
/// neighbours, forgetting each run in the books as soon as it is dropped.
/// The number of pages evicted.
///
/// On an error the books stay true: the pages dropped are forgotten (and,
/// when a `discard` fails, so is every page of its run that `present` says
/// is gone), the pages written are clean, and the others stay resident and
/// as dirty as they were, the oldest again; every claim is released.
pub(super) fn evict(
    books: &mut Books,
    words: &PageWords,
    victims: &[(u32, u32)],
    mut write: impl FnMut(usize, usize) -> io::Result<()>,
    mut discard: impl FnMut(usize, usize) -> io::Result<()>,
    present: impl Fn(usize) -> bool,
) -> io::Result<usize> {
    let mut pages: Vec<usize> = victims.iter().map(|&(q, _)| q as usize).collect();
    pages.sort_unstable();
    let give_back = |books: &mut Books| {
        books.requeue(victims);
        for &p in &pages {
            if books.is_resident(p) {
                words.release(p);
            }
        }
    };
    for (first, count) in runs(&pages, |p| words.dirty(p)) {
        if let Err(e) = write(first, count) {
            give_back(books);
            return Err(e);
        }
        (first..first + count).for_each(|p| words.clean(p));
    }
    let mut gone = 0;
    for (first, count) in runs(&pages, |_| true) {
        let done = discard(first, count);
        for p in first..first + count {
            if done.is_ok() || !present(p) {
                books.forget(p);
                words.clear(p);
                gone += 1;
            }
        }
        if let Err(e) = done {
            give_back(books);
            return Err(e);
        }
    }
    Ok(gone)
}

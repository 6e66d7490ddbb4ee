//! Aligned I/O buffers and the per-engine slot pool.
//!
//! Invariants:
//! - An [`AlignedBuf`] is one allocation (from the heap, or a private
//!   anonymous mapping of its own), zero-filled, aligned to its `align` (a
//!   power of two), never moved or resized while it lives. Its address can
//!   therefore be handed to the kernel (io_uring registration, AIO iocbs) for
//!   as long as the owner keeps it.
//! - A [`SlotPool`] splits one buffer into `slots` equal parts of
//!   `slot_size` bytes (each part starts on the pool's alignment, because
//!   `slot_size` is rounded up to it) and remembers which slots are in flight.
//!   It hands out `&mut` access only to idle slots.
//! - The memory of a pool placed by [`SlotPool::new_placed`] is what its
//!   [`BufferBacking`] says: ordinary base pages the kernel may not merge
//!   into huge pages (`MADV_NOHUGEPAGE`; what a program's `malloc`ed buffer
//!   and fio's default buffers are), or transparent huge pages
//!   ([`AlignedBuf::new_huge`]), where a request covers a few physically
//!   contiguous pieces instead of one scattered 4 KiB page per segment.
//!   [`huge_page_bytes`] says which the kernel really gave.
//! - [`SlotPool::new`] (the copy engines' buffers) keeps the older rule:
//!   huge pages when a slot spans more than one page.
//! - A pool with a NUMA memory policy ([`SlotPool::new_placed`]) is always a
//!   mapping of its own whose policy is set before any page is touched, so
//!   every page is allocated under it; [`SlotPool::buffer_nodes`] says where
//!   the pages really are.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::numa::{self, MemPolicy};

/// What the memory of an engine's I/O buffers is made of. It moves a
/// figure: on a virtio disk a 64 KiB O_DIRECT read from huge-page buffers
/// is one DMA segment instead of sixteen, and ran 1.5x as many IOPS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum BufferBacking {
    /// Ordinary base pages, advised `MADV_NOHUGEPAGE` so that the kernel
    /// does not back them with transparent huge pages even where THP is
    /// `always`: what a program's `malloc`ed buffer is, and fio's
    /// (`iomem=malloc`).
    #[default]
    Pages,
    /// Transparent huge pages (`MADV_HUGEPAGE`), 2 MiB pieces physically
    /// contiguous where the kernel has them (fio: `iomem=mmaphuge`, which
    /// takes hugetlbfs pages).
    Huge,
}

impl BufferBacking {
    pub const ALL: [BufferBacking; 2] = [BufferBacking::Pages, BufferBacking::Huge];

    pub fn name(self) -> &'static str {
        match self {
            BufferBacking::Pages => "pages",
            BufferBacking::Huge => "huge",
        }
    }

    pub fn from_name(s: &str) -> Option<BufferBacking> {
        Self::ALL.into_iter().find(|b| b.name() == s)
    }
}

impl std::fmt::Display for BufferBacking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A zero-filled buffer with a fixed alignment.
#[derive(Debug)]
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    align: usize,
    backing: Backing,
}

/// Where an [`AlignedBuf`]'s memory comes from.
#[derive(Debug)]
enum Backing {
    /// The global allocator, with this layout.
    Heap(Layout),
    /// A private anonymous mapping of its own, of this many bytes (whole
    /// huge pages), advised `MADV_HUGEPAGE`.
    Map(usize),
}

/// The base page size iopath assumes (x86-64, most arm64 kernels).
const PAGE: usize = 4096;

/// Size of a transparent huge page on x86-64 (and arm64 with 4 KiB pages);
/// where huge pages are bigger, buffers are still 2 MiB aligned, just not
/// always contiguous across 2 MiB.
pub const HUGE_PAGE: usize = 2 << 20;

// SAFETY: AlignedBuf owns its allocation exclusively (like Box<[u8]>); the raw
// pointer is never shared except through &self/&mut self borrows.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out &[u8], which is Sync.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocate `len` zeroed bytes from the heap, aligned to `align` (rounded
    /// up to a power of two, at least 1). `len == 0` allocates one alignment
    /// unit so the pointer is always valid.
    /// Aborts when the memory cannot be had: for small buffers of a fixed
    /// size; what a flag sizes goes through [`AlignedBuf::try_new`].
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        Self::try_new(len, align).unwrap_or_else(|_| {
            let align = align.max(1).next_power_of_two();
            alloc::handle_alloc_error(
                Layout::from_size_align(len.max(1).next_multiple_of(align), align)
                    .unwrap_or(Layout::new::<u8>()),
            )
        })
    }

    /// Like [`AlignedBuf::new`], but an allocation that cannot be made
    /// (too large for the address space, or refused by the kernel's
    /// overcommit policy) is an error (`ENOMEM`) instead of an abort.
    pub fn try_new(len: usize, align: usize) -> std::io::Result<AlignedBuf> {
        let enomem = || std::io::Error::from_raw_os_error(libc::ENOMEM);
        let align = align.max(1).next_power_of_two();
        let size = len
            .max(1)
            .checked_next_multiple_of(align)
            .ok_or_else(enomem)?;
        let layout = Layout::from_size_align(size, align).map_err(|_| enomem())?;
        // SAFETY: layout has non-zero size (size >= align >= 1).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(enomem)?;
        Ok(AlignedBuf {
            ptr,
            len,
            align,
            backing: Backing::Heap(layout),
        })
    }

    /// Like [`AlignedBuf::new`], but in a mapping of its own, aligned to and
    /// rounded up to [`HUGE_PAGE`]s and advised `MADV_HUGEPAGE`, so that
    /// where the kernel has transparent huge pages (`enabled` set to
    /// `always` or `madvise`, the usual default) the memory is physically
    /// contiguous in 2 MiB pieces.
    ///
    /// Why it matters: an O_DIRECT request needs one DMA segment per
    /// physically contiguous piece of its buffer. Heap memory is often pages
    /// freed earlier in any physical order, so a 1 MiB request becomes 256
    /// segments, more than many devices take at once (virtio-blk: 254), and
    /// is split; on a virtio disk every segment is one descriptor the host
    /// must walk, which made such requests markedly slower at the device.
    /// With huge pages a 1 MiB request is one segment, and registered
    /// io_uring buffers are one `bio_vec` per huge page.
    ///
    /// Falls back to the heap if the mapping fails; without transparent huge
    /// pages the mapping still holds fresh pages, no worse than the heap's.
    /// Costs up to one huge page of memory beyond `len`.
    pub fn new_huge(len: usize, align: usize) -> AlignedBuf {
        let align = align.max(1).next_power_of_two();
        let size = len.max(1).div_ceil(align) * align;
        Self::map(len, size, align, true).unwrap_or_else(|| Self::new(len, align))
    }

    /// Like [`AlignedBuf::new_huge`], but memory that cannot be had is an
    /// error (`ENOMEM`, as [`AlignedBuf::try_new`]) instead of an abort.
    pub fn try_new_huge(len: usize, align: usize) -> std::io::Result<AlignedBuf> {
        let align = align.max(1).next_power_of_two();
        let Some(size) = len.max(1).checked_next_multiple_of(align) else {
            return Err(std::io::Error::from_raw_os_error(libc::ENOMEM));
        };
        match Self::map(len, size, align, true) {
            Some(buf) => Ok(buf),
            None => Self::try_new(len, align),
        }
    }

    /// `len` zeroed bytes aligned to `align` in a fresh anonymous mapping
    /// of their own, given the NUMA memory policy `policy` ([`numa::place`])
    /// before any page is touched, then touched page by page, so that every
    /// page is allocated under the policy. `huge` asks for transparent huge
    /// pages as [`AlignedBuf::new_huge`] does; without it the mapping is
    /// advised `MADV_NOHUGEPAGE` ([`BufferBacking::Pages`]).
    ///
    /// Never falls back to the heap, whose pages may already live on
    /// another node. Errors are [`numa::place`]'s (which policy, which node,
    /// which nodes there are), or the mapping's.
    pub fn new_placed(
        len: usize,
        align: usize,
        huge: bool,
        policy: &MemPolicy,
    ) -> std::io::Result<AlignedBuf> {
        let align = align.max(1).next_power_of_two();
        let size = len.max(1).div_ceil(align) * align;
        let mut buf =
            Self::map(len, size, align, huge).ok_or_else(std::io::Error::last_os_error)?;
        let Backing::Map(map_len) = buf.backing else {
            unreachable!("map() always makes a mapping")
        };
        numa::place(buf.as_ptr(), map_len, policy)?;
        buf.touch();
        Ok(buf)
    }

    /// Fault in every page of the buffer for writing (one byte per page,
    /// read and written back unchanged), so that its memory is allocated
    /// now, under whatever memory policy applies, rather than at first use.
    pub fn touch(&mut self) {
        let page = rustix::param::page_size();
        let base = self.ptr.as_ptr();
        let start = base as usize;
        let end = start + self.len;
        let mut at = start;
        while at < end {
            // SAFETY: start <= at < start + len, so the byte is inside the
            // allocation; &mut self makes this the only access, and the
            // byte is written back with its own value.
            unsafe {
                let p = base.add(at - start);
                p.write_volatile(p.read_volatile());
            }
            at = (at / page + 1) * page;
        }
    }

    /// A fresh anonymous mapping of `size` bytes aligned to `align`: rounded
    /// up to, aligned to and advised as transparent huge pages when `huge`,
    /// else to base pages and advised never to be huge pages; `None` if
    /// mapping fails.
    fn map(len: usize, size: usize, align: usize, huge: bool) -> Option<AlignedBuf> {
        let granule = if huge {
            HUGE_PAGE
        } else {
            rustix::param::page_size()
        };
        let unit = align.max(granule);
        let map_len = size.checked_next_multiple_of(granule)?;
        // Over-map by one alignment unit, then trim both ends so that what
        // remains starts on `unit`.
        let over = map_len.checked_add(unit)?;
        // SAFETY: a new private anonymous mapping at an address the kernel
        // chooses; it aliases no Rust object.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                over,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let base = raw as usize;
        let start = base.next_multiple_of(unit);
        let head = start - base;
        let tail = over - head - map_len;
        // Not null: it is at or above a successful mapping's address.
        let ptr = NonNull::new(start as *mut u8)?;
        // SAFETY: both ranges lie inside the mapping made above, are page
        // aligned (base, start and map_len are multiples of the page size),
        // and nothing refers to them.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((start + map_len) as *mut libc::c_void, tail);
            }
            // Advice only: without THP (or with it disabled) this fails or
            // does nothing, and the buffer keeps ordinary pages. Base pages
            // are advised MADV_NOHUGEPAGE so that THP `always` does not
            // turn them into huge pages behind the caller's back.
            let advice = if huge {
                libc::MADV_HUGEPAGE
            } else {
                libc::MADV_NOHUGEPAGE
            };
            libc::madvise(start as *mut libc::c_void, map_len, advice);
        }
        Some(AlignedBuf {
            ptr,
            len,
            align,
            backing: Backing::Map(map_len),
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn align(&self) -> usize {
        self.align
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr points to an initialised allocation (zeroed by
        // alloc_zeroed, or a fresh anonymous mapping, which reads as zeros) of
        // at least len bytes that lives as long as self; &self forbids concurrent &mut.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in as_slice, and &mut self makes this the only borrow.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match self.backing {
            // SAFETY: ptr was allocated by alloc_zeroed with exactly this layout.
            Backing::Heap(layout) => unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) },
            // SAFETY: ptr and map_len are exactly what `map` kept mapped, and
            // the buffer is the mapping's only user.
            Backing::Map(map_len) => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), map_len);
            },
        }
    }
}

/// Bytes of the memory at `[ptr, ptr + len)` that the kernel backs with
/// transparent huge pages now: the `AnonHugePages` of every mapping of
/// `/proc/self/smaps` that overlaps the range (a mapping partly inside
/// counts whole). 0 where the kernel gave base pages only.
pub fn huge_page_bytes(ptr: *const u8, len: usize) -> std::io::Result<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps")?;
    Ok(anon_huge_bytes(&smaps, ptr as usize, ptr as usize + len))
}

/// [`huge_page_bytes`] of an `smaps` text: the `AnonHugePages` of the
/// mappings that overlap `[start, end)`.
fn anon_huge_bytes(smaps: &str, start: usize, end: usize) -> u64 {
    let mut inside = false;
    let mut bytes = 0;
    for line in smaps.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = head.split_once('-').and_then(|(lo, hi)| {
            let lo = usize::from_str_radix(lo, 16).ok()?;
            let hi = usize::from_str_radix(hi, 16).ok()?;
            Some((lo, hi))
        }) {
            inside = lo < end && start < hi;
        } else if let Some(kb) = line.strip_prefix("AnonHugePages:") {
            if inside {
                let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                bytes += kb * 1024;
            }
        }
    }
    bytes
}

/// `slots` buffers of `slot_size` bytes in one aligned allocation, with
/// in-flight tracking.
#[derive(Debug)]
pub struct SlotPool {
    buf: AlignedBuf,
    slot_size: usize,
    stride: usize,
    busy: Vec<bool>,
    busy_count: usize,
}

impl SlotPool {
    pub fn new(slots: usize, slot_size: usize, align: usize) -> SlotPool {
        let align = align.max(1).next_power_of_two();
        let stride = slot_size.max(1).div_ceil(align) * align;
        let slots = slots.max(1);
        let buf = if slot_size > PAGE {
            AlignedBuf::new_huge(stride * slots, align)
        } else {
            AlignedBuf::new(stride * slots, align)
        };
        SlotPool {
            buf,
            slot_size,
            stride,
            busy: vec![false; slots],
            busy_count: 0,
        }
    }

    /// Like [`SlotPool::new`], with every page touched before it returns
    /// (so its memory exists, and first-touch faults are not timed later),
    /// in a fresh mapping of its own of the `backing` asked for and, when
    /// `policy` is given, placed by it: its policy is set before the first
    /// touch ([`AlignedBuf::new_placed`]). Where the pages ended up:
    /// [`SlotPool::buffer_nodes`]; how many are huge:
    /// [`SlotPool::huge_page_bytes`].
    pub fn new_placed(
        slots: usize,
        slot_size: usize,
        align: usize,
        policy: Option<&MemPolicy>,
        backing: BufferBacking,
    ) -> std::io::Result<SlotPool> {
        let align = align.max(1).next_power_of_two();
        let stride = slot_size.max(1).div_ceil(align) * align;
        let slots = slots.max(1);
        let len = stride
            .checked_mul(slots)
            .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENOMEM))?;
        let huge = backing == BufferBacking::Huge;
        let enomem = || std::io::Error::from_raw_os_error(libc::ENOMEM);
        // Fallible: threads x depth x block size comes from flags.
        let buf = match policy {
            None => {
                let size = len.checked_next_multiple_of(align).ok_or_else(enomem)?;
                let mut buf = AlignedBuf::map(len, size, align, huge).ok_or_else(enomem)?;
                buf.touch();
                buf
            }
            Some(policy) => AlignedBuf::new_placed(len, align, huge, policy)?,
        };
        Ok(SlotPool {
            buf,
            slot_size,
            stride,
            busy: vec![false; slots],
            busy_count: 0,
        })
    }

    /// Pages of the pool's memory on each NUMA node, `(node, pages)`
    /// ascending by node ([`numa::pages_per_node`]); pages never touched are
    /// not counted.
    pub fn buffer_nodes(&self) -> std::io::Result<Vec<(u32, u64)>> {
        numa::pages_per_node(self.buf.as_ptr(), self.bytes())
    }

    /// Bytes of the pool's memory the kernel backs with transparent huge
    /// pages now ([`huge_page_bytes`]).
    pub fn huge_page_bytes(&self) -> std::io::Result<u64> {
        huge_page_bytes(self.buf.as_ptr(), self.bytes())
    }

    /// Base pages the pool's slots span ([`SlotPool::bytes`], widened to
    /// whole pages): what [`SlotPool::buffer_nodes`] adds up to once every
    /// page is touched.
    pub fn pages(&self) -> u64 {
        let page = rustix::param::page_size();
        let start = self.buf.as_ptr() as usize;
        let end = (start + self.bytes()).next_multiple_of(page);
        ((end - start / page * page) / page) as u64
    }

    pub fn slots(&self) -> usize {
        self.busy.len()
    }

    pub fn slot_size(&self) -> usize {
        self.slot_size
    }

    pub fn align(&self) -> usize {
        self.buf.align()
    }

    pub fn in_flight(&self) -> usize {
        self.busy_count
    }

    pub fn is_busy(&self, slot: u32) -> bool {
        self.busy.get(slot as usize).copied().unwrap_or(false)
    }

    /// Mutable access to an idle slot.
    pub fn get_mut(&mut self, slot: u32) -> Option<&mut [u8]> {
        let i = slot as usize;
        if i >= self.busy.len() || self.busy[i] {
            return None;
        }
        // SAFETY: slot i is idle, so the kernel holds no pointer into it;
        // i < slots keeps [i * stride, i * stride + slot_size) inside the
        // allocation (slot_size <= stride), and the range is initialised.
        // Only this slot's bytes are borrowed: other slots may be in
        // flight, and no reference may cover memory the kernel writes.
        // &mut self makes the borrow unique for its lifetime.
        Some(unsafe {
            std::slice::from_raw_parts_mut(
                self.buf.as_mut_ptr().add(i * self.stride),
                self.slot_size,
            )
        })
    }

    /// Shared access to an idle slot.
    pub fn get(&self, slot: u32) -> Option<&[u8]> {
        let i = slot as usize;
        if i >= self.busy.len() || self.busy[i] {
            return None;
        }
        // SAFETY: as in get_mut; a shared borrow of the idle slot only.
        Some(unsafe {
            std::slice::from_raw_parts(self.buf.as_ptr().add(i * self.stride), self.slot_size)
        })
    }

    /// Check that `slot` may carry a request of `len` bytes and mark it in
    /// flight. Returns the slot's address for the kernel.
    pub fn acquire(&mut self, slot: u32, len: u32) -> Result<*mut u8, crate::EngineError> {
        let i = slot as usize;
        if i >= self.busy.len() {
            return Err(crate::EngineError::Invalid(format!(
                "slot {slot} does not exist (queue depth {})",
                self.busy.len()
            )));
        }
        if self.busy[i] {
            return Err(crate::EngineError::Invalid(format!(
                "slot {slot} is already in flight"
            )));
        }
        if len as usize > self.slot_size || len == 0 {
            return Err(crate::EngineError::Invalid(format!(
                "request of {len} bytes does not fit a {}-byte buffer slot",
                self.slot_size
            )));
        }
        self.busy[i] = true;
        self.busy_count += 1;
        // SAFETY: i < slots, so i * stride is within the allocation of
        // stride * slots bytes.
        Ok(unsafe { self.buf.as_mut_ptr().add(i * self.stride) })
    }

    /// Mark `slot` idle again (its request completed).
    pub fn release(&mut self, slot: u32) {
        let i = slot as usize;
        if i < self.busy.len() && self.busy[i] {
            self.busy[i] = false;
            self.busy_count -= 1;
        }
    }

    /// Address and length of every slot, for buffer registration.
    pub fn iovecs(&mut self) -> Vec<libc::iovec> {
        let base = self.buf.as_mut_ptr();
        (0..self.busy.len())
            .map(|i| libc::iovec {
                // SAFETY: i < slots keeps the offset inside the allocation.
                iov_base: unsafe { base.add(i * self.stride) }.cast(),
                iov_len: self.slot_size,
            })
            .collect()
    }

    /// Bytes held by the pool (all slots, with alignment padding).
    pub fn bytes(&self) -> usize {
        self.stride * self.busy.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 26, item 3): `--ucache-size 1T` aborted the run
    /// ("memory allocation of ... bytes failed") where the memory could
    /// not be had. What a flag sizes is allocated fallibly.
    #[test]
    #[cfg_attr(miri, ignore = "asks the allocator for more than exists")]
    fn an_allocation_beyond_memory_is_an_error_not_an_abort() {
        for len in [usize::MAX - 4096, isize::MAX as usize, 1 << 62] {
            let heap = AlignedBuf::try_new(len, 4096).map(|_| ());
            let huge = AlignedBuf::try_new_huge(len, 4096).map(|_| ());
            for r in [heap, huge] {
                assert_eq!(r.unwrap_err().raw_os_error(), Some(libc::ENOMEM), "{len}");
            }
        }
        let pool = SlotPool::new_placed(1 << 40, 1 << 30, 4096, None, BufferBacking::Huge);
        assert_eq!(pool.unwrap_err().raw_os_error(), Some(libc::ENOMEM));
        assert_eq!(AlignedBuf::try_new(8192, 4096).unwrap().len(), 8192);
    }

    #[test]
    fn aligned_buf_is_aligned_and_zeroed() {
        for align in [1usize, 512, 4096, 65536] {
            let b = AlignedBuf::new(10_000, align);
            assert_eq!(b.as_ptr() as usize % align, 0, "align {align}");
            assert_eq!(b.len(), 10_000);
            assert!(b.as_slice().iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn non_power_of_two_alignment_rounds_up() {
        let b = AlignedBuf::new(100, 3000);
        assert_eq!(b.align(), 4096);
        assert_eq!(b.as_ptr() as usize % 4096, 0);
    }

    #[test]
    fn slots_are_aligned_disjoint_and_tracked() {
        let mut p = SlotPool::new(4, 1000, 512);
        assert_eq!(p.slots(), 4);
        for s in 0..4u32 {
            p.get_mut(s).unwrap().fill(s as u8 + 1);
        }
        for s in 0..4u32 {
            assert!(p.get(s).unwrap().iter().all(|&x| x == s as u8 + 1));
        }
        let a = p.acquire(2, 1000).unwrap();
        assert_eq!(a as usize % 512, 0);
        assert!(p.is_busy(2));
        assert!(p.get_mut(2).is_none(), "in-flight slot must not be lent");
        assert!(p.acquire(2, 10).is_err(), "double submit must fail");
        assert_eq!(p.in_flight(), 1);
        p.release(2);
        assert_eq!(p.in_flight(), 0);
        assert!(p.get_mut(2).is_some());
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "anonymous mappings trimmed with munmap and madvise: no Miri shim"
    )]
    fn huge_buf_is_aligned_zeroed_and_writable() {
        for (len, align) in [(1usize, 1usize), (3 << 20 | 5, 4096), (100_000, 4 << 20)] {
            let mut b = AlignedBuf::new_huge(len, align);
            assert_eq!(
                b.as_ptr() as usize % align.max(HUGE_PAGE),
                0,
                "{len} {align}"
            );
            assert_eq!(b.len(), len);
            assert!(b.align() >= align);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice().fill(0xa5);
            assert!(b.as_slice().iter().all(|&x| x == 0xa5));
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "anonymous mappings trimmed with munmap and madvise: no Miri shim"
    )]
    fn multi_page_slots_get_huge_page_backing() {
        let mut big = SlotPool::new(8, 1 << 20, 4096);
        assert_eq!(big.iovecs()[0].iov_base as usize % HUGE_PAGE, 0);
        assert_eq!(big.bytes(), 8 << 20);
        let small = SlotPool::new(32, 4096, 4096);
        assert!(matches!(small.buf.backing, Backing::Heap(_)));
    }

    /// Issue 28 item 4: iopath's buffers were always transparent huge
    /// pages when a slot spans more than a page, where a program's (and
    /// fio's) are base pages; a 64 KiB O_DIRECT read then ran 1.5x faster
    /// for the buffers alone. `Pages` must never be huge, even where THP is
    /// `always`; `Huge` is, where the kernel has THP (read from smaps).
    #[test]
    #[cfg_attr(miri, ignore = "reads /proc/self/smaps")]
    fn buffer_backing_is_what_smaps_says() {
        let slot = 64 << 10;
        let pages = SlotPool::new_placed(64, slot, 4096, None, BufferBacking::Pages).unwrap();
        assert_eq!(pages.bytes(), 4 << 20);
        assert_eq!(pages.huge_page_bytes().unwrap(), 0, "base pages asked for");
        let huge = SlotPool::new_placed(64, slot, 4096, None, BufferBacking::Huge).unwrap();
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        let got = huge.huge_page_bytes().unwrap();
        eprintln!("THP {}: {got} of {} bytes huge", thp.trim(), huge.bytes());
        if thp.contains("[always]") || thp.contains("[madvise]") {
            // The kernel may lack a free huge page at the moment, but
            // never for all of a 4 MiB pool on an idle test machine.
            assert!(got >= HUGE_PAGE as u64, "{got}");
        }
    }

    #[test]
    fn smaps_huge_bytes_count_only_overlapping_mappings() {
        let smaps = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      2048 kB
7f0000400000-7f0000800000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      4096 kB
";
        let lo = 0x7f00_0000_0000;
        assert_eq!(anon_huge_bytes(smaps, lo, lo + 4096), 2 << 20);
        assert_eq!(anon_huge_bytes(smaps, lo, lo + (6 << 20)), 6 << 20);
        assert_eq!(anon_huge_bytes(smaps, lo + (8 << 20), lo + (9 << 20)), 0);
        assert_eq!(BufferBacking::from_name("huge"), Some(BufferBacking::Huge));
        assert_eq!(BufferBacking::default().name(), "pages");
    }

    /// The slot books under a long mixed sequence of acquire, release
    /// and lending, checked against a plain model; every in-flight slot is
    /// written through the address `acquire` gave (as the kernel would)
    /// while other slots are lent, so that Miri checks that address stays
    /// valid and never overlaps a borrow it hands out.
    #[test]
    fn slot_books_follow_a_model_and_kernel_addresses_stay_valid() {
        const SLOTS: u32 = 6;
        const SIZE: usize = 96;
        let mut p = SlotPool::new(SLOTS as usize, SIZE, 64);
        let mut model: Vec<Option<*mut u8>> = vec![None; SLOTS as usize];
        let mut fill = [0u8; SLOTS as usize];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..400u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let slot = (x % u64::from(SLOTS)) as u32;
            let i = slot as usize;
            let byte = (step % 251) as u8 + 1;
            match (x >> 8) % 4 {
                0 => match p.acquire(slot, ((x >> 16) % SIZE as u64) as u32 + 1) {
                    Ok(addr) => {
                        assert!(model[i].is_none(), "slot {slot} lent twice");
                        assert_eq!(addr as usize % 64, 0);
                        model[i] = Some(addr);
                    }
                    Err(_) => assert!(model[i].is_some(), "idle slot {slot} refused"),
                },
                1 => {
                    p.release(slot);
                    model[i] = None;
                }
                2 => match p.get_mut(slot) {
                    Some(buf) => {
                        assert!(model[i].is_none());
                        assert!(buf.iter().all(|&b| b == fill[i]), "slot {slot} changed");
                        buf.fill(byte);
                        fill[i] = byte;
                    }
                    None => assert!(model[i].is_some()),
                },
                _ => {
                    // The "kernel" completes into every in-flight slot.
                    for (j, addr) in model.iter().enumerate() {
                        if let Some(addr) = addr {
                            // SAFETY: `addr` is what acquire returned for
                            // slot j, which is still in flight: SIZE bytes
                            // that no borrow handed out covers.
                            unsafe { std::ptr::write_bytes(*addr, byte, SIZE) };
                            fill[j] = byte;
                        }
                    }
                }
            }
            assert_eq!(p.in_flight(), model.iter().flatten().count());
            for s in 0..SLOTS {
                assert_eq!(p.is_busy(s), model[s as usize].is_some());
            }
        }
        for s in 0..SLOTS {
            p.release(s);
            assert!(p.get(s).unwrap().iter().all(|&b| b == fill[s as usize]));
        }
        assert_eq!(p.in_flight(), 0);
    }

    #[test]
    fn acquire_rejects_bad_requests() {
        let mut p = SlotPool::new(2, 4096, 4096);
        assert!(p.acquire(5, 4096).is_err());
        assert!(p.acquire(0, 8192).is_err());
        assert!(p.acquire(0, 0).is_err());
        let iov = p.iovecs();
        assert_eq!(iov.len(), 2);
        assert_eq!(iov[1].iov_base as usize - iov[0].iov_base as usize, 4096);
    }
}

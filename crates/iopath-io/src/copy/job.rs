//! One copy in progress ([`Job`]): the dispatch to the copy method, the
//! chunk loop and its reports, the destination's flushes, and the
//! synchronous methods (`read-write`, `read-write-direct`,
//! `copy-file-range`, `sendfile`, `mmap-write`). The `uring` method is in
//! the sibling `uring` module.

use std::fs::File;
use std::os::fd::AsFd;
use std::time::Instant;

use super::files::{
    close, fs_name, ns_since, pread_full, pwrite_full, refuses_direct, set_direct, shares_extents,
    short_source,
};
use super::{CopyMethod, CopyOut, CopySpec, STOPPED};
use crate::buf::AlignedBuf;
use crate::{EngineError, SyncPolicy};

/// One copy in progress: the source is open, the destination created.
pub(super) struct Job<'a> {
    pub(super) method: CopyMethod,
    pub(super) spec: &'a CopySpec,
    pub(super) src: &'a File,
    pub(super) on_chunk: &'a mut dyn FnMut(u64, u64) -> bool,
    pub(super) notes: Vec<String>,
    pub(super) chunks: u64,
}

impl Job<'_> {
    pub(super) fn run(mut self, dst: File) -> Result<CopyOut, EngineError> {
        match self.method {
            CopyMethod::ReadWrite => self.read_write(&dst)?,
            CopyMethod::ReadWriteDirect => self.read_write_direct(&dst)?,
            CopyMethod::CopyFileRange => self.copy_file_range(&dst)?,
            CopyMethod::Sendfile => self.sendfile(&dst)?,
            CopyMethod::MmapWrite => self.mmap_write(&dst)?,
            CopyMethod::Uring => self.uring(&dst)?,
        }
        if self.spec.sync == SyncPolicy::End {
            crate::engines::fsync(&dst, &self.spec.dst)?;
        }
        close(dst, &self.spec.dst)?;
        Ok(CopyOut {
            bytes: self.spec.len,
            chunks: self.chunks,
            notes: self.notes,
        })
    }

    /// `fsync` the destination when the policy is `Each`.
    #[inline]
    fn sync_each(&self, dst: &File) -> Result<(), EngineError> {
        if self.spec.sync == SyncPolicy::Each {
            crate::engines::fsync(dst, &self.spec.dst)?;
        }
        Ok(())
    }

    /// Report a chunk; `on_chunk` answering `false` stops the copy (Ctrl-C):
    /// an [`EngineError::Invalid`] ends it, and the destination is removed.
    #[inline]
    pub(super) fn chunk_done(&mut self, bytes: u64, t0: Instant) -> Result<(), EngineError> {
        let go_on = (self.on_chunk)(bytes, ns_since(t0));
        self.chunks += 1;
        if go_on {
            Ok(())
        } else {
            Err(EngineError::Invalid(STOPPED.into()))
        }
    }

    /// Length of chunk buffers: a chunk, or less when the copy is shorter,
    /// rounded up to `align`.
    pub(super) fn buf_len(&self, align: usize) -> usize {
        let len = usize::try_from(self.spec.len).unwrap_or(usize::MAX);
        self.spec
            .chunk
            .min(len.max(1).next_multiple_of(align.max(1)))
    }

    /// `pread`/`pwrite` chunks of `[from, to)` with `buf`.
    fn rw_loop(
        &mut self,
        dst: &File,
        buf: &mut [u8],
        from: u64,
        to: u64,
    ) -> Result<(), EngineError> {
        let (s, d) = (self.src.as_fd(), dst.as_fd());
        let mut off = from;
        while off < to {
            let n = (to - off).min(buf.len() as u64) as usize;
            let t0 = Instant::now();
            pread_full(s, &mut buf[..n], off, &self.spec.src, self.spec.len)?;
            pwrite_full(d, &buf[..n], off, &self.spec.dst)?;
            self.sync_each(dst)?;
            self.chunk_done(n as u64, t0)?;
            off += n as u64;
        }
        Ok(())
    }

    fn read_write(&mut self, dst: &File) -> Result<(), EngineError> {
        let mut buf = new_buf(self.buf_len(1), 4096);
        self.rw_loop(dst, buf.as_mut_slice(), 0, self.spec.len)
    }

    /// Turn on O_DIRECT for the destination and work out the alignment both
    /// files need: (offset/length alignment, buffer alignment).
    pub(super) fn direct_layout(&mut self, dst: &File) -> Result<(usize, usize), EngineError> {
        match set_direct(dst.as_fd(), true) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(self.method.unsupported(refuses_direct(&self.spec.dst)));
            }
            Err(e) => {
                return Err(EngineError::os(
                    "fcntl(F_SETFL, O_DIRECT)",
                    &self.spec.dst,
                    e,
                ))
            }
        }
        let a = crate::sys::dio_alignment(&self.spec.src);
        let b = crate::sys::dio_alignment(&self.spec.dst);
        let align = a.offset.max(b.offset).max(1);
        let mem = crate::engines::buffer_align(a.mem.max(b.mem));
        if self.spec.chunk % align != 0 {
            return Err(EngineError::Invalid(format!(
                "copy chunk of {} bytes is not a multiple of {align} bytes, the O_DIRECT alignment of {} and {} ({}, {}); use a multiple of {align}",
                self.spec.chunk,
                self.spec.src.display(),
                self.spec.dst.display(),
                a.source,
                b.source
            )));
        }
        Ok((align, mem))
    }

    /// Copy `[from, len)`, shorter than the O_DIRECT alignment, through the
    /// page cache: clear O_DIRECT on both files, then `pread`/`pwrite`.
    pub(super) fn buffered_tail(
        &mut self,
        dst: &File,
        buf: &mut [u8],
        from: u64,
        align: usize,
    ) -> Result<(), EngineError> {
        let len = self.spec.len;
        if from >= len {
            return Ok(());
        }
        set_direct(self.src.as_fd(), false)
            .map_err(|e| EngineError::os("fcntl(F_SETFL, ~O_DIRECT)", &self.spec.src, e))?;
        set_direct(dst.as_fd(), false)
            .map_err(|e| EngineError::os("fcntl(F_SETFL, ~O_DIRECT)", &self.spec.dst, e))?;
        self.notes.push(format!(
            "the last {} bytes ({len} is not a multiple of the {align}-byte O_DIRECT alignment) were copied through the page cache (O_DIRECT cleared with fcntl)",
            len - from
        ));
        self.rw_loop(dst, buf, from, len)
    }

    fn read_write_direct(&mut self, dst: &File) -> Result<(), EngineError> {
        let (align, mem) = self.direct_layout(dst)?;
        let mut buf = new_buf(self.buf_len(align), mem);
        let prefix = self.spec.len / align as u64 * align as u64;
        self.rw_loop(dst, buf.as_mut_slice(), 0, prefix)?;
        self.buffered_tail(dst, buf.as_mut_slice(), prefix, align)
    }

    fn copy_file_range(&mut self, dst: &File) -> Result<(), EngineError> {
        if let Some(why) = shares_extents(&self.spec.dst) {
            self.notes.push(why);
        }
        let (s, d) = (self.src.as_fd(), dst.as_fd());
        let len = self.spec.len;
        let mut pos = 0u64;
        while pos < len {
            let n = (len - pos).min(self.spec.chunk as u64);
            let end = pos + n;
            let t0 = Instant::now();
            while pos < end {
                let (mut a, mut b) = (pos, pos);
                let want = (end - pos) as usize;
                match rustix::fs::copy_file_range(s, Some(&mut a), d, Some(&mut b), want) {
                    Ok(0) => return Err(short_source(&self.spec.src, pos, len)),
                    Ok(k) => pos += k as u64,
                    Err(rustix::io::Errno::INTR) => {}
                    Err(
                        e @ (rustix::io::Errno::XDEV
                        | rustix::io::Errno::NOSYS
                        | rustix::io::Errno::OPNOTSUPP),
                    ) => {
                        return Err(self.method.unsupported(format!(
                            "copy_file_range from {} to {} fails with {e} on this kernel ({} to {}); use read-write or sendfile",
                            self.spec.src.display(),
                            self.spec.dst.display(),
                            fs_name(&self.spec.src),
                            fs_name(&self.spec.dst)
                        )));
                    }
                    Err(e) => {
                        return Err(EngineError::os("copy_file_range", &self.spec.dst, e.into()))
                    }
                }
            }
            self.sync_each(dst)?;
            self.chunk_done(n, t0)?;
        }
        Ok(())
    }

    fn sendfile(&mut self, dst: &File) -> Result<(), EngineError> {
        // sendfile writes at the destination's file position, which starts at
        // 0 (just created) and advances with every call; the source offset
        // is passed explicitly.
        let (s, d) = (self.src.as_fd(), dst.as_fd());
        let len = self.spec.len;
        let mut pos = 0u64;
        while pos < len {
            let n = (len - pos).min(self.spec.chunk as u64);
            let end = pos + n;
            let t0 = Instant::now();
            while pos < end {
                let mut a = pos;
                match rustix::fs::sendfile(d, s, Some(&mut a), (end - pos) as usize) {
                    Ok(0) => return Err(short_source(&self.spec.src, pos, len)),
                    Ok(k) => pos += k as u64,
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e @ rustix::io::Errno::NOSYS) => {
                        return Err(self.method.unsupported(format!(
                            "sendfile fails with {e} on this kernel; use read-write"
                        )));
                    }
                    Err(e) => return Err(EngineError::os("sendfile", &self.spec.dst, e.into())),
                }
            }
            self.sync_each(dst)?;
            self.chunk_done(n, t0)?;
        }
        Ok(())
    }

    fn mmap_write(&mut self, dst: &File) -> Result<(), EngineError> {
        let len = self.spec.len;
        if len == 0 {
            return Ok(()); // nothing to map (an empty mapping is EINVAL)
        }
        let map_len = usize::try_from(len).map_err(|_| {
            EngineError::Invalid(format!("{len} bytes cannot be mapped on this machine"))
        })?;
        // SAFETY: a read-only private view of a file we hold open, `len`
        // bytes long, and `copy` checked that the file holds at least `len`
        // bytes, so no page of the mapping lies past end of file. The
        // mapping lives in `map` until the end of this function and is only
        // read through `&map`. If another process truncates the source
        // during the copy, touching the lost pages raises SIGBUS (the
        // process dies; no memory is misused); a concurrent writer can only
        // change the bytes copied. A benchmark of files the user chose
        // accepts that, as the mmap engine does.
        let map = unsafe { memmap2::MmapOptions::new().len(map_len).map(self.src) }
            .map_err(|e| EngineError::os("mmap", &self.spec.src, e))?;
        // Advice only: read-ahead ahead of the faults, as a copy wants.
        let _ = map.advise(memmap2::Advice::Sequential);
        let d = dst.as_fd();
        let mut off = 0usize;
        while off < map_len {
            let n = (map_len - off).min(self.spec.chunk);
            let t0 = Instant::now();
            pwrite_full(d, &map[off..off + n], off as u64, &self.spec.dst)?;
            self.sync_each(dst)?;
            self.chunk_done(n as u64, t0)?;
            off += n;
        }
        drop(map);
        Ok(())
    }
}

/// A zeroed buffer for one chunk, on huge pages when it spans more than one
/// page (as [`SlotPool`] does).
///
/// [`SlotPool`]: crate::buf::SlotPool
fn new_buf(len: usize, align: usize) -> AlignedBuf {
    if len > 4096 {
        AlignedBuf::new_huge(len, align)
    } else {
        AlignedBuf::new(len, align)
    }
}

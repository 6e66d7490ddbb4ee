//! The CLOCK (second chance) replacement state of one shard: which page
//! each frame holds, with its referenced and dirty bits, the page -> frame
//! table, and the hand. Pure bookkeeping, no I/O; shards and frames are
//! assigned by [`shard_of`] and [`frames_in_shard`].

use std::collections::HashMap;

/// State of one frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct FrameState {
    /// The page it holds (`None`: free).
    pub(super) page: Option<u64>,
    /// Used since the CLOCK hand last passed.
    pub(super) referenced: bool,
    /// Changed since it was read or last written back.
    pub(super) dirty: bool,
}

/// The CLOCK replacement state of one shard: which page each frame holds,
/// and where the hand is. Pure bookkeeping, no I/O.
#[derive(Debug)]
pub(super) struct Clock {
    pub(super) frames: Vec<FrameState>,
    table: HashMap<u64, usize>,
    pub(super) hand: usize,
}

impl Clock {
    pub(super) fn new(frames: usize) -> Clock {
        Clock {
            frames: vec![FrameState::default(); frames.max(1)],
            table: HashMap::with_capacity(frames),
            hand: 0,
        }
    }

    /// The frame holding `page`, marked referenced.
    pub(super) fn lookup(&mut self, page: u64) -> Option<usize> {
        let f = *self.table.get(&page)?;
        self.frames[f].referenced = true;
        Some(f)
    }

    /// The frame to (re)use: from the hand on, the first free or
    /// unreferenced frame; referenced frames passed on the way lose their bit
    /// (their second chance). The hand moves past the frame returned. Does not
    /// change the frame: the caller writes it back if dirty, then
    /// [`Clock::install`]s.
    pub(super) fn victim(&mut self) -> usize {
        loop {
            let f = self.hand;
            self.hand = (self.hand + 1) % self.frames.len();
            let st = &mut self.frames[f];
            if st.page.is_none() || !st.referenced {
                return f;
            }
            st.referenced = false;
        }
    }

    /// Make `f` hold `page`, clean and referenced (dropping what it held).
    pub(super) fn install(&mut self, f: usize, page: u64) {
        self.drop_frame(f);
        self.frames[f] = FrameState {
            page: Some(page),
            referenced: true,
            dirty: false,
        };
        self.table.insert(page, f);
    }

    /// Make `f` free.
    pub(super) fn drop_frame(&mut self, f: usize) {
        if let Some(old) = self.frames[f].page.take() {
            self.table.remove(&old);
        }
        self.frames[f] = FrameState::default();
    }
}

/// The shard of `page`.
pub(super) fn shard_of(page: u64, shards: usize) -> usize {
    (page % shards as u64) as usize
}

/// Frames of shard `i` when `frames` are split over `shards`: as even as can
/// be, the first `frames % shards` shards one more.
pub(super) fn frames_in_shard(frames: usize, shards: usize, i: usize) -> usize {
    frames / shards + usize::from(i < frames % shards)
}

//! Engine conformance: every access method in [`Method::ALL`] runs through the
//! same checks (data round trip, short read at end of file, alignment rules,
//! the slot API contract, sync policies, dropping with requests in flight).
//! The `conformance!` macro makes one module per method, so a failing test is
//! named `<method>::<check>`.
//!
//! Each method is probed on a real file first; a method that cannot work here
//! is skipped with `skipped <method>: <reason>` on stderr, never failed.
//! `null` does no I/O, so for it only lengths and the API contract are checked.

use std::path::PathBuf;

use iopath_io::buf::AlignedBuf;
use iopath_io::data::Rng;
use iopath_io::engines::mmap::{parse_mapping_note, MappingInfo};
use iopath_io::{open, probe_method, Completion, Engine, EngineError, IoReq, Method, Op};
use iopath_io::{OpenSpec, SyncCall, SyncPolicy};
use tempfile::TempDir;

const BS: usize = 4096;
const QD: usize = 4;
const BLOCKS: usize = 10;
const FILE: usize = BLOCKS * BS;

/// A prefilled file in a fresh directory under the target dir (a real disk,
/// not a tmpfs /tmp).
struct Target {
    _dir: TempDir,
    path: PathBuf,
    data: Vec<u8>,
}

impl Target {
    fn new(len: usize) -> Target {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
        let path = dir.path().join("target.dat");
        let data = pattern(1, len);
        std::fs::write(&path, &data).expect("prefill");
        Target {
            _dir: dir,
            path,
            data,
        }
    }

    fn spec(&self, write: bool, queue_depth: usize, sync: SyncPolicy) -> OpenSpec {
        OpenSpec {
            path: self.path.clone(),
            write,
            block_size: BS,
            queue_depth,
            sync,
            span_bytes: self.data.len() as u64,
            sqpoll_cpu: None,
            mem_policy: None,
            buffers: Default::default(),
            noatime: false,
        }
    }

    fn open(&self, m: Method, write: bool, qd: usize, sync: SyncPolicy) -> Box<dyn Engine> {
        open(m, &self.spec(write, qd, sync)).unwrap_or_else(|e| panic!("open {m}: {e}"))
    }

    fn on_disk(&self) -> Vec<u8> {
        std::fs::read(&self.path).expect("read target with std::fs")
    }
}

/// A prefilled target of `len` bytes, or `None` (reason on stderr) when the
/// probe finds `method` unusable on it.
fn target(method: Method, len: usize) -> Option<Target> {
    let t = Target::new(len);
    match probe_method(method, &t.path, BS).unusable {
        Some(why) => {
            eprintln!("skipped {method}: {why}");
            None
        }
        None => Some(t),
    }
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0; len];
    Rng::new(seed).fill(&mut v);
    v
}

fn qd_for(m: Method) -> usize {
    if m.is_async() {
        QD
    } else {
        1
    }
}

/// Byte offset of block `b`.
fn blk(b: usize) -> u64 {
    (b * BS) as u64
}

fn req(op: Op, offset: u64, len: usize, slot: u32) -> IoReq {
    let len = len as u32;
    IoReq {
        op,
        offset,
        len,
        slot,
    }
}

fn read(offset: u64, len: usize, slot: u32) -> IoReq {
    req(Op::Read, offset, len, slot)
}

/// Compare bytes, naming the first difference instead of dumping buffers.
fn same(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!("{what}: first difference at byte {i}");
    }
}

/// Submit `reqs`, which the engine must refuse; returns the error and the
/// completions pushed before the refusal.
fn refused(eng: &mut dyn Engine, reqs: &[IoReq]) -> (EngineError, Vec<Completion>) {
    let mut done = Vec::new();
    match eng.submit(reqs, &mut done) {
        Err(e) => (e, done),
        Ok(n) => panic!("{reqs:?}: {n} accepted"),
    }
}

/// Submit `reqs` (again after a reap when fewer are accepted) and reap until
/// each has completed exactly once. Returns the completions and the most
/// requests seen in flight at once.
fn run(eng: &mut dyn Engine, reqs: &[IoReq]) -> (Vec<Completion>, usize) {
    let (mut done, mut sent, mut peak) = (Vec::new(), 0, 0);
    while sent < reqs.len() {
        let n = eng.submit(&reqs[sent..], &mut done).expect("submit");
        sent += n;
        let in_flight = eng.in_flight();
        assert_eq!(in_flight + done.len(), sent, "accepted = in flight + done");
        assert!(n > 0 || in_flight > 0, "none accepted, none in flight");
        peak = peak.max(in_flight);
        if n == 0 {
            eng.reap(1, &mut done).expect("reap");
        }
    }
    while done.len() < reqs.len() {
        let before = done.len();
        eng.reap(reqs.len() - before, &mut done).expect("reap");
        assert!(done.len() > before, "reap made no progress");
    }
    assert_eq!(eng.in_flight(), 0);
    let mut slots: Vec<u32> = done.iter().map(|c| c.slot).collect();
    let mut want: Vec<u32> = reqs.iter().map(|r| r.slot).collect();
    slots.sort_unstable();
    want.sort_unstable();
    assert_eq!(slots, want, "one completion per request");
    (done, peak)
}

/// Write `(offset, bytes)` blocks, up to the engine's queue depth at a time,
/// each from its own slot. Returns the most requests seen in flight.
fn write_blocks(eng: &mut dyn Engine, blocks: &[(u64, &[u8])]) -> usize {
    let mut peak = 0;
    for chunk in blocks.chunks(eng.caps().queue_depth) {
        let mut reqs = Vec::new();
        for (slot, &(offset, bytes)) in (0u32..).zip(chunk) {
            let buf = eng.buf_mut(slot).expect("an idle slot lends its buffer");
            assert_eq!(buf.len(), BS, "slot size is the block size");
            buf[..bytes.len()].copy_from_slice(bytes);
            reqs.push(req(Op::Write, offset, bytes.len(), slot));
        }
        let (done, p) = run(eng, &reqs);
        peak = peak.max(p);
        for c in done {
            assert_eq!(c.result, Ok(reqs[c.slot as usize].len), "{c:?}");
        }
    }
    peak
}

/// Read `len` bytes at each offset into poisoned slots; returns the bytes
/// each completion says it read, taken from the slot afterwards.
fn read_blocks(eng: &mut dyn Engine, offsets: &[u64], len: usize) -> Vec<Vec<u8>> {
    let qd = eng.caps().queue_depth;
    let mut out = vec![Vec::new(); offsets.len()];
    for (k, chunk) in offsets.chunks(qd).enumerate() {
        let reqs: Vec<IoReq> = (0u32..).zip(chunk).map(|(s, &o)| read(o, len, s)).collect();
        for r in &reqs {
            eng.buf_mut(r.slot).expect("idle slot").fill(0xAA);
        }
        for c in run(eng, &reqs).0 {
            let n = c.result.expect("read failed (errno)") as usize;
            assert!(n <= len, "read {n} bytes of {len} asked");
            let buf = eng.buf_mut(c.slot).expect("a completed slot is idle");
            out[k * qd + c.slot as usize] = buf[..n].to_vec();
        }
    }
    out
}

/// Read every block through `eng` and compare with `want` (null: lengths).
fn verify_with(eng: &mut dyn Engine, m: Method, want: &[u8]) {
    let all: Vec<u64> = (0..BLOCKS).map(blk).collect();
    for (b, got) in read_blocks(eng, &all, BS).iter().enumerate() {
        if m.is_null() {
            assert_eq!(got.len(), BS, "null completes the requested length");
        } else {
            same(got, &want[b * BS..(b + 1) * BS], &format!("block {b}"));
        }
    }
}

/// Read the whole target back through a new read-only engine.
fn verify_through_engine(m: Method, t: &Target, want: &[u8]) {
    let mut eng = t.open(m, false, qd_for(m), SyncPolicy::None);
    verify_with(&mut *eng, m, want);
}

/// Checks 1-2: write a pattern at scattered offsets, check it with std::fs,
/// then read it back through the engine.
fn check_write_read(m: Method) {
    let Some(t) = target(m, FILE) else { return };
    // Five blocks: at queue depth 4 a full batch, then a reused slot.
    let new = pattern(2, 5 * BS);
    let offsets = [0, 2, 5, 7, 3].map(blk);
    let blocks: Vec<(u64, &[u8])> = offsets.into_iter().zip(new.chunks(BS)).collect();
    let mut eng = t.open(m, true, qd_for(m), SyncPolicy::End);
    let peak = write_blocks(&mut *eng, &blocks);
    eng.flush(SyncPolicy::End).expect("flush(End)");
    drop(eng);
    let mut want = t.data.clone();
    if !m.is_null() {
        if m.is_async() {
            assert!(peak >= 2, "only {peak} ever in flight at qd {QD}");
        }
        for &(off, bytes) in &blocks {
            want[off as usize..off as usize + BS].copy_from_slice(bytes);
        }
    } // null must leave the file as it was
    same(&t.on_disk(), &want, "file after writing");
    verify_through_engine(m, &t, &want);
}

/// Check 3: a read across end of file returns the bytes that exist, with
/// the span set to the file's length and (mmap maps it) past it.
fn check_short_read(m: Method) {
    const LEN: usize = 10_000;
    if m.is_null() {
        return; // no file, no end of file
    }
    let Some(t) = target(m, LEN) else { return };
    let last = blk(LEN / BS);
    for span in [LEN, 4 * BS] {
        let spec = OpenSpec {
            span_bytes: span as u64,
            ..t.spec(false, qd_for(m), SyncPolicy::None)
        };
        let mut eng = open(m, &spec).expect("open");
        let got = read_blocks(&mut *eng, &[last, last + BS as u64], BS);
        let what = format!("short read, span {span}");
        same(&got[0], &t.data[last as usize..], &what);
        assert!(got[1].is_empty(), "a read past end of file returns 0 bytes");
    }
}

/// Check 4: O_DIRECT methods refuse misaligned requests before the kernel
/// would and the slot stays usable; the others serve any offset and length.
fn check_misaligned(m: Method) {
    let Some(t) = target(m, FILE) else { return };
    let mut eng = t.open(m, false, qd_for(m), SyncPolicy::None);
    let align = eng.caps().offset_align;
    if !m.is_direct() {
        assert_eq!(align, 1, "no alignment rule");
        let got = read_blocks(&mut *eng, &[1], 100);
        assert_eq!(got[0].len(), 100, "unaligned read length");
        if !m.is_null() {
            same(&got[0], &t.data[1..101], "unaligned read");
        }
        return;
    }
    assert!(align > 1 && align.is_power_of_two(), "offset_align {align}");
    let slot = eng.caps().queue_depth as u32 - 1;
    for (offset, len) in [(1, BS), (0, 100), (blk(1) + 1, 100)] {
        let (e, done) = refused(&mut *eng, &[read(offset, len, slot)]);
        // The message names the request and the rule.
        let rule = format!("offset {offset} of {len} bytes is not aligned to {align}");
        let named = e.to_string().contains(&rule);
        assert!(matches!(e, EngineError::Misaligned { .. }) && named, "{e}");
        assert!(done.is_empty() && eng.in_flight() == 0, "left state");
        assert!(eng.buf_mut(slot).is_some(), "refused slot must stay idle");
    }
    // The same slot then serves a good request.
    run(&mut *eng, &[read(blk(1), BS, slot)]);
    same(eng.buf_mut(slot).unwrap(), &t.data[BS..2 * BS], "reuse");
    // A batch whose second request is misaligned: what was accepted
    // completes, and every slot is idle again afterwards.
    if m.is_async() {
        let batch = [read(0, BS, 0), read(1, BS, 1)];
        let (e, mut done) = refused(&mut *eng, &batch);
        assert!(matches!(e, EngineError::Misaligned { .. }), "{e}");
        eng.reap(eng.in_flight(), &mut done).expect("reap");
        assert_eq!(eng.in_flight(), 0);
        assert!(done.iter().all(|c| c.result == Ok(BS as u32)), "{done:?}");
        for s in 0..QD as u32 {
            assert!(eng.buf_mut(s).is_some(), "slot {s} left busy");
        }
    }
    verify_with(&mut *eng, m, &t.data);
}

/// Check 5: queue depth and notes, idle/in-flight slots, bad requests.
fn check_contract(m: Method) {
    let Some(t) = target(m, FILE) else { return };
    let zero = OpenSpec {
        block_size: 0,
        ..t.spec(false, 1, SyncPolicy::None)
    };
    let e = open(m, &zero).err().expect("block size 0 accepted");
    assert!(matches!(e, EngineError::Invalid(_)), "{e}");
    let mut eng = t.open(m, false, 8, SyncPolicy::None);
    let caps = eng.caps().clone();
    let sync = !(m.is_async() || m.is_null());
    assert_eq!(caps.is_async, !sync, "{caps:?}");
    assert_eq!(caps.queue_depth, if sync { 1 } else { 8 }, "{caps:?}");
    if sync {
        let notes = caps.notes.join("; "); // must say qd 8 ran at 1
        let said = notes.contains("synchronous") && notes.contains('8');
        assert!(said, "{notes}");
    }
    let qd = caps.queue_depth as u32;
    for s in 0..qd {
        assert_eq!(eng.buf_mut(s).map(|b| b.len()), Some(BS), "slot {s}");
    }
    assert!(eng.buf_mut(qd).is_none(), "slot past the queue depth");
    let mut done = Vec::new();
    eng.reap(1, &mut done).expect("reap, nothing in flight");
    // Slots past the queue depth, empty and oversized requests.
    for (len, slot) in [(BS, qd), (BS, u32::MAX), (0, 0), (2 * BS, 0)] {
        let (e, early) = refused(&mut *eng, &[read(0, len, slot)]);
        assert!(matches!(e, EngineError::Invalid(_)), "{e}");
        done.extend(early);
    }
    assert!(done.is_empty() && eng.in_flight() == 0, "left state");
    if m.is_async() {
        let r = read(blk(1), BS, 0);
        assert_eq!(eng.submit(&[r], &mut done).expect("submit"), 1);
        assert_eq!(eng.in_flight(), 1);
        assert!(eng.buf_mut(0).is_none(), "in-flight slot lent out");
        assert!(eng.buf_mut(1).is_some(), "idle slot withheld");
        let (e, _) = refused(&mut *eng, &[r]); // slot 0 is in flight
        assert!(matches!(e, EngineError::Invalid(_)), "{e}");
        assert_eq!(eng.in_flight(), 1, "double submit changed in_flight");
        eng.reap(1, &mut done).expect("reap");
        let ok = Ok(BS as u32);
        assert!(done.len() == 1 && done[0].slot == 0 && done[0].result == ok);
        same(eng.buf_mut(0).unwrap(), &t.data[BS..2 * BS], "slot 0");
        // A batch naming one slot twice fails; what was accepted completes.
        let (e, mut done) = refused(&mut *eng, &[read(0, BS, 1), read(0, BS, 1)]);
        assert!(matches!(e, EngineError::Invalid(_)), "{e}");
        eng.reap(eng.in_flight(), &mut done).expect("reap");
        assert!(done.iter().all(|c| c.slot == 1 && c.result == ok));
        assert!(eng.buf_mut(1).is_some() && eng.in_flight() == 0);
    }
    verify_with(&mut *eng, m, &t.data); // the engine still works
}

/// Check 6: every sync policy writes data that std::fs then reads.
fn check_sync_policies(m: Method) {
    if m == Method::UringIopoll {
        // Refused at open, before any device is involved: checked even where
        // IOPOLL itself is unusable.
        let t = Target::new(BS);
        match open(m, &t.spec(true, QD, SyncPolicy::Each)) {
            Err(EngineError::Unsupported { method, .. }) => assert_eq!(method, m),
            other => panic!("sync each gave {:?}", other.map(|_| ())),
        }
    }
    if m.is_null() {
        return;
    }
    let Some(t) = target(m, FILE) else { return };
    let mut want = t.data.clone();
    use SyncPolicy::{Dsync, Each, End, Osync};
    let policies = [SyncPolicy::None, End, Dsync, Each, Osync];
    for (i, policy) in policies.into_iter().enumerate() {
        if m == Method::UringIopoll && policy == SyncPolicy::Each {
            continue;
        }
        let new = pattern(10 + i as u64, 2 * BS);
        let off = 2 * i * BS; // policy i writes blocks 2i and 2i+1
        let blocks = [(off as u64, &new[..BS]), ((off + BS) as u64, &new[BS..])];
        let mut eng = t.open(m, true, qd_for(m), policy);
        write_blocks(&mut *eng, &blocks);
        eng.flush(policy).expect("flush");
        drop(eng);
        want[off..off + 2 * BS].copy_from_slice(&new);
        let what = format!("file after sync {}", policy.name());
        same(&t.on_disk(), &want, &what);
    }
    // A sync in the middle of a run (`sync_now`, `--sync-every`): what was
    // written before it is in the file when it returns, engine still open
    // (the caches' and mappings' write-back done), with either call.
    for (i, call) in [SyncCall::Fsync, SyncCall::Fdatasync]
        .into_iter()
        .enumerate()
    {
        let new = pattern(20 + i as u64, BS);
        let off = i * BS;
        let mut eng = t.open(m, true, qd_for(m), SyncPolicy::None);
        write_blocks(&mut *eng, &[(off as u64, &new[..])]);
        eng.sync_now(call)
            .unwrap_or_else(|e| panic!("{}: {e}", call.name()));
        want[off..off + BS].copy_from_slice(&new);
        same(&t.on_disk(), &want, &format!("file after {}", call.name()));
        drop(eng);
    }
    verify_through_engine(m, &t, &want);
}

/// Check 7: dropping an async engine with requests in flight waits for them
/// (see the uring and aio module docs): no crash, no write into freed
/// memory, in-flight writes land, and the file reads back correctly.
fn check_drop_in_flight(m: Method) {
    if !m.is_async() {
        return; // synchronous engines and null never hold a request
    }
    let Some(t) = target(m, FILE) else { return };
    let mut done = Vec::new();
    let mut canaries = Vec::new();
    // Reads left queued in the engine, or pushed to the kernel by reap(0).
    for kick in [false, true] {
        let mut eng = t.open(m, false, QD, SyncPolicy::None);
        let reqs: Vec<IoReq> = (0..QD).map(|s| read(blk(2 * s), BS, s as u32)).collect();
        let n = eng.submit(&reqs, &mut done).expect("submit");
        assert!(n > 0 && eng.in_flight() == n, "{n} accepted");
        if kick {
            eng.reap(0, &mut done).expect("reap(0)");
        }
        drop(eng);
        // Same size and alignment as the engine's slots, so likely the same
        // memory: a late kernel write into it would show at the end.
        let mut canary = AlignedBuf::new(QD * BS, 4096);
        canary.as_mut_slice().fill(0x5A);
        canaries.push(canary);
    }
    // Writes to the odd blocks, dropped in flight: they must land.
    let new = pattern(3, QD * BS);
    let mut eng = t.open(m, true, QD, SyncPolicy::None);
    let mut reqs = Vec::new();
    for (s, bytes) in (0..QD as u32).zip(new.chunks(BS)) {
        eng.buf_mut(s).expect("idle slot").copy_from_slice(bytes);
        reqs.push(req(Op::Write, blk(2 * s as usize + 1), BS, s));
    }
    let n = eng.submit(&reqs, &mut done).expect("submit writes");
    assert!(n > 0 && eng.in_flight() == n, "{n} accepted");
    drop(eng);
    let mut want = t.data.clone();
    for (r, bytes) in reqs[..n].iter().zip(new.chunks(BS)) {
        want[r.offset as usize..r.offset as usize + BS].copy_from_slice(bytes);
    }
    same(&t.on_disk(), &want, "file after dropping in-flight writes");
    verify_through_engine(m, &t, &want);
    for c in &canaries {
        let intact = c.as_slice().iter().all(|&b| b == 0x5A);
        assert!(intact, "freed slot memory was written");
    }
}

macro_rules! conformance {
    ($($(#[$attr:meta])* $name:ident => $method:expr),* $(,)?) => {
        $($(#[$attr])* mod $name {
            use super::*;
            #[test] fn write_then_read() { check_write_read($method) }
            #[test] fn short_read_at_eof() { check_short_read($method) }
            #[test] fn alignment() { check_misaligned($method) }
            #[test] fn api_contract() { check_contract($method) }
            #[test] fn sync_policies() { check_sync_policies($method) }
            #[test] fn drop_in_flight() { check_drop_in_flight($method) }
        })*

        #[test]
        fn every_method_is_covered() {
            // Copy-only methods have no engine (see the test below), and a
            // method this build leaves out has none to test here
            // (`tokio` without its feature: see not_compiled_in_says_how).
            let all = Method::ALL
                .into_iter()
                .filter(|m| !m.copy_only() && m.compiled_in());
            let mut listed: Vec<Method> = [$($(#[$attr])* $method),*].to_vec();
            let mut all = all.collect::<Vec<_>>();
            listed.sort();
            all.sort();
            assert_eq!(listed, all, "add new methods to the conformance! list");
        }
    };
}

conformance! {
    buffered => Method::Buffered,
    direct => Method::Direct,
    mmap => Method::Mmap,
    mmap_dax => Method::MmapDax,
    uring => Method::Uring,
    uring_batch => Method::UringBatch,
    uring_buffered => Method::UringBuffered,
    uring_sqpoll => Method::UringSqpoll,
    uring_iopoll => Method::UringIopoll,
    aio => Method::Aio,
    dontcache => Method::Dontcache,
    uring_dontcache => Method::UringDontcache,
    threadpool => Method::Threadpool,
    #[cfg(feature = "tokio")]
    tokio => Method::Tokio,
    ucache => Method::Ucache,
    uffd => Method::Uffd,
    uffd_wp => Method::UffdWp,
    null => Method::Null,
}

/// A build without the `tokio` feature still knows the method: opening it
/// and the probe say how to build it in.
#[cfg(not(feature = "tokio"))]
#[test]
fn not_compiled_in_says_how() {
    let t = Target::new(FILE);
    let how = "built without the tokio feature: cargo build --release --features tokio";
    assert!(!Method::Tokio.compiled_in());
    match open(Method::Tokio, &t.spec(false, QD, SyncPolicy::None)) {
        Err(EngineError::Unsupported { method, reason }) => {
            assert_eq!(method, Method::Tokio);
            assert_eq!(reason, how);
        }
        other => panic!("tokio opened without its feature: {:?}", other.map(|_| ())),
    }
    let st = probe_method(Method::Tokio, &t.path, BS);
    assert_eq!(st.unusable.as_deref(), Some(how));
}

/// `copy-file-range` and `sendfile` only copy (iopath_io::copy): opening
/// them as an engine is refused with that reason, and the probe calls them
/// usable with a note.
#[test]
fn copy_only_methods_open_no_engine() {
    let t = Target::new(FILE);
    for m in Method::ALL.into_iter().filter(|m| m.copy_only()) {
        let spec = OpenSpec {
            path: t.path.clone(),
            write: false,
            block_size: BS,
            queue_depth: 1,
            sync: SyncPolicy::None,
            span_bytes: FILE as u64,
            sqpoll_cpu: None,
            mem_policy: None,
            buffers: Default::default(),
            noatime: false,
        };
        match iopath_io::open(m, &spec) {
            Err(EngineError::Unsupported { reason, .. }) => {
                assert!(reason.contains("copy pattern"), "{m}: {reason}")
            }
            Err(e) => panic!("{m}: {e}"),
            Ok(_) => panic!("{m} opened an engine"),
        }
        let st = iopath_io::probe_method(m, &t.path, BS);
        assert!(st.unusable.is_none(), "{m}: {:?}", st.unusable);
        assert!(!m.in_default_run() && !m.is_async());
    }
}

/// The mapping notes of a mapping engine, read back.
fn mappings(eng: &dyn Engine) -> Vec<MappingInfo> {
    let notes = &eng.caps().notes;
    notes.iter().filter_map(|n| parse_mapping_note(n)).collect()
}

/// mmap says where its mapping is, as DAXBench64 prints it: fd, length,
/// first and last address, and the length is the span (cut at end of file).
#[test]
fn mmap_reports_its_mapping() {
    let t = Target::new(FILE);
    for (span, write) in [
        (FILE, false),
        (FILE, true),
        (FILE / 2, false),
        (2 * FILE, false),
    ] {
        let spec = OpenSpec {
            span_bytes: span as u64,
            ..t.spec(write, 1, SyncPolicy::None)
        };
        let eng = open(Method::Mmap, &spec).expect("open mmap");
        let m = mappings(&*eng);
        assert_eq!(m.len(), 1, "one mapping note: {:?}", eng.caps().notes);
        let m = m[0];
        assert_eq!(m.len, span.min(FILE) as u64, "span {span}: {m:?}");
        assert!(m.fd > 0 && m.start < m.end, "{m:?}");
        assert_eq!(m.end - m.start + 1, m.len, "{m:?}");
        assert_eq!(m.start % 4096, 0, "a mapping starts on a page: {m:?}");
        let note = eng.caps().notes.iter().find(|n| n.starts_with("mapping: "));
        assert!(note.unwrap().contains(&format!("length {:#x}", m.len)));
    }
    // An empty span maps nothing and says nothing about a mapping.
    let spec = OpenSpec {
        span_bytes: 0,
        ..t.spec(false, 1, SyncPolicy::None)
    };
    let eng = open(Method::Mmap, &spec).expect("open mmap, span 0");
    assert!(mappings(&*eng).is_empty(), "{:?}", eng.caps().notes);
}

/// Open mmap-dax on a fresh file in `dir`: Unsupported with a reason that
/// names MAP_SYNC unless `dir` is on DAX (then its mapping is reported).
fn mmap_dax_in(dir: &std::path::Path) -> Option<String> {
    let path = dir.join("dax.dat");
    std::fs::write(&path, pattern(4, FILE)).expect("prefill");
    let spec = OpenSpec {
        path: path.clone(),
        write: true,
        block_size: BS,
        queue_depth: 1,
        sync: SyncPolicy::End,
        span_bytes: FILE as u64,
        sqpoll_cpu: None,
        mem_policy: None,
        buffers: Default::default(),
        noatime: false,
    };
    match open(Method::MmapDax, &spec) {
        Err(EngineError::Unsupported { method, reason }) => {
            assert_eq!(method, Method::MmapDax);
            if cfg!(target_arch = "x86_64") {
                assert!(reason.contains("MAP_SYNC refused"), "{reason}");
                assert!(reason.contains(&path.display().to_string()), "{reason}");
                assert!(reason.contains("-o dax"), "{reason}");
            }
            // probe_method says the same.
            let st = probe_method(Method::MmapDax, &path, BS);
            assert_eq!(st.unusable.as_deref(), Some(reason.as_str()));
            Some(reason)
        }
        Err(e) => panic!("mmap-dax: {e}"),
        Ok(eng) => {
            // A DAX file system: the engine works (the conformance checks
            // ran it) and reports its MAP_SYNC mapping.
            assert_eq!(mappings(&*eng).len(), 1, "{:?}", eng.caps().notes);
            eprintln!("{} is on DAX: mmap-dax opened", dir.display());
            None
        }
    }
}

/// mmap-dax on the disk under the target directory: here ext4 without DAX.
#[test]
fn mmap_dax_says_why_not_on_disk() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    if let Some(reason) = mmap_dax_in(dir.path()) {
        eprintln!("mmap-dax: {reason}");
        let fs = iopath_io::sys::fs_type_of(dir.path()).unwrap();
        if cfg!(target_arch = "x86_64") && fs != "unknown" {
            assert!(reason.contains(fs), "names the file system {fs}: {reason}");
        }
    }
}

/// mmap-dax on tmpfs (/dev/shm, in a directory of a unique name removed
/// afterwards): tmpfs never supports MAP_SYNC.
#[test]
fn mmap_dax_is_refused_on_tmpfs() {
    let shm = std::path::Path::new("/dev/shm");
    if iopath_io::sys::fs_type_of(shm).ok() != Some("tmpfs") {
        eprintln!("skipped: /dev/shm is not a tmpfs here");
        return;
    }
    let Ok(dir) = tempfile::Builder::new()
        .prefix("iopath-dax-")
        .tempdir_in(shm)
    else {
        eprintln!("skipped: cannot create a directory in /dev/shm");
        return;
    };
    let reason = mmap_dax_in(dir.path()).expect("tmpfs is never DAX");
    eprintln!("mmap-dax: {reason}");
    if cfg!(target_arch = "x86_64") {
        assert!(
            reason.contains("EOPNOTSUPP") && reason.contains("tmpfs"),
            "{reason}"
        );
    }
}

//! `iopath record` (docs/replay.md): eBPF as root (through bpftrace), and
//! the strace fallback as an unprivileged user. The eBPF tests skip when
//! bpftrace is missing or the test is not root, saying so (and fail
//! instead under IOPATH_REQUIRE_ROOT_TESTS=1, as in CI).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use iopath::trace::codec::open_file;
use iopath::trace::{Ending, Event, Header, Op, FAULT_MAJOR};

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

/// Whether eBPF recording can run here; the test skips (saying why) if not.
fn ebpf_ready() -> bool {
    if !rustix::process::geteuid().is_root() {
        common::skip("eBPF recording needs root");
        return false;
    }
    if !on_path("bpftrace") {
        common::skip("bpftrace is not installed (apt-get install bpftrace)");
        return false;
    }
    true
}

fn read_trace(path: &Path) -> (Header, Vec<Event>) {
    let r = open_file(path).unwrap();
    let header = r.header().clone();
    let events = r.map(|e| e.unwrap()).collect();
    (header, events)
}

fn file_id(h: &Header, path: &Path) -> u32 {
    let want = path.to_string_lossy();
    h.files
        .iter()
        .position(|f| f.path == want)
        .unwrap_or_else(|| panic!("{want} not among {:?}", h.files)) as u32
}

/// A 1 MiB file of random bytes (not zeros: no sparse or compressed reads).
fn data_file(dir: &Path) -> PathBuf {
    let p = dir.join("data.bin");
    let mut bytes = vec![0u8; 1 << 20];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for b in &mut bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    std::fs::write(&p, bytes).unwrap();
    p
}

/// dd's O_DIRECT reads: 8 reads of 4 KiB from 8 KiB on, the open's
/// O_DIRECT flag, the command's failing exit code passed through and the
/// trace kept, saying so.
#[test]
fn ebpf_record_of_direct_reads_has_their_offsets_and_the_exit_code() {
    if !ebpf_ready() {
        return;
    }
    let dir = common::scratch();
    let data = data_file(dir.path());
    let trace = dir.path().join("dd.trace");
    let script = format!(
        "dd if={} of=/dev/null bs=4096 count=8 skip=2 iflag=direct 2>/dev/null; exit 7",
        data.display()
    );
    let out = common::iopath()
        .args(["record", "--backend", "ebpf", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (h, events) = read_trace(&trace);
    assert_eq!(h.ending, Ending::CommandFailed { exit_code: 7 });
    assert_eq!(h.backend, "ebpf");
    let id = file_id(&h, &data);
    let reads: Vec<&Event> = events
        .iter()
        .filter(|e| e.file == Some(id) && e.op() == Op::Read)
        .collect();
    let offsets: Vec<u64> = reads.iter().map(|e| e.offset).collect();
    assert_eq!(offsets, (2..10).map(|i| i * 4096).collect::<Vec<u64>>());
    assert!(reads.iter().all(|e| e.len == 4096 && e.result == 4096));
    let open = events
        .iter()
        .find(|e| e.file == Some(id) && e.op() == Op::Open)
        .expect("the open of the data file");
    assert_ne!(open.flags & 0o40000, 0, "O_DIRECT in {:o}", open.flags);
    assert_eq!(h.files[id as usize].size_bytes, 1 << 20);
    assert!(common::leftovers(dir.path()).is_empty());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "only the data and the trace"
    );
}

/// Pages of a mapped file touched by python3: each touched offset is in a
/// recorded fault on that file, and the first (the file was dropped from
/// the cache) is major.
#[test]
fn ebpf_record_sees_page_faults_on_a_mapped_file() {
    if !ebpf_ready() {
        return;
    }
    let Some(python) = ["/usr/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        common::skip_anyway("no /usr/bin/python3 to map a file");
        return;
    };
    let dir = common::scratch();
    let data = data_file(dir.path());
    let trace = dir.path().join("mmap.trace");
    let touched = [0u64, 262144, 524288, 786432];
    let script = format!(
        "import mmap, os\n\
         fd = os.open({path:?}, os.O_RDONLY)\n\
         os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n\
         m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)\n\
         s = sum(m[o] for o in {touched:?})\n",
        path = data.to_string_lossy(),
    );
    let out = common::iopath()
        .args(["record", "--backend", "ebpf", "-o"])
        .arg(&trace)
        .args(["--", python, "-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (h, events) = read_trace(&trace);
    let id = file_id(&h, &data);
    let faults: Vec<&Event> = events
        .iter()
        .filter(|e| e.file == Some(id) && e.op() == Op::FaultRead)
        .collect();
    for o in touched {
        assert!(
            faults.iter().any(|e| e.offset <= o && o < e.offset + e.len),
            "no fault covers offset {o}: {faults:?}"
        );
    }
    assert!(
        faults.iter().any(|e| e.flags & FAULT_MAJOR != 0),
        "{faults:?}"
    );
    assert!(events
        .iter()
        .any(|e| e.file == Some(id) && e.op() == Op::Mmap));
}

/// The strace fallback, run as `nobody`: dd's reads with their offsets,
/// and the header saying what strace cannot see.
#[test]
fn strace_record_works_as_an_unprivileged_user() {
    if !rustix::process::geteuid().is_root() {
        common::skip("switching to the user nobody needs root");
        return;
    }
    if !on_path("strace") || !on_path("setpriv") {
        common::skip("strace or setpriv is not installed (apt-get install strace util-linux)");
        return;
    }
    let dir = common::scratch();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let data = data_file(dir.path());
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o644)).unwrap();
    // A copy nobody can run (the build directory may be closed to it).
    let bin = dir.path().join("iopath");
    std::fs::copy(env!("CARGO_BIN_EXE_iopath"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let trace = dir.path().join("s.trace");
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid",
            "nobody",
            "--regid",
            "nogroup",
            "--clear-groups",
            "--",
        ])
        .arg(&bin)
        .args(["record", "-o"])
        .arg(&trace)
        .args(["--", "dd"])
        .arg(format!("if={}", data.display()))
        .args(["of=/dev/null", "bs=65536", "count=4", "skip=1"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("not seen by strace"), "{stderr}");
    let (h, events) = read_trace(&trace);
    assert_eq!(h.backend, "strace");
    assert!(h
        .blind_spots
        .contains(&iopath::trace::BlindSpot::MmapFaults));
    let id = file_id(&h, &data);
    let offsets: Vec<u64> = events
        .iter()
        .filter(|e| e.file == Some(id) && e.op() == Op::Read)
        .map(|e| e.offset)
        .collect();
    assert_eq!(offsets, vec![65536, 131072, 196608, 262144]);
    let leftover: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
}

/// A command that cannot start: exit 2 with the reason, and no file.
#[test]
fn record_of_a_command_that_cannot_start_exits_2_and_leaves_nothing() {
    let dir = common::scratch();
    let trace = dir.path().join("x.trace");
    let out = common::iopath()
        .args(["record", "-o"])
        .arg(&trace)
        .args(["--", "iopath-no-such-command-here", "arg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot start iopath-no-such-command-here"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// An existing output is never overwritten.
#[test]
fn record_refuses_to_overwrite_a_trace() {
    let dir = common::scratch();
    let trace = dir.path().join("x.trace");
    std::fs::write(&trace, b"mine").unwrap();
    let out = common::iopath()
        .args(["record", "-o"])
        .arg(&trace)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&trace).unwrap(), b"mine");
}

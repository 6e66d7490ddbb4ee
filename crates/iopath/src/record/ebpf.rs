//! The eBPF backend: a bpftrace program over the kernel's syscall,
//! filemap, page-fault, io_uring and scheduler tracepoints (this kernel's
//! bpftrace has no kprobes or fentry here: tracepoints only), run through
//! [`super::bpftrace`], and the parser of its lines into [`Raw`] events.
//!
//! Which processes: `$1` and its descendants (`sched_process_fork`),
//! from its `exec` on (`$2` = 0: the recorder's gate shell before it
//! execs the command is not recorded) or at once (`$2` = 1, `--pid`).
//! Each line is one event, space-separated numbers, a path last.

use super::raw::{FdCall, PathCall, Raw, DUP, LEN_FROM_RESULT, LSEEK};
use crate::trace::Op;

/// A call on a descriptor: (syscall, code, fd, offset, length, flags),
/// each a bpftrace expression over `args`.
const FD_CALLS: &[(&str, u8, &str, &str, &str, &str)] = &[
    ("read", Op::Read as u8, "args->fd", "-1", "args->count", "0"),
    (
        "write",
        Op::Write as u8,
        "args->fd",
        "-1",
        "args->count",
        "0",
    ),
    (
        "pread64",
        Op::Pread as u8,
        "args->fd",
        "args->pos",
        "args->count",
        "0",
    ),
    (
        "pwrite64",
        Op::Pwrite as u8,
        "args->fd",
        "args->pos",
        "args->count",
        "0",
    ),
    ("readv", Op::Readv as u8, "args->fd", "-1", "-1", "0"),
    ("writev", Op::Writev as u8, "args->fd", "-1", "-1", "0"),
    (
        "preadv",
        Op::Preadv as u8,
        "args->fd",
        "args->pos_l",
        "-1",
        "0",
    ),
    (
        "pwritev",
        Op::Pwritev as u8,
        "args->fd",
        "args->pos_l",
        "-1",
        "0",
    ),
    (
        "preadv2",
        Op::Preadv2 as u8,
        "args->fd",
        "args->pos_l",
        "-1",
        "args->flags",
    ),
    (
        "pwritev2",
        Op::Pwritev2 as u8,
        "args->fd",
        "args->pos_l",
        "-1",
        "args->flags",
    ),
    ("fsync", Op::Fsync as u8, "args->fd", "0", "0", "0"),
    ("fdatasync", Op::Fdatasync as u8, "args->fd", "0", "0", "0"),
    (
        "sync_file_range",
        Op::SyncFileRange as u8,
        "args->fd",
        "args->offset",
        "args->nbytes",
        "args->flags",
    ),
    (
        "fallocate",
        Op::Fallocate as u8,
        "args->fd",
        "args->offset",
        "args->len",
        "args->mode",
    ),
    (
        "ftruncate",
        Op::Ftruncate as u8,
        "args->fd",
        "0",
        "args->length",
        "0",
    ),
    ("close", Op::Close as u8, "args->fd", "0", "0", "0"),
    ("newfstat", Op::Stat as u8, "args->fd", "0", "0", "0"),
    (
        "lseek",
        LSEEK,
        "args->fd",
        "args->offset",
        "0",
        "args->whence",
    ),
    ("dup", DUP, "args->fildes", "0", "0", "0"),
    ("dup2", DUP, "args->oldfd", "0", "0", "0"),
    ("dup3", DUP, "args->oldfd", "0", "0", "0"),
    (
        "mmap",
        Op::Mmap as u8,
        "(int64)args->fd",
        "args->off",
        "args->len",
        "args->prot | (args->flags << 8)",
    ),
];

/// A call on a path: (syscall, code, dirfd, path, flags, second path).
const PATH_CALLS: &[(&str, u8, &str, &str, &str, &str)] = &[
    (
        "open",
        Op::Open as u8,
        "-100",
        "args->filename",
        "args->flags",
        "",
    ),
    (
        "openat",
        Op::Open as u8,
        "args->dfd",
        "args->filename",
        "args->flags",
        "",
    ),
    (
        "openat2",
        Op::Open as u8,
        "args->dfd",
        "args->filename",
        "uptr(args->how)->flags",
        "",
    ),
    // O_CREAT | O_WRONLY | O_TRUNC
    (
        "creat",
        Op::Open as u8,
        "-100",
        "args->pathname",
        "0x241",
        "",
    ),
    ("newstat", Op::Stat as u8, "-100", "args->filename", "0", ""),
    (
        "newlstat",
        Op::Stat as u8,
        "-100",
        "args->filename",
        "0",
        "",
    ),
    (
        "newfstatat",
        Op::Stat as u8,
        "args->dfd",
        "args->filename",
        "args->flag",
        "",
    ),
    (
        "statx",
        Op::Stat as u8,
        "args->dfd",
        "args->filename",
        "args->flags",
        "",
    ),
    (
        "unlink",
        Op::Unlink as u8,
        "-100",
        "args->pathname",
        "0",
        "",
    ),
    (
        "unlinkat",
        Op::Unlink as u8,
        "args->dfd",
        "args->pathname",
        "args->flag",
        "",
    ),
    (
        "rename",
        Op::Rename as u8,
        "-100",
        "args->oldname",
        "0",
        "args->newname",
    ),
    (
        "renameat",
        Op::Rename as u8,
        "args->olddfd",
        "args->oldname",
        "0",
        "args->newname",
    ),
    (
        "renameat2",
        Op::Rename as u8,
        "args->olddfd",
        "args->oldname",
        "args->flags",
        "args->newname",
    ),
];

/// The longest path bpftrace copies (its maximum); longer ones are cut.
pub const PATH_MAX_BYTES: usize = 200;

/// The environment bpftrace needs for this program.
pub const ENV: &[(&str, &str)] = &[
    ("BPFTRACE_STRLEN", "200"),
    ("BPFTRACE_MAP_KEYS_MAX", "65536"),
    ("BPFTRACE_PERF_RB_PAGES", "1024"),
];

/// The whole program.
pub fn program() -> String {
    let mut p = String::from(PROCESSES);
    for &(name, code, fd, off, len, flags) in FD_CALLS {
        let pred = if name == "mmap" {
            "/@t[pid] && (int64)args->fd >= 0/"
        } else {
            "/@t[pid]/"
        };
        p.push_str(&format!(
            "tracepoint:syscalls:sys_enter_{name} {pred} {{ @s[tid] = nsecs; @a[tid] = (int64)({fd}); \
             @b[tid] = (int64)({off}); @c[tid] = (int64)({len}); @d[tid] = (uint64)({flags}); \
             delete(@fi[tid]); }}\n\
             tracepoint:syscalls:sys_exit_{name} /@s[tid]/ {{ printf(\"E {code} %d %d %lu %lu %ld %ld %ld %ld %lu\\n\", \
             pid, tid, @s[tid], nsecs - @s[tid], @a[tid], @b[tid], @c[tid], args->ret, @d[tid]); \
             delete(@s[tid]); }}\n"
        ));
    }
    p.push_str(
        "tracepoint:syscalls:sys_enter_fcntl /@t[pid] && (args->cmd == 0 || args->cmd == 1030)/ \
         { @s[tid] = nsecs; @a[tid] = (int64)args->fd; }\n\
         tracepoint:syscalls:sys_exit_fcntl /@s[tid]/ { printf(\"E 101 %d %d %lu %lu %ld 0 0 %ld 0\\n\", \
         pid, tid, @s[tid], nsecs - @s[tid], @a[tid], args->ret); delete(@s[tid]); }\n",
    );
    for &(name, code, dirfd, path, flags, path2) in PATH_CALLS {
        // The paths are printed at entry (a string kept in a map and
        // printed again would pass the BPF stack's 512 bytes), matched to
        // the exit's line by thread and start time.
        let second = if path2.is_empty() {
            String::new()
        } else {
            format!("printf(\"N %d %lu %ld %s\\n\", tid, @s[tid], @a[tid], str({path2})); ")
        };
        p.push_str(&format!(
            "tracepoint:syscalls:sys_enter_{name} /@t[pid]/ {{ @s[tid] = nsecs; @a[tid] = (int64)({dirfd}); \
             @d[tid] = (uint64)({flags}); printf(\"O %d %lu %ld %s\\n\", tid, @s[tid], @a[tid], str({path})); {second}}}\n\
             tracepoint:syscalls:sys_exit_{name} /@s[tid]/ {{ printf(\"P {code} %d %d %lu %lu %ld %lu %ld\\n\", \
             pid, tid, @s[tid], nsecs - @s[tid], @a[tid], @d[tid], args->ret); delete(@s[tid]); }}\n"
        ));
    }
    p.push_str(FAULTS_AND_RINGS);
    p
}

/// Which processes are traced, their forks and exits.
const PROCESSES: &str = "\
BEGIN { if ($2 == 1) { @t[$1] = 1; } printf(\"B\\n\"); }
END { clear(@t); clear(@s); clear(@a); clear(@b); clear(@c); clear(@d); clear(@w); clear(@fs); clear(@fi); }
tracepoint:sched:sched_process_exec /pid == $1/ { @t[pid] = 1; }
tracepoint:sched:sched_process_fork /@t[pid]/ { @t[args->child_pid] = 1; printf(\"K %d %d %lu\\n\", pid, args->child_pid, nsecs); }
tracepoint:sched:sched_process_exit /@t[tid]/ { delete(@t[tid]); if (pid == tid) { printf(\"X %d %lu\\n\", pid, nsecs); } }
";

/// Page faults that reach a file (`filemap_fault`, the fault-around's
/// `map_pages`, a page added to the cache during the fault: major), io_uring
/// submissions and completions, libaio submissions (up to 16 iocbs a call).
const FAULTS_AND_RINGS: &str = "\
tracepoint:exceptions:page_fault_user /@t[pid]/ { @w[tid] = args->error_code & 2; @fs[tid] = nsecs; delete(@fi[tid]); }
tracepoint:filemap:mm_filemap_fault /@t[pid]/ { printf(\"F %d %d %lu %lu %lu %lu 1 %d\\n\", pid, tid, @fs[tid], args->s_dev, args->i_ino, args->index, @w[tid]); @fi[tid] = args->i_ino; }
tracepoint:filemap:mm_filemap_map_pages /@t[pid]/ { printf(\"F %d %d %lu %lu %lu %lu %lu 0\\n\", pid, tid, @fs[tid], args->s_dev, args->i_ino, args->index, args->last_index - args->index + 1); }
tracepoint:filemap:mm_filemap_add_to_page_cache /@t[pid] && @fi[tid] == args->i_ino/ { printf(\"M %d %lu %lu\\n\", tid, args->i_ino, nsecs); delete(@fi[tid]); }
tracepoint:io_uring:io_uring_submit_req /@t[pid]/ { $rw = (struct io_rw *)args->req; printf(\"U %d %d %lu %lu %d %d %lu %lu %lu\\n\", pid, tid, nsecs, args->req, args->opcode, ((struct io_kiocb *)args->req)->cqe.fd, args->flags & 1, $rw->kiocb.ki_pos, $rw->len); }
tracepoint:io_uring:io_uring_complete /@t[pid]/ { printf(\"C %lu %lu %d\\n\", nsecs, args->req, args->res); }
tracepoint:syscalls:sys_enter_io_submit /@t[pid]/ {
  $i = 0;
  unroll(16) {
    if ($i < args->nr) {
      $cb = (struct iocb *)*(uint64 *)uptr(args->iocbpp + $i * 8);
      printf(\"A %d %d %lu %d %d %lu %lu\\n\", pid, tid, nsecs, uptr($cb)->aio_lio_opcode, uptr($cb)->aio_fildes, uptr($cb)->aio_offset, uptr($cb)->aio_nbytes);
    }
    $i = $i + 1;
  }
}
";

/// A line of the program's output as an event; `None` for a line it does
/// not know (counted by the caller). A path call's paths come in the `O`
/// and `N` lines before it ([`entry_path`]).
pub fn parse(line: &str) -> Option<Raw> {
    let mut w = line.splitn(2, ' ');
    let kind = w.next()?;
    let rest = w.next().unwrap_or("");
    match kind {
        "E" => fd_call(rest),
        "P" => path_call(rest),
        "F" => {
            let n = nums::<8>(rest)?;
            Some(Raw::Fault {
                pid: n[0] as u32,
                tid: n[1] as u32,
                ts_ns: n[2] as u64,
                dev: user_dev(n[3] as u64),
                ino: n[4] as u64,
                index: n[5] as u64,
                pages: n[6].max(1) as u64,
                write: n[7] != 0,
                major: false,
            })
        }
        "M" => {
            let n = nums::<3>(rest)?;
            Some(Raw::Major {
                tid: n[0] as u32,
                ino: n[1] as u64,
                ts_ns: n[2] as u64,
            })
        }
        "U" => uring(rest),
        "C" => {
            let n = nums::<3>(rest)?;
            Some(Raw::UringComplete {
                ts_ns: n[0] as u64,
                req: n[1] as u64,
                res: n[2] as i64,
            })
        }
        "A" => aio(rest),
        "K" => {
            let n = nums::<3>(rest)?;
            Some(Raw::Fork {
                parent: n[0] as u32,
                child: n[1] as u32,
                ts_ns: n[2] as u64,
            })
        }
        "X" => {
            let n = nums::<2>(rest)?;
            Some(Raw::Exit {
                pid: n[0] as u32,
                ts_ns: n[1] as u64,
            })
        }
        _ => None,
    }
}

/// A path printed at a call's entry: `O` (its path) or `N` (rename's new
/// name), as (second, tid, start ns, dirfd, path); matched to the `P` line
/// of the same thread and start.
pub fn entry_path(line: &str) -> Option<(bool, u32, u64, i64, String)> {
    let (second, rest) = match line.split_at_checked(2)? {
        ("O ", rest) => (false, rest),
        ("N ", rest) => (true, rest),
        _ => return None,
    };
    let mut w = rest.splitn(4, ' ');
    let tid = w.next()?.parse().ok()?;
    let ts = w.next()?.parse().ok()?;
    let dirfd = dirfd(w.next()?.parse().ok()?);
    Some((second, tid, ts, dirfd, w.next().unwrap_or("").to_string()))
}

/// A directory descriptor as the tracepoint gave it: an `int` in an
/// unsigned slot (AT_FDCWD, -100, reads as 4294967196).
fn dirfd(v: i64) -> i64 {
    i64::from(v as u32 as i32)
}

/// The first `N` numbers of `s` (signed, to take `-1`).
fn nums<const N: usize>(s: &str) -> Option<[i128; N]> {
    let mut out = [0i128; N];
    let mut it = s.split(' ');
    for slot in &mut out {
        *slot = it.next()?.parse().ok()?;
    }
    Some(out)
}

fn fd_call(rest: &str) -> Option<Raw> {
    let n = nums::<10>(rest)?;
    let len = if n[7] < 0 {
        LEN_FROM_RESULT
    } else {
        n[7] as u64
    };
    Some(Raw::Fd(FdCall {
        code: n[0] as u8,
        pid: n[1] as u32,
        tid: n[2] as u32,
        ts_ns: n[3] as u64,
        dur_ns: n[4] as u64,
        fd: n[5] as i64,
        offset: n[6] as i64,
        len,
        ret: n[8] as i64,
        flags: n[9] as u64,
    }))
}

fn path_call(rest: &str) -> Option<Raw> {
    let n = nums::<8>(rest)?;
    Some(Raw::Path(PathCall {
        code: n[0] as u8,
        pid: n[1] as u32,
        tid: n[2] as u32,
        ts_ns: n[3] as u64,
        dur_ns: n[4] as u64,
        dirfd: dirfd(n[5] as i64),
        flags: n[6] as u64,
        ret: n[7] as i64,
        path: String::new(),
        path2: None,
    }))
}

fn uring(rest: &str) -> Option<Raw> {
    let n = nums::<9>(rest)?;
    // IORING_OP_READV 1, WRITEV 2, FSYNC 3, READ_FIXED 4, WRITE_FIXED 5,
    // READ 22, WRITE 23.
    let (code, vectored) = match n[4] {
        1 => (Op::UringRead as u8, true),
        4 | 22 => (Op::UringRead as u8, false),
        2 => (Op::UringWrite as u8, true),
        5 | 23 => (Op::UringWrite as u8, false),
        3 => (Op::Fsync as u8, false),
        _ => return None,
    };
    Some(Raw::UringSubmit {
        pid: n[0] as u32,
        tid: n[1] as u32,
        ts_ns: n[2] as u64,
        req: n[3] as u64,
        code,
        fd: n[5] as i64,
        fixed_file: n[6] != 0,
        offset: n[7] as u64,
        len: n[8] as u64,
        vectored,
        done: None,
    })
}

fn aio(rest: &str) -> Option<Raw> {
    let n = nums::<7>(rest)?;
    // IOCB_CMD_PREAD 0, PWRITE 1, FSYNC 2, FDSYNC 3, PREADV 7, PWRITEV 8.
    let code = match n[3] {
        0 | 7 => Op::AioRead as u8,
        1 | 8 => Op::AioWrite as u8,
        2 => Op::Fsync as u8,
        3 => Op::Fdatasync as u8,
        _ => return None,
    };
    let vectored = matches!(n[3], 7 | 8);
    Some(Raw::Fd(FdCall {
        code,
        pid: n[0] as u32,
        tid: n[1] as u32,
        ts_ns: n[2] as u64,
        dur_ns: 0,
        fd: n[4] as i64,
        offset: n[5] as i64,
        len: if vectored { 0 } else { n[6] as u64 },
        ret: if vectored { 0 } else { n[6] as i64 },
        flags: 0,
    }))
}

/// The kernel's `dev_t` (major << 20 | minor) as `stat`'s `st_dev`.
pub fn user_dev(k: u64) -> u64 {
    let (major, minor) = (k >> 20, k & 0xfffff);
    ((major & 0xfff) << 8) | (minor & 0xff) | ((minor & !0xff) << 12) | ((major & !0xfff) << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_into_events() {
        let e = parse("E 3 10 11 500 20 3 4096 4096 4096 0").unwrap();
        assert!(matches!(
            e,
            Raw::Fd(FdCall {
                code: 3,
                fd: 3,
                offset: 4096,
                len: 4096,
                ret: 4096,
                ..
            })
        ));
        let p = parse("P 22 10 11 500 20 4294967196 16384 3").unwrap();
        assert!(matches!(
            &p,
            Raw::Path(PathCall {
                flags: 16384,
                dirfd: -100,
                ts_ns: 500,
                ..
            })
        ));
        assert_eq!(
            entry_path("O 11 500 4294967196 /tmp/a b"),
            Some((false, 11, 500, -100, "/tmp/a b".into()))
        );
        assert_eq!(
            entry_path("N 11 500 3 /tmp/new"),
            Some((true, 11, 500, 3, "/tmp/new".into()))
        );
        assert!(parse("F 1 2 3 264241152 77 5 1 2").is_some());
        assert_eq!(parse("Z 1"), None);
        assert_eq!(parse("E 1 2"), None);
        // 252:0 in the kernel's encoding is 0xfc00 to stat.
        assert_eq!(user_dev(252 << 20), 0xfc00);
    }

    #[test]
    fn the_program_names_every_call() {
        let p = program();
        for (name, ..) in FD_CALLS.iter().chain(PATH_CALLS) {
            assert!(p.contains(&format!("sys_exit_{name} ")), "{name}");
        }
    }
}

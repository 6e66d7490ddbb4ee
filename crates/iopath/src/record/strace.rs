//! The fallback backend: `strace -f` (Debian's package), for a user who
//! is not root or a kernel without eBPF. It sees system calls only: no
//! page faults on mappings, no io_uring submissions (only
//! `io_uring_enter`), no libaio iocbs; the trace's header says so
//! ([`BLIND_SPOTS`]). strace writes to a file (`-o`), read back line by
//! line when the command has ended, so memory stays bounded.
//!
//! strace's `-f` lines name threads, not processes: a `clone` with
//! `CLONE_THREAD` makes a thread of its caller's process, any other a new
//! process whose descriptors are a copy.

use std::collections::HashMap;

use super::raw::{FdCall, PathCall, Raw, DUP, LEN_FROM_RESULT, LSEEK};
use crate::trace::{BlindSpot, Op};

/// What strace cannot see.
pub const BLIND_SPOTS: &[BlindSpot] = &[
    BlindSpot::MmapFaults,
    BlindSpot::IoUringOps,
    BlindSpot::AioOps,
];

/// The calls strace is asked to trace.
pub const CALLS: &str = "read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2,\
fsync,fdatasync,sync_file_range,fallocate,ftruncate,close,fstat,lseek,dup,dup2,dup3,fcntl,mmap,\
open,openat,openat2,creat,stat,lstat,newfstatat,statx,unlink,unlinkat,rename,renameat,renameat2,\
clone,clone3,fork,vfork";

/// strace's arguments before `-- CMD`.
pub fn args(out: &std::path::Path) -> Vec<std::ffi::OsString> {
    let mut a: Vec<std::ffi::OsString> = [
        "-f",
        "-qq",
        "-X",
        "raw",
        "-s",
        "0",
        "-T",
        "--absolute-timestamps=format:unix,precision:ns",
        "-e",
    ]
    .iter()
    .map(Into::into)
    .collect();
    a.push(format!("trace={CALLS}").into());
    a.push("-o".into());
    a.push(out.into());
    a
}

/// A call and the paths it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub raw: Raw,
    pub path: Option<String>,
    pub path2: Option<String>,
}

/// Reads strace's lines, joining the `<unfinished ...>` halves.
#[derive(Debug, Default)]
pub struct Parser {
    unfinished: HashMap<u32, String>,
    tgid: HashMap<u32, u32>,
}

impl Parser {
    pub fn line(&mut self, line: &str) -> Option<Parsed> {
        let (tid, rest) = line.split_once(' ')?;
        let tid: u32 = tid.parse().ok()?;
        // strace pads the pid column (`7205  1795746983.16 ...`).
        let (ts, call) = rest.trim_start().split_once(' ')?;
        let ts_ns = unix_ns(ts)?;
        let pid = *self.tgid.entry(tid).or_insert(tid);
        if let Some(text) = call.strip_suffix(" <unfinished ...>") {
            if self.unfinished.len() < 1 << 16 {
                self.unfinished.insert(tid, format!("{ts} {text}"));
            }
            return None;
        }
        if let Some(code) = call
            .strip_prefix("+++ exited with ")
            .or(call.strip_prefix("+++ killed by "))
        {
            let _ = code;
            self.tgid.remove(&tid);
            return (pid == tid).then_some(Parsed {
                raw: Raw::Exit { pid, ts_ns },
                path: None,
                path2: None,
            });
        }
        let joined;
        let (ts_ns, call) = match call.strip_prefix("<... ") {
            Some(tail) => {
                let (_, after) = tail.split_once(" resumed>")?;
                let head = self.unfinished.remove(&tid)?;
                let (ts, text) = head.split_once(' ')?;
                joined = format!("{text}{after}");
                (unix_ns(ts)?, joined.as_str())
            }
            None => (ts_ns, call),
        };
        self.call(pid, tid, ts_ns, call)
    }

    fn call(&mut self, pid: u32, tid: u32, ts_ns: u64, text: &str) -> Option<Parsed> {
        let open = text.find('(')?;
        let name = &text[..open];
        // `close(3)     = 0 <0.000007>`: strace pads before the `=`.
        let eq = text.rfind(" = ")?;
        let inner = text[..eq].trim_end().strip_suffix(')')?;
        let args = split_args(inner.get(open + 1..)?);
        let (ret, dur_ns) = result(&text[eq + 3..]);
        let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        let num = |i: usize| number(arg(i));
        let fd_call = |code: u8, fd: i64, offset: i64, len: u64, flags: u64| {
            Raw::Fd(FdCall {
                code,
                pid,
                tid,
                ts_ns,
                dur_ns,
                fd,
                offset,
                len,
                ret,
                flags,
            })
        };
        let raw = match name {
            "clone" | "clone3" | "fork" | "vfork" => {
                return self.clone_call(pid, tid, ts_ns, text, ret)
            }
            "read" | "write" | "pread64" | "pwrite64" => {
                let code = [Op::Read, Op::Write, Op::Pread, Op::Pwrite][[
                    "read", "write", "pread64", "pwrite64",
                ]
                .iter()
                .position(|n| *n == name)?];
                let offset = if name.starts_with('p') { num(3) } else { -1 };
                fd_call(code as u8, num(0), offset, num(2) as u64, 0)
            }
            _ if vectored(name).is_some() => {
                let (op, positioned) = vectored(name)?;
                let offset = if positioned { num(3) } else { -1 };
                fd_call(op as u8, num(0), offset, LEN_FROM_RESULT, num(4) as u64)
            }
            "fsync" => fd_call(Op::Fsync as u8, num(0), 0, 0, 0),
            "fdatasync" => fd_call(Op::Fdatasync as u8, num(0), 0, 0, 0),
            "sync_file_range" => fd_call(
                Op::SyncFileRange as u8,
                num(0),
                num(1),
                num(2) as u64,
                num(3) as u64,
            ),
            "fallocate" => fd_call(
                Op::Fallocate as u8,
                num(0),
                num(2),
                num(3) as u64,
                num(1) as u64,
            ),
            "ftruncate" => fd_call(Op::Ftruncate as u8, num(0), 0, num(1) as u64, 0),
            "close" => fd_call(Op::Close as u8, num(0), 0, 0, 0),
            "fstat" => fd_call(Op::Stat as u8, num(0), 0, 0, 0),
            "lseek" => fd_call(LSEEK, num(0), num(1), 0, 0),
            "dup" | "dup2" | "dup3" => fd_call(DUP, num(0), 0, 0, 0),
            "fcntl" if matches!(num(1), 0 | 0x406) => fd_call(DUP, num(0), 0, 0, 0),
            "mmap" if num(4) >= 0 => {
                let flags = (num(2) as u64) | ((num(3) as u64) << 8);
                fd_call(Op::Mmap as u8, num(4), num(5), num(1) as u64, flags)
            }
            _ => return self.path_call(pid, tid, ts_ns, dur_ns, ret, name, &args),
        };
        Some(Parsed {
            raw,
            path: None,
            path2: None,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn path_call(
        &self,
        pid: u32,
        tid: u32,
        ts_ns: u64,
        dur_ns: u64,
        ret: i64,
        name: &str,
        a: &[String],
    ) -> Option<Parsed> {
        let s = |i: usize| a.get(i).and_then(|x| unquote(x));
        let n = |i: usize| a.get(i).map(|x| number(x)).unwrap_or(0);
        // (code, dirfd, path, flags, new name)
        let (code, dirfd, path, flags, path2) = match name {
            "open" => (Op::Open, -100, s(0), n(1), None),
            "openat" => (Op::Open, n(0), s(1), n(2), None),
            "openat2" => (Op::Open, n(0), s(1), 0, None),
            "creat" => (Op::Open, -100, s(0), 0x241, None),
            "stat" | "lstat" => (Op::Stat, -100, s(0), 0, None),
            "newfstatat" => (Op::Stat, n(0), s(1), n(3), None),
            "statx" => (Op::Stat, n(0), s(1), n(2), None),
            "unlink" => (Op::Unlink, -100, s(0), 0, None),
            "unlinkat" => (Op::Unlink, n(0), s(1), n(2), None),
            "rename" => (Op::Rename, -100, s(0), 0, s(1)),
            "renameat" => (Op::Rename, n(0), s(1), 0, s(3)),
            "renameat2" => (Op::Rename, n(0), s(1), n(4), s(3)),
            _ => return None,
        };
        let raw = Raw::Path(PathCall {
            code: code as u8,
            pid,
            tid,
            ts_ns,
            dur_ns,
            dirfd,
            flags: flags as u64,
            ret,
            path: String::new(),
            path2: None,
        });
        Some(Parsed {
            raw,
            path: Some(path.unwrap_or_default()),
            path2,
        })
    }

    fn clone_call(
        &mut self,
        pid: u32,
        _tid: u32,
        ts_ns: u64,
        text: &str,
        ret: i64,
    ) -> Option<Parsed> {
        let child = u32::try_from(ret).ok().filter(|&c| c > 0)?;
        // CLONE_THREAD (0x10000): a thread of the caller's process.
        let flags = text
            .split_once("flags=")
            .map(|(_, f)| number(f.split([',', '}', ')']).next().unwrap_or("")))
            .unwrap_or(0);
        if flags & 0x10000 != 0 {
            self.tgid.insert(child, pid);
            return None;
        }
        self.tgid.insert(child, child);
        Some(Parsed {
            raw: Raw::Fork {
                parent: pid,
                child,
                ts_ns,
            },
            path: None,
            path2: None,
        })
    }
}

/// A vectored call's op, and whether it has an offset (its bytes are its
/// result: the iovecs are not printed).
fn vectored(name: &str) -> Option<(Op, bool)> {
    Some(match name {
        "readv" => (Op::Readv, false),
        "writev" => (Op::Writev, false),
        "preadv" => (Op::Preadv, true),
        "pwritev" => (Op::Pwritev, true),
        "preadv2" => (Op::Preadv2, true),
        "pwritev2" => (Op::Pwritev2, true),
        _ => return None,
    })
}

/// `1795745524.809711733` as ns.
fn unix_ns(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    let mut ns: u64 = frac.get(..9.min(frac.len()))?.parse().ok()?;
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(ns)
}

/// `= 4096 <0.000012>` or `= -1 ENOENT (No such file) <0.000008>`:
/// (result, duration ns).
fn result(s: &str) -> (i64, u64) {
    let mut words = s.split_whitespace();
    let first = words.next().unwrap_or("");
    let mut ret = number(first);
    let dur = s
        .rfind('<')
        .and_then(|i| s[i + 1..].strip_suffix('>'))
        .and_then(unix_ns)
        .unwrap_or(0);
    if ret == -1 {
        if let Some(name) = words.next() {
            ret = -errno(name);
        }
    }
    (ret, dur)
}

fn errno(name: &str) -> i64 {
    const NAMES: &[&str] = &[
        "", "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF",
        "ECHILD", "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV",
        "ENODEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG",
        "ENOSPC", "ESPIPE", "EROFS",
    ];
    NAMES
        .iter()
        .position(|n| *n == name)
        .map_or(1, |i| i as i64)
}

/// A number as strace prints it raw: decimal, `0x` hex, `0` octal; else 0.
fn number(s: &str) -> i64 {
    let s = s.trim();
    let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
    let v = if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse::<u64>().ok()
    };
    let v = v.unwrap_or(0) as i64;
    if neg {
        -v
    } else {
        v
    }
}

/// Top-level arguments, split at commas outside quotes and brackets.
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut depth, mut quoted, mut escaped) = (0i32, false, false);
    for c in s.chars() {
        if quoted {
            cur.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// A C string as strace quotes it (`"a\x20b"`), unescaped; `None` for an
/// argument that is not a string.
fn unquote(s: &str) -> Option<String> {
    let inner = s.strip_prefix('"')?;
    let inner = inner.strip_suffix("\"...").or(inner.strip_suffix('"'))?;
    let mut bytes = Vec::new();
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'v') => bytes.push(0x0b),
            Some(b'f') => bytes.push(0x0c),
            Some(b'x') => {
                let hex: String = (0..2).filter_map(|_| it.next().map(char::from)).collect();
                bytes.push(u8::from_str_radix(&hex, 16).unwrap_or(b'?'));
            }
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match it.peek() {
                        Some(&n @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(n - b'0');
                            it.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strace_lines_become_calls() {
        let mut p = Parser::default();
        let got = p
            .line(
                "15686 1795745524.814120264 openat(-100, \"/tmp/a\\x20b\", 0x84000) = 3 <0.000013>",
            )
            .unwrap();
        assert_eq!(got.path.as_deref(), Some("/tmp/a b"));
        assert!(matches!(
            got.raw,
            Raw::Path(PathCall {
                code: 22,
                dirfd: -100,
                flags: 0x84000,
                ret: 3,
                dur_ns: 13000,
                ..
            })
        ));
        let got = p
            .line("15686 1795745524.9 pread64(3, \"\"..., 4096, 8192) = 4096 <0.000010>")
            .unwrap();
        assert!(matches!(
            got.raw,
            Raw::Fd(FdCall {
                code: 3,
                fd: 3,
                offset: 8192,
                len: 4096,
                ret: 4096,
                ..
            })
        ));
        let err = p.line("15686 1795745524.9 pread64(3, 0x7f, 3, 0) = -1 EINVAL (Invalid argument) <0.000311>").unwrap();
        assert!(matches!(err.raw, Raw::Fd(FdCall { ret: -22, .. })));
        assert!(p
            .line("15687 1795745525.1 read(5,  <unfinished ...>")
            .is_none());
        let resumed = p
            .line("15687 1795745525.3 <... read resumed>\"\"..., 100) = 100 <0.2>")
            .unwrap();
        assert!(matches!(
            resumed.raw,
            Raw::Fd(FdCall {
                code: 1,
                fd: 5,
                len: 100,
                ts_ns: 1795745525100000000,
                ..
            })
        ));
        let t =
            p.line("15686 1795745526.0 clone3({flags=0x3d0f00, exit_signal=0}, 88) = 15690 <0.1>");
        assert!(t.is_none());
        let f = p.line("15686 1795745526.0 clone(child_stack=0, flags=0x1200011, child_tidptr=0x7f) = 15691 <0.1>").unwrap();
        assert!(matches!(
            f.raw,
            Raw::Fork {
                parent: 15686,
                child: 15691,
                ..
            }
        ));
        // A thread's calls are its process's (descriptors are shared).
        let th = p.line("15690 1795745527.0 close(3)     = 0 <0.1>").unwrap();
        assert!(matches!(
            th.raw,
            Raw::Fd(FdCall {
                pid: 15686,
                tid: 15690,
                ..
            })
        ));
        assert!(p.line("garbage").is_none());
    }
}

//! Garbage in: an error or a result, never a panic.

use super::*;

/// xorshift64*: enough randomness, no dependency, same sequence each run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

const TOKENS: &[&str] = &[
    "[",
    "]",
    "[global]",
    "[j]",
    "=",
    " ",
    "\t",
    "\r",
    ";",
    "#",
    "include ",
    "include=",
    "${",
    "}",
    "${IOPATH_FIO_DIR}",
    "${NOPE}",
    "$",
    "$ncpus",
    "$pagesize",
    "$mb_memory",
    "$HOME",
    "(",
    ")",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    ",",
    ":",
    ".",
    "\\",
    "'",
    "0",
    "1",
    "7",
    "0x",
    "ff",
    "4k",
    "1m",
    "2g",
    "kib",
    "ki",
    "%",
    "ms",
    "us",
    "s",
    "m",
    "h",
    "sec",
    "bs",
    "rw",
    "read",
    "randrw",
    "write:4k",
    "randread:8",
    "iodepth",
    "numjobs",
    "size",
    "runtime",
    "direct",
    "buffered",
    "ioengine",
    "io_uring",
    "libaio",
    "fixedbufs",
    "hipri",
    "filename",
    "a:b",
    "stonewall",
    "time_based",
    "kb_base",
    "1000",
    "name",
    "description",
    "é",
    "\u{0}",
    "日本",
    "99999999999999999999999",
    "((((((((",
    "))))",
    "-1",
    "common.inc",
    "include/depth.inc",
];

const VALUES: &[&str] = &[
    "",
    " ",
    "0",
    "1",
    "2",
    "-1",
    "4k",
    "4k,8k",
    ",",
    ",,",
    "4k-8k",
    "8k:4k",
    "1.5",
    "0x",
    "0x1f",
    "50%",
    "101%",
    "(",
    "(4k*2)",
    "(1-",
    "(((1)))",
    "1/0",
    "k",
    "kib",
    "1ki",
    "999999999999p",
    "read",
    "randread:0",
    "write:",
    ":",
    "a::b",
    "\\:",
    "all",
    "bind:",
    "prefer:0-1",
    "0-",
    "-",
    "1z",
    "1sec",
    "10m",
    "1d",
    "$ncpus*$ncpus",
    "${IOPATH_FIO_SIZE}",
    "é",
    "1\u{0}",
];

#[test]
fn random_files_never_panic() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let path = fixtures().join("garbage.fio");
    let context = ctx(&FIXTURE_ENV);
    let (mut oks, mut errs) = (0, 0);
    for _ in 0..4000 {
        // Mostly plausible lines (so that many files parse), some noise.
        let mut text = String::from(if rng.below(8) == 0 { "" } else { "[j]\n" });
        let lines = 1 + rng.below(10);
        for _ in 0..lines {
            match rng.below(6) {
                0 | 1 => {
                    for _ in 0..1 + rng.below(7) {
                        text.push_str(rng.pick(TOKENS));
                    }
                }
                2 => text.push_str(rng.pick(&["[global]", "[a]", "[b]", "; c", ""])),
                _ => {
                    text.push_str(rng.pick(KEYS));
                    text.push_str(rng.pick(&["=", "=", " = ", "", "=="]));
                    text.push_str(rng.pick(VALUES));
                    text.push_str(rng.pick(&["", "", " ; comment", "#x"]));
                }
            }
            text.push('\n');
        }
        match crate::import::fio::parse_str(&text, &path, &context) {
            Ok(f) => {
                oks += 1;
                let _ = f.dump();
                let groups = f.groups();
                assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), f.jobs.len());
            }
            Err(e) => {
                errs += 1;
                assert!(e.at.line as usize <= lines + 50, "{e}");
                assert!(!e.to_string().is_empty());
            }
        }
    }
    // Both outcomes were exercised, so the loop tested something.
    assert!(oks > 400 && errs > 400, "ok {oks}, errors {errs}");
}

const KEYS: &[&str] = &[
    "name",
    "description",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bsrange",
    "iodepth",
    "numjobs",
    "size",
    "filesize",
    "io_size",
    "io_limit",
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "direct",
    "buffered",
    "ioengine",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "hipri",
    "rwmixread",
    "rwmixwrite",
    "filename",
    "directory",
    "fsync",
    "fdatasync",
    "end_fsync",
    "fsync_on_close",
    "sync",
    "invalidate",
    "randrepeat",
    "randseed",
    "cpus_allowed",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "zero_buffers",
    "refill_buffers",
    "buffer_compress_percentage",
    "verify",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "group_reporting",
    "kb_base",
    "thread",
    "include",
];

#[test]
fn every_typed_option_with_odd_values_never_panics() {
    let mut rng = Rng(42);
    let mut refused = 0;
    for key in KEYS {
        for v in VALUES {
            for section in ["global", "j"] {
                let engine = if rng.below(2) == 0 {
                    "ioengine=io_uring\n"
                } else {
                    ""
                };
                let text = format!("[{section}]\n{engine}{key}={v}\n[k]\n");
                if parse(&text).is_err() {
                    refused += 1;
                }
            }
            let _ = parse(&format!("[j]\n{key}\n"));
        }
    }
    assert!(refused > 0);
}

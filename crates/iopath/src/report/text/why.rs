//! Where the time goes, in words: the verdict's `why` ([`Cause`]), the
//! latency split's parts and sources ([`LatencySplit`]), and the legend of
//! the split's table.

use crate::model::units::fmt_ns;
use crate::result::cause::{Cause, SplitPart};
use crate::result::latency_split::{LatencySplit, SplitFallback, SplitSource, SplitWithheld};
use crate::result::verdict_facts::VerdictFact;
use crate::result::Entrant;

/// The verdict's `why` fact as a sentence; `None` for any other fact.
pub fn fact(f: &VerdictFact) -> Option<String> {
    let VerdictFact::Why {
        slower,
        leader,
        cause,
    } = f
    else {
        return None;
    };
    Some(format!("Why: {}.", cause_words(slower, leader, cause)))
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 && a / b >= 10.0 {
        format!("{:.0}x", a / b)
    } else if b > 0.0 {
        format!("{:.1}x", a / b)
    } else {
        "far".into()
    }
}

fn ns(v: f64) -> String {
    fmt_ns(v.max(0.0).round() as u64)
}

fn num(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// What a part holds, as "waits longer ___".
pub fn part_where(p: SplitPart) -> &'static str {
    match p {
        SplitPart::Submission => "in submission (the call to the block layer)",
        SplitPart::Queue => "in the block layer's queue",
        SplitPart::Device => "on the device",
        SplitPart::Completion => "in completion (back to the program)",
        SplitPart::Cached => "in calls the page cache served",
        SplitPart::Unmatched => "in calls whose block request the tracer could not tie to them",
        SplitPart::Entry => "on its calls' way into the kernel and back",
        SplitPart::Runnable => "waiting for a CPU",
    }
}

fn cause_words(slower: &Entrant, leader: &Entrant, c: &Cause) -> String {
    match *c {
        Cause::Part {
            part,
            slower_ns,
            leader_ns,
        } => format!(
            "{slower} waits {} longer {} than {leader} ({} against {} per I/O)",
            ratio(slower_ns, leader_ns),
            part_where(part),
            ns(slower_ns),
            ns(leader_ns)
        ),
        Cause::MajorFaults {
            slower: a,
            leader: b,
        } => format!(
            "{slower} takes {} major page faults per 4 KiB ({leader}: {})",
            num(a),
            num(b)
        ),
        Cause::ReadAhead {
            slower: a,
            leader: b,
        } => format!(
            "{slower}'s read-ahead fetched {}x the bytes asked ({leader}: {}x)",
            num(a),
            num(b)
        ),
        Cause::Copies {
            slower: a,
            leader: b,
        } => format!(
            "{slower} copies {} bytes between kernel and program per byte ({leader}: {})",
            num(a),
            num(b)
        ),
        Cause::ContextSwitches {
            slower: a,
            leader: b,
        } => format!(
            "{slower} waits (a voluntary context switch) {} times per I/O ({leader}: {})",
            num(a),
            num(b)
        ),
        Cause::SystemCalls {
            slower: a,
            leader: b,
        } => format!(
            "{slower} makes {} read/write calls per I/O ({leader}: {})",
            num(a),
            num(b)
        ),
        Cause::InFlight {
            slower: a,
            leader: b,
        } => format!(
            "{slower} kept {a} request{} in flight, {leader} {b}",
            if a == 1 { "" } else { "s" }
        ),
        Cause::Cpu {
            slower: a,
            leader: b,
        } => format!(
            "{slower} uses {} the CPU per I/O of {leader} ({} against {})",
            ratio(a, b),
            ns(a),
            ns(b)
        ),
    }
}

/// The source of a split, as the table's last column says it.
pub fn source(s: SplitSource, fallback: Option<SplitFallback>) -> String {
    match (s, fallback) {
        (SplitSource::Tracepoints, _) => "tracepoints".into(),
        (SplitSource::DiskStat, None) => "/sys/block".into(),
        (SplitSource::DiskStat, Some(f)) => format!("/sys/block: {}", fallback_words(f)),
    }
}

/// A split's source as the table says it, and why it is withheld where
/// it is.
pub fn shown_source(s: &LatencySplit) -> String {
    let source = source(s.source, s.fallback);
    match s.withheld {
        None => source,
        Some(w) => format!("{source}; withheld: {}", withheld_words(w)),
    }
}

/// Why a split's figures are not the case's.
pub fn withheld_words(w: SplitWithheld) -> &'static str {
    match w {
        SplitWithheld::OtherTraffic => "others' requests in the disk's averages",
        SplitWithheld::OwnTrafficUnknown => "whose requests the disk averaged is unknown",
        SplitWithheld::ExceedsMean => "its parts exceed the measured mean",
    }
}

/// Why the tracepoints asked for were not used.
pub fn fallback_words(f: SplitFallback) -> &'static str {
    match f {
        SplitFallback::NotRoot => "not root",
        SplitFallback::NoBpftrace => "no bpftrace",
        SplitFallback::TracerFailed => "bpftrace failed",
        SplitFallback::NoBlockDevice => "no block device",
        SplitFallback::TracerSilent => "bpftrace silent",
    }
}

/// The run's warning that `--latency-split` fell back: why, what stands
/// instead, and the next step.
pub fn fallback_sentence(f: SplitFallback) -> String {
    format!(
        "--latency-split was asked for but its tracepoints were not used ({}): the split \
         shown is the /sys/block averages, only where the disk's requests were the case's \
         own; {}",
        fallback_words(f),
        next_step(f)
    )
}

/// The one-screen view's line for a `--latency-split` that fell back:
/// the user asked for it and did not get it.
pub fn fallback_line(f: SplitFallback) -> String {
    format!(
        "--latency-split not traced ({}): {}",
        fallback_words(f),
        next_step(f)
    )
}

/// What to do to have the tracepoints.
fn next_step(f: SplitFallback) -> &'static str {
    match f {
        SplitFallback::NotRoot => "run as root to trace the requests",
        SplitFallback::NoBpftrace => "install bpftrace (apt-get install bpftrace) and run as root",
        SplitFallback::TracerFailed => {
            "check that `bpftrace -l 'tracepoint:block:*'` works as root (tracefs mounted, a \
             kernel with BPF)"
        }
        SplitFallback::NoBlockDevice => "put the target on a block device to have requests",
        SplitFallback::TracerSilent => {
            "bpftrace stopped answering during the run; run again on a quieter machine"
        }
    }
}

/// A column of the split's table in a few letters, for a table whose
/// whole headers do not fit ([`short_headers_key`] says them).
pub fn short_header(h: &str) -> &str {
    match h {
        "entry" => "ent",
        "submit" => "sub",
        "device" => "dev",
        "complete" => "compl",
        "unmatched" => "unmat",
        "runnable" => "run",
        "unaccounted" => "unacc",
        "source" => "src",
        other => other,
    }
}

/// The key of the shortened headers: `sub = submit, dev = device, ...`.
pub fn short_headers_key(headers: &[&str]) -> String {
    let pairs: Vec<String> = headers
        .iter()
        .filter(|h| short_header(h) != **h)
        .map(|h| format!("{} = {h}", short_header(h)))
        .collect();
    format!("{}.", pairs.join(", "))
}

/// A row of the split's table as a line, where no table fits: `direct
/// 4k N1: mean 110 us; submit 3.5 us, queue 2.8 us, ... (tracepoints)`.
/// `headers`: the table's (method, job and mean first, the source last);
/// a part not measured (`-`) is left out.
pub fn row_line(headers: &[&str], row: &[String]) -> String {
    let cell = |i: usize| row.get(i).map_or("", String::as_str);
    let last = headers.len().saturating_sub(1);
    let parts: Vec<String> = (3..last)
        .filter(|&i| cell(i) != "-" && !cell(i).is_empty())
        .map(|i| format!("{} {}", headers[i], cell(i)))
        .collect();
    let parts = if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    };
    format!(
        "{} {}: mean {}{parts} ({})",
        cell(0),
        cell(1),
        cell(2),
        cell(last)
    )
}

/// The check that the tracer timed what the kernel counts: a heading,
/// then a line per case: its block time per read request, traced and as
/// `/sys/block` averages it
/// ([`crate::report::latency_split::block_checks`]).
pub fn block_check(checks: &[(String, f64, f64)]) -> Vec<String> {
    let each = checks.iter().map(|(case, traced, counted)| {
        format!(
            "{case}: {} traced, {} counted ({:.2})",
            ns(*traced),
            ns(*counted),
            traced / counted
        )
    });
    std::iter::once(
        "block layer per read request (queue and device, every read on the disk), traced \
         against /sys/block over the same repetitions:"
            .to_string(),
    )
    .chain(each)
    .collect()
}

/// What the CPU bars hold, said once under them.
pub const CPU_KIND_LEGEND: &str = "the tables' CPU per I/O by kind, each share pooled over the \
    repetitions: user and system = the workers' time in user space and in the kernel (split as \
    getrusage splits it, in 4 ms ticks; workers, whole, where fewer than 25 ticks counted it); \
    helper threads = io_uring's SQPOLL and io-wq threads, threadpool's and tokio's pool threads; \
    write-back (estimate) = the kernel's deferred work charged to a case that writes through the \
    page cache, its share of the CPU per I/O (the costs table's kernel~ is the estimate whether \
    charged or not): the system's kernel threads over the repetition less an idle baseline, \
    other tenants' kernel work included (docs/methodology.md).";

/// What the split's columns hold, said once under its tables.
pub const LEGEND: &str = "each part is its share of the mean I/O, and a row adds up to its mean: \
    submit, queue, device and complete weighed by the calls that made a request (without calls, \
    by requests per I/O), cached and unmatched by their own calls. entry = a read/write \
    call's way into the kernel and back out that its tracepoints do not see (the switch, and \
    the tracer's own work there), per I/O (a call's, times calls per I/O), measured after each \
    repetition by calls that \
    move nothing, timed by iopath's clock and the tracepoints' at once (on each CPU the \
    median call, the CPUs weighed by the case's calls on each: a typical call's cost, not a \
    strict bound on a workload's); submit = \
    a read/write call's entry tracepoint (io_uring: the request handed to the ring) to its \
    first block request queued; queue = queued in the block layer to issued to the driver; device = \
    issued to the last completion; complete = completion back to the call's return (io_uring: \
    to the request reaped from the ring); cached = a \
    call that made no block request (the page cache served it); unmatched = a call \
    whose request the tracer could not tie to it, or an O_DIRECT call that made none \
    (not a cache hit); runnable = waiting for a CPU after being preempted outside a call \
    (most often on its return), per I/O; unaccounted = the measured mean less the parts \
    (the program's own loop, and what the calls' way in and out costs beyond the calibration; \
    with /sys/block averages, everything outside the block layer). \
    --latency-split traces them (bpftrace, as root): each request then passes several probes, \
    so a traced run's rates are slower than an untraced one's (uring at depth 32 on a loop \
    device, 2 CPUs: a third of its 300k IOPS): compare methods within it, take rates from a \
    run without it. \
    Without it device is the /sys/block \
    average of queue and device together, shown only where the disk's requests were the \
    case's own (withheld where others used the disk, or where the parts exceed the mean). \
    - = not measured for the method (aio and mmap make no call per request; io_uring's ring \
    needs its tracepoints). docs/methodology.md says what \
    each part holds at depth 1 and at depth N.";

#[cfg(test)]
mod tests {
    use super::*;

    /// Each cause's sentence, and a part's.
    #[test]
    fn each_cause_is_worded() {
        let why = |cause| VerdictFact::Why {
            slower: "direct".into(),
            leader: "uring".into(),
            cause,
        };
        let causes = [
            Cause::Part {
                part: SplitPart::Queue,
                slower_ns: 21_000.0,
                leader_ns: 10_000.0,
            },
            Cause::Part {
                part: SplitPart::Unmatched,
                slower_ns: 20_000.0,
                leader_ns: 0.0,
            },
            Cause::MajorFaults {
                slower: 1.02,
                leader: 0.0,
            },
            Cause::ReadAhead {
                slower: 3.0,
                leader: 1.0,
            },
            Cause::Copies {
                slower: 1.0,
                leader: 0.0,
            },
            Cause::ContextSwitches {
                slower: 2.0,
                leader: 1.0,
            },
            Cause::SystemCalls {
                slower: 2.0,
                leader: 1.0,
            },
            Cause::InFlight {
                slower: 1,
                leader: 32,
            },
            Cause::Cpu {
                slower: 1500.0,
                leader: 1000.0,
            },
        ];
        let text: Vec<String> = causes.into_iter().filter_map(|c| fact(&why(c))).collect();
        insta::assert_snapshot!(text.join("\n"));
        assert_eq!(fact(&VerdictFact::NoCallYet { leader: "x".into() }), None);
        assert_eq!(
            source(SplitSource::DiskStat, Some(SplitFallback::NoBpftrace)),
            "/sys/block: no bpftrace"
        );
    }
}

//! Command-line syntax only (clap derive). Meaning and validation live in
//! [`crate::plan`]; a parse error here exits with code 2, as clap does.

pub mod commands;
pub mod compare;
mod flags_spec;
pub mod record;
mod values;

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use iopath_io::data::DataMode;
use iopath_io::SyncPolicy;

use crate::model::words::{flag, word, RepTime, Span};
use crate::model::{CacheState, Pattern};
use values::{drift, duration, fail_above, file_layout, pct, size, PresetName};

/// `--methods`'s help: its default made from the plan's list
/// ([`crate::plan::default_methods_text`]).
fn methods_help() -> String {
    format!(
        "Methods to compare, comma-separated [default: {}]. A method named twice runs as two \
         arms of an A/A check (`direct,direct`: `direct` and `direct#2`). An access hint \
         follows a method after `+`: `mmap,mmap+random` runs mmap without and with \
         MADV_RANDOM (hints: random, sequential, willneed, noreuse, hugepage, populate; \
         `iopath methods` says which apply); `+hugebuf` gives the method huge-page I/O \
         buffers (`direct+hugebuf`, as --buffers huge).",
        crate::plan::default_methods_text()
    )
}

#[derive(Debug, Parser)]
#[command(
    name = "iopath",
    version,
    about = "Run one workload through every I/O path on one file, and say which path to use.",
    long_about = "Run one workload through every I/O path (buffered, O_DIRECT, mmap, io_uring, \
                  Linux AIO) on the same file, in one run, and compare bandwidth, IOPS and latency \
                  percentiles.\n\nWith no subcommand, `iopath` runs the default comparison in the \
                  current directory (same as `iopath run`).",
    after_help = "Examples:\n  iopath                                  default comparison in .\n  \
                  iopath run --dir /mnt/nvme --size 4G     on another file system\n  \
                  iopath run --methods uring,direct --patterns randread --qd 32\n  \
                  iopath run --repeat 10 --json base.json  fixed repetitions, saved\n  \
                  iopath run --replay app.trace            a recorded program through every path\n  \
                  iopath compare base.json new.json --fail-above 5\n  \
                  iopath probe                             what works here, and why not\n  \
                  iopath methods                           what each method is"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a comparison (the default when no subcommand is given).
    Run(Box<RunArgs>),
    /// Show which methods work on a directory's file system, and why not.
    Probe(ProbeArgs),
    /// One line per method: what it is and when to use it.
    Methods,
    /// Compare two results of `iopath run --json`: which cases got faster
    /// or slower, by how much, and whether that is real.
    Compare(CompareArgs),
    /// The seed experiments as one-command presets: list them, or
    /// `iopath presets show NAME` for the cases one runs.
    Presets(PresetsArgs),
    /// Turn a saved result (`iopath run --json FILE`) into an HTML report,
    /// CSV, Markdown or PNG charts; with none of those, print its tables.
    Report(ReportArgs),
    /// Print a shell completion script: `iopath completions bash >
    /// /etc/bash_completion.d/iopath` (zsh: into a directory of $fpath as
    /// `_iopath`; fish: ~/.config/fish/completions/iopath.fish).
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `iopath man > /usr/local/share/man/man1/iopath.1`.
    Man,
    /// Print a fio job file as the equivalent iopath job file (TOML), to
    /// read or edit before `iopath run FILE.toml`.
    ImportFio(ImportFioArgs),
    /// Record a program's file I/O into a trace: `iopath record -o app.trace -- CMD ARGS`
    /// (docs/replay.md).
    Record(record::RecordArgs),
    /// Read a recorded trace: `show` it, import or export fio's iolog.
    Trace(record::TraceArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ImportFioArgs {
    /// The fio job file.
    #[arg(value_name = "JOB.fio")]
    pub file: PathBuf,

    /// Each job through its own engine only.
    #[arg(long)]
    pub only_fio_engine: bool,

    /// Leave out the options iopath does not map (listed as comments).
    #[arg(long)]
    pub ignore_unknown: bool,
}

impl ImportFioArgs {
    pub fn map_options(&self) -> crate::import::fio::map::MapOptions {
        crate::import::fio::map::MapOptions {
            only_own_engine: self.only_fio_engine,
            ignore_unknown: self.ignore_unknown,
        }
    }
}

/// The completion script for `shell`, for the whole command line.
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "iopath", &mut out);
    out
}

/// The manual page, in roff: the command, then every subcommand with its
/// synopsis, description and options.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    use clap::CommandFactory;
    use std::io::Write;
    let cmd = Cli::command();
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("iopath {}", sub.get_name());
        writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
        let sub = sub.clone().bin_name(name.clone()).display_name(name);
        let man = clap_mangen::Man::new(sub.clone());
        man.render_synopsis_section(&mut out)?;
        man.render_description_section(&mut out)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut out)?;
        }
        if sub.get_after_help().is_some() || sub.get_after_long_help().is_some() {
            man.render_extra_section(&mut out)?;
        }
    }
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// The groups of `run --help`, in the order they are shown.
const WORKLOAD: &str = "Workload";
const METHODS: &str = "Methods";
const REPETITIONS: &str = "Repetitions";
const OUTPUT: &str = "Output";
const PLACEMENT: &str = "Placement";
const SAFETY: &str = "Target and safety";

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// A job file (TOML, docs/job-files.md): its run settings and cases.
    ///
    /// Flags override its settings, and case flags (--methods, --bs, ...)
    /// every case of it. `iopath presets show NAME --toml` prints one to
    /// start from.
    #[arg(value_name = "JOB.toml", conflicts_with_all = ["preset", "fio"])]
    pub job: Option<PathBuf>,

    /// A fio job file: each job through its own engine and every other
    /// method.
    ///
    /// Jobs fio runs at the same time (no stonewall between them) run at
    /// the same time here too: one case per method, a stream per job, each
    /// stream's figures reported beside the group's. docs/fio-jobs.md says
    /// what maps and what is refused. Flags override it.
    #[arg(long, value_name = "JOB.fio", conflicts_with = "preset")]
    #[arg(help_heading = WORKLOAD)]
    pub fio: Option<PathBuf>,

    /// With --fio: run each job through its own engine only.
    #[arg(long, requires = "fio")]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub only_fio_engine: bool,

    /// With --fio: leave out the options iopath does not map, each named in
    /// the result's warnings (without it they are listed and refused).
    #[arg(long, requires = "fio")]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub ignore_unknown: bool,

    /// A trace (`iopath record`) through each method.
    ///
    /// The trace's threads and ops (`iopath record`, `trace import-fio`),
    /// on its files recreated in --dir and removed afterwards
    /// (docs/replay.md). Each method is a case; a repetition is one whole
    /// replay. Asynchronous methods keep in flight what each thread of the
    /// program did (its own depth), or --qd ops where the trace allows.
    #[arg(long, value_name = "TRACE", conflicts_with_all = record::REPLAY_CONFLICTS)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub replay: Option<PathBuf>,

    /// With --replay: `fast` (the default: no think time, the path's
    /// capacity), `recorded` (the recorded gaps kept), or a factor of the
    /// recorded gaps (`0.5`: twice as fast).
    #[arg(long, value_name = "fast|recorded|FACTOR", requires = "replay")]
    #[arg(value_parser = crate::plan::replay::ReplayTiming::parse)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub replay_timing: Option<crate::plan::replay::ReplayTiming>,

    /// Run a preset: one of the seed experiments (`iopath presets` lists
    /// them).
    ///
    /// Run settings (--size, --dir, --repeat, --time, ...) override
    /// the preset's; what its cases are cannot be changed.
    #[arg(long, value_name = "NAME", value_parser = PresetName, hide_possible_values = true)]
    #[arg(help_heading = WORKLOAD)]
    pub preset: Option<String>,

    /// Cases address only the first SIZE of the file (or N% of the
    /// machine's memory: `10%ram`), capped at the file size: random offsets
    /// fall within it, sequential passes cover it.
    #[arg(long, value_name = "SIZE|N%ram", value_parser = flag::<Span>)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub span: Option<Span>,

    /// The flags given on the command line (ids), so that a preset knows
    /// what the user set. Filled by [`parse`].
    #[arg(skip)]
    pub given: Vec<String>,

    /// Size of the test file [default: 1GiB].
    ///
    /// With a preset or job file
    /// that sets a cache limit, the limit scales with the file unless
    /// --cache-limit is given (dontcache: 256 MiB for 2 GiB, so 128 MiB at
    /// --size 1GiB).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    #[arg(help_heading = WORKLOAD)]
    pub size: Option<u64>,

    /// Methods to compare, comma-separated (`iopath methods` lists them);
    /// the long help, with the default and the opt-in ones, is
    /// `methods_help`, from the plan's own list.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = word::<crate::model::choice::MethodChoice>(), hide_possible_values = true)]
    #[arg(help = "Methods to compare, comma-separated (`iopath methods` lists them)", long_help = methods_help())]
    #[arg(help_heading = METHODS)]
    pub methods: Vec<crate::model::choice::MethodChoice>,

    /// Threads of the `threadpool` method's pool [default: 4, libuv's
    /// UV_THREADPOOL_SIZE; give --qd to get tokio's one thread per request
    /// in flight]. For `tokio`: the most threads of tokio's blocking pool
    /// (max_blocking_threads; tokio's own 512 when not given).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    #[arg(help_heading = METHODS, hide_short_help = true)]
    pub pool_threads: Option<u32>,

    /// What the I/O buffers are made of: pages (ordinary 4 KiB pages, never
    /// huge: what a program's malloc'ed buffer is, and fio's) or huge
    /// (transparent huge pages: a 64 KiB O_DIRECT request is one DMA
    /// segment, not sixteen; fio's --iomem=mmaphuge). `pages,huge` runs each
    /// method with both, side by side (`direct` and `direct+hugebuf`)
    /// [default: pages].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = word::<iopath_io::BufferBacking>())]
    #[arg(help_heading = METHODS, hide_short_help = true)]
    pub buffers: Vec<iopath_io::BufferBacking>,

    /// Open with O_NOATIME, as t/io_uring and fio on a device: reads skip the access time [default: off]
    #[arg(long, help_heading = METHODS, hide_short_help = true)]
    pub noatime: bool,

    /// Run a latency-sensitive neighbour beside every case: random 4 KiB
    /// buffered reads over a hot set that fits in the cache (a quarter of
    /// --cache-limit, at most 64 MiB), measured alone before each case and
    /// during it: its p50/p99 and page-cache hit ratio say what each
    /// method does to the service next to it (the cache-pollution preset).
    #[arg(long)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub neighbour: bool,

    /// Access patterns, comma-separated [default: read,write,randread,randwrite].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = word::<Pattern>())]
    #[arg(help_heading = WORKLOAD)]
    pub patterns: Vec<Pattern>,

    /// Block size of each request [default: 1M sequential, 4k random].
    #[arg(long, value_name = "SIZE", value_parser = size)]
    #[arg(help_heading = WORKLOAD)]
    pub bs: Option<u64>,

    /// Depth per thread, every method at it (no matching).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    #[arg(help_heading = WORKLOAD)]
    pub qd: Option<u32>,

    /// Worker threads per case, each with its own engine.
    ///
    /// Given with --concurrency, the threads an asynchronous method spreads
    /// its requests over; alone, every method runs that many threads.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    #[arg(help_heading = WORKLOAD)]
    pub threads: u32,

    /// Requests in flight [default: 1,32; seq 8MiB/bs]
    ///
    /// Each method keeps N requests in flight its own way: an asynchronous
    /// one from one thread at depth N (with --threads T: T threads at depth
    /// N/T), a synchronous one (buffered, direct, mmap) with N threads of
    /// one request each, threadpool with a pool of N. Without --qd,
    /// --threads or a job file, the run compares random patterns at 1 and
    /// 32 and sequential ones at 8 MiB / --bs (1 to 32); --qd or --threads
    /// alone run every method at that depth and thread count instead.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=1024))]
    #[arg(help_heading = WORKLOAD)]
    pub concurrency: Vec<u32>,

    /// Time limit of each repetition [default: 150ms], or `pass`.
    ///
    /// No limit by default when --io-size alone bounds a repetition;
    /// `pass`: no limit, each repetition one whole pass over the file (or
    /// its --touch amount).
    #[arg(long, value_name = "DURATION|pass", value_parser = flag::<RepTime>)]
    #[arg(help_heading = WORKLOAD)]
    pub time: Option<RepTime>,

    /// Bytes to transfer per repetition, all threads together [default:
    /// one pass over the file for sequential patterns]. `--touch` says the
    /// same for small random accesses: `--bs 8 --touch 8M` reads 8 MiB in
    /// 8-byte pieces (hmmap's RR).
    #[arg(long, visible_alias = "touch", value_name = "SIZE", value_parser = size)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub io_size: Option<u64>,

    /// Run each case exactly N measured repetitions [default: adaptive].
    ///
    /// Adaptive: see --ci-target and --max-time.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000),
          conflicts_with_all = ["ci_target", "max_time"])]
    #[arg(help_heading = REPETITIONS)]
    pub repeat: Option<u32>,

    /// Adaptive repetition: repeat a case until the 95% interval of its
    /// median throughput is within PCT of the median (at least 6
    /// repetitions, the fewest that give a 95% interval of a median). A job
    /// of several methods ignores the target until it has the rounds its
    /// verdict needs, when those fit (see --max-time).
    #[arg(long, value_name = "PCT", default_value = "3%", value_parser = pct)]
    #[arg(help_heading = REPETITIONS, hide_short_help = true)]
    pub ci_target: f64,

    /// Adaptive repetition: time budget of one case, warm-up included.
    ///
    /// The
    /// methods of a job share theirs: rounds stop before one that would not
    /// fit in the running methods' budgets, after at least 3. A job of
    /// several methods runs on to the rounds its verdict needs (6 for two
    /// methods, 9 for ten) when they are expected to end within twice its
    /// budget, so a job may take up to twice its budget, plus one round.
    #[arg(long, value_name = "DURATION", default_value = "1500ms", value_parser = duration)]
    #[arg(help_heading = REPETITIONS)]
    pub max_time: Duration,

    /// The whole run's time, set-up included [default: 52s]
    ///
    /// Adaptive repetition: the whole run's time, set-up included [default:
    /// 52s without a preset or --max-time]. Its jobs share it; each method
    /// gets the rounds a verdict needs (6), then methods clearly behind the
    /// leader stop and the rest goes to those still close to it. Without
    /// --time, repetitions are made short enough for the 6 rounds to fit.
    #[arg(long, value_name = "DURATION", value_parser = duration,
          conflicts_with_all = ["max_time", "repeat"])]
    #[arg(help_heading = REPETITIONS)]
    pub budget: Option<Duration>,

    /// Wall-clock cap of one case, all its repetitions together [default:
    /// none, or the preset's (hmmap: 45s); 0: none]. A case that reaches it
    /// stops: it keeps what it measured, and reports the fraction of the
    /// repetition done and the whole repetition's time extrapolated from it.
    /// A write's final flush (fsync of what the page cache took) is not cut
    /// and can pass the cap.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    #[arg(help_heading = REPETITIONS, hide_short_help = true)]
    pub case_timeout: Option<Duration>,

    /// Order of repetitions: interleaved (the methods of a job take turns,
    /// one repetition each per round, in an order shuffled afresh every
    /// round, so drift between cases is not credited to a method) or
    /// sequential (each case runs all its repetitions back to back).
    #[arg(long, value_name = "ORDER", default_value = "interleaved", value_parser = word::<crate::model::schedule::Schedule>())]
    #[arg(help_heading = REPETITIONS, hide_short_help = true)]
    pub schedule: crate::model::schedule::Schedule,

    /// Seed of the rounds' shuffled orders [default: drawn at random and
    /// recorded in the JSON, so that identical runs do not share one order;
    /// give it to repeat a run's orders].
    #[arg(long, value_name = "N")]
    #[arg(help_heading = REPETITIONS, hide_short_help = true)]
    pub order_seed: Option<u64>,

    /// Warm-up repetitions per case, run and recorded first but not counted.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1000))]
    #[arg(help_heading = REPETITIONS, hide_short_help = true)]
    pub warmup: u32,

    /// Length of the intervals of each repetition's throughput time series
    /// (10 ms: about 15 points in a default 150 ms repetition).
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = duration)]
    #[arg(help_heading = REPETITIONS, hide_short_help = true)]
    pub interval: Duration,

    /// When writes are made durable: none, end (fsync then close, timed),
    /// dsync (O_DSYNC), osync (O_SYNC: data and metadata), each (fsync after
    /// every write).
    #[arg(long, value_name = "POLICY", default_value = "end", value_parser = word::<SyncPolicy>())]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub sync: SyncPolicy,

    /// Also sync every N writes of each thread, after its writes in flight
    /// complete: N or N:fsync, N:fdatasync (fio's fsync=N, fdatasync=N).
    #[arg(long, value_name = "N[:CALL]", value_parser = word::<iopath_io::SyncEvery>())]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub sync_every: Option<iopath_io::SyncEvery>,

    /// Page-cache state before each repetition.
    ///
    /// cold: write back and drop the file's cached pages; warm: read the
    /// file once first; as-is.
    #[arg(long, value_name = "STATE", default_value = "cold", value_parser = word::<CacheState>())]
    #[arg(help_heading = WORKLOAD)]
    pub cache: CacheState,

    /// With --cache cold, also drop every clean page cache in the system
    /// (`sync`; `echo 3 > /proc/sys/vm/drop_caches`) before each repetition.
    /// Root only; it slows the whole machine for a moment.
    #[arg(long)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub drop_caches: bool,

    /// Data written: random (incompressible, the default), zeros, or
    /// compress:N (N% of every sector zeros).
    #[arg(long, value_name = "KIND", default_value = "random", value_parser = flag::<DataMode>)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub data: DataMode,

    /// Measure a freshly truncated (sparse) file: no prefill, and the file is
    /// truncated again before every repetition (NIOBench's "sync+sparse").
    /// Reads of holes never reach the device.
    #[arg(long)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub sparse: bool,

    /// Verify the data: every written block carries a header (offset, seed,
    /// pass, sequence) and a CRC-32C; reads check every block, and write
    /// cases read their blocks back after each repetition (outside its
    /// timing). The first bad block fails the case (exit 1).
    #[arg(long)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub verify: bool,

    /// Read percentage for randrw.
    #[arg(long, value_name = "PCT", default_value_t = 50, value_parser = clap::value_parser!(u8).range(0..=100))]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub rwmix: u8,

    /// Seed of the random offsets and data.
    #[arg(long, value_name = "N", default_value_t = 1)]
    #[arg(help_heading = WORKLOAD, hide_short_help = true)]
    pub seed: u64,

    /// Write the results as JSON to FILE, or `-` for stdout.
    ///
    /// A file is rewritten after every round; on stdout (`-` or
    /// /dev/stdout) nothing else is printed there; a descriptor
    /// (/dev/fd/N) gets it once at the end.
    #[arg(long, value_name = "FILE")]
    #[arg(help_heading = OUTPUT)]
    pub json: Option<PathBuf>,

    /// What --json writes: iopath's document, or fio's JSON shape (one job
    /// per case, for fio-plot and fio scripts; docs/json-schema.md).
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "iopath",
        requires = "json"
    )]
    #[arg(help_heading = OUTPUT, hide_short_help = true)]
    pub json_format: crate::report::json::JsonFormat,

    /// Reports written at the end of the run (and after Ctrl-C, with the
    /// cases finished so far).
    #[command(flatten, next_help_heading = OUTPUT)]
    pub reports: crate::report::Outputs,

    /// No progress display.
    #[arg(long, short)]
    #[arg(help_heading = OUTPUT)]
    pub quiet: bool,

    /// Take each request's time apart (submission, block-layer queue,
    /// device, completion) through block tracepoints: bpftrace, as root;
    /// without them the /sys/block averages (--explain shows both).
    #[arg(long)]
    #[arg(help_heading = OUTPUT, hide_short_help = true)]
    pub latency_split: bool,

    /// Under mpirun (built with --features mpi): per-rank (a file each), shared
    /// (one file, a segment each) or shared-strided (blocks interleaved). docs/mpi.md
    #[arg(long, value_name = "LAYOUT", value_parser = file_layout)]
    #[arg(help_heading = PLACEMENT, hide_short_help = true)]
    pub layout: Option<crate::result::mpi::FileLayout>,

    /// Run the cases inside a memory cgroup capped at SIZE (page cache
    /// included), made for the run and removed after it: data much larger
    /// than the memory a program may use, without a huge file. Every case,
    /// unless the preset or job file marks some `cache_limited` (hmmap).
    #[arg(long, value_name = "SIZE", value_parser = size)]
    #[arg(help_heading = PLACEMENT, hide_short_help = true)]
    pub cache_limit: Option<u64>,

    /// Budget of the user-space caches (`ucache`'s pages, `uffd`'s resident
    /// pages); refused before the run when more than half the available
    /// memory [default: --cache-limit, else 64 MiB].
    #[arg(long, value_name = "SIZE", value_parser = size)]
    #[arg(help_heading = METHODS, hide_short_help = true)]
    pub ucache_size: Option<u64>,

    /// Page size of `ucache` (a multiple of the O_DIRECT alignment).
    #[arg(long, value_name = "SIZE", default_value = "4k", value_parser = size)]
    #[arg(help_heading = METHODS, hide_short_help = true)]
    pub ucache_page: u64,

    /// Pin workers to these CPUs, round-robin (worker i on the i-th CPU of
    /// the list): `0-3,8`.
    #[arg(long, value_name = "LIST")]
    #[arg(help_heading = PLACEMENT, hide_short_help = true)]
    pub cpus: Option<String>,

    /// Run workers on the CPUs of NUMA node N.
    #[arg(long, value_name = "N")]
    #[arg(help_heading = PLACEMENT, hide_short_help = true)]
    pub numa_node: Option<u32>,

    /// Place the I/O buffers on NUMA node N (mbind; checked page by page).
    #[arg(long, value_name = "N")]
    #[arg(help_heading = PLACEMENT, hide_short_help = true)]
    pub mem_node: Option<u32>,

    /// How --mem-node places buffers: bind, preferred, interleave, or local
    /// (the node of the CPU that touches them) [default with --mem-node:
    /// bind].
    #[arg(long, value_name = "POLICY", value_parser = word::<iopath_io::numa::MemPolicyMode>())]
    #[arg(help_heading = PLACEMENT, hide_short_help = true)]
    pub mem_policy: Option<iopath_io::numa::MemPolicyMode>,

    /// Bind io_uring's SQPOLL kernel thread to CPU N (uring-sqpoll).
    #[arg(long, value_name = "N")]
    #[arg(help_heading = PLACEMENT, hide_short_help = true)]
    pub sqpoll_cpu: Option<u32>,

    /// Directory for iopath's temporary test file [default: current directory].
    #[arg(long, value_name = "DIR", conflicts_with = "file")]
    #[arg(help_heading = SAFETY)]
    pub dir: Option<PathBuf>,

    /// Use this file (or block device).
    ///
    /// An existing one is only read unless
    /// --allow-write; one that does not exist is created and removed.
    #[arg(long, value_name = "PATH")]
    #[arg(help_heading = SAFETY)]
    pub file: Option<PathBuf>,

    /// Allow write patterns on an existing --file (its contents are destroyed).
    #[arg(long)]
    #[arg(help_heading = SAFETY)]
    pub allow_write: bool,

    /// With --allow-write on a block device: write even when it carries a
    /// file-system, RAID or partition-table signature (destroying it).
    /// Mounted, swap and held devices are refused whatever is given.
    #[arg(long)]
    #[arg(help_heading = SAFETY, hide_short_help = true)]
    pub force_signature: bool,

    /// With --allow-write: fill the existing --file or device with
    /// incompressible data before the run, so reads never hit unwritten
    /// ranges.
    #[arg(long)]
    #[arg(help_heading = SAFETY, hide_short_help = true)]
    pub prefill: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ProbeArgs {
    /// Directory whose file system is probed [default: current directory].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Print the probe as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Exit codes: 0 compared (whatever changed, unless --fail-above), 1 --fail-above \
                  found a case whose 95% interval is beyond PCT slower, 3 --fail-above found a \
                  slowdown beyond PCT with too few repetitions to tell, 2 bad input.\n\n\
                  Several runs a side (recommended: run-to-run drift is then measured, not \
                  assumed):\n  iopath compare --fail-above 5 base1.json base2.json base3.json -- \
                  new1.json new2.json new3.json\n\n\
                  One run a side (intervals widened by the --drift allowance):\n  iopath \
                  compare baseline.json new.json --fail-above 10%\n\n\
                  See docs/compare.md for the rules and the JSON."
)]
pub struct CompareArgs {
    /// The baseline (A): one result written by `iopath run --json FILE`,
    /// then the result compared with it (B); or several runs of A, `--`,
    /// and several runs of B. Options go before the `--`.
    #[arg(value_name = "A.json", required = true, num_args = 1..)]
    pub a: Vec<PathBuf>,

    /// B's runs, after `--` (then every file before the `--` is A's).
    #[arg(value_name = "B.json", last = true)]
    pub b: Vec<PathBuf>,

    /// Exit 1 when a case of B is slower than in A and the upper bound of
    /// its 95% interval (the side nearest to no change) is more than PCT
    /// percent below A (`5` or `5%`; see docs/compare.md). PCT is also the
    /// margin of `no change` (default 5): an interval that holds 1 but
    /// reaches past it is `inconclusive`.
    #[arg(long, value_name = "PCT", value_parser = fail_above)]
    pub fail_above: Option<f64>,

    /// With one run a side: the run-to-run drift allowed for, in percent
    /// (the interval is widened by it; 0 for none) [default: 38, measured
    /// with bench/compare-drift.sh, see docs/compare.md].
    #[arg(long, value_name = "PCT", value_parser = drift)]
    pub drift: Option<f64>,

    /// Print the comparison as JSON on stdout (nothing else is printed there).
    #[arg(long)]
    pub json: bool,

    /// Name shown for A [default: its file name].
    #[arg(long, value_name = "NAME")]
    pub name_a: Option<String>,

    /// Name shown for B [default: its file name].
    #[arg(long, value_name = "NAME")]
    pub name_b: Option<String>,
}

impl CompareArgs {
    /// What `compare` needs, without the clap types.
    pub fn options(&self) -> crate::analysis::compare::Options {
        crate::analysis::compare::Options {
            a: self.a.clone(),
            b: self.b.clone(),
            fail_above: self.fail_above,
            drift: self.drift,
            json: self.json,
            name_a: self.name_a.clone(),
            name_b: self.name_b.clone(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct PresetsArgs {
    #[command(subcommand)]
    pub action: Option<PresetsAction>,
}

#[derive(Debug, Clone, Subcommand)]
pub enum PresetsAction {
    /// The cases a preset runs, its run settings and its source's figures.
    Show {
        /// A preset name (`iopath presets` lists them).
        #[arg(value_parser = PresetName)]
        name: String,
        /// Print it as a TOML job file to start from (`iopath run FILE`).
        #[arg(long)]
        toml: bool,
    },
}

/// Parse the command line, noting which flags of `run` were given (a
/// preset's settings yield to them). A bad command line exits 2 with
/// clap's message, which quotes the values given: see [`exit_on`].
pub fn parse() -> Cli {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    parse_from(args.iter().cloned()).unwrap_or_else(|e| exit_on(&e, &args))
}

/// Print a clap error (or the help or version it stands for) and exit
/// with its code. Help and version are iopath's own text, and an error
/// about a command line of plain text quotes nothing hostile: clap prints
/// them, styled. An error about a command line with a character
/// [`crate::model::untrusted::field`] shows (an escape, a line feed) is printed
/// by [`error_text`], without clap's colours.
pub fn exit_on(e: &clap::Error, args: &[std::ffi::OsString]) -> ! {
    let plain = |a: &std::ffi::OsString| {
        matches!(
            crate::model::untrusted::field(&a.to_string_lossy()),
            Cow::Borrowed(_)
        )
    };
    if !e.use_stderr() || args.iter().all(plain) {
        e.exit()
    }
    crate::model::untrusted::to_stderr(error_text(e, args));
    std::process::exit(e.exit_code())
}

/// A clap error's message without clap's colours, the values of `args`
/// it quotes (whole, or one item of a comma-separated list, or either
/// side of `--flag=value`) shown by [`crate::model::untrusted::field`] (`\x1b`, a line feed as
/// `\x0a`: nothing reaches the terminal as an escape or starts a line),
/// and anything else [`crate::model::untrusted::visible`] would show, shown.
pub fn error_text(e: &clap::Error, args: &[std::ffi::OsString]) -> String {
    let mut quoted: Vec<&str> = Vec::new();
    for a in args.iter().filter_map(|a| a.to_str()) {
        let (flag, value) = a.split_once('=').unzip();
        quoted.extend([a].into_iter().chain(flag).chain(value).chain(a.split(',')));
        quoted.extend(value.into_iter().flat_map(|v| v.split(',')));
    }
    // Longest first: a whole value before the items in it.
    quoted.sort_by_key(|q| std::cmp::Reverse(q.len()));
    let mut text = e.render().ansi().to_string();
    for q in quoted {
        if let Cow::Owned(shown) = crate::model::untrusted::field(q) {
            text = text.replace(q, &shown);
        }
    }
    // What is left of escapes is clap's styling (or a value it quoted in
    // a form not above): left out.
    let text = clap::builder::StyledStr::from(text).to_string();
    crate::model::untrusted::visible(&text).into_owned()
}

/// [`parse`] of given arguments (the first is the program's name).
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let (Some(Command::Run(a)), Some(("run", m))) = (&mut cli.command, matches.subcommand()) {
        a.given = m
            .ids()
            .filter(|id| {
                m.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
            })
            .map(|id| id.as_str().to_string())
            .collect();
    }
    Ok(cli)
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:\n  \
                  iopath report result.json --html report.html\n  \
                  iopath report result.json --markdown - | xclip   Markdown for a pull request\n  \
                  iopath report result.json --csv runs.csv --png-dir charts/\n\n\
                  Exit codes: 0 written, 1 a file could not be written, 2 bad input (not an \
                  iopath result, or one of a newer schema than this iopath reads).\n\
                  See docs/reports.md for what each format holds.")]
pub struct ReportArgs {
    /// A result written by `iopath run --json FILE` (any schema version up
    /// to this iopath's).
    #[arg(value_name = "RESULT.json")]
    pub result: PathBuf,

    /// Write the result again as JSON to FILE, or `-` for stdout: with
    /// --json-format fio, in fio's shape (for fio-plot and fio scripts).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// What --json writes: iopath's document, or fio's JSON shape.
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "iopath",
        requires = "json"
    )]
    pub json_format: crate::report::json::JsonFormat,

    #[command(flatten, next_help_heading = OUTPUT)]
    pub reports: crate::report::Outputs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use iopath_io::Method;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn lists_and_aliases_parse() {
        let cli = Cli::try_parse_from([
            "iopath",
            "run",
            "--methods",
            "uring,direct",
            "--patterns",
            "seqread,randwrite",
            "--bs",
            "64k",
        ])
        .unwrap();
        let Some(Command::Run(r)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(r.methods, vec![Method::Uring.into(), Method::Direct.into()]);
        assert_eq!(r.patterns, vec![Pattern::Read, Pattern::RandWrite]);
        assert_eq!(r.bs, Some(65536));
        assert_eq!(r.repeat, None, "adaptive by default");
        assert_eq!(r.ci_target, 0.03);
    }

    /// Every flag's help, long form, of every subcommand.
    fn every_arg() -> Vec<(String, clap::Arg)> {
        let cmd = Cli::command();
        let mut out: Vec<(String, clap::Arg)> = cmd
            .get_arguments()
            .map(|a| ("iopath".to_string(), a.clone()))
            .collect();
        for sub in cmd.get_subcommands() {
            out.extend(
                sub.get_arguments()
                    .map(|a| (sub.get_name().to_string(), a.clone())),
            );
        }
        out
    }

    #[test]
    fn no_help_states_a_default_that_clap_shows_too() {
        for (cmd, a) in every_arg() {
            let help = a
                .get_long_help()
                .or(a.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            if !a.get_default_values().is_empty() {
                assert!(
                    !help.contains("[default"),
                    "{cmd} --{}: clap shows its default, and the help says one too: {help}",
                    a.get_id()
                );
            }
        }
    }

    #[test]
    fn help_names_no_library_iopath_does_not_use() {
        // `aio` calls io_submit itself (docs/methods.md): no libaio.
        let mut cmd = Cli::command();
        let mut all = cmd.render_long_help().to_string();
        for sub in cmd.get_subcommands_mut() {
            all.push_str(&sub.render_long_help().to_string());
        }
        for (_, a) in every_arg() {
            all.push_str(
                &a.get_long_help()
                    .or(a.get_help())
                    .map(|h| h.to_string())
                    .unwrap_or_default(),
            );
        }
        assert!(!all.contains("libaio"), "help mentions libaio");
    }

    #[test]
    fn clap_defaults_are_the_plans_defaults() {
        // `iopath run` alone leaves every defaulted flag out of the job (the
        // plan's defaults apply); giving each default explicitly must make
        // the same plan.
        let plan_of = |extra: &[String]| {
            let mut argv = vec!["iopath".to_string(), "run".to_string()];
            argv.extend_from_slice(extra);
            let Some(Command::Run(r)) = parse_from(argv).unwrap().command else {
                unreachable!()
            };
            let mut p = crate::cli::commands::plan_of(&r).unwrap();
            p.order_seed = 0;
            format!("{p:?}")
        };
        let base = plan_of(&[]);
        let run = Cli::command();
        let run = run.find_subcommand("run").unwrap();
        let mut checked = 0;
        // Output options are not part of the plan; `--threads`, given at
        // all, runs every method at that thread count instead of matching
        // their concurrency (docs/methodology.md); `--max-time`, given at
        // all, caps each case instead of the run's budget.
        for a in run.get_arguments().filter(|a| {
            a.get_id() != "json_format" && a.get_id() != "threads" && a.get_id() != "max_time"
        }) {
            let Some(v) = a.get_default_values().first() else {
                continue;
            };
            let flag = format!("--{}", a.get_long().unwrap());
            let explicit = plan_of(&[flag.clone(), v.to_string_lossy().to_string()]);
            assert_eq!(
                explicit, base,
                "{flag} {v:?}: clap's default is not the plan's"
            );
            checked += 1;
        }
        assert!(checked >= 10, "only {checked} defaulted flags found");
    }

    #[test]
    fn shells_complete_methods_patterns_and_presets() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let script = String::from_utf8(completions(shell)).unwrap();
            for name in [
                "uring-sqpoll",
                "randwrite",
                "glommio-scan",
                "interleaved",
                "as-is",
            ] {
                assert!(script.contains(name), "{shell:?} completes {name}");
            }
        }
        let man = String::from_utf8(man_page().unwrap()).unwrap();
        assert!(
            man.contains(".TH iopath") && man.contains("IOPATH RUN"),
            "{man:.200}"
        );
    }

    #[test]
    fn repeat_excludes_adaptive_options() {
        let r = Cli::try_parse_from(["iopath", "run", "--repeat", "5", "--ci-target", "2"]);
        assert!(r.is_err());
    }
}

//! Progress on stderr, with indicatif. Hidden when stderr is not a terminal
//! or with `--quiet`, so pipes and CI logs stay clean.
//!
//! While a repetition runs, its line shows live figures
//! (`buffered randread 4k Q32T1 · rep 3/5 · 2150.3 MiB/s · 550.4k IOPS`):
//! the runner's ticker (`runner::live`) samples the workers' running
//! totals and [`LiveRate`] turns two samples into a rate.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Debug, Clone)]
pub struct Progress {
    enabled: bool,
    /// `--quiet`: nothing on stderr but errors (not even the estimate).
    quiet: bool,
    words: ProgressWords,
}

/// How the progress lines are worded: the caller's words
/// (`report::text::progress::WORDS`), as the runner writes no sentences.
#[derive(Debug, Clone, Copy)]
pub struct ProgressWords {
    /// The prefill bar: its indicatif template and its message, for the
    /// bytes it will write.
    pub prefill: fn(u64) -> (String, String),
    /// The case bar's indicatif template, for `len` cases.
    pub cases: fn(u64) -> String,
    /// The line's prefix: the run's time left.
    pub left: fn(Duration) -> String,
    /// A repetition's message, live or finished.
    pub rep: fn(&RepLine<'_>) -> String,
}

impl ProgressWords {
    /// No words (a progress line never drawn).
    pub const NONE: ProgressWords = ProgressWords {
        prefill: |_| (String::new(), String::new()),
        cases: |_| String::new(),
        left: |_| String::new(),
        rep: |_| String::new(),
    };
}

/// What a repetition's progress message shows: the case as the line
/// names it, which repetition, its rates, and whether a worker is in its
/// final flush and close (when the rate honestly drops to 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepLine<'a> {
    pub case: &'a str,
    pub tag: RepTag,
    pub mib_s: f64,
    pub iops: f64,
    pub flushing: bool,
}

impl Progress {
    /// `words` word the lines when they are drawn.
    pub fn new(quiet: bool, words: ProgressWords) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            quiet,
            words,
        }
    }

    pub fn hidden() -> Progress {
        Progress {
            enabled: false,
            quiet: true,
            words: ProgressWords::NONE,
        }
    }

    /// The words the lines are drawn with.
    pub fn words(&self) -> ProgressWords {
        self.words
    }

    /// The line's prefix: the run's time left.
    pub fn left(&self, left: Duration) -> String {
        (self.words.left)(left)
    }

    /// `--quiet` (or hidden): no estimate line either.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// Whether anything is drawn: nothing live (no counters, no ticker
    /// thread) is set up when it is not.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    fn bar(&self, len: u64, template: &str, msg: &str) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::hidden();
        }
        let b = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(template) {
            b.set_style(style.progress_chars("=> "));
        }
        b.set_message(msg.to_string());
        b.enable_steady_tick(Duration::from_millis(200));
        b
    }

    /// A bar counting the bytes of the prefill.
    pub fn prefill(&self, len: u64) -> ProgressBar {
        let (template, msg) = (self.words.prefill)(len);
        self.bar(len, &template, &msg)
    }

    /// A bar counting cases.
    pub fn cases(&self, len: u64) -> ProgressBar {
        self.bar(len, &(self.words.cases)(len), "")
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// Which repetition a line is about: `rep 3`, `rep 3/5` (with `--repeat
/// 5`), `warm-up 1/2`. Warm-ups and measured repetitions count separately,
/// from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepTag {
    pub warmup: bool,
    pub n: u32,
    /// How many of this kind will run, when known in advance.
    pub of: Option<u32>,
}

/// Windows shorter than this give no rate (the baseline is kept): the
/// workers publish their totals every few ms, so a very short window would
/// mostly measure when they last published.
pub const MIN_WINDOW_NS: u64 = 50_000_000;

/// MiB/s and IOPS between successive samples of running totals (bytes and
/// requests completed, all workers together). Pure: times are passed in, in
/// ns from any fixed origin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveRate {
    /// Totals and time of the window's start.
    base: Option<(u64, u64, u64)>,
}

impl LiveRate {
    pub fn new() -> LiveRate {
        LiveRate::default()
    }

    /// Start the window at `at_ns`, with these totals (a repetition's
    /// start: zero totals, the time its workers started).
    pub fn reset(&mut self, bytes_total: u64, ios_total: u64, at_ns: u64) {
        self.base = Some((bytes_total, ios_total, at_ns));
    }

    /// Forget the window (between repetitions).
    pub fn clear(&mut self) {
        self.base = None;
    }

    pub fn has_baseline(&self) -> bool {
        self.base.is_some()
    }

    /// The rate since the window's start, and a new window from now.
    /// `None`, changing nothing, while the window is shorter than
    /// [`MIN_WINDOW_NS`]; `None`, starting a window here, when there was
    /// none or the totals or the clock went backwards (counters restarted).
    pub fn sample(&mut self, bytes_total: u64, ios_total: u64, now_ns: u64) -> Option<(f64, f64)> {
        let here = Some((bytes_total, ios_total, now_ns));
        let Some((b0, i0, t0)) = self.base else {
            self.base = here;
            return None;
        };
        if bytes_total < b0 || ios_total < i0 || now_ns < t0 {
            self.base = here;
            return None;
        }
        let dt = now_ns - t0;
        if dt < MIN_WINDOW_NS {
            return None;
        }
        self.base = here;
        let secs = dt as f64 / 1e9;
        Some((
            (bytes_total - b0) as f64 / MIB / secs,
            (ios_total - i0) as f64 / secs,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rate_over_the_window_since_the_last_sample() {
        let mut r = LiveRate::new();
        assert_eq!(
            r.sample(0, 0, 0),
            None,
            "the first sample only starts a window"
        );
        // 100 MiB and 25 600 requests in 200 ms.
        let (mib, iops) = r.sample(100 << 20, 25_600, 200 * MS).unwrap();
        assert!((mib - 500.0).abs() < 1e-9, "{mib}");
        assert!((iops - 128_000.0).abs() < 1e-6, "{iops}");
        // The next window starts where that one ended: 10 MiB in 250 ms.
        let (mib, iops) = r.sample(110 << 20, 25_600 + 2_560, 450 * MS).unwrap();
        assert!((mib - 40.0).abs() < 1e-9, "{mib}");
        assert!((iops - 10_240.0).abs() < 1e-6, "{iops}");
    }

    #[test]
    fn a_window_without_completions_is_zero_not_missing() {
        // A long fsync: the totals stand still while time passes.
        let mut r = LiveRate::new();
        r.reset(64 << 20, 64, 0);
        assert_eq!(r.sample(64 << 20, 64, 1_000 * MS), Some((0.0, 0.0)));
    }

    #[test]
    fn short_windows_keep_their_start() {
        let mut r = LiveRate::new();
        r.reset(0, 0, 1_000 * MS);
        assert_eq!(r.sample(1 << 20, 10, 1_000 * MS + MIN_WINDOW_NS - 1), None);
        // The window still runs from 1 s: 4 MiB over 100 ms.
        let (mib, iops) = r.sample(4 << 20, 40, 1_100 * MS).unwrap();
        assert!((mib - 40.0).abs() < 1e-9, "{mib}");
        assert!((iops - 400.0).abs() < 1e-6, "{iops}");
    }

    #[test]
    fn counters_that_restart_start_a_new_window() {
        let mut r = LiveRate::new();
        r.reset(500 << 20, 500, 0);
        assert_eq!(r.sample(1 << 20, 1, 300 * MS), None);
        let (mib, _) = r.sample(3 << 20, 3, 500 * MS).unwrap();
        assert!((mib - 10.0).abs() < 1e-9, "{mib}");
        // A clock going backwards, too.
        assert_eq!(r.sample(4 << 20, 4, 100 * MS), None);
        r.clear();
        assert!(!r.has_baseline());
    }
}

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
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            quiet,
        }
    }

    pub fn hidden() -> Progress {
        Progress {
            enabled: false,
            quiet: true,
        }
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

    /// A bar counting bytes (prefill).
    pub fn bytes(&self, len: u64, msg: &str) -> ProgressBar {
        self.bar(
            len,
            "{msg:>20} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            msg,
        )
    }

    /// A bar counting cases.
    pub fn cases(&self, len: u64) -> ProgressBar {
        self.bar(len, &cases_template(len), "")
    }
}

/// The case bar's template: `3/38 cases`, `0/1 case`.
fn cases_template(len: u64) -> String {
    format!(
        "[{{elapsed_precise}}] [{{bar:30}}] {{pos}}/{{len}} {}{{prefix}}  {{msg}}",
        if len == 1 { "case" } else { "cases" }
    )
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

impl std::fmt::Display for RepTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.warmup { "warm-up" } else { "rep" };
        match self.of {
            Some(of) => write!(f, "{kind} {}/{of}", self.n),
            None => write!(f, "{kind} {}", self.n),
        }
    }
}

/// The progress message of a repetition, live or finished:
/// `buffered randread 4k Q32T1 · rep 3 · 2150.3 MiB/s · 550.4k IOPS`, with
/// `· flushing` while a worker is in its final fsync/close (when the rate
/// honestly drops to 0).
pub fn rep_line(case: &str, tag: RepTag, mib_s: f64, iops: f64, flushing: bool) -> String {
    format!(
        "{case} · {tag} · {mib_s:.1} MiB/s · {} IOPS{}",
        crate::model::units::fmt_count(iops),
        if flushing { " · flushing" } else { "" }
    )
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
    fn the_case_bar_counts_one_case_or_several() {
        assert!(cases_template(1).contains("{pos}/{len} case{prefix}"));
        assert!(cases_template(38).contains("{pos}/{len} cases{prefix}"));
        assert!(ProgressStyle::with_template(&cases_template(2)).is_ok());
    }

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

    #[test]
    fn lines() {
        let rep = RepTag {
            warmup: false,
            n: 3,
            of: None,
        };
        assert_eq!(
            rep_line("buffered randread 4k Q32T1", rep, 2150.34, 550_400.0, false),
            "buffered randread 4k Q32T1 · rep 3 · 2150.3 MiB/s · 550.4k IOPS"
        );
        let warm = RepTag {
            warmup: true,
            n: 1,
            of: Some(2),
        };
        assert_eq!(
            rep_line("direct write 1M Q8T1", warm, 0.0, 0.0, true),
            "direct write 1M Q8T1 · warm-up 1/2 · 0.0 MiB/s · 0 IOPS · flushing"
        );
        let fixed = RepTag {
            warmup: false,
            n: 2,
            of: Some(5),
        };
        assert_eq!(fixed.to_string(), "rep 2/5");
    }
}

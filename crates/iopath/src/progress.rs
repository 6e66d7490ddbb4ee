//! Progress on stderr, with indicatif. Hidden when stderr is not a terminal
//! or with `--quiet`, so pipes and CI logs stay clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Debug, Clone)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
        }
    }

    pub fn hidden() -> Progress {
        Progress { enabled: false }
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
        self.bar(
            len,
            "[{elapsed_precise}] [{bar:30}] {pos}/{len} cases  {msg}",
            "",
        )
    }
}

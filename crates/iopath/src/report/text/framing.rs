//! Framing the exporters share (terminal tables, Markdown, HTML), worded
//! once: what the row of a case never reached says, and what `~` marks in
//! a legend. (Each exporter still writes its own headings and columns.)

use crate::stats::MIN_REPETITIONS_FOR_CI;

/// The note on the row of a case an interrupted run never reached.
pub const NOT_REACHED_NOTE: &str = "not reached: the run was interrupted";

/// What `~` marks on a throughput's spread, for a legend; `mark` is `~`
/// as the format writes it.
pub fn tilde_spread(mark: &str) -> String {
    format!(
        "{mark}: fewer than {MIN_REPETITIONS_FOR_CI} repetitions, so only the min-max range, below 95%"
    )
}

/// What `~` marks on a latency percentile, for a legend: `percentiles`
/// are those the table shows (`["p50", "p99"]`).
pub fn tilde_percentiles(mark: &str, percentiles: &[&str]) -> String {
    let needs = if percentiles.contains(&"p99.9") {
        "p99 needs 1,000, p99.9 10,000"
    } else {
        "p99 needs 1,000"
    };
    format!(
        "{} with {mark}: too few requests behind {} ({needs})",
        percentiles.join("/"),
        if percentiles.len() == 1 { "it" } else { "them" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_of_tilde() {
        let lines = [
            tilde_spread("~"),
            tilde_spread("`~`"),
            tilde_percentiles("~", &["p50", "p99", "p99.9"]),
            tilde_percentiles("~", &["p99"]),
            NOT_REACHED_NOTE.to_string(),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }
}

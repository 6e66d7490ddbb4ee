//! Figures a source published, and iopath's figure in the same unit.

use super::job::Published;

impl Published {
    /// `945 MB/s` or the finding in words.
    pub fn show(&self) -> String {
        match (&self.value, &self.unit, &self.text) {
            (Some(v), Some(u), _) => format!("{} {u}", trim_number(*v)),
            (_, _, Some(t)) => t.clone(),
            (Some(v), None, None) => trim_number(*v),
            (None, _, None) => String::new(),
        }
    }

    /// iopath's figure in the published unit, when it has one iopath
    /// measures: bytes/s for MB/s, MiB/s, GB/s; IOPS.
    pub fn ours(&self, bw_bytes_per_s: f64, iops: f64) -> Option<String> {
        self.ours_with(bw_bytes_per_s, iops, None)
    }

    /// iopath's figure as a number in the published unit, if it has one.
    pub fn ours_value(
        &self,
        bw_bytes_per_s: f64,
        iops: f64,
        duration_ns: Option<u64>,
    ) -> Option<f64> {
        Some(match self.unit.as_deref()? {
            "MB/s" => bw_bytes_per_s / 1e6,
            "MiB/s" => bw_bytes_per_s / 1048576.0,
            "GB/s" => bw_bytes_per_s / 1e9,
            "IOPS" => iops,
            "s" => duration_ns? as f64 / 1e9,
            _ => return None,
        })
    }

    /// [`Published::ours`], and for `s` (a time, as hmmap published) the
    /// repetition's duration.
    pub fn ours_with(
        &self,
        bw_bytes_per_s: f64,
        iops: f64,
        duration_ns: Option<u64>,
    ) -> Option<String> {
        let v = self.ours_value(bw_bytes_per_s, iops, duration_ns)?;
        Some(format!(
            "{} {}",
            trim_number(round3(v)),
            self.unit.as_deref()?
        ))
    }
}

/// Three significant digits, at least the integer part.
fn round3(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = v.abs().log10().floor() as i32;
    if digits >= 2 {
        v.round()
    } else {
        let f = 10f64.powi(2 - digits);
        (v * f).round() / f
    }
}

/// `945`, `2.35`, `693870`: no trailing zeros.
fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

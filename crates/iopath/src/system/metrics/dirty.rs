//! The kernel's dirty-page limits: how much written data the page cache
//! holds before the flusher starts writing it back (the background
//! threshold) and before writers are made to wait for the device (the dirty
//! threshold). Writes that stay under them are absorbed at memory speed: a
//! burst, not the speed of writing more than the cache can hold.
//!
//! `vm.dirty_bytes` (or, when 0, `vm.dirty_ratio` percent) and
//! `vm.dirty_background_bytes` (or `vm.dirty_background_ratio`). The kernel
//! applies a ratio to its "dirtyable" memory (free plus reclaimable file
//! pages), and within a memory cgroup (v2) to the cgroup's too; iopath
//! approximates that with `MemAvailable`, or the process's memory cgroup
//! limit when lower. An estimate: it says where a burst ends, roughly.

use serde::{Deserialize, Serialize};

/// The thresholds, as read when the run started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DirtyLimits {
    /// Writers are throttled beyond this many dirty bytes.
    pub limit_bytes: u64,
    /// The flusher starts writing back beyond this many.
    pub background_bytes: u64,
    /// `vm.dirty_ratio` when the limit is a ratio; absent when
    /// `vm.dirty_bytes` sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_pct: Option<u64>,
    /// `vm.dirty_background_ratio` when that limit is a ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_ratio_pct: Option<u64>,
    /// What a ratio applies to: `MemAvailable`, or the memory cgroup's
    /// limit when lower.
    pub base_bytes: u64,
    /// True when the base is the memory cgroup's limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub base_is_cgroup: bool,
}

impl DirtyLimits {
    /// From the four sysctls, the available memory and the cgroup's limit
    /// (`None`: no limit). `None` when the sysctls say nothing usable.
    pub fn compute(
        dirty_bytes: Option<u64>,
        dirty_ratio: Option<u64>,
        background_bytes: Option<u64>,
        background_ratio: Option<u64>,
        available: u64,
        cgroup_limit: Option<u64>,
    ) -> Option<DirtyLimits> {
        let (base_bytes, base_is_cgroup) = match cgroup_limit {
            Some(l) if l < available => (l, true),
            _ => (available, false),
        };
        let of = |bytes: Option<u64>, ratio: Option<u64>| match (bytes, ratio) {
            (Some(b), _) if b > 0 => Some((b, None)),
            (_, Some(r)) => Some((base_bytes / 100 * r.min(100), Some(r.min(100)))),
            _ => None,
        };
        let (limit_bytes, ratio_pct) = of(dirty_bytes, dirty_ratio)?;
        // The kernel keeps the background threshold below the limit (half
        // of it when set at or above it).
        let (mut background, background_ratio_pct) =
            of(background_bytes, background_ratio).unwrap_or((limit_bytes / 2, None));
        if background >= limit_bytes {
            background = limit_bytes / 2;
        }
        Some(DirtyLimits {
            limit_bytes,
            background_bytes: background,
            ratio_pct,
            background_ratio_pct,
            base_bytes,
            base_is_cgroup,
        })
    }

    /// This machine's, for this process.
    pub fn read() -> Option<DirtyLimits> {
        let num = |name: &str| {
            std::fs::read_to_string(format!("/proc/sys/vm/{name}"))
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
        };
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let available = super::procfs::meminfo_kb(&meminfo, "MemAvailable")? * 1024;
        let cgroup = super::procfs::MemCgroup::current().and_then(|c| c.limit_bytes());
        DirtyLimits::compute(
            num("dirty_bytes"),
            num("dirty_ratio"),
            num("dirty_background_bytes"),
            num("dirty_background_ratio"),
            available,
            cgroup,
        )
    }

    /// Where the limit comes from, for a sentence: `vm.dirty_ratio 20% of
    /// 21.6 GiB available`.
    pub fn source(&self) -> String {
        match self.ratio_pct {
            Some(r) => format!(
                "vm.dirty_ratio {r}% of {} {}",
                crate::model::units::fmt_bytes(self.base_bytes),
                if self.base_is_cgroup {
                    "(the memory cgroup's limit)"
                } else {
                    "available"
                }
            ),
            None => "vm.dirty_bytes".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn ratios_apply_to_available_memory_or_a_smaller_cgroup_limit() {
        let d = DirtyLimits::compute(Some(0), Some(20), Some(0), Some(10), 20 * GIB, None).unwrap();
        assert_eq!(d.limit_bytes, 20 * GIB / 100 * 20);
        assert_eq!(d.background_bytes, 20 * GIB / 100 * 10);
        assert_eq!((d.ratio_pct, d.base_is_cgroup), (Some(20), false));
        assert!(d
            .source()
            .starts_with("vm.dirty_ratio 20% of 20 GiB available"));
        let c = DirtyLimits::compute(Some(0), Some(20), Some(0), Some(10), 20 * GIB, Some(GIB))
            .unwrap();
        assert_eq!(c.limit_bytes, GIB / 100 * 20);
        assert!(c.base_is_cgroup);
        assert!(c.source().contains("memory cgroup"));
        // A cgroup larger than what is available changes nothing.
        let big =
            DirtyLimits::compute(Some(0), Some(20), Some(0), Some(10), GIB, Some(8 * GIB)).unwrap();
        assert_eq!(big.limit_bytes, GIB / 100 * 20);
    }

    #[test]
    fn bytes_win_over_ratios_and_the_background_stays_below_the_limit() {
        let d = DirtyLimits::compute(
            Some(256 << 20),
            Some(20),
            Some(512 << 20),
            Some(10),
            20 * GIB,
            None,
        )
        .unwrap();
        assert_eq!(d.limit_bytes, 256 << 20);
        assert_eq!(d.ratio_pct, None);
        assert_eq!(d.source(), "vm.dirty_bytes");
        // Background at or above the limit: half of the limit.
        assert_eq!(d.background_bytes, 128 << 20);
        assert_eq!(
            DirtyLimits::compute(None, None, None, None, GIB, None),
            None
        );
    }
}

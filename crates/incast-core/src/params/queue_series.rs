//! The queue time series' sizes and port selection, which the scenario's
//! checks ([`crate::scenario`]: `timing.rs`, `memory.rs`) and the sampler
//! ([`crate::metrics::sampler`]) share.

/// Points per port kept by `queue_ports = "top"`.
pub const TOP_POINTS: usize = 512;

/// The peak memory of one row of a full-resolution `queues` table through
/// `incast run`, in bytes: the sampler's vectors, the core's table, the
/// pandas frame with its derived columns, Parquet and the plot. Measured
/// (issue 40) with `/usr/bin/time -f %M incast run` on a
/// 16-host switch with `queue_ports = "all"` over 1 ms: 167 MB with no
/// series, 1,153 MB with 5.33 M rows, 2,157 MB with 10.67 M rows, so 193 B
/// a row (the rows, not the base, make the difference); rounded up.
pub const BYTES_PER_SAMPLE: u64 = 200;

/// The most samples (ports x points) a full-resolution selection may hold:
/// 10 M rows peak at about 2 GB ([`BYTES_PER_SAMPLE`] a row). The cap was 40 M,
/// which took 7.7 GB and let runs die of memory near it.
pub const MAX_SAMPLES: u64 = 10_000_000;

/// What one sample held by the sampler during a run costs, in bytes: the
/// queued bytes and the bytes sent (8 B each) and the vectors' spare
/// capacity. Measured with `queue_ports = "top"` on a k = 32 fat-tree run
/// for 6 ms (40,960 switch ports x 512 points): 383 MB, 19.2 B a sample;
/// rounded up.
pub const BYTES_PER_HELD_SAMPLE: u64 = 24;

/// Whether node `name` matches `pattern` (`*`: any run of characters).
pub fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| name_matches(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(name_matches("tor*", "tor12"));
        assert!(name_matches("*", "anything"));
        assert!(name_matches("s*1", "spine1"));
        assert!(!name_matches("s*1", "spine2"));
        assert!(name_matches("spine0", "spine0"));
        assert!(!name_matches("spine0", "spine01"));
        assert!(name_matches("a*b*c", "aXbYc"));
    }
}

//! The memory a run needs before its first packet, estimated from the
//! scenario alone, and refused when it exceeds what the machine has
//! available: a k = 160 fat-tree (1,024,000 hosts, inside the host limit)
//! used to abort on one 8.65 GB allocation (its 6.1 M ports) with no message.
//!
//! The estimate counts what grows with the network and the queue series:
//!
//! * every port (a link has two) at [`BYTES_PER_PORT`]: the port itself
//!   (1,408 B: eight class queues with their statistics), its PFC state, its
//!   NIC or switch share and the graph;
//! * the routing table before its identical columns merge: one 4-byte entry
//!   per switch with hosts and per switch (a k = 160 fat-tree: 12,800 x
//!   32,000, 1.6 GB while routes are computed);
//! * the queue time series ([`crate::metrics::sampler`]): every switch port's
//!   last 512 points with `queue_ports = "top"`, every point of the sampled
//!   ports with the other selections.
//!
//! Packets in flight and active flows come on top (workload-dependent, tens
//! to hundreds of MB on the bundled scale runs).

use super::{Scenario, ScenarioError};
use crate::params::queue_series::{BYTES_PER_HELD_SAMPLE, BYTES_PER_SAMPLE};
use crate::topology::NodeRef;

/// Memory per port once the simulation is built, in bytes. Measured (issue 40)
/// as the growth of the peak resident memory while
/// `incast.simulation` builds, less the routing table: fat-trees k = 48, 64
/// and 80 (165,888 to 768,000 ports) 2,157, 2,109 and 2,076 B a port;
/// leaf-spines of 216,000 and 288,000 ports 2,294 and 2,132 B; rounded up.
pub const BYTES_PER_PORT: u64 = 2_300;

/// One entry of the routing table while routes are computed, before
/// identical columns merge (`topology::routing`: a `u32` set id).
const BYTES_PER_ROUTING_ENTRY: u64 = 4;

/// What a run needs before its first packet, by part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Ports of the network (two a link).
    pub ports: u64,
    /// Switches with hosts (rows of the routing table) and switches (its columns).
    pub edge_switches: u64,
    pub switches: u64,
    /// Queue-series samples and what each costs.
    pub samples: u64,
    pub bytes_per_sample: u64,
}

impl MemoryEstimate {
    /// The ports and the routing table, in bytes.
    pub fn network_bytes(&self) -> u64 {
        let ports = self.ports.saturating_mul(BYTES_PER_PORT);
        let routing = self
            .edge_switches
            .saturating_mul(self.switches)
            .saturating_mul(BYTES_PER_ROUTING_ENTRY);
        ports.saturating_add(routing)
    }

    /// The queue time series, in bytes.
    pub fn series_bytes(&self) -> u64 {
        self.samples.saturating_mul(self.bytes_per_sample)
    }

    pub fn total_bytes(&self) -> u64 {
        self.network_bytes().saturating_add(self.series_bytes())
    }
}

/// Bytes as GB with one decimal.
fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// `n` with thousands separators: 6,144,000.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The memory this machine has available, in bytes: Linux's `MemAvailable`,
/// lowered to what the process's control group may still take. `None`
/// where neither can be read (then nothing is refused).
pub fn available_memory() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let number = |text: Option<String>| text.and_then(|t| t.trim().parse::<u64>().ok());
    let meminfo = read("/proc/meminfo")?;
    let available_kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    let mut available = available_kb.saturating_mul(1024);
    // cgroup v2, then v1: a limit (v2 says "max" when there is none) less the usage.
    for (limit, usage) in [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ] {
        if let Some(max) = number(read(limit)) {
            let used = number(read(usage)).unwrap_or(0);
            available = available.min(max.saturating_sub(used));
            break;
        }
    }
    Some(available)
}

impl Scenario {
    /// What this scenario's run needs before its first packet (module docs).
    pub fn memory_estimate(&self) -> MemoryEstimate {
        let g = &self.graph;
        let mut has_hosts = vec![false; g.n_switches()];
        for l in &g.links {
            if let (NodeRef::Host(_), NodeRef::Switch(s)) | (NodeRef::Switch(s), NodeRef::Host(_)) =
                (l.a, l.b)
            {
                has_hosts[s as usize] = true;
            }
        }
        let series = self.queue_series_size();
        MemoryEstimate {
            ports: 2 * g.links.len() as u64,
            edge_switches: has_hosts.iter().filter(|&&h| h).count() as u64,
            switches: g.n_switches() as u64,
            samples: series.samples(),
            bytes_per_sample: if series.full {
                BYTES_PER_SAMPLE
            } else {
                BYTES_PER_HELD_SAMPLE
            },
        }
    }

    /// Refuses a run whose [`Scenario::memory_estimate`] exceeds the memory
    /// this machine has available.
    pub(super) fn validate_memory(&self) -> Result<(), ScenarioError> {
        self.check_memory(available_memory())
    }

    /// [`Scenario::validate_memory`] against `available` bytes (`None`: unknown,
    /// nothing refused).
    fn check_memory(&self, available: Option<u64>) -> Result<(), ScenarioError> {
        let Some(available) = available else {
            return Ok(());
        };
        let e = self.memory_estimate();
        if e.total_bytes() <= available {
            return Ok(());
        }
        let m = &self.config.metrics;
        let network = format!(
            "the network: {} ports x {} B and a routing table of {} x {} entries while routes \
             are computed, {}",
            thousands(e.ports),
            thousands(BYTES_PER_PORT),
            thousands(e.edge_switches),
            thousands(e.switches),
            gb(e.network_bytes())
        );
        let series = format!(
            "the queue time series (metrics.queue_ports = \"{}\"): {} samples x {} B, {}",
            serde_json::to_value(m.queue_ports)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            thousands(e.samples),
            e.bytes_per_sample,
            gb(e.series_bytes())
        );
        let (key, fix) = if e.series_bytes() > e.network_bytes() {
            (
                "metrics.queue_ports",
                "sample fewer ports (metrics.queue_ports = \"none\", or \"nodes\" with \
                 metrics.queue_nodes naming a few switches), sample less often \
                 (metrics.queue_sample_interval) or shorten the run (stop, duration)",
            )
        } else {
            (
                "topology",
                "make the topology smaller (fewer hosts or switches), or run it on a machine \
                 with more memory",
            )
        };
        Err(ScenarioError::new(
            key,
            format!(
                "this run needs about {} before its first packet ({network}; {series}), more \
                 than the {} of memory this machine has available: {fix}",
                gb(e.total_bytes()),
                gb(available)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fat_tree(k: u32, metrics: &str) -> Scenario {
        let text = format!(
            "[topology]\nkind = \"fat_tree\"\nk = {k}\nhost_rate = \"100Gbps\"\n\
             fabric_rate = \"100Gbps\"\n[[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1000\n\
             [metrics]\n{metrics}\n"
        );
        let cfg = super::super::parse::toml_config(&text).expect("parses");
        // Only the graph and the queue series: no validation, no routes.
        let graph = cfg.topology.build().expect("builds");
        Scenario::unresolved(cfg, Path::new(".").to_path_buf(), graph)
    }

    #[test]
    fn the_estimate_counts_ports_routing_and_series() {
        let k = 16u64;
        let e = fat_tree(16, "queue_ports = \"none\"").memory_estimate();
        assert_eq!(e.ports, 2 * 3 * k * k * k / 4);
        assert_eq!(e.switches, 5 * k * k / 4);
        assert_eq!(e.edge_switches, k * k / 2);
        assert_eq!(e.samples, 0);
        let routing = e.edge_switches * e.switches * 4;
        assert_eq!(e.network_bytes(), e.ports * BYTES_PER_PORT + routing);
        // "top" holds every switch port's last 512 points; a run of 1 ms at
        // 10 us has 101.
        let switch_ports = e.ports - k * k * k / 4;
        let top = fat_tree(16, "").memory_estimate();
        // No stop or duration and one listed flow at 0: one tick.
        assert_eq!(top.samples, switch_ports);
        assert_eq!(top.bytes_per_sample, BYTES_PER_HELD_SAMPLE);
        let mut sc = fat_tree(16, "");
        sc.config.stop = Some(crate::config_types::TimeValue(crate::units::MS));
        assert_eq!(sc.memory_estimate().samples, switch_ports * 101);
        sc.config.stop = Some(crate::config_types::TimeValue(crate::units::SEC));
        assert_eq!(sc.memory_estimate().samples, switch_ports * 512);
    }

    #[test]
    fn a_fat_tree_of_k_160_is_refused_where_it_does_not_fit() {
        // The graph of k = 160 is built (a second, some 300 MB); the
        // simulation, which needs about 16 GB, is not.
        let sc = fat_tree(160, "queue_ports = \"none\"");
        let e = sc.memory_estimate();
        // Its ports alone took the one 8.65 GB allocation that aborted.
        assert!(e.ports * 1_408 > 8_600_000_000, "{e:?}");
        assert!(e.total_bytes() > 15_000_000_000, "{e:?}");
        let err = sc.check_memory(Some(8_000_000_000)).unwrap_err();
        assert_eq!(err.path, "topology");
        let text = err.to_string();
        for part in [
            "6,144,000 ports",
            "8.0 GB of memory",
            "needs about 15.",
            "smaller",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        assert!(sc.check_memory(Some(e.total_bytes())).is_ok());
        assert!(sc.check_memory(None).is_ok());
    }

    #[test]
    fn a_series_that_does_not_fit_names_the_metrics_keys() {
        let mut sc = fat_tree(16, "");
        sc.config.stop = Some(crate::config_types::TimeValue(crate::units::SEC));
        let err = sc.check_memory(Some(10_000_000)).unwrap_err();
        assert_eq!(err.path, "metrics.queue_ports");
        assert!(err.message.contains("queue_ports = \"top\""), "{err}");
        assert!(
            err.message.contains("metrics.queue_sample_interval"),
            "{err}"
        );
    }

    #[test]
    fn numbers_for_reading() {
        assert_eq!(thousands(6_144_000), "6,144,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(gb(8_650_000_000), "8.7 GB");
        // This machine's figure is a positive number where Linux says it.
        if Path::new("/proc/meminfo").exists() {
            assert!(available_memory().is_some_and(|b| b > 0));
        }
    }
}

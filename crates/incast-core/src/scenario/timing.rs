//! Checks of the scenario's clock: `duration`, `stop`, when generators start,
//! incast times, and the measurement window (`metrics.warmup`,
//! `metrics.cooldown`), plus the other `[metrics]` values.
//!
//! The rules, each an error naming the key:
//!
//! * generators (Poisson flows, incasts at a load, packets) need `duration`,
//!   and each must expect at least one arrival between its `start` and
//!   `duration` (so `duration = "0ps"` or `"1ps"` is refused with the
//!   arithmetic);
//! * `stop` (default [`DEFAULT_STOP`]) is not before `duration`, nor before
//!   the start of any listed flow or incast time;
//! * incast `times` fall before `duration` when there is one;
//! * the measurement window `[warmup, duration - cooldown)` is not empty, and
//!   without `duration` (whose end `cooldown` counts back from) `cooldown` is
//!   not set and some flow starts after `warmup`.

use super::{QueuePorts, Scenario, ScenarioError};
use crate::config_types::TimeValue;
use crate::units::{Ps, SEC};

/// How long a run may last when `stop` is not given (`Simulation::new` stops
/// the clock here).
pub const DEFAULT_STOP: Ps = 10 * SEC;

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(path, message))
}

fn t(ps: Ps) -> TimeValue {
    TimeValue(ps)
}

/// The unit to show `ps` in: the largest it is at least one of.
fn unit_of(ps: f64) -> (&'static str, f64) {
    use crate::units::{MS, NS, US};
    [("s", SEC), ("ms", MS), ("us", US), ("ns", NS)]
        .into_iter()
        .find(|&(_, u)| ps >= u as f64)
        .map_or(("ps", 1.0), |(n, u)| (n, u as f64))
}

/// A time for reading, to three significant digits: `9.13ms`.
fn approx(ps: f64) -> String {
    let (name, unit) = unit_of(ps);
    let v = ps / unit;
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{v:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    format!("{s}{name}")
}

/// A time to suggest writing: `ps` rounded up to two significant digits.
fn round_up(ps: f64) -> String {
    let (name, unit) = unit_of(ps);
    let v = ps / unit;
    let step = if v >= 10.0 { 1.0 } else { 0.1 };
    let up = (v / step).ceil() * step;
    let s = format!("{up:.1}");
    format!("{}{name}", s.trim_end_matches('0').trim_end_matches('.'))
}

/// One generator's expected number of arrivals between its start and the end
/// of `duration`, and the arithmetic behind it.
struct Expected {
    path: String,
    start: Ps,
    count: f64,
    why: String,
}

impl Scenario {
    pub(super) fn validate_timing(&self) -> Result<(), ScenarioError> {
        let c = &self.config;
        if self.has_generators() && c.duration.is_none() {
            return err(
                "duration",
                "the workload has traffic generators, so the scenario needs `duration` (e.g. \
                 duration = \"10ms\"): how long they create traffic",
            );
        }
        if self.has_generators() && c.duration.is_some_and(|d| d.0 == 0) {
            return err(
                "duration",
                "is 0, so the traffic generators would create no traffic: give them time, e.g. \
                 duration = \"10ms\"",
            );
        }
        let stop = c.stop.map_or(DEFAULT_STOP, |s| s.0);
        let stop_key = if c.stop.is_some() { "stop" } else { "duration" };
        if c.stop.is_some_and(|s| s.0 == 0) {
            return err(
                "stop",
                "must be positive (omit it to run until every flow has finished)",
            );
        }
        if let Some(d) = c.duration {
            if d.0 > stop {
                let what = if c.stop.is_some() {
                    format!("stop ({}) is before the end of duration ({d})", t(stop))
                } else {
                    format!("duration ({d}) is beyond the default stop ({})", t(stop))
                };
                return err(
                    stop_key,
                    format!(
                        "{what}: the generators would be cut off; set stop to at least duration \
                         (or remove stop to run until every flow has finished, at most 10s)"
                    ),
                );
            }
        }
        if let Some(f) = self.listed.last() {
            if f.start >= stop {
                return err(
                    if c.stop.is_some() { "stop" } else { "workload" },
                    format!(
                        "a listed flow starts at {}, at or after the end of the run ({}{}): it \
                         would never start; set stop later",
                        t(f.start),
                        t(stop),
                        if c.stop.is_some() {
                            ""
                        } else {
                            ", the default stop"
                        }
                    ),
                );
            }
        }
        self.validate_incast_times(stop)?;
        self.validate_generator_windows()?;
        self.validate_metrics()
    }

    fn validate_incast_times(&self, stop: Ps) -> Result<(), ScenarioError> {
        let c = &self.config;
        for (i, inc) in c.workload.incast.iter().enumerate() {
            for (j, &time) in inc.times.iter().flatten().enumerate() {
                let key = format!("workload.incast[{i}].times[{j}]");
                if let Some(d) = c.duration {
                    if time >= d {
                        return err(
                            key,
                            format!(
                                "an incast at {time} is not before the end of duration ({d}), \
                                 when the traffic ends: make duration longer or drop the time"
                            ),
                        );
                    }
                }
                if time.0 >= stop {
                    return err(
                        key,
                        format!(
                            "an incast at {time} is at or after the end of the run ({}): set \
                             stop later",
                            t(stop)
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// Each generator expects at least one arrival in `[start, duration)`.
    fn validate_generator_windows(&self) -> Result<(), ScenarioError> {
        let Some(duration) = self.config.duration else {
            return Ok(());
        };
        for g in self.expected_arrivals() {
            if g.start >= duration.0 {
                return err(
                    format!("{}.start", g.path),
                    format!(
                        "the generator starts at {}, not before the end of duration ({duration}), \
                         so it would create no traffic: start it earlier or make duration longer",
                        t(g.start)
                    ),
                );
            }
            if g.count < 1.0 {
                let window = duration.0 - g.start;
                let needed = g.start as f64 + window as f64 / g.count.max(1e-300);
                return err(
                    "duration",
                    format!(
                        "{} expects {:.2e} arrivals in its {} ({}), less than one: make \
                         duration at least {} for one arrival on average (several times that \
                         for a useful run)",
                        g.path,
                        g.count,
                        t(window),
                        g.why,
                        round_up(needed),
                    ),
                );
            }
        }
        Ok(())
    }

    /// The generators' expected arrivals over their windows (only when
    /// `duration` is set and each window is non-empty).
    fn expected_arrivals(&self) -> Vec<Expected> {
        let c = &self.config;
        let duration = c.duration.map_or(0, |d| d.0);
        let window = |start: Ps| duration.saturating_sub(start) as f64 / SEC as f64;
        let rates = self.host_rates();
        let rate_of = |h: u32| rates[h as usize].bits_per_sec() as f64;
        let mut out = vec![];
        for (i, p) in c.workload.poisson.iter().enumerate() {
            let hosts = &self.poisson_hosts[i];
            let bits: f64 = hosts.iter().map(|&h| rate_of(h) * p.load).sum();
            let mean = self.poisson_cdfs[i].mean().max(1.0);
            let per_sec = bits / (8.0 * mean);
            out.push(Expected {
                path: format!("workload.poisson[{i}]"),
                start: p.start.0,
                count: per_sec * window(p.start.0),
                why: format!(
                    "load {} on {} hosts with flows of {:.0} B on average: one flow every {} \
                     per host",
                    p.load,
                    hosts.len(),
                    mean,
                    approx(hosts.len() as f64 * SEC as f64 / per_sec)
                ),
            });
        }
        for (i, inc) in c.workload.incast.iter().enumerate() {
            let Some(load) = inc.load else { continue };
            let hosts = &self.incast_hosts[i];
            let capacity: f64 = hosts.iter().map(|&h| rate_of(h)).sum();
            let mix = self.incast_mix(i);
            let fan: f64 = mix.iter().map(|(f, p)| *f as f64 * p).sum();
            let size = match (&self.incast_cdfs[i], inc.bytes_per_sender) {
                (Some(cdf), _) => cdf.mean(),
                (None, b) => b.map_or(1, |b| b.0) as f64,
            }
            .max(1.0);
            let per_sec = capacity * load / (8.0 * fan * size);
            out.push(Expected {
                path: format!("workload.incast[{i}]"),
                start: inc.start.0,
                count: per_sec * window(inc.start.0),
                why: format!(
                    "load {load} of {} hosts with {fan:.1} senders x {size:.0} B per event: one \
                     event every {}",
                    hosts.len(),
                    approx(SEC as f64 / per_sec)
                ),
            });
        }
        for (i, p) in c.workload.packets.iter().enumerate() {
            let gap = p.rate.0.tx_time(p.size.0);
            out.push(Expected {
                path: format!("workload.packets[{i}]"),
                start: p.start.0,
                count: duration.saturating_sub(p.start.0) as f64 / gap.max(1) as f64,
                why: format!(
                    "{} B packets at {}: one every {}",
                    p.size.0,
                    p.rate.0,
                    approx(gap as f64)
                ),
            });
        }
        out
    }

    /// `[metrics]`: bucket edges, the sampling interval and the window.
    fn validate_metrics(&self) -> Result<(), ScenarioError> {
        let c = &self.config;
        let m = &c.metrics;
        if m.size_buckets.windows(2).any(|w| w[0].0 >= w[1].0)
            || m.size_buckets.iter().any(|b| b.0 == 0)
        {
            return err(
                "metrics.size_buckets",
                "bucket edges must be positive and strictly increasing",
            );
        }
        if m.queue_sample_interval.0 == 0 {
            return err("metrics.queue_sample_interval", "must be positive");
        }
        self.validate_queue_series()?;
        let (warmup, cooldown) = (m.warmup.0, m.cooldown.0);
        match c.duration {
            Some(d) => {
                if warmup >= d.0 {
                    return err(
                        "metrics.warmup",
                        format!(
                            "warmup ({}) is not shorter than duration ({d}): no flow would be \
                             measured; make it shorter",
                            m.warmup
                        ),
                    );
                }
                if warmup.saturating_add(cooldown) >= d.0 {
                    return err(
                        "metrics.cooldown",
                        format!(
                            "warmup + cooldown = {} + {} is not shorter than duration ({d}): the \
                             measurement window [warmup, duration - cooldown) is empty; make \
                             them shorter",
                            m.warmup, m.cooldown
                        ),
                    );
                }
            }
            None => {
                if cooldown > 0 {
                    return err(
                        "metrics.cooldown",
                        "cooldown counts back from the end of `duration`, which is not set: \
                         remove cooldown or set duration",
                    );
                }
                let latest = self.listed.iter().map(|f| f.start).chain(
                    c.workload
                        .incast
                        .iter()
                        .flat_map(|i| i.times.iter().flatten().map(|t| t.0)),
                );
                if warmup > 0 && latest.max().is_some_and(|l| l < warmup) {
                    return err(
                        "metrics.warmup",
                        format!(
                            "every flow starts before warmup ({}), so no flow would be \
                             measured; make warmup shorter",
                            m.warmup
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

impl Scenario {
    /// `metrics.queue_ports` and its companions; a full-resolution series
    /// that would not fit in memory is refused before the run (the
    /// estimate: ports x the run's end / interval).
    fn validate_queue_series(&self) -> Result<(), ScenarioError> {
        use crate::metrics::sampler::{name_matches, MAX_SAMPLES};
        use crate::topology::NodeRef;
        use QueuePorts as Q;
        let c = &self.config;
        let m = &c.metrics;
        if m.queue_ports == Q::Top && m.queue_top == 0 {
            return err(
                "metrics.queue_top",
                "must be at least 1 (or set queue_ports = \"none\" for no time series)",
            );
        }
        if m.queue_ports != Q::Nodes && !m.queue_nodes.is_empty() {
            return err(
                "metrics.queue_nodes",
                "applies only with queue_ports = \"nodes\": set that, or remove queue_nodes",
            );
        }
        let g = &self.graph;
        let names = || g.host_names.iter().chain(&g.switch_names);
        let node_ports = |n: usize| {
            let node = if n < g.n_hosts() {
                NodeRef::Host(n as u32)
            } else {
                NodeRef::Switch((n - g.n_hosts()) as u32)
            };
            g.ports(node).len() as u64
        };
        let ports: u64 = match m.queue_ports {
            Q::None | Q::Top => return Ok(()),
            Q::All => 2 * g.links.len() as u64,
            Q::Switch => (g.n_hosts()..g.n_hosts() + g.n_switches())
                .map(node_ports)
                .sum(),
            Q::Nodes => {
                if m.queue_nodes.is_empty() {
                    return err(
                        "metrics.queue_nodes",
                        "queue_ports = \"nodes\" needs the node names to sample, e.g. \
                         queue_nodes = [\"tor*\", \"spine0\"]",
                    );
                }
                for (i, pat) in m.queue_nodes.iter().enumerate() {
                    if !names().any(|n| name_matches(pat, n)) {
                        let some: Vec<&str> = names().take(6).map(|s| s.as_str()).collect();
                        return err(
                            format!("metrics.queue_nodes[{i}]"),
                            format!(
                                "{pat:?} matches no node; nodes are named like {} (`*` matches \
                                 any run of characters)",
                                some.join(", ")
                            ),
                        );
                    }
                }
                names()
                    .enumerate()
                    .filter(|(_, n)| m.queue_nodes.iter().any(|p| name_matches(p, n)))
                    .map(|(i, _)| node_ports(i))
                    .sum()
            }
        };
        let end = match (c.stop, c.duration) {
            (Some(stop), _) => stop.0,
            (None, Some(d)) => d.0,
            (None, None) => self.listed.iter().map(|f| f.start).max().unwrap_or(0),
        };
        let points = end / m.queue_sample_interval.0 + 1;
        let samples = ports.saturating_mul(points);
        if samples > MAX_SAMPLES {
            let interval = end.saturating_mul(ports) / MAX_SAMPLES + 1;
            return err(
                "metrics.queue_sample_interval",
                format!(
                    "{ports} ports sampled every {} until {} would make {samples} rows (about \
                     {} MB), more than the {MAX_SAMPLES} allowed: sample every {} or more, \
                     choose fewer ports (queue_ports = \"nodes\"), or use queue_ports = \
                     \"top\" (bounded at any length)",
                    m.queue_sample_interval,
                    t(end),
                    samples.saturating_mul(24) / 1_000_000,
                    round_up(interval as f64),
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_for_reading_and_for_writing() {
        assert_eq!(approx(9_126_666_666.0), "9.13ms");
        assert_eq!(approx(1_500.0), "1.5ns");
        assert_eq!(approx(12.0), "12ps");
        assert_eq!(approx(250e12), "250s");
        assert_eq!(round_up(2_281_666_666.0), "2.3ms");
        assert_eq!(round_up(12_010_000.0), "13us");
        assert_eq!(round_up(1e9), "1ms");
    }
}

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
//! * every other timed element follows the generators' rule: an on/off
//!   source and a hotspot start before `duration` ends (before `stop`
//!   without one), and a hotspot's own `duration` ends by `stop`, as a
//!   flow's `stop` must (`bulk.rs`);
//! * the measurement window `[warmup, duration - cooldown)` is not empty, and
//!   without `duration` (whose end `cooldown` counts back from) `cooldown` is
//!   not set and some flow starts after `warmup`.

use super::{QueuePorts, Scenario, ScenarioError};
use crate::config_types::TimeValue;
use crate::params::queue_series::{BYTES_PER_SAMPLE, MAX_SAMPLES};
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

impl Scenario {
    /// `[timing] threads`: at least 1, and more only in node order.
    fn validate_threads(&self) -> Result<(), ScenarioError> {
        let timing = &self.config.timing;
        match timing.threads {
            Some(0) => err(
                "timing.threads",
                "must be at least 1 (1, the default, runs on one thread)",
            ),
            Some(n) if n > 1 && timing.ties != super::Ties::Node => err(
                "timing.threads",
                format!(
                    "runs on {n} threads only in node order: add ties = \"node\" to [timing] \
                     (same-time events ordered by node, so that every thread count gives the \
                     same bytes; they differ from the default push order's) or remove threads"
                ),
            ),
            _ => Ok(()),
        }
    }
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
        self.validate_threads()?;
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
        self.validate_onoff_starts(stop)?;
        self.validate_hotspot_times(stop)?;
        self.validate_metrics()
    }

    /// Each on/off source starts before the end of its traffic: `duration`,
    /// or the run's stop without one (as the generators, which need it).
    fn validate_onoff_starts(&self, stop: Ps) -> Result<(), ScenarioError> {
        let c = &self.config;
        let (end, what) = match c.duration {
            Some(d) => (
                d.0,
                format!("the end of duration ({d}), when the traffic ends"),
            ),
            None => (stop, format!("the end of the run ({})", t(stop))),
        };
        for (i, o) in c.workload.onoff.iter().enumerate() {
            if o.start.0 >= end {
                return err(
                    format!("workload.onoff[{i}].start"),
                    format!(
                        "the source starts at {}, not before {what}, so it would send nothing: \
                         start it earlier or make the run longer",
                        o.start
                    ),
                );
            }
        }
        Ok(())
    }

    /// Each hotspot starts before the traffic ends (`duration`) and the run
    /// stops, and a hotspot with a `duration` of its own ends by the run's
    /// stop (as a flow's `stop` must).
    fn validate_hotspot_times(&self, stop: Ps) -> Result<(), ScenarioError> {
        let c = &self.config;
        for (i, h) in c.workload.hotspot.iter().enumerate() {
            let path = format!("workload.hotspot[{i}]");
            if let Some(d) = c.duration {
                if h.start >= d {
                    return err(
                        format!("{path}.start"),
                        format!(
                            "the hotspot starts at {}, not before the end of duration ({d}), \
                             when the traffic ends: it would slow nothing; start it earlier or \
                             make duration longer",
                            h.start
                        ),
                    );
                }
            }
            if h.start.0 >= stop {
                return err(
                    format!("{path}.start"),
                    format!(
                        "the hotspot starts at {}, at or after the end of the run ({}): it \
                         would never start; start it earlier or set stop later",
                        h.start,
                        t(stop)
                    ),
                );
            }
            let end = h.duration.map(|d| h.start.0.saturating_add(d.0));
            if let Some(end) = end.filter(|&e| e > stop) {
                return err(
                    format!("{path}.duration"),
                    format!(
                        "the hotspot would end at {}, after the end of the run ({}): it would be \
                         cut there; make its duration at most {} (or remove duration for a \
                         hotspot until the end), or set stop later",
                        t(end),
                        t(stop),
                        t(stop - h.start.0)
                    ),
                );
            }
        }
        Ok(())
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

/// How big the queue time series of a run can grow (before the run: ports x
/// ticks until the run's end).
pub(crate) struct QueueSeriesSize {
    /// Ports sampled at every tick.
    pub ports: u64,
    /// Ticks held at the end: every one to the run's end, or at most
    /// [`crate::params::queue_series::TOP_POINTS`] with `queue_ports = "top"`.
    pub points: u64,
    /// Whether every point is written (`"switch"`, `"all"`, `"nodes"`): the
    /// series then goes into the tables whole.
    pub full: bool,
    /// The run's end the ticks count to.
    pub end: Ps,
}

impl QueueSeriesSize {
    pub fn samples(&self) -> u64 {
        self.ports.saturating_mul(self.points)
    }
}

impl Scenario {
    /// `metrics.queue_ports` and its companions; a full-resolution series
    /// that would not fit in memory is refused before the run (the
    /// estimate: ports x the run's end / interval, [`BYTES_PER_SAMPLE`] a row).
    fn validate_queue_series(&self) -> Result<(), ScenarioError> {
        use crate::params::queue_series::name_matches;
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
        if m.queue_ports == Q::Nodes {
            let g = &self.graph;
            let names = || g.host_names.iter().chain(&g.switch_names);
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
        }
        let size = self.queue_series_size();
        let samples = size.samples();
        if size.full && samples > MAX_SAMPLES {
            let interval = size.end.saturating_mul(size.ports) / MAX_SAMPLES + 1;
            return err(
                "metrics.queue_sample_interval",
                format!(
                    "{} ports sampled every {} until {} would make {samples} rows (about {} MB \
                     at {BYTES_PER_SAMPLE} B a row), more than the {MAX_SAMPLES} allowed: sample \
                     every {} or more (metrics.queue_sample_interval), choose fewer ports \
                     (metrics.queue_ports = \"nodes\" with metrics.queue_nodes), set \
                     metrics.queue_ports = \"top\" (bounded at any length), or shorten the run \
                     (stop, duration)",
                    size.ports,
                    m.queue_sample_interval,
                    t(size.end),
                    samples.saturating_mul(BYTES_PER_SAMPLE) / 1_000_000,
                    round_up(interval as f64),
                ),
            );
        }
        Ok(())
    }

    /// The ports `metrics.queue_ports` samples and the points each keeps
    /// (`metrics` validated).
    pub(crate) fn queue_series_size(&self) -> QueueSeriesSize {
        use crate::params::queue_series::{name_matches, TOP_POINTS};
        use crate::topology::NodeRef;
        use QueuePorts as Q;
        let c = &self.config;
        let m = &c.metrics;
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
        let switch_ports = || {
            (g.n_hosts()..g.n_hosts() + g.n_switches())
                .map(node_ports)
                .sum()
        };
        let ports: u64 = match m.queue_ports {
            Q::None => 0,
            Q::All => 2 * g.links.len() as u64,
            Q::Switch | Q::Top => switch_ports(),
            Q::Nodes => names()
                .enumerate()
                .filter(|(_, n)| m.queue_nodes.iter().any(|p| name_matches(p, n)))
                .map(|(i, _)| node_ports(i))
                .sum(),
        };
        let end = match (c.stop, c.duration) {
            (Some(stop), _) => stop.0,
            (None, Some(d)) => d.0,
            (None, None) => self.listed.iter().map(|f| f.start).max().unwrap_or(0),
        };
        let ticks = end / m.queue_sample_interval.0.max(1) + 1;
        let top = m.queue_ports == Q::Top;
        QueueSeriesSize {
            ports,
            points: if top {
                ticks.min(TOP_POINTS as u64)
            } else {
                ticks
            },
            full: !top && m.queue_ports != Q::None,
            end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The IBM talk's hotspot network: on/off sources, a hotspot and `extra`
    /// at the top level (`duration` and `stop` are 10 ms unless it says).
    fn hotspot_scenario(times: &str, onoff_start: &str, hotspot: &str) -> String {
        format!(
            "{times}\n[topology]\nkind = \"single_switch\"\nhosts = 4\nlink_rate = \"10Gbps\"\n\
             [switch.input_buffer]\n[nic]\nmodel = \"adapter\"\n\
             [[workload.onoff]]\nload = 0.5\nstart = \"{onoff_start}\"\n\
             [[workload.hotspot]]\nhost = 0\nservice_rate = 0.1\n{hotspot}\n"
        )
    }

    fn error_of(text: &str) -> Option<ScenarioError> {
        Scenario::from_toml_str(text, std::path::Path::new(".")).err()
    }

    #[test]
    fn timed_elements_follow_the_generators_rule() {
        let times = "duration = \"10ms\"\nstop = \"20ms\"";
        let ok = hotspot_scenario(times, "1ms", "start = \"2ms\"\nduration = \"5ms\"");
        assert_eq!(error_of(&ok), None);
        // (on/off start, hotspot lines, key at fault, words of the message)
        let cases = [
            (
                "10ms",
                "start = \"2ms\"",
                "workload.onoff[0].start",
                "end of duration",
            ),
            (
                "1ms",
                "start = \"10ms\"",
                "workload.hotspot[0].start",
                "end of duration",
            ),
            (
                "1ms",
                "start = \"2ms\"\nduration = \"19ms\"",
                "workload.hotspot[0].duration",
                "at most 18ms",
            ),
        ];
        for (onoff, hotspot, key, words) in cases {
            let e = error_of(&hotspot_scenario(times, onoff, hotspot)).expect(key);
            assert_eq!(e.path, key, "{e}");
            assert!(e.message.contains(words), "{e}");
        }
        // Without duration the run's stop is the end: the on/off sources run to it.
        let stop_only = "stop = \"5ms\"";
        let e = error_of(&hotspot_scenario(stop_only, "1ms", "start = \"5ms\"")).unwrap();
        assert_eq!(e.path, "workload.hotspot[0].start", "{e}");
        assert!(e.message.contains("end of the run (5ms)"), "{e}");
        let e = error_of(&hotspot_scenario(stop_only, "6ms", "start = \"1ms\"")).unwrap();
        assert_eq!(e.path, "workload.onoff[0].start", "{e}");
    }

    #[test]
    fn threads_need_node_order() {
        let with_timing = |timing: &str| {
            format!(
                "name = \"t\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
                 link_rate = \"10Gbps\"\n[[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1000\n\
                 [timing]\n{timing}\n"
            )
        };
        for ok in [
            "threads = 1",
            "threads = 4\nties = \"node\"",
            "ties = \"node\"",
        ] {
            assert_eq!(error_of(&with_timing(ok)), None, "{ok}");
        }
        let e = error_of(&with_timing("threads = 0")).expect("0 threads");
        assert_eq!(
            (e.path.as_str(), e.line),
            ("timing.threads", Some(11)),
            "{e}"
        );
        assert!(e.message.contains("at least 1"), "{e}");
        let e = error_of(&with_timing("threads = 2")).expect("push order");
        assert_eq!(e.path, "timing.threads", "{e}");
        assert!(e.message.contains("add ties = \"node\""), "{e}");
        let threads = |timing: &str| {
            let text = with_timing(timing);
            Scenario::from_toml_str(&text, std::path::Path::new("."))
                .map(|sc| sc.config.timing.threads())
                .ok()
        };
        assert_eq!(threads("threads = 3\nties = \"node\""), Some(3));
        assert_eq!(threads("ties = \"node\""), Some(1));
    }

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

//! Queue-length time series (the `queues` table): the queued bytes of some
//! ports every `metrics.queue_sample_interval`, one engine event per tick
//! for all of them.
//!
//! Which ports, and how many points (`metrics.queue_ports`):
//! - `"top"` (the default) samples every switch port but keeps at most
//!   [`TOP_POINTS`] points: when the series is full, every other point is
//!   dropped and the interval doubles, so memory is `switch ports x
//!   TOP_POINTS` and the ticks are about `TOP_POINTS x (1 + log2(run /
//!   (TOP_POINTS x interval)) / 2)` whatever the run's length. At the end
//!   only the `queue_top` ports with the largest peak queue are written.
//! - `"switch"`, `"all"` and `"nodes"` keep every point of the ports they
//!   name; the scenario's validation refuses a run whose series would not fit
//!   ([`MAX_SAMPLES`](crate::params::queue_series::MAX_SAMPLES)).
//!
//! Every switch port's time-weighted mean, percentiles and peak are in the
//! `counters` table without any sampling (`net::port::ClassQueue::stats`).

use crate::metrics_table::{Column, Table};
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::{Ps, US};

pub use crate::params::queue_series::{name_matches, TOP_POINTS};

/// The sampled ports and their samples.
#[derive(Default)]
pub(crate) struct QueueSampler {
    pub interval: Ps,
    /// Global ids of the sampled ports.
    ports: Vec<u32>,
    /// Node id and local index of each sampled port.
    node: Vec<u32>,
    local: Vec<u32>,
    /// `Some(n)`: keep [`TOP_POINTS`] per port and write the `n` ports with the
    /// largest peak queue.
    top: Option<usize>,
    /// What the user asked for, for the summary.
    selection: String,
    /// Tick times.
    time: Vec<Ps>,
    /// `bytes[tick * ports.len() + i]`: port `i`'s queued bytes at tick.
    bytes: Vec<u64>,
    /// Likewise, the bytes port `i` has transmitted since the start (the
    /// difference of two ticks over their distance is its throughput).
    tx: Vec<u64>,
    /// Ticks run (the halving keeps fewer in `time`).
    pub ticks: u64,
    /// In a threaded run's partition: each kept port's place in the whole
    /// run's list ([`QueueSampler::keep_ports`]); empty otherwise.
    place: Vec<u32>,
}

impl QueueSampler {
    pub fn new(
        w: &World,
        interval: Ps,
        ports: Vec<u32>,
        top: Option<usize>,
        selection: String,
    ) -> Self {
        QueueSampler {
            interval,
            node: ports
                .iter()
                .map(|&p| w.node_of(w.ports[p as usize].owner()))
                .collect(),
            local: ports
                .iter()
                .map(|&p| w.ports[p as usize].local as u32)
                .collect(),
            ports,
            top,
            selection,
            ..Default::default()
        }
    }

    /// Whether it samples anything (ports, or a NIC model's series).
    pub fn samples(&self, w: &World) -> bool {
        !self.ports.is_empty() || crate::nic::samples(w)
    }

    /// Schedules the first tick (when there is anything to sample).
    pub fn start(&self, w: &mut World) {
        if self.samples(w) {
            w.q.push(0, Ev::Sample);
        }
    }

    /// A tick: every sampled port's queued bytes, and the NIC model's time
    /// series if it keeps one ([`crate::nic::NicModel::sample`]); the next
    /// tick unless traffic is over.
    pub fn on_tick(&mut self, w: &mut World, now: Ps, more_traffic: bool) {
        self.ticks += 1;
        if self.top.is_some() && self.time.len() == TOP_POINTS {
            self.halve();
            crate::nic::halve_series(w);
        }
        self.time.push(now);
        for &p in &self.ports {
            let port = &w.ports[p as usize];
            self.bytes.push(port.queued_bytes());
            self.tx.push(port.tx_bytes);
        }
        crate::nic::sample(w);
        if more_traffic {
            w.q.push(now + self.interval, Ev::Sample);
        }
    }

    /// A threaded run's partition samples only the ports it owns (the
    /// others' queues are not kept up to date in its world); the run's
    /// partitions are put back together by [`QueueSampler::merge`].
    pub fn keep_ports(&mut self, own: impl Fn(u32) -> bool) {
        let kept: Vec<usize> = (0..self.ports.len())
            .filter(|&i| own(self.ports[i]))
            .collect();
        self.place = kept.iter().map(|&i| i as u32).collect();
        self.ports = kept.iter().map(|&i| self.ports[i]).collect();
        self.node = kept.iter().map(|&i| self.node[i]).collect();
        self.local = kept.iter().map(|&i| self.local[i]).collect();
    }

    /// The partitions' samplers ([`QueueSampler::keep_ports`]) as the
    /// whole run's: their ticks are the same (each partition ticks at the
    /// same times, and a tick's next does not depend on the partition), the
    /// ports go back to their places.
    pub fn merge(parts: Vec<QueueSampler>) -> QueueSampler {
        let mut parts = parts.into_iter();
        let mut merged = parts.next().expect("one partition at least");
        let rest: Vec<QueueSampler> = parts.collect();
        if rest.is_empty() {
            merged.place.clear();
            return merged;
        }
        let all = [&merged].into_iter().chain(&rest);
        let n: usize = all.clone().map(|s| s.ports.len()).sum();
        // Where each place's samples are: (partition, index there).
        let mut from = vec![(0usize, 0usize); n];
        for (k, part) in all.clone().enumerate() {
            assert_eq!(part.time, merged.time, "partitions tick together");
            for (i, &place) in part.place.iter().enumerate() {
                from[place as usize] = (k, i);
            }
        }
        let parts: Vec<&QueueSampler> = all.collect();
        let ticks = merged.time.len();
        let (mut bytes, mut tx) = (Vec::with_capacity(ticks * n), Vec::with_capacity(ticks * n));
        for tick in 0..ticks {
            for &(k, i) in &from {
                let part = parts[k];
                let m = part.ports.len();
                bytes.push(part.bytes[tick * m + i]);
                tx.push(part.tx[tick * m + i]);
            }
        }
        let pick = |column: fn(&QueueSampler) -> &Vec<u32>| -> Vec<u32> {
            from.iter().map(|&(k, i)| column(parts[k])[i]).collect()
        };
        let (ports, node, local) = (pick(|s| &s.ports), pick(|s| &s.node), pick(|s| &s.local));
        QueueSampler {
            ports,
            node,
            local,
            bytes,
            tx,
            place: Vec::new(),
            ..merged
        }
    }

    /// Keeps every other tick (the even ones, so the kept ticks stay
    /// `interval` apart after it doubles).
    fn halve(&mut self) {
        let n = self.ports.len();
        let kept = self.time.len().div_ceil(2);
        for k in 0..kept {
            self.time[k] = self.time[2 * k];
            self.bytes.copy_within(2 * k * n..(2 * k + 1) * n, k * n);
            self.tx.copy_within(2 * k * n..(2 * k + 1) * n, k * n);
        }
        self.time.truncate(kept);
        self.bytes.truncate(kept * n);
        self.tx.truncate(kept * n);
        self.interval *= 2;
    }

    /// The ports written: all of them, or the `top` with the largest peak
    /// queue of any class (ties: the lower port id).
    fn written(&self, w: &World) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.ports.len()).collect();
        if let Some(n) = self.top {
            let peak = |i: usize| {
                let port = &w.ports[self.ports[i] as usize];
                port.queues.iter().map(|q| q.max_bytes).max().unwrap_or(0)
            };
            idx.retain(|&i| peak(i) > 0);
            idx.sort_by_key(|&i| (std::cmp::Reverse(peak(i)), self.ports[i]));
            idx.truncate(n);
            idx.sort_unstable();
        }
        idx
    }

    /// What was sampled, for the summary.
    pub fn describe(&self, w: &World) -> serde_json::Value {
        serde_json::json!({
            "ports": self.selection,
            "candidates": self.ports.len(),
            "written": self.written(w).len(),
            "points": self.time.len(),
            "interval_us": self.interval as f64 / US as f64,
        })
    }

    /// The `queues` table.
    pub fn into_table(self, w: &World) -> Table {
        let written = self.written(w);
        let n = self.ports.len();
        let rows = written.len() * self.time.len();
        let (mut time, mut node, mut port, mut bytes, mut tx) = (
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
        );
        for (k, &t) in self.time.iter().enumerate() {
            for &i in &written {
                time.push(t);
                node.push(self.node[i]);
                port.push(self.local[i]);
                bytes.push(self.bytes[k * n + i]);
                tx.push(self.tx[k * n + i]);
            }
        }
        let mut t = Table::default();
        t.push("time_ps", Column::U64(time));
        t.push("node", Column::U32(node));
        t.push("port", Column::U32(port));
        t.push("bytes", Column::U64(bytes));
        t.push("tx_bytes", Column::U64(tx));
        t
    }

    /// The tick times.
    pub fn times(&self) -> &[Ps] {
        &self.time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_keeps_even_ticks_and_doubles_the_interval() {
        let mut s = QueueSampler {
            interval: 10,
            ports: vec![0, 1],
            top: Some(1),
            time: (0..8).map(|k| k * 10).collect(),
            bytes: (0..16).collect(),
            tx: (100..116).collect(),
            ..Default::default()
        };
        s.halve();
        assert_eq!(s.time, vec![0, 20, 40, 60]);
        // Port 0 at ticks 0, 2, 4, 6 held 0, 4, 8, 12; port 1 one more.
        assert_eq!(s.bytes, vec![0, 1, 4, 5, 8, 9, 12, 13]);
        assert_eq!(s.tx, vec![100, 101, 104, 105, 108, 109, 112, 113]);
        assert_eq!(s.interval, 20);
        // The next tick (at 80) is one new interval after the last kept one.
    }
}

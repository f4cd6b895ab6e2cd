//! Queue-length time series: every sampled port's queued bytes at a fixed
//! interval (`metrics.queue_sample_interval`), one engine event per tick.

use crate::metrics_table::{Column, Table};
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::Ps;

/// The sampled ports and their samples.
#[derive(Default)]
pub(crate) struct QueueSampler {
    pub interval: Ps,
    /// Global ids of the sampled ports.
    pub ports: Vec<u32>,
    time: Vec<u64>,
    node: Vec<u32>,
    port: Vec<u32>,
    bytes: Vec<u64>,
}

impl QueueSampler {
    pub fn new(interval: Ps, ports: Vec<u32>) -> Self {
        QueueSampler {
            interval,
            ports,
            ..Default::default()
        }
    }

    /// Schedules the first tick (when there is anything to sample).
    pub fn start(&self, w: &mut World) {
        if !self.ports.is_empty() {
            w.q.push(0, Ev::Sample);
        }
    }

    /// A tick: one row per sampled port; the next tick unless traffic is over.
    pub fn on_tick(&mut self, w: &mut World, now: Ps, more_traffic: bool) {
        for &p in &self.ports {
            let port = &w.ports[p as usize];
            self.time.push(now);
            self.node.push(w.node_of(port.owner));
            self.port.push(port.local as u32);
            self.bytes.push(port.queued_bytes());
        }
        if more_traffic {
            w.q.push(now + self.interval, Ev::Sample);
        }
    }

    /// The `queues` table.
    pub fn into_table(self) -> Table {
        let mut t = Table::default();
        t.push("time_ps", Column::U64(self.time));
        t.push("node", Column::U32(self.node));
        t.push("port", Column::U32(self.port));
        t.push("bytes", Column::U64(self.bytes));
        t
    }
}

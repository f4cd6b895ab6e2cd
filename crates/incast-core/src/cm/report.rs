//! The `cm` result table: congestion management (`[cm]`), the adapter NIC
//! model and the input-partitioned switch memory over time, a point per
//! tick of the queue sampler ([`Series`], the adapter model's series
//! through its `NicModel::sample`, which reads the point's counters).

use crate::metrics_table::{Column, Table};
use crate::units::Ps;

/// One tick of the `cm` table: the adapters' and switches' state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Point {
    limited: u32,
    mean_rate: f64,
    min_rate: f64,
    feedback_sent: u64,
    feedback_received: u64,
    quenched: u64,
    input_drops: u64,
    hot_rx_bytes: u64,
}

impl Point {
    /// The point of the limiters' `rates` (b/s; the limited flows') and
    /// the running totals `[feedback sent, feedback received, quenched
    /// frames, input-partition drops]`, with `hot_rx_bytes` in the
    /// hotspots' receive buffers.
    pub fn new(rates: impl Iterator<Item = f64>, totals: [u64; 4], hot_rx_bytes: u64) -> Point {
        let (mut limited, mut sum, mut min) = (0u32, 0.0, f64::NAN);
        for rate in rates {
            let rate = rate / 1e9;
            limited += 1;
            sum += rate;
            min = if min.is_nan() { rate } else { min.min(rate) };
        }
        let [feedback_sent, feedback_received, quenched, input_drops] = totals;
        Point {
            limited,
            mean_rate: if limited > 0 {
                sum / limited as f64
            } else {
                f64::NAN
            },
            min_rate: min,
            feedback_sent,
            feedback_received,
            quenched,
            input_drops,
            hot_rx_bytes,
        }
    }
}

/// The `cm` table's points, one per sampler tick.
#[derive(Default)]
pub(crate) struct Series {
    points: Vec<Point>,
}

impl Series {
    /// A tick's point.
    pub fn push(&mut self, point: Point) {
        self.points.push(point);
    }

    /// The sampler kept its even ticks: so does the series.
    pub fn halve(&mut self) {
        let kept = self.points.len().div_ceil(2);
        for k in 0..kept {
            self.points[k] = self.points[2 * k];
        }
        self.points.truncate(kept);
    }

    /// The `cm` table (its columns without rows, without points): per tick (`times`, the
    /// sampler's), the limited flows and their mean and lowest rate (Gb/s),
    /// and running totals of feedback frames sent and received, quenched
    /// frames and input-partition drops, and the bytes in the hotspots'
    /// receive buffers.
    pub fn table(&self, times: &[Ps]) -> Table {
        let mut t = Table::default();
        let points = &self.points;
        let col = |f: &dyn Fn(&Point) -> u64| points.iter().map(f).collect::<Vec<u64>>();
        let colf = |f: &dyn Fn(&Point) -> f64| points.iter().map(f).collect::<Vec<f64>>();
        t.push("time_ps", Column::U64(times[..points.len()].to_vec()));
        t.push(
            "limited_flows",
            Column::U32(points.iter().map(|p| p.limited).collect()),
        );
        t.push("mean_rate_gbps", Column::F64(colf(&|p| p.mean_rate)));
        t.push("min_rate_gbps", Column::F64(colf(&|p| p.min_rate)));
        t.push("feedback_sent", Column::U64(col(&|p| p.feedback_sent)));
        t.push(
            "feedback_received",
            Column::U64(col(&|p| p.feedback_received)),
        );
        t.push("quenched_frames", Column::U64(col(&|p| p.quenched)));
        t.push("input_dropped_frames", Column::U64(col(&|p| p.input_drops)));
        t.push("hot_rx_bytes", Column::U64(col(&|p| p.hot_rx_bytes)));
        t
    }
}

//! The `cm` result table: congestion management (`[cm]`), the adapter NIC
//! model and the input-partitioned switch memory over time, a point per
//! tick of the queue sampler ([`Series`], the adapter model's series
//! through its `NicModel::sample`, which reads the point's counters).

use crate::metrics_table::{Column, Table};
use crate::units::Ps;

/// A sum of non-negative rates in b/s, exact: each rate in fixed point,
/// 2^-64 b/s per unit (a rate of 1 b/s or more, as every limiter's is, is
/// an integer there). An `i128` holds sums up to 2^63 b/s: the adapter's
/// most flows (16.7 M, one per pair of 4096 hosts) at up to 500 Gb/s each. The sum of a set
/// of rates does not depend on the order they are added in, so partitions'
/// sums merge into the one-thread run's ([`crate::sim::threaded`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RateSum(i128);

impl RateSum {
    const ONE: f64 = 18_446_744_073_709_551_616.0; // 2^64

    pub fn add(&mut self, rate: f64) {
        self.0 += (rate * Self::ONE) as i128;
    }

    pub fn merge(&mut self, other: RateSum) {
        self.0 += other.0;
    }

    /// The mean of `n` rates summed here, in Gb/s (NaN for none).
    pub fn mean_gbps(self, n: u32) -> f64 {
        match n {
            0 => f64::NAN,
            n => self.0 as f64 / Self::ONE / 1e9 / n as f64,
        }
    }
}

/// One tick of the `cm` table: the adapters' and switches' state. The
/// points of a threaded run's partitions add up ([`Point::merge`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Point {
    limited: u32,
    rate_sum: RateSum,
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
        let (mut limited, mut rate_sum, mut min) = (0u32, RateSum::default(), f64::NAN);
        for rate in rates {
            limited += 1;
            rate_sum.add(rate);
            min = min.min(rate / 1e9); // `f64::min` takes the number over NaN
        }
        let [feedback_sent, feedback_received, quenched, input_drops] = totals;
        Point {
            limited,
            rate_sum,
            min_rate: min,
            feedback_sent,
            feedback_received,
            quenched,
            input_drops,
            hot_rx_bytes,
        }
    }

    /// Adds another partition's point of the same tick: its limiters, its
    /// counts and its bytes (each partition counts only its own NICs and
    /// switches).
    pub fn merge(&mut self, other: &Point) {
        self.limited += other.limited;
        self.rate_sum.merge(other.rate_sum);
        self.min_rate = self.min_rate.min(other.min_rate);
        self.feedback_sent += other.feedback_sent;
        self.feedback_received += other.feedback_received;
        self.quenched += other.quenched;
        self.input_drops += other.input_drops;
        self.hot_rx_bytes += other.hot_rx_bytes;
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

    /// Adds another partition's series, tick by tick (every partition
    /// samples at the same ticks).
    pub fn merge(&mut self, other: &Series) {
        debug_assert_eq!(self.points.len(), other.points.len(), "ticks");
        for (mine, theirs) in self.points.iter_mut().zip(&other.points) {
            mine.merge(theirs);
        }
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
        let mean = |p: &Point| p.rate_sum.mean_gbps(p.limited);
        t.push("mean_rate_gbps", Column::F64(colf(&mean)));
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

//! What congestion management (`[cm]`), the adapter NIC model and the
//! input-partitioned switch memory report: the summary's `cm` section
//! ([`summary`]: issue 19's counters: feedback frames sent and received,
//! probes, quenches, the limiters' rates at the end, receive-buffer and
//! input-partition PAUSEs) and the `cm` result table, a time series at the
//! queue sampler's ticks ([`Series`], the adapter model's series through
//! [`crate::nic::NicModel::sample`]).

use crate::metrics_table::{Column, Table};
use crate::sim::world::World;
use crate::units::Ps;
use serde_json::{json, Value};

/// One tick of the `cm` table: the adapters' and switches' state.
#[derive(Clone, Copy, Debug, Default)]
struct Point {
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
    fn of(w: &World) -> Option<Point> {
        let st = w.nic_state.adapter.as_deref()?;
        let (mut limited, mut sum, mut min) = (0u32, 0.0, f64::NAN);
        for rate in st.limited_rates() {
            let rate = rate / 1e9;
            limited += 1;
            sum += rate;
            min = if min.is_nan() { rate } else { min.min(rate) };
        }
        let input_drops = w
            .mechs
            .cm
            .inputs
            .iter()
            .flat_map(|i| i.all_stats())
            .map(|s| s.dropped_frames)
            .sum();
        Some(Point {
            limited,
            mean_rate: if limited > 0 {
                sum / limited as f64
            } else {
                f64::NAN
            },
            min_rate: min,
            feedback_sent: st.feedback_sent,
            feedback_received: st.totals.feedback_received,
            quenched: st.totals.quenched_frames,
            input_drops,
            hot_rx_bytes: st.rx_occupancy(),
        })
    }
}

/// The `cm` table's points, one per sampler tick.
#[derive(Default)]
pub(crate) struct Series {
    points: Vec<Point>,
}

impl Series {
    /// A tick: the state now (nothing without the adapter model).
    pub fn sample(w: &mut World) {
        if let Some(point) = Point::of(w) {
            if let Some(st) = w.nic_state.adapter.as_deref_mut() {
                st.series.points.push(point);
            }
        }
    }

    /// The sampler kept its even ticks: so does the series.
    pub fn halve(&mut self) {
        let kept = self.points.len().div_ceil(2);
        for k in 0..kept {
            self.points[k] = self.points[2 * k];
        }
        self.points.truncate(kept);
    }

    /// The `cm` table (empty without points): per tick (`times`, the
    /// sampler's), the limited flows and their mean and lowest rate (Gb/s),
    /// and running totals of feedback frames sent and received, quenched
    /// frames and input-partition drops, and the bytes in the hotspots'
    /// receive buffers.
    pub fn table(&self, times: &[Ps]) -> Table {
        let mut t = Table::default();
        let points = &self.points;
        if points.is_empty() {
            return t;
        }
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

/// `None` when the run has neither the adapter model nor input partitions.
pub(crate) fn summary(w: &World) -> Option<Value> {
    let inputs = &w.mechs.cm.inputs;
    if w.nic_state.adapter.is_none() && inputs.is_empty() {
        return None;
    }
    let mut out = json!({});
    if let Some(st) = w.nic_state.adapter.as_deref() {
        let t = &st.totals;
        let limited: Vec<f64> = st.limited_rates().map(|r| r / 1e9).collect();
        let mean = if limited.is_empty() {
            None
        } else {
            Some(limited.iter().sum::<f64>() / limited.len() as f64)
        };
        let rx: Vec<Value> = st
            .hotspots
            .iter()
            .map(|h| {
                let rx = st.rx[h.nic as usize].as_deref().expect("rx buffer");
                let s = rx.stats();
                json!({
                    "host": w.nics[h.nic as usize].node,
                    "service_gbps": h.rate.bits_per_sec() as f64 / 1e9,
                    "start_us": crate::units::ps_to_us(h.start),
                    "end_us": h.end.map(crate::units::ps_to_us),
                    "pauses": s.pauses,
                    "peak_bytes": s.peak,
                    "overflow_frames": s.overflow_frames,
                    "consumed_bytes": s.bytes_consumed,
                })
            })
            .collect();
        let largest_cut = st
            .rps
            .iter()
            .filter_map(|r| match &r.rp {
                crate::cm::scheme::AnyRp::Qcn(q) => Some(q.stats.largest_cut),
                _ => None,
            })
            .reduce(f64::max);
        out = json!({
            "scheme": st.cm.name(),
            "largest_cut": largest_cut,
            "feedback_sent": st.feedback_sent,
            "feedback_received": t.feedback_received,
            "probes_sent": t.probes_sent,
            "echoes_received": t.echoes_received,
            "quenched_frames": t.quenched_frames,
            "quenched_bytes": t.quenched_bytes,
            "reaction_points": st.rps.len(),
            "limited_at_end": limited.len(),
            "limited_rate_gbps": {
                "mean": mean,
                "min": limited.iter().copied().reduce(f64::min),
                "max": limited.iter().copied().reduce(f64::max),
            },
            "receive_buffers": rx,
            "receive_overflow_frames": t.rx_overflow_frames,
        });
    }
    if !inputs.is_empty() {
        let stats = inputs.iter().flat_map(|i| i.all_stats());
        let (mut drops, mut dropped_bytes, mut pauses, mut peak) = (0u64, 0u64, 0u64, 0u64);
        for s in stats {
            drops += s.dropped_frames;
            dropped_bytes += s.dropped_bytes;
            pauses += s.pauses;
            peak = peak.max(s.peak);
        }
        out["input_buffers"] = json!({
            "dropped_frames": drops,
            "dropped_bytes": dropped_bytes,
            "pauses": pauses,
            "peak_bytes": peak,
        });
    }
    Some(out)
}

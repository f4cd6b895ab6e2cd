//! Metrics: per-flow records, the ideal (standalone) FCT, and summaries.
//!
//! **Ideal FCT** follows the HPCC simulator's `qp_finish` (scratch/third.cc)
//! so that slowdowns can be compared with published HPCC/ConWeave results:
//!
//! ```text
//! base_rtt = 2 * sum(prop delay over the path) + sum over hops of (mss * 8 / rate_hop)
//! total    = size + ceil(size / mss) * header          # wire bytes of the data
//! ideal    = base_rtt + total * 8 / min(rate over the path)
//! slowdown = max(1, fct / ideal)
//! ```
//!
//! where `mss` is the payload of a full segment (HPCC: 1000 B) and `header`
//! the per-packet header (HPCC: 48 B). FCT is measured at the sender, from
//! the flow's start to the ACK of its last byte (as in HPCC).
//!
//! **Percentiles** interpolate linearly between order statistics (numpy's
//! default method): `p` of `n` sorted values is at rank `p * (n - 1)`.

pub mod conservation;
#[cfg(any(test, feature = "examples"))]
mod example_node_load;
pub(crate) mod extra_tables;
pub(crate) mod result_table;
pub(crate) mod sampler;
pub(crate) mod summary;
pub(crate) mod tables;

use crate::metrics_table::{Column, Table};
use crate::units::{ps_to_us, Bytes, Ps};
use serde::Serialize;

/// Linear-interpolation percentile of sorted values (`q` in [0, 1]).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = q * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// Mean and percentiles of a sample.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Stats {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(values: &mut [f64]) -> Option<Stats> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        Some(Stats {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            p50: percentile(values, 0.5),
            p95: percentile(values, 0.95),
            p99: percentile(values, 0.99),
            p999: percentile(values, 0.999),
            max: *values.last().unwrap(),
        })
    }
}

/// The flows table's `finished` of a flow stopped at its `stop` (a bulk
/// on-period, a long-lived flow, a sized flow cut before its last byte):
/// 1 is finished (its last byte acknowledged), 0 still running at the end.
pub const FINISHED_STOPPED: u8 = 2;

/// The flows table's columns that features contribute (a switch
/// mechanism's `FLOW_COLUMNS`, [`crate::mech::SwitchMechanism`]): a count
/// per flow each, named by the feature, in registry order after
/// `edge_paused_ps`. The feature keeps its per-flow state itself and
/// appends each column's value when a flow's record is written
/// ([`crate::mech::flow_record`]).
#[derive(Default)]
pub struct FeatureColumns {
    pub names: Vec<&'static str>,
    /// One column per name, a value per record.
    pub values: Vec<Vec<u32>>,
}

impl FeatureColumns {
    /// Empty columns named `names`.
    pub fn new(names: Vec<&'static str>) -> Self {
        let values = vec![Vec::new(); names.len()];
        FeatureColumns { names, values }
    }
}

/// Per-flow records in columns, appended when a flow finishes (or at the end, unfinished).
#[derive(Default)]
pub struct FlowRecords {
    pub flow_id: Vec<u64>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size: Vec<u64>,
    pub start: Vec<u64>,
    pub finish: Vec<u64>,
    pub fct: Vec<u64>,
    pub ideal: Vec<u64>,
    pub slowdown: Vec<f64>,
    pub finished: Vec<u8>,
    pub class: Vec<u8>,
    pub kind: Vec<u8>,
    pub cc: Vec<u8>,
    pub incast: Vec<i64>,
    pub retransmits: Vec<u32>,
    pub timeouts: Vec<u32>,
    pub edge_pauses: Vec<u32>,
    pub edge_paused_ps: Vec<u64>,
    /// The columns features contribute, after `edge_paused_ps` ([`FeatureColumns`]).
    pub features: FeatureColumns,
    pub cnps: Vec<u32>,
    pub ce_marks: Vec<u32>,
    pub measured: Vec<u8>,
    /// The flow-table slot each record's flow had (not a column of the
    /// table: node order fills the receiver's counts from it at the end).
    pub slot: Vec<u32>,
}

/// One flow's record.
pub struct FlowRecord {
    pub flow_id: u64,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Ps,
    pub finish: Option<Ps>,
    /// Stopped at `finish` (its `stop`) rather than finished: `finished` is
    /// 2, and it has no ideal FCT (0) and no slowdown (NaN).
    pub stopped: bool,
    pub ideal: Ps,
    pub class: u8,
    pub kind: u8,
    /// Its TCP congestion control: an index in the summary's `congestion_controls`.
    pub cc: u8,
    pub incast: i64,
    pub retransmits: u32,
    pub timeouts: u32,
    /// Edge-pausing decisions that closed or extended the flow's gate.
    pub edge_pauses: u32,
    /// Time the flow's gate was closed.
    pub edge_paused_ps: u64,
    /// RDMA: CNPs its receiver sent.
    pub cnps: u32,
    /// TCP: data segments its receiver got marked CE (ECN, RFC 3168).
    pub ce_marks: u32,
    pub measured: bool,
    /// Its flow-table slot ([`FlowRecords::slot`]).
    pub slot: u32,
}

impl FlowRecords {
    pub fn push(&mut self, r: FlowRecord) {
        self.flow_id.push(r.flow_id);
        self.src.push(r.src);
        self.dst.push(r.dst);
        self.size.push(r.size);
        self.start.push(r.start);
        let (finish, fct, sd) = match r.finish {
            Some(f) if r.stopped => (f, f - r.start, f64::NAN),
            Some(f) => {
                let fct = f - r.start;
                (f, fct, (fct as f64 / r.ideal as f64).max(1.0))
            }
            None => (0, 0, f64::NAN),
        };
        self.finish.push(finish);
        self.fct.push(fct);
        self.ideal.push(if r.stopped { 0 } else { r.ideal });
        self.slowdown.push(sd);
        self.finished.push(match (r.finish, r.stopped) {
            (Some(_), true) => FINISHED_STOPPED,
            (Some(_), false) => 1,
            (None, _) => 0,
        });
        self.class.push(r.class);
        self.kind.push(r.kind);
        self.cc.push(r.cc);
        self.incast.push(r.incast);
        self.retransmits.push(r.retransmits);
        self.timeouts.push(r.timeouts);
        self.edge_pauses.push(r.edge_pauses);
        self.edge_paused_ps.push(r.edge_paused_ps);
        self.cnps.push(r.cnps);
        self.ce_marks.push(r.ce_marks);
        self.measured.push(r.measured as u8);
        self.slot.push(r.slot);
    }

    /// Appends `other`'s records after these (a threaded run's partitions'
    /// records, [`crate::sim::threaded`]); rows are ordered by flow id later.
    pub fn append(&mut self, mut other: FlowRecords) {
        self.flow_id.append(&mut other.flow_id);
        self.src.append(&mut other.src);
        self.dst.append(&mut other.dst);
        self.size.append(&mut other.size);
        self.start.append(&mut other.start);
        self.finish.append(&mut other.finish);
        self.fct.append(&mut other.fct);
        self.ideal.append(&mut other.ideal);
        self.slowdown.append(&mut other.slowdown);
        self.finished.append(&mut other.finished);
        self.class.append(&mut other.class);
        self.kind.append(&mut other.kind);
        self.cc.append(&mut other.cc);
        self.incast.append(&mut other.incast);
        self.retransmits.append(&mut other.retransmits);
        self.timeouts.append(&mut other.timeouts);
        self.edge_pauses.append(&mut other.edge_pauses);
        self.edge_paused_ps.append(&mut other.edge_paused_ps);
        for (mine, theirs) in self
            .features
            .values
            .iter_mut()
            .zip(&mut other.features.values)
        {
            mine.append(theirs);
        }
        self.cnps.append(&mut other.cnps);
        self.ce_marks.append(&mut other.ce_marks);
        self.measured.append(&mut other.measured);
        self.slot.append(&mut other.slot);
    }

    pub fn len(&self) -> usize {
        self.flow_id.len()
    }
    pub fn is_empty(&self) -> bool {
        self.flow_id.is_empty()
    }

    /// The records as a table, sorted by flow id (so the row order does not depend on finish order).
    pub fn into_table(self) -> Table {
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by_key(|&i| self.flow_id[i]);
        fn pick<T: Copy>(v: &[T], o: &[usize]) -> Vec<T> {
            o.iter().map(|&i| v[i]).collect()
        }
        let mut t = Table::default();
        t.push("flow_id", Column::U64(pick(&self.flow_id, &order)));
        t.push("src", Column::U32(pick(&self.src, &order)));
        t.push("dst", Column::U32(pick(&self.dst, &order)));
        t.push("size_bytes", Column::U64(pick(&self.size, &order)));
        t.push("start_ps", Column::U64(pick(&self.start, &order)));
        t.push("finish_ps", Column::U64(pick(&self.finish, &order)));
        t.push("fct_ps", Column::U64(pick(&self.fct, &order)));
        t.push("ideal_fct_ps", Column::U64(pick(&self.ideal, &order)));
        t.push("slowdown", Column::F64(pick(&self.slowdown, &order)));
        t.push("finished", Column::U8(pick(&self.finished, &order)));
        t.push("class", Column::U8(pick(&self.class, &order)));
        t.push("kind", Column::U8(pick(&self.kind, &order)));
        t.push("cc", Column::U8(pick(&self.cc, &order)));
        t.push("incast_id", Column::I64(pick(&self.incast, &order)));
        t.push("retransmits", Column::U32(pick(&self.retransmits, &order)));
        t.push("timeouts", Column::U32(pick(&self.timeouts, &order)));
        t.push("edge_pauses", Column::U32(pick(&self.edge_pauses, &order)));
        t.push(
            "edge_paused_ps",
            Column::U64(pick(&self.edge_paused_ps, &order)),
        );
        for (name, values) in self.features.names.iter().zip(&self.features.values) {
            t.push(name, Column::U32(pick(values, &order)));
        }
        t.push("cnps", Column::U32(pick(&self.cnps, &order)));
        t.push("ce_marks", Column::U32(pick(&self.ce_marks, &order)));
        t.push("measured", Column::U8(pick(&self.measured, &order)));
        t
    }
}

/// Summary statistics of one size bucket.
#[derive(Clone, Debug, Serialize)]
pub struct Bucket {
    pub label: String,
    pub lo: Bytes,
    pub hi: Option<Bytes>,
    pub count: usize,
    pub slowdown: Option<Stats>,
    pub fct_us: Option<Stats>,
}

fn size_label(b: Bytes) -> String {
    if b >= 1_000_000 && b % 1_000_000 == 0 {
        format!("{}MB", b / 1_000_000)
    } else if b >= 1000 && b % 1000 == 0 {
        format!("{}KB", b / 1000)
    } else {
        format!("{b}B")
    }
}

/// Slowdown and FCT statistics per size bucket over the measured, finished flows of a flow table.
pub fn buckets(flows: &Table, edges: &[Bytes]) -> (Vec<Bucket>, Option<Bucket>) {
    buckets_of(flows, edges, |_| true)
}

/// [`buckets`] over the rows `keep(row)` selects (e.g. background flows only).
pub fn buckets_of(
    flows: &Table,
    edges: &[Bytes],
    keep: impl Fn(usize) -> bool,
) -> (Vec<Bucket>, Option<Bucket>) {
    let size = flows.u64s("size_bytes");
    let sd = flows.f64s("slowdown");
    let fct = flows.u64s("fct_ps");
    let fin = flows.u8s("finished");
    let measured = flows.u8s("measured");
    let mut out = vec![];
    let mut lo = 0;
    let mut bounds: Vec<(Bytes, Option<Bytes>)> = edges
        .iter()
        .map(|&e| {
            let b = (lo, Some(e));
            lo = e;
            b
        })
        .collect();
    bounds.push((lo, None));
    let stats_for = |label: String, lo: Bytes, hi: Option<Bytes>| {
        let idx: Vec<usize> = (0..size.len())
            .filter(|&i| {
                fin[i] == 1
                    && measured[i] == 1
                    && size[i] >= lo
                    && hi.is_none_or(|h| size[i] < h)
                    && keep(i)
            })
            .collect();
        let mut s: Vec<f64> = idx.iter().map(|&i| sd[i]).collect();
        let mut f: Vec<f64> = idx.iter().map(|&i| ps_to_us(fct[i])).collect();
        Bucket {
            label,
            lo,
            hi,
            count: idx.len(),
            slowdown: Stats::of(&mut s),
            fct_us: Stats::of(&mut f),
        }
    };
    for (lo, hi) in bounds {
        let label = match (lo, hi) {
            (0, Some(h)) => format!("<{}", size_label(h)),
            (l, Some(h)) => format!("{}-{}", size_label(l), size_label(h)),
            (l, None) => format!(">={}", size_label(l)),
        };
        out.push(stats_for(label, lo, hi));
    }
    let overall = stats_for("all".into(), 0, None);
    (out, Some(overall))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_matches_numpy_linear() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 2.5); // numpy.percentile([1,2,3,4], 50) = 2.5
        assert!((percentile(&v, 0.99) - 3.97).abs() < 1e-12); // numpy: 3.97
        assert_eq!(percentile(&v, 0.0), 1.0);
        assert_eq!(percentile(&v, 1.0), 4.0);
        assert_eq!(percentile(&[7.0], 0.9), 7.0);
    }

    #[test]
    fn buckets_split_by_size() {
        let mut r = FlowRecords::default();
        for (i, size) in [50_000u64, 150_000, 5_000_000, 60_000].iter().enumerate() {
            r.push(FlowRecord {
                flow_id: i as u64,
                src: 0,
                dst: 1,
                size: *size,
                start: 0,
                finish: Some(1_000_000 * (i as u64 + 1)),
                stopped: false,
                ideal: 1_000_000,
                class: 0,
                kind: 0,
                cc: 0,
                incast: -1,
                retransmits: 0,
                timeouts: 0,
                edge_pauses: 0,
                edge_paused_ps: 0,
                cnps: 0,
                ce_marks: 0,
                measured: true,
                slot: 0,
            });
        }
        let t = r.into_table();
        let (b, all) = buckets(&t, &[100_000, 1_000_000]);
        assert_eq!(b.iter().map(|b| b.count).collect::<Vec<_>>(), vec![2, 1, 1]);
        assert_eq!(b[0].label, "<100KB");
        assert_eq!(b[1].label, "100KB-1MB");
        assert_eq!(b[2].label, ">=1MB");
        assert_eq!(b[0].slowdown.unwrap().mean, 2.5); // slowdowns 1 and 4
        assert_eq!(all.unwrap().count, 4);
    }
}

/// Engine statistics of a run.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RunStats {
    pub events: u64,
    /// Packet arrivals at the far end of a link (one event each).
    pub packet_hops: u64,
    /// Ends of transmission at a port with more to send (one event each).
    /// With `packet_hops`, most of `events`: the rest are timers and
    /// generators.
    pub tx_done_events: u64,
    pub sim_time_ps: Ps,
    pub wall_seconds: f64,
    pub peak_packets: u64,
    pub peak_flows: u64,
}

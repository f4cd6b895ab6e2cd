//! The `cm` section of the summary: congestion management (`[cm]`), the
//! adapter NIC model and the input-partitioned switch memory (issue 19's
//! counters: feedback frames sent and received, probes, quenches, the
//! limiters' rates at the end, receive-buffer and input-partition PAUSEs).

use crate::sim::world::World;
use serde_json::{json, Value};

/// `None` when the run has neither the adapter model nor input partitions.
pub(crate) fn summary(w: &World) -> Option<Value> {
    let inputs = &w.mechs.cm.inputs;
    if w.cm.is_none() && inputs.is_empty() {
        return None;
    }
    let mut out = json!({});
    if let Some(st) = w.cm.as_deref() {
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

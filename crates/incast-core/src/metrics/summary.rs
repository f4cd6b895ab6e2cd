//! The run summary (`summary.json`): FCT slowdown by size bucket, drops,
//! marks, retransmissions, incasts, utilization, engine counts, and each
//! switch mechanism's section ([`crate::mech::SwitchMechanism::report`]).

use super::RunStats;
use super::{buckets, buckets_of, Stats, FINISHED_STOPPED};
use crate::host::{KIND_INCAST, KIND_LISTED};
use crate::metrics_table::Table;
use crate::sim::world::World;
use crate::units::{ps_to_us, Ps};

/// The result tables a summary is computed from.
pub(crate) struct Tables<'a> {
    pub flows: &'a Table,
    pub counters: &'a Table,
    pub ports: &'a Table,
    pub incasts: &'a Table,
}

/// The summary's common part (mechanisms and edge pausing add theirs).
pub(crate) fn summary(
    w: &World,
    name: &str,
    t: &Tables,
    stats: &RunStats,
    window: (Ps, Ps),
) -> serde_json::Value {
    let (flows, counters, ports, incasts) = (t.flows, t.counters, t.ports, t.incasts);
    let size_buckets = &w.flows.size_buckets;
    let (buckets, overall) = buckets(flows, size_buckets);
    // With incasts and other traffic, also the other traffic alone: the
    // papers plot background FCT without the incast flows.
    let kind = flows.u8s("kind");
    let background = (kind.contains(&KIND_INCAST) && kind.iter().any(|&k| k != KIND_INCAST))
        .then(|| buckets_of(flows, size_buckets, |i| kind[i] != KIND_INCAST).0);
    let fin = flows.u8s("finished");
    let measured = flows
        .u8s("measured")
        .iter()
        .zip(fin)
        .filter(|(m, f)| **m == 1 && **f == 1)
        .count();
    let sum_u64 = |t: &Table, c: &str| t.u64s(c).iter().sum::<u64>();
    let sum_u32 = |t: &Table, c: &str| t.u32s(c).iter().map(|&x| x as u64).sum::<u64>();
    let mut ic: Vec<f64> = incasts
        .u64s("completion_ps")
        .iter()
        .zip(incasts.u8s("finished"))
        .filter(|(_, f)| **f == 1)
        .map(|(c, _)| ps_to_us(*c))
        .collect();
    let n_hosts = w.host_nic.len() as u32;
    let util = ports.f64s("utilization");
    let nodes = ports.u32s("node");
    let sw_util: Vec<f64> = util
        .iter()
        .zip(nodes)
        .filter(|(_, n)| **n >= n_hosts)
        .map(|(u, _)| *u)
        .collect();
    let mut summary = serde_json::json!({
        "scenario": name,
        "seed": w.seed,
        "sim_time_us": ps_to_us(stats.sim_time_ps),
        "flows": {
            "total": fin.len(),
            "finished": fin.iter().filter(|&&f| f == 1).count(),
            "unfinished": fin.iter().filter(|&&f| f == 0).count(),
            "measured": measured,
        },
        "buckets": buckets,
        "overall": overall,
        "buckets_background": background,
        "drops": {"packets": sum_u64(counters, "drop_pkts"), "bytes": sum_u64(counters, "drop_bytes")},
        "ecn_marks": sum_u64(counters, "ecn_marks"),
        "retransmits": sum_u32(flows, "retransmits"),
        "cnps": sum_u32(flows, "cnps"),
        "out_of_order_arrivals": w.counters.out_of_order,
        "timeouts": sum_u32(flows, "timeouts"),
        "incasts": {
            "count": incasts.rows(),
            "finished": ic.len(),
            "completion_us": Stats::of(&mut ic),
        },
        "utilization": {
            "max": util.iter().cloned().fold(0.0, f64::max),
            "mean_switch_ports": if sw_util.is_empty() { 0.0 } else { sw_util.iter().sum::<f64>() / sw_util.len() as f64 },
            // Busy time over the window in which the workload offered traffic.
            "window_us": [ps_to_us(window.0), ps_to_us(window.1)],
        },
        "engine": {"events": stats.events, "packet_hops": stats.packet_hops, "peak_packets": stats.peak_packets, "peak_flows": stats.peak_flows},
    });
    if w.rdma.is_none() {
        by_congestion_control(w, flows, &mut summary);
    }
    stopped_flows(flows, &mut summary);
    summary
}

/// Flows stopped at their `stop` (bulk on-periods, long-lived or cut
/// flows), when the run has any: how many, the bytes their receivers got,
/// and their mean goodput over their lifetimes. They have no slowdown, so
/// the buckets leave them out.
fn stopped_flows(flows: &Table, summary: &mut serde_json::Value) {
    let fin = flows.u8s("finished");
    let rows: Vec<usize> = (0..fin.len())
        .filter(|&i| fin[i] == FINISHED_STOPPED)
        .collect();
    if rows.is_empty() {
        return;
    }
    let size = flows.u64s("size_bytes");
    let fct = flows.u64s("fct_ps");
    let bytes: u64 = rows.iter().map(|&i| size[i]).sum();
    let mut gbps: Vec<f64> = rows
        .iter()
        .map(|&i| size[i] as f64 * 8.0 / (fct[i] as f64 * 1e-12) / 1e9)
        .collect();
    summary["flows"]["stopped"] = rows.len().into();
    summary["stopped_flows"] = serde_json::json!({
        "count": rows.len(),
        "bytes": bytes,
        "goodput_gbps": Stats::of(&mut gbps),
    });
}

/// The TCP congestion controls of the run (`congestion_controls`: the
/// flows table's `cc` codes, `transport.cc` first) and, when workload
/// groups name their own, the slowdown by size bucket of each (`by_cc`).
fn by_congestion_control(w: &World, flows: &Table, summary: &mut serde_json::Value) {
    let mut names: Vec<String> = vec![];
    for cc in &w.ccs {
        let value = serde_json::to_value(cc).unwrap_or_default();
        let base = value
            .as_str()
            .or_else(|| value["algorithm"].as_str())
            .unwrap_or("cc")
            .to_string();
        // The same algorithm with other parameters: name#2, name#3, ...
        let same = names
            .iter()
            .filter(|n| n.split('#').next() == Some(&base))
            .count();
        names.push(if same == 0 {
            base
        } else {
            format!("{base}#{}", same + 1)
        });
    }
    if names.len() > 1 {
        let cc = flows.u8s("cc");
        let mut by = serde_json::Map::new();
        for (k, name) in names.iter().enumerate() {
            let (buckets, overall) =
                buckets_of(flows, &w.flows.size_buckets, |i| cc[i] as usize == k);
            let count = cc.iter().filter(|&&c| c as usize == k).count();
            by.insert(
                name.clone(),
                serde_json::json!({"flows": count, "buckets": buckets, "overall": overall}),
            );
        }
        summary["by_cc"] = by.into();
    }
    summary["congestion_controls"] = names.into();
}

/// What a reader must know about a run's results: flows left unfinished,
/// and why when the run can tell.
pub(crate) fn warnings(w: &World, t: &Tables, stopped_at: Option<Ps>, stop: Ps) -> Vec<String> {
    let mut out = vec![];
    let flows = t.flows;
    for (on, name) in [(w.ndp.is_some(), "NDP"), (w.eqds.is_some(), "EQDS")] {
        if let Some(w) = on.then(|| untrimmed(w, flows, name)).flatten() {
            out.push(w);
        }
    }
    let fin = flows.u8s("finished");
    let unfinished: Vec<usize> = (0..fin.len()).filter(|&i| fin[i] == 0).collect();
    if !unfinished.is_empty() {
        let n = unfinished.len();
        let why = match stopped_at {
            Some(s) => format!(
                "the run reached `stop` = {} us with them still running: raise `stop` to let them finish",
                ps_to_us(s)
            ),
            None => format!(
                "nothing was left to happen before `stop` = {} us, so they could never finish \
                 (a deadlock, or packets lost with no timer to recover them)",
                ps_to_us(stop)
            ),
        };
        out.push(format!("{n} of {} flows did not finish: {why}", fin.len()));
        let timeouts = flows.u32s("timeouts");
        let with_rto = unfinished.iter().filter(|&&i| timeouts[i] > 0).count();
        if with_rto > 0 {
            out.push(format!(
                "{with_rto} of the unfinished flows had retransmission timeouts: their packets (or ACKs) were dropped"
            ));
        }
    }
    // A listed flow may start after the traffic's end; it runs, but the
    // measurement window leaves it out of every slowdown table.
    let end = w.flows.measure_end;
    if end != Ps::MAX {
        let (kind, start) = (flows.u8s("kind"), flows.u64s("start_ps"));
        let late = (0..kind.len())
            .filter(|&i| kind[i] == KIND_LISTED && start[i] >= end)
            .count();
        if late > 0 {
            out.push(format!(
                "{late} listed flows start at or after {} us, the end of the measurement window \
                 (`duration` - `metrics.cooldown`): they run but are left out of the slowdown \
                 tables; start them earlier or make `duration` longer",
                ps_to_us(end)
            ));
        }
    }
    if w.mechs.pfc.lossless_drops > 0 {
        out.push(format!(
            "{} packets of lossless (PFC) classes were dropped: the headroom or the buffer overflowed; \
             give `switch.pfc.headroom` (or `switch.buffer`) more room",
            w.mechs.pfc.lossless_drops
        ));
    }
    out
}

/// NDP and EQDS rely on trimming (NDP: Handley et al., SIGCOMM 2017,
/// §3.1; EQDS: Olteanu et al., NSDI 2022, §4.3): the warning when some
/// flow of the pull transport `name` is in a class that is not trimmed
/// (`[switch.trim]`), so that each of its losses waits for the RTO.
fn untrimmed(w: &World, flows: &Table, name: &str) -> Option<String> {
    let (cc, class) = (flows.u8s("cc"), flows.u8s("class"));
    let untrimmed: std::collections::BTreeSet<u8> = (0..cc.len())
        .filter(|&i| w.ccs[cc[i] as usize].pull_transport() == Some(name))
        .map(|i| class[i])
        .filter(|&c| !w.mechs.trim.trims(c))
        .collect();
    if untrimmed.is_empty() {
        return None;
    }
    Some(format!(
        "{name} flows in class(es) {untrimmed:?} cross switches that do not trim them: each lost \
         packet waits for {name}'s retransmission timeout; add the class to [switch.trim] classes"
    ))
}

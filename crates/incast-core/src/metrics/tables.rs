//! The result tables of a finished run, built from the world's counters
//! and logs: ports, per-class queue counters, incasts, the PFC log, edge
//! pausing's OWD samples, and per-host totals. (Flows: [`super::FlowRecords`];
//! queue time series: [`super::sampler`].)

use crate::host::IncastRecord;
use crate::mech::pfc;
use crate::metrics_table::{Column, Table};
use crate::net::port::Owner;
use crate::sim::world::World;
use crate::units::Ps;

/// Per port: rate, bytes and packets sent, busy time, utilization over the
/// `window` in which traffic was offered, PFC counters; and per (switch
/// port, class) that saw traffic: the queue counters. Returns `(ports, counters)`.
pub(crate) fn ports_and_counters(w: &World, window: (Ps, Ps)) -> (Table, Table) {
    let (start, end) = window;
    let span = end - start;
    let mut ports = Table::default();
    let n = w.ports.len();
    let (mut node, mut local, mut peer) = (Vec::with_capacity(n), vec![], vec![]);
    let (mut rate, mut txb, mut txp, mut busy, mut util) = (vec![], vec![], vec![], vec![], vec![]);
    let mut counters = CounterColumns::default();
    for p in &w.ports {
        let owner = p.owner();
        node.push(w.node_of(owner));
        local.push(p.local as u32);
        peer.push(w.node_of(w.ports[p.peer as usize].owner()));
        rate.push(p.rate.bits_per_sec());
        txb.push(p.tx_bytes);
        txp.push(p.tx_pkts);
        let b = p.busy_time().min(end);
        busy.push(b);
        util.push(if span > 0 {
            b.min(span) as f64 / span as f64
        } else {
            0.0
        });
        if let Owner::Switch(_) = owner {
            counters.add(w.node_of(owner), p, window);
        }
    }
    ports.push("node", Column::U32(node));
    ports.push("port", Column::U32(local));
    ports.push("peer", Column::U32(peer));
    ports.push("rate_bps", Column::U64(rate));
    ports.push("tx_bytes", Column::U64(txb));
    ports.push("tx_pkts", Column::U64(txp));
    ports.push("busy_ps", Column::U64(busy));
    ports.push("utilization", Column::F64(util));
    let pfc_ports = &w.mechs.pfc.ports;
    let col = |f: &dyn Fn(&crate::net::Port, &pfc::PortPfc) -> u64| {
        Column::U64(
            w.ports
                .iter()
                .zip(pfc_ports)
                .map(|(port, state)| f(port, state))
                .collect(),
        )
    };
    ports.push("pause_tx", col(&|_, state| state.xoff_tx.iter().sum()));
    ports.push("resume_tx", col(&|_, state| state.xon_tx.iter().sum()));
    ports.push("pause_rx", col(&|_, state| state.xoff_rx.iter().sum()));
    ports.push("resume_rx", col(&|_, state| state.xon_rx.iter().sum()));
    // Paused time, including pauses still in force at the end.
    ports.push(
        "paused_ps",
        col(&|port, state| pfc::paused_ps(port, state, end)),
    );
    ports.push(
        "longest_pause_ps",
        col(&|_, state| *state.longest_pause.iter().max().unwrap_or(&0)),
    );
    ports.push("watchdog_trips", col(&|_, state| state.watchdog_trips));
    ports.push("watchdog_drops", col(&|_, state| state.watchdog_drops));
    (ports, counters.into_table())
}

/// The columns of the `counters` table.
#[derive(Default)]
struct CounterColumns {
    node: Vec<u32>,
    port: Vec<u32>,
    class: Vec<u8>,
    enq_pkts: Vec<u64>,
    enq_bytes: Vec<u64>,
    drop_pkts: Vec<u64>,
    drop_bytes: Vec<u64>,
    ecn_marks: Vec<u64>,
    deq_pkts: Vec<u64>,
    qdelay_sum: Vec<u64>,
    max_queue: Vec<u64>,
    mean_queue: Vec<f64>,
    p50_queue: Vec<u64>,
    p99_queue: Vec<u64>,
    nonempty: Vec<f64>,
}

impl CounterColumns {
    /// One row per class of switch port `p` that saw a packet.
    fn add(&mut self, node: u32, p: &crate::net::Port, (start, end): (Ps, Ps)) {
        for (class, q) in p.queues.iter().enumerate() {
            let k = &q.counters;
            if q.enq_pkts() == 0 && k.drop_pkts == 0 {
                continue;
            }
            self.node.push(node);
            self.port.push(p.local as u32);
            self.class.push(class as u8);
            self.enq_pkts.push(q.enq_pkts());
            self.enq_bytes.push(q.enq_bytes());
            self.drop_pkts.push(k.drop_pkts);
            self.drop_bytes.push(k.drop_bytes);
            self.ecn_marks.push(k.ecn_marks);
            self.deq_pkts.push(k.deq_pkts);
            self.qdelay_sum.push(k.qdelay_sum);
            self.max_queue.push(q.max_bytes);
            let (mean, quantiles, nonempty) = q.stats(start, end, &[0.5, 0.99]);
            self.mean_queue.push(mean);
            self.p50_queue.push(quantiles[0]);
            self.p99_queue.push(quantiles[1]);
            self.nonempty.push(nonempty);
        }
    }

    fn into_table(self) -> Table {
        let mut t = Table::default();
        t.push("node", Column::U32(self.node));
        t.push("port", Column::U32(self.port));
        t.push("class", Column::U8(self.class));
        t.push("enq_pkts", Column::U64(self.enq_pkts));
        t.push("enq_bytes", Column::U64(self.enq_bytes));
        t.push("drop_pkts", Column::U64(self.drop_pkts));
        t.push("drop_bytes", Column::U64(self.drop_bytes));
        t.push("ecn_marks", Column::U64(self.ecn_marks));
        t.push("deq_pkts", Column::U64(self.deq_pkts));
        t.push("qdelay_sum_ps", Column::U64(self.qdelay_sum));
        t.push("max_queue_bytes", Column::U64(self.max_queue));
        // Time-weighted over the utilization window (no sampling: every
        // change of the queue is counted); percentiles are the lower edge of
        // their histogram bucket (two per power of two).
        t.push("mean_queue_bytes", Column::F64(self.mean_queue));
        t.push("p50_queue_bytes", Column::U64(self.p50_queue));
        t.push("p99_queue_bytes", Column::U64(self.p99_queue));
        t.push("nonempty_fraction", Column::F64(self.nonempty));
        t
    }
}

/// One row per incast event.
pub(crate) fn incasts(records: &[IncastRecord]) -> Table {
    let col64 = |f: &dyn Fn(&IncastRecord) -> u64| Column::U64(records.iter().map(f).collect());
    let mut t = Table::default();
    t.push(
        "incast_id",
        Column::U64((0..records.len() as u64).collect()),
    );
    t.push(
        "receiver",
        Column::U32(records.iter().map(|r| r.receiver).collect()),
    );
    t.push(
        "fan_in",
        Column::U32(records.iter().map(|r| r.fan_in).collect()),
    );
    t.push("bytes_per_sender", col64(&|r| r.bytes));
    t.push("start_ps", col64(&|r| r.start));
    t.push("finish_ps", col64(&|r| r.finish.unwrap_or(0)));
    t.push(
        "completion_ps",
        col64(&|r| r.finish.map_or(0, |f| f - r.start)),
    );
    t.push(
        "finished",
        Column::U8(records.iter().map(|r| r.finish.is_some() as u8).collect()),
    );
    t
}

/// The PFC event log (taken out of the world).
pub(crate) fn pfc_log(w: &mut World) -> Table {
    let (t, n, p, c, e) = std::mem::take(&mut w.mechs.pfc.log);
    let mut table = Table::default();
    table.push("time_ps", Column::U64(t));
    table.push("node", Column::U32(n));
    table.push("port", Column::U32(p));
    table.push("class", Column::U8(c));
    table.push("event", Column::U8(e));
    table
}

/// Per sending host: flows, edge pauses, edge-paused time, retransmissions.
pub(crate) fn hosts(n_hosts: usize, flows: &Table) -> Table {
    let n = n_hosts;
    let (mut nf, mut np, mut nt, mut nr) =
        (vec![0u32; n], vec![0u32; n], vec![0u64; n], vec![0u32; n]);
    let src = flows.u32s("src");
    let (p, t, r) = (
        flows.u32s("edge_pauses"),
        flows.u64s("edge_paused_ps"),
        flows.u32s("retransmits"),
    );
    for i in 0..src.len() {
        let h = src[i] as usize;
        nf[h] += 1;
        np[h] += p[i];
        nt[h] += t[i];
        nr[h] += r[i];
    }
    let mut hosts = Table::default();
    hosts.push("host", Column::U32((0..n as u32).collect()));
    hosts.push("flows", Column::U32(nf));
    hosts.push("edge_pauses", Column::U32(np));
    hosts.push("edge_paused_ps", Column::U64(nt));
    hosts.push("retransmits", Column::U32(nr));
    hosts
}

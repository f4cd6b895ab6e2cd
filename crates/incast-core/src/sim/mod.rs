//! The simulation: builds the network from a [`Scenario`] and runs the event loop.
//!
//! # Tutorial
//!
//! A [`Simulation`] is built once from a validated [`Scenario`]
//! ([`Simulation::new`], in [`build`]), advanced in slices of events (so a
//! caller can show progress or stop early: [`Simulation::advance`],
//! [`Simulation::run_until`], [`Simulation::run`]), and consumed by
//! [`Simulation::finish`], which returns the [`Results`]: columnar tables
//! and the summary JSON.
//!
//! Inside, the state every network element shares is the [`world::World`]:
//! dense arrays of ports, switches, NICs and flows, the packet arena and the
//! event queue. The run loop pops the next event ([`ev::Ev`]: 8 bytes) and
//! dispatches it to the element that owns it: a packet's arrival to the link
//! ([`crate::net::link`]), and from there to a switch
//! ([`crate::net::switch`]) or a NIC ([`crate::nic`]); a port's end of
//! transmission to its owner; a transport timer to the TCP or RDMA endpoint
//! ([`crate::host`]); a mechanism's timer to the mechanism
//! ([`crate::mech`]); a generator's arrival to the generators.

mod build;
pub(crate) mod ev;
pub(crate) mod node_order;
pub mod parallelism;
pub(crate) mod partitioned;
pub mod threaded;
pub(crate) mod world;

use crate::host::generators::Generators;
use crate::host::{self, rdma, tcp};
use crate::mech;
use crate::metrics::sampler::QueueSampler;
use crate::metrics::summary::{self, Tables};
use crate::metrics::{self, tables};
use crate::metrics_table::{Column, Table};
use crate::net::link;
use crate::nic;
use crate::scenario::Scenario;
use crate::scenario::ScenarioError;
use crate::transport::cc::CongestionControl;
use crate::units::{Bytes, Ps};
use ev::Ev;
use std::time::Instant;
use world::World;

pub use crate::host::{KIND_BULK, KIND_INCAST, KIND_LISTED, KIND_POISSON};

/// How many events ahead the run loop starts loading an arriving packet, and
/// the port of an end of transmission ...
const PKT_AHEAD: usize = 4;
/// ... and the port an arriving packet goes to, with its class queue (read
/// from the packet, loaded by then). One and two events had been too few
/// for a large network, whose packets and ports are far beyond the caches:
/// 6 % less CPU time at k = 34 with four and two; eight and four were
/// slower again (docs/performance-history.md).
const PORT_AHEAD: usize = 2;

/// Progress of a run, for progress bars.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    pub now_ps: Ps,
    /// End of the traffic generators' window (or the last listed start).
    pub horizon_ps: Ps,
    pub fraction: f64,
    pub active_flows: u64,
    pub finished_flows: u64,
}

pub use crate::metrics::RunStats;

/// Everything a run produced.
#[derive(Clone, Debug, Default)]
pub struct Results {
    pub flows: Table,
    /// PFC events at the ports that obey them: time_ps, node, port, class,
    /// event (1 = paused, 0 = resumed, 2 = watchdog trip, 3 = watchdog restored PFC).
    pub pfc: Table,
    /// Packets of lossless classes dropped (must be 0 with adequate headroom).
    pub lossless_drops: u64,
    pub incasts: Table,
    pub counters: Table,
    pub ports: Table,
    pub queues: Table,
    /// Edge pausing: sampled OWD readings at the senders (time_ps, flow_id, owd_ps).
    pub owd: Table,
    /// Per sending host: flows, edge_pauses, edge_paused_ps, retransmits.
    pub hosts: Table,
    /// The NIC models' time series at the queue sampling ticks, one table
    /// per name of [`crate::nic::NicModel::SERIES`] in registry order (the
    /// adapter's congestion management over time); each empty unless its
    /// model runs.
    pub series: Vec<Table>,
    /// The tables of `result_tables!` ([`crate::metrics::extra_tables`]),
    /// in registry order.
    pub extra: Vec<Table>,
    pub node_names: Vec<String>,
    pub summary_json: String,
    pub stats: RunStats,
    pub conservation: Conservation,
}

impl Results {
    /// The core's result tables, in one order. A new core table is a field
    /// above plus a name here; a NIC model's series is a name in its
    /// `SERIES` ([`crate::nic::NicModel::SERIES`]).
    const CORE_TABLES: [&'static str; 8] = [
        "flows", "pfc", "incasts", "counters", "ports", "queues", "owd", "hosts",
    ];

    /// Every result table's name, in one order: the digest's (`incast-bench
    /// --digest`), the Python binding's (`incast._core.RESULT_TABLES`) and so
    /// the Parquet files': the core's, then the NIC models' series, then the
    /// registered tables of their own (`result_tables!`).
    pub fn table_names() -> Vec<&'static str> {
        let mut names = Self::CORE_TABLES.to_vec();
        names.extend(crate::nic::series_names());
        names.extend(crate::metrics::extra_tables::names());
        names
    }

    /// The result tables by name, in [`Results::table_names`]' order.
    pub fn tables(&self) -> Vec<(&'static str, &Table)> {
        let core = [
            &self.flows,
            &self.pfc,
            &self.incasts,
            &self.counters,
            &self.ports,
            &self.queues,
            &self.owd,
            &self.hosts,
        ];
        // A series not collected (a default `Results`) is an empty table.
        static EMPTY: Table = Table {
            columns: Vec::new(),
        };
        let series = (self.series.iter()).chain(std::iter::repeat(&EMPTY));
        let series = series.take(crate::nic::series_names().len());
        let tables = (core.into_iter().chain(series))
            .chain(&self.extra)
            .chain(std::iter::repeat(&EMPTY));
        Self::table_names().into_iter().zip(tables).collect()
    }
}

pub use crate::metrics::conservation::Conservation;

/// A running simulation.
pub struct Simulation {
    pub(crate) w: World,
    gens: Generators,
    sampler: QueueSampler,
    /// End of the traffic generators' window (or the last listed start).
    horizon: Ps,
    /// The run ends at this time at the latest.
    stop: Ps,
    /// `[timing] ties = "node"`: events run in node order
    /// ([`partitioned`]).
    node_ties: bool,
    /// Node order: the cell of time in which the run was found over (it
    /// ends with the cell, [`partitioned`]).
    done_in_cell: Option<u64>,
    /// Node order: the engine's peaks, read at cell boundaries.
    node_peaks: node_order::NodePeaks,
    /// A partition of a threaded run ([`threaded`]).
    threaded: bool,
    /// A threaded run's accounts of every partition's packets, taken before
    /// their worlds were merged into this one.
    merged: Option<threaded::Merged>,
    /// A threaded run's partition: its account ([`threaded::PartStats`]).
    part_stats: threaded::PartStats,
    /// Set when the run reached `stop` (its results end there).
    stopped_at: Option<Ps>,
    /// The event popped beyond `stop`, which ended the run unrun (still
    /// pending, for the accounts taken at the end).
    beyond_stop: Option<Ev>,
    /// Start of the window in which the workload offers traffic (the
    /// earliest start of any generator or listed flow): utilization is
    /// measured from there to the end.
    traffic_start: Ps,
    done: bool,
    name: String,
    node_names: Vec<String>,
    started: Instant,
    trace_cc: Vec<(Ps, u64, f64)>,
}

impl Simulation {
    /// Builds the network, the flows and the generators of a scenario.
    pub fn new(sc: &Scenario) -> Result<Simulation, ScenarioError> {
        build::simulation(sc)
    }

    /// The current simulated time.
    pub fn now(&self) -> Ps {
        self.w.q.now()
    }

    /// Runs at most `max_events` events. Returns `true` when the run is over.
    pub fn advance(&mut self, max_events: u64) -> bool {
        if self.done {
            return true;
        }
        if self.node_ties {
            return self.advance_by_node(max_events);
        }
        for _ in 0..max_events {
            // Written out rather than `next_event()`: the same steps, but
            // the call (inlined) moved the loop's code generation, 10
            // instructions a hop more on the DCQCN slice.
            let Some((t, ev)) = self.w.q.pop() else {
                self.done = true;
                return true;
            };
            if t > self.stop {
                // Nothing happens after `stop`: the run ends there.
                self.stopped_at = Some(self.stop);
                self.beyond_stop = Some(ev);
                self.done = true;
                return true;
            }
            self.prefetch_ahead();
            self.dispatch(t, ev);
            // Packets in flight almost always: that test first.
            if self.w.arena.live() == 0 && self.gens.live == 0 && self.w.flows.active == 0 {
                self.done = true;
                return true;
            }
        }
        false
    }

    /// Starts loading what the events a few places ahead will read.
    /// Packet arrivals are most of the events and each reads a packet last
    /// touched a link delay ago: start loading it a few events ahead. An end
    /// of transmission reads its port first.
    #[inline(always)]
    fn prefetch_ahead(&self) {
        match self.w.q.upcoming(PKT_AHEAD) {
            Some(&Ev::Arrive(next)) => self.w.arena.prefetch(next),
            Some(&Ev::TxDone(port)) => crate::net::prefetch(&self.w.ports, port as usize),
            _ => {}
        }
        // An arrival nearer had its packet prefetched two events ago: start
        // loading the port it goes to (at a switch, the egress port it was
        // routed to as it left) and its class queue there.
        if let Some(&Ev::Arrive(soon)) = self.w.q.upcoming(PORT_AHEAD) {
            let packet = self.w.arena.get(soon);
            crate::net::port::prefetch_with_queue(&self.w.ports, packet.to_port, packet.class);
        }
    }

    /// The next event, or `None` when the run is over: nothing is pending,
    /// or the next event is beyond `stop` (nothing happens after `stop`: the
    /// run ends there, the event kept aside, still pending for the accounts).
    #[inline(always)]
    fn next_event(&mut self) -> Option<(Ps, Ev)> {
        let Some((t, ev)) = self.w.q.pop() else {
            self.done = true;
            return None;
        };
        if t > self.stop {
            self.stopped_at = Some(self.stop);
            self.beyond_stop = Some(ev);
            self.done = true;
            return None;
        }
        Some((t, ev))
    }

    /// Runs until `t` (events at exactly `t` included) or the end of the run.
    pub fn run_until(&mut self, t: Ps) -> bool {
        while !self.done && self.w.q.peek_time().is_some_and(|x| x <= t) {
            self.advance(1);
        }
        self.done
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        while !self.advance(1 << 20) {}
    }

    pub fn progress(&self) -> Progress {
        let now = self.now();
        let fraction = if self.done {
            1.0
        } else if self.horizon == 0 {
            0.0
        } else {
            (now as f64 / self.horizon as f64).min(0.99)
        };
        Progress {
            now_ps: now,
            horizon_ps: self.horizon,
            fraction,
            active_flows: self.w.flows.active,
            finished_flows: self.w.flows.finished,
        }
    }

    /// Hands event `ev` to the element that owns it. Packet arrivals and
    /// ends of transmission are nearly every event: they are inlined here;
    /// the rest go through one call, so that their code does not crowd the
    /// run loop's registers.
    #[inline(always)]
    fn dispatch(&mut self, now: Ps, ev: Ev) {
        match ev {
            Ev::Arrive(pkt) => link::arrive(&mut self.w, now, pkt),
            Ev::TxDone(p) => link::tx_done(&mut self.w, now, p),
            _ => self.dispatch_other(now, ev),
        }
    }

    /// [`Simulation::dispatch`] of every event but arrivals and ends of
    /// transmission. Its own arms for those two are never reached; an
    /// `unreachable!` there instead cost the run loop 94 M instructions on
    /// the DCQCN 1 ms slice (its code generation moved), so they stay.
    #[inline(never)]
    fn dispatch_other(&mut self, now: Ps, ev: Ev) {
        let w = &mut self.w;
        w.counters.other_events += 1;
        match ev {
            Ev::Arrive(pkt) => link::arrive(w, now, pkt),
            Ev::TxDone(p) => link::tx_done(w, now, p),
            Ev::Rto(slot) => {
                let f = &w.flows.slots[slot as usize];
                if f.qp.is_some() {
                    rdma::on_rto(w, now, slot)
                } else if f.ndp.is_some() {
                    crate::host::ndp::on_rto(w, now, slot)
                } else if crate::host::eqds::owns(w, slot) {
                    crate::host::eqds::on_rto(w, now, slot)
                } else {
                    tcp::on_rto(w, now, slot)
                }
            }
            Ev::CcTimer(slot) => rdma::on_cc_timer(w, now, slot),
            Ev::NdpPull(h) => crate::host::ndp::on_pacer(w, now, h),
            Ev::EqdsPull(h) => crate::host::eqds::on_pacer(w, now, h),
            Ev::CnpTimer(slot) => rdma::on_cnp_timer(w, now, slot),
            Ev::NicWake(n) => {
                if w.q.fire(&mut w.nics[n as usize].wake, now, Ev::NicWake(n)) {
                    nic::kick(w, now, n);
                }
            }
            Ev::Timer(code, port) => {
                mech::on_timer(w, now, (code >> 8) as u8, code as u8, port);
            }
            Ev::Gate(slot) => tcp::on_gate(w, now, slot),
            Ev::Pace(slot) => tcp::on_pace(w, now, slot),
            Ev::Gen(source) => self.gens.on_arrival(w, now, source),
            Ev::RxDone(n) => nic::adapter::on_rx_done(w, now, n),
            Ev::PcieDone(n) => nic::rx::on_done(w, now, n),
            Ev::NicTimer(code, target) => nic::on_timer(w, now, code, target),
            Ev::DelAck(slot) => tcp::on_delack(w, now, slot),
            Ev::FlowStop(slot) => host::on_flow_stop(w, now, slot),
            Ev::Sample => {
                // In node order the ticks go on to the run's end (the end of
                // the cell in which nothing was left): whether anything is
                // left anywhere is not known to a partition at each tick.
                let more = self.node_ties || !(self.gens.live == 0 && w.flows.active == 0);
                self.sampler.on_tick(w, now, more);
            }
        }
    }

    /// Samples a scalar of each active flow's congestion control (e.g. DCTCP's alpha)
    /// into an internal trace; used by validation tests.
    pub fn trace_cc_now(&mut self) {
        let now = self.now();
        for f in self.w.flows.slots.iter().filter(|f| f.active) {
            if let Some(v) = f.tcp.cc.trace_value() {
                self.trace_cc.push((now, f.id, v));
            }
        }
    }
    /// The congestion-control trace: (time, flow id, value).
    pub fn cc_trace(&self) -> &[(Ps, u64, f64)] {
        &self.trace_cc
    }
    /// Congestion windows of the active flows: (flow id, cwnd bytes).
    pub fn cwnds(&self) -> Vec<(u64, u64)> {
        self.w
            .flows
            .slots
            .iter()
            .filter(|f| f.active)
            .map(|f| (f.id, f.tcp.win.cwnd))
            .collect()
    }
    /// Bytes acknowledged so far of each active flow: (flow id, snd_una).
    pub fn acked_bytes(&self) -> Vec<(u64, u64)> {
        self.w
            .flows
            .slots
            .iter()
            .filter(|f| f.active)
            .map(|f| (f.id, f.qp.as_ref().map_or(f.tcp.snd_una, |q| q.snd_una)))
            .collect()
    }
    /// Segments retransmitted so far by each active TCP flow: (flow id, count).
    pub fn retransmits(&self) -> Vec<(u64, u32)> {
        self.w
            .flows
            .slots
            .iter()
            .filter(|f| f.active)
            .map(|f| (f.id, f.tcp.retransmits))
            .collect()
    }
    /// Retransmission timeouts so far of each active TCP flow: (flow id, count).
    pub fn timeouts(&self) -> Vec<(u64, u32)> {
        self.w
            .flows
            .slots
            .iter()
            .filter(|f| f.active)
            .map(|f| (f.id, f.tcp.timeouts))
            .collect()
    }
    /// Packets dropped so far at switch port (switch, local port), all classes.
    pub fn switch_port_drops(&self, switch: u32, local: usize) -> u64 {
        let gp = self.w.switches[switch as usize].port(local as u16);
        let port = &self.w.ports[gp as usize];
        port.queues.iter().map(|q| q.counters.drop_pkts).sum()
    }
    /// Bytes queued at switch port (switch, local port), all classes.
    pub fn switch_queue_bytes(&self, switch: u32, local: usize) -> Bytes {
        let gp = self.w.switches[switch as usize].port(local as u16);
        self.w.ports[gp as usize].queued_bytes()
    }
    /// Bytes transmitted so far by switch port (switch, local port).
    pub fn switch_port_tx_bytes(&self, switch: u32, local: usize) -> u64 {
        let gp = self.w.switches[switch as usize].port(local as u16);
        self.w.ports[gp as usize].tx_bytes
    }

    /// The packets on wires now: each is a pending arrival (or the event
    /// the run stopped before). Their number and bytes.
    fn on_wires(&self) -> (u64, u64) {
        if let Some(merged) = self.merged {
            return merged.wires;
        }
        let arrivals = self.w.q.pending().chain(&self.beyond_stop);
        arrivals.fold((0, 0), |(n, bytes), ev| match *ev {
            Ev::Arrive(pkt) => (n + 1, bytes + self.w.arena.get(pkt).size as u64),
            _ => (n, bytes),
        })
    }

    /// The run's packet-hops and ends of transmission, derived: every
    /// packet a port sent has arrived unless it is still on a wire, and
    /// every event run is an arrival, an end of transmission or one of the
    /// others, which are counted.
    fn hops_and_tx_dones(&self) -> (u64, u64) {
        let sent: u64 = self.w.ports.iter().map(|p| p.tx_pkts).sum();
        let hops = sent - self.on_wires().0;
        let run = self.w.q.events_processed() - self.beyond_stop.is_some() as u64;
        (hops, run - hops - self.w.counters.other_events)
    }

    /// Bytes still in the network: on wires, in queues, in NIC FIFOs.
    fn in_network_bytes(&self) -> u64 {
        if let Some(merged) = self.merged {
            return merged.in_network_bytes;
        }
        let w = &self.w;
        let mut b = self.on_wires().1;
        for p in &w.ports {
            for id in p.ctrl_frames() {
                b += w.arena.get(id).size as u64;
            }
            for q in &p.queues {
                for &id in &q.pkts {
                    b += w.arena.get(id).size as u64;
                }
            }
        }
        for n in &w.nics {
            for &id in &n.ctrl {
                b += w.arena.get(id).size as u64;
            }
        }
        b += nic::held_bytes(w);
        if let Some(rx) = &w.rx {
            b += rx.held_bytes(|id| w.arena.get(id).size as u64);
        }
        b
    }

    /// Ends the run and collects the results.
    pub fn finish(mut self) -> Results {
        let end = self.stopped_at.unwrap_or_else(|| self.now());
        // Unfinished flows are recorded too, flagged.
        let active: Vec<u32> = (0..self.w.flows.slots.len() as u32)
            .filter(|&s| self.w.flows.slots[s as usize].active)
            .collect();
        let now = self.w.q.now();
        for s in active {
            host::record(&mut self.w, s, host::End::Running(now));
        }
        if self.node_ties {
            if !self.threaded {
                host::receivers_counts(&mut self.w.flows);
            }
            let (records, mechs) = (&mut self.w.flows.records, &self.w.mechs);
            crate::mech::flow_records_at_end(mechs, &records.slot, &mut records.features.values);
            self.renumber_flows();
            if let Some(edge) = self.w.edge.as_deref_mut() {
                let records = &self.w.flows.records;
                edge.samples_by_flow_id(&records.slot, &records.flow_id);
            }
            self.read_peaks();
            // Incasts were drawn at the build: those after the run's end never began.
            let stop = self.stop;
            self.w.flows.incasts.retain(|incast| incast.start <= stop);
        }
        let mut cons = self.w.counters.cons;
        cons.in_network_bytes = self.in_network_bytes();
        let (packet_hops, tx_done_events) = self.hops_and_tx_dones();
        let w = &mut self.w;
        let flows = std::mem::take(&mut w.flows.records).into_table();
        let window = (self.traffic_start.min(end), end);
        let (ports, counters) = tables::ports_and_counters(w, window);
        let incasts = tables::incasts(&w.flows.incasts);
        let sampled = self.sampler.describe(w);
        let series = nic::series_tables(w, self.sampler.times());
        let queues = std::mem::take(&mut self.sampler).into_table(w);
        let mut pfc = tables::pfc_log(w);
        if self.node_ties {
            pfc = node_order::log_in_node_order(pfc);
        }
        // Every table has its columns, rows or not (the one list of them).
        let (owd_time, owd_flow, owd_ps) = w
            .edge
            .as_deref_mut()
            .map(|e| std::mem::take(&mut e.samples))
            .unwrap_or_default();
        let mut owd = Table::default();
        owd.push("time_ps", Column::U64(owd_time));
        owd.push("flow_id", Column::U64(owd_flow));
        owd.push("owd_ps", Column::I64(owd_ps));
        if self.node_ties {
            owd = node_order::owd_in_node_order(owd);
        }
        let mut us: Vec<f64> = owd.i64s("owd_ps").iter().map(|&x| x as f64 / 1e6).collect();
        let edge_summary = match w.edge.as_deref_mut() {
            Some(e) => {
                let pauses: u64 = flows.u32s("edge_pauses").iter().map(|&x| x as u64).sum();
                let paused: u64 = flows.u64s("edge_paused_ps").iter().sum();
                let owd_us =
                    serde_json::to_value(metrics::Stats::of(&mut us)).expect("serializable");
                let mut summary = e.summary(pauses, paused, owd_us);
                if let Some(curve) = e.curve.as_deref_mut() {
                    for p in w.arena.live_packets().filter(|p| p.tag != 0) {
                        curve.on_in_flight(p.tag);
                    }
                    summary["owd_drop_curve"] = curve.summary();
                }
                Some(summary)
            }
            None => None,
        };
        let hosts = tables::hosts(w.host_nic.len(), &flows);
        let stats = RunStats {
            events: w.q.events_processed(),
            packet_hops,
            tx_done_events,
            sim_time_ps: end,
            wall_seconds: self.started.elapsed().as_secs_f64(),
            peak_packets: if self.node_ties {
                self.node_peaks.packets
            } else {
                w.arena.peak() as u64
            },
            peak_flows: if self.node_ties {
                self.node_peaks.flows
            } else {
                w.flows.peak_active
            },
        };
        let t = Tables {
            flows: &flows,
            counters: &counters,
            ports: &ports,
            incasts: &incasts,
        };
        let mut summary = summary::summary(w, &self.name, &t, &stats, window);
        summary["warnings"] = summary::warnings(w, &t, self.stopped_at, self.stop).into();
        summary["queue_series"] = sampled;
        mech::report(w, &flows, &mut summary);
        if let Some(v) = nic::queues::summary(w, end) {
            summary["nic_queues"] = v;
        }
        if let Some(v) = nic::rx::summary(w) {
            summary["nic_receive"] = v;
        }
        if let Some(v) = nic::pcie::summary(&w.pcie) {
            summary["pcie"] = v;
        }
        if let Some(e) = edge_summary {
            summary["edge"] = e;
        }
        Results {
            lossless_drops: w.mechs.pfc.lossless_drops,
            flows,
            pfc,
            incasts,
            counters,
            ports,
            queues,
            owd,
            hosts,
            series,
            extra: crate::metrics::extra_tables::tables(w),
            node_names: std::mem::take(&mut self.node_names),
            summary_json: serde_json::to_string_pretty(&summary).expect("serializable"),
            stats,
            conservation: cons,
        }
    }
}

#[cfg(test)]
mod tests;

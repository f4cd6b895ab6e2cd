//! The simulation: builds the network from a [`Scenario`] and runs the event loop.
//!
//! Events are few and small ([`Ev`]): the arrival of the head packet of a wire,
//! the end of a transmission, a transport timer, or a generator's next arrival.
//! Every handler is a method here that moves packets between the elements of
//! [`crate::net`] and the flows of [`crate::transport`].

use crate::edge::{EdgeGate, EdgeRuntime, OwdSample, PathInfo};
use crate::engine::EventQueue;
use crate::metrics::{self, FlowRecord, FlowRecords};
use crate::metrics_table::{Column, Table};
use crate::net::ci::{self, CiConfig, CiPort, Reliability, NO_PORT};
use crate::net::host::HostNic;
use crate::net::packet::flags;
use crate::net::pfc::{self, Charge, Ingress, PauseMode, PfcConfig, PfcState};
use crate::net::port::Owner;
use crate::net::switch::{Enqueue, Switch, SwitchParams};
use crate::net::{Packet, PacketArena, PacketKind, PktId, Port, NUM_CLASSES};
use crate::rdma::cc::{CcCtx, IntHop, RateCc};
use crate::rdma::qp::{RdmaQp, SendState};
use crate::rdma::{BaseRtt, RdmaConfig};
use crate::rng::{derive_seed, mix64, Stream};
use crate::scenario::{ListedFlow, Process, QueuePorts, Scenario, ScenarioError};
use crate::topology::{NodeRef, Routes};
use crate::transport::cc::{CcConfig, CongestionControl};
use crate::transport::{AckOut, Echo, TcpFlow, TcpParams};
use crate::units::{ps_to_us, Bytes, Ps, Rate, SEC};
use crate::workload::generators::{FlowRequest, IncastGen, IncastSizes, PacketGen, PoissonGen};
use serde::Serialize;
use std::time::Instant;

/// Flow kinds in the flow table.
pub const KIND_POISSON: u8 = 0;
pub const KIND_INCAST: u8 = 1;
pub const KIND_LISTED: u8 = 2;

/// An engine event.
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// Packet `.0` reaches the far end of the link it was sent on.
    Arrive(u32),
    /// Port `.0` finished a transmission and has more to send.
    TxDone(u32),
    Rto(u32),
    DelAck(u32),
    Poisson(u16, u32),
    Incast(u32),
    Listed,
    Packets(u32),
    Sample,
    /// RDMA: a QP's congestion-control timer.
    CcTimer(u32),
    /// RDMA: a receiver's pending-CNP timer.
    CnpTimer(u32),
    /// RDMA: host `.0`'s NIC may send a paced packet.
    NicWake(u32),
    /// PFC: a pause on port `.0` may have expired.
    PauseExpire(u32),
    /// PFC: XOFFs sent out of port `.0` need refreshing.
    PfcRefresh(u32),
    /// PFC watchdog: a pause on port `.0` may have lasted too long, or its
    /// disabled class may be restored.
    Watchdog(u32),
    /// Edge pausing: TCP flow `.0`'s gate may reopen.
    Gate(u32),
    /// Congestion isolation: port `.0`'s CIP resends and table aging.
    Ci(u32),
}

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

/// Engine statistics of a run.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RunStats {
    pub events: u64,
    pub packet_hops: u64,
    pub sim_time_ps: Ps,
    pub wall_seconds: f64,
    pub peak_packets: u64,
    pub peak_flows: u64,
}

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
    pub node_names: Vec<String>,
    pub summary_json: String,
    pub stats: RunStats,
    pub conservation: Conservation,
}

/// Byte accounting for the conservation invariant: every byte sent is
/// received, dropped or still in the network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Conservation {
    pub sent_bytes: u64,
    pub delivered_bytes: u64,
    pub dropped_bytes: u64,
    /// Found by walking every queue, wire and NIC at the end of the run.
    pub in_network_bytes: u64,
}

/// A flow's slot in the flow table.
///
/// `repr(C)` in this order: what every packet of a flow reads at a NIC
/// (identity, endpoints, hashes, the QP and gate pointers, the NIC
/// priority) fills the slot's first cache line; per-flow records and the
/// TCP state follow.
#[repr(C, align(64))]
struct FlowSlot {
    uid: u32,
    active: bool,
    in_ready: bool,
    class: u8,
    /// The priority the NIC sends data on: `class`, or a congested-flow
    /// queue's after a CIP (IEEE 802.1Qcz isolation at the NIC).
    prio: u8,
    src: u32,
    dst: u32,
    hash: u64,
    ack_hash: u64,
    /// RDMA queue pair (when the scenario has `[rdma]`).
    qp: Option<Box<RdmaQp>>,
    /// Edge-pausing gate (when `[edge]` covers the sender).
    gate: Option<Box<EdgeGate>>,
    kind: u8,
    id: u64,
    start: Ps,
    incast: i64,
    ideal: Ps,
    /// When the NIC last sent (or was paused on) the isolated priority.
    ci_last: Ps,
    /// Isolations of this flow (at switch ports and its NIC).
    ci_isolations: u32,
    tcp: TcpFlow,
}

struct IncastRecord {
    receiver: u32,
    fan_in: u32,
    bytes: u64,
    start: Ps,
    remaining: u32,
    finish: Option<Ps>,
}

/// `event` of a PFC log row: the watchdog tripped on a pause.
const PFC_WATCHDOG_TRIP: u8 = 2;
/// `event` of a PFC log row: the dropping watchdog re-enabled PFC.
const PFC_WATCHDOG_RESTORE: u8 = 3;

/// Columns of the PFC event log: time, node, local port, class, event.
type PfcLog = (Vec<u64>, Vec<u32>, Vec<u32>, Vec<u8>, Vec<u8>);

/// A running simulation.
pub struct Simulation {
    q: EventQueue<Ev>,
    arena: PacketArena,
    ports: Vec<Port>,
    /// `ports[p].owner`, kept compact: read on every packet arrival.
    owners: Vec<Owner>,
    switches: Vec<Switch>,
    sw: SwitchParams,
    nics: Vec<HostNic>,
    routes: Routes,
    tcp: TcpParams,
    cc: CcConfig,
    ecn_capable: bool,
    ack_class: Option<u8>,
    seed: u64,
    flows: Vec<FlowSlot>,
    free_slots: Vec<u32>,
    next_uid: u32,
    next_flow_id: u64,
    next_sport: Vec<u32>,
    active: u64,
    peak_active: u64,
    finished: u64,
    poisson: Vec<PoissonGen>,
    incast: Vec<IncastGen>,
    packets: Vec<PacketGen>,
    listed: Vec<ListedFlow>,
    listed_next: usize,
    generators_live: u64,
    records: FlowRecords,
    incasts: Vec<IncastRecord>,
    warmup: Ps,
    measure_end: Ps,
    horizon: Ps,
    stop: Ps,
    done: bool,
    sample_interval: Ps,
    sampled_ports: Vec<u32>,
    samples: (Vec<u64>, Vec<u32>, Vec<u32>, Vec<u64>),
    packet_hops: u64,
    /// Bytes of the packets on wires (in flight between two ports).
    wire_bytes: u64,
    cons: Conservation,
    size_buckets: Vec<Bytes>,
    name: String,
    node_names: Vec<String>,
    started: Instant,
    trace_cc: Vec<(Ps, u64, f64)>,
    rdma: Option<RdmaConfig>,
    /// Base RTT and BDP given to RDMA congestion control (max over host pairs).
    rdma_ctx: Option<CcCtx>,
    pfc: Option<PfcConfig>,
    /// PFC event log: time, node, local port, class, 1 = paused / 0 = resumed.
    pfc_log: PfcLog,
    /// Packets of a lossless class dropped (headroom overflow or full buffer).
    lossless_drops: u64,
    /// RDMA data packet bytes beyond the payload (header, INT).
    rdma_overhead: u32,
    /// Edge pausing: clocks, gated senders, OWD samples.
    edge: Option<Box<EdgeRuntime>>,
    /// Congestion isolation (`[switch.ci]`).
    ci: Option<Box<CiRuntime>>,
    /// Bits of the CI classes (non-congested queues); 0 without CI.
    ci_base: u8,
    /// Bits of the congested-flow queues; 0 without CI.
    ci_cfq: u8,
    /// `ci_base | ci_cfq`: the queues whose exits CI tracks.
    ci_any: u8,
    /// Data packets that arrived ahead of their receiver's next expected
    /// byte (reordering or an earlier loss).
    out_of_order: u64,
}

/// Congestion isolation's shared state: the configuration, the CIP-loss
/// randomness and the counters of CIPs and NIC isolations.
struct CiRuntime {
    cfg: CiConfig,
    loss: Stream,
    cips_sent: u64,
    cips_received: u64,
    cips_lost: u64,
    acks_sent: u64,
    acks_received: u64,
    resends: u64,
    gave_up: u64,
    nic_isolations: u64,
    nic_deisolations: u64,
}

impl CiRuntime {
    fn new(cfg: &CiConfig, seed: u64) -> Self {
        CiRuntime {
            cfg: cfg.clone(),
            loss: Stream::new(seed, "cip-loss", 0),
            cips_sent: 0,
            cips_received: 0,
            cips_lost: 0,
            acks_sent: 0,
            acks_received: 0,
            resends: 0,
            gave_up: 0,
            nic_isolations: 0,
            nic_deisolations: 0,
        }
    }
}

impl Simulation {
    /// Builds the network, the flows and the generators of a scenario.
    pub fn new(sc: &Scenario) -> Result<Simulation, ScenarioError> {
        let g = &sc.graph;
        let routes = Routes::compute(g).map_err(|m| ScenarioError::new("topology", m))?;
        let seed = sc.config.seed;
        // Global port ids: host ports first (host h owns port h), then switch ports.
        let mut ports: Vec<Port> = vec![];
        // First global id of each node's ports: hosts 0..H, then switches.
        let n_hosts = g.n_hosts();
        let node_index = |n: NodeRef| match n {
            NodeRef::Host(h) => h as usize,
            NodeRef::Switch(s) => n_hosts + s as usize,
        };
        let mut base = Vec::with_capacity(n_hosts + g.n_switches());
        let mut next = 0u32;
        let nodes = (0..n_hosts as u32)
            .map(NodeRef::Host)
            .chain((0..g.n_switches() as u32).map(NodeRef::Switch));
        for n in nodes {
            base.push(next);
            next += g.ports(n).len() as u32;
        }
        let global = |n: NodeRef, local: usize| base[node_index(n)] + local as u32;
        let mut add_ports = |node: NodeRef, owner: Owner| -> Vec<u32> {
            let mut ids = vec![];
            for (l, &(link, _side)) in g.ports(node).iter().enumerate() {
                let (peer_node, peer_local) = g.peer(node, l);
                let lk = &g.links[link as usize];
                let id = global(node, l);
                debug_assert_eq!(id as usize, ports.len());
                ports.push(Port::new(
                    owner,
                    l as u16,
                    global(peer_node, peer_local),
                    lk.rate,
                    lk.delay,
                ));
                ids.push(id);
            }
            ids
        };
        let mut nics = vec![];
        for h in 0..g.n_hosts() as u32 {
            let ids = add_ports(NodeRef::Host(h), Owner::Host(h));
            nics.push(HostNic::new(ids[0]));
        }
        let mut switches = vec![];
        for s in 0..g.n_switches() as u32 {
            let ids = add_ports(NodeRef::Switch(s), Owner::Switch(s));
            let first = ids.first().copied().unwrap_or(0);
            switches.push(Switch::new(s, first..first + ids.len() as u32, seed));
        }
        let c = &sc.config;
        let duration = c.duration.map_or(0, |d| d.0);
        let host_rates: Vec<Rate> = nics.iter().map(|n| ports[n.port as usize].rate).collect();
        // RDMA flows default to the RDMA data class, TCP flows to the transport's.
        let default_class = c.rdma.as_ref().map_or(c.transport.class, |r| r.data_class);
        let class_or = |c: Option<u8>| c.unwrap_or(default_class);
        let poisson: Vec<PoissonGen> = c
            .workload
            .poisson
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut g = PoissonGen::new(
                    i,
                    seed,
                    sc.poisson_hosts[i].clone(),
                    &host_rates,
                    sc.poisson_cdfs[i].clone(),
                    p.load,
                    class_or(p.class),
                    duration,
                );
                g.small = p.small_flows.map(|s| (s.below.0, s.class));
                g
            })
            .collect();
        let host_id = |r: &crate::scenario::HostRef| -> u32 {
            match r {
                crate::scenario::HostRef::Index(i) => *i,
                crate::scenario::HostRef::Name(n) => {
                    g.host_names.iter().position(|x| x == n).expect("validated") as u32
                }
            }
        };
        let incast: Vec<IncastGen> = c
            .workload
            .incast
            .iter()
            .enumerate()
            .map(|(i, inc)| {
                IncastGen::new(
                    i,
                    seed,
                    sc.incast_hosts[i].clone(),
                    &host_rates,
                    sc.incast_mix(i),
                    match (&sc.incast_cdfs[i], inc.bytes_per_sender) {
                        (Some(c), _) => IncastSizes::Cdf(c.clone()),
                        (None, b) => IncastSizes::Fixed(b.expect("validated").0),
                    },
                    inc.load,
                    inc.times
                        .as_ref()
                        .map_or(vec![], |t| t.iter().map(|x| x.0).collect()),
                    inc.receiver.as_ref().map(host_id),
                    class_or(inc.class),
                    duration,
                )
            })
            .collect();
        let packets: Vec<PacketGen> = c
            .workload
            .packets
            .iter()
            .enumerate()
            .map(|(i, p)| {
                PacketGen::new(
                    i,
                    seed,
                    host_id(&p.src),
                    host_id(&p.dst),
                    p.size.0 as u32,
                    p.rate.0,
                    p.process == Process::Poisson,
                    class_or(p.class),
                    duration,
                )
            })
            .collect();
        let tcp = sc.tcp_params();
        let cc = c.transport.cc.clone();
        let ecn_capable = cc.build().ecn_capable();
        let horizon = duration.max(sc.listed.last().map_or(0, |f| f.start));
        let stop = c.stop.map_or(10 * SEC, |s| s.0);
        let sampled_ports: Vec<u32> = match c.metrics.queue_ports {
            QueuePorts::None => vec![],
            QueuePorts::All => (0..ports.len() as u32).collect(),
            QueuePorts::Switch => switches.iter().flat_map(|s| s.ports.clone()).collect(),
        };
        let mut node_names = g.host_names.clone();
        node_names.extend(g.switch_names.iter().cloned());
        let sw = sc.switch_params()?;
        for p in ports.iter_mut() {
            if let Owner::Switch(_) = p.owner {
                let bps = p.rate.bits_per_sec();
                for c in 0..NUM_CLASSES {
                    p.set_ecn(c, sw.ecn[c].at_rate(bps));
                }
            }
        }
        let mut sw = sw;
        let pfc_cfg = c.switch.pfc.clone();
        if let Some(pc) = &pfc_cfg {
            let mtu = match &c.rdma {
                Some(r) => r.data_wire(r.payload),
                None => c.transport.mtu,
            };
            let min_host_rate = host_rates
                .iter()
                .map(|r| r.bits_per_sec())
                .min()
                .unwrap_or(1);
            for cls in &pc.classes {
                sw.lossless |= 1 << cls;
            }
            for s in switches.iter_mut() {
                let mut st = PfcState {
                    ingress: vec![[Ingress::default(); 8]; s.ports.len()],
                    ..Default::default()
                };
                for (l, gp) in s.ports.clone().enumerate() {
                    let port = &ports[gp as usize];
                    let h = pc.headroom.map_or_else(
                        || pfc::headroom_formula(port.rate, port.delay, mtu, pc.response_time.0),
                        |h| h.0,
                    );
                    let alpha = pfc::Alpha::new(match pc.threshold {
                        pfc::PfcThreshold::Dynamic {
                            alpha,
                            scale_with_rate,
                        } => {
                            if scale_with_rate {
                                alpha * port.rate.bits_per_sec() as f64 / min_host_rate as f64
                            } else {
                                alpha
                            }
                        }
                        pfc::PfcThreshold::Static { .. } => 0.0,
                    });
                    for cls in &pc.classes {
                        let ing = &mut st.ingress[l][*cls as usize];
                        ing.headroom = h;
                        ing.alpha = alpha;
                        st.total_headroom += h;
                        st.total_reserve += pc.reserve.0;
                    }
                }
                s.pfc = st;
            }
        }
        for p in 0..ports.len() {
            ports[p].peer_local = ports[ports[p].peer as usize].local;
        }
        let mut sim = Simulation {
            q: EventQueue::new(),
            arena: PacketArena::default(),
            owners: ports.iter().map(|p| p.owner).collect(),
            ports,
            switches,
            sw,
            nics,
            routes,
            tcp,
            cc,
            ecn_capable,
            ack_class: c.transport.ack_class,
            seed,
            flows: vec![],
            free_slots: vec![],
            next_uid: 0,
            next_flow_id: 0,
            next_sport: vec![0; g.n_hosts()],
            active: 0,
            peak_active: 0,
            finished: 0,
            poisson,
            incast,
            packets,
            listed: sc.listed.clone(),
            listed_next: 0,
            generators_live: 0,
            records: FlowRecords::default(),
            incasts: vec![],
            warmup: c.metrics.warmup.0,
            measure_end: if duration > 0 {
                duration.saturating_sub(c.metrics.cooldown.0)
            } else {
                Ps::MAX
            },
            horizon,
            stop,
            done: false,
            sample_interval: c.metrics.queue_sample_interval.0,
            sampled_ports,
            samples: Default::default(),
            packet_hops: 0,
            wire_bytes: 0,
            cons: Conservation::default(),
            size_buckets: c.metrics.size_buckets.iter().map(|b| b.0).collect(),
            name: c.name.clone(),
            node_names,
            started: Instant::now(),
            trace_cc: vec![],
            rdma: c.rdma.clone(),
            rdma_ctx: None,
            pfc: pfc_cfg,
            pfc_log: Default::default(),
            lossless_drops: 0,
            rdma_overhead: c.rdma.as_ref().map_or(0, |r| r.data_wire(0)),
            edge: c.edge.as_ref().map(|e| {
                Box::new(EdgeRuntime::new(
                    e,
                    sc.graph.n_hosts(),
                    &sc.edge_hosts,
                    seed,
                ))
            }),
            ci: c
                .switch
                .ci
                .as_ref()
                .map(|cfg| Box::new(CiRuntime::new(cfg, seed))),
            ci_base: c.switch.ci.as_ref().map_or(0, |c| c.base_mask()),
            ci_cfq: c.switch.ci.as_ref().map_or(0, |c| c.cfq_mask()),
            ci_any: c
                .switch
                .ci
                .as_ref()
                .map_or(0, |c| c.base_mask() | c.cfq_mask()),
            out_of_order: 0,
        };
        if sim.ci.is_some() {
            for sw in &sim.switches {
                for gp in sw.ports.clone() {
                    sim.ports[gp as usize].ci = Some(Box::default());
                }
            }
        }
        if let Some(r) = &sim.rdma {
            let ctx = sim.rdma_base_ctx(r);
            if r.cc.build(&ctx).needs_int() {
                sim.arena.enable_int();
            }
            sim.rdma_ctx = Some(ctx);
        }
        sim.schedule_generators(c);
        Ok(sim)
    }

    fn schedule_generators(&mut self, c: &crate::scenario::ScenarioConfig) {
        for (g, cfg) in c.workload.poisson.iter().enumerate() {
            for i in 0..self.poisson[g].hosts.len() {
                if let Some(t) = self.poisson[g].next_time(i, cfg.start.0) {
                    self.q.push(t, Ev::Poisson(g as u16, i as u32));
                    self.generators_live += 1;
                }
            }
        }
        for (g, cfg) in c.workload.incast.iter().enumerate() {
            let first = if cfg.load.is_some() {
                self.incast[g].next_time(cfg.start.0)
            } else {
                self.incast[g].next_time(0)
            };
            if let Some(t) = first {
                self.q.push(t, Ev::Incast(g as u32));
                self.generators_live += 1;
            }
        }
        for (g, cfg) in c.workload.packets.iter().enumerate() {
            if let Some(t) = self.packets[g].next_time(cfg.start.0) {
                self.q.push(t, Ev::Packets(g as u32));
                self.generators_live += 1;
            }
        }
        if let Some(f) = self.listed.first() {
            self.q.push(f.start, Ev::Listed);
            self.generators_live += 1;
        }
        if !self.sampled_ports.is_empty() {
            self.q.push(0, Ev::Sample);
        }
    }

    /// The current simulated time.
    pub fn now(&self) -> Ps {
        self.q.now()
    }

    /// Runs at most `max_events` events. Returns `true` when the run is over.
    pub fn advance(&mut self, max_events: u64) -> bool {
        for _ in 0..max_events {
            if self.done {
                return true;
            }
            let Some((t, ev)) = self.q.pop() else {
                self.done = true;
                return true;
            };
            if t > self.stop {
                self.done = true;
                return true;
            }
            // Packet arrivals are most of the events and each reads a packet
            // last touched a link delay ago: start loading the next ones now.
            if let Some(&Ev::Arrive(next)) = self.q.upcoming(2) {
                self.arena.prefetch(next);
            }
            self.dispatch(t, ev);
            if self.generators_live == 0 && self.active == 0 && self.arena.live() == 0 {
                self.done = true;
            }
        }
        self.done
    }

    /// Runs until `t` (events at exactly `t` included) or the end of the run.
    pub fn run_until(&mut self, t: Ps) -> bool {
        while !self.done && self.q.peek_time().is_some_and(|x| x <= t) {
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
            active_flows: self.active,
            finished_flows: self.finished,
        }
    }

    #[inline(always)]
    fn dispatch(&mut self, now: Ps, ev: Ev) {
        match ev {
            Ev::Arrive(pkt) => self.on_arrive(now, pkt),
            Ev::TxDone(p) => {
                self.ports[p as usize].tx_event = false;
                match self.owners[p as usize] {
                    Owner::Switch(s) => self.switch_tx(now, s, p),
                    Owner::Host(h) => self.host_tx(now, h),
                }
            }
            Ev::Rto(slot) => {
                if self.flows[slot as usize].qp.is_some() {
                    self.on_qp_rto(now, slot)
                } else {
                    self.on_rto(now, slot)
                }
            }
            Ev::CcTimer(slot) => self.on_cc_timer(now, slot),
            Ev::CnpTimer(slot) => self.on_cnp_timer(now, slot),
            Ev::NicWake(h) => {
                if self
                    .q
                    .fire(&mut self.nics[h as usize].wake, now, Ev::NicWake(h))
                {
                    self.host_kick(now, h);
                }
            }
            Ev::PauseExpire(p) => self.on_pause_expire(now, p),
            Ev::PfcRefresh(p) => self.on_pfc_refresh(now, p),
            Ev::Watchdog(p) => self.on_watchdog(now, p),
            Ev::Gate(slot) => self.on_gate(now, slot),
            Ev::Ci(p) => self.on_ci_timer(now, p),
            Ev::DelAck(slot) => self.on_delack(now, slot),
            Ev::Poisson(g, i) => {
                self.generators_live -= 1;
                let req = self.poisson[g as usize].flow(i as usize);
                self.start_flow(now, req, KIND_POISSON, -1);
                if let Some(t) = self.poisson[g as usize].next_time(i as usize, now) {
                    self.q.push(t, Ev::Poisson(g, i));
                    self.generators_live += 1;
                }
            }
            Ev::Incast(g) => {
                self.generators_live -= 1;
                self.on_incast(now, g as usize);
                if let Some(t) = self.incast[g as usize].next_time(now) {
                    self.q.push(t.max(now), Ev::Incast(g));
                    self.generators_live += 1;
                }
            }
            Ev::Listed => {
                self.generators_live -= 1;
                while let Some(f) = self.listed.get(self.listed_next).copied() {
                    if f.start > now {
                        self.q.push(f.start, Ev::Listed);
                        self.generators_live += 1;
                        break;
                    }
                    self.listed_next += 1;
                    let req = FlowRequest {
                        src: f.src,
                        dst: f.dst,
                        size: f.size,
                        class: f.class,
                    };
                    self.start_flow(now, req, KIND_LISTED, -1);
                }
            }
            Ev::Packets(g) => {
                self.generators_live -= 1;
                let pg = &self.packets[g as usize];
                let pkt = Packet {
                    seq: 0,
                    ts: now,
                    enq_at: now,
                    hash: pg.hash,
                    flow: g,
                    flow_uid: 0,
                    dst: pg.dst,
                    size: pg.size,
                    payload: pg.size,
                    kind: PacketKind::Raw,
                    class: pg.class,
                    prio: pg.class,
                    flags: 0,
                    in_port: 0,
                    to_port: 0,
                };
                let src = pg.src;
                self.cons.sent_bytes += pg.size as u64;
                let id = self.arena.alloc(pkt);
                self.nics[src as usize].ctrl.push_back(id);
                self.host_kick(now, src);
                if let Some(t) = self.packets[g as usize].next_time(now) {
                    self.q.push(t, Ev::Packets(g));
                    self.generators_live += 1;
                }
            }
            Ev::Sample => {
                for &p in &self.sampled_ports {
                    let port = &self.ports[p as usize];
                    let node = match port.owner {
                        Owner::Host(h) => h,
                        Owner::Switch(s) => self.nics.len() as u32 + s,
                    };
                    self.samples.0.push(now);
                    self.samples.1.push(node);
                    self.samples.2.push(port.local as u32);
                    self.samples.3.push(port.queued_bytes());
                }
                if !(self.generators_live == 0 && self.active == 0) {
                    self.q.push(now + self.sample_interval, Ev::Sample);
                }
            }
        }
    }

    // ---------------------------------------------------------------- wires and ports

    #[inline(always)]
    fn on_arrive(&mut self, now: Ps, pkt: PktId) {
        self.packet_hops += 1;
        let p = self.arena.get(pkt);
        let (peer, kind) = (p.to_port, p.kind);
        self.wire_bytes -= p.size as u64;
        if kind == PacketKind::Pause {
            self.on_pause_frame(now, peer, pkt);
            return;
        }
        if matches!(kind, PacketKind::Cip | PacketKind::CipAck) {
            self.on_cip(now, peer, pkt);
            return;
        }
        match self.owners[peer as usize] {
            Owner::Switch(s) => {
                let local = self.arena.get(pkt).in_port;
                self.switch_receive(now, s, pkt, local)
            }
            Owner::Host(h) => self.host_receive(now, h, pkt),
        }
    }

    /// Starts a transmission on `p` and schedules what it implies.
    #[inline(always)]
    fn transmit(&mut self, now: Ps, p: u32, pkt: PktId) {
        let port = &mut self.ports[p as usize];
        let peer = port.peer;
        let packet = self.arena.get_mut(pkt);
        packet.to_port = peer;
        packet.in_port = port.peer_local;
        let size = packet.size;
        let arrival = port.transmit(now, size);
        self.wire_bytes += size as u64;
        self.q.push(arrival, Ev::Arrive(pkt));
    }

    #[inline(always)]
    fn want_tx_done(&mut self, p: u32) {
        let port = &mut self.ports[p as usize];
        if !port.tx_event {
            port.tx_event = true;
            let t = port.busy_until;
            self.q.push(t, Ev::TxDone(p));
        }
    }

    fn switch_receive(&mut self, now: Ps, s: u32, pkt: PktId, in_local: u16) {
        let p = self.arena.get_mut(pkt);
        let (dst, hash, class, size) = (p.dst, p.hash, p.class as usize, p.size as Bytes);
        // PFC accounts the packet to the priority it arrived on.
        let prio = p.prio as usize;
        let local = self.routes.select(s, dst, hash);
        let out = self.switches[s as usize].port(local);
        let lossless = self.sw.lossless & (1 << prio) != 0;
        // A lossless packet that leaves at once, at an ingress far from XOFF,
        // passes *unseen*: charging and releasing it in this same instant
        // would change no count and send neither PAUSE nor XON.
        let mut unseen = false;
        if lossless {
            let cfg = self.pfc.as_ref().expect("lossless implies pfc");
            let sw = &mut self.switches[s as usize];
            let full = sw.used + size > self.sw.buffer;
            unseen = !full
                && self.ci_any & (1 << class) == 0
                && Switch::leaves_at_once(&self.sw, &self.ports[out as usize], class, now)
                && sw
                    .pfc
                    .passes_unseen(cfg, self.sw.buffer, in_local as usize, prio, size);
            if !unseen {
                if full || sw.pfc.charge(cfg, in_local as usize, prio, size) == Charge::Violation {
                    // A lossless violation: headroom (or the whole buffer) overflowed.
                    self.lossless_drops += 1;
                    let cnt = &mut self.ports[out as usize].queues[class].counters;
                    cnt.drop_pkts += 1;
                    cnt.drop_bytes += size;
                    self.cons.dropped_bytes += size;
                    self.arena.free(pkt);
                    return;
                }
                let ing = &sw.pfc.ingress[in_local as usize][prio];
                if !ing.paused
                    && sw
                        .pfc
                        .should_pause(cfg, self.sw.buffer, in_local as usize, prio)
                {
                    self.send_pfc(now, s, in_local, prio as u8, true);
                }
            }
        }
        let charged = lossless && !unseen;
        if self.ci_any & (1 << class) != 0 {
            self.ci_receive(now, s, out, pkt, in_local, charged);
            return;
        }
        if unseen || Switch::leaves_at_once(&self.sw, &self.ports[out as usize], class, now) {
            // The common case on a lightly loaded port: straight through.
            let sw = &mut self.switches[s as usize];
            let port = &mut self.ports[out as usize];
            if sw.pass_through(&self.sw, port, size, class) == Enqueue::Queued {
                self.depart(now, s, out, pkt, class, charged);
            } else {
                self.refuse(s, pkt, in_local, prio, size, charged);
            }
            return;
        }
        if self.admit(now, s, out, pkt, class, in_local, lossless) {
            self.kick_switch_port(now, s, out);
        }
    }

    /// A packet the egress queue refused (admission): undo its ingress
    /// charge and count it dropped.
    fn refuse(
        &mut self,
        s: u32,
        pkt: PktId,
        in_local: u16,
        prio: usize,
        size: Bytes,
        lossless: bool,
    ) {
        if lossless {
            let cfg = self.pfc.as_ref().expect("pfc");
            self.switches[s as usize]
                .pfc
                .release(cfg, in_local as usize, prio, size);
        }
        self.cons.dropped_bytes += size;
        self.arena.free(pkt);
    }

    /// Queues packet `pkt` (arrived on local port `in_local`) in class queue
    /// `queue` of switch port `out`, or drops it (watchdog, admission).
    /// Returns whether it was queued.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn admit(
        &mut self,
        now: Ps,
        s: u32,
        out: u32,
        pkt: PktId,
        queue: usize,
        in_local: u16,
        lossless: bool,
    ) -> bool {
        let (prio, size) = {
            let p = self.arena.get(pkt);
            (p.prio as usize, p.size as Bytes)
        };
        let sw = &mut self.switches[s as usize];
        let port = &mut self.ports[out as usize];
        if port.storm & (1 << queue) != 0 {
            // The dropping watchdog disabled PFC on this queue.
            let q = &mut port.queues[queue];
            q.counters.drop_pkts += 1;
            q.counters.drop_bytes += size;
            port.pfc.watchdog_drops += 1;
            self.release_lossless(now, s, in_local, prio, size);
            self.cons.dropped_bytes += size;
            self.arena.free(pkt);
            return false;
        }
        if sw.enqueue(&self.sw, port, &mut self.arena, pkt, queue, now) == Enqueue::Dropped {
            self.refuse(s, pkt, in_local, prio, size, lossless);
            return false;
        }
        true
    }

    /// Port `out` of switch `s` has a new packet queued: send now or when free.
    #[inline(always)]
    fn kick_switch_port(&mut self, now: Ps, s: u32, out: u32) {
        if self.ports[out as usize].is_idle(now) {
            self.switch_tx(now, s, out);
        } else {
            self.want_tx_done(out);
        }
    }

    /// `switch_receive` for a packet of a CI class (or of a class used as a
    /// CFQ): congestion isolation picks the queue (the class's own, or a
    /// CFQ) and tracks it.
    #[inline(never)]
    fn ci_receive(&mut self, now: Ps, s: u32, out: u32, pkt: PktId, in_local: u16, lossless: bool) {
        let class = self.arena.get(pkt).class as usize;
        let (queue, entry) = if self.ci_base & (1 << class) != 0 {
            self.ci_classify(now, s, out, pkt, in_local)
        } else {
            (class, None)
        };
        if !self.admit(now, s, out, pkt, queue, in_local, lossless) {
            return;
        }
        let order = self.ci.as_ref().expect("ci").cfg.order;
        let (cp, queues, ci_blocked) = self.ports[out as usize].ci_parts();
        cp.on_enqueue(queue as u8, entry);
        cp.refresh_blocked(order, self.ci_cfq, queues, &self.arena, ci_blocked);
        self.kick_switch_port(now, s, out);
    }

    fn switch_tx(&mut self, now: Ps, s: u32, p: u32) {
        let port = &mut self.ports[p as usize];
        if port.busy_until > now {
            self.want_tx_done(p);
            return;
        }
        if let Some(pkt) = port.pop_ctrl() {
            // PFC frames go first and are never paused (802.1Qbb §36.1.3.2).
            self.transmit(now, p, pkt);
            let port = &self.ports[p as usize];
            if port.has_ctrl() || port.sendable() != 0 {
                self.want_tx_done(p);
            }
            return;
        }
        let Some((pkt, queue)) =
            self.switches[s as usize].dequeue(&self.sw, port, &mut self.arena, now)
        else {
            return;
        };
        self.depart(now, s, p, pkt, queue, true);
    }

    /// Packet `pkt` left class queue `queue` of switch port `p`: release its
    /// ingress charge (when it was `charged`), stamp INT, put it on the wire.
    #[inline(always)]
    fn depart(&mut self, now: Ps, s: u32, p: u32, pkt: PktId, queue: usize, charged: bool) {
        let (prio, in_local, size, kind, key) = {
            let k = self.arena.get_mut(pkt);
            let prio = k.prio as usize;
            // It travels on to the next hop on the priority of the queue it left.
            k.prio = queue as u8;
            (prio, k.in_port, k.size as Bytes, k.kind, k.hash)
        };
        if self.ci_any & (1 << queue) != 0 {
            self.ci_exit(p, queue as u8, key);
        }
        if charged {
            self.release_lossless(now, s, in_local, prio, size);
        }
        if kind == PacketKind::Data && self.arena.int_enabled() {
            // HPCC INT (Li et al. 2019 §3.2): the egress port's state at dequeue.
            let port = &self.ports[p as usize];
            let hop = IntHop {
                ts: now,
                tx_bytes: port.tx_bytes + size,
                qlen: port.queued_bytes(),
                rate_bps: port.rate.bits_per_sec(),
            };
            self.arena.int_mut(pkt).push(hop);
        }
        self.transmit(now, p, pkt);
        let port = &self.ports[p as usize];
        if port.sendable() != 0 || port.has_ctrl() {
            self.want_tx_done(p);
        }
    }

    // ---------------------------------------------------------------- PFC

    /// Sends an XOFF (`pause`) or XON for `class` out of switch `s`'s local port `l`.
    fn send_pfc(&mut self, now: Ps, s: u32, l: u16, class: u8, pause: bool) {
        let cfg = self.pfc.as_ref().expect("pfc");
        let quanta = if pause { cfg.pause_quanta } else { 0 };
        let mode = cfg.mode;
        let sw = &mut self.switches[s as usize];
        sw.pfc.ingress[l as usize][class as usize].paused = pause;
        let gp = sw.port(l);
        let frame = Packet {
            seq: quanta as u64,
            ts: now,
            enq_at: now,
            hash: 0,
            flow: 0,
            flow_uid: 0,
            dst: u32::MAX,
            size: pfc::PFC_FRAME_BYTES,
            payload: class as u32,
            kind: PacketKind::Pause,
            class,
            prio: class,
            flags: 0,
            in_port: 0,
            to_port: 0,
        };
        self.cons.sent_bytes += frame.size as u64;
        let id = self.arena.alloc(frame);
        let port = &mut self.ports[gp as usize];
        port.push_ctrl(id);
        if pause {
            port.pfc.xoff_tx[class as usize] += 1;
            if mode == PauseMode::Quanta && quanta > 0 {
                // Refresh at half the pause time while still congested (spec §2.1).
                let half = quanta as Ps * pfc::quantum(port.rate) / 2;
                self.q
                    .arm(&mut port.pfc.refresh, now + half.max(1), Ev::PfcRefresh(gp));
            }
        } else {
            port.pfc.xon_tx[class as usize] += 1;
        }
        if self.ports[gp as usize].is_idle(now) {
            self.switch_tx(now, s, gp);
        } else {
            self.want_tx_done(gp);
        }
    }

    fn on_pfc_refresh(&mut self, now: Ps, gp: u32) {
        if !self.q.fire(
            &mut self.ports[gp as usize].pfc.refresh,
            now,
            Ev::PfcRefresh(gp),
        ) {
            return;
        }
        let Owner::Switch(s) = self.ports[gp as usize].owner else {
            return;
        };
        let l = self.ports[gp as usize].local;
        let classes = self.pfc.as_ref().expect("pfc").classes.clone();
        for c in classes {
            if self.switches[s as usize].pfc.ingress[l as usize][c as usize].paused {
                self.send_pfc(now, s, l, c, true);
            }
        }
    }

    /// A PFC frame reached port `gp` (whose transmitter it pauses or resumes).
    fn on_pause_frame(&mut self, now: Ps, gp: u32, id: PktId) {
        let pkt = *self.arena.get(id);
        self.cons.delivered_bytes += pkt.size as u64;
        self.arena.free(id);
        let class = pkt.payload as usize;
        let quanta = pkt.seq;
        let cfg = self.pfc.as_ref().expect("pfc frames imply pfc");
        let mode = cfg.mode;
        if matches!(self.ports[gp as usize].owner, Owner::Host(_)) && !cfg.hosts_obey {
            return;
        }
        let watchdog = cfg.watchdog;
        let port = &mut self.ports[gp as usize];
        if port.storm & (1 << class) != 0 {
            // The watchdog disabled PFC for this class: count, remember the
            // pause the peer asks for (applied if still on at restore), ignore.
            if quanta > 0 {
                port.pfc.xoff_rx[class] += 1;
                port.pfc.last_xoff[class] = now;
                port.pfc.pause_until[class] = match mode {
                    PauseMode::UntilResume => Ps::MAX,
                    PauseMode::Quanta => now + quanta * pfc::quantum(port.rate),
                };
            } else {
                port.pfc.xon_rx[class] += 1;
                port.pfc.pause_until[class] = now;
            }
            return;
        }
        if quanta > 0 {
            port.pfc.xoff_rx[class] += 1;
            let until = match mode {
                PauseMode::UntilResume => Ps::MAX,
                PauseMode::Quanta => now + quanta * pfc::quantum(port.rate),
            };
            port.pfc.pause_until[class] = until;
            if port.paused & (1 << class) == 0 {
                port.paused |= 1 << class;
                port.pfc.paused_since[class] = now;
                if let Some(w) = watchdog {
                    let port = &mut self.ports[gp as usize];
                    self.q
                        .arm(&mut port.pfc.watchdog, now + w.limit.0, Ev::Watchdog(gp));
                }
                self.log_pfc(now, gp, class as u8, 1);
            }
            let port = &mut self.ports[gp as usize];
            if until != Ps::MAX {
                self.q.arm(&mut port.pfc.expiry, until, Ev::PauseExpire(gp));
            }
        } else {
            port.pfc.xon_rx[class] += 1;
            if port.paused & (1 << class) != 0 {
                self.resume(now, gp, class);
            }
        }
    }

    fn resume(&mut self, now: Ps, gp: u32, class: usize) {
        let port = &mut self.ports[gp as usize];
        port.paused &= !(1 << class);
        port.pfc.tripped &= !(1 << class);
        let d = now - port.pfc.paused_since[class];
        port.pfc.paused_time[class] += d;
        port.pfc.longest_pause[class] = port.pfc.longest_pause[class].max(d);
        self.log_pfc(now, gp, class as u8, 0);
        self.kick_port(now, gp);
    }

    fn on_pause_expire(&mut self, now: Ps, gp: u32) {
        if !self.q.fire(
            &mut self.ports[gp as usize].pfc.expiry,
            now,
            Ev::PauseExpire(gp),
        ) {
            return;
        }
        let mut next = Ps::MAX;
        for c in 0..8 {
            let port = &self.ports[gp as usize];
            if port.paused & (1 << c) == 0 {
                continue;
            }
            if port.pfc.pause_until[c] <= now {
                self.resume(now, gp, c);
            } else {
                next = next.min(port.pfc.pause_until[c]);
            }
        }
        if next != Ps::MAX {
            self.q.arm(
                &mut self.ports[gp as usize].pfc.expiry,
                next,
                Ev::PauseExpire(gp),
            );
        }
    }

    /// The PFC watchdog's timer on port `gp`: trips pauses that have lasted
    /// `limit` and, in drop mode, restores classes quiet for `restore`.
    fn on_watchdog(&mut self, now: Ps, gp: u32) {
        if !self.q.fire(
            &mut self.ports[gp as usize].pfc.watchdog,
            now,
            Ev::Watchdog(gp),
        ) {
            return;
        }
        let w = self
            .pfc
            .as_ref()
            .and_then(|c| c.watchdog)
            .expect("watchdog events imply a watchdog");
        let (limit, restore) = (w.limit.0, w.restore_ps());
        let mut next = Ps::MAX;
        for c in 0..NUM_CLASSES {
            let bit = 1u8 << c;
            let port = &mut self.ports[gp as usize];
            if port.paused & bit != 0 && port.pfc.tripped & bit == 0 {
                let due = port.pfc.paused_since[c] + limit;
                if due > now {
                    next = next.min(due);
                    continue;
                }
                port.pfc.tripped |= bit;
                port.pfc.watchdog_trips += 1;
                self.log_pfc(now, gp, c as u8, PFC_WATCHDOG_TRIP);
                // Drop mode acts on switch queues; a host's pauses are only reported.
                if w.drop && matches!(self.owners[gp as usize], Owner::Switch(_)) {
                    let port = &mut self.ports[gp as usize];
                    port.storm |= bit;
                    port.pfc.last_xoff[c] = now;
                    next = next.min(now + restore);
                    self.resume(now, gp, c);
                    self.flush_class(now, gp, c);
                }
            } else if port.storm & bit != 0 {
                let due = port.pfc.last_xoff[c] + restore;
                if due > now {
                    next = next.min(due);
                } else {
                    port.storm &= !bit;
                    self.log_pfc(now, gp, c as u8, PFC_WATCHDOG_RESTORE);
                    // The peer's last word was a pause that is still on: obey it.
                    let port = &mut self.ports[gp as usize];
                    let until = port.pfc.pause_until[c];
                    if until > now {
                        port.paused |= bit;
                        port.pfc.paused_since[c] = now;
                        next = next.min(now + limit);
                        if until != Ps::MAX {
                            self.q.arm(&mut port.pfc.expiry, until, Ev::PauseExpire(gp));
                        }
                        self.log_pfc(now, gp, c as u8, 1);
                    }
                }
            }
        }
        if next != Ps::MAX {
            self.q.arm(
                &mut self.ports[gp as usize].pfc.watchdog,
                next,
                Ev::Watchdog(gp),
            );
        }
    }

    /// Drops every packet queued in class `c` of switch port `gp` (dropping watchdog).
    fn flush_class(&mut self, now: Ps, gp: u32, c: usize) {
        let Owner::Switch(s) = self.ports[gp as usize].owner else {
            unreachable!("the dropping watchdog acts on switch ports only");
        };
        while let Some(pkt) = self.ports[gp as usize].queues[c].pkts.pop_front() {
            let (size, in_local, prio, key) = {
                let k = self.arena.get(pkt);
                (k.size as Bytes, k.in_port, k.prio as usize, k.hash)
            };
            if self.ci_any & (1 << c) != 0 {
                self.ci_exit(gp, c as u8, key);
            }
            let port = &mut self.ports[gp as usize];
            port.queues[c].bytes -= size;
            port.queues[c].counters.drop_pkts += 1;
            port.queues[c].counters.drop_bytes += size;
            port.pfc.watchdog_drops += 1;
            self.switches[s as usize].used -= size;
            self.release_lossless(now, s, in_local, prio, size);
            self.cons.dropped_bytes += size;
            self.arena.free(pkt);
        }
        self.ports[gp as usize].nonempty &= !(1 << c);
        // A flushed NCQ may release a congested-flow queue's markers.
        self.kick_port(now, gp);
    }

    /// Returns a lossless packet's bytes to its ingress accounting (`class`:
    /// the priority it arrived on) and sends XON upstream when the ingress
    /// falls below its resume threshold.
    #[inline]
    fn release_lossless(&mut self, now: Ps, s: u32, in_local: u16, class: usize, size: Bytes) {
        if self.sw.lossless & (1 << class) == 0 {
            return;
        }
        let cfg = self.pfc.as_ref().expect("pfc");
        let sw = &mut self.switches[s as usize];
        sw.pfc.release(cfg, in_local as usize, class, size);
        if sw.pfc.ingress[in_local as usize][class].paused
            && sw
                .pfc
                .should_resume(cfg, self.sw.buffer, in_local as usize, class)
        {
            self.send_pfc(now, s, in_local, class as u8, false);
        }
    }

    fn log_pfc(&mut self, now: Ps, gp: u32, class: u8, ev: u8) {
        let port = &self.ports[gp as usize];
        let node = match port.owner {
            Owner::Host(h) => h,
            Owner::Switch(s) => self.nics.len() as u32 + s,
        };
        self.pfc_log.0.push(now);
        self.pfc_log.1.push(node);
        self.pfc_log.2.push(port.local as u32);
        self.pfc_log.3.push(class);
        self.pfc_log.4.push(ev);
    }

    /// Something may be sendable on port `gp` again.
    fn kick_port(&mut self, now: Ps, gp: u32) {
        match self.ports[gp as usize].owner {
            Owner::Host(h) => self.host_kick(now, h),
            Owner::Switch(s) => {
                if self.ports[gp as usize].is_idle(now) {
                    self.switch_tx(now, s, gp);
                } else {
                    self.want_tx_done(gp);
                }
            }
        }
    }

    // ---------------------------------------------------------------- congestion isolation

    /// IEEE 802.1Qcz at egress port `out` of switch `s`: the queue a packet of
    /// a CI class joins (its class's, or its flow's congested-flow queue) and
    /// the flow's table entry when it joins a CFQ. Looks the flow up, ages
    /// its entry, detects congesting flows and sends the CIPs that follow.
    #[inline(never)]
    fn ci_classify(
        &mut self,
        now: Ps,
        s: u32,
        out: u32,
        pkt: PktId,
        in_local: u16,
    ) -> (usize, Option<usize>) {
        let p = *self.arena.get(pkt);
        let (key, base, size) = (p.hash, p.class, p.size as Bytes);
        let cfg = &self.ci.as_ref().expect("ci").cfg;
        let (age, order, threshold) = (cfg.age.0, cfg.order, cfg.threshold.0);
        let (cp, queues, ci_blocked) = self.ports[out as usize].ci_parts();
        let mut idx = cp.find(key);
        if let Some(i) = idx {
            if cp.aged(i, now, age, order) {
                // Not seen for `age` and nothing of it in the CFQ: de-isolate.
                cp.remove(i);
                cp.refresh_blocked(order, self.ci_cfq, queues, &self.arena, ci_blocked);
                idx = None;
            }
        }
        // Entries whose CIP may go now; flows isolated here now.
        let mut new = vec![];
        let mut created = vec![];
        let idx = match idx {
            Some(i) => {
                let e = &mut cp.entries[i];
                e.last_seen = now;
                if e.ingress == NO_PORT {
                    e.ingress = in_local;
                }
                if p.prio != p.class {
                    // Arrived on a congested-flow priority: the upstream has isolated it.
                    e.confirmed = true;
                }
                if !e.cip_sent
                    && (e.local
                        || cfg.propagate == ci::Propagate::Immediate
                        || queues[e.cfq as usize].bytes + size > threshold)
                {
                    new.push(i);
                }
                Some(i)
            }
            None => {
                let q = queues[base as usize].bytes;
                if cp.detect(cfg, base, q, size) {
                    let found = match cfg.detect {
                        ci::Detect::Top { k, .. } => {
                            CiPort::top_flows(queues, &self.arena, base, k as usize)
                        }
                        _ => vec![(key, in_local, p.flow, p.flow_uid)],
                    };
                    for (k, ing, flow, uid) in found {
                        if cp.find(k).is_some() {
                            continue;
                        }
                        if let Some(i) = cp.isolate(
                            cfg,
                            queues,
                            &self.arena,
                            k,
                            base,
                            ing,
                            now,
                            true,
                            (flow, uid),
                        ) {
                            new.push(i);
                            created.push((flow, uid));
                        }
                    }
                    cp.refresh_blocked(order, self.ci_cfq, queues, &self.arena, ci_blocked);
                }
                cp.find(key)
            }
        };
        let cfq = idx.map(|i| cp.entries[i].cfq as usize);
        self.ci_send_cips(now, s, out, &new);
        for (flow, uid) in created.iter().copied() {
            self.count_isolation(flow, uid);
        }
        if !created.is_empty() || !new.is_empty() {
            self.ci_arm(now, out);
        }
        match (cfq, idx) {
            (Some(c), Some(i)) => (c, Some(i)),
            _ => (base as usize, None),
        }
    }

    /// Counts an isolation of the flow in `slot` (if it is still that flow).
    fn count_isolation(&mut self, slot: u32, uid: u32) {
        if let Some(f) = self.flows.get_mut(slot as usize) {
            if f.active && f.uid == uid {
                f.ci_isolations += 1;
            }
        }
    }

    /// Sends the CIPs of entries `idx` of port `out` upstream (out of each
    /// flow's ingress port).
    fn ci_send_cips(&mut self, now: Ps, s: u32, out: u32, idx: &[usize]) {
        for &i in idx {
            let cfg = &self.ci.as_ref().expect("ci").cfg;
            let (rel, copies, interval, nic) = (
                cfg.cip.reliability,
                cfg.cip.copies,
                cfg.cip.interval.0,
                cfg.nic,
            );
            let ing = self.ports[out as usize]
                .ci
                .as_deref()
                .expect("ci port")
                .entries[i]
                .ingress;
            if ing == NO_PORT {
                continue;
            }
            let up = self.switches[s as usize].port(ing);
            let upstream_is_host = matches!(
                self.owners[self.ports[up as usize].peer as usize],
                Owner::Host(_)
            );
            let cp = self.ports[out as usize].ci.as_deref_mut().expect("ci port");
            let e = &mut cp.entries[i];
            if e.cip_sent {
                continue;
            }
            e.cip_sent = true;
            let (key, base, flow) = (e.key, e.base, (e.flow, e.flow_uid));
            if upstream_is_host && !nic {
                // The NIC would ignore it: no CIP, nothing to confirm.
                e.confirmed = true;
                continue;
            }
            let n = match rel {
                Reliability::Repeat => copies.max(1),
                _ => 1,
            };
            if matches!(rel, Reliability::Ack | Reliability::Marked) {
                e.next_resend = now + interval;
            } else {
                e.confirmed = true;
            }
            for _ in 0..n {
                self.send_link_frame(now, up, PacketKind::Cip, key, base, flow);
            }
        }
    }

    /// Queues a link-local CI frame (CIP or CIP-ACK) on port `gp`'s control FIFO.
    fn send_link_frame(
        &mut self,
        now: Ps,
        gp: u32,
        kind: PacketKind,
        key: u64,
        base: u8,
        flow: (u32, u32),
    ) {
        let frame = Packet {
            seq: key,
            ts: now,
            enq_at: now,
            hash: 0,
            flow: flow.0,
            flow_uid: flow.1,
            dst: u32::MAX,
            size: pfc::PFC_FRAME_BYTES,
            payload: base as u32,
            kind,
            class: base,
            prio: base,
            flags: 0,
            in_port: 0,
            to_port: 0,
        };
        let r = self.ci.as_deref_mut().expect("ci");
        match kind {
            PacketKind::Cip => r.cips_sent += 1,
            _ => r.acks_sent += 1,
        }
        self.cons.sent_bytes += frame.size as u64;
        let id = self.arena.alloc(frame);
        self.ports[gp as usize].push_ctrl(id);
        self.kick_port(now, gp);
    }

    /// A packet of flow `key` left class queue `queue` of switch port `p`.
    #[inline(never)]
    fn ci_exit(&mut self, p: u32, queue: u8, key: u64) {
        let r = self.ci.as_deref().expect("ci");
        let (order, drain) = (r.cfg.order, r.cfg.release_on_drain);
        let (cp, queues, ci_blocked) = self.ports[p as usize].ci_parts();
        cp.on_exit(queue, key, self.ci_cfq);
        if drain && self.ci_cfq & (1 << queue) != 0 && queues[queue as usize].pkts.is_empty() {
            // `release_on_drain`: the CFQ is empty, its locally detected flows go back.
            let mut i = 0;
            while i < cp.len() {
                let e = &cp.entries[i];
                if e.local && e.cfq == queue && e.in_cfq == 0 {
                    cp.remove(i);
                } else {
                    i += 1;
                }
            }
        }
        cp.refresh_blocked(order, self.ci_cfq, queues, &self.arena, ci_blocked);
    }

    /// Arms port `gp`'s CI timer for its earliest resend or aging deadline.
    fn ci_arm(&mut self, now: Ps, gp: u32) {
        let cfg = &self.ci.as_ref().expect("ci").cfg;
        let (age, resend) = (
            cfg.age.0,
            matches!(cfg.cip.reliability, Reliability::Ack | Reliability::Marked),
        );
        let cp = self.ports[gp as usize].ci.as_deref_mut().expect("ci port");
        let mut next = Ps::MAX;
        for e in &cp.entries {
            // Aged but with packets still in its CFQ: look again in `age`.
            let expiry = e.last_seen + age;
            next = next.min(if expiry > now { expiry } else { now + age });
            if resend && e.cip_sent && !e.confirmed {
                next = next.min(e.next_resend);
            }
        }
        if next == Ps::MAX {
            cp.timer.disarm();
            return;
        }
        let next = next.max(now);
        let earlier = cp.timer.deadline().is_none_or(|d| d <= now || next < d);
        if earlier {
            self.q.arm(&mut cp.timer, next, Ev::Ci(gp));
        }
    }

    /// Port `gp`'s CI timer: ages entries out and resends unconfirmed CIPs.
    fn on_ci_timer(&mut self, now: Ps, gp: u32) {
        let cp = self.ports[gp as usize].ci.as_deref_mut().expect("ci port");
        if !self.q.fire(&mut cp.timer, now, Ev::Ci(gp)) {
            return;
        }
        let Owner::Switch(s) = self.owners[gp as usize] else {
            return;
        };
        let r = self.ci.as_deref().expect("ci");
        let (age, order, interval, max) = (
            r.cfg.age.0,
            r.cfg.order,
            r.cfg.cip.interval.0,
            r.cfg.cip.max_resends,
        );
        let mut resend = vec![];
        let mut gave_up = 0;
        {
            let (cp, queues, ci_blocked) = self.ports[gp as usize].ci_parts();
            let mut i = 0;
            while i < cp.len() {
                if cp.aged(i, now, age, order) {
                    cp.remove(i);
                    continue;
                }
                let e = &mut cp.entries[i];
                if e.cip_sent && !e.confirmed && e.next_resend <= now {
                    if e.resends >= max {
                        e.confirmed = true;
                        gave_up += 1;
                    } else {
                        e.resends += 1;
                        e.next_resend = now + interval;
                        resend.push((e.ingress, e.key, e.base, (e.flow, e.flow_uid)));
                    }
                }
                i += 1;
            }
            cp.refresh_blocked(order, self.ci_cfq, queues, &self.arena, ci_blocked);
        }
        let r = self.ci.as_deref_mut().expect("ci");
        r.gave_up += gave_up;
        r.resends += resend.len() as u64;
        for (ing, key, base, flow) in resend {
            let up = self.switches[s as usize].port(ing);
            self.send_link_frame(now, up, PacketKind::Cip, key, base, flow);
        }
        // A de-isolation may have unblocked a CFQ.
        self.kick_port(now, gp);
        self.ci_arm(now, gp);
    }

    /// A CIP or CIP-ACK reached port `gp`.
    fn on_cip(&mut self, now: Ps, gp: u32, id: PktId) {
        let pkt = *self.arena.get(id);
        self.arena.free(id);
        let r = self.ci.as_deref_mut().expect("CIPs imply ci");
        let loss = r.cfg.cip.loss;
        if loss > 0.0 && r.loss.chance(loss) {
            // Lost on the link (CI must survive it).
            r.cips_lost += 1;
            self.cons.dropped_bytes += pkt.size as u64;
            return;
        }
        self.cons.delivered_bytes += pkt.size as u64;
        let (key, base, flow) = (pkt.seq, pkt.payload as u8, (pkt.flow, pkt.flow_uid));
        if pkt.kind == PacketKind::CipAck {
            r.acks_received += 1;
            // Confirms the entry whose CIPs went out of this port.
            if let Owner::Switch(s) = self.owners[gp as usize] {
                let local = self.ports[gp as usize].local;
                for p in self.switches[s as usize].ports.clone() {
                    let cp = self.ports[p as usize].ci.as_deref_mut().expect("ci port");
                    if let Some(i) = cp.find(key) {
                        if cp.entries[i].ingress == local {
                            cp.entries[i].confirmed = true;
                        }
                    }
                }
            }
            return;
        }
        r.cips_received += 1;
        let ack = r.cfg.cip.reliability == Reliability::Ack;
        let cfq = r.cfg.cfq_for(base, key);
        match self.owners[gp as usize] {
            Owner::Host(h) => {
                if !r.cfg.nic {
                    return;
                }
                // The sending NIC isolates the flow: it sends on the CFQ's priority.
                let mut n = 0;
                for f in self.flows.iter_mut() {
                    if f.active && f.src == h && f.hash == key && f.class == base {
                        if f.prio != cfq {
                            f.prio = cfq;
                            f.ci_isolations += 1;
                            n += 1;
                        }
                        f.ci_last = now;
                    }
                }
                r.nic_isolations += n;
            }
            Owner::Switch(_) => {
                let r = self.ci.as_deref().expect("ci");
                let cfg = &r.cfg;
                let (cp, queues, ci_blocked) = self.ports[gp as usize].ci_parts();
                match cp.find(key) {
                    Some(i) => cp.entries[i].last_seen = now,
                    None => {
                        // Isolate it at our egress towards the CIP's sender; its
                        // ingress port (where our own CIP goes) is learnt from
                        // its next packet.
                        if cp
                            .isolate(
                                cfg,
                                queues,
                                &self.arena,
                                key,
                                base,
                                NO_PORT,
                                now,
                                false,
                                flow,
                            )
                            .is_some()
                        {
                            cp.refresh_blocked(
                                cfg.order,
                                self.ci_cfq,
                                queues,
                                &self.arena,
                                ci_blocked,
                            );
                            self.count_isolation(flow.0, flow.1);
                        }
                    }
                }
                self.ci_arm(now, gp);
            }
        }
        if ack {
            self.send_link_frame(now, gp, PacketKind::CipAck, key, base, flow);
        }
    }

    /// The NIC's isolation of flow `f` ends when the flow has sent nothing on
    /// the isolated priority (and was not paused on it) for `age`.
    fn nic_ci_age(ci: Option<&mut CiRuntime>, f: &mut FlowSlot, now: Ps, paused: u8) {
        let Some(r) = ci else { return };
        if paused & (1 << f.prio) != 0 {
            f.ci_last = now;
        } else if now >= f.ci_last + r.cfg.age.0 {
            f.prio = f.class;
            r.nic_deisolations += 1;
        }
    }

    // ---------------------------------------------------------------- hosts

    /// Tells host `h`'s NIC that it may have something to send.
    #[inline]
    fn host_kick(&mut self, now: Ps, h: u32) {
        let p = self.nics[h as usize].port;
        if self.ports[p as usize].is_idle(now) {
            self.host_tx(now, h);
        } else {
            self.want_tx_done(p);
        }
    }

    fn host_tx(&mut self, now: Ps, h: u32) {
        let p = self.nics[h as usize].port;
        if self.ports[p as usize].busy_until > now {
            self.want_tx_done(p);
            return;
        }
        if self.ci_cfq != 0 {
            if let Some(id) = self.ports[p as usize].pop_ctrl() {
                // Link-local control frames (CIP-ACKs) are never paused.
                self.transmit(now, p, id);
                self.want_tx_done(p);
                return;
            }
        }
        let paused = self.ports[p as usize].paused;
        let ctrl_ok = self.nics[h as usize]
            .ctrl
            .front()
            .is_some_and(|&id| paused & (1 << self.arena.get(id).class) == 0);
        let pkt = if ctrl_ok {
            self.nics[h as usize].ctrl.pop_front()
        } else if self.rdma.is_some() {
            self.next_rdma_packet(now, h)
        } else {
            self.next_data_packet(now, h)
        };
        if let Some(id) = pkt {
            self.transmit(now, p, id);
            if self.nics[h as usize].has_work() {
                self.want_tx_done(p);
            }
        }
    }

    /// Round robin over the host's QPs: the next paced data packet, if one may
    /// leave now; otherwise arm the NIC's wake-up for the earliest pacing deadline.
    fn next_rdma_packet(&mut self, now: Ps, h: u32) -> Option<PktId> {
        let cfg = self.rdma.as_ref().expect("rdma");
        let p = self.nics[h as usize].port;
        let paused = self.ports[p as usize].paused;
        let mut wake = Ps::MAX;
        let n = self.nics[h as usize].ready.len();
        for _ in 0..n {
            let slot = self.nics[h as usize].ready.pop_front().expect("len");
            let f = &mut self.flows[slot as usize];
            if !f.active {
                f.in_ready = false;
                continue;
            }
            self.nics[h as usize].ready.push_back(slot);
            if f.prio != f.class {
                Self::nic_ci_age(self.ci.as_deref_mut(), f, now, paused);
            }
            let qp = f.qp.as_mut().expect("rdma flow");
            if paused & (1 << f.prio) != 0 {
                continue; // PFC pauses this QP's priority: XON or expiry kicks the NIC
            }
            if let Some(g) = f.gate.as_deref() {
                if !g.is_open(now) {
                    // Edge pause: the QP's next packet waits at the sender.
                    wake = wake.min(g.hold_until);
                    continue;
                }
            }
            match qp.send_state(cfg, now) {
                SendState::Blocked => continue,
                SendState::WaitUntil(t) => {
                    wake = wake.min(t);
                    continue;
                }
                SendState::Ready => {}
            }
            let overhead = self.rdma_overhead;
            let (seq, len, retx) = qp.take_segment(cfg, now, |pl| pl + overhead);
            if f.prio != f.class {
                f.ci_last = now;
            }
            let mut fl = if qp.cc.ecn_capable() { flags::ECT } else { 0 };
            if retx {
                fl |= flags::RETX;
            }
            let pkt = Packet {
                seq,
                ts: now,
                enq_at: now,
                hash: f.hash,
                flow: slot,
                flow_uid: f.uid,
                dst: f.dst,
                size: len + overhead,
                payload: len,
                kind: PacketKind::Data,
                class: f.class,
                prio: f.prio,
                flags: fl,
                in_port: 0,
                to_port: 0,
            };
            self.cons.sent_bytes += pkt.size as u64;
            if !qp.rto_timer.is_armed() {
                self.q
                    .arm(&mut qp.rto_timer, now + cfg.rto.0, Ev::Rto(slot));
            }
            Self::arm_cc_timer(&mut self.q, qp, slot);
            return Some(self.arena.alloc(pkt));
        }
        if wake != Ps::MAX {
            self.q
                .arm(&mut self.nics[h as usize].wake, wake, Ev::NicWake(h));
        }
        None
    }

    #[inline]
    fn arm_cc_timer(q: &mut EventQueue<Ev>, qp: &mut RdmaQp, slot: u32) {
        match qp.cc.next_timer() {
            Some(t) => {
                q.arm(&mut qp.cc_timer, t.max(q.now()), Ev::CcTimer(slot));
            }
            None => qp.cc_timer.disarm(),
        }
    }

    fn on_cc_timer(&mut self, now: Ps, slot: u32) {
        let f = &mut self.flows[slot as usize];
        if !f.active {
            return;
        }
        let Some(qp) = f.qp.as_mut() else { return };
        if self.q.fire(&mut qp.cc_timer, now, Ev::CcTimer(slot)) {
            qp.on_cc_timer(now);
            Self::arm_cc_timer(&mut self.q, qp, slot);
            let src = f.src;
            self.host_kick(now, src);
        }
    }

    fn on_qp_rto(&mut self, now: Ps, slot: u32) {
        let f = &mut self.flows[slot as usize];
        if !f.active {
            return;
        }
        let cfg = self.rdma.as_ref().expect("rdma");
        let qp = f.qp.as_mut().expect("rdma");
        if !self.q.fire(&mut qp.rto_timer, now, Ev::Rto(slot)) || !qp.outstanding() {
            return;
        }
        qp.on_timeout();
        self.q
            .arm(&mut qp.rto_timer, now + cfg.rto.0, Ev::Rto(slot));
        let src = f.src;
        self.host_kick(now, src);
    }

    fn on_cnp_timer(&mut self, now: Ps, slot: u32) {
        let f = &mut self.flows[slot as usize];
        if !f.active {
            return;
        }
        let qp = f.qp.as_mut().expect("rdma");
        if self.q.fire(&mut qp.cnp_timer, now, Ev::CnpTimer(slot)) && qp.on_cnp_timer(now) {
            self.send_rdma_ctrl(slot, PacketKind::Cnp, 0, Echo::default(), false, None);
            let h = self.flows[slot as usize].dst;
            self.host_kick(now, h);
        }
    }

    /// Queues an ACK, NACK or CNP at the receiver of flow `slot`, towards its sender.
    fn send_rdma_ctrl(
        &mut self,
        slot: u32,
        kind: PacketKind,
        seq: u64,
        echo: Echo,
        ece: bool,
        int_from: Option<PktId>,
    ) {
        let cfg = self.rdma.as_ref().expect("rdma");
        let f = &self.flows[slot as usize];
        let pkt = Packet {
            seq,
            ts: echo.ts,
            enq_at: 0,
            hash: f.ack_hash,
            flow: slot,
            flow_uid: f.uid,
            dst: f.src,
            size: if kind == PacketKind::Cnp {
                cfg.cnp_size
            } else {
                cfg.ack_size
            },
            payload: Packet::owd_payload(echo.owd as i32),
            kind,
            class: cfg.ctrl_class,
            prio: cfg.ctrl_class,
            flags: if ece { flags::ECE } else { 0 },
            in_port: 0,
            to_port: 0,
        };
        self.cons.sent_bytes += pkt.size as u64;
        let id = self.arena.alloc(pkt);
        if let Some(from) = int_from {
            if self.arena.int_enabled() {
                // The receiver echoes the data packet's INT records (HPCC §3.2).
                self.arena.copy_int(from, id);
            }
        }
        let dst_host = f.dst;
        self.nics[dst_host as usize].ctrl.push_back(id);
    }

    fn rdma_receive(&mut self, now: Ps, h: u32, id: PktId) {
        let pkt = *self.arena.get(id);
        let slot = pkt.flow;
        let f = &mut self.flows[slot as usize];
        if !f.active || f.uid != pkt.flow_uid {
            self.arena.free(id);
            return;
        }
        let cfg = self.rdma.as_ref().expect("rdma");
        let qp = f.qp.as_mut().expect("rdma flow");
        match pkt.kind {
            PacketKind::Data => {
                let owd = match self.edge.as_deref_mut() {
                    Some(e) => e.reading(f.src, h, pkt.ts, now) as i64,
                    None => 0,
                };
                let echo = Echo { ts: pkt.ts, owd };
                let out = qp.on_data(cfg, now, pkt.seq, pkt.payload, pkt.has(flags::CE));
                if out.gap {
                    self.out_of_order += 1;
                }
                if let Some(t) = out.cnp_timer {
                    self.q.arm(&mut qp.cnp_timer, t, Ev::CnpTimer(slot));
                }
                if out.cnp {
                    self.send_rdma_ctrl(slot, PacketKind::Cnp, 0, Echo::default(), false, None);
                }
                if let Some((ack, ece)) = out.ack {
                    self.send_rdma_ctrl(slot, PacketKind::Ack, ack, echo, ece, Some(id));
                }
                if let Some(e) = out.nack {
                    self.send_rdma_ctrl(slot, PacketKind::Nack, e, echo, false, None);
                }
                self.arena.free(id);
                if out.cnp || out.ack.is_some() || out.nack.is_some() {
                    self.host_kick(now, h);
                }
            }
            PacketKind::Ack | PacketKind::Nack => {
                if let Some(e) = self.edge.as_deref_mut() {
                    Self::edge_reading(e, f, now, &pkt);
                }
                let qp = f.qp.as_mut().expect("rdma flow");
                if pkt.kind == PacketKind::Nack {
                    qp.on_nack(cfg, pkt.seq);
                }
                // The INT records are read where they are, not copied out.
                let int: &[IntHop] = if self.arena.int_enabled() {
                    self.arena.int(id).hops()
                } else {
                    &[]
                };
                let done = qp.on_ack(now, pkt.seq, pkt.ts, pkt.has(flags::ECE), int);
                // Freed after the last read of its records; nothing above
                // allocates, so the arena's free list is as if freed first.
                self.arena.free(id);
                if done {
                    self.complete_flow(now, slot);
                    return;
                }
                self.q
                    .arm(&mut qp.rto_timer, now + cfg.rto.0, Ev::Rto(slot));
                Self::arm_cc_timer(&mut self.q, qp, slot);
                let src = f.src;
                self.host_kick(now, src);
            }
            PacketKind::Cnp => {
                self.arena.free(id);
                qp.on_cnp(now);
                Self::arm_cc_timer(&mut self.q, qp, slot);
                let src = f.src;
                self.host_kick(now, src);
            }
            _ => unreachable!("not an RDMA packet"),
        }
    }

    /// Round robin over the host's sendable flows: the next data segment.
    fn next_data_packet(&mut self, now: Ps, h: u32) -> Option<PktId> {
        let paused = self.ports[self.nics[h as usize].port as usize].paused;
        let mut tries = self.nics[h as usize].ready.len();
        while let Some(slot) = self.nics[h as usize].ready.pop_front() {
            let f = &mut self.flows[slot as usize];
            f.in_ready = false;
            if !f.active {
                continue;
            }
            if f.prio != f.class {
                Self::nic_ci_age(self.ci.as_deref_mut(), f, now, paused);
            }
            if paused & (1 << f.prio) != 0 {
                // PFC: this flow's class is paused; the resume kicks the NIC.
                f.in_ready = true;
                self.nics[h as usize].ready.push_back(slot);
                tries -= 1;
                if tries == 0 {
                    return None;
                }
                continue;
            }
            if let Some(g) = f.gate.as_deref_mut() {
                if !g.is_open(now) {
                    // Edge pause: off the ready list until the gate reopens.
                    let t = g.hold_until;
                    self.q.arm(&mut g.timer, t, Ev::Gate(slot));
                    continue;
                }
            }
            let Some(seg) = f.tcp.next_segment(&self.tcp) else {
                continue;
            };
            if f.prio != f.class {
                f.ci_last = now;
            }
            let mut fl = if self.ecn_capable { flags::ECT } else { 0 };
            if seg.retx {
                fl |= flags::RETX;
            }
            let pkt = Packet {
                seq: seg.seq,
                ts: now,
                enq_at: now,
                hash: f.hash,
                flow: slot,
                flow_uid: f.uid,
                dst: f.dst,
                size: seg.len + self.tcp.header,
                payload: seg.len,
                kind: PacketKind::Data,
                class: f.class,
                prio: f.prio,
                flags: fl,
                in_port: 0,
                to_port: 0,
            };
            self.cons.sent_bytes += pkt.size as u64;
            if !f.tcp.rto_timer.is_armed() {
                let rto = f.tcp.rtt.current(&self.tcp);
                self.q.arm(&mut f.tcp.rto_timer, now + rto, Ev::Rto(slot));
            }
            if f.tcp.can_send(&self.tcp) {
                f.in_ready = true;
                self.nics[h as usize].ready.push_back(slot);
            }
            return Some(self.arena.alloc(pkt));
        }
        None
    }

    fn host_receive(&mut self, now: Ps, h: u32, id: PktId) {
        let pkt = *self.arena.get(id);
        self.cons.delivered_bytes += pkt.size as u64;
        if self.rdma.is_some() && pkt.kind != PacketKind::Raw {
            self.rdma_receive(now, h, id);
            return;
        }
        self.arena.free(id);
        debug_assert_eq!(pkt.dst, h, "packet delivered to the wrong host");
        if pkt.kind == PacketKind::Raw {
            return;
        }
        let slot = pkt.flow;
        let f = &mut self.flows[slot as usize];
        if !f.active || f.uid != pkt.flow_uid {
            return; // a late packet of a finished flow
        }
        match pkt.kind {
            PacketKind::Data => {
                let owd = match self.edge.as_deref_mut() {
                    Some(e) => e.reading(f.src, h, pkt.ts, now) as i64,
                    None => 0,
                };
                if pkt.seq > f.tcp.rcv_nxt {
                    self.out_of_order += 1;
                }
                let out = f.tcp.on_data(
                    now,
                    pkt.seq,
                    pkt.payload,
                    pkt.has(flags::CE),
                    Echo { ts: pkt.ts, owd },
                    &self.tcp,
                );
                if let Some(t) = out.arm_delack {
                    self.q.arm(&mut f.tcp.delack_timer, t, Ev::DelAck(slot));
                }
                for a in out.acks.into_iter().flatten() {
                    self.send_ack(slot, a);
                }
                if out.acks[0].is_some() {
                    self.host_kick(now, h);
                }
            }
            PacketKind::Ack => {
                if let Some(e) = self.edge.as_deref_mut() {
                    Self::edge_reading(e, f, now, &pkt);
                }
                let r = f
                    .tcp
                    .on_ack(now, pkt.seq, pkt.has(flags::ECE), pkt.ts, &self.tcp);
                if r.completed {
                    self.complete_flow(now, slot);
                    return;
                }
                if r.advanced {
                    if f.tcp.outstanding() {
                        let rto = f.tcp.rtt.current(&self.tcp);
                        self.q.arm(&mut f.tcp.rto_timer, now + rto, Ev::Rto(slot));
                    } else {
                        f.tcp.rto_timer.disarm();
                    }
                }
                if r.may_send && !f.in_ready {
                    f.in_ready = true;
                    let src = f.src;
                    self.nics[src as usize].ready.push_back(slot);
                    self.host_kick(now, src);
                }
            }
            _ => unreachable!("not a TCP packet"),
        }
    }

    fn send_ack(&mut self, slot: u32, a: AckOut) {
        let f = &self.flows[slot as usize];
        let pkt = Packet {
            seq: a.ack,
            ts: a.ts,
            enq_at: 0,
            hash: f.ack_hash,
            flow: slot,
            flow_uid: f.uid,
            dst: f.src,
            size: self.tcp.ack_size,
            payload: Packet::owd_payload(a.owd as i32),
            kind: PacketKind::Ack,
            class: self.ack_class.unwrap_or(f.class),
            prio: self.ack_class.unwrap_or(f.class),
            flags: if a.ece { flags::ECE } else { 0 },
            in_port: 0,
            to_port: 0,
        };
        self.cons.sent_bytes += pkt.size as u64;
        let id = self.arena.alloc(pkt);
        let dst_host = f.dst;
        self.nics[dst_host as usize].ctrl.push_back(id);
    }

    /// An ACK brought back an OWD reading: sample it and feed the flow's gate.
    fn edge_reading(e: &mut EdgeRuntime, f: &mut FlowSlot, now: Ps, ack: &Packet) {
        e.record(now, f.id, ack.owd());
        if let Some(g) = f.gate.as_deref_mut() {
            g.on_owd(OwdSample {
                now,
                owd: ack.owd(),
                sent_at: ack.ts,
            });
        }
    }

    /// A TCP flow's gate may have reopened: back on its NIC's ready list.
    fn on_gate(&mut self, now: Ps, slot: u32) {
        let f = &mut self.flows[slot as usize];
        if !f.active {
            return;
        }
        let Some(g) = f.gate.as_deref_mut() else {
            return;
        };
        if !self.q.fire(&mut g.timer, now, Ev::Gate(slot)) {
            return;
        }
        if !f.in_ready && f.tcp.can_send(&self.tcp) {
            f.in_ready = true;
            let src = f.src;
            self.nics[src as usize].ready.push_back(slot);
            self.host_kick(now, src);
        }
    }

    fn on_rto(&mut self, now: Ps, slot: u32) {
        let f = &mut self.flows[slot as usize];
        if !f.active {
            return;
        }
        if !self.q.fire(&mut f.tcp.rto_timer, now, Ev::Rto(slot))
            || (!f.tcp.outstanding() && f.tcp.snd_una >= f.tcp.size)
        {
            return;
        }
        f.tcp.on_timeout(&self.tcp);
        let rto = f.tcp.rtt.current(&self.tcp);
        self.q.arm(&mut f.tcp.rto_timer, now + rto, Ev::Rto(slot));
        if !f.in_ready && f.tcp.can_send(&self.tcp) {
            f.in_ready = true;
            let src = f.src;
            self.nics[src as usize].ready.push_back(slot);
            self.host_kick(now, src);
        }
    }

    fn on_delack(&mut self, now: Ps, slot: u32) {
        let f = &mut self.flows[slot as usize];
        if !f.active {
            return;
        }
        if !self.q.fire(&mut f.tcp.delack_timer, now, Ev::DelAck(slot)) {
            return;
        }
        if let Some(a) = f.tcp.on_delack_timeout() {
            let h = f.dst;
            self.send_ack(slot, a);
            self.host_kick(now, h);
        }
    }

    // ---------------------------------------------------------------- flows

    fn on_incast(&mut self, now: Ps, g: usize) {
        let ev = self.incast[g].event();
        // Bytes per sender: exact for fixed sizes, the event's average for a CDF.
        let bytes = ev.sizes.iter().sum::<u64>() / ev.sizes.len().max(1) as u64;
        let class = self.incast[g].class;
        let id = self.incasts.len() as i64;
        self.incasts.push(IncastRecord {
            receiver: ev.receiver,
            fan_in: ev.senders.len() as u32,
            bytes,
            start: now,
            remaining: ev.senders.len() as u32,
            finish: None,
        });
        for (s, size) in ev.senders.into_iter().zip(ev.sizes) {
            self.start_flow(
                now,
                FlowRequest {
                    src: s,
                    dst: ev.receiver,
                    size,
                    class,
                },
                KIND_INCAST,
                id,
            );
        }
    }

    /// The flow's ECMP hash: seeded, from its 5-tuple (source, destination, source port).
    fn flow_hash(&mut self, src: u32, dst: u32) -> (u64, u64) {
        let sport = self.next_sport[src as usize];
        self.next_sport[src as usize] += 1;
        let key = ((src as u64) << 40) ^ ((dst as u64) << 16) ^ sport as u64;
        let h = mix64(derive_seed(self.seed, "ecmp", key));
        (h, mix64(h ^ 0x5bd1_e995))
    }

    /// The packet size unit and header of the flows (RDMA payload or TCP MSS).
    fn segment_and_header(&self) -> (u64, u64) {
        match &self.rdma {
            Some(r) => (r.payload as u64, r.header as u64),
            None => (self.tcp.mss, self.tcp.header as u64),
        }
    }

    /// Base RTT of a path as the HPCC simulator defines it (`pairRtt`): twice the
    /// propagation delay plus one full segment's serialization on every hop; and
    /// the path's slowest link.
    fn path_base_rtt(&self, src: u32, dst: u32, hash: u64) -> (Ps, Rate) {
        let (seg, _) = self.segment_and_header();
        let mut delay = 0;
        let mut ser = 0;
        let mut min_rate = Rate(u64::MAX);
        let mut p = self.nics[src as usize].port;
        loop {
            let port = &self.ports[p as usize];
            delay += port.delay;
            ser += port.rate.tx_time(seg);
            min_rate = min_rate.min(port.rate);
            match self.ports[port.peer as usize].owner {
                Owner::Host(_) => break,
                Owner::Switch(s) => {
                    let local = self.routes.select(s, dst, hash);
                    p = self.switches[s as usize].port(local);
                }
            }
        }
        (2 * delay + ser, min_rate)
    }

    /// Edge pausing: the idle one-way delay of a full-size data packet on the
    /// flow's ECMP path (propagation plus store-and-forward serialization on
    /// every hop) and the number of switches on it.
    fn path_info(&self, src: u32, dst: u32, hash: u64) -> PathInfo {
        let wire = match &self.rdma {
            Some(r) => r.payload as u64 + self.rdma_overhead as u64,
            None => self.tcp.mss + self.tcp.header as u64,
        };
        let mut base_owd = 0;
        let mut switch_hops = 0;
        let mut p = self.nics[src as usize].port;
        loop {
            let port = &self.ports[p as usize];
            base_owd += port.delay + port.rate.tx_time(wire);
            match self.ports[port.peer as usize].owner {
                Owner::Host(_) => break,
                Owner::Switch(s) => {
                    switch_hops += 1;
                    let local = self.routes.select(s, dst, hash);
                    p = self.switches[s as usize].port(local);
                }
            }
        }
        PathInfo {
            base_owd,
            switch_hops,
        }
    }

    /// Congestion-control context with the largest base RTT over all host pairs
    /// (HPCC simulator `GLOBAL_T 1`), the line rate of host 0's NIC.
    fn rdma_base_ctx(&self, r: &RdmaConfig) -> CcCtx {
        let n = self.nics.len() as u32;
        let mut t = 0;
        // Every (source, destination) pair, as the HPCC simulator does: O(hosts^2 x
        // hops) at setup, about 0.1 M path walks for its 320-host fat-tree.
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    t = t.max(self.path_base_rtt(a, b, 0).0);
                }
            }
        }
        let line = self.ports[self.nics[0].port as usize].rate;
        CcCtx {
            line_rate: line.bits_per_sec() as f64,
            base_rtt: t,
            mtu: r.payload as u64,
            bdp: line.bytes_in(t),
        }
    }

    /// HPCC's standalone FCT along the flow's actual ECMP path (see [`crate::metrics`]).
    fn ideal_fct(&self, src: u32, dst: u32, size: u64, hash: u64) -> Ps {
        let (seg, header) = self.segment_and_header();
        let (base_rtt, min_rate) = self.path_base_rtt(src, dst, hash);
        let packets = size.div_ceil(seg);
        base_rtt + min_rate.tx_time(size + packets * header)
    }

    fn start_flow(&mut self, now: Ps, req: FlowRequest, kind: u8, incast: i64) {
        let (hash, ack_hash) = self.flow_hash(req.src, req.dst);
        let ideal = self.ideal_fct(req.src, req.dst, req.size, hash);
        let uid = self.next_uid;
        self.next_uid = self.next_uid.wrapping_add(1);
        let id = self.next_flow_id;
        self.next_flow_id += 1;
        // Edge pausing: a gate with the threshold of the flow's path.
        let gate = match self.edge.as_deref() {
            Some(e) if e.gated[req.src as usize] => {
                let path = self.path_info(req.src, req.dst, hash);
                let e = self.edge.as_deref_mut().expect("edge");
                Some(Box::new(e.gate(&path)))
            }
            _ => None,
        };
        let slot = FlowSlot {
            uid,
            active: true,
            in_ready: true,
            id,
            src: req.src,
            dst: req.dst,
            start: now,
            class: req.class,
            kind,
            incast,
            hash,
            ack_hash,
            ideal,
            tcp: TcpFlow::new(req.size, self.cc.build(), &self.tcp),
            qp: self.rdma.as_ref().map(|r| {
                let mut ctx = self.rdma_ctx.expect("rdma ctx");
                let line = self.ports[self.nics[req.src as usize].port as usize].rate;
                ctx.line_rate = line.bits_per_sec() as f64;
                if r.base_rtt == BaseRtt::PerPair {
                    ctx.base_rtt = self.path_base_rtt(req.src, req.dst, hash).0;
                }
                ctx.bdp = line.bytes_in(ctx.base_rtt);
                Box::new(RdmaQp::new(req.size, r.cc.build(&ctx), ctx))
            }),
            gate,
            prio: req.class,
            ci_last: 0,
            ci_isolations: 0,
        };
        let s = match self.free_slots.pop() {
            Some(s) => {
                self.flows[s as usize] = slot;
                s
            }
            None => {
                self.flows.push(slot);
                (self.flows.len() - 1) as u32
            }
        };
        self.active += 1;
        self.peak_active = self.peak_active.max(self.active);
        self.nics[req.src as usize].ready.push_back(s);
        self.host_kick(now, req.src);
    }

    fn record(&mut self, slot: u32, finish: Option<Ps>) {
        let f = &self.flows[slot as usize];
        self.records.push(FlowRecord {
            flow_id: f.id,
            src: f.src,
            dst: f.dst,
            size: f.tcp.size,
            start: f.start,
            finish,
            ideal: f.ideal,
            class: f.class,
            kind: f.kind,
            incast: f.incast,
            retransmits: f.qp.as_ref().map_or(f.tcp.retransmits, |q| q.retransmits),
            edge_pauses: f.gate.as_ref().map_or(0, |g| g.pauses),
            edge_paused_ps: f
                .gate
                .as_ref()
                .map_or(0, |g| g.paused_until(finish.unwrap_or(self.q.now()))),
            timeouts: f.qp.as_ref().map_or(f.tcp.timeouts, |q| q.timeouts),
            ci_isolations: f.ci_isolations,
            cnps: f.qp.as_ref().map_or(0, |q| q.cnps_sent as u32),
            measured: f.start >= self.warmup && f.start < self.measure_end,
        });
    }

    fn complete_flow(&mut self, now: Ps, slot: u32) {
        self.record(slot, Some(now));
        let f = &mut self.flows[slot as usize];
        f.active = false;
        f.tcp.rto_timer.disarm();
        f.tcp.delack_timer.disarm();
        if let Some(q) = f.qp.as_mut() {
            q.rto_timer.disarm();
            q.cc_timer.disarm();
            q.cnp_timer.disarm();
            // QPs stay in their NIC's round robin while active: remove this one
            // now, before its slot is reused by a flow of another host.
            let src = f.src;
            self.nics[src as usize].ready.retain(|&x| x != slot);
        }
        if f.incast >= 0 {
            let r = &mut self.incasts[f.incast as usize];
            r.remaining -= 1;
            if r.remaining == 0 {
                r.finish = Some(now);
            }
        }
        self.active -= 1;
        self.finished += 1;
        self.free_slots.push(slot);
    }

    /// Samples a scalar of each active flow's congestion control (e.g. DCTCP's alpha)
    /// into an internal trace; used by validation tests.
    pub fn trace_cc_now(&mut self) {
        let now = self.now();
        for f in self.flows.iter().filter(|f| f.active) {
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
        self.flows
            .iter()
            .filter(|f| f.active)
            .map(|f| (f.id, f.tcp.win.cwnd))
            .collect()
    }
    /// Bytes acknowledged so far of each active flow: (flow id, snd_una).
    pub fn acked_bytes(&self) -> Vec<(u64, u64)> {
        self.flows
            .iter()
            .filter(|f| f.active)
            .map(|f| (f.id, f.qp.as_ref().map_or(f.tcp.snd_una, |q| q.snd_una)))
            .collect()
    }
    /// Bytes queued at switch port (switch, local port), all classes.
    pub fn switch_queue_bytes(&self, switch: u32, local: usize) -> Bytes {
        self.ports[self.switches[switch as usize].port(local as u16) as usize].queued_bytes()
    }
    /// Bytes transmitted so far by switch port (switch, local port).
    pub fn switch_port_tx_bytes(&self, switch: u32, local: usize) -> u64 {
        self.ports[self.switches[switch as usize].port(local as u16) as usize].tx_bytes
    }

    fn in_network_bytes(&self) -> u64 {
        let mut b = self.wire_bytes;
        for p in &self.ports {
            for id in p.ctrl_frames() {
                b += self.arena.get(id).size as u64;
            }
            for q in &p.queues {
                for &id in &q.pkts {
                    b += self.arena.get(id).size as u64;
                }
            }
        }
        for n in &self.nics {
            for &id in &n.ctrl {
                b += self.arena.get(id).size as u64;
            }
        }
        b
    }

    /// Ends the run and collects the results.
    pub fn finish(mut self) -> Results {
        let end = self.now();
        // Unfinished flows are recorded too, flagged.
        let active: Vec<u32> = (0..self.flows.len() as u32)
            .filter(|&s| self.flows[s as usize].active)
            .collect();
        for s in active {
            self.record(s, None);
        }
        self.cons.in_network_bytes = self.in_network_bytes();
        let records = std::mem::take(&mut self.records);
        let flows = records.into_table();
        let n_hosts = self.nics.len() as u32;
        let node_of = |o: Owner| match o {
            Owner::Host(h) => h,
            Owner::Switch(s) => n_hosts + s,
        };

        let mut ports = Table::default();
        let mut counters = Table::default();
        {
            let (mut node, mut port, mut peer, mut rate, mut txb, mut txp, mut busy, mut util) = (
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
            );
            let (
                mut cn,
                mut cp,
                mut cc,
                mut c1,
                mut c2,
                mut c3,
                mut c4,
                mut c5,
                mut c6,
                mut c7,
                mut c8,
            ) = (
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
            );
            for p in &self.ports {
                node.push(node_of(p.owner));
                port.push(p.local as u32);
                peer.push(node_of(self.ports[p.peer as usize].owner));
                rate.push(p.rate.bits_per_sec());
                txb.push(p.tx_bytes);
                txp.push(p.tx_pkts);
                let b = p.busy_time().min(end);
                busy.push(b);
                util.push(if end > 0 { b as f64 / end as f64 } else { 0.0 });
                if let Owner::Switch(_) = p.owner {
                    for (class, q) in p.queues.iter().enumerate() {
                        let k = &q.counters;
                        if q.enq_pkts() == 0 && k.drop_pkts == 0 {
                            continue;
                        }
                        cn.push(node_of(p.owner));
                        cp.push(p.local as u32);
                        cc.push(class as u8);
                        c1.push(q.enq_pkts());
                        c2.push(q.enq_bytes());
                        c3.push(k.drop_pkts);
                        c4.push(k.drop_bytes);
                        c5.push(k.ecn_marks);
                        c6.push(k.deq_pkts);
                        c7.push(k.qdelay_sum);
                        c8.push(q.max_bytes);
                    }
                }
            }
            ports.push("node", Column::U32(node));
            ports.push("port", Column::U32(port));
            ports.push("peer", Column::U32(peer));
            ports.push("rate_bps", Column::U64(rate));
            ports.push("tx_bytes", Column::U64(txb));
            ports.push("tx_pkts", Column::U64(txp));
            ports.push("busy_ps", Column::U64(busy));
            ports.push("utilization", Column::F64(util));
            let pf = |f: &dyn Fn(&crate::net::port::PortPfc) -> u64| -> Column {
                Column::U64(self.ports.iter().map(|p| f(&p.pfc)).collect())
            };
            let end_now = end;
            ports.push("pause_tx", pf(&|p| p.xoff_tx.iter().sum()));
            ports.push("resume_tx", pf(&|p| p.xon_tx.iter().sum()));
            ports.push("pause_rx", pf(&|p| p.xoff_rx.iter().sum()));
            ports.push("resume_rx", pf(&|p| p.xon_rx.iter().sum()));
            // Paused time, including pauses still in force at the end.
            ports.push(
                "paused_ps",
                Column::U64(
                    self.ports
                        .iter()
                        .map(|p| {
                            (0..8)
                                .map(|c| {
                                    p.pfc.paused_time[c]
                                        + if p.paused & (1 << c) != 0 {
                                            end_now - p.pfc.paused_since[c]
                                        } else {
                                            0
                                        }
                                })
                                .sum()
                        })
                        .collect(),
                ),
            );
            ports.push(
                "longest_pause_ps",
                pf(&|p| *p.longest_pause.iter().max().unwrap_or(&0)),
            );
            ports.push("watchdog_trips", pf(&|p| p.watchdog_trips));
            ports.push("watchdog_drops", pf(&|p| p.watchdog_drops));
            counters.push("node", Column::U32(cn));
            counters.push("port", Column::U32(cp));
            counters.push("class", Column::U8(cc));
            counters.push("enq_pkts", Column::U64(c1));
            counters.push("enq_bytes", Column::U64(c2));
            counters.push("drop_pkts", Column::U64(c3));
            counters.push("drop_bytes", Column::U64(c4));
            counters.push("ecn_marks", Column::U64(c5));
            counters.push("deq_pkts", Column::U64(c6));
            counters.push("qdelay_sum_ps", Column::U64(c7));
            counters.push("max_queue_bytes", Column::U64(c8));
        }
        let mut incasts = Table::default();
        incasts.push(
            "incast_id",
            Column::U64((0..self.incasts.len() as u64).collect()),
        );
        incasts.push(
            "receiver",
            Column::U32(self.incasts.iter().map(|r| r.receiver).collect()),
        );
        incasts.push(
            "fan_in",
            Column::U32(self.incasts.iter().map(|r| r.fan_in).collect()),
        );
        incasts.push(
            "bytes_per_sender",
            Column::U64(self.incasts.iter().map(|r| r.bytes).collect()),
        );
        incasts.push(
            "start_ps",
            Column::U64(self.incasts.iter().map(|r| r.start).collect()),
        );
        incasts.push(
            "finish_ps",
            Column::U64(self.incasts.iter().map(|r| r.finish.unwrap_or(0)).collect()),
        );
        incasts.push(
            "completion_ps",
            Column::U64(
                self.incasts
                    .iter()
                    .map(|r| r.finish.map_or(0, |f| f - r.start))
                    .collect(),
            ),
        );
        incasts.push(
            "finished",
            Column::U8(
                self.incasts
                    .iter()
                    .map(|r| r.finish.is_some() as u8)
                    .collect(),
            ),
        );
        let (t, n, p, b) = std::mem::take(&mut self.samples);
        let mut queues = Table::default();
        queues.push("time_ps", Column::U64(t));
        queues.push("node", Column::U32(n));
        queues.push("port", Column::U32(p));
        queues.push("bytes", Column::U64(b));

        let (t, n, p, c, e) = std::mem::take(&mut self.pfc_log);
        let mut pfc_events = Table::default();
        pfc_events.push("time_ps", Column::U64(t));
        pfc_events.push("node", Column::U32(n));
        pfc_events.push("port", Column::U32(p));
        pfc_events.push("class", Column::U8(c));
        pfc_events.push("event", Column::U8(e));

        let mut owd = Table::default();
        let edge_summary = match self.edge.as_deref_mut() {
            Some(e) => {
                let (t, f, o) = std::mem::take(&mut e.samples);
                let mut us: Vec<f64> = o.iter().map(|&x| x as f64 / 1e6).collect();
                owd.push("time_ps", Column::U64(t));
                owd.push("flow_id", Column::U64(f));
                owd.push("owd_ps", Column::I64(o));
                let pauses: u64 = flows.u32s("edge_pauses").iter().map(|&x| x as u64).sum();
                let paused: u64 = flows.u64s("edge_paused_ps").iter().sum();
                let owd_us =
                    serde_json::to_value(metrics::Stats::of(&mut us)).expect("serializable");
                e.summary(pauses, paused, owd_us)
            }
            None => serde_json::Value::Null,
        };
        let hosts = {
            let n = self.nics.len();
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
        };
        let stats = RunStats {
            events: self.q.events_processed(),
            packet_hops: self.packet_hops,
            sim_time_ps: end,
            wall_seconds: self.started.elapsed().as_secs_f64(),
            peak_packets: self.arena.peak() as u64,
            peak_flows: self.peak_active,
        };
        let mut summary = self.summary(&flows, &counters, &ports, &incasts, &stats);
        if !edge_summary.is_null() {
            summary["edge"] = edge_summary;
        }
        if self.ci.is_some() {
            summary["ci"] = self.ci_summary(&flows);
        }
        Results {
            flows,
            pfc: pfc_events,
            lossless_drops: self.lossless_drops,
            incasts,
            counters,
            ports,
            queues,
            owd,
            hosts,
            node_names: std::mem::take(&mut self.node_names),
            summary_json: serde_json::to_string_pretty(&summary).expect("serializable"),
            stats,
            conservation: self.cons,
        }
    }

    /// The summary's `ci` block: CIPs, isolations, and pause frames by queue.
    fn ci_summary(&self, flows: &Table) -> serde_json::Value {
        let r = self.ci.as_deref().expect("ci");
        let mut st = ci::CiPortStats::default();
        let (mut ncq, mut cfq, mut to_nics) = (0u64, 0u64, 0u64);
        for p in &self.ports {
            match p.owner {
                Owner::Switch(_) => {
                    let s = p.ci.as_deref().expect("ci port").stats;
                    st.detected += s.detected;
                    st.by_cip += s.by_cip;
                    st.deisolated += s.deisolated;
                    st.table_full += s.table_full;
                    st.blocked += s.blocked;
                    st.peak_entries = st.peak_entries.max(s.peak_entries);
                    for c in 0..NUM_CLASSES {
                        if self.ci_base & (1 << c) != 0 {
                            ncq += p.pfc.xoff_tx[c];
                        } else if self.ci_cfq & (1 << c) != 0 {
                            cfq += p.pfc.xoff_tx[c];
                        }
                    }
                }
                Owner::Host(_) => to_nics += p.pfc.xoff_rx.iter().sum::<u64>(),
            }
        }
        // Large flows: at least the first size-bucket edge (100 KB by default,
        // the talk's mice boundary).
        let large = self.size_buckets.first().copied().unwrap_or(100_000);
        let (iso, size) = (flows.u32s("ci_isolations"), flows.u64s("size_bytes"));
        let n = iso.len();
        let n_iso = iso.iter().filter(|&&x| x > 0).count();
        let n_large = size.iter().filter(|&&s| s >= large).count();
        let n_large_iso = (0..n).filter(|&i| size[i] >= large && iso[i] > 0).count();
        let share = |a: usize, b: usize| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        serde_json::json!({
            "cips_sent": r.cips_sent,
            "cips_received": r.cips_received,
            "cips_lost": r.cips_lost,
            "cip_resends": r.resends,
            "cip_gave_up": r.gave_up,
            "cip_acks_sent": r.acks_sent,
            "cip_acks_received": r.acks_received,
            "isolations_detected": st.detected,
            "isolations_by_cip": st.by_cip,
            "nic_isolations": r.nic_isolations,
            "deisolations": st.deisolated,
            "nic_deisolations": r.nic_deisolations,
            "table_full": st.table_full,
            "peak_table_entries": st.peak_entries,
            "cfq_blocked_events": st.blocked,
            "flows_isolated": n_iso,
            "flows_isolated_share": share(n_iso, n),
            "large_flow_bytes": large,
            "large_flows_isolated_share": share(n_large_iso, n_large),
            "pause_frames_ncq": ncq,
            "pause_frames_cfq": cfq,
            "pause_frames_cfq_share": share(cfq as usize, (ncq + cfq) as usize),
            "pause_frames_to_nics": to_nics,
        })
    }

    fn summary(
        &self,
        flows: &Table,
        counters: &Table,
        ports: &Table,
        incasts: &Table,
        stats: &RunStats,
    ) -> serde_json::Value {
        let (buckets, overall) = metrics::buckets(flows, &self.size_buckets);
        // With incasts and other traffic, also the other traffic alone: the
        // papers plot background FCT without the incast flows.
        let kind = flows.u8s("kind");
        let background = (kind.contains(&KIND_INCAST) && kind.iter().any(|&k| k != KIND_INCAST))
            .then(|| metrics::buckets_of(flows, &self.size_buckets, |i| kind[i] != KIND_INCAST).0);
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
        let n_hosts = self.nics.len() as u32;
        let util = ports.f64s("utilization");
        let nodes = ports.u32s("node");
        let sw_util: Vec<f64> = util
            .iter()
            .zip(nodes)
            .filter(|(_, n)| **n >= n_hosts)
            .map(|(u, _)| *u)
            .collect();
        serde_json::json!({
            "scenario": self.name,
            "seed": self.seed,
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
            "pfc": {
                "pause_frames": sum_u64(ports, "pause_tx"),
                // PAUSE frames received by host NICs (the talk's "sent to NICs of servers").
                "pause_frames_to_hosts": ports
                    .u64s("pause_rx")
                    .iter()
                    .zip(nodes)
                    .filter(|(_, n)| **n < n_hosts)
                    .map(|(x, _)| x)
                    .sum::<u64>(),
                "resume_frames": sum_u64(ports, "resume_tx"),
                "paused_time_us": ps_to_us(sum_u64(ports, "paused_ps")),
                "lossless_drops": self.lossless_drops,
                "watchdog_trips": sum_u64(ports, "watchdog_trips"),
                "watchdog_drops": sum_u64(ports, "watchdog_drops"),
            },
            "retransmits": sum_u32(flows, "retransmits"),
            "cnps": sum_u32(flows, "cnps"),
            "out_of_order_arrivals": self.out_of_order,
            "timeouts": sum_u32(flows, "timeouts"),
            "incasts": {
                "count": incasts.rows(),
                "finished": ic.len(),
                "completion_us": metrics::Stats::of(&mut ic),
            },
            "utilization": {
                "max": util.iter().cloned().fold(0.0, f64::max),
                "mean_switch_ports": if sw_util.is_empty() { 0.0 } else { sw_util.iter().sum::<f64>() / sw_util.len() as f64 },
            },
            "engine": {"events": stats.events, "packet_hops": stats.packet_hops, "peak_packets": stats.peak_packets, "peak_flows": stats.peak_flows},
        })
    }
}

#[cfg(test)]
mod layout_tests {
    use super::FlowSlot;
    use std::mem::offset_of;

    /// What a NIC reads of every packet's flow is in the slot's first line.
    #[test]
    fn flow_slot_hot_fields_share_a_line() {
        assert_eq!(std::mem::align_of::<FlowSlot>(), 64);
        for (name, off, len) in [
            ("uid", offset_of!(FlowSlot, uid), 4),
            ("active", offset_of!(FlowSlot, active), 1),
            ("in_ready", offset_of!(FlowSlot, in_ready), 1),
            ("prio", offset_of!(FlowSlot, prio), 1),
            ("src", offset_of!(FlowSlot, src), 4),
            ("dst", offset_of!(FlowSlot, dst), 4),
            ("hash", offset_of!(FlowSlot, hash), 8),
            ("ack_hash", offset_of!(FlowSlot, ack_hash), 8),
            ("qp", offset_of!(FlowSlot, qp), 8),
            ("gate", offset_of!(FlowSlot, gate), 8),
        ] {
            assert!(off + len <= 64, "{name} at {off}");
        }
    }
}

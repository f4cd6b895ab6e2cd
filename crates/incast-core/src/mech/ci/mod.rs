//! Congestion isolation (IEEE 802.1Qcz) as a switch mechanism.
//!
//! The congested-flow table, detection, order rules and the configuration
//! are in [`table`]; this file is where they meet the switch and the links:
//!
//! * **classify** ([`Ci::on_classify`]): a packet of a CI class looks its
//!   flow up in the egress port's table (aging it), may be detected as
//!   congesting, and joins its flow's congested-flow queue (CFQ) or its
//!   class's queue; new isolations send CIPs upstream;
//! * **enqueue** / **depart**: the port counts each queue's arrivals and
//!   exits, which the order rule (markers or per-flow counters) reads to
//!   block a CFQ's head ([`crate::net::Port::held`]);
//! * **frames** ([`Ci::on_frame`]): a CIP isolates the flow at the egress
//!   towards its sender (a switch) or moves the flow to the CFQ's priority
//!   (a NIC, [`nic::isolate`]); a CIP-ACK confirms;
//! * **timer**: resends unconfirmed CIPs and ages entries out.
//!
//! Decisions: docs/congestion-isolation.md.

pub(crate) mod nic;
pub mod table;
mod validate;

pub use table::*;

/// `[switch.ci]`.
pub type Config = CiConfig;

use super::{Hop, SwitchMechanism, TimerKind};
use crate::metrics_table::Table;
use crate::net::port::Owner;
use crate::net::switch;
use crate::net::{link, Packet, PacketKind, PktId, NUM_CLASSES};
use crate::rng::Streams;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::{Bytes, Ps};

/// Congestion isolation's run-wide state: the configuration, the CIP-loss
/// randomness and the counters of CIPs and NIC isolations.
pub(crate) struct Ci {
    pub cfg: CiConfig,
    /// Lost CIPs: the run's stream, or in node order each receiving
    /// port's (a run on threads: [`crate::sim::threaded`]).
    loss: Streams,
    /// Bits of the CI classes (non-congested queues); 0 without CI.
    pub base: u8,
    /// Bits of the congested-flow queues; 0 without CI.
    pub cfq: u8,
    /// `base | cfq`: the queues whose exits CI tracks.
    pub any: u8,
    /// The table entry of the packet being classified, when it joins its
    /// flow's CFQ (from `on_classify` to `on_enqueue`).
    entry: Option<usize>,
    /// Every switch port's table and order state (empty without CI).
    pub ports: CiPorts,
    pub cips_sent: u64,
    pub cips_received: u64,
    pub cips_lost: u64,
    pub acks_sent: u64,
    pub acks_received: u64,
    pub resends: u64,
    pub gave_up: u64,
    pub nic_isolations: u64,
    pub nic_deisolations: u64,
    /// Every flow-table slot's isolation state ([`nic::CiFlow`]; empty
    /// without CI).
    flows: Vec<nic::CiFlow>,
}

impl Default for Ci {
    fn default() -> Self {
        Ci::new(CiConfig::default(), 0, false)
    }
}

impl Ci {
    /// CI with `cfg` (`on`: `[switch.ci]` given; else every mask is 0).
    pub fn new(cfg: CiConfig, seed: u64, on: bool) -> Self {
        let (base, cfq) = if on {
            (cfg.base_mask(), cfg.cfq_mask())
        } else {
            (0, 0)
        };
        Ci {
            cfg,
            loss: Streams::new(seed, "cip-loss"),
            base,
            cfq,
            any: base | cfq,
            entry: None,
            ports: CiPorts::default(),
            cips_sent: 0,
            cips_received: 0,
            cips_lost: 0,
            acks_sent: 0,
            acks_received: 0,
            resends: 0,
            gave_up: 0,
            nic_isolations: 0,
            nic_deisolations: 0,
            flows: Vec::new(),
        }
    }

    /// Whether `[switch.ci]` is on.
    pub fn is_on(&self) -> bool {
        self.any != 0
    }
}

impl crate::scenario::SwitchSection for CiConfig {
    fn validate_section(
        &self,
        sc: &crate::scenario::Scenario,
    ) -> Result<(), crate::scenario::ScenarioError> {
        validate::validate(self, sc)
    }

    /// Congestion isolation moves a class's flows into its congested-flow
    /// queues: each of those carries the class's largest packet too.
    fn class_moves(&self) -> Vec<(u8, u8, &'static str)> {
        let queues = self.queues.iter();
        let moves = queues.flat_map(|q| q.cfq.iter().map(|&cfq| (q.class, cfq, "isolated flows")));
        moves.collect()
    }
}

impl SwitchMechanism for Ci {
    const ID: u8 = 2;
    type Config = CiConfig;
    type State = Ci;
    type PerSwitch = ();

    /// Every switch port's CI state, and the classes CI classifies in the
    /// switches' parameters. A congested-flow queue marks, admits and
    /// weighs like its non-congested queue unless `switch.classes` sets it.
    fn build(cfg: Option<&CiConfig>, net: &mut super::Network) -> Ci {
        let Some(cfg) = cfg else {
            return Ci::default();
        };
        let classes = &net.sc.config.switch.classes;
        let p = &mut *net.params;
        for q in &cfg.queues {
            for &c in &q.cfq {
                if !classes.iter().any(|x| x.class == c) {
                    let (b, c) = (q.class as usize, c as usize);
                    p.ecn[c] = p.ecn[b].clone();
                    p.admission[c] = p.admission[b];
                    p.quantum[c] = p.quantum[b];
                }
            }
        }
        let seed = net.sc.config.seed;
        let mut ci = Ci::new(cfg.clone(), seed, true);
        if cfg.cip.loss > 0.0 && net.sc.config.timing.ties == crate::scenario::Ties::Node {
            ci.loss.per_element(seed, "cip-loss-port", net.ports.len());
        }
        let first = net.switches.first().map_or(0, |s| s.ports.start);
        ci.ports = CiPorts {
            first,
            ports: (first..net.ports.len() as u32)
                .map(|_| CiPort::default())
                .collect(),
        };
        p.classified = ci.any;
        ci
    }

    #[inline(always)]
    fn wants_classify(w: &World, class: u8) -> bool {
        // `w.mechs.ci.any`, kept beside the other masks of the hot path
        // (trimming, never on with CI, sets it too: CI's own mask decides
        // only for a class set there, so an unset class costs one test).
        w.sw.classified & (1 << class) != 0 && w.mechs.ci.any & (1 << class) != 0
    }

    /// A CI class picks its queue (its own, or its flow's CFQ); a class
    /// used as a CFQ keeps its own.
    #[inline(always)]
    fn on_classify(w: &mut World, now: Ps, mut hop: Hop) -> Hop {
        w.mechs.ci.entry = None;
        if w.mechs.ci.base & (1 << hop.class) != 0 {
            let (queue, entry) = classify(w, now, hop.switch, hop.out, hop.pkt, hop.in_local);
            hop.queue = queue as u8;
            w.mechs.ci.entry = entry;
        }
        hop
    }

    #[inline(always)]
    fn on_enqueue(w: &mut World, _now: Ps, hop: Hop) {
        enqueued(w, hop.out, hop.queue);
    }

    #[inline(always)]
    fn wants_depart(w: &World, hop: &Hop, _kind: PacketKind) -> bool {
        w.mechs.ci.any & (1 << hop.queue) != 0
    }

    fn departs(w: &World) -> bool {
        w.mechs.ci.any != 0
    }

    #[inline(always)]
    fn on_depart(w: &mut World, _now: Ps, hop: &Hop) {
        let key = w.arena.get(hop.pkt).hash;
        exit(w, hop.out, hop.queue, key);
    }

    fn on_frame(w: &mut World, now: Ps, port: u32, id: PktId) {
        on_cip(w, now, port, id);
    }

    fn on_timer(w: &mut World, now: Ps, port: u32, _kind: TimerKind) {
        on_table_timer(w, now, port);
    }

    /// Lost CIPs too: in node order each receiving port draws its own
    /// losses (`Ci::loss`, [`Streams`]).
    const THREADS: bool = true;

    /// Each switch port's table from the partition that owns it; the run's
    /// counts summed; each flow's isolations summed (its switches and its
    /// NIC may lie in several partitions, each counting its own).
    fn merge(into: &mut Ci, from: &mut Ci, owned: &dyn Fn(u32) -> bool) {
        let first = into.ports.first;
        for (i, (mine, theirs)) in into
            .ports
            .ports
            .iter_mut()
            .zip(&mut from.ports.ports)
            .enumerate()
        {
            if owned(first + i as u32) {
                std::mem::swap(mine, theirs);
            }
        }
        for (count, theirs) in [
            (&mut into.cips_sent, from.cips_sent),
            (&mut into.cips_received, from.cips_received),
            (&mut into.cips_lost, from.cips_lost),
            (&mut into.acks_sent, from.acks_sent),
            (&mut into.acks_received, from.acks_received),
            (&mut into.resends, from.resends),
            (&mut into.gave_up, from.gave_up),
            (&mut into.nic_isolations, from.nic_isolations),
            (&mut into.nic_deisolations, from.nic_deisolations),
        ] {
            *count += theirs;
        }
        if into.flows.len() < from.flows.len() {
            into.flows.resize(from.flows.len(), nic::CiFlow::default());
        }
        for (mine, theirs) in into.flows.iter_mut().zip(&from.flows) {
            mine.isolations += theirs.isolations;
        }
    }

    const FLOW_COLUMNS: &'static [&'static str] = &["ci_isolations"];

    #[inline(always)]
    fn flow_started(ci: &mut Ci, slot: u32) {
        ci.flow_started(slot);
    }

    fn flow_values(ci: &Ci, slot: u32, columns: &mut [Vec<u32>]) {
        columns[0].push(ci.isolations(slot));
    }

    /// The summary's `ci` block (when CI is on).
    fn report(w: &World, flows: &Table, summary: &mut serde_json::Value) {
        if w.mechs.ci.is_on() {
            summary["ci"] = summary_block(w, flows);
        }
    }
}

/// A packet joined class queue `queue` of port `out` (with the table entry
/// `on_classify` found for it, when it joins its flow's CFQ).
#[inline(never)]
fn enqueued(w: &mut World, out: u32, queue: u8) {
    let (order, cfq) = (w.mechs.ci.cfg.order, w.mechs.ci.cfq);
    let entry = std::mem::take(&mut w.mechs.ci.entry);
    let (cp, queues, held) = port_parts(&mut w.ports, &mut w.mechs.ci.ports, out);
    cp.on_enqueue(queue, entry);
    cp.refresh_blocked(order, cfq, queues, &w.arena, held);
}

/// A Congestion Isolation Packet (IEEE 802.1Qcz), link-local: `seq` is the
/// flow key (5-tuple hash), `payload` its CI class, `flow` and `flow_uid`
/// its flow slot (for the counters). The kind of a [`PacketKind::Control`]
/// frame of [`Ci`].
const CIP: u8 = 0;
/// The acknowledgement of a CIP (reliability option `ack`), same fields.
const CIP_ACK: u8 = 1;

/// Queues a link-local CI frame (CIP or CIP-ACK) on port `port`'s control FIFO.
fn send_frame(w: &mut World, now: Ps, port: u32, kind: u8, key: u64, base: u8, flow: (u32, u32)) {
    let mut frame = Packet::control_frame(Ci::ID, kind, now, base, key, base as u32);
    (frame.flow, frame.flow_uid) = flow;
    let r = &mut w.mechs.ci;
    match kind {
        CIP => r.cips_sent += 1,
        _ => r.acks_sent += 1,
    }
    switch::queue_link_frame(w, port, frame);
    link::kick(w, now, port);
}

/// IEEE 802.1Qcz at egress port `out` of switch `switch`: the queue a packet of
/// a CI class joins (its class's, or its flow's congested-flow queue) and
/// the flow's table entry when it joins a CFQ. Looks the flow up, ages
/// its entry, detects congesting flows and sends the CIPs that follow.
#[inline(never)]
fn classify(
    w: &mut World,
    now: Ps,
    switch: u32,
    out: u32,
    pkt: PktId,
    in_local: u16,
) -> (usize, Option<usize>) {
    let p = *w.arena.get(pkt);
    let (key, base, size) = (p.hash, p.class, p.size as Bytes);
    let cfg = &&w.mechs.ci.cfg;
    let (age, order, threshold) = (cfg.age.0, cfg.order, cfg.threshold.0);
    let (cp, queues, held) = port_parts(&mut w.ports, &mut w.mechs.ci.ports, out);
    let mut idx = cp.find(key);
    if let Some(i) = idx {
        if cp.aged(i, now, age, order) {
            // Not seen for `age` and nothing of it in the CFQ: de-isolate.
            cp.remove(i);
            cp.refresh_blocked(order, w.mechs.ci.cfq, queues, &w.arena, held);
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
                    || cfg.propagate == Propagate::Immediate
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
                    Detect::Top { k, .. } => CiPort::top_flows(queues, &w.arena, base, k as usize),
                    _ => vec![(key, in_local, p.flow, p.flow_uid)],
                };
                for (k, ing, flow, uid) in found {
                    if cp.find(k).is_some() {
                        continue;
                    }
                    if let Some(i) =
                        cp.isolate(cfg, queues, &w.arena, k, base, ing, now, true, (flow, uid))
                    {
                        new.push(i);
                        created.push((flow, uid));
                    }
                }
                cp.refresh_blocked(order, w.mechs.ci.cfq, queues, &w.arena, held);
            }
            cp.find(key)
        }
    };
    let cfq = idx.map(|i| cp.entries[i].cfq as usize);
    send_cips(w, now, switch, out, &new);
    for (flow, uid) in created.iter().copied() {
        count_isolation(w, flow, uid);
    }
    if !created.is_empty() || !new.is_empty() {
        arm(w, now, out);
    }
    match (cfq, idx) {
        (Some(c), Some(i)) => (c, Some(i)),
        _ => (base as usize, None),
    }
}

/// Counts an isolation of the flow in `slot` (if it is still that flow).
/// In node order, where slots are not reused and a switch knows nothing of
/// the flow's sender ([`crate::host::Flows::apart`]), every isolation of the
/// slot's packets counts, in the counting partition's own tally (summed at
/// the end).
fn count_isolation(w: &mut World, slot: u32, uid: u32) {
    if w.flows.apart.is_some() {
        w.mechs.ci.count_isolation_apart(slot);
        return;
    }
    if let Some(f) = w.flows.slots.get(slot as usize) {
        if f.active && f.uid == uid {
            w.mechs.ci.count_isolation(slot);
        }
    }
}

/// Sends the CIPs of entries `idx` of port `out` upstream (out of each
/// flow's ingress port).
fn send_cips(w: &mut World, now: Ps, switch: u32, out: u32, idx: &[usize]) {
    for &i in idx {
        let cfg = &&w.mechs.ci.cfg;
        let (rel, copies, interval, nic) = (
            cfg.cip.reliability,
            cfg.cip.copies,
            cfg.cip.interval.0,
            cfg.nic,
        );
        let ing = w.mechs.ci.ports.get(out).entries[i].ingress;
        if ing == NO_PORT {
            continue;
        }
        let up = w.switches[switch as usize].port(ing);
        let upstream_is_host = matches!(
            w.ports[w.ports[up as usize].peer as usize].owner(),
            Owner::Nic(_)
        );
        let e = &mut w.mechs.ci.ports.get_mut(out).entries[i];
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
            send_frame(w, now, up, CIP, key, base, flow);
        }
    }
}

/// A packet of flow `key` left class queue `queue` of switch port `port`.
#[inline(never)]
fn exit(w: &mut World, port: u32, queue: u8, key: u64) {
    let r = &w.mechs.ci;
    let (order, drain) = (r.cfg.order, r.cfg.release_on_drain);
    let (cp, queues, held) = port_parts(&mut w.ports, &mut w.mechs.ci.ports, port);
    cp.on_exit(queue, key, w.mechs.ci.cfq);
    if drain && w.mechs.ci.cfq & (1 << queue) != 0 && queues[queue as usize].pkts.is_empty() {
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
    cp.refresh_blocked(order, w.mechs.ci.cfq, queues, &w.arena, held);
}

/// Arms port `port`'s CI timer for its earliest resend or aging deadline.
fn arm(w: &mut World, now: Ps, port: u32) {
    let cfg = &&w.mechs.ci.cfg;
    let (age, resend) = (
        cfg.age.0,
        matches!(cfg.cip.reliability, Reliability::Ack | Reliability::Marked),
    );
    let cp = w.mechs.ci.ports.get_mut(port);
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
        w.q.arm(&mut cp.timer, next, Ev::timer(Ci::ID, 0, port));
    }
}

/// Port `port`'s CI timer: ages entries out and resends unconfirmed CIPs.
fn on_table_timer(w: &mut World, now: Ps, port: u32) {
    let cp = w.mechs.ci.ports.get_mut(port);
    if !w.q.fire(&mut cp.timer, now, Ev::timer(Ci::ID, 0, port)) {
        return;
    }
    let Owner::Switch(s) = w.ports[port as usize].owner() else {
        return;
    };
    let r = &w.mechs.ci;
    let (age, order, interval, max) = (
        r.cfg.age.0,
        r.cfg.order,
        r.cfg.cip.interval.0,
        r.cfg.cip.max_resends,
    );
    let mut resend = vec![];
    let mut gave_up = 0;
    {
        let (cp, queues, held) = port_parts(&mut w.ports, &mut w.mechs.ci.ports, port);
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
        cp.refresh_blocked(order, w.mechs.ci.cfq, queues, &w.arena, held);
    }
    let r = &mut w.mechs.ci;
    r.gave_up += gave_up;
    r.resends += resend.len() as u64;
    for (ing, key, base, flow) in resend {
        let up = w.switches[s as usize].port(ing);
        send_frame(w, now, up, CIP, key, base, flow);
    }
    // A de-isolation may have unblocked a CFQ.
    link::kick(w, now, port);
    arm(w, now, port);
}

/// A CIP or CIP-ACK reached port `port`.
fn on_cip(w: &mut World, now: Ps, port: u32, id: PktId) {
    let pkt = *w.arena.get(id);
    w.arena.free(id);
    let r = &mut w.mechs.ci;
    let loss = r.cfg.cip.loss;
    if loss > 0.0 && r.loss.of(port).chance(loss) {
        // Lost on the link (CI must survive it).
        r.cips_lost += 1;
        w.counters.cons.dropped_bytes += pkt.size as u64;
        return;
    }
    w.counters.cons.delivered_bytes += pkt.size as u64;
    let (key, base, flow) = (pkt.seq, pkt.payload as u8, (pkt.flow, pkt.flow_uid));
    if pkt.control_kind() == CIP_ACK {
        r.acks_received += 1;
        // Confirms the entry whose CIPs went out of this port.
        if let Owner::Switch(s) = w.ports[port as usize].owner() {
            let local = w.ports[port as usize].local;
            for p in w.switches[s as usize].ports.clone() {
                let cp = w.mechs.ci.ports.get_mut(p);
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
    match w.ports[port as usize].owner() {
        Owner::Nic(n) => {
            if !r.cfg.nic {
                return;
            }
            // The sending NIC isolates the flow: it sends on the CFQ's priority.
            let at = (n, key, base, cfq);
            let isolated = nic::isolate(&mut w.mechs.ci, &mut w.flows, &w.host_nic, at, now);
            w.mechs.ci.nic_isolations += isolated;
        }
        Owner::Switch(_) => {
            let cfg = &w.mechs.ci.cfg;
            let (cp, queues, held) = port_parts(&mut w.ports, &mut w.mechs.ci.ports, port);
            match cp.find(key) {
                Some(i) => cp.entries[i].last_seen = now,
                None => {
                    // Isolate it at our egress towards the CIP's sender; its
                    // ingress port (where our own CIP goes) is learnt from
                    // its next packet.
                    if cp
                        .isolate(cfg, queues, &w.arena, key, base, NO_PORT, now, false, flow)
                        .is_some()
                    {
                        cp.refresh_blocked(cfg.order, w.mechs.ci.cfq, queues, &w.arena, held);
                        count_isolation(w, flow.0, flow.1);
                    }
                }
            }
            arm(w, now, port);
        }
    }
    if ack {
        send_frame(w, now, port, CIP_ACK, key, base, flow);
    }
}

/// Congestion isolation's state of every switch port, by global port id
/// (switch ports follow the NICs' ports, contiguously).
#[derive(Default)]
pub(crate) struct CiPorts {
    /// The first switch port's global id.
    first: u32,
    ports: Vec<CiPort>,
}

impl CiPorts {
    /// Switch port `port`'s state.
    pub fn get(&self, port: u32) -> &CiPort {
        &self.ports[(port - self.first) as usize]
    }
    pub fn get_mut(&mut self, port: u32) -> &mut CiPort {
        &mut self.ports[(port - self.first) as usize]
    }
}

/// Switch port `gp`'s CI state, its class queues and its held mask
/// ([`crate::net::Port::held`]), borrowed together (the order rule reads
/// all three).
fn port_parts<'a>(
    ports: &'a mut [crate::net::Port],
    ci: &'a mut CiPorts,
    gp: u32,
) -> (
    &'a mut CiPort,
    &'a [crate::net::port::ClassQueue; NUM_CLASSES],
    &'a mut u8,
) {
    let port = &mut ports[gp as usize];
    (ci.get_mut(gp), &port.queues, &mut port.held)
}

/// The summary's `ci` block: CIPs, isolations, and pause frames by queue.
fn summary_block(w: &World, flows: &Table) -> serde_json::Value {
    let r = &w.mechs.ci;
    let mut st = CiPortStats::default();
    let (mut ncq, mut cfq, mut to_nics) = (0u64, 0u64, 0u64);
    for (gp, p) in w.ports.iter().enumerate() {
        match p.owner() {
            Owner::Switch(_) => {
                let s = w.mechs.ci.ports.get(gp as u32).stats;
                st.detected += s.detected;
                st.by_cip += s.by_cip;
                st.deisolated += s.deisolated;
                st.table_full += s.table_full;
                st.blocked += s.blocked;
                st.peak_entries = st.peak_entries.max(s.peak_entries);
                for c in 0..NUM_CLASSES {
                    if w.mechs.ci.base & (1 << c) != 0 {
                        ncq += w.mechs.pfc.ports[gp].xoff_tx[c];
                    } else if w.mechs.ci.cfq & (1 << c) != 0 {
                        cfq += w.mechs.pfc.ports[gp].xoff_tx[c];
                    }
                }
            }
            Owner::Nic(_) => to_nics += w.mechs.pfc.ports[gp].xoff_rx.iter().sum::<u64>(),
        }
    }
    // Large flows: at least the first size-bucket edge (100 KB by default,
    // the talk's mice boundary).
    let large = w.flows.size_buckets.first().copied().unwrap_or(100_000);
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

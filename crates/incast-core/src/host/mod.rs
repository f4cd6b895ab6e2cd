//! The host side: the flow table, and the TCP and RDMA endpoints that run
//! each flow's transport.
//!
//! # A flow's life
//!
//! 1. A generator ([`generators`]) asks for a flow; [`start_flow`] gives it
//!    a slot in the flow table ([`Flows`]), its ECMP hash and ideal FCT
//!    ([`paths`]), a TCP state machine or an RDMA queue pair, and an edge
//!    gate when its sender is gated, and hands it to its NIC
//!    ([`crate::nic::flow_ready`]).
//! 2. The NIC pulls its packets ([`tcp::send_segment`],
//!    [`rdma::send_segment`]); the receiver's endpoint answers with ACKs
//!    (and NACKs, CNPs) that go out through the receiver's NIC.
//! 3. When the last byte is acknowledged, [`complete_flow`] appends its
//!    record and recycles the slot; flows still running at the end are
//!    recorded unfinished.
//!
//! A flow may also end at a time: one started by [`start_flow_until`]
//! (a listed flow with `stop`, a bulk on-period) is stopped by
//! [`on_flow_stop`] at its stop time unless its last byte was acknowledged
//! before. Its sender stops offering data there ([`stop_flow`]): packets in
//! flight still reach the receiver (they count as delivered), nothing new
//! leaves, and its record is closed then with the bytes its receiver got.

pub mod eqds;
#[cfg(any(test, feature = "examples"))]
pub mod example_burst;
pub mod generators;
pub mod ndp;
pub mod paths;
pub mod rdma;
pub mod tcp;

use crate::edge::EdgeGate;
use crate::metrics::{FeatureColumns, FlowRecord, FlowRecords};
use crate::nic;
use crate::rdma::qp::RdmaQp;
use crate::rdma::BaseRtt;
use crate::scenario::IdealFct;
use crate::scenario::LONG_LIVED;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::transport::cc::{AnyCc, CongestionControl};
use crate::transport::TcpFlow;
use crate::units::{Bytes, Ps};
use crate::workload::generators::FlowRequest;

/// Flow kinds in the flow table.
pub const KIND_POISSON: u8 = 0;
pub const KIND_INCAST: u8 = 1;
pub const KIND_LISTED: u8 = 2;
/// An on-period of a `[[workload.bulk]]` schedule.
pub const KIND_BULK: u8 = 3;

/// A flow's slot in the flow table.
///
/// `repr(C)` in this order: what every packet of a flow reads at a NIC
/// (identity, endpoints, hashes, the QP and gate pointers, the NIC
/// priority) fills the slot's first cache line; per-flow records and the
/// TCP state follow.
#[repr(C, align(64))]
pub(crate) struct FlowSlot {
    pub uid: u32,
    pub active: bool,
    pub in_ready: bool,
    pub class: u8,
    /// The priority the NIC sends data on: `class`, or a congested-flow
    /// queue's after a CIP (IEEE 802.1Qcz isolation at the NIC).
    pub prio: u8,
    pub src: u32,
    pub dst: u32,
    pub hash: u64,
    pub ack_hash: u64,
    /// RDMA queue pair (when the scenario has `[rdma]`).
    pub qp: Option<Box<RdmaQp>>,
    /// Edge-pausing gate (when `[edge]` covers the sender).
    pub gate: Option<Box<EdgeGate>>,
    pub kind: u8,
    /// Its TCP congestion control (an index in `World::ccs`).
    pub cc: u8,
    pub id: u64,
    pub start: Ps,
    /// When the sender stops offering data ([`Ps::MAX`]: never).
    pub stop: Ps,
    pub incast: i64,
    pub ideal: Ps,
    pub tcp: TcpFlow,
    /// Its NDP ends, when its group runs NDP (`cc = "ndp"`).
    pub ndp: Option<Box<ndp::NdpFlow>>,
}

/// One incast event: its senders' flows share a record.
pub(crate) struct IncastRecord {
    pub receiver: u32,
    pub fan_in: u32,
    pub bytes: u64,
    pub start: Ps,
    pub remaining: u32,
    pub finish: Option<Ps>,
    /// When its last flow so far finished (a threaded run's partitions
    /// each see some of its flows; [`crate::sim::threaded`] merges them).
    pub last_done: Ps,
}

/// The flow table: active flows in recycled slots, and the records of
/// finished ones.
#[derive(Default)]
pub(crate) struct Flows {
    pub slots: Vec<FlowSlot>,
    free: Vec<u32>,
    next_uid: u32,
    next_id: u64,
    /// Per host: the next source port (a flow's 5-tuple, for its hash).
    pub next_sport: Vec<u32>,
    /// Per (source, destination) host pair: HPCC-sim's next source port,
    /// under `routing.ecmp = "hpcc"` ([`paths::flow_hash`]; looked up,
    /// never iterated).
    pub pair_sport: std::collections::HashMap<(u32, u32), u16>,
    pub active: u64,
    pub peak_active: u64,
    pub finished: u64,
    pub records: FlowRecords,
    pub incasts: Vec<IncastRecord>,
    /// The measurement window: flows that start in `[warmup, measure_end)`.
    pub warmup: Ps,
    pub measure_end: Ps,
    /// Upper edges of the summary's size buckets.
    pub size_buckets: Vec<Bytes>,
    /// How each flow's ideal FCT is computed.
    pub ideal: IdealFct,
    /// Node order ([`crate::sim::partitioned`]): the sender's and the
    /// receiver's parts of a flow live apart, as they would in two
    /// partitions (module docs of [`crate::sim::threaded`]): slots are not
    /// reused, and a receiver acknowledges a late segment of a flow whose
    /// sender is done (the sender ignores the ACK).
    pub apart: Option<SlotPlan>,
}

/// Node order's flow slots: never reused (a receiver's part of a flow
/// outlives its sender's), the `n`th flow a partition starts in slot
/// `offset + stride * n` (disjoint between partitions, so that a flow has
/// the same slot in its sender's and its receiver's partition).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlotPlan {
    pub offset: u32,
    pub stride: u32,
    pub started: u32,
}

/// What a flow's receiver needs of it when it starts: its identity and
/// request, its hashes and ideal FCT (a threaded run mails it to the
/// receiver's partition, [`crate::sim::threaded`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlowStart {
    pub slot: u32,
    pub req: FlowRequest,
    pub kind: u8,
    pub incast: i64,
    pub start: Ps,
    pub stop: Ps,
    pub uid: u32,
    pub id: u64,
    pub hash: u64,
    pub ack_hash: u64,
    pub ideal: Ps,
}

impl Flows {
    /// An empty table for `hosts` hosts, measuring flows that start in
    /// `[warmup, measure_end)`, summarized by `size_buckets`.
    pub fn new(
        hosts: usize,
        warmup: Ps,
        measure_end: Ps,
        size_buckets: Vec<Bytes>,
        ideal: IdealFct,
    ) -> Flows {
        Flows {
            next_sport: vec![0; hosts],
            warmup,
            measure_end,
            size_buckets,
            ideal,
            records: FlowRecords {
                features: FeatureColumns::new(crate::mech::flow_columns()),
                ..Default::default()
            },
            ..Default::default()
        }
    }
}

/// Starts a flow now: a slot, its transport, its gate; its NIC is kicked.
pub(crate) fn start_flow(w: &mut World, now: Ps, req: FlowRequest, kind: u8, incast: i64) {
    start_flow_until(w, now, req, kind, incast, Ps::MAX);
}

/// [`start_flow`] with a stop time (`Ps::MAX`: none): at `stop` the flow is
/// stopped ([`on_flow_stop`]) unless it finished before. A flow of
/// [`LONG_LIVED`] size has no ideal FCT (0 in the slot; its record has none).
pub(crate) fn start_flow_until(
    w: &mut World,
    now: Ps,
    req: FlowRequest,
    kind: u8,
    incast: i64,
    stop: Ps,
) {
    let (hash, ack_hash) = paths::flow_hash(w, req.src, req.dst);
    let ideal = if req.size == LONG_LIVED {
        0
    } else {
        paths::ideal_fct(w, req.src, req.dst, req.size, (hash, ack_hash))
    };
    let flows = &mut w.flows;
    let uid = flows.next_uid;
    flows.next_uid = flows.next_uid.wrapping_add(1);
    let id = flows.next_id;
    flows.next_id += 1;
    // Edge pausing: a gate with the threshold of the flow's path.
    let gate = match w.edge.as_deref() {
        Some(e) if e.gated[req.src as usize] => {
            let path = paths::path_info(w, req.src, req.dst, hash);
            let e = w.edge.as_deref_mut().expect("edge");
            Some(Box::new(e.gate(&path)))
        }
        _ => None,
    };
    let mut start = FlowStart {
        slot: 0,
        req,
        kind,
        incast,
        start: now,
        stop,
        uid,
        id,
        hash,
        ack_hash,
        ideal,
    };
    let slot = flow_slot(w, &start, gate);
    let flows = &mut w.flows;
    let s = match (&mut flows.apart, flows.free.pop()) {
        (Some(plan), _) => {
            let s = plan.offset + plan.stride * plan.started;
            plan.started += 1;
            place(flows, s, slot);
            s
        }
        (None, Some(s)) => {
            flows.slots[s as usize] = slot;
            s
        }
        (None, None) => {
            flows.slots.push(slot);
            (flows.slots.len() - 1) as u32
        }
    };
    flows.active += 1;
    flows.peak_active = flows.peak_active.max(flows.active);
    start.slot = s;
    if let Some(outbox) = w.outbox.as_deref_mut() {
        // A threaded run: a receiver in another partition gets its part.
        outbox.flow_started(&start);
    }
    crate::mech::flow_started(&mut w.mechs, s);
    eqds::start(w, s, req.cc, req.size);
    if stop != Ps::MAX {
        w.q.push(stop, Ev::FlowStop(s));
    }
    let src_nic = w.host_nic[req.src as usize];
    nic::flow_ready(w, src_nic, s);
    nic::kick(w, now, src_nic);
}

/// A new flow's slot: its transport (a TCP state machine, an RDMA queue
/// pair or NDP's ends) and its gate.
fn flow_slot(w: &World, start: &FlowStart, gate: Option<Box<EdgeGate>>) -> FlowSlot {
    let req = start.req;
    let src_nic = w.host_nic[req.src as usize];
    let qp = w.rdma.as_ref().map(|r| {
        let mut ctx = r.ctx;
        let line = w.ports[w.nics[src_nic as usize].port as usize].rate;
        ctx.line_rate = line.bits_per_sec() as f64;
        if r.cfg.base_rtt == BaseRtt::PerPair {
            ctx.base_rtt = paths::path_base_rtt(w, req.src, req.dst, start.hash).0;
        }
        ctx.bdp = line.bytes_in(ctx.base_rtt);
        let mut qp = RdmaQp::new(req.size, r.cfg.cc.build(&ctx), ctx);
        qp.ns3_tx_times = r.cfg.ns3_tx_times;
        Box::new(qp)
    });
    FlowSlot {
        uid: start.uid,
        active: true,
        in_ready: true,
        id: start.id,
        src: req.src,
        dst: req.dst,
        start: start.start,
        stop: start.stop,
        class: req.class,
        kind: start.kind,
        incast: start.incast,
        hash: start.hash,
        ack_hash: start.ack_hash,
        ideal: start.ideal,
        tcp: TcpFlow::new(req.size, tcp_cc(w, &req, start.hash), &w.tcp),
        cc: req.cc,
        qp,
        gate,
        prio: req.class,
        ndp: ndp::flow(w, req.cc, req.size),
    }
}

/// Puts `slot` in slot `index` of the table, past its end if need be (node
/// order: the slots between stay vacant or are another partition's).
fn place(flows: &mut Flows, index: u32, mut slot: FlowSlot) {
    while flows.slots.len() <= index as usize {
        let vacant = FlowSlot {
            uid: u32::MAX,
            active: false,
            in_ready: false,
            qp: None,
            gate: None,
            ndp: None,
            tcp: slot.tcp.vacant_copy(),
            ..slot
        };
        flows.slots.push(vacant);
    }
    flows.slots[index as usize] = slot;
}

/// A threaded run: the receiver's part of a flow another partition's host
/// started ([`FlowStart`]), in the same slot. Not active here: the
/// sender's partition runs and records the flow.
pub(crate) fn receive_flow(w: &mut World, start: &FlowStart) {
    let mut slot = flow_slot(w, start, None);
    slot.active = false;
    slot.in_ready = false;
    place(&mut w.flows, start.slot, slot);
    eqds::start(w, start.slot, start.req.cc, start.req.size);
}

/// The congestion control of a new TCP flow; told its path's length when
/// it asks (Swift's hop scaling, [`CongestionControl::wants_path`]).
fn tcp_cc(w: &World, req: &FlowRequest, hash: u64) -> AnyCc {
    let mut cc = w.ccs[req.cc as usize].build();
    if cc.wants_path() {
        cc.set_path_links(paths::path_links(w, req.src, req.dst, hash));
    }
    cc
}

/// A flow's stop time came ([`Ev::FlowStop`]): stop it, if the slot still
/// holds a flow that stops now. A flow that finished earlier left the slot
/// inactive, or to another flow, which stops now only if its own stop time
/// is now (then stopping it here is what its own event would do).
pub(crate) fn on_flow_stop(w: &mut World, now: Ps, slot: u32) {
    let f = &w.flows.slots[slot as usize];
    if f.active && f.stop == now {
        stop_flow(w, now, slot);
    }
}

/// The sender of the flow in `slot` stops offering data now: its transport
/// takes what the receiver has in order as the flow's size
/// ([`TcpFlow::stop_offering`], [`RdmaQp::stop_offering`]), or in node
/// order, where the sender cannot read its receiver, what was acknowledged;
/// its record is closed as stopped, and its slot recycled (packets still in
/// flight are delivered and ignored by the receiver, as a finished flow's
/// are).
pub(crate) fn stop_flow(w: &mut World, now: Ps, slot: u32) {
    let apart = w.flows.apart.is_some();
    let f = &mut w.flows.slots[slot as usize];
    match (f.qp.as_deref_mut(), apart) {
        (Some(q), false) => q.stop_offering(),
        (Some(q), true) => q.stop_offering_acked(),
        (None, false) => f.tcp.stop_offering(),
        (None, true) => f.tcp.stop_offering_acked(),
    }
    record(w, slot, End::Stopped(now));
    release(w, now, slot);
}

/// How a flow's record ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Its last byte was acknowledged at this time.
    Finished(Ps),
    /// Its sender stopped offering data at this time (its `stop`).
    Stopped(Ps),
    /// Still running when the run ended, at this time (a threaded run's:
    /// its partitions' clocks stop at their own last events).
    Running(Ps),
}

/// Appends the record of the flow in `slot`. Its size is the transport's:
/// the flow's, or once stopped the bytes its receiver got; a long-lived
/// flow still running is recorded with the bytes its receiver got so far.
pub(crate) fn record(w: &mut World, slot: u32, end: End) {
    let eqds = eqds::totals(w, slot);
    let flows = &mut w.flows;
    let f = &flows.slots[slot as usize];
    // Node order: the sender records what was acknowledged (it cannot read
    // its receiver); the same for a flow that finished.
    let apart = flows.apart.is_some();
    let (size, received, retransmits, timeouts) = match (f.qp.as_deref(), f.ndp.as_deref()) {
        (Some(q), _) if apart => (q.size, q.snd_una, q.retransmits, q.timeouts),
        (Some(q), _) => (q.size, q.expected, q.retransmits, q.timeouts),
        (None, Some(n)) => {
            let s = &n.sender;
            (s.size, s.acked_bytes(), s.retransmits, s.timeouts)
        }
        (None, None) => {
            let received = if apart { f.tcp.snd_una } else { f.tcp.rcv_nxt };
            eqds.unwrap_or((f.tcp.size, received, f.tcp.retransmits, f.tcp.timeouts))
        }
    };
    let (finish, now) = match end {
        End::Finished(t) | End::Stopped(t) => (Some(t), t),
        End::Running(t) => (None, t),
    };
    flows.records.push(FlowRecord {
        flow_id: f.id,
        src: f.src,
        dst: f.dst,
        size: if size == LONG_LIVED { received } else { size },
        start: f.start,
        finish,
        stopped: matches!(end, End::Stopped(_)),
        ideal: f.ideal,
        class: f.class,
        kind: f.kind,
        cc: f.cc,
        incast: f.incast,
        retransmits,
        edge_pauses: f.gate.as_ref().map_or(0, |g| g.pauses),
        edge_paused_ps: f.gate.as_ref().map_or(0, |g| g.paused_until(now)),
        timeouts,
        cnps: f.qp.as_ref().map_or(0, |q| q.cnps_sent as u32),
        ce_marks: f.tcp.ce_marks,
        measured: f.start >= flows.warmup && f.start < flows.measure_end,
        slot,
    });
    crate::mech::flow_record(&w.mechs, slot, &mut flows.records.features.values);
}

/// The flow in `slot` had its last byte acknowledged: record it, free its slot.
pub(crate) fn complete_flow(w: &mut World, now: Ps, slot: u32) {
    record(w, slot, End::Finished(now));
    release(w, now, slot);
}

/// The recorded flow in `slot` ends now: its timers off, off its NIC's
/// list, its incast told, its slot free for the next flow.
fn release(w: &mut World, now: Ps, slot: u32) {
    let apart = w.flows.apart.is_some();
    let f = &mut w.flows.slots[slot as usize];
    f.active = false;
    f.tcp.rto_timer.disarm();
    if !apart {
        // Node order leaves the receiver's timers to the receiver.
        f.tcp.delack_timer.disarm();
    } else {
        // Its slot is not reused: what only the sender held gives its memory back.
        f.tcp.sender_finished();
    }
    if let Some(q) = f.qp.as_mut() {
        q.rto_timer.disarm();
        q.cc_timer.disarm();
        if !apart {
            q.cnp_timer.disarm();
        }
    }
    let (src_nic, incast, queued) = (w.host_nic[f.src as usize], f.incast, f.in_ready);
    f.in_ready = false;
    if queued {
        // Still on its NIC's list (a QP always is; a TCP flow re-queued by a
        // timeout may be): off it, before the slot serves another flow.
        nic::flow_done(w, src_nic, slot);
    }
    let flows = &mut w.flows;
    if incast >= 0 {
        let r = &mut flows.incasts[incast as usize];
        r.remaining -= 1;
        r.last_done = now;
        if r.remaining == 0 {
            r.finish = Some(now);
        }
    }
    flows.active -= 1;
    flows.finished += 1;
    if !apart {
        flows.free.push(slot);
    }
}

/// Node order: the receiver's counts in the records (CNPs sent, CE marks
/// seen), read from the receivers' parts at the end of the run, when every
/// packet that reached them has been counted.
pub(crate) fn receivers_counts(flows: &mut Flows) {
    let records = &mut flows.records;
    for (i, &slot) in records.slot.iter().enumerate() {
        (records.cnps[i], records.ce_marks[i]) = flows.slots[slot as usize].receiver_counts();
    }
}

impl FlowSlot {
    /// Whether a packet of flow `uid` belongs to the flow in this slot: while
    /// the flow is active, or at its receiver (`at_receiver`) in node order
    /// (`apart`), where a receiver may outlive its sender.
    #[inline]
    pub(crate) fn holds(&self, uid: u32, at_receiver: bool, apart: bool) -> bool {
        self.uid == uid && (self.active || (at_receiver && apart))
    }

    /// Its receiver's counts for the record: CNPs sent, CE marks seen.
    pub(crate) fn receiver_counts(&self) -> (u32, u32) {
        let cnps = self.qp.as_ref().map_or(0, |q| q.cnps_sent as u32);
        (cnps, self.tcp.ce_marks)
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

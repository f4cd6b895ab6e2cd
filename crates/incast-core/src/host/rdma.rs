//! The RDMA endpoint (RoCEv2): sends a queue pair's paced segments when its
//! NIC asks, and handles what reaches either end (data at the receiver;
//! ACKs, NACKs and CNPs at the sender) and the QP's timers (retransmission,
//! congestion control, pending CNP).
//!
//! The queue pair's state machine ([`crate::rdma::qp::RdmaQp`]: go-back-N,
//! pacing, windows) and its rate-based congestion control
//! ([`crate::rdma::cc`]) know nothing of the engine.

use crate::engine::EventQueue;
use crate::host::complete_flow;
use crate::net::packet::flags;
use crate::net::{Packet, PacketKind, PktId};
use crate::nic;
use crate::rdma::cc::{IntHop, RateCc};
use crate::rdma::qp::RdmaQp;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::transport::Echo;
use crate::units::Ps;

/// The next segment of the QP in `slot`, which may send now (its
/// [`crate::rdma::qp::SendState`] is `Ready`), as a packet ready for the wire.
#[inline]
pub(crate) fn send_segment(w: &mut World, now: Ps, slot: u32) -> PktId {
    let r = w.rdma.as_ref().expect("rdma");
    let (cfg, overhead) = (&r.cfg, r.overhead);
    let f = &mut w.flows.slots[slot as usize];
    let qp = f.qp.as_mut().expect("rdma flow");
    let (seq, len, retx) = qp.take_segment(cfg, now, |pl| pl + overhead);
    let mut fl = if qp.cc.ecn_capable() { flags::ECT } else { 0 };
    if retx {
        fl |= flags::RETX;
    }
    let mut pkt = Packet {
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
        tag: 0,
    };
    if let Some(e) = w.edge.as_deref_mut() {
        pkt.tag = e.tag(f.gate.as_deref());
    }
    w.counters.cons.sent_bytes += pkt.size as u64;
    if !qp.rto_timer.is_armed() {
        w.q.arm(&mut qp.rto_timer, now + cfg.rto.0, Ev::Rto(slot));
    }
    arm_cc_timer(&mut w.q, qp, slot);
    w.arena.alloc(pkt)
}

/// Arms the QP's congestion-control timer for its earliest deadline.
#[inline]
fn arm_cc_timer(q: &mut EventQueue<Ev>, qp: &mut RdmaQp, slot: u32) {
    match qp.cc.next_timer() {
        Some(t) => {
            q.arm(&mut qp.cc_timer, t.max(q.now()), Ev::CcTimer(slot));
        }
        None => qp.cc_timer.disarm(),
    }
}

/// The congestion-control timer of the QP in `slot`.
pub(crate) fn on_cc_timer(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active {
        return;
    }
    let Some(qp) = f.qp.as_mut() else { return };
    if w.q.fire(&mut qp.cc_timer, now, Ev::CcTimer(slot)) {
        qp.on_cc_timer(now);
        arm_cc_timer(&mut w.q, qp, slot);
        let src = f.src;
        kick_host(w, now, src);
    }
}

/// The retransmission timer of the QP in `slot` (go-back-N from the last ACK).
pub(crate) fn on_rto(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active {
        return;
    }
    let cfg = &w.rdma.as_ref().expect("rdma").cfg;
    let qp = f.qp.as_mut().expect("rdma");
    if !w.q.fire(&mut qp.rto_timer, now, Ev::Rto(slot)) || !qp.outstanding() {
        return;
    }
    qp.on_timeout();
    w.q.arm(&mut qp.rto_timer, now + cfg.rto.0, Ev::Rto(slot));
    let src = f.src;
    kick_host(w, now, src);
}

/// The pending-CNP timer of the QP in `slot`'s receiver.
pub(crate) fn on_cnp_timer(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active && w.flows.apart.is_none() {
        return;
    }
    let qp = f.qp.as_mut().expect("rdma");
    if w.q.fire(&mut qp.cnp_timer, now, Ev::CnpTimer(slot)) && qp.on_cnp_timer(now) {
        send_ctrl(w, slot, PacketKind::Cnp, 0, Echo::default(), false, None);
        let h = w.flows.slots[slot as usize].dst;
        kick_host(w, now, h);
    }
}

/// Kicks host `host`'s NIC.
#[inline]
fn kick_host(w: &mut World, now: Ps, host: u32) {
    let n = w.host_nic[host as usize];
    nic::kick(w, now, n);
}

/// Queues an ACK, NACK or CNP at the receiver of flow `slot`, towards its sender.
fn send_ctrl(
    w: &mut World,
    slot: u32,
    kind: PacketKind,
    seq: u64,
    echo: Echo,
    ece: bool,
    int_from: Option<PktId>,
) {
    let cfg = &w.rdma.as_ref().expect("rdma").cfg;
    let f = &w.flows.slots[slot as usize];
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
        tag: 0,
    };
    let receiver = f.dst;
    w.counters.cons.sent_bytes += pkt.size as u64;
    let id = w.arena.alloc(pkt);
    if let Some(from) = int_from {
        if w.arena.int_enabled() {
            // The receiver echoes the data packet's INT records (HPCC §3.2).
            w.arena.copy_int(from, id);
        }
    }
    nic::push_ctrl(w, receiver, id);
}

/// An RDMA packet `id` reached host `host`.
pub(crate) fn receive(w: &mut World, now: Ps, host: u32, id: PktId) {
    let pkt = *w.arena.get(id);
    if pkt.tag != 0 {
        if let Some(e) = w.edge.as_deref_mut() {
            e.delivered(pkt.tag);
        }
    }
    let slot = pkt.flow;
    let f = &w.flows.slots[slot as usize];
    let apart = w.flows.apart.is_some();
    let here = f.holds(pkt.flow_uid, pkt.kind == PacketKind::Data, apart);
    if !here {
        w.arena.free(id);
        return;
    }
    let f = &mut w.flows.slots[slot as usize];
    let cfg = &w.rdma.as_ref().expect("rdma").cfg;
    let qp = f.qp.as_mut().expect("rdma flow");
    match pkt.kind {
        PacketKind::Data => {
            let owd = match w.edge.as_deref_mut() {
                Some(e) => e.reading(f.src, host, pkt.ts, now) as i64,
                None => 0,
            };
            let echo = Echo { ts: pkt.ts, owd };
            let out = qp.on_data(cfg, now, pkt.seq, pkt.payload, pkt.has(flags::CE));
            if out.gap {
                w.counters.out_of_order += 1;
            }
            if let Some(t) = out.cnp_timer {
                w.q.arm(&mut qp.cnp_timer, t, Ev::CnpTimer(slot));
            }
            if out.cnp {
                send_ctrl(w, slot, PacketKind::Cnp, 0, Echo::default(), false, None);
            }
            if let Some((ack, ece)) = out.ack {
                send_ctrl(w, slot, PacketKind::Ack, ack, echo, ece, Some(id));
            }
            if let Some((expected, ece)) = out.nack {
                send_ctrl(w, slot, PacketKind::Nack, expected, echo, ece, None);
            }
            w.arena.free(id);
            if out.cnp || out.ack.is_some() || out.nack.is_some() {
                kick_host(w, now, host);
            }
        }
        PacketKind::Ack | PacketKind::Nack => {
            if let Some(e) = w.edge.as_deref_mut() {
                super::tcp::edge_reading(e, f, now, &pkt);
            }
            let qp = f.qp.as_mut().expect("rdma flow");
            // The INT records are read where they are, not copied out.
            let int: &[IntHop] = if w.arena.int_enabled() {
                w.arena.int(id).hops()
            } else {
                &[]
            };
            // A NACK acknowledges what precedes the byte it expects, as an ACK does.
            let acked = qp.acknowledged(cfg, pkt.seq);
            if pkt.kind == PacketKind::Nack {
                qp.on_nack(acked);
            }
            let done = qp.on_ack(now, acked, pkt.ts, pkt.has(flags::ECE), int);
            // Freed after the last read of its records; nothing above
            // allocates, so the arena's free list is as if freed first.
            w.arena.free(id);
            if done {
                complete_flow(w, now, slot);
                return;
            }
            w.q.arm(&mut qp.rto_timer, now + cfg.rto.0, Ev::Rto(slot));
            arm_cc_timer(&mut w.q, qp, slot);
            let src = f.src;
            kick_host(w, now, src);
        }
        PacketKind::Cnp => {
            w.arena.free(id);
            qp.on_cnp(now);
            arm_cc_timer(&mut w.q, qp, slot);
            let src = f.src;
            kick_host(w, now, src);
        }
        _ => unreachable!("not an RDMA packet"),
    }
}

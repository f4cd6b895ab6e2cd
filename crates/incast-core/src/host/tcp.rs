//! The TCP endpoint: sends a flow's segments when its NIC asks, and handles
//! what reaches either end (data at the receiver, ACKs at the sender) and
//! the flow's timers (retransmission, delayed ACK, edge gate).
//!
//! The state machines themselves ([`crate::transport::TcpFlow`]: windows,
//! loss recovery, RTO; [`crate::transport::cc`]: congestion control) know
//! nothing of the engine; this file turns their outcomes into packets and
//! timers.

use crate::edge::{EdgeRuntime, OwdSample};
use crate::host::{complete_flow, FlowSlot};
use crate::net::packet::flags;
use crate::net::{Packet, PacketKind, PktId};
use crate::nic;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::transport::cc::CongestionControl;
use crate::transport::sack::{option_bytes, SackBlocks};
use crate::transport::{AckOut, AckResult, Echo, TcpFlow, TcpParams};
use crate::units::Ps;

/// A data packet of flow `f` (slot `slot`), TCP's or NDP's: `len` payload
/// bytes from `seq` behind `header` bytes, sent now on path `hash`.
#[inline(always)]
pub(crate) fn data_packet(
    f: &FlowSlot,
    slot: u32,
    now: Ps,
    (seq, len): (u64, u32),
    header: u32,
    hash: u64,
    flags: u8,
) -> Packet {
    Packet {
        seq,
        ts: now,
        enq_at: now,
        hash,
        flow: slot,
        flow_uid: f.uid,
        dst: f.dst,
        size: len + header,
        payload: len,
        kind: PacketKind::Data,
        class: f.class,
        prio: f.prio,
        flags,
        in_port: 0,
        to_port: 0,
        tag: 0,
    }
}

/// A control packet (ACK, NACK, PULL, ...) of a receiver-driven flow `f`
/// (slot `slot`), NDP's or EQDS's: `kind` of `size` bytes to `dst`, with
/// `seq` and `payload` as the transport reads them, on path `hash`.
pub(crate) fn control_packet(
    f: &FlowSlot,
    slot: u32,
    kind: PacketKind,
    (dst, size): (u32, u32),
    (seq, payload): (u64, u32),
    hash: u64,
    flags: u8,
) -> Packet {
    Packet {
        seq,
        ts: 0,
        enq_at: 0,
        hash,
        flow: slot,
        flow_uid: f.uid,
        dst,
        size,
        payload,
        kind,
        class: f.class,
        prio: f.class,
        flags,
        in_port: 0,
        to_port: 0,
        tag: 0,
    }
}

/// The next data segment of the flow in `slot`, as a packet ready for the
/// wire, or `None` when its window (or data) allows none.
#[inline]
pub(crate) fn send_segment(w: &mut World, now: Ps, slot: u32) -> Option<PktId> {
    let f = &mut w.flows.slots[slot as usize];
    if f.ndp.is_some() {
        return super::ndp::send_segment(w, now, slot);
    }
    if w.eqds.is_some() && super::eqds::owns(w, slot) {
        return super::eqds::send_segment(w, now, slot);
    }
    let f = &mut w.flows.slots[slot as usize];
    // The segment's send time (retransmissions' and, for model-based CC
    // such as BBR, every segment's) and, when the CC paces, the next one's
    // (the NIC waits for it: `RoundRobin`).
    let seg = f.tcp.next_segment_at(now, &w.tcp)?;
    let mut fl = if f.tcp.cc.ecn_capable() {
        flags::ECT
    } else {
        0
    };
    if seg.retx {
        fl |= flags::RETX;
    }
    let hash = w.routes.packet_hash(f.hash, seg.seq);
    let mut pkt = data_packet(f, slot, now, (seg.seq, seg.len), w.tcp.header, hash, fl);
    if let Some(e) = w.edge.as_deref_mut() {
        pkt.tag = e.tag(f.gate.as_deref());
    }
    w.counters.cons.sent_bytes += pkt.size as u64;
    if f.tcp.uses_rack() {
        arm_rack_timer(w, slot);
    } else if !f.tcp.rto_timer.is_armed() {
        let rto = f.tcp.rtt.current(&w.tcp);
        w.q.arm(&mut f.tcp.rto_timer, now + rto, Ev::Rto(slot));
    }
    Some(w.arena.alloc(pkt))
}

/// A TCP packet (already freed, its id `id`) reached host `host`.
pub(crate) fn receive(w: &mut World, now: Ps, host: u32, pkt: &Packet, id: PktId) {
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
        return; // a late packet of a finished flow
    }
    let f = &mut w.flows.slots[slot as usize];
    match pkt.kind {
        PacketKind::Data => {
            let owd = match w.edge.as_deref_mut() {
                Some(e) => e.reading(f.src, host, pkt.ts, now) as i64,
                None => 0,
            };
            if pkt.seq > f.tcp.rcv_nxt {
                w.counters.out_of_order += 1;
            }
            f.tcp.ce_marks += pkt.has(flags::CE) as u32;
            let out = f.tcp.on_data(
                now,
                pkt.seq,
                pkt.payload,
                pkt.has(flags::CE),
                Echo { ts: pkt.ts, owd },
                &w.tcp,
            );
            if let Some(t) = out.arm_delack {
                w.q.arm(&mut f.tcp.delack_timer, t, Ev::DelAck(slot));
            }
            if let Some(a) = out.acks[0] {
                send_ack(w, slot, a, 0);
            }
            if let Some(a) = out.acks[1] {
                send_ack(w, slot, a, 1);
            }
            if out.acks[0].is_some() {
                nic::kick(w, now, w.host_nic[host as usize]);
            }
        }
        PacketKind::Ack => {
            if let Some(e) = w.edge.as_deref_mut() {
                edge_reading(e, f, now, pkt);
            }
            let r = if w.tcp.recovery.uses_sack() {
                sack_ack(&mut f.tcp, w.sack.get(id), now, pkt, &w.tcp)
            } else {
                f.tcp
                    .on_ack(now, pkt.seq, pkt.has(flags::ECE), pkt.ts, &w.tcp)
            };
            if r.completed {
                complete_flow(w, now, slot);
                return;
            }
            if f.tcp.uses_rack() {
                f.tcp.rack_after_ack(now, &r, &w.tcp);
                arm_rack_timer(w, slot);
                let f = &mut w.flows.slots[slot as usize];
                if r.may_send && !f.in_ready {
                    f.in_ready = true;
                    let src = f.src;
                    ready(w, now, src, slot);
                }
                return;
            }
            if r.advanced {
                if !f.tcp.outstanding() {
                    f.tcp.rto_timer.disarm();
                } else if r.restart_rto {
                    let rto = f.tcp.rtt.current(&w.tcp);
                    w.q.arm(&mut f.tcp.rto_timer, now + rto, Ev::Rto(slot));
                }
            }
            if r.may_send && !f.in_ready {
                f.in_ready = true;
                let src = f.src;
                ready(w, now, src, slot);
            }
        }
        _ => unreachable!("not a TCP packet"),
    }
}

/// An ACK with the SACK blocks `b` it carries ([`attach_sack`]; read
/// before any packet can take its slot) reached its sender.
#[inline(never)]
fn sack_ack(
    tcp: &mut TcpFlow,
    b: SackBlocks,
    now: Ps,
    ack: &Packet,
    params: &TcpParams,
) -> AckResult {
    tcp.on_ack_sack(
        now,
        ack.seq,
        ack.has(flags::ECE),
        ack.ts,
        b.as_slice(),
        params,
    )
}

/// Flow `slot` of host `src` may send again: back to its NIC, which is kicked.
fn ready(w: &mut World, now: Ps, src: u32, slot: u32) {
    let n = w.host_nic[src as usize];
    nic::flow_ready(w, n, slot);
    nic::kick(w, now, n);
}

/// Queues an ACK of flow `slot` at its receiver's NIC: the `i`th of the
/// ACKs its receiver just produced (0 for a delayed ACK).
fn send_ack(w: &mut World, slot: u32, a: AckOut, i: usize) {
    let f = &w.flows.slots[slot as usize];
    let class = w.ack_class.unwrap_or(f.class);
    let pkt = Packet {
        seq: a.ack,
        ts: a.ts,
        enq_at: 0,
        hash: f.ack_hash,
        flow: slot,
        flow_uid: f.uid,
        dst: f.src,
        size: w.tcp.ack_size,
        payload: Packet::owd_payload(a.owd as i32),
        kind: PacketKind::Ack,
        class,
        prio: class,
        flags: if a.ece { flags::ECE } else { 0 },
        in_port: 0,
        to_port: 0,
        tag: 0,
    };
    let receiver = f.dst;
    w.counters.cons.sent_bytes += pkt.size as u64;
    let id = w.arena.alloc(pkt);
    if w.tcp.recovery.uses_sack() {
        attach_sack(w, slot, i, id);
    }
    nic::push_ctrl(w, receiver, id);
}

/// RFC 2018: ACK `id`, the `i`th its receiver just produced, carries the
/// flow's SACK blocks, kept beside the packet ([`World::sack`]); the
/// option's bytes are on the wire.
#[inline(never)]
fn attach_sack(w: &mut World, slot: u32, i: usize, id: PktId) {
    let blocks = w.flows.slots[slot as usize].tcp.sack_blocks(i);
    let extra = option_bytes(&blocks);
    w.arena.get_mut(id).size += extra;
    w.counters.cons.sent_bytes += extra as u64;
    w.sack.put(id, blocks);
}

/// An ACK brought back an OWD reading: sample it and feed the flow's gate.
pub(crate) fn edge_reading(e: &mut EdgeRuntime, f: &mut FlowSlot, now: Ps, ack: &Packet) {
    e.record(now, f.src, f.id, ack.flow, ack.owd());
    if let Some(g) = f.gate.as_deref_mut() {
        g.on_owd(OwdSample {
            now,
            owd: ack.owd(),
            sent_at: ack.ts,
        });
    }
}

/// A TCP flow's gate may have reopened: back on its NIC's ready list.
pub(crate) fn on_gate(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active {
        return;
    }
    let Some(g) = f.gate.as_deref_mut() else {
        return;
    };
    if !w.q.fire(&mut g.timer, now, Ev::Gate(slot)) {
        return;
    }
    if !f.in_ready && f.tcp.can_send(&w.tcp) {
        f.in_ready = true;
        let src = f.src;
        ready(w, now, src, slot);
    }
}

/// The pacing timer of TCP flow `slot`: its next segment may leave.
pub(crate) fn on_pace(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active || !w.q.fire(&mut f.tcp.pace_timer, now, Ev::Pace(slot)) {
        return;
    }
    if !f.in_ready && f.tcp.can_send(&w.tcp) {
        f.in_ready = true;
        let src = f.src;
        ready(w, now, src, slot);
    }
}

/// The retransmission timer of TCP flow `slot`.
pub(crate) fn on_rto(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active {
        return;
    }
    if !w.q.fire(&mut f.tcp.rto_timer, now, Ev::Rto(slot))
        || (!f.tcp.outstanding() && f.tcp.snd_una >= f.tcp.size)
    {
        return;
    }
    if f.tcp.uses_rack() {
        // RACK-TLP: the timer is the RTO, the reordering timer or the PTO.
        f.tcp.rack_on_timer(now, &w.tcp);
        arm_rack_timer(w, slot);
    } else {
        f.tcp.on_timeout_at(now, &w.tcp);
        let rto = f.tcp.rtt.current(&w.tcp);
        w.q.arm(&mut f.tcp.rto_timer, now + rto, Ev::Rto(slot));
    }
    let f = &mut w.flows.slots[slot as usize];
    if !f.in_ready && f.tcp.can_send(&w.tcp) {
        f.in_ready = true;
        let src = f.src;
        ready(w, now, src, slot);
    }
}

/// Arms (or disarms) the one timer of RACK-TLP flow `slot` at the earliest
/// of its RTO, reordering-timer and PTO deadlines
/// ([`TcpFlow::rack_deadline`]).
fn arm_rack_timer(w: &mut World, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    match f.tcp.rack_deadline() {
        Some(at) => w.q.arm(&mut f.tcp.rto_timer, at, Ev::Rto(slot)),
        None => f.tcp.rto_timer.disarm(),
    }
}

/// The delayed-ACK timer of TCP flow `slot`'s receiver.
pub(crate) fn on_delack(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active && w.flows.apart.is_none() {
        return;
    }
    if !w.q.fire(&mut f.tcp.delack_timer, now, Ev::DelAck(slot)) {
        return;
    }
    if let Some(a) = f.tcp.on_delack_timeout() {
        let h = f.dst;
        send_ack(w, slot, a, 0);
        nic::kick(w, now, w.host_nic[h as usize]);
    }
}

//! The EQDS endpoint (Olteanu et al., NSDI 2022): what the engine does with
//! the state machines of [`crate::transport::eqds`]. A flow whose group has
//! `cc = "eqds"` ([`crate::transport::cc::eqds`]) keeps a TCP slot (for its
//! record and its retransmission timer) and an [`EqdsFlow`] in EQDS's own
//! table, [`EqdsState::flows`], by slot: nothing of it lives in the flow
//! slot. Its NIC asks it for packets through the TCP path
//! ([`crate::nic::sender::offer_tcp`] calls [`send_segment`]); its packets
//! carry [`flags::EQDS`], so that [`crate::nic::deliver`] hands them here
//! ([`receive`]).
//!
//! * Data (whole or trimmed) at the receiver: an ACK or a NACK into the
//!   receiver's NIC control FIFO; the pull target it carries, and a trimmed
//!   header's retransmission, join its host's pacer ([`EqdsPacer`],
//!   [`on_pacer`], an [`Ev::EqdsPull`]).
//! * ACK, NACK, PULL at the sender: [`EqdsSender`] and, when it may send,
//!   back on its NIC's list.
//! * Its RTO ([`on_rto`], the slot's TCP timer) may send an RTS.
//!
//! Wire format (control packets of `ack_size` bytes; htsim: 64): data
//! `seq` = its first payload byte, `ts` = its pull target (quanta) in the
//! low 48 bits and its entropy value above ([`TARGET_BITS`]),
//! [`flags::RETX`] on a retransmission; ACK `seq` = the packet it
//! acknowledges, `payload` = the cumulative ACK (packets); NACK `seq` = the
//! trimmed packet, `payload` = its entropy value; PULL `payload` = its pull
//! number (quanta). An RTS is a
//! PULL-kind packet to the receiver with [`flags::RETX`], `payload` = the
//! quanta it asks for.

use crate::host::complete_flow;
use crate::net::packet::flags;
use crate::net::{Packet, PacketKind, PktId};
use crate::nic;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::transport::cc::CcConfig;
use crate::transport::entropy::{self, Entropy};
use crate::transport::eqds::{
    EqdsPacer, EqdsParams, EqdsReceiver, EqdsReply, EqdsSender, Join, Turn, QUANTUM,
};
use crate::transport::eqds_pacer;
use crate::units::Ps;

/// A flow's two EQDS ends.
pub(crate) struct EqdsFlow {
    pub params: EqdsParams,
    /// Each packet its own path ([`crate::transport::cc::eqds::Params::spray`]).
    pub spray: bool,
    /// The sender's entropy cycle (data and RTS), when sprayed.
    pub data_paths: Entropy,
    /// The receiver's entropy cycle (PULLs), when sprayed.
    pub pull_paths: Entropy,
    /// The flow's uid (a stale entry of a recycled slot is recognised).
    pub uid: u32,
    pub sender: EqdsSender,
    pub receiver: EqdsReceiver,
}

/// EQDS's state for the world, when some group runs EQDS.
pub(crate) struct EqdsState {
    /// Every host's pull pacer.
    pub pacers: Vec<EqdsPacer>,
    /// Bytes of an ACK, NACK, PULL or RTS: the transport's `ack_size`.
    pub control_bytes: u32,
    /// Quanta one PULL grants (`pull_bytes` / 512, by default one
    /// packet's payload in quanta, rounded up).
    pub pull_quanta: u64,
    /// Each flow slot's EQDS ends, when the flow in it runs EQDS.
    pub flows: Vec<Option<Box<EqdsFlow>>>,
}

/// EQDS's state, when some group runs EQDS: every host's pull pacer, one
/// PULL every (MTU + framing) x 8 / its NIC's rate x `pull_interval`
/// (htsim's `EqdsPullPacer`: 0.99 x (MTU + 38 B) x 8 / rate).
pub(crate) fn build(w: &mut World) {
    let Some(p) = w.ccs.iter().find_map(|c| match c {
        CcConfig::Eqds(p) => Some(p.clone()),
        _ => None,
    }) else {
        return;
    };
    let wire = w.tcp.mss + w.tcp.header as u64 + p.framing_bytes as u64;
    let pacers = w
        .host_nic
        .iter()
        .map(|&n| {
            let rate = w.ports[w.nics[n as usize].port as usize].rate;
            EqdsPacer::new((rate.tx_time(wire) as f64 * p.pull_interval).round() as Ps)
        })
        .collect();
    w.eqds = Some(Box::new(EqdsState {
        pacers,
        control_bytes: w.tcp.ack_size,
        pull_quanta: match p.pull_bytes {
            Some(bytes) => bytes as u64 / QUANTUM as u64,
            None => crate::transport::eqds::quantize_ceil(w.tcp.mss as i64) as u64,
        },
        flows: vec![],
    }));
}

/// A flow starts in `slot` with congestion control `cc` (an index in
/// `World::ccs`): its EQDS ends when that is `"eqds"`, else none (a
/// recycled slot's entry is cleared).
pub(crate) fn start(w: &mut World, slot: u32, cc: u8, size: u64) {
    let Some(st) = w.eqds.as_deref_mut() else {
        return;
    };
    let s = slot as usize;
    if st.flows.len() <= s {
        st.flows.resize_with(s + 1, || None);
    }
    let CcConfig::Eqds(p) = &w.ccs[cc as usize] else {
        st.flows[s] = None;
        return;
    };
    let params = EqdsParams {
        mss: w.tcp.mss as u32,
        header: w.tcp.header,
        init_window: p.init_window,
        rto: p.rto.0,
        burn_leftover: p.leftover == crate::transport::cc::eqds::Leftover::Burn,
    };
    let sender = EqdsSender::new(size, &params);
    st.flows[s] = Some(Box::new(EqdsFlow {
        receiver: EqdsReceiver::new(sender.packets),
        sender,
        params,
        // Its own `spray`, or the run's packet spraying (`routing.ecmp`).
        spray: p.spray || w.routes.spray,
        data_paths: Entropy::new(p.entropies, w.flows.slots[s].hash),
        pull_paths: Entropy::new(p.entropies, w.flows.slots[s].ack_hash),
        uid: w.flows.slots[s].uid,
    }));
}

/// The EQDS ends of the flow in `slot`, if it runs EQDS.
#[inline]
pub(crate) fn flow(w: &World, slot: u32) -> Option<&EqdsFlow> {
    let f = w.eqds.as_deref()?.flows.get(slot as usize)?.as_deref()?;
    (f.uid == w.flows.slots[slot as usize].uid).then_some(f)
}

fn flow_mut(st: &mut Option<Box<EqdsState>>, slot: u32) -> &mut EqdsFlow {
    st.as_deref_mut().expect("eqds").flows[slot as usize]
        .as_deref_mut()
        .expect("an EQDS flow")
}

/// Whether the flow in `slot` runs EQDS.
#[inline]
pub(crate) fn owns(w: &World, slot: u32) -> bool {
    w.eqds.is_some() && flow(w, slot).is_some()
}

/// Its record's figures: (size, bytes received, retransmissions, timeouts).
pub(crate) fn totals(w: &World, slot: u32) -> Option<(u64, u64, u32, u32)> {
    let s = &flow(w, slot)?.sender;
    Some((s.size, s.acked_bytes(), s.retransmits, s.timeouts))
}

/// The pacer's key of a flow: its slot and its uid.
fn key(slot: u32, uid: u32) -> u64 {
    (uid as u64) << 32 | slot as u64
}

/// Bits of a data packet's `ts` that hold its pull target; its entropy
/// value is above them.
pub(crate) const TARGET_BITS: u32 = 48;

/// The ECMP hash of a packet of direction hash `flow_hash` with entropy
/// `value`: the direction's own unless sprayed.
fn path_hash(spray: bool, flow_hash: u64, value: u16) -> u64 {
    if spray {
        entropy::hash(flow_hash, value)
    } else {
        flow_hash
    }
}

/// The next packet of EQDS flow `slot`, if it may send one.
pub(crate) fn send_segment(w: &mut World, now: Ps, slot: u32) -> Option<PktId> {
    let f = &mut w.flows.slots[slot as usize];
    let e = flow_mut(&mut w.eqds, slot);
    let seg = e.sender.next_segment(now, &e.params)?;
    let rto_at = e.sender.rto_at;
    let value = if e.spray {
        e.data_paths.next_value()
    } else {
        0
    };
    let hash = path_hash(e.spray, f.hash, value);
    // htsim's `ar` bit (EqdsSender::ack_request) is not carried: incast's
    // receiver ACKs every packet, where htsim's ACKs every 16 KB or on `ar`.
    let fl = flags::EQDS | if seg.retx { flags::RETX } else { 0 };
    let mut pkt = super::tcp::data_packet(f, slot, now, (seg.seq, seg.len), w.tcp.header, hash, fl);
    debug_assert!(seg.pull_target < 1 << TARGET_BITS);
    pkt.ts = seg.pull_target | (value as u64) << TARGET_BITS;
    w.counters.cons.sent_bytes += pkt.size as u64;
    arm_rto(w, now, slot, rto_at);
    Some(w.arena.alloc(pkt))
}

/// Arms flow `slot`'s timer for `rto_at`, or at once when that is past (an
/// RTS's timer that ran out while the sender still had credit: it fires
/// now and the timeout decides again).
fn arm_rto(w: &mut World, now: Ps, slot: u32, rto_at: Ps) {
    let f = &mut w.flows.slots[slot as usize];
    if rto_at == Ps::MAX {
        f.tcp.rto_timer.disarm();
    } else {
        w.q.arm(&mut f.tcp.rto_timer, rto_at.max(now), Ev::Rto(slot));
    }
}

/// Whether EQDS flow `slot` has a packet it may send now.
#[inline]
pub(crate) fn can_send(w: &World, slot: u32) -> bool {
    flow(w, slot).is_some_and(|e| e.sender.can_send())
}

/// Puts flow `slot` back on its sender's NIC list if it may send.
fn wake_sender(w: &mut World, now: Ps, slot: u32) {
    let ready = can_send(w, slot);
    let f = &mut w.flows.slots[slot as usize];
    if !f.in_ready && ready {
        f.in_ready = true;
        let src = w.host_nic[f.src as usize];
        nic::flow_ready(w, src, slot);
        nic::kick(w, now, src);
    }
}

/// Flow `slot`'s receiver at host `host` joins its pacer's lists.
fn join_pacer(w: &mut World, now: Ps, host: u32, slot: u32, join: Join) {
    let uid = w.flows.slots[slot as usize].uid;
    let pacer = &mut w.eqds.as_deref_mut().expect("eqds").pacers[host as usize];
    if let Some(t) = pacer.request(now, key(slot, uid), join) {
        w.q.push(t, Ev::EqdsPull(host));
    }
}

/// An EQDS packet (`pkt`, its id `id`, not yet freed) reached host `host`.
pub(crate) fn receive(w: &mut World, now: Ps, host: u32, pkt: &Packet, id: PktId) {
    w.arena.free(id);
    let slot = pkt.flow;
    let f = &w.flows.slots[slot as usize];
    // A late packet of a finished flow is dropped, except at a receiver
    // that lives apart from its sender (node order), which cannot know.
    let rts = pkt.kind == PacketKind::Pull && pkt.has(flags::RETX);
    let at_receiver = pkt.kind == PacketKind::Data || rts;
    let apart = w.flows.apart.is_some();
    if !f.holds(pkt.flow_uid, at_receiver, apart) || flow(w, slot).is_none() {
        return;
    }
    let uid = f.uid;
    let e = flow_mut(&mut w.eqds, slot);
    match pkt.kind {
        PacketKind::Data => {
            let index = (pkt.seq / e.params.mss as u64) as u32;
            let mtu = e.params.mss + e.params.header;
            let trimmed = pkt.has(flags::TRIMMED);
            let target = pkt.ts & ((1 << TARGET_BITS) - 1);
            // The entropy value it came by: its ACK or NACK goes back by it
            // (htsim's `sack(pkt.path_id(), ..)`, `nack(pkt.path_id(), ..)`).
            let value = (pkt.ts >> TARGET_BITS) as u16;
            let (reply, join) = e.receiver.on_packet(index, trimmed, target, mtu);
            let complete = e.receiver.complete();
            join_pacer(w, now, host, slot, join);
            if complete {
                let pacer = &mut w.eqds.as_deref_mut().expect("eqds").pacers[host as usize];
                pacer.forget(key(slot, uid));
            }
            match reply {
                EqdsReply::Ack { cum, index } => {
                    send_control(w, slot, PacketKind::Ack, index as u64, cum, 0, Some(value))
                }
                EqdsReply::Nack { index } => {
                    let v = value as u32;
                    send_control(w, slot, PacketKind::Nack, index as u64, v, 0, Some(value))
                }
            }
            nic::kick(w, now, w.host_nic[host as usize]);
        }
        PacketKind::Pull if pkt.has(flags::RETX) => {
            // An RTS, at the receiver (§4.3).
            let join = e.receiver.on_rts(pkt.payload as u64);
            join_pacer(w, now, host, slot, join);
        }
        PacketKind::Ack | PacketKind::Nack | PacketKind::Pull => {
            let p = e.params;
            match pkt.kind {
                PacketKind::Ack if e.sender.on_ack(pkt.payload, pkt.seq as u32, &p) => {
                    complete_flow(w, now, slot);
                    return;
                }
                PacketKind::Ack => {}
                PacketKind::Nack => {
                    e.sender.on_nack(pkt.seq as u32, &p);
                    // Skip the trimmed packet's entropy once (htsim
                    // `processNack`: `penalizePath(ev, 1)`).
                    e.data_paths.penalize(pkt.payload as u16);
                }
                _ => e.sender.on_pull(pkt.payload as u64),
            }
            let rto_at = e.sender.rto_at;
            let rts = std::mem::take(&mut e.sender.rts_due);
            arm_rto(w, now, slot, rto_at);
            if rts > 0 {
                send_control(w, slot, PacketKind::Pull, 0, rts as u32, flags::RETX, None);
                nic::kick(w, now, w.host_nic[host as usize]);
            }
            wake_sender(w, now, slot);
        }
        _ => unreachable!("not an EQDS packet"),
    }
}

/// Queues an EQDS control packet of flow `slot` at the NIC of its receiver
/// (ACK, NACK, PULL: `to_sender`) or of its sender (RTS), sprayed by entropy
/// `value`, or without one the next of its end's cycle.
fn send_control(
    w: &mut World,
    slot: u32,
    kind: PacketKind,
    seq: u64,
    payload: u32,
    fl: u8,
    value: Option<u16>,
) {
    let f = &w.flows.slots[slot as usize];
    let to_sender = fl & flags::RETX == 0;
    let (from, to, flow_hash) = if to_sender {
        (f.dst, f.src, f.ack_hash)
    } else {
        (f.src, f.dst, f.hash)
    };
    let st = w.eqds.as_deref_mut().expect("eqds");
    let size = st.control_bytes;
    let e = st.flows[slot as usize].as_deref_mut().expect("eqds flow");
    let value = match value {
        _ if !e.spray => 0,
        Some(v) => v,
        None if to_sender => e.pull_paths.next_value(),
        None => e.data_paths.next_value(),
    };
    let hash = path_hash(e.spray, flow_hash, value);
    let flags = flags::EQDS | fl;
    let pkt = super::tcp::control_packet(f, slot, kind, (to, size), (seq, payload), hash, flags);
    w.counters.cons.sent_bytes += size as u64;
    let id = w.arena.alloc(pkt);
    nic::push_ctrl(w, from, id);
}

/// Host `host`'s pull pacer is due: its next PULL, and its next event.
pub(crate) fn on_pacer(w: &mut World, now: Ps, host: u32) {
    let st = w.eqds.as_deref_mut().expect("eqds");
    let quanta = st.pull_quanta;
    let Some((k, turn)) = st.pacers[host as usize].next_turn() else {
        return;
    };
    let (slot, uid) = (k as u32, (k >> 32) as u32);
    let f = &w.flows.slots[slot as usize];
    // Apart from its sender (node order), the receiver pulls until it has
    // every packet (it then forgets the flow), not until the sender is done.
    let live = f.holds(uid, true, w.flows.apart.is_some());
    let (no, rejoin) = if live {
        let e = flow_mut(&mut w.eqds, slot);
        // One window in quanta, rounded down (htsim's slow-pull cap,
        // `quantize_floor(getMaxCwnd())`).
        let cap =
            e.params.init_window as u64 * (e.params.mss + e.params.header) as u64 / QUANTUM as u64;
        let r = &mut e.receiver;
        let no = r.pull(quanta);
        let rejoin = eqds_pacer::rejoin(turn, r.rtx_backlog, r.backlog(), r.slow_credit(), cap);
        if turn != Turn::Rtx {
            // In the active list only while it has demand (htsim's `_in_pull`).
            r.in_active = rejoin == Some(Turn::Active);
        }
        (no, rejoin)
    } else {
        (0, None)
    };
    let pacer = &mut w.eqds.as_deref_mut().expect("eqds").pacers[host as usize];
    let next = pacer.after_pull(now, k, rejoin);
    w.q.push(next, Ev::EqdsPull(host));
    if live {
        send_control(w, slot, PacketKind::Pull, 0, no as u32, 0, None);
        nic::kick(w, now, w.host_nic[host as usize]);
    }
}

/// EQDS flow `slot`'s retransmission timer (the slot's TCP timer).
pub(crate) fn on_rto(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active || !w.q.fire(&mut f.tcp.rto_timer, now, Ev::Rto(slot)) {
        return;
    }
    let e = flow_mut(&mut w.eqds, slot);
    if now < e.sender.rto_at {
        let t = e.sender.rto_at;
        arm_rto(w, now, slot, t);
        return;
    }
    let p = e.params;
    let rts = e.sender.on_timeout(now, &p);
    let t = e.sender.rto_at;
    arm_rto(w, now, slot, t);
    if rts > 0 {
        send_control(w, slot, PacketKind::Pull, 0, rts as u32, flags::RETX, None);
        let src = w.flows.slots[slot as usize].src;
        nic::kick(w, now, w.host_nic[src as usize]);
    }
    wake_sender(w, now, slot);
}

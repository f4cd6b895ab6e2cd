//! The NDP endpoint (Handley et al., SIGCOMM 2017, §3.2): what the engine
//! does with the state machines of [`crate::transport::ndp`]. A flow whose
//! group has `cc = "ndp"` ([`crate::transport::cc::ndp`]) carries an
//! [`NdpFlow`] in its slot; its NIC asks it for packets through the TCP
//! path ([`crate::nic::sender::offer_tcp`] calls [`send_segment`]); its
//! packets carry [`flags::NDP`], so that [`crate::nic::deliver`] hands
//! them here ([`receive`]).
//!
//! * Data (whole or trimmed, [`flags::TRIMMED`]) at the receiver: an ACK
//!   or a NACK into the receiver's NIC control FIFO, and a pull for its
//!   host's pacer ([`PullPacer`]): carried by the ACK/NACK when the pacer
//!   is idle, else a PULL later ([`on_pacer`], an [`Ev::NdpPull`]).
//! * ACK, NACK, PULL at the sender: [`crate::transport::ndp::NdpSender`]
//!   and, when it may send, back on its NIC's list.
//! * Its RTO ([`on_rto`]) is the slot's TCP retransmission timer.
//!
//! Wire format (64-byte packets): data `seq` = its first payload byte;
//! ACK/NACK `seq` = the packet's number, `payload` = the pull number it
//! carries (0: none); PULL `payload` = its pull number.

use crate::host::complete_flow;
use crate::net::packet::flags;
use crate::net::{Packet, PacketKind, PktId};
use crate::nic;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::transport::cc::CcConfig;
use crate::transport::ndp::{NdpParams, NdpReceiver, NdpSender, PullNow, PullPacer};
use crate::units::Ps;

/// A flow's two NDP ends.
pub(crate) struct NdpFlow {
    pub params: NdpParams,
    /// Each packet its own path ([`crate::transport::cc::ndp::Params::spray`]).
    pub spray: bool,
    /// Packets sent by either end (a sprayed packet's hash), or in node
    /// order, whose ends live apart ([`crate::host::Flows::apart`]), by
    /// the sender only ...
    pub sent: u64,
    /// ... and by the receiver (node order only).
    pub receiver_sent: u64,
    pub sender: NdpSender,
    pub receiver: NdpReceiver,
}

/// Every host's pull pacer and NDP's control packet size.
pub(crate) struct NdpHosts {
    pub pacers: Vec<PullPacer>,
    /// Bytes of an ACK, NACK or PULL: the transport's `ack_size` (htsim:
    /// 64, its header).
    pub control_bytes: u32,
}

/// NDP's state for the world, when some group runs NDP: every host's pull
/// pacer, one PULL per (MTU x 8 / its NIC's rate) / `pull_rate` (htsim:
/// (MSS + 64 B) x 8 / rate / 0.99).
pub(crate) fn build(w: &mut World) {
    let Some(pull_rate) = w.ccs.iter().find_map(|c| match c {
        CcConfig::Ndp(p) => Some(p.pull_rate),
        _ => None,
    }) else {
        return;
    };
    let mtu = w.tcp.mss + w.tcp.header as u64;
    let pacers = w
        .host_nic
        .iter()
        .map(|&n| {
            let rate = w.ports[w.nics[n as usize].port as usize].rate;
            PullPacer::new((rate.tx_time(mtu) as f64 / pull_rate).round() as Ps)
        })
        .collect();
    w.ndp = Some(Box::new(NdpHosts {
        pacers,
        control_bytes: w.tcp.ack_size,
    }));
}

/// A new flow's NDP ends, when its congestion control (`cc`, an index in
/// `World::ccs`) is `"ndp"`.
pub(crate) fn flow(w: &World, cc: u8, size: u64) -> Option<Box<NdpFlow>> {
    let CcConfig::Ndp(p) = &w.ccs[cc as usize] else {
        return None;
    };
    let params = NdpParams {
        mss: w.tcp.mss as u32,
        init_window: p.init_window,
        rto: p.rto.0,
    };
    let sender = NdpSender::new(size, &params);
    Some(Box::new(NdpFlow {
        receiver: NdpReceiver::new(sender.packets),
        sender,
        params,
        // Its own `spray`, or the run's packet spraying (`routing.ecmp`).
        spray: p.spray || w.routes.spray,
        sent: 0,
        receiver_sent: 0,
    }))
}

/// The pacer's key of a flow: its slot and its uid (a stale pull of a
/// finished flow is recognised and dropped).
fn key(slot: u32, uid: u32) -> u64 {
    (uid as u64) << 32 | slot as u64
}

/// The next packet of NDP flow `slot`, if it may send one.
pub(crate) fn send_segment(w: &mut World, now: Ps, slot: u32) -> Option<PktId> {
    let f = &mut w.flows.slots[slot as usize];
    let n = f.ndp.as_deref_mut().expect("an NDP flow");
    let seg = n.sender.next_segment(now, &n.params)?;
    let rto_at = n.sender.rto_at;
    let hash = path_hash(n.spray, &mut n.sent, f.hash);
    let fl = flags::NDP | if seg.retx { flags::RETX } else { 0 };
    let pkt = super::tcp::data_packet(f, slot, now, (seg.seq, seg.len), w.tcp.header, hash, fl);
    w.counters.cons.sent_bytes += pkt.size as u64;
    if !f.tcp.rto_timer.is_armed() {
        w.q.arm(&mut f.tcp.rto_timer, rto_at, Ev::Rto(slot));
    }
    Some(w.arena.alloc(pkt))
}

/// The ECMP hash of the flow's next packet: the flow's (`flow_hash`), or
/// sprayed, one of its own per packet, numbered by its end's count `sent`.
fn path_hash(spray: bool, sent: &mut u64, flow_hash: u64) -> u64 {
    if !spray {
        return flow_hash;
    }
    *sent += 1;
    crate::rng::mix64(flow_hash ^ *sent)
}

/// Whether NDP flow `f` has a packet it may send now.
#[inline]
pub(crate) fn can_send(n: &NdpFlow) -> bool {
    n.sender.can_send()
}

/// An NDP packet (`pkt`, its id `id`, not yet freed) reached host `host`.
pub(crate) fn receive(w: &mut World, now: Ps, host: u32, pkt: &Packet, id: PktId) {
    w.arena.free(id);
    let slot = pkt.flow;
    let apart = w.flows.apart.is_some();
    let f = &mut w.flows.slots[slot as usize];
    // A late packet of a finished flow is dropped, except at a receiver
    // that lives apart from its sender (node order), which cannot know.
    if !f.holds(pkt.flow_uid, pkt.kind == PacketKind::Data, apart) {
        return;
    }
    let n = f.ndp.as_deref_mut().expect("an NDP flow");
    match pkt.kind {
        PacketKind::Data => {
            let index = (pkt.seq / n.params.mss as u64) as u32;
            let reply = n.receiver.on_packet(index, pkt.has(flags::TRIMMED));
            let complete = n.receiver.count == n.sender.packets;
            let k = key(slot, f.uid);
            let pacer = &mut w.ndp.as_deref_mut().expect("ndp").pacers[host as usize];
            let pull = match pacer.offer(now, k, reply.pull_no) {
                PullNow::Piggyback => reply.pull_no as u32,
                PullNow::Schedule(t) => {
                    w.q.push(t, Ev::NdpPull(host));
                    0
                }
                PullNow::Queued => 0,
            };
            if complete {
                pacer.forget(k);
            }
            let kind = if reply.nack {
                PacketKind::Nack
            } else {
                PacketKind::Ack
            };
            send_control(w, slot, kind, reply.index as u64, pull);
            nic::kick(w, now, w.host_nic[host as usize]);
        }
        PacketKind::Ack | PacketKind::Nack | PacketKind::Pull => {
            let p = n.params;
            if pkt.payload != 0 {
                n.sender.on_pull(pkt.payload as u64);
            }
            match pkt.kind {
                PacketKind::Ack if n.sender.on_ack(now, pkt.seq as u32, &p) => {
                    complete_flow(w, now, slot);
                    return;
                }
                PacketKind::Nack => n.sender.on_nack(now, pkt.seq as u32, &p),
                _ => {}
            }
            let rto_at = n.sender.rto_at;
            w.q.arm(&mut f.tcp.rto_timer, rto_at, Ev::Rto(slot));
            let f = &mut w.flows.slots[slot as usize];
            if !f.in_ready && can_send(f.ndp.as_deref().expect("ndp")) {
                f.in_ready = true;
                let src = w.host_nic[f.src as usize];
                nic::flow_ready(w, src, slot);
                nic::kick(w, now, src);
            }
        }
        _ => unreachable!("not an NDP packet"),
    }
}

/// Queues an NDP control packet (ACK, NACK, PULL) of flow `slot` at its
/// receiver's NIC, to its sender: `seq` a packet number, `pull` a pull
/// number (0: none).
fn send_control(w: &mut World, slot: u32, kind: PacketKind, seq: u64, pull: u32) {
    let f = &mut w.flows.slots[slot as usize];
    let size = w.ndp.as_deref().expect("ndp").control_bytes;
    let n = f.ndp.as_deref_mut().expect("ndp");
    let sent = match w.flows.apart {
        Some(_) => &mut n.receiver_sent,
        None => &mut n.sent,
    };
    let hash = path_hash(n.spray, sent, f.ack_hash);
    let pkt =
        super::tcp::control_packet(f, slot, kind, (f.src, size), (seq, pull), hash, flags::NDP);
    let receiver = f.dst;
    w.counters.cons.sent_bytes += size as u64;
    let id = w.arena.alloc(pkt);
    nic::push_ctrl(w, receiver, id);
}

/// Host `host`'s pull pacer is due: its next PULL, and its next event.
pub(crate) fn on_pacer(w: &mut World, now: Ps, host: u32) {
    let pacer = &mut w.ndp.as_deref_mut().expect("ndp").pacers[host as usize];
    let (pull, next) = pacer.fire(now);
    if let Some(t) = next {
        w.q.push(t, Ev::NdpPull(host));
    }
    let Some((k, no)) = pull else {
        return;
    };
    let (slot, uid) = (k as u32, (k >> 32) as u32);
    let f = &w.flows.slots[slot as usize];
    // Apart from its sender (node order), the receiver pulls until it has
    // every packet (it then forgets the flow), not until the sender is done.
    if !f.holds(uid, true, w.flows.apart.is_some()) {
        return;
    }
    send_control(w, slot, PacketKind::Pull, 0, no as u32);
    nic::kick(w, now, w.host_nic[host as usize]);
}

/// NDP flow `slot`'s retransmission timer (the slot's TCP timer).
pub(crate) fn on_rto(w: &mut World, now: Ps, slot: u32) {
    let f = &mut w.flows.slots[slot as usize];
    if !f.active || !w.q.fire(&mut f.tcp.rto_timer, now, Ev::Rto(slot)) {
        return;
    }
    let n = f.ndp.as_deref_mut().expect("an NDP flow");
    if now < n.sender.rto_at {
        let t = n.sender.rto_at;
        w.q.arm(&mut f.tcp.rto_timer, t, Ev::Rto(slot));
        return;
    }
    let p = n.params;
    n.sender.on_timeout(now, &p);
    if n.sender.rto_at != Ps::MAX {
        let t = n.sender.rto_at;
        w.q.arm(&mut f.tcp.rto_timer, t, Ev::Rto(slot));
    }
    if !f.in_ready && n.sender.can_send() {
        f.in_ready = true;
        let src = w.host_nic[f.src as usize];
        nic::flow_ready(w, src, slot);
        nic::kick(w, now, src);
    }
}

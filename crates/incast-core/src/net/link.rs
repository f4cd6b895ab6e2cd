//! The link element: a port starts a transmission, the packet crosses the
//! wire, and it arrives at the port at the far end.
//!
//! A packet of `s` bytes that starts at `t` occupies the transmitter until
//! `t + s*8/rate` ([`crate::net::Port::transmit`]) and reaches the peer at
//! `t + s*8/rate + delay`: one [`Ev::Arrive`] event carries it there. A port
//! that has more to send after a transmission asks for one [`Ev::TxDone`]
//! at its end ([`want_tx_done`]); an idle port is served at once ([`kick`]).
//! A packet bound for a switch is routed as it leaves: it carries its
//! egress port at that switch ([`crate::net::Packet::to_port`]).

use super::port::Owner;
use super::{Packet, PacketArena, PacketKind, PktId};
use crate::host::FlowStart;
use crate::mech;
use crate::net::switch;
use crate::nic;
use crate::nic::adapter::{Msg, Msgs};
use crate::rdma::cc::IntStack;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::transport::sack::{SackBlocks, SackTable};
use crate::units::Ps;

/// Starts the transmission of `pkt` on port `port_id` (whose transmitter is free)
/// and schedules its arrival at the peer.
#[inline(always)]
pub(crate) fn transmit(w: &mut World, now: Ps, port_id: u32, pkt: PktId) {
    let port = &mut w.ports[port_id as usize];
    let packet = w.arena.get_mut(pkt);
    packet.in_port = port.peer_local;
    // A switch routes a packet by itself and the packet alone, so it is
    // routed now, as it leaves: it travels to its egress port there, which
    // the run loop starts loading before the arrival.
    packet.to_port = match port.peer_switch {
        Some(s) if !packet.kind.is_link_control() => {
            let local = w.routes.select(s, packet.dst, packet.hash);
            w.switches[s as usize].port(local)
        }
        _ => port.peer,
    };
    let size = packet.size;
    let arrival = port.transmit(now, size);
    // A partitioned run: the far end may be another partition's.
    if w.outbox.is_some() && mail_across(w, port_id, arrival, pkt) {
        return;
    }
    w.q.push(arrival, Ev::Arrive(pkt));
}

/// A partitioned run's transmission on port `port`: mails the arrival when the
/// far end is another partition's ([`Outbox::mail`]). Out of line: a plain
/// run only tests that it has no outbox.
#[cold]
#[inline(never)]
fn mail_across(w: &mut World, port: u32, arrival: Ps, pkt: PktId) -> bool {
    let key = w.q.key_of(arrival);
    let outbox = w.outbox.as_deref_mut().expect("tested");
    let msgs = w.nic_state.adapter.as_deref_mut().map(|st| &mut st.msgs);
    outbox.mail(port, key, pkt, &mut w.arena, &w.sack, msgs)
}

/// Port `port_id` has more to send: one `TxDone` at the end of its current
/// transmission (at most one pending per port).
#[inline(always)]
pub(crate) fn want_tx_done(w: &mut World, port_id: u32) {
    let port = &mut w.ports[port_id as usize];
    if !port.tx_event {
        port.tx_event = true;
        let t = port.busy_until;
        w.q.push(t, Ev::TxDone(port_id));
    }
}

/// The `TxDone` of port `port_id`: its owner sends the next packet.
#[inline(always)]
pub(crate) fn tx_done(w: &mut World, now: Ps, port_id: u32) {
    let port = &mut w.ports[port_id as usize];
    port.tx_event = false;
    match port.owner() {
        Owner::Switch(s) => switch::transmit_next(w, now, s, port_id),
        Owner::Nic(n) => nic::transmit_next(w, now, n),
    }
}

/// Something may be sendable on port `port` again (a resume, a new control
/// frame): send now if it is idle, else when its transmission ends.
pub(crate) fn kick(w: &mut World, now: Ps, port: u32) {
    match w.ports[port as usize].owner() {
        Owner::Nic(n) => nic::kick(w, now, n),
        Owner::Switch(s) => {
            if w.ports[port as usize].is_idle(now) {
                switch::transmit_next(w, now, s, port);
            } else {
                want_tx_done(w, port);
            }
        }
    }
}

/// Packet `pkt` reaches the far end of its link: a link-local control frame
/// goes to the mechanism that owns its kind, anything else to the node.
#[inline(always)]
pub(crate) fn arrive(w: &mut World, now: Ps, pkt: PktId) {
    let p = w.arena.get(pkt);
    let (to, kind, local) = (p.to_port, p.kind, p.in_port);
    if kind.is_link_control() {
        mech::on_frame(w, now, to, pkt, kind);
        return;
    }
    // At a switch, `to` is the egress port it routed the packet to.
    match w.ports[to as usize].owner() {
        Owner::Switch(s) => switch::receive(w, now, s, pkt, local, to),
        Owner::Nic(n) => nic::receive(w, now, n, pkt),
    }
}

/// Where a partitioned run's arrivals bound for another partition go
/// ([`crate::sim::partitioned`], [`crate::sim::threaded`]): a transmission
/// tests it ([`transmit`]).
pub(crate) struct Outbox {
    /// Per port: the partition its link leads into when that is not its own,
    /// else `u32::MAX`.
    pub into: Vec<u32>,
    /// Per partition: the events mailed to it in the current window, keyed
    /// (partitions that share one world and its packets).
    pub mail: Vec<Vec<(u64, Ev)>>,
    /// A threaded run's partitions, each a world of its own: what crosses
    /// goes by value.
    pub parcels: Option<Box<Parcels>>,
}

/// What a threaded run's partition sends the others in a window.
pub(crate) struct Parcels {
    /// Per host: its partition when that is not this one, else `u32::MAX`.
    pub host_into: Vec<u32>,
    /// Per partition: the packets bound for it, with the keys of their arrivals.
    pub packets: Vec<Vec<Parcel>>,
    /// Per partition: the flows that started here for a receiver there.
    pub flows: Vec<Vec<FlowStart>>,
}

/// A packet on its way into another world, with its INT records, an
/// ACK's SACK blocks and a notification's message.
pub(crate) struct Parcel {
    pub key: u64,
    pub packet: Packet,
    pub int: IntStack,
    pub sack: SackBlocks,
    pub msg: Option<Msg>,
}

impl Outbox {
    /// Mails packet `pkt`'s arrival (keyed `key`) when port `port`'s link
    /// leads into another partition; false when it stays in this one. Into
    /// another world, the packet leaves this one's arena.
    #[inline]
    pub fn mail(
        &mut self,
        port: u32,
        key: u64,
        pkt: PktId,
        arena: &mut PacketArena,
        sack: &SackTable,
        msgs: Option<&mut Msgs>,
    ) -> bool {
        let into = self.into[port as usize];
        if into == u32::MAX {
            return false;
        }
        match self.parcels.as_deref_mut() {
            Some(parcels) => {
                let int = if arena.int_enabled() {
                    *arena.int(pkt)
                } else {
                    IntStack::default()
                };
                let packet = *arena.get(pkt);
                let sack = match packet.kind {
                    PacketKind::Ack => sack.carried(pkt),
                    _ => SackBlocks::default(),
                };
                // A notification's message is in this world's side table.
                let msg = match (packet.kind, msgs) {
                    (PacketKind::Notify, Some(msgs)) => Some(msgs.take(packet.seq)),
                    _ => None,
                };
                arena.free(pkt);
                let parcel = Parcel {
                    key,
                    packet,
                    int,
                    sack,
                    msg,
                };
                parcels.packets[into as usize].push(parcel);
            }
            None => self.mail[into as usize].push((key, Ev::Arrive(pkt))),
        }
        true
    }

    /// A flow started here: its receiver's part goes to the receiver's
    /// partition when that is another world.
    pub fn flow_started(&mut self, start: &FlowStart) {
        if let Some(parcels) = self.parcels.as_deref_mut() {
            let into = parcels.host_into[start.req.dst as usize];
            if into != u32::MAX {
                parcels.flows[into as usize].push(*start);
            }
        }
    }
}

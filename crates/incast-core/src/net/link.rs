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
use super::PktId;
use crate::mech;
use crate::net::switch;
use crate::nic;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::Ps;

/// Starts the transmission of `pkt` on port `p` (whose transmitter is free)
/// and schedules its arrival at the peer.
#[inline(always)]
pub(crate) fn transmit(w: &mut World, now: Ps, p: u32, pkt: PktId) {
    let port = &mut w.ports[p as usize];
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
    if let Some(outbox) = &mut w.outbox {
        // A partitioned run: the far end may be another partition's.
        if outbox.mail(p, w.q.key_of(arrival), Ev::Arrive(pkt)) {
            return;
        }
    }
    w.q.push(arrival, Ev::Arrive(pkt));
}

/// Port `p` has more to send: one `TxDone` at the end of its current
/// transmission (at most one pending per port).
#[inline(always)]
pub(crate) fn want_tx_done(w: &mut World, p: u32) {
    let port = &mut w.ports[p as usize];
    if !port.tx_event {
        port.tx_event = true;
        let t = port.busy_until;
        w.q.push(t, Ev::TxDone(p));
    }
}

/// The `TxDone` of port `p`: its owner sends the next packet.
#[inline(always)]
pub(crate) fn tx_done(w: &mut World, now: Ps, p: u32) {
    let port = &mut w.ports[p as usize];
    port.tx_event = false;
    match port.owner() {
        Owner::Switch(s) => switch::transmit_next(w, now, s, p),
        Owner::Nic(n) => nic::transmit_next(w, now, n),
    }
}

/// Something may be sendable on port `gp` again (a resume, a new control
/// frame): send now if it is idle, else when its transmission ends.
pub(crate) fn kick(w: &mut World, now: Ps, gp: u32) {
    match w.ports[gp as usize].owner() {
        Owner::Nic(n) => nic::kick(w, now, n),
        Owner::Switch(s) => {
            if w.ports[gp as usize].is_idle(now) {
                switch::transmit_next(w, now, s, gp);
            } else {
                want_tx_done(w, gp);
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
/// ([`crate::sim::partitioned`]): a transmission tests it ([`transmit`]).
pub(crate) struct Outbox {
    /// Per port: the partition its link leads into when that is not its own,
    /// else `u32::MAX`.
    pub into: Vec<u32>,
    /// Per partition: the events mailed to it in the current window, keyed.
    pub mail: Vec<Vec<(u64, Ev)>>,
}

impl Outbox {
    /// Mails `ev` (keyed `key`) when port `port`'s link leads into another
    /// partition; false when it stays in this one.
    #[inline]
    pub fn mail(&mut self, port: u32, key: u64, ev: Ev) -> bool {
        let into = self.into[port as usize];
        if into == u32::MAX {
            return false;
        }
        self.mail[into as usize].push((key, ev));
        true
    }
}

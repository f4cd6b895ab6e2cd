//! What every NIC model does when it takes a packet from one of its hosts'
//! flows, in one place so that a model cannot forget a part of it: the
//! NIC's congestion-isolation ageing (IEEE 802.1Qcz, [`ci::nic::age`]), the wait
//! at the sender (edge gate, pacing, the host's PCIe link:
//! [`held_at_sender`]), the transport's segment, and the PCIe charge
//! ([`super::pcie::charge`]). A model decides only which flow to ask
//! ([`offer_tcp`], [`offer_qp`]) and where the flow waits next.

use super::pcie;
use crate::host::{rdma, tcp, FlowSlot};
use crate::mech::ci;
use crate::net::PktId;
use crate::rdma::qp::SendState;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::Ps;

/// What a TCP flow offered the NIC ([`offer_tcp`]).
pub(crate) enum TcpOffer {
    /// The flow finished: it leaves the model's lists.
    Gone,
    /// Its priority is PAUSEd (PFC) and the model holds paused flows: it
    /// stays on the model's list (`in_ready` kept), the resume kicks the NIC.
    Paused,
    /// It waits at its sender (gate, pacing, PCIe) or has nothing to send:
    /// it leaves the model's lists; its timer or an ACK hands it back.
    Idle,
    /// Its next segment; `again`: it may send more (`in_ready` kept), so
    /// the model puts it back on its list.
    Sent { pkt: PktId, again: bool },
}

/// Asks TCP flow `slot` for its next segment at `now`, on a NIC whose port
/// has priorities `paused` PAUSEd; with `skip_paused` a flow on a paused
/// priority is not asked (the round robin), without it the model queues
/// its segments and checks the pause when it sends them (the transmit
/// queues). The flow is off the model's lists (`in_ready` false) unless
/// the answer says otherwise.
#[inline(always)]
pub(crate) fn offer_tcp(
    w: &mut World,
    now: Ps,
    slot: u32,
    paused: u8,
    skip_paused: bool,
) -> TcpOffer {
    let f = &mut w.flows.slots[slot as usize];
    f.in_ready = false;
    if !f.active {
        return TcpOffer::Gone;
    }
    if f.prio != f.class {
        ci::nic::age(&mut w.mechs.ci, f, slot, now, paused);
    }
    if skip_paused && paused & (1 << f.prio) != 0 {
        f.in_ready = true;
        return TcpOffer::Paused;
    }
    let src = f.src;
    if held_at_sender(&mut w.q, f, now, slot, pcie::free_at(&w.pcie, src)) {
        return TcpOffer::Idle;
    }
    let Some(pkt) = tcp::send_segment(w, now, slot) else {
        return TcpOffer::Idle;
    };
    pcie::charge(&mut w.pcie, now, src, w.arena.get(pkt).size as u64);
    let f = &w.flows.slots[slot as usize];
    let again = match f.ndp.as_deref() {
        Some(n) => crate::host::ndp::can_send(n),
        None if w.eqds.is_some() && crate::host::eqds::owns(w, slot) => {
            crate::host::eqds::can_send(w, slot)
        }
        None => {
            // A TCP segment on the isolated priority keeps the isolation
            // (NDP's and EQDS's packets, above, do not refresh it).
            if f.prio != f.class {
                ci::nic::sent(&mut w.mechs.ci, slot, now);
            }
            f.tcp.can_send(&w.tcp)
        }
    };
    let f = &mut w.flows.slots[slot as usize];
    f.in_ready = again;
    TcpOffer::Sent { pkt, again }
}

/// Whether TCP flow `slot` must wait at its sender before its next segment:
/// its edge gate is closed, or it paces (BBR) and its next send time has not
/// come, or its host's PCIe link (`pcie_free`, [`pcie::free_at`]) is still
/// busy. Then it leaves the NIC's lists, and the timer that ends the wait
/// (`Ev::Gate`, `Ev::Pace`) is armed to hand it back. Flows that do not pace
/// never set `next_send_at`.
#[inline(always)]
fn held_at_sender(
    q: &mut crate::engine::EventQueue<Ev>,
    f: &mut FlowSlot,
    now: Ps,
    slot: u32,
    pcie_free: Ps,
) -> bool {
    if let Some(g) = f.gate.as_deref_mut() {
        if !g.is_open(now) {
            let t = g.hold_until;
            q.arm(&mut g.timer, t, Ev::Gate(slot));
            return true;
        }
    }
    let t = f.tcp.next_send_at.max(pcie_free);
    if now < t {
        q.arm(&mut f.tcp.pace_timer, t, Ev::Pace(slot));
        return true;
    }
    false
}

/// What an active RDMA queue pair offered the NIC ([`offer_qp`]).
pub(crate) enum QpOffer {
    /// Nothing now: PAUSEd (the resume kicks the NIC) or blocked by its
    /// window (an ACK kicks it).
    Nothing,
    /// Nothing before this time (pacing, edge gate, PCIe link).
    WaitUntil(Ps),
    /// Its next packet.
    Sent(PktId),
}

/// Asks the active queue pair of flow `slot` for its next paced packet at
/// `now`, on a NIC whose port has priorities `paused` PAUSEd. The model
/// keeps the queue pair on its list (queue pairs stay while active).
#[inline(always)]
pub(crate) fn offer_qp(w: &mut World, now: Ps, slot: u32, paused: u8) -> QpOffer {
    let cfg = &w.rdma.as_ref().expect("rdma").cfg;
    let f = &mut w.flows.slots[slot as usize];
    if f.prio != f.class {
        ci::nic::age(&mut w.mechs.ci, f, slot, now, paused);
    }
    let qp = f.qp.as_mut().expect("rdma flow");
    if paused & (1 << f.prio) != 0 {
        return QpOffer::Nothing; // PFC pauses this QP's priority: XON or expiry kicks the NIC
    }
    if let Some(g) = f.gate.as_deref() {
        if !g.is_open(now) {
            // Edge pause: the QP's next packet waits at the sender.
            return QpOffer::WaitUntil(g.hold_until);
        }
    }
    let (src, pcie_free) = (f.src, pcie::free_at(&w.pcie, f.src));
    if now < pcie_free {
        // Its host's PCIe link is still busy with the previous packet.
        return QpOffer::WaitUntil(pcie_free);
    }
    match qp.send_state(cfg, now) {
        SendState::Blocked => return QpOffer::Nothing,
        SendState::WaitUntil(t) => return QpOffer::WaitUntil(t),
        SendState::Ready => {}
    }
    let pkt = rdma::send_segment(w, now, slot);
    let f = &w.flows.slots[slot as usize];
    if f.prio != f.class {
        ci::nic::sent(&mut w.mechs.ci, slot, now);
    }
    pcie::charge(&mut w.pcie, now, src, w.arena.get(pkt).size as u64);
    QpOffer::Sent(pkt)
}

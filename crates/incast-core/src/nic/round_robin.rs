//! The round-robin NIC: flows that may send take turns, one packet each.
//!
//! Flows therefore share the host link fairly and no unbounded NIC queue
//! builds up (the host stack is never ahead of the wire). TCP flows leave
//! the ready list when their window closes and come back on an ACK; RDMA
//! queue pairs stay on it while active and are paced by their congestion
//! control's rate: when none may send yet, the NIC wakes itself at the
//! earliest pacing (or edge-gate) deadline.
//!
//! A flow whose priority PFC pauses is skipped (the resume kicks the NIC);
//! a flow whose edge gate is closed waits at the sender, and so does a
//! paced TCP flow (BBR) before its next send time, and a flow whose host's
//! PCIe link is busy ([`super::pcie`]); its pace timer puts it back on the
//! list.

use super::{ci_age, pcie, NicModel};
use crate::host::{rdma, tcp};
use crate::net::PktId;
use crate::rdma::qp::SendState;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::Ps;

/// The round-robin NIC model.
pub struct RoundRobin;

impl NicModel for RoundRobin {
    #[inline(always)]
    fn next_packet(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
        if w.rdma.is_some() {
            next_qp_packet(w, now, nic)
        } else {
            next_tcp_packet(w, now, nic)
        }
    }

    #[inline]
    fn flow_ready(w: &mut World, nic: u32, slot: u32) {
        w.nics[nic as usize].ready.push_back(slot);
    }

    fn flow_done(w: &mut World, nic: u32, slot: u32) {
        w.nics[nic as usize].ready.retain(|&x| x != slot);
    }

    #[inline(always)]
    fn has_work(w: &World, nic: u32) -> bool {
        !w.nics[nic as usize].ready.is_empty()
    }
}

/// Round robin over the NIC's sendable TCP flows: the next data segment.
/// (Inlined into each NIC model that serves flows round robin.)
#[inline(always)]
fn next_tcp_packet(w: &mut World, now: Ps, n: u32) -> Option<PktId> {
    let paused = w.ports[w.nics[n as usize].port as usize].paused;
    let mut tries = w.nics[n as usize].ready.len();
    while let Some(slot) = w.nics[n as usize].ready.pop_front() {
        let f = &mut w.flows.slots[slot as usize];
        f.in_ready = false;
        if !f.active {
            continue;
        }
        if f.prio != f.class {
            ci_age(&mut w.mechs.ci, f, now, paused);
        }
        if paused & (1 << f.prio) != 0 {
            // PFC: this flow's class is paused; the resume kicks the NIC.
            f.in_ready = true;
            w.nics[n as usize].ready.push_back(slot);
            tries -= 1;
            if tries == 0 {
                return None;
            }
            continue;
        }
        let src = f.src;
        if held_at_sender(&mut w.q, f, now, slot, pcie::free_at(&w.pcie, src)) {
            continue;
        }
        let Some(pkt) = tcp::send_segment(w, now, slot) else {
            continue;
        };
        pcie::charge(&mut w.pcie, now, src, w.arena.get(pkt).size as u64);
        let f = &mut w.flows.slots[slot as usize];
        if f.tcp.can_send(&w.tcp) {
            f.in_ready = true;
            w.nics[n as usize].ready.push_back(slot);
        }
        return Some(pkt);
    }
    None
}

/// Whether TCP flow `slot` must wait at its sender before its next segment:
/// its edge gate is closed, or it paces (BBR) and its next send time has not
/// come, or its host's PCIe link (`pcie_free`, [`pcie::free_at`]) is still
/// busy. Then it leaves the NIC's lists, and the timer that ends the wait
/// (`Ev::Gate`, `Ev::Pace`) is armed to hand it back. Flows that do not pace
/// never set `next_send_at`.
#[inline(always)]
pub(super) fn held_at_sender(
    q: &mut crate::engine::EventQueue<Ev>,
    f: &mut crate::host::FlowSlot,
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

/// Round robin over the NIC's QPs: the next paced data packet, if one may
/// leave now; otherwise arm the NIC's wake-up for the earliest deadline.
#[inline(always)]
fn next_qp_packet(w: &mut World, now: Ps, n: u32) -> Option<PktId> {
    let cfg = &w.rdma.as_ref().expect("rdma").cfg;
    let paused = w.ports[w.nics[n as usize].port as usize].paused;
    let mut wake = Ps::MAX;
    for _ in 0..w.nics[n as usize].ready.len() {
        let slot = w.nics[n as usize].ready.pop_front().expect("len");
        let f = &mut w.flows.slots[slot as usize];
        if !f.active {
            f.in_ready = false;
            continue;
        }
        w.nics[n as usize].ready.push_back(slot);
        if f.prio != f.class {
            ci_age(&mut w.mechs.ci, f, now, paused);
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
        let (src, pcie_free) = (f.src, pcie::free_at(&w.pcie, f.src));
        if now < pcie_free {
            // Its host's PCIe link is still busy with the previous packet.
            wake = wake.min(pcie_free);
            continue;
        }
        match qp.send_state(cfg, now) {
            SendState::Blocked => continue,
            SendState::WaitUntil(t) => {
                wake = wake.min(t);
                continue;
            }
            SendState::Ready => {}
        }
        let pkt = rdma::send_segment(w, now, slot);
        pcie::charge(&mut w.pcie, now, src, w.arena.get(pkt).size as u64);
        return Some(pkt);
    }
    if wake != Ps::MAX {
        w.q.arm(&mut w.nics[n as usize].wake, wake, Ev::NicWake(n));
    }
    None
}

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

use super::sender::{offer_qp, offer_tcp, QpOffer, TcpOffer};
use super::NicModel;
use crate::net::PktId;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::Ps;

/// The round-robin NIC model.
pub struct RoundRobin;

impl NicModel for RoundRobin {
    type State = ();
    /// Its state is the NICs' own ready lists, which a threaded run takes
    /// from their owners.
    const THREADS: bool = true;

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
fn next_tcp_packet(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
    let paused = w.ports[w.nics[nic as usize].port as usize].paused;
    let mut tries = w.nics[nic as usize].ready.len();
    while let Some(slot) = w.nics[nic as usize].ready.pop_front() {
        match offer_tcp(w, now, slot, paused, true) {
            TcpOffer::Gone | TcpOffer::Idle => continue,
            TcpOffer::Paused => {
                // PFC: this flow's class is paused; the resume kicks the NIC.
                w.nics[nic as usize].ready.push_back(slot);
                tries -= 1;
                if tries == 0 {
                    return None;
                }
            }
            TcpOffer::Sent { pkt, again } => {
                if again {
                    w.nics[nic as usize].ready.push_back(slot);
                }
                return Some(pkt);
            }
        }
    }
    None
}

/// Round robin over the NIC's QPs: the next paced data packet, if one may
/// leave now; otherwise arm the NIC's wake-up for the earliest deadline.
#[inline(always)]
fn next_qp_packet(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
    let paused = w.ports[w.nics[nic as usize].port as usize].paused;
    let mut wake = Ps::MAX;
    for _ in 0..w.nics[nic as usize].ready.len() {
        let slot = w.nics[nic as usize].ready.pop_front().expect("len");
        let f = &mut w.flows.slots[slot as usize];
        if !f.active {
            f.in_ready = false;
            continue;
        }
        w.nics[nic as usize].ready.push_back(slot);
        match offer_qp(w, now, slot, paused) {
            QpOffer::Nothing => continue,
            QpOffer::WaitUntil(t) => wake = wake.min(t),
            QpOffer::Sent(pkt) => return Some(pkt),
        }
    }
    if wake != Ps::MAX {
        w.q.arm(&mut w.nics[nic as usize].wake, wake, Ev::NicWake(nic));
    }
    None
}

//! In-band network telemetry for HPCC (Li et al., SIGCOMM 2019, §3.2): each
//! egress port a data packet leaves pushes one record of its state onto the
//! packet's INT stack (the packet arena keeps the stacks beside the packets;
//! [`crate::net::PacketArena::enable_int`]); the receiver echoes the
//! records in its ACK and the sender's congestion control reads them.
//!
//! On only when the RDMA congestion control asks for INT.

use super::{Hop, SwitchMechanism};
use crate::net::PacketKind;
use crate::rdma::cc::IntHop;
use crate::sim::world::World;
use crate::units::Ps;

/// The INT mechanism (its on/off state is the arena's).
pub(crate) struct Int;

impl SwitchMechanism for Int {
    const ID: u8 = 3;
    type Config = ();
    type State = ();
    type PerSwitch = ();
    /// Its records travel with the packets ([`crate::net::link::Parcel`]).
    const THREADS: bool = true;

    #[inline(always)]
    fn wants_depart(w: &World, hop: &Hop, kind: PacketKind) -> bool {
        w.arena.int_enabled() && kind == PacketKind::Data && !hop.flushed
    }

    fn departs(w: &World) -> bool {
        w.arena.int_enabled()
    }

    /// The egress port's state at dequeue, before the packet's own bytes
    /// leave: time, bytes sent including this packet, queue length, rate.
    #[inline(always)]
    fn on_depart(w: &mut World, now: Ps, hop: &Hop) {
        let port = &w.ports[hop.out as usize];
        let record = IntHop {
            ts: now,
            tx_bytes: port.tx_bytes + hop.size,
            qlen: port.queued_bytes(),
            rate_bps: port.rate.bits_per_sec(),
        };
        w.arena.int_mut(hop.pkt).push(record);
    }
}

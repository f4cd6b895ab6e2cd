//! Packets and the arena that owns them.

use crate::rdma::cc::IntStack;
use crate::units::Ps;

/// Index of a packet in the [`PacketArena`].
pub type PktId = u32;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketKind {
    /// Transport data segment.
    Data = 0,
    /// Transport acknowledgement.
    Ack = 1,
    /// Open-loop datagram from a packet generator (no transport).
    Raw = 2,
    /// RDMA negative acknowledgement (go-back-N): `seq` is the expected byte.
    Nack = 3,
    /// RDMA congestion notification packet (DCQCN).
    Cnp = 4,
    /// IEEE 802.1Qbb PFC frame: `payload` is the class, `seq` the pause quanta (0 = XON).
    Pause = 5,
    /// A notification a switch sends to a host through the network
    /// ([`crate::net::switch::send_routed`]): congestion feedback to a
    /// source, say. Routed like data; the NIC hands it to the switch
    /// mechanism that owns notifications.
    Notify = 8,
    /// A link-local control frame of a switch mechanism: `tag` names the
    /// mechanism ([`crate::mech::SwitchMechanism::ID`]) and its frame kind
    /// ([`Packet::control_frame`]), the other fields are the mechanism's.
    Control = 6,
    /// NDP's and EQDS's PULL ([`crate::host::ndp`], [`crate::host::eqds`]):
    /// `payload` is its pull number.
    Pull = 7,
}

impl PacketKind {
    /// A frame for the neighbour only (PAUSE, a mechanism's `Control`):
    /// handled by the switch mechanism that owns it where it arrives.
    #[inline(always)]
    pub fn is_link_control(self) -> bool {
        matches!(self, PacketKind::Pause | PacketKind::Control)
    }
}

/// Flag bits of [`Packet::flags`].
pub mod flags {
    /// ECN-capable transport (ECT(0)).
    pub const ECT: u8 = 1;
    /// Congestion experienced, set by a switch (RFC 3168).
    pub const CE: u8 = 2;
    /// ECN echo, set by a receiver on an ACK.
    pub const ECE: u8 = 4;
    /// A retransmitted data segment.
    pub const RETX: u8 = 8;
    /// A data packet a switch cut to its header ([`crate::mech::trim`]).
    pub const TRIMMED: u8 = 16;
    /// A packet of an NDP flow ([`crate::host::ndp`]).
    pub const NDP: u8 = 32;
    /// A packet of an EQDS flow ([`crate::host::eqds`]).
    pub const EQDS: u8 = 64;
}

/// A packet: 64 bytes, copied by value, referenced by [`PktId`]. Aligned to a
/// cache line, so reading one touches exactly one line.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub struct Packet {
    /// Data: offset of the first payload byte. Ack: cumulative ack (next byte expected).
    pub seq: u64,
    /// Data: the sender's transmit timestamp. Ack: the echoed timestamp of the data that caused it.
    pub ts: Ps,
    /// When the packet entered its current queue (for queueing-delay statistics).
    pub enq_at: Ps,
    /// ECMP hash of the packet's 5-tuple (seeded per flow and direction).
    pub hash: u64,
    /// Flow slot (data/ack) or generator index (raw).
    pub flow: u32,
    /// Unique id of the flow that owns the slot, to recognise stale packets of finished flows.
    pub flow_uid: u32,
    /// Destination host.
    pub dst: u32,
    /// Bytes on the wire (payload plus headers).
    pub size: u32,
    /// Data: payload bytes. Pause: the class. Ack and NACK: the acknowledged
    /// data packet's one-way delay ([`Packet::owd`]).
    pub payload: u32,
    pub kind: PacketKind,
    /// The flow's priority class 0..8 (7 is the highest under strict priority).
    pub class: u8,
    /// The priority the packet travels on over its current link: the class
    /// of the queue it left (another than its own when a mechanism picked
    /// it: `mech::on_classify`), else `class`. PFC charges it at
    /// the next ingress.
    pub prio: u8,
    pub flags: u8,
    /// Local index of the switch port the packet entered its current switch by
    /// (for PFC ingress accounting).
    pub in_port: u16,
    /// Global id of the port the packet is travelling to, set when it is put
    /// on a wire (its arrival is one engine event carrying the packet): at a
    /// switch, the egress port the switch routes it to; at a NIC, and for a
    /// link-local frame, the port at the far end of the link.
    pub to_port: u32,
    /// A measurement's mark, 0 when none: data packets carry their cell of
    /// the OWD-versus-drop curve ([`crate::edge::drop_curve`]); a
    /// [`PacketKind::Control`] frame its mechanism and frame kind.
    pub tag: u16,
}

impl Packet {
    /// A link-local control frame (PAUSE, a mechanism's) of `kind` on priority `class`:
    /// a minimum Ethernet frame, sent at `now`, addressed to no host.
    pub fn link_frame(kind: PacketKind, now: Ps, class: u8, seq: u64, payload: u32) -> Packet {
        Packet {
            seq,
            ts: now,
            enq_at: now,
            hash: 0,
            flow: 0,
            flow_uid: 0,
            dst: u32::MAX,
            size: crate::params::pfc::PFC_FRAME_BYTES,
            payload,
            kind,
            class,
            prio: class,
            flags: 0,
            in_port: 0,
            to_port: 0,
            tag: 0,
        }
    }

    /// A link-local control frame of switch mechanism `mech` (its id), of
    /// its frame kind `kind`, on priority `class`, carrying `seq` and
    /// `payload` (and `flow`, `flow_uid` if it sets them: the mechanism's
    /// to read): a [`PacketKind::Control`] frame, which the registry hands
    /// to the mechanism's [`crate::mech::SwitchMechanism::on_frame`].
    pub fn control_frame(mech: u8, kind: u8, now: Ps, class: u8, seq: u64, payload: u32) -> Packet {
        Packet {
            tag: (kind as u16) << 8 | mech as u16,
            ..Packet::link_frame(PacketKind::Control, now, class, seq, payload)
        }
    }

    /// A [`PacketKind::Control`] frame's mechanism id.
    #[inline]
    pub fn control_mech(&self) -> u8 {
        self.tag as u8
    }

    /// A [`PacketKind::Control`] frame's kind, among its mechanism's frames.
    #[inline]
    pub fn control_kind(&self) -> u8 {
        (self.tag >> 8) as u8
    }

    /// A raw frame (no transport) of `size` bytes from host `src` to `dst`,
    /// generated at `at` as part of burst `burst` of its source
    /// ([`crate::workload::onoff`]), on priority `class`.
    pub fn raw_frame(src: u32, dst: u32, size: u32, burst: u64, at: Ps, class: u8) -> Packet {
        Packet {
            seq: burst,
            ts: at,
            enq_at: at,
            // ECMP: a burst is one flow (its source, destination and number).
            hash: crate::rng::mix64(((src as u64) << 32 | dst as u64) ^ burst.rotate_left(17)),
            // Raw frames carry their source (a congestion point's feedback
            // goes there) and, from the adapter, their limiter's tag.
            flow: src,
            flow_uid: 0,
            dst,
            size,
            payload: size,
            kind: PacketKind::Raw,
            class,
            prio: class,
            flags: 0,
            in_port: 0,
            to_port: 0,
            tag: 0,
        }
    }

    /// An ECN-capable raw packet of `class` and `size` bytes, for tests.
    #[cfg(test)]
    pub(crate) fn test_raw(class: u8, size: u32) -> Packet {
        Packet {
            seq: 0,
            ts: 0,
            enq_at: 0,
            hash: 0,
            flow: 0,
            flow_uid: 0,
            dst: 0,
            size,
            payload: size,
            kind: PacketKind::Raw,
            class,
            prio: class,
            flags: flags::ECT,
            in_port: 0,
            to_port: 0,
            tag: 0,
        }
    }

    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// Ack/NACK: the one-way delay of the data packet it answers, as the two
    /// hosts' clocks read it (picoseconds, saturated to +-2.147 ms; 0 without
    /// `[edge]`). Carried in `payload`, which an ACK does not otherwise use.
    #[inline]
    pub fn owd(&self) -> i64 {
        self.payload as i32 as i64
    }
    /// Stores `owd` (see [`Packet::owd`]).
    #[inline]
    pub fn owd_payload(owd: i32) -> u32 {
        owd as u32
    }
}

/// Owner of every packet in the network; ids are recycled through a free list.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    /// INT stacks, parallel to `slots`; used only when INT is enabled.
    ints: Vec<IntStack>,
    int_enabled: bool,
    free: Vec<PktId>,
    live: usize,
    peak: usize,
}

impl PacketArena {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.hold();
        self.alloc_held(p)
    }
    /// Allocates a packet already counted by [`PacketArena::hold`] (a held
    /// frame being sent): it moves into the arena, the count stays.
    #[inline(always)]
    pub fn alloc_held(&mut self, p: Packet) -> PktId {
        let id = if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        };
        if self.int_enabled {
            // Packet `id` starts with an empty INT stack. Inline (a store
            // when the stack exists), as HPCC runs do it for every packet;
            // growing the stacks is rare and out of line.
            match self.ints.get_mut(id as usize) {
                Some(stack) => stack.n = 0,
                None => self.grow_ints(),
            }
        }
        id
    }
    /// Gives every slot an INT stack, the new ones empty (HPCC runs only).
    #[cold]
    fn grow_ints(&mut self) {
        self.ints.resize(self.slots.len(), IntStack::default());
    }
    /// Keep an INT stack with every packet (HPCC).
    pub fn enable_int(&mut self) {
        self.int_enabled = true;
    }
    pub fn int_enabled(&self) -> bool {
        self.int_enabled
    }
    #[inline]
    pub fn int(&self, id: PktId) -> &IntStack {
        &self.ints[id as usize]
    }
    #[inline]
    pub fn int_mut(&mut self, id: PktId) -> &mut IntStack {
        &mut self.ints[id as usize]
    }
    /// Gives packet `to` the INT records of packet `from` (a receiver
    /// echoing them in an ACK) ([`IntStack::copy_from`]).
    #[inline]
    pub fn copy_int(&mut self, from: PktId, to: PktId) {
        let (f, t) = (from as usize, to as usize);
        assert_ne!(f, t, "copy_int: a packet's INT records onto itself");
        let (src, dst) = if f < t {
            let (a, b) = self.ints.split_at_mut(t);
            (&a[f], &mut b[0])
        } else {
            let (a, b) = self.ints.split_at_mut(f);
            (&b[0], &mut a[t])
        };
        dst.copy_from(src);
    }
    /// Counts one more packet alive that is kept outside the arena (a frame
    /// an adapter's VOQ holds in compact form, [`crate::nic::adapter`]), so
    /// that [`PacketArena::live`] and [`PacketArena::peak`] count every
    /// packet wherever it is kept.
    #[inline]
    pub fn hold(&mut self) {
        self.live += 1;
        if self.live > self.peak {
            self.peak = self.live;
        }
    }
    /// A packet counted by [`PacketArena::hold`] is gone (refused).
    #[inline]
    pub fn unhold(&mut self) {
        self.live -= 1;
    }
    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.unhold();
        self.free.push(id);
    }
    /// Hints the CPU to start loading packet `id` (an upcoming event will read it).
    #[inline(always)]
    pub fn prefetch(&self, id: PktId) {
        super::prefetch(&self.slots, id as usize);
    }
    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
    /// Packets currently alive (queued, on a wire, or in a NIC), held ones
    /// included.
    pub fn live(&self) -> usize {
        self.live
    }
    /// Largest number of packets alive at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
    /// The packets alive now (slots not on the free list), in slot order.
    pub fn live_packets(&self) -> impl Iterator<Item = &Packet> + '_ {
        let mut free = vec![false; self.slots.len()];
        for &id in &self.free {
            free[id as usize] = true;
        }
        self.slots
            .iter()
            .zip(free)
            .filter_map(|(p, is_free)| (!is_free).then_some(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_is_compact() {
        assert!(
            std::mem::size_of::<Packet>() <= 64,
            "{}",
            std::mem::size_of::<Packet>()
        );
    }

    /// An ACK echoes exactly the records its data packet collected, whichever
    /// of the two has the lower id, and a reused slot starts with none.
    #[test]
    fn copy_int_echoes_the_records_held() {
        use crate::rdma::cc::IntHop;
        let hop = |i: u64| IntHop {
            ts: 10 * i,
            tx_bytes: 1000 * i,
            qlen: i,
            rate_bps: 100_000_000_000,
        };
        let mut a = PacketArena::default();
        a.enable_int();
        let ids: Vec<PktId> = (0..4).map(|_| a.alloc(Packet::test_raw(0, 1000))).collect();
        for k in 0..3 {
            a.int_mut(ids[1]).push(hop(k + 1));
        }
        // A stale record beyond `n` in the target must not show through.
        a.int_mut(ids[3]).push(hop(99));
        a.int_mut(ids[3]).push(hop(98));
        a.int_mut(ids[3]).push(hop(97));
        a.int_mut(ids[3]).push(hop(96));
        a.copy_int(ids[1], ids[3]); // lower id onto higher
        assert_eq!(a.int(ids[3]).hops(), a.int(ids[1]).hops());
        assert_eq!(a.int(ids[3]).hops().len(), 3);
        a.copy_int(ids[3], ids[0]); // higher onto lower
        assert_eq!(a.int(ids[0]).hops(), &[hop(1), hop(2), hop(3)]);
        // Five records at most, as on a five-hop path.
        for k in 0..7 {
            a.int_mut(ids[2]).push(hop(k));
        }
        assert_eq!(a.int(ids[2]).hops().len(), 5);
        a.copy_int(ids[2], ids[1]);
        assert_eq!(a.int(ids[1]).hops(), a.int(ids[2]).hops());
        // A freed and reused slot starts empty.
        a.free(ids[1]);
        let again = a.alloc(Packet::test_raw(0, 1000));
        assert_eq!(again, ids[1]);
        assert!(a.int(again).hops().is_empty());
    }
}

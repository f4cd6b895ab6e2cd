//! The switch element: an output-queued switch with a shared buffer.
//!
//! # A packet through a switch
//!
//! [`receive`] takes an arriving packet to its egress port (routed by
//! [`crate::topology::Routes::select`] as it left the previous node:
//! [`link::transmit`]) and walks it through the switch
//! mechanisms' hook sites ([`crate::mech`]): *ingress* (PFC charges a
//! lossless packet to the port and priority it arrived on, and may send
//! PAUSE upstream), then *classify* (a mechanism may pick the class queue
//! it joins). A packet whose egress is idle with nothing queued
//! passes straight through ([`Switch::pass_through`]: the same admission
//! and counters as a queue-and-dequeue, without touching the queue);
//! otherwise the buffer admits it ([`admit`], [`Switch::enqueue`]) or
//! refuses it ([`refuse`]). [`transmit_next`] serves the port's control
//! frames first, then the scheduler's pick ([`Switch::dequeue`]); [`depart`]
//! runs the *depart* hooks (PFC releases the ingress charge and may send
//! XON, a mechanism may track the queue's exits, INT stamps the port's
//! state) and puts the packet on the wire ([`crate::net::link`]).
//!
//! # The buffer and the queues
//!
//! * **Buffer.** All egress queues of a switch share `buffer` bytes. A packet
//!   is admitted to class queue `i` of its egress port when the buffer has
//!   room and the queue is below its threshold: either a static limit, or the
//!   dynamic threshold of Choudhury and Hahne (IEEE/ACM ToN 1998),
//!   `q_i < alpha * (B - Q)`, where `Q` is the switch's total occupancy.
//!   Otherwise the packet is tail-dropped.
//! * **ECN.** Per class: off, a step at `K` (DCTCP, Alizadeh et al. SIGCOMM
//!   2010 §3.1: mark when the instantaneous queue exceeds K), or RED on the
//!   instantaneous queue (`p` rises linearly from 0 at Kmin to Pmax at Kmax,
//!   and is 1 above Kmax), evaluated at enqueue (the queue the packet finds,
//!   excluding itself) or at dequeue (the queue it leaves behind, as the HPCC
//!   simulator does). Only ECN-capable (ECT) packets are marked.
//! * **Scheduling.** Strict priority (class 7 first) or deficit weighted
//!   round robin (Shreedhar and Varghese, SIGCOMM 1995) with a per-class
//!   quantum of `weight x quantum` bytes.

use super::link;
use super::packet::{flags, Packet};
use super::port::{Owner, Port};
use super::{PacketArena, PktId, NUM_CLASSES};
use crate::mech::{self, DropCause, Hop, Verdict};
use crate::rng::Stream;
use crate::sim::world::World;
use crate::units::{Bytes, Ps};

pub use crate::params::switch::{Admission, Ecn, EcnRule, Scheduler, SwitchParams};

/// `Hop::in_local` of a frame the switch originates itself ([`send_routed`]).
pub(crate) const NO_INGRESS: u16 = u16::MAX;

/// Packet `pkt` arrived at switch `switch` on local port `in_local`, routed to
/// egress port `out` as it left the previous node ([`link::transmit`]).
#[inline(always)]
pub(crate) fn receive(w: &mut World, now: Ps, switch: u32, pkt: PktId, in_local: u16, out: u32) {
    let p = w.arena.get(pkt);
    let (class, prio, size) = (p.class, p.prio, p.size as Bytes);
    let mut hop = Hop::new(switch, pkt, in_local, out, class, prio, size);
    if w.sw.hooked & (1 << class | 1 << prio) == 0 {
        // No mechanism acts on this arrival. A path of its own: folded into
        // the one below (`hooked && ...` on each site), the htsim
        // permutation took 4.3 % more instructions (1,330.9 M, not 1,276.4 M).
        hop.at_once = Switch::leaves_at_once(&w.sw, &w.ports[out as usize], class as usize, now);
        forward(w, now, &hop);
        return;
    }
    let classified = mech::classifies(w, class);
    hop.at_once =
        !classified && Switch::leaves_at_once(&w.sw, &w.ports[out as usize], class as usize, now);
    if mech::on_ingress(w, now, &mut hop) == Verdict::Dropped {
        return;
    }
    if classified {
        let hop = mech::on_classify(w, now, hop);
        if admit(w, now, &hop) {
            mech::on_enqueue(w, now, hop);
            kick_port(w, now, switch, out);
        }
        return;
    }
    forward(w, now, &hop);
}

/// A routed packet of `hop` whose queue is its class: straight through an
/// idle port, or into the buffer.
#[inline(always)]
fn forward(w: &mut World, now: Ps, hop: &Hop) {
    let (s, out, class) = (hop.switch, hop.out, hop.class as usize);
    // An ingress hook that charged the packet may have sent a frame: look again.
    let at_once = if hop.charged {
        Switch::leaves_at_once(&w.sw, &w.ports[out as usize], class, now)
    } else {
        hop.at_once
    };
    if hop.unseen || at_once {
        // The common case on a lightly loaded port: straight through.
        let sw = &mut w.switches[s as usize];
        let port = &mut w.ports[out as usize];
        if sw.pass_through(&w.sw, port, hop.size, class) == Enqueue::Queued {
            depart(w, now, s, out, hop.pkt, class, hop.charged);
        } else {
            refuse(w, now, *hop);
        }
        return;
    }
    if admit(w, now, hop) {
        kick_port(w, now, s, out);
    }
}

/// A packet the egress queue refused (admission): the drop hooks undo its
/// ingress charge; it is counted dropped.
#[inline(always)]
fn refuse(w: &mut World, now: Ps, hop: Hop) {
    mech::on_drop(w, now, hop, DropCause::Buffer);
    w.counters.cons.dropped_bytes += hop.size;
    w.arena.free(hop.pkt);
}

/// Queues the packet of `hop` in class queue `hop.queue` of its egress, or
/// drops it (a class a mechanism holds in drop mode, buffer admission).
/// Returns whether it was queued.
#[inline(always)]
fn admit(w: &mut World, now: Ps, hop: &Hop) -> bool {
    let (queue, size) = (hop.queue as usize, hop.size);
    let port = &mut w.ports[hop.out as usize];
    if port.discarding & (1 << queue) != 0 {
        // The dropping PFC watchdog disabled this queue's class.
        let q = &mut port.queues[queue];
        q.counters.drop_pkts += 1;
        q.counters.drop_bytes += size;
        mech::on_drop(w, now, *hop, DropCause::Held);
        w.counters.cons.dropped_bytes += size;
        w.arena.free(hop.pkt);
        return false;
    }
    let sw = &mut w.switches[hop.switch as usize];
    if sw.enqueue(&w.sw, port, &mut w.arena, hop.pkt, queue, now) == Enqueue::Dropped {
        refuse(w, now, *hop);
        return false;
    }
    true
}

/// Port `out` of switch `switch` has a new packet queued: send now or when free.
#[inline(always)]
fn kick_port(w: &mut World, now: Ps, switch: u32, out: u32) {
    if w.ports[out as usize].is_idle(now) {
        transmit_next(w, now, switch, out);
    } else {
        link::want_tx_done(w, out);
    }
}

/// Port `port_id` of switch `switch` is free: its next control frame, else the
/// scheduler's next packet.
pub(crate) fn transmit_next(w: &mut World, now: Ps, switch: u32, port_id: u32) {
    let port = &mut w.ports[port_id as usize];
    if port.busy_until > now {
        link::want_tx_done(w, port_id);
        return;
    }
    if let Some(pkt) = port.pop_ctrl() {
        // PFC frames go first and are never paused (802.1Qbb §36.1.3.2).
        link::transmit(w, now, port_id, pkt);
        let port = &w.ports[port_id as usize];
        if port.has_ctrl() || port.sendable() != 0 {
            link::want_tx_done(w, port_id);
        }
        return;
    }
    let Some((pkt, queue)) = w.switches[switch as usize].dequeue(&w.sw, port, &mut w.arena, now)
    else {
        return;
    };
    depart(w, now, switch, port_id, pkt, queue, true);
}

/// Packet `pkt` left class queue `queue` of switch port `port_id` (`charged`: an
/// ingress hook charged it): the depart hooks, then the wire.
#[inline(always)]
fn depart(
    w: &mut World,
    now: Ps,
    switch: u32,
    port_id: u32,
    pkt: PktId,
    queue: usize,
    charged: bool,
) {
    let k = w.arena.get_mut(pkt);
    let mut hop = Hop::new(
        switch,
        pkt,
        k.in_port,
        port_id,
        k.class,
        k.prio,
        k.size as Bytes,
    );
    hop.queue = queue as u8;
    hop.charged = charged;
    let kind = k.kind;
    // It travels on to the next hop on the priority of the queue it left.
    k.prio = queue as u8;
    mech::on_depart(w, now, &hop, kind);
    link::transmit(w, now, port_id, pkt);
    let port = &w.ports[port_id as usize];
    if port.sendable() != 0 || port.has_ctrl() {
        link::want_tx_done(w, port_id);
    }
}

/// Drops every packet queued in class `class` of switch port `port` (the PFC
/// watchdog's drop mode); each leaves through the depart hooks, flagged
/// flushed. Returns how many.
pub(crate) fn flush_class(w: &mut World, now: Ps, port: u32, class: usize) -> u64 {
    let Owner::Switch(s) = w.ports[port as usize].owner() else {
        unreachable!("only switch ports queue packets");
    };
    let mut n = 0;
    while let Some(pkt) = w.ports[port as usize].queues[class].pkts.pop_front() {
        let k = *w.arena.get(pkt);
        let size = k.size as Bytes;
        let queue = &mut w.ports[port as usize].queues[class];
        queue.track(now);
        queue.bytes -= size;
        queue.counters.drop_pkts += 1;
        queue.counters.drop_bytes += size;
        w.switches[s as usize].used -= size;
        let mut hop = Hop::new(s, pkt, k.in_port, port, k.class, k.prio, size);
        hop.queue = class as u8;
        hop.charged = true;
        hop.flushed = true;
        mech::on_depart(w, now, &hop, k.kind);
        w.counters.cons.dropped_bytes += size;
        w.arena.free(pkt);
        n += 1;
    }
    w.ports[port as usize].nonempty &= !(1 << class);
    n
}

/// Queues a link-local control frame (PAUSE, a mechanism's) on port `port`'s control
/// FIFO, ahead of every class queue. The caller kicks the port
/// ([`link::kick`]) when its own bookkeeping is done.
pub(crate) fn queue_link_frame(w: &mut World, port: u32, frame: Packet) -> PktId {
    w.counters.cons.sent_bytes += frame.size as u64;
    let id = w.arena.alloc(frame);
    w.ports[port as usize].push_ctrl(id);
    id
}

/// Queues a PAUSE frame for `class` on port `port` (any port: a switch's or a
/// NIC's) carrying `quanta`: a pause (`pause`, counted as an XOFF) or a
/// resume (quanta 0, an XON). The caller kicks the port.
pub(crate) fn queue_pause(w: &mut World, now: Ps, port: u32, class: u8, pause: bool, quanta: u64) {
    let frame = Packet::link_frame(super::PacketKind::Pause, now, class, quanta, class as u32);
    queue_link_frame(w, port, frame);
    let pfc = &mut w.mechs.pfc.ports[port as usize];
    if pause {
        pfc.xoff_tx[class as usize] += 1;
    } else {
        pfc.xon_tx[class as usize] += 1;
    }
}

/// Switch `switch` sends frame `pkt` (built by a mechanism, addressed to a host)
/// through the network, routed like any packet from this switch on, but
/// charged to no ingress (`Hop::in_local` is [`NO_INGRESS`]): a congestion
/// notification to a source, say.
#[cfg_attr(not(test), allow(dead_code))] // the congestion-notification mechanisms (issue 19) use it
pub(crate) fn send_routed(w: &mut World, now: Ps, switch: u32, pkt: PktId) {
    let p = w.arena.get(pkt);
    let (dst, hash, class, size) = (p.dst, p.hash, p.class, p.size as Bytes);
    w.counters.cons.sent_bytes += size;
    let local = w.routes.select(switch, dst, hash);
    let out = w.switches[switch as usize].port(local);
    let mut hop = Hop::new(switch, pkt, NO_INGRESS, out, class, class, size);
    hop.at_once = Switch::leaves_at_once(&w.sw, &w.ports[out as usize], class as usize, now);
    forward(w, now, &hop);
}

/// A switch: its shared-buffer occupancy and its marking randomness.
/// Its ports are ordinary [`Port`]s owned by the simulation.
pub struct Switch {
    pub id: u32,
    /// Bytes currently buffered (all ports, all classes).
    pub used: Bytes,
    pub peak_used: Bytes,
    /// Global ids of this switch's ports: a node's ports are numbered
    /// contiguously, so local port `l` is `ports.start + l` (no table read on
    /// the hot path).
    pub ports: std::ops::Range<u32>,
    rng: Stream,
    /// The switch mechanisms' state beside the buffer's occupancy, one field
    /// per mechanism ([`crate::mech::SwitchMechanism::PerSwitch`]: PFC's
    /// ingress accounting, which a lossless hop reads with this line).
    pub mech: crate::mech::SwitchStates,
}

/// Outcome of offering a packet to an egress queue.
#[derive(Debug, PartialEq, Eq)]
pub enum Enqueue {
    Queued,
    Dropped,
}

impl Switch {
    pub fn new(id: u32, ports: std::ops::Range<u32>, seed: u64) -> Switch {
        Switch {
            id,
            used: 0,
            peak_used: 0,
            ports,
            rng: Stream::new(seed, "switch-ecn", id as u64),
            mech: Default::default(),
        }
    }

    /// Global id of local port `local`.
    #[inline]
    pub fn port(&self, local: u16) -> u32 {
        debug_assert!((local as usize) < self.ports.len());
        self.ports.start + local as u32
    }

    #[inline]
    fn mark(&mut self, ecn: &Ecn, q: Bytes) -> bool {
        let p = ecn.probability(q);
        p >= 1.0 || (p > 0.0 && self.rng.chance(p))
    }

    /// Admission control and enqueue-time marking for packet `id` on class
    /// queue `class` of `port` (the packet's class, or a congested-flow queue).
    pub fn enqueue(
        &mut self,
        params: &SwitchParams,
        port: &mut Port,
        arena: &mut PacketArena,
        id: PktId,
        class: usize,
        now: Ps,
    ) -> Enqueue {
        let pkt = arena.get_mut(id);
        let size = pkt.size as Bytes;
        let q = port.queues[class].bytes;
        if !self.admits(params, port, class, size) {
            return Enqueue::Dropped;
        }
        // Below `ecn_from` no rule can mark: the rule itself is not read.
        if q > port.queues[class].ecn_from && port.ecn_at_dequeue & (1 << class) == 0 {
            let ecn = *port.ecn(class);
            if pkt.flags & flags::ECT != 0 && pkt.flags & flags::CE == 0 && self.mark(&ecn, q) {
                pkt.flags |= flags::CE;
                port.queues[class].counters.ecn_marks += 1;
            }
        }
        pkt.enq_at = now;
        let queue = &mut port.queues[class];
        queue.track(now);
        queue.pkts.push_back(id);
        queue.bytes += size;
        if queue.bytes > queue.max_bytes {
            queue.max_bytes = queue.bytes;
        }
        port.nonempty |= 1 << class;
        self.used += size;
        if self.used > self.peak_used {
            self.peak_used = self.used;
        }
        Enqueue::Queued
    }

    /// The admission rule (module docs) for a packet of `size` bytes in class
    /// queue `class`; counts the drop when it says no.
    #[inline(always)]
    fn admits(&self, params: &SwitchParams, port: &mut Port, class: usize, size: Bytes) -> bool {
        let ok = self.fits(params, port, class, size);
        if !ok {
            let cnt = &mut port.queues[class].counters;
            cnt.drop_pkts += 1;
            cnt.drop_bytes += size;
        }
        ok
    }

    /// Whether the admission rule (module docs) takes a packet of `size`
    /// bytes into class queue `class` of `port` now (counting nothing).
    #[inline(always)]
    pub(crate) fn fits(
        &self,
        params: &SwitchParams,
        port: &Port,
        class: usize,
        size: Bytes,
    ) -> bool {
        if params.lossless & (1 << class) != 0 {
            // No egress threshold: PFC at the ingress keeps the queue bounded.
            self.used + size <= params.buffer
        } else {
            // Lossy classes may not use the PFC headroom that is reserved for
            // the lossless ones (it must be free when a pause is in flight).
            // Headroom bytes in use are charged to that reservation, not to the pool.
            let (reserved, reserved_used) = crate::mech::reserved(&self.mech);
            let usable = params.buffer.saturating_sub(reserved);
            let used = self.used - reserved_used;
            let q = port.queues[class].bytes;
            used + size <= usable
                && match params.admission[class] {
                    Admission::Dynamic { alpha } => {
                        // Byte counts are far below 2^63, where converting
                        // through i64 gives the same f64 in one instruction.
                        (q as i64 as f64) < alpha * usable.saturating_sub(used) as i64 as f64
                    }
                    Admission::Static { limit } => q + size <= limit,
                }
        }
    }

    /// Whether a packet of class `class` arriving now at `port` would leave at
    /// once: the transmitter is idle, nothing is queued or waiting, `class` is
    /// not paused, and the scheduler is strict priority (so the choice
    /// cannot depend on scheduler state). Then [`Switch::pass_through`]
    /// stands for an enqueue followed at once by a dequeue.
    #[inline(always)]
    pub fn leaves_at_once(params: &SwitchParams, port: &Port, class: usize, now: Ps) -> bool {
        port.nonempty == 0
            && port.is_idle(now)
            && !port.has_ctrl()
            && (port.paused | port.held | port.discarding) & (1 << class) == 0
            && params.scheduler == Scheduler::StrictPriority
    }

    /// [`Switch::enqueue`] then [`Switch::dequeue`] of packet `id` in class
    /// `class` of `port`, when [`Switch::leaves_at_once`] holds: the same
    /// admission, counters and peaks, without touching the queue itself (the
    /// queue is empty before and after, so no ECN rule can mark and the
    /// packet waits zero time). A test checks it against the two calls.
    #[inline(always)]
    pub fn pass_through(
        &mut self,
        params: &SwitchParams,
        port: &mut Port,
        size: Bytes,
        class: usize,
    ) -> Enqueue {
        debug_assert!(port.nonempty == 0 && port.queues[class].bytes == 0);
        if !self.admits(params, port, class, size) {
            return Enqueue::Dropped;
        }
        let queue = &mut port.queues[class];
        if size > queue.max_bytes {
            queue.max_bytes = size;
        }
        queue.counters.deq_pkts += 1;
        queue.counters.deq_bytes += size;
        if self.used + size > self.peak_used {
            self.peak_used = self.used + size;
        }
        Enqueue::Queued
    }

    /// Removes the next packet to transmit on `port` (scheduler), with
    /// dequeue-time marking; returns it and the class queue it left.
    pub fn dequeue(
        &mut self,
        params: &SwitchParams,
        port: &mut Port,
        arena: &mut PacketArena,
        now: Ps,
    ) -> Option<(PktId, usize)> {
        let avail = port.sendable();
        if avail == 0 {
            return None;
        }
        let c = match params.scheduler {
            Scheduler::StrictPriority => 7 - avail.leading_zeros() as usize,
            Scheduler::Dwrr => dwrr_pick(params, port, arena),
        };
        let queue = &mut port.queues[c];
        let id = queue.pkts.pop_front().expect("non-empty class queue");
        if let Some(&next) = queue.pkts.front() {
            // It leaves one transmission time from now: start loading it.
            arena.prefetch(next);
        }
        let pkt = arena.get_mut(id);
        let size = pkt.size as Bytes;
        queue.track(now);
        queue.bytes -= size;
        queue.counters.deq_pkts += 1;
        queue.counters.deq_bytes += size;
        queue.counters.qdelay_sum += now - pkt.enq_at;
        if queue.pkts.is_empty() {
            port.nonempty &= !(1 << c);
        }
        self.used -= size;
        let q = queue.bytes;
        if q > queue.ecn_from && port.ecn_at_dequeue & (1 << c) != 0 {
            let ecn = *port.ecn(c);
            let pkt = arena.get_mut(id);
            if pkt.flags & flags::ECT != 0 && pkt.flags & flags::CE == 0 && self.mark(&ecn, q) {
                pkt.flags |= flags::CE;
                port.queues[c].counters.ecn_marks += 1;
            }
        }
        Some((id, c))
    }
}

/// Deficit weighted round robin: returns the class whose head packet goes next
/// and charges it to that class's deficit. `dwrr_next` is the class being
/// visited; its quantum is added once per visit (tracked by the top bit).
fn dwrr_pick(params: &SwitchParams, port: &mut Port, arena: &PacketArena) -> usize {
    const FRESH: u8 = 0x80;
    loop {
        let c = (port.dwrr_next & 0x7) as usize;
        let visited = port.dwrr_next & FRESH != 0;
        if (port.paused | port.held) & (1 << c) != 0 {
            // Paused by PFC (or held by a mechanism, `Port::held`):
            // skip without a quantum, keep the deficit (docs/mechanisms.md, Scheduling).
            port.dwrr_next = ((c + 1) % NUM_CLASSES) as u8;
            continue;
        }
        let q = &mut port.queues[c];
        match q.pkts.front() {
            None => {
                q.deficit = 0;
                port.dwrr_next = ((c + 1) % NUM_CLASSES) as u8;
            }
            Some(&head) => {
                let size = arena.get(head).size as i64;
                if q.deficit >= size {
                    q.deficit -= size;
                    return c;
                }
                if !visited {
                    q.deficit += params.quantum[c];
                    port.dwrr_next |= FRESH;
                } else {
                    port.dwrr_next = ((c + 1) % NUM_CLASSES) as u8;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Packet;
    use crate::units::Rate;

    fn pkt(class: u8, size: u32) -> Packet {
        Packet::test_raw(class, size)
    }

    /// Enqueues packet `id` in its own class's queue.
    fn enq(
        sw: &mut Switch,
        params: &SwitchParams,
        p: &mut Port,
        arena: &mut PacketArena,
        id: PktId,
    ) -> Enqueue {
        let c = arena.get(id).class as usize;
        sw.enqueue(params, p, arena, id, c, 0)
    }

    fn port() -> Port {
        Port::new(0, 1, Rate::gbps(10), 0)
    }

    /// `pass_through` is exactly `enqueue` then `dequeue` on an idle port:
    /// same admission, drops, marks, counters and peaks, over random
    /// classes, sizes, buffer fill, admission rules and ECN rules (including
    /// a threshold of 0, which must not mark an empty queue).
    #[test]
    fn pass_through_equals_enqueue_then_dequeue() {
        let mut rng = Stream::new(7, "pass-through", 0);
        for case in 0..400 {
            let c = rng.below(8) as usize;
            let size = 64 + rng.below(9000);
            let mut params = SwitchParams {
                buffer: 20_000 + rng.below(20_000),
                lossless: rng.below(256) as u8,
                ..Default::default()
            };
            params.admission[c] = if rng.below(2) == 0 {
                Admission::Static {
                    limit: rng.below(12_000),
                }
            } else {
                Admission::Dynamic {
                    alpha: rng.uniform() * 2.0,
                }
            };
            let used = rng.below(30_000);
            let hdrm = rng.below(used + 1);
            let ecn = Ecn::step(rng.below(2) * 1500, rng.below(2) == 0);
            let mk = || {
                let mut sw = Switch::new(0, 0..1, 1);
                sw.used = used;
                sw.peak_used = used;
                sw.mech.pfc.total_headroom = 5_000;
                sw.mech.pfc.hdrm_used = hdrm;
                let mut p = port();
                p.set_ecn(c, ecn);
                p.queues[c].max_bytes = 3000;
                (sw, p, PacketArena::default())
            };
            let (mut sw_a, mut p_a, mut ar_a) = mk();
            let id = ar_a.alloc(pkt(c as u8, size as u32));
            let a = sw_a.enqueue(&params, &mut p_a, &mut ar_a, id, c, 5);
            if a == Enqueue::Queued {
                assert_eq!(sw_a.dequeue(&params, &mut p_a, &mut ar_a, 5), Some((id, c)));
            }
            let (mut sw_b, mut p_b, _) = mk();
            assert!(Switch::leaves_at_once(&params, &p_b, c, 5));
            let b = sw_b.pass_through(&params, &mut p_b, size, c);
            assert_eq!(a, b, "case {case}");
            assert!(
                !ar_a.get(id).has(flags::CE),
                "case {case}: an empty queue marked"
            );
            assert_eq!(
                (sw_a.used, sw_a.peak_used),
                (sw_b.used, sw_b.peak_used),
                "case {case}"
            );
            assert_eq!(p_a.nonempty, p_b.nonempty);
            for q in 0..NUM_CLASSES {
                let (x, y) = (&p_a.queues[q], &p_b.queues[q]);
                assert_eq!(
                    (x.bytes, x.max_bytes),
                    (y.bytes, y.max_bytes),
                    "case {case}"
                );
                assert_eq!(
                    format!("{:?}", x.counters),
                    format!("{:?}", y.counters),
                    "case {case}"
                );
            }
        }
    }

    #[test]
    fn dynamic_threshold_reaches_choudhury_hahne_steady_state() {
        // V11: one saturated queue, alpha = 1: q = alpha*B/(1+alpha) = B/2.
        let params = SwitchParams {
            buffer: 1_200_000,
            ..Default::default()
        };
        let mut sw = Switch::new(0, 0..1, 1);
        let mut p = port();
        let mut arena = PacketArena::default();
        let mut accepted = 0u64;
        for _ in 0..2000 {
            let id = arena.alloc(pkt(0, 1000));
            if enq(&mut sw, &params, &mut p, &mut arena, id) == Enqueue::Queued {
                accepted += 1000;
            }
        }
        // q < B - q  =>  q stops at the first multiple of 1000 at or above B/2.
        assert_eq!(accepted, 600_000);
    }

    #[test]
    fn step_marking_at_enqueue_counts_the_queue_ahead() {
        let params = SwitchParams::default();
        let mut sw = Switch::new(0, 0..1, 1);
        let mut p = port();
        p.set_ecn(0, Ecn::step(3000, false));
        let mut arena = PacketArena::default();
        let mut marked = vec![];
        for _ in 0..6 {
            let id = arena.alloc(pkt(0, 1000));
            enq(&mut sw, &params, &mut p, &mut arena, id);
            marked.push(arena.get(id).has(flags::CE));
        }
        // queue ahead: 0,1000,2000,3000,4000,5000 -> marked when > 3000
        assert_eq!(marked, vec![false, false, false, false, true, true]);
    }

    #[test]
    fn ecn_rule_by_rate_picks_the_level_at_or_below() {
        let r = EcnRule::ByRate(vec![
            (25_000_000_000, Ecn::step(1, false)),
            (100_000_000_000, Ecn::step(2, false)),
        ]);
        assert_eq!(r.at_rate(100_000_000_000), Ecn::step(2, false));
        assert_eq!(r.at_rate(400_000_000_000), Ecn::step(2, false));
        assert_eq!(r.at_rate(40_000_000_000), Ecn::step(1, false));
        assert_eq!(r.at_rate(10_000_000_000), Ecn::step(1, false));
    }

    #[test]
    fn paused_class_is_skipped() {
        let params = SwitchParams::default();
        let mut sw = Switch::new(0, 0..1, 1);
        let mut p = port();
        let mut arena = PacketArena::default();
        for c in [3u8, 1] {
            let id = arena.alloc(pkt(c, 100));
            enq(&mut sw, &params, &mut p, &mut arena, id);
        }
        p.paused = 1 << 3;
        let id = sw.dequeue(&params, &mut p, &mut arena, 0).unwrap().0;
        assert_eq!(arena.get(id).class, 1);
        assert_eq!(sw.dequeue(&params, &mut p, &mut arena, 0), None);
        p.paused = 0;
        let id = sw.dequeue(&params, &mut p, &mut arena, 0).unwrap().0;
        assert_eq!(arena.get(id).class, 3);
    }

    #[test]
    fn strict_priority_serves_high_class_first() {
        let params = SwitchParams::default();
        let mut sw = Switch::new(0, 0..1, 1);
        let mut p = port();
        let mut arena = PacketArena::default();
        for c in [0u8, 3, 7, 3] {
            let id = arena.alloc(pkt(c, 100));
            enq(&mut sw, &params, &mut p, &mut arena, id);
        }
        let mut order = vec![];
        while let Some((id, _)) = sw.dequeue(&params, &mut p, &mut arena, 0) {
            order.push(arena.get(id).class);
        }
        assert_eq!(order, vec![7, 3, 3, 0]);
        assert_eq!(sw.used, 0);
    }

    #[test]
    fn dwrr_shares_bytes_by_weight() {
        let mut params = SwitchParams {
            scheduler: Scheduler::Dwrr,
            ..Default::default()
        };
        params.quantum[1] = 1500;
        params.quantum[2] = 4500; // weight 3
        let mut sw = Switch::new(0, 0..1, 1);
        let mut p = port();
        let mut arena = PacketArena::default();
        for _ in 0..400 {
            for c in [1u8, 2] {
                let id = arena.alloc(pkt(c, 1500));
                enq(&mut sw, &params, &mut p, &mut arena, id);
            }
        }
        let mut sent = [0u32; 8];
        for _ in 0..400 {
            let id = sw.dequeue(&params, &mut p, &mut arena, 0).unwrap().0;
            sent[arena.get(id).class as usize] += 1;
        }
        // Exactly 1:3 per round of 4 packets while both classes are backlogged.
        assert_eq!((sent[1], sent[2]), (100, 300));
    }

    #[test]
    fn red_probability_ramp() {
        let e = Ecn::Red {
            kmin: 100,
            kmax: 300,
            pmax: 0.2,
            at_dequeue: false,
        };
        assert_eq!(e.probability(100), 0.0);
        assert!((e.probability(200) - 0.1).abs() < 1e-12);
        assert!((e.probability(300) - 0.2).abs() < 1e-12);
        assert_eq!(e.probability(301), 1.0);
    }
}

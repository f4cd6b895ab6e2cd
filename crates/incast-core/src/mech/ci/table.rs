//! Congestion Isolation (IEEE 802.1Qcz-2023; the 802.1 DCB talk by Congdon,
//! Yu and Shen, "Congestion Management – Congestion Isolation", Sept. 2017;
//! docs/congestion-isolation.md).
//!
//! PFC pauses a whole priority, so a flow that merely shares an upstream
//! queue with an incast stops with it (head-of-line blocking). CI moves the
//! flows that *cause* congestion into a separate, lower-priority queue, and
//! tells the upstream neighbour to do the same, so that PFC ends up pausing
//! only that queue.
//!
//! # The pieces, at one CI-capable egress port
//!
//! * **Queues.** Each CI class `c` (a lossless priority, the *non-congested
//!   queue*, NCQ) has one or more *congested-flow queues* (CFQs): other
//!   classes with their own PFC priority, scheduled below `c` (talk, slide
//!   "Congestion Isolation": "at least one of 8 priority queues, lower
//!   scheduling priority than the non-congested flow queue"; with several,
//!   a 5-tuple hash picks one: [`CiConfig::cfq_for`]).
//! * **Detection** ([`Detect`]). While the NCQ holds more than `threshold`
//!   bytes, the flow of each arriving packet (`arriving`), a flow sampled once
//!   per `every` bytes (`sampled`, QCN-style), or the `k` flows with the most
//!   bytes in the NCQ (`top`) is *congesting*: it enters this port's
//!   congested-flow table ([`Entry`]: flow key, ingress port, state, age).
//! * **Order** ([`OrderMode`]). A flow's packets already in the NCQ must
//!   leave before its packets in the CFQ. `marker` is the talk's mechanism
//!   (slides "Handling the potential out-of-order problem"): isolating puts a
//!   marker at the tail of the NCQ and a paired one at the tail of the CFQ;
//!   when the CFQ's marker reaches its head the CFQ is blocked until the NCQ's
//!   marker has left. Markers cost nothing here: a marker is a position in
//!   the queue's packet count ([`CiPort::enq`], [`CiPort::exits`]).
//!   `counter` is the finer variant (docs/congestion-isolation.md): the count of the flow's
//!   packets still in the NCQ; the CFQ is blocked only while its head packet
//!   belongs to a flow whose count is not zero. `none` is an ablation that
//!   reorders (tests use it to show the checks can fail).
//! * **CIP.** Isolating sends a Congestion Isolation Packet out of the port
//!   the flow arrived on, carrying the flow key. The upstream switch isolates
//!   the flow at its egress towards us (`propagate = immediate`: and tells its
//!   own upstream at once; `congested`: only when its CFQ fills), up to the
//!   sending NIC, which then sends the flow on the CFQ's priority. CIPs can be
//!   lost ([`CipConfig::loss`]); [`Reliability`] picks the talk's remedy.
//! * **Priorities on the wire.** A packet leaves on the priority of the
//!   queue it left, and a switch charges it to the ingress (port, priority)
//!   it arrived on. So once the upstream isolates a flow, our PFC for the
//!   flow's bytes pauses the upstream's CFQ, not its NCQ: the victim flows
//!   keep going. Each switch picks the egress queue from its own table and
//!   the flow's base class (`Packet::class`); the arrival priority is
//!   `Packet::prio`.
//! * **De-isolation.** An entry is removed when its flow has not been seen
//!   for `age` (packets and CIPs refresh it), or, with `release_on_drain`,
//!   when the CFQ it was detected on empties; in both cases only when the
//!   CFQ holds none of the flow's packets, so the flow's next packets, which
//!   go to the higher-priority NCQ, cannot overtake them (the mirror of the
//!   marker). Upstream entries age out by themselves: no "un-isolate" CIP.

use crate::config_types::{SizeValue, TimeValue};
use crate::engine::LazyTimer;
use crate::net::port::ClassQueue;
use crate::net::{PacketArena, NUM_CLASSES};
use crate::units::{Bytes, Ps};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One CI class and its congested-flow queues.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CiQueues {
    /// The non-congested queue: a lossless class.
    pub class: u8,
    /// Its congested-flow queues (classes below `class` under strict
    /// priority, lossless when `class` is). With several, the flow's 5-tuple
    /// hash picks one.
    pub cfq: Vec<u8>,
}

/// How congesting flows are identified while the NCQ is above `threshold`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Detect {
    /// The flow of every arriving packet.
    Arriving,
    /// The flow of one arriving packet per `every` bytes enqueued (QCN-style
    /// sampling: a flow is picked with probability proportional to its bytes).
    Sampled { every: SizeValue },
    /// Once per `every` bytes enqueued: the `k` flows with the most bytes in the NCQ.
    Top { k: u32, every: SizeValue },
}

/// How a flow's order is kept when it moves from the NCQ to a CFQ.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OrderMode {
    /// The talk's paired markers: the CFQ's marker waits at its head until
    /// the NCQ's marker (everything queued before the isolation) has left.
    #[default]
    Marker,
    /// Per flow: the count of its packets still in the NCQ; the CFQ head
    /// waits only if it belongs to a flow with a non-zero count.
    Counter,
    /// No order preservation (an ablation: flows are reordered).
    None,
}

/// When a switch that isolated a flow because of a CIP tells its own upstream.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Propagate {
    /// At once (the flow is isolated hop by hop up to the sending NIC).
    #[default]
    Immediate,
    /// Only when its own CFQ holds more than `threshold` bytes on a packet of the flow.
    Congested,
}

/// The talk's options for reliable CIP delivery (slide "Options for reliable
/// CIP transmission").
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Reliability {
    /// One CIP per isolation.
    Once,
    /// `copies` CIPs in succession.
    Repeat,
    /// Resend every `interval` until the upstream acknowledges (a CIP-ACK frame).
    Ack,
    /// Resend every `interval` until a packet of the flow arrives on a
    /// congested-flow priority: the upstream has isolated it.
    #[default]
    Marked,
}

/// `[switch.ci.cip]`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CipConfig {
    pub reliability: Reliability,
    /// `repeat`: CIPs sent per isolation.
    pub copies: u32,
    /// `ack` and `marked`: resend period.
    pub interval: TimeValue,
    /// `ack` and `marked`: give up after this many resends.
    pub max_resends: u32,
    /// Probability that a CIP (or CIP-ACK) is lost on a link, in [0, 1).
    pub loss: f64,
}

impl Default for CipConfig {
    fn default() -> Self {
        CipConfig {
            reliability: Reliability::Marked,
            copies: 3,
            interval: TimeValue(10 * crate::units::US),
            max_resends: 10,
            loss: 0.0,
        }
    }
}

/// `[switch.ci]`: congestion isolation on every switch port.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CiConfig {
    /// The CI classes and their congested-flow queues.
    pub queues: Vec<CiQueues>,
    /// NCQ length (bytes) above which flows are identified as congesting.
    /// [C]: not in our sources; 100 KB is 8 us at 100G, below the usual PFC
    /// XOFF and at or below the ECN marking range of DCQCN at 100G.
    pub threshold: SizeValue,
    pub detect: Detect,
    pub order: OrderMode,
    /// An entry is removed after its flow has not been seen for this long. [C]
    pub age: TimeValue,
    /// Also remove the entries detected at a port when their CFQ there empties.
    pub release_on_drain: bool,
    pub propagate: Propagate,
    /// Sending NICs isolate a flow (send it on the CFQ's priority) on a CIP.
    pub nic: bool,
    /// Congested-flow table capacity per port; isolations beyond it are refused (counted).
    pub max_flows: u32,
    pub cip: CipConfig,
}

impl Default for CiConfig {
    fn default() -> Self {
        CiConfig {
            queues: vec![CiQueues {
                class: 3,
                cfq: vec![2],
            }],
            threshold: SizeValue(100_000),
            detect: Detect::Arriving,
            order: OrderMode::Marker,
            age: TimeValue(500 * crate::units::US),
            release_on_drain: false,
            propagate: Propagate::Immediate,
            nic: true,
            max_flows: 1024,
            cip: CipConfig::default(),
        }
    }
}

impl CiConfig {
    /// Bit `c` set for each CI (non-congested) class.
    pub fn base_mask(&self) -> u8 {
        self.queues.iter().fold(0, |m, q| m | 1 << q.class)
    }
    /// Bit `c` set for each congested-flow queue.
    pub fn cfq_mask(&self) -> u8 {
        self.queues
            .iter()
            .flat_map(|q| &q.cfq)
            .fold(0, |m, c| m | 1 << c)
    }
    /// The CFQ of flow `key` in CI class `class` (the same at every switch and NIC).
    pub fn cfq_for(&self, class: u8, key: u64) -> u8 {
        let q = self
            .queues
            .iter()
            .find(|q| q.class == class)
            .expect("a CI class");
        // The high bits: the low ones pick the ECMP next hop.
        q.cfq[((key >> 40) % q.cfq.len() as u64) as usize]
    }
}

/// "Unknown ingress port": an entry installed by a CIP before a packet of the flow arrived.
pub const NO_PORT: u16 = u16::MAX;

/// One congested-flow table entry (the standard's "CI Stream Table").
#[derive(Clone, Debug)]
pub struct Entry {
    /// The flow's 5-tuple hash.
    pub key: u64,
    /// Its CI class and the CFQ it is isolated in.
    pub base: u8,
    pub cfq: u8,
    /// Local port the flow arrives on (where CIPs go), or [`NO_PORT`].
    pub ingress: u16,
    pub last_seen: Ps,
    /// The flow's packets in the CFQ (de-isolation waits for zero).
    pub in_cfq: u32,
    /// `counter` order: the flow's packets still in the NCQ from before isolation.
    pub pending: u32,
    /// Detected here (else installed by a CIP from downstream).
    pub local: bool,
    /// A CIP for this entry went upstream.
    pub cip_sent: bool,
    /// The upstream has confirmed (CIP-ACK or a packet on a CFQ priority).
    pub confirmed: bool,
    pub next_resend: Ps,
    pub resends: u32,
    /// Simulator bookkeeping (metrics only): the flow's slot and uid.
    pub flow: u32,
    pub flow_uid: u32,
}

/// A paired marker: the CFQ's at packet position `cfq_pos`, released when the
/// NCQ `ncq` has seen `ncq_pos` packets leave.
#[derive(Clone, Copy, Debug)]
struct Marker {
    ncq: u8,
    ncq_pos: u64,
    cfq_pos: u64,
}

/// Counters of one port.
#[derive(Clone, Copy, Debug, Default)]
pub struct CiPortStats {
    /// Isolations decided here (detection).
    pub detected: u64,
    /// Isolations installed by a CIP from downstream.
    pub by_cip: u64,
    pub deisolated: u64,
    /// Isolations refused because the table was full.
    pub table_full: u64,
    pub peak_entries: u64,
    /// Times a CFQ head was found blocked by the order rule.
    pub blocked: u64,
}

/// CI state of one switch port (boxed in [`crate::net::Port`]).
#[derive(Debug, Default)]
pub struct CiPort {
    /// Flow keys of `entries` (scanned on lookups; kept apart for the cache).
    keys: Vec<u64>,
    pub entries: Vec<Entry>,
    markers: [VecDeque<Marker>; NUM_CLASSES],
    /// Packets that entered / left each class queue (marker positions).
    pub enq: [u64; NUM_CLASSES],
    pub exits: [u64; NUM_CLASSES],
    /// Entries with `pending > 0` (`counter` order).
    pending_flows: u32,
    /// Bytes enqueued in each NCQ above threshold since the last sample.
    since_sample: [Bytes; NUM_CLASSES],
    /// CIP resends and aging sweeps of this port.
    pub timer: LazyTimer,
    pub stats: CiPortStats,
}

impl CiPort {
    #[inline]
    pub fn find(&self, key: u64) -> Option<usize> {
        self.keys.iter().position(|&k| k == key)
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether entry `i` may be removed at `now` by aging: not seen for
    /// `age`, and (unless order is off) none of its packets in the CFQ.
    pub fn aged(&self, i: usize, now: Ps, age: Ps, order: OrderMode) -> bool {
        let e = &self.entries[i];
        now.saturating_sub(e.last_seen) >= age && (e.in_cfq == 0 || order == OrderMode::None)
    }

    /// Detection for a packet of `key` that is about to join NCQ `class`,
    /// which holds `q` bytes: whether its flow is congesting now. `size` is
    /// the packet's size (for sampling).
    pub fn detect(&mut self, cfg: &CiConfig, class: u8, q: Bytes, size: Bytes) -> bool {
        if q + size <= cfg.threshold.0 {
            return false;
        }
        match cfg.detect {
            Detect::Arriving => true,
            Detect::Sampled { every } | Detect::Top { every, .. } => {
                let s = &mut self.since_sample[class as usize];
                *s += size;
                if *s >= every.0 {
                    *s = 0;
                    true
                } else {
                    false
                }
            }
        }
    }

    /// `top` detection: the `k` flows with the most bytes in NCQ `class`
    /// (ties: the earlier in the queue), with the ingress port and flow
    /// bookkeeping of one of their packets.
    pub fn top_flows(
        queues: &[ClassQueue; NUM_CLASSES],
        arena: &PacketArena,
        class: u8,
        k: usize,
    ) -> Vec<(u64, u16, u32, u32)> {
        let mut seen: Vec<(u64, Bytes, usize, u16, u32, u32)> = vec![];
        for (pos, &id) in queues[class as usize].pkts.iter().enumerate() {
            let p = arena.get(id);
            match seen.iter_mut().find(|s| s.0 == p.hash) {
                Some(s) => s.1 += p.size as Bytes,
                None => seen.push((p.hash, p.size as Bytes, pos, p.in_port, p.flow, p.flow_uid)),
            }
        }
        seen.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
        seen.truncate(k);
        seen.into_iter()
            .map(|(key, _, _, port, flow, uid)| (key, port, flow, uid))
            .collect()
    }

    /// Isolates flow `key` of CI class `base` into `cfq`, with the order
    /// state that keeps its queued packets ahead of its isolated ones.
    /// Returns the entry's index, or `None` when the table is full.
    #[allow(clippy::too_many_arguments)]
    pub fn isolate(
        &mut self,
        cfg: &CiConfig,
        queues: &[ClassQueue; NUM_CLASSES],
        arena: &PacketArena,
        key: u64,
        base: u8,
        ingress: u16,
        now: Ps,
        local: bool,
        flow: (u32, u32),
    ) -> Option<usize> {
        if self.keys.len() >= cfg.max_flows as usize {
            self.stats.table_full += 1;
            return None;
        }
        let cfq = cfg.cfq_for(base, key);
        let (b, c) = (base as usize, cfq as usize);
        let mut pending = 0;
        match cfg.order {
            OrderMode::Marker => {
                // The NCQ's marker goes behind everything queued there now;
                // the CFQ's behind everything queued there now.
                if self.enq[b] > self.exits[b] {
                    self.markers[c].push_back(Marker {
                        ncq: base,
                        ncq_pos: self.enq[b],
                        cfq_pos: self.enq[c],
                    });
                }
            }
            OrderMode::Counter => {
                pending = queues[b]
                    .pkts
                    .iter()
                    .filter(|&&id| arena.get(id).hash == key)
                    .count() as u32;
                if pending > 0 {
                    self.pending_flows += 1;
                }
            }
            OrderMode::None => {}
        }
        self.keys.push(key);
        self.entries.push(Entry {
            key,
            base,
            cfq,
            ingress,
            last_seen: now,
            in_cfq: 0,
            pending,
            local,
            cip_sent: false,
            confirmed: false,
            next_resend: 0,
            resends: 0,
            flow: flow.0,
            flow_uid: flow.1,
        });
        if local {
            self.stats.detected += 1;
        } else {
            self.stats.by_cip += 1;
        }
        self.stats.peak_entries = self.stats.peak_entries.max(self.keys.len() as u64);
        Some(self.keys.len() - 1)
    }

    /// Removes entry `i` (de-isolation).
    pub fn remove(&mut self, i: usize) {
        if self.entries[i].pending > 0 {
            self.pending_flows -= 1;
        }
        self.keys.swap_remove(i);
        self.entries.swap_remove(i);
        self.stats.deisolated += 1;
    }

    /// A packet joined class queue `class`; `entry`: its flow's entry when
    /// the queue is that entry's CFQ.
    #[inline]
    pub fn on_enqueue(&mut self, class: u8, entry: Option<usize>) {
        self.enq[class as usize] += 1;
        if let Some(i) = entry {
            self.entries[i].in_cfq += 1;
        }
    }

    /// A packet of flow `key` left class queue `class` (sent or flushed).
    /// `cfq_mask`: the port's CFQ classes.
    #[inline]
    pub fn on_exit(&mut self, class: u8, key: u64, cfq_mask: u8) {
        self.exits[class as usize] += 1;
        if cfq_mask & (1 << class) != 0 {
            if let Some(i) = self.find(key) {
                let e = &mut self.entries[i];
                if e.cfq == class {
                    e.in_cfq = e.in_cfq.saturating_sub(1);
                }
            }
        } else if self.pending_flows > 0 {
            if let Some(i) = self.find(key) {
                let e = &mut self.entries[i];
                if e.base == class && e.pending > 0 {
                    e.pending -= 1;
                    if e.pending == 0 {
                        self.pending_flows -= 1;
                    }
                }
            }
        }
    }

    /// Whether CFQ `cfq`'s head may not leave yet (the order rule).
    pub fn cfq_blocked(
        &mut self,
        order: OrderMode,
        cfq: u8,
        queues: &[ClassQueue; NUM_CLASSES],
        arena: &PacketArena,
    ) -> bool {
        let c = cfq as usize;
        match order {
            OrderMode::None => false,
            OrderMode::Marker => {
                let m = &mut self.markers[c];
                // Markers whose NCQ side has left no longer hold anything back.
                while m
                    .front()
                    .is_some_and(|f| self.exits[f.ncq as usize] >= f.ncq_pos)
                {
                    m.pop_front();
                }
                // Blocked when the first pending marker is at the CFQ's head.
                m.front().is_some_and(|f| self.exits[c] >= f.cfq_pos)
            }
            OrderMode::Counter => {
                if self.pending_flows == 0 {
                    return false;
                }
                let Some(&head) = queues[c].pkts.front() else {
                    return false;
                };
                let key = arena.get(head).hash;
                self.find(key)
                    .is_some_and(|i| self.entries[i].pending > 0 && self.entries[i].cfq == cfq)
            }
        }
    }

    /// Recomputes the port's blocked-CFQ mask (`cfq_mask`: its CFQ classes).
    pub fn refresh_blocked(
        &mut self,
        order: OrderMode,
        cfq_mask: u8,
        queues: &[ClassQueue; NUM_CLASSES],
        arena: &PacketArena,
        blocked: &mut u8,
    ) {
        let mut m = cfq_mask;
        let mut out = 0u8;
        while m != 0 {
            let c = m.trailing_zeros() as u8;
            m &= m - 1;
            if self.cfq_blocked(order, c, queues, arena) {
                out |= 1 << c;
            }
        }
        if out & !*blocked != 0 {
            self.stats.blocked += 1;
        }
        *blocked = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{flags, Packet, PacketKind};
    use crate::net::PktId;

    fn pkt(arena: &mut PacketArena, key: u64, class: u8) -> PktId {
        arena.alloc(Packet {
            seq: 0,
            ts: 0,
            enq_at: 0,
            hash: key,
            flow: 0,
            flow_uid: 0,
            dst: 0,
            size: 1000,
            payload: 1000,
            kind: PacketKind::Data,
            class,
            prio: class,
            flags: flags::ECT,
            in_port: 0,
            to_port: 0,
            tag: 0,
        })
    }

    /// A port's queues driven by hand: `push` enqueues, `pop` takes the head of
    /// a class, both updating the CI counters as the simulation does.
    struct Bench {
        q: [ClassQueue; NUM_CLASSES],
        ci: CiPort,
        arena: PacketArena,
        cfg: CiConfig,
        blocked: u8,
    }

    impl Bench {
        fn new(order: OrderMode) -> Bench {
            Bench {
                q: Default::default(),
                ci: CiPort::default(),
                arena: PacketArena::default(),
                cfg: CiConfig {
                    order,
                    ..Default::default()
                },
                blocked: 0,
            }
        }
        fn push(&mut self, key: u64) {
            let e = self.ci.find(key);
            let class = if e.is_some() { 2 } else { 3 };
            let id = pkt(&mut self.arena, key, 3);
            self.q[class].pkts.push_back(id);
            self.ci.on_enqueue(class as u8, e);
            self.refresh();
        }
        fn refresh(&mut self) {
            let mask = self.cfg.cfq_mask();
            self.ci.refresh_blocked(
                self.cfg.order,
                mask,
                &self.q,
                &self.arena,
                &mut self.blocked,
            );
        }
        fn isolate(&mut self, key: u64) {
            self.ci
                .isolate(&self.cfg, &self.q, &self.arena, key, 3, 0, 0, true, (0, 0))
                .unwrap();
            self.refresh();
        }
        /// Strict priority over classes 3 and 2, honouring the blocked mask.
        fn pop(&mut self) -> Option<(u8, u64)> {
            let c = if !self.q[3].pkts.is_empty() {
                3
            } else if !self.q[2].pkts.is_empty() && self.blocked & 4 == 0 {
                2
            } else {
                return None;
            };
            Some((c, self.take(c)))
        }
        /// Takes the head of class `class` regardless of the order rule (as if the
        /// other queue were paused) and returns its flow.
        fn take(&mut self, class: u8) -> u64 {
            let id = self.q[class as usize].pkts.pop_front().unwrap();
            let key = self.arena.get(id).hash;
            self.ci.on_exit(class, key, self.cfg.cfq_mask());
            self.refresh();
            key
        }
    }

    #[test]
    fn marker_blocks_the_cfq_until_the_ncq_marker_leaves() {
        // The talk's slide: flow 7 is isolated while 3 of its packets (and 2
        // of flow 1) are in the NCQ. Its later packets wait in the CFQ, even
        // when the CFQ alone could be served, until the NCQ's marker leaves.
        let mut b = Bench::new(OrderMode::Marker);
        for k in [7, 1, 7, 1, 7] {
            b.push(k);
        }
        b.isolate(7);
        b.push(7); // -> CFQ, behind the marker
        assert_eq!(b.blocked, 4);
        let order: Vec<_> = std::iter::from_fn(|| b.pop()).collect();
        assert_eq!(
            order,
            vec![(3, 7), (3, 1), (3, 7), (3, 1), (3, 7), (2, 7)],
            "the isolated packet leaves after the flow's queued ones"
        );
        assert_eq!(b.blocked, 0);
    }

    #[test]
    fn marker_does_not_hold_back_packets_ahead_of_it() {
        // Flow 5 was isolated earlier (its packets in the CFQ ahead of the
        // new marker); isolating flow 7 must not stop them.
        let mut b = Bench::new(OrderMode::Marker);
        b.isolate(5);
        b.push(5);
        b.push(5);
        b.push(7);
        b.isolate(7);
        b.push(7);
        // NCQ: [7]; CFQ: [5, 5, marker, 7]. Serve the CFQ only (the NCQ is paused, say).
        assert_eq!(
            b.blocked, 0,
            "the CFQ's head is flow 5, ahead of the marker"
        );
        b.take(2);
        b.take(2);
        assert_eq!(b.blocked, 4, "now the marker is at the head");
        assert_eq!(b.pop(), Some((3, 7)));
        assert_eq!(b.blocked, 0);
        assert_eq!(b.pop(), Some((2, 7)));
    }

    #[test]
    fn counter_blocks_only_the_flow_with_packets_in_the_ncq() {
        let mut b = Bench::new(OrderMode::Counter);
        b.isolate(5);
        b.push(5); // CFQ head: flow 5, nothing of it in the NCQ
        b.push(7);
        b.push(7);
        b.isolate(7);
        assert_eq!(b.ci.entries[1].pending, 2);
        b.push(7);
        assert_eq!(b.blocked, 0, "flow 5 at the CFQ head may go");
        b.take(2);
        assert_eq!(
            b.blocked, 4,
            "flow 7 at the head, 2 of its packets in the NCQ"
        );
        assert_eq!(b.pop(), Some((3, 7)));
        assert_eq!(b.blocked, 4);
        assert_eq!(b.pop(), Some((3, 7)));
        assert_eq!(b.blocked, 0);
        assert_eq!(b.pop(), Some((2, 7)));
    }

    #[test]
    fn without_order_the_isolated_packet_can_overtake() {
        let mut b = Bench::new(OrderMode::None);
        b.push(7);
        b.isolate(7);
        b.push(7);
        // Serve the CFQ first (e.g. the NCQ is paused): flow 7 is reordered.
        assert_eq!(b.blocked, 0);
    }

    #[test]
    fn aging_waits_for_the_cfq_to_hold_none_of_the_flow() {
        let mut b = Bench::new(OrderMode::Marker);
        b.isolate(7);
        b.push(7);
        let age = b.cfg.age.0;
        assert!(
            !b.ci.aged(0, age, age, OrderMode::Marker),
            "a packet in the CFQ"
        );
        b.pop();
        assert!(!b.ci.aged(0, age - 1, age, OrderMode::Marker));
        assert!(b.ci.aged(0, age, age, OrderMode::Marker));
        b.ci.remove(0);
        assert!(b.ci.is_empty());
        assert_eq!(b.ci.stats.deisolated, 1);
    }

    #[test]
    fn sampling_picks_one_packet_per_every_bytes_above_threshold() {
        let cfg = CiConfig {
            threshold: SizeValue(10_000),
            detect: Detect::Sampled {
                every: SizeValue(4_000),
            },
            ..Default::default()
        };
        let mut ci = CiPort::default();
        assert!(!ci.detect(&cfg, 3, 5_000, 1000), "below threshold");
        let picks: Vec<bool> = (0..8).map(|_| ci.detect(&cfg, 3, 20_000, 1000)).collect();
        assert_eq!(
            picks,
            vec![false, false, false, true, false, false, false, true]
        );
    }

    #[test]
    fn top_flows_ranks_by_bytes_in_the_queue() {
        let mut b = Bench::new(OrderMode::Marker);
        for k in [1, 2, 2, 3, 2, 1] {
            b.push(k);
        }
        let top = CiPort::top_flows(&b.q, &b.arena, 3, 2);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![2, 1]);
    }

    #[test]
    fn a_full_table_refuses_and_counts() {
        let mut b = Bench::new(OrderMode::Marker);
        b.cfg.max_flows = 1;
        b.isolate(1);
        let r =
            b.ci.isolate(&b.cfg, &b.q, &b.arena, 2, 3, 0, 0, true, (0, 0));
        assert!(r.is_none());
        assert_eq!(b.ci.stats.table_full, 1);
    }

    #[test]
    fn the_cfq_is_chosen_by_hash_alike_everywhere() {
        let cfg = CiConfig {
            queues: vec![CiQueues {
                class: 3,
                cfq: vec![1, 2],
            }],
            ..Default::default()
        };
        let picks: std::collections::BTreeSet<u8> = (0..64u64)
            .map(|i| cfg.cfq_for(3, crate::rng::mix64(i)))
            .collect();
        assert_eq!(picks.into_iter().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(cfg.base_mask(), 8);
        assert_eq!(cfg.cfq_mask(), 6);
    }
}

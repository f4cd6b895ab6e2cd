//! A port: one end of a full-duplex link, its transmitter, its outgoing wire,
//! and (on switches) its per-class egress queues.
//!
//! Transmission is store-and-forward. A packet of `s` bytes that starts at `t`
//! occupies the transmitter until `t + s*8/rate` and reaches the far end at
//! `t + s*8/rate + delay`. Arrivals on one wire are in send order, so the wire
//! is a FIFO of `(arrival time, packet)` and needs one engine event: the
//! arrival of its head.

use super::switch::Ecn;
use super::{PktId, NUM_CLASSES};
use crate::units::{Bytes, Ps, Rate};
use std::collections::VecDeque;

/// Which node owns a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Host(u32),
    Switch(u32),
}

/// Counters of one egress class queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClassCounters {
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    pub drop_pkts: u64,
    pub drop_bytes: u64,
    pub ecn_marks: u64,
    pub deq_pkts: u64,
    /// Sum over dequeued packets of the time they waited in this queue.
    pub qdelay_sum: Ps,
    pub max_bytes: Bytes,
}

/// One egress class queue.
#[derive(Debug, Default)]
pub struct ClassQueue {
    pub pkts: VecDeque<PktId>,
    pub bytes: Bytes,
    pub counters: ClassCounters,
    /// DWRR deficit counter (bytes).
    pub deficit: i64,
}

#[derive(Debug)]
pub struct Port {
    pub owner: Owner,
    /// Index of this port among its node's ports.
    pub local: u16,
    /// Global id of the port at the far end of the link.
    pub peer: u32,
    pub rate: Rate,
    /// `rate.tx_time` as a multiplication when the rate allows it (0: use `tx_time`).
    ps_per_byte: Ps,
    pub delay: Ps,
    /// The transmitter is busy until this time.
    pub busy_until: Ps,
    /// A `TxDone` event for this port is pending in the engine.
    pub tx_event: bool,
    /// Packets on the outgoing wire with their arrival times at the peer.
    pub wire: VecDeque<(Ps, PktId)>,
    /// Per-class egress queues (used on switch ports).
    pub queues: [ClassQueue; NUM_CLASSES],
    /// Bit c set when queue c is non-empty.
    pub nonempty: u8,
    /// DWRR: the class whose turn it is.
    pub dwrr_next: u8,
    pub tx_bytes: u64,
    pub tx_pkts: u64,
    pub busy_time: Ps,
    /// Control frames (PFC) waiting; sent before any class queue, never paused.
    pub ctrl: VecDeque<PktId>,
    /// ECN marking of each class at this port (its rule may depend on the port's rate).
    pub ecn: [Ecn; NUM_CLASSES],
    /// PFC: bit c set while class c is paused by the peer.
    pub paused: u8,
    /// Boxed: cold state, kept out of the hot part of the port.
    pub pfc: Box<PortPfc>,
}

/// PFC state and counters of one port.
#[derive(Debug, Default)]
pub struct PortPfc {
    /// When each paused class resumes by itself (quanta mode; `Ps::MAX`: only on XON).
    pub pause_until: [Ps; NUM_CLASSES],
    pub paused_since: [Ps; NUM_CLASSES],
    /// Pending expiry-timer entry of this port.
    pub expiry: crate::engine::LazyTimer,
    /// Pending refresh-timer entry (XOFFs this port sent that must be renewed).
    pub refresh: crate::engine::LazyTimer,
    /// PAUSE frames with non-zero quanta sent / received, per class.
    pub xoff_tx: [u64; NUM_CLASSES],
    pub xon_tx: [u64; NUM_CLASSES],
    pub xoff_rx: [u64; NUM_CLASSES],
    pub xon_rx: [u64; NUM_CLASSES],
    /// Total time each class was paused.
    pub paused_time: [Ps; NUM_CLASSES],
    /// Longest single pause per class.
    pub longest_pause: [Ps; NUM_CLASSES],
    /// Pauses that exceeded the watchdog limit.
    pub watchdog_trips: u64,
}

impl Port {
    pub fn new(owner: Owner, local: u16, peer: u32, rate: Rate, delay: Ps) -> Port {
        Port {
            owner,
            local,
            peer,
            rate,
            ps_per_byte: rate.exact_ps_per_byte().unwrap_or(0),
            delay,
            busy_until: 0,
            tx_event: false,
            wire: VecDeque::new(),
            queues: Default::default(),
            nonempty: 0,
            dwrr_next: 0,
            tx_bytes: 0,
            tx_pkts: 0,
            busy_time: 0,
            ctrl: VecDeque::new(),
            ecn: [Ecn::Off; NUM_CLASSES],
            paused: 0,
            pfc: Box::default(),
        }
    }

    /// Puts a packet of `size` bytes on the wire at `now` (the transmitter must be free).
    /// Returns the arrival time when the wire was empty: the caller must then schedule
    /// the arrival of the new head.
    #[inline]
    pub fn transmit(&mut self, now: Ps, pkt: PktId, size: u32) -> Option<Ps> {
        debug_assert!(self.busy_until <= now);
        let tx = if self.ps_per_byte > 0 {
            size as Ps * self.ps_per_byte
        } else {
            self.rate.tx_time(size as Bytes)
        };
        self.busy_until = now + tx;
        self.busy_time += tx;
        self.tx_bytes += size as u64;
        self.tx_pkts += 1;
        let arrival = self.busy_until + self.delay;
        let was_empty = self.wire.is_empty();
        self.wire.push_back((arrival, pkt));
        was_empty.then_some(arrival)
    }

    #[inline]
    pub fn is_idle(&self, now: Ps) -> bool {
        self.busy_until <= now && !self.tx_event
    }

    /// Total bytes queued over all classes.
    pub fn queued_bytes(&self) -> Bytes {
        self.queues.iter().map(|q| q.bytes).sum()
    }
}

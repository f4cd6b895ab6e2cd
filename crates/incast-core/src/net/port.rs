//! A port: one end of a full-duplex link, its transmitter, its outgoing wire,
//! and (on switches) its per-class egress queues.
//!
//! Transmission is store-and-forward. A packet of `s` bytes that starts at `t`
//! occupies the transmitter until `t + s*8/rate` and reaches the far end at
//! `t + s*8/rate + delay`. Each packet's arrival is one engine event; the
//! timing wheel files it in O(1), so a packet in flight costs one pending
//! entry and no per-wire buffer.

use super::{PktId, NUM_CLASSES};
use crate::params::switch::Ecn;
use crate::units::{ns3_tx_time, Bytes, Ps, Rate};
use std::collections::VecDeque;

/// The bit of [`Port`]'s packed `owner` that marks a NIC's port.
const NIC_OWNED: u32 = 1 << 31;

/// Which node owns a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// NIC `.0` (serving one host, or several).
    Nic(u32),
    Switch(u32),
}

/// Counters of one egress class queue. Packets and bytes enqueued are not
/// stored: they are what left plus what is queued ([`ClassQueue::enq_pkts`]).
/// In the order a hop updates them (see [`ClassQueue`]'s layout).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct ClassCounters {
    pub deq_pkts: u64,
    pub deq_bytes: u64,
    /// Sum over dequeued packets of the time they waited in this queue.
    pub qdelay_sum: Ps,
    pub ecn_marks: u64,
    pub drop_pkts: u64,
    pub drop_bytes: u64,
}

/// One egress class queue, two cache lines. The first holds the byte count,
/// the marking threshold, the peak and the counters a packet passing
/// straight through updates ([`super::switch::Switch::pass_through`]); the
/// second the packet FIFO, which only a packet that waits touches.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct ClassQueue {
    pub bytes: Bytes,
    /// ECN can mark only above this queue length (the rule's `kmin`;
    /// `Bytes::MAX` when the class does not mark): the full rule in
    /// [`Port::ecn`] is read only then.
    pub ecn_from: Bytes,
    pub max_bytes: Bytes,
    pub counters: ClassCounters,
    pub pkts: VecDeque<PktId>,
    /// DWRR deficit counter (bytes).
    pub deficit: i64,
    /// Queue-length statistics, kept at every change of `bytes`, with no
    /// event: since when `bytes` has its value, ...
    since: Ps,
    /// ... and the integral and distribution of `bytes` over time
    /// (allocated when the queue first holds a packet).
    stats: Option<Box<QueueStats>>,
}

/// The time-weighted statistics of a queue's length.
#[derive(Debug)]
pub struct QueueStats {
    /// The integral of the length over time (byte-picoseconds; an f64 keeps
    /// 53 bits: exact to a relative 1e-15 for any run here).
    area: f64,
    /// The time spent at each length.
    hist: QueueHist,
}

/// Time a queue spent at each length: bucket `b > 0` holds lengths in
/// `[lo(b), lo(b+1))` with two buckets per power of two (so a percentile
/// read from it is within 41 % of the exact one); bucket 0 is unused (the
/// time spent empty is the rest of the window).
pub type QueueHist = [Ps; QUEUE_HIST_BUCKETS];

/// Buckets of a [`QueueHist`]: up to 2^31 bytes.
pub const QUEUE_HIST_BUCKETS: usize = 64;

/// The [`QueueHist`] bucket of a queue of `bytes` (> 0) bytes.
#[inline]
pub fn hist_bucket(bytes: Bytes) -> usize {
    let log = 63 - bytes.leading_zeros() as usize; // floor(log2)
    let half = if log > 0 { (bytes >> (log - 1)) & 1 } else { 0 } as usize;
    (1 + 2 * log + half).min(QUEUE_HIST_BUCKETS - 1)
}

/// The smallest queue length in [`QueueHist`] bucket `b` (> 0).
pub fn hist_lower(b: usize) -> Bytes {
    let log = (b - 1) / 2;
    let half = (b - 1) % 2;
    (1u64 << log)
        + if log > 0 {
            (half as u64) << (log - 1)
        } else {
            0
        }
}

impl Default for ClassQueue {
    fn default() -> Self {
        ClassQueue {
            pkts: VecDeque::new(),
            bytes: 0,
            ecn_from: Bytes::MAX,
            max_bytes: 0,
            deficit: 0,
            counters: ClassCounters::default(),
            since: 0,
            stats: None,
        }
    }
}

impl ClassQueue {
    /// Packets accepted into this queue so far.
    pub fn enq_pkts(&self) -> u64 {
        self.counters.deq_pkts + self.pkts.len() as u64
    }
    /// Bytes accepted into this queue so far.
    pub fn enq_bytes(&self) -> u64 {
        self.counters.deq_bytes + self.bytes
    }

    /// `bytes` is about to change at `now`: account the time it held its
    /// value (the statistics of [`ClassQueue::stats`]).
    #[inline(always)]
    pub fn track(&mut self, now: Ps) {
        let dt = now - self.since;
        self.since = now;
        if self.bytes > 0 {
            if let Some(st) = self.stats.as_deref_mut() {
                // Both are far below 2^63, where converting through i64
                // gives the same f64 in one instruction.
                st.area += self.bytes as i64 as f64 * dt as i64 as f64;
                st.hist[hist_bucket(self.bytes)] += dt;
            }
        } else if self.stats.is_none() {
            // About to hold its first packet.
            self.stats = Some(Box::new(QueueStats {
                area: 0.0,
                hist: [0; QUEUE_HIST_BUCKETS],
            }));
        }
    }

    /// The queue length's time-weighted mean over `[start, end]` and its
    /// quantiles `qs` (from [`QueueHist`]: each the lower edge of the bucket
    /// it falls in; 0 while the queue was empty that share of the time), and
    /// the share of the window it was not empty.
    pub fn stats(&self, start: Ps, end: Ps, qs: &[f64]) -> (f64, Vec<Bytes>, f64) {
        let span = end.saturating_sub(start).max(1) as f64;
        // The current length, held from `since` to the end.
        let tail = end.saturating_sub(self.since);
        let (mut area, mut hist) = match self.stats.as_deref() {
            Some(st) => (st.area, st.hist),
            None => (0.0, [0; QUEUE_HIST_BUCKETS]),
        };
        if self.bytes > 0 {
            area += self.bytes as f64 * tail as f64;
            hist[hist_bucket(self.bytes)] += tail;
        }
        let busy: Ps = hist.iter().sum();
        let empty = span - (busy as f64).min(span);
        let quantile = |q: f64| -> Bytes {
            let mut acc = empty;
            for (b, &t) in hist.iter().enumerate().skip(1) {
                acc += t as f64;
                if acc >= q * span {
                    return hist_lower(b);
                }
            }
            0
        };
        (
            area / span,
            qs.iter()
                .map(|&q| if q * span <= empty { 0 } else { quantile(q) })
                .collect(),
            busy as f64 / span,
        )
    }
}

/// A port. Fields are laid out (`repr(C)`) so that everything a packet
/// hop reads or writes on the port itself sits in the first cache line; the
/// class queues follow, one or two lines each.
#[derive(Debug)]
#[repr(C)]
pub struct Port {
    /// The transmitter is busy until this time.
    pub busy_until: Ps,
    /// `rate.tx_time` as a multiplication when the rate allows it (0: use `tx_time`).
    /// Four bytes, so that the owner fits in this line: a rate below
    /// 1.9 kb/s takes `tx_time`.
    ps_per_byte: u32,
    /// This port's own node ([`Port::owner`], packed: [`NIC_OWNED`] marks a
    /// NIC). Every arrival and end of transmission asks; kept here, it comes
    /// with the line the run loop prefetched, where a separate table cost
    /// a miss of its own (a sixth of the run loop's time at k = 34).
    owner: u32,
    pub delay: Ps,
    pub tx_bytes: u64,
    pub tx_pkts: u64,
    /// Global id of the port at the far end of the link.
    pub peer: u32,
    /// Local index of the peer port at its node (stamped on packets sent, so
    /// the receiver need not read the peer port).
    pub peer_local: u16,
    /// Index of this port among its node's ports.
    pub local: u16,
    /// A `TxDone` event for this port is pending in the engine.
    pub tx_event: bool,
    /// Bit c set when queue c is non-empty.
    pub nonempty: u8,
    /// PFC: bit c set while class c is paused by the peer.
    pub paused: u8,
    /// DWRR: the class whose turn it is.
    pub dwrr_next: u8,
    /// Bit c set when class c marks ECN at dequeue (else at enqueue).
    pub ecn_at_dequeue: u8,
    /// Bit c set while a switch mechanism has class queue c discard what it
    /// is given: nothing queues, nothing passes through
    /// ([`crate::mech::DropCause::Held`]; the PFC watchdog after a trip with
    /// `drop = true`, which then also ignores pauses).
    pub discarding: u8,
    /// Bit c set while a switch mechanism holds class queue c's head (the
    /// scheduler skips it; [`crate::mech`]: a queue whose head must wait
    /// for packets of its flow in another queue to leave, say).
    pub held: u8,
    /// `ctrl` is not empty (read on every hop; the queue itself is not).
    has_ctrl: bool,
    /// The switch at the far end of the link (`None`: a NIC), set when the
    /// network is built ([`Port::set_ends`]). A packet sent to a switch is
    /// routed as it leaves ([`crate::net::link::transmit`]).
    pub peer_switch: Option<u32>,
    // ---- second cache line: read when a packet is not a plain hop.
    pub rate: Rate,
    /// Transmit time not covered by `tx_bytes x ps_per_byte` (all of it
    /// when `ps_per_byte` is 0); see [`Port::busy_time`].
    busy_extra: Ps,
    /// The last two packet sizes [`Port::uneven_tx_time`] worked out, and
    /// their times in ps: a port's rate is fixed and it carries few sizes
    /// (data and ACKs), while ns-3's arithmetic costs about 50 instructions.
    tx_memo_sizes: [u16; 2],
    tx_memo_times: [u32; 2],
    /// Transmission times as ns-3 computes them ([`crate::units::ns3_tx_time`],
    /// `[timing] tx_times = "ns3"`), set with [`Port::use_ns3_tx_times`].
    ns3_tx_times: bool,
    /// Control frames (PFC) waiting; sent before any class queue, never paused.
    ctrl: VecDeque<PktId>,
    /// Per-class egress queues (used on switch ports).
    pub queues: [ClassQueue; NUM_CLASSES],
    /// ECN marking of each class at this port (its rule may depend on the
    /// port's rate). Set with [`Port::set_ecn`].
    ecn: [Ecn; NUM_CLASSES],
}

/// Hints the CPU to start loading port `port`'s first line and the first line
/// of its class queue `class`: an arriving packet reads both (the queue's
/// byte count at admission). At k = 34, once the port's line carried its
/// owner, that queue line was the run loop's largest wait.
#[inline(always)]
pub(crate) fn prefetch_with_queue(ports: &[Port], port: u32, class: u8) {
    super::prefetch(ports, port as usize);
    super::prefetch_addr(queue_addr(ports, port, class));
}

/// The address of class queue `class` of port `port_id`, computed only (never
/// dereferenced, so neither index is checked).
#[inline(always)]
fn queue_addr(ports: &[Port], port_id: u32, class: u8) -> *const u8 {
    let offset = std::mem::offset_of!(Port, queues)
        + (class as usize % NUM_CLASSES) * std::mem::size_of::<ClassQueue>();
    let port = ports.as_ptr().wrapping_add(port_id as usize);
    port.cast::<u8>().wrapping_add(offset)
}

impl Port {
    /// Records the node that owns this port and the switch at the far end
    /// (`None`: a NIC), once, when the network is built.
    pub fn set_ends(&mut self, owner: Owner, peer_switch: Option<u32>) {
        let (id, kind) = match owner {
            Owner::Switch(s) => (s, 0),
            Owner::Nic(n) => (n, NIC_OWNED),
        };
        assert!(id < NIC_OWNED, "2^31 switches or NICs and more");
        self.owner = id | kind;
        self.peer_switch = peer_switch;
    }
    /// The node that owns this port.
    #[inline(always)]
    pub fn owner(&self) -> Owner {
        if self.owner & NIC_OWNED != 0 {
            Owner::Nic(self.owner & !NIC_OWNED)
        } else {
            Owner::Switch(self.owner)
        }
    }
    pub fn new(local: u16, peer: u32, rate: Rate, delay: Ps) -> Port {
        Port {
            busy_until: 0,
            ps_per_byte: rate
                .exact_ps_per_byte()
                .and_then(|p| u32::try_from(p).ok())
                .unwrap_or(0),
            delay,
            tx_bytes: 0,
            tx_pkts: 0,
            peer,
            peer_local: 0,
            local,
            tx_event: false,
            nonempty: 0,
            paused: 0,
            dwrr_next: 0,
            ecn_at_dequeue: 0,
            discarding: 0,
            held: 0,
            has_ctrl: false,
            peer_switch: None,
            owner: 0,
            rate,
            busy_extra: 0,
            // A packet of no bytes takes no time under either rule.
            tx_memo_sizes: [0; 2],
            tx_memo_times: [0; 2],
            ns3_tx_times: false,
            ctrl: VecDeque::new(),
            queues: Default::default(),
            ecn: [Ecn::Off; NUM_CLASSES],
        }
    }

    /// Sets class `class`'s ECN rule.
    pub fn set_ecn(&mut self, class: usize, rule: Ecn) {
        self.ecn[class] = rule;
        let (from, deq) = match rule {
            Ecn::Off => (Bytes::MAX, false),
            // `Ecn::probability` is zero up to and including `kmin`.
            Ecn::Red {
                kmin, at_dequeue, ..
            } => (kmin, at_dequeue),
        };
        self.queues[class].ecn_from = from;
        if deq {
            self.ecn_at_dequeue |= 1 << class;
        } else {
            self.ecn_at_dequeue &= !(1 << class);
        }
    }
    /// Class `class`'s ECN rule.
    #[inline]
    pub fn ecn(&self, class: usize) -> &Ecn {
        &self.ecn[class]
    }

    /// Puts a packet of `size` bytes on the wire at `now` (the transmitter must
    /// be free). Returns its arrival time at the peer, which the caller schedules.
    #[inline(always)]
    pub fn transmit(&mut self, now: Ps, size: u32) -> Ps {
        debug_assert!(self.busy_until <= now);
        let tx = if self.ps_per_byte > 0 {
            size as Ps * self.ps_per_byte as Ps
        } else {
            self.uneven_tx_time(size)
        };
        self.busy_until = now + tx;
        self.tx_bytes += size as u64;
        self.tx_pkts += 1;
        self.busy_until + self.delay
    }

    /// A transmission's time when it is not `size x ps_per_byte`: a rate that
    /// is not a whole number of ps per byte, or ns-3's clock (every hop of an
    /// HPCC import). Kept out of line: every hop at 100 Gb/s on the exact
    /// clock takes the product.
    #[inline(never)]
    fn uneven_tx_time(&mut self, size: u32) -> Ps {
        let tx = if size == self.tx_memo_sizes[0] as u32 {
            self.tx_memo_times[0] as Ps
        } else if size == self.tx_memo_sizes[1] as u32 {
            self.tx_memo_times[1] as Ps
        } else {
            self.work_out_tx_time(size)
        };
        self.busy_extra += tx;
        tx
    }

    /// [`Port::uneven_tx_time`] without the memo; remembers the result when
    /// it fits (sizes to 64 KiB, times to 4.29 ms).
    #[cold]
    fn work_out_tx_time(&mut self, size: u32) -> Ps {
        let tx = if self.ns3_tx_times {
            ns3_tx_time(size as Bytes, self.rate.bits_per_sec() as f64)
        } else {
            self.rate.tx_time(size as Bytes)
        };
        if let (Ok(size), Ok(time)) = (u16::try_from(size), u32::try_from(tx)) {
            self.tx_memo_sizes = [size, self.tx_memo_sizes[0]];
            self.tx_memo_times = [time, self.tx_memo_times[0]];
        }
        tx
    }

    /// Times every transmission as ns-3 does, truncated to whole nanoseconds
    /// ([`crate::units::ns3_tx_time`]), instead of exactly.
    pub fn use_ns3_tx_times(&mut self) {
        self.ns3_tx_times = true;
        self.ps_per_byte = 0;
        (self.tx_memo_sizes, self.tx_memo_times) = ([0; 2], [0; 2]);
    }

    /// Total time the transmitter has been busy.
    pub fn busy_time(&self) -> Ps {
        // Each transmission took `size x ps_per_byte` (or is in `busy_extra`).
        self.busy_extra + self.tx_bytes * self.ps_per_byte as Ps
    }

    /// Queues a control frame (PAUSE, a mechanism's): sent before any class queue.
    pub fn push_ctrl(&mut self, id: PktId) {
        self.ctrl.push_back(id);
        self.has_ctrl = true;
    }
    /// The next control frame to send, if any.
    #[inline]
    pub fn pop_ctrl(&mut self) -> Option<PktId> {
        if !self.has_ctrl {
            return None;
        }
        let id = self.ctrl.pop_front();
        self.has_ctrl = !self.ctrl.is_empty();
        id
    }
    #[inline]
    pub fn has_ctrl(&self) -> bool {
        self.has_ctrl
    }
    /// Control frames waiting.
    pub fn ctrl_frames(&self) -> impl Iterator<Item = PktId> + '_ {
        self.ctrl.iter().copied()
    }

    #[inline]
    pub fn is_idle(&self, now: Ps) -> bool {
        self.busy_until <= now && !self.tx_event
    }

    /// Classes the scheduler may serve now: non-empty, not paused by PFC,
    /// not held by a mechanism.
    #[inline]
    pub fn sendable(&self) -> u8 {
        self.nonempty & !self.paused & !self.held
    }

    /// Total bytes queued over all classes.
    pub fn queued_bytes(&self) -> Bytes {
        self.queues.iter().map(|q| q.bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Rate, NS};
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn hot_fields_share_the_first_cache_line() {
        // Ports are cache-line aligned (their queues are), and what every hop
        // touches on the port itself ends before byte 64.
        assert_eq!(align_of::<Port>(), 64);
        assert_eq!(offset_of!(Port, busy_until), 0);
        assert!(offset_of!(Port, has_ctrl) < 64);
        assert!(offset_of!(Port, tx_pkts) + 8 <= 64);
        assert!(offset_of!(Port, peer_switch) + 8 <= 64);
        assert!(offset_of!(Port, owner) + 4 <= 64);
        assert_eq!(offset_of!(Port, rate), 64);
        // The second line's fields fit before the queues' alignment.
        assert_eq!(offset_of!(Port, queues), 128);
    }

    #[test]
    fn a_pass_through_touches_one_line_of_its_queue() {
        assert_eq!(size_of::<ClassQueue>(), 128);
        assert_eq!(offset_of!(ClassQueue, bytes), 0);
        let counters = offset_of!(ClassQueue, counters);
        assert!(offset_of!(ClassQueue, max_bytes) + 8 <= 64);
        assert!(counters + offset_of!(ClassCounters, deq_bytes) + 8 <= 64);
        assert!(counters + offset_of!(ClassCounters, qdelay_sum) + 8 <= 64);
    }

    #[test]
    fn hist_buckets_split_each_power_of_two_in_two() {
        for (bytes, b) in [
            (1, 1),
            (2, 3),
            (3, 4),
            (4, 5),
            (5, 5),
            (6, 6),
            (7, 6),
            (8, 7),
            (1500, 21),
        ] {
            assert_eq!(hist_bucket(bytes), b, "{bytes}");
            assert!(hist_lower(b) <= bytes, "{bytes}");
            // The next non-empty bucket starts above it (bucket 2 holds nothing:
            // 1 is the only length below 2).
            let next = if b == 1 { 3 } else { b + 1 };
            assert!(hist_lower(next) > bytes, "{bytes}");
        }
        assert_eq!(hist_bucket(u64::MAX), QUEUE_HIST_BUCKETS - 1);
    }

    /// A queue at 0 for 10 us, 3000 B for 20 us, 1000 B for 10 us, then 0:
    /// mean 1750 B over 40 us, non-empty 75 % of the time; the 10 % quantile
    /// is 0, the 40 % one in the 1000 B bucket, the 60 % one in the 3000 B one.
    #[test]
    fn queue_stats_are_time_weighted() {
        let mut q = ClassQueue::default();
        let us = crate::units::US;
        q.track(10 * us);
        q.bytes = 3000;
        q.track(30 * us);
        q.bytes = 1000;
        q.track(40 * us);
        q.bytes = 0;
        let (mean, quantiles, busy) = q.stats(0, 40 * us, &[0.1, 0.4, 0.6]);
        assert!((mean - 1750.0).abs() < 1e-9, "{mean}");
        assert!((busy - 0.75).abs() < 1e-12, "{busy}");
        let (b1, b3) = (hist_lower(hist_bucket(1000)), hist_lower(hist_bucket(3000)));
        assert_eq!((b1, b3), (768, 2048));
        assert_eq!(quantiles, vec![0, b1, b3]);
        // Still queued at the end: counted to the end of the window.
        q.track(40 * us);
        q.bytes = 500;
        let (mean, _, busy) = q.stats(0, 50 * us, &[]);
        assert!((mean - (3000.0 * 20.0 + 1000.0 * 10.0 + 500.0 * 10.0) / 50.0).abs() < 1e-9);
        assert!((busy - 0.8).abs() < 1e-12);
    }

    #[test]
    fn busy_time_is_the_sum_of_transmit_times() {
        // 100 Gb/s: 80 ps per byte (exact); 3 Gb/s is not a whole number of
        // ps per byte, so its times are rounded and summed one by one; nor
        // is 1 kb/s's 8 x 10^9 ps per byte kept (it exceeds four bytes).
        for (rate, sizes) in [
            (Rate::gbps(100), [64u32, 1048, 9000]),
            (Rate::gbps(3), [64, 1048, 9001]),
            (Rate::bps(1_000), [64, 1048, 9000]),
        ] {
            let mut p = Port::new(0, 1, rate, 10 * NS);
            let (mut now, mut sum) = (0, 0);
            for s in sizes {
                let arrival = p.transmit(now, s);
                let tx = rate.tx_time(s as Bytes);
                assert_eq!(arrival, now + tx + 10 * NS);
                sum += tx;
                now = p.busy_until;
            }
            assert_eq!(p.busy_time(), sum);
            assert_eq!(p.tx_pkts, 3);
        }
    }

    /// Remembered times are the times worked out: sizes alternating, repeating
    /// and new, one too large to remember (70,000 B) and one whose time is (a
    /// jumbo frame at 1 Mb/s, 74 ms), on an uneven rate and on ns-3's clock.
    #[test]
    fn remembered_tx_times_equal_the_rule() {
        let sizes = [
            1048u32, 60, 1048, 60, 0, 512, 1048, 70_000, 60, 70_000, 9216, 9216,
        ];
        for (rate, ns3) in [
            (Rate::gbps(3), false),
            (Rate::gbps(100), true),
            (Rate::bps(1_000_000), true),
            (Rate::bps(1_000_000), false),
        ] {
            let mut p = Port::new(0, 1, rate, NS);
            if ns3 {
                p.use_ns3_tx_times();
            }
            let (mut now, mut sum) = (0, 0);
            for s in sizes {
                let tx = if ns3 {
                    crate::units::ns3_tx_time(s as Bytes, rate.bits_per_sec() as f64)
                } else {
                    rate.tx_time(s as Bytes)
                };
                assert_eq!(p.transmit(now, s), now + tx + NS, "{s} B at {rate}");
                sum += tx;
                now = p.busy_until;
            }
            assert_eq!(p.busy_time(), sum);
        }
    }

    #[test]
    fn a_port_knows_its_node_and_its_peer_switch() {
        let mut p = Port::new(0, 1, Rate::gbps(100), NS);
        let last = NIC_OWNED - 1;
        for (owner, peer) in [
            (Owner::Switch(0), Some(0)),
            (Owner::Nic(0), Some(5)),
            (Owner::Switch(last), None),
            (Owner::Nic(last), Some(last)),
            (Owner::Nic(12), None),
        ] {
            p.set_ends(owner, peer);
            assert_eq!(p.owner(), owner);
            assert_eq!(p.peer_switch, peer);
        }
    }

    #[test]
    #[should_panic(expected = "2^31")]
    fn a_node_id_that_does_not_fit_is_refused() {
        Port::new(0, 1, Rate::gbps(100), NS).set_ends(Owner::Nic(NIC_OWNED), None);
    }

    #[test]
    fn the_queue_prefetched_is_the_queue_read() {
        let ports: Vec<Port> = (0..3)
            .map(|l| Port::new(l, 0, Rate::gbps(100), NS))
            .collect();
        for p in 0..3u32 {
            for class in 0..NUM_CLASSES as u8 {
                let queue: *const ClassQueue = &ports[p as usize].queues[class as usize];
                assert_eq!(queue_addr(&ports, p, class), queue.cast::<u8>());
            }
        }
    }

    #[test]
    fn control_frames_are_fifo_and_flagged() {
        let mut p = Port::new(0, 1, Rate::gbps(100), NS);
        assert!(!p.has_ctrl());
        assert_eq!(p.pop_ctrl(), None);
        p.push_ctrl(7);
        p.push_ctrl(9);
        assert!(p.has_ctrl());
        assert_eq!(p.ctrl_frames().collect::<Vec<_>>(), vec![7, 9]);
        assert_eq!(p.pop_ctrl(), Some(7));
        assert!(p.has_ctrl());
        assert_eq!(p.pop_ctrl(), Some(9));
        assert!(!p.has_ctrl());
    }
}

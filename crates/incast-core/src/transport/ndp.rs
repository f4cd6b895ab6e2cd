//! NDP's endpoints as engine-free state machines (Handley et al.,
//! "Re-architecting datacenter networks and stacks for low latency and
//! high performance", SIGCOMM 2017, §3.2), with the defaults of htsim's
//! `main_ndp.cpp` (Broadcom/csg-htsim 841d9e7).
//!
//! * The **sender** ([`NdpSender`]) sends its first window at line rate
//!   (§3.2: "the sender sends a full window of data without waiting";
//!   htsim: 15 packets), then one packet per PULL it receives,
//!   retransmissions first (lowest sequence first, as htsim's `_rtx_queue`
//!   map). PULLs carry a cumulative pull number (htsim `pull_packets`): a
//!   lost PULL is made up by the next one; pulls that find nothing to send
//!   are banked. A NACK queues its packet for retransmission; an ACK
//!   retires it; the flow is done when every packet is acknowledged. A
//!   retransmission timeout re-queues every packet sent and not yet
//!   acknowledged (htsim's RTO, at least `rto` after the last progress).
//! * The **receiver** ([`NdpReceiver`]) answers every data packet with an
//!   ACK and every trimmed header with a NACK (§3.2), and asks for one
//!   PULL for each; its host's pull pacer ([`PullPacer`]) sends the PULLs
//!   one data-packet time apart at the receiver's link rate (§3.2: "the
//!   receiver paces its PULLs so that the incoming data rate matches the
//!   link rate"; htsim: (MSS + 64 B) x 8 / rate / 0.99), round robin over
//!   its flows (htsim's `FairPullQueue`). An ACK or NACK that finds the
//!   pacer idle carries the pull itself (htsim's pull bit).
//!
//! Packets are numbered from 0; packet `i` carries payload bytes
//! `[i x mss, min((i + 1) x mss, size))`.

use crate::units::Ps;
use std::collections::{BTreeSet, VecDeque};

/// NDP's parameters (the transport's `mtu`/`header` give the MSS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NdpParams {
    /// Payload bytes per full packet.
    pub mss: u32,
    /// Packets of the first window (htsim `-cwnd`, default 15).
    pub init_window: u32,
    /// Retransmission timeout after the last progress (htsim's main_ndp:
    /// `setMinRTO(50000)` us, "to avoid spurious retransmits").
    pub rto: Ps,
}

/// A packet set as a bit vector (a flow's packets, by number; EQDS's too).
#[derive(Clone, Debug, Default)]
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    pub(crate) fn new(n: u32) -> Bits {
        Bits(vec![0; (n as usize).div_ceil(64)])
    }
    pub(crate) fn get(&self, i: u32) -> bool {
        self.0[(i / 64) as usize] >> (i % 64) & 1 != 0
    }
    /// Sets bit `i`; returns whether it was clear.
    pub(crate) fn set(&mut self, i: u32) -> bool {
        let word = &mut self.0[(i / 64) as usize];
        let was = *word >> (i % 64) & 1 != 0;
        *word |= 1 << (i % 64);
        !was
    }
}

/// A flow's NDP sender.
#[derive(Clone, Debug)]
pub struct NdpSender {
    pub size: u64,
    pub packets: u32,
    mss: u32,
    /// The next packet never sent.
    next_new: u32,
    acked: Bits,
    pub acked_count: u32,
    /// Packets to send again (NACKed or timed out), lowest first.
    rtx: BTreeSet<u32>,
    /// Packets the sender may send now: the first window, then the pulls.
    credit: u64,
    /// The highest pull number received.
    max_pull: u64,
    /// When the retransmission timer expires (`Ps::MAX`: not running).
    pub rto_at: Ps,
    pub retransmits: u32,
    pub timeouts: u32,
    pub nacks: u32,
}

/// One packet the sender sends now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdpSegment {
    /// Its number.
    pub index: u32,
    /// Its first payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    pub retx: bool,
}

impl NdpSender {
    /// A sender of `size` bytes (at least one packet).
    pub fn new(size: u64, params: &NdpParams) -> NdpSender {
        let packets = size.div_ceil(params.mss as u64).max(1) as u32;
        NdpSender {
            size,
            packets,
            mss: params.mss,
            next_new: 0,
            acked: Bits::new(packets),
            acked_count: 0,
            rtx: BTreeSet::new(),
            credit: params.init_window as u64,
            max_pull: 0,
            rto_at: Ps::MAX,
            retransmits: 0,
            timeouts: 0,
            nacks: 0,
        }
    }

    fn segment(&self, index: u32, retx: bool) -> NdpSegment {
        let seq = index as u64 * self.mss as u64;
        let len = (self.size.saturating_sub(seq)).min(self.mss as u64) as u32;
        NdpSegment {
            index,
            seq,
            len,
            retx,
        }
    }

    /// Whether it has a packet it may send now.
    pub fn can_send(&self) -> bool {
        self.credit > 0 && (!self.rtx.is_empty() || self.next_new < self.packets)
    }

    /// Its next packet at `now`, if it may send one: a retransmission
    /// first, else the next new packet. Starts the RTO if it is not running.
    pub fn next_segment(&mut self, now: Ps, params: &NdpParams) -> Option<NdpSegment> {
        if self.credit == 0 {
            return None;
        }
        let seg = if let Some(i) = self.rtx.pop_first() {
            self.retransmits += 1;
            self.segment(i, true)
        } else if self.next_new < self.packets {
            self.next_new += 1;
            self.segment(self.next_new - 1, false)
        } else {
            return None;
        };
        self.credit -= 1;
        if self.rto_at == Ps::MAX {
            self.rto_at = now + params.rto;
        }
        Some(seg)
    }

    /// Packet `index` was received (an ACK). Returns whether the flow is
    /// done (every packet acknowledged).
    pub fn on_ack(&mut self, now: Ps, index: u32, params: &NdpParams) -> bool {
        if index < self.packets && self.acked.set(index) {
            self.acked_count += 1;
            self.rtx.remove(&index);
            self.rto_at = now + params.rto;
        }
        self.done()
    }

    /// Packet `index` was trimmed on its way (a NACK): send it again.
    pub fn on_nack(&mut self, now: Ps, index: u32, params: &NdpParams) {
        self.nacks += 1;
        if index < self.packets && !self.acked.get(index) {
            self.rtx.insert(index);
            self.rto_at = now + params.rto;
        }
    }

    /// A PULL numbered `pull_no` (cumulative) arrived: one more packet per
    /// pull number beyond the highest seen.
    pub fn on_pull(&mut self, pull_no: u64) {
        if pull_no > self.max_pull {
            self.credit += pull_no - self.max_pull;
            self.max_pull = pull_no;
        }
    }

    /// The retransmission timer expired at `now`: every packet sent and not
    /// acknowledged is queued again, with one packet of credit to restart
    /// the pulls (htsim's `retransmit_packet` sends one at once).
    pub fn on_timeout(&mut self, now: Ps, params: &NdpParams) {
        self.timeouts += 1;
        for i in 0..self.next_new {
            if !self.acked.get(i) {
                self.rtx.insert(i);
            }
        }
        self.credit = self.credit.max(1);
        self.rto_at = if self.done() {
            Ps::MAX
        } else {
            now + params.rto
        };
    }

    pub fn done(&self) -> bool {
        self.acked_count == self.packets
    }

    /// Bytes the receiver has (acknowledged packets' payload).
    pub fn acked_bytes(&self) -> u64 {
        (0..self.packets)
            .filter(|&i| self.acked.get(i))
            .map(|i| self.segment(i, false).len as u64)
            .sum()
    }
}

/// A flow's NDP receiver.
#[derive(Clone, Debug, Default)]
pub struct NdpReceiver {
    received: Bits,
    /// Packets received (each once).
    pub count: u32,
    /// PULLs asked for so far (the last pull number).
    pub pulls: u64,
}

/// What the receiver sends back for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdpReply {
    /// ACK (data) or NACK (a trimmed header).
    pub nack: bool,
    pub index: u32,
    /// The pull number this arrival asks for.
    pub pull_no: u64,
}

impl NdpReceiver {
    pub fn new(packets: u32) -> NdpReceiver {
        NdpReceiver {
            received: Bits::new(packets),
            ..Default::default()
        }
    }

    /// Packet `index` arrived, whole or (`trimmed`) as its header: an ACK
    /// or a NACK, and one more pull.
    pub fn on_packet(&mut self, index: u32, trimmed: bool) -> NdpReply {
        if !trimmed && self.received.set(index) {
            self.count += 1;
        }
        self.pulls += 1;
        NdpReply {
            nack: trimmed,
            index,
            pull_no: self.pulls,
        }
    }
}

/// A receiving host's PULL pacer: one PULL every `spacing`, round robin
/// over the flows with pulls waiting (htsim's `NdpPullPacer` with its
/// `FairPullQueue`).
#[derive(Clone, Debug, Default)]
pub struct PullPacer {
    pub spacing: Ps,
    /// When the last PULL left (`None`: never).
    pub last: Option<Ps>,
    /// Flows with pulls waiting, in round-robin order: (flow key, the
    /// highest pull number asked for, pulls waiting).
    queue: VecDeque<(u64, u64, u32)>,
    /// A pacer event is pending.
    pub scheduled: bool,
}

/// What the pacer does with a reply's pull ([`PullPacer::offer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullNow {
    /// The ACK/NACK carries the pull itself, now.
    Piggyback,
    /// Queued; the pacer's next event is due at this time (schedule it).
    Schedule(Ps),
    /// Queued behind others; the pending event serves it.
    Queued,
}

impl PullPacer {
    pub fn new(spacing: Ps) -> PullPacer {
        PullPacer {
            spacing,
            ..Default::default()
        }
    }

    fn ready_at(&self) -> Ps {
        self.last.map_or(0, |t| t + self.spacing)
    }

    /// Flow `key` asks for pull `pull_no` at `now`.
    pub fn offer(&mut self, now: Ps, key: u64, pull_no: u64) -> PullNow {
        if self.queue.is_empty() && !self.scheduled && now >= self.ready_at() {
            self.last = Some(now);
            return PullNow::Piggyback;
        }
        match self.queue.iter_mut().find(|e| e.0 == key) {
            Some(e) => {
                e.1 = e.1.max(pull_no);
                e.2 += 1;
            }
            None => self.queue.push_back((key, pull_no, 1)),
        }
        if self.scheduled {
            return PullNow::Queued;
        }
        self.scheduled = true;
        PullNow::Schedule(self.ready_at().max(now))
    }

    /// The pacer's event at `now`: the next PULL (flow key, pull number),
    /// and when the next event is due, if pulls still wait. A flow sends
    /// one pull per turn, numbered up to what it has asked for less what
    /// still waits (a cumulative number: the sender counts from its last).
    pub fn fire(&mut self, now: Ps) -> (Option<(u64, u64)>, Option<Ps>) {
        self.scheduled = false;
        let Some((key, max_no, waiting)) = self.queue.pop_front() else {
            return (None, None);
        };
        let no = max_no - (waiting as u64 - 1);
        if waiting > 1 {
            self.queue.push_back((key, max_no, waiting - 1));
        }
        self.last = Some(now);
        let next = if self.queue.is_empty() {
            None
        } else {
            self.scheduled = true;
            Some(now + self.spacing)
        };
        (Some((key, no)), next)
    }

    /// Drops flow `key`'s waiting pulls (it finished).
    pub fn forget(&mut self, key: u64) {
        self.queue.retain(|e| e.0 != key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> NdpParams {
        NdpParams {
            mss: 9000,
            init_window: 15,
            rto: 50_000_000_000,
        }
    }

    /// The first window at once, then nothing until a pull; one packet per
    /// pull number; the last packet short.
    #[test]
    fn first_window_then_one_packet_per_pull() {
        let p = params();
        let mut s = NdpSender::new(2_000_000, &p);
        assert_eq!(s.packets, 223);
        let first: Vec<_> = std::iter::from_fn(|| s.next_segment(0, &p)).collect();
        assert_eq!(first.len(), 15);
        assert_eq!(first[14].seq, 14 * 9000);
        assert!(!s.can_send());
        s.on_pull(1);
        assert_eq!(s.next_segment(0, &p).unwrap().index, 15);
        assert!(s.next_segment(0, &p).is_none());
        s.on_pull(1); // a duplicate number grants nothing
        assert!(!s.can_send());
        s.on_pull(4); // pulls 2 and 3 were lost: made up
        assert_eq!(
            std::iter::from_fn(|| s.next_segment(0, &p)).count(),
            3,
            "pulls 2, 3, 4"
        );
        for _ in 0..300 {
            let n = s.max_pull + 1;
            s.on_pull(n);
            while s.next_segment(0, &p).is_some() {}
        }
        assert_eq!(s.next_new, 223);
        assert_eq!(s.segment(222, false).len, 2_000_000 - 222 * 9000);
    }

    /// A NACK's packet goes before new data, lowest first; an ACK retires
    /// a queued retransmission; done when all are acknowledged.
    #[test]
    fn nacked_packets_go_first_and_acks_finish() {
        let p = params();
        let mut s = NdpSender::new(5 * 9000, &p);
        while s.next_segment(0, &p).is_some() {}
        s.on_nack(1, 3, &p);
        s.on_nack(1, 1, &p);
        s.on_nack(1, 4, &p);
        s.on_ack(2, 4, &p); // 4 arrived after all (a duplicate path)
        s.on_pull(2);
        let a = s.next_segment(3, &p).unwrap();
        let b = s.next_segment(3, &p).unwrap();
        assert_eq!((a.index, a.retx, b.index, b.retx), (1, true, 3, true));
        assert!(s.next_segment(3, &p).is_none());
        for i in [0, 1, 2, 3] {
            assert!(!s.done());
            s.on_ack(4, i, &p);
        }
        assert!(s.done());
        assert_eq!(s.acked_bytes(), 45_000);
        assert_eq!(s.retransmits, 2);
    }

    /// A timeout re-queues every unacknowledged packet sent, and lets one
    /// go at once.
    #[test]
    fn timeout_requeues_the_unacknowledged() {
        let p = params();
        let mut s = NdpSender::new(30 * 9000, &p);
        let t0 = 7;
        while s.next_segment(t0, &p).is_some() {}
        assert_eq!(s.rto_at, t0 + p.rto);
        for i in 0..10 {
            s.on_ack(8, i, &p);
        }
        s.on_timeout(s.rto_at, &p);
        assert_eq!(s.rtx.len(), 5);
        assert_eq!(s.next_segment(9, &p).unwrap().index, 10);
        assert!(s.next_segment(9, &p).is_none());
    }

    /// ACK for data, NACK for a header, one pull each; a duplicate counts once.
    #[test]
    fn receiver_acks_nacks_and_pulls() {
        let mut r = NdpReceiver::new(4);
        assert_eq!(
            r.on_packet(2, true),
            NdpReply {
                nack: true,
                index: 2,
                pull_no: 1
            }
        );
        assert!(!r.on_packet(2, false).nack);
        r.on_packet(2, false);
        assert_eq!((r.count, r.pulls), (1, 3));
    }

    /// Pulls leave one spacing apart, round robin over flows; an idle
    /// pacer lets the reply carry its pull.
    #[test]
    fn pacer_spaces_pulls_and_shares_them() {
        let mut pc = PullPacer::new(100);
        assert_eq!(pc.offer(0, 1, 1), PullNow::Piggyback);
        assert_eq!(pc.offer(10, 1, 2), PullNow::Schedule(100));
        assert_eq!(pc.offer(20, 1, 3), PullNow::Queued);
        assert_eq!(pc.offer(30, 2, 1), PullNow::Queued);
        // Flow 1 (pull 2), flow 2 (pull 1), flow 1 (pull 3).
        assert_eq!(pc.fire(100), (Some((1, 2)), Some(200)));
        assert_eq!(pc.fire(200), (Some((2, 1)), Some(300)));
        assert_eq!(pc.fire(300), (Some((1, 3)), None));
        assert_eq!(pc.offer(350, 2, 2), PullNow::Schedule(400));
        assert_eq!(pc.fire(400), (Some((2, 2)), None));
        assert_eq!(pc.offer(600, 2, 3), PullNow::Piggyback);
    }
}

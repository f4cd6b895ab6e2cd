//! EQDS's endpoints as engine-free state machines (Olteanu et al., "An
//! edge-queued datagram service for all datacenter traffic", NSDI 2022),
//! with the defaults of htsim's `main_eqds.cpp` and `eqds.cpp`
//! (Broadcom/csg-htsim 841d9e7), which the comments name where the paper
//! leaves a choice open.
//!
//! * The **sender** ([`EqdsSender`]) holds credit in bytes. It starts with
//!   a speculative window (§4.1: "a sender may send a first window of
//!   data speculatively"; htsim: `-cwnd` 50 packets of MTU bytes), which it
//!   may spend only until the receiver's first reply; after that it sends
//!   only on credit the receiver's PULLs grant (§4.1), retransmissions
//!   first (lowest first, as htsim's `_rtx_queue`). Each new data packet
//!   tells the receiver how much more credit it wants, as a cumulative
//!   *pull target* in 512-byte quanta (htsim's `computePullTarget`: its
//!   backlog, at most one window, less the credit it holds). A NACK queues
//!   its packet again; an ACK (cumulative, plus the packet that caused it)
//!   retires packets. The retransmission timer covers the oldest packet in
//!   flight (htsim: `_min_rto`, 150 us plus six queue-fulls); when it
//!   expires, every packet sent longer than `rto` ago goes back on the
//!   queue and, without credit to send them, the sender asks for it with
//!   an RTS (§4.3; htsim `sendRTS`).
//! * The **receiver** ([`EqdsReceiver`]) keeps each sender's demand, the
//!   highest pull target heard less the pulls issued, and a retransmission
//!   demand: a trimmed header adds one MTU of it and is answered with a
//!   NACK (§4.3: "the receiver NACKs the trimmed packet and adds it to the
//!   pull queue"); an RTS adds what it asks for.
//! * Each receiving host's **pull pacer** ([`EqdsPacer`], in
//!   [`crate::transport::eqds_pacer`]) sends one PULL
//!   of `pull_bytes` credit (default one payload in quanta; htsim: 8
//!   quanta, 4096 B) every
//!   `spacing` (§4.2: the pull queue is served "at the rate of the
//!   receiver's link"; htsim: 0.99 x (MTU + 38 B framing) x 8 / rate),
//!   to senders owed retransmissions first, then round robin over the
//!   senders with demand, then, when no one has demand, slow pulls of
//!   speculative credit to senders whose demand it met, up to a window each
//!   (htsim's `EqdsPullPacer`: `_rtx_senders`, `_active_senders`,
//!   `_idle_senders`).
//!
//! Packets are numbered from 0; packet `i` carries payload bytes
//! `[i x mss, min((i + 1) x mss, size))`.

pub use crate::transport::eqds_pacer::{EqdsPacer, Join, Turn};
use crate::transport::ndp::Bits;
use crate::units::Ps;
use std::collections::BTreeSet;

/// Credit is asked for and granted in quanta of this many bytes (htsim's
/// `PULL_QUANTUM`).
pub const QUANTUM: i64 = 512;

/// `bytes` in quanta, rounded up (htsim's `quantize_ceil`, whose signed
/// division truncates towards zero: a small negative amount is 0).
pub fn quantize_ceil(bytes: i64) -> i64 {
    (bytes + QUANTUM - 1) / QUANTUM
}

/// EQDS's parameters (the transport's `mtu`/`header` give the MSS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EqdsParams {
    /// Payload bytes per full packet.
    pub mss: u32,
    /// Header bytes of a data packet.
    pub header: u32,
    /// Packets of MTU bytes in the speculative window and the most credit
    /// a sender asks for at once (htsim `-cwnd`, default 50).
    pub init_window: u32,
    /// Retransmission timeout of a packet in flight.
    pub rto: Ps,
    /// After the first reply, keep the speculative credit left and burn it
    /// a packet per send opportunity without sending (htsim's
    /// `spendCredit`), instead of giving it up at once.
    pub burn_leftover: bool,
}

impl EqdsParams {
    fn mtu(&self) -> i64 {
        (self.mss + self.header) as i64
    }
}

/// A flow's EQDS sender.
#[derive(Clone, Debug)]
pub struct EqdsSender {
    pub size: u64,
    pub packets: u32,
    mss: u32,
    header: u32,
    /// The next packet never sent.
    next_new: u32,
    acked: Bits,
    pub acked_count: u32,
    /// Every packet below this is acknowledged (the highest cumulative ACK).
    cum: u32,
    /// Packets to send again (NACKed or timed out), lowest first.
    rtx: BTreeSet<u32>,
    /// When each packet in flight left (`Ps::MAX`: not in flight).
    sent_at: Vec<Ps>,
    /// The packets in flight by send time, oldest first.
    in_flight: BTreeSet<(Ps, u32)>,
    /// Speculative credit (bytes), spent only while `speculating`; after
    /// that given up, or burnt (`burn`).
    spec: i64,
    /// [`EqdsParams::burn_leftover`].
    burn: bool,
    /// Credit the PULLs granted (bytes; below zero after a packet larger
    /// than what was left, as htsim's `_credit_pull`).
    pulled: i64,
    /// No reply from the receiver yet (htsim's `_speculating`).
    pub speculating: bool,
    /// The highest pull number received (quanta granted so far).
    max_pull: u64,
    /// Bytes of new packets, headers included, not yet sent (htsim's
    /// `_backlog` less retransmissions).
    backlog: i64,
    /// The most credit it asks for: `init_window` x MTU.
    window: i64,
    /// The pull target its last new packet carried (quanta, cumulative).
    pub pull_target: u64,
    /// When the oldest packet in flight times out (`Ps::MAX`: none).
    pub rto_at: Ps,
    /// When the last timeout left packets waiting for credit (the RTS).
    rts_at: Ps,
    pub retransmits: u32,
    pub timeouts: u32,
    pub nacks: u32,
    /// Quanta an RTS must ask for now (taken by the host; see
    /// `stop_speculating`).
    pub rts_due: u64,
}

/// One packet the sender sends now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EqdsSegment {
    pub index: u32,
    /// Its first payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    pub retx: bool,
    /// The pull target it carries (quanta, cumulative).
    pub pull_target: u64,
}

impl EqdsSender {
    /// A sender of `size` bytes (at least one packet).
    pub fn new(size: u64, params: &EqdsParams) -> EqdsSender {
        let packets = size.div_ceil(params.mss as u64).max(1) as u32;
        let window = params.init_window as i64 * params.mtu();
        EqdsSender {
            size,
            packets,
            mss: params.mss,
            header: params.header,
            next_new: 0,
            acked: Bits::new(packets),
            acked_count: 0,
            cum: 0,
            rtx: BTreeSet::new(),
            sent_at: vec![Ps::MAX; packets as usize],
            in_flight: BTreeSet::new(),
            spec: window,
            burn: params.burn_leftover,
            pulled: 0,
            speculating: true,
            max_pull: 0,
            // htsim's `startFlow`: every packet's header plus the payload.
            backlog: packets as i64 * params.header as i64 + size as i64,
            window,
            pull_target: 0,
            rto_at: Ps::MAX,
            rts_at: Ps::MAX,
            retransmits: 0,
            timeouts: 0,
            nacks: 0,
            rts_due: 0,
        }
    }

    fn segment(&self, index: u32, retx: bool) -> EqdsSegment {
        let seq = index as u64 * self.mss as u64;
        let len = (self.size.saturating_sub(seq)).min(self.mss as u64) as u32;
        EqdsSegment {
            index,
            seq,
            len,
            retx,
            pull_target: self.pull_target,
        }
    }

    /// Whether its credit lets a packet go: speculative credit before the
    /// first reply, pulled credit after (htsim's `spendCredit`; the credit
    /// as a whole, `credit()`, must be positive too). When it burns its
    /// speculative credit left, any positive credit (htsim's `credit() >
    /// 0`) lets it try, and a try without pulled credit burns a packet's
    /// worth ([`EqdsSender::next_segment`]).
    fn has_credit(&self) -> bool {
        if self.speculating {
            self.spec > 0
        } else if self.burn {
            self.pulled + self.spec > 0
        } else {
            self.pulled > 0 && self.pulled + self.spec > 0
        }
    }

    /// Whether it has a packet it may send now.
    pub fn can_send(&self) -> bool {
        self.has_credit() && (!self.rtx.is_empty() || self.next_new < self.packets)
    }

    /// Whether a data packet should ask for an immediate ACK: its last new
    /// packet, a retransmission, or credit overdrawn (htsim's `set_ar`).
    pub fn ack_request(&self, seg: &EqdsSegment) -> bool {
        seg.retx || self.backlog == 0 || self.pulled < 0
    }

    /// Its next packet at `now`, if it may send one: a retransmission
    /// first, else the next new packet, which carries a new pull target.
    pub fn next_segment(&mut self, now: Ps, params: &EqdsParams) -> Option<EqdsSegment> {
        if !self.has_credit() {
            return None;
        }
        let (index, retx) = if let Some(&i) = self.rtx.first() {
            (i, true)
        } else if self.next_new < self.packets {
            (self.next_new, false)
        } else {
            return None;
        };
        let bytes = self.segment(index, retx).len as i64 + self.header as i64;
        if self.pulled > 0 {
            self.pulled -= bytes;
        } else if self.speculating {
            self.spec -= bytes;
        } else {
            // htsim's `spendCredit`, neither pulled credit nor speculating
            // (only when it burns, `has_credit`): the speculative credit
            // left loses a packet's worth, so that the pull target can
            // advance, and nothing goes.
            self.spec -= bytes;
            return None;
        }
        if retx {
            self.rtx.pop_first();
            self.retransmits += 1;
        } else {
            self.next_new += 1;
            self.backlog -= bytes;
            // htsim's computePullTarget: what it still has to send, at most
            // a window, less the credit it holds, on top of the pulls so far.
            let want = self.backlog.min(self.window) - (self.pulled + self.spec);
            self.pull_target = (quantize_ceil(want) + self.max_pull as i64).max(0) as u64;
        }
        self.sent_at[index as usize] = now;
        self.in_flight.insert((now, index));
        self.update_rto(params);
        Some(self.segment(index, retx))
    }

    fn update_rto(&mut self, params: &EqdsParams) {
        self.rto_at = match self.in_flight.first() {
            Some(&(t, _)) => t + params.rto,
            None if !self.rtx.is_empty() && self.rts_at != Ps::MAX => self.rts_at + params.rto,
            None => Ps::MAX,
        };
    }

    /// The first reply ends speculation (htsim's `stopSpeculating`): the
    /// speculative credit left is given up, or kept to be burnt a packet
    /// at a time without sending (`burn`, htsim's rule; meanwhile the pull
    /// targets stay net of it); any overdraft stays as a debt.
    ///
    /// Not htsim's: a flow smaller than its window announces no demand while
    /// it speculates (its pull targets are net of the speculative credit),
    /// so if the first reply stops it with packets unsent, no credit and
    /// nothing owed, no PULL would ever come (in htsim it waits for ever; a
    /// flow starting at a busy NIC hits it). It then asks by RTS (§4.3) for
    /// what it has left, at most a window.
    fn stop_speculating(&mut self) {
        if self.speculating
            && self.next_new < self.packets
            && self.pulled <= 0
            && self.pull_target <= self.max_pull
        {
            self.rts_due = quantize_ceil(self.backlog.min(self.window)) as u64;
        }
        self.speculating = false;
        if !self.burn {
            self.spec = self.spec.min(0);
        }
    }

    fn leave_flight(&mut self, index: u32) -> bool {
        let t = std::mem::replace(&mut self.sent_at[index as usize], Ps::MAX);
        t != Ps::MAX && self.in_flight.remove(&(t, index))
    }

    fn acknowledge(&mut self, index: u32) {
        if index < self.packets && self.acked.set(index) {
            self.acked_count += 1;
            self.rtx.remove(&index);
            self.leave_flight(index);
        }
    }

    /// An ACK: every packet below `cum` and packet `index` arrived.
    /// Returns whether the flow is done (every packet acknowledged).
    pub fn on_ack(&mut self, cum: u32, index: u32, params: &EqdsParams) -> bool {
        while self.cum < cum.min(self.packets) {
            let i = self.cum;
            self.acknowledge(i);
            self.cum += 1;
        }
        self.acknowledge(index);
        self.stop_speculating();
        self.update_rto(params);
        self.done()
    }

    /// Packet `index` was trimmed on its way (a NACK): send it again.
    pub fn on_nack(&mut self, index: u32, params: &EqdsParams) {
        self.nacks += 1;
        if index < self.packets && !self.acked.get(index) && self.leave_flight(index) {
            self.rtx.insert(index);
        }
        self.stop_speculating();
        self.update_rto(params);
    }

    /// A PULL numbered `pull_no` (cumulative quanta) arrived: the quanta
    /// beyond the highest seen become credit (htsim's `handlePull`).
    pub fn on_pull(&mut self, pull_no: u64) {
        if pull_no > self.max_pull {
            self.pulled += (pull_no - self.max_pull) as i64 * QUANTUM;
            self.max_pull = pull_no;
        }
        self.stop_speculating();
    }

    /// The retransmission timer expired at `now`: every packet in flight
    /// for `rto` or longer is queued again. Returns the quanta an RTS must
    /// ask for (one MTU per packet waiting), 0 when its credit lets it send.
    pub fn on_timeout(&mut self, now: Ps, params: &EqdsParams) -> u64 {
        self.timeouts += 1;
        while let Some(&(t, i)) = self.in_flight.first() {
            if t + params.rto > now {
                break;
            }
            self.leave_flight(i);
            self.rtx.insert(i);
        }
        let rts = if self.rtx.is_empty() || self.has_credit() {
            // Nothing waits for credit: no RTS timer (the packets it sends
            // now arm the timer of packets in flight).
            self.rts_at = Ps::MAX;
            0
        } else {
            self.rts_at = now;
            self.rtx.len() as u64 * quantize_ceil(params.mtu()) as u64
        };
        self.update_rto(params);
        rts
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

/// A flow's EQDS receiver.
#[derive(Clone, Debug, Default)]
pub struct EqdsReceiver {
    received: Bits,
    packets: u32,
    /// Packets received (each once).
    pub count: u32,
    /// Every packet below this has arrived (the cumulative ACK).
    pub expected: u32,
    /// The highest pull target heard (quanta).
    highest_target: u64,
    /// Quanta pulled so far (the last pull number).
    pub latest_pull: u64,
    /// Quanta owed for retransmissions.
    pub rtx_backlog: u64,
    /// In its pacer's list of senders with demand.
    pub in_active: bool,
    /// Trimmed headers received.
    pub trimmed: u32,
}

/// What the receiver sends back for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EqdsReply {
    /// Every packet below `cum` and packet `index` arrived.
    Ack { cum: u32, index: u32 },
    /// Packet `index` arrived trimmed.
    Nack { index: u32 },
}

impl EqdsReceiver {
    pub fn new(packets: u32) -> EqdsReceiver {
        EqdsReceiver {
            received: Bits::new(packets),
            packets,
            ..Default::default()
        }
    }

    /// Demand not yet pulled (htsim's `EqdsSink::backlog`).
    pub fn backlog(&self) -> u64 {
        self.highest_target.saturating_sub(self.latest_pull)
    }

    /// A higher pull target joins the pacer's active list, unless the
    /// receiver is owed retransmissions (htsim's `handlePullTarget`).
    fn pull_target(&mut self, target: u64, join: &mut Join) {
        if target > self.highest_target {
            self.highest_target = target;
            if self.rtx_backlog == 0 && !self.in_active {
                self.in_active = true;
                join.active = true;
            }
        }
    }

    /// Packet `index` arrived, whole or (`trimmed`) as its header, with
    /// pull target `target`: an ACK or a NACK, and the lists to join.
    pub fn on_packet(
        &mut self,
        index: u32,
        trimmed: bool,
        target: u64,
        mtu: u32,
    ) -> (EqdsReply, Join) {
        let mut join = Join::default();
        let dup = index >= self.packets || self.received.get(index);
        if dup {
            let reply = EqdsReply::Ack {
                cum: self.expected,
                index: index.min(self.packets.saturating_sub(1)),
            };
            return (reply, join);
        }
        self.pull_target(target, &mut join);
        if trimmed {
            // §4.3: NACK it and owe its sender one MTU of credit to resend.
            self.trimmed += 1;
            join.rtx = self.rtx_backlog == 0;
            self.rtx_backlog += quantize_ceil(mtu as i64) as u64;
            return (EqdsReply::Nack { index }, join);
        }
        self.received.set(index);
        self.count += 1;
        while self.expected < self.packets && self.received.get(self.expected) {
            self.expected += 1;
        }
        let reply = EqdsReply::Ack {
            cum: self.expected,
            index,
        };
        (reply, join)
    }

    /// An RTS asking for `quanta` of retransmission credit (htsim's
    /// `processRts`).
    pub fn on_rts(&mut self, quanta: u64) -> Join {
        let mut join = Join::default();
        if self.rtx_backlog == 0 {
            join.rtx = true;
            if !self.in_active {
                self.in_active = true;
                join.active = true;
            }
        }
        self.rtx_backlog += quanta;
        join
    }

    /// One PULL of `quanta`: its cumulative number (htsim's `EqdsSink::pull`).
    pub fn pull(&mut self, quanta: u64) -> u64 {
        self.rtx_backlog = self.rtx_backlog.saturating_sub(quanta);
        self.latest_pull += quanta;
        self.latest_pull
    }

    /// Credit pulled beyond the highest pull target (quanta): the slow
    /// pulls' speculative credit (htsim's `EqdsSink::slowCredit`).
    pub fn slow_credit(&self) -> u64 {
        self.latest_pull.saturating_sub(self.highest_target)
    }

    pub fn complete(&self) -> bool {
        self.count == self.packets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> EqdsParams {
        EqdsParams {
            mss: 4086,
            header: 64,
            init_window: 50,
            rto: 220_000_000,
            burn_leftover: false,
        }
    }

    fn drain(s: &mut EqdsSender, now: Ps, params: &EqdsParams) -> Vec<EqdsSegment> {
        std::iter::from_fn(|| s.next_segment(now, params)).collect()
    }

    /// The speculative window is 50 MTUs: 50 full packets, then nothing.
    /// The first packet asks for what the window lacks after it: 4150 B,
    /// 9 quanta; the last speculative one for the whole window.
    #[test]
    fn speculative_window_and_pull_targets() {
        let p = params();
        let mut s = EqdsSender::new(2_000_000, &p);
        assert_eq!(s.packets, 490);
        let first = drain(&mut s, 0, &p);
        assert_eq!(first.len(), 50);
        assert_eq!(first[0].pull_target, 9);
        // After 50 packets no credit is held: the target is the window,
        // 207,500 B = 405.3 quanta, rounded up.
        assert_eq!(first[49].pull_target, 406);
        assert!(!s.can_send());
    }

    /// The first reply ends speculation and gives up the speculative
    /// credit left; then a packet goes only on pulled credit: 100 PULLs of
    /// 8 quanta (409,600 B) let 99 packets of 4150 B go (the 99th
    /// overdraws by 1250 B, which the next pulls pay back).
    #[test]
    fn after_the_first_reply_only_pulls_grant_credit() {
        let p = params();
        let mut s = EqdsSender::new(2_000_000, &p);
        assert_eq!(drain(&mut s, 0, &p).len(), 50);
        let mut s = EqdsSender::new(2_000_000, &p);
        for _ in 0..10 {
            s.next_segment(0, &p).unwrap();
        }
        assert!(!s.on_ack(1, 0, &p));
        assert!(!s.speculating);
        assert!(!s.can_send(), "speculative credit left is given up");
        for n in 1..=100 {
            s.on_pull(8 * n);
        }
        assert_eq!(drain(&mut s, 1, &p).len(), 99);
        assert_eq!(s.pulled, 409_600 - 99 * 4150);
        s.on_pull(800); // a duplicate number grants nothing
        assert!(!s.can_send());
        s.on_pull(803); // 1536 B: back above zero
        assert_eq!(drain(&mut s, 2, &p).len(), 1);
    }

    /// htsim's rule (`burn_leftover`): the 40 packets of speculative credit
    /// left at the first reply stay, net of the pull targets; each try to
    /// send without pulled credit burns one packet's worth and sends
    /// nothing; pulled credit is spent first and sends.
    #[test]
    fn leftover_speculative_credit_burns_a_packet_per_try() {
        let p = EqdsParams {
            burn_leftover: true,
            ..params()
        };
        let mut s = EqdsSender::new(2_000_000, &p);
        for _ in 0..10 {
            s.next_segment(0, &p).unwrap();
        }
        assert!(!s.on_ack(1, 0, &p));
        assert_eq!(s.spec, 40 * 4150);
        assert!(s.can_send(), "credit() > 0: it may try");
        assert_eq!(s.next_segment(1, &p), None, "a try burns");
        assert_eq!(s.spec, 39 * 4150);
        s.on_pull(8);
        let seg = s.next_segment(2, &p).unwrap();
        assert_eq!(seg.index, 10, "pulled credit sends");
        // Its target: the window less the credit held (39 x 4150 B left,
        // 4096 - 4150 B pulled), on top of the 8 quanta pulled.
        let want = 50 * 4150 - (39 * 4150 + 4096 - 4150);
        assert_eq!(seg.pull_target, (quantize_ceil(want) + 8) as u64);
        let mut tries = 0;
        while s.can_send() {
            assert_eq!(s.next_segment(3, &p), None);
            tries += 1;
        }
        // 39 x 4150 B less the 54 B overdraft: 39 tries to reach <= 0.
        assert_eq!(tries, 39);
        assert!(s.pulled + s.spec <= 0);
        // Given up (the default), the same reply leaves nothing to try.
        let mut g = EqdsSender::new(2_000_000, &params());
        for _ in 0..10 {
            g.next_segment(0, &params()).unwrap();
        }
        g.on_ack(1, 0, &params());
        assert!(!g.can_send());
    }

    /// A NACK's packet goes first, asking for an ACK; ACKs (cumulative and
    /// selective) finish the flow; the last new packet asks for an ACK.
    /// A flow smaller than its window stopped before it sent everything
    /// asks by RTS for the rest (it announced no demand); a large one does
    /// not (its pull targets announced a window).
    #[test]
    fn a_small_flow_stopped_early_asks_by_rts() {
        let p = params();
        let mut small = EqdsSender::new(10 * p.mss as u64, &p);
        for _ in 0..4 {
            small.next_segment(0, &p).unwrap();
        }
        assert_eq!(small.pull_target, 0, "no demand announced");
        small.on_ack(1, 0, &p);
        let left = 6 * (p.mss + p.header) as i64;
        assert_eq!(small.rts_due, quantize_ceil(left) as u64);
        let mut large = EqdsSender::new(1000 * p.mss as u64, &p);
        for _ in 0..4 {
            large.next_segment(0, &p).unwrap();
        }
        large.on_ack(1, 0, &p);
        assert_eq!(large.rts_due, 0);
    }

    #[test]
    fn nacks_requeue_and_acks_finish() {
        let p = params();
        let mut s = EqdsSender::new(5 * 4086, &p);
        let segs = drain(&mut s, 0, &p);
        assert_eq!(segs.len(), 5);
        assert!(s.ack_request(&segs[4]), "the last new packet");
        s.on_nack(3, &p);
        s.on_nack(1, &p);
        assert!(!s.can_send(), "no pulled credit yet");
        s.on_pull(20);
        let a = s.next_segment(1, &p).unwrap();
        assert_eq!((a.index, a.retx), (1, true));
        assert!(s.ack_request(&a));
        assert!(!s.on_ack(1, 4, &p));
        assert!(!s.on_ack(1, 2, &p));
        assert!(!s.on_ack(3, 1, &p));
        assert_eq!(s.next_segment(2, &p).unwrap().index, 3);
        assert!(s.on_ack(5, 3, &p));
        assert_eq!(s.acked_bytes(), 5 * 4086);
        assert_eq!((s.retransmits, s.nacks), (2, 2));
        assert_eq!(s.rto_at, Ps::MAX, "nothing in flight");
    }

    /// The timer covers the oldest packet in flight; a timeout requeues the
    /// packets in flight for `rto` or longer and, without credit, asks for
    /// one MTU (9 quanta) per packet.
    #[test]
    fn timeout_requeues_the_old_and_asks_by_rts() {
        let p = params();
        let mut s = EqdsSender::new(10 * 4086, &p);
        for t in 0..4 {
            s.next_segment(t * 1000, &p).unwrap();
        }
        assert_eq!(s.rto_at, p.rto);
        s.on_ack(1, 0, &p);
        assert_eq!(s.rto_at, 1000 + p.rto);
        let rts = s.on_timeout(2000 + p.rto, &p);
        assert_eq!(rts, 2 * 9, "packets 1 and 2; 3 left 1 ns later");
        assert_eq!(s.rto_at, 3000 + p.rto);
        s.on_pull(9);
        assert_eq!(s.next_segment(3000 + p.rto, &p).unwrap().index, 1);
    }

    /// A trimmed header: a NACK, one MTU owed, the retransmission list
    /// joined once; a whole packet: the cumulative ACK; a duplicate: an
    /// ACK and nothing owed.
    #[test]
    fn receiver_nacks_trims_and_pulls() {
        let mut r = EqdsReceiver::new(4);
        let (reply, join) = r.on_packet(1, true, 20, 4150);
        assert_eq!(reply, EqdsReply::Nack { index: 1 });
        // Its pull target is heard first (htsim's processTrimmed): both lists.
        assert_eq!(
            join,
            Join {
                active: true,
                rtx: true
            }
        );
        assert_eq!(r.rtx_backlog, 9);
        let (_, join) = r.on_packet(2, true, 21, 4150);
        assert!(!join.rtx && !join.active);
        assert_eq!(
            r.on_packet(0, false, 22, 4150).0,
            EqdsReply::Ack { cum: 1, index: 0 }
        );
        assert_eq!(
            r.on_packet(0, false, 22, 4150).0,
            EqdsReply::Ack { cum: 1, index: 0 }
        );
        assert_eq!(r.pull(8), 8);
        assert_eq!(r.rtx_backlog, 10);
        assert_eq!(r.backlog(), 22 - 8);
        assert_eq!(r.trimmed, 2);
    }
}

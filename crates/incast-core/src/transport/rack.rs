//! RACK-TLP loss detection (RFC 8985): the sender-side state of RACK's
//! time-based loss rule (§6) and of the Tail Loss Probe (§7).
//!
//! Wired into [`super::TcpFlow`]'s SACK recovery by `recovery = "sack_rack"`
//! ([`super::sack_rack`]); this file is the algorithm on its own.
//!
//! Segments lie on fixed `mss` boundaries from byte 0 (as the scoreboard's),
//! so a segment is named by its first byte and its state kept in a deque
//! indexed by `(seq - base) / mss`.
//!
//! Choices the RFC leaves open, and what this does:
//! * The reordering window is static: `min(min_RTT / 4, SRTT)` (§6.2 step 4
//!   with `RACK.reo_wnd_mult = 1` and no DSACK-driven adaptation; incast's
//!   receivers send no DSACK).
//! * The retransmission ambiguity check of §6.2 step 2 uses the echoed
//!   send time every incast ACK carries (the RFC's TSecr).

use crate::units::{Ps, SEC};
use std::collections::VecDeque;

/// RFC 8985 §7.2: the worst-case delayed-ACK time, when the receiver
/// delays ACKs ("WCDelAckT ... 200 ms").
pub const WC_DEL_ACK_T: Ps = SEC / 5;

/// Linux's TCP_TIMEOUT_MIN, 2 jiffies: 2 ms at HZ = 1000 (include/net/tcp.h),
/// the floor Linux adds to the PTO's 2 SRTT.
pub const LINUX_TIMEOUT_MIN: Ps = 2 * crate::units::MS;

/// One segment's RACK state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SegState {
    /// RFC 8985 §6.1 Segment.xmit_ts: its latest transmission.
    xmit_ts: Ps,
    retransmitted: bool,
    /// Delivered (cumulatively ACKed or SACKed).
    delivered: bool,
    /// Marked lost by RACK and not retransmitted since.
    lost: bool,
    /// Marked lost by RACK at some point and not delivered since (its
    /// original transmission no longer counts as in flight).
    marked: bool,
    /// Sent at all (a gap filled in the deque is not).
    sent: bool,
}

/// RACK-TLP's per-flow state.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    mss: u64,
    /// First byte of `segs[0]`.
    base: u64,
    segs: VecDeque<SegState>,
    /// RFC 8985 §6.1 RACK.xmit_ts and RACK.end_seq: the most recently sent
    /// segment known delivered.
    pub xmit_ts: Ps,
    pub end_seq: u64,
    /// RFC 8985 §6.1 RACK.rtt: the RTT of that segment.
    pub rtt: Ps,
    /// The connection's minimum RTT (RFC 8985 §6.2 step 4's min_RTT).
    pub min_rtt: Option<Ps>,
    /// RFC 8985 §7.1 TLP.end_seq: the probe outstanding (None: none).
    pub tlp_end_seq: Option<u64>,
    /// Segments with `lost` set.
    pending_lost: usize,
    /// Segments with `marked` set.
    marked: usize,
}

/// What [`Rack::detect_loss`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Detection {
    /// First bytes of the segments newly marked lost, ascending.
    pub lost: Vec<u64>,
    /// RFC 8985 §6.2 step 5: time from now until the latest of the
    /// segments not yet past the reordering window may be deemed lost (the
    /// RACK reordering timer); None when no such segment exists.
    pub timeout: Option<Ps>,
}

impl Rack {
    /// Gives back the memory of segments no longer tracked (a finished
    /// sender's, in a node-ordered flow table whose slots stay: nothing
    /// changes but the capacity).
    pub fn shrink(&mut self) {
        self.segs.shrink_to_fit();
    }

    /// The segments' allocated bytes.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.segs.capacity() * std::mem::size_of::<SegState>()
    }

    pub fn new(mss: u64) -> Rack {
        Rack {
            mss,
            ..Default::default()
        }
    }

    fn index(&self, seq: u64) -> Option<usize> {
        let i = seq.checked_sub(self.base)? / self.mss;
        (i < self.segs.len() as u64).then_some(i as usize)
    }

    /// A segment starting at `seq` leaves at `now` (RFC 8985 §6.1: record
    /// Segment.xmit_ts; a retransmission is marked as one and is no longer lost).
    pub fn on_send(&mut self, seq: u64, now: Ps) {
        if self.segs.is_empty() {
            self.base = seq - seq % self.mss;
        }
        match self.index(seq) {
            Some(i) => {
                let s = &mut self.segs[i];
                s.xmit_ts = now;
                s.retransmitted = s.sent;
                s.sent = true;
                self.pending_lost -= s.lost as usize;
                s.lost = false;
            }
            None => {
                // Below the cumulative ACK (already forgotten): nothing to track.
                let Some(off) = seq.checked_sub(self.base) else {
                    return;
                };
                let i = off / self.mss;
                while (self.segs.len() as u64) < i {
                    self.segs.push_back(SegState::default());
                }
                self.segs.push_back(SegState {
                    xmit_ts: now,
                    sent: true,
                    ..Default::default()
                });
            }
        }
    }

    /// RFC 8985 §6.2 steps 1-3 for the segment `[seq, end)` newly delivered
    /// (cumulatively ACKed or SACKed) by an ACK arriving at `now` that
    /// echoes the send time `echo_ts`.
    pub fn on_delivered(&mut self, seq: u64, end: u64, now: Ps, echo_ts: Ps) {
        let Some(i) = self.index(seq) else { return };
        let s = self.segs[i];
        if !s.sent || s.delivered {
            return;
        }
        self.forget_loss(i);
        self.segs[i].delivered = true;
        // Step 2: "If Segment.retransmitted is TRUE and ACK.ts_option.echo_reply
        // < Segment.xmit_ts" the ACK is for an earlier transmission: no sample.
        if s.retransmitted && echo_ts < s.xmit_ts {
            return;
        }
        let rtt = now - s.xmit_ts;
        // Step 2: "If Segment.retransmitted is TRUE and rtt < min_rtt", skip
        // (the segment was delivered by its original transmission).
        if s.retransmitted && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        // Step 2: "RACK.rtt = rtt"; RACK_sent_after() orders by time, then
        // by end sequence (§6.2 step 2).
        if Self::sent_after(s.xmit_ts, end, self.xmit_ts, self.end_seq) {
            self.rtt = rtt;
            self.xmit_ts = s.xmit_ts;
            self.end_seq = end;
        }
    }

    /// [`Rack::on_delivered`] for every segment starting in `[from, to)`.
    pub fn on_delivered_range(&mut self, from: u64, to: u64, now: Ps, echo_ts: Ps) {
        let first = from.saturating_sub(self.base).div_ceil(self.mss);
        let mut seq = self.base + first * self.mss;
        while seq < to && seq < self.base + self.segs.len() as u64 * self.mss {
            self.on_delivered(seq, seq + self.mss, now, echo_ts);
            seq += self.mss;
        }
    }

    /// RFC 8985 §6.2 RACK_sent_after(t1, seq1, t2, seq2).
    fn sent_after(t1: Ps, seq1: u64, t2: Ps, seq2: u64) -> bool {
        t1 > t2 || (t1 == t2 && seq1 > seq2)
    }

    /// Segment `i` is no longer lost (delivered or forgotten).
    fn forget_loss(&mut self, i: usize) {
        let s = &mut self.segs[i];
        self.pending_lost -= s.lost as usize;
        self.marked -= s.marked as usize;
        s.lost = false;
        s.marked = false;
    }

    /// The cumulative ACK reached `una`: forget the segments below it
    /// (after [`Rack::on_delivered`] has taken their samples).
    pub fn advance(&mut self, una: u64) {
        while !self.segs.is_empty() && self.base + self.mss <= una {
            self.forget_loss(0);
            self.segs.pop_front();
            self.base += self.mss;
        }
    }

    /// RFC 8985 §6.2 step 4: the reordering window, static
    /// (`RACK.reo_wnd_mult` = 1, no DSACK): min(min_RTT / 4, SRTT).
    pub fn reo_wnd(&self, srtt: Ps) -> Ps {
        self.min_rtt.map_or(0, |m| (m / 4).min(srtt))
    }

    /// RFC 8985 §6.2 step 5, RACK_detect_loss(): every segment not
    /// delivered, not already lost, sent before RACK.xmit_ts (ties by
    /// sequence) and whose `xmit_ts + RACK.rtt + reo_wnd` has passed is lost.
    ///
    /// Original transmissions leave in sequence order, and a retransmission
    /// later than its original: the walk stops at the first original sent
    /// after RACK.xmit_ts, as every segment above it was sent later still.
    pub fn detect_loss(&mut self, now: Ps, srtt: Ps) -> Detection {
        let reo_wnd = self.reo_wnd(srtt);
        let mut out = Detection::default();
        for (i, s) in self.segs.iter_mut().enumerate() {
            let seq = self.base + i as u64 * self.mss;
            if !s.sent || s.delivered || s.lost {
                continue;
            }
            if !Self::sent_after(self.xmit_ts, self.end_seq, s.xmit_ts, seq + self.mss) {
                if !s.retransmitted {
                    break;
                }
                continue;
            }
            let deadline = s.xmit_ts + self.rtt + reo_wnd;
            if deadline <= now {
                s.lost = true;
                self.pending_lost += 1;
                self.marked += !s.marked as usize;
                s.marked = true;
                out.lost.push(seq);
            } else {
                let remaining = deadline - now;
                out.timeout = Some(out.timeout.map_or(remaining, |t| t.max(remaining)));
            }
        }
        out
    }

    /// Segment `seq` is marked lost by RACK and not retransmitted since.
    pub fn is_lost(&self, seq: u64) -> bool {
        self.pending_lost > 0 && self.index(seq).is_some_and(|i| self.segs[i].lost)
    }

    /// Some segment is marked lost and not retransmitted since.
    pub fn has_lost(&self) -> bool {
        self.pending_lost > 0
    }

    /// The first byte of the lowest segment below `below` marked lost and
    /// not retransmitted since.
    pub fn first_lost(&self, below: u64) -> Option<u64> {
        if self.pending_lost == 0 {
            return None;
        }
        let i = self.segs.iter().position(|s| s.lost)?;
        let seq = self.base + i as u64 * self.mss;
        (seq < below).then_some(seq)
    }

    /// The segments marked lost and not delivered since, as (first byte,
    /// not retransmitted since the mark), ascending.
    pub fn marked_segments(&self) -> impl Iterator<Item = (u64, bool)> + '_ {
        let any = self.marked > 0;
        self.segs
            .iter()
            .enumerate()
            .take_while(move |_| any)
            .filter(|(_, s)| s.marked)
            .map(|(i, s)| (self.base + i as u64 * self.mss, s.lost))
    }

    /// RFC 8985 §6.3 / RFC 6298 §5.4: after an RTO every outstanding segment
    /// is sent again from SND.UNA; RACK's marks and the probe are reset.
    pub fn on_rto(&mut self) {
        for i in 0..self.segs.len() {
            self.forget_loss(i);
        }
        self.tlp_end_seq = None;
    }

    /// RFC 8985 §7.2 the probe timeout: `2 * SRTT`, plus WCDelAckT when one
    /// segment is in flight and the receiver delays ACKs; 1 s without an
    /// RTT sample; and never later than the RTO would fire (`rto_left`).
    pub fn pto(srtt: Option<Ps>, flight_segments: u64, delayed_ack: bool, rto_left: Ps) -> Ps {
        let pto = match srtt {
            Some(srtt) => {
                let mut pto = 2 * srtt;
                if flight_segments == 1 && delayed_ack {
                    pto += WC_DEL_ACK_T;
                }
                pto
            }
            None => SEC,
        };
        pto.min(rto_left)
    }

    /// Linux's probe timeout (`tcp_schedule_loss_probe`, the default with
    /// `tcp_early_retrans = 3`): `2 * SRTT` plus TCP_TIMEOUT_MIN (2 jiffies,
    /// [`LINUX_TIMEOUT_MIN`]), or plus TCP_RTO_MIN (200 ms, [`WC_DEL_ACK_T`])
    /// whatever the receiver's ACK policy when one segment is in flight;
    /// 1 s without a sample; never later than the RTO would fire.
    pub fn pto_linux(srtt: Option<Ps>, flight_segments: u64, rto_left: Ps) -> Ps {
        let pto = match srtt {
            Some(srtt) if flight_segments == 1 => 2 * srtt + WC_DEL_ACK_T,
            Some(srtt) => 2 * srtt + LINUX_TIMEOUT_MIN,
            None => SEC,
        };
        pto.min(rto_left)
    }

    /// RFC 8985 §7.3: a probe may be sent only if none is outstanding (one
    /// probe per tail: "TLP.end_seq is None").
    pub fn may_probe(&self) -> bool {
        self.tlp_end_seq.is_none()
    }

    /// RFC 8985 §7.3: a probe `[.., end)` left; remember it.
    pub fn on_probe(&mut self, end: u64) {
        self.tlp_end_seq = Some(end);
    }

    /// RFC 8985 §7.4 (simplified): the probe's episode ends when the
    /// cumulative ACK passes TLP.end_seq; another tail may then be probed.
    pub fn on_ack_for_probe(&mut self, una: u64) {
        if self.tlp_end_seq.is_some_and(|e| una >= e) {
            self.tlp_end_seq = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    const MSS: u64 = 1000;

    /// Segments 0..n sent 1 us apart from t = 1 us.
    fn sent(n: u64) -> Rack {
        let mut r = Rack::new(MSS);
        for k in 0..n {
            r.on_send(k * MSS, (k + 1) * US);
        }
        r
    }

    /// RFC 8985 §6.2: a segment sent before the last delivered one is lost
    /// once RACK.rtt + reo_wnd has passed since it left, not before.
    #[test]
    fn a_hole_is_lost_after_the_reordering_window_not_before() {
        let mut r = sent(4);
        // Segment 3 (sent at 4 us) SACKed at 104 us: RACK.rtt = 100 us.
        r.on_delivered(3000, 4000, 104 * US, 4 * US);
        assert_eq!((r.rtt, r.end_seq, r.xmit_ts), (100 * US, 4000, 4 * US));
        // reo_wnd = min_RTT / 4 = 25 us. Segment 0 left at 1 us: deadline
        // 126 us; segment 2 at 3 us: 128 us.
        let d = r.detect_loss(104 * US, 100 * US);
        assert!(
            d.lost.is_empty(),
            "reordering within the window is not loss"
        );
        assert_eq!(
            d.timeout,
            Some(24 * US),
            "the RACK timer: segment 2's deadline"
        );
        let d = r.detect_loss(126 * US, 100 * US);
        assert_eq!(d.lost, vec![0]);
        let d = r.detect_loss(128 * US, 100 * US);
        assert_eq!(d.lost, vec![1000, 2000]);
        assert!(r.is_lost(1000) && !r.is_lost(3000));
    }

    /// Reordering: the earlier segment arrives within the window; nothing
    /// is marked lost.
    #[test]
    fn reordering_within_the_window_is_not_loss() {
        let mut r = sent(3);
        r.on_delivered(2000, 3000, 103 * US, 3 * US);
        r.on_delivered(0, 1000, 110 * US, US);
        r.on_delivered(1000, 2000, 110 * US, 2 * US);
        r.advance(3000);
        let d = r.detect_loss(1000 * US, 100 * US);
        assert_eq!(d, Detection::default());
    }

    /// A window delivered in reverse order, every segment within the
    /// reordering window of the newest: detect_loss after each ACK marks
    /// nothing lost, and arms the timer for what is still missing.
    #[test]
    fn reverse_delivery_within_the_window_marks_nothing() {
        let mut r = sent(8);
        for (k, seg) in (0..8u64).rev().enumerate() {
            // Segment 7 (sent at 8 us) at 108 us, the others 2 us apart up to 122 us.
            let now = 108 * US + 2 * k as u64 * US;
            r.on_delivered(seg * MSS, (seg + 1) * MSS, now, (seg + 1) * US);
            let d = r.detect_loss(now, 100 * US);
            assert!(d.lost.is_empty(), "segment {seg} at {now}");
            assert_eq!(d.timeout.is_some(), seg > 0, "segment {seg}");
        }
        r.advance(8 * MSS);
        assert_eq!(r.detect_loss(SEC, 100 * US), Detection::default());
    }

    /// A lost retransmission: the retransmission of segment 0 leaves at
    /// 200 us; a new segment sent after it is delivered; once the window
    /// passes, the retransmission is lost too (RFC 8985 §3.3's lost
    /// retransmission, which RFC 6675 repairs only by the RTO).
    #[test]
    fn a_lost_retransmission_is_detected_by_time() {
        let mut r = sent(3);
        r.on_delivered(1000, 2000, 102 * US, 2 * US);
        r.on_delivered(2000, 3000, 103 * US, 3 * US);
        let d = r.detect_loss(130 * US, 100 * US);
        assert_eq!(d.lost, vec![0]);
        // Retransmitted at 200 us (no longer lost), then new data at 201 us.
        r.on_send(0, 200 * US);
        assert!(!r.is_lost(0));
        r.on_send(3000, 201 * US);
        r.on_delivered(3000, 4000, 301 * US, 201 * US);
        let d = r.detect_loss(301 * US, 100 * US);
        assert!(d.lost.is_empty());
        assert_eq!(d.timeout, Some(24 * US));
        let d = r.detect_loss(325 * US, 100 * US);
        assert_eq!(d.lost, vec![0], "the retransmission is lost");
    }

    /// RFC 8985 §6.2 step 2: an ACK echoing a time before the
    /// retransmission answers the original: no RTT sample from it.
    #[test]
    fn ambiguous_ack_of_a_retransmission_takes_no_sample() {
        let mut r = sent(2);
        r.on_delivered(1000, 2000, 102 * US, 2 * US);
        r.on_send(0, 150 * US);
        r.on_delivered(0, 1000, 160 * US, US);
        assert_eq!((r.rtt, r.end_seq), (100 * US, 2000));
    }

    /// RFC 8985 §7.2: PTO = 2 SRTT, + WCDelAckT for a single segment with
    /// delayed ACKs, 1 s without a sample, capped by the RTO.
    #[test]
    fn probe_timeout() {
        assert_eq!(Rack::pto(Some(100 * US), 5, false, SEC), 200 * US);
        assert_eq!(Rack::pto(Some(100 * US), 1, false, SEC), 200 * US);
        assert_eq!(
            Rack::pto(Some(100 * US), 1, true, SEC),
            200 * US + WC_DEL_ACK_T
        );
        assert_eq!(Rack::pto(None, 5, false, 3 * SEC), SEC);
        assert_eq!(Rack::pto(Some(100 * US), 5, false, 150 * US), 150 * US);
        let ms = crate::units::MS;
        assert_eq!(Rack::pto_linux(Some(100 * US), 5, SEC), 200 * US + 2 * ms);
        assert_eq!(Rack::pto_linux(Some(100 * US), 1, 10 * ms), 10 * ms);
        assert_eq!(Rack::pto_linux(None, 5, 3 * SEC), SEC);
    }

    /// RFC 8985 §7.3: one probe per tail.
    #[test]
    fn one_probe_per_tail() {
        let mut r = sent(4);
        assert!(r.may_probe());
        r.on_probe(4000);
        assert!(!r.may_probe());
        r.on_ack_for_probe(3000);
        assert!(!r.may_probe());
        r.on_ack_for_probe(4000);
        assert!(r.may_probe());
    }
}

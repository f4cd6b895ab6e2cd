//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-00).
//!
//! A model-based congestion control (BBR) needs the rate at which the path
//! delivered data. The sender records, for every segment it sends, how much
//! had been delivered when it left (`delivered`), when that count last moved
//! (`delivered_time`), and the send time of the segment that opened the
//! current sending interval (`first_sent_time`). When an ACK delivers
//! segments, the newest of them gives a rate sample: the bytes delivered
//! since it was sent, over the longer of the send and the ACK intervals
//! (§3.3). Samples taken while the sender had nothing to send are marked
//! application-limited (§3.4), so the estimator can tell a slow path from a
//! quiet application.
//!
//! This transport has cumulative ACKs only (no SACK): a segment counts as
//! delivered when the cumulative ACK passes its end. Duplicate ACKs deliver
//! nothing here (a SACK sender would count the segment each one reports), so
//! the ACK that ends a loss repair delivers the whole repaired window at once;
//! the sample's `send_elapsed` term bounds the rate that burst implies.
//!
//! Segments start on fixed `mss` boundaries, so a segment's index is
//! `seq / mss`; the records of the segments in flight are a ring indexed by it.

use crate::units::{Ps, SEC};
use std::collections::VecDeque;

/// What one ACK says about the delivery rate (draft §3.3, `rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Bytes delivered so far by the connection, this ACK included (`C.delivered`).
    pub delivered_total: u64,
    /// `C.delivered` when the newest segment this ACK delivered was sent
    /// (`rs.prior_delivered`); `None` if the ACK delivered nothing.
    pub prior_delivered: Option<u64>,
    /// Bytes delivered over the sample's interval (`rs.delivered`).
    pub delivered: u64,
    /// The sample's interval: the longer of the send and ACK intervals (`rs.interval`).
    pub interval: Ps,
    /// Delivery rate in bytes per second; `None` when the ACK gives no
    /// reliable sample (nothing delivered, or an interval shorter than the
    /// minimum RTT, §3.3).
    pub delivery_rate: Option<f64>,
    /// The newest delivered segment was sent while application-limited.
    pub is_app_limited: bool,
}

/// Per-segment state recorded at send (draft §3.2, `P.*`).
#[derive(Clone, Copy, Debug, Default)]
struct TxRecord {
    delivered: u64,
    delivered_time: Ps,
    first_sent_time: Ps,
    sent_time: Ps,
    len: u32,
    app_limited: bool,
}

/// The connection's delivery-rate state (draft §3.1, `C.*`).
#[derive(Clone, Debug, Default)]
pub struct DeliveryRate {
    delivered: u64,
    delivered_time: Ps,
    first_sent_time: Ps,
    /// 0, or the `C.delivered` value that ends the current application-limited
    /// bubble (draft §3.4).
    app_limited: u64,
    min_rtt: Option<Ps>,
    /// Segment index (`seq / mss`) of `segs[0]`.
    base: u64,
    segs: VecDeque<TxRecord>,
}

impl DeliveryRate {
    pub fn new() -> DeliveryRate {
        DeliveryRate::default()
    }

    /// Bytes delivered so far (`C.delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Whether segments sent now are marked application-limited.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Marks the sender application-limited until what is in flight now is
    /// delivered (draft §3.4: `C.app_limited = (C.delivered + C.inflight) ? : 1`).
    pub fn mark_app_limited(&mut self, flight: u64) {
        self.app_limited = (self.delivered + flight).max(1);
    }

    /// A segment `[seq, seq + len)` leaves at `now` with `flight` bytes
    /// already in flight (draft §3.2, `OnPacketSent`).
    pub fn on_send(&mut self, now: Ps, seq: u64, len: u32, mss: u64, flight: u64) {
        if flight == 0 {
            // §3.2: nothing in flight, a new sending interval starts now.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let rec = TxRecord {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            len,
            app_limited: self.app_limited != 0,
        };
        let idx = seq / mss;
        if self.segs.is_empty() {
            self.base = idx;
        }
        if idx < self.base {
            return; // already delivered: cannot happen for seq >= snd_una
        }
        let pos = (idx - self.base) as usize;
        if pos < self.segs.len() {
            self.segs[pos] = rec; // a retransmission replaces the record
        } else {
            self.segs.resize(pos, TxRecord::default());
            self.segs.push_back(rec);
        }
    }

    /// A cumulative ACK for `ack` arrived at `now`;
    /// `rtt` is the ACK's RTT sample. Returns the rate sample (draft §3.3,
    /// `UpdateRateSample` for each delivered segment, then `GenerateRateSample`).
    pub fn on_ack(&mut self, now: Ps, ack: u64, mss: u64, rtt: Option<Ps>) -> RateSample {
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        let mut newest: Option<TxRecord> = None;
        while let Some(rec) = self.segs.front().copied() {
            let end = self.base * mss + rec.len as u64;
            if end > ack {
                break;
            }
            self.segs.pop_front();
            self.base += 1;
            if rec.len == 0 {
                continue; // a hole left by `resize`, never sent
            }
            self.delivered += rec.len as u64;
            self.delivered_time = now;
            // §3.3: take the sample from the most recently sent delivered segment.
            if newest.is_none_or(|n| rec.delivered >= n.delivered) {
                newest = Some(rec);
                self.first_sent_time = rec.sent_time;
            }
        }
        // §3.3 GenerateRateSample: the bubble is gone once delivered passes its mark.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = RateSample {
            delivered_total: self.delivered,
            ..RateSample::default()
        };
        let Some(p) = newest else {
            return rs;
        };
        let send_elapsed = p.sent_time - p.first_sent_time;
        let ack_elapsed = now - p.delivered_time;
        rs.prior_delivered = Some(p.delivered);
        rs.is_app_limited = p.app_limited;
        rs.delivered = self.delivered - p.delivered;
        // §3.3: the longer of the two intervals, so neither a compressed send
        // burst nor compressed ACKs inflate the rate.
        rs.interval = send_elapsed.max(ack_elapsed);
        // §3.3: an interval shorter than the minimum RTT is not a reliable sample.
        if rs.interval == 0 || self.min_rtt.is_some_and(|m| rs.interval < m) {
            return rs;
        }
        rs.delivery_rate = Some(rs.delivered as f64 * SEC as f64 / rs.interval as f64);
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    #[test]
    fn steady_ack_clock_gives_the_bottleneck_rate() {
        // 1000-byte segments; a bottleneck delivers one per 10 us; RTT 100 us.
        // Ten segments sent at t=0, then one per ACK: each ACK delivers one segment.
        let mss = 1000;
        let mut d = DeliveryRate::new();
        for i in 0..10 {
            d.on_send(0, i * mss, 1000, mss, i * mss);
        }
        let mut una = 0;
        let mut nxt = 10 * mss;
        let mut last = None;
        for k in 1..=30u64 {
            let now = 100 * US + k * 10 * US;
            let rs = d.on_ack(now, una + mss, mss, Some(100 * US));
            una += mss;
            d.on_send(now, nxt, 1000, mss, nxt - una);
            nxt += mss;
            last = rs.delivery_rate;
            if k <= 10 {
                // First flight: ack_elapsed (time since t=0) dominates: k segments in 100+10k us.
                let want = (k * mss) as f64 * 1e6 / (100 + 10 * k) as f64;
                let got = rs.delivery_rate.unwrap();
                assert!((got - want).abs() < 1e-6 * want, "k={k}: {got} vs {want}");
            }
        }
        // In steady state each sample spans one RTT of ten segments: 1000 B / 10 us = 100 MB/s.
        let r = last.unwrap();
        assert!((r - 1e8).abs() < 1e-6 * 1e8, "{r}");
    }

    #[test]
    fn app_limited_marking_lasts_until_the_bubble_is_delivered() {
        let mss = 1000;
        let mut d = DeliveryRate::new();
        d.on_send(0, 0, 1000, mss, 0);
        d.mark_app_limited(1000); // ends when delivered > 1000
        d.on_send(1, 1000, 1000, mss, 1000);
        let rs = d.on_ack(100 * US, 1000, mss, Some(100 * US));
        assert!(!rs.is_app_limited);
        assert!(d.is_app_limited()); // delivered == 1000, not past the mark
        let rs = d.on_ack(101 * US, 2000, mss, Some(100 * US));
        assert!(rs.is_app_limited);
        assert!(!d.is_app_limited());
    }

    #[test]
    fn cumulative_ack_of_many_segments_and_retransmission() {
        let mss = 1000;
        let mut d = DeliveryRate::new();
        for i in 0..4 {
            d.on_send(i * US, i * mss, 1000, mss, i * mss);
        }
        // Segment 0 lost and retransmitted at 50 us; one ACK at 150 us delivers all four.
        d.on_send(50 * US, 0, 1000, mss, 4000);
        let rs = d.on_ack(150 * US, 4000, mss, Some(100 * US));
        assert_eq!(rs.delivered_total, 4000);
        // The newest is the retransmission: send_elapsed 50 us, ack_elapsed 150 us.
        assert_eq!(rs.interval, 150 * US);
        assert_eq!(rs.delivered, 4000);
        // A duplicate of the same ACK delivers nothing.
        let rs = d.on_ack(151 * US, 4000, mss, None);
        assert_eq!(rs.prior_delivered, None);
        assert_eq!(rs.delivery_rate, None);
    }

    #[test]
    fn short_intervals_are_not_samples() {
        let mss = 1000;
        let mut d = DeliveryRate::new();
        d.on_send(0, 0, 1000, mss, 0);
        let rs = d.on_ack(100 * US, 1000, mss, Some(100 * US));
        assert!(rs.delivery_rate.is_some());
        // A segment sent at 100 us with delivered_time 100 us, ACKed 50 us later:
        // interval 50 us < min RTT 100 us.
        d.on_send(100 * US, 1000, 1000, mss, 0);
        let rs = d.on_ack(150 * US, 2000, mss, Some(50 * US));
        // min RTT is now 50 us, so the 50 us interval counts.
        assert!(rs.delivery_rate.is_some());
        d.on_send(150 * US, 2000, 1000, mss, 0);
        let rs = d.on_ack(170 * US, 3000, mss, Some(60 * US));
        assert_eq!(rs.delivery_rate, None, "20 us < 50 us min RTT");
    }
}

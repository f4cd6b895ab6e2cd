//! The SACK scoreboard of RFC 6675 §4: which bytes above the cumulative ACK
//! the receiver holds, which are deemed lost, how many are in the network
//! (`pipe`), and what to send next during loss recovery.
//!
//! Byte ranges are half-open `[start, end)`. RFC 6675's "octet S1 <= HighRxt"
//! becomes `s < high_rxt` with `high_rxt` one past the highest retransmitted
//! byte. Segments lie on fixed `mss` boundaries from byte 0, so every range
//! boundary here is a segment boundary (or the end of the flow).
//!
//! IsLost(s) only depends on the SACKed bytes above `s`, and decreases as `s`
//! grows, so one pass over the ranges after each update finds the boundary
//! below which every un-SACKed byte is lost ([`Scoreboard::lost_below`]);
//! IsLost, SetPipe and NextSeg then cost a search, not a walk of the window.

/// SACKed ranges above the cumulative ACK, sorted, disjoint and not touching.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    ranges: Vec<(u64, u64)>,
    /// Bytes in `ranges`.
    sacked: u64,
    /// Every un-SACKed byte below this is lost (IsLost, RFC 6675 §4).
    lost_below: u64,
}

/// What NextSeg() chose (RFC 6675 §4), by rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Rule 1: a lost segment at this byte.
    Lost(u64),
    /// Rule 2: new data (at SND.NXT).
    NewData,
    /// Rule 3: an un-SACKed, not yet lost segment below the highest SACKed byte.
    Unsacked(u64),
    /// Rule 4: the rescue retransmission of the segment holding this byte.
    Rescue(u64),
    Nothing,
}

impl Scoreboard {
    /// Gives back the memory of ranges no longer held ([`crate::transport::rack::Rack::shrink`]).
    pub fn shrink(&mut self) {
        self.ranges.shrink_to_fit();
    }

    /// The ranges' allocated bytes.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.ranges.capacity() * std::mem::size_of::<(u64, u64)>()
    }

    /// Bytes SACKed above the cumulative ACK.
    #[inline]
    pub fn sacked(&self) -> u64 {
        self.sacked
    }
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    /// The highest SACKed byte, plus one (0 when nothing is SACKed).
    pub fn high_sacked(&self) -> u64 {
        self.ranges.last().map_or(0, |r| r.1)
    }
    /// Every un-SACKed byte below this is deemed lost.
    pub fn lost_below(&self) -> u64 {
        self.lost_below
    }

    /// RFC 6675 §4 Update(): records the blocks of an ACK whose cumulative
    /// ACK is `una`, forgetting what `una` covers, then recomputes the loss
    /// boundary. Returns the bytes newly SACKed.
    pub fn update(&mut self, una: u64, blocks: &[(u64, u64)], mss: u64, dup_thresh: u32) -> u64 {
        self.advance(una);
        let before = self.sacked;
        for &(s, e) in blocks {
            // A block at or below the cumulative ACK tells nothing new (RFC 2883's
            // D-SACK would; incast's receivers send none).
            let s = s.max(una);
            if e > s {
                self.insert(s, e);
            }
        }
        self.recompute_lost(mss, dup_thresh);
        self.sacked - before
    }

    /// The cumulative ACK moved to `una`: drop what it covers.
    pub fn advance(&mut self, una: u64) {
        let mut drop = 0;
        for r in &mut self.ranges {
            if r.1 <= una {
                self.sacked -= r.1 - r.0;
                drop += 1;
            } else {
                if r.0 < una {
                    self.sacked -= una - r.0;
                    r.0 = una;
                }
                break;
            }
        }
        self.ranges.drain(..drop);
    }

    fn insert(&mut self, s: u64, e: u64) {
        let i = self.ranges.partition_point(|&(_, e0)| e0 < s);
        let (mut ns, mut ne) = (s, e);
        let mut j = i;
        let mut removed = 0;
        while j < self.ranges.len() && self.ranges[j].0 <= ne {
            ns = ns.min(self.ranges[j].0);
            ne = ne.max(self.ranges[j].1);
            removed += self.ranges[j].1 - self.ranges[j].0;
            j += 1;
        }
        self.sacked = self.sacked - removed + (ne - ns);
        self.ranges.splice(i..j, std::iter::once((ns, ne)));
    }

    /// RFC 6675 §4 IsLost(SeqNum): "returns true when either DupThresh
    /// discontiguous SACKed sequences have arrived above 'SeqNum' or more
    /// than (DupThresh - 1) * SMSS bytes with sequence numbers greater than
    /// 'SeqNum' have been SACKed". A SACKed sequence is a SACKed segment
    /// (as ns-3's TcpTxBuffer counts them): a range of `b` bytes holds
    /// `ceil(b / mss)` segments. Scanning from the top, the first range at
    /// which either count is reached bounds the lost bytes.
    fn recompute_lost(&mut self, mss: u64, dup_thresh: u32) {
        let (mut bytes, mut segments) = (0u64, 0u64);
        self.lost_below = 0;
        for &(s, e) in self.ranges.iter().rev() {
            bytes += e - s;
            segments += (e - s).div_ceil(mss);
            if segments >= dup_thresh as u64 || bytes > (dup_thresh as u64 - 1) * mss {
                self.lost_below = s;
                return;
            }
        }
    }

    /// IsLost(seq) for an un-SACKed byte `seq`.
    #[inline]
    pub fn is_lost(&self, seq: u64) -> bool {
        seq < self.lost_below
    }

    /// SACKed bytes in `[from, to)`.
    pub fn sacked_in(&self, from: u64, to: u64) -> u64 {
        if to <= from {
            return 0;
        }
        let i = self.ranges.partition_point(|&(_, e)| e <= from);
        self.ranges[i..]
            .iter()
            .take_while(|&&(s, _)| s < to)
            .map(|&(s, e)| e.min(to) - s.max(from))
            .sum()
    }

    /// RFC 6675 §4 SetPipe(): for each un-SACKed octet in [HighACK, HighData),
    /// "(a) If IsLost (S1) returns false: Pipe is incremented by 1 octet.
    /// (b) If S1 <= HighRxt: Pipe is incremented by 1 octet."
    pub fn pipe(&self, high_ack: u64, high_data: u64, high_rxt: u64) -> u64 {
        let lost_end = self.lost_below.clamp(high_ack, high_data);
        let not_lost = (high_data - lost_end) - self.sacked_in(lost_end, high_data);
        let rxt_end = high_rxt.clamp(high_ack, high_data);
        let retransmitted = (rxt_end - high_ack) - self.sacked_in(high_ack, rxt_end);
        not_lost + retransmitted
    }

    /// The first un-SACKed byte at or above `seq`.
    pub fn first_unsacked(&self, seq: u64) -> u64 {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        match self.ranges.get(i) {
            Some(&(s, e)) if s <= seq => e,
            _ => seq,
        }
    }

    /// The highest un-SACKed byte below `high_data` (None: all SACKed).
    fn last_unsacked(&self, high_ack: u64, high_data: u64) -> Option<u64> {
        let mut top = high_data;
        for &(s, e) in self.ranges.iter().rev() {
            if e < top {
                break;
            }
            top = top.min(s);
        }
        (top > high_ack).then(|| top - 1)
    }

    /// RFC 6675 §4 NextSeg(), without the window check (the caller's).
    /// `has_new_data`: unsent data exists (rule 2); `rescue_allowed`:
    /// HighACK > RescueRxt or RescueRxt undefined (rule 4).
    pub fn next_seg(
        &self,
        high_ack: u64,
        high_data: u64,
        high_rxt: u64,
        has_new_data: bool,
        rescue_allowed: bool,
    ) -> Next {
        // (1.a) S2 > HighRxt, as the first un-SACKed byte at or after it.
        let s2 = self.first_unsacked(high_rxt.max(high_ack));
        // (1.b) S2 below the highest SACKed octet.
        let below_sacked = s2 < self.high_sacked() && s2 < high_data;
        // Rule 1: "(1.c) IsLost (S2) returns true."
        if below_sacked && self.is_lost(s2) {
            return Next::Lost(s2);
        }
        // Rule 2: "If no sequence number 'S2' per rule (1) exists but there
        // exists available unsent data".
        if has_new_data {
            return Next::NewData;
        }
        // Rule 3: (1.a) and (1.b) without (1.c).
        if below_sacked {
            return Next::Unsacked(s2);
        }
        // Rule 4: "one segment of up to SMSS octets that MUST include the
        // highest outstanding unSACKed sequence number".
        if rescue_allowed {
            if let Some(top) = self.last_unsacked(high_ack, high_data) {
                return Next::Rescue(top);
            }
        }
        Next::Nothing
    }

    /// Forgets everything (a new flow state).
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.sacked = 0;
        self.lost_below = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// A window of 10 segments [0, 10000): segments 0, 4 and 7 lost, the
    /// rest SACKed.
    fn three_holes() -> Scoreboard {
        let mut b = Scoreboard::default();
        let blocks = [(1000, 4000), (5000, 7000), (8000, 10000)];
        let new = b.update(0, &blocks, MSS, 3);
        assert_eq!(new, 7000);
        b
    }

    #[test]
    fn update_merges_and_forgets_what_the_cumulative_ack_covers() {
        let mut b = Scoreboard::default();
        assert_eq!(b.update(0, &[(2000, 3000)], MSS, 3), 1000);
        assert_eq!(b.update(0, &[(3000, 4000), (2000, 3000)], MSS, 3), 1000);
        assert_eq!(b.ranges(), &[(2000, 4000)]);
        assert_eq!(b.update(0, &[(6000, 7000)], MSS, 3), 1000);
        b.advance(3000);
        assert_eq!(b.ranges(), &[(3000, 4000), (6000, 7000)]);
        assert_eq!(b.sacked(), 2000);
        assert_eq!(b.update(7000, &[], MSS, 3), 0);
        assert!(b.is_empty() && b.sacked() == 0);
    }

    /// IsLost: three SACKed segments above, or more than 2 SMSS of SACKed bytes.
    #[test]
    fn is_lost_needs_dupthresh_segments_above() {
        let b = three_holes();
        // Above 7000: 2 segments SACKed -> not lost. Above 4000: 4 -> lost.
        assert!(!b.is_lost(7000));
        assert!(b.is_lost(4000) && b.is_lost(0));
        assert_eq!(b.lost_below(), 5000);
        // Small segments: three discontiguous 100-byte blocks make 3 segments.
        let mut s = Scoreboard::default();
        s.update(0, &[(1000, 1100), (2000, 2100)], MSS, 3);
        assert!(!s.is_lost(0));
        s.update(0, &[(3000, 3100)], MSS, 3);
        assert!(s.is_lost(0) && !s.is_lost(1100));
    }

    /// SetPipe: lost holes do not count, retransmitted ones do.
    #[test]
    fn pipe_counts_unsacked_not_lost_and_retransmitted_bytes() {
        let b = three_holes();
        // Holes 0 and 4000 lost, 7000 not: pipe = 1000 (segment 7).
        assert_eq!(b.pipe(0, 10_000, 0), 1000);
        // After retransmitting segment 0: +1000.
        assert_eq!(b.pipe(0, 10_000, 1000), 2000);
        // And segment 4: +1000 (the SACKed bytes between are not counted).
        assert_eq!(b.pipe(0, 10_000, 5000), 3000);
        // 2 new segments sent beyond: not lost, in flight.
        assert_eq!(b.pipe(0, 12_000, 5000), 5000);
    }

    #[test]
    fn next_seg_rules_in_order() {
        let b = three_holes();
        assert_eq!(b.next_seg(0, 10_000, 0, true, true), Next::Lost(0));
        assert_eq!(b.next_seg(0, 10_000, 1000, true, true), Next::Lost(4000));
        // Segment 7 is not lost: new data first (rule 2), else rule 3.
        assert_eq!(b.next_seg(0, 10_000, 5000, true, true), Next::NewData);
        assert_eq!(
            b.next_seg(0, 10_000, 5000, false, true),
            Next::Unsacked(7000)
        );
        // Everything below the highest SACK retransmitted: the rescue
        // retransmission covers the highest un-SACKed byte.
        assert_eq!(b.next_seg(0, 10_000, 8000, false, true), Next::Rescue(7999));
        assert_eq!(b.next_seg(0, 10_000, 8000, false, false), Next::Nothing);
        // With data sent above the highest SACK, the rescue takes the tail.
        assert_eq!(
            b.next_seg(0, 12_000, 8000, false, true),
            Next::Rescue(11_999)
        );
    }

    #[test]
    fn sacked_in_clips_to_the_interval() {
        let b = three_holes();
        assert_eq!(b.sacked_in(0, 10_000), 7000);
        assert_eq!(b.sacked_in(2500, 5500), 2000);
        assert_eq!(b.sacked_in(4000, 5000), 0);
        assert_eq!(b.sacked_in(5000, 5000), 0);
    }
}

//! SACK blocks and how a receiver chooses them (RFC 2018).
//!
//! An ACK of a flow with `recovery = "sack"` reports up to [`MAX_BLOCKS`]
//! ranges of out-of-order data the receiver holds. The blocks are not
//! carried in the 64-byte [`crate::net::Packet`]: the host keeps them in a
//! table parallel to the packet arena, indexed by the ACK's packet id
//! ([`SackTable`]), exactly as the INT stacks of HPCC are kept. An ACK keeps
//! its id from the moment its receiver allocates it until it is delivered or
//! dropped, so the entry travels with the ACK: a dropped ACK's blocks are
//! never read, reordered ACKs each read their own, and the slot's next ACK
//! overwrites it (nothing to free, nothing freed twice). The wire size of
//! the ACK grows by the option's bytes ([`option_bytes`]).

/// Blocks per ACK: RFC 2018 §3, 40 bytes of TCP options minus the 10 (+2
/// padding) of the timestamps option every incast ACK echoes leave room for 3.
pub const MAX_BLOCKS: usize = 3;

/// The SACK blocks of one ACK, first block first: half-open byte ranges
/// `[left, right)` (RFC 2018 §3's Left Edge and Right Edge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub n: u8,
    pub blocks: [(u64, u64); MAX_BLOCKS],
}

impl SackBlocks {
    /// The blocks, first (most recent) first.
    #[inline]
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n as usize]
    }
    fn push(&mut self, b: (u64, u64)) {
        self.blocks[self.n as usize] = b;
        self.n += 1;
    }
    fn is_full(&self) -> bool {
        self.n as usize == MAX_BLOCKS
    }
    fn covers(&self, b: (u64, u64)) -> bool {
        self.as_slice().iter().any(|&(l, r)| l <= b.0 && b.1 <= r)
    }
}

/// Bytes the SACK option adds to an ACK on the wire: kind, length and two
/// NOPs of padding (4 bytes) plus 8 per block (RFC 2018 §3); 0 without blocks.
#[inline]
pub fn option_bytes(b: &SackBlocks) -> u32 {
    if b.n == 0 {
        0
    } else {
        4 + 8 * b.n as u32
    }
}

/// The receiver's side: the blocks it reported last, which the next ACK
/// repeats (RFC 2018 §4).
#[derive(Clone, Debug, Default)]
pub struct SackReceiver {
    /// The blocks of the latest ACK.
    report: SackBlocks,
    /// Blocks of the ACKs the latest data segment produced, by position
    /// ([`crate::transport::RecvOutcome::acks`]).
    pub outbox: [SackBlocks; 2],
}

/// The out-of-order range of `ooo` (sorted, disjoint) that holds byte `seq`.
fn range_holding(ooo: &[(u64, u64)], seq: u64) -> Option<(u64, u64)> {
    let i = ooo.partition_point(|&(_, e)| e <= seq);
    ooo.get(i).copied().filter(|&(s, _)| s <= seq)
}

impl SackReceiver {
    /// The blocks an ACK sent now carries. `trigger` is the segment that
    /// caused the ACK when it was buffered out of order (None when it
    /// advanced the cumulative ACK, was a duplicate, or no segment caused
    /// it); `ooo` the receiver's out-of-order ranges and `rcv_nxt` its
    /// cumulative ACK. Becomes the report the next ACK repeats.
    pub fn report(
        &mut self,
        trigger: Option<(u64, u64)>,
        ooo: &[(u64, u64)],
        rcv_nxt: u64,
    ) -> SackBlocks {
        let mut out = SackBlocks::default();
        // RFC 2018 §4: "The first SACK block (i.e., the one immediately
        // following the kind and length fields in the option) MUST specify the
        // contiguous block of data containing the segment which triggered this
        // ACK, unless that segment advanced the Acknowledgment Number field".
        if let Some(b) = trigger.and_then(|(s, _)| range_holding(ooo, s)) {
            out.push(b);
        }
        // RFC 2018 §4: "The SACK option SHOULD be filled out by repeating the
        // most recently reported SACK blocks ... that are not subsets of a SACK
        // block already included". A reported block may have grown since
        // (merged with later arrivals): it is reported as the range holding it
        // now; one the cumulative ACK covers is gone.
        for &(s, _) in self.report.as_slice() {
            if out.is_full() {
                break;
            }
            if s < rcv_nxt {
                continue;
            }
            if let Some(b) = range_holding(ooo, s) {
                if !out.covers(b) {
                    out.push(b);
                }
            }
        }
        self.report = out;
        out
    }
}

/// The SACK blocks of the ACKs in the network, indexed by packet id
/// (parallel to [`crate::net::PacketArena`]); empty without SACK.
#[derive(Default)]
pub struct SackTable {
    blocks: Vec<SackBlocks>,
}

impl SackTable {
    /// ACK `id` carries `b` (its slot's previous ACK's entry is overwritten).
    #[inline]
    pub fn put(&mut self, id: u32, b: SackBlocks) {
        let i = id as usize;
        if i >= self.blocks.len() {
            self.blocks.resize(i + 1, SackBlocks::default());
        }
        self.blocks[i] = b;
    }
    /// The blocks ACK `id` carries (read when it is delivered).
    #[inline]
    pub fn get(&self, id: u32) -> SackBlocks {
        self.blocks[id as usize]
    }
    /// The blocks packet `id` carries, none if it carries none (a packet
    /// leaving for another world, [`crate::net::link::Parcel`]).
    pub fn carried(&self, id: u32) -> SackBlocks {
        self.blocks.get(id as usize).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(b: &[(u64, u64)]) -> SackBlocks {
        let mut s = SackBlocks::default();
        for &x in b {
            s.push(x);
        }
        s
    }

    /// RFC 2018 §4's example: segments 5000..8500 of 500 bytes, the first
    /// (5000) lost and then every other one: each ACK's first block holds
    /// the segment just received, followed by the earlier blocks.
    #[test]
    fn rfc2018_example_every_other_segment_lost() {
        let mut r = SackReceiver::default();
        let mut ooo: Vec<(u64, u64)> = vec![];
        let mut got = vec![];
        for seq in [5500u64, 6500, 7500] {
            ooo.push((seq, seq + 500));
            got.push(r.report(Some((seq, seq + 500)), &ooo, 5000));
        }
        assert_eq!(got[0], blocks(&[(5500, 6000)]));
        assert_eq!(got[1], blocks(&[(6500, 7000), (5500, 6000)]));
        assert_eq!(got[2], blocks(&[(7500, 8000), (6500, 7000), (5500, 6000)]));
        // 8500 arrives: a fourth block; the oldest one falls off.
        ooo.push((8500, 9000));
        let b = r.report(Some((8500, 9000)), &ooo, 5000);
        assert_eq!(b, blocks(&[(8500, 9000), (7500, 8000), (6500, 7000)]));
        // 6000 fills the first hole: the cumulative ACK moves to 7000 and the
        // first block is no longer the trigger's (it advanced the ACK).
        ooo.retain(|&(s, _)| s > 6500);
        let b = r.report(None, &ooo, 7000);
        assert_eq!(b, blocks(&[(8500, 9000), (7500, 8000)]));
    }

    #[test]
    fn a_block_that_grew_is_reported_whole_and_once() {
        let mut r = SackReceiver::default();
        let ooo = vec![(2000, 3000)];
        r.report(Some((2000, 3000)), &ooo, 1000);
        let ooo = vec![(2000, 4000), (5000, 6000)];
        r.report(Some((5000, 6000)), &ooo, 1000);
        // 3000 joins the block at 2000: it is the first block, not repeated.
        let b = r.report(Some((3000, 4000)), &ooo, 1000);
        assert_eq!(b, blocks(&[(2000, 4000), (5000, 6000)]));
        assert_eq!(option_bytes(&b), 20);
        assert_eq!(option_bytes(&SackBlocks::default()), 0);
    }

    #[test]
    fn table_entries_belong_to_the_packet_slot() {
        let mut t = SackTable::default();
        t.put(3, blocks(&[(1, 2)]));
        t.put(0, blocks(&[(5, 6)]));
        assert_eq!(t.get(3), blocks(&[(1, 2)]));
        t.put(3, SackBlocks::default());
        assert_eq!(t.get(3).n, 0);
        assert_eq!(t.get(0), blocks(&[(5, 6)]));
    }
}

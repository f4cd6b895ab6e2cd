//! A sprayed flow's path entropy values, as EQDS senders choose them
//! (Olteanu et al., NSDI 2022, §4.4: the EDC "sprays packets across all
//! available paths"; the cycle and the penalty are htsim's
//! `EqdsSrc::nextEntropy` and `penalizePath`, csg-htsim 841d9e7).
//!
//! A flow owns `n` entropy values (a power of two; htsim's `-paths`,
//! default 64 in `main_eqds.cpp`). Each packet carries the next one of a
//! cycle through all `n`, visited in the order `index XOR x`, where `x` is
//! drawn afresh for every cycle; the switches hash (flow, entropy) to a
//! port ([`crate::topology::routing::ecmp_index`]). Because a flow uses the
//! same `n` values over and over, the share of its packets each port sees
//! is fixed by those `n` hashes, not 1 / ports on average as with a fresh
//! hash per packet: with 64 values over 4 ports a flow's split is uneven by
//! about a fifth, which is what fills queues under full load in htsim.
//!
//! An entropy whose packet was trimmed (the NACK names it) is skipped once
//! the next time the cycle reaches it (htsim: `_ev_skip_bitmap`, at most
//! `_max_penalty` = 1 skip pending per value).

use crate::rng::mix64;

/// The most entropy values a flow may own (one bit each of the skip set).
pub const MAX_ENTROPIES: u32 = 64;

/// One end's cycle through its entropy values.
#[derive(Clone, Debug)]
pub struct Entropy {
    /// `n - 1` (`n` a power of two, at most [`MAX_ENTROPIES`]).
    mask: u16,
    /// The position in the current cycle.
    index: u16,
    /// This cycle's order: position `i` is value `i ^ xor`.
    xor: u16,
    /// Cycles begun: the seed of the next cycle's order.
    cycles: u64,
    /// The flow's key: its cycle orders are drawn from it.
    key: u64,
    /// Values to skip once (htsim's `_ev_skip_bitmap` with `_max_penalty` 1).
    skip: u64,
}

impl Entropy {
    /// `n` values (a power of two in 1..=64, checked by the caller's
    /// parameters), cycle orders drawn from `key` (the flow's hash).
    pub fn new(n: u32, key: u64) -> Entropy {
        debug_assert!(n.is_power_of_two() && n <= MAX_ENTROPIES);
        let mask = (n - 1) as u16;
        Entropy {
            mask,
            index: 0,
            xor: (mix64(key) as u16) & mask,
            cycles: 1,
            key,
            skip: 0,
        }
    }

    /// Moves to the next position, starting a new cycle (a new order)
    /// after the last one.
    fn advance(&mut self) {
        self.index += 1;
        if self.index > self.mask {
            self.index = 0;
            self.xor = (mix64(self.key ^ self.cycles) as u16) & self.mask;
            self.cycles += 1;
        }
    }

    /// The next packet's entropy value (htsim `nextEntropy`): a value
    /// marked to skip is passed over once, its mark cleared.
    pub fn next_value(&mut self) -> u16 {
        let mut value = (self.index ^ self.xor) & self.mask;
        while self.skip & (1 << value) != 0 {
            self.skip &= !(1 << value);
            self.advance();
            value = (self.index ^ self.xor) & self.mask;
        }
        self.advance();
        value
    }

    /// A packet sent with `value` was trimmed: skip it once (htsim
    /// `penalizePath(ev, 1)` on a NACK).
    pub fn penalize(&mut self, value: u16) {
        self.skip |= 1 << (value & self.mask);
    }
}

/// The ECMP hash of a packet of the flow with hash `flow_hash` sent with
/// entropy `value`: fixed per (flow, value), as htsim's switches hash
/// (flow id, path id).
#[inline]
pub fn hash(flow_hash: u64, value: u16) -> u64 {
    mix64(flow_hash ^ (value as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cycle_visits_every_value_once() {
        let mut e = Entropy::new(64, 0xfeed);
        let mut orders = vec![];
        for _ in 0..4 {
            let mut cycle: Vec<u16> = (0..64).map(|_| e.next_value()).collect();
            orders.push(cycle.clone());
            cycle.sort_unstable();
            assert_eq!(cycle, (0..64).collect::<Vec<u16>>());
        }
        // Each cycle's order is a fresh XOR (two orders agree by chance with
        // probability 1/64: at least one of three pairs differs for this key).
        assert!(orders.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn a_penalized_value_is_skipped_once() {
        for w in 0..4u16 {
            let mut e = Entropy::new(4, 11);
            for _ in 0..4 {
                e.next_value(); // a whole cycle: the next draw starts one
            }
            e.penalize(w);
            let mut three: Vec<u16> = (0..3).map(|_| e.next_value()).collect();
            three.sort_unstable();
            let others: Vec<u16> = (0..4).filter(|&v| v != w).collect();
            assert_eq!(three, others, "the cycle passes over {w} once");
            e.next_value();
            assert_eq!(e.skip, 0, "the mark is cleared once used");
        }
    }

    #[test]
    fn one_value_means_one_path() {
        let mut e = Entropy::new(1, 3);
        assert!((0..10).all(|_| e.next_value() == 0));
        e.penalize(0);
        assert_eq!(e.next_value(), 0);
    }

    #[test]
    fn hashes_are_fixed_per_value_and_spread() {
        assert_eq!(hash(5, 3), hash(5, 3));
        assert_ne!(hash(5, 3), hash(5, 4));
        // 64 values over 4 ports: every port gets some, none gets all
        // (the uneven split the module docs describe).
        let mut ports = [0; 4];
        for v in 0..64 {
            ports[(hash(99, v) % 4) as usize] += 1;
        }
        assert!(ports.iter().all(|&c| c > 0 && c < 64), "{ports:?}");
    }
}

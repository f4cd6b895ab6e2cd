//! What the switches of a scenario are configured with ([`SwitchParams`]):
//! the buffer, each class's admission rule, ECN rule and DWRR quantum, and
//! the scheduler. `Scenario::switch_params` builds them from `[switch]`;
//! the switch element ([`crate::net::switch`]) reads them.

use super::NUM_CLASSES;
use crate::units::Bytes;

/// Per-queue admission rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Admission {
    /// Choudhury-Hahne dynamic threshold: admit while `q < alpha * (B - Q)`.
    Dynamic { alpha: f64 },
    /// Admit while `q + size <= limit`.
    Static { limit: Bytes },
}

/// Per-class ECN marking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ecn {
    Off,
    /// RED on the instantaneous queue; a step marker is `kmin == kmax`, `pmax = 1`.
    Red {
        kmin: Bytes,
        kmax: Bytes,
        pmax: f64,
        at_dequeue: bool,
    },
}

impl Ecn {
    pub fn step(k: Bytes, at_dequeue: bool) -> Ecn {
        Ecn::Red {
            kmin: k,
            kmax: k,
            pmax: 1.0,
            at_dequeue,
        }
    }
    /// Marking probability for queue length `q` bytes.
    #[inline]
    pub fn probability(&self, q: Bytes) -> f64 {
        match *self {
            Ecn::Off => 0.0,
            Ecn::Red {
                kmin, kmax, pmax, ..
            } => {
                if q <= kmin {
                    0.0
                } else if q > kmax {
                    1.0
                } else {
                    pmax * (q - kmin) as f64 / (kmax - kmin) as f64
                }
            }
        }
    }
}

/// A class's ECN rule: fixed, or chosen by the egress port's rate (HPCC
/// simulator `KMIN_MAP`/`KMAX_MAP`/`PMAX_MAP`).
#[derive(Clone, Debug, PartialEq)]
pub enum EcnRule {
    Fixed(Ecn),
    /// `(rate in bits/s, rule)`, ascending by rate.
    ByRate(Vec<(u64, Ecn)>),
}

impl EcnRule {
    /// The rule for a port of `bps` bits/s: the level with the largest rate
    /// not above `bps` (the lowest level if `bps` is below all).
    pub fn at_rate(&self, bps: u64) -> Ecn {
        match self {
            EcnRule::Fixed(e) => *e,
            EcnRule::ByRate(levels) => levels
                .iter()
                .rev()
                .find(|(r, _)| *r <= bps)
                .or(levels.first())
                .map_or(Ecn::Off, |(_, e)| *e),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    StrictPriority,
    Dwrr,
}

/// Configuration shared by the switches of a scenario.
#[derive(Clone, Debug)]
pub struct SwitchParams {
    pub buffer: Bytes,
    pub admission: [Admission; NUM_CLASSES],
    pub ecn: [EcnRule; NUM_CLASSES],
    /// Bit c set when class c is lossless (PFC): no egress admission drop; the
    /// ingress accounting of [`crate::mech::pfc`] decides.
    pub lossless: u8,
    /// Bit c set when a mechanism picks the queue of class c's packets
    /// (`mech::on_classify`): they never pass straight through.
    pub classified: u8,
    /// Some mechanism's depart hook can run ([`crate::mech`]): set once the
    /// world is built; without one the depart hook site is a single test.
    pub departs: bool,
    /// Bit c set when some mechanism's ingress hook wants priority c or its
    /// classify hook class c: an arrival of neither skips both sites.
    pub hooked: u8,
    pub scheduler: Scheduler,
    /// DWRR quantum of each class, in bytes (at least one MTU).
    pub quantum: [i64; NUM_CLASSES],
}

impl Default for SwitchParams {
    fn default() -> Self {
        SwitchParams {
            buffer: 12_000_000,
            admission: [Admission::Dynamic { alpha: 1.0 }; NUM_CLASSES],
            ecn: std::array::from_fn(|_| EcnRule::Fixed(Ecn::Off)),
            lossless: 0,
            classified: 0,
            departs: false,
            hooked: 0,
            scheduler: Scheduler::StrictPriority,
            quantum: [1500; NUM_CLASSES],
        }
    }
}

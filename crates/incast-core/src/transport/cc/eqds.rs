//! `cc = "eqds"`: the group's flows run EQDS (Olteanu et al., "An
//! edge-queued datagram service for all datacenter traffic", NSDI 2022;
//! [`crate::transport::eqds`], host side [`crate::host::eqds`]) instead of
//! TCP. EQDS has no congestion window: its sender sends a speculative first
//! window, then only on the credit its receiver's paced PULLs grant. Its
//! parameters live here so that a workload group selects EQDS as it selects
//! a congestion control; the [`CongestionControl`] type below is never
//! asked (an EQDS flow's packets never reach the TCP state machine).

use super::{CongestionControl, ParamError};
use crate::config_types::TimeValue;
use crate::transport::entropy::MAX_ENTROPIES;
use crate::units::NS;
use serde::{Deserialize, Serialize};

/// EQDS's parameters (defaults: htsim's `main_eqds.cpp` and `eqds.cpp`,
/// csg-htsim 841d9e7).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Packets of MTU bytes in the speculative first window, which is also
    /// the most credit a sender asks for at once (htsim `-cwnd`: 50).
    pub init_window: u32,
    /// Retransmission timeout of a packet in flight. htsim sets its minimum
    /// RTO to 150 us plus six queue-fulls at the link rate: 219.72 us for
    /// its 35 x 4150 B queues at 100 Gb/s, the default here.
    pub rto: TimeValue,
    /// Credit one PULL grants, in bytes (a multiple of EQDS's 512-byte
    /// quantum). Default: one packet's payload rounded up to quanta, so
    /// that the pacer, one PULL per packet time, grants its link rate
    /// (htsim's `_credit_per_pull`, 8 quanta = 4096 B for its 4086 B
    /// payload: "this assumes one pull per MTU").
    pub pull_bytes: Option<u32>,
    /// The pull pacer sends one PULL every (MTU + `framing_bytes`) x 8 /
    /// link rate x this (htsim's `EqdsPullPacer(linkspeed, 0.99, mtu)`: its
    /// factor multiplies the interval).
    pub pull_interval: f64,
    /// Bytes of Ethernet framing (preamble, gap, FCS) the pacer adds to an
    /// MTU (htsim's `pktByteTimes`: 38).
    pub framing_bytes: u32,
    /// Spray: each packet takes a path of its own, by the entropy value it
    /// carries ([`crate::transport::entropy`]: data and PULLs cycle through
    /// `entropies` values, an ACK or NACK takes its data packet's). Off: the
    /// flow's ECMP path, unless the run sprays (`[routing] ecmp = "spray"`).
    pub spray: bool,
    /// Entropy values a sprayed flow cycles through (a power of two, at
    /// most 64; htsim's `-paths`, 64 in `main_eqds.cpp`).
    pub entropies: u32,
    /// What the sender does with the speculative credit left when the
    /// first reply comes: `"give_up"` (default) or `"burn"` (htsim's
    /// `spendCredit`: kept, and spent a packet at a time without sending
    /// at each chance to send that finds no pulled credit; the pull
    /// targets it sends meanwhile stay net of it).
    pub leftover: Leftover,
}

/// [`Params::leftover`].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Leftover {
    /// Given up at once.
    #[default]
    GiveUp,
    /// Burnt a packet at a time (htsim).
    Burn,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            init_window: 50,
            rto: TimeValue(219_720 * NS),
            pull_bytes: None,
            pull_interval: 0.99,
            framing_bytes: 38,
            spray: false,
            entropies: 64,
            leftover: Leftover::GiveUp,
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.init_window == 0 {
            return Err(ParamError::new(
                "init_window",
                "EQDS's speculative window needs at least one packet (htsim: 50)",
            ));
        }
        if self.rto.0 == 0 {
            return Err(ParamError::new(
                "rto",
                "give a positive timeout, e.g. \"220us\"",
            ));
        }
        if self.pull_bytes.is_some_and(|b| b == 0 || b % 512 != 0) {
            return Err(ParamError::new(
                "pull_bytes",
                "a positive multiple of EQDS's 512-byte credit quantum (htsim: 4096)",
            ));
        }
        if !(self.pull_interval > 0.0 && self.pull_interval <= 10.0) {
            return Err(ParamError::new(
                "pull_interval",
                "a factor of the packet time in (0, 10] (htsim: 0.99)",
            ));
        }
        if !self.entropies.is_power_of_two() || self.entropies > MAX_ENTROPIES {
            return Err(ParamError::new(
                "entropies",
                "a power of two from 1 to 64 (htsim: 64)",
            ));
        }
        Ok(())
    }
}

/// The registry's type for `"eqds"` (never asked: see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Eqds;

impl Eqds {
    pub fn new(_: &Params) -> Self {
        Eqds
    }
}

impl CongestionControl for Eqds {}

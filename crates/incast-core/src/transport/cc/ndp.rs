//! `cc = "ndp"`: the group's flows run NDP (Handley et al., SIGCOMM 2017,
//! §3.2; [`crate::transport::ndp`], host side [`crate::host::ndp`]) instead
//! of TCP. NDP has no congestion window: its sender sends a first window,
//! then one packet per PULL its receiver paces out. Its parameters live
//! here so that a workload group selects NDP as it selects a congestion
//! control; the [`CongestionControl`] type below is never asked (an NDP
//! flow's packets never reach the TCP state machine).

use super::{CongestionControl, ParamError};
use crate::config_types::TimeValue;
use crate::units::MS;
use serde::{Deserialize, Serialize};

/// NDP's parameters (defaults: htsim's `main_ndp.cpp`, csg-htsim 841d9e7).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Packets of the first window, sent at line rate (htsim `-cwnd`: 15).
    pub init_window: u32,
    /// Retransmission timeout after the last progress (htsim's main_ndp
    /// sets its minimum RTO to 50 ms "to avoid spurious retransmits").
    pub rto: TimeValue,
    /// The pull pacer sends one PULL per (MTU x 8 / link rate) / this
    /// (htsim's `NdpPullPacer(..., 0.99)`).
    pub pull_rate: f64,
    /// Spray: each packet (data, ACK, NACK, PULL) takes an equal-cost path
    /// of its own, by a per-packet hash (htsim's `-strat rand`; its `perm`
    /// cycles through a permutation of the paths). Off: the flow's ECMP
    /// path, as every other transport, unless the run sprays
    /// (`[routing] ecmp = "spray"`).
    pub spray: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            init_window: 15,
            rto: TimeValue(50 * MS),
            pull_rate: 0.99,
            spray: false,
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.init_window == 0 {
            return Err(ParamError::new(
                "init_window",
                "NDP's first window needs at least one packet (htsim: 15)",
            ));
        }
        if self.rto.0 == 0 {
            return Err(ParamError::new(
                "rto",
                "give a positive timeout, e.g. \"50ms\"",
            ));
        }
        if !(self.pull_rate > 0.0 && self.pull_rate <= 1.0) {
            return Err(ParamError::new(
                "pull_rate",
                "a fraction of the link rate in (0, 1] (htsim: 0.99)",
            ));
        }
        Ok(())
    }
}

/// The registry's type for `"ndp"` (never asked: see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Ndp;

impl Ndp {
    pub fn new(_: &Params) -> Self {
        Ndp
    }
}

impl CongestionControl for Ndp {}

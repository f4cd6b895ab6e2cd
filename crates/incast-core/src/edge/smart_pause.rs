//! Smart-Pause (Liu, Prabhakar, Rosenblum, "Smart-Pause: Using Precise Packet
//! Delays to Pause at the Edge of the Network", 2019 talk;
//! `seeds/001_ddad80afac4958b2.txt`), slide "The Smart-Pause Rule":
//!
//! > When the OWD is greater than T units of time, Pause next packet from the
//! > flow at the edge for P usecs.
//! > Fix P: T = 50 usecs, P = 20 usecs.
//! > Dynamic P: T = 12, 14, 16 usecs for 1, 3, 5-hop flows; P = OWD - T.
//!
//! "Pause for P" is read as: the flow's next packet may not leave before
//! `now + P`, where `now` is when the ACK carrying the reading arrives. A
//! further reading above T while a hold is on extends it only if its own
//! `now + P` is later (holds do not add up). "Hops" is read as switches on the
//! path: with 1 us links that makes T = base OWD + about 10 us (spec §1.8).

use super::{GateView, OwdSample, PauseRule, Threshold};
use crate::config_types::TimeValue;
use crate::rdma::cc::ParamError;
use crate::units::{Ps, US};
use serde::{Deserialize, Serialize};

/// `smart_pause_fixed` parameters.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// T: pause when the OWD exceeds this (talk: 50 us).
    pub threshold: Threshold,
    /// P: how long the next packet waits (talk: 20 us).
    pub pause: TimeValue,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            threshold: Threshold::Fixed(TimeValue(50 * US)),
            pause: TimeValue(20 * US),
        }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.threshold.validate()?;
        if self.pause.ps() == 0 {
            return Err(ParamError::new(
                "pause",
                "must be positive, e.g. \"20us\" (Smart-Pause fixed P)",
            ));
        }
        Ok(())
    }
    pub fn threshold(&self) -> Option<&Threshold> {
        Some(&self.threshold)
    }
}

/// Smart-Pause with a fixed pause P.
#[derive(Clone, Debug)]
pub struct Fixed {
    pause: Ps,
}

impl Fixed {
    pub fn new(p: &Params) -> Self {
        Fixed {
            pause: p.pause.ps(),
        }
    }
}

impl PauseRule for Fixed {
    fn on_owd(&mut self, s: &OwdSample, g: &GateView) -> Option<Ps> {
        // "When the OWD is greater than T ... pause next packet ... for P."
        (s.owd > g.threshold as i64).then_some(s.now + self.pause)
    }
}

/// `smart_pause_dynamic` parameters.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DynamicParams {
    /// T, by default per path: 12, 14, 16 us for 1, 3, 5 switches.
    pub threshold: Threshold,
}

impl Default for DynamicParams {
    fn default() -> Self {
        DynamicParams {
            threshold: Threshold::smart_pause_hops(),
        }
    }
}

impl DynamicParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.threshold.validate()
    }
    pub fn threshold(&self) -> Option<&Threshold> {
        Some(&self.threshold)
    }
}

/// Smart-Pause with the dynamic pause P = OWD - T.
#[derive(Clone, Debug)]
pub struct Dynamic;

impl Dynamic {
    pub fn new(_p: &DynamicParams) -> Self {
        Dynamic
    }
}

impl PauseRule for Dynamic {
    fn on_owd(&mut self, s: &OwdSample, g: &GateView) -> Option<Ps> {
        // "Dynamic P: ... P = OWD - T."
        let excess = s.owd - g.threshold as i64;
        (excess > 0).then(|| s.now + excess as Ps)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{EdgeGate, RuleConfig};
    use super::*;

    /// A scripted ACK sequence: (arrival us, OWD us, sent us) -> the gate's
    /// hold after each, and whether it changed.
    fn script(rule: RuleConfig, t: Ps, acks: &[(u64, u64, u64)]) -> Vec<(Ps, bool)> {
        let mut g = EdgeGate::new(rule.build(), t);
        acks.iter()
            .map(|&(n, o, s)| {
                let c = g.on_owd(OwdSample {
                    now: n * US,
                    owd: (o * US) as i64,
                    sent_at: s * US,
                });
                (g.hold_until / US, c)
            })
            .collect()
    }

    #[test]
    fn fixed_pauses_the_next_packet_for_p_when_owd_exceeds_t() {
        let r = RuleConfig::by_name("smart_pause_fixed").unwrap();
        let got = script(
            r,
            50 * US,
            &[
                (100, 50, 50), // OWD = T: not above, no pause
                (101, 51, 50), // hold to 121
                (110, 80, 30), // 130 > 121: extended, not added (not 141)
                (115, 60, 55), // 135 > 130
                (200, 49, 151),
            ],
        );
        assert_eq!(
            got,
            vec![
                (0, false),
                (121, true),
                (130, true),
                (135, true),
                (135, false)
            ]
        );
    }

    #[test]
    fn dynamic_pauses_for_owd_minus_t() {
        let r = RuleConfig::by_name("smart_pause_dynamic").unwrap();
        let got = script(
            r,
            14 * US,
            &[
                (100, 14, 86),
                (100, 20, 80), // 6 us
                (101, 17, 84), // 104 < 106: no change
                (102, 30, 72), // 118
            ],
        );
        assert_eq!(
            got,
            vec![(0, false), (106, true), (106, false), (118, true)]
        );
    }

    #[test]
    fn negative_readings_never_pause() {
        let r = RuleConfig::by_name("smart_pause_dynamic").unwrap();
        let mut g = EdgeGate::new(r.build(), 14 * US);
        assert!(!g.on_owd(OwdSample {
            now: 10 * US,
            owd: -(40 * US as i64),
            sent_at: 0
        }));
    }
}

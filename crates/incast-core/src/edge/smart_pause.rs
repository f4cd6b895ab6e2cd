//! Smart-Pause (Liu, Prabhakar, Rosenblum, "Smart-Pause: Using Precise Packet
//! Delays to Pause at the Edge of the Network", talk of 7 June 2019), slide
//! "The Smart-Pause Rule":
//!
//! > When the OWD is greater than T units of time, Pause next packet from the
//! > flow at the edge for P usecs.
//! > Fix P: T = 50 usecs, P = 20 usecs.
//! > Dynamic P: T = 12, 14, 16 usecs for 1, 3, 5-hop flows; P = OWD - T.
//!
//! "Pause next packet ... for P" leaves open what a reading above T does
//! while the flow is already held. Three readings are built, chosen with
//! `hold` ([`Hold`]); each holds the whole flow (the gate never reorders) from
//! `now`, when the ACK carrying the reading arrives:
//!
//! | `hold` | a reading above T while held | the flow in heavy congestion |
//! |---|---|---|
//! | `"rearm"` (default) | re-arms: held until `now + P` if that is later (holds do not add up) | held while ACKs above T keep coming, then P more |
//! | `"once"` | ignored: a hold runs out before another can start | P held, then sends until the next ACK above T |
//! | `"per_packet"` | queues: P more after the current hold (each reading delays one more packet by P) | held P per reading above T |
//!
//! `"per_packet"` lets no packet out between two queued delays, where a NIC
//! delaying packets one by one would let one leave after each P: the flow's
//! total delay is the same, its packets leave in one burst at the end.
//!
//! "Hops" is read as switches on the path: with 1 us links that makes
//! T = base OWD + about 10 us.

use super::{GateView, OwdSample, PauseRule, Threshold};
use crate::config_types::TimeValue;
use crate::rdma::cc::ParamError;
use crate::units::{Ps, US};
use serde::{Deserialize, Serialize};

/// What a reading above T does while the flow is already held (module docs).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// Re-armed by every reading above T: held until `now + P` if later.
    #[default]
    Rearm,
    /// Not re-armed until it expires: readings during a hold are ignored.
    Once,
    /// Each reading above T delays the flow P more, after the current hold.
    PerPacket,
}

impl Hold {
    /// The time the flow is held until after a reading above T that asks for
    /// a pause of `pause`, or `None` to leave the gate as it is.
    fn until(self, now: Ps, pause: Ps, gate: &GateView) -> Option<Ps> {
        match self {
            Hold::Rearm => Some(now + pause),
            Hold::Once => (gate.hold_until <= now).then_some(now + pause),
            Hold::PerPacket => Some(now.max(gate.hold_until) + pause),
        }
    }
}

/// `smart_pause_fixed` parameters.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// T: pause when the OWD exceeds this (talk: 50 us).
    pub threshold: Threshold,
    /// P: how long the next packet waits (talk: 20 us).
    pub pause: TimeValue,
    /// A reading above T during a hold: `"rearm"`, `"once"` or `"per_packet"`.
    pub hold: Hold,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            threshold: Threshold::Fixed(TimeValue(50 * US)),
            pause: TimeValue(20 * US),
            hold: Hold::Rearm,
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
    hold: Hold,
}

impl Fixed {
    pub fn new(params: &Params) -> Self {
        Fixed {
            pause: params.pause.ps(),
            hold: params.hold,
        }
    }
}

impl PauseRule for Fixed {
    fn on_owd(&mut self, sample: &OwdSample, gate: &GateView) -> Option<Ps> {
        // "When the OWD is greater than T ... pause next packet ... for P."
        if sample.owd <= gate.threshold as i64 {
            return None;
        }
        self.hold.until(sample.now, self.pause, gate)
    }
}

/// `smart_pause_dynamic` parameters.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DynamicParams {
    /// T, by default per path: 12, 14, 16 us for 1, 3, 5 switches.
    pub threshold: Threshold,
    /// A reading above T during a hold: `"rearm"`, `"once"` or `"per_packet"`.
    pub hold: Hold,
}

impl Default for DynamicParams {
    fn default() -> Self {
        DynamicParams {
            threshold: Threshold::smart_pause_hops(),
            hold: Hold::Rearm,
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
pub struct Dynamic {
    hold: Hold,
}

impl Dynamic {
    pub fn new(params: &DynamicParams) -> Self {
        Dynamic { hold: params.hold }
    }
}

impl PauseRule for Dynamic {
    fn on_owd(&mut self, sample: &OwdSample, gate: &GateView) -> Option<Ps> {
        // "Dynamic P: ... P = OWD - T."
        let excess = sample.owd - gate.threshold as i64;
        if excess <= 0 {
            return None;
        }
        self.hold.until(sample.now, excess as Ps, gate)
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

    /// The fixed rule with another reading of a hold.
    fn fixed_with(hold: Hold) -> RuleConfig {
        RuleConfig::SmartPauseFixed(Params {
            hold,
            ..Params::default()
        })
    }

    /// T = 50 us, P = 20 us; a reading above T at 101 us, two more inside
    /// its hold (at 110 and 115 us) and one after it (at 200 us).
    const DURING_AND_AFTER: [(u64, u64, u64); 4] =
        [(101, 51, 50), (110, 80, 30), (115, 60, 55), (200, 70, 130)];

    #[test]
    fn once_ignores_readings_while_held() {
        let got = script(fixed_with(Hold::Once), 50 * US, &DURING_AND_AFTER);
        // Held 101-121 us; 110 and 115 change nothing; 200 starts a new hold.
        assert_eq!(
            got,
            vec![(121, true), (121, false), (121, false), (220, true)]
        );
    }

    #[test]
    fn per_packet_queues_a_delay_per_reading() {
        let got = script(fixed_with(Hold::PerPacket), 50 * US, &DURING_AND_AFTER);
        // 121, then P more after each hold: 141, 161; at 200 the gate is open again.
        assert_eq!(
            got,
            vec![(121, true), (141, true), (161, true), (220, true)]
        );
    }

    #[test]
    fn dynamic_per_packet_adds_owd_minus_t() {
        let r = RuleConfig::SmartPauseDynamic(DynamicParams {
            hold: Hold::PerPacket,
            ..DynamicParams::default()
        });
        // T = 14 us: 6 us from 100, then 3 us after that hold.
        let got = script(r, 14 * US, &[(100, 20, 80), (101, 17, 84)]);
        assert_eq!(got, vec![(106, true), (109, true)]);
    }

    #[test]
    fn hold_is_read_from_a_scenario_table_and_names_mistakes() {
        let p: Params = toml::from_str("hold = \"once\"").unwrap();
        assert_eq!(p.hold, Hold::Once);
        assert_eq!(Params::default().hold, Hold::Rearm);
        let e = toml::from_str::<DynamicParams>("hold = \"sometimes\"").unwrap_err();
        assert!(e.to_string().contains("rearm"), "{e}");
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

//! The import's choices where HPCC-sim's behaviour and its intent part:
//! PFC headroom and the class ACKs travel in. By default the import does what
//! HPCC-sim does; each option switches to the other behaviour
//! (docs/hpcc-interop.md, "Import options"). Two more choices keep incast's
//! own behaviour by default, so that earlier imports keep their results, and
//! offer HPCC-sim's as an option: the path choice (incast's seeded flow hash,
//! or HPCC-sim's ECMP rule) and the clock (exact transmission times, or
//! ns-3's whole nanoseconds).

use crate::scenario::ScenarioError;

/// How the imported switches size PFC headroom.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeadroomChoice {
    /// HPCC-sim's `3 x rate x link delay` per port (`third.cc`):
    /// `switch.pfc.headroom = { rule = "hpcc" }`.
    #[default]
    Hpcc,
    /// incast's worst-case formula per port (`switch.pfc.headroom` unset:
    /// [`crate::mech::pfc::headroom_formula`]).
    Formula,
}

/// Where ACKs and NACKs travel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AckChoice {
    /// As HPCC-sim runs: switches queue an ACK or NACK in the class of the data
    /// it acknowledges (`SwitchNode::AckHighPrio` is never set by `third.cc`),
    /// where it waits behind data and is charged to PFC like data; the NIC sends
    /// ACKs before data and, with `ACK_HIGH_PRIO 1`, even while PFC pauses the
    /// data class (`rdma.ctrl_class` = the data class,
    /// `rdma.ctrl_ignores_pause`).
    #[default]
    Hpcc,
    /// As `ACK_HIGH_PRIO` intends: with 1, ACKs travel in class 7 everywhere,
    /// strict priority above data, lossy and never marked; with 0, in class 3.
    HighPriority,
}

/// How switches choose among equal-cost next hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcmpChoice {
    /// incast's seeded per-flow hash (`[routing]` unset): the seed moves
    /// the paths.
    #[default]
    Flow,
    /// HPCC-sim's rule (`routing.ecmp = "hpcc"`,
    /// [`crate::topology::hpcc_ecmp`]): every flow takes the path it takes
    /// in HPCC-sim. Needs one destination port for all flows.
    Hpcc,
}

/// How long a transmission or a pacing gap lasts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClockChoice {
    /// incast's exact times (`[timing]` unset).
    #[default]
    Exact,
    /// ns-3's, so HPCC-sim's (`timing.tx_times = "ns3"`): truncated to whole
    /// nanoseconds ([`crate::units::ns3_tx_time`]). A 1048-byte packet at
    /// 100 Gb/s takes 83 ns there: HPCC-sim's links carry 1 % more than their rate.
    Ns3,
}

/// The import's options ([`crate::hpcc_format::import_with`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    pub headroom: HeadroomChoice,
    pub acks: AckChoice,
    pub ecmp: EcmpChoice,
    pub clock: ClockChoice,
}

impl ImportOptions {
    /// Names of the `headroom` choices.
    pub const HEADROOM: &'static [&'static str] = &["hpcc", "formula"];
    /// Names of the `acks` choices.
    pub const ACKS: &'static [&'static str] = &["hpcc", "high_priority"];
    /// Names of the `ecmp` choices.
    pub const ECMP: &'static [&'static str] = &["flow", "hpcc"];
    /// Names of the `clock` choices.
    pub const CLOCK: &'static [&'static str] = &["exact", "ns3"];

    /// Options by name (`None`: the default); an unknown name is an error
    /// naming the option and its choices.
    pub fn from_names(
        headroom: Option<&str>,
        acks: Option<&str>,
        ecmp: Option<&str>,
        clock: Option<&str>,
    ) -> Result<ImportOptions, ScenarioError> {
        let bad = |key: &str, v: &str, choices: &[&str]| {
            ScenarioError::new(
                key,
                format!(
                    "unknown {key} choice `{v}`; use one of: {}",
                    choices.join(", ")
                ),
            )
        };
        let headroom = match headroom {
            None | Some("hpcc") => HeadroomChoice::Hpcc,
            Some("formula") => HeadroomChoice::Formula,
            Some(v) => return Err(bad("headroom", v, Self::HEADROOM)),
        };
        let acks = match acks {
            None | Some("hpcc") => AckChoice::Hpcc,
            Some("high_priority") => AckChoice::HighPriority,
            Some(v) => return Err(bad("acks", v, Self::ACKS)),
        };
        let ecmp = match ecmp {
            None | Some("flow") => EcmpChoice::Flow,
            Some("hpcc") => EcmpChoice::Hpcc,
            Some(v) => return Err(bad("ecmp", v, Self::ECMP)),
        };
        let clock = match clock {
            None | Some("exact") => ClockChoice::Exact,
            Some("ns3") => ClockChoice::Ns3,
            Some(v) => return Err(bad("clock", v, Self::CLOCK)),
        };
        Ok(ImportOptions {
            headroom,
            acks,
            ecmp,
            clock,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_by_name() {
        assert_eq!(
            ImportOptions::from_names(None, None, None, None).unwrap(),
            ImportOptions::default()
        );
        let o = ImportOptions::from_names(
            Some("formula"),
            Some("high_priority"),
            Some("hpcc"),
            Some("ns3"),
        )
        .unwrap();
        assert_eq!(o.headroom, HeadroomChoice::Formula);
        assert_eq!(o.acks, AckChoice::HighPriority);
        assert_eq!(o.ecmp, EcmpChoice::Hpcc);
        assert_eq!(o.clock, ClockChoice::Ns3);
        let e = ImportOptions::from_names(None, None, None, Some("ps")).unwrap_err();
        assert_eq!(e.path, "clock");
        assert!(e.message.contains("exact, ns3"), "{}", e.message);
        let e = ImportOptions::from_names(None, None, Some("random"), None).unwrap_err();
        assert_eq!(e.path, "ecmp");
        assert!(e.message.contains("flow, hpcc"), "{}", e.message);
        let e = ImportOptions::from_names(None, Some("urgent"), None, None).unwrap_err();
        assert_eq!(e.path, "acks");
        assert!(e.message.contains("`urgent`") && e.message.contains("high_priority"));
        let e = ImportOptions::from_names(Some("3x"), None, None, None).unwrap_err();
        assert_eq!(e.path, "headroom");
    }
}

//! The import's choices where HPCC-sim's behaviour and its intent part:
//! PFC headroom and the class ACKs travel in. By default the import does what
//! HPCC-sim does; each option switches to the other behaviour
//! (docs/hpcc-interop.md, "Import options"). And the path choice: incast's
//! own seeded flow hash by default, HPCC-sim's ECMP rule as an option.

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

/// The import's options ([`crate::hpcc_format::import_with`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    pub headroom: HeadroomChoice,
    pub acks: AckChoice,
    pub ecmp: EcmpChoice,
}

impl ImportOptions {
    /// Names of the `headroom` choices.
    pub const HEADROOM: &'static [&'static str] = &["hpcc", "formula"];
    /// Names of the `acks` choices.
    pub const ACKS: &'static [&'static str] = &["hpcc", "high_priority"];
    /// Names of the `ecmp` choices.
    pub const ECMP: &'static [&'static str] = &["flow", "hpcc"];

    /// Options by name (`None`: the default); an unknown name is an error
    /// naming the option and its choices.
    pub fn from_names(
        headroom: Option<&str>,
        acks: Option<&str>,
        ecmp: Option<&str>,
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
        Ok(ImportOptions {
            headroom,
            acks,
            ecmp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_by_name() {
        assert_eq!(
            ImportOptions::from_names(None, None, None).unwrap(),
            ImportOptions::default()
        );
        let o = ImportOptions::from_names(Some("formula"), Some("high_priority"), Some("hpcc"))
            .unwrap();
        assert_eq!(o.headroom, HeadroomChoice::Formula);
        assert_eq!(o.acks, AckChoice::HighPriority);
        assert_eq!(o.ecmp, EcmpChoice::Hpcc);
        let e = ImportOptions::from_names(None, None, Some("random")).unwrap_err();
        assert_eq!(e.path, "ecmp");
        assert!(e.message.contains("flow, hpcc"), "{}", e.message);
        let e = ImportOptions::from_names(None, Some("urgent"), None).unwrap_err();
        assert_eq!(e.path, "acks");
        assert!(e.message.contains("`urgent`") && e.message.contains("high_priority"));
        let e = ImportOptions::from_names(Some("3x"), None, None).unwrap_err();
        assert_eq!(e.path, "headroom");
    }
}

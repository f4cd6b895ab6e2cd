//! Checks of flows that end at a time rather than a size: `stop` of
//! `[[workload.flows]]`, and the on/off schedules of `[[workload.bulk]]`
//! resolved to [`BulkGroup`]s.

use super::{check_class, BulkGroup, Scenario, ScenarioError, DEFAULT_STOP};
use crate::config_types::TimeValue;
use crate::transport::cc::CcConfig;
use crate::units::Ps;

impl Scenario {
    /// A flow's (or a bulk schedule's) `stop` at key `path`: after its
    /// `start`, and not after the end of the run (a flow still sending
    /// there would be recorded unfinished, not stopped).
    pub(super) fn check_stop(&self, start: Ps, stop: Ps, path: &str) -> Result<(), ScenarioError> {
        if stop <= start {
            return Err(ScenarioError::new(
                path,
                format!(
                    "stop ({}) is not after start ({}): the sender stops offering data at \
                     `stop`, so it must come later; set stop after start (or remove it)",
                    TimeValue(stop),
                    TimeValue(start)
                ),
            ));
        }
        let run_stop = self.config.stop.map_or(DEFAULT_STOP, |s| s.0);
        if stop > run_stop {
            let which = if self.config.stop.is_some() {
                "the scenario's `stop`"
            } else {
                "the default stop"
            };
            return Err(ScenarioError::new(
                path,
                format!(
                    "stop ({}) is after the end of the run ({}, {which}): the flow would be cut \
                     by the end of the run instead; set the scenario's top-level stop to at \
                     least {}, or stop the flow earlier",
                    TimeValue(stop),
                    TimeValue(run_stop),
                    TimeValue(stop)
                ),
            ));
        }
        Ok(())
    }

    /// `[[workload.bulk]]`: hosts, times and the congestion control of each
    /// on/off schedule (new congestion controls are added to `ccs`).
    pub(super) fn validate_bulk(
        &self,
        ccs: &mut Vec<CcConfig>,
    ) -> Result<Vec<BulkGroup>, ScenarioError> {
        let mut out = vec![];
        for (i, b) in self.config.workload.bulk.iter().enumerate() {
            let p = format!("workload.bulk[{i}]");
            let src = self.host(&b.src, &format!("{p}.src"))?;
            let dst = self.host(&b.dst, &format!("{p}.dst"))?;
            if src == dst {
                return Err(ScenarioError::new(
                    format!("{p}.dst"),
                    format!(
                        "source and destination are both host {src}: a bulk flow goes from one \
                         host to another; set dst to another host"
                    ),
                ));
            }
            if b.on.0 == 0 {
                return Err(ScenarioError::new(
                    format!("{p}.on"),
                    "is 0, so no flow would ever send: give each on-period a length, e.g. \
                     on = \"5ms\" (and off = \"5ms\" for a 10 ms period)",
                ));
            }
            if b.start.0 > crate::units::MAX_TIME {
                return Err(ScenarioError::new(
                    format!("{p}.start"),
                    "starts after 2^62 ps (about 53 days), the longest supported time",
                ));
            }
            self.check_stop(b.start.0, b.stop.0, &format!("{p}.stop"))?;
            let class = b.class.unwrap_or(self.data_class());
            check_class(class, &format!("{p}.class"))?;
            let cc = self.group_cc(ccs, &b.cc, &p)?;
            if let Some(name) = ccs[cc as usize].pull_transport() {
                return Err(ScenarioError::new(
                    format!("{p}.cc"),
                    format!(
                        "bulk flows are long-lived and an {name} flow has a size ({name} numbers \
                         its packets): pick a TCP congestion control for this group"
                    ),
                ));
            }
            out.push(BulkGroup {
                src,
                dst,
                start: b.start.0,
                stop: b.stop.0,
                on: b.on.0,
                off: b.off.0,
                class,
                cc,
            });
        }
        Ok(out)
    }
}

//! The sections of the IBM talk's model (Minkenberg and Gusat, April 2007)
//! that are not the NIC's own: `[cm]`, `[switch.input_buffer]` and
//! `[[workload.hotspot]]`, and the checks that tie them to `[nic]`. `[cm]`
//! and `[[workload.hotspot]]` are feature sections (one line each in
//! `feature_sections!`, lib.rs; `scenario/sections.rs`), `[switch.input_buffer]`
//! the switch mechanism's section (`mech/cm.rs`), checked with `[cm]`.
//!
//! ```toml
//! cm = "ecm"                     # or [cm] scheme = "qcn" ...
//! [nic]
//! model = "adapter"              # VOQs, rate limiters, source quench, receive buffer
//! [switch.input_buffer]          # 300 KB per input, PAUSE at 260/230 KB
//! [[workload.hotspot]]
//! host = 0
//! service_rate = 0.1             # of its link rate
//! start = "10ms"
//! duration = "400ms"
//! ```

use super::rx_buffer::rx_watermarks;
use super::CmConfig;
use crate::config_types::TimeValue;
use crate::scenario::{HostRef, Scenario, ScenarioError, ScenarioSection, WorkloadSection};
use crate::topology::NodeRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[[workload.hotspot]]`: a host whose receive buffer drains at a fraction
/// of its link rate from `start` for `duration` (the talk's output-generated
/// hotspot: "service rate 10 %").
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HotspotConfig {
    pub host: HostRef,
    /// The host's service rate as a fraction of its link rate, in (0, 1].
    pub service_rate: f64,
    #[serde(default)]
    pub start: TimeValue,
    /// Unset: until the end of the run.
    pub duration: Option<TimeValue>,
}

/// `[cm]` (its registry line: `feature_sections!`, lib.rs).
impl ScenarioSection for CmConfig {
    /// `cm = "<scheme>"` (its defaults) or a table `[cm] scheme = ...`.
    fn deserialize_section<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::deserialize_cm(d)
    }

    /// Written always, `scheme = "none"` too, as before the registry (run
    /// hashes of the scenarios written since).
    fn left_out(&self) -> bool {
        false
    }

    /// `[cm]` and `[switch.input_buffer]`: each valid, and a scheme with
    /// the adapter, `[nic] model = "adapter"`, whose rate limiters it needs.
    fn validate_section(&self, sc: &Scenario) -> Result<(), ScenarioError> {
        self.validate()
            .map_err(|e| ScenarioError::new(format!("cm.{}", e.field), e.message))?;
        if !matches!(self, CmConfig::None(_)) && !sc.config.nic.is_adapter() {
            return Err(ScenarioError::new(
                "cm",
                format!(
                    "scheme \"{}\" needs the sources' rate limiters: add [nic] model = \"adapter\"",
                    self.name()
                ),
            ));
        }
        validate_input_buffer(sc)
    }
}

/// `[switch.input_buffer]`: its own PAUSE excludes PFC and congestion
/// isolation.
fn validate_input_buffer(sc: &Scenario) -> Result<(), ScenarioError> {
    let c = &sc.config;
    if let Some(ib) = &c.switch.input_buffer {
        ib.validate().map_err(|e| {
            ScenarioError::new(format!("switch.input_buffer.{}", e.field), e.message)
        })?;
        if c.switch.pfc.is_some() {
            return Err(ScenarioError::new(
                "switch.input_buffer",
                "the input-partitioned memory has its own PAUSE (802.3x, per input); remove [switch.pfc] or [switch.input_buffer]",
            ));
        }
    }
    Ok(())
}

/// `[[workload.hotspot]]` (its registry line: `feature_sections!`, lib.rs).
impl WorkloadSection for HotspotConfig {
    /// `"hotspot": []` too, as before the registry (run hashes).
    const WRITTEN_WHEN_EMPTY: bool = true;

    /// A host, a service rate, the adapter model, and receive-buffer
    /// watermarks that fit the host's link.
    fn validate_entry(&self, sc: &Scenario, path: &str) -> Result<(), ScenarioError> {
        let (c, h) = (&sc.config, self);
        sc.host(&h.host, &format!("{path}.host"))?;
        if !(h.service_rate > 0.0 && h.service_rate <= 1.0) {
            return Err(ScenarioError::new(
                format!("{path}.service_rate"),
                format!(
                    "must be a fraction of the link rate in (0, 1], got {}; the talk uses 0.1",
                    h.service_rate
                ),
            ));
        }
        if !c.nic.is_adapter() {
            return Err(ScenarioError::new(
                path,
                "a hotspot drains the adapter's receive buffer: add [nic] model = \"adapter\"",
            ));
        }
        if h.duration.is_some_and(|d| d.0 == 0) {
            return Err(ScenarioError::new(
                format!("{path}.duration"),
                "must be positive (omit it for a hotspot until the end)",
            ));
        }
        // The receive buffer's PAUSE levels on this host's own link.
        let host = sc.host_index(&h.host);
        if let Some(&(link, _)) = sc.graph.ports(NodeRef::Host(host)).first() {
            let l = &sc.graph.links[link as usize];
            let adapter = &c.nic.adapter;
            let headroom = adapter.pause_headroom.map_or_else(
                || super::rx_buffer::rx_headroom(l.rate, l.delay, sc.largest_frame()),
                |h| h.bytes(),
            );
            rx_watermarks(adapter.receive_buffer, headroom, adapter.pause_gap).map_err(|e| {
                ScenarioError::new(
                    format!("nic.adapter.{}", e.field),
                    format!("{} (on hotspot host {host}'s link, {path})", e.message),
                )
            })?;
        }
        Ok(())
    }
}

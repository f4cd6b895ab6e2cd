//! The sections of the IBM talk's model (Minkenberg and Gusat, April 2007): `[nic]` (the
//! adapter), `[[workload.hotspot]]`, and the checks that tie them to `[cm]`
//! and `[switch.input_buffer]`.
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

use super::{HostRef, Scenario, ScenarioError};
use crate::cm::adapter::AdapterParams;
use crate::cm::rx_buffer::rx_watermarks;
use crate::cm::CmConfig;
use crate::config_types::TimeValue;
use crate::topology::NodeRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[nic]`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    pub model: crate::nic::NicModelKind,
    /// Hosts behind each NIC port (a multi-host NIC): every host of the
    /// topology becomes this many, numbered contiguously, the first keeping
    /// its name and the others named `<name>.1`, `<name>.2`, ...
    pub hosts: u32,
    /// Each host's PCIe link to its NIC, in both directions: it caps what
    /// the host sends ([`crate::nic::pcie`]) and drains its receive queue
    /// (`[nic.receive]`, whose own `pcie_rate` overrides this one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcie_rate: Option<crate::config_types::RateValue>,
    /// The adapter's buffers (`model = "adapter"`). Defaults: the talk's.
    pub adapter: AdapterParams,
    /// The transmit queues (`model = "queues"`).
    pub queues: crate::nic::queues::QueuesConfig,
    /// The receive path through PCIe, for every NIC (any model but the
    /// adapter, which has its own receive buffer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive: Option<crate::nic::rx::ReceiveConfig>,
}

impl NicConfig {
    /// Whether the NIC is the IBM talk's adapter (`model = "adapter"`).
    pub fn is_adapter(&self) -> bool {
        self.model == crate::nic::NicModelKind::Adapter
    }
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            model: Default::default(),
            hosts: 1,
            pcie_rate: None,
            adapter: AdapterParams::default(),
            queues: Default::default(),
            receive: None,
        }
    }
}

impl NicConfig {
    /// The receive path's settings and each host's receive PCIe rate, when
    /// there is one (`[nic.receive]` or `[nic] pcie_rate`; validated).
    pub(crate) fn receive_path(
        &self,
    ) -> Option<(crate::nic::rx::ReceiveConfig, crate::units::Rate)> {
        let cfg = self.receive.clone().or_else(|| {
            self.pcie_rate
                .map(|_| crate::nic::rx::ReceiveConfig::default())
        })?;
        let rate = cfg.pcie_rate.or(self.pcie_rate)?;
        Some((cfg, rate.0))
    }
}

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

impl Scenario {
    /// The host a validated [`HostRef`] names.
    pub(crate) fn host_index(&self, r: &HostRef) -> u32 {
        match r {
            HostRef::Index(i) => *i,
            HostRef::Name(n) => self
                .graph
                .host_names
                .iter()
                .position(|x| x == n)
                .expect("validated") as u32,
        }
    }

    /// The class of transport data (and raw frames) where a group names
    /// none: the RDMA data class, or `transport.class`.
    pub(crate) fn data_class(&self) -> u8 {
        let c = &self.config;
        c.rdma.as_ref().map_or(c.transport.class, |r| r.data_class)
    }

    /// The largest raw frame of the on/off sources (1500 B without any): the
    /// adapter's buffers and PAUSE thresholds are sized by it.
    pub(crate) fn largest_frame(&self) -> u64 {
        let onoff = &self.config.workload.onoff;
        onoff.iter().map(|o| o.frame.bytes()).max().unwrap_or(1500)
    }

    /// `[cm]`, `[nic]`, `[switch.input_buffer]` and `[[workload.hotspot]]`:
    /// each valid, and the combinations that work together.
    pub(super) fn validate_cm(&self) -> Result<(), ScenarioError> {
        let c = &self.config;
        c.cm.validate()
            .map_err(|e| ScenarioError::new(format!("cm.{}", e.field), e.message))?;
        self.validate_nic_model()?;
        self.validate_nic_receive()?;
        self.validate_input_buffer()?;
        self.validate_hotspots()
    }

    /// `[nic]`: the PCIe rate, the congestion-management scheme's need of
    /// the adapter, then the model's own checks (in its module:
    /// [`crate::nic::NicModel::validate`]).
    fn validate_nic_model(&self) -> Result<(), ScenarioError> {
        let c = &self.config;
        let adapter = c.nic.is_adapter();
        if c.nic
            .pcie_rate
            .is_some_and(|rate| rate.0.bits_per_sec() == 0)
            && !adapter
        {
            return Err(ScenarioError::new(
                "nic.pcie_rate",
                "must be positive, e.g. \"32Gbps\"",
            ));
        }
        if !matches!(c.cm, CmConfig::None(_)) && !adapter {
            return Err(ScenarioError::new(
                "cm",
                format!(
                    "scheme \"{}\" needs the sources' rate limiters: add [nic] model = \"adapter\"",
                    c.cm.name()
                ),
            ));
        }
        crate::nic::validate_model(self)
    }

    /// `[nic.receive]`: the receive queues and their PCIe link.
    fn validate_nic_receive(&self) -> Result<(), ScenarioError> {
        let c = &self.config;
        let adapter = c.nic.is_adapter();
        if let Some(r) = &c.nic.receive {
            if adapter {
                return Err(ScenarioError::new(
                    "nic.receive",
                    "the adapter has its own receive buffer (nic.adapter.receive_buffer); remove [nic.receive]",
                ));
            }
            match r.pcie_rate.or(c.nic.pcie_rate) {
                None => return Err(ScenarioError::new(
                    "nic.receive.pcie_rate",
                    "give the rate at which the NIC hands packets to each host, e.g. \"32Gbps\", \
                         or set [nic] pcie_rate",
                )),
                Some(rate) if rate.0.bits_per_sec() == 0 => {
                    return Err(ScenarioError::new(
                        "nic.receive.pcie_rate",
                        "must be positive, e.g. \"32Gbps\"",
                    ))
                }
                Some(_) => {}
            }
            if r.split == crate::nic::queues::Split::Host {
                return Err(ScenarioError::new(
                    "nic.receive.split",
                    "every host has its own receive queues already: use \"shared\", \"cc\" or \"class\"",
                ));
            }
            if r.buffer.bytes() < 9_000 {
                return Err(ScenarioError::new(
                    "nic.receive.buffer",
                    format!(
                        "must hold a few packets, got {} B; e.g. \"1MB\"",
                        r.buffer.bytes()
                    ),
                ));
            }
            if r.weights.contains(&0) {
                return Err(ScenarioError::new(
                    "nic.receive.weights",
                    "weights must be positive integers",
                ));
            }
        }
        Ok(())
    }

    /// `[switch.input_buffer]`: its own PAUSE excludes PFC and congestion
    /// isolation.
    fn validate_input_buffer(&self) -> Result<(), ScenarioError> {
        let c = &self.config;
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

    /// `[[workload.hotspot]]`: a host, a service rate, the adapter model, and
    /// receive-buffer watermarks that fit the host's link.
    fn validate_hotspots(&self) -> Result<(), ScenarioError> {
        let c = &self.config;
        let adapter = c.nic.is_adapter();
        for (i, h) in c.workload.hotspot.iter().enumerate() {
            let path = format!("workload.hotspot[{i}]");
            self.host(&h.host, &format!("{path}.host"))?;
            if !(h.service_rate > 0.0 && h.service_rate <= 1.0) {
                return Err(ScenarioError::new(
                    format!("{path}.service_rate"),
                    format!(
                        "must be a fraction of the link rate in (0, 1], got {}; the talk uses 0.1",
                        h.service_rate
                    ),
                ));
            }
            if !adapter {
                return Err(ScenarioError::new(
                    path.clone(),
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
            let host = self.host_index(&h.host);
            if let Some(&(link, _)) = self.graph.ports(NodeRef::Host(host)).first() {
                let l = &self.graph.links[link as usize];
                let adapter = &c.nic.adapter;
                let headroom = adapter.pause_headroom.map_or_else(
                    || crate::nic::adapter::rx_headroom(l.rate, l.delay, self.largest_frame()),
                    |h| h.bytes(),
                );
                rx_watermarks(adapter.receive_buffer, headroom, adapter.pause_gap).map_err(
                    |e| {
                        ScenarioError::new(
                            format!("nic.adapter.{}", e.field),
                            format!("{} (on hotspot host {host}'s link, {path})", e.message),
                        )
                    },
                )?;
            }
        }
        Ok(())
    }
}

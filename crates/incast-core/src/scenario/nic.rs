//! `[nic]`: the NIC model, hosts per NIC port (multi-host NICs), the PCIe
//! link to each host and the receive path, and their checks (a model's own
//! checks live with it: [`crate::nic::NicModel::validate`]).
//!
//! ```toml
//! [nic]
//! model = "queues"               # or "fifo", "adapter", ...
//! hosts = 2                      # two hosts behind each NIC port
//! pcie_rate = "32Gbps"
//! ```

use super::{Scenario, ScenarioError};
use crate::cm::adapter::AdapterParams;
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
    pub queues: crate::params::nic::QueuesConfig,
    /// The receive path through PCIe, for every NIC (any model but the
    /// adapter, which has its own receive buffer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receive: Option<crate::params::nic::ReceiveConfig>,
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
    ) -> Option<(crate::params::nic::ReceiveConfig, crate::units::Rate)> {
        let cfg = self.receive.clone().or_else(|| {
            self.pcie_rate
                .map(|_| crate::params::nic::ReceiveConfig::default())
        })?;
        let rate = cfg.pcie_rate.or(self.pcie_rate)?;
        Some((cfg, rate.0))
    }
}

impl Scenario {
    /// The largest raw frame of the on/off sources (1500 B without any): the
    /// adapter's buffers and PAUSE thresholds are sized by it.
    pub(crate) fn largest_frame(&self) -> u64 {
        let onoff = &self.config.workload.onoff;
        onoff.iter().map(|o| o.frame.bytes()).max().unwrap_or(1500)
    }

    /// `[nic]`: the PCIe rate, then the model's own checks (in its module:
    /// [`crate::nic::NicModel::validate`]), then the receive path.
    pub(super) fn validate_nic(&self) -> Result<(), ScenarioError> {
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
        crate::nic::validate_model(self)?;
        self.validate_nic_receive()
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
            if r.split == crate::params::nic::Split::Host {
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
}

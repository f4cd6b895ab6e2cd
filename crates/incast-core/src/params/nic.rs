//! `[nic]`'s plain settings the NIC models read: the transmit queues
//! ([`crate::nic::queues`]) and the receive path ([`crate::nic::rx`]).

use crate::config_types::{RateValue, SizeValue};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How flows map to the NIC's transmit queues.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// One queue for every flow.
    #[default]
    Shared,
    /// One queue per TCP congestion control of the run.
    Cc,
    /// One queue per traffic class (8).
    Class,
    /// One queue per host of a multi-host NIC (`[nic] hosts`; transmit only).
    Host,
}

/// When a flow's segments enter their transmit queue (and are stamped).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Fill {
    /// When the port asks for its next packet (at the end of each
    /// transmission): a segment the window admits during a transmission
    /// waits in the host stack, unstamped, until then.
    #[default]
    PortFree,
    /// As soon as the window admits them (the ACK, the pacing timer, the
    /// flow's start), the port busy or not: htsim's STrack source hands every
    /// packet the window admits to the host's `FairScheduler` on the ACK,
    /// stamped (`STrackSrc::send_next_packet`; docs/htsim-strack.md).
    Admitted,
}

/// `[nic.queues]`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QueuesConfig {
    pub split: Split,
    /// Bytes a queue may hold (the host stack stops filling it there).
    pub limit: SizeValue,
    /// Weights of the queues in the round robin (queue order: the run's
    /// congestion controls, or classes 0 to 7); missing ones are 1.
    pub weights: Vec<u32>,
    /// When segments enter the queues: `"port_free"` (the default) or
    /// `"admitted"` ([`Fill`]).
    pub fill: Fill,
}

impl Default for QueuesConfig {
    fn default() -> Self {
        QueuesConfig {
            split: Split::Shared,
            limit: SizeValue(256_000),
            weights: vec![],
            fill: Fill::PortFree,
        }
    }
}

/// `[nic.receive]`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReceiveConfig {
    /// The rate at which the NIC hands packets to each host (PCIe);
    /// `[nic] pcie_rate` if unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcie_rate: Option<RateValue>,
    #[serde(default)]
    pub split: Split,
    /// Bytes a receive queue may hold; a packet that does not fit is dropped.
    #[serde(default = "default_buffer")]
    pub buffer: SizeValue,
    /// Mark CE on ECT packets that join a queue holding more than this.
    pub ecn_k: Option<SizeValue>,
    /// Round-robin weights in queue order (default 1).
    #[serde(default)]
    pub weights: Vec<u32>,
}

fn default_buffer() -> SizeValue {
    SizeValue(1_000_000)
}

impl Default for ReceiveConfig {
    /// The receive path `[nic] pcie_rate` alone implies: one shared 1 MB
    /// queue per host, no marking.
    fn default() -> Self {
        ReceiveConfig {
            pcie_rate: None,
            split: Split::Shared,
            buffer: default_buffer(),
            ecn_k: None,
            weights: vec![],
        }
    }
}

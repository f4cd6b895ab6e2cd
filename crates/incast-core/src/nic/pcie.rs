//! Each host's PCIe link to its NIC, transmit direction (`[nic] pcie_rate`).
//!
//! A multi-host NIC (`[nic] hosts`, the Yosemite v2 sled of the
//! Netronome/Facebook talk, OCP Global Summit 2019: four compute slots behind one NIC
//! port) connects every host over a PCIe link of its own; the talk limited
//! those links to mimic incast. Here a host may hand its NIC a data packet
//! only when its PCIe link has finished the previous one: after a packet of
//! `b` bytes at `t` the host's next may go at `t + b / pcie_rate`. So each
//! host sends at most `pcie_rate`, and the NIC's model (round robin, queues)
//! shares the port between the hosts that may send. The NIC reads ahead, so
//! the cap limits the rate, not the latency of a lone packet; ACKs and other
//! control packets are small and not charged.
//!
//! The receive direction is [`super::rx`]: packets wait in the host's receive
//! queue for its PCIe link.

use crate::units::{Ps, Rate};

/// Every host's transmit PCIe link.
#[derive(Debug)]
pub(crate) struct PcieTx {
    pub rate: Rate,
    /// Per host: when its link may take the next packet.
    free_at: Vec<Ps>,
    /// Per host: data bytes sent through it (the summary's check).
    pub bytes: Vec<u64>,
}

impl PcieTx {
    pub fn new(rate: Rate, hosts: usize) -> PcieTx {
        PcieTx {
            rate,
            free_at: vec![0; hosts],
            bytes: vec![0; hosts],
        }
    }

    /// A threaded run's end: host `host`'s link from partition `from`,
    /// which owns it.
    pub fn take_host(&mut self, from: &mut PcieTx, host: u32) {
        let host = host as usize;
        std::mem::swap(&mut self.free_at[host], &mut from.free_at[host]);
        std::mem::swap(&mut self.bytes[host], &mut from.bytes[host]);
    }
}

/// When host `host`'s link may take its next packet (0 without a cap).
#[inline(always)]
pub(crate) fn free_at(pcie: &Option<Box<PcieTx>>, host: u32) -> Ps {
    match pcie {
        Some(p) => p.free_at[host as usize],
        None => 0,
    }
}

/// Host `host` handed its NIC a packet of `bytes` at `now`.
#[inline(always)]
pub(crate) fn charge(pcie: &mut Option<Box<PcieTx>>, now: Ps, host: u32, bytes: u64) {
    if let Some(p) = pcie {
        p.free_at[host as usize] = now + p.rate.tx_time(bytes);
        p.bytes[host as usize] += bytes;
    }
}

/// The summary's `pcie` block: the rate and the busiest host's bytes.
pub(crate) fn summary(pcie: &Option<Box<PcieTx>>) -> Option<serde_json::Value> {
    let p = pcie.as_deref()?;
    Some(serde_json::json!({
        "gbps": p.rate.bits_per_sec() as f64 / 1e9,
        "max_host_tx_bytes": p.bytes.iter().copied().max().unwrap_or(0),
    }))
}

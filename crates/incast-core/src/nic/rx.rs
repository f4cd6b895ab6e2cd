//! The NIC's receive path through PCIe (`[nic.receive]`): packets that
//! reach a NIC wait in its receive queues and are handed to the host one at
//! a time at the PCIe (or host) rate. When that rate is below the link's, a
//! queue builds in the NIC; the NIC marks ECN (CE on ECT packets, RFC 3168)
//! when a packet joins a queue holding more than `ecn_k` bytes, and drops a
//! packet that does not fit the queue's `buffer`.
//!
//! The queues are one shared by all flows or split by congestion control or
//! class ([`Split`], as the transmit queues), served by deficit weighted round
//! robin. The Netronome/Facebook talk (`seeds/003`) limited the NIC's PCIe
//! link to mimic incast and split the NIC queues by congestion control so
//! that CUBIC could not keep DCTCP's storage reads waiting.
//!
//! Without `[nic.receive]` a packet is delivered when it arrives (the host
//! takes everything at once), as before.

use super::queues::Split;
use crate::config_types::{RateValue, SizeValue};
use crate::net::packet::flags;
use crate::net::{PacketKind, PktId};
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::{Ps, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `[nic.receive]`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReceiveConfig {
    /// The rate at which the NIC hands packets to the host (PCIe).
    pub pcie_rate: RateValue,
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

#[derive(Debug, Default)]
struct RxQueue {
    pkts: VecDeque<PktId>,
    bytes: u64,
    deficit: i64,
    max_bytes: u64,
    marks: u64,
    drops: u64,
}

/// Every NIC's receive queues.
pub(crate) struct RxPath {
    split: Split,
    rate: Rate,
    buffer: u64,
    ecn_k: Option<u64>,
    quantum: Vec<i64>,
    per_nic: usize,
    queues: Vec<RxQueue>,
    /// Per NIC: the packet being handed to the host, and the round robin's
    /// position and whether its quantum was added on this visit.
    in_service: Vec<Option<PktId>>,
    next: Vec<(u32, bool)>,
}

impl RxPath {
    pub fn new(cfg: &ReceiveConfig, nics: usize, ccs: usize, mtu: u64) -> RxPath {
        let per_nic = match cfg.split {
            Split::Shared => 1,
            Split::Cc => ccs.max(1),
            Split::Class => crate::net::NUM_CLASSES,
        };
        RxPath {
            split: cfg.split,
            rate: cfg.pcie_rate.0,
            buffer: cfg.buffer.bytes(),
            ecn_k: cfg.ecn_k.map(|k| k.bytes()),
            quantum: (0..per_nic)
                .map(|q| cfg.weights.get(q).copied().unwrap_or(1).max(1) as i64 * mtu as i64)
                .collect(),
            per_nic,
            queues: (0..nics * per_nic).map(|_| RxQueue::default()).collect(),
            in_service: vec![None; nics],
            next: vec![(0, false); nics],
        }
    }

    /// Bytes held in receive queues and in service (conservation).
    pub fn held_bytes(&self, size: impl Fn(PktId) -> u64) -> u64 {
        let queued: u64 = self.queues.iter().map(|q| q.bytes).sum();
        queued
            + self
                .in_service
                .iter()
                .flatten()
                .map(|&id| size(id))
                .sum::<u64>()
    }
}

/// Packet `id` reached NIC `n`: into its receive queue (or dropped), and
/// into service if the PCIe link is idle.
#[inline(never)]
pub(crate) fn arrive(w: &mut World, now: Ps, n: u32, id: PktId) {
    let pkt = *w.arena.get(id);
    let rx = w.rx.as_deref_mut().expect("the receive path");
    let q = match rx.split {
        Split::Shared => 0,
        Split::Cc => match pkt.kind {
            PacketKind::Data | PacketKind::Ack => w.flows.slots[pkt.flow as usize].cc as usize,
            _ => 0,
        },
        Split::Class => pkt.class as usize,
    };
    let q = n as usize * rx.per_nic + q.min(rx.per_nic - 1);
    let size = pkt.size as u64;
    let queue = &mut rx.queues[q];
    if queue.bytes + size > rx.buffer {
        queue.drops += 1;
        w.counters.cons.dropped_bytes += size;
        w.arena.free(id);
        return;
    }
    if rx.ecn_k.is_some_and(|k| queue.bytes > k)
        && pkt.flags & flags::ECT != 0
        && pkt.flags & flags::CE == 0
    {
        w.arena.get_mut(id).flags |= flags::CE;
        queue.marks += 1;
    }
    queue.pkts.push_back(id);
    queue.bytes += size;
    queue.max_bytes = queue.max_bytes.max(queue.bytes);
    if rx.in_service[n as usize].is_none() {
        start(w, now, n);
    }
}

/// NIC `n`'s PCIe link is free: the next packet by weighted round robin.
fn start(w: &mut World, now: Ps, n: u32) {
    let rx = w.rx.as_deref_mut().expect("the receive path");
    let first = n as usize * rx.per_nic;
    if rx.queues[first..first + rx.per_nic]
        .iter()
        .all(|q| q.pkts.is_empty())
    {
        return;
    }
    loop {
        let (k, fresh) = rx.next[n as usize];
        let q = first + k as usize;
        let queue = &mut rx.queues[q];
        let Some(&head) = queue.pkts.front() else {
            queue.deficit = 0;
            rx.next[n as usize] = (((k as usize + 1) % rx.per_nic) as u32, false);
            continue;
        };
        let size = w.arena.get(head).size as u64;
        if queue.deficit >= size as i64 {
            queue.deficit -= size as i64;
            queue.pkts.pop_front();
            queue.bytes -= size;
            rx.in_service[n as usize] = Some(head);
            w.q.push(now + rx.rate.tx_time(size), Ev::PcieDone(n));
            return;
        }
        if !fresh {
            queue.deficit += rx.quantum[k as usize];
            rx.next[n as usize] = (k, true);
        } else {
            rx.next[n as usize] = (((k as usize + 1) % rx.per_nic) as u32, false);
        }
    }
}

/// NIC `n` handed its packet in service to the host.
pub(crate) fn on_done(w: &mut World, now: Ps, n: u32) {
    let rx = w.rx.as_deref_mut().expect("the receive path");
    let id = rx.in_service[n as usize]
        .take()
        .expect("a packet in service");
    start(w, now, n);
    super::deliver(w, now, n, id);
}

/// The summary's `nic_receive` block: per queue, the largest backlog on any
/// NIC, and the CE marks and drops of all NICs.
pub(crate) fn summary(w: &World) -> Option<serde_json::Value> {
    let rx = w.rx.as_deref()?;
    let names: Vec<String> = match rx.split {
        Split::Shared => vec!["shared".into()],
        Split::Cc => w.ccs.iter().map(|c| c.name().to_string()).collect(),
        Split::Class => (0..crate::net::NUM_CLASSES)
            .map(|c| format!("class{c}"))
            .collect(),
    };
    let mut out = serde_json::Map::new();
    for k in 0..rx.per_nic {
        let qs = rx.queues.iter().skip(k).step_by(rx.per_nic);
        let (mut max, mut marks, mut drops) = (0, 0, 0);
        for q in qs {
            max = max.max(q.max_bytes);
            marks += q.marks;
            drops += q.drops;
        }
        let name = names.get(k).cloned().unwrap_or_else(|| format!("queue{k}"));
        out.insert(
            name,
            serde_json::json!({ "max_bytes": max, "ecn_marks": marks, "drops": drops }),
        );
    }
    Some(serde_json::json!({
        "pcie_gbps": rx.rate.bits_per_sec() as f64 / 1e9,
        "queues": out,
    }))
}

//! The transmit-queue NIC (`[nic] model = "queues"`): the host stack fills
//! the NIC's transmit queues, each up to a byte limit (as a qdisc with byte
//! queue limits lets it), and the port drains them at line rate, by deficit
//! weighted round robin (Shreedhar and Varghese, SIGCOMM 1995) between the
//! queues.
//!
//! The queues are one shared by every flow (`split = "shared"`), one per TCP
//! congestion control (`"cc"`: the run's `congestion_controls`, in their
//! order) or one per traffic class (`"class"`). The Netronome/Facebook talk
//! (`seeds/003`) found that CUBIC traffic filling a shared NIC queue keeps
//! DCTCP's latency high, and that queues split by congestion control remove
//! that: a DCTCP segment then waits behind DCTCP segments only.
//!
//! Unlike the round-robin NIC, whose host stack is never ahead of the wire, a
//! flow here hands the NIC segments as long as its window allows and its
//! queue is below its limit: the segment's timestamp is when it entered the
//! queue, so the NIC queue's wait is part of the flow's RTT, as on a real host.
//! The queues are filled when the port asks for its next packet (at the end of
//! each transmission): a queue below its limit then takes segments from its
//! flows, round robin, until it reaches the limit.
//!
//! A queue whose head packet's priority is PAUSEd (PFC) is skipped, keeping
//! its deficit. TCP only (RDMA queue pairs pace themselves: refused).

use super::NicModel;
use crate::host::tcp;
use crate::net::PktId;
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::Ps;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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
}

/// `[nic.queues]`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QueuesConfig {
    pub split: Split,
    /// Bytes a queue may hold (the host stack stops filling it there).
    pub limit: crate::config_types::SizeValue,
    /// Weights of the queues in the round robin (queue order: the run's
    /// congestion controls, or classes 0 to 7); missing ones are 1.
    pub weights: Vec<u32>,
}

impl Default for QueuesConfig {
    fn default() -> Self {
        QueuesConfig {
            split: Split::Shared,
            limit: crate::config_types::SizeValue(256_000),
            weights: vec![],
        }
    }
}

/// One transmit queue of a NIC.
#[derive(Debug, Default)]
pub(crate) struct TxQueue {
    pkts: VecDeque<PktId>,
    bytes: u64,
    /// Flows of this queue that may send, in round-robin order.
    ready: VecDeque<u32>,
    deficit: i64,
    /// Statistics: the largest backlog, and bytes x time for the mean.
    pub max_bytes: u64,
    pub byte_ps: u128,
    since: Ps,
}

impl TxQueue {
    fn track(&mut self, now: Ps) {
        self.byte_ps += self.bytes as u128 * (now - self.since) as u128;
        self.since = now;
    }
}

/// Every NIC's transmit queues.
pub(crate) struct NicQueues {
    pub split: Split,
    pub limit: u64,
    /// Per queue: DWRR quantum (weight x MTU).
    quantum: Vec<i64>,
    /// `queues[nic * per_nic + q]`.
    pub queues: Vec<TxQueue>,
    pub per_nic: usize,
    /// Per NIC: the queue the round robin visits next, and whether its
    /// quantum was added on this visit.
    next: Vec<(u32, bool)>,
}

impl NicQueues {
    pub fn new(cfg: &QueuesConfig, nics: usize, ccs: usize, mtu: u64) -> NicQueues {
        let per_nic = match cfg.split {
            Split::Shared => 1,
            Split::Cc => ccs.max(1),
            Split::Class => crate::net::NUM_CLASSES,
        };
        let quantum = (0..per_nic)
            .map(|q| cfg.weights.get(q).copied().unwrap_or(1).max(1) as i64 * mtu as i64)
            .collect();
        NicQueues {
            split: cfg.split,
            limit: cfg.limit.bytes(),
            quantum,
            queues: (0..nics * per_nic).map(|_| TxQueue::default()).collect(),
            per_nic,
            next: vec![(0, false); nics],
        }
    }

    /// Bytes held in every queue (conservation).
    pub fn held_bytes(&self) -> u64 {
        self.queues.iter().map(|q| q.bytes).sum()
    }
}

/// The queue flow `slot` of NIC `nic` uses.
#[inline]
fn queue_of(w: &World, nq: &NicQueues, nic: u32, slot: u32) -> usize {
    let f = &w.flows.slots[slot as usize];
    let q = match nq.split {
        Split::Shared => 0,
        Split::Cc => f.cc as usize,
        Split::Class => f.class as usize,
    };
    nic as usize * nq.per_nic + q.min(nq.per_nic - 1)
}

/// The transmit-queue NIC model.
pub struct Queues;

impl NicModel for Queues {
    fn next_packet(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
        fill(w, now, nic);
        pick(w, now, nic)
    }

    fn flow_ready(w: &mut World, nic: u32, slot: u32) {
        let nq = w.nic_queues.as_deref().expect("the queues model");
        let q = queue_of(w, nq, nic, slot);
        let nq = w.nic_queues.as_deref_mut().expect("the queues model");
        nq.queues[q].ready.push_back(slot);
    }

    fn flow_done(w: &mut World, nic: u32, slot: u32) {
        let nq = w.nic_queues.as_deref().expect("the queues model");
        let q = queue_of(w, nq, nic, slot);
        let nq = w.nic_queues.as_deref_mut().expect("the queues model");
        nq.queues[q].ready.retain(|&x| x != slot);
    }

    fn has_work(w: &World, nic: u32) -> bool {
        let nq = w.nic_queues.as_deref().expect("the queues model");
        let first = nic as usize * nq.per_nic;
        nq.queues[first..first + nq.per_nic]
            .iter()
            .any(|q| q.bytes > 0 || !q.ready.is_empty())
    }
}

/// Every queue of NIC `n` below its limit takes segments from its ready
/// flows, round robin, until it reaches the limit or no flow may send.
fn fill(w: &mut World, now: Ps, n: u32) {
    let (first, per_nic, limit) = {
        let nq = w.nic_queues.as_deref().expect("the queues model");
        (n as usize * nq.per_nic, nq.per_nic, nq.limit)
    };
    for q in first..first + per_nic {
        loop {
            let nq = w.nic_queues.as_deref_mut().expect("the queues model");
            let txq = &mut nq.queues[q];
            if txq.bytes >= limit {
                break;
            }
            let Some(slot) = txq.ready.pop_front() else {
                break;
            };
            let f = &mut w.flows.slots[slot as usize];
            f.in_ready = false;
            if !f.active {
                continue;
            }
            if let Some(g) = f.gate.as_deref_mut() {
                if !g.is_open(now) {
                    let t = g.hold_until;
                    w.q.arm(&mut g.timer, t, Ev::Gate(slot));
                    continue;
                }
            }
            if now < f.tcp.next_send_at {
                let t = f.tcp.next_send_at;
                w.q.arm(&mut f.tcp.pace_timer, t, Ev::Pace(slot));
                continue;
            }
            let Some(pkt) = tcp::send_segment(w, now, slot) else {
                continue;
            };
            let size = w.arena.get(pkt).size as u64;
            let f = &mut w.flows.slots[slot as usize];
            let again = f.tcp.can_send(&w.tcp);
            if again {
                f.in_ready = true;
            }
            let nq = w.nic_queues.as_deref_mut().expect("the queues model");
            let txq = &mut nq.queues[q];
            txq.track(now);
            txq.pkts.push_back(pkt);
            txq.bytes += size;
            txq.max_bytes = txq.max_bytes.max(txq.bytes);
            if again {
                txq.ready.push_back(slot);
            }
        }
    }
}

/// Deficit weighted round robin over NIC `n`'s non-empty queues whose head
/// is not PAUSEd: the next packet.
fn pick(w: &mut World, now: Ps, n: u32) -> Option<PktId> {
    let paused = w.ports[w.nics[n as usize].port as usize].paused;
    let nq = w.nic_queues.as_deref_mut().expect("the queues model");
    let first = n as usize * nq.per_nic;
    let per_nic = nq.per_nic;
    let sendable = |nq: &NicQueues, q: usize| {
        nq.queues[q]
            .pkts
            .front()
            .is_some_and(|&id| paused & (1 << w.arena.get(id).prio) == 0)
    };
    if !(first..first + per_nic).any(|q| sendable(nq, q)) {
        return None;
    }
    loop {
        let (k, fresh) = nq.next[n as usize];
        let q = first + k as usize;
        if !sendable(nq, q) {
            if nq.queues[q].pkts.is_empty() {
                nq.queues[q].deficit = 0;
            }
            nq.next[n as usize] = (((k as usize + 1) % per_nic) as u32, false);
            continue;
        }
        let head = *nq.queues[q].pkts.front().expect("sendable");
        let size = w.arena.get(head).size as i64;
        let txq = &mut nq.queues[q];
        if txq.deficit >= size {
            txq.deficit -= size;
            txq.track(now);
            txq.pkts.pop_front();
            txq.bytes -= size as u64;
            return Some(head);
        }
        if !fresh {
            txq.deficit += nq.quantum[k as usize];
            nq.next[n as usize] = (k, true);
        } else {
            nq.next[n as usize] = (((k as usize + 1) % per_nic) as u32, false);
        }
    }
}

/// The summary's `nic_queues` block: per queue (by congestion control, class
/// or "shared"), the largest backlog on any NIC and the time-weighted mean
/// backlog of the NIC where it was largest, over `[0, end]`.
pub(crate) fn summary(w: &mut World, end: Ps) -> Option<serde_json::Value> {
    let names: Vec<String> = match w.nic_queues.as_deref()?.split {
        Split::Shared => vec!["shared".into()],
        Split::Cc => w.ccs.iter().map(|c| c.name().to_string()).collect(),
        Split::Class => (0..crate::net::NUM_CLASSES)
            .map(|c| format!("class{c}"))
            .collect(),
    };
    let nq = w.nic_queues.as_deref_mut()?;
    let per_nic = nq.per_nic;
    let mut out = serde_json::Map::new();
    for k in 0..per_nic {
        let (mut max, mut mean) = (0u64, 0.0f64);
        for txq in nq.queues.iter_mut().skip(k).step_by(per_nic) {
            txq.track(end);
            if txq.max_bytes > max {
                max = txq.max_bytes;
                mean = txq.byte_ps as f64 / end.max(1) as f64;
            }
        }
        let name = names.get(k).cloned().unwrap_or_else(|| format!("queue{k}"));
        out.insert(
            name,
            serde_json::json!({ "max_bytes": max, "mean_bytes": mean }),
        );
    }
    Some(serde_json::json!({
        "split": format!("{:?}", nq.split).to_lowercase(),
        "limit_bytes": nq.limit,
        "queues": out,
    }))
}

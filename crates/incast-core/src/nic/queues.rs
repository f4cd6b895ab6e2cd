//! The transmit-queue NIC (`[nic] model = "queues"`): the host stack fills
//! the NIC's transmit queues, each up to a byte limit (as a qdisc with byte
//! queue limits lets it), and the port drains them at line rate, by deficit
//! weighted round robin (Shreedhar and Varghese, SIGCOMM 1995) between the
//! queues.
//!
//! The queues are one shared by every flow (`split = "shared"`), one per TCP
//! congestion control (`"cc"`: the run's `congestion_controls`, in their
//! order) or one per traffic class (`"class"`). The Netronome/Facebook talk
//! (OCP Global Summit 2019) found that CUBIC traffic filling a shared NIC queue keeps
//! DCTCP's latency high, and that queues split by congestion control remove
//! that: a DCTCP segment then waits behind DCTCP segments only.
//!
//! Unlike the round-robin NIC, whose host stack is never ahead of the wire, a
//! flow here hands the NIC segments as long as its window allows and its
//! queue is below its limit: the segment's timestamp is when it entered the
//! queue, so the NIC queue's wait is part of the flow's RTT, as on a real host.
//! The queues are filled when the port asks for its next packet (at the end of
//! each transmission): a queue below its limit then takes segments from its
//! flows, round robin, until it reaches the limit. With `fill = "admitted"`
//! they are also filled whenever a flow becomes ready while the port is busy,
//! so a segment is queued and stamped when its window admits it, as htsim's
//! host queue (`FairScheduler`) takes STrack's packets on the ACK;
//! with the default a segment admitted during a transmission is stamped up to
//! one packet time later (docs/htsim-strack.md, the lone flow under one edge
//! switch).
//!
//! A queue whose head packet's priority is PAUSEd (PFC) is skipped, keeping
//! its deficit. TCP only (RDMA queue pairs pace themselves: refused).

use super::sender::{offer_tcp, TcpOffer};
use super::NicModel;
use crate::net::PktId;
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::world::World;
use crate::units::Ps;
use std::collections::VecDeque;

pub use crate::params::nic::{Fill, QueuesConfig, Split};

/// How a NIC's packets are spread over its queues (transmit or receive):
/// how many per NIC, and each one's DWRR quantum (weight x MTU).
pub(crate) struct Layout {
    pub split: Split,
    pub per_nic: usize,
    quantum: Vec<i64>,
}

impl Layout {
    /// `hosts`: the hosts behind each NIC port.
    pub fn new(split: Split, weights: &[u32], ccs: usize, hosts: usize, mtu: u64) -> Layout {
        let per_nic = match split {
            Split::Shared => 1,
            Split::Cc => ccs.max(1),
            Split::Class => crate::net::NUM_CLASSES,
            Split::Host => hosts.max(1),
        };
        let quantum = (0..per_nic)
            .map(|q| weights.get(q).copied().unwrap_or(1).max(1) as i64 * mtu as i64)
            .collect();
        Layout {
            split,
            per_nic,
            quantum,
        }
    }

    /// The index, among all NICs' (or hosts') queues, of NIC `nic`'s queue
    /// for a packet of congestion control `cc` and class `class` from the
    /// NIC's host number `host` (0 for its first).
    #[inline]
    pub fn index(&self, nic: u32, cc: u8, class: u8, host: u32) -> usize {
        let q = match self.split {
            Split::Shared => 0,
            Split::Cc => cc as usize,
            Split::Class => class as usize,
            Split::Host => host as usize,
        };
        nic as usize * self.per_nic + q.min(self.per_nic - 1)
    }

    /// The queues' names in the summary (`ccs`: the run's congestion controls).
    pub fn names(&self, ccs: &[crate::transport::cc::CcConfig]) -> Vec<String> {
        let names: Vec<String> = match self.split {
            Split::Shared => vec!["shared".into()],
            Split::Cc => ccs.iter().map(|c| c.name().to_string()).collect(),
            Split::Class => (0..crate::net::NUM_CLASSES)
                .map(|c| format!("class{c}"))
                .collect(),
            Split::Host => (0..self.per_nic).map(|h| format!("host{h}")).collect(),
        };
        (0..self.per_nic)
            .map(|k| names.get(k).cloned().unwrap_or_else(|| format!("queue{k}")))
            .collect()
    }

    /// Deficit weighted round robin (Shreedhar and Varghese) over one NIC's
    /// `queues`, from `next` (the queue visited and whether its quantum was
    /// added on this visit): the queue whose head packet goes now, its
    /// deficit charged; `None` when no queue's head is `sendable`. A queue
    /// whose head may not go is skipped, keeping its deficit; an empty one
    /// loses it.
    pub fn dwrr<Q: AsMut<Fifo>>(
        &self,
        queues: &mut [Q],
        next: &mut (u32, bool),
        size: impl Fn(PktId) -> i64,
        sendable: impl Fn(PktId) -> bool,
    ) -> Option<usize> {
        let ok = |q: &mut Q| q.as_mut().pkts.front().is_some_and(|&id| sendable(id));
        if !queues.iter_mut().any(ok) {
            return None;
        }
        loop {
            let (k, fresh) = *next;
            let fifo = queues[k as usize].as_mut();
            let advance = (((k as usize + 1) % self.per_nic) as u32, false);
            let Some(&head) = fifo.pkts.front().filter(|&&id| sendable(id)) else {
                if fifo.pkts.is_empty() {
                    fifo.deficit = 0;
                }
                *next = advance;
                continue;
            };
            let bytes = size(head);
            if fifo.deficit >= bytes {
                fifo.deficit -= bytes;
                return Some(k as usize);
            }
            if !fresh {
                fifo.deficit += self.quantum[k as usize];
                *next = (k, true);
            } else {
                *next = advance;
            }
        }
    }
}

/// A NIC queue of packets with its DWRR deficit and largest backlog.
#[derive(Debug, Default)]
pub(crate) struct Fifo {
    pub pkts: VecDeque<PktId>,
    pub bytes: u64,
    deficit: i64,
    pub max_bytes: u64,
}

impl Fifo {
    pub fn push(&mut self, id: PktId, size: u64) {
        self.pkts.push_back(id);
        self.bytes += size;
        self.max_bytes = self.max_bytes.max(self.bytes);
    }
    /// Removes the head packet (of `size` bytes).
    pub fn pop(&mut self, size: u64) -> PktId {
        self.bytes -= size;
        self.pkts.pop_front().expect("a packet at the head")
    }
}

/// One transmit queue of a NIC.
#[derive(Debug, Default)]
pub(crate) struct TxQueue {
    fifo: Fifo,
    /// Flows of this queue that may send, in round-robin order.
    ready: VecDeque<u32>,
    /// Bytes x time, for the mean backlog.
    pub byte_ps: u128,
    since: Ps,
}

impl AsMut<Fifo> for TxQueue {
    fn as_mut(&mut self) -> &mut Fifo {
        &mut self.fifo
    }
}

impl TxQueue {
    fn track(&mut self, now: Ps) {
        self.byte_ps += self.fifo.bytes as u128 * (now - self.since) as u128;
        self.since = now;
    }
}

/// Every NIC's transmit queues.
pub(crate) struct NicQueues {
    pub layout: Layout,
    pub limit: u64,
    /// Whether flows fill the queues when they become ready, the port busy
    /// or not ([`Fill::Admitted`]).
    fill_admitted: bool,
    /// `queues[nic * per_nic + q]`.
    pub queues: Vec<TxQueue>,
    /// Per NIC: the round robin's position ([`Layout::dwrr`]).
    next: Vec<(u32, bool)>,
}

impl NicQueues {
    pub fn new(cfg: &QueuesConfig, nics: usize, ccs: usize, hosts: usize, mtu: u64) -> NicQueues {
        let layout = Layout::new(cfg.split, &cfg.weights, ccs, hosts, mtu);
        NicQueues {
            queues: (0..nics * layout.per_nic)
                .map(|_| TxQueue::default())
                .collect(),
            layout,
            limit: cfg.limit.bytes(),
            fill_admitted: cfg.fill == Fill::Admitted,
            next: vec![(0, false); nics],
        }
    }

    /// Bytes held in every queue (conservation).
    pub fn held_bytes(&self) -> u64 {
        self.queues.iter().map(|q| q.fifo.bytes).sum()
    }
}

/// The queue flow `slot` of NIC `nic` uses. (A multi-host NIC's hosts are
/// numbered from its first, [`crate::topology::Graph::with_hosts_per_nic`].)
#[inline]
fn queue_of(w: &World, nq: &NicQueues, nic: u32, slot: u32) -> usize {
    let f = &w.flows.slots[slot as usize];
    let host = f.src.saturating_sub(w.nics[nic as usize].node);
    nq.layout.index(nic, f.cc, f.class, host)
}

/// The transmit-queue NIC model.
pub struct Queues;

impl NicModel for Queues {
    type State = Option<Box<NicQueues>>;
    /// Every queue and round-robin position is one NIC's.
    const THREADS: bool = true;

    fn merge(into: &mut Self::State, from: &mut Self::State, owned: &dyn Fn(u32) -> bool) {
        let (Some(into), Some(from)) = (into.as_deref_mut(), from.as_deref_mut()) else {
            return;
        };
        let per_nic = into.layout.per_nic;
        for nic in (0..into.next.len()).filter(|&nic| owned(nic as u32)) {
            into.next[nic] = from.next[nic];
            let queues = nic * per_nic..(nic + 1) * per_nic;
            into.queues[queues.clone()].swap_with_slice(&mut from.queues[queues]);
        }
    }

    fn held_bytes(w: &World) -> u64 {
        w.nic_state
            .queues
            .as_deref()
            .map_or(0, NicQueues::held_bytes)
    }

    fn next_packet(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
        fill(w, now, nic);
        pick(w, now, nic)
    }

    fn flow_ready(w: &mut World, nic: u32, slot: u32) {
        let nq = w.nic_state.queues.as_deref().expect("the queues model");
        let q = queue_of(w, nq, nic, slot);
        let nq = w.nic_state.queues.as_deref_mut().expect("the queues model");
        nq.queues[q].ready.push_back(slot);
    }

    fn flow_done(w: &mut World, nic: u32, slot: u32) {
        let nq = w.nic_state.queues.as_deref().expect("the queues model");
        let q = queue_of(w, nq, nic, slot);
        let nq = w.nic_state.queues.as_deref_mut().expect("the queues model");
        nq.queues[q].ready.retain(|&x| x != slot);
    }

    /// `fill = "admitted"`: the ready flow's segments enter the queue now.
    fn ready_while_busy(w: &mut World, now: Ps, nic: u32) {
        if w.nic_state
            .queues
            .as_deref()
            .is_some_and(|q| q.fill_admitted)
        {
            fill(w, now, nic);
        }
    }

    fn has_work(w: &World, nic: u32) -> bool {
        let nq = w.nic_state.queues.as_deref().expect("the queues model");
        let first = nic as usize * nq.layout.per_nic;
        nq.queues[first..first + nq.layout.per_nic]
            .iter()
            .any(|q| q.fifo.bytes > 0 || !q.ready.is_empty())
    }

    /// TCP only, and `[nic.queues]`: a limit of at least one packet,
    /// positive weights.
    fn validate(sc: &Scenario) -> Result<(), ScenarioError> {
        let c = &sc.config;
        if c.rdma.is_some() {
            return Err(ScenarioError::new(
                "nic.model",
                "the transmit-queue NIC serves TCP flows; RDMA queue pairs pace themselves: use \"round_robin\"",
            ));
        }
        let q = &c.nic.queues;
        if q.limit.bytes() < c.transport.mtu as u64 {
            return Err(ScenarioError::new(
                "nic.queues.limit",
                format!(
                    "must hold at least one packet ({} B), e.g. \"256KB\"",
                    c.transport.mtu
                ),
            ));
        }
        if q.weights.contains(&0) {
            return Err(ScenarioError::new(
                "nic.queues.weights",
                "weights must be positive integers",
            ));
        }
        Ok(())
    }

    /// Every NIC's transmit queues.
    fn build(sc: &Scenario, w: &mut World) {
        let c = &sc.config;
        w.nic_state.queues = Some(Box::new(NicQueues::new(
            &c.nic.queues,
            w.nics.len(),
            w.ccs.len(),
            c.nic.hosts as usize,
            c.transport.mtu as u64,
        )));
    }
}

/// Every queue of NIC `nic` below its limit takes segments from its ready
/// flows, round robin, until it reaches the limit or no flow may send.
fn fill(w: &mut World, now: Ps, nic: u32) {
    let (first, per_nic, limit) = {
        let nq = w.nic_state.queues.as_deref().expect("the queues model");
        (
            nic as usize * nq.layout.per_nic,
            nq.layout.per_nic,
            nq.limit,
        )
    };
    let paused = w.ports[w.nics[nic as usize].port as usize].paused;
    for q in first..first + per_nic {
        loop {
            let nq = w.nic_state.queues.as_deref_mut().expect("the queues model");
            let txq = &mut nq.queues[q];
            if txq.fifo.bytes >= limit {
                break;
            }
            let Some(slot) = txq.ready.pop_front() else {
                break;
            };
            // Segments are queued whatever the pause: `pick` honours it.
            let TcpOffer::Sent { pkt, again } = offer_tcp(w, now, slot, paused, false) else {
                continue;
            };
            let size = w.arena.get(pkt).size as u64;
            let nq = w.nic_state.queues.as_deref_mut().expect("the queues model");
            let txq = &mut nq.queues[q];
            txq.track(now);
            txq.fifo.push(pkt, size);
            if again {
                txq.ready.push_back(slot);
            }
        }
    }
}

/// NIC `nic`'s next packet: deficit weighted round robin over its queues
/// whose head is not PAUSEd.
fn pick(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
    let paused = w.ports[w.nics[nic as usize].port as usize].paused;
    let nq = w.nic_state.queues.as_deref_mut().expect("the queues model");
    let first = nic as usize * nq.layout.per_nic;
    let queues = &mut nq.queues[first..first + nq.layout.per_nic];
    let arena = &w.arena;
    let k = nq.layout.dwrr(
        queues,
        &mut nq.next[nic as usize],
        |id| arena.get(id).size as i64,
        |id| paused & (1 << arena.get(id).prio) == 0,
    )?;
    let txq = &mut queues[k];
    let head = *txq.fifo.pkts.front().expect("picked");
    txq.track(now);
    Some(txq.fifo.pop(arena.get(head).size as u64))
}

/// The summary's `nic_queues` block: per queue (by congestion control, class
/// or "shared"), the largest backlog on any NIC and the time-weighted mean
/// backlog of the NIC where it was largest, over `[0, end]`.
pub(crate) fn summary(w: &mut World, end: Ps) -> Option<serde_json::Value> {
    let names = w.nic_state.queues.as_deref()?.layout.names(&w.ccs);
    let nq = w.nic_state.queues.as_deref_mut()?;
    let per_nic = nq.layout.per_nic;
    let mut out = serde_json::Map::new();
    for (k, name) in names.into_iter().enumerate() {
        let (mut max, mut mean) = (0u64, 0.0f64);
        for txq in nq.queues.iter_mut().skip(k).step_by(per_nic) {
            txq.track(end);
            if txq.fifo.max_bytes > max {
                max = txq.fifo.max_bytes;
                mean = txq.byte_ps as f64 / end.max(1) as f64;
            }
        }
        out.insert(
            name,
            serde_json::json!({ "max_bytes": max, "mean_bytes": mean }),
        );
    }
    Some(serde_json::json!({
        "split": format!("{:?}", nq.layout.split).to_lowercase(),
        "limit_bytes": nq.limit,
        "queues": out,
    }))
}

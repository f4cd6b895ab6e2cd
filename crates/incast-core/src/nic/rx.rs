//! The NIC's receive path through PCIe (`[nic.receive]`): packets that
//! reach a NIC wait in its receive queues and are handed to the host one at
//! a time at the PCIe (or host) rate. When that rate is below the link's, a
//! queue builds in the NIC; the NIC marks ECN (CE on ECT packets, RFC 3168)
//! when a packet joins a queue holding more than `ecn_k` bytes, and drops a
//! packet that does not fit the queue's `buffer`.
//!
//! The queues are one shared by all flows or split by congestion control or
//! class ([`Split`], as the transmit queues), served by deficit weighted round
//! robin. The Netronome/Facebook talk (OCP Global Summit 2019) limited the NIC's PCIe
//! link to mimic incast and split the NIC queues by congestion control so
//! that CUBIC could not keep DCTCP's storage reads waiting.
//!
//! Each host has its own PCIe link: on a multi-host NIC (`[nic] hosts`) the
//! queues and the link are per host, so a slow or busy host does not hold up
//! the others' packets (the NIC's memory is not modelled as shared).
//!
//! Without `[nic.receive]` or `[nic] pcie_rate` a packet is delivered when
//! it arrives (the host takes everything at once), as before.

use super::queues::{Fifo, Layout, Split};
use crate::net::packet::flags;
use crate::net::{PacketKind, PktId};
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::{Ps, Rate};

pub use crate::params::nic::ReceiveConfig;

#[derive(Debug, Default)]
struct RxQueue {
    fifo: Fifo,
    marks: u64,
    drops: u64,
}

impl AsMut<Fifo> for RxQueue {
    fn as_mut(&mut self) -> &mut Fifo {
        &mut self.fifo
    }
}

/// Every host's receive queues (indexed by host, as `Layout` indexes NICs).
pub(crate) struct RxPath {
    layout: Layout,
    pub rate: Rate,
    buffer: u64,
    ecn_k: Option<u64>,
    queues: Vec<RxQueue>,
    /// Per host: the packet being handed to the host, and the round robin's
    /// position and whether its quantum was added on this visit.
    in_service: Vec<Option<PktId>>,
    next: Vec<(u32, bool)>,
}

impl RxPath {
    /// `rate`: each host's PCIe rate (validated: `cfg.pcie_rate` or `[nic] pcie_rate`).
    pub fn new(cfg: &ReceiveConfig, rate: Rate, hosts: usize, ccs: usize, mtu: u64) -> RxPath {
        let layout = Layout::new(cfg.split, &cfg.weights, ccs, 1, mtu);
        RxPath {
            queues: (0..hosts * layout.per_nic)
                .map(|_| RxQueue::default())
                .collect(),
            layout,
            rate,
            buffer: cfg.buffer.bytes(),
            ecn_k: cfg.ecn_k.map(|k| k.bytes()),
            in_service: vec![None; hosts],
            next: vec![(0, false); hosts],
        }
    }

    /// A threaded run's end: host `host`'s queues, packet in service and
    /// round-robin position from partition `from`, which owns it (a packet
    /// id names a packet of `from`'s arena: only the queues' counts are
    /// read after the merge, [`summary`]).
    pub fn take_host(&mut self, from: &mut RxPath, host: u32) {
        let first = host as usize * self.layout.per_nic;
        let queues = first..first + self.layout.per_nic;
        self.queues[queues.clone()].swap_with_slice(&mut from.queues[queues]);
        std::mem::swap(
            &mut self.in_service[host as usize],
            &mut from.in_service[host as usize],
        );
        std::mem::swap(&mut self.next[host as usize], &mut from.next[host as usize]);
    }

    /// Bytes held in receive queues and in service (conservation).
    pub fn held_bytes(&self, size: impl Fn(PktId) -> u64) -> u64 {
        let queued: u64 = self.queues.iter().map(|q| q.fifo.bytes).sum();
        queued
            + self
                .in_service
                .iter()
                .flatten()
                .map(|&id| size(id))
                .sum::<u64>()
    }
}

/// Packet `id` reached its destination host's NIC: into the host's receive
/// queue (or dropped), and into service if the host's PCIe link is idle.
#[inline(never)]
pub(crate) fn arrive(w: &mut World, now: Ps, id: PktId) {
    let pkt = *w.arena.get(id);
    let host = pkt.dst;
    let rx = w.rx.as_deref_mut().expect("the receive path");
    // A transport packet goes with its flow's congestion control; others
    // (datagrams, RDMA control) with the first.
    let cc = match (rx.layout.split, pkt.kind) {
        (Split::Cc, PacketKind::Data | PacketKind::Ack) => w.flows.slots[pkt.flow as usize].cc,
        _ => 0,
    };
    let q = rx.layout.index(host, cc, pkt.class, 0);
    let size = pkt.size as u64;
    let queue = &mut rx.queues[q];
    if queue.fifo.bytes + size > rx.buffer {
        queue.drops += 1;
        w.counters.cons.dropped_bytes += size;
        w.arena.free(id);
        return;
    }
    if rx.ecn_k.is_some_and(|k| queue.fifo.bytes > k)
        && pkt.flags & flags::ECT != 0
        && pkt.flags & flags::CE == 0
    {
        w.arena.get_mut(id).flags |= flags::CE;
        queue.marks += 1;
    }
    queue.fifo.push(id, size);
    if rx.in_service[host as usize].is_none() {
        start(w, now, host);
    }
}

/// Host `host`'s PCIe link is free: its next packet by weighted round robin.
fn start(w: &mut World, now: Ps, host: u32) {
    let rx = w.rx.as_deref_mut().expect("the receive path");
    let first = host as usize * rx.layout.per_nic;
    let queues = &mut rx.queues[first..first + rx.layout.per_nic];
    let arena = &w.arena;
    let Some(k) = rx.layout.dwrr(
        queues,
        &mut rx.next[host as usize],
        |id| arena.get(id).size as i64,
        |_| true,
    ) else {
        return;
    };
    let fifo = &mut queues[k].fifo;
    let size = arena.get(*fifo.pkts.front().expect("picked")).size as u64;
    rx.in_service[host as usize] = Some(fifo.pop(size));
    w.q.push(now + rx.rate.tx_time(size), Ev::PcieDone(host));
}

/// Host `host`'s PCIe link handed it its packet in service.
pub(crate) fn on_done(w: &mut World, now: Ps, host: u32) {
    let rx = w.rx.as_deref_mut().expect("the receive path");
    let id = rx.in_service[host as usize]
        .take()
        .expect("a packet in service");
    start(w, now, host);
    let nic = w.host_nic[host as usize];
    super::deliver(w, now, nic, id);
}

/// The summary's `nic_receive` block: per queue, the largest backlog on any
/// host, and the CE marks and drops of all hosts.
pub(crate) fn summary(w: &World) -> Option<serde_json::Value> {
    let rx = w.rx.as_deref()?;
    let mut out = serde_json::Map::new();
    for (k, name) in rx.layout.names(&w.ccs).into_iter().enumerate() {
        let qs = rx.queues.iter().skip(k).step_by(rx.layout.per_nic);
        let (mut max, mut marks, mut drops) = (0, 0, 0);
        for q in qs {
            max = max.max(q.fifo.max_bytes);
            marks += q.marks;
            drops += q.drops;
        }
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

//! What a flow's path through the network implies: its ECMP hash, its
//! base RTT, its ideal (standalone) FCT, and what edge pausing needs to
//! know of it. Each walks the flow's actual ECMP path, port by port, from
//! the source's NIC to the destination's.

use crate::edge::PathInfo;
use crate::net::port::Owner;
use crate::rdma::cc::CcCtx;
use crate::rdma::RdmaConfig;
use crate::rng::{derive_seed, mix64};
use crate::sim::world::World;
use crate::units::{Ps, Rate};

/// The flow's ECMP hash and its ACKs': seeded, from its 5-tuple (source,
/// destination, source port).
pub(crate) fn flow_hash(w: &mut World, src: u32, dst: u32) -> (u64, u64) {
    let sport = w.flows.next_sport[src as usize];
    w.flows.next_sport[src as usize] += 1;
    let key = ((src as u64) << 40) ^ ((dst as u64) << 16) ^ sport as u64;
    let h = mix64(derive_seed(w.seed, "ecmp", key));
    (h, mix64(h ^ 0x5bd1_e995))
}

/// The packet size unit and header of the flows (RDMA payload or TCP MSS).
fn segment_and_header(w: &World) -> (u64, u64) {
    match &w.rdma {
        Some(r) => (r.cfg.payload as u64, r.cfg.header as u64),
        None => (w.tcp.mss, w.tcp.header as u64),
    }
}

/// Calls `hop(port)` for every port a packet of the flow with `hash` leaves
/// on its way from host `src` to host `dst`, the source's NIC port first.
#[inline(always)]
fn walk(w: &World, src: u32, dst: u32, hash: u64, mut hop: impl FnMut(&crate::net::Port)) {
    let mut p = w.nics[w.host_nic[src as usize] as usize].port;
    loop {
        let port = &w.ports[p as usize];
        hop(port);
        match w.ports[port.peer as usize].owner {
            Owner::Nic(_) => break,
            Owner::Switch(s) => {
                let local = w.routes.select(s, dst, hash);
                p = w.switches[s as usize].port(local);
            }
        }
    }
}

/// Base RTT of a path as the HPCC simulator defines it (`pairRtt`): twice the
/// propagation delay plus one full segment's serialization on every hop; and
/// the path's slowest link.
pub(crate) fn path_base_rtt(w: &World, src: u32, dst: u32, hash: u64) -> (Ps, Rate) {
    let (seg, _) = segment_and_header(w);
    let (mut delay, mut ser, mut min_rate) = (0, 0, Rate(u64::MAX));
    walk(w, src, dst, hash, |port| {
        delay += port.delay;
        ser += port.rate.tx_time(seg);
        min_rate = min_rate.min(port.rate);
    });
    (2 * delay + ser, min_rate)
}

/// Edge pausing: the idle one-way delay of a full-size data packet on the
/// flow's ECMP path (propagation plus store-and-forward serialization on
/// every hop) and the number of switches on it.
pub(crate) fn path_info(w: &World, src: u32, dst: u32, hash: u64) -> PathInfo {
    let wire = match &w.rdma {
        Some(r) => r.cfg.payload as u64 + r.overhead as u64,
        None => w.tcp.mss + w.tcp.header as u64,
    };
    let (mut base_owd, mut hops) = (0, 0u32);
    walk(w, src, dst, hash, |port| {
        base_owd += port.delay + port.rate.tx_time(wire);
        hops += 1;
    });
    PathInfo {
        base_owd,
        // Every hop but the first leaves a switch.
        switch_hops: hops - 1,
    }
}

/// Congestion-control context with the largest base RTT over all host pairs
/// (HPCC simulator `GLOBAL_T 1`), the line rate of host 0's NIC.
pub(crate) fn rdma_base_ctx(w: &World, r: &RdmaConfig) -> CcCtx {
    let n = w.host_nic.len() as u32;
    let mut t = 0;
    // Every (source, destination) pair, as the HPCC simulator does: O(hosts^2 x
    // hops) at setup, about 0.1 M path walks for its 320-host fat-tree.
    for a in 0..n {
        for b in 0..n {
            if a != b {
                t = t.max(path_base_rtt(w, a, b, 0).0);
            }
        }
    }
    let line = w.ports[w.nics[w.host_nic[0] as usize].port as usize].rate;
    CcCtx {
        line_rate: line.bits_per_sec() as f64,
        base_rtt: t,
        mtu: r.payload as u64,
        bdp: line.bytes_in(t),
    }
}

/// HPCC's standalone FCT along the flow's actual ECMP path (see [`crate::metrics`]).
pub(crate) fn ideal_fct(w: &World, src: u32, dst: u32, size: u64, hash: u64) -> Ps {
    let (seg, header) = segment_and_header(w);
    let (base_rtt, min_rate) = path_base_rtt(w, src, dst, hash);
    let packets = size.div_ceil(seg);
    base_rtt + min_rate.tx_time(size + packets * header)
}

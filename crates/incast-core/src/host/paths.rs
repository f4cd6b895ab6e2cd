//! What a flow's path through the network implies: its ECMP hash, its
//! base RTT, its ideal (standalone) FCT, and what edge pausing needs to
//! know of it. Each walks the flow's actual ECMP path, port by port, from
//! the source's NIC to the destination's.

use crate::edge::PathInfo;
use crate::net::port::Port;
use crate::rdma::cc::CcCtx;
use crate::rdma::RdmaConfig;
use crate::rng::{derive_seed, mix64};
use crate::scenario::IdealFct;
use crate::sim::world::World;
use crate::topology::hpcc_ecmp::{flow_key, FIRST_SPORT};
use crate::units::{Ps, Rate};

/// The flow's ECMP hash and its ACKs': seeded, from its 5-tuple (source,
/// destination, source port). Under HPCC-sim's rule, the flow's key and
/// its ACKs' (the ports swapped, as `rdma-hw.cc` `ReceiveUdp` writes them),
/// with HPCC-sim's source port: per source and destination, from 10000 in
/// start order, 16 bits (`third.cc` `portNumder`).
pub(crate) fn flow_hash(w: &mut World, src: u32, dst: u32) -> (u64, u64) {
    if let Some(rule) = w.routes.hpcc() {
        let next = w.flows.pair_sport.entry((src, dst)).or_insert(FIRST_SPORT);
        let sport = u32::from(*next);
        *next = next.wrapping_add(1);
        let (a, b, dport) = (
            rule.host_id(src),
            rule.host_id(dst),
            u32::from(rule.dport()),
        );
        return (flow_key(a, b, sport, dport), flow_key(b, a, dport, sport));
    }
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
fn walk(w: &World, src: u32, dst: u32, hash: u64, mut hop: impl FnMut(&Port)) {
    let port = &w.ports[w.nics[w.host_nic[src as usize] as usize].port as usize];
    hop(port);
    if let Some(s) = port.peer_switch {
        walk_from(w, s, dst, hash, hop);
    }
}

/// The rest of [`walk`] once the packet is in switch `s`: every port it
/// leaves from there on.
#[inline(always)]
fn walk_from(w: &World, mut s: u32, dst: u32, hash: u64, mut hop: impl FnMut(&Port)) {
    loop {
        let local = w.routes.select(s, dst, hash);
        let port = &w.ports[w.switches[s as usize].port(local) as usize];
        hop(port);
        match port.peer_switch {
            None => break,
            Some(next) => s = next,
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

/// The idle one-way delay of a frame of `bytes` on the path of `hash` from
/// `src` to `dst`: propagation and store-and-forward serialization on every
/// hop, no queueing (an E2CM probe's queueing delay is its delay beyond this).
pub(crate) fn idle_owd(w: &World, src: u32, dst: u32, hash: u64, bytes: u64) -> Ps {
    let mut owd = 0;
    walk(w, src, dst, hash, |port| {
        owd += port.delay + port.rate.tx_time(bytes)
    });
    owd
}

/// The number of links on the path of `hash` from `src` to `dst` (csg-htsim's
/// `Route::hop_count`: the source's NIC link and every switch's egress link).
pub(crate) fn path_links(w: &World, src: u32, dst: u32, hash: u64) -> u32 {
    let mut links = 0;
    walk(w, src, dst, hash, |_| links += 1);
    links
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
    let t = max_base_rtt(w);
    let line = w.ports[w.nics[w.host_nic[0] as usize].port as usize].rate;
    CcCtx {
        line_rate: line.bits_per_sec() as f64,
        base_rtt: t,
        mtu: r.payload as u64,
        bdp: line.bytes_in(t),
    }
}

/// The largest [`path_base_rtt`] over every (source, destination) pair of
/// hosts, on the paths of hash 0, as the HPCC simulator takes it.
///
/// A path is its source's NIC port, then the walk from the switch that port
/// reaches, which depends on that switch and the destination alone; and a
/// base RTT is a sum over the path's ports. So one walk per (first switch,
/// destination) gives every pair: 6,400 walks instead of 102,080 on HPCC's
/// 320-host fat-tree.
fn max_base_rtt(w: &World) -> Ps {
    let n = w.host_nic.len() as u32;
    let (seg, _) = segment_and_header(w);
    let cost = |port: &Port| 2 * port.delay + port.rate.tx_time(seg);
    let nic_port = |a: u32| &w.ports[w.nics[w.host_nic[a as usize] as usize].port as usize];
    let mut by_switch: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
    let mut t = 0;
    for a in 0..n {
        let port = nic_port(a);
        match port.peer_switch {
            Some(s) => by_switch.entry(s).or_default().push(a),
            // Linked straight to another host: that link is every path.
            None if n > 1 => t = t.max(cost(port)),
            None => {}
        }
    }
    for (s, sources) in by_switch {
        // The two longest walks from `s`, with their destinations, so that
        // each source finds the longest toward a host other than itself.
        let mut best: [(Ps, u32); 2] = [(0, u32::MAX); 2];
        for b in 0..n {
            let mut rest = 0;
            walk_from(w, s, b, 0, |port| rest += cost(port));
            if best[0].1 == u32::MAX || rest > best[0].0 {
                best = [(rest, b), best[0]];
            } else if best[1].1 == u32::MAX || rest > best[1].0 {
                best[1] = (rest, b);
            }
        }
        for a in sources {
            let (rest, b) = if best[0].1 == a { best[1] } else { best[0] };
            if b != u32::MAX {
                t = t.max(cost(nic_port(a)) + rest);
            }
        }
    }
    t
}

/// The flow's ideal FCT, by the scenario's rule (`metrics.ideal_fct`).
pub(crate) fn ideal_fct(w: &World, src: u32, dst: u32, size: u64, hashes: (u64, u64)) -> Ps {
    match w.flows.ideal {
        IdealFct::Idle => idle_fct(w, src, dst, size, hashes),
        IdealFct::Hpcc => hpcc_fct(w, src, dst, size, hashes.0),
    }
}

/// The hosts' PCIe links ([`crate::nic::pcie`], [`crate::nic::rx`]): the
/// transmit cap and the receive rate, where there are.
fn pcie_rates(w: &World) -> (Option<Rate>, Option<Rate>) {
    (
        w.pcie.as_deref().map(|p| p.rate),
        w.rx.as_deref().map(|r| r.rate),
    )
}

/// HPCC's standalone FCT along the flow's actual ECMP path (see
/// [`crate::metrics`]); the receiving host's PCIe link counts as one more
/// hop and a PCIe link slower than the path as its bottleneck.
fn hpcc_fct(w: &World, src: u32, dst: u32, size: u64, hash: u64) -> Ps {
    let (seg, header) = segment_and_header(w);
    let (mut base_rtt, mut min_rate) = path_base_rtt(w, src, dst, hash);
    let (tx, rx) = pcie_rates(w);
    if let Some(rx) = rx {
        base_rtt += rx.tx_time(seg);
    }
    for cap in [tx, rx].into_iter().flatten() {
        min_rate = min_rate.min(cap);
    }
    let packets = size.div_ceil(seg);
    base_rtt + min_rate.tx_time(size + packets * header)
}

/// The FCT of the flow alone on its idle path (`hashes`: its data's and its
/// ACKs' ECMP hashes): the last data packet's arrival ([`idle_arrival`]),
/// then its ACK's way back, serialized and propagated on every hop.
fn idle_fct(w: &World, src: u32, dst: u32, size: u64, hashes: (u64, u64)) -> Ps {
    let (seg, header) = segment_and_header(w);
    let ack = match &w.rdma {
        Some(r) => r.cfg.ack_size as u64,
        None => w.tcp.ack_size as u64,
    };
    let header = match &w.rdma {
        Some(r) => r.overhead as u64,
        None => header,
    };
    let (tx_cap, rx) = pcie_rates(w);
    let mut hops = Vec::with_capacity(8);
    walk(w, src, dst, hashes.0, |port| {
        hops.push((port.rate, port.delay))
    });
    let mut back = 0;
    walk(w, dst, src, hashes.1, |port| {
        back += port.rate.tx_time(ack) + port.delay
    });
    if let Some(rx) = rx {
        // The receiving host's PCIe link is one more store-and-forward hop,
        // for the data and for the ACK at the source.
        hops.push((rx, 0));
        back += rx.tx_time(ack);
    }
    let arrival = match tx_cap {
        Some(cap) => paced_arrival(&hops, size, seg, header, cap),
        None => idle_arrival(&hops, size, seg, header),
    };
    arrival + back
}

/// As [`idle_arrival`], with the source's packets handed to its NIC no
/// faster than `cap` (its PCIe link, [`crate::nic::pcie`]): packet `k` leaves
/// no earlier than the earlier packets' wire bytes at `cap`. By the tandem
/// recursion itself, packet by packet (O(packets x hops)).
pub(crate) fn paced_arrival(
    hops: &[(Rate, Ps)],
    size: u64,
    seg: u64,
    header: u64,
    cap: Rate,
) -> Ps {
    let n = size.div_ceil(seg).max(1);
    let wire = |k: u64| (size - k * seg).min(seg) + header;
    let mut leave = 0;
    let mut arrive: Vec<Ps> = (0..n)
        .map(|k| {
            let t = leave;
            leave += cap.tx_time(wire(k));
            t
        })
        .collect();
    for &(rate, delay) in hops {
        let mut prev_end = 0;
        for (k, t) in arrive.iter_mut().enumerate() {
            let end = (*t).max(prev_end) + rate.tx_time(wire(k as u64));
            prev_end = end;
            *t = end + delay;
        }
    }
    *arrive.last().expect("a packet")
}

/// When the last of a flow's packets (`size` bytes in segments of `seg`
/// plus `header` each) reaches the end of `hops` (rate, delay), all leaving
/// the source back to back at time 0 and crossing each hop store and
/// forward.
///
/// The tandem recursion `end[h][k] = max(arrive[h][k], end[h][k-1]) +
/// wire_k / rate_h` in max-plus form is the longest path through the
/// (packet, hop) grid. With n - 1 equal full packets and a last one of its
/// own size, the path that turns to the last packet at hop `j` takes the
/// full packets over hops 1..=j with the n - 2 extra ones at the slowest of
/// those hops, then the last packet over hops j..=H; the longest over `j`,
/// plus every hop's delay, is the arrival. (A test checks it against the
/// recursion.)
pub(crate) fn idle_arrival(hops: &[(Rate, Ps)], size: u64, seg: u64, header: u64) -> Ps {
    let n = size.div_ceil(seg).max(1);
    let last = size - (n - 1) * seg + header;
    let full = seg + header;
    let delays: Ps = hops.iter().map(|h| h.1).sum();
    let serialization = if n == 1 {
        hops.iter().map(|h| h.0.tx_time(last)).sum()
    } else {
        let mut last_from: Ps = hops.iter().map(|h| h.0.tx_time(last)).sum();
        let (mut best, mut before, mut slowest) = (0, 0, 0);
        for h in hops {
            let t = h.0.tx_time(full);
            before += t;
            slowest = slowest.max(t);
            best = best.max(before + (n - 2) * slowest + last_from);
            last_from -= h.0.tx_time(last);
        }
        best
    };
    serialization + delays
}

#[cfg(test)]
mod tests {
    use super::idle_arrival;
    use crate::rng::Stream;
    use crate::units::{Ps, Rate, NS};

    /// The tandem recursion, packet by packet: when each packet leaves each
    /// hop, store and forward, behind the one before it.
    fn by_recursion(hops: &[(Rate, Ps)], size: u64, seg: u64, header: u64) -> Ps {
        let n = size.div_ceil(seg).max(1);
        let mut arrive = vec![0; n as usize];
        for &(rate, delay) in hops {
            let mut prev_end = 0;
            for (k, t) in arrive.iter_mut().enumerate() {
                let payload = (size - k as u64 * seg).min(seg);
                let end = (*t).max(prev_end) + rate.tx_time(payload + header);
                prev_end = end;
                *t = end + delay;
            }
        }
        *arrive.last().expect("a packet")
    }

    #[test]
    fn paced_arrival_is_idle_arrival_when_the_cap_is_not_the_bottleneck() {
        use super::paced_arrival;
        let hops = [(Rate::gbps(25), 1000 * NS), (Rate::gbps(100), 1000 * NS)];
        for size in [1, 1000, 1460, 1461, 100_000] {
            // A cap at the first hop's rate adds no wait.
            assert_eq!(
                paced_arrival(&hops, size, 1460, 48, Rate::gbps(25)),
                idle_arrival(&hops, size, 1460, 48)
            );
        }
        // A 10 Gb/s cap: n packets leave 1508 B x 8 / 10 Gb/s apart, the
        // last then crosses both hops alone: 99 x 1206.4 ns + 482.56 +
        // 120.64 + 2000 ns for 100 full packets.
        let t = paced_arrival(&hops, 146_000, 1460, 48, Rate::gbps(10));
        assert_eq!(t, 99 * 1_206_400 + 482_560 + 120_640 + 2_000_000);
    }

    /// The largest base RTT by one walk per (first switch, destination)
    /// equals the largest over every pair's own walk, on a fat-tree, a
    /// leaf-spine with mixed link rates and delays, and hosts sharing NICs.
    #[test]
    fn max_base_rtt_is_the_largest_over_all_pairs() {
        use crate::scenario::Scenario;
        use crate::sim::Simulation;
        let rdma = "[rdma]\ncc = { algorithm = \"dcqcn\" }\n";
        let cases = [
            "[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"\n"
                .to_string(),
            "[topology]\nkind = \"leaf_spine\"\nleaves = 3\nspines = 2\nhosts_per_leaf = 3\n\
             host_rate = \"25Gbps\"\nfabric_rate = \"100Gbps\"\nhost_delay = \"700ns\"\nfabric_delay = \"1us\"\n"
                .to_string(),
            "[topology]\nkind = \"fat_tree\"\nk = 4\nhost_rate = \"25Gbps\"\nfabric_rate = \"100Gbps\"\n\
             core_rate = \"400Gbps\"\ndelay = \"1500ns\"\n[nic]\nhosts = 2\n"
                .to_string(),
        ];
        for topology in cases {
            let text = format!(
                "name = \"t\"\nduration = \"10us\"\n{topology}{rdma}\
                 [[workload.flows]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\nstart = \"0s\"\n"
            );
            let sc = Scenario::from_toml_str(&text, std::path::Path::new("."))
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            let sim = Simulation::new(&sc).expect("builds");
            let w = &sim.w;
            let n = w.host_nic.len() as u32;
            let mut by_pairs = 0;
            for a in 0..n {
                for b in (0..n).filter(|&b| b != a) {
                    by_pairs = by_pairs.max(super::path_base_rtt(w, a, b, 0).0);
                }
            }
            assert!(by_pairs > 0);
            assert_eq!(super::max_base_rtt(w), by_pairs, "{topology}");
        }
    }

    #[test]
    fn idle_arrival_is_the_tandem_recursion() {
        let mut rng = Stream::new(3, "idle-fct", 0);
        let rates = [10, 25, 40, 100, 400];
        for _ in 0..2000 {
            let n_hops = 1 + rng.below(6) as usize;
            let hops: Vec<(Rate, Ps)> = (0..n_hops)
                .map(|_| {
                    let r = rates[rng.below(rates.len() as u64) as usize];
                    (Rate::gbps(r), rng.below(2000) * NS)
                })
                .collect();
            let seg = [1000, 1460, 4096][rng.below(3) as usize];
            let size = 1 + rng.below(20 * seg);
            assert_eq!(
                idle_arrival(&hops, size, seg, 48),
                by_recursion(&hops, size, seg, 48),
                "{hops:?} size {size} seg {seg}"
            );
        }
    }
}

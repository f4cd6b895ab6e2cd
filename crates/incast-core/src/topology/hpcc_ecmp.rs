//! The HPCC simulator's ECMP rule (`routing.ecmp = "hpcc"`), so that an
//! imported HPCC-sim experiment sends every flow over the links HPCC-sim
//! sends it.
//!
//! HPCC-sim ([alibaba-edu/High-Precision-Congestion-Control], `simulation/`)
//! routes a packet at a switch by:
//!
//! * **the key**: its source IP, destination IP and `sport | dport << 16`,
//!   three 32-bit words (`src/point-to-point/model/switch-node.cc`,
//!   `SwitchNode::GetOutDev`; an ACK or NACK carries the data's ports
//!   swapped, `rdma-hw.cc` `ReceiveUdp`), where node `id`'s IP is
//!   `0x0b000001 + (id / 256) << 16 + (id % 256) << 8` (`third.cc`
//!   `node_id_to_ip`);
//! * **the hash**: MurmurHash3 (x86, 32 bits) of those 12 bytes seeded with
//!   the switch's node id (`SwitchNode::EcmpHash`; `m_ecmpSeed = m_id` in
//!   the `SwitchNode` constructor), taken modulo the number of next hops;
//! * **the next-hop list**: for each destination host, the order in which
//!   `third.cc`'s `CalculateRoute` finds the switch's neighbours one hop
//!   closer to the host: a breadth-first search from the host that expands
//!   switches only, visiting each node's neighbours in the order of the
//!   `nbr2if` map, each neighbour reached by its *last* link when two nodes
//!   share several (the map keeps one interface per neighbour).
//!
//! `nbr2if` is keyed by node *pointer*, so that order is where the nodes
//! sit in memory. `third.cc` creates them in id order; a host (`Node`) is
//! small and comes from the heap, which grows upward, while a `SwitchNode`
//! holds its 2.1 MB `m_bytes` counter array and so is `mmap`ed by glibc
//! (above its 128 KiB threshold), and mappings are placed downward from
//! above the heap. The order is therefore hosts by ascending id, then
//! switches by *descending* id ([`address_rank`]). Checked against the
//! tables of HPCC-sim itself (built at `9f4be2a` on this machine, glibc
//! 2.36): every one of the 17,920 (switch, host) next-hop lists of its fat
//! tree matches, and so does every flow's path (docs/hpcc-interop.md).
//!
//! The source port is HPCC-sim's too: per (source, destination) pair,
//! counted from 10000 in flow start order (`third.cc` `portNumder`); the
//! destination port is `routing.dport` (HPCC flow files give 100).
//!
//! Node ids come from the node names `h<id>` and `s<id>` that
//! `incast import-hpcc` writes; they must be below 65536 (HPCC-sim's
//! `ip_to_node_id` keeps 16 bits), which lets a flow's key carry both ids
//! and both ports in 64 bits: the packet's `hash` field, unique per flow
//! and direction as an ECMP hash is.
//!
//! [alibaba-edu/High-Precision-Congestion-Control]: https://github.com/alibaba-edu/High-Precision-Congestion-Control

use super::{Graph, NodeRef};
use std::collections::HashMap;

/// First source port of every host (HPCC-sim `third.cc`: "each host use port number from 10000").
pub const FIRST_SPORT: u16 = 10000;

/// The IPv4 address HPCC-sim gives node `id` (`node_id_to_ip` in `third.cc`).
#[inline]
pub fn node_ip(id: u32) -> u32 {
    0x0b00_0001 + (id / 256) * 0x0001_0000 + (id % 256) * 0x0000_0100
}

/// MurmurHash3's 32-bit x86 variant (Austin Appleby's public-domain
/// algorithm) of `key` with `seed`: 4-byte little-endian blocks, a tail of
/// 1-3 bytes, then the length and the final avalanche (`fmix32`).
pub fn murmur3_32(key: &[u8], seed: u32) -> u32 {
    let mut h = seed;
    let mut blocks = key.chunks_exact(4);
    for b in &mut blocks {
        h ^= scramble(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let k = tail
            .iter()
            .rev()
            .fold(0u32, |k, &byte| (k << 8) | u32::from(byte));
        h ^= scramble(k);
    }
    fmix32(h ^ key.len() as u32)
}

/// MurmurHash3's per-block mix.
#[inline(always)]
fn scramble(k: u32) -> u32 {
    k.wrapping_mul(0xcc9e_2d51)
        .rotate_left(15)
        .wrapping_mul(0x1b87_3593)
}

/// MurmurHash3's finalizer.
#[inline(always)]
fn fmix32(mut host: u32) -> u32 {
    host ^= host >> 16;
    host = host.wrapping_mul(0x85eb_ca6b);
    host ^= host >> 13;
    host = host.wrapping_mul(0xc2b2_ae35);
    host ^ (host >> 16)
}

/// [`murmur3_32`] of three 32-bit words laid out as HPCC-sim's key union
/// on a little-endian machine (`switch-node.cc` `GetOutDev`: `buf.u32[0..3]`).
#[inline]
pub fn murmur3_words(words: [u32; 3], seed: u32) -> u32 {
    let mut h = seed;
    for k in words {
        h ^= scramble(k);
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    fmix32(h ^ 12)
}

/// A flow's ECMP key under HPCC-sim's rule, as a packet's `hash` carries
/// it: source and destination node ids (16 bits each) and the ports.
#[inline]
pub fn flow_key(src_id: u32, dst_id: u32, sport: u32, dport: u32) -> u64 {
    u64::from(src_id) << 48 | u64::from(dst_id) << 32 | u64::from(dport) << 16 | u64::from(sport)
}

/// The three words HPCC-sim hashes for a packet with `key`: source IP,
/// destination IP, `sport | dport << 16`.
#[inline]
fn key_words(key: u64) -> [u32; 3] {
    [
        node_ip((key >> 48) as u32),
        node_ip((key >> 32) as u32 & 0xffff),
        key as u32,
    ]
}

/// HPCC-sim's node id from an imported node's name (`h13`, `s320`).
fn node_id(graph: &Graph, node: NodeRef) -> Result<u32, String> {
    let (name, prefix, what) = match node {
        NodeRef::Host(_) => (graph.node_name(node), 'h', "host"),
        NodeRef::Switch(_) => (graph.node_name(node), 's', "switch"),
    };
    name.strip_prefix(prefix)
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|&id| id < 1 << 16 && name == format!("{prefix}{id}"))
        .ok_or_else(|| {
            format!(
                "routing.ecmp = \"hpcc\" takes HPCC-sim node ids from the node names `h<id>` and \
                 `s<id>` (id below 65536) that `incast import-hpcc` writes, but {what} `{name}` \
                 has none; name the nodes so or use routing.ecmp = \"flow\""
            )
        })
}

/// HPCC-sim's node ids of the hosts and of the switches, from their names
/// (what `routing.ecmp = "hpcc"` needs of a topology). Errors: a name
/// without an id, two nodes with one id, a host behind another's NIC.
pub fn node_ids(graph: &Graph) -> Result<(Vec<u32>, Vec<u32>), String> {
    if let Some(&(h, _)) = graph.shared_nics.first() {
        return Err(format!(
            "routing.ecmp = \"hpcc\" needs one link per host (HPCC-sim's topologies); host \
             `{}` shares another host's NIC",
            graph.host_names[h as usize]
        ));
    }
    let host_id = (0..graph.n_hosts() as u32)
        .map(|h| node_id(graph, NodeRef::Host(h)))
        .collect::<Result<Vec<_>, _>>()?;
    let switch_id = (0..graph.n_switches() as u32)
        .map(|s| node_id(graph, NodeRef::Switch(s)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut owner: HashMap<u32, &str> = HashMap::new();
    let names = graph.host_names.iter().chain(&graph.switch_names);
    for (&id, name) in host_id.iter().chain(&switch_id).zip(names) {
        if let Some(other) = owner.insert(id, name) {
            return Err(format!(
                "routing.ecmp = \"hpcc\": nodes `{other}` and `{name}` have the same HPCC-sim node id {id}"
            ));
        }
    }
    Ok((host_id, switch_id))
}

/// HPCC-sim's routing tables in incast's port numbers.
#[derive(Clone, Debug)]
pub struct HpccEcmp {
    /// HPCC-sim node id of each host (a flow's key).
    host_id: Vec<u32>,
    /// HPCC-sim node id of each switch: the seed of its hash.
    seed: Vec<u32>,
    /// Per switch: start of its row in `table` when it has hosts (the
    /// row's index times the number of switches), else `u32::MAX`.
    row_of: Vec<u32>,
    /// Next-hop list id of (switch `s`, any host on row switch `t`), at
    /// `row_of[t] + s`: every host behind one switch has the same lists at
    /// every other switch (its search differs only in the hosts it sees,
    /// which it does not expand).
    table: Vec<u32>,
    /// Next-hop list `i` is `list_ports[list_start[i]..list_start[i + 1]]`,
    /// local ports in HPCC-sim's order.
    list_start: Vec<u32>,
    list_ports: Vec<u16>,
    /// Every flow's destination port (`routing.dport`).
    dport: u16,
}

impl HpccEcmp {
    /// HPCC-sim's tables for graph `graph` (whose hosts each have one link, as
    /// [`super::Routes::compute`] checks). Errors: a node name without an
    /// HPCC node id, two nodes with one id, a host behind another's NIC.
    pub fn build(graph: &Graph, dport: u16) -> Result<HpccEcmp, String> {
        let (host_id, seed) = node_ids(graph)?;
        let (nh, ns) = (graph.n_hosts(), graph.n_switches());
        let nbrs = Neighbours::of(graph, &host_id, &seed);
        let mut tables = Tables {
            ids: HashMap::new(),
            list_start: vec![0],
            list_ports: Vec::new(),
        };
        let mut row_of = vec![u32::MAX; ns];
        let mut table = Vec::new();
        let mut search = Search::new(nh + ns);
        for (t, row) in row_of.iter_mut().enumerate() {
            let switch = NodeRef::Switch(t as u32);
            let has_hosts = (0..graph.ports(switch).len())
                .any(|p| matches!(graph.peer(switch, p).0, NodeRef::Host(_)));
            if !has_hosts {
                continue;
            }
            *row = table.len() as u32;
            search.run(&nbrs, nh + t);
            for s in 0..ns {
                let list = search.next_hops(&nbrs, nh + s);
                table.push(tables.intern(&list));
            }
        }
        Ok(HpccEcmp {
            host_id,
            seed,
            row_of,
            table,
            list_start: tables.list_start,
            list_ports: tables.list_ports,
            dport,
        })
    }

    /// Every flow's destination port.
    pub fn dport(&self) -> u16 {
        self.dport
    }

    /// The HPCC-sim node id of host `host`.
    pub fn host_id(&self, host: u32) -> u32 {
        self.host_id[host as usize]
    }

    /// The next hops (local ports, HPCC-sim's order) of switch `sw` toward a
    /// host behind switch `att`.
    #[inline]
    pub fn list(&self, sw: u32, att: u32) -> &[u16] {
        let id = self.table[(self.row_of[att as usize] + sw) as usize] as usize;
        &self.list_ports[self.list_start[id] as usize..self.list_start[id + 1] as usize]
    }

    /// The port switch `sw` gives a packet with `key` ([`flow_key`]) bound
    /// for a host behind switch `att` (`GetOutDev`: the hash modulo the
    /// number of next hops indexes the list).
    #[inline]
    pub fn pick(&self, sw: u32, att: u32, key: u64) -> u16 {
        let list = self.list(sw, att);
        let h = murmur3_words(key_words(key), self.seed[sw as usize]);
        list[(h % list.len() as u32) as usize]
    }
}

/// Interned next-hop lists (order matters).
struct Tables {
    ids: HashMap<Vec<u16>, u32>,
    list_start: Vec<u32>,
    list_ports: Vec<u16>,
}

impl Tables {
    fn intern(&mut self, list: &[u16]) -> u32 {
        if let Some(&id) = self.ids.get(list) {
            return id;
        }
        let id = self.list_start.len() as u32 - 1;
        self.list_ports.extend_from_slice(list);
        self.list_start.push(self.list_ports.len() as u32);
        self.ids.insert(list.to_vec(), id);
        id
    }
}

/// Where HPCC-sim's node `id` sits among the others in memory, which
/// orders the `nbr2if` map (module docs): hosts by ascending id below all
/// switches, switches by descending id.
fn address_rank(is_switch: bool, id: u32) -> (bool, u32) {
    if is_switch {
        (true, u32::MAX - id)
    } else {
        (false, id)
    }
}

/// Every node's distinct neighbours in `nbr2if`'s order ([`address_rank`]), each with
/// the local port of the last link to it (`nbr2if[a][b]` is overwritten by
/// every link between `a` and `b`). Nodes are slots: hosts, then switches.
struct Neighbours {
    /// Per slot: `(neighbour slot, local port)`.
    of: Vec<Vec<(usize, u16)>>,
    is_switch: Vec<bool>,
}

impl Neighbours {
    fn of(graph: &Graph, host_id: &[u32], seed: &[u32]) -> Neighbours {
        let nh = graph.n_hosts();
        let slot = |n: NodeRef| match n {
            NodeRef::Host(h) => h as usize,
            NodeRef::Switch(s) => nh + s as usize,
        };
        let rank = |i: usize| {
            if i < nh {
                address_rank(false, host_id[i])
            } else {
                address_rank(true, seed[i - nh])
            }
        };
        let nodes = (0..nh as u32)
            .map(NodeRef::Host)
            .chain((0..graph.n_switches() as u32).map(NodeRef::Switch));
        let of = nodes
            .map(|n| {
                let mut last: Vec<(usize, u16)> = Vec::new();
                for port in 0..graph.ports(n).len() {
                    let peer = slot(graph.peer(n, port).0);
                    match last.iter_mut().find(|(p, _)| *p == peer) {
                        Some(entry) => entry.1 = port as u16,
                        None => last.push((peer, port as u16)),
                    }
                }
                last.sort_by_key(|&(p, _)| rank(p));
                last
            })
            .collect();
        let is_switch = (0..nh + graph.n_switches()).map(|i| i >= nh).collect();
        Neighbours { of, is_switch }
    }
}

/// `CalculateRoute`'s breadth-first search from the hosts behind one
/// switch: distances and the order in which nodes enter the queue.
struct Search {
    dist: Vec<u32>,
    /// Position of each node in the search's queue (`u32::MAX`: not queued).
    order: Vec<u32>,
    queue: Vec<usize>,
}

impl Search {
    fn new(n: usize) -> Search {
        Search {
            dist: vec![u32::MAX; n],
            order: vec![u32::MAX; n],
            queue: Vec::with_capacity(n),
        }
    }

    /// Searches from switch slot `start`. HPCC-sim starts at a host whose
    /// only neighbour is this switch, so the switch is the queue's second
    /// node and every distance is one more; neither changes the order.
    fn run(&mut self, nbrs: &Neighbours, start: usize) {
        self.dist.fill(u32::MAX);
        self.order.fill(u32::MAX);
        self.queue.clear();
        self.dist[start] = 0;
        self.order[start] = 0;
        self.queue.push(start);
        let mut head = 0;
        while head < self.queue.len() {
            let now = self.queue[head];
            head += 1;
            for &(next, _) in &nbrs.of[now] {
                if self.dist[next] == u32::MAX {
                    self.dist[next] = self.dist[now] + 1;
                    // Only switches are expanded: paths do not cross hosts.
                    if nbrs.is_switch[next] {
                        self.order[next] = self.queue.len() as u32;
                        self.queue.push(next);
                    }
                }
            }
        }
    }

    /// The next hops of node `node`: its neighbours one hop closer to the
    /// start, in the order they were expanded (each appended to
    /// `nextHop[node][host]` when it is the search's `now`); empty at the
    /// start itself, whose last hop is the host's own port.
    fn next_hops(&self, nbrs: &Neighbours, node: usize) -> Vec<u16> {
        let mut hops: Vec<(u32, u16)> = nbrs.of[node]
            .iter()
            .filter(|&&(q, _)| {
                self.order[q] != u32::MAX && self.dist[q].wrapping_add(1) == self.dist[node]
            })
            .map(|&(q, port)| (self.order[q], port))
            .collect();
        hops.sort_unstable();
        hops.into_iter().map(|(_, port)| port).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Rate, US};

    /// Published MurmurHash3_x86_32 values (the reference implementation's
    /// outputs, as listed with its ports and test suites), including tails
    /// of 1, 2 and 3 bytes.
    #[test]
    fn murmur3_matches_reference_values() {
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_32(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(murmur3_32(&[0, 0, 0, 0], 0), 0x2362_f9de);
        assert_eq!(murmur3_32(&[0x21, 0x43, 0x65, 0x87], 0), 0xf55b_516b);
        assert_eq!(
            murmur3_32(&[0x21, 0x43, 0x65, 0x87], 0x5082_edee),
            0x2362_f9de
        );
        assert_eq!(murmur3_32(&[0x21, 0x43, 0x65], 0), 0x7e4a_8634);
        assert_eq!(murmur3_32(&[0x21, 0x43], 0), 0xa0f7_b07a);
        assert_eq!(murmur3_32(&[0x21], 0), 0x7266_1cf4);
        assert_eq!(murmur3_32(b"Hello, world!", 1234), 0xfaf6_cdb3);
        assert_eq!(
            murmur3_32(b"The quick brown fox jumps over the lazy dog", 0x9747_b28c),
            0x2fa8_26cd
        );
    }

    /// The three-word form is the byte form of the words in little-endian order.
    #[test]
    fn words_are_little_endian_bytes() {
        for (words, seed) in [
            ([0x0b00_0d01, 0x0b00_0601, 10000 | 100 << 16], 322),
            ([0, 1, u32::MAX], 0),
        ] {
            let bytes: Vec<u8> = words.iter().flat_map(|w: &u32| w.to_le_bytes()).collect();
            assert_eq!(murmur3_words(words, seed), murmur3_32(&bytes, seed));
        }
    }

    #[test]
    fn keys_carry_ids_and_ports() {
        assert_eq!(node_ip(13), 0x0b00_0d01);
        assert_eq!(node_ip(300), 0x0b01_2c01);
        let key = flow_key(300, 13, 10_001, 100);
        assert_eq!(
            key_words(key),
            [0x0b01_2c01, 0x0b00_0d01, 10_001 | 100 << 16]
        );
    }

    /// Two ToRs `s4`, `s5` under two spines `s6`, `s7` (linked in the
    /// order s7 before s6 at `s4`, two parallel links `s5`-`s6`), hosts
    /// `h0`, `h1` on `s4` and `h2`, `h3` on `s5`.
    fn two_tier() -> Graph {
        let mut g = Graph::default();
        let h: Vec<_> = (0..4).map(|i| g.add_host(format!("h{i}"))).collect();
        let s: Vec<_> = (4..8).map(|i| g.add_switch(format!("s{i}"), 1)).collect();
        let (r, d) = (Rate::gbps(100), US);
        g.add_link(h[0], s[0], r, d);
        g.add_link(h[1], s[0], r, d);
        g.add_link(h[2], s[1], r, d);
        g.add_link(h[3], s[1], r, d);
        g.add_link(s[0], s[3], r, d); // s4 port 2: s7
        g.add_link(s[0], s[2], r, d); // s4 port 3: s6
        g.add_link(s[1], s[2], r, d); // s5 port 2: s6
        g.add_link(s[1], s[2], r, d); // s5 port 3: s6 again (the one HPCC-sim keeps)
        g.add_link(s[1], s[3], r, d); // s5 port 4: s7
        g.finalize();
        g
    }

    #[test]
    fn next_hops_follow_addresses_and_last_links() {
        let g = two_tier();
        let e = HpccEcmp::build(&g, 100).unwrap();
        // s4 toward s5's hosts: via s7 (id 7, port 2) before s6 (id 6, port 3).
        assert_eq!(e.list(0, 1), &[2, 3]);
        // s5 toward s4's hosts: s7 (port 4), then s6 by its last link (port 3).
        assert_eq!(e.list(1, 0), &[4, 3]);
        // The spines: one way down each.
        assert_eq!(e.list(2, 0), &[0]); // s6's port 0 is its link to s4
        assert_eq!(e.list(2, 1), &[2]); // s6 to s5: its last link
        assert_eq!(e.host_id(3), 3);
        // A pick is the list indexed by the hash modulo its length.
        let key = flow_key(0, 2, 10_000, 100);
        let h = murmur3_words(key_words(key), 4);
        assert_eq!(e.pick(0, 1, key), e.list(0, 1)[(h % 2) as usize]);
    }

    #[test]
    fn names_without_ids_are_errors() {
        let mut g = two_tier();
        g.switch_names[1] = "tor1".into();
        let err = HpccEcmp::build(&g, 100).unwrap_err();
        assert!(err.contains("switch `tor1` has none"), "{err}");
        let mut g = two_tier();
        g.host_names[3] = "h007".into();
        assert!(HpccEcmp::build(&g, 100)
            .unwrap_err()
            .contains("host `h007`"));
        let mut g = two_tier();
        g.host_names[3] = "h5".into();
        let err = HpccEcmp::build(&g, 100).unwrap_err();
        assert!(err.contains("same HPCC-sim node id 5"), "{err}");
    }
}

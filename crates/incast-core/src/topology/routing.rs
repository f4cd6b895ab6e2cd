//! Equal-cost multi-path (ECMP) routing over all shortest paths.
//!
//! [`Routes::compute`] finds, for every switch and destination host, the
//! switch's ports that lie on a shortest path (hop count) to the host. Hosts do
//! not forward packets, so paths run through switches only.
//!
//! The table is flat and compact. Every host hangs off exactly one switch, so
//! a switch other than that one routes toward the host exactly as toward its
//! switch: the table keeps one row per switch that has hosts (its *edge
//! row*), not one per host, and each host keeps its switch, the row and the
//! port that faces it ([`HostRoute`]). The distinct port sets (together with
//! their distance) are interned once, and a row entry is a `u32` set id.
//! Switches whose columns are identical share one ([`super::columns`]): a row
//! holds one entry per *class* of switches, and each switch keeps its class.
//! A k = 32 fat-tree (8,192 hosts, 1,280 switches) has 512 rows of 65
//! entries, 67 KB of the two-byte table [`Routes::select`] reads, where one
//! entry per switch took 1.3 MB (and one row per host would take 21 MB).
//! [`Routes::choices`] reads the host's entry, then the row, then the set,
//! without hashing or allocation; [`Routes::select`] reads a second table of
//! the rows' shape that holds the port itself where there is only one (every
//! downward hop of a tree), so most hops take three reads (host, class,
//! entry), of tables small enough to stay in the first- or second-level cache.
//!
//! A flow picks one port per switch with [`Routes::select`]: its 64-bit hash is
//! re-mixed with the switch id ([`ecmp_index`]) so that the choices at
//! successive tiers are independent. Reusing the same hash bits at every tier
//! would *polarize*: every flow that took up-link `j` at the edge would take
//! up-link `j` again at the aggregation switch, leaving most core links idle.
//!
//! With `routing.ecmp = "hpcc"` ([`Routes::use_hpcc`]) a switch with several
//! choices picks as the HPCC simulator does instead ([`super::hpcc_ecmp`]),
//! from the flow's key that the packet's hash then carries.

use super::columns::{merge_columns, nearest_other_row, Merged};
use super::hpcc_ecmp::HpccEcmp;
use super::{Graph, NodeRef, MAX_PORTS};
use crate::rng::mix64;
use std::collections::HashMap;

/// Odd constant that spreads switch ids before they are mixed into a flow hash.
const SWITCH_SALT: u64 = 0xD6E8_FEB8_6659_FD93;

/// Which of `n` equal-cost choices switch `sw` gives to a flow with hash `flow_hash`: the hash re-mixed
/// with the switch id, reduced to `0..n` by a multiply-shift (bias below n / 2^64).
#[inline]
pub fn ecmp_index(flow_hash: u64, sw: u32, n: usize) -> usize {
    let h = mix64(flow_hash ^ u64::from(sw).wrapping_mul(SWITCH_SALT));
    ((u128::from(h) * n as u128) >> 64) as usize
}

/// Flag of a [`Routes`] fast-table entry that holds a set id, not a port.
const SET: u16 = 1 << 15;
/// A fast-table entry that does not fit in 15 bits: read `table` instead.
const SLOW: u16 = u16::MAX;

/// The fast-table entry of a (switch, host) pair whose set `id` has `ports`:
/// the port itself when it is the only one (every downward hop of a tree),
/// else `SET | id`; `SLOW` when the value needs more than 15 bits.
fn fast_entry(ports: &[u16], id: u32) -> u16 {
    match ports {
        [port] if *port < SET => *port,
        _ if id < u32::from(SET - 1) => SET | id as u16,
        _ => SLOW,
    }
}

/// Where a destination host hangs off the network: what a route toward it
/// reads first.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct HostRoute {
    /// The switch the host is linked to (`u32::MAX` when it is linked to a host).
    att: u32,
    /// Start of the edge row of `att` in `table` and `fast` (the row
    /// index times the number of switch classes).
    row: u32,
    /// Set id of the last hop: `att`'s one port toward the host.
    last: u32,
    /// [`fast_entry`] of the last hop: the port itself, unless it does not fit.
    last_fast: u16,
}

/// Shortest-path next hops from every switch to every host.
#[derive(Clone, Debug)]
pub struct Routes {
    /// Per host: its switch and edge row ([`HostRoute`]).
    hosts: Vec<HostRoute>,
    /// The class of each switch: switches with identical columns share one.
    class_of: Vec<u32>,
    /// Set id for (switch `s`, every host on the edge row's switch `t`), at
    /// `row(t) + class_of[s]`. The entry of `t` itself is unused: there the
    /// host's own port is the route ([`HostRoute::last`]).
    table: Vec<u32>,
    /// What [`Routes::select`] reads, in `table`'s shape: the port itself
    /// when its set has one port, else the set id ([`fast_entry`]). One
    /// two-byte load instead of three on most hops; a packet's whole path
    /// reads one row.
    fast: Vec<u16>,
    /// The ports of set `i` are `set_ports[set_start[i]..set_start[i + 1]]`, ascending.
    set_start: Vec<u32>,
    set_ports: Vec<u16>,
    /// Hops from a switch using set `i` to the destination host.
    set_dist: Vec<u32>,
    /// HPCC-sim's rule and next-hop lists, when `routing.ecmp = "hpcc"`:
    /// read only where a switch has several choices.
    hpcc: Option<Box<HpccEcmp>>,
    /// Packet spraying (`routing.ecmp = "spray"`): senders give each data
    /// segment its own hash ([`Routes::packet_hash`]).
    pub spray: bool,
}

/// Builds the interned port sets. A key is `[distance, port, port, ...]`.
struct Interner {
    ids: HashMap<Vec<u32>, u32>,
    set_start: Vec<u32>,
    set_ports: Vec<u16>,
    set_dist: Vec<u32>,
}

impl Interner {
    fn intern(&mut self, key: &[u32]) -> u32 {
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = self.set_dist.len() as u32;
        self.set_dist.push(key[0]);
        self.set_ports.extend(key[1..].iter().map(|&p| p as u16));
        self.set_start.push(self.set_ports.len() as u32);
        self.ids.insert(key.to_vec(), id);
        id
    }
}

/// No switch behind a switch port (a host is).
const NO_SWITCH: u32 = u32::MAX;

/// The switch behind each switch port ([`NO_SWITCH`] for a host), as flat
/// arrays: the searches only walk switch-to-switch links.
struct SwitchNeighbours {
    start: Vec<usize>,
    nbr: Vec<u32>,
}

impl SwitchNeighbours {
    fn of(graph: &Graph) -> Self {
        let ns = graph.n_switches();
        let mut start = Vec::with_capacity(ns + 1);
        let mut nbr = Vec::new();
        start.push(0usize);
        for s in 0..ns as u32 {
            for port in 0..graph.ports(NodeRef::Switch(s)).len() {
                nbr.push(match graph.peer(NodeRef::Switch(s), port).0 {
                    NodeRef::Switch(q) => q,
                    NodeRef::Host(_) => NO_SWITCH,
                });
            }
            start.push(nbr.len());
        }
        SwitchNeighbours { start, nbr }
    }

    /// Switch `switch`'s neighbour on each of its ports.
    fn of_switch(&self, switch: usize) -> &[u32] {
        &self.nbr[self.start[switch]..self.start[switch + 1]]
    }

    /// Breadth-first search over switches from `t`: hop counts in `dist`
    /// (`u32::MAX`: unreachable), the switches reached in `queue`.
    fn bfs(&self, t: usize, dist: &mut [u32], queue: &mut Vec<u32>) {
        dist.fill(u32::MAX);
        queue.clear();
        dist[t] = 0;
        queue.push(t as u32);
        let mut head = 0;
        while head < queue.len() {
            let s = queue[head] as usize;
            head += 1;
            for &q in self.of_switch(s) {
                if q != NO_SWITCH && dist[q as usize] == u32::MAX {
                    dist[q as usize] = dist[s] + 1;
                    queue.push(q);
                }
            }
        }
    }
}

/// The hosts linked to each switch (a host behind another host's NIC is
/// routed as that host), after checking what routing assumes: port lists up
/// to date, at most [`MAX_PORTS`] ports per switch, one link per host, and
/// hosts linked to switches (or two hosts alone, linked to each other).
fn hosts_on_switches(graph: &Graph) -> Result<Vec<Vec<u32>>, String> {
    let (nh, ns) = (graph.n_hosts(), graph.n_switches());
    if !graph.is_finalized() {
        return Err("the graph's port lists are out of date; call Graph::finalize() first".into());
    }
    for s in 0..ns as u32 {
        if graph.ports(NodeRef::Switch(s)).len() > MAX_PORTS {
            return Err(format!(
                "{} has more than {MAX_PORTS} ports",
                graph.label(NodeRef::Switch(s))
            ));
        }
    }
    let mut on_switch: Vec<Vec<u32>> = vec![Vec::new(); ns];
    let nic_hosts = graph.nic_hosts();
    for d in 0..nh as u32 {
        if nic_hosts[d as usize] != d {
            continue; // behind another host's NIC: routed as that host
        }
        let n = graph.ports(NodeRef::Host(d)).len();
        if n != 1 {
            return Err(format!(
                "{} has {n} links; a host must have exactly one",
                graph.label(NodeRef::Host(d))
            ));
        }
        let (peer, _) = graph.peer(NodeRef::Host(d), 0);
        match peer {
            NodeRef::Switch(t) => on_switch[t as usize].push(d),
            NodeRef::Host(o) => {
                // Two hosts linked directly: fine only if they are the whole network.
                if nh > 2 || ns > 0 {
                    let other = if ns > 0 {
                        graph.label(NodeRef::Switch(0))
                    } else {
                        graph.label(NodeRef::Host(
                            (0..nh as u32).find(|&x| x != d && x != o).unwrap_or(o),
                        ))
                    };
                    return Err(format!(
                        "{} is linked directly to {}, so {other} cannot reach it; connect hosts to switches",
                        graph.label(NodeRef::Host(d)),
                        graph.label(peer)
                    ));
                }
            }
        }
    }
    Ok(on_switch)
}

/// Merges the identical columns of the full `table` (one column for each of
/// the `ns` switches, one row per switch in `row_switches`) and points the
/// hosts' rows into the merged table.
fn merge_switch_columns(
    mut table: Vec<u32>,
    ns: usize,
    row_switches: &[u32],
    nearest: &[Option<usize>],
    hosts: &mut [HostRoute],
) -> Merged {
    // A row's own switch never reads its entry, so it may hold anything: a
    // copy of its nearest other row's lets it share a column with switches
    // that route toward both rows alike ([`nearest_other_row`]).
    for (r, &t) in row_switches.iter().enumerate() {
        if let Some(u) = nearest[r] {
            table[r * ns + t as usize] = table[u * ns + t as usize];
        }
    }
    let merged = merge_columns(&table, ns);
    for h in hosts.iter_mut().filter(|h| h.att != u32::MAX) {
        h.row = h.row / ns as u32 * merged.n_classes as u32;
    }
    merged
}

impl Routes {
    /// BFS from every destination host over the graph (hop count metric). For each switch s and
    /// destination host d, the next hops are the local port indices of s whose peer is one hop closer to d.
    /// Error if some host cannot reach some other host.
    ///
    /// Also an error: a switch that cannot reach some host (it would have no
    /// route), a host without exactly one link, a switch with more than
    /// [`MAX_PORTS`] ports, a graph whose port lists are out of date
    /// ([`Graph::finalize`]). [`Graph::validate`] rules all of these out.
    ///
    /// Hosts on the same switch share one search and one table row, so the
    /// cost is one BFS per switch that has hosts, and the table holds one
    /// entry per class of switches ([`super::columns`]) per such switch.
    pub fn compute(graph: &Graph) -> Result<Routes, String> {
        let (nh, ns) = (graph.n_hosts(), graph.n_switches());
        let on_switch = hosts_on_switches(graph)?;
        let mut sets = Interner {
            ids: HashMap::new(),
            set_start: vec![0],
            set_ports: Vec::new(),
            set_dist: Vec::new(),
        };
        let nbr = SwitchNeighbours::of(graph);

        // One edge row per switch that has hosts, in switch order.
        let mut row_of = vec![u32::MAX; ns];
        let mut row_switches: Vec<u32> = Vec::new();
        for (t, hosts) in on_switch.iter().enumerate() {
            if !hosts.is_empty() {
                let n_rows = row_switches.len();
                row_of[t] = u32::try_from(n_rows * ns).map_err(|_| {
                    format!("{ns} switches with hosts on {n_rows} of them are too many to route; use fewer switches")
                })?;
                row_switches.push(t as u32);
            }
        }
        let n_rows = row_switches.len();
        // Per row: the row whose entry its own switch copies (see below).
        let mut nearest = vec![None; n_rows];
        // The full table (one column per switch) until the columns merge.
        let mut table = vec![u32::MAX; n_rows * ns];
        let mut hosts_route = vec![
            HostRoute {
                att: u32::MAX,
                row: 0,
                last: 0,
                last_fast: 0,
            };
            nh
        ];
        let mut dist = vec![u32::MAX; ns];
        let mut queue: Vec<u32> = Vec::with_capacity(ns);
        let mut key: Vec<u32> = Vec::new();
        for t in 0..ns {
            let hosts = &on_switch[t];
            if hosts.is_empty() {
                continue;
            }
            nbr.bfs(t, &mut dist, &mut queue);
            if queue.len() < ns {
                let s = (0..ns).find(|&s| dist[s] == u32::MAX).unwrap_or(0);
                let what = if on_switch[s].is_empty() {
                    format!("{} cannot reach", graph.label(NodeRef::Switch(s as u32)))
                } else {
                    format!(
                        "{} cannot reach",
                        graph.label(NodeRef::Host(on_switch[s][0]))
                    )
                };
                return Err(format!(
                    "the network is disconnected: {what} {}; add links so that every host can reach every other host",
                    graph.label(NodeRef::Host(hosts[0]))
                ));
            }
            let row = row_of[t];
            nearest[row as usize / ns] = nearest_other_row(t, &row_switches, &dist);
            // The last hop: the port facing each host itself.
            for (port, _) in graph.ports(NodeRef::Switch(t as u32)).iter().enumerate() {
                if let (NodeRef::Host(d), _) = graph.peer(NodeRef::Switch(t as u32), port) {
                    let last = sets.intern(&[1, port as u32]);
                    hosts_route[d as usize] = HostRoute {
                        att: t as u32,
                        row,
                        last,
                        last_fast: fast_entry(&[port as u16], last),
                    };
                }
            }
            for s in (0..ns).filter(|&s| s != t) {
                key.clear();
                key.push(dist[s] + 1);
                for (port, &q) in nbr.of_switch(s).iter().enumerate() {
                    if q != NO_SWITCH && dist[q as usize] + 1 == dist[s] {
                        key.push(port as u32);
                    }
                }
                table[row as usize + s] = sets.intern(&key);
            }
        }
        let merged = merge_switch_columns(table, ns, &row_switches, &nearest, &mut hosts_route);
        // A host behind a multi-host NIC is reached as the NIC's own host.
        for (d, &owner) in graph.nic_hosts().iter().enumerate() {
            hosts_route[d] = hosts_route[owner as usize];
        }
        let mut routes = Routes {
            hosts: hosts_route,
            class_of: merged.class_of,
            table: merged.table,
            fast: Vec::new(),
            set_start: sets.set_start,
            set_ports: sets.set_ports,
            set_dist: sets.set_dist,
            hpcc: None,
            spray: false,
        };
        // A diagonal entry without another row to copy reads as SLOW.
        routes.fast = routes
            .table
            .iter()
            .map(|&id| match id {
                u32::MAX => SLOW,
                id => fast_entry(routes.set(id as usize), id),
            })
            .collect();
        Ok(routes)
    }

    /// The ports of interned set `id`, ascending.
    #[inline]
    fn set(&self, id: usize) -> &[u16] {
        &self.set_ports[self.set_start[id] as usize..self.set_start[id + 1] as usize]
    }

    /// The candidate egress ports (local port indices of switch `sw`) toward host `dst`. Non-empty.
    /// O(1): three array reads, no hashing (see the module docs for the layout).
    ///
    /// The ports are in ascending order.
    #[inline]
    pub fn choices(&self, sw: u32, dst: u32) -> &[u16] {
        self.set(self.choices_id(sw, dst))
    }

    /// Number of links on a shortest path between two hosts (e.g. 2 through one switch; 0 from a host to itself).
    pub fn hops(&self, src_host: u32, dst_host: u32) -> u32 {
        if src_host == dst_host {
            return 0;
        }
        match self.hosts[src_host as usize].att {
            u32::MAX => 1, // two hosts linked directly
            s => 1 + self.set_dist[self.choices_id(s, dst_host)],
        }
    }

    /// The interned set id behind [`Routes::choices`].
    #[inline]
    fn choices_id(&self, sw: u32, dst: u32) -> usize {
        let h = &self.hosts[dst as usize];
        if h.att == sw {
            h.last as usize
        } else {
            self.table[h.row as usize + self.class_of[sw as usize] as usize] as usize
        }
    }

    /// Picks one choice for a flow: `choices(sw,dst)[ecmp_index(hash, sw, n)]` where the flow's 64-bit hash is
    /// re-mixed with the switch id (so successive tiers do not polarize) with crate::rng::mix64;
    /// under HPCC-sim's rule ([`Routes::use_hpcc`]), [`HpccEcmp::pick`] of the flow's key.
    #[inline(always)]
    pub fn select(&self, sw: u32, dst: u32, flow_hash: u64) -> u16 {
        let h = &self.hosts[dst as usize];
        let v = self.fast[h.row as usize + self.class_of[sw as usize] as usize];
        // The last hop's entry is the host's own (a select, not a branch).
        let v = if h.att == sw { h.last_fast } else { v };
        if v & SET == 0 {
            return v;
        }
        let c = if v != SLOW {
            self.set((v & !SET) as usize)
        } else {
            // HPCC-sim's rule sets every entry with several choices to
            // SLOW ([`Routes::use_hpcc`]), so incast's own costs nothing more.
            if let (Some(rule), false) = (&self.hpcc, h.att == sw) {
                return rule.pick(sw, h.att, flow_hash);
            }
            self.choices(sw, dst)
        };
        c[ecmp_index(flow_hash, sw, c.len())]
    }

    /// Switches with several choices pick by HPCC-sim's rule from now on
    /// ([`super::hpcc_ecmp`]): a flow's hash must then be its
    /// [`super::hpcc_ecmp::flow_key`].
    pub fn use_hpcc(&mut self, rule: HpccEcmp) {
        self.hpcc = Some(Box::new(rule));
        // Where there are several choices, `select` reads the rule on its
        // slow path; one choice is the same port under either rule.
        for v in &mut self.fast {
            if *v & SET != 0 {
                *v = SLOW;
            }
        }
    }

    /// The hash a data segment of a flow with hash `flow_hash` carries:
    /// the flow's, or under packet spraying one of its own, from its
    /// sequence number (so a retransmission takes its original's path).
    #[inline(always)]
    pub fn packet_hash(&self, flow_hash: u64, seq: u64) -> u64 {
        if self.spray {
            crate::rng::mix64(flow_hash ^ seq.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        } else {
            flow_hash
        }
    }

    /// HPCC-sim's rule, when the switches use it.
    pub fn hpcc(&self) -> Option<&HpccEcmp> {
        self.hpcc.as_deref()
    }

    /// Number of distinct (port set, distance) entries the table refers to.
    pub fn distinct_sets(&self) -> usize {
        self.set_dist.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_types::{RateValue, TimeValue};
    use crate::rng::Stream;
    use crate::topology::builders;
    use crate::topology::config::{FatTree, LeafSpine};
    use crate::units::{Rate, US};

    fn fat(k: u32) -> Graph {
        let r = RateValue(Rate::gbps(100));
        builders::fat_tree(&FatTree {
            k,
            host_rate: r,
            fabric_rate: r,
            core_rate: None,
            delay: TimeValue(US),
        })
    }

    fn leaf_spine(leaves: u32, spines: u32, hosts_per_leaf: u32, links_per_spine: u32) -> Graph {
        let r = RateValue(Rate::gbps(100));
        builders::leaf_spine(&LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            host_rate: r,
            fabric_rate: r,
            host_delay: TimeValue(US),
            fabric_delay: TimeValue(US),
            links_per_spine,
        })
    }

    /// Forwards a packet from `src` to `dst` with `select` at every switch and
    /// returns the switches it crossed.
    fn walk(graph: &Graph, routes: &Routes, src: u32, dst: u32, hash: u64) -> Vec<u32> {
        let (mut node, _) = graph.peer(NodeRef::Host(src), 0);
        let mut path = Vec::new();
        while let NodeRef::Switch(s) = node {
            path.push(s);
            assert!(path.len() <= graph.n_switches(), "routing loop {path:?}");
            node = graph.peer(node, routes.select(s, dst, hash) as usize).0;
        }
        assert_eq!(node, NodeRef::Host(dst));
        path
    }

    #[test]
    fn fat_tree_k4_choices_and_hops() {
        let g = fat(4);
        let r = Routes::compute(&g).unwrap();
        // edge0_0 (switch 0) has hosts 0, 1; edge0_1 has hosts 2, 3; pod 1 starts at host 4.
        assert_eq!(r.choices(0, 0), &[0]);
        assert_eq!(r.choices(0, 1), &[1]);
        assert_eq!(r.choices(0, 2), &[2, 3]); // same pod, other edge: via either agg
        assert_eq!(r.choices(0, 15), &[2, 3]); // other pod
        for core in 16..20 {
            for d in 0..16 {
                assert_eq!(r.choices(core, d).len(), 1);
            }
        }
        // agg0_0 (switch 8): down to the right edge inside its pod, up to both of its cores otherwise
        assert_eq!(r.choices(8, 3), &[1]);
        assert_eq!(r.choices(8, 4), &[2, 3]);
        assert_eq!(r.hops(0, 0), 0);
        assert_eq!(r.hops(0, 1), 2);
        assert_eq!(r.hops(0, 3), 4);
        assert_eq!(r.hops(0, 15), 6);
        assert_eq!(r.hops(15, 0), 6);
        for src in 0..16 {
            for dst in 0..16 {
                if src != dst {
                    for hash in [1, 2, 3, 0xfeed] {
                        assert_eq!(
                            walk(&g, &r, src, dst, hash).len() as u32 + 1,
                            r.hops(src, dst)
                        );
                    }
                }
            }
        }
        assert!(r.distinct_sets() < 20, "{}", r.distinct_sets());
        // One row per edge switch (8 of them), not per host (16), of one
        // entry per class of switches: the edges of each of the 4 pods, the
        // aggregation switches of each pod and the cores (9), not 20 switches.
        assert_eq!(r.class_of.len(), 20);
        assert_eq!(
            (r.table.len(), r.fast.len(), r.hosts.len()),
            (8 * 9, 8 * 9, 16)
        );
    }

    /// The ports of switch `sw` on a shortest path to host `dst`, by a plain
    /// breadth-first search over the whole graph (hosts included): what the
    /// merged tables must reproduce.
    fn plain_choices(graph: &Graph, sw: u32, dst: u32) -> Vec<u16> {
        let dst = NodeRef::Host(graph.nic_host(dst));
        let slot = |n: NodeRef| match n {
            NodeRef::Host(h) => h as usize,
            NodeRef::Switch(s) => graph.n_hosts() + s as usize,
        };
        let mut dist = vec![u32::MAX; graph.n_hosts() + graph.n_switches()];
        let mut queue = std::collections::VecDeque::from([dst]);
        dist[slot(dst)] = 0;
        while let Some(n) = queue.pop_front() {
            for port in 0..graph.ports(n).len() {
                let q = graph.peer(n, port).0;
                // Hosts do not forward: only the destination starts a path.
                if dist[slot(q)] == u32::MAX && (n == dst || matches!(n, NodeRef::Switch(_))) {
                    dist[slot(q)] = dist[slot(n)] + 1;
                    queue.push_back(q);
                }
            }
        }
        let me = NodeRef::Switch(sw);
        (0..graph.ports(me).len() as u16)
            .filter(|&p| dist[slot(graph.peer(me, p as usize).0)] + 1 == dist[slot(me)])
            .collect()
    }

    /// An irregular graph: a ring of 5 switches with a chord, hosts on 4 of
    /// them, two hosts behind another host's multi-host NIC.
    fn irregular() -> Graph {
        let mut g = Graph::default();
        let sw: Vec<_> = (0..5).map(|i| g.add_switch(format!("s{i}"), 1)).collect();
        for i in 0..5 {
            g.add_link(sw[i], sw[(i + 1) % 5], Rate::gbps(1), US);
        }
        g.add_link(sw[0], sw[2], Rate::gbps(1), US);
        for (i, &s) in [0, 0, 1, 3, 4, 4].iter().enumerate() {
            let h = g.add_host(format!("h{i}"));
            g.add_link(h, sw[s], Rate::gbps(1), US);
        }
        g.add_host_behind("n0", NodeRef::Host(2));
        g.add_host_behind("n1", NodeRef::Host(2));
        g.finalize();
        g
    }

    /// The merged tables give every (switch, host) pair the shortest-path
    /// ports and hop count of a plain search, on topologies whose columns
    /// merge a lot (trees), a little, or not at all.
    #[test]
    fn merged_tables_match_a_plain_search() {
        let mut shared = leaf_spine(3, 2, 2, 1);
        shared.add_host_behind("behind", NodeRef::Host(4));
        shared.finalize();
        for g in [fat(4), fat(6), leaf_spine(4, 3, 5, 2), irregular(), shared] {
            let r = Routes::compute(&g).unwrap();
            assert!(r.table.len() <= r.hosts.len().max(1) * g.n_switches());
            for sw in 0..g.n_switches() as u32 {
                for d in 0..g.n_hosts() as u32 {
                    assert_eq!(r.choices(sw, d), plain_choices(&g, sw, d), "{sw} {d}");
                }
            }
            for src in 0..g.n_hosts() as u32 {
                for dst in 0..g.n_hosts() as u32 {
                    if g.nic_host(src) != g.nic_host(dst) {
                        let s = g.nic_host(src);
                        let want = walk(&g, &r, s, g.nic_host(dst), 5).len() as u32 + 1;
                        assert_eq!(r.hops(src, dst), want);
                    }
                }
            }
        }
        // The leaf-spine's leaves share a column, and so do its spines.
        let r = Routes::compute(&leaf_spine(4, 3, 5, 2)).unwrap();
        assert_eq!(r.table.len(), 4 * 2);
    }

    /// `select` (which reads the compact fast table) picks exactly
    /// `choices[ecmp_index(..)]` for every switch, host and a few hashes;
    /// also when every entry takes the slow path (as in a topology whose
    /// ports or sets do not fit in 15 bits).
    #[test]
    fn select_agrees_with_choices() {
        for g in [fat(4), fat(6), leaf_spine(4, 2, 3, 2)] {
            let fast = Routes::compute(&g).unwrap();
            let mut slow = fast.clone();
            slow.fast.fill(SLOW);
            for h in &mut slow.hosts {
                h.last_fast = SLOW;
            }
            for r in [fast, slow] {
                for sw in 0..g.n_switches() as u32 {
                    for d in 0..g.n_hosts() as u32 {
                        let c = r.choices(sw, d);
                        for hash in [0, 1, 0xfeed, u64::MAX] {
                            let want = c[ecmp_index(hash, sw, c.len())];
                            assert_eq!(r.select(sw, d, hash), want, "switch {sw} host {d}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fast_entries_fall_back_when_they_do_not_fit() {
        assert_eq!(fast_entry(&[5], 9), 5);
        assert_eq!(fast_entry(&[0x7fff], 9), 0x7fff);
        assert_eq!(fast_entry(&[0x8000], 9), SET | 9); // port too wide: its set
        assert_eq!(fast_entry(&[0x8000], 0x7fff), SLOW);
        assert_eq!(fast_entry(&[1, 2], 0), SET);
        assert_eq!(fast_entry(&[1, 2], 0x7ffe), SET | 0x7ffe);
        assert_eq!(fast_entry(&[1, 2], 0x7fff), SLOW); // would read as SLOW
        assert_eq!(fast_entry(&[1, 2], 1 << 20), SLOW);
    }

    #[test]
    fn leaf_spine_choices() {
        let g = leaf_spine(4, 3, 5, 2);
        let r = Routes::compute(&g).unwrap();
        // leaf0 toward a host on leaf2: all 3 spines x 2 parallel links, ports 5..11
        assert_eq!(r.choices(0, 12), &[5, 6, 7, 8, 9, 10]);
        assert_eq!(r.choices(0, 3), &[3]);
        // spine0 (switch 4) toward host 12 (leaf2): its two parallel links to leaf2
        assert_eq!(r.choices(4, 12), &[4, 5]);
        assert_eq!((r.hops(0, 4), r.hops(0, 5)), (2, 4));
        for src in 0..20 {
            for dst in 0..20 {
                if src != dst {
                    assert_eq!(
                        walk(&g, &r, src, dst, src as u64 * 77 + dst as u64).len() as u32 + 1,
                        r.hops(src, dst)
                    );
                }
            }
        }
    }

    #[test]
    fn select_is_uniform() {
        // Leaf 0 of a 2-leaf, 4-spine network has 4 up-links toward a host on leaf 1.
        let g = leaf_spine(2, 4, 2, 1);
        let r = Routes::compute(&g).unwrap();
        let choices = r.choices(0, 3);
        assert_eq!(choices.len(), 4);
        let n = 100_000;
        let mut counts = [0u32; 4];
        let mut s = Stream::new(1, "ecmp-test", 0);
        for _ in 0..n {
            let p = r.select(0, 3, s.next_u64());
            counts[choices.iter().position(|&c| c == p).unwrap()] += 1;
        }
        // Each count is binomial(n = 100000, p = 1/4): mean 25000, standard deviation
        // sqrt(n p (1-p)) = 137. +-5% of the mean is +-1250, about 9 standard deviations,
        // so a correct implementation essentially never fails while a biased one (e.g. a
        // 1% skew, 250 flows) would show up in the deviation check below.
        let expected = n as f64 / 4.0;
        for c in counts {
            assert!((c as f64 - expected).abs() < 0.05 * expected, "{counts:?}");
        }
        // Consecutive hashes (a poor flow hash) are spread too.
        let mut counts = [0u32; 4];
        for h in 0..n as u64 {
            counts[choices
                .iter()
                .position(|&c| c == r.select(0, 3, h))
                .unwrap()] += 1;
        }
        for c in counts {
            assert!((c as f64 - expected).abs() < 0.05 * expected, "{counts:?}");
        }
    }

    #[test]
    fn tiers_do_not_polarize() {
        // k = 8: hosts 0..16 are in pod 0, hosts 16..32 in pod 1. An edge switch has 4
        // up-links (to the 4 aggs) and each agg 4 up-links (to its 4 cores).
        let g = fat(8);
        let r = Routes::compute(&g).unwrap();
        let (src, dst) = (0u32, 16 + 5);
        let edge = match g.peer(NodeRef::Host(src), 0).0 {
            NodeRef::Switch(s) => s,
            other => panic!("{other:?}"),
        };
        let n = 64_000;
        let mut pairs = [[0u32; 4]; 4];
        let mut naive = [[0u32; 4]; 4];
        let mut s = Stream::new(2, "polarization-test", 0);
        for _ in 0..n {
            let hash = s.next_u64();
            let path = walk(&g, &r, src, dst, hash);
            assert_eq!(path.len(), 5);
            let up1 = r
                .choices(edge, dst)
                .iter()
                .position(|&p| p == r.select(edge, dst, hash))
                .unwrap();
            let agg = path[1];
            let up2 = r
                .choices(agg, dst)
                .iter()
                .position(|&p| p == r.select(agg, dst, hash))
                .unwrap();
            pairs[up1][up2] += 1;
            // What hashing without the switch id would do: the same index at both tiers.
            let same = (hash % 4) as usize;
            naive[same][same] += 1;
        }
        // Expected 4000 per pair, standard deviation 61; allow 10% (6.5 sigma).
        for row in pairs {
            for c in row {
                assert!((c as f64 - 4000.0).abs() < 400.0, "{pairs:?}");
            }
        }
        let used = |m: &[[u32; 4]; 4]| m.iter().flatten().filter(|&&c| c > 0).count();
        assert_eq!(used(&pairs), 16);
        assert_eq!(used(&naive), 4);
        assert_eq!(r.hops(src, dst), 6);
    }

    #[test]
    fn unreachable_hosts_are_errors() {
        let mut g = Graph::default();
        let (a, b, c) = (g.add_host("a"), g.add_host("b"), g.add_host("c"));
        let (x, y) = (g.add_switch("x", 1), g.add_switch("y", 1));
        g.add_link(a, x, Rate::gbps(1), US);
        g.add_link(b, x, Rate::gbps(1), US);
        g.add_link(c, y, Rate::gbps(1), US);
        g.finalize();
        let e = Routes::compute(&g).unwrap_err();
        assert!(e.contains("host `c` cannot reach host `a`"), "{e}");
        g.add_link(x, y, Rate::gbps(1), US);
        g.finalize();
        let r = Routes::compute(&g).unwrap();
        assert_eq!((r.hops(0, 1), r.hops(0, 2), r.hops(2, 1)), (2, 3, 3));

        // Two hosts linked directly work on their own ...
        let mut g = Graph::default();
        let (a, b) = (g.add_host("a"), g.add_host("b"));
        g.add_link(a, b, Rate::gbps(1), US);
        g.finalize();
        assert_eq!(Routes::compute(&g).unwrap().hops(1, 0), 1);
        // ... but not next to anything else.
        let x = g.add_switch("x", 1);
        let c = g.add_host("c");
        g.add_link(c, x, Rate::gbps(1), US);
        g.finalize();
        let e = Routes::compute(&g).unwrap_err();
        assert!(e.contains("host `a` is linked directly to host `b`"), "{e}");
    }
}

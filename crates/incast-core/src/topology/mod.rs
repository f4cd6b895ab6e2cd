//! Network topologies: the physical graph of hosts, switches and links, the
//! `[topology]` table of a scenario file that describes it, and ECMP routing
//! over it.
//!
//! # Tutorial
//!
//! A scenario names the shape of its network with `kind` and gives a few
//! sizes and rates ([`TopologyConfig`]; see [`config`] for every field):
//!
//! ```toml
//! [topology]
//! kind = "leaf_spine"      # or "single_switch", "fat_tree", "explicit"
//! leaves = 4
//! spines = 2
//! hosts_per_leaf = 8
//! host_rate = "100Gbps"
//! fabric_rate = "400Gbps"
//! ```
//!
//! [`TopologyConfig::build`] checks the numbers and returns a [`Graph`]:
//!
//! * **Nodes.** Hosts are numbered `0..n_hosts()` and switches
//!   `0..n_switches()`, each in its own number space ([`NodeRef`]). The
//!   builders number hosts contiguously per leaf/edge switch, so a rack is a
//!   contiguous host range, and number switches from the lowest tier up
//!   ([`Graph::switch_tier`]).
//! * **Links.** [`Graph::links`] lists full-duplex links. The builders list
//!   the host links first, so host `i`'s link is `links[i]`.
//! * **Ports.** Each node numbers its ports from 0 in the order its links
//!   appear in `links` ([`Graph::ports`]). A host has exactly one port,
//!   port 0; a switch built by a builder has its down-links before its
//!   up-links. [`Graph::peer`] follows a port to the node and port at the far
//!   end.
//!
//! [`Routes::compute`] then finds, for every switch and destination host, the
//! ports that lie on a shortest path (equal-cost multi-path, ECMP), and
//! [`Routes::select`] pins a flow to one of them by its hash.
//!
//! ```
//! use incast_core::topology::{NodeRef, Routes, TopologyConfig};
//!
//! let cfg: TopologyConfig = toml::from_str(
//!     r#"
//!     kind = "fat_tree"
//!     k = 4
//!     host_rate = "100Gbps"
//!     fabric_rate = "100Gbps"
//! "#,
//! )
//! .unwrap();
//! let g = cfg.build().unwrap();
//! assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (16, 20, 48));
//!
//! // Host 0 hangs off port 0 of its edge switch, switch 0 ("edge0_0").
//! assert_eq!(g.peer(NodeRef::Host(0), 0), (NodeRef::Switch(0), 0));
//! assert_eq!(g.switch_names[0], "edge0_0");
//!
//! let routes = Routes::compute(&g).unwrap();
//! assert_eq!(routes.hops(0, 15), 6); // host, edge, agg, core, agg, edge, host
//! // Toward a host in another pod an edge switch has two equal-cost up-links
//! // (ports 2 and 3, after its two host ports) ...
//! assert_eq!(routes.choices(0, 15), &[2u16, 3][..]);
//! // ... and each flow is pinned to one of them by its hash.
//! let port = routes.select(0, 15, 0xdead_beef);
//! assert!(port == 2 || port == 3);
//! ```
//!
//! A program can also assemble a graph by hand with [`Graph::add_host`],
//! [`Graph::add_switch`] and [`Graph::add_link`]; it must call
//! [`Graph::finalize`] afterwards (the builders do) and should call
//! [`Graph::validate`].

pub mod builders;
mod columns;
pub mod config;
pub mod hpcc_ecmp;
pub mod routing;

pub use config::TopologyConfig;
pub use routing::Routes;

use crate::units::{Ps, Rate};

/// A node of the graph: a host or a switch, by its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeRef {
    Host(u32),
    Switch(u32),
}

/// A full-duplex link between two nodes.
#[derive(Clone, Debug)]
pub struct Link {
    pub a: NodeRef,
    pub b: NodeRef,
    /// Rate in each direction.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Ps,
}

/// The most ports one node may have: port indices are 16-bit (see [`Routes::choices`]).
pub const MAX_PORTS: usize = 1 << 16;

/// The physical graph. Hosts are numbered 0..n_hosts, switches 0..n_switches.
///
/// After changing `host_names`, `switch_names` or `links`, call
/// [`Graph::finalize`] to rebuild the per-node port lists that [`Graph::ports`]
/// and [`Graph::peer`] read. The builders in [`builders`] (and
/// [`TopologyConfig::build`]) return finalized graphs.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub host_names: Vec<String>,
    pub switch_names: Vec<String>,
    /// Tier of each switch: 1 = leaf/ToR/edge, 2 = spine/aggregation, 3 = core (explicit topologies: 1 unless given).
    pub switch_tier: Vec<u8>,
    pub links: Vec<Link>,
    /// Ports of node slot `i` (hosts first, then switches) are
    /// `port_list[port_start[i]..port_start[i + 1]]`. Filled by `finalize`.
    port_start: Vec<u32>,
    port_list: Vec<(u32, u8)>,
    /// The port index of each link at its `a` end (`[0]`) and `b` end (`[1]`).
    link_port: Vec<[u32; 2]>,
    /// Multi-host NICs: `(host, nic_host)` for each host that has no link of
    /// its own and sends through `nic_host`'s NIC port (one NIC shared by
    /// several hosts). Empty when every host has its own link.
    pub shared_nics: Vec<(u32, u32)>,
}

impl Graph {
    pub fn n_hosts(&self) -> usize {
        self.host_names.len()
    }

    pub fn n_switches(&self) -> usize {
        self.switch_names.len()
    }

    /// Adds a host and returns it. Call [`Graph::finalize`] when done editing.
    pub fn add_host(&mut self, name: impl Into<String>) -> NodeRef {
        self.host_names.push(name.into());
        NodeRef::Host(self.host_names.len() as u32 - 1)
    }

    /// Adds a host with no link of its own that sends and receives through
    /// the NIC (the one link) of host `nic` (a multi-host NIC), and returns
    /// it. Call [`Graph::finalize`] when done editing.
    pub fn add_host_behind(&mut self, name: impl Into<String>, nic: NodeRef) -> NodeRef {
        let NodeRef::Host(owner) = nic else {
            panic!("a host can only share another host's NIC");
        };
        let h = self.add_host(name);
        if let NodeRef::Host(i) = h {
            self.shared_nics.push((i, owner));
        }
        h
    }

    /// The host whose NIC port host `host` uses: itself, unless it shares a
    /// multi-host NIC ([`Graph::add_host_behind`]).
    pub fn nic_host(&self, host: u32) -> u32 {
        self.shared_nics
            .iter()
            .find(|&&(x, _)| x == host)
            .map_or(host, |&(_, owner)| owner)
    }

    /// For every host, the host whose NIC port it uses ([`Graph::nic_host`]).
    pub fn nic_hosts(&self) -> Vec<u32> {
        let mut v: Vec<u32> = (0..self.n_hosts() as u32).collect();
        for &(h, owner) in &self.shared_nics {
            if let Some(x) = v.get_mut(h as usize) {
                *x = owner;
            }
        }
        v
    }

    /// The same network with `k` hosts behind every NIC port (multi-host
    /// NICs, `[nic] hosts`): host `i` of this graph becomes hosts `i * k ..
    /// i * k + k`, the first keeping its name and link, the others named
    /// `<name>.1`, `<name>.2`, ... and sharing its NIC. Switches, links and
    /// port numbers are unchanged, so a rack stays a contiguous host range.
    pub fn with_hosts_per_nic(&self, k: u32) -> Graph {
        let mut g = Graph {
            switch_names: self.switch_names.clone(),
            switch_tier: self.switch_tier.clone(),
            ..Graph::default()
        };
        for name in &self.host_names {
            let owner = g.add_host(name.clone());
            for j in 1..k {
                g.add_host_behind(format!("{name}.{j}"), owner);
            }
        }
        let map = |n: NodeRef| match n {
            NodeRef::Host(h) => NodeRef::Host(h * k),
            s => s,
        };
        for link in &self.links {
            g.add_link(map(link.a), map(link.b), link.rate, link.delay);
        }
        g.finalize();
        g
    }

    /// Adds a switch of the given tier and returns it. Call [`Graph::finalize`] when done editing.
    pub fn add_switch(&mut self, name: impl Into<String>, tier: u8) -> NodeRef {
        self.switch_names.push(name.into());
        self.switch_tier.push(tier);
        NodeRef::Switch(self.switch_names.len() as u32 - 1)
    }

    /// Adds a link and returns its index. Call [`Graph::finalize`] when done editing.
    pub fn add_link(&mut self, a: NodeRef, b: NodeRef, rate: Rate, delay: Ps) -> u32 {
        self.links.push(Link { a, b, rate, delay });
        self.links.len() as u32 - 1
    }

    /// The name of a node. Panics if the node does not exist.
    pub fn node_name(&self, node: NodeRef) -> &str {
        match node {
            NodeRef::Host(h) => &self.host_names[h as usize],
            NodeRef::Switch(s) => &self.switch_names[s as usize],
        }
    }

    /// "host `h3`" / "switch `s0`", or a description of a node that does not exist.
    fn label(&self, node: NodeRef) -> String {
        match node {
            NodeRef::Host(h) => match self.host_names.get(h as usize) {
                Some(n) => format!("host `{n}`"),
                None => format!("host #{h} (there are only {} hosts)", self.n_hosts()),
            },
            NodeRef::Switch(s) => match self.switch_names.get(s as usize) {
                Some(n) => format!("switch `{n}`"),
                None => format!(
                    "switch #{s} (there are only {} switches)",
                    self.n_switches()
                ),
            },
        }
    }

    /// Index of a node in the port table: hosts first, then switches; `None` if it does not exist.
    #[inline]
    fn slot(&self, node: NodeRef) -> Option<usize> {
        match node {
            NodeRef::Host(h) if (h as usize) < self.n_hosts() => Some(h as usize),
            NodeRef::Switch(s) if (s as usize) < self.n_switches() => {
                Some(self.n_hosts() + s as usize)
            }
            _ => None,
        }
    }

    /// Whether the port lists match the current nodes and links.
    fn is_finalized(&self) -> bool {
        self.port_start.len() == self.n_hosts() + self.n_switches() + 1
            && self.link_port.len() == self.links.len()
    }

    /// The ports of a node, in a stable order (the order links are listed in `links`).
    /// Each entry is (link index, side) with side 0 if the node is `links[l].a`, 1 if it is `.b`.
    ///
    /// Reads the lists built by [`Graph::finalize`]; panics if the node does not exist.
    #[inline]
    pub fn ports(&self, node: NodeRef) -> &[(u32, u8)] {
        let i = self
            .slot(node)
            .unwrap_or_else(|| panic!("{} does not exist", self.label(node)));
        debug_assert!(
            self.is_finalized(),
            "Graph::finalize() must be called after editing the graph"
        );
        &self.port_list[self.port_start[i] as usize..self.port_start[i + 1] as usize]
    }

    /// The node and the port index on the far end of (node, port).
    #[inline]
    pub fn peer(&self, node: NodeRef, port: usize) -> (NodeRef, usize) {
        let (l, side) = self.ports(node)[port];
        let far = 1 - side as usize;
        let link = &self.links[l as usize];
        let other = if far == 0 { link.a } else { link.b };
        (other, self.link_port[l as usize][far] as usize)
    }

    /// Builds the per-node port lists read by [`Graph::ports`] and [`Graph::peer`].
    /// The builders call it; call it again after editing the graph by hand.
    /// Links that name a node that does not exist are left out (and reported by
    /// [`Graph::validate`]).
    pub fn finalize(&mut self) {
        let n = self.n_hosts() + self.n_switches();
        let mut start = vec![0u32; n + 1];
        for link in &self.links {
            for end in [link.a, link.b] {
                if let Some(i) = self.slot(end) {
                    start[i + 1] += 1;
                }
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut list = vec![(0u32, 0u8); start[n] as usize];
        let mut link_port = vec![[u32::MAX; 2]; self.links.len()];
        for (l, link) in self.links.iter().enumerate() {
            for (side, end) in [link.a, link.b].into_iter().enumerate() {
                if let Some(i) = self.slot(end) {
                    list[next[i] as usize] = (l as u32, side as u8);
                    link_port[l][side] = next[i] - start[i];
                    next[i] += 1;
                }
            }
        }
        self.port_start = start;
        self.port_list = list;
        self.link_port = link_port;
    }

    /// Checks: every host has exactly one link; no self-links; every host can reach every other host;
    /// rates > 0. Error message names the offending node/link and says how to fix it.
    ///
    /// Also checks that every link names existing nodes, that no node has more
    /// than [`MAX_PORTS`] ports, that every switch is connected to the hosts,
    /// and that [`Graph::finalize`] was called after the last edit.
    pub fn validate(&self) -> Result<(), String> {
        if self.switch_tier.len() != self.n_switches() {
            return Err(format!(
                "the graph has {} switch names but {} switch tiers; give every switch a tier (add_switch does)",
                self.n_switches(),
                self.switch_tier.len()
            ));
        }
        if self.n_hosts() == 0 {
            return Err("the topology has no hosts; add at least one".to_string());
        }
        for (l, link) in self.links.iter().enumerate() {
            for end in [link.a, link.b] {
                if self.slot(end).is_none() {
                    return Err(format!(
                        "link {l} refers to {}; add the node or fix the link",
                        self.label(end)
                    ));
                }
            }
            if link.a == link.b {
                return Err(format!(
                    "link {l} connects {} to itself; connect it to another node or remove it",
                    self.label(link.a)
                ));
            }
            if link.rate.0 == 0 {
                return Err(format!(
                    "link {l} ({} - {}) has rate 0; give it a positive rate such as 100Gbps",
                    self.label(link.a),
                    self.label(link.b)
                ));
            }
        }
        if !self.is_finalized() {
            return Err("the port lists are out of date; \
                        call Graph::finalize() after adding nodes or links"
                .into());
        }
        let nic_hosts = self.nic_hosts();
        for &(h, owner) in &self.shared_nics {
            let bad = if h as usize >= self.n_hosts() || owner as usize >= self.n_hosts() {
                Some("names a host that does not exist".to_string())
            } else if owner == h || nic_hosts[owner as usize] != owner {
                Some(format!(
                    "shares the NIC of {}, which itself shares a NIC",
                    self.label(NodeRef::Host(owner))
                ))
            } else if !self.ports(NodeRef::Host(h)).is_empty() {
                Some("has a link of its own but also shares a NIC".to_string())
            } else {
                None
            };
            if let Some(why) = bad {
                return Err(format!(
                    "{} {why}; a host behind a multi-host NIC has no link and names a host that has one",
                    self.label(NodeRef::Host(h))
                ));
            }
        }
        for h in 0..self.n_hosts() as u32 {
            let ports = self.ports(NodeRef::Host(h));
            match ports.len() {
                0 if nic_hosts[h as usize] != h => {}
                1 => {}
                0 => {
                    return Err(format!(
                        "{} has no link; connect it to a switch",
                        self.label(NodeRef::Host(h))
                    ))
                }
                n => {
                    let list: Vec<String> = ports.iter().map(|p| p.0.to_string()).collect();
                    return Err(format!(
                        "{} has {n} links (links {}); a host has exactly one link, to its switch \
                         (hosts do not forward packets): remove the extra links",
                        self.label(NodeRef::Host(h)),
                        list.join(", ")
                    ));
                }
            }
        }
        for s in 0..self.n_switches() as u32 {
            let n = self.ports(NodeRef::Switch(s)).len();
            if n > MAX_PORTS {
                return Err(format!(
                    "{} has {n} ports; at most {MAX_PORTS} are supported",
                    self.label(NodeRef::Switch(s))
                ));
            }
        }
        if let Some(node) = self.unreachable_node() {
            return Err(self.unreachable_message(node));
        }
        Ok(())
    }

    /// The first node (hosts before switches) that cannot be reached from host 0
    /// through switches, if any. Requires finalized port lists and at least one host.
    pub(crate) fn unreachable_node(&self) -> Option<NodeRef> {
        let n = self.n_hosts() + self.n_switches();
        let mut seen = vec![false; n];
        // Hosts behind a multi-host NIC are reached through its port.
        let nic_hosts = self.nic_hosts();
        let start = nic_hosts[0];
        let mut stack = vec![NodeRef::Host(start)];
        seen[start as usize] = true;
        while let Some(node) = stack.pop() {
            if matches!(node, NodeRef::Host(h) if h != start) {
                continue; // hosts do not forward
            }
            for port in 0..self.ports(node).len() {
                let (next, _) = self.peer(node, port);
                if let Some(i) = self.slot(next) {
                    if !seen[i] {
                        seen[i] = true;
                        stack.push(next);
                    }
                }
            }
        }
        for (h, &owner) in nic_hosts.iter().enumerate() {
            seen[h] = seen[owner as usize];
        }
        let first = seen.iter().position(|s| !s)?;
        Some(if first < self.n_hosts() {
            NodeRef::Host(first as u32)
        } else {
            NodeRef::Switch((first - self.n_hosts()) as u32)
        })
    }

    /// The error message for a node found by [`Graph::unreachable_node`].
    pub(crate) fn unreachable_message(&self, node: NodeRef) -> String {
        let h0 = self.label(NodeRef::Host(0));
        match node {
            NodeRef::Host(_) => format!(
                "the network is disconnected: {} cannot reach {h0}; add links so that every host can reach every \
                 other host through switches",
                self.label(node)
            ),
            NodeRef::Switch(_) => format!(
                "the network is disconnected: {} cannot reach {h0}; connect it to the rest of the network or remove it",
                self.label(node)
            ),
        }
    }
}

/// Summarizes a list of names for an error message, collapsing runs such as
/// `h0, h1, ..., h7` into `h0..h7`: `["h0", .., "h7", "s0"]` gives `"h0..h7, s0"`.
pub(crate) fn summarize_names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    const MAX_ITEMS: usize = 12;
    fn split(name: &str) -> Option<(&str, u64)> {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, num) = name.split_at(name.len() - digits);
        if digits == 0 || (num.len() > 1 && num.starts_with('0')) {
            return None;
        }
        Some((prefix, num.parse().ok()?))
    }
    // Runs of consecutive names: (first, last, length).
    let mut runs: Vec<(&str, &str, usize)> = Vec::new();
    for name in names {
        if let Some(last) = runs.last_mut() {
            if let (Some((p, n)), Some((q, m))) = (split(last.1), split(name)) {
                if p == q && m == n + 1 {
                    last.1 = name;
                    last.2 += 1;
                    continue;
                }
            }
        }
        runs.push((name, name, 1));
    }
    let mut items: Vec<String> = Vec::new();
    let mut hidden = 0usize;
    for (first, last, len) in runs {
        if items.len() >= MAX_ITEMS {
            hidden += len;
        } else if len >= 3 {
            items.push(format!("{first}..{last}"));
        } else if len == 2 {
            items.push(format!("{first}, {last}"));
        } else {
            items.push(first.to_string());
        }
    }
    if hidden > 0 {
        items.push(format!("... ({hidden} more)"));
    }
    if items.is_empty() {
        "(none)".to_string()
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    fn two_hosts_one_switch() -> Graph {
        let mut g = Graph::default();
        let h0 = g.add_host("h0");
        let h1 = g.add_host("h1");
        let s0 = g.add_switch("s0", 1);
        g.add_link(h0, s0, Rate::gbps(10), US);
        g.add_link(s0, h1, Rate::gbps(10), US);
        g.finalize();
        g
    }

    #[test]
    fn ports_and_peers_follow_link_order() {
        let g = two_hosts_one_switch();
        assert_eq!(g.ports(NodeRef::Host(0)), &[(0, 0)]);
        assert_eq!(g.ports(NodeRef::Host(1)), &[(1, 1)]);
        assert_eq!(g.ports(NodeRef::Switch(0)), &[(0, 1), (1, 0)]);
        assert_eq!(g.peer(NodeRef::Host(0), 0), (NodeRef::Switch(0), 0));
        assert_eq!(g.peer(NodeRef::Host(1), 0), (NodeRef::Switch(0), 1));
        assert_eq!(g.peer(NodeRef::Switch(0), 1), (NodeRef::Host(1), 0));
        assert_eq!(g.node_name(NodeRef::Switch(0)), "s0");
        g.validate().unwrap();
    }

    #[test]
    fn validate_names_the_problem() {
        let mut g = two_hosts_one_switch();
        g.add_host("h2");
        g.finalize();
        let e = g.validate().unwrap_err();
        assert_eq!(e, "host `h2` has no link; connect it to a switch");

        let mut g = two_hosts_one_switch();
        g.add_link(NodeRef::Host(0), NodeRef::Switch(0), Rate::gbps(10), US);
        g.finalize();
        let e = g.validate().unwrap_err();
        assert!(e.starts_with("host `h0` has 2 links (links 0, 2)"), "{e}");

        let mut g = two_hosts_one_switch();
        g.add_link(NodeRef::Switch(0), NodeRef::Switch(0), Rate::gbps(10), US);
        g.finalize();
        let e = g.validate().unwrap_err();
        assert!(
            e.starts_with("link 2 connects switch `s0` to itself"),
            "{e}"
        );

        let mut g = two_hosts_one_switch();
        g.links[1].rate = Rate(0);
        let e = g.validate().unwrap_err();
        assert!(
            e.starts_with("link 1 (switch `s0` - host `h1`) has rate 0"),
            "{e}"
        );

        let mut g = two_hosts_one_switch();
        g.add_link(NodeRef::Switch(0), NodeRef::Switch(7), Rate::gbps(10), US);
        g.finalize();
        let e = g.validate().unwrap_err();
        assert!(
            e.starts_with("link 2 refers to switch #7 (there are only 1 switches)"),
            "{e}"
        );

        let mut g = two_hosts_one_switch();
        g.add_switch("s1", 2);
        let e = g.validate().unwrap_err();
        assert!(e.contains("call Graph::finalize()"), "{e}");
        g.finalize();
        let e = g.validate().unwrap_err();
        assert!(e.contains("switch `s1` cannot reach host `h0`"), "{e}");

        // Two hosts on two separate switches.
        let mut g = Graph::default();
        let (h0, h1) = (g.add_host("a"), g.add_host("b"));
        let (s0, s1) = (g.add_switch("x", 1), g.add_switch("y", 1));
        g.add_link(h0, s0, Rate::gbps(1), US);
        g.add_link(h1, s1, Rate::gbps(1), US);
        g.finalize();
        let e = g.validate().unwrap_err();
        assert!(e.contains("host `b` cannot reach host `a`"), "{e}");
    }

    #[test]
    fn name_summaries_collapse_runs() {
        let names: Vec<String> = (0..8)
            .map(|i| format!("h{i}"))
            .chain(["s0".to_string()])
            .collect();
        assert_eq!(
            summarize_names(names.iter().map(|s| s.as_str())),
            "h0..h7, s0"
        );
        assert_eq!(
            summarize_names(["a", "b1", "b2", "c07", "c08"]),
            "a, b1, b2, c07, c08"
        );
        let many: Vec<String> = (0..40).map(|i| format!("n{}", 2 * i)).collect();
        let s = summarize_names(many.iter().map(|s| s.as_str()));
        assert!(s.ends_with("n22, ... (28 more)"), "{s}");
    }
}

//! Builders: from a topology configuration to a finalized [`Graph`].
//!
//! Conventions shared by the generated topologies (single switch, leaf-spine,
//! fat-tree):
//!
//! * hosts are named `h0`, `h1`, ... and numbered contiguously per leaf/edge
//!   switch, so a rack is a contiguous host range;
//! * switches are numbered tier by tier from the bottom (leaves before spines;
//!   edges, then aggregations, then cores), pod by pod;
//! * all host links come first, host `i`'s link being `links[i]` with the host
//!   as end `a`; then the links of each upper tier, lower end as `a`. So every
//!   host's only port is port 0 and every switch has its down-links before its
//!   up-links.
//!
//! [`single_switch`], [`leaf_spine`] and [`fat_tree`] expect parameters that
//! [`TopologyConfig::build`](super::TopologyConfig::build) has checked (it
//! calls them); [`explicit`] checks its input itself.

use super::config::{Explicit, FatTree, LeafSpine, SingleSwitch, TopologyConfig};
use super::{summarize_names, Graph, NodeRef, MAX_PORTS};

impl TopologyConfig {
    /// Builds and validates the graph. Errors are (field path relative to `topology`, message),
    /// e.g. `("k", "a fat-tree needs an even k >= 2, got 5")` or
    /// ``("links[3].b", "unknown node `h9`; nodes are h0..h7, s0")``.
    pub fn build(&self) -> Result<Graph, (String, String)> {
        let g = match self {
            TopologyConfig::SingleSwitch(c) => {
                c.check()?;
                single_switch(c)
            }
            TopologyConfig::LeafSpine(c) => {
                c.check()?;
                leaf_spine(c)
            }
            TopologyConfig::FatTree(c) => {
                c.check()?;
                fat_tree(c)
            }
            TopologyConfig::Explicit(c) => explicit(c)?,
        };
        g.validate().map_err(|m| (String::new(), m))?;
        Ok(g)
    }
}
use std::collections::HashMap;

/// One switch `s0` with hosts `h0..` attached, host `i` on switch port `i`.
pub fn single_switch(config: &SingleSwitch) -> Graph {
    let mut g = Graph::default();
    let s = g.add_switch("s0", 1);
    for i in 0..config.hosts {
        let h = g.add_host(format!("h{i}"));
        g.add_link(h, s, config.link_rate.0, config.link_delay.0);
    }
    g.finalize();
    g
}

/// Leaves `leaf0..` (switches `0..leaves`, tier 1) and spines `spine0..`
/// (switches `leaves..leaves + spines`, tier 2). Leaf `l` has hosts
/// `l * hosts_per_leaf ..` on its ports `0..hosts_per_leaf`, then its spine
/// links, spine by spine, `links_per_spine` parallel links each. A spine's
/// ports go to the leaves in order.
pub fn leaf_spine(config: &LeafSpine) -> Graph {
    let mut g = Graph::default();
    let leaves: Vec<NodeRef> = (0..config.leaves)
        .map(|l| g.add_switch(format!("leaf{l}"), 1))
        .collect();
    let spines: Vec<NodeRef> = (0..config.spines)
        .map(|s| g.add_switch(format!("spine{s}"), 2))
        .collect();
    for &leaf in &leaves {
        for _ in 0..config.hosts_per_leaf {
            let h = g.add_host(format!("h{}", g.n_hosts()));
            g.add_link(h, leaf, config.host_rate.0, config.host_delay.0);
        }
    }
    for &leaf in &leaves {
        for &spine in &spines {
            for _ in 0..config.links_per_spine {
                g.add_link(leaf, spine, config.fabric_rate.0, config.fabric_delay.0);
            }
        }
    }
    g.finalize();
    g
}

/// A k-ary fat-tree with the standard (Al-Fares et al.) wiring. With `h = k/2`:
///
/// * edge switch `j` of pod `p` is `edge{p}_{j}`, switch `p*h + j` (tier 1), with
///   hosts `(p*h + j)*h ..` on its ports `0..h`, then aggregation `0..h` of its
///   pod on ports `h..k`;
/// * aggregation switch `j` of pod `p` is `agg{p}_{j}`, switch `k*h + p*h + j`
///   (tier 2), with the pod's edges on ports `0..h` and core switches
///   `j*h .. j*h + h - 1` on ports `h..k`;
/// * core switch `i` is `core{i}`, switch `2*k*h + i` (tier 3), with one port
///   per pod, in pod order.
pub fn fat_tree(config: &FatTree) -> Graph {
    let k = config.k;
    let h = k / 2;
    let mut g = Graph::default();
    let edge = |p: u32, j: u32| NodeRef::Switch(p * h + j);
    let agg = |p: u32, j: u32| NodeRef::Switch(k * h + p * h + j);
    let core = |i: u32| NodeRef::Switch(2 * k * h + i);
    for p in 0..k {
        for j in 0..h {
            g.add_switch(format!("edge{p}_{j}"), 1);
        }
    }
    for p in 0..k {
        for j in 0..h {
            g.add_switch(format!("agg{p}_{j}"), 2);
        }
    }
    for i in 0..h * h {
        g.add_switch(format!("core{i}"), 3);
    }
    for p in 0..k {
        for j in 0..h {
            for _ in 0..h {
                let host = g.add_host(format!("h{}", g.n_hosts()));
                g.add_link(host, edge(p, j), config.host_rate.0, config.delay.0);
            }
        }
    }
    for p in 0..k {
        for j in 0..h {
            for a in 0..h {
                g.add_link(edge(p, j), agg(p, a), config.fabric_rate.0, config.delay.0);
            }
        }
    }
    for p in 0..k {
        for a in 0..h {
            for i in 0..h {
                g.add_link(
                    agg(p, a),
                    core(a * h + i),
                    config.core_rate(),
                    config.delay.0,
                );
            }
        }
    }
    g.finalize();
    g
}

/// Name -> (node, the field that defines it), for an explicit topology.
type Names<'a> = HashMap<&'a str, (NodeRef, String)>;

/// An explicit topology's error: the field path and the message.
fn err<T>(field: String, msg: String) -> Result<T, (String, String)> {
    Err((field, msg))
}

/// Builds an explicit topology: hosts and switches are numbered in the order
/// listed, links and ports in the order `links` lists them. Errors are
/// (field path, message), e.g. `("links[2].a", "unknown node ...")`.
pub fn explicit(config: &Explicit) -> Result<Graph, (String, String)> {
    let mut g = Graph::default();
    let by_name = explicit_nodes(config, &mut g)?;
    let mut host_link = explicit_links(config, &mut g, &by_name)?;
    explicit_shared_nics(config, &mut g, &by_name, &mut host_link)?;
    if let Some(h) = host_link.iter().position(|l| l.is_none()) {
        let name = &config.hosts[h];
        let switch = config.switches.first().map_or("s0", |s| s.name.as_str());
        return err(
            format!("hosts[{h}]"),
            format!(
                "host `{name}` has no link; add one to `links`, \
                 e.g. {{ a = \"{name}\", b = \"{switch}\", rate = \"100Gbps\" }}"
            ),
        );
    }
    g.finalize();
    for s in 0..g.n_switches() as u32 {
        let n = g.ports(NodeRef::Switch(s)).len();
        if n > MAX_PORTS {
            return err(
                "links".into(),
                format!(
                    "switch `{}` has {n} links; at most {MAX_PORTS} are supported",
                    g.switch_names[s as usize]
                ),
            );
        }
    }
    if let Some(node) = g.unreachable_node() {
        return err("links".into(), g.unreachable_message(node));
    }
    Ok(g)
}

/// The hosts, then the switches, of an explicit topology, added to `graph`:
/// names non-empty and unique, switch tiers from 1.
fn explicit_nodes<'a>(
    config: &'a Explicit,
    graph: &mut Graph,
) -> Result<Names<'a>, (String, String)> {
    let mut by_name: Names = HashMap::new();
    if config.hosts.is_empty() {
        return err(
            "hosts".into(),
            "an explicit topology needs at least one host, e.g. hosts = [\"h0\", \"h1\"]".into(),
        );
    }
    let nodes = config
        .hosts
        .iter()
        .map(|h| (h.as_str(), 0u8, "hosts"))
        .chain(
            config
                .switches
                .iter()
                .map(|s| (s.name.as_str(), s.tier, "switches")),
        );
    let mut index = [0usize; 2];
    for (name, tier, list) in nodes {
        let i = &mut index[(list == "switches") as usize];
        let field = format!("{list}[{i}]");
        *i += 1;
        if name.trim().is_empty() {
            return err(
                field,
                "the name is empty; give every node a unique name".into(),
            );
        }
        if let Some((_, prev)) = by_name.get(name) {
            return err(
                field,
                format!(
                    "duplicate name `{name}`, already used by {prev}; \
                     names must be unique across hosts and switches"
                ),
            );
        }
        let node = if list == "hosts" {
            graph.add_host(name)
        } else {
            if tier == 0 {
                return err(
                    format!("{field}.tier"),
                    "tier 0 is not allowed; \
                     use 1 (leaf/ToR), 2 (spine/aggregation), 3 (core) or higher"
                        .into(),
                );
            }
            graph.add_switch(name, tier)
        };
        by_name.insert(name, (node, field));
    }
    Ok(by_name)
}

/// The links of an explicit topology, added to `graph`: both ends known and
/// distinct, a host on at most one, a positive rate. Returns each host's link.
fn explicit_links(
    config: &Explicit,
    graph: &mut Graph,
    by_name: &Names,
) -> Result<Vec<Option<usize>>, (String, String)> {
    let mut host_link: Vec<Option<usize>> = vec![None; config.hosts.len()];
    for (l, link) in config.links.iter().enumerate() {
        let mut ends = [NodeRef::Host(0); 2];
        for (side, end) in [&link.a, &link.b].into_iter().enumerate() {
            let Some((node, _)) = by_name.get(end.as_str()) else {
                let all = config
                    .hosts
                    .iter()
                    .map(|h| h.as_str())
                    .chain(config.switches.iter().map(|s| s.name.as_str()));
                return err(
                    format!("links[{l}].{}", ["a", "b"][side]),
                    format!("unknown node `{end}`; nodes are {}", summarize_names(all)),
                );
            };
            ends[side] = *node;
        }
        if ends[0] == ends[1] {
            return err(
                format!("links[{l}]"),
                format!(
                    "the link connects `{}` to itself; connect two different nodes",
                    link.a
                ),
            );
        }
        for (side, end) in ends.into_iter().enumerate() {
            if let NodeRef::Host(h) = end {
                if let Some(prev) = host_link[h as usize] {
                    return err(
                        format!("links[{l}].{}", ["a", "b"][side]),
                        format!(
                            "host `{}` already has a link (links[{prev}]); a host has exactly one link, to its \
                             switch (hosts do not forward packets)",
                            config.hosts[h as usize]
                        ),
                    );
                }
                host_link[h as usize] = Some(l);
            }
        }
        if link.rate.0 .0 == 0 {
            return err(
                format!("links[{l}].rate"),
                "the rate is zero; it must be positive, e.g. \"100Gbps\"".into(),
            );
        }
        graph.add_link(ends[0], ends[1], link.rate.0, link.delay.0);
    }
    Ok(host_link)
}

/// `shared_nic`: each host without a link of its own takes the link (and NIC)
/// of a host that has one.
fn explicit_shared_nics(
    config: &Explicit,
    graph: &mut Graph,
    by_name: &Names,
    host_link: &mut [Option<usize>],
) -> Result<(), (String, String)> {
    for (host, nic) in &config.shared_nic {
        let field = format!("shared_nic.{host}");
        let index = |name: &str| match by_name.get(name) {
            Some((NodeRef::Host(h), _)) => Some(*h as usize),
            _ => None,
        };
        let (Some(h), Some(owner)) = (index(host), index(nic)) else {
            let unknown = if index(host).is_none() { host } else { nic };
            return err(
                field,
                format!(
                    "unknown host `{unknown}`; hosts are {}",
                    summarize_names(config.hosts.iter().map(|h| h.as_str()))
                ),
            );
        };
        if host_link[h].is_some() {
            return err(
                field,
                format!("host `{host}` has a link of its own; remove its link or this entry"),
            );
        }
        if host_link[owner].is_none() {
            return err(
                field,
                format!("host `{nic}` has no link: name a host that has one"),
            );
        }
        graph.shared_nics.push((h as u32, owner as u32));
        host_link[h] = host_link[owner];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_types::{RateValue, TimeValue};
    use crate::topology::config::{ExplicitLink, ExplicitSwitch};
    use crate::units::{Rate, US};

    fn rate(graph: u64) -> RateValue {
        RateValue(Rate::gbps(graph))
    }

    fn fat(k: u32) -> Graph {
        fat_tree(&FatTree {
            k,
            host_rate: rate(100),
            fabric_rate: rate(100),
            core_rate: None,
            delay: TimeValue(US),
        })
    }

    fn leaf_spine_graph(
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        links_per_spine: u32,
    ) -> Graph {
        leaf_spine(&LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            host_rate: rate(100),
            fabric_rate: rate(400),
            host_delay: TimeValue(US),
            fabric_delay: TimeValue(US),
            links_per_spine,
        })
    }

    /// Host `i`'s link is `links[i]`, from the host (end `a`), and it is the host's port 0.
    fn assert_host_links_first(graph: &Graph) {
        for h in 0..graph.n_hosts() as u32 {
            assert!(matches!(graph.links[h as usize].a, NodeRef::Host(x) if x == h));
            assert_eq!(graph.ports(NodeRef::Host(h)), &[(h, 0)]);
        }
        graph.validate().unwrap();
    }

    #[test]
    fn single_switch_counts() {
        let g = single_switch(&SingleSwitch {
            hosts: 5,
            link_rate: rate(10),
            link_delay: TimeValue(US),
        });
        assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (5, 1, 5));
        assert_eq!(g.switch_names, vec!["s0"]);
        assert_eq!(g.host_names[4], "h4");
        assert_eq!(g.peer(NodeRef::Switch(0), 3), (NodeRef::Host(3), 0));
        assert_host_links_first(&g);
    }

    #[test]
    fn leaf_spine_counts_and_wiring() {
        let g = leaf_spine_graph(8, 4, 16, 1);
        assert_eq!(
            (g.n_hosts(), g.n_switches(), g.links.len()),
            (128, 12, 128 + 32)
        );
        assert_eq!(g.switch_names[8], "spine0");
        assert_eq!(g.switch_tier, [vec![1; 8], vec![2; 4]].concat());
        assert_host_links_first(&g);
        // host 17 is the second host of leaf1
        assert_eq!(g.peer(NodeRef::Host(17), 0), (NodeRef::Switch(1), 1));
        // leaf1's up-links follow its 16 host ports; port 16 goes to spine0, where it is port 1
        assert_eq!(g.peer(NodeRef::Switch(1), 16), (NodeRef::Switch(8), 1));

        let g = leaf_spine_graph(3, 2, 4, 2);
        assert_eq!(
            (g.n_hosts(), g.n_switches(), g.links.len()),
            (12, 5, 12 + 3 * 2 * 2)
        );
        assert_eq!(g.ports(NodeRef::Switch(0)).len(), 4 + 2 * 2);
        assert_eq!(g.ports(NodeRef::Switch(3)).len(), 3 * 2);
        // leaf2's ports 6 and 7 are the two parallel links to spine1 (its ports 4 and 5)
        assert_eq!(g.peer(NodeRef::Switch(2), 6), (NodeRef::Switch(4), 4));
        assert_eq!(g.peer(NodeRef::Switch(2), 7), (NodeRef::Switch(4), 5));
    }

    #[test]
    fn fat_tree_counts_and_wiring() {
        let g = fat(4);
        assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (16, 20, 48));
        assert_host_links_first(&g);
        assert_eq!(g.switch_names[3], "edge1_1");
        assert_eq!(g.switch_names[8], "agg0_0");
        assert_eq!(g.switch_names[19], "core3");
        assert_eq!(g.switch_tier.iter().filter(|&&t| t == 3).count(), 4);
        // every switch has k ports except cores, which have one per pod (also k)
        for s in 0..20 {
            assert_eq!(
                g.ports(NodeRef::Switch(s)).len(),
                4,
                "{}",
                g.switch_names[s as usize]
            );
        }
        // hosts 2 and 3 are on edge0_1 (switch 1), hosts 4 and 5 on edge1_0 (switch 2)
        assert_eq!(g.peer(NodeRef::Host(3), 0), (NodeRef::Switch(1), 1));
        assert_eq!(g.peer(NodeRef::Host(4), 0), (NodeRef::Switch(2), 0));
        assert_eq!(g.switch_names[2], "edge1_0");
        // agg1_1 (switch 11) connects to core 2 and 3
        assert_eq!(g.peer(NodeRef::Switch(11), 2).0, NodeRef::Switch(18));
        assert_eq!(g.peer(NodeRef::Switch(11), 3).0, NodeRef::Switch(19));
        // core0 has one port per pod, each to agg{p}_0
        for p in 0..4u32 {
            assert_eq!(
                g.peer(NodeRef::Switch(16), p as usize).0,
                NodeRef::Switch(8 + 2 * p)
            );
        }

        let g = fat(8);
        assert_eq!(
            (g.n_hosts(), g.n_switches(), g.links.len()),
            (128, 80, 128 * 3)
        );
        assert_host_links_first(&g);
        let g = fat(2);
        assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (2, 5, 6));
        g.validate().unwrap();
    }

    fn link(a: &str, b: &str) -> ExplicitLink {
        ExplicitLink {
            a: a.into(),
            b: b.into(),
            rate: rate(10),
            delay: TimeValue(US),
        }
    }

    /// h0, h1 on s0; h2 on s1; s0 - s1.
    fn small() -> Explicit {
        Explicit {
            hosts: vec!["h0".into(), "h1".into(), "h2".into()],
            switches: vec![
                "s0".into(),
                ExplicitSwitch {
                    name: "s1".into(),
                    tier: 2,
                },
            ],
            links: vec![
                link("h0", "s0"),
                link("h1", "s0"),
                link("s0", "s1"),
                link("s1", "h2"),
            ],
            shared_nic: Default::default(),
        }
    }

    #[test]
    fn explicit_hosts_may_share_a_nic() {
        let mut c = small();
        c.hosts.push("h3".into());
        c.shared_nic.insert("h3".into(), "h2".into());
        let g = explicit(&c).unwrap();
        g.validate().unwrap();
        assert_eq!(g.nic_hosts(), [0, 1, 2, 2]);
        c.shared_nic.insert("h3".into(), "h9".into());
        let (field, msg) = explicit_err(&c);
        assert_eq!(field, "shared_nic.h3");
        assert!(msg.contains("unknown host `h9`"), "{msg}");
        c.shared_nic.insert("h3".into(), "h1".into());
        c.shared_nic.insert("h0".into(), "h1".into());
        let (field, msg) = explicit_err(&c);
        assert_eq!(field, "shared_nic.h0");
        assert!(msg.contains("has a link of its own"), "{msg}");
    }

    fn explicit_err(config: &Explicit) -> (String, String) {
        explicit(config).unwrap_err()
    }

    #[test]
    fn explicit_builds() {
        let g = explicit(&small()).unwrap();
        assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (3, 2, 4));
        assert_eq!(g.peer(NodeRef::Host(2), 0), (NodeRef::Switch(1), 1));
        g.validate().unwrap();
        // Two hosts linked directly, no switch: allowed.
        let direct = Explicit {
            hosts: vec!["a".into(), "b".into()],
            switches: vec![],
            links: vec![link("b", "a")],
            shared_nic: Default::default(),
        };
        explicit(&direct).unwrap().validate().unwrap();
    }

    #[test]
    fn explicit_unknown_node() {
        let mut c = small();
        c.links[3].b = "h9".into();
        assert_eq!(
            explicit_err(&c),
            (
                "links[3].b".to_string(),
                "unknown node `h9`; nodes are h0..h2, s0, s1".to_string()
            )
        );
        // the example from the documentation
        let mut c = Explicit {
            hosts: (0..8).map(|i| format!("h{i}")).collect(),
            switches: vec!["s0".into()],
            links: (0..8).map(|i| link(&format!("h{i}"), "s0")).collect(),
            shared_nic: Default::default(),
        };
        c.links[3].b = "h9".into();
        assert_eq!(
            explicit_err(&c).1,
            "unknown node `h9`; nodes are h0..h7, s0"
        );
    }

    #[test]
    fn explicit_duplicate_name() {
        let mut c = small();
        c.switches[1].name = "h1".into();
        assert_eq!(
            explicit_err(&c),
            (
                "switches[1]".to_string(),
                "duplicate name `h1`, already used by hosts[1]; names must be unique across hosts and switches"
                    .to_string()
            )
        );
        let mut c = small();
        c.hosts[2] = "h0".into();
        assert_eq!(explicit_err(&c).0, "hosts[2]");
    }

    #[test]
    fn explicit_host_with_two_links() {
        let mut c = small();
        c.links.push(link("s1", "h1"));
        assert_eq!(
            explicit_err(&c),
            (
                "links[4].b".to_string(),
                "host `h1` already has a link (links[1]); a host has exactly one link, to its switch (hosts do not \
                 forward packets)"
                    .to_string()
            )
        );
    }

    #[test]
    fn explicit_host_without_link() {
        let mut c = small();
        c.links.remove(1);
        assert_eq!(
            explicit_err(&c),
            (
                "hosts[1]".to_string(),
                "host `h1` has no link; add one to `links`, e.g. { a = \"h1\", b = \"s0\", rate = \"100Gbps\" }"
                    .to_string()
            )
        );
    }

    #[test]
    fn explicit_disconnected() {
        let mut c = small();
        c.links.remove(2); // s0 - s1
        assert_eq!(
            explicit_err(&c),
            (
                "links".to_string(),
                "the network is disconnected: host `h2` cannot reach host `h0`; add links so that every host can \
                 reach every other host through switches"
                    .to_string()
            )
        );
        let mut c = small();
        c.switches.push("lonely".into());
        let (field, msg) = explicit_err(&c);
        assert_eq!(field, "links");
        assert!(
            msg.contains("switch `lonely` cannot reach host `h0`"),
            "{msg}"
        );
    }

    #[test]
    fn explicit_other_errors() {
        let mut c = small();
        c.links[2].b = "s0".into();
        assert_eq!(explicit_err(&c).0, "links[2]");
        assert!(explicit_err(&c).1.contains("connects `s0` to itself"));
        let mut c = small();
        c.switches[1].tier = 0;
        assert_eq!(explicit_err(&c).0, "switches[1].tier");
        let mut c = small();
        c.hosts.clear();
        assert_eq!(explicit_err(&c).0, "hosts");
        let mut c = small();
        c.links[0].rate = RateValue(Rate(0));
        assert_eq!(explicit_err(&c).0, "links[0].rate");
    }
}

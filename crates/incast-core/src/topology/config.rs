//! The `[topology]` table of a scenario file.
//!
//! `kind` selects the shape; the other keys depend on it:
//!
//! ```toml
//! [topology]
//! kind = "single_switch"
//! hosts = 16
//! link_rate = "100Gbps"
//! link_delay = "1us"          # optional, 1us by default
//! ```
//!
//! ```toml
//! [topology]
//! kind = "leaf_spine"
//! leaves = 8
//! spines = 4
//! hosts_per_leaf = 16
//! host_rate = "100Gbps"
//! fabric_rate = "400Gbps"
//! links_per_spine = 1         # optional: parallel links between each leaf and spine
//! ```
//!
//! ```toml
//! [topology]
//! kind = "fat_tree"
//! k = 8
//! host_rate = "100Gbps"
//! fabric_rate = "100Gbps"
//! core_rate = "100Gbps"       # optional, fabric_rate by default
//! ```
//!
//! ```toml
//! [topology]
//! kind = "explicit"
//! hosts = ["a", "b", "c"]
//! switches = ["tor", { name = "spine", tier = 2 }]
//! links = [
//!     { a = "a", b = "tor", rate = "100Gbps", delay = "1us" },
//!     { a = "b", b = "tor", rate = "100Gbps" },
//!     { a = "tor", b = "spine", rate = "400Gbps" },
//!     { a = "c", b = "spine", rate = "100Gbps" },
//! ]
//! ```

use super::MAX_PORTS;
use crate::config_types::{RateValue, TimeValue};
use crate::units::{Rate, US};
use schemars::gen::SchemaGenerator;
use schemars::schema::Schema;
use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The largest number of hosts a topology may have.
pub const MAX_HOSTS: u64 = 1 << 20;
/// The largest number of links a topology may have.
pub const MAX_LINKS: u64 = 1 << 24;

fn default_delay() -> TimeValue {
    TimeValue(US)
}

fn default_one() -> u32 {
    1
}

fn default_tier() -> u8 {
    1
}

/// The network: which shape (`kind`) and its sizes and rates.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologyConfig {
    /// One switch with `hosts` hosts.
    SingleSwitch(SingleSwitch),
    /// A two-tier Clos: `leaves` leaf (ToR) switches with `hosts_per_leaf` hosts each, every leaf linked to every spine.
    LeafSpine(LeafSpine),
    /// A three-tier k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches,
    /// (k/2)^2 core switches and k^3/4 hosts.
    FatTree(FatTree),
    /// Any graph, given as lists of hosts, switches and links.
    Explicit(Explicit),
}

/// One switch with every host attached to it.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SingleSwitch {
    /// Number of hosts (named `h0`, `h1`, ...), all attached to the switch `s0`.
    pub hosts: u32,
    /// Rate of every host link, e.g. "100Gbps".
    pub link_rate: RateValue,
    /// One-way propagation delay of every link.
    #[serde(default = "default_delay")]
    pub link_delay: TimeValue,
}

/// A two-tier Clos network (leaf-spine).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeafSpine {
    /// Number of leaf (top-of-rack) switches, named `leaf0`, `leaf1`, ...
    pub leaves: u32,
    /// Number of spine switches, named `spine0`, `spine1`, ...; every leaf is linked to every spine.
    pub spines: u32,
    /// Hosts attached to each leaf. Hosts are numbered rack by rack: leaf0 has hosts 0..hosts_per_leaf-1.
    pub hosts_per_leaf: u32,
    /// Rate of each host-leaf link.
    pub host_rate: RateValue,
    /// Rate of each leaf-spine link. Oversubscription is hosts_per_leaf x host_rate : spines x links_per_spine x fabric_rate.
    pub fabric_rate: RateValue,
    /// One-way propagation delay of each host-leaf link.
    #[serde(default = "default_delay")]
    pub host_delay: TimeValue,
    /// One-way propagation delay of each leaf-spine link.
    #[serde(default = "default_delay")]
    pub fabric_delay: TimeValue,
    /// Number of parallel links between each leaf and each spine.
    #[serde(default = "default_one")]
    pub links_per_spine: u32,
}

/// A three-tier k-ary fat-tree.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FatTree {
    /// Switch radix: an even number >= 2. Gives k pods, each with k/2 edge and k/2 aggregation switches
    /// and k^2/4 hosts, plus k^2/4 core switches.
    pub k: u32,
    /// Rate of each host-edge link.
    pub host_rate: RateValue,
    /// Rate of each edge-aggregation link, and of each aggregation-core link unless `core_rate` is given.
    pub fabric_rate: RateValue,
    /// Rate of each aggregation-core link; `fabric_rate` if omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_rate: Option<RateValue>,
    /// One-way propagation delay of every link.
    #[serde(default = "default_delay")]
    pub delay: TimeValue,
}

/// A graph given by name: hosts, switches and the links between them.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Explicit {
    /// Host names, in host-number order: the first is host 0. Names must be unique across hosts and switches.
    pub hosts: Vec<String>,
    /// Switches, in switch-number order: a name, or a table `{ name = "spine0", tier = 2 }`.
    #[serde(default)]
    pub switches: Vec<ExplicitSwitch>,
    /// Full-duplex links between named nodes. Every host needs exactly one link (or a `shared_nic`); a node
    /// numbers its ports in the order its links appear here.
    pub links: Vec<ExplicitLink>,
    /// Multi-host NICs: host name -> the host whose NIC port it shares, e.g. `{ slot1 = "slot0" }`
    /// (Yosemite's compute slots behind one NIC). Such a host has no link of its own.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub shared_nic: std::collections::BTreeMap<String, String>,
}

/// A switch of an explicit topology. In a scenario file, either its name (tier 1)
/// or a table `{ name = "spine0", tier = 2 }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplicitSwitch {
    /// Unique name.
    pub name: String,
    /// 1 = leaf/ToR/edge, 2 = spine/aggregation, 3 = core.
    pub tier: u8,
}

impl From<&str> for ExplicitSwitch {
    fn from(name: &str) -> Self {
        ExplicitSwitch {
            name: name.to_string(),
            tier: 1,
        }
    }
}

/// A link of an explicit topology.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplicitLink {
    /// Name of one end.
    pub a: String,
    /// Name of the other end.
    pub b: String,
    /// Rate in each direction.
    pub rate: RateValue,
    /// One-way propagation delay.
    #[serde(default = "default_delay")]
    pub delay: TimeValue,
}

impl<'de> Deserialize<'de> for ExplicitSwitch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ExplicitSwitch;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a switch name, or a table such as { name = \"spine0\", tier = 2 }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ExplicitSwitch, E> {
                Ok(ExplicitSwitch::from(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ExplicitSwitch, A::Error> {
                const FIELDS: &[&str] = &["name", "tier"];
                let (mut name, mut tier) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "name" if name.is_some() => return Err(de::Error::duplicate_field("name")),
                        "name" => name = Some(map.next_value::<String>()?),
                        "tier" if tier.is_some() => return Err(de::Error::duplicate_field("tier")),
                        "tier" => tier = Some(map.next_value::<u8>()?),
                        other => return Err(de::Error::unknown_field(other, FIELDS)),
                    }
                }
                let name = name.ok_or_else(|| de::Error::missing_field("name"))?;
                Ok(ExplicitSwitch {
                    name,
                    tier: tier.unwrap_or_else(default_tier),
                })
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for ExplicitSwitch {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.tier == default_tier() {
            s.serialize_str(&self.name)
        } else {
            let mut st = s.serialize_struct("ExplicitSwitch", 2)?;
            st.serialize_field("name", &self.name)?;
            st.serialize_field("tier", &self.tier)?;
            st.end()
        }
    }
}

/// The schema of [`ExplicitSwitch`] (only used to generate it).
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
enum ExplicitSwitchSchema {
    /// The switch's name; it is a tier-1 (leaf/ToR) switch.
    Name(String),
    /// A switch with its tier.
    Table {
        /// Unique name.
        name: String,
        /// 1 = leaf/ToR/edge, 2 = spine/aggregation, 3 = core.
        #[serde(default = "default_tier")]
        tier: u8,
    },
}

impl JsonSchema for ExplicitSwitch {
    fn schema_name() -> String {
        "ExplicitSwitch".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        ExplicitSwitchSchema::json_schema(g)
    }
}

type BuildError = (String, String);

fn err<T>(field: &str, msg: impl Into<String>) -> Result<T, BuildError> {
    Err((field.to_string(), msg.into()))
}

fn check_rate(field: &str, r: RateValue) -> Result<(), BuildError> {
    if r.0 .0 == 0 {
        return err(
            field,
            "the rate is zero; it must be positive, e.g. \"100Gbps\"",
        );
    }
    Ok(())
}

fn check_at_least_one(field: &str, what: &str, v: u32) -> Result<(), BuildError> {
    if v == 0 {
        return err(field, format!("{what} needs {field} >= 1, got 0"));
    }
    Ok(())
}

fn check_size(field: &str, hosts: u64, links: u64) -> Result<(), BuildError> {
    if hosts > MAX_HOSTS {
        return err(
            field,
            format!("this gives {hosts} hosts; at most {MAX_HOSTS} are supported"),
        );
    }
    if links > MAX_LINKS {
        return err(
            field,
            format!("this gives {links} links; at most {MAX_LINKS} are supported"),
        );
    }
    Ok(())
}

fn check_ports(field: &str, what: &str, ports: u64) -> Result<(), BuildError> {
    if ports > MAX_PORTS as u64 {
        return err(
            field,
            format!("each {what} would have {ports} ports; at most {MAX_PORTS} are supported"),
        );
    }
    Ok(())
}

impl SingleSwitch {
    pub(super) fn check(&self) -> Result<(), BuildError> {
        check_at_least_one("hosts", "a single-switch topology", self.hosts)?;
        check_ports("hosts", "switch", self.hosts as u64)?;
        check_rate("link_rate", self.link_rate)
    }
}

impl LeafSpine {
    pub(super) fn check(&self) -> Result<(), BuildError> {
        let what = "a leaf-spine topology";
        check_at_least_one("leaves", what, self.leaves)?;
        check_at_least_one("spines", what, self.spines)?;
        check_at_least_one("hosts_per_leaf", what, self.hosts_per_leaf)?;
        if self.links_per_spine == 0 {
            return err("links_per_spine", "links_per_spine must be >= 1, got 0");
        }
        let (leaves, spines, hpl, lps) = (
            self.leaves as u64,
            self.spines as u64,
            self.hosts_per_leaf as u64,
            self.links_per_spine as u64,
        );
        check_size(
            "hosts_per_leaf",
            leaves * hpl,
            // A product of three u32s can overflow a u64: saturate.
            (leaves * hpl).saturating_add(leaves.saturating_mul(spines).saturating_mul(lps)),
        )?;
        check_ports("hosts_per_leaf", "leaf", hpl + spines.saturating_mul(lps))?;
        check_ports("leaves", "spine", leaves * lps)?;
        check_rate("host_rate", self.host_rate)?;
        check_rate("fabric_rate", self.fabric_rate)
    }

    /// Host bandwidth into a leaf divided by its up-link bandwidth.
    pub fn oversubscription(&self) -> f64 {
        let down = self.hosts_per_leaf as f64 * self.host_rate.0 .0 as f64;
        let up = self.spines as f64 * self.links_per_spine as f64 * self.fabric_rate.0 .0 as f64;
        down / up
    }
}

impl FatTree {
    pub(super) fn check(&self) -> Result<(), BuildError> {
        if self.k < 2 || self.k % 2 != 0 {
            return err(
                "k",
                format!("a fat-tree needs an even k >= 2, got {}", self.k),
            );
        }
        // In u128: k^3 of a u32 k overflows a u64.
        let hosts = (self.k as u128).pow(3) / 4;
        if hosts > MAX_HOSTS as u128 {
            return err(
                "k",
                format!(
                    "k = {} gives {hosts} hosts; at most {MAX_HOSTS} are supported",
                    self.k
                ),
            );
        }
        check_rate("host_rate", self.host_rate)?;
        check_rate("fabric_rate", self.fabric_rate)?;
        if let Some(r) = self.core_rate {
            check_rate("core_rate", r)?;
        }
        Ok(())
    }

    /// Rate of the aggregation-core links.
    pub fn core_rate(&self) -> Rate {
        self.core_rate.unwrap_or(self.fabric_rate).0
    }
}

impl TopologyConfig {
    /// The number of hosts the topology has, without building it.
    pub fn n_hosts(&self) -> u64 {
        match self {
            TopologyConfig::SingleSwitch(c) => c.hosts as u64,
            TopologyConfig::LeafSpine(c) => c.leaves as u64 * c.hosts_per_leaf as u64,
            TopologyConfig::FatTree(c) => ((c.k as u128).pow(3) / 4).min(u64::MAX as u128) as u64,
            TopologyConfig::Explicit(c) => c.hosts.len() as u64,
        }
    }

    /// One line, e.g. "leaf-spine: 8 leaves x 16 hosts, 4 spines, 100Gbps hosts / 400Gbps fabric (oversubscription 1:1)".
    pub fn describe(&self) -> String {
        match self {
            TopologyConfig::SingleSwitch(c) => format!(
                "single switch: {}, {} links, {} delay",
                plural(c.hosts as u64, "host", "hosts"),
                c.link_rate.0,
                c.link_delay
            ),
            TopologyConfig::LeafSpine(c) => {
                let parallel = if c.links_per_spine > 1 {
                    format!(" x {} parallel links", c.links_per_spine)
                } else {
                    String::new()
                };
                format!(
                    "leaf-spine: {} x {}, {}{parallel}, {} hosts / {} fabric (oversubscription {})",
                    plural(c.leaves as u64, "leaf", "leaves"),
                    plural(c.hosts_per_leaf as u64, "host", "hosts"),
                    plural(c.spines as u64, "spine", "spines"),
                    c.host_rate.0,
                    c.fabric_rate.0,
                    ratio(c.oversubscription())
                )
            }
            TopologyConfig::FatTree(c) => {
                let k = c.k as u64;
                let core = c.core_rate();
                let edge_ratio = c.host_rate.0 .0 as f64 / c.fabric_rate.0 .0 as f64;
                let agg_ratio = c.fabric_rate.0 .0 as f64 / core.0 as f64;
                let (rates, over) = if core == c.fabric_rate.0 {
                    (String::new(), ratio(edge_ratio))
                } else {
                    (
                        format!(" / {core} core"),
                        format!(
                            "{} at edge, {} at aggregation",
                            ratio(edge_ratio),
                            ratio(agg_ratio)
                        ),
                    )
                };
                format!(
                    "fat-tree: k={k}, {} hosts, {} switches ({} edge, {} aggregation, {} core), {} hosts / {} \
                     fabric{rates} (oversubscription {over})",
                    k * k * k / 4,
                    5 * k * k / 4,
                    k * k / 2,
                    k * k / 2,
                    k * k / 4,
                    c.host_rate.0,
                    c.fabric_rate.0
                )
            }
            TopologyConfig::Explicit(c) => format!(
                "explicit: {}, {}, {}",
                plural(c.hosts.len() as u64, "host", "hosts"),
                plural(c.switches.len() as u64, "switch", "switches"),
                plural(c.links.len() as u64, "link", "links")
            ),
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// An oversubscription ratio `r` as "r:1", with at most two decimals: "1:1", "1.5:1", "0.25:1".
fn ratio(r: f64) -> String {
    let s = format!("{r:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}:1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Graph, NodeRef, Routes};

    fn parse(text: &str) -> Result<TopologyConfig, String> {
        toml::from_str::<TopologyConfig>(text).map_err(|e| e.to_string())
    }

    fn build(text: &str) -> Graph {
        let cfg = parse(text).unwrap_or_else(|e| panic!("{e}"));
        let g = cfg.build().unwrap_or_else(|e| panic!("{e:?}"));
        // Serializing and parsing again gives the same configuration.
        let again = toml::to_string(&cfg).unwrap();
        assert_eq!(parse(&again).unwrap(), cfg, "{again}");
        g
    }

    #[test]
    fn single_switch_from_toml() {
        let g = build("kind = \"single_switch\"\nhosts = 4\nlink_rate = \"10Gbps\"");
        assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (4, 1, 4));
        assert_eq!(g.links[0].rate, Rate::gbps(10));
        assert_eq!(g.links[0].delay, US); // the default
        let cfg = parse(
            "kind = \"single_switch\"\nhosts = 4\nlink_rate = \"10Gbps\"\nlink_delay = \"500ns\"",
        )
        .unwrap();
        assert_eq!(
            cfg.describe(),
            "single switch: 4 hosts, 10Gbps links, 500ns delay"
        );
        assert_eq!(cfg.n_hosts(), 4);
    }

    #[test]
    fn leaf_spine_from_toml() {
        let text = r#"
            kind = "leaf_spine"
            leaves = 8
            spines = 4
            hosts_per_leaf = 16
            host_rate = "100Gbps"
            fabric_rate = "400Gbps"
            fabric_delay = "2us"
        "#;
        let g = build(text);
        assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (128, 12, 160));
        assert_eq!(g.links[159].delay, 2 * US);
        assert_eq!(
            parse(text).unwrap().describe(),
            "leaf-spine: 8 leaves x 16 hosts, 4 spines, 100Gbps hosts / 400Gbps fabric (oversubscription 1:1)"
        );
        let over = parse(
            "kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 24\nhost_rate = \"25Gbps\"\n\
             fabric_rate = \"100Gbps\"\nlinks_per_spine = 2",
        )
        .unwrap();
        assert_eq!(
            over.describe(),
            "leaf-spine: 2 leaves x 24 hosts, 2 spines x 2 parallel links, 25Gbps hosts / 100Gbps fabric \
             (oversubscription 1.5:1)"
        );
        assert_eq!(over.build().unwrap().links.len(), 48 + 8);
    }

    #[test]
    fn fat_tree_from_toml() {
        let text = "kind = \"fat_tree\"\nk = 4\nhost_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"";
        let g = build(text);
        assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (16, 20, 48));
        assert_eq!(
            parse(text).unwrap().describe(),
            "fat-tree: k=4, 16 hosts, 20 switches (8 edge, 8 aggregation, 4 core), 100Gbps hosts / 100Gbps fabric \
             (oversubscription 1:1)"
        );
        let cfg = parse(&format!("{text}\ncore_rate = \"50Gbps\"")).unwrap();
        let g = cfg.build().unwrap();
        assert_eq!(g.links[47].rate, Rate::gbps(50));
        assert!(cfg
            .describe()
            .ends_with("/ 50Gbps core (oversubscription 1:1 at edge, 2:1 at aggregation)"));
    }

    const EXPLICIT: &str = r#"
        kind = "explicit"
        hosts = ["a", "b", "c"]
        switches = ["tor", { name = "spine", tier = 2 }]
        links = [
            { a = "a", b = "tor", rate = "100Gbps", delay = "2us" },
            { a = "b", b = "tor", rate = "100Gbps" },
            { a = "tor", b = "spine", rate = "400Gbps" },
            { a = "c", b = "spine", rate = "100Gbps" },
        ]
    "#;

    #[test]
    fn explicit_from_toml() {
        let g = build(EXPLICIT);
        assert_eq!((g.n_hosts(), g.n_switches(), g.links.len()), (3, 2, 4));
        assert_eq!(g.switch_tier, vec![1, 2]);
        assert_eq!((g.links[0].delay, g.links[1].delay), (2 * US, US));
        assert_eq!(g.peer(NodeRef::Host(2), 0), (NodeRef::Switch(1), 1));
        let r = Routes::compute(&g).unwrap();
        assert_eq!(r.hops(0, 2), 3);
        assert_eq!(
            parse(EXPLICIT).unwrap().describe(),
            "explicit: 3 hosts, 2 switches, 4 links"
        );
    }

    #[test]
    fn unknown_keys_and_kinds_are_rejected() {
        let e = parse("kind = \"single_switch\"\nhostz = 4\nlink_rate = \"10Gbps\"").unwrap_err();
        assert!(e.contains("unknown field `hostz`"), "{e}");
        assert!(
            e.contains("expected one of `hosts`, `link_rate`, `link_delay`"),
            "{e}"
        );
        let ft = "kind = \"fat_tree\"\nk = 4\nhost_rate = \"1G\"\nfabric_rate = \"1G\"";
        let e = parse(&format!("{ft}\ndelays = \"1us\"")).unwrap_err();
        assert!(e.contains("unknown field `delays`"), "{e}");
        let e = parse("kind = \"fat_tre\"\nk = 4").unwrap_err();
        assert!(e.contains("unknown variant `fat_tre`"), "{e}");
        assert!(
            e.contains("`single_switch`, `leaf_spine`, `fat_tree`, `explicit`"),
            "{e}"
        );
        let e = parse("hosts = 4").unwrap_err();
        assert!(e.contains("missing field `kind`"), "{e}");
        let e = parse("kind = \"single_switch\"\nhosts = 4").unwrap_err();
        assert!(e.contains("missing field `link_rate`"), "{e}");
        let e = parse("kind = \"single_switch\"\nhosts = 4\nlink_rate = 10").unwrap_err();
        assert!(e.contains("has no unit"), "{e}");
        let e = parse(&EXPLICIT.replace("tier = 2", "tier = 2, color = \"red\"")).unwrap_err();
        assert!(
            e.contains("unknown field `color`, expected `name` or `tier`"),
            "{e}"
        );
        let e = parse(&EXPLICIT.replace("delay = \"2us\"", "latency = \"2us\"")).unwrap_err();
        assert!(e.contains("unknown field `latency`"), "{e}");
    }

    #[test]
    fn bad_sizes_name_the_field() {
        let build_err = |text: &str| parse(text).unwrap().build().unwrap_err();
        let ft = "kind = \"fat_tree\"\nhost_rate = \"1G\"\nfabric_rate = \"1G\"\n";
        assert_eq!(
            build_err(&format!("{ft}k = 5")),
            (
                "k".to_string(),
                "a fat-tree needs an even k >= 2, got 5".to_string()
            )
        );
        assert_eq!(build_err(&format!("{ft}k = 0")).0, "k");
        // k^3 overflows a u64 here: still a clear error, and n_hosts saturates.
        let (field, msg) = build_err(&format!("{ft}k = 4000000000"));
        assert_eq!(field, "k");
        assert!(msg.contains("16000000000000000000000000000 hosts"), "{msg}");
        let huge = parse(&format!("{ft}k = 4294967294")).unwrap();
        assert_eq!(huge.n_hosts(), u64::MAX);
        let (field, msg) = build_err(&format!("{ft}k = 200"));
        assert_eq!(
            (field.as_str(), msg.as_str()),
            (
                "k",
                "k = 200 gives 2000000 hosts; at most 1048576 are supported"
            )
        );
        assert_eq!(
            build_err("kind = \"single_switch\"\nhosts = 0\nlink_rate = \"1G\""),
            (
                "hosts".to_string(),
                "a single-switch topology needs hosts >= 1, got 0".to_string()
            )
        );
        let ls = "kind = \"leaf_spine\"\nleaves = 2\nhosts_per_leaf = 2\nhost_rate = \"1G\"\nfabric_rate = \"1G\"\n";
        assert_eq!(build_err(&format!("{ls}spines = 0")).0, "spines");
        assert_eq!(
            build_err(&format!("{ls}spines = 1\nlinks_per_spine = 0")).0,
            "links_per_spine"
        );
        let (field, msg) = build_err(&format!("{ls}spines = 70000"));
        assert_eq!(field, "hosts_per_leaf");
        assert!(msg.contains("each leaf would have 70002 ports"), "{msg}");
        let huge = format!("{ls}spines = 4294967295\nlinks_per_spine = 4294967295")
            .replace("leaves = 2", "leaves = 4294967295");
        let (field, _) = build_err(&huge);
        assert_eq!(field, "hosts_per_leaf");
    }

    #[test]
    fn json_schema_has_descriptions() {
        let schema = serde_json::to_string(&schemars::schema_for!(TopologyConfig)).unwrap();
        for needle in [
            "\"kind\"",
            "leaf_spine",
            "Hosts attached to each leaf",
            "Number of parallel links",
            "tier",
        ] {
            assert!(schema.contains(needle), "schema lacks {needle}: {schema}");
        }
    }
}

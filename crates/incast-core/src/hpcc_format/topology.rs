//! Reading HPCC-sim's topology file, and the base RTTs and standalone FCTs
//! HPCC-sim derives from it.
//!
//! The file: line 1 `nodes switches links`, then the switch ids (on one or
//! more lines), then one `a b rate delay error_rate` per link. [`pair_rtt_to`]
//! follows `CalculateRoute` in `third.cc` (a BFS through switches) and
//! [`standalone_fct_ns`] its `qp_finish`.

use super::config::ns3_rate;
use super::HPCC_HEADER;
use crate::scenario::ScenarioError;
use crate::units::{self, Rate, NS};
use std::collections::VecDeque;

/// One link of the topology file.
pub(super) struct HpccLink {
    pub a: u32,
    pub b: u32,
    pub rate: Rate,
    /// Propagation delay, ps.
    pub delay: u64,
}

/// A parsed topology file.
pub(super) struct Topo {
    pub n_nodes: u32,
    pub is_switch: Vec<bool>,
    /// In file order.
    pub links: Vec<HpccLink>,
    /// Per node: (neighbour, link index), in link order.
    pub adj: Vec<Vec<(u32, usize)>>,
}

pub(super) fn parse_topology(text: &str, file: &str) -> Result<Topo, ScenarioError> {
    let key = "TOPOLOGY_FILE";
    let err = |line: usize, m: String| ScenarioError::new(key, format!("{file}:{line}: {m}"));
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (ln, head) = lines
        .next()
        .ok_or_else(|| ScenarioError::new(key, format!("{file} is empty")))?;
    let nums: Vec<u32> = head
        .split_whitespace()
        .map(|t| t.parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| err(ln, format!("expected `nodes switches links`, got `{head}`")))?;
    if nums.len() != 3 {
        return Err(err(
            ln,
            format!("expected `nodes switches links`, got `{head}`"),
        ));
    }
    let (n_nodes, n_switches, n_links) = (nums[0], nums[1], nums[2] as usize);
    if n_nodes == 0 || n_switches >= n_nodes {
        return Err(err(
            ln,
            format!("{n_nodes} nodes with {n_switches} switches leaves no hosts"),
        ));
    }
    let mut is_switch = vec![false; n_nodes as usize];
    // The switch ids may span lines (HPCC reads them as a stream).
    let mut ids = vec![];
    let mut last_ln = ln;
    while ids.len() < n_switches as usize {
        let (ln, l) = lines.next().ok_or_else(|| {
            err(
                last_ln,
                format!("expected {n_switches} switch ids, found {}", ids.len()),
            )
        })?;
        last_ln = ln;
        for t in l.split_whitespace() {
            let id: u32 = t
                .parse()
                .map_err(|_| err(ln, format!("switch id `{t}` is not a number")))?;
            ids.push((ln, id));
        }
    }
    if ids.len() != n_switches as usize {
        return Err(err(
            last_ln,
            format!("expected {n_switches} switch ids, found {}", ids.len()),
        ));
    }
    for (ln, id) in ids {
        if id >= n_nodes {
            return Err(err(
                ln,
                format!("switch id {id} is not below the node count {n_nodes}"),
            ));
        }
        if is_switch[id as usize] {
            return Err(err(ln, format!("switch id {id} is listed twice")));
        }
        is_switch[id as usize] = true;
    }
    let mut links = Vec::with_capacity(n_links);
    for (ln, l) in lines.by_ref().take(n_links) {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() != 5 {
            return Err(err(
                ln,
                format!("expected `a b rate delay error_rate`, got `{l}`"),
            ));
        }
        let node = |s: &str| -> Result<u32, ScenarioError> {
            let v: u32 = s
                .parse()
                .map_err(|_| err(ln, format!("node id `{s}` is not a number")))?;
            if v >= n_nodes {
                return Err(err(
                    ln,
                    format!("node id {v} is not below the node count {n_nodes}"),
                ));
            }
            Ok(v)
        };
        let (a, b) = (node(t[0])?, node(t[1])?);
        if a == b {
            return Err(err(ln, format!("a link from node {a} to itself")));
        }
        let rate = ns3_rate(t[2]).map_err(|m| err(ln, m))?;
        let delay = units::parse_time(t[3]).map_err(|m| err(ln, m))?;
        let er: f64 = t[4]
            .parse()
            .map_err(|_| err(ln, format!("error rate `{}` is not a number", t[4])))?;
        if er != 0.0 {
            return Err(err(
                ln,
                format!("link {a}-{b} has error rate {}; incast supports only lossless links (error rate 0)", t[4]),
            ));
        }
        links.push(HpccLink { a, b, rate, delay });
    }
    if links.len() != n_links {
        return Err(ScenarioError::new(
            key,
            format!(
                "{file}: the header announces {n_links} links, the file has {}",
                links.len()
            ),
        ));
    }
    if let Some((ln, l)) = lines.next() {
        return Err(err(
            ln,
            format!("unexpected line `{l}` after the {n_links} links the header announces"),
        ));
    }
    let mut adj = vec![vec![]; n_nodes as usize];
    for (i, l) in links.iter().enumerate() {
        adj[l.a as usize].push((l.b, i));
        adj[l.b as usize].push((l.a, i));
    }
    Ok(Topo {
        n_nodes,
        is_switch,
        links,
        adj,
    })
}

/// HPCC-sim's base RTT (ns) and bottleneck rate (bits/s) of every host towards `dst`
/// (`CalculateRoute` in `third.cc`): a BFS from `dst` that only passes through switches;
/// per hop, the delay and `payload x 8 / rate` (integer ns) add up, the rate is the
/// minimum. RTT = 2 x delay + serialisation.
pub(super) fn pair_rtt_to(topo: &Topo, dst: u32, payload: u64) -> Vec<Option<(u64, u64)>> {
    let n = topo.n_nodes as usize;
    let mut dist = vec![u32::MAX; n];
    let mut delay = vec![0u64; n];
    let mut tx = vec![0u64; n];
    let mut bw = vec![u64::MAX; n];
    let mut q = VecDeque::new();
    dist[dst as usize] = 0;
    q.push_back(dst);
    while let Some(now) = q.pop_front() {
        let d = dist[now as usize];
        for &(next, li) in &topo.adj[now as usize] {
            let l = &topo.links[li];
            if dist[next as usize] == u32::MAX {
                dist[next as usize] = d + 1;
                // HPCC-sim keeps ns; topology delays are whole ns in practice.
                delay[next as usize] = delay[now as usize] + l.delay / NS;
                tx[next as usize] = tx[now as usize] + payload * 8_000_000_000 / l.rate.0;
                bw[next as usize] = bw[now as usize].min(l.rate.0);
                if topo.is_switch[next as usize] {
                    q.push_back(next);
                }
            }
        }
    }
    (0..n)
        .map(|i| (dist[i] != u32::MAX && i != dst as usize).then(|| (2 * delay[i] + tx[i], bw[i])))
        .collect()
}

/// HPCC-sim's standalone FCT (`qp_finish`): base RTT + bytes with headers (no INT) / bottleneck.
pub fn standalone_fct_ns(size: u64, payload: u64, base_rtt_ns: u64, bw_bps: u64) -> u64 {
    let total =
        size + size.saturating_sub(1) / payload.max(1) * HPCC_HEADER as u64 + HPCC_HEADER as u64;
    base_rtt_ns + (total as u128 * 8_000_000_000u128 / bw_bps as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hpcc_format::import_texts;
    use crate::hpcc_format::test_util::*;

    #[test]
    fn standalone_fct_follows_hpcc_qp_finish() {
        // Intra-rack, 2 x 100G, 1 us links: RTT = 4 us + 2 x 80 ns; 1048 B at 100G = 83.84 -> 83 ns.
        assert_eq!(standalone_fct_ns(1000, 1000, 4160, 100_000_000_000), 4243);
        let imp = import_texts("small", &base_config(), TOPO, FLOWS).unwrap();
        assert_eq!(imp.flows[0].standalone_fct_ns, 4243);
        // Node 0 -> 3: 100G, 400G, 100G; RTT = 6 us + 80 + 20 + 80 ns; 1e6 B + 1000 x 48 B at 100G.
        assert_eq!(imp.flows[1].standalone_fct_ns, 6180 + 83_840);
        // A 5-byte flow: one packet of 53 B.
        assert_eq!(imp.flows[2].standalone_fct_ns, 4160 + 4);
    }

    #[test]
    fn topology_lines_are_read_as_hpcc_reads_them() {
        // Switch ids may span lines; blank lines are skipped.
        let t = parse_topology(
            "4 2 3\n2\n\n3\n0 2 100Gbps 1us 0\n1 3 100Gbps 1000ns 0\n2 3 400Gbps 2us 0\n",
            "t",
        )
        .unwrap();
        assert_eq!(t.is_switch, vec![false, false, true, true]);
        assert_eq!(t.links[2].rate, Rate::gbps(400));
        assert_eq!(t.links[0].delay, 1000 * NS);
        assert_eq!(t.adj[2], vec![(0, 0), (3, 2)]);
        for (text, says) in [
            (
                "3 1 2\n2\n0 2 100Gbps 1us 0\n",
                "announces 2 links, the file has 1",
            ),
            (
                "3 1 1\n2\n0 0 100Gbps 1us 0\n",
                "t:3: a link from node 0 to itself",
            ),
            (
                "3 1 1\n2\n0 7 100Gbps 1us 0\n",
                "node id 7 is not below the node count 3",
            ),
            ("3 1 1\n5\n", "t:2: switch id 5"),
            ("3 3 0\n0 1 2\n", "leaves no hosts"),
            (
                "3 1 1\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n",
                "t:4: unexpected line",
            ),
        ] {
            let e = parse_topology(text, "t").err().unwrap();
            assert_eq!(e.path, "TOPOLOGY_FILE");
            assert!(e.message.contains(says), "{text:?}: {e}");
        }
    }

    #[test]
    fn fat_tree_standalone_fct_matches_the_spec_table() {
        let Some(fat) = shared("fat.txt") else {
            eprintln!("skipped: {SHARED} is not available");
            return;
        };
        let topo = std::fs::read_to_string(fat).unwrap();
        let topo = parse_topology(&topo, "fat.txt").unwrap();
        // Hosts 0 and 1 share a ToR; host 0 and host 319 are in different pods.
        let to1 = pair_rtt_to(&topo, 1, 1000);
        let (rtt, bw) = to1[0].unwrap();
        assert_eq!((rtt, bw), (4160, 100_000_000_000));
        // docs/mechanisms.md, V15: 4.244 us intra-rack 1 KB (HPCC-sim's integer ns: 4243),
        // 12.544 us at 100 KB.
        assert_eq!(standalone_fct_ns(1000, 1000, rtt, bw), 4243);
        assert_eq!(standalone_fct_ns(100_000, 1000, rtt, bw), 12_544);
        assert_eq!(standalone_fct_ns(10_000_000, 1000, rtt, bw), 842_560);
        let to319 = pair_rtt_to(&topo, 319, 1000);
        let (rtt, bw) = to319[0].unwrap();
        assert_eq!((rtt, bw), (12_240, 100_000_000_000));
        // Spec: 12.324 us cross-pod 1 KB (integer: 12323), 96.08 us at 1 MB.
        assert_eq!(standalone_fct_ns(1000, 1000, rtt, bw), 12_323);
        assert_eq!(standalone_fct_ns(1_000_000, 1000, rtt, bw), 96_080);
    }
}

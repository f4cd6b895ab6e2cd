//! How much of a run could go in parallel: the available parallelism of a
//! conservative, window-synchronised engine over a partition of the network.
//!
//! A parallel discrete-event engine of the kind UNISON (EuroSys 2024) or
//! ns-3's MPI engine uses splits the network into partitions, runs each on a
//! core, and lets them advance together in windows no longer than the
//! smallest delay of a link between two partitions (the *lookahead*): nothing
//! sent across a partition boundary inside a window can arrive inside it. A
//! window then takes as long as its busiest partition, so with `E` events in
//! all and `B_k` events in window `k`'s busiest partition the speed-up is at
//! most `E / sum_k B_k` (the *available parallelism*), before any
//! synchronisation cost: one barrier per window.
//!
//! [`Simulation::profile_parallelism`] runs a scenario to its end and measures
//! exactly that, from the real event stream: each event is charged to the
//! partition of the node it concerns (a packet's arrival to the node it
//! reaches, an end of transmission or a switch timer to the port's node, a
//! flow's timers to its host). The partition, deterministic and independent
//! of the run:
//!
//! 1. every switch's *tier* is its hop distance to the nearest host; the
//!    switches of the highest tier (the spines, the fat-tree's cores) are
//!    dealt round-robin over the partitions;
//! 2. the rest of the network, without them, falls apart into groups (a
//!    fat-tree's pods, a leaf with its hosts): each group goes whole to the
//!    partition with the fewest hosts so far, the largest groups first.
//!
//! Events that concern no single node (a listed flow's start, an incast
//! generator's next arrival, the queue sampler's tick; a Poisson
//! generator's arrivals at a host are that host's) are counted apart as
//! *global*: they are charged in full to every window they fall in, as if
//! run serially (an upper bound on their cost).
//!
//! A second bound assumes load-adaptive scheduling (UNISON's): the network in
//! its finest units (an edge switch with its hosts, each switch above), dealt
//! to the threads anew in each window, so a window takes the larger of its
//! largest unit's events and an even share of all its events.

use super::ev::Ev;
use super::world::World;
use super::Simulation;
use crate::host::generators::Generators;
use crate::units::Ps;
use std::collections::VecDeque;

/// What [`Simulation::profile_parallelism`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ParallelismProfile {
    /// Partitions asked for.
    pub partitions: u32,
    /// Groups the network fell into once its top tier was left out (a
    /// partition count above this leaves partitions with no hosts).
    pub groups: u32,
    /// Hosts per partition.
    pub hosts: Vec<u32>,
    /// Events run per partition.
    pub events: Vec<u64>,
    /// Events that concern no single node.
    pub global_events: u64,
    /// The smallest delay of a link between two partitions (the window);
    /// `Ps::MAX` when no link crosses.
    pub lookahead: Ps,
    /// Windows holding at least one event (barriers of the engine).
    pub windows: u64,
    /// Sum over windows of the busiest partition's events, plus the global ones.
    pub critical_events: u64,
    /// Finest units (an edge switch with its hosts, each switch above).
    pub units: u32,
    /// The same sum with the units dealt to partitions anew in each window
    /// (load-adaptive, as UNISON schedules): per window the larger of its
    /// largest unit's events and an even share of its events.
    pub adaptive_critical_events: u64,
    /// Frames sent over links between partitions (messages to exchange).
    pub cross_frames: u64,
}

impl ParallelismProfile {
    /// Every event, partitioned or global.
    pub fn total_events(&self) -> u64 {
        self.events.iter().sum::<u64>() + self.global_events
    }
    /// `events / critical events`: the speed-up bound before synchronisation cost.
    pub fn available(&self) -> f64 {
        if self.critical_events == 0 {
            return 1.0;
        }
        self.total_events() as f64 / self.critical_events as f64
    }
    /// The same bound for a load-adaptive engine (units dealt anew per window).
    pub fn available_adaptive(&self) -> f64 {
        if self.adaptive_critical_events == 0 {
            return 1.0;
        }
        self.total_events() as f64 / self.adaptive_critical_events as f64
    }
}

/// The node of every host and switch by the result tables' numbering (hosts
/// first, then switches) and the partition of each.
pub(super) struct Partition {
    pub(super) of_node: Vec<u32>,
    groups: u32,
    hosts: Vec<u32>,
    /// The finest units (UNISON's logical processes): the groups at the
    /// lowest cut (an edge switch with its hosts) and each switch above it.
    lp_of_node: Vec<u32>,
    lps: u32,
}

impl Partition {
    pub(super) fn new(w: &World, parts: u32) -> Partition {
        let hosts = w.host_nic.len();
        let nodes = hosts + w.switches.len();
        // The links, as node pairs (a NIC's port stands for its first host;
        // the hosts behind it follow it).
        let mut adjacent: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for port in &w.ports {
            let here = w.node_of(port.owner());
            let there = w.node_of(w.ports[port.peer as usize].owner());
            adjacent[here as usize].push(there);
        }
        let nic_node = |host: usize| w.nics[w.host_nic[host] as usize].node;
        // 1. tiers: hop distance from the nearest host.
        let mut tier = vec![u32::MAX; nodes];
        let mut frontier: VecDeque<u32> = VecDeque::new();
        for (node, t) in tier.iter_mut().enumerate().take(hosts) {
            *t = 0;
            frontier.push_back(node as u32);
        }
        while let Some(node) = frontier.pop_front() {
            for &next in &adjacent[node as usize] {
                if tier[next as usize] == u32::MAX {
                    tier[next as usize] = tier[node as usize] + 1;
                    frontier.push_back(next);
                }
            }
        }
        // 2. groups: connected parts without the switches of tier `cut` and
        // above; the cut moves down a tier while there are fewer groups than
        // partitions (a fat-tree's pods, then its edge switches with their hosts).
        let top = (hosts..nodes)
            .map(|n| tier[n])
            .filter(|&t| t != u32::MAX)
            .max();
        let mut cut = top.filter(|&t| t >= 2).map_or(u32::MAX, |t| t);
        // Hosts behind a shared NIC count at the NIC's node (its first host).
        let mut weight = vec![0u32; nodes];
        (0..hosts).for_each(|host| weight[nic_node(host) as usize] += 1);
        let (mut group, mut group_hosts) = Self::groups(&adjacent, &tier, &weight, hosts, cut);
        while (group_hosts.len() as u32) < parts && cut > 2 && cut != u32::MAX {
            cut -= 1;
            (group, group_hosts) = Self::groups(&adjacent, &tier, &weight, hosts, cut);
        }
        let is_top = |node: usize| tier[node] >= cut && tier[node] != u32::MAX && node >= hosts;
        for host in 0..hosts {
            group[host] = group[nic_node(host) as usize];
        }
        let mut order: Vec<u32> = (0..group_hosts.len() as u32).collect();
        order.sort_by_key(|&g| (std::cmp::Reverse(group_hosts[g as usize]), g));
        let mut part_hosts = vec![0u32; parts as usize];
        let mut part_of_group = vec![0u32; group_hosts.len()];
        for g in order {
            let lightest = (0..parts)
                .min_by_key(|&p| (part_hosts[p as usize], p))
                .unwrap_or(0);
            part_of_group[g as usize] = lightest;
            part_hosts[lightest as usize] += group_hosts[g as usize];
        }
        let mut next_top = 0u32;
        let of_node = (0..nodes)
            .map(|node| {
                if is_top(node) {
                    next_top += 1;
                    (next_top - 1) % parts
                } else {
                    part_of_group[group[node] as usize]
                }
            })
            .collect();
        // The finest units: the groups without every switch above tier 1,
        // and each of those switches alone.
        let finest = top.filter(|&t| t >= 2).map_or(u32::MAX, |_| 2);
        let (mut lp_of_node, lp_hosts) = Self::groups(&adjacent, &tier, &weight, hosts, finest);
        let mut lps = lp_hosts.len() as u32;
        for node in 0..nodes {
            if node < hosts {
                lp_of_node[node] = lp_of_node[nic_node(node) as usize];
            } else if lp_of_node[node] == u32::MAX {
                lp_of_node[node] = lps;
                lps += 1;
            }
        }
        Partition {
            of_node,
            groups: group_hosts.len() as u32,
            hosts: part_hosts,
            lp_of_node,
            lps,
        }
    }

    /// The connected parts of the network without its switches of tier `cut`
    /// and above: each node's group (`u32::MAX` for those switches and for
    /// hosts behind another's NIC) and each group's hosts (`weight`: the
    /// hosts a node stands for).
    fn groups(
        adjacent: &[Vec<u32>],
        tier: &[u32],
        weight: &[u32],
        hosts: usize,
        cut: u32,
    ) -> (Vec<u32>, Vec<u32>) {
        let nodes = adjacent.len();
        let left_out = |node: usize| {
            if node < hosts {
                weight[node] == 0 // a host behind another host's NIC
            } else {
                tier[node] >= cut && tier[node] != u32::MAX
            }
        };
        let mut group = vec![u32::MAX; nodes];
        let mut group_hosts: Vec<u32> = Vec::new();
        let mut frontier: VecDeque<u32> = VecDeque::new();
        for start in 0..nodes {
            if group[start] != u32::MAX || left_out(start) {
                continue;
            }
            let id = group_hosts.len() as u32;
            group_hosts.push(0);
            group[start] = id;
            frontier.push_back(start as u32);
            while let Some(node) = frontier.pop_front() {
                group_hosts[id as usize] += weight[node as usize];
                for &next in &adjacent[node as usize] {
                    if group[next as usize] == u32::MAX && !left_out(next as usize) {
                        group[next as usize] = id;
                        frontier.push_back(next);
                    }
                }
            }
        }
        (group, group_hosts)
    }

    /// How many partitions.
    pub(super) fn parts(&self) -> usize {
        self.hosts.len()
    }

    /// The ports whose link leads into another partition.
    pub(super) fn crossing_ports<'a>(&'a self, w: &'a World) -> impl Iterator<Item = u32> + 'a {
        (0..w.ports.len() as u32)
            .filter(move |&p| self.of_port(w, p) != self.of_port(w, w.ports[p as usize].peer))
    }

    /// The smallest delay of a link between two partitions (at least 1 ps;
    /// `Ps::MAX` when none crosses): the longest a window may be.
    pub(super) fn lookahead(&self, w: &World) -> Ps {
        (self.crossing_ports(w))
            .map(|p| w.ports[p as usize].delay)
            .min()
            .unwrap_or(Ps::MAX)
            .max(1)
    }

    /// The partition of host `host` (its NIC's node's).
    pub(super) fn of_host(&self, w: &World, host: u32) -> u32 {
        self.of_node[w.nics[w.host_nic[host as usize] as usize].node as usize]
    }

    pub(super) fn of_port(&self, w: &World, port: u32) -> u32 {
        self.of_node[w.node_of(w.ports[port as usize].owner()) as usize]
    }

    /// The node an event concerns (the result tables' numbering); `None`
    /// for a global one.
    pub(super) fn node_of_event(w: &World, gens: &Generators, ev: Ev) -> Option<u32> {
        let port_node = |port: u32| w.node_of(w.ports[port as usize].owner());
        let host_node = |host: u32| w.nics[w.host_nic[host as usize] as usize].node;
        let nic_node = |nic: u32| w.nics[nic as usize].node;
        let slot_src = |slot: u32| host_node(w.flows.slots[slot as usize].src);
        let slot_dst = |slot: u32| host_node(w.flows.slots[slot as usize].dst);
        Some(match ev {
            Ev::Arrive(packet) => port_node(w.arena.get(packet).to_port),
            Ev::TxDone(port) | Ev::Timer(_, port) => port_node(port),
            Ev::Rto(slot) | Ev::CcTimer(slot) | Ev::Gate(slot) | Ev::Pace(slot) => slot_src(slot),
            Ev::FlowStop(slot) => slot_src(slot),
            Ev::DelAck(slot) | Ev::CnpTimer(slot) => slot_dst(slot),
            Ev::NicWake(nic) | Ev::RxDone(nic) => nic_node(nic),
            Ev::PcieDone(host) | Ev::NdpPull(host) | Ev::EqdsPull(host) => host_node(host),
            Ev::Gen(source) => host_node(gens.source_host(source)?),
            Ev::NicTimer(code, target) => nic_node(crate::nic::timer_nic(w, code, target)?),
            Ev::Sample => return None,
        })
    }
}

/// One partition count's profile as the run goes.
struct Profiler {
    partition: Partition,
    profile: ParallelismProfile,
    window: Option<u64>,
    in_window: Vec<u64>,
    global_in_window: u64,
    /// Events per finest unit in the open window, and the units touched.
    lp_in_window: Vec<u64>,
    lps_touched: Vec<u32>,
}

impl Profiler {
    fn new(w: &World, partitions: u32) -> Profiler {
        let parts = partitions.max(1);
        let partition = Partition::new(w, parts);
        let lookahead = partition.lookahead(w);
        let profile = ParallelismProfile {
            partitions: parts,
            groups: partition.groups,
            hosts: partition.hosts.clone(),
            events: vec![0; parts as usize],
            global_events: 0,
            lookahead,
            windows: 0,
            critical_events: 0,
            units: partition.lps,
            adaptive_critical_events: 0,
            cross_frames: 0,
        };
        Profiler {
            lp_in_window: vec![0; partition.lps as usize],
            lps_touched: Vec::new(),
            partition,
            profile,
            window: None,
            in_window: vec![0; parts as usize],
            global_in_window: 0,
        }
    }

    fn observe(&mut self, w: &World, gens: &Generators, t: Ps, ev: Ev) {
        let k = t / self.profile.lookahead;
        if self.window.is_some_and(|open| open != k) {
            self.close_window();
        }
        self.window = Some(k);
        match Partition::node_of_event(w, gens, ev) {
            Some(node) => {
                let p = self.partition.of_node[node as usize];
                self.in_window[p as usize] += 1;
                self.profile.events[p as usize] += 1;
                let lp = self.partition.lp_of_node[node as usize];
                if self.lp_in_window[lp as usize] == 0 {
                    self.lps_touched.push(lp);
                }
                self.lp_in_window[lp as usize] += 1;
            }
            None => {
                self.global_in_window += 1;
                self.profile.global_events += 1;
            }
        }
    }

    fn close_window(&mut self) {
        let busiest = self.in_window.iter().copied().max().unwrap_or(0);
        self.profile.windows += 1;
        self.profile.critical_events += busiest + self.global_in_window;
        // Load-adaptive: the window's units dealt to the P threads as they
        // free up, so it takes at least its largest unit and its share.
        let total: u64 = self.in_window.iter().sum();
        let parts = self.profile.partitions as u64;
        let largest_unit = self
            .lps_touched
            .iter()
            .map(|&lp| self.lp_in_window[lp as usize])
            .max();
        self.profile.adaptive_critical_events +=
            largest_unit.unwrap_or(0).max(total.div_ceil(parts)) + self.global_in_window;
        for &lp in &self.lps_touched {
            self.lp_in_window[lp as usize] = 0;
        }
        self.lps_touched.clear();
        self.in_window.iter_mut().for_each(|c| *c = 0);
        self.global_in_window = 0;
    }

    fn finish(mut self, w: &World) -> ParallelismProfile {
        if self.window.is_some() {
            self.close_window();
        }
        self.profile.cross_frames = self
            .partition
            .crossing_ports(w)
            .map(|p| w.ports[p as usize].tx_pkts)
            .sum();
        self.profile
    }
}

impl Simulation {
    /// Runs the scenario to its end, as [`Simulation::run`] does (the same
    /// results), and measures the parallelism a window-synchronised engine
    /// would find in it over each count of `partitions` (module docs).
    pub fn profile_parallelism(&mut self, partitions: &[u32]) -> Vec<ParallelismProfile> {
        let mut profilers: Vec<Profiler> = partitions
            .iter()
            .map(|&p| Profiler::new(&self.w, p))
            .collect();
        while !self.done {
            self.step(|w, gens, t, ev| {
                profilers.iter_mut().for_each(|p| p.observe(w, gens, t, ev))
            });
        }
        profilers.into_iter().map(|p| p.finish(&self.w)).collect()
    }

    /// One event, shown to `observe` (with the world as it is before the
    /// event runs) and then run, as [`Simulation::advance`] runs it.
    fn step(&mut self, mut observe: impl FnMut(&World, &Generators, Ps, Ev)) {
        let Some((t, ev)) = self.next_event() else {
            return;
        };
        observe(&self.w, &self.gens, t, ev);
        if self.node_ties {
            let source = self.source_of(ev);
            self.w.q.set_source(source);
        }
        self.dispatch(t, ev);
        if self.w.arena.live() == 0 && self.gens.live == 0 && self.w.flows.active == 0 {
            self.done = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::sim::Simulation;

    const FAT_TREE: &str = r#"
        name = "fat tree k4"
        seed = 1
        duration = "200us"
        stop = "1ms"
        [topology]
        kind = "fat_tree"
        k = 4
        host_rate = "100Gbps"
        fabric_rate = "100Gbps"
        [transport]
        cc = "dctcp"
        [[workload.poisson]]
        load = 0.5
        cdf = "websearch"
    "#;

    fn sim(text: &str) -> Simulation {
        let scenario = Scenario::from_toml_str(text, std::path::Path::new("."))
            .unwrap_or_else(|e| panic!("{e}"));
        Simulation::new(&scenario).unwrap_or_else(|e| panic!("{e}"))
    }

    /// One partition: every window's busiest partition holds all its events,
    /// so nothing is parallel; and the profiled run gives the same results.
    #[test]
    fn one_partition_is_serial_and_results_match_a_plain_run() {
        let mut plain = sim(FAT_TREE);
        plain.run();
        let mut profiled = sim(FAT_TREE);
        let profile = profiled.profile_parallelism(&[1]).remove(0);
        assert_eq!(profile.available(), 1.0);
        assert_eq!(profile.available_adaptive(), 1.0);
        assert_eq!(profile.cross_frames, 0);
        assert_eq!(profile.lookahead, crate::units::Ps::MAX);
        assert_eq!(profile.total_events(), profiled.w.q.events_processed());
        let (a, b) = (plain.finish(), profiled.finish());
        assert_eq!(a.stats.events, b.stats.events);
        assert_eq!(a.summary_json, b.summary_json);
        assert_eq!(a.flows, b.flows);
    }

    /// A k = 4 fat-tree falls into its 4 pods (the cores left out); with 2
    /// partitions each gets two pods (8 hosts), the window is the 1 us link
    /// delay, and the parallelism lies between 1 and 2.
    #[test]
    fn fat_tree_pods_split_evenly() {
        let mut s = sim(FAT_TREE);
        let profiles = s.profile_parallelism(&[2, 4]);
        let profile = &profiles[0];
        assert_eq!(profile.groups, 4);
        assert_eq!(profile.hosts, vec![8, 8]);
        assert_eq!(profile.lookahead, 1_000_000);
        let available = profile.available();
        assert!(available > 1.0 && available <= 2.0, "{available}");
        assert!(profile.cross_frames > 0);
        assert!(profile.windows > 0);
        // Four partitions: a pod each, the same windows, more parallelism.
        assert_eq!(profiles[1].hosts, vec![4, 4, 4, 4]);
        assert_eq!(profiles[1].windows, profile.windows);
        assert!(profiles[1].available() > available);
        // 8 edge switches with their hosts, 8 aggregation and 4 core switches;
        // dealing them anew each window never does worse than fixed pods.
        assert_eq!(profile.units, 20);
        for p in &profiles {
            assert!(p.available_adaptive() >= p.available(), "{p:?}");
            assert!(p.available_adaptive() <= p.partitions as f64);
        }
        assert_eq!(profiles[1].total_events(), profile.total_events());
    }
}

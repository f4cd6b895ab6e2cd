//! Scenario to world: ports and switches from the topology graph, NICs,
//! transports, switch mechanisms, generators and metrics, one part each.

use super::ev::Ev;
use super::world::{Counters, Rdma, World};
use super::Simulation;
use crate::edge::EdgeRuntime;
use crate::engine::EventQueue;
use crate::host::generators::Generators;
use crate::host::{paths, Flows};
use crate::mech::Mechs;
use crate::metrics::sampler::{name_matches, QueueSampler};
use crate::net::port::Owner;
use crate::net::switch::{Switch, SwitchParams};
use crate::net::{PacketArena, Port, NUM_CLASSES};
use crate::nic::{Nic, NicModelKind};
use crate::rdma::cc::{CcCtx, RateCc};
use crate::rdma::RdmaConfig;
use crate::scenario::config::EcmpRule;
use crate::scenario::{
    HostRef, MetricsConfig, Process, QueuePorts, Scenario, ScenarioError, Ties, TxTimes,
    DEFAULT_STOP,
};
use crate::topology::hpcc_ecmp::HpccEcmp;
use crate::topology::{Graph, NodeRef, Routes};
use crate::units::{Ps, Rate};
use crate::workload::generators::{IncastGen, IncastSizes, PacketGen, PoissonGen};
use std::time::Instant;

/// The ports, NICs and switches of a graph.
struct Fabric {
    /// Each knows its node ([`Port::owner`]).
    ports: Vec<Port>,
    nics: Vec<Nic>,
    host_nic: Vec<u32>,
    switches: Vec<Switch>,
}

/// Global port ids: hosts' NIC ports first (in host order; without
/// multi-host NICs host h's NIC is NIC h, port h), then each switch's ports,
/// contiguously.
fn fabric(graph: &Graph, seed: u64) -> Fabric {
    let n_hosts = graph.n_hosts();
    let node_index = |n: NodeRef| match n {
        NodeRef::Host(h) => h as usize,
        NodeRef::Switch(s) => n_hosts + s as usize,
    };
    // First global id of each node's ports: hosts 0..H, then switches.
    let mut base = Vec::with_capacity(n_hosts + graph.n_switches());
    let mut next = 0u32;
    let nodes = (0..n_hosts as u32)
        .map(NodeRef::Host)
        .chain((0..graph.n_switches() as u32).map(NodeRef::Switch));
    for n in nodes {
        base.push(next);
        next += graph.ports(n).len() as u32;
    }
    let global = |n: NodeRef, local: usize| base[node_index(n)] + local as u32;
    let mut ports: Vec<Port> = Vec::with_capacity(next as usize);
    let mut owners: Vec<Owner> = Vec::with_capacity(next as usize);
    let mut add_ports = |node: NodeRef, owner: Owner| -> Vec<u32> {
        let mut ids = vec![];
        for (l, &(link, _side)) in graph.ports(node).iter().enumerate() {
            let (peer_node, peer_local) = graph.peer(node, l);
            let lk = &graph.links[link as usize];
            let id = global(node, l);
            debug_assert_eq!(id as usize, ports.len());
            owners.push(owner);
            ports.push(Port::new(
                l as u16,
                global(peer_node, peer_local),
                lk.rate,
                lk.delay,
            ));
            ids.push(id);
        }
        ids
    };
    // One NIC per host that has a link; hosts behind a multi-host NIC use
    // their NIC host's.
    let nic_hosts = graph.nic_hosts();
    let mut nics = vec![];
    let mut nic_of = vec![u32::MAX; n_hosts];
    for h in 0..n_hosts as u32 {
        if nic_hosts[h as usize] == h {
            let n = nics.len() as u32;
            let ids = add_ports(NodeRef::Host(h), Owner::Nic(n));
            nics.push(Nic::new(ids[0], h));
            nic_of[h as usize] = n;
        }
    }
    let host_nic = nic_hosts.iter().map(|&o| nic_of[o as usize]).collect();
    let mut switches = vec![];
    for s in 0..graph.n_switches() as u32 {
        let ids = add_ports(NodeRef::Switch(s), Owner::Switch(s));
        let first = ids.first().copied().unwrap_or(0);
        switches.push(Switch::new(s, first..first + ids.len() as u32, seed));
    }
    for p in 0..ports.len() {
        let peer = ports[p].peer as usize;
        ports[p].peer_local = ports[peer].local;
        let peer_switch = match owners[peer] {
            Owner::Switch(s) => Some(s),
            Owner::Nic(_) => None,
        };
        ports[p].set_ends(owners[p], peer_switch);
    }
    Fabric {
        ports,
        nics,
        host_nic,
        switches,
    }
}

/// The generators of the scenario's `[workload]`.
fn generators(sc: &Scenario, host_rates: &[Rate], duration: Ps) -> Generators {
    let c = &sc.config;
    let seed = c.seed;
    // RDMA flows default to the RDMA data class, TCP flows to the transport's.
    let default_class = sc.data_class();
    let class_or = |c: Option<u8>| c.unwrap_or(default_class);
    let host_id = |r: &HostRef| sc.host_index(r);
    let poisson = c.workload.poisson.iter().enumerate().map(|(i, p)| {
        let mut gen = PoissonGen::new(
            i,
            seed,
            sc.poisson_hosts[i].clone(),
            host_rates,
            sc.poisson_cdfs[i].clone(),
            p.load,
            class_or(p.class),
            duration,
        );
        gen.small = p.small_flows.map(|s| (s.below.0, s.class));
        gen.cc = sc.poisson_cc[i];
        gen
    });
    let incast = c.workload.incast.iter().enumerate().map(|(i, inc)| {
        let mut gen = IncastGen::new(
            i,
            seed,
            sc.incast_hosts[i].clone(),
            host_rates,
            sc.incast_mix(i),
            match (&sc.incast_cdfs[i], inc.bytes_per_sender) {
                (Some(c), _) => IncastSizes::Cdf(c.clone()),
                (None, b) => IncastSizes::Fixed(b.expect("validated").0),
            },
            inc.load,
            inc.times
                .as_ref()
                .map_or(vec![], |t| t.iter().map(|x| x.0).collect()),
            match (&inc.receiver, &inc.receivers) {
                (Some(r), _) => vec![host_id(r)],
                (None, Some(list)) => list.iter().map(host_id).collect(),
                (None, None) => vec![],
            },
            class_or(inc.class),
            duration,
        );
        gen.cc = sc.incast_cc[i];
        gen
    });
    let packets = c.workload.packets.iter().enumerate().map(|(i, p)| {
        PacketGen::new(
            i,
            seed,
            host_id(&p.src),
            host_id(&p.dst),
            p.size.0 as u32,
            p.rate.0,
            p.process == Process::Poisson,
            class_or(p.class),
            duration,
        )
    });
    let mut gens = Generators::new(
        poisson.collect(),
        incast.collect(),
        packets.collect(),
        sc.listed.clone(),
    );
    // On/off sources run to the end of `duration`, or to `stop` without one.
    let end = if duration > 0 {
        duration
    } else {
        c.stop.map_or(DEFAULT_STOP, |s| s.0)
    };
    gens.onoff = c
        .workload
        .onoff
        .iter()
        .enumerate()
        .map(|(i, o)| o.build(i, seed, host_rates, end).expect("validated"))
        .collect();
    gens.onoff_class = default_class;
    gens.bulk = sc.bulk.clone();
    gens.registered = crate::host::generators::Registered::build(sc);
    gens
}

/// The switch mechanisms' state, from the registry ([`crate::mech::build`]).
fn mechanisms(sc: &Scenario, fabric: &mut Fabric, params: &mut SwitchParams) -> Mechs {
    crate::mech::build(&mut crate::mech::Network {
        sc,
        ports: &mut fabric.ports,
        switches: &mut fabric.switches,
        nics: &fabric.nics,
        params,
    })
}

/// When the workload starts offering traffic: the earliest start of a
/// generator, of an incast's listed times, or of a listed flow (0 without any).
fn traffic_start(sc: &Scenario) -> Ps {
    let w = &sc.config.workload;
    let starts = w.poisson.iter().map(|p| p.start.0);
    let incasts = w.incast.iter().map(|i| match (&i.times, i.load) {
        (Some(t), None) => t.iter().map(|x| x.0).min().unwrap_or(Ps::MAX),
        _ => i.start.0,
    });
    let packets = w.packets.iter().map(|p| p.start.0);
    let onoff = w.onoff.iter().map(|o| o.start.0);
    let listed = sc.listed.first().map(|f| f.start);
    let bulk = sc.bulk.iter().map(|b| b.start);
    let registered = crate::host::generators::registered_start(w);
    starts
        .chain(incasts)
        .chain(packets)
        .chain(onoff)
        .chain(listed)
        .chain(bulk)
        .chain(registered)
        .min()
        .unwrap_or(0)
}

/// Builds the simulation of a scenario.
pub(super) fn simulation(sc: &Scenario) -> Result<Simulation, ScenarioError> {
    let g = &sc.graph;
    let c = &sc.config;
    let seed = c.seed;
    let mut routes = Routes::compute(g).map_err(|m| ScenarioError::new("topology", m))?;
    if let Some(r) = c.routing.as_ref().filter(|r| r.ecmp == EcmpRule::Hpcc) {
        let rule =
            HpccEcmp::build(g, r.dport).map_err(|m| ScenarioError::new("routing.ecmp", m))?;
        routes.use_hpcc(rule);
    }
    routes.spray = c
        .routing
        .as_ref()
        .is_some_and(|r| r.ecmp == EcmpRule::Spray);
    let mut fabric = fabric(g, seed);
    let duration = c.duration.map_or(0, |d| d.0);
    let host_rates = sc.host_rates();
    let gens = generators(sc, &host_rates, duration);
    // Progress runs to the last start of a listed flow or the last stop
    // of a timed flow or bulk schedule when that is later than `duration`.
    let timed = sc.listed.iter().map(|f| f.stop).filter(|&s| s != Ps::MAX);
    let horizon = duration.max(sc.listed.last().map_or(0, |f| f.start)).max(
        timed
            .chain(sc.bulk.iter().map(|b| b.stop))
            .max()
            .unwrap_or(0),
    );
    let mut node_names = g.host_names.clone();
    node_names.extend(g.switch_names.iter().cloned());
    let mut sw = sc.switch_params()?;
    // The mechanisms may set the switches' parameters (a congested-flow
    // queue's ECN rule), so the ports' ECN follows them.
    let mechs = mechanisms(sc, &mut fabric, &mut sw);
    for p in &mut fabric.ports {
        if let Owner::Switch(_) = p.owner() {
            let bps = p.rate.bits_per_sec();
            for class in 0..NUM_CLASSES {
                p.set_ecn(class, sw.ecn[class].at_rate(bps));
            }
        }
    }
    // `[timing] tx_times = "ns3"`: every link and RDMA pacing gap on ns-3's clock.
    let ns3_tx_times = c.timing.tx_times == TxTimes::Ns3;
    if ns3_tx_times {
        fabric.ports.iter_mut().for_each(Port::use_ns3_tx_times);
    }
    let ccs = sc.ccs.clone();
    let rdma = c.rdma.as_ref().map(|r| Rdma {
        cfg: RdmaConfig {
            ns3_tx_times,
            ..r.clone()
        },
        // Computed below, once the world can walk paths.
        ctx: CcCtx {
            line_rate: 0.0,
            base_rtt: 0,
            mtu: 0,
            bdp: 0,
        },
        overhead: r.data_wire(0),
    });
    let largest = c
        .rdma
        .as_ref()
        .map_or(c.transport.mtu, |r| r.data_wire(r.payload)) as u64;
    let reach = wheel_reach(&fabric.ports, largest.max(sc.largest_frame()));
    let stop = c.stop.map_or(DEFAULT_STOP, |s| s.0);
    let node_ties = c.timing.ties == Ties::Node;
    let q = event_queue(reach, node_ties, g.n_hosts() + fabric.switches.len(), stop)?;
    let mut w = World {
        q,
        arena: PacketArena::default(),
        sack: Default::default(),
        ports: fabric.ports,
        switches: fabric.switches,
        sw,
        routes,
        nics: fabric.nics,
        host_nic: fabric.host_nic,
        nic_model: NicModelKind::default(),
        flows: Flows::new(
            g.n_hosts(),
            c.metrics.warmup.0,
            if duration > 0 {
                duration.saturating_sub(c.metrics.cooldown.0)
            } else {
                Ps::MAX
            },
            c.metrics.size_buckets.iter().map(|b| b.0).collect(),
            c.metrics.ideal_fct,
        ),
        tcp: sc.tcp_params(),
        ccs,
        ack_class: c.transport.ack_class,
        rdma,
        ndp: None,
        eqds: None,
        mechs,
        edge: c
            .edge
            .as_ref()
            .map(|e| Box::new(EdgeRuntime::new(e, g.n_hosts(), &sc.edge_hosts, seed))),
        nic_state: Default::default(),
        rx: None,
        pcie: None,
        counters: Counters::default(),
        seed,
        outbox: None,
    };
    if let Some(r) = &c.rdma {
        let ctx = paths::rdma_base_ctx(&w, r);
        if r.cc.build(&ctx).needs_int() {
            w.arena.enable_int();
        }
        w.rdma.as_mut().expect("rdma").ctx = ctx;
    }
    // The NIC model's state and start events (`nic_models!`).
    crate::nic::build_model(sc, &mut w);
    crate::host::ndp::build(&mut w);
    crate::host::eqds::build(&mut w);
    let n_hosts = g.n_hosts();
    if let Some((r, rate)) = c.nic.receive_path() {
        let mtu = c
            .rdma
            .as_ref()
            .map_or(c.transport.mtu, |r| r.data_wire(r.payload)) as u64;
        w.rx = Some(Box::new(crate::nic::rx::RxPath::new(
            &r,
            rate,
            n_hosts,
            w.ccs.len(),
            mtu,
        )));
    }
    if let Some(rate) = c.nic.pcie_rate {
        w.pcie = Some(Box::new(crate::nic::pcie::PcieTx::new(rate.0, n_hosts)));
    }
    w.sw.departs = crate::mech::departs(&w);
    w.sw.hooked = crate::mech::hooked(&w);
    let mut gens = gens;
    if node_ties {
        gens.list_by_host(&mut w, &c.workload.incast);
        if let Some(edge) = w.edge.as_deref_mut() {
            edge.node_order(seed);
        }
        w.flows.apart = Some(crate::host::SlotPlan {
            offset: 0,
            stride: 1,
            started: 0,
        });
    }
    gens.schedule(&mut w, c);
    let sampler = queue_sampler(&w, &c.metrics, &node_names);
    sampler.start(&mut w);
    // The mechanisms' first timers, after every other start event.
    crate::mech::start(&mut w);
    Ok(Simulation {
        w,
        gens,
        sampler,
        horizon,
        stop,
        node_ties,
        done_in_cell: None,
        node_peaks: Default::default(),
        threaded: false,
        merged: None,
        part_stats: Default::default(),
        stopped_at: None,
        beyond_stop: None,
        traffic_start: traffic_start(sc),
        done: false,
        name: c.name.clone(),
        node_names,
        started: Instant::now(),
        trace_cc: vec![],
    })
}

/// The event queue: its wheel holds `reach`; with `[timing] ties = "node"`
/// its keys hold the node that pushed each event (sources `1 + node`, 0 for
/// what the build and the global events push), which limits the times they
/// hold: the run's `stop` must fit.
fn event_queue(
    reach: Ps,
    node_ties: bool,
    nodes: usize,
    stop: Ps,
) -> Result<EventQueue<Ev>, ScenarioError> {
    let q = EventQueue::with_reach(reach);
    if !node_ties {
        return Ok(q);
    }
    let q = q.order_by_source(nodes as u32 + 1);
    if stop >= q.max_time() {
        return Err(ScenarioError::new(
            "timing.ties",
            format!(
                "with \"node\" an event's key keeps its time beside one of {} nodes, up to \
                 {} ps, and `stop` is {stop} ps: set a shorter `stop` or ties = \"push\"",
                nodes + 1,
                q.max_time()
            ),
        ));
    }
    Ok(q)
}

/// How far ahead a packet's events reach: the most, over the links, of a
/// link's delay plus its serialization of a `largest`-byte packet (the
/// event queue's wheel is sized to hold them; results do not depend on it).
fn wheel_reach(ports: &[Port], largest: u64) -> Ps {
    ports
        .iter()
        .map(|p| p.delay + p.rate.tx_time(largest))
        .max()
        .unwrap_or(0)
}

/// The queue sampler for `metrics.queue_ports` (see `metrics::sampler`).
fn queue_sampler(w: &World, m: &MetricsConfig, node_names: &[String]) -> QueueSampler {
    let switch_ports = || -> Vec<u32> {
        (0..w.ports.len() as u32)
            .filter(|&p| matches!(w.ports[p as usize].owner(), Owner::Switch(_)))
            .collect()
    };
    let (ports, top, selection) = match m.queue_ports {
        QueuePorts::None => (vec![], None, "none".to_string()),
        QueuePorts::All => (
            (0..w.ports.len() as u32).collect(),
            None,
            "every port".into(),
        ),
        QueuePorts::Switch => (switch_ports(), None, "every switch port".into()),
        QueuePorts::Top => (
            switch_ports(),
            Some(m.queue_top as usize),
            format!(
                "the {} switch ports with the largest peak queue",
                m.queue_top
            ),
        ),
        QueuePorts::Nodes => {
            let chosen = |p: u32| {
                let name = &node_names[w.node_of(w.ports[p as usize].owner()) as usize];
                m.queue_nodes.iter().any(|pat| name_matches(pat, name))
            };
            (
                (0..w.ports.len() as u32).filter(|&p| chosen(p)).collect(),
                None,
                format!("every port of {}", m.queue_nodes.join(", ")),
            )
        }
    };
    QueueSampler::new(w, m.queue_sample_interval.0, ports, top, selection)
}

//! Checks of what the element layout adds: routed frames from switches to
//! hosts, several hosts behind one NIC port, and the run's event counts.

use super::Simulation;
use crate::net::{switch, Packet, PacketKind};
use crate::scenario::Scenario;
use crate::topology::Graph;
use crate::units::{Rate, US};
use std::path::Path;

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text, Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

/// A notification from switch `s` to host `dst`, sent at time 0.
fn notify(sim: &mut Simulation, s: u32, dst: u32) {
    let mut frame = Packet::link_frame(PacketKind::Notify, 0, 7, 0, 0);
    frame.dst = dst;
    frame.hash = 0x1234_5678;
    let id = sim.w.arena.alloc(frame);
    switch::send_routed(&mut sim.w, 0, s, id);
}

/// A switch reaches any host through the network: from a spine of a
/// leaf-spine, the frame crosses the spine-leaf link and the leaf-host link,
/// store and forward, and arrives at exactly 2 x (64 B at 10 Gb/s + 1 us).
#[test]
fn a_routed_frame_reaches_any_host_along_its_path() {
    let mut sim = Simulation::new(&scenario(
        r#"
        [topology]
        kind = "leaf_spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 2
        host_rate = "10Gbps"
        fabric_rate = "10Gbps"
        host_delay = "1us"
        fabric_delay = "1us"
        [[workload.flows]]
        src = 0
        dst = 1
        size = "1KB"
        start = "1ms"
    "#,
    ))
    .unwrap();
    let spine = 2; // switches 0, 1 are the leaves
    notify(&mut sim, spine, 3);
    let one_hop = Rate::gbps(10).tx_time(64) + US;
    assert_eq!(one_hop, 51_200 + US);
    let nic = sim.w.host_nic[3] as usize;
    sim.run_until(2 * one_hop - 1);
    assert_eq!(sim.w.nics[nic].notifications, 0);
    sim.run_until(2 * one_hop);
    assert_eq!(sim.w.nics[nic].notifications, 1);
    let all: u64 = sim.w.nics.iter().map(|n| n.notifications).sum();
    assert_eq!(all, 1);
    let c = sim.finish().conservation;
    assert_eq!(
        (c.sent_bytes, c.delivered_bytes, c.dropped_bytes),
        (64, 64, 0)
    );
}

/// Hosts 0, 1 and 2 share host 0's NIC (one 10 Gb/s port); host 3 has its
/// own. Three 1 MB flows from the shared NIC to host 3, and one from host 3
/// to host 2 (behind the shared NIC).
fn multi_host() -> Scenario {
    let mut sc = scenario(
        r#"
        [topology]
        kind = "single_switch"
        hosts = 4
        link_rate = "10Gbps"
        link_delay = "1us"
        [transport]
        rto_min = "1ms"
        [[workload.flows]]
        src = 0
        dst = 3
        size = "1MB"
        start = "0us"
        [[workload.flows]]
        src = 1
        dst = 3
        size = "1MB"
        start = "0us"
        [[workload.flows]]
        src = 2
        dst = 3
        size = "1MB"
        start = "0us"
        [[workload.flows]]
        src = 3
        dst = 2
        size = "1MB"
        start = "0us"
    "#,
    );
    let mut g = Graph::default();
    let s = g.add_switch("s0", 1);
    let h0 = g.add_host("h0");
    g.add_host_behind("h1", h0);
    g.add_host_behind("h2", h0);
    let h3 = g.add_host("h3");
    g.add_link(h0, s, Rate::gbps(10), US);
    g.add_link(h3, s, Rate::gbps(10), US);
    g.finalize();
    g.validate().unwrap();
    sc.graph = g;
    sc
}

#[test]
fn hosts_behind_one_nic_share_its_port() {
    let sc = multi_host();
    let mut sim = Simulation::new(&sc).unwrap();
    assert_eq!(sim.w.nics.len(), 2);
    assert_eq!(sim.w.host_nic, vec![0, 0, 0, 1]);
    // Routes toward a host behind the shared NIC are those toward its NIC.
    assert_eq!(sim.w.routes.select(0, 2, 7), sim.w.routes.select(0, 0, 7));
    sim.run();
    let nic0_port = sim.w.nics[0].port as usize;
    let sent_by_nic0 = sim.w.ports[nic0_port].tx_bytes;
    let r = sim.finish();
    assert_eq!(r.flows.u8s("finished"), &[1, 1, 1, 1]);
    let c = r.conservation;
    assert_eq!(c.sent_bytes, c.delivered_bytes + c.dropped_bytes);
    assert_eq!(c.in_network_bytes, 0);
    // The three flows of the shared NIC leave through its one port: 3 MB of
    // payload plus headers and the ACKs of the flow to host 2.
    assert!(sent_by_nic0 > 3_000_000, "{sent_by_nic0}");
    // ... so they cannot finish before 3 MB at 10 Gb/s (2.4 ms), and the
    // port is busy nearly all that time: they finish within 10 % of it.
    let fct = r.flows.u64s("fct_ps");
    let three = fct[..3].iter().max().copied().unwrap();
    let floor = Rate::gbps(10).tx_time(3_000_000);
    assert!(three >= floor, "{three} < {floor}");
    assert!((three as f64) < 1.1 * floor as f64, "{three} vs {floor}");
    // Round robin over the NIC's flows: they finish together (within 5 %).
    let first = fct[..3].iter().min().copied().unwrap();
    assert!((first as f64) > 0.95 * three as f64, "{first} vs {three}");
    // The flow to host 2 arrives through the shared port, alone on its
    // direction: it takes about 1 MB at 10 Gb/s.
    assert!((fct[3] as f64) < 1.1 * Rate::gbps(10).tx_time(1_000_000) as f64 + (20 * US) as f64);
    // Results name the NIC port by its first host.
    let nodes = r.ports.u32s("node");
    assert_eq!(&nodes[..2], &[0, 3]);
}

/// A host behind a multi-host NIC has no link; one with a link cannot also
/// share a NIC, and a NIC host must have its own link.
#[test]
fn multi_host_graph_errors_name_the_host() {
    let mut g = Graph::default();
    let s = g.add_switch("s0", 1);
    let h0 = g.add_host("h0");
    let h1 = g.add_host_behind("h1", h0);
    g.add_link(h0, s, Rate::gbps(10), US);
    g.add_link(h1, s, Rate::gbps(10), US);
    g.finalize();
    let e = g.validate().unwrap_err();
    assert!(e.contains("host `h1`") && e.contains("shares a NIC"), "{e}");
    let mut g = Graph::default();
    let s = g.add_switch("s0", 1);
    let h0 = g.add_host("h0");
    g.add_host_behind("h1", h0);
    let h2 = g.add_host("h2");
    g.add_link(h2, s, Rate::gbps(10), US);
    g.finalize();
    let e = g.validate().unwrap_err();
    assert!(e.contains("host `h0`") && e.contains("no link"), "{e}");
}

/// Events per hop, counted: a sender's initial window of ten segments leaves
/// its NIC back to back, the first at once and each of the nine others at
/// the end of its predecessor's transmission (nine `TxDone`s). Every link
/// runs at one rate, so a full segment reaches the switch port just as the
/// one before it has left and passes straight through, and so does every
/// acknowledgement: no other port has more to send when a transmission
/// ends. A shorter last segment catches up with its predecessor at the
/// switch, waits there, and costs the switch port one `TxDone`.
#[test]
fn ends_of_transmission_are_counted_where_a_port_has_more_to_send() {
    for (size, tx_dones) in [(10 * 1460, 9), (9 * 1460 + 860, 10)] {
        let mut sim = Simulation::new(&scenario(&format!(
            r#"
            [topology]
            kind = "single_switch"
            hosts = 2
            link_rate = "10Gbps"
            [transport]
            init_cwnd = 10
            [[workload.flows]]
            src = 0
            dst = 1
            size = {size}
            start = "0us"
        "#
        )))
        .unwrap();
        sim.run();
        let s = sim.finish().stats;
        // Ten segments and ten acknowledgements, two links each.
        assert_eq!(s.packet_hops, 40, "{size} B");
        assert_eq!(s.tx_done_events, tx_dones, "{size} B");
    }
}

/// The hook sites are skipped only where no mechanism can act: all closed
/// in a plain run; the depart site open with each mechanism that has a
/// depart hook (PFC, congestion isolation, INT, the input partitions), the
/// arrival sites for the classes and priorities a mechanism's ingress or
/// classify hook wants (PFC's lossless class, congestion isolation's class
/// and its congested-flow queue's, every priority at the input partitions;
/// INT has none). Every run of the debug test suite also checks, at each
/// skipped departure, that no mechanism wanted it (`mech::on_depart`).
#[test]
fn the_hook_sites_are_open_exactly_where_a_mechanism_acts() {
    let base = r#"
        topology = { kind = "single_switch", hosts = 3, link_rate = "10Gbps" }
        [workload]
        flows = [
            { src = 0, dst = 2, size = "100KB", start = "0us" },
            { src = 1, dst = 2, size = "100KB", start = "0us" },
        ]
    "#;
    let rdma = "[rdma]\n[rdma.cc]\nalgorithm = \"hpcc\"\n";
    for (extra, departs, hooked) in [
        ("", false, 0),
        ("[switch.pfc]\n", true, 1 << 3),
        (
            "[switch.ci]\nqueues = [{ class = 3, cfq = [2] }]\n",
            true,
            1 << 3 | 1 << 2,
        ),
        (rdma, true, 0),
        ("[switch.input_buffer]\n", true, 0xFF),
    ] {
        let mut sim = Simulation::new(&scenario(&format!("{base}{extra}"))).unwrap();
        assert_eq!(sim.w.sw.departs, departs, "{extra}");
        assert_eq!(sim.w.sw.hooked, hooked, "{extra}");
        sim.run();
        let c = sim.finish().conservation;
        assert_eq!(c.sent_bytes, c.delivered_bytes + c.dropped_bytes, "{extra}");
        assert!(c.delivered_bytes >= 200_000, "{extra}");
    }
}

/// Node order keeps a finished flow's slot (its receiver may still answer a
/// late segment), but not what only its sender held: the SACK scoreboard's
/// and RACK's segments give their memory back when the sender finishes
/// (about 1.6 KB a WebSearch flow). Flows still running hold some.
#[test]
fn node_order_gives_back_a_finished_senders_memory() {
    let mut sim = Simulation::new(&scenario(
        r#"
        duration = "1ms"
        [topology]
        kind = "fat_tree"
        k = 4
        host_rate = "100Gbps"
        fabric_rate = "100Gbps"
        [transport]
        cc = "dctcp"
        recovery = "sack_rack"
        [[workload.poisson]]
        load = 0.6
        cdf = "websearch"
        [metrics]
        queue_ports = "none"
        [timing]
        ties = "node"
    "#,
    ))
    .unwrap();
    sim.run_until(800 * US);
    let flows = &sim.w.flows;
    let held = |slot: usize| flows.slots[slot].tcp.sender_heap_bytes();
    let running: Vec<usize> = (0..flows.slots.len())
        .filter(|&s| flows.slots[s].active)
        .collect();
    let most = running.iter().map(|&s| held(s)).max();
    let finished = &flows.records.slot;
    let left = finished.iter().map(|&s| held(s as usize)).max();
    assert!(most > Some(1000), "running flows hold at most {most:?} B");
    assert!(finished.len() > 10, "{} flows finished", finished.len());
    // What a finished sender keeps is what it still holds: a range or two.
    assert!(left < Some(64), "a finished flow holds {left:?} B");
}

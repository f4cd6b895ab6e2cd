//! The transmit-queue NIC (issue 20 item 3): queues filled by the host stack
//! up to a limit, shared or split by congestion control, drained by weighted
//! round robin. The Netronome/Facebook talk
//! (OCP Global Summit 2019): CUBIC filling a shared NIC queue keeps
//! DCTCP's latency high; queues split by congestion control remove that.

use crate::common::{assert_bytes_conserved, finished_fcts_us, run, scenario_err};
use incast_core::Results;

/// Host 0 sends one CUBIC bulk flow (100 MB) to host 1 and, from 1 ms on, a
/// 20 KB DCTCP flow to host 2 every 50 us (200 of them). Each destination has
/// its own switch port, so the sender's NIC is the only place they meet.
fn sender(split: &str) -> String {
    let mut s = format!(
        "name = \"nicq\"\nseed = 2\nstop = \"30ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 3\n\
         link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[switch]\necn = {{ kind = \"step\", k = \"100KB\" }}\n\
         [transport]\ncc = \"dctcp\"\n[nic]\nmodel = \"queues\"\n[nic.queues]\nsplit = \"{split}\"\n\
         limit = \"256KB\"\n\
         [[workload.flows]]\nsrc = 0\ndst = 1\nsize = \"100MB\"\ncc = \"cubic\"\n"
    );
    for k in 0..200 {
        s += &format!(
            "[[workload.flows]]\nsrc = 0\ndst = 2\nsize = \"20KB\"\nstart = \"{}us\"\n",
            1000 + 50 * k
        );
    }
    s
}

/// FCTs (us) of the DCTCP flows, sorted.
fn dctcp_fcts(r: &Results) -> Vec<f64> {
    finished_fcts_us(r, |_, dst| dst == 2)
}

fn queue_max(r: &Results, name: &str) -> u64 {
    let s: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    s["nic_queues"]["queues"][name]["max_bytes"]
        .as_u64()
        .unwrap()
}

/// Shared: each DCTCP segment waits behind the CUBIC bytes in the queue (up
/// to its 256 KB: 205 us at 10 Gb/s). Split by congestion control with equal
/// weights: behind at most one CUBIC packet per DCTCP packet. The 20 KB flow
/// alone needs about 16 us (14 packets at 1.2 us, plus the RTT); the bound
/// for split queues, 50 us, leaves room for the round robin's interleaving
/// (each DCTCP packet may wait for one CUBIC packet) and slow start.
#[test]
fn split_queues_isolate_dctcp_from_cubic() {
    let shared = run(&sender("shared"));
    let split = run(&sender("cc"));
    let (a, b) = (dctcp_fcts(&shared), dctcp_fcts(&split));
    assert_eq!((a.len(), b.len()), (200, 200));
    let p99 = |v: &[f64]| v[(v.len() * 99) / 100 - 1];
    let median = |v: &[f64]| v[v.len() / 2];
    eprintln!(
        "DCTCP 20 KB FCT beside CUBIC: shared queue median {:.1} us, p99 {:.1} us; split median {:.1} us, p99 {:.1} us; \
         queue max: shared {} B, split cubic {} B / dctcp {} B",
        median(&a), p99(&a), median(&b), p99(&b),
        queue_max(&shared, "shared"), queue_max(&split, "cubic"), queue_max(&split, "dctcp")
    );
    assert!(p99(&b) < 50.0, "split p99 {}", p99(&b));
    assert!(
        median(&a) > 4.0 * median(&b),
        "shared {} split {}",
        median(&a),
        median(&b)
    );
    assert!(queue_max(&shared, "shared") >= 250_000);
    assert_bytes_conserved(&shared, "shared");
    assert_bytes_conserved(&split, "split");
}

/// The NIC never sends faster than its port: the queues keep host 0's link
/// busy, and it carries the link rate and no more (up to the packet still on
/// the wire at the stop, counted whole: 1.5 KB in 30 ms is 0.0004 Gb/s).
#[test]
fn queues_drain_at_line_rate() {
    let r = run(&sender("shared"));
    let (node, tx) = (r.ports.u32s("node"), r.ports.u64s("tx_bytes"));
    let host0 = (0..node.len()).find(|&i| node[i] == 0).unwrap();
    let gbps = tx[host0] as f64 * 8.0 / 30e-3 / 1e9;
    eprintln!("host 0 sent {gbps:.3} Gb/s over 30 ms");
    assert!(gbps <= 10.0005 && gbps > 9.99, "{gbps}");
}

#[test]
fn queues_errors_name_the_key() {
    let base =
        "name = \"x\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\nlink_rate = \"10Gbps\"\n\
                [[workload.flows]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n[nic]\nmodel = \"queues\"\n";
    let e = scenario_err(&format!("{base}[nic.queues]\nlimit = \"100B\"\n"));
    assert_eq!(e.path, "nic.queues.limit", "{e}");
    let e = scenario_err(&format!("{base}[nic.queues]\nweights = [1, 0]\n"));
    assert_eq!(e.path, "nic.queues.weights", "{e}");
    let e = scenario_err(&format!("{base}[rdma]\n"));
    assert_eq!(e.path, "nic.model", "{e}");
}

/// docs/htsim-strack.md's lone flow under one edge switch: one 2 MB STrack flow from host 1
/// to host 2 of htsim's k = 8 fat-tree (scenarios/htsim_strack/compare.py's `lone_1_2`).
fn lone_strack_flow(fill: &str) -> String {
    format!(
        "name = \"lone\"\nseed = 1\nstop = \"20ms\"\n[topology]\nkind = \"fat_tree\"\nk = 8\n\
         host_rate = \"100Gbps\"\nfabric_rate = \"100Gbps\"\ndelay = \"1us\"\n\
         [switch]\nbuffer = \"2GB\"\nadmission = {{ kind = \"static\", limit = 4000000 }}\n\
         [nic]\nmodel = \"queues\"\nqueues = {{ limit = \"4MB\", fill = \"{fill}\" }}\n\
         [transport]\ncc = {{ algorithm = \"strack\", base_rtt = \"4us\" }}\nmtu = 4000\n\
         header = 0\nack_size = 40\ninit_cwnd = 15\nrto_min = \"100us\"\nrto_initial = \"1ms\"\n\
         recovery = \"newreno\"\n\
         [[workload.flows]]\nsrc = 1\ndst = 2\nsize = 2004000\n"
    )
}

#[test]
fn admitted_fill_stamps_segments_as_htsims_host_queue_does() {
    // htsim's STrackSrc hands every packet its window admits to the host queue on the ACK,
    // stamped; the default fill stamps a segment admitted during a transmission when the port
    // is free again, up to 0.32 us later. Under one edge switch (RTT 4.6 us) that moves the
    // 45th ACK's sample from 4.80 to 4.65 us, and STrack's period-2 orbit parts: htsim's flow
    // ends at 257.9 us, incast's at 177.3 us (port_free) or 259.9 us (admitted, which also
    // counts the last ACK's return trip).
    let htsim_us = 257.9;
    let fct = |fill: &str| {
        let r = run(&lone_strack_flow(fill));
        assert_bytes_conserved(&r, fill);
        let f = finished_fcts_us(&r, |_, _| true);
        assert_eq!(f.len(), 1, "{fill}: the flow finishes");
        f[0]
    };
    let admitted = fct("admitted");
    assert!(
        (admitted / htsim_us - 1.0).abs() < 0.02,
        "admitted: {admitted} us against htsim's {htsim_us} us"
    );
    let port_free = fct("port_free");
    assert!(
        port_free < 0.8 * htsim_us,
        "port_free: {port_free} us (the doc's 177.3 us)"
    );
}

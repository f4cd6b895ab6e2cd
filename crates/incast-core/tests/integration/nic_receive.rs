//! The NIC's receive path through PCIe (issue 20 item 3, receive side): a
//! PCIe rate below the link's builds a queue in the NIC; ECN marks there;
//! queues shared or split by congestion control.

use crate::common::{assert_bytes_conserved, finished_fcts_us, run, scenario_err};
use incast_core::Results;

/// Host 0 (the worker) reads 64 KB from storage host 1 every 500 us (DCTCP,
/// 50 reads from 1 ms: about 1 Gb/s) while host 2 sends it a CUBIC bulk flow; host 0's
/// NIC hands packets to the host at 5 Gb/s over PCIe (its link: 10 Gb/s).
fn worker(split: &str) -> String {
    let mut s = format!(
        "name = \"pcie\"\nseed = 4\nstop = \"30ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 3\n\
         link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[switch]\necn = {{ kind = \"step\", k = \"100KB\" }}\n\
         [transport]\ncc = \"dctcp\"\n[nic.receive]\npcie_rate = \"5Gbps\"\nsplit = \"{split}\"\n\
         buffer = \"1MB\"\necn_k = \"64KB\"\n\
         [[workload.flows]]\nsrc = 2\ndst = 0\nsize = \"100MB\"\ncc = \"cubic\"\n"
    );
    for k in 0..50 {
        s += &format!(
            "[[workload.flows]]\nsrc = 1\ndst = 0\nsize = \"64KB\"\nstart = \"{}us\"\n",
            1000 + 500 * k
        );
    }
    s
}

fn read_fcts(r: &Results) -> Vec<f64> {
    finished_fcts_us(r, |src, _| src == 1)
}

fn rx_queue(r: &Results, name: &str, key: &str) -> u64 {
    let s: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap();
    s["nic_receive"]["queues"][name][key].as_u64().unwrap()
}

/// With one receive queue, CUBIC (not ECN-capable) fills it to its 1 MB
/// buffer (1.6 ms at 5 Gb/s) and each read waits behind it; split by
/// congestion control, the reads wait only behind their own DCTCP queue,
/// which the NIC's ECN marks keep short. The read alone needs about 105 us
/// at 5 Gb/s (64 KB + headers) plus the RTT: the split bound, 400 us,
/// leaves room for sharing the 5 Gb/s with CUBIC round robin (half each).
#[test]
fn split_receive_queues_keep_reads_fast() {
    let shared = run(&worker("shared"));
    let split = run(&worker("cc"));
    let (a, b) = (read_fcts(&shared), read_fcts(&split));
    let median = |v: &[f64]| v[v.len() / 2];
    let p99 = |v: &[f64]| v[(v.len() * 99) / 100 - 1];
    eprintln!(
        "64 KB DCTCP reads through a 5 Gb/s PCIe beside CUBIC: shared {} reads, median {:.0} us, p99 {:.0} us, \
         queue max {} B, marks {}; split {} reads, median {:.0} us, p99 {:.0} us, dctcp queue max {} B, \
         cubic queue max {} B, dctcp marks {}",
        a.len(), median(&a), p99(&a), rx_queue(&shared, "shared", "max_bytes"),
        rx_queue(&shared, "shared", "ecn_marks"), b.len(), median(&b), p99(&b),
        rx_queue(&split, "dctcp", "max_bytes"), rx_queue(&split, "cubic", "max_bytes"),
        rx_queue(&split, "dctcp", "ecn_marks")
    );
    assert_eq!(b.len(), 50);
    assert!(p99(&b) < 400.0, "split p99 {}", p99(&b));
    assert!(
        median(&a) > 3.0 * median(&b),
        "shared {} split {}",
        median(&a),
        median(&b)
    );
    assert_bytes_conserved(&shared, "shared");
    assert_bytes_conserved(&split, "split");
}

/// The host never receives faster than PCIe: one bulk flow alone delivers
/// 5 Gb/s (less the first RTTs of slow start), the NIC queue absorbing the
/// difference and marking ECN above its threshold.
#[test]
fn pcie_caps_what_the_host_receives() {
    let toml =
        "name = \"pcie1\"\nstop = \"20ms\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
                link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[transport]\ncc = \"dctcp\"\n\
                [nic.receive]\npcie_rate = \"5Gbps\"\necn_k = \"64KB\"\n\
                [[workload.flows]]\nsrc = 1\ndst = 0\nsize = \"100MB\"\n";
    let r = run(toml);
    let c = r.conservation;
    // What reached host 0's NIC (the switch port toward it), less what can
    // still wait in the NIC's queue, over the 20 ms.
    let (node, peer, tx) = (
        r.ports.u32s("node"),
        r.ports.u32s("peer"),
        r.ports.u64s("tx_bytes"),
    );
    let to0 = (0..node.len())
        .find(|&i| node[i] == 2 && peer[i] == 0)
        .unwrap();
    let queue = rx_queue(&r, "shared", "max_bytes");
    let (lo, hi) = (
        (tx[to0] - queue) as f64 * 8.0 / 20e-3 / 1e9,
        tx[to0] as f64 * 8.0 / 20e-3 / 1e9,
    );
    eprintln!(
        "one DCTCP flow through a 5 Gb/s PCIe: host 0 received {lo:.3}-{hi:.3} Gb/s, NIC queue max {queue} B, marks {}",
        rx_queue(&r, "shared", "ecn_marks")
    );
    assert!(lo <= 5.0005 && hi > 4.8, "{lo} {hi}");
    assert!(rx_queue(&r, "shared", "ecn_marks") > 0);
    assert_eq!(c.dropped_bytes, 0);
}

#[test]
fn receive_errors_name_the_key() {
    let base =
        "name = \"x\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\nlink_rate = \"10Gbps\"\n\
                [[workload.flows]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n";
    let e = scenario_err(&format!(
        "{base}[nic.receive]\npcie_rate = \"5Gbps\"\nbuffer = \"1KB\"\n"
    ));
    assert_eq!(e.path, "nic.receive.buffer", "{e}");
    let e = scenario_err(&format!("{base}[nic.receive]\n"));
    assert!(e.path.starts_with("nic.receive"), "{e}");
    let e = scenario_err(&format!(
        "{base}[nic]\nmodel = \"adapter\"\n[nic.receive]\npcie_rate = \"5Gbps\"\n"
    ));
    assert_eq!(e.path, "nic.receive", "{e}");
}

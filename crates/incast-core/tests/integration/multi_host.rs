//! Multi-host NICs (issue 20 item 4): several hosts behind one NIC port
//! (`[nic] hosts`), each with its own PCIe link in both directions
//! (`[nic] pcie_rate`), the NIC scheduling between them.

use crate::common::{assert_finished_and_conserved, run, scenario, scenario_err};
use incast_core::Results;

/// Two NIC ports on one switch (25 Gb/s links, 1 us), `hosts` hosts behind
/// each (hosts 0.. behind port 0, `hosts`.. behind port 1), every host's
/// PCIe at `pcie`; `flows` appended.
fn sled(hosts: u32, pcie: &str, nic: &str, flows: &str) -> String {
    format!(
        "name = \"sled\"\nseed = 3\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
         link_rate = \"25Gbps\"\nlink_delay = \"1us\"\n[switch]\nbuffer = \"4MB\"\n\
         [transport]\ncc = \"dctcp\"\n[nic]\nhosts = {hosts}\npcie_rate = \"{pcie}\"\n{nic}\n{flows}"
    )
}

fn flow(src: u32, dst: u32, size: &str) -> String {
    format!("[[workload.flows]]\nsrc = {src}\ndst = {dst}\nsize = \"{size}\"\n")
}

fn summary(r: &Results) -> serde_json::Value {
    serde_json::from_str(&r.summary_json).unwrap()
}

/// Wire bytes of a TCP flow of `size` payload bytes (1460 B segments, 40 B
/// of headers each; the transport's defaults).
fn wire(size: u64) -> u64 {
    size + size.div_ceil(1460) * 40
}

/// The four hosts behind port 0 each send 4 MB to the host behind port 1 in
/// the same slot, PCIe 10 Gb/s. Together they would send 40 Gb/s: the 25
/// Gb/s port is the bottleneck, so the last flow ends no earlier than the
/// four flows' wire bytes at 25 Gb/s; and no host sends faster than its 10
/// Gb/s PCIe link, so every flow takes at least its wire bytes at 10 Gb/s.
/// Each receiver's PCIe (10 Gb/s) is below its share of the port (6.25):
/// not a bottleneck here.
#[test]
fn four_hosts_share_one_port_within_their_pcie_caps() {
    let flows: String = (0..4).map(|h| flow(h, 4 + h, "4MB")).collect();
    let r = run(&sled(4, "10Gbps", "", &flows));
    assert_finished_and_conserved(&r, "four hosts");
    let size = 4_000_000;
    let (fct, start) = (r.flows.u64s("fct_ps"), r.flows.u64s("start_ps"));
    let pcie_floor = wire(size) as f64 * 8.0 / 10e9 * 1e12;
    let port_floor = 4.0 * wire(size) as f64 * 8.0 / 25e9 * 1e12;
    let last = (0..4).map(|i| start[i] + fct[i]).max().unwrap() as f64;
    for (i, &f) in fct.iter().enumerate() {
        assert!(f as f64 >= pcie_floor, "flow {i}: {f} ps < {pcie_floor}");
    }
    assert!(last >= port_floor, "last end {last} < {port_floor}");
    // The port is busy: the last flow ends within 10 % of the port floor
    // (slow start and the final RTT are the rest).
    assert!(last < 1.10 * port_floor, "last end {last} vs {port_floor}");
    // The port's bytes on the wire never exceed its rate: busy time <= run.
    let ports = &r.ports;
    let (node, tx) = (ports.u32s("node"), ports.u64s("tx_bytes"));
    let nic0 = (0..node.len()).find(|&i| node[i] == 0).unwrap();
    assert!(tx[nic0] as f64 * 8.0 / 25e9 * 1e12 <= last);
    let s = summary(&r);
    assert_eq!(s["pcie"]["max_host_tx_bytes"].as_u64(), Some(wire(size)));
}

/// One host alone behind a 25 Gb/s port with a 10 Gb/s PCIe link: its flow
/// runs at the PCIe rate, and its ideal FCT (the PCIe cap at the source,
/// the receiver's PCIe as one more store-and-forward hop) says so. DCTCP's
/// initial window (10 segments, 15 KB) covers the 10 Gb/s path's BDP
/// (about 8 us x 10 Gb/s = 10 KB), so the flow has no ramp: the slowdown is
/// within 2 %.
#[test]
fn a_pcie_capped_host_runs_at_its_pcie_rate_and_its_ideal_fct_knows() {
    let r = run(&sled(4, "10Gbps", "", &flow(0, 4, "4MB")));
    assert_finished_and_conserved(&r, "one host");
    let (fct, ideal) = (r.flows.u64s("fct_ps")[0], r.flows.u64s("ideal_fct_ps")[0]);
    let floor = wire(4_000_000) as f64 * 8.0 / 10e9 * 1e12;
    assert!(
        ideal as f64 > floor && (ideal as f64) < 1.01 * floor,
        "{ideal} vs {floor}"
    );
    let slowdown = fct as f64 / ideal as f64;
    assert!((1.0..1.02).contains(&slowdown), "slowdown {slowdown}");
}

/// Receive side: hosts 0 and 1 each send 2 MB to host 4, host 2 sends 2 MB
/// to host 5; hosts 4 and 5 share port 1 (25 Gb/s) and each has a 10 Gb/s
/// PCIe link. Host 4's link is its bottleneck (20 Gb/s offered): its two
/// flows together take at least their wire bytes at 10 Gb/s and its
/// receive queue builds (the NIC marks ECN above 64 KB, DCTCP backs off).
/// Host 5's own link is not held up by host 4's queue: its flow takes
/// within 5 % of its wire bytes at 10 Gb/s.
#[test]
fn each_host_has_its_own_receive_pcie_link() {
    let flows = flow(0, 4, "2MB") + &flow(1, 4, "2MB") + &flow(2, 5, "2MB");
    let nic = "[nic.receive]\necn_k = \"64KB\"\nbuffer = \"1MB\"";
    let r = run(&sled(4, "10Gbps", nic, &flows));
    assert_finished_and_conserved(&r, "receive");
    let (fct, start) = (r.flows.u64s("fct_ps"), r.flows.u64s("start_ps"));
    let at_pcie = wire(2_000_000) as f64 * 8.0 / 10e9 * 1e12;
    let host4_end = (start[0] + fct[0]).max(start[1] + fct[1]) as f64;
    let s = summary(&r);
    eprintln!(
        "host 4 (two flows): {:.0} us, host 5: {:.0} us, one flow at 10 Gb/s: {:.0} us; \
         receive queue max {} B",
        host4_end / 1e6,
        fct[2] as f64 / 1e6,
        at_pcie / 1e6,
        s["nic_receive"]["queues"]["shared"]["max_bytes"]
    );
    assert!(host4_end >= 2.0 * at_pcie, "{host4_end} vs {at_pcie}");
    assert!((fct[2] as f64) < 1.05 * at_pcie, "{} vs {at_pcie}", fct[2]);
    assert!(
        s["nic_receive"]["queues"]["shared"]["max_bytes"]
            .as_u64()
            .unwrap()
            > 64_000
    );
}

/// Two hosts of one NIC reach each other (through the switch and back).
#[test]
fn hosts_behind_one_nic_reach_each_other() {
    let r = run(&sled(
        4,
        "25Gbps",
        "",
        &(flow(0, 1, "1MB") + &flow(2, 3, "10KB")),
    ));
    assert_finished_and_conserved(&r, "hairpin");
}

/// Host 0 has eight flows, host 1 one, all to the other port (no PCIe
/// limit below the port). Round robin over flows gives host 1 a ninth of
/// the port; transmit queues split by host (`split = "host"`) give it half,
/// so its 2 MB flow ends at about 2 x 2 MB / 25 Gb/s instead of about 9x.
#[test]
fn queues_split_by_host_share_the_port_between_hosts() {
    let mut flows: String = (0..8).map(|_| flow(0, 4, "2MB")).collect();
    flows += &flow(1, 5, "2MB");
    let fct_of_host1 = |nic: &str| {
        let r = run(&sled(4, "100Gbps", nic, &flows));
        assert_finished_and_conserved(&r, nic);
        let src = r.flows.u32s("src");
        let i = (0..src.len()).find(|&i| src[i] == 1).unwrap();
        r.flows.u64s("fct_ps")[i] as f64
    };
    let by_flow = fct_of_host1("");
    let by_host = fct_of_host1("model = \"queues\"\nqueues = { split = \"host\" }");
    let alone = wire(2_000_000) as f64 * 8.0 / 25e9 * 1e12;
    eprintln!(
        "host 1's 2 MB flow: {:.0} us round robin over flows, {:.0} us queues by host, {:.0} us alone",
        by_flow / 1e6,
        by_host / 1e6,
        alone / 1e6
    );
    assert!(by_host < 2.3 * alone, "by host {by_host} vs alone {alone}");
    assert!(by_flow > 6.0 * alone, "by flow {by_flow} vs alone {alone}");
}

#[test]
fn multi_host_settings_are_checked() {
    let base =
        "name = \"x\"\n[topology]\nkind = \"single_switch\"\nhosts = 2\nlink_rate = \"25Gbps\"\n\
                [[workload.flows]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n";
    for (extra, key, fix) in [
        ("[nic]\nhosts = 0\n", "nic.hosts", "1 (the default) to 64"),
        ("[nic]\nhosts = 65\n", "nic.hosts", "1 (the default) to 64"),
        (
            "[nic]\nmodel = \"adapter\"\nhosts = 2\n",
            "nic.hosts",
            "one host per NIC",
        ),
        (
            "[nic]\npcie_rate = \"0Gbps\"\n",
            "nic.pcie_rate",
            "must be positive",
        ),
        (
            "[nic.receive]\nsplit = \"cc\"\n",
            "nic.receive.pcie_rate",
            "or set [nic] pcie_rate",
        ),
        (
            "[nic]\npcie_rate = \"8Gbps\"\n[nic.receive]\nsplit = \"host\"\n",
            "nic.receive.split",
            "own receive queues",
        ),
    ] {
        let e = scenario_err(&format!("{base}{extra}")).to_string();
        assert!(e.contains(key) && e.contains(fix), "{extra}: {e}");
    }
    // Hosts are numbered port by port and named after the port's first host.
    let sc = scenario(&format!("{base}[nic]\nhosts = 3\n"));
    assert_eq!(
        sc.graph.host_names,
        ["h0", "h0.1", "h0.2", "h1", "h1.1", "h1.2"]
    );
}

/// The read completion times (us) of a run, sorted.
fn read_times(r: &Results) -> Vec<f64> {
    let (done, t) = (r.incasts.u8s("finished"), r.incasts.u64s("completion_ps"));
    let mut v: Vec<f64> = (0..t.len())
        .filter(|&i| done[i] == 1)
        .map(|i| t[i] as f64 / 1e6)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The talk's "Multi-Host NIC + ECN in Switch" (scenarios/netronome_fb/
/// multi_host_experiment.toml, seed 1): with four slots and iperf stress the
/// sled's switch port is the bottleneck and switch ECN cuts the reads' p99
/// by far (README: 3.9 ms to 0.3 ms, mean of two seeds; asserted: at least
/// 5x); with one slot the slot's PCIe link is the bottleneck and switch ECN
/// changes the reads' p99 by less than 10 %.
#[test]
fn switch_ecn_matters_where_the_switch_is_the_bottleneck() {
    use crate::common::run_experiment;
    let file = "netronome_fb/multi_host_experiment.toml";
    let p99 = |point: &str, variant: &str| {
        let r = run_experiment(file, point, variant, 1);
        let v = read_times(&r);
        assert!(v.len() > 300, "{point}/{variant}: {} reads", v.len());
        v[v.len() * 99 / 100]
    };
    let (four_ecn, four_off) = (p99("slots4", "iperf_ecn"), p99("slots4", "iperf_no_ecn"));
    let (one_ecn, one_off) = (p99("slots1", "iperf_ecn"), p99("slots1", "iperf_no_ecn"));
    eprintln!(
        "read p99 (us): 4 slots {four_ecn:.0} with switch ECN, {four_off:.0} without; \
         1 slot {one_ecn:.0} with, {one_off:.0} without"
    );
    assert!(four_off > 5.0 * four_ecn, "{four_off} vs {four_ecn}");
    assert!(
        (one_off / one_ecn - 1.0).abs() < 0.1,
        "{one_off} vs {one_ecn}"
    );
}

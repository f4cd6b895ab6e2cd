//! Node order (`[timing] ties = "node"`) and partitioned runs: a run split
//! into P partitions that take turns in windows (`Simulation::run_partitioned`)
//! gives the very tables of a plain node-ordered run, for every P and both
//! turn orders: the determinism a parallel engine needs (issue 47).

use crate::common::{assert_finished_and_conserved, digest, scenario};
use incast_core::{Results, Simulation};

/// A k = 4 fat-tree (16 hosts, 20 switches), WebSearch flows at `load`.
fn fat_tree(extra: &str, load: f64) -> String {
    fat_tree_k(4, "60us", extra, load)
}

fn fat_tree_k(k: u32, duration: &str, extra: &str, load: f64) -> String {
    format!(
        r#"
name = "partitioned"
seed = 3
duration = "{duration}"
[topology]
kind = "fat_tree"
k = {k}
host_rate = "100Gbps"
fabric_rate = "100Gbps"
[switch]
buffer = "2MB"
ecn = {{ kind = "step", k = "60KB" }}
[transport]
cc = "dctcp"
rto_min = "200us"
[[workload.poisson]]
load = {load}
cdf = "websearch"
[metrics]
queue_ports = "none"
[timing]
ties = "node"
{extra}
"#
    )
}

/// Where two runs differ: the summary's lines and the tables' columns.
pub(crate) fn differences(reference: &Results, got: &Results) -> Vec<String> {
    let mut differs: Vec<String> = (reference.summary_json.lines())
        .zip(got.summary_json.lines())
        .filter(|(x, y)| x != y)
        .map(|(x, y)| format!("{x} | {y}"))
        .collect();
    for ((name, x), (_, y)) in reference.tables().iter().zip(got.tables()) {
        for ((column, a), (_, b)) in x.columns.iter().zip(&y.columns) {
            // By bytes: a NaN (a flow unfinished, no limited flow) equals itself.
            if a.to_le_bytes() != b.to_le_bytes() {
                differs.push(format!("{name}.{column}"));
            }
        }
    }
    differs
}

pub(crate) fn plain(toml: &str) -> Results {
    let mut sim = Simulation::new(&scenario(toml)).unwrap();
    sim.run();
    sim.finish()
}

fn partitioned(toml: &str, parts: u32, backwards: bool) -> Results {
    let mut sim = Simulation::new(&scenario(toml)).unwrap();
    sim.run_partitioned(parts, backwards)
        .unwrap_or_else(|e| panic!("{parts} partitions: {e}"));
    sim.finish()
}

fn check_every_partition(toml: &str, what: &str) {
    let reference = plain(toml);
    assert_finished_and_conserved(&reference, what);
    let want = digest(&reference);
    for parts in [1, 2, 3, 5] {
        for backwards in [false, true] {
            let got = partitioned(toml, parts, backwards);
            assert_eq!(
                digest(&got),
                want,
                "{what}: {parts} partitions (backwards {backwards}) differ from the plain run\n\
                 plain: {}\npartitioned: {}",
                reference.summary_json,
                got.summary_json
            );
        }
    }
}

#[test]
fn partitions_give_the_plain_runs_tables() {
    check_every_partition(&fat_tree("", 0.5), "DCTCP at 50 %");
}

#[test]
fn node_order_is_not_push_order_but_alike() {
    // The same scenario in push order: other ties, so other bytes, but
    // the same flows.
    let node = plain(&fat_tree("", 0.5));
    let push = plain(&fat_tree("", 0.5).replace("ties = \"node\"", "ties = \"push\""));
    assert_eq!(node.flows.rows(), push.flows.rows());
}

#[test]
fn partitioned_runs_need_node_order() {
    let toml = fat_tree("", 0.3).replace("ties = \"node\"", "ties = \"push\"");
    let mut sim = Simulation::new(&scenario(&toml)).unwrap();
    let err = sim.run_partitioned(2, false).unwrap_err();
    assert!(err.contains("ties = \"node\""), "{err}");
}

#[test]
fn explicit_default_timing_is_accepted() {
    let toml = fat_tree("", 0.3).replace("ties = \"node\"", "tx_times = \"exact\"");
    assert_eq!(scenario(&toml).config.timing, Default::default());
    // A default `ties` beside another key, and left out of the normalized
    // scenario (scenarios written before it existed hash as they did).
    let toml = fat_tree("", 0.3).replace("ties = \"node\"", "ties = \"push\"\ntx_times = \"ns3\"");
    let json = serde_json::to_value(&scenario(&toml).config).unwrap();
    assert_eq!(json["timing"], serde_json::json!({"tx_times": "ns3"}));
}

/// k = 8 (128 hosts, 80 switches), 150 us of WebSearch arrivals, under each
/// family of mechanisms: what crosses partitions (data, ACKs, PAUSE frames,
/// CNPs, trimmed headers, pulls) and what reuses flow slots (also run on
/// several threads, `threaded.rs`).
pub(crate) fn mechanism_families() -> Vec<(&'static str, String)> {
    let red = "ecn = { kind = \"red\", kmin = \"100KB\", kmax = \"400KB\", pmax = 0.2 }";
    let step = "ecn = { kind = \"step\", k = \"60KB\" }";
    let no_ecn = |toml: String| toml.replace(step, "");
    let rdma = |cc: &str, toml: String| {
        toml.replace(step, red).replace("cc = \"dctcp\"\n", "")
            + &format!("[rdma]\ncc = {{ algorithm = \"{cc}\" }}\n[switch.pfc]\nclasses = [3]\n")
    };
    let k8 = |load: f64| fat_tree_k(8, "150us", "", load);
    // Listed flows, many starting on the same picosecond at different hosts:
    // a 16-to-1 incast at 20 us and a shifted permutation at 40 us.
    let mut listed = k8(0.3);
    for sender in 0..16u32 {
        listed += &format!(
            "[[workload.flows]]\nsrc = {}\ndst = 77\nsize = \"64KB\"\nstart = \"20us\"\n",
            sender * 8 + 1
        );
    }
    for src in 0..128u32 {
        listed += &format!(
            "[[workload.flows]]\nsrc = {src}\ndst = {}\nsize = \"100KB\"\nstart = \"40us\"\n",
            (src + 37) % 128
        );
    }
    // Incasts (their senders span partitions), stopped while RTO timers of
    // 1 ms are pending: the run is over, not stopped, in every partition.
    let incasts = k8(0.4)
        .replace("duration = \"150us\"", "duration = \"150us\"\nstop = \"900us\"")
        .replace("rto_min = \"200us\"", "rto_min = \"1ms\"")
        + "[[workload.incast]]\nfan_in = 32\nbytes_per_sender = \"64KB\"\ntimes = [\"50us\", \"120us\"]\nreceiver = 5\n"
        + "[[workload.incast]]\nfan_in = 127\nbytes_per_sender = \"16KB\"\ntimes = [\"100us\"]\nreceiver = 77\n";
    let cases = [
        ("incast generators over a WebSearch background", incasts),
        ("listed flows: an incast and a permutation", listed.clone()),
        ("the same over PFC with DCQCN", rdma("dcqcn", listed)),
        ("DCTCP", k8(0.6)),
        (
            "DCTCP with drops",
            k8(0.8).replace("buffer = \"2MB\"", "buffer = \"200KB\""),
        ),
        ("DCTCP over PFC", k8(0.8) + "[switch.pfc]\nclasses = [0]\n"),
        ("DCTCP sprayed", k8(0.6) + "[routing]\necmp = \"spray\"\n"),
        ("DCQCN over PFC", rdma("dcqcn", k8(0.7))),
        ("HPCC over PFC", rdma("hpcc", k8(0.7)).replace(red, "")),
        (
            "congestion isolation over PFC with DCQCN",
            rdma("dcqcn", k8(0.8)).replace("classes = [3]", "classes = [2, 3]")
                + "[switch.ci]\nqueues = [{ class = 3, cfq = [2] }]\nthreshold = \"20KB\"\nage = \"20us\"\n",
        ),
        (
            "congestion isolation with lost CIPs (CIP-ACKs, resends)",
            rdma("dcqcn", k8(0.8)).replace("classes = [3]", "classes = [2, 3]")
                + "[switch.ci]\nqueues = [{ class = 3, cfq = [2] }]\nthreshold = \"20KB\"\nage = \"20us\"\n"
                + "cip = { reliability = \"ack\", loss = 0.2 }\n",
        ),
        (
            "DCTCP over PCIe limits both ways, two hosts per NIC",
            k8(0.9)
                + "[nic]\nhosts = 2\npcie_rate = \"60Gbps\"\n"
                + "[nic.receive]\necn_k = \"64KB\"\nbuffer = \"200KB\"\n",
        ),
        (
            "DCTCP beside CUBIC through transmit queues split by congestion control",
            k8(0.5)
                + "[[workload.poisson]]\nload = 0.3\ncdf = \"websearch\"\ncc = \"cubic\"\n"
                + "[nic]\nmodel = \"queues\"\n[nic.queues]\nsplit = \"cc\"\nlimit = \"64KB\"\n"
                + "weights = [1, 3]\n",
        ),
        (
            "DCTCP with trimming (a trimmed packet is a loss to TCP)",
            k8(0.8) + "[switch.trim]\nclasses = [0]\nheader_class = 7\nthreshold_packets = 8\n",
        ),
        (
            "NDP with trimming",
            no_ecn(k8(0.7)).replace("cc = \"dctcp\"", "cc = \"ndp\"")
                + "[switch.trim]\nclasses = [0]\nheader_class = 7\nthreshold_packets = 8\n",
        ),
        (
            "On-Ramp over DCTCP: noisy clocks, sampled OWDs, the drop curve",
            k8(0.8).replace("buffer = \"2MB\"", "buffer = \"400KB\"")
                + "[edge]\nrule = \"on_ramp\"\nclock = \"ntp\"\nowd_sample_every = 7\n"
                + "drop_curve = { bin = \"2us\", max = \"40us\" }\n",
        ),
        (
            "Smart-Pause over DCQCN, some senders gated, noisy clocks",
            rdma("dcqcn", k8(0.7)).replace("[switch.pfc]\nclasses = [3]\n", "")
                + "[edge]\nrule = \"smart_pause_fixed\"\nclock = \"huygens\"\nowd_sample_every = 3\n"
                + "hosts = [0, 1, 2, 3, 40, 41, 42, 43, 80, 81, 100, 127]\n",
        ),
        (
            "EQDS sprayed, with trimming",
            no_ecn(k8(0.7)).replace(
                "cc = \"dctcp\"",
                "cc = { algorithm = \"eqds\", spray = true, entropies = 64 }",
            ) + "[switch.trim]\nclasses = [0]\nheader_class = 7\nthreshold_packets = 8\n",
        ),
    ];
    cases.into()
}

#[test]
fn every_mechanism_family_is_partition_independent() {
    for (what, toml) in mechanism_families() {
        let reference = plain(&toml);
        assert!(
            reference.flows.rows() > 50,
            "{what}: {} flows",
            reference.flows.rows()
        );
        let want = digest(&reference);
        for (parts, backwards) in [(2, false), (3, true), (5, false)] {
            let got = partitioned(&toml, parts, backwards);
            let differs = differences(&reference, &got);
            assert_eq!(
                digest(&got),
                want,
                "{what}: {parts} partitions differ from the plain run: {differs:?}"
            );
        }
    }
}

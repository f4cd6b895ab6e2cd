//! Raw-frame on/off and Bernoulli sources (issue 19 item 1), wired: the
//! offered load each host puts on its link against the configured load.

use crate::common::{run, scenario_err};

/// 16 hosts on one 10G switch with a buffer no burst fills, so every frame
/// is delivered and each host's link carries exactly what it offered.
fn sources(extra: &str) -> String {
    format!(
        "name = \"onoff\"\nseed = 3\nduration = \"20ms\"\n[topology]\nkind = \"single_switch\"\n\
         hosts = 16\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n[switch]\nbuffer = \"400MB\"\n\
         ecn = {{ kind = \"off\" }}\n[[workload.onoff]]\n{extra}"
    )
}

/// Each host's offered load: the frames its NIC sent, times a frame's
/// transmission time (1500 B at 10 Gb/s: 1.2 us), over the 20 ms in which the
/// sources generate (not the utilization window, which also covers the
/// switch queues draining after the last frame: about 230 us here).
fn host_loads(r: &incast_core::Results, hosts: u32) -> Vec<f64> {
    let node = r.ports.u32s("node");
    let frames = r.ports.u64s("tx_pkts");
    (0..node.len())
        .filter(|&i| node[i] < hosts)
        .map(|i| frames[i] as f64 * 1.2e-6 / 20e-3)
        .collect()
}

/// Offered load = busy slots / all slots: with 12 us mean bursts (10 frames
/// of 1500 B at 10 Gb/s) at 85 %, each host sends about 14,000 frames in
/// 1,400 bursts in 20 ms. The fraction of busy time then has a relative
/// standard deviation of about 2-3 % per host (geometric bursts and gaps),
/// so: the mean over the 16 hosts within 2 % of 0.85, each host within 8 %.
#[test]
fn bursty_sources_offer_their_load() {
    let r = run(&sources(
        "load = 0.85\nmean_burst = \"12us\"\nframe = 1500\n",
    ));
    let loads = host_loads(&r, 16);
    let mean = loads.iter().sum::<f64>() / loads.len() as f64;
    eprintln!(
        "on/off 85 %: mean host load {mean:.4}, range {:.4}-{:.4}",
        loads.iter().cloned().fold(1.0, f64::min),
        loads.iter().cloned().fold(0.0, f64::max)
    );
    assert!((mean / 0.85 - 1.0).abs() < 0.02, "mean load {mean}");
    for (h, l) in loads.iter().enumerate() {
        assert!((l / 0.85 - 1.0).abs() < 0.08, "host {h}: load {l}");
    }
    let c = r.conservation;
    assert_eq!(c.dropped_bytes, 0);
    assert_eq!(c.sent_bytes, c.delivered_bytes + c.in_network_bytes);
    assert!(c.sent_bytes > 16 * 20_000_000, "{} bytes", c.sent_bytes);
}

/// Bernoulli arrivals (no mean_burst: bursts of one frame) at 30 %: about
/// 5,000 frames per host, relative deviation about 2 % per host.
#[test]
fn bernoulli_sources_offer_their_load() {
    let r = run(&sources("load = 0.3\n"));
    let loads = host_loads(&r, 16);
    let mean = loads.iter().sum::<f64>() / loads.len() as f64;
    eprintln!("Bernoulli 30 %: mean host load {mean:.4}");
    assert!((mean / 0.3 - 1.0).abs() < 0.02, "mean load {mean}");
    for (h, l) in loads.iter().enumerate() {
        assert!((l / 0.3 - 1.0).abs() < 0.08, "host {h}: load {l}");
    }
}

#[test]
fn bad_sources_name_the_key() {
    let e = scenario_err(&sources("load = 1.5\n"));
    assert_eq!(e.path, "workload.onoff[0].load", "{e}");
    let e = scenario_err(&sources("load = 0.5\nmean_burst = \"100ns\"\n"));
    assert_eq!(e.path, "workload.onoff[0].mean_burst", "{e}");
    let e = scenario_err(&sources("load = 0.5\nhosts = [0, 99]\n"));
    assert_eq!(e.path, "workload.onoff[0].hosts", "{e}");
}
